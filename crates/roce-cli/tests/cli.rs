//! CLI behaviour: trycmd cases under `tests/cmd/` (plus the README), and the garbage-input guarantees
//! that need generated files.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.trycmd")
        .case(readme_sandbox())
        .case(doc_sandbox("docs/guide.md", "guide"));
}

/// A copy of a Markdown page whose `<stem>.in/` working directory holds the repository's `examples/`.
fn doc_sandbox(page: &str, stem: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = temp(stem);
    std::fs::copy(root.join(page), dir.join(format!("{stem}.md"))).unwrap();
    copy_tree(
        &root.join("examples"),
        &dir.join(format!("{stem}.in/examples")),
    );
    dir.join(format!("{stem}.md"))
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}

/// The README's commands run from the repository root and use `examples/`: give trycmd a copy of the
/// README whose `README.in/` working directory holds the examples (and receives `out/`).
fn readme_sandbox() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = temp("readme");
    std::fs::copy(root.join("README.md"), dir.join("README.md")).unwrap();
    copy_tree(&root.join("examples"), &dir.join("README.in/examples"));
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

/// `roce lint DIR`: the YAML files under it (hidden entries and other files skipped, symbolic links
/// followed), in path order whatever the worker count; a file that is not UTF-8 is a syntax problem.
#[test]
fn lint_walks_directories_in_path_order_on_any_worker_count() {
    let dir = temp("lint-walk");
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n    env: [{name: NCCL_IB_HCA, value: mlx5}]\n";
    let manifests = dir.join("manifests");
    for (path, text) in [
        ("b/2.yaml", pod),
        ("b/10.yml", pod),
        ("a.YAML", pod),
        ("c/d/e.yaml", pod),
        (".hidden/x.yaml", pod),
        ("b/.x.yaml", pod),
        ("notes.txt", "not: linted"),
    ] {
        let path = manifests.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(manifests.join("b/bin.yaml"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::write(dir.join("elsewhere/linked.yaml"), pod).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere"), manifests.join("z")).unwrap();

    let files = |jobs: &str| {
        let out = roce()
            .args(["lint", "--format", "json", "-j", jobs])
            .arg(&manifests)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut seen: Vec<(String, String)> = Vec::new();
        for p in json["problems"].as_array().unwrap() {
            let file = p["file"].as_str().unwrap();
            let file = file
                .strip_prefix(manifests.to_str().unwrap())
                .unwrap()
                .to_string();
            let code = p["code"].as_str().unwrap().to_string();
            if seen.last().is_none_or(|(f, _)| *f != file) {
                seen.push((file, code));
            }
        }
        seen
    };
    let one = files("1");
    let names: Vec<&str> = one.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "/a.YAML",
            "/b/10.yml",
            "/b/2.yaml",
            "/b/bin.yaml",
            "/c/d/e.yaml",
            "/z/linked.yaml"
        ]
    );
    assert_eq!(one[3].1, "roce::lint::syntax");
    for jobs in ["2", "4", "16"] {
        assert_eq!(files(jobs), one, "{jobs} workers");
    }
    let missing = roce()
        .args(["lint"])
        .arg(dir.join("no-such-dir"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Garbage never panics (exit 101): it exits 1 with a coded diagnostic.
#[test]
fn garbage_input_exits_1_with_a_code() {
    let dir = temp("garbage");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("huge.kdl", {
            let mut v = b"profile \"x\" {\n".to_vec();
            v.extend(
                std::iter::repeat_n(b"// padding padding padding padding\n".as_slice(), 320_000)
                    .flatten(),
            );
            v
        }),
        ("huge.yaml", b"name: x\n".repeat(1_400_000)),
        (
            "deep.kdl",
            format!(
                "profile \"x\" {}{}",
                "a { ".repeat(50_000),
                "}".repeat(50_000)
            )
            .into_bytes(),
        ),
        (
            "deep.yaml",
            format!("a: {}{}", "[".repeat(50_000), "]".repeat(50_000)).into_bytes(),
        ),
        ("binary.kdl", (0u8..=255).cycle().take(4096).collect()),
        ("nul.yaml", b"name: \0\0\0".to_vec()),
    ];
    for (name, bytes) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        for format in ["human", "json"] {
            let out = roce()
                .arg("check")
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
            assert!(
                all.contains("roce::"),
                "{name} ({format}): no diagnostic code in {all}"
            );
            assert!(!all.contains("panicked"), "{name}: {all}");
        }
    }
    let big = std::fs::metadata(dir.join("huge.kdl")).unwrap().len();
    assert!(
        big > 10_000_000,
        "the huge case is over 10 MB ({big} bytes)"
    );
}

/// On any error nothing is written.
#[test]
fn render_writes_nothing_when_the_profile_is_invalid() {
    let dir = temp("nowrite");
    let profile = dir.join("bad.kdl");
    std::fs::write(
        &profile,
        "profile \"t/bad\" extends=\"coreweave/gb300-roce\" { nccl ib-hca=\"mlx9\" }\n",
    )
    .unwrap();
    let out_dir = dir.join("out");
    let out = roce()
        .args(["render", "--target", "kustomize", "--profile"])
        .arg(&profile)
        .arg("-o")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out_dir.exists(),
        "an invalid profile must not create the output directory"
    );
}

/// `render -o` then `render --check -o` is clean; a hand edit makes `--check` fail with a diff.
#[test]
fn render_check_detects_stale_outputs() {
    let dir = temp("check");
    let render = |extra: &[&str]| {
        roce()
            .args([
                "render",
                "--target",
                "pod",
                "--profile",
                "coreweave/h100-ib",
                "-o",
            ])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(render(&[]).status.success());
    let fresh = render(&["--check"]);
    assert_eq!(
        fresh.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    let pod = dir.join("pod.yaml");
    let text = std::fs::read_to_string(&pod)
        .unwrap()
        .replace("\"ibp\"", "\"mlx5\"");
    std::fs::write(&pod, text).unwrap();
    let stale = render(&["--check"]);
    assert_eq!(stale.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&stale.stdout);
    assert!(
        diff.contains("-      value: \"mlx5\"") && diff.contains("+      value: \"ibp\""),
        "{diff}"
    );
}

/// `roce … | head` closes the pipe early; roce must not panic (exit 101).
#[test]
fn closed_pipe_is_not_a_panic() {
    let bin = env!("CARGO_BIN_EXE_roce");
    for cmd in [
        format!("{bin} render --target pod | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"),
        format!(
            "{bin} check --profile nope-no-such 2>&1 | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
        ),
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
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
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
    assert!(
        tcp.contains("UCX is on TCP"),
        "the NCCL-only job must say UCX is on TCP"
    );
    assert!(tcp.contains("NCCL never uses UCX"), "…and why");
    assert!(!tcp.contains("rc_mlx5"));
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tools_required() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// `roce schema` prints the committed schema, and every YAML profile (the built-ins written as YAML and the
/// good rule fixtures) validates against it with a real JSON Schema validator (python-jsonschema).
#[test]
fn yaml_profiles_validate_against_the_schema() {
    let out = roce().arg("schema").output().unwrap();
    let committed = std::fs::read_to_string(repo().join("docs/profile.schema.json")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), committed);
    let python = repo().join(".venv/bin/python");
    let has_jsonschema = python.exists()
        && Command::new(&python)
            .args(["-c", "import jsonschema"])
            .status()
            .is_ok_and(|s| s.success());
    if !has_jsonschema {
        assert!(
            !tools_required(),
            "CI=true: python-jsonschema missing from .venv (run .ci/install-tools)"
        );
        eprintln!(
            "\n*** SKIPPED schema validation: .venv/bin/python with jsonschema not found ***\n"
        );
        return;
    }
    // the built-ins as `roce profiles show NAME --yaml` writes them
    let dir = tempfile::tempdir().unwrap();
    let names = roce().arg("profiles").output().unwrap().stdout;
    let mut files = Vec::new();
    for name in String::from_utf8(names).unwrap().lines() {
        let out = roce()
            .args(["profiles", "show", name, "--yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let path = dir.path().join(format!("{}.yaml", name.replace('/', "_")));
        std::fs::write(&path, out.stdout).unwrap();
        files.push(path);
    }
    assert_eq!(
        files.len(),
        roce_model::builtin::names().count(),
        "{files:?}"
    );
    let fixtures = repo().join("crates/roce-model/tests/fixtures/rules");
    for dir in std::fs::read_dir(&fixtures).unwrap() {
        let good = dir.unwrap().path().join("good.yaml");
        if good.exists() {
            files.push(good);
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    let script = r#"
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
for f in sys.argv[2:]:
    for e in v.iter_errors(yaml.safe_load(open(f))):
        bad += 1
        print(f"{f}: {e.json_path}: {e.message}")
# The validator must reject a misspelled key, or this test proves nothing.
assert list(v.iter_errors({"name": "x", "fabirc": "roce"})), "schema accepts unknown keys"
sys.exit(1 if bad else 0)
"#;
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(repo().join("docs/profile.schema.json"))
        .args(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The schema lists exactly the keys the profile loader accepts, section by section. The loader's own
/// list comes from its unknown-key diagnostic (help: "expected one of …").
#[test]
fn schema_keys_match_the_loader() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("docs/profile.schema.json")).unwrap(),
    )
    .unwrap();
    let props = |section: Option<&str>| -> Vec<String> {
        let node = match section {
            None => &schema,
            Some(s) => schema["properties"][s]["anyOf"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["type"] == "object")
                .unwrap(),
        };
        let mut keys: Vec<String> = node["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    let loader_keys = |yaml: &str| -> Vec<String> {
        let dir = temp("schema-keys");
        let path = dir.join("p.yaml");
        std::fs::write(&path, yaml).unwrap();
        let out = roce()
            .arg("check")
            .arg(&path)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let help = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["code"] == "roce::unknown_key")
            .unwrap_or_else(|| panic!("no unknown_key for {yaml}: {v}"))["help"]
            .as_str()
            .unwrap()
            .to_string();
        let mut keys: Vec<String> = help
            .split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let base = "name: t/x\nextends: coreweave/gb300-roce\n";
    assert_eq!(
        loader_keys(&format!("{base}zzzzzz: 1\n")),
        props(None),
        "top level"
    );
    for (section, body) in [
        ("fabric", "kind: roce"),
        ("node-pool", "name: x"),
        ("rails", "nics: 4"),
        ("nccl", "debug: WARN"),
        ("ucx", "mode: tcp"),
        ("image", "rdma-core: 54"),
        ("job", "nodes: 2"),
    ] {
        let yaml = format!("{base}{section}:\n  {body}\n  zzzzzz: 1\n");
        assert_eq!(loader_keys(&yaml), props(Some(section)), "{section}");
    }
    let mut multus = loader_keys(&format!(
        "{base}multus:\n  mode: per-port\n  namespace: a\n  name: b\n  zzzzzz: 1\n"
    ));
    multus.extend(loader_keys(&format!(
        "{base}multus:\n  mode: backend\n  namespace: a\n  name: b\n  zzzzzz: 1\n"
    )));
    multus.sort();
    multus.dedup();
    assert_eq!(multus, props(Some("multus")), "multus");
}

/// The bash completion script loads in bash and completes subcommands and built-in profile names.
#[test]
fn bash_completion_completes_subcommands_and_profiles() {
    let dir = temp("completion");
    let script = dir.join("roce.bash");
    let out = roce().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str, cword: usize| -> String {
        let cmd = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _roce roce \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").arg("-c").arg(&cmd).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let subcommands = complete("roce ''", 1);
    for s in [
        "render", "check", "profiles", "lint", "explain", "doctor", "diff",
    ] {
        assert!(
            subcommands.lines().any(|l| l == s),
            "no `{s}` in {subcommands}"
        );
    }
    let profiles = complete("roce check --profile ''", 3);
    assert!(
        profiles.lines().any(|l| l == "coreweave/gb300-roce"),
        "{profiles}"
    );
    assert!(
        profiles.lines().any(|l| l == "coreweave/h100-ib"),
        "{profiles}"
    );
    let targets = complete("roce render --target ''", 3);
    assert!(targets.lines().any(|l| l == "kustomize"), "{targets}");
}

#[test]
fn man_page_renders() {
    let out = roce().arg("man").output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(page.contains(".TH roce"), "{page}");
    assert!(page.contains("render"));
}

/// `kubectl roce …` finds the `kubectl-roce` binary as a kubectl plugin.
#[test]
fn works_as_a_kubectl_plugin() {
    let venv = repo().join(".venv/bin/kubectl");
    let kubectl = if venv.exists() {
        venv
    } else if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok()
    {
        PathBuf::from("kubectl")
    } else {
        assert!(
            !tools_required(),
            "CI=true: kubectl missing (run .ci/install-tools)"
        );
        eprintln!("\n*** SKIPPED kubectl plugin test: kubectl not found ***\n");
        return;
    };
    let dir = temp("plugin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-roce"), dir.join("kubectl-roce"))
        .unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let list = Command::new(&kubectl)
        .args(["plugin", "list"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("kubectl-roce"),
        "{listed}{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let run = Command::new(&kubectl)
        .args(["roce", "profiles"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && names.lines().any(|l| l == "coreweave/gb300-roce"),
        "{names}"
    );
}

/// Every hook in `.pre-commit-hooks.yaml` runs as pre-commit would run it (`entry` + `args` + files) and
/// gives the expected status on a good and a bad input.
#[test]
fn pre_commit_hooks_run() {
    let hooks_json = Command::new("python3")
        .args([
            "-c",
            "import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(repo().join(".pre-commit-hooks.yaml"))
        .output()
        .unwrap();
    if !hooks_json.status.success() {
        assert!(!tools_required(), "CI=true: python3 with PyYAML is needed");
        eprintln!("\n*** SKIPPED pre-commit hook test: python3 with PyYAML not found ***\n");
        return;
    }
    let hooks: serde_json::Value = serde_json::from_slice(&hooks_json.stdout).unwrap();
    let entry = |id: &str| -> Vec<String> {
        let hook = hooks
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap();
        let words: Vec<String> = hook["entry"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(words[0], "roce", "{id} runs roce");
        words[1..].to_vec()
    };
    let run = |args: &[String], extra: &[&str]| {
        roce()
            .current_dir(repo())
            .args(args)
            .args(extra)
            .output()
            .unwrap()
            .status
            .code()
    };
    // roce-check: changed profile files are passed as arguments.
    let check = entry("roce-check");
    assert_eq!(
        run(
            &check,
            &[
                "profiles/coreweave/gb300-roce.kdl",
                "examples/my-team-gb300.kdl"
            ]
        ),
        Some(0)
    );
    assert_eq!(run(&check, &["examples/broken.kdl"]), Some(1));
    // roce-lint: args name the profile, files follow.
    let lint = entry("roce-lint");
    let args = ["--profile", "coreweave/gb300-roce"];
    assert_eq!(
        run(&lint, &[&args[..], &["examples/trainer.yaml"]].concat()),
        Some(1)
    );
    // roce-render-check: no filenames; args say what to compare.
    let render_check = entry("roce-render-check");
    let dir = temp("pre-commit");
    let d = dir.display().to_string();
    let target = [
        "--target",
        "env",
        "--profile",
        "coreweave/h100-ib",
        "-o",
        d.as_str(),
    ];
    assert_eq!(
        run(&render_check, &target),
        Some(1),
        "nothing rendered yet: stale"
    );
    assert!(
        roce()
            .args(["render"])
            .args(target)
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(run(&render_check, &target), Some(0));
}

/// `render -o` writes files with the mode `open(…, 0666)` gives under the caller's umask (the temporary
/// file's 0600 must not survive the rename), and keeps the mode of a file it replaces.
#[cfg(unix)]
#[test]
fn render_output_modes_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let bin = env!("CARGO_BIN_EXE_roce");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    for (umask, expected) in [("022", 0o644), ("027", 0o640), ("077", 0o600)] {
        let dir = temp(&format!("mode-{umask}"));
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec {bin} render --target kustomize --profile coreweave/h100-ib -o {}",
                dir.join("out").display()
            ))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let files: Vec<_> = std::fs::read_dir(dir.join("out"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(!files.is_empty());
        for file in files {
            assert_eq!(
                mode(&file),
                expected,
                "{} under umask {umask}",
                file.display()
            );
        }
    }
    // Re-rendering over a file the user made group-writable keeps that mode, as open(2) would.
    let dir = temp("mode-keep");
    let render = || {
        Command::new("bash")
            .arg("-c")
            .arg(format!(
                "umask 022 && exec {bin} render --target env --profile coreweave/h100-ib -o {}",
                dir.display()
            ))
            .status()
            .unwrap()
    };
    assert!(render().success());
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
    std::fs::write(&file, "stale\n").unwrap();
    assert!(render().success());
    assert_eq!(mode(&file), 0o664);
    assert_ne!(std::fs::read_to_string(&file).unwrap(), "stale\n");
}

/// The commented multi-document fixture of `roce-render`'s apply tests.
fn commented_manifest() -> String {
    std::fs::read_to_string(repo().join("crates/roce-render/tests/fixtures/apply/commented.yaml"))
        .unwrap()
}

/// `apply --in-place` edits the file the way `apply` prints it: every comment stays, a line is removed
/// only where the wiring changes it, and a second run leaves the bytes alone.
#[test]
fn apply_in_place_edits_the_text_and_keeps_the_comments() {
    let dir = temp("apply-text");
    let path = dir.join("stack.yaml");
    let text = commented_manifest();
    std::fs::write(&path, &text).unwrap();
    let apply = |in_place: bool| {
        let mut cmd = roce();
        cmd.arg("apply")
            .arg(&path)
            .args(["--profile", "coreweave/gb300-roce"]);
        if in_place {
            cmd.arg("--in-place");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let printed = apply(false);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "printing writes nothing"
    );
    assert_eq!(apply(true), "", "--in-place prints nothing");
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, printed);
    for line in text.lines().filter(|l| l.contains('#')) {
        let comment = &line[line.find('#').unwrap()..];
        assert!(written.contains(comment), "lost {comment:?}");
    }
    let diff = similar::TextDiff::from_lines(&text, &written);
    let removed = diff
        .iter_all_changes()
        .filter(|c| c.tag() == similar::ChangeTag::Delete)
        .count();
    assert_eq!(
        removed, 4,
        "at most two wired lines per worker template; the MPI launcher stays as written"
    );
    apply(true);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        written,
        "a second run changes nothing"
    );
}

#[cfg(unix)]
#[test]
fn apply_in_place_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("apply-mode");
    let path = dir.join("pod.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n",
    )
    .unwrap();
    for mode in [0o640, 0o604] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = roce()
            .arg("apply")
            .arg(&path)
            .args(["--profile", "coreweave/h100-ib", "--in-place"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, mode, "{mode:o}");
    }
    assert!(
        std::fs::read_to_string(&path).unwrap().contains("rdma/ib"),
        "the file was rewritten"
    );
}

/// `roce explain --profile` compares an nccl-tests result with the profile's `job expected-busbw`;
/// `--expect-busbw` overrides it.
#[test]
fn explain_compares_bandwidth_with_the_profiles_expectation() {
    let dir = temp("expected-busbw");
    let profile = dir.join("p.kdl");
    std::fs::write(
        &profile,
        "profile \"t/x\" extends=\"coreweave/gb300-roce\" {\n    job expected-busbw=400\n}\n",
    )
    .unwrap();
    let log = repo().join(
        "crates/roce-inspect/tests/fixtures/explain-corpus/gh-aws-k8s-tester-503-tagged-table.log",
    );
    let run = |extra: &[&str]| {
        let out = roce()
            .arg("explain")
            .arg(&log)
            .arg("--profile")
            .arg(&profile)
            .args(extra)
            .args(["--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let from_profile = run(&[]);
    assert_eq!(
        from_profile["bandwidth"]["expected_busbw_gbps"], 400.0,
        "{from_profile}"
    );
    assert_eq!(
        from_profile["bandwidth"]["expected_from"],
        "the profile's job expected-busbw"
    );
    let overridden = run(&["--expect-busbw", "100"]);
    assert_eq!(
        overridden["bandwidth"]["expected_busbw_gbps"], 100.0,
        "{overridden}"
    );
    assert_eq!(overridden["bandwidth"]["expected_from"], "--expect-busbw");
}

/// `roce sweep`, `sweep plan` and `sweep report` each show an example under `--help`.
#[test]
fn sweep_help_has_examples() {
    for args in [&["sweep"][..], &["sweep", "plan"], &["sweep", "report"]] {
        let out = roce().args(args).arg("--help").output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let example = text
            .split_once("\nExample:\n")
            .unwrap_or_else(|| panic!("{args:?} --help has no example:\n{text}"))
            .1;
        assert!(
            example
                .lines()
                .any(|l| l.trim_start().starts_with("roce sweep ")),
            "{args:?}: {example}"
        );
    }
}
