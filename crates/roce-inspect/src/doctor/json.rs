//! The JSON form of a report: derived from the view types below, whose field order is the output's.

use roce_model::problem::ProblemRecord;
use serde::Serialize;
use serde_json::Value;

use super::facts::{Limit, SharedObject};
use super::findings::{PortReport, Report};
use super::needs::Seen;
use roce_model::fabric::env::Consequence;
use roce_render::edits::Need;

#[derive(Serialize)]
struct Json<'a> {
    profile: &'a Option<String>,
    pod: bool,
    devices: Vec<Device<'a>>,
    netdevs: Option<Vec<String>>,
    rdma_core_version: Option<&'a str>,
    libibverbs: Option<&'a str>,
    librdmacm: Option<&'a str>,
    kernel_modules: &'a Option<Vec<String>>,
    peer_memory: Option<&'static str>,
    gpus: Option<u32>,
    rdma_device_nodes: &'a Option<Vec<String>>,
    imex_channels: &'a Option<Vec<String>>,
    ipc_lock: Option<bool>,
    memlock: Option<Memlock>,
    gid_family: Option<&'static str>,
    gid_range: Option<String>,
    env_source: &'static str,
    /// Only with a profile.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    requirements: Vec<Requirement<'a>>,
    findings: Vec<ProblemRecord>,
}

/// `{"need", "consequence", "seen": "met" | "unmet" | "unknown", "why" (unknown), "findings": [code]}`.
#[derive(Serialize)]
struct Requirement<'a> {
    need: Need,
    consequence: Consequence,
    #[serde(flatten)]
    seen: &'a Seen,
    findings: Vec<&'static str>,
}

#[derive(Serialize)]
struct Device<'a> {
    name: &'a str,
    port: u32,
    state: &'a Option<String>,
    link_layer: &'a Option<String>,
    netdev: &'a Option<String>,
    suggested_gid_index: Option<u32>,
}

/// `"unlimited"` or a number of bytes.
#[derive(Serialize)]
#[serde(untagged)]
enum Memlock {
    Unlimited(&'static str),
    Bytes(u64),
}

impl<'a> From<&'a PortReport> for Device<'a> {
    fn from(p: &'a PortReport) -> Self {
        Device {
            name: &p.device,
            port: p.port,
            state: &p.state,
            link_layer: &p.link_layer,
            netdev: &p.netdev,
            suggested_gid_index: p.suggested_gid_index,
        }
    }
}

impl Report {
    /// `{"devices":[{name, port, state, link_layer, netdev, suggested_gid_index}], "rdma_core_version",
    /// "rdma_device_nodes", "imex_channels", "ipc_lock", "memlock", "requirements":[{need, consequence,
    /// seen, why, findings}], "findings":[{code, severity, message, help}], …}`. `memlock` is `"unlimited"` or a number of bytes; `rdma_device_nodes` and `imex_channels`
    /// list `/dev/infiniband` and `/dev/nvidia-caps-imex-channels` (`[]` when absent); unknown facts are
    /// `null`. Findings carry `file`/`line`/`column` once resolved against the profile's sources.
    pub fn to_json(&self) -> Value {
        let f = &self.facts;
        let json = Json {
            profile: &self.profile,
            pod: f.in_pod,
            devices: self.ports.iter().map(Device::from).collect(),
            netdevs: f.netdev_list(),
            rdma_core_version: version(&f.libibverbs).or_else(|| version(&f.librdmacm)),
            libibverbs: path(&f.libibverbs),
            librdmacm: path(&f.librdmacm),
            kernel_modules: &f.modules,
            peer_memory: f.peer_memory.map(|p| p.as_str()),
            gpus: f.gpus,
            rdma_device_nodes: &f.device_nodes,
            imex_channels: &f.imex_channels,
            ipc_lock: f.ipc_lock(),
            memlock: f.memlock.map(|l| match l {
                Limit::Unlimited => Memlock::Unlimited("unlimited"),
                Limit::Bytes(n) => Memlock::Bytes(n),
            }),
            gid_family: self.want.family.map(|x| x.as_str()),
            gid_range: self.want.range.map(|r| r.to_string()),
            env_source: f.env.source.as_str(),
            requirements: self
                .requirements
                .iter()
                .map(|r| Requirement {
                    need: r.need,
                    consequence: r.consequence,
                    seen: &r.seen,
                    findings: r.findings.iter().map(|c| c.as_str()).collect(),
                })
                .collect(),
            findings: self.findings.iter().map(ProblemRecord::from).collect(),
        };
        // Derived structs with string keys always serialise.
        serde_json::to_value(json).expect("doctor report serialises")
    }
}

fn path(o: &Option<SharedObject>) -> Option<&str> {
    o.as_ref().map(|s| s.path.as_str())
}

fn version(o: &Option<SharedObject>) -> Option<&str> {
    o.as_ref().and_then(|l| l.version.as_deref())
}
