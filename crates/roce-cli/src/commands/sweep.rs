//! `roce sweep`: plan a fleet validation campaign, and report which nodes and links are bad and why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use miette::{Context, IntoDiagnostic};
use roce_inspect::sweep::{self, Expectation};
use roce_model::Profile;
use roce_render::sweep::{CAMPAIGN_FILE, Campaign, NodeList, RESULTS_DIR, Scheduler, SweepOptions};
use roce_render::validation::{NCCL_TEST_ARGS, NCCL_TEST_BIN, ValidationOptions};
use roce_render::{RenderOptions, SlurmOptions, plan};

use super::Exit;
use crate::io::{load_profile, write_all};
use crate::report::{Output, errln, outp};
use crate::walk;

// Arguments of `roce sweep`.
#[derive(Debug, Args)]
#[command(after_help = SWEEP_EXAMPLE)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    pub action: SweepAction,
}

// `roce sweep plan|report`.
#[derive(Debug, Subcommand)]
pub(crate) enum SweepAction {
    /// Plan a campaign: single-node checks, then rounds of pairwise nccl-tests on the user's scheduler.
    #[command(after_help = PLAN_EXAMPLE)]
    Plan(PlanArgs),
    /// Read a campaign's results: bad nodes, bad links, and the cause the logs show for each.
    #[command(after_help = REPORT_EXAMPLE)]
    Report(ReportArgs),
}

const SWEEP_EXAMPLE: &str = "Example:\n  roce sweep plan --profile coreweave/h100-ib --nodes 'gpu[001-128]' --scheduler slurm -o sweep/\n  \
sweep/run.sh\n  roce sweep report sweep/\n\nSee docs/sweep.md.";

const PLAN_EXAMPLE: &str = "Example:\n  kubectl get nodes -l node.kubernetes.io/instance-type=BM.GPU.H100.8 > nodes.txt\n  \
roce sweep plan --profile oci/h100-roce --nodes nodes.txt -o sweep/\n  sweep/run.sh && roce sweep report sweep/\n\n  \
roce sweep plan --profile coreweave/h100-ib --nodes 'gpu[001-128]' --scheduler slurm --partners 4 -o sweep/";

const REPORT_EXAMPLE: &str = "Example:\n  roce sweep report sweep/\n  roce sweep report sweep/ --format json | jq '.nodes[] | select(.verdict == \"bad\")'\n  \
roce sweep report sweep/ --format html -o sweep/report.html";

// `roce sweep plan`.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// A built-in profile name or a profile file.
    #[arg(long, short)]
    pub profile: String,
    /// The nodes: a file (one name per line, `kubectl get nodes` output, or Slurm host lists), `-` for
    /// stdin, or a Slurm host list expression such as `gpu[001-128]`.
    #[arg(long)]
    pub nodes: String,
    /// Distinct partners every node meets: the campaign takes this many rounds (one more for an odd count).
    #[arg(long, default_value_t = 3)]
    pub partners: u32,
    /// The scheduler the jobs are for.
    #[arg(long, value_enum, default_value_t = SchedulerArg::Kubernetes)]
    pub scheduler: SchedulerArg,
    /// Directory to write the campaign to.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Prefix of job names.
    #[arg(long, default_value = "sweep")]
    pub name: String,
    /// Minutes one test may take before it counts as hung.
    #[arg(long, default_value_t = 15)]
    pub time_limit: u32,
    /// Container image of the tests (default: the fabric's nccl-tests image).
    #[arg(long)]
    pub image: Option<String>,
    /// The nccl-tests binary.
    #[arg(long, default_value = NCCL_TEST_BIN)]
    pub nccl_test: String,
    /// Its arguments.
    #[arg(long, default_value = NCCL_TEST_ARGS, allow_hyphen_values = true)]
    pub nccl_test_args: String,
    /// Slurm partition (default: the profile's).
    #[arg(long)]
    pub partition: Option<String>,
    /// Print the campaign as JSON on stdout (`human` prints a summary).
    #[arg(long, value_enum, default_value_t = crate::args::Format::Human)]
    pub format: crate::args::Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchedulerArg {
    /// MPIJobs (Kubeflow MPI Operator) pinned to their nodes.
    Kubernetes,
    /// Batch scripts with one `srun` step per pair.
    Slurm,
}

// `roce sweep report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The campaign's directory (with campaign.json).
    pub dir: PathBuf,
    /// The profile (default: the campaign's, when it is a built-in): what the fleet is expected to do.
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Where the results are (default: DIR/results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// A table for people.
    Human,
    /// The JSON report (docs/sweep-report.schema.json).
    Json,
    /// A self-contained HTML page with a heatmap.
    Html,
}

pub(crate) fn run(args: SweepArgs, out: &Output) -> miette::Result<Exit> {
    match args.action {
        SweepAction::Plan(a) => plan_cmd(a, out),
        SweepAction::Report(a) => report_cmd(a, out),
    }
}

fn profile(spec: &str, out: &Output) -> miette::Result<Option<Profile>> {
    Ok(load_profile(spec, out)?.map(|(p, _)| p))
}

fn plan_cmd(args: PlanArgs, out: &Output) -> miette::Result<Exit> {
    let Some(profile) = profile(&args.profile, out)? else {
        return Ok(Exit::Problems);
    };
    let text = if args.nodes == "-" {
        std::io::read_to_string(std::io::stdin())
            .into_diagnostic()
            .wrap_err("reading the node list from stdin")?
    } else if Path::new(&args.nodes).is_file() {
        std::fs::read_to_string(&args.nodes)
            .into_diagnostic()
            .wrap_err_with(|| format!("reading {}", args.nodes))?
    } else {
        args.nodes.clone()
    };
    let nodes = NodeList::parse(&text).map_err(|e| {
        miette::miette!(
            help = "one node name per line, `kubectl get nodes` output, or a Slurm host list such as gpu[001-004,007]",
            "cannot read the node list {}: {e}",
            args.nodes
        )
    })?;
    let opts = SweepOptions {
        partners: args.partners,
        scheduler: match args.scheduler {
            SchedulerArg::Kubernetes => Scheduler::Kubernetes,
            SchedulerArg::Slurm => Scheduler::Slurm,
        },
        name: args.name.clone(),
        time_limit_min: args.time_limit,
    };
    let render = RenderOptions {
        slurm: SlurmOptions {
            partition: args.partition.clone(),
            ..SlurmOptions::default()
        },
        validation: ValidationOptions {
            image: args.image.clone(),
            nccl_test: args.nccl_test.clone(),
            nccl_test_args: args.nccl_test_args.clone(),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    let job = plan::lower(&profile);
    let campaign = Campaign::plan(&job, &nodes, &opts, &render)?;
    let files: Vec<(String, String)> = campaign
        .render(&job, &opts, &render)?
        .into_iter()
        .map(|a| (a.path, a.contents))
        .collect();
    write_all(&args.output, &files)?;
    make_executable(&args.output.join("run.sh"))?;
    let pairs: usize = campaign.rounds.iter().map(|r| r.pairs.len()).sum();
    match args.format {
        crate::args::Format::Json => outp!("{}", campaign.to_json()),
        crate::args::Format::Human => {
            errln!(
                "campaign: {} node(s) ({} left out), {} single-node check(s), {} round(s) of {} pair(s) in all, each node with {} partner(s)",
                campaign.nodes.len(),
                campaign.excluded.len(),
                campaign.checks.len(),
                campaign.rounds.len(),
                pairs,
                campaign
                    .partners
                    .min(campaign.nodes.len().saturating_sub(1) as u32)
            );
            for (name, why) in &campaign.excluded {
                errln!("  left out {name}: {why}");
            }
            errln!("wrote {} file(s) to {}", files.len(), args.output.display());
            errln!(
                "run it: {}/run.sh   then: roce sweep report {}",
                args.output.display(),
                args.output.display()
            );
        }
    }
    Ok(Exit::Ok)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> miette::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .into_diagnostic()
        .wrap_err_with(|| format!("making {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> miette::Result<()> {
    Ok(())
}

fn report_cmd(args: ReportArgs, out: &Output) -> miette::Result<Exit> {
    let file = args.dir.join(CAMPAIGN_FILE);
    let text = std::fs::read_to_string(&file)
        .into_diagnostic()
        .wrap_err_with(|| {
            format!(
                "reading {} (written by `roce sweep plan -o DIR`)",
                file.display()
            )
        })?;
    let campaign: Campaign = serde_json::from_str(&text)
        .into_diagnostic()
        .wrap_err_with(|| format!("reading {}", file.display()))?;
    if campaign.schema != roce_render::sweep::CAMPAIGN_SCHEMA {
        miette::bail!(
            help = "plan the campaign again with this roce",
            "{} is a campaign of schema {:?}; this roce reads {:?}",
            file.display(),
            campaign.schema,
            roce_render::sweep::CAMPAIGN_SCHEMA
        );
    }
    let spec = args.profile.clone().or_else(|| {
        roce_model::builtin::source(&campaign.profile).map(|_| campaign.profile.clone())
    });
    let expect = match &spec {
        Some(spec) => match profile(spec, out)? {
            Some(p) => Expectation::of(&p),
            None => return Ok(Exit::Problems),
        },
        None => {
            errln!(
                "note: {} is not a built-in profile; give --profile FILE to compare with its expected bandwidth",
                campaign.profile
            );
            Expectation::default()
        }
    };
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| args.dir.join(RESULTS_DIR));
    let captures = captures(&campaign, &results)?;
    let jobs: HashMap<&str, &str> = campaign
        .checks
        .iter()
        .map(|c| (c.output.as_str(), c.job.as_str()))
        .chain(
            campaign
                .rounds
                .iter()
                .flat_map(|r| r.pairs.iter().map(|p| (p.output.as_str(), p.job.as_str()))),
        )
        .collect();
    let tests = sweep::read_all(&campaign, &expect, |path| {
        std::fs::read(results.join(path))
            .ok()
            .or_else(|| jobs.get(path).and_then(|j| captures.get(*j)).cloned())
    });
    let report = sweep::judge(&campaign, tests, &expect);
    let text = match args.format {
        ReportFormat::Human => report.to_text(),
        ReportFormat::Json => {
            let mut s = serde_json::to_string_pretty(&report.to_json()).into_diagnostic()?;
            s.push('\n');
            s
        }
        ReportFormat::Html => sweep::to_html(&report, &campaign),
    };
    match &args.output {
        Some(path) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "report".into());
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            write_all(dir, &[(name, text)])?;
            errln!("wrote {}", path.display());
        }
        None => outp!("{text}"),
    }
    let c = &report.counts;
    Ok(
        if c.bad + c.suspect + c.bad_links > 0 || report.fleet.cause.is_some() {
            Exit::Problems
        } else {
            Exit::Ok
        },
    )
}

/// `kubectl logs --prefix` captures among the results: files the campaign did not name, whose lines start
/// with `[pod/POD/CONTAINER] `. Each launcher pod's lines, prefix cut, by the job the pod belongs to
/// (`JOB-launcher-xxxxx`).
fn captures(campaign: &Campaign, results: &Path) -> miette::Result<HashMap<String, Vec<u8>>> {
    let planned: std::collections::HashSet<PathBuf> =
        campaign.outputs().map(|(p, _)| results.join(p)).collect();
    let mut by_job: HashMap<String, Vec<u8>> = HashMap::new();
    if !results.is_dir() {
        return Ok(by_job);
    }
    for path in walk::files(&[results.to_path_buf()], walk::any).into_diagnostic()? {
        if planned.contains(&path) {
            continue;
        }
        let bytes = std::fs::read(&path).into_diagnostic()?;
        for line in bytes.split(|b| *b == b'\n') {
            let Some(rest) = line.strip_prefix(b"[pod/") else {
                continue;
            };
            let Some(close) = memchr_close(rest) else {
                continue;
            };
            let pod = String::from_utf8_lossy(&rest[..close]);
            let pod = pod.split('/').next().unwrap_or_default();
            let Some(at) = pod.rfind("-launcher") else {
                continue;
            };
            let job = &pod[..at];
            let body = rest[close + 1..]
                .strip_prefix(b" ")
                .unwrap_or(&rest[close + 1..]);
            let buf = by_job.entry(job.to_string()).or_default();
            buf.extend_from_slice(body);
            buf.push(b'\n');
        }
    }
    Ok(by_job)
}

fn memchr_close(b: &[u8]) -> Option<usize> {
    b.iter().position(|c| *c == b']')
}
