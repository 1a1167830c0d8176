//! Built-in profiles, embedded in the binary from `profiles/`.

use crate::source::{Format, Source};

macro_rules! builtins {
    ($($name:literal),* $(,)?) => {
        /// `(name, KDL text)` of every built-in profile.
        pub const BUILTIN: &[(&str, &str)] = &[
            $( ($name, include_str!(concat!("../../../profiles/", $name, ".kdl"))), )*
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
    BUILTIN.iter().map(|(n, _)| *n)
}

/// The source of a built-in profile, named `builtin:<name>`.
pub fn source(name: &str) -> Option<Source> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Source::with_format(format!("builtin:{n}"), *text, Format::Kdl))
}
