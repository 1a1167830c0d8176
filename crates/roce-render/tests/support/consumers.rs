//! Real-consumer checks: feed generated output to the real tools that will
//! consume it (schema validator, Dockerfile linter, kustomize, bash) and fail
//! the test when they reject it. std only.
//!
//! Declared once per test binary: in roce-render's `tests/tests.rs` as `support::consumers`, in the other
//! crates' `tests/tests.rs` through `#[path = "../../roce-render/tests/support/consumers.rs"]`. A topic
//! module then writes:
//!
//! ```ignore
//! use crate::support::consumers;
//! use consumers::Checked;
//!
//! #[test]
//! fn pod_is_valid_for_real() {
//!     let yaml = render_pod(/* ... */);
//!     consumers::kubernetes_validate_strict(&yaml, consumers::K8S_VERSIONS)
//!         .unwrap_or_else(|e| panic!("{e}"));
//! }
//! ```
//!
//! # Tools and where they come from
//!
//! `.ci/install-tools` puts pinned copies of `kubernetes-validate`,
//! `hadolint`, `kubectl` and UCX's `ucx_perftest`/`ucx_info` in
//! `<repo>/.venv/bin`; [`require`] looks there first, then on `PATH`.
//!
//! # Missing tools: skip locally, fail under CI
//!
//! Every check returns `Result<Checked, String>` (or, for kustomize,
//! `Result<Option<String>, String>` where `None` means skipped):
//!
//! * `Ok(Checked::Ran)`     the tool ran and accepted the input;
//! * `Ok(Checked::Skipped)` the tool is not installed and we are not under CI
//!   (a loud `SKIPPED` banner is printed to stderr; run `.ci/install-tools`);
//! * `Err(report)`          the tool rejected the input (or could not run);
//!   `report` holds the command, its exit status, stdout, stderr and the input
//!   with line numbers, ready for `panic!("{report}")`.
//!
//! When a tool is missing and `CI` is set (anything but empty/`0`/`false`), or
//! `ROCE_REQUIRE_TOOLS=1`, [`require`] panics instead of skipping, so CI can
//! never go green by silently skipping a consumer.
//!
//! # Strictness decisions
//!
//! * kubernetes-validate: `--strict` (unknown fields are errors). The tool
//!   itself exits 0 with only a `WARN` when it has no schema for a kind/
//!   apiVersion (e.g. a typo in `kind:`), so any `WARN`/`ERROR`/`FATAL` line is
//!   treated as failure here, and each requested version must report at least
//!   one `passed` resource (empty input fails). Gotcha: the tool needs
//!   `metadata.name` on every resource (`generateName` alone errors out).
//! * hadolint: `--failure-threshold warning` with `--disable-ignore-pragma`, a
//!   neutral config and all `HADOLINT_*` env vars removed. Parse errors, errors
//!   and warnings fail; `info`/`style` findings are allowed. A Dockerfile must
//!   start with `FROM`/`ARG` (DL3061 is an error): wrap bare `ENV` lines with a
//!   `FROM` line before checking.
//! * kubectl kustomize: plain `kubectl kustomize DIR` (default load
//!   restrictor). Needs kustomize >= v3.7 for `kind: Component`; the pinned
//!   kubectl has v5.6.
//! * bash: `bash -n` (syntax only), `BASH_ENV`/`ENV` removed.
//!
//! Temp files are removed when a check passes and kept (path in the report)
//! when it fails.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Kubernetes versions the generated manifests are validated against by
/// default: the oldest and newest minors whose schemas kubernetes-validate
/// 1.37.0 bundles (it covers 1.25 ..= 1.37), plus one in between.
pub(crate) const K8S_VERSIONS: &[&str] = &["1.25.0", "1.32.0", "1.37.0"];

/// The versions a manifest with DRA claims is validated against: `resource.k8s.io/v1` exists from 1.34;
/// 1.37 is the newest kubernetes-validate 1.37.0 bundles.
pub(crate) const DRA_K8S_VERSIONS: &[&str] = &["1.34.0", "1.37.0"];

/// The versions to validate a manifest against: [`K8S_VERSIONS`], or from `min_minor` on when the manifest
/// needs a newer API (the plan says: `DraWiring::min_kubernetes_minor`).
pub(crate) fn k8s_versions_from(min_minor: Option<u32>) -> Vec<&'static str> {
    let minor = |v: &str| {
        v.split('.')
            .nth(1)
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap()
    };
    match min_minor {
        None => K8S_VERSIONS.to_vec(),
        Some(min) => K8S_VERSIONS
            .iter()
            .chain(DRA_K8S_VERSIONS)
            .copied()
            .filter(|v| minor(v) >= min)
            .fold(Vec::new(), |mut out, v| {
                if !out.contains(&v) {
                    out.push(v);
                }
                out
            }),
    }
}

/// A multi-document manifest against its real consumers: the ComputeDomain documents against the CRD's
/// schema (kubernetes-validate has no schema for them), every other document with
/// [`kubernetes_validate_strict`] for [`k8s_versions_from`]`(min_minor)`.
pub(crate) fn validate_manifest(yaml: &str, min_minor: Option<u32>) -> Result<(), String> {
    let mut core = Vec::new();
    for doc in yaml.split("\n---\n") {
        if doc.lines().any(|l| l == "kind: ComputeDomain") {
            let value: serde_json::Value =
                serde_saphyr::from_str(doc).map_err(|e| format!("{e}\n{doc}"))?;
            let checked = crd_schema_strict(&value, "compute-domain-v1beta1.json")?;
            assert!(
                checked || !tools_required(),
                "ComputeDomain schema not checked"
            );
        } else {
            core.push(doc);
        }
    }
    kubernetes_validate_strict(&core.join("\n---\n"), &k8s_versions_from(min_minor)).map(|_| ())
}

/// An external program a check needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    KubernetesValidate,
    Hadolint,
    Kubectl,
    Bash,
    /// UCX's `ucx_perftest` (`.ci/install-tools`: a wrapper around the PyPI wheel `libucx-cu12`).
    UcxPerftest,
    /// UCX's `ucx_info`, from the same wheel.
    UcxInfo,
}

impl Tool {
    /// Executable name looked up in `<repo>/.venv/bin` and on `PATH`.
    pub(crate) fn exe(self) -> &'static str {
        match self {
            Tool::KubernetesValidate => "kubernetes-validate",
            Tool::Hadolint => "hadolint",
            Tool::Kubectl => "kubectl",
            Tool::Bash => "bash",
            Tool::UcxPerftest => "ucx_perftest",
            Tool::UcxInfo => "ucx_info",
        }
    }
}

/// Outcome of a check that did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// The real tool ran and accepted the input.
    Ran,
    /// The tool is not installed (and we are not under CI); nothing was checked.
    Skipped,
}

/// True when missing tools must be a hard failure: `CI` set to anything but
/// empty/`0`/`false`, or `ROCE_REQUIRE_TOOLS` set likewise.
pub(crate) fn tools_required() -> bool {
    let on = |var: &str| {
        std::env::var(var).is_ok_and(|v| {
            let v = v.trim();
            !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")
        })
    };
    on("CI") || on("ROCE_REQUIRE_TOOLS")
}

/// The workspace root: `ROCE_REPO_ROOT` if set, else the nearest ancestor of
/// `CARGO_MANIFEST_DIR` whose `Cargo.toml` has a `[workspace]` table, else
/// `CARGO_MANIFEST_DIR` itself.
pub(crate) fn repo_root() -> PathBuf {
    if let Some(root) = std::env::var_os("ROCE_REPO_ROOT").filter(|v| !v.is_empty()) {
        return PathBuf::from(root);
    }
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|toml| toml.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
        .unwrap_or(manifest)
}

/// A fresh, empty, uniquely named directory under `std::env::temp_dir()`.
/// Not removed automatically.
pub(crate) fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tag: String = tag
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("roce-{tag}-{}-{nanos}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create temp dir {}: {e}", dir.display()));
    dir
}

/// Finds `tool` in `<repo>/.venv/bin`, then on `PATH`.
///
/// `Some(path)` when found. When absent: panics under CI (see
/// [`tools_required`]), otherwise prints a loud skip banner to stderr and
/// returns `None`.
pub(crate) fn require(tool: Tool) -> Option<PathBuf> {
    let venv_bin = repo_root().join(".venv").join("bin");
    if let Some(found) = find_executable(tool.exe(), &venv_bin) {
        return Some(found);
    }
    let msg = format!(
        "real-consumer check needs `{}`, which is not in {} nor on PATH; \
         run `.ci/install-tools` from the repo root",
        tool.exe(),
        venv_bin.display()
    );
    if tools_required() {
        panic!("{msg} (CI/ROCE_REQUIRE_TOOLS is set, so a missing tool is a failure)");
    }
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED: {msg}\n\
         !!! (set CI=true or ROCE_REQUIRE_TOOLS=1 to make this a failure)\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    );
    None
}

fn find_executable(name: &str, first: &Path) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    std::iter::once(first.to_path_buf())
        .chain(path_dirs)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Validates every document in `yaml` with
/// `kubernetes-validate --strict -k V1 -k V2 ... FILE` (one run covers all
/// versions; schemas are bundled, no network). Fails on a non-zero exit, on
/// any `WARN`/`ERROR`/`FATAL` line (an unknown kind only WARNs and exits 0),
/// and when a version reports no passed resource.
pub(crate) fn kubernetes_validate_strict(
    yaml: &str,
    k8s_versions: &[&str],
) -> Result<Checked, String> {
    if k8s_versions.is_empty() {
        return Err("kubernetes_validate_strict: no Kubernetes versions given".into());
    }
    for v in k8s_versions {
        let parts: Vec<&str> = v.trim_start_matches('v').split('.').collect();
        let numeric = parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if parts.len() < 2 || !numeric {
            return Err(format!(
                "kubernetes_validate_strict: bad Kubernetes version {v:?} (want e.g. \"1.32.0\")"
            ));
        }
    }
    let Some(exe) = require(Tool::KubernetesValidate) else {
        return Ok(Checked::Skipped);
    };
    let dir = temp_dir("kubernetes-validate");
    let file = write_input(&dir, "manifest.yaml", yaml);
    let mut cmd = Command::new(&exe);
    cmd.arg("--strict");
    for v in k8s_versions {
        cmd.arg("-k").arg(v);
    }
    // Filenames must come last: the CLI takes everything after the first
    // filename as more filenames (argparse REMAINDER).
    cmd.arg(&file);
    let out = run(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut problems = Vec::new();
    if !out.status.success() {
        problems.push(format!("{}", out.status));
    }
    for line in stdout.lines() {
        if ["WARN", "ERROR", "FATAL"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            problems.push(format!("reported: {line}"));
        }
    }
    if stdout.contains("list index out of range") || stdout.starts_with("FATAL") {
        problems.push(
            "hint: kubernetes-validate 1.37.0 bundles schemas for Kubernetes 1.25 ..= 1.37 only"
                .into(),
        );
    }
    if problems.is_empty() {
        for v in k8s_versions {
            let minor = major_minor(v);
            let needle = format!("against version {minor}");
            if !stdout
                .lines()
                .any(|l| l.starts_with("INFO") && l.contains(" passed ") && l.ends_with(&needle))
            {
                problems.push(format!(
                    "no resource reported as passed against version {minor}"
                ));
            }
        }
    }
    finish(&dir, &cmd, &out, &file, yaml, problems)
}

fn major_minor(v: &str) -> String {
    v.trim_start_matches('v')
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".")
}

/// Lints a whole Dockerfile with `hadolint --failure-threshold warning
/// --disable-ignore-pragma --no-color` and a neutral config. Parse errors,
/// errors and warnings fail; info/style findings pass. Bare `ENV` lines must be
/// wrapped with a `FROM` line first (a Dockerfile not starting with
/// `FROM`/`ARG` is error DL3061).
pub(crate) fn hadolint(dockerfile: &str) -> Result<Checked, String> {
    let Some(exe) = require(Tool::Hadolint) else {
        return Ok(Checked::Skipped);
    };
    let dir = temp_dir("hadolint");
    let file = write_input(&dir, "Dockerfile", dockerfile);
    // A config that changes nothing, so no user/global hadolint.yaml applies.
    let config = write_input(&dir, "hadolint.yaml", "ignored: []\n");
    let mut cmd = Command::new(&exe);
    cmd.arg("--config")
        .arg(&config)
        .args(["--no-color", "--disable-ignore-pragma"])
        .args(["--failure-threshold", "warning"])
        .arg(&file)
        .current_dir(&dir);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("HADOLINT_") {
            cmd.env_remove(key);
        }
    }
    let out = run(&mut cmd)?;
    let problems = if out.status.success() {
        Vec::new()
    } else {
        vec![format!("{}", out.status)]
    };
    finish(&dir, &cmd, &out, &file, dockerfile, problems)
}

/// Builds a kustomization with `kubectl kustomize DIR` and returns the YAML.
/// `Ok(None)` when kubectl is missing outside CI (skipped).
pub(crate) fn kubectl_kustomize(dir: &Path) -> Result<Option<String>, String> {
    let Some(exe) = require(Tool::Kubectl) else {
        return Ok(None);
    };
    let mut cmd = Command::new(&exe);
    cmd.arg("kustomize").arg(dir);
    let out = run(&mut cmd)?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed: {}\n{}\n--- files under {} ---\n{}",
            describe(&cmd),
            out.status,
            streams(&out),
            dir.display(),
            list_files(dir)
        ));
    }
    String::from_utf8(out.stdout)
        .map(Some)
        .map_err(|e| format!("`{}` printed non-UTF-8 output: {e}", describe(&cmd)))
}

/// Syntax-checks a shell script with `bash -n`.
pub(crate) fn bash_syntax(script: &str) -> Result<Checked, String> {
    let Some(exe) = require(Tool::Bash) else {
        return Ok(Checked::Skipped);
    };
    let dir = temp_dir("bash-n");
    let file = write_input(&dir, "script.sh", script);
    let mut cmd = Command::new(&exe);
    cmd.arg("-n")
        .arg(&file)
        .env_remove("BASH_ENV")
        .env_remove("ENV");
    let out = run(&mut cmd)?;
    // bash -n reports syntax errors on stderr and exits 2; be strict about
    // anything it prints, too.
    let mut problems = Vec::new();
    if !out.status.success() {
        problems.push(format!("{}", out.status));
    } else if !out.stderr.is_empty() {
        problems.push("bash -n printed to stderr".into());
    }
    finish(&dir, &cmd, &out, &file, script, problems)
}

// ---------------------------------------------------------------------------

fn write_input(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

fn run(cmd: &mut Command) -> Result<Output, String> {
    cmd.stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", describe(cmd)))
}

fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

fn streams(out: &Output) -> String {
    format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout).trim_end(),
        String::from_utf8_lossy(&out.stderr).trim_end()
    )
}

fn numbered(text: &str) -> String {
    let mut s = String::new();
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(s, "{:>4} | {line}", i + 1);
    }
    s
}

fn list_files(dir: &Path) -> String {
    let mut s = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                let _ = write!(s, "=== {} ===\n{}", p.display(), numbered(&text));
            }
        }
    }
    s
}

/// Ok(Ran) and removes `dir` when there are no problems; otherwise an error
/// report with command, output and numbered input, keeping `dir` for a look.
fn finish(
    dir: &Path,
    cmd: &Command,
    out: &Output,
    file: &Path,
    input: &str,
    problems: Vec<String>,
) -> Result<Checked, String> {
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(dir);
        return Ok(Checked::Ran);
    }
    Err(format!(
        "`{}` rejected the input:\n  - {}\n{}\n--- input ({}) ---\n{}",
        describe(cmd),
        problems.join("\n  - "),
        streams(out),
        file.display(),
        numbered(input)
    ))
}

// ---------------------------------------------------------------------------------------------------------
// CRD schemas (`tests/fixtures/crds/`, README.md there), checked with Python jsonschema.

/// Strict field validation: `additionalProperties: false` on every object schema listing `properties`
/// (see `tests/fixtures/crds/README.md`). `SCHEMA DOC`: one document, exit 1 with one line per error;
/// `--batch ITEMS OUT`: a batch, `ITEMS` a JSON list of `{"schema": path, "doc": value}`, `OUT` gets a JSON list
/// with each document's error lines (each schema is read and made strict once).
const JSONSCHEMA_CHECK: &str = r#"
import json, sys
import jsonschema

def strict(node):
    if isinstance(node, dict):
        if (node.get("type") == "object" and isinstance(node.get("properties"), dict)
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)

validators = {}
def errors(schema_path, doc):
    if schema_path not in validators:
        schema = json.load(open(schema_path))
        strict(schema)
        validators[schema_path] = jsonschema.Draft7Validator(
            schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    found = sorted(validators[schema_path].iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message for e in found]

if sys.argv[1] == "--batch":
    items = json.load(open(sys.argv[2]))
    result = [errors(item["schema"], item["doc"]) for item in items]
    json.dump(result, open(sys.argv[3], "w"))
    sys.exit(0)
lines = errors(sys.argv[1], json.load(open(sys.argv[2])))
for line in lines:
    print(line)
sys.exit(1 if lines else 0)
"#;

fn python_with_jsonschema() -> Option<PathBuf> {
    let venv = repo_root().join(".venv/bin/python");
    for py in [venv, PathBuf::from("python3")] {
        let ok = Command::new(&py)
            .args(["-c", "import jsonschema"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(py);
        }
    }
    let msg = "the CRD schema checks need Python with `jsonschema` (.venv/bin/python or python3); \
               run `.ci/install-tools` from the repo root";
    if tools_required() {
        panic!("{msg} (CI/ROCE_REQUIRE_TOOLS is set, so a missing tool is a failure)");
    }
    eprintln!(
        "\n!!! SKIPPED: {msg}\n!!! (set CI=true or ROCE_REQUIRE_TOOLS=1 to make this a failure)\n"
    );
    None
}

/// Checks `doc` against the CRD schema `tests/fixtures/crds/<fixture>` with strict field validation.
/// `Ok(true)`: valid; `Ok(false)`: skipped (no validator, not under CI); `Err(report)`: rejected.
pub(crate) fn crd_schema_strict(doc: &serde_json::Value, fixture: &str) -> Result<bool, String> {
    let Some(py) = python_with_jsonschema() else {
        return Ok(false);
    };
    let dir = temp_dir("crd-schema");
    let doc_path = dir.join("doc.json");
    std::fs::write(&doc_path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    // From the repository root, so other crates' tests (roce-inspect's corpus) find the same schemas.
    let schema = repo_root()
        .join("crates/roce-render/tests/fixtures/crds")
        .join(fixture);
    let out = Command::new(&py)
        .arg("-c")
        .arg(JSONSCHEMA_CHECK)
        .arg(&schema)
        .arg(&doc_path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", py.display()));
    if out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        Ok(true)
    } else {
        Err(format!(
            "jsonschema rejected {} against {fixture} ({}):\n{}{}",
            doc_path.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Checks each `(document, schema fixture)` pair like [`crd_schema_strict`], all in one Python process.
/// `Ok(None)`: skipped (no validator, not under CI); `Ok(Some(errors))`: for each document, in order, the
/// schema's complaints (`/json/path: message`; empty: valid); `Err(report)`: the validator could not run.
pub(crate) fn crd_schema_errors(
    items: &[(&serde_json::Value, &str)],
) -> Result<Option<Vec<Vec<String>>>, String> {
    let Some(py) = python_with_jsonschema() else {
        return Ok(None);
    };
    if items.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let dir = temp_dir("crd-schema-batch");
    let crds = repo_root().join("crates/roce-render/tests/fixtures/crds");
    let batch: Vec<serde_json::Value> = items
        .iter()
        .map(|(doc, fixture)| {
            let schema = crds.join(fixture);
            assert!(schema.is_file(), "no CRD schema {}", schema.display());
            serde_json::json!({ "schema": schema, "doc": doc })
        })
        .collect();
    let (input, output) = (dir.join("items.json"), dir.join("errors.json"));
    std::fs::write(&input, serde_json::to_string(&batch).unwrap()).unwrap();
    let out = Command::new(&py)
        .arg("-c")
        .arg(JSONSCHEMA_CHECK)
        .arg("--batch")
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", py.display()));
    let read = std::fs::read_to_string(&output)
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<Vec<String>>>(&t).ok());
    match read {
        Some(errors) if out.status.success() && errors.len() == items.len() => {
            let _ = std::fs::remove_dir_all(&dir);
            Ok(Some(errors))
        }
        _ => Err(format!(
            "jsonschema could not check {} ({}):\n{}{}",
            input.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}
