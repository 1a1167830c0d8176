//! The plan's requirements asked of a host: for each [`Need`] of [`edits::requirements`], what `doctor` sees
//! of it from inside the pod (or on the node), judged by the checks that can see it there.
//!
//! `lint` asks the same requirements of a manifest; a host shows some of them better (the RDMA devices the
//! device plugin really mounted, the capabilities the runtime really granted) and some not at all (node
//! labels, where the job's other pods run), which the report says instead of calling them met.

use std::ops::Range;

use roce_model::Code;
use roce_model::fabric::env::Consequence;
use roce_render::edits::{self, Edit, Need, Requirement, Volume};
use roce_render::plan::Plan;
use serde::Serialize;

use super::facts::HostFacts;

/// One of doctor's checks, in report order (root causes first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    NoRdmaDevices,
    LinkLayer,
    MissingRail,
    DeviceNodes,
    PortDown,
    NoUsableGid,
    NcclGidIndex,
    UcxGidIndex,
    Hca,
    SocketIfname,
    UcxNetDevices,
    UcxTransport,
    RdmaCore,
    Memlock,
    PeerMemory,
    Gpus,
    ImexChannels,
    SharedMemory,
    TopologyFile,
    ProviderDevices,
    NetPlugin,
    EnvDrift,
}

impl Check {
    /// Does it judge the RDMA devices' ports, GIDs or nodes (so without any device it cannot run)?
    pub(super) fn per_device(self) -> bool {
        use Check::*;
        matches!(
            self,
            LinkLayer
                | MissingRail
                | DeviceNodes
                | PortDown
                | NoUsableGid
                | NcclGidIndex
                | UcxGidIndex
                | Hca
        )
    }
}

/// The checks that judge a requirement on a host, or why a host cannot show it. The needs a host shows in
/// a way of its own are named; every other one is judged by its edits ([`by_edits`]), so a requirement made
/// of kinds of edit doctor knows needs no line here.
pub(super) fn on_host(r: &Requirement) -> Result<Vec<Check>, &'static str> {
    use Check::*;
    let checks: &[Check] = match r.need {
        Need::Provenance => {
            return Err("the profile annotation is in the pod's spec, not on the host");
        }
        // The device plugin's count, not a resource the pod asks for.
        Need::Gpus => &[Gpus],
        // NICs and devices show as the rails' netdevs and verbs devices, whatever attached them.
        Need::RailNics => &[NoRdmaDevices, MissingRail, ProviderDevices],
        Need::RdmaDevices => &[NoRdmaDevices, DeviceNodes, ProviderDevices],
        Need::NodePool => {
            return Err(
                "node labels are on the Node object in the API server, not on the host (`kubectl get node --show-labels`)",
            );
        }
        // The channel the claim gives, not the claim.
        Need::NvlinkDomain => &[ImexChannels],
        Need::Placement => {
            return Err("where the job's other pods run is not visible from one host");
        }
        // The node's namespace shows as the node's rail netdevs and devices here.
        Need::HostNetwork => &[NoRdmaDevices, MissingRail, DeviceNodes],
        // The variables as the process sees them, judged against the devices it has.
        Need::Environment => &[
            NcclGidIndex,
            UcxGidIndex,
            Hca,
            SocketIfname,
            UcxNetDevices,
            UcxTransport,
            EnvDrift,
        ],
        _ => return by_edits(&r.edits),
    };
    Ok(checks.to_vec())
}

/// The checks that see a requirement's edits on a host: each kind of edit by what it leaves in the pod (a
/// mount, a capability the process holds); a requirement with an edit no check sees is unknown, with why.
fn by_edits(edits: &[Edit]) -> Result<Vec<Check>, &'static str> {
    let mut checks = Vec::new();
    for e in edits {
        let seen: &[Check] = match e {
            Edit::Volume(Volume::SharedMemory) => &[Check::SharedMemory],
            Edit::Volume(Volume::Topology(_)) => &[Check::TopologyFile],
            // What the provider's host directories carry is its net plugin.
            Edit::Volume(Volume::Host(_)) => &[Check::NetPlugin],
            Edit::Volume(Volume::RdmaDevices) => &[Check::DeviceNodes],
            // The plugin creates its directory when the job starts; what holds it is the pod spec's.
            Edit::Volume(Volume::Inspector(_)) => {
                return Err(
                    "whether a volume holds the Inspector's directory is in the pod's spec (`roce lint` checks it); the plugin creates the directory itself when the job starts",
                );
            }
            Edit::Capability(c) if c.as_str() == roce_model::fabric::attach::IPC_LOCK => {
                &[Check::Memlock]
            }
            _ => return Err("what it needs is in the pod's spec, which a host does not show"),
        };
        for c in seen {
            if !checks.contains(c) {
                checks.push(*c);
            }
        }
    }
    Ok(checks)
}

/// Why a check could not judge on these facts (what it reads was unreadable), if it could not.
fn unreadable(check: Check, f: &HostFacts) -> Option<&'static str> {
    match check {
        _ if check.per_device() && f.devices.is_empty() => {
            Some("there are no RDMA devices to judge it by")
        }
        Check::DeviceNodes if f.device_nodes.is_none() && !f.devices.is_empty() => {
            Some("/dev is unreadable")
        }
        Check::Memlock if f.cap_eff.is_none() && f.memlock.is_none() => {
            Some("/proc/self/status and /proc/self/limits are unreadable")
        }
        Check::Gpus if f.gpus.is_none() => Some("no GPU device nodes or driver files are readable"),
        Check::ImexChannels if f.imex_channels.is_none() => Some("/dev is unreadable"),
        Check::SharedMemory if f.shm.is_none() => Some("/proc/self/mounts is unreadable"),
        _ => None,
    }
}

/// What the host shows of a requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "seen", content = "why")]
pub enum Seen {
    /// Every check that can see it found nothing wrong.
    Met,
    /// A check found it unmet: [`HostRequirement::findings`] say how.
    Unmet,
    /// Not visible here: from a host at all, or with what was readable.
    Unknown(String),
}

/// One requirement of the profile's plan, as this host shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRequirement {
    /// What the pod must get.
    pub need: Need,
    /// What the job does without it.
    pub consequence: Consequence,
    /// What the host shows.
    pub seen: Seen,
    /// The findings that show it unmet, in report order.
    pub findings: Vec<Code>,
}

/// The plan's requirements judged by the checks that ran (`ran`: each check and the range of `findings` it
/// produced).
pub(super) fn judge(
    plan: &Plan,
    facts: &HostFacts,
    ran: &[(Check, Range<usize>)],
    findings: &[Code],
) -> Vec<HostRequirement> {
    edits::requirements(plan, None)
        .into_iter()
        .map(|r| {
            let (seen, codes) = match on_host(&r) {
                Err(why) => (Seen::Unknown(why.to_string()), Vec::new()),
                Ok(checks) => {
                    let mut codes = Vec::new();
                    for (check, range) in ran {
                        if checks.contains(check) {
                            codes.extend(findings[range.clone()].iter().copied());
                        }
                    }
                    let blind = checks.iter().find_map(|c| unreadable(*c, facts));
                    let seen = match blind {
                        _ if !codes.is_empty() => Seen::Unmet,
                        Some(why) => Seen::Unknown(why.to_string()),
                        None => Seen::Met,
                    };
                    (seen, codes)
                }
            };
            HostRequirement {
                need: r.need,
                consequence: r.consequence,
                seen,
                findings: codes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_model::{BuiltinsOnly, builtin, load};

    /// Every built-in's requirements (together they hold every need a built-in has).
    fn every_builtins_requirements() -> Vec<Requirement> {
        builtin::names()
            .flat_map(|n| {
                let p = load(builtin::source(n).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap();
                edits::requirements(&roce_render::lower(&p), None)
            })
            .collect()
    }

    #[test]
    fn every_check_judges_a_need_or_the_host_itself() {
        // The checks no need lists are the host's own health, whatever the profile asks.
        let host_health = [
            Check::LinkLayer,
            Check::PortDown,
            Check::NoUsableGid,
            Check::RdmaCore,
            Check::PeerMemory,
        ];
        let reqs = every_builtins_requirements();
        for check in super::super::findings::ORDER {
            let judged = reqs
                .iter()
                .any(|r| on_host(r).is_ok_and(|c| c.contains(check)));
            assert_ne!(
                judged,
                host_health.contains(check),
                "{check:?}: judges a need xor is host health"
            );
        }
    }

    #[test]
    fn a_requirement_of_edits_no_host_shows_is_unknown() {
        // A label is only in the pod's spec: a requirement of one is unknown on a host, not met.
        let r = Requirement {
            need: Need::Placement,
            consequence: Consequence::Slower,
            edits: vec![Edit::Label {
                key: "k".into(),
                value: "v".into(),
            }],
            also_met_by: Vec::new(),
        };
        assert!(by_edits(&r.edits).is_err());
        assert_eq!(
            by_edits(&[Edit::Volume(Volume::SharedMemory)]),
            Ok(vec![Check::SharedMemory])
        );
    }
}
