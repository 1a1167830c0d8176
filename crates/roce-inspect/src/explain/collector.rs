//! Collector and launcher framing around log lines, peeled off before NCCL/UCX recognition.
//!
//! Logs reach `roce explain` through whatever carried them, each adding its own frame to every line:
//! - Ray workers: `(RayTrainWorker pid=123, ip=10.0.0.1) ` (ANSI-coloured on a terminal), and its
//!   deduplication's ` [repeated 7x across cluster]` suffix (`ray/_private/ray_logging`, docs "Log deduplication");
//! - CloudWatch console copies and table exports: `  | 2024-12-04T05:27:39.074Z | message |`;
//! - JSON records of Docker's json-file driver and fluent-bit/fluentd (`{"log":"…\n","stream":"stdout"}`), GCP
//!   Cloud Logging (`"textPayload"`, `jsonPayload.message`), Loki (`logcli --output=jsonl`: `"line"`), journald
//!   (`journalctl -o json`: `"MESSAGE"`), Vector (`"message"`); also one member per line of pretty-printed JSON
//!   (`gcloud logging read --format=json`: `  "textPayload": "…",`);
//! - journald's short formats: `Dec 03 06:00:01 host ident[123]: ` and `2024-12-03T06:00:01+0000 host ident[123]: `;
//! - Loki's default output: `<RFC 3339> {label="v", …} message`;
//! - `srun -l` (`0: `, right-aligned), Open MPI `--tag-output` (`[1,0]<stdout>:`), torchrun's `[default0]:` and
//!   `[rank0]:`, `kubectl logs --prefix` (`[pod/NAME/CONTAINER] `) and `--timestamps` (RFC 3339 and a space).
//!
//! Frames nest (a kubectl prefix in front of a timestamp in front of a Ray prefix): [`peel`] removes the outermost
//! one and is called again on what it leaves. A line whose first byte cannot start a frame (a host name in
//! lower case, the common NCCL line) is answered by one table look-up, so plain logs keep their speed.

/// What [`peel`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peeled<'a> {
    /// No frame: read the line as it is.
    Plain,
    /// The text inside the outermost frame, a slice of the line.
    Inner(&'a [u8]),
    /// A JSON record's message, decoded into the scratch buffer; it may hold several lines.
    Decoded,
}

/// Frames nest at most this deep before the rest is read as it is.
pub(crate) const DEPTH_MAX: usize = 8;

/// Peel the outermost frame off `line`; a JSON message is decoded into `scratch` (cleared first).
pub(crate) fn peel<'a>(line: &'a [u8], scratch: &mut Vec<u8>) -> Peeled<'a> {
    let Some(&first) = line.first() else {
        return Peeled::Plain;
    };
    let inner = match first {
        b'(' => ray(line),
        0x1b => ansi(line),
        b'[' => bracket_tag(line),
        b'{' => {
            if json_message(line, scratch) {
                return Peeled::Decoded;
            }
            None
        }
        b'|' => cloudwatch(line),
        b' ' | b'\t' => {
            let t = line.trim_ascii_start();
            match t.first() {
                Some(b'|') => cloudwatch(t),
                Some(b'"') if json_member(t, scratch) => return Peeled::Decoded,
                Some(b'{') if json_message(t, scratch) => return Peeled::Decoded,
                Some(b'0'..=b'9') => slurm(t),
                _ => None,
            }
        }
        b'"' if json_member(line, scratch) => return Peeled::Decoded,
        b'0'..=b'9' => slurm(line).or_else(|| timestamped(line)),
        b'A' | b'D' | b'F' | b'J' | b'M' | b'N' | b'O' | b'S' => syslog_month(line),
        _ => None,
    };
    match inner {
        Some(i) if i.len() < line.len() => Peeled::Inner(i),
        _ => Peeled::Plain,
    }
}

/// A Ray worker's `(Name pid=N, ip=A) ` (or `(pid=N) `, `(raylet) `), with the dedup suffix removed.
fn ray(line: &[u8]) -> Option<&[u8]> {
    let close = memchr::memchr(b')', &line[..line.len().min(200)])?;
    let tag = &line[1..close];
    let known = memchr::memmem::find(tag, b"pid=").is_some()
        || tag.starts_with(b"raylet")
        || tag.starts_with(b"gcs_server")
        || tag.starts_with(b"autoscaler");
    if !known || tag.contains(&b'(') {
        return None;
    }
    let rest = skip_sgr(&line[close + 1..]);
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    Some(strip_ray_repeat(rest))
}

/// ` [repeated 7x across cluster]` (and anything Ray appends after it) off the end.
fn strip_ray_repeat(msg: &[u8]) -> &[u8] {
    if let Some(at) = memchr::memmem::rfind(msg, b" [repeated ") {
        let tail = &msg[at + 11..];
        let digits = tail.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && tail[digits..].starts_with(b"x across cluster]") {
            return &msg[..at];
        }
    }
    msg
}

/// ANSI colour codes (`ESC[36m`) before the text.
fn ansi(line: &[u8]) -> Option<&[u8]> {
    let rest = skip_sgr(line);
    (rest.len() < line.len()).then_some(rest)
}

fn skip_sgr(mut b: &[u8]) -> &[u8] {
    while let Some(rest) = b.strip_prefix(b"\x1b[") {
        let n = rest
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b';')
            .count();
        match rest.get(n) {
            Some(b'm') => b = &rest[n + 1..],
            _ => break,
        }
    }
    b
}

/// `[pod/NAME/CONTAINER] `, `[1,0]<stdout>:`, `[default0]:`, `[rank0]:`; not NCCL's own `[2026-…] ` nor UCX's
/// `[1610610433.688325] [host:pid:0]`.
fn bracket_tag(line: &[u8]) -> Option<&[u8]> {
    let close = memchr::memchr(b']', &line[..line.len().min(300)])?;
    let tag = &line[1..close];
    let rest = &line[close + 1..];
    if tag.starts_with(b"pod/") && tag.iter().filter(|b| **b == b'/').count() >= 2 {
        return Some(rest.strip_prefix(b" ").unwrap_or(rest));
    }
    if let Some((rank, job)) = split_once(tag, b',')
        && all_digits(rank)
        && all_digits(job)
    {
        for s in [&b"<stdout>:"[..], b"<stderr>:", b"<stddiag>:"] {
            if let Some(r) = rest.strip_prefix(s) {
                return Some(r.strip_prefix(b" ").unwrap_or(r));
            }
        }
        return None;
    }
    let torchrun = ["default", "rank"]
        .iter()
        .any(|p| tag.strip_prefix(p.as_bytes()).is_some_and(all_digits));
    if torchrun && let Some(r) = rest.strip_prefix(b":") {
        return Some(r);
    }
    None
}

/// `srun -l`'s `0: ` (right-aligned with spaces by srun).
fn slurm(line: &[u8]) -> Option<&[u8]> {
    let t = line.trim_ascii_start();
    let n = t.iter().take_while(|b| b.is_ascii_digit()).count();
    if (1..=6).contains(&n) {
        t[n..].strip_prefix(b": ")
    } else {
        None
    }
}

/// A line that starts with an RFC 3339 time: `kubectl logs --timestamps`, Loki (`{labels}` after it),
/// `journalctl -o short-iso` (`host ident[pid]: ` after it).
fn timestamped(line: &[u8]) -> Option<&[u8]> {
    let n = rfc3339(line)?;
    let rest = line[n..].strip_prefix(b" ")?;
    if let Some(r) = loki_labels(rest) {
        return Some(r);
    }
    Some(syslog_tail(rest, true).unwrap_or(rest))
}

/// Loki's `{job="x", pod="y"} ` after the time.
fn loki_labels(b: &[u8]) -> Option<&[u8]> {
    if b.first() != Some(&b'{') || memchr::memmem::find(&b[..b.len().min(600)], b"=\"").is_none() {
        return None;
    }
    let mut in_str = false;
    let mut esc = false;
    for (i, &c) in b.iter().enumerate().take(4096) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == b'}' {
            let r = &b[i + 1..];
            return Some(r.strip_prefix(b" ").unwrap_or(r));
        }
    }
    None
}

/// The length of an RFC 3339 time at the start (`2024-12-03T06:00:01.123456789Z`, `…+00:00`, `…+0000`, or a
/// space instead of the `T`).
pub(crate) fn rfc3339(b: &[u8]) -> Option<usize> {
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let date = (0..4).all(d)
        && b.get(4) == Some(&b'-')
        && d(5)
        && d(6)
        && b.get(7) == Some(&b'-')
        && d(8)
        && d(9);
    let time = matches!(b.get(10), Some(b'T' | b' '))
        && d(11)
        && d(12)
        && b.get(13) == Some(&b':')
        && d(14)
        && d(15)
        && b.get(16) == Some(&b':')
        && d(17)
        && d(18);
    if !(date && time) {
        return None;
    }
    let mut i = 19;
    if matches!(b.get(i), Some(b'.' | b',')) {
        i += 1;
        while d(i) {
            i += 1;
        }
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+' | b'-') if d(i + 1) && d(i + 2) => {
            i += 3;
            if b.get(i) == Some(&b':') {
                i += 1;
            }
            if d(i) && d(i + 1) {
                i += 2;
            }
        }
        _ => {}
    }
    Some(i)
}

/// journald's `Dec 03 06:00:01[.123456] host ident[123]: ` (`journalctl -o short`, `short-precise`).
fn syslog_month(line: &[u8]) -> Option<&[u8]> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let m = line.get(..3)?;
    if !MONTHS.iter().any(|x| &x[..] == m) || line.get(3) != Some(&b' ') {
        return None;
    }
    let mut i = 4;
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    let day = line[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if !(1..=2).contains(&day) {
        return None;
    }
    i += day;
    let t = line.get(i..)?.strip_prefix(b" ")?;
    let ok = t.len() > 8
        && t[2] == b':'
        && t[5] == b':'
        && [0, 1, 3, 4, 6, 7].iter().all(|&k| t[k].is_ascii_digit());
    if !ok {
        return None;
    }
    let mut j = 8;
    if t.get(j) == Some(&b'.') {
        j += 1 + t[j + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
    }
    syslog_tail(t[j..].strip_prefix(b" ")?, false)
}

/// `host ident[123]: ` after a syslog time (`ident: ` too unless `need_pid`).
fn syslog_tail(b: &[u8], need_pid: bool) -> Option<&[u8]> {
    let sp = memchr::memchr(b' ', &b[..b.len().min(256)])?;
    let host = &b[..sp];
    if host.is_empty()
        || !host
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
    {
        return None;
    }
    let rest = &b[sp + 1..];
    let colon = memchr::memmem::find(&rest[..rest.len().min(256)], b": ")?;
    let ident = &rest[..colon];
    let (name, pid) = match ident.strip_suffix(b"]").and_then(|i| {
        let open = memchr::memrchr(b'[', i)?;
        Some((&i[..open], &i[open + 1..]))
    }) {
        Some((n, p)) if all_digits(p) => (n, true),
        Some(_) => return None,
        None => (ident, false),
    };
    let name_ok = !name.is_empty()
        && name
            .iter()
            .all(|c| c.is_ascii_graphic() && !matches!(c, b':' | b'[' | b']'));
    (name_ok && (pid || !need_pid)).then_some(&rest[colon + 2..])
}

/// CloudWatch: `| <time> | message |` (a table export), `  | <time> | message` (a console copy), and the console
/// copy that runs the time into the message and repeats it (`| <time>message | message`).
fn cloudwatch(line: &[u8]) -> Option<&[u8]> {
    let t = line.strip_prefix(b"|")?.trim_ascii_start();
    let n = rfc3339(t).or_else(|| {
        let e = t.iter().take_while(|b| b.is_ascii_digit()).count();
        (10..=19).contains(&e).then_some(e)
    })?;
    let rest = &t[n..];
    let msg = if let Some(r) = rest.trim_ascii_start().strip_prefix(b"|") {
        r.strip_prefix(b" ").unwrap_or(r)
    } else if let Some(at) = memchr::memmem::find(rest, b" | ") {
        let (a, b) = (&rest[..at], &rest[at + 3..]);
        // the copy after the bar is whole; the one before may have lost digits to the time
        if !b.trim_ascii().is_empty() && a.trim_ascii_end().ends_with(b.trim_ascii()) {
            b
        } else {
            a
        }
    } else {
        rest
    };
    let msg = msg.trim_ascii_end();
    let msg = match msg.strip_suffix(b"|") {
        Some(m) => m.trim_ascii_end(),
        None => msg,
    };
    Some(msg)
}

/// Members that carry a record's message, in the collectors' spelling.
const MESSAGE_KEYS: [&[u8]; 7] = [
    b"log",
    b"message",
    b"msg",
    b"textPayload",
    b"MESSAGE",
    b"line",
    b"jsonPayload",
];

/// The message of a one-line JSON record (`{"log":"…"}`, `{"jsonPayload":{"message":"…"}}`), decoded into
/// `out`. `false` when the line is not such a record.
fn json_message(line: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut p = Json { b: line, i: 0 };
    p.object_message(out, 0)
}

/// One `"key": "value",` member of pretty-printed JSON (`gcloud logging read --format=json`).
fn json_member(line: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut p = Json { b: line, i: 0 };
    let Some(key) = p.key() else { return false };
    if !MESSAGE_KEYS.contains(&key) || key == b"jsonPayload" {
        return false;
    }
    p.ws();
    p.string(Some(out)) && {
        p.ws();
        matches!(p.peek(), None | Some(b','))
    }
}

/// A small JSON reader over one line: finds the message member, skips the rest.
struct Json<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Json<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// `"key":`; the raw key (collectors' keys have no escapes).
    fn key(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        let end = start + memchr::memchr(b'"', &self.b[start..])?;
        self.i = end + 1;
        let b: &'a [u8] = self.b;
        let key = &b[start..end];
        self.eat(b':').then_some(key)
    }

    /// Find the message in an object: a message member that is a string, else `jsonPayload.message`.
    fn object_message(&mut self, out: &mut Vec<u8>, depth: u8) -> bool {
        if !self.eat(b'{') {
            return false;
        }
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                return false;
            }
            let Some(key) = self.key() else { return false };
            self.ws();
            let wanted = if depth == 0 {
                MESSAGE_KEYS.contains(&key)
            } else {
                key == b"message"
            };
            match self.peek() {
                Some(b'"') if wanted && key != b"jsonPayload" => return self.string(Some(out)),
                Some(b'{') if depth == 0 && key == b"jsonPayload" => {
                    let at = self.i;
                    if self.object_message(out, 1) {
                        return true;
                    }
                    out.clear();
                    self.i = at;
                    if !self.skip_value() {
                        return false;
                    }
                }
                _ => {
                    if !self.skip_value() {
                        return false;
                    }
                }
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// A string, decoded into `out` when given.
    fn string(&mut self, mut out: Option<&mut Vec<u8>>) -> bool {
        if self.peek() != Some(b'"') {
            return false;
        }
        self.i += 1;
        loop {
            let rest = &self.b[self.i..];
            let Some(k) = memchr::memchr2(b'"', b'\\', rest) else {
                return false;
            };
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&rest[..k]);
            }
            self.i += k + 1;
            if rest[k] == b'"' {
                return true;
            }
            let Some(e) = self.peek() else { return false };
            self.i += 1;
            let Some(o) = out.as_deref_mut() else {
                if e == b'u' {
                    // advance as decoding does: past four more bytes only when there are four (a string cut
                    // after `\u` once moved past its end and panicked; found by the sweep_results fuzz target)
                    let _ = self.hex4();
                }
                continue;
            };
            match e {
                b'n' => o.push(b'\n'),
                b't' => o.push(b'\t'),
                b'r' => o.push(b'\r'),
                b'b' => o.push(0x08),
                b'f' => o.push(0x0c),
                b'u' => {
                    let c = self.hex4();
                    let c = match c {
                        Some(hi @ 0xd800..=0xdbff)
                            if self.b.get(self.i..self.i + 2) == Some(b"\\u") =>
                        {
                            self.i += 2;
                            match self.hex4() {
                                Some(lo @ 0xdc00..=0xdfff) => {
                                    char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00))
                                }
                                _ => None,
                            }
                        }
                        Some(c) => char::from_u32(c),
                        None => None,
                    };
                    let mut buf = [0u8; 4];
                    o.extend_from_slice(c.unwrap_or('\u{fffd}').encode_utf8(&mut buf).as_bytes());
                }
                other => o.push(other),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    }

    /// Skip any value (strings with escapes, nested objects and arrays).
    fn skip_value(&mut self) -> bool {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string(None),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    match c {
                        b'"' => {
                            if !self.string(None) {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                false
            }
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace() {
                        break;
                    }
                    self.i += 1;
                }
                true
            }
            None => false,
        }
    }
}

fn split_once(b: &[u8], c: u8) -> Option<(&[u8], &[u8])> {
    let i = memchr::memchr(c, b)?;
    Some((&b[..i], &b[i + 1..]))
}

fn all_digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peel every frame, as the explainer does; decoded messages come back whole.
    fn unwrap(line: &str) -> String {
        let mut scratch = Vec::new();
        let mut cur = line.as_bytes().to_vec();
        for _ in 0..DEPTH_MAX {
            let next = match peel(&cur, &mut scratch) {
                Peeled::Plain => break,
                Peeled::Inner(i) => i.to_vec(),
                // the explainer reads a message line by line; these hold one line
                Peeled::Decoded => scratch.strip_suffix(b"\n").unwrap_or(&scratch).to_vec(),
            };
            cur = next;
        }
        String::from_utf8(cur).unwrap()
    }

    const NCCL: &str = "node1:10:10 [0] NCCL INFO Using network IB";

    #[test]
    fn every_frame_comes_off() {
        for framed in [
            format!("(RayTrainWorker pid=83500) {NCCL}"),
            format!("(RayWorkerWrapper pid=581, ip=10.225.128.18) {NCCL}"),
            format!("(pid=34272) {NCCL}"),
            format!("\x1b[36m(RayTrainWorker pid=1, ip=10.0.0.2)\x1b[0m {NCCL}"),
            format!("(RayTrainWorker pid=1, ip=10.0.0.2) {NCCL} [repeated 7x across cluster]"),
            format!(
                "(EngineCore_DP0 pid=1088) (RayWorkerWrapper pid=285, ip=192.168.177.12) {NCCL}"
            ),
            format!("  | 2024-12-04T05:27:39.074Z | {NCCL}"),
            format!("| 1733290059074 | {NCCL} |"),
            format!("| 2024-12-04 05:27:39.074 | {NCCL}   |"),
            format!("  | 2025-05-16T16:39:51.208-07:00{NCCL} | {NCCL}"),
            format!(
                "{{\"log\":\"{NCCL}\\n\",\"stream\":\"stdout\",\"time\":\"2024-01-01T00:00:00Z\"}}"
            ),
            format!(
                "{{\"date\":1.7e9,\"kubernetes\":{{\"pod\":\"p\",\"labels\":{{\"a\":\"}}\"}}}},\"log\":\"{NCCL}\"}}"
            ),
            format!("{{\"insertId\":\"x\",\"textPayload\":\"{NCCL}\",\"resource\":{{}}}}"),
            format!(
                "{{\"jsonPayload\":{{\"level\":\"info\",\"message\":\"{NCCL}\"}},\"severity\":\"INFO\"}}"
            ),
            format!(
                "{{\"labels\":{{\"pod\":\"w-0\"}},\"line\":\"{NCCL}\",\"timestamp\":\"2024-01-01T00:00:00Z\"}}"
            ),
            format!("{{\"__CURSOR\":\"s=1\",\"_HOSTNAME\":\"n\",\"MESSAGE\":\"{NCCL}\"}}"),
            format!("    \"textPayload\": \"{NCCL}\","),
            format!("Dec 03 06:00:01 node1 python3[123]: {NCCL}"),
            format!("Dec  3 06:00:01.123456 node1 torchrun[123]: {NCCL}"),
            format!("2024-12-03T06:00:01+0000 node1 python3[123]: {NCCL}"),
            format!("2024-12-03T06:00:01.123456789Z {{app=\"train\", pod=\"w-0\"}} {NCCL}"),
            format!("0: {NCCL}"),
            format!(" 3: {NCCL}"),
            format!("[1,0]<stdout>:{NCCL}"),
            format!("[1,12]<stderr>: {NCCL}"),
            format!("[default0]:{NCCL}"),
            format!("[rank3]:{NCCL}"),
            format!("[pod/train-worker-0/pytorch] {NCCL}"),
            format!("2024-05-01T10:00:00.123456789Z {NCCL}"),
            // mixtures
            format!(
                "[pod/w-0/c] 2024-05-01T10:00:00.123Z (RayTrainWorker pid=9, ip=10.0.0.3) {NCCL}"
            ),
            format!("{{\"log\":\"0: [1,0]<stdout>:{NCCL}\\n\"}}"),
            format!("2024-05-01T10:00:00Z {{\"log\":\"{NCCL}\"}}"),
        ] {
            assert_eq!(unwrap(&framed), NCCL, "{framed:?}");
        }
    }

    #[test]
    fn lines_that_are_not_frames_stay() {
        for plain in [
            NCCL,
            "[2026-03-13 22:26:02] host:1:1 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed",
            "[1610610433.688325] [DN-10:623133:0]    ib_mlx5_log.c:143  UCX  ERROR Remote access",
            "[compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded",
            "   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0",
            "10-90-43-152:120890:121560 [0] NCCL INFO Channel 01 : 2[c7000] -> 0[87000] via NET/IB/5/GDRDMA",
            "DN-10:1:1 [0] NCCL INFO Using network IB",
            "Decoding failed",
            "(most recent call last)",
            "{not json",
            "{\"level\":\"info\",\"ts\":1}",
            "2024-05-01 is a date",
            "12345:678:678 [0] NCCL INFO Using network IB",
            "[W socket.cpp:601] [c10d] The client socket",
            "",
        ] {
            assert_eq!(unwrap(plain), plain, "{plain:?}");
        }
    }

    #[test]
    fn json_escapes_decode() {
        let mut s = Vec::new();
        assert!(json_message(
            br#"{"log":"a\"b\\c\/d\te\u001b[0m\u00e9\ud83d\ude00\n"}"#,
            &mut s
        ));
        assert_eq!(s, "a\"b\\c/d\te\u{1b}[0m\u{e9}\u{1f600}\n".as_bytes());
        assert!(!json_message(br#"{"log":"unterminated}"#, &mut s));
        assert!(!json_message(br#"{"log":1}"#, &mut s));
    }
}
