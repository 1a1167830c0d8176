//! Where the pod templates of a workload are: one table of kinds and the paths to their templates.
//!
//! Discovery works on any tree that implements [`Tree`] — the spanned [`Node`] that `roce lint` reads and
//! the [`Yaml`] value `roce apply` rewrites — so both commands find exactly the same templates.

use std::borrow::Cow;

use roce_model::plumbing::tree::{Node, Scalar, Value};

pub use super::controllers::Added;
use super::controllers::{
    DYNAMO_SHM, KSERVE_DATA_PARALLEL, KSERVE_SINGLE, NIM_SERVICE, RAY, SLURMD,
    TRAINER_MPI_LAUNCHER, TRAINER_MPI_NODE,
};
use crate::yaml::Yaml;

/// Read access to a YAML tree, enough to find pod templates.
pub(crate) trait Tree: Sized {
    /// The value under `key` of a mapping.
    fn get(&self, key: &str) -> Option<&Self>;
    /// The keys and values of a mapping, in order (empty for anything else).
    fn entries(&self) -> Vec<(&str, &Self)>;
    /// The items of a sequence.
    fn items(&self) -> Option<&[Self]>;
    /// The text of a string scalar.
    fn text(&self) -> Option<&str>;
    /// The text of a string or number scalar, as written.
    fn scalar(&self) -> Option<Cow<'_, str>>;
    /// The value of a boolean scalar.
    fn boolean(&self) -> Option<bool>;
    /// Is this a mapping?
    fn is_map(&self) -> bool;
}

impl Tree for Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|e| e.key.value == key).map(|e| &e.node),
            _ => None,
        }
    }
    fn entries(&self) -> Vec<(&str, &Node)> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .map(|e| (e.key.value.as_str(), &e.node))
                .collect(),
            _ => Vec::new(),
        }
    }
    fn items(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }
    fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }
    fn scalar(&self) -> Option<Cow<'_, str>> {
        match &self.value {
            Value::Scalar(Scalar::Str(s)) => Some(Cow::Borrowed(s)),
            Value::Scalar(Scalar::Int(i)) => Some(Cow::Owned(i.to_string())),
            Value::Scalar(Scalar::Float(f)) => Some(Cow::Owned(f.to_string())),
            _ => None,
        }
    }
    fn boolean(&self) -> Option<bool> {
        match self.value {
            Value::Scalar(Scalar::Bool(b)) => Some(b),
            _ => None,
        }
    }
    fn is_map(&self) -> bool {
        matches!(self.value, Value::Map(_))
    }
}

impl Tree for Yaml {
    fn get(&self, key: &str) -> Option<&Yaml> {
        Yaml::get(self, key)
    }
    fn entries(&self) -> Vec<(&str, &Yaml)> {
        match self {
            Yaml::Map(entries) => entries.iter().map(|(k, v)| (k.as_ref(), v)).collect(),
            _ => Vec::new(),
        }
    }
    fn items(&self) -> Option<&[Yaml]> {
        match self {
            Yaml::Seq(items) => Some(items),
            _ => None,
        }
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn scalar(&self) -> Option<Cow<'_, str>> {
        match self {
            Yaml::Raw(s) => Some(Cow::Borrowed(s)),
            Yaml::Int(i) => Some(Cow::Owned(i.to_string())),
            _ => self.as_str().map(Cow::Borrowed),
        }
    }
    fn boolean(&self) -> Option<bool> {
        match self {
            Yaml::Bool(b) => Some(*b),
            Yaml::Raw(s) => s.parse().ok(),
            _ => None,
        }
    }
    fn is_map(&self) -> bool {
        matches!(self, Yaml::Map(_))
    }
}

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// Follow `path` from `root`.
pub(crate) fn at<'a, T: Tree>(root: &'a T, path: &[Step]) -> Option<&'a T> {
    path.iter().try_fold(root, |node, step| match step {
        Step::Key(k) => node.get(k),
        Step::Index(i) => node.items()?.get(*i),
    })
}

/// Follow `path` from `root`, mutably.
pub(crate) fn at_mut<'a>(root: &'a mut Yaml, path: &[Step]) -> Option<&'a mut Yaml> {
    path.iter().try_fold(root, |node, step| match (step, node) {
        (Step::Key(k), Yaml::Map(entries)) => {
            entries.iter_mut().find(|(key, _)| key == k).map(|(_, v)| v)
        }
        (Step::Index(i), Yaml::Seq(items)) => items.get_mut(*i),
        _ => None,
    })
}

/// What a pod template is for, which decides what `roce apply` adds to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A pod that runs ranks: it gets the whole wiring.
    Worker,
    /// An MPI launcher: it runs `mpirun` and no rank, so it gets env (and `mpirun -x`) only.
    Launcher,
    /// A pod that moves no tensors over the fabric (an inference router, a gateway, a scheduler): it gets no
    /// wiring, and only the checks that hold for every pod.
    Router,
}

/// The shape of the object at a template's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// A Pod or a PodTemplateSpec: `metadata` and `spec` (with `containers`).
    Pod,
    /// A Kubeflow Trainer `TrainJob`'s `spec.trainer`: `env` and `resourcesPerNode` only; pod-level
    /// settings belong to its TrainingRuntime.
    Trainer,
    /// A bare PodSpec (`containers`, `volumes`, … with no `metadata`), as KServe's LLMInferenceService
    /// keeps its `template` and `worker`: no annotations can be written there.
    Spec,
}

/// One pod template found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Path from the document root to the template (empty for a Pod).
    pub path: Vec<Step>,
    /// Its shape.
    pub form: Form,
    /// What it is for.
    pub role: Role,
    /// How to name it in messages: `MPIJob launcher`, `JobSet replicatedJob workers`, …
    pub label: String,
    /// Found by its shape in a kind roce has no table entry for (`generic`).
    pub generic: bool,
    /// Where the wired container is when the kind keeps it outside the pod spec (a NodeSet's
    /// `spec.slurmd`, which its operator makes the pod's first container): the template's `spec` then need
    /// not have `containers`.
    pub container: Option<Vec<Step>>,
    /// What the kind's controller adds to the pod.
    pub added: Added,
}

/// Why a document of a known kind has no template where one must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The deepest path that exists.
    pub found: Vec<Step>,
    /// The field that is missing or not a mapping, as a dotted path (`spec.template`).
    pub want: String,
}

/// Kubeflow v1 jobs (and MPIJob v2beta1) keep their templates under `spec.<x>ReplicaSpecs.<Type>`.
const REPLICA_SPEC_KINDS: &[&str] = &[
    "MPIJob",
    "PyTorchJob",
    "TFJob",
    "XGBoostJob",
    "PaddleJob",
    "JAXJob",
];

/// Kinds whose pod template sits at `spec.template`.
const SPEC_TEMPLATE_KINDS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
];

/// JobSet replicated jobs that only download data or models: no rank runs there (Kubeflow Trainer's
/// initializers), so they get no wiring.
const INITIALIZER_JOBS: &[&str] = &["dataset-initializer", "model-initializer"];

/// Every kind `roce apply` and `roce lint` know, for messages and docs.
pub(crate) const KINDS: &[&str] = &[
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "MPIJob",
    "PyTorchJob",
    "TFJob",
    "XGBoostJob",
    "PaddleJob",
    "JAXJob",
    "JobSet",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
    "TrainJob",
    "LeaderWorkerSet",
    "RayCluster",
    "RayJob",
    "NodeSet",
    "List",
];

/// The pod templates of one document, or `None` for a kind roce does not know (left alone).
pub(crate) fn discover<T: Tree>(doc: &T) -> Option<(Vec<Template>, Vec<Missing>)> {
    let kind = doc.get("kind")?.text()?;
    let mut out = Found::default();
    if of_other_group(doc, kind) {
        let found = generic(doc);
        return (!found.is_empty()).then(|| (found, Vec::new()));
    }
    match kind {
        "Pod" => out.template(doc, Vec::new(), Role::Worker, "Pod".into()),
        "List" => out.list(doc),
        k if SPEC_TEMPLATE_KINDS.contains(&k) => {
            out.require(doc, &[], &["spec", "template"], Role::Worker, k.to_string());
        }
        "CronJob" => out.require(
            doc,
            &[],
            &["spec", "jobTemplate", "spec", "template"],
            Role::Worker,
            "CronJob".into(),
        ),
        k if REPLICA_SPEC_KINDS.contains(&k) => out.replica_specs(doc, k),
        "JobSet" => out.jobset(doc, &["spec"], "JobSet"),
        "TrainingRuntime" | "ClusterTrainingRuntime" => {
            out.jobset(doc, &["spec", "template", "spec"], kind)
        }
        "TrainJob" => out.trainer(doc),
        "LeaderWorkerSet" => out.leader_worker_set(doc),
        "RayCluster" => out.ray(doc, &["spec"]),
        "RayJob" => out.ray(doc, &["spec", "rayClusterSpec"]),
        "NodeSet" if api_group(doc) == Some(SLINKY_GROUP) => out.nodeset(doc),
        "NIMService" if api_group(doc) == Some(NIM_GROUP) => out.nim_service(doc),
        "LLMInferenceService" if api_group(doc) == Some(KSERVE_GROUP) => {
            out.templates = llm_inference_service(doc);
        }
        "DynamoGraphDeployment" | "DynamoComponentDeployment"
            if api_group(doc) == Some(DYNAMO_GROUP) =>
        {
            out.templates = dynamo(doc);
        }
        _ if FABRIC_KINDS.contains(&kind) => return None,
        _ => {
            let found = generic(doc);
            if found.is_empty() {
                return None;
            }
            out.templates = found;
        }
    }
    Some(out.done())
}

/// Slinky's API group (slurm-operator's NodeSet).
const SLINKY_GROUP: &str = "slinky.slurm.net";
/// The NIM operator's API group (NIMService, NIMCache).
const NIM_GROUP: &str = "apps.nvidia.com";
/// KServe's API group (LLMInferenceService).
const KSERVE_GROUP: &str = "serving.kserve.io";
/// Dynamo's API group (DynamoGraphDeployment, DynamoComponentDeployment).
const DYNAMO_GROUP: &str = "nvidia.com";

/// The API group of a document's `apiVersion` (`""` for the core group).
fn api_group<T: Tree>(doc: &T) -> Option<&str> {
    doc.get("apiVersion")
        .and_then(Tree::text)
        .map(|v| v.rsplit_once('/').map_or("", |(g, _)| g))
}

/// Whether a Kubernetes kind's name is another API group's kind: searched generically, not by the
/// built-in kind's layout.
fn of_other_group<T: Tree>(doc: &T, kind: &str) -> bool {
    // Kubernetes' own kinds by their API group: a Volcano `Job` (batch.volcano.sh) is not a batch/v1 Job.
    let group = api_group(doc);
    let core_group = match kind {
        "Pod" | "List" => Some(""),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => Some("apps"),
        "Job" | "CronJob" => Some("batch"),
        _ => None,
    };
    matches!((core_group, group), (Some(want), Some(have)) if want != have)
}

/// Kinds that configure the fabric rather than run on it: never searched for pod templates (a NicClusterPolicy
/// holds the operator's own DaemonSet images, not a workload).
pub const FABRIC_KINDS: &[&str] = &[
    "NetworkAttachmentDefinition",
    "SriovNetwork",
    "SriovIBNetwork",
    "SriovNetworkNodePolicy",
    "SriovNetworkPoolConfig",
    "OVSNetwork",
    "HostDeviceNetwork",
    "IPoIBNetwork",
    "MacvlanNetwork",
    "NicClusterPolicy",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ComputeDomain",
    "ConfigMap",
    "Secret",
    "Service",
    "Namespace",
    "CustomResourceDefinition",
];

/// Inference and serving kinds whose pod templates the shape search finds, with where they are and what
/// their roles are (tests/fixtures/corpus/inference-kinds.md cites a public sample of each). A kind not
/// listed here is read the same way, and lint says so.
pub(crate) const INFERENCE_KINDS: &[(&str, &str)] = &[
    (
        "RoleBasedGroup",
        "spec.roles[].template | .standalonePattern.template | .leaderWorkerPattern.template: router, prefill, decode, KV store (a role's leader/worker template patches merged onto it make the leader and worker pods: `patches`)",
    ),
    (
        "LLMInferenceService",
        "spec.template, spec.worker, spec.prefill.template, spec.prefill.worker: decode and prefill leaders and workers (PodSpecs merged with KServe's presets: /dev/shm, and IPC_LOCK for data-parallel workers)",
    ),
    (
        "DynamoGraphDeployment",
        "v1alpha1: spec.services.<name>.extraPodSpec (container .mainContainer); v1beta1: spec.components[].podTemplate: Frontend (router), prefill and decode workers; the operator's /dev/shm unless sharedMemory turns it off",
    ),
    (
        "DynamoComponentDeployment",
        "as a DynamoGraphDeployment's one component: spec.extraPodSpec (v1alpha1), spec.podTemplate (v1beta1)",
    ),
    (
        "NIMService",
        "spec itself (image, env, resources; annotations, nodeSelector): the NIM's pods, a multi-node NIM's leader and workers alike; the operator's /dev/shm",
    ),
    (
        "StormService",
        "spec.template.spec.roles[].template: routing, prefill, decode",
    ),
    (
        "RayClusterFleet",
        "spec.template.spec.headGroupSpec.template, .workerGroupSpecs[].template: Ray head and workers",
    ),
    (
        "ClusterServingRuntime",
        "spec.engineConfig, .decoderConfig (and .leader, .worker; container .runner), spec.routerConfig: engine, decoder, router",
    ),
    ("ServingRuntime", "as ClusterServingRuntime"),
    (
        "DisaggregatedSet",
        "spec.roles[].spec.leaderWorkerTemplate.leaderTemplate | .workerTemplate: prefill, decode",
    ),
    (
        "InferenceService",
        "spec.predictor (PodSpec fields inline): the model server",
    ),
];

/// Is `kind` one of `INFERENCE_KINDS` (or a kind with its own table entry)?
pub fn known_kind(kind: &str) -> bool {
    KINDS.contains(&kind) || INFERENCE_KINDS.iter().any(|(k, _)| *k == kind)
}

/// Role names that move no tensors over the fabric, as the inference stacks name them (SGLang's RBG and
/// OME `router`, llm-d's `epp`, Dynamo's `Frontend`, AIBrix's `routing`/`gateway`).
const ROUTER_NAMES: &[&str] = &[
    "router",
    "frontend",
    "gateway",
    "proxy",
    "epp",
    "scheduler",
    "routing",
    "planner",
    "api",
];

/// Does a role named `name` move no tensors (a router)? Whole words of the name only (`decode-router`
/// yes, `prefill` no).
pub(crate) fn router_name(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| {
            ROUTER_NAMES
                .iter()
                .any(|r| w == *r || (r.len() > 3 && w.starts_with(r)))
        })
}

/// Every PodSpec-shaped object in a document of a kind with no table entry: a mapping with a `containers`
/// list whose items are mappings with a `name` (Kubernetes' PodSpec and its containers' key). Under a `spec` key whose parent is a mapping, the parent is the template (a PodTemplateSpec:
/// `metadata` and `spec`); anywhere else the PodSpec itself is ([`Form::Spec`]). The role comes from the
/// nearest name on the path: a `name`/`groupName`/`role` field of a list item, else the key.
pub(crate) fn generic<T: Tree>(doc: &T) -> Vec<Template> {
    let kind = doc.get("kind").and_then(Tree::text).unwrap_or("object");
    let mut out = Vec::new();
    let mut path = Vec::new();
    walk(doc, doc, &mut path, kind, &mut out, 0);
    out
}

/// A step of the path [`walk`] is on, borrowed from the document: most paths lead to no template.
#[derive(Clone, Copy)]
enum At<'t> {
    Key(&'t str),
    Index(usize),
}

impl At<'_> {
    fn step(self) -> Step {
        match self {
            At::Key(k) => Step::Key(k.to_owned()),
            At::Index(i) => Step::Index(i),
        }
    }
}

/// Deep enough for any CRD nesting seen (AIBrix's StormService: spec.template.spec.roles[].template.spec).
const GENERIC_DEPTH: usize = 24;

fn walk<'t, T: Tree>(
    doc: &T,
    node: &'t T,
    path: &mut Vec<At<'t>>,
    kind: &str,
    out: &mut Vec<Template>,
    depth: usize,
) {
    if depth > GENERIC_DEPTH {
        return;
    }
    if node.is_map() && is_pod_spec(node) && !path.is_empty() {
        let (tpath, form) = match path.split_last() {
            Some((At::Key("spec"), parent)) if !parent.is_empty() => (parent, Form::Pod),
            _ => (&path[..], Form::Spec),
        };
        let tpath: Vec<Step> = tpath.iter().map(|s| s.step()).collect();
        let name = role_name(doc, &tpath);
        let role = if router_name(&name) {
            Role::Router
        } else if name.eq_ignore_ascii_case("launcher") {
            Role::Launcher
        } else {
            Role::Worker
        };
        out.push(Template {
            label: format!("{kind} {name} ({})", dotted(&tpath)),
            path: tpath,
            form,
            role,
            generic: true,
            container: None,
            added: Added::NOTHING,
        });
        return;
    }
    if let Some(items) = node.items() {
        for (i, item) in items.iter().enumerate() {
            path.push(At::Index(i));
            walk(doc, item, path, kind, out, depth + 1);
            path.pop();
        }
    } else if node.is_map() {
        for (key, child) in node.entries() {
            // `status` is written by the controller; `metadata` holds no pod.
            // A template patch is read where lint merged it onto its template (`patches`), and a template
            // the patches make every pod of is not read alone.
            if (depth == 0 && matches!(key, "status" | "metadata"))
                || (template_patch(key) && child.get(MERGED).is_none())
                || child.get(PATCHED).is_some()
            {
                continue;
            }
            path.push(At::Key(key));
            walk(doc, child, path, kind, out, depth + 1);
            path.pop();
        }
    }
}

/// A Dynamo graph's (or component's) pod templates, found by their shape (`v1alpha1`:
/// `spec.services.<name>.extraPodSpec` with its `mainContainer`; `v1beta1`: `spec.components[].podTemplate`),
/// each with the operator's /dev/shm ([`DYNAMO_SHM`]) unless its component turns it off.
fn dynamo<T: Tree>(doc: &T) -> Vec<Template> {
    let mut found = generic(doc);
    for t in &mut found {
        let component = t.path.split_last().and_then(|(_, parent)| at(doc, parent));
        let off = component.is_some_and(|c| {
            let disabled = c
                .get("sharedMemory")
                .and_then(|m| m.get("disabled"))
                .and_then(Tree::boolean)
                .unwrap_or(false);
            let zero = c
                .get("sharedMemorySize")
                .and_then(Tree::scalar)
                .is_some_and(|q| zero_quantity(&q));
            disabled || zero
        });
        if !off {
            t.added = DYNAMO_SHM;
        }
    }
    found
}

/// An LLMInferenceService's pod specs, found by their shape, each with what KServe's preset for its role
/// adds ([`KSERVE_SINGLE`], [`KSERVE_DATA_PARALLEL`]); unknown where the user names configs of their own
/// (`spec.baseRefs`) or a role has workers without data parallelism (a pipeline-parallel preset).
fn llm_inference_service<T: Tree>(doc: &T) -> Vec<Template> {
    let mut found = generic(doc);
    let spec = doc.get("spec");
    let own_configs = spec
        .and_then(|s| s.get("baseRefs"))
        .and_then(Tree::items)
        .is_some_and(|r| !r.is_empty());
    for t in &mut found {
        if t.role == Role::Router {
            continue;
        }
        let prefill = matches!(t.path.get(1), Some(Step::Key(k)) if k == "prefill");
        let role = if prefill {
            spec.and_then(|s| s.get("prefill"))
        } else {
            spec
        };
        let workers = role.and_then(|r| r.get("worker")).is_some_and(Tree::is_map);
        let data = role.and_then(|r| r.get("parallelism")).is_some_and(|p| {
            ["data", "dataLocal"].iter().any(|k| {
                p.get(k)
                    .and_then(Tree::scalar)
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
        });
        t.added = match (workers, data) {
            (false, _) => KSERVE_SINGLE,
            (true, true) => KSERVE_DATA_PARALLEL,
            (true, false) => Added {
                unknown: true,
                ..KSERVE_SINGLE
            },
        };
        t.added.unknown |= own_configs;
    }
    found
}

/// A Kubernetes quantity that is zero (`0`, `"0"`, `0Gi`, `0.0`): the number before its suffix.
fn zero_quantity(q: &str) -> bool {
    let number = q.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic());
    number.parse::<f64>().is_ok_and(|n| n == 0.0)
}

/// Marks a template patch replaced by the pod it makes (the template with the patch merged): the template
/// search reads it as a template. Not a key YAML can hold unquoted, and never written out.
pub(crate) const MERGED: &str = "\u{0}roce:merged";
/// Marks a template every one of whose pods is made by a patch (a leader's and a worker's): the search
/// leaves it out, the merged patches stand for its pods.
pub(crate) const PATCHED: &str = "\u{0}roce:patched";

/// A field that holds a patch of another template, not a pod: the controller merges it onto the template
/// it names, and the pods it builds are the merged result. SGLang's RoleBasedGroup merges
/// `leaderWorkerSet.patchLeaderTemplate` / `patchWorkerTemplate` onto the role's `template` with a strategic
/// merge patch (sgl-project/rbg `patchPodTemplate(role.Template, role.LeaderWorkerSet.PatchLeaderTemplate)`),
/// `v1alpha2` calls them `leaderTemplatePatch` / `workerTemplatePatch`, and a role's `templatePatch` is
/// merged the same way. The template they patch is read, and it holds what every pod of the role shares
/// (devices, volumes, security context); what a patch alone sets (a leader's command, labels) is not judged.
pub(crate) fn template_patch(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    (lower.starts_with("patch") && lower.ends_with("template")) || lower.ends_with("templatepatch")
}

/// `containers: [{name, …}, …]` (at least one item, every item a mapping with a `name`). The image may be
/// missing: an inference controller fills it from a preset (KServe's LLMInferenceService).
fn is_pod_spec<T: Tree>(node: &T) -> bool {
    node.get("containers")
        .and_then(Tree::items)
        .is_some_and(|cs| {
            !cs.is_empty() && cs.iter().all(|c| c.is_map() && c.get("name").is_some())
        })
        || main_container(node).is_some()
}

/// Keys under which an inference CRD keeps the one container of its pod spec: Dynamo's
/// `extraPodSpec.mainContainer` (DynamoGraphDeployment), OME's `runner` (ServingRuntime `engineConfig`,
/// `decoderConfig`, `routerConfig`, and their `leader`/`worker`).
pub(crate) const MAIN_CONTAINER_KEYS: &[&str] = &["mainContainer", "runner"];

/// The main container of a pod spec kept under one of [`MAIN_CONTAINER_KEYS`] (a mapping that runs
/// something: `image`, `command` or `args`), with its key.
pub(crate) fn main_container<T: Tree>(node: &T) -> Option<(&'static str, &T)> {
    MAIN_CONTAINER_KEYS.iter().find_map(|k| {
        let c = node.get(k).filter(|c| c.is_map())?;
        ["image", "command", "args"]
            .iter()
            .any(|f| c.get(f).is_some())
            .then_some((*k, c))
    })
}

/// The role a template at `path` plays, by the nearest name: a list item's `name`, `groupName` or `role`,
/// else the nearest key that is not a structural one (`template`, `spec`, `podTemplate`, …).
fn role_name<T: Tree>(doc: &T, path: &[Step]) -> String {
    const STRUCTURAL: &[&str] = &[
        "template",
        "spec",
        "podTemplate",
        "podSpec",
        "extraPodSpec",
        "leaderWorkerTemplate",
        "leaderWorkerSet",
        "workerTemplate",
    ];
    for end in (1..=path.len()).rev() {
        match &path[end - 1] {
            Step::Index(_) => {
                let named = at(doc, &path[..end]).and_then(|item| {
                    ["name", "groupName", "role"]
                        .iter()
                        .find_map(|k| item.get(k).and_then(Tree::text))
                });
                if let Some(n) = named {
                    return n.to_string();
                }
            }
            Step::Key(k) if !STRUCTURAL.contains(&k.as_str()) => return k.clone(),
            Step::Key(_) => {}
        }
    }
    "pod".to_string()
}

#[derive(Default)]
struct Found {
    templates: Vec<Template>,
    missing: Vec<Missing>,
}

impl Found {
    fn done(self) -> (Vec<Template>, Vec<Missing>) {
        (self.templates, self.missing)
    }

    fn template<T: Tree>(&mut self, doc: &T, path: Vec<Step>, role: Role, label: String) {
        match at(doc, &path) {
            Some(t) if t.is_map() => self.templates.push(Template {
                path,
                form: Form::Pod,
                role,
                label,
                generic: false,
                container: None,
                added: Added::NOTHING,
            }),
            _ => self.missing.push(Missing {
                want: dotted(&path),
                found: path,
            }),
        }
    }

    /// The mapping at `base` + `rest`, or a [`Missing`] for the first step that is absent.
    fn map_at<'a, T: Tree>(&mut self, doc: &'a T, base: &[Step], rest: &[&str]) -> Option<&'a T> {
        let mut path = base.to_vec();
        let mut node = at(doc, base)?;
        for key in rest {
            path.push(Step::Key((*key).to_string()));
            match node.get(key) {
                Some(next) if next.is_map() => node = next,
                _ => {
                    self.missing.push(Missing {
                        want: dotted(&path),
                        found: path,
                    });
                    return None;
                }
            }
        }
        Some(node)
    }

    fn require<T: Tree>(
        &mut self,
        doc: &T,
        base: &[Step],
        rest: &[&str],
        role: Role,
        label: String,
    ) {
        if self.map_at(doc, base, rest).is_some() {
            let mut path = base.to_vec();
            path.extend(rest.iter().map(|k| Step::Key((*k).to_string())));
            self.templates.push(Template {
                path,
                form: Form::Pod,
                role,
                label,
                generic: false,
                container: None,
                added: Added::NOTHING,
            });
        }
    }

    /// A `List`'s items, each discovered as a document of its own, their paths under `items[i]`.
    fn list<T: Tree>(&mut self, doc: &T) {
        for (i, item) in doc
            .get("items")
            .and_then(Tree::items)
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if let Some((found, missing)) = discover(item) {
                let prefix = [Step::Key("items".into()), Step::Index(i)];
                self.templates.extend(found.into_iter().map(|mut t| {
                    t.path.splice(0..0, prefix.iter().cloned());
                    t
                }));
                self.missing.extend(missing.into_iter().map(|mut m| {
                    m.found.splice(0..0, prefix.iter().cloned());
                    m
                }));
            }
        }
    }

    /// A Kubeflow job's `spec.*ReplicaSpecs`: a template per replica type, the `Launcher` the launcher.
    fn replica_specs<T: Tree>(&mut self, doc: &T, k: &str) {
        let Some(spec) = self.map_at(doc, &[], &["spec"]) else {
            return;
        };
        let lists: Vec<&str> = spec
            .entries()
            .into_iter()
            .map(|(key, _)| key)
            .filter(|key| key.ends_with("ReplicaSpecs"))
            .collect();
        if lists.is_empty() {
            let want = if k == "MPIJob" {
                "mpiReplicaSpecs"
            } else {
                "…ReplicaSpecs"
            };
            self.missing.push(Missing {
                found: vec![Step::Key("spec".into())],
                want: format!("spec.{want}"),
            });
        }
        for list in lists {
            let base = vec![Step::Key("spec".into()), Step::Key(list.into())];
            let Some(specs) = spec.get(list).filter(|s| s.is_map()) else {
                continue;
            };
            for (replica, _) in specs.entries() {
                let role = if replica == "Launcher" {
                    Role::Launcher
                } else {
                    Role::Worker
                };
                let label = format!("{k} {}", replica.to_ascii_lowercase());
                let mut path = base.clone();
                path.push(Step::Key(replica.to_string()));
                self.require(doc, &path, &["template"], role, label);
            }
        }
    }

    /// A TrainJob's `spec.trainer`: not a pod template but the container it overrides.
    fn trainer<T: Tree>(&mut self, doc: &T) {
        let path = vec![Step::Key("spec".into()), Step::Key("trainer".into())];
        match at(doc, &path) {
            Some(t) if !t.is_map() => self.missing.push(Missing {
                found: path,
                want: "spec.trainer".into(),
            }),
            _ => self.templates.push(Template {
                path,
                form: Form::Trainer,
                role: Role::Worker,
                label: "TrainJob trainer".into(),
                generic: false,
                container: None,
                added: Added::NOTHING,
            }),
        }
    }

    /// A LeaderWorkerSet's worker template, and its leader template where it has one.
    fn leader_worker_set<T: Tree>(&mut self, doc: &T) {
        let base = ["spec", "leaderWorkerTemplate"];
        if let Some(lwt) = self.map_at(doc, &[], &base) {
            let base: Vec<Step> = base.iter().map(|k| Step::Key((*k).into())).collect();
            if lwt.get("leaderTemplate").is_some() {
                self.require(
                    doc,
                    &base,
                    &["leaderTemplate"],
                    Role::Worker,
                    "LeaderWorkerSet leader".into(),
                );
            }
            self.require(
                doc,
                &base,
                &["workerTemplate"],
                Role::Worker,
                "LeaderWorkerSet worker".into(),
            );
        }
    }
    /// `<spec>.replicatedJobs[].template.spec.template` (JobSet, and TrainingRuntime's JobSet template).
    fn jobset<T: Tree>(&mut self, doc: &T, spec: &[&str], kind: &str) {
        let Some(spec_node) = self.map_at(doc, &[], spec) else {
            return;
        };
        // A TrainingRuntime's MPI policy: the Trainer's MPI plugin adds volumes to two pod sets.
        let mpi = kind != "JobSet"
            && doc
                .get("spec")
                .and_then(|s| s.get("mlPolicy"))
                .and_then(|p| p.get("mpi"))
                .is_some_and(Tree::is_map);
        let mut base: Vec<Step> = spec.iter().map(|k| Step::Key((*k).into())).collect();
        base.push(Step::Key("replicatedJobs".into()));
        let Some(jobs) = spec_node.get("replicatedJobs").and_then(Tree::items) else {
            self.missing.push(Missing {
                want: dotted(&base),
                found: base,
            });
            return;
        };
        for (i, job) in jobs.iter().enumerate() {
            let name = job.get("name").and_then(Tree::text).unwrap_or("");
            if INITIALIZER_JOBS.contains(&name) {
                continue;
            }
            let role = if name == "launcher" {
                Role::Launcher
            } else {
                Role::Worker
            };
            let mut path = base.clone();
            path.push(Step::Index(i));
            let label = if name.is_empty() {
                format!("{kind} replicatedJob {i}")
            } else {
                format!("{kind} replicatedJob {name}")
            };
            let before = self.templates.len();
            self.require(doc, &path, &["template", "spec", "template"], role, label);
            if let Some(t) = self.templates.get_mut(before) {
                t.added = match name {
                    "node" if mpi => TRAINER_MPI_NODE,
                    "launcher" if mpi => TRAINER_MPI_LAUNCHER,
                    _ => Added::NOTHING,
                };
            }
        }
    }

    /// A Slinky NodeSet: the pod template at `spec.template` (metadata and a pod spec whose `containers`
    /// the operator fills) and its container at `spec.slurmd` ([`SLURMD`]). A NodeSet without a template
    /// is valid (the operator's base pod alone), so the template's absence is no shape problem.
    fn nodeset<T: Tree>(&mut self, doc: &T) {
        if doc.get("spec").is_some_and(|s| !s.is_map()) {
            self.missing.push(Missing {
                found: Vec::new(),
                want: "spec".into(),
            });
            return;
        }
        let key = |k: &str| Step::Key(k.into());
        self.templates.push(Template {
            path: vec![key("spec"), key("template")],
            form: Form::Pod,
            role: Role::Worker,
            label: "NodeSet slurmd".into(),
            generic: false,
            container: Some(vec![key("spec"), key("slurmd")]),
            added: SLURMD,
        });
    }

    /// A NIMService: no pod template, the pod's and its container's fields side by side in `spec`
    /// ([`NIM_SERVICE`]), read as a bare pod spec whose container is `spec` itself. A multi-node NIMService's
    /// leader and workers are built from the same fields, so one template stands for both.
    fn nim_service<T: Tree>(&mut self, doc: &T) {
        if self.map_at(doc, &[], &["spec"]).is_none() {
            return;
        }
        let spec = vec![Step::Key("spec".into())];
        self.templates.push(Template {
            path: spec.clone(),
            form: Form::Spec,
            role: Role::Worker,
            label: "NIMService".into(),
            generic: false,
            container: Some(spec),
            added: NIM_SERVICE,
        });
    }

    /// `headGroupSpec.template` and `workerGroupSpecs[].template`.
    fn ray<T: Tree>(&mut self, doc: &T, spec: &[&str]) {
        let Some(spec_node) = self.map_at(doc, &[], spec) else {
            return;
        };
        let base: Vec<Step> = spec.iter().map(|k| Step::Key((*k).into())).collect();
        if let Some(head) = spec_node.get("headGroupSpec") {
            let mut path = base.clone();
            path.push(Step::Key("headGroupSpec".into()));
            self.ray_group(doc, head, &path, "Ray head group".into());
        }
        let groups = spec_node
            .get("workerGroupSpecs")
            .and_then(Tree::items)
            .unwrap_or(&[]);
        for (i, group) in groups.iter().enumerate() {
            let mut path = base.clone();
            path.push(Step::Key("workerGroupSpecs".into()));
            path.push(Step::Index(i));
            let name = group.get("groupName").and_then(Tree::text).unwrap_or("");
            let label = if name.is_empty() {
                format!("Ray worker group {i}")
            } else {
                format!("Ray worker group {name}")
            };
            self.ray_group(doc, group, &path, label);
        }
    }

    /// A Ray group's template, with KubeRay's /dev/shm ([`RAY`]). A group started with `num-gpus: "0"`
    /// offers Ray no GPU, so no GPU task or actor (no NCCL rank) is placed there: it needs no fabric.
    fn ray_group<T: Tree>(&mut self, doc: &T, group: &T, path: &[Step], label: String) {
        let gpus = group.get("rayStartParams").and_then(|p| p.get("num-gpus"));
        let no_gpus = gpus
            .and_then(Tree::scalar)
            .is_some_and(|n| n.trim().parse::<f64>() == Ok(0.0));
        let role = if no_gpus {
            Role::Launcher
        } else {
            Role::Worker
        };
        let before = self.templates.len();
        self.require(doc, path, &["template"], role, label);
        for t in &mut self.templates[before..] {
            t.added = RAY;
        }
    }
}

/// `spec.replicatedJobs[0].template`.
pub(crate) fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{INFERENCE_KINDS, KINDS, Role, discover};
    use crate::yaml::Yaml;

    /// The user's table of kinds (docs/targets.md, "Which pod templates") names every kind the code's
    /// tables know.
    #[test]
    fn every_known_kind_is_in_the_docs_table() {
        let docs = include_str!("../../../../docs/targets.md");
        let table = &docs[docs.find("### Which pod templates").unwrap()..];
        let table = &table[..table.find("\n### ").unwrap()];
        let missing: Vec<&str> = KINDS
            .iter()
            .chain(INFERENCE_KINDS.iter().map(|(k, _)| k))
            .copied()
            .filter(|k| !table.contains(&format!("`{k}`")))
            .collect();
        assert!(missing.is_empty(), "not in docs/targets.md: {missing:?}");
    }

    #[test]
    fn an_mpijob_has_a_launcher_and_a_worker_template() {
        let pod_spec = || Yaml::map().with("spec", Yaml::map().with("containers", Yaml::seq()));
        let job = Yaml::map().with("kind", "MPIJob").with(
            "spec",
            Yaml::map().with(
                "mpiReplicaSpecs",
                Yaml::map()
                    .with("Launcher", Yaml::map().with("template", pod_spec()))
                    .with("Worker", Yaml::map().with("template", pod_spec())),
            ),
        );
        let (found, missing) = discover(&job).unwrap();
        assert!(missing.is_empty());
        assert_eq!(
            found.iter().map(|t| t.role).collect::<Vec<_>>(),
            [Role::Launcher, Role::Worker]
        );
    }
}
