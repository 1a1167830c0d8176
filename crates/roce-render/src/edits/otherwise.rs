//! The forms a consumer documents as meeting a requirement otherwise than by its edits: **one list**
//! ([`otherwise`]), asked of what a template gets ([`Met`], read once from [`Wiring`]).
//!
//! `roce lint` reads it through [`Requirement::unmet`] (a gap the list meets is no finding) and its checks of
//! their own ([`Met::meets`]); `roce apply` through [`unmet`] (the edits the list leaves alone are not
//! written). So the two cannot disagree about whether a need is met: they differ only where an entry says
//! apply writes the profile's form beside the pod's ([`Apply::WritesBeside`]: harmless, as the Pod target
//! does).

use roce_model::fabric::attach::GPU_RESOURCE;
use roce_model::fabric::{devices, dra, env, observe, provider};
use roce_model::plumbing::tree::Node;

use super::keys::same_path;
use super::{Edit, Need, Requirement, Volume};
use crate::apply::{templates, view};
use crate::plan::Plan;
use crate::wiring::{RdmaAccess, Wiring};

/// What a pod template gets in a form other than the profile's edits, read once from its [`Wiring`]: the
/// facts every entry of [`otherwise`] asks.
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct Met {
    /// Its rail NICs in another form (its own RDMA networks, DRA NIC claims, the cloud's interfaces).
    nics: bool,
    /// RDMA devices through another resource, a DRA NIC claim, or a privileged container.
    rdma: bool,
    /// Devices of its own choosing: its own NICs, or RDMA devices of another resource or claim (a
    /// privileged container sees every device of the node, the profile's too).
    own_devices: bool,
    /// An IMEX channel claim the container already uses (any ComputeDomain's).
    imex: bool,
    /// It keeps its replicas apart across NVLink domains: a required clique affinity would contradict it.
    spreads: bool,
    /// It picks its nodes by another cloud's labels: the profile's node labels would contradict them.
    foreign_nodes: bool,
    /// The profile's node labels its required node affinity already decides (`nodeSelector` is ANDed with
    /// it): `true` where it admits only other values.
    affinity_labels: Vec<(String, bool)>,
    /// A privileged container: every capability, and the node's `/dev`.
    privileged: bool,
    /// The provider's per-device resource, where the container asks for the share of it its part of the
    /// node's GPUs has ([`roce_model::fabric::provider::Provider::device_share`]).
    device_share: Option<&'static str>,
    /// GPUs from the device plugin (`nvidia.com/gpu` > 0), whose GKE plugin mounts the driver directory.
    plugin_gpus: bool,
    /// The container's mount paths.
    mounts: Vec<String>,
    /// Its controller mounts a memory volume at /dev/shm in the pods it builds (a NIMService's, a Dynamo
    /// component's), and drops any other mount of the path (Dynamo's `ApplySharedMemoryVolumeAndMount`): a
    /// volume added here would be dropped.
    controller_shm: bool,
    /// The rank's `NCCL_TOPO_FILE` names another file than the profile's (literal, no `$`), or the rank's env
    /// is not all in the manifest (a script the ranks run in may set it, whatever the container says).
    topology_elsewhere: bool,
    /// The rank's `NCCL_INSPECTOR_DUMP_DIR` names another directory it mounts.
    inspector_elsewhere: bool,
}

impl Met {
    /// Read from what the template of `v` gets (`w`); `pod_namespace` is where its networks resolve.
    pub fn read(
        w: &Wiring<'_>,
        v: &view::PodView<'_>,
        plan: &Plan,
        pod_namespace: Option<&str>,
    ) -> Met {
        let want = plan
            .wiring
            .as_ref()
            .map(|p| p.networks.as_slice())
            .unwrap_or(&[]);
        let profile_resource = |r: &str| {
            plan.wiring
                .as_ref()
                .is_some_and(|p| p.resources.iter().any(|(name, _)| name.as_str() == r))
        };
        let profile_labels: Vec<&str> =
            plan.node_selector.iter().map(|(k, _)| k.as_str()).collect();
        let nics = w.nics_otherwise(want, pod_namespace);
        let literal = |name: &str| {
            w.var(name)
                .and_then(|v| v.value.as_deref())
                .filter(|v| !v.contains('$'))
        };
        Met {
            nics,
            own_devices: nics || w.rdma_devices_own(plan),
            rdma: match w.rdma_access() {
                Some(RdmaAccess::Resource(r)) => !profile_resource(&r),
                Some(RdmaAccess::Claim(_) | RdmaAccess::Privileged | RdmaAccess::Injected) => true,
                _ => false,
            },
            imex: w.imex_channel().is_some(),
            spreads: w.spreads_over(v.spec, dra::CLIQUE_LABEL),
            foreign_nodes: v
                .spec
                .and_then(|s| view::entry(s, "nodeSelector"))
                .is_some_and(|sel| {
                    <Node as templates::Tree>::entries(&sel.node)
                        .iter()
                        .any(|(k, _)| devices::foreign_node_label(k, &profile_labels))
                }),
            affinity_labels: plan
                .node_selector
                .iter()
                .filter_map(
                    |(k, want)| match view::required_node_label(v.spec, k, want) {
                        view::NodeLabel::Selects => Some((k.to_string(), false)),
                        view::NodeLabel::Other(..) => Some((k.to_string(), true)),
                        view::NodeLabel::Open => None,
                    },
                )
                .collect(),
            privileged: w.privileged.is_some(),
            device_share: plan.provider.device_resource().filter(|name| {
                let want = plan.wiring.as_ref().and_then(|p| {
                    p.resources
                        .iter()
                        .find(|(r, _)| r.as_str() == *name)
                        .and_then(|(_, q)| q.parse::<u64>().ok())
                });
                w.resources.iter().any(|r| {
                    r.name == *name
                        && r.count().zip(want).is_some_and(|(have, want)| {
                            have != want
                                && plan.provider.device_share(
                                    have,
                                    want,
                                    plan.gpus_per_node,
                                    w.nvidia_gpu_count(),
                                )
                        })
                })
            }),
            plugin_gpus: w
                .resources
                .iter()
                .any(|r| r.name == GPU_RESOURCE && r.count().is_some_and(|n| n > 0)),
            mounts: w.mounts.iter().map(|(_, p, _)| p.to_string()).collect(),
            controller_shm: v
                .added
                .mounts
                .iter()
                .any(|(_, p)| same_path(p, Volume::SharedMemory.mount_path())),
            // The rank's NCCL_TOPO_FILE names another file: one of a ConfigMap the container mounts (Azure's
            // samples mount `nvidia-topology` at /opt/nvidia-topology), or one outside every mount, which is
            // the image's (NCCL opens whatever path the variable names: `ncclTopoGetXmlFromFile`).
            topology_elsewhere: plan.topology.as_ref().is_some_and(|t| {
                literal(provider::NCCL_TOPO_FILE).is_some_and(|path| path != t.path)
                    || w.env_unknown
            }),
            // The rank's own NCCL_INSPECTOR_DUMP_DIR, where it names another directory it mounts.
            inspector_elsewhere: plan.inspector.as_ref().is_some_and(|i| {
                literal(observe::NCCL_INSPECTOR_DUMP_DIR)
                    .filter(|d| *d != i.dump_dir())
                    .is_some_and(|d| w.mounts.iter().any(|(_, p, _)| same_path(p, d)))
            }),
        }
    }

    /// Does the template meet `e`, one of `r`'s edits, in another form ([`otherwise`])?
    pub fn meets(&self, r: &Requirement, e: &Edit) -> bool {
        otherwise(r, self).iter().any(|o| (o.edits)(e))
    }

    fn mounts_at(&self, path: &str) -> bool {
        self.mounts.iter().any(|p| same_path(p, path))
    }
}

/// What `roce apply` does with the edits an entry meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Apply {
    /// Leaves them out: writing them would change what works (a second set of networks, a second
    /// ComputeDomain, an affinity against the pod's spread, device names that select none of its devices).
    LeavesAlone,
    /// Writes them beside the pod's form, as the Pod target states them (IPC_LOCK beside `privileged`).
    WritesBeside,
}

/// One form that meets some of a requirement's edits otherwise.
pub(crate) struct Otherwise<'m> {
    /// Which of the requirement's edits it meets.
    pub edits: Box<dyn Fn(&Edit) -> bool + 'm>,
    /// What apply does with them.
    pub apply: Apply,
    /// Why apply leaves them alone, for its notes (empty: nothing to say).
    pub why: Vec<String>,
}

/// Why apply adds no /dev/shm where the controller mounts its own.
const SHM_BY_CONTROLLER: &[&str] =
    &["gets a memory-backed /dev/shm from its controller: none added"];

/// Part of the node's GPUs and the same part of its per-device resource (half a p5: 4 GPUs, 16 EFA): the
/// count is the pod's share, left as it is.
fn device_share<'m>(r: &Requirement, met: &Met) -> Option<Otherwise<'m>> {
    let resource = met.device_share?;
    let edit = move |e: &Edit| matches!(e, Edit::Resource { name, .. } if name == resource);
    r.edits.iter().any(edit).then(|| Otherwise {
        edits: Box::new(edit),
        apply: Apply::LeavesAlone,
        why: vec!["takes its GPUs' share of the node's devices: its count is left as it is".into()],
    })
}

/// Every form that meets (some of) `r` on a template that gets `met`: the one list lint and apply read.
pub(crate) fn otherwise<'m>(r: &Requirement, met: &'m Met) -> Vec<Otherwise<'m>> {
    let mut out: Vec<Otherwise<'m>> = device_share(r, met).into_iter().collect();
    let mut add = |edits: Box<dyn Fn(&Edit) -> bool + 'm>, apply: Apply, why: &[&str]| {
        out.push(Otherwise {
            edits,
            apply,
            why: why.iter().map(|w| (*w).to_string()).collect(),
        });
    };
    // A privileged container holds every capability (capabilities(7); Kubernetes runs it with all of them),
    // and its /dev holds the node's devices, /dev/infiniband among them. `apply` still adds the profile's
    // beside it, as the Pod target does in the host-network mode.
    if met.privileged {
        add(
            Box::new(|e| matches!(e, Edit::Capability(_) | Edit::Volume(Volume::RdmaDevices))),
            Apply::WritesBeside,
            &[],
        );
    }
    match r.need {
        Need::RailNics if met.nics => add(
            Box::new(|e| matches!(e, Edit::Networks(_))),
            Apply::LeavesAlone,
            &[
                "gets its NICs in another form (its own networks, DRA NIC claims or the cloud's interfaces): its networks are left as they are",
            ],
        ),
        Need::RdmaDevices if met.rdma => {
            let mut why = Vec::new();
            if r.edits
                .iter()
                .any(|e| matches!(e, Edit::Resource { name, .. } if devices::rdma_resource(name)))
            {
                why.push("gets its RDMA devices in another form: no RDMA resource added");
            }
            if r.edits.iter().any(|e| matches!(e, Edit::PodClaim(_))) {
                why.push("gets its RDMA devices from a device plugin: no DRA NIC claim added");
            }
            add(
                Box::new(|e| match e {
                    Edit::Resource { name, .. } => devices::rdma_resource(name),
                    Edit::PodClaim(_) | Edit::ContainerClaim(_) | Edit::Document(_) => true,
                    _ => false,
                }),
                Apply::LeavesAlone,
                &why,
            );
        }
        Need::NvlinkDomain if met.imex => add(
            Box::new(|_| true),
            Apply::LeavesAlone,
            &["already claims an IMEX channel of a ComputeDomain: that one is kept, none added"],
        ),
        Need::Placement
            if met.spreads && r.edits.iter().any(|e| matches!(e, Edit::Affinity(_))) =>
        {
            out.push(Otherwise {
                edits: Box::new(|e| matches!(e, Edit::Affinity(_) | Edit::Label { .. })),
                apply: Apply::LeavesAlone,
                why: vec![format!(
                    "keeps its pods apart across `{}` (a spread constraint or anti-affinity): no required clique affinity added, which would contradict it",
                    dra::CLIQUE_LABEL
                )],
            });
        }
        // Which devices and GID a rank uses depends on the NICs the pod got (`fabric::env::POD_DEPENDENT`):
        // with NICs of its own, the profile's device names would select none of them.
        Need::Environment
            if met.own_devices
                && r.edits
                    .iter()
                    .any(|e| matches!(e, Edit::Env(v) if env::is_pod_dependent(&v.name))) =>
        {
            add(
                Box::new(|e| matches!(e, Edit::Env(v) if env::is_pod_dependent(&v.name))),
                Apply::LeavesAlone,
                &[
                    "gets its NICs or RDMA devices in another form: the variables that select its devices (NCCL_IB_HCA, UCX_NET_DEVICES, the GID indices) are its own and are not set",
                ],
            );
        }
        // A pod that picks its nodes by another cloud's labels is someone else's node pool.
        Need::NodePool if met.foreign_nodes => add(
            Box::new(|_| true),
            Apply::LeavesAlone,
            &[
                "selects its nodes by another cloud's labels: the profile's node labels are not added",
            ],
        ),
        // A label its required node affinity decides: met there, or the pod's own choice of nodes, which a
        // selector added beside it would leave with no node at all (the scheduler ANDs them).
        Need::NodePool if !met.affinity_labels.is_empty() => add(
            Box::new(|e| {
                matches!(e, Edit::NodeLabel { key, .. }
                    if met.affinity_labels.iter().any(|(k, _)| k == key))
            }),
            Apply::LeavesAlone,
            if met.affinity_labels.iter().any(|(_, other)| *other) {
                &[
                    "requires other values of the profile's node labels in its node affinity: no nodeSelector is added beside it",
                ]
            } else {
                &[]
            },
        ),
        // The controller's own volume replaces any other at /dev/shm ([`Met::controller_shm`]).
        Need::SharedMemory if met.controller_shm => {
            add(Box::new(|_| true), Apply::LeavesAlone, SHM_BY_CONTROLLER);
        }
        // The GPU count is the workload's: a GPU-less test pod, an AMD or Trainium pod stays as it is.
        Need::Gpus => add(Box::new(|_| true), Apply::LeavesAlone, &[]),
        // GKE's GPU device plugin mounts the node's driver directory into a container with GPUs (where the
        // container mounts nothing of its own there).
        Need::HostDirectories if met.plugin_gpus => add(
            Box::new(|e| {
                matches!(e, Edit::Volume(Volume::Host(m))
                    if provider::mounted_with_gpus(&m.host_path, &m.mount_path) && !met.mounts_at(&m.mount_path))
            }),
            Apply::WritesBeside,
            &[],
        ),
        // Another topology file, or another mounted directory for the Inspector's records: the variable
        // names what the consumer reads, so the profile's volume would hold what nothing reads (and a
        // ConfigMap volume whose ConfigMap the namespace lacks keeps the pod from starting).
        Need::TopologyFile if met.topology_elsewhere => add(
            Box::new(|_| true),
            Apply::LeavesAlone,
            &[
                "names another topology file in NCCL_TOPO_FILE (or runs its ranks in a script that may): the profile's ConfigMap volume is not added",
            ],
        ),
        Need::InspectorOutput if met.inspector_elsewhere => add(
            Box::new(|_| true),
            Apply::LeavesAlone,
            &[
                "sends the Inspector's records to another directory it mounts (NCCL_INSPECTOR_DUMP_DIR): no volume added",
            ],
        ),
        _ => {}
    }
    out
}

/// The edits `apply` writes into a template that gets `met`: every requirement's, less those [`otherwise`]
/// leaves alone, with a sentence for each part left alone. GPUs are the workload's and never added.
pub(crate) fn unmet<'r>(reqs: &'r [Requirement], met: &Met) -> (Vec<&'r Edit>, Vec<String>) {
    let mut edits = Vec::new();
    let mut kept = Vec::new();
    for r in reqs {
        let left: Vec<Otherwise<'_>> = otherwise(r, met)
            .into_iter()
            .filter(|o| o.apply == Apply::LeavesAlone)
            .collect();
        edits.extend(
            r.edits
                .iter()
                .filter(|e| !left.iter().any(|o| (o.edits)(e))),
        );
        kept.extend(left.into_iter().flat_map(|o| o.why));
    }
    (edits, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::{ApplyOptions, apply};
    use crate::edits::requirements;
    use crate::wiring::Input;
    use roce_model::plumbing::manifest;
    use roce_model::source::{Source, Sources};
    use roce_model::{BuiltinsOnly, builtin, load};

    fn plan_of(src: Source) -> Plan {
        crate::lower(&load(src, &BuiltinsOnly).profile.unwrap())
    }

    /// Whether lint reports `need` on the one pod of `text`, and apply's output.
    fn lint_and_apply(plan: &Plan, need: Need, text: &str) -> (bool, String) {
        let mut sources = Sources::default();
        let id = sources.add(Source::new("p.yaml", text.to_string()));
        let docs = manifest::parse(text, id).unwrap();
        let input = Input::read(&docs);
        let (found, _) = templates::discover(&docs[0]).unwrap();
        let v = view::view(&docs[0], &found[0], None).unwrap();
        let w = Wiring::read(&v, &input, None);
        let met = Met::read(&w, &v, plan, None);
        let reqs = requirements(plan, None);
        let r = reqs.iter().find(|r| r.need == need).unwrap();
        let reported = r.unmet(plan, &v, &w, &met).is_some();
        let applied = apply(
            &Source::new("p.yaml", text.to_string()),
            plan,
            &ApplyOptions::default(),
        );
        (reported, applied.unwrap().text)
    }

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: x\n";

    /// Lint took another NCCL_TOPO_FILE for the topology file in another form, while apply still added the
    /// profile's ConfigMap volume: a mount of a file NCCL does not read, whose ConfigMap the namespace may
    /// lack (the kubelet then never starts the pod). One list, one answer.
    #[test]
    fn another_topology_file_is_left_alone_by_lint_and_apply() {
        let plan = plan_of(builtin::source("azure/ndv5-ib").unwrap());
        let pod = format!(
            "{POD}    env:\n    - name: NCCL_TOPO_FILE\n      value: /opt/nvidia-topology/topo.xml\n    volumeMounts:\n    - name: topo\n      mountPath: /opt/nvidia-topology\n  volumes:\n  - name: topo\n    configMap:\n      name: nvidia-topology\n"
        );
        let (reported, applied) = lint_and_apply(&plan, Need::TopologyFile, &pod);
        assert!(!reported);
        assert!(!applied.contains("ndv5-topo"), "{applied}");
        // Without the variable, both say the file is missing.
        let (reported, applied) = lint_and_apply(&plan, Need::TopologyFile, POD);
        assert!(reported);
        assert!(applied.contains("ndv5-topo"), "{applied}");
    }

    /// A node label the pod's required node affinity decides: apply added a `nodeSelector` beside it,
    /// redundant where the affinity admits only the profile's value, and fatal where it admits only others
    /// (the scheduler ANDs the two, so no node fits). Lint reports only the second.
    #[test]
    fn a_node_label_its_affinity_decides_is_left_alone() {
        let plan = plan_of(builtin::source("azure/ndv5-ib").unwrap());
        let key = "node.kubernetes.io/instance-type";
        let affinity = |values: &str| {
            format!(
                "{POD}  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - key: {key}\n            operator: In\n            values: [{values}]\n"
            )
        };
        let selector = format!("{key}: Standard_ND96isr_H100_v5");
        // (Lint's node-label check, a specialised arm, reports the other value: roce-inspect's
        // `a_required_node_affinity_on_the_label_selects_as_nodeselector_does`.)
        for values in ["Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4"] {
            let (_, applied) = lint_and_apply(&plan, Need::NodePool, &affinity(values));
            assert!(!applied.contains("nodeSelector:"), "{values}: {applied}");
        }
        // A term that also admits the profile's value leaves the label open: the selector is added, as it
        // is without an affinity.
        let (_, applied) = lint_and_apply(
            &plan,
            Need::NodePool,
            &affinity("Standard_ND96amsr_A100_v4, Standard_ND96isr_H100_v5"),
        );
        assert!(applied.contains(&selector), "{applied}");
        let (reported, applied) = lint_and_apply(&plan, Need::NodePool, POD);
        assert!(reported);
        assert!(applied.contains(&selector), "{applied}");
    }

    /// A Dynamo component's pods get the operator's memory volume at /dev/shm (it drops any other mount of
    /// the path): apply added a second one, which lint did not ask for.
    #[test]
    fn the_dev_shm_a_controller_mounts_is_left_alone_by_lint_and_apply() {
        let plan = plan_of(builtin::source("azure/ndv5-ib").unwrap());
        let dgd = |shm: &str| {
            format!(
                "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: d\nspec:\n  components:\n  - name: decode\n{shm}    podTemplate:\n      spec:\n        containers:\n        - name: main\n          image: x\n          resources:\n            limits:\n              nvidia.com/gpu: 8\n"
            )
        };
        let (reported, applied) = lint_and_apply(&plan, Need::SharedMemory, &dgd(""));
        assert!(!reported);
        assert!(!applied.contains("/dev/shm"), "{applied}");
        // Turned off: both say it is missing.
        let (reported, applied) = lint_and_apply(
            &plan,
            Need::SharedMemory,
            &dgd("    sharedMemorySize: \"0\"\n"),
        );
        assert!(reported);
        assert!(applied.contains("/dev/shm"), "{applied}");
    }

    /// The same for the Inspector's records sent to another mounted directory: apply added a volume at the
    /// profile's directory, which nothing writes.
    #[test]
    fn another_inspector_directory_is_left_alone_by_lint_and_apply() {
        let plan = plan_of(Source::new(
            "nccl-observability.kdl",
            include_str!("../../../../examples/nccl-observability.kdl").to_string(),
        ));
        let pod = format!(
            "{POD}    env:\n    - name: NCCL_INSPECTOR_DUMP_DIR\n      value: /data/nccl\n    volumeMounts:\n    - name: data\n      mountPath: /data/nccl\n  volumes:\n  - name: data\n    emptyDir: {{}}\n"
        );
        let (reported, applied) = lint_and_apply(&plan, Need::InspectorOutput, &pod);
        assert!(!reported);
        assert!(!applied.contains(observe::INSPECTOR_VOLUME), "{applied}");
        let (reported, applied) = lint_and_apply(&plan, Need::InspectorOutput, POD);
        assert!(reported);
        assert!(applied.contains(observe::INSPECTOR_VOLUME), "{applied}");
    }
}
