//! The RDMA devices sysfs lists, their ports and GID tables, as [`facts`](super::facts) reads them.

use std::net::Ipv6Addr;

use super::gid::{self, GidClass, RoceVersion};

/// One RDMA device.
#[derive(Debug, Clone, PartialEq)]
pub struct RdmaDevice {
    /// `mlx5_0`, `ibp0p0`, `rocep…`.
    pub name: String,
    /// Ports, in order.
    pub ports: Vec<Port>,
    /// Netdevs of the device's PCI function (`device/net/*`), in this namespace.
    pub netdevs: Vec<String>,
    /// The device's verbs character device (`uverbsN`: the `/sys/class/infiniband_verbs/uverbsN` whose
    /// `ibdev` names it, as libibverbs finds it); `None` when sysfs names none.
    pub uverbs: Option<String>,
    /// The kernel driver of its PCI function: the last part of the `device/driver` link (`mlx5_core`,
    /// `efa`); `None` when the link is absent.
    pub driver: Option<String>,
    /// The PCI address of its function (`0000:3b:00.0`): the last part of the `device` link, when it is one.
    pub pci: Option<String>,
}

/// One port of an RDMA device.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// Port number (1-based on Mellanox).
    pub num: u32,
    /// `state`: `4: ACTIVE` → `ACTIVE`.
    pub state: Option<String>,
    /// `link_layer`.
    pub link_layer: LinkLayer,
    /// The GID table, one entry per `gids/<i>` file (empty entries included).
    pub gids: Vec<GidEntry>,
}

impl Port {
    /// Is the port ACTIVE (the only state NCCL and UCX use)?
    pub fn is_active(&self) -> bool {
        self.state.as_deref() == Some("ACTIVE") || self.state.as_deref() == Some("ACTIVE_DEFER")
    }

    /// The entry at a GID index.
    pub fn gid(&self, index: u32) -> Option<&GidEntry> {
        self.gids.iter().find(|g| g.index == index)
    }
}

/// A port's link layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkLayer {
    /// InfiniBand: LID-addressed; GID index settings are ignored.
    InfiniBand,
    /// Ethernet: RoCE.
    Ethernet,
    /// Anything else, or unreadable (`None`).
    Other(Option<String>),
}

impl LinkLayer {
    pub(super) fn parse(text: Option<String>) -> Self {
        match text.as_deref() {
            Some("InfiniBand") => LinkLayer::InfiniBand,
            Some("Ethernet") => LinkLayer::Ethernet,
            _ => LinkLayer::Other(text),
        }
    }

    /// As sysfs spells it (`None` when unreadable).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            LinkLayer::InfiniBand => Some("InfiniBand"),
            LinkLayer::Ethernet => Some("Ethernet"),
            LinkLayer::Other(t) => t.as_deref(),
        }
    }
}

/// One GID table entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GidEntry {
    /// Index in the table.
    pub index: u32,
    /// The GID; `None` when unreadable or malformed.
    pub gid: Option<Ipv6Addr>,
    /// `gid_attrs/types/<i>`; `None` for empty entries or unreadable (`EINVAL`).
    pub roce: Option<RoceVersion>,
    /// `gid_attrs/ndevs/<i>`; `None` for empty entries or unreadable (`EINVAL`).
    pub ndev: Option<String>,
}

impl GidEntry {
    /// What kind of address the GID is.
    pub fn class(&self) -> GidClass {
        self.gid.map_or(GidClass::Empty, |g| gid::classify(&g))
    }
}
