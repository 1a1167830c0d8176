//! The verdict's invariants (`src/explain/invariants.rs`), property-tested on logs assembled from real line
//! shapes (those of the corpus) in random order, from random hosts, in random launcher and collector frames:
//!
//! - sockets never carry GPUDirect RDMA;
//! - a log with a fatal NCCL or UCX error is never "ok";
//! - a socket network where RDMA was configured or expected is never "ok";
//! - a named network, the IB transport at work, or UCX on an RDMA device is never transport `unknown`;
//! - every consequence names a cause that comes before it;
//! - the launcher or collector frame around every line (prefixes, Ray's dedup suffix, JSON records) changes nothing.

use proptest::prelude::*;
use roce_inspect::explain::{Explanation, Transport, explain_str};

/// What a fragment says about the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Says nothing that matters.
    Noise,
    /// Names or shows the network (the transport cannot be `unknown`).
    Network,
    /// RDMA was configured (an `NCCL_IB_*` knob echoed).
    RdmaConfigured,
    /// Several nodes (NCCL's own count, or connections over the network).
    MultiNode,
    /// Both: connections over NET/Socket.
    SocketConnections,
    /// The job or an NCCL call failed.
    Fatal,
    /// A UCX error (fatal, and RDMA evidence).
    UcxFatal,
}

/// Real line shapes: `{h}` is a host name, `{p}` a pid.
const FRAGMENTS: &[(Kind, &str)] = &[
    (Kind::Noise, "[app] rank 0: step 3 loss 0.2500"),
    (
        Kind::Noise,
        "Epoch 0:   6%|██    | 32040/500150 [6:28:43<94:39:17,  1.37it/s]",
    ),
    (
        Kind::Noise,
        "{h}:{p}:{p} [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
    ),
    (
        Kind::Noise,
        "{h}:{p}:{p} [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so",
    ),
    (
        Kind::Noise,
        "{h}:{p}:{p} [0] NCCL INFO NET/IB : No device found.",
    ),
    (Kind::Noise, "{h}:{p}:{p} [0] NCCL INFO Channel 00/02 : 0 1"),
    // NCCL 2.31+: the benign GDRCopy WARN of the RMA socket plugin, an ATTN notice, a diagnostics result
    (
        Kind::Noise,
        "[2026-12-03 06:15:45] {h}:{p}:{p} [0] transport/rma_socket.cc:32 (ncclRmaSocketProxyInit) NCCL WARN RMA/Socket : rma_socket requires GDRCopy; and GDR Copy is not available",
    ),
    (
        Kind::Noise,
        "[2026-12-03 06:15:45] {h}:{p}:{p} [0] plugin/net.cc:229 (ncclNetPluginInit) NCCL ATTN Failed to initialize NET plugin IB",
    ),
    (
        Kind::Noise,
        "{h}:{p} NCCL DIAG [INFO] net bw: required external tool missing in comm 0x948110eafb29b495",
    ),
    (
        Kind::Noise,
        "{h}:{p}:{p} [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
    ),
    (
        Kind::Network,
        "{h}:{p}:{p} [0] NCCL INFO Using network Socket",
    ),
    (Kind::Network, "{h}:{p}:{p} [0] NCCL INFO Using network IB"),
    (
        Kind::Network,
        "{h}:{p}:{p} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.7<0>",
    ),
    (
        Kind::Network,
        "{h}:{p}:{p} [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
    ),
    (
        Kind::Network,
        "{h}:{p}:{p} [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1",
    ),
    (
        Kind::Network,
        "{h}:{p}:{p} [0] NCCL INFO Using network AWS Libfabric",
    ),
    (
        Kind::RdmaConfigured,
        "{h}:{p}:{p} [0] NCCL INFO NCCL_IB_HCA set to mlx5",
    ),
    (
        Kind::MultiNode,
        "{h}:{p}:{p} [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
    ),
    (
        Kind::SocketConnections,
        "{h}:{p}:{p} [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0",
    ),
    (
        Kind::Fatal,
        "{h}:{p}:{p} [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
    ),
    (
        Kind::Fatal,
        "{h}:{p}:{p} [4] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 33621 is neither AF_INET(2) nor AF_INET6(10)\n{h}:{p}:{p} [4] NCCL INFO group.cc:64 -> 3 [Async thread]",
    ),
    (
        Kind::Fatal,
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nError: network IB not found.",
    ),
    (
        Kind::Fatal,
        "[2026-12-03 06:16:11] {h}:{p}:{p} [0] init.cc:1294 (initTransportsRank) NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
    ),
    (
        Kind::Fatal,
        "[2026-12-03 06:15:51] {h}:{p}:{p} [0] plugin/net.cc:388 (ncclNetInit) NCCL WARN Failed to initialize any NET plugin\n{h}:{p}:{p} [0] NCCL INFO group.cc:147 (ncclAsyncJobMain) -> 5 [Async thread]",
    ),
    (
        Kind::Fatal,
        "{h}: Test NCCL failure common.cu:1279 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '",
    ),
    (
        Kind::Fatal,
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
    ),
    (
        Kind::Fatal,
        "{h}:{p}:{p} [0] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer 192.168.3.5<53908> with status=12 opcode=129 len=1048576 vendor err 129 (Recv) localGid ::ffff:192.168.6.3 remoteGids::ffff:192.168.6.5 hca mlx5_10",
    ),
    (
        Kind::Fatal,
        "{h}:{p}:{p} [1] include/alloc.h:228 NCCL WARN Cuda failure 800 'operation not permitted'",
    ),
    (
        Kind::UcxFatal,
        "[{h}:{p}:0:{p}] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)",
    ),
];

/// What launchers and log collectors put around every line: a prefix and a suffix; in a JSON record (a prefix
/// that starts with `{` or `"`) the line is escaped as a JSON string.
const PREFIXES: &[(&str, &str)] = &[
    ("", ""),
    ("[1,0]<stdout>:", ""),
    ("12: ", ""),
    ("[pod/trainer-0/main] ", ""),
    ("2026-03-13T22:26:02.123456789Z ", ""),
    ("[default0]:", ""),
    ("Fri Aug 11 12:31:45 2023[1,0]<stdout>:", ""),
    ("  | 2024-12-04T05:27:39.074Z | ", ""),
    ("[0m ", ""),
    ("(RayTrainWorker pid=2313, ip=10.0.0.2) ", ""),
    (
        "(RayTrainWorker pid=2313, ip=10.0.0.2) ",
        " [repeated 7x across cluster]",
    ),
    (
        "\x1b[36m(RayWorkerWrapper pid=581, ip=10.225.128.18)\x1b[0m ",
        "",
    ),
    ("| 2024-12-04 05:27:39.074 | ", " |"),
    ("Dec 03 06:00:01 gpu-node-1 python3[2313]: ", ""),
    ("2024-12-03T06:00:01+0000 gpu-node-1 torchrun[2313]: ", ""),
    ("2024-12-03T06:00:01.5Z {job=\"train\", pod=\"w-0\"} ", ""),
    (
        "{\"log\":\"",
        "\\n\",\"stream\":\"stderr\",\"time\":\"2024-12-03T06:00:01.5Z\"}",
    ),
    (
        "{\"insertId\":\"1x\",\"textPayload\":\"",
        "\",\"severity\":\"DEFAULT\"}",
    ),
    (
        "{\"jsonPayload\":{\"message\":\"",
        "\"},\"logName\":\"projects/p/logs/stdout\"}",
    ),
    ("    \"textPayload\": \"", "\","),
    (
        "[pod/w-0/c] 2024-05-01T10:00:00.123Z (RayTrainWorker pid=9, ip=10.0.0.3) ",
        "",
    ),
    ("{\"log\":\"0: [1,0]<stdout>:", "\\n\"}"),
];

/// `line` inside frame `i`.
fn frame(i: usize, line: &str) -> String {
    let (pre, post) = PREFIXES[i];
    let body = if pre.starts_with('{') || pre.trim_start().starts_with('"') {
        line.replace('\\', "\\\\").replace('"', "\\\"")
    } else {
        line.to_string()
    };
    format!("{pre}{body}{post}")
}

const HOSTS: &[&str] = &["node-a", "node-b", "ip-10-0-0-7"];

/// One fragment, expanded: (kind, host index).
type Pick = (usize, usize);

fn log(picks: &[Pick], prefix: usize) -> String {
    let mut out = String::new();
    for &(f, h) in picks {
        let (_, text) = FRAGMENTS[f];
        let text = text
            .replace("{h}", HOSTS[h])
            .replace("{p}", &(100 + h).to_string());
        for line in text.lines() {
            out.push_str(&frame(prefix, line));
            out.push('\n');
        }
    }
    out
}

fn has(picks: &[Pick], kinds: &[Kind]) -> bool {
    picks.iter().any(|&(f, _)| kinds.contains(&FRAGMENTS[f].0))
}

/// Host names on NCCL lines (the only place host names come from).
fn hosts(picks: &[Pick]) -> usize {
    let mut hs: Vec<usize> = picks
        .iter()
        .filter(|&&(f, _)| FRAGMENTS[f].1.starts_with("{h}:{p}"))
        .map(|&(_, h)| h)
        .collect();
    hs.sort_unstable();
    hs.dedup();
    hs.len()
}

fn picks() -> impl Strategy<Value = Vec<Pick>> {
    proptest::collection::vec((0..FRAGMENTS.len(), 0..HOSTS.len()), 1..14)
}

fn verdict(e: &Explanation) -> (Transport, Option<bool>, bool, Vec<&'static str>) {
    let mut codes: Vec<&'static str> = e.findings.iter().map(|f| f.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    (e.transport, e.gpudirect_rdma, e.has_errors(), codes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn invariants_hold(p in picks(), pre in 0..PREFIXES.len()) {
        let text = log(&p, pre);
        let e = explain_str("job.log", &text);
        if e.transport == Transport::Socket {
            prop_assert_eq!(e.gpudirect_rdma, Some(false), "socket carries no GPUDirect RDMA:\n{}", text);
        }
        if has(&p, &[Kind::Fatal, Kind::UcxFatal]) {
            prop_assert!(e.has_errors(), "a fatal error is never ok:\n{}\n{:#?}", text, e.findings);
        }
        let rdma_expected = has(&p, &[Kind::RdmaConfigured, Kind::MultiNode, Kind::SocketConnections])
            || hosts(&p) > 1;
        if e.transport == Transport::Socket && rdma_expected {
            prop_assert!(e.has_errors(), "sockets where RDMA was expected are never ok:\n{}\n{:#?}", text, e.findings);
        }
        if has(&p, &[Kind::Network, Kind::SocketConnections, Kind::UcxFatal]) {
            prop_assert_ne!(e.transport, Transport::Unknown, "the log names the network:\n{}", text);
        }
        for (i, f) in e.findings.iter().enumerate() {
            if let Some(c) = f.caused_by {
                prop_assert!(
                    e.findings[..i].iter().any(|g| g.code == c),
                    "{} names cause {} which does not come before it:\n{:#?}", f.code, c, e.findings
                );
            }
        }
    }

    #[test]
    fn launcher_prefixes_change_nothing(p in picks(), pre in 1..PREFIXES.len()) {
        let plain = explain_str("job.log", &log(&p, 0));
        let prefixed = explain_str("job.log", &log(&p, pre));
        prop_assert_eq!(verdict(&prefixed), verdict(&plain), "prefix {:?}:\n{}", PREFIXES[pre], log(&p, pre));
        prop_assert_eq!(&prefixed.hosts, &plain.hosts);
    }
}
