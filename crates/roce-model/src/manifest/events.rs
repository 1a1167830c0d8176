//! The fast reader: granit-parser's events straight into [`Node`] trees, without serde.
//!
//! serde-saphyr builds the same trees through serde's visitor machinery, an alias recorder and a typed
//! value per node; on a manifest tree that is most of `roce lint`'s time. This reader handles the YAML
//! that manifests are written in — block and flow collections, plain, quoted and block scalars, several
//! documents — and gives up (`None`) on everything whose meaning serde-saphyr decides itself: any parse
//! error (so the error message is serde-saphyr's), anchors and aliases, tags, `%YAML` directives, merge
//! keys, complex or duplicate keys, plain scalars that may be floats or non-decimal integers, and input
//! near the nesting and size budgets. [`super::parse`] then reads the file with serde-saphyr, so both
//! paths give the same trees (`tests::same_trees_as_serde_saphyr_on_every_yaml_file` compares them on every YAML file in the repository).

use std::borrow::Cow;

use crate::source::{Origin, SourceId, Spanned};
use crate::tree::{Entry, Node, Scalar, Value};
use granit_parser::{Event, Parser, ScalarStyle, Span};

/// Inputs above this size go to serde-saphyr, whose budgets (events, nodes, scalar bytes) they might
/// reach; a manifest is kilobytes.
pub(super) const MAX_TEXT: usize = 8 << 20;

/// The documents of `text`, as [`super::parse`] reads them, or `None` when serde-saphyr must decide.
pub(super) fn read(text: &str, source: SourceId, max_depth: usize) -> Option<Vec<Node>> {
    if text.len() > MAX_TEXT || text.starts_with('\u{feff}') {
        return None;
    }
    let mut reader = Reader {
        text,
        source,
        // serde-saphyr's depth budget counts one level more or less than the stack here; stay clear.
        max_depth: max_depth.saturating_sub(2),
        stack: Vec::new(),
        docs: Vec::new(),
        budget: serde_saphyr::Budget::default(),
        nodes: 0,
    };
    // serde-saphyr's budgets bound what one file may cost (memory grows with its nodes); a file near them
    // goes to serde-saphyr, so that one file is read, or refused, the same way whatever its size.
    for (events, item) in Parser::new_from_str_with_options(text, options(max_depth)).enumerate() {
        if events >= reader.budget.max_events {
            return None;
        }
        let (event, span) = item.ok()?;
        reader.event(event, span)?;
    }
    reader.stack.is_empty().then_some(reader.docs)
}

/// The parser settings serde-saphyr uses for [`super::parse`]'s options (its `Budget::parser_options`).
fn options(max_depth: usize) -> granit_parser::Options {
    let mut options = granit_parser::Options::default();
    options.simple_key_max_lookahead = 1024;
    options.flow_nesting_limit = 255;
    options.block_nesting_limit = options.block_nesting_limit.max(max_depth + 1);
    options.strict_indentation = false;
    options.bom_inside_document_as_content = false;
    options
}

enum Frame {
    Map {
        entries: Vec<Entry>,
        origin: Origin,
        key: Option<Spanned<String>>,
    },
    Seq {
        items: Vec<Node>,
        origin: Origin,
    },
}

struct Reader<'t> {
    text: &'t str,
    source: SourceId,
    max_depth: usize,
    stack: Vec<Frame>,
    docs: Vec<Node>,
    budget: serde_saphyr::Budget,
    nodes: usize,
}

impl Reader<'_> {
    fn event(&mut self, event: Event<'_>, span: Span) -> Option<()> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Some(()),
            Event::DocumentStart(_, version) => {
                (version.is_none() && self.docs.len() < self.budget.max_documents).then_some(())
            }
            Event::Scalar(..) | Event::MappingStart(..) | Event::SequenceStart(..)
                if self.nodes >= self.budget.max_nodes =>
            {
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                self.nodes += 1;
                let origin = self.origin(&span);
                let scalar = if style == ScalarStyle::Plain {
                    plain(value)?
                } else {
                    Scalar::Str(value.into_owned())
                };
                let plain_key = style == ScalarStyle::Plain;
                self.add(scalar_node(self.text, origin, scalar), plain_key)
            }
            Event::MappingStart(_, anchor, tag) | Event::SequenceStart(_, anchor, tag)
                if anchor != 0 || tag.is_some() || self.stack.len() >= self.max_depth =>
            {
                None
            }
            Event::MappingStart(..) => {
                self.nodes += 1;
                let origin = self.origin(&span);
                self.stack.push(Frame::Map {
                    entries: Vec::new(),
                    origin,
                    key: None,
                });
                Some(())
            }
            Event::SequenceStart(..) => {
                self.nodes += 1;
                let origin = self.origin(&span);
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    origin,
                });
                Some(())
            }
            Event::MappingEnd => match self.stack.pop()? {
                Frame::Map {
                    entries,
                    origin,
                    key: None,
                } if unique_keys(&entries) => {
                    let origin = entries.first().map_or(origin, |e| e.key.origin);
                    self.add(Node::new(Value::Map(entries), origin), false)
                }
                _ => None,
            },
            Event::SequenceEnd => match self.stack.pop()? {
                Frame::Seq { items, origin } => {
                    self.add(Node::new(Value::Seq(items), origin), false)
                }
                Frame::Map { .. } => None,
            },
            // Aliases, and any event this reader does not know.
            _ => None,
        }
    }

    /// The byte range serde-saphyr gives a span (`location_from_span`, then `byte_range`).
    fn origin(&self, span: &Span) -> Origin {
        let range = match (span.start.byte_offset(), span.end.byte_offset()) {
            (Some(start), Some(end)) => {
                let start = start.min(self.text.len());
                start..end.max(start).min(self.text.len())
            }
            _ => 0..0,
        };
        Origin::new(self.source, range)
    }

    /// Put a finished node where it belongs: a document root, a list item, a key, or a key's value.
    fn add(&mut self, node: Node, plain: bool) -> Option<()> {
        match self.stack.last_mut() {
            None => {
                // Empty and null-only documents are skipped, as serde-saphyr's `from_multiple` does.
                if !matches!(node.value, Value::Scalar(Scalar::Null)) {
                    self.docs.push(node);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                key: key @ None, ..
            }) => {
                let Value::Scalar(scalar) = node.value else {
                    return None;
                };
                let text = key_text(scalar, plain)?;
                *key = Some(Spanned::new(text, node.origin));
            }
            Some(Frame::Map { entries, key, .. }) => {
                entries.push(entry(key.take()?, node));
            }
        }
        Some(())
    }
}

/// A scalar's node: `origin` is its literal (quotes included); `content`, for a string, where its text
/// first stands verbatim in the literal, as `tree::content_origin` finds it.
pub(super) fn scalar_node(text: &str, origin: Origin, scalar: Scalar) -> Node {
    let content = match &scalar {
        Scalar::Str(v) if !v.is_empty() => first_place(text.get(origin.range()).unwrap_or(""), v)
            .map(|at| {
                Origin::new(
                    origin.source,
                    origin.offset + at..origin.offset + at + v.len(),
                )
            }),
        _ => None,
    };
    Node {
        value: Value::Scalar(scalar),
        origin,
        content,
    }
}

/// `literal.find(v)` for a non-empty `v`, without building a substring searcher where the first few
/// places `v`'s first byte occurs settle it: a plain or quoted scalar's text starts at 0 or 1, and a
/// multi-line block scalar's is not there (its lines are indented in the literal, not in the value); the
/// searcher costs more than reading the whole manifest.
fn first_place(literal: &str, v: &str) -> Option<usize> {
    let (hay, needle) = (literal.as_bytes(), v.as_bytes());
    let last = hay.len().checked_sub(needle.len())?;
    let mut places = memchr::memchr_iter(needle[0], &hay[..=last]);
    for at in places.by_ref().take(16) {
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
    }
    // `at` holds `v`'s first byte, so it starts a character.
    let at = places.next()?;
    literal[at..].find(v).map(|i| at + i)
}

/// A mapping entry as serde-saphyr's reading places it: a mapping value, and a block sequence (whose own
/// span is empty), at the key.
pub(super) fn entry(key: Spanned<String>, mut node: Node) -> Entry {
    if matches!(node.value, Value::Map(_))
        || matches!(node.value, Value::Seq(_)) && node.origin.len == 0
    {
        node.origin = key.origin;
    }
    Entry { key, node }
}

/// A mapping key's text as serde-saphyr gives it, or `None` for what it alone decides (a float, the merge
/// key `<<` written plain).
pub(super) fn key_text(scalar: Scalar, plain: bool) -> Option<String> {
    Some(match scalar {
        Scalar::Str(s) if plain && s == "<<" => return None,
        Scalar::Str(s) => s,
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Null => String::new(),
        Scalar::Float(_) => return None,
    })
}

/// A plain scalar typed as serde-saphyr types it for [`super::parse`] (YAML 1.1 booleans, the core
/// schema's nulls, decimal integers), or `None` for spellings it alone should decide: anything that
/// may be a float, a non-decimal or underscored integer, or a decimal with a leading zero.
pub(super) fn plain(value: Cow<'_, str>) -> Option<Scalar> {
    if matches!(&*value, "" | "~" | "null" | "Null" | "NULL") {
        return Some(Scalar::Null);
    }
    if let Some(b) = yaml11_bool(&value) {
        return Some(Scalar::Bool(b));
    }
    let unsigned = value.strip_prefix('-').unwrap_or(&value);
    let Some(&first) = unsigned.as_bytes().first() else {
        return Some(Scalar::Str(value.into_owned()));
    };
    if first.is_ascii_digit() || matches!(first, b'.' | b'_' | b'+') {
        let digits = unsigned.bytes().all(|b| b.is_ascii_digit());
        if digits && (unsigned == "0" || first != b'0') && unsigned.len() <= 18 {
            return value.parse::<i128>().ok().map(Scalar::Int);
        }
        // A leading zero (a file mode, `defaultMode: 0755`): serde-saphyr reads no octal there, and
        // gives the digits as a float.
        if digits && first == b'0' {
            return value.parse::<f64>().ok().map(Scalar::Float);
        }
        // A number in another spelling (`1.5`, `0x1F`, `1_000`, `1e3`, `.inf`) for serde-saphyr; a
        // resource quantity (`64Gi`, `500m`) has other letters. An address or a version with two dots
        // (`10.0.0.1`, `1.2.3`) is neither, nor is anything with a `:` (a PCI address `0000:0c:00.0`):
        // serde-saphyr's integers and floats (Rust's `f64` syntax) have none, and it reads no YAML 1.1
        // sexagesimal (`1:30` is a string to it).
        let numeric = |b: u8| b.is_ascii_hexdigit() || b"xXoO_.+-".contains(&b);
        let dotted = unsigned.bytes().filter(|b| *b == b'.').count() > 1;
        if !dotted && !unsigned.contains(':') && (first == b'.' || unsigned.bytes().all(numeric)) {
            return None;
        }
    }
    Some(Scalar::Str(value.into_owned()))
}

/// serde-saphyr's `parse_yaml11_bool` (the "Norway problem" spellings), on a plain scalar's value.
fn yaml11_bool(s: &str) -> Option<bool> {
    let is = |w: &str| s.eq_ignore_ascii_case(w);
    if s.len() > 5 {
        None
    } else if is("true") || is("yes") || is("y") || is("on") {
        Some(true)
    } else if is("false") || is("no") || is("n") || is("off") {
        Some(false)
    } else {
        None
    }
}

/// No key given twice (serde-saphyr refuses a duplicate, with its own message).
pub(super) fn unique_keys(entries: &[Entry]) -> bool {
    if entries.len() <= 16 {
        return entries
            .iter()
            .enumerate()
            .all(|(i, e)| entries[..i].iter().all(|f| f.key.value != e.key.value));
    }
    let mut keys: Vec<&str> = entries.iter().map(|e| e.key.value.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{MAX_DEPTH, serde_saphyr_parse};
    use super::*;

    /// Both readers on `text`: the same trees (origins and contents included) wherever this one answers.
    fn same(text: &str) -> bool {
        let mut sources = crate::source::Sources::default();
        let source = sources.add(crate::Source::new("t.yaml", ""));
        let Some(fast) = read(text, source, MAX_DEPTH) else {
            return false;
        };
        let full = serde_saphyr_parse(text, source, MAX_DEPTH).unwrap_or_else(|p| {
            panic!("serde-saphyr refuses what the event reader read: {p:?}\n{text}")
        });
        assert_eq!(format!("{fast:#?}"), format!("{full:#?}"), "{text}");
        true
    }

    #[test]
    fn first_place_is_find() {
        let long = format!("{}ab", "a".repeat(40));
        let cases = [
            ("\"eth0\"", "eth0"),
            ("a\n  b\n", "a\nb\n"),
            ("xyz", "xyz"),
            ("'\"a'", "\"a"),
            ("\"\u{e9}t\u{e9}\"", "\u{e9}t\u{e9}"),
            (long.as_str(), "aab"),
            (long.as_str(), "aac"),
            ("ab", "abc"),
        ];
        for (literal, v) in cases {
            assert_eq!(
                first_place(literal, v),
                literal.find(v),
                "{literal:?} {v:?}"
            );
        }
    }

    #[test]
    fn same_trees_as_serde_saphyr_on_every_yaml_file() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        super::super::block::tests::yaml_files(&workspace, &mut files);
        let mut read_here = 0;
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            read_here += usize::from(same(&text));
        }
        // Most manifests take the fast path; the rest are serde-saphyr's.
        assert!(files.len() > 150, "{} files", files.len());
        assert!(
            read_here * 10 > files.len() * 8,
            "{read_here} of {}",
            files.len()
        );
    }

    #[test]
    fn same_trees_or_left_to_serde_saphyr() {
        // (text, read here rather than by serde-saphyr)
        let cases = [
            (
                "a: 1\nb: -2\nc: 0\nd: 64Gi\ne: 500m\nf: -np\ng: a-b\nh: v1.2\n",
                true,
            ),
            (
                "a: 0.0.0.0\nb: 192.168.3.1\nc: 1.2.3\nd: 1.2.3-rc1\ne: .1.2\n",
                true,
            ),
            (
                "a: yes\nb: No\nc: on\nd: ~\ne:\nf: null\ng: \"yes\"\nh: 'on'\ni: y\n",
                true,
            ),
            (
                "k: |\n  line one\n  line two\nl: >-\n  folded\n  text\nm: \"esc\\n\\u00e9\"\nn: 'it''s'\n",
                true,
            ),
            (
                "a:\n- 1\n- x: 2\n  y: [3, {z: 4}]\n-\n- []\n- {}\nb: []\nc: {}\n",
                true,
            ),
            ("1: one\ntrue: t\n~: n\n\"q\": quoted\n", true),
            ("plain: a multi\n  line scalar\nnext: é ü ✓\n", true),
            ("---\n---\nkind: Pod\n...\n---\n~\n---\nkind: Job\n", true),
            ("just a string\n", true),
            ("", true),
            ("# only a comment\n", true),
            ("- - - deep\n", true),
            ("e: 1.5\n", false),
            ("d: 007\ne: -00\n", true),
            ("f: 0x1F\n", false),
            ("g: 1_000\n", false),
            ("h: +3\n", false),
            ("i: .inf\n", false),
            ("a: 2024-01-01\n", false),
            (
                "e: 1:30\nf: 0000:0c:00.0\ng: -1:30\nh: 0x1:2\ni: 1:30.5\nj: 1e3:1\nk: .5:1\n",
                true,
            ),
            ("x: &a 1\ny: *a\n", false),
            ("x: !!str 1\n", false),
            ("<<: {a: 1}\nb: 2\n", false),
            ("a: 1\na: 2\n", false),
            ("? [a]\n: 1\n", false),
            ("%YAML 1.1\n---\na: 1\n", false),
            ("a: [1, 2\n", false),
            ("a: 1\n  b: 2\n", false),
            ("\u{feff}a: 1\n", false),
        ];
        for (text, fast) in cases {
            assert_eq!(same(text), fast, "{text}");
        }
    }
}
