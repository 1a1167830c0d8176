//! A builder for fixture trees: a fake `/sys`, `/proc`, `/dev`, `/usr/lib` under a temporary directory, the
//! way `roce doctor` reads a host or pod through [`Root`]. Shared by `doctor.rs` and the consistency tests.
#![allow(dead_code)] // each test crate uses part of it

use std::cell::RefCell;
use std::collections::HashSet;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

use roce_inspect::doctor::Root;

/// A fixture tree under a temporary directory, removed when dropped.
pub struct Tree {
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
    pub fn new() -> Self {
        Tree {
            dir: tempfile::tempdir().unwrap(),
            made: RefCell::default(),
        }
    }

    pub fn parent_of(&self, path: &Path) {
        let parent = path.parent().unwrap();
        if self.made.borrow_mut().insert(parent.to_path_buf()) {
            std::fs::create_dir_all(parent).unwrap();
        }
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p.trim_start_matches('/'))
    }

    pub fn root(&self) -> Root {
        Root::new(self.dir.path())
    }

    pub fn file(&self, p: &str, contents: &str) -> &Self {
        let path = self.path(p);
        self.parent_of(&path);
        std::fs::write(path, contents).unwrap();
        self
    }

    pub fn mkdir(&self, p: &str) -> &Self {
        std::fs::create_dir_all(self.path(p)).unwrap();
        self
    }

    pub fn remove(&self, p: &str) -> &Self {
        let path = self.path(p);
        self.made.borrow_mut().retain(|d| !d.starts_with(&path));
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
        self
    }

    pub fn link(&self, p: &str, target: &str) -> &Self {
        let path = self.path(p);
        self.parent_of(&path);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    pub fn environ(&self, vars: &[(String, String)]) -> &Self {
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

    pub fn netdevs(&self, names: &[String]) -> &Self {
        self.mkdir("/sys/class/net");
        for n in names {
            self.file(&format!("/sys/class/net/{n}/operstate"), "up\n");
        }
        self
    }

    pub fn status(&self, cap_eff: u64) -> &Self {
        self.file(
            "/proc/self/status",
            &format!("Name:\troce\nUmask:\t0022\nState:\tR (running)\nCapInh:\t0000000000000000\nCapPrm:\t{cap_eff:016x}\nCapEff:\t{cap_eff:016x}\nCapBnd:\t{cap_eff:016x}\n"),
        )
    }

    pub fn memlock(&self, soft: &str) -> &Self {
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

    pub fn rdma_core(&self, version: &str) -> &Self {
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

    pub fn modules(&self, names: &[&str]) -> &Self {
        self.mkdir("/sys/module");
        for m in names {
            self.file(&format!("/sys/module/{m}/refcnt"), "1\n");
        }
        self
    }

    pub fn gpus(&self, n: u32) -> &Self {
        self.file("/dev/nvidiactl", "").file("/dev/nvidia-uvm", "");
        for i in 0..n {
            self.file(&format!("/dev/nvidia{i}"), "");
        }
        self
    }

    /// The verbs device of `dev` as the kernel shows it: `/sys/class/infiniband_verbs/uverbs<n>/ibdev` naming
    /// it, and its node `/dev/infiniband/uverbs<n>` (what the RDMA device plugin mounts).
    pub fn uverbs(&self, dev: &str, n: u32) -> &Self {
        self.file(
            &format!("/sys/class/infiniband_verbs/uverbs{n}/ibdev"),
            &format!("{dev}\n"),
        )
        .file(&format!("/dev/infiniband/uverbs{n}"), "")
    }

    pub fn port(
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

/// A GID table entry to write.
#[derive(Clone)]
pub struct Gid {
    pub index: u32,
    pub gid: Ipv6Addr,
    pub kind: &'static str,
    pub ndev: Option<String>,
}

pub fn g(index: u32, gid: Ipv6Addr, kind: &'static str, ndev: &str) -> Gid {
    Gid {
        index,
        gid,
        kind,
        ndev: Some(ndev.to_string()),
    }
}

/// sysfs prints GIDs as eight 4-digit groups (`%pI6`, no compression).
pub fn sysfs_gid(ip: &Ipv6Addr) -> String {
    ip.segments()
        .iter()
        .map(|s| format!("{s:04x}"))
        .collect::<Vec<_>>()
        .join(":")
}

pub const V1: &str = "IB/RoCE v1";
pub const V2: &str = "RoCE v2";
