//! aws-ofi-nccl's platform defaults against the profile: a variable the plugin tunes per instance type that
//! the profile sets to another value (`fabric::ofi_platform`).

use crate::fabric::ofi_platform::{self, RELEASE};
use crate::fabric::provider::Provider;
use crate::model::Profile;
use crate::problem::{Code, Problem};

/// Check an EFA profile's variables against what aws-ofi-nccl sets itself on its instance type. A value
/// equal to the plugin's is not reported: it changes nothing here and pins the value for plugin releases
/// whose table differs (AWS's own samples set `NCCL_BUFFSIZE` and `NCCL_P2P_NET_CHUNKSIZE` as p5's entry does).
pub(crate) fn check(p: &Profile, out: &mut Vec<Problem>) {
    if p.nccl_net.provider.value != Provider::Ofi {
        return;
    }
    let Some(instance) = &p.node_pool.instance_type else {
        return;
    };
    let defaults = ofi_platform::defaults(&instance.value);
    let block = ofi_platform::platform_name(&instance.value)
        .map(|b| format!("its platform block `{b}`"))
        .unwrap_or_else(|| "no platform block of its own".to_string());
    for var in p.env_vars() {
        let Some(d) = defaults.iter().find(|d| d.name == var.name) else {
            continue;
        };
        if ofi_platform::same_value(d, &var.value) {
            continue;
        }
        let mut problem = Problem::new(
            Code::OfiPlatformDefault,
            format!(
                "{}={} replaces the {} aws-ofi-nccl sets itself on {} ({block}; {}): the plugin sets it only where it is unset, so the profile's value wins without a word",
                var.name,
                var.value,
                d.value,
                instance.value,
                d.source()
            ),
        );
        if let Some(at) = var.origin {
            problem = problem.at(at, format!("aws-ofi-nccl would set {}", d.value));
        }
        out.push(
            problem
                .at(instance.origin, "the instance type the plugin tunes for")
                .help(format!(
                    "remove it to run with the value the plugin is tuned with on {}, or keep it where you measured better (the plugin logs `Skipping adding {} to environment, already set`); read from {RELEASE}",
                    instance.value, var.name
                )),
        );
    }
}
