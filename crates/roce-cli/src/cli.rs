//! Command-line syntax (clap derive). Behaviour lives in `commands`.

use std::sync::atomic::{AtomicBool, Ordering};

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::args::Color;

/// Compile GPUDirect RDMA fabric profiles (InfiniBand, RoCE) into Kubernetes, Slurm and container
/// artifacts, and check them.
#[derive(Debug, Parser)]
#[command(name = "roce", version, max_term_width = 100, arg = color_arg().global(false))]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// What `Cli::parse()` does, and the `--color` in effect.
    pub(crate) fn parse_with_color() -> (Self, Color) {
        let mut command = Self::command();
        let mut matches = command
            .try_get_matches_from_mut(std::env::args_os())
            .unwrap_or_else(|e| e.exit());
        // The command tree lives until the process ends: freeing its few hundred allocations one by one
        // was a twentieth of a short command's instructions (docs/decisions.md, "(startup-5)").
        std::mem::forget(command);
        // A `--color` given after the subcommand (whose copy is global) clap has copied up to here.
        let color = matches
            .get_one::<Color>("color")
            .copied()
            .unwrap_or(Color::Auto);
        match Self::from_arg_matches_mut(&mut matches) {
            Ok(cli) => (cli, color),
            Err(e) => e.format(&mut Self::command()).exit(),
        }
    }
}

/// `--color`, on the top level and on each subcommand.
///
/// clap's `global` would give every subcommand a copy, but it makes the copies when the top level is
/// built, at every start, for all fourteen subcommands: a tenth of clap's instructions and a third of the
/// start's heap (docs/decisions.md, "(startup-4)"). So the top level's is not global, and each subcommand
/// adds its own when it is built ([`Lazy`], and the three subcommands without arguments); those are global
/// (for `profiles show`, and so that clap copies a value given there up to the top level). Display order 0
/// and the place after the subcommand's own arguments are where the propagated copy stood, so help,
/// completions and the man page are unchanged.
pub(crate) fn color_arg() -> clap::Arg {
    clap::Arg::new("color")
        .long("color")
        .value_name("COLOR")
        .value_parser(clap::value_parser!(Color))
        .default_value("auto")
        .help("When to colour diagnostics (NO_COLOR is respected by `auto`)")
        .global(true)
        .display_order(0)
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the built-in profiles, or show one.
    Profiles(Lazy<crate::commands::profiles::ProfilesArgs>),
    /// Validate profiles: built-ins, a file, or a named profile.
    Check(Lazy<crate::commands::check::CheckArgs>),
    /// Compile a profile into a target's artifacts.
    Render(Lazy<Box<crate::commands::render::RenderArgs>>),
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
    #[command(arg = color_arg())]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    #[command(arg = color_arg())]
    Man,
    /// Print the JSON Schema of the YAML profile format (for editors' YAML language servers).
    #[command(arg = color_arg())]
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
            with_color::<T>(cmd)
        } else {
            cmd.defer(with_color::<T>)
        }
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        if EAGER.load(Ordering::Relaxed) {
            with_color_for_update::<T>(cmd)
        } else {
            cmd.defer(with_color_for_update::<T>)
        }
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

/// A subcommand's own arguments, then its `--color` ([`color_arg`]).
fn with_color<T: Args>(cmd: clap::Command) -> clap::Command {
    T::augment_args(cmd).arg(color_arg())
}

/// [`with_color`] for `update_from_arg_matches`.
fn with_color_for_update<T: Args>(cmd: clap::Command) -> clap::Command {
    T::augment_args_for_update(cmd).arg(color_arg())
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
