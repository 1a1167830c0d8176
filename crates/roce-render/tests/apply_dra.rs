//! `roce apply` with DRA profiles: the claims, clique affinity, labels and Kueue annotations land in the worker
//! templates of every kind apply knows (never in an MPI launcher), merged by name with what is there; the
//! ComputeDomain (and dranet's ResourceClaimTemplate) goes before the first workload that claims it, once;
//! applying twice changes nothing; and the result passes the real consumers: `kubernetes-validate --strict` at
//! Kubernetes 1.34 and 1.37, the ComputeDomain and MPIJob CRD schemas.

use std::path::{Path, PathBuf};

use roce_model::{Code, Problem, Source};
use roce_render::Plan;
use roce_render::apply::{Applied, ApplyOptions, RoleChoice, apply};
use serde_json::{Value, json};

use crate::support::consumers;

const GB300_DRA: &str = "coreweave/gb300-roce-dra";
const DRANET: &str = "oci/gb200-roce-dranet";
const PROFILES: [&str; 2] = [GB300_DRA, DRANET];

/// The one place the DRA profiles are loaded.
fn dra_plan(name: &str) -> Plan {
    let loaded = roce_model::load(
        roce_model::builtin::source(name).unwrap(),
        &roce_model::BuiltinsOnly,
    );
    assert!(loaded.problems.is_empty(), "{name}: {:?}", loaded.problems);
    roce_render::lower(&loaded.profile.unwrap())
}

fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {} {:?} {}\n", p.code, p.location(), p.message))
        .collect()
}

fn run_with(text: &str, plan: &Plan, container: Option<&str>) -> Applied {
    let opts = ApplyOptions {
        container: container.map(str::to_string),
        role: RoleChoice::Worker,
    };
    apply(&Source::new("in.yaml", text), plan, &opts)
        .unwrap_or_else(|p| panic!("{}\n{text}", describe(&p)))
}

fn run(text: &str, plan: &Plan) -> Applied {
    run_with(text, plan, None)
}

/// Applied once, then applied again to the output: the bytes must not change.
fn run_idempotent(text: &str, plan: &Plan, container: Option<&str>, what: &str) -> Applied {
    let once = run_with(text, plan, container);
    let twice = run_with(&once.text, plan, container);
    assert_eq!(
        once.text, twice.text,
        "{what}: applying twice differs from once"
    );
    assert!(
        !twice
            .notes
            .iter()
            .any(|n| n.contains(" added ") || n.contains("gets the profile's DRA wiring")),
        "{what}: the second application still adds something: {:#?}",
        twice.notes
    );
    once
}

fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn kinds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../roce-inspect/tests/fixtures/manifests/kinds")
}

fn kind_fixture(name: &str) -> String {
    std::fs::read_to_string(kinds_dir().join(name)).unwrap()
}

// ---------------------------------------------------------------------------------------------------------
// What the plan says, as JSON, with the vendor's values pinned so the expectations are not only the plan's.

struct Want {
    pod_claims: Vec<Value>,
    claim_names: Vec<String>,
    term: Value,
    labels: Vec<(String, String)>,
    /// (kind, name) of the objects the claims name, in file order.
    objects: Vec<(String, String)>,
}

fn want(plan: &Plan) -> Want {
    let pod_claims: Vec<Value> = plan
        .dra
        .pod_claims
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    let affinity = serde_json::to_value(plan.dra.affinity.as_ref().unwrap()).unwrap();
    Want {
        claim_names: pod_claims
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect(),
        pod_claims,
        term: affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0].clone(),
        labels: plan.dra.labels.clone(),
        objects: plan
            .dra
            .documents
            .iter()
            .map(|d| (d.kind().to_string(), d.name().to_string()))
            .collect(),
    }
}

#[test]
fn the_draft_profiles_say_what_the_vendors_jobs_do() {
    let w = want(&dra_plan(GB300_DRA));
    assert_eq!(
        w.pod_claims,
        [json!({"name": "compute-domain-channel",
                "resourceClaimTemplateName": "nccl-test-72-gb300-18n-dra-cd-channel"})]
    );
    assert_eq!(
        w.objects,
        [(
            "ComputeDomain".to_string(),
            "nccl-test-72-gb300-18n-dra".to_string()
        )]
    );
    assert_eq!(w.term["topologyKey"], "nvidia.com/gpu.clique");
    let w = want(&dra_plan(DRANET));
    assert_eq!(w.claim_names, ["gpu-nic", "compute-domain-channel"]);
    let kinds: Vec<&str> = w.objects.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["ComputeDomain", "ResourceClaimTemplate"]);
}

// ---------------------------------------------------------------------------------------------------------
// Every kind.

/// One workload: its text, the pod templates that must get the DRA wiring (JSON pointers into the workload
/// document, with the wired container's index) and those that must not (MPI launchers, initializers).
struct Case {
    name: &'static str,
    text: String,
    kind: &'static str,
    container: Option<&'static str>,
    workers: Vec<(String, usize)>,
    untouched: Vec<String>,
    /// kubernetes-validate knows the kind (the others are checked through their templates as Pods).
    core: bool,
}

fn replica_job(kind: &str, api: &str, specs: &str, container: &str, image: &str) -> String {
    format!(
        "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {}\nspec:\n  {specs}:\n    Worker:\n      replicas: 2\n      \
         template:\n        spec:\n          containers:\n          - name: {container}\n            image: {image}\n",
        kind.to_ascii_lowercase()
    )
}

const REPLICASET: &str = "\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: cache
spec:
  replicas: 2
  selector:
    matchLabels:
      app: cache
  template:
    metadata:
      labels:
        app: cache
    spec:
      containers:
      - name: cache
        image: ghcr.io/example/cache:1
";

const RAYJOB: &str = "\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rl-job
spec:
  entrypoint: python train.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0-gpu
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.46.0-gpu
";

/// A JobSet running MPI: the `launcher` job runs `mpirun` and no rank.
const JOBSET_MPI: &str = "\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: mpi
spec:
  replicatedJobs:
  - name: launcher
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: launcher
              image: ghcr.io/coreweave/nccl-tests:13.1.0-devel-ubuntu22.04-nccl2.29.2-1-0bf62c2
              command: [\"mpirun\", \"-np\", \"8\", \"/opt/nccl_tests/build/all_reduce_perf\"]
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: worker
              image: ghcr.io/coreweave/nccl-tests:13.1.0-devel-ubuntu22.04-nccl2.29.2-1-0bf62c2
";

/// A namespaced TrainingRuntime for MPI: an initializer (skipped), a launcher, and the nodes.
const TRAINING_RUNTIME_MPI: &str = "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: mpi-roce
  namespace: team-a
spec:
  mlPolicy:
    numNodes: 2
    mpi:
      numProcPerNode: 4
  template:
    spec:
      replicatedJobs:
      - name: model-initializer
        template:
          spec:
            template:
              spec:
                containers:
                - name: model-initializer
                  image: ghcr.io/kubeflow/trainer/model-initializer
      - name: launcher
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: ghcr.io/example/mpi:1
                  command: [\"mpirun\", \"python\", \"train.py\"]
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: ghcr.io/example/mpi:1
";

fn cases() -> Vec<Case> {
    let case = |name, text: String, kind, workers: Vec<(&str, usize)>, core| Case {
        name,
        text,
        kind,
        container: None,
        workers: workers
            .into_iter()
            .map(|(p, i)| (p.to_string(), i))
            .collect(),
        untouched: Vec::new(),
        core,
    };
    let paths = |ps: &[&str]| ps.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let mut out = vec![
        case("pod", kind_fixture("pod.yaml"), "Pod", vec![("", 0)], true),
        Case {
            container: Some("server"),
            ..case(
                "deployment",
                kind_fixture("deployment.yaml"),
                "Deployment",
                vec![("/spec/template", 1)],
                true,
            )
        },
        case(
            "statefulset",
            kind_fixture("statefulset.yaml"),
            "StatefulSet",
            vec![("/spec/template", 0)],
            true,
        ),
        case(
            "daemonset",
            kind_fixture("daemonset.yaml"),
            "DaemonSet",
            vec![("/spec/template", 0)],
            true,
        ),
        case(
            "replicaset",
            REPLICASET.to_string(),
            "ReplicaSet",
            vec![("/spec/template", 0)],
            true,
        ),
        case(
            "job",
            kind_fixture("job.yaml"),
            "Job",
            vec![("/spec/template", 0)],
            true,
        ),
        case(
            "cronjob",
            kind_fixture("cronjob.yaml"),
            "CronJob",
            vec![("/spec/jobTemplate/spec/template", 0)],
            true,
        ),
        case(
            "multi",
            kind_fixture("multi.yaml"),
            "Deployment",
            vec![("/spec/template", 0)],
            true,
        ),
        Case {
            untouched: paths(&["/spec/mpiReplicaSpecs/Launcher/template"]),
            ..case(
                "mpijob",
                kind_fixture("mpijob.yaml"),
                "MPIJob",
                vec![("/spec/mpiReplicaSpecs/Worker/template", 0)],
                false,
            )
        },
        case(
            "pytorchjob",
            kind_fixture("pytorchjob.yaml"),
            "PyTorchJob",
            vec![
                ("/spec/pytorchReplicaSpecs/Master/template", 0),
                ("/spec/pytorchReplicaSpecs/Worker/template", 0),
            ],
            false,
        ),
        case(
            "jobset",
            kind_fixture("jobset.yaml"),
            "JobSet",
            vec![("/spec/replicatedJobs/0/template/spec/template", 0)],
            false,
        ),
        Case {
            untouched: paths(&["/spec/replicatedJobs/0/template/spec/template"]),
            ..case(
                "jobset-mpi",
                JOBSET_MPI.to_string(),
                "JobSet",
                vec![("/spec/replicatedJobs/1/template/spec/template", 0)],
                false,
            )
        },
        Case {
            untouched: paths(&["/spec/template/spec/replicatedJobs/0/template/spec/template"]),
            ..case(
                "clustertrainingruntime",
                kind_fixture("trainingruntime.yaml"),
                "ClusterTrainingRuntime",
                vec![(
                    "/spec/template/spec/replicatedJobs/1/template/spec/template",
                    0,
                )],
                false,
            )
        },
        Case {
            untouched: paths(&[
                "/spec/template/spec/replicatedJobs/0/template/spec/template",
                "/spec/template/spec/replicatedJobs/1/template/spec/template",
            ]),
            ..case(
                "trainingruntime-mpi",
                TRAINING_RUNTIME_MPI.to_string(),
                "TrainingRuntime",
                vec![(
                    "/spec/template/spec/replicatedJobs/2/template/spec/template",
                    0,
                )],
                false,
            )
        },
        case(
            "leaderworkerset",
            kind_fixture("leaderworkerset.yaml"),
            "LeaderWorkerSet",
            vec![
                ("/spec/leaderWorkerTemplate/leaderTemplate", 0),
                ("/spec/leaderWorkerTemplate/workerTemplate", 0),
            ],
            false,
        ),
        case(
            "raycluster",
            kind_fixture("raycluster.yaml"),
            "RayCluster",
            vec![
                ("/spec/headGroupSpec/template", 0),
                ("/spec/workerGroupSpecs/0/template", 0),
            ],
            false,
        ),
        case(
            "rayjob",
            RAYJOB.to_string(),
            "RayJob",
            vec![
                ("/spec/rayClusterSpec/headGroupSpec/template", 0),
                ("/spec/rayClusterSpec/workerGroupSpecs/0/template", 0),
            ],
            false,
        ),
    ];
    for (kind, specs, container, image) in [
        (
            "TFJob",
            "tfReplicaSpecs",
            "tensorflow",
            "tensorflow/tensorflow:2.16.1-gpu",
        ),
        (
            "XGBoostJob",
            "xgbReplicaSpecs",
            "xgboost",
            "ghcr.io/example/xgb:1",
        ),
        (
            "PaddleJob",
            "paddleReplicaSpecs",
            "paddle",
            "ghcr.io/example/paddle:1",
        ),
        ("JAXJob", "jaxReplicaSpecs", "jax", "ghcr.io/example/jax:1"),
    ] {
        let worker = format!("/spec/{specs}/Worker/template");
        out.push(case(
            kind,
            replica_job(kind, "kubeflow.org/v1", specs, container, image),
            kind,
            vec![(worker.as_str(), 0)],
            false,
        ));
    }
    out
}

fn at<'a>(doc: &'a Value, pointer: &str) -> &'a Value {
    doc.pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer:?} in {doc:#}"))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The wiring of one worker template, checked against the plan.
fn check_worker(what: &str, template: &Value, container: usize, w: &Want) {
    let spec = &template["spec"];
    for claim in &w.pod_claims {
        let same: Vec<&Value> = spec["resourceClaims"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no resourceClaims in {template:#}"))
            .iter()
            .filter(|c| c["name"] == claim["name"])
            .collect();
        assert_eq!(same, [claim], "{what}: resourceClaims {template:#}");
    }
    let containers = spec["containers"].as_array().unwrap();
    for (i, c) in containers.iter().enumerate() {
        let listed = names(&c["resources"]["claims"]);
        if i == container {
            for name in &w.claim_names {
                assert_eq!(
                    listed.iter().filter(|n| *n == name).count(),
                    1,
                    "{what}: container {i} claims {listed:?}"
                );
            }
        } else {
            assert!(
                listed.is_empty(),
                "{what}: container {i} is not the wired one but claims {listed:?}"
            );
        }
    }
    let terms = &spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let equal = terms
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no required pod affinity in {template:#}"))
        .iter()
        .filter(|t| **t == w.term)
        .count();
    assert_eq!(equal, 1, "{what}: affinity {terms:#}");
    for (k, v) in &w.labels {
        assert_eq!(
            template["metadata"]["labels"][k], *v,
            "{what}: labels {template:#}"
        );
    }
}

/// A launcher or initializer: nothing of DRA.
fn check_untouched(what: &str, template: &Value, w: &Want) {
    let spec = &template["spec"];
    assert!(
        spec.get("resourceClaims").is_none(),
        "{what}: a launcher claims {template:#}"
    );
    assert!(
        spec.get("affinity").is_none(),
        "{what}: a launcher got affinity {template:#}"
    );
    for c in spec["containers"].as_array().unwrap() {
        assert!(
            c["resources"].get("claims").is_none(),
            "{what}: a launcher container claims {c:#}"
        );
    }
    for (k, _) in &w.labels {
        assert!(
            template["metadata"]["labels"].get(k).is_none(),
            "{what}: a launcher carries the affinity's label, so the workers would be placed by it: {template:#}"
        );
    }
}

/// A pod template as a Pod, for kubernetes-validate.
fn as_pod(name: &str, template: &Value) -> Value {
    let mut metadata = template.get("metadata").cloned().unwrap_or(json!({}));
    metadata["name"] = json!(name);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]})
}

fn check_compute_domain(what: &str, doc: &Value) {
    match consumers::crd_schema_strict(doc, "compute-domain-v1beta1.json") {
        Ok(checked) => assert!(
            checked || !consumers::tools_required(),
            "{what}: CRD schema not checked"
        ),
        Err(e) => panic!("{what}: {e}"),
    }
}

#[test]
fn every_kind_gets_dra_in_its_worker_templates_and_the_objects_before_it() {
    for profile in PROFILES {
        let plan = dra_plan(profile);
        let w = want(&plan);
        let mut to_validate: Vec<Value> = Vec::new();
        for case in cases() {
            let what = format!("{} with {profile}", case.name);
            let applied = run_idempotent(&case.text, &plan, case.container, &what);
            let docs = documents(&applied.text);
            let workload = docs
                .iter()
                .position(|d| d["kind"] == case.kind)
                .unwrap_or_else(|| panic!("{what}: no {}\n{}", case.kind, applied.text));
            // The objects the claims name, each once, all before the workload.
            for (kind, name) in &w.objects {
                let found: Vec<usize> = docs
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| {
                        d["kind"] == kind.as_str() && d["metadata"]["name"] == name.as_str()
                    })
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(found.len(), 1, "{what}: {kind} {name}\n{}", applied.text);
                assert!(
                    found[0] < workload,
                    "{what}: the {kind} must come before the {}\n{}",
                    case.kind,
                    applied.text
                );
            }
            let added: Vec<(String, String)> = docs[..workload]
                .iter()
                .filter(|d| d["kind"] == "ComputeDomain" || d["kind"] == "ResourceClaimTemplate")
                .map(|d| {
                    (
                        d["kind"].as_str().unwrap().to_string(),
                        d["metadata"]["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert_eq!(added, w.objects, "{what}: in the plan's order");
            // The workload's namespace, where it states one.
            let ns = &docs[workload]["metadata"]["namespace"];
            for d in &docs[..workload] {
                if d["kind"] == "ComputeDomain" || d["kind"] == "ResourceClaimTemplate" {
                    assert_eq!(d["metadata"]["namespace"], *ns, "{what}: {d:#}");
                }
            }
            assert!(
                applied
                    .notes
                    .iter()
                    .any(|n| n.contains("ComputeDomain `") && n.contains("added before document")),
                "{what}: {:#?}",
                applied.notes
            );
            let doc = &docs[workload];
            for (pointer, container) in &case.workers {
                let t = at(doc, pointer);
                check_worker(&format!("{what} {pointer}"), t, *container, &w);
                to_validate.push(as_pod(&format!("{}-{}", case.name, to_validate.len()), t));
            }
            for pointer in &case.untouched {
                let t = at(doc, pointer);
                check_untouched(&format!("{what} {pointer}"), t, &w);
                to_validate.push(as_pod(&format!("{}-{}", case.name, to_validate.len()), t));
            }
            for d in &docs {
                match d["kind"].as_str() {
                    Some("ComputeDomain") => check_compute_domain(&what, d),
                    Some("MPIJob") => {
                        match consumers::crd_schema_strict(d, "mpi-operator-v2beta1.json") {
                            Ok(checked) => assert!(checked || !consumers::tools_required()),
                            Err(e) => panic!("{what}: {e}"),
                        }
                    }
                    _ if case.core => to_validate.push(d.clone()),
                    Some("ResourceClaimTemplate") => to_validate.push(d.clone()),
                    _ => {}
                }
            }
        }
        let input: Vec<String> = to_validate
            .iter()
            .map(|d| serde_json::to_string_pretty(d).unwrap())
            .collect();
        consumers::kubernetes_validate_strict(&input.join("\n---\n"), consumers::DRA_K8S_VERSIONS)
            .unwrap_or_else(|e| panic!("{profile}: {e}"));
    }
}

/// A TrainJob has no pod spec: no claims, no objects, a note pointing at its runtime.
#[test]
fn a_trainjob_gets_no_claims_and_a_note() {
    for profile in PROFILES {
        let plan = dra_plan(profile);
        let text = kind_fixture("trainjob.yaml");
        let applied = run_idempotent(&text, &plan, None, profile);
        assert!(
            !applied.text.contains("claims") && !applied.text.contains("ComputeDomain"),
            "{profile}\n{}",
            applied.text
        );
        assert!(
            applied
                .notes
                .iter()
                .any(|n| n.contains("TrainJob cannot carry DRA claims")),
            "{profile}: {:#?}",
            applied.notes
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// Merging with what is there.

const MERGE_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  labels:
    app: trainer
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources:
      limits:
        nvidia.com/gpu: 4
      claims:
      - name: scratch   # the user's own claim
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: node.coreweave.cloud/type
            operator: In
            values: [gb300-4x]
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            app: cache
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: topology.kubernetes.io/zone
          labelSelector:
            matchLabels:
              app: trainer
  resourceClaims:
  - name: scratch
    resourceClaimTemplateName: scratch-disk
";

#[test]
fn claims_and_affinity_merge_by_name_and_keep_what_the_user_wrote() {
    let plan = dra_plan(GB300_DRA);
    let w = want(&plan);
    let applied = run_idempotent(MERGE_POD, &plan, None, "merge");
    let docs = documents(&applied.text);
    let pod = docs.iter().find(|d| d["kind"] == "Pod").unwrap();
    assert_eq!(
        pod["spec"]["resourceClaims"],
        json!([
            {"name": "scratch", "resourceClaimTemplateName": "scratch-disk"},
            {"name": "compute-domain-channel",
             "resourceClaimTemplateName": "nccl-test-72-gb300-18n-dra-cd-channel"}
        ])
    );
    assert_eq!(
        names(&pod["spec"]["containers"][0]["resources"]["claims"]),
        ["scratch", "compute-domain-channel"]
    );
    let affinity = &pod["spec"]["affinity"];
    assert_eq!(
        affinity["nodeAffinity"],
        documents(MERGE_POD)[0]["spec"]["affinity"]["nodeAffinity"]
    );
    assert_eq!(
        affinity["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
        documents(MERGE_POD)[0]["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    );
    let required = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        .as_array()
        .unwrap();
    assert_eq!(required.len(), 2, "{required:#?}");
    assert_eq!(required[0]["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(required[1], w.term);
    assert_eq!(pod["metadata"]["labels"]["app"], "trainer");
    assert_eq!(
        pod["metadata"]["labels"]["metadata.coreweave.cloud/job"],
        "nccl-test"
    );
    // The user's lines keep their bytes, comment included.
    for line in MERGE_POD.lines() {
        assert!(
            applied.text.lines().any(|l| l == line),
            "{line:?} is gone:\n{}",
            applied.text
        );
    }
    // The notes say what was added.
    let said = applied.notes.join("\n");
    for part in [
        "`resourceClaims` compute-domain-channel",
        "container `main` lists compute-domain-channel",
        "required pod affinity on nvidia.com/gpu.clique",
        "label metadata.coreweave.cloud/job=nccl-test",
        "the ComputeDomain `nccl-test-72-gb300-18n-dra` added before document 1 (Pod)",
    ] {
        assert!(said.contains(part), "{part:?} not in:\n{said}");
    }
    consumers::kubernetes_validate_strict(
        &applied.text_without_crds(),
        consumers::DRA_K8S_VERSIONS,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Output documents other than the ComputeDomain (no schema for it in kubernetes-validate).
trait WithoutCrds {
    fn text_without_crds(&self) -> String;
}

impl WithoutCrds for Applied {
    fn text_without_crds(&self) -> String {
        let docs: Vec<String> = documents(&self.text)
            .into_iter()
            .filter(|d| d["kind"] != "ComputeDomain")
            .map(|d| serde_json::to_string_pretty(&d).unwrap())
            .collect();
        docs.join("\n---\n")
    }
}

/// A claim of the profile's name that names another template is corrected in place; a second one is
/// dropped; the container's entry of that name is kept as written (it may narrow the claim to a request).
#[test]
fn a_claim_of_the_same_name_is_corrected_never_duplicated() {
    let plan = dra_plan(GB300_DRA);
    let text = "\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: main
    image: x
    resources:
      claims:
      - name: compute-domain-channel
  resourceClaims:
  - name: compute-domain-channel
    resourceClaimTemplateName: old-channel   # hand-copied from another job
  - name: scratch
    resourceClaimTemplateName: scratch-disk
  - name: compute-domain-channel
    resourceClaimTemplateName: old-channel
";
    let applied = run_idempotent(text, &plan, None, "same name");
    let pod = &documents(&applied.text)[1];
    assert_eq!(
        pod["spec"]["resourceClaims"],
        json!([
            {"name": "compute-domain-channel",
             "resourceClaimTemplateName": "nccl-test-72-gb300-18n-dra-cd-channel"},
            {"name": "scratch", "resourceClaimTemplateName": "scratch-disk"}
        ]),
        "{}",
        applied.text
    );
    assert_eq!(
        names(&pod["spec"]["containers"][0]["resources"]["claims"]),
        ["compute-domain-channel"]
    );
    // Corrected in place: its comment stays on its line.
    assert!(
        applied.text.contains(
            "resourceClaimTemplateName: nccl-test-72-gb300-18n-dra-cd-channel   # hand-copied"
        ),
        "{}",
        applied.text
    );
    let said = applied.notes.join("\n");
    assert!(
        said.contains("now claims from template `nccl-test-72-gb300-18n-dra-cd-channel` (it named `old-channel`)")
            && said.contains("a second pod claim named compute-domain-channel dropped"),
        "{said}"
    );
}

/// The vendor's term written another way (matchLabels, keys in another order) is the same term.
#[test]
fn an_equivalent_affinity_term_is_not_added_again() {
    let plan = dra_plan(GB300_DRA);
    for term in [
        "      - labelSelector:\n          matchLabels:\n            metadata.coreweave.cloud/job: nccl-test\n        topologyKey: nvidia.com/gpu.clique\n",
        "      - topologyKey: nvidia.com/gpu.clique\n        labelSelector:\n          matchExpressions:\n          - {key: metadata.coreweave.cloud/job, operator: In, values: [nccl-test]}\n",
    ] {
        let text = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: main\n    image: x\n  \
             affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n{term}"
        );
        let applied = run_idempotent(&text, &plan, None, "equivalent term");
        let pod = &documents(&applied.text)[1];
        let terms = &pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
        assert_eq!(terms.as_array().unwrap().len(), 1, "{}", applied.text);
        assert!(applied.text.contains(term), "{}", applied.text);
    }
    // A term on the clique label that selects other pods is another term: the profile's is added.
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: main\n    image: x\n  \
                affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - topologyKey: \
                nvidia.com/gpu.clique\n        labelSelector:\n          matchLabels:\n            app: other\n";
    let applied = run(text, &plan);
    let pod = &documents(&applied.text)[1];
    assert_eq!(
        pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Kueue TAS annotations go into the worker templates' annotations, not the launcher's.
#[test]
fn kueue_topology_annotations_go_to_the_worker_templates() {
    let mut plan = dra_plan(GB300_DRA);
    plan.dra.annotations = vec![(
        roce_model::fabric::dra::KUEUE_REQUIRED_TOPOLOGY,
        "nvidia.com/gpu.clique".to_string(),
    )];
    let applied = run_idempotent(&kind_fixture("mpijob.yaml"), &plan, None, "kueue");
    let docs = documents(&applied.text);
    let job = docs.iter().find(|d| d["kind"] == "MPIJob").unwrap();
    let specs = &job["spec"]["mpiReplicaSpecs"];
    assert_eq!(
        specs["Worker"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"],
        "nvidia.com/gpu.clique"
    );
    assert!(
        specs["Launcher"]["template"]["metadata"]["annotations"]
            .get("kueue.x-k8s.io/podset-required-topology")
            .is_none()
    );
}

// ---------------------------------------------------------------------------------------------------------
// The objects the claims name.

/// The vendor's own DRA MPIJob already has the ComputeDomain (in `default`, the job in no namespace), the claim
/// and the affinity: apply adds none of them again.
#[test]
fn the_vendors_dra_job_gets_no_second_domain_claim_or_term() {
    let plan = dra_plan(GB300_DRA);
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/dra/coreweave-gb300-roce-nvl72-mpijob-dra.yaml"),
    )
    .unwrap();
    let applied = run_idempotent(&text, &plan, None, "vendor");
    let docs = documents(&applied.text);
    assert_eq!(
        docs.iter().filter(|d| d["kind"] == "ComputeDomain").count(),
        1
    );
    assert_eq!(
        docs[0],
        documents(&text)[0],
        "the ComputeDomain is untouched"
    );
    let worker = &docs[1]["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    assert_eq!(
        worker["spec"]["resourceClaims"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(
        !applied
            .notes
            .iter()
            .any(|n| n.contains("DRA wiring") || n.contains(" added ")),
        "{:#?}",
        applied.notes
    );
}

#[test]
fn an_existing_compute_domain_is_never_added_twice() {
    let plan = dra_plan(GB300_DRA);
    let job = kind_fixture("job.yaml");
    let domain = "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata:\n  name: nccl-test-72-gb300-18n-dra\n\
                  spec:\n  numNodes: 0\n  channel:\n    resourceClaimTemplate:\n      name: nccl-test-72-gb300-18n-dra-cd-channel\n";
    // Before or after the workload, in any API version of its group: it is there.
    for text in [
        format!("{domain}---\n{job}"),
        format!("{job}---\n{domain}"),
        format!("{}---\n{job}", domain.replace("v1beta1", "v1")),
    ] {
        let applied = run_idempotent(&text, &plan, None, "existing domain");
        let docs = documents(&applied.text);
        assert_eq!(
            docs.iter().filter(|d| d["kind"] == "ComputeDomain").count(),
            1,
            "{}",
            applied.text
        );
        assert!(applied.text.contains(domain.lines().nth(3).unwrap()));
        assert!(!applied.notes.iter().any(|n| n.contains("another `spec`")));
    }
    // One that says something else is left as written, with a note.
    let other = domain.replace("numNodes: 0", "numNodes: 18");
    let applied = run_idempotent(&format!("{other}---\n{job}"), &plan, None, "other spec");
    assert_eq!(
        documents(&applied.text)
            .iter()
            .filter(|d| d["kind"] == "ComputeDomain")
            .count(),
        1
    );
    assert!(applied.text.starts_with(&other), "{}", applied.text);
    assert!(
        applied.notes.iter().any(|n| n.contains(
            "the ComputeDomain `nccl-test-72-gb300-18n-dra` in document 1 has another `spec`"
        )),
        "{:#?}",
        applied.notes
    );
    // In another namespace than the workload's, it is another object: the workload's gets its own.
    let elsewhere = domain.replace(
        "  name: nccl-test-72-gb300-18n-dra\n",
        "  name: nccl-test-72-gb300-18n-dra\n  namespace: other\n",
    );
    let in_ns = job.replace(
        "  name: allreduce\n",
        "  name: allreduce\n  namespace: train\n",
    );
    let applied = run_idempotent(
        &format!("{elsewhere}---\n{in_ns}"),
        &plan,
        None,
        "namespaces",
    );
    let namespaces: Vec<Value> = documents(&applied.text)
        .iter()
        .filter(|d| d["kind"] == "ComputeDomain")
        .map(|d| d["metadata"]["namespace"].clone())
        .collect();
    assert_eq!(namespaces, [json!("other"), json!("train")]);
}

/// Several workloads: the objects go once, before the first that claims them, after the `---` of that
/// document and before its leading comment; the documents before it keep their bytes.
#[test]
fn the_objects_go_before_the_first_claiming_document_once() {
    let plan = dra_plan(DRANET);
    let config =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n";
    let job = kind_fixture("job.yaml");
    let text = format!(
        "# header of the file\n{config}---\n# the training job\n{job}---\n{}",
        kind_fixture("pod.yaml")
    );
    let applied = run_idempotent(&text, &plan, None, "several");
    let prefix = format!("# header of the file\n{config}---\n");
    assert!(applied.text.starts_with(&prefix), "{}", applied.text);
    let rest = &applied.text[prefix.len()..];
    assert!(
        rest.starts_with("apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\n"),
        "{rest}"
    );
    let kinds: Vec<String> = documents(&applied.text)
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "ConfigMap",
            "ComputeDomain",
            "ResourceClaimTemplate",
            "Job",
            "Pod"
        ]
    );
    assert!(
        rest.contains("---\n# the training job\napiVersion: batch/v1\n"),
        "{rest}"
    );
    // Every input line is still there: only lines were added or changed in the workloads.
    let out: Vec<&str> = applied.text.lines().collect();
    for line in config
        .lines()
        .chain(["# header of the file", "# the training job"])
    {
        assert!(out.contains(&line), "{line:?}");
    }
    consumers::kubernetes_validate_strict(
        &applied.text_without_crds(),
        consumers::DRA_K8S_VERSIONS,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_crlf_file_without_a_final_newline_gets_crlf_documents() {
    let plan = dra_plan(GB300_DRA);
    let text = kind_fixture("job.yaml").replace('\n', "\r\n");
    let text = text.trim_end().to_string();
    let applied = run_idempotent(&text, &plan, None, "crlf");
    assert!(
        applied
            .text
            .starts_with("apiVersion: resource.nvidia.com/v1beta1\r\nkind: ComputeDomain\r\n"),
        "{:?}",
        applied.text
    );
    assert!(
        !applied.text.replace("\r\n", "").contains('\n'),
        "{:?}",
        applied.text
    );
    assert_eq!(documents(&applied.text).len(), 2);
}

/// A `List` stays one document: the objects become items before the first item that claims them.
#[test]
fn a_list_gets_the_objects_as_items_before_the_first_claiming_item() {
    for profile in PROFILES {
        let plan = dra_plan(profile);
        let w = want(&plan);
        let text = "\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data:
    a: \"1\"
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: first
  spec:
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main   # the first job
          image: x
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: second
  spec:
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: x
";
        let applied = run_idempotent(text, &plan, None, profile);
        let docs = documents(&applied.text);
        assert_eq!(docs.len(), 1, "{profile}: still one document");
        let items = docs[0]["items"].as_array().unwrap();
        let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
        let mut expected = vec!["ConfigMap"];
        expected.extend(w.objects.iter().map(|(k, _)| k.as_str()));
        expected.extend(["Job", "Job"]);
        assert_eq!(kinds, expected, "{profile}\n{}", applied.text);
        for job in &items[items.len() - 2..] {
            check_worker(profile, &job["spec"]["template"], 0, &w);
        }
        // The wired jobs are edited in place, their comments kept.
        assert!(
            applied.text.contains("- name: main   # the first job"),
            "{}",
            applied.text
        );
        assert!(
            applied
                .notes
                .iter()
                .any(|n| n.contains("added to the List (document 1) before its item 2 (Job)")),
            "{:#?}",
            applied.notes
        );
        // kubernetes-validate has no schema for `List` itself: its items are checked.
        let core: Vec<String> = items
            .iter()
            .filter(|i| i["kind"] != "ComputeDomain")
            .map(|i| serde_json::to_string_pretty(i).unwrap())
            .collect();
        consumers::kubernetes_validate_strict(&core.join("\n---\n"), consumers::DRA_K8S_VERSIONS)
            .unwrap_or_else(|e| panic!("{profile}: {e}"));
        for i in items.iter().filter(|i| i["kind"] == "ComputeDomain") {
            check_compute_domain(profile, i);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// GPUs from the claim, and malformed fields.

/// dranet's claim brings the GPUs: apply requests no `nvidia.com/gpu`, and says so where one is requested.
#[test]
fn gpus_a_claim_allocates_are_not_requested_again() {
    let plan = dra_plan(DRANET);
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: main\n    image: x\n";
    let applied = run(text, &plan);
    assert!(
        !applied.text.contains("nvidia.com/gpu:"),
        "{}",
        applied.text
    );
    let pod = &documents(&applied.text)[2];
    assert_eq!(
        names(&pod["spec"]["containers"][0]["resources"]["claims"]),
        ["gpu-nic", "compute-domain-channel"]
    );
    let applied = run(&kind_fixture("job.yaml"), &plan);
    assert!(
        applied.notes.iter().any(|n| n
            .contains("requests nvidia.com/gpu, but the profile's DRA claim allocates the GPUs")),
        "{:#?}",
        applied.notes
    );
}

/// Each malformed field apply would merge into is refused with `roce::lint::shape` at its value (a scalar)
/// or its key, with a help, and nothing is applied.
#[test]
fn malformed_dra_fields_are_refused_where_they_are() {
    let plan = dra_plan(GB300_DRA);
    let base = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  labels: LABELS\nspec:\n  containers:\n  - name: main\n    \
                image: x\n    resources:\n      claims: CLAIMS\n  resourceClaims: RC\n  affinity: AFF\n";
    let ok = [
        ("LABELS", "{}"),
        ("CLAIMS", "[]"),
        ("RC", "[]"),
        ("AFF", "{}"),
    ];
    let fill = |bad: &str, with: &str| {
        ok.iter().fold(base.to_string(), |t, (k, v)| {
            t.replace(k, if *k == bad { with } else { v })
        })
    };
    // The base with every field well formed applies.
    run(&fill("", ""), &plan);
    // (placeholder, malformed value, the line it is on, where on it the problem points, message)
    for (field, bad, line_start, marker, message) in [
        (
            "LABELS",
            "app",
            "  labels:",
            "app",
            "`labels` of the Pod is a string, but Kubernetes expects a mapping",
        ),
        (
            "CLAIMS",
            "{name: x}",
            "      claims:",
            "claims:",
            "`claims` of container `main` of the Pod is a map, but Kubernetes expects a list",
        ),
        (
            "RC",
            "compute-domain-channel",
            "  resourceClaims:",
            "compute-domain-channel",
            "`resourceClaims` of the Pod is a string, but Kubernetes expects a list",
        ),
        (
            "RC",
            "[x]",
            "  resourceClaims:",
            "x]",
            "an item of `resourceClaims` in the Pod is a string, not a mapping",
        ),
        (
            "RC",
            "[{name: [a]}]",
            "  resourceClaims:",
            "name:",
            "`name` of the Pod is a list, but Kubernetes expects a string",
        ),
        (
            "AFF",
            "[]",
            "  affinity:",
            "affinity:",
            "`affinity` of the Pod is a list, but Kubernetes expects a mapping",
        ),
        (
            "AFF",
            "{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: x}}",
            "  affinity:",
            "x}}",
            "`requiredDuringSchedulingIgnoredDuringExecution` of the Pod is a string, but Kubernetes expects a list",
        ),
    ] {
        let text = fill(field, bad);
        let problems = apply(
            &Source::new("in.yaml", text.clone()),
            &plan,
            &ApplyOptions::default(),
        )
        .expect_err(&text);
        assert_eq!(problems.len(), 1, "{text}\n{}", describe(&problems));
        let p = &problems[0];
        assert_eq!(p.code, Code::LintShape, "{text}");
        assert_eq!(p.message, message, "{text}");
        assert!(
            p.help
                .as_deref()
                .is_some_and(|h| h.contains("kubectl explain")),
            "{p:?}"
        );
        let record = roce_model::problem::ProblemRecord::from(p);
        let (n, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.starts_with(line_start))
            .unwrap();
        assert_eq!(record.line, Some(n + 1), "{text}\n{p:?}");
        assert_eq!(
            record.column,
            line.find(marker).map(|c| c + 1),
            "{text}\n{p:?}"
        );
    }
}
