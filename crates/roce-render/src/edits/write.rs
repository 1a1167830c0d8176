//! The one interpreter of [`Edit`]s on a pod template's YAML: each edit merged by its key into what is
//! there. On an empty pod ([`Skeleton`]) this writes the Pod target; on a user's template, `roce apply`.
//!
//! Keys that are absent are created last in their mapping, in the order below, so a user's key order is
//! kept; a [`Skeleton`] holds `null` placeholders where the emitter wants a key, which are filled in place
//! or dropped.

use super::keys::{env_meets, holds_capability, same_path, unescape_dependent};
use super::{Edit, Merge, Volume};
use crate::apply::multus;
use crate::plan::{MULTUS_ANNOTATION, Plan};
use crate::yaml::{Key, Yaml};
use roce_model::names::NadRef;

/// What the interpreter needs to know about the template besides its YAML.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context<'a> {
    /// The networks the Multus annotation already lists (parsed by the caller, which reports a malformed
    /// one).
    pub networks: Option<&'a [multus::Network<'a>]>,
    /// The pod's namespace, which a network without one is in.
    pub pod_namespace: Option<&'a str>,
    /// `metadata` is created first in the template (a PodTemplateSpec), not last (a Pod document).
    pub metadata_first: bool,
    /// Only correct env entries that exist (the launcher carries the env); variables the container
    /// runtime reads still go in.
    pub env_fix_only: bool,
}

/// Merge `edits` into `template` (a Pod or a PodTemplateSpec: a mapping with `metadata` and `spec`) and its
/// container `index`. Returns what the DRA and placement edits changed, for a note (empty when nothing
/// did). Documents are the caller's: they go beside the workload.
pub(crate) fn write(
    template: &mut Yaml,
    index: usize,
    edits: &[&Edit],
    plan: &Plan,
    cx: Context<'_>,
) -> Vec<String> {
    let mut changed = annotations(template, edits, cx);
    let Some(spec) = ensure_map(template, "spec", false) else {
        return changed;
    };
    if any(edits, |e| matches!(e, Edit::HostNetwork)) {
        host_network(spec);
    }
    node_selector(spec, edits);
    pod_fields(spec, edits);
    let volumes: Vec<&Volume> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Volume(v) => Some(v),
            _ => None,
        })
        .collect();
    let added = pod_volumes(spec, index, &volumes);
    if let Some(c) = container(spec, index) {
        resources_and_security(c, edits);
        volume_mounts(c, &volumes, &added);
        env(c, edits, plan, cx);
    }
    changed.extend(placement(template, index, edits));
    changed
}

/// Whether any edit is of the kind `f` picks.
fn any(edits: &[&Edit], f: fn(&Edit) -> bool) -> bool {
    edits.iter().any(|e| f(e))
}

/// The annotation and Multus edits; returns the annotations set over another value that a note should
/// mention (not the profile annotation, which always is).
fn annotations(template: &mut Yaml, edits: &[&Edit], cx: Context<'_>) -> Vec<String> {
    let mut changed = Vec::new();
    if !any(edits, |e| {
        matches!(e, Edit::Annotation { .. } | Edit::Networks(_))
    }) {
        return changed;
    }
    let Some(annotations) = ensure_map(template, "metadata", cx.metadata_first)
        .and_then(|m| ensure_map(m, "annotations", false))
    else {
        return changed;
    };
    for e in edits {
        match e {
            Edit::Annotation { key, value, merge } => {
                if reads_as(annotations.get(key), value)
                    || (*merge == Merge::IfAbsent && annotations.get(key).is_some())
                {
                    continue;
                }
                if value.contains('\n') {
                    annotations.insert(key.clone(), Yaml::Block(value.clone()));
                } else {
                    set_str(annotations, key, value);
                }
                if *merge == Merge::Set && key != crate::PROFILE_ANNOTATION {
                    changed.push(format!("annotation {key}={value}"));
                }
            }
            Edit::Networks(nads) => networks(annotations, nads, cx),
            _ => {}
        }
    }
    changed
}

/// `hostNetwork: true`, and the DNS policy a host-network pod needs unless the pod chose its own.
fn host_network(spec: &mut Yaml) {
    use roce_model::fabric::attach::{HOST_NETWORK, HOST_NETWORK_DNS_POLICY};
    set_true(spec, HOST_NETWORK);
    if spec
        .get("dnsPolicy")
        .and_then(scalar_text)
        .is_none_or(|p| p == "ClusterFirst")
    {
        set_str(spec, "dnsPolicy", HOST_NETWORK_DNS_POLICY);
    }
}

/// The node-label edits into `nodeSelector`, created only when there is one.
fn node_selector(spec: &mut Yaml, edits: &[&Edit]) {
    if any(edits, |e| matches!(e, Edit::NodeLabel { .. }))
        && let Some(sel) = ensure_map(spec, "nodeSelector", false)
    {
        for e in edits {
            if let Edit::NodeLabel { key, value } = e {
                set_str(sel, key, value);
            }
        }
    }
}

/// The pod-spec fields the pod leaves at Kubernetes' default (unset, `null` or `""`), each just before
/// the containers where it is new (with the pod's own settings); a value already there is the pod's.
fn pod_fields(spec: &mut Yaml, edits: &[&Edit]) {
    for e in edits {
        let Edit::PodField { field, value } = e else {
            continue;
        };
        let unset = match spec.get(field) {
            None | Some(Yaml::Null) => true,
            Some(Yaml::Raw(r)) => matches!(r.as_str(), "~" | "null" | "Null" | "NULL"),
            Some(y) => y.as_str() == Some(""),
        };
        if !unset {
            continue;
        }
        if let Yaml::Map(entries) = spec
            && !entries.iter().any(|(k, _)| k == field)
            && let Some(at) = entries
                .iter()
                .position(|(k, _)| k == "initContainers" || k == "containers")
        {
            entries.insert(at, ((*field).into(), Yaml::Str(value.clone())));
        } else {
            spec.insert(*field, Yaml::Str(value.clone()));
        }
    }
}

/// What the pod-level volume step decided for the container's mounts.
struct Added {
    /// The shared-memory volume's name, where there is one to mount.
    shm_name: Option<String>,
    /// Whether the host's RDMA device directory was added (the container did not mount it already).
    rdma_devices: bool,
    /// Whether the Inspector's volume was added (the container mounted nothing at its directory).
    inspector: bool,
}

/// The pod's volumes for the volume edits; which of them the container still has to mount.
fn pod_volumes(spec: &mut Yaml, index: usize, volumes: &[&Volume]) -> Added {
    let mut added = Added {
        shm_name: None,
        rdma_devices: false,
        inspector: false,
    };
    for v in volumes {
        match v {
            Volume::SharedMemory => added.shm_name = shm_volume(spec, index),
            Volume::RdmaDevices => {
                use roce_model::fabric::attach::{RDMA_DEVICE_DIR, RDMA_DEVICE_VOLUME};
                added.rdma_devices = !mounts_at(spec, index, RDMA_DEVICE_DIR);
                if added.rdma_devices {
                    add_volume(spec, RDMA_DEVICE_VOLUME, crate::volumes::rdma_device_volume);
                }
            }
            Volume::Host(m) => add_volume(spec, m.name.as_str(), || crate::volumes::host_volume(m)),
            Volume::Topology(t) => {
                add_volume(spec, roce_model::fabric::provider::TOPOLOGY_VOLUME, || {
                    crate::volumes::topology_volume(t)
                })
            }
            // A container that already mounts something at the directory keeps its own volume.
            Volume::Inspector(i) => {
                added.inspector = !mounts_at(spec, index, i.dump_dir());
                if added.inspector {
                    add_volume(spec, roce_model::fabric::observe::INSPECTOR_VOLUME, || {
                        crate::volumes::inspector_volume(i)
                    });
                }
            }
        }
    }
    added
}

/// The container's resources, `privileged` and added capabilities (each capability once).
fn resources_and_security(c: &mut Yaml, edits: &[&Edit]) {
    let resources: Vec<(&str, &str)> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Resource { name, quantity } => Some((name.as_str(), quantity.as_str())),
            _ => None,
        })
        .collect();
    merge_resources(c, "resources", &resources);
    if any(edits, |e| matches!(e, Edit::Privileged))
        && let Some(sc) = ensure_map(c, "securityContext", false)
    {
        set_true(sc, "privileged");
    }
    let caps: Vec<&str> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Capability(c) => Some(c.as_str()),
            _ => None,
        })
        .collect();
    if !caps.is_empty()
        && let Some(Yaml::Seq(items)) = ensure_map(c, "securityContext", false)
            .and_then(|sc| ensure_map(sc, "capabilities", false))
            .and_then(|caps| ensure_seq(caps, "add"))
    {
        for cap in caps {
            if !holds_capability(items.iter().filter_map(Yaml::as_str), cap) {
                items.push(Yaml::Str(cap.to_string()));
            }
        }
    }
}

/// The container's mounts of the volumes, skipping a path it mounts already (but `/dev/shm`, whose
/// volume `shm_volume` chose knowing the mounts).
fn volume_mounts(c: &mut Yaml, volumes: &[&Volume], added: &Added) {
    for v in volumes {
        let (path, mount) = match v {
            Volume::SharedMemory => match &added.shm_name {
                Some(name) => (
                    "/dev/shm",
                    Yaml::map()
                        .with("name", name.as_str())
                        .with("mountPath", "/dev/shm"),
                ),
                None => continue,
            },
            Volume::Host(m) => (m.mount_path.as_str(), crate::volumes::host_mount(m)),
            Volume::Topology(t) => (t.path.as_str(), crate::volumes::topology_mount(t)),
            Volume::RdmaDevices if added.rdma_devices => (
                roce_model::fabric::attach::RDMA_DEVICE_DIR,
                crate::volumes::rdma_device_mount(),
            ),
            Volume::RdmaDevices => continue,
            Volume::Inspector(i) if added.inspector => {
                (i.dump_dir(), crate::volumes::inspector_mount(i))
            }
            Volume::Inspector(_) => continue,
        };
        if let Some(Yaml::Seq(mounts)) = ensure_seq(c, "volumeMounts")
            && (matches!(v, Volume::SharedMemory)
                || !mounts.iter().any(|x| {
                    x.get("mountPath")
                        .and_then(Yaml::as_str)
                        .is_some_and(|p| same_path(p, path))
                }))
        {
            mounts.push(mount);
        }
    }
}

/// The env edits; with `env_fix_only`, the variables the container runtime reads still go in.
fn env(c: &mut Yaml, edits: &[&Edit], plan: &Plan, cx: Context<'_>) {
    let env: Vec<(&str, &str)> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Env(v) => Some((v.name.as_str(), v.value.as_str())),
            _ => None,
        })
        .collect();
    if env.is_empty() {
        return;
    }
    merge_env(c, &env, cx.env_fix_only, plan);
    // What the container runtime reads goes in the workers' env, wherever the rest goes.
    if cx.env_fix_only {
        let runtime: Vec<(&str, &str)> = env
            .iter()
            .filter(|(n, _)| roce_model::fabric::env::read_at_container_creation(n))
            .copied()
            .collect();
        if !runtime.is_empty() {
            merge_env(c, &runtime, false, plan);
        }
    }
}

/// The Multus annotation with the plan's networks merged in ([`multus::merge`]).
fn networks(annotations: &mut Yaml, nads: &[NadRef], cx: Context<'_>) {
    let value = match cx.networks {
        Some(have) if !have.is_empty() => {
            multus::render(&multus::merge(have, nads, cx.pod_namespace))
        }
        // Nothing to merge with: the list as the fabric core writes it (the same text).
        _ => roce_model::fabric::attach::multus_list(nads),
    };
    annotations.insert(MULTUS_ANNOTATION, Yaml::Block(value));
}

/// The pod's container `index`.
fn container(spec: &mut Yaml, index: usize) -> Option<&mut Yaml> {
    match spec.get_mut_key("containers") {
        Some(Yaml::Seq(containers)) => containers.get_mut(index),
        _ => None,
    }
}

/// Does the container `index` mount something at `path` (the key mounts merge on, which `edits::gaps`
/// reads a template by too: a trailing `/` aside)?
fn mounts_at(spec: &Yaml, index: usize, path: &str) -> bool {
    matches!(spec.get("containers"), Some(Yaml::Seq(cs)) if cs.get(index).and_then(|c| c.get("volumeMounts")).is_some_and(|m| matches!(m, Yaml::Seq(ms) if ms.iter().any(|m| m.get("mountPath").and_then(Yaml::as_str).is_some_and(|p| same_path(p, path))))))
}

/// A volume by name, unless the pod has one of that name.
fn add_volume(spec: &mut Yaml, name: &str, volume: impl FnOnce() -> Yaml) {
    if let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes")
        && !volumes
            .iter()
            .any(|v| v.get("name").and_then(Yaml::as_str) == Some(name))
    {
        volumes.push(volume());
    }
}

/// Labels, pod claims, the affinity term and the container's claims; returns what changed.
fn placement(template: &mut Yaml, index: usize, edits: &[&Edit]) -> Vec<String> {
    let mut changed = Vec::new();
    let labels: Vec<(&str, &str)> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Label { key, value } => Some((key.as_str(), value.as_str())),
            _ => None,
        })
        .collect();
    if !labels.is_empty()
        && let Some(metadata) = template.get_mut_key("metadata")
        && let Some(map) = ensure_map_before(metadata, "labels", "annotations")
    {
        for (k, v) in labels {
            if map.get(k).and_then(scalar_text).as_deref() != Some(v) {
                set_str(map, k, v);
                changed.push(format!("label {k}={v}"));
            }
        }
    }
    let Some(spec) = template.get_mut_key("spec") else {
        return changed;
    };
    let want: Vec<Yaml> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::PodClaim(c) => Some(c.to_yaml()),
            _ => None,
        })
        .collect();
    if !want.is_empty()
        && let Some(Yaml::Seq(have)) = ensure_seq(spec, "resourceClaims")
    {
        changed.extend(merge_pod_claims(have, &want));
    }
    for e in edits {
        let Edit::Affinity(a) = e else { continue };
        let t = a.term();
        if let Some(Yaml::Seq(have)) = ensure_map(spec, "affinity", false)
            .and_then(|a| ensure_map(a, "podAffinity", false))
            .and_then(|p| ensure_seq(p, "requiredDuringSchedulingIgnoredDuringExecution"))
            && !have.iter().any(|h| same_term(h, &t))
        {
            let key = a.topology_key();
            changed.push(format!("the required pod affinity on {key}"));
            have.push(t);
        }
    }
    let want: Vec<Yaml> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::ContainerClaim(c) => Some(c.to_yaml()),
            _ => None,
        })
        .collect();
    if !want.is_empty()
        && let Some(c) = container(spec, index)
    {
        let cname = c
            .get("name")
            .and_then(Yaml::as_str)
            .unwrap_or("?")
            .to_string();
        if let Some(Yaml::Seq(have)) =
            ensure_map(c, "resources", false).and_then(|r| ensure_seq(r, "claims"))
        {
            let mut added = Vec::new();
            for w in want {
                let name = name_of(&w).unwrap_or_default().to_string();
                if !have.iter().any(|h| name_of(h) == Some(name.as_str())) {
                    have.push(w);
                    added.push(name);
                }
            }
            if !added.is_empty() {
                changed.push(format!(
                    "container `{cname}` lists {} in `resources.claims`",
                    added.join(", ")
                ));
            }
        }
    }
    changed
}

/// An empty pod to write edits onto, with `null` placeholders where its emitter wants each key
/// ([`Skeleton::finish`] drops those no edit filled).
pub(crate) struct Skeleton;

impl Skeleton {
    /// Drop every `null` placeholder left in a template: in its `metadata`, its `spec` and the spec's
    /// containers (where the skeletons put them; edits never write a null).
    pub(crate) fn finish(template: &mut Yaml) {
        fn drop_nulls(y: &mut Yaml) {
            if let Yaml::Map(entries) = y {
                entries.retain(|(_, v)| *v != Yaml::Null);
            }
        }
        if let Yaml::Map(parts) = template {
            for (k, part) in parts.iter_mut() {
                if k != "metadata" && k != "spec" {
                    continue;
                }
                drop_nulls(part);
                if let Some(Yaml::Seq(cs)) = part.get_mut_key("containers") {
                    cs.iter_mut().for_each(drop_nulls);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Merging by key

/// Mutable access to a mapping's value.
pub(crate) trait GetMut {
    fn get_mut_key(&mut self, key: &str) -> Option<&mut Yaml>;
}

impl GetMut for Yaml {
    fn get_mut_key(&mut self, key: &str) -> Option<&mut Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The mapping under `key` of `map`, created (last, or first with `front`) when absent or null.
pub(crate) fn ensure_map(
    map: &mut Yaml,
    key: impl AsRef<str> + Into<Key>,
    front: bool,
) -> Option<&mut Yaml> {
    ensure(map, key, front, Yaml::map)
}

pub(crate) fn ensure_seq<'a>(map: &'a mut Yaml, key: &'static str) -> Option<&'a mut Yaml> {
    ensure(map, key, false, Yaml::seq)
}

fn ensure(
    map: &mut Yaml,
    key: impl AsRef<str> + Into<Key>,
    front: bool,
    empty: fn() -> Yaml,
) -> Option<&mut Yaml> {
    let Yaml::Map(entries) = map else { return None };
    let i = match entries.iter().position(|(k, _)| k == key.as_ref()) {
        Some(i) => {
            if entries[i].1 == Yaml::Null || matches!(entries[i].1, Yaml::Raw(_)) {
                entries[i].1 = empty();
            }
            i
        }
        None if front => {
            entries.insert(0, (key.into(), empty()));
            0
        }
        None => {
            entries.push((key.into(), empty()));
            entries.len() - 1
        }
    };
    let value = &mut entries[i].1;
    (std::mem::discriminant(value) == std::mem::discriminant(&empty())).then_some(value)
}

/// The mapping under `key`, created just before the key `before` (else last) when absent or null.
fn ensure_map_before<'a>(
    map: &'a mut Yaml,
    key: &'static str,
    before: &str,
) -> Option<&'a mut Yaml> {
    if let Yaml::Map(entries) = map
        && !entries.iter().any(|(k, _)| k == key)
        && let Some(at) = entries.iter().position(|(k, _)| k == before)
    {
        entries.insert(at, (key.into(), Yaml::map()));
    }
    ensure_map(map, key, false)
}

/// The text a scalar reads as, for comparing quantities and strings (`1`, `"1"` and `'1'` alike).
pub(crate) fn scalar_text(y: &Yaml) -> Option<String> {
    match y {
        Yaml::Raw(s) => Some(s.clone()),
        Yaml::Int(n) => Some(n.to_string()),
        other => other.as_str().map(str::to_string),
    }
}

/// Set a boolean entry to `true` unless it already reads as true.
fn set_true(map: &mut Yaml, key: &'static str) {
    if map.get(key) != Some(&Yaml::Bool(true))
        && map.get(key).and_then(scalar_text).as_deref() != Some("true")
    {
        map.insert(key, Yaml::Bool(true));
    }
}

/// Does a scalar read as `value` ([`scalar_text`], without making its text)?
fn reads_as(y: Option<&Yaml>, value: &str) -> bool {
    match y {
        Some(Yaml::Raw(s)) => s == value,
        Some(Yaml::Int(n)) => n.to_string() == value,
        Some(other) => other.as_str() == Some(value),
        None => false,
    }
}

/// Set a string entry unless it already reads as `value`.
pub(crate) fn set_str(map: &mut Yaml, key: &str, value: &str) {
    if !reads_as(map.get(key), value) {
        map.insert(key.to_owned(), Yaml::Str(value.to_string()));
    }
}

/// Make sure `spec.volumes` has a memory-backed volume for `/dev/shm`, unless the container already mounts
/// something there. Returns the volume name to mount, or `None` when nothing is to be mounted.
fn shm_volume(spec: &mut Yaml, index: usize) -> Option<String> {
    if mounts_at(spec, index, Volume::SharedMemory.mount_path()) {
        return None;
    }
    let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes") else {
        return None;
    };
    let is_memory = |v: &Yaml| {
        v.get("emptyDir")
            .and_then(|e| e.get("medium"))
            .and_then(Yaml::as_str)
            == Some("Memory")
    };
    for candidate in [crate::volumes::SHM_VOLUME, "roce-dshm"] {
        match volumes
            .iter()
            .find(|v| v.get("name").and_then(Yaml::as_str) == Some(candidate))
        {
            Some(v) if is_memory(v) => return Some(candidate.to_string()),
            Some(_) => continue,
            None => {
                volumes.push(crate::volumes::shm_volume_named(candidate));
                return Some(candidate.to_string());
            }
        }
    }
    None
}

/// `resources` quantities in requests and limits (`key`: `resources`, or a TrainJob's `resourcesPerNode`);
/// nothing is touched when there are none.
pub(crate) fn merge_resources(c: &mut Yaml, key: &'static str, quantities: &[(&str, &str)]) {
    if quantities.is_empty() {
        return;
    }
    let Some(resources) = ensure_map(c, key, false) else {
        return;
    };
    for side in ["requests", "limits"] {
        let Some(q) = ensure_map(resources, side, false) else {
            continue;
        };
        for (name, amount) in quantities {
            set_str(q, name, amount);
        }
    }
}

/// Merge env by name. With `fix_only`, only entries that already exist are corrected (the other side of an
/// MPI job carries the env, and these would override it).
pub(crate) fn merge_env<N: AsRef<str>, V: AsRef<str>>(
    c: &mut Yaml,
    env: &[(N, V)],
    fix_only: bool,
    plan: &Plan,
) {
    let present = |c: &Yaml, name: &str| matches!(c.get("env"), Some(Yaml::Seq(items)) if items.iter().any(|i| i.get("name").and_then(Yaml::as_str) == Some(name)));
    if fix_only && !env.iter().any(|(n, _)| present(c, n.as_ref())) {
        return;
    }
    let Some(Yaml::Seq(items)) = ensure_seq(c, "env") else {
        return;
    };
    for (name, value) in env {
        let (name, value) = (name.as_ref(), value.as_ref());
        let same_name = |i: &Yaml| i.get("name").and_then(Yaml::as_str) == Some(name);
        match items.iter().position(same_name) {
            Some(at) => {
                let item = &items[at];
                let have = item
                    .get("value")
                    .and_then(Yaml::as_str)
                    .filter(|_| item.get("valueFrom").is_none());
                let right = have.is_some_and(|h| env_meets(plan, name, h, value));
                if !right {
                    // A search path keeps the manifest's entries (the MPI's, the image's) and gains the plan's.
                    let merged = match have {
                        Some(h) if roce_model::fabric::devices::path_like(name) => {
                            merge_paths(&unescape_dependent(h), value)
                        }
                        _ => value.to_string(),
                    };
                    items[at] = env_item(name, &merged);
                }
                let mut seen = 0;
                items.retain(|i| {
                    if same_name(i) {
                        seen += 1;
                        seen == 1
                    } else {
                        true
                    }
                });
            }
            None if fix_only => {}
            None => items.push(env_item(name, value)),
        }
    }
}

/// `have` with each entry of `want` it lacks appended (`:`-separated search paths).
fn merge_paths(have: &str, want: &str) -> String {
    let mut out = have.to_string();
    for w in want.split(':').filter(|w| !w.is_empty()) {
        if !have.split(':').any(|h| h == w) {
            if !out.is_empty() {
                out.push(':');
            }
            out.push_str(w);
        }
    }
    out
}

/// An `env` entry whose value the container sees verbatim (Kubernetes' `$(VAR)` expansion escaped).
pub(crate) fn env_item(name: &str, value: &str) -> Yaml {
    Yaml::map().with("name", name).with(
        "value",
        Yaml::Quoted(crate::expansion::escape_dependent_vars(value)),
    )
}

fn name_of(y: &Yaml) -> Option<&str> {
    y.get("name").and_then(Yaml::as_str)
}

/// Merge the plan's pod claims into `have` by name; returns what changed.
fn merge_pod_claims(have: &mut Vec<Yaml>, want: &[Yaml]) -> Vec<String> {
    let mut changed = Vec::new();
    let mut added = Vec::new();
    for w in want {
        let Some(name) = name_of(w).map(str::to_string) else {
            continue;
        };
        let same_name = |i: &Yaml| name_of(i) == Some(name.as_str());
        match have.iter().position(same_name) {
            Some(at) => {
                if !equivalent(&have[at], w) {
                    let was = have[at]
                        .get("resourceClaimTemplateName")
                        .or_else(|| have[at].get("resourceClaimName"))
                        .and_then(scalar_text)
                        .map_or_else(String::new, |t| format!(" (it named `{t}`)"));
                    let template = w
                        .get("resourceClaimTemplateName")
                        .and_then(Yaml::as_str)
                        .unwrap_or("?");
                    changed.push(format!(
                        "the pod claim {name} now claims from template `{template}`{was}"
                    ));
                    have[at] = w.clone();
                }
                let mut seen = 0;
                let before = have.len();
                have.retain(|i| {
                    if same_name(i) {
                        seen += 1;
                        seen == 1
                    } else {
                        true
                    }
                });
                if have.len() < before {
                    changed.push(format!("a second pod claim named {name} dropped"));
                }
            }
            None => {
                have.push(w.clone());
                added.push(name);
            }
        }
    }
    if !added.is_empty() {
        changed.insert(0, format!("`resourceClaims` {}", added.join(", ")));
    }
    changed
}

/// Two pod-affinity terms that place pods alike: the same `topologyKey`, selectors that select the same
/// (key, operator, values) requirements (`matchLabels: {k: v}` is `k In [v]`; order does not matter), and
/// no other field (namespaces, `matchLabelKeys`…) in either.
fn same_term(have: &Yaml, want: &Yaml) -> bool {
    let Yaml::Map(entries) = have else {
        return false;
    };
    if entries
        .iter()
        .any(|(k, _)| k != "topologyKey" && k != "labelSelector")
    {
        return false;
    }
    let key = |t: &Yaml| t.get("topologyKey").and_then(scalar_text);
    key(have) == key(want)
        && selector_requirements(have.get("labelSelector"))
            == selector_requirements(want.get("labelSelector"))
}

/// A label selector as sorted (key, operator, sorted values); `None` when it holds anything else.
fn selector_requirements(selector: Option<&Yaml>) -> Option<Vec<(String, String, Vec<String>)>> {
    let selector = selector?;
    let Yaml::Map(entries) = selector else {
        return None;
    };
    let mut out = Vec::new();
    for (k, v) in entries {
        match (k.as_ref(), v) {
            ("matchLabels", Yaml::Map(labels)) => {
                for (key, value) in labels {
                    out.push((key.to_string(), "In".to_string(), vec![scalar_text(value)?]));
                }
            }
            ("matchExpressions", Yaml::Seq(exprs)) => {
                for e in exprs {
                    let key = e.get("key").and_then(scalar_text)?;
                    let op = e.get("operator").and_then(scalar_text)?;
                    let mut values = match e.get("values") {
                        Some(Yaml::Seq(vs)) => {
                            vs.iter().map(scalar_text).collect::<Option<Vec<_>>>()?
                        }
                        None => Vec::new(),
                        Some(_) => return None,
                    };
                    values.sort();
                    values.dedup();
                    out.push((key, op, values));
                }
            }
            (_, Yaml::Null) => {}
            _ => return None,
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

/// Do two values mean the same: mappings with the same keys in any order, lists item by item, scalars by
/// their text?
pub(crate) fn equivalent(a: &Yaml, b: &Yaml) -> bool {
    match (a, b) {
        (Yaml::Map(x), Yaml::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| equivalent(v, w)))
        }
        (Yaml::Seq(x), Yaml::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equivalent(v, w))
        }
        (Yaml::Map(_) | Yaml::Seq(_), _) | (_, Yaml::Map(_) | Yaml::Seq(_)) => false,
        _ => scalar_text(a).is_some() && scalar_text(a) == scalar_text(b),
    }
}
