//! The verdict's invariants, enforced in one place after every rule has run:
//!
//! 1. sockets never carry GPUDirect RDMA: `transport: socket` ⇒ `gpudirect_rdma: false`;
//! 2. a log that shows a failed NCCL call or job (an error chain that ended NCCL's async or proxy thread, a
//!    PyTorch `NCCL error` or watchdog timeout, an nccl-tests failure, a Python traceback after an NCCL WARN)
//!    is never "ok": if no rule named the cause, the first NCCL warning (or the chain's origin) becomes
//!    `roce::explain::nccl_error`;
//! 3. a socket network where RDMA was configured or expected (an `NCCL_IB_*` knob, a net plugin asked for,
//!    several hosts, connections between ranks over `NET/Socket`) is never "ok";
//! 4. findings are ordered cause first: each consequence names its cause (`caused_by`) and follows it;
//!    independent causes are ordered by how much they explain (the job failed, then it ran without RDMA or
//!    GPUDirect, then warnings) and by line.
//!
//! The exit status follows: 1 when any finding is an error (`Explanation::has_errors`).

use roce_model::{Code, Severity};

use super::{Evidence, Explanation, Finding, Transport};

/// What the rules saw that the invariants need.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// Evidence that the job or an NCCL call failed.
    pub fatal: Vec<(Evidence, String)>,
    /// The first NCCL warning no rule explained.
    pub first_warn: Option<(Evidence, String)>,
    /// The first error-chain line (where a failure started).
    pub chain_origin: Option<(Evidence, String)>,
    /// A Python traceback.
    pub traceback: bool,
    /// RDMA was configured or expected (see the module doc).
    pub rdma_expected: bool,
}

/// Apply the invariants.
pub(crate) fn enforce(e: &mut Explanation, f: &Facts) {
    if e.transport == Transport::Socket {
        e.gpudirect_rdma = Some(false);
    }
    let failed = !f.fatal.is_empty() || (f.traceback && f.first_warn.is_some());
    if failed && !e.findings.iter().any(|x| tier(x.code) == 0) {
        let from_warning = e
            .findings
            .iter()
            .position(|x| x.code == Code::ExplainNcclWarning);
        let err = match from_warning {
            Some(i) => {
                let w = e.findings.remove(i);
                let text = w
                    .message
                    .strip_prefix("NCCL warning: ")
                    .unwrap_or(&w.message)
                    .to_string();
                let mut n = nccl_error(format!("an NCCL call failed: {text}"), hint(&text));
                n.evidence = w.evidence;
                n.count = w.count;
                n.hosts = w.hosts;
                n
            }
            None => match (&f.chain_origin, f.fatal.first()) {
                (Some((ev, origin)), _) => {
                    let mut n = nccl_error(
                        format!("an NCCL call failed, starting at {origin}"),
                        hint(origin),
                    );
                    n.evidence = Some(ev.clone());
                    n
                }
                (None, Some((ev, what))) => {
                    let mut n = nccl_error(format!("the job failed: {what}"), hint(what));
                    n.evidence = Some(ev.clone());
                    n
                }
                // a traceback after a warning that is not a finding of its own: nothing to point at
                (None, None) => nccl_error(
                    "the job failed (a Python traceback follows NCCL warnings)".to_string(),
                    hint(""),
                ),
            },
        };
        e.findings.push(err);
    }
    if e.transport == Transport::Socket
        && f.rdma_expected
        && !e
            .findings
            .iter()
            .any(|x| x.code == Code::ExplainSocketFallback)
    {
        e.findings.push(Finding::new(
            Code::ExplainSocketFallback,
            "NCCL moved data over TCP sockets although RDMA was configured or expected",
            "give the pod its RDMA devices (the `rdma/ib` resource, Multus networks on RoCE) and check `NET/IB` lines with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET",
        ));
    }
    order(&mut e.findings);
}

fn nccl_error(message: String, help: String) -> Finding {
    Finding::new(Code::ExplainNcclError, message, help)
}

/// Help for a failure from the text of NCCL's warning or error chain: rules about what NCCL means by it.
fn hint(text: &str) -> String {
    let generic = "the first NCCL warning and the `file:line -> N` lines after it name where the call failed; rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV and read every rank's log (the failing rank is often not the one that reports)";
    // src/enqueue.cc (topoGetAlgoInfo): no algorithm/protocol allowed by NCCL_ALGO/NCCL_PROTO fits the call
    if text.contains("no algorithm/protocol available") {
        return "NCCL_ALGO / NCCL_PROTO exclude every algorithm this collective can use here (e.g. NCCL_ALGO=CollNet without a working SHARP/CollNet plugin, or NVLS without NVLink SHARP): unset them".into();
    }
    // src/transport/net_ib.cc: a receive matched a send of another size
    if text.contains("collective mismatch") {
        return "the ranks disagree on the collective being run (different sizes or order of calls: an application bug), or they run different NCCL builds; compare every rank's `NCCL version` line and the calls around the failure (NCCL_DEBUG_SUBSYS=COLL)".into();
    }
    // src/misc/socket.cc: the bootstrap received an address of no known family
    if text.contains("neither AF_INET") {
        return "the bootstrap received a malformed peer address: the ranks run different NCCL versions (the bootstrap exchange changed between releases), or something other than NCCL connected to its port; use one image for every rank".into();
    }
    // src/proxy.cc: the proxy thread could not set up a connection
    if text.contains("operation=Connect") || text.contains("operation Connect") {
        return "the proxy thread failed to connect a transport: the WARN lines before this one (on this rank or its peer) say why; with NCCL_DEBUG_SUBSYS=INIT,NET they show the transport".into();
    }
    // 2.21-2.22 return ncclSystemError without a WARN when net_ib.cc cannot read a GID's type
    if text.contains("net_ib") {
        return format!(
            "the IB transport failed; on RoCE, NCCL 2.21–2.22 fail without a warning when a GID's type cannot be read (gid_attrs/types/<index> of an empty entry in a container, NVIDIA/nccl#1573, handled since 2.26): upgrade NCCL or pin NCCL_IB_GID_INDEX to the RoCE v2 GID; {generic}"
        );
    }
    generic.into()
}

/// 0: the job or an NCCL call failed; 1: it ran without RDMA or GPUDirect RDMA (or the input is not a log);
/// 2: warnings.
pub(crate) fn tier(c: Code) -> u8 {
    use Code::*;
    const FAILED: &[Code] = &[
        ExplainNcclError,
        ExplainDuplicateGpu,
        ExplainCudaError,
        ExplainMnnvl,
        ExplainWatchdogTimeout,
        ExplainSocketInterface,
        ExplainNetNotFound,
        ExplainBootstrapNoInterface,
        ExplainIbRetryExceeded,
        ExplainIbCompletionError,
        ExplainQpConnectFailed,
        ExplainMemlock,
        ExplainIbAsyncEvent,
        ExplainMixedLinkLayer,
        ExplainNetPluginError,
        ExplainUcxRetryExceeded,
        ExplainUcxRdmaCore,
        ExplainUcxUnreachable,
        ExplainUcxError,
        ExplainUcxAddressHandle,
        ExplainUcxVersionMismatch,
        ExplainUcxNoTransport,
        ExplainUcxInvalidValue,
        ExplainUcxGid,
        ExplainNixlError,
        ExplainVersionMismatch,
        ExplainWrongResults,
    ];
    if FAILED.contains(&c) {
        0
    } else if c.severity() == Severity::Error {
        1
    } else {
        2
    }
}

/// Which findings a consequence can have as its cause, the likeliest first. Each pair is a rule about NCCL's or
/// UCX's behaviour (docs/explain.md, "Causes").
const CAUSES: &[(Code, &[Code])] = {
    use Code::*;
    &[
        // NCCL falls back to the next network when a plugin or the IB transport cannot initialize
        (
            ExplainSocketFallback,
            &[
                ExplainIbverbsMissing,
                ExplainIbDeviceOpen,
                ExplainNetPluginError,
                ExplainPluginNotLoaded,
            ],
        ),
        // NCCL_NET names a network whose plugin did not load, or IB had no interface for its OOB socket
        (
            ExplainNetNotFound,
            &[
                ExplainNetPluginError,
                ExplainPluginNotLoaded,
                ExplainBootstrapNoInterface,
            ],
        ),
        // MNNVL allocations fail with cudaErrorNotPermitted without an IMEX channel
        (ExplainCudaError, &[ExplainMnnvl]),
        // a GID that does not route or resolve makes connecting and then sending fail
        (ExplainQpConnectFailed, &[ExplainMixedLinkLayer, ExplainGid]),
        (
            ExplainIbRetryExceeded,
            &[ExplainIbAsyncEvent, ExplainMixedLinkLayer, ExplainGid],
        ),
        (
            ExplainIbCompletionError,
            &[
                ExplainIbAsyncEvent,
                ExplainIbRetryExceeded,
                ExplainMixedLinkLayer,
            ],
        ),
        // the failed call PyTorch or nccl-tests reports is the one these made fail
        (
            ExplainNcclError,
            &[
                ExplainDuplicateGpu,
                ExplainMnnvl,
                ExplainCudaError,
                ExplainMixedLinkLayer,
                ExplainQpConnectFailed,
                ExplainIbAsyncEvent,
                ExplainIbRetryExceeded,
                ExplainIbCompletionError,
                ExplainMemlock,
                ExplainNetPluginError,
                ExplainNetNotFound,
                ExplainBootstrapNoInterface,
                ExplainSocketInterface,
                ExplainVersionMismatch,
            ],
        ),
        // UCX drops UCX_TLS / UCX_NET_DEVICES entries it cannot use; with none left it does not start
        (
            ExplainUcxNoTransport,
            &[ExplainUcxDeviceUnavailable, ExplainUcxTransportUnavailable],
        ),
        (
            ExplainUcxError,
            &[ExplainUcxInvalidValue, ExplainUcxNoTransport, ExplainUcxGid],
        ),
        // an address handle needs the GID UCX selected
        (ExplainUcxAddressHandle, &[ExplainUcxGid]),
        // NIXL_ERR_BACKEND and a failed backend carry the UCX backend's failure
        (
            ExplainNixlError,
            &[
                ExplainUcxNoTransport,
                ExplainUcxInvalidValue,
                ExplainUcxGid,
                ExplainUcxVersionMismatch,
                ExplainUcxAddressHandle,
                ExplainUcxRetryExceeded,
                ExplainUcxUnreachable,
                ExplainUcxRdmaCore,
                ExplainUcxError,
            ],
        ),
        // a collective times out when the network under it failed
        (
            ExplainWatchdogTimeout,
            &[
                ExplainIbRetryExceeded,
                ExplainIbCompletionError,
                ExplainIbAsyncEvent,
                ExplainQpConnectFailed,
                ExplainSocketInterface,
                ExplainNcclError,
                ExplainUcxRetryExceeded,
                ExplainUcxError,
            ],
        ),
        (ExplainProfileTransport, &[ExplainSocketFallback]),
        // TCP sockets, data staged through host memory, or rails NCCL did not use cannot reach the line rate
        (
            ExplainBandwidthLow,
            &[
                ExplainSocketFallback,
                ExplainGdrDisabled,
                ExplainProfileDevices,
            ],
        ),
    ]
};

/// Link consequences to causes, then order the findings cause first.
pub(crate) fn order(findings: &mut Vec<Finding>) {
    let codes: Vec<Code> = findings.iter().map(|f| f.code).collect();
    for f in findings.iter_mut() {
        if f.caused_by.is_some() {
            continue;
        }
        if let Some((_, causes)) = CAUSES.iter().find(|(c, _)| *c == f.code) {
            f.caused_by = causes.iter().find(|c| codes.contains(c)).copied();
        }
    }
    // a cause is the first finding of its code; anything whose cause is missing is a root
    let n = findings.len();
    let parent: Vec<Option<usize>> = findings
        .iter()
        .map(|f| {
            f.caused_by
                .and_then(|c| findings.iter().position(|g| g.code == c))
        })
        .collect();
    let key = |i: usize| {
        let f = &findings[i];
        (
            f.evidence.as_ref().map(|e| e.file.clone()),
            f.evidence.as_ref().map_or(0, |e| e.line),
            f.code,
        )
    };
    // a group is ranked by the most serious finding in it
    let mut rank: Vec<u8> = findings.iter().map(|f| tier(f.code)).collect();
    for i in 0..n {
        let (mut p, mut hops) = (parent[i], 0);
        while let Some(j) = p {
            if hops > n {
                break;
            }
            rank[j] = rank[j].min(rank[i]);
            p = parent[j];
            hops += 1;
        }
    }
    let is_root = |i: usize| parent[i].is_none_or(|p| p == i);
    let mut roots: Vec<usize> = (0..n).filter(|&i| is_root(i)).collect();
    roots.sort_by(|&a, &b| (rank[a], key(a)).cmp(&(rank[b], key(b))));
    let mut out: Vec<usize> = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    fn visit(
        i: usize,
        parent: &[Option<usize>],
        seen: &mut [bool],
        out: &mut Vec<usize>,
        sort_key: &dyn Fn(usize) -> (u8, Option<String>, u64, Code),
    ) {
        if seen[i] {
            return;
        }
        seen[i] = true;
        out.push(i);
        let mut kids: Vec<usize> = (0..parent.len())
            .filter(|&k| k != i && parent[k] == Some(i))
            .collect();
        kids.sort_by_key(|&k| sort_key(k));
        for k in kids {
            visit(k, parent, seen, out, sort_key);
        }
    }
    let sort_key = |i: usize| {
        let (file, line, code) = key(i);
        (rank[i], file, line, code)
    };
    for r in roots {
        visit(r, &parent, &mut seen, &mut out, &sort_key);
    }
    // anything left is on a cycle (a table bug): keep it, in line order
    let mut rest: Vec<usize> = (0..n).filter(|&i| !seen[i]).collect();
    rest.sort_by_key(|&i| sort_key(i));
    out.extend(rest);
    let mut slots: Vec<Option<Finding>> = std::mem::take(findings).into_iter().map(Some).collect();
    findings.extend(out.into_iter().filter_map(|i| slots[i].take()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every consequence's causes differ from it and no chain of causes comes back to where it started.
    #[test]
    fn the_cause_table_has_no_cycle() {
        fn reaches(from: Code, to: Code, depth: usize) -> bool {
            depth < 32
                && CAUSES
                    .iter()
                    .find(|(c, _)| *c == from)
                    .is_some_and(|(_, cs)| cs.iter().any(|&c| c == to || reaches(c, to, depth + 1)))
        }
        for (c, _) in CAUSES {
            assert!(!reaches(*c, *c, 0), "{c} causes itself");
        }
    }
}
