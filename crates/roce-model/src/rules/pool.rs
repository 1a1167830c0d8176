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
        let mut problem = Problem::new(
            Code::IpcLock,
            "direct RoCE pods need the IPC_LOCK capability",
        )
        .at(p.fabric.kind.origin, "RoCE fabric");
        if let Some(first) = p.capabilities.first() {
            problem = problem.at(first.origin, "capabilities without IPC_LOCK");
        }
        out.push(problem.help(
            "add `capabilities \"IPC_LOCK\"`: without it memory registration is capped by RLIMIT_MEMLOCK and fails with `ibv_reg_mr ... Cannot allocate memory`",
        ));
    }
}
