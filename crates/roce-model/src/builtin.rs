//! Built-in profiles, embedded in the binary from `profiles/`.
//!
//! Each built-in is written in KDL (the canonical, commented form that `roce profiles show` prints) and
//! has a YAML twin that a test proves loads to the same model and renders byte-identically. Loading uses
//! the YAML twin: the KDL v2 parser costs about 10 million instructions for one commented built-in —
//! 80 % of a whole `roce render --target pod` — where the YAML front end needs well under one million
//! (measured with callgrind; see `docs/decisions.md`, "(startup)").

use crate::source::{Format, Source};

macro_rules! builtins {
    ($($name:literal),* $(,)?) => {
        /// `(name, KDL text, YAML twin)` of every built-in profile.
        pub const BUILTIN: &[(&str, &str, &str)] = &[
            $( (
                $name,
                include_str!(concat!("../../../profiles/", $name, ".kdl")),
                include_str!(concat!("../../../profiles/", $name, ".yaml")),
            ), )*
        ];
    };
}

builtins!(
    "coreweave/gb300-roce",
    "coreweave/gb300-roce-nixl",
    "coreweave/gb300-roce-sunk",
    "coreweave/gb300-ib",
    "coreweave/gb200-ib",
    "coreweave/h100-ib",
    "coreweave/b200-ib",
);

/// The profile `roce render` uses when none is named.
pub const DEFAULT: &str = "coreweave/gb300-roce";

/// Names of the built-in profiles, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _, _)| *n)
}

/// The source roce loads for a built-in profile (its YAML twin), named `builtin:<name>`.
pub fn source(name: &str) -> Option<Source> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, _, yaml)| Source::with_format(format!("builtin:{n}"), *yaml, Format::Yaml))
}

/// The canonical KDL text of a built-in profile, as `roce profiles show` prints it.
pub fn kdl_source(name: &str) -> Option<Source> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, kdl, _)| Source::with_format(format!("builtin:{n}.kdl"), *kdl, Format::Kdl))
}
