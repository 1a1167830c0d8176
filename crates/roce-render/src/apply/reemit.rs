//! A parsed manifest document back to an ordered [`Yaml`] value that re-emits with the author's spellings:
//! what `apply` writes, and compares its own output against.

use roce_model::plumbing::tree::{Node, Scalar, Value};

use crate::yaml::Yaml;

/// The ordered [`Yaml`] value of a parsed document, for re-emitting.
///
/// Spellings survive where that is safe: numbers, booleans and nulls are written exactly as in `text`
/// ([`Yaml::Raw`]); strings written plain stay plain and verbatim ([`Yaml::Plain`]); quoted strings are
/// double-quoted ([`Yaml::Quoted`]); multi-line strings become literal blocks ([`Yaml::Block`]). Comments,
/// anchors and flow style are not kept.
pub(crate) fn to_yaml(node: &Node, text: &str) -> Yaml {
    match &node.value {
        Value::Map(entries) => Yaml::Map(
            entries
                .iter()
                .map(|e| (e.key.value.clone().into(), to_yaml(&e.node, text)))
                .collect(),
        ),
        Value::Seq(items) => Yaml::Seq(items.iter().map(|i| to_yaml(i, text)).collect()),
        Value::Scalar(scalar) => {
            let raw = text.get(node.origin.range()).unwrap_or("");
            let before = text.get(..node.origin.offset).unwrap_or("");
            // A scalar that starts its own line may be the content of a `|` or `>` block, whose text
            // would read differently written plain (`yes`, `1`): never keep such a string verbatim.
            let starts_line = before.trim_end_matches(' ').ends_with('\n') || before.is_empty();
            scalar_to_yaml(scalar, raw, starts_line)
        }
    }
}

fn scalar_to_yaml(scalar: &Scalar, raw: &str, starts_line: bool) -> Yaml {
    if let Scalar::Str(s) = scalar {
        return if s.contains('\n') {
            Yaml::Block(s.clone())
        } else if raw == s && !starts_line && is_verbatim_plain(raw) {
            Yaml::Plain(s.clone())
        } else if raw.starts_with(['"', '\'']) {
            Yaml::Quoted(s.clone())
        } else {
            Yaml::Str(s.clone())
        };
    }
    if is_verbatim_plain(raw) {
        return Yaml::Raw(raw.to_string());
    }
    match scalar {
        Scalar::Int(i) => i64::try_from(*i).map_or_else(|_| Yaml::Raw(i.to_string()), Yaml::Int),
        Scalar::Float(f) if f.is_finite() => Yaml::Raw(format!("{f:?}")),
        Scalar::Float(f) if f.is_nan() => Yaml::Raw(".nan".into()),
        Scalar::Float(f) => Yaml::Raw(if *f > 0.0 { ".inf" } else { "-.inf" }.into()),
        Scalar::Bool(b) => Yaml::Bool(*b),
        Scalar::Null | Scalar::Str(_) => Yaml::Null,
    }
}

/// A raw literal that can be written back as a plain scalar on one line: the text the parser read as
/// this value, with no quote, block indicator, comment, tag, anchor or line break in it.
fn is_verbatim_plain(raw: &str) -> bool {
    // `-`, `?` and `:` start a plain scalar when a non-space follows (`-np`, `:8080`).
    let indicator_start =
        raw.starts_with(['-', '?', ':']) && !raw[1..].starts_with([' ', '\t']) && raw.len() > 1;
    !raw.is_empty()
        && (indicator_start
            || !raw.starts_with([
                '"', '\'', '|', '>', '!', '&', '*', '#', '[', ']', '{', '}', ' ', '-', '?', ':',
                ',', '%', '@', '`',
            ]))
        && !raw.contains(['\n', '\r', '\t'])
        && !raw.contains(" #")
        && !raw.contains(": ")
        && !raw.ends_with([' ', ':'])
}
