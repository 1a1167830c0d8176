//! YAML → [`Node`] tree with serde-saphyr, keeping a span for every key and value.
//!
//! The YAML form is the KDL form written as maps: `fabric: {kind: roce, traffic-class: 96}`. Parsing uses
//! the YAML 1.2 core schema with strict booleans (`yes` stays a string) and numbers with leading zeros kept
//! as strings, so `010` reaches the NCCL integer rule instead of silently becoming 10. Structural YAML errors
//! stop at the first one (serde cannot recover); semantic problems are all reported.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned as YSpanned;

use crate::problem::{Code, Problem};
use crate::source::{Origin, SourceId, Spanned};
use crate::tree::{self, Entry, MAX_DEPTH, Node, Scalar, Value};

/// Parse a YAML profile into a tree.
pub(crate) fn parse(text: &str, source: SourceId) -> Result<Node, Vec<Problem>> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.with_snippet = false;
    // Duplicates reach the tree, which reports them with both places (`roce::duplicate_key`).
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    if let Some(budget) = options.budget.as_mut() {
        budget.max_depth = MAX_DEPTH;
    }
    let parsed: Result<YSpanned<YVal>, _> = serde_saphyr::from_str_with_options(text, options);
    let root = match parsed {
        Ok(root) => root,
        Err(err) => return Err(vec![syntax_problem(text, source, &err)]),
    };
    let mut problems = Vec::new();
    let node = convert(text, source, root, &mut problems);
    if matches!(node.value, Value::Scalar(Scalar::Null)) {
        return Err(vec![super::empty(text, source)]);
    }
    if !matches!(node.value, Value::Map(_)) {
        problems.push(
            Problem::new(
                Code::TypeMismatch,
                format!("a YAML profile is a map, not {}", node.value.type_name()),
            )
            .at(node.origin, "")
            .help("start the file with `name: team/profile` and the profile's keys"),
        );
    }
    if problems.is_empty() {
        Ok(node)
    } else {
        Err(problems)
    }
}

fn syntax_problem(text: &str, source: SourceId, err: &serde_saphyr::Error) -> Problem {
    let location = err.location();
    let origin = location
        .as_ref()
        .and_then(|l| byte_range(text, l.span()).or_else(|| line_col_range(text, l)))
        .map(|r| Origin::new(source, r))
        .unwrap_or_else(|| Origin::new(source, 0..text.len().min(1)));
    let message = err.to_string();
    let first_line = message.lines().next().unwrap_or("invalid YAML").trim();
    // The place is shown by the label; drop saphyr's " at line L, column C" from the message.
    let first_line = first_line
        .rfind(" at line ")
        .map_or(first_line, |i| &first_line[..i]);
    if first_line.contains("budget breached") && first_line.contains("Depth")
        || first_line.contains("recursion")
    {
        return tree_too_deep(origin);
    }
    let (label, help) = if first_line.starts_with("unclosed") {
        (
            "opened here and never closed",
            "close it; if the file was cut off, the rest of the profile is missing too",
        )
    } else {
        (
            "here",
            "fix the YAML syntax; see docs/reference.md for the profile format",
        )
    };
    Problem::new(Code::Syntax, format!("invalid YAML: {first_line}"))
        .at(origin, label)
        .help(help)
}

fn tree_too_deep(origin: Origin) -> Problem {
    Problem::new(
        Code::TooDeep,
        format!("the profile nests deeper than {MAX_DEPTH} levels"),
    )
    .at(origin, "too deep here")
    .help("a profile needs at most four levels of nesting; remove the extra levels")
}

/// A byte range from a 1-based line and column (in characters), for errors saphyr reports without a byte
/// offset. Points at the character there (or the end of the text).
fn line_col_range(text: &str, l: &serde_saphyr::Location) -> Option<std::ops::Range<usize>> {
    let line = usize::try_from(l.line()).ok()?.checked_sub(1)?;
    let column = usize::try_from(l.column()).ok()?.saturating_sub(1);
    let start = if line == 0 {
        0
    } else {
        text.match_indices('\n').nth(line - 1).map(|(i, _)| i + 1)?
    };
    let rest = &text[start..];
    let at = rest
        .char_indices()
        .take_while(|(_, c)| *c != '\n')
        .nth(column)
        .map_or_else(|| rest.find('\n').unwrap_or(rest.len()), |(i, _)| i);
    let len = rest[at..]
        .chars()
        .next()
        .filter(|c| *c != '\n')
        .map_or(0, char::len_utf8);
    Some(start + at..start + at + len)
}

/// The byte range of a serde-saphyr span in `text`, clamped to the text.
pub(crate) fn byte_range(text: &str, span: serde_saphyr::Span) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(span.byte_offset()?).ok()?.min(text.len());
    let len = usize::try_from(span.byte_len().unwrap_or(0)).ok()?;
    Some(start..(start + len).min(text.len()))
}

fn origin_of(text: &str, source: SourceId, loc: &serde_saphyr::Location) -> Origin {
    let range = byte_range(text, loc.span()).unwrap_or(0..0);
    Origin::new(source, range)
}

fn convert(text: &str, source: SourceId, v: YSpanned<YVal>, problems: &mut Vec<Problem>) -> Node {
    let origin = origin_of(text, source, &v.referenced);
    match v.value {
        YVal::Map(pairs) => {
            let mut entries = Vec::new();
            for (k, val) in pairs {
                let key_origin = origin_of(text, source, &k.referenced);
                let key = match k.value {
                    YVal::Scalar(Scalar::Str(s)) => s,
                    YVal::Scalar(Scalar::Int(i)) => i.to_string(),
                    YVal::Scalar(Scalar::Bool(b)) => b.to_string(),
                    other => {
                        problems.push(
                            Problem::new(
                                Code::TypeMismatch,
                                format!("a key must be a string, not {}", other.type_name()),
                            )
                            .at(key_origin, "")
                            .help("write keys as plain strings"),
                        );
                        continue;
                    }
                };
                let mut node = convert(text, source, val, problems);
                // A map's place is its key, the YAML counterpart of a KDL node's head; so is a block
                // list's, whose own span is empty (a flow list keeps its `[…]`).
                if matches!(node.value, Value::Map(_))
                    || matches!(node.value, Value::Seq(_)) && node.origin.len == 0
                {
                    node.origin = key_origin;
                }
                tree::push_entry(
                    &mut entries,
                    Entry {
                        key: Spanned::new(key, key_origin),
                        node,
                    },
                    problems,
                );
            }
            let origin = entries.first().map_or(origin, |e| e.key.origin);
            Node::new(Value::Map(entries), origin)
        }
        YVal::Seq(items) => Node::new(
            Value::Seq(
                items
                    .into_iter()
                    .map(|i| convert(text, source, i, problems))
                    .collect(),
            ),
            origin,
        ),
        YVal::Scalar(s) => {
            let content = match &s {
                Scalar::Str(v) => tree::content_origin(text, origin, v),
                _ => None,
            };
            Node {
                value: Value::Scalar(s),
                origin,
                content,
            }
        }
    }
}

/// A YAML value with serde-saphyr spans on every key and value: the serde-facing mirror of
/// [`Node`], before source ids are attached. Shared with other readers of YAML (manifests in
/// `roce-render`'s `apply`), so there is one visitor for spanned YAML in the workspace.
#[derive(Debug)]
pub(crate) enum YVal {
    /// A mapping, in document order.
    Map(Vec<(YSpanned<YVal>, YSpanned<YVal>)>),
    /// A sequence.
    Seq(Vec<YSpanned<YVal>>),
    /// A scalar as YAML typed it.
    Scalar(Scalar),
}

impl YVal {
    /// A short name of the type, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            YVal::Map(_) => "a map",
            YVal::Seq(_) => "a list",
            YVal::Scalar(s) => s.type_name(),
        }
    }
}

impl<'de> Deserialize<'de> for YVal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(YVisitor)
    }
}

struct YVisitor;

impl<'de> Visitor<'de> for YVisitor {
    type Value = YVal;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Int(v.into())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Int(v.into())))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Int(v)))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<YVal, E> {
        Ok(YVal::Scalar(
            i128::try_from(v).map_or(Scalar::Str(v.to_string()), Scalar::Int),
        ))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Float(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Str(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Str(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<YVal, E> {
        Ok(YVal::Scalar(Scalar::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YVal, D::Error> {
        YVal::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YVal, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<YSpanned<YVal>>()? {
            items.push(item);
        }
        Ok(YVal::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YVal, A::Error> {
        let mut pairs = Vec::new();
        while let Some(key) = map.next_key::<YSpanned<YVal>>()? {
            let value = map.next_value::<YSpanned<YVal>>()?;
            pairs.push((key, value));
        }
        Ok(YVal::Map(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_keep_key_and_value_spans() {
        let text = "name: a/b\nfabric:\n  kind: roce\n  traffic-class: 96\nnccl:\n  ib-hca: \"ibp,mlx5\"\n";
        let node = parse(text, SourceId(0)).unwrap();
        let Value::Map(e) = &node.value else { panic!() };
        assert_eq!(&text[e[0].key.origin.range()], "name");
        assert_eq!(&text[e[0].node.origin.range()], "a/b");
        let Value::Map(f) = &e[1].node.value else {
            panic!()
        };
        assert!(matches!(f[1].node.value, Value::Scalar(Scalar::Int(96))));
        let Value::Map(n) = &e[2].node.value else {
            panic!()
        };
        let c = n[0].node.content.unwrap();
        assert_eq!(&text[c.range()], "ibp,mlx5");
    }

    #[test]
    fn yes_and_leading_zero_stay_strings() {
        let node = parse("a: yes\nb: 010\nc: true\n", SourceId(0)).unwrap();
        let Value::Map(e) = &node.value else { panic!() };
        assert!(matches!(&e[0].node.value, Value::Scalar(Scalar::Str(s)) if s == "yes"));
        assert!(matches!(&e[1].node.value, Value::Scalar(Scalar::Str(s)) if s == "010"));
        assert!(matches!(e[2].node.value, Value::Scalar(Scalar::Bool(true))));
    }

    #[test]
    fn errors_are_coded() {
        let err = parse("a: [1, 2\n", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::Syntax);
        let err = parse("a: 1\na: 2\n", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::DuplicateKey, "{}", err[0].message);
        assert_eq!(err[0].labels.len(), 2);
        let err = parse("# nothing\n", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::Syntax);
        let text = "a: 1\nb: [1, 2\n";
        let err = parse(text, SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::Syntax);
        assert_eq!(err[0].message, "invalid YAML: unclosed bracket '['");
        assert_eq!(err[0].labels[0].origin.offset, text.find('[').unwrap());
        let err = parse("- 1\n", SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::TypeMismatch);
        let deep = format!("a: {}{}\n", "[".repeat(500), "]".repeat(500));
        let err = parse(&deep, SourceId(0)).unwrap_err();
        assert_eq!(err[0].code, Code::TooDeep, "{}", err[0].message);
    }
}
