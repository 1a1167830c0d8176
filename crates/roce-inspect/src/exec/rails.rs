//! Which of the pod's RDMA ports can carry the profile's rails, and the one GID index they share.
//!
//! A port is usable when it is ACTIVE (the only state NCCL and UCX use), has the link layer of the
//! profile's fabric and, on RoCE, has a RoCE v2 GID of the wanted family and range bound to a netdev in this
//! namespace ([`gid::check`], the test `doctor` uses). NCCL and UCX take one GID index for every port
//! (`NCCL_IB_GID_INDEX`, `UCX_IB_GID_INDEX`), so the index chosen is the one usable on the most ports, then
//! of the preferred family, then the lowest; a port whose usable GIDs are elsewhere is not used.
//!
//! When the DRA device metadata names the pod's NICs ([`Allocation`]), the ports considered are those of
//! the RDMA devices it names, not every one sysfs shows: the metadata is what the claims were allocated.

use std::collections::BTreeSet;

use roce_model::model::{FabricKind, Profile, Rail};
use roce_model::nccl_list::IfList;
use serde::Serialize;

use crate::doctor::dra_metadata::Allocation;
use crate::doctor::facts::{HostFacts, LinkLayer, Port, RdmaDevice};
use crate::doctor::gid::{self, Family, Unfit, Want};

/// Why a rail port is not used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Unusable {
    /// The rail's RDMA device is not in the pod, or lacks the rail's port.
    Missing(String),
    /// The port is not ACTIVE (its state, e.g. `DOWN`).
    NotActive(String),
    /// The port's link layer is not the fabric's.
    LinkLayer(String),
    /// A RoCE port without a usable GID: what its GIDs are instead.
    NoGid(String),
    /// A RoCE port whose usable GIDs are at other indices than the one chosen for every port.
    OtherGidIndex(Vec<u32>),
}

impl Unusable {
    /// For messages: `missing (no such RDMA device)`, `DOWN`, …
    pub fn describe(&self, chosen: Option<u32>) -> String {
        match self {
            Unusable::Missing(why) => format!("missing: {why}"),
            Unusable::NotActive(state) => format!("{state}, not ACTIVE"),
            Unusable::LinkLayer(ll) => format!("link layer {ll}"),
            Unusable::NoGid(what) => format!("no usable GID: {what}"),
            Unusable::OtherGidIndex(at) => format!(
                "its usable GIDs are at index {}, the other rails' at {}",
                at.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                chosen.map_or_else(|| "?".to_string(), |c| c.to_string())
            ),
        }
    }
}

/// One port roce considered: a rail's port, or (DRA NICs) any port of the fabric's link layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RailPort {
    /// RDMA device (`ibp0p0`).
    pub device: String,
    /// Port number.
    pub port: u32,
    /// The profile rail it is (0-based index), when its name is a rail's.
    pub rail: Option<u32>,
    /// The GID index the job uses on it (RoCE, usable ports).
    pub gid_index: Option<u32>,
    /// Why it is not used; `None` when it is.
    pub unusable: Option<Unusable>,
}

impl RailPort {
    /// Is the port used?
    pub fn usable(&self) -> bool {
        self.unusable.is_none()
    }

    /// `ibp0p0:1`, as NCCL and UCX spell a port.
    pub fn label(&self) -> String {
        format!("{}:{}", self.device, self.port)
    }
}

/// The ports, the rails wanted and the shared GID index.
#[derive(Debug, Clone)]
pub(crate) struct Survey {
    /// Every port considered, rails in rail order (missing ones included), then other DRA ports.
    pub ports: Vec<RailPort>,
    /// Rails the profile wants NCCL to use (its rails that its own `NCCL_IB_HCA` selects).
    pub wanted: usize,
    /// The GID index every usable RoCE port shares.
    pub gid_index: Option<u32>,
    /// RDMA devices sysfs shows that the ports would have been taken from without the DRA device metadata,
    /// and that no claim was allocated (not used).
    pub not_allocated: Vec<String>,
}

/// The link layer of a fabric's ports.
pub(crate) fn link_layer_of(fabric: FabricKind) -> LinkLayer {
    match fabric {
        FabricKind::Roce => LinkLayer::Ethernet,
        FabricKind::InfiniBand => LinkLayer::InfiniBand,
    }
}

/// Look at the ports the profile's rails name (with DRA NICs: every port of the fabric's link layer, since
/// the claim, not the profile, names the devices). `hca` is the profile's own `NCCL_IB_HCA` filter: rails it
/// excludes are not wanted. `claimed`, the NICs the DRA device metadata names, narrows both: with DRA NICs
/// the ports are those of the claimed devices (and a claimed NIC sysfs does not show is a missing port); a
/// rail the claims were not allocated is missing.
pub(crate) fn survey(
    facts: &HostFacts,
    profile: &Profile,
    hca: &IfList,
    want: &Want,
    claimed: Option<&Allocation>,
) -> Survey {
    let fabric = profile.fabric.kind.value;
    let ll = link_layer_of(fabric);
    let port_num = profile.rails.port_num.value;
    let rails: Vec<Rail> = profile
        .rail_list()
        .into_iter()
        .filter(|r| hca.matches(&r.pod_device, Some(port_num)))
        .collect();
    let rail_of = |device: &str| {
        rails
            .iter()
            .find(|r| r.pod_device == device)
            .map(|r| r.index)
    };
    let mut found: Vec<(&RdmaDevice, &Port, Option<u32>)> = Vec::new();
    let mut ports: Vec<RailPort> = Vec::new();
    let allocated: Option<Vec<&str>> = claimed.map(Allocation::rdma_devices);
    let is_allocated = |d: &RdmaDevice| {
        allocated
            .as_ref()
            .is_none_or(|names| names.contains(&d.name.as_str()))
    };
    let mut not_allocated: Vec<String> = Vec::new();
    let dra = profile.nics.value.dra().is_some();
    if dra {
        for d in &facts.devices {
            if !is_allocated(d) {
                if d.ports.iter().any(|p| p.link_layer == ll) {
                    not_allocated.push(d.name.clone());
                }
                continue;
            }
            // A claimed device's ports of another link layer are reported, not skipped.
            for p in d
                .ports
                .iter()
                .filter(|p| allocated.is_some() || p.link_layer == ll)
            {
                found.push((d, p, rail_of(&d.name)));
            }
        }
    } else {
        for r in &rails {
            let missing = |why: String| RailPort {
                device: r.pod_device.clone(),
                port: port_num,
                rail: Some(r.index),
                gid_index: None,
                unusable: Some(Unusable::Missing(why)),
            };
            match facts.device(&r.pod_device) {
                None => ports.push(missing("no such RDMA device".to_string())),
                Some(d) if !is_allocated(d) => {
                    not_allocated.push(d.name.clone());
                    ports.push(missing(
                        "not allocated to this pod: the DRA device metadata names other NICs"
                            .to_string(),
                    ));
                }
                Some(d) => match d.ports.iter().find(|p| p.num == port_num) {
                    None => ports.push(missing(format!("the device has no port {port_num}"))),
                    Some(p) => found.push((d, p, Some(r.index))),
                },
            }
        }
    }
    let netdevs = facts.netdevs.as_ref();
    // (port, usable GID indices with their family) for ports that pass the state and link-layer checks
    let mut gid_sets: Vec<(usize, Vec<(u32, Family)>)> = Vec::new();
    for (d, p, rail) in found {
        let unusable = if !p.is_active() {
            Some(Unusable::NotActive(
                p.state
                    .clone()
                    .unwrap_or_else(|| "state unreadable".to_string()),
            ))
        } else if p.link_layer != ll {
            Some(Unusable::LinkLayer(
                p.link_layer.as_str().unwrap_or("unreadable").to_string(),
            ))
        } else if fabric == FabricKind::Roce {
            let usable: Vec<(u32, Family)> = p
                .gids
                .iter()
                .filter_map(|e| gid::check(e, want, netdevs).ok().map(|f| (e.index, f)))
                .collect();
            if usable.is_empty() {
                Some(Unusable::NoGid(what_gids(p, want, netdevs)))
            } else {
                gid_sets.push((ports.len(), usable));
                None
            }
        } else {
            None
        };
        ports.push(RailPort {
            device: d.name.clone(),
            port: p.num,
            rail,
            gid_index: None,
            unusable,
        });
    }
    // NICs the claims were allocated that sysfs does not show: missing ports (rails are missing already).
    if dra && let Some(a) = claimed {
        for n in a.absent() {
            let device = n
                .device
                .rdma_device
                .as_ref()
                .map_or_else(|| n.device.name.clone(), |i| i.value.clone());
            ports.push(RailPort {
                rail: rail_of(&device),
                device,
                port: port_num,
                gid_index: None,
                unusable: Some(Unusable::Missing(format!(
                    "allocated by claim {} request {} ({}: {}), not in /sys/class/infiniband",
                    n.claim,
                    n.request,
                    n.device.label(),
                    n.identifiers()
                ))),
            });
        }
    }
    // Rails first, in rail order; other (DRA) ports after them, in device order.
    let gid_index = choose_index(&gid_sets, want);
    if let Some(chosen) = gid_index {
        for (i, set) in &gid_sets {
            if set.iter().any(|(idx, _)| *idx == chosen) {
                ports[*i].gid_index = Some(chosen);
            } else {
                ports[*i].unusable = Some(Unusable::OtherGidIndex(
                    set.iter().map(|(idx, _)| *idx).collect(),
                ));
            }
        }
    }
    let mut order: Vec<(u32, usize)> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| (p.rail.unwrap_or(u32::MAX), i))
        .collect();
    order.sort();
    let ports = order.into_iter().map(|(_, i)| ports[i].clone()).collect();
    Survey {
        ports,
        wanted: rails.len(),
        gid_index,
        not_allocated,
    }
}

/// The index usable on the most ports; then of the wanted family (IPv4 first when none is wanted, as
/// [`gid::suggest`] prefers); then the lowest.
fn choose_index(sets: &[(usize, Vec<(u32, Family)>)], want: &Want) -> Option<u32> {
    let mut all: Vec<(u32, Family)> = sets.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    all.sort_by_key(|(i, _)| *i);
    all.dedup_by_key(|(i, _)| *i);
    all.into_iter()
        .min_by_key(|(index, family)| {
            let count = sets
                .iter()
                .filter(|(_, s)| s.iter().any(|(i, _)| i == index))
                .count();
            let rank = match (want.family, family) {
                (None, Family::Ipv6) => 1,
                _ => 0,
            };
            (std::cmp::Reverse(count), rank, *index)
        })
        .map(|(i, _)| i)
}

/// What a port's GIDs are, for a port with none usable: `link-local, RoCE v1`.
fn what_gids(port: &Port, want: &Want, netdevs: Option<&BTreeSet<String>>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in &port.gids {
        let Err(u) = gid::check(e, want, netdevs) else {
            continue;
        };
        let text = match u {
            Unfit::NoSuchIndex { .. } | Unfit::Empty => continue,
            Unfit::LinkLocal => "link-local".to_string(),
            Unfit::WrongFamily { have, .. } => have.as_str().to_string(),
            Unfit::NotV2 => "RoCE v1".to_string(),
            Unfit::OutOfRange(r) => format!("outside {r}"),
            Unfit::NoNetdev => "bound to no netdev".to_string(),
            Unfit::NetdevAbsent(n) => format!("on netdev {n}, not in this namespace"),
        };
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    if seen.is_empty() {
        "the GID table is empty".to_string()
    } else {
        format!("its GIDs are {}", seen.join(", "))
    }
}
