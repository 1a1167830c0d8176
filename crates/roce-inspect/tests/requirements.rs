//! The requirements of `roce_render::edits` are the one vocabulary of what a pod needs: for every built-in,
//! the Pod target is every requirement's edits written onto an empty pod, and for each requirement left out,
//! `roce lint` reports it (by a code of that need, at the severity its consequence gives, and nothing
//! else), and `roce apply` writes back exactly what was left out.
//!
//! This replaces, for the pod wiring, the per-class mutations the consistency test wrote by hand into
//! rendered manifests: the mutations are now the requirements themselves, every one of them, on every
//! built-in.

use roce_inspect::lint::{LintOptions, Linter};
use roce_model::fabric::env::Consequence;
use roce_model::{BuiltinsOnly, Code, Severity, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply};
use roce_render::edits::{self, Need};
use roce_render::{RenderOptions, Target, lower, render};
use serde_json::Value;

/// The lint codes that say a need is unmet: its own (`Need::lint_code`: none where the profile annotation
/// or the GPU count, the workload's, is left out), and the others of the needs lint still judges with
/// checks of their own.
fn codes(need: Need) -> Vec<Code> {
    let others: &[Code] = match need {
        Need::RailNics => &[Code::LintCloudInterfaces],
        Need::RdmaDevices => &[Code::LintProviderResource, Code::LintDraNicClaim],
        Need::Environment => &[Code::LintProviderEnv],
        _ => &[],
    };
    need.lint_code()
        .into_iter()
        .chain(others.iter().copied())
        .collect()
}

/// Lint's severity for a consequence (docs/rules.md, "Severity by consequence").
fn severity(c: Consequence) -> Severity {
    match c {
        Consequence::Fails | Consequence::SilentTcp => Severity::Error,
        Consequence::Slower => Severity::Warning,
        Consequence::Differs => Severity::Info,
    }
}

/// The documents of `text`, with the lists Kubernetes merges by key in key order: `volumes` and
/// `resourceClaims` and a container's `resources.claims` by name, `volumeMounts` by mount path (the merge keys
/// of PodSpec and Container),
/// so a volume apply appends after the pod's own ones is the same pod. `env` keeps its order (a later
/// variable may expand an earlier one).
fn documents(text: &str) -> Vec<Value> {
    fn keyed(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    let key = match k.as_str() {
                        "volumes" | "resourceClaims" | "claims" => Some("name"),
                        "volumeMounts" => Some("mountPath"),
                        _ => None,
                    };
                    if let (Some(key), Value::Array(items)) = (key, &mut *child) {
                        items.sort_by_key(|i| {
                            i.get(key).and_then(Value::as_str).map(str::to_string)
                        });
                    }
                    keyed(child);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(keyed),
            _ => {}
        }
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).unwrap();
    let mut docs: Vec<Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    docs.iter_mut().for_each(keyed);
    docs
}

fn sorted(mut docs: Vec<Value>) -> Vec<Value> {
    docs.sort_by_key(|d| format!("{}/{}", d["kind"], d["metadata"]["name"]));
    docs
}

/// The example profiles that turn on what no built-in does (NCCL's observability: the Inspector's volume;
/// the NVIDIA runtime's RuntimeClass on k3s).
const EXAMPLES: &[&str] = &[
    "nccl-observability.kdl",
    "nccl-inspector-prometheus.yaml",
    "k3s-h100-ib.kdl",
];

/// Every built-in, then every example, by name.
fn profiles() -> Vec<(String, roce_model::Profile)> {
    let builtins = builtin::names().map(|n| {
        let p = load(builtin::source(n).unwrap(), &BuiltinsOnly)
            .profile
            .unwrap();
        (n.to_string(), p)
    });
    let examples = EXAMPLES.iter().map(|f| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(f);
        let text = std::fs::read_to_string(path).unwrap();
        let loaded = load(Source::new(*f, text), &BuiltinsOnly);
        let p = loaded
            .profile
            .unwrap_or_else(|| panic!("{f}: {:#?}", loaded.problems));
        (format!("examples/{f}"), p)
    });
    builtins.chain(examples).collect()
}

#[test]
fn each_requirement_left_out_is_reported_by_lint_and_written_back_by_apply() {
    let opts = RenderOptions::default();
    let mut checked = 0;
    let mut inspector = 0;
    let mut runtime_class = 0;
    let mut wrong: Vec<String> = Vec::new();
    for (name, profile) in profiles() {
        let plan = lower(&profile);
        let reqs = edits::requirements(&plan, None);
        let every: Vec<_> = edits::all(&reqs).collect();
        let full = edits::pod(&plan, &opts, &every);
        assert_eq!(
            full,
            render(&plan, Target::Pod, &opts).unwrap()[0].contents,
            "{name}: the Pod target is every edit on an empty pod"
        );
        let lint = |text: &str| {
            Linter::new(&profile, LintOptions::default())
                .lint(Source::new("pod.yaml", text.to_string()))
                .problems
        };
        let counted = |ps: &[roce_model::Problem]| -> Vec<(Code, Severity, String)> {
            ps.iter()
                .filter(|p| p.severity != Severity::Info)
                .map(|p| (p.code, p.severity, p.message.clone()))
                .collect()
        };
        assert_eq!(counted(&lint(&full)), [], "{name}: the Pod lints clean");
        for r in &reqs {
            let rest: Vec<_> = reqs
                .iter()
                .filter(|o| o.need != r.need)
                .flat_map(|o| &o.edits)
                .collect();
            let without = edits::pod(&plan, &opts, &rest);
            let found = lint(&without);
            let want = codes(r.need);
            // What lint says about the pod without this requirement: only codes of this need.
            let stray: Vec<_> = found
                .iter()
                .filter(|p| p.severity != Severity::Info && !want.contains(&p.code))
                .map(|p| format!("{} {}", p.code, p.message))
                .collect();
            if !stray.is_empty() {
                wrong.push(format!(
                    "{name}, {:?} left out: lint reports other causes: {stray:#?}",
                    r.need
                ));
            }
            // Met by what the pod still has (the RDMA resource keeps it on fabric nodes): lint is right to
            // be silent, and says nothing else either (checked above).
            let met_otherwise = r
                .also_met_by
                .iter()
                .any(|n| reqs.iter().any(|o| o.need == *n));
            if !want.is_empty() && !met_otherwise {
                let of_need: Vec<_> = found.iter().filter(|p| want.contains(&p.code)).collect();
                match of_need.iter().map(|p| p.severity).max() {
                    None => wrong.push(format!("{name}, {:?} left out: lint is silent", r.need)),
                    Some(strongest) if strongest != severity(r.consequence) => wrong.push(format!(
                        "{name}, {:?} left out: lint's severity {strongest:?} is not the requirement's consequence ({:?}): {:#?}",
                        r.need,
                        r.consequence,
                        of_need.iter().map(|p| &p.message).collect::<Vec<_>>()
                    )),
                    Some(_) => {}
                }
            }
            // apply writes back what was left out (GPUs are the workload's: apply never adds them).
            if r.need == Need::Gpus {
                continue;
            }
            let applied = apply(
                &Source::new("pod.yaml", without.clone()),
                &plan,
                &ApplyOptions::default(),
            )
            .unwrap_or_else(|p| panic!("{name}, {:?} left out: apply: {p:#?}", r.need));
            // The objects the claims name come before the pod (`kubectl apply -f` creates them first); among
            // themselves their order does not matter.
            let docs = documents(&applied.text);
            let pod_at = docs.iter().position(|d| d["kind"] == "Pod");
            if pod_at != Some(docs.len() - 1) {
                wrong.push(format!(
                    "{name}, {:?} left out: apply puts an object after the pod:\n{}",
                    r.need, applied.text
                ));
            }
            if sorted(docs) != sorted(documents(&full)) {
                wrong.push(format!(
                    "{name}, {:?} left out: apply does not write back the Pod:\n{}\nbut the Pod is:\n{full}",
                    r.need, applied.text
                ));
            }
            checked += 1;
            if r.need == Need::InspectorOutput {
                inspector += 1;
            }
            if r.need == Need::RuntimeClass {
                runtime_class += 1;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(checked >= 100, "only {checked} requirements checked");
    assert_eq!(inspector, 2, "the examples' Inspector volume");
    assert_eq!(runtime_class, 1, "the k3s example's runtime class");
}

/// `doctor` asks the same requirements of a host. In a healthy pod of each built-in (what the Pod target
/// gets on a node of its pool: the rails' devices and verbs nodes, IPC_LOCK, a memory-backed /dev/shm,
/// the IMEX channel, the topology file, the provider's plugin) every requirement a host can show is met,
/// and the rest say why a host cannot show them; each fact taken away leaves its requirement unmet, with
/// the finding that says so.
#[test]
fn doctor_asks_the_same_requirements_of_a_host() {
    use crate::support::tree::{self, CAP_DOCKER_DEFAULT, Tree};
    use roce_inspect::doctor::{self, Env, Seen};

    // What a host cannot show; every other need has a check that sees it.
    let unseen = [
        Need::Provenance,
        Need::NodePool,
        Need::Placement,
        Need::InspectorOutput,
        Need::RuntimeClass,
    ];
    let healthy = |profile: &roce_model::Profile, plan: &roce_render::Plan| -> Tree {
        let t = tree::pod_of(profile, plan);
        t.file(
            "/proc/self/mounts",
            "overlay / overlay rw 0 0\ntmpfs /dev/shm tmpfs rw,relatime,size=1073741824k 0 0\n",
        );
        if plan.dra_spec.nvlink_domain.compute_domain().is_some() {
            t.file("/dev/nvidia-caps-imex-channels/channel0", "");
        }
        if let Some(topo) = &plan.topology {
            t.file(&topo.path, "<system version=\"1\"/>\n");
        }
        for dir in profile.nccl_net.library_dirs() {
            t.file(&format!("{dir}/libnccl-net.so"), "");
        }
        t
    };
    type Take = fn(&Tree, &roce_render::Plan);
    let takes: [(Need, &str, Take); 7] = [
        (Need::RdmaDevices, "no /dev/infiniband", |t, _| {
            t.remove("/dev/infiniband");
        }),
        (Need::Memlock, "no IPC_LOCK, 64 KiB memlock", |t, _| {
            t.status(CAP_DOCKER_DEFAULT).memlock("65536");
        }),
        (Need::SharedMemory, "the runtime's /dev/shm", |t, _| {
            t.file(
                "/proc/self/mounts",
                "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n",
            );
        }),
        (Need::NvlinkDomain, "no IMEX channel", |t, _| {
            t.remove("/dev/nvidia-caps-imex-channels/channel0");
        }),
        (Need::TopologyFile, "no topology file", |t, plan| {
            if let Some(topo) = &plan.topology {
                t.remove(&topo.path);
            }
        }),
        (Need::Gpus, "one GPU too few", |t, plan| {
            t.remove(&format!("/dev/nvidia{}", plan.gpus_per_node - 1));
        }),
        (Need::Environment, "NCCL_SOCKET_IFNAME wrong", |_, _| {}),
    ];
    let mut judged = 0;
    for (name, profile) in profiles() {
        let plan = lower(&profile);
        let reqs = edits::requirements(&plan, None);
        let env = tree::pod_env(&plan);
        let t = healthy(&profile, &plan);
        let report = doctor::probe(
            &t.root(),
            Some(Env::from_pairs(env.clone())),
            Some(&profile),
        );
        assert_eq!(
            report
                .requirements
                .iter()
                .map(|r| r.need)
                .collect::<Vec<_>>(),
            reqs.iter().map(|r| r.need).collect::<Vec<_>>(),
            "{name}: doctor judges the plan's requirements, in order"
        );
        for r in &report.requirements {
            let want_unseen = unseen.contains(&r.need);
            assert!(
                match &r.seen {
                    Seen::Met => !want_unseen,
                    Seen::Unknown(_) => want_unseen,
                    Seen::Unmet => false,
                },
                "{name}: healthy pod, {:?} is {:?} ({:?}); findings: {:#?}",
                r.need,
                r.seen,
                r.findings,
                report.findings
            );
        }
        for (need, what, take) in takes {
            if !reqs.iter().any(|r| r.need == need) {
                continue;
            }
            let t = healthy(&profile, &plan);
            take(&t, &plan);
            let mut env = env.clone();
            if need == Need::Environment {
                env.retain(|(k, _)| k != "NCCL_SOCKET_IFNAME");
                env.push(("NCCL_SOCKET_IFNAME".into(), "=nosuch0".into()));
            }
            let report = doctor::probe(&t.root(), Some(Env::from_pairs(env)), Some(&profile));
            let unmet: Vec<Need> = report
                .requirements
                .iter()
                .filter(|r| r.seen == Seen::Unmet)
                .map(|r| r.need)
                .collect();
            assert!(
                unmet.contains(&need),
                "{name}, {what}: {need:?} should be unmet, unmet: {unmet:?}; findings: {:#?}",
                report.findings
            );
            // The host-network mode's devices are its namespace's: both needs see a missing device node.
            let related =
                |n: &Need| *n == need || (need == Need::RdmaDevices && *n == Need::HostNetwork);
            assert!(
                unmet.iter().all(related),
                "{name}, {what}: only {need:?} is unmet, got {unmet:?}"
            );
            judged += 1;
        }
    }
    assert!(judged >= 60, "{judged} host mutations judged");
}
