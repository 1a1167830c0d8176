//! One module per subcommand; each returns how the process should exit.

pub(crate) mod apply;
pub(crate) mod check;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod exec;
pub(crate) mod explain;
pub(crate) mod lint;
mod meta;
pub(crate) mod profiles;
pub(crate) mod render;
pub(crate) mod sweep;
pub(crate) mod webhook;

use crate::cli::{Command, Lazy};
use crate::report::Output;

/// Exit statuses: 0 success, 1 problems (or a stale `--check`), 2 usage errors (clap's own); `roce exec`
/// also 126 and 127 for a command it cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Nothing wrong.
    Ok,
    /// Errors were found, or outputs are stale.
    Problems,
    /// The command line was wrong.
    Usage,
    /// A status of its own (`roce exec`: 126, 127, as a shell).
    Status(u8),
}

impl Exit {
    /// The process's exit status.
    pub(crate) fn status(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Problems => 1,
            Exit::Usage => 2,
            Exit::Status(s) => s,
        }
    }
}

/// How `roce webhook` runs: [`webhook::serve`] in `roce-webhook`, [`webhook::exec_server`] elsewhere.
/// Passed in, not matched on, so an executable links only the one it names.
pub(crate) type WebhookRunner = fn(webhook::WebhookArgs) -> miette::Result<Exit>;

/// Run a subcommand.
pub(crate) fn run(command: Command, out: &Output, webhook: WebhookRunner) -> miette::Result<Exit> {
    match command {
        Command::Profiles(Lazy(args)) => profiles::run(args),
        Command::Check(Lazy(args)) => check::run(args, out),
        Command::Render(Lazy(args)) => render::run(*args, out),
        Command::Apply(Lazy(args)) => apply::run(args, out),
        Command::Lint(Lazy(args)) => lint::run(args, out),
        Command::Explain(Lazy(args)) => explain::run(args, out),
        Command::Doctor(Lazy(args)) => doctor::run(args, out),
        Command::Exec(Lazy(args)) => exec::run(args, out),
        Command::Diff(Lazy(args)) => diff::run(args, out),
        Command::Sweep(Lazy(args)) => sweep::run(args, out),
        Command::Webhook(Lazy(args)) => webhook(args),
        Command::Completions { shell } => meta::completions(shell),
        Command::Man => meta::man(),
        Command::Schema => meta::schema(),
    }
}
