//! NCCL rules: list filters against the pod's devices, integer knob syntax, plugin and debug settings.

use crate::model::{Profile, Rail};
use crate::nccl_list::TokenIssueKind;
use crate::problem::{Code, Problem};
use crate::source::Origin;

use crate::fabric::nccl::{SPCX_MIN_GPUS, is_string_knob, strtoll};

/// The problem for one list token NCCL would drop or misread.
pub(crate) fn token_issue(env: &str, kind: &TokenIssueKind, origin: Origin) -> Problem {
    let (message, help) = match kind {
        TokenIssueKind::NameTooLong { len } => (
            format!("{env}: a {len}-character name overflows NCCL's 64-byte buffer"),
            "device and interface names are at most 63 characters; use a shorter prefix"
                .to_string(),
        ),
        TokenIssueKind::BadPort { text } => match leading_int(text) {
            Some(port) if port >= 1 => (
                format!(
                    "{env}: port `{text}` is not a clean number; NCCL reads it as {port} and ignores the rest"
                ),
                format!("write `device:{port}`"),
            ),
            port => (
                format!(
                    "{env}: port `{text}` never matches: NCCL reads it as {} and verbs ports start at 1, so this device is silently dropped",
                    port.unwrap_or(0)
                ),
                "write `device:N` with N ≥ 1 (verbs ports are 1-based), or leave the port out"
                    .to_string(),
            ),
        },
        TokenIssueKind::PastLimit { limit } => (
            format!("{env}: NCCL reads only the first {limit} entries; this one is ignored"),
            "use a shorter prefix that covers several devices (e.g. `ibp`)".to_string(),
        ),
        TokenIssueKind::Whitespace => (
            format!("{env}: NCCL does not trim spaces, so this name can never match"),
            "remove the spaces around commas".to_string(),
        ),
        TokenIssueKind::LiteralCaret => (
            format!("{env}: after `=` a `^` is part of the name, not an exclusion"),
            "write `^=name` to exclude an exact name".to_string(),
        ),
        TokenIssueKind::ExtraFields => (
            format!(
                "{env}: text after the port is ignored by NCCL before 2.30.7, which reads it as rail and plane"
            ),
            "write `device:port` only, or name the release with `nccl version=\"2.30.7\"` (or later) if the image runs one".to_string(),
        ),
        TokenIssueKind::PortIgnored => (
            format!("{env}: a port on an interface name is parsed and then ignored"),
            "remove the `:port` part".to_string(),
        ),
        TokenIssueKind::MatchesNothing => (
            format!("{env}: this list matches no device at all"),
            "`^` alone excludes everything; remove the value to let NCCL choose".to_string(),
        ),
        TokenIssueKind::LiteralEquals => (
            format!(
                "{env}: `=` is only special at the start of the list; here it is part of the name"
            ),
            "put `=` once, at the start (`=a,b` makes the whole list exact)".to_string(),
        ),
        TokenIssueKind::EmptyName => (
            format!("{env}: an entry with a port but no name is skipped"),
            "write `device:port`".to_string(),
        ),
        TokenIssueKind::OneCharIgnored => (
            format!("{env}: NCCL ignores a one-character value and auto-selects instead"),
            "give the full interface name or a longer prefix".to_string(),
        ),
    };
    let mut problem = Problem::new(Code::DroppedToken, message)
        .at(origin, "")
        .help(help);
    if !kind.is_error() {
        problem.severity = crate::problem::Severity::Warning;
    }
    problem
}

/// The integer `atoi` reads from the start of `text` (`None` when there are no digits).
fn leading_int(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'-') => (-1, &t[1..]),
        Some(b'+') => (1, &t[1..]),
        _ => (1, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i64>().ok().map(|v| sign * v)
}

/// Check the NCCL block.
pub(crate) fn check(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    let devices: Vec<&str> = rails.iter().map(|r| r.pod_device.as_str()).collect();

    // A name left with a placeholder is reported by the rails check; matching against it only adds noise.
    let names_resolved = !devices.iter().any(|d| d.contains('{'));
    if let Some(hca) = p.nccl.ib_hca.as_ref().filter(|_| names_resolved) {
        let matched = hca.list().matching(&devices);
        if matched.is_empty() {
            out.push(
                Problem::new(
                    Code::HcaMatchesNothing,
                    format!(
                        "NCCL_IB_HCA={} matches none of the pod's {} RDMA devices ({}): NCCL will silently fall back to TCP sockets",
                        hca.text().value,
                        devices.len(),
                        summarize(&devices)
                    ),
                )
                .at(hca.text().origin, "matches nothing")
                .at(p.rails.pod_device.origin, "the pod's RDMA devices")
                .help(format!(
                    "use a prefix of the rail devices, e.g. `ib-hca=\"{}\"`",
                    crate::nccl_list::hca_prefix(&devices)
                )),
            );
        } else if matched.len() < devices.len() {
            let unmatched: Vec<&str> = devices
                .iter()
                .copied()
                .filter(|d| !matched.contains(d))
                .collect();
            out.push(
                Problem::new(
                    Code::HcaPartial,
                    format!(
                        "NCCL_IB_HCA={} leaves {} of {} rails unused: {}",
                        hca.text().value,
                        unmatched.len(),
                        devices.len(),
                        summarize(&unmatched)
                    ),
                )
                .at(hca.text().origin, "")
                .help("widen the filter to every rail (e.g. the common prefix) unless leaving rails idle is deliberate"),
            );
        }
        for (token, extra) in hca.list().prefix_collisions(&devices) {
            let t = &hca.list().tokens()[token];
            out.push(
                Problem::new(
                    Code::PrefixCollision,
                    format!(
                        "`{}` is a prefix match: it also selects {}",
                        t.name(),
                        extra.join(", ")
                    ),
                )
                .at(hca.text().origin.sub(t.range()), "prefix match")
                .help(format!(
                    "write `={}` (exact names for the whole list) if only `{}` is meant",
                    hca.text().value,
                    t.name()
                )),
            );
        }
    }

    socket_ifname(p, rails, out);
    knobs(p, out);
    net_plugin(p, out);
    debug_level(p, out);
}

/// Bootstrap's sockets on the RDMA backend interfaces.
fn socket_ifname(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    if let Some(sock) = &p.nccl.socket_ifname {
        let backend: Vec<&str> = rails
            .iter()
            .flat_map(|r| [r.pod_netdev.as_deref(), r.host_port.as_deref()])
            .flatten()
            .collect();
        let hits = sock.list().matching(&backend);
        if !sock.list().exclude() && !hits.is_empty() {
            out.push(
                Problem::new(
                    Code::SocketOnRdma,
                    format!(
                        "NCCL_SOCKET_IFNAME={} selects {} RDMA backend interface{} ({})",
                        sock.text().value,
                        hits.len(),
                        if hits.len() == 1 { "" } else { "s" },
                        summarize(&hits)
                    ),
                )
                .at(sock.text().origin, "backend interfaces")
                .help("point bootstrap at the front-end interface (`socket-ifname=\"eth0\"`); the rails are for RDMA traffic, not for NCCL's TCP control path"),
            );
        }
    }
}

/// Knobs that a typed field generates, and integer knobs NCCL would misread.
fn knobs(p: &Profile, out: &mut Vec<Problem>) {
    for (key, value) in &p.nccl.knobs {
        if let Some(field) = super::typed_field(key)
            && generates(p, key)
        {
            out.push(
                Problem::new(
                    Code::KnobShadowsField,
                    format!("knob {key} is set by the `{field}` field"),
                )
                .at(value.origin, "")
                .help(format!("remove the knob and set `{field}` instead")),
            );
            continue;
        }
        if !is_string_knob(key) {
            int_syntax(key, &value.value, value.origin, out);
        }
    }
}

/// The Spectrum-X plugin on a job too small for it.
fn net_plugin(p: &Profile, out: &mut Vec<Problem>) {
    if let Some(plugin) = &p.nccl.net_plugin {
        let spcx = plugin.value.eq_ignore_ascii_case("spcx")
            || plugin.value.to_ascii_lowercase().contains("spectrum");
        if spcx && p.job_gpus().is_none_or(|g| g < SPCX_MIN_GPUS) {
            let size = p
                .job_gpus()
                .map_or("an unsized job".to_string(), |g| format!("a {g}-GPU job"));
            out.push(
                Problem::new(
                    Code::NetPlugin,
                    format!("the Spectrum-X NCCL plugin is meant for jobs of about {}+ GPUs, not {size}", thousands(SPCX_MIN_GPUS)),
                )
                .at(plugin.origin, "")
                .help("use `net-plugin=\"none\"` (NCCL's built-in IB verbs transport) unless the job really spans ~10,000 GPUs; size it with `job nodes=N`"),
            );
        }
    }
}

/// Verbose NCCL logging in a production profile.
fn debug_level(p: &Profile, out: &mut Vec<Problem>) {
    if let Some(debug) = &p.nccl.debug
        && p.production.value
        && ["INFO", "TRACE"].contains(&debug.value.to_ascii_uppercase().as_str())
    {
        out.push(
            Problem::new(
                Code::DebugInProduction,
                format!("NCCL_DEBUG={} in a production profile", debug.value),
            )
            .at(debug.origin, "")
            .help("INFO logs thousands of lines per rank; use `debug=\"WARN\"` in production, or mark the profile `production #false` for validation runs"),
        );
    }
}

fn int_syntax(key: &str, value: &str, origin: Origin, out: &mut Vec<Problem>) {
    let (parsed, whole) = strtoll(value);
    let octal = value.len() > 1
        && value.starts_with('0')
        && value[1..].starts_with(|c: char| c.is_ascii_digit());
    let (message, help) = if value.is_empty() {
        (
            format!("{key} is empty: NCCL treats it as unset and keeps the default"),
            "give the number, or remove the knob to keep NCCL's default".to_string(),
        )
    } else if !whole {
        let lower = value.trim().to_ascii_lowercase();
        let help = if ["true", "yes", "on", "y", "enable", "enabled"].contains(&lower.as_str()) {
            "write `\"1\"` to enable (`\"0\"` to disable): NCCL knobs are numbers".to_string()
        } else if ["false", "no", "off", "n", "disable", "disabled"].contains(&lower.as_str()) {
            "write `\"0\"` to disable: NCCL knobs are numbers".to_string()
        } else if let Some(n) = with_unit(value.trim()) {
            format!("write the number in full, `\"{n}\"`: NCCL knows no unit suffixes")
        } else {
            "write the whole number, in decimal digits only".to_string()
        };
        let shown = value.escape_debug();
        (
            format!(
                "NCCL reads {key}={shown} as {parsed} (it parses integers with strtoll and ignores what does not fit)"
            ),
            help,
        )
    } else if octal {
        let decimal = value.trim_start_matches('0');
        (
            format!("NCCL reads {key}={value} as octal: {parsed}"),
            format!(
                "drop the leading zero: `\"{}\"` (or write `\"{parsed}\"` if octal {value} is what you meant)",
                if decimal.is_empty() { "0" } else { decimal }
            ),
        )
    } else {
        return;
    };
    out.push(
        Problem::new(Code::IntSyntax, message)
            .at(origin, "")
            .help(help),
    );
}

/// `512K` → 524288, `1M` → 1048576, `2G` → 2147483648 (binary units, as NCCL's sizes are bytes).
fn with_unit(value: &str) -> Option<u64> {
    let (digits, unit) = value.split_at(value.find(|c: char| !c.is_ascii_digit())?);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn summarize(names: &[&str]) -> String {
    match names {
        [] => "none".to_string(),
        _ if names.len() <= 4 => names.join(", "),
        _ => format!("{}, {}, …, {}", names[0], names[1], names[names.len() - 1]),
    }
}

/// `10000` → `10,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether the profile generates `key` when a field could: always for a field of its own, but the
/// Inspector's variables only while the `inspector` block is there (a knob may load another profiler
/// plugin, `NCCL_PROFILER_PLUGIN`, where the profile turns no Inspector on).
pub(super) fn generates(p: &Profile, key: &str) -> bool {
    !crate::fabric::observe::is_inspector_var(key) || p.nccl.inspector.is_some()
}

#[cfg(test)]
mod tests {
    use super::{strtoll, thousands, with_unit};

    #[test]
    fn units_and_thousands() {
        assert_eq!(with_unit("512K"), Some(524_288));
        assert_eq!(with_unit("1m"), Some(1_048_576));
        assert_eq!(with_unit("3x"), None);
        assert_eq!(with_unit("12"), None);
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn strtoll_matches_c() {
        assert_eq!(strtoll("96"), (96, true));
        assert_eq!(strtoll("0x1A"), (26, true));
        assert_eq!(strtoll("010"), (8, true));
        assert_eq!(strtoll("08"), (0, false));
        assert_eq!(strtoll("3abc"), (3, false));
        assert_eq!(strtoll("true"), (0, false));
        assert_eq!(strtoll("-2"), (-2, true));
        assert_eq!(strtoll("0"), (0, true));
        assert_eq!(strtoll("1.5"), (1, false));
    }
}
