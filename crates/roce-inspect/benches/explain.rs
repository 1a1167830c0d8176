//! `roce explain` throughput on a synthetic multi-rank NCCL 2.28 log of at least 1 GiB (`ROCE_BENCH_MB`, default
//! 1024), written to a temporary file at bench time, compared with `grep -c NCCL` on the same file.
//!
//! `cargo bench -p roce-inspect --bench explain` first prints one comparison (best of three runs each, page cache
//! warm): MB/s of both, their ratio, and the parser's peak-memory growth while reading; then divan's statistics.
//! Under `cargo test --benches` it uses a 16 MB log.

use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use roce_inspect::explain::{Explainer, Explanation};

fn main() {
    let log = log();
    let bytes = std::fs::metadata(log).unwrap().len();
    let mb = bytes as f64 / 1e6;
    let (grep_t, count) = best(|| grep(log));
    let hwm_before = vm_hwm_kib();
    let (ours_t, e) = best(|| explain(log));
    let hwm_after = vm_hwm_kib();
    println!(
        "explain bench: {mb:.0} MB, {} lines with NCCL, {} processes on {} hosts",
        count,
        e.processes.len(),
        e.hosts.len()
    );
    println!(
        "  grep -c NCCL:  {:>8.0} MB/s ({:.2} s)",
        mb / grep_t.as_secs_f64(),
        grep_t.as_secs_f64()
    );
    println!(
        "  roce explain:  {:>8.0} MB/s ({:.2} s)",
        mb / ours_t.as_secs_f64(),
        ours_t.as_secs_f64()
    );
    println!(
        "  ratio explain/grep time: {:.2}x",
        ours_t.as_secs_f64() / grep_t.as_secs_f64()
    );
    if let (Some(a), Some(b)) = (hwm_before, hwm_after) {
        println!(
            "  peak RSS growth while explaining: {} KiB (flat in log size)",
            b.saturating_sub(a)
        );
    }
    assert_eq!(e.transport.as_str(), "roce");
    assert_eq!(e.gpudirect_rdma, Some(true));
    divan::main();
}

/// Best of three.
fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let v = f();
        let d = t.elapsed();
        if d < best {
            best = d;
        }
        out = Some(v);
    }
    (best, out.unwrap())
}

fn grep(path: &Path) -> u64 {
    let out = Command::new("grep")
        .args(["-c", "NCCL"])
        .arg(path)
        .output()
        .expect("grep runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn explain(path: &Path) -> Explanation {
    let mut x = Explainer::new();
    x.start_file(&path.display().to_string());
    let f = std::fs::File::open(path).unwrap();
    x.read(BufReader::with_capacity(1 << 20, f)).unwrap();
    x.finish()
}

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn roce_explain(bencher: divan::Bencher) {
    let log = log();
    let bytes = std::fs::metadata(log).unwrap().len();
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .bench(|| explain(log).processes.len());
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn grep_c_nccl(bencher: divan::Bencher) {
    let log = log();
    let bytes = std::fs::metadata(log).unwrap().len();
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .bench(|| grep(log));
}

/// The synthetic log, generated once per run.
fn log() -> &'static Path {
    static LOG: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &LOG.get_or_init(|| {
        let testing = std::env::args().any(|a| a == "--test");
        let mb: u64 = std::env::var("ROCE_BENCH_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if testing { 16 } else { 1024 });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.log");
        generate(&path, mb << 20).unwrap();
        (dir, path)
    })
    .1
}

/// A 64-node × 8-GPU GB300-style RoCE job at NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL: init lines per rank, then
/// the ranks' channel, proxy and collective-call lines interleaved, with some application output. Line shapes
/// are those of the captured NCCL 2.28.9 logs in `tests/fixtures/logs/`.
fn generate(path: &Path, bytes: u64) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let hosts = 64u32;
    let gpus = 8u32;
    let nranks = hosts * gpus;
    let procs: Vec<(String, u32, u32, u32)> = (0..hosts)
        .flat_map(|h| {
            (0..gpus).map(move |g| (format!("gb300-{h:03}"), 4000 + g * 7 + h, g, h * gpus + g))
        })
        .collect();
    let mut written = 0u64;
    for (host, pid, dev, rank) in &procs {
        let p = format!("{host}:{pid}:{pid} [{dev}] NCCL INFO ");
        let devs: String = (0..4)
            .map(|k| format!(" [{k}]ibp{dev}p{k}:1/RoCE"))
            .collect();
        let lines = [
            "ENV/Plugin: Could not find: libnccl-env.so".to_string(),
            "cudaDriverVersion 13000".to_string(),
            "NCCL version 2.28.9+cuda13.0".to_string(),
            "NCCL_SOCKET_IFNAME set by environment to eth0".to_string(),
            "NCCL_IB_ADDR_FAMILY set by environment to AF_INET6".to_string(),
            "NCCL_IB_TC set by environment to 96.".to_string(),
            "NCCL_NET_PLUGIN set by environment to none".to_string(),
            "NCCL_IB_HCA set to ibp".to_string(),
            format!(
                "NET/IB : Using{devs} [RO]; OOB eth0:10.0.{}.{}<0>",
                rank / 256,
                rank % 256
            ),
            "Initialized NET plugin IB".to_string(),
            "Assigned NET plugin IB to comm".to_string(),
            "Using network IB".to_string(),
            format!(
                "ncclCommInitRankConfig comm 0x2020fa50 rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId 60 commId 0x96dbe5cbe2721fb8 - Init START"
            ),
            format!("NET/IB : GPU Direct RDMA Enabled for HCA {dev} 'ibp{dev}p0'"),
        ];
        for l in lines {
            written += (p.len() + l.len() + 1) as u64;
            writeln!(w, "{p}{l}")?;
        }
    }
    let mut i = 0u64;
    while written < bytes {
        for (host, pid, dev, rank) in &procs {
            let peer = (rank + gpus) % nranks;
            let ch = i % 32;
            let line = match i % 10 {
                0..=2 => format!(
                    "{host}:{pid}:{pid} [{dev}] NCCL INFO Channel {ch:02}/0 : {rank}[{dev}] -> {peer}[{dev}] [send] via NET/IB/{}/GDRDMA",
                    dev / 2
                ),
                3 => format!(
                    "{host}:{pid}:{pid} [{dev}] NCCL INFO Channel {ch:02}/1 : {rank}[{dev}] -> {}[{}] via P2P/CUMEM/read",
                    rank - dev + (dev + 1) % gpus,
                    (dev + 1) % gpus
                ),
                4..=6 => format!(
                    "{host}:{pid}:{pid} [{dev}] NCCL INFO AllReduce: opCount {i:x} sendbuff 0x7f0ab5800000 recvbuff 0x7f0ab5800000 count 16777216 datatype 7 op 0 root 0 comm 0x3117f820 [nranks={nranks}] stream 0x5581c0"
                ),
                7 => format!(
                    "{host}:{pid}:{} [{dev}] NCCL INFO New proxy send connection {ch} from local rank {dev}, transport 2",
                    pid + 17
                ),
                8 => format!(
                    "{host}:{pid}:{pid} [{dev}] NCCL INFO AllReduce: {} Bytes -> Algo RING proto SIMPLE channel{{Lo..Hi}}={{0..31}}",
                    64u64 << 20
                ),
                _ => format!(
                    "[rank{rank}]: step {i} loss 2.{:04} lr 3.0e-4 tokens/s 181000",
                    i % 9973
                ),
            };
            written += line.len() as u64 + 1;
            writeln!(w, "{line}")?;
        }
        i += 1;
    }
    w.flush()
}
