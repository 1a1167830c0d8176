//! A simulated fleet for `roce sweep report`: a campaign over N nodes of `oci/h100-roce` (8 H100, 16 RoCE
//! rails of 200 Gb/s) and every test's output as nccl-tests and NCCL 2.28 print it (the table of
//! `src/common.cu`, the INFO/WARN lines of `init.cc`, `net_ib.cc`, `transport/net.cc`), with faults injected:
//!
//! - 2 % bad nodes, each with one cause: no RDMA device (NCCL falls back to sockets), GPUDirect RDMA off
//!   (no nvidia-peermem), a rail missing (15 of 16 ports listed), a link-local RoCE GID (connections fail
//!   with retries exceeded), NVLink degraded (a slow single-node check);
//! - 1 % bad links between healthy nodes: slow (no log evidence) or dropping packets (retries exceeded);
//! - 0.5 % hung pairs between healthy nodes (the output stops, the run script marks the timeout);
//! - ±5 % uniform noise on every bandwidth.
//!
//! A fault on a pair that already has a bad node cannot be seen apart from that node's, so links and hangs
//! are injected only between healthy nodes. Used by tests/sweep.rs, the `simulate-fleet` example and the
//! sweep bench.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::sweep::{Campaign, NodeList, RESULTS_DIR, Scheduler, SweepOptions};
use roce_render::{RenderOptions, plan};

pub(crate) const PROFILE: &str = "oci/h100-roce";
const GPUS: usize = 8;
const RAILS: usize = 16;
/// A healthy pair's bus bandwidth: 92 % of the line rate (16 × 200 Gb/s = 400 GB/s).
const HEALTHY: f64 = 368.0;
/// A healthy single-node all_reduce over NVLink 4 (H100 SXM).
const NVLINK: f64 = 480.0;

/// What was injected.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Truth {
    /// Bad nodes and their cause code.
    pub bad_nodes: BTreeMap<String, &'static str>,
    /// Bad links (`a--b`, in campaign order) and their cause code.
    pub bad_links: BTreeMap<(String, String), &'static str>,
    /// Files written and bytes.
    pub files: usize,
    pub bytes: u64,
}

const NODE_CAUSES: [&str; 5] = [
    "socket_fallback",
    "gdr_off",
    "rail_missing",
    "gid",
    "nvlink",
];

/// splitmix64: a small deterministic generator, enough for a simulation.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn noise(&mut self) -> f64 {
        0.95 + 0.1 * self.unit()
    }
}

pub(crate) fn campaign(nodes: usize, partners: u32) -> (Campaign, roce_model::Profile) {
    let profile = load(builtin::source(PROFILE).unwrap(), &BuiltinsOnly)
        .profile
        .unwrap();
    let list = NodeList::parse(&format!("gpu[{:05}-{:05}]", 1, nodes)).unwrap();
    let opts = SweepOptions {
        partners,
        scheduler: Scheduler::Slurm,
        ..SweepOptions::default()
    };
    let c = Campaign::plan(
        &plan::lower(&profile),
        &list,
        &opts,
        &RenderOptions::default(),
    )
    .unwrap();
    (c, profile)
}

/// Write `campaign.json` and every result under `dir`, each node meeting 3 partners.
pub(crate) fn simulate(dir: &Path, nodes: usize, seed: u64) -> Truth {
    simulate_with(dir, nodes, 3, seed)
}

/// As [`simulate`], with `partners` per node.
pub(crate) fn simulate_with(dir: &Path, nodes: usize, partners: u32, seed: u64) -> Truth {
    let (c, _) = campaign(nodes, partners);
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5EED);
    let mut truth = Truth::default();
    let names: Vec<String> = c.nodes.iter().map(|n| n.to_string()).collect();
    let bad_count = (nodes as f64 * 0.02).round() as usize;
    while truth.bad_nodes.len() < bad_count {
        let n = &names[rng.below(nodes)];
        let cause = NODE_CAUSES[rng.below(NODE_CAUSES.len())];
        truth.bad_nodes.entry(n.clone()).or_insert(cause);
    }
    let pairs: Vec<(usize, &roce_render::sweep::Pair)> = c
        .rounds
        .iter()
        .flat_map(|r| r.pairs.iter())
        .enumerate()
        .filter(|(_, p)| {
            !p.nodes
                .iter()
                .any(|n| truth.bad_nodes.contains_key(n.as_str()))
        })
        .collect();
    let total_pairs: usize = c.rounds.iter().map(|r| r.pairs.len()).sum();
    let links = (total_pairs as f64 * 0.01).round() as usize;
    let hung = (total_pairs as f64 * 0.005).round() as usize;
    let mut chosen: BTreeMap<usize, &'static str> = BTreeMap::new();
    while chosen.len() < (links + hung).min(pairs.len()) {
        let (i, _) = pairs[rng.below(pairs.len())];
        let cause = if chosen.len() < hung {
            "hung"
        } else if rng.below(2) == 0 {
            "slow"
        } else {
            "link_errors"
        };
        chosen.entry(i).or_insert(cause);
    }
    let results = dir.join(RESULTS_DIR);
    std::fs::create_dir_all(results.join("nodes")).unwrap();
    for r in &c.rounds {
        std::fs::create_dir_all(results.join(format!("round-{:02}", r.index))).unwrap();
    }
    std::fs::write(dir.join("campaign.json"), c.to_json()).unwrap();
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut write = |path: &str, text: String| {
        truth.files += 1;
        truth.bytes += text.len() as u64;
        std::fs::write(results.join(path), text).unwrap();
    };
    for k in &c.checks {
        let fault = truth.bad_nodes.get(k.node.as_str()).copied();
        let bw = NVLINK * rng.noise() * if fault == Some("nvlink") { 0.3 } else { 1.0 };
        let i = index[k.node.as_str()];
        write(&k.output, check_log(k.node.as_str(), i, bw, &mut rng));
    }
    for (pi, p) in c.rounds.iter().flat_map(|r| r.pairs.iter()).enumerate() {
        let (a, b) = (p.nodes[0].as_str(), p.nodes[1].as_str());
        let faults = [
            truth.bad_nodes.get(a).copied(),
            truth.bad_nodes.get(b).copied(),
        ];
        let link = chosen.get(&pi).copied();
        if let Some(l) = link {
            truth.bad_links.insert((a.to_string(), b.to_string()), l);
        }
        let text = pair_log(
            [(a, index[a], faults[0]), (b, index[b], faults[1])],
            link,
            &mut rng,
        );
        write(&p.output, text);
    }
    truth
}

fn ip(i: usize) -> String {
    format!("10.{}.{}.{}", 1 + i / 65536, (i / 256) % 256, i % 256)
}

fn header(out: &mut String, ranks: &[(&str, usize, usize)]) {
    out.push_str("# Collective test starting: all_reduce_perf\n");
    out.push_str("# nThread 1 nGpus 1 minBytes 536870912 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n");
    for (r, (host, pid, dev)) in ranks.iter().enumerate() {
        let _ = writeln!(
            out,
            "#  Rank {r:2} Group  0 Pid {pid:6} on {host:>10} device  {dev} [0x{:02x}] NVIDIA H100 80GB HBM3",
            0x18 + dev * 0x10
        );
    }
}

fn table(out: &mut String, busbw: f64, rows: usize, rng: &mut Rng, ranks: usize) {
    out.push_str("#\n#                                                              out-of-place                       in-place          \n");
    out.push_str("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    out.push_str("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    let factor = 2.0 * (ranks as f64 - 1.0) / ranks as f64;
    let mut sum = 0.0;
    for k in 0..rows {
        let size: u64 = 536_870_912 << k;
        // small messages reach less of the peak
        let b = busbw * [0.86, 0.93, 0.97, 0.99, 1.0][k.min(4)] * (0.995 + 0.01 * rng.unit());
        let b2 = b * (0.995 + 0.01 * rng.unit());
        let algbw = b / factor;
        let time = size as f64 / algbw / 1e3;
        sum += b;
        let _ = writeln!(
            out,
            "{size:>12}  {:>12}     float     sum      -1  {time:>7.1}  {algbw:>6.2}  {b:>6.2}      0  {:>7.1}  {:>6.2}  {b2:>6.2}      0",
            size / 4,
            time * b / b2,
            b2 / factor
        );
    }
    let _ = writeln!(
        out,
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {:.4} \n#",
        sum / rows.max(1) as f64
    );
}

/// NCCL's INFO lines of one rank.
#[allow(clippy::too_many_arguments)]
fn rank_lines(
    out: &mut String,
    host: &str,
    node: usize,
    pid: usize,
    dev: usize,
    rank: usize,
    nranks: usize,
    nnodes: usize,
    fault: Option<&str>,
) {
    let p = format!("{host}:{pid}:{pid} [{dev}] NCCL INFO");
    let addr = ip(node);
    let _ = writeln!(out, "{p} Bootstrap: Using eth0:{addr}<0>");
    if rank == 0 {
        let _ = writeln!(out, "{p} NCCL version 2.28.9+cuda12.9");
    }
    let _ = writeln!(out, "{p} NCCL_IB_GID_INDEX set by environment to 3.");
    let _ = writeln!(out, "{p} NET/Plugin: Could not find: libnccl-net.so.");
    let socket = fault == Some("socket_fallback");
    if socket {
        let _ = writeln!(out, "{p} NET/IB : No device found.");
        let _ = writeln!(out, "{p} NET/Socket : Using [0]eth0:{addr}<0>");
        let _ = writeln!(out, "{p} Using network Socket");
    } else {
        let mut list = String::new();
        let mut k = 0;
        for d in 0..RAILS {
            if fault == Some("rail_missing") && d == 7 {
                continue;
            }
            let _ = write!(list, "[{k}]mlx5_{d}:1/RoCE ");
            k += 1;
        }
        let _ = writeln!(out, "{p} NET/IB : Using {list}[RO]; OOB eth0:{addr}<0>");
        let _ = writeln!(out, "{p} Using network IB");
        if fault == Some("gdr_off") {
            let _ = writeln!(
                out,
                "{p} GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module or not supported by GPU)"
            );
        } else {
            let _ = writeln!(out, "{p} GPU Direct RDMA Enabled for HCA 0 'mlx5_0'");
        }
    }
    let _ = writeln!(
        out,
        "{p} comm 0x7f3a{rank:04x} rank {rank} nRanks {nranks} nNodes {nnodes} localRanks {GPUS} localRank {dev} MNNVL 0"
    );
    if nnodes > 1 && (dev == GPUS - 1) {
        let peer = (rank + 1) % nranks;
        let via = if socket {
            "NET/Socket/0".to_string()
        } else if fault == Some("gdr_off") {
            format!("NET/IB/{}", (2 * dev) % RAILS)
        } else {
            format!("NET/IB/{}/GDRDMA", (2 * dev) % RAILS)
        };
        let _ = writeln!(
            out,
            "{p} Channel 00/0 : {rank}[{dev}] -> {peer}[0] [send] via {via}"
        );
    }
    if nnodes > 1 && !socket {
        let gid = if fault == Some("gid") {
            "GID 0 (80FE/4A2B3C4D5E6F0000)".to_string()
        } else {
            format!("GID 3 (0/{:08X}FFFF0000)", node)
        };
        let _ = writeln!(
            out,
            "{host}:{pid}:{pid} [{dev}] NCCL INFO NET/IB: Dev 0 Port 1 qpn {} mtu 5 {gid}",
            1000 + rank
        );
    }
    let _ = writeln!(
        out,
        "{p} Init COMPLETE comm 0x7f3a{rank:04x} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId {:x}000 commId 0x5eed - Init COMPLETE",
        0x18 + dev * 0x10
    );
}

fn check_log(host: &str, node: usize, busbw: f64, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(8 * 1024);
    let ranks: Vec<(&str, usize, usize)> = (0..GPUS).map(|d| (host, 1000 + d, d)).collect();
    header(&mut out, &ranks);
    for (r, (h, pid, dev)) in ranks.iter().enumerate() {
        rank_lines(&mut out, h, node, *pid, *dev, r, GPUS, 1, None);
    }
    table(&mut out, busbw, 5, rng, GPUS);
    out
}

fn pair_log(nodes: [(&str, usize, Option<&str>); 2], link: Option<&str>, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(24 * 1024);
    let mut ranks = Vec::new();
    for (host, node, _) in nodes {
        for d in 0..GPUS {
            ranks.push((host, 2000 + node % 1000 * 10 + d, d));
        }
    }
    header(&mut out, &ranks);
    for (r, (host, pid, dev)) in ranks.iter().enumerate() {
        let (_, node, fault) = nodes[r / GPUS];
        rank_lines(&mut out, host, node, *pid, *dev, r, 2 * GPUS, 2, fault);
    }
    let faults: Vec<&str> = nodes.iter().filter_map(|n| n.2).collect();
    let fails = faults.contains(&"gid") || link == Some("link_errors");
    if fails {
        for (host, node, _) in nodes {
            let other = if node == nodes[0].1 {
                nodes[1].1
            } else {
                nodes[0].1
            };
            let _ = writeln!(
                out,
                "{host}:{pid}:{pid} [0] net_ib.cc:1721 NCCL WARN NET/IB : Got completion from peer {}<45123> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{} remoteGids::ffff:{}",
                ip(other),
                ip(node),
                ip(other),
                pid = 2000 + node % 1000 * 10
            );
        }
        let _ = writeln!(
            out,
            "{}: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '",
            nodes[0].0
        );
        let _ = writeln!(
            out,
            "roce-sweep: exit 1 (step on {},{})",
            nodes[0].0, nodes[1].0
        );
        return out;
    }
    let mut bw = HEALTHY * rng.noise();
    for f in &faults {
        bw *= match *f {
            "socket_fallback" => 0.007,
            "gdr_off" => 0.55,
            "rail_missing" => 15.0 / 16.0,
            "nvlink" => 0.7,
            _ => 1.0,
        };
    }
    if link == Some("slow") {
        bw *= 0.6;
    }
    if link == Some("hung") {
        table(&mut out, bw, 2, rng, 2 * GPUS);
        // cut the summary: the run stopped in the middle
        let cut = out.rfind("# Out of bounds").unwrap_or(out.len());
        out.truncate(cut);
        let _ = writeln!(
            out,
            "slurmstepd: error: *** STEP 4242.7 ON {} CANCELLED AT 2026-12-02T10:15:00 DUE TO TIME LIMIT ***",
            nodes[0].0
        );
        let _ = writeln!(
            out,
            "roce-sweep: timeout (step on {},{} outlived 15 min)",
            nodes[0].0, nodes[1].0
        );
        return out;
    }
    table(&mut out, bw, 5, rng, 2 * GPUS);
    out
}
