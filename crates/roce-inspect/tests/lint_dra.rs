//! `roce lint` against a profile whose NVLink domain is a ComputeDomain: the vendor's own GB300 RoCE DRA
//! MPIJob (coreweave/nccl-tests, the fixture in roce-render) claims the IMEX channel; without the claim the
//! worker is reported at the line of its pod spec.

use std::path::Path;

use roce_inspect::lint::{LintOptions, Linter};
use roce_model::{BuiltinsOnly, Code, Problem, Profile, Source, builtin, load};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The one place the DRA profile is loaded.
fn dra_profile() -> Profile {
    let loaded = load(
        builtin::source("coreweave/gb300-roce-dra").unwrap(),
        &BuiltinsOnly,
    );
    assert!(!loaded.has_errors(), "{:?}", loaded.problems);
    loaded.profile.unwrap()
}

fn linter() -> Linter {
    Linter::new(&dra_profile(), LintOptions::default())
}

fn vendor_job() -> String {
    std::fs::read_to_string(
        repo().join(
            "crates/roce-render/tests/fixtures/dra/coreweave-gb300-roce-nvl72-mpijob-dra.yaml",
        ),
    )
    .unwrap()
}

fn channel_findings(text: String) -> Vec<Problem> {
    linter()
        .lint(Source::new("job.yaml", text))
        .problems
        .into_iter()
        .filter(|p| p.code == Code::LintDraChannelClaim)
        .collect()
}

#[test]
fn the_vendors_dra_job_claims_its_channel() {
    let found = channel_findings(vendor_job());
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_worker_without_the_channel_claim_is_reported_at_its_pod_spec() {
    let job = vendor_job();
    // Drop the pod's claim and the container's use of it, as a hand-copied job without DRA would.
    let text: String = job
        .lines()
        .filter(|l| {
            !l.contains("resourceClaims:")
                && !l.contains("- name: compute-domain-channel")
                && !l.contains("resourceClaimTemplateName:")
                && l.trim() != "claims:"
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let found = channel_findings(text.clone());
    assert_eq!(found.len(), 1, "{found:#?}");
    let p = &found[0];
    assert!(p.is_error());
    assert!(p.message.contains("IMEX channel"), "{}", p.message);
    let rendered = format!("{p:?}");
    // The worker's pod `spec:` (the one under Worker's template), not the launcher's.
    let lines: Vec<&str> = text.lines().collect();
    let worker = lines.iter().position(|l| l.trim() == "Worker:").unwrap();
    let spec_line = worker
        + lines[worker..]
            .iter()
            .position(|l| l.trim() == "spec:")
            .unwrap()
        + 1;
    let place = roce_model::problem::ProblemRecord::from(p)
        .line
        .unwrap_or(0);
    assert_eq!(place, spec_line, "{rendered}");
}

#[test]
fn a_claim_the_container_does_not_list_is_reported() {
    let job = vendor_job();
    let text: String = job
        .lines()
        .scan(false, |in_claims, l| {
            // Remove only the container's `resources.claims` list (keep the pod's resourceClaims).
            if l.trim() == "claims:" {
                *in_claims = true;
                return Some(None);
            }
            if *in_claims && l.contains("- name: compute-domain-channel") {
                *in_claims = false;
                return Some(None);
            }
            Some(Some(format!("{l}\n")))
        })
        .flatten()
        .collect();
    let found = channel_findings(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.contains("does not list it"),
        "{}",
        found[0].message
    );
}

/// What `roce render --target nccl-tests-mpijob` writes for the DRA profile passes `roce lint` against the same
/// profile: the claims, affinity and documents the renderer adds are the ones lint asks for.
#[test]
fn the_rendered_dra_mpijob_lints_clean() {
    let plan = roce_render::lower(&dra_profile());
    let job = roce_render::render(
        &plan,
        roce_render::Target::NcclTestsMpijob,
        &roce_render::RenderOptions::default(),
    )
    .unwrap()
    .remove(0)
    .contents;
    assert!(
        job.contains("kind: ComputeDomain") && job.contains("resourceClaims:"),
        "{job}"
    );
    let found = linter()
        .lint(Source::new("nccl-tests-mpijob.yaml", job))
        .problems;
    assert!(found.is_empty(), "{found:#?}");
}

/// What `roce apply` writes into an MPIJob that has no DRA yet (the shared kinds fixture: a launcher with
/// `mpirun -x`, workers with GPUs) passes `roce lint` against the same profile: before, the worker lacks the
/// IMEX channel claim; after, nothing is reported at all.
#[test]
fn an_mpijob_applied_with_the_dra_profile_lints_clean() {
    let plan = roce_render::lower(&dra_profile());
    let text = std::fs::read_to_string(
        repo().join("crates/roce-inspect/tests/fixtures/manifests/kinds/mpijob.yaml"),
    )
    .unwrap();
    assert_eq!(
        channel_findings(text.clone()).len(),
        1,
        "the fixture has no claim yet"
    );
    let applied = roce_render::apply::apply(
        &Source::new("mpijob.yaml", text),
        &plan,
        &roce_render::apply::ApplyOptions::default(),
    )
    .unwrap_or_else(|p| panic!("{p:#?}"));
    assert!(
        applied.text.contains("kind: ComputeDomain") && applied.text.contains("resourceClaims:"),
        "{}",
        applied.text
    );
    let found = linter()
        .lint(Source::new("mpijob.yaml", applied.text.clone()))
        .problems;
    assert!(
        !found.iter().any(|p| p.code == Code::LintDraChannelClaim),
        "{found:#?}"
    );
    // The launcher stays as written: its `-x NCCL_IB_HCA=mlx5` overrides the workers' and apply's note says
    // so; lint still reports it, and nothing else.
    assert!(
        applied
            .notes
            .iter()
            .any(|n| n.contains("forwards `NCCL_IB_HCA=mlx5`")),
        "{:?}",
        applied.notes
    );
    let codes: Vec<Code> = found.iter().map(|p| p.code).collect();
    assert_eq!(
        codes,
        [Code::LintHcaMatchesNothing],
        "{found:#?}\n{}",
        applied.text
    );
}
