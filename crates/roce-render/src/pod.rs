//! `pod`: a complete Pod manifest.

use crate::dra;
use crate::plan::{MULTUS_ANNOTATION, Plan};
use crate::yaml::{self, Yaml};
use crate::{RenderError, RenderOptions};
use roce_model::fabric::attach::{
    HOST_NETWORK, HOST_NETWORK_DNS_POLICY, RDMA_DEVICE_DIR, RDMA_DEVICE_VOLUME,
};
use roce_model::fabric::provider::{HostMount, TOPOLOGY_VOLUME, TopologyFile};

/// Render the plan as a Pod.
pub fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let name = opts.name.clone().unwrap_or_else(|| plan.short_name());
    let mut metadata = Yaml::map().with("name", name.as_str());
    if !plan.dra.labels.is_empty() {
        let mut labels = Yaml::map();
        for (k, v) in &plan.dra.labels {
            labels.insert(k, v.as_str());
        }
        metadata.insert("labels", labels);
    }
    let mut annotations = Yaml::map().with(crate::PROFILE_ANNOTATION, plan.profile.as_str());
    if let Some(value) = plan.wiring.as_ref().and_then(|w| w.multus_annotation()) {
        annotations.insert(MULTUS_ANNOTATION, Yaml::Block(value));
    }
    for (k, v) in &plan.dra.annotations {
        annotations.insert(k, v.as_str());
    }
    provider_annotations(plan, &mut annotations);
    metadata.insert("annotations", annotations);

    let mut spec = Yaml::map().with("restartPolicy", "Never");
    host_network(plan, &mut spec);
    if let Some(sel) = node_selector(plan) {
        spec.insert("nodeSelector", sel);
    }
    if let Some(affinity) = dra::affinity(plan) {
        spec.insert("affinity", affinity);
    }
    spec.insert("containers", vec![container(plan, opts)]);
    if let Some(claims) = dra::pod_claims(plan) {
        spec.insert("resourceClaims", claims);
    }
    let vols = volumes(plan);
    if !vols.is_empty() {
        spec.insert("volumes", vols);
    }
    let pod = Yaml::map()
        .with("apiVersion", "v1")
        .with("kind", "Pod")
        .with("metadata", metadata)
        .with("spec", spec);
    // The objects the claims name go first, so `kubectl apply -f` creates them before the pod.
    let mut docs = dra::documents(plan);
    docs.push(pod);
    Ok(format!(
        "{}{}",
        crate::header("#", plan),
        yaml::to_multi_doc(&docs)
    ))
}

/// Name of the memory-backed `/dev/shm` volume.
pub const SHM_VOLUME: &str = "dshm";

/// The workload container: image, the `roce exec` command when asked for, env, resources, capabilities and
/// the `/dev/shm` mount.
pub fn container(plan: &Plan, opts: &RenderOptions) -> Yaml {
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
    c.insert(
        "env",
        env_entries(crate::exec::static_env(plan, opts.exec.as_ref())),
    );
    c.insert("resources", resources(plan));
    if let Some(caps) = capabilities(plan) {
        c.insert("securityContext", caps);
    }
    let mounts = volume_mounts(plan);
    if !mounts.is_empty() {
        c.insert("volumeMounts", mounts);
    }
    c
}

/// `hostNetwork: true` and `dnsPolicy: ClusterFirstWithHostNet` in a pod spec, for a host-network plan.
pub fn host_network(plan: &Plan, spec: &mut Yaml) {
    if plan.host_network {
        spec.insert(HOST_NETWORK, true);
        spec.insert("dnsPolicy", HOST_NETWORK_DNS_POLICY);
    }
}

/// The host's `/dev/infiniband` as a `hostPath` volume (type `Directory`: the pod does not start on a node
/// without RDMA devices).
pub fn rdma_device_volume() -> Yaml {
    Yaml::map().with("name", RDMA_DEVICE_VOLUME).with(
        "hostPath",
        Yaml::map()
            .with("path", RDMA_DEVICE_DIR)
            .with("type", "Directory"),
    )
}

/// The container's mount of [`rdma_device_volume`] at `/dev/infiniband`.
pub fn rdma_device_mount() -> Yaml {
    Yaml::map()
        .with("name", RDMA_DEVICE_VOLUME)
        .with("mountPath", RDMA_DEVICE_DIR)
}

/// The pod's volumes: the memory-backed `/dev/shm`, the host's `/dev/infiniband` (host-network plans),
/// then the network provider's host directories.
pub fn volumes(plan: &Plan) -> Vec<Yaml> {
    let mut out = Vec::new();
    if plan.shm {
        out.push(shm_volume());
    }
    if plan.host_network {
        out.push(rdma_device_volume());
    }
    out.extend(plan.host_mounts.iter().map(host_volume));
    out.extend(plan.topology.iter().map(topology_volume));
    out
}

/// The container's mounts of [`volumes`], in the same order.
pub fn volume_mounts(plan: &Plan) -> Vec<Yaml> {
    let mut out = Vec::new();
    if plan.shm {
        out.push(shm_mount());
    }
    if plan.host_network {
        out.push(rdma_device_mount());
    }
    out.extend(plan.host_mounts.iter().map(host_mount));
    out.extend(plan.topology.iter().map(topology_mount));
    out
}

/// The topology file's ConfigMap as a volume holding just its key: the pod does not start while the
/// ConfigMap is missing, instead of NCCL probing a topology the profile says is wrong.
pub fn topology_volume(t: &TopologyFile) -> Yaml {
    Yaml::map().with("name", TOPOLOGY_VOLUME).with(
        "configMap",
        Yaml::map().with("name", t.config_map.as_str()).with(
            "items",
            Yaml::Seq(vec![
                Yaml::map()
                    .with("key", t.key.as_str())
                    .with("path", t.key.as_str()),
            ]),
        ),
    )
}

/// The container's read-only mount of [`topology_volume`]'s one file at the profile's path (`subPath`, so
/// the directory around it stays the image's).
pub fn topology_mount(t: &TopologyFile) -> Yaml {
    Yaml::map()
        .with("name", TOPOLOGY_VOLUME)
        .with("mountPath", t.path.as_str())
        .with("subPath", t.key.as_str())
        .with("readOnly", true)
}

/// A host directory as a `hostPath` volume of type `Directory`: the pod fails to start when the node has
/// not installed it, instead of NCCL falling back at run time.
pub fn host_volume(m: &HostMount) -> Yaml {
    Yaml::map().with("name", m.name.as_str()).with(
        "hostPath",
        Yaml::map()
            .with("path", m.host_path.as_str())
            .with("type", "Directory"),
    )
}

/// The container's read-only mount of [`host_volume`].
pub fn host_mount(m: &HostMount) -> Yaml {
    Yaml::map()
        .with("name", m.name.as_str())
        .with("mountPath", m.mount_path.as_str())
        .with("readOnly", true)
}

/// Add the network provider's pod annotations (values longer than a line as blocks).
pub fn provider_annotations(plan: &Plan, annotations: &mut Yaml) {
    for (k, v) in &plan.pod_annotations {
        if v.contains('\n') {
            annotations.insert(k, Yaml::Block(v.clone()));
        } else {
            annotations.insert(k, v.as_str());
        }
    }
}

/// `nodeSelector:` from the plan's node labels, if any.
pub fn node_selector(plan: &Plan) -> Option<Yaml> {
    if plan.node_selector.is_empty() {
        return None;
    }
    let mut sel = Yaml::map();
    for (k, v) in &plan.node_selector {
        sel.insert(k, v.as_str());
    }
    Some(sel)
}

/// The memory-backed `/dev/shm` volume.
pub fn shm_volume() -> Yaml {
    Yaml::map()
        .with("name", SHM_VOLUME)
        .with("emptyDir", Yaml::map().with("medium", "Memory"))
}

/// The container's mount of [`shm_volume`] at `/dev/shm`.
pub fn shm_mount() -> Yaml {
    Yaml::map()
        .with("name", SHM_VOLUME)
        .with("mountPath", "/dev/shm")
}

/// `env:` entries, values as strings, with Kubernetes' `$(VAR)` expansion escaped.
pub fn env_list(plan: &Plan) -> Vec<Yaml> {
    env_entries(plan.env.iter())
}

/// `env:` entries of `vars`, as [`env_list`] writes them.
pub(crate) fn env_entries<'a>(vars: impl Iterator<Item = &'a crate::plan::EnvVar>) -> Vec<Yaml> {
    vars.map(|e| {
        Yaml::map()
            .with("name", e.name.as_str())
            .with("value", Yaml::Quoted(escape_dependent_vars(&e.value)))
    })
    .collect()
}

/// `resources:` with the same quantities in requests and limits, and the DRA claims the container uses.
pub fn resources(plan: &Plan) -> Yaml {
    let mut r = quantities(plan);
    if let Some(claims) = dra::container_claims(plan) {
        r.insert("claims", claims);
    }
    r
}

/// `resources:` with the same quantities in requests and limits (no claims).
pub fn quantities(plan: &Plan) -> Yaml {
    let mut q = Yaml::map();
    for (k, v) in plan.resources() {
        q.insert(&k, v);
    }
    let mut r = Yaml::map();
    if !plan.resources().is_empty() {
        r.insert("requests", q.clone());
        r.insert("limits", q);
    }
    r
}

/// `securityContext:` adding the plan's capabilities, if any, and `privileged: true` for a host-network
/// plan (the container opens the host's RDMA device nodes).
pub fn capabilities(plan: &Plan) -> Option<Yaml> {
    let caps = &plan.wiring.as_ref()?.capabilities;
    let mut sc = Yaml::map();
    if plan.host_network {
        sc.insert("privileged", true);
    }
    if !caps.is_empty() {
        let add: Vec<Yaml> = caps.iter().map(|c| Yaml::from(c.as_str())).collect();
        sc.insert("capabilities", Yaml::map().with("add", add));
    }
    (!matches!(&sc, Yaml::Map(m) if m.is_empty())).then_some(sc)
}

/// Kubernetes expands `$(NAME)` in env values and reduces `$$` to `$`; double a `$` that precedes `(` or
/// `$` so the container sees the value verbatim.
pub fn escape_dependent_vars(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$' && matches!(chars.peek(), Some('(' | '$')) {
            out.push('$');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape_dependent_vars;

    /// Kubernetes' expansion of env values (`third_party/forked/golang/expansion`): `$$` → `$`,
    /// `$(NAME)` → the variable (here: `<NAME>`, since none is defined), any other `$` kept.
    fn k8s_expand(s: &str) -> String {
        let b: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == '$' && i + 1 < b.len() {
                if b[i + 1] == '$' {
                    out.push('$');
                    i += 2;
                    continue;
                }
                if b[i + 1] == '('
                    && let Some(end) = b[i + 2..].iter().position(|c| *c == ')')
                {
                    let name: String = b[i + 2..i + 2 + end].iter().collect();
                    out.push_str(&format!("<{name}>"));
                    i += end + 3;
                    continue;
                }
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }

    #[test]
    fn dollar_escaping_survives_kubernetes_expansion() {
        for v in [
            "a$(B)", "$$", "$$(X)", "$HOME", "x$", "$", "$($(A))", "plain", "$$$(",
        ] {
            assert_eq!(k8s_expand(&escape_dependent_vars(v)), v, "{v}");
        }
        assert_eq!(escape_dependent_vars("a$(B)"), "a$$(B)");
        assert_eq!(escape_dependent_vars("$HOME"), "$HOME");
        // The check above is meaningful: unescaped, Kubernetes would change these.
        assert_ne!(k8s_expand("a$(B)"), "a$(B)");
        assert_ne!(k8s_expand("$$"), "$$");
    }
}
