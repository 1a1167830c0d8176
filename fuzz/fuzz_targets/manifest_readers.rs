//! The manifest readers against each other: wherever the block reader answers, the event reader's trees
//! (spans and contents included), and wherever that one answers, serde-saphyr's. `compare_readers`
//! panics on any difference.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        roce_model::plumbing::manifest::compare_readers(text);
    }
});
