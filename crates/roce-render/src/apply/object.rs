//! [`super::apply_object`]'s front end: one parsed JSON object in, as the spanned [`Node`] and the [`Yaml`]
//! value `apply` decides on (the decided values go back out through [`yaml::to_json`]).
//!
//! What comes in is what [`manifest::parse`](roce_model::plumbing::manifest::parse) and
//! [`reemit::to_yaml`](super::reemit::to_yaml) make of the object written as YAML ([`to_text`]): the
//! same scalar types, strings as strings, every number, boolean and null as [`Yaml::Raw`] in the spelling
//! that text had. Only the places differ: every origin is the start of an empty source, so a caller that
//! needs problems with places runs [`super::apply`] on [`to_text`] instead.

use roce_model::plumbing::tree::{self, Entry, Node, Scalar};
use roce_model::source::{Origin, Spanned};
use serde_json::Value;

use crate::yaml::{self, Yaml};

/// `value` as one spanned tree, every origin `at`.
pub(super) fn node(value: &Value, at: Origin) -> Node {
    let v = match value {
        Value::Object(map) => tree::Value::Map(
            map.iter()
                .map(|(k, v)| Entry {
                    key: Spanned::new(k.clone(), at),
                    node: node(v, at),
                })
                .collect(),
        ),
        Value::Array(items) => tree::Value::Seq(items.iter().map(|i| node(i, at)).collect()),
        Value::String(s) => tree::Value::Scalar(Scalar::Str(s.clone())),
        Value::Number(n) => tree::Value::Scalar(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Scalar::Int(i.into()),
            (None, Some(u)) => Scalar::Int(u.into()),
            (None, None) => Scalar::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::Bool(b) => tree::Value::Scalar(Scalar::Bool(*b)),
        Value::Null => tree::Value::Scalar(Scalar::Null),
    };
    Node::new(v, at)
}

/// `value` as the [`Yaml`] that `reemit::to_yaml` gives for [`to_text`] of it: a string is a string (a
/// block when it has lines), anything else [`Yaml::Raw`] as serde_json spells it, which is how [`to_text`]
/// writes it.
pub(super) fn yaml(value: &Value) -> Yaml {
    match value {
        Value::Object(map) => Yaml::Map(
            map.iter()
                .map(|(k, v)| (k.clone().into(), self::yaml(v)))
                .collect(),
        ),
        Value::Array(items) => Yaml::Seq(items.iter().map(self::yaml).collect()),
        Value::String(s) if s.contains('\n') => Yaml::Block(s.clone()),
        Value::String(s) => Yaml::Str(s.clone()),
        Value::Number(n) => Yaml::Raw(n.to_string()),
        Value::Bool(b) => Yaml::Raw(b.to_string()),
        Value::Null => Yaml::Raw("null".to_string()),
    }
}

/// `value` as block YAML (roce's own writer): the text [`super::apply`] is given when problems must point
/// at places in the object.
pub(super) fn to_text(value: &Value) -> String {
    yaml::to_string(&yaml::from_json(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "roce.dev/profile": "a/b",
            "s": ["yes", "no", "on", "1", "010", "0x1F", "1.5", "null", "~", "", " lead", "a: b", "- x", "#c", "true", "'q'", "\"d\"", "é"],
            "multi": "line one\nline two\n",
            "n": [0, -3, 1.5, 1e300, 9007199254740993u64, 18446744073709551615u64, -0.0, 1e-7],
            "b": [true, false, null],
            "empty": {}, "none": [],
            "nested": {"k": [{"a": {}}, []]}
        })
    }

    #[test]
    fn to_text_reads_back_as_the_same_json() {
        let v = sample();
        let text = to_text(&v);
        let back: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, v, "{text}");
    }

    #[test]
    fn the_json_front_end_is_what_the_manifest_reader_makes_of_to_text() {
        let v = sample();
        let text = to_text(&v);
        let mut sources = roce_model::source::Sources::default();
        let id = sources.add(roce_model::Source::new("o", text.clone()));
        let parsed = roce_model::plumbing::manifest::parse(&text, id).expect("parses");
        assert_eq!(parsed.len(), 1);
        let origin = Origin::new(id, 0..0);
        assert_eq!(
            format!("{:?}", strip(&node(&v, origin))),
            format!("{:?}", strip(&parsed[0])),
            "{text}"
        );
        // Same scalars; strings may differ in spelling only (plain or quoted where the text has them so).
        let written = yaml(&v);
        let read = super::super::reemit::to_yaml(&parsed[0], &text);
        assert_eq!(
            yaml::to_json(written.clone()),
            yaml::to_json(read),
            "{text}"
        );
        assert_eq!(yaml::to_json(written), v);
    }

    /// The values of a tree without places.
    fn strip(n: &Node) -> tree::Value {
        match &n.value {
            tree::Value::Map(es) => tree::Value::Map(
                es.iter()
                    .map(|e| Entry {
                        key: Spanned::new(e.key.value.clone(), Origin::new(n.origin.source, 0..0)),
                        node: Node::new(strip(&e.node), Origin::new(n.origin.source, 0..0)),
                    })
                    .collect(),
            ),
            tree::Value::Seq(items) => tree::Value::Seq(
                items
                    .iter()
                    .map(|i| Node::new(strip(i), Origin::new(n.origin.source, 0..0)))
                    .collect(),
            ),
            tree::Value::Scalar(s) => tree::Value::Scalar(s.clone()),
        }
    }
}
