//! UCX transports: every name `UCX_TLS` accepts, what kind of path each is, and the aliases that expand to
//! them.
//!
//! Sources: the transport registrations (`UCT_TL_DEFINE*` under `src/uct/`) and `ucp_tl_aliases[]` in
//! `src/ucp/core/ucp_context.c`, read at each openucx/ucx release tag from v1.7.0 to v1.22.0. `since` is the
//! first release whose tree registers the name (`1.7` means "1.7 or earlier": older trees register
//! transports differently and were not read).

/// What a UCX transport moves data over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportClass {
    /// Between nodes over an RDMA device (verbs, mlx5 accelerated, AWS EFA SRD, GPU-initiated RC).
    Rdma,
    /// On-device memory-to-memory DMA (BlueField GGA/MMO): it reaches only endpoints with the same
    /// system image GUID, so it carries nothing between nodes.
    DmaOffload,
    /// Between nodes over TCP sockets.
    Tcp,
    /// Within a node through shared memory or cross-memory attach.
    SharedMemory,
    /// Within one process.
    Loopback,
    /// NVIDIA GPU memory (copies, CUDA IPC, GDRCopy): needed to move GPU buffers at all.
    Cuda,
    /// Other vendors' GPU or accelerator memory (ROCm, oneAPI Level Zero, Gaudi).
    OtherAccelerator,
    /// Cray Gemini/Aries (uGNI): a network, but not an RDMA device roce wires.
    Ugni,
}

impl TransportClass {
    /// Whether the transport opens an RDMA device through libibverbs (and so needs the image's rdma-core).
    pub fn opens_rdma_device(self) -> bool {
        matches!(self, TransportClass::Rdma | TransportClass::DmaOffload)
    }
}

/// One transport name `UCX_TLS` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Transport {
    /// The name, as `ucx_info -d` prints it after `Transport:`.
    pub name: &'static str,
    /// What it moves data over.
    pub class: TransportClass,
    /// For a generic verbs implementation (`rc_verbs`, `ud_verbs`): its accelerated mlx5 counterpart,
    /// which UCX prefers on ConnectX NICs when both are enabled.
    pub accelerated: Option<&'static str>,
    /// First UCX release that registers it.
    pub since: &'static str,
    /// Last UCX release that registers it, when it is gone (the name is still in an alias table).
    pub until: Option<&'static str>,
}

const fn tl(name: &'static str, class: TransportClass, since: &'static str) -> Transport {
    Transport {
        name,
        class,
        accelerated: None,
        since,
        until: None,
    }
}

const fn verbs(name: &'static str, accelerated: &'static str, since: &'static str) -> Transport {
    Transport {
        accelerated: Some(accelerated),
        ..tl(name, TransportClass::Rdma, since)
    }
}

const fn gone(t: Transport, until: &'static str) -> Transport {
    Transport {
        until: Some(until),
        ..t
    }
}

use TransportClass::*;

/// Every transport name UCX knows, in `ucx_info -d` order.
pub const TRANSPORTS: &[Transport] = &[
    // Named `rc` and `ud` before 1.8.
    verbs("rc_verbs", "rc_mlx5", "1.8"),
    tl("rc_mlx5", Rdma, "1.7"),
    verbs("ud_verbs", "ud_mlx5", "1.8"),
    tl("ud_mlx5", Rdma, "1.7"),
    tl("dc_mlx5", Rdma, "1.7"),
    // openucx/ucx#9678 and #9845: PUT/GET only (no active messages), reachable only on the same system image.
    tl("gga_mlx5", DmaOffload, "1.17"),
    // AWS EFA's Scalable Reliable Datagram.
    tl("srd", Rdma, "1.19"),
    // GPU-initiated RC (GDAKI).
    tl("rc_gda", Rdma, "1.20"),
    tl("tcp", Tcp, "1.7"),
    tl("posix", SharedMemory, "1.7"),
    tl("sysv", SharedMemory, "1.7"),
    tl("xpmem", SharedMemory, "1.7"),
    tl("knem", SharedMemory, "1.7"),
    tl("cma", SharedMemory, "1.7"),
    tl("self", Loopback, "1.7"),
    tl("cuda_copy", Cuda, "1.7"),
    tl("cuda_ipc", Cuda, "1.7"),
    tl("gdr_copy", Cuda, "1.7"),
    tl("rocm_copy", OtherAccelerator, "1.7"),
    tl("rocm_ipc", OtherAccelerator, "1.7"),
    gone(tl("rocm_gdr", OtherAccelerator, "1.7"), "1.13"),
    tl("ze_copy", OtherAccelerator, "1.17"),
    // Named by the `ze` alias; no release up to 1.22 registers them yet.
    tl("ze_ipc", OtherAccelerator, "1.17"),
    tl("ze_gdr", OtherAccelerator, "1.17"),
    tl("ugni_smsg", Ugni, "1.7"),
    tl("ugni_udt", Ugni, "1.7"),
    tl("ugni_rdma", Ugni, "1.7"),
];

/// `UCX_TLS` aliases (`ucp_tl_aliases[]`, UCX 1.20). A member written `name:aux` is enabled by the alias only
/// as an auxiliary (wire-up) transport, exactly as `UCP_TL_AUX()` in the UCX table.
pub const ALIASES: &[(&str, &[&str])] = &[
    ("mm", &["posix", "sysv", "xpmem"]),
    ("sm", &["posix", "sysv", "xpmem", "knem", "cma"]),
    ("shm", &["posix", "sysv", "xpmem", "knem", "cma"]),
    (
        "ib",
        &[
            "rc_verbs", "ud_verbs", "rc_mlx5", "ud_mlx5", "dc_mlx5", "gga_mlx5", "srd",
        ],
    ),
    ("ud_v", &["ud_verbs"]),
    ("ud_x", &["ud_mlx5"]),
    ("ud", &["ud_mlx5", "ud_verbs"]),
    ("rc_v", &["rc_verbs", "ud_verbs:aux"]),
    ("rc_x", &["rc_mlx5", "ud_mlx5:aux"]),
    (
        "rc",
        &["rc_mlx5", "ud_mlx5:aux", "rc_verbs", "ud_verbs:aux"],
    ),
    ("dc", &["dc_mlx5", "ud_mlx5:aux"]),
    ("dc_x", &["dc_mlx5", "ud_mlx5:aux"]),
    // openucx/ucx#10255 (1.18): `gga` is gga_mlx5 alone; it has no active messages, so it needs another
    // transport beside it (`UCX_TLS=gga,rc`).
    ("gga", &["gga_mlx5"]),
    ("ugni", &["ugni_smsg", "ugni_udt:aux", "ugni_rdma"]),
    ("cuda", &["cuda_copy", "cuda_ipc", "gdr_copy"]),
    ("rocm", &["rocm_copy", "rocm_ipc", "rocm_gdr"]),
    ("ze", &["ze_copy", "ze_ipc", "ze_gdr"]),
];

/// The transport named `name` (exact, case-sensitive, as UCX compares).
pub fn transport(name: &str) -> Option<&'static Transport> {
    TRANSPORTS.iter().find(|t| t.name == name)
}

/// Every transport name.
pub fn names() -> impl Iterator<Item = &'static str> {
    TRANSPORTS.iter().map(|t| t.name)
}

/// The class of transport `name`, if UCX knows it.
pub fn class(name: &str) -> Option<TransportClass> {
    transport(name).map(|t| t.class)
}

/// The transport UCX needs on a CUDA system to move GPU buffers when `UCX_TLS` is explicit.
pub const CUDA_COPY: &str = "cuda_copy";
