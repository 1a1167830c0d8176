//! Lowering: a validated [`Profile`] → a target-neutral [`Plan`].
//!
//! This is the only place in the renderer that knows what InfiniBand and RoCE need. Emitters format a
//! `Plan`; they never look at the profile. So the env of a Pod, an sbatch script and a Dockerfile cannot
//! disagree, and adding a target never touches fabric logic.

use roce_model::model::{FabricKind, NadRef, Profile, UcxMode};
use roce_model::source::Origin;

/// The Multus annotation key.
pub const MULTUS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";
/// The GPU extended resource.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Who reads an env variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumer {
    /// NCCL (collectives).
    Nccl,
    /// UCX (MPI, NIXL).
    Ucx,
    /// Anything else (MPI, IMEX, user variables).
    Other,
}

/// One environment variable, with the profile line that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    /// Variable name.
    pub name: String,
    /// Value, always a string.
    pub value: String,
    /// Who reads it.
    pub consumer: Consumer,
    /// Where in the profile it came from.
    pub origin: Option<Origin>,
}

/// What a pod needs attached so the fabric reaches it. Absent for SUNK NodeSets, which attach it
/// themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodWiring {
    /// Multus networks, in rail order.
    pub networks: Vec<NadRef>,
    /// Extended resources set to the same value in requests and limits (`rdma/ib: 1`).
    pub resources: Vec<(String, String)>,
    /// Linux capabilities to add.
    pub capabilities: Vec<String>,
}

impl PodWiring {
    /// The Multus annotation value: a JSON list, one object per NAD in rail order, one NAD per line (the
    /// layout of the vendor's examples, so a review diff shows which NAD changed).
    pub fn multus_annotation(&self) -> Option<String> {
        if self.networks.is_empty() {
            return None;
        }
        let items: Vec<String> = self
            .networks
            .iter()
            .map(|n| {
                let entry = MultusEntry {
                    name: &n.name,
                    namespace: &n.namespace,
                };
                serde_json::to_string(&entry).expect("strings serialise")
            })
            .collect();
        Some(format!("[{}]", items.join(",\n ")))
    }
}

/// One element of the Multus annotation's JSON list.
#[derive(serde::Serialize)]
struct MultusEntry<'a> {
    name: &'a str,
    namespace: &'a str,
}

/// Slurm defaults from the node pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmPlan {
    /// Partition (the profile's, else the pool name).
    pub partition: String,
    /// Nodes (from `job nodes`, else 1).
    pub nodes: u32,
    /// Tasks per node: one per GPU.
    pub ntasks_per_node: u32,
    /// GPUs per node.
    pub gpus_per_node: u32,
}

/// Everything a target needs, with no fabric decisions left to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Profile name (`team/name`).
    pub profile: String,
    /// Profile description.
    pub description: Option<String>,
    /// The fabric, for comments.
    pub fabric: FabricKind,
    /// Pod wiring, or `None` when a SUNK NodeSet attaches the fabric (env only).
    pub wiring: Option<PodWiring>,
    /// GPUs per node (`nvidia.com/gpu` in requests and limits).
    pub gpus_per_node: u32,
    /// Node labels to select on.
    pub node_selector: Vec<(String, String)>,
    /// The environment, in a stable order: NCCL, then UCX, then extra env.
    pub env: Vec<EnvVar>,
    /// Slurm defaults.
    pub slurm: SlurmPlan,
    /// Least rdma-core the image must ship, when UCX uses RDMA.
    pub min_rdma_core: Option<u32>,
    /// Mount a memory-backed `/dev/shm` (NCCL and UCX need more than the container default).
    pub shm: bool,
    /// What UCX is for in this profile (validation jobs say when UCX is on TCP, and why).
    pub ucx_mode: UcxMode,
    /// The public nccl-tests image that matches this fabric, for validation jobs (`--image` overrides).
    pub nccl_tests_image: String,
}

/// Lower a profile to a plan.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let plan = roce_render::plan::lower(&profile);
/// assert_eq!(plan.env_value("NCCL_IB_TC"), Some("96"));
/// assert_eq!(plan.wiring.unwrap().networks.len(), 16);
/// ```
pub fn lower(p: &Profile) -> Plan {
    let rails = p.rail_list();
    let wiring = p.direct_pods().then(|| PodWiring {
        networks: p.multus.nads(&rails),
        resources: p
            .node_pool
            .rdma_resource
            .iter()
            .map(|r| (r.value.clone(), "1".to_string()))
            .collect(),
        capabilities: p.capabilities.iter().map(|c| c.value.clone()).collect(),
    });
    let pool = &p.node_pool;
    Plan {
        profile: p.name.value.clone(),
        description: p.description.as_ref().map(|d| d.value.clone()),
        fabric: p.fabric.kind.value,
        wiring,
        gpus_per_node: pool.gpus_per_node.value,
        node_selector: pool
            .node_labels
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        env: env(p),
        slurm: SlurmPlan {
            partition: pool.partition.as_ref().unwrap_or(&pool.name).value.clone(),
            nodes: p.job.nodes.as_ref().map_or(1, |n| n.value),
            ntasks_per_node: pool.gpus_per_node.value,
            gpus_per_node: pool.gpus_per_node.value,
        },
        min_rdma_core: (p.ucx.mode.value == UcxMode::Rdma).then_some(p.ucx.min_rdma_core.value),
        shm: true,
        ucx_mode: p.ucx.mode.value,
        nccl_tests_image: match p.fabric.kind.value {
            FabricKind::Roce => crate::NCCL_TESTS_IMAGE_ROCE,
            FabricKind::InfiniBand => crate::NCCL_TESTS_IMAGE_INFINIBAND,
        }
        .to_string(),
    }
}

struct EnvBuilder(Vec<EnvVar>);

impl EnvBuilder {
    fn push(
        &mut self,
        name: &str,
        value: impl Into<String>,
        consumer: Consumer,
        origin: Option<Origin>,
    ) {
        self.0.push(EnvVar {
            name: name.to_string(),
            value: value.into(),
            consumer,
            origin,
        });
    }
}

fn env(p: &Profile) -> Vec<EnvVar> {
    use Consumer::*;
    let mut e = EnvBuilder(Vec::new());
    let n = &p.nccl;
    if let Some(s) = &n.socket_ifname {
        e.push(
            "NCCL_SOCKET_IFNAME",
            &s.text.value,
            Nccl,
            Some(s.text.origin),
        );
    }
    if let Some(h) = &n.ib_hca {
        e.push("NCCL_IB_HCA", &h.text.value, Nccl, Some(h.text.origin));
    }
    if p.fabric.kind.value == FabricKind::Roce {
        let f = &p.fabric;
        if let Some(a) = &f.addr_family {
            e.push("NCCL_IB_ADDR_FAMILY", a.value.nccl(), Nccl, Some(a.origin));
        }
        if let Some(r) = &f.addr_range {
            e.push("NCCL_IB_ADDR_RANGE", &r.value, Nccl, Some(r.origin));
        }
        if let Some(tc) = &f.traffic_class {
            e.push("NCCL_IB_TC", tc.value.to_string(), Nccl, Some(tc.origin));
        }
        if let Some(g) = &f.gid_index {
            e.push(
                "NCCL_IB_GID_INDEX",
                g.value.to_string(),
                Nccl,
                Some(g.origin),
            );
        }
    }
    if let Some(v) = &n.net_plugin {
        e.push("NCCL_NET_PLUGIN", &v.value, Nccl, Some(v.origin));
    }
    if let Some(v) = &n.debug {
        e.push("NCCL_DEBUG", &v.value, Nccl, Some(v.origin));
    }
    if let Some(v) = &n.debug_subsys {
        e.push("NCCL_DEBUG_SUBSYS", &v.value, Nccl, Some(v.origin));
    }
    for (k, v) in &n.knobs {
        e.push(k, &v.value, Nccl, Some(v.origin));
    }
    let u = &p.ucx;
    match u.mode.value {
        UcxMode::Off => {}
        UcxMode::Tcp => {
            match &u.tls {
                Some((t, _)) => e.push("UCX_TLS", &t.value, Ucx, Some(t.origin)),
                None => e.push("UCX_TLS", "tcp", Ucx, Some(u.mode.origin)),
            }
            if let Some((d, _)) = &u.net_devices {
                e.push("UCX_NET_DEVICES", &d.value, Ucx, Some(d.origin));
            }
        }
        UcxMode::Rdma => {
            if let Some((t, _)) = &u.tls {
                e.push("UCX_TLS", &t.value, Ucx, Some(t.origin));
            }
            if let Some((d, _)) = &u.net_devices {
                e.push("UCX_NET_DEVICES", &d.value, Ucx, Some(d.origin));
            }
            if let Some(g) = u.gid_index.or(p.fabric.gid_index) {
                e.push("UCX_IB_GID_INDEX", g.value.to_string(), Ucx, Some(g.origin));
            }
            if let Some(r) = &u.max_rma_rails {
                e.push(
                    "UCX_MAX_RMA_RAILS",
                    r.value.to_string(),
                    Ucx,
                    Some(r.origin),
                );
            }
        }
    }
    for (k, v) in &p.env {
        e.push(k, &v.value, Other, Some(v.origin));
    }
    e.0
}

impl Plan {
    /// The value of an env variable in this plan.
    pub fn env_value(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value.as_str())
    }

    /// The `nvidia.com/gpu` count and wiring resources, as (name, quantity), for requests and limits.
    pub fn resources(&self) -> Vec<(String, String)> {
        let mut out = vec![(GPU_RESOURCE.to_string(), self.gpus_per_node.to_string())];
        if let Some(w) = &self.wiring {
            out.extend(w.resources.iter().cloned());
        }
        out
    }

    /// A Kubernetes-safe short name for generated objects (`coreweave/gb300-roce` → `gb300-roce`).
    pub fn short_name(&self) -> String {
        let last = self.profile.rsplit('/').next().unwrap_or(&self.profile);
        let mut name: String = last
            .chars()
            .map(|c| {
                let c = c.to_ascii_lowercase();
                if c.is_ascii_alphanumeric() { c } else { '-' }
            })
            .collect();
        name = name.trim_matches('-').to_string();
        name.truncate(63);
        if name.is_empty() {
            "roce".to_string()
        } else {
            name
        }
    }
}
