//! `roce doctor`: probe a live pod or node and say what will and won't work.
//!
//! Reads, never writes: RDMA devices, ports and GID tables under `/sys/class/infiniband`, the netdevs of
//! this network namespace (`/sys/class/net`), kernel modules and the peer-memory paths, the rdma-core
//! release (from the file `libibverbs.so.1` resolves to), `CapEff` and the memlock limit of this
//! process, the GPUs visible, the RDMA device nodes (`/dev/infiniband`), the IMEX channels
//! (`/dev/nvidia-caps-imex-channels`), the NCCL net-plugin libraries (`libnccl-net*`) on the loader's path,
//! the DRA device metadata files mounted into the container ([`dra_metadata`]) and the environment. Every path goes through a [`Root`], so a test (or a
//! copy of a host's files) can stand in for `/`. The facts are then compared with a profile's
//! [`Plan`](roce_render::Plan) and the environment (`findings`).
//!
//! ```
//! use roce_inspect::doctor::{self, Env, Root};
//! let dir = std::env::temp_dir().join("roce-doctor-doc-vm");
//! std::fs::create_dir_all(&dir).unwrap();
//! // A plain VM: nothing at all under the root.
//! let report = doctor::probe(&Root::new(&dir), Some(Env::from_pairs([("HOME", "/root")])), None);
//! assert!(report.facts.devices.is_empty());
//! assert_eq!(report.findings[0].code.as_str(), "roce::doctor::no_rdma_devices");
//! assert_eq!(report.to_json()["rdma_core_version"], serde_json::Value::Null);
//! ```

mod device;
pub mod dra_metadata;
mod env;
pub mod facts;
mod findings;
pub(crate) mod gid;
pub(crate) mod gid_index;
mod json;
mod needs;
mod root;

pub use env::{Env, EnvSource};
pub use facts::HostFacts;
pub use findings::{PortReport, Report};
pub use gid::{Cidr, Family, GidClass, RoceVersion, Want};
pub use needs::{HostRequirement, Seen};
pub use root::Root;

use roce_model::Profile;

/// Read the host under `root` and compare it with `profile`. `env` is the workload's environment
/// (`None`: read `<root>/proc/self/environ`).
pub fn probe(root: &Root, env: Option<Env>, profile: Option<&Profile>) -> Report {
    // The profile's library path and a plugin it names by path: where its net plugin would be found.
    let mut extra: Vec<&str> = profile.map_or_else(Vec::new, |p| p.nccl_net.library_dirs());
    if let Some(plugin) = profile.and_then(|p| p.nccl.net_plugin.as_ref()) {
        extra.extend(
            plugin
                .value
                .split(',')
                .filter_map(|name| name.rsplit_once('/').map(|(dir, _)| dir)),
        );
    }
    // The topology file it names, which NCCL opens.
    let topology = profile.and_then(|p| p.nccl_net.topology.as_ref().map(|t| t.value.path()));
    let files: Vec<&str> = topology.as_deref().into_iter().collect();
    findings::diagnose(facts::collect_with(root, env, &extra, &files), profile)
}
