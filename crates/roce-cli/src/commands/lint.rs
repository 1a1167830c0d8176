//! `roce lint` (not implemented yet).

use clap::Args;

use super::Exit;
use crate::report::Output;

/// Arguments of `roce lint`.
#[derive(Debug, Args)]
pub struct LintArgs {}

pub fn run(_args: LintArgs, _out: &Output) -> miette::Result<Exit> {
    miette::bail!("`roce lint` is not implemented yet")
}
