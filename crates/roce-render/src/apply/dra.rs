//! DRA in `roce apply`: the plan's claims, clique affinity, labels and Kueue annotations merged into a worker
//! pod template, and the objects the claims name (ComputeDomain, the NICs' ResourceClaimTemplate) added to
//! the file before the workload that claims them.
//!
//! Shapes come from [`crate::dra`], built from the fabric core's facts; this module
//! only merges them into what the user wrote:
//!
//! * `spec.resourceClaims` by `name`: an entry of that name that says something else (another template, a
//!   `resourceClaimName`) is replaced in place, a later entry of the same name is dropped (Kubernetes refuses
//!   two), a missing one is appended;
//! * the container's `resources.claims` by `name`: an entry of that name is kept as written (it may narrow
//!   the claim to one `request`), a missing one is appended;
//! * `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution`: the plan's term is appended
//!   unless an equivalent term is there (same `topologyKey`, a selector for the same label values, whether
//!   written as `matchLabels` or `matchExpressions`); node affinity and the other terms are kept;
//! * `metadata.labels` and `metadata.annotations`: set, as `nodeSelector` labels are.
//!
//! Documents: see [`add_documents`].

use super::GetMut;
use super::splice::Doc;
use super::templates::Step;
use crate::dra;
use crate::edits::equivalent;
use crate::plan::Plan;
use crate::yaml::Yaml;

/// An object in the file, as the documents roce would add are matched against it.
struct Existing {
    group: String,
    kind: String,
    name: String,
    namespace: Option<String>,
    spec: Option<Yaml>,
    /// Where it is, for notes (`document 2`, `document 1, item 3`).
    at: String,
    noted: bool,
}

impl Existing {
    fn of(object: &Yaml, at: String) -> Option<Existing> {
        let metadata = object.get("metadata");
        Some(Existing {
            group: group(object.get("apiVersion")?.as_str()?).to_string(),
            kind: object.get("kind")?.as_str()?.to_string(),
            name: metadata?.get("name")?.as_str()?.to_string(),
            namespace: metadata
                .and_then(|m| m.get("namespace"))
                .and_then(Yaml::as_str)
                .map(str::to_string),
            spec: object.get("spec").cloned(),
            at,
            noted: false,
        })
    }

    /// The same object: same API group (any version), kind and name, and the same namespace, where both
    /// state one (an object without a namespace goes wherever the file is applied, so it may be this one).
    fn is(&self, other: &Existing) -> bool {
        self.group == other.group
            && self.kind == other.kind
            && self.name == other.name
            && match (&self.namespace, &other.namespace) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// `resource.nvidia.com/v1beta1` → `resource.nvidia.com`; the core group (`v1`) is empty.
fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn namespace_of(object: &Yaml) -> Option<String> {
    object
        .get("metadata")?
        .get("namespace")?
        .as_str()
        .map(str::to_string)
}

/// Add the objects the plan's claims name (`plan.dra.documents`: the ComputeDomain, the NICs'
/// ResourceClaimTemplate) to the file, once per namespace, before the first document that claims them —
/// `wired[n]` are the paths of document `n`'s templates that got DRA claims:
///
/// * a document of its own, just before that document (before its leading comments, after the `---` that
///   opens it); the returned `(n, object)` pairs are for [`super::splice`] to insert, in order;
/// * in a `List`, an item of the List just before the first item that claims them, so the List stays one
///   document (edited in `docs[n].after`).
///
/// An object gets the namespace of the workload that claims it, when the workload states one (a claim
/// template must be in its pods' namespace). An object already in the file — the same API group, kind and
/// name, and the same namespace where both state one — is not added again; one whose `spec` differs from
/// the profile's is left as written, with a note.
pub(super) fn add_documents(
    docs: &mut [Doc<'_>],
    wired: &[Vec<Vec<Step>>],
    plan: &Plan,
    file: &str,
    notes: &mut Vec<String>,
) -> Vec<(usize, Yaml)> {
    let wanted = dra::documents(plan);
    let mut inserts = Vec::new();
    if wanted.is_empty() || wired.iter().all(Vec::is_empty) {
        return inserts;
    }
    let mut existing: Vec<Existing> = Vec::new();
    for (n, d) in docs.iter().enumerate() {
        existing.extend(Existing::of(&d.before, format!("document {}", n + 1)));
        if d.before.get("kind").and_then(Yaml::as_str) == Some("List")
            && let Some(Yaml::Seq(items)) = d.before.get("items")
        {
            for (i, item) in items.iter().enumerate() {
                existing.extend(Existing::of(
                    item,
                    format!("document {}, item {}", n + 1, i + 1),
                ));
            }
        }
    }
    for (n, paths) in wired.iter().enumerate() {
        if paths.is_empty() {
            continue;
        }
        let kind = docs[n]
            .before
            .get("kind")
            .and_then(Yaml::as_str)
            .unwrap_or("?")
            .to_string();
        if kind == "List" {
            let mut items: Vec<usize> = paths
                .iter()
                .filter_map(|p| match p.as_slice() {
                    [Step::Key(k), Step::Index(i), ..] if k == "items" => Some(*i),
                    _ => None,
                })
                .collect();
            items.sort_unstable();
            items.dedup();
            let mut adds: Vec<(usize, Vec<Yaml>)> = Vec::new();
            for i in items {
                let Some(Yaml::Seq(list)) = docs[n].before.get("items") else {
                    continue;
                };
                let item_kind = list[i].get("kind").and_then(Yaml::as_str).unwrap_or("?");
                let ns = namespace_of(&list[i]);
                let new = missing(&mut existing, &wanted, ns.as_deref(), file, notes);
                for o in &new {
                    notes.push(format!(
                        "{file}: {} added to the List (document {}) before its item {} ({item_kind}), so \
                         `kubectl apply -f` creates it before the pods that claim it",
                        describe(o),
                        n + 1,
                        i + 1
                    ));
                }
                if !new.is_empty() {
                    adds.push((i, new));
                }
            }
            if let Some(Yaml::Seq(list)) = docs[n].after.get_mut_key("items") {
                for (i, new) in adds.into_iter().rev() {
                    list.splice(i..i, new);
                }
            }
        } else {
            let ns = namespace_of(&docs[n].before);
            let new = missing(&mut existing, &wanted, ns.as_deref(), file, notes);
            for o in new {
                notes.push(format!(
                    "{file}: {} added before document {} ({kind}), so `kubectl apply -f` creates it before \
                     the pods that claim it",
                    describe(&o),
                    n + 1
                ));
                if kind == "ClusterTrainingRuntime" {
                    notes.push(format!(
                        "{file}: a ClusterTrainingRuntime serves TrainJobs of every namespace, but {} must be \
                         in the namespace of the TrainJob's pods: apply it there",
                        describe(&o)
                    ));
                }
                inserts.push((n, o));
            }
        }
    }
    inserts
}

/// `ComputeDomain nccl-test` (in namespace `ns`).
fn describe(object: &Yaml) -> String {
    let kind = object.get("kind").and_then(Yaml::as_str).unwrap_or("?");
    let name = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Yaml::as_str)
        .unwrap_or("?");
    match namespace_of(object) {
        Some(ns) => format!("the {kind} `{name}` (namespace `{ns}`)"),
        None => format!("the {kind} `{name}`"),
    }
}

/// The wanted objects not in `existing` yet, with `namespace` set; each is recorded as existing.
fn missing(
    existing: &mut Vec<Existing>,
    wanted: &[Yaml],
    namespace: Option<&str>,
    file: &str,
    notes: &mut Vec<String>,
) -> Vec<Yaml> {
    let mut out = Vec::new();
    for w in wanted {
        let mut object = w.clone();
        if let Some(ns) = namespace
            && let Some(m) = object.get_mut_key("metadata")
        {
            m.insert("namespace", ns);
        }
        let Some(key) = Existing::of(&object, String::new()) else {
            continue;
        };
        match existing.iter_mut().find(|e| e.is(&key)) {
            Some(e) => {
                let same = match (&e.spec, &key.spec) {
                    (Some(a), Some(b)) => equivalent(a, b),
                    (a, b) => a.is_none() && b.is_none(),
                };
                if !same && !e.noted && !e.at.is_empty() {
                    e.noted = true;
                    notes.push(format!(
                        "{file}: the {} `{}` in {} has another `spec` than the profile's; roce leaves it as \
                         written (the pods claim `{}`)",
                        e.kind,
                        e.name,
                        e.at,
                        claimed_template(w).unwrap_or_else(|| e.name.clone())
                    ));
                }
            }
            None => {
                existing.push(key);
                out.push(object);
            }
        }
    }
    out
}

/// The channel template a ComputeDomain makes, which the pods claim.
fn claimed_template(object: &Yaml) -> Option<String> {
    object
        .get("spec")?
        .get("channel")?
        .get("resourceClaimTemplate")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}
