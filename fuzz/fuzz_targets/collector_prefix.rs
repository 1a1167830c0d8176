//! Log lines as collectors deliver them: the first byte picks a prefix shape (Ray, CloudWatch, kubectl
//! `--prefix`/`--timestamps`, `srun -l`, Open MPI `--tag-output`, a Loki JSON line) and every line of the
//! rest gets it, so the prefix readers see their own framing around arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

const PREFIXES: &[&str] = &[
    "(RayTrainWorker pid=1234, ip=10.0.0.2) ",
    "| 1733212800000 | ",
    "[pod/worker-0/nccl] ",
    "2026-12-03T10:00:00.123456789Z ",
    "3: ",
    "[1,3]<stdout>:",
    "{\"log\":\"",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let prefix = PREFIXES[pick as usize % PREFIXES.len()].as_bytes();
    let mut framed = Vec::with_capacity(rest.len() * 2);
    for line in rest.split(|b| *b == b'\n') {
        framed.extend_from_slice(prefix);
        framed.extend_from_slice(line);
        if prefix.starts_with(b"{") {
            framed.extend_from_slice(b"\",\"stream\":\"stderr\"}");
        }
        framed.push(b'\n');
    }
    let mut e = roce_inspect::explain::Explainer::new();
    e.start_file("fuzz.log");
    let _ = e.read(framed.as_slice());
    let _ = e.finish().to_json();
});
