//! `roce lint` over fixture manifests (`tests/fixtures/manifests/`):
//!
//! * `kinds/`: one unwired workload per supported kind. Applying any built-in profile (every MPI role) and
//!   linting the result must give no finding at all; linting them as they are must find the gaps.
//! * `broken/`: deliberately wrong manifests. Each says in its header which codes it must produce at which
//!   lines (`# expect: CODE LINE`), and nothing else may be reported.
//! * `good/`: manifests written differently from what `roce apply` writes but equivalent: no finding.
//!
//! A fixture header may also hold `# lint: --profile NAME --container NAME` and `# apply: --container NAME`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use roce_inspect::lint::{FileReport, LintOptions, Linter};
use roce_model::{BuiltinsOnly, Code, Domain, Problem, Profile, Source, builtin, load};
use roce_render::apply::{ApplyOptions, RoleChoice, apply};

const DEFAULT_PROFILE: &str = "coreweave/gb300-roce";

fn fixtures(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifests")
        .join(sub)
}

fn files(sub: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no fixtures in {sub}");
    out
}

/// A built-in by name, or a profile file by its path from the repository root (`….kdl`).
fn profile(name: &str) -> Profile {
    let source = match builtin::source(name) {
        Some(s) => s,
        None => {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(name);
            Source::new(
                name,
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}")),
            )
        }
    };
    let loaded = load(source, &BuiltinsOnly);
    loaded
        .profile
        .unwrap_or_else(|| panic!("{name}: {:?}", loaded.problems))
}

/// What a fixture's header asks for.
#[derive(Debug, Default)]
struct Header {
    profile: Option<String>,
    lint_container: Option<String>,
    apply_container: Option<String>,
    expect: Vec<(String, usize)>,
}

fn header(text: &str) -> Header {
    let mut h = Header::default();
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        if let Some(rest) = line.strip_prefix("# expect: ") {
            let (code, line) = rest.rsplit_once(' ').unwrap();
            h.expect.push((code.to_string(), line.parse().unwrap()));
        }
        for (prefix, apply) in [("# lint: ", false), ("# apply: ", true)] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let words: Vec<&str> = rest.split_whitespace().collect();
                for pair in words.chunks(2) {
                    match (pair[0], apply) {
                        ("--profile", _) => h.profile = Some(pair[1].to_string()),
                        ("--container", false) => h.lint_container = Some(pair[1].to_string()),
                        ("--container", true) => h.apply_container = Some(pair[1].to_string()),
                        (other, _) => panic!("unknown header option {other}"),
                    }
                }
            }
        }
    }
    h
}

fn linter(profile_name: &str, container: Option<String>) -> Linter {
    if profile_name == "none" {
        return Linter::without_profile(LintOptions {
            container,
            profile_arg: None,
        });
    }
    Linter::new(
        &profile(profile_name),
        LintOptions {
            container,
            profile_arg: None,
        },
    )
}

fn lint_path(path: &Path) -> (Header, FileReport) {
    let text = std::fs::read_to_string(path).unwrap();
    let h = header(&text);
    let l = linter(
        h.profile.as_deref().unwrap_or(DEFAULT_PROFILE),
        h.lint_container.clone(),
    );
    let report = l.lint(Source::new(file_name(path), text));
    (h, report)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// The errors and warnings (an info only says the manifest differs from the profile in a way that works).
fn counted(report: &FileReport) -> Vec<&Problem> {
    report
        .problems
        .iter()
        .filter(|p| p.severity != roce_model::Severity::Info)
        .collect()
}

/// `code line` for each problem.
fn found(report: &FileReport) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = report
        .problems
        .iter()
        .map(|p| {
            (
                p.code.as_str().to_string(),
                p.location().map_or(0, |l| l.line),
            )
        })
        .collect();
    out.sort();
    out
}

fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            let loc = p
                .location()
                .map(|l| format!("{}:{}", l.line, l.column))
                .unwrap_or_default();
            format!("  {} {loc} {}\n", p.code, p.message)
        })
        .collect()
}

#[test]
fn broken_fixtures_report_the_expected_codes_at_the_expected_lines() {
    for path in files("broken") {
        let (h, report) = lint_path(&path);
        let mut want = h.expect.clone();
        want.sort();
        assert!(!want.is_empty(), "{}: no `# expect:` lines", path.display());
        assert_eq!(
            found(&report),
            want,
            "{}:\n{}",
            path.display(),
            describe(&report.problems)
        );
        assert_eq!(
            report.has_errors(),
            report.problems.iter().any(Problem::is_error),
            "has_errors agrees with the problems"
        );
        for p in &report.problems {
            let help = p.help.as_deref().unwrap_or("");
            assert!(
                !help.is_empty(),
                "{}: {} has no help",
                path.display(),
                p.code
            );
            assert!(
                p.location().is_some(),
                "{}: {} has no location",
                path.display(),
                p.code
            );
        }
    }
}

#[test]
fn good_fixtures_are_clean() {
    for path in files("good") {
        let (_, report) = lint_path(&path);
        assert!(
            counted(&report).is_empty(),
            "{}:\n{}",
            path.display(),
            describe(&report.problems)
        );
    }
}

#[test]
fn every_lint_code_is_exercised_by_a_broken_fixture() {
    let mut seen = BTreeSet::new();
    for path in files("broken") {
        seen.extend(
            header(&std::fs::read_to_string(&path).unwrap())
                .expect
                .into_iter()
                .map(|(c, _)| c),
        );
    }
    for code in Code::ALL.iter().filter(|c| c.domain() == Domain::Manifest) {
        assert!(
            seen.contains(code.as_str()),
            "no broken fixture expects {code}"
        );
    }
}

/// Apply `profile_name` to a kind fixture, as the fixture's header says.
fn applied(
    path: &Path,
    profile_name: &str,
    role: RoleChoice,
) -> (Header, roce_render::apply::Applied) {
    let text = std::fs::read_to_string(path).unwrap();
    let h = header(&text);
    let plan = roce_render::plan::lower(&profile(profile_name));
    let opts = ApplyOptions {
        container: h.apply_container.clone(),
        role,
    };
    let out = apply(&Source::new(file_name(path), text), &plan, &opts)
        .unwrap_or_else(|p| panic!("{}: {}", path.display(), describe(&p)));
    (h, out)
}

#[test]
fn apply_then_lint_is_clean_for_every_kind_profile_and_role() {
    let mut checked = 0;
    for path in files("kinds") {
        for name in builtin::names() {
            for role in [RoleChoice::Worker, RoleChoice::Launcher, RoleChoice::All] {
                let (h, out) = applied(&path, name, role);
                let text = out.text;
                let report = linter(name, h.apply_container.clone())
                    .lint(Source::new("applied.yaml", text.clone()));
                // In worker mode the launcher stays as written: a value it forwards over the pods' is
                // left, and apply's note names it (`forwards `NAME=VALUE``); lint still reports it.
                let left: Vec<&Problem> = counted(&report)
                    .into_iter()
                    .filter(|p| {
                        !(role == RoleChoice::Worker
                            && out.notes.iter().any(|n| {
                                n.split("forwards `")
                                    .nth(1)
                                    .and_then(|r| r.split('`').next())
                                    .is_some_and(|fwd| p.message.contains(fwd))
                            }))
                    })
                    .collect();
                assert!(
                    left.is_empty(),
                    "{} with {name} ({role:?}):\n{}\n--- applied ---\n{text}",
                    path.display(),
                    describe(&report.problems)
                );
                assert!(
                    report.templates > 0,
                    "{}: no template found",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 14 * 7 * 3, "{checked}");
}

#[test]
fn unwired_kinds_are_reported() {
    let l = linter(DEFAULT_PROFILE, None);
    for path in files("kinds") {
        let text = std::fs::read_to_string(&path).unwrap();
        let h = header(&text);
        let l = match &h.apply_container {
            Some(c) => linter(DEFAULT_PROFILE, Some(c.clone())),
            None => l.clone(),
        };
        let report = l.lint(Source::new(file_name(&path), text));
        let codes: BTreeSet<&str> = report.problems.iter().map(|p| p.code.as_str()).collect();
        // A TrainJob's trainer only overrides its runtime's container, which is not in the file: what the
        // runtime gives is unknown (`a_trainjobs_trainer_is_judged_on_what_it_sets`).
        if path.ends_with("trainjob.yaml") {
            assert!(!report.has_errors(), "{codes:?}");
            continue;
        }
        assert!(
            codes.contains("roce::lint::env_missing")
                || codes.contains("roce::lint::env_different"),
            "{}: {codes:?}",
            path.display()
        );
        for code in [
            "roce::lint::missing_nad",
            "roce::lint::ipc_lock",
            "roce::lint::rdma_resource",
            "roce::lint::shm",
        ] {
            // KubeRay mounts a memory emptyDir at /dev/shm in every Ray pod it builds.
            if code == "roce::lint::shm" && path.ends_with("raycluster.yaml") {
                assert!(!codes.contains(code), "{codes:?}");
                continue;
            }
            assert!(
                codes.contains(code),
                "{}: {code} not reported; got {codes:?}",
                path.display()
            );
        }
        assert!(report.has_errors());
    }
}

#[test]
fn the_mpijob_fixture_flags_the_launchers_wrong_hca() {
    let (_, report) = lint_path(&fixtures("kinds/mpijob.yaml"));
    let hca: Vec<&Problem> = report
        .problems
        .iter()
        .filter(|p| p.code == Code::LintHcaMatchesNothing)
        .collect();
    assert_eq!(hca.len(), 1, "{}", describe(&report.problems));
    let loc = hca[0].location().unwrap();
    assert_eq!((loc.line, loc.column), (31, 15), "points at the `-x` word");
    // The forwarded variables do not count as missing from the workers.
    let missing = report
        .problems
        .iter()
        .find(|p| p.code == Code::LintEnvMissing)
        .unwrap();
    assert!(
        !missing.message.contains("NCCL_SOCKET_IFNAME"),
        "{}",
        missing.message
    );
}

/// Apply a NIXL profile to a pod, then change one value; lint must say what is wrong with it.
#[test]
fn ucx_transports_are_judged_by_fabric_and_mode() {
    let name = "coreweave/gb300-roce-nixl";
    let plan = roce_render::plan::lower(&profile(name));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n";
    let wired = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default())
        .unwrap()
        .text;
    let needle = "value: \"rc_mlx5,ud_mlx5,cuda_copy\"";
    assert!(wired.contains(needle));
    let l = linter(name, None);
    let cases: &[(&str, Option<Code>)] = &[
        ("rc_verbs,ud_verbs,cuda_copy", Some(Code::LintUcxTransport)),
        ("tcp,cuda_copy", Some(Code::LintUcxTransport)),
        ("rc_mlx5,ud_mlx5", Some(Code::LintUcxTransport)),
        ("rc_mlx5,cuda_cpy", Some(Code::LintUcxTransport)),
        (
            "rc_mlx5,ud_mlx5,cuda_copy,cuda_ipc",
            Some(Code::LintEnvDifferent),
        ),
        ("rc_x,ud_x,cuda_copy", None),
        ("rc_mlx5,ud_mlx5,cuda_copy", None),
    ];
    for (value, want) in cases {
        let text = wired.replace(needle, &format!("value: \"{value}\""));
        let report = l.lint(Source::new("p.yaml", text.clone()));
        let got: Vec<Code> = report.problems.iter().map(|p| p.code).collect();
        match want {
            Some(code) => {
                assert_eq!(
                    got,
                    [*code],
                    "UCX_TLS={value}: {}",
                    describe(&report.problems)
                );
                let line = text.lines().position(|l| l.contains(value)).unwrap() + 1;
                assert_eq!(report.problems[0].location().unwrap().line, line);
            }
            None => assert!(
                got.is_empty(),
                "UCX_TLS={value}: {}",
                describe(&report.problems)
            ),
        }
    }
    // In TCP mode the RDMA transports are the mistake.
    let l = linter(DEFAULT_PROFILE, None);
    let plan = roce_render::plan::lower(&profile(DEFAULT_PROFILE));
    let wired = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default())
        .unwrap()
        .text;
    for (value, want) in [
        ("rc,tcp", Some(Code::LintUcxTransport)),
        ("ib", Some(Code::LintUcxTransport)),
        ("tcp,self", Some(Code::LintEnvDifferent)),
    ] {
        let text = wired.replace("value: \"tcp\"", &format!("value: \"{value}\""));
        let got: Vec<Code> = l
            .lint(Source::new("p.yaml", text))
            .problems
            .iter()
            .map(|p| p.code)
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "UCX_TLS={value}");
    }
}

#[test]
fn nccl_ib_hca_is_compared_by_the_rails_it_selects() {
    let l = linter(DEFAULT_PROFILE, None);
    let plan = roce_render::plan::lower(&profile(DEFAULT_PROFILE));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n";
    let wired = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default())
        .unwrap()
        .text;
    let all16: Vec<String> = (0..4)
        .flat_map(|n| (0..4).map(move |p| format!("ibp{n}p{p}")))
        .collect();
    let cases: Vec<(String, Option<Code>)> = vec![
        (format!("={}", all16.join(",")), None),
        ("ibp0,ibp1,ibp2,ibp3".into(), None),
        ("ibp0,ibp1".into(), Some(Code::LintEnvDifferent)),
        ("mlx5".into(), Some(Code::LintHcaMatchesNothing)),
        ("^ibp".into(), Some(Code::LintHcaMatchesNothing)),
        ("=ibp".into(), Some(Code::LintHcaMatchesNothing)),
    ];
    for (value, want) in cases {
        let text = wired.replace("value: \"ibp\"", &format!("value: \"{value}\""));
        let got: Vec<Code> = l
            .lint(Source::new("p.yaml", text))
            .problems
            .iter()
            .map(|p| p.code)
            .collect();
        assert_eq!(
            got,
            want.into_iter().collect::<Vec<_>>(),
            "NCCL_IB_HCA={value}"
        );
    }
}

#[test]
fn help_names_the_apply_command() {
    let path = fixtures("kinds/pod.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let l = Linter::new(
        &profile(DEFAULT_PROFILE),
        LintOptions {
            container: Some("main".into()),
            profile_arg: Some("my-profile.kdl".into()),
        },
    );
    let report = l.lint(Source::new("deploy/pod.yaml", text));
    let ipc = report
        .problems
        .iter()
        .find(|p| p.code == Code::LintIpcLock)
        .unwrap();
    assert!(
        ipc.help.as_deref().unwrap().contains(
            "roce apply --in-place deploy/pod.yaml --profile my-profile.kdl --container main"
        ),
        "{:?}",
        ipc.help
    );
}

#[test]
fn hostile_nesting_is_a_syntax_problem_not_a_crash() {
    let l = linter(DEFAULT_PROFILE, None);
    for text in [
        format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("{}x", "- ".repeat(5_000)),
        "a: &a [*a]".to_string(),
    ] {
        let report = l.lint(Source::new("deep.yaml", text));
        assert_eq!(report.problems.len(), 1, "{}", describe(&report.problems));
        assert_eq!(report.problems[0].code, Code::LintSyntax);
    }
}

/// Every broken fixture's diagnostics, as people read them (code, place, message, help).
#[test]
fn snapshots_of_broken_fixtures() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/lint");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for path in files("broken") {
            let (_, report) = lint_path(&path);
            let mut out = String::new();
            for p in &report.problems {
                let loc = p.location().unwrap();
                out.push_str(&format!(
                    "{} {}:{}:{} [{}]\n  {}\n  help: {}\n",
                    p.code,
                    loc.file,
                    loc.line,
                    loc.column,
                    p.severity.as_str(),
                    p.message,
                    p.help.as_deref().unwrap_or("")
                ));
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            insta::assert_snapshot!(name, out);
        }
    });
}

#[test]
fn no_lint_snapshot_is_orphaned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/lint");
    let mut want: Vec<String> = files("broken")
        .iter()
        .map(|p| format!("{}.snap", p.file_stem().unwrap().to_string_lossy()))
        .collect();
    want.sort();
    let mut have: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".snap"))
                .collect()
        })
        .unwrap_or_default();
    have.sort();
    assert_eq!(
        have, want,
        "snapshots/lint must hold one snapshot per broken fixture"
    );
}

/// OCI's host-network MPIJob (corpus `oci/h100-hostnet-mpijob`): its `hostNetwork` and privileged workers are
/// the host-network profile's own mode, but the wrong mode for a profile that wires the pod's own namespace.
#[test]
fn host_network_is_the_mode_of_the_host_network_profile_only() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus/oci/h100-hostnet-mpijob.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let codes = |name: &str| -> Vec<(Code, roce_model::Severity)> {
        linter(name, None)
            .lint(Source::new("hostnet.yaml", text.clone()))
            .problems
            .iter()
            .map(|p| (p.code, p.severity))
            .collect()
    };
    let hostnet = codes("oci/h100-hostnet");
    for code in [
        Code::LintHostNetwork,
        Code::LintPrivileged,
        Code::LintRdmaResource,
        Code::LintMissingNad,
    ] {
        assert!(
            !hostnet.iter().any(|(c, _)| *c == code),
            "{code:?} under oci/h100-hostnet: {hostnet:?}"
        );
    }
    let vf = codes("oci/h100-roce");
    assert!(
        vf.iter()
            .any(|(c, s)| *c == Code::LintHostNetwork && *s == roce_model::Severity::Error),
        "{vf:?}"
    );
    assert!(vf.iter().any(|(c, _)| *c == Code::LintPrivileged), "{vf:?}");
}

/// GKE's GPU device plugin mounts the node's driver directory at /usr/local/nvidia for a container with
/// `nvidia.com/gpu`: the gIB profile's `library-dir-host` mount is met by the GPU request, not by a volume;
/// the gIB plugin's own directory is not.
/// The Pod target of a built-in.
fn rendered_pod(name: &str) -> String {
    let plan = roce_render::plan::lower(&profile(name));
    roce_render::render(&plan, roce_render::Target::Pod, &Default::default()).unwrap()[0]
        .contents
        .clone()
}

#[test]
fn the_gpu_device_plugin_meets_the_driver_directory_mount() {
    let name = "gcp/a3-ultra";
    let l = linter(name, None);
    let pod = rendered_pod(name);
    let codes = |text: &str| -> Vec<Code> {
        l.lint(Source::new("p.yaml", text.to_string()))
            .problems
            .iter()
            .filter(|p| p.severity != roce_model::Severity::Info)
            .map(|p| p.code)
            .collect()
    };
    assert_eq!(codes(&pod), Vec::<Code>::new());
    // Without the driver directory's mount: the GPU request brings it.
    let no_driver_mount = pod.replace("mountPath: /usr/local/nvidia", "mountPath: /opt/unused");
    assert_ne!(no_driver_mount, pod);
    assert_eq!(codes(&no_driver_mount), Vec::<Code>::new());
    // Without GPUs as well, nothing brings it.
    let no_gpus = no_driver_mount
        .replace("nvidia.com/gpu: 8", "example.com/other: 8")
        .replace("nvidia.com/gpu: \"8\"", "example.com/other: \"8\"");
    assert_ne!(no_gpus, no_driver_mount);
    assert!(
        codes(&no_gpus).contains(&Code::LintHostMount),
        "{:?}",
        codes(&no_gpus)
    );
    // The gIB directory is the plugin's own: a GPU request does not bring it.
    let no_gib = pod.replace("mountPath: /usr/local/gib", "mountPath: /opt/unused");
    assert!(codes(&no_gib).contains(&Code::LintHostMount));
}

#[test]
fn a_lone_rank_without_nccl_shm_only_differs_on_dev_shm() {
    let name = "azure/gb300-ib-dranet";
    let l = linter(name, None);
    let pod = rendered_pod(name);
    let shm = |text: &str| -> Vec<roce_model::Severity> {
        l.lint(Source::new("p.yaml", text.to_string()))
            .problems
            .iter()
            .filter(|p| p.code == Code::LintShm)
            .map(|p| p.severity)
            .collect()
    };
    assert_eq!(shm(&pod), Vec::new());
    let no_shm = pod
        .replace(
            "    volumeMounts:\n    - name: dshm\n      mountPath: /dev/shm\n",
            "",
        )
        .replace(
            "  volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory\n",
            "",
        );
    assert_ne!(no_shm, pod);
    // Four GPUs by the claim: their ranks share /dev/shm.
    assert_eq!(shm(&no_shm), vec![roce_model::Severity::Warning]);
    let shm_off = no_shm.replace(
        "    env:\n",
        "    env:\n    - name: NCCL_SHM_DISABLE\n      value: \"1\"\n",
    );
    assert_eq!(shm(&shm_off), vec![roce_model::Severity::Warning]);
    // One GPU, NCCL's shared-memory transport off: no peer in the pod to reach through /dev/shm.
    let lone = shm_off.replace(
        "          count: 4\n      - name: nic",
        "          count: 1\n      - name: nic",
    );
    assert_ne!(lone, shm_off);
    assert_eq!(shm(&lone), vec![roce_model::Severity::Info]);
    // One GPU with the transport on: still slower without it.
    let lone_shm_on = no_shm.replace(
        "          count: 4\n      - name: nic",
        "          count: 1\n      - name: nic",
    );
    assert_eq!(shm(&lone_shm_on), vec![roce_model::Severity::Warning]);
}

/// Errors and warnings of `text` linted without a profile (the invariants of every fabric).
fn invariant_codes(text: &str) -> Vec<Code> {
    invariant_problems(text).iter().map(|p| p.code).collect()
}

/// The same problems, whole.
fn invariant_problems(text: &str) -> Vec<roce_model::Problem> {
    let report = linter("none", None).lint(Source::new("p.yaml", text.to_string()));
    counted(&report).into_iter().cloned().collect()
}

/// The one problem of `code` in `text` linted without a profile; fails unless there is exactly one.
fn the_one(text: &str, code: Code) -> roce_model::Problem {
    let problems = invariant_problems(text);
    let found: Vec<_> = problems.iter().filter(|p| p.code == code).collect();
    assert_eq!(found.len(), 1, "{problems:#?}");
    found[0].clone()
}

/// A pod with the RDMA shared device plugin's resource and no securityContext (heldout4's shape).
const SHARED_RDMA_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: rank
spec:
  containers:
  - name: trainer
    image: trainer:1
    command: [torchrun, train.py]
    env:
    - name: NCCL_IB_HCA
      value: mlx5_1
    resources:
      limits:
        nvidia.com/gpu: 1
        rdma/rdma_shared_device_eth: 1
";

#[test]
fn crio_default_ulimits_in_a_machine_config_lift_memlock() {
    assert!(invariant_codes(SHARED_RDMA_POD).contains(&Code::LintMemlock));
    let machine_config = |contents: &str| {
        format!(
            "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 02-crio\nspec:\n  config:\n    storage:\n      files:\n      - path: /etc/crio/crio.conf.d/10-custom\n        contents:\n{contents}\n---\n{SHARED_RDMA_POD}"
        )
    };
    let inline = machine_config(
        "          inline: |\n            [crio.runtime]\n            default_ulimits = [\n              \"memlock=-1:-1\"\n            ]",
    );
    assert!(!invariant_codes(&inline).contains(&Code::LintMemlock));
    // Ignition's own form: a percent-encoded data URL, and a base64 one.
    let encoded = machine_config(
        "          source: data:,%5Bcrio.runtime%5D%0Adefault_ulimits%20%3D%20%5B%22memlock%3D-1%3A-1%22%5D%0A",
    );
    assert!(!invariant_codes(&encoded).contains(&Code::LintMemlock));
    let base64 = machine_config(
        "          source: data:text/plain;charset=utf-8;base64,W2NyaW8ucnVudGltZV0KZGVmYXVsdF91bGltaXRzID0gWyJtZW1sb2NrPS0xOi0xIl0K",
    );
    assert!(!invariant_codes(&base64).contains(&Code::LintMemlock));
    // A finite limit, or a file CRI-O does not read, lifts nothing.
    let finite = inline.replace("memlock=-1:-1", "memlock=65536:65536");
    assert!(invariant_codes(&finite).contains(&Code::LintMemlock));
    let elsewhere = inline.replace("/etc/crio/crio.conf.d/10-custom", "/etc/motd");
    assert!(invariant_codes(&elsewhere).contains(&Code::LintMemlock));
}

#[test]
fn spiderpools_injection_annotation_gives_rdma_devices_but_not_memlock() {
    let no_device = SHARED_RDMA_POD.replace("        rdma/rdma_shared_device_eth: 1\n", "");
    assert!(invariant_codes(&no_device).contains(&Code::LintRdmaEnvWithoutDevice));
    let injected = no_device.replace(
        "  name: rank\n",
        "  name: rank\n  annotations:\n    cni.spidernet.io/rdma-resource-inject: rdma-network\n",
    );
    let codes = invariant_codes(&injected);
    assert!(!codes.contains(&Code::LintRdmaEnvWithoutDevice));
    // Spiderpool's webhook adds networks and resources, no capability.
    assert!(codes.contains(&Code::LintMemlock));
    // An empty class names no SpiderMultusConfig: nothing is injected.
    let empty = injected.replace(": rdma-network", ": \"\"");
    assert!(invariant_codes(&empty).contains(&Code::LintRdmaEnvWithoutDevice));
}

#[test]
fn a_pod_with_one_gpu_has_no_nccl_peer_behind_dev_shm() {
    let with_memlock = SHARED_RDMA_POD.replace(
        "    resources:\n",
        "    securityContext:\n      capabilities:\n        add: [IPC_LOCK]\n    resources:\n",
    );
    assert!(!invariant_codes(&with_memlock).contains(&Code::LintShm));
    let two = with_memlock.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2");
    assert!(invariant_codes(&two).contains(&Code::LintShm));
    // In the node's network namespace the pod has the node's hostname, which NCCL's host hash reads: the
    // ranks of other pods on the node are on the same "host".
    let host = with_memlock.replace(
        "spec:\n  containers:",
        "spec:\n  hostNetwork: true\n  containers:",
    );
    assert!(invariant_codes(&host).contains(&Code::LintShm));
    // Ray keeps its object store in /dev/shm whatever the GPU count.
    let ray = with_memlock.replace("[torchrun, train.py]", "[ray, start, --block]");
    assert!(invariant_codes(&ray).contains(&Code::LintShm));
}

/// A pod with NICs of its own (as many networks of its own as the profile's it lacks) gets none of the
/// profile's device-selecting variables from `roce apply`, which leaves them to the pod; lint read another
/// list than apply's and asked for them (`env_missing` naming NCCL_IB_HCA), so apply's output never linted
/// clean. Both now read `roce_render::edits`' one list of forms that meet a need otherwise.
#[test]
fn a_pod_with_nics_of_its_own_is_not_asked_for_the_profiles_device_names() {
    let l = linter(DEFAULT_PROFILE, None);
    let plan = roce_render::plan::lower(&profile(DEFAULT_PROFILE));
    let nets: Vec<String> = (0..16).map(|i| format!("east-fabric-{i}")).collect();
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    k8s.v1.cni.cncf.io/networks: {}\nspec:\n  containers:\n  - name: main\n    image: x\n",
        nets.join(",")
    );
    let applied = apply(&Source::new("p.yaml", pod), &plan, &ApplyOptions::default())
        .unwrap()
        .text;
    assert!(!applied.contains("NCCL_IB_HCA"), "{applied}");
    let report = l.lint(Source::new("p.yaml", applied));
    assert!(
        !report
            .problems
            .iter()
            .any(|p| p.code == Code::LintEnvMissing || p.message.contains("NCCL_IB_HCA")),
        "{}",
        describe(&report.problems)
    );
}

/// A TrainingRuntime with one `node` replicated job whose init container copies the MPI keys from the
/// `mpi-ssh-auth` volume it does not declare (heldout5's shape).
const MPI_RUNTIME: &str = "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: mpi-rt
spec:
  mlPolicy:
    mpi:
      sshAuthMountPath: /keys
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                initContainers:
                - name: keys
                  image: busybox:1
                  volumeMounts:
                  - name: mpi-ssh-auth
                    mountPath: /keys
                containers:
                - name: node
                  image: trainer:1
                  command: [/usr/sbin/sshd, -De]
";

#[test]
fn kubeflow_trainers_mpi_plugin_declares_the_ssh_volume() {
    assert!(!invariant_codes(MPI_RUNTIME).contains(&Code::LintVolumeMissing));
    // Without the MPI policy, or in another replicated job, nothing declares it.
    let no_mpi = MPI_RUNTIME.replace("  mlPolicy:\n    mpi:\n      sshAuthMountPath: /keys\n", "");
    assert!(invariant_codes(&no_mpi).contains(&Code::LintVolumeMissing));
    let other_job = MPI_RUNTIME.replace("- name: node\n", "- name: trainer\n");
    assert!(invariant_codes(&other_job).contains(&Code::LintVolumeMissing));
    // Another volume is still the template's to declare.
    let other_volume = MPI_RUNTIME.replace("name: mpi-ssh-auth", "name: ssh-keys");
    assert!(invariant_codes(&other_volume).contains(&Code::LintVolumeMissing));
}

#[test]
fn a_claim_of_a_template_outside_the_input_may_be_the_nics() {
    let no_device = SHARED_RDMA_POD.replace("        rdma/rdma_shared_device_eth: 1\n", "");
    assert!(invariant_codes(&no_device).contains(&Code::LintRdmaEnvWithoutDevice));
    let claimed = no_device
        .replace(
            "spec:\n  containers:",
            "spec:\n  resourceClaims:\n  - name: nics\n    resourceClaimTemplateName: rdma-nics\n  containers:",
        )
        .replace("      limits:\n", "      claims:\n      - name: nics\n      limits:\n");
    assert!(!invariant_codes(&claimed).contains(&Code::LintRdmaEnvWithoutDevice));
    // The template in the input, of a GPU class: the pod has no NIC.
    let gpus = format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: rdma-nics\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n---\n{claimed}"
    );
    assert!(invariant_codes(&gpus).contains(&Code::LintRdmaEnvWithoutDevice));
}

/// A NicClusterPolicy whose RDMA shared device plugin names its resource's prefix, and a pod asking for
/// `rdma/shared_ib`.
fn shared_plugin_input(prefix: &str) -> String {
    format!(
        "apiVersion: mellanox.com/v1alpha1\nkind: NicClusterPolicy\nmetadata:\n  name: nic-cluster-policy\nspec:\n  rdmaSharedDevicePlugin:\n    image: k8s-rdma-shared-dev-plugin\n    config: |\n      {{\"configList\": [{{{prefix}\"resourceName\": \"shared_ib\", \"rdmaHcaMax\": 63, \"selectors\": {{\"ifNames\": [\"ib0\"]}}}}]}}\n---\n{}",
        SHARED_RDMA_POD.replace("rdma/rdma_shared_device_eth", "rdma/shared_ib")
    )
}

#[test]
fn the_rdma_shared_device_plugins_resource_prefix_is_part_of_the_name() {
    // No prefix: the plugin's built-in `rdma`, the pod's.
    assert!(!invariant_codes(&shared_plugin_input("")).contains(&Code::LintResourceNotProvided));
    let nvidia = shared_plugin_input("\"resourcePrefix\": \"nvidia.com\", ");
    assert!(invariant_codes(&nvidia).contains(&Code::LintResourceNotProvided));
    let asked = nvidia.replace("rdma/shared_ib: 1", "nvidia.com/shared_ib: 1");
    assert!(!invariant_codes(&asked).contains(&Code::LintResourceNotProvided));
}

/// The SR-IOV network device plugin deployed by a DaemonSet with `args` (its `--resource-prefix`, or none),
/// its ConfigMap selecting VFs as `mlnx_rdma`, and a pod asking for `mellanox.com/mlnx_rdma`.
fn sriov_plugin_input(args: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: sriov-device-plugin\nspec:\n  selector:\n    matchLabels:\n      app: sriovdp\n  template:\n    metadata:\n      labels:\n        app: sriovdp\n    spec:\n      containers:\n      - name: sriovdp\n        image: sriov-network-device-plugin\n        args: [{args}]\n        volumeMounts:\n        - name: config\n          mountPath: /etc/pcidp\n      volumes:\n      - name: config\n        configMap:\n          name: sriovdp-config\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sriovdp-config\ndata:\n  config.json: |\n    {{\"resourceList\": [{{\"resourceName\": \"mlnx_rdma\", \"isRdma\": true, \"selectors\": {{\"vendors\": [\"15b3\"]}}}}]}}\n---\n{}",
        SHARED_RDMA_POD.replace("rdma/rdma_shared_device_eth", "mellanox.com/mlnx_rdma")
    )
}

#[test]
fn the_sriov_device_plugins_resource_prefix_flag_names_its_resources() {
    // The flag, in Go's forms: the pod's prefix.
    for args in [
        "--resource-prefix=mellanox.com",
        "-resource-prefix=mellanox.com",
        "--resource-prefix, mellanox.com",
    ] {
        let input = sriov_plugin_input(args);
        assert!(
            !invariant_codes(&input).contains(&Code::LintResourceNotProvided),
            "{args}"
        );
    }
    // No flag: the plugin's default, `intel.com/mlnx_rdma`, which no pod here asks for.
    let default = sriov_plugin_input("--log-level=10");
    assert!(invariant_codes(&default).contains(&Code::LintResourceNotProvided));
    let asked = default.replace("mellanox.com/mlnx_rdma: 1", "intel.com/mlnx_rdma: 1");
    assert!(!invariant_codes(&asked).contains(&Code::LintResourceNotProvided));
    // Without the plugin in the input its prefix is the deployment's: compared after the prefix.
    let config_only = default.split_once("---\n").unwrap().1;
    assert!(!invariant_codes(config_only).contains(&Code::LintResourceNotProvided));
}

/// A RoleBasedGroup role run as a LeaderWorkerSet: the role's `template` (privileged, with the node's
/// /dev/infiniband) and the leader's patch, which sets only the SGLang command (Mooncake KV transfer).
const RBG_PATCHED: &str = "\
apiVersion: workloads.x-k8s.io/v1alpha1
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roles:
  - name: prefill
    leaderWorkerSet:
      size: 2
      patchLeaderTemplate:
        spec:
          containers:
          - name: engine
            command: [python3, -m, sglang.launch_server, --disaggregation-mode, prefill]
    template:
      spec:
        containers:
        - name: engine
          image: sglang:1
          securityContext:
            privileged: true
          volumeMounts:
          - name: devinf
            mountPath: /dev/infiniband
        volumes:
        - name: devinf
          hostPath:
            path: /dev/infiniband
";

#[test]
fn a_template_patch_is_judged_with_the_template_it_patches_not_alone() {
    // The leader's patch alone has the Mooncake command and no device; the pod is the role's template with
    // the patch merged, privileged with the node's devices.
    assert!(!invariant_codes(RBG_PATCHED).contains(&Code::LintRdmaEnvWithoutDevice));
    // The same command in the role's template, without the devices: reported.
    let unpatched = RBG_PATCHED
        .replace(
            "        - name: engine\n          image: sglang:1\n          securityContext:\n            privileged: true\n",
            "        - name: engine\n          image: sglang:1\n          command: [python3, -m, sglang.launch_server, --disaggregation-mode, prefill]\n",
        );
    assert!(invariant_codes(&unpatched).contains(&Code::LintRdmaEnvWithoutDevice));
    // The leader's patch merged onto a template without devices: the leader pod has the Mooncake command
    // and no device, reported where the patch sets the command.
    let bare = RBG_PATCHED.replace(
        "          securityContext:\n            privileged: true\n",
        "",
    );
    let found = the_one(&bare, Code::LintRdmaEnvWithoutDevice);
    assert!(
        found.message.contains("patchLeaderTemplate"),
        "{}",
        found.message
    );
    // A `v1alpha2` role: `leaderWorkerPattern` holds the template and both patches; the worker's patch
    // takes the privilege away, so only the worker pod lacks a device.
    let v1alpha2 = "\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roles:
  - name: prefill
    leaderWorkerPattern:
      size: 2
      leaderTemplatePatch:
        metadata:
          labels:
            role: leader
      workerTemplatePatch:
        spec:
          containers:
          - name: engine
            securityContext:
              privileged: false
      template:
        spec:
          containers:
          - name: engine
            image: sglang:1
            command: [python3, -m, sglang.launch_server, --disaggregation-mode, prefill]
            securityContext:
              privileged: true
";
    let found = the_one(v1alpha2, Code::LintRdmaEnvWithoutDevice);
    assert!(
        found.message.contains("workerTemplatePatch"),
        "{}",
        found.message
    );
    // Both patches give the privilege the template lacks: every pod has the devices, and the template is
    // no pod of its own.
    let both = v1alpha2
        .replace(
            "        metadata:\n          labels:\n            role: leader\n",
            "        spec:\n          containers:\n          - name: engine\n            securityContext:\n              privileged: true\n",
        )
        .replace("              privileged: false\n", "              privileged: true\n")
        .replace(
            "prefill]\n            securityContext:\n              privileged: true\n",
            "prefill]\n",
        );
    assert_eq!(both.matches("privileged: true").count(), 2, "{both}");
    assert!(!invariant_codes(&both).contains(&Code::LintRdmaEnvWithoutDevice));
}

/// A vLLM server whose KV connector is Mooncake's (`CONFIG`), with one GPU and no RDMA device.
const VLLM_MOONCAKE: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: prefill
spec:
  containers:
  - name: server
    image: vllm:1
    command: [vllm, serve]
    args: [Qwen/Qwen3-0.6B, --kv-transfer-config, 'CONFIG']
    resources:
      limits:
        nvidia.com/gpu: 1
";

#[test]
fn vllms_mooncake_connector_asks_for_rdma_unless_its_protocol_says_otherwise() {
    let with = |config: &str| VLLM_MOONCAKE.replace("CONFIG", config);
    let codes = |config: &str| invariant_codes(&with(config));
    // No protocol: vLLM's default, rdma.
    assert!(
        codes(r#"{"kv_connector":"MooncakeConnector","kv_role":"kv_producer"}"#)
            .contains(&Code::LintRdmaEnvWithoutDevice)
    );
    assert!(codes(
        r#"{"kv_connector":"MooncakeConnector","kv_connector_extra_config":{"mooncake_protocol":"rdma"}}"#
    )
    .contains(&Code::LintRdmaEnvWithoutDevice));
    // TCP asked for; another connector.
    assert!(!codes(
        r#"{"kv_connector":"MooncakeConnector","kv_connector_extra_config":{"mooncake_protocol":"tcp"}}"#
    )
    .contains(&Code::LintRdmaEnvWithoutDevice));
    assert!(
        !codes(r#"{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}"#)
            .contains(&Code::LintRdmaEnvWithoutDevice)
    );
    // With an RDMA device: met.
    let device = with(r#"{"kv_connector":"MooncakeConnector"}"#).replace(
        "        nvidia.com/gpu: 1\n",
        "        nvidia.com/gpu: 1\n        rdma/ib: 1\n",
    );
    assert!(!invariant_codes(&device).contains(&Code::LintRdmaEnvWithoutDevice));
}

/// A multi-node NIMService on an RDMA shared device: 8 GPUs and an RDMA device in `spec.resources`, UCX over
/// `ib`, the IPoIB network in `spec.annotations`, no field for a security context.
const NIM_SERVICE: &str = "\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama
    tag: \"1.0\"
  annotations:
    k8s.v1.cni.cncf.io/networks: ipoib
  env:
  - name: UCX_TLS
    value: ib,tcp
  resources:
    limits:
      nvidia.com/gpu: 8
      rdma/rdma_shared_device_a: 1
  multiNode:
    parallelism:
      tensor: 8
      pipeline: 2
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: ipoib
spec:
  config: '{\"cniVersion\":\"0.3.1\",\"type\":\"ipoib\",\"master\":\"ibp12s0\"}'
";

#[test]
fn a_nimservices_pod_is_its_spec_with_the_operators_dev_shm() {
    let codes = invariant_codes(NIM_SERVICE);
    // Read: RDMA devices without IPC_LOCK, which a NIMService cannot add.
    assert!(!codes.contains(&Code::LintNoPodTemplate), "{codes:?}");
    assert!(codes.contains(&Code::LintMemlock), "{codes:?}");
    // The operator mounts its memory `dshm` at /dev/shm; the device is there.
    assert!(!codes.contains(&Code::LintShm), "{codes:?}");
    assert!(
        !codes.contains(&Code::LintRdmaEnvWithoutDevice),
        "{codes:?}"
    );
    // Its networks annotation is the pod's: a network the input's NADs do not define is reported.
    let undefined = NIM_SERVICE.replace("networks: ipoib", "networks: ipoib-b");
    assert!(invariant_codes(&undefined).contains(&Code::LintNadUndefined));
    // Without the device, UCX's `ib` has nothing to open.
    let no_device = NIM_SERVICE.replace("      rdma/rdma_shared_device_a: 1\n", "");
    assert!(invariant_codes(&no_device).contains(&Code::LintRdmaEnvWithoutDevice));
    // Another API group's NIMService is not the NIM operator's.
    let other = NIM_SERVICE.replace("apps.nvidia.com/v1alpha1", "example.com/v1");
    assert!(!invariant_codes(&other).contains(&Code::LintMemlock));
}

/// A one-node LLMInferenceService server with 8 GPUs and an RDMA device, no security context of its own.
const LLMISVC: &str = "\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: llm
spec:
  model:
    uri: hf://org/model
  template:
    containers:
    - name: main
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/ib: 1
";

#[test]
fn kserves_presets_decide_memlock_and_dev_shm_of_an_llminferenceservice() {
    // No worker: KServe's `config-llm-template` drops every capability and adds none; it mounts /dev/shm.
    let codes = invariant_codes(LLMISVC);
    assert!(codes.contains(&Code::LintMemlock), "{codes:?}");
    assert!(!codes.contains(&Code::LintShm), "{codes:?}");
    // Workers with data parallelism: the data-parallel preset adds IPC_LOCK to the leader and workers.
    let worker = "  worker:\n    containers:\n    - name: main\n      resources:\n        limits:\n          nvidia.com/gpu: 8\n          rdma/ib: 1\n";
    let data_parallel =
        format!("{LLMISVC}  parallelism:\n    data: 16\n    dataLocal: 8\n{worker}");
    assert!(!invariant_codes(&data_parallel).contains(&Code::LintMemlock));
    // Workers without data parallelism, or configs of the user's own: unknown, not reported.
    assert!(!invariant_codes(&format!("{LLMISVC}{worker}")).contains(&Code::LintMemlock));
    let own = LLMISVC.replace("  model:\n", "  baseRefs:\n  - name: my-config\n  model:\n");
    assert!(!invariant_codes(&own).contains(&Code::LintMemlock));
    // The prefill role is judged by its own workers and parallelism.
    let prefill = format!(
        "{data_parallel}  prefill:\n    template:\n      containers:\n      - name: main\n        resources:\n          limits:\n            rdma/ib: 1\n"
    );
    let memlock = the_one(&prefill, Code::LintMemlock);
    assert!(
        memlock.message.contains("spec.prefill.template"),
        "{}",
        memlock.message
    );
}

/// A v1beta1 Dynamo decode worker with 8 GPUs and RDMA devices, and no /dev/shm of its own.
const DYNAMO_V1BETA1: &str = "\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: disagg
spec:
  components:
  - name: DecodeWorker
    type: decode
    podTemplate:
      spec:
        containers:
        - name: main
          image: vllm-runtime:1.0.0
          securityContext:
            capabilities:
              add: [IPC_LOCK]
          resources:
            limits:
              nvidia.com/gpu: 8
              rdma/ib: 8
";

#[test]
fn dynamo_components_get_the_operators_dev_shm_unless_they_turn_it_off() {
    let codes = |text: &str| invariant_codes(text);
    assert!(!codes(DYNAMO_V1BETA1).contains(&Code::LintNoPodTemplate));
    assert!(!codes(DYNAMO_V1BETA1).contains(&Code::LintShm));
    let sized = DYNAMO_V1BETA1.replace(
        "    podTemplate:\n",
        "    sharedMemorySize: 200Gi\n    podTemplate:\n",
    );
    assert!(!codes(&sized).contains(&Code::LintShm));
    // A zero size turns the volume off (v1beta1), as `sharedMemory.disabled` does (v1alpha1).
    for off in ["\"0\"", "0", "0Gi"] {
        let zero = DYNAMO_V1BETA1.replace(
            "    podTemplate:\n",
            &format!("    sharedMemorySize: {off}\n    podTemplate:\n"),
        );
        assert!(
            codes(&zero).contains(&Code::LintShm),
            "sharedMemorySize: {off}"
        );
    }
    let v1alpha1 = "\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: disagg
spec:
  services:
    decode:
      SHM
      extraPodSpec:
        mainContainer:
          image: vllm-runtime:0.9.0
          resources:
            limits:
              nvidia.com/gpu: 4
          securityContext:
            privileged: true
";
    assert!(!codes(&v1alpha1.replace("SHM", "replicas: 1")).contains(&Code::LintShm));
    let disabled = v1alpha1.replace("SHM", "sharedMemory:\n        disabled: true");
    assert!(codes(&disabled).contains(&Code::LintShm));
    // Another API group's kind of the same name gets no operator's volume.
    let other = DYNAMO_V1BETA1.replace("nvidia.com/v1beta1", "example.com/v1");
    assert!(codes(&other).contains(&Code::LintShm));
}

/// A Slinky NodeSet on GKE's RDMA networks: 8 GPUs in `spec.slurmd`, no /dev/shm, no securityContext.
const NODESET: &str = "\
apiVersion: slinky.slurm.net/v1beta1
kind: NodeSet
metadata:
  name: gpu-nodes
spec:
  controllerRef:
    name: slurm
  slurmd:
    image: slurmd:25.05
    env:
    - name: NCCL_IB_HCA
      value: mlx5
    resources:
      limits:
        nvidia.com/gpu: 8
  template:
    metadata:
      annotations:
        networking.gke.io/interfaces: '[{\"interfaceName\":\"eth2\",\"network\":\"rdma-0\"}]'
    spec:
      nodeSelector:
        cloud.google.com/gke-nodepool: a3
";

#[test]
fn a_nodesets_container_is_its_slurmd_which_the_operator_makes_privileged() {
    let codes = invariant_codes(NODESET);
    // Read: its pod is checked (8 GPUs, no /dev/shm).
    assert!(!codes.contains(&Code::LintNoPodTemplate), "{codes:?}");
    assert!(codes.contains(&Code::LintShm), "{codes:?}");
    // Without GKE's networks, the operator's privileged slurmd is what opens the RDMA devices…
    let no_networks = NODESET.replace("    metadata:\n      annotations:\n        networking.gke.io/interfaces: '[{\"interfaceName\":\"eth2\",\"network\":\"rdma-0\"}]'\n", "");
    assert_ne!(no_networks, NODESET);
    assert!(!invariant_codes(&no_networks).contains(&Code::LintRdmaEnvWithoutDevice));
    // …unless the slurmd's own `privileged: false` wins over the operator's base container.
    let unprivileged = no_networks.replace(
        "    image: slurmd:25.05\n",
        "    image: slurmd:25.05\n    securityContext:\n      privileged: false\n",
    );
    assert!(invariant_codes(&unprivileged).contains(&Code::LintRdmaEnvWithoutDevice));
    // Another API group's NodeSet is not Slinky's.
    let other = NODESET.replace("slinky.slurm.net/v1beta1", "example.com/v1");
    assert!(invariant_codes(&other).contains(&Code::LintNoPodTemplate));
}

#[test]
fn apply_writes_a_nodesets_pod_in_its_template_and_its_slurmd() {
    let plan = roce_render::plan::lower(&profile("gcp/a3-ultra"));
    let out = apply(
        &Source::new("nodeset.yaml", NODESET),
        &plan,
        &ApplyOptions::default(),
    )
    .unwrap();
    let doc: serde_json::Value = serde_saphyr::from_str(&out.text).unwrap();
    let spec = &doc["spec"];
    // The container stays at spec.slurmd, with the /dev/shm mount; the volume is the template's.
    assert!(
        spec["template"]["spec"].get("containers").is_none(),
        "{}",
        out.text
    );
    let mounts = spec["slurmd"]["volumeMounts"].as_array().unwrap();
    let shm = mounts
        .iter()
        .find(|m| m["mountPath"] == "/dev/shm")
        .unwrap();
    let volumes = spec["template"]["spec"]["volumes"].as_array().unwrap();
    assert!(
        volumes.iter().any(|v| v["name"] == shm["name"]),
        "{}",
        out.text
    );
    let again = apply(
        &Source::new("nodeset.yaml", out.text.clone()),
        &plan,
        &ApplyOptions::default(),
    )
    .unwrap();
    assert_eq!(again.text, out.text);
}

#[test]
fn a_trainjobs_trainer_is_judged_on_what_it_sets() {
    let trainjob = "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj
spec:
  runtimeRef:
    name: efa-runtime
  trainer:
    numNodes: 2
";
    let l = linter("aws/p5-efa", None);
    let codes = |text: &str| -> Vec<Code> {
        counted(&l.lint(Source::new("tj.yaml", text.to_string())))
            .iter()
            .map(|p| p.code)
            .collect()
    };
    // The provider's env and the EFA devices are the runtime's node container's: not missing here.
    assert!(codes(trainjob).is_empty(), "{:?}", codes(trainjob));
    // A value the trainer sets overrides the runtime's (upserted by name), and is judged.
    let tcp = format!("{trainjob}    env:\n    - name: FI_PROVIDER\n      value: tcp\n");
    assert!(codes(&tcp).contains(&Code::LintProviderEnv));
}

/// The severities of `code`'s findings in `text` linted against `profile_name` (`none`: the invariants).
fn severities(profile_name: &str, text: &str, code: Code) -> Vec<roce_model::Severity> {
    linter(profile_name, None)
        .lint(Source::new("p.yaml", text.to_string()))
        .problems
        .iter()
        .filter(|p| p.code == code)
        .map(|p| p.severity)
        .collect()
}

/// A plain NAD bound to `amd.com/vnic` and a pod attached to it (AMD network operator's workload guide).
const VNIC_POD: &str = "\
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: vnic-net
  annotations:
    k8s.v1.cni.cncf.io/resourceName: amd.com/vnic
spec:
  config: '{\"cniVersion\": \"0.3.1\", \"name\": \"vnic-net\", \"type\": \"amd-host-device\"}'
---
apiVersion: v1
kind: Pod
metadata:
  name: rank
  annotations:
    k8s.v1.cni.cncf.io/networks: vnic-net
spec:
  containers:
  - name: rank
    image: rccl:1
    resources:
      limits:
        amd.com/gpu: 1
        amd.com/nic: 1
";

#[test]
fn an_attachment_of_a_plain_nad_needs_its_resource_requested() {
    use roce_model::Severity::{Error, Warning};
    // No amd.com/vnic: Multus finds no device of the NAD's resource for the attachment, and nothing in the
    // input (no SR-IOV operator, whose injector would add the request) asks for one.
    assert_eq!(
        severities("none", VNIC_POD, Code::LintNadsVsVfs),
        vec![Warning]
    );
    let asked = VNIC_POD.replace("amd.com/nic: 1", "amd.com/vnic: 1");
    assert!(severities("none", &asked, Code::LintNadsVsVfs).is_empty());
    // Two attachments, one device: the second attachment gets none.
    let two = asked.replace("networks: vnic-net", "networks: vnic-net, vnic-net");
    assert_eq!(severities("none", &two, Code::LintNadsVsVfs), vec![Error]);
}

/// An SR-IOV operator network (resource `sriov_resource`) and a pod asking for it under the prefix the
/// NVIDIA network operator deploys the SR-IOV operator with (`nvidia.com`).
const SRIOV_NETWORK_POD: &str = "\
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetwork
metadata:
  name: sriov-rdma
spec:
  resourceName: sriov_resource
  networkNamespace: default
---
apiVersion: v1
kind: Pod
metadata:
  name: rank
  namespace: default
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma, sriov-rdma
spec:
  containers:
  - name: rank
    image: nccl:1
    securityContext:
      capabilities:
        add: [IPC_LOCK]
    resources:
      limits:
        nvidia.com/sriov_resource: 1
";

#[test]
fn an_sriov_operator_networks_resource_is_matched_whatever_the_deployments_prefix() {
    use roce_model::Severity::Error;
    // The operator renders the NAD as `$RESOURCE_PREFIX/sriov_resource`: the pod's nvidia.com/ request is
    // that resource, and one VF for two attachments is short.
    assert_eq!(
        severities("none", SRIOV_NETWORK_POD, Code::LintNadsVsVfs),
        vec![Error]
    );
    let one = SRIOV_NETWORK_POD.replace("sriov-rdma, sriov-rdma", "sriov-rdma");
    assert!(severities("none", &one, Code::LintNadsVsVfs).is_empty());
    // No request at all: the SR-IOV operator's network-resources-injector adds it (on by default).
    let none =
        SRIOV_NETWORK_POD.replace("        nvidia.com/sriov_resource: 1\n", "        cpu: 1\n");
    assert!(severities("none", &none, Code::LintNadsVsVfs).is_empty());
}

/// An MPIJob whose launcher forwards an EFA variable to workers that request no EFA device.
const EFA_MPIJOB: &str = "\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: nccl-tests:1
            env:
            - name: FI_PROVIDER
              value: efa
            command: [mpirun, -np, '2', -x, FI_PROVIDER, -x, FI_EFA_USE_DEVICE_RDMA=1, all_reduce_perf]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: nccl-tests:1
            resources:
              limits:
                nvidia.com/gpu: 1
";

#[test]
fn efa_env_without_an_efa_device_is_rdma_env_without_device() {
    // The workers get FI_PROVIDER=efa and FI_EFA_USE_DEVICE_RDMA=1 through `-x` but no EFA device: the efa
    // provider registers nothing and aws-ofi-nccl does not load. The launcher runs no rank.
    let found = severities("none", EFA_MPIJOB, Code::LintRdmaEnvWithoutDevice);
    assert_eq!(found, vec![roce_model::Severity::Error]);
    let with_efa = EFA_MPIJOB.replace(
        "                nvidia.com/gpu: 1\n",
        "                nvidia.com/gpu: 1\n                vpc.amazonaws.com/efa: 1\n",
    );
    assert!(severities("none", &with_efa, Code::LintRdmaEnvWithoutDevice).is_empty());
    // Another provider, or GPUDirect RDMA turned off, asks for no EFA device.
    let tcp = EFA_MPIJOB
        .replace("value: efa", "value: tcp")
        .replace("FI_EFA_USE_DEVICE_RDMA=1", "FI_EFA_USE_DEVICE_RDMA=0");
    assert!(severities("none", &tcp, Code::LintRdmaEnvWithoutDevice).is_empty());
    let excluded = tcp.replace("value: tcp", "value: ^efa");
    assert!(severities("none", &excluded, Code::LintRdmaEnvWithoutDevice).is_empty());
}

/// A privileged 8-GPU worker with no nodeSelector and no RDMA resource (Nebius's nccl-test chart).
const PRIVILEGED_GPU_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: rank
spec:
  containers:
  - name: rank
    image: nccl-tests:1
    securityContext:
      privileged: true
    resources:
      limits:
        nvidia.com/gpu: 8
";

#[test]
fn a_missing_gpu_model_label_on_a_gpu_pod_is_a_note() {
    use roce_model::Severity::{Info, Warning};
    // nebius/h100-ib's pool label is GPU Feature Discovery's `nvidia.com/gpu.product`: the GPU request keeps
    // the pod on GPU nodes, the label only picks the model.
    assert_eq!(
        severities("nebius/h100-ib", PRIVILEGED_GPU_POD, Code::LintNodeSelector),
        vec![Info]
    );
    // Without GPUs nothing keeps it off CPU nodes.
    let no_gpus = PRIVILEGED_GPU_POD.replace("nvidia.com/gpu: 8", "cpu: 8");
    assert_eq!(
        severities("nebius/h100-ib", &no_gpus, Code::LintNodeSelector),
        vec![Warning]
    );
    // A fabric label (CoreWeave's flavor) is no GPU fact: a GPU request does not stand in for it.
    assert_eq!(
        severities(
            "coreweave/h100-ib",
            PRIVILEGED_GPU_POD,
            Code::LintNodeSelector
        ),
        vec![Warning]
    );
}

#[test]
fn a_required_node_affinity_on_the_label_selects_as_nodeselector_does() {
    use roce_model::Severity::Warning;
    let pod = PRIVILEGED_GPU_POD.replace("nvidia.com/gpu: 8", "cpu: 8");
    let affinity = |block: &str| {
        pod.replace(
            "spec:\n  containers:",
            &format!("spec:\n{block}  containers:"),
        )
    };
    let required = |values: &str| {
        affinity(&format!(
            "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - key: nvidia.com/gpu.product\n            operator: In\n            values: [{values}]\n"
        ))
    };
    let lint = |text: &str| severities("nebius/h100-ib", text, Code::LintNodeSelector);
    // `In` the profile's value: every node the scheduler admits has the label.
    assert!(lint(&required("NVIDIA-H100-80GB-HBM3")).is_empty());
    // Another value: the pod goes to other nodes, as a nodeSelector with it would.
    assert_eq!(lint(&required("NVIDIA-H200")), vec![Warning]);
    // A value among others leaves room for other nodes; a preferred term only ranks nodes.
    assert_eq!(
        lint(&required("NVIDIA-H100-80GB-HBM3, NVIDIA-H200")),
        vec![Warning]
    );
    let preferred = affinity(
        "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        preference:\n          matchExpressions:\n          - key: nvidia.com/gpu.product\n            operator: In\n            values: [NVIDIA-H100-80GB-HBM3]\n",
    );
    assert_eq!(lint(&preferred), vec![Warning]);
    // A second term (ORed) without the label admits any node.
    let or = required("NVIDIA-H100-80GB-HBM3").replace(
        "            values: [NVIDIA-H100-80GB-HBM3]\n",
        "            values: [NVIDIA-H100-80GB-HBM3]\n        - matchExpressions:\n          - key: kubernetes.io/arch\n            operator: In\n            values: [amd64]\n",
    );
    assert_eq!(lint(&or), vec![Warning]);
}

/// The codes of the errors and warnings of `text` linted against `profile`.
fn codes_of(profile: &str, text: &str) -> Vec<Code> {
    counted(&linter(profile, None).lint(Source::new("p.yaml", text.to_string())))
        .iter()
        .map(|p| p.code)
        .collect()
}

/// A Ray group started with `num-gpus: "0"` offers Ray no GPU, so no NCCL rank is placed there: it needs no
/// fabric. The same group with GPUs is judged as a rank.
#[test]
fn a_ray_group_without_gpus_needs_no_fabric() {
    let text = |gpus: &str| {
        format!(
            "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: rl\nspec:\n  headGroupSpec:\n    rayStartParams:\n      num-gpus: \"{gpus}\"\n    template:\n      spec:\n        containers:\n        - name: head\n          image: rayproject/ray:2.46.0\n"
        )
    };
    let codes = |t: String| codes_of(DEFAULT_PROFILE, &t);
    assert!(codes(text("0")).is_empty(), "{:?}", codes(text("0")));
    let ranks = codes(text("4"));
    assert!(ranks.contains(&Code::LintIpcLock), "{ranks:?}");
    // KubeRay mounts /dev/shm itself.
    assert!(!ranks.contains(&Code::LintShm), "{ranks:?}");
}

/// A Dynamo `v1alpha1` service's own `envs` and `resources` reach the main container the operator builds:
/// the GPU limit and the claim the service lists are the container's.
#[test]
fn a_dynamo_services_resources_are_its_main_containers() {
    let dgd = "\
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata:
  name: domain
spec:
  numNodes: 2
  channel:
    resourceClaimTemplate:
      name: domain-channel
---
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: g
spec:
  services:
    Decode:
      resources:
        limits:
          gpu: \"4\"
        claims:
        - name: channel
      extraPodSpec:
        resourceClaims:
        - name: channel
          resourceClaimTemplateName: domain-channel
        mainContainer:
          image: x
";
    let codes = codes_of("gcp/a4x", dgd);
    assert!(!codes.contains(&Code::LintClaimUnreferenced), "{codes:?}");
    assert!(!codes.contains(&Code::LintDraChannelClaim), "{codes:?}");
    // Without the service's claims the container lists none.
    let bare = dgd.replace("        claims:\n        - name: channel\n", "");
    let codes = codes_of("gcp/a4x", &bare);
    assert!(codes.contains(&Code::LintClaimUnreferenced), "{codes:?}");
}
