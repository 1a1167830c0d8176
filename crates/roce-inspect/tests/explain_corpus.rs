//! `roce explain` on a corpus of real excerpts it was not written against: log lines quoted in public NCCL, UCX,
//! NIXL, aws-ofi-nccl, gIB and PyTorch threads (NCCL 2.4–2.28, UCX 1.8–1.19) and fresh NCCL 2.28, 2.29 and 2.32
//! runs, in the forms logs arrive in (one rank, WARN only, launcher, `kubectl logs --prefix` and timestamp
//! prefixes, tracebacks, nccl-tests tables).
//! `tests/fixtures/explain-corpus/manifest.toml` states each excerpt's verdict; every one is asserted here, and
//! the test prints how many matched so a regression names the excerpts it broke.

use std::path::{Path, PathBuf};

use roce_inspect::explain::{Explainer, Explanation};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain-corpus")
}

/// A fixture's text without its `#| ` header (the header says where the excerpt comes from; it is not log).
fn body(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rest = &bytes[..];
    while rest.starts_with(b"#| ") {
        let nl = memchr_nl(rest).map_or(rest.len(), |i| i + 1);
        rest = &rest[nl..];
    }
    rest.to_vec()
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// Explain a file, or every file of a directory (sorted by name) as one job.
fn explain(path: &Path) -> Explanation {
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect()
    } else {
        vec![path.to_path_buf()]
    };
    files.sort();
    let mut x = Explainer::new();
    for f in &files {
        x.start_file(&f.file_name().unwrap().to_string_lossy());
        x.read(&body(f)[..]).unwrap();
    }
    x.finish()
}

fn gdr(e: &Explanation) -> &'static str {
    match e.gpudirect_rdma {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// What roce says about one excerpt, in the manifest's terms.
fn verdict(e: &Explanation) -> Vec<(&'static str, String)> {
    let first = e.findings.first().map_or("none".to_string(), |f| {
        f.code
            .as_str()
            .trim_start_matches("roce::explain::")
            .to_string()
    });
    let exit = if e.has_errors() { 1 } else { 0 };
    vec![
        (
            "verdict",
            if e.has_errors() { "problem" } else { "ok" }.to_string(),
        ),
        ("transport", e.transport.as_str().to_string()),
        ("gpudirect_rdma", gdr(e).to_string()),
        ("first", first),
        ("exit", exit.to_string()),
    ]
}

#[test]
fn every_excerpt_gets_its_verdict() {
    let manifest: toml_edit::DocumentMut = std::fs::read_to_string(corpus().join("manifest.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let cases = manifest["case"]
        .as_array_of_tables()
        .expect("[[case]] tables");
    assert!(cases.len() >= 60, "corpus: {} cases", cases.len());
    let mut wrong = Vec::new();
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let path = corpus().join(file);
        let header = std::fs::read_to_string(if path.is_dir() {
            std::fs::read_dir(&path)
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
        } else {
            path.clone()
        })
        .unwrap();
        assert!(
            header.starts_with("#| source: https://github.com/")
                || header.starts_with("#| source: device run, NCCL 2.28")
                || header.starts_with("#| source: device run, NCCL 2.29")
                || header.starts_with("#| source: device run, NCCL 2.32")
                || header.starts_with("#| source: real kubectl")
                || header.starts_with("#| source: real UCX 1.22")
                || header.starts_with("#| source: real NIXL 1.5"),
            "{file}: the header must name the source"
        );
        let e = explain(&path);
        let mut diffs = Vec::new();
        for (key, got) in verdict(&e) {
            let want = match &case[key] {
                toml_edit::Item::Value(toml_edit::Value::Integer(i)) => i.value().to_string(),
                item => item
                    .as_str()
                    .unwrap_or_else(|| panic!("{file}: no `{key}`"))
                    .to_string(),
            };
            if got != want {
                diffs.push(format!("{key}: want {want}, got {got}"));
            }
        }
        // TOML reads `0` as an integer
        let float = |key: &str| {
            let item = case.get(key)?;
            item.as_float().or(item.as_integer().map(|i| i as f64))
        };
        if let Some(want) = float("busbw_peak") {
            let got = e.bandwidth.as_ref().map(|b| b.peak_busbw);
            if got.is_none_or(|g| (g - want).abs() > 0.005) {
                diffs.push(format!("busbw_peak: want {want}, got {got:?}"));
            }
        } else if e.bandwidth.as_ref().is_some_and(|b| b.rows > 0) {
            diffs.push("busbw_peak: the manifest states none, but roce read a table".to_string());
        }
        // the Inspector plugin's records: the highest bus bandwidth over its collectives
        let inspector = e
            .inspector
            .iter()
            .map(|c| c.peak_busbw_gbs)
            .reduce(f64::max);
        match (float("inspector_peak"), inspector) {
            (Some(want), got) if got.is_none_or(|g| (g - want).abs() > 0.00001) => {
                diffs.push(format!("inspector_peak: want {want}, got {got:?}"));
            }
            (None, Some(got)) => diffs.push(format!(
                "inspector_peak: the manifest states none, but roce read Inspector records ({got})"
            )),
            _ => {}
        }
        // with a profile: the expectation `roce explain --profile` derives and whether the result is low
        if let Some(name) = case.get("profile").and_then(toml_edit::Item::as_str) {
            let source =
                roce_model::builtin::source(name).unwrap_or_else(|| panic!("{file}: {name}"));
            let profile = roce_model::load(source, &roce_model::BuiltinsOnly)
                .profile
                .unwrap();
            let mut with = e.clone();
            with.compare_profile(&profile);
            with.expect_busbw(None, Some(&profile));
            let expected = with
                .bandwidth
                .as_ref()
                .and_then(|b| b.expected.as_ref())
                .map(|x| x.busbw);
            if expected != float("expected_busbw") {
                diffs.push(format!(
                    "expected_busbw: want {:?}, got {expected:?}",
                    float("expected_busbw")
                ));
            }
            let low = with
                .codes()
                .iter()
                .any(|c| c.as_str() == "roce::explain::bandwidth_low");
            if Some(low) != case.get("bandwidth_low").and_then(toml_edit::Item::as_bool) {
                diffs.push(format!("bandwidth_low: got {low}"));
            }
        }
        if !diffs.is_empty() {
            let codes: Vec<&str> = e.findings.iter().map(|f| f.code.as_str()).collect();
            wrong.push(format!("{file}: {} (findings {codes:?})", diffs.join("; ")));
        }
    }
    println!(
        "explain corpus: {}/{} excerpts get their verdict",
        cases.len() - wrong.len(),
        cases.len()
    );
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

/// Files read in parallel and folded ([`Explainer::merge`], what `roce explain DIR` does) explain exactly as
/// the same files read one after another: every pair of consecutive corpus excerpts, and the per-rank files.
#[test]
fn merging_per_file_explainers_is_reading_them_in_order() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    let mut ranks: Vec<PathBuf> = std::fs::read_dir(corpus().join("dev-1gpu2h-debug-file"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ranks.sort();
    let mut groups: Vec<Vec<PathBuf>> = files.windows(2).map(<[PathBuf]>::to_vec).collect();
    groups.push(ranks);
    for g in groups {
        let read = |x: &mut Explainer, f: &Path| {
            x.start_file(&f.file_name().unwrap().to_string_lossy());
            x.read(&body(f)[..]).unwrap();
        };
        let mut seq = Explainer::new();
        for f in &g {
            read(&mut seq, f);
        }
        let mut parts = g.iter().map(|f| {
            let mut x = Explainer::new();
            read(&mut x, f);
            x
        });
        let mut merged = parts.next().unwrap();
        for p in parts {
            merged.merge(p);
        }
        assert_eq!(merged.finish(), seq.finish(), "{g:?}");
    }
}
