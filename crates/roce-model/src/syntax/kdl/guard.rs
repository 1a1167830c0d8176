//! The depth guard that runs before `kdl` parses a profile (kdl-org/kdl-rs#177), and the blanked copy of a
//! text that lets braces inside strings through it.
//!
//! [`brace_depth`] is deliberately pessimistic about strings: `kdl`'s error recovery may re-read a string it
//! rejects as code, so a `{` in any string counts and a `}` in one never closes. That refuses a valid profile
//! whose string values hold braces (`"${X:-0}"` seven times). [`one_line_strings`] and [`blank`] give the
//! second chance: the same text with every one-line string's content replaced by `_`, offsets kept, where no
//! string can hide a brace from the scan or from `kdl`.

use std::ops::Range;

/// How deep a KDL profile may nest children blocks. A profile needs four; the cap is low because the `kdl`
/// crate (6.7) takes time exponential in the nesting of slashdashed children (`a /-{` repeated: 2^n, about a
/// second at 14 levels; kdl-org/kdl-rs#177, found by our fuzzer), so depth is refused before `kdl` sees it.
pub(crate) const KDL_MAX_DEPTH: usize = 8;

/// Offset of the first `{` that may open a block deeper than `limit`: an upper bound on the nesting `kdl` can
/// see, whatever its error recovery makes of malformed input. Comments are read as KDL v2 reads them (`//` to
/// the line's end, nesting `/* … */`; an unclosed `/*` hides nothing). Strings (`"…"` with escapes on one
/// line, `"""…"""` with a newline after the opener, raw `#"…"#` / `##"""…"""##`; an unclosed one runs to its
/// line's end, or to the end for multi-line and raw ones) are skipped, but a `{` inside one still counts
/// unless it is a `{name}` placeholder, and a `}` inside one never closes: a string `kdl` rejects (a control
/// character, a bad escape, no closing quote) may be re-read as code by its recovery, so braces in strings
/// cannot be trusted to be inert, and a `}` there cannot be trusted to close. A placeholder re-read as code opens and closes one level, so `kdl`
/// sees at most one level more than this counts. The count errs high only on braces in strings.
pub(crate) fn brace_depth(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let open = |depth: &mut usize, at: usize| {
        *depth += 1;
        (*depth > limit).then_some(at)
    };
    for lexeme in lexemes(b) {
        match lexeme {
            Lexeme::Str(token) => {
                let mut j = token.start;
                while j < token.end {
                    if b[j] == b'{' {
                        if let Some(len) = placeholder_len(&b[j..token.end]) {
                            j += len;
                            continue;
                        }
                        if let Some(at) = open(&mut depth, j) {
                            return Some(at);
                        }
                    }
                    j += 1;
                }
            }
            Lexeme::Open(at) => {
                if let Some(at) = open(&mut depth, at) {
                    return Some(at);
                }
            }
            Lexeme::Close => depth = depth.saturating_sub(1),
        }
    }
    None
}

/// What the scan reads in KDL text: strings (and `#` keywords), and braces outside strings and comments.
enum Lexeme {
    /// A string token, or a `#` keyword, from its first byte to just past its end ([`skip_string`]).
    Str(Range<usize>),
    /// A `{` outside strings and comments, at this offset.
    Open(usize),
    /// A `}` outside strings and comments.
    Close,
}

/// The lexemes of `b`, in order; comments are skipped as KDL v2 reads them.
fn lexemes(b: &[u8]) -> impl Iterator<Item = Lexeme> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let at = i;
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
                b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
                b'#' | b'"' => {
                    i = skip_string(b, at);
                    return Some(Lexeme::Str(at..i));
                }
                b'{' => {
                    i += 1;
                    return Some(Lexeme::Open(at));
                }
                b'}' => {
                    i += 1;
                    return Some(Lexeme::Close);
                }
                _ => i += 1,
            }
        }
        None
    })
}

/// Length of a `{name}` placeholder (`{nic}`, `{host-port}`) at the start of `b`.
fn placeholder_len(b: &[u8]) -> Option<usize> {
    let name = b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_'))
        .count();
    (b.get(1 + name) == Some(&b'}')).then_some(name + 2)
}

/// Skip the `/* … */` comment at `at` (comments nest); an unclosed one skips only its `/`.
fn skip_block_comment(b: &[u8], at: usize) -> usize {
    let mut nest = 1usize;
    let mut i = at + 2;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            nest += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            nest -= 1;
            i += 2;
            if nest == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    at + 1
}

/// Length of the KDL v2 newline at `i`, if one starts there: CRLF, CR, LF, NEL, VT, FF, LS or PS, the set
/// `kdl` ends a `//` comment and a one-line string at. (A scan that knew only LF read a `//` comment past the
/// CRs that end it for `kdl`, and missed the braces behind them; found by the fuzzer.)
fn newline_len(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i..)? {
        [b'\r', b'\n', ..] => Some(2),
        [b'\r' | b'\n' | 0x0B | 0x0C, ..] => Some(1),
        [0xC2, 0x85, ..] => Some(2),
        [0xE2, 0x80, 0xA8 | 0xA9, ..] => Some(3),
        _ => None,
    }
}

/// Length of the KDL v2 space (`unicode-space`) at `i`, if one starts there.
fn space_len(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i..)? {
        [b'\t' | b' ', ..] => Some(1),
        [0xC2, 0xA0, ..] => Some(2),
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..] => Some(3),
        _ => None,
    }
}

/// Offset of the first newline at or after `from` (the end of the text if none).
fn line_end(b: &[u8], from: usize) -> usize {
    (from..b.len())
        .find(|&i| newline_len(b, i).is_some())
        .unwrap_or(b.len())
}

/// The end of the string (or `#` keyword) starting at `at`: just past its closer, or, for a string that is
/// never closed, the end of its line (a one-line string) or of the text (a multi-line or raw one). The caller
/// treats everything up to there as string content: a `{` still counts, a `}` closes nothing, so an unclosed
/// string can neither hide nesting nor undo it, whatever `kdl`'s recovery makes of it.
fn skip_string(b: &[u8], at: usize) -> usize {
    let hashes = b[at..].iter().take_while(|&&c| c == b'#').count();
    let q = at + hashes;
    if b.get(q) != Some(&b'"') {
        // `#true`, `#null`, … : a keyword, not a string
        return q.max(at + 1);
    }
    // `"""` opens a multi-line string only when a newline follows it
    let multi = b[q..].starts_with(b"\"\"\"") && newline_len(b, q + 3).is_some();
    let open = if multi { 3 } else { 1 };
    let mut closer = Vec::with_capacity(open + hashes);
    closer.extend(std::iter::repeat_n(b'"', open));
    closer.extend(std::iter::repeat_n(b'#', hashes));
    let mut i = q + open;
    while i < b.len() {
        let c = b[i];
        if hashes == 0 && c == b'\\' {
            // A whitespace escape (`\` and a run of spaces and newlines, as `kdl` reads it) continues the
            // string past line ends; any other escape takes one more byte, which cannot close the string.
            let mut j = i + 1;
            while let Some(len) = space_len(b, j).or_else(|| newline_len(b, j)) {
                j += len;
            }
            i = if j > i + 1 { j } else { i + 2 };
            continue;
        }
        if !multi && hashes == 0 && newline_len(b, i).is_some() {
            return i;
        }
        if b[i..].starts_with(&closer) {
            return i + closer.len();
        }
        i += 1;
    }
    b.len()
}

/// The closed one-line strings (`"…"`, `#"…"#`) in `text`, found as [`brace_depth`] finds strings: outside
/// comments, in order. Multi-line strings, unclosed strings and strings that span a line are left out.
pub(crate) fn one_line_strings(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    lexemes(b)
        .filter_map(|lexeme| match lexeme {
            Lexeme::Str(token) if one_line_content(b, token.clone()).is_some() => Some(token),
            _ => None,
        })
        .collect()
}

/// The content of the one-line string token `token` (between its opener and closer), if it is one.
fn one_line_content(b: &[u8], token: Range<usize>) -> Option<Range<usize>> {
    let t = &b[token.clone()];
    let hashes = t.iter().take_while(|&&c| c == b'#').count();
    let open = hashes + 1;
    let close = hashes + 1;
    let closed = t.len() >= open + close
        && t.get(hashes) == Some(&b'"')
        && t[t.len() - close] == b'"'
        && t[t.len() - hashes..].iter().all(|&c| c == b'#');
    let multi =
        t[hashes..].starts_with(b"\"\"\"") && matches!(t.get(hashes + 3), Some(b'\n' | b'\r'));
    let one_line = (0..t.len()).all(|i| newline_len(t, i).is_none());
    (closed && !multi && one_line).then(|| token.start + open..token.end - close)
}

/// `text` with the content of each of `strings` (from [`one_line_strings`]) replaced by `_`, byte for byte:
/// every offset, and so every span `kdl` reports, is the same as in `text`.
pub(crate) fn blank(text: &str, strings: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    // A content range starts after a `"` and ends at one, so both ends are char boundaries.
    for content in strings
        .iter()
        .filter_map(|t| one_line_content(text.as_bytes(), t.clone()))
    {
        out.push_str(&text[at..content.start]);
        out.extend(std::iter::repeat_n('_', content.len()));
        at = content.end;
    }
    out.push_str(&text[at..]);
    out
}
