//! `roce apply` (not implemented yet).

use clap::Args;

use super::Exit;
use crate::report::Output;

/// Arguments of `roce apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {}

pub fn run(_args: ApplyArgs, _out: &Output) -> miette::Result<Exit> {
    miette::bail!("`roce apply` is not implemented yet")
}
