//! `roce apply` on the kind fixtures shared with the lint tests
//! (`crates/roce-inspect/tests/fixtures/manifests/kinds/`): idempotence, snapshots, what survives,
//! how existing values are merged, MPI launcher roles, errors, and kubernetes-validate --strict.

use std::path::{Path, PathBuf};

use roce_model::{BuiltinsOnly, Code, Problem, Source, builtin, load};
use roce_render::Plan;
use roce_render::apply::{Applied, ApplyOptions, RoleChoice, apply};

use crate::support::consumers;

fn kinds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../roce-inspect/tests/fixtures/manifests/kinds")
}

fn kind_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(kinds_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    out.sort();
    out
}

fn plan(name: &str) -> Plan {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    roce_render::plan::lower(&loaded.profile.unwrap())
}

/// The `# apply: --container NAME` of a fixture header.
fn header_container(text: &str) -> Option<String> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# apply: --container "))
        .map(str::to_string)
}

fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            format!(
                "  {} {:?} {}\n",
                p.code,
                p.location().map(|l| l.line),
                p.message
            )
        })
        .collect()
}

fn run(text: &str, plan: &Plan, opts: &ApplyOptions) -> Applied {
    apply(&Source::new("in.yaml", text), plan, opts)
        .unwrap_or_else(|p| panic!("{}\n{text}", describe(&p)))
}

fn run_file(path: &Path, plan: &Plan, role: RoleChoice) -> Applied {
    let text = std::fs::read_to_string(path).unwrap();
    let opts = ApplyOptions {
        container: header_container(&text),
        role,
    };
    run(&text, plan, &opts)
}

const ROLES: [RoleChoice; 3] = [RoleChoice::Worker, RoleChoice::Launcher, RoleChoice::All];

#[test]
fn applying_twice_gives_the_same_bytes() {
    for path in kind_files() {
        for name in builtin::names() {
            let plan = plan(name);
            for role in ROLES {
                let once = run_file(&path, &plan, role);
                let opts = ApplyOptions {
                    container: header_container(&std::fs::read_to_string(&path).unwrap()),
                    role,
                };
                let twice = run(&once.text, &plan, &opts);
                assert_eq!(
                    once.text,
                    twice.text,
                    "{} with {name} ({role:?})",
                    path.display()
                );
                assert_eq!(once.templates, twice.templates);
            }
        }
    }
}

fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/apply");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

/// Snapshot names: `<fixture>` with coreweave/gb300-roce, plus a few other profiles and roles.
fn snapshot_cases() -> Vec<(String, PathBuf, &'static str, RoleChoice)> {
    let mut cases: Vec<(String, PathBuf, &'static str, RoleChoice)> = kind_files()
        .into_iter()
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, p, "coreweave/gb300-roce", RoleChoice::Worker)
        })
        .collect();
    let k = kinds_dir();
    cases.push((
        "mpijob@launcher".into(),
        k.join("mpijob.yaml"),
        "coreweave/gb300-roce",
        RoleChoice::Launcher,
    ));
    cases.push((
        "mpijob@all".into(),
        k.join("mpijob.yaml"),
        "coreweave/gb300-roce",
        RoleChoice::All,
    ));
    cases.push((
        "pod@h100-ib".into(),
        k.join("pod.yaml"),
        "coreweave/h100-ib",
        RoleChoice::Worker,
    ));
    cases.push((
        "pod@gb300-roce-sunk".into(),
        k.join("pod.yaml"),
        "coreweave/gb300-roce-sunk",
        RoleChoice::Worker,
    ));
    cases.push((
        "leaderworkerset@gb300-roce-nixl".into(),
        k.join("leaderworkerset.yaml"),
        "coreweave/gb300-roce-nixl",
        RoleChoice::Worker,
    ));
    cases
}

#[test]
fn snapshots_of_applied_kinds() {
    snapshot_settings().bind(|| {
        for (name, path, profile, role) in snapshot_cases() {
            let applied = run_file(&path, &plan(profile), role);
            let mut out = applied.text.clone();
            for note in &applied.notes {
                out.push_str(&format!("# note: {note}\n"));
            }
            insta::assert_snapshot!(name, out);
        }
    });
}

#[test]
fn no_apply_snapshot_is_missing_or_orphaned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/apply");
    let mut want: Vec<String> = snapshot_cases()
        .into_iter()
        .map(|(n, ..)| format!("{n}.snap"))
        .collect();
    want.sort();
    let mut have: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".snap"))
                .collect()
        })
        .unwrap_or_default();
    have.sort();
    assert_eq!(have, want);
}

#[test]
fn applied_core_kinds_pass_kubernetes_validate_strict() {
    for file in [
        "pod.yaml",
        "deployment.yaml",
        "statefulset.yaml",
        "daemonset.yaml",
        "job.yaml",
        "cronjob.yaml",
        "multi.yaml",
    ] {
        for profile in [
            "coreweave/gb300-roce",
            "coreweave/h100-ib",
            "coreweave/gb300-roce-nixl",
        ] {
            let applied = run_file(&kinds_dir().join(file), &plan(profile), RoleChoice::Worker);
            consumers::kubernetes_validate_strict(&applied.text, consumers::K8S_VERSIONS)
                .unwrap_or_else(|e| panic!("{file} with {profile}: {e}"));
        }
    }
}

/// serde_json values of every document, through an independent reader.
fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple(text).unwrap()
}

/// Every value of `old` is in `new`: maps key by key, lists item by item (in order, `new` may have more),
/// scalars equal with the same type. Env entries and `-x` words for variables the plan sets may change.
fn contained(
    old: &serde_json::Value,
    new: &serde_json::Value,
    plan: &Plan,
    path: &str,
) -> Result<(), String> {
    use serde_json::Value;
    let managed = |name: &str| plan.env.iter().any(|e| e.name == name);
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                if k == "k8s.v1.cni.cncf.io/networks" {
                    continue; // merged and rewritten as a JSON list: see multus_networks_are_merged…
                }
                let Some(w) = b.get(k) else {
                    return Err(format!("{path}.{k} is gone"));
                };
                contained(v, w, plan, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(b)) => {
            let mut j = 0;
            for item in a {
                let name = item.get("name").and_then(Value::as_str);
                if path.ends_with(".env") && name.is_some_and(managed) {
                    continue;
                }
                if let Some(s) = item.as_str()
                    && s.split_once('=').is_some_and(|(n, _)| managed(n))
                {
                    continue;
                }
                loop {
                    let Some(candidate) = b.get(j) else {
                        return Err(format!("{path}: item {item} is gone or out of order"));
                    };
                    j += 1;
                    if contained(item, candidate, plan, &format!("{path}[]")).is_ok() {
                        break;
                    }
                }
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{path}: {a} became {b}")),
    }
}

#[test]
fn everything_the_user_wrote_survives_with_its_type() {
    for path in kind_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for name in ["coreweave/gb300-roce", "coreweave/h100-ib"] {
            let plan = plan(name);
            for role in ROLES {
                let applied = run_file(&path, &plan, role);
                let (old, new) = (documents(&text), documents(&applied.text));
                assert_eq!(old.len(), new.len());
                for (a, b) in old.iter().zip(&new) {
                    if let Err(e) = contained(a, b, &plan, "") {
                        panic!(
                            "{} with {name} ({role:?}): {e}\n{}",
                            path.display(),
                            applied.text
                        );
                    }
                }
            }
        }
    }
}

/// The lines of `before` that `after` no longer has, and how many lines it adds (a line diff).
fn line_changes(before: &str, after: &str) -> (Vec<String>, usize) {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut removed = Vec::new();
    let mut added = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Delete => removed.push(change.value().trim_end().to_string()),
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (removed, added)
}

#[test]
fn lines_apply_does_not_change_keep_their_bytes() {
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: spellings # a comment
  labels:
    port: "8080"
    ratio: '1.0'
    flag: "true"
  annotations:
    note: |
      line one

      line three
    folded: >-
      one
      two
spec:
  priority: 010
  hex: 0x1F
  float: 1.50
  yes_bool: yes
  tilde: ~
  empty:
  date: 2024-01-01
  containers:
  - name: main
    image: x
    args: [-np, "8", --flag=1, 'quoted']
    env:
    - {name: A, value: "1"}
"#;
    let plan = plan("coreweave/h100-ib");
    let out = run(text, &plan, &ApplyOptions::default()).text;
    // Nothing here needs changing, so every line stays, spelled as written: quotes, flow lists, the
    // flow env item, block scalars, the empty value, the comment.
    let (removed, added) = line_changes(text, &out);
    assert_eq!(removed, Vec::<String>::new(), "{out}");
    assert!(added > 0);
    for line in [
        "  name: spellings # a comment\n",
        "    ratio: '1.0'\n",
        "    folded: >-\n      one\n      two\n",
        "  empty:\n",
        "    args: [-np, \"8\", --flag=1, 'quoted']\n",
        "    - {name: A, value: \"1\"}\n    - name: NCCL_",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    // The typed values read the same before and after.
    let (a, b) = (documents(text), documents(&out));
    contained(&a[0], &b[0], &plan, "").unwrap();
}

fn pod_with(extra_metadata: &str, container: &str, spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{extra_metadata}spec:\n{spec}  containers:\n  - name: main\n    image: x\n{container}"
    )
}

#[test]
fn multus_networks_are_merged_never_overwritten() {
    let plan = plan("coreweave/gb300-roce");
    let comma = pod_with(
        "  annotations:\n    k8s.v1.cni.cncf.io/networks: storage/nfs@stor0, cw-multus/ibs0p1-macvlan, cw-multus/ibs0p1-macvlan\n",
        "",
        "",
    );
    let out = run(&comma, &plan, &ApplyOptions::default()).text;
    let docs = documents(&out);
    let value = docs[0]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
        .as_str()
        .unwrap();
    let list: Vec<serde_json::Value> = serde_json::from_str(value).unwrap();
    assert_eq!(
        list.len(),
        17,
        "the user's network plus the 16 rails, once each: {value}"
    );
    assert_eq!(
        list[0],
        serde_json::json!({"name": "nfs", "namespace": "storage", "interface": "stor0"})
    );
    assert_eq!(
        list[1]["name"], "ibs0p1-macvlan",
        "existing entries keep their place"
    );
    assert_eq!(
        list[2]["name"], "ibs0p0-macvlan",
        "then the missing rails in rail order"
    );
    // JSON form: every field of an existing object is kept.
    let json = pod_with(
        "  annotations:\n    k8s.v1.cni.cncf.io/networks: '[{\"name\":\"nfs\",\"namespace\":\"storage\",\"ips\":[\"10.1.2.3/24\"],\"mac\":\"c2:11:22:33:44:55\"}]'\n",
        "",
        "",
    );
    let out = run(&json, &plan, &ApplyOptions::default()).text;
    assert!(out.contains("[{\"name\":\"nfs\",\"namespace\":\"storage\",\"ips\":[\"10.1.2.3/24\"],\"mac\":\"c2:11:22:33:44:55\"},\n"), "{out}");
    // An InfiniBand profile attaches no networks and leaves the annotation alone.
    let out = run(&comma, &super_plan_ib(), &ApplyOptions::default()).text;
    assert!(out.contains("k8s.v1.cni.cncf.io/networks: storage/nfs@stor0, cw-multus/ibs0p1-macvlan, cw-multus/ibs0p1-macvlan\n"), "{out}");
}

fn super_plan_ib() -> Plan {
    plan("coreweave/h100-ib")
}

#[test]
fn env_is_replaced_by_name_in_place_and_never_duplicated() {
    let plan = super_plan_ib();
    let pod = pod_with(
        "",
        "    env:\n    - name: FIRST\n      value: a\n    - name: NCCL_IB_HCA\n      value: mlx5\n    - name: MIDDLE\n      value: b\n    - name: NCCL_IB_HCA\n      value: mlx5_0\n    - name: NCCL_NET_PLUGIN\n      valueFrom:\n        configMapKeyRef: {name: c, key: k}\n    - name: UCX_NET_DEVICES\n      value: eth0\n    - name: LAST\n      value: c\n",
        "",
    );
    let out = run(&pod, &plan, &ApplyOptions::default()).text;
    let docs = documents(&out);
    let names: Vec<&str> = docs[0]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "FIRST",
            "NCCL_IB_HCA",
            "MIDDLE",
            "NCCL_NET_PLUGIN",
            "UCX_NET_DEVICES",
            "LAST",
            "NCCL_SOCKET_IFNAME",
            "UCX_TLS",
            "OMPI_MCA_coll_hcoll_enable"
        ]
    );
    let env = &docs[0]["spec"]["containers"][0]["env"];
    assert_eq!(env[1]["value"], "ibp");
    assert_eq!(
        env[3],
        serde_json::json!({"name": "NCCL_NET_PLUGIN", "value": "none"}),
        "valueFrom replaced"
    );
    assert!(
        out.contains("    - name: UCX_NET_DEVICES\n      value: eth0\n"),
        "an entry already right is left as written"
    );
}

#[test]
fn resources_capabilities_shm_and_node_selector_merge() {
    let plan = plan("coreweave/gb300-roce");
    let pod = pod_with(
        "",
        "    resources:\n      requests:\n        cpu: 8\n        nvidia.com/gpu: 2\n      limits:\n        nvidia.com/gpu: 2\n        rdma/ib: 3\n    securityContext:\n      runAsUser: 0\n      capabilities:\n        add: [SYS_NICE]\n        drop: [NET_RAW]\n",
        "  nodeSelector:\n    zone: a\n    backend.coreweave.cloud/flavor: infiniband\n  volumes:\n  - name: dshm\n    configMap: {name: not-shm}\n",
    );
    let out = run(&pod, &plan, &ApplyOptions::default()).text;
    let c = &documents(&out)[0]["spec"]["containers"][0];
    assert_eq!(
        c["resources"]["requests"],
        serde_json::json!({"cpu": 8, "nvidia.com/gpu": 2, "rdma/ib": "1"})
    );
    assert_eq!(
        c["resources"]["limits"],
        serde_json::json!({"nvidia.com/gpu": 2, "rdma/ib": "1"})
    );
    assert_eq!(
        c["securityContext"]["capabilities"],
        serde_json::json!({"add": ["SYS_NICE", "IPC_LOCK"], "drop": ["NET_RAW"]})
    );
    assert_eq!(c["securityContext"]["runAsUser"], 0);
    assert_eq!(
        c["volumeMounts"],
        serde_json::json!([{"name": "roce-dshm", "mountPath": "/dev/shm"}]),
        "dshm is taken"
    );
    let spec = &documents(&out)[0]["spec"];
    assert_eq!(
        spec["nodeSelector"],
        serde_json::json!({"zone": "a", "backend.coreweave.cloud/flavor": "roce"})
    );
    assert_eq!(
        spec["volumes"][1],
        serde_json::json!({"name": "roce-dshm", "emptyDir": {"medium": "Memory"}})
    );
    // Something already mounted at /dev/shm is left alone.
    let mounted = pod_with(
        "",
        "    volumeMounts:\n    - {name: host-shm, mountPath: /dev/shm}\n",
        "  volumes:\n  - {name: host-shm, hostPath: {path: /dev/shm}}\n",
    );
    let out = run(&mounted, &plan, &ApplyOptions::default()).text;
    assert!(!out.contains("dshm"), "{out}");
}

fn mpijob(launcher_container: &str) -> String {
    format!(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: m\nspec:\n  mpiReplicaSpecs:\n    Launcher:\n      template:\n        spec:\n          containers:\n          - name: launcher\n            image: x\n{launcher_container}    Worker:\n      template:\n        spec:\n          containers:\n          - name: worker\n            image: x\n"
    )
}

fn env_names(c: &serde_json::Value) -> Vec<String> {
    c["env"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn mpi_roles_put_the_env_where_asked() {
    let plan = super_plan_ib();
    let argv = "            command: [mpirun]\n            args: [-np, \"16\", -x, NCCL_IB_HCA=mlx5, ./all_reduce_perf]\n";
    let job = mpijob(argv);
    let launcher = |out: &str| {
        documents(out)[0]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
            [0]
        .clone()
    };
    let worker = |out: &str| {
        documents(out)[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
            .clone()
    };

    // worker (default): env in the workers; the launcher is the user's and stays as written, and the
    // value it forwards over the workers' (every rank gets `-x NAME=VALUE`) is named in a note.
    let applied = run(&job, &plan, &ApplyOptions::default());
    let out = applied.text;
    assert_eq!(env_names(&worker(&out)).len(), plan.env.len());
    assert!(env_names(&launcher(&out)).is_empty());
    assert_eq!(
        launcher(&out)["args"],
        serde_json::json!(["-np", "16", "-x", "NCCL_IB_HCA=mlx5", "./all_reduce_perf"])
    );
    assert!(
        applied.notes.iter().any(
            |n| n.contains("forwards `NCCL_IB_HCA=mlx5` with `mpirun -x`") && n.contains("`ibp`")
        ),
        "{:?}",
        applied.notes
    );
    assert!(
        launcher(&out).get("resources").is_none(),
        "a launcher gets no wiring"
    );

    // launcher: env in the launcher, forwarded with -x; the workers get the wiring but no env.
    let opts = ApplyOptions {
        role: RoleChoice::Launcher,
        ..ApplyOptions::default()
    };
    let out = run(&job, &plan, &opts).text;
    assert!(env_names(&worker(&out)).is_empty());
    assert_eq!(worker(&out)["resources"]["limits"]["rdma/ib"], "1");
    assert_eq!(env_names(&launcher(&out)).len(), plan.env.len());
    let args: Vec<String> = launcher(&out)["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        &args[..2],
        ["-x", "NCCL_SOCKET_IFNAME"],
        "flags go right after mpirun: {args:?}"
    );
    assert!(args.contains(&"NCCL_IB_HCA=ibp".to_string()));
    assert_eq!(args.iter().filter(|a| *a == "-x").count(), plan.env.len());

    // all: both.
    let opts = ApplyOptions {
        role: RoleChoice::All,
        ..ApplyOptions::default()
    };
    let out = run(&job, &plan, &opts).text;
    assert_eq!(env_names(&worker(&out)).len(), plan.env.len());
    assert_eq!(env_names(&launcher(&out)).len(), plan.env.len());
}

#[test]
fn a_launcher_script_gets_its_flags_in_the_mpirun_line() {
    let plan = super_plan_ib();
    let script = "            command:\n            - /bin/bash\n            - -c\n            - |\n              set -e\n              mpirun -np 16 \\\n                -x NCCL_IB_HCA=mlx5 ./run\n";
    let opts = ApplyOptions {
        role: RoleChoice::Launcher,
        ..ApplyOptions::default()
    };
    let out = run(&mpijob(script), &plan, &opts).text;
    assert!(
        out.contains("              mpirun -x NCCL_SOCKET_IFNAME -x NCCL_NET_PLUGIN -x UCX_TLS -x UCX_NET_DEVICES -x OMPI_MCA_coll_hcoll_enable -np 16 \\\n                -x NCCL_IB_HCA=ibp ./run\n"),
        "{out}"
    );
    assert_eq!(run(&out, &plan, &opts).text, out, "idempotent");
}

#[test]
fn a_launcher_without_mpirun_keeps_the_env_in_the_workers() {
    let plan = super_plan_ib();
    let job = mpijob("            command: [python, launch.py]\n");
    let opts = ApplyOptions {
        role: RoleChoice::Launcher,
        ..ApplyOptions::default()
    };
    let applied = run(&job, &plan, &opts);
    let docs = documents(&applied.text);
    let worker = &docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
    assert_eq!(env_names(worker).len(), plan.env.len());
    assert!(
        applied
            .notes
            .iter()
            .any(|n| n.contains("not an Open MPI `mpirun` invocation")),
        "{:?}",
        applied.notes
    );
}

#[test]
fn container_selection() {
    let plan = super_plan_ib();
    let two = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: sidecar\n    image: s\n  - name: main\n    image: x\n";
    let first = documents(&run(two, &plan, &ApplyOptions::default()).text);
    assert!(
        first[0]["spec"]["containers"][0].get("env").is_some(),
        "default: the first container"
    );
    let opts = ApplyOptions {
        container: Some("main".into()),
        ..ApplyOptions::default()
    };
    let named = documents(&run(two, &plan, &opts).text);
    assert!(named[0]["spec"]["containers"][0].get("env").is_none());
    assert!(named[0]["spec"]["containers"][1].get("env").is_some());
    let opts = ApplyOptions {
        container: Some("mian".into()),
        ..ApplyOptions::default()
    };
    let err = apply(&Source::new("p.yaml", two), &plan, &opts).unwrap_err();
    assert_eq!(err[0].code, Code::LintNoContainer);
    assert!(
        err[0]
            .help
            .as_deref()
            .unwrap()
            .contains("did you mean `main`?"),
        "{:?}",
        err[0].help
    );
}

#[test]
fn bad_input_is_refused_with_a_coded_problem_and_nothing_applied() {
    let plan = plan("coreweave/gb300-roce");
    let cases: &[(&str, Code, usize)] = &[
        ("kind: Pod\nspec: [\n", Code::LintSyntax, 2),
        (
            "kind: Pod\nmetadata:\n  annotations:\n    k8s.v1.cni.cncf.io/networks: '[{\"name\": }]'\nspec:\n  containers:\n  - name: a\n",
            Code::LintMultusMalformed,
            4,
        ),
        (
            "kind: Pod\nmetadata:\n  annotations:\n    k8s.v1.cni.cncf.io/networks: a/b/c\nspec:\n  containers:\n  - name: a\n",
            Code::LintMultusMalformed,
            4,
        ),
        (
            "kind: Job\nspec:\n  template:\n    spec:\n      containers: {name: a}\n",
            Code::LintShape,
            5,
        ),
        (
            "kind: Job\nspec:\n  template:\n    spec:\n      containers: []\n",
            Code::LintNoContainer,
            5,
        ),
        (
            "kind: Deployment\nspec:\n  replicas: 1\n",
            Code::LintShape,
            2,
        ),
    ];
    for (text, code, line) in cases {
        let err = apply(
            &Source::new("bad.yaml", *text),
            &plan,
            &ApplyOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            (err[0].code, err[0].location().unwrap().line),
            (*code, *line),
            "{text}\n{}",
            describe(&err)
        );
    }
}

#[test]
fn unknown_kinds_pass_through_with_a_note() {
    let plan = plan("coreweave/gb300-roce");
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
    let applied = run(text, &plan, &ApplyOptions::default());
    assert_eq!(applied.text, text);
    assert_eq!(applied.templates, 0);
    assert_eq!(applied.notes.len(), 1);
    assert!(
        applied.notes[0].contains("kind ConfigMap"),
        "{:?}",
        applied.notes
    );
}

#[test]
fn a_trainjob_gets_env_and_resources_and_a_note() {
    let applied = run_file(
        &kinds_dir().join("trainjob.yaml"),
        &plan("coreweave/gb300-roce"),
        RoleChoice::Worker,
    );
    let docs = documents(&applied.text);
    let trainer = &docs[0]["spec"]["trainer"];
    assert_eq!(trainer["resourcesPerNode"]["limits"]["rdma/ib"], "1");
    assert_eq!(trainer["env"][0]["name"], "HF_HOME");
    assert!(
        applied.notes.iter().any(|n| n.contains("TrainingRuntime")),
        "{:?}",
        applied.notes
    );
}

/// `apply` is idempotent on generated workloads, not only on the fixtures: any kind, containers, existing
/// env (including variables the profile sets), an existing Multus annotation in either form, capabilities
/// and resources already present, any built-in profile. The first output, applied again, is unchanged.
mod idempotence {
    use super::*;
    use proptest::prelude::*;

    /// YAML single-quoted scalar.
    fn sq(s: &str) -> String {
        format!("'{}'", s.replace('\'', "''"))
    }

    #[derive(Debug, Clone)]
    struct Workload {
        kind: usize,
        containers: Vec<String>,
        env: Vec<(String, String)>,
        networks: Option<usize>,
        caps: bool,
        gpus: Option<u8>,
    }

    /// A name written unquoted that Kubernetes' YAML 1.1 reader (go-yaml v2) takes as a boolean or null:
    /// `name: Y` is not a string there, and lint rightly says so; such input is not a valid workload.
    fn yaml11_keyword(name: &str) -> bool {
        matches!(
            name.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        )
    }

    fn workload() -> impl Strategy<Value = Workload> {
        (
            0..3usize,
            proptest::collection::btree_set(
                "[a-z][a-z0-9-]{0,6}".prop_filter("a string in YAML 1.1", |n| !yaml11_keyword(n)),
                1..4,
            ),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("NCCL_IB_TC".to_string()),
                        Just("NCCL_DEBUG".to_string()),
                        Just("UCX_TLS".to_string()),
                        "[A-Z][A-Z0-9_]{0,8}"
                            .prop_filter("a string in YAML 1.1", |n| !yaml11_keyword(n)),
                    ],
                    "[ -~]{0,12}",
                ),
                0..4,
            ),
            proptest::option::of(0..2usize),
            any::<bool>(),
            proptest::option::of(1..9u8),
        )
            .prop_map(|(kind, containers, mut env, networks, caps, gpus)| {
                env.sort();
                env.dedup_by(|a, b| a.0 == b.0);
                Workload {
                    kind,
                    containers: containers.into_iter().collect(),
                    env,
                    networks,
                    caps,
                    gpus,
                }
            })
    }

    fn indent(s: &str, n: usize) -> String {
        s.lines()
            .map(|l| format!("{}{l}\n", " ".repeat(n)))
            .collect()
    }

    fn text(w: &Workload) -> String {
        let mut meta = String::new();
        if let Some(n) = w.networks {
            meta.push_str("annotations:\n  k8s.v1.cni.cncf.io/networks: ");
            meta.push_str(if n == 0 {
                "other-net\n"
            } else {
                "'[{\"name\": \"other-net\", \"namespace\": \"team\"}]'\n"
            });
        }
        let mut spec = String::from("containers:\n");
        for (i, c) in w.containers.iter().enumerate() {
            spec.push_str(&format!("- name: {c}\n  image: busybox\n"));
            if i == 0 && !w.env.is_empty() {
                spec.push_str("  env:\n");
                for (k, v) in &w.env {
                    spec.push_str(&format!("  - name: {k}\n    value: {}\n", sq(v)));
                }
            }
            if i == 0 && w.caps {
                spec.push_str("  securityContext:\n    capabilities:\n      add: [SYS_PTRACE]\n");
            }
            if let Some(g) = w.gpus.filter(|_| i == 0) {
                spec.push_str(&format!(
                    "  resources:\n    limits:\n      nvidia.com/gpu: {g}\n      memory: 1Gi\n"
                ));
            }
        }
        match w.kind {
            0 => format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{}spec:\n{}",
                indent(&meta, 2),
                indent(&spec, 2)
            ),
            1 => format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    \
                 matchLabels: {{app: d}}\n  template:\n    metadata:\n      labels: {{app: d}}\n{}    spec:\n{}",
                indent(&meta, 6),
                indent(&spec, 6)
            ),
            _ => format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    \
                 metadata:\n{}    spec:\n{}      restartPolicy: Never\n",
                if meta.is_empty() {
                    "      labels: {app: j}\n".to_string()
                } else {
                    indent(&meta, 6)
                },
                indent(&spec, 6)
            ),
        }
    }

    /// Comments where `marks` say: a line of its own before line `i` (at column 0, which YAML allows
    /// anywhere outside a block scalar), a comment at the end of line `i`.
    fn with_comments(text: &str, marks: &[(bool, bool)]) -> String {
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            let (above, after) = marks.get(i).copied().unwrap_or_default();
            if above {
                out.push_str(&format!("# above {i}\n"));
            }
            out.push_str(line);
            if after {
                out.push_str(&format!("  # after {i}"));
            }
            out.push('\n');
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn applying_twice_changes_nothing(
            w in workload(),
            profile in 0..7usize,
            comments in proptest::collection::vec(any::<(bool, bool)>(), 48),
        ) {
            let input = with_comments(&text(&w), &comments);
            let names: Vec<&str> = builtin::names().collect();
            let plan = plan(names[profile % names.len()]);
            let opts = ApplyOptions::default();
            let once = apply(&Source::new("in.yaml", input.as_str()), &plan, &opts);
            let once = match once {
                Ok(a) => a,
                Err(p) => return Err(TestCaseError::fail(format!("{}\n{input}", describe(&p)))),
            };
            prop_assert_eq!(once.templates, 1, "{}", input);
            prop_assert!(once.notes.iter().all(|n| !n.contains("written anew")), "{:?}", once.notes);
            let twice = run(&once.text, &plan, &opts);
            prop_assert_eq!(&twice.text, &once.text, "not idempotent on\n{}", input);
            // The only lines that change are the ones the wiring rewrites: a profile variable's value,
            // the capabilities list, the Multus annotation.
            for (i, (above, after)) in comments.iter().enumerate() {
                for (on, c) in [(above, format!("# above {i}\n")), (after, format!("  # after {i}\n"))] {
                    prop_assert!(
                        !on || !input.contains(&c) || once.text.contains(&c),
                        "lost {:?} of\n{}\ngiving\n{}", c, input, once.text
                    );
                }
            }
            let (removed, _) = line_changes(&input, &once.text);
            for line in &removed {
                let t = line.trim_start();
                prop_assert!(
                    t.starts_with("value: ") || t.starts_with("add: ") || t.starts_with("k8s.v1.cni.cncf.io/networks: "),
                    "removed {:?} from\n{}\ngiving\n{}", line, input, once.text
                );
            }
        }
    }
}

fn commented() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apply/commented.yaml"),
    )
    .unwrap()
}

/// Which document (0: what precedes the first `---`) each line of `text` is in.
fn document_of_lines(text: &str) -> Vec<usize> {
    let mut doc = 0;
    text.lines()
        .map(|l| {
            if l == "---" {
                doc += 1;
            }
            doc
        })
        .collect()
}

#[test]
fn a_commented_manifest_keeps_every_line_but_the_wired_ones() {
    let text = commented();
    let plan = plan("coreweave/gb300-roce");
    let applied = run(&text, &plan, &ApplyOptions::default());
    let out = &applied.text;
    assert_eq!(
        applied.templates, 4,
        "Deployment, Job, MPIJob launcher and worker"
    );
    assert!(
        applied.notes.iter().all(|n| !n.contains("written anew")),
        "{:?}",
        applied.notes
    );

    // Every comment survives (a `#` in this fixture only ever starts one).
    for line in text.lines().filter(|l| l.contains('#')) {
        let comment = &line[line.find('#').unwrap()..];
        assert!(out.contains(comment), "lost {comment:?}:\n{out}");
    }
    // A line is removed only where the wiring changes it: at most 2 per pod template.
    let (removed, added) = line_changes(&text, out);
    assert_eq!(
        removed,
        [
            "        k8s.v1.cni.cncf.io/networks: 'storage/nfs@stor0'",
            "                value: mlx5   # wrong for this fabric; roce corrects it",
            "                      add: [SYS_NICE]   # a flow list that grows",
            "              limits: {nvidia.com/gpu: 4, memory: 900Gi}   # a flow map that grows",
        ],
        "{out}"
    );
    let docs = document_of_lines(&text);
    let per_doc: Vec<usize> = (0..=4)
        .map(|d| {
            removed
                .iter()
                .filter(|r| {
                    text.lines()
                        .zip(&docs)
                        .any(|(l, doc)| l == r.as_str() && *doc == d)
                })
                .count()
        })
        .collect();
    // Header, ConfigMap, Deployment (1 template), Job (1), MPIJob (the worker; its launcher stays).
    assert_eq!(per_doc, [0, 0, 1, 2, 1]);
    assert!(added > 100, "{added} lines of wiring");
    // The changed lines keep their comments and the style of the value.
    for line in [
        "                value: \"ibp\"   # wrong for this fabric; roce corrects it\n",
        "                      add: [SYS_NICE, IPC_LOCK]   # a flow list that grows\n",
        "              limits: {nvidia.com/gpu: 4, memory: 900Gi, rdma/ib: \"1\"}   # a flow map that grows\n",
        "        k8s.v1.cni.cncf.io/networks: |-\n          [{\"name\":\"nfs\",\"namespace\":\"storage\",\"interface\":\"stor0\"},\n",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    // New keys and items take the indentation of the block they join: two-space maps with indented
    // sequences in the Deployment, four-space maps with sequences at their key's column in the Job.
    for block in [
        "              value: 'info'\n            - name: NCCL_SOCKET_IFNAME\n              value: \"eth0\"\n",
        "          volumeMounts:\n            - name: dshm\n              mountPath: /dev/shm\n",
        "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n      nodeSelector:\n        backend.coreweave.cloud/flavor: roce\n      volumes:\n        - name: dshm\n",
        "    template:\n        metadata:\n            annotations:\n                roce.dev/profile: coreweave/gb300-roce\n",
        "              resources:\n                  requests:\n                      rdma/ib: \"1\"\n",
        "              volumeMounts:\n              - name: dshm\n                mountPath: /dev/shm\n",
        "              - name: NCCL_SOCKET_IFNAME\n                value: \"eth0\"\n",
    ] {
        assert!(out.contains(block), "missing {block:?} in\n{out}");
    }
    // The result is what apply decided: the same values as the old writer produced.
    let (a, b) = (documents(&text), documents(out));
    for (x, y) in a.iter().zip(&b) {
        contained(x, y, &plan, "").unwrap();
    }
}

#[test]
fn a_commented_manifest_applies_idempotently_with_every_profile_and_role() {
    let text = commented();
    for name in builtin::names() {
        let plan = plan(name);
        for role in ROLES {
            let opts = ApplyOptions {
                container: None,
                role,
            };
            let once = run(&text, &plan, &opts);
            let twice = run(&once.text, &plan, &opts);
            assert_eq!(once.text, twice.text, "{name} ({role:?})");
            for line in text.lines().filter(|l| l.starts_with('#')) {
                assert!(once.text.contains(line), "{name} ({role:?}) lost {line:?}");
            }
        }
    }
}

#[test]
fn a_commented_manifest_passes_kubernetes_validate_strict() {
    let out = run(
        &commented(),
        &plan("coreweave/gb300-roce"),
        &ApplyOptions::default(),
    )
    .text;
    // The Deployment and the Job (kubernetes-validate knows no MPIJob, and the ConfigMap is not wired).
    let docs: Vec<&str> = out.split("\n---\n").collect();
    let core = format!("{}\n---\n{}\n", docs[2], docs[3]);
    assert!(core.contains("kind: Deployment") && core.contains("kind: Job"));
    consumers::kubernetes_validate_strict(&core, consumers::K8S_VERSIONS).unwrap();
}

/// Apply, check that a second run changes nothing, and return the output with the lines it removed.
fn spliced(text: &str, profile: &str, role: RoleChoice) -> (String, Vec<String>) {
    let plan = plan(profile);
    let opts = ApplyOptions {
        container: None,
        role,
    };
    let out = run(text, &plan, &opts).text;
    assert_eq!(run(&out, &plan, &opts).text, out, "not idempotent:\n{out}");
    let (removed, _) = line_changes(text, &out);
    (out, removed)
}

#[test]
fn env_items_are_edited_deleted_and_added_line_by_line() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n    env:\n    - name: FIRST\n      value: a\n    - name: NCCL_IB_HCA   # first\n      value: mlx5\n    - name: MIDDLE\n      value: b\n    # a duplicate follows\n    - name: NCCL_IB_HCA\n      value: mlx5_0\n    - name: NCCL_NET_PLUGIN\n      valueFrom:\n        configMapKeyRef: {name: c, key: k}\n    - name: LAST\n      value: c\n";
    let (out, removed) = spliced(text, "coreweave/h100-ib", RoleChoice::Worker);
    assert_eq!(
        removed,
        [
            "      value: mlx5",
            "    - name: NCCL_IB_HCA",
            "      value: mlx5_0",
            "      valueFrom:",
            "        configMapKeyRef: {name: c, key: k}",
        ],
        "{out}"
    );
    assert!(out.contains("    - name: NCCL_IB_HCA   # first\n      value: \"ibp\"\n    - name: MIDDLE\n      value: b\n    # a duplicate follows\n    - name: NCCL_NET_PLUGIN\n      value: \"none\"\n    - name: LAST\n      value: c\n    - name: "), "{out}");
}

#[test]
fn empty_values_become_blocks_and_keep_their_comments() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    metadata:\n      annotations:   # none yet\n    spec:\n      containers:\n      - name: main\n        image: x\n        resources: {}\n        env: []\n        securityContext:\n      nodeSelector: {}\n";
    let (out, removed) = spliced(text, "coreweave/gb300-roce", RoleChoice::Worker);
    assert_eq!(
        removed,
        [
            "        resources: {}",
            "        env: []",
            "      nodeSelector: {}"
        ],
        "{out}"
    );
    for block in [
        "      annotations:   # none yet\n        roce.dev/profile: coreweave/gb300-roce\n",
        "        resources:\n          requests:\n",
        "        env:\n        - name: NCCL_SOCKET_IFNAME\n",
        "        securityContext:\n          capabilities:\n            add:\n            - IPC_LOCK\n",
        "      nodeSelector:\n        backend.coreweave.cloud/flavor: roce\n",
    ] {
        assert!(out.contains(block), "missing {block:?} in\n{out}");
    }
}

#[test]
fn a_launcher_script_changes_only_its_mpirun_lines() {
    let script = "            command:\n            - /bin/bash\n            - -c\n            - |\n              set -e   # not a YAML comment: script text\n              echo start\n              mpirun -np 16 \\\n                -x NCCL_IB_HCA=mlx5 ./run\n              echo done\n";
    let (out, removed) = spliced(&mpijob(script), "coreweave/h100-ib", RoleChoice::Launcher);
    assert_eq!(
        removed,
        [
            "              mpirun -np 16 \\",
            "                -x NCCL_IB_HCA=mlx5 ./run"
        ],
        "{out}"
    );
    assert!(out.contains("            - |\n              set -e   # not a YAML comment: script text\n              echo start\n              mpirun -x NCCL_SOCKET_IFNAME"), "{out}");
}

#[test]
fn a_block_annotation_that_grows_keeps_its_lines() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    k8s.v1.cni.cncf.io/networks: |-\n      [{\"name\":\"nfs\",\"namespace\":\"storage\"},\n       {\"name\":\"ibs0p0-macvlan\",\"namespace\":\"cw-multus\"}]\nspec:\n  containers:\n  - name: main\n    image: x\n";
    let (out, removed) = spliced(text, "coreweave/gb300-roce", RoleChoice::Worker);
    assert_eq!(
        removed,
        ["       {\"name\":\"ibs0p0-macvlan\",\"namespace\":\"cw-multus\"}]"],
        "{out}"
    );
}

#[test]
fn line_ends_and_a_missing_final_newline_are_kept_apart() {
    let crlf = "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p # crlf\r\nspec:\r\n  containers:\r\n  - name: main\r\n    image: x\r\n";
    let (out, _) = spliced(crlf, "coreweave/gb300-roce", RoleChoice::Worker);
    assert!(
        out.starts_with(
            "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p # crlf\r\n  annotations:\r\n"
        ),
        "{out:?}"
    );
    assert_eq!(
        out.matches('\n').count(),
        out.matches("\r\n").count(),
        "{out:?}"
    );

    let bare = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x";
    let (out, removed) = spliced(bare, "coreweave/gb300-roce", RoleChoice::Worker);
    assert_eq!(
        removed,
        ["    image: x"],
        "only the final line gains its newline"
    );
    assert!(
        !out.contains("\n\n") && out.ends_with("medium: Memory\n"),
        "{out}"
    );
}

#[test]
fn list_items_and_flow_templates() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  apiVersion: v1\n  spec:\n    containers:\n    - name: a   # first\n      image: x\n- kind: Pod\n  apiVersion: v1\n  metadata: {name: b}\n  spec: {containers: [{name: b, image: y}]}\n";
    let (out, removed) = spliced(text, "coreweave/h100-ib", RoleChoice::Worker);
    assert_eq!(
        removed,
        [
            "- kind: Pod",
            "  metadata: {name: b}",
            "  spec: {containers: [{name: b, image: y}]}"
        ],
        "{out}"
    );
    // A template's new metadata goes first, on the item's dash line.
    assert!(out.contains("items:\n- metadata:\n    annotations:\n      roce.dev/profile: coreweave/h100-ib\n  kind: Pod\n"), "{out}");
    // A flow mapping that stays short stays flow; one that would make a long line becomes a block.
    assert!(out.contains("  metadata: {name: b, annotations: {roce.dev/profile: coreweave/h100-ib}}\n  spec:\n    containers:\n    - name: b\n      image: y\n"), "{out}");
}

#[test]
fn a_document_with_aliases_is_written_anew() {
    // An edit inside an anchor would also change every alias of it: such a document is written out.
    let text = "# kept: outside the document\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: pt # lost with the document\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      template: &pod\n        spec:\n          containers:\n          - name: pytorch\n            image: x\n    Worker:\n      template: *pod\n";
    let (out, _) = spliced(text, "coreweave/h100-ib", RoleChoice::Worker);
    let notes = run(text, &plan("coreweave/h100-ib"), &ApplyOptions::default()).notes;
    assert!(
        notes
            .iter()
            .any(|n| n
                .contains("document 1 (kind PyTorchJob) is written anew, without its comments")),
        "{notes:?}"
    );
    assert!(
        out.starts_with("# kept: outside the document\napiVersion: kubeflow.org/v1\n"),
        "{out}"
    );
    assert!(
        !out.contains("lost with") && !out.contains('&') && !out.contains('*'),
        "{out}"
    );
    let docs = documents(&out);
    for role in ["Master", "Worker"] {
        let c = &docs[0]["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
        assert_eq!(c["resources"]["limits"]["rdma/ib"], "1", "{role}");
    }
}

#[test]
fn deep_values_beside_a_template_are_spliced_without_overflow() {
    let depth = 200;
    let mut deep = String::new();
    for i in 0..depth {
        deep.push_str(&format!("{}k{i}:\n", " ".repeat(2 * i + 4)));
    }
    deep.push_str(&format!("{}leaf: 1\n", " ".repeat(2 * depth + 4)));
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n{deep}spec:\n  containers:\n  - name: main\n    image: x\n"
    );
    let (out, removed) = spliced(&text, "coreweave/h100-ib", RoleChoice::Worker);
    assert!(removed.is_empty(), "{removed:?}");
    assert!(out.contains("leaf: 1\n"));
}

/// Every manifest the lint tests use (kinds, good, broken): apply either refuses it with problems or
/// applies idempotently, keeping each comment line and writing no document anew.
#[test]
fn every_lint_fixture_applies_idempotently_or_is_refused() {
    let root = kinds_dir().join("..");
    let mut files = Vec::new();
    for dir in ["kinds", "good", "broken"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut applied = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        for name in ["coreweave/gb300-roce", "coreweave/h100-ib"] {
            let plan = plan(name);
            for role in ROLES {
                let opts = ApplyOptions {
                    container: header_container(&text),
                    role,
                };
                let Ok(once) = apply(&Source::new("in.yaml", text.as_str()), &plan, &opts) else {
                    continue;
                };
                applied += 1;
                let twice = run(&once.text, &plan, &opts);
                assert_eq!(once.text, twice.text, "{} {name} {role:?}", path.display());
                for line in text.lines().filter(|l| l.trim_start().starts_with('#')) {
                    assert!(
                        once.text.contains(line),
                        "{}: lost {line:?}",
                        path.display()
                    );
                }
                assert!(
                    once.notes.iter().all(|n| !n.contains("written anew")),
                    "{}: {:?}",
                    path.display(),
                    once.notes
                );
            }
        }
    }
    assert!(applied >= 14 * 6, "{applied} applications");
}

/// Mangled copies of the commented fixture (lines dropped, repeated, re-indented, comments added): apply
/// never panics, and whatever it accepts it applies idempotently.
mod mangled {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Change {
        Drop(usize),
        Repeat(usize),
        Indent(usize, usize),
        Comment(usize),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            (0..110usize).prop_map(Change::Drop),
            (0..110usize).prop_map(Change::Repeat),
            (0..110usize, 1..4usize).prop_map(|(l, n)| Change::Indent(l, n)),
            (0..110usize).prop_map(Change::Comment),
        ]
    }

    fn mangle(text: &str, changes: &[Change]) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for c in changes {
            let n = lines.len();
            match *c {
                Change::Drop(i) if i < n => {
                    lines.remove(i);
                }
                Change::Repeat(i) if i < n => {
                    let l = lines[i].clone();
                    lines.insert(i, l);
                }
                Change::Indent(i, k) if i < n => lines[i].insert_str(0, &" ".repeat(k)),
                Change::Comment(i) if i < n => {
                    lines.insert(i, format!("{}# mangled", " ".repeat(i % 9)))
                }
                _ => {}
            }
        }
        lines.join("\n") + "\n"
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn whatever_apply_accepts_it_applies_idempotently(changes in proptest::collection::vec(change(), 1..4)) {
            let input = mangle(&commented(), &changes);
            let plan = plan("coreweave/gb300-roce");
            let opts = ApplyOptions::default();
            if let Ok(once) = apply(&Source::new("in.yaml", input.as_str()), &plan, &opts) {
                let twice = apply(&Source::new("out.yaml", once.text.as_str()), &plan, &opts);
                let twice = match twice {
                    Ok(t) => t,
                    Err(p) => return Err(TestCaseError::fail(format!("output refused: {}\n{}", describe(&p), once.text))),
                };
                prop_assert_eq!(&twice.text, &once.text, "not idempotent on\n{}", input);
            }
        }
    }
}

/// The Inspector's directory (`examples/nccl-observability.kdl`): apply mounts an `emptyDir` there in a
/// pod that has none, and keeps a volume the container already mounts there (adding no second one, and no
/// volume without a mount); both times the Inspector's variables are written.
#[test]
fn apply_mounts_the_inspector_directory_unless_the_container_has_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/nccl-observability.kdl");
    let text = std::fs::read_to_string(&path).unwrap();
    let plan = roce_render::plan::lower(
        &load(Source::new("nccl-observability.kdl", text), &BuiltinsOnly)
            .profile
            .unwrap(),
    );
    let pod = |mounts: &str, volumes: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: main\n    image: x\n{mounts}{volumes}"
        )
    };
    let volumes_of = |text: &str| -> Vec<serde_json::Value> {
        let doc = documents(text).pop().unwrap();
        doc["spec"]["volumes"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let bare = run(&pod("", ""), &plan, &ApplyOptions::default());
    let vols = volumes_of(&bare.text);
    assert!(
        vols.iter()
            .any(|v| v["name"] == "nccl-inspector" && v["emptyDir"].is_object()),
        "{}",
        bare.text
    );
    assert!(bare.text.contains("mountPath: /var/log/nccl-inspector"));
    assert!(bare.text.contains("NCCL_INSPECTOR_ENABLE"));

    let own = pod(
        "    volumeMounts:\n    - name: logs\n      mountPath: /var/log/nccl-inspector/\n",
        "  volumes:\n  - name: logs\n    persistentVolumeClaim:\n      claimName: logs\n",
    );
    let kept = run(&own, &plan, &ApplyOptions::default());
    let vols = volumes_of(&kept.text);
    assert!(
        !vols.iter().any(|v| v["name"] == "nccl-inspector"),
        "{}",
        kept.text
    );
    assert!(vols.iter().any(|v| v["name"] == "logs"));
    assert_eq!(
        kept.text.matches("/var/log/nccl-inspector").count(),
        2,
        "{}",
        kept.text
    );
}

/// A plugin named by path is opened as given: apply leaves the image's `LD_LIBRARY_PATH` alone there (a
/// container's value would replace it), and writes the profile's where NCCL looks the plugin up by name.
#[test]
fn the_library_path_is_left_to_the_image_where_the_plugin_is_named_by_path() {
    let pod = |plugin: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n    env:\n    - name: NCCL_NET_PLUGIN\n      value: {plugin}\n"
        )
    };
    let (out, _) = spliced(
        &pod("/opt/aws-ofi-nccl/lib/libnccl-net-ofi.so"),
        "aws/p5-efa",
        RoleChoice::Worker,
    );
    assert!(!out.contains("LD_LIBRARY_PATH"), "{out}");
    assert!(out.contains("FI_PROVIDER"), "{out}");
    let (out, _) = spliced(&pod("ofi"), "aws/p5-efa", RoleChoice::Worker);
    assert!(out.contains("LD_LIBRARY_PATH"), "{out}");
}
