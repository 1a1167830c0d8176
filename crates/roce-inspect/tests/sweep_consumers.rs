//! The sweep report's outputs read by their consumers: the JSON by Python `jsonschema` against
//! docs/sweep-report.schema.json (and the schema is not a rubber stamp), the HTML by a real headless
//! Chromium (every heatmap cell and bar survives the browser's parser, and it renders a page).
//! Skipped loudly without the tools; a failure under `CI=true` (`.ci/install-tools` installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::sweep::{self, Expectation};
use roce_render::sweep::RESULTS_DIR;

use crate::support::fleet;

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skip(what: &str) {
    assert!(
        !required(),
        "{what} is missing under CI: run .ci/install-tools"
    );
    eprintln!("\n*** SKIPPED: {what} not installed (run .ci/install-tools) ***\n");
}

/// A report of a small simulated fleet.
fn report() -> (sweep::Report, roce_render::sweep::Campaign) {
    let dir = tempfile::tempdir().unwrap();
    fleet::simulate(dir.path(), 60, 5);
    let c: roce_render::sweep::Campaign =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("campaign.json")).unwrap())
            .unwrap();
    let (_, profile) = fleet::campaign(2, 3);
    let expect = Expectation::of(&profile);
    let results = dir.path().join(RESULTS_DIR);
    let tests = sweep::read_all(&c, &expect, |p| std::fs::read(results.join(p)).ok());
    (sweep::judge(&c, tests, &expect), c)
}

/// `Ok(())` valid, `Err(report)` invalid, `None` when Python jsonschema is missing.
fn validate(doc: &serde_json::Value) -> Option<Result<(), String>> {
    let py = repo().join(".venv/bin/python");
    if !py.exists() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = Command::new(py)
        .args([
            "-c",
            "import json,sys,jsonschema\n\
             s=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))\n\
             jsonschema.Draft7Validator.check_schema(s)\n\
             errs=sorted(jsonschema.Draft7Validator(s).iter_errors(d), key=str)\n\
             [print(e.message, list(e.path)) for e in errs]\n\
             sys.exit(1 if errs else 0)",
        ])
        .arg(repo().join("docs/sweep-report.schema.json"))
        .arg(&path)
        .output()
        .ok()?;
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

#[test]
fn the_json_report_matches_its_schema() {
    let (r, _) = report();
    let doc = r.to_json();
    assert!(r.counts.bad >= 1, "the fleet has a bad node to describe");
    let Some(result) = validate(&doc) else {
        return skip("Python jsonschema (.venv)");
    };
    result.unwrap_or_else(|e| panic!("{e}"));
    // not a rubber stamp: an unknown cause, a missing field and an extra field are refused
    let mut bad = doc.clone();
    bad["nodes"][0]["cause"] = serde_json::json!("cosmic_rays");
    assert!(validate(&bad).unwrap().is_err());
    let mut bad = doc.clone();
    bad["counts"].as_object_mut().unwrap().remove("bad");
    assert!(validate(&bad).unwrap().is_err());
    let mut bad = doc;
    bad["fleet"]["colour"] = serde_json::json!("red");
    assert!(validate(&bad).unwrap().is_err());
}

#[test]
fn the_html_report_renders_in_a_real_browser() {
    let (r, c) = report();
    let html = sweep::to_html(&r, &c);
    assert!(
        !html.contains("<script") && !html.contains("http://") && !html.contains("https://")
            || html.contains("http://www.w3.org/2000/svg")
    );
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        return skip("chromium");
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ));
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push(format!("file://{}", page.display()));
        a
    };
    let dom = Command::new(chromium)
        .args(args(&["--dump-dom"]))
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let cells = c.rounds.iter().map(|r| 2 * r.pairs.len()).sum::<usize>();
    assert_eq!(
        dom.matches("class=\"cell\"").count(),
        cells,
        "every heatmap cell survives the parser"
    );
    assert_eq!(dom.matches("class=\"bar\"").count(), c.nodes.len());
    assert!(dom.contains("<table id=\"nodes\""));
    let bad = r
        .nodes
        .iter()
        .find(|n| n.verdict == sweep::Verdict::Bad)
        .unwrap();
    assert!(dom.contains(bad.name.as_str()));
    let shot = dir.path().join("shot.png");
    let out = Command::new(chromium)
        .args(args(&[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,1400",
        ]))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a rendered page, {} bytes",
        png.len()
    );
}
