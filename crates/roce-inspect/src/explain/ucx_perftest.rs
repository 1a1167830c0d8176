//! `ucx_perftest` output (`src/tools/perf/perftest.c` of openucx/ucx): the server prints the test's header box
//! (`| Test:         tag match bandwidth |`, `| Message size: 1048576 |`), the client the result table, whose
//! `Final:` row holds iterations, the latency (latency tests) or overhead (bandwidth tests) in µs as 50th
//! percentile, average and overall, the bandwidth in MB/s and the message rate, each as average and overall.

use super::Evidence;

/// A `ucx_perftest` result.
#[derive(Debug, Clone, PartialEq)]
pub struct UcxPerftest {
    /// The test as the header names it (`tag match bandwidth`, `put bandwidth`, `tag match latency`).
    pub test: Option<String>,
    /// The message size in bytes.
    pub message_size: Option<u64>,
    /// Iterations of the `Final:` row.
    pub iterations: u64,
    /// Average latency (latency tests) or send overhead (bandwidth tests) in µs.
    pub usec: f64,
    /// Whether `usec` is a latency (`latency (usec)`) rather than an overhead.
    pub latency: bool,
    /// Overall bandwidth in MB/s.
    pub bandwidth_mbps: f64,
    /// Overall message rate (messages/s).
    pub message_rate: f64,
    /// The `Final:` row.
    pub evidence: Evidence,
}

/// What the header and the table said so far.
#[derive(Debug, Default)]
pub(crate) struct Perftest {
    test: Option<String>,
    message_size: Option<u64>,
    latency: bool,
    seen: bool,
    pub(crate) result: Option<UcxPerftest>,
}

impl Perftest {
    /// Read a line; `true` when it is part of `ucx_perftest`'s output.
    pub(crate) fn line(&mut self, line: &[u8], ev: impl FnOnce() -> Evidence) -> bool {
        let t = line.trim_ascii();
        if let Some(row) = t.strip_prefix(b"Final:") {
            return self.row(row, ev);
        }
        match t.first() {
            Some(b'|') => {
                let inner = t.strip_prefix(b"|").unwrap_or(t);
                let inner = inner.strip_suffix(b"|").unwrap_or(inner).trim_ascii();
                let field = |k: &[u8]| {
                    inner
                        .strip_prefix(k)
                        .map(|v| String::from_utf8_lossy(v.trim_ascii()).into_owned())
                };
                if let Some(v) = field(b"Test:") {
                    self.test = Some(v);
                } else if let Some(v) = field(b"Message size:") {
                    self.message_size = v.parse().ok();
                } else if memchr::memmem::find(inner, b"latency (usec)").is_some() {
                    self.latency = true;
                } else if memchr::memmem::find(inner, b"overhead (usec)").is_some() {
                    self.latency = false;
                } else if !(inner.starts_with(b"API:")
                    || inner.starts_with(b"Data layout:")
                    || inner.starts_with(b"Send memory:")
                    || inner.starts_with(b"Recv memory:")
                    || inner.starts_with(b"Window size:")
                    || memchr::memmem::find(inner, b"# iterations").is_some())
                {
                    return false;
                }
                self.seen = true;
                true
            }
            Some(b'+') => self.seen && t.iter().all(|b| matches!(b, b'+' | b'-')),
            _ => false,
        }
    }

    /// `Final: 200 2.365 400.610 400.610 2496.19 2496.19 2496 2496`.
    fn row(&mut self, row: &[u8], ev: impl FnOnce() -> Evidence) -> bool {
        let n: Vec<f64> = row
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty())
            .filter_map(|w| std::str::from_utf8(w).ok()?.parse().ok())
            .collect();
        if n.len() != 8 {
            return false;
        }
        if self.result.is_none() {
            self.result = Some(UcxPerftest {
                test: self.test.clone(),
                message_size: self.message_size,
                iterations: n[0] as u64,
                usec: n[2],
                latency: self.latency,
                bandwidth_mbps: n[5],
                message_rate: n[7],
                evidence: ev(),
            });
        }
        true
    }

    /// A new file: its header is its own (the result found so far stays).
    pub(crate) fn new_file(&mut self) {
        let result = self.result.take();
        *self = Perftest {
            result,
            ..Perftest::default()
        };
    }

    /// Fold a later file's result in (its header state ended with its file).
    pub(crate) fn merge(&mut self, o: Perftest) {
        if self.result.is_none() {
            self.result = o.result;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev() -> Evidence {
        Evidence::new("x", 1, b"Final:")
    }

    #[test]
    fn header_and_final_row() {
        let mut p = Perftest::default();
        for l in [
            "| Test:         tag match latency                                     |",
            "| Message size: 8                                                     |",
            "|              |              |        latency (usec)        |   bandwidth (MB/s)  |",
            "+--------------+--------------+----------+",
        ] {
            assert!(p.line(l.as_bytes(), ev), "{l}");
        }
        assert!(p.line(b"Final:                  1000      0.161     0.164     0.164       46.51      46.51     6096372     6096372", ev));
        let r = p.result.unwrap();
        assert_eq!(
            (r.test.as_deref(), r.message_size, r.iterations),
            (Some("tag match latency"), Some(8), 1000)
        );
        assert!(r.latency && r.usec == 0.164 && r.bandwidth_mbps == 46.51);
        let mut q = Perftest::default();
        assert!(!q.line(b"| not a perftest box |", ev));
        assert!(!q.line(b"+-----+", ev));
        assert!(!q.line(b"Final: answer 42", ev));
    }
}
