//! Diagnostics: the rule catalogue ([`Code`]) and [`Problem`], one finding with spans and a fix.
//!
//! Problems are plain data. They implement [`miette::Diagnostic`] so a front end can render them with
//! source context, but this crate never prints them.

use std::fmt;
use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};

use crate::source::{Origin, Sources};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Equivalent to what the profile asks, written another way: said, never counted as a finding.
    Info,
    /// Worth knowing; never fails a check.
    Warning,
    /// The profile cannot be used as written.
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $sev:ident; )*) => {
        /// Every diagnostic roce can emit. The string form (`roce::…`) is stable public API and is documented,
        /// with a bad and a good example, in `docs/rules.md`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in catalogue order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The stable string form, e.g. `roce::multus::missing_nad`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $code, )* }
            }

            /// The severity a problem with this code has.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$sev, )* }
            }
        }
    };
}

codes! {
    /// The text is not valid KDL or YAML.
    Syntax = "roce::syntax", Error;
    /// A key the profile format does not know.
    UnknownKey = "roce::unknown_key", Error;
    /// A required key is missing.
    MissingKey = "roce::missing_key", Error;
    /// A value has the wrong type (a number where a string is expected, a list where a map is expected…).
    TypeMismatch = "roce::type_mismatch", Error;
    /// A value has the right type but is not allowed (bad name, out of range, malformed CIDR…).
    InvalidValue = "roce::invalid_value", Error;
    /// A key is given twice in one map.
    DuplicateKey = "roce::duplicate_key", Error;
    /// `extends` names a profile that does not exist.
    ExtendsNotFound = "roce::extends::not_found", Error;
    /// `extends` chains loop back on themselves.
    ExtendsCycle = "roce::extends::cycle", Error;
    /// The input is larger than a profile can reasonably be.
    TooLarge = "roce::limits::too_large", Error;
    /// The input nests deeper than the profile format allows.
    TooDeep = "roce::limits::too_deep", Error;
    /// A RoCE fabric without an address family or traffic class.
    RoceAddressing = "roce::fabric::roce_addressing", Error;
    /// An InfiniBand fabric with RoCE-only settings (address family, range, traffic class, GID index).
    IbRoceSetting = "roce::fabric::ib_roce_setting", Error;
    /// Per-port Multus attachment that misses some of the rails' NADs.
    MissingNad = "roce::multus::missing_nad", Error;
    /// A NAD that belongs to no rail.
    ExtraNad = "roce::multus::extra_nad", Warning;
    /// A RoCE fabric whose pods attach no Multus networks: the pod would see only eth0.
    MultusRequired = "roce::multus::required", Error;
    /// Multus attachment on InfiniBand, which needs none.
    MultusUnneeded = "roce::multus::unneeded", Warning;
    /// `NCCL_IB_HCA` matches none of the pod's RDMA devices: NCCL silently falls back to sockets.
    HcaMatchesNothing = "roce::nccl::hca_matches_nothing", Error;
    /// `NCCL_IB_HCA` matches only some rails.
    HcaPartial = "roce::nccl::hca_partial", Warning;
    /// A prefix token also matches longer device names (`mlx5_1` matches `mlx5_10`).
    PrefixCollision = "roce::nccl::prefix_collision", Warning;
    /// A list token NCCL would silently drop or misread (bad port, over 63 characters, past the 16/32 limit, spaces).
    DroppedToken = "roce::nccl::dropped_token", Error;
    /// `NCCL_SOCKET_IFNAME` selects an RDMA backend interface.
    SocketOnRdma = "roce::nccl::socket_on_rdma", Error;
    /// An integer knob NCCL would parse differently from how it reads (`true` is 0, `010` is 8, `3x` is 3).
    IntSyntax = "roce::nccl::int_syntax", Error;
    /// The Spectrum-X NCCL plugin on a job far smaller than it is meant for.
    NetPlugin = "roce::nccl::net_plugin", Warning;
    /// `NCCL_DEBUG=INFO` (or TRACE) in a production profile.
    DebugInProduction = "roce::nccl::debug_in_production", Warning;
    /// An NCCL knob that a typed profile field already sets.
    KnobShadowsField = "roce::nccl::knob_shadows_field", Error;
    /// A knob in `nccl knobs` that is not an `NCCL_*` variable.
    KnobName = "roce::nccl::knob_name", Error;
    /// A variable the profile sets that the NCCL release it names (`nccl version`) does not read: first
    /// read by a later release, removed, or read by none (`fabric::nccl_versions`).
    NcclVersionUnread = "roce::nccl::version_unread", Warning;
    /// An `nccl version` outside the releases roce's NCCL table covers (2.18 to 2.32): not judged by release.
    NcclVersionUncovered = "roce::nccl::version_uncovered", Info;
    /// A variable set to the named NCCL release's own default, where NCCL changed that default between
    /// 2.18 and 2.30 (`fabric::nccl_versions::DEFAULTS`).
    NcclVersionDefault = "roce::nccl::version_default", Info;
    /// A value in a syntax the named NCCL release does not accept yet (`NCCL_IB_HCA`'s rail and plane fields
    /// before 2.30.7, `fabric::nccl_versions::SYNTAX`): that release reads it another way.
    NcclVersionSyntax = "roce::nccl::version_syntax", Warning;
    /// A feature the profile turns on (the Inspector profiler plugin, its Prometheus output) that the named
    /// NCCL release, or the plugin built from its tree, lacks (`fabric::nccl_versions::FEATURES`).
    NcclVersionFeature = "roce::nccl::version_feature", Warning;
    /// `rc_verbs`/`ud_verbs` on a fabric that needs the mlx5 transports.
    VerbsTransport = "roce::ucx::verbs_transport", Error;
    /// UCX in RDMA mode on RoCE without a GID index.
    UcxGidIndex = "roce::ucx::gid_index", Error;
    /// `UCX_MAX_RMA_RAILS` larger than the number of UCX devices.
    RmaRails = "roce::ucx::rma_rails", Error;
    /// A ComputeDomain's `numNodes` other than the job's node count (0, the CRD's recommendation, is fine).
    DraNumNodes = "roce::dra::num_nodes", Error;
    /// DRA NIC claim count other than the rails, or NICs that cannot be spread evenly over aligned GPUs.
    DraNicCount = "roce::dra::nic_count", Error;
    /// A ComputeDomain without NVLink-domain (clique) affinity: workers may land in different racks.
    DraCliqueAffinity = "roce::dra::clique_affinity", Warning;
    /// The NIC claim and the ComputeDomain channel claim share a name.
    DraClaimName = "roce::dra::claim_name", Error;
    /// A profile placed by Kueue (a `kueue-topology`) whose DRA NIC claim has `matchAttribute` constraints
    /// (aligned GPUs): Kueue admits on device counts and leaves the constraint to the kube-scheduler.
    DraKueueConstraints = "roce::dra::kueue_constraints", Warning;
    /// A profile with Kueue Topology Aware Scheduling and DRA claims: TAS does not count DRA devices.
    DraKueueTopology = "roce::dra::kueue_topology", Warning;
    /// UCX RDMA mode with an image whose rdma-core is undeclared or older than required.
    RdmaCore = "roce::ucx::rdma_core", Error;
    /// `UCX_NET_DEVICES` names a device the pod does not have.
    UcxNetDevice = "roce::ucx::net_device", Error;
    /// A malformed `UCX_TLS` list (unknown transport, `all` mixed with others).
    UcxTls = "roce::ucx::tls", Error;
    /// UCX RDMA mode without a CUDA transport: GPU buffers cannot move.
    UcxNoCuda = "roce::ucx::no_cuda_transport", Warning;
    /// A fabric that needs `IPC_LOCK` but the profile does not grant it.
    IpcLock = "roce::caps::ipc_lock", Error;
    /// Direct pods on an RDMA fabric without the RDMA scheduling resource.
    RdmaResource = "roce::pool::rdma_resource", Error;
    /// A network provider without a variable it does not work without (aws-ofi-nccl without `FI_PROVIDER`).
    ProviderEnv = "roce::provider::env", Error;
    /// An `NCCL_IB_*` variable in a profile whose provider replaces NCCL's IB transport (aws-ofi-nccl).
    ProviderIbKnob = "roce::provider::ib_knob", Warning;
    /// An EFA profile variable that aws-ofi-nccl tunes per instance type, set to another value than the
    /// plugin's (`fabric::ofi_platform`): the profile's wins.
    OfiPlatformDefault = "roce::provider::ofi_platform_default", Warning;
    /// Extra env that overrides a variable the profile generates.
    EnvShadowsGenerated = "roce::env::shadows_generated", Error;
    /// An env value no target can carry safely (newline, NUL, control characters).
    Unrepresentable = "roce::env::unrepresentable", Error;

    // ---- roce lint (manifests): codes `roce::lint::…` go here ----
    /// A manifest that is not YAML text roce can read (invalid YAML, not UTF-8, duplicate keys).
    LintSyntax = "roce::lint::syntax", Error;
    /// A Kubernetes field with the wrong type where roce must read or write it (`containers` not a list…).
    LintShape = "roce::lint::shape", Error;
    /// A pod template without the container to check or wire (`--container NAME`), or with none at all.
    LintNoContainer = "roce::lint::no_container", Error;
    /// A Multus networks annotation that neither Multus form parses (JSON list, or `ns/name@if` comma list).
    LintMultusMalformed = "roce::lint::multus_malformed", Error;
    /// A pod template that does not attach every Multus network the profile's rails need.
    LintMissingNad = "roce::lint::missing_nad", Error;
    /// A Multus network that is almost one of the profile's: wrong namespace, a near-miss name, listed twice.
    LintWrongNad = "roce::lint::wrong_nad", Error;
    /// The RDMA scheduling resource (`rdma/ib`) missing from requests or limits, or not the profile's value.
    LintRdmaResource = "roce::lint::rdma_resource", Error;
    /// A container on an RDMA fabric without the `IPC_LOCK` capability.
    LintIpcLock = "roce::lint::ipc_lock", Error;
    /// A variable the profile sets is missing from the container's env.
    LintEnvMissing = "roce::lint::env_missing", Error;
    /// A variable with another value than the profile's, or not written as a string.
    LintEnvDifferent = "roce::lint::env_different", Error;
    /// A variable set twice in one container's env.
    LintEnvDuplicate = "roce::lint::env_duplicate", Error;
    /// `NCCL_IB_HCA` in a manifest matches none of the pod's RDMA devices.
    LintHcaMatchesNothing = "roce::lint::hca_matches_nothing", Error;
    /// `UCX_TLS` in a manifest with transports wrong for the fabric and the profile's UCX mode.
    LintUcxTransport = "roce::lint::ucx_transport", Error;
    /// `privileged: true`, which no profile needs (`IPC_LOCK` is enough) and which exposes every GPU.
    LintPrivileged = "roce::lint::privileged", Warning;
    /// `hostNetwork: true`: Multus attaches nothing, and `eth0` is the node's interface.
    LintHostNetwork = "roce::lint::host_network", Error;
    /// No memory-backed `/dev/shm` mounted in the container.
    LintShm = "roce::lint::shm", Warning;
    /// The profile's runtime class (`node-pool runtime-class`) missing from `runtimeClassName`, or another
    /// class there.
    LintRuntimeClass = "roce::lint::runtime_class", Error;
    /// The profile's node labels missing from `nodeSelector`, or with other values.
    LintNodeSelector = "roce::lint::node_selector", Warning;
    /// The profile's NVLink domain is a ComputeDomain but the pod does not claim its IMEX channel.
    LintDraChannelClaim = "roce::lint::dra_channel_claim", Error;
    /// The profile's NICs are DRA devices but the pod does not claim them from their template.
    LintDraNicClaim = "roce::lint::dra_nic_claim", Error;
    /// A ComputeDomain job's pod template without required pod affinity on `nvidia.com/gpu.clique` (or a
    /// required Kueue topology at that level): its pods may land in different NVLink domains.
    LintDraCliqueAffinity = "roce::lint::dra_clique_affinity", Warning;
    /// A pod queued to Kueue that claims a ResourceClaim by name (`resourceClaimName`): Kueue leaves the
    /// workload inadmissible.
    LintKueueDraClaim = "roce::lint::kueue_dra_claim", Error;
    /// A pod queued to Kueue whose claim template asks for what Kueue refuses (`firstAvailable`,
    /// `allocationMode: All`, `adminAccess`): the workload stays inadmissible.
    LintKueueDraRequest = "roce::lint::kueue_dra_request", Error;
    /// A pod queued to Kueue whose claim template has `constraints`: admitted on counts alone.
    LintKueueDraConstraints = "roce::lint::kueue_dra_constraints", Warning;
    /// A pod set with a Kueue TAS annotation and DRA claims: TAS does not count DRA devices.
    LintKueueDraTopology = "roce::lint::kueue_dra_topology", Warning;
    // Network providers (`nccl-net`): what the provider needs in the pod.
    /// A variable the network provider needs (`FI_PROVIDER=efa`, `FI_EFA_USE_DEVICE_RDMA=1`) missing from
    /// the worker or set to another value.
    LintProviderEnv = "roce::lint::provider_env", Error;
    /// `NCCL_IB_*` variables set for a provider that does not read them (aws-ofi-nccl).
    LintIbKnobIgnored = "roce::lint::ib_knob_ignored", Warning;
    /// A worker's env sets a variable aws-ofi-nccl tunes per instance type to another value than the plugin's
    /// (`fabric::ofi_platform`): the manifest's value wins.
    LintOfiPlatformDefault = "roce::lint::ofi_platform_default", Warning;
    /// The provider's per-device resource (`vpc.amazonaws.com/efa`) missing, or another count than the
    /// profile's.
    LintProviderResource = "roce::lint::provider_resource", Error;
    /// A host directory the provider needs (the gIB plugin) not mounted into the container.
    LintHostMount = "roce::lint::host_mount", Error;
    /// The pod lacks the cloud's multi-network interfaces (GKE `networking.gke.io/interfaces`) the
    /// profile's NICs come through, and gets its NICs in no other form.
    LintCloudInterfaces = "roce::lint::cloud_interfaces", Error;
    /// The profile's topology file (`nccl-net topology-file`) is not mounted from its ConfigMap.
    LintTopologyFile = "roce::lint::topology_file", Warning;
    /// The Inspector's output directory (`nccl { inspector … }`) is not a volume of the container, or not
    /// the node's directory the profile names.
    LintInspectorOutput = "roce::lint::inspector_output", Info;
    // Invariants that hold for every fabric: checked with or without a profile.
    /// A file in which no pod template was found (nothing was checked).
    LintNoPodTemplate = "roce::lint::no_pod_template", Warning;
    /// A kind with no table entry whose pod templates were found by their shape (said, not counted).
    LintGenericKind = "roce::lint::generic_kind", Info;
    /// A pod-level `resourceClaims` entry that no container lists in `resources.claims`.
    LintClaimUnreferenced = "roce::lint::claim_unreferenced", Error;
    /// A Multus network that no NAD of the input defines, where the input defines the namespace's networks.
    LintNadUndefined = "roce::lint::nad_undefined", Error;
    /// More Multus attachments of an SR-IOV network than VFs of its resource requested.
    LintNadsVsVfs = "roce::lint::nads_vs_vfs", Error;
    /// RDMA env (NCCL's IB transport, UCX over verbs, RDMA KV transfer) but no RDMA device access.
    LintRdmaEnvWithoutDevice = "roce::lint::rdma_env_without_device", Error;
    /// RDMA device access without `IPC_LOCK` or privileged: registration depends on the runtime's limit.
    LintMemlock = "roce::lint::memlock", Warning;
    /// Multi-node NVLink env without an IMEX channel.
    LintImexChannel = "roce::lint::imex_channel", Error;
    /// `$VAR` in an env value: Kubernetes expands only `$(VAR)`.
    LintLiteralVar = "roce::lint::literal_var", Warning;
    /// A `volumeMount` of a volume the pod does not declare: the API server rejects the pod.
    LintVolumeMissing = "roce::lint::volume_missing", Error;
    /// A volume no container mounts while a command reads a path it would have held.
    LintVolumeUnmounted = "roce::lint::volume_unmounted", Warning;
    /// A network object's CNI config or `ipam` that is not valid JSON.
    LintCniConfig = "roce::lint::cni_config", Error;
    /// A device resource the input's fabric objects never create.
    LintResourceNotProvided = "roce::lint::resource_not_provided", Error;
    /// A KV-transfer server (NIXL, UCX, Mooncake) pinned to TCP on a pod that has RDMA devices.
    LintKvTransportTcp = "roce::lint::kv_transport_tcp", Warning;

    // ---- roce explain (logs): codes `roce::explain::…` go here ----
    /// The log file is empty.
    ExplainEmptyLog = "roce::explain::empty_log", Error;
    /// The log file is binary (NUL bytes), not text.
    ExplainBinaryLog = "roce::explain::binary_log", Error;
    /// The text holds no NCCL or UCX line.
    ExplainNotNcclLog = "roce::explain::not_nccl_log", Error;
    /// NCCL lines but none at INFO level: the transport cannot be told.
    ExplainNoInfoLines = "roce::explain::no_info_lines", Warning;
    /// NCCL fell back to TCP sockets where RDMA was wanted.
    ExplainSocketFallback = "roce::explain::socket_fallback", Error;
    /// `NCCL_NET` forces a network that did not initialize.
    ExplainNetNotFound = "roce::explain::net_not_found", Error;
    /// No interface matches `NCCL_SOCKET_IFNAME` (bootstrap, NET/Socket or the IB out-of-band socket).
    ExplainBootstrapNoInterface = "roce::explain::bootstrap_no_interface", Error;
    /// RDMA devices exist but NCCL cannot open them (no `/dev/infiniband` in the container).
    ExplainIbDeviceOpen = "roce::explain::ib_device_open", Error;
    /// An RDMA network was used without GPUDirect RDMA: data is staged through host memory.
    ExplainGdrDisabled = "roce::explain::gdr_disabled", Error;
    /// `IBV_WC_RETRY_EXC_ERR` (status 12, vendor err 129): the peer did not answer over the fabric.
    ExplainIbRetryExceeded = "roce::explain::ib_retry_exceeded", Error;
    /// Another IB work-completion error (protection error, RNR retries, …).
    ExplainIbCompletionError = "roce::explain::ib_completion_error", Error;
    /// `ibv_modify_qp` failed while connecting a queue pair (GID, routing, rails).
    ExplainQpConnectFailed = "roce::explain::qp_connect_failed", Error;
    /// Memory registration failed for lack of locked memory (`IPC_LOCK`, `ulimit -l`).
    ExplainMemlock = "roce::explain::memlock", Error;
    /// Ranks run different NCCL versions.
    ExplainVersionMismatch = "roce::explain::version_mismatch", Error;
    /// Ranks chose different networks.
    ExplainMixedNetwork = "roce::explain::mixed_network", Error;
    /// The net plugin named by `NCCL_NET_PLUGIN` was not loaded.
    ExplainPluginNotLoaded = "roce::explain::plugin_not_loaded", Warning;
    /// A `NCCL_*_DISABLE` knob that NCCL read as 0 (`true` parses as 0).
    ExplainDisableReadAsZero = "roce::explain::disable_read_as_zero", Warning;
    /// NCCL rejected a knob's value and used its default.
    ExplainInvalidValue = "roce::explain::invalid_value", Warning;
    /// Ranks saw different values of one variable.
    ExplainEnvDiffers = "roce::explain::env_differs", Warning;
    /// Another NCCL `WARN` line.
    ExplainNcclWarning = "roce::explain::nccl_warning", Warning;
    /// UCX: transport retry count exceeded (RoCE/IB peer unreachable).
    ExplainUcxRetryExceeded = "roce::explain::ucx_retry_exceeded", Error;
    /// UCX: vendor error 0x89 or "Unexpected UCX error: Input/output error" (UCX built against old rdma-core).
    ExplainUcxRdmaCore = "roce::explain::ucx_rdma_core", Error;
    /// UCX: "Destination is unreachable".
    ExplainUcxUnreachable = "roce::explain::ucx_unreachable", Error;
    /// Another UCX error line.
    ExplainUcxError = "roce::explain::ucx_error", Error;
    /// The log's transport differs from what the profile's fabric needs.
    ExplainProfileTransport = "roce::explain::profile_transport", Error;
    /// NCCL saw a different value than the profile sets.
    ExplainProfileEnvMismatch = "roce::explain::profile_env_mismatch", Error;
    /// A variable the profile sets, that NCCL echoes when set, is absent from the log.
    ExplainProfileEnvMissing = "roce::explain::profile_env_missing", Warning;
    /// The RDMA devices in the log differ from the profile's rails.
    ExplainProfileDevices = "roce::explain::profile_devices", Warning;
    /// The profile sets `NCCL_NET_PLUGIN=none`, but the log shows an external net plugin loaded.
    ExplainProfileNetPlugin = "roce::explain::profile_net_plugin", Warning;
    /// The profile sets an NCCL variable that the log's NCCL release does not read (added later, or
    /// removed): it has no effect on this job (`fabric::nccl_versions`).
    ExplainProfileEnvUnread = "roce::explain::profile_env_unread", Warning;
    /// The log's NCCL release is another minor than the profile's `nccl version`: a warning where roce's NCCL
    /// table says what the profile sets reads differently in the two, else said (info).
    ExplainProfileNcclRelease = "roce::explain::profile_nccl_release", Warning;
    /// An NCCL call failed (a PyTorch `NCCL error`, an nccl-tests failure, or an error chain that ended the
    /// async or proxy thread), with the first NCCL warning that explains it.
    ExplainNcclError = "roce::explain::nccl_error", Error;
    /// Two ranks of one host on the same GPU (`Duplicate GPU detected`).
    ExplainDuplicateGpu = "roce::explain::duplicate_gpu", Error;
    /// A CUDA call inside NCCL failed (`Cuda failure N 'text'`).
    ExplainCudaError = "roce::explain::cuda_error", Error;
    /// Multi-node NVLink (MNNVL) is available but not working: no IMEX channel in the container.
    ExplainMnnvl = "roce::explain::mnnvl", Error;
    /// PyTorch's watchdog aborted a collective that did not finish in time.
    ExplainWatchdogTimeout = "roce::explain::watchdog_timeout", Error;
    /// NCCL's socket interfaces include one other hosts cannot reach (loopback, link-local, a bridge or tunnel).
    ExplainSocketInterface = "roce::explain::socket_interface", Error;
    /// `libibverbs.so` (rdma-core) could not be loaded, so NCCL's IB transport is unavailable.
    ExplainIbverbsMissing = "roce::explain::ibverbs_missing", Error;
    /// A network plugin (aws-ofi-nccl, gIB, HPC-X) failed to load or reported an error.
    ExplainNetPluginError = "roce::explain::net_plugin_error", Error;
    /// An asynchronous error event on an RDMA device (`Got async event`).
    ExplainIbAsyncEvent = "roce::explain::ib_async_event", Error;
    /// InfiniBand and RoCE ports used together by one job.
    ExplainMixedLinkLayer = "roce::explain::mixed_link_layer", Error;
    /// SHARP / CollNet could not be set up; NCCL uses point-to-point networking instead.
    ExplainCollnetUnavailable = "roce::explain::collnet_unavailable", Warning;
    /// UCX: creating an address handle to the peer failed (the GID does not resolve or route).
    ExplainUcxAddressHandle = "roce::explain::ucx_address_handle", Error;
    /// UCX: the library loaded is older than the one the program was built against.
    ExplainUcxVersionMismatch = "roce::explain::ucx_version_mismatch", Error;
    /// NIXL: a backend operation failed (`NIXL_ERR_BACKEND` and friends).
    ExplainNixlError = "roce::explain::nixl_error", Error;
    /// nccl-tests found wrong results (`#wrong` or `Out of bounds values`).
    ExplainWrongResults = "roce::explain::wrong_results", Error;
    /// nccl-tests bus bandwidth below what was expected.
    ExplainBandwidthLow = "roce::explain::bandwidth_low", Warning;
    /// The RoCE GID NCCL uses is link-local, or a GID entry could not be read in the container.
    ExplainGid = "roce::explain::gid", Warning;
    /// GPUDirect RDMA absent because the platform cannot do it (aws-ofi-nccl: `GDR not supported`): a fact.
    ExplainGdrUnsupported = "roce::explain::gdr_unsupported", Info;
    /// UCX: a `UCX_NET_DEVICES` entry names a device this host does not have.
    ExplainUcxDeviceUnavailable = "roce::explain::ucx_device_unavailable", Error;
    /// UCX: a `UCX_TLS` entry UCX could not use (an unknown name, or a transport with no device here).
    ExplainUcxTransportUnavailable = "roce::explain::ucx_transport_unavailable", Error;
    /// UCX: no transport or device left to use (`no usable transports/devices`); the context was not created.
    ExplainUcxNoTransport = "roce::explain::ucx_no_transport", Error;
    /// UCX: `UCX_*` variables no loaded UCX component reads (misspelt, or for a transport not built in).
    ExplainUcxUnusedEnv = "roce::explain::ucx_unused_env", Warning;
    /// UCX: a variable's value UCX rejected (`Invalid value for …`).
    ExplainUcxInvalidValue = "roce::explain::ucx_invalid_value", Error;
    /// UCX: choosing the RoCE GID failed (GID type, index, `UCX_IB_ROCE_SUBNETS`).
    ExplainUcxGid = "roce::explain::ucx_gid", Error;
    /// NCCL's own diagnostics (`NCCL_RUN_DIAGNOSTICS=1`, 2.31+) flagged a check for review (`NCCL DIAG [INFO]`).
    ExplainNcclDiagnostic = "roce::explain::nccl_diagnostic", Warning;
    /// NCCL's RAS report (`ncclras`, 2.24+) names job processes that stopped answering, died, or hit NCCL errors.
    ExplainNcclRas = "roce::explain::nccl_ras", Error;
    /// An NCCL notice (`NCCL ATTN`, 2.32+) no rule explained: shown, but not an error by itself.
    ExplainNcclNotice = "roce::explain::nccl_notice", Warning;

    // ---- roce doctor (hosts): codes `roce::doctor::…` go here ----
    /// No RDMA devices: the pod lacks its Multus networks or RDMA resource, or the host its RDMA driver.
    DoctorNoRdmaDevices = "roce::doctor::no_rdma_devices", Error;
    /// RDMA ports whose link layer contradicts the profile's fabric (InfiniBand ports for a RoCE profile).
    DoctorLinkLayer = "roce::doctor::link_layer", Error;
    /// Rail devices or rail netdevs the profile names are missing here.
    DoctorMissingRail = "roce::doctor::missing_rail", Error;
    /// RDMA ports that are not ACTIVE: NCCL and UCX skip them.
    DoctorPortDown = "roce::doctor::port_down", Warning;
    /// A RoCE port with no GID of the wanted family and range on a netdev in this namespace.
    DoctorNoUsableGid = "roce::doctor::no_usable_gid", Error;
    /// A configured GID index that is empty, link-local, the wrong family, RoCE v1, out of range or bound to
    /// a netdev outside the namespace.
    DoctorGidIndex = "roce::doctor::gid_index", Error;
    /// `NCCL_IB_HCA` matches none of the active RDMA ports here.
    DoctorHcaMatchesNothing = "roce::doctor::hca_matches_nothing", Error;
    /// `NCCL_SOCKET_IFNAME` matches no network interface here.
    DoctorSocketIfname = "roce::doctor::socket_ifname", Error;
    /// `UCX_NET_DEVICES` names a device or port that does not exist here.
    DoctorUcxNetDevice = "roce::doctor::ucx_net_device", Error;
    /// `libibverbs.so.1` (rdma-core userspace) is not installed.
    DoctorNoLibibverbs = "roce::doctor::no_libibverbs", Error;
    /// rdma-core older than UCX over RDMA needs.
    DoctorRdmaCore = "roce::doctor::rdma_core", Error;
    /// `CAP_IPC_LOCK` missing from the effective capabilities.
    DoctorIpcLock = "roce::doctor::ipc_lock", Error;
    /// Locked memory limited without `IPC_LOCK`: buffer registration fails.
    DoctorMemlock = "roce::doctor::memlock", Error;
    /// No GPUDirect peer-memory module loaded.
    DoctorPeerMemory = "roce::doctor::peer_memory", Warning;
    /// The number of visible GPUs differs from the profile's node pool.
    DoctorGpus = "roce::doctor::gpus", Warning;
    /// The environment lacks or overrides variables the profile sets.
    DoctorEnvDrift = "roce::doctor::env_drift", Warning;
    /// The pod's `UCX_TLS` enables the wrong class of transports for the profile's UCX mode.
    DoctorUcxTransport = "roce::doctor::ucx_transport", Error;
    /// RDMA devices in sysfs without their verbs device nodes (`/dev/infiniband/uverbsN`): NCCL cannot
    /// open them and falls back to TCP sockets.
    DoctorNoDeviceNodes = "roce::doctor::no_device_nodes", Error;
    /// The profile's ComputeDomain gives the pod an IMEX channel, but `/dev/nvidia-caps-imex-channels` has
    /// none: NCCL cannot use multi-node NVLink.
    DoctorImexChannels = "roce::doctor::imex_channels", Error;
    /// `/dev/shm` is the container runtime's 64 MiB default: the pod has no memory-backed `/dev/shm`.
    DoctorShm = "roce::doctor::shm", Warning;
    /// The topology file `NCCL_TOPO_FILE` names is not there: NCCL detects the topology itself.
    DoctorTopologyFile = "roce::doctor::topology_file", Warning;
    // Network providers (`nccl-net`): their devices and their plugin library.
    /// The profile's provider drives one kind of device (aws-ofi-nccl: EFA) and none of the RDMA devices here
    /// has its driver.
    DoctorNoProviderDevices = "roce::doctor::no_provider_devices", Error;
    /// Fewer of the provider's devices (EFA) usable here than the profile's resource count expects.
    DoctorProviderDeviceCount = "roce::doctor::provider_device_count", Warning;
    /// The NCCL net plugin the provider (or `NCCL_NET_PLUGIN`) needs is not where the dynamic loader looks.
    DoctorNetPlugin = "roce::doctor::net_plugin", Error;

    // ---- roce exec (a job's start-up): codes `roce::exec::…` go here ----
    /// No RDMA devices at start-up: the job would run over TCP sockets, so it is not started.
    ExecNoRdmaDevices = "roce::exec::no_rdma_devices", Error;
    /// Fewer usable rails (present, ACTIVE, of the fabric's link layer, sharing one GID index) than the
    /// profile has.
    ExecTooFewRails = "roce::exec::too_few_rails", Error;
    /// RoCE rail ports without a RoCE v2 GID of the profile's family and range on a netdev in this
    /// namespace (only link-local GIDs, or only the host's).
    ExecNoGlobalGid = "roce::exec::no_global_gid", Error;
    /// The DRA device metadata mounted into the container (KEP-5304) and sysfs disagree: claimed NICs sysfs
    /// does not show, or RDMA devices sysfs shows that no claim was allocated. The metadata's NICs are used.
    ExecDraMetadataDisagrees = "roce::exec::dra_metadata_disagrees", Warning;
    /// `roce apply --exec` cannot start a workload's job behind `roce exec`: a container without `command`
    /// (the image's ENTRYPOINT is unknown), an MPI job (mpirun starts the ranks), a TrainJob.
    ExecCannotWrap = "roce::exec::cannot_wrap", Error;
    /// The command to run does not exist (exit status 127, as in a shell).
    ExecCommandNotFound = "roce::exec::command_not_found", Error;
    /// The command exists but cannot be executed (exit status 126, as in a shell).
    ExecCommandNotExecutable = "roce::exec::command_not_executable", Error;
}

/// What a code is about, from its namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    /// A profile (`roce check`): tested by fixture profiles.
    Profile,
    /// A workload manifest (`roce lint`, `roce::lint::…`).
    Manifest,
    /// An NCCL/UCX log (`roce explain`, `roce::explain::…`).
    Log,
    /// A live host or pod (`roce doctor`, `roce::doctor::…`).
    Host,
    /// A job's start-up in its pod (`roce exec`, `roce::exec::…`).
    Exec,
}

impl Code {
    /// The domain this code belongs to.
    pub fn domain(self) -> Domain {
        let s = self.as_str();
        if s.starts_with("roce::lint::") {
            Domain::Manifest
        } else if s.starts_with("roce::explain::") {
            Domain::Log
        } else if s.starts_with("roce::doctor::") {
            Domain::Host
        } else if s.starts_with("roce::exec::") {
            Domain::Exec
        } else {
            Domain::Profile
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A labelled place in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub origin: Origin,
    /// What to say there (may be empty).
    pub text: String,
}

/// One finding: a coded message, the places it concerns and how to fix it.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The catalogue code.
    pub code: Code,
    /// Error or warning (from the code).
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// The primary place first, then related places.
    pub labels: Vec<Label>,
    /// A related place in another source (rendered as advice under its parent problem).
    note: bool,
    rendered: Option<Rendered>,
}

#[derive(Debug, Clone)]
struct Rendered {
    source: NamedSource<Arc<str>>,
    location: Location,
    notes: Vec<Problem>,
}

/// A resolved position, for machine-readable output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Source name (path or `builtin:<name>`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Problem {
    /// A problem with this code's severity and no labels yet.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Problem {
            code,
            severity: code.severity(),
            message: message.into(),
            help: None,
            labels: Vec::new(),
            note: false,
            rendered: None,
        }
    }

    /// Add the fix.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Add a labelled place (the first one added is the primary place).
    pub fn at(mut self, origin: Origin, text: impl Into<String>) -> Self {
        self.labels.push(Label {
            origin,
            text: text.into(),
        });
        self
    }

    /// Is this an error?
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary place, if any.
    pub fn primary(&self) -> Option<Origin> {
        self.labels.first().map(|l| l.origin)
    }

    /// Where the primary label points, once [`Problem::resolve`] has run.
    pub fn location(&self) -> Option<&Location> {
        self.rendered.as_ref().map(|r| &r.location)
    }

    /// Attach the source text so the problem can render itself. Labels in other sources than the primary
    /// one (a base profile of an `extends` chain) become related notes with their own source.
    pub fn resolve(mut self, sources: &Sources) -> Self {
        let Some(primary) = self.primary() else {
            return self;
        };
        let src = sources.get(primary.source);
        let (line, column) = src.line_col(primary.offset);
        let (same, other): (Vec<Label>, Vec<Label>) = self
            .labels
            .into_iter()
            .partition(|l| l.origin.source == primary.source);
        self.labels = same;
        let notes = other
            .into_iter()
            .map(|l| {
                let text = if l.text.is_empty() {
                    "related".to_string()
                } else {
                    l.text.clone()
                };
                Problem {
                    code: self.code,
                    severity: self.severity,
                    message: text,
                    help: None,
                    labels: vec![l],
                    note: true,
                    rendered: None,
                }
                .resolve(sources)
            })
            .collect();
        self.rendered = Some(Rendered {
            source: NamedSource::new(src.name.clone(), src.text.clone()),
            location: Location {
                file: src.name.clone(),
                line,
                column,
            },
            notes,
        });
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

impl Diagnostic for Problem {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        if self.note {
            return None;
        }
        Some(Box::new(self.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        if self.note {
            return Some(miette::Severity::Advice);
        }
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.rendered.as_ref().map(|r| &r.source as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.rendered.as_ref()?;
        Some(Box::new(self.labels.iter().enumerate().map(|(i, l)| {
            let text = (!l.text.is_empty()).then(|| l.text.clone());
            if i == 0 {
                LabeledSpan::new_primary_with_span(text, l.origin)
            } else {
                LabeledSpan::new_with_span(text, l.origin)
            }
        })))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        let notes = &self.rendered.as_ref()?.notes;
        if notes.is_empty() {
            return None;
        }
        Some(Box::new(notes.iter().map(|n| n as &dyn Diagnostic)))
    }
}

/// The machine-readable form of a [`Problem`], one object of every `--format json` problem list:
/// `{code, severity, message, help, file, line, column}`. The place is `null` until
/// [`Problem::resolve`] has run.
///
/// ```
/// use roce_model::{Code, Problem, problem::ProblemRecord};
/// let p = Problem::new(Code::ALL[0], "bad").help("fix it");
/// let json = serde_json::to_string(&ProblemRecord::from(&p)).unwrap();
/// assert!(json.ends_with(r#""message":"bad","help":"fix it","file":null,"line":null,"column":null}"#));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProblemRecord {
    /// The catalogue code (`roce::…`).
    pub code: &'static str,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Source name of the primary place.
    pub file: Option<String>,
    /// 1-based line of the primary place.
    pub line: Option<usize>,
    /// 1-based column of the primary place, in characters.
    pub column: Option<usize>,
}

impl From<&Problem> for ProblemRecord {
    fn from(p: &Problem) -> Self {
        let loc = p.location();
        ProblemRecord {
            code: p.code.as_str(),
            severity: p.severity.as_str(),
            message: p.message.clone(),
            help: p.help.clone(),
            file: loc.map(|l| l.file.clone()),
            line: loc.map(|l| l.line),
            column: loc.map(|l| l.column),
        }
    }
}

impl ProblemRecord {
    /// `path:line:column` of the primary place, once resolved.
    pub fn place(&self) -> Option<String> {
        let (file, line, column) = (self.file.as_ref()?, self.line?, self.column?);
        Some(format!("{file}:{line}:{column}"))
    }
}

/// Sort problems for output: by source, then position, then code.
pub fn sort(problems: &mut [Problem]) {
    problems.sort_by_key(|p| {
        let o = p.primary();
        (
            o.map(|o| o.source),
            o.map(|o| o.offset),
            p.code,
            p.message.clone(),
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            assert!(code.as_str().starts_with("roce::"), "{code}");
            assert!(seen.insert(code.as_str()), "duplicate {code}");
        }
    }
}
