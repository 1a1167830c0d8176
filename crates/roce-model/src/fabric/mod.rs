//! The fabric core: every fact roce knows about fabrics, in one place.
//!
//! `check`'s rules, `lower` (roce-render), `lint`, `doctor` and `explain --profile` (roce-inspect) ask these
//! modules instead of keeping their own lists, so two commands cannot give two answers about one value.
//! Adding a fact — a UCX transport, a variable a typed field sets, a resource a fabric needs — is a change
//! here and nowhere else.
//!
//! - [`FabricKind`]: InfiniBand or RoCE.
//! - [`ucx`]: UCX transports, their classes and releases, the aliases, the UCX mode, and what is wrong with
//!   a `UCX_TLS` value for a UCX mode ([`ucx::tls_concerns`]).
//! - [`env`](mod@env): which typed field sets which variable and who reads it.
//! - [`nccl`]: which NCCL variables are strings, the net-plugin library rule, NCCL's internal networks.
//! - [`attach`]: what a pod needs attached (Multus networks, resources, capabilities).
//! - [`provider`]: the NCCL network provider (IB verbs, aws-ofi-nccl/EFA, gIB, a plugin by name) and what
//!   it needs in the pod: `NCCL_NET`, `LD_LIBRARY_PATH`, `FI_*`, host mounts, pod annotations.
//! - [`ofi_platform`]: the variables aws-ofi-nccl sets itself per EC2 instance type (a value the user
//!   set wins), cited from its `platform-aws.cpp`.
//! - [`bandwidth`]: the bus bandwidth a node's rails allow each nccl-tests collective (the line rate).
//! - [`devices`]: what a pod's resources and claims give it (RDMA devices, whose accelerators, the IMEX
//!   channel) and which variables are search paths.
//! - [`observe`]: NCCL's own observability a profile can turn on (its diagnostics, the Inspector profiler
//!   plugin and its output directory) and why RAS needs nothing.
//! - [`dra`]: DRA NIC claims, the NVLink domain (ComputeDomain) and placement (clique affinity, Kueue
//!   topology), the objects they add to a pod, and what is wrong with them.
//!
//! Nothing here reads a [`Profile`](crate::Profile): the profile asks these modules
//! ([`Profile::env_vars`](crate::Profile::env_vars), the profile's environment in emit order;
//! [`Profile::pod_wiring`](crate::Profile::pod_wiring)), so the model depends on the fabric core and not the
//! reverse (docs/decisions.md, "(api)").

pub mod attach;
pub mod bandwidth;
pub mod devices;
pub mod dra;
pub mod env;
pub mod nccl;
pub mod nccl_versions;
pub mod observe;
pub mod ofi_platform;
pub mod provider;
pub mod ucx;

/// InfiniBand or RoCE. The default (RoCE) is only a blank section's, which the walker fills: a profile
/// must name its fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FabricKind {
    /// NVIDIA Quantum InfiniBand: LID-addressed, no Multus.
    InfiniBand,
    /// RoCE v2 (e.g. Spectrum-X): IP-addressed, rail netdevs must be in the pod.
    #[default]
    Roce,
}

impl FabricKind {
    /// `infiniband` or `roce`.
    pub fn as_str(self) -> &'static str {
        match self {
            FabricKind::InfiniBand => "infiniband",
            FabricKind::Roce => "roce",
        }
    }
}
