//! The Kubernetes objects DRA NICs, an NVLink domain and placement add to a pod and its manifest
//! ([`wiring`], a plan's [`DraWiring`]), built from the fabric core's facts (`roce_model::fabric::dra`), and
//! the same as YAML pieces for the writer: pod `resourceClaims`, container `resources.claims`, affinity,
//! labels, annotations, and the objects beside the workload.

pub(crate) mod shapes;

pub use shapes::{
    Affinity, ComputeDomainObject, ContainerClaim, DraWiring, ExtraDocument, PodResourceClaim,
    ResourceClaimTemplate, wiring,
};

use crate::plan::Plan;
use crate::yaml::Yaml;

/// `spec.resourceClaims`, when the plan claims anything.
pub(crate) fn pod_claims(plan: &Plan) -> Option<Yaml> {
    let claims = &plan.dra.pod_claims;
    (!claims.is_empty()).then(|| Yaml::Seq(claims.iter().map(PodResourceClaim::to_yaml).collect()))
}

/// The objects to apply beside the workload (ComputeDomain, the NICs' ResourceClaimTemplate).
pub(crate) fn documents(plan: &Plan) -> Vec<Yaml> {
    plan.dra
        .documents
        .iter()
        .map(ExtraDocument::to_yaml)
        .collect()
}
