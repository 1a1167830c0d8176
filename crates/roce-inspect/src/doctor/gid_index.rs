//! Which GID index to use on a RoCE port: whether an entry fits what NCCL/UCX need ([`Want`]), and the
//! lowest usable one ([`gid`](super::gid) has the rules).

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::device::{GidEntry, Port};
use super::gid::{Cidr, Family, GidClass, RoceVersion, Want};

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
    use crate::doctor::device::LinkLayer;

    fn entry(index: u32, gid: &str, v: RoceVersion, ndev: &str) -> GidEntry {
        GidEntry {
            index,
            gid: Some(gid.parse().unwrap()),
            roce: Some(v),
            ndev: Some(ndev.to_string()),
        }
    }

    #[test]
    fn selection_prefers_family_then_lowest_index() {
        let nets: BTreeSet<String> = ["net1".to_string()].into();
        let port = Port {
            num: 1,
            state: Some("ACTIVE".into()),
            link_layer: LinkLayer::Ethernet,
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
