//! NCCL by version: which releases read each NCCL variable roce knows.
//!
//! NCCL reads only the variables its release knows and ignores every other `NCCL_*` without a word, so a
//! variable set for a release that does not read it has no effect. [`HISTORY`] says, per variable, the
//! first minor (2.18 or later) that reads it and the first that no longer does, each with its source: the
//! file and line in `github.com/NVIDIA/nccl` at that release (2.18 to 2.30), or the string table of the
//! release's own `libnccl.so.2` (2.31, 2.32: PyPI `nvidia-nccl-cu13`). `tools/nccl-env-history.py`
//! generates it; a test walks it for sources.

mod history;

pub use history::HISTORY;

/// An NCCL release, to the minor: what changes which variables NCCL reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    /// Always 2 for the releases in [`HISTORY`].
    pub major: u32,
    /// The minor release.
    pub minor: u32,
}

/// NCCL `2.<minor>`.
pub const fn v(minor: u32) -> NcclVersion {
    NcclVersion { major: 2, minor }
}

impl NcclVersion {
    /// `2.28.9`, `2.32.3+cuda13.4`, `2.30`: the major and minor of a version NCCL prints.
    ///
    /// ```
    /// use roce_model::fabric::nccl_versions::{NcclVersion, v};
    /// assert_eq!(NcclVersion::parse("2.32.3+cuda13.4"), Some(v(32)));
    /// assert_eq!(NcclVersion::parse("two"), None);
    /// ```
    pub fn parse(text: &str) -> Option<NcclVersion> {
        let mut parts = text.trim().split(['.', '+', '-']);
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some(NcclVersion { major, minor })
    }
}

impl std::fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One variable's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarHistory {
    /// The variable.
    pub name: &'static str,
    /// The first minor that reads it (`None`: no release from 2.18 to 2.32 does; a plugin's, or none).
    pub since: Option<NcclVersion>,
    /// The first minor after that no longer reads it.
    pub removed: Option<NcclVersion>,
    /// Where that is seen.
    pub source: &'static str,
}

/// The oldest and newest releases [`HISTORY`] covers.
pub const COVERED: (NcclVersion, NcclVersion) = (v(18), v(32));

/// The history of `name`, when roce knows it.
pub fn history(name: &str) -> Option<&'static VarHistory> {
    HISTORY.iter().find(|h| h.name == name)
}

/// Whether NCCL `version` reads `name`: `None` when roce does not know the variable, it is a plugin's,
/// or the version is outside [`COVERED`] (nothing is claimed about releases nobody here read).
///
/// ```
/// use roce_model::fabric::nccl_versions::{reads, v};
/// assert_eq!(reads("NCCL_IB_HCA", v(28)), Some(true));
/// assert_eq!(reads("NCCL_NET_GDR_C2C", v(25)), Some(false)); // first read in 2.26
/// assert_eq!(reads("NCCL_IB_HCA", v(12)), None);
/// ```
pub fn reads(name: &str, version: NcclVersion) -> Option<bool> {
    if version < COVERED.0 || version > COVERED.1 {
        return None;
    }
    let h = history(name)?;
    let since = h.since?;
    Some(version >= since && h.removed.is_none_or(|r| version < r))
}
