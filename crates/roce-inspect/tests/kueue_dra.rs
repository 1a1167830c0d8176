//! `roce lint` on workloads queued to Kueue that claim DRA devices (`roce::lint::kueue_dra_*`): Kueue's own
//! example (kubernetes-sigs/kueue v0.19.2 `site/static/examples/dra/sample-dra-rct-job.yaml`) is what Kueue
//! supports and fires nothing; each edit below is one thing Kueue v0.19.2 refuses or does not weigh
//! (`roce_model::fabric::dra::kueue` cites the sources).

use std::path::Path;

use roce_inspect::lint::{LintOptions, Linter};
use roce_model::{Code, Severity, Source};

fn example() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/manifests/kueue/sample-dra-rct-job.yaml"),
    )
    .unwrap()
}

/// The Kueue codes lint reports on `text` (no profile: these hold for every fabric), with their severity and
/// the line they point at.
fn kueue(text: &str) -> Vec<(Code, Severity, usize)> {
    Linter::without_profile(LintOptions::default())
        .lint(Source::new("job.yaml", text.to_string()))
        .problems
        .into_iter()
        .filter(|p| {
            matches!(
                p.code,
                Code::LintKueueDraClaim
                    | Code::LintKueueDraRequest
                    | Code::LintKueueDraConstraints
                    | Code::LintKueueDraTopology
            )
        })
        .map(|p| {
            let line = p.location().map_or(0, |l| l.line);
            (p.code, p.severity, line)
        })
        .collect()
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn kueues_own_dra_example_is_fine() {
    assert_eq!(kueue(&example()), []);
}

#[test]
fn without_the_queue_label_kueue_is_not_involved() {
    let text = example()
        .replace("      - name: gpu\n        exactly:", "      - name: gpu\n        firstAvailable: [{name: a, deviceClassName: gpu.example.com}]\n        exactly:")
        .replace("    kueue.x-k8s.io/queue-name: user-queue\n", "    app: x\n");
    assert_eq!(kueue(&text), []);
}

#[test]
fn a_claim_by_name_is_inadmissible() {
    let text = example().replace(
        "resourceClaimTemplateName: single-gpu",
        "resourceClaimName: shared-gpu",
    );
    assert_eq!(
        kueue(&text),
        [(
            Code::LintKueueDraClaim,
            Severity::Error,
            line_of(&text, "      resourceClaims:") + 1
        )]
    );
}

#[test]
fn refused_requests_are_inadmissible_and_constraints_unweighed() {
    let text = example().replace(
        "          deviceClassName: gpu.example.com\n",
        "          deviceClassName: gpu.example.com\n          allocationMode: All\n          adminAccess: true\n      constraints:\n      - requests: [gpu]\n        matchAttribute: resource.kubernetes.io/pcieRoot\n",
    );
    let template = line_of(&text, "apiVersion: resource.k8s.io/v1");
    let got = kueue(&text);
    assert_eq!(
        got,
        [
            (Code::LintKueueDraRequest, Severity::Error, template),
            (Code::LintKueueDraRequest, Severity::Error, template),
            (Code::LintKueueDraConstraints, Severity::Warning, template),
        ]
    );
}

#[test]
fn topology_aware_scheduling_with_dra_claims_is_a_warning() {
    let tas = "  template:\n    metadata:\n      annotations:\n        kueue.x-k8s.io/podset-required-topology: cloud.google.com/gce-topology-block\n    spec:\n";
    let text = example().replace("  template:\n    spec:\n", tas);
    assert_eq!(
        kueue(&text),
        [(
            Code::LintKueueDraTopology,
            Severity::Warning,
            line_of(&text, "podset-required-topology")
        )]
    );
    // the same annotation without DRA claims is Kueue's ordinary TAS
    let plain = text
        .replace("        resources:\n          claims:\n          - name: gpu\n", "        resources:\n")
        .replace("      resourceClaims:\n      - name: gpu\n        resourceClaimTemplateName: single-gpu\n", "");
    assert_eq!(kueue(&plain), []);
}
