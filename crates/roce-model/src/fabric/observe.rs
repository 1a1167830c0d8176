//! NCCL's own observability, which a profile may turn on (`nccl diagnostics`, `nccl { inspector … }`), and
//! which `roce explain` reads back: the `NCCL DIAG` report, the Inspector profiler plugin's records, RAS.
//!
//! * **Diagnostics** (NCCL 2.31+): `NCCL_RUN_DIAGNOSTICS=1` runs NCCL's active diagnostics at every
//!   communicator initialization (a GPU peer-to-peer check within each node and, on multi-node
//!   communicators, a network bandwidth check) and prints their report as `NCCL DIAG` lines on stdout,
//!   whatever `NCCL_DEBUG` says. They are off by default and informational: NCCL carries on whatever they
//!   find (NCCL user guide, "Troubleshooting › Diagnostics",
//!   docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/diagnostics.html). Which release
//!   first reads the variable is [`super::nccl_versions::HISTORY`]'s (2.31, from 2.31.2's `libnccl.so.2`).
//! * **The Inspector** (`plugins/profiler/inspector` in NCCL's tree, `ext-profiler/inspector` before 2.29.7):
//!   a profiler plugin, `libnccl-profiler-inspector.so`, that NCCL loads through `NCCL_PROFILER_PLUGIN` and
//!   that writes one record per collective (JSON lines, `<host>-pid<pid>.log`) or, with
//!   `NCCL_INSPECTOR_PROM_DUMP=1`, Prometheus text files for the node exporter's textfile collector
//!   (`nccl_inspector_metrics_<gpu>.prom`), into `NCCL_INSPECTOR_DUMP_DIR` (NVIDIA/nccl v2.30.7-1
//!   `plugins/profiler/inspector/README.md`; `inspector.cc:464`, `:652`; `inspector_prom.cc:366`). The
//!   plugin exports only the profiler API v5, which NCCL loads from 2.28 on
//!   ([`super::nccl_versions::FEATURES`]); NCCL's own build and packages leave it out
//!   (its top-level `Makefile` and `pkg/` at 2.30.7 build `src/` only), so the image must ship it (a missing
//!   plugin is an INFO line, `PROFILER/Plugin: Could not find: …`, and the job runs without it).
//! * **RAS** (NCCL 2.24+) needs nothing turned on: `NCCL_RAS_ENABLE` defaults to 1 (NVIDIA/nccl 2.24.3-1
//!   `src/bootstrap.cc:617`, `NCCL_PARAM(RasEnable, "RAS_ENABLE", 1)`) and the RAS threads listen on
//!   `localhost:28028` (`NCCL_RAS_ADDR`, `src/ras/client_support.cc:170` at 2.30.7; user guide
//!   "Troubleshooting › RAS"), where `ncclras` asks them. No profile field: a profile that wants it off
//!   writes the knob.
//!
//! Missing observability changes nothing a job does, so every variable here, and the Inspector's output
//! directory, only differs when absent or different ([`is_observability`]).

use crate::source::Spanned;

/// `NCCL_RUN_DIAGNOSTICS`: `1` runs NCCL's active diagnostics at communicator initialization (2.31+).
pub const NCCL_RUN_DIAGNOSTICS: &str = "NCCL_RUN_DIAGNOSTICS";
/// `NCCL_PROFILER_PLUGIN`: the profiler plugin NCCL loads (2.23+; `none` loads none). A name without `/`
/// that is not a `lib*.so` file name is looked up as `libnccl-profiler-<name>.so` (NVIDIA/nccl 2.28.3-1
/// `src/plugin/plugin_open.cc:91`); NCCL echoes it from 2.28 (`src/plugin/profiler.cc:55`,
/// `NCCL_PROFILER_PLUGIN set by environment to …`).
pub const NCCL_PROFILER_PLUGIN: &str = "NCCL_PROFILER_PLUGIN";
/// `NCCL_INSPECTOR_ENABLE`: the Inspector records only when it is non-zero (default 0; v2.30.7-1
/// `plugins/profiler/inspector/inspector.cc:1044-1046`, logged `NCCL Inspector Plugin DISABLED` otherwise).
pub const NCCL_INSPECTOR_ENABLE: &str = "NCCL_INSPECTOR_ENABLE";
/// `NCCL_INSPECTOR_PROM_DUMP`: `1` writes Prometheus text instead of JSON (default 0; read from the plugin
/// of 2.29.3, `ext-profiler/inspector/inspector.cc:1153`; v2.30.7-1 `inspector.cc:987`).
pub const NCCL_INSPECTOR_PROM_DUMP: &str = "NCCL_INSPECTOR_PROM_DUMP";
/// `NCCL_INSPECTOR_DUMP_DIR`: where the records go (default `nccl-inspector-<SLURM_JOBID>` or
/// `nccl-inspector-unknown-jobid`, relative to the working directory; v2.30.7-1 `inspector.cc:464-480`). The
/// plugin creates it.
pub const NCCL_INSPECTOR_DUMP_DIR: &str = "NCCL_INSPECTOR_DUMP_DIR";
/// `NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`: how often the dump thread writes. Its default
/// changed: unset or 0 starts no dump thread, so nothing is written, in the plugin of 2.28 and 2.29
/// (v2.28.3-1 `ext-profiler/inspector/inspector.cc:972-980`); from 2.30 unset is -1, records written only
/// when a communicator is torn down (v2.30.7-1 `inspector.cc:991-996`). roce always sets it.
pub const NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS: &str =
    "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS";

/// The Inspector's variables, as the plugin reads them (none of them is NCCL's own).
pub const INSPECTOR_VARS: &[&str] = &[
    NCCL_INSPECTOR_ENABLE,
    NCCL_INSPECTOR_PROM_DUMP,
    NCCL_INSPECTOR_DUMP_DIR,
    NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS,
];

/// `NCCL_PROFILER_PLUGIN`'s value when the profile names no plugin: NCCL looks it up as
/// [`INSPECTOR_LIBRARY`] on the loader's path.
pub const INSPECTOR_PLUGIN: &str = "inspector";
/// The library the Inspector's `make` builds (v2.30.7-1 `plugins/profiler/inspector/README.md`, "Build
/// Output").
pub const INSPECTOR_LIBRARY: &str = "libnccl-profiler-inspector.so";
/// Where the Inspector writes when the profile names no directory: an absolute path a volume can be
/// mounted at (the plugin's own default is relative to the working directory).
pub const INSPECTOR_DIR: &str = "/var/log/nccl-inspector";
/// The pod volume that holds the Inspector's directory.
pub const INSPECTOR_VOLUME: &str = "nccl-inspector";
/// The JSON records' dump interval when the profile names none: 500 µs, NVIDIA's example (README, "Using
/// NCCL Inspector"). The plugin keeps finished collectives in a ring (1024 per communicator by default,
/// `NCCL_INSPECTOR_DUMP_COLL_RING_SIZE`), so a short interval loses none.
pub const JSON_INTERVAL_US: u32 = 500;
/// The Prometheus files' interval when the profile names none: 30 s, the least the plugin accepts in that
/// mode (`MIN_PROM_INTERVAL`, v2.30.7-1 `plugins/profiler/inspector/inspector_prom.cc:821-830`: a shorter one
/// is raised to it), the node exporter's polling interval.
pub const PROMETHEUS_INTERVAL_US: u32 = 30_000_000;

/// What the Inspector writes (default: JSON, the plugin's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum InspectorFormat {
    /// One JSON object per collective, appended (`roce explain` reads them).
    #[default]
    Json,
    /// Prometheus text, rewritten every interval, for the node exporter's textfile collector.
    Prometheus,
}

impl InspectorFormat {
    /// `json` or `prometheus`, as the profile writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            InspectorFormat::Json => "json",
            InspectorFormat::Prometheus => "prometheus",
        }
    }

    /// The dump interval when the profile names none.
    pub fn default_interval_us(self) -> u32 {
        match self {
            InspectorFormat::Json => JSON_INTERVAL_US,
            InspectorFormat::Prometheus => PROMETHEUS_INTERVAL_US,
        }
    }
}

/// The Inspector profiler plugin, turned on (`nccl { inspector "json" … }`): what the profile wrote; the
/// accessors fill the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inspector {
    /// JSON records or Prometheus files.
    pub format: Spanned<InspectorFormat>,
    /// `NCCL_PROFILER_PLUGIN` (default [`INSPECTOR_PLUGIN`]).
    pub plugin: Option<Spanned<String>>,
    /// `NCCL_INSPECTOR_DUMP_DIR`, an absolute path (default [`INSPECTOR_DIR`]): where the container, or a
    /// batch job's node, has the records.
    pub dump_dir: Option<Spanned<String>>,
    /// `NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS` (default by format).
    pub interval_us: Option<Spanned<u32>>,
    /// The node's directory a pod mounts at the dump directory (a `hostPath`); without it, an `emptyDir`.
    pub host_path: Option<Spanned<String>>,
}

impl Inspector {
    /// The plugin NCCL loads.
    pub fn plugin(&self) -> &str {
        self.plugin
            .as_ref()
            .map_or(INSPECTOR_PLUGIN, |p| p.value.as_str())
    }

    /// Where the records go.
    pub fn dump_dir(&self) -> &str {
        self.dump_dir
            .as_ref()
            .map_or(INSPECTOR_DIR, |d| d.value.as_str())
    }

    /// How often the plugin writes, in microseconds.
    pub fn interval_us(&self) -> u32 {
        self.interval_us
            .as_ref()
            .map_or(self.format.value.default_interval_us(), |i| i.value)
    }

    /// The node's directory pods mount, if the profile names one.
    pub fn host_path(&self) -> Option<&str> {
        self.host_path.as_ref().map(|h| h.value.as_str())
    }
}

/// One variable the observability fields set: name, value, where the profile set it.
pub type ObserveVar = (&'static str, String, crate::source::Origin);

/// The variables of `diagnostics` and `inspector`, in emit order: `NCCL_RUN_DIAGNOSTICS`, then the
/// Inspector's plugin, enable, format (Prometheus only: JSON is the plugin's default), directory and
/// interval.
pub fn observe_env(
    diagnostics: Option<&Spanned<bool>>,
    inspector: Option<&Inspector>,
) -> Vec<ObserveVar> {
    let mut out = Vec::new();
    if let Some(d) = diagnostics.filter(|d| d.value) {
        out.push((NCCL_RUN_DIAGNOSTICS, "1".to_string(), d.origin));
    }
    if let Some(i) = inspector {
        let at = |v: Option<crate::source::Origin>| v.unwrap_or(i.format.origin);
        out.push((
            NCCL_PROFILER_PLUGIN,
            i.plugin().to_string(),
            at(i.plugin.as_ref().map(|p| p.origin)),
        ));
        out.push((NCCL_INSPECTOR_ENABLE, "1".to_string(), i.format.origin));
        if i.format.value == InspectorFormat::Prometheus {
            out.push((NCCL_INSPECTOR_PROM_DUMP, "1".to_string(), i.format.origin));
        }
        out.push((
            NCCL_INSPECTOR_DUMP_DIR,
            i.dump_dir().to_string(),
            at(i.dump_dir.as_ref().map(|d| d.origin)),
        ));
        out.push((
            NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS,
            i.interval_us().to_string(),
            at(i.interval_us.as_ref().map(|v| v.origin)),
        ));
    }
    out
}

/// Does `name` only turn on or direct NCCL's observability (diagnostics, a profiler plugin, the
/// Inspector)? Another value, or none, changes what the job records, never how it runs.
pub fn is_observability(name: &str) -> bool {
    name == NCCL_RUN_DIAGNOSTICS || name == NCCL_PROFILER_PLUGIN || INSPECTOR_VARS.contains(&name)
}

/// Is `name` one of the variables the `inspector` block sets ([`INSPECTOR_VARS`] and the plugin)?
pub fn is_inspector_var(name: &str) -> bool {
    name == NCCL_PROFILER_PLUGIN || INSPECTOR_VARS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Origin, SourceId};

    fn at() -> Origin {
        Origin::new(SourceId(0), 0..0)
    }

    #[test]
    fn the_inspector_sets_its_variables_in_order() {
        let i = Inspector {
            format: Spanned::new(InspectorFormat::Prometheus, at()),
            plugin: None,
            dump_dir: None,
            interval_us: None,
            host_path: None,
        };
        let names = |d: Option<&Spanned<bool>>, i: Option<&Inspector>| {
            observe_env(d, i)
                .into_iter()
                .map(|(n, v, _)| format!("{n}={v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(Some(&Spanned::new(true, at())), Some(&i)),
            [
                "NCCL_RUN_DIAGNOSTICS=1",
                "NCCL_PROFILER_PLUGIN=inspector",
                "NCCL_INSPECTOR_ENABLE=1",
                "NCCL_INSPECTOR_PROM_DUMP=1",
                "NCCL_INSPECTOR_DUMP_DIR=/var/log/nccl-inspector",
                "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=30000000",
            ]
        );
        // JSON is the plugin's default format; diagnostics off sets nothing
        let json = Inspector {
            format: Spanned::new(InspectorFormat::Json, at()),
            interval_us: Some(Spanned::new(1000, at())),
            ..i
        };
        assert_eq!((json.interval_us(), json.plugin()), (1000, "inspector"));
        assert!(
            !names(Some(&Spanned::new(false, at())), Some(&json))
                .iter()
                .any(|v| v.starts_with("NCCL_INSPECTOR_PROM_DUMP") || v.starts_with("NCCL_RUN"))
        );
        assert!(names(None, None).is_empty());
        for (n, _, _) in observe_env(Some(&Spanned::new(true, at())), Some(&json)) {
            assert!(is_observability(n), "{n}");
        }
        assert!(!is_observability("NCCL_IB_HCA") && !is_inspector_var(NCCL_RUN_DIAGNOSTICS));
    }
}

#[cfg(test)]
mod walk_tests {
    use crate::{BuiltinsOnly, Code, Format, Source, load};

    fn load_text(name: &str, text: &str) -> crate::Loaded {
        let format = if name.ends_with(".kdl") {
            Format::Kdl
        } else {
            Format::Yaml
        };
        load(Source::with_format(name, text, format), &BuiltinsOnly)
    }

    fn env_of(l: &crate::Loaded) -> Vec<String> {
        l.profile
            .as_ref()
            .unwrap()
            .env_vars()
            .into_iter()
            .filter(|v| super::is_observability(&v.name))
            .map(|v| format!("{}={}", v.name, v.value))
            .collect()
    }

    #[test]
    fn kdl_and_yaml_read_the_same_inspector() {
        let kdl = load_text(
            "p.kdl",
            r#"profile "t/p" extends="coreweave/h100-ib" {
                nccl diagnostics=#true {
                    inspector "prometheus" dump-dir="/var/lib/x" host-path="/srv/x" interval-us=60000000
                }
            }"#,
        );
        let yaml = load_text(
            "p.yaml",
            "name: t/p\nextends: coreweave/h100-ib\nnccl:\n  diagnostics: true\n  inspector:\n    format: prometheus\n    dump-dir: /var/lib/x\n    host-path: /srv/x\n    interval-us: 60000000\n",
        );
        assert!(!kdl.has_errors(), "{:#?}", kdl.problems);
        assert_eq!(kdl.profile, yaml.profile);
        assert_eq!(
            env_of(&kdl),
            [
                "NCCL_RUN_DIAGNOSTICS=1",
                "NCCL_PROFILER_PLUGIN=inspector",
                "NCCL_INSPECTOR_ENABLE=1",
                "NCCL_INSPECTOR_PROM_DUMP=1",
                "NCCL_INSPECTOR_DUMP_DIR=/var/lib/x",
                "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=60000000",
            ]
        );
        let p = kdl.profile.unwrap();
        assert_eq!(p.nccl.inspector.unwrap().value.host_path(), Some("/srv/x"));
    }

    #[test]
    fn defaults_fill_in_and_false_sets_nothing() {
        let base = r#"profile "t/p" extends="coreweave/h100-ib" { nccl diagnostics=#false { inspector "json" } }"#;
        assert_eq!(
            env_of(&load_text("p.kdl", base)),
            [
                "NCCL_PROFILER_PLUGIN=inspector",
                "NCCL_INSPECTOR_ENABLE=1",
                "NCCL_INSPECTOR_DUMP_DIR=/var/log/nccl-inspector",
                "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500",
            ]
        );
        let off = "name: t/q\nextends: coreweave/h100-ib\nnccl:\n  diagnostics: false\n";
        assert!(env_of(&load_text("q.yaml", off)).is_empty());
    }

    #[test]
    fn bad_values_are_coded() {
        for (text, code) in [
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl { inspector dump-dir="/d" } }"#,
                Code::MissingKey,
            ),
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl { inspector "csv" } }"#,
                Code::InvalidValue,
            ),
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl { inspector "json" dump-dir="logs" } }"#,
                Code::InvalidValue,
            ),
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl { inspector "json" interval-us=0 } }"#,
                Code::InvalidValue,
            ),
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl { inspector "json" dump_dir="/d" } }"#,
                Code::UnknownKey,
            ),
            (
                r#"profile "t/p" extends="coreweave/h100-ib" { nccl diagnostics="yes" }"#,
                Code::TypeMismatch,
            ),
        ] {
            let l = load_text("p.kdl", text);
            assert!(
                l.problems.iter().any(|p| p.code == code),
                "{text}: {:#?}",
                l.problems
            );
        }
    }
}
