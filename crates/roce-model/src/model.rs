//! The validated, typed profile.
//!
//! Values that came from the profile text are [`Spanned`], so rules and later stages can point back at
//! the line that set them (following `extends`: the origin names the layer's source). Equality ignores
//! spans, so the KDL and YAML forms of one profile compare equal.

use indexmap::IndexMap;

pub use crate::fabric::FabricKind;
use crate::fabric::attach::PodWiring;
use crate::fabric::dra::{DraNics, NicAttachment, NvlinkDomain, Placement};
use crate::fabric::env::{
    self, Consumer, EnvVar, NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE,
    NCCL_IB_DATA_DIRECT, NCCL_IB_GID_INDEX, NCCL_IB_HCA, NCCL_IB_TC, NCCL_NET_PLUGIN,
    NCCL_SOCKET_IFNAME, UCX_IB_GID_INDEX, UCX_MAX_RMA_RAILS, UCX_NET_DEVICES, UCX_TLS, consumer_of,
};
pub use crate::fabric::nccl_versions::NcclRelease;
pub use crate::fabric::observe::{Inspector, InspectorFormat};
pub use crate::fabric::provider::NcclNet;
pub use crate::fabric::ucx::UcxMode;
pub use crate::names::NadRef;
use crate::names::{Capability, DnsLabel, EnvKey, IfName, K8sName, ResourceName};
use crate::nccl_list::ListKind;
pub use crate::nccl_list::NcclList;
use crate::source::Spanned;
use crate::ucx_list::{UcxNetDevices, UcxTls};

/// A fabric profile: everything roce needs to wire GPUDirect RDMA into a workload. The default is the
/// walker's blank, which a loaded profile never is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Profile {
    /// `team/name`.
    pub name: Spanned<String>,
    /// One line for humans.
    pub description: Option<Spanned<String>>,
    /// The profile this one extends (already applied).
    pub extends: Option<Spanned<String>>,
    /// Production profiles warn on debug settings. Default: true.
    pub production: Spanned<bool>,
    /// The backend fabric.
    pub fabric: Fabric,
    /// Where the pods run.
    pub node_pool: NodePool,
    /// The RDMA rails (NIC × port) and how their names are spelled.
    pub rails: Rails,
    /// How rail interfaces reach the pod's network namespace.
    pub multus: Multus,
    /// NCCL settings.
    pub nccl: Nccl,
    /// UCX settings (MPI, NIXL).
    pub ucx: Ucx,
    /// Facts about the container image.
    pub image: Image,
    /// Job sizing.
    pub job: Job,
    /// Linux capabilities added to the workload container (`IPC_LOCK`).
    pub capabilities: Vec<Spanned<Capability>>,
    /// Extra environment, in author order.
    pub env: IndexMap<EnvKey, Spanned<String>>,
    /// How the RDMA NICs reach the pod (default: Multus NADs + the device-plugin resource).
    pub nics: Spanned<NicAttachment>,
    /// The NVLink domain the pods share (default: none).
    pub nvlink_domain: Spanned<NvlinkDomain>,
    /// Placement: NVLink-domain affinity, Kueue topology.
    pub placement: Spanned<Placement>,
    /// The NCCL network provider and what it needs in the pod (default: NCCL's IB verbs, nothing added).
    pub nccl_net: NcclNet,
}

/// IP address family for RoCE GID selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrFamily {
    /// IPv4 (`AF_INET`): IPv4-mapped GIDs.
    Ipv4,
    /// IPv6 (`AF_INET6`): global IPv6 GIDs.
    Ipv6,
}

impl AddrFamily {
    /// NCCL's spelling: `AF_INET` or `AF_INET6`.
    pub fn nccl(self) -> &'static str {
        match self {
            AddrFamily::Ipv4 => "AF_INET",
            AddrFamily::Ipv6 => "AF_INET6",
        }
    }
}

/// The backend fabric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fabric {
    /// InfiniBand or RoCE.
    pub kind: Spanned<FabricKind>,
    /// RoCE: address family NCCL uses to pick GIDs.
    pub addr_family: Option<Spanned<AddrFamily>>,
    /// RoCE: CIDR NCCL's GIDs must lie in (e.g. `fd02::/16`).
    pub addr_range: Option<Spanned<String>>,
    /// RoCE: IP traffic class byte (DSCP << 2 | ECN) for RDMA traffic.
    pub traffic_class: Option<Spanned<u8>>,
    /// RoCE: a fixed GID index for NCCL; `None` lets NCCL choose by family and range.
    pub gid_index: Option<Spanned<u32>>,
}

/// Where workloads run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodePool {
    /// Pool (or SUNK NodeSet) name.
    pub name: Spanned<String>,
    /// `node.coreweave.cloud/type` value.
    pub instance_type: Option<Spanned<String>>,
    /// GPUs per node.
    pub gpus_per_node: Spanned<u32>,
    /// Extended resource that gates RDMA scheduling (`rdma/ib`): 1 in requests and limits.
    pub rdma_resource: Option<Spanned<ResourceName>>,
    /// How many of the RDMA resource a pod requests (`rdma-resource "vpc.amazonaws.com/efa" count=32`);
    /// `None` requests 1, the boolean gate.
    pub rdma_resource_count: Option<Spanned<u32>>,
    /// Node labels to require, in author order.
    pub node_labels: IndexMap<String, Spanned<String>>,
    /// A SUNK NodeSet that attaches Multus networks and the RDMA resource itself: jobs get env only.
    pub sunk_nodeset: Spanned<bool>,
    /// Slurm partition (defaults to the pool name).
    pub partition: Option<Spanned<String>>,
    /// The RuntimeClass whose handler is the NVIDIA container runtime, where it is not the nodes' default
    /// (k3s, RKE2): GPU pods must name it (`spec.runtimeClassName`).
    pub runtime_class: Option<Spanned<K8sName>>,
}

/// The RDMA rails: `nics × ports` of them, named by patterns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rails {
    /// NICs per node.
    pub nics: Spanned<u32>,
    /// Ports (planes) per NIC.
    pub ports: Spanned<u32>,
    /// Host netdev pattern (`ibs{nic}p{port}`), used to name per-port NADs.
    pub host_port: Option<Spanned<String>>,
    /// RDMA device names in the pod: a pattern (`ibp{nic}p{port}`) or one name per rail.
    pub pod_device: Spanned<DeviceNames>,
    /// Netdev name in the pod (`net{index}` as Multus names them).
    pub pod_netdev: Option<Spanned<String>>,
    /// Verbs port number of each device (1 on Mellanox).
    pub port_num: Spanned<u32>,
    /// Link rate of one rail in Gb/s (`ibv_devinfo`'s `active_speed` × width: 400 for NDR, 200 for one
    /// ConnectX-8 plane): what `roce explain --profile` derives the expected nccl-tests bus bandwidth from.
    pub link_rate: Option<Spanned<u32>>,
}

/// One rail, with its names expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rail {
    /// 0-based rail index (`nic * ports + port`).
    pub index: u32,
    /// NIC number.
    pub nic: u32,
    /// Port (plane) number.
    pub port: u32,
    /// Host netdev, when the profile names one. `None` also when the pattern expands to an invalid
    /// interface name; `check` reports it (`roce::invalid_value`), so a loaded profile never has one.
    pub host_port: Option<IfName>,
    /// RDMA device name in the pod.
    pub pod_device: String,
    /// Netdev name in the pod, when known (and, like `host_port`, a valid interface name).
    pub pod_netdev: Option<IfName>,
}

impl Rails {
    /// Every rail, NIC-major (`ibs0p0, ibs0p1, …`), with patterns expanded.
    pub fn list(&self) -> Vec<Rail> {
        let ports = self.ports.value;
        (0..self.nics.value)
            .flat_map(|nic| (0..ports).map(move |port| (nic, port)))
            .map(|(nic, port)| {
                let index = nic * ports + port;
                let host_port = self
                    .host_port
                    .as_ref()
                    .and_then(|p| IfName::try_from(expand(p, nic, port, index, None)).ok());
                Rail {
                    index,
                    nic,
                    port,
                    pod_device: self
                        .pod_device
                        .value
                        .name(nic, port, index, host_port.as_deref()),
                    pod_netdev: self.pod_netdev.as_ref().and_then(|p| {
                        IfName::try_from(expand(p, nic, port, index, host_port.as_deref())).ok()
                    }),
                    host_port,
                }
            })
            .collect()
    }
}

/// How the rails' RDMA devices are named in the pod (the default, an empty pattern, is only a blank
/// section's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceNames {
    /// A name pattern, expanded per rail (`ibp{nic}p{port}`, `mlx5_{nic}`).
    Pattern(String),
    /// One name per rail, in rail order: a node's own devices where others break the numbering (OCI's
    /// BM.GPU.H100.8 has its two front-end NICs at `mlx5_2` and `mlx5_11`, between the RoCE ports).
    List(Vec<String>),
}

impl Default for DeviceNames {
    fn default() -> Self {
        DeviceNames::Pattern(String::new())
    }
}

impl DeviceNames {
    /// The device of the rail at `index` (a list shorter than the rails, which `check` reports, gives an
    /// empty name).
    pub fn name(&self, nic: u32, port: u32, index: u32, host_port: Option<&str>) -> String {
        match self {
            DeviceNames::Pattern(p) => expand(p, nic, port, index, host_port),
            DeviceNames::List(names) => usize::try_from(index)
                .ok()
                .and_then(|i| names.get(i))
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// The pattern, when the names are one.
    pub fn pattern(&self) -> Option<&str> {
        match self {
            DeviceNames::Pattern(p) => Some(p),
            DeviceNames::List(_) => None,
        }
    }
}

impl std::fmt::Display for DeviceNames {
    /// The pattern, or the names separated by commas.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceNames::Pattern(p) => f.write_str(p),
            DeviceNames::List(names) => f.write_str(&names.join(",")),
        }
    }
}

/// Expand a name pattern: `{nic}`, `{port}`, `{index}` (0-based), `{index1}` (1-based), `{host-port}`.
///
/// One pass over the pattern; an unknown placeholder, or `{host-port}` without a host port, stays as
/// written (the rules report it).
///
/// ```
/// use roce_model::model::expand;
/// assert_eq!(expand("ibp{nic}p{port}", 2, 3, 11, None), "ibp2p3");
/// assert_eq!(expand("{host-port}-macvlan", 0, 1, 1, Some("ibs0p1")), "ibs0p1-macvlan");
/// assert_eq!(expand("net{index1}/{index}", 0, 0, 4, None), "net5/4");
/// assert_eq!(expand("{host-port}{x}", 0, 0, 0, None), "{host-port}{x}");
/// assert_eq!(expand("a{nic", 1, 0, 0, None), "a{nic");
/// assert_eq!(expand("{index1}", 0, 0, u32::MAX - 1, None), "4294967295");
/// ```
pub fn expand(pattern: &str, nic: u32, port: u32, index: u32, host_port: Option<&str>) -> String {
    // A plain byte scan and digit writer: this runs for every name of every rail on every render; on names
    // this short `memchr`'s vector set-up costs more than it saves, and `str::find(char)` plus `write!`
    // cost about four times as much (callgrind, `render --target pod`).
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(open) = rest.bytes().position(|b| b == b'{') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let Some(close) = tail.bytes().position(|b| b == b'}') else {
            out.push_str(tail);
            return out;
        };
        match &tail[..=close] {
            "{nic}" => push_u32(&mut out, nic),
            "{port}" => push_u32(&mut out, port),
            "{index}" => push_u32(&mut out, index),
            "{index1}" => push_u32(&mut out, index + 1),
            "{host-port}" if host_port.is_some() => out.push_str(host_port.unwrap_or_default()),
            other => out.push_str(other),
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Append the decimal digits of `n`.
fn push_u32(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[i..].iter().for_each(|&d| out.push(char::from(d)));
}

/// The placeholders a name pattern may use.
pub(crate) const PATTERN_PLACEHOLDERS: &[&str] =
    &["{nic}", "{port}", "{index}", "{index1}", "{host-port}"];

/// How the pod gets its rail interfaces.
#[derive(Debug, Clone, PartialEq)]
pub enum Multus {
    /// One NAD per rail port, in rail order.
    PerPort {
        /// Where the NADs live.
        namespace: Spanned<DnsLabel>,
        /// NAD name pattern (`{host-port}-macvlan`); expanded per rail.
        name: Spanned<String>,
        /// An explicit NAD list, checked against the rails.
        nads: Option<Spanned<Vec<Spanned<K8sName>>>>,
        /// Where `multus` was written.
        at: Spanned<()>,
    },
    /// One backend NAD that carries every rail.
    Backend {
        /// Where the NAD lives.
        namespace: Spanned<DnsLabel>,
        /// The NAD name.
        name: Spanned<K8sName>,
        /// Where `multus` was written.
        at: Spanned<()>,
    },
    /// No Multus attachment (InfiniBand, or SUNK NodeSets that attach it themselves).
    None {
        /// Where `multus none` was written, if it was.
        at: Option<Spanned<()>>,
    },
}

/// No attachment, written nowhere (a profile without `multus`).
impl Default for Multus {
    fn default() -> Self {
        Multus::None { at: None }
    }
}

impl Multus {
    /// The NADs to attach, in rail order. A pattern that expands to an invalid name yields no NAD for that
    /// rail; `check` reports it (`roce::invalid_value`), so a loaded profile never has one.
    pub fn nads(&self, rails: &[Rail]) -> Vec<NadRef> {
        match self {
            Multus::PerPort {
                namespace,
                name,
                nads,
                ..
            } => match nads {
                Some(list) => list
                    .value
                    .iter()
                    .map(|n| NadRef::new(namespace.value.clone(), n.value.clone()))
                    .collect(),
                None => rails
                    .iter()
                    .filter_map(|r| {
                        let name =
                            expand(&name.value, r.nic, r.port, r.index, r.host_port.as_deref());
                        Some(NadRef::new(namespace.value.clone(), name.parse().ok()?))
                    })
                    .collect(),
            },
            Multus::Backend {
                namespace, name, ..
            } => vec![NadRef::new(namespace.value.clone(), name.value.clone())],
            Multus::None { .. } => Vec::new(),
        }
    }
}

/// NCCL settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Nccl {
    /// The NCCL release the job runs (`nccl version="2.28"`): what `check` and `diff` judge the variables
    /// by ([`crate::fabric::nccl_versions`]); it changes no rendered artifact.
    pub version: Option<Spanned<NcclRelease>>,
    /// `NCCL_SOCKET_IFNAME`: bootstrap / out-of-band interface.
    pub socket_ifname: Option<NcclList>,
    /// `NCCL_IB_HCA`: which RDMA devices NCCL uses.
    pub ib_hca: Option<NcclList>,
    /// `NCCL_IB_DATA_DIRECT` (2.27+): 0, 1 or 2, whether NCCL uses a NIC's Data Direct DMA device.
    pub ib_data_direct: Option<Spanned<u32>>,
    /// `NCCL_NET_PLUGIN` (`none`, `spcx`, …).
    pub net_plugin: Option<Spanned<String>>,
    /// `NCCL_DEBUG`.
    pub debug: Option<Spanned<String>>,
    /// `NCCL_DEBUG_SUBSYS`.
    pub debug_subsys: Option<Spanned<String>>,
    /// `NCCL_RUN_DIAGNOSTICS=1` when true: NCCL's active diagnostics (2.31+,
    /// [`crate::fabric::observe`]).
    pub diagnostics: Option<Spanned<bool>>,
    /// The Inspector profiler plugin, turned on, with its defaults filled ([`crate::fabric::observe`]).
    pub inspector: Option<Spanned<Inspector>>,
    /// Further `NCCL_*` variables, in author order.
    pub knobs: IndexMap<EnvKey, Spanned<String>>,
}

/// UCX settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ucx {
    /// Off, TCP or RDMA.
    pub mode: Spanned<UcxMode>,
    /// `UCX_TLS`.
    pub tls: Option<UcxTls>,
    /// `UCX_NET_DEVICES`.
    pub net_devices: Option<UcxNetDevices>,
    /// `UCX_IB_GID_INDEX`.
    pub gid_index: Option<Spanned<u32>>,
    /// `UCX_MAX_RMA_RAILS`.
    pub max_rma_rails: Option<Spanned<u32>>,
    /// Least rdma-core the image must ship for UCX RDMA (default 54).
    pub min_rdma_core: Spanned<u32>,
}

/// Facts about the workload image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Image {
    /// rdma-core release the image ships (e.g. 54).
    pub rdma_core: Option<Spanned<u32>>,
}

/// Job sizing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Job {
    /// Nodes per job.
    pub nodes: Option<Spanned<u32>>,
    /// The nccl-tests bus bandwidth (GB/s) this fabric should reach at large messages: what
    /// `roce explain --profile` compares a run's result with.
    pub expected_busbw: Option<Spanned<u32>>,
}

impl Profile {
    /// Every rail with names expanded.
    pub fn rail_list(&self) -> Vec<Rail> {
        self.rails.list()
    }

    /// What artifacts and messages call this profile's fabric (`RoCE`, `InfiniBand`, `EFA`):
    /// [`fabric_name`](crate::fabric::provider::fabric_name).
    pub fn fabric_name(&self) -> &'static str {
        crate::fabric::provider::fabric_name(self.fabric.kind.value, &self.nccl_net.provider.value)
    }

    /// The node's NICs as the line-rate model sees them, when the profile states `rails link-rate`.
    pub fn line_rate(&self) -> Option<crate::fabric::bandwidth::LineRate> {
        let rate = self.rails.link_rate.as_ref()?;
        Some(crate::fabric::bandwidth::LineRate {
            rails: self.rails.nics.value * self.rails.ports.value,
            gbps: f64::from(rate.value),
        })
    }

    /// Do pods on this profile attach networks and resources themselves (not a SUNK NodeSet)?
    pub fn direct_pods(&self) -> bool {
        !self.node_pool.sunk_nodeset.value
    }

    /// GPUs a job of `job nodes=N` uses, if sized.
    pub fn job_gpus(&self) -> Option<u64> {
        self.job
            .nodes
            .as_ref()
            .map(|n| u64::from(n.value) * u64::from(self.node_pool.gpus_per_node.value))
    }
}

/// What a profile asks of the fabric core: its environment and its pods' wiring. The facts are `fabric`'s;
/// these read them for one profile, so the fabric modules never depend on the model.
impl Profile {
    /// The profile's environment in the order every target emits it: NCCL's typed fields (the observability
    /// ones, [`observe_env`](crate::fabric::observe::observe_env), last), NCCL knobs, the
    /// network provider's variables ([`provider_env`](crate::fabric::provider::provider_env)), UCX's typed fields (by UCX mode), then
    /// extra env in author order.
    ///
    /// ```
    /// use roce_model::{builtin, load, BuiltinsOnly};
    /// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
    /// let env = profile.env_vars();
    /// assert_eq!(env[0].name, "NCCL_SOCKET_IFNAME");
    /// assert!(env.iter().any(|v| v.name == "UCX_TLS" && v.value == "tcp"));
    /// ```
    pub fn env_vars(&self) -> Vec<EnvVar> {
        let mut e = env::Env::default();
        let n = &self.nccl;
        if let Some(s) = &n.socket_ifname {
            e.typed(NCCL_SOCKET_IFNAME, &s.text().value, s.text().origin);
        }
        if let Some(h) = &n.ib_hca {
            e.typed(NCCL_IB_HCA, &h.text().value, h.text().origin);
        }
        if let Some(d) = &n.ib_data_direct {
            e.typed(NCCL_IB_DATA_DIRECT, d.value.to_string(), d.origin);
        }
        if self.fabric.kind.value == FabricKind::Roce {
            let f = &self.fabric;
            if let Some(a) = &f.addr_family {
                e.typed(NCCL_IB_ADDR_FAMILY, a.value.nccl(), a.origin);
            }
            if let Some(r) = &f.addr_range {
                e.typed(NCCL_IB_ADDR_RANGE, &r.value, r.origin);
            }
            if let Some(tc) = &f.traffic_class {
                e.typed(NCCL_IB_TC, tc.value.to_string(), tc.origin);
            }
            if let Some(g) = &f.gid_index {
                e.typed(NCCL_IB_GID_INDEX, g.value.to_string(), g.origin);
            }
        }
        for (t, v) in [
            (NCCL_NET_PLUGIN, &n.net_plugin),
            (NCCL_DEBUG, &n.debug),
            (NCCL_DEBUG_SUBSYS, &n.debug_subsys),
        ] {
            if let Some(v) = v {
                e.typed(t, &v.value, v.origin);
            }
        }
        // NCCL's own observability: diagnostics and the Inspector profiler plugin.
        let inspector = n.inspector.as_ref().map(|i| &i.value);
        for (name, value, origin) in
            crate::fabric::observe::observe_env(n.diagnostics.as_ref(), inspector)
        {
            e.push(name, value, env::Consumer::Nccl, origin);
        }
        for (k, v) in &n.knobs {
            e.push(k, &v.value, Consumer::Nccl, v.origin);
        }
        // The network provider's variables: `NCCL_NET`, `LD_LIBRARY_PATH`, `FI_*` (none for IB verbs).
        for (name, value, origin) in crate::fabric::provider::provider_env(&self.nccl_net) {
            e.push(&name, value, consumer_of(&name), origin);
        }
        let u = &self.ucx;
        if u.mode.value != UcxMode::Off {
            match (&u.tls, u.mode.value) {
                (Some(t), _) => e.typed(UCX_TLS, &t.text().value, t.text().origin),
                // TCP mode pins the transport even when the author names none.
                (None, UcxMode::Tcp) => e.typed(UCX_TLS, "tcp", u.mode.origin),
                (None, _) => {}
            }
            if let Some(d) = &u.net_devices {
                e.typed(UCX_NET_DEVICES, &d.text().value, d.text().origin);
            }
        }
        if u.mode.value == UcxMode::Rdma {
            if let Some(g) = u.gid_index.or(self.fabric.gid_index) {
                e.typed(UCX_IB_GID_INDEX, g.value.to_string(), g.origin);
            }
            if let Some(r) = &u.max_rma_rails {
                e.typed(UCX_MAX_RMA_RAILS, r.value.to_string(), r.origin);
            }
        }
        for (k, v) in &self.env {
            e.push(k, &v.value, Consumer::Other, v.origin);
        }
        e.0
    }

    /// The wiring a profile's pods need, or `None` when a SUNK NodeSet attaches the fabric itself (jobs on it
    /// get env only). The RDMA resource is a scheduling gate: `1` in requests and limits, whatever the rails,
    /// unless the profile gives a count (EFA's device plugin hands out one resource per interface).
    ///
    /// How the NICs arrive decides the rest ([`NicAttachment`]): Multus NADs plus the resource; the resource
    /// only (no NADs, whatever `multus` says); a DRA claim, which brings the devices itself (neither NADs
    /// nor the device-plugin resource; the claims are roce-render's `dra::wiring`); or the host's own
    /// NICs (neither: [`Profile::host_network`] says what the pod needs instead).
    pub fn pod_wiring(&self) -> Option<PodWiring> {
        self.pod_wiring_for(&self.rail_list())
    }

    /// [`Profile::pod_wiring`] for the rails [`Profile::rail_list`] returned, for a caller that has them
    /// already (expanding every rail's names is most of the work).
    pub fn pod_wiring_for(&self, rails: &[Rail]) -> Option<PodWiring> {
        let nics = &self.nics.value;
        self.direct_pods().then(|| PodWiring {
            networks: match nics {
                NicAttachment::MultusAndResource => self.multus.nads(rails),
                NicAttachment::ResourceOnly
                | NicAttachment::Dra(_)
                | NicAttachment::HostNetwork => Vec::new(),
            },
            resources: match nics {
                NicAttachment::Dra(_) | NicAttachment::HostNetwork => Vec::new(),
                _ => self
                    .node_pool
                    .rdma_resource
                    .iter()
                    .map(|r| {
                        let count = self.node_pool.rdma_resource_count.map_or(1, |c| c.value);
                        (r.value.clone(), count.to_string())
                    })
                    .collect(),
            },
            capabilities: self.capabilities.iter().map(|c| c.value.clone()).collect(),
        })
    }

    /// Do the profile's pods run in the node's network namespace with its RDMA devices ([`HOST_NETWORK`](crate::fabric::attach::HOST_NETWORK))? Not
    /// on a SUNK NodeSet, whose pods the NodeSet wires.
    pub fn host_network(&self) -> bool {
        self.direct_pods() && self.nics.value.host_network()
    }

    /// Whether the pods request GPUs as the `nvidia.com/gpu` resource: not when a DRA claim already allocates
    /// them (aligned with the NICs), since the same GPUs would then be asked for twice.
    pub fn requests_gpu_resource(&self) -> bool {
        !self.nics.value.dra().is_some_and(DraNics::claims_gpus)
    }
}

/// The kind of list each NCCL list field holds.
pub(crate) fn nccl_list_kind(env: &str) -> ListKind {
    if env == "NCCL_IB_HCA" {
        ListKind::IbHca
    } else {
        ListKind::SocketIfname
    }
}

#[cfg(test)]
mod expand_tests {
    use super::expand;
    use proptest::prelude::*;

    /// `expand` as first written (`str::find` and `write!`), the reference for the byte-level version.
    fn reference(
        pattern: &str,
        nic: u32,
        port: u32,
        index: u32,
        host_port: Option<&str>,
    ) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let mut rest = pattern;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let tail = &rest[open..];
            let Some(close) = tail.find('}') else {
                out.push_str(tail);
                return out;
            };
            let _ = match &tail[..=close] {
                "{nic}" => write!(out, "{nic}"),
                "{port}" => write!(out, "{port}"),
                "{index}" => write!(out, "{index}"),
                "{index1}" => write!(out, "{}", index + 1),
                "{host-port}" if host_port.is_some() => {
                    write!(out, "{}", host_port.unwrap_or_default())
                }
                other => write!(out, "{other}"),
            };
            rest = &tail[close + 1..];
        }
        out.push_str(rest);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn agrees_with_the_reference(
            pattern in "([a-zé_/-]|\\{(nic|port|index|index1|host-port|x)\\}|\\{|\\})*",
            nic in any::<u32>(), port in any::<u32>(), index in 0..u32::MAX,
            host_port in proptest::option::of("[a-z0-9]{0,6}"),
        ) {
            prop_assert_eq!(
                expand(&pattern, nic, port, index, host_port.as_deref()),
                reference(&pattern, nic, port, index, host_port.as_deref())
            );
        }
    }
}
