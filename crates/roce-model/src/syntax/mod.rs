//! Front ends: profile text in either syntax → the shared [`crate::tree::Node`] tree.

pub(crate) mod kdl;
pub(crate) mod to_yaml;
pub(crate) mod yaml;

use crate::problem::{Code, Problem};
use crate::source::{Format, Origin, Source, SourceId};
use crate::tree::Node;

/// Largest profile text accepted (1 MiB). Real profiles are a few kilobytes.
pub(crate) const MAX_PROFILE_BYTES: usize = 1 << 20;

/// Parse a source in its format, after the size check.
pub(crate) fn parse(source: &Source, id: SourceId) -> Result<Node, Vec<Problem>> {
    if source.text.len() > MAX_PROFILE_BYTES {
        return Err(vec![
            Problem::new(
                Code::TooLarge,
                format!(
                    "the file is {} bytes; a profile may be at most {MAX_PROFILE_BYTES} bytes ({} MiB)",
                    source.text.len(),
                    MAX_PROFILE_BYTES >> 20
                ),
            )
            .at(Origin::new(id, 0..0), "not read past the size check")
            .help("is this the right file? a profile is a few kilobytes of KDL or YAML"),
        ]);
    }
    if let Some(tree) = crate::builtin::frozen_tree(source, id) {
        return Ok(tree);
    }
    match source.format {
        Format::Kdl => kdl::parse(&source.text, id),
        Format::Yaml => yaml::parse(&source.text, id),
    }
}

/// The problem for a file with no profile in it (empty, blank or only comments).
fn empty(text: &str, source: SourceId) -> Problem {
    let what = if text.trim().is_empty() {
        "the file is empty"
    } else {
        "the file holds only comments"
    };
    Problem::new(Code::Syntax, format!("{what}: there is no profile in it"))
        .at(Origin::new(source, 0..0), "no profile")
        .help("is this the right file? a profile starts with `profile \"team/name\" { … }` in KDL, or `name: team/name` in YAML")
}
