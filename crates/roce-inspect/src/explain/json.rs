//! The JSON form of an [`Explanation`](super::Explanation).

use serde_json::{Value, json};

use super::{Connections, Explanation, Finding};

pub(super) fn to_json(e: &Explanation) -> Value {
    json!({
        "transport": e.transport.as_str(),
        "network": e.network,
        "gpudirect_rdma": e.gpudirect_rdma,
        "nccl_version": e.nccl_version,
        "devices": e.devices.iter().map(|d| json!({
            "name": d.name,
            "port": d.port,
            "link_layer": d.link_layer,
            "gpudirect_rdma": d.gdr,
        })).collect::<Vec<_>>(),
        "socket_interfaces": e.socket_interfaces,
        "env": e.env,
        "hosts": e.hosts,
        "ranks": e.processes.iter().map(|p| json!({
            "host": p.host,
            "pid": p.pid,
            "rank": p.rank,
            "nranks": p.nranks,
            "cuda_dev": p.cuda_dev,
            "nccl_version": p.nccl_version,
            "network": p.network,
            "connections": connections(&p.connections),
            "lines": p.lines,
        })).collect::<Vec<_>>(),
        "connections": connections(&e.connections),
        "files": e.files.iter().map(|f| json!({
            "name": f.name,
            "lines": f.lines,
            "bytes": f.bytes,
            "nccl_lines": f.nccl_lines,
            "ucx_lines": f.ucx_lines,
        })).collect::<Vec<_>>(),
        "profile": e.profile.as_ref().map(|p| json!({
            "name": p.name,
            "checked": p.checked,
            "unverified": p.unverified,
        })),
        "findings": e.findings.iter().map(finding).collect::<Vec<_>>(),
    })
}

fn connections(c: &Connections) -> Value {
    json!({ "net": c.net, "net_gdr": c.net_gdr, "p2p": c.p2p, "shm": c.shm, "other": c.other })
}

fn finding(f: &Finding) -> Value {
    json!({
        "code": f.code.as_str(),
        "severity": f.severity.as_str(),
        "message": f.message,
        "help": f.help,
        "file": f.evidence.as_ref().map(|e| e.file.clone()),
        "line": f.evidence.as_ref().map(|e| e.line),
        "count": f.count,
        "hosts": f.hosts,
    })
}
