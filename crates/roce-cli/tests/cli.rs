//! CLI behaviour: trycmd cases under `tests/cmd/` (plus the README), and the garbage-input guarantees
//! that need generated files.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.trycmd")
        .case(readme_sandbox());
}

/// The README's commands run from the repository root and use `examples/`: give trycmd a copy of the
/// README whose `README.in/` working directory holds the examples (and receives `out/`).
fn readme_sandbox() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = temp("readme");
    std::fs::copy(root.join("README.md"), dir.join("README.md")).unwrap();
    let examples = dir.join("README.in/examples");
    std::fs::create_dir_all(&examples).unwrap();
    for entry in std::fs::read_dir(root.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, examples.join(path.file_name().unwrap())).unwrap();
    }
    dir.join("README.md")
}

fn roce() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roce"));
    c.env("NO_COLOR", "1");
    c
}

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("roce-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Garbage never panics (exit 101): it exits 1 with a coded diagnostic.
#[test]
fn garbage_input_exits_1_with_a_code() {
    let dir = temp("garbage");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("huge.kdl", {
            let mut v = b"profile \"x\" {\n".to_vec();
            v.extend(std::iter::repeat_n(b"// padding padding padding padding\n".as_slice(), 320_000).flatten());
            v
        }),
        ("huge.yaml", b"name: x\n".repeat(1_400_000)),
        ("deep.kdl", format!("profile \"x\" {}{}", "a { ".repeat(50_000), "}".repeat(50_000)).into_bytes()),
        ("deep.yaml", format!("a: {}{}", "[".repeat(50_000), "]".repeat(50_000)).into_bytes()),
        ("binary.kdl", (0u8..=255).cycle().take(4096).collect()),
        ("nul.yaml", b"name: \0\0\0".to_vec()),
    ];
    for (name, bytes) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        for format in ["human", "json"] {
            let out = roce().arg("check").arg(&path).args(["--format", format]).output().unwrap();
            let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.status.code(), Some(1), "{name} ({format}): {all}");
            assert!(all.contains("roce::"), "{name} ({format}): no diagnostic code in {all}");
            assert!(!all.contains("panicked"), "{name}: {all}");
        }
    }
    let big = std::fs::metadata(dir.join("huge.kdl")).unwrap().len();
    assert!(big > 10_000_000, "the huge case is over 10 MB ({big} bytes)");
}

/// On any error nothing is written.
#[test]
fn render_writes_nothing_when_the_profile_is_invalid() {
    let dir = temp("nowrite");
    let profile = dir.join("bad.kdl");
    std::fs::write(&profile, "profile \"t/bad\" extends=\"coreweave/gb300-roce\" { nccl ib-hca=\"mlx9\" }\n").unwrap();
    let out_dir = dir.join("out");
    let out = roce()
        .args(["render", "--target", "kustomize", "--profile"])
        .arg(&profile)
        .arg("-o")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out_dir.exists(), "an invalid profile must not create the output directory");
}

/// `render -o` then `render --check -o` is clean; a hand edit makes `--check` fail with a diff.
#[test]
fn render_check_detects_stale_outputs() {
    let dir = temp("check");
    let render = |extra: &[&str]| {
        roce()
            .args(["render", "--target", "pod", "--profile", "coreweave/h100-ib", "-o"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(render(&[]).status.success());
    let fresh = render(&["--check"]);
    assert_eq!(fresh.status.code(), Some(0), "{}", String::from_utf8_lossy(&fresh.stderr));
    let pod = dir.join("pod.yaml");
    let text = std::fs::read_to_string(&pod).unwrap().replace("\"ibp\"", "\"mlx5\"");
    std::fs::write(&pod, text).unwrap();
    let stale = render(&["--check"]);
    assert_eq!(stale.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&stale.stdout);
    assert!(diff.contains("-      value: \"mlx5\"") && diff.contains("+      value: \"ibp\""), "{diff}");
}

/// `roce … | head` closes the pipe early; roce must not panic (exit 101).
#[test]
fn closed_pipe_is_not_a_panic() {
    let bin = env!("CARGO_BIN_EXE_roce");
    for cmd in [
        format!("{bin} render --target pod | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"),
        format!("{bin} check --profile nope-no-such 2>&1 | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"),
    ] {
        let out = Command::new("bash").arg("-c").arg(&cmd).output().unwrap();
        let status = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(status == "0" || status == "1", "{cmd}: exit {status}");
    }
}

/// `roce explain`: stdin with `-`, and inputs that are not NCCL logs (binary, empty, text, a gigabyte-free
/// very long line) exit 1 with a coded finding and never panic.
#[test]
fn explain_reads_stdin_and_rejects_non_logs() {
    use std::io::Write;
    use std::process::Stdio;
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../roce-inspect/tests/fixtures/logs/h200x2-profile-gb300-roce-net-forced.log");
    let log = std::fs::read(&fixture).unwrap();
    let mut child = roce()
        .args(["explain", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&log).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["transport"], "socket");
    assert_eq!(json["files"][0]["name"], "<stdin>");
    assert_eq!(
        json["findings"][0]["code"],
        "roce::explain::socket_fallback"
    );

    let dir = temp("explain");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "binary.log",
            (0u8..=255).cycle().take(1 << 20).collect(),
            "roce::explain::binary_log",
        ),
        ("empty.log", Vec::new(), "roce::explain::empty_log"),
        (
            "blank.log",
            b"\n\n  \n".to_vec(),
            "roce::explain::empty_log",
        ),
        (
            "text.log",
            b"epoch 1 loss 0.3\nepoch 2 loss 0.2\n".to_vec(),
            "roce::explain::not_nccl_log",
        ),
        (
            "oneline.log",
            vec![b'x'; 3 << 20],
            "roce::explain::not_nccl_log",
        ),
    ];
    for (name, bytes, code) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        for format in ["human", "json"] {
            let out = roce()
                .arg("explain")
                .arg(&path)
                .args(["--format", format])
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(1), "{name} ({format}): {all}");
            assert!(all.contains(code), "{name} ({format}): no {code} in {all}");
            assert!(!all.contains("panicked"), "{name}: {all}");
        }
    }
    // a directory and a missing file are errors of the command, not panics
    for bad in [dir.clone(), dir.join("missing.log")] {
        let out = roce().arg("explain").arg(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", bad.display());
    }
}

/// Issue acceptance: the UCX validation job for the NIXL profile uses the profile's RDMA transports,
/// GID index and rails; for an NCCL-only profile it says UCX is on TCP and why.
#[test]
fn ucx_perftest_follows_the_profile() {
    let render = |profile: &str| {
        let out = roce()
            .args(["render", "--target", "ucx-perftest", "--profile", profile])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let nixl = render("coreweave/gb300-roce-nixl");
    for want in [
        "value: \"rc_mlx5,ud_mlx5,cuda_copy\"",
        "name: UCX_IB_GID_INDEX",
        "value: \"11\"",
        "value: \"ibp0p0:1,ibp0p1:1,ibp0p2:1,ibp0p3:1\"",
        "- \"-m\"\n    - cuda\n",
    ] {
        assert!(nixl.contains(want), "nixl ucx-perftest lacks {want}");
    }
    let tcp = render("coreweave/gb300-roce");
    assert!(tcp.contains("UCX is on TCP"), "the NCCL-only job must say UCX is on TCP");
    assert!(tcp.contains("NCCL never uses UCX"), "…and why");
    assert!(!tcp.contains("rc_mlx5"));
}
