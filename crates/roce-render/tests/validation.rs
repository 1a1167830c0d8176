//! Validation targets (`nccl-tests-mpijob`, `nccl-tests-sbatch`, `ucx-perftest`) for every built-in profile:
//! schema checks with real validators (the mpi-operator v2beta1 CRD schema through Python `jsonschema`,
//! kubernetes-validate --strict, bash -n), and the content the jobs must carry. Snapshots of every target ×
//! profile live in tests/render.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use roce_model::fabric::env::NCCL_DEBUG_SUBSYS_NET;
use roce_model::{BuiltinsOnly, Source, builtin, load};
use roce_render::plan::EnvVar;
use roce_render::validation::ValidationOptions;
use roce_render::{Plan, RenderError, RenderOptions, Target, Workload, plan, render};
use serde_json::{Value, json};

use crate::support::consumers;

fn plan_of(name: &str) -> Plan {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    plan::lower(
        &loaded
            .profile
            .unwrap_or_else(|| panic!("{name}: {:#?}", loaded.problems)),
    )
}

/// A profile written inline (KDL), e.g. one that extends a built-in.
fn plan_from(kdl: &str) -> Plan {
    let loaded = load(Source::new("inline.kdl", kdl.to_string()), &BuiltinsOnly);
    plan::lower(
        &loaded
            .profile
            .unwrap_or_else(|| panic!("{kdl}: {:#?}", loaded.problems)),
    )
}

/// The env of the nccl-tests workload lowered from a job plan.
fn nccl_env(plan: &Plan) -> Vec<EnvVar> {
    plan.with_workload(Workload::NcclTests).unwrap().env
}

fn rendered(plan: &Plan, target: Target, opts: &RenderOptions) -> String {
    let files = render(plan, target, opts).unwrap_or_else(|e| panic!("{target}: {e}"));
    assert_eq!(files.len(), 1, "{target} writes one file");
    files[0].contents.clone()
}

fn default(plan: &Plan, target: Target) -> String {
    rendered(plan, target, &RenderOptions::default())
}

fn docs(yaml: &str) -> Vec<Value> {
    yaml.split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{e}\n{d}")))
        .collect()
}

fn one_doc(yaml: &str) -> Value {
    serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The workload document of a validation job: the last one (the objects its DRA claims name come first).
fn workload_doc(yaml: &str) -> Value {
    docs(yaml).pop().unwrap()
}

fn env_map(container: &Value) -> BTreeMap<String, String> {
    container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let v = e["value"]
                .as_str()
                .unwrap_or_else(|| panic!("{e}: value is not a string"));
            (e["name"].as_str().unwrap().to_string(), v.to_string())
        })
        .collect()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------------------
// The mpi-operator CRD schema, checked with Python jsonschema.

/// `Ok(true)`: valid; `Ok(false)`: skipped; `Err(report)`: the validator rejected the document.
fn check_mpijob_schema(doc: &Value) -> Result<bool, String> {
    consumers::crd_schema_strict(doc, "mpi-operator-v2beta1.json")
}

/// Each replica's pod template as a Pod, for kubernetes-validate.
fn templates_as_pods(job: &Value) -> String {
    let mut pods = Vec::new();
    for (role, spec) in job["spec"]["mpiReplicaSpecs"].as_object().unwrap() {
        let mut metadata = spec["template"]["metadata"].clone();
        metadata["name"] = json!(format!("template-{}", role.to_lowercase()));
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec["template"]["spec"]});
        pods.push(serde_json::to_string_pretty(&pod).unwrap());
    }
    pods.join("\n---\n")
}

#[test]
fn mpijobs_pass_the_mpi_operator_crd_schema_and_their_pod_templates_pass_kubernetes_strict() {
    for name in builtin::names() {
        let plan = plan_of(name);
        let job = workload_doc(&default(&plan, Target::NcclTestsMpijob));
        if let Err(e) = check_mpijob_schema(&job) {
            panic!("{name}: {e}");
        }
        let versions = consumers::k8s_versions_from(plan.dra.min_kubernetes_minor());
        if let Err(e) = consumers::kubernetes_validate_strict(&templates_as_pods(&job), &versions) {
            panic!("{name}: {e}");
        }
    }
}

/// The schema check is not a rubber stamp: a misspelt field, a wrong type and a missing required field fail.
#[test]
fn the_crd_schema_check_rejects_broken_mpijobs() {
    let job = one_doc(&default(
        &plan_of("coreweave/gb300-roce"),
        Target::NcclTestsMpijob,
    ));
    let Ok(true) = check_mpijob_schema(&job) else {
        return; // skipped (announced) or failing: the test above reports it
    };
    let mut misspelt = job.clone();
    let slots = misspelt["spec"]
        .as_object_mut()
        .unwrap()
        .remove("slotsPerWorker")
        .unwrap();
    misspelt["spec"]["slotPerWorker"] = slots;
    let mut wrong_type = job.clone();
    wrong_type["spec"]["slotsPerWorker"] = json!("4");
    let mut no_replicas = job.clone();
    no_replicas["spec"]
        .as_object_mut()
        .unwrap()
        .remove("mpiReplicaSpecs");
    let mut bad_template = job.clone();
    bad_template["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]["label"] =
        json!({"a": "b"});
    for (what, doc) in [
        ("slotPerWorker", misspelt),
        ("string slotsPerWorker", wrong_type),
        ("no mpiReplicaSpecs", no_replicas),
        ("template metadata.label", bad_template),
    ] {
        assert!(
            check_mpijob_schema(&doc).is_err(),
            "{what}: the schema check must reject it"
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// nccl-tests-mpijob content.

#[test]
fn mpijob_runs_all_reduce_perf_across_nodes_with_every_variable_passed_by_mpirun() {
    for name in builtin::names() {
        let plan = plan_of(name);
        let job = workload_doc(&default(&plan, Target::NcclTestsMpijob));
        assert_eq!(job["apiVersion"], "kubeflow.org/v2beta1", "{name}");
        assert_eq!(job["kind"], "MPIJob", "{name}");
        let spec = &job["spec"];
        assert_eq!(
            spec["slotsPerWorker"],
            json!(plan.gpus_per_node),
            "{name}: slots = GPUs per node"
        );
        assert_eq!(spec["runPolicy"]["cleanPodPolicy"], "Running", "{name}");
        assert_eq!(
            spec["mpiReplicaSpecs"]["Worker"]["replicas"],
            json!(plan.slurm.nodes.max(2)),
            "{name}"
        );
        assert_eq!(
            spec["mpiReplicaSpecs"]["Launcher"]["replicas"],
            json!(1),
            "{name}"
        );

        let launcher = &spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
        assert_eq!(strs(&launcher["command"]), ["mpirun"], "{name}");
        let args = strs(&launcher["args"]);
        let ranks = plan.slurm.nodes.max(2) * plan.gpus_per_node;
        assert_eq!(
            args[..4],
            ["-np", &ranks.to_string(), "--bind-to", "none"],
            "{name}"
        );
        let exported: BTreeSet<&str> = args
            .windows(2)
            .filter(|w| w[0] == "-x")
            .map(|w| w[1])
            .collect();
        assert_eq!(
            args[args.len() - 9..],
            [
                "/opt/nccl_tests/build/all_reduce_perf",
                "-b",
                "512M",
                "-e",
                "8G",
                "-f",
                "2",
                "-g",
                "1"
            ],
            "{name}"
        );

        // The env the ranks get: the launcher's env, each name forwarded with -x.
        let launcher_env = env_map(launcher);
        assert_eq!(launcher_env["OMPI_ALLOW_RUN_AS_ROOT"], "1", "{name}");
        assert_eq!(
            launcher_env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"], "1",
            "{name}"
        );
        let want: BTreeMap<String, String> = nccl_env(&plan)
            .into_iter()
            .map(|e| (e.name, e.value))
            .collect();
        let rank_env: BTreeMap<String, String> = launcher_env
            .iter()
            .filter(|(k, _)| exported.contains(k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            rank_env, want,
            "{name}: every variable of the job reaches the ranks through -x"
        );
        assert_eq!(
            exported.len(),
            want.len(),
            "{name}: -x names only variables the launcher has"
        );
        for e in &plan.env {
            if e.name != "NCCL_DEBUG" {
                assert_eq!(
                    want.get(&e.name),
                    Some(&e.value),
                    "{name}: profile's {}",
                    e.name
                );
            }
        }
        assert_eq!(want["NCCL_DEBUG"], "INFO", "{name}");

        // The workers get the fabric wiring exactly as the pod target builds it.
        let pod = workload_doc(&default(&plan, Target::Pod));
        let worker = &spec["mpiReplicaSpecs"]["Worker"]["template"];
        assert_eq!(
            worker["metadata"]["annotations"].get("k8s.v1.cni.cncf.io/networks"),
            pod["metadata"]["annotations"].get("k8s.v1.cni.cncf.io/networks"),
            "{name}: Multus networks"
        );
        assert_eq!(
            worker["spec"]["nodeSelector"], pod["spec"]["nodeSelector"],
            "{name}"
        );
        assert_eq!(
            worker["spec"]["volumes"], pod["spec"]["volumes"],
            "{name}: /dev/shm volume"
        );
        let (wc, pc) = (
            &worker["spec"]["containers"][0],
            &pod["spec"]["containers"][0],
        );
        for field in ["resources", "securityContext", "volumeMounts"] {
            assert_eq!(wc[field], pc[field], "{name}: worker {field}");
        }
        assert_eq!(
            wc["image"].as_str(),
            Some(plan.nccl_tests_image.as_str()),
            "{name}"
        );
        assert_eq!(pc["volumeMounts"][0]["mountPath"], "/dev/shm", "{name}");
    }
}

#[test]
fn mpijob_worker_wiring_on_gb300_roce_and_the_fabric_image() {
    let roce = one_doc(&default(
        &plan_of("coreweave/gb300-roce"),
        Target::NcclTestsMpijob,
    ));
    let worker = &roce["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    let nets: Value = serde_json::from_str(
        worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(nets.as_array().unwrap().len(), 16);
    let c = &worker["spec"]["containers"][0];
    assert_eq!(c["resources"]["limits"]["rdma/ib"], "1");
    assert_eq!(c["securityContext"]["capabilities"]["add"][0], "IPC_LOCK");
    assert_eq!(c["image"], roce_render::NCCL_TESTS_IMAGE_ROCE);

    let ib = one_doc(&default(
        &plan_of("coreweave/h100-ib"),
        Target::NcclTestsMpijob,
    ));
    let worker = &ib["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    assert!(
        worker["metadata"]["annotations"]
            .get("k8s.v1.cni.cncf.io/networks")
            .is_none()
    );
    assert_eq!(
        worker["spec"]["containers"][0]["image"],
        roce_render::NCCL_TESTS_IMAGE_INFINIBAND
    );
    assert_eq!(ib["spec"]["slotsPerWorker"], 8);
    assert_ne!(
        roce_render::NCCL_TESTS_IMAGE_ROCE,
        roce_render::NCCL_TESTS_IMAGE_INFINIBAND
    );
}

#[test]
fn mpijob_options_nodes_image_binary_arguments_and_name() {
    let plan = plan_of("coreweave/gb300-roce");
    let opts = RenderOptions {
        name: Some("smoke".into()),
        validation: ValidationOptions {
            image: Some("registry.example/nccl-tests:mine".into()),
            nodes: Some(18),
            nccl_test: "/usr/local/bin/all_gather_perf".into(),
            nccl_test_args: "-b 1G -e 16G -f 2 -g 1 -w $(NOT_A_VAR)".into(),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    let text = rendered(&plan, Target::NcclTestsMpijob, &opts);
    let job = one_doc(&text);
    assert_eq!(job["metadata"]["name"], "smoke");
    assert_eq!(job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"], 18);
    let launcher = &job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
    assert_eq!(launcher["image"], "registry.example/nccl-tests:mine");
    assert_eq!(
        job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/nccl-tests:mine"
    );
    let args = strs(&launcher["args"]);
    assert_eq!(args[1], "72", "18 nodes x 4 GPUs");
    let tail = &args[args.len() - 11..];
    assert_eq!(tail[0], "/usr/local/bin/all_gather_perf");
    assert_eq!(tail[1..3], ["-b", "1G"]);
    assert_eq!(
        tail[10], "$$(NOT_A_VAR)",
        "Kubernetes' $(VAR) expansion is escaped in args"
    );
    assert!(
        text.contains("kubectl logs -f job/smoke-launcher"),
        "{text}"
    );
    assert!(text.contains("roce explain nccl-tests.log --profile coreweave/gb300-roce"));

    let one = RenderOptions {
        validation: ValidationOptions {
            nodes: Some(1),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    assert!(rendered(&plan, Target::NcclTestsMpijob, &one).contains("the fabric is not tested"));
    assert!(!default(&plan, Target::NcclTestsMpijob).contains("the fabric is not tested"));
}

#[test]
fn bad_validation_options_are_errors_not_panics() {
    let plan = plan_of("coreweave/gb300-roce");
    let option_of = |target: Target, opts: RenderOptions| match render(&plan, target, &opts) {
        Err(RenderError::Option { option, .. }) => option,
        other => panic!("{target}: expected an option error, got {other:?}"),
    };
    let with = |v: ValidationOptions| RenderOptions {
        validation: v,
        ..RenderOptions::default()
    };
    for target in [Target::NcclTestsMpijob, Target::NcclTestsSbatch] {
        let zero = with(ValidationOptions {
            nodes: Some(0),
            ..ValidationOptions::default()
        });
        assert_eq!(option_of(target, zero), "nodes", "{target}");
        let no_bin = with(ValidationOptions {
            nccl_test: "  ".into(),
            ..ValidationOptions::default()
        });
        assert_eq!(option_of(target, no_bin), "nccl-test", "{target}");
        let two_bins = with(ValidationOptions {
            nccl_test: "a b".into(),
            ..ValidationOptions::default()
        });
        assert_eq!(option_of(target, two_bins), "nccl-test", "{target}");
        let control = with(ValidationOptions {
            nccl_test_args: "-b \u{1b}[1m".into(),
            ..ValidationOptions::default()
        });
        assert_eq!(option_of(target, control), "nccl-test-args", "{target}");
    }
    for target in [Target::NcclTestsMpijob, Target::UcxPerftest] {
        for bad in ["Bad_Name", "9lives", "trailing-", &"x".repeat(49)] {
            let opts = RenderOptions {
                name: Some(bad.to_string()),
                ..RenderOptions::default()
            };
            assert_eq!(option_of(target, opts), "name", "{target} {bad}");
        }
    }
    let control = with(ValidationOptions {
        ucx_perftest_args: Some("-t \u{7}".into()),
        ..ValidationOptions::default()
    });
    assert_eq!(option_of(Target::UcxPerftest, control), "ucx-perftest-args");
}

#[test]
fn default_names_are_short_valid_labels() {
    let long = format!(
        "profile \"team/{}\" extends=\"coreweave/gb300-roce\" {{ }}",
        "very-long-profile-name-".repeat(4)
    );
    let plan = plan_from(&long);
    for (target, prefix) in [
        (Target::NcclTestsMpijob, "nccl-tests-"),
        (Target::UcxPerftest, "ucx-perftest-"),
    ] {
        let first = docs(&default(&plan, target)).remove(0);
        let name = first["metadata"]["name"].as_str().unwrap().to_string();
        assert!(name.starts_with(prefix), "{name}");
        assert!(name.len() <= 48 && !name.ends_with('-'), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// NCCL_DEBUG in validation jobs.

#[test]
fn validation_jobs_log_at_info_even_when_the_profile_says_otherwise() {
    let quiet = plan_from(
        "profile \"team/quiet\" extends=\"coreweave/gb300-roce\" { nccl debug=\"WARN\" debug-subsys=\"INIT,NET\" }",
    );
    assert_eq!(
        quiet.env_value("NCCL_DEBUG"),
        Some("WARN"),
        "the guard below must be able to fail"
    );
    let env: BTreeMap<String, String> = nccl_env(&quiet)
        .into_iter()
        .map(|e| (e.name, e.value))
        .collect();
    assert_eq!(env["NCCL_DEBUG"], "INFO");
    assert_eq!(
        env["NCCL_DEBUG_SUBSYS"], "INIT,NET",
        "the profile's own subsystems are kept"
    );
    let sbatch = default(&quiet, Target::NcclTestsSbatch);
    assert!(sbatch.contains("export NCCL_DEBUG=INFO\n"), "{sbatch}");
    assert!(!sbatch.contains("NCCL_DEBUG=WARN"));

    let plain = nccl_env(&plan_of("coreweave/gb300-roce"));
    let names: Vec<&str> = plain.iter().map(|e| e.name.as_str()).collect();
    let debug = names.iter().position(|n| *n == "NCCL_DEBUG").unwrap();
    assert_eq!(names[debug + 1], "NCCL_DEBUG_SUBSYS");
    assert_eq!(plain[debug + 1].value, NCCL_DEBUG_SUBSYS_NET.value);
    assert!(
        names[debug + 2].starts_with("UCX_"),
        "NCCL variables stay before UCX ones: {names:?}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// nccl-tests-sbatch.

/// Run the script's `export` lines in `sh` and read the variables back.
fn sbatch_env(script: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut full: String = script
        .lines()
        .filter(|l| l.starts_with("export "))
        .map(|l| format!("{l}\n"))
        .collect();
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
fn sbatch_runs_all_reduce_perf_with_pmix_and_the_validation_env() {
    for name in builtin::names() {
        let plan = plan_of(name);
        let script = default(&plan, Target::NcclTestsSbatch);
        if let Err(e) = consumers::bash_syntax(&script) {
            panic!("{name}: {e}");
        }
        assert!(script.starts_with("#!/bin/bash\n#SBATCH "), "{name}");
        let nodes = plan.slurm.nodes.max(2);
        assert!(
            script.contains(&format!("#SBATCH --nodes={nodes}\n")),
            "{name}"
        );
        assert!(
            script.contains(&format!(
                "#SBATCH --ntasks-per-node={}\n",
                plan.gpus_per_node
            )),
            "{name}"
        );
        assert!(
            script.contains(&format!(
                "#SBATCH --job-name=nccl-tests-{}\n",
                plan.short_name()
            )),
            "{name}"
        );
        let srun: Vec<&str> = script.lines().filter(|l| l.starts_with("srun ")).collect();
        assert_eq!(
            srun,
            [
                "srun --mpi=pmix --kill-on-bad-exit=1 /opt/nccl_tests/build/all_reduce_perf -b 512M -e 8G -f 2 -g 1"
            ],
            "{name}"
        );
        let want: BTreeMap<String, String> = nccl_env(&plan)
            .into_iter()
            .map(|e| (e.name, e.value))
            .collect();
        let names: Vec<&str> = want.keys().map(String::as_str).collect();
        assert_eq!(sbatch_env(&script, &names), want, "{name}");
        let notes = script.find("# Validation job").unwrap();
        assert!(
            notes < script.find("\nsrun ").unwrap(),
            "{name}: the notes come before the job step"
        );
        assert!(
            script.contains(&format!("roce explain slurm-JOBID.out --profile {name}")),
            "{name}"
        );
    }
}

#[test]
fn sbatch_quotes_user_arguments_and_honours_nodes() {
    let plan = plan_of("coreweave/gb300-roce-sunk");
    let opts = RenderOptions {
        validation: ValidationOptions {
            nodes: Some(16),
            nccl_test_args: "-b 1G -n 'x y' $HOME".into(),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    let script = rendered(&plan, Target::NcclTestsSbatch, &opts);
    consumers::bash_syntax(&script).unwrap_or_else(|e| panic!("{e}"));
    assert!(script.contains("#SBATCH --nodes=16\n"));
    let srun = script.lines().find(|l| l.starts_with("srun ")).unwrap();
    // What srun receives, as sh splits the line: every word exactly as given, nothing expanded.
    let words = format!(
        "set -- {}\nprintf '%s\\0' \"$@\"",
        srun.strip_prefix("srun ").unwrap()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(&words)
        .env("HOME", "/expanded")
        .output()
        .unwrap();
    let argv: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_string)
        .collect();
    assert_eq!(
        argv,
        [
            "--mpi=pmix",
            "--kill-on-bad-exit=1",
            "/opt/nccl_tests/build/all_reduce_perf",
            "-b",
            "1G",
            "-n",
            "'x",
            "y'",
            "$HOME"
        ],
        "{srun}"
    );
    for wiring in ["Multus", "rdma/ib", "IPC_LOCK"] {
        assert!(!script.contains(wiring), "SUNK sbatch mentions {wiring}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// ucx-perftest.

#[test]
fn ucx_perftest_passes_kubernetes_strict_for_every_profile() {
    for name in builtin::names() {
        let plan = plan_of(name).with_workload(Workload::UcxPerftest).unwrap();
        let yaml = default(&plan, Target::UcxPerftest);
        if let Err(e) = consumers::validate_manifest(&yaml, plan.dra.min_kubernetes_minor()) {
            panic!("{name}: {e}");
        }
    }
}

struct Perftest {
    text: String,
    service: Value,
    server: Value,
    client: Value,
}

fn perftest(plan: &Plan) -> Perftest {
    let text = default(plan, Target::UcxPerftest);
    let all = docs(&text);
    // The NICs' ResourceClaimTemplate first, where they are DRA devices.
    let extra = roce_render::dra::wiring(&plan.dra_spec.nics_only())
        .documents
        .len();
    let mut d = all.into_iter().skip(extra);
    let (service, server, client) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
    assert!(d.next().is_none());
    Perftest {
        text,
        service,
        server,
        client,
    }
}

#[test]
fn ucx_perftest_pins_server_and_client_to_different_nodes_and_prints_ucx_info() {
    for name in builtin::names() {
        let plan = plan_of(name);
        let t = perftest(&plan);
        assert_eq!(t.service["kind"], "Service", "{name}");
        assert_eq!(t.service["spec"]["clusterIP"], "None", "{name}: headless");
        let svc = t.service["metadata"]["name"].as_str().unwrap();
        assert_eq!(
            t.server["spec"]["subdomain"], svc,
            "{name}: server DNS name lives under the Service"
        );
        assert_eq!(t.server["spec"]["hostname"], "server", "{name}");
        for (k, v) in t.service["spec"]["selector"].as_object().unwrap() {
            assert_eq!(
                &t.server["metadata"]["labels"][k], v,
                "{name}: the Service selects the server"
            );
            if k == "roce.dev/role" {
                assert_ne!(
                    &t.client["metadata"]["labels"][k], v,
                    "{name}: and not the client"
                );
            }
        }
        for pod in [&t.server, &t.client] {
            let term = &pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                [0];
            assert_eq!(term["topologyKey"], "kubernetes.io/hostname", "{name}");
            for (k, v) in term["labelSelector"]["matchLabels"].as_object().unwrap() {
                assert_eq!(
                    &t.server["metadata"]["labels"][k], v,
                    "{name}: anti-affinity matches the server"
                );
                assert_eq!(
                    &t.client["metadata"]["labels"][k], v,
                    "{name}: and the client"
                );
            }
            let init = &pod["spec"]["initContainers"][0];
            assert_eq!(strs(&init["command"]), ["ucx_info", "-d"], "{name}");
            assert_eq!(
                init["resources"], pod["spec"]["containers"][0]["resources"],
                "{name}: same devices"
            );
            let env = env_map(&pod["spec"]["containers"][0]);
            for e in &plan.env {
                assert_eq!(
                    env.get(&e.name),
                    Some(&e.value),
                    "{name}: profile's {}",
                    e.name
                );
            }
            assert_eq!(env["UCX_LOG_LEVEL"], "info", "{name}");
            assert_eq!(pod["spec"]["activeDeadlineSeconds"], 1800, "{name}");
        }
        assert_eq!(
            strs(&t.server["spec"]["containers"][0]["command"]),
            ["ucx_perftest", "-p", "13337"],
            "{name}"
        );
        let probe = strs(&t.server["spec"]["containers"][0]["readinessProbe"]["exec"]["command"]);
        assert!(
            probe[2].contains(":3419 "),
            "{name}: 13337 is 0x3419 in /proc/net/tcp"
        );
        let client = &t.client["spec"]["containers"][0];
        assert_eq!(strs(&client["command"]), ["ucx_perftest"], "{name}");
        let args = strs(&client["args"]);
        assert_eq!(
            args[..3],
            [format!("server.{svc}").as_str(), "-p", "13337"],
            "{name}"
        );
        assert_eq!(args[3..5], ["-t", "tag_bw"], "{name}");
        assert_eq!(
            t.client["spec"]["initContainers"][1]["name"], "wait-for-server",
            "{name}"
        );
        assert!(
            t.text
                .contains(&format!("kubectl logs pod/{svc}-client --all-containers")),
            "{name}"
        );
        assert!(
            t.text
                .contains(&format!("roce explain ucx-perftest.log --profile {name}")),
            "{name}"
        );
    }
}

/// The readiness probe's pattern matches a real LISTEN line for the port, and nothing else.
#[test]
fn ucx_perftest_readiness_pattern_matches_proc_net_tcp() {
    let t = perftest(&plan_of("coreweave/gb300-roce-nixl"));
    let probe = strs(&t.server["spec"]["containers"][0]["readinessProbe"]["exec"]["command"]);
    assert_eq!(probe[..2], ["grep", "-qsE"]);
    let dir = consumers::temp_dir("proc-net-tcp");
    let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    let listen4 = "   0: 00000000:3419 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n";
    let listen6 = "   1: 00000000000000000000000000000000:3419 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0\n";
    let established = "   2: 0100007F:3419 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1\n";
    let other_port = "   3: 00000000:341A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0\n";
    for (body, ready) in [
        (listen4.to_string(), true),
        (listen6.to_string(), true),
        (format!("{established}{other_port}"), false),
        (String::new(), false),
    ] {
        let file = dir.join("tcp");
        std::fs::write(&file, format!("{header}{body}")).unwrap();
        let status = Command::new(probe[0])
            .args(&probe[1..3])
            .arg(&file)
            .arg(dir.join("missing-tcp6"))
            .status()
            .unwrap();
        assert_eq!(status.success(), ready, "{body}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ucx_perftest_for_the_nixl_profile_uses_rdma_transports_gid_and_rails() {
    let plan = plan_of("coreweave/gb300-roce-nixl");
    let t = perftest(&plan);
    for pod in [&t.server, &t.client] {
        let env = env_map(&pod["spec"]["containers"][0]);
        assert_eq!(env["UCX_TLS"], "rc_mlx5,ud_mlx5,cuda_copy");
        assert_eq!(env["UCX_IB_GID_INDEX"], "11");
        assert_eq!(
            env["UCX_NET_DEVICES"],
            "ibp0p0:1,ibp0p1:1,ibp0p2:1,ibp0p3:1"
        );
        assert_eq!(env["UCX_MAX_RMA_RAILS"], "4");
        let nets: Value = serde_json::from_str(
            pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(nets.as_array().unwrap().len(), 16, "all rails attached");
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"]["rdma/ib"],
            "1"
        );
    }
    let args = strs(&t.client["spec"]["containers"][0]["args"]);
    assert_eq!(
        args.windows(2).find(|w| w[0] == "-m").map(|w| w[1]),
        Some("cuda")
    );
    assert!(t.text.contains("UCX over RDMA"), "{}", t.text);
    assert!(t.text.contains("rdma-core >= 54"));
    assert!(!t.text.contains("UCX is on TCP"));
}

#[test]
fn ucx_perftest_for_an_nccl_only_profile_says_ucx_is_on_tcp_and_why() {
    for name in ["coreweave/gb300-roce", "coreweave/h100-ib"] {
        let t = perftest(&plan_of(name));
        let header: String = t
            .text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
            .join(" ");
        let header = header.replace("# ", "");
        assert!(
            header.contains("UCX is on TCP: this profile pins it"),
            "{name}: {header}"
        );
        assert!(
            header.contains("UCX_TLS=tcp UCX_NET_DEVICES=eth0"),
            "{name}"
        );
        assert!(header.contains("NCCL never uses UCX"), "{name}");
        assert!(
            header.contains("coreweave/gb300-roce-nixl"),
            "{name}: points at the RDMA profile"
        );
        let args = strs(&t.client["spec"]["containers"][0]["args"]);
        assert_eq!(
            args.windows(2).find(|w| w[0] == "-m").map(|w| w[1]),
            Some("host"),
            "{name}"
        );
    }
}

#[test]
fn ucx_perftest_arguments_and_image_can_be_overridden() {
    let plan = plan_of("coreweave/gb300-roce-nixl");
    let opts = RenderOptions {
        validation: ValidationOptions {
            image: Some("registry.example/ucx:1".into()),
            ucx_perftest_args: Some("-t ucp_put_bw -m cuda,cuda -s 1048576".into()),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    let d = docs(&rendered(&plan, Target::UcxPerftest, &opts));
    let client = &d[2]["spec"]["containers"][0];
    assert_eq!(
        strs(&client["args"])[3..],
        ["-t", "ucp_put_bw", "-m", "cuda,cuda", "-s", "1048576"]
    );
    for pod in &d[1..] {
        for c in pod["spec"]["initContainers"]
            .as_array()
            .unwrap()
            .iter()
            .chain(pod["spec"]["containers"].as_array().unwrap())
        {
            assert_eq!(c["image"], "registry.example/ucx:1");
        }
    }
}

#[test]
fn sunk_profiles_get_env_only_validation_pods() {
    let plan = plan_of("coreweave/gb300-roce-sunk");
    for target in [Target::NcclTestsMpijob, Target::UcxPerftest] {
        let text = default(&plan, target);
        for wiring in ["k8s.v1.cni.cncf.io/networks", "rdma/ib", "IPC_LOCK"] {
            assert!(!text.contains(wiring), "{target}: SUNK output has {wiring}");
        }
        assert!(
            text.contains("attach the fabric themselves (SUNK NodeSet)"),
            "{target} says why"
        );
        assert!(
            text.contains("NCCL_IB_TC"),
            "{target} still carries the env"
        );
        let direct = default(&plan_of("coreweave/gb300-roce"), target);
        assert!(
            !direct.contains("attach the fabric themselves"),
            "{target}: only SUNK profiles say so"
        );
    }
}

/// The DRA profile's nccl-tests MPIJob: the ComputeDomain comes first, the MPIJob passes the mpi-operator CRD
/// schema, and its worker template carries the channel claim, the container's use of it and the clique
/// affinity (the vendor's coreweave/nccl-tests DRA MPIJob has the same three).
#[test]
fn dra_mpijob_claims_the_channel_and_passes_the_crd_schema() {
    let plan = plan_of("coreweave/gb300-roce-dra");
    let text = default(&plan, Target::NcclTestsMpijob);
    let all = docs(&text);
    assert_eq!(all[0]["kind"], "ComputeDomain", "{text}");
    let job = all.iter().find(|d| d["kind"] == "MPIJob").unwrap();
    let worker = &job["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    assert_eq!(
        worker["spec"]["resourceClaims"][0]["resourceClaimTemplateName"],
        "nccl-test-72-gb300-18n-dra-cd-channel"
    );
    assert_eq!(
        worker["spec"]["containers"][0]["resources"]["claims"][0]["name"],
        "compute-domain-channel"
    );
    assert_eq!(
        worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            [0]["topologyKey"],
        "nvidia.com/gpu.clique"
    );
    assert_eq!(
        worker["metadata"]["labels"]["metadata.coreweave.cloud/job"],
        "nccl-test"
    );
    let checked = check_mpijob_schema(job).unwrap_or_else(|e| panic!("{e}"));
    assert!(checked || !consumers::tools_required());
    // Pods with claims need resource.k8s.io/v1 (Kubernetes >= 1.34).
    consumers::kubernetes_validate_strict(&templates_as_pods(job), &["1.34.0", "1.37.0"])
        .unwrap_or_else(|e| panic!("{e}"));
}
