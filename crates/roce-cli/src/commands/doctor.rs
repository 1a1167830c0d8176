//! `roce doctor`: probe this pod or node (read-only) and compare it with a profile.

use std::path::PathBuf;

use clap::Args;
use roce_inspect::doctor::{self, Env, Report, Root, Seen, facts::Limit};
use roce_model::fabric::dra::IMEX_CHANNELS_DIR;
use roce_model::{Problem, load};

use super::Exit;
use crate::args::Format;
use crate::io::{FileResolver, read_profile};
use crate::report::{Output, errln, outln};

// Arguments of `roce doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Compare with this profile (a built-in name or a file); without it only the host is checked.
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Read the host's files under DIR instead of `/` (and the environment from DIR/proc/self/environ).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub(crate) fn run(args: DoctorArgs, out: &Output) -> miette::Result<Exit> {
    let loaded = match &args.profile {
        Some(spec) => match read_profile(spec, false)? {
            Ok(source) => {
                let loaded = load(source, &FileResolver);
                if loaded.has_errors() {
                    return Ok(profile_failed(&loaded.problems, args.format, out));
                }
                Some(loaded)
            }
            Err(problem) => return Ok(profile_failed(&[*problem], args.format, out)),
        },
        None => None,
    };
    let (root, env) = match &args.root {
        Some(dir) => {
            if !dir.is_dir() {
                miette::bail!(
                    help = "give the directory that stands for `/`",
                    "--root {}: not a directory",
                    dir.display()
                );
            }
            (Root::new(dir), None)
        }
        None => (Root::new("/"), Some(Env::process())),
    };
    let profile = loaded.as_ref().and_then(|l| l.profile.as_ref());
    let mut report = doctor::probe(&root, env, profile);
    if let Some(l) = &loaded {
        report.findings = report
            .findings
            .into_iter()
            .map(|p| p.resolve(&l.sources))
            .collect();
    }
    match args.format {
        Format::Json => outln!("{}", report.to_json()),
        Format::Human => {
            outln!("{}", human(&report));
            out.problems(&report.findings);
            errln!("{}", summary(&report.findings));
        }
    }
    Ok(if report.has_errors() {
        Exit::Problems
    } else {
        Exit::Ok
    })
}

fn profile_failed(problems: &[Problem], format: Format, out: &Output) -> Exit {
    match format {
        Format::Json => outln!("{}", crate::report::json(problems)),
        Format::Human => out.problems(problems),
    }
    Exit::Problems
}

fn summary(findings: &[Problem]) -> String {
    let errors = findings.iter().filter(|p| p.is_error()).count();
    let warnings = findings.len() - errors;
    match (errors, warnings) {
        (0, 0) => "ok: nothing wrong found".to_string(),
        (0, w) => format!("ok: {w} warning(s)"),
        (e, w) => format!("{e} error(s), {w} warning(s)"),
    }
}

/// The facts, for people.
fn human(r: &Report) -> String {
    let f = &r.facts;
    let mut s = String::new();
    let place = if f.in_pod { "pod" } else { "host" };
    s.push_str(&format!(
        "roce doctor: {place}{}\n",
        r.profile
            .as_ref()
            .map(|p| format!(", profile {p}"))
            .unwrap_or_default()
    ));
    ports(&mut s, r);
    stack(&mut s, f);
    access(&mut s, r);
    requirements(&mut s, r);
    s.pop();
    s
}

/// One `name:   value` line of the facts, values aligned.
fn field(s: &mut String, k: &str, v: String) {
    s.push_str(&format!("{:<14}{v}\n", format!("{k}:")));
}

/// A fact doctor could not read.
fn or_unknown(v: Option<String>) -> String {
    v.unwrap_or_else(|| "unknown".to_string())
}

/// The RDMA ports as a table, columns as wide as their widest cell.
fn ports(s: &mut String, r: &Report) {
    if r.ports.is_empty() {
        s.push_str("RDMA ports:   none\n");
        return;
    }
    let rows: Vec<[String; 6]> = r
        .ports
        .iter()
        .map(|p| {
            [
                p.device.clone(),
                p.port.to_string(),
                p.state.clone().unwrap_or_else(|| "?".into()),
                p.link_layer.clone().unwrap_or_else(|| "?".into()),
                p.netdev.clone().unwrap_or_else(|| "-".into()),
                p.suggested_gid_index
                    .map_or_else(|| "-".into(), |i| i.to_string()),
            ]
        })
        .collect();
    let head = ["DEVICE", "PORT", "STATE", "LINK", "NETDEV", "GID"].map(String::from);
    let mut width = head.clone().map(|h| h.len());
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    s.push_str(&format!("RDMA ports:   {}\n", r.ports.len()));
    for row in std::iter::once(&head).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        s.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
}

/// The software and devices under NCCL: netdevs, rdma-core, kernel modules, peer memory, GPUs, the
/// device nodes (only where there are RDMA devices) and IMEX channels (only where there are any).
fn stack(s: &mut String, f: &doctor::facts::HostFacts) {
    field(
        s,
        "netdevs",
        or_unknown(f.netdev_list().map(|n| n.join(", "))),
    );
    field(
        s,
        "rdma-core",
        match &f.libibverbs {
            Some(l) => format!(
                "{} ({})",
                l.version.as_deref().unwrap_or("version unknown"),
                l.path
            ),
            None => "not found".to_string(),
        },
    );
    field(
        s,
        "modules",
        or_unknown(f.modules.as_ref().map(|m| {
            if m.is_empty() {
                "none of interest".to_string()
            } else {
                m.join(", ")
            }
        })),
    );
    field(
        s,
        "peer memory",
        or_unknown(f.peer_memory.map(|p| p.as_str().to_string())),
    );
    field(s, "GPUs", or_unknown(f.gpus.map(|g| g.to_string())));
    if !f.devices.is_empty() {
        field(
            s,
            "RDMA nodes",
            or_unknown(f.device_nodes.as_ref().map(|n| {
                if n.is_empty() {
                    "none (/dev/infiniband is absent)".to_string()
                } else {
                    n.join(", ")
                }
            })),
        );
    }
    if let Some(channels) = f.imex_channels.as_ref().filter(|c| !c.is_empty()) {
        field(
            s,
            "IMEX",
            format!("{} ({IMEX_CHANNELS_DIR})", channels.join(", ")),
        );
    }
}

/// What the process may do and sees: IPC_LOCK, the memlock limit, the GID it wants, its environment.
fn access(s: &mut String, r: &Report) {
    let f = &r.facts;
    field(
        s,
        "IPC_LOCK",
        or_unknown(f.ipc_lock().map(|b| {
            if b {
                "yes".to_string()
            } else {
                "no".to_string()
            }
        })),
    );
    field(
        s,
        "memlock",
        or_unknown(f.memlock.map(|m| match m {
            Limit::Unlimited => "unlimited".to_string(),
            Limit::Bytes(n) => format!("{n} bytes"),
        })),
    );
    let fam = r.want.family.map_or("IPv4 or IPv6", |f| f.as_str());
    let range = r.want.range.map(|c| format!(" in {c}")).unwrap_or_default();
    field(s, "GID wanted", format!("RoCE v2 {fam}{range}"));
    let env = match r.env_has_profile_vars {
        Some(true) => " (carries the profile's variables)",
        Some(false) => " (none of the profile's variables: checked the profile's values)",
        None => "",
    };
    field(
        s,
        "environment",
        format!("{}, {} variables{env}", f.env.source.as_str(), f.env.len()),
    );
}

/// The profile's requirements as this host shows each: met, unmet (with the findings), or not seen.
fn requirements(s: &mut String, r: &Report) {
    if r.requirements.is_empty() {
        return;
    }
    s.push_str("requirements:\n");
    for q in &r.requirements {
        let (mark, detail) = match &q.seen {
            Seen::Met => ("ok", String::new()),
            Seen::Unmet => {
                let codes: Vec<&str> = q.findings.iter().map(|c| c.as_str()).collect();
                ("UNMET", format!(": {}", codes.join(", ")))
            }
            Seen::Unknown(why) => ("unseen", format!(" ({why})")),
        };
        s.push_str(&format!("  {mark:<7}{}{detail}\n", q.need.describe()));
    }
}
