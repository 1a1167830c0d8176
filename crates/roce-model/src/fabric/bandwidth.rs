//! What bus bandwidth a node's NICs allow an nccl-tests collective: the fabric's line rate.
//!
//! nccl-tests reports a *bus bandwidth* per collective: the algorithm bandwidth times a factor (`2(n-1)/n` for
//! all_reduce, `(n-1)/n` for all_gather, reduce_scatter and alltoall, `1` for broadcast and reduce) chosen so
//! that it "should reflect the speed of the hardware bottleneck: NVLink, PCI, QPI, or network", independently
//! of the number of ranks (NVIDIA/nccl-tests `doc/PERFORMANCE.md`). Across nodes the bottleneck is the network,
//! and how much of it one rank's bus bandwidth can show depends on how the collective moves data:
//!
//! - **all_reduce, all_gather, reduce_scatter, broadcast, reduce** run as rings (or trees) through every
//!   node; each node sends and receives its share over all its rails at once, so the bus bandwidth tends to
//!   the node's aggregate NIC bandwidth `B = rails × link rate / 8` (GB/s). NVLink SHARP, IB SHARP and a
//!   multi-node NVLink domain can exceed it; nothing over the network gets more than ~95 % of it.
//! - **alltoall** sends `(n-G)/n` of every rank's buffer off-node (`G` GPUs per node, `n = G × N` ranks), so
//!   its bus bandwidth tends to `B × (n-1) / (G × (n-G))`: `B / G` on many nodes, about twice that on two.
//! - **sendrecv** pairs each rank with the next; only one GPU per node crosses the network, on its own
//!   rails: `B / G`.
//!
//! Other tools (gather, scatter, hypercube, alltoallv) have no such closed form here, so no line rate is
//! derived for them.

use serde::Serialize;

/// An nccl-tests collective, as far as the line rate is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// `all_reduce_perf`.
    AllReduce,
    /// `all_gather_perf`.
    AllGather,
    /// `reduce_scatter_perf`.
    ReduceScatter,
    /// `broadcast_perf`.
    Broadcast,
    /// `reduce_perf`.
    Reduce,
    /// `alltoall_perf`.
    #[serde(rename = "alltoall")]
    AllToAll,
    /// `sendrecv_perf`.
    #[serde(rename = "sendrecv")]
    SendRecv,
    /// Any other tool (`gather_perf`, `scatter_perf`, `hypercube_perf`, `alltoallv_perf`, …).
    Other,
}

impl Collective {
    /// The collective of an nccl-tests binary, by the name `# Collective test starting:` prints
    /// (`all_reduce_perf`, `all_reduce_perf_mpi`, a path to it).
    ///
    /// ```
    /// use roce_model::fabric::bandwidth::Collective;
    /// assert_eq!(Collective::from_tool("/opt/nccl-tests/build/all_reduce_perf_mpi"), Collective::AllReduce);
    /// assert_eq!(Collective::from_tool("alltoall_perf"), Collective::AllToAll);
    /// assert_eq!(Collective::from_tool("alltoallv_perf"), Collective::Other);
    /// ```
    pub fn from_tool(tool: &str) -> Collective {
        let base = tool.rsplit('/').next().unwrap_or(tool);
        let name = base
            .strip_suffix("_mpi")
            .unwrap_or(base)
            .strip_suffix("_perf")
            .unwrap_or("");
        match name {
            "all_reduce" => Collective::AllReduce,
            "all_gather" => Collective::AllGather,
            "reduce_scatter" => Collective::ReduceScatter,
            "broadcast" => Collective::Broadcast,
            "reduce" => Collective::Reduce,
            "alltoall" => Collective::AllToAll,
            "sendrecv" => Collective::SendRecv,
            _ => Collective::Other,
        }
    }

    /// The nccl-tests name (`all_reduce`), or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::AllToAll => "alltoall",
            Collective::SendRecv => "sendrecv",
            Collective::Other => "other",
        }
    }
}

/// A node's NICs: how many rails, and each rail's link rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineRate {
    /// Rails (RDMA ports NCCL uses) per node.
    pub rails: u32,
    /// Link rate of one rail, Gb/s (as `ibv_devinfo` and sysfs `ports/N/rate` give it: 400 for NDR).
    pub gbps: f64,
}

impl LineRate {
    /// The node's aggregate NIC bandwidth, GB/s.
    pub fn node_gbytes(self) -> f64 {
        f64::from(self.rails) * self.gbps / 8.0
    }

    /// The bus bandwidth (GB/s) this line rate allows `collective` when its ranks span nodes of
    /// `gpus_per_node` GPUs; `nodes` sharpens alltoall's figure when known. `None` for collectives without a
    /// closed form (see the module docs).
    ///
    /// ```
    /// use roce_model::fabric::bandwidth::{Collective, LineRate};
    /// let h100 = LineRate { rails: 8, gbps: 400.0 };
    /// assert_eq!(h100.busbw(Collective::AllReduce, 8, None), Some(400.0));
    /// assert_eq!(h100.busbw(Collective::AllToAll, 8, None), Some(50.0));
    /// // two nodes: 16 ranks, 8 of them off-node for each rank
    /// assert_eq!(h100.busbw(Collective::AllToAll, 8, Some(2)), Some(400.0 * 15.0 / 64.0));
    /// assert_eq!(h100.busbw(Collective::Other, 8, None), None);
    /// ```
    pub fn busbw(
        self,
        collective: Collective,
        gpus_per_node: u32,
        nodes: Option<u32>,
    ) -> Option<f64> {
        let node = self.node_gbytes();
        let g = f64::from(gpus_per_node.max(1));
        match collective {
            Collective::AllReduce
            | Collective::AllGather
            | Collective::ReduceScatter
            | Collective::Broadcast
            | Collective::Reduce => Some(node),
            Collective::AllToAll => Some(match nodes {
                Some(n) if n >= 2 => {
                    let ranks = g * f64::from(n);
                    node * (ranks - 1.0) / (g * (ranks - g))
                }
                _ => node / g,
            }),
            Collective::SendRecv => Some(node / g),
            Collective::Other => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_collectives_tend_to_the_node_rate() {
        // CoreWeave GB300 RoCE: 16 planes of 200 Gb/s for 4 GPUs = 400 GB/s a node
        let gb300 = LineRate {
            rails: 16,
            gbps: 200.0,
        };
        for c in [
            Collective::AllReduce,
            Collective::AllGather,
            Collective::ReduceScatter,
            Collective::Broadcast,
            Collective::Reduce,
        ] {
            assert_eq!(gb300.busbw(c, 4, Some(18)), Some(400.0), "{c:?}");
        }
    }

    #[test]
    fn alltoall_falls_towards_one_gpus_share() {
        let r = LineRate {
            rails: 8,
            gbps: 400.0,
        };
        let two = r.busbw(Collective::AllToAll, 8, Some(2)).unwrap();
        let many = r.busbw(Collective::AllToAll, 8, Some(64)).unwrap();
        let unknown = r.busbw(Collective::AllToAll, 8, None).unwrap();
        assert!(two > many && many > unknown, "{two} {many} {unknown}");
        assert_eq!(unknown, 50.0);
        // one node: no network share to speak of; the unknown-nodes figure is used
        assert_eq!(r.busbw(Collective::AllToAll, 8, Some(1)), Some(50.0));
    }

    #[test]
    fn tools_by_name() {
        assert_eq!(Collective::from_tool("reduce_perf"), Collective::Reduce);
        assert_eq!(
            Collective::from_tool("reduce_scatter_perf_mpi"),
            Collective::ReduceScatter
        );
        assert_eq!(Collective::from_tool("sendrecv_perf"), Collective::SendRecv);
        assert_eq!(Collective::from_tool("gather_perf"), Collective::Other);
        assert_eq!(Collective::from_tool("python"), Collective::Other);
    }
}
