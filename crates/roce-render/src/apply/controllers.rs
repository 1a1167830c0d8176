//! What each workload controller adds to the pods it builds from a template, which the template does not
//! say: the volumes it declares, what it mounts, the privilege and capabilities it grants. The pod the API
//! server sees has them, so lint judges the template with them and apply does not add them twice.

/// What a workload's controller adds to the pods it builds from a template, which the template itself does
/// not say: the pod the API server sees has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Volumes it declares in the pod (a mount of one in the template is not of an undeclared volume).
    pub volumes: &'static [&'static str],
    /// It makes the wired container privileged (unless the template sets `privileged: false`).
    pub privileged: bool,
    /// The ranks do not run with the container's env but with one the container does not show (a Slurm
    /// job's): variables the template lacks are unknown, not missing.
    pub env_elsewhere: bool,
    /// Volumes it mounts in the wired container, by (volume, mount path): the path holds that mount
    /// whatever the template says (the `/dev/shm` of a NIMService's or a Dynamo component's pods).
    pub mounts: &'static [(&'static str, &'static str)],
    /// Capabilities it adds to the wired container (KServe's data-parallel presets: `IPC_LOCK`).
    pub capabilities: &'static [&'static str],
    /// It merges configuration roce does not model (a user's own KServe `baseRefs`): what the template
    /// leaves out of the container's security context and mounts is unknown, not missing.
    pub unknown: bool,
}

impl Added {
    /// A controller that adds nothing the checks read.
    pub(crate) const NOTHING: Added = Added {
        volumes: &[],
        privileged: false,
        env_elsewhere: false,
        mounts: &[],
        capabilities: &[],
        unknown: false,
    };
}

/// Kubeflow Trainer's MPI plugin, for a (Cluster)TrainingRuntime with `spec.mlPolicy.mpi`: it declares the
/// Secret volume `mpi-ssh-auth` in the pods of the `node` and `launcher` replicated jobs and the ConfigMap
/// volume `mpi-hostfile` in the launcher's (kubeflow/trainer 8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3,
/// `pkg/runtime/framework/plugins/mpi/mpi.go` `EnforceMLPolicy`: `apply.UpsertVolumes` with
/// `constants.MPISSHAuthVolumeName`, `MPIHostfileVolumeName`; the pod sets are named by
/// `constants.Node` = "node" and `constants.Launcher` = "launcher"). It mounts the Secret into the
/// containers named `node` at `mlPolicy.mpi.sshAuthMountPath`; a runtime's init containers that copy the
/// keys mount it themselves.
pub(crate) const TRAINER_MPI_NODE: Added = Added {
    volumes: &["mpi-ssh-auth"],
    ..Added::NOTHING
};
pub(crate) const TRAINER_MPI_LAUNCHER: Added = Added {
    volumes: &["mpi-ssh-auth", "mpi-hostfile"],
    ..Added::NOTHING
};

/// Slinky's slurm-operator builds a NodeSet's pod with `spec.slurmd` as its first container, named
/// `slurmd`, privileged (with BPF, NET_ADMIN, SYS_ADMIN, SYS_NICE), and declares the `slurm-etc` and
/// `slurm-logfile` volumes; the NodeSet's container is strategically merged over that base, so only its
/// own `privileged: false` takes privilege away (SlinkyProject/slurm-operator
/// f2ed3fc5325271cef6311c1f92c6c75efe122bb1, `internal/builder/workerbuilder/worker_app.go`
/// `slurmdContainer`, `nodesetVolumes`; `internal/builder/common/container.go` `BuildContainer`). Slurm
/// jobs run inside that container (slurmstepd is its child), with the environment `sbatch`/`srun`
/// propagate from the submitting shell (sbatch(1), `--export`: `ALL` by default), not slurmd's.
pub(crate) const SLURMD: Added = Added {
    volumes: &["slurm-etc", "slurm-logfile"],
    privileged: true,
    env_elsewhere: true,
    ..Added::NOTHING
};

/// The NIM operator builds a NIMService's pods (a Deployment, or a LeaderWorkerSet's leader and workers for
/// `spec.multiNode`) around one container made of the NIMService's `spec.image`, `command`, `args`, `env`
/// and `resources`, with its `annotations`, `nodeSelector` and `tolerations` on the pod; the spec has no
/// field for a container securityContext and the operator sets none. It declares the memory emptyDir
/// `dshm` and mounts it at /dev/shm (NVIDIA/k8s-nim-operator f63f74d7ad22eaea7943cc640e545f4ccdbb8077,
/// `api/apps/v1alpha1/nimservice_types.go` `NIMServiceSpec`, `GetVolumes`, `GetVolumeMounts`;
/// `manifests/lws.yaml`).
pub(crate) const NIM_SERVICE: Added = Added {
    volumes: &["dshm"],
    mounts: &[("dshm", "/dev/shm")],
    ..Added::NOTHING
};

/// The Dynamo operator declares a memory emptyDir `shared-memory` (8Gi by default) in every component's
/// pods and mounts it at /dev/shm in the main container, unless the component turns it off
/// (`sharedMemory.disabled: true` in `v1alpha1`, a zero `sharedMemorySize` in `v1beta1`)
/// (ai-dynamo/dynamo 2a6da14c83617f5412caba5777dbf0e2399e9c5f, `deploy/operator/internal/dynamo/shared_memory.go`
/// `buildSharedMemoryVolumeAndMount`, `internal/consts/consts.go` `KubeValueNameSharedMemory`).
pub(crate) const DYNAMO_SHM: Added = Added {
    volumes: &["shared-memory"],
    mounts: &[("shared-memory", "/dev/shm")],
    ..Added::NOTHING
};

/// KubeRay declares a memory emptyDir `shared-mem` in every Ray pod it builds and mounts it at /dev/shm in
/// the Ray container (the first), unless that container already mounts something there
/// (ray-project/kuberay `ray-operator/controllers/ray/common/pod.go`: `BuildPod` calls `addEmptyDir` with
/// `SharedMemoryVolumeName` "shared-mem", `SharedMemoryVolumeMountPath` "/dev/shm",
/// `corev1.StorageMediumMemory`, sized to the container's memory limit).
pub(crate) const RAY: Added = Added {
    volumes: &["shared-mem"],
    mounts: &[("shared-mem", "/dev/shm")],
    ..Added::NOTHING
};

/// KServe merges a well-known `LLMInferenceServiceConfig` under each of an LLMInferenceService's pod specs
/// before the user's (kserve/kserve aaac4e294dae2c7b1aa1886447793f3aa1c30912,
/// `pkg/controller/v1alpha2/llmisvc/config_merge.go` `combineBaseRefsConfig`): for a role (decode, or
/// `spec.prefill`) without a `worker`, `config-llm-template` / `-decode-template` / `-prefill-template`,
/// whose `main` container drops every capability and adds none; for a role with a `worker` and data
/// parallelism (`parallelism.data` or `dataLocal` > 0), the `*-worker-data-parallel` configs, which add
/// `IPC_LOCK`, `SYS_RAWIO`, `NET_RAW`. Every one declares `home`, `tmp-dir`, `dshm`, `model-cache` and
/// `tls-certs` and mounts the memory `dshm` at /dev/shm (`config/llmisvcconfig/`).
const KSERVE_VOLUMES: &[&str] = &["home", "tmp-dir", "dshm", "model-cache", "tls-certs"];
pub(crate) const KSERVE_SINGLE: Added = Added {
    volumes: KSERVE_VOLUMES,
    mounts: &[("dshm", "/dev/shm")],
    ..Added::NOTHING
};
pub(crate) const KSERVE_DATA_PARALLEL: Added = Added {
    capabilities: &["IPC_LOCK", "SYS_RAWIO", "NET_RAW"],
    ..KSERVE_SINGLE
};
