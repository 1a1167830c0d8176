//! `apply_object` (the webhook's path: the decisions of `apply` on a parsed JSON object, no YAML text) gives
//! what `roce apply` gives: for every built-in profile, every workload kind the webhook is sent (the kind
//! fixtures shared with lint, the DRA fixtures, objects as the API server fills them in) and every MPI role,
//! the wired object and the objects added beside it read the same as `apply`'s output for the object
//! written as YAML, key order included, with the same notes; and a refused object gets the same problems.

use std::path::{Path, PathBuf};

use roce_model::{BuiltinsOnly, Problem, Source, builtin, load};
use roce_render::Plan;
use roce_render::apply::{ApplyOptions, RoleChoice, apply, apply_object, object_text};
use serde_json::{Value, json};

fn plan(name: &str) -> Plan {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    roce_render::plan::lower(&loaded.profile.unwrap())
}

/// Every document of the fixtures, as the JSON an API server would send, with its name.
fn objects() -> Vec<(String, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        "../roce-inspect/tests/fixtures/manifests/kinds",
        "tests/fixtures/dra",
    ];
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        for (i, d) in docs.into_iter().enumerate() {
            if d.is_object() {
                out.push((format!("{name}#{}", i + 1), d));
            }
        }
    }
    out.extend([
        ("webhook pod".to_string(), api_server_pod()),
        ("odd scalars".to_string(), odd_scalars()),
    ]);
    out
}

/// A Pod as the API server hands it to a mutating webhook (defaults filled in).
fn api_server_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "nccl-0", "namespace": "training", "labels": {"app": "nccl-tests", "roce.dev/profile": "x"}},
        "spec": {
            "containers": [{
                "name": "main", "image": "ghcr.io/coreweave/nccl-tests:12.8",
                "command": ["all_reduce_perf", "-b", "8", "-e", "8G"],
                "env": [{"name": "MY_VAR", "value": "1"}, {"name": "NCCL_IB_HCA", "value": "mlx5"}],
                "resources": {"limits": {"memory": "64Gi"}, "requests": {"cpu": "8"}},
                "terminationMessagePath": "/dev/termination-log",
                "volumeMounts": [{"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]
            }],
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "enableServiceLinks": true,
            "priority": 0, "securityContext": {},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
        }
    })
}

/// Nulls where apply writes, numbers of every JSON kind, strings YAML would read as something else, lines.
fn odd_scalars() -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "odd", "annotations": {"a": "yes", "b": "010", "c": "line\nbreak\n", "d": ""}},
        "spec": {
            "backoffLimit": 0, "activeDeadlineSeconds": 9007199254740993u64,
            "template": {
                "metadata": {"annotations": null, "labels": {"n": "1.5", "t": "true"}},
                "spec": {
                    "nodeSelector": null,
                    "containers": [{
                        "name": "main", "image": "x", "env": null, "resources": {},
                        "args": ["-x", "~", "null", "# not a comment", "a: b", " lead"],
                        "securityContext": {"capabilities": {"add": null}},
                        "x-float": 1.5, "x-exp": 1e300, "x-neg": -0.0, "x-big": 18446744073709551615u64,
                        "x-bool": false, "x-null": null, "x-empty": [], "x-nested": [[{}]]
                    }],
                    "restartPolicy": "Never"
                }
            }
        }
    })
}

fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {} {:?} {}\n", p.code, p.location(), p.message))
        .collect()
}

#[test]
fn the_webhook_path_gives_what_roce_apply_gives() {
    let objects = objects();
    assert!(objects.len() >= 16, "{}", objects.len());
    let mut compared = 0;
    for profile in builtin::names() {
        let plan = plan(profile);
        for (name, object) in &objects {
            for role in [RoleChoice::Worker, RoleChoice::Launcher, RoleChoice::All] {
                let opts = ApplyOptions {
                    container: None,
                    role,
                };
                let what = format!("{profile} × {name} × {role:?}");
                let text = object_text(object);
                let slow = apply(&Source::new(name.as_str(), text.clone()), &plan, &opts);
                let fast = apply_object(name, object, &plan, &opts);
                match (slow, fast) {
                    (Ok(slow), Ok(fast)) => {
                        let read: Vec<Value> = serde_saphyr::from_multiple(&slow.text)
                            .unwrap_or_else(|e| panic!("{what}: {e}\n{}", slow.text));
                        let mut got = fast.added.clone();
                        got.push(fast.object.clone());
                        // Byte for byte as JSON: the same values, the same key order.
                        assert_eq!(
                            serde_json::to_string_pretty(&got).unwrap(),
                            serde_json::to_string_pretty(&read).unwrap(),
                            "{what}\n{}",
                            slow.text
                        );
                        assert_eq!(fast.notes, slow.notes, "{what}");
                        assert_eq!(fast.templates, slow.templates, "{what}");
                        // Idempotent as apply is: the wired object gets nothing more.
                        let again = apply_object(name, &fast.object, &plan, &opts).unwrap();
                        assert_eq!(again.object, fast.object, "{what}");
                        compared += 1;
                    }
                    (Err(slow), Err(fast)) => {
                        assert_eq!(describe(&fast), describe(&slow), "{what}");
                    }
                    (slow, fast) => panic!(
                        "{what}: apply {} but apply_object {}",
                        if slow.is_ok() { "wires" } else { "refuses" },
                        if fast.is_ok() { "wires" } else { "refuses" }
                    ),
                }
            }
        }
    }
    assert!(compared > 100, "{compared}");
}

#[test]
fn a_refused_object_gets_the_problems_of_its_text() {
    let plan = plan(builtin::DEFAULT);
    for object in [
        json!({"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": {"name": "a"}}}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"annotations": {"k8s.v1.cni.cncf.io/networks": "a/b/c"}},
               "spec": {"containers": [{"name": "a"}]}}),
    ] {
        let fast = apply_object("request.object", &object, &plan, &ApplyOptions::default())
            .expect_err("refused");
        let slow = apply(
            &Source::new("request.object", object_text(&object)),
            &plan,
            &ApplyOptions::default(),
        )
        .expect_err("refused");
        assert_eq!(describe(&fast), describe(&slow));
        assert!(
            fast.iter()
                .all(|p| p.location().is_some_and(|l| l.line > 1)),
            "{}",
            describe(&fast)
        );
    }
}

/// The webhook writes the runtime class a profile names (the k3s example): into a pod without one, or with
/// Kubernetes' default (`null`, `""`); a pod's own class is kept (`roce lint` reports it).
#[test]
fn the_webhook_writes_the_runtime_class_and_keeps_a_pods_own() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k3s-h100-ib.kdl");
    let text = std::fs::read_to_string(path).unwrap();
    let profile = load(Source::new("k3s-h100-ib.kdl", text), &BuiltinsOnly)
        .profile
        .unwrap();
    let plan = roce_render::plan::lower(&profile);
    for (have, want) in [
        (None, "nvidia"),
        (Some(json!(null)), "nvidia"),
        (Some(json!("")), "nvidia"),
        (Some(json!("nvidia")), "nvidia"),
        (Some(json!("kata-qemu")), "kata-qemu"),
    ] {
        let mut pod = api_server_pod();
        if let Some(h) = &have {
            pod["spec"]["runtimeClassName"] = h.clone();
        }
        let wired = apply_object("request.object", &pod, &plan, &ApplyOptions::default()).unwrap();
        assert_eq!(wired.object["spec"]["runtimeClassName"], want, "{have:?}");
    }
}
