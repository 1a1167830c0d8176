//! KDL v2 → [`Node`] tree, by hand so every value keeps its span.
//!
//! Mapping (documented for users in `docs/reference.md`):
//! - the document holds one `profile "NAME" { … }` node;
//! - a node with only arguments is a scalar (one argument) or a list (several);
//! - a node with properties or children is a map: properties and child nodes become keys, and leading
//!   arguments fill the node's positional keys (`fabric roce` → `kind`, `node-pool "x"` → `name`,
//!   `multus per-port` → `mode`, `profile "x"` → `name`);
//! - a node whose children are all named `-` is a list of those children.

use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};

use crate::problem::{Code, Problem};
use crate::source::{Origin, SourceId, Spanned};
use crate::tree::{self, Entry, Node, Scalar, Value};

/// Positional keys of nodes that take a leading argument and also properties or children.
const POSITIONAL: &[(&str, &str)] = &[
    ("profile", "name"),
    ("fabric", "kind"),
    ("node-pool", "name"),
    ("multus", "mode"),
    ("ucx", "mode"),
];

/// Parse a KDL profile into a tree. Errors are coded problems with spans.
pub fn parse(text: &str, source: SourceId) -> Result<Node, Vec<Problem>> {
    let whole = Origin::new(source, 0..text.len());
    if let Some(at) = brace_depth(text, KDL_MAX_DEPTH) {
        return Err(vec![too_deep(Origin::new(source, at..at + 1))]);
    }
    let doc = KdlDocument::parse(text).map_err(|err| syntax_problems(text, source, &err))?;
    let walker = Walker { text, source };
    let nodes = doc.nodes();
    if nodes.is_empty() {
        return Err(vec![super::empty(text, source)]);
    }
    let mut problems = Vec::new();
    let mut profile = None;
    for node in nodes {
        if node.name().value() == "profile" && profile.is_none() {
            profile = Some(node);
        } else {
            let what = if node.name().value() == "profile" {
                "a file holds one profile; this is a second one".to_string()
            } else {
                format!("`{}` outside the `profile` node", node.name().value())
            };
            problems.push(
                Problem::new(Code::UnknownKey, what)
                    .at(walker.head(node), "")
                    .help("put every setting inside `profile \"NAME\" { … }`"),
            );
        }
    }
    let Some(profile) = profile else {
        problems.push(
            Problem::new(Code::MissingKey, "no `profile` node in this file")
                .at(Origin::new(source, 0..text.len().min(1)), "")
                .help("a profile starts with `profile \"team/name\" { … }`"),
        );
        let _ = whole;
        return Err(problems);
    };
    let node = walker.node(profile, 1, &mut problems);
    if problems.is_empty() {
        Ok(node)
    } else {
        Err(problems)
    }
}

/// The KDL parser's diagnostics as coded problems, reworded where the parser's text is unclear.
fn syntax_problems(text: &str, source: SourceId, err: &kdl::KdlError) -> Vec<Problem> {
    const UNCLOSED_BLOCK: &str = "No closing '}' for child block";
    const UNCLOSED_NODES: &str = "Closing '}' was not found after nodes";
    const UNCLOSED_STRING: &str = "Unexpected newline in single-line quoted string";
    let has_unclosed_block = err
        .diagnostics
        .iter()
        .any(|d| d.message.as_deref() == Some(UNCLOSED_BLOCK));
    let mut out = Vec::new();
    for d in &err.diagnostics {
        let start = d.span.offset().min(text.len());
        let origin = Origin::new(source, start..(start + d.span.len()).min(text.len()));
        let message = d.message.as_deref().unwrap_or("invalid KDL");
        let (message, label, help) = match message {
            // Both are reported for one unclosed block; keep the one that points at its `{`.
            UNCLOSED_NODES if has_unclosed_block => continue,
            UNCLOSED_BLOCK | UNCLOSED_NODES => (
                "this block is never closed".to_string(),
                "opened here".to_string(),
                "add the `}` that closes it; if the file was cut off, the rest of the profile is missing too"
                    .to_string(),
            ),
            UNCLOSED_STRING => (
                "this string is not closed before the end of the line".to_string(),
                "string not closed".to_string(),
                "close it with `\"`: a KDL string ends on the line it starts (`\"\"\"` starts text that spans lines)"
                    .to_string(),
            ),
            other => (
                lower_first(other),
                d.label.clone().unwrap_or_default(),
                d.help
                    .clone()
                    .unwrap_or_else(|| "see docs/reference.md for the profile syntax".into()),
            ),
        };
        out.push(
            Problem::new(Code::Syntax, format!("invalid KDL: {message}"))
                .at(origin, label)
                .help(help),
        );
    }
    if out.is_empty() {
        out.push(
            Problem::new(Code::Syntax, "invalid KDL")
                .at(Origin::new(source, 0..text.len().min(1)), "")
                .help("see docs/reference.md for the profile syntax"),
        );
    }
    out
}

/// "No closing" → "no closing", leaving acronyms ("KDL …") alone.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && !b.is_uppercase() => {
            a.to_lowercase().chain(s[a.len_utf8()..].chars()).collect()
        }
        _ => s.to_string(),
    }
}

/// How deep a KDL profile may nest children blocks. A profile needs four; the cap is low because the `kdl`
/// crate (6.7) takes time exponential in the nesting of slashdashed children (`a /-{` repeated: 2^n, about a
/// second at 14 levels; kdl-org/kdl-rs#177, found by our fuzzer), so depth is refused before `kdl` sees it.
pub const KDL_MAX_DEPTH: usize = 8;

/// Offset of the first `{` that may open a block deeper than `limit`: an upper bound on the nesting `kdl` can
/// see, whatever its error recovery makes of malformed input. Comments are read as KDL v2 reads them (`//` to
/// the line's end, nesting `/* … */`; an unclosed `/*` hides nothing). Strings (`"…"` with escapes on one
/// line, `"""…"""` with a newline after the opener, raw `#"…"#` / `##"""…"""##`; an unclosed one runs to its
/// line's end, or to the end for multi-line and raw ones) are skipped, but a `{` inside one still counts
/// unless it is a `{name}` placeholder, and a `}` inside one never closes: a string `kdl` rejects (a control
/// character, a bad escape, no closing quote) may be re-read as code by its recovery, so braces in strings
/// cannot be trusted to be inert, and a `}` there cannot be trusted to close. A placeholder re-read as code opens and closes one level, so `kdl`
/// sees at most one level more than this counts. The count errs high only on braces in strings.
pub fn brace_depth(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let open = |depth: &mut usize, at: usize| {
        *depth += 1;
        (*depth > limit).then_some(at)
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr_from(b'\n', b, i).unwrap_or(b.len());
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'#' | b'"' => {
                let end = skip_string(b, i);
                let mut j = i;
                while j < end {
                    if b[j] == b'{' {
                        if let Some(len) = placeholder_len(&b[j..end]) {
                            j += len;
                            continue;
                        }
                        if let Some(at) = open(&mut depth, j) {
                            return Some(at);
                        }
                    }
                    j += 1;
                }
                i = end;
            }
            b'{' => {
                if let Some(at) = open(&mut depth, i) {
                    return Some(at);
                }
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// Length of a `{name}` placeholder (`{nic}`, `{host-port}`) at the start of `b`.
fn placeholder_len(b: &[u8]) -> Option<usize> {
    let name = b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_'))
        .count();
    (b.get(1 + name) == Some(&b'}')).then_some(name + 2)
}

/// Skip the `/* … */` comment at `at` (comments nest); an unclosed one skips only its `/`.
fn skip_block_comment(b: &[u8], at: usize) -> usize {
    let mut nest = 1usize;
    let mut i = at + 2;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            nest += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            nest -= 1;
            i += 2;
            if nest == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    at + 1
}

/// Position of `byte` at or after `from`.
fn memchr_from(byte: u8, b: &[u8], from: usize) -> Option<usize> {
    b[from..].iter().position(|&c| c == byte).map(|p| from + p)
}

/// The end of the string (or `#` keyword) starting at `at`: just past its closer, or, for a string that is
/// never closed, the end of its line (a one-line string) or of the text (a multi-line or raw one). The caller
/// treats everything up to there as string content: a `{` still counts, a `}` closes nothing, so an unclosed
/// string can neither hide nesting nor undo it, whatever `kdl`'s recovery makes of it.
fn skip_string(b: &[u8], at: usize) -> usize {
    let hashes = b[at..].iter().take_while(|&&c| c == b'#').count();
    let q = at + hashes;
    if b.get(q) != Some(&b'"') {
        // `#true`, `#null`, … : a keyword, not a string
        return q.max(at + 1);
    }
    // `"""` opens a multi-line string only when a newline follows it
    let multi = b[q..].starts_with(b"\"\"\"") && matches!(b.get(q + 3), Some(b'\n' | b'\r'));
    let open = if multi { 3 } else { 1 };
    let mut closer = Vec::with_capacity(open + hashes);
    closer.extend(std::iter::repeat_n(b'"', open));
    closer.extend(std::iter::repeat_n(b'#', hashes));
    let mut i = q + open;
    while i < b.len() {
        let c = b[i];
        if hashes == 0 && c == b'\\' {
            i += 2; // an escape: the next byte cannot close the string
            continue;
        }
        if !multi && hashes == 0 && c == b'\n' {
            return i;
        }
        if b[i..].starts_with(&closer) {
            return i + closer.len();
        }
        i += 1;
    }
    b.len()
}

fn too_deep(origin: Origin) -> Problem {
    Problem::new(
        Code::TooDeep,
        format!("the profile nests deeper than {KDL_MAX_DEPTH} levels"),
    )
    .at(origin, "too deep here")
    .help("a profile needs at most four levels of nesting; remove the extra braces")
}

struct Walker<'t> {
    text: &'t str,
    source: SourceId,
}

impl Walker<'_> {
    fn origin(&self, span: miette::SourceSpan) -> Origin {
        let start = span.offset().min(self.text.len());
        Origin::new(
            self.source,
            start..(start + span.len()).min(self.text.len()),
        )
    }

    /// The node's first line (up to `{` or the end of the line): what a problem about the node points at.
    fn head(&self, node: &KdlNode) -> Origin {
        let full = self.origin(node.span());
        let slice = &self.text[full.range()];
        let mut end = slice.find('\n').unwrap_or(slice.len());
        if node.children().is_some()
            && let Some(brace) = slice.rfind('{').filter(|b| *b < end)
        {
            end = brace;
        }
        let trimmed = slice[..end].trim_end().len();
        full.sub(0..trimmed.max(1))
    }

    fn node(&self, node: &KdlNode, depth: usize, problems: &mut Vec<Problem>) -> Node {
        let head = self.head(node);
        if depth > KDL_MAX_DEPTH {
            problems.push(too_deep(head));
            return Node::new(Value::Map(Vec::new()), head);
        }
        let name = node.name().value();
        let (args, props): (Vec<&KdlEntry>, Vec<&KdlEntry>) =
            node.entries().iter().partition(|e| e.name().is_none());
        let children = node.children().map(|c| c.nodes()).unwrap_or_default();

        let positional = POSITIONAL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
        // A node with a positional key takes one argument; more fall through to the map, which reports
        // the extra ones (`fabric roce ipv6`).
        // `name {}` is an empty map (in an `extends` layer it changes nothing), never an empty list.
        let block = node.children().is_some();
        if props.is_empty() && !block && (positional.is_none() || args.len() <= 1) {
            return match args.as_slice() {
                [one] => self.scalar(one),
                many => Node::new(
                    Value::Seq(many.iter().map(|a| self.scalar(a)).collect()),
                    head,
                ),
            };
        }
        if props.is_empty()
            && args.is_empty()
            && !children.is_empty()
            && children.iter().all(|c| c.name().value() == "-")
        {
            let items = children
                .iter()
                .map(|c| self.node(c, depth + 1, problems))
                .collect();
            return Node::new(Value::Seq(items), head);
        }

        let mut entries = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            match positional {
                Some(key) if i == 0 => {
                    let node = self.scalar(arg);
                    tree::push_entry(
                        &mut entries,
                        Entry {
                            key: Spanned::new(key.to_string(), node.origin),
                            node,
                        },
                        problems,
                    );
                }
                _ => problems.push(
                    Problem::new(
                        Code::TypeMismatch,
                        match positional {
                            Some(key) => {
                                format!("`{name}` takes one argument, its {key}; this is another")
                            }
                            None => format!("`{name}` takes no argument here"),
                        },
                    )
                    .at(self.origin(arg.span()), "unexpected argument")
                    .help(match positional {
                        Some(_) => {
                            "write other values as properties (`key=value`) or as child nodes"
                                .to_string()
                        }
                        None => format!(
                            "write it as a property, e.g. `{name} key=value`, or as a child node"
                        ),
                    }),
                ),
            }
        }
        for prop in props {
            let Some(key) = prop.name() else { continue };
            let value = self.prop_value(prop);
            tree::push_entry(
                &mut entries,
                Entry {
                    key: Spanned::new(key.value().to_string(), self.origin(key.span())),
                    node: value,
                },
                problems,
            );
        }
        for child in children {
            let value = self.node(child, depth + 1, problems);
            tree::push_entry(
                &mut entries,
                Entry {
                    key: Spanned::new(
                        child.name().value().to_string(),
                        self.origin(child.name().span()),
                    ),
                    node: value,
                },
                problems,
            );
        }
        Node::new(Value::Map(entries), head)
    }

    fn scalar(&self, entry: &KdlEntry) -> Node {
        let origin = self.origin(entry.span());
        self.value_node(entry.value(), origin)
    }

    fn prop_value(&self, entry: &KdlEntry) -> Node {
        let full = self.origin(entry.span());
        let name_end = entry
            .name()
            .map(|n| self.origin(n.span()).range().end)
            .unwrap_or(full.offset);
        let slice = &self.text[name_end.min(full.range().end)..full.range().end];
        let skip = slice
            .find('=')
            .map(|i| i + 1 + slice[i + 1..].len() - slice[i + 1..].trim_start().len())
            .unwrap_or(0);
        let start = name_end + skip;
        let origin = Origin::new(self.source, start.min(full.range().end)..full.range().end);
        self.value_node(entry.value(), origin)
    }

    fn value_node(&self, value: &KdlValue, origin: Origin) -> Node {
        let scalar = match value {
            KdlValue::String(s) => Scalar::Str(s.clone()),
            KdlValue::Integer(i) => Scalar::Int(*i),
            KdlValue::Float(f) => Scalar::Float(*f),
            KdlValue::Bool(b) => Scalar::Bool(*b),
            KdlValue::Null => Scalar::Null,
        };
        let content = match &scalar {
            Scalar::Str(s) => tree::content_origin(self.text, origin, s),
            _ => None,
        };
        Node {
            value: Value::Scalar(scalar),
            origin,
            content,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(node: &Node) -> Vec<String> {
        match &node.value {
            Value::Map(e) => e.iter().map(|e| e.key.value.clone()).collect(),
            other => panic!("expected map, got {other:?}"),
        }
    }

    #[test]
    fn profile_maps_positionals_props_and_children() {
        let text = "profile \"a/b\" extends=\"c\" {\n  fabric roce { traffic-class 96 }\n  capabilities \"IPC_LOCK\" \"SYS_NICE\"\n}\n";
        let node = parse(text, SourceId(0)).unwrap();
        assert_eq!(keys(&node), ["name", "extends", "fabric", "capabilities"]);
        let Value::Map(e) = &node.value else { panic!() };
        assert_eq!(keys(&e[2].node), ["kind", "traffic-class"]);
        assert!(matches!(&e[3].node.value, Value::Seq(v) if v.len() == 2));
        // The string's content origin points inside the quotes.
        let c = e[1].node.content.unwrap();
        assert_eq!(&text[c.range()], "c");
    }

    #[test]
    fn dash_children_are_a_list() {
        let node = parse("profile \"x\" { nads { - \"a\"; - \"b\" } }", SourceId(0)).unwrap();
        let Value::Map(e) = &node.value else { panic!() };
        assert!(matches!(&e[1].node.value, Value::Seq(v) if v.len() == 2));
    }

    #[test]
    fn duplicate_children_are_reported_with_both_spans() {
        let err = parse(
            "profile \"x\" {\n nccl debug=\"WARN\"\n nccl debug=\"INFO\"\n}",
            SourceId(0),
        )
        .unwrap_err();
        assert_eq!(err[0].code, Code::DuplicateKey);
        assert_eq!(err[0].labels.len(), 2);
    }

    #[test]
    fn syntax_errors_and_missing_profile_are_coded() {
        let err = parse("profile \"x\" {", SourceId(0)).unwrap_err();
        assert!(err.iter().all(|p| p.code == Code::Syntax));
        let err = parse("", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::Syntax);
        let err = parse("// nothing\n", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::Syntax);
        let err = parse("fabric roce\n", SourceId(0)).unwrap_err();
        assert!(err.iter().any(|p| p.code == Code::MissingKey));
        let err = parse("profile \"a\" {}\nprofile \"b\" {}", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::UnknownKey);
    }

    #[test]
    fn brace_depth_reads_strings_and_comments_as_kdl_does() {
        assert_eq!(brace_depth("a { b { } }", 2), None);
        assert_eq!(brace_depth("a { b { c { } } }", 2), Some(10));
        // braces in comments open nothing; placeholders in strings, raw strings and multi-line strings neither
        assert_eq!(brace_depth("a // {{{{\n{} /* { /* { */ { */ {}", 1), None);
        assert_eq!(brace_depth("a \"{host-port}-x{nic}\" {}", 1), None);
        assert_eq!(
            brace_depth("a #\"{nic}\"{port}\"# #\"\"\"\n{index1}\n\"\"\"# {}", 1),
            None
        );
        assert_eq!(brace_depth("a \"\\\"{nic}\" {}", 1), None);
        // any other `{` in a string counts (kdl's recovery may read a rejected string as code) ...
        assert_eq!(brace_depth("a \"{{\" {}", 1), Some(4));
        assert_eq!(brace_depth("a \"\"\"\n{ x\n\"\"\" {}", 1), Some(14));
        // ... and a `}` in a string never closes a block
        assert_eq!(brace_depth("a { \"}}}}\" b { c {", 2), Some(17));
        // an unclosed block comment hides nothing
        assert_eq!(brace_depth("/* a { b { c {", 2), Some(13));
        // keywords are not strings
        assert_eq!(brace_depth("a #true { b #null { c {", 2), Some(22));
        // an unterminated string hides nothing: the braces after its quote count ...
        assert_eq!(brace_depth("a \"x\n b { c { d {", 2), Some(16));
        assert_eq!(brace_depth("a \"x { b { c {\n", 2), Some(13));
        // ... and its `}` close nothing (fuzzer input: `mode="tc} } } } } }` undid six levels)
        assert_eq!(brace_depth("a { b { x=\"} } }\n c {", 2), Some(20));
        assert_eq!(brace_depth("a \"\"\"x { b { c {", 2), Some(15));
        assert_eq!(brace_depth("a \"\"\"\n { b { c {", 2), Some(15));
        // a raw string that holds a quote does not hide the braces after it
        assert_eq!(
            brace_depth("#\"\"\"\"# a { #\"\"\"\"# b { c {", 2),
            Some(24)
        );
    }

    /// kdl-org/kdl-rs#177: nested slashdashed children take kdl 2^n time. `fuzz/` (profile_kdl) found the
    /// inputs in `tests/fixtures/fuzz/` (1.5–2.3 KB, 4 to over 60 s each, some hiding braces in strings kdl
    /// rejects); each is now refused in milliseconds with a coded problem.
    #[test]
    fn slashdash_nesting_that_stalls_kdl_is_refused_first() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                String::from_utf8_lossy(&std::fs::read(e.unwrap().path()).unwrap()).into_owned()
            })
            .collect();
        assert!(
            found.len() >= 9,
            "the fuzzer's inputs are in {}",
            dir.display()
        );
        found.extend([
            "a /-{\n".repeat(40),
            format!("{}{}", "a /-{ ".repeat(40), "}".repeat(40)),
            "/- a {\n b\n".repeat(40),
        ]);
        for text in found {
            let t = std::time::Instant::now();
            let err = parse(&text, SourceId(0)).unwrap_err();
            assert_eq!(err[0].code, Code::TooDeep, "{text:.60}");
            assert!(t.elapsed() < std::time::Duration::from_secs(1));
        }
        // at the cap, the worst nesting still parses quickly
        let at_cap = format!(
            "{}{}",
            "a /-{ ".repeat(KDL_MAX_DEPTH),
            "}".repeat(KDL_MAX_DEPTH)
        );
        let t = std::time::Instant::now();
        let _ = parse(&at_cap, SourceId(0));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let text = format!(
            "profile \"x\" {}{}",
            "a { ".repeat(10_000),
            "}".repeat(10_000)
        );
        let err = parse(&text, SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::TooDeep);
    }
}
