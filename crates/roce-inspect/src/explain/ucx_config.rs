//! UCX's own verdicts on its configuration (UCX 1.14–1.23, `openucx/ucx`):
//!
//! - `ucp_report_unavailable` (`src/ucp/core/ucp_context.c`) warns `transport 'x' is not available, please use one
//!   or more of: …` for each `UCX_TLS` entry no loaded transport or alias matches, and `network device 'mlx5_0:1'
//!   is not available, please use one or more of: 'eth0'(tcp), …` for each `UCX_NET_DEVICES` entry no resource
//!   has. UCX cannot tell a misspelt name from a transport without a device here, so roce does, from the fabric
//!   core's transport table. Both entries are dropped and UCX goes on with what is left;
//! - `no usable transports/devices (asked …)` (same file) when nothing is left: the context is not created;
//! - `unused environment variable[s]: UCX_A (maybe: UCX_B?); …` (`ucs_config_parser_print_env_vars`,
//!   `src/ucs/config/parser.c`): variables no loaded component declared. `UCX_IB_*`, `UCX_RC_*`, `UCX_DC_*`,
//!   `UCX_UD_*` are declared by the IB transports (`libuct_ib`), so they are unused when UCX has no IB support;
//! - `Invalid value for <NAME>: '<v>'. Expected: …` (`parser.c`): the value does not parse, the context fails;
//! - RoCE GID selection (`src/uct/ib/base/ib_device.c`, `ib_iface.c`): `failed to parse gid type`, `ibv_query_gid
//!   (…) failed`, `failed to find a gid which matches/unmatches the following subnet list`, `both GID_INDEX and
//!   ROCE_SUBNET_LIST are specified`.

use roce_model::Code;
use roce_model::fabric::ucx::{self as facts, TransportClass};
use roce_model::ucx_list::suggest_transport;

use super::Explainer;
use super::line::{after, text};

/// Variable families only UCX's IB transports declare (`uct_ib_iface_config_table` and the rc/dc/ud tables).
const IB_FAMILIES: [&str; 6] = [
    "UCX_IB_",
    "UCX_RC_",
    "UCX_DC_",
    "UCX_UD_",
    "UCX_MLX5_",
    "UCX_RDMA_CM_",
];

impl Explainer {
    /// `… is not available, please use one or more of: …`.
    pub(super) fn ucx_unavailable(&mut self, host: Option<&str>, line: &[u8]) {
        let Some(msg) = warn_text(line) else { return };
        let Some((head, alts)) = msg.split_once(" not available, please use one or more of: ")
        else {
            return;
        };
        let names: Vec<String> = head
            .split('\'')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        let ev = self.evidence(line);
        let key = names.join(",");
        let alts = alts.trim().to_string();
        if head.starts_with("network device") {
            // `'eth0'(tcp), 'lo'(tcp)`: each device with the transports that have it
            let rdma_alt = alts.split(", ").find(|a| {
                a.split_once('(').is_some_and(|(_, tls)| {
                    tls.trim_end_matches(')')
                        .split(',')
                        .any(|t| facts::class(t).is_some_and(TransportClass::opens_rdma_device))
                })
            });
            let asked_rdma = names.iter().any(|n| n.contains(':'));
            self.facts.ucx_asked_rdma |= asked_rdma;
            self.found(Code::ExplainUcxDeviceUnavailable, &key, host, ev, || {
                let list = names.join(", ");
                let help = match rdma_alt {
                    Some(a) => format!(
                        "UCX_NET_DEVICES takes exact names (`<ibdev>:<port>` for RDMA ports, no prefixes); this host has {a}: set UCX_NET_DEVICES to the names `ucx_info -d` prints after `Device:`"
                    ),
                    None if asked_rdma => "UCX sees no RDMA device here, only these: the pod has no RDMA device (request the RDMA resource, attach the Multus networks on RoCE, mount /dev/infiniband), or this UCX was built without verbs (`ucx_info -v` shows `--without-verbs`; NIXL and UCX-Py wheels bundle their own UCX); `ucx_info -d` lists what it can use".to_string(),
                    None => "UCX_NET_DEVICES takes exact names: set it to devices `ucx_info -d` lists".to_string(),
                };
                (
                    format!("UCX_NET_DEVICES names {list}, which UCX does not have here; it uses the rest ({alts})"),
                    help,
                )
            });
            return;
        }
        let title = head.split('\'').next().unwrap_or("").trim().to_string();
        let transports = title.starts_with("transport");
        let mut typos = Vec::new();
        let mut missing = Vec::new();
        for n in &names {
            let bare = n.split(':').next().unwrap_or(n);
            let known =
                facts::transport(bare).is_some() || facts::ALIASES.iter().any(|(a, _)| *a == bare);
            if transports && !known {
                typos.push((n.clone(), suggest_transport(bare)));
            } else {
                missing.push(n.clone());
            }
        }
        let rdma = missing.iter().any(|n| rdma_name(n));
        self.facts.ucx_asked_rdma |= rdma || typos.iter().any(|(_, s)| s.is_some_and(rdma_name));
        self.found(Code::ExplainUcxTransportUnavailable, &key, host, ev, || {
            let mut parts = Vec::new();
            for (n, s) in &typos {
                parts.push(match s {
                    Some(s) => format!("'{n}' is not a UCX transport (did you mean '{s}'?)"),
                    None => format!("'{n}' is not a UCX transport"),
                });
            }
            if !missing.is_empty() {
                parts.push(format!("{} {} no device here", missing.join(", "), if missing.len() > 1 { "have" } else { "has" }));
            }
            let help = if !typos.is_empty() {
                "UCX_TLS names are exact and case-sensitive (`rc_mlx5`, `ud_mlx5`, `dc_mlx5`, `rc`, `ud`, `tcp`, `cuda_copy`, …); UCX ignores a name it does not know and runs on the rest, often TCP: fix the name (`ucx_info -d` lists the transports)".to_string()
            } else if rdma {
                "UCX has no RDMA device for these: the pod lacks its RDMA device (the RDMA resource, the Multus networks on RoCE, /dev/infiniband), the ports are down, or this UCX was built without verbs (`ucx_info -v`); `ucx_info -d` lists the transports it can use".to_string()
            } else {
                "UCX found no device for these transports (cuda_* need a GPU and the CUDA driver in the container; shared-memory ones a /dev/shm): `ucx_info -d` lists what it can use".to_string()
            };
            (
                format!("UCX dropped {} from UCX_TLS: {}; it can use {alts}", names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", "), parts.join("; ")),
                help,
            )
        });
    }

    /// `no usable transports/devices (asked rc_mlx5 on network:mlx5_0:1 …)`.
    pub(super) fn ucx_no_transport(&mut self, host: Option<&str>, line: &[u8]) {
        let asked = after(line, b"(asked ")
            .map(|a| text(a.strip_suffix(b")").unwrap_or(a)))
            .unwrap_or_default();
        let ev = self.evidence(line);
        self.fatal(line, "UCX: no usable transports/devices".into());
        self.found(Code::ExplainUcxNoTransport, "", host, ev, || {
            (
                format!("UCX has no transport and device left to use, so it did not start (asked {asked})"),
                "every transport in UCX_TLS lacks a device in UCX_NET_DEVICES here: fix the names UCX warned about above, or give the pod the devices they need (`ucx_info -d` lists what UCX can use)".into(),
            )
        });
    }

    /// `unused environment variable[s]: UCX_A (maybe: UCX_B?); UCX_C`.
    pub(super) fn ucx_unused_env(&mut self, host: Option<&str>, line: &[u8]) {
        let Some(list) = after(line, b"unused environment variable") else {
            return;
        };
        let list = text(list.strip_prefix(b"s").unwrap_or(list));
        let list = list.trim_start_matches(':').trim();
        let vars: Vec<(String, Option<String>)> = list
            .split("; ")
            .filter(|v| !v.is_empty())
            .map(|v| match v.split_once(" (maybe: ") {
                Some((n, m)) => (
                    n.trim().to_string(),
                    Some(m.trim_end_matches("?)").to_string()),
                ),
                None => (v.trim().to_string(), None),
            })
            .collect();
        let ev = self.evidence(line);
        let key: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
        let key = key.join(",");
        self.found(Code::ExplainUcxUnusedEnv, &key, host, ev, || {
            let ib: Vec<&str> = vars
                .iter()
                .filter(|(n, m)| m.is_none() && IB_FAMILIES.iter().any(|f| n.starts_with(f)))
                .map(|(n, _)| n.as_str())
                .collect();
            let parts: Vec<String> = vars
                .iter()
                .map(|(n, m)| match m {
                    Some(m) => format!("{n} (did you mean {m}?)"),
                    None => n.clone(),
                })
                .collect();
            let help = if !ib.is_empty() && ib.len() == vars.len() {
                format!("{} are read only by UCX's InfiniBand/RoCE transports, which are not loaded: this UCX has no IB support (built without verbs, `ucx_info -v`; or libuct_ib/libibverbs missing), so it cannot use RDMA at all; use a UCX with verbs (and rdma-core in the image)", ib.join(", "))
            } else {
                "UCX applies only variables a loaded component declares: fix the misspelt names (`ucx_info -c` lists them all); a variable of a transport this UCX lacks is ignored too".to_string()
            };
            (format!("UCX ignored {}", parts.join(", ")), help)
        });
    }

    /// `Invalid value for RNDV_THRESH: 'abc'. Expected: …`.
    pub(super) fn ucx_invalid_value(&mut self, host: Option<&str>, line: &[u8]) {
        let Some(rest) = after(line, b"Invalid value for ") else {
            return;
        };
        let rest = text(rest);
        let (name, tail) = rest.split_once(": ").unwrap_or((&rest, ""));
        let name = if name.starts_with("UCX_") {
            name.to_string()
        } else {
            format!("UCX_{name}")
        };
        let value = tail.split('\'').nth(1).unwrap_or("").to_string();
        let expected = tail
            .split_once("Expected: ")
            .map(|(_, e)| e.to_string())
            .unwrap_or_default();
        let ev = self.evidence(line);
        self.fatal(line, format!("UCX: invalid value for {name}"));
        self.found(Code::ExplainUcxInvalidValue, &name.clone(), host, ev, || {
            (
                format!("UCX rejected {name}='{value}' and did not start"),
                if expected.is_empty() {
                    format!("set {name} to a value UCX accepts (`ucx_info -c -f` documents each variable)")
                } else {
                    format!("{name} expects {expected}")
                },
            )
        });
    }

    /// RoCE GID selection failures.
    pub(super) fn ucx_gid(&mut self, host: Option<&str>, line: &[u8]) {
        let m = super::ucx::message_of(line);
        let ev = self.evidence(line);
        self.facts.link.roce = true;
        self.facts.ucx_rdma = true;
        self.fatal(line, format!("UCX: {m}"));
        let key: String = m.chars().filter(|c| !c.is_ascii_digit()).take(48).collect();
        self.found(Code::ExplainUcxGid, &key, host, ev, || {
            let help = if m.contains("both GID_INDEX") {
                "UCX_IB_GID_INDEX and UCX_IB_ROCE_SUBNETS exclude each other: keep one (UCX_IB_ROCE_SUBNETS=<pod subnet>/<len> lets UCX pick the RoCE v2 GID of that subnet on every pod)"
            } else if m.contains("subnet list") {
                "no GID of the port lies in UCX_IB_ROCE_SUBNETS: the RDMA interface of this pod has no address in that subnet (`show_gids` in the pod), or the subnet is written wrong"
            } else {
                "the GID UCX_IB_GID_INDEX names is empty, of another network namespace or of an unknown type on this port (indexes differ per pod with macvlan/SR-IOV): unset UCX_IB_GID_INDEX to let UCX pick a RoCE v2 GID, or set UCX_IB_ROCE_SUBNETS to the pod's RDMA subnet"
            };
            (format!("UCX could not use the RoCE GID: {m}"), help.into())
        });
    }
}

/// Is this `UCX_TLS` name (or alias) an RDMA transport?
fn rdma_name(n: &str) -> bool {
    let bare = n.split(':').next().unwrap_or(n);
    facts::class(bare).is_some_and(TransportClass::opens_rdma_device)
        || facts::ALIASES.iter().any(|(a, members)| {
            *a == bare
                && members.iter().any(|m| {
                    facts::class(m.split(':').next().unwrap_or(m))
                        .is_some_and(TransportClass::opens_rdma_device)
                })
        })
}

/// The text after `UCX  WARN ` (two spaces, as UCX pads the level).
fn warn_text(line: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(line, b"WARN")?;
    Some(text(&line[at + 4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdma_names_and_aliases() {
        assert!(rdma_name("rc_mlx5") && rdma_name("rc") && rdma_name("ib") && rdma_name("dc_x"));
        assert!(
            !rdma_name("tcp") && !rdma_name("cuda") && !rdma_name("sm") && !rdma_name("rcmlx5")
        );
    }
}
