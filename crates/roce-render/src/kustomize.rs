//! `kustomize`: a Kustomize Component that wires the fabric into existing workloads.
//!
//! The output is a directory to list under `components:` in a kustomization. It never adds a
//! workload; it edits the pod template of each selected one (see `docs/targets.md`, section
//! `kustomize`, for the design, what `kubectl kustomize` does in each case, and the limits):
//!
//! * `wiring.yaml`: a local-config object (`config.kubernetes.io/local-config: "true"`, so kustomize
//!   drops it from the output) holding the container fragment and the Multus network list. It is the
//!   source every replacement copies from, and the readable summary of what gets added.
//! * `patch-<kind>.yaml`: one strategic-merge patch per workload kind for pod-level maps only
//!   (`nodeSelector`, the `/dev/shm` volume, the `roce.dev/profile` annotation).
//! * `replacements.yaml`: a `ReplacementTransformer` for everything inside the container (env merged
//!   by name, requests and limits, capabilities merged by value, the `/dev/shm` mount) and for the
//!   Multus annotation, which it *appends* to (`delimiter: ","`, an index past the end).
//! * `multus.yaml`: `ImageTagTransformer`s used as anchored-regex rewrites of the annotation: they
//!   drop the leading comma left when there was no annotation before, and replace an annotation that
//!   cannot be extended (JSON form, or already listing one of the profile's networks) with an
//!   explicit error value that Multus rejects with a readable message.
//!
//! Container fields go through replacements, not a strategic-merge patch, because such a patch would
//! replace `capabilities.add` (dropping the workload's own capabilities), move the patched container
//! to the front of the list (kubernetes-sigs/kustomize#5904), and silently add an image-less container
//! when the name does not match. Replacements keep the order, merge lists by key, and a first
//! replacement without `create` makes the build fail when a selected workload lacks the container.

use crate::plan::{MULTUS_ANNOTATION, Plan};
use crate::pod;
use crate::yaml::{self, Yaml};
use crate::{Artifact, PROFILE_ANNOTATION, RenderError, RenderOptions};

/// Which workloads a Component patches: by kind and name, or by label selector.
///
/// Fields combine with AND. A selector without `kind` stands for each of [`DEFAULT_KINDS`]. Names
/// match exactly; label selectors use Kubernetes syntax (`app=trainer,tier in (a,b)`). A workload
/// matched by two selectors would get the Multus networks twice, which the Component turns into a
/// loud failure (see `docs/targets.md`), so selectors must not overlap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// Workload kind (`Deployment`, `Job`, …).
    pub kind: Option<String>,
    /// Workload name.
    pub name: Option<String>,
    /// Label selector (`app=trainer`).
    pub label_selector: Option<String>,
}

/// The [`RenderOptions::container`] value that means "the first container of each workload"
/// (addressed by index, `containers.0`). Any other value names the container, and the build fails
/// for a selected workload that has no container of that name.
pub const FIRST_CONTAINER: &str = "";

/// Workload kinds patched when there is no selector (or a selector has no `kind`).
pub const DEFAULT_KINDS: &[&str] = &["Deployment", "StatefulSet", "DaemonSet", "Job"];

/// A workload kind whose pod template this target knows how to reach.
#[derive(Debug, PartialEq, Eq)]
struct Kind {
    name: &'static str,
    api_version: &'static str,
    /// Path from the object to its pod template (`metadata` + `spec`); empty for a Pod.
    template: &'static [&'static str],
}

/// Every kind a selector may name.
const KINDS: &[Kind] = &[
    Kind {
        name: "Deployment",
        api_version: "apps/v1",
        template: &["spec", "template"],
    },
    Kind {
        name: "StatefulSet",
        api_version: "apps/v1",
        template: &["spec", "template"],
    },
    Kind {
        name: "DaemonSet",
        api_version: "apps/v1",
        template: &["spec", "template"],
    },
    Kind {
        name: "ReplicaSet",
        api_version: "apps/v1",
        template: &["spec", "template"],
    },
    Kind {
        name: "Job",
        api_version: "batch/v1",
        template: &["spec", "template"],
    },
    Kind {
        name: "CronJob",
        api_version: "batch/v1",
        template: &["spec", "jobTemplate", "spec", "template"],
    },
    Kind {
        name: "Pod",
        api_version: "v1",
        template: &[],
    },
];

impl Kind {
    fn find(name: &str) -> Option<&'static Kind> {
        KINDS.iter().find(|k| k.name.eq_ignore_ascii_case(name))
    }

    /// A replacement field path below the pod template (`spec.template.` + `rest`).
    fn path(&self, rest: &str) -> String {
        let mut parts: Vec<&str> = self.template.to_vec();
        parts.push(rest);
        parts.join(".")
    }

    /// A field-spec path (slash separated) below the pod template.
    fn spec_path(&self, rest: &str) -> String {
        let mut parts: Vec<&str> = self.template.to_vec();
        parts.push(rest);
        parts.join("/")
    }

    fn file_name(&self) -> String {
        format!("patch-{}.yaml", self.name.to_ascii_lowercase())
    }
}

/// One resolved selector: a kind and optional name and label selector.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    kind: &'static Kind,
    name: Option<String>,
    label_selector: Option<String>,
}

impl Target {
    /// `select:` of a replacement target (names match exactly).
    fn select(&self) -> Yaml {
        let mut s = Yaml::map().with("kind", self.kind.name);
        if let Some(n) = &self.name {
            s.insert("name", n.as_str());
        }
        if let Some(l) = &self.label_selector {
            s.insert("labelSelector", l.as_str());
        }
        s
    }

    /// `target:` of a patch. Kustomize reads a patch target's name as an anchored regular
    /// expression, so the name is escaped to match exactly, like the replacements.
    fn patch_target(&self) -> Yaml {
        let mut s = Yaml::map().with("kind", self.kind.name);
        if let Some(n) = &self.name {
            s.insert("name", regex_escape(n));
        }
        if let Some(l) = &self.label_selector {
            s.insert("labelSelector", l.as_str());
        }
        s
    }
}

/// The kustomize `index` for "past the end": with `delimiter`, the value is appended as a new item.
const APPEND_INDEX: i64 = i32::MAX as i64;

/// Local-config annotation: kustomize drops the object from the build output.
const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// Group/version and kind of the local-config source object.
const WIRING_API_VERSION: &str = "roce.dev/v1alpha1";
const WIRING_KIND: &str = "Wiring";

/// The error value written instead of a JSON-form Multus annotation (`name:tag` after the rewrite).
pub const JSON_FORM_ERROR: &str = "ROCE-ERROR-cannot-append-to-a-JSON-form-networks-annotation:write-it-in-comma-form-ns-name-at-ifname";
/// The error value written instead of an annotation that already lists one of the profile's networks.
pub const DUPLICATE_ERROR: &str = "ROCE-ERROR-networks-annotation-already-lists-a-roce-network:remove-it-or-apply-the-component-once";

/// Render the Component: `kustomization.yaml` first, then the files it references.
pub fn render(plan: &Plan, opts: &RenderOptions) -> Result<Vec<Artifact>, RenderError> {
    let name = opts.name.clone().unwrap_or_else(|| plan.short_name());
    if !is_dns_subdomain(&name) {
        return Err(bad_option(
            "name",
            &name,
            "names the Component's objects, so it must be a DNS subdomain (lowercase letters, digits, '-', '.')",
        ));
    }
    let container = ContainerRef::new(&opts.container)?;
    let targets = resolve(&opts.select)?;
    let networks = multus_value(plan)?;
    check_keys(plan)?;

    let mut kinds: Vec<&'static Kind> = Vec::new();
    for t in &targets {
        if !kinds.iter().any(|k| k.name == t.kind.name) {
            kinds.push(t.kind);
        }
    }

    let mut files = Vec::new();
    files.push(Artifact {
        path: "kustomization.yaml".to_string(),
        contents: kustomization(plan, &targets, &kinds, networks.is_some(), &container),
    });
    files.push(Artifact {
        path: "wiring.yaml".to_string(),
        contents: wiring(plan, &name, &container, networks.as_deref()),
    });
    for k in &kinds {
        files.push(Artifact {
            path: k.file_name(),
            contents: patch(plan, &name, k),
        });
    }
    files.push(Artifact {
        path: "replacements.yaml".to_string(),
        contents: replacements(plan, &name, &container, &targets, networks.is_some()),
    });
    if let Some(value) = &networks {
        files.push(Artifact {
            path: "multus.yaml".to_string(),
            contents: multus_fixups(plan, &name, &kinds, value, plan_items(plan)),
        });
    }
    Ok(files)
}

/// The container a Component edits: by name, or the first one.
#[derive(Debug)]
enum ContainerRef {
    Named(String),
    First,
}

impl ContainerRef {
    fn new(container: &str) -> Result<Self, RenderError> {
        if container == FIRST_CONTAINER {
            return Ok(ContainerRef::First);
        }
        if !is_dns_label(container) {
            return Err(bad_option(
                "container",
                container,
                "a container name is a DNS label (lowercase letters, digits, '-'); leave it empty to patch the first container",
            ));
        }
        Ok(ContainerRef::Named(container.to_string()))
    }

    /// Field path of the container, relative to the pod spec.
    fn path(&self) -> String {
        match self {
            ContainerRef::Named(n) => format!("containers.[name={n}]"),
            ContainerRef::First => "containers.0".to_string(),
        }
    }

    fn describe(&self) -> String {
        match self {
            ContainerRef::Named(n) => format!("the container named `{n}`"),
            ContainerRef::First => "the first container".to_string(),
        }
    }
}

/// Expand selectors to (kind, name, labels) targets; no selector means every default kind.
fn resolve(select: &[Selector]) -> Result<Vec<Target>, RenderError> {
    let defaults = || DEFAULT_KINDS.iter().filter_map(|k| Kind::find(k));
    if select.is_empty() {
        return Ok(defaults()
            .map(|kind| Target {
                kind,
                name: None,
                label_selector: None,
            })
            .collect());
    }
    let mut out: Vec<Target> = Vec::new();
    for s in select {
        if let Some(n) = &s.name
            && !is_dns_subdomain(n)
        {
            return Err(bad_option(
                "select",
                n,
                "a workload name is a DNS subdomain (lowercase letters, digits, '-', '.')",
            ));
        }
        if let Some(l) = &s.label_selector
            && (l.trim().is_empty() || l.chars().any(char::is_control))
        {
            return Err(bad_option(
                "select",
                l,
                "a label selector is one line of Kubernetes selector syntax (`app=trainer`)",
            ));
        }
        let kinds: Vec<&'static Kind> = match &s.kind {
            Some(k) => vec![Kind::find(k).ok_or_else(|| {
                bad_option(
                    "select",
                    k,
                    &format!(
                        "the kustomize target knows the pod template of {} only",
                        KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?],
            None => defaults().collect(),
        };
        for kind in kinds {
            let t = Target {
                kind,
                name: s.name.clone(),
                label_selector: s.label_selector.clone(),
            };
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// The Multus items (`namespace/name`) of the plan, in rail order.
fn plan_items(plan: &Plan) -> Vec<String> {
    plan.wiring
        .iter()
        .flat_map(|w| &w.networks)
        .map(|n| n.to_string())
        .collect()
}

/// The comma-form Multus value to append, when the plan attaches networks. Multus's comma form takes
/// `namespace/name` items whose parts are DNS labels; anything else needs the JSON form, which
/// kustomize cannot merge.
fn multus_value(plan: &Plan) -> Result<Option<String>, RenderError> {
    let Some(w) = &plan.wiring else {
        return Ok(None);
    };
    for n in &w.networks {
        let ok = is_dns_label(n.name());
        if !ok {
            return Err(RenderError::Unrepresentable {
                name: MULTUS_ANNOTATION.to_string(),
                value: format!("{}/{}", n.namespace(), n.name()),
                why: "the kustomize target appends Multus networks in comma form, whose namespace and name must be DNS labels".to_string(),
                origin: None,
            });
        }
    }
    let items = plan_items(plan);
    Ok((!items.is_empty()).then(|| items.join(",")))
}

/// Names that end up inside `[key=value]` field paths must not carry path syntax.
fn check_keys(plan: &Plan) -> Result<(), RenderError> {
    let unrepresentable =
        |name: &str, value: &str, why: &str, origin| RenderError::Unrepresentable {
            name: name.to_string(),
            value: value.to_string(),
            why: why.to_string(),
            origin,
        };
    for e in &plan.env {
        let mut chars = e.name.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '-' || c == '.');
        if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return Err(unrepresentable(
                &e.name,
                &e.value,
                "the kustomize target merges env by name and needs a name made of letters, digits, '_', '-' and '.'",
                e.origin,
            ));
        }
    }
    for (k, v) in plan.resources() {
        if k.is_empty() || k.chars().any(|c| "[]=".contains(c) || c.is_whitespace()) {
            return Err(unrepresentable(&k, &v, "not a resource name", None));
        }
    }
    if let Some(w) = &plan.wiring {
        for c in &w.capabilities {
            if c.is_empty()
                || !c
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(unrepresentable(c, c, "not a Linux capability name", None));
            }
        }
    }
    Ok(())
}

fn kustomization(
    plan: &Plan,
    targets: &[Target],
    kinds: &[&Kind],
    multus: bool,
    container: &ContainerRef,
) -> String {
    let patches: Vec<Yaml> = targets
        .iter()
        .map(|t| {
            Yaml::map()
                .with("path", t.kind.file_name())
                .with("target", t.patch_target())
        })
        .collect();
    let mut transformers = Yaml::seq().item("replacements.yaml");
    if multus {
        transformers = transformers.item("multus.yaml");
    }
    let doc = Yaml::map()
        .with("apiVersion", "kustomize.config.k8s.io/v1alpha1")
        .with("kind", "Component")
        .with("resources", Yaml::seq().item("wiring.yaml"))
        .with("patches", patches)
        .with("transformers", transformers);
    let kinds: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    let mut out = crate::header("#", plan);
    let mut edits = vec![
        "env merged by name (the profile's value wins)",
        "requests and limits",
    ];
    if plan
        .wiring
        .as_ref()
        .is_some_and(|w| !w.capabilities.is_empty())
    {
        edits.push("capabilities");
    }
    if plan.shm {
        edits.push("a memory-backed /dev/shm");
    }
    let mut pod_edits = Vec::new();
    if !plan.node_selector.is_empty() {
        pod_edits.push("nodeSelector");
    }
    if multus {
        pod_edits.push("the Multus networks appended to k8s.v1.cni.cncf.io/networks (comma form)");
    }
    pod_edits.push("a roce.dev/profile annotation");
    out.push_str(&format!(
        "#\n\
         # A Kustomize Component: list this directory under `components:` in a kustomization.\n\
         # For each workload picked under `patches:` ({}):\n\
         # - {}: {};\n\
         # - its pod template: {}.\n\
         # wiring.yaml lists the values. Design and limits: docs/targets.md, section kustomize.\n",
        kinds.join(", "),
        container.describe(),
        edits.join(", "),
        pod_edits.join(", "),
    ));
    out.push_str(&yaml::to_string(&doc));
    out
}

/// The local-config source object: everything the replacements copy, in one readable place.
fn wiring(plan: &Plan, name: &str, container: &ContainerRef, networks: Option<&str>) -> String {
    let mut c = Yaml::map();
    if let ContainerRef::Named(n) = container {
        c.insert("name", n.as_str());
    }
    c.insert("env", pod::env_list(plan));
    c.insert("resources", pod::resources(plan));
    if let Some(caps) = pod::capabilities(plan) {
        c.insert("securityContext", caps);
    }
    if plan.shm {
        c.insert("volumeMounts", vec![pod::shm_mount()]);
    }
    let mut spec = Yaml::map();
    if let Some(n) = networks {
        spec.insert("networks", n);
    }
    spec.insert("container", c);
    let doc = Yaml::map()
        .with("apiVersion", WIRING_API_VERSION)
        .with("kind", WIRING_KIND)
        .with(
            "metadata",
            Yaml::map().with("name", name).with(
                "annotations",
                Yaml::map()
                    .with(LOCAL_CONFIG, "true")
                    .with(PROFILE_ANNOTATION, plan.profile.as_str()),
            ),
        )
        .with("spec", spec);
    let mut out = crate::header("#", plan);
    out.push_str(
        "#\n\
         # The values replacements.yaml copies into each selected workload. Local config: kustomize\n\
         # reads it and drops it from the build output.\n",
    );
    out.push_str(&yaml::to_string(&doc));
    out
}

/// Strategic-merge patch for the pod-level maps of one kind (no containers: see the module docs).
fn patch(plan: &Plan, name: &str, kind: &Kind) -> String {
    let mut spec = Yaml::map();
    if let Some(sel) = pod::node_selector(plan) {
        spec.insert("nodeSelector", sel);
    }
    if plan.shm {
        spec.insert("volumes", vec![pod::shm_volume()]);
    }
    let template = Yaml::map()
        .with(
            "metadata",
            Yaml::map().with(
                "annotations",
                Yaml::map().with(PROFILE_ANNOTATION, plan.profile.as_str()),
            ),
        )
        .with("spec", spec);
    // Nest the template under its path; a Pod is its own template.
    let mut body = template;
    for key in kind.template.iter().rev() {
        body = Yaml::map().with(key, body);
    }
    let mut doc = Yaml::map()
        .with("apiVersion", kind.api_version)
        .with("kind", kind.name)
        .with("metadata", Yaml::map().with("name", name));
    if let Yaml::Map(entries) = body {
        for (k, v) in entries {
            if k == "metadata" {
                // Pod: merge the annotations into the patch's own metadata.
                let mut meta = Yaml::map().with("name", name);
                if let Some(a) = v.get("annotations") {
                    meta.insert("annotations", a.clone());
                }
                doc.insert("metadata", meta);
            } else {
                doc.insert(&k, v);
            }
        }
    }
    let mut out = crate::header("#", plan);
    out.push_str(&format!(
        "#\n# Pod-level maps for each selected {}; the patch's own name is ignored (kustomization.yaml\n\
         # picks the targets).\n",
        kind.name
    ));
    out.push_str(&yaml::to_string(&doc));
    out
}

/// The ReplacementTransformer: container fields and the Multus append.
fn replacements(
    plan: &Plan,
    name: &str,
    container: &ContainerRef,
    targets: &[Target],
    multus: bool,
) -> String {
    let cpath = container.path();
    let source = |field: &str| {
        Yaml::map()
            .with("kind", WIRING_KIND)
            .with("name", name)
            .with("fieldPath", field)
    };
    // One replacement: `from` (a field of the source object) to `to` (fields below the pod template
    // of every target).
    let replacement = |from: &str, to: &[String], options: Option<Yaml>| {
        let targets: Vec<Yaml> = targets
            .iter()
            .map(|t| {
                let paths: Vec<Yaml> = to.iter().map(|p| Yaml::from(t.kind.path(p))).collect();
                let mut y = Yaml::map()
                    .with("select", t.select())
                    .with("fieldPaths", paths);
                if let Some(o) = &options {
                    y.insert("options", o.clone());
                }
                y
            })
            .collect();
        Yaml::map()
            .with("source", source(from))
            .with("targets", targets)
    };
    let create = || Some(Yaml::map().with("create", true));

    let mut list = Vec::new();
    if matches!(container, ContainerRef::Named(_)) {
        // The guard: no `create`, so a selected workload without the container fails the build
        // ("unable to find field ... in replacement target") before anything could add one.
        list.push(replacement(
            "spec.container.name",
            &[format!("spec.{cpath}.name")],
            None,
        ));
    }
    for e in &plan.env {
        let key = format!("env.[name={}]", e.name);
        list.push(replacement(
            &format!("spec.container.{key}"),
            &[format!("spec.{cpath}.{key}")],
            create(),
        ));
    }
    for (k, _) in plan.resources() {
        let k = map_key(&k);
        list.push(replacement(
            &format!("spec.container.resources.requests.{k}"),
            &[
                format!("spec.{cpath}.resources.requests.{k}"),
                format!("spec.{cpath}.resources.limits.{k}"),
            ],
            create(),
        ));
    }
    for (i, cap) in plan.wiring.iter().flat_map(|w| &w.capabilities).enumerate() {
        // A source path cannot select a list item by value (`[=X]`), only the target can.
        let add = "securityContext.capabilities.add";
        list.push(replacement(
            &format!("spec.container.{add}.{i}"),
            &[format!("spec.{cpath}.{add}.[={cap}]")],
            create(),
        ));
    }
    if plan.shm {
        let key = "volumeMounts.[mountPath=/dev/shm]";
        list.push(replacement(
            &format!("spec.container.{key}"),
            &[format!("spec.{cpath}.{key}")],
            create(),
        ));
    }
    if multus {
        list.push(replacement(
            "spec.networks",
            &[format!(
                "metadata.annotations.{}",
                map_key(MULTUS_ANNOTATION)
            )],
            Some(
                Yaml::map()
                    .with("delimiter", ",")
                    .with("index", APPEND_INDEX)
                    .with("create", true),
            ),
        ));
    }
    let doc = Yaml::map()
        .with("apiVersion", "builtin")
        .with("kind", "ReplacementTransformer")
        .with("metadata", Yaml::map().with("name", name))
        .with("replacements", list);
    let mut out = crate::header("#", plan);
    out.push_str(&format!(
        "#\n\
         # Copies wiring.yaml into {} of each selected workload.{}\n\
         # `create: true` adds what is missing; list entries are matched by env name, capability and\n\
         # mountPath, so nothing is duplicated and the container order is kept.{}\n",
        container.describe(),
        if matches!(container, ContainerRef::Named(_)) {
            "\n# The first replacement has no `create`: it fails the build for a workload without that container."
        } else {
            ""
        },
        if multus {
            "\n# The last one appends the networks to the Multus annotation (delimiter \",\", index past the\n\
             # end); multus.yaml then cleans up the no-annotation case."
        } else {
            ""
        }
    ));
    out.push_str(&yaml::to_string(&doc));
    out
}

/// Anchored-regex rewrites of the Multus annotation, run after the append.
///
/// Kustomize's `ImageTagTransformer` rewrites a field only when the field matches
/// `^<name>(:tag)?(@sha256:digest)?$` (a regular expression built from `name`), and then replaces
/// the part before any `:`/`@` tag with `newName` (and the tag with `newTag`). Our values have no
/// `:` or `@` after their first `/`, so the whole value is replaced.
fn multus_fixups(
    plan: &Plan,
    name: &str,
    kinds: &[&Kind],
    ours: &str,
    items: Vec<String>,
) -> String {
    let field_specs: Vec<Yaml> = kinds
        .iter()
        .map(|k| {
            Yaml::map().with("kind", k.name).with(
                "path",
                k.spec_path(&format!(
                    "metadata/annotations/{}",
                    MULTUS_ANNOTATION.replace('/', "\\/")
                )),
            )
        })
        .collect();
    let transformer = |suffix: &str, image_tag: Yaml| {
        Yaml::map()
            .with("apiVersion", "builtin")
            .with("kind", "ImageTagTransformer")
            .with(
                "metadata",
                Yaml::map().with("name", format!("{name}-multus-{suffix}")),
            )
            .with("imageTag", image_tag)
            .with("fieldSpecs", field_specs.clone())
    };
    let split = |error: &str| {
        let (n, t) = error.split_once(':').expect("error values are name:tag");
        (n.to_string(), t.to_string())
    };
    let escaped = regex_escape(ours);
    // 1. No annotation before: the append created "" and produced ",<ours>". The name is the literal
    //    value (regex metacharacters in it are only '.', which also matches itself, so this works
    //    whether or not kustomize escapes the name).
    let absent = transformer(
        "no-annotation",
        Yaml::map()
            .with("name", format!(",{ours}"))
            .with("newName", ours),
    );
    // 2. JSON form: Multus reads the value as JSON when it contains any of `[`, `{` or `"`; text
    //    appended after the closing `]` breaks it. Only values that end with what we appended match,
    //    so workloads this Component did not touch are left alone.
    let (json_name, json_tag) = split(JSON_FORM_ERROR);
    let json = transformer(
        "json-form",
        Yaml::map()
            .with("name", format!("(?s).*[\\[{{\"].*,{escaped}"))
            .with("newName", json_name)
            .with("newTag", json_tag),
    );
    // 3. Already listing one of our networks (`ns/name`, optionally `@ifname`) before the appended
    //    list: the pod would get that network twice (e.g. the Component applied twice).
    let alternatives = items
        .iter()
        .map(|i| regex_escape(i))
        .collect::<Vec<_>>()
        .join("|");
    let (dup_name, dup_tag) = split(DUPLICATE_ERROR);
    let dup = transformer(
        "duplicate",
        Yaml::map()
            .with(
                "name",
                format!("(?s)(?:.*,)?\\s*(?:{alternatives})\\s*(?:@[^,]*)?\\s*,(?:.*,)?{escaped}"),
            )
            .with("newName", dup_name)
            .with("newTag", dup_tag),
    );
    let mut out = crate::header("#", plan);
    out.push_str(
        "#\n\
         # Rewrites of the Multus annotation after replacements.yaml appended to it. An\n\
         # ImageTagTransformer rewrites a field only when it matches `^<name>...$` as a regular\n\
         # expression, which makes these conditional:\n\
         # 1. the annotation was absent (or empty): \",<networks>\" becomes \"<networks>\";\n\
         # 2. it was in JSON form, which text cannot be appended to: replaced by an error value that\n\
         #    Multus rejects, naming the problem (pods fail to start instead of losing the rails);\n\
         # 3. it already listed one of these networks: replaced by an error value likewise.\n",
    );
    out.push_str(&yaml::to_multi_doc(&[absent, json, dup]));
    out
}

fn bad_option(option: &str, value: &str, why: &str) -> RenderError {
    RenderError::Option {
        option: option.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

/// RFC 1123 label: what Kubernetes and Multus accept for container, namespace and NAD names.
fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// RFC 1123 subdomain: what Kubernetes accepts for most object names.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// A map key as one element of a kustomize field path. Kustomize splits paths on `.` except inside
/// `[...]`, but keeps the brackets (and then reads `[...]` as a list-item matcher) when the key has
/// no `.`; so bracket exactly the keys that contain a dot (`[nvidia.com/gpu]`, `rdma/ib`).
fn map_key(key: &str) -> String {
    if key.contains('.') {
        format!("[{key}]")
    } else {
        key.to_string()
    }
}

/// Escape RE2 metacharacters so `s` matches itself literally.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_escape_escapes_metacharacters() {
        assert_eq!(regex_escape("a.b/c-d"), "a\\.b/c-d");
        assert_eq!(regex_escape("(x)|[y]*"), "\\(x\\)\\|\\[y\\]\\*");
    }

    #[test]
    fn map_keys_are_bracketed_only_with_a_dot() {
        assert_eq!(map_key("nvidia.com/gpu"), "[nvidia.com/gpu]");
        assert_eq!(map_key("rdma/ib"), "rdma/ib");
    }

    #[test]
    fn dns_names() {
        assert!(is_dns_label("main"));
        assert!(is_dns_label("a-1"));
        assert!(!is_dns_label("Main"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label(""));
        assert!(is_dns_subdomain("a.b-c"));
        assert!(!is_dns_subdomain("a..b"));
    }

    #[test]
    fn selectors_expand_and_validate() {
        let all = resolve(&[]).unwrap();
        let kinds: Vec<&str> = all.iter().map(|t| t.kind.name).collect();
        assert_eq!(kinds, DEFAULT_KINDS);

        let by_label = resolve(&[Selector {
            label_selector: Some("app=x".into()),
            ..Selector::default()
        }])
        .unwrap();
        assert_eq!(by_label.len(), DEFAULT_KINDS.len());
        assert!(
            by_label
                .iter()
                .all(|t| t.label_selector.as_deref() == Some("app=x"))
        );

        let twice = Selector {
            kind: Some("cronjob".into()),
            name: Some("a".into()),
            label_selector: None,
        };
        let one = resolve(&[twice.clone(), twice]).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].kind.name, "CronJob");

        let bad = |s: Selector| matches!(resolve(&[s]), Err(RenderError::Option { .. }));
        assert!(bad(Selector {
            kind: Some("MPIJob".into()),
            ..Selector::default()
        }));
        assert!(bad(Selector {
            name: Some("Not_A_Name".into()),
            ..Selector::default()
        }));
        assert!(bad(Selector {
            label_selector: Some(" ".into()),
            ..Selector::default()
        }));
    }

    #[test]
    fn container_names() {
        assert!(matches!(ContainerRef::new(""), Ok(ContainerRef::First)));
        assert!(matches!(
            ContainerRef::new("main"),
            Ok(ContainerRef::Named(_))
        ));
        assert!(ContainerRef::new("a]b").is_err());
        assert_eq!(ContainerRef::new("").unwrap().path(), "containers.0");
        assert_eq!(
            ContainerRef::new("main").unwrap().path(),
            "containers.[name=main]"
        );
    }

    #[test]
    fn paths_follow_the_pod_template() {
        let cron = Kind::find("CronJob").unwrap();
        assert_eq!(
            cron.path("metadata.annotations.[x]"),
            "spec.jobTemplate.spec.template.metadata.annotations.[x]"
        );
        assert_eq!(
            Kind::find("pod").unwrap().path("spec.containers.0"),
            "spec.containers.0"
        );
        assert_eq!(
            Kind::find("Job").unwrap().spec_path("metadata/annotations"),
            "spec/template/metadata/annotations"
        );
    }
}
