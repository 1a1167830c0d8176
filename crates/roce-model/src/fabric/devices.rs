//! What a pod's resources and claims give it: RDMA devices, GPUs of which vendor, an IMEX channel.
//!
//! `roce lint` and `roce apply` read a manifest's wiring through these facts (the same ones for every
//! profile, and for no profile at all), so a pod that gets its RDMA devices from an SR-IOV VF resource or a
//! DRA claim is not told it lacks `rdma/ib`, and a pod with AMD GPUs never gets `nvidia.com/gpu`.

/// Whose accelerator a pod asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accelerator {
    /// NVIDIA GPUs (`nvidia.com/gpu`, MIG slices, the DRA driver's `gpu.nvidia.com`).
    Nvidia,
    /// AMD Instinct GPUs (ROCm device plugin: `amd.com/gpu`).
    Amd,
    /// Intel GPUs (`gpu.intel.com/i915`, `gpu.intel.com/xe`).
    Intel,
    /// AWS Trainium / Inferentia (Neuron device plugin: `aws.amazon.com/neuron*`).
    AwsNeuron,
    /// Google TPUs (`google.com/tpu`).
    GoogleTpu,
}

impl Accelerator {
    /// The vendor's name, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Accelerator::Nvidia => "NVIDIA GPUs",
            Accelerator::Amd => "AMD GPUs",
            Accelerator::Intel => "Intel GPUs",
            Accelerator::AwsNeuron => "AWS Neuron devices",
            Accelerator::GoogleTpu => "Google TPUs",
        }
    }
}

/// The accelerator an extended resource hands out, by the device plugins' published names: NVIDIA's
/// k8s-device-plugin (`nvidia.com/gpu`, `nvidia.com/mig-…`, and `nvidia.com/gpu.shared` with time-slicing),
/// ROCm's k8s-device-plugin (`amd.com/gpu`), Intel's (`gpu.intel.com/i915`, `…/xe`), AWS's Neuron plugin
/// (`aws.amazon.com/neuron`, `…/neuroncore`, `…/neurondevice`), GKE's TPUs (`google.com/tpu`).
pub fn accelerator_resource(name: &str) -> Option<Accelerator> {
    if name == "nvidia.com/gpu"
        || name.starts_with("nvidia.com/mig-")
        || name == "nvidia.com/gpu.shared"
    {
        Some(Accelerator::Nvidia)
    } else if name == "amd.com/gpu" {
        Some(Accelerator::Amd)
    } else if name.starts_with("gpu.intel.com/") {
        Some(Accelerator::Intel)
    } else if name.starts_with("aws.amazon.com/neuron") {
        Some(Accelerator::AwsNeuron)
    } else if name == "google.com/tpu" {
        Some(Accelerator::GoogleTpu)
    } else {
        None
    }
}

/// The accelerator a DRA device class allocates: NVIDIA's DRA driver (`gpu.nvidia.com`, `mig.nvidia.com`),
/// AMD's (`gpu.amd.com`), Intel's (`gpu.intel.com`).
pub fn accelerator_class(class: &str) -> Option<Accelerator> {
    match class {
        "gpu.nvidia.com" | "mig.nvidia.com" => Some(Accelerator::Nvidia),
        "gpu.amd.com" => Some(Accelerator::Amd),
        "gpu.intel.com" => Some(Accelerator::Intel),
        _ => None,
    }
}

/// Does this extended resource hand the container RDMA devices (`/dev/infiniband/uverbsN`)?
///
/// * Mellanox's k8s-rdma-shared-dev-plugin advertises `rdma/<name>` (its default prefix; CoreWeave's
///   `rdma/ib`, the network operator's `rdma/rdma_shared_device_a`);
/// * the SR-IOV network device plugin advertises VFs as `<prefix>/<resourceName>`: the SR-IOV network
///   operator's default prefix `openshift.io`, the NVIDIA network operator's samples `nvidia.com/…`
///   (`nvidia.com/sriov_rdma_vf`, `nvidia.com/hostdev`, `nvidia.com/mlnx_sriov_rdma`), and any prefix whose
///   name says SR-IOV, RDMA or host device; a VF of an RDMA-capable NIC comes with its verbs device;
/// * AWS's EFA device plugin advertises `vpc.amazonaws.com/efa`.
pub fn rdma_resource(name: &str) -> bool {
    let Some((prefix, resource)) = name.split_once('/') else {
        return false;
    };
    let r = resource.to_ascii_lowercase();
    prefix == "rdma"
        || name == super::provider::EFA_RESOURCE
        || prefix == "openshift.io"
        || ["sriov", "rdma", "hostdev", "mlnx", "roce", "infiniband"]
            .iter()
            .any(|w| r.contains(w))
}

/// Is this an extended resource a device plugin hands out (a `vendor/name` that is no accelerator and no
/// resource Kubernetes itself accounts: `hugepages-*`, `*.kubernetes.io/*`)?
pub fn device_resource(name: &str) -> bool {
    let Some((prefix, _)) = name.split_once('/') else {
        return false;
    };
    accelerator_resource(name).is_none()
        && prefix.contains('.')
        && !prefix.ends_with("kubernetes.io")
}

/// Does the platform give every container an unlimited memlock limit, so RDMA registration needs no
/// `IPC_LOCK`? The EKS-optimized accelerated AMIs (the only AMIs with the EFA device plugin's driver) run
/// containerd with `LimitMEMLOCK=infinity` (awslabs/amazon-eks-ami, `templates/shared/runtime/containerd.service`).
/// GKE's RDMA NICs (its multi-network interfaces, or managed DRANET's `*.google.com` device classes) are the
/// other case: Google's GPUDirect RDMA samples (container-engine-accelerators `gpudirect-rdma/`) grant no
/// `IPC_LOCK`.
pub fn memlock_unlimited_with(resource_or_class: &str) -> bool {
    resource_or_class == super::provider::EFA_RESOURCE
        || words(resource_or_class).any(|w| w.starts_with("efa"))
        || resource_or_class.ends_with(".google.com")
}

/// Is a hostPath one of a GKE node's (Container-Optimized OS keeps the GPU driver and gIB under
/// `/home/kubernetes/bin`)? A pod mounting one runs on GKE, whose RDMA samples need no `IPC_LOCK`
/// ([`memlock_unlimited_with`]).
pub fn gke_host_path(path: &str) -> bool {
    path.starts_with("/home/kubernetes/bin")
}

/// A pod annotation that makes an admission webhook give the container its RDMA devices, and what else
/// the webhook adds with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RdmaInjector {
    /// The annotation key.
    pub annotation: &'static str,
    /// Whether only the value `true` turns it on (else any non-empty value, a class name).
    pub boolean: bool,
    /// Whether the webhook also lifts the memlock limit (`IPC_LOCK` or privileged).
    pub memlock: bool,
    /// Whether the webhook also attaches the NICs (writes the Multus networks annotation).
    pub networks: bool,
}

/// The admission webhooks that wire RDMA into an annotated pod:
/// * OME's pod webhook adds privileged, `IPC_LOCK` and the host's `/dev/infiniband` to a pod annotated
///   `rdma.ome.io/auto-inject: "true"` (sgl-project/ome, `pkg/webhook/admission/pod/rdma_injector.go`);
/// * Spiderpool's pod webhook writes the networks of every SpiderMultusConfig carrying the same
///   `cni.spidernet.io/rdma-resource-inject` (or `network-resource-inject`) value into the pod's Multus
///   annotation and requests each one's RDMA resource; it adds no capability (spidernet-io/spiderpool,
///   `pkg/constant` `AnnoPodResourceInject`, `docs/usage/install/ai/get-started-sriov-roce.md`).
pub const RDMA_INJECTORS: &[RdmaInjector] = &[
    RdmaInjector {
        annotation: "rdma.ome.io/auto-inject",
        boolean: true,
        memlock: true,
        networks: false,
    },
    RdmaInjector {
        annotation: "cni.spidernet.io/rdma-resource-inject",
        boolean: false,
        memlock: false,
        networks: true,
    },
    RdmaInjector {
        annotation: "cni.spidernet.io/network-resource-inject",
        boolean: false,
        memlock: false,
        networks: true,
    },
];

/// The NVIDIA DRA driver's device class for a ComputeDomain's IMEX channel (k8s-dra-driver-gpu,
/// `deployments/helm/…/templates/deviceclass-compute-domain-default-channel.yaml`).
pub const IMEX_CHANNEL_CLASS: &str = "compute-domain-default-channel.nvidia.com";

/// Does a DRA device class allocate network devices? dranet's classes select `dra.net` devices; the NVIDIA
/// and SR-IOV DRA drivers name their classes for the NIC (`…rdma…`, `…nic…`, `…sriov…`, `…net…`).
pub fn nic_class(class: &str) -> bool {
    let c = class.to_ascii_lowercase();
    c.contains(super::dra::DRANET_DRIVER)
        || words(&c).any(|w| {
            ["rdma", "sriov", "mlx", "mellanox"]
                .iter()
                .any(|x| w.contains(x))
                || ["nic", "net", "efa"]
                    .iter()
                    .any(|x| w.starts_with(x) || w.ends_with(x))
        })
}

/// The words of a resource or class name, split where DNS names and resource names split (`.`, `/`, `-`,
/// `_`), lower-case: a name is matched by its words, so `default` is not EFA and `channel` is not a NIC.
fn words(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(['.', '/', '-', '_'])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

/// The cloud a node label belongs to, by its prefix's domain: EKS and Karpenter (`amazonaws.com`), GKE
/// (`google.com`), AKS (`azure.com`), OCI (`oraclecloud.com`), CoreWeave (`coreweave.cloud`).
fn label_cloud(key: &str) -> Option<&'static str> {
    let prefix = key.split_once('/')?.0;
    [
        "amazonaws.com",
        "k8s.aws",
        "google.com",
        "azure.com",
        "oraclecloud.com",
        "coreweave.cloud",
    ]
    .into_iter()
    .find(|d| prefix == *d || prefix.ends_with(&format!(".{d}")))
    .map(|d| if d == "k8s.aws" { "amazonaws.com" } else { d })
}

/// Does a pod that selects nodes by `key` pick another cloud's node pool than a profile whose node labels
/// are `profile`? A label of a cloud none of the profile's labels belongs to (a pod pinned to
/// `eks.amazonaws.com/nodegroup` is not for a CoreWeave profile).
pub fn foreign_node_label(key: &str, profile: &[&str]) -> bool {
    let Some(cloud) = label_cloud(key) else {
        return false;
    };
    // A profile whose labels name no cloud (`node.kubernetes.io/instance-type`) cannot be told apart.
    profile.iter().any(|p| label_cloud(p).is_some())
        && !profile.iter().any(|p| label_cloud(p) == Some(cloud))
}

/// The other name of a well-known node label: the kubelet still sets the deprecated `beta` labels beside
/// the names that replaced them (kubernetes.io, "Well-Known Labels, Annotations and Taints":
/// `beta.kubernetes.io/instance-type` → `node.kubernetes.io/instance-type`, `beta.kubernetes.io/arch` and
/// `os` → `kubernetes.io/arch` and `os`, `failure-domain.beta.kubernetes.io/zone` and `region` →
/// `topology.kubernetes.io/zone` and `region`), so a pod that selects either selects the same nodes.
pub fn node_label_alias(key: &str) -> Option<&'static str> {
    const ALIASES: &[(&str, &str)] = &[
        (
            "node.kubernetes.io/instance-type",
            "beta.kubernetes.io/instance-type",
        ),
        ("kubernetes.io/arch", "beta.kubernetes.io/arch"),
        ("kubernetes.io/os", "beta.kubernetes.io/os"),
        (
            "topology.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/zone",
        ),
        (
            "topology.kubernetes.io/region",
            "failure-domain.beta.kubernetes.io/region",
        ),
    ];
    ALIASES.iter().find_map(|(ga, beta)| {
        if key == *ga {
            Some(*beta)
        } else if key == *beta {
            Some(*ga)
        } else {
            None
        }
    })
}

/// Does a node label value `have` pick the nodes the profile's `want` does? The same value, or, for the
/// instance type, SageMaker HyperPod's name of it: HyperPod names its instance types `ml.<type>`
/// (`ml.p5.48xlarge`) and its nodes carry that name in the instance-type labels, so a pod that selects
/// `ml.p5.48xlarge` selects the p5.48xlarge nodes of a HyperPod cluster.
///
/// ```
/// use roce_model::fabric::devices::same_node_label_value;
/// let key = "node.kubernetes.io/instance-type";
/// assert!(same_node_label_value(key, "p5.48xlarge", "p5.48xlarge"));
/// assert!(same_node_label_value(key, "ml.p5.48xlarge", "p5.48xlarge"));
/// assert!(!same_node_label_value(key, "ml.p4d.24xlarge", "p5.48xlarge"));
/// assert!(!same_node_label_value("nvidia.com/gpu.product", "ml.H100", "H100"));
/// ```
pub fn same_node_label_value(key: &str, have: &str, want: &str) -> bool {
    let instance_type = matches!(
        key,
        "node.kubernetes.io/instance-type" | "beta.kubernetes.io/instance-type"
    );
    have == want || (instance_type && have.strip_prefix("ml.") == Some(want))
}

/// Does selecting nodes by `key` pin the pod to one node pool (a cloud's pool or machine label, or the
/// instance type)? Such a pod cannot land "anywhere", whatever the profile's own labels are.
pub fn pins_node_pool(key: &str) -> bool {
    label_cloud(key).is_some()
        || key == "node.kubernetes.io/instance-type"
        || key == "beta.kubernetes.io/instance-type"
}

/// Does the node label `key` describe the node's NVIDIA GPUs, not its network? GPU Feature Discovery's
/// model labels (NVIDIA/k8s-device-plugin, README "Generated Labels": `nvidia.com/gpu.product`, "Model of
/// the GPU"; `.family`, `.memory`, `.compute.major`, `.compute.minor`), set on the nodes whose GPUs the
/// device plugin advertises as `nvidia.com/gpu`. A pod that requests `nvidia.com/gpu` already runs only on
/// such nodes (the scheduler's NodeResourcesFit); the label then picks the GPU model among them.
///
/// ```
/// use roce_model::fabric::devices::gpu_model_label;
/// assert!(gpu_model_label("nvidia.com/gpu.product"));
/// assert!(!gpu_model_label("nvidia.com/gpu.clique"));
/// assert!(!gpu_model_label("backend.coreweave.cloud/flavor"));
/// ```
pub fn gpu_model_label(key: &str) -> bool {
    [
        "nvidia.com/gpu.product",
        "nvidia.com/gpu.family",
        "nvidia.com/gpu.memory",
        "nvidia.com/gpu.compute.major",
        "nvidia.com/gpu.compute.minor",
    ]
    .contains(&key)
}

/// Does a DRA device class belong to a driver that gives its devices to the whole pod, whether a container
/// lists the claim or not? dranet moves the claimed netdevs into the pod's network namespace when the sandbox
/// is created and adds the RDMA device nodes to its containers through NRI (kubernetes-sigs/dranet,
/// `docs/`: "How it works"); GKE's managed DRANET classes (`mrdma.google.com`, `netdev.google.com`) are
/// dranet's.
pub fn pod_level_class(class: &str) -> bool {
    let c = class.to_ascii_lowercase();
    c.contains("dranet") || c.contains(super::dra::DRANET_DRIVER) || c.ends_with(".google.com")
}

/// Variables whose value is a `:`-separated search path: a manifest's value is the launcher's or image's own
/// (the MPI, the net plugin, the CUDA libraries), so roce adds to it and never replaces it.
pub fn path_like(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "LD_LIBRARY_PATH"
            | "LD_PRELOAD"
            | "PYTHONPATH"
            | "LIBRARY_PATH"
            | "CPATH"
            | "MANPATH"
    ) || name.ends_with("_PATH") && name != "NCCL_TOPO_FILE"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_read_by_their_plugins_names() {
        assert!(rdma_resource("rdma/ib"));
        assert!(rdma_resource("rdma/rdma_shared_device_a"));
        assert!(rdma_resource("nvidia.com/sriov_rdma_vf"));
        assert!(rdma_resource("openshift.io/mlxnics"));
        assert!(rdma_resource("vpc.amazonaws.com/efa"));
        assert!(!rdma_resource("nvidia.com/gpu"));
        assert!(!rdma_resource("cpu"));
        assert_eq!(accelerator_resource("amd.com/gpu"), Some(Accelerator::Amd));
        assert_eq!(
            accelerator_resource("aws.amazon.com/neuroncore"),
            Some(Accelerator::AwsNeuron)
        );
        assert_eq!(accelerator_resource("vpc.amazonaws.com/efa"), None);
        assert!(nic_class("dranet"));
        assert!(nic_class("sriovnetwork.openshift.io"));
        assert!(!nic_class("gpu.nvidia.com"));
        // Words, not substrings: the IMEX channel's class has "efa" in "default".
        assert!(!nic_class(IMEX_CHANNEL_CLASS));
        assert!(!memlock_unlimited_with(IMEX_CHANNEL_CLASS));
        for nic in [
            "mrdma.google.com",
            "efa.networking.k8s.aws",
            "dra.net",
            "dranet-rdma",
            "vpc.amazonaws.com/efa",
        ] {
            assert!(nic_class(nic), "{nic}");
        }
        assert!(memlock_unlimited_with("vpc.amazonaws.com/efa"));
        assert!(path_like("LD_LIBRARY_PATH") && !path_like("NCCL_IB_HCA"));
        let cw = ["backend.coreweave.cloud/flavor"];
        assert!(!foreign_node_label("node.coreweave.cloud/class", &cw));
        assert!(foreign_node_label("eks.amazonaws.com/nodegroup", &cw));
        assert!(foreign_node_label("karpenter.k8s.aws/instance-family", &cw));
        assert!(!foreign_node_label("kubernetes.io/arch", &cw));
    }
}
