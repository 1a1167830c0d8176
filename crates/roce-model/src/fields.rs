//! One table for the profile's fields (`table`), and what is generated from it: the JSON Schema
//! (`schema`) and the key tables of `docs/reference.md` (`reference`). The walker asks it which keys
//! a section has and what each holds; `roce diff` labels its fields by it. Where an entry is bound
//! (`bind`), the walker reads it into the model and `roce diff` shows it through the binding alone.

// Before `table`, which writes each binding with the `bind!` macro.
#[macro_use]
mod bind;
#[cfg(test)]
mod reference;
mod schema;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use bind::{Bind, Read};
// The fabric facts the table quotes.
use crate::fabric::attach::CAPABILITIES;
use crate::fabric::ucx::min_rdma_core;
pub use schema::profile_schema;
pub(crate) use table::*;

impl Section {
    /// The section's name as diagnostics write it: its last key (`rdma-resource`), `profile` at the top.
    pub(crate) fn name(&self) -> &'static str {
        match self.path.rsplit_once('.') {
            Some((_, last)) => last,
            None if self.path.is_empty() => "profile",
            None => self.path,
        }
    }

    /// The entry for `key`.
    pub(crate) fn field(&self, key: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.key == key)
    }

    /// The keys the section has when its positional key is `mode` (all of them when it has none).
    pub(crate) fn keys(&self, mode: Option<&str>) -> impl Iterator<Item = &'static str> {
        self.fields
            .iter()
            .filter(move |f| f.when.is_empty() || mode.is_some_and(|m| f.when.contains(&m)))
            .map(|f| f.key)
    }

    /// The dotted path of one of its fields.
    pub(crate) fn path_of(&self, field: &Field) -> String {
        if self.path.is_empty() {
            field.key.to_string()
        } else {
            format!("{}.{}", self.path, field.key)
        }
    }

    /// The sections below this one (a field's map, or a named map's entries), depth first.
    fn children(&self) -> impl Iterator<Item = &'static Section> {
        self.fields.iter().filter_map(|f| match f.kind {
            Kind::Section(s) | Kind::Named(s) => Some(s),
            _ => None,
        })
    }
}

/// Every section, the profile first, each before the sections below it.
pub(crate) fn sections() -> Vec<&'static Section> {
    fn visit(s: &'static Section, out: &mut Vec<&'static Section>) {
        out.push(s);
        for c in s.children() {
            visit(c, out);
        }
    }
    let mut out = Vec::new();
    visit(&PROFILE, &mut out);
    out
}

/// Every field with its section, in table order (a section's fields before the sections below them).
pub(crate) fn all() -> Vec<(&'static Section, &'static Field)> {
    sections()
        .into_iter()
        .flat_map(|s| s.fields.iter().map(move |f| (s, f)))
        .collect()
}

/// `roce diff`'s labels, in the order it lists them (a map's label stands for its entries, `env.NAME`).
pub(crate) fn diff_labels() -> Vec<String> {
    fn visit(s: &'static Section, out: &mut Vec<String>) {
        for f in s.fields {
            match f.diff {
                Diff::Path => out.push(s.path_of(f)),
                Diff::As(label) => out.push(label.to_string()),
                Diff::No => {}
            }
            if let Kind::Section(c) | Kind::Named(c) = f.kind {
                visit(c, out);
            }
        }
    }
    let mut out = Vec::new();
    visit(&PROFILE, &mut out);
    out
}

/// Where `roce diff` lists the field at `path`: the index of its label in [`diff_labels`] (a map's entry,
/// `env.NAME`, at its map's), or `None` for a path the table has no label for.
pub(crate) fn diff_rank(labels: &[String], path: &str) -> Option<usize> {
    labels.iter().position(|l| l == path).or_else(|| {
        labels.iter().position(|l| {
            path.strip_prefix(l.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
        })
    })
}

/// The value of every bound field `p` sets, under its `roce diff` label, as the diff shows it (in table
/// order; a field the diff does not compare, `Diff::No`, left out).
pub(crate) fn shown(p: &crate::model::Profile) -> Vec<(String, crate::source::Spanned<String>)> {
    all()
        .into_iter()
        .filter_map(|(s, f)| {
            let label = match f.diff {
                Diff::Path => s.path_of(f),
                Diff::As(label) => label.to_string(),
                Diff::No => return None,
            };
            let choices = match f.kind {
                Kind::Choice(c) => c,
                _ => &[],
            };
            Some((label, f.bind?.show(choices, p)?))
        })
        .collect()
}
