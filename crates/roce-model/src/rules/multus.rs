//! Multus rules: per-port NADs cover every rail; RoCE pods need attachments; InfiniBand needs none.

use crate::fabric::dra::NicAttachment;
use crate::model::{FabricKind, Multus, Profile, Rail, expand};
use crate::names::{IfName, K8sName};
use crate::problem::{Code, Problem};
use crate::suggest;

/// Check the Multus block against the rails.
pub(crate) fn check(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    against_fabric(p, out);
    host_port_patterns(p, out);
    netdev_names(p, rails, out);
    per_port(p, rails, out);
}

/// RoCE pods that attach no networks, InfiniBand pods that attach some.
fn against_fabric(p: &Profile, out: &mut Vec<Problem>) {
    match (&p.multus, p.fabric.kind.value) {
        // DRA or device-plugin-only NICs need no NADs.
        (Multus::None { at }, FabricKind::Roce)
            if p.direct_pods()
                && p.nics.value == NicAttachment::MultusAndResource
                && !p.nccl_net.attaches_nics() =>
        {
            let mut problem = Problem::new(
                Code::MultusRequired,
                "RoCE pods attach no Multus networks: the pod will see only eth0 and no RDMA devices",
            );
            if let Some(at) = at {
                problem = problem.at(at.origin, "no Multus networks");
            }
            out.push(
                problem
                    .at(p.fabric.kind.origin, "RoCE fabric")
                    .help("add `multus per-port namespace=\"cw-multus\" name=\"{host-port}-macvlan\"` (one NAD per rail port), or `multus backend …` where the cluster has one backend NAD; a SUNK NodeSet that attaches them itself sets `sunk-nodeset #true`"),
            )
        }
        (Multus::PerPort { at, .. } | Multus::Backend { at, .. }, FabricKind::InfiniBand) => {
            out.push(
                Problem::new(
                    Code::MultusUnneeded,
                    "InfiniBand pods need no Multus attachment",
                )
                .at(at.origin, "Multus on InfiniBand")
                .help("remove the `multus` block: InfiniBand HCAs reach the pod through the RDMA device plugin, not through netdevs"),
            )
        }
        _ => {}
    }
}

/// A rail name pattern that uses `{host-port}` where the rails name none.
fn host_port_patterns(p: &Profile, out: &mut Vec<Problem>) {
    if p.rails.host_port.is_none() {
        let device = p
            .rails
            .pod_device
            .value
            .pattern()
            .map(|v| (v, p.rails.pod_device.origin));
        let netdev = p
            .rails
            .pod_netdev
            .as_ref()
            .map(|n| (n.value.as_str(), n.origin));
        for (_, origin) in [device, netdev]
            .into_iter()
            .flatten()
            .filter(|(pat, _)| pat.contains("{host-port}"))
        {
            out.push(
                Problem::new(
                    Code::InvalidValue,
                    "this name pattern uses `{host-port}` but the rails name no host port",
                )
                .at(origin, "uses {host-port}")
                .help("add `host-port=\"…\"` to `rails` (e.g. `ibs{nic}p{port}`), or spell the name with `{nic}` and `{port}`"),
            );
        }
    }
}

/// Per-port Multus: the NAD pattern expands to names, and a `nads` list names each rail's NAD, no others.
fn per_port(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    if let Multus::PerPort { name, nads, at, .. } = &p.multus {
        if name.value.contains("{host-port}") && p.rails.host_port.is_none() {
            out.push(
                Problem::new(
                    Code::InvalidValue,
                    "the NAD name pattern uses `{host-port}` but the rails name no host port",
                )
                .at(name.origin, "uses {host-port}")
                .help("add `host-port=\"ibs{nic}p{port}\"` to `rails`"),
            );
            return;
        }
        let expected: Vec<String> = rails
            .iter()
            .map(|r| expand(&name.value, r.nic, r.port, r.index, r.host_port.as_deref()))
            .collect();
        // The pattern's literal text was checked when it was read; what it expands to must be a name too.
        if nads.is_none()
            && let Some((bad, e)) = expected
                .iter()
                .find_map(|n| n.parse::<K8sName>().err().map(|e| (n, e)))
        {
            out.push(
                Problem::new(
                    Code::InvalidValue,
                    format!("the NAD name pattern expands to `{bad}`: {}", e.message),
                )
                .at(name.origin, "expands to an invalid name")
                .help(e.help),
            );
            return;
        }
        let Some(nads) = nads else { return };
        let listed: Vec<&str> = nads.value.iter().map(|n| n.value.as_str()).collect();
        let missing: Vec<&str> = expected
            .iter()
            .map(String::as_str)
            .filter(|e| !listed.contains(e))
            .collect();
        if !missing.is_empty() {
            out.push(
                Problem::new(
                    Code::MissingNad,
                    format!(
                        "per-port Multus attaches {} of {} rail NADs; missing: {}",
                        expected.len() - missing.len(),
                        expected.len(),
                        missing.join(", ")
                    ),
                )
                .at(
                    at.origin,
                    format!("{} NAD{} missing", missing.len(), if missing.len() == 1 { "" } else { "s" }),
                )
                .at(nads.origin, "the NAD list")
                .help(format!(
                    "add {} to `nads` (or drop `nads` to attach every rail's NAD from the `{}` pattern); a rail without its NAD has no netdev in the pod and NCCL loses that rail",
                    missing
                        .iter()
                        .map(|m| format!("\"{m}\""))
                        .collect::<Vec<_>>()
                        .join(" "),
                    name.value
                )),
            );
        }
        for nad in &nads.value {
            if !expected.iter().any(|e| nad.value == e.as_str()) {
                out.push(
                    Problem::new(
                        Code::ExtraNad,
                        format!("NAD `{}` belongs to no rail", nad.value),
                    )
                    .at(nad.origin, "not a rail NAD")
                    .help(
                        suggest::closest(&nad.value, expected.iter().map(String::as_str))
                            .map_or_else(
                                || "remove it, or fix the rails so it matches one".to_string(),
                                |c| format!("did you mean `{c}`?"),
                            ),
                    ),
                );
            }
        }
    }
}

/// What the rails' netdev patterns (`host-port`, `pod-netdev`) expand to must be Linux interface names
/// ([`IfName`]); [`crate::model::Rails::list`] leaves a rail without a name that is not one. The first bad
/// name of each pattern is reported.
fn netdev_names(p: &Profile, listed: &[Rail], out: &mut Vec<Problem>) {
    let r = &p.rails;
    let ports = r.ports.value;
    let rails = (0..r.nics.value)
        .flat_map(|nic| (0..ports).map(move |port| (nic, port, nic * ports + port)));
    for (key, pattern, all_named) in [
        (
            "host-port",
            r.host_port.as_ref(),
            listed.iter().all(|l| l.host_port.is_some()),
        ),
        (
            "pod-netdev",
            r.pod_netdev.as_ref(),
            listed.iter().all(|l| l.pod_netdev.is_some()),
        ),
    ] {
        // Every rail got its name: nothing to report, and no need to expand the names again for the message.
        let Some(pattern) = pattern.filter(|_| !all_named) else {
            continue;
        };
        let bad = rails.clone().find_map(|(nic, port, index)| {
            // As `Rails::list` expands it: `{host-port}` only from a valid host port.
            let host = r
                .host_port
                .as_ref()
                .filter(|_| key == "pod-netdev")
                .map(|h| expand(&h.value, nic, port, index, None))
                .filter(|h| h.parse::<IfName>().is_ok());
            let name = expand(&pattern.value, nic, port, index, host.as_deref());
            name.parse::<IfName>().err()
        });
        if let Some(e) = bad {
            out.push(
                Problem::new(
                    Code::InvalidValue,
                    format!(
                        "the rails `{key}` pattern expands to an invalid interface name: {}",
                        e.message
                    ),
                )
                .at(pattern.origin, "expands to an invalid interface name")
                .help(e.help),
            );
        }
    }
}
