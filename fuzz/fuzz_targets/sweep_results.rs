//! A sweep campaign's results as `roce sweep report` reads them: one test's output (a pair's nccl-tests
//! log, a node's checks) and, when the input is a campaign file, the fleet judged from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roce_inspect::sweep::{Expectation, judge, read};
use roce_render::sweep::{Campaign, NodeName};

fuzz_target!(|data: &[u8]| {
    let nodes: Vec<NodeName> = ["gpu001", "gpu002"]
        .iter()
        .map(|n| NodeName::try_from(n.to_string()).unwrap())
        .collect();
    let expect = Expectation {
        busbw: Some(350.0),
        from: None,
        rails: Some(8),
    };
    let pair = read::read("round-1/gpu001-gpu002.log", &nodes, Some(data), Some(8));
    let check = read::read("checks/gpu001.log", &nodes[..1], Some(data), Some(8));
    if let Ok(campaign) = serde_json::from_slice::<Campaign>(data) {
        let _ = judge(&campaign, vec![pair, check], &expect);
    }
});
