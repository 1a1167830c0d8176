//! The kustomize target against the real consumer: every Component is built with `kubectl kustomize`
//! next to real workloads, the output is read back and checked value by value, and the built
//! manifests go through `kubernetes-validate --strict`.
//!
//! Tools come from `.ci/install-tools` (see `support/consumers.rs`): locally a missing tool skips
//! loudly, under `CI=true` it fails. Reading the output back needs python3 with PyYAML, with the
//! same rule.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use roce_model::fabric::env::POD_DEPENDENT;
use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::exec::ExecWrap;
use roce_render::kustomize::{self, Selector};
use roce_render::plan::{MULTUS_ANNOTATION, Plan};
use roce_render::plumbing::multus;
use roce_render::plumbing::pod::escape_dependent_vars;
use roce_render::{PROFILE_ANNOTATION, RenderError, RenderOptions};
use serde_json::{Value, json};

use crate::support::consumers;

fn plan_of(name: &str) -> Plan {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    let profile = loaded
        .profile
        .unwrap_or_else(|| panic!("{name}: {:?}", loaded.problems));
    roce_render::plan::lower(&profile)
}

/// The comma-form list the plan's networks must add, in rail order.
fn our_networks(plan: &Plan) -> Option<String> {
    let w = plan.wiring.as_ref()?;
    let items: Vec<String> = w.networks.iter().map(|n| n.to_string()).collect();
    (!items.is_empty()).then(|| items.join(","))
}

/// Every YAML document of `text` as JSON, via PyYAML; `None` (skipped) when python3 or PyYAML is
/// missing outside CI.
fn yaml_docs(text: &str) -> Option<Vec<Value>> {
    const SCRIPT: &str = "import sys, yaml, json\n\
        print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d is not None]))";
    let probe = Command::new("python3").args(["-c", "import yaml"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            !consumers::tools_required(),
            "python3 with PyYAML is needed to read kustomize output, and CI is set"
        );
        eprintln!("\n!!! SKIPPED: python3 with PyYAML is missing !!!\n");
        return None;
    }
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "PyYAML rejected the YAML: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes the rendered Component to `<dir>/<name>/` and returns the file names.
fn write_component(dir: &Path, name: &str, plan: &Plan, opts: &RenderOptions) -> Vec<String> {
    let files = kustomize::render(plan, opts).expect("render");
    let comp = dir.join(name);
    std::fs::create_dir_all(&comp).unwrap();
    for f in &files {
        assert!(!f.path.contains('/'), "flat file names: {}", f.path);
        std::fs::write(comp.join(&f.path), &f.contents).unwrap();
    }
    files.into_iter().map(|f| f.path).collect()
}

/// Builds `app/` (a kustomization over `base.yaml` using `components`) next to the components.
/// `Ok(None)` when kubectl is missing (skipped); `Err` with kubectl's report when the build fails.
fn build(dir: &Path, base: &str, components: &[&str]) -> Result<Option<String>, String> {
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("base.yaml"), base).unwrap();
    let comps: Vec<String> = components.iter().map(|c| format!("- ../{c}\n")).collect();
    std::fs::write(
        app.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- base.yaml\ncomponents:\n{}",
            comps.concat()
        ),
    )
    .unwrap();
    consumers::kubectl_kustomize(&app)
}

/// A Deployment whose `main` container is second, with an env var every profile sets (with another
/// value), one of its own, a capability, a mount, a node selector and a volume of its own.
fn deployment(name: &str, networks: Option<&str>) -> String {
    let annotations = match networks {
        Some(v) => format!(
            "      annotations:\n        {MULTUS_ANNOTATION}: {}\n",
            serde_json::to_string(v).unwrap()
        ),
        None => String::new(),
    };
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
{annotations}    spec:
      nodeSelector:
        topology.kubernetes.io/zone: zone-a
      containers:
      - name: sidecar
        image: busybox:1.36
        env:
        - name: NCCL_IB_HCA
          value: sidecar-value
        resources:
          limits:
            cpu: "1"
      - name: main
        image: busybox:1.36
        env:
        - name: KEEP_ME
          value: kept
        - name: NCCL_IB_HCA
          value: mlx5_0
        resources:
          limits:
            cpu: "2"
        securityContext:
          capabilities:
            add:
            - SYS_PTRACE
        volumeMounts:
        - name: data
          mountPath: /data
      volumes:
      - name: data
        emptyDir: {{}}
"#
    )
}

/// [`deployment`] whose `main` container already mounts its own volume at `/dev/shm`.
fn deployment_with_own_shm(name: &str) -> String {
    deployment(name, None)
        .replace(
            "          mountPath: /data\n",
            "          mountPath: /data\n        - name: myshm\n          mountPath: /dev/shm\n",
        )
        .replace(
            "        emptyDir: {}\n",
            "        emptyDir: {}\n      - name: myshm\n        emptyDir: {}\n",
        )
}

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  selector:\n    app: plain\n  ports:\n  - port: 80\n";

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in output"))
}

/// A quantity as Kubernetes reads it (kustomize may write `4` or `"4"`).
fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("not a quantity: {other}"),
    }
}

/// Multus's comma-form parser (k8sclient.parsePodNetworkAnnotation): JSON when the value contains
/// any of `[`, `{`, `"`; else comma-separated `namespace/name@ifname` items whose namespace and name
/// are DNS labels. Returns the `namespace/name` items, or why Multus would reject the value.
fn multus_items(value: &str) -> Result<Vec<String>, String> {
    if value.is_empty() {
        return Err("empty".into());
    }
    if value.contains(['[', '{', '"']) {
        let list: Vec<Value> = serde_json::from_str(value).map_err(|e| format!("JSON: {e}"))?;
        return Ok(list
            .iter()
            .map(|n| format!("{}/{}", n["namespace"].as_str().unwrap_or(""), n["name"]))
            .collect());
    }
    let label = |s: &str| {
        s.is_empty()
            || (s.len() <= 63
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !s.starts_with('-')
                && !s.ends_with('-'))
    };
    let mut out = Vec::new();
    for item in value.split(',') {
        let item = item.trim();
        let (ns, rest) = match item.split_once('/') {
            Some((ns, rest)) if !rest.contains('/') => (ns.trim(), rest),
            Some(_) => return Err(format!("{item:?}: more than one '/'")),
            None => ("", item),
        };
        let name = rest.split('@').next().unwrap().trim();
        if !label(ns) || !label(name) {
            return Err(format!("{item:?}: not DNS labels"));
        }
        if name.is_empty() {
            // Parses, then fails: "cannot find a network-attachment-definition ()".
            return Err(format!("{item:?}: empty network name"));
        }
        out.push(format!("{ns}/{name}"));
    }
    Ok(out)
}

/// Checks one built workload against its base: the wired container carries the plan exactly, the
/// rest of the pod template is the base's plus the plan's pod-level fields.
fn check_wired(plan: &Plan, built: &Value, base: &Value, template: &[&str], index: usize) {
    let at = |v: &Value| {
        let mut v = v.clone();
        for key in template {
            v = v[*key].clone();
        }
        v
    };
    let (got, want) = (at(built), at(base));
    let what = format!("{} {}", plan.profile, built["metadata"]["name"]);
    let containers = got["spec"]["containers"].as_array().unwrap();
    let base_containers = want["spec"]["containers"].as_array().unwrap();
    // Kustomize's strategic merge moves the patched container to the front (kubernetes-sigs/
    // kustomize#5904); the others keep their order and are untouched.
    let mut order: Vec<&Value> = base_containers.iter().collect();
    let wired = order.remove(index);
    order.insert(0, wired);
    let names = |cs: &[&Value]| cs.iter().map(|c| c["name"].clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&containers.iter().collect::<Vec<_>>()),
        names(&order),
        "{what}: container order"
    );
    for (c, b) in containers.iter().zip(&order).skip(1) {
        assert_eq!(c, *b, "{what}: other containers must be untouched");
    }
    let c = &containers[0];
    let b = &base_containers[index];

    // env: every plan variable exactly once with the exact string; the base's own kept.
    let env = c["env"].as_array().unwrap();
    let env_names: Vec<&str> = env.iter().map(|e| e["name"].as_str().unwrap()).collect();
    let unique: BTreeSet<&str> = env_names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        env_names.len(),
        "{what}: duplicate env {env_names:?}"
    );
    for var in &plan.env {
        let entry = env
            .iter()
            .find(|e| e["name"] == var.name.as_str())
            .unwrap_or_else(|| panic!("{what}: {} missing", var.name));
        assert_eq!(
            entry,
            &json!({"name": var.name, "value": escape_dependent_vars(&var.value)}),
            "{what}: {} must be the profile's string",
            var.name
        );
    }
    for e in b["env"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        if plan.env_value(name).is_none() {
            assert!(env.contains(e), "{what}: base env {name} lost");
        }
    }
    let base_only = b["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| plan.env_value(e["name"].as_str().unwrap()).is_none())
        .count();
    assert_eq!(env.len(), plan.env.len() + base_only, "{what}: env count");

    // requests and limits: the plan's quantities in both; the base's own kept.
    for side in ["requests", "limits"] {
        let empty = serde_json::Map::new();
        let got = c["resources"][side].as_object().unwrap_or(&empty);
        let mut want: Vec<(String, String)> = plan.resources();
        if let Some(own) = b["resources"][side].as_object() {
            want.extend(own.iter().map(|(k, v)| (k.clone(), quantity(v))));
        }
        let got: BTreeSet<(String, String)> =
            got.iter().map(|(k, v)| (k.clone(), quantity(v))).collect();
        assert_eq!(
            got,
            want.into_iter().collect::<BTreeSet<_>>(),
            "{what}: {side}"
        );
    }

    // capabilities: the base's, then the plan's not already there.
    let mut caps: Vec<Value> = b["securityContext"]["capabilities"]["add"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for cap in plan.wiring.iter().flat_map(|w| &w.capabilities) {
        if !caps.contains(&json!(cap)) {
            caps.push(json!(cap));
        }
    }
    assert_eq!(
        c["securityContext"]["capabilities"]["add"],
        Value::Array(caps),
        "{what}: capabilities"
    );

    // /dev/shm: one memory-backed volume mounted once; the base's mounts and volumes kept.
    let mounts = c["volumeMounts"].as_array().unwrap();
    let shm: Vec<&Value> = mounts
        .iter()
        .filter(|m| m["mountPath"] == "/dev/shm")
        .collect();
    assert_eq!(
        shm,
        [&json!({"name": "dshm", "mountPath": "/dev/shm"})],
        "{what}: /dev/shm mount"
    );
    for m in b["volumeMounts"].as_array().into_iter().flatten() {
        if m["mountPath"] != "/dev/shm" {
            assert!(mounts.contains(m), "{what}: base mount lost");
        }
    }
    let volumes = got["spec"]["volumes"].as_array().unwrap();
    assert!(
        volumes.contains(&json!({"name": "dshm", "emptyDir": {"medium": "Memory"}})),
        "{what}: dshm volume"
    );
    for v in want["spec"]["volumes"].as_array().into_iter().flatten() {
        assert!(volumes.contains(v), "{what}: base volume lost");
    }
    // the network provider's host directories: a hostPath volume each, mounted read-only
    for h in &plan.host_mounts {
        let vol = json!({"name": h.name.as_str(), "hostPath": {"path": h.host_path, "type": "Directory"}});
        assert!(
            volumes.contains(&vol),
            "{what}: host volume {}",
            h.name.as_str()
        );
        let mount = json!({"name": h.name.as_str(), "mountPath": h.mount_path, "readOnly": true});
        assert!(
            mounts.contains(&mount),
            "{what}: host mount {}",
            h.name.as_str()
        );
    }
    // the topology file: its ConfigMap's one key, mounted read-only where NCCL_TOPO_FILE points
    if let Some(t) = &plan.topology {
        let vol = json!({"name": "nccl-topology", "configMap": {"name": t.config_map.as_str(),
            "items": [{"key": t.key, "path": t.key}]}});
        assert!(volumes.contains(&vol), "{what}: topology volume");
        let mount = json!({"name": "nccl-topology", "mountPath": t.path, "subPath": t.key, "readOnly": true});
        assert!(mounts.contains(&mount), "{what}: topology mount");
    }
    // a host-network plan: the node's network namespace, a privileged container, the host's /dev/infiniband
    if plan.host_network {
        assert_eq!(
            got["spec"]["hostNetwork"],
            json!(true),
            "{what}: hostNetwork"
        );
        assert_eq!(
            got["spec"]["dnsPolicy"],
            json!("ClusterFirstWithHostNet"),
            "{what}: dnsPolicy"
        );
        assert_eq!(
            c["securityContext"]["privileged"],
            json!(true),
            "{what}: privileged"
        );
        let vol = json!({"name": "dev-infiniband", "hostPath": {"path": "/dev/infiniband", "type": "Directory"}});
        assert!(volumes.contains(&vol), "{what}: /dev/infiniband volume");
        let mount = json!({"name": "dev-infiniband", "mountPath": "/dev/infiniband"});
        assert!(mounts.contains(&mount), "{what}: /dev/infiniband mount");
    } else {
        assert!(
            got["spec"].get("hostNetwork").is_none(),
            "{what}: hostNetwork"
        );
        assert!(
            c["securityContext"].get("privileged").is_none(),
            "{what}: privileged"
        );
    }
    assert_eq!(
        volumes.len(),
        want["spec"]["volumes"].as_array().map_or(0, Vec::len)
            + 1
            + usize::from(plan.host_network)
            + plan.host_mounts.len()
            + usize::from(plan.topology.is_some()),
        "{what}: volumes"
    );

    // nodeSelector: the plan's labels (as strings) plus the base's.
    let mut selector = want["spec"]["nodeSelector"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (k, v) in &plan.node_selector {
        selector.insert(k.clone(), json!(v));
    }
    assert_eq!(
        got["spec"]["nodeSelector"],
        Value::Object(selector),
        "{what}: nodeSelector"
    );

    assert_eq!(
        got["metadata"]["annotations"][PROFILE_ANNOTATION],
        plan.profile.as_str(),
        "{what}: profile annotation"
    );
    // The Component's marker label is removed again; a workload that had no labels keeps an empty
    // map, which Kubernetes reads as none.
    let labels = |v: &Value| match &v["metadata"]["labels"] {
        Value::Null => json!({}),
        l => l.clone(),
    };
    let mut want_labels = labels(&want);
    for (k, v) in &plan.dra.labels {
        want_labels[k] = json!(v);
    }
    assert_eq!(labels(&got), want_labels, "{what}: labels");

    // DRA: the plan's pod claims and the container's use of them; the clique affinity term.
    let claim_names = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|c| c["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let plan_claims: Vec<String> = plan
        .dra
        .pod_claims
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(
        claim_names(&got["spec"]["resourceClaims"]),
        plan_claims,
        "{what}: resourceClaims"
    );
    assert_eq!(
        claim_names(&c["resources"]["claims"]),
        plan_claims,
        "{what}: container claims"
    );
    let affinity = serde_json::to_value(&plan.dra.affinity).unwrap();
    assert_eq!(got["spec"]["affinity"], affinity, "{what}: affinity");
}

fn networks_of(doc: &Value, template: &[&str]) -> Option<String> {
    let mut v = doc.clone();
    for key in template {
        v = v[*key].clone();
    }
    v["metadata"]["annotations"][MULTUS_ANNOTATION]
        .as_str()
        .map(str::to_string)
}

const TEMPLATE: &[&str] = &["spec", "template"];

#[test]
fn every_builtin_profile_wires_deployments_for_real() {
    const EXISTING: &str = "default/storage@stor0, scratch";
    for name in builtin::names() {
        let plan = plan_of(name);
        let dir = consumers::temp_dir("kustomize-profile");
        write_component(&dir, "component", &plan, &RenderOptions::default());
        let base = [
            deployment("plain", None),
            deployment("comma", Some(EXISTING)),
            deployment("empty", Some("")),
            deployment_with_own_shm("own-shm"),
            SERVICE.to_string(),
        ]
        .join("---\n");
        let built = match build(&dir, &base, &["component"]) {
            Ok(Some(b)) => b,
            Ok(None) => return,
            Err(e) => panic!("{name}: {e}"),
        };
        let Some(docs) = yaml_docs(&built) else {
            return;
        };
        let base_docs = yaml_docs(&base).unwrap();
        assert_eq!(
            docs.len(),
            base_docs.len() + plan.dra.documents.len(),
            "{name}: no object dropped; added only the objects DRA claims name"
        );
        assert!(
            docs.iter().all(|d| d["apiVersion"] != "roce.dev/v1alpha1"),
            "{name}: the local-config source must not reach the output"
        );
        assert_eq!(
            find(&docs, "Service", "svc"),
            find(&base_docs, "Service", "svc"),
            "{name}: Service untouched"
        );
        for w in ["plain", "comma", "empty", "own-shm"] {
            check_wired(
                &plan,
                find(&docs, "Deployment", w),
                find(&base_docs, "Deployment", w),
                TEMPLATE,
                1,
            );
        }

        let got = |w: &str| networks_of(find(&docs, "Deployment", w), TEMPLATE);
        match our_networks(&plan) {
            Some(ours) => {
                assert_eq!(ours.split(',').count(), 16, "{name}: 16 rails");
                assert_eq!(
                    got("plain").as_deref(),
                    Some(ours.as_str()),
                    "{name}: no annotation"
                );
                // Kustomize cannot tell "" from a value: the append leaves a stray comma, which
                // Multus rejects and `roce lint` (this parser) reports.
                assert_eq!(
                    got("empty"),
                    Some(format!(",{ours}")),
                    "{name}: empty annotation"
                );
                let stray = multus::parse(&got("empty").unwrap()).unwrap_err();
                assert!(stray.message.contains("stray comma"), "{}", stray.message);
                assert_eq!(
                    got("comma"),
                    Some(format!("{EXISTING},{ours}")),
                    "{name}: appended to the comma form"
                );
                let items = multus_items(&got("comma").unwrap()).expect("Multus parses it");
                assert_eq!(items.len(), 18, "{name}: 2 existing + 16 rails");
                assert_eq!(&items[..2], ["default/storage", "/scratch"]);
                assert_eq!(items[2..].join(","), ours);
                assert_eq!(
                    multus_items(&got("plain").unwrap()).unwrap().join(","),
                    ours
                );
            }
            None => {
                assert_eq!(got("plain"), None, "{name}: nothing to attach");
                assert_eq!(got("empty").as_deref(), Some(""), "{name}: left alone");
                assert_eq!(
                    got("comma").as_deref(),
                    Some(EXISTING),
                    "{name}: left alone"
                );
            }
        }

        consumers::validate_manifest(&built, plan.dra.min_kubernetes_minor())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn json_form_and_duplicates_are_appended_to_and_left_to_lint() {
    let plan = plan_of("coreweave/gb300-roce");
    let ours = our_networks(&plan).unwrap();
    let dir = consumers::temp_dir("kustomize-json");
    write_component(&dir, "component", &plan, &RenderOptions::default());
    let json_form = r#"[{"name":"storage","namespace":"default"}]"#;
    let dup = "default/storage, cw-multus/ibs1p2-macvlan@rail6 ,x";
    let near_miss = "cw-multus/ibs0p0-macvlan-extra";
    let base = [
        deployment("json", Some(json_form)),
        deployment("dup", Some(dup)),
        deployment("near-miss", Some(near_miss)),
    ]
    .join("---\n");
    let Some(built) = build(&dir, &base, &["component"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let got = |w: &str| networks_of(find(&docs, "Deployment", w), TEMPLATE).unwrap();
    // The Component appends to every form; what Multus cannot use, `roce lint` reports (it reads
    // the annotation with this parser).
    assert_eq!(got("json"), format!("{json_form},{ours}"));
    let why = multus::parse(&got("json")).unwrap_err();
    assert!(why.message.contains("not valid JSON"), "{}", why.message);

    assert_eq!(got("dup"), format!("{dup},{ours}"));
    let twice = multus::parse(&got("dup"))
        .unwrap()
        .iter()
        .filter(|n| n.name == "ibs1p2-macvlan")
        .count();
    assert_eq!(twice, 2, "the duplicate is kept for lint to report");

    assert_eq!(
        got("near-miss"),
        format!("{near_miss},{ours}"),
        "a network whose name only starts like one of ours is kept"
    );
    consumers::kubernetes_validate_strict(&built, consumers::K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn applying_two_components_with_the_same_rails_gives_a_value_multus_rejects() {
    let roce = plan_of("coreweave/gb300-roce");
    let nixl = plan_of("coreweave/gb300-roce-nixl");
    assert_eq!(our_networks(&roce), our_networks(&nixl));
    let dir = consumers::temp_dir("kustomize-twice");
    write_component(&dir, "roce", &roce, &RenderOptions::default());
    write_component(&dir, "nixl", &nixl, &RenderOptions::default());
    let Some(built) = build(&dir, &deployment("plain", None), &["roce", "nixl"])
        .unwrap_or_else(|e| panic!("{e}"))
    else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let value = networks_of(find(&docs, "Deployment", "plain"), TEMPLATE).unwrap();
    // The second Component's create step splits on the full list, which now occurs twice.
    assert!(multus::parse(&value).is_err(), "{value}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_selected_workload_without_the_container_fails_the_build() {
    let plan = plan_of("coreweave/gb300-roce");
    let dir = consumers::temp_dir("kustomize-missing");
    write_component(&dir, "component", &plan, &RenderOptions::default());
    // `main-2` contains `main`: the check must not take it for the container.
    for other in ["trainer", "main-2"] {
        let base = [
            deployment("ok", None),
            deployment("other", None).replace("name: main", &format!("name: {other}")),
        ]
        .join("---\n");
        match build(&dir, &base, &["component"]) {
            Ok(None) => {}
            Ok(Some(out)) => panic!("built although `other` has no container `main`:\n{out}"),
            Err(e) => assert!(
                e.contains("unable to find field") && e.contains("[name=^main$]"),
                "unexpected failure: {e}"
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn container_names_the_container_to_wire() {
    let plan = plan_of("coreweave/gb300-roce");
    let dir = consumers::temp_dir("kustomize-named");
    let opts = RenderOptions {
        container: "trainer".to_string(),
        ..RenderOptions::default()
    };
    write_component(&dir, "component", &plan, &opts);
    // The first container is `sidecar`; `trainer` is second.
    let base = deployment("plain", Some("default/storage")).replace("name: main", "name: trainer");
    let Some(built) = build(&dir, &base, &["component"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let base_docs = yaml_docs(&base).unwrap();
    check_wired(
        &plan,
        find(&docs, "Deployment", "plain"),
        find(&base_docs, "Deployment", "plain"),
        TEMPLATE,
        1,
    );
    consumers::kubernetes_validate_strict(&built, consumers::K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn selectors_pick_kinds_names_and_labels() {
    let plan = plan_of("coreweave/gb300-roce");
    let ours = our_networks(&plan).unwrap();
    let dir = consumers::temp_dir("kustomize-select");
    let opts = RenderOptions {
        select: vec![
            Selector {
                kind: Some("Deployment".into()),
                name: Some("picked".into()),
                label_selector: None,
            },
            Selector {
                kind: Some("CronJob".into()),
                name: None,
                label_selector: Some("role=train".into()),
            },
            Selector {
                kind: Some("Pod".into()),
                name: Some("solo".into()),
                label_selector: None,
            },
        ],
        ..RenderOptions::default()
    };
    write_component(&dir, "component", &plan, &opts);
    let pod_of = |d: &str| -> String {
        // The Deployment's pod template, re-indented as a Pod spec.
        let spec = d.split_once("    spec:\n").unwrap().1;
        spec.lines()
            .map(|l| l.strip_prefix("    ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cron = |name: &str, label: &str| -> String {
        let spec = pod_of(&deployment(name, Some("default/storage")));
        let nested: String = spec.lines().map(|l| format!("        {l}\n")).collect();
        format!(
            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {name}\n  labels:\n    role: {label}\nspec:\n  schedule: \"0 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n          annotations:\n            {MULTUS_ANNOTATION}: default/storage\n        spec:\n          restartPolicy: Never\n{nested}"
        )
    };
    let solo = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\nspec:\n{}\n",
        pod_of(&deployment("solo", None))
    );
    let base = [
        deployment("picked", None),
        // Not selected, and it has no `main` container: the guard must not see it.
        deployment("skipped", None).replace("name: main", "name: web"),
        deployment("skipped-too", None)
            .replace("kind: Deployment", "kind: StatefulSet")
            .replace(
                "spec:\n  selector:",
                "spec:\n  serviceName: skipped-too\n  selector:",
            ),
        cron("train", "train"),
        cron("backup", "backup"),
        solo,
    ]
    .join("---\n");
    let Some(built) = build(&dir, &base, &["component"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let base_docs = yaml_docs(&base).unwrap();

    check_wired(
        &plan,
        find(&docs, "Deployment", "picked"),
        find(&base_docs, "Deployment", "picked"),
        TEMPLATE,
        1,
    );
    assert_eq!(
        networks_of(find(&docs, "Deployment", "picked"), TEMPLATE),
        Some(ours.clone())
    );

    const CRON: &[&str] = &["spec", "jobTemplate", "spec", "template"];
    check_wired(
        &plan,
        find(&docs, "CronJob", "train"),
        find(&base_docs, "CronJob", "train"),
        CRON,
        1,
    );
    assert_eq!(
        networks_of(find(&docs, "CronJob", "train"), CRON),
        Some(format!("default/storage,{ours}"))
    );

    check_wired(
        &plan,
        find(&docs, "Pod", "solo"),
        find(&base_docs, "Pod", "solo"),
        &[],
        1,
    );
    assert_eq!(networks_of(find(&docs, "Pod", "solo"), &[]), Some(ours));

    for (kind, name) in [
        ("Deployment", "skipped"),
        ("StatefulSet", "skipped-too"),
        ("CronJob", "backup"),
    ] {
        assert_eq!(
            find(&docs, kind, name),
            find(&base_docs, kind, name),
            "{kind}/{name} is not selected"
        );
    }
    consumers::kubernetes_validate_strict(&built, consumers::K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn options_a_component_cannot_honour_are_errors() {
    let plan = plan_of("coreweave/gb300-roce");
    let err = |opts: RenderOptions| match kustomize::render(&plan, &opts) {
        Err(RenderError::Option { option, .. }) => option,
        other => panic!("expected an option error, got {other:?}"),
    };
    let select = |kind: &str| RenderOptions {
        select: vec![Selector {
            kind: Some(kind.into()),
            ..Selector::default()
        }],
        ..RenderOptions::default()
    };
    assert_eq!(err(select("MPIJob")), "select");
    for container in ["Main Container", ""] {
        assert_eq!(
            err(RenderOptions {
                container: container.into(),
                ..RenderOptions::default()
            }),
            "container",
            "{container:?}: a strategic-merge patch can only name a container"
        );
    }
    assert_eq!(
        err(RenderOptions {
            name: Some("Bad_Name".into()),
            ..RenderOptions::default()
        }),
        "name"
    );
    assert!(kustomize::render(&plan, &select("statefulset")).is_ok());
}

#[test]
fn the_component_layout_is_stable() {
    let plan = plan_of("coreweave/gb300-roce");
    let files = kustomize::render(&plan, &RenderOptions::default()).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "kustomization.yaml",
            "wiring.yaml",
            "patch-template.yaml",
            "transformers.yaml",
        ]
    );
    assert_eq!(
        files,
        kustomize::render(&plan, &RenderOptions::default()).unwrap()
    );
    assert!(files[0].contents.contains("kind: Component"));
    for f in &files {
        assert!(
            f.contents
                .starts_with("# Generated by roce from profile coreweave/gb300-roce"),
            "{}",
            f.path
        );
        for banned in ["ImageTagTransformer", "ROCE-ERROR"] {
            assert!(!f.contents.contains(banned), "{}: {banned}", f.path);
        }
    }
    let total: usize = files.iter().map(|f| f.contents.lines().count()).sum();
    assert!(total <= 200, "the gb300-roce Component is {total} lines");

    // No networks to attach: no Multus steps.
    let sunk = plan_of("coreweave/gb300-roce-sunk");
    let files = kustomize::render(&sunk, &RenderOptions::default()).unwrap();
    assert!(
        files
            .iter()
            .all(|f| !f.contents.contains(MULTUS_ANNOTATION))
    );
}

/// Kustomize reads transformer configs as resources: two with one name fail the build. Checked
/// here without kubectl, for a selection that needs several marks and every shape.
#[test]
fn transformer_names_are_unique_for_every_selection() {
    let plan = plan_of("coreweave/gb300-roce");
    let sel = |kind: &str, name: Option<&str>| Selector {
        kind: Some(kind.into()),
        name: name.map(str::to_string),
        label_selector: None,
    };
    for select in [
        vec![],
        vec![sel("Deployment", Some("a")), sel("Job", Some("b"))],
        vec![
            sel("Pod", None),
            sel("CronJob", None),
            sel("StatefulSet", None),
        ],
    ] {
        let opts = RenderOptions {
            select,
            ..RenderOptions::default()
        };
        let files = kustomize::render(&plan, &opts).unwrap();
        let transformers = &files
            .iter()
            .find(|f| f.path == "transformers.yaml")
            .unwrap();
        let docs = yaml_docs(&transformers.contents);
        let Some(docs) = docs else { return };
        let names: Vec<&str> = docs
            .iter()
            .map(|d| d["metadata"]["name"].as_str().unwrap())
            .collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        // Every patch file a transformer names is one of the rendered files.
        for d in &docs {
            if let Some(path) = d["path"].as_str() {
                assert!(files.iter().any(|f| f.path == path), "{path}");
            }
        }
    }
}

/// Selectors mark workloads with a label and every later step selects by that label, so a workload
/// that two selectors pick is wired once.
#[test]
fn overlapping_selectors_wire_a_workload_once() {
    let plan = plan_of("coreweave/gb300-roce");
    let ours = our_networks(&plan).unwrap();
    let dir = consumers::temp_dir("kustomize-overlap");
    let opts = RenderOptions {
        select: vec![
            Selector {
                kind: Some("Deployment".into()),
                name: Some("both".into()),
                label_selector: None,
            },
            Selector {
                label_selector: Some("app=both".into()),
                ..Selector::default()
            },
        ],
        ..RenderOptions::default()
    };
    write_component(&dir, "component", &plan, &opts);
    let base = deployment("both", Some("default/storage")).replacen(
        "metadata:\n  name: both\n",
        "metadata:\n  name: both\n  labels:\n    app: both\n",
        1,
    );
    let Some(built) = build(&dir, &base, &["component"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let base_docs = yaml_docs(&base).unwrap();
    let got = find(&docs, "Deployment", "both");
    check_wired(
        &plan,
        got,
        find(&base_docs, "Deployment", "both"),
        TEMPLATE,
        1,
    );
    assert_eq!(
        networks_of(got, TEMPLATE),
        Some(format!("default/storage,{ours}"))
    );
    assert_eq!(
        got["metadata"]["labels"],
        json!({"app": "both"}),
        "marker removed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Deployment and a CronJob with DRA of their own: a GPU claim their container uses, a node affinity and a
/// required pod-affinity term on another topology key.
fn workloads_with_own_claims() -> String {
    let spec = "      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: zone, operator: In, values: [a]}
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: zone
            labelSelector: {matchLabels: {app: trainer}}
      containers:
      - name: main
        image: busybox
        resources:
          claims:
          - name: own-gpu
      resourceClaims:
      - name: own-gpu
        resourceClaimTemplateName: my-gpus
";
    let indent = |s: &str, n: usize| -> String {
        s.lines()
            .map(|l| format!("{}{l}\n", " ".repeat(n)))
            .collect()
    };
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  selector:
    matchLabels: {{app: trainer}}
  template:
    metadata:
      labels: {{app: trainer}}
    spec:
{spec}---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: \"0 3 * * *\"
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {{app: trainer}}
        spec:
          restartPolicy: Never
{}",
        indent(spec, 4)
    )
}

/// The DRA built-ins through `kubectl kustomize`: the Component adds the ComputeDomain (and the NICs'
/// ResourceClaimTemplate), and merges the pod claims, the container's claims and the clique affinity by
/// key into workloads that have their own; applying the Component's output again changes nothing. The
/// result passes kubernetes-validate --strict for 1.34+ and the ComputeDomain CRD schema.
#[test]
fn dra_claims_and_affinity_merge_into_workloads_with_their_own() {
    for profile in ["coreweave/gb300-roce-dra", "oci/gb200-roce-dranet"] {
        let plan = plan_of(profile);
        let dir = consumers::temp_dir("kustomize-dra");
        let opts = RenderOptions {
            select: vec![
                Selector {
                    kind: Some("Deployment".into()),
                    ..Selector::default()
                },
                Selector {
                    kind: Some("CronJob".into()),
                    ..Selector::default()
                },
            ],
            ..RenderOptions::default()
        };
        let files = write_component(&dir, "roce", &plan, &opts);
        assert!(files.contains(&"dra.yaml".to_string()), "{files:?}");
        let Some(built) = build(&dir, &workloads_with_own_claims(), &["roce"])
            .unwrap_or_else(|e| panic!("{profile}: {e}"))
        else {
            return;
        };
        let Some(docs) = yaml_docs(&built) else {
            return;
        };
        let mut extra: Vec<String> = plan
            .dra
            .documents
            .iter()
            .map(|d| {
                let v = serde_json::to_value(d).unwrap();
                format!(
                    "{}/{}",
                    v["kind"].as_str().unwrap(),
                    v["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect();
        extra.sort();
        let mut got: Vec<String> = docs
            .iter()
            .filter(|d| d["kind"] != "Deployment" && d["kind"] != "CronJob")
            .map(|d| {
                format!(
                    "{}/{}",
                    d["kind"].as_str().unwrap(),
                    d["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, extra, "{profile}: the objects the claims name");

        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| c["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut want_claims = vec!["own-gpu".to_string()];
        want_claims.extend(plan.dra.pod_claims.iter().map(|c| c.name().to_string()));
        for (kind, template) in [
            ("Deployment", &["spec", "template"][..]),
            ("CronJob", &["spec", "jobTemplate", "spec", "template"][..]),
        ] {
            let doc = docs.iter().find(|d| d["kind"] == kind).unwrap();
            let t = template.iter().fold(doc, |v, k| &v[*k]);
            let spec = &t["spec"];
            assert_eq!(
                names(&spec["resourceClaims"]),
                want_claims,
                "{profile} {kind}"
            );
            let own = spec["resourceClaims"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "own-gpu")
                .unwrap();
            assert_eq!(
                own["resourceClaimTemplateName"], "my-gpus",
                "{profile} {kind}"
            );
            for c in &plan.dra.pod_claims {
                let entry = spec["resourceClaims"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["name"] == c.name().as_str())
                    .unwrap();
                assert_eq!(entry["resourceClaimTemplateName"], c.template().as_str());
            }
            let main = &spec["containers"][0];
            assert_eq!(
                names(&main["resources"]["claims"]),
                want_claims,
                "{profile} {kind}"
            );
            let terms =
                spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    .as_array()
                    .unwrap();
            let keys: Vec<&str> = terms
                .iter()
                .map(|t| t["topologyKey"].as_str().unwrap())
                .collect();
            assert_eq!(keys, ["zone", "nvidia.com/gpu.clique"], "{profile} {kind}");
            assert!(
                spec["affinity"]["nodeAffinity"].is_object(),
                "{profile} {kind}"
            );
            for (k, v) in &plan.dra.labels {
                assert_eq!(t["metadata"]["labels"][k], v.as_str(), "{profile} {kind}");
            }
            assert_eq!(t["metadata"]["labels"]["app"], "trainer");
        }

        // The built workloads already have everything: building the Component over them changes nothing.
        // (Kustomize refuses a base that already holds the Component's ComputeDomain: one resource id.)
        let workloads: Vec<&Value> = docs
            .iter()
            .filter(|d| d["kind"] == "Deployment" || d["kind"] == "CronJob")
            .collect();
        // As kubectl printed them: kustomize 5.6 finds no `[name=^main$]` in flow-style (JSON) input.
        let rebuilt_base: Vec<&str> = built
            .split("\n---\n")
            .filter(|d| d.contains("\nkind: Deployment\n") || d.contains("\nkind: CronJob\n"))
            .collect();
        assert_eq!(rebuilt_base.len(), 2, "{built}");
        let again = build(&dir, &rebuilt_base.join("\n---\n"), &["roce"])
            .unwrap_or_else(|e| panic!("{profile}: {e}"))
            .unwrap();
        let again_docs = yaml_docs(&again).unwrap();
        let again_workloads: Vec<&Value> = again_docs
            .iter()
            .filter(|d| d["kind"] == "Deployment" || d["kind"] == "CronJob")
            .collect();
        // The DRA parts only: the Multus append is not idempotent, by design (`roce lint` reports the
        // duplicates; applying_two_components_with_the_same_rails_gives_a_value_multus_rejects).
        let dra_parts = |d: &Value| {
            let t = if d["kind"] == "CronJob" {
                &d["spec"]["jobTemplate"]["spec"]["template"]
            } else {
                &d["spec"]["template"]
            };
            json!([
                t["metadata"]["labels"],
                t["spec"]["resourceClaims"],
                t["spec"]["affinity"],
                t["spec"]["containers"][0]["resources"],
            ])
        };
        for (a, b) in again_workloads.iter().zip(&workloads) {
            assert_eq!(dra_parts(a), dra_parts(b), "{profile}: idempotent");
        }
        assert_eq!(again_docs.len(), docs.len());

        let (domains, core): (Vec<&Value>, Vec<&Value>) =
            docs.iter().partition(|d| d["kind"] == "ComputeDomain");
        for d in domains {
            let checked = consumers::crd_schema_strict(d, "compute-domain-v1beta1.json")
                .unwrap_or_else(|e| panic!("{profile}: {e}"));
            assert!(checked || !consumers::tools_required());
        }
        let text: Vec<String> = core.iter().map(|d| d.to_string()).collect();
        consumers::kubernetes_validate_strict(&text.join("\n---\n"), consumers::DRA_K8S_VERSIONS)
            .unwrap_or_else(|e| panic!("{profile}: {e}"));
    }
}

// ---------------------------------------------------------------------------------------------------
// --exec: the job starts behind `roce exec`

/// The Component of `plan` with `--exec`, for every kind with a pod template shape.
fn exec_opts(profile: &str, container: &str) -> RenderOptions {
    RenderOptions {
        exec: Some(ExecWrap {
            profile: profile.to_string(),
            command: None,
        }),
        ..every_shape(container)
    }
}

fn every_shape(container: &str) -> RenderOptions {
    let kind = |k: &str| Selector {
        kind: Some(k.to_string()),
        ..Selector::default()
    };
    RenderOptions {
        container: container.to_string(),
        select: ["Deployment", "Job", "CronJob", "Pod"].map(kind).to_vec(),
        ..RenderOptions::default()
    }
}

/// Workloads of every shape whose `main` container has a `command`: a Deployment whose `main` is second,
/// with `args` and a pod-dependent variable in its env (the sidecar has one too); a Job with a command
/// only and a static GID index; a CronJob; a Pod whose command is a shell line.
fn commanded_workloads() -> String {
    let deployment = deployment("train", Some("default/storage")).replace(
        "      - name: main\n        image: busybox:1.36\n",
        "      - name: main\n        image: busybox:1.36\n        command: [torchrun, --nproc-per-node=4]\n        args: [train.py, --epochs=3]\n",
    );
    let job = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: bench
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
        command: [python, bench.py]
        env:
        - name: NCCL_IB_GID_INDEX
          value: "3"
"#;
    let cron = r#"apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox:1.36
            command: [./nightly]
"#;
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [sh, -c, 'exec python train.py "$RUN"']
"#;
    [deployment.as_str(), job, cron, pod].join("---\n")
}

/// Where each kind keeps its pod template.
fn template_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "CronJob" => &["spec", "jobTemplate", "spec", "template"],
        "Pod" => &[],
        _ => TEMPLATE,
    }
}

fn containers_mut<'a>(doc: &'a mut Value, template: &[&str]) -> &'a mut Vec<Value> {
    let mut v = doc;
    for key in template {
        v = &mut v[*key];
    }
    v["spec"]["containers"].as_array_mut().unwrap()
}

/// Built with `--exec`, every selected workload is what the Component without it builds, except that
/// the wired container's `command` is exactly the `roce exec` prefix followed by its own command, and its
/// env has none of the variables `roce exec` computes. Every built-in profile, every pod-template shape;
/// the output passes kubernetes-validate --strict.
#[test]
fn exec_puts_roce_exec_in_front_of_each_command_for_real() {
    let base = commanded_workloads();
    for name in builtin::names() {
        let plan = plan_of(name);
        let dir = consumers::temp_dir("kustomize-exec");
        write_component(&dir, "plain", &plan, &every_shape("main"));
        write_component(&dir, "exec", &plan, &exec_opts(name, "main"));
        let (plain, wrapped) = match (
            build(&dir, &base, &["plain"]),
            build(&dir, &base, &["exec"]),
        ) {
            (Ok(Some(p)), Ok(Some(w))) => (p, w),
            (Ok(None), _) | (_, Ok(None)) => return,
            (p, w) => panic!("{name}: {p:?}\n{w:?}"),
        };
        let (Some(plain_docs), Some(docs)) = (yaml_docs(&plain), yaml_docs(&wrapped)) else {
            return;
        };
        let base_docs = yaml_docs(&base).unwrap();
        assert_eq!(docs.len(), plain_docs.len(), "{name}");
        for b in &base_docs {
            let (kind, wl) = (
                b["kind"].as_str().unwrap(),
                b["metadata"]["name"].as_str().unwrap(),
            );
            let template = template_of(kind);
            let base_main = b_main(b, template);
            let got = find(&docs, kind, wl);
            let c = &at(got, template)["spec"]["containers"][0];
            let mut want_command = vec![
                json!("/usr/local/bin/roce"),
                json!("exec"),
                json!("--profile"),
                json!(name),
                json!("--"),
            ];
            want_command.extend(base_main["command"].as_array().unwrap().iter().cloned());
            assert_eq!(c["name"], "main", "{name} {kind}");
            assert_eq!(
                c["command"],
                Value::Array(want_command),
                "{name} {kind}: command"
            );
            assert_eq!(
                c["args"], base_main["args"],
                "{name} {kind}: args untouched"
            );

            // Everything else is the plain Component's output, less the pod-dependent env entries.
            let mut want = find(&plain_docs, kind, wl).clone();
            let main = &mut containers_mut(&mut want, template)[0];
            main["command"] = c["command"].clone();
            main["env"]
                .as_array_mut()
                .unwrap()
                .retain(|e| !POD_DEPENDENT.contains(&e["name"].as_str().unwrap()));
            assert_eq!(got, &want, "{name} {kind}");
        }
        // The sidecar's own NCCL_IB_HCA is not the wired container's: kept.
        let d = find(&docs, "Deployment", "train");
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["env"][0],
            json!({"name": "NCCL_IB_HCA", "value": "sidecar-value"}),
            "{name}"
        );
        consumers::validate_manifest(&wrapped, plan.dra.min_kubernetes_minor())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn at(doc: &Value, template: &[&str]) -> Value {
    let mut v = doc.clone();
    for key in template {
        v = v[*key].clone();
    }
    v
}

/// The base's `main` container.
fn b_main(doc: &Value, template: &[&str]) -> Value {
    at(doc, template)["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "main")
        .unwrap()
        .clone()
}

/// A container without a `command` runs its image's ENTRYPOINT, which a prefix in `command` would drop:
/// the build fails, for a container with only `args`, with nothing, or with an empty `command` (which
/// Kubernetes reads as none), in every shape. `roce apply --exec` refuses the same containers.
#[test]
fn exec_fails_the_build_for_a_container_without_a_command() {
    let dir = consumers::temp_dir("kustomize-exec-nocommand");
    let plan = plan_of("coreweave/gb300-roce");
    write_component(
        &dir,
        "exec",
        &plan,
        &exec_opts("coreweave/gb300-roce", "main"),
    );
    let job = |container: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {container}\n"
        )
    };
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - {name: main, image: busybox:1.36, args: [python, train.py]}\n";
    let cases = [
        (
            job("{name: main, image: busybox:1.36, args: [python, train.py]}"),
            "doc is missing from path: /spec/template/spec/containers/0/command/0",
        ),
        (
            job("{name: main, image: busybox:1.36}"),
            "doc is missing from path: /spec/template/spec/containers/0/command/0",
        ),
        (
            job("{name: main, image: busybox:1.36, command: [], args: [python]}"),
            "error in copy for from: '/spec/template/spec/containers/0/command/0'",
        ),
        (
            pod.to_string(),
            "doc is missing from path: /spec/containers/0/command/0",
        ),
    ];
    for (base, want) in &cases {
        match build(&dir, base, &["exec"]) {
            Ok(None) => return,
            Ok(Some(out)) => panic!("built a container without a command:\n{out}"),
            Err(e) => assert!(e.contains(want), "want {want:?}, got: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A JSON patch addresses the container by position: the Component relies on the strategic merge moving
/// the patched container to the front (kustomize#5904). Were kustomize to stop doing so, the `test` on its
/// name fails the build instead of wrapping another container; simulated here by dropping the
/// strategic-merge step, with `trainer` (`--container`) second.
#[test]
fn exec_never_wraps_another_container() {
    let dir = consumers::temp_dir("kustomize-exec-position");
    let plan = plan_of("coreweave/gb300-roce");
    let files = write_component(
        &dir,
        "exec",
        &plan,
        &exec_opts("coreweave/gb300-roce", "trainer"),
    );
    assert!(files.contains(&"transformers.yaml".to_string()));
    let base = deployment("d", None)
        .replace("name: main", "name: trainer")
        .replace("        image: busybox:1.36\n        env:\n        - name: KEEP_ME", "        image: busybox:1.36\n        command: [python]\n        env:\n        - name: KEEP_ME");
    // With the real order of steps, `trainer` is wrapped and `sidecar` is not.
    let Some(built) = build(&dir, &base, &["exec"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    let cs = &docs[0]["spec"]["template"]["spec"]["containers"];
    assert_eq!(cs[0]["name"], "trainer");
    assert_eq!(
        cs[0]["command"],
        json!([
            "/usr/local/bin/roce",
            "exec",
            "--profile",
            "coreweave/gb300-roce",
            "--",
            "python"
        ])
    );
    assert_eq!(cs[1]["name"], "sidecar");
    assert_eq!(cs[1]["command"], Value::Null);
    let path = dir.join("exec/transformers.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let steps: Vec<&str> = text
        .split("---\n")
        .filter(|s| !s.contains("path: patch-template.yaml"))
        .collect();
    assert_eq!(
        steps.len(),
        text.split("---\n").count() - 1,
        "one patch step"
    );
    std::fs::write(&path, steps.join("---\n")).unwrap();
    match build(&dir, &base, &["exec"]) {
        Ok(None) => {}
        Ok(Some(out)) => panic!("wrapped whatever container came first:\n{out}"),
        Err(e) => assert!(
            e.contains("testing value /spec/template/spec/containers/0/name failed"),
            "{e}"
        ),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kustomize cannot test that a value is absent, so a command already behind `roce exec` gets a second
/// prefix (docs/exec.md says so; the inner `roce exec` finds every variable set, and the environment
/// wins). Pinned so that a change in this behaviour is noticed.
#[test]
fn exec_wraps_a_wrapped_command_again() {
    let dir = consumers::temp_dir("kustomize-exec-twice");
    let plan = plan_of("coreweave/gb300-roce");
    write_component(
        &dir,
        "exec",
        &plan,
        &exec_opts("coreweave/gb300-roce", "main"),
    );
    let base = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: busybox:1.36\n    command: [/usr/local/bin/roce, exec, --, python]\n";
    let Some(built) = build(&dir, base, &["exec"]).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let Some(docs) = yaml_docs(&built) else {
        return;
    };
    assert_eq!(
        docs[0]["spec"]["containers"][0]["command"],
        json!([
            "/usr/local/bin/roce",
            "exec",
            "--profile",
            "coreweave/gb300-roce",
            "--",
            "/usr/local/bin/roce",
            "exec",
            "--",
            "python"
        ])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
