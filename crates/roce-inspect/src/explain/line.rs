//! Recognising NCCL and UCX lines and their `host:pid:tid [dev]` prefixes, on bytes.
//!
//! NCCL prints `<host>:<pid>:<tid> [<cudaDev>] NCCL INFO <msg>` and, for warnings,
//! `[<timestamp>] <host>:<pid>:<tid> [<cudaDev>] <file>:<line> NCCL WARN <msg>` (the timestamp since 2.26; 2.30+
//! add the function, `<file>:<line> (<func>) NCCL WARN`, and 2.32 has a notice level between WARN and INFO,
//! `… (<func>) NCCL ATTN <msg>`: `ncclDebugLogV` in `src/debug.cc`). NCCL's diagnostics (`NCCL_RUN_DIAGNOSTICS=1`,
//! 2.31+) print `<host>:<pid> NCCL DIAG <msg>` to stdout, without thread or device (`DIAG_PRINT`,
//! `src/include/diagnostics_log.h`). Launchers add their own prefixes in front (`[1,0]<stdout>:` from `mpirun
//! --tag-output`, `0: ` from `srun -l`, RFC 3339 stamps from `kubectl logs --timestamps`), so the prefix is read
//! backwards from the `NCCL` keyword. Versions 2.18–2.21 print the version as a bare `NCCL version
//! 2.19.3+cuda12.3` line.

use memchr::memmem::Finder;

/// What kind of NCCL line this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// `NCCL INFO`.
    Info,
    /// `NCCL WARN`.
    Warn,
    /// `NCCL ATTN` (2.32+): a notice, shown like a warning but not an error by itself.
    Attn,
    /// `NCCL DIAG` (2.31+): a line of NCCL's own diagnostics report.
    Diag,
    /// A bare `NCCL version …` line (no prefix).
    Version,
}

/// An NCCL line split at its keyword.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NcclLine<'a> {
    pub level: Level,
    /// Everything before `NCCL`.
    pub prefix: &'a [u8],
    /// Everything after `NCCL INFO ` / `NCCL WARN ` / `NCCL ATTN ` / `NCCL DIAG ` / `NCCL version `.
    pub msg: &'a [u8],
}

impl NcclLine<'_> {
    /// The process the line came from, read from its prefix as its level prints it.
    pub(crate) fn who(&self) -> Option<Who<'_>> {
        match self.level {
            Level::Info | Level::Version => who(self.prefix, false),
            Level::Warn | Level::Attn => who(self.prefix, true),
            Level::Diag => diag_who(self.prefix),
        }
    }
}

/// The common shape `host:pid:tid [dev] NCCL INFO …`, where the marker follows the first `]`; `None` for any
/// other line (which [`nccl`] may still recognise).
pub(crate) fn nccl_info_fast(line: &[u8]) -> Option<NcclLine<'_>> {
    let close = memchr::memchr(b']', line)?;
    let rest = line[close + 1..].strip_prefix(b" NCCL INFO ")?;
    Some(NcclLine {
        level: Level::Info,
        prefix: &line[..close + 2],
        msg: rest,
    })
}

/// Find the NCCL keyword in a line.
pub(crate) fn nccl<'a>(line: &'a [u8], finder: &Finder<'_>) -> Option<NcclLine<'a>> {
    if let Some(l) = nccl_info_fast(line) {
        return Some(l);
    }
    let mut from = 0;
    while let Some(i) = finder.find(&line[from..]) {
        let at = from + i;
        let rest = &line[at + 5..];
        let prefix = &line[..at];
        if let Some(msg) = rest.strip_prefix(b"INFO ") {
            return Some(NcclLine {
                level: Level::Info,
                prefix,
                msg,
            });
        }
        if let Some(msg) = rest.strip_prefix(b"WARN ") {
            return Some(NcclLine {
                level: Level::Warn,
                prefix,
                msg,
            });
        }
        if let Some(msg) = rest.strip_prefix(b"ATTN ") {
            return Some(NcclLine {
                level: Level::Attn,
                prefix,
                msg,
            });
        }
        if let Some(msg) = rest.strip_prefix(b"DIAG ")
            && (bare_prefix(prefix) || diag_who(prefix).is_some())
        {
            return Some(NcclLine {
                level: Level::Diag,
                prefix,
                msg,
            });
        }
        let level = match rest {
            b"INFO" => Some(Level::Info),
            b"WARN" => Some(Level::Warn),
            b"ATTN" => Some(Level::Attn),
            _ => None,
        };
        if let Some(level) = level {
            return Some(NcclLine {
                level,
                prefix,
                msg: b"",
            });
        }
        if let Some(msg) = rest.strip_prefix(b"version ")
            && bare_prefix(prefix)
        {
            return Some(NcclLine {
                level: Level::Version,
                prefix,
                msg,
            });
        }
        from = at + 5;
    }
    None
}

/// A line of aws-ofi-nccl's own test programs (`nccl_message_transfer`, `ring`, the functional tests): they
/// load the plugin without NCCL and print its log through their own logger, `WARN: Function: <func> Line: <n>:
/// <msg>` and `INFO: Function: …` (`logger` in `tests/functional/*` and `tests/unit/test-common.h`), with no
/// `host:pid:tid [dev]` and no `NCCL` keyword. Read as the plugin's INFO/WARN lines; what stands before it (a
/// launcher tag such as pdsh's `10.3.35.83: `) is the prefix.
pub(crate) fn ofi_test(line: &[u8]) -> Option<NcclLine<'_>> {
    let at = memchr::memmem::find(line, b": Function: ")?;
    let level = match line[..at].rsplit(|b| b.is_ascii_whitespace()).next()? {
        b"INFO" => Level::Info,
        b"WARN" => Level::Warn,
        _ => return None,
    };
    let prefix = &line[..at - 4];
    let rest = &line[at + b": Function: ".len()..];
    let l = memchr::memmem::find(rest, b" Line: ")?;
    let rest = &rest[l + b" Line: ".len()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let msg = rest[digits..].strip_prefix(b": ")?;
    if digits == 0 || !bare_prefix(prefix) {
        return None;
    }
    Some(NcclLine { level, prefix, msg })
}

/// A bare version line has nothing before `NCCL` but a launcher tag (`0: `, `[1,0]<stdout>:`).
fn bare_prefix(prefix: &[u8]) -> bool {
    let t = prefix.trim_ascii();
    t.is_empty() || (t.len() <= 40 && matches!(t.last(), Some(b':' | b'>')))
}

/// The process a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Who<'a> {
    /// `host:pid`, the grouping key.
    pub key: &'a [u8],
    /// The host name.
    pub host: &'a [u8],
    /// The CUDA device in brackets, when there is one.
    pub dev: Option<u32>,
}

/// Read `host:pid:tid [dev]` backwards from the end of an NCCL prefix. WARN (and ATTN) lines carry `file:line`
/// last, and since 2.30 the function after it: `file:line (func)`.
pub(crate) fn who(prefix: &[u8], warn: bool) -> Option<Who<'_>> {
    let mut toks = prefix
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .rev();
    let mut t = toks.next()?;
    if warn && !t.starts_with(b"[") {
        if t.starts_with(b"(") && t.ends_with(b")") {
            t = toks.next()?;
        }
        if !t.starts_with(b"[") {
            t = toks.next()?;
        }
    }
    let dev = bracketed(t)?;
    let t = toks.next()?;
    host_pid(t).map(|(key, host)| Who {
        key,
        host,
        dev: parse_u32(dev),
    })
}

/// The process of a `NCCL DIAG` line: `host:pid` (no thread, no device) as the last token of the prefix, behind
/// any launcher tag (`[1,0]<stdout>:node01:15`).
fn diag_who(prefix: &[u8]) -> Option<Who<'_>> {
    let t = prefix
        .split(|b| b.is_ascii_whitespace())
        .rfind(|t| !t.is_empty())?;
    let colon = memchr::memrchr(b':', t)?;
    let pid = &t[colon + 1..];
    if pid.is_empty() || !pid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let host_start = t[..colon]
        .iter()
        .rposition(|&b| matches!(b, b':' | b'>' | b']' | b'[' | b'<'))
        .map_or(0, |i| i + 1);
    let host = &t[host_start..colon];
    if host.is_empty() {
        return None;
    }
    Some(Who {
        key: &t[host_start..],
        host,
        dev: None,
    })
}

/// `[5]` → `5`.
fn bracketed(t: &[u8]) -> Option<&[u8]> {
    t.strip_prefix(b"[")?.strip_suffix(b"]")
}

/// `host:pid:tid` (or `host:pid`), possibly behind a launcher tag: the `host:pid` slice and the host.
fn host_pid(t: &[u8]) -> Option<(&[u8], &[u8])> {
    let last = memchr::memrchr(b':', t)?;
    let tid = &t[last + 1..];
    let (pid_end, sep) = match memchr::memrchr(b':', &t[..last]) {
        // host:pid:tid → the pid ends at the last colon (a launcher tag may add colons further left)
        Some(prev) if !tid.is_empty() && tid.iter().all(u8::is_ascii_digit) => (last, prev),
        _ => (t.len(), last),
    };
    let host_start = t[..sep]
        .iter()
        .rposition(|&b| matches!(b, b':' | b'>' | b']' | b'[' | b'<'))
        .map_or(0, |i| i + 1);
    let host = &t[host_start..sep];
    let pid = &t[sep + 1..pid_end];
    if host.is_empty() || pid.is_empty() {
        return None;
    }
    Some((&t[host_start..pid_end], host))
}

/// The process of a UCX line: `[1610610433.688325] [host:pid:idx]` or `[host:pid:idx:tid]` or `[host:pid]`.
pub(crate) fn ucx_who(line: &[u8]) -> Option<Who<'_>> {
    let mut rest = line;
    for _ in 0..3 {
        let open = memchr::memchr(b'[', rest)?;
        let after = &rest[open + 1..];
        let close = memchr::memchr(b']', after).unwrap_or(after.len());
        // `[0m [host:pid:…]`: an unclosed bracket before the real one
        let inner = &after[..close];
        let inner = memchr::memrchr(b'[', inner).map_or(inner, |j| &inner[j + 1..]);
        if let Some(c) = memchr::memchr(b':', inner) {
            let host = inner[..c].trim_ascii();
            let pid_part = &inner[c + 1..];
            let pid_len = pid_part
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(pid_part.len());
            if !host.is_empty() && pid_len > 0 && !host.contains(&b' ') {
                let start = c - host.len();
                return Some(Who {
                    key: &inner[start..c + 1 + pid_len],
                    host,
                    dev: None,
                });
            }
        }
        rest = &after[close.min(after.len())..];
    }
    None
}

/// Parse an unsigned decimal, ignoring whitespace around it as `str::trim` does.
pub(crate) fn parse_u32(b: &[u8]) -> Option<u32> {
    // `char::is_whitespace` on ASCII: TAB, LF, VT, FF, CR and space. `<[u8]>::trim_ascii` leaves VT (0x0B)
    // in place, so it is not the same trim.
    let is_space = |c: &u8| matches!(c, b'\t'..=b'\r' | b' ');
    let start = b.iter().position(|c| !is_space(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !is_space(c))
        .map_or(start, |i| i + 1);
    let t = &b[start..end];
    if !t.is_ascii() {
        // Unicode whitespace around the digits: let `str` decide, exactly as before the fast path.
        return std::str::from_utf8(b).ok()?.trim().parse().ok();
    }
    let digits = t.strip_prefix(b"+").unwrap_or(t);
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
        } else {
            None
        }
    })
}

/// An error-propagation line of NCCL: `<file>:<line> -> <result>[ [<thread>]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chain<'a> {
    /// The source file (`transport/net_ib.cc`).
    pub file: &'a [u8],
    /// The `ncclResult_t` returned (1–6 are errors; 7 is ncclInProgress).
    pub result: u32,
    /// A `[Async thread]`, `[Proxy Thread]` or `[Progress Thread]` marker: that thread ended with it.
    pub thread: bool,
}

/// Read `transport/net_ib.cc:282 -> 2` or `group.cc:64 -> 2 [Async thread]`, with the function 2.30+ put after
/// the line number (`init.cc:547 (commAlloc) -> 5`, `INFO_LOC` in `src/include/debug.h`) and the `strerror` text
/// of a failed system call (`-> 2 (Connection refused)`, `SYSCHECK` in `src/include/checks.h`); only errors
/// (results 1–6).
pub(crate) fn chain(msg: &[u8]) -> Option<Chain<'_>> {
    let arrow = memchr::memmem::find(msg, b" -> ")?;
    let mut loc = &msg[..arrow];
    if loc.ends_with(b")")
        && let Some(open) = memchr::memmem::rfind(loc, b" (")
    {
        loc = &loc[..open];
    }
    let colon = memchr::memrchr(b':', loc)?;
    let (file, no) = (&loc[..colon], &loc[colon + 1..]);
    if file.is_empty()
        || no.is_empty()
        || !no.iter().all(u8::is_ascii_digit)
        || !file
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-'))
        || !file.contains(&b'.')
    {
        return None;
    }
    let rest = &msg[arrow + 4..];
    let end = rest
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len());
    let result = parse_u32(&rest[..end])?;
    let mut tail = rest[end..].trim_ascii();
    if tail.starts_with(b"(")
        && let Some(close) = memchr::memchr(b')', tail)
    {
        tail = tail[close + 1..].trim_ascii_start();
    }
    if !(1..=6).contains(&result) || !(tail.is_empty() || tail.starts_with(b"[")) {
        return None;
    }
    let thread =
        tail.starts_with(b"[") && (tail.ends_with(b"thread]") || tail.ends_with(b"Thread]"));
    Some(Chain {
        file,
        result,
        thread,
    })
}

/// The bytes after `needle` in `hay`, if it occurs.
pub(crate) fn after<'a>(hay: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    memchr::memmem::find(hay, needle).map(|i| &hay[i + needle.len()..])
}

/// Text of a message, decoded lossily.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).trim().to_string()
}

/// The first whitespace-delimited word.
pub(crate) fn word(b: &[u8]) -> &[u8] {
    let b = b.trim_ascii_start();
    let end = b
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(b.len());
    &b[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (key, host, dev) of a line's process.
    type Owner = (String, String, Option<u32>);

    fn split(line: &str) -> Option<(Level, String, Option<Owner>)> {
        let f = Finder::new(b"NCCL ");
        let l = nccl(line.as_bytes(), &f)?;
        let w = l.who().map(|w| {
            (
                String::from_utf8_lossy(w.key).into_owned(),
                String::from_utf8_lossy(w.host).into_owned(),
                w.dev,
            )
        });
        Some((l.level, String::from_utf8_lossy(l.msg).into_owned(), w))
    }

    #[test]
    fn aws_ofi_nccl_test_logger_lines() {
        let l = ofi_test(b"10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider").unwrap();
        assert_eq!(l.level, Level::Warn);
        assert_eq!(l.prefix, b"10.3.35.83: ");
        assert_eq!(l.msg, b"NET/OFI Couldn't find any optimal provider");
        let l = ofi_test(b"INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa")
            .unwrap();
        assert_eq!(
            (l.level, l.prefix, l.msg),
            (
                Level::Info,
                &b""[..],
                &b"NET/OFI Selected Provider is efa"[..]
            )
        );
        // not the logger's shape: no line number, or application text before the level
        assert!(ofi_test(b"WARN: Function: main Line: x: NET/OFI oops").is_none());
        assert!(ofi_test(b"the docs say to grep for WARN: Function: foo Line: 1: bar").is_none());
    }

    #[test]
    fn plain_info_line() {
        let (level, msg, who) =
            split("vm:641:641 [0] NCCL INFO NET/IB : No device found.").unwrap();
        assert_eq!(level, Level::Info);
        assert_eq!(msg, "NET/IB : No device found.");
        assert_eq!(who, Some(("vm:641".into(), "vm".into(), Some(0))));
    }

    #[test]
    fn timestamped_warn_line() {
        let (level, msg, who) = split(
            "[2026-11-30 02:24:58] vm:777:777 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
        )
        .unwrap();
        assert_eq!(level, Level::Warn);
        assert_eq!(msg, "Bootstrap : no socket interface found");
        assert_eq!(who, Some(("vm:777".into(), "vm".into(), Some(0))));
    }

    #[test]
    fn function_names_attn_and_diag_lines() {
        // 2.30+: `file:line (func)` before the level
        let (level, msg, who) = split(
            "[2026-12-03 06:16:11] vm:1878:1878 [0] init.cc:1294 (initTransportsRank) NCCL WARN Multiple Ranks are using the same GPU/Partition.",
        )
        .unwrap();
        assert_eq!(level, Level::Warn);
        assert!(msg.starts_with("Multiple Ranks"));
        assert_eq!(who, Some(("vm:1878".into(), "vm".into(), Some(0))));
        // 2.32: the notice level
        let (level, msg, who) = split(
            "[2026-12-03 06:15:45] vm:1443:1443 [0] plugin/net.cc:229 (ncclNetPluginInit) NCCL ATTN Failed to initialize NET plugin IB",
        )
        .unwrap();
        assert_eq!(level, Level::Attn);
        assert_eq!(msg, "Failed to initialize NET plugin IB");
        assert_eq!(who, Some(("vm:1443".into(), "vm".into(), Some(0))));
        // 2.31+: `host:pid NCCL DIAG`, bare or behind a launcher tag
        let f = Finder::new(b"NCCL ");
        for (line, key) in [
            (
                "vm:1732 NCCL DIAG === NCCL Diagnostics ===",
                Some("vm:1732"),
            ),
            (
                "[1,0]<stdout>:node01:15 NCCL DIAG [OK]   p2p: all 56 directed GPU P2P edges verified",
                Some("node01:15"),
            ),
            (
                "NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification",
                None,
            ),
        ] {
            let l = nccl(line.as_bytes(), &f).unwrap();
            assert_eq!(l.level, Level::Diag, "{line}");
            assert_eq!(l.who().map(|w| w.key), key.map(str::as_bytes), "{line}");
        }
        // prose that names NCCL DIAG is no DIAG line
        assert!(nccl(b"see the NCCL DIAG lines above", &f).is_none());
    }

    #[test]
    fn launcher_tags_and_redacted_pids() {
        let (_, _, who) =
            split("[1,3]<stdout>:node7:1234:1250 [3] NCCL INFO Using network IB").unwrap();
        assert_eq!(who, Some(("node7:1234".into(), "node7".into(), Some(3))));
        let (_, _, who) = split("12: node7:1234:1250 [3] NCCL INFO Using network IB").unwrap();
        assert_eq!(who, Some(("node7:1234".into(), "node7".into(), Some(3))));
        let (_, _, who) = split(
            "[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed",
        )
        .unwrap();
        assert_eq!(
            who,
            Some((
                "host-01.example.com:XXXXXX".into(),
                "host-01.example.com".into(),
                Some(5)
            ))
        );
    }

    #[test]
    fn bare_version_lines_and_lookalikes() {
        assert_eq!(
            split("NCCL version 2.19.3+cuda12.3").unwrap().0,
            Level::Version
        );
        assert_eq!(
            split("[1,0]<stdout>:NCCL version 2.19.3+cuda12.3")
                .unwrap()
                .0,
            Level::Version
        );
        // torch's error text names the version too; it is not a version line
        assert!(
            split(
                "DistBackendError: NCCL error in: x.cpp:3135, invalid usage, NCCL version 2.28.9"
            )
            .is_none()
        );
        assert!(split("the NCCL library").is_none());
        // a WARN line without a host prefix still parses, with no process
        let (level, _, who) =
            split("ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed").unwrap();
        assert_eq!(level, Level::Warn);
        assert_eq!(who, None);
    }

    #[test]
    fn error_chains() {
        let c = chain(b"group.cc:64 -> 2 [Async thread]").unwrap();
        assert_eq!((c.file, c.result, c.thread), (&b"group.cc"[..], 2, true));
        let c = chain(b"transport/net_ib.cc:282 -> 2").unwrap();
        assert_eq!((c.file, c.thread), (&b"transport/net_ib.cc"[..], false));
        assert!(
            chain(b"proxy.cc:878 -> 6 [Progress Thread]")
                .unwrap()
                .thread
        );
        // 2.30+ put the function after the line number; SYSCHECK adds strerror's text
        let c = chain(b"group.cc:147 (ncclAsyncJobMain) -> 5 [Async thread]").unwrap();
        assert_eq!((c.file, c.result, c.thread), (&b"group.cc"[..], 5, true));
        let c = chain(b"transport/net_ib/init.cc:681 (ncclIbInit) -> 3").unwrap();
        assert_eq!(
            (c.file, c.thread),
            (&b"transport/net_ib/init.cc"[..], false)
        );
        let c = chain(b"misc/socket.cc:480 (ncclSocketConnect) -> 2 (Connection refused)").unwrap();
        assert_eq!(
            (c.file, c.result, c.thread),
            (&b"misc/socket.cc"[..], 2, false)
        );
        // ncclInProgress (7) and success are not failures; ring and channel lines are not chains
        assert!(chain(b"group.cc:64 -> 7").is_none());
        assert!(chain(b"group.cc:64 -> 0").is_none());
        assert!(chain(b"Ring 00 : 0 -> 1 -> 0").is_none());
        assert!(chain(b"Channel 00/0 : 0[0] -> 1[0] via NET/IB/0").is_none());
    }

    #[test]
    fn ucx_prefixes() {
        let w = ucx_who(
            b"[1610610433.688325] [DN-10:623133:0]    ib_mlx5_log.c:143  UCX  ERROR Remote access",
        )
        .unwrap();
        assert_eq!((w.key, w.host), (&b"DN-10:623133"[..], &b"DN-10"[..]));
        let w = ucx_who(
            b"[compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded",
        )
        .unwrap();
        assert_eq!(w.key, b"compute001:31180");
        let w =
            ucx_who(b"[1750835683.514002] [TENCENT64:1392 :0]          select.c:649  UCX  ERROR")
                .unwrap();
        assert_eq!(w.key, b"TENCENT64:1392");
        assert!(
            ucx_who(
                b"error handling callback was invoked with status -6 (Destination is unreachable)"
            )
            .is_none()
        );
    }

    /// The byte-level `parse_u32` agrees with `str::trim` + `str::parse::<u32>` (its definition before the
    /// fast path) on every input: digits, signs, ASCII and Unicode whitespace, overflow, non-UTF-8.
    mod parse_u32_agrees {
        use super::parse_u32;
        use proptest::prelude::*;

        fn reference(b: &[u8]) -> Option<u32> {
            std::str::from_utf8(b).ok()?.trim().parse().ok()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn on_number_like_text(s in "[ \t\u{a0}+-]{0,2}[0-9]{0,11}[ \t\u{2003}x]{0,2}") {
                prop_assert_eq!(parse_u32(s.as_bytes()), reference(s.as_bytes()));
            }

            #[test]
            fn on_any_bytes(b in proptest::collection::vec(any::<u8>(), 0..12)) {
                prop_assert_eq!(parse_u32(&b), reference(&b));
            }

            /// Every ASCII control byte and sign next to digits: `on_any_bytes` meets a given control byte
            /// before a digit about once in 65,000 cases, which is how VT (0x0B) slipped through for a while.
            #[test]
            fn on_controls_and_digits(
                b in proptest::collection::vec(
                    prop_oneof![0u8..=0x20, Just(b'+'), Just(b'-'), b'0'..=b'9', Just(0x7f)],
                    0..8,
                )
            ) {
                prop_assert_eq!(parse_u32(&b), reference(&b));
            }
        }

        #[test]
        fn edges() {
            for s in [
                "4294967295",
                "4294967296",
                "+7",
                "+",
                "",
                " 12 ",
                "007",
                "1_0",
                "\u{b}0",
                "7\u{b}",
                "\u{c}\r\n8\t",
            ] {
                assert_eq!(parse_u32(s.as_bytes()), reference(s.as_bytes()), "{s:?}");
            }
            assert_eq!(parse_u32(b"4294967295"), Some(u32::MAX));
            assert_eq!(parse_u32(b"4294967296"), None);
        }
    }
}
