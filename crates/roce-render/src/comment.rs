//! `#` comment blocks: the one writer of prose in artifacts (notes, validation-job instructions).

use crate::plan::Note;

/// Width of comment prose.
const WRAP: usize = 110;

/// A comment block, each line prefixed with `# ` and prose wrapped at [`WRAP`] columns. An empty line
/// becomes a bare `#`; lines that start with a space (commands to copy) are kept whole.
pub(crate) fn block(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        if line.is_empty() {
            out.push_str("#\n");
            continue;
        }
        if line.starts_with(' ') {
            out.push_str(&format!("# {line}\n"));
            continue;
        }
        let mut current = String::new();
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            if !current.is_empty() && current.len() + 1 + word.len() > WRAP - 2 {
                out.push_str(&format!("# {current}\n"));
                current.clear();
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&format!("# {current}\n"));
    }
    out
}

/// Notes as a comment block, one paragraph each.
pub(crate) fn notes<'a>(notes: impl IntoIterator<Item = &'a Note>) -> String {
    let lines: Vec<String> = notes.into_iter().map(|n| n.text.clone()).collect();
    block(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_wrap_prose_and_keep_commands_whole() {
        let long = "word ".repeat(40);
        let cmd = format!("  kubectl {}", "x".repeat(150));
        let text = block(&[long.trim().to_string(), String::new(), cmd.clone()]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.starts_with('#')));
        assert!(
            lines[..lines.len() - 1].iter().all(|l| l.len() <= WRAP),
            "{text}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains("word"))
                .map(|l| l.matches("word").count())
                .sum::<usize>(),
            40
        );
        assert!(lines.contains(&"#"));
        assert_eq!(lines.last().copied(), Some(format!("# {cmd}").as_str()));
    }
}
