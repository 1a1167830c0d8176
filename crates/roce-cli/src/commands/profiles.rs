//! `roce profiles [show NAME]`.

use roce_model::builtin;

use super::Exit;
use crate::cli::{ProfilesAction, ProfilesArgs};

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
