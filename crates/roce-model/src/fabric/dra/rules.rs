//! What is wrong with DRA NICs, an NVLink domain or placement, against a job or a manifest. Pure functions
//! returning small enums; `check`, `lint` and `doctor` map them to codes and spans, so the three agree.

use serde::Serialize;

use super::{CLIQUE_LABEL, ComputeDomain, DraNics, NicAttachment, NvlinkDomain};

/// `spec.numNodes` of a ComputeDomain against the job's nodes.
///
/// The CRD (`resource.nvidia.com_computedomains.yaml`) recommends `0`: with IMEX daemons that have DNS
/// names (the default) a non-zero value only decides when the domain's status reads `Ready`. Without DNS
/// names, pods wait in `ContainerCreating` until `numNodes` daemons joined, and pods from more nodes than
/// `numNodes` "may lead to unexpected behavior" (dra-driver-nvidia-gpu issues #524, #948).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NumNodesConcern {
    /// More nodes than the job has: the domain never becomes `Ready`, and pods may wait for it forever.
    MoreThanJob {
        /// `spec.numNodes`.
        num_nodes: u32,
        /// The job's nodes.
        job_nodes: u32,
    },
    /// Fewer nodes than the job has: the extra nodes' pods join a domain sized for fewer.
    FewerThanJob {
        /// `spec.numNodes`.
        num_nodes: u32,
        /// The job's nodes.
        job_nodes: u32,
    },
}

/// Compares `numNodes` with the job's node count; `0` ("decided by the workload") always agrees.
pub fn num_nodes_concern(cd: &ComputeDomain, job_nodes: u32) -> Option<NumNodesConcern> {
    let num_nodes = cd.num_nodes();
    match num_nodes {
        0 => None,
        n if n > job_nodes => Some(NumNodesConcern::MoreThanJob {
            num_nodes,
            job_nodes,
        }),
        n if n < job_nodes => Some(NumNodesConcern::FewerThanJob {
            num_nodes,
            job_nodes,
        }),
        _ => None,
    }
}

/// DRA NIC count against the profile's rails and GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NicCountConcern {
    /// The claim asks for a different number of NICs than the profile has rails: NCCL's HCA list and
    /// `UCX_NET_DEVICES` name devices the pod does not get, or leave claimed NICs idle.
    RailMismatch {
        /// NICs in the claim.
        claimed: u32,
        /// Rails in the profile.
        rails: u32,
    },
    /// Aligned NICs that do not divide evenly among the GPUs: some GPUs get fewer NICs than others.
    UnevenAlignment {
        /// NICs in the claim.
        nics: u32,
        /// GPUs aligned with them.
        gpus: u32,
    },
}

/// Every count concern of a DRA NIC claim, against `rails` rails.
pub fn nic_count_concerns(nics: &DraNics, rails: u32) -> Vec<NicCountConcern> {
    let claimed = nics.count();
    let mut out = Vec::new();
    if claimed != rails {
        out.push(NicCountConcern::RailMismatch { claimed, rails });
    }
    if let Some(g) = nics.gpus().filter(|g| g.align().is_some()) {
        let gpus = g.count();
        if !claimed.is_multiple_of(gpus) && !gpus.is_multiple_of(claimed) {
            out.push(NicCountConcern::UnevenAlignment {
                nics: claimed,
                gpus,
            });
        }
    }
    out
}

/// One entry of a manifest pod's `spec.resourceClaims`, as `lint` found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundPodClaim<'a> {
    /// `name`.
    pub name: &'a str,
    /// `resourceClaimTemplateName`, when the claim is made from a template.
    pub template: Option<&'a str>,
}

/// A manifest pod and the ComputeDomain channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ChannelConcern {
    /// No pod claim is made from the channel's template: the pod gets no IMEX channel, and NCCL fails with
    /// `Cuda failure 800` or falls back to the network across nodes.
    NoPodClaim {
        /// The channel template the pod should claim from.
        template: String,
    },
    /// The pod claims the channel but no container lists the claim in `resources.claims`, so no
    /// container sees `/dev/nvidia-caps-imex-channels`.
    NotInContainer {
        /// The pod claim's name.
        claim: String,
    },
}

/// Whether a manifest pod claims the profile's ComputeDomain channel: `pod` are its `resourceClaims`,
/// `containers` the claim names any container lists. The pod's claim may have any name.
pub fn channel_claim_concern(
    domain: &NvlinkDomain,
    pod: &[FoundPodClaim<'_>],
    containers: &[&str],
) -> Option<ChannelConcern> {
    let cd = domain.compute_domain()?;
    template_claim_concern(cd.channel_template().as_str(), pod, containers)
}

/// Whether a manifest pod claims the profile's DRA NICs (from their ResourceClaimTemplate), as
/// [`channel_claim_concern`] does for the channel: without the claim the pod gets no RDMA device at all, and
/// NCCL runs over TCP sockets.
pub fn nic_claim_concern(
    nics: &NicAttachment,
    pod: &[FoundPodClaim<'_>],
    containers: &[&str],
) -> Option<ChannelConcern> {
    template_claim_concern(nics.dra()?.template().as_str(), pod, containers)
}

/// A claim from `template` in the pod, listed by a container.
fn template_claim_concern(
    template: &str,
    pod: &[FoundPodClaim<'_>],
    containers: &[&str],
) -> Option<ChannelConcern> {
    let claims: Vec<&str> = pod
        .iter()
        .filter(|c| c.template == Some(template))
        .map(|c| c.name)
        .collect();
    if claims.is_empty() {
        return Some(ChannelConcern::NoPodClaim {
            template: template.to_owned(),
        });
    }
    if claims.iter().any(|c| containers.contains(c)) {
        return None;
    }
    Some(ChannelConcern::NotInContainer {
        claim: claims[0].to_owned(),
    })
}

/// A ComputeDomain job without placement in one NVLink domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AffinityConcern {
    /// Nothing keeps the pods on one [`CLIQUE_LABEL`] value: pods on another rack reach each other over
    /// the network only. A warning: a job meant to span racks (the vendor's multi-rack variant) drops the
    /// affinity on purpose.
    NoCliqueAffinity,
}

/// Whether a ComputeDomain job is kept in one NVLink domain. `together_on` are the node labels the pods
/// must share: required pod-affinity topology keys and a required Kueue topology level
/// ([`super::Placement::together_on`] for a profile; `lint` collects them from a manifest).
pub fn clique_affinity_concern(
    domain: &NvlinkDomain,
    together_on: &[&str],
) -> Option<AffinityConcern> {
    domain.compute_domain()?;
    (!together_on.contains(&CLIQUE_LABEL)).then_some(AffinityConcern::NoCliqueAffinity)
}

/// GPUs claimed twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GpuConcern {
    /// The NIC claim also claims the GPUs, and the pod requests the GPU extended resource as well: the
    /// device plugin and the DRA driver allocate GPUs without knowing of each other, so the pod asks for
    /// twice the GPUs it uses, and a node running both can hand one GPU out twice.
    ClaimedTwice,
}

/// Whether a pod that requests the GPU extended resource (`requests_gpu_resource`: in the profile's plan,
/// or `nvidia.com/gpu` found in a manifest's container resources) also claims GPUs through DRA.
pub fn gpu_concern(nics: &NicAttachment, requests_gpu_resource: bool) -> Option<GpuConcern> {
    let claims = nics.dra().is_some_and(DraNics::claims_gpus);
    (claims && requests_gpu_resource).then_some(GpuConcern::ClaimedTwice)
}

/// Two pod claims with one name: the pod spec is refused (`resourceClaims` names are unique).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ClaimNameConcern {
    /// The NIC claim and the channel claim share a name.
    Clash {
        /// The name both use.
        name: String,
    },
}

/// Whether the NIC and channel claims can both be in one pod.
pub fn claim_name_concern(nics: &NicAttachment, domain: &NvlinkDomain) -> Option<ClaimNameConcern> {
    let (nics, cd) = (nics.dra()?, domain.compute_domain()?);
    (nics.claim() == cd.claim()).then(|| ClaimNameConcern::Clash {
        name: cd.claim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::str::FromStr;

    use super::super::{
        AlignBy, ClaimedGpus, CliqueAffinity, DeviceClassName, DnsLabel, K8sName, LabelKey,
        LabelValue, Placement,
    };
    use super::*;

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    fn cd(num_nodes: u32) -> ComputeDomain {
        ComputeDomain::new(K8sName::from_str("cd").unwrap(), num_nodes, None).unwrap()
    }

    fn nics(count: u32) -> DraNics {
        DraNics::new(
            DeviceClassName::from_str("dranet.net").unwrap(),
            n(count),
            K8sName::from_str("nics").unwrap(),
        )
    }

    fn aligned(count: u32, gpus: u32) -> DraNics {
        nics(count).with_gpus(
            ClaimedGpus::new(
                DeviceClassName::from_str("gpu.nvidia.com").unwrap(),
                n(gpus),
            )
            .aligned(AlignBy::PcieRoot),
        )
    }

    #[test]
    fn num_nodes_zero_or_equal_is_fine() {
        assert_eq!(num_nodes_concern(&cd(0), 18), None);
        assert_eq!(num_nodes_concern(&cd(18), 18), None);
    }

    #[test]
    fn num_nodes_above_or_below_the_job_fires() {
        assert_eq!(
            num_nodes_concern(&cd(18), 16),
            Some(NumNodesConcern::MoreThanJob {
                num_nodes: 18,
                job_nodes: 16
            })
        );
        assert_eq!(
            num_nodes_concern(&cd(9), 18),
            Some(NumNodesConcern::FewerThanJob {
                num_nodes: 9,
                job_nodes: 18
            })
        );
    }

    #[test]
    fn nic_count_equal_to_rails_and_even_alignment_is_fine() {
        assert!(nic_count_concerns(&nics(8), 8).is_empty());
        assert!(nic_count_concerns(&aligned(8, 4), 8).is_empty());
        // Two GPUs share one NIC each way round: even.
        assert!(nic_count_concerns(&aligned(2, 4), 2).is_empty());
    }

    #[test]
    fn nic_count_against_rails_and_gpus_fires() {
        assert_eq!(
            nic_count_concerns(&nics(4), 16),
            [NicCountConcern::RailMismatch {
                claimed: 4,
                rails: 16
            }]
        );
        assert_eq!(
            nic_count_concerns(&aligned(6, 4), 6),
            [NicCountConcern::UnevenAlignment { nics: 6, gpus: 4 }]
        );
        // Unaligned GPUs have no per-GPU share to be uneven.
        let unaligned = nics(6).with_gpus(ClaimedGpus::new(
            DeviceClassName::from_str("gpu.nvidia.com").unwrap(),
            n(4),
        ));
        assert!(nic_count_concerns(&unaligned, 6).is_empty());
    }

    fn domain() -> NvlinkDomain {
        NvlinkDomain::ComputeDomain(cd(0))
    }

    const CHANNEL: &str = "cd-cd-channel";

    #[test]
    fn a_pod_claiming_the_channel_in_a_container_is_fine_whatever_the_claim_name() {
        let pod = [FoundPodClaim {
            name: "imex",
            template: Some(CHANNEL),
        }];
        assert_eq!(channel_claim_concern(&domain(), &pod, &["imex"]), None);
        assert_eq!(
            channel_claim_concern(&NvlinkDomain::None, &[], &[]),
            None,
            "no domain, nothing to claim"
        );
    }

    #[test]
    fn a_missing_channel_claim_fires() {
        let other = [FoundPodClaim {
            name: "nics",
            template: Some("nics"),
        }];
        let want = Some(ChannelConcern::NoPodClaim {
            template: CHANNEL.to_owned(),
        });
        assert_eq!(channel_claim_concern(&domain(), &[], &[]), want);
        assert_eq!(channel_claim_concern(&domain(), &other, &["nics"]), want);
        // A pre-made claim by the same name is not a claim on this domain's template.
        let by_name = [FoundPodClaim {
            name: "compute-domain-channel",
            template: None,
        }];
        assert_eq!(
            channel_claim_concern(&domain(), &by_name, &["compute-domain-channel"]),
            want
        );
    }

    #[test]
    fn a_channel_claim_no_container_uses_fires() {
        let pod = [FoundPodClaim {
            name: "compute-domain-channel",
            template: Some(CHANNEL),
        }];
        assert_eq!(
            channel_claim_concern(&domain(), &pod, &["other"]),
            Some(ChannelConcern::NotInContainer {
                claim: "compute-domain-channel".to_owned()
            })
        );
    }

    #[test]
    fn clique_affinity_from_the_profile_or_kueue_is_fine() {
        let p = Placement {
            clique_affinity: Some(CliqueAffinity {
                key: LabelKey::from_str("app").unwrap(),
                value: LabelValue::from_str("job").unwrap(),
            }),
            kueue: None,
        };
        assert_eq!(clique_affinity_concern(&domain(), &p.together_on()), None);
        assert_eq!(clique_affinity_concern(&domain(), &[CLIQUE_LABEL]), None);
        assert_eq!(clique_affinity_concern(&NvlinkDomain::None, &[]), None);
    }

    #[test]
    fn no_clique_affinity_on_a_compute_domain_job_fires() {
        assert_eq!(
            clique_affinity_concern(&domain(), &["topology.kubernetes.io/zone"]),
            Some(AffinityConcern::NoCliqueAffinity)
        );
        assert_eq!(
            clique_affinity_concern(&domain(), &Placement::default().together_on()),
            Some(AffinityConcern::NoCliqueAffinity)
        );
    }

    #[test]
    fn gpus_through_dra_or_the_device_plugin_is_fine() {
        let claimed = NicAttachment::Dra(aligned(8, 4));
        assert_eq!(gpu_concern(&claimed, false), None);
        assert_eq!(gpu_concern(&NicAttachment::Dra(nics(8)), true), None);
        assert_eq!(gpu_concern(&NicAttachment::MultusAndResource, true), None);
    }

    #[test]
    fn gpus_through_both_fires() {
        let claimed = NicAttachment::Dra(aligned(8, 4));
        assert_eq!(gpu_concern(&claimed, true), Some(GpuConcern::ClaimedTwice));
    }

    #[test]
    fn claim_names_clash_only_when_equal() {
        let dra = NicAttachment::Dra(nics(8));
        assert_eq!(claim_name_concern(&dra, &domain()), None);
        let same = NicAttachment::Dra(
            nics(8).with_claim(DnsLabel::from_str(super::super::DEFAULT_CHANNEL_CLAIM).unwrap()),
        );
        assert_eq!(
            claim_name_concern(&same, &domain()),
            Some(ClaimNameConcern::Clash {
                name: "compute-domain-channel".to_owned()
            })
        );
        assert_eq!(
            claim_name_concern(&NicAttachment::ResourceOnly, &domain()),
            None
        );
    }
}
