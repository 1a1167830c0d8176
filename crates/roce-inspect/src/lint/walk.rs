//! Lint many files: walk directories, lint on several threads, hand reports back in order as they finish.
//!
//! Threads come from `std::thread::scope` (no thread-pool dependency): each worker takes the next file
//! index from an atomic counter, reads and lints that file, and sends the report down a channel. The
//! caller's callback receives reports strictly in file order — a report waits only for the files before
//! it — so output is deterministic and starts before the last file is read.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use roce_model::Source;
use roce_render::apply::manifest;

use super::{FileReport, Linter};

/// The manifest files under `paths`: each file given as is, each directory searched recursively for
/// `*.yaml` and `*.yml` (hidden entries skipped), in sorted order.
///
/// # Errors
///
/// The first path that cannot be read.
pub fn files(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut out)?;
        } else {
            std::fs::metadata(path)?;
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    entries.sort();
    for path in entries {
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Read and lint one file.
///
/// # Errors
///
/// When the file cannot be read.
pub fn lint_file(linter: &Linter, path: &Path) -> io::Result<FileReport> {
    read_and(linter, path, Linter::lint)
}

fn read_and(
    linter: &Linter,
    path: &Path,
    lint: fn(&Linter, Source) -> FileReport,
) -> io::Result<FileReport> {
    let name = path.display().to_string();
    // One open for the size and the bytes: a path lookup less per file than `metadata` and `fs::read`.
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > super::MAX_MANIFEST_BYTES {
        return Ok(linter.too_large(&name, size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.read_to_end(&mut bytes)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => lint(linter, Source::new(name, text)),
        Err(_) => linter.not_text(&name),
    })
}

/// Lint `files` on `jobs` threads (0: one per CPU), calling `sink` with each file's index, path and report
/// in file order.
///
/// ```
/// use roce_inspect::lint::{walk, LintOptions, Linter};
/// use roce_model::{builtin, load, BuiltinsOnly};
/// let dir = std::env::temp_dir().join(format!("roce-lint-walk-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - {name: c, image: i}\n").unwrap();
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let linter = Linter::new(&profile, LintOptions::default());
/// let files = walk::files(&[dir.clone()]).unwrap();
/// let mut problems = 0;
/// walk::lint_files(&linter, &files, 1, |_, _, report| problems += report.unwrap().problems.len());
/// assert!(problems > 0, "a pod with no RDMA wiring");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn lint_files<F>(linter: &Linter, files: &[PathBuf], jobs: usize, mut sink: F)
where
    F: FnMut(usize, &Path, io::Result<FileReport>),
{
    let jobs = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, io::Result<FileReport>)>();
    std::thread::scope(|scope| {
        let mut started = 0;
        for _ in 0..jobs {
            let tx = tx.clone();
            let next = &next;
            let worker = move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    if tx
                        .send((i, read_and(linter, path, Linter::lint_here)))
                        .is_err()
                    {
                        break;
                    }
                }
            };
            // Big stacks let the workers parse deep documents without a thread per file.
            let spawned = std::thread::Builder::new()
                .name("roce-lint".into())
                .stack_size(manifest::STACK_BYTES)
                .spawn_scoped(scope, worker);
            started += usize::from(spawned.is_ok());
        }
        if started == 0 {
            // No thread could be started: lint here, one file after another.
            while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                let i = next.load(Ordering::Relaxed) - 1;
                let _ = tx.send((i, lint_file(linter, path)));
            }
        }
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        for (i, report) in rx {
            waiting.insert(i, report);
            while let Some(report) = waiting.remove(&due) {
                sink(due, &files[due], report);
                due += 1;
            }
        }
    });
}
