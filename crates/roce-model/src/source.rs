//! Profile sources, byte spans and provenance.
//!
//! Every value the loader produces remembers where it came from: which source (a built-in profile or a file,
//! one per `extends` layer) and which bytes. [`Spanned`] pairs a value with that [`Origin`]; its equality
//! ignores the origin, so a KDL profile and the same profile in YAML compare equal.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// The two profile syntaxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// KDL v2 (`*.kdl`), the canonical format of the built-in profiles.
    Kdl,
    /// YAML 1.2 (`*.yaml`, `*.yml`).
    Yaml,
}

impl Format {
    /// Guess the format from a file name: `.yaml`/`.yml` is YAML, everything else KDL.
    pub fn from_name(name: &str) -> Self {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Format::Yaml
        } else {
            Format::Kdl
        }
    }
}

/// One profile text: a file, a built-in profile or stdin.
#[derive(Debug, Clone)]
pub struct Source {
    /// Display name: a path, or `builtin:<name>` for embedded profiles.
    pub name: String,
    /// The full text.
    pub text: Arc<str>,
    /// The syntax the text is written in.
    pub format: Format,
}

impl Source {
    /// A source whose format is guessed from its name.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        let name = name.into();
        let format = Format::from_name(&name);
        Source {
            name,
            text: text.into(),
            format,
        }
    }

    /// A source with an explicit format.
    pub fn with_format(name: impl Into<String>, text: impl Into<Arc<str>>, format: Format) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
            format,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let before = &self.text[..offset];
        // Counted as bytes, 255 at a time into a byte counter: a loop the compiler vectorises a full
        // vector of bytes at a time (a `usize` count widens every byte, a `str` search stops at every line).
        let line = before
            .as_bytes()
            .chunks(255)
            .map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
            .sum::<usize>()
            + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Index of a [`Source`] inside [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SourceId(pub(crate) u32);

/// The sources one load touched, in the order they were read: the profile first, then each `extends` layer.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    list: Vec<Source>,
}

impl Sources {
    /// Add a source and return its id.
    pub fn add(&mut self, source: Source) -> SourceId {
        self.list.push(source);
        SourceId(u32::try_from(self.list.len() - 1).unwrap_or(u32::MAX))
    }

    /// The source with this id.
    pub fn get(&self, id: SourceId) -> &Source {
        &self.list[id.0 as usize]
    }

    /// All sources in load order.
    pub fn iter(&self) -> impl Iterator<Item = (SourceId, &Source)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, s)| (SourceId(i as u32), s))
    }

    /// Where an origin points, as `name:line:column`.
    pub fn describe(&self, origin: Origin) -> String {
        let src = self.get(origin.source);
        let (line, col) = src.line_col(origin.offset);
        format!("{}:{line}:{col}", src.name)
    }
}

/// Where a value came from: a source and a byte range in it. The default, the start of the first source,
/// is only a blank section's (the walker's), whose values are all replaced or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Origin {
    /// The source (one per `extends` layer).
    pub source: SourceId,
    /// Byte offset of the first byte.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

impl Origin {
    /// An origin covering `range` in `source`.
    pub fn new(source: SourceId, range: Range<usize>) -> Self {
        Origin {
            source,
            offset: range.start,
            len: range.end.saturating_sub(range.start),
        }
    }

    /// The byte range.
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.len
    }

    /// A sub-range of this origin, for pointing at one token of a list value. `range` is relative to the
    /// value's text; it is clamped to this origin, and when the value was quoted the caller passes the
    /// offset of the text inside the quotes.
    pub fn sub(&self, range: Range<usize>) -> Origin {
        let start = (self.offset + range.start).min(self.offset + self.len);
        let end = (self.offset + range.end)
            .min(self.offset + self.len)
            .max(start);
        Origin {
            source: self.source,
            offset: start,
            len: end - start,
        }
    }
}

impl From<Origin> for miette::SourceSpan {
    fn from(o: Origin) -> Self {
        (o.offset, o.len).into()
    }
}

/// A value with its [`Origin`]. Equality and hashing look at the value only.
#[derive(Clone, Copy, Default)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub origin: Origin,
}

impl<T> Spanned<T> {
    /// Pair a value with its origin.
    pub fn new(value: T, origin: Origin) -> Self {
        Spanned { value, origin }
    }

    /// Transform the value, keeping the origin.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned {
            value: f(self.value),
            origin: self.origin,
        }
    }

    /// Borrow the value, keeping the origin.
    pub fn as_ref(&self) -> Spanned<&T> {
        Spanned {
            value: &self.value,
            origin: self.origin,
        }
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Spanned<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Spanned<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let s = Source::new("x.kdl", "ab\nçd e");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(3), (2, 1));
        // 'ç' is two bytes: the byte after it is column 2.
        assert_eq!(s.line_col(5), (2, 2));
        // Past the 255-byte chunks the lines are counted in, every line a line feed.
        let text = "\n".repeat(600) + "ab";
        let s = Source::new("x.yaml", text);
        assert_eq!(s.line_col(600), (601, 1));
        assert_eq!(s.line_col(601), (601, 2));
        assert_eq!(s.line_col(255), (256, 1));
    }

    #[test]
    fn spanned_equality_ignores_origin() {
        let a = Spanned::new(3, Origin::new(SourceId(0), 0..1));
        let b = Spanned::new(3, Origin::new(SourceId(1), 9..12));
        assert_eq!(a, b);
        assert_ne!(a, Spanned::new(4, a.origin));
    }

    #[test]
    fn format_from_name() {
        assert_eq!(Format::from_name("a/b.YAML"), Format::Yaml);
        assert_eq!(Format::from_name("a/b.yml"), Format::Yaml);
        assert_eq!(Format::from_name("a/b.kdl"), Format::Kdl);
    }
}
