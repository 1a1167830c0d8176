//! `roce webhook`: serve the mutating admission webhook (crates/roce-webhook, docs/cluster.md).
//!
//! The server (tokio, hyper, rustls) is linked only into the `roce-webhook` executable, which is the whole
//! command line plus the server; `roce` and `kubectl-roce` hand `roce webhook` over to it with `exec`, so
//! every other command starts without loading it (docs/decisions.md, "(startup-3)").

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use roce_webhook::{Config, OnError};

use super::Exit;
use crate::report::errln;

/// What to do with an object whose profile cannot be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnErrorArg {
    /// Deny it (`allowed: false`, the diagnostics as the message).
    Deny,
    /// Admit it unchanged, with the diagnostics as warnings.
    Allow,
}

// Arguments of `roce webhook`.
#[derive(Debug, Args)]
pub(crate) struct WebhookArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:8443", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// PEM certificate chain (re-read when it changes).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: PathBuf,
    /// PEM private key (re-read when it changes).
    #[arg(long, value_name = "FILE")]
    pub tls_key: PathBuf,
    /// A directory of profile files (`NAME.kdl`, `NAME.yaml`; a mounted ConfigMap), besides the
    /// built-ins; re-read when it changes. A file wins over a built-in of the same name.
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// An unknown or invalid profile: deny the object, or allow it unchanged with a warning.
    #[arg(long, value_enum, default_value_t = OnErrorArg::Deny)]
    pub on_error: OnErrorArg,
    /// Largest request body, in bytes (413 above it).
    #[arg(long, default_value_t = 3 * 1024 * 1024, value_name = "BYTES")]
    pub max_body: usize,
    /// Seconds allowed for a TLS handshake, a request head, and reading and answering a request.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub timeout: u64,
    /// Seconds between checks of the profile directory and the certificate files.
    #[arg(long, default_value_t = 2, value_name = "SECONDS")]
    pub poll: u64,
    /// Seconds in-flight requests may take to finish after SIGTERM.
    #[arg(long, default_value_t = 20, value_name = "SECONDS")]
    pub grace: u64,
    /// No per-request JSON log lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Serve in this process: the `roce-webhook` executable's `roce webhook`.
pub(crate) fn serve(args: WebhookArgs) -> miette::Result<Exit> {
    let mut config = Config::new(args.listen, args.tls_cert, args.tls_key);
    config.profiles = args.profiles;
    config.on_error = match args.on_error {
        OnErrorArg::Deny => OnError::Deny,
        OnErrorArg::Allow => OnError::Allow,
    };
    config.body_limit = args.max_body;
    config.request_timeout = Duration::from_secs(args.timeout.max(1));
    config.poll_interval = Duration::from_secs(args.poll.max(1));
    config.shutdown_grace = Duration::from_secs(args.grace);
    config.log = !args.quiet;
    match roce_webhook::serve(config) {
        Ok(()) => Ok(Exit::Ok),
        Err(e) => {
            errln!("error: {e}");
            Ok(Exit::Problems)
        }
    }
}

/// The executable that serves: `roce-webhook` next to this one (what `cargo install` and `cargo build`
/// put there), else the first on `PATH`.
const SERVER: &str = "roce-webhook";

/// `roce webhook` in `roce` and `kubectl-roce`: replace this process with `roce-webhook` and the same
/// arguments (clap has already checked them, with the same definitions), keeping the PID, so signals and
/// the exit status are the server's own.
pub(crate) fn exec_server(_args: WebhookArgs) -> miette::Result<Exit> {
    let program = std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name(format!("{SERVER}{}", std::env::consts::EXE_SUFFIX)))
        .filter(|sibling| sibling.is_file())
        .map_or_else(|| SERVER.into(), std::ffi::OsString::from);
    let mut argv = std::env::args_os();
    let mut cmd = std::process::Command::new(&program);
    if let Some(arg0) = argv.next() {
        // The same program name in usage lines and errors as the command the user typed.
        cmd.arg0(arg0);
    }
    cmd.args(argv);
    // `exec` only returns when the program could not be started.
    let err = cmd.exec();
    Err(miette::miette!(
        help = "`roce webhook` runs the `roce-webhook` executable, built and installed with `roce` \
                (`cargo install` installs both; `cargo build --release --bin roce-webhook`); put it next to \
                `roce` or on PATH, or run `roce-webhook webhook …` directly",
        "cannot start {}: {err}",
        std::path::Path::new(&program).display()
    ))
}
