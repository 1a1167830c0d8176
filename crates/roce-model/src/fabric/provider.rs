//! The NCCL network provider: which network NCCL's inter-node traffic goes through, and what that network
//! needs in the pod besides the profile's NCCL settings.
//!
//! NCCL picks its inter-node network at init: a net plugin's network when one loads (`libnccl-net.so`, or
//! `libnccl-net-<NCCL_NET_PLUGIN>.so`, found through `LD_LIBRARY_PATH`), else its internal IB verbs
//! transport, else sockets; `NCCL_NET` forces one by name and makes init fail when it is absent
//! (NCCL's documentation, "Environment Variables", `NCCL_NET`, `NCCL_NET_PLUGIN`). The clouds roce knows
//! use four forms:
//!
//! - **IB verbs** ([`Provider::IbVerbs`], the default): NCCL's own transport over InfiniBand or RoCE
//!   (CoreWeave, Azure ND, OCI, Nebius). Nothing to add.
//! - **aws-ofi-nccl** ([`Provider::Ofi`]): the libfabric plugin, over EFA on AWS. It needs libfabric's
//!   provider (`FI_PROVIDER=efa`) and, for GPUDirect RDMA on EFA, `FI_EFA_USE_DEVICE_RDMA=1`
//!   (aws-samples/awsome-distributed-training `micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml`
//!   50820097; docs.aws.amazon.com/eks/latest/userguide/node-efa.html). The plugin library ships in the
//!   image (`/opt/amazon/ofi-nccl/lib`, or `/opt/aws-ofi-nccl/install/lib` in the older samples), so it
//!   needs `LD_LIBRARY_PATH`, not a host mount.
//! - **gIB** ([`Provider::Gib`]): Google's IB-verbs plugin for A3 Ultra / A4 (RoCE). GKE installs it on the
//!   host (`/home/kubernetes/bin/gib`, by the `nccl-rdma-installer` DaemonSet); the pod mounts it at
//!   `/usr/local/gib`, and `NCCL_NET=gIB` makes NCCL use it or fail
//!   (GoogleCloudPlatform/container-engine-accelerators `gpudirect-rdma/nccl-test.yaml` 4e8691a, whose
//!   `set_nccl_env.sh` exports `NCCL_NET=gIB`).
//! - **a plugin by name** ([`Provider::Plugin`]): any other net plugin, forced with `NCCL_NET=<name>`.
//!
//! What the profile adds for a provider (its `nccl-net` block: library path, host mounts, env, pod
//! annotations) is [`NcclNet`]; [`provider_env`] is the environment it contributes, in emit order.

use indexmap::IndexMap;

use super::FabricKind;
use crate::names::{DnsLabel, EnvKey, K8sName};
use crate::source::{Origin, Spanned};

/// `NCCL_NET`: the network NCCL must use ([`super::env::NCCL_NET`]).
pub const NCCL_NET: &str = super::env::NCCL_NET;
/// `LD_LIBRARY_PATH`: where the dynamic loader finds the net plugin (`dlopen("libnccl-net.so")`).
pub const LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
/// `FI_PROVIDER`: the libfabric provider aws-ofi-nccl opens (`efa` on AWS).
pub const FI_PROVIDER: &str = "FI_PROVIDER";
/// `FI_EFA_USE_DEVICE_RDMA`: `1` lets the EFA provider read and write GPU memory directly (GPUDirect RDMA,
/// p4d and later).
pub const FI_EFA_USE_DEVICE_RDMA: &str = "FI_EFA_USE_DEVICE_RDMA";
/// `FI_EFA_FORK_SAFE`: `1` makes libfabric's EFA provider safe for processes that fork (Python data loaders).
pub const FI_EFA_FORK_SAFE: &str = "FI_EFA_FORK_SAFE";
/// The prefix of every libfabric variable (`fi_param_get`: `FI_<NAME>`, `FI_<PROV>_<NAME>`).
pub const FI_PREFIX: &str = "FI_";
/// The prefix of aws-ofi-nccl's own parameters (`OFI_NCCL_PARAM(…, "PROTOCOL", …)` reads
/// `OFI_NCCL_PROTOCOL`, `include/nccl_ofi_param.h`).
pub const OFI_PARAM_PREFIX: &str = "OFI_NCCL_";
/// The libfabric provider for AWS EFA.
pub const EFA_PROVIDER: &str = "efa";
/// The device-plugin resource that gives a pod EFA interfaces (aws-efa-k8s-device-plugin): one per EFA
/// device, so the count is the instance's EFA count (32 on p5.48xlarge), not a boolean gate.
pub const EFA_RESOURCE: &str = "vpc.amazonaws.com/efa";
/// gIB's network name, what `NCCL_NET` must say for NCCL to use it ([`super::nccl::NET_GIB`]).
pub const GIB_NET: &str = super::nccl::NET_GIB.name;
/// Where GKE's installer puts the gIB plugin on the host.
pub const GIB_HOST_DIR: &str = "/home/kubernetes/bin/gib";
/// Where GKE's samples mount [`GIB_HOST_DIR`] in the container.
pub const GIB_MOUNT_DIR: &str = "/usr/local/gib";
/// The GKE pod annotation that maps pod interfaces to VPC networks (multi-networking).
pub const GKE_INTERFACES_ANNOTATION: &str = "networking.gke.io/interfaces";
/// The GKE pod annotation that names the pod's default interface.
pub const GKE_DEFAULT_INTERFACE_ANNOTATION: &str = "networking.gke.io/default-interface";

/// Which network NCCL's inter-node traffic uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Provider {
    /// NCCL's internal IB verbs transport (InfiniBand, RoCE): the default.
    IbVerbs,
    /// aws-ofi-nccl over libfabric (EFA).
    Ofi,
    /// Google's gIB plugin.
    Gib,
    /// Another net plugin, forced by its network name.
    Plugin(String),
}

impl Provider {
    /// The profile spelling: `ib`, `ofi`, `gib`, `plugin`.
    pub fn as_str(&self) -> &str {
        match self {
            Provider::IbVerbs => "ib",
            Provider::Ofi => "ofi",
            Provider::Gib => "gib",
            Provider::Plugin(_) => "plugin",
        }
    }

    /// What it is, in words (`roce diff`'s summary).
    pub fn describe(&self) -> String {
        match self {
            Provider::IbVerbs => "NCCL's internal IB verbs transport".to_string(),
            Provider::Ofi => "aws-ofi-nccl over libfabric (EFA)".to_string(),
            Provider::Gib => "Google's gIB plugin".to_string(),
            Provider::Plugin(name) => format!("the net plugin `{name}`"),
        }
    }

    /// The `NCCL_NET` value this provider forces, if any. gIB and named plugins are forced (NCCL fails
    /// instead of falling back to sockets); IB verbs needs nothing, and aws-ofi-nccl is left to load as
    /// NCCL's default plugin, because its network name changed across releases (`AWS Libfabric`,
    /// `Libfabric`).
    pub fn nccl_net(&self) -> Option<&str> {
        match self {
            Provider::IbVerbs | Provider::Ofi => None,
            Provider::Gib => Some(GIB_NET),
            Provider::Plugin(name) => Some(name),
        }
    }

    /// Variables this provider does not work without, which the profile must set (its `env` block): the
    /// [`EnvNeed::required`] ones of [`Provider::env_needs`].
    pub fn required_env(&self) -> Vec<&'static str> {
        self.env_needs()
            .iter()
            .filter(|n| n.required)
            .map(|n| n.name)
            .collect()
    }

    /// The variables this provider reads with the value it needs: what `check` asks of a profile and
    /// `lint` of a manifest.
    pub fn env_needs(&self) -> &'static [EnvNeed] {
        match self {
            Provider::Ofi => OFI_ENV,
            Provider::IbVerbs | Provider::Gib | Provider::Plugin(_) => &[],
        }
    }

    /// The kernel driver of the RDMA devices this provider drives, when it is not any verbs device:
    /// aws-ofi-nccl's libfabric `efa` provider opens EFA devices only ([`EFA_DRIVER`]).
    pub fn device_driver(&self) -> Option<&'static str> {
        match self {
            Provider::Ofi => Some(EFA_DRIVER),
            Provider::IbVerbs | Provider::Gib | Provider::Plugin(_) => None,
        }
    }

    /// The extended resource that hands the pod this provider's devices one per device, so its count is the
    /// number of devices the pod gets (`vpc.amazonaws.com/efa`), when the provider has one.
    pub fn device_resource(&self) -> Option<&'static str> {
        match self {
            Provider::Ofi => Some(EFA_RESOURCE),
            Provider::IbVerbs | Provider::Gib | Provider::Plugin(_) => None,
        }
    }

    /// Does a container that asks for `have` of this provider's per-device resource get its share of a node
    /// whose `want` devices serve `node_gpus` GPUs, given it asks for `pod_gpus` of them? The whole count,
    /// or the same fraction of it as of the GPUs: the device plugin hands out whole devices and the
    /// scheduler fits pods while the node's count lasts, so a pod with 4 of a p5's 8 GPUs and 16 of its 32
    /// EFA devices has as many devices per GPU as a whole-node pod, and two such pods share the node.
    ///
    /// ```
    /// use roce_model::fabric::provider::Provider;
    /// assert!(Provider::Ofi.device_share(16, 32, 8, Some(4)));
    /// assert!(Provider::Ofi.device_share(32, 32, 8, Some(8)));
    /// assert!(!Provider::Ofi.device_share(16, 32, 8, Some(8))); // a whole node's GPUs, half its devices
    /// assert!(!Provider::Ofi.device_share(16, 32, 8, None));
    /// ```
    pub fn device_share(
        &self,
        have: u64,
        want: u64,
        node_gpus: u32,
        pod_gpus: Option<u64>,
    ) -> bool {
        if have == want {
            return true;
        }
        let node = u64::from(node_gpus);
        self.device_resource().is_some()
            && pod_gpus.is_some_and(|g| g > 0 && g < node && have * node == want * g)
    }

    /// Whether NCCL needs a net plugin library for this provider (every provider but its own IB verbs).
    pub fn loads_plugin(&self) -> bool {
        !matches!(self, Provider::IbVerbs)
    }

    /// Whether NCCL uses its own IB verbs transport, so `NCCL_IB_*` variables apply. gIB is built on IB
    /// verbs and reads them too; aws-ofi-nccl does not: NCCL's IB transport (`src/transport/net_ib.cc`, its
    /// `NCCL_PARAM(Ib…)`) is not used once the plugin loads, and the plugin reads its own `OFI_NCCL_*`
    /// parameters ([`OFI_PARAM_PREFIX`]) and libfabric's `FI_*`.
    pub fn reads_nccl_ib(&self) -> bool {
        !matches!(self, Provider::Ofi)
    }
}

/// The kernel driver of an EFA device: `/sys/class/infiniband/<dev>/device/driver` links to
/// `…/bus/pci/drivers/efa` (`DRV_MODULE_NAME "efa"`, linux `drivers/infiniband/hw/efa/efa.h`). EFA devices
/// are named by their PCI address (`rdmap16s27`, rdma-core's udev rename), so the name says nothing.
pub const EFA_DRIVER: &str = "efa";

/// A variable a provider reads, the value it needs there, and what goes wrong without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvNeed {
    /// The variable.
    pub name: &'static str,
    /// The value the provider needs.
    pub value: &'static str,
    /// Whether the profile must set it (`check` errs without it). The others only older releases need:
    /// leaving them out is a warning, another value an error.
    pub required: bool,
    /// Only on instances with GPUDirect RDMA over EFA ([`efa_device_rdma`]): elsewhere the value aborts.
    pub gdr_only: bool,
    /// What the value does, and what happens without it.
    pub why: &'static str,
}

/// aws-ofi-nccl's variables.
///
/// - `FI_PROVIDER=efa`: libfabric opens only the named provider; another name (`tcp`, `sockets`) runs NCCL
///   over TCP. aws-ofi-nccl sets `efa` itself when it is unset on EC2 (`platform_init`, `src/platform-aws.c`),
///   but releases up to 1.5 and hosts it does not recognise need it (awsome-distributed-training
///   `1.architectures/efa-cheatsheet.md`: "Use for aws-ofi-nccl<=1.5.0").
/// - `FI_EFA_USE_DEVICE_RDMA=1`: the EFA provider uses the device's RDMA read/write, i.e. GPUDirect RDMA;
///   `0` turns it off (libfabric `fi_efa(7)`, "FI_EFA_USE_DEVICE_RDMA"). Since libfabric 1.18 and
///   aws-ofi-nccl 1.7 it is the default where the device supports it; aws-ofi-nccl 1.6 needs it set
///   (efa-cheatsheet.md: "Do not set for libfabric>=1.18.0 and aws-ofi-nccl>=1.7.0").
pub const OFI_ENV: &[EnvNeed] = &[
    EnvNeed {
        name: FI_PROVIDER,
        value: EFA_PROVIDER,
        required: true,
        gdr_only: false,
        why: "libfabric opens only the provider it names: another one (`tcp`, `sockets`) runs NCCL over TCP, and releases up to aws-ofi-nccl 1.5 do not choose `efa` themselves",
    },
    EnvNeed {
        name: FI_EFA_USE_DEVICE_RDMA,
        value: "1",
        required: false,
        gdr_only: true,
        why: "it lets the EFA provider read and write GPU memory directly (GPUDirect RDMA): `0` turns that off, and aws-ofi-nccl 1.6 with libfabric before 1.18 does not turn it on by itself",
    },
];

/// Whether an EC2 instance type does GPUDirect RDMA over EFA, as aws-ofi-nccl's platform table says
/// (`gdr_required` in `platform_data_map`, `src/platform-aws.c`): `p4d.24xlarge`, `p4de.24xlarge` and
/// `p5` and later (`^p([5-9]|[0-9]{2,})`). `None`: no instance type to judge by.
///
/// ```
/// use roce_model::fabric::provider::efa_device_rdma;
/// assert_eq!(efa_device_rdma(Some("p5.48xlarge")), Some(true));
/// assert_eq!(efa_device_rdma(Some("p5en.48xlarge")), Some(true));
/// assert_eq!(efa_device_rdma(Some("p3dn.24xlarge")), Some(false));
/// assert_eq!(efa_device_rdma(None), None);
/// ```
pub fn efa_device_rdma(instance_type: Option<&str>) -> Option<bool> {
    let t = instance_type?;
    if t == "p4d.24xlarge" || t == "p4de.24xlarge" {
        return Some(true);
    }
    // `p` followed by a generation of 5..9 or two or more digits.
    let generation: String = t
        .strip_prefix('p')
        .unwrap_or_default()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some(generation.len() >= 2 || generation.parse::<u32>().is_ok_and(|g| g >= 5))
}

/// Does `NAME=value` ask libfabric for an EFA device? `FI_PROVIDER` naming `efa` (libfabric opens only the
/// providers the comma list names, and none of a `^` list: `ofi_create_filter`, `src/fabric.c`), or
/// `FI_EFA_USE_DEVICE_RDMA` true (read with `fi_param_get_bool`, which takes `1`/`true`/`yes`/`on`: the
/// device's RDMA read and write, asked of the device itself). Without an EFA device the efa provider
/// registers nothing (`efa_device_list_initialize`, `prov/efa/src/efa_device.c`, returns `-FI_ENODEV`),
/// so `fi_getinfo` finds no efa provider and aws-ofi-nccl does not start (`Couldn't find any optimal
/// provider`).
///
/// ```
/// use roce_model::fabric::provider::asks_for_efa;
/// assert!(asks_for_efa("FI_PROVIDER", "efa"));
/// assert!(asks_for_efa("FI_EFA_USE_DEVICE_RDMA", "1"));
/// assert!(!asks_for_efa("FI_PROVIDER", "^efa"));
/// assert!(!asks_for_efa("FI_PROVIDER", "tcp"));
/// assert!(!asks_for_efa("FI_EFA_USE_DEVICE_RDMA", "0"));
/// ```
pub fn asks_for_efa(name: &str, value: &str) -> bool {
    let value = value.trim();
    match name {
        FI_PROVIDER => {
            !value.starts_with('^')
                && value
                    .split(',')
                    .any(|p| p.trim().eq_ignore_ascii_case(EFA_PROVIDER))
        }
        FI_EFA_USE_DEVICE_RDMA => ["1", "true", "yes", "on"]
            .iter()
            .any(|t| value.eq_ignore_ascii_case(t)),
        _ => false,
    }
}

/// What the artifacts call the fabric: `EFA` when NCCL reaches it through aws-ofi-nccl (EFA is modelled as
/// `fabric infiniband`: verbs devices from a device plugin, no Multus, no RoCE GIDs, but it is not
/// InfiniBand), else the link: `RoCE` or `InfiniBand`.
///
/// ```
/// use roce_model::fabric::provider::{fabric_name, Provider};
/// use roce_model::model::FabricKind;
/// assert_eq!(fabric_name(FabricKind::InfiniBand, &Provider::Ofi), "EFA");
/// assert_eq!(fabric_name(FabricKind::Roce, &Provider::Gib), "RoCE");
/// ```
pub fn fabric_name(kind: FabricKind, provider: &Provider) -> &'static str {
    match provider {
        Provider::Ofi => "EFA",
        _ => link_name(kind),
    }
}

/// The link's name: `RoCE` or `InfiniBand`.
pub fn link_name(kind: FabricKind) -> &'static str {
    match kind {
        FabricKind::Roce => "RoCE",
        FabricKind::InfiniBand => "InfiniBand",
    }
}

/// A host directory mounted read-only into the workload container (a net plugin the node installs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMount {
    /// The volume name (a DNS label).
    pub name: DnsLabel,
    /// The directory on the node.
    pub host_path: String,
    /// Where the container sees it.
    pub mount_path: String,
}

/// What GKE's NVIDIA GPU device plugin mounts into every container it gives `nvidia.com/gpu`: the node's
/// driver installation `/home/kubernetes/bin/nvidia` (its `-host-path`) at `/usr/local/nvidia` (its
/// `-container-path`; GoogleCloudPlatform/container-engine-accelerators `cmd/nvidia_gpu/nvidia_gpu.go`).
pub const GKE_GPU_PLUGIN_MOUNT: (&str, &str) = ("/home/kubernetes/bin/nvidia", "/usr/local/nvidia");

/// Does a container that requests `nvidia.com/gpu` get this host directory at this path from the GPU device
/// plugin, with no volume of its own ([`GKE_GPU_PLUGIN_MOUNT`])?
pub fn mounted_with_gpus(host_path: &str, mount_path: &str) -> bool {
    let (host, container) = GKE_GPU_PLUGIN_MOUNT;
    host_path.trim_end_matches('/') == host && mount_path.trim_end_matches('/') == container
}

/// `NCCL_TOPO_FILE`: an XML topology NCCL reads instead of probing (Azure ND v5: the VM's PCI topology is not
/// what NCCL detects inside a VM; Azure/azhpc-images ships `topology/ndv5-topo.xml`).
pub const NCCL_TOPO_FILE: &str = "NCCL_TOPO_FILE";
/// The volume a topology file's ConfigMap is mounted from.
pub const TOPOLOGY_VOLUME: &str = "nccl-topology";
/// The directory a topology file goes in when the profile names no path.
pub const TOPOLOGY_DIR: &str = "/etc/nccl/topology";

/// A topology file for NCCL from a ConfigMap the cluster holds: the one key mounted read-only as a file
/// (`subPath`) at `path`, and `NCCL_TOPO_FILE` names it. The same path serves nodes without Kubernetes
/// (Slurm on the cloud's VM image, which installs the file there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyFile {
    /// The ConfigMap.
    pub config_map: K8sName,
    /// Its key holding the XML (a file name).
    pub key: String,
    /// The file's path in the container and on the nodes: `NCCL_TOPO_FILE`'s value.
    pub path: String,
}

impl TopologyFile {
    /// The file's path: `NCCL_TOPO_FILE`'s value.
    pub fn path(&self) -> String {
        self.path.clone()
    }
}

/// Whether `key` is a ConfigMap key Kubernetes accepts (`[-._a-zA-Z0-9]+`, at most 253 characters) that is
/// also a plain file name (not `.` or `..`).
pub fn is_config_map_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

/// A profile's `nccl-net` block: the provider and what it needs in the pod.
#[derive(Debug, Clone, PartialEq)]
pub struct NcclNet {
    /// The provider.
    pub provider: Spanned<Provider>,
    /// `LD_LIBRARY_PATH` for the container: where the plugin and its libraries are.
    pub library_path: Option<Spanned<String>>,
    /// Host directories mounted read-only, in author order.
    pub host_mounts: Vec<Spanned<HostMount>>,
    /// The provider's variables (`FI_*`, …), in author order.
    pub env: IndexMap<EnvKey, Spanned<String>>,
    /// Pod annotations the cloud's attachment needs (GKE `networking.gke.io/interfaces`), in author order.
    pub pod_annotations: IndexMap<String, Spanned<String>>,
    /// A topology file from a ConfigMap (`NCCL_TOPO_FILE`).
    pub topology: Option<Spanned<TopologyFile>>,
}

/// NCCL's IB verbs, nothing added (at the blank's place: the walker gives it the profile's).
impl Default for NcclNet {
    fn default() -> Self {
        NcclNet::ib_verbs(Origin::default())
    }
}

impl NcclNet {
    /// The default: NCCL's IB verbs, nothing added.
    pub fn ib_verbs(origin: Origin) -> Self {
        NcclNet {
            provider: Spanned::new(Provider::IbVerbs, origin),
            library_path: None,
            host_mounts: Vec::new(),
            env: IndexMap::new(),
            pod_annotations: IndexMap::new(),
            topology: None,
        }
    }

    /// Whether the block adds nothing (the IB-verbs default, written or not).
    pub fn is_default(&self) -> bool {
        self.provider.value == Provider::IbVerbs
            && self.library_path.is_none()
            && self.host_mounts.is_empty()
            && self.env.is_empty()
            && self.pod_annotations.is_empty()
            && self.topology.is_none()
    }

    /// Whether the cloud attaches the RDMA NICs through the block's pod annotations (GKE multi-networking:
    /// `networking.gke.io/interfaces` maps pod interfaces to RDMA VPC networks), so the pod needs neither
    /// Multus NADs nor an RDMA device-plugin resource.
    pub fn attaches_nics(&self) -> bool {
        self.pod_annotations.contains_key(GKE_INTERFACES_ANNOTATION)
    }

    /// The required variables ([`Provider::required_env`]) the block does not set.
    pub fn missing_env(&self) -> Vec<&'static str> {
        self.provider
            .value
            .required_env()
            .into_iter()
            .filter(|name| !self.env.keys().any(|k| k.as_str() == *name))
            .collect()
    }

    /// The directories of the block's library path (`LD_LIBRARY_PATH`), in order.
    pub fn library_dirs(&self) -> Vec<&str> {
        self.library_path.as_ref().map_or_else(Vec::new, |p| {
            p.value.split(':').filter(|d| !d.is_empty()).collect()
        })
    }
}

/// One variable the provider contributes: name, value, where the profile set it.
pub type ProviderVar = (String, String, Origin);

/// The provider's environment, in emit order: `NCCL_NET` (when the provider forces one), `LD_LIBRARY_PATH`
/// (the library path), `NCCL_TOPO_FILE` (the topology file), then the block's env in author order.
pub fn provider_env(net: &NcclNet) -> Vec<ProviderVar> {
    let mut out = Vec::new();
    if let Some(name) = net.provider.value.nccl_net() {
        out.push((NCCL_NET.to_string(), name.to_string(), net.provider.origin));
    }
    if let Some(p) = &net.library_path {
        out.push((LD_LIBRARY_PATH.to_string(), p.value.clone(), p.origin));
    }
    if let Some(t) = &net.topology {
        out.push((NCCL_TOPO_FILE.to_string(), t.value.path(), t.origin));
    }
    for (k, v) in &net.env {
        out.push((k.to_string(), v.value.clone(), v.origin));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_force_the_network_they_need() {
        assert_eq!(Provider::Gib.nccl_net(), Some("gIB"));
        assert_eq!(Provider::IbVerbs.nccl_net(), None);
        assert_eq!(Provider::Ofi.nccl_net(), None);
        assert_eq!(Provider::Plugin("x".into()).nccl_net(), Some("x"));
        assert_eq!(Provider::Ofi.required_env(), [FI_PROVIDER]);
        assert_eq!(Provider::Ofi.device_driver(), Some(EFA_DRIVER));
        assert_eq!(Provider::Gib.device_driver(), None);
        assert!(Provider::Gib.loads_plugin() && !Provider::IbVerbs.loads_plugin());
        assert!(!Provider::Ofi.reads_nccl_ib());
        assert!(NcclNet::ib_verbs(Origin::new(crate::source::SourceId(0), 0..0)).is_default());
    }
}

#[cfg(test)]
mod walk_tests {
    use super::*;
    use crate::{BuiltinsOnly, Code, Format, Source, load};

    fn load_text(text: &str) -> crate::Loaded {
        load(
            Source::with_format("t.kdl", text, Format::Kdl),
            &BuiltinsOnly,
        )
    }

    #[test]
    fn a_topology_file_sets_nccl_topo_file_and_its_path() {
        let p = load_text(
            r#"profile "t/t" extends="coreweave/h100-ib" { nccl-net "ib" { topology-file configmap="topo" key="h100.xml" } }"#,
        )
        .profile
        .expect("loads");
        let t = &p.nccl_net.topology.as_ref().unwrap().value;
        assert_eq!(
            t.path, "/etc/nccl/topology/h100.xml",
            "the default directory"
        );
        let env = provider_env(&p.nccl_net);
        assert!(
            env.iter()
                .any(|(k, v, _)| k == NCCL_TOPO_FILE && v == "/etc/nccl/topology/h100.xml")
        );
        // a path of its own, for nodes whose VM image installs the file there
        let p = load_text(
            r#"profile "t/t" extends="coreweave/h100-ib" { nccl-net "ib" { topology-file configmap="topo" key="h100.xml" path="/opt/x/h100.xml" } }"#,
        )
        .profile
        .unwrap();
        assert_eq!(p.nccl_net.topology.unwrap().value.path, "/opt/x/h100.xml");
        // a key that is no file name, a relative path, a missing ConfigMap: refused with a span
        for bad in [
            r#"topology-file configmap="topo" key="a/b.xml""#,
            r#"topology-file configmap="topo" key="h.xml" path="x.xml""#,
            r#"topology-file key="h.xml""#,
            r#"topology-file configmap="Not_A_Name" key="h.xml""#,
        ] {
            let l = load_text(&format!(
                r#"profile "t/t" extends="coreweave/h100-ib" {{ nccl-net "ib" {{ {bad} }} }}"#
            ));
            assert!(l.profile.is_none(), "{bad}");
            let codes: Vec<Code> = l.problems.iter().map(|p| p.code).collect();
            assert!(
                !codes.is_empty() && !codes.contains(&Code::Syntax),
                "{bad}: {codes:?}"
            );
        }
        // the same variable again in the knobs is set twice
        let l = load_text(
            "profile \"t/t\" extends=\"coreweave/h100-ib\" {\n  nccl { knobs { NCCL_TOPO_FILE \"/x.xml\" } }\n  nccl-net \"ib\" { topology-file configmap=\"topo\" key=\"h.xml\" }\n}\n",
        );
        assert!(
            l.problems
                .iter()
                .any(|p| p.code == Code::EnvShadowsGenerated),
            "{:?}",
            l.problems.iter().map(|p| p.code).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_layer_switches_the_provider_and_keeps_the_rest() {
        let l =
            load_text(r#"profile "t/p" extends="gcp/a3-ultra" { nccl-net "plugin" name="MyNet" }"#);
        let p = l.profile.expect("loads");
        assert_eq!(p.nccl_net.provider.value, Provider::Plugin("MyNet".into()));
        let env = provider_env(&p.nccl_net);
        assert_eq!((env[0].0.as_str(), env[0].1.as_str()), (NCCL_NET, "MyNet"));
        assert_eq!(env[1].0, LD_LIBRARY_PATH);
        assert_eq!(p.nccl_net.host_mounts.len(), 2, "inherited");
        assert!(p.nccl_net.attaches_nics());
        assert_eq!(p.node_pool.rdma_resource_count, None);
        let efa = load_text(r#"profile "t/p" extends="aws/p5-efa" {}"#)
            .profile
            .unwrap();
        assert_eq!(efa.node_pool.rdma_resource_count.map(|c| c.value), Some(32));
    }

    #[test]
    fn the_walker_refuses_what_the_block_cannot_mean() {
        for (text, code) in [
            (r#"nccl-net "plugin""#, Code::InvalidValue),
            (r#"nccl-net "verbs""#, Code::InvalidValue),
            (
                r#"nccl-net "gib" { host-mounts { gib host-path="home/gib" mount-path="/usr/local/gib" } }"#,
                Code::InvalidValue,
            ),
            (
                r#"nccl-net "gib" { host-mounts { Gib host-path="/a" mount-path="/b" } }"#,
                Code::InvalidValue,
            ),
            (r#"nccl-net "ofi" { libary-path "/x" }"#, Code::UnknownKey),
        ] {
            let l = load_text(&format!(
                r#"profile "t/p" extends="coreweave/h100-ib" {{ {text} }}"#
            ));
            assert!(
                l.problems.iter().any(|p| p.code == code),
                "{text}: {:?}",
                l.problems.iter().map(|p| p.code).collect::<Vec<_>>()
            );
        }
    }
}
