//! UCX rules (RDMA mode for MPI/NIXL, TCP mode for NCCL-only jobs).

use crate::fabric::ucx::{self as facts, TlsConcern};
use crate::model::{FabricKind, Profile, Rail, UcxMode};
use crate::problem::{Code, Problem};
use crate::source::Origin;
use crate::suggest;
use crate::ucx_list::UcxIssueKind;

/// The problem for one malformed `UCX_TLS` / `UCX_NET_DEVICES` entry.
pub(crate) fn list_issue(env: &str, kind: &UcxIssueKind, origin: Origin) -> Problem {
    let code = if env == crate::fabric::env::UCX_TLS.name {
        Code::UcxTls
    } else {
        Code::UcxNetDevice
    };
    let (message, help) = match kind {
        UcxIssueKind::UnknownTransport { name, suggestion } => (
            format!("{env}: `{name}` is not a UCX transport"),
            match suggestion {
                Some(s) => format!("did you mean `{s}`? UCX names are exact and case-sensitive"),
                None => "see `ucx_info -d` for the transports UCX knows".to_string(),
            },
        ),
        UcxIssueKind::AllNotAlone => (
            format!("{env}: `all` must be the only entry"),
            "use `all` alone, or list the transports".to_string(),
        ),
        UcxIssueKind::Empty => (
            format!("{env}: empty entry"),
            "remove the stray comma".to_string(),
        ),
        UcxIssueKind::Duplicate { name } => (
            format!("{env}: `{name}` is listed twice"),
            "list each entry once".to_string(),
        ),
        UcxIssueKind::TooMany { limit } => (
            format!("{env}: more than {limit} entries"),
            "UCX ignores entries past its limit; shorten the list".to_string(),
        ),
        UcxIssueKind::NegatedAll => (
            format!(
                "{env}: `^all` is read as `all`: UCX drops the negation and enables every transport"
            ),
            "list the transports to use, or to exclude, by name".to_string(),
        ),
        UcxIssueKind::Whitespace => (
            format!("{env}: UCX does not trim spaces, so this entry can never match"),
            "remove the spaces around commas".to_string(),
        ),
        UcxIssueKind::CaretInNetDevices => (
            format!(
                "{env} has no `^` exclusion: the `^` becomes part of a device name that does not exist"
            ),
            "list the devices to use, by exact name".to_string(),
        ),
        UcxIssueKind::BadPort { text } => (
            format!("{env}: `{text}` is not a port number"),
            "write RDMA devices as `device:port`, e.g. `ibp0p0:1`".to_string(),
        ),
    };
    let mut problem = Problem::new(code, message).at(origin, "").help(help);
    if !kind.is_error() {
        problem.severity = crate::problem::Severity::Warning;
    }
    problem
}

/// Check the UCX block.
pub(crate) fn check(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    let u = &p.ucx;
    let port = p.rails.port_num.value;

    if let Some((text, devices)) = u
        .net_devices
        .as_ref()
        .and_then(|d| Some((d.text(), d.devices().devices()?)))
    {
        // Only where they are compared (RDMA mode): a `format!` per rail was about 8 % of loading the
        // default profile, which pins UCX to TCP.
        let rail_devices: Vec<String> = match u.mode.value {
            UcxMode::Rdma => rails
                .iter()
                .map(|r| format!("{}:{port}", r.pod_device))
                .collect(),
            _ => Vec::new(),
        };
        for d in devices {
            let origin = text.origin.sub(d.range());
            let full = match d.port() {
                Some(port) => format!("{}:{port}", d.name()),
                None => d.name().to_string(),
            };
            match u.mode.value {
                UcxMode::Rdma if !rail_devices.contains(&full) => out.push(
                    Problem::new(
                        Code::UcxNetDevice,
                        format!("UCX_NET_DEVICES names `{full}`, which is not one of the pod's RDMA devices"),
                    )
                    .at(origin, "no such device")
                    .help(match suggest::closest(&full, rail_devices.iter().map(String::as_str)) {
                        Some(c) => format!("did you mean `{c}`? RDMA devices are `device:port` with the pod's device names"),
                        None => format!("use the pod's RDMA devices as `device:port`, e.g. `{}`", rail_devices.first().map_or("ibp0:1", String::as_str)),
                    }),
                ),
                UcxMode::Tcp if d.port().is_some() || rails.iter().any(|r| r.pod_device == d.name()) => out.push(
                    Problem::new(
                        Code::UcxNetDevice,
                        format!("UCX is pinned to TCP but UCX_NET_DEVICES names the RDMA device `{full}`"),
                    )
                    .at(origin, "RDMA device")
                    .help("in TCP mode name the front-end netdev (`net-devices=\"eth0\"`), or switch to `mode=\"rdma\"`"),
                ),
                _ => {}
            }
        }
    }

    if let Some(tls) = &u.tls {
        tls_rules(tls.text(), tls.list(), u.mode.value, out);
    }

    if u.mode.value != UcxMode::Rdma {
        let dead = [
            ("gid-index", u.gid_index.as_ref().map(|g| g.origin)),
            ("max-rma-rails", u.max_rma_rails.as_ref().map(|r| r.origin)),
        ];
        for (key, origin) in dead {
            if let Some(origin) = origin {
                out.push(
                    Problem::new(
                        Code::InvalidValue,
                        format!(
                            "`ucx {key}` has no effect in {} mode",
                            u.mode.value.as_str()
                        ),
                    )
                    .at(origin, "ignored")
                    .at(u.mode.origin, "UCX mode")
                    .help(format!(
                        "remove `{key}`, or set `mode=\"rdma\"` if UCX should use RDMA"
                    )),
                );
            }
        }
        return;
    }

    let gid = u.gid_index.or(p.fabric.gid_index);
    if p.fabric.kind.value == FabricKind::Roce && gid.is_none() {
        out.push(
            Problem::new(Code::UcxGidIndex, "UCX over RoCE needs an explicit GID index")
                .at(u.mode.origin, "RDMA mode on RoCE")
                .help("add `gid-index=N` to `ucx`, the RoCE v2 GID of the IPv6 global address: 11 on CoreWeave GB300 (`show_gids` or `ibv_devinfo -v` on a node lists the GIDs). UCX's automatic choice prefers IPv4 GIDs"),
        );
    }

    let ucx_devices = match u.net_devices.as_ref().and_then(|d| d.devices().devices()) {
        Some(d) => d.len(),
        None => rails.len(),
    };
    if let Some(max) = &u.max_rma_rails
        && max.value as usize > ucx_devices
    {
        out.push(
            Problem::new(
                Code::RmaRails,
                format!("UCX_MAX_RMA_RAILS={} but UCX has {ucx_devices} devices", max.value),
            )
            .at(max.origin, "")
            .help(format!("set `max-rma-rails` to at most {ucx_devices}, or list more devices in `net-devices`")),
        );
    }

    match &p.image.rdma_core {
        None => out.push(
            Problem::new(Code::RdmaCore, "UCX RDMA mode needs the image's rdma-core version declared")
                .at(u.mode.origin, "RDMA mode")
                .help(format!(
                    "add `image rdma-core={}` (or newer) once the image ships it: UCX built against rdma-core < {} initialises but transfers fail with `vendor_err 0x89`",
                    u.min_rdma_core.value, u.min_rdma_core.value
                )),
        ),
        Some(v) if v.value < u.min_rdma_core.value => out.push(
            Problem::new(
                Code::RdmaCore,
                format!("the image ships rdma-core {} but UCX RDMA needs ≥ {}", v.value, u.min_rdma_core.value),
            )
            .at(v.origin, "too old")
            .at(u.mode.origin, "RDMA mode")
            .help(format!(
                "use an image with rdma-core ≥ {} and UCX built against it (e.g. the ghcr.io/coreweave/nccl-tests images); otherwise transfers fail with `vendor_err 0x89` while NCCL tests still pass",
                u.min_rdma_core.value
            )),
        ),
        Some(_) => {}
    }
}

/// `UCX_TLS` against the UCX mode, as the fabric core judges it ([`facts::tls_concerns`]); `lint` asks the
/// same question of manifests.
fn tls_rules(
    text: &crate::source::Spanned<String>,
    tls: &crate::ucx_list::TlsList,
    mode: UcxMode,
    out: &mut Vec<Problem>,
) {
    for concern in facts::tls_concerns(tls, mode) {
        let problem = match &concern {
            TlsConcern::GenericVerbs(names) => {
                // Point at each element that enables a flagged transport, as written (`rc_v` included).
                for item in tls.items().iter().filter(|item| {
                    let enables = |t: &str| {
                        item.name() == t
                            || crate::ucx_list::alias_members(item.name())
                                .is_some_and(|m| m.contains(&t))
                    };
                    !item.aux() && names.iter().any(|t| enables(t))
                }) {
                    out.push(
                        Problem::new(
                            Code::VerbsTransport,
                            format!("`{}` enables the generic verbs transport without its mlx5 counterpart; ConnectX NICs need the mlx5 transports", item.name()),
                        )
                        .at(text.origin.sub(item.range()), "verbs transport")
                        .help("use `rc_mlx5,ud_mlx5,cuda_copy` (the CoreWeave RoCE guide's list)"),
                    );
                }
                continue;
            }
            TlsConcern::NoCuda => Problem::new(
                Code::UcxNoCuda,
                format!("UCX_TLS={} {concern}", text.value),
            )
            .at(text.origin, "")
            .help("add `cuda_copy`: with an explicit UCX_TLS, GPU buffers need the cuda transports"),
            TlsConcern::NoRdma => Problem::new(
                Code::UcxTls,
                format!("UCX_TLS={} {concern}", text.value),
            )
            .at(text.origin, "")
            .help("add `rc_mlx5,ud_mlx5` (RC needs UD for wire-up); `gga_mlx5` is on-device DMA and carries nothing between nodes"),
            TlsConcern::NoTcp => Problem::new(
                Code::UcxTls,
                format!("UCX_TLS={} {concern}", text.value),
            )
            .at(text.origin, "")
            .help("use `tls=\"tcp\"` (or drop `tls`: TCP mode emits it)"),
            TlsConcern::RdmaInTcpMode(_) => Problem::new(
                Code::UcxTls,
                format!("UCX_TLS={} {concern}", text.value),
            )
            .at(text.origin, "")
            .help("use `tls=\"tcp\"`, or set `mode=\"rdma\"` if UCX should use RDMA"),
        };
        out.push(problem);
    }
}
