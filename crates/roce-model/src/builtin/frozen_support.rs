//! Short constructors for the built-ins' trees, called by the code that `build.rs` generates.

// which ones the generated code calls depends on what the built-ins hold
#![allow(dead_code)]

use crate::source::{Origin, SourceId, Spanned};
use crate::tree::{Entry, Node, Scalar, Value};

pub(super) fn origin(id: SourceId, a: usize, b: usize) -> Origin {
    Origin::new(id, a..b)
}

pub(super) fn n(value: Value, origin: Origin, content: Option<Origin>) -> Node {
    Node {
        value,
        origin,
        content,
    }
}

pub(super) fn e(key: &str, at: Origin, node: Node) -> Entry {
    Entry {
        key: Spanned::new(key.to_string(), at),
        node,
    }
}

pub(super) fn map(entries: Vec<Entry>) -> Value {
    Value::Map(entries)
}

pub(super) fn seq(items: Vec<Node>) -> Value {
    Value::Seq(items)
}

pub(super) fn st(s: &str) -> Value {
    Value::Scalar(Scalar::Str(s.to_string()))
}

pub(super) fn int(i: i128) -> Value {
    Value::Scalar(Scalar::Int(i))
}

pub(super) fn fl(f: f64) -> Value {
    Value::Scalar(Scalar::Float(f))
}

pub(super) fn bl(b: bool) -> Value {
    Value::Scalar(Scalar::Bool(b))
}

pub(super) fn null() -> Value {
    Value::Scalar(Scalar::Null)
}
