//! Profiles read from Git: `REV:path` (read with `git show`), whose `extends` resolve in the same
//! revision, so a pre-merge check can run `roce diff HEAD:profiles/x.kdl profiles/x.kdl`.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use roce_model::source::Sources;
use roce_model::{Loaded, Resolve, Source, load};

use crate::io::{FileResolver, read_profile};

/// Load a built-in, a file, or `REV:path`. A profile that does not load is a `Loaded` with problems;
/// only a Git failure is an error.
pub(crate) fn load_spec(spec: &str) -> miette::Result<Loaded> {
    let Some((rev, path)) = git_spec(spec) else {
        return Ok(match read_profile(spec, false)? {
            Ok(source) => load(source, &FileResolver),
            Err(problem) => Loaded {
                profile: None,
                problems: vec![*problem],
                sources: Sources::default(),
            },
        });
    };
    let text = git_show(rev, path).map_err(|why| {
        miette::miette!(
            help = "REV:path is read with `git show REV:path`; the path is relative to the repository root (or `./path` to the current directory)",
            "cannot read `{spec}` from Git: {why}"
        )
    })?;
    let resolver = GitResolver {
        rev: rev.to_string(),
    };
    Ok(load(Source::new(spec, text), &resolver))
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
}
