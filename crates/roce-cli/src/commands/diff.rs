//! `roce diff A B`: what a profile change means for the fabric, for code review.
//!
//! A and B are built-in names, files, or `REV:path` read with `git show` ([`crate::git`]). The report
//! itself — changed fields, the effect on the plan and on every target, new and resolved diagnostics,
//! unified diffs of the targets asked for — is [`roce_render::review`]; this module prints it for people
//! and as Markdown, and serialises it for `--format json`.
//! Exit status: 0 equal, 1 different (like `diff`), 2 on errors (including a profile that fails to load).

use clap::{Args, ValueEnum};
use roce_model::diff::{NcclUpgrade, VarMeaning};
use roce_model::problem::ProblemRecord;
use roce_render::Target;
use roce_render::plan_diff::Change;
use roce_render::review::{self, ArtifactDiff, ChangedField, Input, Review, Side, TargetEffect};

use super::Exit;
use crate::report::{Output, errln, outp, to_json};
use crate::text::{capitalise, code, fence_for, md_cell, md_opt, table, wrap};

// Arguments of `roce diff`.
#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
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
pub(crate) enum DiffFormat {
    /// Plain text for a terminal.
    Human,
    /// GitHub-flavoured Markdown, ready to paste into a pull-request comment.
    Markdown,
    /// One JSON object on stdout.
    Json,
}

pub(crate) fn run(args: DiffArgs, out: &Output) -> miette::Result<Exit> {
    // Every failure of `roce diff` is exit 2, so that 1 keeps meaning "the profiles differ".
    diff(&args, out).or_else(|e| {
        out.error(&e);
        Ok(Exit::Usage)
    })
}

fn diff(args: &DiffArgs, out: &Output) -> miette::Result<Exit> {
    let (a, b) = (
        crate::git::load_spec(&args.a)?,
        crate::git::load_spec(&args.b)?,
    );
    let r = match review::review(
        Input::new(&args.a, &a),
        Input::new(&args.b, &b),
        &args.target,
    ) {
        Ok(r) => r,
        Err(failure) if args.format == DiffFormat::Json => {
            outp!("{}\n", to_json(&failure, true));
            return Ok(Exit::Usage);
        }
        Err(_) => {
            for (spec, loaded) in [(&args.a, &a), (&args.b, &b)] {
                if loaded.profile.is_none() {
                    out.problems(&loaded.problems);
                    errln!("error: `{spec}` does not load; fix it before comparing");
                }
            }
            return Ok(Exit::Usage);
        }
    };
    match args.format {
        DiffFormat::Human => outp!("{}", human(&r)),
        DiffFormat::Markdown => outp!("{}", markdown(&r)),
        DiffFormat::Json => outp!("{}\n", to_json(&r, true)),
    }
    Ok(if r.equal { Exit::Ok } else { Exit::Problems })
}

// ---- what both printers say ----

fn sides(r: &Review) -> [(&'static str, &Side); 2] {
    [("A", &r.a), ("B", &r.b)]
}

/// The itemised plan changes without a section of their own, with their titles.
fn other_changes(r: &Review) -> [(&'static str, &[Change]); 7] {
    let p = &r.plan;
    [
        ("Resources (requests = limits)", &p.resources),
        ("DRA (claims, NVLink domain, placement)", &p.dra),
        ("Node selector", &p.node_selector),
        ("Slurm defaults", &p.slurm),
        ("Image", &p.image),
        ("Wiring", &p.wiring),
        (
            "Header (profile annotation, fabric, UCX mode, validation image)",
            &p.header,
        ),
    ]
}

/// The NAD changes as diff lines, or `None` when the NADs are the same.
fn networks_text(r: &Review) -> Option<Vec<String>> {
    let n = &r.plan.networks;
    if n.added.is_empty() && n.removed.is_empty() && !n.reordered {
        return None;
    }
    let mut lines = Vec::new();
    if n.reordered {
        lines.push(
            "same NADs in a different rail order (pod netdevs net1… now map to other rails)"
                .to_string(),
        );
    }
    let nad = |sign: char, n: &review::Nad| format!("{sign} {}/{}", n.namespace, n.name);
    lines.extend(n.removed.iter().map(|x| nad('-', x)));
    lines.extend(n.added.iter().map(|x| nad('+', x)));
    Some(lines)
}

fn capabilities_changed(r: &Review) -> bool {
    let c = &r.plan.capabilities;
    !c.added.is_empty() || !c.removed.is_empty()
}

fn target_changes(row: &TargetEffect) -> String {
    match (&row.error, row.changes.is_empty()) {
        (Some(e), _) => format!("cannot render: {e}"),
        (None, true) => "unchanged".to_string(),
        (None, false) => {
            let names: Vec<&str> = row.changes.iter().map(|a| a.as_str()).collect();
            names.join(", ")
        }
    }
}

fn target_lines(row: &TargetEffect) -> String {
    match row.error {
        Some(_) => "—".to_string(),
        None => format!("+{} −{}", row.lines_added, row.lines_removed),
    }
}

fn diagnostics_line(r: &Review) -> String {
    let d = &r.diagnostics;
    let mut s = match (d.new.len(), d.resolved.len()) {
        (0, 0) => "no new or resolved diagnostics".to_string(),
        (n, r) => format!("{n} new, {r} resolved"),
    };
    if d.unchanged > 0 {
        s.push_str(&format!(" ({} unchanged)", d.unchanged));
    }
    s
}

fn diagnostics(r: &Review) -> impl Iterator<Item = (&'static str, &ProblemRecord)> {
    let d = &r.diagnostics;
    let tag = |what| move |p| (what, p);
    (d.new.iter().map(tag("new"))).chain(d.resolved.iter().map(tag("resolved")))
}

/// A target's changed files as `(path, unified diff)`, or why it cannot render.
type Files<'r> = Result<Vec<(&'r str, &'r str)>, &'r str>;

/// For each target asked for: why it cannot render, or its changed files.
fn shown(r: &Review) -> impl Iterator<Item = (Target, Files<'_>)> {
    r.shown.iter().map(|&t| {
        let mut files = Vec::new();
        for a in r.artifacts.iter().filter(|a| a.target() == t) {
            match a {
                ArtifactDiff::Unrenderable { error, .. } => return (t, Err(error.as_str())),
                ArtifactDiff::Changed { path, diff, .. } => {
                    files.push((path.as_str(), diff.as_str()))
                }
            }
        }
        (t, Ok(files))
    })
}

// ---- human ----

fn human(r: &Review) -> String {
    let [a_name, b_name] = r.names();
    let mut o = format!("roce diff: {a_name} → {b_name}\n");
    for (which, side) in sides(r) {
        o.push_str(&format!("  {which}: {}\n", side.sources.join(" extends ")));
    }
    o.push_str("\nSummary\n");
    o.push_str(&wrap(&r.summary, 2, 100));
    if !r.equal {
        human_changes(r, &mut o);
    }
    for (t, files) in shown(r) {
        o.push_str(&format!("\nRendered artifacts: {t}\n"));
        match files {
            Err(why) => o.push_str(&format!("  cannot render: {why}\n")),
            Ok(files) if files.is_empty() => o.push_str("  identical\n"),
            Ok(files) => {
                if r.equal {
                    o.push_str("  (the files differ only in order: no semantic change)\n");
                }
                files.iter().for_each(|(_, diff)| o.push_str(diff));
            }
        }
    }
    o
}

fn human_changes(r: &Review, o: &mut String) {
    o.push_str(&format!("\nChanged fields ({})\n", r.fields.len()));
    for f in &r.fields {
        let unset = |v: &Option<String>| v.clone().unwrap_or_else(|| "(unset)".to_string());
        let at = |at: &Option<String>, default| match (at, default) {
            (Some(a), _) => a.clone(),
            (None, true) => "(default)".to_string(),
            (None, false) => "—".to_string(),
        };
        o.push_str(&format!(
            "  {}: {} → {}\n      set at {} → {}\n",
            f.path,
            unset(&f.old),
            unset(&f.new),
            at(&f.old_at, f.old_default),
            at(&f.new_at, f.new_default),
        ));
    }

    if let Some(up) = &r.nccl {
        human_nccl(up, o);
    }

    o.push_str("\nEffect on the plan\n");
    let p = &r.plan;
    if p.is_empty() {
        o.push_str("  none: both profiles lower to the same plan\n");
    }
    if !p.env.is_empty() {
        o.push_str(&format!("  Environment ({})\n", p.env.len()));
        let mut rows = vec![["VARIABLE", "OLD", "NEW", "READ BY"].map(str::to_string)];
        rows.extend(p.env.iter().map(|e| {
            let sign = match e.change {
                "added" => "+",
                "removed" => "-",
                _ => "~",
            };
            [
                format!("{sign} {}", e.name),
                dash(&e.old),
                dash(&e.new),
                e.consumer.to_string(),
            ]
        }));
        o.push_str(&table(&rows, 4));
    }
    if let Some(lines) = networks_text(r) {
        o.push_str(&format!(
            "  Annotations and NADs ({})\n",
            p.networks.annotation
        ));
        lines.iter().for_each(|l| o.push_str(&format!("    {l}\n")));
    }
    if capabilities_changed(r) {
        o.push_str("  Capabilities\n");
        let c = &p.capabilities;
        c.added
            .iter()
            .for_each(|c| o.push_str(&format!("    + {c}\n")));
        c.removed
            .iter()
            .for_each(|c| o.push_str(&format!("    - {c}\n")));
    }
    for (title, list) in other_changes(r).into_iter().filter(|(_, l)| !l.is_empty()) {
        o.push_str(&format!("  {title}\n"));
        for c in list {
            o.push_str(&format!(
                "    {}: {} → {}\n",
                c.key,
                dash(&c.old),
                dash(&c.new)
            ));
        }
    }

    o.push_str("\nEffect per target (default render options)\n");
    let mut rows = vec![["TARGET", "CHANGES", "RENDERED LINES"].map(str::to_string)];
    rows.extend(r.targets.iter().map(|t| {
        [
            t.target.slug().to_string(),
            target_changes(t),
            target_lines(t),
        ]
    }));
    o.push_str(&table(&rows, 2));

    o.push_str(&format!("\nDiagnostics\n  {}\n", diagnostics_line(r)));
    for (what, p) in diagnostics(r) {
        let at = p.place().map(|l| format!(" ({l})")).unwrap_or_default();
        o.push_str(&format!(
            "  {what}: {} {}: {}{at}\n",
            p.severity, p.code, p.message
        ));
    }
}

fn dash(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "—".to_string())
}

// ---- markdown ----

/// What reads which variable: `NCCL 2.25 ignores it, 2.28 reads it`.
fn nccl_reading(up: &NcclUpgrade, m: &VarMeaning) -> String {
    let says = |reads: bool| if reads { "reads it" } else { "ignores it" };
    format!(
        "NCCL {} {}, {} {} ({}; {})",
        up.from,
        says(m.read_by_old),
        up.to,
        says(m.read_by_new),
        m.why,
        m.source
    )
}

fn human_nccl(up: &NcclUpgrade, o: &mut String) {
    o.push_str(&format!("\nNCCL {} → {}\n", up.from, up.to));
    if up.meaning.is_empty() && up.defaults.is_empty() && up.unjudged.is_empty() {
        o.push_str("  the profile's variables are read by both releases alike\n");
    }
    for m in &up.meaning {
        o.push_str(&format!("  {}={}\n", m.name, m.value));
        o.push_str(&wrap(&nccl_reading(up, m), 6, 100));
    }
    for d in &up.defaults {
        o.push_str(&format!(
            "  {} (left to NCCL): default {} → {}\n",
            d.name, d.old, d.new
        ));
        o.push_str(&wrap(
            &format!("changed in {}: {}", d.since, d.source),
            6,
            100,
        ));
    }
    for u in &up.unjudged {
        o.push_str(&wrap(u, 2, 100));
    }
}

fn markdown_nccl(up: &NcclUpgrade, o: &mut String) {
    o.push_str(&format!("\n#### NCCL {} → {}\n\n", up.from, up.to));
    if up.meaning.is_empty() && up.defaults.is_empty() && up.unjudged.is_empty() {
        o.push_str("The profile's variables are read by both releases alike.\n");
    }
    for m in &up.meaning {
        o.push_str(&format!(
            "- {}: {}\n",
            code(&format!("{}={}", m.name, m.value)),
            md_cell(&nccl_reading(up, m))
        ));
    }
    for d in &up.defaults {
        o.push_str(&format!(
            "- {} (left to NCCL): default {} → {}, changed in {} ({})\n",
            code(&d.name),
            code(&d.old),
            code(&d.new),
            d.since,
            md_cell(&d.source)
        ));
    }
    for u in &up.unjudged {
        o.push_str(&format!("- {}\n", md_cell(u)));
    }
}

fn markdown(r: &Review) -> String {
    let [a_name, b_name] = r.names();
    let mut o = format!("### roce diff: {} → {}\n\n", code(a_name), code(b_name));
    for (which, side) in sides(r) {
        let layers: Vec<String> = side.sources.iter().map(|s| code(s)).collect();
        o.push_str(&format!("- **{which}**: {}\n", layers.join(" extends ")));
    }
    o.push_str(&format!("\n{}\n", r.summary));
    if !r.equal {
        markdown_changes(r, &mut o);
    }
    for (t, files) in shown(r) {
        o.push_str(&format!(
            "\n#### Rendered artifacts: {}\n\n",
            code(t.slug())
        ));
        match files {
            Err(why) => o.push_str(&format!("Cannot render: {}\n", md_cell(why))),
            Ok(files) if files.is_empty() => o.push_str("Identical.\n"),
            Ok(files) => {
                if r.equal {
                    o.push_str("The files differ only in order: no semantic change.\n\n");
                }
                for (path, diff) in files {
                    let fence = fence_for(diff);
                    o.push_str(&format!(
                        "<details><summary>{path}</summary>\n\n{fence}diff\n{diff}{fence}\n\n</details>\n"
                    ));
                }
            }
        }
    }
    o
}

fn markdown_changes(r: &Review, o: &mut String) {
    o.push_str(&format!("\n#### Changed fields ({})\n\n", r.fields.len()));
    o.push_str("| field | old | new | old set at | new set at |\n|---|---|---|---|---|\n");
    for f in &r.fields {
        let ChangedField { path, old, new, .. } = f;
        let at = |at, default| {
            if default {
                "default".to_string()
            } else {
                md_opt(at)
            }
        };
        let (old_at, new_at) = (at(&f.old_at, f.old_default), at(&f.new_at, f.new_default));
        let row = [code(path), md_opt(old), md_opt(new), old_at, new_at];
        o.push_str(&format!("| {} |\n", row.join(" | ")));
    }

    if let Some(up) = &r.nccl {
        markdown_nccl(up, o);
    }

    o.push_str("\n#### Effect on the plan\n\n");
    let p = &r.plan;
    if p.is_empty() {
        o.push_str("None: both profiles lower to the same plan.\n\n");
    }
    if !p.env.is_empty() {
        o.push_str(&format!("**Environment** ({})\n\n", p.env.len()));
        o.push_str("| | variable | old | new | read by |\n|---|---|---|---|---|\n");
        for e in &p.env {
            let sign = match e.change {
                "added" => "➕",
                "removed" => "➖",
                _ => "✏️",
            };
            let row = [code(&e.name), md_opt(&e.old), md_opt(&e.new)];
            o.push_str(&format!(
                "| {sign} | {} | {} |\n",
                row.join(" | "),
                e.consumer
            ));
        }
        o.push('\n');
    }
    if let Some(lines) = networks_text(r) {
        let title = code(p.networks.annotation);
        o.push_str(&format!("**Annotations and NADs** ({title})\n\n```diff\n"));
        lines.iter().for_each(|l| o.push_str(&format!("{l}\n")));
        o.push_str("```\n\n");
    }
    if capabilities_changed(r) {
        o.push_str("**Capabilities**\n\n");
        let c = &p.capabilities;
        c.added
            .iter()
            .for_each(|c| o.push_str(&format!("- added {}\n", code(c))));
        c.removed
            .iter()
            .for_each(|c| o.push_str(&format!("- removed {}\n", code(c))));
        o.push('\n');
    }
    for (title, list) in other_changes(r).into_iter().filter(|(_, l)| !l.is_empty()) {
        o.push_str(&format!("**{title}**\n\n"));
        for c in list {
            let (key, old, new) = (code(&c.key), md_opt(&c.old), md_opt(&c.new));
            o.push_str(&format!("- {key}: {old} → {new}\n"));
        }
        o.push('\n');
    }

    o.push_str("#### Effect per target\n\n| target | changes | rendered lines |\n|---|---|---|\n");
    for t in &r.targets {
        let (slug, changes) = (code(t.target.slug()), md_cell(&target_changes(t)));
        o.push_str(&format!("| {slug} | {changes} | {} |\n", target_lines(t)));
    }

    o.push_str(&format!(
        "\n#### Diagnostics\n\n{}.\n",
        capitalise(&diagnostics_line(r))
    ));
    let d = &r.diagnostics;
    if !d.new.is_empty() || !d.resolved.is_empty() {
        o.push('\n');
    }
    for (what, p) in diagnostics(r) {
        let at = p
            .place()
            .map(|l| format!(" ({})", code(&l)))
            .unwrap_or_default();
        let (sev, c, msg) = (p.severity, code(p.code), md_cell(&p.message));
        o.push_str(&format!("- {what} {sev}: {c} {msg}{at}\n"));
    }
}
