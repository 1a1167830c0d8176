//! `kustomize`: a Kustomize Component that wires the fabric into existing workloads.
//!
//! The output is a directory to list under `components:` in a kustomization. It never adds a
//! workload; it edits the pod template of each selected one (`docs/targets.md`, section
//! `kustomize`, has the design, what `kubectl kustomize` does in each case, and the limits):
//!
//! * `kustomization.yaml`: the Component; its one transformers file runs in order.
//! * `wiring.yaml`: a local-config object (kustomize drops it from the output) holding the values
//!   the replacements copy: the container name, the capabilities, the Multus network list.
//! * `patch-<shape>.yaml`: a strategic-merge patch keyed on the container name: env (by name),
//!   requests and limits, the `/dev/shm` mount (by `mountPath`) and volume (by name), `nodeSelector`
//!   and the `roce.dev/profile` annotation. One per pod-template shape (`spec.template`, CronJob, Pod).
//! * `dra.yaml`, when the plan has DRA claims: the objects they name (ComputeDomain,
//!   ResourceClaimTemplate), a resource of the Component. The patches add the pod's `resourceClaims`
//!   (merged by name), the container's `resources.claims`, the NVLink-domain affinity and its label;
//!   strategic merge replaces those two lists, which `docs/targets.md` says and `roce apply` avoids.
//! * `transformers.yaml`: in order, a replacement that fails the build for a selected workload
//!   without the container (before the patch could add an image-less one) and adds the capabilities
//!   (a list a patch would replace); the patches; with `exec`, a JSON patch that inserts the
//!   `roce exec` prefix in front of the container's `command`; and, when the profile attaches
//!   networks, the append to the Multus annotation (`steps.rs` says how).

mod select;
mod steps;

use crate::dra;
use crate::edits::{self, Edit, Skeleton};
use crate::exec::ExecWrap;
use crate::plan::{MULTUS_ANNOTATION, Plan};
use crate::yaml::{self, Yaml};
use crate::{Artifact, RenderError, RenderOptions};
use roce_model::fabric::env::POD_DEPENDENT;
use roce_model::names::Capability;
use select::{Group, Shape, Target};

/// Which workloads a Component patches: by kind and name, or by label selector.
///
/// Fields combine with AND. A selector without `kind` stands for each of [`DEFAULT_KINDS`]. Names
/// match exactly; label selectors use Kubernetes syntax (`app=trainer,tier in (a,b)`). Selectors may
/// overlap: a workload two of them pick is wired once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// Workload kind (`Deployment`, `Job`, …).
    pub kind: Option<String>,
    /// Workload name.
    pub name: Option<String>,
    /// Label selector (`app=trainer`).
    pub label_selector: Option<String>,
}

/// Workload kinds patched when there is no selector (or a selector has no `kind`).
pub const DEFAULT_KINDS: &[&str] = &["Deployment", "StatefulSet", "DaemonSet", "Job"];

/// Local-config annotation: kustomize drops the object from the build output.
const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// Group/version and kind of the local-config source object.
const WIRING_API_VERSION: &str = "roce.dev/v1alpha1";
const WIRING_KIND: &str = "Wiring";

/// What every step needs: the Component's name, the container, the selection.
struct Ctx<'a> {
    plan: &'a Plan,
    name: String,
    container: String,
    targets: Vec<Target>,
    groups: Vec<Group>,
    /// The pod-template shapes of the selection, each once: one patch file each.
    shapes: Vec<Shape>,
    /// The comma-form network list, when the profile attaches networks.
    networks: Option<String>,
    /// Start the container's job behind `roce exec`.
    exec: Option<&'a ExecWrap>,
}

/// Render the Component: `kustomization.yaml` first, then the files it references.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::{kustomize, plan, RenderOptions};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let files = kustomize::render(&plan::lower(&profile), &RenderOptions::default()).unwrap();
/// assert_eq!(files[0].path, "kustomization.yaml");
/// ```
pub fn render(plan: &Plan, opts: &RenderOptions) -> Result<Vec<Artifact>, RenderError> {
    let name = opts.name.clone().unwrap_or_else(|| plan.short_name());
    if !roce_model::names::is_dns_subdomain(&name) {
        return Err(RenderError::option(
            "name",
            &name,
            "names the Component's objects, so it must be a DNS subdomain (lowercase letters, digits, '-', '.')",
        ));
    }
    if !roce_model::names::is_dns_label(&opts.container) {
        return Err(RenderError::option(
            "container",
            &opts.container,
            "the Component patches one container by name (a DNS label: lowercase letters, digits, '-'); the default is `main`",
        ));
    }
    let targets = select::resolve(&opts.select)?;
    let groups = select::groups(&targets);
    let mut shapes: Vec<Shape> = Vec::new();
    for g in &groups {
        if !shapes.contains(&g.shape) {
            shapes.push(g.shape);
        }
    }
    let ctx = Ctx {
        plan,
        name,
        container: opts.container.clone(),
        targets,
        groups,
        shapes,
        networks: multus_value(plan)?,
        exec: opts.exec.as_ref(),
    };

    let mut files = vec![
        artifact("kustomization.yaml", kustomization(&ctx)),
        artifact("wiring.yaml", wiring(&ctx)),
    ];
    if let Some(objects) = dra_objects(plan) {
        files.push(artifact(DRA_FILE, objects));
    }
    for &shape in &ctx.shapes {
        files.push(artifact(shape.patch().0, patch(&ctx, shape)));
    }
    files.push(artifact("transformers.yaml", steps::transformers(&ctx)));
    Ok(files)
}

fn artifact(path: &str, contents: String) -> Artifact {
    Artifact {
        path: path.to_string(),
        contents,
    }
}

/// The comma-form Multus list to append, when the plan attaches networks. The comma form takes
/// `namespace/name` items whose parts are DNS labels; anything else needs the JSON form, which
/// kustomize cannot append to.
fn multus_value(plan: &Plan) -> Result<Option<String>, RenderError> {
    let Some(w) = &plan.wiring else {
        return Ok(None);
    };
    let mut items = Vec::new();
    for n in &w.networks {
        // The namespace is a DNS label by type; an object name may hold dots, which the comma form splits on.
        if !roce_model::names::is_dns_label(n.name()) {
            return Err(RenderError::Unrepresentable {
                name: MULTUS_ANNOTATION.to_string(),
                value: n.to_string(),
                why: "the kustomize target appends Multus networks in comma form, whose namespace and name must be DNS labels".to_string(),
                origin: None,
            });
        }
        items.push(n.to_string());
    }
    Ok((!items.is_empty()).then(|| items.join(",")))
}

/// The capabilities to add. They end up in a `[=NAME]` field-path matcher, which kustomize reads as a
/// regular expression; a [`Capability`] is upper case, digits and `_` only, so it matches itself.
fn capabilities(plan: &Plan) -> &[Capability] {
    plan.wiring.as_ref().map_or(&[], |w| &w.capabilities)
}

/// The required pod-affinity terms placement adds, each with its topology key (the key the `container` step
/// merges it by).
pub(crate) fn affinity_terms(plan: &Plan) -> Vec<(String, Yaml)> {
    plan.dra
        .affinity
        .iter()
        .map(|a| (a.topology_key().to_string(), a.term()))
        .collect()
}

/// The file with the objects the plan's DRA claims name.
const DRA_FILE: &str = "dra.yaml";

/// The ComputeDomain and ResourceClaimTemplates beside the workloads, when the plan claims anything.
fn dra_objects(plan: &Plan) -> Option<String> {
    let docs = dra::documents(plan);
    if docs.is_empty() {
        return None;
    }
    let mut out = crate::header("#", plan);
    out.push_str(
        "# The objects the pods' DRA claims name; the Component adds them to the build.\n",
    );
    out.push_str(&yaml::to_multi_doc(&docs));
    Some(out)
}

fn kustomization(ctx: &Ctx) -> String {
    let mut resources = Yaml::seq().item("wiring.yaml");
    if !ctx.plan.dra.documents.is_empty() {
        resources = resources.item(DRA_FILE);
    }
    let doc = Yaml::map()
        .with("apiVersion", "kustomize.config.k8s.io/v1alpha1")
        .with("kind", "Component")
        .with("resources", resources)
        .with("transformers", Yaml::seq().item("transformers.yaml"));
    let mut kinds: Vec<&str> = Vec::new();
    for t in &ctx.targets {
        if !kinds.contains(&t.kind.name) {
            kinds.push(t.kind.name);
        }
    }
    let mut out = crate::header("#", ctx.plan);
    out.push_str(&format!(
        "#\n\
         # A Kustomize Component: list this directory under `components:` in a kustomization.\n\
         # Wires the container `{c}` of each selected {kinds};\n\
         # the build fails for one without it (--container NAME picks another). docs/targets.md says more.\n",
        c = ctx.container,
        kinds = kinds.join(", "),
    ));
    if let Some(w) = ctx.exec {
        out.push_str(&format!(
            "# Its job starts behind `roce exec`; the build fails for one without a `command` (docs/exec.md):\n\
             #   command: {} <its command>\n",
            w.prefix().join(" ")
        ));
    }
    out.push_str(&yaml::to_string(&doc));
    out
}

/// The local-config source object: the values the replacements copy.
fn wiring(ctx: &Ctx) -> String {
    let mut spec = Yaml::map().with("container", ctx.container.as_str());
    let caps = capabilities(ctx.plan);
    if !caps.is_empty() {
        let list: Vec<Yaml> = caps.iter().map(|c| Yaml::from(c.as_str())).collect();
        spec.insert("capabilities", list);
    }
    if let Some(n) = &ctx.networks {
        spec.insert("networks", n.as_str());
    }
    if let Some(claims) = dra::pod_claims(ctx.plan) {
        spec.insert("resourceClaims", claims);
    }
    let terms = affinity_terms(ctx.plan);
    if !terms.is_empty() {
        let list: Vec<Yaml> = terms.into_iter().map(|(_, term)| term).collect();
        spec.insert("podAffinityTerms", list);
    }
    let doc = Yaml::map()
        .with("apiVersion", WIRING_API_VERSION)
        .with("kind", WIRING_KIND)
        .with(
            "metadata",
            Yaml::map()
                .with("name", ctx.name.as_str())
                .with("annotations", Yaml::map().with(LOCAL_CONFIG, "true")),
        )
        .with("spec", spec);
    let mut out = crate::header("#", ctx.plan);
    out.push_str(
        "# The values transformers.yaml copies; local config, so not in the build output.\n",
    );
    out.push_str(&yaml::to_string(&doc));
    out
}

/// The strategic-merge patch for one pod-template shape, keyed on the container name.
fn patch(ctx: &Ctx, shape: Shape) -> String {
    let plan = ctx.plan;
    let (template_meta, spec) = patched_template(ctx);
    let (_, api_version, kind) = shape.patch();
    let mut metadata = Yaml::map().with("name", ctx.name.as_str());
    let body = match shape {
        Shape::Pod => {
            // A Pod is its own template: labels and annotations go into the patch's own metadata.
            for key in ["labels", "annotations"] {
                if let Some(v) = template_meta.get(key) {
                    metadata.insert(key, v.clone());
                }
            }
            spec
        }
        _ => {
            let mut body = Yaml::map()
                .with("metadata", template_meta)
                .with("spec", spec);
            for key in shape.template().iter().rev() {
                body = Yaml::map().with(*key, body);
            }
            match body {
                Yaml::Map(mut entries) => entries.remove(0).1,
                _ => unreachable!("built as a map"),
            }
        }
    };
    let doc = Yaml::map()
        .with("apiVersion", api_version)
        .with("kind", kind)
        .with("metadata", metadata)
        .with("spec", body);
    let kinds: Vec<&str> = ctx
        .groups
        .iter()
        .filter(|g| g.shape == shape)
        .flat_map(|g| g.kinds.iter().copied())
        .collect();
    let mut out = crate::header("#", plan);
    out.push_str(&format!(
        "# Strategic-merge patch for each selected {} (kustomize ignores its kind and name).\n\
         # Lists merge by key: env by name, mounts by mountPath, volumes by name; `{}` moves to the front.\n",
        dedup(kinds).join(", "),
        ctx.container,
    ));
    if ctx.exec.is_some() {
        out.push_str(
            "# `$patch: delete` drops the workload's own values of what `roce exec` computes (they would win).\n",
        );
    }
    out.push_str(&yaml::to_string(&doc));
    out
}

/// The pod template's metadata and spec as the patch carries them: the edits a strategic merge can
/// express, written onto a skeleton in the emitter's key order; behind `roce exec`, the env also deletes
/// what it computes.
fn patched_template(ctx: &Ctx) -> (Yaml, Yaml) {
    let plan = ctx.plan;
    let container = Yaml::map()
        .with("name", ctx.container.as_str())
        .with("env", Yaml::seq())
        .with("resources", Yaml::Null)
        .with("volumeMounts", Yaml::Null)
        .with("securityContext", Yaml::Null);
    let mut template = Yaml::map()
        .with(
            "metadata",
            Yaml::map()
                .with("labels", Yaml::Null)
                .with("annotations", Yaml::Null),
        )
        .with(
            "spec",
            Yaml::map()
                .with(roce_model::fabric::attach::HOST_NETWORK, Yaml::Null)
                .with("dnsPolicy", Yaml::Null)
                .with("nodeSelector", Yaml::Null)
                .with("containers", vec![container])
                .with("volumes", Yaml::Null),
        );
    let reqs = edits::requirements(plan, ctx.exec);
    // What a strategic-merge patch can carry (a scalar such as `privileged` merges into the workload's
    // securityContext). The rest are lists a patch would replace or a string it cannot append to: the steps
    // merge them (the Multus annotation, capabilities, claims, affinity).
    let carried: Vec<&Edit> = edits::all(&reqs)
        .filter(|e| {
            matches!(
                e,
                Edit::Annotation { .. }
                    | Edit::NodeLabel { .. }
                    | Edit::Label { .. }
                    | Edit::Volume(_)
                    | Edit::Resource { .. }
                    | Edit::Env(_)
                    | Edit::HostNetwork
                    | Edit::Privileged
                    | Edit::PodField { .. }
            )
        })
        .collect();
    edits::write(
        &mut template,
        0,
        &carried,
        plan,
        edits::Context {
            metadata_first: true,
            ..edits::Context::default()
        },
    );
    Skeleton::finish(&mut template);
    let Yaml::Map(mut parts) = template else {
        unreachable!("built as a map")
    };
    let mut spec = parts.pop().expect("metadata and spec").1;
    let template_meta = parts.pop().expect("metadata and spec").1;
    if ctx.exec.is_some()
        && let Some(Yaml::Seq(cs)) = spec.get("containers").cloned()
    {
        let cs: Vec<Yaml> = cs
            .into_iter()
            .map(|mut c| {
                if let Some(Yaml::Seq(env)) = c.get("env").cloned() {
                    c.insert("env", with_deletes(env));
                }
                c
            })
            .collect();
        spec.insert("containers", cs);
    }
    (template_meta, spec)
}

/// The container's env behind `roce exec`: a `$patch: delete` for each variable it computes from the pod, as
/// `apply --exec` removes them: a static value would win over the computed one.
fn with_deletes(mut env: Vec<Yaml>) -> Vec<Yaml> {
    env.extend(
        POD_DEPENDENT
            .iter()
            .map(|name| Yaml::map().with("name", *name).with("$patch", "delete")),
    );
    env
}

fn dedup(mut v: Vec<&str>) -> Vec<&str> {
    let mut seen = Vec::new();
    v.retain(|k| {
        let new = !seen.contains(k);
        seen.push(*k);
        new
    });
    v
}
