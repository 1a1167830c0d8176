//! `roce doctor` (not implemented yet).

use clap::Args;

use super::Exit;
use crate::report::Output;

/// Arguments of `roce doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {}

pub fn run(_args: DoctorArgs, _out: &Output) -> miette::Result<Exit> {
    miette::bail!("`roce doctor` is not implemented yet")
}
