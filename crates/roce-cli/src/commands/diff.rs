//! `roce diff` (not implemented yet).

use clap::Args;

use super::Exit;
use crate::report::Output;

/// Arguments of `roce diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {}

pub fn run(_args: DiffArgs, _out: &Output) -> miette::Result<Exit> {
    miette::bail!("`roce diff` is not implemented yet")
}
