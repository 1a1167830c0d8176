//! File and stdin IO: reading profiles, resolving `extends` against the file system, atomic writes.

use std::io::Read;
use std::path::{Path, PathBuf};

use miette::{Context, IntoDiagnostic};
use roce_model::source::Sources;
use roce_model::{Format, Problem, Profile, Resolve, Source, builtin};

/// Read and load the profile `spec` names (a built-in, a file, `-`), printing its problems (warnings too):
/// the profile and the sources its problems point into, or `None` when it could not be read or has errors.
pub(crate) fn load_profile(
    spec: &str,
    out: &crate::report::Output,
) -> miette::Result<Option<(Profile, Sources)>> {
    let source = match read_profile(spec, false)? {
        Ok(s) => s,
        Err(problem) => {
            out.problems(&[*problem]);
            return Ok(None);
        }
    };
    let loaded = roce_model::load(source, &FileResolver);
    out.problems(&loaded.problems);
    Ok(loaded.profile.map(|p| (p, loaded.sources)))
}

/// Read a profile named on the command line: a built-in name, a file path, or `-` for stdin.
/// The inner `Err` is a profile that is not text: a coded problem, not a failure of the command.
pub(crate) fn read_profile(
    spec: &str,
    yaml_stdin: bool,
) -> miette::Result<Result<Source, Box<Problem>>> {
    if let Some(source) = builtin::source(spec) {
        return Ok(Ok(source));
    }
    if spec == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .into_diagnostic()
            .wrap_err("reading stdin")?;
        let format = if yaml_stdin {
            Format::Yaml
        } else {
            Format::Kdl
        };
        return Ok(decode("<stdin>", bytes).map(|s| Source::with_format("<stdin>", s.text, format)));
    }
    let path = Path::new(spec);
    if !path.exists() {
        let names: Vec<&str> = builtin::names().collect();
        let hint = roce_model::plumbing::suggest::closest(spec, names.iter().copied())
            .map(|b| format!(" (did you mean the built-in `{b}`?)"))
            .unwrap_or_default();
        miette::bail!(
            help = "`roce profiles` lists the built-in profiles",
            "no built-in profile or file named `{spec}`{hint}"
        );
    }
    let bytes = std::fs::read(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("reading {}", path.display()))?;
    Ok(decode(&path.display().to_string(), bytes))
}

fn decode(name: &str, bytes: Vec<u8>) -> Result<Source, Box<Problem>> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(e) => Err(Box::new(roce_model::load::not_text(name, e.as_bytes()).1)),
    }
}

/// Resolves `extends` paths relative to the file that names them.
#[derive(Debug, Default)]
pub(crate) struct FileResolver;

impl Resolve for FileResolver {
    fn resolve(&self, reference: &str, from: &Source) -> Result<Source, String> {
        let base = if from.name.starts_with("builtin:") || from.name == "<stdin>" {
            PathBuf::from(".")
        } else {
            Path::new(&from.name)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let path = base.join(reference);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Source::new(path.display().to_string(), text))
    }
}

/// Write files into `dir` atomically: every file goes to a temporary file in `dir` first, and only when
/// all were written are they renamed into place.
pub(crate) fn write_all(dir: &Path, files: &[(String, String)]) -> miette::Result<()> {
    std::fs::create_dir_all(dir)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", dir.display()))?;
    let mut targets = Vec::new();
    for (name, contents) in files {
        let target = dir.join(name);
        let parent = target.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).into_diagnostic()?;
        targets.push((target, contents.as_str()));
    }
    stage_all(targets)?.commit(|_| ())
}

/// Files written beside their targets, synced, and not yet renamed over them.
pub(crate) struct Staged {
    files: Vec<(tempfile::NamedTempFile, PathBuf)>,
    dirs: Vec<PathBuf>,
}

/// Stage every file (removing what a killed run of roce left in the same directories first), so that
/// [`Staged::commit`] only renames: a file is then the old content or the new one, never a part of it.
pub(crate) fn stage_all<'a>(
    targets: impl IntoIterator<Item = (PathBuf, &'a str)>,
) -> miette::Result<Staged> {
    let mut staged = Staged {
        files: Vec::new(),
        dirs: Vec::new(),
    };
    for (target, contents) in targets {
        let dir = dir_of(&target).to_path_buf();
        if !staged.dirs.contains(&dir) {
            remove_stale(&dir);
            staged.dirs.push(dir);
        }
        staged.files.push((stage(&target, contents)?, target));
    }
    Ok(staged)
}

impl Staged {
    /// Rename every staged file over its target (`each` hears of each), then sync the directories so the
    /// renames outlive a crash of the machine too.
    pub(crate) fn commit(self, mut each: impl FnMut(&Path)) -> miette::Result<()> {
        for (tmp, target) in self.files {
            tmp.persist(&target)
                .into_diagnostic()
                .wrap_err_with(|| format!("renaming into {}", target.display()))?;
            each(&target);
        }
        #[cfg(unix)]
        for dir in &self.dirs {
            // A directory opened read-only can be synced on Linux and the BSDs; where it cannot, the rename
            // is still atomic, only not yet durable.
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

fn dir_of(target: &Path) -> &Path {
    target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// roce's temporary files are `.NAME.roce-PID-RANDOM.tmp`: hidden, named for their target and the process
/// that writes them, so a later run can tell what a killed one left behind.
const TEMP_MARK: &str = ".roce-";
const TEMP_SUFFIX: &str = ".tmp";

/// Remove the temporary files of roce processes that no longer run (killed before they could rename or
/// delete them). Best effort: a directory that cannot be read is left as it is.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(pid) = temp_owner(name)
            && pid != std::process::id()
            && !running(pid, &entry)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The PID in a name of roce's temporary files.
fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(TEMP_SUFFIX)?;
    let (_, after) = rest.rsplit_once(TEMP_MARK)?;
    after.split_once('-')?.0.parse().ok()
}

/// Is the process that wrote a temporary file still running? Where `/proc` lists processes, by its PID;
/// elsewhere a file untouched for an hour is taken as left behind.
fn running(pid: u32, entry: &std::fs::DirEntry) -> bool {
    if Path::new("/proc/self").exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age.as_secs() < 3600)
}

/// Write `contents` to a temporary file beside `target`, synced, ready to be renamed over it.
///
/// The temporary file gets the mode the user would get from a plain `open(target, O_CREAT, 0666)`: an
/// existing file's mode is kept, a new file gets `0666` less the umask. (A temporary file is `0600` by
/// default, and the rename would carry that into the user's repository.)
fn stage(target: &Path, contents: &str) -> miette::Result<tempfile::NamedTempFile> {
    let dir = dir_of(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}{TEMP_MARK}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    let existing = match std::fs::metadata(target) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(e)
                .into_diagnostic()
                .wrap_err_with(|| format!("reading the mode of {}", target.display()));
        }
    };
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // open(2) applies the umask to this mode, exactly as it would for a new file.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating a temporary file in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, contents.as_bytes())
        .into_diagnostic()
        .wrap_err_with(|| format!("writing {}", target.display()))?;
    if let Some(permissions) = existing {
        // Set after creation: the umask must not narrow a mode the user already chose.
        std::fs::set_permissions(tmp.path(), permissions)
            .into_diagnostic()
            .wrap_err_with(|| format!("keeping the mode of {}", target.display()))?;
    }
    // Synced before the rename: otherwise a crash of the machine can leave the new name on empty blocks
    // (XFS, btrfs and ext4 without auto_da_alloc order the rename before the data).
    tmp.as_file()
        .sync_all()
        .into_diagnostic()
        .wrap_err_with(|| format!("syncing {}", target.display()))?;
    Ok(tmp)
}
