//! Validated names: values that exist only after parsing, so nothing downstream checks them again.
//!
//! Each type holds its text privately and is built by [`std::str::FromStr`] (or `parse`), which says what is
//! wrong and how to fix it. Emitters take them as they are: a [`DnsLabel`] is always a DNS-1123 label, an
//! [`EnvKey`] always a POSIX variable name, an [`IfName`] always a name the Linux kernel accepts for a
//! netdev. The NCCL and UCX lists are validated values of the same kind, with their own parsers
//! ([`crate::nccl_list`], [`crate::ucx_list`]).
//!
//! ```
//! use roce_model::names::{EnvKey, NadRef};
//! let key: EnvKey = "NCCL_IB_HCA".parse().unwrap();
//! assert_eq!(key.as_str(), "NCCL_IB_HCA");
//! assert!("9LIVES".parse::<EnvKey>().is_err());
//! let nad: NadRef = "cw-multus/ibs0p0-macvlan".parse().unwrap();
//! assert_eq!((nad.namespace().as_str(), nad.name().as_str()), ("cw-multus", "ibs0p0-macvlan"));
//! ```

use std::fmt;
use std::str::FromStr;

/// Why a text is not a valid name of its kind: the message, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NameError {}

pub(crate) fn error(message: String, help: &str) -> NameError {
    NameError {
        message,
        help: help.to_string(),
    }
}

/// A validated name type: its check, and optionally a normalisation applied first (CEL selectors are
/// trimmed). The one definition of the newtypes here and in [`crate::fabric::dra::names`].
macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $check:path) => {
        name_type!($(#[$doc])* $name, $check, normalize = std::convert::identity);
    };
    ($(#[$doc:meta])* $name:ident, $check:path, normalize = $norm:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                let s: &str = $norm(s);
                $check(s)?;
                Ok(Self(s.to_string()))
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(s: String) -> Result<Self, NameError> {
                // Only a normalisation that changes the text costs a copy.
                if $norm(s.as_str()).len() != s.len() {
                    return s.parse();
                }
                $check(&s)?;
                Ok(Self(s))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        // Same hash and equality as the text, so maps keyed by the name look up by `&str`.
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl From<$name> for String {
            fn from(n: $name) -> String {
                n.0
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
    };
}

pub(crate) use name_type;

/// Is `s` a DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters (Kubernetes
/// `IsDNS1123Label`: namespaces, container names, Multus network names)?
pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Is `s` dot-separated DNS-1123 labels, at most 253 characters (Kubernetes `IsDNS1123Subdomain`: most
/// object names, node names)?
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// [`is_dns_label`], with an error that says what the name is for.
fn dns_label(s: &str, what: &str, max: usize) -> Result<(), NameError> {
    debug_assert_eq!(max, 63, "a DNS-1123 label has at most 63 characters");
    if is_dns_label(s) {
        Ok(())
    } else {
        Err(error(
            format!("`{s}` is not a valid {what}"),
            &format!(
                "use at most {max} lower-case letters, digits and `-`, starting and ending with a letter or digit"
            ),
        ))
    }
}

fn check_label(s: &str) -> Result<(), NameError> {
    dns_label(
        s,
        "Kubernetes namespace or label-style name (DNS-1123 label)",
        63,
    )
}

/// Dot-separated DNS-1123 labels, at most 253 characters (Kubernetes `IsDNS1123Subdomain`).
fn check_subdomain(s: &str) -> Result<(), NameError> {
    if is_dns_subdomain(s) {
        Ok(())
    } else {
        Err(error(
            format!("`{s}` is not a valid Kubernetes object name (DNS-1123 subdomain)"),
            "use lower-case letters, digits, `-` and `.`, at most 253 characters, each part starting and ending with a letter or digit",
        ))
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*` (POSIX; what Kubernetes, Slurm, Docker and dotenv readers all accept).
fn check_env_key(s: &str) -> Result<(), NameError> {
    let mut bytes = s.bytes();
    let ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(error(
            format!("`{s}` is not a valid environment variable name"),
            "names are letters, digits and `_`, not starting with a digit",
        ))
    }
}

/// A Linux capability name without `CAP_`, as Kubernetes `capabilities.add` takes it: upper-case letters,
/// digits and `_`.
fn check_capability(s: &str) -> Result<(), NameError> {
    if let Some(bare) = s.strip_prefix("CAP_") {
        return Err(error(
            format!("`{s}` carries the `CAP_` prefix"),
            &format!("write `{bare}`, without the `CAP_` prefix"),
        ));
    }
    let ok = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(error(
            format!("`{s}` is not a Linux capability name"),
            "write it as Kubernetes does, upper case without `CAP_`, e.g. `IPC_LOCK`",
        ))
    }
}

/// An extended resource name: `domain/name`, a DNS subdomain, `/`, and a name of `[A-Za-z0-9._-]` (Kubernetes
/// `IsExtendedResourceName`, which also rejects the `kubernetes.io` domain and requires the prefix).
fn check_resource(s: &str) -> Result<(), NameError> {
    let ok = s.len() <= 253
        && s.split_once('/').is_some_and(|(domain, name)| {
            check_subdomain(domain).is_ok()
                && !domain.ends_with("kubernetes.io")
                && !name.is_empty()
                && name.len() <= 63
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
                && name.as_bytes()[0].is_ascii_alphanumeric()
                && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric()
        });
    if ok {
        Ok(())
    } else {
        Err(error(
            format!("`{s}` is not an extended resource name"),
            "write `domain/name`, e.g. `rdma/ib` or `vpc.amazonaws.com/efa`",
        ))
    }
}

/// A Linux network interface name, as the kernel's `dev_valid_name()` (`torvalds/linux:net/core/dev.c`)
/// accepts it: 1 to 15 bytes (`IFNAMSIZ` is 16 with the NUL), not `.` or `..`, and no `/`, `:` or
/// whitespace. Whitespace is the kernel's `isspace()` (`lib/ctype.c`), which works on bytes and counts
/// `\v` and the byte 0xA0 as well as the ASCII blanks. Any other byte is allowed (the kernel takes
/// non-ASCII names byte by byte).
fn check_ifname(s: &str) -> Result<(), NameError> {
    const IFNAMSIZ: usize = 16;
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0);
    let why = if s.is_empty() {
        Some("it is empty")
    } else if s.len() >= IFNAMSIZ {
        Some("it is longer than 15 bytes")
    } else if s == "." || s == ".." {
        Some("`.` and `..` are reserved")
    } else if s.bytes().any(|b| b == b'/' || b == b':') {
        Some("it contains `/` or `:`")
    } else if s.bytes().any(space) {
        Some("it contains whitespace")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(error(
            format!("`{s}` is not a valid Linux interface name: {why}"),
            "use 1 to 15 bytes without `/`, `:` or whitespace, e.g. `eth0` or `net1`",
        )),
    }
}

name_type!(
    /// A DNS-1123 label: a namespace, a container name.
    DnsLabel,
    check_label
);
name_type!(
    /// A Kubernetes object name (DNS-1123 subdomain): a NetworkAttachmentDefinition, a ConfigMap.
    K8sName,
    check_subdomain
);
name_type!(
    /// An environment variable name.
    EnvKey,
    check_env_key
);
name_type!(
    /// A Linux capability as `securityContext.capabilities.add` takes it (`IPC_LOCK`).
    Capability,
    check_capability
);
name_type!(
    /// An extended resource (`rdma/ib`): a device-plugin resource a container requests.
    ResourceName,
    check_resource
);
name_type!(
    /// A Linux network interface (netdev) name (`eth0`, `net1`, `ibs0p0`), valid by the kernel's
    /// `dev_valid_name()`: a rail's host port and its netdev in the pod.
    IfName,
    check_ifname
);

/// One NetworkAttachmentDefinition reference: `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NadRef {
    namespace: DnsLabel,
    name: K8sName,
}

impl NadRef {
    /// The reference from its validated parts.
    pub fn new(namespace: DnsLabel, name: K8sName) -> Self {
        Self { namespace, name }
    }

    /// The NAD's namespace.
    pub fn namespace(&self) -> &DnsLabel {
        &self.namespace
    }

    /// The NAD's name.
    pub fn name(&self) -> &K8sName {
        &self.name
    }
}

impl FromStr for NadRef {
    type Err = NameError;
    /// `namespace/name`, as the Multus annotation's short form writes it.
    fn from_str(s: &str) -> Result<Self, NameError> {
        let (namespace, name) = s.split_once('/').ok_or_else(|| {
            error(
                format!("`{s}` is not a `namespace/name` reference"),
                "write the NAD as `namespace/name`, e.g. `cw-multus/ibs0p0-macvlan`",
            )
        })?;
        Ok(Self::new(namespace.parse()?, name.parse()?))
    }
}

impl fmt::Display for NadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        for ok in ["a", "cw-multus", "x1", &"a".repeat(63)] {
            assert!(ok.parse::<DnsLabel>().is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", &"a".repeat(64)] {
            assert!(bad.parse::<DnsLabel>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn object_names() {
        assert!("ibs0p0-macvlan".parse::<K8sName>().is_ok());
        assert!("a.b-c.d".parse::<K8sName>().is_ok());
        for bad in ["", "a..b", ".a", "A", "a_b", &"a".repeat(254)] {
            assert!(bad.parse::<K8sName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn env_keys() {
        assert!("_X1".parse::<EnvKey>().is_ok());
        for bad in ["", "1X", "A-B", "A B", "É"] {
            assert!(bad.parse::<EnvKey>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn capabilities() {
        assert!("IPC_LOCK".parse::<Capability>().is_ok());
        let e = "CAP_IPC_LOCK".parse::<Capability>().unwrap_err();
        assert!(e.help.contains("`IPC_LOCK`"), "{e:?}");
        assert!("ipc_lock".parse::<Capability>().is_err());
    }

    #[test]
    fn resources() {
        for ok in [
            "rdma/ib",
            "vpc.amazonaws.com/efa",
            "nvidia.com/gpu",
            "rdma/hca_shared_devices_a",
        ] {
            assert!(ok.parse::<ResourceName>().is_ok(), "{ok}");
        }
        for bad in [
            "ib",
            "/ib",
            "rdma/",
            "RDMA/ib",
            "kubernetes.io/x",
            "rdma/-x",
            "rdma/a b",
        ] {
            assert!(bad.parse::<ResourceName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn interface_names() {
        for ok in [
            "eth0",
            "net1",
            "ibs0p0",
            "a",
            "...",
            "x.y-z_0",
            "é",
            &"a".repeat(15),
        ] {
            assert!(ok.parse::<IfName>().is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "eth0/1",
            "eth0:1",
            "eth 0",
            "eth\t0",
            "eth\x0b0",
            "\u{a0}",
            "à", // UTF-8 C3 A0: the kernel's isspace() takes 0xA0 for a space
            &"a".repeat(16),
        ] {
            assert!(bad.parse::<IfName>().is_err(), "{bad:?}");
        }
        let e = "ibs0p0-macvlan-x".parse::<IfName>().unwrap_err();
        assert!(e.message.contains("15 bytes"), "{e:?}");
    }

    #[test]
    fn nad_refs() {
        let nad: NadRef = "cw-multus/ibs0p0-macvlan".parse().unwrap();
        assert_eq!(nad.to_string(), "cw-multus/ibs0p0-macvlan");
        assert!("no-slash".parse::<NadRef>().is_err());
        assert!("Bad/x".parse::<NadRef>().is_err());
    }
}
