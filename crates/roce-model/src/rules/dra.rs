//! DRA rules: the ComputeDomain against the job, DRA NIC claims against the rails, NVLink-domain placement.
//! The judgements are the fabric core's ([`crate::fabric::dra::rules`]); this maps them to codes and places.

use crate::fabric::dra::kueue::{self, KueueConcern};
use crate::fabric::dra::rules::{
    AffinityConcern, ClaimNameConcern, NicCountConcern, NumNodesConcern, claim_name_concern,
    clique_affinity_concern, nic_count_concerns, num_nodes_concern,
};
use crate::model::{Profile, Rail};
use crate::problem::{Code, Problem, Severity};

/// Check the `nics`, `nvlink-domain` and `placement` blocks.
pub(crate) fn check(p: &Profile, rails: &[Rail], out: &mut Vec<Problem>) {
    let domain = &p.nvlink_domain;
    if let (Some(cd), Some(job)) = (domain.value.compute_domain(), &p.job.nodes) {
        match num_nodes_concern(cd, job.value) {
            Some(NumNodesConcern::MoreThanJob { num_nodes, job_nodes }) => out.push(
                Problem::new(
                    Code::DraNumNodes,
                    format!("the ComputeDomain waits for {num_nodes} nodes but the job has {job_nodes}: its IMEX channel never becomes ready and the pods stay Pending"),
                )
                .at(domain.origin, "numNodes")
                .at(job.origin, "job nodes")
                .help("set `nodes=0` (the CRD's recommendation: IMEX daemons join by DNS name) or the job's node count"),
            ),
            Some(NumNodesConcern::FewerThanJob { num_nodes, job_nodes }) => {
                let mut problem = Problem::new(
                    Code::DraNumNodes,
                    format!("the ComputeDomain is sized for {num_nodes} nodes but the job has {job_nodes}: workers past the first {num_nodes} start without the domain's guarantee"),
                )
                .at(domain.origin, "numNodes")
                .at(job.origin, "job nodes")
                .help("set `nodes=0` or the job's node count");
                problem.severity = Severity::Warning;
                out.push(problem);
            }
            None => {}
        }
    }
    if let Some(nics) = p.nics.value.dra() {
        for concern in nic_count_concerns(nics, rails.len() as u32) {
            let (message, severity) = match concern {
                NicCountConcern::RailMismatch { claimed, rails } => (
                    format!(
                        "the DRA NIC claim asks for {claimed} devices but the profile has {rails} rails: NCCL_IB_HCA, UCX_NET_DEVICES and the rail rules describe devices the pod does not get"
                    ),
                    Severity::Error,
                ),
                NicCountConcern::UnevenAlignment { nics, gpus } => (
                    format!(
                        "{nics} NICs cannot be spread evenly over {gpus} aligned GPUs: some GPUs get no NIC on their PCIe root or NUMA node"
                    ),
                    Severity::Warning,
                ),
            };
            let mut problem = Problem::new(Code::DraNicCount, message)
                .at(p.nics.origin, "DRA NICs")
                .at(p.rails.nics.origin, "rails")
                .help("claim one device per rail (`count` = nics × ports), or fix `rails`");
            problem.severity = severity;
            out.push(problem);
        }
    }
    if let Some(AffinityConcern::NoCliqueAffinity) =
        clique_affinity_concern(&domain.value, &p.placement.value.together_on())
    {
        out.push(
            Problem::new(
                Code::DraCliqueAffinity,
                "the job claims an NVLink domain but nothing keeps its workers in one NVLink clique: a worker in another rack gets no multi-node NVLink and NCCL falls back to the network",
            )
            .at(domain.origin, "ComputeDomain")
            .help("add `placement { clique-affinity label=\"…\" value=\"…\" }` (required pod affinity on nvidia.com/gpu.clique), or a required Kueue topology on nvidia.com/gpu.clique; leave it out only for a job meant to span racks"),
        );
    }
    if let Some(ClaimNameConcern::Clash { name }) = claim_name_concern(&p.nics.value, &domain.value)
    {
        out.push(
            Problem::new(
                Code::DraClaimName,
                format!("the NIC claim and the ComputeDomain channel claim are both named `{name}`: a pod's claims need distinct names"),
            )
            .at(p.nics.origin, "NIC claim")
            .at(domain.origin, "channel claim")
            .help("give one of them another `claim=` name"),
        );
    }
    kueue_limits(p, out);
}

/// A profile placed by Kueue TAS whose claims Kueue does not weigh (`fabric::dra::kueue`). The profile says
/// Kueue only through `kueue-topology`, so the claims are judged only then.
fn kueue_limits(p: &Profile, out: &mut Vec<Problem>) {
    let Some(topology) = &p.placement.value.kueue else {
        return;
    };
    let claims = kueue::planned_claims(&p.nics.value, &p.nvlink_domain.value);
    for concern in kueue::concerns(&claims, Some(topology.mode.annotation())) {
        let problem = match concern {
            KueueConcern::Constraints { template } => Problem::new(
                Code::DraKueueConstraints,
                format!("the NIC claim `{template}` keeps each GPU with its NICs through `matchAttribute` constraints, which Kueue {} does not weigh: it admits the job on device counts, and only the kube-scheduler applies the constraint, so an admitted job whose alignment no node can meet stays Pending while holding its quota", kueue::KUEUE_RELEASE),
            )
            .at(p.nics.origin, "aligned DRA NICs")
            .at(p.placement.origin, "Kueue topology")
            .help(format!("expect admission to mean quota only; Kueue's WaitForPodsReady evicts a job whose pods never start. {}", kueue::MAPPING_HELP)),
            KueueConcern::Topology { annotation } => Problem::new(
                Code::DraKueueTopology,
                format!("Kueue {} does not count DRA devices in Topology Aware Scheduling (`{annotation}`): it picks the topology domain by the pods' other resources and may assign nodes whose claimed devices are taken or absent", kueue::KUEUE_RELEASE),
            )
            .at(p.placement.origin, "Kueue topology")
            .at(if p.nics.value.dra().is_some() { p.nics.origin } else { p.nvlink_domain.origin }, "DRA claims")
            .help(format!("keep the pods together with `clique-affinity` (the kube-scheduler weighs DRA devices) instead of `kueue-topology`, or accept that TAS may place pods that then wait for devices. {}", kueue::MAPPING_HELP)),
            // A profile's claims are templates roce or the DRA driver writes, never claims by name or refused
            // requests.
            KueueConcern::PlainClaim { .. } | KueueConcern::Refused { .. } => continue,
        };
        out.push(problem);
    }
}
