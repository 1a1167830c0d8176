//! Positions in YAML text that the parser does not report: the `:` after a key, the `-` of a block
//! sequence item, the end of a flow collection or a line, a block scalar's header.
//!
//! Every function takes byte offsets into the whole file and returns `None` rather than guess, so a
//! caller can fall back to writing the node out.

/// Where the line holding `pos` starts.
pub(crate) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The column of `pos` (bytes from its line start; indentation is ASCII).
pub(crate) fn col(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

/// Just past the end of the line whose last content ends at `pos`: after its `\n`, or the end of the text.
/// A `pos` that already starts a line is returned as is.
pub(crate) fn end_of_line(text: &str, pos: usize) -> usize {
    if pos > 0 && text.as_bytes()[pos - 1] == b'\n' {
        return pos;
    }
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

/// Does only indentation stand before `pos` on its line?
pub(crate) fn starts_line(text: &str, pos: usize) -> bool {
    text[line_start(text, pos)..pos].bytes().all(|b| b == b' ')
}

/// The start of the first line at or after `pos` (a line start) that is a document marker (`---` or
/// `...`), or the end of the text.
pub(crate) fn document_end(text: &str, pos: usize) -> usize {
    let mut at = pos;
    while at < text.len() {
        let line = &text[at..end_of_line(text, at + 1)];
        let marker = ["---", "..."].iter().any(|m| {
            line.strip_prefix(m).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace())
            })
        });
        if marker {
            return at;
        }
        at += line.len();
    }
    text.len()
}

fn skip_space(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    while pos < b.len() && matches!(b[pos], b' ' | b'\t') {
        pos += 1;
    }
    pos
}

/// Just past the `:` that follows a key ending at `key_end`.
pub(crate) fn after_colon(text: &str, key_end: usize) -> Option<usize> {
    let at = skip_space(text, key_end);
    (text.as_bytes().get(at) == Some(&b':')).then_some(at + 1)
}

/// The first byte of a value that starts at or after `pos` on the same line, past anchors and tags.
pub(crate) fn value_start(text: &str, pos: usize) -> usize {
    let b = text.as_bytes();
    let mut at = skip_space(text, pos);
    while at < b.len() && matches!(b[at], b'&' | b'!') {
        while at < b.len() && !matches!(b[at], b' ' | b'\t' | b'\n' | b'\r') {
            at += 1;
        }
        at = skip_space(text, at);
    }
    at
}

/// The next token at or after `pos`, past spaces, line breaks and comments.
pub(crate) fn next_token(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    loop {
        while pos < b.len() && matches!(b[pos], b' ' | b'\t' | b'\n' | b'\r') {
            pos += 1;
        }
        if pos < b.len() && b[pos] == b'#' {
            pos = end_of_line(text, pos + 1);
        } else {
            return pos;
        }
    }
}

/// The `-` of a block sequence item at or after `pos`.
pub(crate) fn dash(text: &str, pos: usize) -> Option<usize> {
    let at = next_token(text, pos);
    let b = text.as_bytes();
    (b.get(at) == Some(&b'-') && b.get(at + 1).is_none_or(|c| c.is_ascii_whitespace()))
        .then_some(at)
}

/// The end of a block scalar header (`|`, `>-`, `|2+`) starting at `pos`.
pub(crate) fn header_end(text: &str, pos: usize) -> usize {
    let b = text.as_bytes();
    let mut at = pos + 1;
    while at < b.len() && (b[at].is_ascii_digit() || matches!(b[at], b'+' | b'-')) {
        at += 1;
    }
    at
}

/// Back from `end` over white space, not below `floor`.
pub(crate) fn trim_end(text: &str, floor: usize, mut end: usize) -> usize {
    let b = text.as_bytes();
    while end > floor && matches!(b[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    end
}

/// Just past the `]` or `}` that closes the flow collection opening at `start`.
pub(crate) fn flow_end(text: &str, start: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // A quote opens a quoted scalar only where a scalar starts.
    let mut token_start = true;
    let mut at = start;
    while at < b.len() {
        match b[at] {
            b'[' | b'{' => {
                depth += 1;
                token_start = true;
            }
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at + 1);
                }
                token_start = false;
            }
            b',' | b':' => token_start = true,
            b'"' if token_start => {
                at += 1;
                while at < b.len() && b[at] != b'"' {
                    at += if b[at] == b'\\' { 2 } else { 1 };
                }
                token_start = false;
            }
            b'\'' if token_start => {
                at += 1;
                while at < b.len() {
                    if b[at] == b'\'' {
                        if b.get(at + 1) == Some(&b'\'') {
                            at += 1;
                        } else {
                            break;
                        }
                    }
                    at += 1;
                }
                token_start = false;
            }
            b'#' if at > 0 && b[at - 1].is_ascii_whitespace() => {
                at = end_of_line(text, at + 1);
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => token_start = false,
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ends_past_quotes_comments_and_nesting() {
        let text = "a: [x, \"]\", 'it''s ]', {b: [c]}, # ] not this\n  d] # tail\n";
        let start = text.find('[').unwrap();
        assert_eq!(
            &text[..flow_end(text, start).unwrap()],
            "a: [x, \"]\", 'it''s ]', {b: [c]}, # ] not this\n  d]"
        );
        assert_eq!(flow_end("[a, b", 0), None);
        assert_eq!(flow_end("[don't, x]", 0), Some(10));
    }

    #[test]
    fn lines_and_tokens() {
        let text = "a:\n  # c\n  - x\nb: |-\n  t\n";
        assert_eq!(end_of_line(text, 1), 3);
        assert_eq!(end_of_line(text, 3), 3);
        assert_eq!(dash(text, 2), Some(text.find('-').unwrap()));
        assert_eq!(
            dash("a:\n# c\n#\n- x", 2),
            Some(9),
            "comment lines at column 0"
        );
        assert_eq!(flow_end("[a,\n# c ]\nb]", 0), Some(12));
        assert_eq!(col(text, text.find('-').unwrap()), 2);
        let h = text.find('|').unwrap();
        assert_eq!(&text[h..header_end(text, h)], "|-");
        assert_eq!(after_colon(text, 1), Some(2));
        assert_eq!(value_start("k: &a !!map {", 2), 12);
        assert!(starts_line(text, text.find('-').unwrap()));
        let docs = "a: 1\n# c\n--- # two\nb: 2\n...\n";
        assert_eq!(&docs[..document_end(docs, 0)], "a: 1\n# c\n");
        let b = docs.find("b:").unwrap();
        assert_eq!(&docs[b..document_end(docs, b)], "b: 2\n");
        assert_eq!(document_end("a: ---\n", 0), 7);
    }
}
