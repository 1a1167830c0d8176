//! `roce exec`'s decisions on fixture trees the tests build (a fake `/sys`, `/proc`, `/dev` under a
//! temporary directory, as in `doctor.rs`): per-pod GID indices, missing and DOWN ports, link-local-only
//! GIDs, variables already set in the environment, `--allow-degraded`, InfiniBand and DRA NICs, and the DRA
//! device metadata (KEP-5304) naming the NICs the pod's claims were allocated
//! (`tests/fixtures/dra-metadata/`, whose README cites the format).

use std::net::Ipv6Addr;

use roce_inspect::doctor::dra_metadata::{self, CONTAINER_DIR};
use roce_inspect::doctor::{Env, facts};
use roce_inspect::exec::{self, Launch, NicOrigin, Options, Source, Unusable};
use roce_model::{BuiltinsOnly, Code, Domain, Profile, Source as Text, builtin, load};

use crate::support::tree::{Gid, Tree, V1, V2, g};

// ---------------------------------------------------------------------------------------------------
// Fixtures

const GB300: &str = "coreweave/gb300-roce";
const NIXL: &str = "coreweave/gb300-roce-nixl";

fn profile(name: &str) -> Profile {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    assert!(!loaded.has_errors(), "{name}: {:?}", loaded.problems);
    loaded.profile.unwrap()
}

fn profile_text(name: &str, text: &str) -> Profile {
    let loaded = load(Text::new(name, text), &BuiltinsOnly);
    assert!(!loaded.has_errors(), "{name}: {:?}", loaded.problems);
    loaded.profile.unwrap()
}

/// The GID table of one GB300 rail port `k` (0-based), in the layouts the tests need.
#[derive(Clone, Copy, PartialEq)]
enum Gids {
    /// 0/1 host link-local (host netdev `ibs…`), 2/3 host IPv4, 6/7 pod link-local, 8/9 pod IPv4,
    /// 10/11 pod `fd02::` global: the global RoCE v2 GID at 11.
    At11,
    /// Another pod on another node: the pod's entries start at 2, the global RoCE v2 GID is at 5.
    At5,
    /// 10/11 a global `fd02::` GID bound to the host netdev (not in the pod); the pod's at 12/13.
    HostGlobalAt11,
    /// Link-local entries only.
    LinkLocalOnly,
}

fn gids(k: u32, layout: Gids) -> Vec<Gid> {
    let host = format!("ibs{}p{}", k / 4, k % 4);
    let pod = format!("net{}", k + 1);
    let ll = |tag: u16| Ipv6Addr::new(0xfe80, 0, 0, 0, tag, 0x2aff, 0xfe20, k as u16);
    let v4 = |net: u16| Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, net, k as u16 + 1);
    let global = |host_id: u16| {
        Ipv6Addr::new(
            0xfd02,
            (k % 4) as u16,
            0x0100 | (k / 4) as u16,
            0x0101,
            0,
            0,
            0,
            host_id,
        )
    };
    match layout {
        Gids::At11 => vec![
            g(0, ll(0x5e00), V1, &host),
            g(1, ll(0x5e00), V2, &host),
            g(2, v4(0x0a00), V1, &host),
            g(3, v4(0x0a00), V2, &host),
            g(6, ll(0x7a1c), V1, &pod),
            g(7, ll(0x7a1c), V2, &pod),
            g(8, v4(0x0a64), V1, &pod),
            g(9, v4(0x0a64), V2, &pod),
            g(10, global(7), V1, &pod),
            g(11, global(7), V2, &pod),
        ],
        Gids::At5 => vec![
            g(0, ll(0x7a1c), V1, &pod),
            g(1, ll(0x7a1c), V2, &pod),
            g(2, v4(0x0a64), V1, &pod),
            g(3, v4(0x0a64), V2, &pod),
            g(4, global(9), V1, &pod),
            g(5, global(9), V2, &pod),
        ],
        Gids::HostGlobalAt11 => vec![
            g(6, ll(0x7a1c), V1, &pod),
            g(7, ll(0x7a1c), V2, &pod),
            g(10, global(1), V1, &host),
            g(11, global(1), V2, &host),
            g(12, global(7), V1, &pod),
            g(13, global(7), V2, &pod),
        ],
        Gids::LinkLocalOnly => vec![
            g(0, ll(0x5e00), V1, &host),
            g(1, ll(0x5e00), V2, &host),
            g(6, ll(0x7a1c), V1, &pod),
            g(7, ll(0x7a1c), V2, &pod),
        ],
    }
}

/// A GB300 RoCE pod with its 16 Multus networks: RDMA devices ibp0p0…ibp3p3 (port 1), netdevs eth0, lo,
/// net1…net16. `layout(k)` gives rail k's GID table, `state(k)` its port state.
fn gb300_pod(layout: impl Fn(u32) -> Gids, state: impl Fn(u32) -> &'static str) -> Tree {
    let t = Tree::new();
    let mut nets = vec!["lo".to_string(), "eth0".to_string()];
    nets.extend((1..=16).map(|i| format!("net{i}")));
    t.netdevs(&nets);
    for k in 0..16 {
        let dev = format!("ibp{}p{}", k / 4, k % 4);
        t.port(&dev, 1, state(k), "Ethernet", 16, &gids(k, layout(k)));
    }
    t
}

fn healthy() -> Tree {
    gb300_pod(|_| Gids::At11, |_| "4: ACTIVE")
}

/// An HGX H100 InfiniBand node: ibp0…ibp7, link layer InfiniBand.
fn ib_node() -> Tree {
    let t = Tree::new();
    t.netdevs(&["lo".into(), "eth0".into()]);
    for i in 0..8u16 {
        let gid = Ipv6Addr::new(0xfe80, 0, 0, 0, 0xa088, 0xc203, 0x00b1, 0x1000 + i);
        let gids = [Gid {
            index: 0,
            gid,
            kind: V1,
            ndev: None,
        }];
        t.port(&format!("ibp{i}"), 1, "4: ACTIVE", "InfiniBand", 8, &gids);
    }
    t
}

fn decide_env(t: &Tree, name: &str, env: &[(&str, &str)], degraded: bool) -> Launch {
    decide_profile(t, &profile(name), env, degraded)
}

fn decide_profile(t: &Tree, p: &Profile, env: &[(&str, &str)], degraded: bool) -> Launch {
    let mut vars = vec![("PATH", "/usr/bin:/bin"), ("HOME", "/root")];
    vars.extend_from_slice(env);
    let facts = facts::collect(&t.root(), Some(Env::from_pairs(vars)));
    exec::decide(
        &facts,
        p,
        Options {
            allow_degraded: degraded,
        },
    )
}

fn decide(t: &Tree, name: &str) -> Launch {
    decide_env(t, name, &[], false)
}

fn codes(l: &Launch) -> Vec<&'static str> {
    l.problems.iter().map(|p| p.code.as_str()).collect()
}

fn all_hca(n: u32) -> String {
    let ports: Vec<String> = (0..n)
        .map(|k| format!("ibp{}p{}:1", k / 4, k % 4))
        .collect();
    format!("={}", ports.join(","))
}

fn source(l: &Launch, name: &str) -> Source {
    l.decisions
        .iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no decision for {name}: {:#?}", l.decisions))
        .source
}

// ---------------------------------------------------------------------------------------------------
// GID index: what this pod has, not what the profile says

#[test]
fn healthy_pod_gets_exactly_its_rails_and_the_global_gid_index() {
    let l = decide(&healthy(), GB300);
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(codes(&l), Vec::<&str>::new());
    assert_eq!((l.usable, l.rails, l.gid_index), (16, 16, Some(11)));
    assert_eq!(l.env["NCCL_IB_HCA"], all_hca(16));
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "11");
    assert_eq!(source(&l, "NCCL_IB_HCA"), Source::Computed);
    assert_eq!(source(&l, "NCCL_IB_GID_INDEX"), Source::Computed);
    // UCX is pinned to TCP on eth0 by this profile: its devices stay, and it gets no GID index.
    assert_eq!(l.env["UCX_NET_DEVICES"], "eth0");
    assert_eq!(source(&l, "UCX_NET_DEVICES"), Source::Profile);
    assert_eq!(source(&l, "UCX_IB_GID_INDEX"), Source::Unset);
    assert!(!l.env.contains_key("UCX_IB_GID_INDEX"));
    // Every other variable of the plan, unchanged and in the plan's order, with the GID index after the
    // RoCE addressing variables.
    let plan = roce_render::plan::lower(&profile(GB300));
    for v in &plan.env {
        if v.name != "NCCL_IB_HCA" {
            assert_eq!(l.env[&v.name], v.value, "{}", v.name);
            assert_eq!(source(&l, &v.name), Source::Profile, "{}", v.name);
        }
    }
    let names: Vec<&str> = l.env.keys().map(String::as_str).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert_eq!(at("NCCL_IB_GID_INDEX"), at("NCCL_IB_TC") + 1);
    assert_eq!(l.env.len(), plan.env.len() + 1);
    // The computed list is valid NCCL syntax: exact names, one port each.
    let (list, issues) = roce_model::nccl_list::parse(
        &l.env["NCCL_IB_HCA"],
        roce_model::nccl_list::ListKind::IbHca,
    );
    assert!(issues.is_empty() && list.exact() && list.tokens().len() == 16);
    assert!(
        l.summary()
            .contains("16 of 16 rails usable, GID index 11 (RoCE v2 IPv6 in fd02::/16)")
    );
}

#[test]
fn another_pod_with_the_global_gid_at_another_index_gets_that_index() {
    let l = decide(&gb300_pod(|_| Gids::At5, |_| "4: ACTIVE"), GB300);
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "5");
    // The NIXL profile pins UCX_IB_GID_INDEX=11 (the vendor's index): this pod's is 5, and it says so.
    let l = decide(&gb300_pod(|_| Gids::At5, |_| "4: ACTIVE"), NIXL);
    assert_eq!(l.env["UCX_IB_GID_INDEX"], "5");
    let d = l
        .decisions
        .iter()
        .find(|d| d.name == "UCX_IB_GID_INDEX")
        .unwrap();
    assert_eq!(d.source, Source::Computed);
    assert_eq!(d.profile.as_deref(), Some("11"));
    let line = d.to_string();
    assert!(
        line.starts_with("UCX_IB_GID_INDEX=5 (computed: the RoCE v2 IPv6 in fd02::/16 GID")
            && line.ends_with("; the profile has 11)"),
        "{line}"
    );
    // On a pod that does have it at 11, the profile's value is confirmed, not changed.
    let l = decide(&healthy(), NIXL);
    assert_eq!(source(&l, "UCX_IB_GID_INDEX"), Source::Profile);
    assert_eq!(l.env["UCX_IB_GID_INDEX"], "11");
}

#[test]
fn a_global_gid_bound_to_a_host_netdev_is_skipped() {
    // NCCL's own selection would take 11 (in fd02::/16, RoCE v2) — bound to the host's ibsNpP.
    let l = decide(&gb300_pod(|_| Gids::HostGlobalAt11, |_| "4: ACTIVE"), GB300);
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "13");
}

#[test]
fn the_environments_address_family_chooses_the_gid() {
    // AF_INET in the environment wins over the profile's AF_INET6, and the GID follows it: the pod's
    // IPv4-mapped RoCE v2 entry (9; 3 is on the host's netdev). The range stays the profile's, which no
    // IPv4 GID is in — so drop it too.
    let l = decide_env(
        &healthy(),
        GB300,
        &[
            ("NCCL_IB_ADDR_FAMILY", "AF_INET"),
            ("NCCL_IB_ADDR_RANGE", "10.100.0.0/16"),
        ],
        false,
    );
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "9");
    assert_eq!(l.env["NCCL_IB_ADDR_FAMILY"], "AF_INET");
    assert_eq!(source(&l, "NCCL_IB_ADDR_FAMILY"), Source::Environment);
}

#[test]
fn ports_that_disagree_on_the_index_are_not_used() {
    // Rail 5's global GID is at 5, everyone else's at 11: one index for all, so rail 5 is left out.
    let l = decide(
        &gb300_pod(
            |k| if k == 5 { Gids::At5 } else { Gids::At11 },
            |_| "4: ACTIVE",
        ),
        GB300,
    );
    assert_eq!(codes(&l), ["roce::exec::too_few_rails"]);
    assert_eq!(l.gid_index, Some(11));
    let p = &l.ports[5];
    assert_eq!(p.device, "ibp1p1");
    assert_eq!(p.unusable, Some(Unusable::OtherGidIndex(vec![5])));
    assert!(
        l.problems[0]
            .message
            .contains("ibp1p1:1 (its usable GIDs are at index 5, the other rails' at 11)"),
        "{}",
        l.problems[0].message
    );
}

// ---------------------------------------------------------------------------------------------------
// Fail closed

#[test]
fn a_pod_without_rdma_devices_does_not_start() {
    let t = Tree::new();
    t.netdevs(&["lo".into(), "eth0".into()]);
    let l = decide(&t, GB300);
    assert!(!l.can_start());
    assert_eq!(codes(&l), ["roce::exec::no_rdma_devices"]);
    assert!(
        l.problems[0]
            .message
            .contains("profile coreweave/gb300-roce has 16 rails (ibp0p0 … ibp3p3)"),
        "{}",
        l.problems[0].message
    );
    // --allow-degraded: the same problem as a warning, the profile's variables as they are.
    let l = decide_env(&t, GB300, &[], true);
    assert!(l.can_start() && l.degraded);
    assert!(!l.problems[0].is_error());
    assert!(
        l.problems[0]
            .message
            .ends_with("--allow-degraded: the job starts anyway")
    );
    assert_eq!(l.env["NCCL_IB_HCA"], "ibp");
    assert_eq!(source(&l, "NCCL_IB_HCA"), Source::Profile);
    assert!(!l.env.contains_key("NCCL_IB_GID_INDEX"));
    assert!(
        l.summary()
            .ends_with("--allow-degraded: starting without what the profile needs")
    );
}

#[test]
fn down_and_missing_ports_are_too_few_rails() {
    // Rails 2 and 9 DOWN, and rail 15's device is not in the pod.
    let t = gb300_pod(
        |_| Gids::At11,
        |k| {
            if k == 2 || k == 9 {
                "1: DOWN"
            } else {
                "4: ACTIVE"
            }
        },
    );
    t.remove("/sys/class/infiniband/ibp3p3");
    let l = decide(&t, GB300);
    assert!(!l.can_start());
    assert_eq!(codes(&l), ["roce::exec::too_few_rails"]);
    let m = &l.problems[0].message;
    assert!(m.starts_with("13 of the profile's 16 rails are usable: ibp0p2:1 (DOWN, not ACTIVE), ibp2p1:1 (DOWN, not ACTIVE), ibp3p3:1 (missing: no such RDMA device); the job is not started"), "{m}");
    // Degraded: exactly the 13 usable ports, in rail order.
    let l = decide_env(&t, GB300, &[], true);
    assert!(l.can_start() && l.degraded);
    let hca = &l.env["NCCL_IB_HCA"];
    assert!(
        hca.starts_with("=ibp0p0:1,ibp0p1:1,ibp0p3:1,ibp1p0:1,"),
        "{hca}"
    );
    assert_eq!(hca.matches(',').count(), 12);
    assert!(!hca.contains("ibp0p2") && !hca.contains("ibp2p1") && !hca.contains("ibp3p3"));
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "11");
}

#[test]
fn link_local_only_gids_fail_closed() {
    let t = gb300_pod(|_| Gids::LinkLocalOnly, |_| "4: ACTIVE");
    let l = decide(&t, GB300);
    assert!(!l.can_start());
    // One cause, one diagnostic: the GIDs, not "too few rails" on top.
    assert_eq!(codes(&l), ["roce::exec::no_global_gid"]);
    let m = &l.problems[0].message;
    assert!(m.starts_with("16 rail port(s) have no RoCE v2 IPv6 in fd02::/16 GID on a netdev of this namespace: ibp0p0:1 (no usable GID: its GIDs are link-local)"), "{m}");
    assert!(m.contains("0 of the profile's 16 rails are usable"), "{m}");
    // Degraded: no GID index is invented, NCCL_IB_HCA stays the profile's.
    let l = decide_env(&t, GB300, &[], true);
    assert!(l.can_start());
    assert_eq!(source(&l, "NCCL_IB_GID_INDEX"), Source::Unset);
    assert_eq!(l.env["NCCL_IB_HCA"], "ibp");
}

#[test]
fn a_fixed_profile_gid_index_is_replaced_by_the_pods() {
    let p = profile_text(
        "fixed.kdl",
        r#"profile "t/fixed" extends="coreweave/gb300-roce" {
    fabric roce {
        addr-family ipv6
        addr-range "fd02::/16"
        traffic-class 96
        gid-index 3
    }
}"#,
    );
    let l = decide_profile(&gb300_pod(|_| Gids::At5, |_| "4: ACTIVE"), &p, &[], false);
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "5");
    let d = l
        .decisions
        .iter()
        .find(|d| d.name == "NCCL_IB_GID_INDEX")
        .unwrap();
    assert_eq!(
        (d.source, d.profile.as_deref()),
        (Source::Computed, Some("3"))
    );
}

// ---------------------------------------------------------------------------------------------------
// The environment wins

#[test]
fn variables_set_in_the_environment_win_and_are_reported() {
    let l = decide_env(
        &healthy(),
        GB300,
        &[
            ("NCCL_IB_GID_INDEX", "3"),
            ("NCCL_IB_HCA", "ibp0"),
            ("NCCL_IB_TC", "104"),
        ],
        false,
    );
    assert!(l.can_start());
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "3");
    assert_eq!(l.env["NCCL_IB_HCA"], "ibp0");
    assert_eq!(l.env["NCCL_IB_TC"], "104");
    for n in ["NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_IB_TC"] {
        assert_eq!(source(&l, n), Source::Environment, "{n}");
    }
    let line = |n: &str| {
        l.decisions
            .iter()
            .find(|d| d.name == n)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        line("NCCL_IB_GID_INDEX"),
        "NCCL_IB_GID_INDEX=3 (set in the environment, which wins; roce computed 11)"
    );
    assert_eq!(
        line("NCCL_IB_TC"),
        "NCCL_IB_TC=104 (set in the environment, which wins; the profile has 96)"
    );
    assert!(line("NCCL_IB_HCA").starts_with(&format!(
        "NCCL_IB_HCA=ibp0 (set in the environment, which wins; roce computed {}",
        all_hca(16)
    )));
    // The environment's value counts even for a variable roce leaves unset (UCX mode tcp).
    let l = decide_env(&healthy(), GB300, &[("UCX_IB_GID_INDEX", "7")], false);
    assert_eq!(source(&l, "UCX_IB_GID_INDEX"), Source::Environment);
    assert_eq!(l.env["UCX_IB_GID_INDEX"], "7");
}

// ---------------------------------------------------------------------------------------------------
// UCX, InfiniBand, DRA

#[test]
fn ucx_over_rdma_gets_the_usable_devices_the_profile_names() {
    // The NIXL profile's UCX devices are NIC 0's four planes; ibp0p2 is DOWN.
    let t = gb300_pod(
        |_| Gids::At11,
        |k| if k == 2 { "1: DOWN" } else { "4: ACTIVE" },
    );
    let l = decide_env(&t, NIXL, &[], true);
    assert!(l.degraded);
    assert_eq!(l.env["UCX_NET_DEVICES"], "ibp0p0:1,ibp0p1:1,ibp0p3:1");
    assert_eq!(source(&l, "UCX_NET_DEVICES"), Source::Computed);
    // All up: the profile's list as it is.
    let l = decide(&healthy(), NIXL);
    assert_eq!(
        l.env["UCX_NET_DEVICES"],
        "ibp0p0:1,ibp0p1:1,ibp0p2:1,ibp0p3:1"
    );
    assert_eq!(source(&l, "UCX_NET_DEVICES"), Source::Profile);
    // A UCX-over-RDMA profile that names no devices: every usable rail port.
    let p = profile_text(
        "ucx.kdl",
        r#"profile "t/ucx" extends="coreweave/gb300-roce" {
    ucx mode="rdma" tls="rc_mlx5,ud_mlx5,cuda_copy" net-devices="all" gid-index=11
    image rdma-core=54
}"#,
    );
    let l = decide_profile(&healthy(), &p, &[], false);
    assert_eq!(format!("={}", l.env["UCX_NET_DEVICES"]), all_hca(16));
}

#[test]
fn infiniband_gets_its_hcas_and_no_gid_variables() {
    let l = decide(&ib_node(), "coreweave/h100-ib");
    assert!(l.can_start(), "{:#?}", l.problems);
    let hca: Vec<String> = (0..8).map(|i| format!("ibp{i}:1")).collect();
    assert_eq!(l.env["NCCL_IB_HCA"], format!("={}", hca.join(",")));
    assert!(!l.env.contains_key("NCCL_IB_GID_INDEX"));
    assert!(!l.env.contains_key("UCX_IB_GID_INDEX"));
    assert_eq!(l.gid_index, None);
    // A RoCE profile on this node: every rail missing or of the wrong link layer.
    let l = decide(&ib_node(), GB300);
    assert_eq!(codes(&l), ["roce::exec::too_few_rails"]);
}

#[test]
fn dra_nics_are_taken_as_the_claim_gave_them() {
    // DRA NICs: the claim names the devices, so any port of the fabric's link layer is a rail.
    let t = Tree::new();
    let mut nets = vec!["lo".to_string(), "eth0".to_string()];
    nets.extend((1..=16).map(|i| format!("net{i}")));
    t.netdevs(&nets);
    for k in 0..16 {
        t.port(
            &format!("mlx5_{k}"),
            1,
            "4: ACTIVE",
            "Ethernet",
            16,
            &gids(k, Gids::At5),
        );
    }
    let p = profile_text(
        "dra.kdl",
        r#"profile "t/dra" extends="coreweave/gb300-roce" {
    nics dra class="dranet.net" count=16 template="rdma-nics"
}"#,
    );
    let l = decide_profile(&t, &p, &[], false);
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(l.usable, 16);
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "5");
    assert!(l.env["NCCL_IB_HCA"].starts_with("=mlx5_0:1,mlx5_1:1,mlx5_2:1,"));
    // Without DRA the same pod has none of the profile's rails.
    let l = decide(&t, GB300);
    assert_eq!(codes(&l), ["roce::exec::too_few_rails"]);
    // No metadata in this container: the NICs are sysfs's, and the output says nothing new.
    assert_eq!(l.nic_source.source, NicOrigin::Sysfs);
    assert_eq!(l.nic_source.metadata, None);
    assert_eq!(l.nic_source.line(), None);
}

// ---------------------------------------------------------------------------------------------------
// DRA device metadata: the NICs the claims were allocated

const DRANET: &str = "oci/gb200-roce-dranet";

fn metadata_fixture(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dra-metadata");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// Put a metadata file where a driver mounts it: `<kind>/<claim>/<request>/<driver>-metadata.json`.
fn mount_metadata(t: &Tree, kind: &str, claim: &str, request: &str, driver: &str, text: &str) {
    t.file(
        &format!("{CONTAINER_DIR}/{kind}/{claim}/{request}/{driver}-metadata.json"),
        text,
    );
}

/// The GB200 pod's claim `gpu-nic` (template `4gpu-8nic`): its NIC and GPU metadata files.
fn mount_gb200_claim(t: &Tree) {
    let claim = |request, driver, file| {
        mount_metadata(
            t,
            "resourceclaimtemplates",
            "gpu-nic",
            request,
            driver,
            &metadata_fixture(file),
        )
    };
    claim("nic", "dra.net", "dranet-gb200-nic-metadata.json");
    claim("gpu", "gpu.nvidia.com", "gpu-gb200-metadata.json");
}

/// One RDMA device of a RoCE pod with its PCI function (`device` → `/sys/devices/…/<pci>`), the netdevs of
/// that function in this namespace, and port 1's GIDs: link-local at 0/1 and a global IPv6 at 2/3 (RoCE v2
/// at 3), bound to `gid_ndev`.
fn roce_device(t: &Tree, dev: &str, pci: &str, netdevs: &[&str], gid_ndev: &str, host: u16) {
    let function = format!("/sys/devices/pci{}:00/{pci}", &pci[..4]);
    t.mkdir(&function);
    for n in netdevs {
        t.mkdir(&format!("{function}/net/{n}"));
    }
    t.link(
        &format!("/sys/class/infiniband/{dev}/device"),
        &format!("../../..{}", function.trim_start_matches("/sys")),
    );
    let ll = Ipv6Addr::new(0xfe80, 0, 0, 0, 0x9c1c, 0x3aff, 0xfe50, host);
    let global = Ipv6Addr::new(0x2603, 0xc020, 0x0011, 0x0100 + host, 0, 0, 0, 0x17);
    let gids = [
        g(0, ll, V1, gid_ndev),
        g(1, ll, V2, gid_ndev),
        g(2, global, V1, gid_ndev),
        g(3, global, V2, gid_ndev),
    ];
    t.port(dev, 1, "4: ACTIVE", "Ethernet", 8, &gids);
}

/// The OCI GB200 node of `oci/gb200-roce-dranet` as a dranet pod sees it with the RDMA subsystem in shared
/// network-namespace mode: all nine RDMA devices mlx5_0 … mlx5_8, of which the eight NICs of the claim have
/// their netdevs rdma0 … rdma7 in the pod (dranet's example README: mlx5_0 … mlx5_3, mlx5_5 … mlx5_8) and
/// mlx5_4's GIDs sit on the host's netdev.
fn gb200_dranet_pod(skip: &[&str]) -> Tree {
    let t = Tree::new();
    let mut nets = vec!["lo".to_string(), "eth0".to_string()];
    nets.extend((0..8).map(|i| format!("rdma{i}")));
    t.netdevs(&nets);
    let nics = [
        ("mlx5_0", "0000:03:00.0"),
        ("mlx5_1", "0000:03:00.1"),
        ("mlx5_2", "0002:03:00.0"),
        ("mlx5_3", "0002:03:00.1"),
        ("mlx5_5", "0010:03:00.0"),
        ("mlx5_6", "0010:03:00.1"),
        ("mlx5_7", "0012:03:00.0"),
        ("mlx5_8", "0012:03:00.1"),
    ];
    for (k, (dev, pci)) in nics.iter().enumerate() {
        if skip.contains(dev) {
            continue;
        }
        let net = format!("rdma{k}");
        roce_device(&t, dev, pci, &[&net], &net, k as u16);
    }
    roce_device(&t, "mlx5_4", "0004:01:00.0", &[], "enP4p1s0f0", 9);
    t
}

fn claimed_hca() -> String {
    "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1".to_string()
}

#[test]
fn the_dra_metadata_names_the_nics_the_job_uses() {
    let t = gb200_dranet_pod(&[]);
    // Without the metadata: sysfs's nine devices are candidates, mlx5_4 is left out for its host GIDs.
    let before = decide(&t, DRANET);
    assert_eq!(before.nic_source.source, NicOrigin::Sysfs);
    assert_eq!(before.env["NCCL_IB_HCA"], claimed_hca());
    assert!(before.ports.iter().any(|p| p.device == "mlx5_4"));
    assert_eq!(codes(&before), Vec::<&str>::new());

    mount_gb200_claim(&t);
    let l = decide(&t, DRANET);
    assert!(l.can_start(), "{:#?}", l.problems);
    assert_eq!(l.nic_source.source, NicOrigin::DraMetadata);
    assert_eq!((l.usable, l.rails, l.gid_index), (8, 8, Some(3)));
    assert_eq!(l.env["NCCL_IB_HCA"], claimed_hca());
    assert_eq!(l.env["NCCL_IB_GID_INDEX"], "3");
    // Only the claimed devices are looked at: mlx5_4 is not a candidate any more, and said so.
    assert!(l.ports.iter().all(|p| p.device != "mlx5_4"));
    assert_eq!(l.nic_source.not_allocated, ["mlx5_4"]);
    let a = l.nic_source.metadata.as_ref().unwrap();
    assert_eq!(a.nics.len(), 8);
    assert!(
        a.nics
            .iter()
            .all(|n| n.matched_by.as_ref().unwrap().key == "dra.net/rdmaDevice")
    );
    // The GPUs' file of the same claim names no NIC.
    assert_eq!(
        a.other_files,
        ["resourceclaimtemplates/gpu-nic/gpu/gpu.nvidia.com-metadata.json"]
    );
    assert_eq!(
        l.nic_source.line().unwrap(),
        "NICs from the DRA device metadata (resourceclaimtemplates/gpu-nic/nic/dra.net-metadata.json): \
         mlx5_0, mlx5_1, …, mlx5_8 (8); sysfs also shows mlx5_4, which no claim was allocated: not used; \
         no NIC in resourceclaimtemplates/gpu-nic/gpu/gpu.nvidia.com-metadata.json"
    );
    let hca = l
        .decisions
        .iter()
        .find(|d| d.name == "NCCL_IB_HCA")
        .unwrap();
    assert!(
        hca.why.starts_with(
            "8 of the profile's 8 rails usable, of the NICs the DRA device metadata names"
        ),
        "{}",
        hca.why
    );
    // The disagreement is a warning: the job starts.
    assert_eq!(codes(&l), ["roce::exec::dra_metadata_disagrees"]);
    assert!(!l.problems[0].is_error());
    assert!(!l.degraded);
    assert!(
        l.problems[0].message.contains(
            "sysfs shows 1 RDMA device(s) that no claim was allocated: mlx5_4 (not used)"
        ),
        "{}",
        l.problems[0].message
    );
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["nic_source"]["source"], "dra_metadata");
    assert_eq!(v["nic_source"]["not_allocated"][0], "mlx5_4");
    assert_eq!(
        v["nic_source"]["metadata"]["nics"][0]["rdma_device"],
        "mlx5_0"
    );
    assert_eq!(v["problems"][0]["severity"], "warning");
}

#[test]
fn a_nic_the_claim_got_that_sysfs_does_not_show_is_missing() {
    let t = gb200_dranet_pod(&["mlx5_8"]);
    mount_gb200_claim(&t);
    let l = decide(&t, DRANET);
    assert_eq!(
        codes(&l),
        [
            "roce::exec::too_few_rails",
            "roce::exec::dra_metadata_disagrees"
        ]
    );
    let missing = l.ports.iter().find(|p| p.device == "mlx5_8").unwrap();
    assert_eq!(
        missing.unusable,
        Some(Unusable::Missing(
            "allocated by claim gpu-nic request nic (dra.net device gb200-node-17/pci-0012-03-00-1: \
             dra.net/rdmaDevice=mlx5_8, dra.net/pciAddress=0012:03:00.1, dra.net/ifName=rdma7), \
             not in /sys/class/infiniband"
                .to_string()
        ))
    );
    let warning = &l.problems[1].message;
    assert!(
        warning.contains("the pod's claims were allocated 1 NIC(s) that /sys/class/infiniband does not show: dra.net device gb200-node-17/pci-0012-03-00-1 of claim gpu-nic request nic"),
        "{warning}"
    );
    // --allow-degraded: the seven that are here; the warning stays a warning and does not make it degraded
    // on its own.
    let l = decide_env(&t, DRANET, &[], true);
    assert!(l.can_start() && l.degraded);
    assert_eq!(l.usable, 7);
    assert!(!l.env["NCCL_IB_HCA"].contains("mlx5_8"));
}

#[test]
fn on_infiniband_the_claim_not_sysfs_decides_the_hcas() {
    // Every ACTIVE InfiniBand port is a candidate without the metadata (no GID ties a port to the pod), so
    // a pod that sees the node's eight HCAs but was allocated four would get all eight.
    let p = profile_text(
        "ib-dra.kdl",
        r#"profile "t/ib-dra" extends="coreweave/h100-ib" {
    rails nics=4 ports=1 pod-device="ibp{nic}" link-rate=400
    nics dra class="dranet.net" count=4 template="ib-nics"
}"#,
    );
    let t = ib_node();
    let l = decide_profile(&t, &p, &[], false);
    assert_eq!(l.usable, 8);
    let devices = |l: &Launch| -> Vec<String> {
        l.ports
            .iter()
            .filter(|p| p.usable())
            .map(|p| p.device.clone())
            .collect()
    };
    assert_eq!(devices(&l).len(), 8);
    // The claim's file, as the kubelet plugin writes it for a template's claim.
    let nic = |dev: &str, i: u32| {
        format!(
            r#"{{"driver": "dra.net", "pool": "h100-node-3", "name": "pci-0000-{i:02x}-00-0",
              "attributes": {{"dra.net/rdmaDevice": {{"string": "{dev}"}}, "dra.net/rdma": {{"bool": true}},
                             "dra.net/pciAddress": {{"string": "0000:{i:02x}:00.0"}}}}}}"#
        )
    };
    let devices_json: Vec<String> = (2..6).map(|i| nic(&format!("ibp{i}"), 0x10 + i)).collect();
    let json = format!(
        r#"{{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1",
  "metadata": {{"name": "trainer-0-rdma-nics-8vq2d", "namespace": "ml", "uid": "5d1e0c3a-9f4b-4f6e-8a27-0b3c1d2e4f56", "generation": 1}},
  "podClaimName": "rdma-nics",
  "requests": [{{"name": "nic", "devices": [{}]}}]}}
"#,
        devices_json.join(",\n")
    );
    mount_metadata(
        &t,
        "resourceclaimtemplates",
        "rdma-nics",
        "nic",
        "dra.net",
        &json,
    );
    let l = decide_profile(&t, &p, &[], false);
    assert_eq!(l.nic_source.source, NicOrigin::DraMetadata);
    assert_eq!(devices(&l), ["ibp2", "ibp3", "ibp4", "ibp5"]);
    assert_eq!(l.env["NCCL_IB_HCA"], "=ibp2:1,ibp3:1,ibp4:1,ibp5:1");
    assert_eq!(l.nic_source.not_allocated, ["ibp0", "ibp1", "ibp6", "ibp7"]);
    assert_eq!(codes(&l), ["roce::exec::dra_metadata_disagrees"]);
}

#[test]
fn a_rail_the_claims_were_not_allocated_is_missing() {
    // Rails named by the profile, NICs allocated by a claim that names 15 of them: the 16th, although
    // sysfs shows it, is not the pod's.
    let t = healthy();
    let devices: Vec<String> = (0..15)
        .map(|k| {
            format!(
                r#"{{"driver": "dra.net", "pool": "gb300-node-2", "name": "ibp{}p{}",
                "attributes": {{"dra.net/rdmaDevice": {{"string": "ibp{}p{}"}}}}}}"#,
                k / 4,
                k % 4,
                k / 4,
                k % 4
            )
        })
        .collect();
    let json = format!(
        r#"{{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1",
  "metadata": {{"name": "rails", "namespace": "default", "uid": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "generation": 1}},
  "requests": [{{"name": "nic", "devices": [{}]}}]}}"#,
        devices.join(",")
    );
    mount_metadata(&t, "resourceclaims", "rails", "nic", "dra.net", &json);
    let l = decide(&t, GB300);
    assert_eq!(l.nic_source.source, NicOrigin::DraMetadata);
    assert_eq!(
        codes(&l),
        [
            "roce::exec::too_few_rails",
            "roce::exec::dra_metadata_disagrees"
        ]
    );
    let last = l.ports.iter().find(|p| p.device == "ibp3p3").unwrap();
    assert_eq!(
        last.unusable,
        Some(Unusable::Missing(
            "not allocated to this pod: the DRA device metadata names other NICs".to_string()
        ))
    );
    assert_eq!(l.nic_source.not_allocated, ["ibp3p3"]);
    assert_eq!(l.usable, 15);
}

#[test]
fn sriov_vfs_are_found_by_their_pci_address() {
    // The SR-IOV DRA driver's file names no RDMA device: its VFs' PCI addresses find them. The PF mlx5_0
    // is the host's (its netdev is not in the pod).
    let t = Tree::new();
    t.netdevs(&["lo".into(), "eth0".into(), "net1".into(), "net2".into()]);
    roce_device(&t, "mlx5_0", "0000:3b:00.0", &[], "ens1f0np0", 0);
    roce_device(&t, "mlx5_2", "0000:3b:00.2", &["net1"], "net1", 2);
    roce_device(&t, "mlx5_3", "0000:3b:00.3", &["net2"], "net2", 3);
    mount_metadata(
        &t,
        "resourceclaims",
        "rdma-vfs",
        "vf",
        "sriovnetwork.k8snetworkplumbingwg.io",
        &metadata_fixture("sriov-vf-metadata.json"),
    );
    let p = profile_text(
        "sriov.kdl",
        r#"profile "t/sriov" extends="oci/gb200-roce-dranet" {
    rails nics=2 ports=1 pod-device="mlx5_{nic}" pod-netdev="net{index1}"
    nics dra class="sriovnetwork.k8snetworkplumbingwg.io" count=2 template="rdma-vfs" claim="rdma-vfs"
}"#,
    );
    let l = decide_profile(&t, &p, &[], false);
    assert!(l.can_start(), "{:#?}", l.problems);
    let a = l.nic_source.metadata.as_ref().unwrap();
    let matched: Vec<(String, String)> = a
        .nics
        .iter()
        .map(|n| {
            (
                n.rdma_device.clone().unwrap(),
                n.matched_by.as_ref().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        matched,
        [
            (
                "mlx5_2".to_string(),
                "resource.kubernetes.io/pciBusID=0000:3b:00.2".to_string()
            ),
            (
                "mlx5_3".to_string(),
                "resource.kubernetes.io/pciBusID=0000:3b:00.3".to_string()
            ),
        ]
    );
    assert_eq!(l.env["NCCL_IB_HCA"], "=mlx5_2:1,mlx5_3:1");
    assert_eq!(l.nic_source.not_allocated, ["mlx5_0"]);
    // The interface from networkData is read too (a driver that names neither RDMA device nor PCI address
    // is matched by it, `dra_metadata::resolve`).
    assert_eq!(
        a.nics[0].device.interface.as_ref().unwrap().to_string(),
        "networkData.interfaceName=net1"
    );
}

#[test]
fn a_device_is_matched_by_its_interface_when_nothing_else_names_it() {
    let t = Tree::new();
    t.netdevs(&["lo".into(), "eth0".into(), "net1".into()]);
    roce_device(&t, "mlx5_7", "0000:5e:00.1", &["net1"], "net1", 7);
    let json = r#"{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1alpha1",
  "metadata": {"name": "nic", "namespace": "default", "uid": "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "generation": 2},
  "requests": [{"name": "nic", "devices": [{"driver": "nic.example.com", "pool": "node-1", "name": "vf-1",
    "networkData": {"interfaceName": "net1", "ips": ["192.168.40.7/24"], "hardwareAddress": "52:54:00:12:34:56"}}]}]}"#;
    mount_metadata(&t, "resourceclaims", "nic", "nic", "nic.example.com", json);
    let f = facts::collect(&t.root(), Some(Env::from_pairs([("HOME", "/root")])));
    let a = dra_metadata::resolve(f.dra_metadata.as_deref().unwrap(), &f.devices);
    assert_eq!(a.rdma_devices(), ["mlx5_7"]);
    assert_eq!(
        a.nics[0].matched_by.as_ref().unwrap().key,
        "networkData.interfaceName"
    );
    assert_eq!(f.devices[0].pci.as_deref(), Some("0000:5e:00.1"));
}

#[test]
fn metadata_without_nics_leaves_sysfs_as_it_was() {
    let t = gb200_dranet_pod(&[]);
    let before = decide(&t, DRANET);
    // Only the GPUs' file of the claim: no NIC, so sysfs, as before.
    mount_metadata(
        &t,
        "resourceclaimtemplates",
        "gpu-nic",
        "gpu",
        "gpu.nvidia.com",
        &metadata_fixture("gpu-gb200-metadata.json"),
    );
    let l = decide(&t, DRANET);
    assert_eq!(l.nic_source.source, NicOrigin::Sysfs);
    assert_eq!(l.env, before.env);
    assert_eq!(l.ports, before.ports);
    assert_eq!(codes(&l), Vec::<&str>::new());
    assert_eq!(
        l.nic_source.line().unwrap(),
        "NICs from sysfs: the DRA device metadata names no RDMA NIC; \
         no NIC in resourceclaimtemplates/gpu-nic/gpu/gpu.nvidia.com-metadata.json"
    );
    // A NIC file that cannot be read (a late driver's empty file, a broken one): sysfs, and said so.
    mount_metadata(
        &t,
        "resourceclaimtemplates",
        "gpu-nic",
        "nic",
        "dra.net",
        "\n",
    );
    mount_metadata(
        &t,
        "resourceclaims",
        "extra",
        "nic",
        "nic.example.com",
        "{\"kind\":",
    );
    let l = decide(&t, DRANET);
    assert_eq!(l.nic_source.source, NicOrigin::Sysfs);
    assert_eq!(l.env, before.env);
    let line = l.nic_source.line().unwrap();
    assert!(
        line.starts_with(
            "NICs from sysfs: the DRA device metadata names no RDMA NIC it could read;"
        ),
        "{line}"
    );
    assert!(
        line.contains(
            "not read: resourceclaims/extra/nic/nic.example.com-metadata.json (not a JSON stream: "
        ),
        "{line}"
    );
    assert!(
        line.contains("resourceclaimtemplates/gpu-nic/nic/dra.net-metadata.json (empty: a driver that writes its metadata late has not written it)"),
        "{line}"
    );
}

// ---------------------------------------------------------------------------------------------------
// Data

#[test]
fn the_launch_serialises() {
    let l = decide(
        &gb300_pod(
            |_| Gids::At11,
            |k| if k == 0 { "1: DOWN" } else { "4: ACTIVE" },
        ),
        GB300,
    );
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["profile"], GB300);
    assert_eq!(v["fabric"], "roce");
    assert_eq!(v["usable"], 15);
    assert_eq!(v["gid_index"], 11);
    assert_eq!(v["gid_family"], "IPv6");
    assert_eq!(v["env"]["NCCL_IB_GID_INDEX"], "11");
    assert_eq!(v["ports"][0]["unusable"]["kind"], "not_active");
    assert_eq!(v["ports"][0]["unusable"]["detail"], "DOWN");
    assert_eq!(v["decisions"][1]["name"], "NCCL_IB_HCA");
    assert_eq!(v["decisions"][1]["source"], "computed");
    assert_eq!(v["problems"][0]["code"], "roce::exec::too_few_rails");
    assert_eq!(v["problems"][0]["severity"], "error");
}

/// Every `roce::exec::…` code is produced by a test: the decision codes here, the command codes by the CLI
/// tests (`crates/roce-cli/tests/exec.rs`).
#[test]
fn every_exec_code_is_tested() {
    let here = [
        Code::ExecNoRdmaDevices,
        Code::ExecTooFewRails,
        Code::ExecNoGlobalGid,
        Code::ExecDraMetadataDisagrees,
    ];
    // cannot_wrap: `roce apply --exec`, crates/roce-render/tests/exec_wrap.rs
    let cli = [
        Code::ExecCannotWrap,
        Code::ExecCommandNotFound,
        Code::ExecCommandNotExecutable,
    ];
    let all: Vec<Code> = Code::ALL
        .iter()
        .copied()
        .filter(|c| c.domain() == Domain::Exec)
        .collect();
    assert_eq!(all, [here.as_slice(), cli.as_slice()].concat());
    let e = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    let (p, status) = exec::command_failure("./job.sh".as_ref(), &e);
    assert_eq!((p.code, status), (Code::ExecCommandNotExecutable, 126));
}

/// What `roce exec` computes is exactly what the fabric core calls pod-dependent, and a pod rendered with
/// `--exec` leaves those out of its static env — so the computed values reach the job instead of losing to
/// the environment.
#[test]
fn computed_variables_are_the_pod_dependent_ones_and_a_wrapped_pod_does_not_set_them() {
    use roce_model::fabric::env::{POD_DEPENDENT, is_pod_dependent};
    use roce_render::exec::{ExecWrap, static_env};
    let mut computed = std::collections::BTreeSet::new();
    for name in [GB300, NIXL] {
        for t in [
            gb300_pod(
                |_| Gids::At5,
                |k| if k == 1 { "1: DOWN" } else { "4: ACTIVE" },
            ),
            healthy(),
        ] {
            // The environment of a pod rendered with --exec: the plan's variables less the pod-dependent ones.
            let plan = roce_render::plan::lower(&profile(name));
            let wrap = ExecWrap {
                profile: name.to_string(),
                command: Some("true".into()),
            };
            let env: Vec<(String, String)> = static_env(&plan, Some(&wrap))
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect();
            let facts = facts::collect(&t.root(), Some(Env::from_pairs(env)));
            let l = exec::decide(
                &facts,
                &profile(name),
                Options {
                    allow_degraded: true,
                },
            );
            for d in &l.decisions {
                if is_pod_dependent(&d.name) {
                    assert_ne!(d.source, Source::Environment, "{name}: {d}");
                }
                if d.source == Source::Computed {
                    assert!(is_pod_dependent(&d.name), "{name}: {d}");
                    computed.insert(d.name.clone());
                }
            }
        }
    }
    let all: std::collections::BTreeSet<String> =
        POD_DEPENDENT.iter().map(|s| s.to_string()).collect();
    assert_eq!(computed, all);
}

/// A pod rendered with `--exec`, and a Job applied with `--exec`, lint clean against the profile: `roce lint` knows that behind `roce exec`
/// the pod-dependent variables come at start-up.
#[test]
fn a_pod_rendered_with_exec_lints_clean() {
    use roce_inspect::lint::{LintOptions, Linter};
    use roce_render::exec::ExecWrap;
    use roce_render::{RenderOptions, Target};
    for name in builtin::names() {
        let p = profile(name);
        let opts = RenderOptions {
            exec: Some(ExecWrap {
                profile: name.to_string(),
                command: Some("python train.py".into()),
            }),
            ..RenderOptions::default()
        };
        let pod = roce_render::render(&roce_render::plan::lower(&p), Target::Pod, &opts).unwrap();
        let linter = Linter::new(&p, LintOptions::default());
        let report = linter.lint(Text::new("pod.yaml", pod[0].contents.clone()));
        assert!(report.problems.is_empty(), "{name}: {:#?}", report.problems);
        // Without the wrapper the same env is incomplete.
        let bare = pod[0].contents.replace(
            "/usr/local/bin/roce\n    - exec",
            "/usr/local/bin/other\n    - exec",
        );
        let report = linter.lint(Text::new("pod.yaml", bare));
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.code == Code::LintEnvMissing),
            "{name}"
        );
        // `roce apply --exec` on a Job with a command: clean too.
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: x\n        command: [python, train.py]\n";
        let wrap = ExecWrap {
            profile: name.to_string(),
            command: None,
        };
        let applied = roce_render::apply::apply_wrapped(
            &Text::new("job.yaml", job),
            &roce_render::plan::lower(&p),
            &Default::default(),
            &wrap,
        )
        .unwrap();
        let report = linter.lint(Text::new("job.yaml", applied.text));
        assert!(report.problems.is_empty(), "{name}: {:#?}", report.problems);
    }
}
