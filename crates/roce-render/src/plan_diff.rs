//! Compare two [`Plan`]s: what a profile change does to the deployed artifacts (`roce diff`).
//!
//! The comparison is semantic. Environment variables are compared by name (their order carries no
//! meaning: every target quotes values literally, so no variable refers to another); NADs are compared
//! in rail order, because the attachment order decides which pod netdev (`net1`, `net2`, …) each rail
//! gets. [`PlanDiff::target_effect`] says which of the changes each [`Target`] carries; it finds out by
//! rendering, not from a table, so a new target is covered the day it is added.
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! use roce_render::{plan, plan_diff, Target};
//! let lower = |n| plan::lower(&load(builtin::source(n).unwrap(), &BuiltinsOnly).profile.unwrap());
//! let d = plan_diff::diff(&lower("coreweave/gb300-roce"), &lower("coreweave/gb300-ib"));
//! assert_eq!(d.networks_removed.len(), 16);
//! assert!(d.env.iter().any(|e| e.name == "NCCL_IB_TC" && e.new.is_none()));
//! let opts = roce_render::RenderOptions::default();
//! assert!(d.target_effect(Target::Pod, &opts).contains(&plan_diff::Aspect::Networks));
//! assert!(!d.target_effect(Target::Env, &opts).contains(&plan_diff::Aspect::Networks));
//! ```

use std::fmt;

use indexmap::IndexMap;
use roce_model::model::NadRef;
use roce_model::source::Origin;

use crate::plan::{Consumer, EnvVar, Plan};
use crate::target::Target;
use crate::{PROFILE_ANNOTATION, RenderOptions, render};

/// One keyed value that differs (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// What changed (a resource name, a label key, `partition`, …).
    pub key: String,
    /// Value in plan A.
    pub old: Option<String>,
    /// Value in plan B.
    pub new: Option<String>,
}

/// An environment variable that was added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvChange {
    /// Variable name.
    pub name: String,
    /// Who reads it (from the side that has it, B first).
    pub consumer: Consumer,
    /// Value in A.
    pub old: Option<String>,
    /// Value in B.
    pub new: Option<String>,
    /// Where A's profile sets it (an origin in A's sources).
    pub old_origin: Option<Origin>,
    /// Where B's profile sets it (an origin in B's sources).
    pub new_origin: Option<Origin>,
}

impl EnvChange {
    /// `added`, `removed` or `changed`.
    pub fn kind(&self) -> &'static str {
        match (&self.old, &self.new) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        }
    }
}

/// A part of a plan that targets render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Aspect {
    /// Profile name, description, fabric and UCX mode: the header of every artifact, the
    /// `roce.dev/profile` annotation, and what validation jobs say and run.
    Header,
    /// Environment variables.
    Env,
    /// Multus networks (the `k8s.v1.cni.cncf.io/networks` annotation).
    Networks,
    /// Extended resources in requests and limits (GPUs, `rdma/ib`).
    Resources,
    /// Linux capabilities.
    Capabilities,
    /// Pod node selector.
    NodeSelector,
    /// Slurm `#SBATCH` defaults.
    Slurm,
    /// Image requirements (least rdma-core).
    Image,
    /// Whether pods attach the fabric themselves (direct pods) or a SUNK NodeSet does (env only).
    Wiring,
    /// DRA: the pods' claims (NICs, the NVLink domain's IMEX channel), the objects they name, the
    /// NVLink-clique affinity and its label, Kueue topology annotations.
    Dra,
    /// Any other part of the plan (a field this comparison does not itemise).
    Other,
}

impl Aspect {
    /// Short name for tables (`env`, `networks`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Aspect::Header => "header",
            Aspect::Env => "env",
            Aspect::Networks => "networks",
            Aspect::Resources => "resources",
            Aspect::Capabilities => "capabilities",
            Aspect::NodeSelector => "node-selector",
            Aspect::Slurm => "slurm",
            Aspect::Image => "image",
            Aspect::Wiring => "wiring",
            Aspect::Dra => "dra",
            Aspect::Other => "other",
        }
    }

    /// Plan `a` with this aspect taken from plan `b`: rendering it shows what this aspect alone does to
    /// a target.
    fn apply(self, a: &Plan, b: &Plan) -> Plan {
        let mut p = a.clone();
        match self {
            Aspect::Header => {
                p.profile.clone_from(&b.profile);
                p.description.clone_from(&b.description);
                p.fabric = b.fabric;
                p.fabric_label = b.fabric_label;
                p.nccl_tests_image.clone_from(&b.nccl_tests_image);
                p.ucx_perftest_image.clone_from(&b.ucx_perftest_image);
                p.ucx_mode = b.ucx_mode;
                // the provider shows in the header (its nccl-tests image) and the env it sets
                p.provider.clone_from(&b.provider);
            }
            Aspect::Env => {
                p.env.clone_from(&b.env);
                // What NCCL_IB_HCA selects from: no target writes it, the env is read against it.
                p.rail_ports.clone_from(&b.rail_ports);
            }
            Aspect::Networks => {
                if let (Some(w), Some(bw)) = (&mut p.wiring, &b.wiring) {
                    w.networks.clone_from(&bw.networks);
                }
            }
            Aspect::Resources => {
                p.gpus_per_node = b.gpus_per_node;
                p.gpu_resource = b.gpu_resource;
                if let (Some(w), Some(bw)) = (&mut p.wiring, &b.wiring) {
                    w.resources.clone_from(&bw.resources);
                }
            }
            Aspect::Capabilities => {
                if let (Some(w), Some(bw)) = (&mut p.wiring, &b.wiring) {
                    w.capabilities.clone_from(&bw.capabilities);
                }
            }
            Aspect::NodeSelector => p.node_selector.clone_from(&b.node_selector),
            Aspect::Slurm => p.slurm.clone_from(&b.slurm),
            Aspect::Image => p.min_rdma_core = b.min_rdma_core,
            Aspect::Wiring => {
                p.wiring.clone_from(&b.wiring);
                p.shm = b.shm;
            }
            Aspect::Dra => {
                p.dra_spec.clone_from(&b.dra_spec);
                p.dra.clone_from(&b.dra);
            }
            Aspect::Other => p = b.clone(),
        }
        // Notes are derived from the fields above: say what this aspect alone would say.
        crate::plan::refresh_notes(&mut p);
        p
    }
}

impl fmt::Display for Aspect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that differs between two plans.
#[derive(Debug, Clone, Default)]
pub struct PlanDiff {
    /// Profile name (`roce.dev/profile` annotation), description, fabric, UCX mode and the nccl-tests
    /// image validation jobs use.
    pub header: Vec<Change>,
    /// Environment variables added, removed or changed, in B's order then A's removed ones.
    pub env: Vec<EnvChange>,
    /// NADs only B attaches, in B's rail order.
    pub networks_added: Vec<NadRef>,
    /// NADs only A attaches, in A's rail order.
    pub networks_removed: Vec<NadRef>,
    /// Both attach the same NADs, but in a different rail order.
    pub networks_reordered: bool,
    /// Extended resources (`nvidia.com/gpu`, `rdma/ib`) in requests and limits.
    pub resources: Vec<Change>,
    /// Capabilities only B adds.
    pub capabilities_added: Vec<String>,
    /// Capabilities only A adds.
    pub capabilities_removed: Vec<String>,
    /// Node selector labels.
    pub node_selector: Vec<Change>,
    /// Slurm defaults (`partition`, `nodes`, `ntasks-per-node`, `gpus-per-node`).
    pub slurm: Vec<Change>,
    /// Image requirements (`min-rdma-core`).
    pub image: Vec<Change>,
    /// Direct pods vs SUNK NodeSet (`pods attach the fabric`: `yes`/`no`), and `/dev/shm`.
    pub wiring: Vec<Change>,
    /// DRA: `claim NAME` (its template), `ComputeDomain`, `affinity`, `label KEY`, `annotation KEY`,
    /// `object KIND/NAME` (the objects the claims name).
    pub dra: Vec<Change>,
    /// Some other part of the plan differs (one not itemised above).
    pub other: bool,
    /// The two plans, for [`PlanDiff::target_effect`].
    plans: Option<Box<(Plan, Plan)>>,
}

impl PlanDiff {
    /// The plans are the same (up to env order).
    pub fn is_empty(&self) -> bool {
        self.aspects().is_empty()
    }

    /// The aspects that changed, in [`Aspect`] order.
    pub fn aspects(&self) -> Vec<Aspect> {
        let mut out = Vec::new();
        let mut add = |cond: bool, a: Aspect| {
            if cond {
                out.push(a);
            }
        };
        add(!self.header.is_empty(), Aspect::Header);
        add(!self.env.is_empty(), Aspect::Env);
        add(
            !self.networks_added.is_empty()
                || !self.networks_removed.is_empty()
                || self.networks_reordered,
            Aspect::Networks,
        );
        add(!self.resources.is_empty(), Aspect::Resources);
        add(
            !self.capabilities_added.is_empty() || !self.capabilities_removed.is_empty(),
            Aspect::Capabilities,
        );
        add(!self.node_selector.is_empty(), Aspect::NodeSelector);
        add(!self.slurm.is_empty(), Aspect::Slurm);
        add(!self.image.is_empty(), Aspect::Image);
        add(!self.wiring.is_empty(), Aspect::Wiring);
        add(!self.dra.is_empty(), Aspect::Dra);
        add(self.other, Aspect::Other);
        out
    }

    /// The changed aspects that change `target`'s artifacts, rendered with `opts`: empty when the change
    /// leaves that target as it was. Each aspect is tried alone (plan A with that aspect from plan B),
    /// so the answer comes from the emitters themselves. A render error on one side counts as a change.
    pub fn target_effect(&self, target: Target, opts: &RenderOptions) -> Vec<Aspect> {
        let Some(plans) = &self.plans else {
            return Vec::new();
        };
        let (a, b) = (&plans.0, &plans.1);
        let base = render(a, target, opts);
        self.aspects()
            .into_iter()
            .filter(|aspect| render(&aspect.apply(a, b), target, opts) != base)
            .collect()
    }

    /// Phrases for a one-paragraph summary, in fabric terms ("drops 16 Multus NADs", "adds 5 and
    /// removes 8 environment variables").
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(w) = self.wiring.iter().find(|c| c.key == WIRING_KEY) {
            out.push(if w.new.as_deref() == Some("no") {
                "stops pods attaching the fabric themselves (a SUNK NodeSet does: env only)"
                    .to_string()
            } else {
                "makes pods attach the fabric themselves (no longer a SUNK NodeSet)".to_string()
            });
        }
        let (added, removed) = (self.networks_added.len(), self.networks_removed.len());
        let nads = |n: usize| {
            if n == 1 {
                "1 Multus NAD".to_string()
            } else {
                format!("{n} Multus NADs")
            }
        };
        match (added, removed) {
            (0, 0) if self.networks_reordered => {
                out.push("reorders the Multus NADs (rail → netdev mapping)".to_string())
            }
            (0, 0) => {}
            (0, r) => out.push(format!("drops {}", nads(r))),
            (a, 0) => out.push(format!("adds {}", nads(a))),
            (a, r) if a == r => out.push(format!("replaces {}", nads(a))),
            (a, r) => out.push(format!("replaces {} with {a}", nads(r))),
        }
        let count = |k: &str| self.env.iter().filter(|e| e.kind() == k).count();
        if !self.env.is_empty() && self.env.len() <= 3 {
            for e in &self.env {
                out.push(match (&e.old, &e.new) {
                    (None, Some(v)) => format!("sets {}={v}", e.name),
                    (Some(_), None) => format!("unsets {}", e.name),
                    (Some(o), Some(n)) => format!("changes {} from {o} to {n}", e.name),
                    (None, None) => continue,
                });
            }
        } else if !self.env.is_empty() {
            let parts: Vec<String> = ["added", "removed", "changed"]
                .into_iter()
                .filter_map(|k| {
                    let n = count(k);
                    (n > 0).then(|| format!("{n} {k}"))
                })
                .collect();
            out.push(format!(
                "changes {} environment variables ({})",
                self.env.len(),
                parts.join(", ")
            ));
        }
        for r in &self.resources {
            out.push(match (&r.old, &r.new) {
                (None, Some(v)) => format!("requests {}: {v}", r.key),
                (Some(_), None) => format!("stops requesting {}", r.key),
                (Some(o), Some(n)) => format!("changes {} from {o} to {n}", r.key),
                (None, None) => continue,
            });
        }
        for c in &self.capabilities_added {
            out.push(format!("adds capability {c}"));
        }
        for c in &self.capabilities_removed {
            out.push(format!("drops capability {c}"));
        }
        if !self.node_selector.is_empty() {
            out.push("changes the node selector".to_string());
        }
        if let Some(i) = self.image.first() {
            out.push(match &i.new {
                Some(v) => format!("requires rdma-core ≥ {v} in the image"),
                None => "no longer requires a minimum rdma-core".to_string(),
            });
        }
        out
    }
}

/// Join phrases as `a, b and c`.
pub(crate) fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Key of the [`PlanDiff::wiring`] change that says whether pods attach the fabric themselves.
pub(crate) const WIRING_KEY: &str = "pods attach the fabric";

/// Compare two plans.
pub fn diff(a: &Plan, b: &Plan) -> PlanDiff {
    let mut d = PlanDiff {
        header: changes(
            &[
                (PROFILE_ANNOTATION, Some(a.profile.clone())),
                ("description", a.description.clone()),
                ("fabric", Some(fabric(a))),
                ("fabric name", fabric_name(a)),
                ("ucx mode", Some(a.ucx_mode.as_str().to_string())),
                ("nccl-tests image", Some(a.nccl_tests_image.clone())),
                ("ucx_perftest image", Some(a.ucx_perftest_image.clone())),
            ],
            &[
                (PROFILE_ANNOTATION, Some(b.profile.clone())),
                ("description", b.description.clone()),
                ("fabric", Some(fabric(b))),
                ("fabric name", fabric_name(b)),
                ("ucx mode", Some(b.ucx_mode.as_str().to_string())),
                ("nccl-tests image", Some(b.nccl_tests_image.clone())),
                ("ucx_perftest image", Some(b.ucx_perftest_image.clone())),
            ],
        ),
        env: env(&a.env, &b.env),
        ..PlanDiff::default()
    };

    let nets = |p: &Plan| {
        p.wiring
            .as_ref()
            .map(|w| w.networks.clone())
            .unwrap_or_default()
    };
    let (na, nb) = (nets(a), nets(b));
    d.networks_added = nb.iter().filter(|n| !na.contains(n)).cloned().collect();
    d.networks_removed = na.iter().filter(|n| !nb.contains(n)).cloned().collect();
    d.networks_reordered = d.networks_added.is_empty() && d.networks_removed.is_empty() && na != nb;

    let keyed = |v: Vec<(String, String)>| -> Vec<(String, Option<String>)> {
        v.into_iter().map(|(k, v)| (k, Some(v))).collect()
    };
    d.resources = changes(&keyed(a.resources()), &keyed(b.resources()));
    let caps = |p: &Plan| {
        p.wiring
            .as_ref()
            .map(|w| w.capabilities.clone())
            .unwrap_or_default()
    };
    let (ca, cb) = (caps(a), caps(b));
    d.capabilities_added = cb
        .iter()
        .filter(|c| !ca.contains(c))
        .map(|c| c.to_string())
        .collect();
    d.capabilities_removed = ca
        .iter()
        .filter(|c| !cb.contains(c))
        .map(|c| c.to_string())
        .collect();
    d.node_selector = changes(
        &keyed(a.node_selector.clone()),
        &keyed(b.node_selector.clone()),
    );

    let slurm = |p: &Plan| {
        vec![
            ("partition".to_string(), Some(p.slurm.partition.clone())),
            ("nodes".to_string(), Some(p.slurm.nodes.to_string())),
            (
                "ntasks-per-node".to_string(),
                Some(p.slurm.ntasks_per_node.to_string()),
            ),
            (
                "gpus-per-node".to_string(),
                Some(p.slurm.gpus_per_node.to_string()),
            ),
        ]
    };
    d.slurm = changes(&slurm(a), &slurm(b));
    d.image = changes(
        &[("min-rdma-core", a.min_rdma_core.map(|v| v.to_string()))],
        &[("min-rdma-core", b.min_rdma_core.map(|v| v.to_string()))],
    );
    let yes_no = |b: bool| Some(if b { "yes" } else { "no" }.to_string());
    d.wiring = changes(
        &[
            (WIRING_KEY, yes_no(a.wiring.is_some())),
            ("/dev/shm in memory", yes_no(a.shm)),
        ],
        &[
            (WIRING_KEY, yes_no(b.wiring.is_some())),
            ("/dev/shm in memory", yes_no(b.shm)),
        ],
    );
    d.dra = changes(&dra_items(a), &dra_items(b));
    // Anything the comparison above does not itemise: plan B with every itemised aspect taken from A
    // should be A (up to env order); if not, some other field differs.
    let itemised = [
        Aspect::Header,
        Aspect::Env,
        Aspect::Networks,
        Aspect::Resources,
        Aspect::Capabilities,
        Aspect::NodeSelector,
        Aspect::Slurm,
        Aspect::Image,
        Aspect::Wiring,
        Aspect::Dra,
    ];
    let rest = itemised
        .iter()
        .fold(b.clone(), |p, aspect| aspect.apply(&p, a));
    d.other = sorted_env(&rest) != sorted_env(a);
    d.plans = Some(Box::new((a.clone(), b.clone())));
    d
}

/// The plan's DRA wiring as keyed text, for [`PlanDiff::dra`].
fn dra_items(p: &Plan) -> Vec<(String, Option<String>)> {
    let d = &p.dra;
    let mut out: Vec<(String, Option<String>)> = d
        .pod_claims
        .iter()
        .map(|c| {
            (
                format!("claim {}", c.name()),
                Some(format!("from template {}", c.template())),
            )
        })
        .collect();
    if let Some(cd) = p.dra_spec.nvlink_domain.compute_domain() {
        out.push((
            "ComputeDomain".to_string(),
            Some(format!("{} (numNodes {})", cd.name(), cd.num_nodes())),
        ));
    }
    if d.affinity.is_some()
        && let Some(c) = &p.dra_spec.placement.clique_affinity
    {
        out.push((
            "affinity".to_string(),
            Some(format!(
                "required, on {}, among pods labelled {}={}",
                roce_model::fabric::dra::CLIQUE_LABEL,
                c.key,
                c.value
            )),
        ));
    }
    out.extend(
        d.labels
            .iter()
            .map(|(k, v)| (format!("label {k}"), Some(v.clone()))),
    );
    out.extend(
        d.annotations
            .iter()
            .map(|(k, v)| (format!("annotation {k}"), Some(v.clone()))),
    );
    for doc in &d.documents {
        let key = format!("object {}/{}", doc.kind(), doc.name());
        out.push((key, Some("applied beside the workload".to_string())));
    }
    out
}

fn sorted_env(p: &Plan) -> Plan {
    let mut p = p.clone();
    p.env.sort_by(|x, y| x.name.cmp(&y.name));
    p
}

fn fabric(p: &Plan) -> String {
    p.fabric.as_str().to_string()
}

/// The fabric's name where it is not the link's (`EFA` over `infiniband`); `None` otherwise, so a change of
/// fabric is not said twice.
fn fabric_name(p: &Plan) -> Option<String> {
    (p.fabric_label != roce_model::fabric::provider::link_name(p.fabric))
        .then(|| p.fabric_label.to_string())
}

/// Keyed comparison: keys in A's order, then keys only B has. A key whose value is `None` is absent.
fn changes<K: AsRef<str>>(a: &[(K, Option<String>)], b: &[(K, Option<String>)]) -> Vec<Change> {
    let ma: IndexMap<&str, &Option<String>> = a.iter().map(|(k, v)| (k.as_ref(), v)).collect();
    let mb: IndexMap<&str, &Option<String>> = b.iter().map(|(k, v)| (k.as_ref(), v)).collect();
    let mut keys: Vec<&str> = ma.keys().copied().collect();
    keys.extend(mb.keys().copied().filter(|k| !ma.contains_key(k)));
    keys.into_iter()
        .filter_map(|k| {
            let old = ma.get(k).and_then(|v| (*v).clone());
            let new = mb.get(k).and_then(|v| (*v).clone());
            (old != new).then(|| Change {
                key: k.to_string(),
                old,
                new,
            })
        })
        .collect()
}

fn env(a: &[EnvVar], b: &[EnvVar]) -> Vec<EnvChange> {
    let find = |list: &[EnvVar], name: &str| list.iter().find(|e| e.name == name).cloned();
    let mut out = Vec::new();
    for nb in b {
        let na = find(a, &nb.name);
        if na.as_ref().map(|e| &e.value) != Some(&nb.value) {
            out.push(EnvChange {
                name: nb.name.clone(),
                consumer: nb.consumer,
                old: na.as_ref().map(|e| e.value.clone()),
                new: Some(nb.value.clone()),
                old_origin: na.and_then(|e| e.origin),
                new_origin: nb.origin,
            });
        }
    }
    for na in a.iter().filter(|e| find(b, &e.name).is_none()) {
        out.push(EnvChange {
            name: na.name.clone(),
            consumer: na.consumer,
            old: Some(na.value.clone()),
            new: None,
            old_origin: na.origin,
            new_origin: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan;
    use roce_model::{BuiltinsOnly, Source, builtin, load};

    fn lower_text(name: &str, text: &str) -> Plan {
        let l = load(Source::new(name, text), &BuiltinsOnly);
        plan::lower(&l.profile.unwrap_or_else(|| panic!("{:#?}", l.problems)))
    }

    fn lower(name: &str) -> Plan {
        plan::lower(
            &load(builtin::source(name).unwrap(), &BuiltinsOnly)
                .profile
                .unwrap(),
        )
    }

    fn rendered(p: &Plan, t: Target) -> Vec<crate::Artifact> {
        render(p, t, &RenderOptions::default()).unwrap()
    }

    /// A target's artifacts change exactly when `target_effect` says they do: checked for one-field
    /// overrides that each touch one aspect, and for every pair of built-in profiles.
    #[test]
    fn target_effect_matches_what_rendering_changes() {
        let roce = "coreweave/gb300-roce";
        let nixl = "coreweave/gb300-roce-nixl";
        let overrides = [
            (roce, "node-pool { partition \"other\" }"),
            (roce, "job nodes=8"),
            (roce, "capabilities \"IPC_LOCK\" \"SYS_NICE\""),
            (roce, "node-pool { node-labels { \"extra\" \"x\" } }"),
            (nixl, "ucx min-rdma-core=56; image rdma-core=56"),
            (roce, "nccl debug=\"WARN\""),
            (roce, "description \"other words\""),
            (roce, "node-pool gpus-per-node=8"),
            (roce, "node-pool { sunk-nodeset #true }"),
            (
                roce,
                "multus per-port namespace=\"other\" name=\"{host-port}-macvlan\"",
            ),
        ];
        let mut pairs: Vec<(String, Plan, Plan)> = overrides
            .iter()
            .map(|(base, o)| {
                let text = format!("profile \"{base}\" extends=\"{base}\" {{ {o} }}");
                (o.to_string(), lower(base), lower_text("o.kdl", &text))
            })
            .collect();
        for x in builtin::names() {
            for y in builtin::names() {
                pairs.push((format!("{x} vs {y}"), lower(x), lower(y)));
            }
        }
        for (what, pa, pb) in &pairs {
            let d = diff(pa, pb);
            if what.contains(" vs ") {
                assert_eq!(d.is_empty(), pa == pb, "{what}");
            } else {
                assert!(!d.is_empty(), "{what}: the override changes the plan");
            }
            for &t in Target::ALL {
                let differs = rendered(pa, t) != rendered(pb, t);
                assert_eq!(
                    differs,
                    !d.target_effect(t, &RenderOptions::default()).is_empty(),
                    "{what}: {t}: rendered differs = {differs}, effect = {:?}",
                    d.target_effect(t, &RenderOptions::default())
                );
            }
        }
    }

    #[test]
    fn each_override_reaches_the_targets_that_render_it() {
        let roce = "coreweave/gb300-roce";
        let opts = RenderOptions::default();
        let effect = |o: &str, t: Target| {
            let text = format!("profile \"{roce}\" extends=\"{roce}\" {{ {o} }}");
            diff(&lower(roce), &lower_text("o.kdl", &text)).target_effect(t, &opts)
        };
        let partition = "node-pool { partition \"other\" }";
        assert_eq!(effect(partition, Target::Sbatch), [Aspect::Slurm]);
        assert_eq!(effect(partition, Target::Pod), []);
        assert_eq!(effect(partition, Target::Env), []);
        let nads = "multus per-port namespace=\"other\" name=\"{host-port}-macvlan\"";
        assert_eq!(effect(nads, Target::Pod), [Aspect::Networks]);
        assert_eq!(effect(nads, Target::Env), []);
        assert_eq!(effect(nads, Target::Dockerfile), []);
        let debug = "nccl debug=\"WARN\"";
        for &t in Target::ALL {
            assert_eq!(effect(debug, t), [Aspect::Env], "{t}");
        }
        let caps = "capabilities \"IPC_LOCK\" \"SYS_NICE\"";
        assert_eq!(effect(caps, Target::Pod), [Aspect::Capabilities]);
        assert_eq!(effect(caps, Target::Sbatch), []);
    }

    #[test]
    fn every_plan_field_is_itemised() {
        use roce_model::model::UcxMode;
        let a = lower("coreweave/gb300-roce");
        type Mutation = (Aspect, fn(&mut Plan));
        let mutations: [Mutation; 8] = [
            (Aspect::Wiring, |p| p.shm = !p.shm),
            (Aspect::Header, |p| p.nccl_tests_image.push_str("-other")),
            (Aspect::Header, |p| p.ucx_perftest_image.push_str("-other")),
            (Aspect::Header, |p| p.fabric_label = "EFA"),
            (Aspect::Header, |p| p.ucx_mode = UcxMode::Rdma),
            (Aspect::Slurm, |p| p.slurm.nodes += 1),
            (Aspect::Resources, |p| p.gpus_per_node += 1),
            (Aspect::Image, |p| p.min_rdma_core = Some(60)),
        ];
        for (want, mutate) in mutations {
            let mut b = a.clone();
            mutate(&mut b);
            let d = diff(&a, &b);
            assert_eq!(d.aspects(), [want]);
            assert!(!d.other);
        }
    }

    #[test]
    fn env_order_is_not_a_change_but_nad_order_is() {
        let mut a = lower("coreweave/gb300-roce");
        let mut b = a.clone();
        b.env.reverse();
        assert!(diff(&a, &b).is_empty());
        b.wiring.as_mut().unwrap().networks.swap(0, 1);
        let d = diff(&a, &b);
        assert!(d.networks_reordered && d.networks_added.is_empty());
        assert_eq!(d.aspects(), [Aspect::Networks]);
        a.env[0].value.push('x');
        assert_eq!(diff(&a, &b).aspects(), [Aspect::Env, Aspect::Networks]);
    }

    #[test]
    fn roce_to_ib_summary() {
        let d = diff(&lower("coreweave/gb300-roce"), &lower("coreweave/gb300-ib"));
        let s = d.summary().join("; ");
        assert!(s.contains("drops 16 Multus NADs"), "{s}");
        assert!(s.contains("environment variables"), "{s}");
        let removed: Vec<&str> = d
            .env
            .iter()
            .filter(|e| e.kind() == "removed")
            .map(|e| e.name.as_str())
            .collect();
        assert!(
            removed.contains(&"NCCL_IB_TC") && removed.contains(&"NCCL_IB_ADDR_FAMILY"),
            "{removed:?}"
        );
        assert!(d.capabilities_added.is_empty() && d.capabilities_removed.is_empty());
    }

    /// The NVLink domain, claims and placement are itemised as DRA, never as "other", and reach exactly the
    /// targets that write pods or say what the nodes must give.
    #[test]
    fn dra_changes_are_itemised() {
        let d = diff(
            &lower("coreweave/gb300-roce"),
            &lower("coreweave/gb300-roce-dra"),
        );
        assert!(!d.other, "{:?}", d.aspects());
        assert!(d.aspects().contains(&Aspect::Dra));
        let keys: Vec<&str> = d.dra.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "claim compute-domain-channel",
                "ComputeDomain",
                "affinity",
                "label metadata.coreweave.cloud/job",
                "object ComputeDomain/nccl-test-72-gb300-18n-dra",
            ]
        );
        let opts = RenderOptions::default();
        assert!(d.target_effect(Target::Pod, &opts).contains(&Aspect::Dra));
        assert!(!d.target_effect(Target::Env, &opts).contains(&Aspect::Dra));
        assert!(
            !d.target_effect(Target::Dockerfile, &opts)
                .contains(&Aspect::Dra)
        );
        // NICs as DRA devices: the claim, its template, and no nvidia.com/gpu request (a resource change).
        let d = diff(
            &lower("coreweave/gb300-roce"),
            &lower("oci/gb200-roce-dranet"),
        );
        assert!(!d.other, "{:?}", d.aspects());
        assert!(
            d.dra
                .iter()
                .any(|c| c.key == "object ResourceClaimTemplate/4gpu-8nic")
        );
        assert!(
            d.resources
                .iter()
                .any(|c| c.key == "nvidia.com/gpu" && c.new.is_none())
        );
    }

    #[test]
    fn join_and_reads_like_english() {
        let s = |v: &[&str]| join_and(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&[]), "");
        assert_eq!(s(&["a"]), "a");
        assert_eq!(s(&["a", "b", "c"]), "a, b and c");
    }
}
