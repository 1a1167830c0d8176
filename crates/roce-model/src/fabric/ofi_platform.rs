//! aws-ofi-nccl's platform defaults: the variables the plugin sets itself on each EC2 instance type.
//!
//! On EC2 aws-ofi-nccl reads the instance type (DMI `product_name`), takes the first entry of its
//! `platform_data_map` that matches it (exact names and POSIX regexes, "first match found wins") and puts
//! that entry's `env` into the process environment before NCCL reads it; it also sets `FI_EFA_FORK_SAFE=1`
//! and, for its own parameters, the entry's protocol, duplicated connections and latency. A value the user
//! already set wins every time: the table goes in with `overwrite=false` (`insert_envvars`,
//! `include/nccl_ofi_environ.h:55-57`) and `update_environment` keeps the process's own value ("Skipping
//! adding %s to environment, already set", `:104-111`); the `OFI_NCCL_*` parameters are set only while their
//! source is still the default (`get_source() == ParamSource::DEFAULT`, `src/platform-aws.cpp:766-790`).
//! Releases before the C++ rewrite (1.15) did the same with `setenv(name, value, 0)`, or after
//! `getenv(name) == NULL` (v1.14.0 08ad665d `src/platform-aws.c:474-476`, `:503`, `:526`, `:534`). So a profile that sets one of these variables replaces the plugin's tuned
//! value without a word, which is what [`defaults`] lets `check` and `lint` say.
//!
//! Read from aws/aws-ofi-nccl v1.21.1 ([`RELEASE`]). Set by the plugin but not compared here, because their
//! value is not the instance type's: `NCCL_TOPO_FILE` (p4d, p4de, g5.48xlarge: a path under the plugin's
//! install prefix, `:742-764`), `NCCL_TUNER_PLUGIN` (the plugin's own library name, `:577-635`),
//! `NCCL_NVLS_ENABLE=0` (only under NCCL before 2.18.5, `:538-575`), `NCCL_PROTO=simple` (only where the
//! device does not order 128-byte writes, `:917-932`).

/// The aws-ofi-nccl release the table is read from.
pub const RELEASE: &str = "aws/aws-ofi-nccl v1.21.1 (2475c4c7)";

/// The plugin's EC2 table: `platform_data_map`, `src/platform-aws.cpp:81-282` in [`RELEASE`].
const FILE: &str = "src/platform-aws.cpp";

/// How a value is read, so that `8388608` and `0x800000` compare as NCCL sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// An NCCL integer, read with `strtoll` (`NCCL_PARAM`).
    NcclInt,
    /// Text compared as written (`NCCL_NETDEVS_POLICY`, libfabric's `FI_EFA_FORK_SAFE`).
    Text,
    /// An aws-ofi-nccl enum: `strcasecmp` against each name (`include/nccl_ofi_param_impl.h:35`).
    OfiEnum,
    /// An aws-ofi-nccl number: `std::istringstream >>` that must consume the whole value (`:95-103`).
    OfiNumber,
    /// An aws-ofi-nccl bool: `true`/`false` in any case, or an integer (`:120-136`).
    OfiBool,
}

/// One variable the plugin sets, with its value and where the plugin says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginDefault {
    /// The variable.
    pub name: &'static str,
    /// The value the plugin sets when the variable is unset.
    pub value: &'static str,
    /// How its readers parse it.
    pub kind: ValueKind,
    /// The line of `src/platform-aws.cpp` in [`RELEASE`] that sets it ([`PluginDefault::source`]).
    pub line: u32,
}

impl PluginDefault {
    /// Where the plugin sets it: `aws/aws-ofi-nccl v1.21.1 (2475c4c7) src/platform-aws.cpp:92`.
    pub fn source(&self) -> String {
        format!("{RELEASE} {FILE}:{}", self.line)
    }
}

/// How an entry's name is matched against the instance type.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    /// `.regex = NULL`: `strcmp` with the name.
    Exact(&'static str),
    /// A regex of the form `^(a|b).*`: the type starts with one of these.
    Prefix(&'static [&'static str]),
    /// `^p([5-9]|[0-9]{2,}).*`: `p`, then a digit 5–9 or at least two digits.
    PSeries,
}

impl Pattern {
    fn matches(self, t: &str) -> bool {
        match self {
            Pattern::Exact(name) => t == name,
            Pattern::Prefix(prefixes) => prefixes.iter().any(|p| t.starts_with(p)),
            Pattern::PSeries => {
                let digits: Vec<u8> = t
                    .strip_prefix('p')
                    .unwrap_or_default()
                    .bytes()
                    .take_while(u8::is_ascii_digit)
                    .collect();
                digits.len() >= 2 || digits.first().is_some_and(|d| (b'5'..=b'9').contains(d))
            }
        }
    }
}

/// One entry of `platform_data_map`.
#[derive(Debug, Clone, Copy)]
struct Platform {
    /// The entry's `.name`.
    name: &'static str,
    pattern: Pattern,
    /// `.env`: `(name, value, line)`.
    env: &'static [(&'static str, &'static str, u32)],
    /// `.default_protocol` and its line.
    protocol: (&'static str, u32),
    /// `.default_dup_conns` and its line.
    dup_conns: (&'static str, u32),
    /// `.latency` and its line.
    latency: (&'static str, u32),
}

const BUFF: &str = "NCCL_BUFFSIZE";
const P2P: &str = "NCCL_P2P_NET_CHUNKSIZE";
const NVLSTREE: &str = "NCCL_NVLSTREE_MAX_CHUNKSIZE";
const NVLS: &str = "NCCL_NVLS_CHUNKSIZE";
const FLUSH: &str = "NCCL_NET_FORCE_FLUSH";
const NETDEVS: &str = "NCCL_NETDEVS_POLICY";

/// `platform_data_map` in its order (the first match wins, `src/platform-aws.cpp:43-47`).
#[rustfmt::skip]
const PLATFORMS: &[Platform] = &[
    Platform { name: "p4d.24xlarge", pattern: Pattern::Exact("p4d.24xlarge"), env: &[(BUFF, "8388608", 92), (P2P, "524288", 93)], protocol: ("SENDRECV", 89), dup_conns: ("0", 86), latency: ("75.0", 87) },
    Platform { name: "p4de.24xlarge", pattern: Pattern::Exact("p4de.24xlarge"), env: &[(BUFF, "8388608", 106), (P2P, "524288", 107)], protocol: ("SENDRECV", 103), dup_conns: ("0", 100), latency: ("75.0", 101) },
    Platform { name: "p3dn.24xlarge", pattern: Pattern::Exact("p3dn.24xlarge"), env: &[], protocol: ("SENDRECV", 117), dup_conns: ("4", 114), latency: ("150.0", 115) },
    Platform { name: "p5.4xlarge", pattern: Pattern::Exact("p5.4xlarge"), env: &[], protocol: ("SENDRECV", 128), dup_conns: ("0", 125), latency: ("75.0", 126) },
    Platform { name: "p5/p5e", pattern: Pattern::Prefix(&["p5.", "p5e."]), env: &[(BUFF, "8388608", 142), (P2P, "524288", 143), (NVLSTREE, "524288", 144), (NVLS, "524288", 145), (FLUSH, "0", 146)], protocol: ("RDMA", 139), dup_conns: ("0", 136), latency: ("75.0", 137) },
    Platform { name: "p5en/p6-b200", pattern: Pattern::Prefix(&["p5en", "p6-b200"]), env: &[(BUFF, "8388608", 167), (P2P, "524288", 168), (NVLSTREE, "524288", 169), (NVLS, "524288", 170), (FLUSH, "0", 171), (NETDEVS, "max:1", 172)], protocol: ("RDMA", 156), dup_conns: ("0", 153), latency: ("35.0", 154) },
    Platform { name: "p6-b300", pattern: Pattern::Prefix(&["p6-b300"]), env: &[(BUFF, "8388608", 187), (P2P, "524288", 188), (NVLSTREE, "524288", 189), (NVLS, "524288", 190), (FLUSH, "0", 191)], protocol: ("RDMA", 182), dup_conns: ("0", 179), latency: ("35.0", 180) },
    Platform { name: "p-series", pattern: Pattern::PSeries, env: &[(BUFF, "8388608", 214), (P2P, "524288", 215), (NVLSTREE, "524288", 216), (NVLS, "524288", 217), (FLUSH, "0", 218)], protocol: ("RDMA", 211), dup_conns: ("0", 208), latency: ("35.0", 209) },
    Platform { name: "g5.48xlarge", pattern: Pattern::Exact("g5.48xlarge"), env: &[], protocol: ("SENDRECV", 228), dup_conns: ("0", 225), latency: ("75.0", 226) },
    Platform { name: "g7e.8xlarge", pattern: Pattern::Exact("g7e.8xlarge"), env: &[(BUFF, "8388608", 242), (P2P, "524288", 243)], protocol: ("SENDRECV", 239), dup_conns: ("0", 236), latency: ("35.0", 237) },
    Platform { name: "g7e", pattern: Pattern::Prefix(&["g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge"]), env: &[(BUFF, "8388608", 256), (P2P, "524288", 257)], protocol: ("RDMA", 253), dup_conns: ("0", 250), latency: ("35.0", 251) },
    Platform { name: "Trainium Family", pattern: Pattern::Prefix(&["trn"]), env: &[], protocol: ("RDMA", 267), dup_conns: ("0", 264), latency: ("75.0", 265) },
    Platform { name: "inf", pattern: Pattern::Prefix(&["inf"]), env: &[], protocol: ("SENDRECV", 278), dup_conns: ("0", 275), latency: ("75.0", 276) },
];

/// `OFI_NCCL_PROTOCOL`: aws-ofi-nccl's transfer protocol (`include/nccl_ofi_param.h:121`).
pub const OFI_NCCL_PROTOCOL: &str = "OFI_NCCL_PROTOCOL";
/// `OFI_NCCL_NIC_DUP_CONNS`: connections per NIC (`include/nccl_ofi_param.h:57`).
pub const OFI_NCCL_NIC_DUP_CONNS: &str = "OFI_NCCL_NIC_DUP_CONNS";
/// `OFI_NCCL_NET_LATENCY`: the latency the plugin reports to NCCL's tuner (`include/nccl_ofi_param.h:221`).
pub const OFI_NCCL_NET_LATENCY: &str = "OFI_NCCL_NET_LATENCY";
/// `OFI_NCCL_SKIP_NICS_WITHOUT_ACCEL_AT_SAME_PCI_LEVEL` (`include/nccl_ofi_param.h:338-339`).
pub const OFI_NCCL_SKIP_NICS: &str = "OFI_NCCL_SKIP_NICS_WITHOUT_ACCEL_AT_SAME_PCI_LEVEL";

/// What aws-ofi-nccl ([`RELEASE`]) sets itself on `instance_type`, in the order it does: the matching
/// entry's `env`, `FI_EFA_FORK_SAFE=1`, then its own parameters. Empty for no instance type. An instance
/// type the table does not know gets `FI_EFA_FORK_SAFE` and the fall-through latency only.
///
/// ```
/// use roce_model::fabric::ofi_platform::defaults;
/// let p5 = defaults("p5.48xlarge");
/// assert!(p5.iter().any(|d| d.name == "NCCL_NVLS_CHUNKSIZE" && d.value == "524288"));
/// assert!(!p5.iter().any(|d| d.name == "NCCL_NETDEVS_POLICY")); // p5en and p6-b200 only
/// assert!(defaults("p5en.48xlarge").iter().any(|d| d.name == "NCCL_NETDEVS_POLICY"));
/// assert!(!defaults("p5.4xlarge").iter().any(|d| d.name == "NCCL_BUFFSIZE")); // its own entry, no env
/// ```
pub fn defaults(instance_type: &str) -> Vec<PluginDefault> {
    let mut out = Vec::new();
    if instance_type.is_empty() {
        return out;
    }
    let platform = PLATFORMS.iter().find(|p| p.pattern.matches(instance_type));
    if let Some(p) = platform {
        for &(name, value, line) in p.env {
            let kind = if name == NETDEVS {
                ValueKind::Text
            } else {
                ValueKind::NcclInt
            };
            out.push(PluginDefault {
                name,
                value,
                kind,
                line,
            });
        }
    }
    // On every NVIDIA platform, libfabric 1.13 and later (`:718-723`).
    out.push(PluginDefault {
        name: super::provider::FI_EFA_FORK_SAFE,
        value: "1",
        kind: ValueKind::Text,
        line: 723,
    });
    if instance_type.starts_with("p6e-gb200") {
        // `PLATFORM_NAME_P6E_GB200`, `include/platform-aws.h:22`; set at `:680-684`.
        out.push(PluginDefault {
            name: OFI_NCCL_SKIP_NICS,
            value: "true",
            kind: ValueKind::OfiBool,
            line: 683,
        });
    }
    match platform {
        Some(p) => {
            // The protocol only while libfabric's provider is EFA, which an EFA profile requires (`:788-790`).
            out.push(PluginDefault {
                name: OFI_NCCL_PROTOCOL,
                value: p.protocol.0,
                kind: ValueKind::OfiEnum,
                line: p.protocol.1,
            });
            out.push(PluginDefault {
                name: OFI_NCCL_NIC_DUP_CONNS,
                value: p.dup_conns.0,
                kind: ValueKind::OfiNumber,
                line: p.dup_conns.1,
            });
            out.push(PluginDefault {
                name: OFI_NCCL_NET_LATENCY,
                value: p.latency.0,
                kind: ValueKind::OfiNumber,
                line: p.latency.1,
            });
        }
        None => out.push(PluginDefault {
            name: OFI_NCCL_NET_LATENCY,
            value: "75.0",
            kind: ValueKind::OfiNumber,
            line: 782,
        }),
    }
    out
}

/// The table entry aws-ofi-nccl uses for `instance_type` (its `.name`, as its log's "Using platform block
/// %s" names it, `:339`), when one matches.
pub fn platform_name(instance_type: &str) -> Option<&'static str> {
    PLATFORMS
        .iter()
        .find(|p| p.pattern.matches(instance_type))
        .map(|p| p.name)
}

/// Whether `have` is the value `d` as its reader parses both: `0x800000` is NCCL's `8388608`, `rdma` is
/// aws-ofi-nccl's `RDMA`, `75` its `75.0`.
///
/// ```
/// use roce_model::fabric::ofi_platform::{defaults, same_value};
/// let d = defaults("p5.48xlarge");
/// let buff = d.iter().find(|d| d.name == "NCCL_BUFFSIZE").unwrap();
/// assert!(same_value(buff, "0x800000") && !same_value(buff, "4194304"));
/// let proto = d.iter().find(|d| d.name == "OFI_NCCL_PROTOCOL").unwrap();
/// assert!(same_value(proto, "rdma") && !same_value(proto, "SENDRECV"));
/// ```
pub fn same_value(d: &PluginDefault, have: &str) -> bool {
    match d.kind {
        ValueKind::NcclInt => {
            let (a, whole_a) = super::nccl::strtoll(have);
            let (b, _) = super::nccl::strtoll(d.value);
            whole_a && a == b
        }
        ValueKind::Text => have == d.value,
        ValueKind::OfiEnum => have.eq_ignore_ascii_case(d.value),
        ValueKind::OfiNumber => match (ofi_number(have), ofi_number(d.value)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
        ValueKind::OfiBool => ofi_bool(have).is_some() && ofi_bool(have) == ofi_bool(d.value),
    }
}

/// `std::istringstream >> double` that must reach the end: leading whitespace skipped, nothing after.
fn ofi_number(s: &str) -> Option<f64> {
    s.trim_start().parse::<f64>().ok()
}

/// aws-ofi-nccl's bool: `true`/`false` in any case, else an integer (non-zero is true).
fn ofi_bool(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        s.trim_start().parse::<i64>().ok().map(|v| v != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_entry_wins_as_in_the_plugin() {
        // p5.4xlarge has its own entry before p5/p5e's regex, p5en its own before p-series.
        assert_eq!(platform_name("p5.4xlarge"), Some("p5.4xlarge"));
        assert_eq!(platform_name("p5.48xlarge"), Some("p5/p5e"));
        assert_eq!(platform_name("p5e.48xlarge"), Some("p5/p5e"));
        assert_eq!(platform_name("p5en.48xlarge"), Some("p5en/p6-b200"));
        assert_eq!(platform_name("p6-b200.48xlarge"), Some("p5en/p6-b200"));
        assert_eq!(platform_name("p6-b300.48xlarge"), Some("p6-b300"));
        assert_eq!(platform_name("p6e-gb200.36xlarge"), Some("p-series"));
        assert_eq!(platform_name("p10.48xlarge"), Some("p-series"));
        assert_eq!(platform_name("p4d.24xlarge"), Some("p4d.24xlarge"));
        assert_eq!(platform_name("p4d.12xlarge"), None);
        assert_eq!(platform_name("g7e.12xlarge"), Some("g7e"));
        assert_eq!(platform_name("g7e.2xlarge"), None);
        assert_eq!(platform_name("trn2.48xlarge"), Some("Trainium Family"));
        assert_eq!(platform_name("m5.large"), None);
    }

    #[test]
    fn p6e_gb200_skips_nics_without_an_accelerator() {
        let d = defaults("p6e-gb200.36xlarge");
        let skip = d.iter().find(|d| d.name == OFI_NCCL_SKIP_NICS).unwrap();
        assert!(same_value(skip, "1") && same_value(skip, "TRUE") && !same_value(skip, "0"));
        assert!(
            !defaults("p5.48xlarge")
                .iter()
                .any(|d| d.name == OFI_NCCL_SKIP_NICS)
        );
        // unknown instance: the fork-safe flag and the fall-through latency only
        let m = defaults("m5.large");
        let names: Vec<&str> = m.iter().map(|d| d.name).collect();
        assert_eq!(names, ["FI_EFA_FORK_SAFE", OFI_NCCL_NET_LATENCY]);
        assert!(same_value(&m[1], "75") && !same_value(&m[1], "75us"));
        assert!(defaults("").is_empty());
    }

    #[test]
    fn every_default_cites_the_release_and_a_line() {
        for t in [
            "p4d.24xlarge",
            "p5en.48xlarge",
            "p6e-gb200.36xlarge",
            "m5.large",
        ] {
            for d in defaults(t) {
                // inside the table (81-282) or `init` (650-793)
                assert!((81..=793).contains(&d.line), "{}: {}", d.name, d.source());
            }
        }
    }
}
