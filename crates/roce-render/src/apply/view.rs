//! A checked view of one pod template in a spanned document: the fields `roce apply` writes and `roce lint`
//! reads, each verified to have the type Kubernetes gives it, and the container that gets the wiring.

use roce_model::plumbing::tree::{Entry, Node, Scalar, Value};
use roce_model::source::Origin;
use roce_model::{Code, Problem};

use super::templates::{Added, Form, Role, Step, Template, at};
use crate::plan::MULTUS_ANNOTATION;

/// The fields of one pod template that roce reads or writes.
#[derive(Debug, Clone, Copy)]
pub struct PodView<'a> {
    /// The template (a Pod, a PodTemplateSpec, or a TrainJob's `spec.trainer`); `None` when a TrainJob
    /// has no `trainer` yet.
    pub root: Option<&'a Node>,
    /// Its shape.
    pub form: Form,
    /// What it is for.
    pub role: Role,
    /// `metadata`.
    pub metadata: Option<&'a Node>,
    /// `metadata.annotations`.
    pub annotations: Option<&'a Node>,
    /// The Multus annotation's entry (key and value).
    pub multus: Option<&'a Entry>,
    /// `spec`.
    pub spec: Option<&'a Node>,
    /// The selected container: its index in `spec.containers` and its node (for a trainer: the trainer).
    pub container: Option<(usize, &'a Node)>,
    /// The `containers` key (where to point when the container is missing).
    pub containers_at: Option<Origin>,
    /// What the kind's controller adds to the pod it builds from this template.
    pub added: Added,
}

/// A field's entry in a mapping node.
pub fn entry<'a>(parent: &'a Node, key: &str) -> Option<&'a Entry> {
    match &parent.value {
        Value::Map(entries) => entries.iter().find(|e| e.key.value == key),
        _ => None,
    }
}

/// The string value of a field.
pub fn text<'a>(parent: &'a Node, key: &str) -> Option<&'a str> {
    match &entry(parent, key)?.node.value {
        Value::Scalar(Scalar::Str(s)) => Some(s),
        _ => None,
    }
}

/// The topology keys of a pod spec's required pod-affinity terms
/// (`affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].topologyKey`).
pub fn required_affinity_keys(spec: Option<&Node>) -> Vec<&str> {
    spec.and_then(|s| entry(s, "affinity"))
        .and_then(|a| entry(&a.node, "podAffinity"))
        .and_then(|p| entry(&p.node, "requiredDuringSchedulingIgnoredDuringExecution"))
        .map(|e| match &e.node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|i| text(i, "topologyKey"))
                .collect(),
            _ => Vec::new(),
        })
        .unwrap_or_default()
}

/// What a pod's required node affinity says of one node label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeLabel {
    /// Every node it admits has the label with the wanted value.
    Selects,
    /// Every node it admits has the label with other values (listed, `{a, b}`), required at this place.
    Other(String, Origin),
    /// It leaves the label open (no required affinity, a term without the label, `Exists`, `NotIn`).
    Open,
}

/// A pod spec's `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` read for the node
/// label `key` by the scheduler's rules (kubernetes.io, "Assigning Pods to Nodes": `nodeSelector` and the
/// required affinity are ANDed, the `nodeSelectorTerms` ORed, the `matchExpressions` of a term ANDed; a
/// preferred term only ranks nodes): the pod lands only on `key=want` nodes when every term has an `In`
/// expression on `key` whose values are all `want`, and only on others when no term's allows `want`.
pub fn required_node_label(spec: Option<&Node>, key: &str, want: &str) -> NodeLabel {
    // The label's other name in `nodeSelector` (`beta.kubernetes.io/instance-type`) selects the same nodes.
    if let Some(alias) = roce_model::fabric::devices::node_label_alias(key)
        && let Some(e) = spec
            .and_then(|s| entry(s, "nodeSelector"))
            .and_then(|sel| entry(&sel.node, alias))
    {
        let have = match &e.node.value {
            Value::Scalar(Scalar::Str(s)) => Some(s.as_str()),
            _ => None,
        };
        return if have
            .is_some_and(|h| roce_model::fabric::devices::same_node_label_value(key, h, want))
        {
            NodeLabel::Selects
        } else {
            NodeLabel::Other(have.unwrap_or("?").to_string(), e.node.origin)
        };
    }
    let terms = spec
        .and_then(|s| entry(s, "affinity"))
        .and_then(|a| entry(&a.node, "nodeAffinity"))
        .and_then(|n| entry(&n.node, "requiredDuringSchedulingIgnoredDuringExecution"))
        .and_then(|r| entry(&r.node, "nodeSelectorTerms"));
    let Some(Value::Seq(terms)) = terms.map(|t| &t.node.value) else {
        return NodeLabel::Open;
    };
    // For each term, the values its `In` expression on `key` allows, and where.
    let mut pinned: Vec<(Vec<&str>, Origin)> = Vec::new();
    for term in terms {
        let Some(Value::Seq(exprs)) = entry(term, "matchExpressions").map(|e| &e.node.value) else {
            return NodeLabel::Open;
        };
        let found = exprs.iter().find_map(|x| {
            if text(x, "key") != Some(key) || text(x, "operator") != Some("In") {
                return None;
            }
            let values = entry(x, "values")?;
            let Value::Seq(items) = &values.node.value else {
                return None;
            };
            let strings = items.iter().filter_map(|i| match &i.value {
                Value::Scalar(Scalar::Str(s)) => Some(s.as_str()),
                _ => None,
            });
            Some((strings.collect::<Vec<_>>(), values.node.origin))
        });
        match found {
            Some(f) => pinned.push(f),
            None => return NodeLabel::Open,
        }
    }
    if pinned.is_empty() {
        NodeLabel::Open
    } else if pinned
        .iter()
        .all(|(values, _)| !values.is_empty() && values.iter().all(|x| *x == want))
    {
        NodeLabel::Selects
    } else if pinned.iter().all(|(values, _)| !values.contains(&want)) {
        let mut all: Vec<&str> = pinned.iter().flat_map(|(v, _)| v.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        NodeLabel::Other(format!("{{{}}}", all.join(", ")), pinned[0].1)
    } else {
        NodeLabel::Open
    }
}

fn is_null(node: &Node) -> bool {
    matches!(node.value, Value::Scalar(Scalar::Null))
}

/// Checks field types and collects shape problems.
#[derive(Debug)]
pub(crate) struct Shapes<'p> {
    /// Where problems go.
    pub problems: &'p mut Vec<Problem>,
    /// What the fields belong to (`the MPIJob worker`), for messages.
    pub owner: String,
}

impl Shapes<'_> {
    fn wrong(&mut self, e: &Entry, want: &str) {
        let at = if matches!(e.node.value, Value::Scalar(_)) {
            e.node.origin
        } else {
            e.key.origin
        };
        self.problems.push(
            Problem::new(
                Code::LintShape,
                format!(
                    "`{}` of {} is {}, but Kubernetes expects {want}",
                    e.key.value,
                    self.owner,
                    e.node.value.type_name()
                ),
            )
            .at(at, format!("should be {want}"))
            .help(format!(
                "write `{}` as {want}; `kubectl explain` shows the field",
                e.key.value
            )),
        );
    }

    /// A mapping field: `None` when absent or null (or wrong, which is reported).
    pub(crate) fn map<'a>(&mut self, parent: Option<&'a Node>, key: &str) -> Option<&'a Node> {
        let e = entry(parent?, key)?;
        match &e.node.value {
            Value::Map(_) => Some(&e.node),
            _ if is_null(&e.node) => None,
            _ => {
                self.wrong(e, "a mapping");
                None
            }
        }
    }

    /// A sequence field's items.
    pub(crate) fn seq<'a>(&mut self, parent: Option<&'a Node>, key: &str) -> Option<&'a [Node]> {
        let e = entry(parent?, key)?;
        match &e.node.value {
            Value::Seq(items) => Some(items),
            _ if is_null(&e.node) => None,
            _ => {
                self.wrong(e, "a list");
                None
            }
        }
    }

    /// A string field.
    pub(crate) fn string<'a>(&mut self, parent: Option<&'a Node>, key: &str) -> Option<&'a Entry> {
        let e = entry(parent?, key)?;
        match &e.node.value {
            Value::Scalar(Scalar::Str(_)) => Some(e),
            _ if is_null(&e.node) => None,
            _ => {
                self.wrong(e, "a string");
                None
            }
        }
    }

    /// Items of a list that must be mappings (reported otherwise, and skipped).
    pub(crate) fn maps<'a>(&mut self, items: Option<&'a [Node]>, what: &str) -> Vec<&'a Node> {
        let mut out = Vec::new();
        for item in items.unwrap_or(&[]) {
            if matches!(item.value, Value::Map(_)) {
                out.push(item);
            } else {
                self.problems.push(
                    Problem::new(
                        Code::LintShape,
                        format!(
                            "an item of `{what}` in {} is {}, not a mapping",
                            self.owner,
                            item.value.type_name()
                        ),
                    )
                    .at(item.origin, "should be a mapping")
                    .help(format!(
                        "each item of `{what}` is a mapping; `kubectl explain` shows its fields"
                    )),
                );
            }
        }
        out
    }
}

/// Check every field roce reads or writes in `template` and select its container: the one named
/// `container`, else the first. A launcher without the named container uses its first.
///
/// # Errors
///
/// Every `roce::lint::shape` problem, and `roce::lint::no_container` when there is no container to use.
pub fn view<'a>(
    doc: &'a Node,
    template: &Template,
    container: Option<&str>,
) -> Result<PodView<'a>, Vec<Problem>> {
    let mut problems = Vec::new();
    let root = at(doc, &template.path);
    let mut s = Shapes {
        problems: &mut problems,
        owner: format!("the {}", template.label),
    };
    let mut v = PodView {
        root,
        form: template.form,
        role: template.role,
        metadata: None,
        annotations: None,
        multus: None,
        spec: None,
        container: None,
        containers_at: None,
        added: template.added,
    };
    if template.form == Form::Trainer {
        check_container(&mut s, root, true);
        v.container = root.map(|r| (0, r));
        return checked(v, problems);
    }
    pod_fields(&mut s, &mut v);
    // A kind that keeps its one container outside the pod spec (a NodeSet's `spec.slurmd`).
    if let Some(path) = &template.container {
        let c = at(doc, path).filter(|c| matches!(c.value, Value::Map(_)));
        v.containers_at = key_at(doc, path);
        match c {
            Some(c) => {
                check_container(&mut s, Some(c), false);
                v.container = Some((0, c));
            }
            None => {
                let at = v
                    .containers_at
                    .or(root.map(|r| r.origin))
                    .unwrap_or(doc.origin);
                s.problems.push(no_container(template, None, &[], at));
            }
        }
        return checked(v, problems);
    }
    let containers =
        v.spec
            .and_then(|sp| entry(sp, "containers"))
            .and_then(|e| match &e.node.value {
                Value::Seq(items) => Some(items.as_slice()),
                _ => None,
            });
    let list = s.maps(containers, "containers");
    // A pod spec of an inference CRD that keeps its one container under a key of its own.
    if template.form == Form::Spec
        && containers.is_none()
        && let Some((key, c)) = v.spec.and_then(super::templates::main_container)
    {
        check_container(&mut s, Some(c), false);
        v.container = Some((0, c));
        v.containers_at = v.spec.and_then(|sp| entry(sp, key)).map(|e| e.key.origin);
        return checked(v, problems);
    }
    let chosen = choose(containers.unwrap_or(&[]), container, template.role);
    let containers_wrong = v
        .spec
        .and_then(|sp| entry(sp, "containers"))
        .is_some_and(|e| !matches!(e.node.value, Value::Seq(_) | Value::Scalar(Scalar::Null)));
    match chosen {
        _ if containers_wrong => {}
        Some((i, c)) => {
            check_container(&mut s, Some(c), false);
            v.container = Some((i, c));
        }
        None => {
            let at = v
                .containers_at
                .or(v.spec.map(|sp| sp.origin))
                .or(root.map(|r| r.origin))
                .unwrap_or(doc.origin);
            s.problems
                .push(no_container(template, container, &list, at));
        }
    }
    checked(v, problems)
}

/// Where the last key of `path` is written, if it is.
fn key_at(doc: &Node, path: &[Step]) -> Option<Origin> {
    let (Step::Key(last), parent) = path.split_last()? else {
        return None;
    };
    entry(at(doc, parent)?, last).map(|e| e.key.origin)
}

/// The view, unless a field had the wrong shape.
fn checked(v: PodView<'_>, problems: Vec<Problem>) -> Result<PodView<'_>, Vec<Problem>> {
    if problems.is_empty() {
        Ok(v)
    } else {
        Err(problems)
    }
}

/// The pod-level fields roce reads or writes, checked for shape; a bare PodSpec has no metadata of its
/// own.
fn pod_fields(s: &mut Shapes<'_>, v: &mut PodView<'_>) {
    let root = v.root;
    if v.form == Form::Spec {
        v.spec = root.filter(|r| matches!(r.value, Value::Map(_)));
        // A kind that keeps the pod's annotations beside its pod-spec fields (a NIMService's
        // `spec.annotations`, OME's engine configs); a PodSpec has no such field.
        v.annotations = s.map(v.spec, "annotations");
        v.multus = s.string(v.annotations, MULTUS_ANNOTATION);
    } else {
        v.metadata = s.map(root, "metadata");
        s.map(v.metadata, "labels");
        v.annotations = s.map(v.metadata, "annotations");
        v.multus = s.string(v.annotations, MULTUS_ANNOTATION);
        v.spec = s.map(root, "spec");
    }
    s.map(v.spec, "nodeSelector");
    let volumes = s.seq(v.spec, "volumes");
    s.maps(volumes, "volumes");
    // DRA: the pod's claims and the pod affinity they are placed by.
    let claims = s.seq(v.spec, "resourceClaims");
    for claim in s.maps(claims, "resourceClaims") {
        s.string(Some(claim), "name");
    }
    let affinity = s.map(v.spec, "affinity");
    let pod_affinity = s.map(affinity, "podAffinity");
    let terms = s.seq(
        pod_affinity,
        "requiredDuringSchedulingIgnoredDuringExecution",
    );
    s.maps(terms, "requiredDuringSchedulingIgnoredDuringExecution");
    s.seq(v.spec, "containers");
    v.containers_at = v
        .spec
        .and_then(|sp| entry(sp, "containers"))
        .map(|e| e.key.origin);
}

/// The container to wire: the one named `want`, else the first mapping (for a launcher, also when the
/// named one is not there: the launcher runs mpirun wherever).
fn choose<'a>(containers: &'a [Node], want: Option<&str>, role: Role) -> Option<(usize, &'a Node)> {
    let first = || {
        containers
            .iter()
            .enumerate()
            .find(|(_, c)| matches!(c.value, Value::Map(_)))
    };
    match want {
        Some(want) => containers
            .iter()
            .enumerate()
            .find(|(_, c)| text(c, "name") == Some(want))
            .or_else(|| (role == Role::Launcher).then(first).flatten()),
        None => first(),
    }
}

/// `roce::lint::no_container`: the named container is not there (with the ones that are, and the
/// closest name), or there is none at all.
fn no_container(
    template: &Template,
    container: Option<&str>,
    list: &[&Node],
    at: Origin,
) -> Problem {
    let names: Vec<String> = list
        .iter()
        .filter_map(|c| text(c, "name"))
        .map(|n| format!("`{n}`"))
        .collect();
    let (message, help) = match container {
        Some(want) if !names.is_empty() => (
            format!(
                "the {} has no container `{want}` (it has {})",
                template.label,
                names.join(", ")
            ),
            format!(
                "pass the container that runs the job with --container{}",
                roce_model::plumbing::suggest::closest(
                    want,
                    list.iter().filter_map(|c| text(c, "name"))
                )
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default()
            ),
        ),
        _ => (
            format!("the {} has no containers", template.label),
            "a pod template needs `spec.containers` with at least one container".to_string(),
        ),
    };
    Problem::new(Code::LintNoContainer, message)
        .at(at, "no container to wire")
        .help(help)
}

/// The fields of a container (or a TrainJob trainer) roce reads or writes.
fn check_container(s: &mut Shapes<'_>, c: Option<&Node>, trainer: bool) {
    let Some(c) = c else { return };
    let owner = std::mem::take(&mut s.owner);
    s.owner = match text(c, "name") {
        Some(n) if !trainer => format!("container `{n}` of {owner}"),
        _ => owner.clone(),
    };
    let env = s.seq(Some(c), "env");
    for item in s.maps(env, "env") {
        s.string(Some(item), "name");
    }
    let resources = s.map(
        Some(c),
        if trainer {
            "resourcesPerNode"
        } else {
            "resources"
        },
    );
    s.map(resources, "requests");
    s.map(resources, "limits");
    if !trainer {
        let claims = s.seq(resources, "claims");
        for claim in s.maps(claims, "resources.claims") {
            s.string(Some(claim), "name");
        }
        let sc = s.map(Some(c), "securityContext");
        let caps = s.map(sc, "capabilities");
        s.seq(caps, "add");
        let mounts = s.seq(Some(c), "volumeMounts");
        s.maps(mounts, "volumeMounts");
        s.seq(Some(c), "command");
        s.seq(Some(c), "args");
    }
    s.owner = owner;
}
