//! Built-in profiles, embedded in the binary from `profiles/`.
//!
//! Each built-in is written in KDL (the canonical, commented form that `roce profiles show` prints) and
//! has a YAML twin that a test proves loads to the same model and renders byte-identically. Loading uses
//! the YAML twin: the KDL v2 parser costs about 10 million instructions for one commented built-in —
//! 80 % of a whole `roce render --target pod` — where the YAML front end needs well under one million
//! (measured with callgrind; see `docs/decisions.md`, "(startup)").

use crate::source::{Format, Source, SourceId};
use crate::tree::Node;

// generated, one long line per built-in: left as written
#[rustfmt::skip]
mod frozen;
mod frozen_support;

macro_rules! builtins {
    ($($name:literal),* $(,)?) => {
        /// `(name, KDL text, YAML twin)` of every built-in profile.
        pub const BUILTIN: &[(&str, &str, &str)] = &[
            $( (
                $name,
                include_str!(concat!("../../../../profiles/", $name, ".kdl")),
                include_str!(concat!("../../../../profiles/", $name, ".yaml")),
            ), )*
        ];
    };
}

builtins!(
    "coreweave/gb300-roce",
    "coreweave/gb300-roce-nixl",
    "coreweave/gb300-roce-sunk",
    "coreweave/gb300-ib",
    "coreweave/gb200-ib",
    "coreweave/h100-ib",
    "coreweave/b200-ib",
);

/// The profile `roce render` uses when none is named.
pub const DEFAULT: &str = "coreweave/gb300-roce";

/// Names of the built-in profiles, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _, _)| *n)
}

/// The source roce loads for a built-in profile (its YAML twin), named `builtin:<name>`.
pub fn source(name: &str) -> Option<Source> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, _, yaml)| Source::with_format(format!("builtin:{n}"), *yaml, Format::Yaml))
}

/// The canonical KDL text of a built-in profile, as `roce profiles show` prints it.
pub fn kdl_source(name: &str) -> Option<Source> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, kdl, _)| Source::with_format(format!("builtin:{n}.kdl"), *kdl, Format::Kdl))
}

/// The spanned tree of a built-in's YAML twin, built by code generated from it (`frozen.rs`) instead of
/// parsed: the parse was 0.68 M of the 1.6 M instructions of `roce render --target pod`. Only for the exact
/// embedded text (so a file that merely claims a built-in's name is parsed as usual); tests prove every frozen
/// tree equal to the parse, origins included, and the generated file current.
pub(crate) fn frozen_tree(source: &Source, id: SourceId) -> Option<Node> {
    let name = source.name.strip_prefix("builtin:")?;
    let (_, _, yaml) = BUILTIN.iter().find(|(n, _, _)| *n == name)?;
    (source.format == Format::Yaml && *source.text == **yaml)
        .then(|| frozen::tree(name, id))
        .flatten()
}

#[cfg(test)]
mod frozen_tests {
    use super::*;
    use crate::source::Origin;
    use crate::tree::{Scalar, Value};
    use std::fmt::Write;

    fn expr(n: &Node, out: &mut String) {
        let o = |o: Origin| format!("o({}, {})", o.offset, o.offset + o.len);
        out.push_str("n(");
        match &n.value {
            Value::Map(entries) => {
                out.push_str("map(vec![");
                for e in entries {
                    let _ = write!(out, "e({:?}, {}, ", e.key.value, o(e.key.origin));
                    expr(&e.node, out);
                    out.push_str("), ");
                }
                out.push_str("])");
            }
            Value::Seq(items) => {
                out.push_str("seq(vec![");
                for i in items {
                    expr(i, out);
                    out.push_str(", ");
                }
                out.push_str("])");
            }
            Value::Scalar(Scalar::Str(s)) => {
                let _ = write!(out, "st({s:?})");
            }
            Value::Scalar(Scalar::Int(i)) => {
                let _ = write!(out, "int({i})");
            }
            Value::Scalar(Scalar::Float(f)) => {
                let _ = write!(out, "fl({f:?})");
            }
            Value::Scalar(Scalar::Bool(b)) => {
                let _ = write!(out, "bl({b})");
            }
            Value::Scalar(Scalar::Null) => out.push_str("null()"),
        }
        let _ = write!(out, ", {}, ", o(n.origin));
        match n.content {
            Some(c) => {
                let _ = write!(out, "Some({}))", o(c));
            }
            None => out.push_str("None)"),
        }
    }

    fn generate() -> String {
        let mut out = String::from(
            "//! The spanned trees of the built-in profiles' YAML twins, as code. Generated from `profiles/*.yaml`\n\
             //! by `ROCE_BLESS=1 cargo test -p roce-model --lib frozen`; do not edit (a test fails when stale).\n\n\
             #![allow(clippy::all)]\n\n\
             use super::frozen_support::*;\n\
             use crate::source::SourceId;\n\
             use crate::tree::Node;\n\n\
             /// The frozen tree of built-in `name`, with origins in source `id`.\n\
             pub(crate) fn tree(name: &str, id: SourceId) -> Option<Node> {\n    let o = |a: usize, b: usize| origin(id, a, b);\n    Some(match name {\n",
        );
        for (name, _, yaml) in BUILTIN {
            let node = crate::syntax::yaml::parse(yaml, SourceId(0)).expect("built-ins parse");
            let mut e = String::new();
            expr(&node, &mut e);
            let _ = writeln!(out, "        {name:?} => {e},");
        }
        out.push_str("        _ => return None,\n    })\n}\n");
        out
    }

    #[test]
    fn frozen_trees_equal_the_parse() {
        for (name, _, yaml) in BUILTIN {
            let id = SourceId(3);
            let parsed = crate::syntax::yaml::parse(yaml, id).unwrap();
            let frozen = frozen::tree(name, id).expect("every built-in is frozen");
            assert_eq!(format!("{frozen:?}"), format!("{parsed:?}"), "{name}");
            let src = source(name).unwrap();
            assert!(frozen_tree(&src, id).is_some(), "{name} loads frozen");
        }
        // the same name with other text is parsed, not frozen
        let other = Source::with_format("builtin:coreweave/gb300-roce", "name: x\n", Format::Yaml);
        assert!(frozen_tree(&other, SourceId(0)).is_none());
    }

    #[test]
    fn frozen_file_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/builtin/frozen.rs");
        let want = generate();
        if std::env::var_os("ROCE_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "src/builtin/frozen.rs is stale; regenerate it with\n  ROCE_BLESS=1 cargo test -p roce-model --lib frozen"
        );
    }
}
