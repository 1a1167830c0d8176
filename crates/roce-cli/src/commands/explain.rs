//! `roce explain`: read NCCL/UCX logs and say whether the job really used GPUDirect RDMA, and if not, why.

use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;
use miette::{Context, IntoDiagnostic};
use rayon::prelude::*;
use roce_inspect::explain::{Explainer, Explanation, Rendered, Transport};

use super::Exit;
use crate::args::Format;
use crate::io::load_profile;
use crate::report::{Output, outln};
use crate::walk;

// Arguments of `roce explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// NCCL/UCX log files or directories of them (`-` reads stdin); several files (one per node or rank) are
    /// read as one job, in parallel.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// The bus bandwidth nccl-tests should reach (GB/s): the report says what percentage of it the log's
    /// large-message bus bandwidth is, and warns below 80 %.
    #[arg(long, value_name = "GBPS")]
    pub expect_busbw: Option<f64>,
    /// Also report every difference between what this profile expects and what the log shows
    /// (a built-in name or a profile file).
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Read buffer. 64 KiB measured best on a 256 MB log (hyperfine, 15 runs): 1 MiB reads spent 4× the kernel time
/// (140 ms against 30 ms; the copy into a buffer larger than L2 misses cache) and 32 KiB twice the syscalls.
const BUF: usize = 1 << 16;

/// Files read in parallel before their explainers are folded into the running one.
const EXPLAIN_BATCH: usize = 256;

pub(crate) fn run(args: ExplainArgs, out: &Output) -> miette::Result<Exit> {
    // load the profile first: a bad profile is a usage problem, before reading gigabytes of log
    let profile = match &args.profile {
        None => None,
        Some(spec) => {
            let Some((profile, _)) = load_profile(spec, out)? else {
                return Ok(Exit::Problems);
            };
            Some(profile)
        }
    };

    let inputs = inputs(&args.logs)?;
    // One explainer per file, in parallel (each reads through its own 64 KiB buffer), folded in the order the
    // files were given. A batch at a time: holding every file's explainer until the fold cost 35 kB a file
    // (695 MiB for 20,000 per-rank logs); a batch keeps it to the batch's.
    let mut x: Option<Explainer> = None;
    for batch in inputs.chunks(EXPLAIN_BATCH) {
        let read: Vec<miette::Result<Explainer>> = if batch.len() == 1 {
            vec![read_one(&batch[0])]
        } else {
            batch.par_iter().map(read_one).collect()
        };
        for more in read {
            let more = more?;
            match &mut x {
                Some(x) => x.merge(more),
                None => x = Some(more),
            }
        }
    }
    let mut e = x.unwrap_or_default().finish();
    if let Some(p) = &profile {
        e.compare_profile(p);
    }
    // --expect-busbw, else the profile's expectation, else a line rate (the library decides)
    e.expect_busbw(args.expect_busbw, profile.as_ref());
    match args.format {
        Format::Json => outln!("{}", e.to_json()),
        Format::Human => human(&e, out),
    }
    Ok(if e.has_errors() {
        Exit::Problems
    } else {
        Exit::Ok
    })
}

/// What to read: stdin, or a file (directories expanded to the files under them, sorted).
#[derive(Debug)]
enum Input {
    Stdin,
    File(PathBuf),
}

fn inputs(logs: &[PathBuf]) -> miette::Result<Vec<Input>> {
    let mut out = Vec::new();
    let mut stdin_used = false;
    for path in logs {
        if path.as_os_str() == "-" {
            if stdin_used {
                miette::bail!("`-` (stdin) can be given once");
            }
            stdin_used = true;
            out.push(Input::Stdin);
        } else if path.is_dir() {
            let files = walk::files(std::slice::from_ref(path), walk::any)
                .into_diagnostic()
                .wrap_err_with(|| format!("reading directory {}", path.display()))?;
            if files.is_empty() {
                miette::bail!("{} holds no files", path.display());
            }
            out.extend(files.into_iter().map(Input::File));
        } else {
            out.push(Input::File(path.clone()));
        }
    }
    Ok(out)
}

fn read_one(input: &Input) -> miette::Result<Explainer> {
    let mut x = Explainer::new();
    match input {
        Input::Stdin => {
            x.start_file("<stdin>");
            let stdin = std::io::stdin();
            x.read(BufReader::with_capacity(BUF, stdin.lock()))
                .into_diagnostic()
                .wrap_err("reading stdin")?;
        }
        Input::File(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::open(path)
                .into_diagnostic()
                .wrap_err_with(|| format!("opening {name}"))?;
            x.start_file(&name);
            x.read(BufReader::with_capacity(BUF, file))
                .into_diagnostic()
                .wrap_err_with(|| format!("reading {name}"))?;
        }
    }
    Ok(x)
}

/// The report for people: a verdict block, then each finding with its line.
fn human(e: &Explanation, out: &Output) {
    let not_a_log = e
        .files
        .iter()
        .all(|f| f.nccl_lines == 0 && f.ucx_lines == 0 && f.report_lines == 0);
    if not_a_log {
        findings(e, out);
        return;
    }
    verdict(e);
    wiring(e);
    processes(e);
    diagnostics(e);
    bandwidth(e);
    profile(e);
    if e.findings.is_empty() {
        outln!("ok: no problem found");
        return;
    }
    findings(e, out);
}

/// Processes and diagnostics shown before `… and N more`.
const SHOWN: usize = 8;

/// What was read, and the three answers most readers come for: the transport, GPUDirect RDMA and the
/// NCCL release.
fn verdict(e: &Explanation) {
    let lines: u64 = e.files.iter().map(|f| f.lines).sum();
    let names: Vec<&str> = e.files.iter().map(|f| f.name.as_str()).collect();
    let what = if names.len() == 1 {
        names[0].to_string()
    } else {
        format!("{} files", names.len())
    };
    outln!(
        "{what}: {lines} lines, {} process{} on {} host{}",
        e.processes.len(),
        if e.processes.len() == 1 { "" } else { "es" },
        e.hosts.len(),
        if e.hosts.len() == 1 { "" } else { "s" }
    );
    let transport = match (e.transport, &e.network) {
        (Transport::Unknown, Some(n)) => format!("unknown (network {n})"),
        (t, Some(n)) if !n.eq_ignore_ascii_case(t.as_str()) => {
            format!("{} (network {n})", t.as_str())
        }
        (t, _) => t.as_str().to_string(),
    };
    outln!("  transport:       {transport}");
    let gdr = match e.gpudirect_rdma {
        Some(true) => "yes".to_string(),
        Some(false) if e.transport == Transport::Socket && e.connections.net == 0 => {
            "no (the network is sockets; this log shows no network connection)".to_string()
        }
        Some(false) => "no".to_string(),
        None if e.connections.net == 0 && e.connections.p2p + e.connections.shm > 0 => {
            "not applicable (no network connection in this log)".to_string()
        }
        None => "unknown".to_string(),
    };
    outln!("  GPUDirect RDMA:  {gdr}");
    outln!(
        "  NCCL version:    {}",
        e.nccl_version.as_deref().unwrap_or("unknown")
    );
}

/// The devices, interfaces, connections and environment the job used, each line only where the log
/// shows any.
fn wiring(e: &Explanation) {
    if !e.devices.is_empty() {
        let list: Vec<String> = e
            .devices
            .iter()
            .map(|d| {
                let port = d.port.map(|p| format!(":{p}")).unwrap_or_default();
                let gdr = match d.gdr {
                    Some(true) => " GDR",
                    Some(false) => " no-GDR",
                    None => "",
                };
                format!("{}{port}/{}{gdr}", d.name, d.link_layer)
            })
            .collect();
        outln!("  RDMA devices:    {}", list.join(" "));
    }
    if !e.socket_interfaces.is_empty() {
        outln!("  socket ifaces:   {}", e.socket_interfaces.join(" "));
    }
    let c = e.connections;
    if c.net + c.p2p + c.shm + c.other > 0 {
        outln!(
            "  connections:     {} network ({} with GPUDirect RDMA), {} P2P, {} SHM{}",
            c.net,
            c.net_gdr,
            c.p2p,
            c.shm,
            if c.other > 0 {
                format!(", {} other", c.other)
            } else {
                String::new()
            }
        );
    }
    if !e.env.is_empty() {
        let env: Vec<String> = e.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        outln!("  env NCCL saw:    {}", env.join(" "));
    }
}

/// The first processes, one line each: which rank on which GPU, and how it connected.
fn processes(e: &Explanation) {
    for p in e.processes.iter().take(SHOWN) {
        let rank = match (p.rank, p.nranks) {
            (Some(r), Some(n)) => format!("rank {r}/{n}"),
            (Some(r), None) => format!("rank {r}"),
            _ => "rank ?".to_string(),
        };
        let dev = p.cuda_dev.map(|d| format!(" gpu {d}")).unwrap_or_default();
        let net = p.network.as_deref().unwrap_or("-");
        let pc = p.connections;
        outln!(
            "    {}:{} {rank}{dev}: network {net}, {} net ({} GDR), {} P2P, {} SHM",
            p.host,
            p.pid,
            pc.net,
            pc.net_gdr,
            pc.p2p,
            pc.shm
        );
    }
    if e.processes.len() > SHOWN {
        outln!(
            "    … and {} more processes (--format json lists all)",
            e.processes.len() - SHOWN
        );
    }
}

/// The first diagnostics lines (NCCL's own checks and notices), repeats counted.
fn diagnostics(e: &Explanation) {
    for (i, d) in e.diagnostics.iter().take(SHOWN).enumerate() {
        let label = if i == 0 {
            "  diagnostics:     "
        } else {
            "                   "
        };
        let check = d
            .check
            .as_deref()
            .map(|c| format!("{c}: "))
            .unwrap_or_default();
        let times = if d.count > 1 {
            format!(" ({} lines)", d.count)
        } else {
            String::new()
        };
        let notice = if d.notice { " (a notice)" } else { "" };
        outln!("{label}[{}] {check}{}{times}{notice}", d.level, d.message);
    }
    if e.diagnostics.len() > SHOWN {
        outln!(
            "                   … and {} more results (--format json lists all)",
            e.diagnostics.len() - SHOWN
        );
    }
}

/// nccl-tests' bus bandwidth, its wrong results, and how it compares with what the rails allow.
fn bandwidth(e: &Explanation) {
    let Some(b) = &e.bandwidth else {
        return;
    };
    let mib = |n: u64| {
        if n >= 1 << 20 {
            format!("{} MiB", n >> 20)
        } else {
            format!("{n} B")
        }
    };
    let mut line = format!(
        "  nccl-tests:      bus bandwidth {:.2} GB/s at {} (the largest size), peak {:.2} GB/s at {}",
        b.large_busbw,
        mib(b.large_size),
        b.peak_busbw,
        mib(b.peak_size)
    );
    if let Some(avg) = b.avg_busbw {
        line.push_str(&format!(", average {avg:.2}"));
    }
    let wrong = b.wrong + b.out_of_bounds.unwrap_or(0);
    line.push_str(&format!("; {wrong} wrong"));
    if let Some(x) = &b.expected {
        line.push_str(&format!(
            "; {:.0} % of the expected {:.1} GB/s ({})",
            x.percent, x.busbw, x.from
        ));
    } else if let Some(why) = &b.expected_why_not {
        line.push_str(&format!("; no expectation: {why}"));
    }
    outln!("{line}");
}

/// With `--profile`: which of its variables the log confirmed, and which it cannot show.
fn profile(e: &Explanation) {
    if let Some(p) = &e.profile {
        outln!(
            "  profile {}: compared {}{}",
            p.name,
            if p.checked.is_empty() {
                "nothing".to_string()
            } else {
                p.checked.join(" ")
            },
            if p.unverified.is_empty() {
                String::new()
            } else {
                format!("; not visible in this log: {}", p.unverified.join(" "))
            }
        );
    }
}

fn findings(e: &Explanation, out: &Output) {
    for f in &e.findings {
        outln!();
        crate::report::out(&out.render(&Rendered::new(f)));
        if let Some(cause) = f
            .caused_by
            .and_then(|c| e.findings.iter().find(|g| g.code == c))
        {
            outln!("  because: {} ({})", cause.message, cause.code);
        }
    }
}
