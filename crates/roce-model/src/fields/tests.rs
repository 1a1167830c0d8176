//! The table against its consumers: the walker reads every key it lists and no other, `fabric::env` sets
//! the variables it names, `roce diff` labels every field by it.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Diff, Kind, Req, all, diff_labels, diff_rank};
use crate::{BuiltinsOnly, Source, builtin, diff, load, walk};

/// Keys no built-in or rule fixture writes.
const RARE: &str = r#"profile "t/rare" extends="coreweave/gb300-roce" {
    node-pool instance-type="x" partition="p" { rdma-resource "rdma/ib" count=2; runtime-class "nvidia" }
    nics dra class="dranet.net" count=16 template="t" claim="c" {
        selectors "device.attributes[\"dra.net\"].rdma == true"
        gpus class="gpu.nvidia.com" count=4
    }
    nvlink-domain compute-domain name="cd" nodes=2 channels="all" channel-template="cd-ch" claim="ch"
    placement {
        clique-affinity label="app" value="train"
    }
    nccl-net "plugin" name="MyNet" library-path="/opt/lib" {
        topology-file configmap="topo" key="t.xml" path="/etc/t.xml"
        host-mounts { lib host-path="/opt" mount-path="/opt" }
        env { FI_PROVIDER "efa" }
        pod-annotations { "a.b/c" "d" }
    }
    nccl debug-subsys="INIT" diagnostics=#true {
        inspector "json" plugin="/opt/nccl/libnccl-profiler-inspector.so" dump-dir="/d" interval-us=1000 host-path="/h"
    }
    image rdma-core=54
    job nodes=2 expected-busbw=100
}"#;

/// Every built-in, every rule fixture, and [`RARE`].
fn corpus() -> Vec<Source> {
    let mut out: Vec<Source> = builtin::names()
        .map(|n| builtin::source(n).unwrap())
        .collect();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    for dir in std::fs::read_dir(fixtures).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push(Source::new(path.display().to_string(), text));
            }
        }
    }
    out.push(Source::new("rare.kdl", RARE));
    out
}

#[test]
fn the_walker_reads_every_key_of_the_table() {
    walk::read::take();
    for source in corpus() {
        load(source, &BuiltinsOnly);
    }
    let read: BTreeSet<String> = walk::read::take().into_iter().collect();
    let unread: Vec<String> = all()
        .into_iter()
        .map(|(s, f)| s.path_of(f))
        .filter(|p| !read.contains(p))
        .collect();
    assert!(unread.is_empty(), "the walker never reads {unread:?}");
}

/// The walker reads a key only through the table (`MapView::field` panics on any other), and reports
/// every key the table lacks as unknown, with the table's keys as the choices.
#[test]
fn unknown_keys_are_the_tables() {
    let text = r#"profile "t/x" extends="coreweave/gb300-roce" { multus backend namespace="a" name="b" nads="x" }"#;
    let loaded = load(Source::new("t.kdl", text), &BuiltinsOnly);
    let p = loaded
        .problems
        .iter()
        .find(|p| p.code == crate::Code::UnknownKey)
        .expect("`nads` is per-port only");
    assert!(p.message.contains("`multus` has no key `nads`"), "{p:?}");
}

#[test]
fn typed_env_is_the_tables() {
    let from_table: BTreeSet<(String, &str)> = all()
        .into_iter()
        .flat_map(|(s, f)| {
            let field = format!("{} {}", s.name(), f.key);
            f.env.iter().map(move |e| (field.clone(), *e))
        })
        .collect();
    let typed: BTreeSet<(String, &str)> = crate::fabric::env::TYPED
        .iter()
        .map(|t| (t.field.to_string(), t.name))
        .collect();
    assert_eq!(from_table, typed);
}

#[test]
fn diff_labels_every_field_by_the_table() {
    let labels = diff_labels();
    let rare = load(Source::new("rare.kdl", RARE), &BuiltinsOnly);
    assert!(rare.profile.is_some(), "{:#?}", rare.problems);
    let mut seen = BTreeSet::new();
    for source in corpus() {
        let Some(p) = load(source, &BuiltinsOnly).profile else {
            continue;
        };
        for f in diff::fields(&p) {
            let rank = diff_rank(&labels, &f.path).unwrap_or_else(|| {
                panic!(
                    "`roce diff` shows `{}`, the table has no label for it",
                    f.path
                )
            });
            seen.insert(rank);
        }
    }
    let never: Vec<&String> = labels
        .iter()
        .enumerate()
        .filter(|(i, _)| !seen.contains(i))
        .map(|(_, l)| l)
        .collect();
    assert!(never.is_empty(), "labels no profile shows: {never:?}");
}

/// A row says **required** exactly where the table does; an env map's kind matches its section.
#[test]
fn rows_agree_with_the_entries() {
    for (s, f) in all() {
        for row in f.rows.iter().take(1) {
            assert_eq!(
                row.ty.contains("**required**"),
                f.req != Req::Optional,
                "{}",
                s.path_of(f)
            );
        }
        if let Kind::Choice(c) = f.kind {
            assert!(!c.is_empty(), "{}", s.path_of(f));
        }
        if f.diff == Diff::No {
            assert!(
                f.env.is_empty(),
                "{}: sets a variable but diff shows it nowhere",
                s.path_of(f)
            );
        }
    }
}

/// The KDL front end's positional keys, as they were before the table held them.
#[test]
fn kdl_positional_keys() {
    for (node, key) in [
        ("profile", "name"),
        ("fabric", "kind"),
        ("node-pool", "name"),
        ("multus", "mode"),
        ("ucx", "mode"),
        ("nics", "mode"),
        ("nvlink-domain", "kind"),
        ("kueue-topology", "level-label"),
        ("rdma-resource", "name"),
        ("nccl-net", "provider"),
    ] {
        assert_eq!(super::positional(node), Some(key), "{node}");
    }
    assert_eq!(super::positional("rails"), None);
    assert_eq!(super::positional("gpus"), None);
}

/// A layer may leave a `Merged` key to its base: why the schema (which checks one file) requires only
/// `name`, where the hand-written one also required `nccl-net provider`.
#[test]
fn a_layer_inherits_merged_keys() {
    let text = r#"profile "t/x" extends="gcp/a3-ultra" { nccl-net { env { FI_X "1" } } }"#;
    let loaded = load(Source::new("t.kdl", text), &BuiltinsOnly);
    assert!(!loaded.has_errors(), "{:#?}", loaded.problems);
}

/// A bound choice reads every spelling the table lists and `roce diff` shows the first that gives its value;
/// a bound key with a default has it at its section's place.
#[test]
fn bindings_read_and_show_by_the_table() {
    let text =
        r#"profile "t/x" extends="coreweave/gb300-roce" { fabric { addr-family "AF_INET6" } }"#;
    let loaded = load(Source::new("t.kdl", text), &BuiltinsOnly);
    let p = loaded.profile.expect("valid");
    assert_eq!(
        p.fabric.addr_family.map(|a| a.value),
        Some(crate::model::AddrFamily::Ipv6)
    );
    let shown = |path: &str| {
        diff::fields(&p)
            .into_iter()
            .find(|f| f.path == path)
            .map(|f| f.value.value)
    };
    assert_eq!(shown("fabric.addr-family").as_deref(), Some("ipv6"));
    assert_eq!(shown("fabric.kind").as_deref(), Some("roce"));
    assert_eq!(p.rails.port_num.value, 1);
    assert_eq!(shown("rails.port-num").as_deref(), Some("1"));
    assert_eq!(shown("node-pool.sunk-nodeset").as_deref(), Some("false"));
}

/// A required bound key that is missing is reported, and no profile is returned (the section's blank does
/// not escape).
#[test]
fn a_missing_bound_key_leaves_no_profile() {
    let text = r#"profile "t/x" { fabric { traffic-class 3 }; node-pool "p" gpus-per-node=4; rails nics=1 ports=1 pod-device="d" }"#;
    let loaded = load(Source::new("t.kdl", text), &BuiltinsOnly);
    assert!(loaded.profile.is_none());
    assert!(
        loaded
            .problems
            .iter()
            .any(|p| p.code == crate::Code::MissingKey && p.message == "`fabric` needs `kind`"),
        "{:#?}",
        loaded.problems
    );
}
