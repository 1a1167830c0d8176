//! `Linter` throughput on a generated tree of 10,000 manifests (`ROCE_BENCH_FILES`), written to a temporary
//! directory and read into memory at bench time, compared with a plain YAML parse of the same texts. (The
//! whole command, with its directory walk and file reads, is `bench/run`'s.)
//!
//! The tree mixes every supported kind (the fixtures under `tests/fixtures/manifests/kinds/`, renamed per
//! file), half as written and half after `roce apply`, in 100 directories. The baseline parses every
//! document with serde-saphyr into a `serde_json::Value` — no spans, no checks — on one thread. Lint runs on
//! a rayon pool of threads with the reader's stack, as the CLI's.
//!
//! `cargo bench -p roce-inspect --bench lint` first prints one comparison (best of three runs each, page
//! cache warm): MB/s of the plain parse and of `roce lint` on one thread and on every CPU, and the ratios;
//! then divan's statistics. Under `cargo test --benches` the tree has 200 files.

use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use roce_inspect::lint::{LintOptions, Linter};
use roce_model::plumbing::manifest::STACK_BYTES;
use roce_model::{BuiltinsOnly, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply};

fn main() {
    let (files, bytes) = tree();
    let mb = *bytes as f64 / 1e6;
    let linter = linter();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (parse_t, docs) = best(|| plain_parse(files));
    let (one_t, found) = best(|| lint(&linter, files, 1));
    let (all_t, _) = best(|| lint(&linter, files, 0));
    println!(
        "lint bench: {} files, {mb:.1} MB, {docs} documents, {found} problems",
        files.len()
    );
    let rate = |t: Duration| mb / t.as_secs_f64();
    println!(
        "  plain YAML parse (1 thread):  {:>7.1} MB/s ({:.2} s)",
        rate(parse_t),
        parse_t.as_secs_f64()
    );
    println!(
        "  roce lint (1 thread):         {:>7.1} MB/s ({:.2} s)",
        rate(one_t),
        one_t.as_secs_f64()
    );
    println!(
        "  roce lint ({cpus} threads):        {:>7.1} MB/s ({:.2} s)",
        rate(all_t),
        all_t.as_secs_f64()
    );
    println!(
        "  ratio lint/parse time: {:.2}x on one thread, {:.2}x with {cpus} threads",
        one_t.as_secs_f64() / parse_t.as_secs_f64(),
        all_t.as_secs_f64() / parse_t.as_secs_f64()
    );
    divan::main();
}

fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.unwrap_or_else(|| unreachable!()))
}

fn linter() -> Linter {
    let profile = load(
        builtin::source("coreweave/gb300-roce").unwrap(),
        &BuiltinsOnly,
    )
    .profile
    .unwrap();
    Linter::new(&profile, LintOptions::default())
}

/// Lint every text on `jobs` threads (0: one per CPU); returns the number of problems.
fn lint(linter: &Linter, files: &[(String, String)], jobs: usize) -> usize {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(STACK_BYTES)
        .build()
        .unwrap();
    pool.install(|| {
        files
            .par_iter()
            .map(|(name, text)| {
                let report = linter.lint_here(Source::new(name.as_str(), text.as_str()));
                report.problems.len()
            })
            .sum()
    })
}

/// Parse every text without spans or checks; returns the number of documents.
fn plain_parse(files: &[(String, String)]) -> usize {
    files
        .iter()
        .map(|(_, text)| {
            let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).unwrap();
            divan::black_box(docs).len()
        })
        .sum()
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn lint_one_thread(bencher: divan::Bencher) {
    let (files, bytes) = tree();
    let linter = linter();
    bencher
        .counter(divan::counter::BytesCount::new(*bytes))
        .bench(|| lint(&linter, files, 1));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn lint_all_threads(bencher: divan::Bencher) {
    let (files, bytes) = tree();
    let linter = linter();
    bencher
        .counter(divan::counter::BytesCount::new(*bytes))
        .bench(|| lint(&linter, files, 0));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn plain_yaml_parse(bencher: divan::Bencher) {
    let (files, bytes) = tree();
    bencher
        .counter(divan::counter::BytesCount::new(*bytes))
        .bench(|| plain_parse(files));
}

/// Each generated file's name and text.
type Files = Vec<(String, String)>;

/// The generated tree: its files and their total size, built once per run.
fn tree() -> &'static (Files, u64) {
    static TREE: OnceLock<(tempfile::TempDir, (Files, u64))> = OnceLock::new();
    &TREE
        .get_or_init(|| {
            // `cargo bench` passes `--bench`; `cargo test --benches` does not.
            let testing = !std::env::args().any(|a| a == "--bench");
            let count: usize = std::env::var("ROCE_BENCH_FILES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(if testing { 200 } else { 10_000 });
            let dir = tempfile::tempdir().unwrap();
            generate(dir.path(), count);
            let mut paths = Vec::new();
            for sub in std::fs::read_dir(dir.path()).unwrap() {
                for file in std::fs::read_dir(sub.unwrap().path()).unwrap() {
                    paths.push(file.unwrap().path());
                }
            }
            paths.sort();
            assert_eq!(paths.len(), count);
            let files: Vec<(String, String)> = paths
                .iter()
                .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
                .collect();
            let bytes = files.iter().map(|(_, t)| t.len() as u64).sum();
            (dir, (files, bytes))
        })
        .1
}

/// `count` manifests in 100 directories: each kind fixture in turn, with its names made unique, every
/// other one wired by `roce apply`.
fn generate(root: &Path, count: usize) {
    let kinds = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifests/kinds");
    let mut sources: Vec<(String, String)> = std::fs::read_dir(kinds)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    sources.sort();
    let profile = load(
        builtin::source("coreweave/gb300-roce").unwrap(),
        &BuiltinsOnly,
    )
    .profile
    .unwrap();
    let plan = roce_render::plan::lower(&profile);
    let wired: Vec<String> = sources
        .iter()
        .map(|(_, text)| {
            let container = text
                .lines()
                .find_map(|l| l.strip_prefix("# apply: --container "))
                .map(str::to_string);
            let opts = ApplyOptions {
                container,
                ..ApplyOptions::default()
            };
            apply(&Source::new("x.yaml", text.as_str()), &plan, &opts)
                .unwrap()
                .text
        })
        .collect();
    for i in 0..count {
        let k = i % sources.len();
        let (stem, raw) = &sources[k];
        let text = if (i / sources.len()).is_multiple_of(2) {
            raw
        } else {
            &wired[k]
        };
        let text = text.replacen("  name: ", &format!("  name: n{i}-"), 1);
        let dir = root.join(format!("team-{:02}", i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{i:05}-{stem}.yaml")), text).unwrap();
    }
}
