//! The one directory walk of the CLI (`lint`, `explain`, `sweep`): `ignore`'s parallel walker, hidden
//! entries skipped, symbolic links followed (loops detected by the walker), paths sorted at the end so the
//! order is the same however the threads raced. No `stat` per entry: the walker takes file types from the
//! directory listing.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

/// The files under each of `paths`: a path that is a file is taken as is, whatever its name; a directory is
/// searched recursively for files `keep` accepts. Sorted by path within each argument, arguments in order.
///
/// # Errors
///
/// The first path or directory that cannot be read.
pub(crate) fn files(paths: &[PathBuf], keep: fn(&Path) -> bool) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        let mut found = under(path, keep)?;
        found.sort_unstable();
        out.append(&mut found);
    }
    Ok(out)
}

fn under(root: &Path, keep: fn(&Path) -> bool) -> io::Result<Vec<PathBuf>> {
    let found = Mutex::new(Vec::new());
    let failed: Mutex<Option<io::Error>> = Mutex::new(None);
    WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(true)
        .follow_links(true)
        .build_parallel()
        .run(|| {
            let failed = &failed;
            let mut mine = Batch {
                paths: Vec::new(),
                into: &found,
            };
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        let e = e
                            .into_io_error()
                            .unwrap_or_else(|| io::Error::other("walk"));
                        lock(failed).get_or_insert(e);
                        return WalkState::Quit;
                    }
                };
                let file = entry.file_type().is_some_and(|t| !t.is_dir());
                if file && (entry.depth() == 0 || keep(entry.path())) {
                    mine.paths.push(entry.into_path());
                }
                WalkState::Continue
            })
        });
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(found.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// One walker thread's finds, handed over once, when the walker drops its visitor: a lock a thread, not a
/// lock a file.
struct Batch<'a> {
    paths: Vec<PathBuf>,
    into: &'a Mutex<Vec<PathBuf>>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        lock(self.into).append(&mut self.paths);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `*.yaml` and `*.yml`, any case: what `lint` reads in a directory.
pub(crate) fn yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Every file: what `explain` and `sweep` read in a directory.
pub(crate) fn any(_: &Path) -> bool {
    true
}
