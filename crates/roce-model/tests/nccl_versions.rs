//! The NCCL version table (`fabric::nccl_versions`): every entry cites where it comes from, and every
//! NCCL variable a built-in profile sets, or the fabric core names, is in it.

use roce_model::fabric::nccl_versions::{
    COVERED, FEATURES, HISTORY, NcclRelease, history, reads, v,
};
use roce_model::{BuiltinsOnly, builtin, load};

/// A source is NCCL's own: a file and line at a release commit, or a release binary's string table; or,
/// for a variable no release reads, whose it is.
#[test]
fn every_entry_cites_its_source() {
    let mut names = std::collections::BTreeSet::new();
    for h in HISTORY {
        assert!(names.insert(h.name), "{} twice", h.name);
        assert!(h.name.starts_with("NCCL_"), "{}", h.name);
        let release = h.source.starts_with("NVIDIA/nccl 2.")
            && h.source.contains(" src/")
            && h.source
                .rsplit(':')
                .next()
                .is_some_and(|l| l.parse::<u32>().is_ok());
        let binary = h.source.starts_with("libnccl.so.2 of nvidia-nccl-cu13 2.");
        match h.since {
            Some(since) => {
                assert!(release || binary, "{}: {:?}", h.name, h.source);
                assert!(since >= COVERED.0 && since <= COVERED.1, "{}", h.name);
                // the source is the release that first reads it
                assert!(
                    h.source.contains(&format!(" {since}.")),
                    "{}: {:?}",
                    h.name,
                    h.source
                );
                if let Some(r) = h.removed {
                    assert!(r > since, "{}", h.name);
                }
            }
            None => {
                assert!(h.removed.is_none(), "{}", h.name);
                assert!(
                    h.source.contains("plugin") || h.source.starts_with("in no release"),
                    "{}: {:?}",
                    h.name,
                    h.source
                );
            }
        }
    }
}

/// Every feature cites the release that first has it and the one before, each by file and line, and
/// names a variable a profile field sets; a later feature of the same variable family names the one it is
/// part of.
#[test]
fn every_feature_cites_its_sources() {
    let cites = |source: &str, release: &str| {
        source.starts_with(&format!("NVIDIA/nccl {release}"))
            && source.split(", ").all(|part| {
                part.rsplit(':')
                    .next()
                    .and_then(|l| l.split('-').next())
                    .is_some_and(|l| l.parse::<u32>().is_ok())
            })
    };
    assert!(!FEATURES.is_empty());
    for f in FEATURES {
        let since = f.since_text();
        assert!(cites(f.source, &since), "{}: {}", f.name, f.source);
        assert!(
            f.before_source.starts_with("NVIDIA/nccl 2.") && cites(f.before_source, "2."),
            "{}: {}",
            f.name,
            f.before_source
        );
        assert!(
            roce_model::fabric::env::typed_field(f.name).is_some(),
            "{}: no profile field sets it",
            f.name
        );
        if let Some(whole) = f.part_of {
            assert!(FEATURES.iter().any(|g| g.name == whole), "{}", f.name);
        }
    }
    // the Inspector from 2.28 (its first public release, 2.28.3, whatever the patch named); Prometheus from
    // 2.29.3, so a bare 2.29 may lack it
    let r = |t: &str| t.parse::<NcclRelease>().unwrap();
    let inspector = FEATURES
        .iter()
        .find(|f| f.name == "NCCL_INSPECTOR_ENABLE")
        .unwrap();
    assert!(!inspector.accepted_by(r("2.27.7")));
    assert!(inspector.accepted_by(r("2.28")) && inspector.accepted_by(r("2.32.3")));
    let prom = FEATURES
        .iter()
        .find(|f| f.name == "NCCL_INSPECTOR_PROM_DUMP")
        .unwrap();
    assert!(!prom.accepted_by(r("2.29")) && !prom.accepted_by(r("2.29.2")));
    assert!(prom.accepted_by(r("2.29.3")) && prom.accepted_by(r("2.30")));
}

/// Every `NCCL_*` variable a built-in sets, and every string knob the fabric core lists, has a history;
/// the built-ins set nothing the newest NCCL ignores unless a plugin reads it, but for one variable the
/// vendor's recipe sets: CoreWeave's GB300 RoCE nccl-tests set `NCCL_IB_NET_LATENCY=50`, which no NCCL
/// release from 2.18 to 2.32 reads (NCCL's source and 2.31/2.32's binaries have no such name); kept as the
/// vendor writes it (perhaps a plugin's), listed here so that another one cannot slip in.
#[test]
fn every_variable_roce_knows_has_a_history() {
    let mut unread = std::collections::BTreeSet::new();
    for name in roce_model::fabric::nccl::STRING_KNOBS {
        assert!(
            history(name).is_some(),
            "{name}: not in fabric::nccl_versions"
        );
    }
    for name in builtin::names() {
        let p = load(builtin::source(name).unwrap(), &BuiltinsOnly)
            .profile
            .unwrap();
        for e in p.env_vars() {
            if !e.name.starts_with("NCCL_") {
                continue;
            }
            let h = history(&e.name).unwrap_or_else(|| panic!("{name}: {} has no history", e.name));
            if reads(&e.name, COVERED.1) != Some(true) && !h.source.contains("plugin") {
                unread.insert(e.name.clone());
            }
        }
    }
    assert_eq!(
        unread.into_iter().collect::<Vec<_>>(),
        ["NCCL_IB_NET_LATENCY"],
        "built-ins set variables NCCL {} does not read",
        COVERED.1
    );
}

/// What the table says, spot-checked against NCCL's release notes: `NCCL_NET_GDR_C2C` is new in 2.26,
/// `NCCL_IB_ADDR_FAMILY`/`NCCL_IB_ADDR_RANGE` in 2.21, `NCCL_RUN_DIAGNOSTICS` in 2.31,
/// `NCCL_IB_SUBNET_AWARE_ROUTING` in 2.31 (2.30's notes announce it; the public 2.30 tree has no
/// reader); `NCCL_SHM_USE_CUDA_MEMCPY` is gone from 2.31.
#[test]
fn known_changes() {
    assert_eq!(reads("NCCL_NET_GDR_C2C", v(25)), Some(false));
    assert_eq!(reads("NCCL_NET_GDR_C2C", v(26)), Some(true));
    assert_eq!(reads("NCCL_IB_ADDR_FAMILY", v(20)), Some(false));
    assert_eq!(reads("NCCL_IB_ADDR_FAMILY", v(21)), Some(true));
    assert_eq!(reads("NCCL_RUN_DIAGNOSTICS", v(30)), Some(false));
    assert_eq!(reads("NCCL_RUN_DIAGNOSTICS", v(32)), Some(true));
    assert_eq!(reads("NCCL_SHM_USE_CUDA_MEMCPY", v(30)), Some(true));
    assert_eq!(reads("NCCL_SHM_USE_CUDA_MEMCPY", v(31)), Some(false));
    assert_eq!(reads("NCCL_TUNER_CONFIG_PATH", v(28)), None);
}

fn loaded(name: &str, text: &str) -> roce_model::Loaded {
    load(roce_model::Source::new(name, text), &BuiltinsOnly)
}

/// `nccl version` is read in both syntaxes to the same value, and refused as a number or a malformed
/// release with a fix.
#[test]
fn the_version_field_in_kdl_and_yaml() {
    let kdl = loaded(
        "p.kdl",
        r#"profile "t/p" extends="coreweave/h100-ib" { nccl version="2.28.9" }"#,
    );
    let yaml = loaded(
        "p.yaml",
        "name: t/p\nextends: coreweave/h100-ib\nnccl:\n  version: \"2.28.9\"\n",
    );
    let (k, y) = (kdl.profile.unwrap(), yaml.profile.unwrap());
    assert_eq!(k, y);
    let release = k.nccl.version.unwrap().value;
    assert_eq!(
        (release.minor(), release.to_string()),
        (v(28), "2.28.9".into())
    );
    // the built-in without a version is unchanged: no version
    let base = load(builtin::source("coreweave/h100-ib").unwrap(), &BuiltinsOnly);
    assert!(base.profile.unwrap().nccl.version.is_none());

    for (name, text, code, help) in [
        (
            "float.yaml",
            "name: t/p\nextends: coreweave/h100-ib\nnccl:\n  version: 2.30\n",
            "roce::type_mismatch",
            "2.3",
        ),
        (
            "float.kdl",
            r#"profile "t/p" extends="coreweave/h100-ib" { nccl version=2.30 }"#,
            "roce::type_mismatch",
            "2.3",
        ),
        (
            "tag.kdl",
            r#"profile "t/p" extends="coreweave/h100-ib" { nccl version="v2.28.9-1" }"#,
            "roce::invalid_value",
            "`2.28`",
        ),
        (
            "suffix.kdl",
            r#"profile "t/p" extends="coreweave/h100-ib" { nccl version="2.32.3+cuda13.4" }"#,
            "roce::invalid_value",
            "MAJOR.MINOR",
        ),
    ] {
        let l = loaded(name, text);
        assert!(l.profile.is_none(), "{name} loaded");
        let p = l
            .problems
            .iter()
            .find(|p| p.code.as_str() == code)
            .unwrap_or_else(|| panic!("{name}: {:?}", l.problems));
        assert!(
            p.help.as_deref().unwrap_or_default().contains(help),
            "{name}: {:?}",
            p.help
        );
    }
}

/// A version on a built-in changes none of its `check` findings unless the release ignores a variable:
/// every built-in, named NCCL 2.32, gains only `version_unread` (for `NCCL_IB_NET_LATENCY`, the one
/// variable no release reads): 2.32 has no defaults in the table, and no built-in sets a variable 2.32 ignores.
#[test]
fn a_version_on_a_builtin_adds_only_version_findings() {
    for name in builtin::names() {
        let text = format!(r#"profile "t/v" extends="{name}" {{ nccl version="2.32" }}"#);
        let with = loaded("v.kdl", &text);
        let without = load(builtin::source(name).unwrap(), &BuiltinsOnly);
        let codes = |l: &roce_model::Loaded| -> Vec<String> {
            l.problems
                .iter()
                .map(|p| p.code.as_str().to_string())
                .collect()
        };
        let extra: Vec<String> = codes(&with)
            .into_iter()
            .filter(|c| !codes(&without).contains(c))
            .collect();
        for c in &extra {
            assert!(c == "roce::nccl::version_unread", "{name}: {c}");
        }
        let unread: Vec<&str> = with
            .problems
            .iter()
            .filter(|p| p.code.as_str() == "roce::nccl::version_unread")
            .map(|p| p.message.as_str())
            .collect();
        for m in unread {
            assert!(m.starts_with("NCCL_IB_NET_LATENCY="), "{name}: {m}");
        }
    }
}

/// Every syntax change cites NCCL's source at both releases, at the release it names, and is known to the
/// history; `NCCL_IB_HCA`'s rail and plane fields are read from 2.30.7, not 2.30.4 (the untagged 2.30.5
/// and 2.30.6 were never published), and `2.30` without a patch is judged as its first patch.
#[test]
fn every_syntax_change_cites_both_readings() {
    use roce_model::fabric::nccl_versions::{NcclRelease, SYNTAX};
    let cites = |s: &str| {
        s.starts_with("NVIDIA/nccl 2.")
            && s.contains(" src/")
            && s.rsplit(':')
                .next()
                .is_some_and(|l| l.split('-').all(|n| n.parse::<u32>().is_ok()))
    };
    for s in SYNTAX {
        assert!(history(s.name).is_some(), "{}", s.name);
        assert!(cites(s.source) && cites(s.before_source), "{}", s.name);
        assert!(
            s.source.contains(&format!(" {}-", s.since_text())),
            "{}: {}",
            s.name,
            s.source
        );
        assert!(
            !s.before_source.contains(&format!(" {}-", s.since_text())),
            "{}",
            s.name
        );
    }
    let hca = SYNTAX.iter().find(|s| s.name == "NCCL_IB_HCA").unwrap();
    let r = |t: &str| t.parse::<NcclRelease>().unwrap();
    assert!(!hca.accepted_by(r("2.30.4")) && !hca.accepted_by(r("2.30")));
    assert!(!hca.accepted_by(r("2.18.1")));
    assert!(hca.accepted_by(r("2.30.7")) && hca.accepted_by(r("2.31")));
    assert!(hca.used_in("mlx5_0:1:0:1") && hca.used_in("=mlx5_0:1,mlx5_1:1:1"));
    assert!(!hca.used_in("mlx5_0:1,mlx5_1") && !hca.used_in("^mlx5_2"));
}

/// With a release named, fields after the port are the version rule's: silent from 2.30.7, a
/// `version_syntax` warning before; without one, `dropped_token`'s warning as before.
#[test]
fn hca_rail_fields_are_judged_by_the_named_release() {
    let hca =
        "ibp0:1:0:0,ibp1:1:1:0,ibp2:1:2:0,ibp3:1:3:0,ibp4:1:4:0,ibp5:1:5:0,ibp6:1:6:0,ibp7:1:7:0";
    let codes = |version: &str| -> Vec<String> {
        let text = format!(
            r#"profile "t/h" extends="coreweave/h100-ib" {{ nccl {version} ib-hca="{hca}" }}"#
        );
        loaded("h.kdl", &text)
            .problems
            .iter()
            .map(|p| p.code.as_str().to_string())
            .collect()
    };
    assert_eq!(codes(r#"version="2.30.7""#), Vec::<String>::new());
    assert_eq!(codes(r#"version="2.32""#), Vec::<String>::new());
    // one for the value
    assert_eq!(codes(r#"version="2.28""#), ["roce::nccl::version_syntax"]);
    // one per entry
    assert_eq!(codes(""), ["roce::nccl::dropped_token"; 8]);
}
