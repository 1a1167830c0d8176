//! What a pod needs attached so the fabric reaches it: Multus networks, extended resources, capabilities.
//!
//! `lower` builds the plan's wiring here, `lint` compares manifests with it and `doctor` names it when a pod
//! has no RDMA devices; none of them decides it again.

use crate::names::NadRef;
use crate::names::{Capability, ResourceName};

/// The Multus annotation key (`k8s.v1.cni.cncf.io/networks`, Network Plumbing WG multi-net spec).
pub const MULTUS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";
/// The GPU extended resource (NVIDIA device plugin).
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The RDMA device-plugin resource most clusters name (the k8s-rdma-shared-dev-plugin default, CoreWeave's
/// `rdma/ib`): what `doctor` names when it has no profile to ask.
pub const COMMON_RDMA_RESOURCE: &str = "rdma/ib";
/// Where a container finds the RDMA devices' character device nodes: `uverbsN`, one per device, which
/// libibverbs opens (rdma-core `libibverbs/init.c`, `find_sysfs_devs`: `/sys/class/infiniband_verbs/uverbsN`
/// names its device in `ibdev`), and `rdma_cm`. The RDMA device plugin mounts them with its resource (a DRA
/// driver with its claim). In the kernel's default `shared` RDMA namespace mode `/sys/class/infiniband`
/// lists every device of the node whether or not the container got their nodes; without them
/// `ibv_open_device` fails and NCCL logs `NET/IB : Unable to open device`.
pub const RDMA_DEVICE_DIR: &str = "/dev/infiniband";
/// The capability RDMA memory registration needs past the default locked-memory limit.
pub const IPC_LOCK: &str = "IPC_LOCK";
/// `CAP_IPC_LOCK` is bit 14 of the capability sets (`include/uapi/linux/capability.h`): what `doctor` tests
/// in `/proc/self/status`'s `CapEff`.
pub const IPC_LOCK_BIT: u32 = 14;
/// The Linux capabilities a profile may add, as Kubernetes' `capabilities.add` spells them: the fabric needs
/// only [`IPC_LOCK`]; the others are accepted for workloads that need them, and never `SYS_ADMIN`. The walker
/// accepts these, the JSON Schema and `docs/reference.md` list them.
pub const CAPABILITIES: &[&str] = &[IPC_LOCK, "SYS_NICE", "SYS_PTRACE", "SYS_RESOURCE"];

/// Whether an entry of a container's `securityContext.capabilities.add` grants `cap`: the name with or
/// without `CAP_` (the runtime adds the prefix where it is missing), or `ALL`, every capability
/// (capabilities(7); containerd's CRI plugin reads `ALL` so). `lint`, `apply` and what a pod gets ask this.
///
/// ```
/// use roce_model::fabric::attach::{IPC_LOCK, grants};
/// assert!(grants("CAP_IPC_LOCK", IPC_LOCK) && grants("ALL", IPC_LOCK));
/// assert!(!grants("SYS_NICE", IPC_LOCK));
/// ```
pub fn grants(added: &str, cap: &str) -> bool {
    let added = added.strip_prefix("CAP_").unwrap_or(added);
    added == cap || added == "ALL"
}
/// Where NCCL and UCX put their shared-memory segments (NCCL's SHM transport and proxy buffers, UCX's
/// `posix` transport).
pub const SHM_DIR: &str = "/dev/shm";
/// The size of the `/dev/shm` tmpfs a container gets when nothing memory-backed is mounted there: 64 MiB
/// (containerd's CRI plugin, `defaultShmSize = int64(1024 * 1024 * 64)`; Docker's `--shm-size` default
/// `64m`). NCCL's shared-memory transport outgrows it on a multi-GPU node (NCCL's troubleshooting guide,
/// "Docker": raise it with `--shm-size`); in Kubernetes an `emptyDir` of medium `Memory` at `/dev/shm`
/// replaces it.
pub const RUNTIME_SHM_BYTES: u64 = 64 * 1024 * 1024;

/// What a pod of a host-network profile ([`NicAttachment::HostNetwork`](super::dra::NicAttachment::HostNetwork)) gets, as OCI's host-network mode
/// wires it (oracle-quickstart/oci-hpc-oke `manifests/nccl-tests/host-network/mpi-operator/BM.GPU.H100.8.yaml`
/// and `docs/running-pytorch-jobs-on-oke-using-hostnetwork-with-rdma.md`: "we use the host network to attach
/// the RDMA interfaces on the node to the pod"):
/// - `hostNetwork: true`: the pod shares the node's network namespace, so the node's RoCE netdevs (and the
///   GIDs on them) are the pod's; the runtime sets up no pod network, so no CNI (Multus) runs for it;
/// - `dnsPolicy: ClusterFirstWithHostNet` ([`HOST_NETWORK_DNS_POLICY`]);
/// - a privileged container with the host's `/dev/infiniband` mounted ([`RDMA_DEVICE_DIR`]): no device
///   plugin hands out the `uverbsN` nodes, and an unprivileged container's device cgroup would refuse to
///   open them (a privileged one is allowed every device of the node).
pub const HOST_NETWORK: &str = "hostNetwork";
/// The DNS policy of a host-network pod: under the default `ClusterFirst` a pod with `hostNetwork` falls back
/// to the node's resolver (Kubernetes, "DNS for Services and Pods", Pod's DNS policy), and MPI's and
/// PyTorch's workers find each other by cluster names (the MPI Operator sets it on host-network pods,
/// kubeflow/mpi-operator#428).
pub const HOST_NETWORK_DNS_POLICY: &str = "ClusterFirstWithHostNet";
/// The name of the hostPath volume of the host's `/dev/infiniband` in host-network pods.
pub const RDMA_DEVICE_VOLUME: &str = "dev-infiniband";

/// The GPU resource as a validated name.
pub fn gpu_resource() -> ResourceName {
    GPU_RESOURCE
        .parse()
        .expect("nvidia.com/gpu is an extended resource name")
}

/// What a pod needs attached so the fabric reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodWiring {
    /// Multus networks, in rail order.
    pub networks: Vec<NadRef>,
    /// Extended resources set to the same value in requests and limits (`rdma/ib: 1`).
    pub resources: Vec<(ResourceName, String)>,
    /// Linux capabilities to add.
    pub capabilities: Vec<Capability>,
}

impl PodWiring {
    /// The Multus annotation value: a JSON list, one object per NAD in rail order, one NAD per line (the
    /// layout of the vendor's examples, so a review diff shows which NAD changed).
    pub fn multus_annotation(&self) -> Option<String> {
        (!self.networks.is_empty()).then(|| multus_list(&self.networks))
    }
}

/// The Multus annotation value for `networks`: a JSON list, one object per NAD, one NAD per line.
pub fn multus_list(networks: &[NadRef]) -> String {
    let items: Vec<String> = networks
        .iter()
        .map(|n| {
            let entry = MultusEntry {
                name: n.name(),
                namespace: n.namespace(),
            };
            serde_json::to_string(&entry).expect("two strings always serialize")
        })
        .collect();
    format!("[{}]", items.join(",\n "))
}

/// One element of the Multus annotation, in the multi-net spec's field order.
#[derive(serde::Serialize)]
struct MultusEntry<'a> {
    name: &'a str,
    namespace: &'a str,
}
