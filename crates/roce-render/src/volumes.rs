//! The volumes the edits add to a pod and the container's mounts of them ([`crate::edits::Volume`]).

use crate::yaml::Yaml;
use roce_model::fabric::observe::{INSPECTOR_VOLUME, Inspector};
use roce_model::fabric::provider::{HostMount, TOPOLOGY_VOLUME, TopologyFile};

/// Name of the memory-backed `/dev/shm` volume.
pub(crate) const SHM_VOLUME: &str = "dshm";

/// The topology file's ConfigMap as a volume holding just its key: the pod does not start while the
/// ConfigMap is missing, instead of NCCL probing a topology the profile says is wrong.
pub(crate) fn topology_volume(t: &TopologyFile) -> Yaml {
    Yaml::map().with("name", TOPOLOGY_VOLUME).with(
        "configMap",
        Yaml::map().with("name", t.config_map.as_str()).with(
            "items",
            Yaml::Seq(vec![
                Yaml::map()
                    .with("key", t.key.as_str())
                    .with("path", t.key.as_str()),
            ]),
        ),
    )
}

/// The container's read-only mount of [`topology_volume`]'s one file at the profile's path (`subPath`, so
/// the directory around it stays the image's).
pub(crate) fn topology_mount(t: &TopologyFile) -> Yaml {
    Yaml::map()
        .with("name", TOPOLOGY_VOLUME)
        .with("mountPath", t.path.as_str())
        .with("subPath", t.key.as_str())
        .with("readOnly", true)
}

/// The Inspector's output directory as a volume: the node's directory the profile names (`hostPath`, type
/// `DirectoryOrCreate`: the kubelet creates it, so a node exporter's textfile collector can read it), or an
/// `emptyDir` that lives as long as the pod.
pub(crate) fn inspector_volume(i: &Inspector) -> Yaml {
    let v = Yaml::map().with("name", INSPECTOR_VOLUME);
    match i.host_path() {
        Some(h) => v.with(
            "hostPath",
            Yaml::map()
                .with("path", h)
                .with("type", "DirectoryOrCreate"),
        ),
        None => v.with("emptyDir", Yaml::map()),
    }
}

/// The container's writable mount of [`inspector_volume`] at the directory `NCCL_INSPECTOR_DUMP_DIR` names.
pub(crate) fn inspector_mount(i: &Inspector) -> Yaml {
    Yaml::map()
        .with("name", INSPECTOR_VOLUME)
        .with("mountPath", i.dump_dir())
}

/// A host directory as a `hostPath` volume of type `Directory`: the pod fails to start when the node has
/// not installed it, instead of NCCL falling back at run time.
pub(crate) fn host_volume(m: &HostMount) -> Yaml {
    Yaml::map().with("name", m.name.as_str()).with(
        "hostPath",
        Yaml::map()
            .with("path", m.host_path.as_str())
            .with("type", "Directory"),
    )
}

/// The container's read-only mount of [`host_volume`].
pub(crate) fn host_mount(m: &HostMount) -> Yaml {
    Yaml::map()
        .with("name", m.name.as_str())
        .with("mountPath", m.mount_path.as_str())
        .with("readOnly", true)
}

/// The host's `/dev/infiniband` as a `hostPath` volume (type `Directory`: the pod does not start on a node
/// without RDMA devices).
pub(crate) fn rdma_device_volume() -> Yaml {
    use roce_model::fabric::attach::{RDMA_DEVICE_DIR, RDMA_DEVICE_VOLUME};
    Yaml::map().with("name", RDMA_DEVICE_VOLUME).with(
        "hostPath",
        Yaml::map()
            .with("path", RDMA_DEVICE_DIR)
            .with("type", "Directory"),
    )
}

/// The container's mount of [`rdma_device_volume`] at `/dev/infiniband`.
pub(crate) fn rdma_device_mount() -> Yaml {
    use roce_model::fabric::attach::{RDMA_DEVICE_DIR, RDMA_DEVICE_VOLUME};
    Yaml::map()
        .with("name", RDMA_DEVICE_VOLUME)
        .with("mountPath", RDMA_DEVICE_DIR)
}

/// A memory-backed `emptyDir` volume for `/dev/shm`.
pub(crate) fn shm_volume_named(name: &str) -> Yaml {
    Yaml::map()
        .with("name", name)
        .with("emptyDir", Yaml::map().with("medium", "Memory"))
}
