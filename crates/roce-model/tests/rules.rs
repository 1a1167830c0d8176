//! The rule catalogue, tested through its fixtures.
//!
//! `tests/fixtures/rules/<code>/` holds, for every [`Code`] (`roce::multus::missing_nad` →
//! `multus.missing_nad`), at least one `bad*` profile that fires the code and one `good*` profile — the
//! minimal fix — that does not. The directories are discovered, never listed here: adding a code means
//! adding its directory. Other files in a directory are helpers a fixture reaches through `extends`.
//!
//! Fixture conventions:
//! - the first line is a comment (`// …` in KDL, `# …` in YAML) saying what the fixture shows;
//! - the directory's `bad.kdl` / `bad.yaml` carries `why:` comment lines: the paragraph `docs/rules.md`
//!   gives for the code;
//! - a `pad-to: N` comment line makes the test append comment lines until the text is longer than N
//!   bytes, so a >10 MB input is generated here rather than committed;
//! - bytes that are not UTF-8 are decoded the way the CLI does it, through [`roce_model::load::not_text`].
//!
//! Every bad fixture's rendered diagnostics are snapshotted under `snapshots/diagnostics/`, and
//! `docs/rules.md` is generated from the fixtures (`ROCE_BLESS=1` rewrites it; otherwise it is compared).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Component, Path, PathBuf};

use miette::{GraphicalReportHandler, GraphicalTheme};
use roce_model::{BuiltinsOnly, Code, Problem, Resolve, Severity, Source, builtin, load};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

/// `roce::multus::missing_nad` → `multus.missing_nad`.
fn dir_name(code: Code) -> String {
    code.as_str()
        .strip_prefix("roce::")
        .expect("codes start with roce::")
        .replace("::", ".")
}

fn code_of_dir(dir: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| dir_name(*c) == dir)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bad,
    Good,
    Helper,
}

/// One fixture file.
#[derive(Debug)]
struct Fixture {
    /// The code directory, e.g. `multus.missing_nad`.
    dir: String,
    /// The file name, e.g. `bad.kdl`.
    file: String,
    bytes: Vec<u8>,
}

impl Fixture {
    /// Source name: `<dir>/<file>`, stable across machines.
    fn name(&self) -> String {
        format!("{}/{}", self.dir, self.file)
    }

    fn stem(&self) -> &str {
        self.file.rsplit_once('.').map_or(&self.file, |(s, _)| s)
    }

    fn is_yaml(&self) -> bool {
        self.file.ends_with(".yaml") || self.file.ends_with(".yml")
    }

    fn kind(&self) -> Kind {
        if self.stem() == "bad" || self.stem().starts_with("bad-") {
            Kind::Bad
        } else if self.stem() == "good" || self.stem().starts_with("good-") {
            Kind::Good
        } else {
            Kind::Helper
        }
    }

    /// The primary bad fixture of its directory (`bad.kdl` / `bad.yaml`).
    fn is_primary(&self) -> bool {
        self.stem() == "bad"
    }

    fn comment(&self) -> &'static str {
        if self.is_yaml() { "#" } else { "//" }
    }

    /// The text as committed (lossy for non-UTF-8 fixtures).
    fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The first line, without its comment marker.
    fn title(&self) -> String {
        let text = self.raw_text();
        let first = text.lines().next().unwrap_or_default();
        first
            .strip_prefix(self.comment())
            .unwrap_or(first)
            .trim()
            .to_string()
    }

    /// The `why:` paragraph (every `why:` comment line, joined).
    fn why(&self) -> Option<String> {
        let marker = format!("{} why:", self.comment());
        let mut lines = Vec::new();
        let text = self.raw_text();
        let mut in_why = false;
        for line in text.lines() {
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix(&marker) {
                in_why = true;
                lines.push(rest.trim().to_string());
            } else if in_why
                && let Some(rest) = t.strip_prefix(self.comment())
                && rest.starts_with("  ")
            {
                lines.push(rest.trim().to_string());
            } else {
                in_why = false;
            }
        }
        (!lines.is_empty()).then(|| lines.join(" "))
    }

    /// The fixture as the docs show it: without the `why:` paragraph, non-UTF-8 bytes escaped.
    fn doc_text(&self) -> String {
        let marker = format!("{} why:", self.comment());
        let mut out = String::new();
        let mut in_why = false;
        for line in escape_bytes(&self.bytes).lines() {
            let t = line.trim_start();
            if t.starts_with(&marker) {
                in_why = true;
                continue;
            }
            if in_why
                && let Some(rest) = t.strip_prefix(self.comment())
                && rest.starts_with("  ")
            {
                continue;
            }
            in_why = false;
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The `pad-to: N` directive, if any.
    fn pad_to(&self) -> Option<usize> {
        let marker = format!("{} pad-to:", self.comment());
        self.raw_text().lines().find_map(|l| {
            l.trim()
                .strip_prefix(&marker)
                .map(|n| n.trim().parse().expect("pad-to: takes a byte count"))
        })
    }

    /// Load the fixture like the CLI would: bytes that are not UTF-8 become one `roce::syntax` problem.
    fn load(&self) -> Vec<Problem> {
        let text = match std::str::from_utf8(&self.bytes) {
            Ok(text) => text.to_string(),
            Err(_) => {
                let (_, problem) = roce_model::load::not_text(&self.name(), &self.bytes);
                return vec![problem];
            }
        };
        let text = match self.pad_to() {
            Some(n) => pad(text, n, self.comment()),
            None => text,
        };
        load(Source::new(self.name(), text), &FixtureFiles).problems
    }
}

/// Append comment lines until `text` is longer than `bytes`.
fn pad(mut text: String, bytes: usize, comment: &str) -> String {
    let line = format!("{comment} {}\n", "padding ".repeat(12));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.reserve(bytes + line.len() - text.len().min(bytes));
    while text.len() <= bytes {
        text.push_str(&line);
    }
    text
}

/// UTF-8 text as is; every byte of an invalid sequence as `\xNN`.
fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            write!(out, "\\x{b:02X}").unwrap();
        }
    }
    out
}

/// Resolves `extends` references to files next to the fixture that names them.
#[derive(Debug)]
struct FixtureFiles;

impl Resolve for FixtureFiles {
    fn resolve(&self, reference: &str, from: &Source) -> Result<Source, String> {
        if from.name.starts_with("builtin:") {
            return Err(format!("`{reference}` is not a built-in profile"));
        }
        let base = Path::new(&from.name).parent().unwrap_or(Path::new(""));
        let mut name = PathBuf::new();
        for part in base.join(reference).components() {
            match part {
                Component::Normal(p) => name.push(p),
                Component::ParentDir => {
                    name.pop();
                }
                _ => {}
            }
        }
        let name = name.to_string_lossy().replace('\\', "/");
        let path = fixtures_root().join(&name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Source::new(name, text)),
            Err(_) => Err(format!("no file `{name}`")),
        }
    }
}

/// Every fixture directory with its files, sorted.
fn discover() -> BTreeMap<String, Vec<Fixture>> {
    let mut out = BTreeMap::new();
    for dir in std::fs::read_dir(fixtures_root()).expect("tests/fixtures/rules exists") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let dir_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                files.push(Fixture {
                    dir: dir_name.clone(),
                    file: f.file_name().unwrap().to_string_lossy().into_owned(),
                    bytes: std::fs::read(&f).unwrap(),
                });
            }
        }
        // The primary bad fixture first, then the other bad ones, then good ones, then helpers.
        files.sort_by_key(|f| (f.kind() as u8, !f.is_primary(), f.file.clone()));
        out.insert(dir_name, files);
    }
    out
}

fn render(problems: &[Problem]) -> String {
    let handler =
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(80);
    let mut out = String::new();
    for p in problems {
        let mut one = String::new();
        handler.render_report(&mut one, p).unwrap();
        for line in one.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

fn summary(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {} {}: {}", p.severity.as_str(), p.code, p.message))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_code_has_a_bad_and_a_good_fixture() {
    let dirs = discover();
    let mut errors = Vec::new();
    for code in Code::ALL {
        let dir = dir_name(*code);
        let Some(files) = dirs.get(&dir) else {
            errors.push(format!("{code}: no directory tests/fixtures/rules/{dir}/"));
            continue;
        };
        if !files.iter().any(|f| f.kind() == Kind::Bad && f.is_primary()) {
            errors.push(format!("{dir}: no bad.kdl or bad.yaml"));
        }
        if !files.iter().any(|f| f.kind() == Kind::Good) {
            errors.push(format!("{dir}: no good.kdl or good.yaml"));
        }
        if files.iter().filter(|f| f.is_primary()).count() > 1 {
            errors.push(format!("{dir}: more than one primary bad fixture"));
        }
    }
    for (dir, files) in &dirs {
        if code_of_dir(dir).is_none() {
            errors.push(format!("{dir}: no code has this directory (orphan)"));
        }
        let mut stems: Vec<&str> = files.iter().map(Fixture::stem).collect();
        stems.sort_unstable();
        if stems.windows(2).any(|w| w[0] == w[1]) {
            errors.push(format!("{dir}: two fixtures share a stem (snapshot names clash)"));
        }
        for f in files {
            let head = escape_bytes(&f.bytes);
            if !head.starts_with(&format!("{} ", f.comment())) {
                errors.push(format!(
                    "{}: must start with a `{} …` line saying what it shows",
                    f.name(),
                    f.comment()
                ));
            }
            if f.is_primary() && f.why().is_none() {
                errors.push(format!("{}: needs `{} why: …` lines for docs/rules.md", f.name(), f.comment()));
            }
        }
    }
    assert!(errors.is_empty(), "fixture layout:\n{}", errors.join("\n"));
}

#[test]
fn bad_fixtures_fire_their_code_and_good_ones_do_not() {
    let mut errors = Vec::new();
    let mut counts = BTreeMap::new();
    for (dir, files) in discover() {
        let Some(code) = code_of_dir(&dir) else { continue };
        for f in &files {
            let kind = f.kind();
            if kind == Kind::Helper {
                continue;
            }
            *counts
                .entry((kind == Kind::Bad, f.is_yaml()))
                .or_insert(0usize) += 1;
            let problems = f.load();
            let fired: Vec<&Problem> = problems.iter().filter(|p| p.code == code).collect();
            match kind {
                Kind::Bad if fired.is_empty() => errors.push(format!(
                    "{} does not fire {code}; it reports:\n{}",
                    f.name(),
                    summary(&problems)
                )),
                Kind::Bad => {
                    for p in fired {
                        if p.primary().is_none() {
                            errors.push(format!("{}: {code} has no primary label", f.name()));
                        }
                        if p.help.as_deref().is_none_or(str::is_empty) {
                            errors.push(format!("{}: {code} has no help", f.name()));
                        }
                    }
                }
                Kind::Good if !fired.is_empty() => errors.push(format!(
                    "{} fires {code}:\n{}",
                    f.name(),
                    summary(&problems)
                )),
                _ => {}
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
    let kdl = counts.get(&(true, false)).copied().unwrap_or(0);
    let yaml = counts.get(&(true, true)).copied().unwrap_or(0);
    assert!(kdl > 0 && yaml >= 10, "bad fixtures: {kdl} KDL, {yaml} YAML");
}

#[test]
fn diagnostics_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/diagnostics");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (dir, files) in discover() {
        for f in files.iter().filter(|f| f.kind() == Kind::Bad) {
            let rendered = render(&f.load());
            let mut s = settings.clone();
            s.set_input_file(fixtures_root().join(&dir).join(&f.file));
            s.set_description(f.title());
            s.bind(|| {
                insta::assert_snapshot!(format!("{dir}__{}", f.stem()), rendered);
            });
        }
    }
}

/// The issue's acceptance case: 13 of 16 NADs listed explicitly.
#[test]
fn missing_nad_names_the_missing_nads_at_the_multus_line() {
    let dir = dir_name(Code::MissingNad);
    let files = discover().remove(&dir).unwrap();
    let f = files.iter().find(|f| f.file == "bad.kdl").unwrap();
    let text = f.raw_text();
    let listed = text.matches("-macvlan\"").count() - usize::from(text.contains("name=\"{host-port}-macvlan\""));
    assert_eq!(listed, 13, "the fixture lists 13 of the 16 NADs");
    let multus_line = text
        .lines()
        .position(|l| l.trim_start().starts_with("multus "))
        .expect("a multus line")
        + 1;

    let problems = f.load();
    let p = problems
        .iter()
        .find(|p| p.code == Code::MissingNad)
        .unwrap_or_else(|| panic!("no missing_nad:\n{}", summary(&problems)));
    assert!(p.is_error());
    let missing = ["ibs1p3-macvlan", "ibs2p3-macvlan", "ibs3p3-macvlan"];
    for nad in missing {
        assert!(p.message.contains(nad), "{nad} not named in: {}", p.message);
    }
    assert!(p.message.contains("13 of 16"), "{}", p.message);
    let at = p.location().expect("resolved");
    assert_eq!(at.file, f.name(), "points into the profile, not the built-in");
    assert_eq!(at.line, multus_line, "points at the multus line");
    // Nothing else is wrong with the profile.
    assert_eq!(problems.len(), 1, "{}", summary(&problems));
}

/// Inputs no profile should be: each must give at least one error, and none may panic.
fn garbage() -> Vec<(String, Vec<u8>)> {
    let gb300 = builtin::source("coreweave/gb300-roce").unwrap();
    let kdl = gb300.text.to_string();
    let yaml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/coreweave/gb300-roce.yaml"),
    )
    .unwrap();
    let big = |head: &str, comment: &str| pad(head.to_string(), 10 * 1024 * 1024 + 1, comment);
    let mut out: Vec<(String, Vec<u8>)> = vec![
        ("empty.kdl".into(), Vec::new()),
        ("empty.yaml".into(), Vec::new()),
        ("blank.kdl".into(), b"\n  \n\t\n".to_vec()),
        ("blank.yaml".into(), b"\n  \n".to_vec()),
        ("binary.kdl".into(), b"\x7fELF\x02\x01\x01\0\0\0\xff\xfe\xfd\x80\x81".to_vec()),
        ("binary.yaml".into(), b"name: \xc3\x28\n\xa0\xa1".to_vec()),
        ("nul.kdl".into(), b"profile \"a\0b\" {\0}".to_vec()),
        ("nul.yaml".into(), b"name: \0\n".to_vec()),
        ("truncated.kdl".into(), kdl.as_bytes()[..kdl.len() / 2].to_vec()),
        ("truncated.yaml".into(), yaml.as_bytes()[..yaml.len() / 2 + 3].to_vec()),
        ("huge.kdl".into(), big(&kdl, "//").into_bytes()),
        ("huge.yaml".into(), big(&yaml, "#").into_bytes()),
        (
            "deep.kdl".into(),
            format!("profile \"x\" {{ {}{} }}", "a { ".repeat(10_000), "}".repeat(10_000)).into_bytes(),
        ),
        (
            "deep-flow.yaml".into(),
            format!("name: x\nenv: {}{}\n", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
        ),
        (
            "deep-block.yaml".into(),
            {
                let mut s = String::from("name: x\nenv:\n");
                for i in 1..200 {
                    writeln!(s, "{}a{i}:", " ".repeat(i)).unwrap();
                }
                s.into_bytes()
            },
        ),
        (
            "deep-seq.yaml".into(),
            format!("name: x\nenv:\n{}\n", (0..200).map(|i| format!("{}- ", " ".repeat(i * 2))).collect::<Vec<_>>().join("\n")).into_bytes(),
        ),
        ("top-level-typo.kdl".into(), b"fabirc roce\nprofile \"x\" extends=\"coreweave/gb300-roce\" { fabirc roce }".to_vec()),
        ("top-level-typo.yaml".into(), b"name: x\nextends: coreweave/gb300-roce\nfabirc: roce\n".to_vec()),
        ("not-a-map.yaml".into(), b"- a\n- b\n".to_vec()),
        ("scalar.yaml".into(), b"just a string\n".to_vec()),
        ("not-a-profile.kdl".into(), b"fabric roce\n".to_vec()),
        ("json.yaml".into(), br#"{"name": 1, "fabric": [[]], "rails": {"nics": -1}}"#.to_vec()),
        ("anchors.yaml".into(), b"a: &x [*x]\n".to_vec()),
        ("tabs.yaml".into(), b"name: x\n\tfabric: roce\n".to_vec()),
        ("crlf.kdl".into(), b"profile \"x\" {\r\n fabric roce\r\n".to_vec()),
        ("bom.kdl".into(), b"\xef\xbb\xbfprofile".to_vec()),
        ("huge-int.kdl".into(), b"profile \"x\" extends=\"coreweave/gb300-roce\" { node-pool gpus-per-node=99999999999999999999999999999999999999999 }".to_vec()),
        ("huge-int.yaml".into(), b"name: x\nextends: coreweave/gb300-roce\nnode-pool: {gpus-per-node: 99999999999999999999999999999999999999999999}\n".to_vec()),
        ("self-extends.kdl".into(), b"profile \"x\" extends=\"self-extends.kdl\" {}".to_vec()),
    ];
    // Deterministic noise.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for n in 0..32 {
        let len = 1 + (n * 37) % 400;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect();
        let ext = if n % 2 == 0 { "kdl" } else { "yaml" };
        out.push((format!("noise-{n}.{ext}"), bytes));
    }
    out
}

/// Loads bytes like the CLI: `not_text` for non-UTF-8, otherwise `load` with files resolved next to it.
fn load_bytes(name: &str, bytes: &[u8]) -> Vec<Problem> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load(Source::new(name, text.to_string()), &BuiltinsOnly).problems,
        Err(_) => vec![roce_model::load::not_text(name, bytes).1],
    }
}

#[test]
fn garbage_gives_coded_errors_and_never_panics() {
    let mut errors = Vec::new();
    for (name, bytes) in garbage() {
        match catch_unwind(AssertUnwindSafe(|| load_bytes(&name, &bytes))) {
            Err(_) => errors.push(format!("{name}: panicked")),
            Ok(problems) => {
                if !problems.iter().any(|p| p.severity == Severity::Error) {
                    errors.push(format!("{name}: no error:\n{}", summary(&problems)));
                }
                for p in &problems {
                    if p.primary().is_none() || p.location().is_none() {
                        errors.push(format!("{name}: {} has no place", p.code));
                    }
                    // Every problem renders (spans inside the source, on char boundaries).
                    if catch_unwind(AssertUnwindSafe(|| render(std::slice::from_ref(p)))).is_err() {
                        errors.push(format!("{name}: {} does not render", p.code));
                    }
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn truncated_builtins_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/coreweave");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for cut in (0..text.len()).step_by(13).filter(|c| text.is_char_boundary(*c)) {
            let prefix = &text[..cut];
            let result = catch_unwind(AssertUnwindSafe(|| {
                let problems = load(Source::new(name.clone(), prefix.to_string()), &BuiltinsOnly).problems;
                render(&problems)
            }));
            assert!(result.is_ok(), "{name} cut at byte {cut} panicked");
        }
    }
}

fn fence(f: &Fixture) -> &'static str {
    if f.is_yaml() { "yaml" } else { "kdl" }
}

/// `docs/rules.md`, generated from the fixtures.
fn rules_doc() -> String {
    let dirs = discover();
    let mut md = String::new();
    md.push_str(
        "# Rule catalogue\n\n\
         <!-- Generated from crates/roce-model/tests/fixtures/rules by crates/roce-model/tests/rules.rs.\n     \
         Do not edit: change the fixtures, then run `ROCE_BLESS=1 cargo test -p roce-model --test rules`. -->\n\n\
         Every diagnostic roce reports has a stable code. This page lists each one with its severity, why it\n\
         matters, a profile that triggers it, what roce says about that profile, and the corrected profile.\n\
         The examples are the rule's tests (`crates/roce-model/tests/fixtures/rules/<code>/`); most extend a\n\
         built-in profile so they show only what differs. Errors fail `roce check`; warnings do not.\n\n\
         Facts cited as *fabric-facts* and *nccl-ucx-facts* are from the project's reference notes\n\
         (`fabric-facts.md`: CoreWeave InfiniBand and RoCE fabrics; `nccl-ucx-facts.md`: how NCCL and UCX read\n\
         their settings).\n\n",
    );
    md.push_str("| Code | Severity | Example |\n|---|---|---|\n");
    for code in Code::ALL {
        let dir = dir_name(*code);
        let title = dirs
            .get(&dir)
            .and_then(|f| f.iter().find(|f| f.is_primary()))
            .map(Fixture::title)
            .unwrap_or_default();
        let anchor = code.as_str().replace("::", "");
        writeln!(
            md,
            "| [`{code}`](#{anchor}) | {} | {} |",
            code.severity().as_str(),
            title.replace('|', "\\|")
        )
        .unwrap();
    }
    for code in Code::ALL {
        let dir = dir_name(*code);
        let Some(files) = dirs.get(&dir) else { continue };
        let primary = files.iter().find(|f| f.is_primary());
        writeln!(md, "\n## {code}\n").unwrap();
        let sev = match code.severity() {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        writeln!(md, "**{sev}.** {}\n", primary.and_then(Fixture::why).unwrap_or_default()).unwrap();
        for f in files {
            let label = match f.kind() {
                Kind::Bad => "Bad",
                Kind::Good => "Good",
                Kind::Helper => "Helper, reached through `extends`",
            };
            writeln!(
                md,
                "{label} — `{}`: {}\n",
                f.file,
                f.title()
            )
            .unwrap();
            writeln!(md, "```{}\n{}```\n", fence(f), f.doc_text()).unwrap();
            if f.kind() == Kind::Bad {
                let problems: Vec<Problem> =
                    f.load().into_iter().filter(|p| p.code == *code).collect();
                writeln!(md, "roce reports:\n\n```text\n{}```\n", render(&problems)).unwrap();
            }
        }
    }
    let mut out = String::new();
    for line in md.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[test]
fn rules_doc_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules.md");
    let want = rules_doc();
    if std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(have.lines().count().min(want.lines().count()) + 1, |i| i + 1);
        panic!(
            "docs/rules.md is stale (first difference at line {line}); regenerate it with\n  \
             ROCE_BLESS=1 cargo test -p roce-model --test rules rules_doc_is_current"
        );
    }
}
