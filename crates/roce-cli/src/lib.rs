//! The `roce` command-line front end: argument parsing, file IO, diagnostics rendering and exit codes.
//! The libraries (`roce-model`, `roce-render`, `roce-inspect`) hold the logic; this crate only connects
//! them to a terminal. The binaries `roce` and `kubectl-roce` call [`main`]; `roce-webhook`, the same
//! command line with the webhook server linked in, calls [`webhook_main`].

#![warn(clippy::too_many_lines)]

mod args;
mod cli;
mod commands;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod entry;
mod git;
mod io;
mod report;
mod text;
mod walk;

use std::process::ExitCode;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub use entry::c_main;

/// The process's `main` for `roce` and `kubectl-roce`: on glibc Linux the C symbol `main`, calling
/// [`c_main`] (the binary declares
/// `#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]`; docs/decisions.md,
/// "(startup-6)"), elsewhere and in a test harness std's `fn main` calling [`main`].
#[macro_export]
macro_rules! entry_point {
    () => {
        #[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
        #[allow(unsafe_code)] // `no_mangle`: this is the symbol the C runtime calls
        #[unsafe(no_mangle)]
        extern "C" fn main(
            _argc: ::std::ffi::c_int,
            _argv: *const *const ::std::ffi::c_char,
        ) -> ::std::ffi::c_int {
            $crate::c_main()
        }

        #[cfg(not(all(target_os = "linux", target_env = "gnu", not(test))))]
        fn main() -> ::std::process::ExitCode {
            $crate::main()
        }
    };
}

/// Run the command line in `std::env::args` and return the process exit code; `roce webhook` hands over
/// to the `roce-webhook` executable.
pub fn main() -> ExitCode {
    ExitCode::from(status())
}

/// [`main`]'s exit status as a number.
fn status() -> u8 {
    run(commands::webhook::exec_server)
}

/// [`main`], serving `roce webhook` in this process (the `roce-webhook` executable).
pub fn webhook_main() -> ExitCode {
    ExitCode::from(run(commands::webhook::serve))
}

fn run(webhook: commands::WebhookRunner) -> u8 {
    let (cli, color) = cli::Cli::parse_with_color();
    let out = report::Output::new(color);
    match commands::run(cli.command, &out, webhook) {
        Ok(code) => code.status(),
        Err(err) => {
            out.error(&err);
            commands::Exit::Problems.status()
        }
    }
}
