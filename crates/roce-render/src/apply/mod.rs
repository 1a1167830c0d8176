//! `roce apply`: wire a [`Plan`] into workload manifests the user already has.
//!
//! [`apply`] reads a multi-document YAML file ([`manifest::parse`]), finds every pod template in it
//! (`templates::discover`: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, the Kubeflow
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

mod components;
mod controllers;
mod dra;
pub(crate) mod mpirun;
pub(crate) mod multus;
mod object;
pub(crate) mod patches;
mod reemit;
mod scan;
mod splice;
pub(crate) mod templates;
pub(crate) mod view;

use roce_model::plumbing::manifest;
use roce_model::plumbing::tree::Node;
use roce_model::source::{Origin, Source, Sources};
use roce_model::{Code, Problem};

use roce_model::fabric::env::is_pod_dependent;

use crate::edits::{self, Edit};
pub(crate) use crate::edits::{GetMut, ensure_map, merge_env, merge_resources};
use crate::exec::ExecWrap;
use crate::plan::{GPU_RESOURCE, Plan};
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
        object: yaml::to_json(doc.after),
        added: wired
            .inserts
            .into_iter()
            .map(|(_, o)| yaml::to_json(o))
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
    let befores = nodes.iter().map(|n| reemit::to_yaml(n, text)).collect();
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
struct Work<'n> {
    templates: Vec<(Template, usize)>,
    /// What each template already gets, in any form (from [`Wiring`]).
    have: Vec<Have>,
    /// The Multus annotation's parsed networks, per template index (worker templates only).
    multus: Vec<Option<Vec<multus::Network<'n>>>>,
    pod_namespace: Option<String>,
}

/// What a pod template already gets from the fabric in some form, so `apply` leaves it alone.
#[derive(Debug, Clone, Default)]
struct Have {
    /// The requirements it meets in another form ([`edits::unmet`] leaves their edits out).
    met: edits::Met,
    /// The accelerators it asks for.
    accelerators: Vec<roce_model::fabric::devices::Accelerator>,
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
    /// `NCCL_NET_PLUGIN` names the plugin by path: NCCL opens that file as given, so the profile's
    /// `LD_LIBRARY_PATH` is not needed to find it, and written into the container it would replace the
    /// image's own search path outright (Kubernetes' env overrides the image's).
    plugin_by_path: bool,
}

impl Have {
    /// Does the rank get `name` elsewhere (a ConfigMap, the launcher's `mpirun`), or should it keep its
    /// own: a host-network pod's device selections, a NIXL server's UCX under a TCP profile (pinning it to
    /// TCP would move its KV cache over sockets), the image's library path where the plugin is named by
    /// path?
    fn sets_otherwise(&self, name: &str, plan: &Plan) -> bool {
        self.env_elsewhere.iter().any(|x| x == name)
            // On a host-network profile the node's device names are the profile's.
            || (self.host_network
                && !plan.host_network
                && roce_model::fabric::env::selects_devices(name))
            || (self.kv_nixl
                && plan.ucx_mode == roce_model::model::UcxMode::Tcp
                && name.starts_with(roce_model::fabric::env::UCX_PREFIX))
            || (self.plugin_by_path && name == roce_model::fabric::provider::LD_LIBRARY_PATH)
    }

    fn of(w: &Wiring<'_>, v: &view::PodView<'_>, plan: &Plan, pod_namespace: Option<&str>) -> Have {
        use crate::wiring::EnvFrom;
        Have {
            met: edits::Met::read(w, v, plan, pod_namespace),
            accelerators: w.accelerators(),
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
            plugin_by_path: w
                .var(roce_model::fabric::env::NCCL_NET_PLUGIN.name)
                .and_then(|v| v.value.as_deref())
                .is_some_and(roce_model::fabric::nccl::plugins_by_path),
        }
    }
}

/// Find and check the templates of one document. `Ok(None)` for a kind roce does not know.
fn plan_document<'n>(
    node: &'n Node,
    input: &Input<'n>,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
) -> Result<Option<Work<'n>>, Vec<Problem>> {
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

/// The env the plan sets, as (name, value as the container must see it in a manifest: `mpirun -x`'s words).
fn plan_env(plan: &Plan) -> Vec<(String, String)> {
    plan.env
        .iter()
        .map(|e| {
            (
                e.name.clone(),
                crate::expansion::escape_dependent_vars(&e.value),
            )
        })
        .collect()
}

/// The env the plan sets, as the program reads it ([`merge_env`] escapes what it writes).
fn raw_env(plan: &Plan) -> Vec<(String, String)> {
    plan.env
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect()
}

/// Apply the plan to one document's templates. Returns the paths of the templates that claim DRA devices
/// (whose objects the file must then have).
fn apply_document(
    doc: &mut Yaml,
    work: &Work<'_>,
    plan: &Plan,
    opts: &ApplyOptions,
    wrap: Option<&ExecWrap>,
    notes: &mut Vec<String>,
    file: &str,
) -> Vec<Vec<Step>> {
    let mut claimed = Vec::new();
    let has_launcher = work.templates.iter().any(|(t, _)| t.role == Role::Launcher);
    // Can every launcher forward the env? Only then may the workers go without it.
    let launchers_forward = work
        .templates
        .iter()
        .filter(|(t, _)| t.role == Role::Launcher)
        .all(|(t, i)| container_argv(doc, t, *i).is_some_and(|argv| mpirun::find(&argv).is_some()));
    let env_on_launcher = has_launcher && opts.role != RoleChoice::Worker && launchers_forward;
    let mut d = DocApply {
        work,
        plan,
        wrap,
        file,
        notes,
        env: plan_env(plan),
        raw: raw_env(plan),
        // Behind `roce exec` the pod-dependent variables are computed at start-up: a static value would
        // win (the requirements leave them out).
        reqs: edits::requirements(plan, wrap),
        env_on_launcher,
        env_on_workers: !env_on_launcher || opts.role == RoleChoice::All,
    };
    if has_launcher && opts.role != RoleChoice::Worker && !launchers_forward {
        d.notes.push(format!(
            "{file}: the launcher's command is not an Open MPI `mpirun` invocation, so the env cannot be \
             forwarded with `-x`; it goes into the worker pods' env instead"
        ));
    }
    for (((t, container), nets), have) in work.templates.iter().zip(&work.multus).zip(&work.have) {
        match (t.role, t.form) {
            (Role::Worker, Form::Pod) => {
                if d.worker_pod(doc, t, *container, nets.as_deref(), have) {
                    claimed.push(t.path.clone());
                }
            }
            (Role::Worker, Form::Trainer) => d.trainer(doc, t),
            // A router moves no tensors; a bare PodSpec has no metadata for the networks annotation,
            // so half the wiring could not be written: both are left as they are.
            (Role::Router, _) => {}
            (Role::Worker, Form::Spec) => d.notes.push(format!(
                "{file}: the {} is a bare PodSpec (no `metadata`, so no networks annotation can go there); \
                 left unchanged: wire it where its controller builds the pod, or by hand (`roce lint` says what is missing)",
                t.label
            )),
            // The env goes into the workers' pods: the launcher is the user's and stays as written, but a
            // value it forwards with `mpirun -x NAME=VALUE` reaches every rank instead of the pod's.
            (Role::Launcher, _) if opts.role == RoleChoice::Worker => {
                for (name, old, value) in overriding_forwards(doc, t, *container, &d.env, plan) {
                    d.notes.push(format!(
                        "{file}: the {} forwards `{name}={old}` with `mpirun -x`, which every rank gets instead of its pod's `{name}`: left as written (apply does not edit a launcher's command unless `--role launcher` or `all` asks it to); the profile's value is `{value}`",
                        t.label
                    ));
                }
            }
            (Role::Launcher, _) => {
                if let Some(c) = container_mut(doc, t, *container) {
                    merge_env(c, &d.raw, !d.env_on_launcher, plan);
                }
                forward_env(doc, t, *container, &d.env, d.env_on_launcher, plan);
            }
        }
    }
    claimed
}

/// What applying the plan to one document's templates shares: the plan's env and requirements, where
/// the env goes (launcher, workers or both), and the notes for the user.
struct DocApply<'d> {
    work: &'d Work<'d>,
    plan: &'d Plan,
    wrap: Option<&'d ExecWrap>,
    file: &'d str,
    notes: &'d mut Vec<String>,
    /// The plan's env as a manifest carries it ([`plan_env`]).
    env: Vec<(String, String)>,
    /// The plan's env as the program reads it ([`raw_env`]).
    raw: Vec<(String, String)>,
    reqs: Vec<edits::Requirement>,
    env_on_launcher: bool,
    env_on_workers: bool,
}

impl DocApply<'_> {
    /// A worker Pod template: the edits of the requirements it does not meet yet, the `roce exec` wrap,
    /// and notes on GPUs and DRA; `true` when it now claims DRA devices. A pod for other accelerators
    /// is left alone.
    fn worker_pod(
        &mut self,
        doc: &mut Yaml,
        t: &Template,
        container: usize,
        nets: Option<&[multus::Network<'_>]>,
        have: &Have,
    ) -> bool {
        let (plan, file) = (self.plan, self.file);
        if let Some(other) = have
            .accelerators
            .iter()
            .find(|a| **a != roce_model::fabric::devices::Accelerator::Nvidia)
        {
            self.notes.push(format!(
                "{file}: the {} asks for {}; the profile wires nodes with NVIDIA GPUs, so it is left unchanged",
                t.label,
                other.describe()
            ));
            return false;
        }
        let (mut chosen, kept) = edits::unmet(&self.reqs, &have.met);
        for k in kept {
            self.notes.push(format!("{file}: the {} {k}", t.label));
        }
        // What the rank gets elsewhere (a ConfigMap, the launcher's mpirun) is not set again; a
        // KV-transfer server keeps its UCX as configured.
        chosen.retain(|e| !matches!(e, Edit::Env(v) if have.sets_otherwise(&v.name, plan)));
        let mut changed = Vec::new();
        let mut claimed = false;
        // A container kept outside the pod spec (a NodeSet's slurmd) is the pod's first: the edits are
        // written with it in place there, then it goes back where the kind keeps it.
        let outside = t
            .container
            .as_ref()
            .and_then(|p| lend_container(doc, &t.path, p));
        let container = if outside.is_some() { 0 } else { container };
        if let Some(template) = at_mut(doc, &t.path) {
            changed = edits::write(
                template,
                container,
                &chosen,
                plan,
                edits::Context {
                    networks: nets,
                    pod_namespace: self.work.pod_namespace.as_deref(),
                    metadata_first: !t.path.is_empty(),
                    env_fix_only: !self.env_on_workers,
                },
            );
            claimed = chosen.iter().any(|e| matches!(e, Edit::PodClaim(_)));
        }
        if let (Some(created), Some(p)) = (outside, &t.container) {
            return_container(doc, &t.path, p, created);
        }
        if let Some(c) = container_mut(doc, t, container) {
            if let Some(w) = self.wrap {
                wrap_command(c, w);
            }
            if have.accelerators.is_empty() && plan.gpu_resource {
                self.notes.push(format!(
                    "{file}: the {} asks for no GPU: roce adds none (a GPU-less pod stays GPU-less); \
                     add `{GPU_RESOURCE}: {}` to its resources if it runs ranks",
                    t.label, plan.gpus_per_node
                ));
            }
        }
        if !changed.is_empty() {
            self.notes.push(format!(
                "{file}: the {} gets the profile's DRA wiring: {}",
                t.label,
                changed.join("; ")
            ));
        }
        if !plan.gpu_resource
            && container_mut(doc, t, container).is_some_and(|c| requests_gpu(c, "resources"))
        {
            self.notes.push(format!(
                "{file}: the {} requests {GPU_RESOURCE}, but the profile's DRA claim allocates the \
                 GPUs: remove {GPU_RESOURCE}, or the pod asks for its GPUs twice",
                t.label
            ));
        }
        claimed
    }

    /// A TrainJob's trainer: env and the fabric's resources only; the rest belongs in its
    /// TrainingRuntime, which the notes say.
    fn trainer(&mut self, doc: &mut Yaml, t: &Template) {
        let (plan, file) = (self.plan, self.file);
        let Some(trainer) = ensure_path(doc, &t.path) else {
            return;
        };
        merge_env(trainer, &self.raw, !self.env_on_workers, plan);
        merge_resources(trainer, "resourcesPerNode", &fabric_resources(&self.reqs));
        if plan.wiring.is_some() {
            self.notes.push(format!(
                "{file}: a TrainJob carries env and resources only; the Multus networks, IPC_LOCK, \
                 /dev/shm and node selector belong in its TrainingRuntime (run roce apply on that too)"
            ));
        }
        if self.reqs.iter().any(|r| {
            r.edits.iter().any(|e| {
                matches!(
                    e,
                    Edit::PodClaim(_) | Edit::Affinity(_) | Edit::Label { .. }
                ) || matches!(e, Edit::Annotation { merge: edits::Merge::Set, key, .. } if key != crate::PROFILE_ANNOTATION)
            })
        }) {
            self.notes.push(format!(
                "{file}: a TrainJob cannot carry DRA claims or pod affinity: they and the objects \
                 the claims name belong in its TrainingRuntime (run roce apply on that too); a \
                 `resourcesPerNode` here replaces the runtime container's resources, so check that \
                 its `claims` survive in the Trainer release you run"
            ));
        }
    }
}

/// The fabric's resources (the RDMA devices'), without the GPUs: what a TrainJob's `resourcesPerNode` gets.
fn fabric_resources(reqs: &[edits::Requirement]) -> Vec<(&str, &str)> {
    reqs.iter()
        .filter(|r| r.need == edits::Need::RdmaDevices)
        .flat_map(|r| r.edits.iter())
        .filter_map(|e| match e {
            Edit::Resource { name, quantity } => Some((name.as_str(), quantity.as_str())),
            _ => None,
        })
        .collect()
}

/// Does the container (or trainer, `key` = `resourcesPerNode`) request or limit GPUs as a resource?
fn requests_gpu(c: &Yaml, key: &str) -> bool {
    c.get(key).is_some_and(|r| {
        ["requests", "limits"]
            .iter()
            .any(|side| r.get(side).and_then(|s| s.get(GPU_RESOURCE)).is_some())
    })
}

/// Move the container at `from` to the front of the template's `spec.containers` (creating the template,
/// its spec and the list where absent); `Some(created)` when it was moved, `created` saying whether the
/// list was made for it.
fn lend_container(doc: &mut Yaml, template: &[Step], from: &[Step]) -> Option<bool> {
    let c = at_mut(doc, from).filter(|c| matches!(c, Yaml::Map(_)))?;
    let c = std::mem::replace(c, Yaml::Null);
    let spec = ensure_path(doc, template).and_then(|t| ensure_map(t, "spec", false));
    let created = spec.as_ref().is_some_and(|s| s.get("containers").is_none());
    let list = spec.and_then(|spec| {
        if created {
            spec.insert("containers", Yaml::seq());
        }
        match spec.get_mut_key("containers") {
            Some(Yaml::Seq(items)) => Some(items),
            _ => None,
        }
    });
    match list {
        Some(items) => {
            items.insert(0, c);
            Some(created)
        }
        // No pod spec to write into: the container stays where it was.
        None => {
            if let Some(slot) = at_mut(doc, from) {
                *slot = c;
            }
            None
        }
    }
}

/// Put the container [`lend_container`] moved back at `to`, and drop the list it made.
fn return_container(doc: &mut Yaml, template: &[Step], to: &[Step], created: bool) {
    let mut path = template.to_vec();
    path.push(Step::Key("spec".into()));
    let Some(spec) = at_mut(doc, &path) else {
        return;
    };
    let c = match spec.get_mut_key("containers") {
        Some(Yaml::Seq(items)) if !items.is_empty() => items.remove(0),
        _ => return,
    };
    if created && let Yaml::Map(entries) = spec {
        entries.retain(|(k, _)| k != "containers");
    }
    if let Some(slot) = at_mut(doc, to) {
        *slot = c;
    }
}

fn container_path(t: &Template, index: usize) -> Vec<Step> {
    if let Some(p) = &t.container {
        return p.clone();
    }
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

/// Follow `path`, creating mappings that are absent.
fn ensure_path<'a>(doc: &'a mut Yaml, path: &[Step]) -> Option<&'a mut Yaml> {
    path.iter().try_fold(doc, |node, step| match step {
        Step::Key(k) => ensure_map(node, k.clone(), false),
        Step::Index(i) => match node {
            Yaml::Seq(items) => items.get_mut(*i),
            _ => None,
        },
    })
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

/// Does a value forwarded with `-x NAME=VALUE` work against the plan's? A value that does what the
/// profile's does (an exact HCA list of the same rails, a search path holding the profile's entries), or
/// another that only differs (another net plugin), is the author's and stays; `-x NAME=${NAME}` is the
/// launcher shell's value, which roce cannot read.
fn overrides(name: &str, old: &str, value: &str, plan: &Plan) -> bool {
    old != value && !old.contains('$') && !plan.acceptable(name, old)
}

/// The `-x NAME=VALUE` forwards of a launcher whose value is not the plan's: `(name, forwarded, plan's)`.
fn overriding_forwards(
    doc: &mut Yaml,
    t: &Template,
    index: usize,
    env: &[(String, String)],
    plan: &Plan,
) -> Vec<(String, String, String)> {
    let Some(argv) = container_argv(doc, t, index) else {
        return Vec::new();
    };
    let Some(inv) = mpirun::find(&argv) else {
        return Vec::new();
    };
    env.iter()
        .filter_map(|(name, value)| {
            let old = inv.forward(name)?.value.as_ref()?;
            overrides(name, old, value, plan).then(|| (name.clone(), old.clone(), value.clone()))
        })
        .collect()
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
                if !overrides(name, old, value, plan) {
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
