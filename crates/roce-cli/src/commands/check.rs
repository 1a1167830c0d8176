//! `roce check`: validate profiles and report every problem.

use std::path::PathBuf;

use clap::Args;
use roce_model::{Problem, builtin, load};

use super::Exit;
use crate::args::{Format, ProfileArg};
use crate::io::{FileResolver, read_profile};
use crate::report::{Output, json};

// `roce check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Profile files to check (KDL or YAML; `-` reads stdin as KDL unless --yaml).
    pub files: Vec<PathBuf>,
    /// A built-in profile name or a file. Without FILE or --profile every built-in is checked.
    #[arg(long, short, value_parser = ProfileArg)]
    pub profile: Option<String>,
    /// Read stdin as YAML.
    #[arg(long)]
    pub yaml: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub(super) fn run(args: CheckArgs, out: &Output) -> miette::Result<Exit> {
    let mut specs: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    specs.extend(args.profile.clone());
    if specs.is_empty() {
        specs = builtin::names().map(String::from).collect();
    }
    let mut problems: Vec<Problem> = Vec::new();
    for spec in &specs {
        match read_profile(spec, args.yaml)? {
            Ok(source) => problems.extend(load(source, &FileResolver).problems),
            Err(problem) => problems.push(*problem),
        }
    }
    let failed = problems.iter().any(Problem::is_error);
    match args.format {
        Format::Json => crate::report::outln!("{}", json(&problems)),
        Format::Human => {
            out.problems(&problems);
            if !failed {
                let warnings = problems.len();
                let what = if specs.len() == 1 {
                    specs[0].clone()
                } else {
                    format!("{} profiles", specs.len())
                };
                crate::report::errln!(
                    "ok: {what}{}",
                    if warnings > 0 {
                        format!(" ({warnings} warning(s))")
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    Ok(if failed { Exit::Problems } else { Exit::Ok })
}
