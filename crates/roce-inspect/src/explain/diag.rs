//! NCCL's own diagnostics: the `NCCL DIAG` report `NCCL_RUN_DIAGNOSTICS=1` prints (NCCL 2.31+).
//!
//! `ncclRunDiagnostics` (`src/diagnostics.cc`) runs at every communicator initialization; rank 0's process
//! prints `=== NCCL Diagnostics ===`, the results and `NCCL diagnostics completed in X ms across N ranks`, and a
//! rank prints the results that concern it. Every line is `<host>:<pid> NCCL DIAG <text>` on stdout
//! (`DIAG_PRINT`, `src/include/diagnostics_log.h`). A result is `[<TAG>] <check>: <text>`, where NCCL prints two
//! tags: `[OK]` (the check passed) and `[INFO]`, which marks notices a healthy system prints too and problems
//! alike (a failed verification, or a step of the check that could not run: "Diagnostics", NCCL user guide).
//! The checks are `net bw` (perftest's `ib_write_bw` between node pairs, `src/diagnostics/ib_write_bw.cc`) and
//! `p2p` (GPU peer writes and reads within a node, `src/diagnostics/p2p.cc`). The report is informational: NCCL
//! carries on whatever it says.
//!
//! Every result is kept (grouped by tag, check and text, the ` in comm 0x…` suffix dropped) for the JSON's
//! `diagnostics` and the report; a result that is neither `[OK]` nor one of the notices NCCL's sources print on
//! healthy systems becomes `roce::explain::nccl_diagnostic`. Tags other than the two are kept as printed and
//! treated like `[INFO]`.

use roce_model::Code;

use super::line::text;
use super::{Evidence, Explainer};

/// Distinct results kept.
pub(super) const DIAG_MAX: usize = 256;

/// One result of NCCL's diagnostics, with how many lines printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The tag as NCCL printed it, without brackets: `OK` or `INFO`.
    pub level: String,
    /// The check (`net bw`, `p2p`), when the line names one.
    pub check: Option<String>,
    /// The result, after the check's name and without the ` in comm 0x…` suffix.
    pub message: String,
    /// One of the notices NCCL prints on healthy systems too (not a problem).
    pub notice: bool,
    /// Lines that printed it (each rank, each communicator).
    pub count: u64,
    /// The first of them.
    pub evidence: Evidence,
}

impl Diagnostic {
    /// A result worth a finding: not `[OK]` and not a notice.
    pub fn flagged(&self) -> bool {
        self.level != "OK" && !self.notice
    }
}

/// The grouping key of a result: (tag, check, text).
pub(super) type DiagKey = (String, Option<String>, String);

/// `[INFO] net bw: required external tool missing in comm 0x94…` → (`INFO`, `net bw`, `required external tool
/// missing`); `None` for the report's header and completion lines.
pub(super) fn parse(msg: &[u8]) -> Option<DiagKey> {
    let msg = msg.trim_ascii();
    let inner = msg.strip_prefix(b"[")?;
    let close = memchr::memchr(b']', inner)?;
    let tag = &inner[..close];
    if tag.is_empty() || tag.len() > 16 || !tag.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let rest = inner[close + 1..].trim_ascii_start();
    // `net bw: …`, `p2p: …`; `transport detect returned 3` names no check
    let (check, body) = match memchr::memmem::find(rest, b": ") {
        Some(i)
            if i <= 24
                && rest[..i].iter().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b' ' | b'_' | b'-')
                }) =>
        {
            (Some(text(&rest[..i])), &rest[i + 2..])
        }
        _ => (None, rest),
    };
    Some((text(tag), check, text(strip_comm(body))))
}

/// `… in comm 0x948110eafb29b495` → `…`: every communicator repeats the result with its own hash.
fn strip_comm(b: &[u8]) -> &[u8] {
    let b = b.trim_ascii_end();
    if let Some(i) = memchr::memmem::rfind(b, b" in comm 0x") {
        let hex = &b[i + b" in comm 0x".len()..];
        if !hex.is_empty() && hex.iter().all(u8::is_ascii_hexdigit) {
            return &b[..i];
        }
    }
    b
}

/// The `[INFO]` lines NCCL prints on healthy systems: a rank with several NICs (only the first is measured),
/// NICs shared by ranks (`ib_write_bw.cc`), peer access enabled for the check (`p2p.cc`).
fn is_notice(check: Option<&str>, message: &str) -> bool {
    match check {
        Some("net bw") => {
            message.starts_with("multiple net devices per rank detected")
                || message.starts_with("net devices are shared across ranks")
        }
        Some("p2p") => message.starts_with("temporarily enabled context-wide CUDA peer access"),
        _ => false,
    }
}

impl Explainer {
    /// A `NCCL DIAG` line.
    pub(super) fn diag(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let Some(key) = parse(msg) else {
            // the report's header (`=== NCCL Diagnostics ===`) and `NCCL diagnostics completed in …`
            return;
        };
        if let Some(d) = self.diags.get_mut(&key) {
            d.count += 1;
        } else if self.diags.len() < DIAG_MAX {
            let (level, check, message) = key.clone();
            let notice = is_notice(check.as_deref(), &message);
            let ev = self.evidence(line);
            self.diags.insert(
                key.clone(),
                Diagnostic {
                    level,
                    check,
                    message,
                    notice,
                    count: 1,
                    evidence: ev,
                },
            );
        }
        let Some(d) = self.diags.get(&key) else {
            return;
        };
        if !d.flagged() {
            return;
        }
        let check = d.check.clone().unwrap_or_default();
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        // composed at the end (`verdict.rs`), where every result of the check is known
        self.found(
            Code::ExplainNcclDiagnostic,
            &check,
            host.as_deref(),
            ev,
            || (String::new(), String::new()),
        );
    }
}

/// The message and help of `roce::explain::nccl_diagnostic` for one check, from its flagged results.
pub(super) fn finding_text(check: &str, results: &[&Diagnostic]) -> (String, String) {
    const SHOWN: usize = 3;
    let mut list: Vec<String> = results
        .iter()
        .take(SHOWN)
        .map(|d| format!("[{}] {}", d.level, d.message))
        .collect();
    if results.len() > SHOWN {
        list.push(format!("and {} more", results.len() - SHOWN));
    }
    let what = if check.is_empty() {
        "NCCL's diagnostics (NCCL_RUN_DIAGNOSTICS) flagged a result".to_string()
    } else {
        format!("NCCL's diagnostics (NCCL_RUN_DIAGNOSTICS) flagged the {check} check")
    };
    let message = format!("{what}: {}", list.join("; "));
    let has = |needles: &[&str]| {
        results
            .iter()
            .any(|d| needles.iter().any(|n| d.message.contains(n)))
    };
    let mut help: Vec<&str> = Vec::new();
    match check {
        "net bw" => {
            if has(&["tool missing"]) {
                help.push("the check runs perftest's `ib_write_bw` between pairs of nodes (src/diagnostics/ib_write_bw.cc) and the container has none: install perftest in the image to have NCCL measure the network");
            }
            if has(&[
                "does not support IB",
                "no usable IB device",
                "cannot resolve the selected IB device",
            ]) {
                help.push("the check measures only the IB verbs device NCCL chose for channel 0, and this communicator has none: see the transport above");
            }
            if has(&["off median"]) {
                help.push("a rank's NIC moved more than 30 % less (or more) than the median: check that node's link rate and width (`ibstat`), its PCIe slot and the cable or switch port");
            }
            if has(&["setup failed on rank"]) {
                help.push("a rank could not take part: its own `net bw` line says why");
            }
            if help.is_empty() {
                help.push("NCCL's network check (perftest's `ib_write_bw` between pairs of nodes, src/diagnostics/ib_write_bw.cc) did not pass: the lines name the ranks, hosts and devices");
            }
        }
        "p2p" => help.push("NCCL's P2P check writes and reads GPU memory between the GPUs of a node (src/diagnostics/p2p.cc) and some transfers failed or could not be set up: the line names the GPU pair, the path and NCCL's advice; `nvidia-smi topo -m` and `nvidia-smi topo -p2p n` (NVLink) or `-p2p p` (PCIe: IOMMU mode, ACS) check the pair, `nvidia-imex-ctl -H -N` an NVLink domain across trays"),
        _ => help.push("NCCL flagged it for review: read the NCCL DIAG lines around it"),
    }
    let mut help = help.join("; ");
    help.push_str(
        "; NCCL's diagnostics are informational: a reported issue does not fail communicator initialization",
    );
    (message, help)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_split_into_tag_check_and_text() {
        assert_eq!(
            parse(b"[INFO] net bw: required external tool missing in comm 0x948110eafb29b495"),
            Some((
                "INFO".into(),
                Some("net bw".into()),
                "required external tool missing".into()
            ))
        );
        assert_eq!(
            parse(b"[OK]   p2p: verified P2P access in both directions between every GPU pair (56 peer accesses)"),
            Some((
                "OK".into(),
                Some("p2p".into()),
                "verified P2P access in both directions between every GPU pair (56 peer accesses)".into()
            ))
        );
        assert_eq!(
            parse(b"[INFO] transport detect returned 3"),
            Some(("INFO".into(), None, "transport detect returned 3".into()))
        );
        // the check name is a short lower-case word; a colon further on is part of the text
        assert_eq!(
            parse(b"[INFO] net bw: failed: no usable IB device in comm 0x1"),
            Some((
                "INFO".into(),
                Some("net bw".into()),
                "failed: no usable IB device".into()
            ))
        );
        assert_eq!(parse(b"=== NCCL Diagnostics ==="), None);
        assert_eq!(
            parse(b"NCCL diagnostics completed in 6.2 ms across 2 ranks"),
            None
        );
        assert_eq!(parse(b"[0] not a tag"), None);
    }

    #[test]
    fn notices_of_healthy_systems_are_not_flagged() {
        assert!(is_notice(
            Some("net bw"),
            "net devices are shared across ranks, concurrent use can lower the bandwidth"
        ));
        assert!(!is_notice(Some("net bw"), "required external tool missing"));
        assert!(!is_notice(None, "net devices are shared across ranks"));
    }
}
