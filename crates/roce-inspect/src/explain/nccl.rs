//! Handlers for NCCL INFO/WARN messages (formats of NCCL 2.18–2.28; `nccl-ucx-facts.md` §2).

use roce_model::Code;

use super::line::{self, Level, NcclLine, after, text, word};
use super::{Device, Explainer};

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
            Level::Version => {}
        }
        let msg = l.msg.trim_ascii();
        if l.level == Level::Info && !interesting(msg) {
            return;
        }
        let pi = if l.level == Level::Info {
            self.proc_of_prefix(l.prefix)
        } else {
            line::who(l.prefix, warn).map(|w| self.proc_of(w.key, w.host, w.dev))
        };
        if l.level == Level::Version {
            self.version(pi, msg, line);
            return;
        }
        if !self.dispatch(pi, msg, line, warn) && warn {
            self.generic_warning(pi, msg, line);
        }
    }

    /// Route a message by its first bytes; `true` when it was understood (or is known to be noise).
    fn dispatch(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8], warn: bool) -> bool {
        match msg.first() {
            Some(b'C') => {
                if msg.starts_with(b"Channel ") {
                    self.channel(pi, msg, line);
                    true
                } else if msg.starts_with(b"Call to ") {
                    self.verbs_call(pi, msg, line, warn)
                } else if let Some(v) = msg.strip_prefix(b"Comm config netName reset to NCCL_NET=")
                {
                    self.env_value(b"NCCL_NET", v, line);
                    true
                } else if msg.starts_with(b"Connected all rings") {
                    self.rings(msg, line);
                    true
                } else {
                    false
                }
            }
            Some(b'N') => {
                if let Some(rest) = msg.strip_prefix(b"NET/") {
                    self.net(pi, rest, line, warn)
                } else if let Some(v) = msg.strip_prefix(b"NCCL version ") {
                    self.version(pi, v, line);
                    true
                } else if msg.starts_with(b"NCCL_") {
                    self.env_echo(msg, line)
                } else if msg.starts_with(b"NCCL version mismatch") {
                    self.version_mismatch(pi, msg, line);
                    true
                } else {
                    false
                }
            }
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
            Some(b'F') => {
                if msg.starts_with(b"Failed to initialize any NET plugin") {
                    self.net_not_found(pi, None, line);
                    true
                } else if let Some(net) = msg.strip_prefix(b"Failed to initialize NET plugin ") {
                    if net.starts_with(b"IB") && self.facts.ib_init_failed.is_none() {
                        self.facts.ib_init_failed = Some(self.evidence(line));
                    }
                    true
                } else {
                    false
                }
            }
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
            Some(b'M') => {
                if msg.starts_with(b"Mismatched NCCL version") {
                    self.version_mismatch(pi, msg, line);
                    true
                } else {
                    false
                }
            }
            Some(b'P') => {
                if let Some(rest) = msg.strip_prefix(b"Plugin name set by env to ") {
                    self.env_value(b"NCCL_NET_PLUGIN", rest, line);
                    true
                } else if let Some(rest) = msg.strip_prefix(b"P2P plugin ") {
                    self.facts.plugins_loaded.insert(text(rest));
                    true
                } else {
                    msg.starts_with(b"Plugin Path")
                }
            }
            Some(b'S') => {
                if let Some(rest) = msg.strip_prefix(b"Successfully loaded external") {
                    self.facts.plugins_loaded.insert(text(word(
                        rest.rsplit(|b| *b == b' ').next().unwrap_or(rest),
                    )));
                    true
                } else {
                    false
                }
            }
            _ => {
                if msg.ends_with(b"Init START") || msg.ends_with(b"Init COMPLETE") {
                    self.init(pi, msg);
                    true
                } else {
                    false
                }
            }
        }
    }

    fn version(&mut self, pi: Option<usize>, v: &[u8], line: &[u8]) {
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
            && (self.facts.using_socket.is_some() || !net.eq_ignore_ascii_case(b"Socket"))
        {
            return;
        }
        let net = text(net);
        if net.is_empty() {
            return;
        }
        if net.eq_ignore_ascii_case("Socket") && self.facts.using_socket.is_none() {
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
        } else {
            // `Bootstrap : Using eth0:10.0.0.1<0>`, timings, …
            rest.starts_with(b"Using") || rest.starts_with(b"timings")
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
        let body = rest[name_end..].trim_ascii_start();
        let body = body.strip_prefix(b":").unwrap_or(body).trim_ascii_start();
        match net {
            b"Plugin" => {
                self.plugin(body, line);
                true
            }
            b"Socket" => {
                if let Some(list) = body.strip_prefix(b"Using") {
                    if self.facts.socket_using.is_none() {
                        self.facts.socket_using = Some(self.evidence(line));
                    }
                    for t in list
                        .split(|b| b.is_ascii_whitespace())
                        .filter(|t| !t.is_empty())
                    {
                        let t = strip_index(t);
                        let name = &t[..memchr::memchr(b':', t).unwrap_or(t.len())];
                        if !name.is_empty() && self.socket_ifs.len() < 64 {
                            self.socket_ifs.insert(text(name));
                        }
                    }
                    true
                } else if body.starts_with(b"no interface found") {
                    self.no_interface(pi, "NET/Socket", line);
                    true
                } else {
                    body.starts_with(b"GPU Direct RDMA")
                }
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
            let list = &list[..memchr::memchr(b';', list).unwrap_or(list.len())];
            let mut any = false;
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
                    });
                }
            }
            if !any && self.facts.ib_using_empty.is_none() {
                self.facts.ib_using_empty = Some(self.evidence(line));
            }
            return true;
        }
        if let Some(rest) = body.strip_prefix(b"GPU Direct RDMA ") {
            let enabled =
                rest.starts_with(b"Enabled") || rest.starts_with(b"(nvidia-peermem) enable");
            let name = rest
                .split(|b| *b == b'\'')
                .nth(1)
                .map(text)
                .unwrap_or_else(|| text(word(rest.rsplit(|b| *b == b' ').next().unwrap_or(b""))));
            if !self.facts.gdr_hca.contains_key(&name) && self.facts.gdr_hca.len() < 1024 {
                let ev = self.evidence(line);
                self.facts.gdr_hca.insert(name, (enabled, ev));
            }
            return true;
        }
        if body.starts_with(b"Got completion") {
            self.completion(pi, body, line);
            return true;
        }
        if body.starts_with(b"No IP interface found") {
            self.no_interface(pi, "NET/IB out-of-band", line);
            return true;
        }
        if let Some(dev) = body.strip_prefix(b"Unable to open device") {
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
            return true;
        }
        let _ = (net, warn);
        body.starts_with(b"[") // 2.27+ per-device detail: `NET/IB: [0] mlx5_0:uverbs0:1/RoCE provider=…`
            || body.starts_with(b"Made virtual device")
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
        if failed {
            if self.facts.plugin_failures.len() < 8 {
                let ev = self.evidence(line);
                self.facts.plugin_failures.push((ev, text(body)));
            }
        } else if let Some(rest) = after(body, b"Loaded net plugin ") {
            self.facts.plugins_loaded.insert(text(word(rest)));
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
        if let Some(g) = after(body, b"localGid") {
            let g = word(g);
            if g.starts_with(b"::ffff:") || (g.contains(&b':') && !g.starts_with(b"fe80")) {
                self.facts.roce_gids = true;
            }
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
            if let Some(g) = m.split_once("local GID ").map(|(_, g)| g)
                && (g.starts_with("::ffff:") || (!g.starts_with("fe80") && g.contains(':')))
            {
                self.facts.roce_gids = true;
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

    fn generic_warning(&mut self, pi: Option<usize>, msg: &[u8], line: &[u8]) {
        let m = text(msg);
        // group warnings that differ only in numbers
        let key: String = m
            .chars()
            .take(120)
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
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
        Some(b'B' | b'G' | b'F' | b'E' | b'I' | b'M' | b'P' | b'S') => true,
        _ => msg.ends_with(b"Init START") || msg.ends_with(b"Init COMPLETE"),
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
