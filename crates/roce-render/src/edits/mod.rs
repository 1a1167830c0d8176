//! What the plan asks of a pod, as data: **requirements** (what the fabric needs, each with the consequence
//! when it is unmet) and the typed **edits** that meet each one, with the key every edit merges on.
//!
//! Every consumer interprets the same list ([`requirements`]):
//! * the Pod target writes every edit onto an empty pod (`write` on a skeleton);
//! * `roce apply` writes the edits of the requirements a template does not meet yet, merged into what the
//!   user wrote (`unmet`, then `write`); the webhook's JSONPatch is apply's result, diffed;
//! * the Kustomize Component carries the edits a strategic-merge patch can (the rest are its replacement
//!   steps: the Multus append, capabilities, claims, affinity);
//! * `roce lint` reports, per [`Need`], what a template does not meet (`roce_inspect::lint`).
//!
//! A [`Need`] names what a pod must get; matching on it is exhaustive everywhere, so a new need is one
//! variant here, its edits in [`requirements`], and the compiler points at each consumer that must say what
//! it does with it.

mod gaps;
mod keys;
pub(crate) mod otherwise;
pub(crate) mod pod;
mod write;

use roce_model::fabric::env::Consequence;
use roce_model::fabric::observe::Inspector;
use roce_model::fabric::provider::{HostMount, TopologyFile};
use roce_model::names::{Capability, NadRef};

use crate::dra::{Affinity, ContainerClaim, ExtraDocument, PodResourceClaim};
use crate::exec::ExecWrap;
use crate::plan::{EnvVar, GPU_RESOURCE, Plan};

pub use gaps::{Gap, Unmet};
pub(crate) use otherwise::Met;
pub(crate) use otherwise::unmet;
pub(crate) use write::{Context, Skeleton, write};
pub(crate) use write::{GetMut, ensure_map, env_item, equivalent, merge_env, merge_resources};

/// What a pod must get from the fabric (or from the workload, for GPUs) for the profile's job to run as
/// the profile means it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// The profile annotation, so a reader (and `roce diff`, the webhook) knows what wired the pod.
    Provenance,
    /// The rail NICs attached to the pod: the profile's Multus networks or the cloud's interfaces.
    RailNics,
    /// RDMA devices in the container: the device plugin's resource, or the NICs' DRA claim.
    RdmaDevices,
    /// Memory registration past the default memlock limit: `IPC_LOCK`.
    Memlock,
    /// The node's GPUs as the device plugin's resource (the workload's own: `apply` never adds them).
    Gpus,
    /// The NVIDIA container runtime, by the pod's runtime class, where it is not the nodes' default.
    RuntimeClass,
    /// Nodes of the profile's pool (its node labels).
    NodePool,
    /// An IMEX channel of the profile's ComputeDomain (multi-node NVLink).
    NvlinkDomain,
    /// Placement inside one NVLink domain (required clique affinity and the label it selects) and Kueue's
    /// topology annotations.
    Placement,
    /// A memory-backed `/dev/shm` (NCCL's and UCX's shared-memory transports outgrow the 64 MiB default).
    SharedMemory,
    /// The node's own NICs (a host-network profile): the pod in the node's network namespace, a privileged
    /// container, the host's `/dev/infiniband`.
    HostNetwork,
    /// The network provider's host directories (gIB's plugin), mounted read-only.
    HostDirectories,
    /// The topology file NCCL_TOPO_FILE names, mounted from its ConfigMap.
    TopologyFile,
    /// The Inspector profiler plugin's output directory, a volume (an `emptyDir`, or the node's directory
    /// the profile names).
    InspectorOutput,
    /// The fabric's environment, variable by variable (each with its reader's consequence).
    Environment,
}

impl Need {
    /// What is wrong when the need is unmet, in a user's words.
    pub fn describe(self) -> &'static str {
        match self {
            Need::Provenance => "the profile annotation",
            Need::RailNics => "the rail NICs",
            Need::RdmaDevices => "RDMA devices",
            Need::Memlock => "memory locking for RDMA registration (IPC_LOCK)",
            Need::Gpus => "the node's GPUs",
            Need::RuntimeClass => "the NVIDIA container runtime (its runtime class)",
            Need::NodePool => "nodes of the profile's pool",
            Need::NvlinkDomain => "an IMEX channel of the NVLink domain",
            Need::Placement => "placement inside one NVLink domain",
            Need::SharedMemory => "a memory-backed /dev/shm",
            Need::HostNetwork => "the node's network namespace and RDMA devices",
            Need::HostDirectories => "the network provider's host directories",
            Need::TopologyFile => "the NCCL topology file",
            Need::InspectorOutput => "a volume for the NCCL Inspector's records",
            Need::Environment => "the fabric's environment",
        }
    }

    /// The `roce lint` code that reports it unmet, or `None` where a manifest is not lint's to judge on it
    /// (the profile annotation is roce's own record; the GPU count is the workload's). Stable codes: each
    /// need keeps the one docs/rules.md lists.
    pub fn lint_code(self) -> Option<roce_model::Code> {
        use roce_model::Code;
        match self {
            Need::Provenance | Need::Gpus => None,
            Need::RailNics => Some(Code::LintMissingNad),
            Need::RdmaDevices => Some(Code::LintRdmaResource),
            Need::Memlock => Some(Code::LintIpcLock),
            Need::RuntimeClass => Some(Code::LintRuntimeClass),
            Need::NodePool => Some(Code::LintNodeSelector),
            Need::NvlinkDomain => Some(Code::LintDraChannelClaim),
            Need::Placement => Some(Code::LintDraCliqueAffinity),
            Need::SharedMemory => Some(Code::LintShm),
            Need::HostNetwork => Some(Code::LintHostNetwork),
            Need::HostDirectories => Some(Code::LintHostMount),
            Need::TopologyFile => Some(Code::LintTopologyFile),
            Need::InspectorOutput => Some(Code::LintInspectorOutput),
            Need::Environment => Some(Code::LintEnvMissing),
        }
    }

    /// Why a pod needs it, as the rest of a sentence that says what the pod lacks (`…: why`), for a pod
    /// on which leaving it unmet has `consequence`.
    pub(crate) fn why(self, plan: &Plan, consequence: Consequence) -> String {
        match self {
            Need::SharedMemory => format!(
                "the container runtime's {} MiB default is too small for NCCL's and UCX's shared-memory transports",
                roce_model::fabric::attach::RUNTIME_SHM_BYTES >> 20
            ),
            Need::Memlock if consequence == Consequence::Differs => "the profile grants it, but the platform's GPU nodes (EKS with EFA, GKE's RDMA networks) run containers with an unlimited memlock limit, so registration works without it".to_string(),
            Need::Memlock => "RDMA memory registration (`ibv_reg_mr`) fails past the memlock limit and NCCL falls back to sockets".to_string(),
            Need::HostNetwork => "the profile's host-network mode gives its pods the node's RDMA NICs, and without them NCCL falls back to sockets".to_string(),
            Need::RuntimeClass if consequence == Consequence::Differs => "the profile's nodes run the NVIDIA container runtime only for pods of that class, and a pod that asks for no NVIDIA GPU runs the same under their default runtime".to_string(),
            Need::RuntimeClass => "the profile's nodes run the NVIDIA container runtime only for pods of that class (it is not their default: k3s and RKE2 register it beside runc); under another runtime nothing injects the GPUs the device plugin allocated, and CUDA finds no device".to_string(),
            Need::HostDirectories => format!(
                "the profile's network provider ({}) mounts the node's directory there; {}",
                plan.provider.describe(),
                match plan.provider.nccl_net() {
                    Some(net) => format!("what the node installed there is missing, and with NCCL_NET={net} a missing plugin fails NCCL's init (`Failed to initialize any NET plugin`)"),
                    None => "what the node installed there (the plugin, its libraries) is missing in the container".to_string(),
                }
            ),
            // NCCL warns and probes the topology itself when `NCCL_TOPO_FILE` names a file it cannot open
            // (`ncclTopoGetXmlFromFile`, `src/graph/xml.cc`): slower on VMs whose PCI view is not the real one.
            Need::TopologyFile => "NCCL_TOPO_FILE names a file that may not be there, and NCCL then warns and probes the topology itself".to_string(),
            Need::InspectorOutput => match plan.inspector.as_ref().and_then(|i| i.host_path()) {
                Some(h) => format!("NCCL_INSPECTOR_DUMP_DIR sends the Inspector's records there, and the profile keeps them in the node's {h}; elsewhere they go with the pod"),
                None => "NCCL_INSPECTOR_DUMP_DIR sends the Inspector's records there; without a volume they stay in the container's own filesystem and go with it".to_string(),
            },
            _ => format!("the profile gives its pods {}; {}", self.describe(), without(consequence)),
        }
    }
}

/// What a job does without something, by the consequence.
fn without(consequence: Consequence) -> &'static str {
    match consequence {
        Consequence::Fails => "without it the job fails",
        Consequence::SilentTcp => "without it NCCL falls back to TCP sockets",
        Consequence::Slower => "without it the job runs slower",
        Consequence::Differs => "without it the job runs the same, but not as the profile states",
    }
}

/// One thing the fabric needs of a pod, what leaving it unmet does, and the edits that meet it.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// What is needed.
    pub need: Need,
    /// What the job does without it (the severity of a lint finding follows it).
    pub consequence: Consequence,
    /// The edits that meet it on a pod that has none of it.
    pub edits: Vec<Edit>,
    /// Other requirements whose edits meet this one too, so that a pod with them needs none of these
    /// edits (lint is silent; apply still writes them, as the profile states them).
    pub also_met_by: Vec<Need>,
}

/// How an edit meets what a template already has under its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Merge {
    /// The plan's value replaces another one under the key.
    Set,
    /// A value already under the key is the pod's own and is kept (the cloud's interfaces by the names
    /// its cluster gave them).
    IfAbsent,
}

/// Which part of the pod a volume edit is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Volume {
    /// A memory-backed `emptyDir` at `/dev/shm` (merge key: the mount path; the volume named `dshm`, or
    /// `roce-dshm` when the pod's `dshm` is something else).
    SharedMemory,
    /// A read-only `hostPath` of type `Directory` (merge keys: the volume name, the mount path).
    Host(HostMount),
    /// The topology file's key of its ConfigMap at the file's path (merge keys: the volume name, the path).
    Topology(TopologyFile),
    /// The host's `/dev/infiniband` as a `hostPath` of type `Directory` (merge keys: the volume name, the
    /// mount path).
    RdmaDevices,
    /// The Inspector's output directory, writable: an `emptyDir`, or the node's directory as a `hostPath`
    /// of type `DirectoryOrCreate` (merge keys: the mount path; the volume named `nccl-inspector`, added
    /// only where the container mounts nothing there).
    Inspector(Inspector),
}

/// One typed change to a worker pod template, with the key it merges on.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// `metadata.annotations[key]` (merge key: `key`).
    Annotation {
        /// The annotation key.
        key: String,
        /// Its value (a value with a newline is written as a block).
        value: String,
        /// Whether an existing value is replaced.
        merge: Merge,
    },
    /// The Multus networks annotation gains these networks, in rail order (merge key: each network's
    /// namespace and name; a name without namespace is the pod's namespace).
    Networks(Vec<NadRef>),
    /// `spec.nodeSelector[key] = value` (merge key: `key`).
    NodeLabel {
        /// The label key.
        key: String,
        /// Its value.
        value: String,
    },
    /// `metadata.labels[key] = value` (merge key: `key`).
    Label {
        /// The label key.
        key: String,
        /// Its value.
        value: String,
    },
    /// A volume and the container's mount of it.
    Volume(Volume),
    /// The container's `resources.requests` and `.limits` `[name] = quantity` (merge key: `name`).
    Resource {
        /// The resource name.
        name: String,
        /// The same quantity on both sides.
        quantity: String,
    },
    /// `securityContext.capabilities.add` holds it (merge key: the capability).
    Capability(Capability),
    /// A string field of the pod spec, `spec.<field>: value` (merge key: the field). A value the pod already
    /// has is its own: `roce apply` keeps it, and `roce lint` reports it where it is another.
    PodField {
        /// The field (`runtimeClassName`).
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// `spec.hostNetwork: true`, and `dnsPolicy: ClusterFirstWithHostNet` unless the pod chose a policy
    /// other than the default `ClusterFirst` (which a host-network pod would not get).
    HostNetwork,
    /// The container's `securityContext.privileged: true`.
    Privileged,
    /// The container's `env` (merge key: the name; a value that does the same is kept, a search path
    /// gains the plan's entries).
    Env(EnvVar),
    /// `spec.resourceClaims` (merge key: the claim's name).
    PodClaim(PodResourceClaim),
    /// The container's `resources.claims` (merge key: the name; an entry of that name is kept as written).
    ContainerClaim(ContainerClaim),
    /// `spec.affinity` (merge key: an equivalent required pod-affinity term).
    Affinity(Affinity),
    /// An object beside the workload (merge key: API group, kind, name and namespace).
    Document(ExtraDocument),
}

/// The plan's requirements of a worker pod, with the edits that meet each; `exec` drops the variables
/// `roce exec` computes in the pod (a static value would win over the computed one).
///
/// The edits of all of them, in this order, are the Pod target's wiring.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::edits::{self, Need};
/// use roce_render::plan;
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let reqs = edits::requirements(&plan::lower(&profile), None);
/// assert!(reqs.iter().any(|r| r.need == Need::Memlock && !r.edits.is_empty()));
/// ```
pub fn requirements(plan: &Plan, exec: Option<&ExecWrap>) -> Vec<Requirement> {
    let rdma = rdma_devices(plan);
    let node_pool = node_pool(plan, &rdma.edits);
    let mut out = vec![
        provenance(plan),
        gpus(plan),
        runtime_class(plan),
        rail_nics(plan),
        rdma,
        memlock(plan),
        nvlink_domain(plan),
        placement(plan),
        node_pool,
        shared_memory(plan),
        host_network(plan),
        host_directories(plan),
        topology_file(plan),
        inspector_output(plan),
        environment(plan, exec),
    ];
    out.retain(|r| !r.edits.is_empty());
    out
}

/// A requirement no other requirement's edits meet.
fn alone(need: Need, consequence: Consequence, edits: Vec<Edit>) -> Requirement {
    Requirement {
        need,
        consequence,
        edits,
        also_met_by: Vec::new(),
    }
}

/// The pod's and the container's entries for the DRA claim `claim`, where the plan's pod claims include
/// it (a claim the pod does not take is not the pod's to meet).
fn claim_edits(plan: &Plan, claim: Option<&str>) -> Vec<Edit> {
    let Some(claim) = claim else {
        return Vec::new();
    };
    if !plan
        .dra
        .pod_claims
        .iter()
        .any(|c| c.name().as_str() == claim)
    {
        return Vec::new();
    }
    let pod = plan
        .dra
        .pod_claims
        .iter()
        .filter(|c| c.name().as_str() == claim)
        .map(|c| Edit::PodClaim(c.clone()));
    let container = plan
        .dra
        .container_claims
        .iter()
        .filter(|c| c.name().as_str() == claim)
        .map(|c| Edit::ContainerClaim(c.clone()));
    pod.chain(container).collect()
}

/// The objects beside the workload that `kind` picks (the ComputeDomain, or the NICs' claim templates).
fn documents_of(plan: &Plan, kind: fn(&ExtraDocument) -> bool) -> Vec<Edit> {
    plan.dra
        .documents
        .iter()
        .filter(|d| kind(d))
        .map(|d| Edit::Document(d.clone()))
        .collect()
}

/// Whether a document is the NVLink domain's ComputeDomain rather than one of the NICs' objects.
fn is_domain(d: &ExtraDocument) -> bool {
    d.kind() == roce_model::fabric::dra::COMPUTE_DOMAIN_KIND
}

/// The profile annotation: it changes nothing the job does, only what a reader can tell.
fn provenance(plan: &Plan) -> Requirement {
    alone(
        Need::Provenance,
        Consequence::Differs,
        vec![Edit::Annotation {
            key: crate::PROFILE_ANNOTATION.to_string(),
            value: plan.profile.clone(),
            merge: Merge::Set,
        }],
    )
}

/// The GPU resource, where the plan asks for it; without GPUs the job does not start.
fn gpus(plan: &Plan) -> Requirement {
    alone(
        Need::Gpus,
        Consequence::Fails,
        plan.gpu_resource
            .then(|| Edit::Resource {
                name: GPU_RESOURCE.to_string(),
                quantity: plan.gpus_per_node.to_string(),
            })
            .into_iter()
            .collect(),
    )
}

/// The runtime class of the NVIDIA container runtime, where the profile names one. k3s and RKE2 register
/// that runtime with containerd beside runc, not as the default, and their docs have GPU pods name it
/// (`runtimeClassName: nvidia`, docs.k3s.io "NVIDIA Container Runtime Support"; the GPU Operator's toolkit
/// with `CONTAINERD_SET_AS_DEFAULT=false` does the same): the device plugin's default `envvar` strategy
/// only sets `NVIDIA_VISIBLE_DEVICES`, which runc ignores, so without it the container gets no GPU and
/// the job fails.
fn runtime_class(plan: &Plan) -> Requirement {
    alone(
        Need::RuntimeClass,
        Consequence::Fails,
        plan.runtime_class
            .iter()
            .map(|c| Edit::PodField {
                field: "runtimeClassName",
                value: c.clone(),
            })
            .collect(),
    )
}

/// The Multus networks and the cloud's interface annotations, which a pod already naming keeps as its own.
fn rail_nics(plan: &Plan) -> Requirement {
    let mut edits: Vec<Edit> = plan
        .wiring
        .as_ref()
        .filter(|w| !w.networks.is_empty())
        .map(|w| Edit::Networks(w.networks.clone()))
        .into_iter()
        .collect();
    edits.extend(plan.pod_annotations.iter().map(|(k, v)| Edit::Annotation {
        key: k.clone(),
        value: v.clone(),
        merge: Merge::IfAbsent,
    }));
    alone(Need::RailNics, Consequence::SilentTcp, edits)
}

/// The device plugin's RDMA resources, and the NICs' DRA claim with its objects (all but the
/// ComputeDomain) where the pod takes that claim.
fn rdma_devices(plan: &Plan) -> Requirement {
    let mut edits: Vec<Edit> = plan
        .wiring
        .as_ref()
        .map(|w| {
            w.resources
                .iter()
                .map(|(r, q)| Edit::Resource {
                    name: r.to_string(),
                    quantity: q.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let claim = claim_edits(plan, plan.dra_spec.nics.dra().map(|n| n.claim().as_str()));
    if !claim.is_empty() {
        edits.extend(claim);
        edits.extend(documents_of(plan, |d| !is_domain(d)));
    }
    alone(Need::RdmaDevices, Consequence::SilentTcp, edits)
}

/// IPC_LOCK, whose absence only differs on platforms that lift the memlock limit themselves.
fn memlock(plan: &Plan) -> Requirement {
    let wiring = plan.wiring.as_ref();
    // Where the platform runs containers with an unlimited memlock limit (EKS with EFA, GKE's RDMA NICs),
    // IPC_LOCK only differs.
    let consequence = if wiring.is_some_and(|w| {
        w.resources
            .iter()
            .any(|(r, _)| roce_model::fabric::devices::memlock_unlimited_with(r.as_str()))
    }) || !plan.pod_annotations.is_empty()
    {
        Consequence::Differs
    } else {
        Consequence::SilentTcp
    };
    Requirement {
        need: Need::Memlock,
        consequence,
        edits: wiring
            .map(|w| {
                w.capabilities
                    .iter()
                    .cloned()
                    .map(Edit::Capability)
                    .collect()
            })
            .unwrap_or_default(),
        // A privileged container (the host-network mode's) has every capability.
        also_met_by: if plan.host_network {
            vec![Need::HostNetwork]
        } else {
            Vec::new()
        },
    }
}

/// The ComputeDomain's claim and the ComputeDomain itself, where the pod takes that claim.
fn nvlink_domain(plan: &Plan) -> Requirement {
    let domain = plan
        .dra_spec
        .nvlink_domain
        .compute_domain()
        .map(|cd| cd.claim().as_str());
    let mut edits = claim_edits(plan, domain);
    if !edits.is_empty() {
        edits.extend(documents_of(plan, is_domain));
    }
    alone(Need::NvlinkDomain, Consequence::Fails, edits)
}

/// The clique label, Kueue's annotations and the affinity that keep the pods in one NVLink domain.
fn placement(plan: &Plan) -> Requirement {
    let mut edits: Vec<Edit> = plan
        .dra
        .labels
        .iter()
        .map(|(k, v)| Edit::Label {
            key: k.clone(),
            value: v.clone(),
        })
        .collect();
    edits.extend(plan.dra.annotations.iter().map(|(k, v)| Edit::Annotation {
        key: (*k).to_string(),
        value: v.clone(),
        merge: Merge::Set,
    }));
    edits.extend(plan.dra.affinity.clone().map(Edit::Affinity));
    alone(Need::Placement, Consequence::Slower, edits)
}

/// The pool's node labels; `rdma` (the RDMA devices' edits) says whether the resource request alone
/// keeps the pod on fabric nodes.
fn node_pool(plan: &Plan, rdma: &[Edit]) -> Requirement {
    // Only nodes with the fabric take the pod anyway: the scheduler places a pod that requests an extended
    // resource only on nodes that advertise it (kube-scheduler's NodeResourcesFit), a pod whose claim asks
    // for NICs only where the DRA allocator finds them, and GKE a pod that names multi-network interfaces
    // only on nodes with those networks.
    let mut node_gates = Vec::new();
    if rdma
        .iter()
        .any(|e| matches!(e, Edit::Resource { .. } | Edit::PodClaim(_)))
    {
        node_gates.push(Need::RdmaDevices);
    }
    if !plan.pod_annotations.is_empty() {
        node_gates.push(Need::RailNics);
    }
    Requirement {
        need: Need::NodePool,
        consequence: Consequence::Slower,
        edits: plan
            .node_selector
            .iter()
            .map(|(k, v)| Edit::NodeLabel {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
        also_met_by: node_gates,
    }
}

/// A memory-backed /dev/shm; without it the shared-memory transports are only slower.
fn shared_memory(plan: &Plan) -> Requirement {
    alone(
        Need::SharedMemory,
        Consequence::Slower,
        if plan.shm {
            vec![Edit::Volume(Volume::SharedMemory)]
        } else {
            Vec::new()
        },
    )
}

/// The node's network namespace, a privileged container and the host's /dev/infiniband, for a
/// host-network profile.
fn host_network(plan: &Plan) -> Requirement {
    alone(
        Need::HostNetwork,
        Consequence::SilentTcp,
        if plan.host_network {
            vec![
                Edit::HostNetwork,
                Edit::Privileged,
                Edit::Volume(Volume::RdmaDevices),
            ]
        } else {
            Vec::new()
        },
    )
}

/// The provider's host mounts; GPUs meet them where GKE's device plugin mounts each already.
fn host_directories(plan: &Plan) -> Requirement {
    Requirement {
        need: Need::HostDirectories,
        consequence: Consequence::SilentTcp,
        edits: plan
            .host_mounts
            .iter()
            .map(|m| Edit::Volume(Volume::Host(m.clone())))
            .collect(),
        // GKE's GPU device plugin mounts the node's driver directory into a container with GPUs.
        also_met_by: if plan.gpu_resource
            && plan.host_mounts.iter().all(|m| {
                roce_model::fabric::provider::mounted_with_gpus(&m.host_path, &m.mount_path)
            }) {
            vec![Need::Gpus]
        } else {
            Vec::new()
        },
    }
}

/// The topology file's ConfigMap volume; without it NCCL detects the topology itself (slower where wrong).
fn topology_file(plan: &Plan) -> Requirement {
    alone(
        Need::TopologyFile,
        Consequence::Slower,
        plan.topology
            .iter()
            .map(|t| Edit::Volume(Volume::Topology(t.clone())))
            .collect(),
    )
}

/// The Inspector's output directory; without a volume the plugin writes into the container's own
/// filesystem (lost with it, and out of the node exporter's reach), which changes nothing the job does.
fn inspector_output(plan: &Plan) -> Requirement {
    alone(
        Need::InspectorOutput,
        Consequence::Differs,
        plan.inspector
            .iter()
            .map(|i| Edit::Volume(Volume::Inspector(i.clone())))
            .collect(),
    )
}

/// The static environment, as serious as its most serious variable.
fn environment(plan: &Plan, exec: Option<&ExecWrap>) -> Requirement {
    // The environment's is its most serious variable's: what leaving each unset does, and for the network
    // provider's own variables (libfabric's FI_PROVIDER), what the provider does without them.
    let provider_needs = plan
        .provider
        .env_needs()
        .iter()
        .any(|n| n.required && plan.env_value(n.name).is_some());
    let consequence = crate::exec::static_env(plan, exec)
        .map(|e| plan.consequence_if_missing(&e.name, |_| false))
        .chain(provider_needs.then_some(Consequence::SilentTcp))
        .max()
        .unwrap_or(Consequence::Differs);
    alone(
        Need::Environment,
        consequence,
        crate::exec::static_env(plan, exec)
            .cloned()
            .map(Edit::Env)
            .collect(),
    )
}

/// The Pod target written from `edits` alone (some of [`requirements`]'s edits): the pod that gets just
/// these, with the objects their claims name before it. `render --target pod` is this with every edit.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::edits::{self, Need};
/// use roce_render::{plan, render, RenderOptions, Target};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let plan = plan::lower(&profile);
/// let opts = RenderOptions::default();
/// let reqs = edits::requirements(&plan, None);
/// let every: Vec<_> = edits::all(&reqs).collect();
/// assert_eq!(edits::pod(&plan, &opts, &every), render(&plan, Target::Pod, &opts).unwrap()[0].contents);
/// let no_memlock: Vec<_> = reqs.iter().filter(|r| r.need != Need::Memlock).flat_map(|r| &r.edits).collect();
/// assert!(!edits::pod(&plan, &opts, &no_memlock).contains("IPC_LOCK"));
/// ```
pub fn pod(plan: &Plan, opts: &crate::RenderOptions, edits: &[&Edit]) -> String {
    pod::render_edits(plan, opts, edits)
}

/// Every edit of `reqs`, in requirement order.
pub fn all(reqs: &[Requirement]) -> impl Iterator<Item = &Edit> {
    reqs.iter().flat_map(|r| r.edits.iter())
}
