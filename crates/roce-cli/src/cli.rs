//! Command-line syntax (clap derive). Behaviour lives in `commands`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use roce_render::Target;

/// Compile GPUDirect RDMA fabric profiles (InfiniBand, RoCE) into Kubernetes, Slurm and container
/// artifacts, and check them.
#[derive(Debug, Parser)]
#[command(name = "roce", version, max_term_width = 100)]
pub(crate) struct Cli {
    /// When to colour diagnostics (NO_COLOR is respected by `auto`).
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    pub color: Color,
    #[command(subcommand)]
    pub command: Command,
}

/// Colour choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Color {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output format for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Rendered for people, with source snippets.
    Human,
    /// One JSON object on stdout.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the built-in profiles, or show one.
    Profiles(Lazy<ProfilesArgs>),
    /// Validate profiles: built-ins, a file, or a named profile.
    Check(Lazy<CheckArgs>),
    /// Compile a profile into a target's artifacts.
    Render(Lazy<Box<RenderArgs>>),
    /// Wire a profile's fabric into existing workload manifests.
    Apply(Lazy<crate::commands::apply::ApplyArgs>),
    /// Check hand-written manifests against a profile.
    Lint(Lazy<crate::commands::lint::LintArgs>),
    /// Read NCCL/UCX logs: did the job really use GPUDirect RDMA, and if not, why?
    Explain(Lazy<crate::commands::explain::ExplainArgs>),
    /// Probe this pod or node and say what will and won't work with a profile.
    Doctor(Lazy<crate::commands::doctor::DoctorArgs>),
    /// Set the fabric variables from what this pod got (devices, ports, GID index), then run the job.
    Exec(Lazy<crate::commands::exec::ExecArgs>),
    /// Find the bad nodes of a fleet: plan pairwise nccl-tests rounds, then report each bad node's cause.
    Sweep(Lazy<crate::commands::sweep::SweepArgs>),
    /// Compare two profiles in fabric terms.
    Diff(Lazy<crate::commands::diff::DiffArgs>),
    /// Serve a mutating admission webhook that wires `roce.dev/profile`-labelled objects (HTTPS).
    Webhook(Lazy<crate::commands::webhook::WebhookArgs>),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Print the JSON Schema of the YAML profile format (for editors' YAML language servers).
    Schema,
}

/// A subcommand's arguments that clap builds only when that subcommand is the one being run.
///
/// Building every subcommand's arguments up front (what the derive does) was a tenth of the instructions of
/// `roce render --target pod`, and most of its heap (docs/decisions.md, "(startup-2)"). Parsing defers each
/// with [`clap::Command::defer`], so only the subcommand named on the command line is built. The derive's own
/// `#[command(defer = true)]` would do the same, but it also defers the tree that completions and the man page
/// describe, which then differs (options in another order, no `help profiles show`); [`full_command`] builds
/// that tree eagerly, exactly as before. The `Args` structs carry no doc comment: a deferred one would replace
/// the variant's `about` when the subcommand is built.
#[derive(Debug)]
pub(crate) struct Lazy<T>(pub T);

/// Whether [`Lazy`] builds arguments at once: set only by [`full_command`].
static EAGER: AtomicBool = AtomicBool::new(false);

/// The whole command tree with every subcommand's arguments built (for completions and the man page).
pub(crate) fn full_command() -> clap::Command {
    EAGER.store(true, Ordering::Relaxed);
    Cli::command()
}

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        if EAGER.load(Ordering::Relaxed) {
            T::augment_args(cmd)
        } else {
            cmd.defer(T::augment_args)
        }
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        if EAGER.load(Ordering::Relaxed) {
            T::augment_args_for_update(cmd)
        } else {
            cmd.defer(T::augment_args_for_update)
        }
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

/// Parses a profile argument (any string: a built-in name or a path) and offers the built-in names to
/// help and shell completion.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProfileArg;

impl clap::builder::TypedValueParser for ProfileArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            roce_model::builtin::names().map(clap::builder::PossibleValue::new),
        ))
    }
}

// `roce profiles`.
#[derive(Debug, Args)]
pub(crate) struct ProfilesArgs {
    #[command(subcommand)]
    pub action: Option<ProfilesAction>,
}

// `roce profiles show NAME`.
#[derive(Debug, Subcommand)]
pub(crate) enum ProfilesAction {
    /// Print a built-in profile's source.
    Show {
        /// Built-in profile name, e.g. coreweave/gb300-roce.
        #[arg(value_parser = ProfileArg)]
        name: String,
        /// Print the profile written as YAML (the same model, without the KDL's comments) instead of
        /// its KDL source.
        #[arg(long)]
        yaml: bool,
    },
}

// `roce check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Profile files to check (KDL or YAML; `-` reads stdin as KDL unless --yaml).
    pub files: Vec<PathBuf>,
    /// A built-in profile name or a file. Without FILE or --profile every built-in is checked.
    #[arg(long, short, value_parser = ProfileArg)]
    pub profile: Option<String>,
    /// Read stdin as YAML.
    #[arg(long)]
    pub yaml: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

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
