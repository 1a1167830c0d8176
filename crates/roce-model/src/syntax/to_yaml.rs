//! [`Node`] tree → YAML text that the YAML front end reads back to the same tree (origins aside): how a
//! built-in, written in KDL, is shown as YAML (`roce profiles show NAME --yaml`).
//!
//! Block style, with lists of scalars in flow style (`capabilities: [IPC_LOCK]`). A string is written plain
//! only when no YAML reading could take it for anything else; every other string is double-quoted.

use std::fmt::Write as _;

use crate::tree::{Node, Scalar, Value};

/// The YAML document of `node` (a profile's top-level map).
pub(crate) fn emit(node: &Node) -> String {
    let mut out = String::new();
    match &node.value {
        Value::Map(_) | Value::Seq(_) if is_empty(&node.value) => flow(&node.value, &mut out),
        Value::Map(_) | Value::Seq(_) => block(&node.value, 0, &mut out),
        Value::Scalar(s) => scalar(s, &mut out),
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn block(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Map(entries) => {
            for e in entries {
                pad(indent, out);
                string(&e.key.value, out);
                out.push(':');
                after_key(&e.node.value, indent, out);
            }
        }
        Value::Seq(items) => {
            for item in items {
                pad(indent, out);
                out.push('-');
                match &item.value {
                    // `- key: v` with the map's other keys under the first
                    Value::Map(_) if !is_empty(&item.value) => {
                        let mut inner = String::new();
                        block(&item.value, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(&inner[indent + 2..]);
                    }
                    Value::Seq(_) if !is_empty(&item.value) && !all_scalars(&item.value) => {
                        out.push('\n');
                        block(&item.value, indent + 2, out);
                    }
                    other => {
                        out.push(' ');
                        flow(other, out);
                        out.push('\n');
                    }
                }
            }
        }
        Value::Scalar(_) => unreachable!("block() is called with collections"),
    }
}

/// What follows `key:`.
fn after_key(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Map(_) if !is_empty(value) => {
            out.push('\n');
            block(value, indent + 2, out);
        }
        Value::Seq(_) if !is_empty(value) && !all_scalars(value) => {
            out.push('\n');
            block(value, indent + 2, out);
        }
        other => {
            out.push(' ');
            flow(other, out);
            out.push('\n');
        }
    }
}

/// A scalar, an empty collection or a list of scalars, on one line.
fn flow(value: &Value, out: &mut String) {
    match value {
        Value::Scalar(s) => scalar(s, out),
        Value::Map(entries) => {
            debug_assert!(entries.is_empty());
            out.push_str("{}");
        }
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(&item.value, out);
            }
            out.push(']');
        }
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Map(e) => e.is_empty(),
        Value::Seq(i) => i.is_empty(),
        Value::Scalar(_) => false,
    }
}

fn all_scalars(value: &Value) -> bool {
    matches!(value, Value::Seq(items) if items.iter().all(|i| matches!(i.value, Value::Scalar(_))))
}

fn pad(indent: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar(s: &Scalar, out: &mut String) {
    match s {
        Scalar::Str(s) => string(s, out),
        Scalar::Int(i) => {
            let _ = write!(out, "{i}");
        }
        // YAML's spelling; the YAML front end refuses both (no profile field takes a float)
        Scalar::Float(f) if f.is_nan() => out.push_str(".nan"),
        Scalar::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { ".inf" } else { "-.inf" })
        }
        // `{:?}` keeps a `.0` or an exponent, so the value reads back as a float, not an integer
        Scalar::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        Scalar::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Scalar::Null => out.push_str("null"),
    }
}

/// Plain when it starts with a letter or `_`, holds only `[A-Za-z0-9_./-]` and is no YAML 1.1 or 1.2
/// keyword; double-quoted otherwise.
fn string(s: &str, out: &mut String) {
    const KEYWORDS: &[&str] = &["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(s));
    if plain {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            // YAML's printable characters, less its line breaks (U+2028, U+2029), which would fold
            ' '..='~'
            | '\u{a0}'..='\u{2027}'
            | '\u{202a}'..='\u{d7ff}'
            | '\u{e000}'..='\u{fefe}' => out.push(c),
            '\u{ff00}'..='\u{fffd}' | '\u{10000}'.. => out.push(c),
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Origin, SourceId, Spanned};
    use crate::tree::Entry;
    use proptest::prelude::*;

    fn at() -> Origin {
        Origin::new(SourceId(0), 0..0)
    }

    /// The tree without origins, for comparing a tree with its YAML read back.
    fn shape(node: &Node) -> String {
        match &node.value {
            Value::Map(entries) => {
                let inner: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{:?}: {}", e.key.value, shape(&e.node)))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
            Value::Seq(items) => {
                let inner: Vec<String> = items.iter().map(shape).collect();
                format!("[{}]", inner.join(", "))
            }
            Value::Scalar(s) => format!("{s:?}"),
        }
    }

    fn scalar() -> impl Strategy<Value = Scalar> {
        prop_oneof![
            // keywords, numbers, YAML indicators, quotes, escapes, line breaks, control and non-ASCII
            "(true|no|Null|~|0|010|1e3|0x1f|-|- a|: |#x|a: b|a #b|&a|\\*a|!t|%x|@x|`x|'x|\"x|\\{a\\}|\\[a\\]|,| x|x |\u{85}|\u{2028}|\u{7f}|\u{1}|\u{feff}|é|\\\\|[a-z0-9_./\\-]{0,6}|\n|\t){0,3}"
                .prop_map(Scalar::Str),
            any::<i64>().prop_map(|i| Scalar::Int(i.into())),
            // finite only: the YAML front end refuses `.inf` and `.nan`, which KDL's `#inf` and `#nan` become
            prop_oneof![
                any::<f64>().prop_filter("finite", |f| f.is_finite()),
                Just(1e300),
                Just(-0.5),
            ]
            .prop_map(Scalar::Float),
            any::<bool>().prop_map(Scalar::Bool),
            Just(Scalar::Null),
        ]
    }

    fn node(value: Value) -> Node {
        Node::new(value, at())
    }

    fn tree() -> impl Strategy<Value = Value> {
        let leaf = scalar().prop_map(Value::Scalar);
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone().prop_map(node), 0..4).prop_map(Value::Seq),
                proptest::collection::btree_map("[a-z]{1,3}|[ :#\"é0-9]{1,3}", inner, 0..4)
                    .prop_map(|m| Value::Map(
                        m.into_iter()
                            .map(|(k, v)| Entry {
                                key: Spanned::new(k, at()),
                                node: node(v),
                            })
                            .collect()
                    )),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn yaml_reads_back_the_tree(entries in proptest::collection::btree_map("[a-z-]{1,8}", tree(), 0..6)) {
            let tree = node(Value::Map(entries.into_iter().map(|(k, v)| Entry {
                key: Spanned::new(k, at()),
                node: node(v),
            }).collect()));
            let text = emit(&tree);
            let back = super::super::yaml::parse(&text, SourceId(0));
            prop_assert!(back.is_ok(), "{text}\n{back:?}");
            prop_assert_eq!(shape(&back.unwrap()), shape(&tree), "{}", text);
        }
    }

    #[test]
    fn strings_are_plain_only_when_unambiguous() {
        let one = |s: &str| {
            let mut out = String::new();
            string(s, &mut out);
            out
        };
        assert_eq!(one("rdma/ib"), "rdma/ib");
        assert_eq!(
            one("backend.coreweave.cloud/flavor"),
            "backend.coreweave.cloud/flavor"
        );
        for quoted in [
            "96",
            "yes",
            "Off",
            "",
            "fd02::/16",
            "{nic}",
            "a b",
            "-x",
            ".inf",
        ] {
            assert_eq!(one(quoted), format!("\"{quoted}\""));
        }
        assert_eq!(one("a\"\\\u{2028}\u{1}"), r#""a\"\\\u2028\u0001""#);
    }
}
