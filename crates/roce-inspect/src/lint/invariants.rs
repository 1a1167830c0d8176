//! The checks that hold for every fabric, with or without a profile: what breaks a pod whatever the cloud.
//!
//! Each is a fact about a consumer: the API server rejects a mount of an undeclared volume; the DRA
//! allocator gives a claim's devices only to the containers that list it; the SR-IOV CNI needs one VF per
//! attachment; NCCL's IB transport, UCX's verbs transports and Mooncake's RDMA transport need an RDMA device
//! and locked memory; multi-node NVLink needs an IMEX channel; Kubernetes expands only `$(VAR)`. They read
//! the pod's [`Wiring`], so a fact met in any form is met.

use roce_model::fabric::devices::Accelerator;
use roce_model::fabric::{dra::IMEX_CHANNELS_DIR, env, nccl, provider, ucx};
use roce_model::plumbing::tree::{Node, Scalar, Value};
use roce_model::source::Origin;
use roce_model::ucx_list;
use roce_model::{Code, Problem, Severity};
use roce_render::plumbing::templates::{self, FABRIC_KINDS, Template};
use roce_render::plumbing::view::{PodView, entry, text};
use roce_render::plumbing::wiring::{EnvFrom, Input, KvBackend, Wiring};

use super::Pods;

/// What the invariant checks of one document found.
pub(super) struct Checked {
    /// Pod templates read.
    pub templates: usize,
}

/// Check one document. `alone`: no profile is checked beside these, so the views' shape problems and the
/// checks a profile makes more precisely (memlock, RDMA access, /dev/shm) are this pass's. `domain`: the
/// profile checks the NVLink domain's IMEX channel itself (its requirement), so the invariant would be the
/// same cause twice.
pub(super) fn document<'a>(
    doc: &'a Node,
    pods: Option<&Pods<'a>>,
    input: &Input<'a>,
    alone: bool,
    domain: bool,
    problems: &mut Vec<Problem>,
) -> Checked {
    let shapes = alone;
    fabric_object(doc, problems);
    let Some(pods) = pods else {
        return Checked { templates: 0 };
    };
    let found = &pods.found;
    if shapes {
        for m in &pods.missing {
            problems.push(roce_render::apply::missing_problem(doc, m));
        }
    }
    // A kind roce has no entry for: its pod templates were found by their shape, and the user should know.
    let kind = text(doc, "kind").unwrap_or("");
    if found.iter().any(|t| t.generic) && !templates::known_kind(kind) {
        let at = entry(doc, "kind").map_or(doc.origin, |e| e.node.origin);
        let names: Vec<&str> = found.iter().map(|t| t.label.as_str()).collect();
        problems.push(Problem::new(
            Code::LintGenericKind,
            format!(
                "roce has no entry for kind {kind}: its {} pod template(s) were found by their shape ({}) and checked as plain pods",
                found.len(),
                names.join("; ")
            ),
        )
        .at(at, "read generically")
        .help("nothing to fix; roles named router, gateway, frontend … are taken for pods that move no tensors"));
    }
    if shapes {
        for p in pods.views.iter().filter_map(|v| v.as_ref().err()) {
            problems.extend(p.iter().cloned());
        }
    }
    for (t, v, w) in pods.viewed() {
        volumes(t, v, problems);
        unmounted(t, v, problems);
        literal_vars(t, v, problems);
        claims(t, v, input, problems);
        super::kueue::check(doc, t, v, input, problems);
        // A TrainJob's trainer carries env and resources only; its pod is its TrainingRuntime's.
        let Some(w) = w else {
            continue;
        };
        let pod_namespace = entry(doc, "metadata").and_then(|m| text(&m.node, "namespace"));
        let owner = owner(t, v);
        let at = container_at(t, v, doc);
        if alone {
            rdma(&owner, at, w, problems);
        } else if !domain {
            imex(&owner, at, w, problems);
        }
        undefined_networks(&owner, at, w, input, pod_namespace, problems);
        vfs(&owner, at, w, input, pod_namespace, problems);
        provided(&owner, w, input, problems);
        kv_transport(&owner, v, w, problems);
        // NCCL's SHM transport links ranks of one pod (more than one GPU, or a job that says it runs NCCL);
        // Ray keeps its object store in /dev/shm and falls back to /tmp, slowly, when it is small (Ray docs,
        // "Memory Management: object store").
        // A pod with several GPUs and RDMA devices runs ranks side by side that move data between nodes,
        // whatever its command (a `sleep infinity` pod that `kubectl exec` runs the benchmark in): NCCL
        // links them through /dev/shm where P2P is not available, and keeps its proxy buffers there.
        let nccl_job = w.uses_shm_transports() || (w.rdma_access().is_some() && w.several_gpus());
        if shapes
            && !w.merged_with_preset
            && nccl_job
            && w.accelerators().contains(&Accelerator::Nvidia)
            && !w.shm()
        {
            problems.push(
                Problem::new(
                    Code::LintShm,
                    format!("{owner} asks for NVIDIA GPUs and mounts nothing at /dev/shm: the container runtime's {} MiB default is too small for NCCL's shared-memory transport and proxy buffers (NCCL fails with `unable to allocate shared memory`)", roce_model::fabric::attach::RUNTIME_SHM_BYTES >> 20),
                )
                .at(at, "no /dev/shm")
                .help("mount an `emptyDir: {medium: Memory}` volume at /dev/shm"),
            );
        }
    }
    Checked {
        templates: found.len(),
    }
}

/// A template whose controller merges configuration roce does not model (`Added::unknown`): what it leaves
/// out is that configuration's to say.
pub(super) fn merges_preset(t: &Template) -> bool {
    t.added.unknown
}

fn owner(t: &Template, v: &PodView<'_>) -> String {
    match v.container.and_then(|(_, c)| text(c, "name")) {
        Some(n) => format!("container `{n}` of the {}", t.label),
        None => format!("the {}", t.label),
    }
}

fn container_at(t: &Template, v: &PodView<'_>, doc: &Node) -> Origin {
    let _ = t;
    v.container
        .map(|(_, c)| entry(c, "name").map_or(c.origin, |e| e.node.origin))
        .or(v.root.map(|r| r.origin))
        .unwrap_or(doc.origin)
}

/// Every container (init containers too) of a template.
fn containers<'a>(v: &PodView<'a>) -> Vec<&'a Node> {
    let Some(spec) = v.spec else {
        return v.container.map(|(_, c)| c).into_iter().collect();
    };
    let mut out: Vec<&'a Node> = ["initContainers", "containers"]
        .iter()
        .filter_map(|k| entry(spec, k))
        .flat_map(|e| match &e.node.value {
            Value::Seq(items) => items.iter().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    if let Some((_, c)) = templates::main_container(spec) {
        out.push(c);
    }
    // A container kept outside the pod spec (a NodeSet's `spec.slurmd`).
    if let Some((_, c)) = v.container
        && !out.iter().any(|o| std::ptr::eq(*o, c))
    {
        out.push(c);
    }
    out
}

/// A mount of a volume the pod does not declare: the API server rejects the pod
/// (`spec.containers[i].volumeMounts[j].name: Not found`, Kubernetes' `validateVolumeMounts`).
fn volumes(t: &Template, v: &PodView<'_>, problems: &mut Vec<Problem>) {
    if v.spec.is_none() {
        return;
    }
    // The volumes the pod declares, and those its controller declares for it (Kubeflow Trainer's MPI
    // plugin: `mpi-ssh-auth`).
    let declared: Vec<&str> = v
        .spec
        .and_then(|s| entry(s, "volumes"))
        .map(|e| match &e.node.value {
            Value::Seq(items) => items.iter().filter_map(|i| text(i, "name")).collect(),
            _ => Vec::new(),
        })
        .unwrap_or_default()
        .into_iter()
        .chain(v.added.volumes.iter().copied())
        .collect();
    for c in containers(v) {
        let Some(Value::Seq(mounts)) = entry(c, "volumeMounts").map(|e| &e.node.value) else {
            continue;
        };
        let undeclared: Vec<(&str, Origin)> = mounts
            .iter()
            .filter_map(|m| {
                let e = entry(m, "name")?;
                let name = text(m, "name")?;
                (!declared.contains(&name)).then_some((name, e.node.origin))
            })
            .collect();
        let Some(((first, at), rest)) = undeclared.split_first() else {
            continue;
        };
        let cname = text(c, "name").unwrap_or("?");
        let names: Vec<String> = undeclared.iter().map(|(n, _)| format!("`{n}`")).collect();
        let mut p = Problem::new(
            Code::LintVolumeMissing,
            format!(
                "container `{cname}` of the {} mounts {} but the pod declares no such volume: the API server rejects the pod (`volumeMounts[].name: Not found`)",
                t.label,
                names.join(", ")
            ),
        )
        .at(*at, format!("no volume `{first}` in spec.volumes"));
        for (n, at) in rest {
            p = p.at(*at, format!("no volume `{n}`"));
        }
        problems.push(p.help("declare each volume in the pod's `spec.volumes` (an `emptyDir: {medium: Memory}` for /dev/shm, a `hostPath` for /dev/infiniband), or drop the mount"));
    }
}

/// A volume no container mounts, while a container's command reads an absolute path that no mount covers
/// and that names the volume (its name, or its `hostPath`'s last directory, as a directory of the path):
/// the file the command reads is not in the container. GKE's samples source
/// `/usr/local/gib/scripts/set_nccl_env.sh` from the `gib` hostPath volume; without its mount the shell's
/// `source` fails and NCCL runs without the plugin's environment.
fn unmounted(t: &Template, v: &PodView<'_>, problems: &mut Vec<Problem>) {
    let Some(Value::Seq(volumes)) = v
        .spec
        .and_then(|s| entry(s, "volumes"))
        .map(|e| &e.node.value)
    else {
        return;
    };
    let cs = containers(v);
    let mounts: Vec<(&str, &str)> = cs
        .iter()
        .filter_map(|c| entry(c, "volumeMounts"))
        .flat_map(|e| match &e.node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|m| Some((text(m, "name")?, text(m, "mountPath")?)))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    for vol in volumes {
        let Some(name) = text(vol, "name") else {
            continue;
        };
        if mounts.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let host = entry(vol, "hostPath").and_then(|h| text(&h.node, "path"));
        let dirs: Vec<&str> = [
            Some(name),
            host.and_then(|h| h.trim_end_matches('/').rsplit('/').next()),
        ]
        .into_iter()
        .flatten()
        .filter(|d| !d.is_empty())
        .collect();
        for c in &cs {
            let argv = roce_render::plumbing::wiring::argv(c);
            let read = argv
                .iter()
                .flat_map(|a| {
                    a.split(|ch: char| ch.is_whitespace() || ch == ';' || ch == '"' || ch == '\'')
                })
                .find(|w| {
                    w.starts_with('/')
                        && dirs.iter().any(|d| w.contains(&format!("/{d}/")))
                        && !mounts
                            .iter()
                            .any(|(_, p)| w.starts_with(p.trim_end_matches('/')))
                });
            let Some(path) = read else { continue };
            let at = entry(vol, "name").map_or(vol.origin, |e| e.node.origin);
            problems.push(
                Problem::new(
                    Code::LintVolumeUnmounted,
                    format!(
                        "the {} declares volume `{name}`{} but no container mounts it, and container `{}` reads {path}: that path is not in the container",
                        t.label,
                        host.map(|h| format!(" (hostPath {h})")).unwrap_or_default(),
                        text(c, "name").unwrap_or("?")
                    ),
                )
                .at(at, "declared, not mounted")
                .help(format!("mount `{name}` in the container at the directory the command reads (`volumeMounts: [{{name: {name}, mountPath: …}}]`)")),
            );
            break;
        }
    }
}

/// `$VAR` / `${VAR}` in an env value: Kubernetes expands `$(VAR)` only (and `$$` to `$`), so the program
/// receives the dollar sign and the name (kubernetes.io, "Define Dependent Environment Variables").
fn literal_vars(t: &Template, v: &PodView<'_>, problems: &mut Vec<Problem>) {
    for c in containers(v) {
        let Some(Value::Seq(items)) = entry(c, "env").map(|e| &e.node.value) else {
            continue;
        };
        for item in items {
            let (Some(name), Some(e)) = (text(item, "name"), entry(item, "value")) else {
                continue;
            };
            let Value::Scalar(Scalar::Str(value)) = &e.node.value else {
                continue;
            };
            let Some(var) = shell_reference(value) else {
                continue;
            };
            problems.push(
                Problem::new(
                    Code::LintLiteralVar,
                    format!(
                        "{name} of container `{}` of the {} is {value:?}: Kubernetes expands only `$(VAR)`, so the process gets the text `{var}`, not a value",
                        text(c, "name").unwrap_or("?"),
                        t.label
                    ),
                )
                .at(e.node.origin, "not expanded")
                .help(format!(
                    "write `$({})` for a variable defined earlier in the container's env, or set the value in the command's shell",
                    var.trim_start_matches('$').trim_matches(|c| c == '{' || c == '}')
                )),
            );
        }
    }
}

/// The first `$NAME` or `${NAME}` in `value` that Kubernetes leaves as it is (`$$` escapes, `$(…)` expands).
fn shell_reference(value: &str) -> Option<&str> {
    let b = value.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'$') => i += 2,
            Some(b'{') => {
                let end = value[i..].find('}')? + i;
                return Some(&value[i..=end]);
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let end = value[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(value.len(), |e| e + i + 1);
                return Some(&value[i..end]);
            }
            _ => i += 1,
        }
    }
    None
}

/// A pod claim no container lists: the DRA scheduler allocates the devices, but only a container that
/// names the claim in `resources.claims` gets them (kubernetes.io, "Dynamic Resource Allocation").
fn claims(t: &Template, v: &PodView<'_>, input: &Input<'_>, problems: &mut Vec<Problem>) {
    let Some(Value::Seq(items)) = v
        .spec
        .and_then(|s| entry(s, "resourceClaims"))
        .map(|e| &e.node.value)
    else {
        return;
    };
    let used: Vec<&str> = containers(v)
        .into_iter()
        .filter_map(|c| entry(c, "resources"))
        .filter_map(|r| entry(&r.node, "claims"))
        .flat_map(|e| match &e.node.value {
            Value::Seq(items) => items.iter().filter_map(|i| text(i, "name")).collect(),
            _ => Vec::new(),
        })
        .collect();
    for item in items {
        let Some(name) = text(item, "name") else {
            continue;
        };
        if used.contains(&name) {
            continue;
        }
        let classes = text(item, "resourceClaimTemplateName")
            .map(|t| input.classes_of(t))
            .unwrap_or_default();
        // dranet gives its NICs to the whole pod: listing the claim only says which container uses them.
        if classes.iter().any(|k| input.pod_level_class(k)) {
            continue;
        }
        let what = if input
            .is_channel_template(text(item, "resourceClaimTemplateName").unwrap_or(""))
        {
            "the IMEX channel never reaches a container, so NCCL cannot use multi-node NVLink"
        } else if classes
            .iter()
            .any(|c| roce_model::fabric::devices::nic_class(c))
        {
            "the NICs are allocated to the pod but never reach a container, so NCCL runs over TCP sockets"
        } else {
            "its devices are allocated to the pod but never reach a container"
        };
        let at = entry(item, "name").map_or(item.origin, |e| e.node.origin);
        problems.push(
            Problem::new(
                Code::LintClaimUnreferenced,
                format!(
                    "the {} claims `{name}` but no container lists it in `resources.claims`: {what}",
                    t.label
                ),
            )
            .at(at, "claimed, not used")
            .help(format!(
                "add `{{name: {name}}}` to `resources.claims` of the container that runs the job"
            )),
        );
    }
}

/// What the env says the job will do over RDMA, if anything: the variable and why it means RDMA.
fn rdma_intent(w: &Wiring<'_>) -> Option<(String, Option<Origin>, &'static str)> {
    let set = |name: &str| {
        w.var(name)
            .and_then(|v| Some((v.value.as_deref()?, Some(v.at))))
    };
    if let Some((value, at)) = set(env::NCCL_NET)
        && value.eq_ignore_ascii_case(nccl::NET_IB.name)
    {
        return Some((
            format!("NCCL_NET={value}"),
            at,
            "NCCL's IB transport is forced, and its init fails without an RDMA device",
        ));
    }
    if let Some((value, at)) = set(env::NCCL_IB_HCA.name)
        && !value.trim().is_empty()
        && !value.trim_start().starts_with('^')
    {
        return Some((
            format!("NCCL_IB_HCA={value}"),
            at,
            "NCCL finds no IB device and silently runs over TCP sockets",
        ));
    }
    // aws-ofi-nccl over libfabric's efa provider: without an EFA device the provider registers nothing, the
    // plugin does not start and NCCL falls back to its sockets (the fabric core's `asks_for_efa`).
    for name in [provider::FI_PROVIDER, provider::FI_EFA_USE_DEVICE_RDMA] {
        if let Some((value, at)) = set(name)
            && provider::asks_for_efa(name, value)
        {
            return Some((
                format!("{name}={value}"),
                at,
                "libfabric's efa provider finds no EFA device, so aws-ofi-nccl finds no provider (`Couldn't find any optimal provider`), does not load, and NCCL runs over TCP sockets",
            ));
        }
    }
    // SGLang's Mooncake backend (its default whenever `--disaggregation-mode` is set) starts the transfer
    // engine with protocol "rdma" (sglang `srt/disaggregation/mooncake/transfer_engine.py`,
    // `engine.initialize(hostname, "P2PHANDSHAKE", "rdma", ib_device)`), on the devices
    // `--disaggregation-ib-device` names or every one it finds.
    if w.kv_backend() == Some(KvBackend::Mooncake)
        && w.argv.iter().any(|a| a.contains("--disaggregation-mode"))
    {
        return Some((
            "SGLang's Mooncake KV transfer (`--disaggregation-mode`)".to_string(),
            w.argv_at,
            "Mooncake's transfer engine starts over RDMA and the KV transfer fails without a device",
        ));
    }
    // vLLM's MooncakeConnector starts the same engine with its protocol (`Wiring::vllm_mooncake_protocol`)
    // and raises "Mooncake Transfer Engine initialization failed" when it cannot.
    if w.kv_backend() == Some(KvBackend::Mooncake)
        && let Some(protocol) = w.vllm_mooncake_protocol()
        && protocol.eq_ignore_ascii_case("rdma")
    {
        return Some((
            "vLLM's MooncakeConnector (protocol rdma)".to_string(),
            w.argv_at,
            "Mooncake's transfer engine starts over RDMA and vLLM fails to start its KV connector without a device",
        ));
    }
    if let Some((value, at)) = set(env::MOONCAKE_PROTOCOL)
        && value.trim().eq_ignore_ascii_case("rdma")
    {
        return Some((
            format!("{}={value}", env::MOONCAKE_PROTOCOL),
            at,
            "the Mooncake Store client's transfer engine installs its RDMA transport, which fails without a device",
        ));
    }
    if let Some((value, at)) = set(env::UCX_TLS.name) {
        let tls = ucx_list::parse_tls(value).0;
        if !tls.is_all()
            && !tls.negate()
            && tls
                .transports()
                .iter()
                .any(|t| ucx::class(t).is_some_and(|c| c.opens_rdma_device()))
        {
            return Some((
                format!("UCX_TLS={value}"),
                at,
                "UCX finds none of the RDMA transports it was told to use and fails to create its endpoints",
            ));
        }
    }
    None
}

/// RDMA env without RDMA devices; RDMA devices without memlock; multi-node NVLink without an IMEX channel.
fn rdma(owner: &str, at: Origin, w: &Wiring<'_>, problems: &mut Vec<Problem>) {
    let access = w.rdma_access();
    // A claim of a template (or ResourceClaim) applied apart from this input may be the NICs: unknown.
    if access.is_none()
        && w.unresolved_claims().next().is_none()
        && let Some((var, var_at, consequence)) = rdma_intent(w)
    {
        problems.push(
            Problem::new(
                Code::LintRdmaEnvWithoutDevice,
                format!(
                    "{owner} asks for RDMA ({var}) but gets no RDMA device (no RDMA device-plugin resource, no DRA NIC claim, not privileged{}): {consequence}",
                    if w.dev_infiniband.is_some() {
                        "; the mounted /dev/infiniband does not count: an unprivileged container's device cgroup refuses to open its nodes"
                    } else {
                        ""
                    }
                ),
            )
            // The container that lacks the device is the finding's place; the variable may be the
            // launcher's (`mpirun -x`).
            .at(at, "no RDMA device for this container")
            .at(var_at.unwrap_or(at), "RDMA asked for here")
            .help("request the cluster's RDMA resource (`rdma/…`, an SR-IOV VF resource, `vpc.amazonaws.com/efa`) or claim the NICs with DRA; or configure the job for TCP if that is what it is meant to use"),
        );
    }
    let platform_memlock = match &access {
        Some(roce_render::plumbing::wiring::RdmaAccess::Resource(r)) => {
            roce_model::fabric::devices::memlock_unlimited_with(r)
        }
        Some(roce_render::plumbing::wiring::RdmaAccess::Claim(_)) => w
            .nic_claims()
            .flat_map(|c| c.classes.iter())
            .any(|k| roce_model::fabric::devices::memlock_unlimited_with(k)),
        _ => false,
    } || w.volumes.iter().any(|(_, v)| {
        entry(v, "hostPath")
            .and_then(|h| text(&h.node, "path"))
            .is_some_and(roce_model::fabric::devices::gke_host_path)
    });
    if let Some(a) = &access
        && !w.memlock()
        && !platform_memlock
        && !w.merged_with_preset
        && !matches!(a, roce_render::plumbing::wiring::RdmaAccess::CloudNetworks)
    {
        problems.push(
            Problem::new(
                Code::LintMemlock,
                format!("{owner} gets RDMA devices but neither `IPC_LOCK` nor privileged: memory registration (`ibv_reg_mr`) then depends on the container runtime's memlock limit, and past it NCCL falls back to sockets or UCX fails"),
            )
            .at(at, "no IPC_LOCK")
            .help("add `IPC_LOCK` to `securityContext.capabilities.add`"),
        );
    }
    imex(owner, at, w, problems);
}

/// Multi-node NVLink forced without an IMEX channel.
fn imex(owner: &str, at: Origin, w: &Wiring<'_>, problems: &mut Vec<Problem>) {
    let mnnvl = w
        .var("NCCL_MNNVL_ENABLE")
        .filter(|v| v.value.as_deref().is_some_and(|x| x.trim() == "1"));
    // The NVIDIA container toolkit reads NVIDIA_IMEX_CHANNELS from the container's env when it creates the
    // container: an `mpirun -x` of it reaches the process, not the toolkit.
    let in_container = |v: &&roce_render::plumbing::wiring::Var| {
        v.name == "NVIDIA_IMEX_CHANNELS"
            && env::read_at_container_creation(&v.name)
            && matches!(v.from, EnvFrom::Container | EnvFrom::ConfigMap)
    };
    let legacy_channels = w.env.iter().any(|v| in_container(&v))
        || w.mounts
            .iter()
            .any(|(_, p, _)| p.starts_with(IMEX_CHANNELS_DIR));
    let forwarded_channels = w
        .env
        .iter()
        .find(|v| v.name == "NVIDIA_IMEX_CHANNELS" && v.from == EnvFrom::Launcher);
    // A claim of a template this input does not define may be the channel (the ComputeDomain lives
    // elsewhere): unknown, not missing.
    let unresolved = w
        .pod_claims
        .iter()
        .any(|c| c.classes.is_empty() && w.used_claims.iter().any(|(u, _)| *u == c.name));
    if unresolved || w.imex_channel().is_some() || w.privileged.is_some() || legacy_channels {
        return;
    }
    let (why, asked) = match (mnnvl, forwarded_channels) {
        (Some(v), _) => (
            "forces multi-node NVLink (NCCL_MNNVL_ENABLE=1) but claims no IMEX channel of a ComputeDomain: without `/dev/nvidia-caps-imex-channels` the fabric handles cannot be imported and NCCL's init fails",
            v.at,
        ),
        (None, Some(v)) => (
            "asks for IMEX channels only through the launcher's `mpirun -x NVIDIA_IMEX_CHANNELS`, which reaches the process after the container exists: the NVIDIA container toolkit reads it from the container's env when it creates the container, so no channel device is there and multi-node NVLink is not used",
            v.at,
        ),
        (None, None) => return,
    };
    problems.push(
        Problem::new(Code::LintImexChannel, format!("{owner} {why}"))
            .at(at, "no IMEX channel")
            .at(asked, "IMEX asked for here")
            .help("claim the ComputeDomain's channel ResourceClaimTemplate in `spec.resourceClaims` and list it in the container's `resources.claims` (or, with the legacy channels, set NVIDIA_IMEX_CHANNELS in the container's own env)"),
    );
}

/// Multus looks each network of the annotation up as a NetworkAttachmentDefinition in the namespace it
/// resolves in (`getKubernetesDelegate`, pkg/k8sclient): one that is not there fails the pod's sandbox
/// (event `NoNetworkFound`) and the pod stays in `ContainerCreating`. Judged only where the input defines
/// the networks of that namespace itself.
fn undefined_networks(
    owner: &str,
    at: Origin,
    w: &Wiring<'_>,
    input: &Input<'_>,
    pod_namespace: Option<&str>,
    problems: &mut Vec<Problem>,
) {
    let missing: Vec<&str> = w
        .undefined_networks(input, pod_namespace)
        .map(|n| &*n.name)
        .collect();
    let Some(first) = missing.first() else {
        return;
    };
    let mut defined: Vec<&str> = input.nads.iter().map(|n| n.name).collect();
    defined.sort_unstable();
    defined.dedup();
    let multus_at = w.multus.map_or(at, |e| e.node.origin);
    problems.push(
        Problem::new(
            Code::LintNadUndefined,
            format!(
                "{owner} attaches {} that no NetworkAttachmentDefinition of this input defines (it defines {}): Multus does not find the NAD in the pod's namespace, fails the pod's network setup (NoNetworkFound) and the pod stays in ContainerCreating",
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                defined.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
            ),
        )
        .at(multus_at, format!("`{first}` is not defined"))
        .help("attach a network the input defines, or define the NAD in the pod's namespace (`namespace/name` names one elsewhere)"),
    );
}

/// SR-IOV: each attachment of a network whose NAD names a device-plugin resource needs one device of it
/// (Multus hands out one allocated device per attachment, `Wiring::attachments_by_resource`); the CNI of
/// an attachment left without one has no device to move, fails, and the pod stays in `ContainerCreating`.
/// A pod that requests none of the resource is left alone only where the network is the SR-IOV operator's,
/// whose network-resources-injector adds the missing requests at admission (on by default); elsewhere
/// nothing in the input adds them, and an injector installed apart is the only way out (a warning).
fn vfs(
    owner: &str,
    at: Origin,
    w: &Wiring<'_>,
    input: &Input<'_>,
    pod_namespace: Option<&str>,
    problems: &mut Vec<Problem>,
) {
    for b in w.attachments_by_resource(input, pod_namespace) {
        let (resource, attached) = (&b.resource, b.attachments);
        let multus_at = w.multus.map_or(at, |e| e.node.origin);
        let Some(r) = b.requested else {
            // The injector adds a request for each resource no container asks for (`createResourcePatch`,
            // network-resources-injector `pkg/webhook/webhook.go`).
            if b.injector_by_default {
                continue;
            }
            let mut p = Problem::new(
                Code::LintNadsVsVfs,
                format!("{owner} attaches {attached} network{} backed by {resource} but requests none of it: Multus finds no device of {resource} among the pod's for the attachment, the CNI gets none and fails, and the pod never starts (unless a network-resources-injector the input does not show adds the request at admission)", if attached == 1 { "" } else { "s" }),
            )
            .at(multus_at, format!("{attached} attachment{}", if attached == 1 { "" } else { "s" }))
            .at(at, format!("no {resource} requested"))
            .help(format!("request {attached} of {resource} in requests and limits (the NAD's `k8s.v1.cni.cncf.io/resourceName`)"));
            p.severity = Severity::Warning;
            problems.push(p);
            continue;
        };
        let Some(vfs) = r.count() else { continue };
        if attached as u64 <= vfs {
            continue;
        }
        problems.push(
            Problem::new(
                Code::LintNadsVsVfs,
                format!("{owner} attaches {attached} networks backed by {} but requests {vfs} of it: each attachment takes one VF, so the SR-IOV CNI fails the rest and the pod never starts", r.name),
            )
            .at(multus_at, format!("{attached} attachments"))
            .at(r.at, format!("{vfs} VFs"))
            .help(format!("request {attached} of {} in requests and limits, or attach {vfs} networks", r.name)),
        );
    }
}

/// A device resource the input's fabric objects never create: no node advertises it, the pod stays
/// Pending.
fn provided(owner: &str, w: &Wiring<'_>, input: &Input<'_>, problems: &mut Vec<Problem>) {
    if !input.declares_resources {
        return;
    }
    for r in &w.resources {
        if !roce_model::fabric::devices::rdma_resource(r.name)
            || r.name == roce_model::fabric::provider::EFA_RESOURCE
            || input.provides(r.name)
        {
            continue;
        }
        let mut p = Problem::new(
            Code::LintResourceNotProvided,
            format!(
                "{owner} asks for {} but the fabric objects in this input create only {}: no node advertises it, so the pod stays Pending",
                r.name,
                if input.provided.is_empty() {
                    "no resource".to_string()
                } else {
                    input.provided.join(", ")
                }
            ),
        )
        .at(r.at, "not provided")
        .help("ask for the resource the device plugin's policy creates, or add it to the policy");
        if input.provided.is_empty() {
            p.severity = Severity::Warning;
        }
        problems.push(p);
    }
}

/// A KV-transfer server pinned to TCP on a pod that has RDMA devices: NIXL's UCX backend runs on what
/// `UCX_TLS` allows; the transfer then moves at socket speed.
fn kv_transport(owner: &str, v: &PodView<'_>, w: &Wiring<'_>, problems: &mut Vec<Problem>) {
    let _ = v;
    let Some(backend) = w.kv_backend() else {
        return;
    };
    if w.rdma_access().is_none() {
        return;
    }
    let Some(var) = w.var(env::UCX_TLS.name) else {
        return;
    };
    let Some(value) = var.value.as_deref() else {
        return;
    };
    let tls = ucx_list::parse_tls(value).0;
    let rdma = tls.is_all()
        || tls.negate()
        || tls
            .transports()
            .iter()
            .any(|t| ucx::class(t).is_some_and(|c| c.opens_rdma_device()));
    if rdma || backend != KvBackend::Nixl {
        return;
    }
    let backend = backend.as_str();
    problems.push(
        Problem::new(
            Code::LintKvTransportTcp,
            format!("{owner} moves KV cache with {backend} over UCX, but UCX_TLS={value} allows no RDMA transport although the pod has RDMA devices: the transfer runs over TCP sockets"),
        )
        .at(var.at, "no RDMA transport")
        .help("let UCX use the RDMA devices: `UCX_TLS=rc_mlx5,ud_mlx5,cuda_copy` (or leave UCX_TLS unset)"),
    );
}

/// A network object's JSON: a NAD's `spec.config`, an SR-IOV network's `spec.ipam` and `metaPlugins`. The
/// CNI plugin parses it when the pod is set up; bad JSON fails every pod that attaches it.
fn fabric_object(doc: &Node, problems: &mut Vec<Problem>) {
    let kind = text(doc, "kind").unwrap_or("");
    if !FABRIC_KINDS.contains(&kind) {
        return;
    }
    let fields: &[&str] = match kind {
        "NetworkAttachmentDefinition" => &["config"],
        "SriovNetwork" | "SriovIBNetwork" | "OVSNetwork" => &["ipam", "metaPlugins"],
        "HostDeviceNetwork" | "IPoIBNetwork" | "MacvlanNetwork" => &["ipam"],
        _ => return,
    };
    let Some(spec) = entry(doc, "spec") else {
        return;
    };
    let name = entry(doc, "metadata")
        .and_then(|m| text(&m.node, "name"))
        .unwrap_or("?");
    for field in fields {
        let Some(e) = entry(&spec.node, field) else {
            continue;
        };
        let Value::Scalar(Scalar::Str(json)) = &e.node.value else {
            continue;
        };
        if json.trim().is_empty() && *field == "metaPlugins" {
            continue;
        }
        let to_parse = if *field == "metaPlugins" {
            format!("[{json}]")
        } else {
            json.clone()
        };
        if let Err(err) = serde_json::from_str::<serde_json::Value>(&to_parse) {
            problems.push(
                Problem::new(
                    Code::LintCniConfig,
                    format!("`spec.{field}` of {kind} `{name}` is not valid JSON ({err}): the CNI plugin cannot read it, and every pod that attaches this network fails to start"),
                )
                .at(e.node.origin, "not JSON")
                .help("fix the JSON (`jq . <<< '…'` shows where it breaks)"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shell_reference;

    #[test]
    fn only_what_kubernetes_leaves_is_a_literal_reference() {
        assert_eq!(shell_reference("$HOME/lib"), Some("$HOME"));
        assert_eq!(
            shell_reference("${LD_LIBRARY_PATH}:/x"),
            Some("${LD_LIBRARY_PATH}")
        );
        assert_eq!(shell_reference("$(POD_IP)"), None);
        assert_eq!(shell_reference("$$HOME"), None);
        assert_eq!(shell_reference("costs 5$"), None);
    }
}
