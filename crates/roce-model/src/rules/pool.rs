//! Node-pool and capability rules: the RDMA scheduling resource and `IPC_LOCK`.

use crate::model::{FabricKind, Profile};
use crate::problem::{Code, Problem};

/// Check the node pool and capabilities.
pub fn check(p: &Profile, out: &mut Vec<Problem>) {
    if !p.direct_pods() {
        return;
    }
    if p.node_pool.rdma_resource.is_none() {
        out.push(
            Problem::new(
                Code::RdmaResource,
                "pods on this pool get no RDMA scheduling resource",
            )
            .at(p.node_pool.name.origin, "no `rdma-resource`")
            .help("add `rdma-resource \"rdma/ib\"` to the node pool: it is 1 in requests and limits and lands the pod on an RDMA node (or set `sunk-nodeset #true` if a SUNK NodeSet attaches it)"),
        );
    }
    let has_ipc_lock = p.capabilities.iter().any(|c| c.value == "IPC_LOCK");
    if p.fabric.kind.value == FabricKind::Roce && !has_ipc_lock {
        let problem = Problem::new(
            Code::IpcLock,
            "direct RoCE pods need the IPC_LOCK capability",
        );
        // Point at the capabilities the profile does list, where IPC_LOCK belongs; else at the fabric.
        let problem = match p.capabilities.first() {
            Some(first) => problem
                .at(first.origin, "no IPC_LOCK in the capabilities")
                .at(p.fabric.kind.origin, "RoCE fabric"),
            None => problem.at(p.fabric.kind.origin, "RoCE fabric, no capabilities"),
        };
        out.push(problem.help(
            "add `IPC_LOCK` to `capabilities`: without it memory registration is capped by RLIMIT_MEMLOCK and fails with `ibv_reg_mr ... Cannot allocate memory`",
        ));
    }
}
