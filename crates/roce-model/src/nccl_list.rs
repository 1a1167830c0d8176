//! NCCL's interface / HCA list syntax (`NCCL_SOCKET_IFNAME`, `NCCL_IB_HCA`,
//! `NCCL_OOB_NET_IFNAME`), modelled on `parseStringList()` / `matchIfList()`
//! in `NVIDIA/nccl:src/misc/utils.cc` (identical in 2.18–2.30.3) and on the
//! callers in `src/misc/socket.cc` and `src/transport/net_ib.cc`.
//!
//! # Rules (fact sheet §1.1 / §1.2)
//!
//! * A leading `^` turns the whole list into an **exclude** list; after it an
//!   optional `=` switches the whole list to **exact** names. Order matters:
//!   `^=eth0` excludes exactly `eth0`, `=^eth0` selects the literal name
//!   `^eth0`. The flags are global, never per token.
//! * Tokens are split on `,`; empty tokens are skipped; nothing is trimmed.
//! * In a token `:` ends the name; the rest is read with `atoi` as the port and
//!   everything up to the next `,` is ignored (`mlx5_0:1:0:0` → `mlx5_0`,
//!   port 1). A non-numeric port becomes 0, which never matches a real
//!   (1-based) IB port. Port `-1` or no `:` means "any port". A token with an
//!   empty name (`:1`) is skipped entirely.
//! * Prefix mode matches devices that *start with* the token
//!   (`mlx5_1` also selects `mlx5_10`…); exact mode compares whole names.
//! * At most 16 tokens for `NCCL_SOCKET_IFNAME`, 32 for `NCCL_IB_HCA`; later
//!   tokens are ignored. Names longer than 63 bytes overflow `char[64]`.
//! * An empty list matches everything; `^` with no tokens matches nothing.
//! * `NCCL_SOCKET_IFNAME`: a one-byte value is ignored (auto-selection runs);
//!   the port part is parsed but ignored (interfaces match with port −1).
//!
//! # API
//!
//! ```text
//! pub enum ListKind { SocketIfname, IbHca }
//! impl ListKind {
//!     pub const fn max_tokens(self) -> usize;      // 16 / 32
//!     pub const fn env_var(self) -> &'static str;  // "NCCL_SOCKET_IFNAME" / "NCCL_IB_HCA"
//!     pub const fn uses_ports(self) -> bool;       // false / true
//! }
//! pub const MAX_NAME_LEN: usize = 63;
//! pub struct IfList { /* private */ }   // built only by `parse`
//! impl IfList { pub fn exclude(&self) -> bool; pub fn exact(&self) -> bool; pub fn tokens(&self) -> &[IfToken]; }
//! pub struct IfToken { /* private */ }
//! impl IfToken {
//!     pub fn name(&self) -> &str; pub fn port(&self) -> Option<i32>; pub fn range(&self) -> Range<usize>;
//!     pub fn name_range(&self) -> Range<usize>;
//! }
//! pub struct NcclList { /* private */ }  // a profile's list: its spanned text and the parse of that text
//! impl NcclList {
//!     pub fn parse(text: Spanned<String>, kind: ListKind) -> (NcclList, Vec<TokenIssue>);
//!     pub fn text(&self) -> &Spanned<String>; pub fn list(&self) -> &IfList;
//! }
//! pub struct TokenIssue { pub kind: TokenIssueKind, pub range: Range<usize> }
//! pub enum TokenIssueKind {
//!     NameTooLong { len: usize }, BadPort { text: String }, PastLimit { limit: usize },
//!     Whitespace, LiteralCaret, LiteralEquals, ExtraFields, PortIgnored, MatchesNothing,
//!     OneCharIgnored, EmptyName,
//! }
//! impl TokenIssueKind { pub fn is_error(&self) -> bool; }
//! impl Display for TokenIssueKind
//! pub fn parse(input: &str, kind: ListKind) -> (IfList, Vec<TokenIssue>);
//! impl IfList {
//!     pub fn is_unrestricted(&self) -> bool;
//!     pub fn matches_nothing(&self) -> bool;
//!     pub fn matches(&self, device: &str, port: Option<u32>) -> bool;
//!     pub fn matching<'a>(&self, devices: &[&'a str]) -> Vec<&'a str>;
//!     pub fn matching_ports<'a>(&self, ports: &[(&'a str, u32)]) -> Vec<(&'a str, u32)>;
//!     pub fn prefix_collisions(&self, devices: &[&str]) -> Vec<(usize, Vec<String>)>;
//! }
//! impl Display for IfList   // canonical NCCL syntax; parse(to_string()) round-trips
//! impl Display for IfToken  // name[:port]
//! ```

use std::fmt;
use std::ops::Range;

use crate::source::Spanned;

/// Longest token name NCCL can hold: the name buffer is `char prefix[64]`
/// (including the terminating NUL) and is written without a bounds check.
pub const MAX_NAME_LEN: usize = 63;

/// Which NCCL variable a list belongs to; decides the token limit and
/// whether ports mean anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// `NCCL_SOCKET_IFNAME` (also `NCCL_OOB_NET_IFNAME`): network interfaces,
    /// at most 16 tokens (`MAX_IFS`), ports ignored, one-byte values ignored.
    SocketIfname,
    /// `NCCL_IB_HCA`: RDMA devices with optional `:port`, at most 32 tokens
    /// (`MAX_IB_DEVS`).
    IbHca,
}

impl ListKind {
    /// Maximum number of tokens NCCL reads; later tokens are ignored.
    pub const fn max_tokens(self) -> usize {
        match self {
            Self::SocketIfname => 16,
            Self::IbHca => 32,
        }
    }

    /// Name of the environment variable this kind models.
    pub const fn env_var(self) -> &'static str {
        match self {
            Self::SocketIfname => crate::fabric::env::NCCL_SOCKET_IFNAME.name,
            Self::IbHca => crate::fabric::env::NCCL_IB_HCA.name,
        }
    }

    /// Whether the `:port` part of a token takes part in matching.
    pub const fn uses_ports(self) -> bool {
        matches!(self, Self::IbHca)
    }
}

/// A parsed NCCL interface/HCA list, holding exactly what NCCL uses (tokens
/// past the limit and tokens with an empty name are not included).
///
/// The default value is the empty list, which selects every device (and, for
/// `NCCL_SOCKET_IFNAME`, stands for "unset": NCCL auto-selects).
///
/// The fields are private: a list is only ever what [`parse`] made of some
/// text, so it always holds what NCCL would read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IfList {
    /// Leading `^`: the list names devices to *exclude*.
    exclude: bool,
    /// `=` (after the optional `^`): names must match exactly instead of by prefix.
    exact: bool,
    /// The tokens NCCL keeps, in input order.
    tokens: Vec<IfToken>,
}

/// One token of an [`IfList`], as [`parse`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfToken {
    /// Device name or prefix, verbatim (NCCL does not trim whitespace).
    name: String,
    /// Port as NCCL reads it with `atoi`; `None` = any port (no `:`, or `-1`).
    port: Option<i32>,
    /// Byte range of the whole token (name and port part) in the input.
    range: Range<usize>,
}

impl IfToken {
    /// Device name or prefix, verbatim (NCCL does not trim whitespace, so it
    /// may hold some: [`TokenIssueKind::Whitespace`] says so).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Port as NCCL reads it with `atoi`; `None` = any port (no `:`, or `-1`).
    /// `Some(0)` (non-numeric or empty port text) never matches a real port.
    /// Always `None` for [`ListKind::SocketIfname`], where ports are ignored.
    pub fn port(&self) -> Option<i32> {
        self.port
    }

    /// Byte range of the whole token (name and port part) in the input.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// Byte range of just the name part in the input.
    pub fn name_range(&self) -> Range<usize> {
        self.range.start..self.range.start + self.name.len()
    }

    fn name_matches(&self, device: &str, exact: bool) -> bool {
        if exact {
            device == self.name
        } else {
            device.starts_with(self.name.as_str())
        }
    }

    fn port_matches(&self, port: Option<u32>) -> bool {
        // NCCL's matchPort(): -1 on either side matches anything.
        match (self.port, port) {
            (None, _) | (_, None) => true,
            (Some(want), Some(have)) => i64::from(want) == i64::from(have),
        }
    }

    /// Whether no real device can ever match this token: device names never
    /// contain whitespace and real IB ports are 1-based.
    fn is_unmatchable(&self) -> bool {
        self.name.chars().any(char::is_whitespace) || self.port.is_some_and(|p| p < 1)
    }
}

/// A diagnostic about part of an NCCL list value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenIssue {
    /// What is wrong.
    pub kind: TokenIssueKind,
    /// Byte range in the input the issue refers to.
    pub range: Range<usize>,
}

/// The kinds of problems [`parse`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenIssueKind {
    /// Name longer than [`MAX_NAME_LEN`] bytes: NCCL overflows its `char[64]` buffer.
    NameTooLong {
        /// Length of the name in bytes.
        len: usize,
    },
    /// The port text is not a clean integer ≥ 1 (or −1). NCCL reads it with
    /// `atoi`: non-numeric, empty or `0` gives 0 (negative values likewise
    /// never match) so the HCA is silently dropped; trailing garbage such as
    /// `1x` is ignored by `atoi`.
    BadPort {
        /// The port text as written (up to the next `:` or `,`).
        text: String,
    },
    /// Token beyond the 16 (`NCCL_SOCKET_IFNAME`) / 32 (`NCCL_IB_HCA`) limit;
    /// NCCL ignores it.
    PastLimit {
        /// The limit for this list kind.
        limit: usize,
    },
    /// The name contains whitespace; NCCL does not trim, so it never matches.
    Whitespace,
    /// The name starts with `^` (e.g. `=^eth0` or `eth0,^eth1`): the exclude
    /// flag is only recognised as the very first character, so this `^` is
    /// part of a literal name.
    LiteralCaret,
    /// The name starts with `=` (e.g. `eth0,=eth1` or `==eth0`): the exact flag
    /// is only recognised at the start of the list, so this `=` is literal.
    LiteralEquals,
    /// More `:` fields after the port (`mlx5_0:1:0:0`): NCCL ≤ 2.30.6 ignores them.
    ExtraFields,
    /// A `:port` given for `NCCL_SOCKET_IFNAME`: parsed but ignored. (It also
    /// means alias interfaces such as `eth0:1` cannot be selected.)
    PortIgnored,
    /// The list can match no device at all (`^` alone, or every token
    /// unmatchable); for `NCCL_IB_HCA` NCCL reports `NET/IB : No device found.`
    MatchesNothing,
    /// `NCCL_SOCKET_IFNAME` of one byte is ignored by NCCL (auto-selection runs).
    OneCharIgnored,
    /// A token with a port but no name (`:1`); NCCL skips it.
    EmptyName,
}

impl TokenIssueKind {
    /// Whether the issue means the value does not do what it says (as opposed
    /// to a harmless oddity).
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            Self::ExtraFields | Self::PortIgnored | Self::EmptyName
        )
    }
}

impl fmt::Display for TokenIssueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NameTooLong { len } => write!(
                f,
                "name is {len} bytes long; NCCL's buffer holds at most {MAX_NAME_LEN}"
            ),
            Self::BadPort { text } => write!(
                f,
                "port `{text}` is not a number >= 1; NCCL reads it with atoi and a port \
                 of 0 never matches, so the device is silently dropped"
            ),
            Self::PastLimit { limit } => {
                write!(f, "NCCL reads at most {limit} entries; this one is ignored")
            }
            Self::Whitespace => {
                f.write_str("name contains whitespace; NCCL does not trim, so it matches no device")
            }
            Self::LiteralCaret => f.write_str(
                "`^` is only special as the first character of the whole value; \
                 here it is part of a literal name",
            ),
            Self::LiteralEquals => f.write_str(
                "`=` is only special at the start of the value (after an optional `^`); \
                 here it is part of a literal name",
            ),
            Self::ExtraFields => {
                f.write_str("fields after the port are ignored by NCCL before 2.30.7")
            }
            Self::PortIgnored => f.write_str(
                "a port is parsed but ignored for network interfaces (so `eth0:1` \
                 aliases cannot be selected)",
            ),
            Self::MatchesNothing => f.write_str("this list matches no device at all"),
            Self::OneCharIgnored => f.write_str(
                "NCCL ignores a one-character NCCL_SOCKET_IFNAME and auto-selects interfaces",
            ),
            Self::EmptyName => f.write_str("entry has a port but no name; NCCL skips it"),
        }
    }
}

/// Parses an NCCL interface/HCA list exactly as NCCL does and reports every
/// construct NCCL silently mis-handles.
///
/// For [`ListKind::SocketIfname`] a one-byte value is ignored by NCCL: the
/// returned list is the empty (unrestricted) list plus a
/// [`TokenIssueKind::OneCharIgnored`] issue. An empty value yields the empty
/// list with no issue (for `NCCL_IB_HCA` that selects every HCA).
///
/// ```
/// use roce_model::nccl_list::{parse, ListKind, TokenIssueKind};
///
/// let (list, issues) = parse("mlx5_0:1,mlx5_1", ListKind::IbHca);
/// assert!(issues.is_empty());
/// assert!(list.matches("mlx5_0", Some(1)));
/// assert!(!list.matches("mlx5_0", Some(2)));
/// // prefix matching: mlx5_1 also selects mlx5_10
/// assert!(list.matches("mlx5_10", Some(1)));
///
/// let (_, issues) = parse("mlx5_0:abc", ListKind::IbHca);
/// assert!(matches!(issues[0].kind, TokenIssueKind::BadPort { .. }));
/// ```
pub fn parse(input: &str, kind: ListKind) -> (IfList, Vec<TokenIssue>) {
    let mut issues = Vec::new();

    // socket.cc: `if (env && strlen(env) > 1)` – a one-byte value is ignored.
    if kind == ListKind::SocketIfname && input.len() == 1 {
        issues.push(TokenIssue {
            kind: TokenIssueKind::OneCharIgnored,
            range: 0..1,
        });
        return (IfList::default(), issues);
    }

    let mut pos = 0;
    let exclude = input.starts_with('^');
    if exclude {
        pos += 1;
    }
    let exact = input[pos..].starts_with('=');
    if exact {
        pos += 1;
    }

    let limit = kind.max_tokens();
    let mut tokens = Vec::new();
    let mut counted = 0usize;
    let mut start = pos;
    for text in input[pos..].split(',') {
        let range = start..start + text.len();
        start = range.end + 1;
        if text.is_empty() {
            continue;
        }
        let (name, port_part) = match text.find(':') {
            Some(i) => (&text[..i], Some(&text[i + 1..])),
            None => (text, None),
        };
        if name.is_empty() {
            issues.push(TokenIssue {
                kind: TokenIssueKind::EmptyName,
                range,
            });
            continue;
        }
        counted += 1;
        if counted > limit {
            issues.push(TokenIssue {
                kind: TokenIssueKind::PastLimit { limit },
                range,
            });
            continue;
        }

        let name_range = range.start..range.start + name.len();
        if name.len() > MAX_NAME_LEN {
            issues.push(TokenIssue {
                kind: TokenIssueKind::NameTooLong { len: name.len() },
                range: name_range.clone(),
            });
        }
        if name.chars().any(char::is_whitespace) {
            issues.push(TokenIssue {
                kind: TokenIssueKind::Whitespace,
                range: name_range.clone(),
            });
        }
        let trimmed = name.trim_start();
        if trimmed.starts_with('^') {
            issues.push(TokenIssue {
                kind: TokenIssueKind::LiteralCaret,
                range: name_range.clone(),
            });
        } else if trimmed.starts_with('=') {
            issues.push(TokenIssue {
                kind: TokenIssueKind::LiteralEquals,
                range: name_range.clone(),
            });
        }

        let port = match port_part {
            None => None,
            Some(_) if !kind.uses_ports() => {
                issues.push(TokenIssue {
                    kind: TokenIssueKind::PortIgnored,
                    range: name_range.end..range.end,
                });
                None
            }
            Some(rest) => {
                let rest_start = name_range.end + 1;
                let (field, extra) = match rest.find(':') {
                    Some(i) => (&rest[..i], Some(rest_start + i..range.end)),
                    None => (rest, None),
                };
                let value = atoi(rest);
                if !is_clean_port(field) {
                    issues.push(TokenIssue {
                        kind: TokenIssueKind::BadPort {
                            text: field.to_owned(),
                        },
                        range: rest_start..rest_start + field.len(),
                    });
                }
                if let Some(extra) = extra {
                    issues.push(TokenIssue {
                        kind: TokenIssueKind::ExtraFields,
                        range: extra,
                    });
                }
                (value != -1).then_some(value)
            }
        };

        tokens.push(IfToken {
            name: name.to_owned(),
            port,
            range,
        });
    }

    let list = IfList {
        exclude,
        exact,
        tokens,
    };
    if list.matches_nothing() {
        issues.push(TokenIssue {
            kind: TokenIssueKind::MatchesNothing,
            range: 0..input.len(),
        });
    }
    (list, issues)
}

/// `atoi` as glibc implements it: `(int) strtol(s, NULL, 10)` – leading
/// whitespace, optional sign, digits, stop at the first non-digit; `strtol`
/// saturates at the `long` range and the cast to `int` truncates.
fn atoi(s: &str) -> i32 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut value: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        let d = i64::from(b - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(d)
        } else {
            value.saturating_mul(10).saturating_add(d)
        };
    }
    // Truncating cast, like C's (int) conversion of a long.
    value as i32
}

/// A port field is clean when it is an optional sign plus digits whose value
/// (without `atoi`'s overflow games) is a usable port (≥ 1) or the "any port"
/// marker −1.
fn is_clean_port(field: &str) -> bool {
    let digits = field.strip_prefix(['+', '-']).unwrap_or(field);
    let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    numeric
        && field
            .parse::<i64>()
            .ok()
            .and_then(|v| i32::try_from(v).ok())
            .is_some_and(|v| v >= 1 || v == -1)
}

impl IfList {
    /// Leading `^`: the list names devices to *exclude*.
    pub fn exclude(&self) -> bool {
        self.exclude
    }

    /// `=` (after the optional `^`): names must match exactly instead of by prefix.
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// The tokens NCCL keeps, in input order.
    pub fn tokens(&self) -> &[IfToken] {
        &self.tokens
    }

    /// Whether the list restricts nothing (empty and not excluding):
    /// every device matches.
    pub fn is_unrestricted(&self) -> bool {
        self.tokens.is_empty() && !self.exclude
    }

    /// Whether the list can match no device at all: `^` with no tokens, or an
    /// include list whose every token is unmatchable (whitespace in the name,
    /// or a port < 1).
    pub fn matches_nothing(&self) -> bool {
        if self.tokens.is_empty() {
            return self.exclude;
        }
        !self.exclude && self.tokens.iter().all(IfToken::is_unmatchable)
    }

    /// NCCL's `matchIfList(...) ^ searchNot`: whether `device` (with `port`,
    /// `None` = any, as NCCL passes −1 for network interfaces) is selected.
    /// An empty list matches everything (so an empty exclude list matches
    /// nothing).
    pub fn matches(&self, device: &str, port: Option<u32>) -> bool {
        let hit = self.tokens.is_empty()
            || self
                .tokens
                .iter()
                .any(|t| t.name_matches(device, self.exact) && t.port_matches(port));
        hit != self.exclude
    }

    /// The devices from `devices` the list selects, ignoring ports.
    pub fn matching<'a>(&self, devices: &[&'a str]) -> Vec<&'a str> {
        devices
            .iter()
            .copied()
            .filter(|d| self.matches(d, None))
            .collect()
    }

    /// The `(device, port)` pairs the list selects (NCCL_IB_HCA filters each
    /// active port separately).
    pub fn matching_ports<'a>(&self, ports: &[(&'a str, u32)]) -> Vec<(&'a str, u32)> {
        ports
            .iter()
            .copied()
            .filter(|(d, p)| self.matches(d, Some(*p)))
            .collect()
    }

    /// Prefix collisions: for each token in prefix mode whose name is itself
    /// one of `devices`, the *other* (longer) devices it also matches – e.g.
    /// token `mlx5_1` with devices `mlx5_1`, `mlx5_10` yields `(i, ["mlx5_10"])`.
    /// Returns `(token index, extra device names)`, only for tokens with at
    /// least one extra; always empty in exact mode. The fix is `=` (exact).
    pub fn prefix_collisions(&self, devices: &[&str]) -> Vec<(usize, Vec<String>)> {
        if self.exact {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, token) in self.tokens.iter().enumerate() {
            let name = token.name.as_str();
            if !devices.contains(&name) {
                continue;
            }
            let mut extra: Vec<String> = Vec::new();
            for d in devices {
                if d.len() > name.len() && d.starts_with(name) && !extra.iter().any(|e| e == d) {
                    extra.push((*d).to_owned());
                }
            }
            if !extra.is_empty() {
                out.push((i, extra));
            }
        }
        out
    }
}

impl fmt::Display for IfToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl fmt::Display for IfList {
    /// Canonical NCCL syntax: `[^][=]tok[,tok...]`, ports only where they
    /// matter, no empty tokens. Re-parsing the output gives an equal list
    /// (up to token ranges).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exclude {
            f.write_str("^")?;
        }
        if self.exact {
            f.write_str("=")?;
        }
        if let Some(first) = self.tokens.first() {
            // A literal leading `^` / `=` must not be re-read as a flag.
            let ambiguous = !self.exact
                && (first.name.starts_with('=') || (!self.exclude && first.name.starts_with('^')));
            if ambiguous {
                f.write_str(",")?;
            }
        }
        for (i, token) in self.tokens.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{token}")?;
        }
        Ok(())
    }
}

/// A profile's NCCL list (`nccl socket-ifname`, `nccl ib-hca`): the text as
/// written, with its origin, and what [`parse`] made of that text. Both are
/// private and set together by [`NcclList::parse`], so the value emitted
/// (the text) and the list the rules judge can never disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct NcclList {
    text: Spanned<String>,
    list: IfList,
}

impl NcclList {
    /// Parse `text` as a list of `kind`; the issues are [`parse`]'s, with
    /// ranges into `text`.
    ///
    /// ```
    /// use roce_model::{builtin, load, BuiltinsOnly};
    /// let profile = load(builtin::source("coreweave/h100-ib").unwrap(), &BuiltinsOnly).profile.unwrap();
    /// let hca = profile.nccl.ib_hca.unwrap();
    /// assert_eq!(hca.text().value, "ibp");
    /// assert_eq!(hca.list().tokens()[0].name(), "ibp");
    /// assert!(!hca.list().exact() && hca.list().matches("ibp0", Some(1)));
    /// ```
    pub fn parse(text: Spanned<String>, kind: ListKind) -> (Self, Vec<TokenIssue>) {
        let (list, issues) = parse(&text.value, kind);
        (Self { text, list }, issues)
    }

    /// The text as written (what goes into the environment variable).
    pub fn text(&self) -> &Spanned<String> {
        &self.text
    }

    /// The parsed list.
    pub fn list(&self) -> &IfList {
        &self.list
    }
}

/// A prefix `NCCL_IB_HCA` can name `devices` by (NCCL matches an entry as a prefix of the device name,
/// `matchIfList`): their longest common prefix, without trailing digits, so it never ends inside a number
/// (`mlx5_10`, `mlx5_11` → `mlx5_`, not `mlx5_1`, which would take `mlx5_1` too). Empty when they share none.
pub fn hca_prefix(devices: &[&str]) -> String {
    let Some(first) = devices.first() else {
        return String::new();
    };
    let len = devices.iter().fold(first.len(), |len, d| {
        len.min(
            first
                .bytes()
                .zip(d.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    first[..len]
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ib(input: &str) -> (IfList, Vec<TokenIssue>) {
        parse(input, ListKind::IbHca)
    }

    fn sock(input: &str) -> (IfList, Vec<TokenIssue>) {
        parse(input, ListKind::SocketIfname)
    }

    fn kinds(issues: &[TokenIssue]) -> Vec<TokenIssueKind> {
        issues.iter().map(|i| i.kind.clone()).collect()
    }

    fn names(list: &IfList) -> Vec<&str> {
        list.tokens.iter().map(|t| t.name.as_str()).collect()
    }

    const HCAS: &[&str] = &[
        "mlx5_0",
        "mlx5_1",
        "mlx5_2",
        "mlx5_10",
        "mlx5_11",
        "mlx5_bond_0",
    ];
    const IFACES: &[&str] = &["eth0", "eth1", "eth10", "ib0", "ib1", "lo", "docker0"];

    // ---- ListKind -------------------------------------------------------

    #[test]
    fn list_kind_limits_and_names() {
        assert_eq!(ListKind::SocketIfname.max_tokens(), 16);
        assert_eq!(ListKind::IbHca.max_tokens(), 32);
        assert_eq!(ListKind::SocketIfname.env_var(), "NCCL_SOCKET_IFNAME");
        assert_eq!(ListKind::IbHca.env_var(), "NCCL_IB_HCA");
        assert!(ListKind::IbHca.uses_ports());
        assert!(!ListKind::SocketIfname.uses_ports());
    }

    // ---- rule 1: ^ and = flags ------------------------------------------

    #[test]
    fn plain_list_is_include_prefix() {
        let (list, issues) = ib("mlx5_0,mlx5_1");
        assert!(issues.is_empty());
        assert!(!list.exclude);
        assert!(!list.exact);
        assert_eq!(names(&list), ["mlx5_0", "mlx5_1"]);
    }

    #[test]
    fn caret_makes_exclude_list() {
        let (list, issues) = ib("^mlx5_0");
        assert!(issues.is_empty());
        assert!(list.exclude);
        assert!(!list.exact);
        assert_eq!(names(&list), ["mlx5_0"]);
        assert_eq!(
            list.matching(HCAS),
            ["mlx5_1", "mlx5_2", "mlx5_10", "mlx5_11", "mlx5_bond_0"]
        );
    }

    #[test]
    fn caret_equals_excludes_exactly() {
        let (list, issues) = sock("^=eth0");
        assert!(issues.is_empty());
        assert!(list.exclude && list.exact);
        assert_eq!(names(&list), ["eth0"]);
        assert!(!list.matches("eth0", None));
        assert!(list.matches("eth01", None));
        assert!(list.matches("eth1", None));
        // without `=` the prefix exclude also drops eth1X
        let (prefix, _) = sock("^eth1");
        assert!(!prefix.matches("eth10", None));
        let (exact, _) = sock("^=eth1");
        assert!(exact.matches("eth10", None));
    }

    #[test]
    fn equals_caret_is_literal_name() {
        let (list, issues) = sock("=^eth0");
        assert!(!list.exclude);
        assert!(list.exact);
        assert_eq!(names(&list), ["^eth0"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::LiteralCaret]);
        assert_eq!(issues[0].range, 1..6);
        assert!(!list.matches("eth0", None));
        assert!(list.matches("^eth0", None));
        assert!(list.matching(IFACES).is_empty());
    }

    #[test]
    fn flags_are_global_not_per_token() {
        let (list, issues) = ib("=mlx5_0,mlx5_1");
        assert!(issues.is_empty());
        assert!(list.exact);
        assert!(list.matches("mlx5_1", None));
        assert!(!list.matches("mlx5_10", None), "second token is exact too");
    }

    #[test]
    fn caret_in_later_token_is_literal() {
        let (list, issues) = sock("eth0,^eth1");
        assert!(!list.exclude);
        assert_eq!(names(&list), ["eth0", "^eth1"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::LiteralCaret]);
        assert_eq!(issues[0].range, 5..10);
        assert!(!list.matches("eth1", None));
    }

    #[test]
    fn double_caret_leaves_literal_caret() {
        let (list, issues) = ib("^^mlx5_0");
        assert!(list.exclude);
        assert_eq!(names(&list), ["^mlx5_0"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::LiteralCaret]);
    }

    #[test]
    fn equals_in_later_token_is_literal() {
        let (list, issues) = ib("mlx5_0,=mlx5_1");
        assert!(!list.exact);
        assert_eq!(names(&list), ["mlx5_0", "=mlx5_1"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::LiteralEquals]);
        let (list, issues) = ib("==mlx5_1");
        assert!(list.exact);
        assert_eq!(names(&list), ["=mlx5_1"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::LiteralEquals]);
    }

    // ---- rule 2: splitting, empty tokens, no trimming --------------------

    #[test]
    fn empty_tokens_are_skipped() {
        let (list, issues) = ib(",,mlx5_0,,,mlx5_1,");
        assert!(issues.is_empty());
        assert_eq!(names(&list), ["mlx5_0", "mlx5_1"]);
        assert_eq!(list.tokens[0].range, 2..8);
        assert_eq!(list.tokens[1].range, 11..17);
    }

    #[test]
    fn whitespace_is_not_trimmed() {
        let input = "mlx5_0, mlx5_1";
        let (list, issues) = ib(input);
        assert_eq!(names(&list), ["mlx5_0", " mlx5_1"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::Whitespace]);
        assert_eq!(&input[issues[0].range.clone()], " mlx5_1");
        assert!(!list.matches("mlx5_1", None));
        assert!(list.matches("mlx5_0", None));
    }

    #[test]
    fn trailing_whitespace_is_flagged() {
        let (list, issues) = sock("eth0 ");
        assert_eq!(names(&list), ["eth0 "]);
        assert_eq!(
            kinds(&issues),
            [TokenIssueKind::Whitespace, TokenIssueKind::MatchesNothing]
        );
        assert!(list.matching(IFACES).is_empty());
    }

    #[test]
    fn leading_space_hides_the_caret() {
        let (list, issues) = ib(" ^mlx5_0");
        assert!(!list.exclude, "^ is only special as the first byte");
        assert_eq!(
            kinds(&issues),
            [
                TokenIssueKind::Whitespace,
                TokenIssueKind::LiteralCaret,
                TokenIssueKind::MatchesNothing
            ]
        );
    }

    #[test]
    fn token_ranges_point_into_input() {
        let input = "^=mlx5_0:1,mlx5_3";
        let (list, _) = ib(input);
        assert_eq!(&input[list.tokens[0].range.clone()], "mlx5_0:1");
        assert_eq!(&input[list.tokens[0].name_range()], "mlx5_0");
        assert_eq!(&input[list.tokens[1].range.clone()], "mlx5_3");
    }

    // ---- rule 3: ports ----------------------------------------------------

    #[test]
    fn port_is_parsed() {
        let (list, issues) = ib("mlx5_0:1,mlx5_1:2,mlx5_2,mlx5_3:01,mlx5_4:+2");
        assert!(issues.is_empty());
        let ports: Vec<_> = list.tokens.iter().map(|t| t.port).collect();
        assert_eq!(ports, [Some(1), Some(2), None, Some(1), Some(2)]);
    }

    #[test]
    fn port_filters_ports() {
        let (list, _) = ib("mlx5_0:1");
        assert!(list.matches("mlx5_0", Some(1)));
        assert!(!list.matches("mlx5_0", Some(2)));
        assert!(
            list.matches("mlx5_0", None),
            "port -1 on the device side matches any"
        );
        let ports = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1)];
        assert_eq!(list.matching_ports(&ports), [("mlx5_0", 1)]);
    }

    #[test]
    fn port_minus_one_means_any() {
        let (list, issues) = ib("mlx5_0:-1");
        assert!(issues.is_empty());
        assert_eq!(list.tokens[0].port, None);
        assert!(list.matches("mlx5_0", Some(2)));
    }

    #[test]
    fn non_numeric_port_is_bad_and_drops_the_hca() {
        let input = "mlx5_0:abc";
        let (list, issues) = ib(input);
        assert_eq!(list.tokens[0].port, Some(0));
        assert_eq!(
            kinds(&issues),
            [
                TokenIssueKind::BadPort { text: "abc".into() },
                TokenIssueKind::MatchesNothing
            ]
        );
        assert_eq!(&input[issues[0].range.clone()], "abc");
        assert!(!list.matches("mlx5_0", Some(1)));
        assert!(!list.matches("mlx5_0", Some(2)));
    }

    #[test]
    fn zero_empty_and_negative_ports_are_bad() {
        for (input, text, port) in [
            ("mlx5_0:0", "0", 0),
            ("mlx5_0:", "", 0),
            ("mlx5_0:-2", "-2", -2),
        ] {
            let (list, issues) = ib(input);
            assert_eq!(list.tokens[0].port, Some(port), "{input}");
            assert_eq!(
                issues[0].kind,
                TokenIssueKind::BadPort { text: text.into() },
                "{input}"
            );
            assert!(!list.matches("mlx5_0", Some(1)), "{input}");
        }
    }

    #[test]
    fn overflowing_port_is_bad() {
        // atoi("4294967297") wraps to 1 in C; still not a sane port.
        let (list, issues) = ib("mlx5_0:4294967297");
        assert_eq!(list.tokens[0].port, Some(1));
        assert_eq!(
            kinds(&issues),
            [TokenIssueKind::BadPort {
                text: "4294967297".into()
            }]
        );
    }

    #[test]
    fn trailing_garbage_port_uses_atoi_prefix() {
        let (list, issues) = ib("mlx5_0:1x");
        assert_eq!(list.tokens[0].port, Some(1));
        assert_eq!(
            kinds(&issues),
            [TokenIssueKind::BadPort { text: "1x".into() }]
        );
        assert!(list.matches("mlx5_0", Some(1)));
    }

    #[test]
    fn bad_port_only_in_one_token_is_not_matches_nothing() {
        let (list, issues) = ib("mlx5_0:x,mlx5_1");
        assert_eq!(
            kinds(&issues),
            [TokenIssueKind::BadPort { text: "x".into() }]
        );
        assert_eq!(list.matching(&["mlx5_0", "mlx5_1"]), ["mlx5_0", "mlx5_1"]);
        assert_eq!(
            list.matching_ports(&[("mlx5_0", 1), ("mlx5_1", 1)]),
            [("mlx5_1", 1)]
        );
    }

    #[test]
    fn extra_fields_are_ignored() {
        let input = "mlx5_0:1:0:0,mlx5_1";
        let (list, issues) = ib(input);
        assert_eq!(names(&list), ["mlx5_0", "mlx5_1"]);
        assert_eq!(list.tokens[0].port, Some(1));
        assert_eq!(kinds(&issues), [TokenIssueKind::ExtraFields]);
        assert_eq!(&input[issues[0].range.clone()], ":0:0");
        assert_eq!(&input[list.tokens[0].range.clone()], "mlx5_0:1:0:0");
    }

    #[test]
    fn new_rail_syntax_is_bad_port_before_2_30_7() {
        // `mlx5_0::0:0` (2.30.7+: empty port = all ports) reads as port 0 earlier.
        let (list, issues) = ib("mlx5_0::0:0");
        assert_eq!(list.tokens[0].port, Some(0));
        assert_eq!(
            kinds(&issues),
            [
                TokenIssueKind::BadPort {
                    text: String::new()
                },
                TokenIssueKind::ExtraFields,
                TokenIssueKind::MatchesNothing
            ]
        );
    }

    #[test]
    fn empty_name_with_port_is_skipped() {
        let (list, issues) = ib(":1,mlx5_0");
        assert_eq!(names(&list), ["mlx5_0"]);
        assert_eq!(kinds(&issues), [TokenIssueKind::EmptyName]);
        assert_eq!(issues[0].range, 0..2);
        // and it does not count towards the limit
        let mut input = String::from(":1");
        for i in 0..32 {
            input.push_str(&format!(",mlx5_{i}"));
        }
        let (list, issues) = ib(&input);
        assert_eq!(list.tokens.len(), 32);
        assert_eq!(kinds(&issues), [TokenIssueKind::EmptyName]);
    }

    #[test]
    fn atoi_semantics() {
        assert_eq!(atoi("12"), 12);
        assert_eq!(atoi("  7"), 7);
        assert_eq!(atoi("+3"), 3);
        assert_eq!(atoi("-1"), -1);
        assert_eq!(atoi("1:0"), 1);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("-"), 0);
        // strtol saturates at LONG_MAX, (int) truncation gives -1
        assert_eq!(atoi("99999999999999999999999"), -1);
        assert_eq!(atoi("4294967297"), 1);
    }

    // ---- rule 3 / §1.2: ports on NCCL_SOCKET_IFNAME ----------------------

    #[test]
    fn socket_port_is_ignored() {
        let input = "eth0:1";
        let (list, issues) = sock(input);
        assert_eq!(list.tokens[0].name, "eth0");
        assert_eq!(list.tokens[0].port, None);
        assert_eq!(kinds(&issues), [TokenIssueKind::PortIgnored]);
        assert_eq!(&input[issues[0].range.clone()], ":1");
        assert!(list.matches("eth0", None));
        // bad port text is irrelevant for interfaces
        let (_, issues) = sock("eth0:abc");
        assert_eq!(kinds(&issues), [TokenIssueKind::PortIgnored]);
    }

    #[test]
    fn socket_alias_interface_cannot_be_selected() {
        let (list, _) = sock("=eth0:1");
        assert!(list.matches("eth0", None));
        assert!(!list.matches("eth0:1", None));
    }

    // ---- rule 4: exact vs prefix matching --------------------------------

    #[test]
    fn ib_hca_prefix_matches_longer_names() {
        let (list, issues) = ib("mlx5_1");
        assert!(issues.is_empty());
        assert!(list.matches("mlx5_1", Some(1)));
        assert!(list.matches("mlx5_10", Some(1)));
        assert!(list.matches("mlx5_11", Some(1)));
        assert!(!list.matches("mlx5_2", Some(1)));
        assert_eq!(list.matching(HCAS), ["mlx5_1", "mlx5_10", "mlx5_11"]);
    }

    #[test]
    fn exact_mode_compares_whole_name() {
        let (list, _) = ib("=mlx5_1");
        assert_eq!(list.matching(HCAS), ["mlx5_1"]);
        assert!(
            !list.matches("mlx5", None),
            "token is not a prefix of the device"
        );
    }

    #[test]
    fn prefix_can_be_partial_name() {
        let (list, _) = sock("eth");
        assert_eq!(list.matching(IFACES), ["eth0", "eth1", "eth10"]);
        let (list, _) = sock("^docker,lo");
        assert_eq!(
            list.matching(IFACES),
            ["eth0", "eth1", "eth10", "ib0", "ib1"]
        );
    }

    #[test]
    fn matching_is_case_sensitive() {
        let (list, _) = ib("MLX5_0");
        assert!(!list.matches("mlx5_0", None));
    }

    #[test]
    fn hca_prefix_ends_at_a_name_boundary() {
        assert_eq!(hca_prefix(&["ibp0p0", "ibp3p3"]), "ibp");
        assert_eq!(hca_prefix(&["mlx5_0", "mlx5_7"]), "mlx5_");
        assert_eq!(hca_prefix(&["mlx5_10", "mlx5_11"]), "mlx5_");
        assert_eq!(hca_prefix(&["mlx5_0", "rocep1s0"]), "");
        assert_eq!(hca_prefix(&[]), "");
    }

    #[test]
    fn prefix_collisions_reported() {
        let (list, _) = ib("mlx5_1,mlx5_2");
        assert_eq!(
            list.prefix_collisions(HCAS),
            vec![(0, vec!["mlx5_10".to_owned(), "mlx5_11".to_owned()])]
        );
        // exclude lists collide too: ^mlx5_1 also drops mlx5_10
        let (list, _) = ib("^mlx5_0,mlx5_1");
        assert_eq!(
            list.prefix_collisions(HCAS),
            vec![(1, vec!["mlx5_10".to_owned(), "mlx5_11".to_owned()])]
        );
    }

    #[test]
    fn prefix_collisions_need_token_to_be_a_device() {
        // `mlx5` is a deliberate prefix, not a device name: no collision.
        let (list, _) = ib("mlx5");
        assert!(list.prefix_collisions(HCAS).is_empty());
        // exact mode never collides
        let (list, _) = ib("=mlx5_1");
        assert!(list.prefix_collisions(HCAS).is_empty());
        // no longer device: nothing
        let (list, _) = ib("mlx5_2");
        assert!(list.prefix_collisions(HCAS).is_empty());
    }

    #[test]
    fn prefix_collisions_deduplicate_devices() {
        let (list, _) = sock("eth1");
        assert_eq!(
            list.prefix_collisions(&["eth1", "eth10", "eth10"]),
            vec![(0, vec!["eth10".to_owned()])]
        );
    }

    // ---- rule 5: limits ----------------------------------------------------

    fn numbered(prefix: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn socket_ifname_17th_token_is_past_limit() {
        let input = numbered("eth", 17);
        let (list, issues) = sock(&input);
        assert_eq!(list.tokens.len(), 16);
        assert_eq!(kinds(&issues), [TokenIssueKind::PastLimit { limit: 16 }]);
        assert_eq!(&input[issues[0].range.clone()], "eth16");
        // eth16 is not selected by name (prefix eth1 still matches it, so use exact)
        let (exact, _) = sock(&format!("={input}"));
        assert!(!exact.matches("eth16", None));
        assert!(exact.matches("eth15", None));
        let (list, issues) = sock(&numbered("eth", 16));
        assert_eq!(list.tokens.len(), 16);
        assert!(issues.is_empty());
    }

    #[test]
    fn ib_hca_33rd_token_is_past_limit() {
        let input = numbered("mlx5_", 34);
        let (list, issues) = ib(&input);
        assert_eq!(list.tokens.len(), 32);
        assert_eq!(
            kinds(&issues),
            [
                TokenIssueKind::PastLimit { limit: 32 },
                TokenIssueKind::PastLimit { limit: 32 }
            ]
        );
        assert_eq!(&input[issues[0].range.clone()], "mlx5_32");
        assert_eq!(&input[issues[1].range.clone()], "mlx5_33");
        let (_, issues) = ib(&numbered("mlx5_", 32));
        assert!(issues.is_empty());
    }

    #[test]
    fn limit_applies_to_exclude_lists() {
        let input = format!("^={}", numbered("eth", 17));
        let (list, issues) = sock(&input);
        assert_eq!(kinds(&issues), [TokenIssueKind::PastLimit { limit: 16 }]);
        // eth16 is *not* excluded because NCCL never read it
        assert!(list.matches("eth16", None));
        assert!(!list.matches("eth15", None));
    }

    #[test]
    fn name_too_long() {
        let ok = "a".repeat(63);
        let (_, issues) = ib(&ok);
        assert!(issues.is_empty());
        let long = "a".repeat(64);
        let input = format!("{long}:1");
        let (list, issues) = ib(&input);
        assert_eq!(kinds(&issues), [TokenIssueKind::NameTooLong { len: 64 }]);
        assert_eq!(issues[0].range, 0..64);
        assert_eq!(list.tokens[0].name.len(), 64);
    }

    // ---- rule 6: empty list semantics ------------------------------------

    #[test]
    fn empty_string_matches_everything() {
        let (list, issues) = ib("");
        assert!(issues.is_empty());
        assert!(list.is_unrestricted());
        assert!(list.matches("mlx5_0", Some(1)));
        assert_eq!(list.matching(HCAS), HCAS);
        let (list, issues) = ib(",,,");
        assert!(issues.is_empty());
        assert!(list.is_unrestricted());
    }

    #[test]
    fn caret_alone_matches_nothing() {
        let (list, issues) = ib("^");
        assert!(list.exclude);
        assert!(list.matches_nothing());
        assert_eq!(kinds(&issues), [TokenIssueKind::MatchesNothing]);
        assert_eq!(issues[0].range, 0..1);
        assert!(list.matching(HCAS).is_empty());
        assert!(!list.matches("mlx5_0", Some(1)));
    }

    #[test]
    fn other_empty_exclude_lists_match_nothing() {
        for input in ["^=", "^,", "^:1"] {
            let (list, issues) = ib(input);
            assert!(list.matching(HCAS).is_empty(), "{input}");
            assert!(
                issues
                    .iter()
                    .any(|i| i.kind == TokenIssueKind::MatchesNothing),
                "{input}"
            );
        }
        let (list, _) = sock("^=");
        assert!(list.matching(IFACES).is_empty());
    }

    #[test]
    fn equals_alone_matches_everything() {
        let (list, issues) = ib("=");
        assert!(issues.is_empty());
        assert!(list.exact);
        assert_eq!(list.matching(HCAS), HCAS);
    }

    #[test]
    fn all_unmatchable_tokens_match_nothing() {
        let (list, issues) = ib("mlx5_0:0, mlx5_1");
        assert!(list.matches_nothing());
        assert_eq!(issues.last().unwrap().kind, TokenIssueKind::MatchesNothing);
        assert_eq!(issues.last().unwrap().range, 0..16);
    }

    #[test]
    fn literal_names_alone_are_not_matches_nothing() {
        // `^eth0` is a legal (if unlikely) interface name, so no MatchesNothing.
        let (list, _) = sock("=^eth0");
        assert!(!list.matches_nothing());
    }

    // ---- §1.2: one-character NCCL_SOCKET_IFNAME ---------------------------

    #[test]
    fn one_char_socket_ifname_is_ignored() {
        for input in ["e", "^", "="] {
            let (list, issues) = sock(input);
            assert_eq!(list, IfList::default(), "{input}");
            assert_eq!(kinds(&issues), [TokenIssueKind::OneCharIgnored], "{input}");
            assert_eq!(issues[0].range, 0..1);
        }
        // two characters are honoured
        let (list, issues) = sock("ib");
        assert!(issues.is_empty());
        assert_eq!(list.matching(IFACES), ["ib0", "ib1"]);
        // one char is fine for NCCL_IB_HCA (prefix `m`)
        let (list, issues) = ib("m");
        assert!(issues.is_empty());
        assert_eq!(list.matching(HCAS).len(), HCAS.len());
    }

    #[test]
    fn one_multibyte_char_is_more_than_one_byte() {
        let (list, issues) = sock("é");
        assert_eq!(names(&list), ["é"]);
        assert!(issues.is_empty());
    }

    #[test]
    fn empty_socket_ifname_is_unrestricted() {
        let (list, issues) = sock("");
        assert!(issues.is_empty());
        assert!(list.is_unrestricted());
    }

    // ---- Display -----------------------------------------------------------

    #[test]
    fn display_is_canonical() {
        for (input, kind, canon) in [
            ("mlx5_0:1,,mlx5_1:-1,", ListKind::IbHca, "mlx5_0:1,mlx5_1"),
            ("^=mlx5_0:1", ListKind::IbHca, "^=mlx5_0:1"),
            ("eth0:3,ib", ListKind::SocketIfname, "eth0,ib"),
            ("=^eth0", ListKind::SocketIfname, "=^eth0"),
            ("mlx5_0:1:0:0", ListKind::IbHca, "mlx5_0:1"),
            ("mlx5_0:abc", ListKind::IbHca, "mlx5_0:0"),
            ("^", ListKind::IbHca, "^"),
            ("", ListKind::IbHca, ""),
            (",^eth0", ListKind::SocketIfname, ",^eth0"),
            (",=eth0", ListKind::SocketIfname, ",=eth0"),
            ("^,=eth0", ListKind::SocketIfname, "^,=eth0"),
        ] {
            let (list, _) = parse(input, kind);
            assert_eq!(list.to_string(), canon, "{input}");
        }
    }

    #[test]
    fn display_round_trips() {
        for (input, kind) in [
            ("mlx5_0:1,mlx5_1", ListKind::IbHca),
            ("^=mlx5_0:2,mlx5_3", ListKind::IbHca),
            (",^eth0,eth1", ListKind::SocketIfname),
            (",=eth0", ListKind::SocketIfname),
            ("^,=eth0", ListKind::SocketIfname),
            ("==eth0", ListKind::SocketIfname),
            ("^^eth0", ListKind::SocketIfname),
            ("mlx5_0:x,mlx5_1:1:1", ListKind::IbHca),
        ] {
            let (list, _) = parse(input, kind);
            let (again, _) = parse(&list.to_string(), kind);
            assert_eq!(list.exclude, again.exclude, "{input}");
            assert_eq!(list.exact, again.exact, "{input}");
            let strip = |l: &IfList| -> Vec<(String, Option<i32>)> {
                l.tokens.iter().map(|t| (t.name.clone(), t.port)).collect()
            };
            assert_eq!(strip(&list), strip(&again), "{input}");
        }
    }

    #[test]
    fn token_display() {
        let (list, _) = ib("mlx5_0:2,mlx5_1");
        assert_eq!(list.tokens[0].to_string(), "mlx5_0:2");
        assert_eq!(list.tokens[1].to_string(), "mlx5_1");
    }

    // ---- misc ------------------------------------------------------------

    #[test]
    fn issue_messages_and_severity() {
        assert!(TokenIssueKind::MatchesNothing.is_error());
        assert!(TokenIssueKind::BadPort { text: "x".into() }.is_error());
        assert!(!TokenIssueKind::ExtraFields.is_error());
        assert!(!TokenIssueKind::PortIgnored.is_error());
        assert!(
            TokenIssueKind::PastLimit { limit: 16 }
                .to_string()
                .contains("16")
        );
        assert!(
            TokenIssueKind::NameTooLong { len: 70 }
                .to_string()
                .contains("70")
        );
        assert!(
            TokenIssueKind::BadPort { text: "abc".into() }
                .to_string()
                .contains("`abc`")
        );
    }

    #[test]
    fn default_list_matches_all() {
        let list = IfList::default();
        assert!(list.matches("anything", Some(7)));
        assert!(!list.matches_nothing());
    }

    #[test]
    fn multibyte_ranges_are_byte_ranges() {
        let input = "ü,eth0";
        let (list, _) = sock(input);
        assert_eq!(&input[list.tokens[1].range.clone()], "eth0");
        assert_eq!(list.tokens[0].range, 0..2);
    }
}
