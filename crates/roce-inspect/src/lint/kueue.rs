//! A pod set queued to Kueue (the `kueue.x-k8s.io/queue-name` label) with DRA claims Kueue refuses or does
//! not weigh. The judgement is the fabric core's ([`roce_model::fabric::dra::kueue`], cited there); this finds
//! the claims, their templates and the TAS annotation in the manifest and points at them.

use roce_model::fabric::dra::kueue::{
    self, ClaimShape, KUEUE_RELEASE, KueueConcern, QUEUE_LABEL, QueuedClaim, TAS_ANNOTATIONS,
};
use roce_model::plumbing::tree::{Node, Value};
use roce_model::source::Origin;
use roce_model::{Code, Problem};
use roce_render::plumbing::templates::Template;
use roce_render::plumbing::view::{PodView, entry, text};
use roce_render::plumbing::wiring::Input;

/// The queue the workload is submitted to: the label on the object (Job, JobSet, MPIJob, …) or on the pod
/// template (plain Pods, whose template is the object).
fn queue<'a>(doc: &'a Node, v: &PodView<'a>) -> Option<&'a str> {
    let labels = |m: Option<&'a Node>| {
        m.and_then(|m| entry(m, "labels"))
            .and_then(|l| text(&l.node, QUEUE_LABEL))
    };
    labels(entry(doc, "metadata").map(|e| &e.node)).or_else(|| labels(v.metadata))
}

/// Check one pod template of `doc`.
pub(super) fn check(
    doc: &Node,
    t: &Template,
    v: &PodView<'_>,
    input: &Input<'_>,
    problems: &mut Vec<Problem>,
) {
    let Some(queue) = queue(doc, v) else {
        return;
    };
    let Some(Value::Seq(items)) = v
        .spec
        .and_then(|s| entry(s, "resourceClaims"))
        .map(|e| &e.node.value)
    else {
        return;
    };
    let mut claims: Vec<(QueuedClaim<'_>, Origin)> = Vec::new();
    for item in items {
        let at = entry(item, "name").map_or(item.origin, |e| e.node.origin);
        if let Some(name) = text(item, "resourceClaimName") {
            claims.push((QueuedClaim::Plain { name }, at));
        } else if let Some(template) = text(item, "resourceClaimTemplateName") {
            let found = input.claim_templates.iter().find(|c| c.name == template);
            // the channel template the DRA driver writes asks for nothing Kueue refuses
            let shape = match found {
                Some(c) => Some(c.shape.clone()),
                None if input.is_channel_template(template) => Some(ClaimShape::default()),
                None => None,
            };
            let at = found.map_or(at, |c| c.at);
            claims.push((QueuedClaim::Template { template, shape }, at));
        }
    }
    let topology = v.annotations.and_then(|a| {
        TAS_ANNOTATIONS
            .iter()
            .find_map(|k| entry(a, k).map(|e| (*k, e.node.origin)))
    });
    let only: Vec<QueuedClaim<'_>> = claims.iter().map(|(c, _)| c.clone()).collect();
    let place = |name: &str| {
        claims
            .iter()
            .find(|(c, _)| match c {
                QueuedClaim::Plain { name: n } | QueuedClaim::Template { template: n, .. } => {
                    *n == name
                }
            })
            .map_or(v.root.map_or(doc.origin, |r| r.origin), |(_, at)| *at)
    };
    for concern in kueue::concerns(&only, topology.map(|(k, _)| k)) {
        let p = match &concern {
            KueueConcern::PlainClaim { claim } => Problem::new(
                Code::LintKueueDraClaim,
                format!("the {} is queued to Kueue (`{queue}`) and claims the ResourceClaim `{claim}` by name: Kueue {KUEUE_RELEASE} takes only ResourceClaimTemplates and leaves the workload inadmissible (\"DRA resource claims not supported\"), so it never starts", t.label),
            )
            .at(place(claim), "resourceClaimName")
            .help(format!("claim from a ResourceClaimTemplate (`resourceClaimTemplateName`) instead. {}", kueue::MAPPING_HELP)),
            KueueConcern::Refused { template, field } => Problem::new(
                Code::LintKueueDraRequest,
                format!("the {} is queued to Kueue (`{queue}`) and its claim template `{template}` asks for `{}`, which Kueue {KUEUE_RELEASE} refuses: the workload stays inadmissible and never starts", t.label, field.field()),
            )
            .at(place(template), "claim template")
            .help(format!("ask with `exactly` and `allocationMode: ExactCount` (a `count`), without `adminAccess`, for a workload Kueue admits. {}", kueue::MAPPING_HELP)),
            KueueConcern::Constraints { template } => Problem::new(
                Code::LintKueueDraConstraints,
                format!("the {} is queued to Kueue (`{queue}`) and its claim template `{template}` has `constraints`, which Kueue {KUEUE_RELEASE} does not weigh: it admits on device counts alone and only the kube-scheduler applies the constraint, so an admitted workload that no node can satisfy stays Pending while holding its quota", t.label),
            )
            .at(place(template), "constraints")
            .help(format!("expect admission to mean quota only (Kueue's WaitForPodsReady evicts a workload whose pods never start). {}", kueue::MAPPING_HELP)),
            KueueConcern::Topology { annotation } => Problem::new(
                Code::LintKueueDraTopology,
                format!("the {} asks Kueue for Topology Aware Scheduling (`{annotation}`) and claims DRA devices: Kueue {KUEUE_RELEASE} does not count DRA devices in TAS capacity and may assign nodes whose devices are taken or absent", t.label),
            )
            .at(topology.map_or(doc.origin, |(_, at)| at), "TAS annotation")
            .help(format!("keep the pods together with required pod affinity (the kube-scheduler weighs DRA devices), or accept that TAS may place pods that then wait for devices. {}", kueue::MAPPING_HELP)),
        };
        problems.push(p);
    }
}
