//! A builder for fixture trees: a fake `/sys`, `/proc`, `/dev`, `/usr/lib` under a temporary directory, the
//! way `roce doctor` reads a host or pod through [`Root`]. Shared by `doctor.rs` and the consistency tests.
#![allow(dead_code)] // each test crate uses part of it

use std::cell::RefCell;
use std::collections::HashSet;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

use roce_inspect::doctor::Root;
use roce_model::Profile;
use roce_model::model::{AddrFamily, FabricKind};
use roce_render::Plan;

/// A fixture tree under a temporary directory, removed when dropped.
pub(crate) struct Tree {
    pub dir: tempfile::TempDir,
    /// Directories already created (file creation is slow in some sandboxes: skip repeated mkdirs).
    made: RefCell<HashSet<PathBuf>>,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Tree {
    pub(crate) fn new() -> Self {
        Tree {
            dir: tempfile::tempdir().unwrap(),
            made: RefCell::default(),
        }
    }

    pub(crate) fn parent_of(&self, path: &Path) {
        let parent = path.parent().unwrap();
        if self.made.borrow_mut().insert(parent.to_path_buf()) {
            std::fs::create_dir_all(parent).unwrap();
        }
    }

    pub(crate) fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p.trim_start_matches('/'))
    }

    pub(crate) fn root(&self) -> Root {
        Root::new(self.dir.path())
    }

    pub(crate) fn file(&self, p: &str, contents: &str) -> &Self {
        let path = self.path(p);
        self.parent_of(&path);
        std::fs::write(path, contents).unwrap();
        self
    }

    pub(crate) fn mkdir(&self, p: &str) -> &Self {
        std::fs::create_dir_all(self.path(p)).unwrap();
        self
    }

    pub(crate) fn remove(&self, p: &str) -> &Self {
        let path = self.path(p);
        self.made.borrow_mut().retain(|d| !d.starts_with(&path));
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
        self
    }

    pub(crate) fn link(&self, p: &str, target: &str) -> &Self {
        let path = self.path(p);
        self.parent_of(&path);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    pub(crate) fn environ(&self, vars: &[(String, String)]) -> &Self {
        let mut bytes = Vec::new();
        for (k, v) in vars {
            bytes.extend_from_slice(format!("{k}={v}").as_bytes());
            bytes.push(0);
        }
        let path = self.path("/proc/self/environ");
        self.parent_of(&path);
        std::fs::write(path, bytes).unwrap();
        self
    }

    pub(crate) fn netdevs(&self, names: &[String]) -> &Self {
        self.mkdir("/sys/class/net");
        for n in names {
            self.file(&format!("/sys/class/net/{n}/operstate"), "up\n");
        }
        self
    }

    pub(crate) fn status(&self, cap_eff: u64) -> &Self {
        self.file(
            "/proc/self/status",
            &format!("Name:\troce\nUmask:\t0022\nState:\tR (running)\nCapInh:\t0000000000000000\nCapPrm:\t{cap_eff:016x}\nCapEff:\t{cap_eff:016x}\nCapBnd:\t{cap_eff:016x}\n"),
        )
    }

    pub(crate) fn memlock(&self, soft: &str) -> &Self {
        self.file(
            "/proc/self/limits",
            &format!(
                "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max cpu time              unlimited            unlimited            seconds   \n\
                 Max locked memory         {soft:<20} {soft:<20} bytes     \n\
                 Max open files            1048576              1048576              files     \n"
            ),
        )
    }

    pub(crate) fn rdma_core(&self, version: &str) -> &Self {
        let dir = "/usr/lib/x86_64-linux-gnu";
        self.file(&format!("{dir}/libibverbs.so.1.14.{version}"), "ELF")
            .link(
                &format!("{dir}/libibverbs.so.1"),
                &format!("libibverbs.so.1.14.{version}"),
            )
            .file(&format!("{dir}/librdmacm.so.1.3.{version}"), "ELF")
            .link(
                &format!("{dir}/librdmacm.so.1"),
                &format!("librdmacm.so.1.3.{version}"),
            )
    }

    pub(crate) fn modules(&self, names: &[&str]) -> &Self {
        self.mkdir("/sys/module");
        for m in names {
            self.file(&format!("/sys/module/{m}/refcnt"), "1\n");
        }
        self
    }

    pub(crate) fn gpus(&self, n: u32) -> &Self {
        self.file("/dev/nvidiactl", "").file("/dev/nvidia-uvm", "");
        for i in 0..n {
            self.file(&format!("/dev/nvidia{i}"), "");
        }
        self
    }

    /// The verbs device of `dev` as the kernel shows it: `/sys/class/infiniband_verbs/uverbs<n>/ibdev` naming
    /// it, and its node `/dev/infiniband/uverbs<n>` (what the RDMA device plugin mounts).
    pub(crate) fn uverbs(&self, dev: &str, n: u32) -> &Self {
        self.file(
            &format!("/sys/class/infiniband_verbs/uverbs{n}/ibdev"),
            &format!("{dev}\n"),
        )
        .file(&format!("/dev/infiniband/uverbs{n}"), "")
    }

    pub(crate) fn port(
        &self,
        dev: &str,
        num: u32,
        state: &str,
        link_layer: &str,
        table_len: u32,
        gids: &[Gid],
    ) -> &Self {
        let base = format!("/sys/class/infiniband/{dev}/ports/{num}");
        self.file(&format!("{base}/state"), &format!("{state}\n"))
            .file(&format!("{base}/phys_state"), "5: LinkUp\n")
            .file(&format!("{base}/link_layer"), &format!("{link_layer}\n"))
            .file(&format!("{base}/rate"), "400 Gb/sec (4X NDR)\n");
        self.mkdir(&format!("{base}/gid_attrs/types"))
            .mkdir(&format!("{base}/gid_attrs/ndevs"));
        for i in 0..table_len {
            let entry = gids.iter().find(|g| g.index == i);
            let text =
                entry.map_or_else(|| sysfs_gid(&Ipv6Addr::UNSPECIFIED), |g| sysfs_gid(&g.gid));
            self.file(&format!("{base}/gids/{i}"), &format!("{text}\n"));
            // Empty entries answer EINVAL for their attributes; here they simply have no attribute files.
            if let Some(g) = entry {
                self.file(
                    &format!("{base}/gid_attrs/types/{i}"),
                    &format!("{}\n", g.kind),
                );
                if let Some(n) = &g.ndev {
                    self.file(&format!("{base}/gid_attrs/ndevs/{i}"), &format!("{n}\n"));
                }
            }
        }
        self
    }
}

impl Tree {
    /// What every healthy pod has besides the fabric: rdma-core 54, IPC_LOCK, unlimited memlock, `gpus`
    /// GPUs, the RDMA and GPU modules with nvidia_peermem, a service-account mount.
    pub(crate) fn pod_basics(&self, gpus: u32) -> &Self {
        self.status(CAP_DOCKER_DEFAULT | CAP_IPC_LOCK)
            .memlock("unlimited")
            .rdma_core("54.0")
            .modules(&[
                "mlx5_core",
                "mlx5_ib",
                "ib_core",
                "ib_uverbs",
                "rdma_ucm",
                "nvidia",
                "nvidia_peermem",
            ])
            .gpus(gpus)
            .file(
                "/var/run/secrets/kubernetes.io/serviceaccount/namespace",
                "default",
            )
    }
}

/// A GID table entry to write.
#[derive(Clone)]
pub(crate) struct Gid {
    pub index: u32,
    pub gid: Ipv6Addr,
    pub kind: &'static str,
    pub ndev: Option<String>,
}

pub(crate) fn g(index: u32, gid: Ipv6Addr, kind: &'static str, ndev: &str) -> Gid {
    Gid {
        index,
        gid,
        kind,
        ndev: Some(ndev.to_string()),
    }
}

/// sysfs prints GIDs as eight 4-digit groups (`%pI6`, no compression).
pub(crate) fn sysfs_gid(ip: &Ipv6Addr) -> String {
    ip.segments()
        .iter()
        .map(|s| format!("{s:04x}"))
        .collect::<Vec<_>>()
        .join(":")
}

pub(crate) const V1: &str = "IB/RoCE v1";
pub(crate) const V2: &str = "RoCE v2";

pub(crate) const CAP_DOCKER_DEFAULT: u64 = 0x00000000a80425fb; // no IPC_LOCK
pub(crate) const CAP_IPC_LOCK: u64 = 1 << 14;

/// The index the healthy job uses for its RoCE v2 global GID: the profile's, else 7 (NCCL and UCX then
/// choose by family and range).
pub(crate) fn gid_index_of(plan: &Plan) -> u32 {
    plan.env_value("NCCL_IB_GID_INDEX")
        .or(plan.env_value("UCX_IB_GID_INDEX"))
        .map_or(7, |v| v.parse().unwrap())
}

/// A port's GID table, sparse as small sysfs trees must be here (file creation is slow in some sandboxes):
/// 0/1 link-local on the host netdev (not in this namespace), 3 the pod netdev's link-local RoCE v2 GID,
/// 5 the other family's address on the pod netdev, and at `index - 1`/`index` the RoCE v1/v2 GID of the
/// profile's family and range on the pod netdev; the other entries are empty. Below index 7 the four fixed
/// entries follow the wanted one instead.
fn gid_table(
    profile: &Profile,
    nic: u32,
    port: u32,
    k: u16,
    pod: &str,
    host: &str,
    index: u32,
) -> Vec<Gid> {
    let host_ll = Ipv6Addr::new(0xfe80, 0, 0, 0, 0x5e00, 0x00ff, 0xfe10, k);
    let pod_ll = Ipv6Addr::new(0xfe80, 0, 0, 0, 0x7a1c, 0x2aff, 0xfe20, k);
    let v4 = Ipv6Addr::new(
        0,
        0,
        0,
        0,
        0,
        0xffff,
        0x0a64 | nic as u16,
        (port << 8 | 7) as u16,
    );
    let v6 = Ipv6Addr::new(0xfd02, port as u16, 0x0100 | nic as u16, 0x0101, 0, 0, 0, 7);
    let family = profile.fabric.addr_family.as_ref().map(|f| f.value);
    if let Some(range) = &profile.fabric.addr_range {
        assert_eq!(
            range.value, "fd02::/16",
            "the table's global GIDs are in fd02::/16"
        );
    }
    let (wanted, other) = match family {
        Some(AddrFamily::Ipv4) => (v4, v6),
        _ => (v6, v4),
    };
    // A profile that pins a low index (OCI's 3) gets the fixed entries above it.
    let fixed = if index >= 7 {
        [0, 1, 3, 5]
    } else {
        [index + 1, index + 2, index + 3, index + 4]
    };
    let mut table = vec![
        g(fixed[0], host_ll, V1, host),
        g(fixed[1], host_ll, V2, host),
        g(fixed[2], pod_ll, V2, pod),
        g(fixed[3], other, V2, pod),
        g(index, wanted, V2, pod),
    ];
    if let Some(v1) = index.checked_sub(1) {
        table.push(g(v1, wanted, V1, pod));
    }
    table
}

/// The GID table's length for a wanted index: every entry [`gid_table`] writes.
fn table_len(index: u32) -> u32 {
    if index >= 7 { index + 1 } else { index + 5 }
}

/// A rail's netdev in the pod: the profile's name, else the cloud's (GKE names the interfaces it attaches
/// `eth1`…, in the order of the pod's interface annotation).
fn pod_netdev(r: &roce_model::model::Rail) -> String {
    r.pod_netdev
        .clone()
        .map_or_else(|| format!("eth{}", r.index + 1), String::from)
}

/// A healthy pod of `profile`: every rail's device, port, GID table and verbs node, IPC_LOCK, unlimited
/// memlock, rdma-core 54, the modules and GPUs of its node pool, in a Kubernetes pod.
pub(crate) fn pod_of(p: &Profile, plan: &Plan) -> Tree {
    let t = Tree::new();
    t.pod_basics(p.node_pool.gpus_per_node.value);
    let roce = p.fabric.kind.value == FabricKind::Roce;
    let rails = p.rail_list();
    let mut nets = vec!["lo".to_string(), "eth0".to_string()];
    if roce {
        nets.extend(rails.iter().map(pod_netdev));
    }
    t.netdevs(&nets);
    let port = p.rails.port_num.value;
    let index = gid_index_of(plan);
    for r in &rails {
        let dev = &r.pod_device;
        if roce {
            let pod = pod_netdev(r);
            let host = r
                .host_port
                .clone()
                .map_or_else(|| format!("host{}", r.index), String::from);
            let gids = gid_table(p, r.nic, r.port, r.index as u16, &pod, &host, index);
            t.port(dev, port, "4: ACTIVE", "Ethernet", table_len(index), &gids);
        } else {
            let gid = Ipv6Addr::new(
                0xfe80,
                0,
                0,
                0,
                0xa088,
                0xc203,
                0x00b1,
                0x1000 + r.index as u16,
            );
            let gids = [Gid {
                index: 0,
                gid,
                kind: V1,
                ndev: None,
            }];
            t.port(dev, port, "4: ACTIVE", "InfiniBand", 2, &gids);
        }
        // The PCI function's driver: the provider's own (EFA's `efa`), else ConnectX's.
        let driver = p
            .nccl_net
            .provider
            .value
            .device_driver()
            .unwrap_or("mlx5_core");
        t.link(
            &format!("/sys/class/infiniband/{dev}/device/driver"),
            &format!("../../../../bus/pci/drivers/{driver}"),
        );
        t.file(&format!("/sys/class/infiniband/{dev}/node_type"), "1: CA\n")
            .file(&format!("/dev/infiniband/uverbs{}", r.index), "");
    }
    // what the RDMA device plugin mounts with `rdma/ib`
    t.file("/dev/infiniband/rdma_cm", "");
    t
}

/// The environment of a pod rendered from the profile: the plan's env beside what Kubernetes sets.
pub(crate) fn pod_env(plan: &Plan) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        (
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ),
        ("HOSTNAME", "job-0"),
        ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
        ("KUBERNETES_SERVICE_PORT", "443"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend(plan.env.iter().map(|v| (v.name.clone(), v.value.clone())));
    env
}
