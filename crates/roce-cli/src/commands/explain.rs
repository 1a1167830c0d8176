//! `roce explain` (not implemented yet).

use clap::Args;

use super::Exit;
use crate::report::Output;

/// Arguments of `roce explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {}

pub fn run(_args: ExplainArgs, _out: &Output) -> miette::Result<Exit> {
    miette::bail!("`roce explain` is not implemented yet")
}
