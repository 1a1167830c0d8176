//! File and stdin IO: reading profiles, resolving `extends` against the file system, atomic writes.

use std::io::Read;
use std::path::{Path, PathBuf};

use miette::{Context, IntoDiagnostic};
use roce_model::source::Sources;
use roce_model::{Format, Problem, Profile, Resolve, Source, builtin};

/// Read and load the profile `spec` names (a built-in, a file, `-`), printing its problems (warnings too):
/// the profile and the sources its problems point into, or `None` when it could not be read or has errors.
pub fn load_profile(
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
pub fn read_profile(spec: &str, yaml_stdin: bool) -> miette::Result<Result<Source, Box<Problem>>> {
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
pub struct FileResolver;

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
pub fn write_all(dir: &Path, files: &[(String, String)]) -> miette::Result<()> {
    std::fs::create_dir_all(dir)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", dir.display()))?;
    let mut staged = Vec::new();
    for (name, contents) in files {
        let target = dir.join(name);
        let parent = target.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).into_diagnostic()?;
        staged.push((stage(&target, contents)?, target));
    }
    for (tmp, target) in staged {
        tmp.persist(&target)
            .into_diagnostic()
            .wrap_err_with(|| format!("renaming into {}", target.display()))?;
    }
    Ok(())
}

/// Write `contents` to a temporary file beside `target`, ready to be renamed over it.
///
/// The temporary file gets the mode the user would get from a plain `open(target, O_CREAT, 0666)`: an
/// existing file's mode is kept, a new file gets `0666` less the umask. (A temporary file is `0600` by
/// default, and the rename would carry that into the user's repository.)
pub fn stage(target: &Path, contents: &str) -> miette::Result<tempfile::NamedTempFile> {
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
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
    Ok(tmp)
}
