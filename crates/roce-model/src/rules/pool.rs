//! Node-pool and capability rules: the RDMA scheduling resource and `IPC_LOCK`.

use crate::fabric::attach::IPC_LOCK;
use crate::model::Profile;
use crate::problem::{Code, Problem};

/// Check the node pool and capabilities.
pub(crate) fn check(p: &Profile, out: &mut Vec<Problem>) {
    if !p.direct_pods() {
        return;
    }
    // DRA NICs arrive through their claim, not a device-plugin resource.
    // Nor do NICs a cloud attaches through pod annotations (GKE multi-networking), nor the host's own
    // (a host-network pod gets the node's devices through a privileged container).
    if p.node_pool.rdma_resource.is_none()
        && p.nics.value.dra().is_none()
        && !p.nics.value.host_network()
        && !p.nccl_net.attaches_nics()
    {
        out.push(
            Problem::new(
                Code::RdmaResource,
                "pods on this pool get no RDMA scheduling resource",
            )
            .at(p.node_pool.name.origin, "no `rdma-resource`")
            .help("add `rdma-resource \"rdma/ib\"` to the node pool: it is 1 in requests and limits and lands the pod on an RDMA node (or set `sunk-nodeset #true` if a SUNK NodeSet attaches it)"),
        );
    }
    // Memory registration (`ibv_reg_mr`) is capped by RLIMIT_MEMLOCK on InfiniBand and RoCE alike; lint
    // and doctor ask for IPC_LOCK on both, and so does this rule.
    let has_ipc_lock = p.capabilities.iter().any(|c| c.value == IPC_LOCK);
    if !has_ipc_lock {
        let fabric = p.fabric_name();
        let problem = Problem::new(
            Code::IpcLock,
            format!("direct {fabric} pods need the IPC_LOCK capability"),
        );
        // Point at the capabilities the profile does list, where IPC_LOCK belongs; else at the fabric.
        let problem = match p.capabilities.first() {
            Some(first) => problem
                .at(first.origin, "no IPC_LOCK in the capabilities")
                .at(p.fabric.kind.origin, format!("{fabric} fabric")),
            None => problem.at(
                p.fabric.kind.origin,
                format!("{fabric} fabric, no capabilities"),
            ),
        };
        out.push(problem.help(
            "add `IPC_LOCK` to `capabilities`: without it memory registration is capped by RLIMIT_MEMLOCK and fails with `ibv_reg_mr ... Cannot allocate memory`",
        ));
    }
}
