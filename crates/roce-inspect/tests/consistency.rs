//! `check` (on a profile) and `lint` (on a manifest) give one answer about the same UCX_TLS value: both ask
//! the fabric core (`roce_model::fabric::ucx::tls_concerns`), and this test proves they agree on generated
//! lists, for a profile that pins UCX to TCP and one that runs UCX over RDMA.

use proptest::prelude::*;
use roce_inspect::lint::{LintOptions, Linter};
use roce_model::{BuiltinsOnly, Code, Problem, Source, builtin, load};
use roce_render::{RenderOptions, Target, lower, render};

/// Profiles by UCX mode: TCP (NCCL-only jobs) and RDMA (NIXL).
const BASES: &[&str] = &["coreweave/gb300-roce", "coreweave/gb300-roce-nixl"];

/// Transports and aliases of every class (RDMA, on-device DMA, TCP, shared memory, CUDA).
const NAMES: &[&str] = &[
    "rc_mlx5",
    "ud_mlx5",
    "dc_mlx5",
    "rc_verbs",
    "ud_verbs",
    "gga_mlx5",
    "srd",
    "tcp",
    "sm",
    "cuda_copy",
    "cuda_ipc",
    "gdr_copy",
    "rc",
    "rc_x",
    "rc_v",
    "ud",
    "dc",
    "ib",
    "cuda",
    "gga",
];

fn profile(base: &str, tls: &str) -> (Vec<Problem>, Option<roce_model::Profile>) {
    let text = format!("profile \"t/p\" extends=\"{base}\" {{\n    ucx tls=\"{tls}\"\n}}\n");
    let loaded = load(Source::new("p.kdl", text), &BuiltinsOnly);
    (loaded.problems, loaded.profile)
}

/// The base profile's Pod with its UCX_TLS value replaced by `tls`.
fn pod_with_tls(base: &str, tls: &str) -> String {
    let p = load(builtin::source(base).unwrap(), &BuiltinsOnly)
        .profile
        .unwrap();
    let pod = render(&lower(&p), Target::Pod, &RenderOptions::default())
        .unwrap()
        .remove(0)
        .contents;
    let mut out = String::new();
    let mut replace_next = false;
    for line in pod.lines() {
        if replace_next && line.trim_start().starts_with("value:") {
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(&format!("{indent}value: \"{tls}\"\n"));
            replace_next = false;
            continue;
        }
        replace_next |= line.trim_end().ends_with("name: UCX_TLS");
        out.push_str(line);
        out.push('\n');
    }
    assert!(
        out != pod || pod.contains(&format!("\"{tls}\"")),
        "no UCX_TLS in {base}'s Pod"
    );
    out
}

fn lint(base: &str, manifest: String) -> Vec<Problem> {
    let p = load(builtin::source(base).unwrap(), &BuiltinsOnly)
        .profile
        .unwrap();
    Linter::new(&p, LintOptions::default())
        .lint(Source::new("pod.yaml", manifest))
        .problems
}

fn check_objects(problems: &[Problem]) -> bool {
    problems.iter().any(|p| {
        matches!(
            p.code,
            Code::UcxTls | Code::VerbsTransport | Code::UcxNoCuda
        )
    })
}

fn lint_objects(problems: &[Problem]) -> bool {
    problems.iter().any(|p| p.code == Code::LintUcxTransport)
}

#[test]
fn gga_alone_gets_one_answer() {
    let base = "coreweave/gb300-roce-nixl";
    let (checked, _) = profile(base, "gga_mlx5,cuda_copy");
    let linted = lint(base, pod_with_tls(base, "gga_mlx5,cuda_copy"));
    let said = |ps: &[Problem], code: Code| {
        ps.iter()
            .find(|p| p.code == code)
            .map(|p| p.message.to_string())
            .unwrap_or_default()
    };
    let by_check = said(&checked, Code::UcxTls);
    let by_lint = said(&linted, Code::LintUcxTransport);
    assert!(
        by_check.contains("enables no RDMA transport"),
        "{checked:?}"
    );
    assert!(by_lint.contains("enables no RDMA transport"), "{linted:?}");
    // `gga` beside RC is fine for both.
    let (checked, _) = profile(base, "gga,rc,cuda_copy");
    assert!(!check_objects(&checked), "{checked:?}");
    assert!(!lint_objects(&lint(
        base,
        pod_with_tls(base, "gga,rc,cuda_copy")
    )));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn check_and_lint_agree_on_ucx_tls(
        base in prop::sample::select(BASES),
        names in prop::sample::subsequence(NAMES, 1..5).prop_shuffle(),
    ) {
        let tls = names.join(",");
        let (checked, loaded) = profile(base, &tls);
        prop_assume!(loaded.is_some());
        let linted = lint(base, pod_with_tls(base, &tls));
        prop_assert_eq!(
            check_objects(&checked),
            lint_objects(&linted),
            "UCX_TLS={} on {}\ncheck: {:#?}\nlint: {:#?}",
            tls, base, checked, linted
        );
    }
}

/// `check`'s `roce::provider::ib_knob` and `lint`'s `roce::lint::ib_knob_ignored` come from one fact
/// (`Provider::reads_nccl_ib` with `nccl::configures_ib`): for every built-in, a profile that adds an
/// `NCCL_IB_*` knob gets the check warning exactly when the Pod rendered from it gets the lint warning, and
/// that is exactly when its provider replaces NCCL's IB transport.
#[test]
fn ib_knobs_under_a_provider_get_one_answer() {
    for base in builtin::names() {
        for knob in [
            "NCCL_IB_QPS_PER_CONNECTION",
            "NCCL_IB_SL",
            "NCCL_IB_TIMEOUT",
        ] {
            let text = format!(
                "profile \"t/p\" extends=\"{base}\" {{\n    nccl {{\n        knobs {{\n            {knob} \"4\"\n        }}\n    }}\n}}\n"
            );
            let loaded = load(Source::new("p.kdl", text), &BuiltinsOnly);
            let p = loaded
                .profile
                .unwrap_or_else(|| panic!("{base} + {knob}: {:?}", loaded.problems));
            let check = loaded
                .problems
                .iter()
                .any(|x| x.code == Code::ProviderIbKnob);
            let pod = render(&lower(&p), Target::Pod, &RenderOptions::default())
                .unwrap()
                .remove(0)
                .contents;
            let lint = Linter::new(&p, LintOptions::default())
                .lint(Source::new("pod.yaml", pod))
                .problems
                .iter()
                .any(|x| x.code == Code::LintIbKnobIgnored);
            assert_eq!(check, lint, "{base} + {knob}: check {check}, lint {lint}");
            assert_eq!(
                check,
                !p.nccl_net.provider.value.reads_nccl_ib(),
                "{base} + {knob}"
            );
        }
    }
}

/// `check`'s `roce::provider::ofi_platform_default` and `lint`'s `roce::lint::ofi_platform_default` ask one
/// table (`fabric::ofi_platform::defaults`): on `aws/p5-efa`, a variable aws-ofi-nccl tunes on p5.48xlarge
/// set to another value warns in the profile and in a worker's env; the plugin's own value, written as its
/// reader parses it, warns in neither; a Pod rendered from a profile that overrides it carries the profile's
/// choice and is not reported a second time; a variable the plugin does not set is left to the other checks.
#[test]
fn aws_ofi_nccl_platform_defaults_get_one_answer() {
    let base = load(builtin::source("aws/p5-efa").unwrap(), &BuiltinsOnly)
        .profile
        .unwrap();
    let base_pod = render(&lower(&base), Target::Pod, &RenderOptions::default())
        .unwrap()
        .remove(0)
        .contents;
    let lint_codes = |p: &roce_model::Profile, pod: String| -> Vec<Code> {
        Linter::new(p, LintOptions::default())
            .lint(Source::new("pod.yaml", pod))
            .problems
            .iter()
            .map(|x| x.code)
            .filter(|c| *c == Code::LintOfiPlatformDefault)
            .collect()
    };
    for (name, value, fires) in [
        ("NCCL_NVLS_CHUNKSIZE", "131072", true),
        ("NCCL_NET_FORCE_FLUSH", "1", true),
        ("OFI_NCCL_PROTOCOL", "SENDRECV", true),
        ("NCCL_NVLS_CHUNKSIZE", "0x80000", false),
        ("OFI_NCCL_PROTOCOL", "rdma", false),
        ("NCCL_NETDEVS_POLICY", "max:2", false), // p5en and p6-b200 only
    ] {
        let text = format!(
            "profile \"t/p\" extends=\"aws/p5-efa\" {{\n    env {{\n        {name} \"{value}\"\n    }}\n}}\n"
        );
        let loaded = load(Source::new("p.kdl", text), &BuiltinsOnly);
        let check = loaded
            .problems
            .iter()
            .filter(|x| x.code == Code::OfiPlatformDefault)
            .count();
        assert_eq!(check, usize::from(fires), "check {name}={value}");
        let edited = base_pod.replacen(
            "    - name: FI_PROVIDER\n",
            &format!("    - name: {name}\n      value: \"{value}\"\n    - name: FI_PROVIDER\n"),
            1,
        );
        assert_ne!(edited, base_pod);
        let lint = lint_codes(&base, edited);
        assert_eq!(lint.len(), usize::from(fires), "lint {name}={value}");
        let own = loaded.profile.unwrap();
        let own_pod = render(&lower(&own), Target::Pod, &RenderOptions::default())
            .unwrap()
            .remove(0)
            .contents;
        assert!(
            lint_codes(&own, own_pod).is_empty(),
            "{name}={value}: the profile's own choice"
        );
    }
}
