//! The `roce` command-line front end: argument parsing, file IO, diagnostics rendering and exit codes.
//! The libraries (`roce-model`, `roce-render`, `roce-inspect`) hold the logic; this crate only connects
//! them to a terminal. Both binaries, `roce` and `kubectl-roce`, call [`main`].

mod cli;
mod commands;
mod git;
mod io;
mod report;
mod text;

use std::process::ExitCode;

use clap::Parser;

/// Run the command line in `std::env::args` and return the process exit code.
pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let out = report::Output::new(cli.color);
    match commands::run(cli.command, &out) {
        Ok(code) => code.into(),
        Err(err) => {
            out.error(&err);
            commands::Exit::Problems.into()
        }
    }
}
