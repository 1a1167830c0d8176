//! Dynamic Resource Allocation and NVLink domains: how RDMA NICs reach a pod, which NVLink domain its GPUs
//! share, and where it is placed.
//!
//! Three choices, each a type here: the NIC attachment ([`NicAttachment`]: Multus NADs plus a device-plugin
//! resource, the resource alone, or a DRA claim), the NVLink domain ([`NvlinkDomain`]: none, or a
//! ComputeDomain whose IMEX channel the pods claim), and placement ([`Placement`]: affinity on the NVLink
//! clique label, Kueue Topology Aware Scheduling). [`rules`] says what is wrong with them against a job or
//! a manifest; the Kubernetes objects they become are roce-render's (`roce_render::dra`).
//!
//! ```
//! use roce_model::fabric::dra::{self, ComputeDomain, NvlinkDomain};
//!
//! // The vendor's GB300 NVL72 job: a ComputeDomain whose channel each worker claims.
//! let cd = ComputeDomain::new("nccl-test-72-gb300-18n-dra".parse()?, 0, None)?;
//! assert_eq!(cd.channel_template().as_str(), "nccl-test-72-gb300-18n-dra-cd-channel");
//! let domain = NvlinkDomain::ComputeDomain(cd);
//!
//! // A manifest pod without the claim: NCCL would get no IMEX channel.
//! assert!(dra::rules::channel_claim_concern(&domain, &[], &[]).is_some());
//! # Ok::<(), dra::NameError>(())
//! ```
//!
//! Sources (fixtures with commits under `crates/roce-render/tests/fixtures/`):
//! - DRA is GA in Kubernetes 1.34 as `resource.k8s.io/v1` (kubernetes.io/blog/2025/09/01/kubernetes-v1-34-dra-updates).
//! - `ComputeDomain` is the CRD of kubernetes-sigs/dra-driver-nvidia-gpu,
//!   `deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_computedomains.yaml`.
//! - The vendor's GB300 RoCE job with a ComputeDomain: coreweave/nccl-tests
//!   `mpi-operator/nccl-test-distributed-gb300-roce-nvl72-mpijob-dra.yaml`.
//! - NICs as DRA devices, aligned with GPUs: kubernetes-sigs/dranet `examples/aws_eks_examples/gpu-efa` (PCIe
//!   root) and `examples/distributed_training` (NUMA node); `site/content/docs/user/aws-eks-efa.md`.

pub mod kueue;
mod names;
pub mod rules;

use std::num::NonZeroU32;
use std::str::FromStr;

pub use crate::names::{DnsLabel, K8sName, NameError};
pub use names::{CEL_MAX_LEN, CelExpression, DeviceClassName, LabelKey, LabelValue};

/// The API version of ResourceClaimTemplate and DeviceClass: DRA's GA group (Kubernetes ≥ 1.34).
pub const RESOURCE_API_VERSION: &str = "resource.k8s.io/v1";
/// The Kubernetes minor (1.x) where DRA's `resource.k8s.io/v1` went GA (Kubernetes 1.34 release notes,
/// KEP-4381): the least a pod that claims anything can run on.
pub const RESOURCE_API_MIN_MINOR: u32 = 34;
/// The kind roce emits for a DRA NIC claim.
pub const RESOURCE_CLAIM_TEMPLATE_KIND: &str = "ResourceClaimTemplate";
/// The ComputeDomain CRD's group and version (kubernetes-sigs/dra-driver-nvidia-gpu).
pub const COMPUTE_DOMAIN_API_VERSION: &str = "resource.nvidia.com/v1beta1";
/// The ComputeDomain CRD's kind.
pub const COMPUTE_DOMAIN_KIND: &str = "ComputeDomain";
/// The node label naming a node's NVLink domain, `<ClusterUUID>.<CliqueID>`: set by GPU feature discovery
/// and by the DRA driver's compute-domain kubelet plugin (`gpuCliqueLabelKey` in
/// `cmd/compute-domain-kubelet-plugin/computedomain.go`); the vendor's job keys its pod affinity on it.
pub const CLIQUE_LABEL: &str = "nvidia.com/gpu.clique";
/// Kueue TAS: the pod set must fit in one domain of this topology level (a node label), or it is not
/// admitted (kueue.sigs.k8s.io/docs/tasks/run/topology_aware_scheduling).
pub const KUEUE_REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-required-topology";
/// Kueue TAS: the pod set is packed into one domain of this level when it fits, else spread over few.
pub const KUEUE_PREFERRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-preferred-topology";
/// The standard DRA device attribute naming a device's PCIe root complex; both dranet and the NVIDIA GPU
/// driver publish it, so a claim can keep a GPU and a NIC on one root (dranet `docs/user/aws-eks-efa.md`).
pub const PCIE_ROOT_ATTRIBUTE: &str = "resource.kubernetes.io/pcieRoot";
/// The standard DRA device attribute naming a device's NUMA node (KEP-6072; dranet publishes it beside
/// `dra.net/numaNode`, `site/content/docs/quick-start.md`).
pub const NUMA_NODE_ATTRIBUTE: &str = "resource.kubernetes.io/numaNode";
/// The DeviceClass the NVIDIA DRA driver installs for GPUs (`templates/deviceclass-gpu.yaml`).
pub const NVIDIA_GPU_DEVICE_CLASS: &str = "gpu.nvidia.com";
/// dranet's driver name: a DeviceClass selecting its NICs says `device.driver == "dra.net"`.
pub const DRANET_DRIVER: &str = "dra.net";
/// Where a claimed IMEX channel appears in the container (`/dev/nvidia-caps-imex-channels/channelN`):
/// what `doctor` looks for when the profile has a ComputeDomain.
pub const IMEX_CHANNELS_DIR: &str = "/dev/nvidia-caps-imex-channels";
/// The pod's claim name for the ComputeDomain channel in the vendor's job.
pub const DEFAULT_CHANNEL_CLAIM: &str = "compute-domain-channel";
/// The pod's claim name for DRA NICs when the profile names none.
pub const DEFAULT_NIC_CLAIM: &str = "rdma-nics";

fn constant_label(s: &'static str) -> DnsLabel {
    DnsLabel::from_str(s).expect("the default claim names are DNS labels")
}

/// What a profile asks of DRA, together: how the NICs arrive, the NVLink domain and placement. A plan keeps
/// it so a workload can take part of it (a two-node UCX test claims the NICs but no NVLink domain) and
/// `roce diff` can say what changed in these terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraSpec {
    /// How the RDMA NICs reach the pod.
    pub nics: NicAttachment,
    /// The NVLink domain the GPUs share across nodes.
    pub nvlink_domain: NvlinkDomain,
    /// Where the pods go.
    pub placement: Placement,
}

impl DraSpec {
    /// This spec without the NVLink domain and placement: the NICs only.
    pub fn nics_only(&self) -> DraSpec {
        DraSpec {
            nics: self.nics.clone(),
            nvlink_domain: NvlinkDomain::None,
            placement: Placement::default(),
        }
    }
}

/// How the RDMA NICs reach the pod (default: Multus NADs and the device-plugin resource, as a profile
/// without `nics`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NicAttachment {
    /// Multus NetworkAttachmentDefinitions plus a device-plugin resource (CoreWeave RoCE): the NADs and the
    /// resource come from the profile's `multus` and `rdma-resource` ([`Profile::pod_wiring`](crate::Profile::pod_wiring)).
    #[default]
    MultusAndResource,
    /// A device-plugin resource only (InfiniBand, AWS EFA without DRA).
    ResourceOnly,
    /// A DRA claim on NIC devices (dranet, a cloud's managed DRANET).
    Dra(DraNics),
    /// The node's own NICs: the pod runs in the host's network namespace (`hostNetwork: true`), so its
    /// netdevs and RDMA devices are the node's, under the node's names; a privileged container reaches the
    /// devices' character nodes, mounted from the host's `/dev/infiniband` (OCI's host-network mode,
    /// [`super::attach::HOST_NETWORK`]). No NADs (Multus attaches nothing to a host-network pod) and no
    /// device-plugin resource.
    HostNetwork,
}

impl NicAttachment {
    /// The DRA claim, when the NICs are DRA devices.
    pub fn dra(&self) -> Option<&DraNics> {
        match self {
            NicAttachment::Dra(nics) => Some(nics),
            _ => None,
        }
    }

    /// Are the NICs the node's own, reached from the host's network namespace?
    pub fn host_network(&self) -> bool {
        matches!(self, NicAttachment::HostNetwork)
    }
}

/// RDMA NICs claimed as DRA devices: one ResourceClaimTemplate, one claim per pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraNics {
    class: DeviceClassName,
    count: NonZeroU32,
    selectors: Vec<CelExpression>,
    gpus: Option<ClaimedGpus>,
    template: K8sName,
    claim: DnsLabel,
}

impl DraNics {
    /// `count` NICs of `class`, claimed through the template `template`; the pod claim is named
    /// [`DEFAULT_NIC_CLAIM`] until [`DraNics::with_claim`] says otherwise.
    pub fn new(class: DeviceClassName, count: NonZeroU32, template: K8sName) -> Self {
        DraNics {
            class,
            count,
            selectors: Vec::new(),
            gpus: None,
            template,
            claim: constant_label(DEFAULT_NIC_CLAIM),
        }
    }

    /// Adds CEL selectors on the devices' attributes; a device must pass all of them.
    pub fn with_selectors(mut self, selectors: Vec<CelExpression>) -> Self {
        self.selectors = selectors;
        self
    }

    /// Claims the pod's GPUs in the same claim.
    pub fn with_gpus(mut self, gpus: ClaimedGpus) -> Self {
        self.gpus = Some(gpus);
        self
    }

    /// Names the pod's claim.
    pub fn with_claim(mut self, claim: DnsLabel) -> Self {
        self.claim = claim;
        self
    }

    /// The NICs' DeviceClass.
    pub fn class(&self) -> &DeviceClassName {
        &self.class
    }

    /// How many NICs each pod gets.
    pub fn count(&self) -> u32 {
        self.count.get()
    }

    /// The CEL selectors.
    pub fn selectors(&self) -> &[CelExpression] {
        &self.selectors
    }

    /// The GPUs claimed with the NICs, if any.
    pub fn gpus(&self) -> Option<&ClaimedGpus> {
        self.gpus.as_ref()
    }

    /// The ResourceClaimTemplate's name.
    pub fn template(&self) -> &K8sName {
        &self.template
    }

    /// The pod's claim name.
    pub fn claim(&self) -> &DnsLabel {
        &self.claim
    }

    /// Whether the GPUs come through this claim too. Then the pod must not also request the GPUs'
    /// extended resource (`nvidia.com/gpu`): DRA and the device plugin would each hand out GPUs.
    pub fn claims_gpus(&self) -> bool {
        self.gpus.is_some()
    }
}

/// GPUs claimed in the NICs' claim (`gpu.nvidia.com`), optionally each aligned with its NICs. A DRA
/// constraint binds only devices of one claim, so alignment needs the GPUs here, as in dranet's aligned
/// examples; dranet's OCI GB200 example claims them here unaligned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedGpus {
    class: DeviceClassName,
    count: NonZeroU32,
    align: Option<AlignBy>,
}

impl ClaimedGpus {
    /// `count` GPUs of `class` (usually [`NVIDIA_GPU_DEVICE_CLASS`]), not aligned.
    pub fn new(class: DeviceClassName, count: NonZeroU32) -> Self {
        ClaimedGpus {
            class,
            count,
            align: None,
        }
    }

    /// Each GPU shares `by` with its NICs.
    pub fn aligned(mut self, by: AlignBy) -> Self {
        self.align = Some(by);
        self
    }

    /// The GPUs' DeviceClass.
    pub fn class(&self) -> &DeviceClassName {
        &self.class
    }

    /// GPUs per pod.
    pub fn count(&self) -> u32 {
        self.count.get()
    }

    /// What each GPU shares with its NICs, if aligned.
    pub fn align(&self) -> Option<AlignBy> {
        self.align
    }
}

/// What an aligned GPU and its NICs share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlignBy {
    /// The NUMA node ([`NUMA_NODE_ATTRIBUTE`]).
    NumaNode,
    /// The PCIe root complex ([`PCIE_ROOT_ATTRIBUTE`]): the path GPUDirect RDMA takes without crossing
    /// the CPU.
    PcieRoot,
}

impl AlignBy {
    /// The profile's spelling (`align="numa-node"`).
    pub fn as_str(self) -> &'static str {
        match self {
            AlignBy::NumaNode => "numa-node",
            AlignBy::PcieRoot => "pcie-root",
        }
    }

    /// The device attribute a `matchAttribute` constraint compares.
    pub fn attribute(self) -> &'static str {
        match self {
            AlignBy::NumaNode => NUMA_NODE_ATTRIBUTE,
            AlignBy::PcieRoot => PCIE_ROOT_ATTRIBUTE,
        }
    }
}

/// The NVLink domain a job's GPUs share across nodes (default: none, as a profile without
/// `nvlink-domain`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NvlinkDomain {
    /// No multi-node NVLink (single-node NVLink only, or none).
    #[default]
    None,
    /// A ComputeDomain: the DRA driver runs IMEX daemons on its nodes and creates the channel's
    /// ResourceClaimTemplate, which each pod claims (GB200/GB300 NVL72).
    ComputeDomain(ComputeDomain),
}

impl NvlinkDomain {
    /// The ComputeDomain, if there is one.
    pub fn compute_domain(&self) -> Option<&ComputeDomain> {
        match self {
            NvlinkDomain::ComputeDomain(cd) => Some(cd),
            NvlinkDomain::None => None,
        }
    }
}

/// A ComputeDomain and the pods' claim on its IMEX channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeDomain {
    name: K8sName,
    num_nodes: u32,
    channel_template: K8sName,
    claim: DnsLabel,
    allocation: ChannelAllocation,
}

impl ComputeDomain {
    /// The ComputeDomain `name` with `numNodes: num_nodes`. Its channel template is `channel_template`, or
    /// `<name>-cd-channel` (the vendor's naming) when `None`; the pod claim is [`DEFAULT_CHANNEL_CLAIM`].
    pub fn new(
        name: K8sName,
        num_nodes: u32,
        channel_template: Option<K8sName>,
    ) -> Result<Self, NameError> {
        let channel_template = match channel_template {
            Some(t) => t,
            None => K8sName::from_str(&format!("{name}-cd-channel"))?,
        };
        Ok(ComputeDomain {
            name,
            num_nodes,
            channel_template,
            claim: constant_label(DEFAULT_CHANNEL_CLAIM),
            allocation: ChannelAllocation::Single,
        })
    }

    /// Names the pod's claim on the channel.
    pub fn with_claim(mut self, claim: DnsLabel) -> Self {
        self.claim = claim;
        self
    }

    /// Asks for every IMEX channel of the domain instead of one.
    pub fn with_allocation(mut self, allocation: ChannelAllocation) -> Self {
        self.allocation = allocation;
        self
    }

    /// The ComputeDomain's name.
    pub fn name(&self) -> &K8sName {
        &self.name
    }

    /// `spec.numNodes`: 0 (recommended by the CRD since IMEX daemons have DNS names) or the job's nodes.
    pub fn num_nodes(&self) -> u32 {
        self.num_nodes
    }

    /// The channel's ResourceClaimTemplate, which the DRA driver creates.
    pub fn channel_template(&self) -> &K8sName {
        &self.channel_template
    }

    /// The pod's claim name.
    pub fn claim(&self) -> &DnsLabel {
        &self.claim
    }

    /// How many channels a pod gets.
    pub fn allocation(&self) -> ChannelAllocation {
        self.allocation
    }
}

/// `spec.channel.allocationMode` of a ComputeDomain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub enum ChannelAllocation {
    /// One IMEX channel (the CRD's default).
    #[default]
    Single,
    /// Every IMEX channel of the domain.
    All,
}

impl ChannelAllocation {
    /// The profile's spelling (`channels="single"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelAllocation::Single => "single",
            ChannelAllocation::All => "all",
        }
    }
}

/// Where the job's pods are placed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    /// Required pod affinity on [`CLIQUE_LABEL`]: all of the job's pods in one NVLink domain.
    pub clique_affinity: Option<CliqueAffinity>,
    /// Kueue Topology Aware Scheduling.
    pub kueue: Option<KueueTopology>,
}

impl Placement {
    /// The node labels this placement keeps the whole job within: what [`rules::clique_affinity_concern`]
    /// compares with [`CLIQUE_LABEL`].
    pub fn together_on(&self) -> Vec<&str> {
        let mut keys = Vec::new();
        if self.clique_affinity.is_some() {
            keys.push(CLIQUE_LABEL);
        }
        if let Some(k) = &self.kueue
            && k.mode == TopologyMode::Required
        {
            keys.push(k.level.as_str());
        }
        keys
    }
}

/// Pod affinity on the NVLink clique, selecting the job's pods by one label the pods carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliqueAffinity {
    /// The label key identifying the job's pods (`metadata.coreweave.cloud/job`).
    pub key: LabelKey,
    /// Its value (`nccl-test`).
    pub value: LabelValue,
}

/// A Kueue TAS request: the level (a node label of the cluster's `Topology`) and how hard it binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KueueTopology {
    /// Required or preferred.
    pub mode: TopologyMode,
    /// The topology level's node label (`nvidia.com/gpu.clique`, `cloud.google.com/gce-topology-block`).
    pub level: LabelKey,
}

/// How a Kueue topology request binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyMode {
    /// [`KUEUE_REQUIRED_TOPOLOGY`].
    Required,
    /// [`KUEUE_PREFERRED_TOPOLOGY`].
    Preferred,
}

impl TopologyMode {
    /// The profile's spelling (`mode="required"`).
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyMode::Required => "required",
            TopologyMode::Preferred => "preferred",
        }
    }

    /// The pod-template annotation key.
    pub fn annotation(self) -> &'static str {
        match self {
            TopologyMode::Required => KUEUE_REQUIRED_TOPOLOGY,
            TopologyMode::Preferred => KUEUE_PREFERRED_TOPOLOGY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn channel_template_defaults_to_the_vendors_naming() {
        let cd = ComputeDomain::new(
            K8sName::from_str("nccl-test-72-gb300-18n-dra").unwrap(),
            0,
            None,
        )
        .unwrap();
        assert_eq!(
            cd.channel_template().as_str(),
            "nccl-test-72-gb300-18n-dra-cd-channel"
        );
        assert_eq!(cd.claim().as_str(), DEFAULT_CHANNEL_CLAIM);
        assert_eq!(cd.allocation(), ChannelAllocation::Single);
    }

    #[test]
    fn a_derived_channel_template_must_still_be_a_valid_name() {
        let name = vec!["a".repeat(60); 4].join(".");
        let cd = ComputeDomain::new(K8sName::from_str(&name).unwrap(), 0, None);
        assert!(cd.unwrap_err().message.contains("DNS-1123 subdomain"));
    }

    #[test]
    fn nics_claim_gpus_only_when_told() {
        let nics = DraNics::new(
            DeviceClassName::from_str("dranet.net").unwrap(),
            n(4),
            K8sName::from_str("nics").unwrap(),
        );
        assert!(!nics.claims_gpus());
        let gpus = ClaimedGpus::new(
            DeviceClassName::from_str(NVIDIA_GPU_DEVICE_CLASS).unwrap(),
            n(4),
        );
        let unaligned = nics.clone().with_gpus(gpus.clone());
        assert!(unaligned.claims_gpus());
        assert_eq!(unaligned.gpus().unwrap().align(), None);
        let aligned = nics.with_gpus(gpus.aligned(AlignBy::PcieRoot));
        assert_eq!(
            aligned.gpus().unwrap().align().map(AlignBy::attribute),
            Some(PCIE_ROOT_ATTRIBUTE)
        );
    }

    #[test]
    fn placement_keeps_the_job_together_on_affinity_and_required_kueue_levels_only() {
        let mut p = Placement::default();
        assert!(p.together_on().is_empty());
        p.kueue = Some(KueueTopology {
            mode: TopologyMode::Preferred,
            level: LabelKey::from_str("cloud.google.com/gce-topology-block").unwrap(),
        });
        assert!(p.together_on().is_empty(), "preferred does not bind");
        p.kueue.as_mut().unwrap().mode = TopologyMode::Required;
        assert_eq!(p.together_on(), ["cloud.google.com/gce-topology-block"]);
        p.clique_affinity = Some(CliqueAffinity {
            key: LabelKey::from_str("app").unwrap(),
            value: LabelValue::from_str("x").unwrap(),
        });
        assert_eq!(
            p.together_on(),
            [CLIQUE_LABEL, "cloud.google.com/gce-topology-block"]
        );
    }
}
