//! Write a simulated fleet's campaign and results for `roce sweep report` (tests/support/fleet.rs says
//! what is injected): `cargo run --release -p roce-inspect --example simulate-fleet -- DIR NODES [PARTNERS
//! [SEED]]`.
//! Prints the injected faults as JSON on stdout.

#[path = "../tests/support/fleet.rs"]
mod fleet;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(nodes)) = (args.next(), args.next()) else {
        eprintln!("usage: simulate-fleet DIR NODES [PARTNERS [SEED]]");
        std::process::exit(2);
    };
    let nodes: usize = nodes.parse().expect("NODES is a number");
    let partners: u32 = args
        .next()
        .map_or(3, |s| s.parse().expect("PARTNERS is a number"));
    let seed: u64 = args
        .next()
        .map_or(1, |s| s.parse().expect("SEED is a number"));
    let truth = fleet::simulate_with(std::path::Path::new(&dir), nodes, partners, seed);
    let bad: Vec<_> = truth
        .bad_nodes
        .iter()
        .map(|(n, c)| serde_json::json!({"node": n, "cause": c}))
        .collect();
    let links: Vec<_> = truth
        .bad_links
        .iter()
        .map(|((a, b), c)| serde_json::json!({"nodes": [a, b], "cause": c}))
        .collect();
    println!(
        "{}",
        serde_json::json!({"nodes": nodes, "partners": partners, "seed": seed, "files": truth.files, "bytes": truth.bytes, "bad_nodes": bad, "bad_links": links})
    );
}
