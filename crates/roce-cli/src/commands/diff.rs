//! `roce diff A B`: what a profile change means for the fabric, for code review.
//!
//! A and B are built-in names, files, or `REV:path` read with `git show` (so a pre-merge check can run
//! `roce diff HEAD:profiles/x.kdl profiles/x.kdl`). The output, in order: a one-paragraph summary; the
//! changed model fields with the place that set each side; the effect on the plan and on every target;
//! new and resolved diagnostics; and with `--target`, unified diffs of the rendered artifacts.
//! Exit status: 0 equal, 1 different (like `diff`), 2 on errors (including a profile that fails to load).

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use clap::{Args, ValueEnum};
use roce_model::diff::{FieldChange, ProfileDiff};
use roce_model::source::Sources;
use roce_model::{Loaded, Problem, Profile, Resolve, Source, load};
use roce_render::plan::{Consumer, MULTUS_ANNOTATION};
use roce_render::plan_diff::{self, Change, PlanDiff, join_and};
use roce_render::{RenderOptions, Target, plan, render};
use serde_json::{Value, json};

use super::Exit;
use crate::io::{FileResolver, read_profile};
use crate::report::{Output, errln, outp};

/// Arguments of `roce diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old profile: a built-in name, a file, or `REV:path` read from Git (`HEAD:profiles/x.kdl`).
    pub a: String,
    /// The new profile, in the same forms.
    pub b: String,
    /// Also show a unified diff of this target's rendered artifacts (repeatable).
    #[arg(long, short, value_enum)]
    pub target: Vec<Target>,
    /// Output format: for people, a pull-request comment, or one JSON object.
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
}

/// How `roce diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// Plain text for a terminal.
    Human,
    /// GitHub-flavoured Markdown, ready to paste into a pull-request comment.
    Markdown,
    /// One JSON object on stdout.
    Json,
}

pub fn run(args: DiffArgs, out: &Output) -> miette::Result<Exit> {
    // Every failure of `roce diff` is exit 2, so that 1 keeps meaning "the profiles differ".
    match diff(&args, out) {
        Ok(exit) => Ok(exit),
        Err(e) => {
            out.error(&e);
            Ok(Exit::Usage)
        }
    }
}

fn diff(args: &DiffArgs, out: &Output) -> miette::Result<Exit> {
    let a = read_side(&args.a)?;
    let b = read_side(&args.b)?;
    let (pa, pb) = match (a.loaded.profile.as_ref(), b.loaded.profile.as_ref()) {
        (Some(pa), Some(pb)) => (pa, pb),
        _ => {
            load_failure(args.format, out, &a, &b);
            return Ok(Exit::Usage);
        }
    };
    let report = Report::new(&a, pa, &b, pb, &args.target);
    match args.format {
        DiffFormat::Human => outp!("{}", report.human()),
        DiffFormat::Markdown => outp!("{}", report.markdown()),
        DiffFormat::Json => outp!("{:#}\n", report.json()),
    }
    Ok(if report.equal {
        Exit::Ok
    } else {
        Exit::Problems
    })
}

/// One side of the comparison, loaded.
struct Side {
    spec: String,
    loaded: Loaded,
}

fn read_side(spec: &str) -> miette::Result<Side> {
    let loaded = match git_spec(spec) {
        Some((rev, path)) => {
            let text = git_show(rev, path).map_err(|why| {
                miette::miette!(
                    help = "REV:path is read with `git show REV:path`; the path is relative to the repository root (or `./path` to the current directory)",
                    "cannot read `{spec}` from Git: {why}"
                )
            })?;
            let resolver = GitResolver {
                rev: rev.to_string(),
            };
            load(Source::new(spec, text), &resolver)
        }
        None => match read_profile(spec, false)? {
            Ok(source) => load(source, &FileResolver),
            Err(problem) => Loaded {
                profile: None,
                problems: vec![*problem],
                sources: Sources::default(),
            },
        },
    };
    Ok(Side {
        spec: spec.to_string(),
        loaded,
    })
}

/// `REV:path` when `spec` is not a built-in or an existing file and has a non-empty revision and path.
fn git_spec(spec: &str) -> Option<(&str, &str)> {
    if roce_model::builtin::source(spec).is_some() || spec == "-" || Path::new(spec).exists() {
        return None;
    }
    let (rev, path) = spec.split_once(':')?;
    (!rev.is_empty() && !path.is_empty()).then_some((rev, path))
}

fn git_show(rev: &str, path: &str) -> Result<String, String> {
    let output = Command::new("git")
        .arg("show")
        .arg(format!("{rev}:{path}"))
        .output()
        .map_err(|e| format!("running git: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(stderr.trim().to_string());
    }
    String::from_utf8(output.stdout).map_err(|_| format!("{rev}:{path} is not UTF-8 text"))
}

/// Resolves `extends` of a profile read from Git in the same revision, relative to its path.
#[derive(Debug)]
struct GitResolver {
    rev: String,
}

impl Resolve for GitResolver {
    fn resolve(&self, reference: &str, from: &Source) -> Result<Source, String> {
        let path = from
            .name
            .strip_prefix(&format!("{}:", self.rev))
            .unwrap_or(&from.name);
        let dir = Path::new(path).parent().unwrap_or(Path::new(""));
        let joined = normalize(&dir.join(reference));
        let text = git_show(&self.rev, &joined)?;
        Ok(Source::new(format!("{}:{joined}", self.rev), text))
    }
}

/// Resolve `.` and `..` lexically (git's `REV:path` only accepts them as a leading `./` or `../`).
fn normalize(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    let leading_dot = path.starts_with(".");
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|p| p != "..") {
                    parts.pop();
                } else {
                    parts.push("..".to_string());
                }
            }
            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    let joined = PathBuf::from_iter(&parts)
        .to_string_lossy()
        .replace('\\', "/");
    if leading_dot && !joined.starts_with("..") {
        format!("./{joined}")
    } else {
        joined
    }
}

fn load_failure(format: DiffFormat, out: &Output, a: &Side, b: &Side) {
    let failed: Vec<(&str, &Side)> = [("a", a), ("b", b)]
        .into_iter()
        .filter(|(_, s)| s.loaded.profile.is_none())
        .collect();
    match format {
        DiffFormat::Json => {
            let sides: Vec<Value> = failed
                .iter()
                .map(|(which, s)| {
                    json!({
                        "side": which,
                        "spec": s.spec,
                        "problems": crate::report::json(&s.loaded.problems)["problems"],
                    })
                })
                .collect();
            crate::report::outln!(
                "{:#}",
                json!({ "error": "a profile failed to load", "failed": sides })
            );
        }
        DiffFormat::Human | DiffFormat::Markdown => {
            for (_, s) in &failed {
                out.problems(&s.loaded.problems);
                errln!("error: `{}` does not load; fix it before comparing", s.spec);
            }
        }
    }
}

/// A changed field with both places resolved.
struct FieldRow {
    path: String,
    old: Option<String>,
    new: Option<String>,
    old_at: Option<String>,
    new_at: Option<String>,
    /// The value is an implicit default, written nowhere.
    old_default: bool,
    new_default: bool,
}

impl FieldRow {
    fn new(c: &FieldChange, a: &Sources, b: &Sources) -> Self {
        FieldRow {
            path: c.path.clone(),
            old: c.old.as_ref().map(|v| v.value.clone()),
            new: c.new.as_ref().map(|v| v.value.clone()),
            old_at: c.old_at(a),
            new_at: c.new_at(b),
            old_default: c.old.is_some() && !c.old_written,
            new_default: c.new.is_some() && !c.new_written,
        }
    }

    /// Where each side was set, for people: a place, `(default)`, or `—` when unset.
    fn at(&self) -> [String; 2] {
        let one = |at: &Option<String>, default: bool| match (at, default) {
            (Some(a), _) => a.clone(),
            (None, true) => "(default)".to_string(),
            (None, false) => "—".to_string(),
        };
        [
            one(&self.old_at, self.old_default),
            one(&self.new_at, self.new_default),
        ]
    }
}

/// What one target's artifacts do under the change.
struct TargetRow {
    target: Target,
    aspects: Vec<plan_diff::Aspect>,
    added: usize,
    removed: usize,
    error: Option<String>,
}

/// A unified diff of one rendered file.
struct ArtifactDiff {
    target: Target,
    path: String,
    unified: String,
}

struct Report<'a> {
    a: &'a Side,
    b: &'a Side,
    a_name: String,
    b_name: String,
    equal: bool,
    summary: String,
    fields: Vec<FieldRow>,
    plan: PlanDiff,
    targets: Vec<TargetRow>,
    unchanged_problems: usize,
    new_problems: Vec<Problem>,
    resolved_problems: Vec<Problem>,
    requested: Vec<Target>,
    artifacts: Vec<ArtifactDiff>,
    render_errors: Vec<(Target, String)>,
}

impl<'a> Report<'a> {
    fn new(a: &'a Side, pa: &Profile, b: &'a Side, pb: &Profile, requested: &[Target]) -> Self {
        let model: ProfileDiff = roce_model::diff::diff(pa, pb);
        let (plan_a, plan_b) = (plan::lower(pa), plan::lower(pb));
        let plan = plan_diff::diff(&plan_a, &plan_b);
        let fields: Vec<FieldRow> = model
            .changes
            .iter()
            .map(|c| FieldRow::new(c, &a.loaded.sources, &b.loaded.sources))
            .collect();

        let key = |p: &Problem| (p.code, p.message.clone());
        let (pa_list, pb_list) = (&a.loaded.problems, &b.loaded.problems);
        let mut remaining: Vec<_> = pa_list.iter().map(key).collect();
        let mut new_problems = Vec::new();
        for p in pb_list {
            match remaining.iter().position(|k| *k == key(p)) {
                Some(i) => {
                    remaining.remove(i);
                }
                None => new_problems.push(p.clone()),
            }
        }
        let mut remaining_b: Vec<_> = pb_list.iter().map(key).collect();
        let mut resolved_problems = Vec::new();
        for p in pa_list {
            match remaining_b.iter().position(|k| *k == key(p)) {
                Some(i) => {
                    remaining_b.remove(i);
                }
                None => resolved_problems.push(p.clone()),
            }
        }
        let unchanged_problems = pb_list.len() - new_problems.len();

        let opts = RenderOptions::default();
        let mut targets = Vec::new();
        let mut artifacts = Vec::new();
        let mut render_errors = Vec::new();
        for &t in Target::ALL {
            let (ra, rb) = (render(&plan_a, t, &opts), render(&plan_b, t, &opts));
            let mut row = TargetRow {
                target: t,
                aspects: plan.target_effect(t, &opts),
                added: 0,
                removed: 0,
                error: None,
            };
            match (ra, rb) {
                (Ok(fa), Ok(fb)) => {
                    let files = pair_files(&fa, &fb);
                    for (path, old, new) in &files {
                        let d = similar::TextDiff::from_lines(old.as_str(), new.as_str());
                        for change in d.iter_all_changes() {
                            match change.tag() {
                                similar::ChangeTag::Insert => row.added += 1,
                                similar::ChangeTag::Delete => row.removed += 1,
                                similar::ChangeTag::Equal => {}
                            }
                        }
                        if requested.contains(&t) && old != new {
                            let unified = d
                                .unified_diff()
                                .header(&format!("a/{path}"), &format!("b/{path}"))
                                .to_string();
                            artifacts.push(ArtifactDiff {
                                target: t,
                                path: path.clone(),
                                unified,
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
                    if requested.contains(&t) {
                        render_errors.push((t, why.clone()));
                    }
                    row.error = Some(why);
                }
            }
            targets.push(row);
        }

        let equal = model.is_empty()
            && plan.is_empty()
            && new_problems.is_empty()
            && resolved_problems.is_empty();
        let (a_name, b_name) = if pa.name.value == pb.name.value {
            (a.spec.clone(), b.spec.clone())
        } else {
            (pa.name.value.clone(), pb.name.value.clone())
        };
        let mut report = Report {
            a,
            b,
            a_name,
            b_name,
            equal,
            summary: String::new(),
            fields,
            plan,
            targets,
            unchanged_problems,
            new_problems,
            resolved_problems,
            requested: requested.to_vec(),
            artifacts,
            render_errors,
        };
        report.summary = report.summarise(&model, pa, pb);
        report
    }

    fn summarise(&self, model: &ProfileDiff, pa: &Profile, pb: &Profile) -> String {
        if self.equal {
            return "No semantic change: both profiles compile to the same fabric wiring, environment and artifacts.".to_string();
        }
        let mut phrases = model.summary(pa, pb);
        phrases.extend(self.plan.summary());
        let count = |list: &[Problem], what: &str| {
            let n = list.len();
            let warnings = list.iter().all(|p| !p.is_error());
            let noun = match (warnings, n) {
                (true, 1) => "warning",
                (true, _) => "warnings",
                (false, 1) => "diagnostic",
                (false, _) => "diagnostics",
            };
            let mut codes: Vec<&str> = list.iter().map(|p| p.code.as_str()).collect();
            codes.dedup();
            format!("{what} {n} {noun} ({})", codes.join(", "))
        };
        if !self.new_problems.is_empty() {
            phrases.push(count(&self.new_problems, "introduces"));
        }
        if !self.resolved_problems.is_empty() {
            phrases.push(count(&self.resolved_problems, "resolves"));
        }
        if phrases.is_empty() {
            let paths: Vec<String> = self
                .fields
                .iter()
                .map(|f| format!("`{}`", f.path))
                .collect();
            return format!(
                "This change touches no fabric setting: only {} differ{}.",
                join_and(&paths),
                if paths.len() == 1 { "s" } else { "" }
            );
        }
        format!("This change {}.", join_and(&phrases))
    }

    fn sides(&self) -> [(&'static str, &Side); 2] {
        [("A", self.a), ("B", self.b)]
    }

    /// The layers a side was read from: the file first, then what it extends.
    fn layers(side: &Side) -> String {
        let names: Vec<&str> = side
            .loaded
            .sources
            .iter()
            .map(|(_, s)| s.name.as_str())
            .collect();
        names.join(" extends ")
    }

    fn env_rows(&self) -> Vec<[String; 4]> {
        self.plan
            .env
            .iter()
            .map(|e| {
                let sign = match e.kind() {
                    "added" => "+",
                    "removed" => "-",
                    _ => "~",
                };
                [
                    format!("{sign} {}", e.name),
                    e.old.clone().unwrap_or_else(|| "—".to_string()),
                    e.new.clone().unwrap_or_else(|| "—".to_string()),
                    consumer(e.consumer).to_string(),
                ]
            })
            .collect()
    }

    fn other_changes(&self) -> Vec<(&'static str, Vec<&Change>)> {
        let p = &self.plan;
        vec![
            (
                "Resources (requests = limits)",
                p.resources.iter().collect(),
            ),
            ("Node selector", p.node_selector.iter().collect()),
            ("Slurm defaults", p.slurm.iter().collect()),
            ("Image", p.image.iter().collect()),
            ("Wiring", p.wiring.iter().collect()),
            (
                "Header (profile annotation, fabric, UCX mode, validation image)",
                p.header.iter().collect(),
            ),
        ]
    }

    fn target_changes(row: &TargetRow) -> String {
        if let Some(e) = &row.error {
            return format!("cannot render: {e}");
        }
        if row.aspects.is_empty() {
            "unchanged".to_string()
        } else {
            row.aspects
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    fn target_lines(row: &TargetRow) -> String {
        if row.error.is_some() {
            return "—".to_string();
        }
        format!("+{} −{}", row.added, row.removed)
    }

    // ---- human ----

    fn human(&self) -> String {
        let mut o = String::new();
        o.push_str(&format!("roce diff: {} → {}\n", self.a_name, self.b_name));
        for (which, side) in self.sides() {
            o.push_str(&format!("  {which}: {}\n", Self::layers(side)));
        }
        o.push_str("\nSummary\n");
        o.push_str(&wrap(&self.summary, 2, 100));
        if self.equal {
            o.push_str(&self.human_artifacts());
            return o;
        }

        o.push_str(&format!("\nChanged fields ({})\n", self.fields.len()));
        for f in &self.fields {
            let unset = || "(unset)".to_string();
            let [old_at, new_at] = f.at();
            o.push_str(&format!(
                "  {}: {} → {}\n      set at {old_at} → {new_at}\n",
                f.path,
                f.old.clone().unwrap_or_else(unset),
                f.new.clone().unwrap_or_else(unset),
            ));
        }

        o.push_str("\nEffect on the plan\n");
        if self.plan.is_empty() {
            o.push_str("  none: both profiles lower to the same plan\n");
        }
        if !self.plan.env.is_empty() {
            o.push_str(&format!("  Environment ({})\n", self.plan.env.len()));
            let mut rows = vec![cells(["VARIABLE", "OLD", "NEW", "READ BY"])];
            rows.extend(self.env_rows());
            o.push_str(&table(&rows, 4));
        }
        if let Some(text) = self.networks_text() {
            o.push_str(&format!("  Annotations and NADs ({MULTUS_ANNOTATION})\n"));
            for line in text {
                o.push_str(&format!("    {line}\n"));
            }
        }
        if !self.plan.capabilities_added.is_empty() || !self.plan.capabilities_removed.is_empty() {
            o.push_str("  Capabilities\n");
            for c in &self.plan.capabilities_added {
                o.push_str(&format!("    + {c}\n"));
            }
            for c in &self.plan.capabilities_removed {
                o.push_str(&format!("    - {c}\n"));
            }
        }
        for (title, list) in self.other_changes() {
            if list.is_empty() {
                continue;
            }
            o.push_str(&format!("  {title}\n"));
            for c in list {
                o.push_str(&format!(
                    "    {}: {} → {}\n",
                    c.key,
                    or_dash(&c.old),
                    or_dash(&c.new)
                ));
            }
        }

        o.push_str("\nEffect per target (default render options)\n");
        let mut rows = vec![cells(["TARGET", "CHANGES", "RENDERED LINES"])];
        for r in &self.targets {
            rows.push([
                r.target.slug().to_string(),
                Self::target_changes(r),
                Self::target_lines(r),
            ]);
        }
        o.push_str(&table(&rows, 2));

        o.push_str("\nDiagnostics\n");
        o.push_str(&format!("  {}\n", self.diagnostics_line()));
        for (sign, list) in [
            ("new", &self.new_problems),
            ("resolved", &self.resolved_problems),
        ] {
            for p in list {
                o.push_str(&format!(
                    "  {sign}: {} {}: {}{}\n",
                    p.severity.as_str(),
                    p.code,
                    p.message,
                    location(p).map(|l| format!(" ({l})")).unwrap_or_default()
                ));
            }
        }
        o.push_str(&self.human_artifacts());
        o
    }

    fn human_artifacts(&self) -> String {
        let mut o = String::new();
        for &t in &self.requested {
            o.push_str(&format!("\nRendered artifacts: {t}\n"));
            if let Some((_, why)) = self.render_errors.iter().find(|(rt, _)| *rt == t) {
                o.push_str(&format!("  cannot render: {why}\n"));
                continue;
            }
            let diffs: Vec<&ArtifactDiff> =
                self.artifacts.iter().filter(|d| d.target == t).collect();
            if diffs.is_empty() {
                o.push_str("  identical\n");
            } else if self.equal {
                o.push_str("  (the files differ only in order: no semantic change)\n");
            }
            for d in diffs {
                o.push_str(&d.unified);
            }
        }
        o
    }

    fn networks_text(&self) -> Option<Vec<String>> {
        let p = &self.plan;
        if p.networks_added.is_empty() && p.networks_removed.is_empty() && !p.networks_reordered {
            return None;
        }
        let mut lines = Vec::new();
        if p.networks_reordered {
            lines.push(
                "same NADs in a different rail order (pod netdevs net1… now map to other rails)"
                    .to_string(),
            );
        }
        let nad = |n: &roce_model::model::NadRef| format!("{}/{}", n.namespace, n.name);
        for n in &p.networks_removed {
            lines.push(format!("- {}", nad(n)));
        }
        for n in &p.networks_added {
            lines.push(format!("+ {}", nad(n)));
        }
        Some(lines)
    }

    fn diagnostics_line(&self) -> String {
        let (n, r) = (self.new_problems.len(), self.resolved_problems.len());
        let mut s = match (n, r) {
            (0, 0) => "no new or resolved diagnostics".to_string(),
            _ => format!("{n} new, {r} resolved"),
        };
        if self.unchanged_problems > 0 {
            s.push_str(&format!(" ({} unchanged)", self.unchanged_problems));
        }
        s
    }

    // ---- markdown ----

    fn markdown(&self) -> String {
        let mut o = String::new();
        o.push_str(&format!(
            "### roce diff: {} → {}\n\n",
            code(&self.a_name),
            code(&self.b_name)
        ));
        for (which, side) in self.sides() {
            let layers: Vec<String> = side
                .loaded
                .sources
                .iter()
                .map(|(_, s)| code(&s.name))
                .collect();
            o.push_str(&format!("- **{which}**: {}\n", layers.join(" extends ")));
        }
        o.push_str(&format!("\n{}\n", self.summary));
        if self.equal {
            o.push_str(&self.markdown_artifacts());
            return o;
        }

        o.push_str(&format!(
            "\n#### Changed fields ({})\n\n",
            self.fields.len()
        ));
        o.push_str("| field | old | new | old set at | new set at |\n|---|---|---|---|---|\n");
        for f in &self.fields {
            let at = |at: &Option<String>, default: bool| {
                if default {
                    "default".to_string()
                } else {
                    md_opt(at)
                }
            };
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                code(&f.path),
                md_opt(&f.old),
                md_opt(&f.new),
                at(&f.old_at, f.old_default),
                at(&f.new_at, f.new_default)
            ));
        }

        o.push_str("\n#### Effect on the plan\n\n");
        if self.plan.is_empty() {
            o.push_str("None: both profiles lower to the same plan.\n\n");
        }
        if !self.plan.env.is_empty() {
            o.push_str(&format!("**Environment** ({})\n\n", self.plan.env.len()));
            o.push_str("| | variable | old | new | read by |\n|---|---|---|---|---|\n");
            for e in &self.plan.env {
                let sign = match e.kind() {
                    "added" => "➕",
                    "removed" => "➖",
                    _ => "✏️",
                };
                o.push_str(&format!(
                    "| {sign} | {} | {} | {} | {} |\n",
                    code(&e.name),
                    md_opt(&e.old),
                    md_opt(&e.new),
                    consumer(e.consumer)
                ));
            }
            o.push('\n');
        }
        if let Some(lines) = self.networks_text() {
            o.push_str(&format!(
                "**Annotations and NADs** ({})\n\n",
                code(MULTUS_ANNOTATION)
            ));
            o.push_str("```diff\n");
            for l in lines {
                o.push_str(&l);
                o.push('\n');
            }
            o.push_str("```\n\n");
        }
        if !self.plan.capabilities_added.is_empty() || !self.plan.capabilities_removed.is_empty() {
            o.push_str("**Capabilities**\n\n");
            for c in &self.plan.capabilities_added {
                o.push_str(&format!("- added {}\n", code(c)));
            }
            for c in &self.plan.capabilities_removed {
                o.push_str(&format!("- removed {}\n", code(c)));
            }
            o.push('\n');
        }
        for (title, list) in self.other_changes() {
            if list.is_empty() {
                continue;
            }
            o.push_str(&format!("**{title}**\n\n"));
            for c in list {
                o.push_str(&format!(
                    "- {}: {} → {}\n",
                    code(&c.key),
                    md_opt(&c.old),
                    md_opt(&c.new)
                ));
            }
            o.push('\n');
        }

        o.push_str(
            "#### Effect per target\n\n| target | changes | rendered lines |\n|---|---|---|\n",
        );
        for r in &self.targets {
            o.push_str(&format!(
                "| {} | {} | {} |\n",
                code(r.target.slug()),
                md_cell(&Self::target_changes(r)),
                Self::target_lines(r)
            ));
        }

        o.push_str("\n#### Diagnostics\n\n");
        o.push_str(&format!("{}.\n", capitalise(&self.diagnostics_line())));
        if !self.new_problems.is_empty() || !self.resolved_problems.is_empty() {
            o.push('\n');
        }
        for (what, list) in [
            ("new", &self.new_problems),
            ("resolved", &self.resolved_problems),
        ] {
            for p in list {
                o.push_str(&format!(
                    "- {what} {}: {} {}{}\n",
                    p.severity.as_str(),
                    code(p.code.as_str()),
                    md_cell(&p.message),
                    location(p)
                        .map(|l| format!(" ({})", code(&l)))
                        .unwrap_or_default()
                ));
            }
        }
        o.push_str(&self.markdown_artifacts());
        o
    }

    fn markdown_artifacts(&self) -> String {
        let mut o = String::new();
        for &t in &self.requested {
            o.push_str(&format!(
                "\n#### Rendered artifacts: {}\n\n",
                code(t.slug())
            ));
            if let Some((_, why)) = self.render_errors.iter().find(|(rt, _)| *rt == t) {
                o.push_str(&format!("Cannot render: {}\n", md_cell(why)));
                continue;
            }
            let diffs: Vec<&ArtifactDiff> =
                self.artifacts.iter().filter(|d| d.target == t).collect();
            if diffs.is_empty() {
                o.push_str("Identical.\n");
            } else if self.equal {
                o.push_str("The files differ only in order: no semantic change.\n\n");
            }
            for d in diffs {
                let fence = fence_for(&d.unified);
                o.push_str(&format!(
                    "<details><summary>{}</summary>\n\n{fence}diff\n{}{fence}\n\n</details>\n",
                    d.path, d.unified
                ));
            }
        }
        o
    }

    // ---- json ----

    fn json(&self) -> Value {
        let side = |s: &Side| {
            json!({
                "spec": s.spec,
                "profile": s.loaded.profile.as_ref().map(|p| p.name.value.clone()),
                "sources": s.loaded.sources.iter().map(|(_, src)| src.name.clone()).collect::<Vec<_>>(),
            })
        };
        let describe =
            |sources: &Sources, o: Option<roce_model::Origin>| o.map(|o| sources.describe(o));
        let changes = |list: &[Change]| -> Vec<Value> {
            list.iter()
                .map(|c| json!({ "key": c.key, "old": c.old, "new": c.new }))
                .collect()
        };
        let nad =
            |n: &roce_model::model::NadRef| json!({ "namespace": n.namespace, "name": n.name });
        let p = &self.plan;
        json!({
            "a": side(self.a),
            "b": side(self.b),
            "equal": self.equal,
            "summary": self.summary,
            "fields": self.fields.iter().map(|f| json!({
                "field": f.path, "old": f.old, "new": f.new, "old_at": f.old_at, "new_at": f.new_at,
                "old_default": f.old_default, "new_default": f.new_default,
            })).collect::<Vec<_>>(),
            "plan": {
                "header": changes(&p.header),
                "env": p.env.iter().map(|e| json!({
                    "name": e.name,
                    "change": e.kind(),
                    "consumer": consumer(e.consumer),
                    "old": e.old,
                    "new": e.new,
                    "old_at": describe(&self.a.loaded.sources, e.old_origin),
                    "new_at": describe(&self.b.loaded.sources, e.new_origin),
                })).collect::<Vec<_>>(),
                "networks": {
                    "annotation": MULTUS_ANNOTATION,
                    "added": p.networks_added.iter().map(nad).collect::<Vec<_>>(),
                    "removed": p.networks_removed.iter().map(nad).collect::<Vec<_>>(),
                    "reordered": p.networks_reordered,
                },
                "resources": changes(&p.resources),
                "capabilities": { "added": p.capabilities_added, "removed": p.capabilities_removed },
                "node_selector": changes(&p.node_selector),
                "slurm": changes(&p.slurm),
                "image": changes(&p.image),
                "wiring": changes(&p.wiring),
            },
            "targets": self.targets.iter().map(|r| json!({
                "target": r.target.slug(),
                "changes": r.aspects.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                "lines_added": r.added,
                "lines_removed": r.removed,
                "error": r.error,
            })).collect::<Vec<_>>(),
            "diagnostics": {
                "new": crate::report::json(&self.new_problems)["problems"],
                "resolved": crate::report::json(&self.resolved_problems)["problems"],
                "unchanged": self.unchanged_problems,
            },
            "artifacts": self.artifacts.iter().map(|d| json!({
                "target": d.target.slug(), "path": d.path, "diff": d.unified,
            })).chain(self.render_errors.iter().map(|(t, why)| json!({
                "target": t.slug(), "error": why,
            }))).collect::<Vec<_>>(),
        })
    }
}

/// Pair the files two renders produced, by path, in A's order then B's new files.
fn pair_files(
    a: &[roce_render::Artifact],
    b: &[roce_render::Artifact],
) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = a
        .iter()
        .map(|fa| {
            let new = b
                .iter()
                .find(|fb| fb.path == fa.path)
                .map(|f| f.contents.clone());
            (
                fa.path.clone(),
                fa.contents.clone(),
                new.unwrap_or_default(),
            )
        })
        .collect();
    for fb in b.iter().filter(|fb| !a.iter().any(|fa| fa.path == fb.path)) {
        out.push((fb.path.clone(), String::new(), fb.contents.clone()));
    }
    out
}

fn consumer(c: Consumer) -> &'static str {
    match c {
        Consumer::Nccl => "NCCL",
        Consumer::Ucx => "UCX",
        Consumer::Other => "other",
    }
}

fn location(p: &Problem) -> Option<String> {
    p.location()
        .map(|l| format!("{}:{}:{}", l.file, l.line, l.column))
}

fn or_dash(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "—".to_string())
}

fn cells<const N: usize>(v: [&str; N]) -> [String; N] {
    v.map(str::to_string)
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
fn table<const N: usize>(rows: &[[String; N]], indent: usize) -> String {
    let mut widths = [0usize; N];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut o = String::new();
    for r in rows {
        let mut line = " ".repeat(indent);
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < N {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        o.push_str(line.trim_end());
        o.push('\n');
    }
    o
}

/// Word-wrap a paragraph at `width` columns with an indent.
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let pad = " ".repeat(indent);
    let mut o = String::new();
    let mut line = pad.clone();
    for word in text.split(' ') {
        if line.len() > indent && line.chars().count() + 1 + word.chars().count() > width {
            o.push_str(&line);
            o.push('\n');
            line = pad.clone();
        }
        if line.len() > indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    o.push_str(&line);
    o.push('\n');
    o
}

/// Inline code for Markdown, safe inside a table cell.
fn code(s: &str) -> String {
    let s = s.replace('|', "\\|").replace('\n', " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

fn md_opt(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "—".to_string(), code)
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A code fence longer than any run of backticks in the text.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots() {
        assert_eq!(normalize(Path::new("profiles/../base.kdl")), "base.kdl");
        assert_eq!(normalize(Path::new("a/b/./c.kdl")), "a/b/c.kdl");
        assert_eq!(normalize(Path::new("./a/../b.kdl")), "./b.kdl");
        assert_eq!(normalize(Path::new("../b.kdl")), "../b.kdl");
    }

    #[test]
    fn git_spec_needs_rev_and_path() {
        assert_eq!(git_spec("HEAD~1:x.kdl"), Some(("HEAD~1", "x.kdl")));
        assert_eq!(git_spec("coreweave/gb300-roce"), None);
        assert_eq!(git_spec("builtin:coreweave/gb300-roce"), None);
        assert_eq!(git_spec(":x.kdl"), None);
        assert_eq!(git_spec("HEAD:"), None);
        assert_eq!(git_spec("plain.kdl"), None);
    }

    #[test]
    fn markdown_cells_are_escaped() {
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(fence_for("x ```` y"), "`````");
        assert_eq!(fence_for("plain"), "```");
    }

    #[test]
    fn wrap_keeps_words_whole() {
        let w = wrap("aaa bbb ccc", 2, 9);
        assert_eq!(w, "  aaa bbb\n  ccc\n");
    }
}
