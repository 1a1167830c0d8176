//! Findings: the host facts compared with what the profile's [`Plan`] and the environment ask for.
//!
//! Settings are looked up in the workload's environment first (that is what NCCL and UCX will read) and
//! then in the profile's plan, so `roce doctor --profile P` on a node answers "would P work here" and the
//! same command in a pod answers "does this pod work".

use std::collections::{BTreeMap, BTreeSet};

use roce_model::fabric::attach::{
    COMMON_RDMA_RESOURCE, IPC_LOCK, RDMA_DEVICE_DIR, RUNTIME_SHM_BYTES, SHM_DIR,
};
use roce_model::fabric::dra::{IMEX_CHANNELS_DIR, NicAttachment};
use roce_model::fabric::env::Consumer;
use roce_model::fabric::provider::{self, Provider};
use roce_model::fabric::{env, nccl, ucx};
use roce_model::model::{FabricKind, Profile, UcxMode};
use roce_model::nccl_list::{self, ListKind};
use roce_model::source::Origin;
use roce_model::ucx_list;
use roce_model::{Code, Problem};
use roce_render::plan::{self, Plan};

use super::facts::{HostFacts, Limit, LinkLayer, PeerMemory, Port, RdmaDevice, ShmMount};
use super::gid::{Cidr, Family, Want};
use super::gid_index::{self, Unfit};
use super::needs::{self, Check, HostRequirement};

/// One RDMA port as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortReport {
    /// RDMA device.
    pub device: String,
    /// Port number.
    pub port: u32,
    /// `ACTIVE`, `DOWN`…
    pub state: Option<String>,
    /// `Ethernet` (RoCE) or `InfiniBand`.
    pub link_layer: Option<String>,
    /// The port's netdev in this namespace (the one bound to the suggested GID, else the device's own).
    pub netdev: Option<String>,
    /// The GID index to use (RoCE ports only).
    pub suggested_gid_index: Option<u32>,
}

/// What `doctor` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The facts read.
    pub facts: HostFacts,
    /// The profile compared against, by name.
    pub profile: Option<String>,
    /// What a usable GID must be (from the environment, else the profile).
    pub want: Want,
    /// One row per RDMA port.
    pub ports: Vec<PortReport>,
    /// Problems, root causes first. Labels point into the profile where a value came from it.
    pub findings: Vec<Problem>,
    /// The profile's requirements of a pod, as this host shows each (empty without a profile).
    pub requirements: Vec<HostRequirement>,
    /// Whether the environment carried any of the profile's variables (`None` without a profile).
    pub env_has_profile_vars: Option<bool>,
}

impl Report {
    /// Is any finding an error?
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(Problem::is_error)
    }
}

/// A setting NCCL or UCX will read, and where it came from.
#[derive(Debug, Clone)]
struct Setting {
    name: &'static str,
    value: String,
    /// The profile line, when the value came from the profile.
    origin: Option<Origin>,
    from_env: bool,
}

impl Setting {
    fn show(&self) -> String {
        let from = if self.from_env {
            "set in the environment"
        } else {
            "from the profile"
        };
        format!("`{}={}` ({from})", self.name, self.value)
    }

    fn attach(&self, p: Problem) -> Problem {
        match self.origin {
            Some(o) => p.at(o, "set here"),
            None => p,
        }
    }
}

struct Ctx<'a> {
    facts: &'a HostFacts,
    profile: Option<&'a Profile>,
    plan: Option<Plan>,
    want: Want,
    out: Vec<Problem>,
    env_has_profile_vars: Option<bool>,
}

/// Doctor's checks in report order (root causes first).
pub(super) const ORDER: &[Check] = &[
    Check::NoRdmaDevices,
    Check::LinkLayer,
    Check::MissingRail,
    Check::DeviceNodes,
    Check::PortDown,
    Check::NoUsableGid,
    Check::NcclGidIndex,
    Check::UcxGidIndex,
    Check::Hca,
    Check::SocketIfname,
    Check::UcxNetDevices,
    Check::UcxTransport,
    Check::RdmaCore,
    Check::Memlock,
    Check::PeerMemory,
    Check::Gpus,
    Check::ImexChannels,
    Check::SharedMemory,
    Check::TopologyFile,
    Check::ProviderDevices,
    Check::NetPlugin,
    Check::EnvDrift,
];

/// Compare the facts with a profile (optional) and produce the report.
pub(super) fn diagnose(facts: HostFacts, profile: Option<&Profile>) -> Report {
    let plan = profile.map(plan::lower);
    let mut ctx = Ctx {
        facts: &facts,
        profile,
        plan,
        want: Want::default(),
        out: Vec::new(),
        env_has_profile_vars: None,
    };
    ctx.want = Want {
        family: ctx
            .setting(env::NCCL_IB_ADDR_FAMILY.name)
            .map(|s| Family::from_nccl(s.value.trim())),
        range: ctx
            .setting(env::NCCL_IB_ADDR_RANGE.name)
            .and_then(|s| Cidr::parse(&s.value)),
    };
    let mut ran = Vec::with_capacity(ORDER.len());
    for &check in ORDER {
        let start = ctx.out.len();
        ctx.run(check);
        ran.push((check, start..ctx.out.len()));
    }
    let ports = ctx.port_reports();
    let requirements = ctx.plan.as_ref().map_or_else(Vec::new, |plan| {
        let codes: Vec<Code> = ctx.out.iter().map(|p| p.code).collect();
        needs::judge(plan, &facts, &ran, &codes)
    });
    let Ctx {
        want,
        out,
        env_has_profile_vars,
        ..
    } = ctx;
    Report {
        profile: profile.map(|p| p.name.value.clone()),
        want,
        ports,
        findings: out,
        requirements,
        env_has_profile_vars,
        facts,
    }
}

/// `a, b, c` or `a, b, …, z (16)`.
fn list(items: &[String]) -> String {
    match items.len() {
        0..=4 => items.join(", "),
        n => format!("{}, {}, …, {} ({n})", items[0], items[1], items[n - 1]),
    }
}

fn port_label(d: &RdmaDevice, p: &Port) -> String {
    format!("{}:{}", d.name, p.num)
}

impl Ctx<'_> {
    /// Run one check. The per-device checks need devices; without any, `no_rdma_devices` says so.
    fn run(&mut self, check: Check) {
        use Check::*;
        let devices = !self.facts.devices.is_empty();
        match check {
            NoRdmaDevices if !devices => self.no_rdma_devices(),
            NoRdmaDevices => {}
            _ if check.per_device() && !devices => {}
            LinkLayer => self.link_layer(),
            MissingRail => self.missing_rail(),
            DeviceNodes => self.device_nodes(),
            PortDown => self.port_down(),
            NoUsableGid => self.no_usable_gid(),
            NcclGidIndex => self.gid_index(env::NCCL_IB_GID_INDEX.name),
            UcxGidIndex => self.gid_index(env::UCX_IB_GID_INDEX.name),
            Hca => self.hca(),
            SocketIfname => self.socket_ifname(),
            UcxNetDevices => self.ucx_net_devices(),
            UcxTransport => self.ucx_transport(),
            RdmaCore => self.rdma_core(),
            Memlock => self.ipc_lock_and_memlock(),
            PeerMemory => self.peer_memory(),
            Gpus => self.gpus(),
            ImexChannels => self.imex_channels(),
            SharedMemory => self.shared_memory(),
            TopologyFile => self.topology_file(),
            ProviderDevices => self.provider_devices(),
            NetPlugin => self.net_plugin(),
            EnvDrift => self.env_has_profile_vars = self.env_drift(),
        }
    }

    /// The workload's `UCX_TLS` judged against the profile's UCX mode by the fabric core, as `check` and
    /// `lint` judge it ([`ucx::tls_concerns`]).
    fn ucx_transport(&mut self) {
        let (Some(profile), Some(tls)) = (self.profile, self.setting(env::UCX_TLS.name)) else {
            return;
        };
        if !tls.from_env {
            return;
        }
        let (list, issues) = ucx_list::parse_tls(&tls.value);
        if issues.iter().any(|i| i.kind.is_error()) {
            return;
        }
        let concerns = ucx::tls_concerns(&list, profile.ucx.mode.value);
        if concerns.is_empty() {
            return;
        }
        let why: Vec<String> = concerns.iter().map(ToString::to_string).collect();
        self.push(
            Problem::new(
                Code::DoctorUcxTransport,
                format!("UCX_TLS={} (environment) {}", tls.value, why.join("; it ")),
            )
            .help(format!(
                "set UCX_TLS to the profile's value{}, or fix the workload that overrides it",
                self.plan
                    .as_ref()
                    .and_then(|p| p.env_value(env::UCX_TLS.name))
                    .map(|v| format!(" ({v})"))
                    .unwrap_or_default()
            )),
        );
    }

    fn setting(&self, name: &'static str) -> Option<Setting> {
        if let Some(v) = self.facts.env.get(name) {
            return Some(Setting {
                name,
                value: v.to_string(),
                origin: None,
                from_env: true,
            });
        }
        let var = self.plan.as_ref()?.env.iter().find(|e| e.name == name)?;
        Some(Setting {
            name,
            value: var.value.clone(),
            origin: var.origin,
            from_env: false,
        })
    }

    fn push(&mut self, p: Problem) {
        self.out.push(p);
    }

    /// Is RDMA expected here: devices are present, or a profile says so?
    fn rdma_expected(&self) -> bool {
        !self.facts.devices.is_empty() || self.profile.is_some()
    }

    fn fabric(&self) -> Option<FabricKind> {
        self.profile.map(|p| p.fabric.kind.value)
    }

    /// The ports a profile's rails name (when any of its devices is present), else every port.
    fn relevant_ports(&self) -> Vec<(&RdmaDevice, &Port)> {
        if let Some(p) = self.profile {
            let rails: BTreeSet<String> = p.rail_list().into_iter().map(|r| r.pod_device).collect();
            let mine: Vec<_> = self
                .facts
                .ports()
                .filter(|(d, _)| rails.contains(&d.name))
                .collect();
            if !mine.is_empty() {
                return mine;
            }
        }
        self.facts.ports().collect()
    }

    fn roce_active<'p>(
        ports: impl IntoIterator<Item = (&'p RdmaDevice, &'p Port)>,
    ) -> Vec<(&'p RdmaDevice, &'p Port)> {
        ports
            .into_iter()
            .filter(|(_, p)| p.link_layer == LinkLayer::Ethernet && p.is_active())
            .collect()
    }

    fn no_rdma_devices(&mut self) {
        let f = self.facts;
        let others: Vec<String> = f
            .netdev_list()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n != "lo")
            .collect();
        let seen = match others.as_slice() {
            [] => String::new(),
            [one] => format!(" (the only network interface is {one})"),
            many => format!(" (network interfaces: {})", list(many)),
        };
        let hca = self
            .setting(env::NCCL_IB_HCA.name)
            .map(|s| {
                format!(
                    "; {} matches nothing, so NCCL falls back to TCP sockets",
                    s.show()
                )
            })
            .unwrap_or_else(|| "; NCCL falls back to TCP sockets".to_string());
        let wiring = self.plan.as_ref().and_then(|p| p.wiring.clone());
        let resource = wiring
            .as_ref()
            .and_then(|w| w.resources.first().map(|(r, _)| r.to_string()))
            .unwrap_or_else(|| COMMON_RDMA_RESOURCE.to_string());
        let (message, help) = if f.in_pod {
            match (self.fabric(), &wiring) {
                (Some(FabricKind::Roce), Some(w)) if !w.networks.is_empty() => (
                    format!(
                        "no RDMA devices in this pod{seen}: the Multus annotation `{}` ({} NADs in {}) or the `{resource}` resource request is missing{hca}",
                        plan::MULTUS_ANNOTATION,
                        w.networks.len(),
                        w.networks[0].namespace(),
                    ),
                    format!(
                        "attach the profile's networks and request `{resource}: 1` in requests and limits: `roce render --target pod --profile {}` or `roce apply` wires both, and `roce lint` checks a hand-written manifest",
                        self.profile.map_or("…", |p| p.name.value.as_str())
                    ),
                ),
                (Some(FabricKind::InfiniBand), _) => (
                    format!("no RDMA devices in this pod{seen}: the `{resource}` resource request is missing{hca}"),
                    format!("request `{resource}: 1` in the container's requests and limits (InfiniBand needs no Multus)"),
                ),
                (Some(_), None) => (
                    format!("no RDMA devices in this pod{seen}: the SUNK NodeSet did not attach the fabric{hca}"),
                    "check the NodeSet's Multus annotation and RDMA resource; jobs on a NodeSet do not attach them".to_string(),
                ),
                _ => (
                    format!("no RDMA devices in this pod{seen}: the Multus annotation or the `{resource}` resource request is missing{hca}"),
                    format!("on RoCE attach the rail NADs with `{}` and request `{resource}: 1`; on InfiniBand request `{resource}: 1`", plan::MULTUS_ANNOTATION),
                ),
            }
        } else {
            let why = match (f.module("mlx5_core"), f.module("mlx5_ib")) {
                (Some(true), Some(false)) => {
                    "mlx5_core is loaded but mlx5_ib is not, so the NICs register no RDMA device"
                }
                (Some(true), _) => {
                    "mlx5_core and mlx5_ib are loaded but no NIC registered an RDMA device"
                }
                (Some(false), _) => "no RDMA NIC driver (mlx5_core) is loaded",
                (None, _) => "/sys/module is unreadable, so the drivers are unknown",
            };
            (
                format!("no RDMA devices: /sys/class/infiniband is empty and {why}{seen}{hca}"),
                match (f.module("mlx5_core"), f.module("mlx5_ib")) {
                    (Some(true), Some(false)) => "load the RDMA driver (`modprobe mlx5_ib`), or run on a node with RDMA NICs".to_string(),
                    _ => "run on a node with RDMA NICs (ConnectX) and their RDMA drivers, or inside a pod that has the fabric attached".to_string(),
                },
            )
        };
        self.push(Problem::new(Code::DoctorNoRdmaDevices, message).help(help));
    }

    fn link_layer(&mut self) {
        let Some(p) = self.profile else { return };
        let kind = p.fabric.kind.value;
        let (wrong, name) = match kind {
            FabricKind::Roce => (LinkLayer::InfiniBand, "InfiniBand"),
            FabricKind::InfiniBand => (LinkLayer::Ethernet, "Ethernet (RoCE)"),
        };
        let bad: Vec<String> = self
            .facts
            .ports()
            .filter(|(_, p)| p.link_layer == wrong)
            .map(|(d, p)| port_label(d, p))
            .collect();
        if bad.is_empty() {
            return;
        }
        let fix = match kind {
            FabricKind::Roce => {
                "use a profile with `fabric infiniband` on this node, or run on a RoCE node"
            }
            FabricKind::InfiniBand => {
                "use a profile with `fabric roce` on this node, or run on an InfiniBand node"
            }
        };
        self.push(
            Problem::new(
                Code::DoctorLinkLayer,
                format!(
                    "the profile's fabric is {} but {} {} {name}",
                    kind.as_str(),
                    list(&bad),
                    if bad.len() == 1 { "is" } else { "are" }
                ),
            )
            .help(fix)
            .at(p.fabric.kind.origin, "the profile's fabric"),
        );
    }

    fn missing_rail(&mut self) {
        let Some(p) = self.profile else { return };
        // A provider's devices named by PCI address (EFA's `rdmap16s27`) differ per instance: the profile's
        // rail names are nominal, and `provider_devices` counts the devices instead.
        if p.nccl_net.provider.value.device_driver().is_some() {
            return;
        }
        let rails = p.rail_list();
        let missing_devices: Vec<String> = rails
            .iter()
            .filter(|r| self.facts.device(&r.pod_device).is_none())
            .map(|r| r.pod_device.clone())
            .collect();
        let missing_netdevs: Vec<String> = if p.fabric.kind.value == FabricKind::Roce {
            rails
                .iter()
                .filter_map(|r| r.pod_netdev.clone().map(String::from))
                .filter(|n| self.facts.has_netdev(n) == Some(false))
                .collect()
        } else {
            Vec::new()
        };
        if missing_devices.is_empty() && missing_netdevs.is_empty() {
            return;
        }
        let mut parts = Vec::new();
        if !missing_devices.is_empty() {
            parts.push(format!(
                "{} of the profile's {} rail devices {} missing: {}",
                missing_devices.len(),
                rails.len(),
                if missing_devices.len() == 1 {
                    "is"
                } else {
                    "are"
                },
                list(&missing_devices)
            ));
        }
        if !missing_netdevs.is_empty() {
            parts.push(format!(
                "rail netdevs missing from this namespace: {}",
                list(&missing_netdevs)
            ));
        }
        let present: Vec<String> = self.facts.devices.iter().map(|d| d.name.clone()).collect();
        let help = match &p.multus {
            roce_model::model::Multus::PerPort { .. } if self.facts.in_pod => format!(
                "each rail needs its NAD in the pod's `{}` annotation; compare it with `roce render --target pod --profile {}` (devices here: {})",
                plan::MULTUS_ANNOTATION,
                p.name.value,
                list(&present)
            ),
            _ => format!(
                "run on the node pool the profile describes, or fix the profile's `rails` (devices here: {})",
                list(&present)
            ),
        };
        self.push(
            Problem::new(Code::DoctorMissingRail, parts.join("; "))
                .help(help)
                .at(p.rails.pod_device.origin, "the rail devices"),
        );
    }

    /// Devices (the profile's rails when present, else every one) whose verbs node is not in
    /// [`RDMA_DEVICE_DIR`]: sysfs shows them, but `ibv_open_device` cannot open them.
    fn device_nodes(&mut self) {
        let f = self.facts;
        let Some(any_uverbs) = f.any_uverbs_node() else {
            return;
        };
        let mut devices: Vec<&RdmaDevice> = Vec::new();
        for (d, _) in self.relevant_ports() {
            if !devices.iter().any(|x| x.name == d.name) {
                devices.push(d);
            }
        }
        let missing: Vec<String> = devices
            .iter()
            .filter(|d| match &d.uverbs {
                Some(u) => f.has_device_node(u) == Some(false),
                // sysfs does not say which node is the device's: only "none at all" is certain
                None => !any_uverbs,
            })
            .map(|d| match &d.uverbs {
                Some(u) => format!("{} ({u})", d.name),
                None => d.name.clone(),
            })
            .collect();
        if missing.is_empty() {
            return;
        }
        let what = if f.device_nodes.as_ref().is_some_and(Vec::is_empty) {
            format!("{RDMA_DEVICE_DIR} is absent")
        } else {
            format!("{RDMA_DEVICE_DIR} has no verbs node for them")
        };
        let message = format!(
            "{} of the {} RDMA devices in /sys/class/infiniband cannot be opened: {what} ({}); NCCL logs `NET/IB : Unable to open device` and falls back to TCP sockets, and UCX has no RDMA transports",
            missing.len(),
            devices.len(),
            list(&missing)
        );
        let help = if f.in_pod {
            match self.profile.map(|p| &p.nics.value) {
                Some(NicAttachment::Dra(nics)) => format!(
                    "the NICs' DRA claim brings their device nodes: check that the pod claims `{}` and the container lists it in `resources.claims`, and that the NIC DRA driver runs on the node",
                    nics.claim()
                ),
                _ => {
                    let resource = self
                        .plan
                        .as_ref()
                        .and_then(|p| p.wiring.as_ref())
                        .and_then(|w| w.resources.first().map(|(r, _)| r.to_string()))
                        .unwrap_or_else(|| COMMON_RDMA_RESOURCE.to_string());
                    format!(
                        "request `{resource}: 1` in the container's requests and limits: the RDMA device plugin mounts {RDMA_DEVICE_DIR} for it, while sysfs lists the node's devices without it"
                    )
                }
            }
        } else if f.module("ib_uverbs") == Some(false) {
            format!(
                "load the verbs module (`modprobe ib_uverbs`): it creates {RDMA_DEVICE_DIR}/uverbsN"
            )
        } else {
            format!(
                "{RDMA_DEVICE_DIR}/uverbsN are created by ib_uverbs through udev/devtmpfs: check that the module is loaded and /dev is not a private tmpfs without them"
            )
        };
        self.push(Problem::new(Code::DoctorNoDeviceNodes, message).help(help));
    }

    /// A ComputeDomain gives each pod an IMEX channel through its claim; a pod without one cannot use
    /// multi-node NVLink. On a node (not in a pod) a channel is no requirement: the claim brings it.
    fn imex_channels(&mut self) {
        let Some(p) = self.profile else { return };
        let Some(cd) = p.nvlink_domain.value.compute_domain() else {
            return;
        };
        if !self.facts.in_pod || !self.facts.imex_channels.as_ref().is_some_and(Vec::is_empty) {
            return;
        }
        self.push(
            Problem::new(
                Code::DoctorImexChannels,
                format!(
                    "the profile's ComputeDomain `{}` gives each pod an IMEX channel, but {IMEX_CHANNELS_DIR} holds no `channelN` device: NCCL cannot use multi-node NVLink and fails with `Cuda failure 800` (operation not permitted) or falls back to the network",
                    cd.name()
                ),
            )
            .help(format!(
                "the pod lacks the ComputeDomain channel claim: `spec.resourceClaims` with `resourceClaimTemplateName: {}`, listed by the container in `resources.claims` (`{}`); `roce render --target pod` wires both and `roce lint` checks a manifest. If the pod has the claim, the NVIDIA DRA driver (its compute-domain kubelet plugin) is not running on this node",
                cd.channel_template(),
                cd.claim()
            ))
            .at(p.nvlink_domain.origin, "the ComputeDomain"),
        );
    }

    /// The container runtime gives `/dev/shm` 64 MiB unless something memory-backed is mounted there;
    /// NCCL's shared-memory transport and proxy buffers need more on a multi-GPU node. Judged for a
    /// profile that asks for a memory-backed `/dev/shm`, and without a profile in a pod with GPUs.
    fn shared_memory(&mut self) {
        let wanted = match &self.plan {
            Some(plan) => plan.shm,
            None => self.facts.in_pod && self.facts.gpus.unwrap_or(0) > 0,
        };
        let Some(ShmMount::Tmpfs(Some(size))) = self.facts.shm else {
            return;
        };
        if !wanted || size > RUNTIME_SHM_BYTES {
            return;
        }
        let what = if size == RUNTIME_SHM_BYTES {
            "the container runtime's default"
        } else {
            "smaller than the container runtime's default"
        };
        self.push(
            Problem::new(
                Code::DoctorShm,
                format!(
                    "{SHM_DIR} is a {} tmpfs, {what}: nothing memory-backed is mounted there, and NCCL's shared-memory transport and proxy buffers outgrow it (NCCL fails with `unable to allocate shared memory` or `failed to extend /dev/shm`)",
                    bytes(size)
                ),
            )
            .help(format!("mount an `emptyDir: {{medium: Memory}}` volume at {SHM_DIR} (`roce render` and `roce apply` add it); Docker: `--shm-size=1g`")),
        );
    }

    /// `NCCL_TOPO_FILE` names a file that is not there: NCCL cannot open it (`src/graph/xml.cc`,
    /// `ncclTopoGetXmlFromFile`: `Could not open XML topology file`, then success) and detects the topology
    /// itself, which inside a VM (Azure ND) is not the machine's.
    fn topology_file(&mut self) {
        let Some(s) = self.setting(provider::NCCL_TOPO_FILE) else {
            return;
        };
        if self.facts.named_files.get(s.value.as_str()) != Some(&false) {
            return;
        }
        let p = Problem::new(
            Code::DoctorTopologyFile,
            format!(
                "{} names a file that is not here: NCCL logs `Could not open XML topology file` and detects the topology itself, which inside a VM is not the machine's (slower rings and rail mapping)",
                s.show()
            ),
        )
        .help("mount the topology file's ConfigMap at that path (`roce render` and `roce apply` add the volume), or fix NCCL_TOPO_FILE");
        let p = s.attach(p);
        self.push(p);
    }

    fn port_down(&mut self) {
        let down: Vec<String> = self
            .relevant_ports()
            .into_iter()
            .filter(|(_, p)| !p.is_active())
            .map(|(d, p)| {
                format!(
                    "{} ({})",
                    port_label(d, p),
                    p.state.as_deref().unwrap_or("state unreadable")
                )
            })
            .collect();
        if down.is_empty() {
            return;
        }
        self.push(
            Problem::new(
                Code::DoctorPortDown,
                format!("RDMA ports not ACTIVE: {}; NCCL and UCX skip them, so the job runs on fewer rails", list(&down)),
            )
            .help("check the link (`ibstat`/`ibv_devinfo`, cabling, switch port) or the node's link-health labels before scheduling here"),
        );
    }

    fn want_text(&self) -> String {
        let fam = self
            .want
            .family
            .map_or("IPv4 or IPv6".to_string(), |f| f.as_str().to_string());
        let range = self
            .want
            .range
            .map(|r| format!(" in {r}"))
            .unwrap_or_default();
        format!("a RoCE v2 {fam} GID{range} bound to a netdev in this namespace")
    }

    fn no_usable_gid(&mut self) {
        let facts = self.facts;
        let want = self.want.clone();
        let ports = Self::roce_active(self.relevant_ports());
        let mut bad = Vec::new();
        let mut census: BTreeMap<String, usize> = BTreeMap::new();
        for (d, p) in &ports {
            if gid_index::suggest(p, &want, facts.netdevs.as_ref()).is_none() {
                if bad.is_empty() {
                    for e in &p.gids {
                        if let Err(u) = gid_index::check(e, &want, facts.netdevs.as_ref()) {
                            *census.entry(short_reason(&u)).or_default() += 1;
                        }
                    }
                }
                bad.push(port_label(d, p));
            }
        }
        if bad.is_empty() {
            return;
        }
        let table: Vec<String> = census.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let help = match (self.want.family, self.want.range) {
            (Some(Family::Ipv6), Some(r)) => format!(
                "each rail netdev needs a global IPv6 address in {r} (from its NAD's IPAM); check the pod's Multus networks and `ip -6 addr`"
            ),
            (Some(f), _) => format!("each rail netdev needs an {} address; check the pod's Multus networks and `ip addr`", f.as_str()),
            (None, _) => "each rail netdev needs a routable IP address; check the pod's Multus networks and `ip addr`".to_string(),
        };
        self.push(
            Problem::new(
                Code::DoctorNoUsableGid,
                format!(
                    "no usable GID on {}: none is {} (first port's table: {}); NCCL silently keeps GID index 0 and connections time out (status 12 / vendor err 129)",
                    list(&bad),
                    self.want_text(),
                    table.join(", ")
                ),
            )
            .help(help),
        );
    }

    fn gid_index(&mut self, var: &'static str) {
        let Some(s) = self.setting(var) else { return };
        let value = s.value.trim();
        let index: u32 = match value.parse::<i64>() {
            Ok(i) if i < 0 => return, // NCCL: -1 = auto
            Ok(i) => match u32::try_from(i) {
                Ok(i) => i,
                Err(_) => return,
            },
            Err(_) => return, // `auto` (UCX), or malformed: `roce check` reports those
        };
        let ports: Vec<(&RdmaDevice, &Port)> = Self::roce_active(self.facts.ports())
            .into_iter()
            .filter(|(d, p)| self.port_selected(var, d, p))
            .collect();
        let want = self.want.clone();
        let netdevs = self.facts.netdevs.as_ref();
        // Grouped by the kind of problem; the netdev names of `NetdevAbsent` are listed together.
        let mut groups: BTreeMap<String, Vec<(String, Option<u32>, Unfit)>> = BTreeMap::new();
        for (d, p) in &ports {
            if let Err(u) = gid_index::check_index(p, index, &want, netdevs) {
                groups.entry(short_reason(&u)).or_default().push((
                    port_label(d, p),
                    gid_index::suggest(p, &want, netdevs),
                    u,
                ));
            }
        }
        for hits in groups.into_values() {
            let absent: Vec<String> = hits
                .iter()
                .filter_map(|(_, _, u)| match u {
                    Unfit::NetdevAbsent(n) => Some(n.clone()),
                    _ => None,
                })
                .collect();
            let reason = match absent.as_slice() {
                [] | [_] => hits[0].2.reason(),
                many => format!(
                    "bound to netdevs {} which are not in this network namespace",
                    list(many)
                ),
            };
            let labels: Vec<String> = hits.iter().map(|(l, _, _)| l.clone()).collect();
            let suggestions: BTreeSet<Option<u32>> = hits.iter().map(|(_, s, _)| *s).collect();
            let fix = match suggestions.iter().collect::<Vec<_>>().as_slice() {
                [Some(n)] => format!(
                    "use index {n}, {} on every one of these ports",
                    self.want_text()
                ),
                [None] => "no port has a usable GID (see roce::doctor::no_usable_gid)".to_string(),
                _ => {
                    let mut by_index: BTreeMap<Option<u32>, Vec<String>> = BTreeMap::new();
                    for (l, s, _) in &hits {
                        by_index.entry(*s).or_default().push(l.clone());
                    }
                    let mut groups: Vec<(Option<u32>, Vec<String>)> =
                        by_index.into_iter().collect();
                    groups.sort_by_key(|(_, ports)| std::cmp::Reverse(ports.len()));
                    let per: Vec<String> = groups
                        .iter()
                        .map(|(s, ports)| {
                            format!(
                                "{} on {}",
                                s.map_or("none".to_string(), |n| n.to_string()),
                                list(ports)
                            )
                        })
                        .collect();
                    format!("no single index fits every port: {}", per.join("; "))
                }
            };
            let auto = if var == env::NCCL_IB_GID_INDEX.name {
                "; or leave NCCL_IB_GID_INDEX unset and let NCCL choose by NCCL_IB_ADDR_FAMILY and NCCL_IB_ADDR_RANGE"
            } else {
                ""
            };
            let p = Problem::new(
                Code::DoctorGidIndex,
                format!("{} is {reason} on {}", s.show(), list(&labels)),
            )
            .help(format!("{fix}{auto}"));
            let p = s.attach(p);
            self.push(p);
        }
    }

    /// Would NCCL (`NCCL_IB_HCA`) or UCX (`UCX_NET_DEVICES`) use this port?
    fn port_selected(&self, var: &str, d: &RdmaDevice, p: &Port) -> bool {
        if env::consumer_of(var) == Consumer::Nccl {
            match self.setting(env::NCCL_IB_HCA.name) {
                Some(s) => nccl_list::parse(&s.value, ListKind::IbHca)
                    .0
                    .matches(&d.name, Some(p.num)),
                None => true,
            }
        } else {
            match self.setting(env::UCX_NET_DEVICES.name) {
                Some(s) => ucx_list::parse_net_devices(&s.value)
                    .0
                    .selects(&port_label(d, p)),
                None => true,
            }
        }
    }

    fn hca(&mut self) {
        let Some(s) = self.setting(env::NCCL_IB_HCA.name) else {
            return;
        };
        let active: Vec<(&str, u32)> = self
            .facts
            .ports()
            .filter(|(_, p)| {
                p.is_active() && matches!(p.link_layer, LinkLayer::Ethernet | LinkLayer::InfiniBand)
            })
            .map(|(d, p)| (d.name.as_str(), p.num))
            .collect();
        if active.is_empty() {
            return;
        }
        let (filter, _) = nccl_list::parse(&s.value, ListKind::IbHca);
        if !filter.matching_ports(&active).is_empty() {
            return;
        }
        let names: Vec<String> = active.iter().map(|(d, p)| format!("{d}:{p}")).collect();
        let devices: Vec<&str> = active.iter().map(|(d, _)| *d).collect();
        let prefix = nccl_list::hca_prefix(&devices);
        let fix = if prefix.is_empty() {
            format!("name the devices: `NCCL_IB_HCA=={}`", devices.join(","))
        } else {
            format!("use a prefix of the devices here: `NCCL_IB_HCA={prefix}`")
        };
        let p = Problem::new(
            Code::DoctorHcaMatchesNothing,
            format!(
                "{} matches none of the {} active RDMA ports ({}): NCCL logs `NET/IB : No device found.` and falls back to TCP sockets",
                s.show(),
                active.len(),
                list(&names)
            ),
        )
        .help(fix);
        let p = s.attach(p);
        self.push(p);
    }

    fn socket_ifname(&mut self) {
        let Some(s) = self.setting(env::NCCL_SOCKET_IFNAME.name) else {
            return;
        };
        let Some(netdevs) = &self.facts.netdevs else {
            return;
        };
        let (filter, _) = nccl_list::parse(&s.value, ListKind::SocketIfname);
        if filter.is_unrestricted() {
            return;
        }
        let names: Vec<&str> = netdevs.iter().map(String::as_str).collect();
        if !filter.matching(&names).is_empty() {
            return;
        }
        let all: Vec<String> = self.facts.netdev_list().unwrap_or_default();
        let p = Problem::new(
            Code::DoctorSocketIfname,
            format!(
                "{} matches no network interface here ({}): NCCL's bootstrap fails with `Bootstrap : no socket interface found`",
                s.show(),
                if all.is_empty() { "none".to_string() } else { list(&all) }
            ),
        )
        .help("name the pod's primary interface (usually `eth0`), never an RDMA rail interface");
        let p = s.attach(p);
        self.push(p);
    }

    fn ucx_net_devices(&mut self) {
        let Some(s) = self.setting(env::UCX_NET_DEVICES.name) else {
            return;
        };
        let (devices, _) = ucx_list::parse_net_devices(&s.value);
        let Some(items) = devices.devices() else {
            return;
        };
        let facts = self.facts;
        let missing: Vec<String> = items
            .iter()
            .filter(|item| match item.port() {
                Some(port) => facts
                    .device(item.name())
                    .is_none_or(|d| !d.ports.iter().any(|p| p.num == port)),
                None => {
                    facts.device(item.name()).is_none()
                        && facts.has_netdev(item.name()) == Some(false)
                }
            })
            .map(ToString::to_string)
            .collect();
        if missing.is_empty() {
            return;
        }
        let ports: Vec<String> = facts.ports().map(|(d, p)| port_label(d, p)).collect();
        let nets: Vec<String> = facts.netdev_list().unwrap_or_default();
        let p = Problem::new(
            Code::DoctorUcxNetDevice,
            format!(
                "{} names {} which {} not exist here: UCX warns `network device '…' is not available` and runs without {}",
                s.show(),
                list(&missing),
                if missing.len() == 1 { "does" } else { "do" },
                if missing.len() == 1 { "it" } else { "them" },
            ),
        )
        .help(format!(
            "UCX needs exact names (`<device>:<port>` for RDMA, the netdev for TCP); here: RDMA ports {}; netdevs {}",
            if ports.is_empty() { "none".to_string() } else { list(&ports) },
            if nets.is_empty() { "none".to_string() } else { list(&nets) },
        ));
        let p = s.attach(p);
        self.push(p);
    }

    fn rdma_core(&mut self) {
        let f = self.facts;
        if f.libibverbs.is_none() {
            if self.rdma_expected() {
                self.push(
                    Problem::new(
                        Code::DoctorNoLibibverbs,
                        format!(
                            "libibverbs.so.1 (rdma-core) is not installed (searched {}): NCCL cannot open the RDMA devices and falls back to TCP sockets, and UCX has no RDMA transports",
                            list(&f.lib_dirs)
                        ),
                    )
                    .help("use an image with rdma-core userspace (Debian/Ubuntu: `libibverbs1 ibverbs-providers librdmacm1`), e.g. the NVIDIA HPC-X or CoreWeave nccl-tests images"),
                );
            }
            return;
        }
        let from_profile = self.plan.as_ref().and_then(|p| p.min_rdma_core);
        let tls = self.setting(env::UCX_TLS.name);
        let tls_rdma = tls.as_ref().filter(|s| s.from_env).is_some_and(|s| {
            let (list, _) = ucx_list::parse_tls(&s.value);
            !list.is_all()
                && list
                    .transports()
                    .iter()
                    .any(|t| ucx::class(t).is_some_and(|c| c.opens_rdma_device()))
        });
        if from_profile.is_none() && !tls_rdma {
            return;
        }
        let min = from_profile.unwrap_or(ucx::MIN_RDMA_CORE);
        let Some(lib) = f.libibverbs.as_ref() else {
            return;
        };
        let (Some(major), Some(version)) = (lib.major, lib.version.as_deref()) else {
            return;
        };
        if major >= min {
            return;
        }
        let mut p = Problem::new(
            Code::DoctorRdmaCore,
            format!(
                "rdma-core {version} < {min} ({}) with UCX over RDMA: UCX initialises but GPUDirect RDMA transfers fail (`vendor_err 0x89`, `Unexpected UCX error: Input/output error`) while NCCL tests still pass",
                lib.path
            ),
        )
        .help(format!("use an image with rdma-core ≥ {min} and UCX built against it (CoreWeave's nccl-tests images ship one)"));
        if let Some(profile) = self.profile.filter(|pr| pr.ucx.mode.value == UcxMode::Rdma) {
            p = p.at(profile.ucx.mode.origin, "UCX over RDMA");
        } else if let Some(s) = tls {
            p = s.attach(p);
        }
        self.push(p);
    }

    fn ipc_lock_and_memlock(&mut self) {
        if !self.rdma_expected() {
            return;
        }
        let f = self.facts;
        let limited = matches!(f.memlock, Some(Limit::Bytes(_)));
        let cap = self
            .profile
            .and_then(|p| p.capabilities.iter().find(|c| c.value == IPC_LOCK));
        if f.ipc_lock() == Some(false) && (cap.is_some() || limited) {
            let mut p = Problem::new(
                Code::DoctorIpcLock,
                format!(
                    "IPC_LOCK is not in the effective capabilities (CapEff {:016x}){}",
                    f.cap_eff.unwrap_or_default(),
                    if cap.is_some() { ": the profile requires it to pin RDMA buffers" } else { " and memlock is limited" }
                ),
            )
            .help("add `securityContext.capabilities.add: [\"IPC_LOCK\"]` to the container (Docker: `--cap-add IPC_LOCK`)");
            if let Some(c) = cap {
                p = p.at(c.origin, "required here");
            }
            self.push(p);
        }
        if let Some(Limit::Bytes(n)) = f.memlock
            && f.ipc_lock() != Some(true)
        {
            self.push(
                Problem::new(
                    Code::DoctorMemlock,
                    format!(
                        "locked memory is limited to {} (RLIMIT_MEMLOCK) without IPC_LOCK: registering buffers fails with `ibv_reg_mr … Cannot allocate memory`",
                        bytes(n)
                    ),
                )
                .help("grant IPC_LOCK (which lifts the limit for RDMA pinning) or raise the limit (`ulimit -l unlimited`, Docker `--ulimit memlock=-1`)"),
            );
        }
    }

    fn peer_memory(&mut self) {
        let f = self.facts;
        if !self.rdma_expected()
            || f.gpus.unwrap_or(0) == 0
            || f.peer_memory != Some(PeerMemory::None)
        {
            return;
        }
        self.push(
            Problem::new(
                Code::DoctorPeerMemory,
                "neither nvidia_peermem nor nv_peer_mem is loaded: GPUDirect RDMA needs one unless NCCL uses DMA-BUF (NCCL ≥ 2.19 with the open GPU kernel module, kernel ≥ 5.12)",
            )
            .help("load it on the node (`modprobe nvidia_peermem`, or the GPU operator's `driver.rdma.enabled=true`)"),
        );
    }

    fn gpus(&mut self) {
        let (Some(p), Some(n)) = (self.profile, self.facts.gpus) else {
            return;
        };
        let want = p.node_pool.gpus_per_node.value;
        if n == want {
            return;
        }
        self.push(
            Problem::new(
                Code::DoctorGpus,
                format!("{n} GPU(s) visible; the profile's node pool has {want} per node"),
            )
            .help(format!("request `nvidia.com/gpu: {want}` in requests and limits, or use a profile for this node type"))
            .at(p.node_pool.gpus_per_node.origin, "GPUs per node"),
        );
    }

    /// Variables the profile sets that the environment lacks or sets differently. Reports nothing when
    /// the environment carries none of them (probing whether the profile *would* work).
    fn env_drift(&mut self) -> Option<bool> {
        let plan = self.plan.as_ref()?;
        let env = &self.facts.env;
        let any = plan.env.iter().any(|v| env.get(&v.name).is_some());
        if !any {
            return Some(false);
        }
        let mut differ = Vec::new();
        let mut missing = Vec::new();
        let mut first: Option<Origin> = None;
        for v in &plan.env {
            match env.get(&v.name) {
                Some(have) if have == v.value => {}
                Some(have) => {
                    differ.push(format!("{}={have} (profile: {})", v.name, v.value));
                    first = first.or(v.origin);
                }
                None => {
                    missing.push(v.name.clone());
                    first = first.or(v.origin);
                }
            }
        }
        if differ.is_empty() && missing.is_empty() {
            return Some(true);
        }
        let mut parts = Vec::new();
        if !differ.is_empty() {
            parts.push(format!("differs: {}", list(&differ)));
        }
        if !missing.is_empty() {
            parts.push(format!("missing: {}", list(&missing)));
        }
        let mut p = Problem::new(
            Code::DoctorEnvDrift,
            format!(
                "the environment does not match profile {} ({}); NCCL and UCX read the environment, so doctor checked its values",
                plan.profile,
                parts.join("; ")
            ),
        )
        .help("deploy the workload from the profile (`roce render`, `roce apply`) or fix the variables by hand");
        if let Some(o) = first {
            p = p.at(o, "the profile sets this");
        }
        self.push(p);
        Some(true)
    }

    /// The devices of a provider that drives one kind only (aws-ofi-nccl: EFA, [`Provider::device_driver`]):
    /// are there any, and as many as the pod requests of the provider's per-device resource? A device
    /// counts when its verbs node is here (the device plugin mounts the ones it allocated; sysfs lists the
    /// node's). No RDMA device at all is `no_rdma_devices`' finding, none openable `no_device_nodes`'.
    fn provider_devices(&mut self) {
        let Some(p) = self.profile else { return };
        let provider = &p.nccl_net.provider.value;
        let Some(driver) = provider.device_driver() else {
            return;
        };
        let f = self.facts;
        if f.devices.is_empty() {
            return;
        }
        let theirs: Vec<&RdmaDevice> = f
            .devices
            .iter()
            .filter(|d| d.driver.as_deref() == Some(driver))
            .collect();
        if theirs.is_empty() {
            let seen: Vec<String> = f
                .devices
                .iter()
                .map(|d| {
                    format!(
                        "{} ({})",
                        d.name,
                        d.driver.as_deref().unwrap_or("driver unknown")
                    )
                })
                .collect();
            let help = if f.in_pod {
                format!(
                    "run the pod on the profile's instance type{} and request its devices ({}); the devices here are another NIC's",
                    p.node_pool
                        .instance_type
                        .as_ref()
                        .map(|t| format!(" ({})", t.value))
                        .unwrap_or_default(),
                    self.provider_resource(p).map_or_else(
                        || "the RDMA resource".to_string(),
                        |(r, n)| format!("`{r}: {n}`")
                    ),
                )
            } else {
                format!(
                    "run on an instance with {driver} devices and the `{driver}` kernel driver loaded, or use a profile for these NICs"
                )
            };
            self.push(
                Problem::new(
                    Code::DoctorNoProviderDevices,
                    format!(
                        "the profile's network provider is {} but none of the {} RDMA devices here has the `{driver}` driver ({}): it finds no device, and NCCL falls back to TCP sockets",
                        provider.describe(),
                        f.devices.len(),
                        list(&seen)
                    ),
                )
                .help(help)
                .at(p.nccl_net.provider.origin, "the network provider"),
            );
            return;
        }
        let Some((resource, want)) = self.provider_resource(p) else {
            return;
        };
        let usable: Vec<String> = theirs
            .iter()
            .filter(|d| match &d.uverbs {
                Some(u) => f.has_device_node(u) != Some(false),
                None => f.any_uverbs_node() != Some(false),
            })
            .map(|d| d.name.clone())
            .collect();
        let have = u32::try_from(usable.len()).unwrap_or(u32::MAX);
        if have == 0 || have >= want {
            return;
        }
        let in_sysfs = if theirs.len() > usable.len() {
            format!(
                " ({} in sysfs, {} with their verbs node)",
                theirs.len(),
                usable.len()
            )
        } else {
            String::new()
        };
        let origin = p
            .node_pool
            .rdma_resource_count
            .map_or(p.nccl_net.provider.origin, |c| c.origin);
        self.push(
            Problem::new(
                Code::DoctorProviderDeviceCount,
                format!(
                    "{have} {driver} devices usable here{in_sysfs}: {}; the profile expects {want} (`{resource}` count): NCCL spreads over fewer NICs and inter-node bandwidth drops",
                    list(&usable)
                ),
            )
            .help(if f.in_pod {
                format!("request `{resource}: {want}` in the container's requests and limits (the device plugin mounts one device per unit)")
            } else {
                format!("this instance has fewer {driver} devices than the profile's; run on the profile's instance type or fix `rdma-resource … count`")
            })
            .at(origin, "the devices expected"),
        );
    }

    /// The provider's per-device resource and the count the profile requests, when the profile's RDMA
    /// resource is that one ([`Provider::device_resource`]).
    fn provider_resource(&self, p: &Profile) -> Option<(String, u32)> {
        let name = p.nccl_net.provider.value.device_resource()?;
        let resource = p.node_pool.rdma_resource.as_ref()?;
        (resource.value.as_str() == name).then(|| {
            (
                name.to_string(),
                p.node_pool.rdma_resource_count.map_or(1, |c| c.value),
            )
        })
    }

    /// The net plugin NCCL must load for the profile's provider (or the one `NCCL_NET_PLUGIN` names): is a
    /// library by one of the names NCCL tries ([`nccl::net_plugin_libraries`]) in the directories the
    /// dynamic loader searches (`LD_LIBRARY_PATH`, then `/etc/ld.so.conf` and the system directories)?
    fn net_plugin(&mut self) {
        let provider = self.profile.map(|p| &p.nccl_net.provider.value);
        let named = self.setting(env::NCCL_NET_PLUGIN.name);
        let wants_plugin = provider.is_some_and(Provider::loads_plugin)
            || named
                .as_ref()
                .is_some_and(|s| !s.value.eq_ignore_ascii_case(nccl::NO_PLUGIN));
        if !wants_plugin {
            return;
        }
        let wanted = nccl::net_plugin_libraries(named.as_ref().map(|s| s.value.as_str()));
        let ld = self.setting(provider::LD_LIBRARY_PATH);
        let mut dirs: Vec<&str> = Vec::new();
        for d in ld
            .as_ref()
            .map_or("", |s| s.value.as_str())
            .split(':')
            .chain(self.facts.system_lib_dirs.iter().map(String::as_str))
        {
            let d = d.trim_end_matches('/');
            if d.starts_with('/') && !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let files = &self.facts.net_plugin_files;
        let present =
            |dir: &str, file: &str| files.get(dir).is_some_and(|f| f.iter().any(|x| x == file));
        let found = wanted
            .iter()
            .flatten()
            .any(|name| match name.rsplit_once('/') {
                // A path relative to the working directory cannot be judged from here.
                Some((dir, file)) => !name.starts_with('/') || present(dir, file),
                None => dirs.iter().any(|d| present(d, name)),
            });
        if found {
            return;
        }
        let tried: Vec<String> = wanted.iter().flatten().map(|n| format!("`{n}`")).collect();
        let how = match &named {
            Some(s) => s.show(),
            None => "NCCL_NET_PLUGIN unset".to_string(),
        };
        let ld_text = match &ld {
            Some(s) => format!(
                "in LD_LIBRARY_PATH ({}) or the system library directories",
                if s.from_env {
                    "the environment's"
                } else {
                    "the profile's"
                }
            ),
            None => "in the system library directories (LD_LIBRARY_PATH is unset)".to_string(),
        };
        let what = match provider.filter(|p| p.loads_plugin()) {
            Some(p) => format!("the NCCL net plugin of {} is not here", p.describe()),
            None => "the NCCL net plugin is not here".to_string(),
        };
        let consequence = match provider.and_then(Provider::nccl_net) {
            Some(net) => format!("with `NCCL_NET={net}` NCCL's init fails (`Failed to initialize any NET plugin`)"),
            None if wanted.is_empty() => "NCCL loads no plugin and uses its internal IB verbs or TCP sockets".to_string(),
            None => "NCCL logs `NET/Plugin: Could not find` and falls back to its internal IB verbs or TCP sockets".to_string(),
        };
        let message = if wanted.is_empty() {
            format!("{what}: {how} tells NCCL to load none; {consequence}")
        } else {
            format!(
                "{what}: NCCL opens {} ({how}), not found {ld_text}; {consequence}",
                tried.join(" or ")
            )
        };
        // Plugins that are here under another name: the fix may be one variable away.
        let others: Vec<String> = files
            .iter()
            .flat_map(|(dir, names)| names.iter().map(move |n| format!("{dir}/{n}")))
            .collect();
        let mounts: Vec<String> = self.profile.map_or_else(Vec::new, |p| {
            p.nccl_net
                .host_mounts
                .iter()
                .map(|m| format!("{} at {}", m.value.host_path, m.value.mount_path))
                .collect()
        });
        let help = if !others.is_empty() {
            format!(
                "NCCL net plugins here: {}; put the directory of the right one in LD_LIBRARY_PATH, or name it with NCCL_NET_PLUGIN (`ofi` loads `libnccl-net-ofi.so`)",
                list(&others)
            )
        } else if !mounts.is_empty() {
            format!(
                "the plugin comes from the node: mount the profile's host directories read-only ({}; `roce render --target pod` and `roce apply` add them) and keep the plugin's directory in LD_LIBRARY_PATH",
                mounts.join(", ")
            )
        } else {
            "use an image that ships the plugin (aws-ofi-nccl: `/opt/amazon/ofi-nccl/lib`, from the EFA installer or the AWS deep-learning containers) and put its directory in LD_LIBRARY_PATH".to_string()
        };
        let mut p = Problem::new(Code::DoctorNetPlugin, message).help(help);
        p = match (&ld, &named, self.profile) {
            (Some(s), _, _) if s.origin.is_some() => s.attach(p),
            (_, Some(s), _) if s.origin.is_some() => s.attach(p),
            (_, _, Some(profile)) => p.at(profile.nccl_net.provider.origin, "the network provider"),
            _ => p,
        };
        self.push(p);
    }

    fn port_reports(&self) -> Vec<PortReport> {
        let netdevs = self.facts.netdevs.as_ref();
        self.facts
            .ports()
            .map(|(d, p)| {
                let suggested = (p.link_layer == LinkLayer::Ethernet)
                    .then(|| gid_index::suggest(p, &self.want, netdevs))
                    .flatten();
                let netdev = suggested
                    .and_then(|i| p.gid(i))
                    .and_then(|e| e.ndev.clone())
                    .or_else(|| d.netdevs.first().cloned())
                    .or_else(|| {
                        p.gids
                            .iter()
                            .filter_map(|e| e.ndev.as_ref())
                            .find(|n| netdevs.is_none_or(|set| set.contains(*n)))
                            .cloned()
                    });
                PortReport {
                    device: d.name.clone(),
                    port: p.num,
                    state: p.state.clone(),
                    link_layer: p.link_layer.as_str().map(String::from),
                    netdev,
                    suggested_gid_index: suggested,
                }
            })
            .collect()
    }
}

fn short_reason(u: &Unfit) -> String {
    match u {
        Unfit::NoSuchIndex { .. } | Unfit::Empty => "empty".to_string(),
        Unfit::LinkLocal => "link-local".to_string(),
        Unfit::WrongFamily { have, .. } => have.as_str().to_string(),
        Unfit::NotV2 => "RoCE v1".to_string(),
        Unfit::OutOfRange(_) => "out of range".to_string(),
        Unfit::NoNetdev => "without netdev".to_string(),
        Unfit::NetdevAbsent(_) => "on a netdev outside this namespace".to_string(),
    }
}

fn bytes(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_sizes() {
        assert_eq!(bytes(8 << 20), "8 MiB");
        assert_eq!(bytes(65536), "64 KiB");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(list(&["a".into(), "b".into()]), "a, b");
        let many: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        assert_eq!(list(&many), "0, 1, …, 5 (6)");
    }
}
