//! roce-model's integration tests: one binary, one module per topic file (`cargo test -p roce-model --test
//! tests -- rules::` runs one topic). One binary links once where one per file linked six times
//! (docs/decisions.md, "(onebin)"). Not named `main.rs`: proptest looks for its regression files beside the
//! source file only while no directory above it holds a `main.rs` or `lib.rs`.

mod api;
mod builtins;
mod diff;
mod nccl_versions;
mod properties;
mod rules;

/// With `autotests = false`, a file added under a crate's `tests/` is compiled only once its `tests.rs`
/// declares it: every crate's topic files must be modules of that crate's binary.
#[test]
fn every_test_file_is_a_module_of_its_crates_binary() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut missing = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        let tests = krate.unwrap().path().join("tests");
        let Ok(root) = std::fs::read_to_string(tests.join("tests.rs")) else {
            continue;
        };
        for file in std::fs::read_dir(&tests).unwrap() {
            let path = file.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let declared = root.lines().any(|l| l.trim() == format!("mod {stem};"));
            if path.extension().is_some_and(|e| e == "rs") && stem != "tests" && !declared {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not a module of its crate's tests/tests.rs, so never compiled: {missing:?}"
    );
}
