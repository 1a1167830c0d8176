//! `UCX_TLS` and `UCX_NET_DEVICES` as UCX 1.14–1.20 read them
//! (`openucx/ucx@v1.20.0:src/ucp/core/ucp_context.c`,
//! `src/ucs/config/parser.c`; fact sheet §3).
//!
//! # Rules
//!
//! * Both are comma lists (`strtok`: empty elements vanish, nothing is
//!   trimmed); names are **exact and case-sensitive** (`strcmp`).
//! * `UCX_TLS` (default `all`): a leading `^` turns the whole list into a deny
//!   list; `all` is only recognised as the *first* element and must then be
//!   the only one (`all,tcp` is rejected; `tcp,all` silently means `tcp`;
//!   `^all` means `all`). A token may end in `:aux` (auxiliary / wire-up only)
//!   and start with `\` (literal transport name, no alias expansion). Aliases
//!   ([`ALIASES`]) expand to concrete transports, some only as auxiliaries
//!   (`rc` → `rc_mlx5`, `rc_verbs` + `ud_mlx5`/`ud_verbs` as aux). In a deny
//!   list a transport that some alias uses as an auxiliary is kept as aux
//!   unless it is also denied as `:aux` (`^ud` keeps UD for wire-up,
//!   `^ud,ud:aux` removes it). At most 128 elements are read.
//! * `UCX_NET_DEVICES` (default `all`): exact device names, RDMA as
//!   `<ibdev>:<port>` (`mlx5_0:1`), TCP as the netdev (`eth0`); `all` anywhere
//!   selects everything; **no `^` negation and no prefix matching**; at most 64
//!   entries (UCX asserts); duplicates warn
//!   `device '%s' is specified multiple times`.
//!
//! # API
//!
//! ```text
//! // transports and aliases: crate::fabric::ucx (the fabric core)
//! pub const TLS_MAX_ITEMS: usize = 128;
//! pub const NET_DEVICES_MAX: usize = 64;
//! pub fn is_known_transport(name: &str) -> bool;
//! pub fn alias_members(alias: &str) -> Option<&'static [&'static str]>;
//! pub fn suggest_transport(name: &str) -> Option<&'static str>;
//!
//! pub struct TlsList { /* private */ }  // built only by `parse_tls`
//! impl TlsList { pub fn negate(&self) -> bool; pub fn items(&self) -> &[TlsItem]; }
//! pub struct TlsItem { /* private */ }
//! impl TlsItem {
//!     pub fn name(&self) -> &str; pub fn aux(&self) -> bool; pub fn literal(&self) -> bool;
//!     pub fn range(&self) -> Range<usize>;
//! }
//! pub enum TlsRole { Primary, Aux }
//! pub struct UcxIssue { pub kind: UcxIssueKind, pub range: Range<usize> }
//! pub enum UcxIssueKind {
//!     UnknownTransport { name: String, suggestion: Option<String> }, AllNotAlone, Empty,
//!     Duplicate { name: String }, TooMany { limit: usize }, CaretInNetDevices,
//!     BadPort { text: String }, NegatedAll, Whitespace,
//! }
//! impl UcxIssueKind { pub fn is_error(&self) -> bool; }
//! impl Display for UcxIssueKind
//! pub fn parse_tls(input: &str) -> (TlsList, Vec<UcxIssue>);
//! impl TlsList {
//!     pub fn is_all(&self) -> bool;
//!     pub fn roles(&self) -> BTreeMap<&'static str, TlsRole>;
//!     pub fn transports(&self) -> BTreeSet<&'static str>;
//!     pub fn aux_only(&self) -> BTreeSet<&'static str>;
//!     pub fn contains(&self, transport: &str) -> bool;
//! }
//! impl Default for TlsList  // `all`
//! pub struct NetDevices { /* private */ }  // built only by `parse_net_devices`
//! pub struct NetDevice { /* private */ }
//! impl NetDevice { pub fn name(&self) -> &str; pub fn port(&self) -> Option<u32>; pub fn range(&self) -> Range<usize>; }
//! pub fn parse_net_devices(input: &str) -> (NetDevices, Vec<UcxIssue>);
//! impl NetDevices {
//!     pub fn is_all(&self) -> bool; pub fn devices(&self) -> Option<&[NetDevice]>;  // None: `all`
//!     pub fn selects(&self, resource: &str) -> bool;
//! }
//! impl Default for NetDevices  // all
//! impl Display for TlsList, TlsItem, NetDevices, NetDevice  // canonical form
//!
//! // a profile's value: its spanned text and the parse of that text, set together
//! pub struct UcxTls { /* private */ }
//! impl UcxTls { pub fn parse(text: Spanned<String>) -> (UcxTls, Vec<UcxIssue>); pub fn text(&self) -> &Spanned<String>; pub fn list(&self) -> &TlsList; }
//! pub struct UcxNetDevices { /* private */ }
//! impl UcxNetDevices { pub fn parse(text: Spanned<String>) -> (UcxNetDevices, Vec<UcxIssue>); pub fn text(&self) -> &Spanned<String>; pub fn devices(&self) -> &NetDevices; }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;

use crate::fabric::ucx::transports::{self as facts, ALIASES};
use crate::source::Spanned;

/// Elements UCX reads from any list variable (`UCS_CONFIG_ARRAY_MAX`); the
/// rest is dropped.
pub const TLS_MAX_ITEMS: usize = 128;

/// Entries `UCX_NET_DEVICES` may have (a 64-bit mask; UCX asserts beyond).
pub const NET_DEVICES_MAX: usize = 64;

const AUX_SUFFIX: &str = ":aux";
const ALL: &str = "all";

/// Whether `name` is a concrete transport of [`facts::TRANSPORTS`] (exact,
/// case-sensitive).
pub fn is_known_transport(name: &str) -> bool {
    facts::transport(name).is_some()
}

/// Members of alias `alias` (with `:aux` markers), or `None` if it is not an alias.
pub fn alias_members(alias: &str) -> Option<&'static [&'static str]> {
    ALIASES
        .iter()
        .find(|(name, _)| *name == alias)
        .map(|(_, members)| *members)
}

/// Concrete transports that some alias uses as an auxiliary (UCX's `aux_tls`).
fn is_aux_somewhere(tl: &str) -> bool {
    ALIASES
        .iter()
        .flat_map(|(_, members)| members.iter())
        .any(|m| m.strip_suffix(AUX_SUFFIX) == Some(tl))
}

/// Did-you-mean for an unknown `UCX_TLS` name: the closest transport, alias or
/// `all`. Case, `-` for `_`, surrounding whitespace and a stray leading `^`
/// or `\` are forgiven first; otherwise the nearest name: Jaro-Winkler
/// similarity ≥ 0.8, or an edit distance (Levenshtein plus adjacent
/// transpositions) of 1 for names of 3+ characters / 2 for 4+ characters.
///
/// ```
/// use roce_model::ucx_list::suggest_transport;
/// assert_eq!(suggest_transport("rc_mlx"), Some("rc_mlx5"));
/// assert_eq!(suggest_transport("cuda-copy"), Some("cuda_copy"));
/// assert_eq!(suggest_transport("banana"), None);
/// ```
pub fn suggest_transport(name: &str) -> Option<&'static str> {
    let candidates = || {
        facts::names()
            .chain(ALIASES.iter().map(|(a, _)| *a))
            .chain(std::iter::once(ALL))
    };
    let normalized = name
        .trim()
        .trim_start_matches(['^', '\\'])
        .to_ascii_lowercase()
        .replace('-', "_");
    if let Some(exact) = candidates().find(|c| *c == normalized) {
        return Some(exact);
    }
    let len = normalized.chars().count();
    candidates()
        .filter_map(|c| {
            let dist = strsim::osa_distance(&normalized, c);
            let jw = strsim::jaro_winkler(&normalized, c);
            let close = (dist <= 1 && len >= 3) || (dist <= 2 && len >= 4);
            (jw >= 0.8 || close).then_some((dist, jw, c))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)))
        .map(|(_, _, c)| c)
}

/// A parsed `UCX_TLS` value. The fields are private: a list is only ever
/// what [`parse_tls`] made of some text (or the default, `all`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsList {
    /// Leading `^`: the list names transports to *disable*.
    negate: bool,
    /// The elements UCX reads (empty elements and those past
    /// [`TLS_MAX_ITEMS`] dropped), in input order.
    items: Vec<TlsItem>,
}

/// One element of a [`TlsList`], as [`parse_tls`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsItem {
    /// Transport or alias name without the `\` prefix and `:aux` suffix.
    name: String,
    /// `:aux` suffix.
    aux: bool,
    /// Leading `\`.
    literal: bool,
    /// Byte range of the whole element in the input.
    range: Range<usize>,
}

impl TlsItem {
    /// Transport or alias name without the `\` prefix and `:aux` suffix,
    /// verbatim otherwise (UCX does not trim).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `:aux` suffix: auxiliary (wire-up only) use.
    pub fn aux(&self) -> bool {
        self.aux
    }

    /// Leading `\`: literal transport name, never expanded as an alias.
    pub fn literal(&self) -> bool {
        self.literal
    }

    /// Byte range of the whole element in the input.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    fn is_plain_all(&self) -> bool {
        self.name == ALL && !self.aux && !self.literal
    }

    /// Alias members when this item expands as an alias.
    fn alias(&self) -> Option<&'static [&'static str]> {
        if self.literal {
            None
        } else {
            alias_members(&self.name)
        }
    }
}

/// How a transport is enabled by `UCX_TLS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TlsRole {
    /// Usable for communication.
    Primary,
    /// Only for auxiliary purposes (connection wire-up), e.g. UD under `rc`.
    Aux,
}

/// A diagnostic about part of a UCX list value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UcxIssue {
    /// What is wrong.
    pub kind: UcxIssueKind,
    /// Byte range in the input the issue refers to.
    pub range: Range<usize>,
}

/// The kinds of problems [`parse_tls`] and [`parse_net_devices`] report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UcxIssueKind {
    /// `UCX_TLS` element that is no transport or alias UCX knows (names are
    /// exact and case-sensitive; `\alias` is not expanded). UCX warns
    /// `transport '<x>' is not available` and ignores it.
    UnknownTransport {
        /// The element as written, minus a `:aux` suffix.
        name: String,
        /// Closest known name, if any.
        suggestion: Option<String>,
    },
    /// `all` combined with other elements: UCX rejects `all,x` as an invalid
    /// value and silently ignores a later `all` in `x,all` (`UCX_TLS`); in
    /// `UCX_NET_DEVICES` the other entries are pointless.
    AllNotAlone,
    /// Nothing in the list (`""`, `^`, `,`): UCX errors out
    /// ("The TLs list is empty") for `UCX_TLS`, and uses no network device for
    /// `UCX_NET_DEVICES`.
    Empty,
    /// The same element twice (harmless in `UCX_TLS`; UCX warns
    /// `device '%s' is specified multiple times` for devices).
    Duplicate {
        /// The repeated element.
        name: String,
    },
    /// More elements than UCX handles: 128 for `UCX_TLS` (the rest is
    /// dropped), 64 for `UCX_NET_DEVICES` (UCX aborts on an assertion).
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// `^` in `UCX_NET_DEVICES`: there is no negation; the `^` becomes part of
    /// a device name that does not exist.
    CaretInNetDevices,
    /// `UCX_NET_DEVICES` port that is not a number ≥ 1 (`mlx5_0:x`).
    BadPort {
        /// The port text as written.
        text: String,
    },
    /// `^all`: UCX drops the negation and enables everything.
    NegatedAll,
    /// The element contains whitespace; UCX does not trim, so it matches nothing.
    Whitespace,
}

impl UcxIssueKind {
    /// Whether the issue means the value does not do what it says (as opposed
    /// to a harmless oddity).
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Duplicate { .. })
    }
}

impl fmt::Display for UcxIssueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTransport { name, suggestion } => {
                write!(f, "unknown UCX transport `{name}`")?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean `{s}`?)")?;
                }
                Ok(())
            }
            Self::AllNotAlone => f.write_str("`all` must be the only element of the list"),
            Self::Empty => f.write_str("the list is empty"),
            Self::Duplicate { name } => write!(f, "`{name}` is specified multiple times"),
            Self::TooMany { limit } => write!(f, "UCX handles at most {limit} elements here"),
            Self::CaretInNetDevices => f.write_str(
                "UCX_NET_DEVICES has no `^` negation; the `^` becomes part of the device name",
            ),
            Self::BadPort { text } => write!(f, "port `{text}` is not a number >= 1"),
            Self::NegatedAll => f.write_str("`^all` is read as `all`: the negation is ignored"),
            Self::Whitespace => {
                f.write_str("element contains whitespace; UCX does not trim, so it matches nothing")
            }
        }
    }
}

/// Splits like `strtok(buf, ",")`: yields `(range, text)` of non-empty
/// elements, ranges relative to `offset`.
fn split_elements(body: &str, offset: usize) -> impl Iterator<Item = (Range<usize>, &str)> {
    let mut start = offset;
    body.split(',').filter_map(move |text| {
        let range = start..start + text.len();
        start = range.end + 1;
        (!text.is_empty()).then_some((range, text))
    })
}

/// Parses `UCX_TLS` the way UCX does and reports what UCX would reject, warn
/// about or silently ignore.
///
/// ```
/// use roce_model::ucx_list::{parse_tls, UcxIssueKind};
///
/// let (tls, issues) = parse_tls("rc,cuda");
/// assert!(issues.is_empty());
/// assert!(tls.contains("rc_mlx5") && tls.contains("cuda_copy"));
/// assert!(tls.contains("ud_mlx5")); // auxiliary, for wire-up
/// assert!(!tls.contains("tcp"));
///
/// let (_, issues) = parse_tls("rc_mlx,tcp");
/// assert_eq!(
///     issues[0].kind,
///     UcxIssueKind::UnknownTransport { name: "rc_mlx".into(), suggestion: Some("rc_mlx5".into()) }
/// );
/// ```
pub fn parse_tls(input: &str) -> (TlsList, Vec<UcxIssue>) {
    let mut issues = Vec::new();
    let negate = input.starts_with('^');
    let offset = usize::from(negate);

    let mut items: Vec<TlsItem> = Vec::new();
    for (range, text) in split_elements(&input[offset..], offset) {
        if items.len() == TLS_MAX_ITEMS {
            issues.push(UcxIssue {
                kind: UcxIssueKind::TooMany {
                    limit: TLS_MAX_ITEMS,
                },
                range: range.start..input.len(),
            });
            break;
        }
        let (literal, rest) = match text.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (name, aux) = match rest.strip_suffix(AUX_SUFFIX) {
            Some(name) => (name, true),
            None => (rest, false),
        };
        items.push(TlsItem {
            name: name.to_owned(),
            aux,
            literal,
            range,
        });
    }

    if items.is_empty() {
        issues.push(UcxIssue {
            kind: UcxIssueKind::Empty,
            range: 0..input.len(),
        });
    }

    for (i, item) in items.iter().enumerate() {
        let range = item.range.clone();
        let spelled = if item.name == ALL {
            // `all:aux` / `\all`: show the whole element, the name alone is fine
            item.to_string()
        } else if item.literal {
            format!("\\{}", item.name)
        } else {
            item.name.clone()
        };

        if item.name.chars().any(char::is_whitespace) {
            issues.push(UcxIssue {
                kind: UcxIssueKind::Whitespace,
                range: range.clone(),
            });
        }

        if item.is_plain_all() {
            if items.len() > 1 {
                issues.push(UcxIssue {
                    kind: UcxIssueKind::AllNotAlone,
                    range: range.clone(),
                });
            }
            if i == 0 && negate {
                issues.push(UcxIssue {
                    kind: UcxIssueKind::NegatedAll,
                    range: 0..range.end,
                });
            }
        } else {
            let known = is_known_transport(&item.name) || item.alias().is_some();
            let trimmed = item.name.trim();
            let known_trimmed =
                is_known_transport(trimmed) || (!item.literal && alias_members(trimmed).is_some());
            if !known && !known_trimmed {
                let suggestion = if item.literal && alias_members(&item.name).is_some() {
                    // `\rc`: the alias exists, but `\` forbids expanding it.
                    Some(item.name.clone())
                } else {
                    suggest_transport(&item.name).map(str::to_owned)
                };
                issues.push(UcxIssue {
                    kind: UcxIssueKind::UnknownTransport {
                        name: spelled,
                        suggestion,
                    },
                    range: range.clone(),
                });
            }
        }

        let seen = items[..i]
            .iter()
            .any(|p| p.name == item.name && p.aux == item.aux && p.literal == item.literal);
        if seen {
            issues.push(UcxIssue {
                kind: UcxIssueKind::Duplicate {
                    name: item.to_string(),
                },
                range,
            });
        }
    }

    (TlsList { negate, items }, issues)
}

/// What `ucp_transports_list_search()` finds for one transport.
#[derive(Default)]
struct Search {
    /// `tl` or `\tl`, or an alias containing `tl` (non-aux).
    primary: bool,
    /// `tl:aux`, or `alias:aux` with `tl` a non-aux member.
    aux_in_main: bool,
    /// an alias listing `tl:aux`.
    aux_in_alias: bool,
}

impl TlsList {
    /// Leading `^`: the list names transports to *disable*.
    pub fn negate(&self) -> bool {
        self.negate
    }

    /// The elements UCX reads (empty elements and those past
    /// [`TLS_MAX_ITEMS`] dropped), in input order.
    pub fn items(&self) -> &[TlsItem] {
        &self.items
    }

    /// Whether the list is UCX's "allow all" mode: first element `all`
    /// (also with `^`, which UCX ignores; `all,x` is rejected by UCX and
    /// treated here as `all`).
    pub fn is_all(&self) -> bool {
        self.items.first().is_some_and(TlsItem::is_plain_all)
    }

    fn search(&self, tl: &str) -> Search {
        let mut s = Search::default();
        let aux_member = format!("{tl}{AUX_SUFFIX}");
        for item in &self.items {
            if item.name == tl {
                if item.aux {
                    s.aux_in_main = true;
                } else {
                    s.primary = true;
                }
            }
            if let Some(members) = item.alias() {
                let plain = members.contains(&tl);
                let as_aux = members.contains(&aux_member.as_str());
                if item.aux {
                    s.aux_in_main |= plain;
                } else {
                    s.primary |= plain;
                    s.aux_in_alias |= as_aux;
                }
            }
        }
        s
    }

    /// `ucp_is_resource_in_transports_list()` for one concrete transport.
    fn role(&self, tl: &str) -> Option<TlsRole> {
        if self.items.is_empty() {
            // UCX refuses an empty list ("The TLs list is empty").
            return None;
        }
        if self.is_all() {
            return Some(TlsRole::Primary);
        }
        let s = self.search(tl);
        if !self.negate {
            if s.primary {
                Some(TlsRole::Primary)
            } else if s.aux_in_main || s.aux_in_alias {
                Some(TlsRole::Aux)
            } else {
                None
            }
        } else if !is_aux_somewhere(tl) {
            (!s.primary).then_some(TlsRole::Primary)
        } else if s.primary && s.aux_in_main {
            // Only `^tl,tl:aux` (or `^alias,alias:aux`) removes an aux transport.
            None
        } else if s.primary {
            Some(TlsRole::Aux)
        } else {
            Some(TlsRole::Primary)
        }
    }

    /// Every known transport the list enables, with its role.
    pub fn roles(&self) -> BTreeMap<&'static str, TlsRole> {
        facts::names()
            .filter_map(|tl| self.role(tl).map(|r| (tl, r)))
            .collect()
    }

    /// The concrete transports enabled (aliases expanded per UCX 1.20,
    /// auxiliaries included, negation honoured); `all` = every known
    /// transport; an empty list enables nothing (UCX fails to start).
    pub fn transports(&self) -> BTreeSet<&'static str> {
        self.roles().into_keys().collect()
    }

    /// The transports enabled only as auxiliaries (wire-up), e.g. `ud_mlx5`
    /// under `UCX_TLS=rc` or `UCX_TLS=^ud`.
    pub fn aux_only(&self) -> BTreeSet<&'static str> {
        self.roles()
            .into_iter()
            .filter_map(|(tl, r)| (r == TlsRole::Aux).then_some(tl))
            .collect()
    }

    /// Whether `transport` is enabled (in any role). For an alias name: whether
    /// every non-aux member is enabled. Unknown names are never enabled.
    pub fn contains(&self, transport: &str) -> bool {
        if is_known_transport(transport) {
            return self.role(transport).is_some();
        }
        match alias_members(transport) {
            Some(members) => members
                .iter()
                .filter(|m| !m.ends_with(AUX_SUFFIX))
                .all(|m| self.role(m).is_some()),
            None => false,
        }
    }
}

impl Default for TlsList {
    /// UCX's default, `all`.
    fn default() -> Self {
        Self {
            negate: false,
            items: vec![TlsItem {
                name: ALL.to_owned(),
                aux: false,
                literal: false,
                range: 0..ALL.len(),
            }],
        }
    }
}

impl fmt::Display for TlsItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.literal {
            f.write_str("\\")?;
        }
        f.write_str(&self.name)?;
        if self.aux {
            f.write_str(AUX_SUFFIX)?;
        }
        Ok(())
    }
}

impl fmt::Display for TlsList {
    /// Canonical form: `[^]item[,item...]` without empty elements or exact
    /// duplicates.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negate {
            f.write_str("^")?;
        }
        let mut written: Vec<String> = Vec::new();
        for item in &self.items {
            let text = item.to_string();
            if written.contains(&text) {
                continue;
            }
            if written.is_empty() && !self.negate && text.starts_with('^') {
                // keep a literal leading `^` from being read as negation
                f.write_str(",")?;
            }
            if !written.is_empty() {
                f.write_str(",")?;
            }
            f.write_str(&text)?;
            written.push(text);
        }
        Ok(())
    }
}

/// A parsed `UCX_NET_DEVICES` value: `all` (the default, every network
/// device) or exactly the devices listed (maybe none: no network device at
/// all). Private: only [`parse_net_devices`] (or the default) makes one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDevices {
    /// `None`: `all`.
    list: Option<Vec<NetDevice>>,
}

/// One `UCX_NET_DEVICES` entry, as [`parse_net_devices`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetDevice {
    /// Device name; the whole entry when the port text is bad.
    name: String,
    /// The port, when the entry has a good one.
    port: Option<u32>,
    /// Byte range of the entry in the input.
    range: Range<usize>,
}

impl NetDevice {
    /// Device name (`mlx5_0`, `eth0`). When the port text is bad, the whole
    /// entry as written (UCX compares the full string). Not an
    /// [`IfName`](crate::names::IfName): RDMA entries name an RDMA device, and
    /// the parser keeps whatever UCX would compare, valid or not.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `mlx5_0:1` → `Some(1)`; `eth0` → `None`.
    pub fn port(&self) -> Option<u32> {
        self.port
    }

    /// Byte range of the entry in the input.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

/// Parses `UCX_NET_DEVICES`: exact names, no `^`, no prefix matching, at most
/// [`NET_DEVICES_MAX`] entries, duplicates warned.
///
/// ```
/// use roce_model::ucx_list::{parse_net_devices, NetDevices};
///
/// let (devs, issues) = parse_net_devices("mlx5_0:1,eth0");
/// assert!(issues.is_empty());
/// let list = devs.devices().unwrap();
/// assert_eq!((list[0].name(), list[0].port()), ("mlx5_0", Some(1)));
/// assert!(devs.selects("mlx5_0:1") && !devs.selects("mlx5_0:2"));
/// ```
pub fn parse_net_devices(input: &str) -> (NetDevices, Vec<UcxIssue>) {
    let mut issues = Vec::new();
    let mut devices: Vec<NetDevice> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut all_at: Option<Range<usize>> = None;
    let mut count = 0usize;

    for (range, text) in split_elements(input, 0) {
        if count == TLS_MAX_ITEMS {
            // UCS_CONFIG_ARRAY_MAX: the parser stops reading here.
            break;
        }
        count += 1;
        if count == NET_DEVICES_MAX + 1 {
            issues.push(UcxIssue {
                kind: UcxIssueKind::TooMany {
                    limit: NET_DEVICES_MAX,
                },
                range: range.start..input.len(),
            });
        }
        if texts.contains(&text) {
            issues.push(UcxIssue {
                kind: UcxIssueKind::Duplicate {
                    name: text.to_owned(),
                },
                range: range.clone(),
            });
        }
        texts.push(text);
        if text == ALL {
            all_at.get_or_insert(range);
            continue;
        }
        if text.starts_with('^') {
            issues.push(UcxIssue {
                kind: UcxIssueKind::CaretInNetDevices,
                range: range.start..range.start + 1,
            });
        }
        if text.chars().any(char::is_whitespace) {
            issues.push(UcxIssue {
                kind: UcxIssueKind::Whitespace,
                range: range.clone(),
            });
        }
        let (name, port) = match text.split_once(':') {
            None => (text, None),
            Some((name, port_text)) => match parse_port(port_text) {
                Some(port) => (name, Some(port)),
                None => {
                    let start = range.start + name.len() + 1;
                    issues.push(UcxIssue {
                        kind: UcxIssueKind::BadPort {
                            text: port_text.to_owned(),
                        },
                        range: start..range.end,
                    });
                    (text, None)
                }
            },
        };
        devices.push(NetDevice {
            name: name.to_owned(),
            port,
            range,
        });
    }

    if let Some(range) = all_at {
        if count > 1 {
            issues.push(UcxIssue {
                kind: UcxIssueKind::AllNotAlone,
                range,
            });
        }
        return (NetDevices::default(), issues);
    }
    if count == 0 {
        issues.push(UcxIssue {
            kind: UcxIssueKind::Empty,
            range: 0..input.len(),
        });
    }
    (
        NetDevices {
            list: Some(devices),
        },
        issues,
    )
}

fn parse_port(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().filter(|p| *p >= 1)
}

impl NetDevices {
    /// Whether the value is `all` (UCX's default: every network device).
    pub fn is_all(&self) -> bool {
        self.list.is_none()
    }

    /// The devices listed, in input order (duplicates kept); `None` for `all`.
    pub fn devices(&self) -> Option<&[NetDevice]> {
        self.list.as_deref()
    }

    /// Whether UCX would use the resource named `resource` (`mlx5_0:1`,
    /// `eth0`): exact, case-sensitive comparison, or `all`.
    pub fn selects(&self, resource: &str) -> bool {
        match &self.list {
            None => true,
            Some(devices) => devices.iter().any(|d| d.to_string() == resource),
        }
    }
}

impl fmt::Display for NetDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl fmt::Display for NetDevices {
    /// Canonical form: `all`, or the entries joined by `,` without duplicates.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.list {
            None => f.write_str(ALL),
            Some(devices) => {
                let mut written: Vec<String> = Vec::new();
                for d in devices {
                    let text = d.to_string();
                    if written.contains(&text) {
                        continue;
                    }
                    if !written.is_empty() {
                        f.write_str(",")?;
                    }
                    f.write_str(&text)?;
                    written.push(text);
                }
                Ok(())
            }
        }
    }
}

/// A profile's `ucx tls`: the text as written, with its origin, and what
/// [`parse_tls`] made of it, set together so they never disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct UcxTls {
    text: Spanned<String>,
    list: TlsList,
}

impl UcxTls {
    /// Parse `text` as `UCX_TLS`; the issues are [`parse_tls`]'s, with ranges into `text`.
    pub fn parse(text: Spanned<String>) -> (Self, Vec<UcxIssue>) {
        let (list, issues) = parse_tls(&text.value);
        (Self { text, list }, issues)
    }

    /// The text as written (what goes into `UCX_TLS`).
    pub fn text(&self) -> &Spanned<String> {
        &self.text
    }

    /// The parsed list.
    pub fn list(&self) -> &TlsList {
        &self.list
    }
}

/// A profile's `ucx net-devices`: the text as written, with its origin, and
/// what [`parse_net_devices`] made of it, set together so they never disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct UcxNetDevices {
    text: Spanned<String>,
    devices: NetDevices,
}

impl UcxNetDevices {
    /// Parse `text` as `UCX_NET_DEVICES`; the issues are
    /// [`parse_net_devices`]'s, with ranges into `text`.
    pub fn parse(text: Spanned<String>) -> (Self, Vec<UcxIssue>) {
        let (devices, issues) = parse_net_devices(&text.value);
        (Self { text, devices }, issues)
    }

    /// The text as written (what goes into `UCX_NET_DEVICES`).
    pub fn text(&self) -> &Spanned<String> {
        &self.text
    }

    /// The parsed value.
    pub fn devices(&self) -> &NetDevices {
        &self.devices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(issues: &[UcxIssue]) -> Vec<UcxIssueKind> {
        issues.iter().map(|i| i.kind.clone()).collect()
    }

    fn set(names: &[&'static str]) -> BTreeSet<&'static str> {
        names.iter().copied().collect()
    }

    fn tls(input: &str) -> TlsList {
        let (list, issues) = parse_tls(input);
        assert!(issues.is_empty(), "{input}: {issues:?}");
        list
    }

    fn unknown(name: &str, suggestion: Option<&str>) -> UcxIssueKind {
        UcxIssueKind::UnknownTransport {
            name: name.into(),
            suggestion: suggestion.map(Into::into),
        }
    }

    // ---- tables -----------------------------------------------------------

    #[test]
    fn alias_members_are_known_transports() {
        for (alias, members) in ALIASES {
            assert!(!is_known_transport(alias), "{alias} shadows a transport");
            for m in *members {
                let tl = m.strip_suffix(AUX_SUFFIX).unwrap_or(m);
                assert!(is_known_transport(tl), "{alias} -> {m}");
            }
        }
    }

    #[test]
    fn aux_set_matches_ucx() {
        assert!(is_aux_somewhere("ud_mlx5"));
        assert!(is_aux_somewhere("ud_verbs"));
        assert!(is_aux_somewhere("ugni_udt"));
        assert!(!is_aux_somewhere("rc_mlx5"));
        assert!(!is_aux_somewhere("tcp"));
    }

    // ---- UCX_TLS: allow lists and alias expansion -----------------------

    #[test]
    fn default_and_all_enable_everything() {
        let all = tls("all");
        assert!(all.is_all());
        assert_eq!(all.transports(), facts::names().collect());
        assert_eq!(TlsList::default().transports(), all.transports());
        assert_eq!(TlsList::default().to_string(), "all");
        assert!(all.aux_only().is_empty());
    }

    #[test]
    fn plain_transports() {
        let list = tls("tcp,cuda_copy");
        assert_eq!(list.transports(), set(&["tcp", "cuda_copy"]));
        assert!(list.contains("tcp"));
        assert!(!list.contains("rc_mlx5"));
    }

    #[test]
    fn alias_expansion_v1_20() {
        let cases: &[(&str, &[&'static str])] = &[
            ("sm", &["posix", "sysv", "xpmem", "knem", "cma"]),
            ("shm", &["posix", "sysv", "xpmem", "knem", "cma"]),
            ("mm", &["posix", "sysv", "xpmem"]),
            (
                "ib",
                &[
                    "rc_verbs", "ud_verbs", "rc_mlx5", "ud_mlx5", "dc_mlx5", "gga_mlx5", "srd",
                ],
            ),
            ("rc", &["rc_mlx5", "rc_verbs", "ud_mlx5", "ud_verbs"]),
            ("rc_x", &["rc_mlx5", "ud_mlx5"]),
            ("rc_v", &["rc_verbs", "ud_verbs"]),
            ("ud", &["ud_mlx5", "ud_verbs"]),
            ("ud_x", &["ud_mlx5"]),
            ("ud_v", &["ud_verbs"]),
            ("dc", &["dc_mlx5", "ud_mlx5"]),
            ("dc_x", &["dc_mlx5", "ud_mlx5"]),
            ("cuda", &["cuda_copy", "cuda_ipc", "gdr_copy"]),
            ("rocm", &["rocm_copy", "rocm_ipc", "rocm_gdr"]),
            ("ze", &["ze_copy", "ze_ipc", "ze_gdr"]),
            ("ugni", &["ugni_smsg", "ugni_udt", "ugni_rdma"]),
        ];
        for (alias, expected) in cases {
            assert_eq!(tls(alias).transports(), set(expected), "{alias}");
        }
    }

    #[test]
    fn rc_brings_ud_only_as_aux() {
        let list = tls("rc,cuda");
        assert_eq!(list.aux_only(), set(&["ud_mlx5", "ud_verbs"]));
        assert_eq!(list.roles()["rc_mlx5"], TlsRole::Primary);
        assert_eq!(list.roles()["ud_mlx5"], TlsRole::Aux);
        assert!(list.contains("ud_mlx5"));
        // explicit ud makes it primary
        let list = tls("rc,ud");
        assert!(list.aux_only().is_empty());
    }

    #[test]
    fn explicit_aux_suffix() {
        let (list, issues) = parse_tls("rc_mlx5,ud_mlx5:aux");
        assert!(issues.is_empty());
        assert!(list.items[1].aux);
        assert_eq!(list.items[1].name, "ud_mlx5");
        assert_eq!(list.aux_only(), set(&["ud_mlx5"]));
        assert_eq!(list.transports(), set(&["rc_mlx5", "ud_mlx5"]));
        // alias:aux turns every member into aux
        let list = tls("tcp,ud:aux");
        assert_eq!(list.aux_only(), set(&["ud_mlx5", "ud_verbs"]));
    }

    #[test]
    fn backslash_forces_literal_transport() {
        let (list, issues) = parse_tls("\\rc_mlx5");
        assert!(issues.is_empty());
        assert!(list.items[0].literal);
        assert_eq!(list.items[0].name, "rc_mlx5");
        assert_eq!(list.transports(), set(&["rc_mlx5"]));
        // an alias behind `\` is not expanded: nothing named "rc" exists
        let (list, issues) = parse_tls("\\rc,tcp");
        assert_eq!(kinds(&issues), [unknown("\\rc", Some("rc"))]);
        assert_eq!(issues[0].range, 0..3);
        assert_eq!(list.transports(), set(&["tcp"]));
        // literal with aux
        let list = tls("rc_mlx5,\\ud_mlx5:aux");
        assert_eq!(list.aux_only(), set(&["ud_mlx5"]));
    }

    #[test]
    fn names_are_case_sensitive() {
        let (list, issues) = parse_tls("RC,tcp");
        assert_eq!(kinds(&issues), [unknown("RC", Some("rc"))]);
        assert_eq!(list.transports(), set(&["tcp"]));
        let (_, issues) = parse_tls("TCP");
        assert_eq!(kinds(&issues), [unknown("TCP", Some("tcp"))]);
    }

    #[test]
    fn unknown_transports_get_suggestions() {
        let (_, issues) = parse_tls("rc_mlx");
        assert_eq!(kinds(&issues), [unknown("rc_mlx", Some("rc_mlx5"))]);
        let (_, issues) = parse_tls("cuda-copy");
        assert_eq!(kinds(&issues), [unknown("cuda-copy", Some("cuda_copy"))]);
        let (_, issues) = parse_tls("tpc");
        assert_eq!(kinds(&issues), [unknown("tpc", Some("tcp"))]);
        let (_, issues) = parse_tls("gdrcopy:aux");
        assert_eq!(kinds(&issues), [unknown("gdrcopy", Some("gdr_copy"))]);
        let (_, issues) = parse_tls("banana");
        assert_eq!(kinds(&issues), [unknown("banana", None)]);
    }

    #[test]
    fn suggestion_rules() {
        assert_eq!(suggest_transport("rc_mlx"), Some("rc_mlx5"));
        assert_eq!(suggest_transport("cuda-copy"), Some("cuda_copy"));
        assert_eq!(suggest_transport("UD_MLX5"), Some("ud_mlx5"));
        assert_eq!(suggest_transport("rcmlx5"), Some("rc_mlx5"));
        assert_eq!(suggest_transport(" tcp "), Some("tcp"));
        assert_eq!(suggest_transport("^ud"), Some("ud"));
        assert_eq!(suggest_transport("ALL"), Some("all"));
        assert_eq!(suggest_transport("rocm_cpy"), Some("rocm_copy"));
        assert_eq!(suggest_transport("zz"), None);
        assert_eq!(suggest_transport("gpu"), None);
        assert_eq!(suggest_transport("nvlink"), None);
    }

    #[test]
    fn unknown_suffix_is_part_of_the_name() {
        let (list, issues) = parse_tls("rc:foo,tcp");
        assert!(!list.items[0].aux);
        assert_eq!(list.items[0].name, "rc:foo");
        assert!(
            matches!(&issues[0].kind, UcxIssueKind::UnknownTransport { name, .. } if name == "rc:foo")
        );
        assert_eq!(list.transports(), set(&["tcp"]));
    }

    // ---- UCX_TLS: deny lists ---------------------------------------------

    #[test]
    fn caret_negates_whole_list() {
        let list = tls("^tcp,cuda_ipc");
        assert!(list.negate);
        let expected: BTreeSet<_> = facts::names()
            .filter(|t| !["tcp", "cuda_ipc"].contains(t))
            .collect();
        assert_eq!(list.transports(), expected);
    }

    #[test]
    fn deny_ud_still_keeps_ud_as_aux() {
        // FAQ: `^ud` keeps UD for wire-up …
        let list = tls("^ud");
        assert!(list.contains("ud_mlx5"));
        assert!(list.contains("ud_verbs"));
        assert_eq!(list.aux_only(), set(&["ud_mlx5", "ud_verbs"]));
        assert_eq!(list.roles()["rc_mlx5"], TlsRole::Primary);
        // … while `^ud,ud:aux` removes it completely.
        let list = tls("^ud,ud:aux");
        assert!(!list.contains("ud_mlx5"));
        assert!(!list.contains("ud_verbs"));
        assert!(list.contains("rc_mlx5"));
        assert!(list.aux_only().is_empty());
    }

    #[test]
    fn deny_concrete_aux_transport() {
        let list = tls("^ud_mlx5");
        assert_eq!(list.roles()["ud_mlx5"], TlsRole::Aux);
        assert_eq!(list.roles()["ud_verbs"], TlsRole::Primary);
        let list = tls("^ud_mlx5,ud_mlx5:aux");
        assert!(!list.contains("ud_mlx5"));
    }

    #[test]
    fn deny_rc_keeps_ud() {
        let list = tls("^rc");
        assert!(!list.contains("rc_mlx5"));
        assert!(!list.contains("rc_verbs"));
        assert_eq!(list.roles()["ud_mlx5"], TlsRole::Primary);
        assert!(list.contains("tcp"));
    }

    #[test]
    fn deny_aux_suffix_alone_does_not_disable_non_aux_transport() {
        let list = tls("^tcp:aux");
        assert!(list.contains("tcp"));
    }

    #[test]
    fn deny_ib_and_cuda() {
        let list = tls("^ib,cuda");
        for t in [
            "rc_mlx5",
            "rc_verbs",
            "dc_mlx5",
            "gga_mlx5",
            "srd",
            "cuda_copy",
            "gdr_copy",
        ] {
            assert!(!list.contains(t), "{t}");
        }
        assert_eq!(list.aux_only(), set(&["ud_mlx5", "ud_verbs"]));
        assert!(list.contains("tcp") && list.contains("posix") && list.contains("rc_gda"));
    }

    // ---- UCX_TLS: `all`, empty, limits, duplicates ------------------------

    #[test]
    fn all_must_be_alone() {
        let (list, issues) = parse_tls("all,tcp");
        assert_eq!(kinds(&issues), [UcxIssueKind::AllNotAlone]);
        assert_eq!(issues[0].range, 0..3);
        assert!(list.is_all());
        // a later `all` is just an unknown name UCX ignores: only tcp
        let (list, issues) = parse_tls("tcp,all");
        assert_eq!(kinds(&issues), [UcxIssueKind::AllNotAlone]);
        assert_eq!(issues[0].range, 4..7);
        assert!(!list.is_all());
        assert_eq!(list.transports(), set(&["tcp"]));
    }

    #[test]
    fn negated_all_is_all() {
        let (list, issues) = parse_tls("^all");
        assert_eq!(kinds(&issues), [UcxIssueKind::NegatedAll]);
        assert_eq!(issues[0].range, 0..4);
        assert_eq!(list.transports().len(), facts::TRANSPORTS.len());
    }

    #[test]
    fn all_is_case_sensitive_and_plain() {
        let (list, issues) = parse_tls("ALL");
        assert_eq!(kinds(&issues), [unknown("ALL", Some("all"))]);
        assert!(list.transports().is_empty());
        let (_, issues) = parse_tls("all:aux");
        assert_eq!(kinds(&issues), [unknown("all:aux", Some("all"))]);
    }

    #[test]
    fn empty_lists() {
        for input in ["", "^", ",", "^,,"] {
            let (list, issues) = parse_tls(input);
            assert_eq!(kinds(&issues), [UcxIssueKind::Empty], "{input}");
            assert_eq!(issues[0].range, 0..input.len());
            assert!(list.transports().is_empty(), "{input}");
        }
    }

    #[test]
    fn empty_elements_skipped() {
        let (list, issues) = parse_tls(",rc,,cuda_copy,");
        assert!(issues.is_empty());
        assert_eq!(list.items.len(), 2);
        assert_eq!(list.items[0].range, 1..3);
        assert_eq!(list.items[1].range, 5..14);
    }

    #[test]
    fn whitespace_is_not_trimmed() {
        let (list, issues) = parse_tls("rc, cuda");
        assert_eq!(kinds(&issues), [UcxIssueKind::Whitespace]);
        assert_eq!(issues[0].range, 3..8);
        assert!(!list.contains("cuda_copy"));
        // unknown even after trimming: both issues
        let (_, issues) = parse_tls(" bogus");
        assert_eq!(
            kinds(&issues),
            [UcxIssueKind::Whitespace, unknown(" bogus", None)]
        );
    }

    #[test]
    fn caret_later_is_literal() {
        let (list, issues) = parse_tls("tcp,^ud");
        assert!(!list.negate);
        assert_eq!(kinds(&issues), [unknown("^ud", Some("ud"))]);
        assert_eq!(list.transports(), set(&["tcp"]));
    }

    #[test]
    fn duplicates_warned() {
        let (list, issues) = parse_tls("rc,tcp,rc");
        assert_eq!(
            kinds(&issues),
            [UcxIssueKind::Duplicate { name: "rc".into() }]
        );
        assert_eq!(issues[0].range, 7..9);
        assert!(!issues[0].kind.is_error());
        assert_eq!(list.to_string(), "rc,tcp");
        // different spellings are not duplicates
        let (_, issues) = parse_tls("ud_mlx5,ud_mlx5:aux,\\ud_mlx5");
        assert!(issues.is_empty());
    }

    #[test]
    fn too_many_elements() {
        let input = vec!["tcp"; 130].join(",");
        let (list, issues) = parse_tls(&input);
        assert_eq!(list.items.len(), TLS_MAX_ITEMS);
        let too_many: Vec<_> = issues
            .iter()
            .filter(|i| i.kind == UcxIssueKind::TooMany { limit: 128 })
            .collect();
        assert_eq!(too_many.len(), 1);
        assert_eq!(too_many[0].range, 128 * 4..input.len());
    }

    // ---- UCX_TLS: Display ----------------------------------------------

    #[test]
    fn tls_display_canonical() {
        for (input, canon) in [
            ("rc,cuda", "rc,cuda"),
            (",rc,,cuda,", "rc,cuda"),
            ("^ud,ud:aux", "^ud,ud:aux"),
            ("\\rc_mlx5,tcp", "\\rc_mlx5,tcp"),
            ("tcp,tcp", "tcp"),
            ("^", "^"),
            ("", ""),
            (",^ud", ",^ud"),
        ] {
            let (list, _) = parse_tls(input);
            assert_eq!(list.to_string(), canon, "{input}");
            let (again, _) = parse_tls(&list.to_string());
            assert_eq!(again.negate, list.negate, "{input}");
            assert_eq!(again.transports(), list.transports(), "{input}");
        }
    }

    // ---- contains() ----------------------------------------------------------

    #[test]
    fn contains_alias_requires_all_primary_members() {
        let list = tls("rc,cuda_copy");
        assert!(list.contains("rc"));
        assert!(!list.contains("cuda"));
        assert!(tls("rc,cuda").contains("cuda"));
        assert!(!list.contains("nonsense"));
        assert!(tls("all").contains("ib"));
    }

    // ---- UCX_NET_DEVICES -------------------------------------------------------

    fn devs(input: &str) -> Vec<NetDevice> {
        match parse_net_devices(input).0.list {
            Some(list) => list,
            None => panic!("{input}: unexpected all"),
        }
    }

    #[test]
    fn net_devices_all_and_default() {
        let (d, issues) = parse_net_devices("all");
        assert!(d.is_all() && d.devices().is_none());
        assert!(issues.is_empty());
        assert!(NetDevices::default().is_all());
        assert!(d.selects("anything:1"));
        assert_eq!(d.to_string(), "all");
    }

    #[test]
    fn net_devices_ports() {
        let list = devs("ibp0p0:1,mlx5_bond_0:1,eth0");
        assert_eq!(list[0].name, "ibp0p0");
        assert_eq!(list[0].port, Some(1));
        assert_eq!(list[1].name, "mlx5_bond_0");
        assert_eq!(list[1].port, Some(1));
        assert_eq!(list[2].name, "eth0");
        assert_eq!(list[2].port, None);
        assert_eq!(list[2].range, 23..27);
    }

    #[test]
    fn net_devices_exact_no_prefix() {
        let (d, _) = parse_net_devices("mlx5_1:1");
        assert!(d.selects("mlx5_1:1"));
        assert!(!d.selects("mlx5_10:1"), "no prefix matching");
        assert!(!d.selects("mlx5_1:2"));
        assert!(!d.selects("mlx5_1"), "port is part of the name");
        assert!(!d.selects("MLX5_1:1"), "case-sensitive");
    }

    #[test]
    fn net_devices_no_caret() {
        let (d, issues) = parse_net_devices("^mlx5_0:1");
        assert_eq!(kinds(&issues), [UcxIssueKind::CaretInNetDevices]);
        assert_eq!(issues[0].range, 0..1);
        let list = d.devices().unwrap();
        assert_eq!(list[0].name, "^mlx5_0");
        assert!(!d.selects("mlx5_0:1"));
        assert!(!d.selects("mlx5_1:1"), "not a deny list either");
    }

    #[test]
    fn net_devices_bad_port() {
        for (input, text) in [
            ("mlx5_0:x", "x"),
            ("mlx5_0:0", "0"),
            ("mlx5_0:", ""),
            ("mlx5_0:1:2", "1:2"),
        ] {
            let (d, issues) = parse_net_devices(input);
            assert_eq!(
                kinds(&issues),
                [UcxIssueKind::BadPort { text: text.into() }],
                "{input}"
            );
            assert_eq!(&input[issues[0].range.clone()], text);
            assert_eq!(d.to_string(), input, "kept verbatim");
        }
    }

    #[test]
    fn net_devices_duplicates_warned() {
        let (d, issues) = parse_net_devices("mlx5_0:1,mlx5_1:1,mlx5_0:1");
        assert_eq!(
            kinds(&issues),
            [UcxIssueKind::Duplicate {
                name: "mlx5_0:1".into()
            }]
        );
        assert_eq!(issues[0].range, 18..26);
        assert_eq!(d.to_string(), "mlx5_0:1,mlx5_1:1");
    }

    #[test]
    fn net_devices_limit_64() {
        let input = (0..65)
            .map(|i| format!("mlx5_{i}:1"))
            .collect::<Vec<_>>()
            .join(",");
        let (d, issues) = parse_net_devices(&input);
        assert_eq!(kinds(&issues), [UcxIssueKind::TooMany { limit: 64 }]);
        assert!(input[issues[0].range.clone()].starts_with("mlx5_64:1"));
        let list = d.devices().unwrap();
        assert_eq!(list.len(), 65);
        let ok = (0..64)
            .map(|i| format!("mlx5_{i}:1"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(parse_net_devices(&ok).1.is_empty());
    }

    #[test]
    fn net_devices_all_not_alone() {
        let (d, issues) = parse_net_devices("mlx5_0:1,all");
        assert!(d.is_all());
        assert_eq!(kinds(&issues), [UcxIssueKind::AllNotAlone]);
        assert_eq!(issues[0].range, 9..12);
    }

    #[test]
    fn net_devices_empty() {
        for input in ["", ",,"] {
            let (d, issues) = parse_net_devices(input);
            assert_eq!(d.devices(), Some(&[][..]));
            assert_eq!(kinds(&issues), [UcxIssueKind::Empty]);
            assert!(!d.selects("mlx5_0:1"));
        }
    }

    #[test]
    fn net_devices_whitespace() {
        let (d, issues) = parse_net_devices("mlx5_0:1, eth0");
        assert_eq!(kinds(&issues), [UcxIssueKind::Whitespace]);
        assert!(!d.selects("eth0"));
    }

    #[test]
    fn net_devices_display_round_trip() {
        for input in ["mlx5_0:1,eth0", ",mlx5_0:1,,", "all"] {
            let (d, _) = parse_net_devices(input);
            let (again, _) = parse_net_devices(&d.to_string());
            assert_eq!(d.to_string(), again.to_string());
        }
        assert_eq!(parse_net_devices(",mlx5_0:1,,").0.to_string(), "mlx5_0:1");
    }

    // ---- messages ----------------------------------------------------------

    #[test]
    fn issue_messages() {
        assert_eq!(
            unknown("rc_mlx", Some("rc_mlx5")).to_string(),
            "unknown UCX transport `rc_mlx` (did you mean `rc_mlx5`?)"
        );
        assert_eq!(
            unknown("zz", None).to_string(),
            "unknown UCX transport `zz`"
        );
        assert!(
            UcxIssueKind::TooMany { limit: 64 }
                .to_string()
                .contains("64")
        );
        assert!(UcxIssueKind::AllNotAlone.is_error());
        assert!(UcxIssueKind::CaretInNetDevices.is_error());
    }
}
