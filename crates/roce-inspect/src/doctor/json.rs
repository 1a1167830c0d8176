//! The JSON form of a report.

use serde_json::{Value, json};

use super::facts::Limit;
use super::findings::Report;

impl Report {
    /// `{"devices":[{name, port, state, link_layer, netdev, suggested_gid_index}], "rdma_core_version",
    /// "ipc_lock", "memlock", "findings":[{code, severity, message, help}], …}`. `memlock` is
    /// `"unlimited"` or a number of bytes; unknown facts are `null`. Findings carry `file`/`line`/`column`
    /// once resolved against the profile's sources.
    pub fn to_json(&self) -> Value {
        let f = &self.facts;
        let devices: Vec<Value> = self
            .ports
            .iter()
            .map(|p| {
                json!({
                    "name": p.device,
                    "port": p.port,
                    "state": p.state,
                    "link_layer": p.link_layer,
                    "netdev": p.netdev,
                    "suggested_gid_index": p.suggested_gid_index,
                })
            })
            .collect();
        let findings: Vec<Value> = self
            .findings
            .iter()
            .map(|p| {
                let loc = p.location();
                json!({
                    "code": p.code.as_str(),
                    "severity": p.severity.as_str(),
                    "message": p.message,
                    "help": p.help,
                    "file": loc.map(|l| l.file.clone()),
                    "line": loc.map(|l| l.line),
                    "column": loc.map(|l| l.column),
                })
            })
            .collect();
        let lib = |o: &Option<super::facts::SharedObject>| o.as_ref().map(|s| s.path.clone());
        json!({
            "profile": self.profile,
            "pod": f.in_pod,
            "devices": devices,
            "netdevs": f.netdev_list(),
            "rdma_core_version": f.libibverbs.as_ref().and_then(|l| l.version.clone())
                .or_else(|| f.librdmacm.as_ref().and_then(|l| l.version.clone())),
            "libibverbs": lib(&f.libibverbs),
            "librdmacm": lib(&f.librdmacm),
            "kernel_modules": f.modules,
            "peer_memory": f.peer_memory.map(|p| p.as_str()),
            "gpus": f.gpus,
            "ipc_lock": f.ipc_lock(),
            "memlock": match f.memlock {
                Some(Limit::Unlimited) => json!("unlimited"),
                Some(Limit::Bytes(n)) => json!(n),
                None => Value::Null,
            },
            "gid_family": self.want.family.map(|x| x.as_str()),
            "gid_range": self.want.range.map(|r| r.to_string()),
            "env_source": f.env.source.as_str(),
            "findings": findings,
        })
    }
}
