//! NCCL's run-time reports beside its log: the RAS client's status (`ncclras`, NCCL 2.24+) and the Inspector
//! profiler plugin's records (`plugins/profiler/inspector`, JSON lines or Prometheus text).
//!
//! RAS (NVIDIA/nccl v2.30.7-1 `src/ras/client_support.cc`; the 2.32.3 report in the corpus has the same shape):
//! the text report's "Errors" section prints `INCOMPLETE` with `Missing communicator data from N job
//! process(es)`, `DEAD` with `N job process(es) considered dead (unreachable via the RAS network)`, and per
//! communicator `Initialization error(s) on N rank(s)` / `Asynchronous error(s) on N rank(s)`, each followed by
//! `Process P on node H managing GPU G` lines; the JSON report (`ncclras -f json`) has `"missing_ranks_count"`
//! and, per missing rank, `"unresponsive"` and `"considered_dead"`, per rank `"async_error"`. Any of them means a
//! rank of a running job stopped answering, died or failed: `roce::explain::nccl_ras`.
//!
//! Inspector (`plugins/profiler/inspector/README.md`, output format v4.0): one JSON object per line with
//! `header` (`rank`, `n_ranks`, `nnodes`) and `coll_perf` (`coll`, `coll_msg_size_bytes`, `coll_busbw_gbs`); the
//! Prometheus form is `nccl_bus_bandwidth_gbs{…,collective="AllReduce",…} 1.83`. Kept per collective as the
//! peak bus bandwidth and the number of records, for the JSON's `inspector`.

use roce_model::Code;

use super::Explainer;
use super::line::text;

/// Collectives kept from Inspector records.
pub(super) const INSPECTOR_MAX: usize = 32;

/// One collective as the Inspector plugin measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct InspectorCollective {
    /// `coll` / `collective`: `AllReduce`, `AllGather`, …
    pub collective: String,
    /// Records read.
    pub records: u64,
    /// The highest `coll_busbw_gbs` (GB/s).
    pub peak_busbw_gbs: f64,
    /// The largest message measured, bytes (JSON records only).
    pub max_message_bytes: Option<u64>,
}

/// The needles of this module's lines, which `ANY_NEEDLE` must hold (a test says so).
#[cfg(test)]
const NEEDLES: [&str; 10] = [
    "Job summary",
    "\"communicators_count\"",
    "Missing communicator data from",
    "considered dead",
    " error on ",
    " errors on ",
    "\"missing_ranks_count\"",
    "\"considered_dead\"",
    "\"coll_perf\"",
    "nccl_bus_bandwidth_gbs{",
];

/// The number before `word` in `line` (`Missing … from 1 job process` → 1).
fn count_before(rest: &[u8]) -> Option<u64> {
    let digits: Vec<u8> = rest
        .trim_ascii_start()
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// The number after `"key":` in a JSON line.
fn json_number(line: &[u8], key: &memchr::memmem::Finder<'_>) -> Option<u64> {
    let at = key.find(line)? + key.needle().len();
    let rest = line[at..].trim_ascii_start().strip_prefix(b":")?;
    count_before(rest)
}

impl Explainer {
    /// A RAS report or Inspector line; `true` when it was one.
    pub(super) fn ras_line(&mut self, line: &[u8]) -> bool {
        let t = line.trim_ascii();
        // the report's first section (text) and key (JSON): its `NCCL version … compiled with CUDA` line is no
        // NCCL log line, so a report without INFO lines is not a log without them
        if t == b"Job summary" || t.starts_with(b"\"communicators_count\"") {
            self.ras_report = true;
            return true;
        }
        if t.starts_with(b"{") && find!(line, b"\"coll_perf\"").is_some() {
            return self.inspector_json(t);
        }
        if let Some(at) = find!(line, b"nccl_bus_bandwidth_gbs{") {
            return self.inspector_prom(&line[at..]);
        }
        let (kind, n) = if let Some(at) = find!(line, b"Missing communicator data from") {
            let n = count_before(&line[at + b"Missing communicator data from".len()..]);
            // `… from N rank(s)` repeats a job-level `… from N job process(es)` per communicator
            if find!(line, b" rank").is_some() && find!(line, b"job process").is_none() {
                return true;
            }
            ("missing", n)
        } else if find!(line, b"considered dead").is_some() && find!(line, b"job process").is_some()
        {
            ("dead", count_before(t))
        } else if (find!(line, b"Initialization error").is_some()
            || find!(line, b"Asynchronous error").is_some())
            && (find!(line, b" error on ").is_some() || find!(line, b" errors on ").is_some())
        {
            let at = find!(line, b" on ").unwrap_or(0);
            ("error", count_before(&line[at + 4..]))
        } else if let Some(n) = json_number(line, finder!(b"\"missing_ranks_count\"")) {
            if n == 0 {
                return true;
            }
            ("missing", Some(n))
        } else if find!(line, b"\"considered_dead\"").is_some() {
            if find!(line, b"true").is_none() {
                return true;
            }
            ("dead", None)
        } else {
            return false;
        };
        self.ras_finding(kind, n, line);
        true
    }

    fn ras_finding(&mut self, kind: &str, n: Option<u64>, line: &[u8]) {
        let ev = self.evidence(line);
        let n = n.map_or_else(|| "a".to_string(), |n| n.to_string());
        self.found(Code::ExplainNcclRas, kind, None, ev, || match kind {
            "missing" => (
                format!("NCCL's RAS (ncclras) got no communicator data from {n} process(es) of the running job: those ranks stopped answering (a hang, a stopped or crashed process, or a node off the network), and the job's collectives wait for them"),
                "the report's `Process P on node H managing GPU G` lines name them: look at that process (py-spy/gdb for a hang, the node's dmesg and `nvidia-smi` for a GPU fault, its link for the network); RAS declares a peer dead after 60 s without an answer (src/ras/ras_internal.h, RAS_PEER_DEAD_TIMEOUT)".to_string(),
            ),
            "dead" => (
                format!("NCCL's RAS (ncclras) considers {n} process(es) of the job dead (unreachable via the RAS network): the job cannot finish its collectives"),
                "the report names each process and node: a crashed or killed rank, or a node that left the network; restart the job without it".to_string(),
            ),
            _ => (
                format!("NCCL's RAS (ncclras) reports NCCL errors on {n} rank(s) of a communicator (initialization or asynchronous errors)"),
                "the ranks' own NCCL WARN lines say which error; RAS only collects that they happened".to_string(),
            ),
        });
    }

    fn inspector_json(&mut self, line: &[u8]) -> bool {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            return false;
        };
        let perf = &v["coll_perf"];
        let (Some(coll), Some(bw)) = (perf["coll"].as_str(), perf["coll_busbw_gbs"].as_f64())
        else {
            return false;
        };
        let size = perf["coll_msg_size_bytes"].as_u64();
        self.inspector_record(coll, bw, size);
        true
    }

    fn inspector_prom(&mut self, line: &[u8]) -> bool {
        let Some(close) = memchr::memchr(b'}', line) else {
            return false;
        };
        let labels = &line[..close];
        let Some(at) = memchr::memmem::find(labels, b"collective=\"") else {
            return false;
        };
        let rest = &labels[at + b"collective=\"".len()..];
        let coll = text(&rest[..memchr::memchr(b'"', rest).unwrap_or(rest.len())]);
        let Ok(bw) = text(line[close + 1..].trim_ascii()).parse::<f64>() else {
            return false;
        };
        self.inspector_record(&coll, bw, None);
        true
    }

    fn inspector_record(&mut self, coll: &str, bw: f64, size: Option<u64>) {
        self.merge_inspector(InspectorCollective {
            collective: coll.to_string(),
            records: 1,
            peak_busbw_gbs: bw,
            max_message_bytes: size,
        });
    }

    /// Add records of one collective (one line's, or another file's when files are merged).
    pub(super) fn merge_inspector(&mut self, r: InspectorCollective) {
        if let Some(c) = self
            .inspector
            .iter_mut()
            .find(|c| c.collective == r.collective)
        {
            c.records += r.records;
            c.peak_busbw_gbs = c.peak_busbw_gbs.max(r.peak_busbw_gbs);
            c.max_message_bytes = c.max_message_bytes.max(r.max_message_bytes);
        } else if self.inspector.len() < INSPECTOR_MAX {
            self.inspector.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_needles_are_searched_for() {
        for n in NEEDLES {
            assert!(super::super::ANY_NEEDLE.contains(&n), "{n}");
        }
    }

    #[test]
    fn counts_are_read_before_their_noun() {
        assert_eq!(count_before(b" 1 job process"), Some(1));
        assert_eq!(count_before(b"12 ranks"), Some(12));
        assert_eq!(count_before(b"job"), None);
        assert_eq!(
            json_number(
                br#"      "missing_ranks_count": 3,"#,
                finder!(b"\"missing_ranks_count\"")
            ),
            Some(3)
        );
    }
}
