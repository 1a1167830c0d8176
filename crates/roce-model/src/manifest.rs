//! Reading workload manifests: multi-document YAML → one spanned [`Node`] tree per document.
//!
//! The one manifest reader: `roce apply` (which re-emits the documents), `roce lint` (which points problems
//! at lines of the user's file) and the webhook read through it, so all see a manifest the same way. It
//! lives with the other front ends (KDL and YAML profiles): reading is this crate's, rendering is not. It uses serde-saphyr like
//! the profile front end, with settings for Kubernetes manifests rather than profiles:
//!
//! * several documents per file (`---`); empty and null-only documents are skipped;
//! * YAML 1.1-style booleans (`yes`, `on`) are booleans, as go-yaml v2 (which Kubernetes' `sigs.k8s.io/yaml`
//!   builds on) reads them; a re-emitted document writes every non-string scalar exactly as the author
//!   did, so its type does not change either way;
//! * duplicate keys are a syntax error (strict Kubernetes decoders refuse them);
//! * nesting is limited to [`MAX_DEPTH`] levels, and serde-saphyr's alias budget stops alias bombs.

use serde_saphyr::Spanned as YSpanned;

use crate::source::{Origin, SourceId, Spanned};
use crate::syntax::yaml::{YVal, byte_range};
use crate::tree::{self, Entry, Node, Scalar, Value};
use crate::{Code, Problem};

mod block;
mod events;

/// Deepest nesting a manifest may have. A JobSet container's `env[].valueFrom.fieldRef` sits about 16
/// levels deep, but a CustomResourceDefinition's OpenAPI schema in the same directory goes past 40; 256
/// leaves room for anything real while hostile input stops early.
pub const MAX_DEPTH: usize = 256;

/// Stack a parse of [`MAX_DEPTH`] levels needs, with room to spare. serde's recursive descent takes tens
/// of kilobytes per level in debug builds, so [`parse`] runs on a thread of its own with this much stack
/// (reserved, not committed: only the pages a deep document touches are used).
pub const STACK_BYTES: usize = 64 << 20;

/// Depth limit when no thread with [`STACK_BYTES`] of stack can be had: what fits in the 2 MiB of a
/// default thread even in a debug build.
const FALLBACK_DEPTH: usize = 24;

/// Parse every document of a manifest file.
///
/// Each document becomes a [`Node`] tree whose origins point into `text` (in `source`). A map's origin is
/// the key that holds it (the document root's: its first key); a scalar's is the literal, quotes included.
///
/// # Errors
///
/// The first YAML error, as a `roce::lint::syntax` problem at the place the parser stopped.
///
/// ```
/// use roce_model::source::{Source, Sources};
/// use roce_model::plumbing::tree::Value;
/// let mut sources = Sources::default();
/// let id = sources.add(Source::new("job.yaml", "kind: Pod\n---\nkind: Job\n"));
/// let docs = roce_model::plumbing::manifest::parse(&sources.get(id).text, id).unwrap();
/// assert_eq!(docs.len(), 2);
/// assert!(matches!(docs[1].value, Value::Map(_)));
/// ```
pub fn parse(text: &str, source: SourceId) -> Result<Vec<Node>, Box<Problem>> {
    let spawned = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("roce-yaml".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || parse_here(text, source))
            .ok()
            .map(|handle| handle.join())
    });
    match spawned {
        Some(Ok(result)) => result,
        // The parser panicked (it should not) or no thread could be started: parse here, shallower.
        Some(Err(_)) | None => parse_with_depth(text, source, FALLBACK_DEPTH),
    }
}

/// [`parse`] on the calling thread, which must have [`STACK_BYTES`] of stack (a thread started with
/// `std::thread::Builder::stack_size(STACK_BYTES)`); saves a thread start per file in a worker pool.
///
/// # Errors
///
/// As [`parse`].
pub fn parse_here(text: &str, source: SourceId) -> Result<Vec<Node>, Box<Problem>> {
    parse_with_depth(text, source, MAX_DEPTH)
}

fn parse_with_depth(
    text: &str,
    source: SourceId,
    max_depth: usize,
) -> Result<Vec<Node>, Box<Problem>> {
    if let Some(read) = block::read(text, source, max_depth) {
        return read;
    }
    if let Some(docs) = events::read(text, source, max_depth) {
        return Ok(docs);
    }
    serde_saphyr_parse(text, source, max_depth)
}

/// Which of [`parse`]'s readers read a text ([`compare_readers`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadBy {
    /// The block reader (`manifest/block.rs`) answered.
    pub block: bool,
    /// The event reader (`manifest/events.rs`) answered.
    pub events: bool,
}

/// For tests and the `manifest_readers` fuzz target: read `text` with each of [`parse`]'s readers and
/// panic where one answers and the next one, which it stands in for, would answer differently (other
/// trees, spans or contents, or an error). A key the block reader finds given twice must be serde-saphyr's
/// error, word for word and place for place.
#[doc(hidden)]
pub fn compare_readers(text: &str) -> ReadBy {
    let mut sources = crate::source::Sources::default();
    let source = sources.add(crate::Source::new("t.yaml", ""));
    let block = block::read(text, source, MAX_DEPTH);
    let events = events::read(text, source, MAX_DEPTH);
    if let Some(Err(duplicate)) = &block {
        assert!(
            events.is_none(),
            "the event reader reads a duplicate key:\n{text:?}"
        );
        let full = saphyr_on_its_stack(text, source)
            .expect_err("serde-saphyr reads what the block reader found a duplicate key in");
        assert_eq!(format!("{duplicate:#?}"), format!("{full:#?}"), "{text:?}");
    }
    let block = block.and_then(Result::ok);
    if let Some(block) = &block {
        // The event reader leaves anchors and aliases to serde-saphyr; where it refuses, the block reader
        // stands in for serde-saphyr.
        let other = match &events {
            Some(events) => format!("{events:#?}"),
            None => format!(
                "{:#?}",
                saphyr_on_its_stack(text, source).unwrap_or_else(|p| {
                    panic!("serde-saphyr refuses what the block reader read: {p:?}\n{text:?}")
                })
            ),
        };
        assert_eq!(format!("{block:#?}"), other, "{text:?}");
    }
    if let Some(events) = &events {
        let full = saphyr_on_its_stack(text, source).unwrap_or_else(|p| {
            panic!("serde-saphyr refuses what the event reader read: {p:?}\n{text:?}")
        });
        assert_eq!(format!("{events:#?}"), format!("{full:#?}"), "{text:?}");
    }
    ReadBy {
        block: block.is_some(),
        events: events.is_some(),
    }
}

/// [`serde_saphyr_parse`] on a thread with the stack [`parse`] gives it (it descends recursively).
fn saphyr_on_its_stack(text: &str, source: SourceId) -> Result<Vec<Node>, Box<Problem>> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || serde_saphyr_parse(text, source, MAX_DEPTH))
            .expect("a thread")
            .join()
            .expect("serde-saphyr does not panic")
    })
}

/// The full reader, for what [`events::read`] leaves to serde-saphyr (and the tests comparing both).
fn serde_saphyr_parse(
    text: &str,
    source: SourceId,
    max_depth: usize,
) -> Result<Vec<Node>, Box<Problem>> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    if let Some(budget) = options.budget.as_mut() {
        budget.max_depth = max_depth;
    }
    let docs: Vec<YSpanned<YVal>> = serde_saphyr::from_multiple_with_options(text, options)
        .map_err(|e| Box::new(syntax_problem(text, source, &e, max_depth)))?;
    Ok(docs.into_iter().map(|d| convert(text, source, d)).collect())
}

/// The problem for a file that is not UTF-8 text.
pub fn not_text(source: SourceId) -> Problem {
    Problem::new(
        Code::LintSyntax,
        "the file is not UTF-8 text, so it cannot be a YAML manifest",
    )
    .at(Origin::new(source, 0..0), "not text")
    .help("is this the right file? manifests are YAML text")
}

fn syntax_problem(
    text: &str,
    source: SourceId,
    err: &serde_saphyr::Error,
    max_depth: usize,
) -> Problem {
    let origin = err
        .location()
        .and_then(|l| byte_range(text, l.span()).or_else(|| line_col_range(text, &l)))
        .map(|r| Origin::new(source, r))
        .unwrap_or_else(|| Origin::new(source, 0..text.len().min(1)));
    let message = err.to_string();
    let first = message.lines().next().unwrap_or("invalid YAML").trim();
    let first = first.rfind(" at line ").map_or(first, |i| &first[..i]);
    let deep =
        first.contains("budget breached") && first.contains("Depth") || first.contains("recursion");
    if deep {
        return Problem::new(
            Code::LintSyntax,
            format!("the manifest nests deeper than {max_depth} levels"),
        )
        .at(origin, "too deep here")
        .help("a workload nests about 20 levels; is this the right file?");
    }
    if let Some(limit) = first.strip_prefix("budget breached: ") {
        let b = serde_saphyr::Budget::default();
        return Problem::new(
            Code::LintSyntax,
            format!("the file is larger than roce reads as one manifest ({limit})"),
        )
        .at(origin, "limit reached here")
        .help(format!(
            "split it into files of at most {} documents and {} nodes each (a directory of them is linted file by file); the limits bound what one file may cost",
            b.max_documents, b.max_nodes
        ));
    }
    if let Some(rest) = first.strip_prefix("duplicate mapping key: ") {
        let key = rest
            .split(", set DuplicateKeyPolicy")
            .next()
            .unwrap_or(rest);
        return duplicate_key(key, origin);
    }
    Problem::new(Code::LintSyntax, format!("invalid YAML: {first}"))
        .at(origin, "here")
        .help("fix the YAML syntax; roce reads the file only when `kubectl` could")
}

/// serde-saphyr's error for a mapping key given twice, `key` as written (plain), at the second one.
fn duplicate_key(key: &str, origin: Origin) -> Problem {
    Problem::new(Code::LintSyntax, format!("`{key}` is given twice in one mapping"))
        .at(origin, "given again here")
        .help("keep one of them: strict Kubernetes decoders refuse the object, others silently keep the last")
}

/// A byte range from a 1-based line and column (in characters), for errors without a byte offset.
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
    Some(start + at..start + at)
}

fn origin_of(text: &str, source: SourceId, loc: &serde_saphyr::Location) -> Origin {
    Origin::new(source, byte_range(text, loc.span()).unwrap_or(0..0))
}

fn convert(text: &str, source: SourceId, v: YSpanned<YVal>) -> Node {
    let origin = origin_of(text, source, &v.referenced);
    match v.value {
        YVal::Map(pairs) => {
            let mut entries = Vec::with_capacity(pairs.len());
            for (k, val) in pairs {
                let key_origin = origin_of(text, source, &k.referenced);
                let key = match k.value {
                    YVal::Scalar(Scalar::Str(s)) => s,
                    YVal::Scalar(Scalar::Int(i)) => i.to_string(),
                    YVal::Scalar(Scalar::Bool(b)) => b.to_string(),
                    YVal::Scalar(Scalar::Float(f)) => f.to_string(),
                    YVal::Scalar(Scalar::Null) => String::new(),
                    // A complex key never occurs in a Kubernetes object; keep its place in the file.
                    _ => text.get(key_origin.range()).unwrap_or("?").to_string(),
                };
                let mut node = convert(text, source, val);
                if matches!(node.value, Value::Map(_))
                    || matches!(node.value, Value::Seq(_)) && node.origin.len == 0
                {
                    node.origin = key_origin;
                }
                entries.push(Entry {
                    key: Spanned::new(key, key_origin),
                    node,
                });
            }
            let origin = entries.first().map_or(origin, |e| e.key.origin);
            Node::new(Value::Map(entries), origin)
        }
        YVal::Seq(items) => Node::new(
            Value::Seq(
                items
                    .into_iter()
                    .map(|i| convert(text, source, i))
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
