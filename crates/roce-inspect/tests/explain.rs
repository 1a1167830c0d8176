//! `roce explain` against real logs: every fixture under `tests/fixtures/logs/` (captured NCCL 2.28 logs and
//! excerpts quoted in public NCCL/UCX issues) states its verdict in a sidecar `<name>.expect.toml`, asserted here;
//! every `roce::explain::…` code has a case that fires it and one that does not; garbage never panics; and the
//! parser streams (split lines, capped lines, bounded state).

use std::collections::BTreeSet;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use roce_inspect::explain::{Explainer, Explanation, LINE_MAX, Transport, explain_str};
use roce_model::{BuiltinsOnly, Code, Domain, Profile, builtin, load};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logs")
}

fn logs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

fn profile(name: &str) -> Profile {
    load(builtin::source(name).unwrap(), &BuiltinsOnly)
        .profile
        .unwrap()
}

/// Explain a file through a reader with a tiny buffer, so lines split across reads are exercised.
fn explain_file(path: &Path, buf: usize) -> Explanation {
    let mut x = Explainer::new();
    x.start_file(&path.file_name().unwrap().to_string_lossy());
    let f = std::fs::File::open(path).unwrap();
    x.read(BufReader::with_capacity(buf, f)).unwrap();
    x.finish()
}

fn codes(e: &Explanation) -> BTreeSet<String> {
    e.findings
        .iter()
        .map(|f| f.code.as_str().to_string())
        .collect()
}

fn gdr(e: &Explanation) -> &'static str {
    match e.gpudirect_rdma {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

fn strings(item: &toml_edit::Item) -> BTreeSet<String> {
    item.as_array()
        .expect("an array of strings")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_fixture_has_a_header_and_its_verdict_holds() {
    let logs = logs();
    assert!(logs.len() >= 20, "fixtures: {}", logs.len());
    let mut captured = 0;
    let mut github = 0;
    for log in &logs {
        let sidecar = log.with_extension("expect.toml");
        let text = std::fs::read_to_string(&sidecar)
            .unwrap_or_else(|_| panic!("{} has no {}", log.display(), sidecar.display()));
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        match doc["source"].as_str().unwrap() {
            "captured" => {
                captured += 1;
                for k in ["machine", "nccl", "command", "env", "result"] {
                    assert!(
                        doc[k].as_str().is_some_and(|s| !s.is_empty()),
                        "{}: no `{k}`",
                        sidecar.display()
                    );
                }
            }
            "github" => {
                github += 1;
                let url = doc["url"].as_str().unwrap();
                assert!(
                    url.starts_with("https://github.com/"),
                    "{}: {url}",
                    sidecar.display()
                );
            }
            other => panic!("{}: unknown source {other}", sidecar.display()),
        }
        let expect = &doc["expect"];
        let name = log.file_name().unwrap().to_string_lossy().to_string();
        // the same verdict whether lines arrive whole or split across 7-byte reads
        let e = explain_file(log, 1 << 16);
        let split = explain_file(log, 7);
        assert_eq!(e, split, "{name}: split reads changed the result");

        assert_eq!(
            e.transport.as_str(),
            expect["transport"].as_str().unwrap(),
            "{name}: transport"
        );
        assert_eq!(
            gdr(&e),
            expect["gpudirect_rdma"].as_str().unwrap(),
            "{name}: gpudirect_rdma"
        );
        assert_eq!(
            codes(&e),
            strings(&expect["codes"]),
            "{name}: finding codes\n{:#?}",
            e.findings
        );
        for f in &e.findings {
            assert!(!f.message.is_empty() && !f.help.is_empty(), "{name}: {f:?}");
            if let Some(ev) = &f.evidence {
                assert!(ev.line >= 1, "{name}: {f:?}");
            }
        }
        if let Some(p) = expect.get("profile") {
            let mut e = e.clone();
            e.compare_profile(&profile(p["name"].as_str().unwrap()));
            assert_eq!(
                codes(&e),
                strings(&p["codes"]),
                "{name}: codes with --profile\n{:#?}",
                e.findings
            );
        }
    }
    assert!(captured >= 8, "captured logs: {captured}");
    assert!(github >= 3, "GitHub excerpts: {github}");
    // and no sidecar without its log
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let p = entry.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        if let Some(stem) = n.strip_suffix(".expect.toml") {
            assert!(
                fixtures().join(format!("{stem}.log")).exists(),
                "{n} has no log"
            );
        }
    }
}

#[test]
fn snapshots_of_every_fixture() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/explain");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for log in logs() {
            let e = explain_file(&log, 1 << 16);
            let name = log.file_stem().unwrap().to_string_lossy().to_string();
            let json = serde_json::to_string_pretty(&e.to_json()).unwrap();
            insta::assert_snapshot!(name, json);
        }
    });
}

#[test]
fn no_snapshot_is_missing_or_orphaned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/explain");
    let mut expected: Vec<String> = logs()
        .iter()
        .map(|l| format!("{}.snap", l.file_stem().unwrap().to_string_lossy()))
        .collect();
    expected.sort();
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap"))
        .collect();
    found.sort();
    assert_eq!(found, expected);
}

// ---- the real 2.28 logs, in detail ----

#[test]
fn a_real_socket_fallback_reads_as_such() {
    let e = explain_file(
        &fixtures().join("h200x2-profile-gb300-roce-net-forced.log"),
        4096,
    );
    assert_eq!(e.transport, Transport::Socket);
    assert_eq!(e.network.as_deref(), Some("Socket"));
    assert_eq!(e.nccl_version.as_deref(), Some("2.28.9"));
    assert_eq!(e.env.get("NCCL_IB_HCA").map(String::as_str), Some("ibp"));
    assert_eq!(
        e.env.get("NCCL_NVLS_NCHANNELS").map(String::as_str),
        Some("24"),
        "integer echo without its period"
    );
    assert_eq!(e.socket_interfaces, vec!["eth0".to_string()]);
    assert!(
        e.devices.is_empty(),
        "2.24+ prints `NET/IB : Using [RO]; OOB …` with no device: not a device"
    );
    assert_eq!((e.connections.net, e.connections.net_gdr), (8, 0));
    // grouped per process, ranks from Init START, devices from the prefix
    assert_eq!(e.hosts, vec!["vm".to_string()]);
    let ranks: Vec<(Option<u32>, Option<u32>, Option<u32>)> = e
        .processes
        .iter()
        .map(|p| (p.rank, p.nranks, p.cuda_dev))
        .collect();
    assert_eq!(
        ranks,
        vec![(Some(0), Some(2), Some(0)), (Some(1), Some(2), Some(1))]
    );
    let f = &e.findings[0];
    assert_eq!(f.code, Code::ExplainSocketFallback);
    assert!(
        f.message
            .contains("NCCL_IB_HCA=ibp matched no active RDMA port"),
        "{}",
        f.message
    );
    assert!(
        f.help.contains("Multus") && f.help.contains("rdma/ib"),
        "{}",
        f.help
    );
    assert_eq!(f.evidence.as_ref().map(|e| e.line), Some(20));
    assert!(
        f.evidence
            .as_ref()
            .unwrap()
            .text
            .ends_with("NET/IB : No device found.")
    );
}

#[test]
fn benign_alarming_lines_are_not_findings() {
    // libnccl-env.so / libnccl-net.so / tuner / profiler not found, dlvsym failures, "Could not get speed",
    // "Topology detection … not a PCI device", and the vacuous "GDR 1" of a node without network connections
    let e = explain_file(&fixtures().join("h200x2-baseline.log"), 4096);
    assert!(e.findings.is_empty(), "{:#?}", e.findings);
    assert_eq!(
        e.gpudirect_rdma,
        Some(false),
        "the network is Socket, which never carries GPUDirect RDMA; `Connected all rings, use ring PXN 0 GDR 1` with no NET connection does not say otherwise"
    );
    assert_eq!(e.connections.p2p, 48);
    let old = explain_file(
        &fixtures().join("gh-nccl-tests-188-old-plugin-lines.log"),
        4096,
    );
    assert!(old.findings.is_empty(), "{:#?}", old.findings);
}

#[test]
fn multi_host_logs_are_grouped_per_host_and_process() {
    let e = explain_file(&fixtures().join("gh-nccl-226-multinode-socket.log"), 4096);
    assert_eq!(e.hosts.len(), 17);
    assert_eq!(e.processes.len(), 17);
    assert!(e.hosts.contains(&"ip-172-31-12-21".to_string()));
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainSocketFallback)
        .unwrap();
    assert!(
        f.message.contains("ranks on 17 hosts talk over TCP"),
        "{}",
        f.message
    );
    // interleaved threads of one process are one process
    let e = explain_file(&fixtures().join("gh-nccl-707-gdrdma-channels.log"), 4096);
    assert_eq!(e.processes.len(), 1);
    assert_eq!(e.processes[0].connections.net_gdr, 12);
    assert_eq!(e.processes[0].lines, 12);
}

#[test]
fn nccl_line_formats_2_18_to_2_28() {
    // channel lines: busId hex (≤2.18) and NVML index (2.19+), PXN and PCI suffixes
    let log = "\
h:1:2 [0] NCCL INFO Channel 00 : 0[6000] -> 1[7000] via P2P/IPC
h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA
h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1(3)/GDRDMA(PCI)
h:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via SHM/direct/direct
h:1:2 [0] NCCL INFO Channel 03/1 : 0[0] -> 1[1] via P2P/CUMEM/read
h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>
h:1:2 [0] NCCL INFO Using network IB
";
    let e = explain_str("x", log);
    assert_eq!(
        (
            e.connections.net,
            e.connections.net_gdr,
            e.connections.p2p,
            e.connections.shm
        ),
        (2, 2, 2, 1)
    );
    assert_eq!(e.transport, Transport::Ib);
    assert_eq!(e.gpudirect_rdma, Some(true));
    assert_eq!(e.devices.len(), 2);
    assert!(e.findings.is_empty(), "{:#?}", e.findings);
    // 2.20–2.23 merged NICs, HPC-X SHARP suffixes, RoCE
    let e = explain_str(
        "x",
        "h:1:2 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/RoCE, [1] mlx5_1:1/RoCE} [RO]; OOB eth0:10.0.0.1<0>\n\
         h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB/SHARP [1]mlx5_3:1/IB/SHARP ; OOB eth0:10.0.0.1<0>\n",
    );
    let names: Vec<(&str, &str)> = e
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d.link_layer.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("mlx5_0", "RoCE"),
            ("mlx5_1", "RoCE"),
            ("mlx5_2", "IB/SHARP"),
            ("mlx5_3", "IB/SHARP")
        ]
    );
    // completion errors of every version decode the same status and vendor error
    for line in [
        "h:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with error 12, opcode 0, len 0, vendor err 129 (Send)",
        "h:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send)",
        "h:1:2 [0] net_ib.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca mlx5_0",
        "[2026-01-01 00:00:00] h:1:2 [0] net_ib.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca mlx5_0",
    ] {
        let e = explain_str("x", line);
        let f = &e.findings[0];
        assert_eq!(f.code, Code::ExplainIbRetryExceeded, "{line}");
        assert!(
            f.message.contains("vendor err 129 (0x81)"),
            "{line}: {}",
            f.message
        );
    }
    // the bare version line of 2.18–2.21 and the INFO line of 2.22+
    assert_eq!(
        explain_str("x", "NCCL version 2.19.3+cuda12.3\n")
            .nccl_version
            .as_deref(),
        Some("2.19.3")
    );
    assert_eq!(
        explain_str("x", "h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n")
            .nccl_version
            .as_deref(),
        Some("2.28.9")
    );
}

/// NCCL 2.30–2.32 changed its output: a function name after WARN's `file:line` and in error chains (2.30), the
/// benign `RMA/Socket … requires GDRCopy` WARN (2.31+), the notice level `NCCL ATTN` (2.32), the diagnostics'
/// `host:pid NCCL DIAG` report (2.31+) and the multi-rank GPU wording (2.30).
#[test]
fn nccl_line_formats_2_30_to_2_32() {
    // WARN and ATTN lines name their process through `file:line (func)`
    let e = explain_str(
        "x",
        "[2026-12-03 06:16:11] vm:1878:1878 [0] init.cc:1294 (initTransportsRank) NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.\n",
    );
    assert_eq!(e.hosts, vec!["vm".to_string()]);
    assert_eq!(e.processes.len(), 1);
    let f = &e.findings[0];
    assert_eq!(f.code, Code::ExplainDuplicateGpu);
    assert_eq!(f.hosts, vec!["vm".to_string()]);
    assert!(
        f.help.contains("NCCL_MULTI_RANK_GPU_ENABLE=1"),
        "{}",
        f.help
    );
    // the older wording mentions the knob only where the version has it (2.30+)
    let old = "h:1:1 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000\n";
    let help = |log: &str| explain_str("x", log).findings[0].help.clone();
    assert!(
        !help(&format!(
            "h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n{old}"
        ))
        .contains("MULTI_RANK")
    );
    assert!(
        help(&format!(
            "h:1:1 [0] NCCL INFO NCCL version 2.30.3+cuda13.0\n{old}"
        ))
        .contains("MULTI_RANK")
    );

    // the RMA socket plugin's GDRCopy warning is never a finding, nor the cause of a failure
    let rma = "[2026-12-03 06:15:45] vm:1443:1443 [0] transport/rma_socket.cc:32 (ncclRmaSocketProxyInit) NCCL WARN RMA/Socket : rma_socket requires GDRCopy; and GDR Copy is not available\n\
               vm:1443:1443 [0] NCCL INFO RMA/Plugin: Failed to initialize plugin \n\
               vm:1443:1443 [0] NCCL INFO RMA/Plugin: Failed to initialize any plugin\n";
    assert!(
        explain_str("x", rma).findings.is_empty(),
        "{:#?}",
        explain_str("x", rma).findings
    );
    // a failure after it: the chain (with 2.30's function names) ends the async thread, and the cause is the
    // warning that is not the RMA one
    let failed = format!(
        "{rma}vm:1443:1443 [0] misc/socket.cc:397 (ncclSocketConnect) NCCL WARN Net : connecting to address  with family 33621 is neither AF_INET(2) nor AF_INET6(10)\n\
         vm:1443:1443 [0] NCCL INFO bootstrap.cc:256 (bootstrapInit) -> 3\n\
         vm:1443:1443 [0] NCCL INFO group.cc:147 (ncclAsyncJobMain) -> 3 [Async thread]\n"
    );
    let e = explain_str("x", &failed);
    assert_eq!(e.findings[0].code, Code::ExplainNcclError);
    assert!(
        e.findings[0].message.contains("neither AF_INET"),
        "{}",
        e.findings[0].message
    );
    assert!(
        !e.findings.iter().any(|f| f.message.contains("GDRCopy")),
        "{:#?}",
        e.findings
    );

    // `Failed to initialize NET plugin IB` became an ATTN notice: read as before, and the fallback cites it when
    // there is no `No device found.` line
    let attn = "vm:1568:1568 [0] NCCL INFO transport/net_ib/init.cc:681 (ncclIbInit) -> 3\n\
                [2026-12-03 06:15:53] vm:1568:1568 [0] plugin/net.cc:229 (ncclNetPluginInit) NCCL ATTN Failed to initialize NET plugin IB\n\
                vm:1568:1568 [0] NCCL INFO NET/Socket : Using [0]eth0:192.0.2.2<0>\n\
                vm:1568:1568 [0] NCCL INFO Using network Socket\n\
                vm:1568:1568 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n";
    let e = explain_str("x", attn);
    assert_eq!(e.transport, Transport::Socket);
    assert_eq!(e.codes(), vec![Code::ExplainSocketFallback]);
    let ev = e.findings[0].evidence.as_ref().unwrap();
    assert!(
        ev.text
            .contains("NCCL ATTN Failed to initialize NET plugin IB"),
        "{}",
        ev.text
    );
    // an ATTN notice alone never makes a failure
    let e = explain_str(
        "x",
        "[2026-12-03 06:15:45] vm:1443:1443 [0] foo.cc:1 (ncclFoo) NCCL ATTN Something worth knowing\nvm: Test NCCL failure common.cu:222 'invalid usage (run with NCCL_DEBUG=WARN for details) / '\n",
    );
    assert!(
        !e.findings
            .iter()
            .any(|f| f.code == Code::ExplainNcclError && f.message.contains("worth knowing")),
        "{:#?}",
        e.findings
    );

    // the diagnostics' report: `host:pid NCCL DIAG`, also behind a launcher's tag
    let diag = "[1,0]<stdout>:node01:15 NCCL DIAG === NCCL Diagnostics ===\n\
                [1,0]<stdout>:node01:15 NCCL DIAG [OK]   p2p: verified P2P access in both directions between every GPU pair (56 peer accesses)\n\
                [1,0]<stdout>:node01:15 NCCL DIAG [INFO] net bw: failed: selected network plugin does not support IB in comm 0x1a\n\
                [1,1]<stdout>:node02:16 NCCL DIAG [INFO] net bw: failed: selected network plugin does not support IB in comm 0x1a\n\
                [1,0]<stdout>:node01:15 NCCL DIAG [INFO] net bw: setup failed on rank 0 in comm 0x1a\n\
                [1,0]<stdout>:node01:15 NCCL DIAG NCCL diagnostics completed in 245.3 ms across 16 ranks\n";
    let e = explain_str("x", diag);
    assert_eq!(e.hosts, vec!["node01".to_string(), "node02".to_string()]);
    let j = e.to_json();
    let d = j["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 3, "{d:?}");
    assert_eq!(d[0]["level"], "OK");
    assert_eq!(d[0]["check"], "p2p");
    assert_eq!(
        d[1]["message"],
        "failed: selected network plugin does not support IB"
    );
    assert_eq!(d[1]["count"], 2);
    assert_eq!(d[1]["notice"], false);
    assert_eq!(d[1]["line"], 3);
    let f: Vec<&roce_inspect::explain::Finding> = e
        .findings
        .iter()
        .filter(|f| f.code == Code::ExplainNcclDiagnostic)
        .collect();
    assert_eq!(f.len(), 1, "one finding per check: {f:#?}");
    assert_eq!(f[0].count, 3);
    assert_eq!(f[0].hosts, vec!["node01".to_string(), "node02".to_string()]);
    assert!(
        f[0].message.contains("net bw") && f[0].message.contains("setup failed on rank 0"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].help.contains("only the IB verbs device"),
        "{}",
        f[0].help
    );
    assert!(
        !e.has_errors(),
        "diagnostics are informational: {:#?}",
        e.findings
    );
}

// ---- every code: a case that fires it and one that does not ----

/// (code, a log that fires it, a log that must not).
fn cases() -> Vec<(Code, &'static str, &'static str)> {
    use Code::*;
    vec![
        (
            ExplainEmptyLog,
            "",
            "h:1:1 [0] NCCL INFO Using network IB\n",
        ),
        (
            ExplainEmptyLog,
            "\n \n\t\n",
            "h:1:1 [0] NCCL INFO Using network IB\n",
        ),
        (
            ExplainNotNcclLog,
            "hello\nworld\n",
            "h:1:1 [0] NCCL INFO Using network IB\n",
        ),
        (
            ExplainNoInfoLines,
            "h:1:1 [0] bootstrap.cc:1 NCCL WARN Bootstrap : no socket interface found\n",
            "h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] bootstrap.cc:1 NCCL WARN Bootstrap : no socket interface found\n",
        ),
        (
            ExplainSocketFallback,
            "h:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5\nh:1:1 [0] NCCL INFO NET/IB : No device found.\nh:1:1 [0] NCCL INFO Using network Socket\n",
            "h:1:1 [0] NCCL INFO NET/IB : No device found.\nh:1:1 [0] NCCL INFO Using network Socket\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n",
        ),
        (
            ExplainNetNotFound,
            "h:1:1 [0] NCCL INFO Comm config netName reset to NCCL_NET=IB\nh:1:1 [0] net.cc:1 NCCL WARN Error: network IB not found.\n",
            "h:1:1 [0] NCCL INFO Comm config netName reset to NCCL_NET=IB\nh:1:1 [0] NCCL INFO Using network IB\n",
        ),
        (
            ExplainBootstrapNoInterface,
            "h:1:1 [0] NCCL INFO NET/IB : No IP interface found.\n",
            "h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n",
        ),
        (
            ExplainIbDeviceOpen,
            "h:1:1 [0] net_ib.cc:1 NCCL WARN NET/IB : Unable to open device mlx5_0\n",
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n",
        ),
        (
            ExplainGdrDisabled,
            "h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n",
            "h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n",
        ),
        (
            ExplainGdrDisabled,
            "h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 6 > 4), read 0\n",
            "h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 1b000 / HCA 0 (distance 4 <= 4), read 1\n",
        ),
        (
            ExplainIbRetryExceeded,
            "h:1:1 [0] n.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send)\n",
            "h:1:1 [0] n.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=4 opcode=0 len=0 vendor err 81 (Send)\n",
        ),
        (
            ExplainIbCompletionError,
            "h:1:1 [0] n.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=13 opcode=0 len=0 vendor err 0 (Send)\n",
            "h:1:1 [0] n.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send)\n",
        ),
        (
            ExplainQpConnectFailed,
            "h:1:1 [0] ibvwrap.cc:1 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n",
            "h:1:1 [0] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2, retrying 1/5 after 100 msec of sleep\n",
        ),
        (
            ExplainMemlock,
            "h:1:1 [0] ibvwrap.cc:1 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n",
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n",
        ),
        (
            ExplainVersionMismatch,
            "a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nb:2:2 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n",
            "a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nb:2:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
        ),
        (
            ExplainMixedNetwork,
            "a:1:1 [0] NCCL INFO Using network IB\nb:2:2 [0] NCCL INFO Using network Socket\n",
            "a:1:1 [0] NCCL INFO Using network IB\nb:2:2 [0] NCCL INFO Using network IB\n",
        ),
        (
            ExplainPluginNotLoaded,
            "h:1:1 [0] NCCL INFO NCCL_NET_PLUGIN set by environment to aws-ofi\nh:1:1 [0] NCCL INFO NET/Plugin: Could not find: aws-ofi libnccl-net-aws-ofi.so\n",
            "h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so\nh:1:1 [0] NCCL INFO ENV/Plugin: Could not find: libnccl-env.so\n",
        ),
        (
            ExplainDisableReadAsZero,
            "h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 0.\n",
            "h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.\n",
        ),
        (
            ExplainInvalidValue,
            "h:1:1 [0] NCCL INFO Invalid value 99999999999999999999 for NCCL_IB_TIMEOUT, using default 20.\n",
            "h:1:1 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.\n",
        ),
        (
            ExplainEnvDiffers,
            "a:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5\nb:2:2 [0] NCCL INFO NCCL_IB_HCA set to ibp\n",
            "a:1:1 [0] NCCL INFO NCCL_IB_HCA set to ibp\nb:2:2 [0] NCCL INFO NCCL_IB_HCA set to ibp\n",
        ),
        (
            ExplainNcclWarning,
            "h:1:1 [0] misc/cudawrap.cc:179 NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='') :\n",
            "h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n",
        ),
        (
            ExplainUcxRetryExceeded,
            "[n1:5:0:5] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)\n",
            "[n1:5:0:5] ib_mlx5_log.c:143  UCX  ERROR Remote access on mlx5_1:1/RoCE (synd 0x13 vend 0x88 hw_synd 0/0)\n",
        ),
        (
            ExplainUcxRdmaCore,
            "[1.0] [n1:5:0] rc_mlx5.c:1 UCX  ERROR send completion with error: remote operation error vendor_err 0x89\n",
            "[1.0] [n1:5:0] rc_mlx5.c:1 UCX  ERROR send completion with error: remote operation error vendor_err 0x88\n",
        ),
        (
            ExplainUcxUnreachable,
            "[n1:5] pml_ucx.c:421  Error: ucp_ep_create(proc=47) failed: Destination is unreachable\n",
            "[n1:5] pml_ucx.c:421  Error: ucp_ep_create(proc=47) failed: Input/output error\n",
        ),
        (
            ExplainUcxError,
            "[1.0] [n1:5:0] ib_iface.c:1 UCX  ERROR ibv_create_cq(cqe=4096) failed: Invalid argument\n",
            "[1.0] [n1:5:0] parser.c:1 UCX  WARN  unused environment variable: UCX_FOO\n",
        ),
        // a WARN becomes a failure when its error chain ends NCCL's async thread
        (
            ExplainNcclError,
            "h:1:1 [4] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 33621 is neither AF_INET(2) nor AF_INET6(10)\nh:1:1 [4] NCCL INFO bootstrap.cc:256 -> 3\nh:1:1 [4] NCCL INFO group.cc:64 -> 3 [Async thread]\n",
            "h:1:1 [4] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 33621 is neither AF_INET(2) nor AF_INET6(10)\nh:1:1 [4] NCCL INFO bootstrap.cc:256 -> 3\n",
        ),
        (
            ExplainDuplicateGpu,
            "h:1:1 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000\n",
            "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n",
        ),
        (
            ExplainCudaError,
            "h:1:1 [1] include/alloc.h:228 NCCL WARN Cuda failure 800 'operation not permitted'\n",
            "h:1:1 [1] NCCL INFO cudaDriverVersion 12080\n",
        ),
        (
            ExplainMnnvl,
            "h:1:1 [1] mnnvl.cc:67 NCCL WARN MNNVL (cliqueSize 8) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.\n",
            "h:1:1 [1] NCCL INFO MNNVL 1 cliqueId 0 cliqueSize 8 cliqueRank 0\n",
        ),
        (
            ExplainWatchdogTimeout,
            "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n",
            "[rank1]:[W1201 19:25:44.108121843 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources.\n",
        ),
        // loopback between hosts cannot work; on one host it is harmless
        (
            ExplainSocketInterface,
            "a:1:1 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\nb:2:2 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n",
            "a:1:1 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n",
        ),
        (
            ExplainIbverbsMissing,
            "a:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\nb:2:2 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n",
            "a:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n",
        ),
        (
            ExplainNetPluginError,
            "[2025-10-16 22:16:08] h:1:7 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available\n",
            "h:1:7 [0] NCCL INFO NET/OFI Selected Provider is efa (found 16 nics)\n",
        ),
        (
            ExplainNetPluginError,
            "h:1:1 [7] NCCL INFO NET/Plugin: Plugin load returned 2 : /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by /usr/local/nvidia/lib64/libnccl-net.so) : when loading libnccl-net.so\n",
            "h:1:1 [7] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so\n",
        ),
        (
            ExplainIbAsyncEvent,
            "h:1:1 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error\n",
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n",
        ),
        (
            ExplainMixedLinkLayer,
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB [1]mlx5_2:1/RoCE ; OOB eth0:10.0.0.1<0>\n",
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/RoCE [1]mlx5_2:1/RoCE ; OOB eth0:10.0.0.1<0>\n",
        ),
        (
            ExplainCollnetUnavailable,
            "h:1:1 [0] transport.cc:323 NCCL WARN Cannot initialize CollNet, using point-to-point network instead\n",
            "h:1:1 [3] NCCL INFO Sharp rank 0/2 initialized on mlx5_5:1\n",
        ),
        (
            ExplainUcxAddressHandle,
            "[1745563465.856286] [n1:1617 :0]       ib_device.c:1332 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0 dgid=::ffff:10.1.1.2 flow_label=0xffffffff sgid_index=3 traffic_class=106) for UD mlx5 connect on mlx5_3 failed: Connection timed out\n",
            "[1744331142.028115] [n1:2802608:3]      ucp_worker.c:1903 UCX  INFO    ucp_context_2 inter-node cfg#3 rma(rc_mlx5/mlx5_ib2:1)  amo(rc_mlx5/mlx5_ib2:1)\n",
        ),
        (
            ExplainUcxVersionMismatch,
            "[1745994234.385141] [n1:711260:0]     ucp_context.c:1774 UCX  WARN  UCP version is incompatible, required: 1.18, actual: 1.12 (release 1)\n",
            "[1754062805.042276] [n1:1049 :0]     ucp_context.c:2339 UCX  INFO  Version 1.19.0 (loaded from /lib/libucp.so.0)\n",
        ),
        (
            ExplainNixlError,
            "E0717 07:30:06.719655  994396 nixl_agent.cpp:359] createBackend: backend 'UCX' encountered error during intra-agent transfer setup with status NIXL_ERR_BACKEND\n",
            "I0801 15:40:05.041813    1049 nixl_plugin_manager.cpp:316] Discovered and loaded plugin: UCX\n",
        ),
        (
            ExplainWrongResults,
            "     1048576        262144     float     sum      -1    28.15   37.25   65.19      3    27.52   38.10   66.67      0\n",
            "     1048576        262144     float     sum      -1    28.15   37.25   65.19      0    27.52   38.10   66.67      0\n",
        ),
        (
            ExplainWrongResults,
            "# Out of bounds values : 248 FAILED\n",
            "# Out of bounds values : 0 OK\n",
        ),
        (
            ExplainGid,
            "h:88:159 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0} GID 0 (80FE/1A8A41FEFF21A75E) fifoRkey=0x15e6c5 fifoLkey=0x15e6c5\n",
            "h:88:159 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 GID 3 (0/A10B0A0AFFFF0000) fifoRkey=0x15e6c5 fifoLkey=0x15e6c5\n",
        ),
        (
            ExplainGid,
            "h:1:1 [0] net_ib.cc:1 NCCL WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument\n",
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n",
        ),
        // aws-ofi-nccl: no GPUDirect RDMA on this platform (a fact), or none where the instance has it (an error)
        (
            ExplainGdrUnsupported,
            "g5:1:1 [0] NCCL INFO NET/OFI Need to force simple protocol: GDR not supported\ng5:1:1 [0] NCCL INFO Using network Libfabric\ng5:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Libfabric/0\n",
            "p5:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa\np5:1:1 [0] NCCL INFO Using network Libfabric\np5:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Libfabric/0/GDRDMA\n",
        ),
        (
            ExplainGdrDisabled,
            "p4d:1:1 [0] platform-aws.c:545 NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge\np4d:1:1 [0] NCCL INFO Using network Libfabric\n",
            "p4d:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa\np4d:1:1 [0] NCCL INFO Using network Libfabric\np4d:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Libfabric/0/GDRDMA\n",
        ),
        // UCX's verdicts on its configuration (UCX 1.22 lines, make-ucx.sh)
        (
            ExplainUcxDeviceUnavailable,
            "[1796278493.984979] [vm:22493:0]     ucp_context.c:1492 UCX  WARN  network device 'mlx5_0:1' is not available, please use one or more of: 'eth0'(tcp), 'lo'(tcp)\n",
            "[1796278634.925576] [vm:23557:0]          parser.c:2587 UCX  INFO  UCX_* env variables: UCX_NET_DEVICES=mlx5_0:1\n",
        ),
        (
            ExplainUcxTransportUnavailable,
            "[1796278477.295125] [vm:21715:0]     ucp_context.c:1492 UCX  WARN  transport 'rcmlx5' is not available, please use one or more of: cma, mm, posix, self, shm, sm, sysv, tcp\n",
            "[1796278634.925576] [vm:23557:0]          parser.c:2587 UCX  INFO  UCX_* env variables: UCX_TLS=rc_mlx5,tcp\n",
        ),
        (
            ExplainUcxNoTransport,
            "[1796278494.394576] [vm:22496:0]     ucp_context.c:1754 UCX  ERROR no usable transports/devices (asked rc_mlx5,ud_mlx5 on network:intra-node:accelerator:loopback:)\n",
            "[1796278477.295125] [vm:21715:0]     ucp_context.c:1492 UCX  WARN  transport 'rcmlx5' is not available, please use one or more of: cma, mm, posix, self, shm, sm, sysv, tcp\n",
        ),
        (
            ExplainUcxUnusedEnv,
            "[1796278647.471293] [vm:24638:0]          parser.c:2578 UCX  WARN  unused environment variable: UCX_NET_DEVICE (maybe: UCX_NET_DEVICES?)\n",
            "[1796278634.925576] [vm:23557:0]          parser.c:2587 UCX  INFO  UCX_* env variables: UCX_NET_DEVICES=lo\n",
        ),
        (
            ExplainUcxInvalidValue,
            "[1796278495.211581] [vm:22536:0]          parser.c:1558 UCX  ERROR Invalid value for RNDV_THRESH: 'abc'. Expected: memory units\n",
            "h:1:1 [0] NCCL INFO Invalid value abc for NCCL_IB_TIMEOUT, using default 20.\n",
        ),
        (
            ExplainUcxGid,
            "[1700000000.1] [h:1:0]        ib_iface.c:1440 UCX  ERROR both GID_INDEX and ROCE_SUBNET_LIST are specified, please select only one of them\n",
            "[1700000000.1] [h:1:0]      ucp_worker.c:1991 UCX  INFO  ucp_context_0 inter-node cfg#1 tag(rc_mlx5/mlx5_0:1)\n",
        ),
        // NCCL 2.31+ diagnostics (dev-nccl232-2h-run-diagnostics.log); a passing check and a notice NCCL prints on
        // healthy systems (src/diagnostics/ib_write_bw.cc) are not findings
        (
            ExplainNcclRas,
            "Errors\n======\n\nINCOMPLETE\n  Missing communicator data from 1 job process\n  Process 1629 on node 192.0.2.2 managing GPU 0\n",
            "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    0         1         1         2         2         2   RUNNING      OK\n\nErrors\n======\n",
        ),
        (
            ExplainNcclRas,
            "      \"missing_ranks_count\": 1,\n            \"considered_dead\": true\n",
            "      \"missing_ranks_count\": 0,\n            \"considered_dead\": false\n",
        ),
        (
            ExplainNcclDiagnostic,
            "vm:1732 NCCL DIAG [INFO] net bw: required external tool missing in comm 0x948110eafb29b495\n",
            "node01:15 NCCL DIAG [OK]   p2p: verified P2P access in both directions between every GPU pair (56 peer accesses)\n\
             node01:15 NCCL DIAG [INFO] net bw: net devices are shared across ranks, concurrent use can lower the bandwidth in comm 0x1\n",
        ),
        // an ATTN notice no rule reads (the text is made up: 2.32.3 printed only the one below in these runs)
        (
            ExplainNcclNotice,
            "[2026-12-03 06:15:45] vm:1443:1443 [0] foo.cc:1 (ncclFoo) NCCL ATTN Something worth knowing\n",
            "[2026-12-03 06:15:45] vm:1443:1443 [0] plugin/net.cc:229 (ncclNetPluginInit) NCCL ATTN Failed to initialize NET plugin IB\n",
        ),
    ]
}

#[test]
fn every_code_fires_on_its_case_and_not_on_the_quiet_one() {
    for (code, fires, quiet) in cases() {
        let e = explain_str("case.log", fires);
        assert!(
            e.codes().contains(&code),
            "{code} did not fire on:\n{fires}\n{:#?}",
            e.findings
        );
        let e = explain_str("case.log", quiet);
        assert!(
            !e.codes().contains(&code),
            "{code} fired on the quiet case:\n{quiet}\n{:#?}",
            e.findings
        );
    }
}

#[test]
fn ucx_unreachable_on_several_hosts_points_at_the_fabric() {
    let many = "[n1:5] pml_ucx.c:421  Error: ucp_ep_create(proc=1) failed: Destination is unreachable\n\
                [n2:6] pml_ucx.c:421  Error: ucp_ep_create(proc=2) failed: Destination is unreachable\n\
                [n3:7] pml_ucx.c:421  Error: ucp_ep_create(proc=3) failed: Destination is unreachable\n";
    let f = explain_str("x", many).findings.into_iter().next().unwrap();
    assert_eq!(f.code, Code::ExplainUcxUnreachable);
    assert!(f.message.contains("on 3 hosts at once"), "{}", f.message);
    assert!(
        f.help.contains("fabric event") && f.help.contains("other jobs"),
        "{}",
        f.help
    );
    let one = explain_str(
        "x",
        "[n1:5] pml_ucx.c:421  Error: x failed: Destination is unreachable\n",
    );
    assert!(!one.findings[0].message.contains("hosts at once"));
}

#[test]
fn old_nccl_gdr_help_names_the_peermem_detection_bug() {
    let log = "h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n\
               h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n\
               h:1:1 [0] NCCL INFO Using network IB\n\
               h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n";
    let e = explain_str("x", log);
    assert_eq!(e.devices[0].gdr, Some(false));
    let f = &e.findings[0];
    assert_eq!(f.code, Code::ExplainGdrDisabled);
    assert!(
        f.help.contains("2.23") && f.help.contains("1676"),
        "{}",
        f.help
    );
    let new = explain_str("x", &log.replace("2.21.5", "2.28.9"));
    assert!(
        new.findings[0].help.contains("modprobe nvidia_peermem"),
        "{}",
        new.findings[0].help
    );
}

// ---- --profile ----

#[test]
fn profile_comparison_reports_every_difference() {
    let gb300 = profile("coreweave/gb300-roce");
    // a value NCCL saw that differs, compared as NCCL reads integers
    let mut e = explain_str(
        "x",
        "h:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5\nh:1:1 [0] NCCL INFO NCCL_IB_TC set by environment to 96.\n\
         h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n",
    );
    e.compare_profile(&gb300);
    let mismatches: Vec<&str> = e
        .findings
        .iter()
        .filter(|f| f.code == Code::ExplainProfileEnvMismatch)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert!(
        mismatches[0].contains("NCCL_IB_HCA=ibp") && mismatches[0].contains("NCCL_IB_HCA=mlx5")
    );
    let check = e.profile.as_ref().unwrap();
    assert!(check.checked.contains(&"NCCL_IB_TC".to_string()));
    assert!(check.unverified.contains(&"NCCL_IB_ADDR_RANGE".to_string()));

    // a variable NCCL echoes whenever it is set, absent from a log with env echoes
    let mut e = explain_file(&fixtures().join("h200x2-net-forced.log"), 4096);
    e.compare_profile(&gb300);
    let missing: Vec<&str> = e
        .findings
        .iter()
        .filter(|f| f.code == Code::ExplainProfileEnvMissing)
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        missing
            .iter()
            .any(|m| m.contains("NCCL_SOCKET_IFNAME=eth0")),
        "{missing:?}"
    );
    assert!(
        missing.iter().any(|m| m.contains("NCCL_IB_HCA=ibp")),
        "{missing:?}"
    );
    assert!(
        missing.iter().any(|m| m.contains("NCCL_NET_PLUGIN=none")),
        "{missing:?}"
    );
    // the fixture with the rendered env matches: nothing missing, nothing different
    let mut e = explain_file(
        &fixtures().join("h200x2-profile-gb300-roce-net-forced.log"),
        4096,
    );
    e.compare_profile(&gb300);
    assert!(
        !e.codes().iter().any(|c| matches!(
            c,
            Code::ExplainProfileEnvMissing | Code::ExplainProfileEnvMismatch
        )),
        "{:#?}",
        e.findings
    );

    // devices that are not the rails, or too few rails
    let mut e = explain_file(&fixtures().join("gh-nccl-1537-gdr-disabled.log"), 4096);
    e.compare_profile(&gb300);
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainProfileDevices)
        .unwrap();
    assert!(f.message.contains("mlx5_0, mlx5_1"), "{}", f.message);
    let mut e = explain_str(
        "x",
        "h:1:1 [0] NCCL INFO NET/IB : Using [0]ibp0p0:1/RoCE [1]ibp0p1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\nh:1:1 [0] NCCL INFO Using network IB\n",
    );
    e.compare_profile(&gb300);
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainProfileDevices)
        .unwrap();
    assert!(
        f.message.contains("2 of the profile's 16 rails"),
        "{}",
        f.message
    );
    assert!(
        !e.codes().contains(&Code::ExplainProfileTransport),
        "RoCE log, RoCE profile"
    );

    // the transport: RoCE log against an IB profile
    let mut e = explain_file(&fixtures().join("gh-nccl-tests-227-irdma-roce.log"), 4096);
    e.compare_profile(&profile("coreweave/h100-ib"));
    assert!(e.codes().contains(&Code::ExplainProfileTransport));
    // unknown transport is not a difference
    let mut e = explain_str(
        "x",
        "h:1:1 [1] include/alloc.h:228 NCCL WARN Cuda failure 800 'operation not permitted'\n",
    );
    assert_eq!(e.transport, Transport::Unknown);
    e.compare_profile(&profile("coreweave/h100-ib"));
    assert!(!e.codes().contains(&Code::ExplainProfileTransport));
}

/// `NCCL_*_DISABLE=0`: a profile that sets the knob to 0 meant 0 (the GB200/GB300 InfiniBand built-ins set
/// `NCCL_SHM_DISABLE "0"`); a knob the profile does not set to 0 is still reported.
#[test]
fn a_disable_knob_the_profile_sets_to_0_is_read_as_meant() {
    let log = "h:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 0.\n\
               h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 0.\n";
    let reported = |e: &Explanation| -> Vec<String> {
        e.findings
            .iter()
            .filter(|f| f.code == Code::ExplainDisableReadAsZero)
            .map(|f| f.message.split(' ').next().unwrap().to_string())
            .collect()
    };
    // without a profile both are reported
    let e = explain_str("x", log);
    assert_eq!(reported(&e), ["NCCL_SHM_DISABLE", "NCCL_P2P_DISABLE"]);
    // gb300-ib sets NCCL_SHM_DISABLE to 0, not NCCL_P2P_DISABLE
    let mut e = explain_str("x", log);
    e.compare_profile(&profile("coreweave/gb300-ib"));
    assert_eq!(reported(&e), ["NCCL_P2P_DISABLE"]);
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainDisableReadAsZero)
        .unwrap();
    assert_eq!(f.evidence.as_ref().map(|ev| ev.line), Some(2));
    // a profile that sets neither reports both
    let mut e = explain_str("x", log);
    e.compare_profile(&profile("coreweave/h100-ib"));
    assert_eq!(reported(&e), ["NCCL_SHM_DISABLE", "NCCL_P2P_DISABLE"]);
}

#[test]
fn every_explain_code_has_a_case() {
    let mut covered: BTreeSet<&str> = cases().iter().map(|(c, _, _)| c.as_str()).collect();
    covered.extend([
        "roce::explain::binary_log",
        "roce::explain::profile_transport",
        "roce::explain::profile_env_mismatch",
        "roce::explain::profile_env_missing",
        "roce::explain::profile_devices",
        // with a profile: firing and quiet in profile.rs (a_net_plugin_the_profile_turned_off)
        "roce::explain::profile_net_plugin",
        // with a profile: profile_variables_the_logs_nccl_does_not_read
        "roce::explain::profile_env_unread",
        // with a profile that names a release: the_log_release_against_the_profile_release (profile.rs)
        "roce::explain::profile_nccl_release",
        // only with an expectation: compared in bandwidth_is_read_and_compared
        "roce::explain::bandwidth_low",
    ]);
    for code in Code::ALL.iter().filter(|c| c.domain() == Domain::Log) {
        assert!(
            covered.contains(code.as_str()),
            "{code} has no firing/quiet case"
        );
    }
}

// ---- garbage and streaming ----

#[test]
fn garbage_gives_a_clear_finding_and_no_panic() {
    let binary: Vec<u8> = (0u8..=255).cycle().take(100_000).collect();
    let mut x = Explainer::new();
    x.start_file("blob.bin");
    x.read(&binary[..]).unwrap();
    let e = x.finish();
    assert_eq!(e.codes(), vec![Code::ExplainBinaryLog]);
    assert!(e.has_errors());
    assert!(e.findings[0].message.contains("blob.bin is a binary file"));

    let e = explain_str("empty.log", "");
    assert_eq!(e.codes(), vec![Code::ExplainEmptyLog]);
    assert_eq!(e.findings[0].message, "empty.log is empty");
    let e = explain_str("notes.txt", "just some text\nand more\n");
    assert_eq!(e.codes(), vec![Code::ExplainNotNcclLog]);
    assert!(
        e.findings[0]
            .message
            .contains("no NCCL INFO/WARN line and no UCX error in its 2 lines")
    );

    // invalid UTF-8, lone CRs, NCCL keywords at the very end, absurd numbers: no panic
    let nasty: &[&[u8]] = &[
        b"\xff\xfe NCCL INFO \xff",
        b"NCCL INFO",
        b"NCCL WARN",
        b"h:1:1 [0] NCCL INFO Channel",
        b"h:1:1 [0] NCCL INFO Channel 00/0 : via ",
        b"h:1:1 [0] NCCL INFO Channel 00/0 : via NET/",
        b"h:1:1 [99999999999999999999] NCCL INFO comm rank 99999999999 nranks x - Init START",
        b"h:1:1 [0] NCCL INFO NET/IB : Using [0]:/ [1]a:/b [999999999999]x:1/y",
        b"h:1:1 [0] n:1 NCCL WARN NET/IB : Got completion from peer with status=IBV_WC_(",
        b"h:1:1 [0] n:1 NCCL WARN NET/IB : Got completion from peer with error 99999999999999999999",
        b"[:] ib_mlx5_log.c:1 Transport retry count exceeded on",
        b"[a:1] QP 0x1 wqe[ sgix dgid",
        b"\r\r\r",
        b"h:1:1 [0] NCCL INFO NCCL_ set by environment to ",
        b"h:1:1 [0] NCCL INFO Invalid value ",
    ];
    for l in nasty {
        let mut x = Explainer::new();
        x.start_file("nasty");
        x.read(*l).unwrap();
        x.line(l);
        let e = x.finish();
        let _ = e.to_json();
    }
}

/// A reader that yields a long synthetic log without holding it in memory.
struct Repeat {
    line: Vec<u8>,
    left: usize,
    pos: usize,
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && self.left > 0 {
            let k = (self.line.len() - self.pos).min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&self.line[self.pos..self.pos + k]);
            n += k;
            self.pos += k;
            if self.pos == self.line.len() {
                self.pos = 0;
                self.left -= 1;
            }
        }
        Ok(n)
    }
}

#[test]
fn state_stays_bounded_however_long_the_log() {
    // 200k lines of one process, with warnings that differ only in numbers: still one process and one finding
    let mut x = Explainer::new();
    x.start_file("long.log");
    let line =
        b"node3:4242:4250 [3] NCCL INFO Channel 07/1 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA\n\
node3:4242:4250 [3] proxy.cc:12 NCCL WARN Proxy call to rank 11 failed (Connect)\n"
            .to_vec();
    x.read(BufReader::new(Repeat {
        line,
        left: 100_000,
        pos: 0,
    }))
    .unwrap();
    let e = x.finish();
    assert_eq!(e.processes.len(), 1);
    assert_eq!(e.connections.net_gdr, 100_000);
    assert_eq!(e.findings.len(), 1);
    assert_eq!(e.findings[0].count, 100_000);
    assert_eq!(e.files[0].lines, 200_000);

    // a 5 MB line with no newline is cut at LINE_MAX and still read
    let mut big = b"h:1:1 [0] NCCL INFO Using network IB ".to_vec();
    big.resize(5 << 20, b'x');
    let mut x = Explainer::new();
    x.start_file("big.log");
    x.read(BufReader::with_capacity(4096, &big[..])).unwrap();
    let e = x.finish();
    assert_eq!(e.files[0].lines, 1);
    assert!(LINE_MAX < big.len());
    assert_eq!(e.network.as_deref().map(|n| n.len() < LINE_MAX), Some(true));
}

#[test]
fn json_has_the_documented_shape() {
    let e = explain_file(&fixtures().join("h200x2-net-forced.log"), 4096);
    let j = e.to_json();
    for k in [
        "transport",
        "gpudirect_rdma",
        "nccl_version",
        "devices",
        "env",
        "findings",
    ] {
        assert!(j.get(k).is_some(), "no `{k}` in {j}");
    }
    assert_eq!(j["transport"], "socket");
    assert_eq!(j["gpudirect_rdma"], false);
    let f = &j["findings"][0];
    for k in ["code", "severity", "message", "help", "line"] {
        assert!(f.get(k).is_some(), "finding has no `{k}`: {f}");
    }
    assert_eq!(f["code"], "roce::explain::socket_fallback");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["line"], 12);
}

// ---- nccl-tests results ----

#[test]
fn bandwidth_is_read_and_compared() {
    let table = "\
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA
    16777216       4194304     float     sum      -1   121.33  138.28  242.00      0   120.47  139.26  243.71      0
    33554432       8388608     float     sum      -1   195.40  171.72  300.51      0   195.40  171.73  300.52      0
    67108864      16777216     float     sum      -1   390.10  172.03  301.05      0   390.00  172.07  301.12      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 281.5
";
    let mut e = explain_str("perf.log", table);
    let b = e.bandwidth.clone().expect("a table");
    assert_eq!(b.rows, 3, "an INFO line inside the table is not a row");
    assert_eq!((b.peak_busbw, b.peak_size), (301.12, 67108864));
    assert_eq!((b.large_busbw, b.large_size), (301.12, 67108864));
    assert_eq!(
        (b.avg_busbw, b.out_of_bounds, b.wrong),
        (Some(281.5), Some(0), 0)
    );
    assert!(!e.has_errors(), "{:#?}", e.findings);
    // 301 of 400 is 75 %: low
    e.compare_bandwidth(400.0, "--expect-busbw");
    let x = e.bandwidth.as_ref().unwrap().expected.clone().unwrap();
    assert_eq!((x.busbw, x.from.as_str()), (400.0, "--expect-busbw"));
    assert!((x.percent - 75.28).abs() < 0.01, "{}", x.percent);
    assert!(e.codes().contains(&Code::ExplainBandwidthLow));
    let j = e.to_json();
    assert_eq!(
        j["bandwidth"]["percent_of_expected"]
            .as_f64()
            .map(f64::round),
        Some(75.0)
    );
    // 301 of 350 is fine
    let mut e = explain_str("perf.log", table);
    e.compare_bandwidth(350.0, "--expect-busbw");
    assert!(!e.codes().contains(&Code::ExplainBandwidthLow));
    // no table: nothing to compare
    let mut e = explain_str("x", "h:1:1 [0] NCCL INFO Using network IB\n");
    e.compare_bandwidth(350.0, "--expect-busbw");
    assert!(e.bandwidth.is_none() && e.findings.is_empty());
}

#[test]
fn consequences_follow_their_causes() {
    // the plugin failed to load, then the network it provides was not found: cause first, whatever the lines
    let log = "\
h:5:5 [5] net.cc:579 NCCL WARN Error: network gIB not found.
h:7:7 [7] NCCL INFO NET/Plugin: Plugin load returned 2 : /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by /usr/local/nvidia/lib64/libnccl-net.so) : when loading libnccl-net.so
";
    let e = explain_str("x", log);
    let codes: Vec<Code> = e.codes();
    assert_eq!(
        codes,
        vec![Code::ExplainNetPluginError, Code::ExplainNetNotFound],
        "{:#?}",
        e.findings
    );
    assert_eq!(e.findings[1].caused_by, Some(Code::ExplainNetPluginError));
    assert_eq!(e.findings[0].caused_by, None);
    let j = e.to_json();
    assert_eq!(
        j["findings"][1]["caused_by"],
        "roce::explain::net_plugin_error"
    );
    assert_eq!(j["findings"][0]["caused_by"], serde_json::Value::Null);
}

/// Net plugins' own lines: HPC-X's nccl-rdma-sharp-plugins (`p2p_plugin.c`: `P2P plugin v8 IBext_v8`, `GPU
/// Direct RDMA (DMABUF) enabled for HCA`, the `UCX` network of its UCX layer) and aws-ofi-nccl's `AWS Libfabric`.
#[test]
fn net_plugin_lines() {
    let e = explain_str(
        "sharp.log",
        "h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v6 (v6)\n\
         h:1:1 [0] NCCL INFO P2P plugin v8 IBext_v8\n\
         h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'mlx5_0\n\
         h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.1<0>\n\
         h:1:1 [0] NCCL INFO Using network IBext_v8\n",
    );
    assert_eq!(e.devices[0].gdr, Some(true), "DMABUF is GPUDirect RDMA");
    assert_eq!(e.gpudirect_rdma, None, "no connection yet");
    assert_eq!(
        e.net_plugin.as_ref().map(|(n, _)| n.as_str()),
        Some("NCCL RDMA Plugin v6")
    );
    assert!(e.findings.is_empty(), "{:#?}", e.findings);
    let e = explain_str(
        "ucx-layer.log",
        "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n\
         h:1:1 [0] NCCL INFO Using network UCX\n\
         h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/UCX/0/GDRDMA\n",
    );
    assert_eq!(
        (e.transport, e.gpudirect_rdma),
        (Transport::Roce, Some(true))
    );
    // NCCL's per-NIC line for aws-ofi-nccl's `AWS Libfabric` network, on a platform without GPUDirect RDMA
    let e = explain_str(
        "g4dn.log",
        "h:1:1 [0] NCCL INFO NET/OFI Need to force simple protocol: GDR not supported\n\
         h:1:1 [0] NCCL INFO NET/AWS Libfabric : GPU Direct RDMA Disabled for HCA 0 'efa_0'\n\
         h:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
    );
    assert!(!e.ib_probed);
    assert_eq!(
        (e.transport, e.gpudirect_rdma),
        (Transport::Ofi, Some(false))
    );
    assert_eq!(e.codes(), vec![Code::ExplainGdrUnsupported]);
    assert!(!e.has_errors());
}

/// An aws-ofi-nccl plugin that failed to initialize (its own lines: `nccl_net_ofi_*_init`, src/nccl_ofi_net.cpp and
/// src/nccl_ofi_sendrecv.cpp), after which NCCL took its internal networks and ended on `NET/Socket`
/// (`src/plugin/net.cc`: plugins, then IB, then Socket), under a Ray worker's prefix: a socket fallback caused by
/// the plugin, not "unknown".
#[test]
fn an_ofi_failure_that_ends_on_sockets_is_a_socket_fallback() {
    let log = "\
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] nccl_net_ofi_sendrecv.c:1 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] nccl_net_ofi.c:1 NCCL WARN NET/OFI aws-ofi-nccl initialization failed
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] NCCL INFO NET/IB : No device found.
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.1.7<0>
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] NCCL INFO Using network Socket
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2313 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0
(RayTrainWorker pid=2313, ip=10.0.1.7) ip-10-0-1-7:2313:2400 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/Socket/0 [repeated 15x across cluster]
";
    let e = explain_str("ray.log", log);
    assert_eq!(e.transport, Transport::Socket);
    assert_eq!(e.gpudirect_rdma, Some(false));
    let codes = e.codes();
    assert!(
        codes.contains(&Code::ExplainSocketFallback)
            && codes.contains(&Code::ExplainNetPluginError),
        "{codes:?}"
    );
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainSocketFallback)
        .unwrap();
    assert_eq!(f.caused_by, Some(Code::ExplainNetPluginError));
    assert_eq!(
        e.network.as_deref(),
        Some("Socket"),
        "the dedup suffix is not part of the path"
    );
}

/// A profile's variable that the log's NCCL does not read yet is reported (NCCL ignores unknown names
/// silently): a real NCCL 2.22.3 log against coreweave/gb200-ib, whose `NCCL_NET_GDR_C2C` NCCL reads from
/// 2.26 on. The same profile against a real 2.28.9 log reports nothing of the kind, and a variable
/// every release reads (`NCCL_IB_HCA`) is never named.
#[test]
fn profile_variables_the_logs_nccl_does_not_read() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain-corpus");
    let unread = |path: &Path| {
        let mut e = explain_file(path, 4096);
        e.compare_profile(&profile("coreweave/gb200-ib"));
        e.findings
            .iter()
            .filter(|f| f.code == Code::ExplainProfileEnvUnread)
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
    };
    let old = unread(&corpus.join("gh-nccl-1373-kubevirt-roce-2-22.log"));
    assert_eq!(old.len(), 1, "{old:?}");
    assert!(old[0].contains("NCCL_NET_GDR_C2C=1"), "{old:?}");
    assert!(
        old[0].contains(
            "NCCL 2.22 does not read it (NCCL reads it from 2.26 on: NVIDIA/nccl 2.26.2-1"
        ),
        "{old:?}"
    );
    assert_eq!(
        explain_file(&fixtures().join("h200x2-baseline.log"), 4096)
            .nccl_version
            .as_deref(),
        Some("2.28.9")
    );
    let new = unread(&fixtures().join("h200x2-baseline.log"));
    assert!(new.is_empty(), "{new:?}");
}

#[test]
fn vllm_pynccl_errors_are_failures_but_other_nccl_error_text_is_not() {
    // vLLM's NCCL_CHECK (pynccl_wrapper.py) raises `RuntimeError(f"NCCL error: {error_str}")` with
    // ncclGetErrorString's text: a failed call
    let e = explain_str(
        "vllm.log",
        "ERROR 01-29 07:44:33 worker_base.py:467] RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n",
    );
    assert!(e.has_errors(), "{:#?}", e.findings);
    assert!(
        e.codes()
            .iter()
            .any(|c| c.as_str() == "roce::explain::nccl_error")
    );
    // the same words before other text are not NCCL's error string
    let e = explain_str(
        "hint.log",
        "INFO hint: grep the log for 'NCCL error: ' to find failures\n",
    );
    assert!(
        !e.codes()
            .iter()
            .any(|c| c.as_str() == "roce::explain::nccl_error"),
        "{:#?}",
        e.findings
    );
    // aws-ofi-nccl's test logger: read behind a launcher tag, not inside other text
    let e = explain_str(
        "ofi.log",
        "10.3.35.83: INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa\n",
    );
    assert_eq!(e.transport, Transport::Ofi);
    let e = explain_str(
        "doc.log",
        "see INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa\n",
    );
    assert_ne!(e.transport, Transport::Ofi);
}

/// Inputs the `sweep_results` fuzz target found (issue 32 item 4, 2026-12-07): a JSON log line whose skipped
/// (non-message) string ends right after `\u`, so skipping the escape's four hex digits moved past the end of
/// the line and sliced out of range. Each is read whole, as `explain` reads a file, and line by line.
#[test]
fn fuzz_found_json_lines_cut_after_a_unicode_escape() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/collector_json");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let mut x = Explainer::new();
        x.start_file("fuzz.log");
        x.read(bytes.as_slice()).unwrap();
        let _ = x.finish().to_json();
        n += 1;
    }
    assert_eq!(n, 6, "the six inputs of the first run");
    // the smallest, by hand: a JSON object whose first member's value is an object with a cut string
    let e = explain_str("cut.log", "{  \"mma\": {\"ono\\rono\\u \"");
    assert_eq!(e.transport, Transport::Unknown);
}
