//! The first reader tried: the block YAML that manifests are written in, read byte by byte straight into
//! [`Node`] trees.
//!
//! Manifests use a small part of YAML: block mappings and sequences indented with spaces, plain and quoted
//! scalars, literal and folded blocks, short flow collections, comments, `---`. This reader reads that part
//! in one pass with no token queue (granit-parser's scanner alone costs several times what it does) and
//! gives the trees [`super::events`] builds from granit-parser's events, spans included. Anything else
//! makes it give up (`None`) and the file goes to `events` (and from there to serde-saphyr) as before:
//! tabs outside a literal block scalar's lines, carriage returns, control and special Unicode characters,
//! anchors and aliases other than on a block collection's value or item, tags, directives, `...`, complex
//! and multi-line keys, escaped line breaks, empty flow entries, the rarer escapes, what
//! serde-saphyr types itself (floats, odd integers, merge keys), duplicate keys, input near the budgets, and
//! anything malformed (so errors keep serde-saphyr's words). The one error it gives itself is a plain key
//! given twice in a block mapping, where serde-saphyr would report it, in its words ([`Reader::repeat`]).
//! It may be faster, never different: its tests compare both readers (and a duplicate key's error with
//! serde-saphyr's) on every YAML file in the repository and on generated documents, and the
//! `manifest_readers` fuzz target on whatever a fuzzer makes.

use std::borrow::Cow;
use std::ops::Range;

use crate::Problem;
use crate::source::{Origin, SourceId, Spanned};
use crate::tree::{Entry, Node, Scalar, Value};
use memchr::{memchr, memchr_iter, memchr2_iter, memchr3};

use super::events::{self, MAX_TEXT};

/// Longest key read here: granit-parser looks at most 1,024 characters ahead for a key's `:`.
const MAX_KEY: usize = 512;
/// Nodes and documents read here: well inside serde-saphyr's budgets (250,000 nodes, 1,000,000 events,
/// 1,024 documents), so that a file near them is read, or refused, by the readers that apply them.
const MAX_NODES: usize = 100_000;
const MAX_DOCS: usize = 512;
/// Entries and items the reader's stacks hold before they grow: a pod's deepest open collections.
const STACK: usize = 64;

/// The documents of `text` as [`super::parse`] reads them, or serde-saphyr's error for a key given twice
/// (see [`Reader::duplicate`]), or `None` when the other readers must decide.
pub(super) fn read(
    text: &str,
    source: SourceId,
    max_depth: usize,
) -> Option<Result<Vec<Node>, Box<Problem>>> {
    if text.len() > MAX_TEXT || !plain_text(text) {
        return None;
    }
    let mut reader = Reader {
        text,
        b: text.as_bytes(),
        pos: 0,
        source,
        // As `events` counts it: collections open at once.
        depth: max_depth.saturating_sub(2),
        nodes: 0,
        duplicate: None,
        entries: Vec::with_capacity(STACK),
        items: Vec::with_capacity(STACK),
        anchors: Vec::new(),
        literal: Vec::new(),
    };
    // Each stack starts with one placeholder, so no collection's entries start at 0: `split_off(0)` would
    // hand over the stack's own buffer, spare capacity and all.
    let nowhere = Origin::new(source, 0..0);
    reader.entries.push(Entry {
        key: Spanned::new(String::new(), nowhere),
        node: Node::new(Value::Scalar(Scalar::Null), nowhere),
    });
    reader
        .items
        .push(Node::new(Value::Scalar(Scalar::Null), nowhere));
    match reader.stream() {
        Some(docs) if reader.tabs_in_literals(text.len()) => Some(Ok(docs)),
        Some(_) => None,
        None => reader.duplicate.map(Err),
    }
}

/// Text this reader reads: line feeds, tabs and printable characters. Carriage returns and control
/// characters change how YAML reads line breaks (or are errors), and NEL, the line and paragraph
/// separators, the byte-order mark and the non-characters are special to YAML parsers. Tabs change how
/// it reads indentation and separation: they are read inside a literal block scalar's lines only
/// ([`Reader::tabs_in_literals`]), where they are content (a shell script's indentation).
fn plain_text(text: &str) -> bool {
    // Branch-free per chunk, so the common all-ASCII file is checked at a few bytes per cycle.
    let simple = |c: u8| (c == b'\n') | (c == b'\t') | (c.wrapping_sub(b' ') < 0x5f);
    if text
        .as_bytes()
        .chunks(64)
        .all(|chunk| chunk.iter().fold(true, |ok, &c| ok & simple(c)))
    {
        return true;
    }
    text.chars().all(|c| {
        matches!(c, '\n' | '\t' | ' '..='~' | '\u{a1}'..='\u{2027}' | '\u{202a}'..='\u{fefe}'
            | '\u{ff00}'..='\u{fffd}' | '\u{10000}'..)
    })
}

/// How many nodes `node` holds (keys counted, as the reader counts them) and how many collections deep
/// it goes.
fn extent(node: &Node) -> (usize, usize) {
    match &node.value {
        Value::Scalar(_) => (1, 0),
        Value::Seq(items) => items.iter().fold((1, 1), |(n, d), i| {
            let (m, e) = extent(i);
            (n + m, d.max(e + 1))
        }),
        Value::Map(entries) => entries.iter().fold((1, 1), |(n, d), e| {
            let (m, f) = extent(&e.node);
            (n + m + 1, d.max(f + 1))
        }),
    }
}

/// `node` replayed at an alias's place `at`: every node and key there, as serde-saphyr places them.
fn replayed(text: &str, node: &Node, at: Origin) -> Node {
    match &node.value {
        Value::Scalar(s) => events::scalar_node(text, at, s.clone()),
        Value::Seq(items) => Node::new(
            Value::Seq(items.iter().map(|i| replayed(text, i, at)).collect()),
            at,
        ),
        Value::Map(entries) => Node::new(
            Value::Map(
                entries
                    .iter()
                    .map(|e| {
                        events::entry(
                            Spanned::new(e.key.value.clone(), at),
                            replayed(text, &e.node, at),
                        )
                    })
                    .collect(),
            ),
            at,
        ),
    }
}

/// A space, a line break, or the end of the text (which [`Reader::at`] reads as NUL: `plain_text` has none).
fn sep(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | 0)
}

/// Can a block plain scalar not start with `c`, then `next`? YAML's indicators, and what is left to the
/// full parser: anchors, aliases, tags, directives, reserved characters, complex keys.
fn not_plain(c: u8, next: u8) -> bool {
    match c {
        b'-' | b'?' | b':' => sep(next),
        b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b',' | b'[' | b']' | b'{' | b'}' | b'#'
        | b'|' | b'>' | b'"' | b'\'' => true,
        _ => false,
    }
}

/// [`not_plain`] inside a flow collection, where `-`, `?` and `:` before a flow indicator are errors.
fn not_plain_flow(c: u8, next: u8) -> bool {
    not_plain(c, next)
        || matches!(c, b'-' | b'?' | b':') && matches!(next, b',' | b'[' | b']' | b'{' | b'}')
}

struct Reader<'t> {
    text: &'t str,
    b: &'t [u8],
    /// Between nodes: the start of a line.
    pos: usize,
    source: SourceId,
    /// How many more collections may be open at once.
    depth: usize,
    nodes: usize,
    /// The first key given twice, as serde-saphyr reports it, where the reader stopped at it.
    duplicate: Option<Box<Problem>>,
    /// The entries of the mappings being read, innermost last, and the items of the sequences: each
    /// collection takes its own off the top when it ends (`split_off`: one allocation of their number
    /// and one copy; growing each collection's own vector entry by entry reallocated it several times).
    /// A reader that gives up drops both.
    entries: Vec<Entry>,
    items: Vec<Node>,
    /// The current document's anchored mapping values, by name (a name defined twice is left to
    /// serde-saphyr).
    anchors: Vec<(&'t str, Node)>,
    /// The content of the literal block scalars read, in order: the one place a tab is read here.
    literal: Vec<Range<usize>>,
}

impl<'t> Reader<'t> {
    /// Is every tab of the text before `upto` inside a literal block scalar's content? Anywhere else the
    /// other readers decide what it means.
    fn tabs_in_literals(&self, upto: usize) -> bool {
        let mut literal = self.literal.iter().peekable();
        memchr_iter(b'\t', &self.b[..upto]).all(|t| {
            while literal.next_if(|r| r.end <= t).is_some() {}
            literal.peek().is_some_and(|r| r.contains(&t))
        })
    }

    /// The byte at `i`, NUL past the end.
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn spaces(&self, from: usize) -> usize {
        let rest = self.b.get(from..).unwrap_or_default();
        rest.iter().position(|&c| c != b' ').unwrap_or(rest.len())
    }

    /// Where the line `from` is in ends: its line feed, or the end of the text.
    fn line_end(&self, from: usize) -> usize {
        memchr(b'\n', &self.b[from..]).map_or(self.b.len(), |i| from + i)
    }

    /// The start of the line after the one `at` is in (the end of the text after the last).
    fn next_line(&self, at: usize) -> usize {
        (self.line_end(at) + 1).min(self.b.len())
    }

    fn origin(&self, range: Range<usize>) -> Origin {
        Origin::new(self.source, range)
    }

    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    fn open(&mut self) -> Option<()> {
        self.count()?;
        self.depth = self.depth.checked_sub(1)?;
        Some(())
    }

    fn close(&mut self) {
        self.depth += 1;
    }

    /// Skip blank and comment lines from `pos` (a line start): the indentation of the next line with
    /// content, `pos` at its start, or `None` at the end of the text.
    fn content_line(&mut self) -> Option<usize> {
        loop {
            let indent = self.spaces(self.pos);
            match self.at(self.pos + indent) {
                0 => {
                    self.pos = self.b.len();
                    return None;
                }
                b'\n' => self.pos += indent + 1,
                b'#' => self.pos = self.next_line(self.pos + indent),
                _ => return Some(indent),
            }
        }
    }

    /// The rest of a node's last line from `at`: spaces, then a comment or nothing. `pos` moves to the
    /// next line.
    fn end_line(&mut self, at: usize) -> Option<()> {
        let i = at + self.spaces(at);
        match self.at(i) {
            b'\n' | 0 => {}
            b'#' if i > at => {}
            _ => return None,
        }
        self.pos = self.next_line(i);
        Some(())
    }

    /// The document marker (`-` for `---`, `.` for `...`) at `pos`, a line start.
    fn marker(&self) -> Option<u8> {
        self.marker_at(self.pos)
    }

    /// The document marker at `i`, a line start.
    fn marker_at(&self, i: usize) -> Option<u8> {
        let c = self.at(i);
        (matches!(c, b'-' | b'.')
            && self.at(i + 1) == c
            && self.at(i + 2) == c
            && sep(self.at(i + 3)))
        .then_some(c)
    }

    /// Every document; empty and null ones skipped, as serde-saphyr's `from_multiple` does.
    fn stream(&mut self) -> Option<Vec<Node>> {
        let mut docs = Vec::new();
        let mut begun = 0;
        while let Some(mut indent) = self.content_line() {
            self.anchors.clear();
            begun += 1;
            if begun > MAX_DOCS {
                return None;
            }
            if indent == 0 && self.marker() == Some(b'-') {
                self.end_line(self.pos + 3)?;
                match self.content_line() {
                    None => break,
                    Some(0) if self.marker() == Some(b'-') => continue,
                    Some(i) => indent = i,
                }
            }
            if indent == 0 && (self.marker().is_some() || self.at(self.pos) == b'%') {
                return None;
            }
            let node = self.node(self.pos + indent, indent, -1)?;
            if !matches!(node.value, Value::Scalar(Scalar::Null)) {
                docs.push(node);
            }
            match self.content_line() {
                None => break,
                Some(0) if self.marker() == Some(b'-') => {}
                Some(_) => return None,
            }
        }
        Some(docs)
    }

    /// The node that starts at `p`, in column `col`, inside a block collection indented `parent` (-1 at
    /// a document's root). `pos` moves to the line after it.
    fn node(&mut self, p: usize, col: usize, parent: isize) -> Option<Node> {
        let (c, next) = (self.at(p), self.at(p + 1));
        match c {
            b'-' if sep(next) => self.block_seq(p, col),
            b'[' | b'{' => {
                let (node, end) = self.flow(p)?;
                self.end_line(end)?;
                Some(node)
            }
            b'|' | b'>' => self.block_scalar(p, usize::try_from(parent).ok()?),
            b'"' | b'\'' if self.key_colon(p).is_none() => {
                let (node, end) = self.quoted(p, true)?;
                self.end_line(end)?;
                Some(node)
            }
            b'"' | b'\'' => self.block_map(p, col),
            _ if not_plain(c, next) => None,
            _ if self.key_colon(p).is_some() => self.block_map(p, col),
            _ => self.plain(p, parent),
        }
    }

    /// Where the `:` of a block mapping key that starts at `p` is, when its line has one.
    fn key_colon(&self, p: usize) -> Option<usize> {
        let colon = match self.b[p] {
            b'"' | b'\'' => self.quoted_end(p)?,
            _ => {
                let line = &self.b[p..self.line_end(p)];
                let mut found = None;
                for i in memchr2_iter(b':', b'#', line) {
                    if line[i] == b':' && sep(self.at(p + i + 1)) {
                        found = Some(p + i);
                        break;
                    }
                    if line[i] == b'#' && i > 0 && line[i - 1] == b' ' {
                        return None;
                    }
                }
                found?
            }
        };
        (self.at(colon) == b':' && sep(self.at(colon + 1))).then_some(colon)
    }

    /// A mapping key from `p` to its `:` at `colon`, as serde-saphyr types and writes it.
    fn key(&mut self, p: usize, colon: usize) -> Option<Spanned<String>> {
        if colon - p > MAX_KEY {
            return None;
        }
        self.count()?;
        let text = match self.b[p] {
            b'"' | b'\'' => events::key_text(Scalar::Str(self.quoted_value(p, false)?.0), false)?,
            c if not_plain(c, self.at(p + 1)) => return None,
            _ => {
                let raw = &self.text[p..colon];
                if raw.ends_with(' ') {
                    return None;
                }
                events::key_text(events::plain(Cow::Borrowed(raw))?, true)?
            }
        };
        Some(Spanned::new(text, self.origin(p..colon)))
    }

    /// Is `key` new to its mapping (whose entries start at `base`)? For a key given twice, serde-saphyr's
    /// error where this reader can tell it (both written plain and alike) or `None` (serde-saphyr compares
    /// `yes` and `true` as written, this reader as typed). serde-saphyr reads in document order and reports
    /// the second key once it has the first event of its value (an error in that value's first scalar
    /// comes first), so the caller reports it after reading that value ([`Reader::repeated`]).
    fn repeat(&self, base: usize, key: &Spanned<String>) -> Result<(), Option<Box<Problem>>> {
        let Some(first) = self.entries[base..]
            .iter()
            .find(|e| e.key.value == key.value)
        else {
            return Ok(());
        };
        let raw = |o: Origin| &self.text[o.range()];
        let written = raw(key.origin);
        let plain_string = !matches!(self.b[key.origin.offset], b'"' | b'\'')
            && matches!(events::plain(Cow::Borrowed(written)), Some(Scalar::Str(_)));
        Err((plain_string && raw(first.key.origin) == written)
            .then(|| Box::new(super::duplicate_key(written, key.origin))))
    }

    /// After a key's value (`None` where this reader gave up on it): the value, or for a key given twice
    /// ([`Reader::repeat`]) `None`, with its error set aside where the value was read (an error inside it,
    /// or a key given twice there, comes after the key for serde-saphyr: the other readers decide).
    fn repeated<T>(
        &mut self,
        repeat: Result<(), Option<Box<Problem>>>,
        value: Option<T>,
    ) -> Option<T> {
        if let Err(duplicate) = repeat {
            self.duplicate =
                duplicate.filter(|_| value.is_some() && self.tabs_in_literals(self.pos));
            return None;
        }
        value
    }

    /// A block mapping whose first key starts at `p`, in column `col`.
    fn block_map(&mut self, mut p: usize, col: usize) -> Option<Node> {
        self.open()?;
        let base = self.entries.len();
        loop {
            let colon = self.key_colon(p)?;
            let key = self.key(p, colon)?;
            let repeat = self.repeat(base, &key);
            let node = self.map_value(colon, col);
            let node = self.repeated(repeat, node)?;
            self.entries.push(events::entry(key, node));
            if !self.same_column(col)? {
                break;
            }
            p = self.pos + col;
        }
        self.close();
        let entries = self.entries.split_off(base);
        let origin = entries[0].key.origin;
        Some(Node::new(Value::Map(entries), origin))
    }

    /// After an entry of a block collection in column `col`: does the next line go on in that column? A
    /// deeper line there is an error, left to the parser.
    fn same_column(&mut self, col: usize) -> Option<bool> {
        match self.content_line() {
            Some(i) if i > col => None,
            Some(i) => Some(i == col && !(col == 0 && self.marker().is_some())),
            None => Some(false),
        }
    }

    /// Is there a block sequence's `- ` at `pos + col`?
    fn dash(&self, col: usize) -> bool {
        self.at(self.pos + col) == b'-' && sep(self.at(self.pos + col + 1))
    }

    /// The value after a key's `:` at `colon`, in a mapping in column `col`.
    fn map_value(&mut self, colon: usize, col: usize) -> Option<Node> {
        let v = colon + 1 + self.spaces(colon + 1);
        match self.at(v) {
            b'&' => {
                return self.anchored(v, |r, after, below| {
                    if !below {
                        return r.inline(after, col);
                    }
                    // The value below: never an anchored null (whose place is granit-parser's to say).
                    match r.content_line() {
                        Some(i) if i > col || i == col && r.dash(col) => r.value_below(after, col),
                        _ => None,
                    }
                });
            }
            b'*' => return self.alias(v),
            b'\n' | 0 | b'#' => {}
            _ => return self.inline(v, col),
        }
        self.pos = self.next_line(v);
        self.value_below(colon, col)
    }

    /// A mapping value that starts on the line after its key's (which ends at `colon` or after it).
    fn value_below(&mut self, colon: usize, col: usize) -> Option<Node> {
        match self.content_line() {
            Some(i) if i > col => self.node(self.pos + i, i, col as isize),
            // A sequence may sit in its key's column.
            Some(i) if i == col && self.dash(col) => self.block_seq(self.pos + col, col),
            // granit-parser places an empty value at its key's `:`.
            _ => self.scalar(colon..colon, Scalar::Null),
        }
    }

    /// An anchor's name at `p` (after its `&` or `*`), and where it ends: up to a space or a line break. A
    /// name with a flow indicator in it is left to serde-saphyr.
    fn anchor_name(&self, p: usize) -> Option<(&'t str, usize)> {
        let text: &'t str = self.text;
        let len = self.b[p + 1..]
            .iter()
            .position(|&c| sep(c))
            .unwrap_or(self.b.len() - p - 1);
        let name = &text[p + 1..p + 1 + len];
        (!name.is_empty() && !name.contains([',', '[', ']', '{', '}']))
            .then_some((name, p + 1 + len))
    }

    /// A node anchored at `v`, read by `value` from where the anchor's name ends (a line's end, a comment,
    /// or the node on that line), and kept for the aliases after it.
    fn anchored(
        &mut self,
        v: usize,
        value: impl FnOnce(&mut Self, usize, bool) -> Option<Node>,
    ) -> Option<Node> {
        let (name, end) = self.anchor_name(v)?;
        if self.anchors.iter().any(|(n, _)| *n == name) {
            return None;
        }
        let after = end + self.spaces(end);
        let c = self.at(after);
        let below = matches!(c, b'\n' | 0) || c == b'#' && after > end;
        if below {
            self.pos = self.next_line(after);
        }
        let node = value(self, after, below)?;
        self.anchors.push((name, node.clone()));
        Some(node)
    }

    /// The value an alias at `v` stands for: its anchor's node again, every node of it placed at the
    /// alias, as serde-saphyr replays the anchor's events at the alias's place.
    fn alias(&mut self, v: usize) -> Option<Node> {
        let (name, end) = self.anchor_name(v)?;
        let at = self.origin(v..end);
        let anchored = &self.anchors.iter().rev().find(|(n, _)| *n == name)?.1;
        let (nodes, depth) = extent(anchored);
        if depth > self.depth || self.nodes + nodes > MAX_NODES {
            return None;
        }
        let node = replayed(self.text, anchored, at);
        self.nodes += nodes;
        self.end_line(end)?;
        Some(node)
    }

    /// A mapping value that starts on its key's line, at `v`.
    fn inline(&mut self, v: usize, col: usize) -> Option<Node> {
        match self.at(v) {
            b'|' | b'>' => self.block_scalar(v, col),
            b'"' | b'\'' => {
                let (node, end) = self.quoted(v, true)?;
                self.end_line(end)?;
                Some(node)
            }
            b'[' | b'{' => {
                let (node, end) = self.flow(v)?;
                self.end_line(end)?;
                Some(node)
            }
            c if not_plain(c, self.at(v + 1)) => None,
            _ => self.plain(v, col as isize),
        }
    }

    /// A block sequence whose first `-` is at `p`, in column `col`.
    fn block_seq(&mut self, mut p: usize, col: usize) -> Option<Node> {
        self.open()?;
        // granit-parser's span of a block sequence is empty, at its first dash.
        let origin = self.origin(p..p);
        let base = self.items.len();
        loop {
            let v = p + 1 + self.spaces(p + 1);
            let item = match self.at(v) {
                b'\n' | 0 | b'#' => self.item_below(v, col)?,
                b'&' => self.anchored(v, |r, after, below| {
                    // On the dash's line, a scalar or a flow collection: `- &a k: v` anchors the key.
                    if !below {
                        return r.inline(after, col);
                    }
                    match r.content_line() {
                        Some(i) if i > col => r.node(r.pos + i, i, col as isize),
                        _ => None,
                    }
                })?,
                b'*' => self.alias(v)?,
                _ => self.node(v, col + (v - p), col as isize)?,
            };
            self.items.push(item);
            match self.content_line() {
                Some(i) if i == col && self.dash(col) => p = self.pos + col,
                Some(i) if i > col => return None,
                _ => break,
            }
        }
        self.close();
        let items = self.items.split_off(base);
        Some(Node::new(Value::Seq(items), origin))
    }

    /// A sequence item that starts below its dash's line (whose rest, from `v`, is empty or a comment);
    /// or null, placed where that line ends, as granit-parser places it.
    fn item_below(&mut self, v: usize, col: usize) -> Option<Node> {
        let end = self.line_end(v);
        self.pos = self.next_line(v);
        match self.content_line() {
            Some(i) if i > col => self.node(self.pos + i, i, col as isize),
            _ => self.scalar(end..end, Scalar::Null),
        }
    }

    fn scalar(&mut self, range: Range<usize>, scalar: Scalar) -> Option<Node> {
        self.count()?;
        Some(events::scalar_node(self.text, self.origin(range), scalar))
    }

    /// A plain scalar from `p`, continued on the lines indented deeper than `parent` (none at the root),
    /// folded as YAML folds them.
    fn plain(&mut self, p: usize, parent: isize) -> Option<Node> {
        let (mut end, mut line_end, mut comment) = self.plain_line(p)?;
        let mut folded: Option<String> = None;
        let mut next = line_end + 1;
        let mut breaks = 0;
        while parent >= 0 && !comment && next < self.b.len() {
            let s = next + self.spaces(next);
            match self.at(s) {
                b'\n' => {
                    breaks += 1;
                    next = s + 1;
                    continue;
                }
                0 | b'#' => break,
                _ if (s - next) as isize <= parent => break,
                c if not_plain(c, self.at(s + 1)) => return None,
                _ => {}
            }
            let (e, le, c) = self.plain_line(s)?;
            let value = folded.get_or_insert_with(|| self.text[p..end].to_owned());
            if breaks == 0 {
                value.push(' ');
            }
            value.extend(std::iter::repeat_n('\n', breaks));
            value.push_str(&self.text[s..e]);
            (end, line_end, comment, breaks, next) = (e, le, c, 0, le + 1);
        }
        self.pos = (line_end + 1).min(self.b.len());
        let value = folded.map_or(Cow::Borrowed(&self.text[p..end]), Cow::Owned);
        let scalar = events::plain(value)?;
        self.scalar(p..end, scalar)
    }

    /// One line of a plain scalar from `p`: where its text ends (trailing spaces dropped), where the line
    /// ends, and whether a comment ends it; `None` where a `: ` in it would make it a key.
    fn plain_line(&self, p: usize) -> Option<(usize, usize, bool)> {
        let le = self.line_end(p);
        let (mut end, mut comment) = (le, false);
        for i in memchr2_iter(b':', b'#', &self.b[p..le]) {
            let at = p + i;
            if self.b[at] == b':' {
                if sep(self.at(at + 1)) {
                    return None;
                }
            } else if i > 0 && self.b[at - 1] == b' ' {
                (end, comment) = (at, true);
                break;
            }
        }
        while end > p && self.b[end - 1] == b' ' {
            end -= 1;
        }
        Some((end, le, comment))
    }

    /// A quoted scalar at `p`, and where it ends; it may go on over several lines where `lines`.
    fn quoted(&mut self, p: usize, lines: bool) -> Option<(Node, usize)> {
        let (value, end) = self.quoted_value(p, lines)?;
        Some((self.scalar(p..end, Scalar::Str(value))?, end))
    }

    /// Where the quoted scalar at `p` ends, when it ends on its line.
    fn quoted_end(&self, p: usize) -> Option<usize> {
        let q = self.b[p];
        let mut i = p + 1;
        loop {
            let j = i + memchr3(q, b'\\', b'\n', self.b.get(i..)?)?;
            match self.b[j] {
                b'\n' => return None,
                b'\\' if q == b'"' => i = j + 2,
                b'\\' => i = j + 1,
                _ if q == b'\'' && self.at(j + 1) == b'\'' => i = j + 2,
                _ => return Some(j + 1),
            }
        }
    }

    /// A quoted scalar's value at `p`, and where it ends. Where `lines` it may go on over several lines,
    /// folded as YAML folds them; otherwise it must end on its line.
    fn quoted_value(&self, p: usize, lines: bool) -> Option<(String, usize)> {
        let q = self.b[p];
        let mut out = String::new();
        let mut i = p + 1;
        loop {
            let j = i + memchr3(q, b'\\', b'\n', &self.b[i..])?;
            if self.b[j] == b'\n' {
                if !lines {
                    return None;
                }
                // Spaces before a line break are not content.
                out.push_str(self.text[i..j].trim_end_matches(' '));
                i = self.fold_quoted(j, &mut out)?;
                continue;
            }
            out.push_str(&self.text[i..j]);
            match self.b[j] {
                b'\\' if q == b'"' => i = escape(self.text, j + 1, &mut out)?,
                b'\\' => {
                    out.push('\\');
                    i = j + 1;
                }
                _ if q == b'\'' && self.at(j + 1) == b'\'' => {
                    out.push('\'');
                    i = j + 2;
                }
                _ => return Some((out, j + 1)),
            }
        }
    }

    /// The line break at `j` inside a quoted scalar, the empty lines after it and the next line's
    /// indentation, folded into `out` (one break a space, each further one a line feed): where the
    /// scalar goes on. Manifests are read without strict indentation, as granit-parser does here, so
    /// any indentation goes; `None` at the end of the text and at a document marker (both errors).
    fn fold_quoted(&self, j: usize, out: &mut String) -> Option<usize> {
        let (mut l, mut breaks) = (j + 1, 0);
        loop {
            let s = self.spaces(l);
            match self.at(l + s) {
                b'\n' => (l, breaks) = (l + s + 1, breaks + 1),
                0 => return None,
                _ if s == 0 && self.marker_at(l).is_some() => return None,
                _ => {
                    if breaks == 0 {
                        out.push(' ');
                    }
                    out.extend(std::iter::repeat_n('\n', breaks));
                    return Some(l + s);
                }
            }
        }
    }

    /// A literal (`|`) or folded (`>`) block scalar whose header is at `p`, in a block collection indented
    /// `parent`: granit-parser's reading (`scan_block_scalar`), span included, for lines of spaces no
    /// deeper than the scalar's indentation.
    fn block_scalar(&mut self, p: usize, parent: usize) -> Option<Node> {
        let literal = self.b[p] == b'|';
        let (chomp, explicit, header_end) = self.block_header(p + 1)?;
        let first = self.next_line(header_end);
        let indent = match explicit {
            Some(n) => parent + n,
            None => self.block_indent(first, parent)?,
        };
        let (mut l, mut breaks) = (first, 0);
        let mut at = loop {
            let s = self.spaces(l);
            match self.at(l + s) {
                b'\n' if s <= indent => (l, breaks) = (l + s + 1, breaks + 1),
                // An empty scalar, an error, or a deeper line of spaces: left to the parser.
                _ if s < indent => return None,
                b'\n' | 0 => return None,
                _ => break l + indent,
            }
        };
        let start = at;
        let mut out = String::new();
        let (mut leading_break, mut leading_blank) = (false, false);
        let end = loop {
            let blank = self.b[at] == b' ';
            if !literal && leading_break && !leading_blank && !blank {
                if breaks == 0 {
                    out.push(' ');
                }
            } else if leading_break {
                out.push('\n');
            }
            out.extend(std::iter::repeat_n('\n', breaks));
            (breaks, leading_blank) = (0, blank);
            let le = self.line_end(at);
            out.push_str(&self.text[at..le]);
            if le == self.b.len() {
                (l, leading_break) = (le, false);
                break le;
            }
            leading_break = true;
            l = le + 1;
            let s = loop {
                let s = self.spaces(l);
                match self.at(l + s) {
                    b'\n' if s <= indent => (l, breaks) = (l + s + 1, breaks + 1),
                    b'\n' => return None,
                    0 if s > 0 => return None,
                    _ => break s,
                }
            };
            if s < indent || l == self.b.len() {
                break l + s;
            }
            at = l + indent;
        };
        debug_assert!(leading_break || breaks == 0);
        if literal {
            self.literal.push(start..end);
        }
        if chomp != Some(b'-') {
            out.push('\n');
        }
        if chomp == Some(b'+') {
            out.extend(std::iter::repeat_n('\n', breaks));
        }
        self.pos = l;
        self.scalar(start..end, Scalar::Str(out))
    }

    /// A block scalar header's indicators from `i` (chomping, indentation, in either order) and where its
    /// line ends; a comment may follow. `None` for anything else, or no line after it.
    fn block_header(&self, mut i: usize) -> Option<(Option<u8>, Option<usize>, usize)> {
        let (mut chomp, mut indent) = (None, None);
        for _ in 0..2 {
            match self.at(i) {
                c @ (b'-' | b'+') if chomp.is_none() => chomp = Some(c),
                c @ b'1'..=b'9' if indent.is_none() => indent = Some(usize::from(c - b'0')),
                _ => break,
            }
            i += 1;
        }
        let j = i + self.spaces(i);
        let end = match self.at(j) {
            b'\n' => j,
            b'#' if j > i => self.line_end(j),
            _ => return None,
        };
        (end < self.b.len()).then_some((chomp, indent, end))
    }

    /// An auto-detected block scalar's indentation: its first content line's (from line `l` on), when
    /// that is deeper than `parent` and than every line of spaces before it.
    fn block_indent(&self, mut l: usize, parent: usize) -> Option<usize> {
        let mut blank = 0;
        loop {
            let s = self.spaces(l);
            match self.at(l + s) {
                b'\n' => (blank, l) = (blank.max(s), l + s + 1),
                0 => return None,
                _ => return (s > parent && s >= blank).then_some(s),
            }
        }
    }

    /// A flow collection (`[…]` or `{…}`) from `p`: the node and where it ends.
    fn flow(&mut self, p: usize) -> Option<(Node, usize)> {
        self.open()?;
        let read = if self.b[p] == b'[' {
            self.flow_seq(p)
        } else {
            self.flow_map(p)
        };
        self.close();
        read
    }

    fn flow_seq(&mut self, p: usize) -> Option<(Node, usize)> {
        let base = self.items.len();
        let mut i = self.flow_space(p + 1)?;
        if self.at(i) != b']' {
            loop {
                let (item, end) = self.flow_node(i)?;
                self.items.push(item);
                i = self.flow_space(end)?;
                match self.at(i) {
                    b',' => i = self.flow_space(i + 1)?,
                    b']' => break,
                    _ => return None,
                }
                if self.at(i) == b']' {
                    return None;
                }
            }
        }
        let items = self.items.split_off(base);
        Some((Node::new(Value::Seq(items), self.origin(p..p + 1)), i + 1))
    }

    fn flow_map(&mut self, p: usize) -> Option<(Node, usize)> {
        let base = self.entries.len();
        let mut i = self.flow_space(p + 1)?;
        if self.at(i) != b'}' {
            loop {
                let colon = self.flow_key_colon(i)?;
                let key = self.key(i, colon)?;
                // serde-saphyr may read to the end of a flow mapping before it checks its keys (an
                // unclosed bracket comes first): a key given twice there is for it to report.
                self.repeat(base, &key).ok()?;
                let (node, end) = self.flow_node(self.flow_space(colon + 1)?)?;
                self.entries.push(events::entry(key, node));
                i = self.flow_space(end)?;
                match self.at(i) {
                    b',' => i = self.flow_space(i + 1)?,
                    b'}' => break,
                    _ => return None,
                }
                if self.at(i) == b'}' {
                    return None;
                }
            }
        }
        let entries = self.entries.split_off(base);
        let origin = entries
            .first()
            .map_or(self.origin(p..p + 1), |e| e.key.origin);
        Some((Node::new(Value::Map(entries), origin), i + 1))
    }

    /// Where the `:` after a flow mapping key from `i` is: right after the key, before a space or a line
    /// break.
    fn flow_key_colon(&self, i: usize) -> Option<usize> {
        let c = self.at(i);
        let colon = match c {
            b'"' | b'\'' => self.quoted_end(i)?,
            _ if not_plain_flow(c, self.at(i + 1)) => return None,
            _ => self.flow_plain_stop(i)?,
        };
        (self.at(colon) == b':' && matches!(self.at(colon + 1), b' ' | b'\n')).then_some(colon)
    }

    /// A node inside a flow collection, from `i`, and where it ends.
    fn flow_node(&mut self, i: usize) -> Option<(Node, usize)> {
        let c = self.at(i);
        match c {
            0 => None,
            b'[' | b'{' => self.flow(i),
            b'"' | b'\'' => self.quoted(i, false),
            _ if not_plain_flow(c, self.at(i + 1)) => None,
            _ => {
                let stop = self.flow_plain_stop(i)?;
                let mut end = stop;
                while self.b[end - 1] == b' ' {
                    end -= 1;
                }
                // A scalar that reaches a line break or a comment may go on on the next line.
                if matches!(self.at(stop), b'\n' | b'#')
                    && !matches!(self.at(self.flow_space(stop)?), b',' | b']' | b'}')
                {
                    return None;
                }
                let scalar = events::plain(Cow::Borrowed(&self.text[i..end]))?;
                Some((self.scalar(i..end, scalar)?, end))
            }
        }
    }

    /// Where a plain scalar inside a flow collection, from `j`, stops: at `,` `]` `}`, at a `:` before a
    /// space, a line break or one of those, at a comment, or at the line's end. `None` at a `[` or `{`.
    fn flow_plain_stop(&self, mut j: usize) -> Option<usize> {
        loop {
            match self.at(j) {
                b',' | b']' | b'}' | b'\n' | 0 => return Some(j),
                b'[' | b'{' => return None,
                b':' if matches!(
                    self.at(j + 1),
                    b' ' | b'\n' | 0 | b',' | b'[' | b']' | b'{' | b'}'
                ) =>
                {
                    return Some(j);
                }
                b'#' if self.b[j - 1] == b' ' => return Some(j),
                _ => j += 1,
            }
        }
    }

    /// Spaces, line breaks and comments inside a flow collection, from `i`. A line that starts in column
    /// 0 is left to the parser, unless it closes a collection.
    fn flow_space(&self, mut i: usize) -> Option<usize> {
        loop {
            match self.at(i) {
                b' ' => i += 1,
                b'\n' => {
                    i += 1;
                    if !matches!(self.at(i), b' ' | b'\n' | b']' | b'}' | 0) {
                        return None;
                    }
                }
                b'#' if matches!(self.b[i - 1], b' ' | b'\n') => i = self.line_end(i),
                _ => return Some(i),
            }
        }
    }
}

/// A double-quoted scalar's escape whose `\` is before `i` (YAML 1.2's set): where it ends. `None` for a
/// line continuation or an unknown escape, left to the parser.
fn escape(text: &str, i: usize, out: &mut String) -> Option<usize> {
    let c = match text.as_bytes().get(i)? {
        b'0' => '\0',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b't' => '\t',
        b'n' => '\n',
        b'v' => '\u{b}',
        b'f' => '\u{c}',
        b'r' => '\r',
        b'e' => '\u{1b}',
        b' ' => ' ',
        b'"' => '"',
        b'/' => '/',
        b'\\' => '\\',
        b'N' => '\u{85}',
        b'_' => '\u{a0}',
        b'L' => '\u{2028}',
        b'P' => '\u{2029}',
        b'x' => return hex(text, i + 1, 2, out),
        b'u' => return hex(text, i + 1, 4, out),
        b'U' => return hex(text, i + 1, 8, out),
        _ => return None,
    };
    out.push(c);
    Some(i + 1)
}

fn hex(text: &str, i: usize, digits: usize, out: &mut String) -> Option<usize> {
    let hex = text.get(i..i + digits)?;
    if !hex.bytes().all(|d| d.is_ascii_hexdigit()) {
        return None;
    }
    out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
    Some(i + digits)
}

#[cfg(test)]
pub(crate) mod tests;
