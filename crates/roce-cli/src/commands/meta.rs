//! `roce completions`, `roce man`, `roce schema`: files other tools read about roce.

use super::Exit;
use crate::cli::full_command;
use crate::report::out;

pub(super) fn completions(shell: clap_complete::Shell) -> miette::Result<Exit> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut full_command(), "roce", &mut buf);
    out(&String::from_utf8_lossy(&buf));
    Ok(Exit::Ok)
}

pub(super) fn man() -> miette::Result<Exit> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(full_command())
        .render(&mut buf)
        .map_err(|e| miette::miette!("rendering the man page: {e}"))?;
    out(&String::from_utf8_lossy(&buf));
    Ok(Exit::Ok)
}

pub(super) fn schema() -> miette::Result<Exit> {
    out(&roce_model::profile_schema());
    Ok(Exit::Ok)
}
