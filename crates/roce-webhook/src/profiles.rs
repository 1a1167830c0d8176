//! The profiles the webhook serves: the built-ins, and the `*.kdl` / `*.yaml` / `*.yml` files of a directory
//! (a mounted ConfigMap), named by their file stem and re-read when the directory changes.
//!
//! Every profile is loaded and lowered when the store starts and again when the files change; the result,
//! a [`Plan`] or the diagnostics that kept it from loading, is what a review reads. A file in the directory wins over a built-in of the same name.
//!
//! A file that loaded and then changes into one that does not is refused: the version that loaded keeps
//! serving (as a certificate that does not load leaves the old one in use), and the reload reports it. A
//! file with errors and no earlier version (new, or present at start) is served as its diagnostics, so
//! objects naming it are denied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use roce_model::load::Resolve;
use roce_model::{Problem, Source, builtin, load};
use roce_render::plan::Plan;

/// What a profile name resolves to.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The profile loaded: its plan.
    Plan(Arc<Plan>),
    /// The profile has errors: the diagnostics, one a line.
    Invalid(Arc<Vec<String>>),
    /// No built-in and no file of that name.
    Unknown,
}

/// A snapshot of the directory: for every profile file, its path, modification time and size.
type Fingerprint = BTreeMap<String, (PathBuf, Option<SystemTime>, u64)>;

/// A changed profile file that did not load: its previous version stays in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The profile (file stem).
    pub name: String,
    /// Why the new version does not load, one diagnostic a line.
    pub errors: Vec<String>,
}

/// What a [`Profiles::reload_if_changed`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reload {
    /// The directory changed and was read again.
    pub changed: bool,
    /// Changed files that did not load, kept at their previous version.
    pub refused: Vec<Refused>,
    /// Files with errors and no previous version: objects naming them are denied.
    pub invalid: Vec<Refused>,
}

/// The profile store: built-ins plus an optional directory.
#[derive(Debug)]
pub struct Profiles {
    dir: Option<PathBuf>,
    state: RwLock<State>,
    /// Serialises reloads.
    reloading: Mutex<()>,
}

#[derive(Debug, Default)]
struct State {
    files: Fingerprint,
    cache: BTreeMap<String, Lookup>,
    generation: u64,
}

impl Profiles {
    /// A store of the built-ins and, with `dir`, that directory's profile files (read now).
    pub fn new(dir: Option<PathBuf>) -> Self {
        let p = Profiles {
            dir,
            state: RwLock::new(State::default()),
            reloading: Mutex::new(()),
        };
        p.reload_if_changed();
        p
    }

    /// The profile files found in the directory, by name.
    pub fn files(&self) -> Vec<String> {
        self.state
            .read()
            .expect("profiles lock")
            .files
            .keys()
            .cloned()
            .collect()
    }

    /// The profile files served as their diagnostics (errors and no version that loaded), by name.
    pub fn invalid(&self) -> Vec<String> {
        let state = self.state.read().expect("profiles lock");
        state
            .files
            .keys()
            .filter(|name| matches!(state.cache.get(*name), Some(Lookup::Invalid(_))))
            .cloned()
            .collect()
    }

    /// How many times the directory was (re)read with a change.
    pub fn generation(&self) -> u64 {
        self.state.read().expect("profiles lock").generation
    }

    /// Re-read the directory listing; when a file was added, removed or changed (or on the first call),
    /// load and lower every profile again. A file that loaded before and does not now keeps its previous
    /// version (reported in [`Reload::refused`]).
    pub fn reload_if_changed(&self) -> Reload {
        let _guard = self.reloading.lock().expect("reload lock");
        let now = self.dir.as_deref().map(scan).unwrap_or_default();
        {
            let state = self.state.read().expect("profiles lock");
            if now == state.files && state.generation > 0 {
                return Reload::default();
            }
        }
        let mut reload = Reload {
            changed: true,
            ..Reload::default()
        };
        // Every profile a label can name is lowered here, on the poll, so a review only reads the cache:
        // no file read or lowering on the request path, and no request waits for one.
        let mut cache: BTreeMap<String, Lookup> = builtin::names()
            .map(|name| (name.to_string(), load_one(name, &now, self.dir.as_deref())))
            .collect();
        {
            // The previous versions; no other reload runs meanwhile (`reloading` is held).
            let state = self.state.read().expect("profiles lock");
            for name in now.keys() {
                let lookup = load_one(name, &now, self.dir.as_deref());
                let lookup = match (lookup, state.cache.get(name)) {
                    // A bad edit of a file that loaded: refuse it, keep serving what loaded. Denying every
                    // object that names the profile until someone fixes the ConfigMap would turn a typo
                    // into an outage of admissions.
                    (Lookup::Invalid(errors), Some(Lookup::Plan(previous)))
                        if state.files.contains_key(name) =>
                    {
                        reload.refused.push(Refused {
                            name: name.clone(),
                            errors: errors.to_vec(),
                        });
                        Lookup::Plan(previous.clone())
                    }
                    (Lookup::Invalid(errors), _) => {
                        reload.invalid.push(Refused {
                            name: name.clone(),
                            errors: errors.to_vec(),
                        });
                        Lookup::Invalid(errors)
                    }
                    (lookup, _) => lookup,
                };
                cache.insert(name.clone(), lookup);
            }
        }
        let mut state = self.state.write().expect("profiles lock");
        state.files = now;
        state.cache = cache;
        state.generation += 1;
        reload
    }

    /// Resolve `name`: a file of the directory first, then a built-in.
    pub fn get(&self, name: &str) -> Lookup {
        let state = self.state.read().expect("profiles lock");
        match state.cache.get(name) {
            Some(hit) => hit.clone(),
            // Not a file of the directory at the last poll, and not a built-in.
            None => Lookup::Unknown,
        }
    }
}

/// Load and lower `name`: the file of that name in `files`, else the built-in.
fn load_one(name: &str, files: &Fingerprint, dir: Option<&Path>) -> Lookup {
    match files.get(name) {
        Some((path, _, _)) => match std::fs::read_to_string(path) {
            Ok(text) => lower(Source::new(path.display().to_string(), text), dir),
            Err(e) => Lookup::Invalid(Arc::new(vec![format!("{}: {e}", path.display())])),
        },
        None => match builtin::source(name) {
            Some(source) => lower(source, None),
            None => Lookup::Unknown,
        },
    }
}

fn lower(source: Source, dir: Option<&Path>) -> Lookup {
    let resolver = DirResolver {
        dir: dir.map(Path::to_path_buf),
    };
    let loaded = load(source, &resolver);
    let errors: Vec<&Problem> = loaded.problems.iter().filter(|p| p.is_error()).collect();
    match loaded.profile {
        Some(profile) if errors.is_empty() => {
            Lookup::Plan(Arc::new(roce_render::plan::lower(&profile)))
        }
        _ => {
            let mut lines: Vec<String> = errors.iter().map(|p| one_line(p)).collect();
            if lines.is_empty() {
                lines.push("the profile did not load".to_string());
            }
            Lookup::Invalid(Arc::new(lines))
        }
    }
}

/// A problem as one line: `code: message (file:line:column; help)`.
pub(crate) fn one_line(p: &Problem) -> String {
    let mut text = format!("{}: {}", p.code.as_str(), p.message);
    let mut extra = Vec::new();
    if let Some(at) = p.location() {
        extra.push(format!("{}:{}:{}", at.file, at.line, at.column));
    }
    if let Some(help) = &p.help {
        extra.push(help.clone());
    }
    if !extra.is_empty() {
        text.push_str(&format!(" ({})", extra.join("; ")));
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Resolves `extends` paths relative to the profile directory (built-in names are resolved by `load`).
#[derive(Debug)]
struct DirResolver {
    dir: Option<PathBuf>,
}

impl Resolve for DirResolver {
    fn resolve(&self, reference: &str, _from: &Source) -> Result<Source, String> {
        let Some(dir) = &self.dir else {
            return Err(format!(
                "`{reference}`: no --profiles directory to read it from"
            ));
        };
        let path = dir.join(reference);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Source::new(path.display().to_string(), text))
    }
}

/// The profile files of `dir`: `*.kdl`, `*.yaml`, `*.yml`, not hidden (a ConfigMap volume's `..data`
/// entries are skipped; its visible files are symlinks, followed).
fn scan(dir: &Path) -> Fingerprint {
    let mut out = Fingerprint::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file.starts_with('.') {
            continue;
        }
        let Some((stem, ext)) = file.rsplit_once('.') else {
            continue;
        };
        if !matches!(ext, "kdl" | "yaml" | "yml") || stem.is_empty() {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        out.insert(
            stem.to_string(),
            (path.clone(), meta.modified().ok(), meta.len()),
        );
    }
    out
}
