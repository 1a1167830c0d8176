//! `--profile`: what a profile expects (its lowered [`Plan`](roce_render::plan::Plan)) against what the log shows.

use roce_model::Code;
use roce_model::fabric::env as vars;
use roce_model::fabric::provider::Provider;
use roce_model::fabric::{nccl, nccl_versions};
use roce_model::model::FabricKind;
use roce_render::plan::{Consumer, lower};

use super::{Explanation, Finding, ProfileCheck, Transport, verdict};

/// Variables NCCL echoes whenever they are set and NCCL_DEBUG_SUBSYS includes ENV, so their absence from a log
/// with env echoes means the process never had them. (Other knobs are read, and echoed, only when the code
/// path that needs them runs — GID and TC knobs only when an IB connection is made.)
fn echoed_when_set(name: &str, e: &Explanation) -> bool {
    if name == vars::NCCL_SOCKET_IFNAME.name {
        true
    } else if name == vars::NCCL_IB_HCA.name {
        e.ib_probed
    } else if name == vars::NCCL_NET_PLUGIN.name || name == vars::NCCL_PROFILER_PLUGIN.name {
        // Both echoed from 2.28 on (`src/plugin/net.cc`, `src/plugin/profiler.cc:55`): the profile's
        // Inspector (`NCCL_PROFILER_PLUGIN`) missing from such a log was never loaded.
        e.nccl_version
            .as_deref()
            .is_some_and(|v| !verdict::version_lt(v, 2, 28))
    } else {
        false
    }
}

/// What the comparison steps share: the profile, its lowered plan, and the name findings quote.
struct Expected<'a> {
    profile: &'a roce_model::Profile,
    plan: roce_render::plan::Plan,
    name: String,
}

pub(super) fn compare(e: &mut Explanation, profile: &roce_model::Profile) -> Vec<Finding> {
    let plan = lower(profile);
    let p = Expected {
        profile,
        name: plan.profile.clone(),
        plan,
    };
    let mut out = Vec::new();
    out.extend(transport(&p, e));
    out.extend(disable_meant_zero(&p, e));
    let (check, env) = environment(&p, e);
    out.extend(env);
    out.extend(unread_by_release(&p, e));
    out.extend(other_release(&p, e));
    out.extend(plugin_not_off(&p, e));
    out.extend(rails(&p, e));
    e.profile = Some(check);
    out
}

/// The transport the fabric needs, against the one the log shows (none shown: nothing to judge).
fn transport(p: &Expected, e: &Explanation) -> Option<Finding> {
    let name = &p.name;
    // the transport the fabric needs
    // aws-ofi-nccl carries NCCL over libfabric (EFA), whatever link the fabric block names
    let want = match (
        &p.profile.nccl_net.provider.value,
        p.profile.fabric.kind.value,
    ) {
        (Provider::Ofi, _) => Transport::Ofi,
        (_, FabricKind::Roce) => Transport::Roce,
        (_, FabricKind::InfiniBand) => Transport::Ib,
    };
    let fabric = p.profile.fabric_name();
    if e.transport == Transport::Unknown || e.transport == want {
        return None;
    }
    let ev = e
        .findings
        .iter()
        .find(|f| f.code == Code::ExplainSocketFallback)
        .and_then(|f| f.evidence.clone());
    let help = if e.transport == Transport::Socket {
        "the RDMA devices did not reach the job: see the socket_fallback finding; `roce lint` checks the manifest and `roce doctor` the pod".to_string()
    } else {
        format!(
            "the job ran on a {} fabric, not the profile's {fabric}: use the profile that describes this cluster",
            e.transport.as_str()
        )
    };
    Some(
        Finding::new(
            Code::ExplainProfileTransport,
            format!(
                "profile {name} expects GPUDirect RDMA over {fabric}, but the log shows transport {}",
                e.transport.as_str()
            ),
            help,
        )
        .at(ev),
    )
}

/// The log-only `disable_read_as_zero` findings, replaced by a judgement that knows which knobs the
/// profile sets to 0 on purpose.
fn disable_meant_zero(p: &Expected, e: &mut Explanation) -> Vec<Finding> {
    // a `NCCL_*_DISABLE` knob the profile sets to 0 was read as meant: judge them again with the plan's env
    let meant_zero = |name: &str| {
        p.plan
            .env
            .iter()
            .any(|v| v.name == name && v.value.trim().parse::<i64>() == Ok(0))
    };
    e.findings
        .retain(|f| f.code != Code::ExplainDisableReadAsZero);
    verdict::disable_read_as_zero(&e.env, &e.env_lines, &meant_zero)
}

/// The profile's NCCL and UCX variables against the environment the log echoes: which could be checked,
/// which differ, and which NCCL would have echoed had the process had them.
fn environment(p: &Expected, e: &Explanation) -> (ProfileCheck, Vec<Finding>) {
    let name = &p.name;
    let mut check = ProfileCheck {
        name: name.clone(),
        checked: Vec::new(),
        unverified: Vec::new(),
    };
    let mut out = Vec::new();
    // the environment NCCL (and UCX) saw
    let any_echo = e.env.keys().any(|k| vars::consumer_of(k) == Consumer::Nccl);
    for var in p
        .plan
        .env
        .iter()
        .filter(|v| matches!(v.consumer, Consumer::Nccl | Consumer::Ucx))
    {
        match e.env.get(&var.name) {
            Some(seen) => {
                check.checked.push(var.name.clone());
                if !same_value(&var.value, seen) {
                    out.push(
                        Finding::new(
                            Code::ExplainProfileEnvMismatch,
                            format!("profile {name} sets {}={}, but the job saw {}={seen}", var.name, var.value, var.name),
                            format!(
                                "render the job's environment from the profile (`roce render --profile {name}`) instead of setting {} by hand, and check nothing overrides it (an image ENV, ~/.nccl.conf, /etc/nccl.conf)",
                                var.name
                            ),
                        )
                        .at(e.env_lines.get(&var.name).cloned()),
                    );
                }
            }
            None if any_echo && echoed_when_set(&var.name, e) => {
                check.checked.push(var.name.clone());
                out.push(Finding::new(
                    Code::ExplainProfileEnvMissing,
                    format!(
                        "profile {name} sets {}={}, but NCCL never saw it (NCCL echoes it when set)",
                        var.name, var.value
                    ),
                    "the rendered environment did not reach this process: check the pod spec or the sbatch script the job ran with",
                ));
            }
            None => check.unverified.push(var.name.clone()),
        }
    }
    (check, out)
}

/// The profile's variables the log's NCCL release does not read: NCCL ignores unknown `NCCL_*` names
/// silently, so setting one is a no-op the user should hear about.
fn unread_by_release(p: &Expected, e: &Explanation) -> Vec<Finding> {
    let name = &p.name;
    let mut out = Vec::new();
    let Some(version) = e
        .nccl_version
        .as_deref()
        .and_then(nccl_versions::NcclVersion::parse)
    else {
        return out;
    };
    for var in p.plan.env.iter().filter(|v| v.consumer == Consumer::Nccl) {
        if nccl_versions::reads(&var.name, version) != Some(false) {
            continue;
        }
        let Some(h) = nccl_versions::history(&var.name) else {
            continue;
        };
        let when = match (h.since, h.removed) {
            (Some(since), _) if version < since => format!("NCCL reads it from {since} on"),
            (_, Some(removed)) => format!("NCCL stopped reading it in {removed}"),
            _ => continue,
        };
        out.push(Finding::new(
            Code::ExplainProfileEnvUnread,
            format!(
                "profile {name} sets {}={}, but this job's NCCL {version} does not read it ({when}: {}): it has no effect here",
                var.name, var.value, h.source
            ),
            format!(
                "run an NCCL that reads {} (the image's libnccl, or the nvidia-nccl wheel PyTorch loads), or leave it out of the profile for this image",
                var.name
            ),
        ));
    }
    out
}

/// The log's NCCL release against the one the profile names (`nccl version`): only another minor counts.
fn other_release(p: &Expected, e: &Explanation) -> Option<Finding> {
    let (Some(named), Some(seen)) = (
        p.profile.nccl.version.as_ref(),
        e.nccl_version
            .as_deref()
            .and_then(nccl_versions::NcclRelease::printed),
    ) else {
        return None;
    };
    (named.value.minor() != seen.minor())
        .then(|| release_finding(&p.plan, &p.name, named.value, seen))
}

/// A net plugin NCCL loaded although the profile turned plugins off: the profile's environment did not
/// win over the image's.
fn plugin_not_off(p: &Expected, e: &Explanation) -> Option<Finding> {
    let name = &p.name;
    // a net plugin the profile turned off
    let no_plugin = p.plan.env.iter().any(|v| {
        v.name == vars::NCCL_NET_PLUGIN.name && v.value.eq_ignore_ascii_case(nccl::NO_PLUGIN)
    });
    let (plugin, ev) = e.net_plugin.as_ref().filter(|_| no_plugin)?;
    let help = if nccl::is_spectrum_x_plugin(plugin) {
        format!(
            "the Spectrum-X plugin is the image's default libnccl-net.so ({} first on LD_LIBRARY_PATH, as in CoreWeave's nccl-tests images since coreweave/nccl-tests#100) and NCCL_NET_PLUGIN=none did not reach the job: render the environment from the profile; the vendor reserves the plugin for jobs of about {} GPUs or more",
            nccl::SPECTRUM_X_PLUGIN_DIR,
            nccl::SPCX_MIN_GPUS
        )
    } else {
        "NCCL_NET_PLUGIN=none did not reach the job (an image ENV or LD_LIBRARY_PATH that puts a plugin's libnccl-net.so first wins otherwise): render the environment from the profile".to_string()
    };
    Some(
        Finding::new(
            Code::ExplainProfileNetPlugin,
            format!(
                "profile {name} sets NCCL_NET_PLUGIN=none (NCCL's internal IB transport), but NCCL loaded the net plugin {plugin}"
            ),
            help,
        )
        .at(Some(ev.clone())),
    )
}

/// The RDMA devices NCCL used against the profile's rails: foreign devices first (the wrong cluster's
/// names), else the rails it did not use.
fn rails(p: &Expected, e: &Explanation) -> Option<Finding> {
    let name = &p.name;
    // the rails
    if e.devices.is_empty() {
        return None;
    }
    let rails = p.profile.rail_list();
    let port = p.profile.rails.port_num.value;
    let expected: Vec<&str> = rails.iter().map(|r| r.pod_device.as_str()).collect();
    let foreign: Vec<String> = e
        .devices
        .iter()
        .filter(|d| !expected.contains(&d.name.as_str()))
        .map(|d| d.name.clone())
        .collect();
    let missing: Vec<&str> = expected
        .iter()
        .filter(|n| {
            !e.devices
                .iter()
                .any(|d| d.name == **n && d.port.is_none_or(|n| n == port))
        })
        .copied()
        .collect();
    if !foreign.is_empty() {
        Some(Finding::new(
            Code::ExplainProfileDevices,
            format!(
                "NCCL used RDMA devices that are not the profile's rails: {} (profile {name} expects {})",
                foreign.join(", "),
                summary(&expected)
            ),
            "the job ran where the device names differ from the profile's `rails pod-device` pattern: fix the pattern or use the profile for this cluster",
        ))
    } else if !missing.is_empty() {
        Some(Finding::new(
            Code::ExplainProfileDevices,
            format!(
                "NCCL used {} of the profile's {} rails; missing: {}",
                expected.len() - missing.len(),
                expected.len(),
                summary(&missing)
            ),
            "a rail without its device loses bandwidth: check that every rail's NAD is attached (Multus annotation) and its port is ACTIVE",
        ))
    } else {
        None
    }
}

/// `roce::explain::profile_nccl_release`: the job ran another minor than the profile names. A warning when
/// the version table says something the profile sets reads differently in the two (read by one only, a
/// default changed, a value syntax accepted by one only), else said (info): the profile was judged for a
/// release the job did not run, and nothing roce knows of differs.
fn release_finding(
    plan: &roce_render::plan::Plan,
    name: &str,
    named: nccl_versions::NcclRelease,
    seen: nccl_versions::NcclRelease,
) -> Finding {
    let (a, b) = (named.minor(), seen.minor());
    let changes = nccl_versions::defaults_between(a, b).unwrap_or_default();
    let mut differ = Vec::new();
    for var in plan.env.iter().filter(|v| v.consumer == Consumer::Nccl) {
        let (ra, rb) = (
            nccl_versions::reads(&var.name, a),
            nccl_versions::reads(&var.name, b),
        );
        if let (Some(ra), Some(rb)) = (ra, rb)
            && ra != rb
        {
            let (yes, no) = if ra { (a, b) } else { (b, a) };
            differ.push(format!("{} (read by {yes}, not by {no})", var.name));
            continue;
        }
        if let Some(d) = changes.iter().find(|d| d.name == var.name) {
            differ.push(format!(
                "{} (default {} before {}, {} from then: {})",
                var.name, d.before, d.since, d.after, d.source
            ));
            continue;
        }
        for s in nccl_versions::SYNTAX.iter().filter(|s| s.name == var.name) {
            if s.used_in(&var.value) && s.accepted_by(named) != s.accepted_by(seen) {
                differ.push(format!(
                    "{}={} ({} is read from {} on: {})",
                    var.name,
                    var.value,
                    s.what,
                    s.since_text(),
                    s.source
                ));
            }
        }
    }
    let mut f = if differ.is_empty() {
        let mut f = Finding::new(
            Code::ExplainProfileNcclRelease,
            format!(
                "this job ran NCCL {seen}, profile {name} names NCCL {named}: nothing the profile sets reads differently in the two, as far as roce's NCCL table knows"
            ),
            format!(
                "set `nccl version=\"{seen}\"` in the profile so that `roce check` judges it for the release the job runs"
            ),
        );
        f.severity = roce_model::Severity::Info;
        f
    } else {
        Finding::new(
            Code::ExplainProfileNcclRelease,
            format!(
                "this job ran NCCL {seen}, profile {name} names NCCL {named}, and they read what the profile sets differently: {}",
                differ.join("; ")
            ),
            format!(
                "run the release the profile names, or set `nccl version=\"{seen}\"` and run `roce check` to see what the profile means on it"
            ),
        )
    };
    f.count = 1;
    f
}

fn summary(names: &[&str]) -> String {
    if names.len() <= 6 {
        names.join(", ")
    } else {
        format!("{}, … ({} in all)", names[..4].join(", "), names.len())
    }
}

/// Does the value NCCL echoed equal the profile's? Integer echoes are compared as NCCL parses the profile's text.
fn same_value(expected: &str, seen: &str) -> bool {
    if expected == seen {
        return true;
    }
    match seen.parse::<i64>() {
        Ok(n) => strtoll(expected) == Some(n),
        Err(_) => false,
    }
}

/// C `strtoll(s, NULL, 0)`: leading blanks, a sign, `0x` hex, leading-`0` octal, stop at the first non-digit;
/// `None` on overflow (NCCL then keeps its default).
fn strtoll(s: &str) -> Option<i64> {
    let s = s.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.starts_with('0') {
        (8, s)
    } else {
        (10, s)
    };
    let mut n: i64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        n = n.checked_mul(i64::from(radix))?.checked_add(i64::from(d))?;
    }
    Some(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(name: &str) -> roce_model::Profile {
        let source = roce_model::builtin::source(name).unwrap();
        roce_model::load(source, &roce_model::BuiltinsOnly)
            .profile
            .unwrap()
    }

    fn codes(log: &str, profile: &str) -> Vec<Code> {
        let mut e = super::super::explain_str("t", log);
        e.compare_profile(&loaded(profile));
        e.codes()
    }

    #[test]
    fn a_net_plugin_the_profile_turned_off() {
        let spcx = "h:1:1 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_spectrum-x_plugin/lib/libnccl-net.so\n";
        assert!(codes(spcx, "coreweave/gb300-roce").contains(&Code::ExplainProfileNetPlugin));
        let mut e = super::super::explain_str("t", spcx);
        e.compare_profile(&loaded("coreweave/gb300-roce"));
        let f = e
            .findings
            .iter()
            .find(|f| f.code == Code::ExplainProfileNetPlugin)
            .unwrap();
        assert!(f.help.contains("Spectrum-X"), "{}", f.help);
        // the internal transport only: nothing to report
        let internal = "h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so\nh:1:1 [0] NCCL INFO Initialized NET plugin IB\n";
        assert!(!codes(internal, "coreweave/gb300-roce").contains(&Code::ExplainProfileNetPlugin));
        // a profile that names a plugin expects one: aws/p5-efa runs aws-ofi-nccl
        let ofi = "h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v9)\n";
        assert!(codes(ofi, "coreweave/gb300-roce").contains(&Code::ExplainProfileNetPlugin));
        assert!(!codes(ofi, "aws/p5-efa").contains(&Code::ExplainProfileNetPlugin));
    }

    /// A profile that loads the Inspector, against 2.28+ logs that echo the environment: NCCL echoes
    /// `NCCL_PROFILER_PLUGIN` whenever it is set, so a log without the echo never had it; 2.27 does not
    /// echo it, so nothing is said there.
    #[test]
    fn the_inspector_the_profile_loads_is_echoed_from_2_28() {
        let text = r#"profile "t/i" extends="coreweave/h100-ib" { nccl { inspector "json" } }"#;
        let profile = roce_model::load(
            roce_model::Source::new("i.kdl", text),
            &roce_model::BuiltinsOnly,
        )
        .profile
        .unwrap();
        let missing = |log: &str| -> Vec<String> {
            let mut e = super::super::explain_str("t", log);
            e.compare_profile(&profile);
            e.findings
                .iter()
                .filter(|f| f.code == Code::ExplainProfileEnvMissing)
                .map(|f| f.message.clone())
                .collect()
        };
        let head = |v: &str| {
            format!(
                "h:1:1 [0] NCCL INFO NCCL version {v}+cuda12.9\nh:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
            )
        };
        let off = missing(&head("2.28.9"));
        assert!(
            off.iter()
                .any(|m| m.contains("NCCL_PROFILER_PLUGIN=inspector")),
            "{off:?}"
        );
        let on = format!(
            "{}h:1:1 [0] NCCL INFO NCCL_PROFILER_PLUGIN set by environment to inspector\n",
            head("2.28.9")
        );
        assert!(
            !missing(&on)
                .iter()
                .any(|m| m.contains("NCCL_PROFILER_PLUGIN")),
            "{:?}",
            missing(&on)
        );
        assert!(
            !missing(&head("2.27.7"))
                .iter()
                .any(|m| m.contains("NCCL_PROFILER_PLUGIN"))
        );
    }

    #[test]
    fn an_efa_profile_expects_ofi() {
        // aws-ofi-nccl on p5en (NVIDIA/nccl#1597): the EFA profile is content, an InfiniBand one is not
        let log = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/explain-corpus/gh-nccl-1597-ofi-efa-p5en.log"
        ))
        .unwrap();
        assert!(!codes(&log, "aws/p5-efa").contains(&Code::ExplainProfileTransport));
        assert!(codes(&log, "coreweave/h100-ib").contains(&Code::ExplainProfileTransport));
    }

    fn release_findings(log_version: &str, profile: &str) -> Vec<Finding> {
        let log = format!("h:1:1 [0] NCCL INFO NCCL version {log_version}\n");
        let p = roce_model::load(
            roce_model::Source::with_format("p.kdl", profile, roce_model::Format::Kdl),
            &roce_model::BuiltinsOnly,
        )
        .profile
        .unwrap();
        let mut e = super::super::explain_str("t", &log);
        e.compare_profile(&p);
        e.findings
            .into_iter()
            .filter(|f| f.code == Code::ExplainProfileNcclRelease)
            .collect()
    }

    #[test]
    fn the_log_release_against_the_profile_release() {
        let named = |v: &str, knobs: &str| {
            format!(
                r#"profile "t/v" extends="coreweave/h100-ib" {{ nccl version="{v}" {{ knobs {{ {knobs} }} }} }}"#
            )
        };
        // same minor, another patch: silent
        assert!(release_findings("2.28.9+cuda12.9", &named("2.28.3", "")).is_empty());
        // another minor, NCCL_IB_TIMEOUT's default changed between them (18 before 2.23, 20 from 2.23)
        let f = release_findings("2.21.5+cuda12.4", &named("2.28", r#"NCCL_IB_TIMEOUT "22""#));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, roce_model::Severity::Warning);
        assert!(
            f[0].message
                .contains("NCCL_IB_TIMEOUT (default 18 before 2.23"),
            "{}",
            f[0].message
        );
        // a variable the older release does not read (NCCL_NET_GDR_C2C from 2.26)
        let f = release_findings("2.25.1", &named("2.28", r#"NCCL_NET_GDR_C2C "1""#));
        assert_eq!(f[0].severity, roce_model::Severity::Warning);
        assert!(
            f[0].message.contains("read by 2.28, not by 2.25"),
            "{}",
            f[0].message
        );
        // another minor and nothing the profile sets differs between them: said, not counted
        let f = release_findings("2.29.7", &named("2.28", r#"NCCL_IB_TIMEOUT "22""#));
        assert_eq!(
            f[0].severity,
            roce_model::Severity::Info,
            "{}",
            f[0].message
        );
        // a profile without a release: nothing to compare
        let plain = r#"profile "t/v" extends="coreweave/h100-ib" {}"#;
        assert!(release_findings("2.21.5", plain).is_empty());
    }

    #[test]
    fn hca_rail_fields_differ_between_releases() {
        let hca = "ibp0:1:0:0,ibp1:1:1:0,ibp2:1:2:0,ibp3:1:3:0,ibp4:1:4:0,ibp5:1:5:0,ibp6:1:6:0,ibp7:1:7:0";
        let p = format!(
            r#"profile "t/v" extends="coreweave/h100-ib" {{ nccl version="2.31" ib-hca="{hca}" }}"#
        );
        let f = release_findings("2.29.7", &p);
        assert_eq!(f[0].severity, roce_model::Severity::Warning);
        assert!(
            f[0].message.contains("is read from 2.30.7 on"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn strtoll_reads_like_nccl() {
        assert_eq!(strtoll("96"), Some(96));
        assert_eq!(strtoll("0x1A"), Some(26));
        assert_eq!(strtoll("010"), Some(8));
        assert_eq!(strtoll("08"), Some(0));
        assert_eq!(strtoll("3abc"), Some(3));
        assert_eq!(strtoll("true"), Some(0));
        assert_eq!(strtoll("-1"), Some(-1));
        assert_eq!(strtoll("99999999999999999999"), None);
    }

    #[test]
    fn values_compare_as_nccl_reads_them() {
        assert!(same_value("96", "96"));
        assert!(same_value("true", "0"));
        assert!(same_value("010", "8"));
        assert!(!same_value("96", "106"));
        assert!(!same_value("ibp", "mlx5"));
        assert!(same_value("ibp", "ibp"));
    }
}
