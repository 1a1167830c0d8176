//! Handlers for UCX lines (UCX 1.x): completion errors from `ib_mlx5_log.c`/`rc_verbs_iface.c`, unreachable
//! destinations, and the effective-configuration dump.

use roce_model::Code;
use roce_model::fabric::env as vars;
use roce_model::fabric::ucx::MIN_RDMA_CORE;

use super::Explainer;
use super::line::{self, after, text, word};

/// Whether `needle` (fixed) occurs anywhere in the line: UCX messages are matched by fragments, not by position.
macro_rules! has {
    ($line:expr, $needle:expr) => {
        find!($line, $needle).is_some()
    };
}

impl Explainer {
    /// Read a UCX line; `false` when it said nothing UCX knows (a line that only mentions UCX).
    pub(super) fn ucx_line(&mut self, line: &[u8]) -> bool {
        let who = line::ucx_who(line);
        let pi = who.map(|w| self.proc_of(w.key, w.host, None));
        let host = self.host_of(pi);
        let mut recognised = true;
        self.ucx_link(line);
        if let Some(key) = self.ucx_retry_key.take()
            && has!(line, b"QP 0x")
            && has!(line, b"wqe[")
        {
            self.ucx_wqe(&key, line);
            self.bump_ucx();
            return true;
        }
        if has!(line, b"env variable:") || has!(line, b"env variables:") {
            self.ucx_env(line);
        } else if has!(line, b" not available, please use one or more of: ") {
            self.ucx_unavailable(host.as_deref(), line);
        } else if has!(line, b"no usable transports/devices") {
            self.ucx_no_transport(host.as_deref(), line);
        } else if has!(line, b"unused environment variable") {
            self.ucx_unused_env(host.as_deref(), line);
        } else if has!(line, b"UCX_WARN_UNUSED_ENV_VARS=n") {
            // the second line of the unused-variables warning
        } else if has!(line, b"Invalid value for ") {
            self.ucx_invalid_value(host.as_deref(), line);
        } else if has!(line, b"failed to parse gid type")
            || has!(line, b"ibv_query_gid(")
            || has!(line, b"failed to find a gid which matches")
            || has!(line, b"both GID_INDEX and ROCE_SUBNET_LIST")
        {
            self.ucx_gid(host.as_deref(), line);
        } else if has!(line, b"-node cfg#") {
            self.ucx_selected(line);
        } else if has!(line, b"ibv_create_ah") && (has!(line, b"failed") || has!(line, b"ERROR")) {
            self.ucx_create_ah(host.as_deref(), line);
        } else if has!(line, b"UCP version is incompatible") {
            self.ucx_version_mismatch(host.as_deref(), line);
        } else if has!(line, b"retry count exceeded") {
            self.ucx_retry_exceeded(host.as_deref(), line);
        } else if has!(line, b"vend 0x89")
            || has!(line, b"vendor_err 0x89")
            || has!(line, b"Unexpected UCX error: Input/output error")
        {
            self.ucx_rdma_core(host.as_deref(), line);
        } else if has!(line, b"Destination is unreachable") {
            let ev = self.evidence(line);
            self.found(Code::ExplainUcxUnreachable, "", host.as_deref(), ev, || {
                (String::new(), String::new())
            });
        } else if has!(line, b"QP 0x") && has!(line, b"wqe[") {
            // a work-queue dump printed under the error it belongs to
        } else if (has!(line, b"UCX") && (has!(line, b"ERROR") || has!(line, b"FATAL")))
            || (has!(line, b"ib_mlx5_log.c") && has!(line, b"(synd"))
            || has!(line, b"vendor_err")
        {
            self.ucx_error(host.as_deref(), line);
        } else {
            recognised = false;
        }
        if recognised {
            self.bump_ucx();
        }
        recognised
    }

    /// What any UCX line shows of the link: a RoCE or IB device name (`mlx5_0:1/RoCE`), and a WQE dump's
    /// peer address.
    fn ucx_link(&mut self, line: &[u8]) {
        if has!(line, b"/RoCE") {
            self.facts.ucx_roce = true;
            self.facts.ucx_rdma = true;
        } else if has!(line, b"/IB ") || has!(line, b"/IB)") {
            self.facts.ucx_ib = true;
            self.facts.ucx_rdma = true;
        }
        // a WQE dump addresses the peer by MAC and GID on RoCE, by LID on InfiniBand (ib_mlx5_log.c)
        if has!(line, b"wqe[") {
            self.facts.ucx_rdma = true;
            if has!(line, b" rmac ") || has!(line, b" dgid ") {
                self.facts.link.roce = true;
            } else if has!(line, b" rlid ") {
                self.facts.link.ib = true;
            }
        }
    }

    /// The transports UCX selected: whether any is RDMA, whether TCP is among them.
    fn ucx_selected(&mut self, line: &[u8]) {
        // `ucp_context_0 inter-node cfg#3 rma(rc_mlx5/mlx5_ib2:1) …` (UCX_LOG_LEVEL=info): the transports
        // UCX selected (ucp_worker.c); the fabric core says which are RDMA.
        if roce_model::fabric::ucx::TRANSPORTS
            .iter()
            .filter(|t| t.class == roce_model::fabric::ucx::TransportClass::Rdma)
            .any(|t| memchr::memmem::find(line, t.name.as_bytes()).is_some())
        {
            self.facts.ucx_rdma = true;
        }
        if has!(line, b"tcp/") {
            self.facts.ucx_tcp = true;
        }
    }

    /// `UCP version is incompatible`: the program was built against a newer UCX than it loaded.
    fn ucx_version_mismatch(&mut self, host: Option<&str>, line: &[u8]) {
        let m = ucx_message_any(line);
        let ev = self.evidence(line);
        self.found(Code::ExplainUcxVersionMismatch, "", host, ev, || {
            (
                format!("UCX: the library loaded is older than the program needs: {m}"),
                "the program (NIXL, UCX-Py, Open MPI) was built against a newer UCX than the libucp.so it loaded: put the matching UCX first on LD_LIBRARY_PATH (NIXL wheels bundle one; a system /usr/lib UCX shadows it), or rebuild against the installed UCX; `ucx_info -v` prints the version that loads".into(),
            )
        });
    }

    /// A transport or receiver-not-ready retry count exceeded on a device: the peer never acknowledged.
    /// The WQE dump that follows belongs to it.
    fn ucx_retry_exceeded(&mut self, host: Option<&str>, line: &[u8]) {
        let dev = after(line, b" on ")
            .map(|d| text(word(d)))
            .unwrap_or_default();
        let what = if has!(line, b"Receive-no-ready") || has!(line, b"RNR") {
            "receiver-not-ready"
        } else {
            "transport"
        };
        let ev = self.evidence(line);
        let key = format!("{what} {dev}");
        self.found(Code::ExplainUcxRetryExceeded, &key, host, ev, || {
            (
                format!("UCX: {what} retry count exceeded on {dev}: the peer never acknowledged"),
                "the peer is unreachable over RDMA: on RoCE set UCX_IB_GID_INDEX to the RoCE v2 GID of the routable address (not link-local fe80; `show_gids` or `roce doctor` lists them) and UCX_IB_TRAFFIC_CLASS to the fabric's class (openucx/ucx#2434); check MTU and routing; several hosts at once points at the fabric".into(),
            )
        });
        self.ucx_retry_key = Some((Code::ExplainUcxRetryExceeded, key));
    }

    /// vendor_err 0x89 once data moves: UCX built against an rdma-core older than the NIC needs.
    fn ucx_rdma_core(&mut self, host: Option<&str>, line: &[u8]) {
        let ev = self.evidence(line);
        let m = ucx_message(line);
        self.found(Code::ExplainUcxRdmaCore, "", host, ev, || {
            (
                format!("UCX transfer failed with the signature of an rdma-core mismatch: {m}"),
                format!("vendor_err 0x89 (or \"Unexpected UCX error: Input/output error\") once data moves means UCX was built against rdma-core older than {MIN_RDMA_CORE} (CoreWeave GB300 RoCE guide): use an image with rdma-core ≥ {MIN_RDMA_CORE} and a UCX built against it (ghcr.io/coreweave/nccl-tests ships one); NCCL tests passing does not prove UCX works"),
            )
        });
    }

    /// Any other UCX error, one finding per message with its numbers masked (the same error on every
    /// rank is one).
    fn ucx_error(&mut self, host: Option<&str>, line: &[u8]) {
        let m = ucx_message(line);
        let key: String = m
            .chars()
            .take(80)
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        let ev = self.evidence(line);
        self.found(Code::ExplainUcxError, &key, host, ev, || {
            (
                format!("UCX error: {m}"),
                "check UCX_TLS and UCX_NET_DEVICES against the devices the pod has (`ucx_info -d`), and the peer's log; `UCX_LOG_LEVEL=info` prints the transports UCX selected".into(),
            )
        });
    }

    /// `ibv_create_ah(dlid=… dgid=::ffff:10.1.1.2 … sgid_index=3 traffic_class=106) for UD mlx5 connect on
    /// mlx5_3 failed: Connection timed out` (`ib_device.c`): on RoCE an address handle needs the peer's MAC,
    /// which the kernel resolves from the GID through the netdev bound to `sgid_index` (ARP/ND,
    /// `rdma_addr_find_l2_eth_by_grh`); a timeout means the peer's address does not answer on that netdev.
    fn ucx_create_ah(&mut self, host: Option<&str>, line: &[u8]) {
        let dgid = after(line, b"dgid=").map(|d| {
            text(
                &d[..d
                    .iter()
                    .position(|b| *b == b' ' || *b == b')')
                    .unwrap_or(d.len())],
            )
        });
        let sgix = after(line, b"sgid_index=").map(|d| {
            text(
                &d[..d
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .unwrap_or(d.len())],
            )
        });
        let err = after(line, b"failed: ").map(text).unwrap_or_default();
        if dgid
            .as_deref()
            .is_some_and(|g| g.starts_with("::ffff:") || g.starts_with("fe80"))
            || line.windows(8).any(|w| w == b"traffic_")
        {
            self.facts.link.roce = true;
        }
        self.facts.ucx_rdma = true;
        let ev = self.evidence(line);
        self.found(Code::ExplainUcxAddressHandle, &err, host, ev, || {
            let link_local = dgid.as_deref().is_some_and(|g| g.starts_with("fe80"));
            let gid = match (&dgid, &sgix) {
                (Some(d), Some(i)) => format!(" (to GID {d} from local GID index {i})"),
                (Some(d), None) => format!(" (to GID {d})"),
                _ => String::new(),
            };
            (
                format!("UCX could not create an address handle to the peer{gid}: {err}"),
                if link_local {
                    "the destination GID is link-local (fe80): it is not routable between subnets, and its MAC is resolved only on the same link: set UCX_IB_GID_INDEX to the RoCE v2 GID of the routable (IPv4-mapped or global) address, or let UCX choose (unset it, UCX_IB_ROCE_SUBNETS to pick the subnet)".into()
                } else {
                    "on RoCE the kernel resolves the peer's GID to a MAC through the netdev of the local GID index: a timeout means the peer's address does not answer there. Check that the GID index is the one of the RDMA interface in this network namespace (`show_gids` in the pod: indexes differ per pod with macvlan/SR-IOV), that both pods' RDMA interfaces are in the same subnet or routed (UCX_IB_ROCE_REACHABILITY_MODE=all skips UCX's own subnet check), and the VLAN/PFC settings".into()
                },
            )
        });
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
        let Some(rest) = after(line, b"env variable:").or_else(|| after(line, b"env variables:"))
        else {
            return;
        };
        for t in rest
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| t.starts_with(vars::UCX_PREFIX.as_bytes()))
        {
            if let Some(eq) = memchr::memchr(b'=', t) {
                self.env_value(&t[..eq], &t[eq + 1..], line);
            }
        }
    }
}

/// The message after `UCX  WARN` / `UCX  ERROR` / `UCX  INFO`.
fn ucx_message_any(line: &[u8]) -> String {
    for marker in [&b"UCX  WARN"[..], b"UCX  ERROR", b"UCX  INFO", b"UCX WARN"] {
        if let Some(m) = after(line, marker) {
            return text(m);
        }
    }
    ucx_message(line)
}

/// The message part of a UCX line (for [`super::ucx_config`]).
pub(super) fn message_of(line: &[u8]) -> String {
    ucx_message(line)
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
