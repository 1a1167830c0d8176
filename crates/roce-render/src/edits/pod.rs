//! The Pod target: a complete Pod manifest: every edit of the plan ([`crate::edits::requirements`]) written onto an
//! empty pod. The validation workloads' pods are built the same way ([`wired`]).

use crate::edits::{self, Edit, Skeleton};
use crate::plan::Plan;
use crate::yaml::{self, Yaml};
use crate::{RenderError, RenderOptions};

/// Render the plan as a Pod.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let reqs = edits::requirements(plan, opts.exec.as_ref());
    let all: Vec<&Edit> = edits::all(&reqs).collect();
    Ok(render_edits(plan, opts, &all))
}

/// A Pod with just `chosen` written onto it, and the objects their claims name before it.
pub(crate) fn render_edits(plan: &Plan, opts: &RenderOptions, chosen: &[&Edit]) -> String {
    let name = opts.name.clone().unwrap_or_else(|| plan.short_name());
    let template = wired_with(
        plan,
        opts,
        Head {
            metadata: vec![("name".into(), Yaml::from(name.as_str()))],
            spec: vec![("restartPolicy".into(), Yaml::from("Never"))],
            ..Head::default()
        },
        chosen,
    );
    let Yaml::Map(parts) = template else {
        unreachable!("a template is a mapping")
    };
    let mut pod = Yaml::map().with("apiVersion", "v1").with("kind", "Pod");
    for (k, v) in parts {
        pod.insert(k, v);
    }
    // The objects the claims name go first, so `kubectl apply -f` creates them before the pod.
    let mut docs = documents_of(chosen);
    docs.push(pod);
    let mut out = crate::header("#", plan);
    yaml::push_multi_doc(&mut out, &docs);
    out
}

/// What a pod template holds before the plan's edits are written onto it: its own first keys and, where
/// the caller places them itself, its affinity and the keys before `containers`.
#[derive(Default)]
pub(crate) struct Head<'a> {
    /// `metadata`'s first keys (`name`, the caller's labels).
    pub metadata: Vec<(crate::yaml::Key, Yaml)>,
    /// `spec`'s first keys (`restartPolicy`, …).
    pub spec: Vec<(crate::yaml::Key, Yaml)>,
    /// An affinity of the caller's instead of the plan's (a sweep's pinned nodes, a test's anti-affinity).
    pub affinity: Option<Yaml>,
    /// Keys between `affinity` and `containers` (`initContainers`).
    pub before_containers: Vec<(crate::yaml::Key, Yaml)>,
    /// What the caller adds to the wired container (a command, a probe).
    pub finish_container: Option<Box<dyn FnOnce(Yaml) -> Yaml + 'a>>,
}

/// A pod template (`metadata`, `spec`) with every edit of the plan written onto an empty one whose
/// container is [`container_skeleton`].
pub(crate) fn wired(plan: &Plan, opts: &RenderOptions, head: Head<'_>) -> Yaml {
    let reqs = edits::requirements(plan, opts.exec.as_ref());
    let all: Vec<&Edit> = edits::all(&reqs).collect();
    wired_with(plan, opts, head, &all)
}

/// [`wired`] with just `chosen`.
fn wired_with(plan: &Plan, opts: &RenderOptions, head: Head<'_>, chosen: &[&Edit]) -> Yaml {
    let mut metadata = Yaml::map();
    for (k, v) in head.metadata {
        metadata.insert(k, v);
    }
    if metadata.get("labels").is_none() {
        metadata.insert("labels", Yaml::Null);
    }
    metadata.insert("annotations", Yaml::Null);
    let mut spec = Yaml::map();
    for (k, v) in head.spec {
        spec.insert(k, v);
    }
    spec.insert(roce_model::fabric::attach::HOST_NETWORK, Yaml::Null);
    spec.insert("dnsPolicy", Yaml::Null);
    spec.insert("nodeSelector", Yaml::Null);
    let own_affinity = head.affinity.is_some();
    spec.insert("affinity", head.affinity.unwrap_or(Yaml::Null));
    for (k, v) in head.before_containers {
        spec.insert(k, v);
    }
    spec.insert("containers", vec![container_skeleton(opts)]);
    spec.insert("resourceClaims", Yaml::Null);
    spec.insert("volumes", Yaml::Null);
    let mut template = Yaml::map().with("metadata", metadata).with("spec", spec);
    let chosen: Vec<&Edit> = chosen
        .iter()
        .copied()
        .filter(|e| !(own_affinity && matches!(e, Edit::Affinity(_))))
        .collect();
    edits::write(
        &mut template,
        0,
        &chosen,
        plan,
        edits::Context {
            metadata_first: true,
            ..edits::Context::default()
        },
    );
    Skeleton::finish(&mut template);
    if let Some(finish) = head.finish_container
        && let Some(Yaml::Seq(cs)) = take(&mut template, "containers")
    {
        let mut finish = Some(finish);
        let cs: Vec<Yaml> = cs
            .into_iter()
            .map(|c| finish.take().map_or(c.clone(), |f| f(c)))
            .collect();
        if let Yaml::Map(parts) = &mut template
            && let Some((_, spec)) = parts.iter_mut().find(|(k, _)| k == "spec")
        {
            spec.insert("containers", cs);
        }
    }
    template
}

/// The objects the plan's edits add beside the workload (ComputeDomain, the NICs' ResourceClaimTemplate).
pub(crate) fn documents(plan: &Plan) -> Vec<Yaml> {
    let reqs = edits::requirements(plan, None);
    documents_of(&edits::all(&reqs).collect::<Vec<_>>())
}

fn documents_of(chosen: &[&Edit]) -> Vec<Yaml> {
    let mut docs: Vec<_> = chosen
        .iter()
        .filter_map(|e| match e {
            Edit::Document(d) => Some(d),
            _ => None,
        })
        .collect();
    // The ComputeDomain first: its driver then creates the channel's template.
    docs.sort_by_key(|d| d.kind() != roce_model::fabric::dra::COMPUTE_DOMAIN_KIND);
    docs.into_iter().map(|d| d.to_yaml()).collect()
}

/// The workload container before the plan's edits: name, image, the `roce exec` command when asked for,
/// and a place for env (always written) and resources.
fn container_skeleton(opts: &RenderOptions) -> Yaml {
    let mut c = Yaml::map()
        .with("name", opts.container.as_str())
        .with("image", opts.image.as_str());
    if let Some(w) = &opts.exec {
        let words = |v: Vec<String>| v.into_iter().map(Yaml::from).collect::<Vec<_>>();
        c.insert("command", words(w.prefix()));
        if let Some(job) = w.job() {
            c.insert("args", words(job));
        }
    }
    c.with("env", Yaml::seq())
        .with("resources", Yaml::map())
        .with("securityContext", Yaml::Null)
        .with("volumeMounts", Yaml::Null)
}

/// The workload container, wired: image, the `roce exec` command when asked for, env, resources, claims,
/// capabilities and mounts.
pub(crate) fn container(plan: &Plan, opts: &RenderOptions) -> Yaml {
    let mut template = wired(plan, opts, Head::default());
    match take(&mut template, "containers") {
        Some(Yaml::Seq(mut cs)) if !cs.is_empty() => cs.swap_remove(0),
        _ => unreachable!("the skeleton has one container"),
    }
}

/// Take `spec.<key>` out of a template.
fn take(template: &mut Yaml, key: &str) -> Option<Yaml> {
    use edits::GetMut;
    template
        .get_mut_key("spec")
        .and_then(|s| s.get_mut_key(key))
        .map(|v| std::mem::replace(v, Yaml::Null))
}

/// `env:` entries, values as strings, with Kubernetes' `$(VAR)` expansion escaped.
pub(crate) fn env_list(plan: &Plan) -> Vec<Yaml> {
    env_entries(plan.env.iter())
}

/// `env:` entries of `vars`, as [`env_list`] writes them.
pub(crate) fn env_entries<'a>(vars: impl Iterator<Item = &'a crate::plan::EnvVar>) -> Vec<Yaml> {
    vars.map(|e| edits::env_item(&e.name, &e.value)).collect()
}
