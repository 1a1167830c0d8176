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

use crate::names::NameError;

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

/// The NCCL release a profile names (`nccl version="2.28"`): `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`, as NCCL
/// numbers its releases. Built only by parsing; what the version table is asked with is its
/// [`minor`](NcclRelease::minor) (a variable's reading does not change within a patch series, decisions
/// "(nccl-versions)"), and the patch is kept so that `roce diff` sees `2.28.3` → `2.28.9`.
///
/// ```
/// use roce_model::fabric::nccl_versions::{NcclRelease, v};
/// let r: NcclRelease = "2.28.9".parse().unwrap();
/// assert_eq!((r.minor(), r.to_string()), (v(28), "2.28.9".to_string()));
/// assert!("2.28.9-1".parse::<NcclRelease>().is_err());
/// assert!("v2.28".parse::<NcclRelease>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclRelease {
    version: NcclVersion,
    patch: Option<u32>,
}

impl NcclRelease {
    /// The release's major and minor, what [`reads`] is asked with.
    pub fn minor(self) -> NcclVersion {
        self.version
    }

    /// The patch, when the release was named with one.
    pub fn patch(self) -> Option<u32> {
        self.patch
    }

    /// `2.28.9`, `2.32.3+cuda13.4`: the release NCCL prints (`NCCL version 2.28.9+cuda12.9`), with its
    /// patch; `None` without a major and minor.
    ///
    /// ```
    /// use roce_model::fabric::nccl_versions::NcclRelease;
    /// assert_eq!(NcclRelease::printed("2.32.3+cuda13.4").map(|r| r.to_string()), Some("2.32.3".into()));
    /// assert_eq!(NcclRelease::printed("2.30").map(|r| r.patch()), Some(None));
    /// ```
    pub fn printed(text: &str) -> Option<NcclRelease> {
        let version = NcclVersion::parse(text)?;
        let patch = text
            .trim()
            .split(['+', '-'])
            .next()
            .and_then(|t| t.split('.').nth(2))
            .and_then(|p| p.parse().ok());
        Some(NcclRelease { version, patch })
    }

    /// Whether [`HISTORY`] covers this release.
    pub fn covered(self) -> bool {
        (COVERED.0..=COVERED.1).contains(&self.version)
    }
}

impl std::str::FromStr for NcclRelease {
    type Err = NameError;

    /// Decimal numbers without signs or leading zeros, two or three of them, separated by dots.
    fn from_str(text: &str) -> Result<Self, NameError> {
        let number = |part: &str| {
            let clean = !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part == "0" || !part.starts_with('0'));
            clean.then(|| part.parse::<u32>().ok()).flatten()
        };
        let parts: Vec<&str> = text.split('.').collect();
        let numbers: Option<Vec<u32>> = parts.iter().map(|p| number(p)).collect();
        match numbers.as_deref() {
            Some(&[major, minor]) => Ok(NcclRelease {
                version: NcclVersion { major, minor },
                patch: None,
            }),
            Some(&[major, minor, patch]) => Ok(NcclRelease {
                version: NcclVersion { major, minor },
                patch: Some(patch),
            }),
            _ => {
                let hint = NcclVersion::parse(text.trim_start_matches('v'))
                    .map(|v| {
                        format!(" (`{v}`, as NCCL prints it without the build or CUDA suffix)")
                    })
                    .unwrap_or_default();
                Err(NameError {
                    message: format!("`{text}` is not an NCCL release"),
                    help: format!(
                        "write the release as NCCL numbers it, `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`, e.g. `2.28` or `2.28.9`{hint}"
                    ),
                })
            }
        }
    }
}

impl std::fmt::Display for NcclRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{p}", self.version),
            None => write!(f, "{}", self.version),
        }
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

/// Why NCCL `version` does not read `name`, when [`reads`] says it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// It is first read by this later release.
    Before(NcclVersion),
    /// It was removed in this release (or an earlier one).
    Removed(NcclVersion),
    /// No release from 2.18 to 2.32 reads it, and no plugin roce knows of does either.
    Never,
}

impl std::fmt::Display for Unread {
    /// `NCCL reads it from 2.26 on`, `NCCL stopped reading it in 2.31`, `no NCCL release from 2.18 to 2.32
    /// reads it`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Before(since) => write!(f, "NCCL reads it from {since} on"),
            Unread::Removed(r) => write!(f, "NCCL stopped reading it in {r}"),
            Unread::Never => write!(
                f,
                "no NCCL release from {} to {} reads it",
                COVERED.0, COVERED.1
            ),
        }
    }
}

/// Why NCCL `version` does not read `name`, with the history that says so; `None` when it reads it, when
/// roce does not know the variable or knows it as a plugin's, or outside [`COVERED`].
///
/// ```
/// use roce_model::fabric::nccl_versions::{unread, v, Unread};
/// assert_eq!(unread("NCCL_NET_GDR_C2C", v(25)).map(|u| u.0), Some(Unread::Before(v(26))));
/// assert_eq!(unread("NCCL_SHM_USE_CUDA_MEMCPY", v(32)).map(|u| u.0), Some(Unread::Removed(v(31))));
/// assert_eq!(unread("NCCL_IB_HCA", v(28)), None);
/// assert_eq!(unread("NCCL_TUNER_CONFIG_PATH", v(28)), None); // Google's tuner plugin reads it
/// ```
pub fn unread(name: &str, version: NcclVersion) -> Option<(Unread, &'static VarHistory)> {
    if version < COVERED.0 || version > COVERED.1 {
        return None;
    }
    let h = history(name)?;
    let why = match (h.since, h.removed) {
        (None, _) if h.source.starts_with("in no release") => Unread::Never,
        (None, _) => return None,
        (Some(since), _) if version < since => Unread::Before(since),
        (_, Some(removed)) if version >= removed => Unread::Removed(removed),
        _ => return None,
    };
    Some((why, h))
}

/// The releases whose defaults [`DEFAULTS`] was read from: the public source tree, 2.18 to 2.30 (2.31 and
/// 2.32 are binaries only, whose string tables hold names, not defaults).
pub const DEFAULTS_COVERED: (NcclVersion, NcclVersion) = (v(18), v(30));

/// A variable whose default NCCL changed between two releases of [`DEFAULTS_COVERED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultChange {
    /// The variable.
    pub name: &'static str,
    /// The default before `since`.
    pub before: &'static str,
    /// Where the old default is written (its first release in the table).
    pub before_source: &'static str,
    /// The default from `since` on.
    pub after: &'static str,
    /// The first minor with the new default.
    pub since: NcclVersion,
    /// Where the new default is written.
    pub source: &'static str,
}

/// The defaults that changed between 2.18 and 2.30, read from `NCCL_PARAM(Name, "SHORT", default)` at the
/// first release of each minor (`git grep` in a clone of NVIDIA/nccl). Only changes from one plain value
/// to another are here: where the new default is one of NCCL's "not set" sentinels (`-1`, `-2`,
/// `NCCL_CONFIG_UNDEF_INT`: `NCCL_IB_GID_INDEX` in 2.21, `NCCL_IB_TC` and `NCCL_IB_SL` in 2.26,
/// `NCCL_IB_FIFO_TC` in 2.24, `NCCL_CUMEM_ENABLE` in 2.19, `NCCL_NVLS_NCHANNELS` in 2.25 and 2.27) what
/// NCCL does instead is decided in code, not by the literal, and is not claimed here. No variable roce
/// knows was renamed in these releases.
#[rustfmt::skip]
pub const DEFAULTS: &[DefaultChange] = &[
    DefaultChange { name: "NCCL_IB_SPLIT_DATA_ON_QPS", before: "1", before_source: "NVIDIA/nccl 2.18.1-1 (d97a32fa) src/transport/net_ib.cc:966", after: "0", since: v(20), source: "NVIDIA/nccl 2.20.3-1 (b6475625) src/transport/net_ib.cc:1301" },
    DefaultChange { name: "NCCL_IB_TIMEOUT", before: "18", before_source: "NVIDIA/nccl 2.18.1-1 (d97a32fa) src/transport/net_ib.cc:76", after: "20", since: v(23), source: "NVIDIA/nccl 2.23.4-1 (e261ecea) src/transport/net_ib.cc:89" },
    DefaultChange { name: "NCCL_NET_GDR_C2C", before: "0", before_source: "NVIDIA/nccl 2.26.2-1 (f44ac759) src/graph/paths.cc:381", after: "1", since: v(27), source: "NVIDIA/nccl 2.27.3-1 (72d24320) src/graph/paths.cc:386" },
];

/// NCCL `version`'s default of `name`, with its source, when `name` is in [`DEFAULTS`], NCCL `version`
/// reads it and [`DEFAULTS_COVERED`] holds `version`.
///
/// ```
/// use roce_model::fabric::nccl_versions::{default_of, v};
/// assert_eq!(default_of("NCCL_IB_TIMEOUT", v(22)).map(|d| d.0), Some("18"));
/// assert_eq!(default_of("NCCL_IB_TIMEOUT", v(28)).map(|d| d.0), Some("20"));
/// assert_eq!(default_of("NCCL_NET_GDR_C2C", v(25)), None); // not read before 2.26
/// assert_eq!(default_of("NCCL_IB_TIMEOUT", v(32)), None); // 2.32's default is not in its string table
/// ```
pub fn default_of(name: &str, version: NcclVersion) -> Option<(&'static str, &'static str)> {
    if version < DEFAULTS_COVERED.0
        || version > DEFAULTS_COVERED.1
        || reads(name, version) != Some(true)
    {
        return None;
    }
    let d = DEFAULTS.iter().find(|d| d.name == name)?;
    Some(if version >= d.since {
        (d.after, d.source)
    } else {
        (d.before, d.before_source)
    })
}

/// The default changes from [`DEFAULTS`] that lie between releases `a` and `b` (either order): each changed
/// after the older and by the newer, both within [`DEFAULTS_COVERED`]; `None` when either is outside it.
pub fn defaults_between(a: NcclVersion, b: NcclVersion) -> Option<Vec<&'static DefaultChange>> {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if lo < DEFAULTS_COVERED.0 || hi > DEFAULTS_COVERED.1 {
        return None;
    }
    Some(
        DEFAULTS
            .iter()
            .filter(|d| lo < d.since && d.since <= hi && reads(d.name, lo) == Some(true))
            .collect(),
    )
}

/// A value syntax NCCL accepts only from a release on; older releases read the value another way, without
/// a word.
#[derive(Debug, Clone, Copy)]
pub struct SyntaxChange {
    /// The variable.
    pub name: &'static str,
    /// The syntax, in words.
    pub what: &'static str,
    /// The first release that accepts it, to the patch (NCCL changed `NCCL_IB_HCA` within 2.30).
    pub since: (NcclVersion, u32),
    /// What releases before `since` do with it.
    pub before: &'static str,
    /// Where the older reading is written.
    pub before_source: &'static str,
    /// Where the new one is.
    pub source: &'static str,
    /// Whether a value uses the syntax.
    uses: fn(&str) -> bool,
}

impl SyntaxChange {
    /// Whether `value` uses this syntax.
    pub fn used_in(&self, value: &str) -> bool {
        (self.uses)(value)
    }

    /// Whether `release` accepts it. A release named without its patch (`2.30`) is taken for the minor's
    /// first patch: an image of that minor may be older than `since`.
    pub fn accepted_by(&self, release: NcclRelease) -> bool {
        let (minor, patch) = self.since;
        release.minor() > minor || (release.minor() == minor && release.patch.unwrap_or(0) >= patch)
    }

    /// `2.30.7`.
    pub fn since_text(&self) -> String {
        format!("{}.{}", self.since.0, self.since.1)
    }
}

/// `NCCL_IB_HCA` entries with a field after the port (`mlx5_0:1:2:0`).
fn hca_rail_plane(value: &str) -> bool {
    let (_, issues) = crate::nccl_list::parse(value, crate::nccl_list::ListKind::IbHca);
    issues
        .iter()
        .any(|i| i.kind == crate::nccl_list::TokenIssueKind::ExtraFields)
}

/// The value syntaxes NCCL changed from 2.18 to 2.32, read in NVIDIA/nccl. Only `NCCL_IB_HCA` changed:
/// `parseStringList` (`src/misc/utils.cc`), which reads it, took `name[:port]` and skipped the rest of each
/// entry up to 2.30.4, and reads `name[:port[:rail[:plane]]]` from 2.30.7 (NVIDIA/nccl 7ec092af, "net: add
/// rail/plane NIC identity"; the untagged 2.30.5 and 2.30.6 were never released: PyPI
/// `nvidia-nccl-cu13` has 2.30.3, 2.30.4 and 2.30.7). NIC fusion is `NCCL_NET_FORCE_MERGE`'s own syntax, not
/// `NCCL_IB_HCA`'s.
#[rustfmt::skip]
pub const SYNTAX: &[SyntaxChange] = &[
    SyntaxChange {
        name: "NCCL_IB_HCA",
        what: "rail and plane fields after the port (`device:port:rail:plane`)",
        since: (v(30), 7),
        before: "reads the port with atoi and skips the rest of the entry, so the rail and plane are ignored",
        before_source: "NVIDIA/nccl 2.30.4-1 (1933fdd6) src/misc/utils.cc:209-215",
        source: "NVIDIA/nccl 2.30.7-1 (73cf1122) src/misc/utils.cc:203-209",
        uses: hca_rail_plane,
    },
];

/// A feature a profile turns on that needs an NCCL release from one on: NCCL itself, or the plugin built
/// from the same release's tree (the Inspector is built from `plugins/profiler/inspector`, and its
/// profiler API follows the release's). Older releases lack it with no more than an INFO line.
#[derive(Debug, Clone, Copy)]
pub struct Feature {
    /// The variable that turns it on, as the profile's environment holds it.
    pub name: &'static str,
    /// The feature, in words.
    pub what: &'static str,
    /// The first release with it: the minor, and the patch where it came within a minor (`None`: from the
    /// minor's first public release).
    pub since: (NcclVersion, Option<u32>),
    /// What releases before `since` do instead.
    pub before: &'static str,
    /// Where that is seen.
    pub before_source: &'static str,
    /// Where the feature is seen first.
    pub source: &'static str,
    /// A feature this one is part of (its variable): not reported where that one is.
    pub part_of: Option<&'static str>,
    /// Whether a value turns it on.
    uses: fn(&str) -> bool,
}

impl Feature {
    /// Whether `value` turns the feature on.
    pub fn used_in(&self, value: &str) -> bool {
        (self.uses)(value)
    }

    /// Whether `release` has it. A release named without its patch is taken for the minor's first patch,
    /// as [`SyntaxChange::accepted_by`] does.
    pub fn accepted_by(&self, release: NcclRelease) -> bool {
        let (minor, patch) = self.since;
        release.minor() > minor
            || (release.minor() == minor && patch.is_none_or(|p| release.patch.unwrap_or(0) >= p))
    }

    /// `2.28`, `2.29.3`.
    pub fn since_text(&self) -> String {
        match self.since {
            (minor, Some(patch)) => format!("{minor}.{patch}"),
            (minor, None) => minor.to_string(),
        }
    }
}

/// A non-zero flag, as the Inspector reads its switches (`atoi(str)`, non-zero is on).
fn on(value: &str) -> bool {
    value.trim().parse::<i64>().is_ok_and(|n| n != 0)
}

/// The features roce can turn on that need an NCCL release from one on, read in NVIDIA/nccl:
/// * the Inspector profiler plugin (`nccl { inspector … }`) exports only the profiler API v5
///   (`ncclProfiler_v5`), which NCCL loads from 2.28 on; 2.27 tries v4 to v1 and finds none, so the plugin
///   is not loaded;
/// * its Prometheus output (`inspector "prometheus"`): the plugin reads `NCCL_INSPECTOR_PROM_DUMP` from
///   2.29.3 (2.29.2's does not, and writes JSON).
///
/// NCCL's diagnostics are a variable NCCL reads (`NCCL_RUN_DIAGNOSTICS`, 2.31): [`HISTORY`] has it, and
/// `roce::nccl::version_unread` judges it.
#[rustfmt::skip]
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "NCCL_INSPECTOR_ENABLE",
        what: "the Inspector profiler plugin",
        since: (v(28), None),
        before: "loads profiler plugins of API v4 to v1 only, and the Inspector exports only ncclProfiler_v5: NCCL logs `PROFILER/Plugin: failed to find ncclProfiler_v4` and runs without it",
        before_source: "NVIDIA/nccl 2.27.7-1 (593de54e) src/plugin/profiler.cc:53, src/plugin/profiler/profiler_v4.cc:19",
        source: "NVIDIA/nccl 2.28.3-1 (f1308997) src/plugin/profiler.cc:70, ext-profiler/inspector/inspector_plugin.cc:486",
        part_of: None,
        uses: on,
    },
    Feature {
        name: "NCCL_INSPECTOR_PROM_DUMP",
        what: "the Inspector's Prometheus output",
        since: (v(29), Some(3)),
        before: "builds an Inspector that does not read NCCL_INSPECTOR_PROM_DUMP and writes JSON records instead",
        before_source: "NVIDIA/nccl 2.29.2-1 (ebd1e929) ext-profiler/inspector/inspector.cc:944-1000",
        source: "NVIDIA/nccl 2.29.3-1 (25368a7f) ext-profiler/inspector/inspector.cc:1153",
        part_of: Some("NCCL_INSPECTOR_ENABLE"),
        uses: on,
    },
];
