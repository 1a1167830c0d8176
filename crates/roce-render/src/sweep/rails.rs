//! The per-rail check of a node: the image's `ib_write_bw` (perftest) on each rail device, server and
//! client on the node itself. That goes through the NIC's loopback, so it measures the device, its port
//! and its PCIe link (a card trained down to x8 shows about half its rate), not the cable or the switch,
//! which the pairs test. Where the image has no `ib_write_bw` the check says so and passes.
//!
//! Output: per rail a `roce-sweep: rail DEV:PORT` line, then perftest's table (`#bytes #iterations BW
//! peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]`, `--report_gbits`), or `roce-sweep: rail DEV:PORT failed`.

use super::MARKER;
use crate::plan::Plan;
use roce_model::fabric::provider::Provider;

/// The bash script of the rail check, `None` where it does not apply: a provider that is not IB verbs
/// underneath (aws-ofi-nccl's EFA has no RC queue pairs for perftest; another plugin is unknown) or a
/// profile without rail devices.
pub(crate) fn script(plan: &Plan) -> Option<String> {
    if !matches!(plan.provider, Provider::IbVerbs | Provider::Gib) || plan.rail_ports.is_empty() {
        return None;
    }
    let rails: Vec<String> = plan
        .rail_ports
        .iter()
        .map(|(dev, port)| format!("{dev}:{port}"))
        .collect();
    // the profile's RoCE GID index, where it fixes one; else perftest's own choice
    let gid = plan
        .env_value(roce_model::fabric::env::NCCL_IB_GID_INDEX.name)
        .map(|g| format!(" -x {g}"))
        .unwrap_or_default();
    let args = format!("-d \"$d\" -i \"$p\"{gid} -F --report_gbits -D 2 -q 4");
    // one line: it travels as one `bash -c` argument (an MPIJob launcher's args, an srun step)
    Some(format!(
        "if ! command -v ib_write_bw >/dev/null 2>&1; then \
         echo \"{MARKER} rails skipped (no ib_write_bw in the image)\"; exit 0; fi; \
         for r in {rails}; do d=${{r%:*}} p=${{r#*:}}; echo \"{MARKER} rail $r\"; \
         ib_write_bw {args} >/dev/null 2>&1 & s=$!; sleep 1; \
         timeout 30 ib_write_bw {args} localhost 2>&1 || echo \"{MARKER} rail $r failed\"; \
         kill \"$s\" 2>/dev/null; wait \"$s\" 2>/dev/null || true; done",
        rails = rails.join(" "),
    ))
}
