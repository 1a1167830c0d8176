//! NCCL/UCX log explain, including the JSON rendering of the verdict.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut e = roce_inspect::explain::Explainer::new();
    e.start_file("fuzz.log");
    let _ = e.read(data);
    let _ = e.finish().to_json();
});
