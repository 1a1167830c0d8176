//! The environment a profile sets: which typed field becomes which variable and who reads it; the order
//! every target emits them in is [`Profile::env_vars`](crate::Profile::env_vars)'s.
//!
//! `lower` (roce-render), `check`'s shadowing rules, `lint` and `doctor` read the names from here; a
//! variable a typed field owns may not be set again as a knob or as extra env.

use super::observe;
use crate::source::Origin;

/// Who reads an env variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumer {
    /// NCCL (collectives).
    Nccl,
    /// UCX (MPI, NIXL).
    Ucx,
    /// Anything else (MPI, IMEX, user variables).
    Other,
}

/// A variable that a typed profile field sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypedEnv {
    /// The variable.
    pub name: &'static str,
    /// The profile field that sets it, as the author writes it (`nccl ib-hca`).
    pub field: &'static str,
    /// Who reads it.
    pub consumer: Consumer,
}

const fn nccl(name: &'static str, field: &'static str) -> TypedEnv {
    TypedEnv {
        name,
        field,
        consumer: Consumer::Nccl,
    }
}

const fn ucx(name: &'static str, field: &'static str) -> TypedEnv {
    TypedEnv {
        name,
        field,
        consumer: Consumer::Ucx,
    }
}

/// `NCCL_SOCKET_IFNAME`: bootstrap and socket-transport interfaces.
pub const NCCL_SOCKET_IFNAME: TypedEnv = nccl("NCCL_SOCKET_IFNAME", "nccl socket-ifname");
/// `NCCL_IB_HCA`: the RDMA devices NCCL uses.
pub const NCCL_IB_HCA: TypedEnv = nccl("NCCL_IB_HCA", "nccl ib-hca");
/// `NCCL_IB_DATA_DIRECT`: whether NCCL uses a NIC's Data Direct DMA device (2.27+; NVIDIA/nccl 2.27.3-1
/// `src/transport/net_ib.cc`: a capable mlx5 device is exposed twice, over PCIe and as `<dev>_dma`; 1, the
/// default, keeps the second, 2 both, 0 turns the detection off).
pub const NCCL_IB_DATA_DIRECT: TypedEnv = nccl("NCCL_IB_DATA_DIRECT", "nccl ib-data-direct");
/// `NCCL_IB_ADDR_FAMILY`: RoCE GID address family.
pub const NCCL_IB_ADDR_FAMILY: TypedEnv = nccl("NCCL_IB_ADDR_FAMILY", "fabric addr-family");
/// `NCCL_IB_ADDR_RANGE`: RoCE GID address range.
pub const NCCL_IB_ADDR_RANGE: TypedEnv = nccl("NCCL_IB_ADDR_RANGE", "fabric addr-range");
/// `NCCL_IB_TC`: RoCE traffic class.
pub const NCCL_IB_TC: TypedEnv = nccl("NCCL_IB_TC", "fabric traffic-class");
/// `NCCL_IB_GID_INDEX`: a fixed RoCE GID index.
pub const NCCL_IB_GID_INDEX: TypedEnv = nccl("NCCL_IB_GID_INDEX", "fabric gid-index");
/// `NCCL_NET_PLUGIN`: the network plugin library (`none` for NCCL's own transports).
pub const NCCL_NET_PLUGIN: TypedEnv = nccl("NCCL_NET_PLUGIN", "nccl net-plugin");
/// `NCCL_DEBUG`.
pub const NCCL_DEBUG: TypedEnv = nccl("NCCL_DEBUG", "nccl debug");
/// `NCCL_DEBUG_SUBSYS`.
pub const NCCL_DEBUG_SUBSYS: TypedEnv = nccl("NCCL_DEBUG_SUBSYS", "nccl debug-subsys");
/// `NCCL_RUN_DIAGNOSTICS`: NCCL's active diagnostics (2.31+, [`super::observe`]).
pub const NCCL_RUN_DIAGNOSTICS: TypedEnv = nccl(observe::NCCL_RUN_DIAGNOSTICS, "nccl diagnostics");
/// `NCCL_INSPECTOR_ENABLE`: the Inspector profiler plugin records.
pub const NCCL_INSPECTOR_ENABLE: TypedEnv =
    nccl(observe::NCCL_INSPECTOR_ENABLE, "inspector format");
/// `NCCL_PROFILER_PLUGIN`: the Inspector's library.
pub const NCCL_PROFILER_PLUGIN: TypedEnv = nccl(observe::NCCL_PROFILER_PLUGIN, "inspector plugin");
/// `NCCL_INSPECTOR_PROM_DUMP`: Prometheus files instead of JSON records.
pub const NCCL_INSPECTOR_PROM_DUMP: TypedEnv =
    nccl(observe::NCCL_INSPECTOR_PROM_DUMP, "inspector format");
/// `NCCL_INSPECTOR_DUMP_DIR`: where the Inspector writes.
pub const NCCL_INSPECTOR_DUMP_DIR: TypedEnv =
    nccl(observe::NCCL_INSPECTOR_DUMP_DIR, "inspector dump-dir");
/// `NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`: how often it writes.
pub const NCCL_INSPECTOR_DUMP_INTERVAL: TypedEnv = nccl(
    observe::NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS,
    "inspector interval-us",
);
/// `UCX_TLS`: the transports UCX may use.
pub const UCX_TLS: TypedEnv = ucx("UCX_TLS", "ucx tls");
/// `UCX_NET_DEVICES`: the devices UCX may use.
pub const UCX_NET_DEVICES: TypedEnv = ucx("UCX_NET_DEVICES", "ucx net-devices");
/// `UCX_IB_GID_INDEX`: the RoCE GID index UCX uses.
pub const UCX_IB_GID_INDEX: TypedEnv = ucx("UCX_IB_GID_INDEX", "ucx gid-index");
/// `UCX_MAX_RMA_RAILS`: how many devices one RMA transfer stripes over.
pub const UCX_MAX_RMA_RAILS: TypedEnv = ucx("UCX_MAX_RMA_RAILS", "ucx max-rma-rails");

/// Every variable a typed field sets.
pub const TYPED: &[TypedEnv] = &[
    NCCL_SOCKET_IFNAME,
    NCCL_IB_HCA,
    NCCL_IB_DATA_DIRECT,
    NCCL_NET_PLUGIN,
    NCCL_DEBUG,
    NCCL_DEBUG_SUBSYS,
    NCCL_RUN_DIAGNOSTICS,
    NCCL_INSPECTOR_ENABLE,
    NCCL_PROFILER_PLUGIN,
    NCCL_INSPECTOR_PROM_DUMP,
    NCCL_INSPECTOR_DUMP_DIR,
    NCCL_INSPECTOR_DUMP_INTERVAL,
    NCCL_IB_ADDR_FAMILY,
    NCCL_IB_ADDR_RANGE,
    NCCL_IB_TC,
    NCCL_IB_GID_INDEX,
    UCX_TLS,
    UCX_NET_DEVICES,
    UCX_IB_GID_INDEX,
    UCX_MAX_RMA_RAILS,
];

/// The typed field that sets `env`, if any.
pub fn typed_field(env: &str) -> Option<&'static str> {
    TYPED.iter().find(|t| t.name == env).map(|t| t.field)
}

/// Variables whose right value depends on the pod, not only on the profile: which RDMA devices and ports it
/// was given and are up (`NCCL_IB_HCA`, `UCX_NET_DEVICES`), and at which index its routable RoCE v2 GID sits
/// (under macvlan it differs per pod, NVIDIA/nccl#718). `roce exec` computes them at start-up, and a
/// variable already set in the environment wins there, so a target that starts the job behind `roce exec`
/// leaves these out of its static environment.
pub const POD_DEPENDENT: &[&str] = &[
    NCCL_IB_HCA.name,
    NCCL_IB_GID_INDEX.name,
    UCX_NET_DEVICES.name,
    UCX_IB_GID_INDEX.name,
];

/// Is `value` an explicit list of devices for `name` (`NCCL_IB_HCA`, `UCX_NET_DEVICES`): NCCL's exact-match
/// `=` form or several entries? It names the devices its author chose — leaving out a storage or management
/// NIC, one port of a dual-port card — which the profile's pattern cannot know: `roce apply` keeps it, and
/// `roce lint` says when it selects none of the profile's rails.
pub fn explicit_device_list(name: &str, value: &str) -> bool {
    (name == NCCL_IB_HCA.name || name == UCX_NET_DEVICES.name)
        && (value.trim_start().starts_with('=') || value.contains(','))
}

/// Does an `NCCL_SOCKET_IFNAME` of `have` select the pod interface `want` as the profile's value does? An
/// exclusion list (`^lo,docker0`) that excludes no prefix of `want`: NCCL matches the listed names as
/// prefixes unless the list starts with `=`, and `^` inverts the match (`src/misc/socket.cc`
/// `ncclFindInterfaces`, `src/misc/utils.cc` `matchIfList`), taking interfaces in the kernel's order, in
/// which a pod's own `eth0` comes before its Multus attachments. Only for a pod's own network namespace:
/// a host-network pod sees every interface of the node.
///
/// ```
/// use roce_model::fabric::env::socket_ifname_keeps;
/// assert!(socket_ifname_keeps("^lo,docker0,veth_def_agent", "eth0"));
/// assert!(!socket_ifname_keeps("^lo,eth", "eth0")); // `eth` excludes eth0 by prefix
/// assert!(!socket_ifname_keeps("eth1", "eth0")); // a selection, not an exclusion
/// ```
pub fn socket_ifname_keeps(have: &str, want: &str) -> bool {
    let Some(excluded) = have.trim().strip_prefix('^') else {
        return false;
    };
    let want = want.trim();
    !want.is_empty()
        && !want.starts_with(['^', '='])
        && !want.contains(',')
        && !excluded.starts_with('=')
        && excluded
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .all(|x| !want.starts_with(x))
}

/// Whether `roce exec` computes `name` from the pod ([`POD_DEPENDENT`]).
pub fn is_pod_dependent(name: &str) -> bool {
    POD_DEPENDENT.contains(&name)
}

/// Variables that only say how much NCCL and UCX log. A manifest may set them differently from the profile
/// (the validation jobs raise them to INFO on purpose): that changes what the job prints, never its fabric.
pub const LOGGING: &[&str] = &[
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_DEBUG_FILE",
    "UCX_LOG_LEVEL",
];

/// Whether `name` only sets logging ([`LOGGING`]).
pub fn is_logging(name: &str) -> bool {
    LOGGING.contains(&name)
}

/// The prefix of every variable NCCL reads (NCCL's documentation, "Environment Variables": each is
/// `NCCL_<NAME>`; `src/misc/param.cc` builds the names as `"NCCL_" #name`).
pub const NCCL_PREFIX: &str = "NCCL_";
/// The prefix of every variable UCX reads (UCX's `ucx_info -c` lists its configuration as `UCX_<NAME>`;
/// `src/ucs/config/parser.c` prepends `UCX_` to every field).
pub const UCX_PREFIX: &str = "UCX_";

/// Who reads `name`, by its prefix ([`NCCL_PREFIX`], [`UCX_PREFIX`]).
pub fn consumer_of(name: &str) -> Consumer {
    if name.starts_with(NCCL_PREFIX) {
        Consumer::Nccl
    } else if name.starts_with(UCX_PREFIX) {
        Consumer::Ucx
    } else {
        Consumer::Other
    }
}

// Variables no profile field sets, which `explain` reads by name. NCCL's documentation
// (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) describes the first two; NCCL_HOSTID only
// NCCL's source does.

/// `MOONCAKE_PROTOCOL`: the transport a Mooncake Store client's transfer engine installs (`rdma` or the
/// default `tcp`), read by `MooncakeStoreConfig.load_from_env` (Mooncake's store service, SGLang's
/// HiCache Mooncake backend).
pub const MOONCAKE_PROTOCOL: &str = "MOONCAKE_PROTOCOL";
/// `NCCL_NET`: forces the network NCCL uses (`IB`, `Socket`, or a plugin's name), instead of the first one
/// that initialises (NCCL ≥ 2.10).
pub const NCCL_NET: &str = "NCCL_NET";
/// `NCCL_IB_DISABLE`: a non-zero value turns NCCL's IB verbs transport (InfiniBand and RoCE) off, so NCCL
/// uses IP sockets.
pub const NCCL_IB_DISABLE: &str = "NCCL_IB_DISABLE";
/// `NCCL_HOSTID`: the string NCCL hashes in place of the host name to tell hosts apart (`getHostHash`,
/// `src/misc/utils.cc`), so it differs from host to host by design.
pub const NCCL_HOSTID: &str = "NCCL_HOSTID";

/// One environment variable, with the profile line that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    /// Variable name.
    pub name: String,
    /// Value, always a string.
    pub value: String,
    /// Who reads it.
    pub consumer: Consumer,
    /// Where in the profile it came from.
    pub origin: Option<Origin>,
}

/// Builds a list of [`EnvVar`]s: what [`Profile::env_vars`](crate::Profile::env_vars) emits.
#[derive(Default)]
pub(crate) struct Env(pub(crate) Vec<EnvVar>);

impl Env {
    pub(crate) fn typed(&mut self, t: TypedEnv, value: impl Into<String>, origin: Origin) {
        self.push(t.name, value, t.consumer, origin);
    }

    pub(crate) fn push(
        &mut self,
        name: &str,
        value: impl Into<String>,
        consumer: Consumer,
        origin: Origin,
    ) {
        self.0.push(EnvVar {
            name: name.to_string(),
            value: value.into(),
            consumer,
            origin: Some(origin),
        });
    }
}

/// A variable a validation job sets on top of the profile's environment. Not a typed field: these make
/// the job's log readable by `roce explain`, and a profile cannot turn them off for a validation job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobVar {
    /// The variable.
    pub name: &'static str,
    /// The value the job uses.
    pub value: &'static str,
    /// Who reads it.
    pub consumer: Consumer,
    /// `true`: the job's value replaces the profile's; `false`: it only fills in when the profile sets none.
    pub replaces: bool,
}

/// `NCCL_DEBUG=INFO`, in place of the profile's level: `INFO` prints the transport NCCL chose, its devices
/// and `GDRDMA` per channel (a validation job that logs nothing validates nothing).
pub const NCCL_DEBUG_INFO: JobVar = JobVar {
    name: NCCL_DEBUG.name,
    value: "INFO",
    consumer: Consumer::Nccl,
    replaces: true,
};

/// `NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,NET` unless the profile chooses its own subsystems: NCCL's default
/// set plus `NET`, which prints GPUDirect RDMA per HCA and the GID each QP uses.
pub const NCCL_DEBUG_SUBSYS_NET: JobVar = JobVar {
    name: NCCL_DEBUG_SUBSYS.name,
    value: "INIT,BOOTSTRAP,ENV,NET",
    consumer: Consumer::Nccl,
    replaces: false,
};

/// `UCX_LOG_LEVEL=info`: UCX prints the env it read and each endpoint's transports and devices
/// (`ep_cfg[0]: tag(rc_mlx5/ibp0p0:1 …)`). Not set for NCCL jobs: Open MPI may start UCX there, and its
/// info lines would only add noise.
pub const UCX_LOG_LEVEL_INFO: JobVar = JobVar {
    name: "UCX_LOG_LEVEL",
    value: "info",
    consumer: Consumer::Ucx,
    replaces: true,
};

/// `OMPI_ALLOW_RUN_AS_ROOT=1`: the MPI Operator's launcher runs `mpirun` as root, which Open MPI refuses
/// unless this and [`OMPI_ALLOW_RUN_AS_ROOT_CONFIRM`] are set.
pub const OMPI_ALLOW_RUN_AS_ROOT: JobVar = JobVar {
    name: "OMPI_ALLOW_RUN_AS_ROOT",
    value: "1",
    consumer: Consumer::Other,
    replaces: true,
};

/// `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`: the second half of [`OMPI_ALLOW_RUN_AS_ROOT`].
pub const OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: JobVar = JobVar {
    name: "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
    value: "1",
    consumer: Consumer::Other,
    replaces: true,
};

/// What the nccl-tests validation jobs add to the profile's environment, in this order.
pub const NCCL_TESTS_ENV: &[JobVar] = &[NCCL_DEBUG_INFO, NCCL_DEBUG_SUBSYS_NET];

/// What the `ucx_perftest` validation job adds to the profile's environment.
pub const UCX_PERFTEST_ENV: &[JobVar] = &[UCX_LOG_LEVEL_INFO];

/// The MPI launcher container's own environment (for `mpirun` itself; not forwarded to the ranks).
pub const MPI_LAUNCHER_ENV: &[JobVar] = &[OMPI_ALLOW_RUN_AS_ROOT, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM];

/// The port host-network MPI workers run their sshd on: the node's own sshd has 22 (the MPI Operator's
/// base image moved to 2222 for this, kubeflow/mpi-operator#428; OCI's host-network MPIJob starts
/// `sshd -D -p 2222`, oracle-quickstart/oci-hpc-oke `manifests/nccl-tests/host-network/mpi-operator/`).
pub const HOST_NETWORK_SSH_PORT: u16 = 2222;

/// `OMPI_MCA_plm_rsh_args=-p 2222`: Open MPI 4's `mpirun` reaches the workers' sshd on
/// [`HOST_NETWORK_SSH_PORT`] (the environment form of `-mca plm_rsh_args`).
pub const OMPI_PLM_RSH_ARGS: JobVar = JobVar {
    name: "OMPI_MCA_plm_rsh_args",
    value: "-p 2222",
    consumer: Consumer::Other,
    replaces: true,
};

/// `PRTE_MCA_plm_ssh_args=-p 2222`: the same for Open MPI 5, whose PRRTE reads the ssh arguments only from
/// this variable (OCI's host-network MPIJob: "PRRTE ignores -mca plm_rsh_args").
pub const PRTE_PLM_SSH_ARGS: JobVar = JobVar {
    name: "PRTE_MCA_plm_ssh_args",
    value: "-p 2222",
    consumer: Consumer::Other,
    replaces: true,
};

/// What a host-network MPI launcher adds to [`MPI_LAUNCHER_ENV`].
pub const MPI_HOST_NETWORK_LAUNCHER_ENV: &[JobVar] = &[OMPI_PLM_RSH_ARGS, PRTE_PLM_SSH_ARGS];

/// The consequence of leaving a profile variable unset: its reader's default applies. `set` says which other
/// variables the job does set (a fixed GID index makes the address family and range unused).
/// * the RoCE GID selection (`NCCL_IB_ADDR_FAMILY`, `NCCL_IB_ADDR_RANGE`, unless `NCCL_IB_GID_INDEX` is set, and
///   the index itself), the traffic class, the topology file, GPUDirect's level, the device list and the
///   network NCCL is forced to: NCCL's default may pick another GID, queue, topology or path: slower or
///   fragile;
/// * the rest — NCCL's bootstrap interface (NCCL picks one itself, the pod's `eth0` where it has no other), its
///   net plugin, its tuning (chunk sizes, QPs, buffers, relaxed ordering), `UCX_*` and `OMPI_MCA_*` in an NCCL
///   job, log levels: the job runs at the reader's defaults; it only differs from the profile.
pub fn consequence_if_missing(name: &str, set: impl Fn(&str) -> bool) -> Consequence {
    match name {
        "NCCL_IB_ADDR_FAMILY" | "NCCL_IB_ADDR_RANGE" if set(NCCL_IB_GID_INDEX.name) => {
            Consequence::Differs
        }
        // A profile raises NCCL_NET_GDR_LEVEL where the VM's virtual PCI tree hides which GPU and NIC share
        // a switch; a topology file states it, and NCCL's default level (PXB) then enables GPUDirect RDMA
        // for the pairs the file puts under one switch (`ncclTopoCheckGdr`).
        "NCCL_NET_GDR_LEVEL" if set("NCCL_TOPO_FILE") => Consequence::Differs,
        "NCCL_IB_ADDR_FAMILY"
        | "NCCL_IB_ADDR_RANGE"
        | "NCCL_IB_GID_INDEX"
        | "NCCL_IB_TC"
        | "NCCL_TOPO_FILE"
        | "NCCL_NET_GDR_LEVEL"
        | "NCCL_IB_HCA"
        | "NCCL_NET" => Consequence::Slower,
        _ => Consequence::Differs,
    }
}

/// Is the variable read by the NVIDIA container toolkit when it creates the container (which devices to
/// inject), not by the job? It must then be in the container's own env: an `mpirun -x` of it reaches the
/// process after the devices were decided (nvidia-container-toolkit reads `NVIDIA_VISIBLE_DEVICES`,
/// `NVIDIA_DRIVER_CAPABILITIES` and `NVIDIA_IMEX_CHANNELS` from the OCI spec's env).
pub fn read_at_container_creation(name: &str) -> bool {
    matches!(
        name,
        "NVIDIA_IMEX_CHANNELS" | "NVIDIA_VISIBLE_DEVICES" | "NVIDIA_DRIVER_CAPABILITIES"
    )
}

/// Does the variable select devices or interfaces by the names the pod sees them by (`NCCL_IB_HCA`,
/// `NCCL_SOCKET_IFNAME`, `UCX_NET_DEVICES`)? In a host-network pod the names are the node's.
pub fn selects_devices(name: &str) -> bool {
    matches!(
        name,
        "NCCL_IB_HCA" | "NCCL_SOCKET_IFNAME" | "UCX_NET_DEVICES"
    )
}

/// What happens to a job when a variable has another value than the profile's: how `roce lint` ranks a
/// difference (error for the first two, warning for the third, a note for the last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consequence {
    /// Only differs from the profile; the job runs the same.
    Differs,
    /// The job runs slower, or depends on something that may change (traffic class, tuning).
    Slower,
    /// The job silently loses RDMA and runs over TCP sockets.
    SilentTcp,
    /// The job fails to start or to connect.
    Fails,
}

/// The consequence of another value for `name`, by what its reader does with it:
/// * NCCL's bootstrap interface, the network it forces, and the RoCE GID selection
///   (`NCCL_IB_GID_INDEX`, `NCCL_IB_ADDR_FAMILY`, `NCCL_IB_ADDR_RANGE`, `NCCL_IB_ROCE_VERSION_NUM`) decide
///   whether ranks reach each other: another value fails the connection (NCCL `src/transport/net_ib.cc`
///   picks the GID from them; a wrong one is an unroutable address);
/// * `NCCL_IB_DISABLE` turns the IB transport off: sockets;
/// * UCX's device list and GID index: UCX fails to create endpoints on devices that are not there;
/// * NCCL's diagnostics, its profiler plugin and the Inspector's variables ([`observe::is_observability`])
///   only record: they differ;
/// * any other `NCCL_*` is tuning (traffic class, QPs, chunk sizes): slower at worst;
/// * the rest (`OMPI_MCA_*`, other `UCX_*`, user variables) only differs.
pub fn consequence(name: &str) -> Consequence {
    match name {
        "NCCL_SOCKET_IFNAME"
        | "NCCL_NET"
        | "NCCL_IB_GID_INDEX"
        | "NCCL_IB_ADDR_FAMILY"
        | "NCCL_IB_ADDR_RANGE"
        | "NCCL_IB_ROCE_VERSION_NUM"
        | "UCX_NET_DEVICES"
        | "UCX_IB_GID_INDEX" => Consequence::Fails,
        // Another plugin (Spectrum-X's `spcx`, for very large jobs) is a choice; a plugin NCCL cannot find
        // is a warning in its log, and NCCL runs on its internal transports.
        "NCCL_NET_PLUGIN" => Consequence::Differs,
        // Whether the file is in the pod is the topology check's to say (`roce::lint::topology_file`).
        "NCCL_TOPO_FILE" => Consequence::Differs,
        // Diagnostics and the Inspector record what the job does; they change none of it.
        n if observe::is_observability(n) => Consequence::Differs,
        "NCCL_IB_DISABLE" => Consequence::SilentTcp,
        n if n.starts_with(NCCL_PREFIX) => Consequence::Slower,
        _ => Consequence::Differs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_typed_variable_is_read_by_its_prefix() {
        for t in TYPED {
            assert_eq!(consumer_of(t.name), t.consumer, "{}", t.name);
        }
        assert_eq!(typed_field("NCCL_IB_HCA"), Some("nccl ib-hca"));
        assert_eq!(typed_field("NCCL_IB_QPS_PER_CONNECTION"), None);
    }

    #[test]
    fn job_variables_are_read_by_their_prefix() {
        for v in NCCL_TESTS_ENV
            .iter()
            .chain(UCX_PERFTEST_ENV)
            .chain(MPI_LAUNCHER_ENV)
            .chain(MPI_HOST_NETWORK_LAUNCHER_ENV)
        {
            assert_eq!(consumer_of(v.name), v.consumer, "{}", v.name);
        }
    }
}
