//! `roce render`: compile a profile into a target's artifacts.

use std::path::{Path, PathBuf};

use clap::Args;
use roce_model::{Code, Problem};
use roce_render::exec::ExecWrap;
use roce_render::kustomize::Selector;
use roce_render::validation::ValidationOptions;
use roce_render::{RenderError, RenderOptions, SlurmOptions, Target, plan, render};

use super::Exit;
use crate::args::ProfileArg;
use crate::io::{load_profile, write_all};
use crate::report::Output;

// `roce render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// What to produce.
    #[arg(long, short, value_enum)]
    pub target: Target,
    /// A built-in profile name or a profile file.
    #[arg(long, short, default_value = roce_model::builtin::DEFAULT, value_parser = ProfileArg, hide_possible_values = true)]
    pub profile: String,
    /// Write the artifacts into this directory (required for multi-file targets).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Do not write: exit 1 and show a diff when the files in --output are stale.
    #[arg(long, requires = "output")]
    pub check: bool,
    /// Container that receives the wiring, default `main` (pod: its name; kustomize: the container
    /// patched in each selected workload, which must have one of that name).
    #[arg(long)]
    pub container: Option<String>,
    /// Container image for generated pods (validation jobs: unless given, the nccl-tests image for the
    /// profile's fabric).
    #[arg(long, default_value = roce_render::DEFAULT_IMAGE)]
    pub image: String,
    /// Name of generated objects (default: from the profile).
    #[arg(long)]
    pub name: Option<String>,
    /// Kustomize: workloads to patch, as `kind=Deployment,name=trainer` (repeatable).
    #[arg(long)]
    pub select: Vec<String>,
    /// Kustomize: workloads to patch, by label selector (`app=trainer`).
    #[arg(long)]
    pub selector: Option<String>,
    /// pod, kustomize, dockerfile: start the job behind `roce exec --profile PROFILE --`, which sets the
    /// fabric variables from the pod's devices (pod: the container's command, the job from --command;
    /// kustomize: put in front of each selected container's own `command`, and the build fails for one
    /// without a `command`; dockerfile: the ENTRYPOINT). PROFILE defaults to --profile when that is a
    /// built-in; give a profile file as its path in the image.
    #[arg(long, value_name = "PROFILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub exec: Option<String>,
    /// dockerfile: copy a static `roce` binary into the image (/usr/local/bin/roce).
    #[arg(long)]
    pub with_roce_binary: bool,
    /// Slurm options.
    #[command(flatten)]
    pub slurm: SlurmArgs,
    /// Validation job options.
    #[command(flatten)]
    pub validation: ValidationArgs,
}

// Validation job overrides (`nccl-tests-mpijob`, `nccl-tests-sbatch`, `ucx-perftest`). `--image` and `--nodes`
// apply to them too: the image defaults to the nccl-tests image for the profile's fabric, the nodes to the
// profile's `job nodes`, at least 2.
#[derive(Debug, Args)]
pub(crate) struct ValidationArgs {
    /// nccl-tests-*: the nccl-tests binary to run.
    #[arg(long, default_value = roce_render::validation::NCCL_TEST_BIN)]
    pub nccl_test: String,
    /// nccl-tests-*: its arguments, e.g. "-b 1G -e 16G -f 2 -g 1".
    #[arg(long, allow_hyphen_values = true, default_value = roce_render::validation::NCCL_TEST_ARGS)]
    pub nccl_test_args: String,
    /// ucx-perftest: the client's arguments (default "-t tag_bw -m cuda -s 16777216 -n 1000"; -m host when
    /// the profile pins UCX to TCP).
    #[arg(long, allow_hyphen_values = true)]
    pub ucx_perftest_args: Option<String>,
}

// sbatch overrides.
#[derive(Debug, Args)]
pub(crate) struct SlurmArgs {
    /// sbatch: --partition (default: the profile's).
    #[arg(long)]
    pub partition: Option<String>,
    /// sbatch: --nodes (default: the profile's `job nodes`, else 1); validation jobs: nodes to run across.
    #[arg(long)]
    pub nodes: Option<u32>,
    /// sbatch: --job-name.
    #[arg(long)]
    pub job_name: Option<String>,
    /// sbatch: --time.
    #[arg(long)]
    pub time: Option<String>,
    /// sbatch: --segment (NVL72 rack alignment, e.g. 16).
    #[arg(long)]
    pub segment: Option<u32>,
    /// sbatch: run the step with `srun --mpi=pmix`.
    #[arg(long)]
    pub mpi_pmix: bool,
    /// sbatch: the job step's command (default: the script's arguments); pod with --exec: the job's
    /// command line, run by `sh -c` behind `roce exec`.
    #[arg(long)]
    pub command: Option<String>,
    /// sbatch: a file whose contents replace the default `srun` step (your own job body).
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub body: Option<PathBuf>,
}

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
    let plan = plan::lower(&profile);
    let artifacts = match render(&plan, args.target, &opts) {
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
    let exit = match (&args.output, args.check) {
        (None, _) => {
            for (_, contents) in &files {
                crate::report::out(contents);
            }
            Exit::Ok
        }
        (Some(dir), true) => check_stale(dir, &files),
        (Some(dir), false) => {
            write_all(dir, &files)?;
            for (name, _) in &files {
                crate::report::errln!("wrote {}", dir.join(name).display());
            }
            Exit::Ok
        }
    };
    // Kept until the process ends, like clap's command tree (`Cli::parse_with_color`).
    std::mem::forget((profile, sources, plan, files));
    Ok(exit)
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
