//! The README's first command, exactly as written, in a fresh clone of the repository.
//!
//! Ignored by default: it builds a release binary from scratch (minutes). `.ci/run` runs it with
//! `--ignored`. It reads the command through `.ci/readme-commands`, the same extraction `.ci/run` uses.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
#[ignore = "builds a release binary in a fresh clone; .ci/run runs it"]
fn readme_first_command_in_a_fresh_clone() {
    let repo = repo();
    if !repo.join(".git").exists() {
        panic!("{} is not a git checkout: cannot clone it", repo.display());
    }
    let commands = run(Command::new("bash").arg(repo.join(".ci/readme-commands")));
    let commands = String::from_utf8(commands.stdout).unwrap();
    let first = commands
        .lines()
        .next()
        .expect("README.md has no ```sh block");

    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("roce");
    run(Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks"])
        .arg(&repo)
        .arg(&clone));
    let out = run(Command::new("bash")
        .args(["-c", first])
        .current_dir(&clone)
        // A fresh clone builds into its own target/, as a newcomer's would.
        .env_remove("CARGO_TARGET_DIR"));
    let pod = String::from_utf8(out.stdout).unwrap();
    assert_pod(&pod, &clone);
}

fn assert_pod(pod: &str, clone: &Path) {
    let lines: Vec<&str> = pod.lines().collect();
    assert!(
        lines.contains(&"apiVersion: v1") && lines.contains(&"kind: Pod"),
        "the README's first command in {} printed no Pod:\n{pod}",
        clone.display()
    );
    assert!(pod.contains("k8s.v1.cni.cncf.io/networks"), "{pod}");
    assert!(pod.contains("rdma/ib"), "{pod}");
}
