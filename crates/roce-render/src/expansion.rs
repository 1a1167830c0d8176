//! Kubernetes' `$(VAR)` expansion in env values, escaped so a container sees a value verbatim.

/// Kubernetes expands `$(NAME)` in env values and reduces `$$` to `$`; double a `$` that precedes `(` or
/// `$` so the container sees the value verbatim.
pub fn escape_dependent_vars(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$' && matches!(chars.peek(), Some('(' | '$')) {
            out.push('$');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape_dependent_vars;

    /// Kubernetes' expansion of env values (`third_party/forked/golang/expansion`): `$$` → `$`,
    /// `$(NAME)` → the variable (here: `<NAME>`, since none is defined), any other `$` kept.
    fn k8s_expand(s: &str) -> String {
        let b: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == '$' && i + 1 < b.len() {
                if b[i + 1] == '$' {
                    out.push('$');
                    i += 2;
                    continue;
                }
                if b[i + 1] == '('
                    && let Some(end) = b[i + 2..].iter().position(|c| *c == ')')
                {
                    let name: String = b[i + 2..i + 2 + end].iter().collect();
                    out.push_str(&format!("<{name}>"));
                    i += end + 3;
                    continue;
                }
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }

    #[test]
    fn dollar_escaping_survives_kubernetes_expansion() {
        for v in [
            "a$(B)", "$$", "$$(X)", "$HOME", "x$", "$", "$($(A))", "plain", "$$$(",
        ] {
            assert_eq!(k8s_expand(&escape_dependent_vars(v)), v, "{v}");
        }
        assert_eq!(escape_dependent_vars("a$(B)"), "a$$(B)");
        assert_eq!(escape_dependent_vars("$HOME"), "$HOME");
        // The check above is meaningful: unescaped, Kubernetes would change these.
        assert_ne!(k8s_expand("a$(B)"), "a$(B)");
        assert_ne!(k8s_expand("$$"), "$$");
    }
}
