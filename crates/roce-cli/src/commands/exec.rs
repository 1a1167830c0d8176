//! `roce exec`: set the fabric variables from what this pod actually got, then become the job.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use clap::Args;
use roce_inspect::doctor::{Env, Root, facts};
use roce_inspect::exec::{self, Launch, Options};
use roce_model::load;
use roce_render::plumbing::quote;

use super::Exit;
use crate::args::{Format, ProfileArg};
use crate::io::{FileResolver, read_profile};
use crate::report::{Output, errln, outln};

// Arguments of `roce exec`.
#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// The profile (a built-in name or a file in the image).
    #[arg(long, short, default_value = roce_model::builtin::DEFAULT, value_parser = ProfileArg, hide_possible_values = true)]
    pub profile: String,
    /// Read the devices, ports and GID tables under DIR instead of `/` (for tests; the environment is
    /// still this process's, which the command inherits).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print the decisions and the resulting environment on stdout and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Start the command even when the pod does not meet the profile (no RDMA devices, too few rails,
    /// no usable GID), with what is present.
    #[arg(long)]
    pub allow_degraded: bool,
    /// --dry-run output format.
    #[arg(long, value_enum, default_value_t = Format::Human, requires = "dry_run")]
    pub format: Format,
    /// The command to run, after `--`; it replaces roce (same process, its exit status and signals are
    /// the job's).
    #[arg(last = true, value_name = "CMD", required_unless_present = "dry_run")]
    pub command: Vec<OsString>,
}

pub(crate) fn run(args: ExecArgs, out: &Output) -> miette::Result<Exit> {
    if args.profile == "-" {
        errln!(
            "error: `roce exec` cannot read its profile from stdin, which belongs to the command; give a built-in name or a file"
        );
        return Ok(Exit::Usage);
    }
    let loaded = match read_profile(&args.profile, false)? {
        Ok(source) => load(source, &FileResolver),
        Err(problem) => {
            out.problems(&[*problem]);
            return Ok(Exit::Problems);
        }
    };
    let Some(profile) = loaded.profile.as_ref().filter(|_| !loaded.has_errors()) else {
        out.problems(&loaded.problems);
        return Ok(Exit::Problems);
    };
    let root = match &args.root {
        Some(dir) if !dir.is_dir() => miette::bail!(
            help = "give the directory that stands for `/`",
            "--root {}: not a directory",
            dir.display()
        ),
        Some(dir) => Root::new(dir),
        None => Root::new("/"),
    };
    // The command inherits this process's environment, so that is the one whose variables win.
    let facts = facts::collect(&root, Some(Env::process()));
    let mut launch = exec::decide(
        &facts,
        profile,
        Options {
            allow_degraded: args.allow_degraded,
        },
    );
    launch.problems = std::mem::take(&mut launch.problems)
        .into_iter()
        .map(|p| p.resolve(&loaded.sources))
        .collect();

    if args.dry_run {
        match args.format {
            Format::Json => {
                let mut v = serde_json::to_value(&launch).expect("a launch serialises");
                v["command"] = args
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                // The problems are in the object; nothing on stderr.
                outln!("{v}");
            }
            Format::Human => {
                outln!("{}", dry_run(&launch, &args.command));
                out.problems(&launch.problems);
            }
        }
        return Ok(if launch.can_start() {
            Exit::Ok
        } else {
            Exit::Problems
        });
    }

    errln!("roce exec: {}", launch.summary());
    if let Some(line) = launch.nic_source.line() {
        errln!("roce exec: {line}");
    }
    if !launch.can_start() {
        out.problems(&launch.problems);
        return Ok(Exit::Problems);
    }
    for d in &launch.decisions {
        errln!("roce exec: {d}");
    }
    out.problems(&launch.problems);
    let (program, rest) = args
        .command
        .split_first()
        .expect("clap requires a command without --dry-run");
    let mut cmd = Command::new(program);
    cmd.args(rest).envs(&launch.env);
    // `exec` only returns when the command could not be started.
    let err = cmd.exec();
    let (problem, status) = exec::command_failure(program, &err);
    out.problems(&[problem]);
    Ok(Exit::Status(status))
}

/// The `--dry-run` text: the decisions as `#` comments, then the environment as `NAME=value` lines a POSIX
/// shell can source (`set -a; . ./file`), then the command.
fn dry_run(launch: &Launch, command: &[OsString]) -> String {
    let mut s = format!("# roce exec --dry-run: {}\n", launch.summary());
    if let Some(line) = launch.nic_source.line() {
        s.push_str(&format!("# {line}\n"));
    }
    for d in &launch.decisions {
        s.push_str(&format!("# {d}\n"));
    }
    for (k, v) in &launch.env {
        match quote::shell_single(v) {
            Ok(q) => s.push_str(&format!("{k}={q}\n")),
            Err(_) => s.push_str(&format!(
                "# {k}: a value with control characters, not shown\n"
            )),
        }
    }
    if command.is_empty() {
        s.push_str("# no command given: nothing would run");
    } else {
        let words: Vec<String> = command
            .iter()
            .map(|a| {
                let a = a.to_string_lossy();
                quote::shell_single(&a).unwrap_or_else(|_| format!("{a:?}"))
            })
            .collect();
        s.push_str(&format!("# would run: {}", words.join(" ")));
    }
    s
}
