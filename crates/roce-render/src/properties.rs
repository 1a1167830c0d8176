//! Property tests on quoting: for any string, each emitted form read back by the consumer's own parser
//! yields the same string — or the value is refused. Real `sh` reads the shell forms; serde-saphyr (a
//! YAML 1.2 parser) reads the YAML form (PyYAML, a 1.1 parser, is exercised on a large table in
//! `yaml.rs`'s unit tests).
//!
//! Unit tests, not an integration test: the quoting functions and the YAML writer are not API.

use std::process::Command;

use proptest::prelude::*;

use crate::quote;
use crate::yaml::{self, Yaml};

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,30}",
        "[$`'\"\\\\(){};&|<>*?~!#=: \\-a-z0-9]{0,20}",
        "\\PC{0,12}",
        ".{0,8}",
    ]
}

/// Each string through `sh`: `X=<quoted>; printf '%s\0' "$X"`, many per process.
fn through_sh(
    values: &[String],
    quote: fn(&str) -> Result<String, quote::Unrepresentable>,
) -> Vec<Option<String>> {
    let mut script = String::new();
    let mut accepted = Vec::new();
    for v in values {
        match quote(v) {
            Ok(q) => {
                script.push_str(&format!("X={q}\nprintf '%s\\0' \"$X\"\n"));
                accepted.push(true);
            }
            Err(_) => accepted.push(false),
        }
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut read = out
        .stdout
        .split(|b| *b == 0)
        .map(|s| String::from_utf8(s.to_vec()).unwrap());
    accepted
        .into_iter()
        .map(|ok| if ok { read.next() } else { None })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn shell_and_dotenv_values_read_back_exactly(values in proptest::collection::vec(any_text(), 1..40)) {
        for (quote, name) in [(quote::shell_single as fn(&str) -> _, "shell"), (quote::dotenv, "dotenv")] {
            let back = through_sh(&values, quote);
            for (v, b) in values.iter().zip(back) {
                match b {
                    Some(b) => prop_assert_eq!(&b, v, "{} form of {:?}", name, v),
                    // Refused values are exactly those with characters the format cannot carry.
                    None => prop_assert!(quote(v).is_err()),
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn yaml_scalars_read_back_as_the_same_string(key in any_text(), value in any_text()) {
        let doc = Yaml::map()
            .with("plain", value.as_str())
            .with("quoted", Yaml::Quoted(value.clone()))
            .with(format!("k-{key}"), Yaml::Block(format!("{value}\n{value}")));
        let text = yaml::to_string(&doc);
        let back: serde_json::Value = serde_saphyr::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back["plain"].as_str(), Some(value.as_str()), "{}", text);
        prop_assert_eq!(back["quoted"].as_str(), Some(value.as_str()), "{}", text);
        let block = format!("{value}\n{value}");
        prop_assert_eq!(back[format!("k-{key}").as_str()].as_str(), Some(block.as_str()), "{}", text);
    }

    #[test]
    fn dockerfile_values_never_break_out_of_their_quotes(value in any_text()) {
        // BuildKit's double-quote rules: `\` escapes the next character, `"` ends the word, `$` expands
        // unless escaped. A quoted value must be one word whose unescaped text is the value.
        if let Ok(q) = quote::dockerfile_env(&value) {
            let inner = q.strip_prefix('"').and_then(|q| q.strip_suffix('"'));
            prop_assert!(inner.is_some(), "{:?} → {}", value, q);
            let mut out = String::new();
            let mut chars = inner.unwrap().chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.push(chars.next().expect("no dangling backslash")),
                    '"' => prop_assert!(false, "unescaped quote in {}", q),
                    '$' => prop_assert!(false, "unescaped $ in {} would expand", q),
                    c => out.push(c),
                }
            }
            prop_assert_eq!(out, value);
        }
    }
}
