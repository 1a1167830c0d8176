//! Every target × every built-in profile: snapshots, determinism, KDL/YAML parity, one env across
//! targets, and the real consumers (kubernetes-validate --strict, hadolint, bash, sh).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_model::{BuiltinsOnly, Profile, Source, builtin, load};
use roce_render::exec::ExecWrap;
use roce_render::plan::{Note, Topic};
use roce_render::{Plan, RenderError, RenderOptions, Target, Workload, plan, render};

use crate::support::consumers;

fn profile(name: &str) -> Profile {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    loaded
        .profile
        .unwrap_or_else(|| panic!("{name}: {:#?}", loaded.problems))
}

/// Example profiles (`examples/`) that turn on what no built-in does, each with the targets pinned by a
/// snapshot (`TARGET@examples__STEM`): NCCL's diagnostics and the Inspector's JSON records into an
/// `emptyDir`, and its Prometheus files into the node's directory (a `hostPath`); the NVIDIA runtime's
/// RuntimeClass on k3s (`runtimeClassName` in every pod that runs ranks).
const EXAMPLES: &[(&str, &[Target])] = &[
    ("nccl-observability.kdl", Target::ALL),
    (
        "nccl-inspector-prometheus.yaml",
        &[Target::Pod, Target::Kustomize, Target::Sbatch],
    ),
    (
        "k3s-h100-ib.kdl",
        &[
            Target::Pod,
            Target::Kustomize,
            Target::NcclTestsMpijob,
            Target::UcxPerftest,
        ],
    ),
];

/// An example profile by its file name under `examples/`.
fn example(file: &str) -> Profile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let loaded = load(Source::new(file, text), &BuiltinsOnly);
    loaded
        .profile
        .unwrap_or_else(|| panic!("{file}: {:#?}", loaded.problems))
}

/// `pod@examples__nccl-observability`.
fn example_snapshot(target: Target, file: &str) -> String {
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    format!("{}@examples__{stem}", target.slug())
}

/// Every built-in's plan and every example's, by name.
fn all_plans() -> Vec<(String, Plan)> {
    builtin::names()
        .map(|n| (n.to_string(), plan::lower(&profile(n))))
        .chain(
            EXAMPLES
                .iter()
                .map(|(f, _)| (format!("examples/{f}"), plan::lower(&example(f)))),
        )
        .collect()
}

fn render_all(plan: &Plan, target: Target) -> String {
    render_with(plan, target, &RenderOptions::default())
}

fn render_with(plan: &Plan, target: Target, opts: &RenderOptions) -> String {
    let files = render(plan, target, opts).unwrap();
    if files.len() == 1 {
        return files[0].contents.clone();
    }
    files
        .iter()
        .map(|f| format!("=== {} ===\n{}", f.path, f.contents))
        .collect()
}

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/render")
}

fn snapshot_name(target: Target, profile: &str) -> String {
    format!("{}@{}", target.slug(), profile.replace('/', "__"))
}

#[test]
fn snapshots_of_every_target_for_every_profile() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/render");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for name in builtin::names() {
            let plan = plan::lower(&profile(name));
            for &target in Target::ALL {
                insta::assert_snapshot!(snapshot_name(target, name), render_all(&plan, target));
            }
        }
    });
}

/// Options that add steps to a target's output, pinned for one profile: (snapshot name, target, profile,
/// options). The other options are checked by their own tests.
fn option_snapshots() -> Vec<(String, Target, &'static str, RenderOptions)> {
    let profile = "coreweave/gb300-roce";
    vec![(
        snapshot_name(Target::Kustomize, profile).replacen('@', "+exec@", 1),
        Target::Kustomize,
        profile,
        RenderOptions {
            exec: Some(ExecWrap {
                profile: profile.to_string(),
                command: None,
            }),
            ..RenderOptions::default()
        },
    )]
}

#[test]
fn snapshots_of_options() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/render");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (snapshot, target, name, opts) in option_snapshots() {
            let plan = plan::lower(&profile(name));
            insta::assert_snapshot!(snapshot, render_with(&plan, target, &opts));
        }
    });
}

#[test]
fn snapshots_of_examples() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/render");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (file, targets) in EXAMPLES {
            let plan = plan::lower(&example(file));
            for &target in *targets {
                insta::assert_snapshot!(example_snapshot(target, file), render_all(&plan, target));
            }
        }
    });
}

#[test]
fn no_snapshot_is_missing_or_orphaned() {
    let mut expected: Vec<String> = builtin::names()
        .flat_map(|n| {
            Target::ALL
                .iter()
                .map(move |t| format!("{}.snap", snapshot_name(*t, n)))
        })
        .chain(
            option_snapshots()
                .into_iter()
                .map(|(n, ..)| format!("{n}.snap")),
        )
        .chain(EXAMPLES.iter().flat_map(|(f, targets)| {
            targets
                .iter()
                .map(move |t| format!("{}.snap", example_snapshot(*t, f)))
        }))
        .collect();
    expected.sort();
    let mut found: Vec<String> = std::fs::read_dir(snapshot_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap"))
        .collect();
    found.sort();
    assert_eq!(
        found, expected,
        "snapshots/render must hold exactly one snapshot per target × profile"
    );
}

#[test]
fn rendering_is_deterministic_and_identical_from_the_yaml_form() {
    for name in builtin::names() {
        // the YAML front end's reading of the built-in, written as YAML from its KDL
        let text = builtin::yaml(name).unwrap();
        let loaded = load(Source::new(format!("{name}.yaml"), text), &BuiltinsOnly);
        let from_yaml = plan::lower(&loaded.profile.unwrap());
        let kdl = load(builtin::source(name).unwrap(), &BuiltinsOnly);
        let from_kdl = plan::lower(&kdl.profile.unwrap());
        for &target in Target::ALL {
            let a = render_all(&from_kdl, target);
            assert_eq!(
                a,
                render_all(&from_kdl, target),
                "{name} {target}: not deterministic"
            );
            assert_eq!(
                a,
                render_all(&from_yaml, target),
                "{name} {target}: the KDL and the YAML form differ"
            );
        }
    }
}

/// Env as each consumer reads it back, compared with the plan (every built-in, every example).
#[test]
fn every_target_carries_the_same_env() {
    for (name, plan) in all_plans() {
        let want: BTreeMap<String, String> = plan
            .env
            .iter()
            .map(|e| (e.name.clone(), e.value.clone()))
            .collect();
        assert_eq!(want.len(), plan.env.len(), "{name}: duplicate env names");
        assert_eq!(
            pod_env(&render_all(&plan, Target::Pod)),
            want,
            "{name}: pod"
        );
        assert_eq!(
            dockerfile_env(&render_all(&plan, Target::Dockerfile)),
            want,
            "{name}: dockerfile"
        );
        let names: Vec<&str> = want.keys().map(String::as_str).collect();
        let sbatch = render_all(&plan, Target::Sbatch);
        let exports: String = sbatch
            .lines()
            .filter(|l| l.starts_with("export "))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(shell_env(&exports, &names), want, "{name}: sbatch");
        let dotenv = render_all(&plan, Target::Env);
        assert_eq!(
            shell_env(&format!("set -a\n{dotenv}"), &names),
            want,
            "{name}: env file sourced by sh"
        );
        // The Kustomize patch holds every variable, each as its own `name:` entry.
        let kustomize = render_all(&plan, Target::Kustomize);
        for name_ in &names {
            assert!(
                kustomize.contains(&format!("- name: {name_}\n")),
                "{name}: kustomize lacks {name_}"
            );
        }
    }
}

fn pod_env(yaml: &str) -> BTreeMap<String, String> {
    // The Pod is the last document (the objects its DRA claims name come first).
    let pod: serde_json::Value = serde_saphyr::from_multiple::<serde_json::Value>(yaml)
        .unwrap()
        .pop()
        .unwrap();
    let env = pod["spec"]["containers"][0]["env"].as_array().unwrap();
    env.iter()
        .map(|e| {
            let value = e["value"]
                .as_str()
                .unwrap_or_else(|| panic!("{e}: value is not a string"));
            (e["name"].as_str().unwrap().to_string(), value.to_string())
        })
        .collect()
}

/// Dockerfile `ENV k="v" \` continuation lines, unquoted by BuildKit's double-quote rules.
fn dockerfile_env(text: &str) -> BTreeMap<String, String> {
    let joined = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(" \\\n", " ");
    let body = joined
        .trim()
        .strip_prefix("ENV ")
        .expect("one ENV instruction");
    let mut out = BTreeMap::new();
    let mut chars = body.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            break;
        }
        assert_eq!(chars.next(), Some('"'), "{key}: value is double-quoted");
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => value.push(chars.next().unwrap()),
                '"' => break,
                c => value.push(c),
            }
        }
        out.insert(key, value);
    }
    out
}

/// Run `script` in `sh`, then print the named variables, NUL-separated.
fn shell_env(script: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut full = script.to_string();
    for n in names {
        full.push_str(&format!("printf '%s=%s\\0' {n} \"${n}\"\n"));
    }
    let out = Command::new("sh").arg("-c").arg(&full).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn pods_pass_kubernetes_strict_schema_validation() {
    for (name, plan) in all_plans() {
        let pod = render_all(&plan, Target::Pod);
        if let Err(e) = consumers::validate_manifest(&pod, plan.dra.min_kubernetes_minor()) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn dockerfile_fragments_pass_hadolint_after_from() {
    for (name, plan) in all_plans() {
        let env = render_all(&plan, Target::Dockerfile);
        let dockerfile = format!("FROM ubuntu:24.04\n{env}");
        if let Err(e) = consumers::hadolint(&dockerfile) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn sbatch_scripts_pass_bash_syntax_check() {
    for (name, plan) in all_plans() {
        let script = render_all(&plan, Target::Sbatch);
        if let Err(e) = consumers::bash_syntax(&script) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn gb300_roce_pod_has_the_fabric_wiring() {
    let pod: serde_json::Value = serde_saphyr::from_str(&render_all(
        &plan::lower(&profile("coreweave/gb300-roce")),
        Target::Pod,
    ))
    .unwrap();
    let nets: serde_json::Value = serde_json::from_str(
        pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let names: Vec<&str> = nets
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 16);
    assert_eq!(names[0], "ibs0p0-macvlan");
    assert_eq!(names[1], "ibs0p1-macvlan", "rail order: NIC-major");
    assert_eq!(names[15], "ibs3p3-macvlan");
    assert!(
        nets.as_array()
            .unwrap()
            .iter()
            .all(|n| n["namespace"] == "cw-multus")
    );
    let c = &pod["spec"]["containers"][0];
    for side in ["requests", "limits"] {
        assert_eq!(c["resources"][side]["rdma/ib"], "1", "{side}");
        assert_eq!(c["resources"][side]["nvidia.com/gpu"], "4", "{side}");
    }
    assert_eq!(c["securityContext"]["capabilities"]["add"][0], "IPC_LOCK");
}

#[test]
fn h100_ib_pod_has_no_multus_and_no_roce_variables() {
    let yaml = render_all(&plan::lower(&profile("coreweave/h100-ib")), Target::Pod);
    let pod: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    assert!(
        pod["metadata"]["annotations"]
            .get("k8s.v1.cni.cncf.io/networks")
            .is_none()
    );
    for roce_only in [
        "NCCL_IB_ADDR_FAMILY",
        "NCCL_IB_ADDR_RANGE",
        "NCCL_IB_TC",
        "NCCL_IB_GID_INDEX",
        "UCX_IB_GID_INDEX",
    ] {
        assert!(
            !yaml.contains(roce_only),
            "{roce_only} in an InfiniBand pod"
        );
    }
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
        "8"
    );
}

#[test]
fn sunk_nodeset_outputs_carry_env_only() {
    let plan = plan::lower(&profile("coreweave/gb300-roce-sunk"));
    let sbatch = render_all(&plan, Target::Sbatch);
    for wiring in ["Multus", "macvlan", "rdma/ib", "IPC_LOCK", "k8s.v1.cni"] {
        assert!(!sbatch.contains(wiring), "SUNK sbatch mentions {wiring}");
    }
    let direct = render_all(
        &plan::lower(&profile("coreweave/gb300-roce")),
        Target::Sbatch,
    );
    assert!(
        direct.contains("16 Multus networks"),
        "the guard above must be able to fail"
    );
    assert_eq!(plan.env_value("NCCL_IB_TC"), Some("96"));
}

#[test]
fn nixl_dockerfile_states_the_rdma_core_requirement() {
    let nixl = render_all(
        &plan::lower(&profile("coreweave/gb300-roce-nixl")),
        Target::Dockerfile,
    );
    assert!(nixl.contains("rdma-core >= 54"));
    let tcp = render_all(
        &plan::lower(&profile("coreweave/gb300-roce")),
        Target::Dockerfile,
    );
    assert!(
        !tcp.contains("rdma-core"),
        "only UCX RDMA mode needs the comment"
    );
}

/// Emitters print the plan's notes, by topic, and compose no fabric prose of their own: a plan whose notes
/// are replaced by markers shows each target's readers exactly the topics they act on.
#[test]
fn each_target_prints_the_plans_notes_for_its_readers() {
    use Topic::{Image, Nodes, Ucx, Workload as Test};
    let topics = [Image, Nodes, Ucx, Test];
    let marker = |t: Topic| format!("MARKER-{t:?}");
    let expected = |target: Target| -> &[Topic] {
        match target {
            Target::Dockerfile => &[Image],
            Target::Sbatch => &[Nodes],
            Target::NcclTestsSbatch => &[Nodes, Test],
            Target::NcclTestsMpijob => &[Test],
            Target::UcxPerftest => &[Ucx, Test, Image],
            Target::Pod | Target::Kustomize | Target::Env => &[],
        }
    };
    let job = plan::lower(&profile("coreweave/gb300-roce-nixl"));
    for &target in Target::ALL {
        let mut p = job.with_workload(target.workload()).unwrap();
        p.notes = topics
            .iter()
            .map(|&topic| Note {
                topic,
                text: marker(topic),
            })
            .collect();
        let out = render_all(&p, target);
        // The topics printed, in the order the artifact prints them.
        let mut printed: Vec<(usize, Topic)> = topics
            .into_iter()
            .filter_map(|t| out.find(&format!("# {}\n", marker(t))).map(|at| (at, t)))
            .collect();
        printed.sort_by_key(|(at, _)| *at);
        let printed: Vec<Topic> = printed.into_iter().map(|(_, t)| t).collect();
        assert_eq!(printed, expected(target), "{target}");
        for fabric_prose in ["rdma-core", "must already attach", "UCX over RDMA, as"] {
            assert!(
                !out.contains(fabric_prose),
                "{target}: `{fabric_prose}` comes only from the notes"
            );
        }
    }
}

/// One lowering: a workload target renders the same from the job's plan (lowered on the way) as from the
/// plan lowered for its workload, and a plan lowered for a validation workload renders no other
/// workload's target.
#[test]
fn workload_targets_render_the_workload_lowering() {
    let p = profile("coreweave/gb300-roce-nixl");
    let job = plan::lower(&p);
    for &target in Target::ALL {
        let lowered = plan::lower_workload(&p, target.workload());
        assert_eq!(lowered.workload, target.workload());
        assert_eq!(
            render_all(&lowered, target),
            render_all(&job, target),
            "{target}"
        );
        for &other in Target::ALL {
            let wrong = render(&lowered, other, &RenderOptions::default());
            if other.workload() == target.workload() || target.workload() == Workload::Job {
                assert!(
                    wrong.is_ok(),
                    "{target} → {other}: the job's plan renders every target"
                );
            } else {
                assert!(
                    matches!(wrong, Err(RenderError::Workload { plan, wanted })
                        if plan == target.workload() && wanted == other.workload()),
                    "{target} → {other}: {wrong:?}"
                );
            }
        }
    }
    // What the workloads add: their logging variables, after the profile's own of the same consumer.
    let nccl = plan::lower_workload(&p, Workload::NcclTests);
    let ucx = plan::lower_workload(&p, Workload::UcxPerftest);
    assert_eq!(
        job.env_value("NCCL_DEBUG"),
        None,
        "the guards below can fail"
    );
    assert_eq!(nccl.env_value("NCCL_DEBUG"), Some("INFO"));
    assert_eq!(nccl.env_value("UCX_LOG_LEVEL"), None);
    assert_eq!(ucx.env_value("UCX_LOG_LEVEL"), Some("info"));
    assert_eq!(ucx.env_value("NCCL_DEBUG"), None);
    assert_eq!(job.env.len() + 2, nccl.env.len());
    assert_eq!(job.env.len() + 1, ucx.env.len());
}

#[test]
fn no_target_grants_more_than_the_fabric_needs() {
    for name in builtin::names() {
        let plan = plan::lower(&profile(name));
        for &target in Target::ALL {
            let text = render_all(&plan, target);
            // A host-network profile (`nics host-network`, the vendor's mode) asks for exactly these two:
            // the node's network namespace and a privileged container for the node's RDMA devices.
            let needed: &[&str] = if plan.host_network {
                &["privileged", "hostNetwork"]
            } else {
                &[]
            };
            for risky in [
                "privileged",
                "hostNetwork",
                "hostPID",
                "hostIPC",
                "SYS_ADMIN",
                "allowPrivilegeEscalation: true",
            ] {
                if needed.contains(&risky) {
                    continue;
                }
                assert!(
                    !text.contains(risky),
                    "{name} {target}: `{risky}` in output"
                );
            }
        }
        // Only a profile that says `nics host-network` gets them.
        assert_eq!(
            plan.host_network,
            profile(name).nics.value.host_network(),
            "{name}"
        );
    }
}

/// Render determinism beyond the built-ins: a generated profile (any built-in extended with env, NCCL
/// knobs, GPUs per node and, on RoCE, a traffic class) loaded twice from scratch renders every target
/// byte-identically both times (hash maps with fresh random seeds in between).
mod generated_profiles {
    use super::*;
    use proptest::prelude::*;

    fn yaml(
        parent: &str,
        env: &BTreeMap<String, String>,
        knobs: &BTreeMap<String, u32>,
        gpus: u32,
        tc: u32,
    ) -> String {
        let mut y = format!(
            "name: t/p\nextends: {parent}\nnode-pool:\n  name: p\n  gpus-per-node: {gpus}\n"
        );
        if parent.contains("roce") {
            y.push_str(&format!("fabric:\n  kind: roce\n  traffic-class: {tc}\n"));
        }
        if !knobs.is_empty() {
            y.push_str("nccl:\n  knobs:\n");
            for (k, v) in knobs {
                y.push_str(&format!("    {k}: \"{v}\"\n"));
            }
        }
        if !env.is_empty() {
            y.push_str("env:\n");
            for (k, v) in env {
                y.push_str(&format!("  {k}: {}\n", serde_json::to_string(v).unwrap()));
            }
        }
        y
    }

    fn render_everything(text: &str) -> Vec<String> {
        let loaded = load(Source::new("p.yaml", text), &BuiltinsOnly);
        let Some(p) = loaded.profile else {
            return vec![format!(
                "{:?}",
                loaded.problems.iter().map(|p| p.code).collect::<Vec<_>>()
            )];
        };
        let plan = plan::lower(&p);
        Target::ALL
            .iter()
            .map(|&t| format!("{t}: {:?}", render(&plan, t, &RenderOptions::default())))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn every_target_renders_the_same_twice(
            parent in 0..7usize,
            env in proptest::collection::btree_map(
                "[A-Z][A-Z0-9_]{0,8}".prop_filter("not generated", |k| !k.starts_with("NCCL_") && !k.starts_with("UCX_") && !k.starts_with("OMPI_")),
                "[ -~]{0,16}",
                0..5,
            ),
            knobs in proptest::collection::btree_map("NCCL_TEST_[A-Z]{1,6}", 0u32..100_000, 0..3),
            gpus in 1u32..9,
            tc in 0u32..256,
        ) {
            let parents: Vec<&str> = builtin::names().collect();
            let text = yaml(parents[parent % parents.len()], &env, &knobs, gpus, tc);
            let first = render_everything(&text);
            prop_assert!(first.len() == Target::ALL.len(), "did not load: {:?}\n{}", first, text);
            prop_assert_eq!(first, render_everything(&text), "not deterministic:\n{}", text);
        }
    }
}

/// The examples' Inspector in each target: the Pod and the Kustomize patch mount its directory (an
/// `emptyDir`, or the node's directory as a `hostPath`), the batch script and the Dockerfile say where the
/// records go and what the image must ship; no built-in turns any of it on.
#[test]
fn the_inspector_reaches_every_target() {
    let pod_of = |plan: &Plan| -> serde_json::Value {
        serde_saphyr::from_multiple::<serde_json::Value>(&render_all(plan, Target::Pod))
            .unwrap()
            .pop()
            .unwrap()
    };
    let volume = |pod: &serde_json::Value| {
        pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "nccl-inspector")
            .cloned()
    };
    let mount = |pod: &serde_json::Value| {
        pod["spec"]["containers"][0]["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "nccl-inspector")
            .map(|m| m["mountPath"].as_str().unwrap().to_string())
    };

    let json = plan::lower(&example("nccl-observability.kdl"));
    assert_eq!(json.env_value("NCCL_RUN_DIAGNOSTICS"), Some("1"));
    assert_eq!(json.env_value("NCCL_PROFILER_PLUGIN"), Some("inspector"));
    assert_eq!(json.env_value("NCCL_INSPECTOR_ENABLE"), Some("1"));
    assert_eq!(json.env_value("NCCL_INSPECTOR_PROM_DUMP"), None);
    assert_eq!(
        json.env_value("NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS"),
        Some("500")
    );
    let pod = pod_of(&json);
    assert_eq!(
        volume(&pod).unwrap(),
        serde_json::json!({"name": "nccl-inspector", "emptyDir": {}})
    );
    assert_eq!(mount(&pod).as_deref(), Some("/var/log/nccl-inspector"));
    let kustomize = render_all(&json, Target::Kustomize);
    assert!(
        kustomize.contains("mountPath: /var/log/nccl-inspector"),
        "{kustomize}"
    );
    let sbatch = render_all(&json, Target::Sbatch);
    assert!(
        sbatch.contains("writes its JSON records to /var/log/nccl-inspector on each node"),
        "{sbatch}"
    );
    assert!(!sbatch.contains("emptyDir:"), "no volume in a batch script");
    let dockerfile = render_all(&json, Target::Dockerfile);
    assert!(
        dockerfile.contains("libnccl-profiler-inspector.so"),
        "{dockerfile}"
    );

    let prom = plan::lower(&example("nccl-inspector-prometheus.yaml"));
    assert_eq!(prom.env_value("NCCL_INSPECTOR_PROM_DUMP"), Some("1"));
    assert_eq!(
        prom.env_value("NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS"),
        Some("30000000")
    );
    assert_eq!(prom.env_value("NCCL_RUN_DIAGNOSTICS"), None);
    let pod = pod_of(&prom);
    assert_eq!(
        volume(&pod).unwrap()["hostPath"],
        serde_json::json!({"path": "/var/lib/node_exporter/textfile_collector", "type": "DirectoryOrCreate"})
    );
    assert_eq!(
        mount(&pod).as_deref(),
        Some("/var/lib/node_exporter/textfile_collector")
    );

    for name in builtin::names() {
        let plan = plan::lower(&profile(name));
        assert!(
            plan.inspector.is_none()
                && plan
                    .env
                    .iter()
                    .all(|e| { !roce_model::fabric::observe::is_observability(&e.name) }),
            "{name} turns NCCL's observability on"
        );
        assert!(volume(&pod_of(&plan)).is_none(), "{name}");
    }
}
