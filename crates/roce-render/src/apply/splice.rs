//! `roce apply`'s output: the user's text with the wiring spliced in, not the documents written anew.
//!
//! `apply` decides on a [`Yaml`] value of each document, as before; this module compares that value with
//! the document's value before and turns every difference into a text edit at byte offsets of the
//! spanned [`Node`] tree (replace a scalar, insert entries or items, delete an item), applied in one pass.
//! Lines nothing changed keep their bytes: comments, key order, flow style, quoting. New keys and items
//! take the indentation of the block they join; a block under a new key takes the step and the sequence
//! style (`key:\n- item` or `key:\n  - item`) of the nearest block above it.
//!
//! Some changes are not spliced but rewrite one node: a flow collection that must change is written again
//! in flow style on one line (an empty `{}` or `[]` that gains entries becomes a block), a block scalar
//! that must change is written again as a literal block, a mapping that must lose or reorder keys is
//! written again. Each edited document is parsed back and must read as the value `apply` decided; a
//! document that does not (or that uses aliases, whose edits would change every copy) is written anew
//! from that value, its comments lost, as `roce apply` did before.

use std::ops::Range;

use roce_model::plumbing::tree::{Node, Value};
use roce_model::source::SourceId;

use roce_model::plumbing::manifest;

use super::{reemit, scan};
use crate::yaml::{self, KUBECTL, Layout, Yaml};

/// Replace `range` of the text with `text` (an insertion when the range is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    range: Range<usize>,
    text: String,
}

/// One document of a file: its spanned tree, its value as read, and its value with the wiring.
pub(crate) struct Doc<'a> {
    pub(crate) node: &'a Node,
    pub(crate) before: Yaml,
    pub(crate) after: Yaml,
}

/// The file with every changed document edited.
#[derive(Debug)]
pub(crate) struct Spliced {
    pub(crate) text: String,
    /// The documents (indices into `docs`) that had to be written anew, their comments lost.
    pub(crate) rewritten: Vec<usize>,
}

/// Edit every changed document of `text`, and insert the documents of `inserts` (`(n, document)`: before
/// document `n`, in order); `None` when a document's place in the text cannot be found (the caller writes
/// every document anew).
///
/// A document inserted before document `n` goes before `n`'s leading comments, just after the `---` line
/// that opens `n` (or at the start of the file), followed by a `---` line of its own.
pub(crate) fn splice(
    text: &str,
    source: SourceId,
    docs: &[Doc<'_>],
    inserts: &[(usize, Yaml)],
) -> Option<Spliced> {
    if inserts.is_empty() && docs.iter().all(|d| same(&d.before, &d.after)) {
        return Some(Spliced {
            text: text.to_string(),
            rewritten: Vec::new(),
        });
    }
    // New lines end the way the file's do.
    let crlf = text.contains("\r\n");
    // Lines are inserted after line breaks: give the last line one (no offset moves).
    let owned;
    let text = if text.is_empty() || text.ends_with('\n') {
        text
    } else {
        owned = format!("{text}{}", if crlf { "\r\n" } else { "\n" });
        owned.as_str()
    };
    let mut regions = Vec::new();
    // Insertions first: one at a document's first line sorts before that document's edit.
    for (n, object) in inserts {
        let at = document_start(text, region(text, docs.get(*n)?.node)?.start);
        let out = format!("{}---\n", yaml::to_string(object));
        regions.push(Edit {
            range: at..at,
            text: if crlf { out.replace('\n', "\r\n") } else { out },
        });
    }
    let mut rewritten = Vec::new();
    for (n, doc) in docs.iter().enumerate() {
        if same(&doc.before, &doc.after) {
            continue;
        }
        let region = region(text, doc.node)?;
        let edited = edit(text, source, doc, region.clone(), crlf).unwrap_or_else(|| {
            rewritten.push(n);
            let out = yaml::to_string(&doc.after);
            if crlf { out.replace('\n', "\r\n") } else { out }
        });
        regions.push(Edit {
            range: region,
            text: edited,
        });
    }
    let out = apply_edits(text, regions)?;
    if !inserts.is_empty() && !reads_as(&out, source, docs, inserts) {
        return None;
    }
    Some(Spliced {
        text: out,
        rewritten,
    })
}

/// Where a document begins, for documents inserted before it: from the line of its first key (`first`) back
/// over its leading comments and blank lines, to just after the `---` (or `...`) line before them, or the
/// start of the text.
fn document_start(text: &str, first: usize) -> usize {
    let mut at = first;
    while at > 0 {
        let line_at = scan::line_start(text, at - 1);
        let line = text[line_at..at].trim_end();
        let marker = ["---", "..."].iter().any(|m| {
            line.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        });
        if marker || !(line.trim_start().is_empty() || line.trim_start().starts_with('#')) {
            break;
        }
        at = line_at;
    }
    at
}

/// Does the whole output read as the documents decided, with the inserted ones in their places?
fn reads_as(out: &str, source: SourceId, docs: &[Doc<'_>], inserts: &[(usize, Yaml)]) -> bool {
    let Ok(back) = manifest::parse(out, source) else {
        return false;
    };
    let mut want: Vec<&Yaml> = Vec::with_capacity(docs.len() + inserts.len());
    let mut pending = inserts.iter().peekable();
    for (n, d) in docs.iter().enumerate() {
        while let Some((_, object)) = pending.next_if(|(at, _)| *at == n) {
            want.push(object);
        }
        want.push(&d.after);
    }
    back.len() == want.len()
        && back
            .iter()
            .zip(want)
            .all(|(node, y)| same(&reemit::to_yaml(node, out), y))
}

/// Where a document's root mapping is: from the line of its first key to the next document marker
/// (`---`, `...`) or the end of the file.
fn region(text: &str, root: &Node) -> Option<Range<usize>> {
    let Value::Map(entries) = &root.value else {
        return None;
    };
    let start = scan::line_start(text, entries.first()?.key.origin.offset);
    Some(start..scan::document_end(text, start))
}

/// The document's region with the edits applied, if it reads back as `doc.after`.
fn edit(
    text: &str,
    source: SourceId,
    doc: &Doc<'_>,
    region: Range<usize>,
    crlf: bool,
) -> Option<String> {
    if !linear(doc.node, &mut 0) {
        return None;
    }
    let mut editor = Editor::new(text, crlf);
    editor.sample(doc.node, region.start)?;
    let slot = Slot {
        lead: region.start,
        col: 0,
        item: false,
    };
    editor.value(doc.node, slot, &doc.before, &doc.after)?;
    let mut edits = editor.edits;
    for e in &mut edits {
        if e.range.start < region.start || e.range.end > region.end {
            return None;
        }
        e.range = e.range.start - region.start..e.range.end - region.start;
    }
    let edited = apply_edits(&text[region], edits)?;
    let back = manifest::parse(&edited, source).ok()?;
    match back.as_slice() {
        [node] if same(&reemit::to_yaml(node, &edited), &doc.after) => Some(edited),
        _ => None,
    }
}

/// Apply edits (front to back, into a new string); edits at one offset keep the order they were made in.
/// `None` when two overlap.
fn apply_edits(text: &str, mut edits: Vec<Edit>) -> Option<String> {
    edits.sort_by_key(|e| e.range.start);
    if edits.windows(2).any(|w| w[0].range.end > w[1].range.start) {
        return None;
    }
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for e in &edits {
        out.push_str(text.get(at..e.range.start)?);
        out.push_str(&e.text);
        at = e.range.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Do keys and scalars appear in document order? An alias repeats its anchor's places (earlier in the
/// file), and an edit there would change every copy.
fn linear(node: &Node, at: &mut usize) -> bool {
    fn step(at: &mut usize, offset: usize) -> bool {
        let ok = offset >= *at;
        *at = offset;
        ok
    }
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .all(|e| step(at, e.key.origin.offset) && linear(&e.node, at)),
        Value::Seq(items) => items.iter().all(|i| linear(i, at)),
        Value::Scalar(_) => node.origin.len == 0 || step(at, node.origin.offset),
    }
}

/// Do two values read the same (strings as strings, other scalars as written, collections in order)?
pub(crate) fn same(a: &Yaml, b: &Yaml) -> bool {
    match (a, b) {
        (Yaml::Map(x), Yaml::Map(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, v), (l, w))| k == l && same(v, w))
        }
        (Yaml::Seq(x), Yaml::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        (Yaml::Map(_) | Yaml::Seq(_), _) | (_, Yaml::Map(_) | Yaml::Seq(_)) => false,
        _ => match (a.as_str(), b.as_str()) {
            (Some(s), Some(t)) => s == t,
            (None, None) => yaml::one_line(a) == yaml::one_line(b),
            _ => false,
        },
    }
}

/// Where a value sits: `lead` is just past its key's `:` or its item's `-`; `col` is that key's or dash's
/// column.
#[derive(Debug, Clone, Copy)]
struct Slot {
    lead: usize,
    col: usize,
    item: bool,
}

/// How a value is written in the text.
#[derive(Debug, Clone)]
enum Shape {
    /// On its key's or dash's line (a plain or quoted scalar, or a flow collection when `flow`); an empty
    /// null is an empty range at the lead.
    Inline { range: Range<usize>, flow: bool },
    /// A `|` or `>` scalar: its header, its content lines, their indentation, and where content ends.
    BlockScalar {
        header: Range<usize>,
        lines: Range<usize>,
        indent: Option<usize>,
        last: usize,
    },
    /// A block collection, from its first key or dash to where its content ends.
    Block { start: usize, last: usize },
}

/// Collects the edits of one document, reading positions from the whole file's text.
struct Editor<'t> {
    text: &'t str,
    edits: Vec<Edit>,
    /// (offset, columns) of the blocks seen: mapping steps, and sequence dash offsets under a key.
    steps: Vec<(usize, usize)>,
    seq_offsets: Vec<(usize, usize)>,
    crlf: bool,
}

impl<'t> Editor<'t> {
    fn new(text: &'t str, crlf: bool) -> Self {
        Editor {
            text,
            edits: Vec::new(),
            steps: Vec::new(),
            seq_offsets: Vec::new(),
            crlf,
        }
    }

    fn push(&mut self, range: Range<usize>, text: String) {
        let text = if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        };
        if self.text.get(range.clone()) != Some(text.as_str()) {
            self.edits.push(Edit { range, text });
        }
    }

    /// Insert whole lines at `pos`, a line start.
    fn insert_lines(&mut self, pos: usize, lines: String) {
        self.push(pos..pos, lines);
    }

    fn shape(&self, node: &Node, lead: usize) -> Option<Shape> {
        let text = self.text;
        let p = scan::value_start(text, lead);
        let next = text.as_bytes().get(p).copied();
        let origin = node.origin;
        match &node.value {
            Value::Scalar(_) => {
                if matches!(next, Some(b'|' | b'>')) {
                    let header = p..scan::header_end(text, p);
                    if origin.len == 0 {
                        let at = scan::end_of_line(text, header.end);
                        return Some(Shape::BlockScalar {
                            last: header.end,
                            header,
                            lines: at..at,
                            indent: None,
                        });
                    }
                    if origin.offset < header.end {
                        return None;
                    }
                    let last = scan::trim_end(text, origin.offset, origin.offset + origin.len);
                    Some(Shape::BlockScalar {
                        header,
                        lines: scan::line_start(text, origin.offset)..scan::end_of_line(text, last),
                        indent: Some(scan::col(text, origin.offset)),
                        last,
                    })
                } else if origin.len == 0 {
                    Some(Shape::Inline {
                        range: lead..lead,
                        flow: false,
                    })
                } else if origin.offset < lead {
                    None
                } else {
                    Some(Shape::Inline {
                        range: origin.range(),
                        flow: false,
                    })
                }
            }
            Value::Map(_) | Value::Seq(_) if matches!(next, Some(b'{' | b'[')) => {
                Some(Shape::Inline {
                    range: p..scan::flow_end(text, p)?,
                    flow: true,
                })
            }
            Value::Map(entries) => {
                let start = entries.first()?.key.origin.offset;
                (start >= lead).then_some(())?;
                Some(Shape::Block {
                    start,
                    last: self.last(node, lead)?,
                })
            }
            Value::Seq(items) => {
                let dashes = self.dashes(items, lead)?;
                Some(Shape::Block {
                    start: *dashes.first()?,
                    last: self.last(items.last()?, dashes.last()? + 1)?,
                })
            }
        }
    }

    /// Where a value's content ends.
    fn last(&self, node: &Node, lead: usize) -> Option<usize> {
        match &node.value {
            Value::Map(entries) if !self.is_flow(lead) => {
                let e = entries.last()?;
                let lead = scan::after_colon(self.text, e.key.origin.offset + e.key.origin.len)?;
                self.last(&e.node, lead)
            }
            Value::Seq(items) if !self.is_flow(lead) => {
                let dashes = self.dashes(items, lead)?;
                self.last(items.last()?, dashes.last()? + 1)
            }
            _ => Some(match self.shape(node, lead)? {
                Shape::Inline { range, .. } => range.end,
                Shape::BlockScalar { last, .. } | Shape::Block { last, .. } => last,
            }),
        }
    }

    fn is_flow(&self, lead: usize) -> bool {
        let p = scan::value_start(self.text, lead);
        matches!(self.text.as_bytes().get(p), Some(b'{' | b'['))
    }

    /// The `-` of each item of a block sequence whose value starts after `lead`.
    fn dashes(&self, items: &[Node], lead: usize) -> Option<Vec<usize>> {
        let mut out = Vec::with_capacity(items.len());
        let mut pos = lead;
        for item in items {
            let d = scan::dash(self.text, pos)?;
            out.push(d);
            pos = self.last(item, d + 1)?.max(d + 1);
        }
        Some(out)
    }

    /// Record the indentation of every block under a key, for blocks roce adds.
    fn sample(&mut self, node: &Node, lead: usize) -> Option<()> {
        let text = self.text;
        match &node.value {
            Value::Map(entries) if !self.is_flow(lead) => {
                for e in entries {
                    let key = e.key.origin.offset;
                    let kc = scan::col(text, key);
                    let lead = scan::after_colon(text, key + e.key.origin.len)?;
                    if !self.is_flow(lead) {
                        match &e.node.value {
                            Value::Map(child) if !child.is_empty() => {
                                let child = child[0].key.origin.offset;
                                let c = scan::col(text, child);
                                if c > kc && scan::starts_line(text, child) {
                                    self.steps.push((key, c - kc));
                                }
                            }
                            Value::Seq(items) if !items.is_empty() => {
                                let d = scan::dash(text, lead)?;
                                if scan::starts_line(text, d) && scan::col(text, d) >= kc {
                                    self.seq_offsets.push((key, scan::col(text, d) - kc));
                                }
                            }
                            _ => {}
                        }
                    }
                    self.sample(&e.node, lead)?;
                }
            }
            Value::Seq(items) if !self.is_flow(lead) => {
                let dashes = self.dashes(items, lead)?;
                for (item, d) in items.iter().zip(dashes) {
                    self.sample(item, d + 1)?;
                }
            }
            _ => {}
        }
        Some(())
    }

    /// The layout of the nearest block at or before `pos` (the first one, else `kubectl`'s).
    fn layout(&self, pos: usize) -> Layout {
        let near = |samples: &[(usize, usize)], default: usize| {
            samples
                .iter()
                .rev()
                .find(|(at, _)| *at <= pos)
                .or(samples.first())
                .map_or(default, |(_, n)| *n)
        };
        Layout {
            step: near(&self.steps, KUBECTL.step),
            seq_offset: near(&self.seq_offsets, KUBECTL.seq_offset),
        }
    }

    /// Edit the value in `slot` from `old` to `new`.
    fn value(&mut self, node: &Node, slot: Slot, old: &Yaml, new: &Yaml) -> Option<()> {
        if same(old, new) {
            return Some(());
        }
        let shape = self.shape(node, slot.lead)?;
        match (&node.value, old, new, &shape) {
            (Value::Map(entries), Yaml::Map(o), Yaml::Map(n), Shape::Block { .. })
                if keeps_keys(o, n) =>
            {
                self.map(entries, o, n)
            }
            (Value::Seq(items), Yaml::Seq(o), Yaml::Seq(n), Shape::Block { .. }) => {
                self.seq(items, slot.lead, o, n)
            }
            (_, Yaml::Map(_), Yaml::Map(_), Shape::Inline { range, flow: true })
            | (_, Yaml::Seq(_), Yaml::Seq(_), Shape::Inline { range, flow: true })
                if yaml::one_line(old).is_none() =>
            {
                let new = match (old, new) {
                    (Yaml::Seq(o), Yaml::Seq(n)) => Yaml::Seq(quoted_like(o, n)),
                    _ => new.clone(),
                };
                self.flow(node, slot, &shape, range.clone(), &new)
            }
            _ => self.replace(&node.value, slot, &shape, new),
        }
    }

    /// A flow collection that changes: written again in flow style when its line stays short, else as a
    /// block.
    fn flow(
        &mut self,
        node: &Node,
        slot: Slot,
        shape: &Shape,
        range: Range<usize>,
        new: &Yaml,
    ) -> Option<()> {
        let text = self.text;
        let line = scan::line_start(text, range.start);
        let end = text[range.end..]
            .find(['\n', '\r'])
            .map_or(text.len(), |i| range.end + i);
        match yaml::flow(new) {
            Some(f) if range.start - line + f.len() + (end - range.end) <= MAX_FLOW_LINE => {
                self.push(range, f);
                Some(())
            }
            _ => self.replace(&node.value, slot, shape, new),
        }
    }

    /// A block mapping whose keys all stay, in order: edit each value, insert the new keys where they go.
    fn map(
        &mut self,
        entries: &[roce_model::plumbing::tree::Entry],
        old: &[(yaml::Key, Yaml)],
        new: &[(yaml::Key, Yaml)],
    ) -> Option<()> {
        let text = self.text;
        let first = entries.first()?.key.origin.offset;
        let col = scan::col(text, first);
        let mut j = 0;
        let mut prev_last: Option<usize> = None;
        for (e, (_, before)) in entries.iter().zip(old) {
            let start = j;
            while new.get(j)?.0 != e.key.value {
                j += 1;
            }
            if j > start {
                self.insert_entries(&new[start..j], col, prev_last, first);
            }
            let lead = scan::after_colon(text, e.key.origin.offset + e.key.origin.len)?;
            let slot = Slot {
                lead,
                col,
                item: false,
            };
            self.value(&e.node, slot, before, &new[j].1)?;
            prev_last = Some(self.last(&e.node, lead)?);
            j += 1;
        }
        if j < new.len() {
            self.insert_entries(&new[j..], col, prev_last, first);
        }
        Some(())
    }

    /// New entries after the entry whose content ends at `after`, or (`None`) before the first key.
    fn insert_entries(
        &mut self,
        group: &[(yaml::Key, Yaml)],
        col: usize,
        after: Option<usize>,
        first: usize,
    ) {
        match after {
            Some(last) => {
                let at = scan::end_of_line(self.text, last);
                let lines = yaml::entries_at(group, col, self.layout(at));
                self.insert_lines(at, lines);
            }
            None => {
                let lines = yaml::entries_at(group, col, self.layout(first));
                self.push(
                    first..first,
                    format!("{}{}", &lines[col..], " ".repeat(col)),
                );
            }
        }
    }

    /// A block sequence: items that stay (by name, else by value) are edited, the others deleted or
    /// inserted.
    fn seq(&mut self, items: &[Node], lead: usize, old: &[Yaml], new: &[Yaml]) -> Option<()> {
        let text = self.text;
        let dashes = self.dashes(items, lead)?;
        let dcol = scan::col(text, dashes[0]);
        let ops = align(old, new)?;
        let mut k = 0;
        while k < ops.len() {
            if let Op::Keep(i, j) = ops[k] {
                let slot = Slot {
                    lead: dashes[i] + 1,
                    col: dcol,
                    item: true,
                };
                self.value(&items[i], slot, &old[i], &new[j])?;
                k += 1;
                continue;
            }
            // A run of deletions and insertions up to the next kept item.
            let run_end = ops[k..]
                .iter()
                .position(|op| matches!(op, Op::Keep(..)))
                .map_or(ops.len(), |p| k + p);
            let gone: Vec<usize> = ops[k..run_end]
                .iter()
                .filter_map(|op| match op {
                    Op::Delete(i) => Some(*i),
                    _ => None,
                })
                .collect();
            let added: Vec<usize> = ops[k..run_end]
                .iter()
                .filter_map(|op| match op {
                    Op::Insert(j) => Some(*j),
                    _ => None,
                })
                .collect();
            let paired = gone.len() == added.len()
                && gone
                    .iter()
                    .zip(&added)
                    .all(|(i, j)| name(&old[*i]).is_none() && name(&new[*j]).is_none());
            if paired {
                for (i, j) in gone.iter().zip(&added) {
                    let slot = Slot {
                        lead: dashes[*i] + 1,
                        col: dcol,
                        item: true,
                    };
                    self.value(&items[*i], slot, &old[*i], &new[*j])?;
                }
            } else {
                if let (Some(&j0), Some(&j1)) = (added.first(), added.last()) {
                    let group = &quoted_like(old, &new[j0..=j1])[..];
                    // Before the first item removed or the next item kept, else after the last.
                    let next = gone.first().copied().or_else(|| match ops.get(run_end) {
                        Some(Op::Keep(i, _)) => Some(*i),
                        _ => None,
                    });
                    self.insert_items(group, items, &dashes, next)?;
                }
                for i in gone {
                    if !scan::starts_line(text, dashes[i]) {
                        return None;
                    }
                    let end = scan::end_of_line(text, self.last(&items[i], dashes[i] + 1)?);
                    self.push(scan::line_start(text, dashes[i])..end, String::new());
                }
            }
            k = run_end;
        }
        Some(())
    }

    /// New items before item `next` (whose dash is in `dashes`), or after the last item.
    fn insert_items(
        &mut self,
        group: &[Yaml],
        items: &[Node],
        dashes: &[usize],
        next: Option<usize>,
    ) -> Option<()> {
        let text = self.text;
        let dcol = scan::col(text, *dashes.first()?);
        match next {
            Some(i) if scan::starts_line(text, dashes[i]) => {
                let at = scan::line_start(text, dashes[i]);
                let lines = yaml::items_at(group, dcol, self.layout(at));
                self.insert_lines(at, lines);
            }
            // A dash after another (`- - x`): the items go on its line, the dash after them.
            Some(i) => {
                let lines = yaml::items_at(group, dcol, self.layout(dashes[i]));
                self.push(
                    dashes[i]..dashes[i],
                    format!("{}{}", lines.get(dcol..)?, " ".repeat(dcol)),
                );
            }
            None => {
                let last = self.last(items.last()?, dashes.last()? + 1)?;
                let at = scan::end_of_line(text, last);
                let lines = yaml::items_at(group, dcol, self.layout(at));
                self.insert_lines(at, lines);
            }
        }
        Some(())
    }

    /// Write `new` in place of the value in `slot`, keeping what is around it.
    fn replace(&mut self, old: &Value, slot: Slot, shape: &Shape, new: &Yaml) -> Option<()> {
        let text = self.text;
        let layout = self.layout(slot.lead);
        let c = slot.col;
        let (map_indent, seq_indent, body_indent) = if slot.item {
            (c + 2, c + 2, c + 2)
        } else {
            (c + layout.step, c + layout.seq_offset, c + layout.step)
        };
        let lines_at = |map_indent: usize, seq_indent: usize| match new {
            Yaml::Map(entries) => yaml::entries_at(entries, map_indent, layout),
            Yaml::Seq(items) => yaml::items_at(items, seq_indent, layout),
            _ => String::new(),
        };
        let block = |indent: usize| match new {
            Yaml::Block(s) => yaml::literal_block(s, indent),
            _ => None,
        };
        let line = yaml::one_line(new);
        match shape {
            Shape::Inline { range, .. } => {
                let at_lead = |s: &str| {
                    if range.is_empty() {
                        (slot.lead..slot.lead, format!(" {s}"))
                    } else {
                        (range.clone(), s.to_string())
                    }
                };
                if let Some(t) = line {
                    let (r, t) = at_lead(&t);
                    self.push(r, t);
                } else if let Some((header, body)) = block(body_indent) {
                    let (r, t) = at_lead(header);
                    self.push(r, t);
                    self.insert_lines(scan::end_of_line(text, range.end), body);
                } else {
                    if !range.is_empty() {
                        self.push(slot.lead..range.end, String::new());
                    }
                    let lines = lines_at(map_indent, seq_indent);
                    self.insert_lines(scan::end_of_line(text, range.end.max(slot.lead)), lines);
                }
            }
            Shape::BlockScalar {
                header,
                lines,
                indent,
                ..
            } => {
                if let Some(t) = line {
                    self.push(header.clone(), t);
                    self.push(lines.clone(), String::new());
                } else if let Some((h, body)) = block(indent.unwrap_or(body_indent)) {
                    self.push(header.clone(), h.to_string());
                    self.push(lines.clone(), body);
                } else {
                    self.push(slot.lead..header.end, String::new());
                    self.push(lines.clone(), lines_at(map_indent, seq_indent));
                }
            }
            Shape::Block { start, last } => {
                let end = scan::end_of_line(text, *last);
                let c0 = scan::col(text, *start);
                // A collection stays at its column when it stays a collection of the same kind.
                let (map_indent, seq_indent) = match (old, new) {
                    (Value::Map(_), Yaml::Map(_)) | (Value::Seq(_), Yaml::Seq(_)) => (c0, c0),
                    _ => (map_indent, seq_indent),
                };
                if !scan::starts_line(text, *start) {
                    let t = match (line, block(c0)) {
                        (Some(t), _) => format!("{t}\n"),
                        (None, Some((h, body))) => format!("{h}\n{body}"),
                        (None, None) => lines_at(c0, c0).get(c0..)?.to_string(),
                    };
                    self.push(*start..end, t);
                } else {
                    let from = scan::line_start(text, *start);
                    if let Some(t) = line {
                        self.push(slot.lead..slot.lead, format!(" {t}"));
                        self.push(from..end, String::new());
                    } else if let Some((h, body)) = block(body_indent) {
                        self.push(slot.lead..slot.lead, format!(" {h}"));
                        self.push(from..end, body);
                    } else {
                        self.push(from..end, lines_at(map_indent, seq_indent));
                    }
                }
            }
        }
        Some(())
    }
}

/// Longest line a flow collection that grows may make; a longer one is written as a block.
const MAX_FLOW_LINE: usize = 100;

/// Are the keys of `old` in `new`, in the same order?
fn keeps_keys(old: &[(yaml::Key, Yaml)], new: &[(yaml::Key, Yaml)]) -> bool {
    let mut keys = new.iter().map(|(k, _)| k);
    old.iter().all(|(k, _)| keys.any(|n| n == k))
}

/// `items` with their strings double-quoted when every string of the list `old` is: a list written
/// `["SYS_NICE"]` grows to `["SYS_NICE", "IPC_LOCK"]`.
fn quoted_like(old: &[Yaml], items: &[Yaml]) -> Vec<Yaml> {
    let mut strings = old.iter().filter(|y| y.as_str().is_some()).peekable();
    let quoted = strings.peek().is_some() && strings.all(|y| matches!(y, Yaml::Quoted(_)));
    items
        .iter()
        .map(|y| match y {
            Yaml::Str(s) | Yaml::Plain(s) if quoted => Yaml::Quoted(s.clone()),
            other => other.clone(),
        })
        .collect()
}

/// The `name` of a mapping item (env, containers, volumes…).
fn name(y: &Yaml) -> Option<&str> {
    match y {
        Yaml::Map(_) => y.get("name").and_then(Yaml::as_str),
        _ => None,
    }
}

/// A Kubernetes object's kind, `metadata.name` and `metadata.namespace` (the items of a `List`).
fn object_id(y: &Yaml) -> Option<(&str, &str, Option<&str>)> {
    let metadata = y.get("metadata")?;
    Some((
        y.get("kind")?.as_str()?,
        metadata.get("name")?.as_str()?,
        metadata.get("namespace").and_then(Yaml::as_str),
    ))
}

/// Are two items the same item, to be edited rather than replaced? Items with a `name` (env, containers,
/// volumes) by name, objects (a `List`'s items) by kind, name and namespace, anything else by value.
fn same_item(a: &Yaml, b: &Yaml) -> bool {
    match (name(a), name(b)) {
        (Some(x), Some(y)) => x == y,
        _ => match (object_id(a), object_id(b)) {
            (Some(x), Some(y)) => x == y,
            _ => same(a, b),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// Largest table [`align`] fills: past it, a document is written anew.
const MAX_ALIGN: usize = 1 << 20;

/// A longest common subsequence of items, as keep, delete and insert steps in order.
fn align(old: &[Yaml], new: &[Yaml]) -> Option<Vec<Op>> {
    let (n, m) = (old.len(), new.len());
    if (n + 1).saturating_mul(m + 1) > MAX_ALIGN {
        return None;
    }
    // lcs[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if same_item(&old[i], &new[j]) {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && same_item(&old[i], &new[j]) {
            ops.push(Op::Keep(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[at(i, j + 1)] >= lcs[at(i + 1, j)]) {
            ops.push(Op::Insert(j));
            j += 1;
        } else {
            ops.push(Op::Delete(i));
            i += 1;
        }
    }
    Some(ops)
}
