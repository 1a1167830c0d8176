//! What the host (or pod) looks like: RDMA devices and their GID tables and device nodes, netdevs, kernel
//! modules, rdma-core, capabilities, limits, GPUs, IMEX channels and the environment. Collected once,
//! read-only.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

use roce_model::fabric::attach::{RDMA_DEVICE_DIR, SHM_DIR};
use roce_model::fabric::dra::IMEX_CHANNELS_DIR;
use roce_model::fabric::nccl::NET_PLUGIN_PREFIX;
use roce_model::fabric::provider::NCCL_TOPO_FILE;

pub use super::device::{GidEntry, LinkLayer, Port, RdmaDevice};
use super::dra_metadata::{self, ClaimKind, MetadataFile};
use super::env::Env;
use super::gid::RoceVersion;
use super::root::Root;

/// Kernel modules worth reporting, in this order.
pub const MODULES: &[&str] = &[
    "mlx5_core",
    "mlx5_ib",
    "ib_core",
    "ib_uverbs",
    "rdma_ucm",
    "nvidia",
    "nvidia_peermem",
    "nv_peer_mem",
];

/// Library directories searched for `libibverbs.so.1`, after `LD_LIBRARY_PATH` and `/etc/ld.so.conf`.
pub const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
    "/usr/local/lib",
];

/// Everything `doctor` read.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFacts {
    /// RDMA devices (`/sys/class/infiniband/*`), in natural order.
    pub devices: Vec<RdmaDevice>,
    /// Netdevs in this network namespace (`/sys/class/net`); `None` when unreadable.
    pub netdevs: Option<BTreeSet<String>>,
    /// Which of [`MODULES`] are loaded (`/sys/module/<name>`); `None` when `/sys/module` is unreadable.
    pub modules: Option<Vec<String>>,
    /// GPUDirect peer-memory module; `None` when `/sys/module` is unreadable.
    pub peer_memory: Option<PeerMemory>,
    /// `libibverbs.so.1`, resolved to its versioned file.
    pub libibverbs: Option<SharedObject>,
    /// `librdmacm.so.1`, resolved to its versioned file.
    pub librdmacm: Option<SharedObject>,
    /// `CapEff` from `/proc/self/status`.
    pub cap_eff: Option<u64>,
    /// Soft `Max locked memory` from `/proc/self/limits`.
    pub memlock: Option<Limit>,
    /// GPUs visible (`/dev/nvidiaN`, else `/proc/driver/nvidia/gpus/*`); `None` when neither is readable.
    pub gpus: Option<u32>,
    /// The RDMA device nodes in [`RDMA_DEVICE_DIR`] (`rdma_cm`, `uverbsN`), in natural order; empty when the
    /// directory is absent, `None` when `/dev` itself is unreadable (a tree without `/dev`).
    pub device_nodes: Option<Vec<String>>,
    /// The IMEX channels in [`IMEX_CHANNELS_DIR`] (`channelN`, N the device's minor number), in natural
    /// order; empty when the directory is absent, `None` when `/dev` itself is unreadable.
    pub imex_channels: Option<Vec<String>>,
    /// Running in a Kubernetes pod (`KUBERNETES_SERVICE_HOST` set, or a service-account mount).
    pub in_pod: bool,
    /// The workload's environment.
    pub env: Env,
    /// Directories searched for rdma-core libraries, in order.
    pub lib_dirs: Vec<String>,
    /// The dynamic loader's directories after `LD_LIBRARY_PATH`: `/etc/ld.so.conf` (and its includes), then
    /// [`LIB_DIRS`].
    pub system_lib_dirs: Vec<String>,
    /// The NCCL net-plugin libraries (`libnccl-net*`) in each directory looked at: [`HostFacts::lib_dirs`]
    /// and the extra directories [`collect_with`] was given (a profile's library path). A directory that
    /// could not be listed is absent.
    pub net_plugin_files: BTreeMap<String, Vec<String>>,
    /// The DRA device metadata files under [`dra_metadata::CONTAINER_DIR`] (KEP-5304), in path order;
    /// `None` when the directory is absent (no driver mounts metadata into this container).
    pub dra_metadata: Option<Vec<MetadataFile>>,
    /// What is mounted at [`SHM_DIR`], from `/proc/self/mounts`; `None` when that is unreadable.
    pub shm: Option<ShmMount>,
    /// Files a profile or the environment names that NCCL opens (`NCCL_TOPO_FILE`), and whether each is
    /// there.
    pub named_files: BTreeMap<String, bool>,
}

/// The filesystem at [`SHM_DIR`] (the last mount there: later mounts hide earlier ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShmMount {
    /// No mount at `/dev/shm`: it is a directory of the container's root filesystem, if it exists.
    None,
    /// A `tmpfs`, with its `size=` in bytes (`None`: no size option, or a percentage of RAM).
    Tmpfs(Option<u64>),
    /// Another filesystem type (the node's `/dev/shm` bind-mounted, say).
    Other(String),
}

/// Which GPUDirect peer-memory module is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerMemory {
    /// `nvidia_peermem` (`/sys/module/nvidia_peermem`).
    NvidiaPeermem,
    /// Legacy `nv_peer_mem` (`/sys/kernel/mm/memory_peers/nv_mem/version`).
    NvPeerMem,
    /// Neither.
    None,
}

impl PeerMemory {
    /// `nvidia_peermem`, `nv_peer_mem` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            PeerMemory::NvidiaPeermem => "nvidia_peermem",
            PeerMemory::NvPeerMem => "nv_peer_mem",
            PeerMemory::None => "none",
        }
    }
}

/// A resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `unlimited`.
    Unlimited,
    /// A number of bytes.
    Bytes(u64),
}

/// An rdma-core shared object and the release its file name encodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedObject {
    /// Host path of the file the `.so.1` name resolves to.
    pub path: String,
    /// rdma-core release, e.g. `50.0` (from `libibverbs.so.1.14.50.0`); `None` when the name carries none.
    pub version: Option<String>,
    /// The release's major number (`50`).
    pub major: Option<u32>,
}

/// Read every fact under `root`. `env` is the workload's environment; `None` reads
/// `<root>/proc/self/environ`.
///
/// ```
/// use roce_inspect::doctor::{facts, Root};
/// let dir = std::env::temp_dir().join("roce-doctor-doc-empty");
/// std::fs::create_dir_all(&dir).unwrap();
/// let f = facts::collect(&Root::new(&dir), None);
/// assert!(f.devices.is_empty());
/// assert_eq!(f.cap_eff, None);
/// ```
pub fn collect(root: &Root, env: Option<Env>) -> HostFacts {
    collect_with(root, env, &[], &[])
}

/// [`collect`], also listing the net-plugin libraries of `extra_lib_dirs` (a profile's `LD_LIBRARY_PATH`,
/// which the environment may not carry yet) and looking for `extra_files` (the topology file a profile
/// names).
pub fn collect_with(
    root: &Root,
    env: Option<Env>,
    extra_lib_dirs: &[&str],
    extra_files: &[&str],
) -> HostFacts {
    let env = env.unwrap_or_else(|| Env::from_root(root));
    let netdevs = root
        .list("/sys/class/net")
        .map(|names| names.into_iter().collect::<BTreeSet<_>>());
    let names = root.list("/sys/class/infiniband").unwrap_or_default();
    let uverbs = if names.is_empty() {
        BTreeMap::new()
    } else {
        uverbs_devices(root)
    };
    let devices = names
        .into_iter()
        .map(|name| {
            let uverbs = uverbs.get(&name).cloned();
            device(root, name, uverbs)
        })
        .collect();
    let dev = root.list("/dev");
    let module_dir = root.list("/sys/module");
    let modules = module_dir.as_ref().map(|present| {
        MODULES
            .iter()
            .filter(|m| present.iter().any(|p| p == *m))
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
    });
    let peer_memory = if root.exists("/sys/module/nvidia_peermem") {
        Some(PeerMemory::NvidiaPeermem)
    } else if root.exists("/sys/kernel/mm/memory_peers/nv_mem/version")
        || root.exists("/sys/module/nv_peer_mem")
    {
        Some(PeerMemory::NvPeerMem)
    } else {
        module_dir.as_ref().map(|_| PeerMemory::None)
    };
    let system_lib_dirs = system_lib_dirs(root);
    let mut lib_dirs: Vec<String> = Vec::new();
    for d in env
        .get("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .chain(system_lib_dirs.iter().map(String::as_str))
    {
        push_dir(&mut lib_dirs, d);
    }
    let mut plugin_dirs = lib_dirs.clone();
    // A plugin named by path (`NCCL_NET_PLUGIN=/opt/x/libnccl-net-x.so`): its directory too.
    let by_path = env.get("NCCL_NET_PLUGIN").unwrap_or_default();
    let by_path = by_path
        .split(',')
        .filter_map(|name| name.rsplit_once('/').map(|(dir, _)| dir));
    for d in extra_lib_dirs.iter().copied().chain(by_path) {
        push_dir(&mut plugin_dirs, d);
    }
    let net_plugin_files = plugin_dirs
        .into_iter()
        .filter_map(|d| {
            let names: Vec<String> = root
                .list(&d)?
                .into_iter()
                .filter(|n| n.starts_with(NET_PLUGIN_PREFIX))
                .collect();
            Some((d, names))
        })
        .collect();
    let status = root.read("/proc/self/status");
    let limits = root.read("/proc/self/limits");
    let topo = env.get(NCCL_TOPO_FILE);
    let named_files = extra_files
        .iter()
        .copied()
        .chain(topo)
        .filter(|f| f.starts_with('/'))
        .map(|f| (f.to_string(), root.exists(f)))
        .collect();
    let in_pod = env
        .get("KUBERNETES_SERVICE_HOST")
        .is_some_and(|v| !v.is_empty())
        || root.exists("/var/run/secrets/kubernetes.io/serviceaccount");
    HostFacts {
        devices,
        netdevs,
        modules,
        peer_memory,
        libibverbs: shared_object(root, &lib_dirs, "libibverbs.so.1"),
        librdmacm: shared_object(root, &lib_dirs, "librdmacm.so.1"),
        cap_eff: status.as_deref().and_then(parse_cap_eff),
        memlock: limits.as_deref().and_then(parse_memlock),
        gpus: gpus(root, dev.as_deref()),
        device_nodes: dev
            .as_ref()
            .map(|_| root.list(RDMA_DEVICE_DIR).unwrap_or_default()),
        imex_channels: dev.as_ref().map(|_| {
            root.list(IMEX_CHANNELS_DIR)
                .unwrap_or_default()
                .into_iter()
                .filter(|n| is_numbered(n, "channel"))
                .collect()
        }),
        in_pod,
        env,
        lib_dirs,
        system_lib_dirs,
        net_plugin_files,
        dra_metadata: dra_metadata_files(root),
        shm: root.read("/proc/self/mounts").map(|m| parse_shm(&m)),
        named_files,
    }
}

/// The last mount at [`SHM_DIR`] in a `/proc/self/mounts` table (`fs_spec fs_file fs_vfstype fs_mntops …`,
/// fstab(5); spaces in a path are written `\040`, which `/dev/shm` has none of).
pub(crate) fn parse_shm(mounts: &str) -> ShmMount {
    let Some((kind, options)) = mounts.lines().rev().find_map(|l| {
        let mut f = l.split_whitespace();
        let (_, path, kind, options) = (f.next()?, f.next()?, f.next()?, f.next()?);
        (path == SHM_DIR).then_some((kind, options))
    }) else {
        return ShmMount::None;
    };
    if kind != "tmpfs" {
        return ShmMount::Other(kind.to_string());
    }
    ShmMount::Tmpfs(
        options
            .split(',')
            .find_map(|o| o.strip_prefix("size="))
            .and_then(tmpfs_size),
    )
}

/// tmpfs(5) `size=`: bytes with an optional `k`, `m`, `g` suffix (binary multiples); `%` of RAM is `None`.
fn tmpfs_size(v: &str) -> Option<u64> {
    let (digits, shift) = match v.as_bytes().last()? {
        b'k' | b'K' => (&v[..v.len() - 1], 10),
        b'm' | b'M' => (&v[..v.len() - 1], 20),
        b'g' | b'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Every `<driver>-metadata.json` under [`dra_metadata::CONTAINER_DIR`]'s `resourceclaims/<claim>/<request>/`
/// and `resourceclaimtemplates/<claim>/<request>/`, decoded; `None` when the directory is absent.
fn dra_metadata_files(root: &Root) -> Option<Vec<MetadataFile>> {
    let top = dra_metadata::CONTAINER_DIR;
    root.list(top)?;
    let mut files = Vec::new();
    for kind in ClaimKind::ALL {
        let sub = format!("{top}/{}", kind.subdir());
        for claim in root.list(&sub).unwrap_or_default() {
            for request in root.list(&format!("{sub}/{claim}")).unwrap_or_default() {
                let dir = format!("{sub}/{claim}/{request}");
                for name in root.list(&dir).unwrap_or_default() {
                    if name.len() <= dra_metadata::FILE_SUFFIX.len()
                        || !name.ends_with(dra_metadata::FILE_SUFFIX)
                    {
                        continue;
                    }
                    let bytes = root.read_bytes(&format!("{dir}/{name}"), dra_metadata::FILE_LIMIT);
                    files.push(MetadataFile::parse(
                        kind,
                        &claim,
                        &request,
                        &name,
                        bytes.as_deref(),
                    ));
                }
            }
        }
    }
    Some(files)
}

impl HostFacts {
    /// Does the process hold `CAP_IPC_LOCK`? `None` when `CapEff` was unreadable.
    pub fn ipc_lock(&self) -> Option<bool> {
        self.cap_eff
            .map(|c| c & (1 << roce_model::fabric::attach::IPC_LOCK_BIT) != 0)
    }

    /// Is a kernel module among [`MODULES`] loaded? `None` when `/sys/module` was unreadable.
    pub fn module(&self, name: &str) -> Option<bool> {
        self.modules.as_ref().map(|m| m.iter().any(|x| x == name))
    }

    /// Every `(device, port)`, in order.
    pub fn ports(&self) -> impl Iterator<Item = (&RdmaDevice, &Port)> {
        self.devices
            .iter()
            .flat_map(|d| d.ports.iter().map(move |p| (d, p)))
    }

    /// A device by name.
    pub fn device(&self, name: &str) -> Option<&RdmaDevice> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The netdevs in natural order (`net2` before `net10`), for display; `None` when unreadable.
    pub fn netdev_list(&self) -> Option<Vec<String>> {
        self.netdevs.as_ref().map(|set| {
            let mut v: Vec<String> = set.iter().cloned().collect();
            v.sort_by_cached_key(|n| super::root::natural_key(n));
            v
        })
    }

    /// Does [`RDMA_DEVICE_DIR`] hold a node for `uverbs` (`uverbs3`)? `None` when `/dev` was unreadable.
    pub fn has_device_node(&self, uverbs: &str) -> Option<bool> {
        self.device_nodes
            .as_ref()
            .map(|n| n.iter().any(|x| x == uverbs))
    }

    /// Does [`RDMA_DEVICE_DIR`] hold any verbs node (`uverbsN`) at all? `None` when `/dev` was unreadable.
    pub fn any_uverbs_node(&self) -> Option<bool> {
        self.device_nodes
            .as_ref()
            .map(|n| n.iter().any(|x| is_numbered(x, "uverbs")))
    }

    /// Is a netdev in this namespace? `None` when `/sys/class/net` was unreadable.
    pub fn has_netdev(&self, name: &str) -> Option<bool> {
        self.netdevs.as_ref().map(|n| n.contains(name))
    }
}

/// `prefix` followed by a number: `uverbs3`, `channel0`.
fn is_numbered(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// RDMA device → its verbs character device, from `/sys/class/infiniband_verbs/uverbsN/ibdev` (how
/// libibverbs pairs them, rdma-core `libibverbs/init.c`).
fn uverbs_devices(root: &Root) -> BTreeMap<String, String> {
    root.list_unsorted("/sys/class/infiniband_verbs")
        .unwrap_or_default()
        .into_iter()
        .filter(|n| is_numbered(n, "uverbs"))
        .filter_map(|u| {
            let dev = root.read_attr(&format!("/sys/class/infiniband_verbs/{u}/ibdev"))?;
            (!dev.is_empty()).then_some((dev, u))
        })
        .collect()
}

fn device(root: &Root, name: String, uverbs: Option<String>) -> RdmaDevice {
    let base = format!("/sys/class/infiniband/{name}");
    let ports = root
        .list(&format!("{base}/ports"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| p.parse::<u32>().ok())
        .map(|num| port(root, &format!("{base}/ports/{num}"), num))
        .collect();
    let netdevs = root.list(&format!("{base}/device/net")).unwrap_or_default();
    let driver = root
        .read_link(&format!("{base}/device/driver"))
        .and_then(|l| l.file_name().map(|f| f.to_string_lossy().into_owned()));
    let pci = root
        .read_link(&format!("{base}/device"))
        .and_then(|l| l.file_name().map(|f| f.to_string_lossy().into_owned()))
        .filter(|f| is_pci_address(f));
    RdmaDevice {
        name,
        ports,
        netdevs,
        uverbs,
        driver,
        pci,
    }
}

fn port(root: &Root, dir: &str, num: u32) -> Port {
    let state = root.read(&format!("{dir}/state")).map(|s| {
        // `4: ACTIVE` → `ACTIVE`
        s.split_once(':')
            .map_or(s.as_str(), |(_, name)| name.trim())
            .to_string()
    });
    let link_layer = LinkLayer::parse(root.read(&format!("{dir}/link_layer")));
    let mut indices: Vec<u32> = root
        .list_unsorted(&format!("{dir}/gids"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| i.parse::<u32>().ok())
        .collect();
    indices.sort_unstable();
    let gids = indices
        .into_iter()
        .map(|index| {
            let gid = root
                .read_attr(&format!("{dir}/gids/{index}"))
                .and_then(|t| t.parse::<Ipv6Addr>().ok());
            // Empty entries: the kernel answers EINVAL for their attributes (NCCL 2.26+ skips them too),
            // so they are not read at all.
            let filled = gid.is_some_and(|g| !g.is_unspecified());
            let (roce, ndev) = if filled {
                (
                    root.read_attr(&format!("{dir}/gid_attrs/types/{index}"))
                        .and_then(|t| RoceVersion::parse(&t)),
                    root.read_attr(&format!("{dir}/gid_attrs/ndevs/{index}"))
                        .filter(|n| !n.is_empty()),
                )
            } else {
                (None, None)
            };
            GidEntry {
                index,
                gid,
                roce,
                ndev,
            }
        })
        .collect();
    Port {
        num,
        state,
        link_layer,
        gids,
    }
}

/// `0000:3b:00.0` (domain:bus:device.function, hexadecimal), as sysfs names a PCI function.
pub(crate) fn is_pci_address(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let mut parts = s.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(domain), Some(bus), Some(devfn), None) => {
            hex(domain, 4)
                && hex(bus, 2)
                && devfn
                    .split_once('.')
                    .is_some_and(|(dev, func)| hex(dev, 2) && func.len() == 1 && hex(func, 1))
        }
        _ => false,
    }
}

/// `CapEff:\t0000003fffffffff` → the mask.
pub(crate) fn parse_cap_eff(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
}

/// The soft limit of the `Max locked memory` row of `/proc/self/limits`.
pub(crate) fn parse_memlock(limits: &str) -> Option<Limit> {
    let row = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max locked memory"))?;
    let soft = row.split_whitespace().next()?;
    if soft == "unlimited" {
        Some(Limit::Unlimited)
    } else {
        soft.parse().ok().map(Limit::Bytes)
    }
}

fn gpus(root: &Root, dev: Option<&[String]>) -> Option<u32> {
    let from_dev = dev.map(|names| {
        names
            .iter()
            .filter(|n| {
                n.strip_prefix("nvidia")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
            .count()
    });
    let from_proc = root.list("/proc/driver/nvidia/gpus").map(|g| g.len());
    let n = match (from_dev, from_proc) {
        (Some(d), _) if d > 0 => d,
        (_, Some(p)) => p,
        (Some(d), None) => d,
        (None, None) => return None,
    };
    u32::try_from(n).ok()
}

/// Add an absolute directory once, without its trailing `/`.
fn push_dir(dirs: &mut Vec<String>, d: &str) {
    let d = d.trim().trim_end_matches('/');
    if d.starts_with('/') && !dirs.iter().any(|x| x == d) {
        dirs.push(d.to_string());
    }
}

/// `/etc/ld.so.conf` (and its `include`d `ld.so.conf.d/*.conf`), then [`LIB_DIRS`]: where the loader looks
/// after `LD_LIBRARY_PATH`.
fn system_lib_dirs(root: &Root) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    let mut confs = vec!["/etc/ld.so.conf".to_string()];
    if let Some(names) = root.list("/etc/ld.so.conf.d") {
        confs.extend(
            names
                .into_iter()
                .filter(|n| n.ends_with(".conf"))
                .map(|n| format!("/etc/ld.so.conf.d/{n}")),
        );
    }
    for conf in confs {
        for line in root.read(&conf).unwrap_or_default().lines() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if !line.starts_with("include") {
                push_dir(&mut dirs, line);
            }
        }
    }
    for d in LIB_DIRS {
        push_dir(&mut dirs, d);
    }
    dirs
}

/// Find `name` (`libibverbs.so.1`) in `dirs` and read the rdma-core release from the file it resolves to
/// (`libibverbs.so.1.<ABI>.<release>`, rdma-core `Documentation/versioning.md`).
fn shared_object(root: &Root, dirs: &[String], name: &str) -> Option<SharedObject> {
    for dir in dirs {
        let host_path = format!("{dir}/{name}");
        if root.read_link(&host_path).is_none() && !root.exists(&host_path) {
            continue;
        }
        let resolved = resolve_links(root, Path::new(&host_path));
        let mut file = resolved
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        // A plain `libibverbs.so.1` (copied, not linked): look for a versioned sibling.
        if file
            .as_deref()
            .is_none_or(|f| parse_version(name, f).is_none())
            && let Some(sibling) = root.list(dir).and_then(|names| {
                names
                    .into_iter()
                    .filter(|n| parse_version(name, n).is_some())
                    .max_by_key(|n| super::root::natural_key(n))
            })
        {
            file = Some(sibling);
        }
        let version = file.as_deref().and_then(|f| parse_version(name, f));
        let path = match (&file, resolved.parent()) {
            (Some(f), Some(parent)) => parent.join(f).display().to_string(),
            _ => host_path.clone(),
        };
        return Some(SharedObject {
            path,
            major: version.as_deref().and_then(major_of),
            version,
        });
    }
    None
}

/// Follow symlinks as host paths (an absolute target is re-based onto the root), at most 8 hops.
fn resolve_links(root: &Root, host_path: &Path) -> PathBuf {
    let mut current = host_path.to_path_buf();
    for _ in 0..8 {
        let Some(target) = root.read_link(&current.display().to_string()) else {
            break;
        };
        current = if target.is_absolute() {
            target
        } else {
            current.parent().map_or(target.clone(), |p| p.join(&target))
        };
    }
    current
}

/// `libibverbs.so.1.14.50.0` → `50.0` (the part after the ABI number).
pub(crate) fn parse_version(soname: &str, file: &str) -> Option<String> {
    let rest = file.strip_prefix(soname)?.strip_prefix('.')?;
    let (abi, release) = rest.split_once('.')?;
    (abi.bytes().all(|b| b.is_ascii_digit())
        && !abi.is_empty()
        && release.starts_with(|c: char| c.is_ascii_digit()))
    .then(|| release.to_string())
}

/// The major release of an rdma-core version: `50.0` → 50, `2410mlnx54.0` → 54 (MLNX_OFED spelling).
pub(crate) fn major_of(version: &str) -> Option<u32> {
    let digits = |s: &str| -> Option<u32> {
        let d: String = s.chars().take_while(char::is_ascii_digit).collect();
        d.parse().ok()
    };
    match version.split_once("mlnx") {
        Some((_, after)) => digits(after),
        None => digits(version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_file_names() {
        assert_eq!(
            parse_version("libibverbs.so.1", "libibverbs.so.1.14.50.0").as_deref(),
            Some("50.0")
        );
        assert_eq!(
            parse_version("librdmacm.so.1", "librdmacm.so.1.3.54.0").as_deref(),
            Some("54.0")
        );
        assert_eq!(parse_version("libibverbs.so.1", "libibverbs.so.1"), None);
        assert_eq!(parse_version("libibverbs.so.1", "libibverbs.so.1.14"), None);
        assert_eq!(major_of("50.0"), Some(50));
        assert_eq!(major_of("2410mlnx54.1"), Some(54));
        assert_eq!(major_of("x"), None);
    }

    #[test]
    fn shm_mounts() {
        // containerd's default, a Kubernetes `emptyDir: {medium: Memory}` (tmpfs without size), the last
        // mount winning, a size in plain bytes, and the node's /dev/shm bind-mounted.
        let runtime = "overlay / overlay rw 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n";
        assert_eq!(parse_shm(runtime), ShmMount::Tmpfs(Some(64 << 20)));
        let memory = format!("{runtime}tmpfs /dev/shm tmpfs rw,relatime 0 0\n");
        assert_eq!(parse_shm(&memory), ShmMount::Tmpfs(None));
        assert_eq!(
            parse_shm("tmpfs /dev/shm tmpfs rw,size=2147483648 0 0\n"),
            ShmMount::Tmpfs(Some(2 << 30))
        );
        assert_eq!(
            parse_shm("tmpfs /dev/shm tmpfs rw,size=50% 0 0\n"),
            ShmMount::Tmpfs(None)
        );
        assert_eq!(
            parse_shm("/dev/sda1 /dev/shm ext4 rw 0 0\n"),
            ShmMount::Other("ext4".into())
        );
        assert_eq!(parse_shm("proc /proc proc rw 0 0\n"), ShmMount::None);
        assert_eq!(parse_shm("garbage\n\n/dev/shm\n"), ShmMount::None);
    }

    #[test]
    fn status_and_limits() {
        assert_eq!(
            parse_cap_eff("Name:\tx\nCapEff:\t00000000a80425fb\n"),
            Some(0xa80425fb)
        );
        assert_eq!(parse_cap_eff("CapEff:\tzz\n"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max locked memory         8388608              8388608              bytes     \n";
        assert_eq!(parse_memlock(limits), Some(Limit::Bytes(8_388_608)));
        assert_eq!(
            parse_memlock(
                "Max locked memory         unlimited            unlimited            bytes\n"
            ),
            Some(Limit::Unlimited)
        );
        assert_eq!(parse_memlock("nothing"), None);
    }
}
