//! `roce lint`: check workload manifests against a profile, file by file on several threads, printing
//! each file's problems as soon as the files before it are done.

use std::path::PathBuf;

use clap::Args;
use miette::{Context, IntoDiagnostic};
use roce_inspect::lint::{FileReport, LintOptions, Linter, walk};
use roce_model::{Problem, load};

use super::Exit;
use super::apply::read_manifest;
use crate::cli::Format;
use crate::io::{FileResolver, read_profile};
use crate::report::{Output, errln, json, outln};

// Arguments of `roce lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Manifest files, or directories searched for `*.yaml` and `*.yml` (`-` reads stdin).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// A built-in profile name or a profile file.
    #[arg(long, short)]
    pub profile: String,
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

pub fn run(args: LintArgs, out: &Output) -> miette::Result<Exit> {
    let source = match read_profile(&args.profile, false)? {
        Ok(s) => s,
        Err(problem) => {
            out.problems(&[*problem]);
            return Ok(Exit::Problems);
        }
    };
    let loaded = load(source, &FileResolver);
    if loaded.has_errors() || loaded.profile.is_none() {
        out.problems(&loaded.problems);
        errln!(
            "error: profile {} has errors; fix them before linting against it",
            args.profile
        );
        return Ok(Exit::Problems);
    }
    let Some(profile) = loaded.profile else {
        return Ok(Exit::Problems);
    };
    let linter = Linter::new(
        &profile,
        LintOptions {
            container: args.container.clone(),
            profile_arg: Some(args.profile.clone()),
        },
    );
    let (stdin, paths): (Vec<PathBuf>, Vec<PathBuf>) = args
        .paths
        .iter()
        .cloned()
        .partition(|p| p.as_os_str() == "-");
    let files = walk::files(&paths)
        .into_diagnostic()
        .wrap_err("finding the manifests to lint")?;
    let mut summary = Summary::default();
    let mut all: Vec<Problem> = Vec::new();
    let mut take = |report: FileReport, summary: &mut Summary| {
        summary.add(&report);
        match args.format {
            Format::Human => out.problems(&report.problems),
            Format::Json => all.extend(report.problems),
        }
    };
    if !stdin.is_empty() {
        match read_manifest(&stdin[0])? {
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
        Format::Human => errln!("{}", summary.line(&args.profile)),
    }
    Ok(if summary.errors > 0 || unreadable > 0 {
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
        self.warnings += r.problems.len() - errors;
        self.failing += usize::from(errors > 0);
    }

    fn line(&self, profile: &str) -> String {
        let checked = format!(
            "{} pod template(s) in {} file(s) checked against {profile}",
            self.templates, self.files
        );
        match (self.errors, self.warnings) {
            (0, 0) => format!("ok: {checked}"),
            (0, w) => format!("ok: {checked}, {w} warning(s)"),
            (e, w) => format!(
                "failed: {e} error(s) and {w} warning(s) in {} of {} file(s); {checked}",
                self.failing, self.files
            ),
        }
    }
}
