//! One test's output, read for what it shows: its bus bandwidth and, through `explain`, what the log pins
//! on which host.

use indexmap::{IndexMap, IndexSet};
use roce_model::Code;
use roce_render::sweep::{MARKER, NodeName};
use serde::Serialize;

use super::Cause;
use crate::explain::{Explainer, Explanation, Transport};

/// What a test's output shows, before it is compared with the fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestResult {
    /// Its output, relative to the results directory.
    pub output: String,
    /// The node(s) it ran on.
    pub nodes: Vec<NodeName>,
    /// Whether it finished, and with a table.
    pub state: State,
    /// Bus bandwidth at the largest message size (GB/s), when it printed a table.
    pub busbw: Option<f64>,
    /// The transport NCCL used.
    #[serde(serialize_with = "transport_str")]
    pub transport: Transport,
    /// Whether GPUDirect RDMA was on.
    pub gpudirect_rdma: Option<bool>,
    /// A fault the log itself shows, when it shows one.
    pub cause: Option<Cause>,
    /// The nodes that fault is on, when the log says (the hosts whose ranks showed it).
    pub blame: Vec<NodeName>,
    /// The line that shows it (`file:line: text`).
    pub evidence: Option<String>,
    /// The node whose ranks printed that line, when its prefix names one of the test's nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence_on: Option<NodeName>,
    /// A single-node check's rail check: each rail's `ib_write_bw` loopback result.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rails: Vec<Rail>,
}

/// One rail of a node's rail check (`roce-sweep: rail DEV:PORT`, then perftest's table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rail {
    /// `DEV:PORT`.
    pub rail: String,
    /// `BW average[Gb/sec]` of its last table row; `None` when it failed or printed no table.
    pub gbps: Option<f64>,
    /// The 1-based line of its marker.
    pub line: usize,
}

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// A table was printed and the test ended.
    Measured,
    /// It failed (non-zero exit, no table, or wrong results).
    Failed,
    /// It outlived its time limit.
    Hung,
    /// No output was found.
    Missing,
}

/// Read one test's output; `None` when the file is missing. `rails` is the profile's port count per
/// node, when known.
pub fn read(
    output: &str,
    nodes: &[NodeName],
    bytes: Option<&[u8]>,
    rails: Option<u32>,
) -> TestResult {
    let mut r = TestResult {
        output: output.to_string(),
        nodes: nodes.to_vec(),
        state: State::Missing,
        busbw: None,
        transport: Transport::Unknown,
        gpudirect_rdma: None,
        cause: None,
        blame: Vec::new(),
        evidence: None,
        evidence_on: None,
        rails: Vec::new(),
    };
    let Some(bytes) = bytes else {
        return r;
    };
    let mut x = Explainer::new();
    x.start_file(output);
    // reading from a slice cannot fail
    let _ = x.read(bytes);
    let e = x.finish();
    let marks = markers(bytes);
    r.transport = e.transport;
    r.gpudirect_rdma = e.gpudirect_rdma;
    let table = e.bandwidth.as_ref().filter(|b| b.rows > 0);
    r.busbw = table.map(|b| b.large_busbw);
    r.state = if marks.timeout.is_some() {
        State::Hung
    } else if marks.exit.is_some() || table.is_none() || table.is_some_and(|b| b.wrong > 0) {
        State::Failed
    } else {
        State::Measured
    };
    let hosts = HostMap::new(nodes, &marks.pods);
    if let Some((cause, blame, ev)) = cause_of(&e, rails, &hosts) {
        r.cause = Some(cause);
        r.blame = blame;
        r.evidence_on = ev
            .as_ref()
            .and_then(|(_, text)| crate::explain::host_of_line(text))
            .and_then(|h| hosts.node(&h));
        r.evidence = ev.map(|(at, text)| format!("{at}: {text}"));
    } else if table.is_some_and(|b| b.wrong > 0) {
        r.cause = Some(Cause::WrongResults);
    } else if let Some(line) = marks.timeout {
        r.cause = Some(Cause::Hung);
        r.evidence = Some(format!("{output}: {line}"));
    } else if r.state == State::Failed {
        r.cause = Some(Cause::Failed);
        r.evidence = marks.exit.map(|l| format!("{output}: {l}"));
    }
    r
}

/// The fault `roce doctor --format json` on a node shows, as a sweep cause, with its line (`path: code:
/// message`): the first error (or, for peer memory and a port down, warning) that explains a slow or
/// failing node. Anything else it says (memlock, env drift) is not a network cause; unreadable JSON is
/// no evidence.
pub(crate) fn doctor(path: &str, json: &[u8]) -> Option<(Cause, String)> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    v.get("findings")?.as_array()?.iter().find_map(|f| {
        let code = f.get("code")?.as_str()?;
        let cause = match code.strip_prefix("roce::doctor::")? {
            "no_rdma_devices"
            | "no_device_nodes"
            | "no_provider_devices"
            | "hca_matches_nothing"
            | "no_libibverbs" => Cause::SocketFallback,
            "missing_rail" | "port_down" | "provider_device_count" => Cause::RailMissing,
            "no_usable_gid" | "gid_index" => Cause::Gid,
            "peer_memory" => Cause::GdrOff,
            "imex_channels" => Cause::Nvlink,
            "net_plugin" => Cause::PluginNotLoaded,
            _ => return None,
        };
        let message = f.get("message").and_then(|m| m.as_str()).unwrap_or("");
        Some((cause, format!("{path}: {code}: {message}")))
    })
}

/// The rail check's results: per `roce-sweep: rail DEV:PORT` marker, the average of the last row of the
/// perftest table after it (`#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]` with
/// `--report_gbits`, linux-rdma/perftest `src/perftest_parameters.h`), unless a `… failed` marker follows.
pub(crate) fn rail_results(bytes: &[u8]) -> Vec<Rail> {
    let head = format!("{MARKER} rail ");
    let Some(first) = memchr::memmem::find(bytes, head.as_bytes()) else {
        return Vec::new();
    };
    let skipped = bytes[..first].iter().filter(|b| **b == b'\n').count();
    let mut out: Vec<Rail> = Vec::new();
    let mut table = false;
    for (i, line) in bytes[first..].split(|b| *b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(line);
        if let Some(at) = line.find(&head) {
            let rest = line[at + head.len()..].trim();
            if let Some(rail) = rest.strip_suffix(" failed") {
                if let Some(last) = out.last_mut().filter(|r| r.rail == rail) {
                    last.gbps = None;
                }
            } else {
                out.push(Rail {
                    rail: rest.to_string(),
                    gbps: None,
                    line: skipped + i + 1,
                });
            }
            table = false;
        } else if line.contains("BW average[Gb/sec]") {
            table = true;
        } else if table && let Some(last) = out.last_mut() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 4 && f[0].parse::<u64>().is_ok() && f[1].parse::<u64>().is_ok() {
                last.gbps = f[3].parse::<f64>().ok().filter(|g| g.is_finite());
            }
        }
    }
    out
}

/// The run scripts' marker lines (`roce-sweep: …`), searched in the tail where they are appended.
#[derive(Debug, Default)]
struct Markers {
    timeout: Option<String>,
    exit: Option<String>,
    /// `roce-sweep: pod POD NODE`: which node each pod ran on (Kubernetes: NCCL names the pod, not the node).
    pods: Vec<(String, String)>,
}

fn markers(bytes: &[u8]) -> Markers {
    // one searcher for every line (the one-shot `memmem::find` builds one per line of 64 bytes or more)
    static MARKER_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MARKER.as_bytes()));
    let mut m = Markers::default();
    let tail = &bytes[bytes.len().saturating_sub(16 * 1024)..];
    for line in tail.split(|b| *b == b'\n') {
        let Some(at) = MARKER_FINDER.find(line) else {
            continue;
        };
        let rest = String::from_utf8_lossy(&line[at + MARKER.len()..])
            .trim()
            .to_string();
        let full = String::from_utf8_lossy(&line[at..]).trim().to_string();
        if rest.starts_with("timeout") {
            m.timeout.get_or_insert(full);
        } else if rest.starts_with("exit") {
            m.exit.get_or_insert(full);
        } else if let Some(p) = rest.strip_prefix("pod ") {
            let mut w = p.split_whitespace();
            if let (Some(pod), Some(node)) = (w.next(), w.next()) {
                m.pods.push((pod.to_string(), node.to_string()));
            }
        }
    }
    m
}

/// From the host names NCCL prints (cut at the first dot) to the test's nodes.
struct HostMap<'a> {
    nodes: &'a [NodeName],
    pods: &'a [(String, String)],
}

impl<'a> HostMap<'a> {
    fn new(nodes: &'a [NodeName], pods: &'a [(String, String)]) -> Self {
        HostMap { nodes, pods }
    }

    fn node(&self, host: &str) -> Option<NodeName> {
        let short = |n: &str| n.split('.').next().unwrap_or(n).to_string();
        let host = short(host);
        if let Some(n) = self.nodes.iter().find(|n| short(n.as_str()) == host) {
            return Some(n.clone());
        }
        let (_, node) = self.pods.iter().find(|(pod, _)| short(pod) == host)?;
        self.nodes.iter().find(|n| n.as_str() == node).cloned()
    }

    /// The nodes of `hosts`; empty when any of them is not one of the test's nodes.
    fn nodes_of<'h>(&self, hosts: impl IntoIterator<Item = &'h str>) -> Vec<NodeName> {
        let mut out = IndexSet::new();
        for h in hosts {
            match self.node(h) {
                Some(n) => {
                    out.insert(n);
                }
                None => return Vec::new(),
            }
        }
        out.into_iter().collect()
    }
}

/// Where a line is (`file:line`) and its text.
type Line = (String, String);

/// The fault the log shows, the nodes it is on, and the line that shows it; in order of what explains
/// the most (a node without RDMA devices also shows no GPUDirect RDMA).
fn cause_of(
    e: &Explanation,
    rails: Option<u32>,
    hosts: &HostMap<'_>,
) -> Option<(Cause, Vec<NodeName>, Option<Line>)> {
    let find = |codes: &[Code]| e.findings.iter().find(|f| codes.contains(&f.code));
    // (`file:line`, the line)
    let ev = |f: &crate::explain::Finding| {
        f.evidence
            .as_ref()
            .map(|v| (format!("{}:{}", v.file, v.line), v.text.clone()))
    };
    let by_code: [(&[Code], Cause); 5] = [
        (&[Code::ExplainMnnvl], Cause::Nvlink),
        (
            &[Code::ExplainPluginNotLoaded, Code::ExplainNetPluginError],
            Cause::PluginNotLoaded,
        ),
        (&[Code::ExplainGid], Cause::Gid),
        (
            &[Code::ExplainSocketFallback, Code::ExplainMixedNetwork],
            Cause::SocketFallback,
        ),
        (&[Code::ExplainGdrDisabled], Cause::GdrOff),
    ];
    for (codes, cause) in by_code {
        if let Some(f) = find(codes) {
            // the hosts whose ranks showed it, else the host of the line that shows it
            let from_line: Vec<String> = f
                .evidence
                .as_ref()
                .and_then(|v| crate::explain::host_of_line(&v.text))
                .into_iter()
                .collect();
            let named = if f.hosts.is_empty() {
                &from_line
            } else {
                &f.hosts
            };
            let mut blame = hosts.nodes_of(named.iter().map(String::as_str));
            if cause == Cause::SocketFallback {
                // the ranks whose network is a socket one
                let socket: IndexSet<&str> = e
                    .processes
                    .iter()
                    .filter(|p| {
                        p.network
                            .as_deref()
                            .is_some_and(crate::explain::transport_is_socket)
                    })
                    .map(|p| p.host.as_str())
                    .collect();
                let b = hosts.nodes_of(socket);
                if !b.is_empty() {
                    blame = b;
                }
            }
            return Some((cause, blame, ev(f)));
        }
    }
    if e.transport == Transport::Socket {
        return Some((Cause::SocketFallback, Vec::new(), None));
    }
    // a rail short: a host whose ranks listed fewer RDMA ports than the profile's rails, or than its peers
    let mut ports: IndexMap<&str, u32> = IndexMap::new();
    for p in &e.processes {
        let v = ports.entry(p.host.as_str()).or_insert(0);
        *v = (*v).max(p.rdma_ports);
    }
    let most = ports.values().copied().max().unwrap_or(0);
    let want = rails.unwrap_or(most).max(most);
    if want > 0 {
        let short: Vec<&str> = ports
            .iter()
            .filter(|(_, n)| **n > 0 && **n < want)
            .map(|(h, _)| *h)
            .collect();
        if !short.is_empty() {
            return Some((Cause::RailMissing, hosts.nodes_of(short), None));
        }
    }
    if e.gpudirect_rdma == Some(false) {
        return Some((Cause::GdrOff, Vec::new(), None));
    }
    if let Some(f) = find(&[
        Code::ExplainIbRetryExceeded,
        Code::ExplainIbCompletionError,
        Code::ExplainIbAsyncEvent,
        Code::ExplainQpConnectFailed,
    ]) {
        return Some((Cause::LinkErrors, Vec::new(), ev(f)));
    }
    None
}

fn transport_str<S: serde::Serializer>(t: &Transport, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.as_str())
}
