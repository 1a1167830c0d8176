//! `roce diff`: output snapshots (trycmd cases under `snapshots/diff/`: `NAME.toml` runs the command in
//! `snapshots/diff/inputs/`, `NAME.stdout`/`NAME.stderr` hold the expected output; refresh them with
//! `TRYCMD=overwrite cargo test -p roce-cli --test tests diff::`), and `REV:path` against a real Git
//! repository.

use std::path::Path;
use std::process::{Command, Output};

#[test]
fn diff_snapshots() {
    trycmd::TestCases::new()
        .env("NO_COLOR", "1")
        .case("../../snapshots/diff/*.toml");
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=roce-test",
            "-c",
            "user.email=roce@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn roce_diff(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_roce"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .arg("diff")
        .args(args)
        .output()
        .unwrap();
    (
        status.code(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn git_available() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "git is required in CI");
        eprintln!("SKIPPED: git is not installed");
    }
    ok
}

/// `roce diff HEAD~1:x.kdl x.kdl` reads the old side from the previous commit, and follows its
/// `extends` inside that same commit (not the working tree).
#[test]
fn rev_path_reads_the_old_commit_and_its_extends() {
    if !git_available() {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    std::fs::create_dir(dir.join("team")).unwrap();
    let base = |debug: &str| {
        format!(
            "profile \"team/base\" extends=\"coreweave/gb300-roce\" {{\n    nccl debug=\"{debug}\"\n}}\n"
        )
    };
    let x = "profile \"team/x\" extends=\"base.kdl\" {\n    job nodes=4\n}\n";
    std::fs::write(dir.join("team/base.kdl"), base("WARN")).unwrap();
    std::fs::write(dir.join("team/x.kdl"), x).unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "one"]);
    std::fs::write(dir.join("team/base.kdl"), base("VERSION")).unwrap();
    git(dir, &["commit", "-q", "-am", "two"]);

    let (code, stdout, stderr) = roce_diff(
        dir,
        &["HEAD~1:team/x.kdl", "team/x.kdl", "--format", "json"],
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["a"]["sources"][0], "HEAD~1:team/x.kdl");
    assert_eq!(
        v["a"]["sources"][1], "HEAD~1:team/base.kdl",
        "extends is read from the same commit"
    );
    let fields = v["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 1, "{fields:#?}");
    assert_eq!(fields[0]["field"], "nccl.debug");
    assert_eq!(fields[0]["old"], "WARN");
    assert_eq!(fields[0]["new"], "VERSION");
    assert_eq!(fields[0]["old_at"], "HEAD~1:team/base.kdl:2:16");
    assert_eq!(fields[0]["new_at"], "team/base.kdl:2:16");

    // The commit that is checked out: no change.
    let (code, stdout, _) = roce_diff(dir, &["HEAD:team/x.kdl", "team/x.kdl"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("No semantic change"), "{stdout}");

    // A revision that does not exist is an error (2), not a difference (1).
    let (code, _, stderr) = roce_diff(dir, &["HEAD~9:team/x.kdl", "team/x.kdl"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read `HEAD~9:team/x.kdl` from Git"),
        "{stderr}"
    );
}

/// A built-in against its YAML form (`roce profiles show NAME --yaml`, saved as a file): layout and syntax
/// are no change, and the rendered Pod is identical.
#[test]
fn a_builtin_and_its_yaml_form_have_no_semantic_change() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args(["profiles", "show", "coreweave/gb300-roce", "--yaml"])
        .output()
        .unwrap();
    assert!(yaml.status.success());
    std::fs::write(dir.path().join("gb300-roce.yaml"), &yaml.stdout).unwrap();
    let (code, stdout, stderr) = roce_diff(
        dir.path(),
        &["coreweave/gb300-roce", "gb300-roce.yaml", "--target", "pod"],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No semantic change"), "{stdout}");
    assert!(
        stdout.contains("Rendered artifacts: pod\n  identical"),
        "{stdout}"
    );
    // ... and one changed value in the YAML is a change
    let changed = String::from_utf8(yaml.stdout)
        .unwrap()
        .replace("traffic-class: 96", "traffic-class: 98");
    std::fs::write(dir.path().join("gb300-roce.yaml"), changed).unwrap();
    let (code, stdout, _) = roce_diff(dir.path(), &["coreweave/gb300-roce", "gb300-roce.yaml"]);
    assert_eq!(code, Some(1), "{stdout}");
}

/// The canonical pair differs both ways, and each profile equals itself.
#[test]
fn exit_status_is_0_equal_1_different() {
    let here = Path::new(".");
    for name in [
        "coreweave/gb300-roce",
        "coreweave/gb300-ib",
        "coreweave/gb300-roce-nixl",
    ] {
        assert_eq!(roce_diff(here, &[name, name]).0, Some(0), "{name}");
    }
    assert_eq!(
        roce_diff(here, &["coreweave/gb300-ib", "coreweave/gb300-roce"]).0,
        Some(1)
    );
}
