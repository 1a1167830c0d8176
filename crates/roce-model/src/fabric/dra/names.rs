//! Names DRA adds to the shared ones in [`crate::names`]: device class names, CEL selector expressions,
//! label keys and values. Each exists only after its rule held, so emitters and rules never check again.
//!
//! The rules are Kubernetes' own (`k8s.io/apimachinery/pkg/util/validation`): `IsDNS1123Subdomain`,
//! `IsQualifiedName`, `IsValidLabelValue`; and `resource.k8s.io/v1`'s `CELSelectorExpressionMaxLength` for
//! device selectors ("must be smaller or equal to 10 Ki").

use std::fmt;
use std::str::FromStr;

use crate::names::{K8sName, NameError, error, name_type};

name_type!(
    /// A DeviceClass name (a DNS subdomain an administrator chose: `dranet.net`, `gpu.nvidia.com`,
    /// `mrdma.google.com`).
    DeviceClassName,
    check_device_class
);
name_type!(
    /// A CEL expression a device selector evaluates (`device.attributes["dra.net"].rdma == true`). Kept as
    /// text, trimmed: the API server compiles it against the devices' attributes, which roce cannot see.
    CelExpression,
    check_cel,
    normalize = str::trim
);
name_type!(
    /// A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters
    /// (`nvidia.com/gpu.clique`, `app`).
    LabelKey,
    check_label_key
);
name_type!(
    /// A label value: empty, or at most 63 alphanumerics, `-`, `_` and `.`, starting and ending with an
    /// alphanumeric.
    LabelValue,
    check_label_value
);

/// `CELSelectorExpressionMaxLength` in `k8s.io/api/resource/v1/types.go`.
pub const CEL_MAX_LEN: usize = 10 * 1024;

fn check_device_class(s: &str) -> Result<(), NameError> {
    K8sName::from_str(s).map(drop).map_err(|_| {
        error(
            format!("`{s}` is not a valid device class name (DNS-1123 subdomain)"),
            "name a DeviceClass the cluster has, e.g. `dranet.net` or `gpu.nvidia.com`",
        )
    })
}

/// `s` is trimmed already (`normalize`).
fn check_cel(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(error(
            "the CEL selector is empty".to_owned(),
            r#"write an expression on the device's attributes, e.g. `device.attributes["dra.net"].rdma == true`"#,
        ));
    }
    if s.len() > CEL_MAX_LEN {
        return Err(error(
            format!("the CEL selector is {} bytes long", s.len()),
            "Kubernetes accepts at most 10 KiB: split it into several selectors (a device must pass all)",
        ));
    }
    Ok(())
}

fn check_label_key(s: &str) -> Result<(), NameError> {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    let prefix_ok = prefix.is_none_or(|p| K8sName::from_str(p).is_ok());
    if prefix_ok && label_name(name) && !name.is_empty() {
        return Ok(());
    }
    Err(error(
        format!("`{s}` is not a valid label key"),
        "write `prefix/name` or `name`: the prefix a DNS subdomain, the name at most 63 letters, digits, \
         `-`, `_` and `.`, starting and ending with a letter or digit",
    ))
}

fn check_label_value(s: &str) -> Result<(), NameError> {
    if s.is_empty() || label_name(s) {
        return Ok(());
    }
    Err(error(
        format!("`{s}` is not a valid label value"),
        "use at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit",
    ))
}

/// The name part of a qualified name, and a non-empty label value:
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_classes_are_subdomains() {
        for ok in ["dranet.net", "gpu.nvidia.com", "efa.networking.k8s.aws"] {
            assert!(DeviceClassName::from_str(ok).is_ok(), "{ok}");
        }
        for bad in ["dranet..net", ".net", "net.", "Dranet.net", "a_b.c", ""] {
            let e = DeviceClassName::from_str(bad).unwrap_err();
            assert!(e.message.contains("device class"), "{bad}: {e}");
        }
    }

    #[test]
    fn cel_expressions_are_kept_as_text_but_not_blank() {
        let e =
            CelExpression::from_str("\n  device.attributes[\"dra.net\"].rdma == true\n").unwrap();
        assert_eq!(e.as_str(), "device.attributes[\"dra.net\"].rdma == true");
        assert!(CelExpression::from_str("  \n").is_err());
        assert!(CelExpression::from_str(&"x".repeat(CEL_MAX_LEN)).is_ok());
        let long = CelExpression::from_str(&"x".repeat(CEL_MAX_LEN + 1)).unwrap_err();
        assert!(long.help.contains("10 KiB"), "{long:?}");
    }

    #[test]
    fn label_keys_follow_qualified_name_rules() {
        for ok in [
            "nvidia.com/gpu.clique",
            "app",
            "metadata.coreweave.cloud/job",
            "A_b.c",
        ] {
            assert!(LabelKey::from_str(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "nvidia.com/",
            "Nvidia.com/x",
            "a/b/c",
            "-a",
            "a b",
            &"a".repeat(64),
        ] {
            assert!(LabelKey::from_str(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values_may_be_empty() {
        for ok in ["", "nccl-test", "Nccl_Test.1"] {
            assert!(LabelValue::from_str(ok).is_ok(), "{ok}");
        }
        for bad in ["-x", "x-", "a/b", &"a".repeat(64)] {
            assert!(LabelValue::from_str(bad).is_err(), "{bad}");
        }
    }
}
