//! Handlers for UCX lines (UCX 1.x): completion errors from `ib_mlx5_log.c`/`rc_verbs_iface.c`, unreachable
//! destinations, and the effective-configuration dump.

use roce_model::Code;

use super::Explainer;
use super::line::{self, after, text, word};

impl Explainer {
    pub(super) fn ucx_line(&mut self, line: &[u8]) {
        let find = |n: &[u8]| memchr::memmem::find(line, n).is_some();
        let who = line::ucx_who(line);
        let pi = who.map(|w| self.proc_of(w.key, w.host, None));
        let host = self.host_of(pi);
        let mut recognised = true;
        if find(b"/RoCE") {
            self.facts.ucx_roce = true;
        } else if find(b"/IB ") || find(b"/IB)") {
            self.facts.ucx_ib = true;
        }
        if let Some(key) = self.ucx_retry_key.take()
            && find(b"QP 0x")
            && find(b"wqe[")
        {
            self.ucx_wqe(&key, line);
            self.bump_ucx();
            return;
        }
        if find(b"env variable:") {
            self.ucx_env(line);
        } else if find(b"retry count exceeded") {
            let dev = after(line, b" on ")
                .map(|d| text(word(d)))
                .unwrap_or_default();
            let what = if find(b"Receive-no-ready") || find(b"RNR") {
                "receiver-not-ready"
            } else {
                "transport"
            };
            let ev = self.evidence(line);
            let key = format!("{what} {dev}");
            self.found(Code::ExplainUcxRetryExceeded, &key, host.as_deref(), ev, || {
                (
                    format!("UCX: {what} retry count exceeded on {dev}: the peer never acknowledged"),
                    "the peer is unreachable over RDMA: on RoCE set UCX_IB_GID_INDEX to the RoCE v2 GID of the routable address (not link-local fe80; `show_gids` or `roce doctor` lists them) and UCX_IB_TRAFFIC_CLASS to the fabric's class (openucx/ucx#2434); check MTU and routing; several hosts at once points at the fabric".into(),
                )
            });
            self.ucx_retry_key = Some((Code::ExplainUcxRetryExceeded, key));
        } else if find(b"vend 0x89")
            || find(b"vendor_err 0x89")
            || find(b"Unexpected UCX error: Input/output error")
        {
            let ev = self.evidence(line);
            let m = ucx_message(line);
            self.found(Code::ExplainUcxRdmaCore, "", host.as_deref(), ev, || {
                (
                    format!("UCX transfer failed with the signature of an rdma-core mismatch: {m}"),
                    "vendor_err 0x89 (or \"Unexpected UCX error: Input/output error\") once data moves means UCX was built against rdma-core older than 54 (CoreWeave GB300 RoCE guide): use an image with rdma-core ≥ 54 and a UCX built against it (ghcr.io/coreweave/nccl-tests ships one); NCCL tests passing does not prove UCX works".into(),
                )
            });
        } else if find(b"Destination is unreachable") {
            let ev = self.evidence(line);
            self.found(Code::ExplainUcxUnreachable, "", host.as_deref(), ev, || {
                (String::new(), String::new())
            });
        } else if find(b"QP 0x") && find(b"wqe[") {
            // a work-queue dump printed under the error it belongs to
        } else if (find(b"UCX") && (find(b"ERROR") || find(b"FATAL")))
            || (find(b"ib_mlx5_log.c") && find(b"(synd"))
            || find(b"vendor_err")
        {
            let m = ucx_message(line);
            let key: String = m
                .chars()
                .take(80)
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect();
            let ev = self.evidence(line);
            self.found(Code::ExplainUcxError, &key, host.as_deref(), ev, || {
                (
                    format!("UCX error: {m}"),
                    "check UCX_TLS and UCX_NET_DEVICES against the devices the pod has (`ucx_info -d`), and the peer's log; `UCX_LOG_LEVEL=info` prints the transports UCX selected".into(),
                )
            });
        } else {
            recognised = false;
        }
        if recognised {
            self.bump_ucx();
        }
    }

    fn bump_ucx(&mut self) {
        if let Some(f) = self.files.last_mut() {
            f.ucx_lines += 1;
        }
    }

    /// The WQE dump after a retry error: `… [rqpn 0x2248a rmac … sgix 0 dgid fe80::… tc 0]`.
    fn ucx_wqe(&mut self, key: &(Code, String), line: &[u8]) {
        let sgix = after(line, b"sgix ").and_then(|s| line::parse_u32(word(s)));
        let dgid = after(line, b"dgid ").map(|s| text(word(s)));
        let tc = after(line, b" tc ").map(|s| text(word(s).strip_suffix(b"]").unwrap_or(word(s))));
        if let Some(acc) = self.found.get_mut(key)
            && !acc.finding.message.contains("GID index")
        {
            let mut notes = Vec::new();
            if let Some(g) = &dgid
                && g.starts_with("fe80")
            {
                notes.push(format!("the destination GID {g} is link-local"));
            }
            if let Some(s) = sgix {
                notes.push(format!("GID index {s}"));
            }
            if let Some(t) = tc {
                notes.push(format!("traffic class {t}"));
            }
            if !notes.is_empty() {
                acc.finding
                    .message
                    .push_str(&format!(" ({})", notes.join(", ")));
            }
        }
    }

    /// `UCX  INFO  UCX_* env variable: UCX_TLS=rc,cuda UCX_NET_DEVICES=mlx5_0:1`.
    fn ucx_env(&mut self, line: &[u8]) {
        let Some(rest) = after(line, b"env variable:") else {
            return;
        };
        for t in rest
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| t.starts_with(b"UCX_"))
        {
            if let Some(eq) = memchr::memchr(b'=', t) {
                self.env_value(&t[..eq], &t[eq + 1..], line);
            }
        }
    }
}

/// The message part of a UCX line: after `UCX  ERROR` (or after the `file.c:NNN` token).
fn ucx_message(line: &[u8]) -> String {
    for marker in [&b"UCX  ERROR"[..], b"UCX ERROR", b"UCX  FATAL", b"ERROR"] {
        if let Some(m) = after(line, marker) {
            return text(m);
        }
    }
    if let Some(i) = memchr::memmem::find(line, b".c:") {
        let rest = &line[i + 3..];
        let start = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        return text(&rest[start..]);
    }
    text(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_after_the_level() {
        assert_eq!(
            ucx_message(b"[1610610433.688325] [DN-10:623133:0]    ib_mlx5_log.c:143  UCX  ERROR Remote access on mlx5_1:1/RoCE"),
            "Remote access on mlx5_1:1/RoCE"
        );
        assert_eq!(
            ucx_message(b"[c:1:0:1] ib_mlx5_log.c:139  Remote QP on mlx5_0:1/IB (synd 0x14 vend 0x89 hw_synd 0/0)"),
            "Remote QP on mlx5_0:1/IB (synd 0x14 vend 0x89 hw_synd 0/0)"
        );
    }
}
