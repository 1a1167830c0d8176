//! Does a template already meet an edit? One predicate per kind of [`Edit`], by the key the edit merges on
//! (the key [`super::write`] merges by: a mount by its path, a volume by its name and source, a resource by
//! its name, a capability, an annotation or label by its key, a claim by its name), asked of what the
//! template gets ([`Wiring`]). What it lacks is a [`Gap`], with the place to point at.
//!
//! A requirement is unmet where its gaps, less the forms that meet it otherwise ([`Requirement::unmet`]),
//! are not empty: `roce lint` reports those (one finding per cause, its severity from the consequence,
//! its help from the edits), `roce apply` writes the edits whose key holds nothing, and the Pod
//! target writes every edit. A new requirement built from these kinds of edit needs no code in any of them.

use roce_model::Code;
use roce_model::fabric::attach::RDMA_DEVICE_DIR;
use roce_model::fabric::env::Consequence;
use roce_model::fabric::{devices, observe};
use roce_model::plumbing::tree::{Node, Scalar, Value};
use roce_model::source::Origin;

use super::keys::{env_meets, holds_capability, same_path};
use super::{Edit, Met, Need, Requirement, Volume};
use crate::apply::view::{NodeLabel, PodView, entry, required_node_label, text};
use crate::plan::Plan;
use crate::wiring::{RdmaAccess, Wiring};

/// One edit a template does not meet, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap<'r> {
    /// The edit that meets it.
    pub edit: &'r Edit,
    /// What the template has under the edit's key instead, in words (`None`: nothing, so `roce apply`
    /// writes the edit; otherwise apply keeps what is there and the fix is the user's).
    pub instead: Option<String>,
    /// What is there instead, or where the edit would go.
    pub at: Origin,
}

impl Gap<'_> {
    /// What the template does, as the rest of a sentence about its container (`mounts nothing at /dev/shm`).
    pub fn describe(&self) -> String {
        let e = self.edit;
        match (&self.instead, e) {
            (None, Edit::Volume(v)) => match v.source() {
                Some(source) => format!("mounts nothing at {} ({source})", v.mount_path()),
                None => format!("mounts nothing at {}", v.mount_path()),
            },
            (Some(found), Edit::Volume(v)) => format!(
                "mounts {found} at {}, not {}",
                v.mount_path(),
                v.source().unwrap_or_default()
            ),
            (None, Edit::Capability(c)) => format!("lacks the {} capability", c.as_str()),
            (None, Edit::HostNetwork) => {
                "is not in the node's network namespace (`hostNetwork: true`)".to_string()
            }
            (None, Edit::Privileged) => "is not privileged".to_string(),
            (None, Edit::PodField { field, value }) => {
                format!("is in a pod spec without `{field}: {value}`")
            }
            (Some(found), Edit::PodField { field, value }) => {
                format!("is in a pod spec with `{field}: {found}`, not `{value}`")
            }
            (None, Edit::Annotation { key, .. }) => format!("has no annotation `{key}`"),
            (None, Edit::Label { key, .. }) => format!("has no label `{key}`"),
            (None, Edit::NodeLabel { key, value }) => {
                format!("does not select nodes with {key}={value}")
            }
            (Some(found), Edit::NodeLabel { key, value }) => {
                format!("requires nodes with {key} in {found}, not {value}")
            }
            (None, Edit::Resource { name, .. }) => format!("does not ask for {name}"),
            (None, Edit::Env(v)) => format!("does not set {}", v.name),
            (None, Edit::Networks(nads)) => format!(
                "does not attach {}",
                nads.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (None, Edit::PodClaim(c)) => format!("does not claim `{}`", c.name().as_str()),
            (None, Edit::ContainerClaim(c)) => {
                format!("does not list the claim `{}`", c.name().as_str())
            }
            (None, Edit::Affinity(_)) => {
                "has no required pod affinity of the profile's".to_string()
            }
            (None, Edit::Document(d)) => format!("has no {} `{}`", d.kind(), d.name().as_str()),
            // Only a volume's key holds something else that apply keeps.
            (Some(found), _) => format!("has {found} instead"),
        }
    }

    /// How to fix it by hand.
    pub fn fix(&self) -> String {
        match (&self.instead, self.edit) {
            (Some(found), Edit::Volume(v)) => format!(
                "mount {} at {} instead of {found}",
                v.source().unwrap_or_default(),
                v.mount_path()
            ),
            _ => self.edit.fix(),
        }
    }

    /// What `roce apply` keeps instead of writing the edit, for a fix's help (`None`: apply writes it).
    pub fn kept(&self) -> Option<&'static str> {
        self.instead.as_ref()?;
        Some(match self.edit {
            Edit::Volume(_) => "`roce apply` keeps what the container already mounts there",
            Edit::NodeLabel { .. } => "`roce apply` keeps the pod's node affinity",
            _ => "`roce apply` keeps the pod's own value",
        })
    }

    /// A short label for its place.
    pub fn label(&self) -> String {
        match self.edit {
            Edit::Volume(v) => format!("{} expected", v.mount_path()),
            Edit::Capability(c) => format!("{} missing", c.as_str()),
            Edit::Resource { name, .. } => format!("{name} missing"),
            Edit::Env(v) => format!("{} missing", v.name),
            Edit::HostNetwork => "`hostNetwork: true` expected".to_string(),
            Edit::Privileged => "`privileged: true` expected".to_string(),
            Edit::PodField { field, value } => format!("`{field}: {value}` expected"),
            Edit::Annotation { key, .. } => format!("{key} expected"),
            Edit::Label { key, value } | Edit::NodeLabel { key, value } => {
                format!("{key}={value} expected")
            }
            Edit::PodClaim(c) => format!("claim `{}` expected", c.name().as_str()),
            Edit::ContainerClaim(c) => format!("claim `{}` expected", c.name().as_str()),
            Edit::Networks(_) => "networks missing".to_string(),
            Edit::Affinity(_) => "pod affinity expected".to_string(),
            Edit::Document(d) => format!("{} `{}` expected", d.kind(), d.name().as_str()),
        }
    }
}

/// A requirement a template does not meet: its gaps, and what leaving them does to this pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmet<'r> {
    /// The lint code of the requirement's need.
    pub code: Code,
    /// What this pod does without it: the requirement's, but where the pod shows better (IPC_LOCK is
    /// judged by the RDMA access the pod really has, so a platform with an unlimited memlock limit makes
    /// it only differ, and its absence elsewhere loses RDMA).
    pub consequence: Consequence,
    /// Why it matters, in words that follow the gaps (`: …`).
    pub why: String,
    /// The edits it lacks, in the requirement's order (never empty).
    pub gaps: Vec<Gap<'r>>,
}

impl Requirement {
    /// The requirement's edits the template of `v`, with what it gets (`w`), does not meet by their merge
    /// keys (documents beside the workload are not the template's, and are left out).
    #[doc(hidden)]
    pub fn gaps<'r>(&'r self, plan: &Plan, v: &PodView<'_>, w: &Wiring<'_>) -> Vec<Gap<'r>> {
        self.edits
            .iter()
            .filter_map(|e| gap(e, plan, v, w))
            .collect()
    }

    /// What lint reports of the requirement on a template that gets `met` ([`Met::read`]): its gaps less
    /// those the pod meets in another form (the one list apply reads too), or `None` when nothing is left
    /// (or the need is not lint's to report).
    #[doc(hidden)]
    pub fn unmet<'r>(
        &'r self,
        plan: &Plan,
        v: &PodView<'_>,
        w: &Wiring<'_>,
        met: &Met,
    ) -> Option<Unmet<'r>> {
        let code = self.need.lint_code()?;
        let forms = super::otherwise::otherwise(self, met);
        let gaps: Vec<Gap<'r>> = self
            .gaps(plan, v, w)
            .into_iter()
            .filter(|g| !forms.iter().any(|o| (o.edits)(g.edit)))
            .collect();
        if gaps.is_empty() {
            return None;
        }
        let consequence = on_this_pod(self, w);
        Some(Unmet {
            code,
            consequence,
            why: self.need.why(plan, consequence),
            gaps,
        })
    }
}

/// What leaving the requirement unmet does to this pod.
fn on_this_pod(r: &Requirement, w: &Wiring<'_>) -> Consequence {
    match r.need {
        // Where the platform runs containers with an unlimited memlock limit (EKS with EFA, GKE's RDMA
        // networks), IPC_LOCK only differs; elsewhere registration fails past the limit.
        Need::Memlock => match w.rdma_access() {
            Some(RdmaAccess::Resource(res)) if devices::memlock_unlimited_with(&res) => {
                Consequence::Differs
            }
            Some(RdmaAccess::CloudNetworks) => Consequence::Differs,
            // No device yet (what is missing is the device, reported on its own): the profile's
            // platform decides, as it will once the pod asks for the profile's devices.
            None => r.consequence,
            _ => Consequence::SilentTcp,
        },
        // The NVIDIA runtime injects NVIDIA GPUs; a pod that asks for none runs the same without it.
        Need::RuntimeClass if !w.accelerators().contains(&devices::Accelerator::Nvidia) => {
            Consequence::Differs
        }
        // A rank alone with its GPU whose NCCL runs without the shared-memory transport
        // (`NCCL_SHM_DISABLE=1`) has no peer in the pod to reach through /dev/shm.
        Need::SharedMemory if w.nccl_shm_off() && !w.several_gpus() => Consequence::Differs,
        _ => r.consequence,
    }
}

/// The gap of one edit, if the template does not meet it: whether the edit's key holds it, and where the
/// edit would go (the deepest of its fields present; else the spec, else the template).
fn gap<'r>(e: &'r Edit, plan: &Plan, v: &PodView<'_>, w: &Wiring<'_>) -> Option<Gap<'r>> {
    if let Edit::Volume(vol) = e
        && let Some(g) = volume_gap(e, vol, w)
    {
        return Some(g);
    }
    if let Edit::PodField { field, value } = e {
        return pod_field_gap(e, field, value, v);
    }
    if let Edit::NodeLabel { key, value } = e {
        return node_label_gap(e, key, value, v);
    }
    let c = v.container.map(|(_, c)| c);
    let in_container = |fields: &[&str]| c.map(|c| place(c, fields));
    let (met, at) = match e {
        Edit::Volume(vol) => (
            w.mounts
                .iter()
                .any(|(_, p, _)| same_path(p, vol.mount_path())),
            in_container(&["volumeMounts"]),
        ),
        Edit::Capability(cap) => (
            holds_capability(added_capabilities(c), cap.as_str()),
            in_container(&["securityContext", "capabilities", "add"]),
        ),
        Edit::HostNetwork => (w.host_network.is_some(), None),
        Edit::PodField { .. } => unreachable!("judged above"),
        Edit::Privileged => (w.privileged.is_some(), in_container(&["securityContext"])),
        Edit::Annotation { key, value, merge } => {
            let have = v.annotations.and_then(|a| text(a, key));
            let met = match merge {
                super::Merge::Set => have == Some(value.as_str()),
                super::Merge::IfAbsent => have.is_some(),
            };
            (met, v.annotations.or(v.metadata).map(|n| n.origin))
        }
        Edit::Label { key, value } => {
            let labels = v.metadata.and_then(|m| entry(m, "labels")).map(|e| &e.node);
            (
                labels.and_then(|l| text(l, key)) == Some(value.as_str()),
                labels.or(v.metadata).map(|n| n.origin),
            )
        }
        Edit::NodeLabel { .. } => unreachable!("judged above"),
        Edit::Resource { name, quantity } => {
            // The provider's per-device resource in the same share as the container's GPUs is met too.
            let per_device = plan.provider.device_resource() == Some(name.as_str());
            let meets = |have: Option<&str>| {
                have == Some(quantity.as_str())
                    || (per_device
                        && have
                            .and_then(|h| h.parse::<u64>().ok())
                            .zip(quantity.parse::<u64>().ok())
                            .is_some_and(|(h, q)| {
                                plan.provider.device_share(
                                    h,
                                    q,
                                    plan.gpus_per_node,
                                    w.nvidia_gpu_count(),
                                )
                            }))
            };
            (
                w.resources.iter().any(|r| {
                    r.name == name && meets(r.request.as_deref()) && meets(r.limit.as_deref())
                }),
                in_container(&["resources"]),
            )
        }
        Edit::Env(var) => (
            w.var(&var.name)
                .and_then(|have| have.value.as_deref())
                .is_some_and(|have| env_meets(plan, &var.name, have, &var.value)),
            in_container(&["env"]),
        ),
        Edit::Networks(nads) => (
            nads.iter()
                .all(|n| w.networks.iter().any(|x| x.is(n, None))),
            v.multus
                .map(|m| m.node.origin)
                .or(v.annotations.map(|a| a.origin)),
        ),
        Edit::PodClaim(claim) => (
            w.pod_claims.iter().any(|p| p.name == claim.name().as_str()),
            v.spec
                .and_then(|s| entry(s, "resourceClaims"))
                .map(|e| e.key.origin),
        ),
        Edit::ContainerClaim(claim) => (
            w.used_claims
                .iter()
                .any(|(n, _)| *n == claim.name().as_str()),
            in_container(&["resources"]),
        ),
        Edit::Affinity(a) => affinity_gap(a, v),
        // An object beside the workload, not in the template.
        Edit::Document(_) => return None,
    };
    if met {
        return None;
    }
    let at = at
        .or(v.spec.map(|s| s.origin))
        .or(v.root.map(|r| r.origin))?;
    Some(Gap {
        edit: e,
        instead: None,
        at,
    })
}

/// The gap of a pod-spec field: none where the pod sets the value; where it sets another, that one is the
/// pod's own (apply keeps it). Unset, `null` and `""` are all Kubernetes' default.
fn pod_field_gap<'r>(e: &'r Edit, field: &str, value: &str, v: &PodView<'_>) -> Option<Gap<'r>> {
    let set = v
        .spec
        .and_then(|s| entry(s, field))
        .filter(|f| match &f.node.value {
            Value::Scalar(Scalar::Null) => false,
            Value::Scalar(Scalar::Str(s)) => !s.is_empty(),
            _ => true,
        });
    let Some(f) = set else {
        return Some(Gap {
            edit: e,
            instead: None,
            at: v.spec.or(v.root)?.origin,
        });
    };
    match &f.node.value {
        Value::Scalar(Scalar::Str(s)) if s == value => None,
        Value::Scalar(Scalar::Str(s)) => Some(Gap {
            edit: e,
            instead: Some(s.clone()),
            at: f.node.origin,
        }),
        _ => Some(Gap {
            edit: e,
            instead: Some("a value that is no name".to_string()),
            at: f.node.origin,
        }),
    }
}

/// A node label: met by `nodeSelector`, or by a required node affinity that admits only nodes with the
/// profile's value (the scheduler ANDs the two). A required affinity that admits only other values is the
/// pod's choice of nodes: apply keeps it, since a selector added beside it would leave the pod no node.
fn node_label_gap<'r>(e: &'r Edit, key: &str, value: &str, v: &PodView<'_>) -> Option<Gap<'r>> {
    let sel = v.spec.and_then(|s| entry(s, "nodeSelector"));
    let selected = sel.and_then(|s| text(&s.node, key));
    if selected.is_some_and(|h| roce_model::fabric::devices::same_node_label_value(key, h, value)) {
        return None;
    }
    match required_node_label(v.spec, key, value) {
        NodeLabel::Selects => None,
        NodeLabel::Other(values, at) if selected.is_none() => Some(Gap {
            edit: e,
            instead: Some(values),
            at,
        }),
        _ => Some(Gap {
            edit: e,
            instead: None,
            at: sel
                .map(|s| s.key.origin)
                .or(v.spec.or(v.root).map(|n| n.origin))?,
        }),
    }
}

/// Whether the template has the affinity's required pod-affinity terms (by their topology keys), and where
/// its affinity is.
fn affinity_gap(a: &crate::dra::Affinity, v: &PodView<'_>) -> (bool, Option<Origin>) {
    let affinity = v.spec.and_then(|s| entry(s, "affinity"));
    let have = crate::apply::view::required_affinity_keys(v.spec);
    (
        have.contains(&a.topology_key()),
        affinity.map(|a| a.key.origin),
    )
}

/// The gap of a volume edit whose mount path holds a volume of another source than the edit's (apply keeps
/// the container's mount: the key holds something).
fn volume_gap<'r>(e: &'r Edit, vol: &Volume, w: &Wiring<'_>) -> Option<Gap<'r>> {
    let (name, _, at) = w
        .mounts
        .iter()
        .find(|(_, p, _)| same_path(p, vol.mount_path()))?;
    let want = vol.source_key()?;
    let volume = w
        .volumes
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, node)| *node);
    let have = volume.and_then(source_key_of);
    if have.as_ref() == Some(&want) {
        return None;
    }
    let found = match have {
        Some(SourceKey::HostPath(p)) => format!("the node's {p}"),
        _ => format!("volume `{name}`"),
    };
    Some(Gap {
        edit: e,
        instead: Some(found),
        at: *at,
    })
}

/// What a volume holds, as far as the edits tell volumes apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SourceKey {
    /// A `hostPath` of this directory (a trailing `/` aside).
    HostPath(String),
    /// A `configMap` volume of this ConfigMap.
    ConfigMap(String),
}

fn source_key_of(volume: &Node) -> Option<SourceKey> {
    if let Some(p) = entry(volume, "hostPath").and_then(|h| text(&h.node, "path")) {
        return Some(SourceKey::HostPath(p.trim_end_matches('/').to_string()));
    }
    entry(volume, "configMap")
        .and_then(|c| text(&c.node, "name"))
        .map(|n| SourceKey::ConfigMap(n.to_string()))
}

/// The capabilities a container adds, as written.
fn added_capabilities(c: Option<&Node>) -> impl Iterator<Item = &str> {
    let items = c
        .and_then(|c| entry(c, "securityContext"))
        .and_then(|sc| entry(&sc.node, "capabilities"))
        .and_then(|caps| entry(&caps.node, "add"))
        .map(|e| match &e.node.value {
            Value::Seq(items) => items.as_slice(),
            _ => &[],
        })
        .unwrap_or_default();
    items.iter().filter_map(|i| match &i.value {
        Value::Scalar(Scalar::Str(s)) => Some(s.as_str()),
        _ => None,
    })
}

/// Where to point inside a container: the deepest of `fields` present, else the container's name.
fn place(c: &Node, fields: &[&str]) -> Origin {
    let mut node = c;
    let mut at = entry(c, "name").map_or(c.origin, |e| e.node.origin);
    for f in fields {
        match entry(node, f) {
            Some(e) => {
                at = e.key.origin;
                node = &e.node;
            }
            None => break,
        }
    }
    at
}

impl Volume {
    /// What the volume must hold where it matters (another source under the mount path does not meet it).
    pub(crate) fn source_key(&self) -> Option<SourceKey> {
        match self {
            Volume::Host(m) => Some(SourceKey::HostPath(
                m.host_path.trim_end_matches('/').to_string(),
            )),
            Volume::Topology(t) => Some(SourceKey::ConfigMap(t.config_map.as_str().to_string())),
            Volume::Inspector(i) => i
                .host_path()
                .map(|h| SourceKey::HostPath(h.trim_end_matches('/').to_string())),
            Volume::SharedMemory | Volume::RdmaDevices => None,
        }
    }

    /// [`Volume::source_key`] in words.
    fn source(&self) -> Option<String> {
        self.source_key().map(|k| match k {
            SourceKey::HostPath(p) => format!("the node's {p}"),
            SourceKey::ConfigMap(n) => format!("ConfigMap `{n}`"),
        })
    }
}

impl Edit {
    /// How to make the edit by hand, in a user's words.
    pub(crate) fn fix(&self) -> String {
        match self {
            Edit::Volume(v) => match v {
                Volume::SharedMemory => {
                    "mount an `emptyDir: {medium: Memory}` volume at /dev/shm".to_string()
                }
                Volume::Host(m) => format!(
                    "add a `hostPath` volume `{}` of {} and mount it read-only at {}",
                    m.name.as_str(),
                    m.host_path,
                    m.mount_path
                ),
                Volume::Topology(t) => format!(
                    "add a `configMap` volume of `{}` and mount its key `{}` read-only at {} (`subPath: {}`)",
                    t.config_map.as_str(),
                    t.key,
                    t.path,
                    t.key
                ),
                Volume::RdmaDevices => {
                    format!(
                        "mount the host's {RDMA_DEVICE_DIR} (a `hostPath`) at {RDMA_DEVICE_DIR}"
                    )
                }
                Volume::Inspector(i) => format!(
                    "mount {} at {} (a volume named `{}`)",
                    match i.host_path() {
                        Some(h) => format!("a `hostPath` of {h}"),
                        None => "an `emptyDir`".to_string(),
                    },
                    i.dump_dir(),
                    observe::INSPECTOR_VOLUME
                ),
            },
            Edit::Capability(c) => {
                format!("add `{}` to `securityContext.capabilities.add`", c.as_str())
            }
            Edit::HostNetwork => {
                "set `hostNetwork: true` and `dnsPolicy: ClusterFirstWithHostNet`".to_string()
            }
            Edit::Privileged => {
                "run the container privileged (`securityContext.privileged: true`)".to_string()
            }
            Edit::PodField { field, value } => format!("set `{field}: {value}` in the pod's spec"),
            Edit::Annotation { key, value, .. } => format!("set the annotation `{key}: {value}`"),
            Edit::Label { key, value } => format!("add the label `{key}: {value}`"),
            Edit::NodeLabel { key, value } => format!("add `{key}: {value}` to `nodeSelector`"),
            Edit::Resource { name, quantity } => {
                format!("set `{name}: \"{quantity}\"` in both requests and limits")
            }
            Edit::Env(v) => format!("set {}={}", v.name, v.value),
            Edit::Networks(nads) => format!(
                "add {} to the `{}` annotation",
                nads.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::plan::MULTUS_ANNOTATION
            ),
            Edit::PodClaim(c) => format!(
                "claim `{}` from `{}` in `resourceClaims`",
                c.name().as_str(),
                c.template().as_str()
            ),
            Edit::ContainerClaim(c) => {
                format!(
                    "list `{}` in the container's `resources.claims`",
                    c.name().as_str()
                )
            }
            Edit::Affinity(_) => "add the profile's required pod-affinity term".to_string(),
            Edit::Document(d) => {
                format!(
                    "add the {} `{}` beside the workload",
                    d.kind(),
                    d.name().as_str()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::{ApplyOptions, apply, templates, view};
    use crate::edits::requirements;
    use roce_model::plumbing::manifest;
    use roce_model::source::{Source, Sources};
    use roce_model::{BuiltinsOnly, builtin, load};

    fn plan(name: &str) -> Plan {
        let p = load(builtin::source(name).unwrap(), &BuiltinsOnly)
            .profile
            .unwrap();
        crate::lower(&p)
    }

    /// `need`'s gaps in the one pod of `text`, as (what is there instead, the line pointed at).
    fn gaps_of(plan: &Plan, need: Need, text: &str) -> Vec<(Option<String>, usize)> {
        let mut sources = Sources::default();
        let id = sources.add(Source::new("p.yaml", text.to_string()));
        let docs = manifest::parse(text, id).unwrap();
        let input = crate::wiring::Input::read(&docs);
        let (found, _) = templates::discover(&docs[0]).unwrap();
        let v = view::view(&docs[0], &found[0], None).unwrap();
        let w = Wiring::read(&v, &input, None);
        let reqs = requirements(plan, None);
        let r = reqs.iter().find(|r| r.need == need).unwrap();
        r.gaps(plan, &v, &w)
            .into_iter()
            .map(|g| (g.instead, text[..g.at.offset].lines().count()))
            .collect()
    }

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n";

    #[test]
    fn a_key_holding_the_edit_in_another_spelling_meets_it() {
        let plan = plan("coreweave/gb300-roce");
        let pod = format!(
            "{POD}    securityContext:\n      capabilities:\n        add: [CAP_IPC_LOCK]\n    volumeMounts:\n    - name: s\n      mountPath: /dev/shm/\n  volumes:\n  - name: s\n    emptyDir: {{medium: Memory}}\n"
        );
        assert_eq!(gaps_of(&plan, Need::Memlock, &pod), []);
        assert_eq!(gaps_of(&plan, Need::SharedMemory, &pod), []);
        // The bare pod has neither: the gap points at the container's name (line 7).
        assert_eq!(gaps_of(&plan, Need::Memlock, POD), [(None, 7)]);
        // apply reads the same key: it adds no IPC_LOCK beside CAP_IPC_LOCK, and no second /dev/shm.
        let applied = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default()).unwrap();
        assert!(!applied.text.contains("- IPC_LOCK"), "{}", applied.text);
        assert_eq!(
            applied.text.matches("/dev/shm").count(),
            1,
            "{}",
            applied.text
        );
    }

    /// A pod-spec field (the k3s example's runtime class): met by its value; unset, `null` and `""` are
    /// gaps apply fills (just before the containers); another class is a gap apply keeps.
    #[test]
    fn a_pod_field_is_met_by_its_value_and_another_is_the_pods_own() {
        let plan = crate::lower(
            &load(
                Source::new(
                    "k3s-h100-ib.kdl",
                    include_str!("../../../../examples/k3s-h100-ib.kdl").to_string(),
                ),
                &BuiltinsOnly,
            )
            .profile
            .unwrap(),
        );
        let with = |line: &str| POD.replace("spec:\n", &format!("spec:\n{line}"));
        // Unset: the gap points at `spec` (its offset starts line 5, after 4 lines).
        assert_eq!(gaps_of(&plan, Need::RuntimeClass, POD), [(None, 4)]);
        for unset in ["  runtimeClassName: null\n", "  runtimeClassName: \"\"\n"] {
            assert_eq!(
                gaps_of(&plan, Need::RuntimeClass, &with(unset)),
                [(None, 4)]
            );
        }
        assert_eq!(
            gaps_of(
                &plan,
                Need::RuntimeClass,
                &with("  runtimeClassName: nvidia\n")
            ),
            []
        );
        let kata = with("  runtimeClassName: kata-qemu\n");
        assert_eq!(
            gaps_of(&plan, Need::RuntimeClass, &kata),
            [(Some("kata-qemu".to_string()), 6)]
        );
        let apply_to = |text: &str| {
            apply(
                &Source::new("p.yaml", text.to_string()),
                &plan,
                &ApplyOptions::default(),
            )
            .unwrap()
            .text
        };
        assert!(apply_to(&kata).contains("runtimeClassName: kata-qemu\n"));
        for text in [POD.to_string(), with("  runtimeClassName: null\n")] {
            let applied = apply_to(&text);
            assert!(
                applied.contains("spec:\n  runtimeClassName: nvidia\n  containers:\n"),
                "{applied}"
            );
        }
    }

    #[test]
    fn another_source_under_the_mount_path_is_a_gap_apply_keeps() {
        let plan = plan("gcp/a3-ultra");
        let pod = format!(
            "{POD}    volumeMounts:\n    - name: mine\n      mountPath: /usr/local/gib\n  volumes:\n  - name: mine\n    emptyDir: {{}}\n"
        );
        let gaps = gaps_of(&plan, Need::HostDirectories, &pod);
        // The gIB directory holds the pod's own volume (the mount item, line 10); the driver directory
        // holds nothing (pointed at `volumeMounts`, line 9).
        assert!(
            gaps.contains(&(Some("volume `mine`".to_string()), 10)),
            "{gaps:?}"
        );
        assert!(gaps.contains(&(None, 9)), "{gaps:?}");
        let applied = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default()).unwrap();
        assert_eq!(
            applied.text.matches("mountPath: /usr/local/gib").count(),
            1,
            "apply keeps the pod's own mount: {}",
            applied.text
        );
    }
}
