//! Lowering: a validated [`Profile`] → a target-neutral [`Plan`].
//!
//! The only place in the renderer that knows what InfiniBand and RoCE need; the facts themselves (which
//! variable a field sets, what a pod must have attached) come from the fabric core, [`roce_model::fabric`].
//! Emitters format a `Plan`; they never look at the profile. So the env of a Pod, an sbatch script and a
//! Dockerfile cannot disagree, and adding a target never touches fabric logic.

use roce_model::fabric;
use roce_model::model::{FabricKind, Profile, UcxMode};

pub use roce_model::fabric::attach::{GPU_RESOURCE, MULTUS_ANNOTATION, PodWiring};
pub use roce_model::fabric::env::{Consumer, EnvVar};

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
    let wiring = fabric::attach::pod_wiring(p);
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
        env: fabric::env::profile_env(p),
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
            out.extend(w.resources.iter().map(|(r, q)| (r.to_string(), q.clone())));
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
