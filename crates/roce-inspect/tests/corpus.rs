//! The wiring corpus (`tests/fixtures/corpus/`, its README says the format): manifests that reproduce the
//! wiring of real public samples, each with hand-written expectations. Lint is measured by precision and
//! recall over its error and warning findings; apply must change nothing that already works (Multus entries,
//! ComputeDomains, launcher commands, search paths, exact device lists, affinity and spread), its output must
//! pass `kubernetes-validate --strict` where it is a core kind and must not gain findings, and applying twice
//! must equal applying once. Every custom kind (MPIJob, ComputeDomain, JobSet, LeaderWorkerSet, the inference
//! CRs, the SR-IOV and Network Operator objects: `CRD_SCHEMAS`) is checked against its CRD's schema with
//! strict fields, in apply's output (the violations apply adds are damage) and in the inputs (what the schemas
//! reject there is listed with its cause in `INPUT_SCHEMA_ERRORS`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roce_inspect::lint::{FileReport, LintOptions, Linter};
use roce_model::{BuiltinsOnly, Problem, Severity, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply};
use serde_json::Value;
use toml_edit::{DocumentMut, Item};

use crate::support::consumers;

/// Lint must find this share of what is really wrong, and this share of what it reports must be real.
const MIN_PRECISION: f64 = 0.95;
const MIN_RECALL: f64 = 0.90;

/// The findings `roce apply` resolves: its output must have none of them.
const APPLY_FIXES: &[&str] = &[
    "roce::lint::missing_nad",
    "roce::lint::rdma_resource",
    "roce::lint::ipc_lock",
    "roce::lint::env_missing",
    "roce::lint::shm",
    "roce::lint::node_selector",
    "roce::lint::dra_channel_claim",
    "roce::lint::dra_nic_claim",
    "roce::lint::dra_clique_affinity",
    "roce::lint::provider_env",
    "roce::lint::provider_resource",
    "roce::lint::host_mount",
    "roce::lint::topology_file",
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// Every `<source>/<name>.toml` with its `.yaml`.
fn fixtures() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(corpus_dir()).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "toml") {
                let yaml = f.with_extension("yaml");
                assert!(yaml.exists(), "{} has no .yaml", f.display());
                out.push((f, yaml));
            }
        }
    }
    out.sort();
    out
}

#[derive(Debug, Clone)]
struct Expect {
    code: String,
    lines: Option<(usize, usize)>,
}

#[derive(Debug, Default)]
struct Fixture {
    name: String,
    source: String,
    profile: String,
    container: Option<String>,
    expect: Vec<Expect>,
    absent: Vec<Expect>,
    apply: bool,
    nads_after: Option<usize>,
    must_add: Vec<String>,
    must_not_add: Vec<String>,
    keep_env: Vec<String>,
}

fn strings(item: Option<&Item>) -> Vec<String> {
    item.and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn expects(doc: &DocumentMut, key: &str) -> Vec<Expect> {
    let Some(tables) = doc.get(key).and_then(Item::as_array_of_tables) else {
        return Vec::new();
    };
    tables
        .iter()
        .map(|t| {
            let code = t
                .get("code")
                .and_then(Item::as_str)
                .unwrap_or_else(|| panic!("[[{key}]] without code"))
                .to_string();
            let lines = t.get("lines").and_then(Item::as_array).map(|a| {
                let n: Vec<usize> = a
                    .iter()
                    .map(|v| v.as_integer().expect("lines are integers") as usize)
                    .collect();
                assert_eq!(n.len(), 2, "lines = [first, last]");
                (n[0], n[1])
            });
            Expect { code, lines }
        })
        .collect()
}

fn read(toml: &Path) -> Fixture {
    let text = std::fs::read_to_string(toml).unwrap();
    let doc: DocumentMut = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", toml.display()));
    let source = doc
        .get("source")
        .and_then(Item::as_table)
        .unwrap_or_else(|| panic!("{}: no [source]", toml.display()));
    let field = |k: &str| {
        source
            .get(k)
            .and_then(Item::as_str)
            .unwrap_or_else(|| panic!("{}: [source] has no {k}", toml.display()))
            .to_string()
    };
    let (repo, commit, path) = (field("repo"), field("commit"), field("path"));
    assert!(
        repo.contains('/') && !path.is_empty(),
        "{}: cite the repository and path",
        toml.display()
    );
    assert!(
        commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{}: the commit must be 40 hex digits",
        toml.display()
    );
    let apply = doc.get("apply").and_then(Item::as_table);
    let rel = toml.strip_prefix(corpus_dir()).unwrap().with_extension("");
    Fixture {
        name: rel.display().to_string(),
        source: repo,
        // `profile` and `container` may stand at the top or, written after `[source]`, in it.
        profile: doc
            .get("profile")
            .or_else(|| source.get("profile"))
            .and_then(Item::as_str)
            .unwrap_or("none")
            .to_string(),
        container: doc
            .get("container")
            .or_else(|| source.get("container"))
            .and_then(Item::as_str)
            .map(str::to_string),
        expect: expects(&doc, "expect"),
        absent: expects(&doc, "absent"),
        apply: apply.is_some_and(|a| a.get("run").and_then(Item::as_bool).unwrap_or(true)),
        nads_after: apply
            .and_then(|a| a.get("nads_after"))
            .and_then(Item::as_integer)
            .map(|n| n as usize),
        must_add: strings(apply.and_then(|a| a.get("must_add"))),
        must_not_add: strings(apply.and_then(|a| a.get("must_not_add"))),
        keep_env: strings(apply.and_then(|a| a.get("keep_env"))),
    }
}

fn linter(f: &Fixture) -> Linter {
    let opts = LintOptions {
        container: f.container.clone(),
        profile_arg: None,
    };
    if f.profile == "none" {
        return Linter::without_profile(opts);
    }
    let source = builtin::source(&f.profile)
        .unwrap_or_else(|| panic!("{}: no built-in {}", f.name, f.profile));
    Linter::new(&load(source, &BuiltinsOnly).profile.unwrap(), opts)
}

/// The errors and warnings: what a user has to act on.
fn counted(report: &FileReport) -> Vec<&Problem> {
    report
        .problems
        .iter()
        .filter(|p| p.severity != Severity::Info)
        .collect()
}

fn line(p: &Problem) -> usize {
    p.location().map_or(0, |l| l.line)
}

fn within(e: &Expect, p: &Problem) -> bool {
    p.code.as_str() == e.code && e.lines.is_none_or(|(a, b)| (a..=b).contains(&line(p)))
}

/// How one fixture's findings compare with its expectations.
#[derive(Debug, Default)]
struct Score {
    tp: usize,
    fp: Vec<String>,
    fn_: Vec<String>,
    /// Findings of a code the fixture says must not be reported (also counted in `fp`).
    absent: Vec<String>,
}

fn score(f: &Fixture, report: &FileReport) -> Score {
    let found = counted(report);
    let mut used = vec![false; found.len()];
    let mut s = Score::default();
    for e in &f.expect {
        match (0..found.len()).find(|&i| !used[i] && within(e, found[i])) {
            Some(i) => {
                used[i] = true;
                s.tp += 1;
            }
            None => s.fn_.push(format!("{} {:?}", e.code, e.lines)),
        }
    }
    // One cause may be reported at several places of the expected range (one finding per container):
    // those are the same finding, not noise.
    for (i, p) in found.iter().enumerate() {
        if used[i] {
            continue;
        }
        if f.expect.iter().any(|e| within(e, p)) {
            continue;
        }
        s.fp.push(format!("{} {}: {}", p.code, line(p), p.message));
    }
    for a in &f.absent {
        for p in found.iter().filter(|p| within(a, p)) {
            s.absent
                .push(format!("{} {}: {}", p.code, line(p), p.message));
        }
    }
    s
}

fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

/// Every PodSpec-shaped object (`containers` of mappings with `name` and `image`), by JSON pointer.
fn pod_specs(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(cs)) = m.get("containers")
                && !cs.is_empty()
                && cs.iter().all(|c| c.get("name").is_some())
            {
                out.push((at, v.clone()));
                return;
            }
            for (k, x) in m {
                pod_specs(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                pod_specs(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The pod template (the PodSpec's parent when it is a `spec`) of a PodSpec at `at`.
fn template_of<'a>(doc: &'a Value, at: &str) -> Option<&'a Value> {
    match at.strip_suffix("/spec") {
        Some(parent) => doc.pointer(parent),
        None => None,
    }
}

fn multus_entries(template: Option<&Value>) -> Option<usize> {
    let value = template?
        .pointer("/metadata/annotations")?
        .get("k8s.v1.cni.cncf.io/networks")?
        .as_str()?;
    let v = value.trim();
    if v.starts_with('[') {
        serde_json::from_str::<Vec<Value>>(v).ok().map(|l| l.len())
    } else {
        Some(v.split(',').filter(|s| !s.trim().is_empty()).count())
    }
}

fn env_value(c: &Value, name: &str) -> Option<String> {
    c.get("env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
        .map(str::to_string)
}

fn kind_count(docs: &[Value], kind: &str) -> usize {
    docs.iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some(kind))
        .count()
}

/// Whether a container looks like an MPI launcher's (its command runs mpirun).
fn runs_mpirun(c: &Value) -> bool {
    ["command", "args"].iter().any(|k| {
        c.get(k).and_then(Value::as_array).is_some_and(|a| {
            a.iter()
                .any(|x| x.as_str().is_some_and(|s| s.contains("mpirun")))
        })
    })
}

/// What apply damaged: every check of the README's `[apply]`, generic and per fixture.
/// `stress`: the profile is not the fixture's; the values it sets for the job (the launcher's `-x`, an
/// exact HCA list) are then the profile's to correct, and only what no profile may do is damage.
fn damage(f: &Fixture, before: &str, after: &str, stress: bool) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = (documents(before), documents(after));
    if kind_count(&a, "ComputeDomain") > 0
        && kind_count(&b, "ComputeDomain") != kind_count(&a, "ComputeDomain")
    {
        out.push(format!(
            "ComputeDomains {} -> {}",
            kind_count(&a, "ComputeDomain"),
            kind_count(&b, "ComputeDomain")
        ));
    }
    let workloads_b: Vec<&Value> = b
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ComputeDomain"))
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ResourceClaimTemplate"))
        .collect();
    let workloads_a: Vec<&Value> = a
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ComputeDomain"))
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ResourceClaimTemplate"))
        .collect();
    for (da, db) in workloads_a.iter().zip(&workloads_b) {
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        pod_specs(da, String::new(), &mut pa);
        pod_specs(db, String::new(), &mut pb);
        for (at, sa) in &pa {
            let Some((_, sb)) = pb.iter().find(|(x, _)| x == at) else {
                out.push(format!("{at}: pod spec gone"));
                continue;
            };
            let (ta, tb) = (template_of(da, at), template_of(db, at));
            let cs = |s: &Value| {
                s.get("containers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let launcher = cs(sa).iter().any(runs_mpirun);
            match (
                multus_entries(ta),
                multus_entries(tb),
                f.nads_after.filter(|_| !launcher),
            ) {
                (Some(n), Some(m), None) if n > 0 && n != m => {
                    out.push(format!("{at}: Multus entries {n} -> {m}"))
                }
                (_, m, Some(want)) if m.unwrap_or(0) != want && ta.is_some() => {
                    out.push(format!("{at}: Multus entries {m:?}, expected {want}"))
                }
                _ => {}
            }
            for key in ["affinity", "topologySpreadConstraints"] {
                let (x, y) = (sa.get(key), sb.get(key));
                if let (Some(x), Some(y)) = (x, y) {
                    // What was there stays: podAntiAffinity and spread constraints exactly.
                    for sub in ["podAntiAffinity", "nodeAffinity"] {
                        if x.get(sub).is_some() && x.get(sub) != y.get(sub) {
                            out.push(format!("{at}: {key}.{sub} changed"));
                        }
                    }
                    if key == "topologySpreadConstraints" && x != y {
                        out.push(format!("{at}: topologySpreadConstraints changed"));
                    }
                }
            }
            let cs = |s: &Value| {
                s.get("containers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            for (ca, cb) in cs(sa).iter().zip(cs(sb).iter()) {
                let name = ca.get("name").and_then(Value::as_str).unwrap_or("?");
                if runs_mpirun(ca) && !stress {
                    for k in ["command", "args"] {
                        if ca.get(k) != cb.get(k) && !f.must_add.iter().any(|m| m.starts_with("-x"))
                        {
                            out.push(format!("{at} {name}: launcher {k} changed"));
                        }
                    }
                }
                let Some(env) = ca.get("env").and_then(Value::as_array) else {
                    continue;
                };
                for e in env {
                    let Some(var) = e.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let Some(old) = e.get("value").and_then(Value::as_str) else {
                        continue;
                    };
                    let new = env_value(cb, var).unwrap_or_default();
                    let path_like = roce_model::fabric::devices::path_like(var);
                    let exact_list = matches!(
                        var,
                        "NCCL_IB_HCA" | "UCX_NET_DEVICES" | "NCCL_SOCKET_IFNAME"
                    ) && (old.starts_with('=') || old.contains(','));
                    let kept = f.keep_env.iter().any(|k| k == var);
                    if (path_like || kept) && !new.contains(old) {
                        out.push(format!("{at} {name}: {var}={old:?} became {new:?}"));
                    }
                    if exact_list
                        && !kept
                        && new != old
                        && f.expect.iter().all(|x| !x.code.contains("hca"))
                    {
                        out.push(format!(
                            "{at} {name}: exact list {var}={old:?} became {new:?}"
                        ));
                    }
                }
            }
        }
    }
    for m in &f.must_add {
        if !after.contains(m.as_str()) {
            out.push(format!("must add {m:?}"));
        }
    }
    for m in &f.must_not_add {
        if after.contains(m.as_str()) && !before.contains(m.as_str()) {
            out.push(format!("must not add {m:?}"));
        }
    }
    out
}

/// The CRD schema of each custom kind in the corpus, by (apiVersion, kind): files in
/// `crates/roce-render/tests/fixtures/crds/`, whose README.md gives each one's repository, commit, path and
/// version. Checked with strict fields (`consumers::crd_schema_errors`).
const CRD_SCHEMAS: &[(&str, &str, &str)] = &[
    (
        "kubeflow.org/v2beta1",
        "MPIJob",
        "mpi-operator-v2beta1.json",
    ),
    (
        "resource.nvidia.com/v1beta1",
        "ComputeDomain",
        "compute-domain-v1beta1.json",
    ),
    ("jobset.x-k8s.io/v1alpha2", "JobSet", "jobset-v1alpha2.json"),
    (
        "kueue.x-k8s.io/v1beta2",
        "ClusterQueue",
        "kueue-clusterqueue-v1beta2.json",
    ),
    (
        "kueue.x-k8s.io/v1beta2",
        "LocalQueue",
        "kueue-localqueue-v1beta2.json",
    ),
    (
        "kueue.x-k8s.io/v1beta2",
        "ResourceFlavor",
        "kueue-resourceflavor-v1beta2.json",
    ),
    (
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        "leaderworkerset-v1.json",
    ),
    (
        "disaggregatedset.x-k8s.io/v1",
        "DisaggregatedSet",
        "disaggregatedset-v1.json",
    ),
    ("kubeflow.org/v1", "PyTorchJob", "pytorchjob-v1.json"),
    ("kubeflow.org/v1", "MPIJob", "mpijob-v1.json"),
    (
        "kubeflow.org/v1alpha2",
        "MPIJob",
        "mpi-operator-v1alpha2.json",
    ),
    (
        "batch.volcano.sh/v1alpha1",
        "Job",
        "volcano-job-v1alpha1.json",
    ),
    (
        "workloads.x-k8s.io/v1alpha1",
        "RoleBasedGroup",
        "rolebasedgroup-v1alpha1.json",
    ),
    (
        "workloads.x-k8s.io/v1alpha2",
        "RoleBasedGroup",
        "rolebasedgroup-v1alpha2.json",
    ),
    (
        "orchestration.aibrix.ai/v1alpha1",
        "StormService",
        "stormservice-v1alpha1.json",
    ),
    (
        "orchestration.aibrix.ai/v1alpha1",
        "RayClusterFleet",
        "rayclusterfleet-v1alpha1.json",
    ),
    (
        "nvidia.com/v1alpha1",
        "DynamoGraphDeployment",
        "dynamographdeployment-v1alpha1.json",
    ),
    (
        "nvidia.com/v1beta1",
        "DynamoGraphDeployment",
        "dynamographdeployment-v1beta1.json",
    ),
    (
        "apps.nvidia.com/v1alpha1",
        "NIMService",
        "nimservice-v1alpha1.json",
    ),
    (
        "apps.nvidia.com/v1alpha1",
        "NIMCache",
        "nimcache-v1alpha1.json",
    ),
    (
        "workload.serving.volcano.sh/v1alpha1",
        "ModelServing",
        "modelserving-v1alpha1.json",
    ),
    (
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
        "llminferenceservice-v1alpha2.json",
    ),
    (
        "ome.io/v1beta1",
        "ClusterServingRuntime",
        "ome-clusterservingruntime-v1beta1.json",
    ),
    (
        "sriovnetwork.openshift.io/v1",
        "SriovNetwork",
        "sriovnetwork-v1.json",
    ),
    (
        "sriovnetwork.openshift.io/v1",
        "SriovIBNetwork",
        "sriovibnetwork-v1.json",
    ),
    (
        "sriovnetwork.openshift.io/v1",
        "SriovNetworkNodePolicy",
        "sriovnetworknodepolicy-v1.json",
    ),
    (
        "sriovnetwork.openshift.io/v1",
        "SriovNetworkPoolConfig",
        "sriovnetworkpoolconfig-v1.json",
    ),
    (
        "mellanox.com/v1alpha1",
        "NicClusterPolicy",
        "nicclusterpolicy-v1alpha1.json",
    ),
    (
        "mellanox.com/v1alpha1",
        "MacvlanNetwork",
        "macvlannetwork-v1alpha1.json",
    ),
    (
        "mellanox.com/v1alpha1",
        "HostDeviceNetwork",
        "hostdevicenetwork-v1alpha1.json",
    ),
    (
        "mellanox.com/v1alpha1",
        "IPoIBNetwork",
        "ipoibnetwork-v1alpha1.json",
    ),
    (
        "nv-ipam.nvidia.com/v1alpha1",
        "IPPool",
        "ippool-v1alpha1.json",
    ),
    (
        "k8s.cni.cncf.io/v1",
        "NetworkAttachmentDefinition",
        "networkattachmentdefinition-v1.json",
    ),
    ("ray.io/v1", "RayCluster", "raycluster-v1.json"),
    (
        "serving.kserve.io/v1alpha1",
        "LLMInferenceService",
        "llminferenceservice-v1alpha1.json",
    ),
    (
        "machineconfiguration.openshift.io/v1",
        "MachineConfig",
        "machineconfig-v1.json",
    ),
    (
        "spiderpool.spidernet.io/v2beta1",
        "SpiderIPPool",
        "spiderippool-v2beta1.json",
    ),
    (
        "spiderpool.spidernet.io/v2beta1",
        "SpiderMultusConfig",
        "spidermultusconfig-v2beta1.json",
    ),
    (
        "trainer.kubeflow.org/v1alpha1",
        "TrainingRuntime",
        "trainingruntime-v1alpha1.json",
    ),
    (
        "trainer.kubeflow.org/v1alpha1",
        "ClusterTrainingRuntime",
        "clustertrainingruntime-v1alpha1.json",
    ),
    (
        "trainer.kubeflow.org/v1alpha1",
        "TrainJob",
        "trainjob-v1alpha1.json",
    ),
    (
        "slinky.slurm.net/v1beta1",
        "NodeSet",
        "nodeset-v1beta1.json",
    ),
    (
        "workload.codeflare.dev/v1beta2",
        "AppWrapper",
        "appwrapper-v1beta2.json",
    ),
    (
        "elastic.pytorch.org/v1alpha1",
        "ElasticJob",
        "elasticjob-v1alpha1.json",
    ),
];

/// Built-ins whose apply output of every fixture is checked against the CRD schemas (beside the three the
/// wrong-profile pass applies): the DRA ones, which add `resourceClaims` to pod specs.
const DRA_SCHEMA_PROFILES: &[&str] = &["coreweave/gb300-roce-dra", "oci/gb200-roce-dranet"];

/// The API groups kubernetes-validate knows (core kinds): everything else needs a CRD schema above.
fn is_core(api_version: &str) -> bool {
    matches!(
        api_version,
        "v1" | "apps/v1" | "batch/v1" | "resource.k8s.io/v1" | "rbac.authorization.k8s.io/v1"
    )
}

fn api_kind(doc: &Value) -> (&str, &str) {
    let field = |k: &str| doc.get(k).and_then(Value::as_str).unwrap_or("");
    (field("apiVersion"), field("kind"))
}

/// The CRD schema file for a document of a custom kind, if the corpus has one.
fn crd_schema(doc: &Value) -> Option<&'static str> {
    let (api, kind) = api_kind(doc);
    CRD_SCHEMAS
        .iter()
        .find(|(a, k, _)| *a == api && *k == kind)
        .map(|(_, _, file)| *file)
}

/// Which object a document is: apiVersion, kind, namespace and name (apply's output is matched with
/// its input by it).
fn object_key(doc: &Value) -> (String, String, String, String) {
    let (api, kind) = api_kind(doc);
    let meta = |k: &str| {
        doc.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (
        api.to_string(),
        kind.to_string(),
        meta("namespace"),
        meta("name"),
    )
}

/// One document of apply's output to check against its CRD schema: what apply added is the schema's
/// complaints about the output that it does not also make about the same object in the input.
struct SchemaCheck {
    who: String,
    schema: &'static str,
    after: Value,
    before: Option<Value>,
}

/// The custom-kind documents of apply's output, each with its input object.
fn schema_checks(who: &str, before: &str, after: &str) -> Vec<SchemaCheck> {
    let inputs = documents(before);
    documents(after)
        .into_iter()
        .filter_map(|doc| {
            let schema = crd_schema(&doc)?;
            let before = inputs
                .iter()
                .find(|d| object_key(d) == object_key(&doc))
                .cloned();
            Some(SchemaCheck {
                who: who.to_string(),
                schema,
                after: doc,
                before,
            })
        })
        .collect()
}

/// Runs the checks in one batch: the damage (violations apply added) and, per kind, the documents checked
/// and how many of them apply changed (`None` when the validator is missing and the check is skipped).
type KindCounts = BTreeMap<String, (usize, usize)>;
fn run_schema_checks(checks: &[SchemaCheck]) -> (Vec<String>, Option<KindCounts>) {
    let mut items: Vec<(&Value, &str)> = Vec::new();
    for c in checks {
        items.push((&c.after, c.schema));
        if let Some(b) = &c.before {
            items.push((b, c.schema));
        }
    }
    let errors = match consumers::crd_schema_errors(&items) {
        Ok(Some(e)) => e,
        Ok(None) => return (Vec::new(), None),
        Err(e) => return (vec![e], None),
    };
    let mut errors = errors.into_iter();
    let (mut damage, mut counts) = (Vec::new(), BTreeMap::new());
    for c in checks {
        let after = errors.next().unwrap();
        let before = if c.before.is_some() {
            errors.next().unwrap()
        } else {
            Vec::new()
        };
        let added: Vec<&String> = after.iter().filter(|e| !before.contains(e)).collect();
        let (api, kind) = api_kind(&c.after);
        let entry = counts.entry(format!("{kind} ({api})")).or_insert((0, 0));
        entry.0 += 1;
        if c.before.as_ref() != Some(&c.after) {
            entry.1 += 1;
        }
        if !added.is_empty() {
            damage.push(format!(
                "{}: the {} schema rejects apply's output of {kind} {:?} (the input passed these):\n      {}",
                c.who,
                c.schema,
                object_key(&c.after).3,
                added
                    .iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join("\n      ")
            ));
        }
    }
    (damage, Some(counts))
}

/// The documents of core kinds (`v1`, `apps/v1`, `batch/v1`, `rbac.authorization.k8s.io/v1`), for
/// kubernetes-validate.
fn core_documents(text: &str) -> String {
    text.split("\n---\n")
        .filter(|d| {
            d.lines().any(|l| {
                matches!(
                    l.trim(),
                    "apiVersion: v1"
                        | "apiVersion: apps/v1"
                        | "apiVersion: batch/v1"
                        | "apiVersion: rbac.authorization.k8s.io/v1"
                )
            })
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn the_corpus_is_linted_and_applied_as_its_expectations_say() {
    let all = fixtures();
    let mut report = String::new();
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    let mut damaged = Vec::new();
    let mut sources = BTreeSet::new();
    let mut schema_checks_all: Vec<SchemaCheck> = Vec::new();
    let mut absent_hits: Vec<String> = Vec::new();
    for (toml, yaml) in &all {
        let f = read(toml);
        sources.insert(f.source.clone());
        let text = std::fs::read_to_string(yaml).unwrap();
        let lint = linter(&f).lint(Source::new(
            yaml.file_name().unwrap().to_string_lossy(),
            text.clone(),
        ));
        assert!(
            lint.templates > 0
                || !text.contains("containers:")
                || lint
                    .problems
                    .iter()
                    .any(|p| p.code.as_str() == "roce::lint::syntax"),
            "{}: a file with pod templates reports none",
            f.name
        );
        let s = score(&f, &lint);
        tp += s.tp;
        fp += s.fp.len();
        fn_ += s.fn_.len();
        let _ = writeln!(
            report,
            "{:<48} {:<26} tp {:>2} fp {:>2} fn {:>2}",
            f.name,
            f.profile,
            s.tp,
            s.fp.len(),
            s.fn_.len()
        );
        for x in &s.fp {
            let _ = writeln!(report, "    FP {x}");
        }
        for x in &s.fn_ {
            let _ = writeln!(report, "    FN {x}");
        }
        for x in &s.absent {
            absent_hits.push(format!("{}: {x}", f.name));
        }
        if f.apply && f.profile != "none" {
            let plan = roce_render::plan::lower(
                &load(builtin::source(&f.profile).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap(),
            );
            let opts = ApplyOptions {
                container: f.container.clone(),
                ..ApplyOptions::default()
            };
            let once = match apply(&Source::new("in.yaml", text.clone()), &plan, &opts) {
                Ok(a) => a.text,
                Err(p) => {
                    damaged.push(format!(
                        "{}: apply refused: {:?}",
                        f.name,
                        p.iter().map(|p| p.code.as_str()).collect::<Vec<_>>()
                    ));
                    continue;
                }
            };
            let twice = apply(&Source::new("in.yaml", once.clone()), &plan, &opts)
                .unwrap()
                .text;
            if twice != once {
                damaged.push(format!("{}: applying twice differs from once", f.name));
            }
            for d in damage(&f, &text, &once, false) {
                damaged.push(format!("{}: {d}", f.name));
            }
            // Apply adds nothing lint objects to: no finding in the output that the input did not have.
            let after = linter(&f).lint(Source::new("out.yaml", once.clone()));
            let before: BTreeSet<&str> = counted(&lint).iter().map(|p| p.code.as_str()).collect();
            for p in counted(&after) {
                // What apply wires is gone from its output: the output lints clean of it.
                if APPLY_FIXES.contains(&p.code.as_str()) {
                    damaged.push(format!(
                        "{}: apply left {} {}: {}",
                        f.name,
                        p.code,
                        line(p),
                        p.message
                    ));
                } else if !before.contains(p.code.as_str()) {
                    damaged.push(format!(
                        "{}: apply's output has a new finding {} {}: {}",
                        f.name,
                        p.code,
                        line(p),
                        p.message
                    ));
                }
            }
            // Every custom kind against its CRD schema, with strict fields (checked in one batch below).
            schema_checks_all.extend(schema_checks(&f.name, &text, &once));
            let core = core_documents(&once);
            if !core.trim().is_empty()
                && consumers::kubernetes_validate_strict(&core, &consumers::k8s_versions_from(None))
                    .is_err()
            {
                // Blamed on apply only for the versions the input itself passes (a sidecar's
                // `initContainers[].restartPolicy` is Kubernetes 1.28's: 1.25 rejects the input too).
                let input = core_documents(&text);
                let versions: Vec<&str> = consumers::k8s_versions_from(None)
                    .into_iter()
                    .filter(|v| consumers::kubernetes_validate_strict(&input, &[v]).is_ok())
                    .collect();
                let still = if versions.is_empty() {
                    None
                } else {
                    consumers::kubernetes_validate_strict(&core, &versions).err()
                };
                if let Some(e) = still {
                    damaged.push(format!(
                        "{}: kubernetes-validate --strict rejects apply's output:\n{e}",
                        f.name
                    ));
                }
            }
        }
    }
    // A user pointing the wrong profile at any of these files must not damage them either: every
    // fixture with a pod template, applied with each of three built-ins of different clouds and fabrics.
    let mut stress = 0;
    for (toml, yaml) in &all {
        let f = read(toml);
        let text = std::fs::read_to_string(yaml).unwrap();
        // A pod template: `containers`, or the single container of Dynamo (`mainContainer`) and OME (`runner`).
        if !["containers:", "mainContainer:", "runner:"]
            .iter()
            .any(|k| text.contains(k))
        {
            continue;
        }
        for name in ["coreweave/gb300-roce", "aws/p5-efa", "gcp/a3-ultra"] {
            let plan = roce_render::plan::lower(
                &load(builtin::source(name).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap(),
            );
            let opts = ApplyOptions {
                container: f.container.clone(),
                ..ApplyOptions::default()
            };
            let Ok(once) = apply(&Source::new("in.yaml", text.clone()), &plan, &opts) else {
                continue;
            };
            stress += 1;
            let twice = apply(&Source::new("in.yaml", once.text.clone()), &plan, &opts)
                .unwrap()
                .text;
            if twice != once.text {
                damaged.push(format!(
                    "{} with {name}: applying twice differs from once",
                    f.name
                ));
            }
            // What no profile may add: GPUs to a pod that asks for none of NVIDIA's.
            let generic = Fixture {
                must_add: Vec::new(),
                nads_after: None,
                must_not_add: vec!["nvidia.com/gpu".to_string()],
                ..read(toml)
            };
            for d in damage(&generic, &text, &once.text, true) {
                damaged.push(format!("{} with {name}: {d}", f.name));
            }
            schema_checks_all.extend(schema_checks(
                &format!("{} with {name}", f.name),
                &text,
                &once.text,
            ));
        }
        // The DRA built-ins write resource claims (and clique affinity) into every pod template, fields a
        // CRD's copy of PodSpec must know (one generated from Kubernetes types older than 1.31 has the
        // claims' earlier `source` form): their output against the CRD schemas only.
        for name in DRA_SCHEMA_PROFILES {
            let plan = roce_render::plan::lower(
                &load(builtin::source(name).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap(),
            );
            let opts = ApplyOptions {
                container: f.container.clone(),
                ..ApplyOptions::default()
            };
            if let Ok(once) = apply(&Source::new("in.yaml", text.clone()), &plan, &opts) {
                schema_checks_all.extend(schema_checks(
                    &format!("{} with {name}", f.name),
                    &text,
                    &once.text,
                ));
            }
        }
    }
    let (schema_damage, schema_counts) = run_schema_checks(&schema_checks_all);
    damaged.extend(schema_damage);
    let schemas = match &schema_counts {
        Some(counts) => format!(
            "{} custom-kind documents of apply's output checked against their CRD schemas, {} of them \
             written or changed by apply: {}",
            counts.values().map(|c| c.0).sum::<usize>(),
            counts.values().map(|c| c.1).sum::<usize>(),
            counts
                .iter()
                .map(|(k, (n, changed))| format!("{k} {n} ({changed} changed)"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "CRD schema checks SKIPPED (no jsonschema)".to_string(),
    };
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!("{report}");
    println!(
        "corpus: {} fixtures from {} sources; precision {precision:.3} ({tp} of {}), recall {recall:.3} ({tp} of {}); apply damage: {} (over {stress} wrong-profile applies too; {schemas})",
        all.len(),
        sources.len(),
        tp + fp,
        tp + fn_,
        damaged.len()
    );
    for d in &damaged {
        println!("  DAMAGE {d}");
    }
    assert!(
        precision >= MIN_PRECISION && recall >= MIN_RECALL,
        "precision {precision:.3} (>= {MIN_PRECISION}) and recall {recall:.3} (>= {MIN_RECALL}):\n{report}"
    );
    assert!(damaged.is_empty(), "apply damage:\n{}", damaged.join("\n"));
    // Beyond the totals: what a fixture says works is never reported, so each rule that knows a form of
    // working wiring is guarded by the fixtures that show it.
    assert!(
        absent_hits.is_empty(),
        "reported although a fixture says it works:\n{}",
        absent_hits.join("\n")
    );
}

/// Documents of the corpus that their CRD schema rejects as they stand, each error with its cause. The
/// fixtures reproduce public manifests, their bugs included; these are what the schema says about them.
/// Apply's output is only blamed for what it adds (`run_schema_checks`).
const INPUT_SCHEMA_ERRORS: &[(&str, &str, &str)] = &[
    (
        "azure/heldout9-megatron-pytorchjob-ndv5-rdma-ib",
        "/spec: Additional properties are not allowed ('ttlSecondsAfterFinished' was unexpected)",
        "Azure's Megatron chart writes ttlSecondsAfterFinished directly under the PyTorchJob's spec; the v1 \
         PyTorchJob has it under spec.runPolicy (the Training Operator's RunPolicy), so the API server prunes it",
    ),
    (
        "netop-tools/heldout7-b200-ib-sriov-mpijob-no-shm",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "mpi-operator's v2beta1 `launcherCreationPolicy` (AtStartup | WaitForWorkersReady, its Python SDK's \
         V2beta1MPIJobSpec) is newer than the MPIJob schema kept in crds/; a current mpi-operator accepts it",
    ),
    (
        "llm-d/pd-mooncake-cks",
        "/spec/roles/0/spec: Additional properties are not allowed ('groupIdentity' was unexpected)",
        "llm-d's guide sets groupIdentity: Hash, a field of kubernetes-sigs/lws PR #987 (KEP-898, unmerged at \
         lws main 060ab4da): a released LWS drops it, or rejects it under strict field validation",
    ),
    (
        "llm-d/pd-mooncake-cks",
        "/spec/roles/1/spec: Additional properties are not allowed ('groupIdentity' was unexpected)",
        "the same, decode role",
    ),
    (
        "llm-d/pd-nixl-base-gb300",
        "/spec/roles/0/spec: Additional properties are not allowed ('groupIdentity' was unexpected)",
        "the same guide family (llm-d 55541149): groupIdentity from the unmerged lws PR #987",
    ),
    (
        "llm-d/pd-nixl-base-gb300",
        "/spec/roles/1/spec: Additional properties are not allowed ('groupIdentity' was unexpected)",
        "the same, decode role",
    ),
    (
        "network-operator/sriov-ib-network",
        "/spec: 'nodeSelector' is a required property",
        "the vendor's sriov-network-node-policy.yaml comments its nodeSelector out; the SriovNetworkNodePolicy \
         CRD requires it (the API server refuses the object)",
    ),
    (
        "azure/aks-nccl-test-gb300-mpijob",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "the same chart as azure/heldout3-nccl-gb300-channel-claim-unlisted: launcherCreationPolicy is newer \
         than the v0.4 MPIJob CRD the schema is pinned to",
    ),
    (
        "azure/heldout3-nccl-gb300-channel-claim-unlisted",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "Azure's nccl-test chart (ai-infrastructure-on-azure) sets launcherCreationPolicy: WaitForWorkersReady, \
         newer than the v0.4 MPIJob CRD the schema is pinned to",
    ),
    (
        "azure/heldout3-nccl-h100-shared-policy-rdma-ib",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "the same chart",
    ),
    (
        "azure/heldout3-nccl-h100-sriov-ib-mpijob",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "the same chart",
    ),
    (
        "nvidia-dra/heldout-nvbandwidth-no-compute-domain",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "NVIDIA's other nvbandwidth MPIJob (k8s-dra-driver-gpu 22407113, demo/specs/imex/\
         nvbandwidth-test-no-compute-domain-job.yaml sets launcherCreationPolicy: WaitForWorkersReady): newer \
         than the v0.4 MPIJob CRD the schema is pinned to",
    ),
    (
        "nvidia-dra/nvbandwidth-cd-mpijob",
        "/spec: Additional properties are not allowed ('launcherCreationPolicy' was unexpected)",
        "NVIDIA's sample targets an MPI Operator newer than the v0.4 CRD the schema is pinned to \
         (crds/README.md: launcherCreationPolicy came later)",
    ),
    (
        "sriov-operator/rdma-exclusive",
        "/spec: Additional properties are not allowed ('metaPluginsConfig' was unexpected)",
        "the operator's doc/rdma-configuration.md writes metaPluginsConfig, but the SriovNetwork field is \
         `metaPlugins` (api/v1/sriovnetwork_types.go: MetaPluginsConfig string `json:\"metaPlugins\"`): the \
         rdma meta plugin is dropped from the generated NAD",
    ),
    (
        "odh/heldout4-pytorchjob-rdma-shared-crio-memlock",
        "/spec/rdmaSharedDevicePlugin: 'image' is a required property",
        "the guide's 'Example NicClusterPolicy' (opendatahub-documentation 8de243d1, modules/creating-a-multi-node-\
         pytorch-training-job-with-rdma.adoc, shown to read the resourceName off) gives rdmaSharedDevicePlugin \
         only its config: no image/repository/version, and the Network Operator CRD requires image (the API \
         server refuses the object as written)",
    ),
    (
        "odh/heldout4-pytorchjob-worker-without-rdma",
        "/spec/rdmaSharedDevicePlugin: 'image' is a required property",
        "the same guide's example NicClusterPolicy: no image",
    ),
    (
        "spiderpool/heldout4-macvlan-shared-rdma-tools",
        "/spec: Additional properties are not allowed ('rdmaResourceName' was unexpected)",
        "spiderpool a7fbd3b2 docs/usage/install/ai/get-started-macvlan.md writes rdmaResourceName directly \
         under spec; the SpiderMultusConfig field is spec.macvlan.rdmaResourceName (where the same guide's MTU \
         example puts it): dropped by the API server, or rejected under strict field validation. It only feeds \
         the webhook's RDMA resource injection, which this DaemonSet does not use (it writes its resources)",
    ),
    (
        "spiderpool/heldout4-rdma-resource-inject-webhook",
        "/spec/sriov: Additional properties are not allowed ('enableRdma' was unexpected)",
        "spiderpool's get-started-sriov-roce.md writes sriov.enableRdma, a field removed in spiderpool #4549 \
         (938eeb7e, 2025-01, now sriov.rdmaIsolation): dropped, or rejected under strict field validation; \
         spiderpool's webhook defaults rdmaIsolation to false",
    ),
    (
        "spiderpool/heldout4-rdma-resource-inject-webhook",
        "/spec: Additional properties are not allowed ('ippools' was unexpected)",
        "the guide's webhook-injection section puts ippools directly under spec (the field is spec.sriov.ippools, \
         as elsewhere in the guide): dropped, or rejected under strict field validation; pruned, the object has \
         no pools, which spiderpool's validating webhook refuses for a SpiderMultusConfig annotated \
         rdma-resource-inject (pkg/multuscniconfig/utils.go ValidateRdmaResouce: 'no any ippools configured')",
    ),
    (
        "spiderpool/heldout4-sriov-roce-rdma-tools-resource-mismatch",
        "/spec/sriov: Additional properties are not allowed ('enableRdma' was unexpected)",
        "the same guide's Solution 1 SpiderMultusConfigs: sriov.enableRdma, removed in spiderpool #4549 \
         (now rdmaIsolation)",
    ),
];

/// Every custom-kind document of every fixture, with the fixture's name.
/// Custom kinds whose CRD is not published, so no schema checks them (each with why).
const UNPUBLISHED_CRDS: &[(&str, &str, &str)] = &[(
    "sagemaker.amazonaws.com/v1",
    "HyperPodPyTorchJob",
    "installed by SageMaker HyperPod's training operator (an EKS add-on); no repository publishes its CRD",
)];

fn custom_inputs() -> Vec<(String, Value)> {
    fixtures()
        .iter()
        .flat_map(|(toml, yaml)| {
            let name = read(toml).name;
            documents(&std::fs::read_to_string(yaml).unwrap())
                .into_iter()
                .filter(|d| !is_core(api_kind(d).0))
                .filter(|d| {
                    let (api, kind) = api_kind(d);
                    !UNPUBLISHED_CRDS
                        .iter()
                        .any(|(a, k, _)| *a == api && *k == kind)
                })
                .map(move |d| (name.clone(), d))
        })
        .collect()
}

#[test]
fn every_custom_kind_in_the_corpus_has_its_crd_schema() {
    let inputs = custom_inputs();
    assert!(!inputs.is_empty());
    let missing: BTreeSet<String> = inputs
        .iter()
        .filter(|(_, d)| crd_schema(d).is_none())
        .map(|(f, d)| format!("{f}: {:?}", api_kind(d)))
        .collect();
    assert!(
        missing.is_empty(),
        "custom kinds without a CRD schema in CRD_SCHEMAS (add it to crates/roce-render/tests/fixtures/crds/ \
         with its provenance in README.md):\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
    let dir = consumers::repo_root().join("crates/roce-render/tests/fixtures/crds");
    for (api, kind, file) in CRD_SCHEMAS {
        let text = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{file} ({api} {kind}): {e}"));
        let schema: Value = serde_json::from_str(&text).unwrap();
        let comment = schema["$comment"].as_str().unwrap_or("");
        assert!(
            comment.starts_with(&format!("{kind} {api}:")),
            "{file} names its source for {kind} {api} in $comment: {comment:?}"
        );
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(
            readme.contains(&format!("`{file}`")),
            "{file}: no provenance in README.md"
        );
    }
}

#[test]
fn the_corpus_inputs_are_what_their_crd_schemas_say() {
    let inputs = custom_inputs();
    let items: Vec<(&Value, &str)> = inputs
        .iter()
        .map(|(_, d)| (d, crd_schema(d).expect("every_custom_kind_… covers this")))
        .collect();
    let Some(errors) = consumers::crd_schema_errors(&items).unwrap_or_else(|e| panic!("{e}"))
    else {
        return;
    };
    let mut found = BTreeSet::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for ((fixture, doc), errs) in inputs.iter().zip(errors) {
        let (api, kind) = api_kind(doc);
        *counts.entry(format!("{kind} ({api})")).or_insert(0) += 1;
        for e in errs {
            found.insert((fixture.clone(), e));
        }
    }
    let known: BTreeSet<(String, String)> = INPUT_SCHEMA_ERRORS
        .iter()
        .map(|(f, e, _)| (f.to_string(), e.to_string()))
        .collect();
    println!(
        "{} custom-kind input documents checked against their CRD schemas: {}",
        counts.values().sum::<usize>(),
        counts
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let new: Vec<String> = found
        .difference(&known)
        .map(|(f, e)| format!("{f}: {e}"))
        .collect();
    let gone: Vec<String> = known
        .difference(&found)
        .map(|(f, e)| format!("{f}: {e}"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "the CRD schemas' verdict on the corpus inputs differs from INPUT_SCHEMA_ERRORS\n\
         rejected, not listed (a fixture's transcription error, or a vendor bug to list with its cause):\n  {}\n\
         listed, no longer rejected:\n  {}",
        new.join("\n  "),
        gone.join("\n  ")
    );
}

/// The check can fail: a field no CRD knows, put where a user's typo would be, is reported at its path,
/// in the pod template (the CRD's copy of PodSpec) and in the custom resource's own spec.
#[test]
fn a_broken_custom_resource_fails_its_crd_schema() {
    let text =
        std::fs::read_to_string(corpus_dir().join("gke/a3u-jobset-gib-privileged.yaml")).unwrap();
    let plan = roce_render::plan::lower(
        &load(builtin::source("gcp/a3-ultra").unwrap(), &BuiltinsOnly)
            .profile
            .unwrap(),
    );
    let once = apply(
        &Source::new("in.yaml", text.clone()),
        &plan,
        &ApplyOptions::default(),
    )
    .unwrap()
    .text;
    let jobset = documents(&once)
        .into_iter()
        .find(|d| api_kind(d) == ("jobset.x-k8s.io/v1alpha2", "JobSet"))
        .unwrap();
    let container = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0";
    let mut typo_in_pod = jobset.clone();
    typo_in_pod
        .pointer_mut(container)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert("securityContex".into(), serde_json::json!({}));
    let mut typo_in_spec = jobset.clone();
    let spec = typo_in_spec
        .pointer_mut("/spec")
        .unwrap()
        .as_object_mut()
        .unwrap();
    let jobs = spec.remove("replicatedJobs").unwrap();
    spec.insert("replicatedJob".into(), jobs);
    let mut wrong_type = jobset.clone();
    wrong_type
        .pointer_mut("/spec/replicatedJobs/0")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert("replicas".into(), serde_json::json!("2"));
    let schema = crd_schema(&jobset).unwrap();
    let Some(errors) = consumers::crd_schema_errors(&[
        (&jobset, schema),
        (&typo_in_pod, schema),
        (&typo_in_spec, schema),
        (&wrong_type, schema),
    ])
    .unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    assert_eq!(errors[0], Vec::<String>::new(), "apply's JobSet is valid");
    assert_eq!(
        errors[1],
        [format!(
            "{container}: Additional properties are not allowed ('securityContex' was unexpected)"
        )]
    );
    assert!(
        errors[2].contains(
            &"/spec: Additional properties are not allowed ('replicatedJob' was unexpected)"
                .to_string()
        ),
        "{:?}",
        errors[2]
    );
    assert_eq!(
        errors[3],
        ["/spec/replicatedJobs/0/replicas: '2' is not of type 'integer'"]
    );
    // And the corpus check blames apply only for what it adds: the typo in the output, not in the input.
    let checks = |before: &Value, after: &Value| SchemaCheck {
        who: "test".into(),
        schema,
        after: after.clone(),
        before: Some(before.clone()),
    };
    let (damage, counts) = run_schema_checks(&[
        checks(&jobset, &typo_in_pod),
        checks(&typo_in_pod, &typo_in_pod),
    ]);
    assert_eq!(damage.len(), 1, "{damage:?}");
    assert!(damage[0].contains("securityContex"), "{damage:?}");
    assert_eq!(
        counts.unwrap().get("JobSet (jobset.x-k8s.io/v1alpha2)"),
        Some(&(2, 1))
    );
}
