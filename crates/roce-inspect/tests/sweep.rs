//! `roce sweep report` on simulated fleets (tests/support/fleet.rs): every injected bad node and link is
//! found with its cause, and no healthy node is called bad, over 20 seeds.

use roce_inspect::sweep::{self, Expectation, Verdict};
use roce_render::sweep::{Campaign, RESULTS_DIR};

use crate::support::fleet;

/// A built-in profile.
fn builtin(name: &str) -> roce_model::Profile {
    roce_model::load(
        roce_model::builtin::source(name).unwrap(),
        &roce_model::BuiltinsOnly,
    )
    .profile
    .unwrap()
}

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
    let profile = builtin(&c.profile);
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

/// A stand-in for perftest's `ib_write_bw`: the server (no host argument) waits to be killed; the client
/// prints perftest's `--report_gbits` table (its header and row as perftest prints them, with the CPU
/// frequency warning perftest interleaves), at 392 Gb/s, at 181 Gb/s on `$SLOW_DEV`, or fails to connect
/// on `$FAIL_DEV`.
const IB_WRITE_BW: &str = r#"#!/bin/bash
[ "${*: -1}" = localhost ] || exec sleep 30
dev=$2 rate=392.10
[ "$dev" = "${SLOW_DEV:-}" ] && rate=181.40
if [ "$dev" = "${FAIL_DEV:-}" ]; then echo " Couldn't connect to localhost:18515"; exit 1; fi
echo "---------------------------------------------------------------------------------------"
echo " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
echo "Conflicting CPU frequency values detected: 1500.000000 != 3300.016000. CPU Frequency is not max."
echo " 65536      1849271          0.00               $rate 		   0.184900"
echo "---------------------------------------------------------------------------------------"
"#;

/// The rail check as the campaign writes it (the Slurm checks job's `RAILS`; the MPIJob launcher runs
/// the same line), run for real by bash with a stand-in `ib_write_bw`, after a real nccl-tests table:
/// `report` reads every rail, and the node with a slow rail and a failed one is bad with `rail_missing`,
/// both rails named; nodes whose rails are all at the fleet's rate are ok. A profile whose provider is not
/// IB verbs (EFA) gets no rail check.
#[test]
fn rail_check_runs_and_report_reads_it() {
    use roce_render::sweep::{NodeList, Scheduler, SweepOptions};
    let profile = builtin("oci/h100-roce");
    let plan = roce_render::plan::lower(&profile);
    let opts = SweepOptions {
        scheduler: Scheduler::Slurm,
        ..SweepOptions::default()
    };
    let render = roce_render::RenderOptions::default();
    let c = Campaign::plan(&plan, &NodeList::parse("gpu[1-4]").unwrap(), &opts, &render).unwrap();
    let files = c.render(&plan, &opts, &render).unwrap();
    let checks = &files
        .iter()
        .find(|a| a.path == "checks.sbatch")
        .unwrap()
        .contents;
    let rails = checks
        .split_once("<<'ROCE_RAILS' || true\n")
        .and_then(|(_, rest)| rest.split_once("\nROCE_RAILS\n"))
        .map(|(script, _)| script.to_string())
        .expect("checks.sbatch has no rail check");
    assert!(
        rails.contains("mlx5_15:1") && rails.contains("-x 3"),
        "{rails}"
    );

    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("ib_write_bw");
    std::fs::write(&fake, IB_WRITE_BW).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let run = |env: &[(&str, &str)]| {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&rails)
            .env("PATH", &path)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (good, bad) = std::thread::scope(|s| {
        let good = s.spawn(|| run(&[]));
        let bad = s.spawn(|| run(&[("SLOW_DEV", "mlx5_3"), ("FAIL_DEV", "mlx5_9")]));
        (good.join().unwrap(), bad.join().unwrap())
    });
    assert_eq!(good.matches("roce-sweep: rail ").count(), 16, "{good}");
    // a real single-rank nccl-tests table first, as the check's step leaves it
    let table: String = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/explain-corpus/dev-nccl229-1rank-allreduce.log"),
    )
    .unwrap()
    .lines()
    .filter(|l| !l.starts_with("#| "))
    .map(|l| format!("{l}\n"))
    .collect();
    let expect = Expectation::of(&profile);
    let tests = sweep::read_all(&c, &expect, |p| match p {
        "nodes/gpu3.log" => Some(format!("{table}{bad}").into_bytes()),
        p if p.starts_with("nodes/") && p.ends_with(".log") => {
            Some(format!("{table}{good}").into_bytes())
        }
        _ => None,
    });
    assert_eq!(tests[0].rails.len(), 16);
    assert!(
        tests[0].rails.iter().all(|r| r.gbps == Some(392.1)),
        "{:?}",
        tests[0].rails
    );
    let r = sweep::judge(&c, tests, &expect);
    let text = r.to_text();
    let by_name = |n: &str| r.nodes.iter().find(|x| x.name.as_str() == n).unwrap();
    let gpu3 = by_name("gpu3");
    assert_eq!(
        (gpu3.verdict, gpu3.cause),
        (Verdict::Bad, Some(sweep::Cause::RailMissing)),
        "{text}"
    );
    let ev = gpu3.evidence.as_deref().unwrap();
    assert!(ev.starts_with("nodes/gpu3.log: rail check: "), "{ev}");
    assert!(
        ev.contains("mlx5_3:1 181.4 Gb/s, 46 % of the fleet's 392.1"),
        "{ev}"
    );
    assert!(ev.contains("mlx5_9:1 failed"), "{ev}");
    assert!(!ev.contains("mlx5_4:1"), "{ev}");
    for n in ["gpu1", "gpu2", "gpu4"] {
        assert_ne!(by_name(n).verdict, Verdict::Bad, "{n}: {text}");
    }

    let efa = builtin("aws/p5-efa");
    let plan = roce_render::plan::lower(&efa);
    let c = Campaign::plan(&plan, &NodeList::parse("gpu[1-4]").unwrap(), &opts, &render).unwrap();
    let files = c.render(&plan, &opts, &render).unwrap();
    assert!(files.iter().all(|a| !a.contents.contains("ib_write_bw")));
}
