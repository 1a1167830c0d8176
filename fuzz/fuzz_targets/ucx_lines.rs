//! UCX's own log lines: every input line behind UCX's `[time] [host:pid:thread] file.c:line UCX LEVEL`
//! prefix (the level picked by the line's first byte), and `ucx_perftest` / `ucx_info` shapes in between.
#![no_main]

use libfuzzer_sys::fuzz_target;

const LEVELS: &[&str] = &["ERROR", "WARN ", "DIAG ", "INFO ", "DEBUG"];

fuzz_target!(|data: &[u8]| {
    let mut log = Vec::with_capacity(data.len() * 2);
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        let level = LEVELS[line.first().copied().unwrap_or(0) as usize % LEVELS.len()];
        if i % 5 == 4 {
            // a perftest row or an `ucx_info -d` line without a prefix
            log.extend_from_slice(line);
        } else {
            log.extend_from_slice(
                format!("[1733212800.{i:06}] [worker-0:4242:0]   ucp_worker.c:1{i:03} UCX  {level} ").as_bytes(),
            );
            log.extend_from_slice(line);
        }
        log.push(b'\n');
    }
    let mut e = roce_inspect::explain::Explainer::new();
    e.start_file("fuzz.log");
    let _ = e.read(log.as_slice());
    let _ = e.finish().to_json();
});
