//! The rule catalogue: checks on a typed [`Profile`] that encode what the fabric needs.
//!
//! Each rule lives in the module of the part of the profile it is about, returns coded [`Problem`]s with
//! the place that must change and the fix, and is documented in `docs/rules.md` with a bad and a good
//! example (the same examples are the rule's tests, under `tests/fixtures/rules/`).

pub(crate) mod dra;
pub(crate) mod env;
pub(crate) mod fabric;
pub(crate) mod multus;
pub(crate) mod nccl;
pub(crate) mod nccl_version;
pub(crate) mod ofi;
pub(crate) mod pool;
pub(crate) mod ucx;

use crate::model::{Profile, Rail};
use crate::problem::Problem;

pub(crate) use crate::fabric::env::typed_field;

/// Run every rule.
pub(crate) fn check(profile: &Profile) -> Vec<Problem> {
    let mut out = Vec::new();
    // Expanded once for every rule that compares names with the rails.
    let rails: Vec<Rail> = profile.rail_list();
    fabric::check(profile, &mut out);
    pool::check(profile, &mut out);
    multus::check(profile, &rails, &mut out);
    nccl::check(profile, &rails, &mut out);
    nccl_version::check(profile, &mut out);
    ucx::check(profile, &rails, &mut out);
    env::check(profile, &mut out);
    ofi::check(profile, &mut out);
    dra::check(profile, &rails, &mut out);
    out
}
