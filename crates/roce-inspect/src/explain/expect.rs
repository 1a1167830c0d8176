//! What an nccl-tests result is compared with: the user's number, the profile's, or a line rate
//! ([`roce_model::fabric::bandwidth`]) — the profile's rails, else the RDMA ports NCCL logged with their speed.

use roce_model::Profile;
use roce_model::fabric::bandwidth::LineRate;

use super::Explanation;

/// The expected bus bandwidth (GB/s) and where it comes from; `Err(Some(why))` when one was asked for (a
/// profile was given, or the log has port speeds) but none applies, `Err(None)` when nothing asked.
pub(super) fn expectation(
    e: &Explanation,
    given: Option<f64>,
    profile: Option<&Profile>,
) -> Result<(f64, String), Option<String>> {
    if let Some(gbps) = given {
        return Ok((gbps, "--expect-busbw".to_string()));
    }
    if let Some(n) = profile.and_then(|p| p.job.expected_busbw.as_ref()) {
        return Ok((
            f64::from(n.value),
            "the profile's job expected-busbw".to_string(),
        ));
    }
    let (rate, whose) = match profile.and_then(Profile::line_rate) {
        Some(r) => (r, "the profile's rails"),
        None => match logged(e) {
            Some(r) => (r, "the RDMA ports NCCL logged"),
            None if profile.is_some() => {
                return Err(Some(
                    "the profile states neither `job expected-busbw=N` (GB/s) nor `rails link-rate=N` (Gb/s), and the log no port speed (NCCL 2.27+ logs it under NCCL_DEBUG_SUBSYS=NET), so pass --expect-busbw for a comparison".to_string(),
                ));
            }
            None => return Err(None),
        },
    };
    let Some(b) = &e.bandwidth else {
        return Err(None);
    };
    if b.ranks == 1 {
        return Err(Some(
            "the table is one rank's: nothing crosses a link, and nccl-tests' bus bandwidth is 0 by definition (its factor is 2(n-1)/n for all_reduce)".to_string(),
        ));
    }
    // NCCL's own count, else the hosts nccl-tests' header lists
    let nodes = e.nodes.or((b.hosts > 0).then_some(b.hosts));
    if nodes == Some(1) {
        return Err(Some(format!(
            "the ranks ran on one node, where the bus bandwidth is NVLink's or PCIe's, not the line rate of {whose} ({})",
            describe(rate)
        )));
    }
    let Some(collective) = b.collective() else {
        return Err(Some(format!(
            "the log does not say which collective the table measured (nccl-tests 2.16.7+ prints `# Collective test starting:`; all_gather and alltoall tables look alike), so the line rate of {whose} ({}) cannot be applied: pass --expect-busbw",
            describe(rate)
        )));
    };
    let gpus = profile
        .map(|p| p.node_pool.gpus_per_node.value)
        .or(e.local_ranks);
    let needs_gpus = rate.busbw(collective, 1, nodes) != rate.busbw(collective, 2, nodes);
    let Some(gbps) = (match gpus {
        Some(g) => rate.busbw(collective, g, nodes),
        None if !needs_gpus => rate.busbw(collective, 1, nodes),
        None => {
            return Err(Some(format!(
                "{} shares a node's line rate among its GPUs, and neither a profile nor the log (`localRanks`) says how many a node has: pass --expect-busbw",
                collective.as_str()
            )));
        }
    }) else {
        return Err(Some(format!(
            "roce has no line-rate model for {} (only all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall and sendrecv): pass --expect-busbw",
            b.tool.as_deref().unwrap_or("this collective")
        )));
    };
    Ok((
        gbps,
        format!(
            "line rate of {whose}: {} for {}",
            describe(rate),
            collective.as_str()
        ),
    ))
}

/// The RDMA ports NCCL used, with the speed it logged for each: only when every port has one.
fn logged(e: &Explanation) -> Option<LineRate> {
    if e.devices.is_empty() {
        return None;
    }
    let mut mbps = 0u64;
    for d in &e.devices {
        mbps += u64::from(d.speed_mbps?);
    }
    let rails = u32::try_from(e.devices.len()).ok()?;
    Some(LineRate {
        rails,
        gbps: mbps as f64 / 1000.0 / f64::from(rails),
    })
}

fn describe(r: LineRate) -> String {
    format!(
        "{} × {} Gb/s = {} GB/s a node",
        r.rails,
        r.gbps,
        r.node_gbytes()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::explain_str;
    use roce_model::{BuiltinsOnly, load};

    const TABLE: &str = "  8589934592    2147483648     float     sum      -1  48000.0  178.96  335.54      0  48000.0  178.96  335.54      0\n";

    fn profile(src: &str) -> Profile {
        load(roce_model::Source::new("t.kdl", src), &BuiltinsOnly)
            .profile
            .expect("profile loads")
    }

    fn with_rate(base: &str, rate: u32) -> Profile {
        profile(&format!(
            "profile \"t/x\" extends=\"{base}\" {{\n    rails link-rate={rate}\n}}\n"
        ))
    }

    #[test]
    fn precedence_given_then_job_then_rails() {
        let p = profile(
            "profile \"t/x\" extends=\"coreweave/h100-ib\" {\n    job expected-busbw=300\n    rails link-rate=400\n}\n",
        );
        let log = format!("# Collective test starting: all_reduce_perf\n{TABLE}");
        let e = explain_str("t", &log);
        assert_eq!(expectation(&e, Some(111.0), Some(&p)).unwrap().0, 111.0);
        assert_eq!(expectation(&e, None, Some(&p)).unwrap().0, 300.0);
        let p = with_rate("coreweave/h100-ib", 400);
        let (gbps, from) = expectation(&e, None, Some(&p)).unwrap();
        assert_eq!(gbps, 400.0);
        assert!(from.contains("8 × 400 Gb/s"), "{from}");
    }

    #[test]
    fn alltoall_uses_one_gpus_share() {
        let p = with_rate("coreweave/h100-ib", 400);
        let e = explain_str(
            "t",
            &format!("# Collective test starting: alltoall_perf\n{TABLE}"),
        );
        assert_eq!(expectation(&e, None, Some(&p)).unwrap().0, 50.0);
    }

    #[test]
    fn no_line_rate_on_one_node_or_for_an_unnamed_table() {
        let p = with_rate("coreweave/h100-ib", 400);
        let one = explain_str(
            "t",
            &format!(
                "# Collective test starting: all_reduce_perf\nh:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n{TABLE}"
            ),
        );
        let why = expectation(&one, None, Some(&p)).unwrap_err().unwrap();
        assert!(why.contains("one node"), "{why}");
        // all_gather's redop is `none`: without the tool's name it could be alltoall
        let gather = explain_str(
            "t",
            "  8589934592    2147483648     float    none      -1  48000.0  178.96  335.54      0  48000.0  178.96  335.54      0\n",
        );
        let why = expectation(&gather, None, Some(&p)).unwrap_err().unwrap();
        assert!(why.contains("which collective"), "{why}");
        // a reduction table without the tool's name is fine: all reductions share the ring figure
        let sum = explain_str("t", TABLE);
        assert_eq!(expectation(&sum, None, Some(&p)).unwrap().0, 400.0);
    }

    #[test]
    fn nodes_and_ranks_from_the_nccl_tests_header() {
        let p = with_rate("coreweave/h100-ib", 400);
        let header = |hosts: &[&str]| {
            let mut s = String::from("# Collective test starting: all_reduce_perf\n");
            for (i, h) in hosts.iter().enumerate() {
                s += &format!(
                    "#  Rank {i:2} Group  0 Pid {:6} on {h:>10} device  0 [0000:18:00] NVIDIA H100\n",
                    100 + i
                );
            }
            s + TABLE
        };
        let one = explain_str("t", &header(&["a"]));
        let why = expectation(&one, None, Some(&p)).unwrap_err().unwrap();
        assert!(why.contains("one rank"), "{why}");
        let same_host = explain_str("t", &header(&["a", "a"]));
        let why = expectation(&same_host, None, Some(&p))
            .unwrap_err()
            .unwrap();
        assert!(why.contains("one node"), "{why}");
        let two = explain_str("t", &header(&["a", "b"]));
        assert_eq!(expectation(&two, None, Some(&p)).unwrap().0, 400.0);
        let b = two.bandwidth.unwrap();
        assert_eq!((b.ranks, b.hosts), (2, 2));
    }

    #[test]
    fn from_the_port_speeds_nccl_logged() {
        let log = format!(
            "h:1:1 [0] NCCL INFO NET/IB: [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5 speed=400000 context=0x1 pciPath=/x ar=0\n\
             h:1:1 [0] NCCL INFO NET/IB: [1] mlx5_1:uverbs1:1/RoCE provider=Mlx5 speed=400000 context=0x2 pciPath=/y ar=0\n\
             h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n\
             # Collective test starting: all_reduce_perf\n{TABLE}"
        );
        let e = explain_str("t", &log);
        assert_eq!(e.devices[0].speed_mbps, Some(400_000));
        let (gbps, from) = expectation(&e, None, None).unwrap();
        assert_eq!(gbps, 100.0);
        assert!(from.contains("NCCL logged"), "{from}");
        // without speeds and without a profile nothing was asked for
        assert_eq!(expectation(&explain_str("t", TABLE), None, None), Err(None));
    }
}
