//! `roce apply`: wire a profile's fabric into existing workload manifests.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use miette::{Context, IntoDiagnostic};
use roce_model::plumbing::manifest;
use roce_model::source::Sources;
use roce_model::{Problem, Source};
use roce_render::apply::{ApplyOptions, RoleChoice, apply, apply_wrapped};
use roce_render::exec::ExecWrap;

use super::Exit;
use crate::io::load_profile;
use crate::report::{Output, errln, outp};

// Arguments of `roce apply`.
#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// Manifest files: multi-document YAML (`-` reads stdin).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// A built-in profile name or a profile file.
    #[arg(long, short)]
    pub profile: String,
    /// The container to wire in each pod template (default: the first; an MPI launcher without it uses
    /// its first).
    #[arg(long)]
    pub container: Option<String>,
    /// MPI jobs: where the env goes: the worker pods' env, the launcher's env forwarded with
    /// `mpirun -x NAME`, or both.
    #[arg(long, value_enum, default_value_t = RoleChoice::Worker)]
    pub role: RoleChoice,
    /// Rewrite the files instead of printing them; nothing is written unless every file applies cleanly.
    #[arg(long, short = 'i')]
    pub in_place: bool,
    /// Start each wired container's job behind `roce exec --profile PROFILE --`, which sets the fabric
    /// variables from the pod's devices: the prefix goes in front of its `command`, and the variables roce
    /// exec computes stay out of its env. PROFILE defaults to --profile when that is a built-in; give a
    /// profile file as its path in the image.
    #[arg(long, value_name = "PROFILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub exec: Option<String>,
}

pub(crate) fn run(args: ApplyArgs, out: &Output) -> miette::Result<Exit> {
    if args.in_place && args.files.iter().any(|f| f.as_os_str() == "-") {
        errln!("error: --in-place cannot rewrite stdin; drop `-` or print the result instead");
        return Ok(Exit::Usage);
    }
    let Some((profile, _)) = load_profile(&args.profile, out)? else {
        return Ok(Exit::Problems);
    };
    let plan = roce_render::plan::lower(&profile);
    let opts = ApplyOptions {
        container: args.container.clone(),
        role: args.role,
    };
    let wrap = match args.exec.as_deref() {
        None => None,
        Some(given) => Some(ExecWrap {
            profile: super::render::exec_profile(given, &args.profile)?,
            command: None,
        }),
    };
    let mut results = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let mut templates = 0;
    for path in &args.files {
        let source = match read_manifest(path)? {
            Ok(source) => source,
            Err(problem) => {
                problems.push(*problem);
                continue;
            }
        };
        let applied = match &wrap {
            Some(w) => apply_wrapped(&source, &plan, &opts, w),
            None => apply(&source, &plan, &opts),
        };
        match applied {
            Ok(applied) => {
                for note in &applied.notes {
                    errln!("note: {note}");
                }
                templates += applied.templates;
                results.push((path, applied.text));
            }
            Err(p) => problems.extend(p),
        }
    }
    if !problems.is_empty() {
        out.problems(&problems);
        errln!("error: nothing applied; fix the problems above first");
        return Ok(Exit::Problems);
    }
    if args.in_place {
        // Stage every file first, then rename them all: all or nothing.
        let staged = crate::io::stage_all(
            results
                .iter()
                .map(|(path, text)| (path.to_path_buf(), text.as_str())),
        )?;
        staged.commit(|path| errln!("wrote {}", path.display()))?;
    } else {
        for (i, (_, text)) in results.iter().enumerate() {
            if i > 0 {
                outp!("---\n");
            }
            outp!("{text}");
        }
    }
    errln!(
        "applied {} to {templates} pod template(s) in {} file(s)",
        plan.profile,
        results.len()
    );
    Ok(Exit::Ok)
}

/// Read a manifest; the inner `Err` is a file that is not text (a coded problem, not a command failure).
pub(crate) fn read_manifest(path: &Path) -> miette::Result<Result<Source, Box<Problem>>> {
    let (name, bytes) = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .into_diagnostic()
            .wrap_err("reading stdin")?;
        ("<stdin>".to_string(), bytes)
    } else {
        let bytes = std::fs::read(path)
            .into_diagnostic()
            .wrap_err_with(|| format!("reading {}", path.display()))?;
        (path.display().to_string(), bytes)
    };
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(_) => {
            let mut sources = Sources::default();
            let id = sources.add(Source::new(name, ""));
            Err(Box::new(manifest::not_text(id).resolve(&sources)))
        }
    })
}
