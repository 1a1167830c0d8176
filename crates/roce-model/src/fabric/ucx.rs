//! UCX: the transports `UCX_TLS` accepts (`transports.rs`, re-exported here), the UCX mode a profile runs,
//! and the one verdict on a `UCX_TLS` value for that mode ([`tls_concerns`]).
//!
//! The transport table sits below the `UCX_TLS` parser ([`crate::ucx_list`]), which reads it; the verdict
//! sits above it, as it judges a parsed list.

pub(crate) mod transports;

use transports::TransportClass::Rdma;
pub use transports::{
    ALIASES, CUDA_COPY, TRANSPORTS, Transport, TransportClass, class, names, transport,
};

use crate::ucx_list::{TlsList, TlsRole};

/// The least rdma-core release UCX GPUDirect RDMA needs on GB300 RoCE: UCX built against an older one
/// initialises, even detects GPU memory support, then transfers fail with `vendor_err 0x89` (`Unexpected UCX
/// error: Input/output error`) while NCCL tests still pass (CoreWeave GB300 RoCE guide; fabric-facts §4b).
/// `ucx min-rdma-core`'s default; `doctor` asks it when it has no profile, `explain` names it.
pub const MIN_RDMA_CORE: u32 = min_rdma_core!();

/// [`MIN_RDMA_CORE`] as a literal, for the field table's `concat!`ed docs (a `const` cannot be formatted
/// into a `&'static str`).
macro_rules! min_rdma_core {
    () => {
        54
    };
}
pub(crate) use min_rdma_core;

/// What UCX is for in this profile (default: off, as a profile without `ucx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UcxMode {
    /// Emit no UCX variables.
    #[default]
    Off,
    /// Pin UCX to TCP (NCCL-only jobs: keeps UCX off the RDMA devices).
    Tcp,
    /// UCX over RDMA (MPI, NIXL/vLLM).
    Rdma,
}

impl UcxMode {
    /// `off`, `tcp` or `rdma`.
    pub fn as_str(self) -> &'static str {
        match self {
            UcxMode::Off => "off",
            UcxMode::Tcp => "tcp",
            UcxMode::Rdma => "rdma",
        }
    }
}

/// What is wrong with a `UCX_TLS` value for a profile's UCX mode and fabric. `check` (on the profile) and
/// `lint` (on a manifest) both ask this, so they cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsConcern {
    /// TCP mode, but the list lets UCX carry data over the RDMA devices.
    RdmaInTcpMode(Vec<&'static str>),
    /// TCP mode, but no TCP transport: UCX has nothing to reach other nodes with.
    NoTcp,
    /// RDMA mode, but no RDMA transport carries data (auxiliary wire-up and on-device DMA do not count).
    NoRdma,
    /// RDMA mode with a generic verbs transport as a data transport and without its accelerated mlx5
    /// counterpart: ConnectX NICs need the mlx5 transports (the vendor guide's UCX list; fabric facts).
    GenericVerbs(Vec<&'static str>),
    /// RDMA mode without `cuda_copy`: GPU buffers cannot move.
    NoCuda,
}

impl std::fmt::Display for TlsConcern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsConcern::RdmaInTcpMode(tls) => write!(
                f,
                "lets UCX use the RDMA devices ({}) in a profile that pins UCX to TCP: NCCL never uses UCX, and UCX over RDMA here only adds start-up failures (GID selection, memory registration) to MPI",
                tls.join(", ")
            ),
            TlsConcern::NoTcp => f.write_str("has no `tcp` in a profile that pins UCX to TCP"),
            TlsConcern::NoRdma => f.write_str(
                "enables no RDMA transport in a profile that runs UCX over RDMA: UCX moves data over TCP where the list allows it, and cannot connect where it does not",
            ),
            TlsConcern::GenericVerbs(tls) => write!(
                f,
                "uses the generic verbs transports ({}) where ConnectX NICs need the mlx5 ones (rc_mlx5, ud_mlx5)",
                tls.join(", ")
            ),
            TlsConcern::NoCuda => {
                f.write_str("has no CUDA transport (cuda_copy): UCX cannot move GPU buffers")
            }
        }
    }
}

/// The data transports (primary role) of `tls` in `class`.
pub fn primaries(tls: &TlsList, class: TransportClass) -> Vec<&'static str> {
    tls.roles()
        .into_iter()
        .filter(|(name, role)| *role == TlsRole::Primary && self::class(name) == Some(class))
        .map(|(name, _)| name)
        .collect()
}

/// Every concern with `tls` for UCX in `mode`. `all` (UCX's default) raises none: UCX then picks by
/// reachability and speed itself.
pub fn tls_concerns(tls: &TlsList, mode: UcxMode) -> Vec<TlsConcern> {
    let mut out = Vec::new();
    if tls.is_all() {
        return out;
    }
    let rdma = primaries(tls, Rdma);
    match mode {
        UcxMode::Off => {}
        UcxMode::Tcp => {
            // One finding: with RDMA transports enabled, the missing `tcp` is the lesser problem.
            if !rdma.is_empty() {
                out.push(TlsConcern::RdmaInTcpMode(rdma));
            } else if !tls.contains("tcp") {
                out.push(TlsConcern::NoTcp);
            }
        }
        UcxMode::Rdma => {
            if rdma.is_empty() {
                out.push(TlsConcern::NoRdma);
            }
            let generic: Vec<&str> = rdma
                .iter()
                .copied()
                .filter(|t| {
                    transport(t)
                        .and_then(|t| t.accelerated)
                        .is_some_and(|fast| !rdma.contains(&fast))
                })
                .collect();
            if !generic.is_empty() {
                out.push(TlsConcern::GenericVerbs(generic));
            }
            if !tls.contains(CUDA_COPY) {
                out.push(TlsConcern::NoCuda);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ucx_list::parse_tls;

    fn concerns(tls: &str, mode: UcxMode) -> Vec<TlsConcern> {
        tls_concerns(&parse_tls(tls).0, mode)
    }

    #[test]
    fn names_are_unique_and_aliases_name_transports() {
        let mut names: Vec<_> = names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TRANSPORTS.len());
        for (alias, members) in ALIASES {
            assert!(transport(alias).is_none(), "{alias} shadows a transport");
            for m in *members {
                let name = m.strip_suffix(":aux").unwrap_or(m);
                assert!(transport(name).is_some(), "{alias} -> {m}");
            }
        }
    }

    #[test]
    fn gga_is_not_a_network_transport() {
        // openucx/ucx gga_mlx5.c: reachable only when the peer's system image GUID is ours.
        assert_eq!(class("gga_mlx5"), Some(TransportClass::DmaOffload));
        assert_eq!(
            concerns("gga_mlx5,cuda_copy", UcxMode::Rdma),
            vec![TlsConcern::NoRdma]
        );
        assert_eq!(concerns("gga,rc,cuda_copy", UcxMode::Rdma), vec![]);
    }

    #[test]
    fn wire_up_only_rdma_is_no_rdma() {
        assert_eq!(
            concerns("ud_mlx5:aux,tcp,cuda_copy", UcxMode::Rdma),
            vec![TlsConcern::NoRdma]
        );
    }

    #[test]
    fn the_guide_lists_pass() {
        assert_eq!(concerns("rc_mlx5,ud_mlx5,cuda_copy", UcxMode::Rdma), vec![]);
        assert_eq!(concerns("tcp", UcxMode::Tcp), vec![]);
        assert_eq!(concerns("all", UcxMode::Rdma), vec![]);
    }

    #[test]
    fn tcp_mode_concerns() {
        assert_eq!(
            concerns("rc,tcp", UcxMode::Tcp),
            vec![TlsConcern::RdmaInTcpMode(vec!["rc_mlx5", "rc_verbs"])]
        );
        assert_eq!(concerns("sm,cuda", UcxMode::Tcp), vec![TlsConcern::NoTcp]);
    }

    #[test]
    fn generic_verbs_as_data_transports() {
        assert_eq!(
            concerns("rc_verbs,ud_verbs,cuda_copy", UcxMode::Rdma),
            vec![TlsConcern::GenericVerbs(vec!["rc_verbs", "ud_verbs"])]
        );
        assert_eq!(
            concerns("rc_v,cuda_copy", UcxMode::Rdma),
            vec![TlsConcern::GenericVerbs(vec!["rc_verbs"])]
        );
        // With the mlx5 counterpart enabled UCX picks it: `rc` and deny lists are fine.
        assert_eq!(concerns("rc,cuda_copy", UcxMode::Rdma), vec![]);
        assert_eq!(concerns("^tcp", UcxMode::Rdma), vec![]);
        assert_eq!(concerns("rc_x,cuda_copy", UcxMode::Rdma), vec![]);
    }

    #[test]
    fn rdma_without_cuda() {
        assert_eq!(concerns("rc_x", UcxMode::Rdma), vec![TlsConcern::NoCuda]);
    }
}
