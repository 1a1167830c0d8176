//! Profile diff: layout never counts as a change (a built-in ↔ its YAML form, a reordered copy), a one-field
//! override through `extends` is exactly one field with the place on each side, and the canonical
//! IB-vs-RoCE pair shows the fabric fields.

use std::path::{Path, PathBuf};

use roce_model::diff::{self, ProfileDiff};
use roce_model::{BuiltinsOnly, Loaded, Profile, Source, builtin, load};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn builtin_loaded(name: &str) -> Loaded {
    load(builtin::source(name).unwrap(), &BuiltinsOnly)
}

fn file_loaded(rel: &str) -> Loaded {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    load(Source::new(rel, text), &BuiltinsOnly)
}

fn profile(l: &Loaded) -> &Profile {
    l.profile
        .as_ref()
        .unwrap_or_else(|| panic!("{:#?}", l.problems))
}

fn paths(d: &ProfileDiff) -> Vec<&str> {
    d.changes.iter().map(|c| c.path.as_str()).collect()
}

#[test]
fn yaml_forms_have_no_semantic_change() {
    for name in builtin::names() {
        let kdl = builtin_loaded(name);
        let yaml = load(
            Source::new(format!("{name}.yaml"), builtin::yaml(name).unwrap()),
            &BuiltinsOnly,
        );
        let d = diff::diff(profile(&kdl), profile(&yaml));
        assert!(d.is_empty(), "{name}: {:?}", paths(&d));
        assert!(
            diff::diff(profile(&yaml), profile(&kdl)).is_empty(),
            "{name} (reversed)"
        );
    }
}

#[test]
fn a_reordered_copy_has_no_semantic_change() {
    let base = builtin_loaded("coreweave/gb300-roce");
    let reordered = file_loaded("snapshots/diff/inputs/reordered.kdl");
    // The copy really is laid out differently: the first field of the profile is on another line.
    let line = |l: &Loaded, p: &Profile| l.sources.describe(p.fabric.kind.origin);
    assert_ne!(
        line(&base, profile(&base)),
        line(&reordered, profile(&reordered))
    );
    let d = diff::diff(profile(&base), profile(&reordered));
    assert!(d.is_empty(), "{:?}", paths(&d));
}

#[test]
fn reordering_map_entries_is_not_a_change_but_editing_one_is() {
    let a = r#"profile "t/x" extends="coreweave/gb300-roce" { env { A "1"; B "2" } }"#;
    let b = r#"profile "t/x" extends="coreweave/gb300-roce" { env { B "2"; A "1" } }"#;
    let c = r#"profile "t/x" extends="coreweave/gb300-roce" { env { B "2"; A "3" } }"#;
    let l = |t: &str| load(Source::new("t.kdl", t), &BuiltinsOnly);
    let (la, lb, lc) = (l(a), l(b), l(c));
    assert!(diff::diff(profile(&la), profile(&lb)).is_empty());
    let d = diff::diff(profile(&la), profile(&lc));
    assert_eq!(paths(&d), ["env.A"]);
    assert_eq!(
        d.changes[0].old_at(&la.sources).as_deref(),
        Some("t.kdl:1:56")
    );
    assert_eq!(
        d.changes[0].new_at(&lc.sources).as_deref(),
        Some("t.kdl:1:63")
    );
}

#[test]
fn one_field_override_through_extends() {
    let base = builtin_loaded("coreweave/gb300-roce");
    let over = file_loaded("snapshots/diff/inputs/override.kdl");
    let d = diff::diff(profile(&base), profile(&over));
    assert_eq!(paths(&d), ["name", "nccl.debug"]);
    let debug = d.get("nccl.debug").unwrap();
    assert_eq!(debug.old_at(&base.sources), None);
    assert_eq!(
        debug.new_at(&over.sources).as_deref(),
        Some("snapshots/diff/inputs/override.kdl:3:16")
    );
    // Comparing two profiles that both extend the base: inherited fields point into the base layer (the
    // value of `ucx net-devices="eth0"` in the built-in's KDL).
    let nixl = builtin_loaded("coreweave/gb300-roce-nixl");
    let d = diff::diff(profile(&over), profile(&nixl));
    let tls = d.get("ucx.net-devices").unwrap();
    assert_eq!(
        tls.old_at(&over.sources).as_deref(),
        Some("builtin:coreweave/gb300-roce:39:32")
    );
    assert_eq!(
        tls.new_at(&nixl.sources).as_deref(),
        Some("builtin:coreweave/gb300-roce-nixl:10:65")
    );
}

#[test]
fn extends_itself_is_not_compared() {
    // The same profile written flat and as a (trivial) extension of the built-in.
    let flat = builtin_loaded("coreweave/gb300-ib");
    let layered = load(
        Source::new(
            "l.kdl",
            r#"profile "coreweave/gb300-ib" extends="coreweave/gb300-ib" {}"#,
        ),
        &BuiltinsOnly,
    );
    assert!(profile(&layered).extends.is_some());
    assert!(diff::diff(profile(&flat), profile(&layered)).is_empty());
}

#[test]
fn ib_vs_roce_names_the_fabric_fields() {
    let roce = builtin_loaded("coreweave/gb300-roce");
    let ib = builtin_loaded("coreweave/gb300-ib");
    let (pr, pi) = (profile(&roce), profile(&ib));
    let d = diff::diff(pr, pi);
    let p = paths(&d);
    for want in [
        "fabric.kind",
        "fabric.addr-family",
        "fabric.traffic-class",
        "rails.ports",
        "multus.mode",
    ] {
        assert!(p.contains(&want), "{want} missing from {p:?}");
    }
    for same in [
        "node-pool.gpus-per-node",
        "nccl.ib-hca",
        "ucx.mode",
        "capabilities",
    ] {
        assert!(
            !p.contains(&same),
            "{same} is the same on both sides: {p:?}"
        );
    }
    let kind = d.get("fabric.kind").unwrap();
    assert_eq!(kind.old.as_ref().unwrap().value, "roce");
    assert_eq!(kind.new.as_ref().unwrap().value, "infiniband");
    let summary = d.summary(pr, pi).join("; ");
    assert!(
        summary.contains("switches the fabric from RoCE to InfiniBand"),
        "{summary}"
    );
    assert!(
        summary.contains("changes the rails from 16 (4 NICs × 4 ports) to 4 (4 NICs × 1 port)"),
        "{summary}"
    );
    assert!(!summary.contains("UCX"), "UCX is TCP on both: {summary}");
}

#[test]
fn nccl_vs_nixl_switches_ucx() {
    let roce = builtin_loaded("coreweave/gb300-roce");
    let nixl = builtin_loaded("coreweave/gb300-roce-nixl");
    let d = diff::diff(profile(&roce), profile(&nixl));
    assert_eq!(
        paths(&d),
        [
            "name",
            "description",
            "ucx.mode",
            "ucx.tls",
            "ucx.net-devices",
            "ucx.gid-index",
            "ucx.max-rma-rails",
            "image.rdma-core"
        ]
    );
    let summary = d.summary(profile(&roce), profile(&nixl)).join("; ");
    assert_eq!(summary, "switches UCX from TCP to RDMA");
}
