//! RoCE GIDs: what an entry is, whether it fits what NCCL/UCX need, and which index to use.
//!
//! The selection follows NCCL's auto-selection (`ncclIbGetGidIndex`, nccl-ucx-facts §1.4) and the host
//! rules of §4: a usable entry is non-empty, not link-local (`fe80::/64`), RoCE v2, of the wanted address
//! family (IPv4-mapped `::ffff:a.b.c.d` for `AF_INET`, anything else for `AF_INET6`), inside the address
//! range when one is given, and — what NCCL does not check but a pod needs — bound to a netdev that is in
//! this network namespace. The lowest such index wins. With no family given, IPv4 is preferred to IPv6
//! (UCX's `auto` order).

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::facts::{GidEntry, Port};

/// What kind of address a GID is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GidClass {
    /// All zero: an unused slot.
    Empty,
    /// `fe80::/64`: not routable; NCCL treats it as invalid.
    LinkLocal,
    /// `::ffff:a.b.c.d`: an IPv4 address (`AF_INET`).
    Ipv4Mapped(Ipv4Addr),
    /// Any other IPv6 address (global or ULA, e.g. `fd02::/16`).
    Ipv6(Ipv6Addr),
}

/// Classify a GID.
///
pub(crate) fn classify(gid: &Ipv6Addr) -> GidClass {
    let s = gid.segments();
    if gid.is_unspecified() {
        GidClass::Empty
    } else if s[0] == 0xfe80 && s[1] == 0 && s[2] == 0 && s[3] == 0 {
        GidClass::LinkLocal
    } else if let Some(v4) = gid.to_ipv4_mapped() {
        GidClass::Ipv4Mapped(v4)
    } else {
        GidClass::Ipv6(*gid)
    }
}

/// RoCE version of a GID entry (`gid_attrs/types/<i>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceVersion {
    /// `IB/RoCE v1` or `RoCE v1` (also what InfiniBand ports report).
    V1,
    /// `RoCE v2`: routable, UDP-encapsulated.
    V2,
}

impl RoceVersion {
    /// Parse the sysfs spelling; anything else is `None` (UCX: `failed to parse gid type`).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "IB/RoCE v1" | "RoCE v1" => Some(RoceVersion::V1),
            "RoCE v2" => Some(RoceVersion::V2),
            _ => None,
        }
    }
}

/// An address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `AF_INET`: IPv4-mapped GIDs.
    Ipv4,
    /// `AF_INET6`: IPv6 GIDs.
    Ipv6,
}

impl Family {
    /// NCCL's `NCCL_IB_ADDR_FAMILY` spelling (anything but `AF_INET6` is `AF_INET` to NCCL).
    pub fn from_nccl(value: &str) -> Self {
        if value == "AF_INET6" {
            Family::Ipv6
        } else {
            Family::Ipv4
        }
    }

    /// `IPv4` or `IPv6`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ipv4 => "IPv4",
            Family::Ipv6 => "IPv6",
        }
    }
}

/// A CIDR range (`fd02::/16`, `10.0.0.0/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// Network address.
    pub addr: IpAddr,
    /// Prefix length.
    pub len: u8,
}

impl Cidr {
    /// Parse `addr/len`; `None` for anything NCCL would ignore (no `/`, bad address, length too long).
    pub fn parse(text: &str) -> Option<Self> {
        let (addr, len) = text.trim().split_once('/')?;
        let addr: IpAddr = addr.parse().ok()?;
        let len: u8 = len.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (len <= max).then_some(Cidr { addr, len })
    }

    /// Does the range contain `ip`? Families must agree.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.len),
            (IpAddr::V6(net), IpAddr::V6(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.len),
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

fn prefix_eq(a: &[u8], b: &[u8], len: u8) -> bool {
    let full = usize::from(len / 8);
    let rest = len % 8;
    if a[..full] != b[..full] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    a[full] & mask == b[full] & mask
}

/// What a usable GID must be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Want {
    /// Address family; `None` accepts both, preferring IPv4.
    pub family: Option<Family>,
    /// Address range (`NCCL_IB_ADDR_RANGE`).
    pub range: Option<Cidr>,
}

/// Why a GID entry does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unfit {
    /// The index is past the end of the table.
    NoSuchIndex {
        /// Table length.
        len: usize,
    },
    /// The entry is empty (all zero).
    Empty,
    /// A link-local `fe80::/64` GID.
    LinkLocal,
    /// The other address family.
    WrongFamily {
        /// What the entry is.
        have: Family,
        /// What the profile or environment asks for.
        want: Family,
    },
    /// A RoCE v1 entry (or a type sysfs did not report).
    NotV2,
    /// Outside the address range.
    OutOfRange(Cidr),
    /// No netdev is bound to the entry.
    NoNetdev,
    /// The entry's netdev is not in this network namespace.
    NetdevAbsent(String),
}

impl Unfit {
    /// A short reason, for grouping and messages: `link-local`, `RoCE v1`…
    pub(crate) fn reason(&self) -> String {
        match self {
            Unfit::NoSuchIndex { len } => format!("past the end of the GID table ({len} entries)"),
            Unfit::Empty => "an empty GID entry".to_string(),
            Unfit::LinkLocal => "a link-local (fe80::/64) GID, which is not routable".to_string(),
            Unfit::WrongFamily { have, want } => {
                format!("an {} GID where {} is wanted", have.as_str(), want.as_str())
            }
            Unfit::NotV2 => "a RoCE v1 GID (RoCE v2 is needed)".to_string(),
            Unfit::OutOfRange(r) => format!("outside the address range {r}"),
            Unfit::NoNetdev => "bound to no netdev".to_string(),
            Unfit::NetdevAbsent(n) => {
                format!("bound to netdev {n}, which is not in this network namespace")
            }
        }
    }
}

/// Check one entry. `netdevs` is the namespace's netdev list, when known.
pub(crate) fn check(
    entry: &GidEntry,
    want: &Want,
    netdevs: Option<&BTreeSet<String>>,
) -> Result<Family, Unfit> {
    let family = match entry.class() {
        GidClass::Empty => return Err(Unfit::Empty),
        GidClass::LinkLocal => return Err(Unfit::LinkLocal),
        GidClass::Ipv4Mapped(_) => Family::Ipv4,
        GidClass::Ipv6(_) => Family::Ipv6,
    };
    if let Some(w) = want.family
        && w != family
    {
        return Err(Unfit::WrongFamily {
            have: family,
            want: w,
        });
    }
    if entry.roce != Some(RoceVersion::V2) {
        return Err(Unfit::NotV2);
    }
    if let Some(range) = want.range {
        let ip = match entry.class() {
            GidClass::Ipv4Mapped(v4) => IpAddr::V4(v4),
            GidClass::Ipv6(v6) => IpAddr::V6(v6),
            _ => return Err(Unfit::Empty),
        };
        if !range.contains(ip) {
            return Err(Unfit::OutOfRange(range));
        }
    }
    match (&entry.ndev, netdevs) {
        (None, _) => Err(Unfit::NoNetdev),
        (Some(n), Some(present)) if !present.contains(n) => Err(Unfit::NetdevAbsent(n.clone())),
        _ => Ok(family),
    }
}

/// Check the entry at `index` of a port.
pub(crate) fn check_index(
    port: &Port,
    index: u32,
    want: &Want,
    netdevs: Option<&BTreeSet<String>>,
) -> Result<Family, Unfit> {
    match port.gid(index) {
        Some(entry) => check(entry, want, netdevs),
        None => Err(Unfit::NoSuchIndex {
            len: port.gids.len(),
        }),
    }
}

/// The GID index to use on a RoCE port: the lowest usable entry (IPv4 first when no family is given).
pub(crate) fn suggest(port: &Port, want: &Want, netdevs: Option<&BTreeSet<String>>) -> Option<u32> {
    let usable: Vec<(u32, Family)> = port
        .gids
        .iter()
        .filter_map(|e| check(e, want, netdevs).ok().map(|f| (e.index, f)))
        .collect();
    let lowest = |f: Family| {
        usable
            .iter()
            .filter(|(_, x)| *x == f)
            .map(|(i, _)| *i)
            .min()
    };
    match want.family {
        Some(f) => lowest(f),
        None => lowest(Family::Ipv4).or_else(|| lowest(Family::Ipv6)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gids_are_classified_by_their_address() {
        let g: Ipv6Addr = "0000:0000:0000:0000:0000:ffff:0a00:0001".parse().unwrap();
        assert_eq!(classify(&g), GidClass::Ipv4Mapped([10, 0, 0, 1].into()));
        assert_eq!(classify(&"fe80::1".parse().unwrap()), GidClass::LinkLocal);
    }

    fn entry(index: u32, gid: &str, v: RoceVersion, ndev: &str) -> GidEntry {
        GidEntry {
            index,
            gid: Some(gid.parse().unwrap()),
            roce: Some(v),
            ndev: Some(ndev.to_string()),
        }
    }

    #[test]
    fn cidr() {
        let r = Cidr::parse("fd02::/16").unwrap();
        assert!(r.contains("fd02:1:2::5".parse().unwrap()));
        assert!(!r.contains("fd03::5".parse().unwrap()));
        assert!(!r.contains("10.0.0.1".parse().unwrap()));
        let r = Cidr::parse("10.128.0.0/9").unwrap();
        assert!(r.contains("10.200.0.1".parse().unwrap()));
        assert!(!r.contains("10.1.0.1".parse().unwrap()));
        assert!(Cidr::parse("fd02::").is_none());
        assert!(Cidr::parse("10.0.0.0/33").is_none());
        assert!(
            Cidr::parse("::/0")
                .unwrap()
                .contains("fe80::1".parse().unwrap())
        );
    }

    #[test]
    fn selection_prefers_family_then_lowest_index() {
        let nets: BTreeSet<String> = ["net1".to_string()].into();
        let port = Port {
            num: 1,
            state: Some("ACTIVE".into()),
            link_layer: super::super::facts::LinkLayer::Ethernet,
            gids: vec![
                entry(0, "fe80::1", RoceVersion::V1, "net1"),
                entry(1, "fe80::1", RoceVersion::V2, "net1"),
                entry(2, "::ffff:10.0.0.1", RoceVersion::V1, "net1"),
                entry(3, "::ffff:10.0.0.1", RoceVersion::V2, "other"),
                entry(4, "fd02::1", RoceVersion::V1, "net1"),
                entry(5, "fd02::1", RoceVersion::V2, "net1"),
                entry(7, "::ffff:10.0.0.2", RoceVersion::V2, "net1"),
            ],
        };
        assert_eq!(suggest(&port, &Want::default(), Some(&nets)), Some(7));
        assert_eq!(suggest(&port, &Want::default(), None), Some(3));
        let v6 = Want {
            family: Some(Family::Ipv6),
            range: Cidr::parse("fd02::/16"),
        };
        assert_eq!(suggest(&port, &v6, Some(&nets)), Some(5));
        let elsewhere = Want {
            family: Some(Family::Ipv6),
            range: Cidr::parse("fd03::/16"),
        };
        assert_eq!(suggest(&port, &elsewhere, Some(&nets)), None);
        assert_eq!(
            check_index(&port, 1, &v6, Some(&nets)),
            Err(Unfit::LinkLocal)
        );
        assert_eq!(check_index(&port, 4, &v6, Some(&nets)), Err(Unfit::NotV2));
        assert_eq!(
            check_index(&port, 7, &v6, Some(&nets)),
            Err(Unfit::WrongFamily {
                have: Family::Ipv4,
                want: Family::Ipv6
            })
        );
        assert_eq!(
            check_index(&port, 3, &Want::default(), Some(&nets)),
            Err(Unfit::NetdevAbsent("other".into()))
        );
        assert_eq!(
            check_index(&port, 6, &v6, Some(&nets)),
            Err(Unfit::NoSuchIndex { len: 7 })
        );
    }
}
