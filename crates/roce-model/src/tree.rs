//! The spanned document tree both front ends produce.
//!
//! KDL and YAML are first turned into this one shape (maps, sequences, scalars, each with an [`Origin`]);
//! `extends` layers are merged here; a single walker then turns the tree into the typed model. So the two
//! syntaxes cannot drift apart: they differ only in how text becomes a tree.

use crate::problem::{Code, Problem};
use crate::source::{Origin, Spanned};

/// Deepest nesting a profile may have. The real format needs 4 levels.
pub(crate) const MAX_DEPTH: usize = 32;

/// A scalar value as the syntax typed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A string (KDL string, YAML quoted or plain non-numeric scalar).
    Str(String),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A boolean (`#true` in KDL, `true` in YAML).
    Bool(bool),
    /// Null (`#null`, `~`): in an `extends` layer it removes the inherited value.
    Null,
}

impl Scalar {
    /// A short name of the type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Scalar::Str(_) => "a string",
            Scalar::Int(_) => "an integer",
            Scalar::Float(_) => "a floating-point number",
            Scalar::Bool(_) => "a boolean",
            Scalar::Null => "null",
        }
    }
}

/// One key and its value.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The key with the place it was written.
    pub key: Spanned<String>,
    /// The value.
    pub node: Node,
}

/// A node of the tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// For maps: the head of the node (KDL node line, YAML key); for scalars: the literal.
    pub origin: Origin,
    /// For string scalars whose source text is the value verbatim (no escapes): where the text starts,
    /// so problems can point at one token inside a list value.
    pub content: Option<Origin>,
}

/// A node's value.
#[derive(Debug, Clone)]
pub enum Value {
    /// Keys in the author's order.
    Map(Vec<Entry>),
    /// A list.
    Seq(Vec<Node>),
    /// A scalar.
    Scalar(Scalar),
}

impl Value {
    /// A short name of the type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Map(_) => "a map",
            Value::Seq(_) => "a list",
            Value::Scalar(s) => s.type_name(),
        }
    }
}

impl Node {
    /// A node without content offset.
    pub fn new(value: Value, origin: Origin) -> Self {
        Node {
            value,
            origin,
            content: None,
        }
    }

    /// The origin of a sub-range of a string value (a list token), or the whole value when the source
    /// text is not the value verbatim.
    pub fn token_origin(&self, range: std::ops::Range<usize>) -> Origin {
        match self.content {
            Some(c) => c.sub(range),
            None => self.origin,
        }
    }
}

/// Find the verbatim text of a string value inside the literal's span (skipping quotes).
pub fn content_origin(text: &str, literal: Origin, value: &str) -> Option<Origin> {
    let slice = text.get(literal.range())?;
    if value.is_empty() {
        return None;
    }
    let at = slice.find(value)?;
    Some(Origin {
        source: literal.source,
        offset: literal.offset + at,
        len: value.len(),
    })
}

/// Push an entry into a map, reporting a duplicate key with both places.
pub(crate) fn push_entry(entries: &mut Vec<Entry>, entry: Entry, problems: &mut Vec<Problem>) {
    if let Some(first) = entries.iter().find(|e| e.key.value == entry.key.value) {
        problems.push(
            Problem::new(
                Code::DuplicateKey,
                format!("`{}` is given twice", entry.key.value),
            )
            .at(entry.key.origin, "given again here")
            .at(first.key.origin, "first given here")
            .help("keep one of them; a later `extends` layer is the way to override a value"),
        );
        return;
    }
    entries.push(entry);
}

/// Merge an `extends` layer over its base: maps merge key by key, everything else is replaced by the
/// upper layer, and a null in the upper layer removes the key.
pub(crate) fn merge(base: Node, upper: Node) -> Node {
    merge_at(base, upper, true)
}

fn merge_at(base: Node, upper: Node, top: bool) -> Node {
    match (base.value, upper.value) {
        (Value::Map(mut below), Value::Map(above)) => {
            for mut entry in above {
                // A base section in short form (`fabric infiniband`) under a layer that sets keys of it
                // (`fabric traffic-class=96`): keep the base's positional value unless the layer sets it.
                let positional = crate::fields::short_form(&entry.key.value).filter(|_| top);
                if let (Some(key), Some(old)) = (
                    positional,
                    below.iter().find(|e| e.key.value == entry.key.value),
                ) && let (Value::Scalar(s), Value::Map(keys)) =
                    (&old.node.value, &mut entry.node.value)
                    && *s != Scalar::Null
                    && !keys.iter().any(|e| e.key.value == key)
                {
                    keys.insert(
                        0,
                        Entry {
                            key: Spanned::new(key.to_string(), old.node.origin),
                            node: old.node.clone(),
                        },
                    );
                }
                let pos = below.iter().position(|e| e.key.value == entry.key.value);
                match (pos, &entry.node.value) {
                    (Some(i), Value::Scalar(Scalar::Null)) => {
                        below.remove(i);
                    }
                    (None, Value::Scalar(Scalar::Null)) => {}
                    (Some(i), _) => {
                        let old = below.remove(i);
                        below.insert(
                            i,
                            Entry {
                                key: entry.key,
                                node: merge_at(old.node, entry.node, false),
                            },
                        );
                    }
                    (None, _) => below.push(entry),
                }
            }
            Node {
                value: Value::Map(below),
                origin: upper.origin,
                content: None,
            }
        }
        (_, value) => Node {
            value,
            origin: upper.origin,
            content: upper.content,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn o(a: usize) -> Origin {
        Origin::new(SourceId(0), a..a + 1)
    }
    fn scalar(s: &str, at: usize) -> Node {
        Node::new(Value::Scalar(Scalar::Str(s.into())), o(at))
    }
    fn map(entries: Vec<(&str, Node)>) -> Node {
        Node::new(
            Value::Map(
                entries
                    .into_iter()
                    .map(|(k, node)| Entry {
                        key: Spanned::new(k.into(), o(0)),
                        node,
                    })
                    .collect(),
            ),
            o(0),
        )
    }

    #[test]
    fn merge_overrides_scalars_keeps_others_and_null_removes() {
        let base = map(vec![
            ("a", scalar("1", 1)),
            ("b", map(vec![("x", scalar("2", 2)), ("y", scalar("3", 3))])),
            ("c", scalar("4", 4)),
        ]);
        let upper = map(vec![
            ("b", map(vec![("y", scalar("9", 9))])),
            ("c", Node::new(Value::Scalar(Scalar::Null), o(5))),
        ]);
        let merged = merge(base, upper);
        let Value::Map(entries) = merged.value else {
            panic!("map")
        };
        let keys: Vec<_> = entries.iter().map(|e| e.key.value.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        let Value::Map(b) = &entries[1].node.value else {
            panic!("map")
        };
        assert_eq!(b[0].node.origin.offset, 2, "x kept from base");
        assert_eq!(b[1].node.origin.offset, 9, "y from upper layer");
    }

    #[test]
    fn a_layer_keeps_the_positional_value_of_a_short_form_base() {
        // `fabric infiniband` under `fabric traffic-class=96`.
        let base = map(vec![("fabric", scalar("infiniband", 1))]);
        let upper = map(vec![(
            "fabric",
            map(vec![("traffic-class", scalar("96", 2))]),
        )]);
        let Value::Map(top) = merge(base, upper).value else {
            panic!("map")
        };
        let Value::Map(fabric) = &top[0].node.value else {
            panic!("map")
        };
        let keys: Vec<_> = fabric.iter().map(|e| e.key.value.as_str()).collect();
        assert_eq!(keys, ["kind", "traffic-class"]);
        // A short form in the upper layer still replaces the whole section.
        let base = map(vec![(
            "multus",
            map(vec![
                ("mode", scalar("per-port", 1)),
                ("name", scalar("x", 2)),
            ]),
        )]);
        let upper = map(vec![("multus", scalar("none", 3))]);
        let Value::Map(top) = merge(base, upper).value else {
            panic!("map")
        };
        assert!(matches!(&top[0].node.value, Value::Scalar(Scalar::Str(s)) if s == "none"));
    }
}
