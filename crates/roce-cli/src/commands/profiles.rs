//! `roce profiles [show NAME]`.

use clap::{Args, Subcommand};
use roce_model::builtin;

use super::Exit;
use crate::args::ProfileArg;

// `roce profiles`.
#[derive(Debug, Args)]
pub(crate) struct ProfilesArgs {
    #[command(subcommand)]
    pub action: Option<ProfilesAction>,
}

// `roce profiles show NAME`.
#[derive(Debug, Subcommand)]
pub(crate) enum ProfilesAction {
    /// Print a built-in profile's source.
    Show {
        /// Built-in profile name, e.g. coreweave/gb300-roce.
        #[arg(value_parser = ProfileArg)]
        name: String,
        /// Print the profile written as YAML (the same model, without the KDL's comments) instead of
        /// its KDL source.
        #[arg(long)]
        yaml: bool,
    },
}

pub(super) fn run(args: ProfilesArgs) -> miette::Result<Exit> {
    match args.action {
        None => {
            for name in builtin::names() {
                crate::report::outln!("{name}");
            }
            Ok(Exit::Ok)
        }
        Some(ProfilesAction::Show { name, yaml }) => {
            let text = if yaml {
                builtin::yaml(&name)
            } else {
                builtin::source(&name).map(|s| s.text.to_string())
            };
            match text {
                Some(text) => {
                    crate::report::outp!("{text}");
                    Ok(Exit::Ok)
                }
                None => {
                    let names: Vec<&str> = builtin::names().collect();
                    let hint = roce_model::plumbing::suggest::help(&name, &names);
                    miette::bail!(help = hint, "no built-in profile named `{name}`")
                }
            }
        }
    }
}
