//! `roce lint`: check workload manifests against a profile, a batch of files at a time on a thread pool,
//! printing each batch's problems in file order as soon as the batch is done.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use clap::Args;
use miette::{Context, IntoDiagnostic};
use rayon::prelude::*;
use roce_inspect::lint::{FileReport, LintOptions, Linter, MAX_MANIFEST_BYTES, auto};
use roce_model::plumbing::manifest::STACK_BYTES;
use roce_model::{Problem, Severity, Source};

use super::Exit;
use super::apply::read_manifest;
use crate::args::Format;
use crate::io::load_profile;
use crate::report::{Output, errln, json, outln};
use crate::walk;

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
    let files = walk::files(&paths, walk::yaml)
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
    lint_files(&linter, &files, args.jobs, |path, report| match report {
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

/// Files linted per hand-over between the pool and the printer: large enough that waking threads costs
/// nothing next to the linting, small enough that output starts early and a batch's reports stay small.
const BATCH: usize = 256;

/// Lint `files` on `jobs` threads (0: one per CPU), calling `sink` with each file's report in file order.
/// The pool's threads have the stack the manifest reader wants for deep documents, so each file is parsed
/// on the thread that reads it.
fn lint_files(
    linter: &Linter,
    files: &[PathBuf],
    jobs: usize,
    mut sink: impl FnMut(&Path, io::Result<FileReport>),
) {
    let jobs = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.min(files.len().max(1)))
        .stack_size(STACK_BYTES)
        .thread_name(|i| format!("roce-lint-{i}"))
        .build();
    for batch in files.chunks(BATCH) {
        let reports: Vec<io::Result<FileReport>> = match &pool {
            Ok(pool) => pool.install(|| {
                batch
                    .par_iter()
                    .map(|p| read_and(linter, p, Linter::lint_here))
                    .collect()
            }),
            // No thread could be started: lint here, where the reader starts its own thread per file.
            Err(_) => batch
                .iter()
                .map(|p| read_and(linter, p, Linter::lint))
                .collect(),
        };
        for (path, report) in batch.iter().zip(reports) {
            sink(path, report);
        }
    }
}

/// Read one file and lint it: one `open`, one `fstat` for the size, the reads, one `close` (std's
/// `File::read_to_end` would `fstat` and `lseek` once more for its size hint).
fn read_and(
    linter: &Linter,
    path: &Path,
    lint: fn(&Linter, Source) -> FileReport,
) -> io::Result<FileReport> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > MAX_MANIFEST_BYTES {
        return Ok(linter.too_large(&name, size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    // `take` is only there to hide `File`'s own `read_to_end` (and its size hint); the file may have grown
    // since the `fstat`, up to the limit.
    (&file)
        .take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => lint(linter, Source::new(name, text)),
        Err(_) => linter.not_text(&name),
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
