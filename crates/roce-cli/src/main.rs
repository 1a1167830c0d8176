//! `roce`: compile GPUDirect RDMA fabric profiles into Pods, Kustomize components, sbatch scripts,
//! Dockerfile ENV lines and dotenv files, and check them.

mod cli;
mod commands;
mod io;
mod report;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
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
