//! nccl-tests result tables: the input's lines become rows under a real `all_reduce_perf` header, so the
//! table reader (columns, units, `#wrong`, out-of-place/in-place pairs, the bus bandwidth summary) is what
//! the fuzzer explores.
#![no_main]

use libfuzzer_sys::fuzz_target;

const HEADER: &[u8] = b"# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n\
#\n\
# Using devices\n\
#  Rank  0 Group  0 Pid   4990 on   worker-1 device  0 [0x8a] NVIDIA H100 80GB HBM3\n\
#\n\
#                                                              out-of-place                       in-place\n\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n\
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

fuzz_target!(|data: &[u8]| {
    let mut log = HEADER.to_vec();
    log.extend_from_slice(data);
    log.extend_from_slice(b"\n# Avg bus bandwidth    : 12.5\n");
    let mut e = roce_inspect::explain::Explainer::new();
    e.start_file("fuzz.log");
    let _ = e.read(log.as_slice());
    let _ = e.finish().to_json();
});
