//! `roce lint`: check hand-written workload manifests against a profile.
//!
//! A [`Linter`] is built once from a profile; [`Linter::lint`] reads one multi-document YAML file, finds
//! every pod template in it (the same discovery as `roce apply`, `roce_render::apply::templates`), and
//! compares each with the profile's plan. Every problem points at the line and column in the manifest and
//! says how to fix it — usually with the `roce apply` command that does. The library reads no files: the
//! CLI walks directories and lints their files on a thread pool whose threads call [`Linter::lint_here`].
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly, Source};
//! use roce_inspect::lint::{Linter, LintOptions};
//! let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
//! let linter = Linter::new(&profile, LintOptions::default());
//! let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n";
//! let report = linter.lint(Source::new("pod.yaml", pod));
//! let ipc = report.problems.iter().find(|p| p.code.as_str() == "roce::lint::ipc_lock").unwrap();
//! assert_eq!(ipc.location().unwrap().line, 7); // `- name: main`
//! assert!(report.has_errors());
//! ```

pub mod auto;
mod invariants;
mod kueue;

use std::collections::BTreeSet;

use roce_model::fabric::dra::NvlinkDomain;
use roce_model::fabric::dra::rules::{
    ChannelConcern, FoundPodClaim, channel_claim_concern, clique_affinity_concern,
    nic_claim_concern,
};
use roce_model::fabric::dra::{CLIQUE_LABEL, KUEUE_REQUIRED_TOPOLOGY};
use roce_model::fabric::provider::{self, EnvNeed, Provider};
use roce_model::fabric::{env, nccl, ofi_platform};
use roce_model::model::{NadRef, Profile, UcxMode};
use roce_model::plumbing::manifest;
use roce_model::plumbing::tree::{Entry, Node, Scalar, Value};
use roce_model::source::{Origin, Source, Sources};
use roce_model::ucx_list::{self, TlsList};
use roce_model::{Code, Problem, Severity};
use roce_render::Plan;
use roce_render::apply;
use roce_render::edits::{Edit, Gap, Need, Requirement};
use roce_render::exec::starts_behind_roce_exec;
use roce_render::plan::MULTUS_ANNOTATION;
use roce_render::plumbing::edits::Met;
use roce_render::plumbing::pod::escape_dependent_vars;
use roce_render::plumbing::templates::{self, FABRIC_KINDS, Form, Role, Template};
use roce_render::plumbing::view::{self, NodeLabel, PodView, entry, required_node_label, text};
use roce_render::plumbing::wiring::{Input, RdmaAccess, Wiring};
use roce_render::plumbing::{mpirun, multus};

/// Options of a [`Linter`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintOptions {
    /// The container to check in each template (default: the first), as `roce apply --container`.
    pub container: Option<String>,
    /// How the user named the profile on the command line, for the `roce apply` hint (default: its name).
    pub profile_arg: Option<String>,
}

/// The result of linting one file.
#[derive(Debug, Clone, Default)]
pub struct FileReport {
    /// Every problem, resolved against the file and sorted by position.
    pub problems: Vec<Problem>,
    /// Documents in the file.
    pub documents: usize,
    /// Pod templates checked.
    pub templates: usize,
}

impl FileReport {
    /// Did any error (not a warning) turn up?
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }
}

/// Checks of manifests, built once: the invariants that hold for every fabric, and what a profile (where
/// one is given) expects of every pod template.
#[derive(Debug, Clone)]
pub struct Linter {
    expect: Option<Expect>,
    opts: LintOptions,
}

/// What the profile expects of every pod template, computed once.
#[derive(Debug, Clone)]
struct Expect {
    plan: Plan,
    /// (name, value as written in a manifest: `$(` escaped), in plan order.
    env: Vec<(String, String)>,
    nads: Vec<NadRef>,
    /// For each of `nads`, the index of the first NAD equal to it, and how many are.
    nad_first: Vec<usize>,
    nad_copies: Vec<usize>,
    plan_hca: BTreeSet<(String, u32)>,
    ucx_mode: UcxMode,
    plan_tls: Option<TlsList>,
    /// What the profile needs of every worker pod, in the order the checks run.
    requirements: Vec<Requirement>,
    nvlink_domain: NvlinkDomain,
    /// The network provider, and the variables it needs with the value to find (the profile's).
    provider: Provider,
    provider_env: Vec<(EnvNeed, String)>,
    /// What aws-ofi-nccl sets itself on the profile's instance type (`fabric::ofi_platform`), with the type.
    ofi_defaults: Option<(String, Vec<ofi_platform::PluginDefault>)>,
}

impl Linter {
    /// Prepare the checks for `profile`.
    pub fn new(profile: &Profile, opts: LintOptions) -> Self {
        Linter {
            expect: Some(Expect::new(profile)),
            opts,
        }
    }

    /// Checks without a profile: only the invariants that hold for every fabric (`roce lint PATH`).
    pub fn without_profile(opts: LintOptions) -> Self {
        Linter { expect: None, opts }
    }

    /// The plan the checks compare with, when there is a profile.
    pub fn plan(&self) -> Option<&Plan> {
        self.expect.as_ref().map(|x| &x.plan)
    }

    /// The `roce apply` command that fixes a file.
    fn apply_hint(&self, file: &str) -> String {
        let profile = self
            .opts
            .profile_arg
            .as_deref()
            .or(self.plan().map(|p| p.profile.as_str()))
            .unwrap_or("PROFILE");
        let container = self
            .opts
            .container
            .as_ref()
            .map(|c| format!(" --container {c}"))
            .unwrap_or_default();
        format!("roce apply --in-place {file} --profile {profile}{container}")
    }

    /// Lint one manifest file (every document in it).
    pub fn lint(&self, source: Source) -> FileReport {
        self.lint_with(source, manifest::parse)
    }

    /// [`Linter::lint`] on the calling thread, which must have [`manifest::STACK_BYTES`] of stack (a thread
    /// pool that lints many files gives its threads that much, and saves a thread start per file).
    pub fn lint_here(&self, source: Source) -> FileReport {
        self.lint_with(source, manifest::parse_here)
    }

    fn lint_with(&self, source: Source, parse: ParseFn) -> FileReport {
        let mut sources = Sources::default();
        let id = sources.add(source);
        let src = sources.get(id);
        let mut report = FileReport::default();
        let mut problems = Vec::new();
        // Where each document starts: one cause is one finding per document, not across objects.
        let mut doc_starts = Vec::new();
        match parse(&src.text, id) {
            Err(p) => problems.push(*p),
            Ok(mut docs) => {
                report.documents = docs.len();
                doc_starts = docs.iter().map(|d| d.origin.range().start).collect();
                docs.iter_mut()
                    .for_each(roce_render::plumbing::templates::merge_template_patches);
                let input = Input::read(&docs);
                let pods: Vec<Option<Pods>> = docs
                    .iter()
                    .map(|doc| Pods::read(doc, &input, self.opts.container.as_deref()))
                    .collect();
                for (doc, pods) in docs.iter().zip(&pods) {
                    report.templates += invariants::document(
                        doc,
                        pods.as_ref(),
                        &input,
                        self.expect.is_none(),
                        self.expect.as_ref().is_some_and(|x| {
                            x.requirements.iter().any(|r| r.need == Need::NvlinkDomain)
                        }),
                        &mut problems,
                    )
                    .templates;
                }
                if let Some(x) = &self.expect {
                    let mut cx = Cx {
                        linter: x,
                        text: &src.text,
                        hint: self.apply_hint(&src.name),
                        problems: &mut problems,
                        doc_at: Origin::new(id, 0..0),
                        ranks_rdma: false,
                    };
                    for (doc, pods) in docs.iter().zip(&pods) {
                        if let Some(pods) = pods {
                            cx.document(doc, pods);
                        }
                    }
                }
                if report.templates == 0 {
                    problems.push(no_pod_template(&docs, id));
                }
            }
        }
        let mut problems: Vec<Problem> = one_per_cause(problems, &doc_starts)
            .into_iter()
            .map(|p| p.resolve(&sources))
            .collect();
        roce_model::problem::sort(&mut problems);
        report.problems = problems;
        report
    }

    /// The report for a file larger than lint reads ([`MAX_MANIFEST_BYTES`]).
    pub fn too_large(&self, name: &str, bytes: u64) -> FileReport {
        let mut sources = Sources::default();
        sources.add(Source::new(name, ""));
        FileReport {
            problems: vec![Problem::new(
                Code::LintSyntax,
                format!(
                    "{name} is {} MiB; roce reads manifests of at most {} MiB (one file's documents are held together, so its size bounds what linting it costs)",
                    bytes >> 20,
                    MAX_MANIFEST_BYTES >> 20
                ),
            )
            .help("split it into smaller files (a directory of them is linted file by file)")],
            ..FileReport::default()
        }
    }

    /// Lint text that is not UTF-8: one `roce::lint::syntax` problem.
    pub fn not_text(&self, name: &str) -> FileReport {
        let mut sources = Sources::default();
        let id = sources.add(Source::new(name, ""));
        FileReport {
            problems: vec![manifest::not_text(id).resolve(&sources)],
            ..FileReport::default()
        }
    }
}

/// The largest file lint reads: beyond serde-saphyr's budgets (64 MiB of scalar text, 1,024 documents)
/// whatever it holds, so reading it whole would only cost memory before the refusal.
pub const MAX_MANIFEST_BYTES: u64 = 128 << 20;

impl Expect {
    fn new(profile: &Profile) -> Self {
        let plan = roce_render::plan::lower(profile);
        let env: Vec<(String, String)> = plan
            .env
            .iter()
            .map(|e| (e.name.clone(), escape_dependent_vars(&e.value)))
            .collect();
        let provider = profile.nccl_net.provider.value.clone();
        let instance = profile
            .node_pool
            .instance_type
            .as_ref()
            .map(|t| t.value.as_str());
        // What the provider needs and the profile asks for: a required variable always, another one when
        // the profile sets it, and none that would abort on an instance without GPUDirect RDMA over EFA.
        let provider_env = provider
            .env_needs()
            .iter()
            .filter(|n| !(n.gdr_only && provider::efa_device_rdma(instance) == Some(false)))
            .filter_map(|n| {
                let set = plan.env_value(n.name);
                (n.required || set.is_some()).then(|| (*n, set.unwrap_or(n.value).to_string()))
            })
            .collect();
        let ofi_defaults = (provider == Provider::Ofi)
            .then_some(instance)
            .flatten()
            .map(|t| (t.to_string(), ofi_platform::defaults(t)));
        let nads: Vec<NadRef> = plan
            .wiring
            .as_ref()
            .map(|w| w.networks.clone())
            .unwrap_or_default();
        let nad_first: Vec<usize> = nads
            .iter()
            .map(|n| nads.iter().position(|x| x == n).unwrap_or_default())
            .collect();
        let nad_copies = nads
            .iter()
            .map(|n| nads.iter().filter(|x| *x == n).count())
            .collect();
        let mut linter = Expect {
            provider,
            provider_env,
            ofi_defaults,
            nads,
            nad_first,
            nad_copies,
            plan_hca: BTreeSet::new(),
            ucx_mode: profile.ucx.mode.value,
            plan_tls: plan
                .env_value(env::UCX_TLS.name)
                .map(|t| ucx_list::parse_tls(t).0),
            env,
            requirements: roce_render::edits::requirements(&plan, None),
            plan,
            nvlink_domain: profile.nvlink_domain.value.clone(),
        };
        linter.plan_hca = match linter.plan.env_value(env::NCCL_IB_HCA.name) {
            Some(v) => linter.plan.hca_selects(v),
            None => linter.plan.rail_ports.iter().cloned().collect(),
        };
        linter
    }

    /// Is `name` one of the provider's variables that [`Cx::provider_env`] checks?
    fn is_provider_var(&self, name: &str) -> bool {
        self.provider_env.iter().any(|(n, _)| n.name == name)
    }
}

/// One finding per cause: problems of one document with the same code and message (the same network listed
/// sixteen times, the same gap in every replica) become one, with each further place as a related label.
fn one_per_cause(problems: Vec<Problem>, doc_starts: &[usize]) -> Vec<Problem> {
    // The document a problem's first place is in (two Deployments with the same mistake are two findings).
    let doc = |p: &Problem| {
        p.labels
            .first()
            .map(|l| doc_starts.partition_point(|s| *s <= l.origin.range().start))
    };
    let mut out: Vec<Problem> = Vec::with_capacity(problems.len());
    for p in problems {
        match out
            .iter_mut()
            .find(|q| q.code == p.code && q.message == p.message && doc(q) == doc(&p))
        {
            Some(q) => {
                if let Some(first) = p.labels.into_iter().next()
                    && !q.labels.iter().any(|l| l.origin == first.origin)
                {
                    q.labels.push(roce_model::problem::Label {
                        origin: first.origin,
                        text: "and here".to_string(),
                    });
                }
            }
            None => out.push(p),
        }
    }
    out
}

/// `roce::lint::no_pod_template`: nothing in the file was checked. A file of fabric objects only (NADs,
/// SR-IOV networks, DeviceClasses…) is not a workload file, and its objects were checked as they are.
fn no_pod_template(docs: &[Node], id: roce_model::source::SourceId) -> Problem {
    let kinds: Vec<&str> = docs.iter().filter_map(|d| text(d, "kind")).collect();
    let at = docs
        .iter()
        .find_map(|d| entry(d, "kind").map(|e| e.node.origin))
        .unwrap_or(Origin::new(id, 0..0));
    let mut p = Problem::new(
        Code::LintNoPodTemplate,
        if kinds.is_empty() {
            "no Kubernetes object in this file, so nothing was checked".to_string()
        } else {
            format!(
                "no pod template found in this file ({}), so no pod was checked",
                kinds.join(", ")
            )
        },
    )
    .at(at, "no pod template")
    .help("a workload keeps its pods in a `containers` list of mappings with `name` and `image`; pass --allow-empty when a run may hold no workload");
    if !kinds.is_empty() && kinds.iter().all(|k| FABRIC_KINDS.contains(k)) {
        p.severity = Severity::Info;
    }
    p
}

/// A document's pod templates, read once for the invariants and the profile's checks.
struct Pods<'a> {
    found: Vec<Template>,
    missing: Vec<templates::Missing>,
    /// Each template's view, in `found`'s order, or the problems that keep it from having one.
    views: Vec<Result<PodView<'a>, Vec<Problem>>>,
    /// What each worker pod (not a TrainJob's trainer) gets, in `found`'s order.
    wirings: Vec<Option<Wiring<'a>>>,
}

impl<'a> Pods<'a> {
    fn read(doc: &'a Node, input: &Input<'a>, container: Option<&str>) -> Option<Self> {
        let (found, missing) = templates::discover(doc)?;
        let views: Vec<_> = found
            .iter()
            .map(|t| view::view(doc, t, container))
            .collect();
        let launcher = found
            .iter()
            .zip(&views)
            .find_map(|(t, v)| v.as_ref().ok().filter(|_| t.role == Role::Launcher));
        let wirings = found
            .iter()
            .zip(&views)
            .map(|(t, v)| match (v, t.role, t.form) {
                (Ok(v), Role::Worker, Form::Pod | Form::Spec) => {
                    let mut w = Wiring::read(v, input, launcher);
                    w.merged_with_preset = invariants::merges_preset(t);
                    Some(w)
                }
                _ => None,
            })
            .collect();
        Some(Pods {
            found,
            missing,
            views,
            wirings,
        })
    }

    /// The templates that have a view, with it and (for a worker pod) its wiring.
    fn viewed(&self) -> impl Iterator<Item = (&Template, &PodView<'a>, Option<&Wiring<'a>>)> {
        self.found
            .iter()
            .zip(&self.views)
            .zip(&self.wirings)
            .filter_map(|((t, v), w)| Some((t, v.as_ref().ok()?, w.as_ref())))
    }
}

/// A manifest parser: [`manifest::parse`] or [`manifest::parse_here`].
type ParseFn = fn(&str, roce_model::source::SourceId) -> Result<Vec<Node>, Box<Problem>>;

/// One file's checking context against a profile.
struct Cx<'a> {
    linter: &'a Expect,
    text: &'a str,
    hint: String,
    problems: &'a mut Vec<Problem>,
    /// The current document's place (its `kind`), for problems with no better place.
    doc_at: Origin,
    /// Every rank of the current document has RDMA devices and may lock memory, so UCX's RDMA transports
    /// can come up there.
    ranks_rdma: bool,
}

/// A variable the launcher forwards with `mpirun -x`.
struct Forwarded {
    name: String,
    value: Option<String>,
    /// Where the `NAME=VALUE` word is.
    at: Origin,
}

impl<'a> Cx<'a> {
    fn push(&mut self, p: Problem) {
        self.problems.push(p);
    }

    /// Check one document's pod templates.
    fn document(&mut self, doc: &'a Node, pods: &Pods<'a>) {
        self.doc_at = entry(doc, "kind").map_or(doc.origin, |e| e.node.origin);
        for m in &pods.missing {
            self.push(apply::missing_problem(doc, m));
        }
        for p in pods.views.iter().filter_map(|v| v.as_ref().err()) {
            self.problems.extend(p.iter().cloned());
        }
        let forwarded: Vec<Forwarded> = pods
            .viewed()
            .filter(|(t, _, _)| t.role == Role::Launcher)
            .flat_map(|(_, v, _)| self.forwards(v))
            .collect();
        let pod_namespace = entry(doc, "metadata").and_then(|m| text(&m.node, "namespace"));
        let mut ranks = pods
            .viewed()
            .filter(|(t, _, _)| t.role == Role::Worker)
            .filter_map(|(_, _, w)| w)
            .peekable();
        self.ranks_rdma =
            ranks.peek().is_some() && ranks.all(|w| w.rdma_access().is_some() && w.memlock());
        for (t, v, w) in pods.viewed() {
            match (t.role, t.form, w) {
                (Role::Router, ..) => {}
                (Role::Launcher, ..) => self.launcher(t, v),
                (Role::Worker, Form::Trainer, _) => self.trainer(t, v),
                (Role::Worker, _, Some(w)) => self.worker(t, v, w, &forwarded, pod_namespace),
                (Role::Worker, _, None) => {}
            }
        }
        for f in &forwarded {
            // `-x NAME=${NAME}`: the launcher shell's value, known at run time only.
            if let Some(value) = f.value.as_ref().filter(|v| !v.contains('$')) {
                self.value_check(
                    &f.name,
                    ValueAt::Text(value, f.at),
                    "forwarded with `mpirun -x`",
                );
            }
        }
    }

    /// The `-x` forwards of a launcher's mpirun invocation, with their places.
    fn forwards(&self, v: &PodView<'a>) -> Vec<Forwarded> {
        let Some((_, c)) = v.container else {
            return Vec::new();
        };
        let items: Vec<&'a Node> = ["command", "args"]
            .iter()
            .filter_map(|k| entry(c, k))
            .flat_map(|e| match &e.node.value {
                Value::Seq(items) => items.iter().collect(),
                _ => Vec::new(),
            })
            .collect();
        let argv: Vec<&str> = items
            .iter()
            .map(|n| match &n.value {
                Value::Scalar(Scalar::Str(s)) => s.as_str(),
                _ => "",
            })
            .collect();
        let Some(inv) = mpirun::find(&argv) else {
            return Vec::new();
        };
        inv.forwards
            .into_iter()
            .map(|f| {
                let at = match &f.at {
                    mpirun::Place::Arg(j) => items[*j].content.unwrap_or(items[*j].origin),
                    mpirun::Place::Script { item, range } => find_in(
                        self.text,
                        items[*item],
                        argv[*item].get(range.clone()).unwrap_or(""),
                    ),
                };
                Forwarded {
                    name: f.name,
                    value: f.value,
                    at,
                }
            })
            .collect()
    }

    /// Where to point for a container-level problem: the field if present, else the container's name.
    fn container_at(&self, c: &Node, fields: &[&str]) -> Origin {
        let mut node = c;
        let mut at = entry(c, "name").map_or(c.origin, |e| e.node.origin);
        for f in fields {
            match entry(node, f) {
                Some(e) => {
                    at = e.key.origin;
                    node = &e.node;
                }
                None => break,
            }
        }
        at
    }

    fn worker(
        &mut self,
        t: &Template,
        v: &PodView<'a>,
        w: &Wiring<'a>,
        forwarded: &[Forwarded],
        pod_namespace: Option<&str>,
    ) {
        let Some((_, c)) = v.container else { return };
        let owner = owner(t, c);
        // A host-network profile's pods are meant to be there: the rails are the node's own NICs.
        if let Some(e) = v.spec.and_then(|s| entry(s, "hostNetwork"))
            && matches!(e.node.value, Value::Scalar(Scalar::Bool(true)))
            && !self.linter.plan.host_network
        {
            let why = if self.linter.nads.is_empty() {
                "the pod's `eth0` becomes the node's interface, where NCCL's bootstrap (`NCCL_SOCKET_IFNAME`) may find nothing, and every port the job opens is on the host"
            } else {
                "Multus attaches no networks to a host-network pod, so the rail interfaces never reach it"
            };
            self.push(
                Problem::new(Code::LintHostNetwork, format!("the {} uses `hostNetwork: true`: {why}", t.label))
                    .at(e.node.origin, "not needed by the profile")
                    .help("remove `hostNetwork`; the profile wires the fabric into the pod's own network namespace"),
            );
        }
        let privileged = entry(c, "securityContext")
            .and_then(|sc| entry(&sc.node, "privileged"))
            .filter(|e| matches!(e.node.value, Value::Scalar(Scalar::Bool(true))));
        if let Some(e) = privileged.filter(|_| !self.linter.plan.host_network) {
            // It works: a privileged container has every device and capability RDMA needs. Said, as a
            // difference from the profile, not counted.
            let mut p = Problem::new(
                Code::LintPrivileged,
                format!("{owner} is privileged: it sees every GPU and device of the node, and RDMA does not need it"),
            )
            .at(e.node.origin, "not needed by the profile")
            .help(format!(
                "remove `privileged: true`; `IPC_LOCK` in `securityContext.capabilities.add` is what RDMA needs (`{}` adds it)",
                self.hint
            ));
            p.severity = Severity::Info;
            self.push(p);
        }
        // What the profile needs of the pod, requirement by requirement (`roce_render::edits`, which the Pod
        // target and `apply` write). Most are reported from their gaps alone (`unmet`); a check of its own
        // remains only where it says more than "missing", each for the reason at its arm.
        // What meets a requirement in another form: the one list `roce apply` reads too.
        let met = Met::read(w, v, &self.linter.plan, pod_namespace);
        let meets = |r: &Requirement, edit: fn(&Edit) -> bool| {
            r.edits.iter().any(|e| edit(e) && met.meets(r, e))
        };
        let linter = self.linter;
        for r in &linter.requirements {
            match r.need {
                // Multus: the namespace each network resolves in, repeats, near names, the pod's own
                // networks standing in for the rails; the cloud's interfaces or NIC claims instead.
                Need::RailNics => {
                    self.multus(t, v, w, pod_namespace);
                    self.cloud_interfaces(t, v, w);
                }
                // Quantities: a gate resource against a per-device count, requests against limits (what
                // Kubernetes makes of each), RDMA devices from another resource or a NIC claim.
                Need::RdmaDevices => {
                    self.resources(c, &owner, "resources", Some(w));
                    self.nic_claim(t, v, c, w);
                }
                // A wrong value is always reported; a missing label only where nothing else gates
                // scheduling. A request for an RDMA device-plugin resource (the profile's or the cluster's
                // own) already keeps the pod off nodes without the fabric: the scheduler's
                // NodeResourcesFit places it only where a node advertises the resource, as the DRA
                // allocator does for a NIC claim; GKE schedules a pod that names multi-network interfaces
                // only onto nodes with those networks.
                Need::NodePool => {
                    let gated = self.requests_profile_resource(c)
                        || matches!(
                            w.rdma_access(),
                            Some(RdmaAccess::Resource(_) | RdmaAccess::Claim(_))
                        )
                        || w.cloud_interfaces.is_some();
                    // The device plugin advertises `nvidia.com/gpu` on the nodes GPU Feature Discovery
                    // labels with their GPU model: the request keeps the pod on GPU nodes.
                    let gpus = w.resources.iter().any(|r| {
                        r.name == roce_model::fabric::attach::GPU_RESOURCE
                            && r.count().is_none_or(|n| n > 0)
                    });
                    self.node_selector(t, v, gated, gpus);
                }
                // Any ComputeDomain's channel is the channel (the fabric core's `channel_claim_concern`).
                Need::NvlinkDomain => {
                    if !meets(r, |e| matches!(e, Edit::PodClaim(_))) {
                        self.channel_claim(t, v, c);
                    }
                }
                // A Kueue topology at the clique level keeps pods together too (the fabric core's
                // `clique_affinity_concern`), and a job that spreads over racks or zones spans NVLink
                // domains on purpose.
                Need::Placement => {
                    if !meets(r, |e| matches!(e, Edit::Affinity(_))) {
                        self.clique_affinity(t, v);
                    }
                }
                // Values, not presence: each variable ranked by its reader's consequence, exact HCA lists,
                // UCX transports, the provider's own variables, the launcher's forwards.
                Need::Environment => {
                    self.provider_env(c, &owner, forwarded, true);
                    let mut skip: BTreeSet<&str> =
                        forwarded.iter().map(|f| f.name.as_str()).collect();
                    // Behind `roce exec` the pod-dependent variables are computed at start-up, not
                    // written in env.
                    // A pod whose RDMA devices are its own (another resource or claim than the profile's)
                    // is not judged by the profile's device names, as apply writes none of them there.
                    if starts_behind_roce_exec(&roce_render::plumbing::wiring::argv(c))
                        || meets(
                            r,
                            |e| matches!(e, Edit::Env(v) if env::is_pod_dependent(&v.name)),
                        )
                    {
                        skip.extend(env::POD_DEPENDENT.iter().copied());
                    }
                    self.env_seen(c, &owner, &skip, w);
                }
                // Memlock, /dev/shm, the host-network mode, host directories, the topology file, the
                // Inspector's volume, and any need added since: their gaps say all there is.
                _ => self.unmet(r, v, w, &met, &owner),
            }
        }
    }

    /// A requirement the template does not meet, reported from its gaps ([`Requirement::unmet`]): one
    /// finding per cause at its first gap with the others as related places, as serious as leaving it
    /// unmet is on this pod, its help the edits that meet it (and `roce apply`, where the edits' keys hold
    /// nothing yet). The cause is the requirement, but for one made of volumes only: each volume is a
    /// directory of its own (the provider's plugin, its libraries), each a finding.
    fn unmet(&mut self, r: &Requirement, v: &PodView<'a>, w: &Wiring<'a>, met: &Met, owner: &str) {
        let Some(u) = r.unmet(&self.linter.plan, v, w, met) else {
            return;
        };
        let volumes_only = r.edits.iter().all(|e| matches!(e, Edit::Volume(_)));
        let causes: Vec<&[Gap<'_>]> = if volumes_only {
            u.gaps.chunks(1).collect()
        } else {
            vec![u.gaps.as_slice()]
        };
        for gaps in causes {
            let said: Vec<String> = gaps.iter().map(Gap::describe).collect();
            let mut fixes: Vec<String> = Vec::new();
            for f in gaps.iter().map(Gap::fix) {
                if !fixes.contains(&f) {
                    fixes.push(f);
                }
            }
            let mut help = fixes.join("; ");
            if gaps.iter().any(|g| g.instead.is_none()) {
                help.push_str(&format!(", or run `{}`", self.hint));
            }
            if let Some(kept) = gaps.iter().find_map(Gap::kept) {
                help.push_str(&format!(" ({kept})"));
            }
            let mut p = Problem::new(u.code, format!("{owner} {}: {}", sentence(&said), u.why));
            for g in gaps {
                p = p.at(g.at, g.label());
            }
            p.severity = severity(u.consequence);
            self.push(p.help(help));
        }
    }

    /// The provider's pod annotations that attach the NICs (GKE multi-networking): without them GKE gives the
    /// pod only its default network, and NCCL's gIB finds no RDMA NIC. A pod that gets its NICs in another
    /// form (DRA NIC claims, managed DRANET) needs none.
    fn cloud_interfaces(&mut self, t: &Template, v: &PodView<'a>, w: &Wiring<'a>) {
        let wanted = &self.linter.plan.pod_annotations;
        if wanted.is_empty()
            || v.form == Form::Spec
            || w.cloud_interfaces.is_some()
            || w.nic_claims().next().is_some()
        {
            return;
        }
        let keys: Vec<&str> = wanted.iter().map(|(k, _)| k.as_str()).collect();
        let Some(at) = v.annotations.map(|a| a.origin).or(v.spec.map(|s| s.origin)) else {
            return;
        };
        self.push(
            Problem::new(
                Code::LintCloudInterfaces,
                format!(
                    "the {} names none of the cloud's network interfaces ({}): it gets only the default network, and NCCL finds no RDMA NIC",
                    t.label,
                    keys.join(", ")
                ),
            )
            .at(at, "no multi-network interfaces")
            .help(format!(
                "add the profile's annotations ({}) to the pod template, or run `{}`",
                keys.join(", "),
                self.hint
            )),
        );
    }

    /// Does the container request or limit one of the profile's fabric resources?
    fn requests_profile_resource(&self, c: &Node) -> bool {
        self.linter.plan.wiring.as_ref().is_some_and(|w| {
            w.resources.iter().any(|(name, _)| {
                ["limits", "requests"].iter().any(|side| {
                    entry(c, "resources")
                        .and_then(|r| entry(&r.node, side))
                        .and_then(|s| entry(&s.node, name))
                        .is_some()
                })
            })
        })
    }

    /// [`Cx::env`] for a worker, with the env it gets besides its own `env`: `envFrom` ConfigMaps of the
    /// input and the launcher's `--mca` (Open MPI reads `--mca KEY VALUE` as `OMPI_MCA_KEY`). A variable
    /// set there is not missing, and its value is checked; when a script it sources or an `envFrom` outside
    /// the input may set the rest, what is not seen is unknown, not missing.
    fn env_seen(&mut self, c: &'a Node, owner: &str, skip: &BTreeSet<&str>, w: &Wiring<'a>) {
        use roce_render::plumbing::wiring::EnvFrom;
        let mut skip = skip.clone();
        // Open MPI told not to use UCX (`--mca pml ^ucx`, or another pml): in a profile that only pins UCX
        // to TCP to keep MPI off the RDMA devices, the UCX variables have nothing left to do.
        let pml = w.var("OMPI_MCA_pml").and_then(|v| v.value.clone());
        let no_ucx = pml.as_deref().is_some_and(|p| {
            let p = p.trim();
            (p.starts_with('^') && p.contains("ucx")) || (!p.starts_with('^') && !p.contains("ucx"))
        });
        if no_ucx && self.linter.ucx_mode == UcxMode::Tcp {
            skip.extend(
                self.linter
                    .env
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .filter(|n| n.starts_with(env::UCX_PREFIX)),
            );
        }
        let elsewhere: Vec<(String, Option<String>, Origin)> = w
            .env
            .iter()
            .filter(|v| matches!(v.from, EnvFrom::ConfigMap | EnvFrom::Mca))
            .filter(|v| {
                !env_items(c)
                    .iter()
                    .any(|i| text(i, "name") == Some(v.name.as_str()))
            })
            .map(|v| (v.name.clone(), v.value.clone(), v.at))
            .collect();
        let names: Vec<&str> = elsewhere.iter().map(|(n, _, _)| n.as_str()).collect();
        skip.extend(names.iter().copied());
        let before = self.problems.len();
        self.env(c, owner, &skip, true);
        if w.env_unknown {
            for p in &mut self.problems[before..] {
                if p.code == Code::LintEnvMissing {
                    p.severity = Severity::Info;
                    p.message.push_str(" (or none: a script the command sources, an `envFrom` source outside this input, the image's env an `mpirun -x $LIST` forwards, or the submitter's env a Slurm job runs with, may set them)");
                }
            }
        }
        for (name, value, at) in &elsewhere {
            if let Some(value) = value {
                self.value_check(name, ValueAt::Text(value, *at), "set");
            }
        }
    }

    /// The provider's variables ([`Provider::env_needs`]) in a worker's env or forwarded by its launcher:
    /// missing (an error when the provider needs it, a warning when only older releases do) or another
    /// value than the profile's. The generic env checks leave these variables to this one.
    /// A launcher (`require` false) is judged on the values its env gives the forwards `mpirun -x NAME`.
    fn provider_env(&mut self, c: &'a Node, owner: &str, forwarded: &[Forwarded], require: bool) {
        let linter = self.linter;
        for (need, want) in &linter.provider_env {
            let item = env_items(c)
                .into_iter()
                .find(|i| text(i, "name") == Some(need.name));
            let (have, at) = match (item, forwarded.iter().find(|f| f.name == need.name)) {
                (Some(item), _) => match entry(item, "value") {
                    Some(e) => (
                        text(item, "value").map(str::to_string),
                        e.node.content.unwrap_or(e.node.origin),
                    ),
                    None => (
                        None,
                        entry(item, "name").map_or(item.origin, |e| e.node.origin),
                    ),
                },
                // `-x NAME` without a value forwards the launcher's own: judged in the launcher.
                (None, Some(f)) if f.value.is_none() => continue,
                (None, Some(f)) => (f.value.clone(), f.at),
                (None, None) if !require => continue,
                (None, None) => {
                    let mut p = Problem::new(
                        Code::LintProviderEnv,
                        format!(
                            "{owner} does not set {}={want} for {}: {}",
                            need.name,
                            self.linter.provider.describe(),
                            need.why
                        ),
                    )
                    .at(
                        self.container_at(c, &["env"]),
                        format!("{} missing", need.name),
                    )
                    .help(format!(
                        "add `{}: \"{want}\"` to the env, or run `{}`",
                        need.name, self.hint
                    ));
                    // Needed by older releases only: the current ones run without it.
                    if !need.required {
                        p.severity = Severity::Info;
                    }
                    self.push(p);
                    continue;
                }
            };
            if have.as_deref() == Some(want.as_str()) {
                continue;
            }
            self.push(
                Problem::new(
                    Code::LintProviderEnv,
                    format!(
                        "{owner} sets {}={} for {}; the profile sets {want}: {}",
                        need.name,
                        have.as_deref().unwrap_or(""),
                        self.linter.provider.describe(),
                        need.why
                    ),
                )
                .at(at, format!("the profile sets {want:?}"))
                .help(format!("set {}={want}, or run `{}`", need.name, self.hint)),
            );
        }
        if require {
            self.ofi_platform_defaults(c, owner);
        }
        if !require || self.linter.provider.reads_nccl_ib() {
            return;
        }
        // NCCL's IB knobs in the container's env under a provider that replaces NCCL's IB transport:
        // nothing reads them. A launcher's `mpirun -x` forwards are left alone: vendor launchers forward
        // one set of variables to every cloud.
        let ib: Vec<(String, Origin)> = env_items(c)
            .into_iter()
            .filter_map(|i| {
                let e = entry(i, "name")?;
                let name = text(i, "name")?;
                nccl::configures_ib(name).then(|| (name.to_string(), e.node.origin))
            })
            .collect();
        for (name, at) in ib {
            self.push(
                Problem::new(
                    Code::LintIbKnobIgnored,
                    format!(
                        "{owner} sets {name}, which {} ignores: NCCL's IB transport, the only reader of `NCCL_IB_*`, is not used once the plugin loads",
                        self.linter.provider.describe()
                    ),
                )
                .at(at, "read by nothing")
                .help(format!(
                    "remove it; aws-ofi-nccl is tuned with its own `{}*` variables and libfabric's `FI_*`",
                    provider::OFI_PARAM_PREFIX
                )),
            );
        }
    }

    /// Variables aws-ofi-nccl sets itself on the profile's instance type (`fabric::ofi_platform`) that the
    /// worker's env sets to another value: the plugin leaves a set variable alone, so the manifest's value
    /// replaces the tuned one. A value the profile sets is the profile's choice, reported by `check`
    /// (`roce::provider::ofi_platform_default`), and not again here.
    fn ofi_platform_defaults(&mut self, c: &'a Node, owner: &str) {
        let Some((instance, defaults)) = &self.linter.ofi_defaults else {
            return;
        };
        for item in env_items(c) {
            let (Some(name), Some(value), Some(e)) = (
                text(item, "name"),
                text(item, "value"),
                entry(item, "value"),
            ) else {
                continue;
            };
            let Some(d) = defaults.iter().find(|d| d.name == name) else {
                continue;
            };
            if ofi_platform::same_value(d, value) || self.linter.plan.env_value(name) == Some(value)
            {
                continue;
            }
            self.push(
                Problem::new(
                    Code::LintOfiPlatformDefault,
                    format!(
                        "{owner} sets {name}={value}, where aws-ofi-nccl would set {} on {instance} ({}): the plugin sets it only where it is unset, so this value replaces the tuned one",
                        d.value,
                        d.source()
                    ),
                )
                .at(
                    e.node.content.unwrap_or(e.node.origin),
                    format!("aws-ofi-nccl would set {}", d.value),
                )
                .help(format!(
                    "remove it to run with the value the plugin is tuned with on {instance}, or keep it where you measured better; read from {}",
                    ofi_platform::RELEASE
                )),
            );
        }
    }

    fn launcher(&mut self, t: &Template, v: &PodView<'a>) {
        if let Some((_, c)) = v.container {
            self.provider_env(c, &owner(t, c), &[], false);
            self.env(c, &owner(t, c), &BTreeSet::new(), false);
        }
    }

    /// A TrainJob's trainer overrides its runtime's `node` container: Kubeflow Trainer replaces its image,
    /// command and args, upserts its env by name and strategically merges `resourcesPerNode` over its
    /// resources (kubeflow/trainer 8c0f5059, `pkg/runtime/framework/plugins/jobset/builder.go` `Trainer`,
    /// `pkg/runtime/core/trainingruntime.go` with `MergeResourceRequirements`). What the trainer leaves
    /// out is the runtime's, judged where the runtime is (in this input, or linted on its own), so the
    /// trainer is judged only on the values it sets.
    fn trainer(&mut self, t: &Template, v: &PodView<'a>) {
        let owner = format!("the {}", t.label);
        if let Some(trainer) = v.root {
            self.provider_env(trainer, &owner, &[], false);
            self.env(trainer, &owner, &BTreeSet::new(), false);
        }
    }

    fn multus(
        &mut self,
        t: &Template,
        v: &PodView<'a>,
        w: &Wiring<'a>,
        pod_namespace: Option<&str>,
    ) {
        let nads = &self.linter.nads;
        // A bare PodSpec has no annotations: its controller decides what the pod is attached to.
        if nads.is_empty() || v.form == Form::Spec {
            return;
        }
        let owner = format!("the {}", t.label);
        if self.nics_elsewhere(&owner, v, w) {
            return;
        }
        let Some(e) = v.multus else {
            self.no_multus_annotation(&owner, v);
            return;
        };
        let value = match &e.node.value {
            Value::Scalar(Scalar::Str(s)) => s.as_str(),
            _ => return,
        };
        // The wiring parsed this annotation; only an empty or unreadable one is parsed again, for its error.
        let parsed;
        let nets: &[multus::Network<'_>] = if w.networks.is_empty() {
            match multus::parse(value) {
                Ok(nets) => {
                    parsed = nets;
                    &parsed
                }
                Err(bad) => {
                    self.push(apply::malformed_problem(e, value, &bad));
                    return;
                }
            }
        } else {
            &w.networks
        };
        let (missing, unrelated) = self.listed_networks(&owner, e, value, nets, pod_namespace);
        self.missing_networks(&owner, e, &missing, unrelated);
    }

    /// Whether the NICs reach the pod another way (DRA claims of NIC devices, a cloud's multi-network
    /// annotation); where the pod has no Multus annotation besides, that is only said (info).
    fn nics_elsewhere(&mut self, owner: &str, v: &PodView<'a>, w: &Wiring<'a>) -> bool {
        let nads = &self.linter.nads;
        // The NICs reach the pod another way: DRA claims of NIC devices, a cloud's multi-network annotation.
        let other = w
            .nic_claims()
            .next()
            .map(|c| (format!("the DRA claim `{}`", c.name), c.at))
            .or(w.cloud_interfaces.map(|at| {
                (
                    format!("`{}`", roce_render::plumbing::wiring::GKE_INTERFACES),
                    at,
                )
            }));
        let Some((how, at)) = other else {
            return false;
        };
        if v.multus.is_none() {
            let mut p = Problem::new(
                Code::LintMissingNad,
                format!(
                    "{owner} gets its NICs through {how}, not the profile's {} Multus networks",
                    nads.len()
                ),
            )
            .at(at, "NICs attached here")
            .help(format!(
                "nothing to fix if these are the rail NICs; `{}` would add the profile's networks",
                self.hint
            ));
            p.severity = Severity::Info;
            self.push(p);
        }
        true
    }

    /// No Multus annotation at all: the pod sees only eth0, pointed at the closest place one would go.
    fn no_multus_annotation(&mut self, owner: &str, v: &PodView<'a>) {
        let at = v
            .annotations
            .or(v.metadata)
            .or(v.root)
            .map_or(self.doc_at, |n| n.origin);
        self.push(
            Problem::new(
                Code::LintMissingNad,
                format!(
                    "{owner} has no Multus networks annotation: the pod gets none of the {} rail networks and sees only eth0",
                    self.linter.nads.len()
                ),
            )
            .at(at, "no k8s.v1.cni.cncf.io/networks here")
            .help(format!("add the `{MULTUS_ANNOTATION}` annotation with the profile's NADs, or run `{}`", self.hint)),
        );
    }

    /// Each network the annotation lists, against the profile's NADs: repeats and mistaken ones (another
    /// namespace, a near name) are reported; returns the NADs still missing and how many listed networks
    /// are unrelated to any of them.
    fn listed_networks(
        &mut self,
        owner: &str,
        e: &Entry,
        value: &str,
        nets: &[multus::Network<'_>],
        pod_namespace: Option<&str>,
    ) -> (Vec<&'a NadRef>, usize) {
        let nads = &self.linter.nads;
        let src = self.text;
        let place = |n: &multus::Network<'_>| -> Origin {
            match e.node.content.filter(|c| c.len == value.len()) {
                Some(c) => c.sub(n.range.clone()),
                None => find_in(src, &e.node, &n.name),
            }
        };
        let (first, copies) = (&self.linter.nad_first, &self.linter.nad_copies);
        // Each network's NAD, as the first of the NADs equal to it. An annotation usually lists the
        // rails in the profile's order, so the NAD at the network's own place is tried first: a search
        // of every NAD for every network was most of a rendered Pod's string comparisons.
        let matched: Vec<Option<usize>> = nets
            .iter()
            .enumerate()
            .map(
                |(k, n)| match nads.get(k).filter(|nad| n.is(nad, pod_namespace)) {
                    Some(_) => Some(first[k]),
                    None => nads.iter().position(|nad| n.is(nad, pod_namespace)),
                },
            )
            .collect();
        let mut missing: Vec<&NadRef> = nads
            .iter()
            .zip(first)
            .filter(|(_, f)| !matched.contains(&Some(**f)))
            .map(|(nad, _)| nad)
            .collect();
        let mut listed = vec![0usize; nads.len()];
        let mut unrelated = 0usize;
        for (n, m) in nets.iter().zip(&matched) {
            if let Some(i) = *m {
                let nad = &nads[i];
                // A profile may attach one NAD per rail under one name (OCI's SR-IOV VFs): more than
                // the plan lists is the mistake, not a repeat.
                if listed[i] >= copies[i] {
                    self.push(
                        Problem::new(
                            Code::LintWrongNad,
                            format!("{owner} lists {}/{} twice: Multus attaches it twice, and the netdev names no longer follow the rails", nad.namespace(), nad.name()),
                        )
                        .at(place(n), "listed again here")
                        .help(format!("list each network once, or run `{}`", self.hint)),
                    );
                }
                listed[i] += 1;
                continue;
            }
            // Not one of the profile's: is it a mistaken one?
            let Some((i, why)) = mistaken_for(n, &missing, pod_namespace) else {
                unrelated += 1;
                continue;
            };
            let nad = missing.remove(i);
            self.push(
                Problem::new(
                    Code::LintWrongNad,
                    format!("{owner}: network `{}` {why}", n.name),
                )
                .at(place(n), "wrong network")
                .help(format!(
                    "attach `{}/{}` instead, or run `{}`",
                    nad.namespace(),
                    nad.name(),
                    self.hint
                )),
            );
        }
        (missing, unrelated)
    }

    /// The profile's NADs the annotation does not list: only said (info) when as many other networks
    /// stand in for them, else the rails without a network.
    fn missing_networks(&mut self, owner: &str, e: &Entry, missing: &[&NadRef], unrelated: usize) {
        let nads = &self.linter.nads;
        if !missing.is_empty() && unrelated >= missing.len() {
            // As many other networks as rails missing: the pod's own NADs for the same rails (Multus
            // attaches what the annotation names; NCCL uses every RDMA device it finds).
            let mut p = Problem::new(
                Code::LintMissingNad,
                format!(
                    "{owner} attaches {unrelated} networks under other names than the profile's {}: nothing to fix if they are the rail NICs",
                    nads.len()
                ),
            )
            .at(e.node.origin, "other networks")
            .help(format!("`{}` would add the profile's networks beside them", self.hint));
            p.severity = Severity::Info;
            self.push(p);
            return;
        }
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|n| n.name().as_str()).collect();
            self.push(
                Problem::new(
                    Code::LintMissingNad,
                    format!(
                        "{owner} attaches {} of the profile's {} rail networks; missing: {}",
                        nads.len() - missing.len(),
                        nads.len(),
                        names.join(", ")
                    ),
                )
                .at(e.node.origin, "missing networks")
                .help(format!(
                    "a rail without its network has no netdev in the pod and NCCL loses it; add {}, or run `{}`",
                    missing.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", "),
                    self.hint
                )),
            );
        }
    }

    fn resources(&mut self, c: &Node, owner: &str, key: &str, seen: Option<&Wiring<'a>>) {
        let Some(w) = &self.linter.plan.wiring else {
            return;
        };
        for (name, want) in &w.resources {
            // The provider's per-device resource is a count of devices, not a gate: its own rule.
            let per_device = self.linter.provider.device_resource() == Some(name.as_str());
            let r = Asked {
                name: name.as_str(),
                want,
                per_device,
                pod_gpus: seen.and_then(Wiring::nvidia_gpu_count),
                code: if per_device {
                    Code::LintProviderResource
                } else {
                    Code::LintRdmaResource
                },
            };
            let absent = self.resource_quantities(c, owner, key, &r);
            if absent.len() == 2 && !per_device && self.rdma_elsewhere(c, owner, key, seen, &r) {
                continue;
            }
            if !absent.is_empty() {
                self.resource_absent(c, owner, key, &r, &absent);
            }
        }
    }

    /// The quantity in requests and in limits against the profile's, reporting one that differs; returns
    /// the sides that do not ask for the resource at all.
    fn resource_quantities(
        &mut self,
        c: &Node,
        owner: &str,
        key: &str,
        r: &Asked<'_>,
    ) -> Vec<&'static str> {
        let (name, want) = (r.name, r.want);
        let mut absent = Vec::new();
        for side in ["requests", "limits"] {
            let q = entry(c, key)
                .and_then(|r| entry(&r.node, side))
                .and_then(|s| entry(&s.node, name));
            let Some(e) = q else {
                absent.push(side);
                continue;
            };
            let have = self.text.get(e.node.origin.range()).unwrap_or("");
            let have_value = match &e.node.value {
                Value::Scalar(Scalar::Str(s)) => s.clone(),
                Value::Scalar(Scalar::Int(i)) => i.to_string(),
                _ => have.to_string(),
            };
            if have_value == want {
                continue;
            }
            // A pod with part of the node's GPUs and the same part of its devices has its share.
            let node_gpus = self.linter.plan.gpus_per_node;
            if r.per_device
                && have_value
                    .parse::<u64>()
                    .ok()
                    .zip(want.parse::<u64>().ok())
                    .is_some_and(|(h, w)| {
                        self.linter
                            .provider
                            .device_share(h, w, node_gpus, r.pod_gpus)
                    })
            {
                continue;
            }
            let (why, help) = if r.per_device {
                let fewer = have_value
                    .parse::<u64>()
                    .ok()
                    .zip(want.parse::<u64>().ok())
                    .is_some_and(|(h, w)| h < w);
                (
                    if fewer {
                        format!(
                            ": the device plugin hands out one device per unit, so the pod gets {have} of the {want} {} devices and NCCL spreads over fewer NICs",
                            self.linter.provider.device_driver().unwrap_or("RDMA")
                        )
                    } else {
                        ": the device plugin hands out one device per unit, and no node of the profile's pool has more".to_string()
                    },
                    format!(
                        "{name} counts devices: set it to \"{want}\" in requests and limits, or run `{}`",
                        self.hint
                    ),
                )
            } else {
                (
                    String::new(),
                    format!(
                        "{name} is a scheduling gate, not a count: set it to \"{want}\" in requests and limits, or run `{}`",
                        self.hint
                    ),
                )
            };
            self.push(
                Problem::new(
                    r.code,
                    format!("{owner} asks for {name}: {have} in {side}; the profile asks for {want}{why}"),
                )
                .at(e.node.origin, format!("should be {want}"))
                .help(help),
            );
        }
        absent
    }

    /// Whether a container asking for none of a gate resource gets its RDMA devices another way (another
    /// resource, a DRA NIC claim, a privileged container); that is only said (info).
    fn rdma_elsewhere(
        &mut self,
        c: &Node,
        owner: &str,
        key: &str,
        seen: Option<&Wiring<'a>>,
        r: &Asked<'_>,
    ) -> bool {
        let name = r.name;
        // Another RDMA resource, a DRA NIC claim, or a privileged container: the devices are there.
        let Some(how) = seen
            .and_then(Wiring::rdma_access)
            .filter(|a| *a != RdmaAccess::Resource(name.to_string()))
        else {
            return false;
        };
        let mut p = Problem::new(
            r.code,
            format!(
                "{owner} does not ask for {name} but gets its RDMA devices through {}",
                how.describe()
            ),
        )
        .at(
            self.container_at(c, &[key]),
            format!("{name} not asked for"),
        )
        .help(format!(
            "nothing to fix if these are the fabric's devices; `{}` would add {name}",
            self.hint
        ));
        p.severity = Severity::Info;
        self.push(p);
        true
    }

    /// A resource missing from requests, limits or both, as serious as what Kubernetes makes of it.
    fn resource_absent(
        &mut self,
        c: &Node,
        owner: &str,
        key: &str,
        r: &Asked<'_>,
        absent: &[&'static str],
    ) {
        let (name, want) = (r.name, r.want);
        let sides = absent.join(" and ");
        // Kubernetes defaults an extended resource's request to its limit, and rejects a request
        // without a limit (extended resources cannot be overcommitted): kubernetes.io, "Managing
        // resources for containers", extended resources.
        let (why, severity) = match absent {
            // It works: said, not counted.
            ["requests"] => (
                "Kubernetes copies the limit into requests, so this schedules correctly; quota and review tools read requests, and the profile sets both",
                Severity::Info,
            ),
            ["limits"] => (
                "the API server rejects a request for an extended resource without an equal limit",
                Severity::Error,
            ),
            _ if r.per_device => (
                "the pod gets none of the devices, so the provider finds nothing to open and NCCL runs over TCP sockets",
                Severity::Error,
            ),
            _ => (
                "the pod can land on a node without RDMA devices",
                Severity::Error,
            ),
        };
        let fields: Vec<&str> = match absent {
            [side] => vec![key, side],
            _ => vec![key],
        };
        let mut problem = Problem::new(
            r.code,
            format!("{owner} does not ask for {name} in {sides}: {why}"),
        )
        .at(self.container_at(c, &fields), format!("{name} missing"))
        .help(format!(
            "set `{name}: \"{want}\"` in both requests and limits, or run `{}`",
            self.hint
        ));
        problem.severity = severity;
        self.push(problem);
    }

    /// The DRA claims: the NICs' (when they are DRA devices) and the ComputeDomain's IMEX channel: the pod
    /// claims each from its template and the container lists the claim (fabric core: `fabric::dra::rules::channel_claim_concern`). Without it NCCL cannot use
    /// multi-node NVLink: `Cuda failure 800` or a silent fall back to the network.
    /// The pod's claims, the names the container lists, and where to point.
    fn claims(v: &PodView<'a>, c: &'a Node) -> Claims<'a> {
        let pod_claims: Vec<(String, Option<String>)> = v
            .spec
            .and_then(|s| entry(s, "resourceClaims"))
            .map(|e| match &e.node.value {
                Value::Seq(items) => items
                    .iter()
                    .filter_map(|i| {
                        Some((
                            text(i, "name")?.to_string(),
                            text(i, "resourceClaimTemplateName").map(str::to_string),
                        ))
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        let used: Vec<&str> = entry(c, "resources")
            .and_then(|r| entry(&r.node, "claims"))
            .map(|e| match &e.node.value {
                Value::Seq(items) => items.iter().filter_map(|i| text(i, "name")).collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        let claims_at = v
            .spec
            .and_then(|s| entry(s, "resourceClaims"))
            .map(|e| e.key.origin)
            .or(v.spec.map(|s| s.origin));
        Claims {
            pod: pod_claims,
            used,
            at: claims_at,
        }
    }

    /// The profile's DRA NICs: claimed by the pod and listed by the container, unless the pod gets its
    /// RDMA devices another way.
    fn nic_claim(&mut self, t: &Template, v: &PodView<'a>, c: &'a Node, w: &Wiring<'a>) {
        let claims = Self::claims(v, c);
        let (found, used, claims_at) = (claims.found(), claims.used.as_slice(), claims.at);
        // NICs from a device plugin (or a privileged container) are the NICs in another form; so is a claim
        // of a NIC device class under names of the pod's own: a pod claim's name and its template's are
        // only the pod's references, the scheduler allocates by the template's device class (Kubernetes
        // DRA, `resourceClaims`).
        let nics_otherwise = matches!(
            w.rdma_access(),
            Some(RdmaAccess::Resource(_) | RdmaAccess::Privileged)
        ) || w.nic_claims().next().is_some();
        if let Some(concern) = nic_claim_concern(&self.linter.plan.dra_spec.nics, &found, used)
            .filter(|_| !nics_otherwise)
        {
            let (message, at) = match &concern {
                ChannelConcern::NoPodClaim { template } => (
                    format!(
                        "the {} does not claim the profile's DRA NICs (`resourceClaims` from `{template}`): the pod gets no RDMA device and NCCL runs over TCP sockets",
                        t.label
                    ),
                    claims_at,
                ),
                ChannelConcern::NotInContainer { claim } => (
                    format!(
                        "{} claims the DRA NICs as `{claim}` but the container does not list it in `resources.claims`: the NICs never reach it",
                        owner(t, c)
                    ),
                    Some(self.container_at(c, &["resources"])),
                ),
            };
            if let Some(at) = at {
                self.push(
                    Problem::new(Code::LintDraNicClaim, message)
                        .at(at, "no NIC claim")
                        .help(format!(
                            "claim them in the pod (`resourceClaims: [{{name: …, resourceClaimTemplateName: …}}]`) and list the name in the container's `resources.claims`, or run `{}`",
                            self.hint
                        )),
                );
            }
        }
    }

    /// The profile's IMEX channel claim, where the pod claims no channel of any ComputeDomain (the channel
    /// of a ComputeDomain of the input, under another name than the profile's, is the channel: the caller
    /// asks [`Met`]).
    fn channel_claim(&mut self, t: &Template, v: &PodView<'a>, c: &'a Node) {
        let claims = Self::claims(v, c);
        let (found, used, claims_at) = (claims.found(), claims.used.as_slice(), claims.at);
        let Some(concern) = channel_claim_concern(&self.linter.nvlink_domain, &found, used) else {
            return;
        };
        let (message, at) = match &concern {
            ChannelConcern::NoPodClaim { template } => (
                format!(
                    "the {} does not claim the ComputeDomain's IMEX channel (`resourceClaims` from `{template}`): NCCL cannot use multi-node NVLink and fails with `Cuda failure 800` or falls back to the network",
                    t.label
                ),
                claims_at,
            ),
            ChannelConcern::NotInContainer { claim } => (
                format!(
                    "{} claims the IMEX channel as `{claim}` but the container does not list it in `resources.claims`: the channel device never reaches it",
                    owner(t, c)
                ),
                Some(self.container_at(c, &["resources"])),
            ),
        };
        let Some(at) = at else { return };
        self.push(
            Problem::new(Code::LintDraChannelClaim, message)
                .at(at, "no IMEX channel claim")
                .help(format!(
                    "claim it in the pod (`resourceClaims: [{{name: …, resourceClaimTemplateName: …}}]`) and list the name in the container's `resources.claims`, or run `{}`",
                    self.hint
                )),
        );
    }

    /// The NVLink-domain placement of a ComputeDomain job: its pods share one [`CLIQUE_LABEL`] value, through a
    /// required pod-affinity term on it or a required Kueue topology at that level (fabric core:
    /// `fabric::dra::rules::clique_affinity_concern`). A warning: a job meant to span racks drops it on
    /// purpose.
    fn clique_affinity(&mut self, t: &Template, v: &PodView<'a>) {
        let affinity = v.spec.and_then(|s| entry(s, "affinity"));
        let mut together = view::required_affinity_keys(v.spec);
        if let Some(level) = v.annotations.and_then(|a| text(a, KUEUE_REQUIRED_TOPOLOGY)) {
            together.push(level);
        }
        if clique_affinity_concern(&self.linter.nvlink_domain, &together).is_none() {
            return;
        }
        let Some(at) = affinity.map(|e| e.key.origin).or(v.spec.map(|s| s.origin)) else {
            return;
        };
        self.push(
            Problem::new(
                Code::LintDraCliqueAffinity,
                format!(
                    "the {} is not kept in one NVLink domain with the job's other pods (no required pod affinity on `{CLIQUE_LABEL}`): pods in another rack reach each other over the network only, not over multi-node NVLink",
                    t.label
                ),
            )
            .at(at, "no clique affinity")
            .help(format!(
                "add a required pod-affinity term with `topologyKey: {CLIQUE_LABEL}` over a label every pod of the job carries, or run `{}`; leave it out only for a job meant to span racks",
                self.hint
            )),
        );
    }

    /// Node labels: a wrong value is always reported; a missing one only when nothing else gates scheduling
    /// (`gated`: the container requests the profile's RDMA resource, which only fabric nodes offer). The
    /// scheduler ANDs `nodeSelector` with the required node affinity (`NodeAffinity` filter), so a required
    /// affinity that pins the label meets it as the selector would. A missing GPU-model label on a pod that
    /// requests NVIDIA GPUs (`gpus`) picks only the model, not the fabric: a note.
    fn node_selector(&mut self, t: &Template, v: &PodView<'a>, gated: bool, gpus: bool) {
        let labels = &self.linter.plan.node_selector;
        if labels.is_empty() {
            return;
        }
        let sel = v.spec.and_then(|s| entry(s, "nodeSelector"));
        // A pod pinned to a node pool by another label (GKE's `cloud.google.com/gke-nodepool`, a
        // CoreWeave node type) has chosen its nodes: a missing profile label is then not "anywhere".
        let pinned = sel.is_some_and(|s| match &s.node.value {
            Value::Map(entries) => entries
                .iter()
                .any(|e| roce_model::fabric::devices::pins_node_pool(&e.key.value)),
            _ => false,
        });
        for (k, want) in labels {
            let wrong = |what: String, at: Origin| {
                Problem::new(
                    Code::LintNodeSelector,
                    format!(
                        "the {} selects nodes with {k}={what}, the profile's pool has {k}={want}",
                        t.label
                    ),
                )
                .at(at, format!("the profile says {want}"))
            };
            match sel.and_then(|s| entry(&s.node, k)) {
                Some(e) => {
                    let have = match &e.node.value {
                        Value::Scalar(Scalar::Str(s)) => Some(s.as_str()),
                        _ => None,
                    };
                    if !have.is_some_and(|h| {
                        roce_model::fabric::devices::same_node_label_value(k, h, want)
                    }) {
                        let what = self.text.get(e.node.origin.range()).unwrap_or("?");
                        let p = wrong(what.to_string(), e.node.origin)
                            .help(format!("set `{k}: {want}`, or run `{}`", self.hint));
                        self.push(p);
                    }
                }
                None => match required_node_label(v.spec, k, want) {
                    NodeLabel::Selects => {}
                    NodeLabel::Other(values, at) => {
                        let p = wrong(values, at).help(format!(
                            "require `{k}` In [{want}] in the node affinity, or run `{}`",
                            self.hint
                        ));
                        self.push(p);
                    }
                    NodeLabel::Open if gated || pinned => {}
                    NodeLabel::Open => {
                        let at = sel
                            .map(|s| s.key.origin)
                            .or(v.spec.map(|s| s.origin))
                            .or(v.root.map(|r| r.origin));
                        let Some(at) = at else { continue };
                        let mut p = if gpus && roce_model::fabric::devices::gpu_model_label(k) {
                            Problem::new(
                                Code::LintNodeSelector,
                                format!(
                                    "the {} does not select the profile's GPU model ({k}={want}): its nvidia.com/gpu request keeps it on GPU nodes, where it may get another model's",
                                    t.label
                                ),
                            )
                        } else {
                            Problem::new(
                                Code::LintNodeSelector,
                                format!(
                                    "the {} does not select the profile's nodes ({k}={want}): it can be scheduled where the fabric is not",
                                    t.label
                                ),
                            )
                        };
                        if gpus && roce_model::fabric::devices::gpu_model_label(k) {
                            p.severity = Severity::Info;
                        }
                        let p = p.at(at, "node label missing").help(format!(
                            "add `{k}: {want}` to `nodeSelector` (or a required node affinity on it), or run `{}`",
                            self.hint
                        ));
                        self.push(p);
                    }
                },
            }
        }
    }

    fn env_missing(
        &self,
        owner: &str,
        missing: &[&str],
        present: &BTreeSet<&str>,
        at: Origin,
    ) -> Problem {
        let shown: Vec<String> = missing.iter().take(6).map(|m| (*m).to_string()).collect();
        let more = if missing.len() > shown.len() {
            format!(" and {} more", missing.len() - shown.len())
        } else {
            String::new()
        };
        // A variable not set leaves its reader's default, which runs: slower or less pinned at worst, and
        // only a difference where the default is what the profile would pick anyway.
        let worst = missing
            .iter()
            .map(|m| {
                self.linter
                    .plan
                    .consequence_if_missing(m, |n| present.contains(n))
            })
            .max()
            .unwrap_or(env::Consequence::Differs);
        let mut p = Problem::new(
            Code::LintEnvMissing,
            format!(
                "{owner} lacks {} of the profile's {} env variables: {}{more}",
                missing.len(),
                self.linter.env.len(),
                shown.join(", ")
            ),
        )
        .at(at, "env incomplete")
        .help(format!("add them with the profile's values (`roce render --target env` lists them), or run `{}`", self.hint));
        p.severity = match worst {
            env::Consequence::Differs => Severity::Info,
            _ => Severity::Warning,
        };
        p
    }

    /// Env checks of one container: duplicates, missing (`require`), values.
    fn env(&mut self, c: &'a Node, owner: &str, skip: &BTreeSet<&str>, require: bool) {
        let items: Vec<&Node> = match entry(c, "env").map(|e| &e.node.value) {
            Some(Value::Seq(items)) => items.iter().collect(),
            _ => Vec::new(),
        };
        // Each name's first item, which Kubernetes' duplicate check and the profile's checks read.
        let mut first: Vec<(&str, Origin, &Node)> = Vec::new();
        for item in &items {
            let Some(name_entry) = entry(item, "name") else {
                continue;
            };
            let Value::Scalar(Scalar::Str(name)) = &name_entry.node.value else {
                continue;
            };
            if let Some((_, at, _)) = first.iter().find(|(n, _, _)| n == name) {
                let at = *at;
                self.push(
                    Problem::new(
                        Code::LintEnvDuplicate,
                        format!("{owner} sets {name} twice: Kubernetes keeps the last one, and tools that merge env by name keep either"),
                    )
                    .at(name_entry.node.origin, "set again here")
                    .at(at, "first set here")
                    .help(format!("keep one entry for {name}; `roce apply` merges env by name and never duplicates it")),
                );
            } else {
                first.push((name, name_entry.node.origin, item));
            }
        }
        let mut missing = Vec::new();
        for (name, _) in &self.linter.env {
            if self.linter.is_provider_var(name) {
                continue;
            }
            let item = first.iter().find(|(n, _, _)| n == name).map(|f| f.2);
            match item {
                None if require && !skip.contains(name.as_str()) => missing.push(name.as_str()),
                None => {}
                Some(item) => {
                    if let Some(vf) = entry(item, "valueFrom") {
                        let want = self.want(name);
                        self.push(
                            Problem::new(
                                Code::LintEnvDifferent,
                                format!("{owner} sets {name} from `valueFrom`, which roce cannot check; the profile sets it to {want:?}"),
                            )
                            .at(vf.key.origin, "not the profile's value")
                            .help(format!("write `value: {want:?}`, or run `{}`", self.hint)),
                        );
                    } else {
                        match entry(item, "value") {
                            Some(v) => self.value_check(name, ValueAt::Node(v), "set"),
                            None => {
                                let at = entry(item, "name").map_or(item.origin, |e| e.node.origin);
                                self.value_check(name, ValueAt::Text("", at), "set empty");
                            }
                        }
                    }
                }
            }
        }
        if !missing.is_empty() {
            let at = self.container_at(c, &["env"]);
            let mut present: BTreeSet<&str> = skip.clone();
            present.extend(items.iter().filter_map(|i| text(i, "name")));
            let p = self.env_missing(owner, &missing, &present, at);
            self.push(p);
        }
    }

    fn want(&self, name: &str) -> &str {
        self.linter
            .env
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Compare one value with the profile's.
    fn value_check(&mut self, name: &str, value: ValueAt<'_>, how: &str) {
        // A different log level is the author's choice (the validation jobs raise it), not a wiring error;
        // the provider's variables are `provider_env`'s.
        if env::is_logging(name) || self.linter.is_provider_var(name) {
            return;
        }
        let linter = self.linter;
        let Some(want) = linter
            .env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
        else {
            return;
        };
        let Some((have, at, content)) = self.env_string(name, value, want) else {
            return;
        };
        if have == want {
            return;
        }
        if name == env::NCCL_IB_HCA.name && !self.linter.plan.rail_ports.is_empty() {
            self.hca_value(have, want, at, content);
            return;
        }
        if name == env::UCX_TLS.name
            && let Some(plan_tls) = &self.linter.plan_tls
            && self.tls_value(have, want, at, plan_tls)
        {
            return;
        }
        let consequence = self.linter.plan.consequence_of(name, have);
        let mut p = Problem::new(
            Code::LintEnvDifferent,
            format!(
                "{name} is {how} to {have:?}; the profile sets {want:?}{}",
                match consequence {
                    env::Consequence::Fails => ": ranks may not reach each other",
                    env::Consequence::SilentTcp => ": NCCL may run over TCP sockets",
                    env::Consequence::Slower => ": a tuning difference, slower at worst",
                    env::Consequence::Differs => ": the job runs the same",
                }
            ),
        )
        .at(at, format!("the profile sets {want:?}"))
        .help(format!("use {want:?}, or run `{}`", self.hint));
        p.severity = severity(consequence);
        self.push(p);
    }

    /// The value as the string the container gets, its place and its content's place; `None` (reported)
    /// for a value that is not a string, which Kubernetes refuses.
    fn env_string<'v>(
        &mut self,
        name: &str,
        value: ValueAt<'v>,
        want: &str,
    ) -> Option<(&'v str, Origin, Option<Origin>)> {
        Some(match value {
            ValueAt::Text(t, at) => (t, at, Some(at)),
            ValueAt::Node(e) => match &e.node.value {
                Value::Scalar(Scalar::Str(s)) => (s.as_str(), e.node.origin, e.node.content),
                Value::Scalar(Scalar::Null) => ("", e.node.origin, None),
                other => {
                    let written = self
                        .text
                        .get(e.node.origin.range())
                        .unwrap_or("?")
                        .to_string();
                    self.push(
                        Problem::new(
                            Code::LintEnvDifferent,
                            format!("{name} is written as {} ({written}): Kubernetes refuses a manifest whose env value is not a string", other.type_name()),
                        )
                        .at(e.node.origin, "quote it")
                        .help(format!("write `value: {want:?}` with quotes, or run `{}`", self.hint)),
                    );
                    return None;
                }
            },
        })
    }

    /// An `NCCL_IB_HCA` other than the profile's, judged by the rails it selects: the same rails in
    /// another form pass, none is an error (sockets), some are a difference.
    fn hca_value(&mut self, have: &str, want: &str, at: Origin, content: Option<Origin>) {
        // The same rails in another form (an exact list of the claimed DRA NICs, whose host names
        // the profile's pattern only approximates).
        if self.linter.plan.equivalent(env::NCCL_IB_HCA.name, have) {
            return;
        }
        let selects = self.linter.plan.hca_selects(have);
        if selects.is_empty() {
            let devices: Vec<&str> = self
                .linter
                .plan
                .rail_ports
                .iter()
                .map(|(d, _)| d.as_str())
                .collect();
            self.push(
                Problem::new(
                    Code::LintHcaMatchesNothing,
                    format!(
                        "NCCL_IB_HCA={have} matches none of the pod's RDMA devices ({} … {}): NCCL finds no IB device and silently runs over sockets",
                        devices.first().unwrap_or(&"?"),
                        devices.last().unwrap_or(&"?")
                    ),
                )
                .at(token_at(content, at), "matches nothing")
                .help(format!("use the profile's value {want:?}, or run `{}` (it keeps an explicit device list and a launcher's `mpirun -x` as written; `--role launcher` corrects the launcher's)", self.hint)),
            );
            return;
        }
        if selects == self.linter.plan_hca {
            return;
        }
        self.push(
            Problem::new(
                Code::LintEnvDifferent,
                format!(
                    "NCCL_IB_HCA={have} selects {} of the {} rails the profile uses ({want})",
                    selects.len(),
                    self.linter.plan_hca.len()
                ),
            )
            .at(at, format!("the profile sets {want:?}"))
            .help(format!("use {want:?}, or run `{}`", self.hint)),
        );
    }

    /// Whether a `UCX_TLS` other than the profile's is settled: wrong transports for the fabric
    /// (reported), or the same roles in other words (fine); else it is judged as any other difference.
    fn tls_value(&mut self, have: &str, want: &str, at: Origin, plan_tls: &TlsList) -> bool {
        if let Some(why) = self.ucx_wrong(have) {
            let mut p = Problem::new(Code::LintUcxTransport, format!("UCX_TLS={have} {why}"))
                .at(at, "wrong transports for this fabric")
                .help(format!(
                    "use the profile's UCX_TLS={want:?}, or run `{}`",
                    self.hint
                ));
            // A TCP-pinning profile guards UCX against RoCE's GID selection and the memlock limit. On
            // InfiniBand (LID-addressed: no GID to pick) with every rank given RDMA devices and IPC_LOCK,
            // UCX's RC transport comes up: the value only differs from the profile's.
            let mode_only = !ucx_list::parse_tls(have)
                .1
                .iter()
                .any(|i| i.kind.is_error());
            if mode_only
                && self.ranks_rdma
                && self.linter.ucx_mode == UcxMode::Tcp
                && self.linter.plan.fabric == roce_model::model::FabricKind::InfiniBand
            {
                p.severity = Severity::Info;
                p.message.push_str(" (here every rank has InfiniBand devices and IPC_LOCK, so it runs: it differs from the profile)");
            }
            self.push(p);
            return true;
        }
        ucx_list::parse_tls(have).0.roles() == plan_tls.roles()
    }

    /// Why a `UCX_TLS` value is wrong for the profile's UCX mode, if it is: the fabric core's verdict, the
    /// same one `check` gives a profile ([`roce_model::fabric::ucx::tls_concerns`]).
    fn ucx_wrong(&self, have: &str) -> Option<String> {
        let (tls, issues) = ucx_list::parse_tls(have);
        if let Some(issue) = issues.iter().find(|i| i.kind.is_error()) {
            return Some(format!("is malformed: {}", issue.kind));
        }
        let concerns = roce_model::fabric::ucx::tls_concerns(&tls, self.linter.ucx_mode);
        (!concerns.is_empty()).then(|| {
            concerns
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; it ")
        })
    }
}

/// A pod's `resourceClaims` (name, template), the claim names its container lists, and where to point.
struct Claims<'a> {
    pod: Vec<(String, Option<String>)>,
    used: Vec<&'a str>,
    at: Option<Origin>,
}

impl Claims<'_> {
    /// The pod claims as the fabric core's DRA rules read them.
    fn found(&self) -> Vec<FoundPodClaim<'_>> {
        self.pod
            .iter()
            .map(|(name, template)| FoundPodClaim {
                name,
                template: template.as_deref(),
            })
            .collect()
    }
}

/// Which missing NAD a listed network that is none of the profile's was meant to be, with why: the same
/// name in another namespace first, else the closest name; `None` for an unrelated network.
fn mistaken_for(
    n: &multus::Network<'_>,
    missing: &[&NadRef],
    pod_namespace: Option<&str>,
) -> Option<(usize, String)> {
    let same_name = missing.iter().position(|nad| nad.name().as_str() == n.name);
    let near = || {
        roce_model::plumbing::suggest::closest(&n.name, missing.iter().map(|m| m.name().as_str()))
            .and_then(|c| missing.iter().position(|m| m.name().as_str() == c))
    };
    match same_name {
        Some(i) => Some((
            i,
            format!(
                "is in namespace `{}`, but the profile's NAD is in `{}`",
                n.namespace
                    .as_deref()
                    .or(pod_namespace)
                    .unwrap_or("(the pod's)"),
                missing[i].namespace()
            ),
        )),
        None => near().map(|i| {
            (
                i,
                format!(
                    "is not one of the profile's networks; did you mean `{}`?",
                    missing[i].name()
                ),
            )
        }),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn sentence(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How lint ranks a consequence: the job fails or loses RDMA (error), runs slower (warning), only differs
/// (a note).
fn severity(c: env::Consequence) -> Severity {
    match c {
        env::Consequence::Fails | env::Consequence::SilentTcp => Severity::Error,
        env::Consequence::Slower => Severity::Warning,
        env::Consequence::Differs => Severity::Info,
    }
}

/// One RDMA resource the plan asks a container for, and which rule judges it.
struct Asked<'r> {
    name: &'r str,
    want: &'r str,
    /// The provider's per-device resource: a count of devices, not a scheduling gate.
    per_device: bool,
    /// The NVIDIA GPUs the container asks for (`nvidia.com/gpu`), which its share of the devices follows.
    pod_gpus: Option<u64>,
    code: Code,
}

/// A value to check: a YAML value node, or text with its place (an `mpirun -x NAME=VALUE` word).
enum ValueAt<'n> {
    Node(&'n Entry),
    Text(&'n str, Origin),
}

/// The place of `needle` inside a scalar's source text (block scalars included), else the scalar.
fn find_in(text: &str, node: &Node, needle: &str) -> Origin {
    let range = node.origin.range();
    let found = text
        .get(range.clone())
        .and_then(|s| (!needle.is_empty()).then(|| s.find(needle)).flatten());
    match found {
        Some(at) => Origin {
            source: node.origin.source,
            offset: range.start + at,
            len: needle.len(),
        },
        None => node.origin,
    }
}

fn token_at(content: Option<Origin>, at: Origin) -> Origin {
    content.unwrap_or(at)
}

/// The items of a container's `env` list.
fn env_items(c: &Node) -> Vec<&Node> {
    match entry(c, "env").map(|e| &e.node.value) {
        Some(Value::Seq(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

fn owner(t: &Template, c: &Node) -> String {
    match text(c, "name") {
        Some(n) => format!("container `{n}` of the {}", t.label),
        None => format!("the {}", t.label),
    }
}
