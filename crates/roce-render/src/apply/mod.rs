//! `roce apply`: wire a [`Plan`] into workload manifests the user already has.
//!
//! [`apply`] reads a multi-document YAML file ([`manifest::parse`]), finds every pod template in it
//! ([`templates::discover`]: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, the Kubeflow
//! jobs — MPIJob, PyTorchJob, TFJob… —, JobSet, Kubeflow Trainer's TrainingRuntime and TrainJob,
//! LeaderWorkerSet, RayCluster and RayJob, and `List`s of them), checks the fields it will touch
//! ([`view::view`]), and writes the plan into each template:
//!
//! * the Multus networks annotation, **merged**: existing networks stay first and in order, the profile's
//!   are added in rail order unless present (by namespace and name), and the result is a JSON list;
//! * env, **by name**: a profile variable replaces the entry of the same name in place (a second entry of
//!   that name is dropped), a missing one is appended, the user's other variables keep their order;
//! * the RDMA resource in requests **and** limits; other resources are not touched, and GPUs are never
//!   added (the GPU count is the workload's: a GPU-less test pod, an AMD or Trainium pod stays as it is);
//!
//! What a template already gets in another form ([`crate::wiring::Wiring`], summed up as `Have`) is left
//! alone: its own RDMA networks or DRA NIC claims, RDMA devices from another resource, an IMEX channel of
//! any ComputeDomain, a spread over NVLink domains, values equivalent to the profile's
//! ([`Plan::equivalent`]: the same rails, the same UCX transports, a search path holding the profile's
//! entries — merged, never replaced);
//! * the profile's capabilities (`IPC_LOCK`) added to the existing ones;
//! * a memory-backed `/dev/shm` when nothing is mounted there; the profile's node labels in `nodeSelector`;
//! * DRA (module `dra`, from [`Plan::dra`]): `spec.resourceClaims` **by name** (an entry of the profile's
//!   name that says something else is replaced in place, a second one dropped, a missing one appended; the
//!   user's other claims stay), the wired container's `resources.claims` by name (an existing entry of that
//!   name is kept as written), the clique term added to
//!   `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution` unless an equivalent term is
//!   there (other terms and node affinity are kept), the label it selects in the template's
//!   `metadata.labels`, and Kueue topology annotations in its annotations;
//! * the objects the claims name (ComputeDomain, the NICs' ResourceClaimTemplate) as documents of their own
//!   **before** the first document that claims them — after the `---` that opens it, before its leading
//!   comments — so `kubectl apply -f` creates them first; in a `List`, as items before the first item that
//!   claims them. Once per namespace (they take the workload's `metadata.namespace`, where it states one),
//!   and not when the file already has the object (same API group, kind and name; same namespace where both
//!   state one). An existing one is never edited; a note says when its `spec` is not the profile's.
//!
//! MPI launchers (MPIJob `Launcher`, a JobSet/TrainingRuntime replicated job named `launcher`) run
//! `mpirun` and no rank. [`RoleChoice`] says where the env goes: the worker pods' env (default), the
//! launcher's env forwarded with `mpirun -x NAME` ([`crate::plumbing::mpirun`]), or both. Either way a value the other side
//! sets for a profile variable is corrected, since it would win at run time. A launcher gets no DRA claims,
//! affinity or label: as in the vendor's DRA MPIJob (coreweave/nccl-tests), the IMEX channel is the ranks'
//! (the workers'), and a launcher carrying the label the workers' affinity selects would tie them to its
//! node's NVLink domain (or, on a node without one, leave them unschedulable). A TrainJob carries no pod
//! spec, so it gets no DRA (its TrainingRuntime does), only a note.
//!
//! [`Applied::notes`] say what the DRA wiring added or corrected in each template and which objects were
//! added where.
//!
//! The result is the user's text with the wiring spliced in (module `splice`): comments, key order, flow
//! style and quoting of every line roce does not change survive byte for byte. Output is deterministic, and
//! applying twice gives the same bytes as applying once.
//!
//! [`apply_object`] takes the same decisions on one object already parsed from JSON (the admission webhook's
//! `request.object`) and returns the decided values as JSON: no YAML is written, parsed, spliced or read
//! back, which is where nearly all of `apply`'s time goes for a small object.

mod dra;
pub mod manifest;
pub(crate) mod mpirun;
pub(crate) mod multus;
mod object;
mod scan;
mod splice;
pub(crate) mod templates;
pub(crate) mod view;

use roce_model::plumbing::tree::Node;
use roce_model::source::{Origin, Source, Sources};
use roce_model::{Code, Problem};

use roce_model::fabric::env::is_pod_dependent;

use crate::exec::ExecWrap;
use crate::plan::{GPU_RESOURCE, MULTUS_ANNOTATION, Plan};
use crate::pod::{SHM_VOLUME, escape_dependent_vars};
use crate::wiring::{Input, Wiring};
use crate::yaml::{self, Yaml};
use templates::{Form, Role, Step, Template, at_mut};

/// Where an MPI job's env goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum RoleChoice {
    /// In the worker pods' env (every rank reads its own pod's env).
    #[default]
    Worker,
    /// In the launcher's env, forwarded to the ranks with `mpirun -x NAME` (Open MPI).
    Launcher,
    /// Both.
    All,
}

/// Options of [`apply`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// The container to wire (default: each template's first container).
    pub container: Option<String>,
    /// Where an MPI job's env goes.
    pub role: RoleChoice,
}

/// The result of a successful [`apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The file's text with the wiring spliced in: lines roce does not change keep their bytes.
    pub text: String,
    /// How many pod templates were wired.
    pub templates: usize,
    /// Things the user should know (kinds left alone, env that could not be forwarded…).
    pub notes: Vec<String>,
}

/// Apply `plan` to every pod template in a manifest file.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly, Source};
/// use roce_render::apply::{apply, ApplyOptions};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let plan = roce_render::plan::lower(&profile);
/// let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: x\n      restartPolicy: Never\n";
/// let once = apply(&Source::new("job.yaml", job), &plan, &ApplyOptions::default()).unwrap();
/// assert!(once.text.contains("IPC_LOCK") && once.text.contains("ibs3p3-macvlan"));
/// let twice = apply(&Source::new("job.yaml", once.text.clone()), &plan, &ApplyOptions::default()).unwrap();
/// assert_eq!(once.text, twice.text);
/// ```
///
/// # Errors
///
/// Every problem found (`roce::lint::syntax`, `shape` — also for a `resourceClaims`, `resources.claims`,
/// `affinity` or `metadata.labels` of the wrong type —, `no_container`, `multus_malformed`), resolved
/// against `source`; nothing is applied then.
pub fn apply(source: &Source, plan: &Plan, opts: &ApplyOptions) -> Result<Applied, Vec<Problem>> {
    apply_inner(source, plan, opts, None)
}

/// [`apply`], and start each wired container's job behind `roce exec` (docs/exec.md): the
/// [`ExecWrap::prefix`] goes in front of the container's `command`, and the variables `roce exec` computes
/// ([`POD_DEPENDENT`](roce_model::fabric::env::POD_DEPENDENT)) are left out of its env (an entry of one
/// is removed: it would win over the computed value). A container already behind `roce exec` keeps its
/// command (with `wrap`'s profile).
///
/// # Errors
///
/// As [`apply`]; and `roce::exec::cannot_wrap` for a container without `command` (its image's ENTRYPOINT
/// is unknown), an MPI job (mpirun starts the ranks, not the workers' command) and a TrainJob.
pub fn apply_wrapped(
    source: &Source,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: &ExecWrap,
) -> Result<Applied, Vec<Problem>> {
    apply_inner(source, plan, opts, Some(wrap))
}

/// The result of a successful [`apply_object`].
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedObject {
    /// The object, wired: what reading [`apply`]'s output for it gives.
    pub object: serde_json::Value,
    /// The objects [`apply`] would add before it (DRA's ComputeDomain, ResourceClaimTemplate), in order.
    pub added: Vec<serde_json::Value>,
    /// How many pod templates were wired.
    pub templates: usize,
    /// As [`Applied::notes`].
    pub notes: Vec<String>,
}

/// [`apply`] to one object already parsed from JSON (the admission webhook's `request.object`), with the
/// result as JSON: the same decisions, without writing the object as YAML, parsing it, splicing the
/// wiring into that text and reading it back. `name` names the object in notes and problems.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly, Source};
/// use roce_render::apply::{apply, apply_object, object_text, ApplyOptions};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let plan = roce_render::plan::lower(&profile);
/// let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
///     "spec": {"containers": [{"name": "main", "image": "x"}]}});
/// let fast = apply_object("pod", &pod, &plan, &ApplyOptions::default()).unwrap();
/// let text = apply(&Source::new("pod", object_text(&pod)), &plan, &ApplyOptions::default()).unwrap().text;
/// let read: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
/// assert_eq!(fast.object, read);
/// ```
///
/// # Errors
///
/// As [`apply`] of [`object_text`]`(object)`, whose places the problems point at.
pub fn apply_object(
    name: &str,
    object: &serde_json::Value,
    plan: &Plan,
    opts: &ApplyOptions,
) -> Result<AppliedObject, Vec<Problem>> {
    let mut sources = Sources::default();
    let id = sources.add(Source::new(name, ""));
    let nodes = [object::node(object, Origin::new(id, 0..0))];
    let wired = match wire_documents(&nodes, vec![object::yaml(object)], plan, opts, None, name) {
        Ok(wired) => wired,
        // The tree has no places: find the same problems again in the object's text, where they have.
        Err(problems) => {
            let source = Source::new(name, object_text(object));
            return Err(match apply(&source, plan, opts) {
                Err(located) => located,
                Ok(_) => resolve(&sources, problems),
            });
        }
    };
    let doc = wired
        .docs
        .into_iter()
        .next()
        .expect("one document in, one out");
    Ok(AppliedObject {
        object: object::json(doc.after),
        added: wired
            .inserts
            .into_iter()
            .map(|(_, o)| object::json(o))
            .collect(),
        templates: wired.templates,
        notes: wired.notes,
    })
}

/// `object` as block YAML, the text [`apply_object`]'s problems point into.
pub fn object_text(object: &serde_json::Value) -> String {
    object::to_text(object)
}

fn apply_inner(
    source: &Source,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
) -> Result<Applied, Vec<Problem>> {
    let mut sources = Sources::default();
    let id = sources.add(source.clone());
    let text = &source.text;
    let nodes = manifest::parse(text, id).map_err(|p| resolve(&sources, vec![*p]))?;
    let befores = nodes.iter().map(|n| manifest::to_yaml(n, text)).collect();
    let Wired {
        docs,
        inserts,
        templates,
        mut notes,
    } = wire_documents(&nodes, befores, plan, opts, wrap, &source.name)
        .map_err(|p| resolve(&sources, p))?;
    // Edit the user's text; only when a document cannot be found in it, write them all anew.
    let text = match splice::splice(text, id, &docs, &inserts) {
        Some(spliced) => {
            for n in spliced.rewritten {
                notes.push(format!(
                    "{}: document {} ({}) is written anew, without its comments: it uses aliases, or its \
                     text could not be edited in place",
                    source.name,
                    n + 1,
                    kind_of(docs[n].node)
                ));
            }
            spliced.text
        }
        None => {
            notes.push(format!(
                "{}: the documents are written anew, without their comments: their text could not be \
                 edited in place",
                source.name
            ));
            let mut all: Vec<Yaml> = Vec::with_capacity(docs.len() + inserts.len());
            let mut inserts = inserts.into_iter().peekable();
            for (n, d) in docs.into_iter().enumerate() {
                while let Some((_, object)) = inserts.next_if(|(at, _)| *at == n) {
                    all.push(object);
                }
                all.push(d.after);
            }
            yaml::to_multi_doc(&all)
        }
    };
    Ok(Applied {
        text,
        templates,
        notes,
    })
}

/// Problems with their places resolved against `sources`, in report order.
fn resolve(sources: &Sources, problems: Vec<Problem>) -> Vec<Problem> {
    let mut problems: Vec<Problem> = problems.into_iter().map(|p| p.resolve(sources)).collect();
    roce_model::problem::sort(&mut problems);
    problems
}

/// Every decision `apply` makes, before anything is written: each document's value before and after
/// (`docs`), the objects to add before document `n` (`inserts`), and the notes. [`apply`] splices this
/// into the user's text; [`apply_object`] hands the values back as JSON.
struct Wired<'a> {
    docs: Vec<splice::Doc<'a>>,
    inserts: Vec<(usize, Yaml)>,
    templates: usize,
    notes: Vec<String>,
}

/// Wire every document (`befores[n]` is the value of `nodes[n]`). The problems are not resolved yet.
fn wire_documents<'a>(
    nodes: &'a [Node],
    befores: Vec<Yaml>,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
    file: &str,
) -> Result<Wired<'a>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut docs = Vec::with_capacity(nodes.len());
    let mut wired = Vec::with_capacity(nodes.len());
    let mut count = 0;
    let input = Input::read(nodes);
    for (n, (node, before)) in nodes.iter().zip(befores).enumerate() {
        let mut doc = before.clone();
        let mut claimed = Vec::new();
        match plan_document(node, &input, plan, opts, wrap) {
            Err(p) => problems.extend(p),
            Ok(None) => notes.push(format!(
                "{file}: document {} ({}) has no pod template roce knows; left unchanged",
                n + 1,
                kind_of(node)
            )),
            Ok(Some(work)) => {
                count += work.templates.len();
                claimed = apply_document(&mut doc, &work, plan, opts, wrap, &mut notes, file);
            }
        }
        docs.push(splice::Doc {
            node,
            before,
            after: doc,
        });
        wired.push(claimed);
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let inserts = dra::add_documents(&mut docs, &wired, plan, file, &mut notes);
    Ok(Wired {
        docs,
        inserts,
        templates: count,
        notes,
    })
}

fn kind_of(node: &Node) -> String {
    match view::text(node, "kind") {
        Some(k) => format!("kind {k}"),
        None => "no kind".to_string(),
    }
}

/// The templates of one document, checked.
struct Work {
    templates: Vec<(Template, usize)>,
    /// What each template already gets, in any form (from [`Wiring`]).
    have: Vec<Have>,
    /// The Multus annotation's parsed networks, per template index (worker templates only).
    multus: Vec<Option<Vec<multus::Network>>>,
    pod_namespace: Option<String>,
}

/// What a pod template already gets from the fabric in some form, so `apply` leaves it alone.
#[derive(Debug, Clone, Default)]
struct Have {
    /// Its rail NICs without the profile's networks (DRA NIC claims, a cloud's interfaces, networks of its
    /// own): the networks annotation is not touched.
    nics: bool,
    /// RDMA devices through another resource, a DRA NIC claim, or a privileged container: no RDMA
    /// resource is added.
    rdma: bool,
    /// The accelerators it asks for.
    accelerators: Vec<roce_model::fabric::devices::Accelerator>,
    /// An IMEX channel claim the container already uses (any ComputeDomain's).
    imex: bool,
    /// It keeps its replicas apart across NVLink domains: no clique affinity.
    spreads: bool,
    /// A KV-transfer server over NIXL/UCX: a profile that pins UCX to TCP leaves its UCX alone.
    kv_nixl: bool,
    /// Variables the rank gets from a ConfigMap of the input or the launcher's `--mca` (a launcher's `-x`
    /// is corrected where it is wrong, so the workers still get the profile's value).
    env_elsewhere: Vec<String>,
    /// It is not a pod that runs the job (a router), or a bare PodSpec: left unchanged.
    untouched: bool,
    /// `hostNetwork: true`: its NICs and devices are the node's, named as the node names them, so the
    /// profile's pod-side device and interface selections do not apply.
    host_network: bool,
}

impl Have {
    fn of(w: &Wiring<'_>, v: &view::PodView<'_>, plan: &Plan, pod_namespace: Option<&str>) -> Have {
        use crate::wiring::{EnvFrom, RdmaAccess};
        let want = plan
            .wiring
            .as_ref()
            .map(|p| p.networks.as_slice())
            .unwrap_or(&[]);
        let profile_resource = |r: &str| {
            plan.wiring
                .as_ref()
                .is_some_and(|p| p.resources.iter().any(|(name, _)| name.as_str() == r))
        };
        Have {
            nics: w.nics_otherwise(want, pod_namespace),
            rdma: match w.rdma_access() {
                Some(RdmaAccess::Resource(r)) => !profile_resource(&r),
                Some(RdmaAccess::Claim(_) | RdmaAccess::Privileged | RdmaAccess::HostDevices) => {
                    true
                }
                _ => false,
            },
            accelerators: w.accelerators(),
            imex: w.imex_channel().is_some(),
            spreads: w.spreads_over(v.spec, roce_model::fabric::dra::CLIQUE_LABEL),
            kv_nixl: w.kv_backend() == Some(crate::wiring::KvBackend::Nixl),
            env_elsewhere: w
                .env
                .iter()
                .filter(|v| {
                    matches!(v.from, EnvFrom::ConfigMap | EnvFrom::Mca) && v.value.is_some()
                })
                .map(|v| v.name.clone())
                .collect(),
            untouched: false,
            host_network: w.host_network.is_some(),
        }
    }
}

/// Find and check the templates of one document. `Ok(None)` for a kind roce does not know.
fn plan_document(
    node: &Node,
    input: &Input<'_>,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
) -> Result<Option<Work>, Vec<Problem>> {
    let Some((found, missing)) = templates::discover(node) else {
        return Ok(None);
    };
    let mut problems: Vec<Problem> = missing.iter().map(|m| missing_problem(node, m)).collect();
    let mut work = Work {
        templates: Vec::new(),
        have: Vec::new(),
        multus: Vec::new(),
        pod_namespace: view::entry(node, "metadata")
            .and_then(|m| view::text(&m.node, "namespace"))
            .map(str::to_string),
    };
    let mut views = Vec::new();
    for t in found {
        match view::view(node, &t, opts.container.as_deref()) {
            Err(p) => problems.extend(p),
            Ok(v) => views.push((t, v)),
        }
    }
    let launcher = views
        .iter()
        .find(|(t, _)| t.role == Role::Launcher)
        .map(|(_, v)| *v);
    for (t, v) in views {
        {
            {
                let w = Wiring::read(&v, input, launcher.as_ref());
                let mut have = Have::of(&w, &v, plan, work.pod_namespace.as_deref());
                have.untouched = t.role == Role::Router || t.form == Form::Spec;
                work.have.push(have);
                if let Some(w) = wrap {
                    problems.extend(cannot_wrap(node, &t, &v, w));
                }
                let nets = match v.multus.and_then(|e| multus_text(e).map(|s| (e, s))) {
                    Some((e, value)) => match multus::parse(value) {
                        Ok(nets) => Some(nets),
                        Err(bad) => {
                            problems.push(malformed_problem(e, value, &bad));
                            None
                        }
                    },
                    None => None,
                };
                work.multus.push(nets);
                work.templates.push((t, v.container.map_or(0, |(i, _)| i)));
            }
        }
    }
    if problems.is_empty() {
        Ok(Some(work))
    } else {
        Err(problems)
    }
}

fn multus_text(e: &roce_model::plumbing::tree::Entry) -> Option<&str> {
    match &e.node.value {
        roce_model::plumbing::tree::Value::Scalar(roce_model::plumbing::tree::Scalar::Str(s)) => {
            Some(s)
        }
        _ => None,
    }
}

/// Why a template's job cannot start behind `roce exec`, if it cannot.
fn cannot_wrap(doc: &Node, t: &Template, v: &view::PodView<'_>, w: &ExecWrap) -> Option<Problem> {
    let kind = view::text(doc, "kind").unwrap_or("object");
    let kind_at = view::entry(doc, "kind").map_or(doc.origin, |e| e.node.origin);
    let prefix = w.prefix().join(" ");
    match (t.role, t.form) {
        (Role::Launcher, _) => Some(
            Problem::new(
                Code::ExecCannotWrap,
                format!("this {kind} is an MPI job: mpirun starts its ranks (through ssh or its own daemon), not the workers' command, so wrapping that command sets nothing for them"),
            )
            .at(kind_at, "an MPI job")
            .help(format!("put `{prefix}` in front of the rank program in the launcher's mpirun line, and apply without --exec")),
        ),
        (_, Form::Trainer) => Some(
            Problem::new(
                Code::ExecCannotWrap,
                format!("a {kind} carries no container command roce can wrap"),
            )
            .at(kind_at, "here")
            .help("apply --exec to its TrainingRuntime (or ClusterTrainingRuntime), whose containers run the job"),
        ),
        (Role::Router, _) => None,
        (Role::Worker, Form::Pod | Form::Spec) => {
            let (_, c) = v.container?;
            let has_command = matches!(
                view::entry(c, "command").map(|e| &e.node.value),
                Some(roce_model::plumbing::tree::Value::Seq(items)) if !items.is_empty()
            );
            if has_command {
                return None;
            }
            let name = view::text(c, "name").unwrap_or("?");
            let at = view::entry(c, "name").map_or(c.origin, |e| e.node.origin);
            Some(
                Problem::new(
                    Code::ExecCannotWrap,
                    format!("container `{name}` has no `command`: it runs its image's ENTRYPOINT, which roce does not know, so it cannot put `roce exec` in front of it"),
                )
                .at(at, "no command")
                .help(format!("write the job as the container's `command` (with `args` as you like) and apply again, or build the image with `roce render --target dockerfile --exec --with-roce-binary`, whose ENTRYPOINT is `{prefix}`")),
            )
        }
    }
}

/// A `roce::lint::multus_malformed` problem, pointing into the annotation where the text is verbatim.
pub fn malformed_problem(
    e: &roce_model::plumbing::tree::Entry,
    value: &str,
    bad: &multus::Malformed,
) -> Problem {
    let at = e
        .node
        .content
        .filter(|c| c.len == value.len())
        .map_or(e.node.origin, |c| c.sub(bad.range.clone()));
    Problem::new(
        Code::LintMultusMalformed,
        format!("the Multus networks annotation cannot be read: {}", bad.message),
    )
    .at(at, "here")
    .help(
        "write a JSON list (`[{\"name\":\"nad\",\"namespace\":\"ns\"}]`) or a comma list (`ns/nad@if, nad`); \
         Multus rejects the pod until it parses",
    )
}

/// A `roce::lint::shape` problem for a known kind whose template field is missing.
pub fn missing_problem(doc: &Node, m: &templates::Missing) -> Problem {
    let mut node = doc;
    let mut at = doc.origin;
    for step in &m.found {
        let next = match step {
            Step::Key(k) => view::entry(node, k).map(|e| {
                at = e.key.origin;
                &e.node
            }),
            Step::Index(i) => match &node.value {
                roce_model::plumbing::tree::Value::Seq(items) => {
                    items.get(*i).inspect(|n| at = n.origin)
                }
                _ => None,
            },
        };
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    let kind = view::text(doc, "kind").unwrap_or("object");
    Problem::new(
        Code::LintShape,
        format!(
            "this {kind} has no `{}` mapping, where its pod template must be",
            m.want
        ),
    )
    .at(at, "expected here")
    .help(format!(
        "add `{}`; `kubectl explain` shows the field",
        m.want
    ))
}

/// The env the plan sets, as (name, value as the container must see it in a manifest).
fn plan_env(plan: &Plan) -> Vec<(String, String)> {
    plan.env
        .iter()
        .map(|e| (e.name.clone(), escape_dependent_vars(&e.value)))
        .collect()
}

/// Apply the plan to one document's templates. Returns the paths of the templates that claim DRA devices
/// (whose objects the file must then have).
fn apply_document(
    doc: &mut Yaml,
    work: &Work,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
    notes: &mut Vec<String>,
    file: &str,
) -> Vec<Vec<Step>> {
    let mut claimed = Vec::new();
    let env = plan_env(plan);
    // Behind `roce exec` the pod-dependent variables are computed at start-up: a static value would win.
    let worker_env: Vec<(String, String)> = env
        .iter()
        .filter(|(n, _)| wrap.is_none() || !is_pod_dependent(n))
        .cloned()
        .collect();
    let has_launcher = work.templates.iter().any(|(t, _)| t.role == Role::Launcher);
    // Can every launcher forward the env? Only then may the workers go without it.
    let launchers_forward = work
        .templates
        .iter()
        .filter(|(t, _)| t.role == Role::Launcher)
        .all(|(t, i)| container_argv(doc, t, *i).is_some_and(|argv| mpirun::find(&argv).is_some()));
    let env_on_launcher = has_launcher && opts.role != RoleChoice::Worker && launchers_forward;
    let env_on_workers = !env_on_launcher || opts.role == RoleChoice::All;
    if has_launcher && opts.role != RoleChoice::Worker && !launchers_forward {
        notes.push(format!(
            "{file}: the launcher's command is not an Open MPI `mpirun` invocation, so the env cannot be \
             forwarded with `-x`; it goes into the worker pods' env instead"
        ));
    }
    for (((t, container), nets), have) in work.templates.iter().zip(&work.multus).zip(&work.have) {
        match (t.role, t.form) {
            (Role::Worker, Form::Pod) => {
                if let Some(other) = have
                    .accelerators
                    .iter()
                    .find(|a| **a != roce_model::fabric::devices::Accelerator::Nvidia)
                {
                    notes.push(format!(
                        "{file}: the {} asks for {}; the profile wires nodes with NVIDIA GPUs, so it is left unchanged",
                        t.label,
                        other.describe()
                    ));
                    continue;
                }
                let (tplan, kept) = template_plan(plan, have);
                let tplan = tplan.as_ref();
                for k in kept {
                    notes.push(format!("{file}: the {} {k}", t.label));
                }
                for n in wire_pod(
                    doc,
                    t,
                    *container,
                    nets.as_deref(),
                    tplan,
                    work.pod_namespace.as_deref(),
                ) {
                    notes.push(format!("{file}: {n}"));
                }
                // What the rank gets elsewhere (a ConfigMap, the launcher's mpirun) is not set again; a
                // KV-transfer server keeps its UCX as configured.
                let env_t: Vec<(String, String)> = worker_env
                    .iter()
                    .filter(|(n, _)| !have.env_elsewhere.contains(n))
                    .filter(|(n, _)| {
                        // On a host-network profile the node's names are the profile's.
                        !(have.host_network
                            && !plan.host_network
                            && roce_model::fabric::env::selects_devices(n))
                    })
                    .filter(|(n, _)| {
                        // Pinning a NIXL server's UCX to TCP would move its KV cache over sockets.
                        !(have.kv_nixl
                            && plan.ucx_mode == roce_model::model::UcxMode::Tcp
                            && n.starts_with(roce_model::fabric::env::UCX_PREFIX))
                    })
                    .cloned()
                    .collect();
                if let Some(c) = container_mut(doc, t, *container) {
                    merge_env(c, &env_t, !env_on_workers, plan);
                    // What the container runtime reads goes in the workers' env, wherever the rest goes.
                    if !env_on_workers
                        && env_t.iter().any(|(n, _)| roce_model::fabric::env::read_at_container_creation(n))
                    {
                        let runtime: Vec<(String, String)> = env_t
                            .iter()
                            .filter(|(n, _)| roce_model::fabric::env::read_at_container_creation(n))
                            .cloned()
                            .collect();
                        merge_env(c, &runtime, false, plan);
                    }
                    if let Some(w) = wrap {
                        wrap_command(c, w);
                    }
                    if have.accelerators.is_empty() && plan.gpu_resource {
                        notes.push(format!(
                            "{file}: the {} asks for no GPU: roce adds none (a GPU-less pod stays GPU-less); \
                             add `{GPU_RESOURCE}: {}` to its resources if it runs ranks",
                            t.label, plan.gpus_per_node
                        ));
                    }
                }
                if let Some(template) = at_mut(doc, &t.path) {
                    let changed = dra::wire(template, *container, tplan);
                    if !changed.is_empty() {
                        notes.push(format!(
                            "{file}: the {} gets the profile's DRA wiring: {}",
                            t.label,
                            changed.join("; ")
                        ));
                    }
                    if !tplan.dra.pod_claims.is_empty() {
                        claimed.push(t.path.clone());
                    }
                }
                if !plan.gpu_resource
                    && container_mut(doc, t, *container)
                        .is_some_and(|c| requests_gpu(c, "resources"))
                {
                    notes.push(format!(
                        "{file}: the {} requests {GPU_RESOURCE}, but the profile's DRA claim allocates the \
                         GPUs: remove {GPU_RESOURCE}, or the pod asks for its GPUs twice",
                        t.label
                    ));
                }
            }
            (Role::Worker, Form::Trainer) => {
                let Some(trainer) = ensure_path(doc, &t.path) else {
                    continue;
                };
                merge_env(trainer, &env, !env_on_workers, plan);
                merge_resources(trainer, "resourcesPerNode", plan);
                if plan.wiring.is_some() {
                    notes.push(format!(
                        "{file}: a TrainJob carries env and resources only; the Multus networks, IPC_LOCK, \
                         /dev/shm and node selector belong in its TrainingRuntime (run roce apply on that too)"
                    ));
                }
                if dra::active(plan) {
                    notes.push(format!(
                        "{file}: a TrainJob cannot carry DRA claims or pod affinity: they and the objects \
                         the claims name belong in its TrainingRuntime (run roce apply on that too); a \
                         `resourcesPerNode` here replaces the runtime container's resources, so check that \
                         its `claims` survive in the Trainer release you run"
                    ));
                }
            }
            // A router moves no tensors; a bare PodSpec has no metadata for the networks annotation,
            // so half the wiring could not be written: both are left as they are.
            (Role::Router, _) => {}
            (Role::Worker, Form::Spec) => notes.push(format!(
                "{file}: the {} is a bare PodSpec (no `metadata`, so no networks annotation can go there); \
                 left unchanged: wire it where its controller builds the pod, or by hand (`roce lint` says what is missing)",
                t.label
            )),
            (Role::Launcher, _) => {
                if let Some(c) = container_mut(doc, t, *container) {
                    merge_env(c, &env, !env_on_launcher, plan);
                }
                forward_env(doc, t, *container, &env, env_on_launcher, plan);
            }
        }
    }
    claimed
}

/// The plan for one template, less what the template already has in another form ([`Have`]), with a
/// sentence for each part left alone.
fn template_plan<'p>(plan: &'p Plan, have: &Have) -> (std::borrow::Cow<'p, Plan>, Vec<String>) {
    use std::borrow::Cow;
    let mut kept = Vec::new();
    let domain = plan.dra_spec.nvlink_domain.compute_domain();
    let imex = have.imex && domain.is_some();
    let nics = have.nics && plan.wiring.as_ref().is_some_and(|w| !w.networks.is_empty());
    let rdma_resources = have.rdma
        && plan.wiring.as_ref().is_some_and(|w| {
            w.resources
                .iter()
                .any(|(r, _)| roce_model::fabric::devices::rdma_resource(r.as_str()))
        });
    let nic_claims = have.rdma && plan.dra_spec.nics.dra().is_some();
    let spreads = have.spreads && plan.dra.affinity.is_some();
    if !(imex || nics || rdma_resources || nic_claims || spreads) {
        return (Cow::Borrowed(plan), kept);
    }
    let mut p = plan.clone();
    if nics && let Some(w) = &mut p.wiring {
        w.networks.clear();
        kept.push("gets its NICs in another form (its own networks, DRA NIC claims or the cloud's interfaces): its networks are left as they are".to_string());
    }
    if rdma_resources && let Some(w) = &mut p.wiring {
        w.resources
            .retain(|(r, _)| !roce_model::fabric::devices::rdma_resource(r.as_str()));
        kept.push("gets its RDMA devices in another form: no RDMA resource added".to_string());
    }
    if nic_claims && let Some(nics) = plan.dra_spec.nics.dra() {
        let claim = nics.claim().as_str();
        let template = nics.template().as_str();
        p.dra.pod_claims.retain(|c| c.name().as_str() != claim);
        p.dra
            .container_claims
            .retain(|c| c.name().as_str() != claim);
        p.dra.documents.retain(|d| d.name() != template);
        kept.push("gets its RDMA devices from a device plugin: no DRA NIC claim added".to_string());
    }
    if imex && let Some(cd) = domain {
        let claim = cd.claim().as_str();
        p.dra.pod_claims.retain(|c| c.name().as_str() != claim);
        p.dra
            .container_claims
            .retain(|c| c.name().as_str() != claim);
        p.dra
            .documents
            .retain(|d| d.kind() != roce_model::fabric::dra::COMPUTE_DOMAIN_KIND);
        kept.push(
            "already claims an IMEX channel of a ComputeDomain: that one is kept, none added"
                .to_string(),
        );
    }
    if spreads {
        p.dra.affinity = None;
        p.dra.labels.clear();
        kept.push(format!(
            "keeps its pods apart across `{}` (a spread constraint or anti-affinity): no required clique affinity added, which would contradict it",
            roce_model::fabric::dra::CLIQUE_LABEL
        ));
    }
    (Cow::Owned(p), kept)
}

/// Does the container (or trainer, `key` = `resourcesPerNode`) request or limit GPUs as a resource?
fn requests_gpu(c: &Yaml, key: &str) -> bool {
    c.get(key).is_some_and(|r| {
        ["requests", "limits"]
            .iter()
            .any(|side| r.get(side).and_then(|s| s.get(GPU_RESOURCE)).is_some())
    })
}

fn container_path(t: &Template, index: usize) -> Vec<Step> {
    match t.form {
        Form::Trainer => t.path.clone(),
        Form::Spec => {
            let mut p = t.path.clone();
            p.extend([Step::Key("containers".into()), Step::Index(index)]);
            p
        }
        Form::Pod => {
            let mut p = t.path.clone();
            p.extend([
                Step::Key("spec".into()),
                Step::Key("containers".into()),
                Step::Index(index),
            ]);
            p
        }
    }
}

fn container_mut<'a>(doc: &'a mut Yaml, t: &Template, index: usize) -> Option<&'a mut Yaml> {
    at_mut(doc, &container_path(t, index))
}

/// `command` followed by `args`, the strings only (a non-string item becomes empty).
fn container_argv(doc: &mut Yaml, t: &Template, index: usize) -> Option<Vec<String>> {
    let c = container_mut(doc, t, index)?;
    let list = |key: &str| -> Vec<String> {
        match c.get(key) {
            Some(Yaml::Seq(items)) => items
                .iter()
                .map(|i| i.as_str().unwrap_or("").to_string())
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut argv = list("command");
    argv.extend(list("args"));
    Some(argv)
}

/// The mapping under `key` of `map`, created (last, or first with `front`) when absent or null.
fn ensure_map<'a>(map: &'a mut Yaml, key: &str, front: bool) -> Option<&'a mut Yaml> {
    ensure(map, key, front, Yaml::map)
}

fn ensure_seq<'a>(map: &'a mut Yaml, key: &str) -> Option<&'a mut Yaml> {
    ensure(map, key, false, Yaml::seq)
}

fn ensure<'a>(
    map: &'a mut Yaml,
    key: &str,
    front: bool,
    empty: fn() -> Yaml,
) -> Option<&'a mut Yaml> {
    let Yaml::Map(entries) = map else { return None };
    let i = match entries.iter().position(|(k, _)| k == key) {
        Some(i) => {
            if entries[i].1 == Yaml::Null || matches!(entries[i].1, Yaml::Raw(_)) {
                entries[i].1 = empty();
            }
            i
        }
        None if front => {
            entries.insert(0, (key.to_string(), empty()));
            0
        }
        None => {
            entries.push((key.to_string(), empty()));
            entries.len() - 1
        }
    };
    let value = &mut entries[i].1;
    (std::mem::discriminant(value) == std::mem::discriminant(&empty())).then_some(value)
}

/// Follow `path`, creating mappings that are absent.
fn ensure_path<'a>(doc: &'a mut Yaml, path: &[Step]) -> Option<&'a mut Yaml> {
    path.iter().try_fold(doc, |node, step| match step {
        Step::Key(k) => ensure_map(node, k, false),
        Step::Index(i) => match node {
            Yaml::Seq(items) => items.get_mut(*i),
            _ => None,
        },
    })
}

/// The text a scalar reads as, for comparing quantities and strings (`1`, `"1"` and `'1'` alike).
fn scalar_text(y: &Yaml) -> Option<String> {
    match y {
        Yaml::Raw(s) => Some(s.clone()),
        Yaml::Int(n) => Some(n.to_string()),
        other => other.as_str().map(str::to_string),
    }
}

/// Everything a worker pod template gets besides env.
fn wire_pod(
    doc: &mut Yaml,
    t: &Template,
    index: usize,
    nets: Option<&[multus::Network]>,
    plan: &Plan,
    pod_namespace: Option<&str>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(template) = at_mut(doc, &t.path) else {
        return notes;
    };
    if let Some(annotations) = ensure_map(template, "metadata", !t.path.is_empty())
        .and_then(|m| ensure_map(m, "annotations", false))
    {
        set_str(annotations, crate::PROFILE_ANNOTATION, &plan.profile);
        if let Some(w) = plan.wiring.as_ref().filter(|w| !w.networks.is_empty()) {
            let merged = multus::merge(nets.unwrap_or(&[]), &w.networks, pod_namespace);
            annotations.insert(MULTUS_ANNOTATION, Yaml::Block(multus::render(&merged)));
        }
        // The provider's annotations (GKE's multi-network interfaces) attach NICs: a pod that states its own
        // keeps them (its networks, under the names its cluster gave them).
        for (k, v) in &plan.pod_annotations {
            if annotations.get(k).is_none() {
                set_str(annotations, k, v);
            }
        }
    }
    let Some(spec) = ensure_map(template, "spec", false) else {
        return notes;
    };
    // A pod that already picks its nodes by another cloud's labels is someone else's node pool: the
    // profile's labels would contradict it (its own label with another value is corrected).
    let cloud_picked = spec.get("nodeSelector").is_some_and(|sel| {
        let profile: Vec<&str> = plan.node_selector.iter().map(|(k, _)| k.as_str()).collect();
        <Yaml as templates::Tree>::keys(sel)
            .iter()
            .any(|k| roce_model::fabric::devices::foreign_node_label(k, &profile))
    });
    if cloud_picked && !plan.node_selector.is_empty() {
        notes.push(format!(
            "the {} selects its nodes by another cloud's labels: the profile's node labels are not added",
            t.label
        ));
    } else if !plan.node_selector.is_empty()
        && let Some(sel) = ensure_map(spec, "nodeSelector", false)
    {
        for (k, v) in &plan.node_selector {
            set_str(sel, k, v);
        }
    }
    let shm_name = if plan.shm {
        shm_volume(spec, index)
    } else {
        None
    };
    let rdma_devices = plan.host_network && host_network(spec, index);
    // The provider's host directories: a volume by name unless the manifest has one.
    if !plan.host_mounts.is_empty()
        && let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes")
    {
        for m in &plan.host_mounts {
            if !volumes
                .iter()
                .any(|v| v.get("name").and_then(Yaml::as_str) == Some(m.name.as_str()))
            {
                volumes.push(crate::pod::host_volume(m));
            }
        }
    }
    if plan.topology.is_some()
        && let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes")
        && let Some(t) = &plan.topology
        && !volumes.iter().any(|v| {
            v.get("name").and_then(Yaml::as_str)
                == Some(roce_model::fabric::provider::TOPOLOGY_VOLUME)
        })
    {
        volumes.push(crate::pod::topology_volume(t));
    }
    let Some(Yaml::Seq(containers)) = spec.get_mut_key("containers") else {
        return notes;
    };
    let Some(c) = containers.get_mut(index) else {
        return notes;
    };
    merge_resources(c, "resources", plan);
    if let Some(w) = &plan.wiring
        && !w.capabilities.is_empty()
        && let Some(add) = ensure_map(c, "securityContext", false)
            .and_then(|sc| ensure_map(sc, "capabilities", false))
            .and_then(|caps| ensure_seq(caps, "add"))
        && let Yaml::Seq(items) = add
    {
        for cap in &w.capabilities {
            if !items.iter().any(|i| i.as_str() == Some(cap.as_str())) {
                items.push(Yaml::Str(cap.to_string()));
            }
        }
    }
    if plan.host_network
        && let Some(sc) = ensure_map(c, "securityContext", false)
    {
        set_bool(sc, "privileged");
    }
    if rdma_devices && let Some(Yaml::Seq(mounts)) = ensure_seq(c, "volumeMounts") {
        mounts.push(crate::pod::rdma_device_mount());
    }
    if let Some(name) = shm_name
        && let Some(Yaml::Seq(mounts)) = ensure_seq(c, "volumeMounts")
    {
        mounts.push(
            Yaml::map()
                .with("name", name.as_str())
                .with("mountPath", "/dev/shm"),
        );
    }
    // ... and the container's mount of each, by mountPath, unless something is mounted there.
    if !plan.host_mounts.is_empty()
        && let Some(Yaml::Seq(mounts)) = ensure_seq(c, "volumeMounts")
    {
        for m in &plan.host_mounts {
            if !mounts
                .iter()
                .any(|x| x.get("mountPath").and_then(Yaml::as_str) == Some(m.mount_path.as_str()))
            {
                mounts.push(crate::pod::host_mount(m));
            }
        }
    }
    if let Some(t) = &plan.topology
        && let Some(Yaml::Seq(mounts)) = ensure_seq(c, "volumeMounts")
        && !mounts
            .iter()
            .any(|x| x.get("mountPath").and_then(Yaml::as_str) == Some(t.path.as_str()))
    {
        mounts.push(crate::pod::topology_mount(t));
    }
    notes
}

/// Set a string entry unless it already reads as `value`.
fn set_str(map: &mut Yaml, key: &str, value: &str) {
    if map.get(key).and_then(scalar_text).as_deref() != Some(value) {
        map.insert(key, Yaml::Str(value.to_string()));
    }
}

/// A host-network plan's pod spec: `hostNetwork: true`, `dnsPolicy: ClusterFirstWithHostNet` (unless the pod
/// chose a policy other than the default `ClusterFirst`, which a host-network pod would not get), and the
/// host's `/dev/infiniband` as a volume unless the container mounts something there. Returns whether the
/// container is to mount that volume.
fn host_network(spec: &mut Yaml, index: usize) -> bool {
    use roce_model::fabric::attach::{HOST_NETWORK, HOST_NETWORK_DNS_POLICY, RDMA_DEVICE_DIR};
    set_bool(spec, HOST_NETWORK);
    if spec
        .get("dnsPolicy")
        .and_then(scalar_text)
        .is_none_or(|p| p == "ClusterFirst")
    {
        set_str(spec, "dnsPolicy", HOST_NETWORK_DNS_POLICY);
    }
    let mounted = matches!(
        spec.get("containers"),
        Some(Yaml::Seq(cs)) if cs.get(index).and_then(|c| c.get("volumeMounts")).is_some_and(|m| matches!(m, Yaml::Seq(ms) if ms.iter().any(|m| m.get("mountPath").and_then(Yaml::as_str).map(|p| p.trim_end_matches('/')) == Some(RDMA_DEVICE_DIR))))
    );
    if mounted {
        return false;
    }
    if let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes")
        && !volumes.iter().any(|v| {
            v.get("name").and_then(Yaml::as_str)
                == Some(roce_model::fabric::attach::RDMA_DEVICE_VOLUME)
        })
    {
        volumes.push(crate::pod::rdma_device_volume());
    }
    true
}

/// Set a boolean entry to `true` unless it already is.
fn set_bool(map: &mut Yaml, key: &str) {
    if map.get(key) != Some(&Yaml::Bool(true))
        && map.get(key).and_then(scalar_text).as_deref() != Some("true")
    {
        map.insert(key, Yaml::Bool(true));
    }
}

/// Make sure `spec.volumes` has a memory-backed volume for `/dev/shm`, unless the container already mounts
/// something there. Returns the volume name to mount, or `None` when nothing is to be mounted.
fn shm_volume(spec: &mut Yaml, index: usize) -> Option<String> {
    let mounted = match spec.get("containers") {
        Some(Yaml::Seq(cs)) => cs.get(index).and_then(|c| c.get("volumeMounts")).is_some_and(|m| {
            matches!(m, Yaml::Seq(ms) if ms.iter().any(|m| m.get("mountPath").and_then(Yaml::as_str) == Some("/dev/shm")))
        }),
        _ => false,
    };
    if mounted {
        return None;
    }
    let Some(Yaml::Seq(volumes)) = ensure_seq(spec, "volumes") else {
        return None;
    };
    let is_memory = |v: &Yaml| {
        v.get("emptyDir")
            .and_then(|e| e.get("medium"))
            .and_then(Yaml::as_str)
            == Some("Memory")
    };
    for candidate in [SHM_VOLUME, "roce-dshm"] {
        match volumes
            .iter()
            .find(|v| v.get("name").and_then(Yaml::as_str) == Some(candidate))
        {
            Some(v) if is_memory(v) => return Some(candidate.to_string()),
            Some(_) => continue,
            None => {
                volumes.push(
                    Yaml::map()
                        .with("name", candidate)
                        .with("emptyDir", Yaml::map().with("medium", "Memory")),
                );
                return Some(candidate.to_string());
            }
        }
    }
    None
}

/// The wiring resources in requests and limits (GPUs are the workload's and never added).
fn merge_resources(c: &mut Yaml, key: &str, plan: &Plan) {
    let wiring: Vec<(String, String)> = plan
        .wiring
        .as_ref()
        .map(|w| {
            w.resources
                .iter()
                .map(|(r, q)| (r.to_string(), q.clone()))
                .collect()
        })
        .unwrap_or_default();
    // GPUs are the workload's, not the fabric's: a pod that asks for none (a GPU-less RDMA test, a CPU
    // router) keeps asking for none, and one that asks keeps its count.
    // Nothing to set (a DRA claim brings the GPUs and the NICs): leave `resources` as it is.
    if wiring.is_empty() {
        return;
    }
    let Some(resources) = ensure_map(c, key, false) else {
        return;
    };
    for side in ["requests", "limits"] {
        let Some(q) = ensure_map(resources, side, false) else {
            continue;
        };
        for (name, amount) in &wiring {
            set_str(q, name, amount);
        }
    }
}

/// Merge env by name. With `fix_only`, only entries that already exist are corrected (the other side of an
/// MPI job carries the env, and these would override it).
fn merge_env(c: &mut Yaml, env: &[(String, String)], fix_only: bool, plan: &Plan) {
    let present = |c: &Yaml, name: &str| matches!(c.get("env"), Some(Yaml::Seq(items)) if items.iter().any(|i| i.get("name").and_then(Yaml::as_str) == Some(name)));
    if fix_only && !env.iter().any(|(n, _)| present(c, n)) {
        return;
    }
    let Some(Yaml::Seq(items)) = ensure_seq(c, "env") else {
        return;
    };
    for (name, value) in env {
        let same_name = |i: &Yaml| i.get("name").and_then(Yaml::as_str) == Some(name.as_str());
        match items.iter().position(same_name) {
            Some(at) => {
                let item = &items[at];
                let have = item
                    .get("value")
                    .and_then(Yaml::as_str)
                    .filter(|_| item.get("valueFrom").is_none());
                let right = have == Some(value.as_str())
                    || have.is_some_and(|h| plan.acceptable(name, &unescape_dependent(h)));
                if !right {
                    // A search path keeps the manifest's entries (the MPI's, the image's) and gains the plan's.
                    let merged = match have {
                        Some(h) if roce_model::fabric::devices::path_like(name) => {
                            merge_paths(h, value)
                        }
                        _ => value.clone(),
                    };
                    items[at] = env_item(name, &merged);
                }
                let mut seen = 0;
                items.retain(|i| {
                    if same_name(i) {
                        seen += 1;
                        seen == 1
                    } else {
                        true
                    }
                });
            }
            None if fix_only => {}
            None => items.push(env_item(name, value)),
        }
    }
}

/// `have` with each entry of `want` it lacks appended (`:`-separated search paths).
fn merge_paths(have: &str, want: &str) -> String {
    let mut out = have.to_string();
    for w in want.split(':').filter(|w| !w.is_empty()) {
        if !have.split(':').any(|h| h == w) {
            if !out.is_empty() {
                out.push(':');
            }
            out.push_str(w);
        }
    }
    out
}

/// A manifest's env value as the program reads it (`$$` is Kubernetes' escape for `$`).
fn unescape_dependent(v: &str) -> String {
    v.replace("$$", "$")
}

/// Put the `roce exec` prefix in front of the container's `command` (or give an existing prefix `w`'s
/// profile), and drop the env entries of the variables `roce exec` computes.
fn wrap_command(c: &mut Yaml, w: &ExecWrap) {
    if let Some(Yaml::Seq(items)) = c.get_mut_key("env") {
        items.retain(|i| {
            !i.get("name")
                .and_then(Yaml::as_str)
                .is_some_and(is_pod_dependent)
        });
    }
    let Some(Yaml::Seq(command)) = c.get_mut_key("command") else {
        return;
    };
    let argv: Vec<&str> = command.iter().map(|i| i.as_str().unwrap_or("")).collect();
    if crate::exec::starts_behind_roce_exec(&argv) {
        if argv.get(2) == Some(&"--profile") && argv.get(3) != Some(&w.profile.as_str()) {
            command[3] = Yaml::from(w.profile.as_str());
        }
        return;
    }
    for (i, word) in w.prefix().into_iter().enumerate() {
        command.insert(i, Yaml::from(word));
    }
}

fn env_item(name: &str, value: &str) -> Yaml {
    Yaml::map()
        .with("name", name)
        .with("value", Yaml::Quoted(value.to_string()))
}

/// Forward the env from a launcher with `mpirun -x`: correct `-x NAME=VALUE` values that differ from the
/// plan; with `add`, append `-x NAME` for every variable not forwarded yet.
fn forward_env(
    doc: &mut Yaml,
    t: &Template,
    index: usize,
    env: &[(String, String)],
    add: bool,
    plan: &Plan,
) {
    let Some(argv) = container_argv(doc, t, index) else {
        return;
    };
    let Some(inv) = mpirun::find(&argv) else {
        return;
    };
    let Some(c) = container_mut(doc, t, index) else {
        return;
    };
    let n_command = match c.get("command") {
        Some(Yaml::Seq(items)) => items.len(),
        _ => 0,
    };
    // Edits to a script, applied from the end so byte ranges stay valid.
    let mut script_edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut new_args: Vec<String> = Vec::new();
    for (name, value) in env {
        match inv.forward(name) {
            Some(f) => {
                let Some(old) = &f.value else { continue };
                // A value that does what the profile's does (an exact HCA list of the same rails, a
                // search path holding the profile's entries), or another that only differs (another net
                // plugin), is the author's and stays.
                // `-x NAME=${NAME}`: the launcher shell's value, which roce cannot read.
                if old == value || old.contains('$') || plan.acceptable(name, old) {
                    continue;
                }
                let word = format!("{name}={value}");
                match &f.at {
                    mpirun::Place::Arg(j) => set_argv(c, n_command, *j, Yaml::Str(word)),
                    mpirun::Place::Script { range, .. } => {
                        if let Ok(q) = crate::quote::shell_single(&word) {
                            script_edits.push((range.clone(), q));
                        }
                    }
                }
            }
            None if add => new_args.push(name.clone()),
            None => {}
        }
    }
    match inv.script_after {
        Some(after) => {
            if !new_args.is_empty() {
                let flags: String = new_args.iter().map(|n| format!(" -x {n}")).collect();
                script_edits.push((after..after, flags));
            }
            if script_edits.is_empty() {
                return;
            }
            let Some(script) =
                argv_item(c, n_command, inv.item).and_then(|y| y.as_str().map(str::to_string))
            else {
                return;
            };
            let mut script = script;
            script_edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
            for (range, text) in script_edits {
                if range.end <= script.len()
                    && script.is_char_boundary(range.start)
                    && script.is_char_boundary(range.end)
                {
                    script.replace_range(range, &text);
                }
            }
            set_argv(c, n_command, inv.item, Yaml::Block(script));
        }
        None => {
            if new_args.is_empty() {
                return;
            }
            let flags: Vec<Yaml> = new_args
                .iter()
                .flat_map(|n| [Yaml::Plain("-x".into()), Yaml::Str(n.clone())])
                .collect();
            // After the mpirun item: at the start of `args` when mpirun ends `command`.
            let (key, at) = if inv.item + 1 == n_command && c.get("args").is_some() {
                ("args", 0)
            } else if inv.item < n_command {
                ("command", inv.item + 1)
            } else {
                ("args", inv.item - n_command + 1)
            };
            if let Some(Yaml::Seq(items)) = c.get_mut_key(key) {
                let at = at.min(items.len());
                items.splice(at..at, flags);
            }
        }
    }
}

fn argv_item(c: &mut Yaml, n_command: usize, j: usize) -> Option<&mut Yaml> {
    let (key, i) = if j < n_command {
        ("command", j)
    } else {
        ("args", j - n_command)
    };
    match c.get_mut_key(key) {
        Some(Yaml::Seq(items)) => items.get_mut(i),
        _ => None,
    }
}

fn set_argv(c: &mut Yaml, n_command: usize, j: usize, value: Yaml) {
    if let Some(slot) = argv_item(c, n_command, j) {
        *slot = value;
    }
}

/// Mutable access to a mapping's value.
trait GetMut {
    fn get_mut_key(&mut self, key: &str) -> Option<&mut Yaml>;
}

impl GetMut for Yaml {
    fn get_mut_key(&mut self, key: &str) -> Option<&mut Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}
