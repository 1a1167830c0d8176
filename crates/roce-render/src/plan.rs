//! Lowering: a validated [`Profile`] → a target-neutral [`Plan`].
//!
//! The only place in the renderer that knows what InfiniBand and RoCE need; the facts themselves (which
//! variable a field sets, what a pod must have attached) come from the fabric core, [`roce_model::fabric`].
//! Emitters format a `Plan`; they never look at the profile, the fabric kind or the UCX mode. So the env
//! of a Pod, an sbatch script and a Dockerfile cannot disagree, and adding a target never touches fabric
//! logic.
//!
//! Lowering has two steps, both here: [`lower`] gives the plan of the user's job, and a validation
//! [`Workload`] is lowered from that plan ([`lower_workload`]; [`crate::render`] does it for a workload
//! target), adding the test's logging variables, its default arguments and its [`Note`]s. Whatever an
//! artifact says in prose about the fabric is a note made here, never a sentence composed by an emitter.

mod note;
mod workload;

use std::borrow::Cow;

use roce_model::fabric;
use roce_model::model::{FabricKind, Profile, UcxMode};

pub use note::{Note, Topic};
pub use roce_model::fabric::attach::{GPU_RESOURCE, MULTUS_ANNOTATION, PodWiring};
pub use roce_model::fabric::env::{Consumer, EnvVar};

use crate::RenderError;
pub use crate::target::Workload;

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
    /// The fabric. Lowering reads it; emitters print [`Plan::fabric_name`].
    pub fabric: FabricKind,
    /// What the artifacts call the fabric (`RoCE`, `InfiniBand`, `EFA`).
    pub fabric_label: &'static str,
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
    /// What UCX is for in this profile. Lowering reads it (notes, the `ucx_perftest` arguments); emitters
    /// do not.
    pub ucx_mode: UcxMode,
    /// The public nccl-tests image that matches this fabric, for validation jobs (`--image` overrides).
    pub nccl_tests_image: String,
    /// The image `ucx_perftest` runs from: one with UCX (HPC-X), which the EFA nccl-tests image lacks.
    pub ucx_perftest_image: String,
    /// What runs: the user's job, or a validation workload lowered from it.
    pub workload: Workload,
    /// What the artifacts say beyond configuration, in lowering order; each emitter prints the
    /// [`Topic`]s that concern its readers.
    pub notes: Vec<Note>,
    /// The workload's default arguments, where lowering chooses them: `ucx_perftest`'s client arguments
    /// (GPU memory, or host memory when UCX is pinned to TCP). `None` for the user's job and nccl-tests.
    pub test_args: Option<String>,
    /// What the profile asks of DRA: NICs, NVLink domain, placement. Lowering reads it (a workload may take
    /// part of it); emitters read [`Plan::dra`].
    pub dra_spec: fabric::dra::DraSpec,
    /// DRA claims, the NVLink domain's claim, placement, and the objects they need beside the workload:
    /// what [`Plan::dra_spec`] adds to a pod, for this plan's workload.
    pub dra: crate::dra::DraWiring,
    /// Request GPUs as `nvidia.com/gpu` (not when a DRA claim allocates them).
    pub gpu_resource: bool,
    /// Host directories the network provider needs, mounted read-only into the workload container (gIB's
    /// plugin), in profile order. Pod targets carry them; sbatch, env and Dockerfile do not.
    pub host_mounts: Vec<fabric::provider::HostMount>,
    /// A topology file from a ConfigMap, mounted read-only at its path (`NCCL_TOPO_FILE` is in
    /// [`Plan::env`]). Pod targets carry the volume; on Slurm the file must be at that path on the nodes.
    pub topology: Option<fabric::provider::TopologyFile>,
    /// The Inspector profiler plugin, when the profile turns it on (its variables are in [`Plan::env`]).
    /// Pod targets mount its directory (an `emptyDir`, or the node's directory the profile names); on
    /// Slurm it is the nodes' own directory.
    pub inspector: Option<fabric::observe::Inspector>,
    /// Pod annotations the network provider's attachment needs (GKE `networking.gke.io/interfaces`), in
    /// profile order.
    pub pod_annotations: Vec<(String, String)>,
    /// The RDMA devices the pod sees and their verbs port, one per rail: what `NCCL_IB_HCA` selects from.
    pub rail_ports: Vec<(String, u32)>,
    /// The NCCL network provider (IB verbs, aws-ofi-nccl, gIB, a plugin).
    pub provider: fabric::provider::Provider,
    /// The pods run in the node's network namespace with the node's RDMA devices (`nics host-network`):
    /// pod targets write `hostNetwork: true` and `dnsPolicy: ClusterFirstWithHostNet`, a privileged
    /// workload container and the host's `/dev/infiniband` mounted ([`fabric::attach::HOST_NETWORK`]).
    pub host_network: bool,
    /// The RuntimeClass of the NVIDIA container runtime, where the nodes' default runtime is another
    /// (`node-pool runtime-class`): pod targets write it as `spec.runtimeClassName`.
    pub(crate) runtime_class: Option<String>,
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
    // Expanded once for the wiring's NADs and the rail ports.
    let rails = p.rail_list();
    let wiring = p.pod_wiring_for(&rails);
    let pool = &p.node_pool;
    let dra_spec = fabric::dra::DraSpec {
        nics: p.nics.value.clone(),
        nvlink_domain: p.nvlink_domain.value.clone(),
        placement: p.placement.value.clone(),
    };
    let mut plan = Plan {
        profile: p.name.value.clone(),
        description: p.description.as_ref().map(|d| d.value.clone()),
        fabric: p.fabric.kind.value,
        fabric_label: p.fabric_name(),
        wiring,
        gpus_per_node: pool.gpus_per_node.value,
        node_selector: pool
            .node_labels
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        env: p.env_vars(),
        slurm: SlurmPlan {
            partition: pool.partition.as_ref().unwrap_or(&pool.name).value.clone(),
            nodes: p.job.nodes.as_ref().map_or(1, |n| n.value),
            ntasks_per_node: pool.gpus_per_node.value,
            gpus_per_node: pool.gpus_per_node.value,
        },
        min_rdma_core: (p.ucx.mode.value == UcxMode::Rdma).then_some(p.ucx.min_rdma_core.value),
        shm: true,
        ucx_mode: p.ucx.mode.value,
        // CoreWeave's nccl-tests images carry HPC-X's UCX; AWS's carries libfabric and aws-ofi-nccl, no UCX
        ucx_perftest_image: match p.fabric.kind.value {
            FabricKind::Roce => crate::NCCL_TESTS_IMAGE_ROCE,
            FabricKind::InfiniBand => crate::NCCL_TESTS_IMAGE_INFINIBAND,
        }
        .to_string(),
        nccl_tests_image: match (&p.nccl_net.provider.value, p.fabric.kind.value) {
            (fabric::provider::Provider::Ofi, _) => crate::NCCL_TESTS_IMAGE_EFA,
            (_, FabricKind::Roce) => crate::NCCL_TESTS_IMAGE_ROCE,
            (_, FabricKind::InfiniBand) => crate::NCCL_TESTS_IMAGE_INFINIBAND,
        }
        .to_string(),
        workload: Workload::Job,
        notes: Vec::new(),
        test_args: None,
        dra: crate::dra::wiring(&dra_spec),
        dra_spec,
        gpu_resource: p.requests_gpu_resource(),
        host_mounts: p
            .nccl_net
            .host_mounts
            .iter()
            .map(|m| m.value.clone())
            .collect(),
        topology: p.nccl_net.topology.as_ref().map(|t| t.value.clone()),
        inspector: p.nccl.inspector.as_ref().map(|i| i.value.clone()),
        pod_annotations: p
            .nccl_net
            .pod_annotations
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        rail_ports: rails
            .into_iter()
            .map(|r| (r.pod_device, p.rails.port_num.value))
            .collect(),
        provider: p.nccl_net.provider.value.clone(),
        host_network: p.host_network(),
        runtime_class: pool.runtime_class.as_ref().map(|c| c.value.to_string()),
    };
    plan.notes = notes(&plan);
    plan
}

/// Lower a profile for a workload: the job's plan ([`lower`]) with what the workload adds.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::plan::{self, Topic, Workload};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let test = plan::lower_workload(&profile, Workload::UcxPerftest);
/// assert_eq!(test.env_value("UCX_LOG_LEVEL"), Some("info"));
/// assert!(test.test_args.unwrap().contains("-m host"), "UCX is pinned to TCP");
/// assert!(test.notes.iter().any(|n| n.topic == Topic::Ucx && n.text.contains("TCP")));
/// ```
pub fn lower_workload(p: &Profile, w: Workload) -> Plan {
    workload::lower(lower(p), w)
}

/// Recompute the notes of a plan whose fields were edited (`roce diff` swaps one aspect at a time).
pub(crate) fn refresh_notes(plan: &mut Plan) {
    plan.notes = notes(plan);
}

/// The plan's notes, from its other fields (so they can be recomputed when those change): the job's, then
/// the workload's.
fn notes(plan: &Plan) -> Vec<Note> {
    let mut out = note::notes(plan);
    out.extend(workload::notes(plan));
    out
}

impl Plan {
    /// The rails a `NCCL_IB_HCA` value selects, by NCCL's list rules (prefix, `=` exact, `^` exclude,
    /// `:port`) over [`Plan::rail_ports`].
    pub fn hca_selects(&self, value: &str) -> std::collections::BTreeSet<(String, u32)> {
        self.hca_matching(value)
            .into_iter()
            .map(|(d, p)| (d.to_string(), p))
            .collect()
    }

    /// [`Plan::hca_selects`], borrowing the device names.
    fn hca_matching(&self, value: &str) -> std::collections::BTreeSet<(&str, u32)> {
        let (list, _) = roce_model::nccl_list::parse(value, roce_model::nccl_list::ListKind::IbHca);
        let ports: Vec<(&str, u32)> = self
            .rail_ports
            .iter()
            .map(|(d, p)| (d.as_str(), *p))
            .collect();
        list.matching_ports(&ports).into_iter().collect()
    }

    /// Whether `value` selects every rail port, counted without copying the device names (this runs on
    /// every render).
    fn hca_selects_every_rail(&self, value: &str) -> bool {
        self.hca_matching(value).len() == self.rail_ports.len()
    }

    /// What another value `have` for `name` does to the job, by its reader
    /// ([`roce_model::fabric::env::consequence`]); a `UCX_NET_DEVICES` naming only devices the pod has
    /// (its rails, or the plan's own) only differs.
    pub fn consequence_of(&self, name: &str, have: &str) -> roce_model::fabric::env::Consequence {
        use roce_model::fabric::env::Consequence;
        if self.equivalent(name, have) {
            return Consequence::Differs;
        }
        if name == roce_model::fabric::env::UCX_NET_DEVICES.name {
            let known = |d: &str| {
                self.rail_ports.iter().any(|(r, _)| r == d)
                    || self
                        .env_value(name)
                        .is_some_and(|w| w.split(',').any(|x| x.split(':').next() == Some(d)))
            };
            let (devices, _) = roce_model::ucx_list::parse_net_devices(have);
            if devices
                .devices()
                .is_some_and(|ds| ds.iter().all(|d| known(d.name())))
            {
                return Consequence::Differs;
            }
        }
        roce_model::fabric::env::consequence(name)
    }

    /// What leaving the plan's `name` unset does ([`roce_model::fabric::env::consequence_if_missing`]); an
    /// `NCCL_IB_HCA` that selects every device the pod has is NCCL's default, which only differs.
    pub fn consequence_if_missing(
        &self,
        name: &str,
        set: impl Fn(&str) -> bool,
    ) -> roce_model::fabric::env::Consequence {
        if name == roce_model::fabric::env::NCCL_IB_HCA.name
            && !self.rail_ports.is_empty()
            && self
                .env_value(name)
                .is_some_and(|v| self.hca_selects_every_rail(v))
        {
            return roce_model::fabric::env::Consequence::Differs;
        }
        roce_model::fabric::env::consequence_if_missing(name, set)
    }

    /// Is the manifest's `have` for `name` one `roce apply` keeps: equivalent to the plan's, or another value
    /// that only differs (the author's choice, which the job runs the same with)?
    pub fn acceptable(&self, name: &str, have: &str) -> bool {
        self.consequence_of(name, have) == roce_model::fabric::env::Consequence::Differs
    }

    /// Does the manifest's `have` for `name` do what the plan's value does? An `NCCL_IB_HCA` that selects
    /// the same rails, a `UCX_TLS` that enables the same transports, a search path that already holds the
    /// plan's entries, a log level (the author's choice).
    pub fn equivalent(&self, name: &str, have: &str) -> bool {
        let Some(want) = self.env_value(name) else {
            return true;
        };
        if have == want || roce_model::fabric::env::is_logging(name) {
            return true;
        }
        if roce_model::fabric::devices::path_like(name) {
            let entries: Vec<&str> = have.split(':').collect();
            return want
                .split(':')
                .all(|w| w.is_empty() || entries.contains(&w));
        }
        if name == roce_model::fabric::env::NCCL_IB_HCA.name && !self.rail_ports.is_empty() {
            // DRA NICs reach the pod under the host's names, which the profile's rail pattern only
            // approximates (OCI's GB200 skips mlx5_4): an exact list of as many devices is the claimed set.
            let (list, _) =
                roce_model::nccl_list::parse(have, roce_model::nccl_list::ListKind::IbHca);
            if self.dra_spec.nics.dra().is_some()
                && have.trim_start().starts_with('=')
                && list.to_string().trim_start_matches('=').split(',').count()
                    == self.rail_ports.len()
            {
                return true;
            }
            return self.hca_selects(have) == self.hca_selects(want);
        }
        if name == roce_model::fabric::env::UCX_TLS.name {
            let roles = |v: &str| roce_model::ucx_list::parse_tls(v).0.roles();
            return roles(have) == roles(want);
        }
        if name == roce_model::fabric::env::NCCL_SOCKET_IFNAME.name && !self.host_network {
            return roce_model::fabric::env::socket_ifname_keeps(have, want);
        }
        false
    }

    /// This job plan lowered for the workload `w` (see [`lower_workload`]); a plan already lowered for `w`
    /// comes back as it is.
    ///
    /// # Errors
    ///
    /// [`RenderError::Workload`] for a plan lowered for another workload: it carries that workload's
    /// additions, so lower `w` from the job's plan instead.
    pub fn with_workload(&self, w: Workload) -> Result<Plan, RenderError> {
        self.for_workload(w).map(Cow::into_owned)
    }

    /// The plan for `w`: this one when it was lowered for `w`, else lowered from this job plan. A plan
    /// already lowered for another workload cannot be: it carries that workload's additions.
    pub(crate) fn for_workload(&self, w: Workload) -> Result<Cow<'_, Plan>, RenderError> {
        if self.workload == w {
            Ok(Cow::Borrowed(self))
        } else if self.workload == Workload::Job {
            Ok(Cow::Owned(workload::lower(self.clone(), w)))
        } else {
            Err(RenderError::Workload {
                plan: self.workload,
                wanted: w,
            })
        }
    }

    /// The fabric's name for comments: `RoCE`, `InfiniBand` or `EFA` ([`Profile::fabric_name`](roce_model::Profile::fabric_name)).
    pub fn fabric_name(&self) -> &'static str {
        self.fabric_label
    }

    /// The notes about `topics`, topic by topic in the order given, each topic's in plan order.
    pub fn notes_about<'a>(&'a self, topics: &'a [Topic]) -> impl Iterator<Item = &'a Note> + 'a {
        topics
            .iter()
            .flat_map(|t| self.notes.iter().filter(move |n| n.topic == *t))
    }

    /// The value of an env variable in this plan.
    pub fn env_value(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value.as_str())
    }

    /// The `nvidia.com/gpu` count and wiring resources, as (name, quantity), for requests and limits.
    pub fn resources(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.gpu_resource {
            out.push((GPU_RESOURCE.to_string(), self.gpus_per_node.to_string()));
        }
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
