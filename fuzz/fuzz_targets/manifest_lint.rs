//! Manifest lint against the default profile (and apply, which shares the manifest reader).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use roce_inspect::lint::{LintOptions, Linter};
use roce_model::{BuiltinsOnly, Source, builtin, load};

fn linter() -> &'static Linter {
    static LINTER: OnceLock<Linter> = OnceLock::new();
    LINTER.get_or_init(|| {
        let profile = load(
            builtin::source("coreweave/gb300-roce").unwrap(),
            &BuiltinsOnly,
        )
        .profile
        .unwrap();
        Linter::new(&profile, LintOptions::default())
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = linter().lint(Source::new("fuzz.yaml", text));
});
