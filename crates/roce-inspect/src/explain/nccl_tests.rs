//! nccl-tests results: the tables `all_reduce_perf` and the other `*_perf` tools print.
//!
//! `src/common.cu` of NVIDIA/nccl-tests prints a header naming the columns, one row per message size, and a
//! summary:
//!
//! ```text
//! #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//! #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//!    134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0   1230.1  109.11  190.95      0
//! # Out of bounds values : 0 OK
//! # Avg bus bandwidth    : 84.8558
//! ```
//!
//! The first group of time/algbw/busbw/#wrong columns is out-of-place, the second in-place. Older versions
//! print `error` (a float, or `N/A` with `-c 0`) instead of `#wrong`, and tools without a reduction or a root
//! leave those columns out; the header says which, so rows are read by the header's layout, from the right
//! (launchers put their own prefixes on the left). Rows of a table quoted without its header are recognised by
//! shape: two integers, a data type nccl-tests knows, then numbers.

use roce_model::fabric::bandwidth::Collective;

use super::Evidence;

/// The nccl-tests results of a log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bandwidth {
    /// Rows (message sizes) read, over all tables.
    pub rows: u64,
    /// The highest bus bandwidth of any row, out-of-place or in-place (GB/s).
    pub peak_busbw: f64,
    /// The message size of that row (bytes).
    pub peak_size: u64,
    /// The bus bandwidth at the largest message size measured, the better of out-of-place and in-place (GB/s).
    pub large_busbw: f64,
    /// That largest size (bytes).
    pub large_size: u64,
    /// `# Avg bus bandwidth` as printed (GB/s), the last one when several tables are in the log.
    pub avg_busbw: Option<f64>,
    /// The sum of the `#wrong` columns.
    pub wrong: u64,
    /// `# Out of bounds values : N` as printed (the last one).
    pub out_of_bounds: Option<u64>,
    /// The nccl-tests binary, as `# Collective test starting: all_reduce_perf` names it (nccl-tests 2.16.7+, June 2025).
    pub tool: Option<String>,
    /// Whether the rows' `redop` column names a reduction (`sum`, …) rather than `none`, when the table has
    /// both a `redop` and a `root` column: tells a reduction table from all_gather/alltoall without the tool.
    pub reduction: Option<bool>,
    /// What the bandwidth was compared with, once [`Explanation::compare_bandwidth`](super::Explanation::compare_bandwidth) ran.
    pub expected: Option<Expected>,
    /// Why no expectation could be derived from the fabric's line rate, when one was asked for and none was.
    pub expected_why_not: Option<String>,
    /// Ranks the nccl-tests header lists (`#  Rank  3 Group  0 Pid 1258 on node2 device  1 [...] NVIDIA H200`).
    pub ranks: u32,
    /// Distinct hosts among them (`on HOST`).
    pub hosts: u32,
}

impl Bandwidth {
    /// The collective the table measured, from the tool's name, else from the `redop` column (a reduction
    /// table is all_reduce, reduce_scatter or reduce, which the line rate treats alike).
    pub fn collective(&self) -> Option<Collective> {
        match (&self.tool, self.reduction) {
            (Some(t), _) => Some(Collective::from_tool(t)),
            (None, Some(true)) => Some(Collective::AllReduce),
            (None, _) => None,
        }
    }
}

/// An expected bus bandwidth and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// GB/s.
    pub busbw: f64,
    /// Where the number comes from (`--expect-busbw`, …).
    pub from: String,
    /// The large-message bus bandwidth as a percentage of it.
    pub percent: f64,
}

/// Column layout from a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// Number of columns.
    width: usize,
    /// Index of the first `time` column (size and count come first).
    time: usize,
}

/// The standard layouts, for rows quoted without their header: size count type redop root + 2×4 (13), or one
/// of redop/root missing (12), or both (11).
const HEADERLESS: [Layout; 3] = [
    Layout { width: 13, time: 5 },
    Layout { width: 12, time: 4 },
    Layout { width: 11, time: 3 },
];

/// Data type names nccl-tests prints (`test_typenames` in `src/common.cu`).
const TYPES: [&str; 14] = [
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
    "f8e4m3", "f8e5m2", "char", "int",
];

/// Reads tables line by line.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    layout: Option<Layout>,
    /// Host names of the header's rank lines (bounded).
    hosts: indexmap::IndexSet<String>,
    result: Bandwidth,
    /// First line showing wrong results.
    pub(crate) wrong_ev: Option<Evidence>,
    /// First row line (the evidence for a bandwidth finding).
    pub(crate) first_row: Option<Evidence>,
}

impl Tables {
    /// Is `line` a table header? Then remember its layout.
    pub(crate) fn header(&mut self, line: &[u8]) -> bool {
        let Some(at) = find!(line, b"size") else {
            return false;
        };
        let cols: Vec<&[u8]> = line[at..]
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if cols.len() < 8 || cols[1] != b"count" || !cols.iter().any(|c| *c == b"busbw") {
            return false;
        }
        let Some(time) = cols.iter().position(|c| *c == b"time") else {
            return false;
        };
        self.layout = Some(Layout {
            width: cols.len(),
            time,
        });
        true
    }

    /// Read a row; `false` when the line is not one. Without a header only lines that start with the size
    /// are tried.
    pub(crate) fn row(&mut self, line: &[u8], ev: impl FnOnce() -> Evidence) -> bool {
        // a row after its header is read from the right, whatever is in front; without one, only a launcher's
        // tag may be
        let line = if self.layout.is_none() {
            untagged(line)
        } else {
            line
        };
        // cheap dismissals first: a row ends in its last #wrong (a count, `N/A`, or an `error` float) and,
        // without a header, starts with the size
        if !line
            .trim_ascii_end()
            .last()
            .is_some_and(|b| b.is_ascii_digit() || *b == b'A')
            || (self.layout.is_none()
                && !line
                    .trim_ascii_start()
                    .first()
                    .is_some_and(u8::is_ascii_digit))
        {
            return false;
        }
        let toks: Vec<&[u8]> = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        let layouts: &[Layout] = match &self.layout {
            Some(l) => std::slice::from_ref(l),
            None => &HEADERLESS,
        };
        for l in layouts {
            if toks.len() < l.width {
                continue;
            }
            let row = &toks[toks.len() - l.width..];
            if self.layout.is_none() && toks.len() != l.width {
                continue;
            }
            if let Some(r) = parse_row(row, *l) {
                self.add(r, ev);
                return true;
            }
        }
        false
    }

    fn add(&mut self, r: Row, ev: impl FnOnce() -> Evidence) {
        let b = &mut self.result;
        b.rows += 1;
        if b.reduction.is_none() {
            b.reduction = r.reduction;
        }
        let best = r.busbw.iter().copied().fold(0.0_f64, f64::max);
        if best > b.peak_busbw || b.rows == 1 {
            b.peak_busbw = best;
            b.peak_size = r.size;
        }
        if r.size >= b.large_size {
            b.large_size = r.size;
            b.large_busbw = best;
        }
        if self.first_row.is_none() || (r.wrong > 0 && self.wrong_ev.is_none()) {
            let e = ev();
            if r.wrong > 0 && self.wrong_ev.is_none() {
                self.wrong_ev = Some(e.clone());
            }
            if self.first_row.is_none() {
                self.first_row = Some(e);
            }
        }
        b.wrong = b.wrong.saturating_add(r.wrong);
    }

    /// `# Out of bounds values : 3 FAILED` / `# Avg bus bandwidth    : 84.8558`, and the tool's name from
    /// `# Collective test starting: all_reduce_perf` (printed before each table since nccl-tests 2.16.7).
    pub(crate) fn summary(&mut self, line: &[u8], ev: impl FnOnce() -> Evidence) -> bool {
        if let Some(at) = find!(line, b"#  Rank ") {
            return self.rank_line(&line[at + 1..]);
        }
        if let Some(v) = value_after(line, finder!(b"Collective test starting")) {
            if let Some(t) = v.split(|b| b.is_ascii_whitespace()).find(|t| !t.is_empty()) {
                self.result.tool = Some(String::from_utf8_lossy(t).into_owned());
            }
            return true;
        }
        if let Some(v) = value_after(line, finder!(b"Out of bounds values")) {
            let n = v
                .split(|b| b.is_ascii_whitespace())
                .find(|t| !t.is_empty())
                .and_then(|t| std::str::from_utf8(t).ok()?.parse::<u64>().ok());
            if let Some(n) = n {
                self.result.out_of_bounds = Some(n);
                if n > 0 && self.wrong_ev.is_none() {
                    self.wrong_ev = Some(ev());
                }
            }
            self.layout = None;
            return true;
        }
        if let Some(v) = value_after(line, finder!(b"Avg bus bandwidth")) {
            self.result.avg_busbw = std::str::from_utf8(v.trim_ascii())
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|f| f.is_finite());
            self.layout = None;
            return true;
        }
        false
    }

    /// `Rank  3 Group  0 Pid   1258 on  node2 device  1 [0000:18:00] NVIDIA H200` (after the `#`).
    fn rank_line(&mut self, line: &[u8]) -> bool {
        let toks: Vec<&[u8]> = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        let Some(rank) = (toks.len() >= 8 && toks[0] == b"Rank" && toks[6] == b"on")
            .then(|| std::str::from_utf8(toks[1]).ok()?.parse::<u32>().ok())
            .flatten()
        else {
            return false;
        };
        let b = &mut self.result;
        b.ranks = b.ranks.max(rank.saturating_add(1));
        if self.hosts.len() < 4096 {
            self.hosts
                .insert(String::from_utf8_lossy(toks[7]).into_owned());
        }
        b.hosts = u32::try_from(self.hosts.len()).unwrap_or(u32::MAX);
        true
    }

    /// The results, when any row or summary was read.
    pub(crate) fn finish(&self) -> Option<Bandwidth> {
        let b = &self.result;
        (b.rows > 0 || b.avg_busbw.is_some() || b.out_of_bounds.is_some()).then(|| b.clone())
    }

    /// Fold another file's tables into these.
    pub(crate) fn merge(&mut self, o: Tables) {
        let (a, b) = (&mut self.result, o.result);
        if b.rows > 0 {
            if b.peak_busbw > a.peak_busbw || a.rows == 0 {
                a.peak_busbw = b.peak_busbw;
                a.peak_size = b.peak_size;
            }
            if b.large_size >= a.large_size {
                a.large_size = b.large_size;
                a.large_busbw = b.large_busbw;
            }
        }
        a.rows += b.rows;
        a.wrong = a.wrong.saturating_add(b.wrong);
        a.avg_busbw = b.avg_busbw.or(a.avg_busbw);
        a.tool = b.tool.or(a.tool.take());
        a.ranks = a.ranks.max(b.ranks);
        a.reduction = a.reduction.or(b.reduction);
        a.out_of_bounds = b.out_of_bounds.or(a.out_of_bounds);
        self.wrong_ev = self.wrong_ev.take().or(o.wrong_ev);
        self.first_row = self.first_row.take().or(o.first_row);
        for h in o.hosts {
            if self.hosts.len() < 4096 {
                self.hosts.insert(h);
            }
        }
        self.result.hosts = u32::try_from(self.hosts.len()).unwrap_or(u32::MAX);
    }
}

/// The numbers of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    size: u64,
    busbw: [f64; 2],
    wrong: u64,
    /// `redop` is a reduction (not `none`); known when the layout has both `redop` and `root`.
    reduction: Option<bool>,
}

fn parse_row(t: &[&[u8]], l: Layout) -> Option<Row> {
    let int = |b: &[u8]| std::str::from_utf8(b).ok()?.parse::<u64>().ok();
    let float = |b: &[u8]| {
        std::str::from_utf8(b)
            .ok()?
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
    };
    let size = int(t[0])?;
    int(t[1])?;
    let ty = std::str::from_utf8(t[2]).ok()?;
    if !TYPES.contains(&ty) {
        return None;
    }
    // two groups of time, algbw, busbw, wrong/error after the leading columns
    if l.time + 8 != l.width {
        return None;
    }
    let mut busbw = [0.0; 2];
    let mut wrong = 0u64;
    for (g, bw) in busbw.iter_mut().enumerate() {
        let at = l.time + 4 * g;
        float(t[at])?;
        float(t[at + 1])?;
        *bw = float(t[at + 2])?;
        let w = t[at + 3];
        if w == b"N/A" {
            continue;
        }
        match int(w) {
            Some(n) => wrong = wrong.saturating_add(n),
            // the older `error` column: a float (`1e-07`), which is not a count of wrong values
            None => {
                float(w)?;
            }
        }
    }
    // size count type redop root: the fourth column is the reduction
    let reduction = (l.time == 5).then(|| t[3] != b"none");
    Some(Row {
        size,
        busbw,
        wrong,
        reduction,
    })
}

/// A row without its launcher's tag: kubectl's `[pod/NAME/CONTAINER] `, mpirun's `[1,0]<stdout>:`, srun's
/// `0: `.
fn untagged(line: &[u8]) -> &[u8] {
    let t = line.trim_ascii_start();
    if t.first() == Some(&b'[')
        && let Some(close) = memchr::memchr(b']', t)
    {
        let rest = &t[close + 1..];
        return rest
            .strip_prefix(b"<stdout>:")
            .or_else(|| rest.strip_prefix(b"<stderr>:"))
            .unwrap_or(rest);
    }
    match memchr::memchr(b':', t) {
        Some(c) if (1..=6).contains(&c) && t[..c].iter().all(u8::is_ascii_digit) => &t[c + 1..],
        _ => t,
    }
}

/// The value after `label` and its colon.
fn value_after<'a>(line: &'a [u8], label: &memchr::memmem::Finder<'_>) -> Option<&'a [u8]> {
    let at = label.find(line)?;
    let rest = &line[at + label.needle().len()..];
    let colon = memchr::memchr(b':', rest)?;
    Some(&rest[colon + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev() -> Evidence {
        Evidence::new("t", 1, b"")
    }

    #[test]
    fn rows_by_header_and_prefix() {
        let mut t = Tables::default();
        assert!(t.header(b"[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"));
        assert!(t.row(b"[1,0]<stdout>:     1048576        262144     float     sum      -1    28.15   37.25   65.19      0    27.52   38.10   66.67      0", ev));
        assert!(t.row(b"[1,0]<stdout>:     2097152        524288     float     sum      -1    37.03   56.64   99.11      3    35.22   59.55  104.21      0", ev));
        assert!(!t.row(b"[1,0]<stdout>:# Using devices", ev));
        let b = t.finish().unwrap();
        assert_eq!((b.rows, b.wrong), (2, 3));
        assert_eq!((b.peak_busbw, b.peak_size), (104.21, 2097152));
        assert_eq!((b.large_busbw, b.large_size), (104.21, 2097152));
    }

    #[test]
    fn old_error_column_and_na() {
        let mut t = Tables::default();
        assert!(t.header(b"#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error"));
        assert!(t.row(b"           8             2   float       0    45.82    0.00    0.00    N/A    38.17    0.00    0.00    N/A", ev));
        let mut t = Tables::default();
        assert!(t.row(b"           8             2     float     sum    40.17    0.00    0.00  1e-07    62.08    0.00    0.00  0e+00", ev));
        assert_eq!(
            t.finish().unwrap().wrong,
            0,
            "a float error is not a wrong count"
        );
    }

    #[test]
    fn headerless_rows_behind_a_launcher_tag() {
        let row = "    67108864      16777216     float     sum      -1  36321.8    1.85    1.85       0  36316.1    1.85    1.85       0";
        for tag in ["[pod/job-worker-0/nccl-tests]", "[1,0]<stdout>:", "3:", ""] {
            let mut t = Tables::default();
            assert!(t.row(format!("{tag}{row}").as_bytes(), ev), "{tag:?}");
            assert_eq!(t.finish().unwrap().large_busbw, 1.85);
        }
        // anything else in front is not a row
        let mut t = Tables::default();
        assert!(!t.row(format!("loss 0.5{row}").as_bytes(), ev));
        assert!(!t.row(format!("1234567:{row}").as_bytes(), ev));
    }

    #[test]
    fn headerless_rows_need_their_shape() {
        let mut t = Tables::default();
        assert!(t.row(b"   131072008      32768002     float     sum      -1   2604.6   50.32   96.45      0   2630.6   49.83   95.50      0", ev));
        assert!(!t.row(
            b"2025-04-25T06:44:24.787Z  INFO prefill_worker.generate: loaded",
            ev
        ));
        assert!(!t.row(b"12 34 apples sum -1 1 2 3 0 1 2 3 0", ev));
        assert!(!t.row(b"", ev));
    }

    #[test]
    fn summaries() {
        let mut t = Tables::default();
        assert!(t.summary(b"# Out of bounds values : 248 FAILED", ev));
        assert!(t.summary(b"[1,0]<stdout>:# Avg bus bandwidth    : 92.3405 ", ev));
        let b = t.finish().unwrap();
        assert_eq!((b.out_of_bounds, b.avg_busbw), (Some(248), Some(92.3405)));
        assert!(t.wrong_ev.is_some());
        assert!(!t.summary(b"# nThread 1 nGpus 1", ev));
    }
}
