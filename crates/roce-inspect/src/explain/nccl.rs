//! Handlers for NCCL INFO/WARN/ATTN messages (formats of NCCL 2.18–2.32; `nccl-ucx-facts.md` §2).

use roce_model::Code;
use roce_model::fabric::env as vars;
use roce_model::fabric::nccl::NET_SOCKET;

use super::line::{self, Level, NcclLine, after, text, word};
use super::{Device, Explainer, sockets};

/// `ibv_wc_status` names (rdma-core `verbs.h`).
pub(crate) const WC_STATUS: [&str; 22] = [
    "IBV_WC_SUCCESS",
    "IBV_WC_LOC_LEN_ERR",
    "IBV_WC_LOC_QP_OP_ERR",
    "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR",
    "IBV_WC_WR_FLUSH_ERR",
    "IBV_WC_MW_BIND_ERR",
    "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR",
    "IBV_WC_REM_INV_REQ_ERR",
    "IBV_WC_REM_ACCESS_ERR",
    "IBV_WC_REM_OP_ERR",
    "IBV_WC_RETRY_EXC_ERR",
    "IBV_WC_RNR_RETRY_EXC_ERR",
    "IBV_WC_LOC_RDD_VIOL_ERR",
    "IBV_WC_REM_INV_RD_REQ_ERR",
    "IBV_WC_REM_ABORT_ERR",
    "IBV_WC_INV_EECN_ERR",
    "IBV_WC_INV_EEC_STATE_ERR",
    "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR",
    "IBV_WC_GENERAL_ERR",
];

impl Explainer {
    pub(super) fn nccl_line(&mut self, l: NcclLine<'_>, line: &[u8]) {
        self.ucx_retry_key = None;
        let warn = l.level == Level::Warn;
        match l.level {
            Level::Info => self.facts.info_lines += 1,
            Level::Warn => self.facts.warn_lines += 1,
            Level::Attn | Level::Diag | Level::Version => {}
        }
        let msg = l.msg.trim_ascii();
        if l.level == Level::Info && !interesting(msg) {
            return;
        }
        let pi = if l.level == Level::Info {
            self.proc_of_prefix(l.prefix)
        } else {
            l.who().map(|w| self.proc_of(w.key, w.host, w.dev))
        };
        match l.level {
            Level::Version => {
                self.version(pi, msg, line);
                return;
            }
            Level::Diag => {
                self.diag(pi, msg, line);
                return;
            }
            _ => {}
        }
        // a WARN from the IB transport's own source (`transport/net_ib.cc:1038`, HPC-X `ib_plugin.c:1615`)
        // means it was at work
        if warn && self.facts.ib_active.is_none() && ib_source(l.prefix) {
            self.facts.ib_active = Some(self.evidence(line));
        }
        // an ATTN notice (2.32+, "informational notices", `src/debug.cc`) is read like an INFO line: rules that
        // need a final failure (`ibv_modify_qp` after its retries, …) wait for a WARN
        if !self.dispatch(pi, msg, line, warn) {
            match l.level {
                Level::Warn => self.generic_warning(pi, msg, line),
                Level::Attn => self.generic_notice(pi, msg, line),
                _ => {}
            }
        }
    }

    /// Route a message by its first bytes; `true` when it was understood (or is known to be noise).
    pub(super) fn dispatch(
        &mut self,
        pi: Option<usize>,
        msg: &[u8],
        line: &[u8],
        warn: bool,
    ) -> bool {
        match msg.first() {
            Some(b'C') => self.starting_c(pi, msg, line, warn),
            Some(b'R') if msg.starts_with(b"Ring ") => {
                // ≤2.6: `Ring 01 : 2[b2000] -> 5[3d000] [receive] via NET/IB/3`, the later `Channel` lines
                self.channel(pi, msg, line);
                true
            }
            // 2.31+: the socket RMA proxy plugin needs GDRCopy and warns when it is not there; `ncclRmaInit`
            // (`src/plugin/rma.cc`) then disables that plugin, logs `RMA/Plugin: Failed to initialize any plugin`
            // and returns success, so the job goes on without the optional RMA/GIN path
            // (`ncclRmaSocketProxyInit`, `src/transport/rma_socket.cc`)
            Some(b'R') if msg.starts_with(b"RMA/Socket : rma_socket requires GDRCopy") => true,
            Some(b'D') => {
                if msg.starts_with(b"Duplicate GPU detected") {
                    self.duplicate_gpu(pi, msg, line);
                    true
                } else {
                    false
                }
            }
            Some(b'N') => self.starting_n(pi, msg, line, warn),
            Some(b'U') => {
                if let Some(net) = msg.strip_prefix(b"Using network ") {
                    self.network(pi, net, line);
                    true
                } else {
                    false
                }
            }
            Some(b'A') => {
                if let Some(rest) = msg.strip_prefix(b"Assigned NET plugin ") {
                    let net = rest.strip_suffix(b" to comm").unwrap_or(rest);
                    self.network(pi, net, line);
                    true
                } else {
                    false
                }
            }
            Some(b'B') => self.bootstrap(pi, msg, line),
            Some(b'G') => {
                if let Some(rest) = msg.strip_prefix(b"GPU Direct RDMA ") {
                    self.gdr_pair(rest, line);
                    true
                } else {
                    false
                }
            }
            Some(b'F') => self.failed_to(pi, msg, line),
            Some(b'E') => {
                if let Some(rest) = msg.strip_prefix(b"Error: network ") {
                    let name = rest.strip_suffix(b" not found.").unwrap_or(rest);
                    self.net_not_found(pi, Some(text(name)), line);
                    true
                } else {
                    false
                }
            }
            Some(b'I') => {
                if let Some(rest) = msg.strip_prefix(b"Invalid value ") {
                    self.invalid_value(pi, rest, line);
                    true
                } else {
                    false
                }
            }
            Some(b'M') => self.starting_m(pi, msg, line, warn),
            Some(b'P') => self.plugin_line(msg, line),
            Some(b'S') => self.starting_s(pi, msg, line, warn),
            Some(b'c') if msg.starts_with(b"comm ") => {
                self.comm(pi, msg);
                true
            }
            _ => {
                if msg.ends_with(b"Init START") || msg.ends_with(b"Init COMPLETE") {
                    self.init(pi, msg);
                    true
                } else if let Some(c) = line::chain(msg) {
                    self.chain(c, msg, line);
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Messages starting with `C`: channel wiring, verbs calls, the NCCL_NET a communicator's config
    /// reset, ring completion, CUDA and CollNet failures.
    fn starting_c(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        if msg.starts_with(b"Channel ") {
            self.channel(pi, msg, line);
            true
        } else if msg.starts_with(b"Call to ") {
            self.verbs_call(pi, msg, line, warn)
        } else if let Some(v) = msg.strip_prefix(b"Comm config netName reset to NCCL_NET=") {
            self.env_value(vars::NCCL_NET.as_bytes(), v, line);
            true
        } else if msg.starts_with(b"Connected all rings") {
            self.rings(msg, line);
            true
        } else if msg.starts_with(b"Cuda failure") {
            self.cuda_failure(pi, msg, line);
            true
        } else if msg.starts_with(b"Cannot initialize CollNet") {
            self.collnet(pi, msg, line);
            true
        } else {
            false
        }
    }

    /// Messages starting with `N`: the network transports' own lines, the release, env echoes and a
    /// release mismatch between ranks.
    fn starting_n(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        if let Some(rest) = msg.strip_prefix(b"NET/") {
            self.net(pi, rest, line, warn)
        } else if let Some(v) = msg.strip_prefix(b"NCCL version ") {
            self.version(pi, v, line);
            true
        } else if msg.starts_with(vars::NCCL_PREFIX.as_bytes()) {
            self.env_echo(msg, line)
        } else if msg.starts_with(b"NCCL version mismatch") {
            self.version_mismatch(pi, msg, line);
            true
        } else {
            false
        }
    }

    /// `Failed to …` messages: no net plugin at all, the IB transport failing to start, no libibverbs.
    fn failed_to(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) -> bool {
        if msg.starts_with(b"Failed to initialize any NET plugin") {
            self.net_not_found(pi, None, line);
            true
        } else if let Some(net) = msg.strip_prefix(b"Failed to initialize NET plugin ") {
            if net.starts_with(b"IB") && self.facts.ib_init_failed.is_none() {
                self.facts.ib_init_failed = Some(self.evidence(line));
            }
            true
        } else if msg.starts_with(b"Failed to open libibverbs") {
            // ibvwrap.cc: dlopen of libibverbs.so failed, so the IB transport has no devices
            if self.facts.ibverbs_missing.is_none() {
                self.facts.ibverbs_missing = Some(self.evidence(line));
            }
            true
        } else {
            false
        }
    }

    /// Messages starting with `M`: duplicate GPUs (2.30+ wording), a release mismatch, MNNVL warnings.
    fn starting_m(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        if msg.starts_with(b"Multiple Ranks are using the same GPU") {
            // 2.30+ wording of the duplicate-GPU check (`initTransportsRank`, `src/init.cc`)
            self.duplicate_gpu(pi, msg, line);
            true
        } else if msg.starts_with(b"Mismatched NCCL version") {
            self.version_mismatch(pi, msg, line);
            true
        } else if msg.starts_with(b"MNNVL") && warn {
            self.mnnvl(pi, msg, line);
            true
        } else {
            false
        }
    }

    /// Messages starting with `P`: the plugin NCCL_NET_PLUGIN names, and the plugins that say they loaded
    /// (nccl-rdma-sharp-plugins' `P2P plugin`, HPC-X's `Plugin Path`).
    fn plugin_line(&mut self, msg: &[u8], line: &[u8]) -> bool {
        if let Some(rest) = msg.strip_prefix(b"Plugin name set by env to ") {
            self.env_value(vars::NCCL_NET_PLUGIN.name.as_bytes(), rest, line);
            true
        } else if let Some(rest) = msg.strip_prefix(b"P2P plugin ") {
            // nccl-rdma-sharp-plugins `p2p_plugin.c`: `P2P plugin IBext` (≤v7), `P2P plugin v8 IBext_v8`
            let rest = match rest.split(|b| *b == b' ').collect::<Vec<_>>()[..] {
                [v, name] if v.first() == Some(&b'v') && v[1..].iter().all(u8::is_ascii_digit) => {
                    name
                }
                _ => rest,
            };
            self.facts.plugins_loaded.insert(text(rest));
            self.external_plugin(text(rest), line);
            true
        } else if let Some(rest) = msg.strip_prefix(b"Plugin Path") {
            // printed by HPC-X's plugins once loaded: `Plugin Path : /opt/hpcx/…/libnccl-net.so`
            let path = text(rest.trim_ascii_start().strip_prefix(b":").unwrap_or(rest));
            self.facts.plugins_loaded.insert(path.clone());
            self.external_plugin(path, line);
            true
        } else {
            false
        }
    }

    /// Messages starting with `S`: SHARP warnings (CollNet) and an external plugin that loaded.
    fn starting_s(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        if warn && (msg.starts_with(b"SHARP") || msg.starts_with(b"Sharp")) {
            self.collnet(pi, msg, line);
            true
        } else if let Some(rest) = msg.strip_prefix(b"Successfully loaded external") {
            let name = text(word(rest.rsplit(|b| *b == b' ').next().unwrap_or(rest)));
            self.facts.plugins_loaded.insert(name.clone());
            self.external_plugin(name, line);
            true
        } else {
            false
        }
    }

    /// A communicator's summary line: the job's node and local-rank counts are the largest any rank
    /// printed, and its `Init START`/`Init COMPLETE` marks the rank's progress.
    fn comm(&mut self, pi: Option<usize>, msg: &[u8]) {
        // `comm 0x… rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0` (2.19+)
        if let Some(n) = after(msg, b" nNodes ").and_then(|n| line::parse_u32(word(n))) {
            self.facts.n_nodes = self.facts.n_nodes.max(n);
        }
        if let Some(n) = after(msg, b" localRanks ").and_then(|n| line::parse_u32(word(n))) {
            self.facts.local_ranks = self.facts.local_ranks.max(n);
        }
        if msg.ends_with(b"Init START") || msg.ends_with(b"Init COMPLETE") {
            self.init(pi, msg);
        }
    }

    /// An error-propagation line (`transport/net_ib.cc:282 -> 2`, `group.cc:64 -> 2 [Async thread]`): NCCL
    /// prints one per frame as a failure climbs the stack (`NCCLCHECK` in `src/include/checks.h`). The first
    /// names where it started; one marked with a thread means that thread ended with the error
    /// (`ncclAsyncJobMain` in `src/group.cc`, the proxy progress thread in `src/proxy.cc`), so the call failed.
    fn chain(&mut self, c: line::Chain<'_>, msg: &[u8], line: &[u8]) {
        if self.facts.chain_origin.is_none() {
            let ev = self.evidence(line);
            self.facts.chain_origin = Some((ev, text(msg)));
        }
        // the IB transport failing at init (disabled, no device) also leaves net_ib.cc frames: only a
        // transport that initialized was at work (decided in verdict.rs)
        if self.facts.ib_chain.is_none() && ib_source(c.file) {
            self.facts.ib_chain = Some(self.evidence(line));
        }
        if c.thread {
            self.fatal(
                line,
                format!(
                    "NCCL: {} ended with {}",
                    text(c.file),
                    result_name(c.result)
                ),
            );
        }
    }

    /// `Cuda failure 800 'operation not permitted'` (also without the number before 2.19).
    fn cuda_failure(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        let code = after(msg, b"Cuda failure ").and_then(|r| line::parse_u32(word(r)));
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        let key = code.map_or_else(|| m.clone(), |c| c.to_string());
        self.found(Code::ExplainCudaError, &key, host.as_deref(), ev, || {
            let help = match code {
                Some(800) => "cudaErrorNotPermitted: on multi-node NVLink systems (GB200/GB300 NVL) NCCL allocates fabric memory, which needs an IMEX channel in the container (/dev/nvidia-caps-imex-channels/channel0: the NVIDIA DRA driver's ComputeDomain, or the IMEX daemon on bare metal); NCCL_MNNVL_ENABLE=0 runs without multi-node NVLink".to_string(),
                Some(802) => "cudaErrorSystemNotReady: on NVSwitch systems the fabric manager is not running or not finished (`systemctl status nvidia-fabricmanager`; on GB200/GB300 also the NVLink subnet manager / IMEX), or the driver and fabric manager versions differ".to_string(),
                Some(999) | Some(3) | None if m.contains("initialization error") || m.contains("unknown error") => "the CUDA driver did not initialize in this process: a container without the GPU devices or driver libraries (NVIDIA container toolkit), a driver/CUDA mismatch, or CUDA used before fork() in the parent".to_string(),
                _ => "look up the CUDA error (cudaGetErrorName) and the lines before it; `nvidia-smi` and `dmesg` (Xid) on the node show GPU and driver faults".to_string(),
            };
            (format!("a CUDA call inside NCCL failed: {m}"), help)
        });
    }

    /// `Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000` (init.cc, before 2.30), `Multiple
    /// Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.`
    /// (2.30+): two ranks with the same host hash on one GPU; NCCL returns ncclInvalidUsage. The help is completed
    /// at the end (`verdict.rs`), where the NCCL version is known.
    fn duplicate_gpu(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainDuplicateGpu, "", host.as_deref(), ev, || {
            (
                format!("two ranks use the same GPU: {m}"),
                "each rank of a host must use its own GPU: call torch.cuda.set_device(local_rank) (or pass device_id) before init_process_group, don't restrict every process to the same CUDA_VISIBLE_DEVICES, and launch at most as many ranks per node as GPUs; containers of different pods on one node that see the same GPU need distinct NCCL_HOSTID".into(),
            )
        });
    }

    /// `MNNVL (cliqueSize 8) is available but not working on this system. Check the IMEX channel configuration
    /// (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.` (`src/mnnvl.cc`, 2.25+).
    fn mnnvl(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainMnnvl, "", host.as_deref(), ev, || {
            (
                format!("multi-node NVLink does not work here: {m}"),
                "give the pod an IMEX channel: with the NVIDIA DRA driver, a ComputeDomain and its resource claim in the pod (it mounts /dev/nvidia-caps-imex-channels/channel0); on bare metal run nvidia-imex on every node of the NVLink domain; or set NCCL_MNNVL_ENABLE=0 to use the network between trays".into(),
            )
        });
    }

    /// SHARP / CollNet set-up failures (HPC-X `sharp_plugin.c`, `transport.cc`'s `Cannot initialize CollNet,
    /// using point-to-point network instead`): NCCL carries on without in-network reductions.
    fn collnet(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainCollnetUnavailable, "", host.as_deref(), ev, || {
            (
                format!("SHARP/CollNet could not be used, NCCL reduces over point-to-point connections: {m}"),
                "SHARP needs switches that support it, the SHARP aggregation manager (sharp_am) running next to the subnet manager, and free SHARP resources (trees, QPs); without them set NCCL_COLLNET_ENABLE=0 (and do not force NCCL_ALGO=CollNet)".into(),
            )
        });
    }

    pub(super) fn version(&mut self, pi: Option<usize>, v: &[u8], line: &[u8]) {
        let w = word(v);
        let end = w.iter().position(|b| *b == b'+').unwrap_or(w.len());
        let ver = &w[..end];
        if ver.first().is_none_or(|b| !b.is_ascii_digit()) {
            return;
        }
        let ver = text(ver);
        if !self.versions.contains_key(&ver) && self.versions.len() < 64 {
            let ev = self.evidence(line);
            self.versions.insert(ver.clone(), ev);
        }
        if let Some(pi) = pi {
            self.procs[pi].version = Some(ver);
        }
    }

    fn version_mismatch(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        let m = text(msg);
        self.found(Code::ExplainVersionMismatch, "peer", host.as_deref(), ev, || {
            (
                format!("ranks run different NCCL versions: {m}"),
                "use one image (one NCCL build) for every rank; NCCL does not interoperate across versions".into(),
            )
        });
    }

    /// `Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA`.
    fn channel(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        // ` via ` sits near the end of a connection line: search backwards from there.
        let Some(i) = rfind_via(msg) else {
            return; // the ring listing `Channel 00/02 : 0 1`
        };
        let path = &msg[i + 5..];
        let pi = match pi {
            Some(pi) => pi,
            None => self.anon(),
        };
        if let Some(rest) = path.strip_prefix(b"NET/") {
            let name_end = memchr::memchr(b'/', rest).unwrap_or(rest.len());
            let name = &rest[..name_end];
            // `NET/IB/0/GDRDMA` ends so; `…/GDRDMA/Shared` and other suffixes take the search
            let gdr = rest.ends_with(b"/GDRDMA") || self.find.0.gdr.find(rest).is_some();
            let need_ev = {
                let p = &self.procs[pi];
                p.net_channel_ev.is_none() || (!gdr && p.nongdr_channel_ev.is_none())
            };
            let ev = need_ev.then(|| self.evidence(line));
            let p = &mut self.procs[pi];
            p.connections.net += 1;
            if gdr {
                p.connections.net_gdr += 1;
            } else if p.nongdr_channel_ev.is_none() {
                p.nongdr_channel_ev = ev.clone();
            }
            if p.net_channel_ev.is_none() {
                p.net_channel_ev = ev;
            }
            if !p.channel_nets.iter().any(|n| n.as_bytes() == name) && p.channel_nets.len() < 8 {
                p.channel_nets.push(text(name));
            }
        } else if path.starts_with(b"P2P/") {
            self.procs[pi].connections.p2p += 1;
        } else if path.starts_with(b"SHM/") {
            self.procs[pi].connections.shm += 1;
        } else {
            self.procs[pi].connections.other += 1;
        }
    }

    fn network(&mut self, pi: Option<usize>, net: &[u8], line: &[u8]) {
        if net.is_empty() {
            return;
        }
        // Every communicator repeats this line: a network already recorded costs no allocation.
        if let Some(p) = pi.and_then(|pi| self.procs.get(pi))
            && p.networks.iter().any(|n| n.as_bytes() == net)
            && (self.facts.using_socket.is_some()
                || !net.eq_ignore_ascii_case(NET_SOCKET.name.as_bytes()))
        {
            return;
        }
        let net = text(net);
        if net.is_empty() {
            return;
        }
        if net.eq_ignore_ascii_case(NET_SOCKET.name) && self.facts.using_socket.is_none() {
            self.facts.using_socket = Some(self.evidence(line));
        }
        let pi = match pi {
            Some(pi) => pi,
            None => self.anon(),
        };
        if !self.procs[pi].networks.contains(&net) {
            if self.procs[pi].network_ev.is_none() {
                let ev = self.evidence(line);
                self.procs[pi].network_ev = Some(ev);
            }
            self.procs[pi].networks.push(net);
        }
    }

    /// `… rank 3 nranks 16 cudaDev 3 … - Init START`.
    fn init(&mut self, pi: Option<usize>, msg: &[u8]) {
        let Some(pi) = pi else { return };
        let rank = after(msg, b" rank ").and_then(|r| line::parse_u32(word(r)));
        let nranks = after(msg, b" nranks ")
            .or_else(|| after(msg, b" nRanks "))
            .and_then(|r| line::parse_u32(word(r)));
        let dev = after(msg, b" cudaDev ").and_then(|r| line::parse_u32(word(r)));
        let p = &mut self.procs[pi];
        if nranks >= p.nranks || p.rank.is_none() {
            if rank.is_some() {
                p.rank = rank;
            }
            if nranks.is_some() {
                p.nranks = nranks;
            }
        }
        if dev.is_some() {
            p.cuda_dev = dev;
        }
    }

    /// `NAME set by environment to VALUE[.]`, `NAME set to VALUE`.
    fn env_echo(&mut self, msg: &[u8], line: &[u8]) -> bool {
        if let Some(i) = self.find.0.set_by_env.find(msg) {
            let name = &msg[..i];
            let mut value = &msg[i + b" set by environment to ".len()..];
            // integer knobs print `%lld.`
            if let Some(v) = value.strip_suffix(b".")
                && !v.is_empty()
                && v.iter()
                    .enumerate()
                    .all(|(k, b)| b.is_ascii_digit() || (k == 0 && *b == b'-'))
            {
                value = v;
            }
            self.env_value(name, value, line);
            return true;
        }
        if let Some(i) = memchr::memmem::find(msg, b" set to ") {
            let name = &msg[..i];
            if !name.contains(&b' ') {
                self.env_value(name, &msg[i + 8..], line);
                return true;
            }
        }
        false
    }

    pub(super) fn env_value(&mut self, name: &[u8], value: &[u8], line: &[u8]) {
        if name.is_empty()
            || !name
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        {
            return;
        }
        // Every rank echoes the same variables: a value already recorded costs no allocation.
        if let (Ok(n), Ok(v)) = (std::str::from_utf8(name), std::str::from_utf8(value))
            && self
                .env
                .get(n)
                .is_some_and(|values| values.contains_key(v.trim_end_matches(['\r', '\n'])))
        {
            return;
        }
        let name = text(name);
        let value = String::from_utf8_lossy(value)
            .trim_end_matches(['\r', '\n'])
            .to_string();
        if self.env.len() >= 1024 && !self.env.contains_key(&name) {
            return;
        }
        let ev = self.evidence(line);
        let values = self.env.entry(name).or_default();
        if values.len() < 16 {
            values.entry(value).or_insert(ev);
        }
    }

    /// `Invalid value X for NAME, using default D.`
    fn invalid_value(&mut self, pi: Option<usize>, rest: &[u8], line: &[u8]) {
        let rest = text(rest);
        let (value, tail) = rest.split_once(" for ").unwrap_or((&rest, ""));
        let (name, default) = tail.split_once(", using default ").unwrap_or((tail, "?"));
        let default = default.trim_end_matches('.');
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        let (value, name, default) = (value.to_string(), name.to_string(), default.to_string());
        self.found(Code::ExplainInvalidValue, &name.clone(), host.as_deref(), ev, || {
            (
                format!("NCCL rejected {name}={value} and used its default {default}"),
                format!("set {name} to a value in range (NCCL reads integers with strtoll; out-of-range values fall back to the default)"),
            )
        });
    }

    fn rings(&mut self, msg: &[u8], line: &[u8]) {
        if let Some(g) = after(msg, b" GDR ") {
            let on = word(g) == b"1";
            if self.facts.gdr_rings.is_none() {
                self.facts.gdr_rings = Some((on, self.evidence(line)));
            }
        }
    }

    fn bootstrap(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) -> bool {
        let Some(rest) = msg.strip_prefix(b"Bootstrap") else {
            return false;
        };
        let rest = rest
            .trim_ascii_start()
            .strip_prefix(b":")
            .unwrap_or(rest)
            .trim_ascii_start();
        if rest.starts_with(b"no socket interface found") {
            self.no_interface(pi, "bootstrap", line);
            true
        } else if let Some(list) = rest.strip_prefix(b"Using") {
            // `Bootstrap : Using eth0:10.0.0.1<0>` (2.5–2.7 list several: `[0]eth0:… [1]…`)
            let ifs = sockets::parse_list(list);
            self.socket_addresses(&ifs);
            if self.facts.bootstrap_ifs.is_none() && !ifs.is_empty() {
                let ev = self.evidence(line);
                self.facts.bootstrap_ifs = Some((ifs, ev));
            }
            true
        } else {
            // timings, …
            rest.starts_with(b"timings")
        }
    }

    fn no_interface(&mut self, pi: Option<usize>, what: &'static str, line: &[u8]) {
        if self.facts.no_interface.is_none() {
            self.facts.no_interface = Some((self.evidence(line), what));
        }
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        // counted as a finding at the end, where NCCL_SOCKET_IFNAME is known; keep hosts and count here
        self.found(
            Code::ExplainBootstrapNoInterface,
            "",
            host.as_deref(),
            ev,
            || (String::new(), String::new()),
        );
    }

    fn net_not_found(&mut self, pi: Option<usize>, name: Option<String>, line: &[u8]) {
        if self.facts.net_not_found.is_none() {
            self.facts.net_not_found = Some((self.evidence(line), name.unwrap_or_default()));
        }
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainNetNotFound, "", host.as_deref(), ev, || {
            (String::new(), String::new())
        });
    }

    /// `NET/<net> : …` (`rest` starts after `NET/`).
    fn net(&mut self, pi: Option<usize>, rest: &[u8], line: &[u8], warn: bool) -> bool {
        let name_end = rest
            .iter()
            .position(|b| *b == b' ' || *b == b':')
            .unwrap_or(rest.len());
        let net = &rest[..name_end];
        // aws-ofi-nccl's network is `AWS Libfabric` (≤1.6), with a space
        let (net, name_end) = if rest.starts_with(b"AWS Libfabric") {
            (&b"Libfabric"[..], 13)
        } else {
            (net, name_end)
        };
        let body = rest[name_end..].trim_ascii_start();
        let body = body.strip_prefix(b":").unwrap_or(body).trim_ascii_start();
        match net {
            b"Plugin" => {
                self.plugin(body, line);
                true
            }
            b"Socket" | b"FastSocket" => {
                if let Some(list) = body.strip_prefix(b"Using") {
                    if self.facts.socket_using.is_none() {
                        self.facts.socket_using = Some(self.evidence(line));
                    }
                    let ifs = sockets::parse_list(list);
                    for i in &ifs {
                        if self.socket_ifs.len() < 64 {
                            self.socket_ifs.insert(i.name.clone());
                        }
                    }
                    self.socket_addresses(&ifs);
                    if self.facts.net_socket_ifs.is_none() && !ifs.is_empty() {
                        let ev = self.evidence(line);
                        self.facts.net_socket_ifs = Some((ifs, ev));
                    }
                    true
                } else if body.starts_with(b"no interface found") {
                    self.no_interface(pi, "NET/Socket", line);
                    true
                } else if net == b"FastSocket" {
                    // Google's TCP plugin: its settings lines (`Tx CPU start`, `plugin initialized`, …)
                    if self.facts.tcp_plugin.is_none() {
                        self.facts.tcp_plugin = Some(self.evidence(line));
                    }
                    true
                } else {
                    body.starts_with(b"GPU Direct RDMA")
                }
            }
            b"OFI" => {
                self.ofi(pi, body, line, warn);
                true
            }
            // NCCL's own per-NIC line for the plugin's network (`NET/%s : GPU Direct RDMA %s for HCA`,
            // `src/graph/topo.cc`); anything else under this name is the plugin's
            b"Libfabric" if body.starts_with(b"GPU Direct RDMA ") => {
                self.gdr_hca(&body[b"GPU Direct RDMA ".len()..], line);
                true
            }
            b"Libfabric" => {
                self.ofi(pi, body, line, warn);
                true
            }
            _ => self.net_ib(pi, net, body, line, warn),
        }
    }

    /// Lines of the IB transport and IB-like plugins (`NET/IB`, `NET/IBext_v8`, …).
    fn net_ib(
        &mut self,
        pi: Option<usize>,
        net: &[u8],
        body: &[u8],
        line: &[u8],
        warn: bool,
    ) -> bool {
        self.facts.ib_probed = true;
        if body.starts_with(b"No device found") {
            self.facts.ib_no_device_count += 1;
            if self.facts.ib_no_device.is_none() {
                self.facts.ib_no_device = Some(self.evidence(line));
            }
            return true;
        }
        if let Some(list) = body.strip_prefix(b"Using") {
            self.ib_using(pi, list, line);
            return true;
        }
        if let Some(rest) = body.strip_prefix(b"GPU Direct RDMA ") {
            self.gdr_hca(rest, line);
            return true;
        }
        if body.starts_with(b"Got completion") {
            self.completion(pi, body, line);
            return true;
        }
        if let Some(ev_at) = memchr::memmem::find(body, b"async")
            && warn
            && memchr::memmem::find(&body[ev_at..], b"event").is_some()
        {
            self.async_event(pi, body, line);
            return true;
        }
        if memchr::memmem::find(body, b"incompatible devices").is_some() {
            // 2.26+: `NET/IB : Attempted to connect incompatible devices: [mlx5_0 (IB), mlx5_2 (RoCE)] …
            // Try selecting NICs of only one link type using NCCL_IB_HCA` (net_ib.cc)
            if self.facts.mixed_link_warn.is_none() {
                self.facts.mixed_link_warn = Some(self.evidence(line));
            }
            return true;
        }
        if memchr::memmem::find(body, b"ncclIbRoceGetVersionNum").is_some() {
            self.gid_type_unreadable(pi, body, line);
            return true;
        }
        if memchr::memmem::find(body, b"SHARP").is_some() {
            self.collnet(pi, body, line);
            return true;
        }
        if memchr::memmem::find(body, b" qpn ").is_some() {
            self.ib_connect(pi, body, line);
            return true;
        }
        if body.starts_with(b"No IP interface found") {
            self.no_interface(pi, "NET/IB out-of-band", line);
            return true;
        }
        if let Some(dev) = body.strip_prefix(b"Unable to open device") {
            self.ib_open_failed(pi, dev, line);
            return true;
        }
        let _ = (net, warn);
        if body.starts_with(b"[") {
            self.ib_device_speed(body);
            return true;
        }
        body.starts_with(b"Made virtual device")
    }

    /// `NET/IB : Using [0]mlx5_0:1/RoCE …`: the devices and ports the transport took (an empty list means
    /// it found none it could use), and the out-of-band interface after the `;`.
    fn ib_using(&mut self, pi: Option<usize>, list: &[u8], line: &[u8]) {
        let list = &list[..memchr::memchr(b';', list).unwrap_or(list.len())];
        let mut any = false;
        let mut ports = 0u32;
        for t in list
            .split(|b| b.is_ascii_whitespace() || matches!(b, b',' | b'{' | b'}' | b'='))
            .filter(|t| !t.is_empty())
        {
            let t = strip_index(t);
            let (Some(colon), Some(slash)) = (memchr::memchr(b':', t), memchr::memchr(b'/', t))
            else {
                continue;
            };
            if slash < colon {
                continue;
            }
            any = true;
            ports += 1;
            let port = line::parse_u32(&t[colon + 1..slash]);
            // Every rank lists the same devices: skip known ones without allocating.
            if self
                .devices
                .keys()
                .any(|(n, p)| *p == port && n.as_bytes() == &t[..colon])
            {
                continue;
            }
            let name = text(&t[..colon]);
            let ll = text(&t[slash + 1..]);
            if self.devices.len() < 1024 {
                self.devices.entry((name.clone(), port)).or_insert(Device {
                    name,
                    port,
                    link_layer: ll,
                    gdr: None,
                    speed_mbps: None,
                });
            }
        }
        if let Some(i) = pi {
            let p = &mut self.procs[i];
            p.rdma_ports = p.rdma_ports.max(ports);
        }
        if !any && self.facts.ib_using_empty.is_none() {
            self.facts.ib_using_empty = Some(self.evidence(line));
        }
        if any && self.facts.ib_using.is_none() {
            let ev = self.evidence(line);
            self.facts.ib_using = Some(ev.clone());
            self.facts.ib_active.get_or_insert(ev);
        }
        if let Some(o) = sockets::oob(list)
            && self.facts.oob_if.is_none()
        {
            self.socket_addresses(std::slice::from_ref(&o));
            let ev = self.evidence(line);
            self.facts.oob_if = Some((o, ev));
        }
    }

    /// `ncclIbRoceGetVersionNum` failing: the port is RoCE, and its GID table holds entries another
    /// network namespace owns.
    fn gid_type_unreadable(&mut self, pi: Option<usize>, body: &[u8], line: &[u8]) {
        // 2.23+: reading gid_attrs/types/<index> failed; only RoCE ports have GID types to read. In a
        // container the entry of another netdev is empty and reads EINVAL (kernel
        // drivers/infiniband/core/sysfs.c), which 2.21-2.25 treat as an error (NVIDIA/nccl#1573)
        self.facts.link.roce = true;
        let m = text(body);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainGid, "read", host.as_deref(), ev, || {
            (
                format!("NCCL could not read a RoCE GID's type: {m}"),
                "the GID table of the pod's RDMA device has entries of other network namespaces (macvlan/SR-IOV pods), whose gid_attrs read EINVAL: NCCL ≥ 2.26 skips them; on older NCCL set NCCL_IB_GID_INDEX to the pod's RoCE v2 GID (`show_gids` in the pod) or NCCL_IB_ADDR_RANGE to its subnet".into(),
            )
        });
    }

    /// A queue pair's connect line: the link layer it shows (a GID is RoCE, a LID InfiniBand), a
    /// link-local GID that does not route, and proof the IB transport was at work.
    fn ib_connect(&mut self, pi: Option<usize>, body: &[u8], line: &[u8]) {
        // `NET/IB: Dev 0 Port 1 qpn 1047 mtu 5 … GID 0 (80FE/…)` on RoCE, `… LID 12` on InfiniBand
        // (ncclIbConnect: the GID form is printed only when the link layer is Ethernet)
        if let Some(g) = after(body, b" GID ") {
            self.facts.link.roce = true;
            // `GID 0 (80FE/…)`: the subnet prefix printed as a host-endian u64, so fe80::/64 reads 80FE
            let subnet =
                after(g, b"(").map(|s| &s[..s.iter().position(|b| *b == b'/').unwrap_or(s.len())]);
            if subnet.is_some_and(|s| s.eq_ignore_ascii_case(b"80FE")) {
                let idx = text(word(g));
                let host = self.host_of(pi);
                let ev = self.evidence(line);
                self.found(Code::ExplainGid, "link-local", host.as_deref(), ev, || {
                    (
                        format!("NCCL uses the link-local RoCE GID at index {idx} (fe80::…): it is not routed between subnets"),
                        "a link-local GID reaches only peers on the same layer-2 segment, and RoCE v2 fabrics route: set NCCL_IB_GID_INDEX to the RoCE v2 GID of the routable address (IPv4-mapped ::ffff:… or a global IPv6; `show_gids`, usually index 3), or unset it on NCCL ≥ 2.21, which picks one itself (NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE to steer it)".into(),
                    )
                });
            }
        } else if memchr::memmem::find(body, b" LID ").is_some() {
            self.facts.link.ib = true;
        }
        if self.facts.ib_active.is_none() {
            self.facts.ib_active = Some(self.evidence(line));
        }
    }

    /// `Unable to open device mlx5_0`: the device is in sysfs but not in the container's /dev.
    fn ib_open_failed(&mut self, pi: Option<usize>, dev: &[u8], line: &[u8]) {
        let dev = text(word(dev));
        if self.facts.ib_open_failed.is_none() {
            self.facts.ib_open_failed = Some((self.evidence(line), dev.clone()));
        }
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainIbDeviceOpen, "", host.as_deref(), ev, || {
            (
                format!("NCCL could not open RDMA device {dev}"),
                "the container sees the device in sysfs but not /dev/infiniband: request the RDMA resource (`rdma/ib`) so the device plugin mounts it, or pass --device /dev/infiniband; IPC_LOCK is needed too".into(),
            )
        });
    }

    /// A device's link speed from the per-device detail line, the first seen for each device winning.
    fn ib_device_speed(&mut self, body: &[u8]) {
        // 2.27+ per-device detail (`ncclIbInitDevices`, INFO NET):
        // `NET/IB: [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5 speed=400000 context=0x… pciPath=… ar=0`
        let dev = strip_index(body).trim_ascii_start();
        let name = &dev[..memchr::memchr(b':', dev).unwrap_or(0)];
        if let Some(mbps) = after(body, b" speed=").and_then(|v| line::parse_u32(word(v)))
            && !name.is_empty()
            && self.facts.speeds.len() < 1024
        {
            self.facts.speeds.entry(text(name)).or_insert(mbps);
        }
    }

    /// `GPU Direct RDMA Enabled for HCA 0 'mlx5_0'` (NCCL, `src/graph/topo.cc`; the text after `GPU Direct RDMA `),
    /// and HPC-X's `GPU Direct RDMA (nvidia-peermem) enabled for HCA 0 'mlx5_0` / `(DMABUF) enabled`
    /// (nccl-rdma-sharp-plugins `p2p_plugin.c`, which prints nothing for a NIC without GPUDirect RDMA).
    fn gdr_hca(&mut self, rest: &[u8], line: &[u8]) {
        let enabled = rest.starts_with(b"Enabled")
            || rest.starts_with(b"(nvidia-peermem) enable")
            || rest.starts_with(b"(DMABUF) enable");
        let name = rest
            .split(|b| *b == b'\'')
            .nth(1)
            .map(text)
            .unwrap_or_else(|| text(word(rest.rsplit(|b| *b == b' ').next().unwrap_or(b""))));
        if !self.facts.gdr_hca.contains_key(&name) && self.facts.gdr_hca.len() < 1024 {
            let ev = self.evidence(line);
            self.facts.gdr_hca.insert(name, (enabled, ev));
        }
    }

    /// `NET/Plugin …` lines: a named plugin that failed to load matters; the default one missing does not.
    fn plugin(&mut self, body: &[u8], line: &[u8]) {
        let failed = [
            &b"Could not find"[..],
            b"No plugin found",
            b"Plugin load",
            b"Failed to find",
            b"dlerror",
        ]
        .iter()
        .any(|n| memchr::memmem::find(body, n).is_some());
        // the library exists but cannot be loaded: a dlerror that is not "No such file" (a missing GLIBC
        // symbol version, an undefined symbol, a wrong ELF class), or 2.28's `External network plugin … is
        // unsupported`
        let broken = [
            &b"not found (required by"[..],
            b"undefined symbol",
            b"wrong ELF class",
            b"is unsupported",
        ]
        .iter()
        .any(|n| memchr::memmem::find(body, n).is_some());
        if broken {
            let m = text(body);
            let ev = self.evidence(line);
            self.found(Code::ExplainNetPluginError, "load", None, ev, || {
                (
                    format!("the NCCL net plugin is installed but could not be loaded: {m}"),
                    "the plugin was built for another system (a newer glibc, another NCCL ABI, another architecture) than the container: use the plugin build that matches the image (for gIB, the installer's image for this OS; for aws-ofi-nccl, the build for this CUDA and libfabric), or an image with a newer glibc".into(),
                )
            });
        }
        if failed {
            if self.facts.plugin_failures.len() < 8 {
                let ev = self.evidence(line);
                self.facts.plugin_failures.push((ev, text(body)));
            }
        } else if let Some(rest) = after(body, b"Loaded net plugin ") {
            // `Loaded net plugin NCCL RDMA Plugin v6 (v6)`: the name, then the API version NCCL matched
            let name = memchr::memmem::rfind(rest, b" (v").map_or(rest, |i| &rest[..i]);
            self.facts.plugins_loaded.insert(text(word(rest)));
            self.facts.plugins_loaded.insert(text(name));
            self.external_plugin(text(name), line);
        }
    }

    /// Remember the first line that shows an external net plugin loaded.
    fn external_plugin(&mut self, name: String, line: &[u8]) {
        if self.facts.external_plugin.is_none() {
            let ev = self.evidence(line);
            self.facts.external_plugin = Some((name, ev));
        }
    }

    /// `GPU Direct RDMA Enabled for GPU 1b000 / HCA 0 (distance 4 <= 5), read 1` (the message after `GPU Direct RDMA `).
    fn gdr_pair(&mut self, rest: &[u8], line: &[u8]) {
        if rest.starts_with(b"Enabled") {
            if self.facts.gdr_pair_enabled.is_none() {
                self.facts.gdr_pair_enabled = Some(self.evidence(line));
            }
        } else if rest.starts_with(b"Disabled") && self.facts.gdr_pair_distance.is_none() {
            let distance = after(rest, b"(distance ")
                .map(|d| text(&d[..memchr::memchr(b')', d).unwrap_or(d.len())]))
                .unwrap_or_default();
            self.facts.gdr_pair_distance = Some((self.evidence(line), distance));
        }
    }

    /// `Got completion from peer <ip><port> with error 12, opcode …, vendor err 129 …` (all versions).
    fn completion(&mut self, pi: Option<usize>, body: &[u8], line: &[u8]) {
        let status = after(body, b"with error ")
            .or_else(|| after(body, b"status="))
            .and_then(|s| {
                let s = word(s);
                let s = s.strip_suffix(b",").unwrap_or(s);
                // 2.28.7+: `status=IBV_WC_RETRY_EXC_ERR(12)`
                let s = match memchr::memchr(b'(', s) {
                    Some(o) => &s[o + 1..memchr::memchr(b')', s).unwrap_or(s.len())],
                    None => s,
                };
                line::parse_u32(s)
            });
        let vendor = after(body, b"vendor err ")
            .or_else(|| after(body, b"vendor_err="))
            .and_then(|s| line::parse_u32(word(s).strip_suffix(b",").unwrap_or(word(s))));
        let peer = after(body, b"from peer ")
            .map(|p| text(word(p)))
            .unwrap_or_default();
        let hca = after(body, b" hca ").map(|p| text(word(p)));
        if after(body, b"localGid").is_some() {
            // net_ib.cc prints the GIDs only when the port's link layer is Ethernet
            self.facts.link.roce = true;
        }
        if self.facts.ib_active.is_none() {
            self.facts.ib_active = Some(self.evidence(line));
        }
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        let status_name = status
            .and_then(|s| WC_STATUS.get(s as usize).copied())
            .unwrap_or("unknown status");
        let st = status.map_or("?".to_string(), |s| s.to_string());
        let vend = vendor.map_or(String::new(), |v| format!(", vendor err {v} (0x{v:x})"));
        let on = hca.map(|h| format!(" on {h}")).unwrap_or_default();
        let code = if status == Some(12) {
            Code::ExplainIbRetryExceeded
        } else {
            Code::ExplainIbCompletionError
        };
        self.found(code, &st, host.as_deref(), ev, || match status {
            Some(12) => (
                format!("IB work completion failed: the peer {peer} never acknowledged (status 12 {status_name}{vend}){on}"),
                "the peer is unreachable over the RDMA fabric: on RoCE check the GID NCCL picked (NCCL_IB_GID_INDEX, or NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE), NCCL_IB_TC and the MTU, and that the rails route to each other (NCCL_CROSS_NIC=0 on rail-only fabrics); if it began mid-job on several nodes at once, suspect a link or fabric event".into(),
            ),
            Some(4) => (
                format!("IB work completion failed: local protection error talking to {peer} (status 4 {status_name}{vend}){on}"),
                "the NIC could not DMA to the registered GPU memory, usually because PCIe ACS or the IOMMU blocks peer-to-peer traffic: disable ACS on the PCIe switches (`lspci -vvv | grep ACSCtl`) or boot with iommu=pt; NCCL_NET_GDR_LEVEL=LOC (GPUDirect RDMA off) confirms it".into(),
            ),
            Some(5) => (
                format!("IB work requests flushed after an earlier error (status 5 {status_name}{vend}){on}"),
                "a consequence of the first error on the queue pair: look at the earlier completion error".into(),
            ),
            Some(13) => (
                format!("IB work completion failed: receiver not ready, retries exhausted (status 13 {status_name}{vend}){on}"),
                "the peer stopped posting receives (it crashed or hung): look at the peer's log first".into(),
            ),
            _ => (
                format!("IB work completion failed talking to {peer} (status {st} {status_name}{vend}){on}"),
                "look up the status in rdma-core's `enum ibv_wc_status`; check the peer's log and the fabric counters".into(),
            ),
        });
    }

    /// `Call to ibv_modify_qp failed …`, `Call to ibv_reg_mr failed …`.
    fn verbs_call(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        let host = self.host_of(pi);
        if msg.starts_with(b"Call to ibv_modify_qp") {
            // INFO lines are retries (`…, retrying 1/5 after …`); only the final WARN counts
            if !warn {
                return true;
            }
            let m = text(msg);
            let err = m
                .split_once(" failed with ")
                .map(|(_, e)| {
                    e.trim_start_matches("error ")
                        .split(',')
                        .next()
                        .unwrap_or(e)
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            if m.contains("local GID ::ffff:") || m.contains("remote GID ::ffff:") {
                // an IPv4-mapped GID exists only on a RoCE port (it is built from the netdev's IPv4 address)
                self.facts.link.roce = true;
            }
            if m.contains("Network is unreachable") {
                // RTR on RoCE resolves the peer's GID to a MAC through the kernel's routing (ib_resolve_eth_dmac
                // → rdma_addr_find_l2_eth_by_grh in drivers/infiniband/core); InfiniBand addresses by LID
                self.facts.link.roce = true;
            }
            if self.facts.ib_active.is_none() {
                self.facts.ib_active = Some(self.evidence(line));
            }
            let ev = self.evidence(line);
            let key = err.trim_end_matches('.').to_string();
            self.found(Code::ExplainQpConnectFailed, &key, host.as_deref(), ev, || {
                let gid = m.split_once(", curr state").map(|(_, r)| format!(" (curr state{r})")).unwrap_or_default();
                (
                    format!("connecting a queue pair failed: ibv_modify_qp: {}{gid}", key),
                    "the NICs cannot reach each other: a wrong GID (link-local fe80, wrong VLAN or address family: NCCL_IB_GID_INDEX / NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE), unroutable RoCE subnets, or cross-rail traffic on a rail-only fabric (set NCCL_CROSS_NIC=0, NVIDIA/nccl#2013)".into(),
                )
            });
            return true;
        }
        if msg.starts_with(b"Call to ibv_reg") {
            let m = text(msg);
            if m.contains("Cannot allocate memory") || m.contains("errno 12") {
                let ev = self.evidence(line);
                self.found(Code::ExplainMemlock, "", host.as_deref(), ev, || {
                    (
                        format!("RDMA memory registration failed for lack of locked memory: {m}"),
                        "grant the container IPC_LOCK and an unlimited memlock limit (`ulimit -l unlimited`; docker --ulimit memlock=-1; Kubernetes: capabilities.add [IPC_LOCK])".into(),
                    )
                });
                return true;
            }
            return false;
        }
        false
    }

    /// An `NCCL ATTN` notice no rule explained: shown, never the cause of a failure.
    fn generic_notice(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        let key = grouping_key(&m);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainNcclNotice, &key, host.as_deref(), ev, || {
            (
                format!("NCCL notice: {m}"),
                "NCCL 2.32+ prints notices (`NCCL ATTN`) for conditions worth knowing that are not failures by themselves: read the lines around it".into(),
            )
        });
    }

    pub(super) fn generic_warning(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        if self.facts.first_warn.is_none() {
            let ev = self.evidence(line);
            self.facts.first_warn = Some((ev, m.clone()));
        }
        let key = grouping_key(&m);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        self.found(Code::ExplainNcclWarning, &key, host.as_deref(), ev, || {
            (
                format!("NCCL warning: {m}"),
                "read the lines around it; NCCL prints the call chain that failed as `file.cc:NNN -> N` lines after a WARN".into(),
            )
        });
    }
}

impl Explainer {
    /// Remember the addresses of socket interfaces (distinct addresses mean distinct hosts).
    fn socket_addresses(&mut self, ifs: &[sockets::Iface]) {
        for i in ifs {
            if !i.addr.is_empty()
                && sockets::unreachable(i).is_none()
                && self.facts.socket_addrs.len() < 64
            {
                self.facts.socket_addrs.insert(i.addr.clone());
            }
        }
    }

    /// `NET/OFI …` lines of aws-ofi-nccl (`nccl_net_ofi_*`): the provider it selected, and its errors.
    fn ofi(&mut self, pi: Option<usize>, body: &[u8], line: &[u8], warn: bool) {
        // its INFO lines and runtime errors (registering memory, connecting) show it at work; a failure to
        // initialize (no provider from fi_getinfo, `nccl_net_ofi_*_init`) does not
        let init_failure = warn
            && (memchr::memmem::find(body, b"fi_getinfo").is_some()
                || memchr::memmem::find(body, b"nitializ").is_some());
        if !init_failure && self.facts.ofi.is_none() {
            self.facts.ofi = Some(self.evidence(line));
        }
        if let Some(p) = after(body, b"Selected Provider is ") {
            self.facts.ofi_provider.get_or_insert_with(|| text(word(p)));
        }
        // the plugin decided the platform has no GPUDirect RDMA (its provider lacks FI_HMEM, or CUDA use
        // cannot be turned off): 1.17+ `Need to force simple protocol: GDR not supported`, 1.15–1.16 `Setting
        // NCCL_PROTO='simple' … (reason: GDR not supported)` (`nccl_net_ofi_configure_nccl_proto_simple`,
        // src/nccl_ofi_net.cpp), TRACE `… API, without GPUDirect RDMA support`, and `Could not disable CUDA API
        // usage for HMEM, disabling GDR` (src/nccl_ofi_ofiutils.cpp)
        let has = |n: &[u8]| memchr::memmem::find(body, n).is_some();
        if (has(b"GDR not supported")
            || has(b"without GPUDirect RDMA support")
            || has(b"disabling GDR"))
            && self.facts.ofi_gdr_unsupported.is_none()
        {
            self.facts.ofi_gdr_unsupported = Some(self.evidence(line));
        }
        if warn && has(b"GDR disabled on GDR-supported instance") {
            // src/platform-aws.cpp: an instance type that has GPUDirect RDMA (p4d, p5, …) came up without it
            if self.facts.ofi_gdr_required.is_none() {
                self.facts.ofi_gdr_required = Some(self.evidence(line));
            }
            return;
        }
        if !warn {
            return;
        }
        let m = text(body);
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        if (m.contains("register memory") || m.contains("fi_mr_reg"))
            && (m.contains("Cannot allocate memory") || m.contains("RC: 12") || m.contains("-12"))
        {
            self.found(Code::ExplainMemlock, "", host.as_deref(), ev, || {
                (
                    format!("RDMA memory registration failed for lack of locked memory: NET/OFI {m}"),
                    "grant the container an unlimited memlock limit (`ulimit -l unlimited`; docker --ulimit memlock=-1; in Kubernetes the EFA device plugin's pods need IPC_LOCK) and check `ulimit -l` inside the job, under mpirun too".into(),
                )
            });
            return;
        }
        let key: String = m
            .chars()
            .take(60)
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        let getinfo = m.contains("fi_getinfo");
        self.found(Code::ExplainNetPluginError, &key, host.as_deref(), ev, || {
            let help = if getinfo {
                "libfabric found no usable provider or device: the container does not see the EFA devices (request vpc.amazonaws.com/efa in the pod, or pass /dev/infiniband/* to docker), or FI_PROVIDER names a provider that is not there; `fi_info -p efa -t FI_EP_RDM` inside the container must list the devices"
            } else {
                "aws-ofi-nccl reported an error from libfabric: check that aws-ofi-nccl, libfabric (the EFA installer) and NCCL versions match, the EFA devices are visible in the container (`fi_info -p efa`), and FI_* settings; FI_LOG_LEVEL=warn shows libfabric's reason"
            };
            (format!("the aws-ofi-nccl plugin failed: NET/OFI {m}"), help.into())
        });
    }

    /// `NET/IB : mlx5_0:1 Got async event : local access violation work queue error` (≤2.22), `… async fatal
    /// event: …` (2.23+): the NIC reported an error outside any request (`ncclIbAsyncThreadMain`, net_ib.cc).
    fn async_event(&mut self, pi: Option<usize>, body: &[u8], line: &[u8]) {
        let m = text(body);
        let dev = text(word(body));
        let host = self.host_of(pi);
        let ev = self.evidence(line);
        if self.facts.ib_active.is_none() {
            self.facts.ib_active = Some(ev.clone());
        }
        let key: String = m.split(':').next_back().unwrap_or("").trim().to_string();
        self.found(Code::ExplainIbAsyncEvent, &key, host.as_deref(), ev, || {
            (
                format!("the RDMA device reported an asynchronous error: {m}"),
                format!("an async event on {dev} means the NIC saw an error on a queue pair or the port: access violations point at memory registration (GPUDirect RDMA through an IOMMU or PCIe ACS; try NCCL_NET_GDR_LEVEL=LOC to confirm), port or GID-table events at the link (`ibv_devinfo`, switch logs); the completion errors that follow are its consequence"),
            )
        });
    }
}

/// Does this prefix or file token name the IB transport's source (`transport/net_ib.cc`, the 2.29
/// `net_ib/` directory, HPC-X's `ib_plugin.c`)?
fn ib_source(b: &[u8]) -> bool {
    memchr::memmem::find(b, b"net_ib").is_some() || memchr::memmem::find(b, b"ib_plugin").is_some()
}

/// `ncclResult_t` names (`src/nccl.h.in`).
fn result_name(r: u32) -> &'static str {
    match r {
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        _ => "an error",
    }
}

/// Could [`Explainer::dispatch`] use this INFO message? A cheap filter so the bulk of a long log (collective
/// calls, proxy chatter, tuning tables) costs no process lookup.
fn interesting(msg: &[u8]) -> bool {
    match msg.first() {
        Some(b'C') => {
            msg.starts_with(b"Channel ") || msg.starts_with(b"Call to ") || msg.starts_with(b"Co")
        }
        Some(b'N') => msg.starts_with(b"NET/") || msg.starts_with(b"NCCL"),
        Some(b'U') => msg.starts_with(b"Using network "),
        Some(b'A') => msg.starts_with(b"Assigned NET plugin "),
        Some(b'B' | b'G' | b'F' | b'E' | b'I' | b'M' | b'P' | b'S' | b'D') => true,
        Some(b'c') => msg.starts_with(b"comm "),
        Some(b'R') => msg.starts_with(b"Ring "),
        _ => {
            msg.ends_with(b"Init START")
                || msg.ends_with(b"Init COMPLETE")
                || (msg
                    .last()
                    .is_some_and(|b| b.is_ascii_digit() || *b == b']' || *b == b')')
                    && memchr::memmem::find(msg, b" -> ").is_some())
        }
    }
}

/// Position of the last ` via ` in a channel line.
fn rfind_via(msg: &[u8]) -> Option<usize> {
    let mut end = msg.len();
    while let Some(v) = memchr::memrchr(b'v', &msg[..end]) {
        if v >= 1 && msg[v - 1] == b' ' && msg.get(v..v + 4) == Some(b"via ") {
            return Some(v - 1);
        }
        end = v;
    }
    None
}

/// `[0]mlx5_0:1/IB` → `mlx5_0:1/IB`.
fn strip_index(t: &[u8]) -> &[u8] {
    if t.first() == Some(&b'[')
        && let Some(close) = memchr::memchr(b']', t)
        && t[1..close].iter().all(u8::is_ascii_digit)
    {
        return &t[close + 1..];
    }
    t
}

/// What groups messages that differ only in numbers (addresses, ranks, counts): the first 120 characters with
/// every digit masked.
fn grouping_key(m: &str) -> String {
    m.chars()
        .take(120)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::Evidence;

    #[test]
    fn index_prefixes_are_stripped() {
        assert_eq!(strip_index(b"[0]mlx5_0:1/IB"), b"mlx5_0:1/IB");
        assert_eq!(strip_index(b"[RO];"), b"[RO];");
        assert_eq!(strip_index(b"eth0:1.2.3.4<0>"), b"eth0:1.2.3.4<0>");
    }

    #[test]
    fn every_status_has_a_name() {
        assert_eq!(WC_STATUS[12], "IBV_WC_RETRY_EXC_ERR");
        assert_eq!(WC_STATUS[4], "IBV_WC_LOC_PROT_ERR");
    }

    #[test]
    fn evidence_keeps_line_numbers() {
        let e = Evidence::new("f.log", 7, b"x\x07y");
        assert_eq!((e.line, e.text.as_str()), (7, "xy"));
    }
}
