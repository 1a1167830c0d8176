//! Validated names and expressions for DRA objects. Each exists only after its rule held, so emitters and
//! rules never check a name again.
//!
//! The rules are Kubernetes' own (`k8s.io/apimachinery/pkg/util/validation`): `IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsQualifiedName`, `IsValidLabelValue`; and `resource.k8s.io/v1`'s
//! `CELSelectorExpressionMaxLength` for device selectors.

use std::fmt;

/// Why a name or expression was refused; the message says which Kubernetes rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing was written.
    #[error("{what} must not be empty")]
    Empty {
        /// What kind of value it is (`"a DNS label"`).
        what: &'static str,
    },
    /// Longer than the API server accepts.
    #[error("{what} is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// What kind of value it is.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A character or shape the rule does not allow.
    #[error("{what} {rule}")]
    Invalid {
        /// What kind of value it is.
        what: &'static str,
        /// The rule, as a sentence tail (`"must consist of lower-case letters, digits and '-'"`).
        rule: &'static str,
    },
}

macro_rules! newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The text, as it is written into a manifest.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }
    };
}

newtype!(
    /// An RFC 1123 DNS label: what a pod's `resourceClaims[].name` and a device request's `name` must be.
    DnsLabel
);
newtype!(
    /// An RFC 1123 DNS subdomain: the name of a ResourceClaimTemplate or a ComputeDomain.
    DnsSubdomain
);
newtype!(
    /// A DeviceClass name (a DNS subdomain an administrator chose: `dranet.net`, `gpu.nvidia.com`,
    /// `mrdma.google.com`).
    DeviceClassName
);
newtype!(
    /// A CEL expression a device selector evaluates (`device.attributes["dra.net"].rdma == true`). Kept as
    /// text: the API server compiles it against the devices' attributes, which roce cannot see.
    CelExpression
);
newtype!(
    /// A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters
    /// (`nvidia.com/gpu.clique`, `app`).
    LabelKey
);
newtype!(
    /// A label value: empty, or at most 63 alphanumerics, `-`, `_` and `.`, starting and ending with an
    /// alphanumeric.
    LabelValue
);

const LABEL: &str = "a DNS label";
const SUBDOMAIN: &str = "a DNS subdomain";

impl DnsLabel {
    /// Checks `s` against `IsDNS1123Label`.
    pub fn new(s: &str) -> Result<Self, NameError> {
        dns_label(s, LABEL).map(|()| DnsLabel(s.to_owned()))
    }
}

impl DnsSubdomain {
    /// Checks `s` against `IsDNS1123Subdomain`.
    pub fn new(s: &str) -> Result<Self, NameError> {
        dns_subdomain(s, SUBDOMAIN).map(|()| DnsSubdomain(s.to_owned()))
    }
}

impl DeviceClassName {
    /// Checks `s` against `IsDNS1123Subdomain` (DeviceClass is a cluster-scoped object).
    pub fn new(s: &str) -> Result<Self, NameError> {
        dns_subdomain(s, "a device class name").map(|()| DeviceClassName(s.to_owned()))
    }
}

/// `CELSelectorExpressionMaxLength` in `k8s.io/api/resource/v1/types.go`.
pub const CEL_MAX_LEN: usize = 10 * 1024;

impl CelExpression {
    /// Accepts any non-blank expression up to [`CEL_MAX_LEN`] bytes, trimmed of surrounding whitespace (a
    /// KDL multi-line string keeps its indentation otherwise).
    pub fn new(s: &str) -> Result<Self, NameError> {
        const WHAT: &str = "a CEL expression";
        let s = s.trim();
        if s.is_empty() {
            return Err(NameError::Empty { what: WHAT });
        }
        max_len(s, WHAT, CEL_MAX_LEN)?;
        Ok(CelExpression(s.to_owned()))
    }
}

impl LabelKey {
    /// Checks `s` against `IsQualifiedName`.
    pub fn new(s: &str) -> Result<Self, NameError> {
        const WHAT: &str = "a label key";
        let name = match s.split_once('/') {
            Some((prefix, name)) => {
                if prefix.is_empty() {
                    return Err(NameError::Invalid {
                        what: WHAT,
                        rule: "must have a prefix before '/'",
                    });
                }
                dns_subdomain(prefix, "a label key's prefix")?;
                name
            }
            None => s,
        };
        if name.is_empty() {
            return Err(NameError::Empty { what: WHAT });
        }
        label_name(name, WHAT)?;
        Ok(LabelKey(s.to_owned()))
    }
}

impl LabelValue {
    /// Checks `s` against `IsValidLabelValue`.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if !s.is_empty() {
            label_name(s, "a label value")?;
        }
        Ok(LabelValue(s.to_owned()))
    }
}

fn max_len(s: &str, what: &'static str, max: usize) -> Result<(), NameError> {
    if s.len() > max {
        return Err(NameError::TooLong {
            what,
            len: s.len(),
            max,
        });
    }
    Ok(())
}

fn dns_label(s: &str, what: &'static str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty { what });
    }
    max_len(s, what, 63)?;
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-';
    let end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !b.iter().all(inner) {
        return Err(NameError::Invalid {
            what,
            rule: "must consist of lower-case letters, digits and '-'",
        });
    }
    if !end(&b[0]) || !end(&b[b.len() - 1]) {
        return Err(NameError::Invalid {
            what,
            rule: "must start and end with a lower-case letter or digit",
        });
    }
    Ok(())
}

fn dns_subdomain(s: &str, what: &'static str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty { what });
    }
    max_len(s, what, 253)?;
    for part in s.split('.') {
        dns_label(part, what).map_err(|e| match e {
            NameError::Empty { .. } => NameError::Invalid {
                what,
                rule: "must not have an empty part between dots",
            },
            NameError::TooLong { .. } => NameError::Invalid {
                what,
                rule: "must not have a part between dots longer than 63 characters",
            },
            other => other,
        })?;
    }
    Ok(())
}

/// The name part of a qualified name, and a label value: `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, ≤ 63.
fn label_name(s: &str, what: &'static str) -> Result<(), NameError> {
    max_len(s, what, 63)?;
    let b = s.as_bytes();
    if !b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        return Err(NameError::Invalid {
            what,
            rule: "must consist of letters, digits, '-', '_' and '.'",
        });
    }
    if !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Err(NameError::Invalid {
            what,
            rule: "must start and end with a letter or digit",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels_follow_rfc_1123() {
        for ok in ["a", "compute-domain-channel", "nic-0", "0", &"a".repeat(63)] {
            assert!(DnsLabel::new(ok).is_ok(), "{ok}");
        }
        assert_eq!(DnsLabel::new(""), Err(NameError::Empty { what: LABEL }));
        assert!(matches!(
            DnsLabel::new(&"a".repeat(64)),
            Err(NameError::TooLong { max: 63, .. })
        ));
        for bad in ["Nic", "nic_0", "-nic", "nic-", "a.b"] {
            assert!(
                matches!(DnsLabel::new(bad), Err(NameError::Invalid { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn subdomains_and_device_classes_allow_dots_but_not_empty_parts() {
        for ok in [
            "dranet.net",
            "gpu.nvidia.com",
            "nccl-test-72-gb300-18n-dra-cd-channel",
        ] {
            assert!(DnsSubdomain::new(ok).is_ok(), "{ok}");
            assert!(DeviceClassName::new(ok).is_ok(), "{ok}");
        }
        for bad in ["dranet..net", ".net", "net.", "Dranet.net", "a_b.c"] {
            assert!(DeviceClassName::new(bad).is_err(), "{bad}");
        }
        let long = vec!["a".repeat(63); 4].join(".");
        assert!(matches!(
            DnsSubdomain::new(&long),
            Err(NameError::TooLong { max: 253, .. })
        ));
    }

    #[test]
    fn cel_expressions_are_kept_as_text_but_not_blank() {
        let e = CelExpression::new("\n  device.attributes[\"dra.net\"].rdma == true\n").unwrap();
        assert_eq!(e.as_str(), "device.attributes[\"dra.net\"].rdma == true");
        assert!(matches!(
            CelExpression::new("  \n"),
            Err(NameError::Empty { .. })
        ));
        assert!(matches!(
            CelExpression::new(&"x".repeat(CEL_MAX_LEN + 1)),
            Err(NameError::TooLong { .. })
        ));
    }

    #[test]
    fn label_keys_and_values_follow_qualified_name_rules() {
        for ok in [
            "nvidia.com/gpu.clique",
            "app",
            "metadata.coreweave.cloud/job",
            "A_b.c",
        ] {
            assert!(LabelKey::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "nvidia.com/",
            "Nvidia.com/x",
            "a/b/c",
            "-a",
            "a b",
        ] {
            assert!(LabelKey::new(bad).is_err(), "{bad}");
        }
        for ok in ["", "nccl-test", "Nccl_Test.1"] {
            assert!(LabelValue::new(ok).is_ok(), "{ok}");
        }
        for bad in ["-x", "x-", "a/b", &"a".repeat(64)] {
            assert!(LabelValue::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn messages_name_the_rule() {
        let e = DnsLabel::new("Nic").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a DNS label must consist of lower-case letters, digits and '-'"
        );
    }
}
