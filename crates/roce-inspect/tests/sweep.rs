//! `roce sweep report` on simulated fleets (tests/support/fleet.rs): every injected bad node and link is
//! found with its cause, and no healthy node is called bad, over 20 seeds.

#[path = "support/fleet.rs"]
mod fleet;

use roce_inspect::sweep::{self, Expectation, Verdict};
use roce_render::sweep::{Campaign, RESULTS_DIR};

fn report(dir: &std::path::Path) -> sweep::Report {
    let c: Campaign =
        serde_json::from_str(&std::fs::read_to_string(dir.join("campaign.json")).unwrap()).unwrap();
    let (_, profile) = fleet::campaign(2, 3);
    let expect = Expectation::of(&profile);
    let results = dir.join(RESULTS_DIR);
    let tests = sweep::read_all(&c, &expect, |p| std::fs::read(results.join(p)).ok());
    sweep::judge(&c, tests, &expect)
}

fn check(nodes: usize, seed: u64) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let truth = fleet::simulate(dir.path(), nodes, seed);
    let r = report(dir.path());
    let mut problems = Vec::new();
    for n in &r.nodes {
        let want = truth.bad_nodes.get(n.name.as_str());
        match (n.verdict, want) {
            (Verdict::Bad, Some(cause)) if n.cause.map(|c| c.as_str()) == Some(cause) => {}
            (Verdict::Bad, Some(cause)) => problems.push(format!(
                "{}: bad with {:?}, injected {cause}",
                n.name, n.cause
            )),
            (Verdict::Bad, None) => problems.push(format!(
                "{}: healthy, called bad ({:?}; {:?})",
                n.name, n.cause, n.evidence
            )),
            (v, Some(cause)) => {
                problems.push(format!("{}: injected {cause}, verdict {v:?}", n.name))
            }
            _ => {}
        }
    }
    let found: std::collections::BTreeMap<(String, String), &str> = r
        .links
        .iter()
        .map(|l| {
            (
                (l.nodes[0].to_string(), l.nodes[1].to_string()),
                l.cause.as_str(),
            )
        })
        .collect();
    for (pair, cause) in &truth.bad_links {
        match found.get(pair) {
            Some(c) if c == cause => {}
            other => problems.push(format!("link {pair:?}: injected {cause}, found {other:?}")),
        }
    }
    for (pair, c) in &found {
        if !truth.bad_links.contains_key(pair) {
            problems.push(format!("link {pair:?}: reported {c}, not injected"));
        }
    }
    assert!(
        problems.is_empty(),
        "seed {seed}, {nodes} nodes: {} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    (
        truth.bad_nodes.len(),
        truth.bad_links.len(),
        r.counts.suspect as usize,
    )
}

#[test]
fn every_fault_found_over_twenty_seeds() {
    let mut suspects = 0;
    for seed in 0..20 {
        let (bad, links, s) = check(1024, seed);
        assert!(
            bad >= 20 && links >= 10,
            "seed {seed}: {bad} bad nodes, {links} links"
        );
        suspects += s;
    }
    eprintln!("20 seeds x 1024 nodes: {suspects} suspect node(s) in all");
}

#[test]
fn small_and_odd_fleets() {
    for (n, seed) in [(50, 1), (101, 2), (333, 3)] {
        check(n, seed);
    }
}

fn gpu_fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep/gpu")
}

/// The GPU machine's campaign judged with `load` giving its files.
fn gpu_report(load: impl Fn(&str) -> Option<Vec<u8>> + Sync) -> sweep::Report {
    let dir = gpu_fixture();
    let c: Campaign =
        serde_json::from_str(&std::fs::read_to_string(dir.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(c.profile, "coreweave/h100-ib");
    let profile = roce_model::load(
        roce_model::builtin::source(&c.profile).unwrap(),
        &roce_model::BuiltinsOnly,
    )
    .profile
    .unwrap();
    let expect = Expectation::of(&profile);
    let tests = sweep::read_all(&c, &expect, load);
    sweep::judge(&c, tests, &expect)
}

fn gpu_results(path: &str) -> Option<Vec<u8>> {
    std::fs::read(gpu_fixture().join(RESULTS_DIR).join(path)).ok()
}

/// Real nccl-tests pairs made on the one-GPU device machine (fixtures/sweep/gpu/make.sh: two ranks on
/// GPU 0 that NCCL takes for two hosts, so every pair runs over sockets; node03's pairs forced slow with
/// one socket thread, one socket and one channel). Socket fallback on every node is the fleet's problem,
/// not four bad nodes; against each other, node03 is the slow one, and the number says so.
#[test]
fn real_pairs_from_the_gpu_machine() {
    let r = gpu_report(gpu_results);
    let text = r.to_text();

    assert_eq!(r.fleet.verdict, "below_expectation", "{text}");
    assert_eq!(r.fleet.cause, Some(sweep::Cause::SocketFallback), "{text}");
    assert!(
        r.fleet
            .evidence
            .as_deref()
            .is_some_and(|e| e.contains("NET/IB : No device found")),
        "{text}"
    );
    // every pair printed a table (the checks were not run: one GPU is not a node's eight)
    assert_eq!(r.counts.missing, 4, "{text}");
    let busbw: Vec<f64> = r.tests.iter().filter_map(|t| t.busbw).collect();
    assert_eq!(busbw.len(), 6, "{text}");
    let by_name = |n: &str| r.nodes.iter().find(|x| x.name.as_str() == n).unwrap();
    let slow = by_name("node03");
    assert_eq!(slow.verdict, Verdict::Bad, "{text}");
    assert_eq!(slow.cause, Some(sweep::Cause::Slow), "{text}");
    assert_eq!((slow.bad_tests, slow.tests), (3, 3), "{text}");
    assert!(
        slow.evidence
            .as_deref()
            .is_some_and(|e| e.contains("% of the fleet's reference")),
        "{text}"
    );
    for n in ["node01", "node02", "node04"] {
        assert_eq!(by_name(n).verdict, Verdict::Ok, "{n}: {text}");
    }
    assert!(r.links.is_empty(), "{text}");
    assert_eq!(r.retest.drain.len(), 1, "{text}");
    // the forced-slow pairs measured about half of the others
    let pair = |a: &str, b: &str| {
        r.tests
            .iter()
            .find(|t| {
                t.nodes.iter().any(|n| n.as_str() == a) && t.nodes.iter().any(|n| n.as_str() == b)
            })
            .and_then(|t| t.busbw)
            .unwrap()
    };
    let ratio = pair("node01", "node03") / pair("node01", "node02");
    assert!((0.3..0.7).contains(&ratio), "{ratio}: {text}");
}

/// `roce doctor --format json` beside a node's check gives the node the cause it shows: node02's (the
/// GPU machine's own doctor output, with the finding it prints without nvidia_peermem) makes it bad for
/// GPUDirect RDMA though its pairs' numbers are fine; node01's, with nothing wrong, changes nothing; a
/// doctor output that is not JSON is no evidence.
#[test]
fn doctor_facts_name_a_nodes_cause() {
    let real = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/doctor/h200-host.json"),
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&real).unwrap();
    v["findings"] = serde_json::json!([{
        "code": "roce::doctor::peer_memory",
        "severity": "warning",
        "message": "neither nvidia_peermem nor nv_peer_mem is loaded: GPUDirect RDMA needs one unless NCCL uses DMA-BUF",
        "help": "load it on the node", "file": null, "line": null, "column": null
    }]);
    let no_peermem = serde_json::to_vec(&v).unwrap();
    v["findings"] = serde_json::json!([]);
    let clean = serde_json::to_vec(&v).unwrap();
    let r = gpu_report(|p| match p {
        "nodes/node01.doctor.json" => Some(clean.clone()),
        "nodes/node02.doctor.json" => Some(no_peermem.clone()),
        "nodes/node04.doctor.json" => Some(b"roce: command not found".to_vec()),
        _ => gpu_results(p),
    });
    let text = r.to_text();
    let by_name = |n: &str| r.nodes.iter().find(|x| x.name.as_str() == n).unwrap();
    let n2 = by_name("node02");
    assert_eq!(
        (n2.verdict, n2.cause),
        (Verdict::Bad, Some(sweep::Cause::GdrOff)),
        "{text}"
    );
    assert!(
        n2.evidence
            .as_deref()
            .is_some_and(|e| e.starts_with("nodes/node02.doctor.json: roce::doctor::peer_memory")),
        "{text}"
    );
    assert_eq!(by_name("node01").verdict, Verdict::Ok, "{text}");
    assert_eq!(by_name("node04").verdict, Verdict::Ok, "{text}");
    assert_eq!(by_name("node03").cause, Some(sweep::Cause::Slow), "{text}");
    assert_eq!(r.fleet.cause, Some(sweep::Cause::SocketFallback), "{text}");
}
