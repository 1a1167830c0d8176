//! The keys edits merge on, read the same way by the writer ([`super::write`]: what `roce apply` keeps)
//! and the reader ([`super::gaps`]: what lint reports unmet): a mount by its path, a capability in any of
//! its spellings, an env value by what its reader does with it.

use roce_model::fabric::attach::RDMA_DEVICE_DIR;

use super::Volume;
use crate::plan::Plan;

/// Do two mount paths name one directory (a trailing `/` aside)? The key mounts merge on.
pub(crate) fn same_path(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

impl Volume {
    /// Where the container mounts it: the key its mount merges on.
    pub(crate) fn mount_path(&self) -> &str {
        match self {
            Volume::SharedMemory => "/dev/shm",
            Volume::Host(m) => &m.mount_path,
            Volume::Topology(t) => &t.path,
            Volume::RdmaDevices => RDMA_DEVICE_DIR,
            Volume::Inspector(i) => i.dump_dir(),
        }
    }
}

/// Does a manifest's value `have` of `name` meet the plan's `want`: the same, one `roce apply` keeps
/// (equivalent, or only different: [`Plan::acceptable`]), or an explicit device list of the pod's own?
pub(crate) fn env_meets(plan: &Plan, name: &str, have: &str, want: &str) -> bool {
    have == want
        || plan.acceptable(name, &unescape_dependent(have))
        || roce_model::fabric::env::explicit_device_list(name, have)
}

/// Does a container that adds `added` hold `cap` ([`roce_model::fabric::attach::grants`])?
pub(crate) fn holds_capability<'s>(mut added: impl Iterator<Item = &'s str>, cap: &str) -> bool {
    added.any(|a| roce_model::fabric::attach::grants(a, cap))
}

/// A manifest's env value as the program reads it (`$$` is Kubernetes' escape for `$`).
pub(crate) fn unescape_dependent(v: &str) -> String {
    v.replace("$$", "$")
}
