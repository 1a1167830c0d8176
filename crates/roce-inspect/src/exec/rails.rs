//! Which of the pod's RDMA ports can carry the profile's rails, and the one GID index they share.
//!
//! A port is usable when it is ACTIVE (the only state NCCL and UCX use), has the link layer of the
//! profile's fabric and, on RoCE, has a RoCE v2 GID of the wanted family and range bound to a netdev in this
//! namespace ([`gid_index::check`], the test `doctor` uses). NCCL and UCX take one GID index for every port
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
use crate::doctor::gid::{Family, Want};
use crate::doctor::gid_index::{self, Unfit};

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
    let port_num = profile.rails.port_num.value;
    let mut l = Look {
        facts,
        rails: profile
            .rail_list()
            .into_iter()
            .filter(|r| hca.matches(&r.pod_device, Some(port_num)))
            .collect(),
        port_num,
        ll: link_layer_of(fabric),
        allocated: claimed.map(Allocation::rdma_devices),
        found: Vec::new(),
        ports: Vec::new(),
        not_allocated: Vec::new(),
    };
    let dra = profile.nics.value.dra().is_some();
    if dra {
        l.dra_ports();
    } else {
        l.rail_ports();
    }
    let gid_sets = l.judge(fabric, want);
    // NICs the claims were allocated that sysfs does not show: missing ports (rails are missing already).
    if dra && let Some(a) = claimed {
        l.absent(a);
    }
    let gid_index = choose_index(&gid_sets, want);
    if let Some(chosen) = gid_index {
        share_index(&mut l.ports, &gid_sets, chosen);
    }
    // Rails first, in rail order; other (DRA) ports after them, in device order.
    let mut order: Vec<(u32, usize)> = l
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| (p.rail.unwrap_or(u32::MAX), i))
        .collect();
    order.sort();
    let ports = order.into_iter().map(|(_, i)| l.ports[i].clone()).collect();
    Survey {
        ports,
        wanted: l.rails.len(),
        gid_index,
        not_allocated: l.not_allocated,
    }
}

/// The survey as it goes: the rails wanted, the ports found to judge, the ports judged (or missing), and
/// the devices left out because no claim was allocated them.
struct Look<'f> {
    facts: &'f HostFacts,
    rails: Vec<Rail>,
    port_num: u32,
    ll: LinkLayer,
    /// The RDMA devices the DRA device metadata names, when there is some.
    allocated: Option<Vec<&'f str>>,
    found: Vec<(&'f RdmaDevice, &'f Port, Option<u32>)>,
    ports: Vec<RailPort>,
    not_allocated: Vec<String>,
}

impl<'f> Look<'f> {
    /// The rail a device is, when the profile's rails name it.
    fn rail_of(&self, device: &str) -> Option<u32> {
        self.rails
            .iter()
            .find(|r| r.pod_device == device)
            .map(|r| r.index)
    }

    /// Whether the pod's claims were allocated a device (every device, without DRA metadata).
    fn is_allocated(&self, d: &RdmaDevice) -> bool {
        self.allocated
            .as_ref()
            .is_none_or(|names| names.contains(&d.name.as_str()))
    }

    /// With DRA NICs: every port of the fabric's link layer on the allocated devices (with metadata,
    /// every port of a claimed device, so a wrong link layer is reported).
    fn dra_ports(&mut self) {
        let facts = self.facts;
        for d in &facts.devices {
            if !self.is_allocated(d) {
                if d.ports.iter().any(|p| p.link_layer == self.ll) {
                    self.not_allocated.push(d.name.clone());
                }
                continue;
            }
            // A claimed device's ports of another link layer are reported, not skipped.
            for p in d
                .ports
                .iter()
                .filter(|p| self.allocated.is_some() || p.link_layer == self.ll)
            {
                self.found.push((d, p, self.rail_of(&d.name)));
            }
        }
    }

    /// Without DRA NICs: each rail's port, or why the rail is missing (no device, not allocated, no such
    /// port).
    fn rail_ports(&mut self) {
        let (facts, port_num) = (self.facts, self.port_num);
        for r in &self.rails {
            let missing = |why: String| RailPort {
                device: r.pod_device.clone(),
                port: port_num,
                rail: Some(r.index),
                gid_index: None,
                unusable: Some(Unusable::Missing(why)),
            };
            match facts.device(&r.pod_device) {
                None => self.ports.push(missing("no such RDMA device".to_string())),
                Some(d) if !self.is_allocated(d) => {
                    self.not_allocated.push(d.name.clone());
                    self.ports.push(missing(
                        "not allocated to this pod: the DRA device metadata names other NICs"
                            .to_string(),
                    ));
                }
                Some(d) => match d.ports.iter().find(|p| p.num == port_num) {
                    None => self
                        .ports
                        .push(missing(format!("the device has no port {port_num}"))),
                    Some(p) => self.found.push((d, p, Some(r.index))),
                },
            }
        }
    }

    /// Each found port judged: not ACTIVE, another link layer, or (RoCE) no usable GID; returns, for
    /// the RoCE ports that pass, their place in `ports` and their usable GID indices with the family.
    fn judge(&mut self, fabric: FabricKind, want: &Want) -> Vec<(usize, Vec<(u32, Family)>)> {
        let netdevs = self.facts.netdevs.as_ref();
        // (port, usable GID indices with their family) for ports that pass the state and link-layer checks
        let mut gid_sets: Vec<(usize, Vec<(u32, Family)>)> = Vec::new();
        for (d, p, rail) in std::mem::take(&mut self.found) {
            let unusable = if !p.is_active() {
                Some(Unusable::NotActive(
                    p.state
                        .clone()
                        .unwrap_or_else(|| "state unreadable".to_string()),
                ))
            } else if p.link_layer != self.ll {
                Some(Unusable::LinkLayer(
                    p.link_layer.as_str().unwrap_or("unreadable").to_string(),
                ))
            } else if fabric == FabricKind::Roce {
                let usable: Vec<(u32, Family)> = p
                    .gids
                    .iter()
                    .filter_map(|e| {
                        gid_index::check(e, want, netdevs)
                            .ok()
                            .map(|f| (e.index, f))
                    })
                    .collect();
                if usable.is_empty() {
                    Some(Unusable::NoGid(what_gids(p, want, netdevs)))
                } else {
                    gid_sets.push((self.ports.len(), usable));
                    None
                }
            } else {
                None
            };
            self.ports.push(RailPort {
                device: d.name.clone(),
                port: p.num,
                rail,
                gid_index: None,
                unusable,
            });
        }
        gid_sets
    }

    /// The NICs the claims were allocated that sysfs does not show, as missing ports.
    fn absent(&mut self, a: &Allocation) {
        for n in a.absent() {
            let device = n
                .device
                .rdma_device
                .as_ref()
                .map_or_else(|| n.device.name.clone(), |i| i.value.clone());
            self.ports.push(RailPort {
                rail: self.rail_of(&device),
                device,
                port: self.port_num,
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
}

/// The chosen GID index on every RoCE port that has it; a port whose usable GIDs are elsewhere is not
/// used (NCCL and UCX take one index for all ports).
fn share_index(ports: &mut [RailPort], gid_sets: &[(usize, Vec<(u32, Family)>)], chosen: u32) {
    for (i, set) in gid_sets {
        if set.iter().any(|(idx, _)| *idx == chosen) {
            ports[*i].gid_index = Some(chosen);
        } else {
            ports[*i].unusable = Some(Unusable::OtherGidIndex(
                set.iter().map(|(idx, _)| *idx).collect(),
            ));
        }
    }
}

/// The index usable on the most ports; then of the wanted family (IPv4 first when none is wanted, as
/// [`gid_index::suggest`] prefers); then the lowest.
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
        let Err(u) = gid_index::check(e, want, netdevs) else {
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
