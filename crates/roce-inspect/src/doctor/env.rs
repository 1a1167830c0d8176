//! The environment the workload sees: the process environment on a live host, or
//! `<root>/proc/self/environ` when probing a tree.

use std::collections::BTreeMap;

use super::root::{ENVIRON_LIMIT, Root};

/// Where the variables came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvSource {
    /// `std::env` of the running `roce` process.
    Process,
    /// `/proc/self/environ` under a root (absent file: empty environment).
    Environ,
    /// Given by the caller.
    Given,
}

impl EnvSource {
    /// `process`, `environ` or `given`.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvSource::Process => "process",
            EnvSource::Environ => "environ",
            EnvSource::Given => "given",
        }
    }
}

/// Environment variables (names and values lossily decoded as UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
    /// Where they came from.
    pub source: EnvSource,
}

impl Env {
    /// The running process's environment.
    pub fn process() -> Self {
        let vars = std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        Env {
            vars,
            source: EnvSource::Process,
        }
    }

    /// `/proc/self/environ` under `root`: NUL-separated `NAME=value` records.
    pub fn from_root(root: &Root) -> Self {
        let bytes = root
            .read_bytes("/proc/self/environ", ENVIRON_LIMIT)
            .unwrap_or_default();
        Env {
            vars: parse_environ(&bytes),
            source: EnvSource::Environ,
        }
    }

    /// Variables given directly.
    ///
    /// ```
    /// use roce_inspect::doctor::Env;
    /// let env = Env::from_pairs([("NCCL_IB_HCA", "ibp")]);
    /// assert_eq!(env.get("NCCL_IB_HCA"), Some("ibp"));
    /// ```
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            source: EnvSource::Given,
        }
    }

    /// A variable's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// No variables at all.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

/// Parse `/proc/<pid>/environ`: records split on NUL, each `NAME=value`; records without `=` are
/// skipped; a later duplicate wins (as `getenv` would see the first, but duplicates do not occur in
/// practice).
pub(super) fn parse_environ(bytes: &[u8]) -> BTreeMap<String, String> {
    bytes
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .filter_map(|record| {
            let text = String::from_utf8_lossy(record);
            let (k, v) = text.split_once('=')?;
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environ_records() {
        let vars = parse_environ(b"A=1\0B=x=y\0junk\0=nokey\0C=\0");
        assert_eq!(vars.get("A").map(String::as_str), Some("1"));
        assert_eq!(vars.get("B").map(String::as_str), Some("x=y"));
        assert_eq!(vars.get("C").map(String::as_str), Some(""));
        assert_eq!(vars.len(), 3);
    }
}
