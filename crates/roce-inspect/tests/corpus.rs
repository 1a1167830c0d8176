//! The wiring corpus (`tests/fixtures/corpus/`, its README says the format): manifests that reproduce the
//! wiring of real public samples, each with hand-written expectations. Lint is measured by precision and
//! recall over its error and warning findings; apply must change nothing that already works (Multus entries,
//! ComputeDomains, launcher commands, search paths, exact device lists, affinity and spread), its output must
//! pass `kubernetes-validate --strict` where it is a core kind (MPIJobs and ComputeDomains: their CRD schemas,
//! strict) and must not gain findings, and applying twice must equal applying once.

#[path = "../../roce-render/tests/support/consumers.rs"]
mod consumers;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roce_inspect::lint::{FileReport, LintOptions, Linter};
use roce_model::{BuiltinsOnly, Problem, Severity, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply};
use serde_json::Value;
use toml_edit::{DocumentMut, Item};

/// Lint must find this share of what is really wrong, and this share of what it reports must be real.
const MIN_PRECISION: f64 = 0.95;
const MIN_RECALL: f64 = 0.90;

/// The findings `roce apply` resolves: its output must have none of them.
const APPLY_FIXES: &[&str] = &[
    "roce::lint::missing_nad",
    "roce::lint::rdma_resource",
    "roce::lint::ipc_lock",
    "roce::lint::env_missing",
    "roce::lint::shm",
    "roce::lint::node_selector",
    "roce::lint::dra_channel_claim",
    "roce::lint::dra_nic_claim",
    "roce::lint::dra_clique_affinity",
    "roce::lint::provider_env",
    "roce::lint::provider_resource",
    "roce::lint::host_mount",
    "roce::lint::topology_file",
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// Every `<source>/<name>.toml` with its `.yaml`.
fn fixtures() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(corpus_dir()).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "toml") {
                let yaml = f.with_extension("yaml");
                assert!(yaml.exists(), "{} has no .yaml", f.display());
                out.push((f, yaml));
            }
        }
    }
    out.sort();
    out
}

#[derive(Debug, Clone)]
struct Expect {
    code: String,
    lines: Option<(usize, usize)>,
}

#[derive(Debug, Default)]
struct Fixture {
    name: String,
    source: String,
    profile: String,
    container: Option<String>,
    expect: Vec<Expect>,
    absent: Vec<Expect>,
    apply: bool,
    nads_after: Option<usize>,
    must_add: Vec<String>,
    must_not_add: Vec<String>,
    keep_env: Vec<String>,
}

fn strings(item: Option<&Item>) -> Vec<String> {
    item.and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn expects(doc: &DocumentMut, key: &str) -> Vec<Expect> {
    let Some(tables) = doc.get(key).and_then(Item::as_array_of_tables) else {
        return Vec::new();
    };
    tables
        .iter()
        .map(|t| {
            let code = t
                .get("code")
                .and_then(Item::as_str)
                .unwrap_or_else(|| panic!("[[{key}]] without code"))
                .to_string();
            let lines = t.get("lines").and_then(Item::as_array).map(|a| {
                let n: Vec<usize> = a
                    .iter()
                    .map(|v| v.as_integer().expect("lines are integers") as usize)
                    .collect();
                assert_eq!(n.len(), 2, "lines = [first, last]");
                (n[0], n[1])
            });
            Expect { code, lines }
        })
        .collect()
}

fn read(toml: &Path) -> Fixture {
    let text = std::fs::read_to_string(toml).unwrap();
    let doc: DocumentMut = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", toml.display()));
    let source = doc
        .get("source")
        .and_then(Item::as_table)
        .unwrap_or_else(|| panic!("{}: no [source]", toml.display()));
    let field = |k: &str| {
        source
            .get(k)
            .and_then(Item::as_str)
            .unwrap_or_else(|| panic!("{}: [source] has no {k}", toml.display()))
            .to_string()
    };
    let (repo, commit, path) = (field("repo"), field("commit"), field("path"));
    assert!(
        repo.contains('/') && !path.is_empty(),
        "{}: cite the repository and path",
        toml.display()
    );
    assert!(
        commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{}: the commit must be 40 hex digits",
        toml.display()
    );
    let apply = doc.get("apply").and_then(Item::as_table);
    let rel = toml.strip_prefix(corpus_dir()).unwrap().with_extension("");
    Fixture {
        name: rel.display().to_string(),
        source: repo,
        // `profile` and `container` may stand at the top or, written after `[source]`, in it.
        profile: doc
            .get("profile")
            .or_else(|| source.get("profile"))
            .and_then(Item::as_str)
            .unwrap_or("none")
            .to_string(),
        container: doc
            .get("container")
            .or_else(|| source.get("container"))
            .and_then(Item::as_str)
            .map(str::to_string),
        expect: expects(&doc, "expect"),
        absent: expects(&doc, "absent"),
        apply: apply.is_some_and(|a| a.get("run").and_then(Item::as_bool).unwrap_or(true)),
        nads_after: apply
            .and_then(|a| a.get("nads_after"))
            .and_then(Item::as_integer)
            .map(|n| n as usize),
        must_add: strings(apply.and_then(|a| a.get("must_add"))),
        must_not_add: strings(apply.and_then(|a| a.get("must_not_add"))),
        keep_env: strings(apply.and_then(|a| a.get("keep_env"))),
    }
}

fn linter(f: &Fixture) -> Linter {
    let opts = LintOptions {
        container: f.container.clone(),
        profile_arg: None,
    };
    if f.profile == "none" {
        return Linter::without_profile(opts);
    }
    let source = builtin::source(&f.profile)
        .unwrap_or_else(|| panic!("{}: no built-in {}", f.name, f.profile));
    Linter::new(&load(source, &BuiltinsOnly).profile.unwrap(), opts)
}

/// The errors and warnings: what a user has to act on.
fn counted(report: &FileReport) -> Vec<&Problem> {
    report
        .problems
        .iter()
        .filter(|p| p.severity != Severity::Info)
        .collect()
}

fn line(p: &Problem) -> usize {
    p.location().map_or(0, |l| l.line)
}

fn within(e: &Expect, p: &Problem) -> bool {
    p.code.as_str() == e.code && e.lines.is_none_or(|(a, b)| (a..=b).contains(&line(p)))
}

/// How one fixture's findings compare with its expectations.
#[derive(Debug, Default)]
struct Score {
    tp: usize,
    fp: Vec<String>,
    fn_: Vec<String>,
    /// Findings of a code the fixture says must not be reported (also counted in `fp`).
    absent: Vec<String>,
}

fn score(f: &Fixture, report: &FileReport) -> Score {
    let found = counted(report);
    let mut used = vec![false; found.len()];
    let mut s = Score::default();
    for e in &f.expect {
        match (0..found.len()).find(|&i| !used[i] && within(e, found[i])) {
            Some(i) => {
                used[i] = true;
                s.tp += 1;
            }
            None => s.fn_.push(format!("{} {:?}", e.code, e.lines)),
        }
    }
    // One cause may be reported at several places of the expected range (one finding per container):
    // those are the same finding, not noise.
    for (i, p) in found.iter().enumerate() {
        if used[i] {
            continue;
        }
        if f.expect.iter().any(|e| within(e, p)) {
            continue;
        }
        s.fp.push(format!("{} {}: {}", p.code, line(p), p.message));
    }
    for a in &f.absent {
        for p in found.iter().filter(|p| within(a, p)) {
            s.absent
                .push(format!("{} {}: {}", p.code, line(p), p.message));
        }
    }
    s
}

fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

/// Every PodSpec-shaped object (`containers` of mappings with `name` and `image`), by JSON pointer.
fn pod_specs(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(cs)) = m.get("containers")
                && !cs.is_empty()
                && cs.iter().all(|c| c.get("name").is_some())
            {
                out.push((at, v.clone()));
                return;
            }
            for (k, x) in m {
                pod_specs(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                pod_specs(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The pod template (the PodSpec's parent when it is a `spec`) of a PodSpec at `at`.
fn template_of<'a>(doc: &'a Value, at: &str) -> Option<&'a Value> {
    match at.strip_suffix("/spec") {
        Some(parent) => doc.pointer(parent),
        None => None,
    }
}

fn multus_entries(template: Option<&Value>) -> Option<usize> {
    let value = template?
        .pointer("/metadata/annotations")?
        .get("k8s.v1.cni.cncf.io/networks")?
        .as_str()?;
    let v = value.trim();
    if v.starts_with('[') {
        serde_json::from_str::<Vec<Value>>(v).ok().map(|l| l.len())
    } else {
        Some(v.split(',').filter(|s| !s.trim().is_empty()).count())
    }
}

fn env_value(c: &Value, name: &str) -> Option<String> {
    c.get("env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
        .map(str::to_string)
}

fn kind_count(docs: &[Value], kind: &str) -> usize {
    docs.iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some(kind))
        .count()
}

/// Whether a container looks like an MPI launcher's (its command runs mpirun).
fn runs_mpirun(c: &Value) -> bool {
    ["command", "args"].iter().any(|k| {
        c.get(k).and_then(Value::as_array).is_some_and(|a| {
            a.iter()
                .any(|x| x.as_str().is_some_and(|s| s.contains("mpirun")))
        })
    })
}

/// What apply damaged: every check of the README's `[apply]`, generic and per fixture.
/// `stress`: the profile is not the fixture's; the values it sets for the job (the launcher's `-x`, an
/// exact HCA list) are then the profile's to correct, and only what no profile may do is damage.
fn damage(f: &Fixture, before: &str, after: &str, stress: bool) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = (documents(before), documents(after));
    if kind_count(&a, "ComputeDomain") > 0
        && kind_count(&b, "ComputeDomain") != kind_count(&a, "ComputeDomain")
    {
        out.push(format!(
            "ComputeDomains {} -> {}",
            kind_count(&a, "ComputeDomain"),
            kind_count(&b, "ComputeDomain")
        ));
    }
    let workloads_b: Vec<&Value> = b
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ComputeDomain"))
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ResourceClaimTemplate"))
        .collect();
    let workloads_a: Vec<&Value> = a
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ComputeDomain"))
        .filter(|d| d.get("kind").and_then(Value::as_str) != Some("ResourceClaimTemplate"))
        .collect();
    for (da, db) in workloads_a.iter().zip(&workloads_b) {
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        pod_specs(da, String::new(), &mut pa);
        pod_specs(db, String::new(), &mut pb);
        for (at, sa) in &pa {
            let Some((_, sb)) = pb.iter().find(|(x, _)| x == at) else {
                out.push(format!("{at}: pod spec gone"));
                continue;
            };
            let (ta, tb) = (template_of(da, at), template_of(db, at));
            let cs = |s: &Value| {
                s.get("containers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let launcher = cs(sa).iter().any(runs_mpirun);
            match (
                multus_entries(ta),
                multus_entries(tb),
                f.nads_after.filter(|_| !launcher),
            ) {
                (Some(n), Some(m), None) if n > 0 && n != m => {
                    out.push(format!("{at}: Multus entries {n} -> {m}"))
                }
                (_, m, Some(want)) if m.unwrap_or(0) != want && ta.is_some() => {
                    out.push(format!("{at}: Multus entries {m:?}, expected {want}"))
                }
                _ => {}
            }
            for key in ["affinity", "topologySpreadConstraints"] {
                let (x, y) = (sa.get(key), sb.get(key));
                if let (Some(x), Some(y)) = (x, y) {
                    // What was there stays: podAntiAffinity and spread constraints exactly.
                    for sub in ["podAntiAffinity", "nodeAffinity"] {
                        if x.get(sub).is_some() && x.get(sub) != y.get(sub) {
                            out.push(format!("{at}: {key}.{sub} changed"));
                        }
                    }
                    if key == "topologySpreadConstraints" && x != y {
                        out.push(format!("{at}: topologySpreadConstraints changed"));
                    }
                }
            }
            let cs = |s: &Value| {
                s.get("containers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            for (ca, cb) in cs(sa).iter().zip(cs(sb).iter()) {
                let name = ca.get("name").and_then(Value::as_str).unwrap_or("?");
                if runs_mpirun(ca) && !stress {
                    for k in ["command", "args"] {
                        if ca.get(k) != cb.get(k) && !f.must_add.iter().any(|m| m.starts_with("-x"))
                        {
                            out.push(format!("{at} {name}: launcher {k} changed"));
                        }
                    }
                }
                let Some(env) = ca.get("env").and_then(Value::as_array) else {
                    continue;
                };
                for e in env {
                    let Some(var) = e.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let Some(old) = e.get("value").and_then(Value::as_str) else {
                        continue;
                    };
                    let new = env_value(cb, var).unwrap_or_default();
                    let path_like = roce_model::fabric::devices::path_like(var);
                    let exact_list = matches!(
                        var,
                        "NCCL_IB_HCA" | "UCX_NET_DEVICES" | "NCCL_SOCKET_IFNAME"
                    ) && (old.starts_with('=') || old.contains(','));
                    let kept = f.keep_env.iter().any(|k| k == var);
                    if (path_like || kept) && !new.contains(old) {
                        out.push(format!("{at} {name}: {var}={old:?} became {new:?}"));
                    }
                    if exact_list
                        && !kept
                        && new != old
                        && f.expect.iter().all(|x| !x.code.contains("hca"))
                    {
                        out.push(format!(
                            "{at} {name}: exact list {var}={old:?} became {new:?}"
                        ));
                    }
                }
            }
        }
    }
    for m in &f.must_add {
        if !after.contains(m.as_str()) {
            out.push(format!("must add {m:?}"));
        }
    }
    for m in &f.must_not_add {
        if after.contains(m.as_str()) && !before.contains(m.as_str()) {
            out.push(format!("must not add {m:?}"));
        }
    }
    out
}

/// The documents of core kinds (`v1`, `apps/v1`, `batch/v1`), for kubernetes-validate.
fn core_documents(text: &str) -> String {
    text.split("\n---\n")
        .filter(|d| {
            d.lines().any(|l| {
                matches!(
                    l.trim(),
                    "apiVersion: v1" | "apiVersion: apps/v1" | "apiVersion: batch/v1"
                )
            })
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn the_corpus_is_linted_and_applied_as_its_expectations_say() {
    let all = fixtures();
    let mut report = String::new();
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    let mut damaged = Vec::new();
    let mut sources = BTreeSet::new();
    let mut crd_checked = 0;
    let mut absent_hits: Vec<String> = Vec::new();
    for (toml, yaml) in &all {
        let f = read(toml);
        sources.insert(f.source.clone());
        let text = std::fs::read_to_string(yaml).unwrap();
        let lint = linter(&f).lint(Source::new(
            yaml.file_name().unwrap().to_string_lossy(),
            text.clone(),
        ));
        assert!(
            lint.templates > 0
                || !text.contains("containers:")
                || lint
                    .problems
                    .iter()
                    .any(|p| p.code.as_str() == "roce::lint::syntax"),
            "{}: a file with pod templates reports none",
            f.name
        );
        let s = score(&f, &lint);
        tp += s.tp;
        fp += s.fp.len();
        fn_ += s.fn_.len();
        let _ = writeln!(
            report,
            "{:<48} {:<26} tp {:>2} fp {:>2} fn {:>2}",
            f.name,
            f.profile,
            s.tp,
            s.fp.len(),
            s.fn_.len()
        );
        for x in &s.fp {
            let _ = writeln!(report, "    FP {x}");
        }
        for x in &s.fn_ {
            let _ = writeln!(report, "    FN {x}");
        }
        for x in &s.absent {
            absent_hits.push(format!("{}: {x}", f.name));
        }
        if f.apply && f.profile != "none" {
            let plan = roce_render::plan::lower(
                &load(builtin::source(&f.profile).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap(),
            );
            let opts = ApplyOptions {
                container: f.container.clone(),
                ..ApplyOptions::default()
            };
            let once = match apply(&Source::new("in.yaml", text.clone()), &plan, &opts) {
                Ok(a) => a.text,
                Err(p) => {
                    damaged.push(format!(
                        "{}: apply refused: {:?}",
                        f.name,
                        p.iter().map(|p| p.code.as_str()).collect::<Vec<_>>()
                    ));
                    continue;
                }
            };
            let twice = apply(&Source::new("in.yaml", once.clone()), &plan, &opts)
                .unwrap()
                .text;
            if twice != once {
                damaged.push(format!("{}: applying twice differs from once", f.name));
            }
            for d in damage(&f, &text, &once, false) {
                damaged.push(format!("{}: {d}", f.name));
            }
            // Apply adds nothing lint objects to: no finding in the output that the input did not have.
            let after = linter(&f).lint(Source::new("out.yaml", once.clone()));
            let before: BTreeSet<&str> = counted(&lint).iter().map(|p| p.code.as_str()).collect();
            for p in counted(&after) {
                // What apply wires is gone from its output: the output lints clean of it.
                if APPLY_FIXES.contains(&p.code.as_str()) {
                    damaged.push(format!(
                        "{}: apply left {} {}: {}",
                        f.name,
                        p.code,
                        line(p),
                        p.message
                    ));
                } else if !before.contains(p.code.as_str()) {
                    damaged.push(format!(
                        "{}: apply's output has a new finding {} {}: {}",
                        f.name,
                        p.code,
                        line(p),
                        p.message
                    ));
                }
            }
            // The MPI Operator's and the DRA driver's CRD schemas, with strict fields, for what apply wrote
            // into MPIJobs and ComputeDomains.
            for doc in documents(&once) {
                let schema = match (
                    doc.get("apiVersion").and_then(Value::as_str),
                    doc.get("kind").and_then(Value::as_str),
                ) {
                    (Some("kubeflow.org/v2beta1"), Some("MPIJob")) => "mpi-operator-v2beta1.json",
                    (Some("resource.nvidia.com/v1beta1"), Some("ComputeDomain")) => {
                        "compute-domain-v1beta1.json"
                    }
                    _ => continue,
                };
                match consumers::crd_schema_strict(&doc, schema) {
                    Ok(true) => crd_checked += 1,
                    Ok(false) => {}
                    Err(e) => damaged.push(format!(
                        "{}: the {schema} schema rejects apply's output:\n{e}",
                        f.name
                    )),
                }
            }
            let core = core_documents(&once);
            if !core.trim().is_empty()
                && let Err(e) = consumers::kubernetes_validate_strict(
                    &core,
                    &consumers::k8s_versions_from(None),
                )
            {
                damaged.push(format!(
                    "{}: kubernetes-validate --strict rejects apply's output:\n{e}",
                    f.name
                ));
            }
        }
    }
    // A user pointing the wrong profile at any of these files must not damage them either: every
    // fixture with a pod template, applied with each of three built-ins of different clouds and fabrics.
    let mut stress = 0;
    for (toml, yaml) in &all {
        let f = read(toml);
        let text = std::fs::read_to_string(yaml).unwrap();
        if !text.contains("containers:") && !text.contains("mainContainer:") {
            continue;
        }
        for name in ["coreweave/gb300-roce", "aws/p5-efa", "gcp/a3-ultra"] {
            let plan = roce_render::plan::lower(
                &load(builtin::source(name).unwrap(), &BuiltinsOnly)
                    .profile
                    .unwrap(),
            );
            let opts = ApplyOptions {
                container: f.container.clone(),
                ..ApplyOptions::default()
            };
            let Ok(once) = apply(&Source::new("in.yaml", text.clone()), &plan, &opts) else {
                continue;
            };
            stress += 1;
            let twice = apply(&Source::new("in.yaml", once.text.clone()), &plan, &opts)
                .unwrap()
                .text;
            if twice != once.text {
                damaged.push(format!(
                    "{} with {name}: applying twice differs from once",
                    f.name
                ));
            }
            // What no profile may add: GPUs to a pod that asks for none of NVIDIA's.
            let generic = Fixture {
                must_add: Vec::new(),
                nads_after: None,
                must_not_add: vec!["nvidia.com/gpu".to_string()],
                ..read(toml)
            };
            for d in damage(&generic, &text, &once.text, true) {
                damaged.push(format!("{} with {name}: {d}", f.name));
            }
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!("{report}");
    println!(
        "corpus: {} fixtures from {} sources; precision {precision:.3} ({tp} of {}), recall {recall:.3} ({tp} of {}); apply damage: {} (over {stress} wrong-profile applies too; {crd_checked} MPIJob/ComputeDomain documents checked against their CRD schemas)",
        all.len(),
        sources.len(),
        tp + fp,
        tp + fn_,
        damaged.len()
    );
    for d in &damaged {
        println!("  DAMAGE {d}");
    }
    assert!(
        precision >= MIN_PRECISION && recall >= MIN_RECALL,
        "precision {precision:.3} (>= {MIN_PRECISION}) and recall {recall:.3} (>= {MIN_RECALL}):\n{report}"
    );
    assert!(damaged.is_empty(), "apply damage:\n{}", damaged.join("\n"));
    // Beyond the totals: what a fixture says works is never reported, so each rule that knows a form of
    // working wiring is guarded by the fixtures that show it.
    assert!(
        absent_hits.is_empty(),
        "reported although a fixture says it works:\n{}",
        absent_hits.join("\n")
    );
}
