//! Text layout for reports: aligned columns and word wrap for terminals, escaping and fences for
//! Markdown.

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub(crate) fn table<const N: usize>(rows: &[[String; N]], indent: usize) -> String {
    let mut widths = [0usize; N];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut o = String::new();
    for r in rows {
        let mut line = " ".repeat(indent);
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < N {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        o.push_str(line.trim_end());
        o.push('\n');
    }
    o
}

/// Word-wrap a paragraph at `width` columns with an indent.
pub(crate) fn wrap(text: &str, indent: usize, width: usize) -> String {
    let pad = " ".repeat(indent);
    let mut o = String::new();
    let mut line = pad.clone();
    for word in text.split(' ') {
        if line.len() > indent && line.chars().count() + 1 + word.chars().count() > width {
            o.push_str(&line);
            o.push('\n');
            line = pad.clone();
        }
        if line.len() > indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    o.push_str(&line);
    o.push('\n');
    o
}

/// Inline code for Markdown, safe inside a table cell.
pub(crate) fn code(s: &str) -> String {
    let s = s.replace('|', "\\|").replace('\n', " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

pub(crate) fn md_opt(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "—".to_string(), code)
}

pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A code fence longer than any run of backticks in the text.
pub(crate) fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

pub(crate) fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_are_escaped() {
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(fence_for("x ```` y"), "`````");
        assert_eq!(fence_for("plain"), "```");
    }

    #[test]
    fn wrap_keeps_words_whole() {
        let w = wrap("aaa bbb ccc", 2, 9);
        assert_eq!(w, "  aaa bbb\n  ccc\n");
    }
}
