//! `roce lint`: check workload manifests against a profile, file by file on several threads, printing
//! each file's problems as soon as the files before it are done.

use std::path::PathBuf;

use clap::Args;
use miette::{Context, IntoDiagnostic};
use roce_inspect::lint::{FileReport, LintOptions, Linter, auto, walk};
use roce_model::{Problem, Severity};

use super::Exit;
use super::apply::read_manifest;
use crate::args::Format;
use crate::io::load_profile;
use crate::report::{Output, errln, json, outln};

// Arguments of `roce lint`.
#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    /// Manifest files, or directories searched for `*.yaml` and `*.yml` (`-` reads stdin).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// A built-in profile name or a profile file; `auto` picks the built-in whose signals (resources,
    /// node labels, networks, annotations, device classes) the manifests carry. Without it, only the checks
    /// that hold for every fabric run.
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Exit 0 even when no pod template was found (by default a run that checked no pod fails: it checked
    /// nothing).
    #[arg(long)]
    pub allow_empty: bool,
    /// The container to check in each pod template (default: the first), as for `roce apply`.
    #[arg(long)]
    pub container: Option<String>,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Files linted at once (default: one per CPU).
    #[arg(long, short = 'j', default_value_t = 0)]
    pub jobs: usize,
}

pub(crate) fn run(args: LintArgs, out: &Output) -> miette::Result<Exit> {
    let (stdin, paths): (Vec<PathBuf>, Vec<PathBuf>) = args
        .paths
        .iter()
        .cloned()
        .partition(|p| p.as_os_str() == "-");
    let files = walk::files(&paths)
        .into_diagnostic()
        .wrap_err("finding the manifests to lint")?;
    let opts = LintOptions {
        container: args.container.clone(),
        profile_arg: args.profile.clone(),
    };
    let mut stdin_source = None;
    if !stdin.is_empty() {
        stdin_source = Some(read_manifest(&stdin[0])?);
    }
    let profile_name = match args.profile.as_deref() {
        Some("auto") => {
            let texts: Vec<String> = files
                .iter()
                .filter_map(|f| std::fs::read_to_string(f).ok())
                .chain(
                    stdin_source
                        .iter()
                        .filter_map(|s| s.as_ref().ok().map(|s| s.text.to_string())),
                )
                .collect();
            match auto::choose(texts.iter().map(String::as_str)) {
                Some(choice) => {
                    errln!(
                        "profile auto: {} ({})",
                        choice.profile,
                        choice.why.join(", ")
                    );
                    Some(choice.profile)
                }
                None => {
                    errln!(
                        "profile auto: no built-in's signals in these manifests; checking the invariants of every fabric only"
                    );
                    None
                }
            }
        }
        other => other.map(str::to_string),
    };
    let linter = match &profile_name {
        None => Linter::without_profile(opts),
        Some(name) => {
            let Some((profile, _)) = load_profile(name, out)? else {
                return Ok(Exit::Problems);
            };
            Linter::new(
                &profile,
                LintOptions {
                    profile_arg: Some(name.clone()),
                    ..opts
                },
            )
        }
    };
    let mut summary = Summary::default();
    let mut all: Vec<Problem> = Vec::new();
    let mut take = |report: FileReport, summary: &mut Summary| {
        summary.add(&report);
        match args.format {
            Format::Human => out.problems(&report.problems),
            Format::Json => all.extend(report.problems),
        }
    };
    if let Some(source) = stdin_source {
        match source {
            Ok(source) => take(linter.lint(source), &mut summary),
            Err(problem) => take(
                FileReport {
                    problems: vec![*problem],
                    ..FileReport::default()
                },
                &mut summary,
            ),
        }
    }
    let mut unreadable = 0;
    walk::lint_files(&linter, &files, args.jobs, |_, path, report| match report {
        Ok(report) => take(report, &mut summary),
        Err(e) => {
            unreadable += 1;
            errln!("error: cannot read {}: {e}", path.display());
        }
    });
    match args.format {
        Format::Json => outln!("{}", json(&all)),
        Format::Human => errln!("{}", summary.line(profile_name.as_deref())),
    }
    let empty = summary.templates == 0 && !args.allow_empty;
    if empty && matches!(args.format, Format::Human) {
        errln!("error: no pod template was checked; pass --allow-empty if that is expected");
    }
    Ok(if summary.errors > 0 || unreadable > 0 || empty {
        Exit::Problems
    } else {
        Exit::Ok
    })
}

#[derive(Debug, Default)]
struct Summary {
    files: usize,
    templates: usize,
    errors: usize,
    warnings: usize,
    failing: usize,
}

impl Summary {
    fn add(&mut self, r: &FileReport) {
        self.files += 1;
        self.templates += r.templates;
        let errors = r.problems.iter().filter(|p| p.is_error()).count();
        self.errors += errors;
        self.warnings += r
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Warning)
            .count();
        self.failing += usize::from(errors > 0);
    }

    fn line(&self, profile: Option<&str>) -> String {
        let against = match profile {
            Some(p) => format!("against {p}"),
            None => "for the invariants of every fabric (no --profile)".to_string(),
        };
        let checked = format!(
            "{} pod template(s) in {} file(s) checked {against}",
            self.templates, self.files
        );
        match (self.errors, self.warnings) {
            _ if self.templates == 0 && self.errors == 0 => {
                format!("nothing checked: 0 pod templates in {} file(s)", self.files)
            }
            (0, 0) => format!("ok: {checked}"),
            (0, w) => format!("ok: {checked}, {w} warning(s)"),
            (e, w) => format!(
                "failed: {e} error(s) and {w} warning(s) in {} of {} file(s); {checked}",
                self.failing, self.files
            ),
        }
    }
}
