//! RoCE GIDs: what an entry is and what a usable one must be ([`Want`]); [`gid_index`](super::gid_index)
//! checks entries and picks the index.
//!
//! The selection follows NCCL's auto-selection (`ncclIbGetGidIndex`, nccl-ucx-facts §1.4) and the host
//! rules of §4: a usable entry is non-empty, not link-local (`fe80::/64`), RoCE v2, of the wanted address
//! family (IPv4-mapped `::ffff:a.b.c.d` for `AF_INET`, anything else for `AF_INET6`), inside the address
//! range when one is given, and — what NCCL does not check but a pod needs — bound to a netdev that is in
//! this network namespace. The lowest such index wins. With no family given, IPv4 is preferred to IPv6
//! (UCX's `auto` order).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gids_are_classified_by_their_address() {
        let g: Ipv6Addr = "0000:0000:0000:0000:0000:ffff:0a00:0001".parse().unwrap();
        assert_eq!(classify(&g), GidClass::Ipv4Mapped([10, 0, 0, 1].into()));
        assert_eq!(classify(&"fe80::1".parse().unwrap()), GidClass::LinkLocal);
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
}
