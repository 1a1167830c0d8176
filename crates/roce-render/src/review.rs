//! The review of a profile change: what `roce diff A B` reports, as data.
//!
//! [`review`] compares two loaded profiles: the model fields that changed and where each side set them;
//! the effect on the lowered [`Plan`] ([`plan_diff`]); which [`Target`]s' artifacts change,
//! and by how many lines; the diagnostics the change introduces and resolves; and, for the targets asked
//! for, unified diffs of the rendered files. The result is plain [`Serialize`] data: its JSON is
//! `roce diff --format json`, field for field (docs/diff.md), and the CLI's human and Markdown printers
//! read the same values. Reading the profiles (files, Git revisions) is the caller's job.
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! use roce_render::review::{self, ArtifactDiff, Input};
//! use roce_render::Target;
//! let (roce, ib) = ("coreweave/gb300-roce", "coreweave/gb300-ib");
//! let a = load(builtin::source(roce).unwrap(), &BuiltinsOnly);
//! let b = load(builtin::source(ib).unwrap(), &BuiltinsOnly);
//! let r = review::review(Input::new(roce, &a), Input::new(ib, &b), &[Target::Env]).unwrap();
//! assert!(!r.equal);
//! assert_eq!(r.plan.networks.removed.len(), 16);
//! assert!(r.plan.env.iter().any(|e| e.name == "NCCL_IB_TC" && e.change == "removed"));
//! // The dotenv file carries no Multus annotation, so the NAD change does not reach it.
//! let env = r.targets.iter().find(|t| t.target == Target::Env).unwrap();
//! assert!(!env.changes.contains(&roce_render::plan_diff::Aspect::Networks));
//! assert!(matches!(&r.artifacts[0], ArtifactDiff::Changed { path, .. } if path == "roce.env"));
//!
//! let json = serde_json::to_value(&r).unwrap();
//! assert_eq!(json["targets"][4]["target"], "env");
//! assert_eq!(json["plan"]["networks"]["removed"][0]["namespace"], "cw-multus");
//! ```

use roce_model::diff::{FieldChange, NcclUpgrade};
use roce_model::problem::ProblemRecord;
use roce_model::source::Sources;
use roce_model::{Loaded, Problem, Profile};
use serde::{Serialize, Serializer};

use crate::plan::{Consumer, MULTUS_ANNOTATION};
use crate::plan_diff::{self, Aspect, Change, PlanDiff, join_and};
use crate::{Artifact, Plan, RenderOptions, Target, plan, render};

/// One side of the comparison, as the caller read it.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// How the user named it (a built-in, a path, `REV:path`).
    pub spec: &'a str,
    /// What loading it gave.
    pub loaded: &'a Loaded,
}

impl<'a> Input<'a> {
    /// A side named `spec`.
    pub fn new(spec: &'a str, loaded: &'a Loaded) -> Self {
        Input { spec, loaded }
    }
}

/// What a profile change does, from the model fields to the rendered files.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    /// The old profile.
    pub a: Side,
    /// The new profile.
    pub b: Side,
    /// No semantic change: same fields, same plan, same diagnostics.
    pub equal: bool,
    /// One paragraph, in fabric terms.
    pub summary: String,
    /// The model fields that differ, in schema order.
    pub fields: Vec<ChangedField>,
    /// The effect on the plan.
    pub plan: PlanChanges,
    /// The NCCL release change, when both sides name a release (`nccl version`) and they differ: which of
    /// B's variables one release reads and the other does not, and the defaults that change
    /// ([`roce_model::diff::nccl_upgrade`]).
    pub nccl: Option<NcclUpgrade>,
    /// The effect on each target, in [`Target::ALL`] order, with default render options.
    pub targets: Vec<TargetEffect>,
    /// Diagnostics the change introduces and resolves.
    pub diagnostics: Diagnostics,
    /// For the targets asked for: the files that differ, then the targets that cannot render.
    pub artifacts: Vec<ArtifactDiff>,
    /// The targets whose artifacts were asked for, in the order asked.
    #[serde(skip)]
    pub shown: Vec<Target>,
}

/// A profile that was read.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// How the user named it.
    pub spec: String,
    /// The profile's name.
    pub profile: Option<String>,
    /// The sources read: the profile first, then each `extends` layer.
    pub sources: Vec<String>,
}

/// A changed model field, with the place that set each side.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedField {
    /// Schema path (`ucx.tls`, `multus.nads[0]`, …).
    #[serde(rename = "field")]
    pub path: String,
    /// A's value (`None`: unset).
    pub old: Option<String>,
    /// B's value.
    pub new: Option<String>,
    /// Where A writes it (`file:line:column`); `None` when unset or implicit.
    pub old_at: Option<String>,
    /// Where B writes it.
    pub new_at: Option<String>,
    /// A's value is an implicit default, written nowhere.
    pub old_default: bool,
    /// B's value is an implicit default.
    pub new_default: bool,
}

/// Everything that differs between the two plans (see [`PlanDiff`]), with places resolved.
#[derive(Debug, Clone, Serialize)]
pub struct PlanChanges {
    /// Profile annotation, description, fabric, UCX mode, validation image.
    pub header: Vec<Change>,
    /// Environment variables added, removed or changed.
    pub env: Vec<EnvChange>,
    /// Multus NADs.
    pub networks: NetworkChanges,
    /// Extended resources in requests and limits.
    pub resources: Vec<Change>,
    /// Linux capabilities.
    pub capabilities: CapabilityChanges,
    /// Node selector labels.
    pub node_selector: Vec<Change>,
    /// Slurm defaults.
    pub slurm: Vec<Change>,
    /// Image requirements.
    pub image: Vec<Change>,
    /// Direct pods vs SUNK NodeSet, `/dev/shm`.
    pub wiring: Vec<Change>,
    /// DRA claims, the NVLink domain, placement and the objects the claims name.
    pub dra: Vec<Change>,
    /// [`PlanDiff::is_empty`]: also false when a part not itemised above differs.
    #[serde(skip)]
    unchanged: bool,
}

impl PlanChanges {
    /// Both profiles lower to the same plan (up to env order).
    pub fn is_empty(&self) -> bool {
        self.unchanged
    }
}

/// An environment variable that differs.
#[derive(Debug, Clone, Serialize)]
pub struct EnvChange {
    /// Variable name.
    pub name: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// Who reads it: `NCCL`, `UCX` or `other`.
    pub consumer: &'static str,
    /// A's value.
    pub old: Option<String>,
    /// B's value.
    pub new: Option<String>,
    /// Where A's profile sets it.
    pub old_at: Option<String>,
    /// Where B's profile sets it.
    pub new_at: Option<String>,
}

/// Multus NADs attached on one side only, or reordered.
#[derive(Debug, Clone, Serialize)]
pub struct NetworkChanges {
    /// The annotation that carries them.
    pub annotation: &'static str,
    /// Only B attaches these, in B's rail order.
    pub added: Vec<Nad>,
    /// Only A attaches these, in A's rail order.
    pub removed: Vec<Nad>,
    /// Same NADs in a different rail order.
    pub reordered: bool,
}

/// A NetworkAttachmentDefinition reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Nad {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// Capabilities added on one side only.
#[derive(Debug, Clone, Serialize)]
pub struct CapabilityChanges {
    /// Only B adds these.
    pub added: Vec<String>,
    /// Only A adds these.
    pub removed: Vec<String>,
}

/// What the change does to one target's artifacts (default render options).
#[derive(Debug, Clone, Serialize)]
pub struct TargetEffect {
    /// The target.
    #[serde(serialize_with = "slug")]
    pub target: Target,
    /// The changed aspects that reach its artifacts.
    #[serde(serialize_with = "aspect_names")]
    pub changes: Vec<Aspect>,
    /// Lines only B's artifacts have.
    pub lines_added: usize,
    /// Lines only A's artifacts have.
    pub lines_removed: usize,
    /// Why one side cannot render (`A: …; B: …`).
    pub error: Option<String>,
}

/// Diagnostics on B that A does not have, and the reverse (matched by code and message).
#[derive(Debug, Clone, Serialize)]
pub struct Diagnostics {
    /// Only B has these.
    pub new: Vec<ProblemRecord>,
    /// Only A has these.
    pub resolved: Vec<ProblemRecord>,
    /// B's diagnostics that A has too.
    pub unchanged: usize,
}

/// A rendered file that differs, or a target asked for that cannot render.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ArtifactDiff {
    /// A file whose contents differ.
    Changed {
        /// The target.
        #[serde(serialize_with = "slug")]
        target: Target,
        /// The file's path.
        path: String,
        /// Unified diff, `a/PATH` → `b/PATH`.
        diff: String,
    },
    /// One side cannot render this target.
    Unrenderable {
        /// The target.
        #[serde(serialize_with = "slug")]
        target: Target,
        /// Why (`A: …; B: …`).
        error: String,
    },
}

impl ArtifactDiff {
    /// The target the entry belongs to.
    pub fn target(&self) -> Target {
        match self {
            ArtifactDiff::Changed { target, .. } | ArtifactDiff::Unrenderable { target, .. } => {
                *target
            }
        }
    }
}

/// Both sides, or the sides that did not load: `{"error", "failed":[{side, spec, problems}]}`.
#[derive(Debug, Clone, Serialize)]
pub struct LoadFailure {
    /// `a profile failed to load`.
    pub error: &'static str,
    /// Each side that failed.
    pub failed: Vec<FailedSide>,
}

/// A side whose profile did not load.
#[derive(Debug, Clone, Serialize)]
pub struct FailedSide {
    /// `a` or `b`.
    pub side: &'static str,
    /// How the user named it.
    pub spec: String,
    /// Why it failed.
    pub problems: Vec<ProblemRecord>,
}

impl Review {
    /// What to call A and B in a title: the profile names, or the specs when the names are equal.
    pub fn names(&self) -> [&str; 2] {
        let (a, b) = (&self.a, &self.b);
        match (&a.profile, &b.profile) {
            (Some(pa), Some(pb)) if pa != pb => [pa, pb],
            _ => [&a.spec, &b.spec],
        }
    }
}

/// Review the change from `a` to `b`; `show` lists the targets whose changed files to diff. Fails when
/// either profile did not load.
pub fn review(a: Input<'_>, b: Input<'_>, show: &[Target]) -> Result<Review, LoadFailure> {
    let (Some(pa), Some(pb)) = (&a.loaded.profile, &b.loaded.profile) else {
        return Err(load_failure(a, b));
    };
    let (sa, sb) = (&a.loaded.sources, &b.loaded.sources);
    let model = roce_model::diff::diff(pa, pb);
    let (plan_a, plan_b) = (plan::lower(pa), plan::lower(pb));
    let pd = plan_diff::diff(&plan_a, &plan_b);
    let (new, resolved) = (
        unmatched(&b.loaded.problems, &a.loaded.problems),
        unmatched(&a.loaded.problems, &b.loaded.problems),
    );
    let equal = model.is_empty() && pd.is_empty() && new.is_empty() && resolved.is_empty();
    let fields: Vec<ChangedField> = model.changes.iter().map(|c| field(c, sa, sb)).collect();
    let summary = if equal {
        "No semantic change: both profiles compile to the same fabric wiring, environment and artifacts.".to_string()
    } else {
        let mut phrases = model.summary(pa, pb);
        phrases.extend(pd.summary());
        phrases.extend(problem_phrase(&new, "introduces"));
        phrases.extend(problem_phrase(&resolved, "resolves"));
        summarise(&phrases, &fields)
    };

    let (targets, artifacts) = effects(&pd, [&plan_a, &plan_b], show);

    Ok(Review {
        a: side(a),
        b: side(b),
        equal,
        summary,
        fields,
        plan: plan_changes(&pd, sa, sb),
        nccl: roce_model::diff::nccl_upgrade(pa, pb),
        targets,
        diagnostics: Diagnostics {
            unchanged: b.loaded.problems.len() - new.len(),
            new: new.into_iter().map(ProblemRecord::from).collect(),
            resolved: resolved.into_iter().map(ProblemRecord::from).collect(),
        },
        artifacts,
        shown: show.to_vec(),
    })
}

/// Each target's effect row, and the diffs (then the render errors) of the targets in `show`.
fn effects(
    pd: &PlanDiff,
    [plan_a, plan_b]: [&Plan; 2],
    show: &[Target],
) -> (Vec<TargetEffect>, Vec<ArtifactDiff>) {
    let opts = RenderOptions::default();
    let mut targets = Vec::new();
    let (mut artifacts, mut unrenderable) = (Vec::new(), Vec::new());
    for &t in Target::ALL {
        let mut row = TargetEffect {
            target: t,
            changes: pd.target_effect(t, &opts),
            lines_added: 0,
            lines_removed: 0,
            error: None,
        };
        match (render(plan_a, t, &opts), render(plan_b, t, &opts)) {
            (Ok(fa), Ok(fb)) => {
                for (path, old, new) in pair_files(&fa, &fb) {
                    let d = similar::TextDiff::from_lines(old, new);
                    for change in d.iter_all_changes() {
                        match change.tag() {
                            similar::ChangeTag::Insert => row.lines_added += 1,
                            similar::ChangeTag::Delete => row.lines_removed += 1,
                            similar::ChangeTag::Equal => {}
                        }
                    }
                    if show.contains(&t) && old != new {
                        let (ha, hb) = (format!("a/{path}"), format!("b/{path}"));
                        let diff = d.unified_diff().header(&ha, &hb).to_string();
                        let path = path.to_string();
                        artifacts.push(ArtifactDiff::Changed {
                            target: t,
                            path,
                            diff,
                        });
                    }
                }
            }
            (ea, eb) => {
                let why = [("A", ea.err()), ("B", eb.err())]
                    .into_iter()
                    .filter_map(|(s, e)| e.map(|e| format!("{s}: {e}")))
                    .collect::<Vec<_>>()
                    .join("; ");
                if show.contains(&t) {
                    let error = why.clone();
                    unrenderable.push(ArtifactDiff::Unrenderable { target: t, error });
                }
                row.error = Some(why);
            }
        }
        targets.push(row);
    }
    artifacts.extend(unrenderable);
    (targets, artifacts)
}

fn load_failure(a: Input<'_>, b: Input<'_>) -> LoadFailure {
    let failed = [("a", a), ("b", b)]
        .into_iter()
        .filter(|(_, s)| s.loaded.profile.is_none())
        .map(|(side, s)| FailedSide {
            side,
            spec: s.spec.to_string(),
            problems: s.loaded.problems.iter().map(ProblemRecord::from).collect(),
        })
        .collect();
    LoadFailure {
        error: "a profile failed to load",
        failed,
    }
}

fn side(s: Input<'_>) -> Side {
    Side {
        spec: s.spec.to_string(),
        profile: s
            .loaded
            .profile
            .as_ref()
            .map(|p: &Profile| p.name.value.clone()),
        sources: s
            .loaded
            .sources
            .iter()
            .map(|(_, src)| src.name.clone())
            .collect(),
    }
}

fn field(c: &FieldChange, a: &Sources, b: &Sources) -> ChangedField {
    ChangedField {
        path: c.path.clone(),
        old: c.old.as_ref().map(|v| v.value.clone()),
        new: c.new.as_ref().map(|v| v.value.clone()),
        old_at: c.old_at(a),
        new_at: c.new_at(b),
        old_default: c.old.is_some() && !c.old_written,
        new_default: c.new.is_some() && !c.new_written,
    }
}

/// The problems of `list` that `other` lacks, matched by code and message, one for one.
fn unmatched<'p>(list: &'p [Problem], other: &[Problem]) -> Vec<&'p Problem> {
    let key = |p: &Problem| (p.code, p.message.clone());
    let mut remaining: Vec<_> = other.iter().map(key).collect();
    let mut out = Vec::new();
    for p in list {
        match remaining.iter().position(|k| *k == key(p)) {
            Some(i) => {
                remaining.remove(i);
            }
            None => out.push(p),
        }
    }
    out
}

/// `introduces 2 warnings (roce::a, roce::b)`.
fn problem_phrase(list: &[&Problem], verb: &str) -> Option<String> {
    let n = list.len();
    if n == 0 {
        return None;
    }
    let noun = match (list.iter().all(|p| !p.is_error()), n) {
        (true, 1) => "warning",
        (true, _) => "warnings",
        (false, 1) => "diagnostic",
        (false, _) => "diagnostics",
    };
    let mut codes: Vec<&str> = list.iter().map(|p| p.code.as_str()).collect();
    codes.dedup();
    Some(format!("{verb} {n} {noun} ({})", codes.join(", ")))
}

fn summarise(phrases: &[String], fields: &[ChangedField]) -> String {
    if !phrases.is_empty() {
        return format!("This change {}.", join_and(phrases));
    }
    let paths: Vec<String> = fields.iter().map(|f| format!("`{}`", f.path)).collect();
    format!(
        "This change touches no fabric setting: only {} differ{}.",
        join_and(&paths),
        if paths.len() == 1 { "s" } else { "" }
    )
}

fn plan_changes(p: &PlanDiff, a: &Sources, b: &Sources) -> PlanChanges {
    let nads = |list: &[roce_model::model::NadRef]| {
        let nad = |n: &roce_model::model::NadRef| Nad {
            namespace: n.namespace().to_string(),
            name: n.name().to_string(),
        };
        list.iter().map(nad).collect()
    };
    let env = p
        .env
        .iter()
        .map(|e| EnvChange {
            name: e.name.clone(),
            change: e.kind(),
            consumer: match e.consumer {
                Consumer::Nccl => "NCCL",
                Consumer::Ucx => "UCX",
                Consumer::Other => "other",
            },
            old: e.old.clone(),
            new: e.new.clone(),
            old_at: e.old_origin.map(|o| a.describe(o)),
            new_at: e.new_origin.map(|o| b.describe(o)),
        })
        .collect();
    PlanChanges {
        header: p.header.clone(),
        env,
        networks: NetworkChanges {
            annotation: MULTUS_ANNOTATION,
            added: nads(&p.networks_added),
            removed: nads(&p.networks_removed),
            reordered: p.networks_reordered,
        },
        resources: p.resources.clone(),
        capabilities: CapabilityChanges {
            added: p.capabilities_added.clone(),
            removed: p.capabilities_removed.clone(),
        },
        node_selector: p.node_selector.clone(),
        slurm: p.slurm.clone(),
        image: p.image.clone(),
        wiring: p.wiring.clone(),
        dra: p.dra.clone(),
        unchanged: p.is_empty(),
    }
}

/// Pair the files two renders produced, by path, in A's order then B's new files (a missing side is
/// empty).
fn pair_files<'r>(a: &'r [Artifact], b: &'r [Artifact]) -> Vec<(&'r str, &'r str, &'r str)> {
    let find = |list: &'r [Artifact], path: &str| {
        list.iter()
            .find(|f| f.path == path)
            .map_or("", |f| f.contents.as_str())
    };
    let mut out: Vec<_> = a
        .iter()
        .map(|fa| (fa.path.as_str(), fa.contents.as_str(), find(b, &fa.path)))
        .collect();
    for fb in b.iter().filter(|fb| !a.iter().any(|fa| fa.path == fb.path)) {
        out.push((fb.path.as_str(), "", fb.contents.as_str()));
    }
    out
}

fn slug<S: Serializer>(t: &Target, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.slug())
}

fn aspect_names<S: Serializer>(list: &[Aspect], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(list.iter().map(|a| a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_model::{BuiltinsOnly, Source, load};

    fn loaded(body: &str) -> Loaded {
        let text = format!("profile \"t/x\" extends=\"coreweave/gb300-roce\" {{\n{body}\n}}\n");
        load(Source::new("x.kdl", text), &BuiltinsOnly)
    }

    const DEBUG: &str = "nccl debug=\"INFO\"";

    #[test]
    fn a_profile_compared_with_itself_is_equal() {
        let a = loaded(DEBUG);
        assert!(a.profile.is_some(), "{:?}", a.problems);
        let r = review(
            Input::new("a.kdl", &a),
            Input::new("b.kdl", &a),
            &[Target::Pod],
        )
        .unwrap();
        assert!(r.equal);
        assert!(r.fields.is_empty() && r.plan.is_empty() && r.artifacts.is_empty());
        assert!(
            r.targets
                .iter()
                .all(|t| t.changes.is_empty() && t.lines_added == 0)
        );
        // Same profile name on both sides: titles fall back to the specs.
        assert_eq!(r.names(), ["a.kdl", "b.kdl"]);
        assert_eq!(r.a.sources, ["x.kdl", "builtin:coreweave/gb300-roce"]);
    }

    #[test]
    fn a_side_that_does_not_load_fails_the_review() {
        let (good, bad) = (loaded(DEBUG), loaded("nccl ib-hca=\"mlx9\""));
        let err = review(Input::new("a", &good), Input::new("b", &bad), &[]).unwrap_err();
        assert_eq!(err.failed.len(), 1);
        assert_eq!(err.failed[0].side, "b");
        assert!(!err.failed[0].problems.is_empty());
    }

    #[test]
    fn a_target_that_cannot_render_is_reported_after_the_file_diffs() {
        // dotenv readers disagree on `$`, so the env target refuses B; the pod carries it fine.
        let (a, b) = (loaded(DEBUG), loaded("env {\n    GREETING \"a$b\"\n}"));
        assert!(b.profile.is_some(), "{:?}", b.problems);
        let show = [Target::Env, Target::Pod];
        let r = review(Input::new("a", &a), Input::new("b", &b), &show).unwrap();
        let env = r.targets.iter().find(|t| t.target == Target::Env).unwrap();
        assert!(env.error.as_deref().unwrap().starts_with("B: GREETING="));
        let order: Vec<Target> = r.artifacts.iter().map(ArtifactDiff::target).collect();
        assert_eq!(order, [Target::Pod, Target::Env]);
        let json = serde_json::to_value(&r.artifacts).unwrap();
        assert_eq!(json[0]["path"], "pod.yaml");
        assert_eq!(json[1]["target"], "env");
        assert_eq!(json[1]["error"], env.error.as_deref().unwrap());
    }

    #[test]
    fn problems_are_matched_one_for_one() {
        let p = |m: &str| Problem::new(roce_model::Code::ALL[0], m);
        let (a, b) = (vec![p("x"), p("x")], vec![p("x"), p("y")]);
        let new: Vec<&str> = unmatched(&b, &a)
            .iter()
            .map(|p| p.message.as_str())
            .collect();
        let gone: Vec<&str> = unmatched(&a, &b)
            .iter()
            .map(|p| p.message.as_str())
            .collect();
        assert_eq!((new, gone), (vec!["y"], vec!["x"]));
    }

    #[test]
    fn files_pair_by_path_with_missing_sides_empty() {
        let f = |p: &str, c: &str| Artifact {
            path: p.to_string(),
            contents: c.to_string(),
        };
        let (a, b) = (
            vec![f("1", "a"), f("2", "b")],
            vec![f("3", "c"), f("1", "d")],
        );
        let pairs = pair_files(&a, &b);
        assert_eq!(pairs, [("1", "a", "d"), ("2", "b", ""), ("3", "", "c")]);
    }
}
