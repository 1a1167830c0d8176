//! Bounded memory on hostile input (issue 32): peak RSS of `roce explain` over a large log, one huge line and
//! thousands of files, and of `roce lint` over a large and a deeply nested manifest. Measured with
//! `getrusage(RUSAGE_CHILDREN)` (Python's `resource`, exact for the reaped child). `ROCE_MEMORY_LONG=1` runs
//! the sizes of docs/security.md (10 GB log, 1 GB line, 100,000 files, 100 MB manifest); the default sizes
//! keep CI's run short.

use std::io::Write;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// Peak RSS in bytes of `roce ARGS` and its exit status.
fn peak_rss(args: &[&str]) -> (u64, i32) {
    let script = "import resource, subprocess, sys\n\
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_roce"))
        .args(args)
        .output()
        .expect("python3 runs the measurement");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut words = text.split_whitespace();
    let kib: u64 = words.next().unwrap().parse().unwrap();
    let rc: i32 = words.next().unwrap().parse().unwrap();
    (kib * 1024, rc)
}

/// Write `bytes` of `chunk` repeated (the last one cut) to `path`.
fn fill(path: &Path, chunk: &[u8], bytes: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
}

#[test]
fn peak_memory_is_bounded_on_hostile_input() {
    let long = std::env::var_os("ROCE_MEMORY_LONG").is_some();
    let (log_bytes, line_bytes, files, manifest_bytes) = if long {
        (10 << 30, 1 << 30, 100_000, 100 * MIB)
    } else {
        (64 * MIB, 64 * MIB, 5_000, 16 * MIB)
    };
    let dir = std::env::temp_dir().join(format!("roce-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = Vec::new();

    let lines = b"node-1:4242:4300 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n\
node-1:4242:4300 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n\
node-1:4242:4300 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with status=12 opcode=0 len=0 vendor err 129\n";
    let log = dir.join("big.log");
    fill(&log, lines, log_bytes);
    let (rss, _) = peak_rss(&["explain", log.to_str().unwrap(), "--format", "json"]);
    report.push(("explain, one large log", log_bytes, rss));
    assert!(
        rss < 64 * MIB,
        "explain of a {log_bytes}-byte log peaked at {rss} bytes"
    );
    std::fs::remove_file(&log).unwrap();

    let line = dir.join("line.log");
    fill(
        &line,
        b"NCCL INFO xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        line_bytes,
    );
    let (rss, _) = peak_rss(&["explain", line.to_str().unwrap()]);
    report.push(("explain, one line", line_bytes, rss));
    assert!(
        rss < 64 * MIB,
        "explain of a {line_bytes}-byte line peaked at {rss} bytes"
    );
    std::fs::remove_file(&line).unwrap();

    let ranks = dir.join("ranks");
    std::fs::create_dir_all(&ranks).unwrap();
    for i in 0..files {
        std::fs::write(ranks.join(format!("rank-{i:06}.log")), &lines[..]).unwrap();
    }
    let (rss, rc) = peak_rss(&["explain", ranks.to_str().unwrap(), "--format", "json"]);
    assert_ne!(rc, 2, "explain over {files} files failed as a command");
    report.push(("explain, many files", files as u64, rss));
    // Before explain folded a batch at a time it held every file's explainer: 35 kB a file.
    assert!(
        rss < 96 * MIB,
        "explain of {files} files peaked at {rss} bytes"
    );
    std::fs::remove_dir_all(&ranks).unwrap();

    let pod = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args(["render", "--target", "pod"])
        .output()
        .unwrap()
        .stdout;
    let mut doc = pod.clone();
    doc.extend_from_slice(b"---\n");
    // At the budget: serde-saphyr's 1,024 documents a file (the fast reader refuses past the same
    // budgets), every document kept as a tree with spans since they refer to each other.
    let at_budget = dir.join("at-budget.yaml");
    std::fs::write(&at_budget, doc.repeat(1_000)).unwrap();
    let (rss, rc) = peak_rss(&[
        "lint",
        at_budget.to_str().unwrap(),
        "--profile",
        "coreweave/gb300-roce",
    ]);
    assert_eq!(rc, 0, "1,000 rendered Pods lint clean");
    report.push(("lint, 1,000 documents", (doc.len() * 1_000) as u64, rss));
    assert!(
        rss < 160 * MIB,
        "lint of 1,000 documents peaked at {rss} bytes"
    );
    std::fs::remove_file(&at_budget).unwrap();
    // Past it: refused with a coded problem, costing little more than the text.
    let manifest = dir.join("big.yaml");
    let whole = (manifest_bytes / doc.len() as u64).max(1) * doc.len() as u64;
    fill(&manifest, &doc.repeat(64), whole);
    let (rss, rc) = peak_rss(&[
        "lint",
        manifest.to_str().unwrap(),
        "--profile",
        "coreweave/gb300-roce",
    ]);
    assert_eq!(rc, 1, "a manifest past the budgets is a coded problem");
    report.push(("lint, one large manifest", whole, rss));
    assert!(
        rss < 3 * whole + 64 * MIB,
        "lint of a {whole}-byte manifest peaked at {rss} bytes"
    );
    std::fs::remove_file(&manifest).unwrap();

    let deep = dir.join("deep.yaml");
    let nest = 1_000_000;
    let mut text = String::from("a: ");
    text.push_str(&"[".repeat(nest));
    text.push_str(&"]".repeat(nest));
    text.push('\n');
    std::fs::write(&deep, text).unwrap();
    let (rss, rc) = peak_rss(&["lint", deep.to_str().unwrap()]);
    assert_eq!(
        rc, 1,
        "a manifest nested {nest} deep is a coded problem, not a crash"
    );
    report.push(("lint, nested 1,000,000 deep", nest as u64, rss));
    assert!(
        rss < 64 * MIB,
        "lint of a deep manifest peaked at {rss} bytes"
    );

    for (what, size, rss) in report {
        eprintln!(
            "{what} ({size}): peak RSS {:.1} MiB",
            rss as f64 / MIB as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
