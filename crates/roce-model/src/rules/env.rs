//! Environment rules: extra env must not fight generated variables, and every value must be
//! representable in every target.

use crate::fabric::{env, nccl};
use crate::model::{NcclList, Profile};
use crate::problem::{Code, Problem};
use crate::source::Spanned;
use crate::ucx_list::{UcxNetDevices, UcxTls};

/// Check extra env and knob values.
pub(crate) fn check(p: &Profile, out: &mut Vec<Problem>) {
    for (key, value) in &p.env {
        let shadowed = super::typed_field(key)
            .filter(|_| super::nccl::generates(p, key))
            .map(str::to_string)
            .or_else(|| {
                p.nccl
                    .knobs
                    .contains_key(key)
                    .then(|| format!("nccl knobs {key}"))
            });
        if let Some(field) = shadowed {
            out.push(
                Problem::new(
                    Code::EnvShadowsGenerated,
                    format!("env {key} overrides the value `{field}` generates"),
                )
                .at(value.origin, "")
                .help(format!(
                    "set it once, through `{field}`, and remove it from `env`"
                )),
            );
        }
    }
    // The network provider's variables are set once: in `nccl-net`, not again in `env` or the knobs.
    for (name, _, _) in crate::fabric::provider::provider_env(&p.nccl_net) {
        let again = p
            .env
            .iter()
            .chain(&p.nccl.knobs)
            .find(|(k, _)| k.as_str() == name);
        if let Some((key, value)) = again {
            out.push(
                Problem::new(
                    Code::EnvShadowsGenerated,
                    format!("{key} is set twice: by `nccl-net` and again here"),
                )
                .at(value.origin, "")
                .at(p.nccl_net.provider.origin, "the network provider")
                .help("set it once, in the `nccl-net` block, and remove it from here"),
            );
        }
    }
    for (key, value) in &p.nccl_net.env {
        unrepresentable(key.as_str(), value, out);
    }
    let missing = p.nccl_net.missing_env();
    if !missing.is_empty() {
        let provider = p.nccl_net.provider.value.as_str();
        out.push(
            Problem::new(
                Code::ProviderEnv,
                format!("`nccl-net {provider}` needs {}", missing.join(", ")),
            )
            .at(p.nccl_net.provider.origin, format!("{provider} without {}", missing.join(", ")))
            .help(format!(
                "add `env {{ {} }}` to the `nccl-net` block (`FI_PROVIDER \"efa\"` on AWS): without it libfabric opens whichever provider initialises first, which can be TCP, and NCCL runs far slower without saying why",
                missing
                    .iter()
                    .map(|m| format!("{m} \"…\""))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        );
    }
    // NCCL's IB knobs under a provider that replaces NCCL's IB transport: nothing reads them (lint reports
    // the same in manifests, `roce::lint::ib_knob_ignored`)
    let provider = &p.nccl_net.provider.value;
    if !provider.reads_nccl_ib() {
        for v in p.env_vars() {
            if let (true, Some(at)) = (nccl::configures_ib(&v.name), v.origin) {
                out.push(
                    Problem::new(
                        Code::ProviderIbKnob,
                        format!(
                            "{} is read by NCCL's IB transport, which {} replaces: it does nothing here",
                            v.name,
                            provider.describe()
                        ),
                    )
                    .at(at, "read by nothing")
                    .at(p.nccl_net.provider.origin, "the network provider")
                    .help(format!(
                        "remove it; aws-ofi-nccl is tuned with its own `{}*` variables and libfabric's `FI_*`",
                        crate::fabric::provider::OFI_PARAM_PREFIX
                    )),
                );
            }
        }
    }
    let n = &p.nccl;
    let typed = [
        (
            env::NCCL_SOCKET_IFNAME.name,
            n.socket_ifname.as_ref().map(NcclList::text),
        ),
        (env::NCCL_IB_HCA.name, n.ib_hca.as_ref().map(NcclList::text)),
        (env::NCCL_NET_PLUGIN.name, n.net_plugin.as_ref()),
        (env::NCCL_DEBUG.name, n.debug.as_ref()),
        (env::NCCL_DEBUG_SUBSYS.name, n.debug_subsys.as_ref()),
        (env::NCCL_IB_ADDR_RANGE.name, p.fabric.addr_range.as_ref()),
        (env::UCX_TLS.name, p.ucx.tls.as_ref().map(UcxTls::text)),
        (
            env::UCX_NET_DEVICES.name,
            p.ucx.net_devices.as_ref().map(UcxNetDevices::text),
        ),
    ];
    let typed = typed.into_iter().filter_map(|(k, v)| v.map(|v| (k, v)));
    let all = p
        .env
        .iter()
        .chain(&p.nccl.knobs)
        .map(|(k, v)| (k.as_str(), v))
        .chain(typed);
    for (key, value) in all {
        unrepresentable(key, value, out);
    }
}

fn unrepresentable(key: &str, value: &Spanned<String>, out: &mut Vec<Problem>) {
    let Some(bad) = value.value.chars().find(|c| c.is_control()) else {
        return;
    };
    let what = match bad {
        '\n' => "a newline".to_string(),
        '\0' => "a NUL byte".to_string(),
        '\r' => "a carriage return".to_string(),
        '\t' => "a tab".to_string(),
        c => format!("the control character U+{:04X}", c as u32),
    };
    out.push(
        Problem::new(
            Code::Unrepresentable,
            format!("{key} contains {what}, which no target can carry safely"),
        )
        .at(value.origin, "")
        .help("env values are single lines of printable text; remove the character"),
    );
}
