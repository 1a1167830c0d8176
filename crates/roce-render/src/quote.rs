//! Quoting for shell-like consumers: POSIX `sh` (sbatch scripts), Dockerfile
//! `ENV` values and dotenv files.
//!
//! Every function either returns a spelling that its consumers read back as
//! exactly the input, or says why no such spelling exists. All targets are
//! line-oriented, so control characters (newline, CR, NUL, tab, DEL, C1) are
//! always refused.

use std::fmt;

/// Why a value cannot be written for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrepresentable {
    /// A line feed (U+000A); every target here is one value per line.
    Newline,
    /// A NUL (U+0000); no environment variable or C string can hold it.
    Nul,
    /// A carriage return (U+000D); CRLF handling would eat or add it.
    CarriageReturn,
    /// Any other control character: tab, the rest of C0, DEL, or C1.
    OtherControl(char),
    /// A character that the readers of the target disagree on, so no single
    /// spelling reads back unchanged in all of them. See `dockerfile_env`
    /// (`\` at the end or before `"`) and `dotenv` (`'`, `\`, `$`).
    NotPortable(char),
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unrepresentable::Newline => f.write_str("the value contains a newline"),
            Unrepresentable::Nul => f.write_str("the value contains a NUL character"),
            Unrepresentable::CarriageReturn => f.write_str("the value contains a carriage return"),
            Unrepresentable::OtherControl(c) => {
                write!(
                    f,
                    "the value contains the control character U+{:04X}",
                    u32::from(*c)
                )
            }
            Unrepresentable::NotPortable(c) => write!(
                f,
                "the value contains {c:?} where readers of this format disagree on its meaning"
            ),
        }
    }
}

impl std::error::Error for Unrepresentable {}

/// Quotes `value` as one POSIX `sh` word, for an assignment (`X=<here>`) or
/// a command argument.
///
/// A non-empty value made only of `[A-Za-z0-9_@%+=:,./-]` (and not starting
/// with `=`, which zsh expands) is returned as is; anything else is wrapped
/// in single quotes, with each `'` written as `'\''`. Single quotes turn off
/// every expansion (`$`, backquotes, `\`, globs, `~`, `!` history in bash).
///
/// # Errors
///
/// The first control character, as [`Unrepresentable`].
pub fn shell_single(value: &str) -> Result<String, Unrepresentable> {
    check_controls(value)?;
    if is_shell_plain(value) {
        Ok(value.to_owned())
    } else {
        Ok(format!("'{}'", value.replace('\'', r"'\''")))
    }
}

/// Quotes `value` for `ENV KEY=<here>` in a Dockerfile (default `\` escape
/// character, no `# escape=` directive).
///
/// Always double-quoted; `\`, `"` and `$` get a `\` in front, so BuildKit and
/// the classic builder neither expand `$VAR`/`${VAR}` nor end the string
/// early. Backquotes need nothing: the Dockerfile lexer does not run them,
/// and `` \` `` would keep its backslash.
///
/// # Errors
///
/// The first control character, as [`Unrepresentable`]; and
/// [`Unrepresentable::NotPortable`]`('\\')` when the value ends with `\` or
/// has `\` right before `"`. BuildKit reads those fine, but hadolint's parser
/// (language-docker) fails with DL1000 on a run of two or more backslashes
/// before a double quote, and no other spelling suits both.
pub(crate) fn dockerfile_env(value: &str) -> Result<String, Unrepresentable> {
    check_controls(value)?;
    if value.ends_with('\\') || value.contains("\\\"") {
        return Err(Unrepresentable::NotPortable('\\'));
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// Quotes `value` for a dotenv line `KEY=<here>` that reads back unchanged
/// both when sourced by POSIX `sh` (`. ./file.env`) and when parsed by
/// compose-style dotenv readers (docker compose / compose-go, godotenv,
/// python-dotenv, node dotenv).
///
/// An empty value is written as nothing (`KEY=`); otherwise the spelling is
/// [`shell_single`]'s: plain when safe, else single-quoted. Note that
/// `docker run --env-file` does no unquoting at all, so only plain values
/// read back unchanged there.
///
/// # Errors
///
/// The first control character, as [`Unrepresentable`]; and
/// [`Unrepresentable::NotPortable`] for the first `'`, `\` or `$`: `sh`
/// needs `'\''` for a quote, which compose-go and python-dotenv cannot read;
/// python-dotenv turns `\\` into `\`, and compose-go, godotenv and
/// python-dotenv take a final `\'` as an escaped quote; python-dotenv expands
/// `${VAR}` even inside single quotes, and dotenv-expand `$VAR`.
pub(crate) fn dotenv(value: &str) -> Result<String, Unrepresentable> {
    check_controls(value)?;
    if let Some(c) = value.chars().find(|c| matches!(c, '\'' | '\\' | '$')) {
        return Err(Unrepresentable::NotPortable(c));
    }
    if value.is_empty() {
        return Ok(String::new());
    }
    shell_single(value)
}

/// Whether `key` is a portable environment variable name:
/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_env_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Refuses the first control character in `value`.
fn check_controls(value: &str) -> Result<(), Unrepresentable> {
    match value.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some('\n') => Err(Unrepresentable::Newline),
        Some('\0') => Err(Unrepresentable::Nul),
        Some('\r') => Err(Unrepresentable::CarriageReturn),
        Some(c) => Err(Unrepresentable::OtherControl(c)),
    }
}

/// Words that need no quoting in `sh` (the set Python's `shlex.quote` uses,
/// minus a leading `=`).
fn is_shell_plain(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('=')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// Values every target must carry unchanged (or refuse cleanly). Command
    /// substitutions only call `reboot`, which the test scripts shadow with a
    /// harmless function, and `echo`.
    const NASTY: &[&str] = &[
        "plain",
        "96",
        "AF_INET6",
        "mlx5_0,mlx5_1",
        "^lo,docker",
        "a=b",
        "=a",
        "-n",
        "--",
        "%s",
        "",
        " ",
        "with space",
        "  lead",
        "trail  ",
        "$(reboot)",
        "`reboot`",
        "$(echo PWNED)",
        "'",
        "''",
        "it's",
        "'\\''",
        "\"",
        "a\"b",
        "\\",
        "\\\\",
        "a\\",
        "\\n",
        "\\'",
        "a\\\"b",
        "\\$",
        "$HOME",
        "${HOME}",
        "${HOME:-x}",
        "$",
        "$$",
        "$1",
        "$@",
        "$IFS",
        "a;b",
        "a; echo PWNED",
        "a && b",
        "a || b",
        "a|b",
        "a&",
        "*",
        "?",
        "[a]",
        "~",
        "~root",
        "a:~",
        "!",
        "!!",
        "#",
        "a #b",
        "a#b",
        "{a,b}",
        "<x",
        ">x",
        "(x)",
        "é",
        "日本語",
        "😀",
        "\u{a0}",
        "a\u{2028}b",
        "a\u{feff}b",
        "a'b\"c\\d$e`f",
    ];

    #[test]
    fn shell_single_forms() {
        let cases = [
            ("plain", "plain"),
            ("mlx5_0,mlx5_1", "mlx5_0,mlx5_1"),
            ("a=b", "a=b"),
            ("x@y%z+1:2/3.4-5", "x@y%z+1:2/3.4-5"),
            ("", "''"),
            ("=a", "'=a'"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("'", r"''\'''"),
            ("$HOME", "'$HOME'"),
            ("a\\b", r"'a\b'"),
            ("~", "'~'"),
            ("é", "'é'"),
        ];
        for (input, want) in cases {
            assert_eq!(shell_single(input).as_deref(), Ok(want), "{input:?}");
        }
    }

    #[test]
    fn dockerfile_env_forms() {
        let cases = [
            ("plain", r#""plain""#),
            ("", r#""""#),
            ("a b", r#""a b""#),
            ("$HOME", r#""\$HOME""#),
            ("${HOME}", r#""\${HOME}""#),
            ("a\"b", r#""a\"b""#),
            ("\"", r#""\"""#),
            ("a\\b", r#""a\\b""#),
            ("\\$", r#""\\\$""#),
            ("`x`", r#""`x`""#),
            ("it's", r#""it's""#),
            ("é", r#""é""#),
        ];
        for (input, want) in cases {
            assert_eq!(dockerfile_env(input).as_deref(), Ok(want), "{input:?}");
        }
        for bad in ["a\\", "\\", "a\\\"b", "\\\""] {
            assert_eq!(
                dockerfile_env(bad),
                Err(Unrepresentable::NotPortable('\\')),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn dotenv_forms() {
        let cases = [
            ("plain", "plain"),
            ("", ""),
            ("a b", "'a b'"),
            ("a #b", "'a #b'"),
            ("a\"b", "'a\"b'"),
            ("`x`", "'`x`'"),
            ("é", "'é'"),
        ];
        for (input, want) in cases {
            assert_eq!(dotenv(input).as_deref(), Ok(want), "{input:?}");
        }
        for (bad, c) in [
            ("it's", '\''),
            ("a\\b", '\\'),
            ("$HOME", '$'),
            ("x${A}'", '$'),
        ] {
            assert_eq!(dotenv(bad), Err(Unrepresentable::NotPortable(c)), "{bad:?}");
        }
    }

    #[test]
    fn control_characters_are_refused_everywhere() {
        let cases = [
            ("a\nb", Unrepresentable::Newline),
            ("a\0b", Unrepresentable::Nul),
            ("a\rb", Unrepresentable::CarriageReturn),
            ("\r\n", Unrepresentable::CarriageReturn),
            ("\n\0", Unrepresentable::Newline),
            ("a\tb", Unrepresentable::OtherControl('\t')),
            ("\u{1b}[0m", Unrepresentable::OtherControl('\u{1b}')),
            ("\u{7f}", Unrepresentable::OtherControl('\u{7f}')),
            ("\u{85}", Unrepresentable::OtherControl('\u{85}')),
        ];
        type Quoter = fn(&str) -> Result<String, Unrepresentable>;
        let quoters: [(&str, Quoter); 3] = [
            ("shell_single", shell_single),
            ("dockerfile_env", dockerfile_env),
            ("dotenv", dotenv),
        ];
        for (input, want) in &cases {
            for (name, quote) in quoters {
                assert_eq!(quote(input).as_ref(), Err(want), "{name}({input:?})");
            }
        }
    }

    #[test]
    fn display_messages() {
        assert_eq!(
            Unrepresentable::Newline.to_string(),
            "the value contains a newline"
        );
        assert_eq!(
            Unrepresentable::OtherControl('\t').to_string(),
            "the value contains the control character U+0009"
        );
        assert!(
            Unrepresentable::NotPortable('\'')
                .to_string()
                .contains("'\\''")
        );
    }

    #[test]
    fn env_keys() {
        for ok in ["A", "_", "NCCL_IB_HCA", "a1", "_9"] {
            assert!(is_env_key(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A.B", "A B", "É", "A=", "$A"] {
            assert!(!is_env_key(bad), "{bad}");
        }
    }

    // ---- Round trips through real shells ----

    /// Skips a test whose external tool is missing: fails when CI is set,
    /// else warns on the real stderr (which the test harness does not
    /// capture, so the warning shows even when the test passes).
    fn skip_loudly(missing: &str) {
        use std::io::Write as _;
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        assert!(!ci, "{missing}, and CI is set: failing instead of skipping");
        let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED: {missing} !!!\n");
    }

    /// A fresh empty directory under the system temp dir.
    fn scratch_dir(tag: &str) -> PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("roce-quote-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Shadows `reboot` so a quoting bug prints instead of acting.
    const PRELUDE: &str = "reboot() { printf PWNED; }\n";

    /// Runs `script` with `shell -c` and splits stdout on `\x01`.
    fn run_shell(shell: &str, script: &str) -> Vec<String> {
        let out = Command::new(shell)
            .arg("-c")
            .arg(format!("{PRELUDE}{script}"))
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {shell}: {e}"));
        assert!(
            out.status.success(),
            "{shell} failed: {}\n--- script ---\n{script}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8 output");
        let mut parts: Vec<String> = text.split('\u{1}').map(str::to_owned).collect();
        assert_eq!(
            parts.pop().as_deref(),
            Some(""),
            "output must end with a separator"
        );
        parts
    }

    fn assert_same(shell: &str, how: &str, got: &[String], want: &[&str]) {
        assert_eq!(got.len(), want.len(), "{shell} {how}: value count");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g, w, "{shell} {how}: value {w:?} came back as {g:?}");
        }
    }

    #[test]
    fn sh_and_bash_read_shell_single_back_exactly() {
        let mut script = String::new();
        for v in NASTY {
            let q = shell_single(v).unwrap();
            script.push_str(&format!("X={q}; printf '%s\\001' \"$X\"\n"));
        }
        for v in NASTY {
            let q = shell_single(v).unwrap();
            script.push_str(&format!("printf '%s\\001' {q}\n"));
        }
        let twice: Vec<&str> = NASTY.iter().chain(NASTY).copied().collect();
        for shell in ["sh", "bash"] {
            assert_same(shell, "assign+argv", &run_shell(shell, &script), &twice);
        }
    }

    /// The NASTY values that [`dotenv`] accepts, with their lines.
    fn dotenv_lines() -> (Vec<&'static str>, String) {
        let mut kept = Vec::new();
        let mut file = String::new();
        for v in NASTY {
            if let Ok(q) = dotenv(v) {
                file.push_str(&format!("V{}={q}\n", kept.len()));
                kept.push(*v);
            }
        }
        (kept, file)
    }

    #[test]
    fn sourced_dotenv_reads_back_exactly() {
        let (kept, file) = dotenv_lines();
        assert!(
            kept.len() > NASTY.len() / 2,
            "too few values survived: {kept:?}"
        );
        let dir = scratch_dir("dotenv");
        let path = dir.join("test.env");
        std::fs::write(&path, &file).unwrap();
        let mut script = format!(". '{}'\n", path.display());
        for i in 0..kept.len() {
            script.push_str(&format!("printf '%s\\001' \"$V{i}\"\n"));
        }
        for shell in ["sh", "bash"] {
            assert_same(shell, "dotenv", &run_shell(shell, &script), &kept);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dotenv_refuses_exactly_the_unportable_characters() {
        for v in NASTY {
            let unportable = v.contains(['\'', '\\', '$']);
            assert_eq!(dotenv(v).is_err(), unportable, "{v:?}");
        }
    }

    /// What BuildKit's lexer makes of a double-quoted word (default escape
    /// `\`, no variables set): `\` escapes `"`, `$` and `\`, otherwise it is
    /// literal; an unescaped `$` would start an expansion.
    fn buildkit_unquote(word: &str) -> Result<String, String> {
        let inner = word
            .strip_prefix('"')
            .and_then(|w| w.strip_suffix('"'))
            .ok_or("not double-quoted")?;
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some('"' | '$' | '\\')) => out.extend(chars.next()),
                '"' => return Err(format!("unescaped quote in {word}")),
                '$' => return Err(format!("unescaped $ in {word}")),
                c => out.push(c),
            }
        }
        Ok(out)
    }

    #[test]
    fn dockerfile_env_unquotes_to_the_value() {
        for v in NASTY {
            if let Ok(q) = dockerfile_env(v) {
                assert_eq!(buildkit_unquote(&q).as_deref(), Ok(*v), "{v:?} as {q}");
            }
        }
    }

    fn hadolint_available() -> bool {
        Command::new("hadolint")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// hadolint's findings for the Dockerfile at `path`, as JSON text.
    fn hadolint_json(path: &Path) -> String {
        let out = Command::new("hadolint")
            .args(["--no-fail", "--no-color", "-f", "json"])
            .arg(path)
            .current_dir(path.parent().unwrap())
            .output()
            .expect("run hadolint");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn dockerfile_for(values: &[&str]) -> String {
        let mut text = String::from("FROM scratch\n");
        for (i, v) in values.iter().enumerate() {
            text.push_str(&format!("ENV X{i}={}\n", dockerfile_env(v).unwrap()));
        }
        text
    }

    #[test]
    fn hadolint_parses_every_dockerfile_env() {
        if !hadolint_available() {
            skip_loudly("`hadolint` is not on PATH");
            return;
        }
        let kept: Vec<&str> = NASTY
            .iter()
            .copied()
            .filter(|v| dockerfile_env(v).is_ok())
            .collect();
        assert!(kept.len() + 6 >= NASTY.len(), "too many values refused");
        let dir = scratch_dir("hadolint");
        let path = dir.join("Dockerfile");
        std::fs::write(&path, dockerfile_for(&kept)).unwrap();
        if hadolint_json(&path).contains("DL1000") {
            for v in &kept {
                std::fs::write(&path, dockerfile_for(&[v])).unwrap();
                let report = hadolint_json(&path);
                assert!(
                    !report.contains("DL1000"),
                    "hadolint cannot parse {v:?}: {report}"
                );
            }
            panic!("hadolint failed on the combined Dockerfile only");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
