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
//! friends (`nixl_types.h`), in its glog lines and Python exceptions. vLLM's own NCCL wrapper (pynccl) raises
//! `RuntimeError: NCCL error: <ncclGetErrorString>` for a failed call.

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

/// The start of each failure's text from `ncclGetErrorString` (`src/init.cc`), as vLLM's pynccl quotes it after
/// `NCCL error: `.
const NCCL_ERROR_STRINGS: [&[u8]; 6] = [
    b"unhandled cuda error",
    b"unhandled system error",
    b"internal error",
    b"invalid argument",
    b"invalid usage",
    b"remote process exited",
];

impl Explainer {
    /// A line that is not an NCCL INFO/WARN line or a UCX line; `true` when it was understood.
    pub(super) fn other_line(&mut self, line: &[u8]) -> bool {
        if let Some(at) = find!(line, b"Watchdog caught collective operation timeout") {
            self.watchdog(line, &line[at..], "timeout");
            return true;
        }
        if find!(line, b"watchdog got stuck").is_some()
            || find!(line, b"Watchdog got stuck").is_some()
        {
            self.watchdog(line, line, "stuck");
            return true;
        }
        if let Some(at) = find!(line, b"NCCL error in:") {
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
        if let Some(at) = find!(line, b"NCCL error: ")
            && NCCL_ERROR_STRINGS
                .iter()
                .any(|e| line[at + 12..].starts_with(e))
        {
            // vLLM's pynccl (`NCCL_CHECK`, vllm/distributed/device_communicators/pynccl_wrapper.py) raises
            // `RuntimeError(f"NCCL error: {error_str}")` with ncclGetErrorString's text of the failed call
            self.fatal(line, text(&line[at..]));
            return true;
        }
        if find!(line, b"Some NCCL operations have failed or timed out").is_some() {
            self.fatal(
                line,
                "PyTorch: some NCCL operations failed or timed out".into(),
            );
            return true;
        }
        if let Some(at) = find!(line, b"NCCL failure ") {
            // nccl-tests: `Test NCCL failure common.cu:1279 'unhandled system error (…) / '`
            let m = text(&line[at..]);
            self.fatal(line, format!("nccl-tests: {m}"));
            return true;
        }
        static RESULT_FINDERS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 6]> =
            std::sync::LazyLock::new(|| RESULT_NAMES.map(memchr::memmem::Finder::new));
        if RESULT_FINDERS.iter().any(|n| n.find(line).is_some()) && find!(line, b": ").is_some() {
            // `ncclInvalidUsage: This usually reflects …`: NCCL's last WARN follows (after `Last error:`)
            self.facts.torch_pending = 3;
            return true;
        }
        if find!(line, b"Last error:").is_some() {
            self.facts.torch_pending = 2;
            return true;
        }
        if let Some(at) = find!(line, b"Failed to create engine: ") {
            // NIXL `backend_plugin.h`: why the backend's engine was not made (the UCX context, …)
            let why = text(&line[at + 25..]);
            self.facts.nixl_engine_error.get_or_insert(why);
            return true;
        }
        if let Some(at) = find!(line, b"backend creation failed for ") {
            // NIXL `nixl_agent.cpp` createBackend
            let name = text(&line[at + 28..]).trim_matches('\'').to_string();
            self.nixl_backend(line, name);
            return true;
        }
        if let Some(at) = find!(line, b"NIXL_ERR_") {
            self.nixl(line, at);
            return true;
        }
        if find!(line, b"] NIXL ").is_some()
            || find!(line, b" nixl_")
                .is_some_and(|at| find!(line, b".cpp:").is_some_and(|c| c > at))
        {
            // NIXL's glog lines (`I1203 06:16:22.815009 23277 nixl_agent.cpp:1000] Selected backend: UCX`,
            // `ucx_plugin.cpp:51] NIXL UCX backend bound to UCX 1.23.0 at …`): its agent at work
            return true;
        }
        if find!(line, b"Traceback (most recent call last)").is_some() {
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

    /// NIXL could not create a backend (`createBackend: backend creation failed for 'UCX'`).
    fn nixl_backend(&mut self, line: &[u8], name: String) {
        let ev = self.evidence(line);
        self.fatal(line, format!("NIXL: backend {name} not created"));
        let why = self.facts.nixl_engine_error.clone();
        self.found(Code::ExplainNixlError, &format!("backend {name}"), None, ev, || {
            let why = why.map(|w| format!(": {w}")).unwrap_or_default();
            (
                format!("NIXL could not create its {name} backend{why}"),
                "the agent has no transfer backend, so every transfer through it fails: the backend's own errors before this line say why (for UCX: the UCX_TLS / UCX_NET_DEVICES entries it could not use, or no RDMA device in the pod)".into(),
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

/// Strip what launchers and log collectors put before a message (up to eight tokens): tags ending in `:`
/// (`[rank2]:`, `host-1:`, `201:`, `[1,0]<stdout>:`), bracketed tags (`[pod/trainer-0/main]`, `kubectl logs
/// --prefix`), timestamps and dates (`2026-03-13T22:26:02.1Z`, `Fri Aug 11 12:31:45`), `|` separators and
/// the remnant of an ANSI colour code (`[0m`). A capitalised word with a colon (`Error: network IB not found.`)
/// is the message, not a tag.
fn strip_tags(line: &[u8]) -> &[u8] {
    let mut rest = line.trim_ascii_start();
    // `mpirun --tag-output` glues its tag to the text: `[1,0]<stderr>:Duplicate GPU detected …`
    for tag in [&b"<stdout>:"[..], b"<stderr>:"] {
        if let Some(i) = memchr::memmem::find(&rest[..rest.len().min(96)], tag) {
            rest = rest[i + tag.len()..].trim_ascii_start();
            break;
        }
    }
    for _ in 0..8 {
        // a bracketed tag, glued to what follows or not: `[default0]:Error: …`, `[pod/x/main] …`
        if rest.first() == Some(&b'[')
            && let Some(close) = memchr::memchr(b']', rest)
            && !rest[1..close].iter().any(u8::is_ascii_whitespace)
        {
            let after = &rest[close + 1..];
            rest = after.strip_prefix(b":").unwrap_or(after).trim_ascii_start();
            continue;
        }
        let end = rest
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len());
        if end == rest.len() || !is_tag(&rest[..end]) {
            break;
        }
        rest = rest[end..].trim_ascii_start();
    }
    rest
}

fn is_tag(t: &[u8]) -> bool {
    const DAYS_MONTHS: [&[u8]; 19] = [
        b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun", b"Jan", b"Feb", b"Mar", b"Apr",
        b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
    ];
    let word = |w: &[u8]| {
        w.first().is_some_and(u8::is_ascii_uppercase) && w.iter().all(u8::is_ascii_alphabetic)
    };
    if let Some(w) = t.strip_suffix(b":") {
        return !w.is_empty() && !word(w);
    }
    t == b"|"
        || DAYS_MONTHS.contains(&t)
        || (t.first().is_some_and(u8::is_ascii_digit)
            && t.iter()
                .all(|b| b.is_ascii_digit() || b"-:.TZ+,".contains(b)))
        || (t.starts_with(b"[")
            && t.ends_with(b"m")
            && t[1..t.len() - 1]
                .iter()
                .all(|b| b.is_ascii_digit() || *b == b';'))
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
        assert_eq!(
            strip_tags(
                b"[pod/trainer-0/main] 2026-03-13T22:26:02.123456789Z Error: network IB not found."
            ),
            b"Error: network IB not found."
        );
        assert_eq!(
            strip_tags(b"Fri Aug 11 12:31:45 2023[1,0]<stdout>:Duplicate GPU detected"),
            b"Duplicate GPU detected"
        );
        assert_eq!(
            strip_tags(b"  | 2024-12-04T05:27:39.074Z | [0m Cuda failure 800 'x'"),
            b"Cuda failure 800 'x'"
        );
    }
}
