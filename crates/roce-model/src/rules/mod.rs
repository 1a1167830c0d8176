//! The rule catalogue: checks on a typed [`Profile`] that encode what the fabric needs.
//!
//! Each rule lives in the module of the part of the profile it is about, returns coded [`Problem`]s with
//! the place that must change and the fix, and is documented in `docs/rules.md` with a bad and a good
//! example (the same examples are the rule's tests, under `tests/fixtures/rules/`).

pub mod env;
pub mod fabric;
pub mod multus;
pub mod nccl;
pub mod pool;
pub mod ucx;

use crate::model::Profile;
use crate::problem::Problem;

/// Env variables a typed profile field sets, with the field that sets them. Knobs and extra env may not
/// set these: the typed field is the one place for each.
pub const TYPED_ENV: &[(&str, &str)] = &[
    ("NCCL_SOCKET_IFNAME", "nccl socket-ifname"),
    ("NCCL_IB_HCA", "nccl ib-hca"),
    ("NCCL_NET_PLUGIN", "nccl net-plugin"),
    ("NCCL_DEBUG", "nccl debug"),
    ("NCCL_DEBUG_SUBSYS", "nccl debug-subsys"),
    ("NCCL_IB_ADDR_FAMILY", "fabric addr-family"),
    ("NCCL_IB_ADDR_RANGE", "fabric addr-range"),
    ("NCCL_IB_TC", "fabric traffic-class"),
    ("NCCL_IB_GID_INDEX", "fabric gid-index"),
    ("UCX_TLS", "ucx tls"),
    ("UCX_NET_DEVICES", "ucx net-devices"),
    ("UCX_IB_GID_INDEX", "ucx gid-index"),
    ("UCX_MAX_RMA_RAILS", "ucx max-rma-rails"),
];

/// The typed field that sets `env`, if any.
pub fn typed_field(env: &str) -> Option<&'static str> {
    TYPED_ENV.iter().find(|(k, _)| *k == env).map(|(_, f)| *f)
}

/// Run every rule.
pub fn check(profile: &Profile) -> Vec<Problem> {
    let mut out = Vec::new();
    fabric::check(profile, &mut out);
    pool::check(profile, &mut out);
    multus::check(profile, &mut out);
    nccl::check(profile, &mut out);
    ucx::check(profile, &mut out);
    env::check(profile, &mut out);
    out
}
