//! Lines that are not NCCL's own but report what NCCL did: PyTorch's ProcessGroupNCCL errors and watchdog,
//! nccl-tests failures, NIXL errors, Python tracebacks.
//!
//! PyTorch turns a failed NCCL call into `DistBackendError: NCCL error in: <file>:<line>, <ncclGetErrorString>,
//! NCCL version <v>` followed by `<ncclResult name>: <description>`, `Last error:` and the text of NCCL's last
//! WARN (`ncclGetLastError`, which `src/debug.cc` fills from every WARN): `getNcclErrorDetailStr` in
//! `torch/csrc/distributed/c10d/NCCLUtils.cpp` (`.hpp` before 2.2). That text is read as the WARN it was, so a
//! log without NCCL_DEBUG still names the cause. The watchdog (`ProcessGroupNCCL::Watchdog`, same directory)
//! prints `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…, OpType=…, Timeout(ms)=…) ran for …
//! milliseconds before timing out` and, when its own thread hangs, `watchdog got stuck for N seconds`.
//! nccl-tests' `NCCLCHECK` prints `Test NCCL failure <file>:<line> '<ncclGetErrorString> / <last error>'`
//! (`NCCL failure …` before 2.x; `src/common.h`). NIXL reports backend failures as `NIXL_ERR_BACKEND` and
//! friends (`nixl_types.h`), in its glog lines and Python exceptions.

use roce_model::Code;

use super::line::{self, after, text};
use super::{Explainer, FATAL_MAX};

/// `nccl<Result>:` names PyTorch prints before `Last error:` (`ncclResult_t`, `src/nccl.h.in`).
const RESULT_NAMES: [&[u8]; 6] = [
    b"ncclUnhandledCudaError",
    b"ncclSystemError",
    b"ncclInternalError",
    b"ncclInvalidArgument",
    b"ncclInvalidUsage",
    b"ncclRemoteE",
];

impl Explainer {
    /// A line that is not an NCCL INFO/WARN line or a UCX line; `true` when it was understood.
    pub(super) fn other_line(&mut self, line: &[u8]) -> bool {
        let find = |n: &[u8]| memchr::memmem::find(line, n);
        if let Some(at) = find(b"Watchdog caught collective operation timeout") {
            self.watchdog(line, &line[at..], "timeout");
            return true;
        }
        if find(b"watchdog got stuck").is_some() || find(b"Watchdog got stuck").is_some() {
            self.watchdog(line, line, "stuck");
            return true;
        }
        if let Some(at) = find(b"NCCL error in:") {
            let rest = &line[at..];
            if let Some(v) = after(rest, b"NCCL version ") {
                let w = line::word(v);
                let v = text(&w[..w.iter().position(|b| *b == b'+').unwrap_or(w.len())]);
                self.facts.torch_version.get_or_insert(v);
            }
            self.fatal(line, format!("PyTorch: {}", text(rest)));
            self.facts.torch_pending = 3;
            return true;
        }
        if find(b"Some NCCL operations have failed or timed out").is_some() {
            self.fatal(
                line,
                "PyTorch: some NCCL operations failed or timed out".into(),
            );
            return true;
        }
        if let Some(at) = find(b"NCCL failure ") {
            // nccl-tests: `Test NCCL failure common.cu:1279 'unhandled system error (…) / '`
            let m = text(&line[at..]);
            self.fatal(line, format!("nccl-tests: {m}"));
            return true;
        }
        if RESULT_NAMES.iter().any(|n| find(n).is_some()) && find(b": ").is_some() {
            // `ncclInvalidUsage: This usually reflects …`: NCCL's last WARN follows (after `Last error:`)
            self.facts.torch_pending = 3;
            return true;
        }
        if find(b"Last error:").is_some() {
            self.facts.torch_pending = 2;
            return true;
        }
        if let Some(at) = find(b"NIXL_ERR_") {
            self.nixl(line, at);
            return true;
        }
        if find(b"Traceback (most recent call last)").is_some() {
            if self.facts.traceback.is_none() {
                self.facts.traceback = Some(self.evidence(line));
            }
            return true;
        }
        false
    }

    /// A line under PyTorch's `Last error:`: the text of NCCL's last WARN, read as one.
    pub(super) fn torch_last_error(&mut self, line: &[u8]) {
        let msg = strip_tags(line).trim_ascii();
        if msg.is_empty() || msg.starts_with(b"Last error:") {
            return;
        }
        self.facts.torch_pending = 0;
        if msg.starts_with(b"Exception raised from") || msg.starts_with(b"frame #") {
            return;
        }
        self.facts.warn_text_lines += 1;
        if !self.dispatch(None, msg, line, true) {
            self.generic_warning(None, msg, line);
        }
    }

    fn watchdog(&mut self, line: &[u8], rest: &[u8], key: &str) {
        let ev = self.evidence(line);
        let op = after(rest, b"OpType=").map(|o| {
            text(
                &o[..o
                    .iter()
                    .position(|b| *b == b',' || *b == b')')
                    .unwrap_or(o.len())],
            )
        });
        let timeout = after(rest, b"Timeout(ms)=").map(|o| {
            text(
                &o[..o
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .unwrap_or(o.len())],
            )
        });
        let stuck = key == "stuck";
        self.fatal(line, "PyTorch watchdog".into());
        self.found(Code::ExplainWatchdogTimeout, key, None, ev, || {
            let message = if stuck {
                "PyTorch's NCCL watchdog thread got stuck: an NCCL or CUDA call hung".to_string()
            } else {
                let what = match (&op, &timeout) {
                    (Some(o), Some(t)) => format!(" ({o}, timeout {t} ms)"),
                    (Some(o), None) => format!(" ({o})"),
                    (None, Some(t)) => format!(" (timeout {t} ms)"),
                    (None, None) => String::new(),
                };
                format!("PyTorch's watchdog aborted a collective that did not finish in time{what}")
            };
            (
                message,
                "a collective hangs when a rank stops calling it (crashed, stuck, or running different code) or the network stalls: find the first rank that stopped (`last enqueued/completed NCCL work` differ per rank) and its log; with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET look for IB completion errors or a socket fallback before the timeout; TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_DUMP_ON_TIMEOUT=1 dump what each rank was doing".into(),
            )
        });
    }

    fn nixl(&mut self, line: &[u8], at: usize) {
        let status = text(
            &line[at..at
                + line[at..]
                    .iter()
                    .position(|b| !(b.is_ascii_uppercase() || *b == b'_'))
                    .unwrap_or(line.len() - at)],
        );
        let ev = self.evidence(line);
        self.fatal(line, format!("NIXL: {status}"));
        let s = status.clone();
        self.found(Code::ExplainNixlError, &status, None, ev, || {
            (
                format!("NIXL reported {s}: a transfer backend failed"),
                "NIXL_ERR_BACKEND carries the backend's own error (UCX for the UCX backend): look at the UCX ERROR lines before it; UCX_LOG_LEVEL=info shows the transports UCX selected".into(),
            )
        });
    }

    /// Record evidence that the job (or an NCCL call) failed.
    pub(super) fn fatal(&mut self, line: &[u8], what: String) {
        if self.facts.fatal.len() < FATAL_MAX {
            let ev = self.evidence(line);
            self.facts.fatal.push((ev, what));
        }
    }
}

/// Strip launcher tags before a message: `[rank2]: `, `host-1: `, `201: ` (one token ending in `:`), up to three.
fn strip_tags(mut line: &[u8]) -> &[u8] {
    for _ in 0..3 {
        let t = line.trim_ascii_start();
        let end = t
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(t.len());
        let tok = &t[..end];
        if tok.len() > 1 && tok.ends_with(b":") && end < t.len() {
            line = &t[end..];
        } else {
            return t;
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_stripped() {
        assert_eq!(
            strip_tags(b"[rank2]: Cuda failure 802 'x'"),
            b"Cuda failure 802 'x'"
        );
        assert_eq!(
            strip_tags(b"rdma-test-gpu-worker-1: Cuda failure 'initialization error'"),
            b"Cuda failure 'initialization error'"
        );
        assert_eq!(
            strip_tags(b"Duplicate GPU detected : rank 3"),
            b"Duplicate GPU detected : rank 3"
        );
        assert_eq!(
            strip_tags(b"NET/IB : Got completion"),
            b"NET/IB : Got completion"
        );
    }
}
