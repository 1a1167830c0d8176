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
