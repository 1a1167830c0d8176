//! What Kueue's DRA integration does not take yet: the shapes of DRA claims a workload queued to Kueue
//! (the [`QUEUE_LABEL`] label) is refused for, or admitted on without Kueue weighing them.
//!
//! Kueue counts DRA devices against `ClusterQueue` quota (feature gate `KueueDRAIntegration`, beta and on by
//! default since v0.18: `pkg/features/kube_features.go:745`); with the gate off, `KueueDRARejectWorkloadsWhenDRADisabled`
//! (also on since v0.18, line 753) rejects every workload with DRA claims. Facts of kubernetes-sigs/kueue
//! **v0.19.2** (8eab6877), unchanged on main at ff69552 (2026-08-22); the page is
//! `site/content/en/docs/concepts/dynamic_resource_allocation.md`, "Limitations" (line 254 at the tag; main
//! keeps the same list there and in `site/content/en/v0.19/…`):
//! - A pod claim by name (`resourceClaimName`): "Direct `ResourceClaim` references in the Pod spec are not
//!   supported and will result in inadmissible workloads"; `pkg/controller/core/workload_controller.go:454`
//!   (`workload.HasResourceClaim`) sets the workload inadmissible, "DRA resource claims not supported".
//! - `firstAvailable`, `allocationMode: All` and `adminAccess: true` in a template's request: `pkg/dra/claims.go`
//!   `countDevicesPerClass` returns a field error for each (lines 73, 93, 90), and the workload stays
//!   inadmissible.
//! - `constraints` (`matchAttribute`): "not supported"; the code passes them through (`pkg/dra/claims_test.go:494`,
//!   "Device constraints are pass-through and counted correctly"): quota is charged on the requests' counts
//!   and only the kube-scheduler applies the constraint, after admission. Per-request `config` passes through
//!   the same way (line 655), but it does not decide which devices fit, so it is no concern here.
//! - Topology Aware Scheduling (the `kueue.x-k8s.io/podset-*-topology` annotations, `apis/kueue/v1beta2/
//!   topology_types.go`): "DRA resources are not accounted for in TAS capacity calculations. Using both
//!   features together may result in incorrect topology assignments for DRA devices."
//!
//! Every DeviceClass a template asks for must also be mapped in Kueue's `deviceClassMappings`, or the
//! workload is inadmissible (`claims.go:217`, "DeviceClass %s is not mapped in DRA configuration"); the
//! ComputeDomain channel's class too (kueue issue #10504). That mapping is the cluster's Kueue
//! Configuration, which a manifest or profile does not show, so it is advice ([`MAPPING_HELP`]), not a concern.

use serde::Serialize;

use super::{ComputeDomain, DraNics, NicAttachment, NvlinkDomain};

/// The Kueue release these facts were read from.
pub const KUEUE_RELEASE: &str = "v0.19.2";
/// The label that queues a workload to a LocalQueue (`pkg/controller/constants/constants.go:23`).
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// The pod-set annotations that ask for Topology Aware Scheduling (`apis/kueue/v1beta2/topology_types.go`:
/// required, preferred, unconstrained, and the slice form).
pub const TAS_ANNOTATIONS: &[&str] = &[
    super::KUEUE_REQUIRED_TOPOLOGY,
    super::KUEUE_PREFERRED_TOPOLOGY,
    "kueue.x-k8s.io/podset-unconstrained-topology",
    "kueue.x-k8s.io/podset-slice-required-topology",
];
/// What every concern's help adds: the mapping Kueue needs for each DeviceClass.
pub const MAPPING_HELP: &str = "Kueue also admits a DRA workload only when every DeviceClass of its claims is mapped in the Kueue Configuration's `resources.deviceClassMappings` (the ComputeDomain channel's `compute-domain-default-channel.nvidia.com` too) and the ClusterQueue covers the mapped resource";

/// A request field Kueue refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refused {
    /// `firstAvailable` (prioritized list) instead of `exactly`.
    FirstAvailable,
    /// `exactly.allocationMode: All`.
    AllocationModeAll,
    /// `exactly.adminAccess: true`.
    AdminAccess,
}

impl Refused {
    /// The field as a manifest spells it.
    pub fn field(self) -> &'static str {
        match self {
            Refused::FirstAvailable => "firstAvailable",
            Refused::AllocationModeAll => "allocationMode: All",
            Refused::AdminAccess => "adminAccess: true",
        }
    }
}

/// The parts of a ResourceClaimTemplate's `spec.spec.devices` Kueue judges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimShape {
    /// Request fields Kueue refuses, in the order found.
    pub refused: Vec<Refused>,
    /// Does it have `constraints`?
    pub constraints: bool,
}

/// A pod claim of a workload queued to Kueue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueuedClaim<'a> {
    /// `resourceClaimName`: a claim made beforehand.
    Plain {
        /// The pod's claim name.
        name: &'a str,
    },
    /// `resourceClaimTemplateName`, with the template's shape when it is known.
    Template {
        /// The template's name.
        template: &'a str,
        /// Its shape; `None` when the template is not at hand.
        shape: Option<ClaimShape>,
    },
}

/// Where a DRA claim and Kueue do not go together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KueueConcern {
    /// A claim by name: Kueue leaves the workload inadmissible.
    PlainClaim {
        /// The pod's claim name.
        claim: String,
    },
    /// A request Kueue refuses: the workload stays inadmissible.
    Refused {
        /// The template.
        template: String,
        /// What it asks for.
        field: Refused,
    },
    /// `constraints`: Kueue admits on device counts alone, and only the kube-scheduler applies the
    /// constraint; if no node can meet it the admitted pods stay Pending while holding the quota.
    Constraints {
        /// The template.
        template: String,
    },
    /// Topology Aware Scheduling with DRA claims: TAS picks the domain without counting the DRA devices, so
    /// it can assign nodes whose devices are taken or absent.
    Topology {
        /// The TAS annotation.
        annotation: String,
    },
}

impl KueueConcern {
    /// Does Kueue refuse the workload outright (never admitted), rather than admit it unweighed?
    pub fn inadmissible(&self) -> bool {
        matches!(
            self,
            KueueConcern::PlainClaim { .. } | KueueConcern::Refused { .. }
        )
    }
}

/// What Kueue cannot do with these claims of one pod set, which carries the TAS annotation `topology` if any.
pub fn concerns(claims: &[QueuedClaim<'_>], topology: Option<&str>) -> Vec<KueueConcern> {
    let mut out = Vec::new();
    for c in claims {
        match c {
            QueuedClaim::Plain { name } => out.push(KueueConcern::PlainClaim {
                claim: (*name).to_owned(),
            }),
            QueuedClaim::Template { template, shape } => {
                let Some(shape) = shape else { continue };
                out.extend(shape.refused.iter().map(|f| KueueConcern::Refused {
                    template: (*template).to_owned(),
                    field: *f,
                }));
                if shape.constraints {
                    out.push(KueueConcern::Constraints {
                        template: (*template).to_owned(),
                    });
                }
            }
        }
    }
    if let Some(annotation) = topology
        && !claims.is_empty()
    {
        out.push(KueueConcern::Topology {
            annotation: annotation.to_owned(),
        });
    }
    out
}

/// The claims a profile's pod makes, with the shapes roce emits: the NICs' template
/// (roce-render's `dra::resource_claim_template`: `matchAttribute` constraints when GPUs are aligned) and the
/// ComputeDomain channel's, which the DRA driver writes (`templates/compute-domain-workload-claim-template.tmpl.yaml`
/// of NVIDIA/k8s-dra-driver-gpu at 2240711: one `exactly` request and an opaque `config`, nothing Kueue refuses).
pub fn planned_claims<'a>(
    nics: &'a NicAttachment,
    domain: &'a NvlinkDomain,
) -> Vec<QueuedClaim<'a>> {
    let mut out = Vec::new();
    if let Some(n) = nics.dra() {
        out.push(QueuedClaim::Template {
            template: n.template().as_str(),
            shape: Some(nic_shape(n)),
        });
    }
    if let Some(cd) = domain.compute_domain() {
        out.push(channel_claim(cd));
    }
    out
}

fn nic_shape(n: &DraNics) -> ClaimShape {
    ClaimShape {
        refused: Vec::new(),
        constraints: n.gpus().is_some_and(|g| g.align().is_some()),
    }
}

fn channel_claim(cd: &ComputeDomain) -> QueuedClaim<'_> {
    QueuedClaim::Template {
        template: cd.channel_template().as_str(),
        shape: Some(ClaimShape::default()),
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::str::FromStr;

    use super::super::{AlignBy, ClaimedGpus, DeviceClassName, K8sName};
    use super::*;

    fn shape(refused: &[Refused], constraints: bool) -> Option<ClaimShape> {
        Some(ClaimShape {
            refused: refused.to_vec(),
            constraints,
        })
    }

    #[test]
    fn plain_exact_templates_without_topology_are_fine() {
        let claims = [
            QueuedClaim::Template {
                template: "nics",
                shape: shape(&[], false),
            },
            // a template not at hand is not judged
            QueuedClaim::Template {
                template: "elsewhere",
                shape: None,
            },
        ];
        assert!(concerns(&claims, None).is_empty());
        // a TAS pod set without DRA claims is Kueue's ordinary case
        assert!(concerns(&[], Some(super::super::KUEUE_REQUIRED_TOPOLOGY)).is_empty());
    }

    #[test]
    fn claims_by_name_refused_requests_constraints_and_topology_fire() {
        let claims = [
            QueuedClaim::Plain { name: "shared" },
            QueuedClaim::Template {
                template: "t",
                shape: shape(&[Refused::FirstAvailable, Refused::AdminAccess], true),
            },
        ];
        let got = concerns(&claims, Some("kueue.x-k8s.io/podset-preferred-topology"));
        assert_eq!(
            got,
            [
                KueueConcern::PlainClaim {
                    claim: "shared".into()
                },
                KueueConcern::Refused {
                    template: "t".into(),
                    field: Refused::FirstAvailable
                },
                KueueConcern::Refused {
                    template: "t".into(),
                    field: Refused::AdminAccess
                },
                KueueConcern::Constraints {
                    template: "t".into()
                },
                KueueConcern::Topology {
                    annotation: "kueue.x-k8s.io/podset-preferred-topology".into()
                },
            ]
        );
        let inadmissible: Vec<bool> = got.iter().map(KueueConcern::inadmissible).collect();
        assert_eq!(inadmissible, [true, true, true, false, false]);
    }

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn a_profile_claims_constraints_only_with_aligned_gpus() {
        let class = DeviceClassName::from_str("dranet").unwrap();
        let nics = DraNics::new(class, n(8), K8sName::from_str("nics").unwrap());
        let gpus = ClaimedGpus::new(DeviceClassName::from_str("gpu.nvidia.com").unwrap(), n(8));
        let unaligned = NicAttachment::Dra(nics.clone().with_gpus(gpus.clone()));
        let aligned = NicAttachment::Dra(nics.with_gpus(gpus.aligned(AlignBy::PcieRoot)));
        let none = NvlinkDomain::None;
        assert_eq!(
            planned_claims(&unaligned, &none),
            [QueuedClaim::Template {
                template: "nics",
                shape: shape(&[], false)
            }]
        );
        assert_eq!(
            concerns(&planned_claims(&aligned, &none), None),
            [KueueConcern::Constraints {
                template: "nics".into()
            }]
        );
        let cd = ComputeDomain::new(K8sName::from_str("cd").unwrap(), 0, None).unwrap();
        let domain = NvlinkDomain::ComputeDomain(cd);
        let channel = planned_claims(&NicAttachment::MultusAndResource, &domain);
        assert_eq!(
            channel,
            [QueuedClaim::Template {
                template: "cd-cd-channel",
                shape: shape(&[], false)
            }]
        );
        assert!(concerns(&channel, None).is_empty());
        assert!(planned_claims(&NicAttachment::ResourceOnly, &none).is_empty());
    }
}
