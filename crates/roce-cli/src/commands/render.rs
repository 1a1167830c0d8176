//! `roce render`: compile a profile into a target's artifacts.

use std::path::Path;

use roce_model::{Code, Problem};
use roce_render::exec::ExecWrap;
use roce_render::kustomize::Selector;
use roce_render::validation::ValidationOptions;
use roce_render::{RenderError, RenderOptions, SlurmOptions, plan, render};

use super::Exit;
use crate::cli::RenderArgs;
use crate::io::{load_profile, write_all};
use crate::report::Output;

pub(super) fn run(args: RenderArgs, out: &Output) -> miette::Result<Exit> {
    let Some((profile, sources)) = load_profile(&args.profile, out)? else {
        return Ok(Exit::Problems);
    };
    if args.target.multi_file() && args.output.is_none() {
        crate::report::errln!(
            "error: the {} target writes several files; give an output directory with -o DIR",
            args.target
        );
        return Ok(Exit::Usage);
    }
    let opts = options(&args)?;
    let artifacts = match render(&plan::lower(&profile), args.target, &opts) {
        Ok(a) => a,
        Err(RenderError::Unrepresentable {
            name,
            value,
            why,
            origin: Some(origin),
        }) => {
            let problem = Problem::new(
                Code::Unrepresentable,
                format!(
                    "{name}={value:?} cannot be written safely in the {} target: {why}",
                    args.target
                ),
            )
            .at(origin, "set here")
            .help("change the value; docs/targets.md lists what each target can carry")
            .resolve(&sources);
            out.problems(&[problem]);
            return Ok(Exit::Problems);
        }
        Err(other) => return Err(other.into()),
    };
    let files: Vec<(String, String)> = artifacts
        .into_iter()
        .map(|a| (a.path, a.contents))
        .collect();
    match (&args.output, args.check) {
        (None, _) => {
            for (_, contents) in &files {
                crate::report::outp!("{contents}");
            }
            Ok(Exit::Ok)
        }
        (Some(dir), true) => Ok(check_stale(dir, &files)),
        (Some(dir), false) => {
            write_all(dir, &files)?;
            for (name, _) in &files {
                crate::report::errln!("wrote {}", dir.join(name).display());
            }
            Ok(Exit::Ok)
        }
    }
}

fn options(args: &RenderArgs) -> miette::Result<RenderOptions> {
    let mut select = Vec::new();
    for s in &args.select {
        let mut sel = Selector::default();
        for part in s.split(',') {
            match part.split_once('=') {
                Some(("kind", v)) => sel.kind = Some(v.to_string()),
                Some(("name", v)) => sel.name = Some(v.to_string()),
                _ => miette::bail!(
                    help = "write --select kind=Deployment,name=trainer, or use --selector app=trainer",
                    "cannot read --select `{s}`"
                ),
            }
        }
        select.push(sel);
    }
    if let Some(labels) = &args.selector {
        select.push(Selector {
            label_selector: Some(labels.clone()),
            ..Selector::default()
        });
    }
    let s = &args.slurm;
    Ok(RenderOptions {
        container: args
            .container
            .clone()
            .unwrap_or_else(|| RenderOptions::default().container),
        image: args.image.clone(),
        name: args.name.clone(),
        select,
        slurm: SlurmOptions {
            partition: s.partition.clone(),
            nodes: s.nodes,
            nodelist: None,
            job_name: s.job_name.clone(),
            time: s.time.clone(),
            segment: s.segment,
            mpi_pmix: s.mpi_pmix,
            command: s.command.clone(),
            body: match &s.body {
                Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                    miette::miette!(
                        help = "--body takes a text file of shell commands that replaces the srun step",
                        "cannot read --body {}: {e}",
                        path.display()
                    )
                })?),
                None => None,
            },
        },
        validation: ValidationOptions {
            // `--image` keeps its Pod default unless given; validation jobs then pick the fabric's image.
            image: (args.image != roce_render::DEFAULT_IMAGE).then(|| args.image.clone()),
            nodes: s.nodes,
            nccl_test: args.validation.nccl_test.clone(),
            nccl_test_args: args.validation.nccl_test_args.clone(),
            ucx_perftest_args: args.validation.ucx_perftest_args.clone(),
        },
        exec: match args.exec.as_deref() {
            None => None,
            Some(profile) => Some(ExecWrap {
                profile: exec_profile(profile, &args.profile)?,
                command: args.slurm.command.clone(),
            }),
        },
        with_roce_binary: args.with_roce_binary,
    })
}

/// The profile `roce exec` names in the container: the one given to `--exec=`, else `--profile` when it is
/// a built-in (a file on this machine is not in the image).
pub(crate) fn exec_profile(given: &str, profile: &str) -> miette::Result<String> {
    if !given.is_empty() {
        return Ok(given.to_string());
    }
    if roce_model::builtin::source(profile).is_some() {
        return Ok(profile.to_string());
    }
    miette::bail!(
        help = "copy the profile file into the image and give its path there: --exec=/etc/roce/profile.kdl",
        "--exec: `{profile}` is not a built-in profile, so `roce exec` in the container cannot find it by that name"
    )
}

/// Compare rendered files with what is on disk; print a unified diff for each stale one.
fn check_stale(dir: &Path, files: &[(String, String)]) -> Exit {
    let mut stale = 0;
    for (name, want) in files {
        let path = dir.join(name);
        let Ok(have) = std::fs::read_to_string(&path) else {
            stale += 1;
            crate::report::errln!("missing: {}", path.display());
            continue;
        };
        if &have != want {
            stale += 1;
            let diff = similar::TextDiff::from_lines(&have, want);
            crate::report::outp!(
                "{}",
                diff.unified_diff().header(
                    &path.display().to_string(),
                    &format!("{} (rendered)", path.display())
                )
            );
        }
    }
    if stale == 0 {
        crate::report::errln!("up to date: {} file(s) in {}", files.len(), dir.display());
        Exit::Ok
    } else {
        crate::report::errln!(
            "stale: {stale} of {} file(s) in {} differ; re-run without --check to update",
            files.len(),
            dir.display()
        );
        Exit::Problems
    }
}
