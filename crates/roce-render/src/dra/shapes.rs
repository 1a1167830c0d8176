//! What a pod needs for DRA NICs, an NVLink domain and placement, as Kubernetes objects: pod
//! `resourceClaims`, container `resources.claims`, the affinity, labels and annotations, and the objects the
//! claims refer to. They are built from the fabric core's facts (`roce_model::fabric::dra`: the profile's
//! choices, validated names, device classes, API versions and kinds), which know no Kubernetes object.
//!
//! Each type holds only its data and builds its object with Kubernetes' field names and order
//! (`to_yaml`), so a writer prints it as it is; none of them knows a target. The public ones serialize as
//! that tree (the JSON edge: roce-render's tests hand them to kubernetes-validate). The shapes follow the vendor's DRA MPIJob (coreweave/nccl-tests) and
//! dranet's ResourceClaimTemplates (see the fixtures' README).

use roce_model::fabric::dra::{
    CLIQUE_LABEL, COMPUTE_DOMAIN_API_VERSION, COMPUTE_DOMAIN_KIND, CelExpression,
    ChannelAllocation, CliqueAffinity, ComputeDomain, DeviceClassName, DnsLabel, DraNics, DraSpec,
    K8sName, NvlinkDomain, Placement, RESOURCE_API_MIN_MINOR, RESOURCE_API_VERSION,
    RESOURCE_CLAIM_TEMPLATE_KIND,
};
use serde::Serialize;

use crate::yaml::Yaml;

/// Everything DRA, the NVLink domain and placement add to a pod and its manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DraWiring {
    /// `spec.resourceClaims` entries.
    pub pod_claims: Vec<PodResourceClaim>,
    /// `resources.claims` entries of each container that uses the GPUs and NICs.
    pub container_claims: Vec<ContainerClaim>,
    /// `spec.affinity`, to merge with any affinity the pod has.
    pub affinity: Option<Affinity>,
    /// Pod labels the affinity selects on.
    pub labels: Vec<(String, String)>,
    /// Pod-template annotations (Kueue TAS).
    pub annotations: Vec<(&'static str, String)>,
    /// Objects to apply beside the workload, in apply order.
    pub documents: Vec<ExtraDocument>,
}

impl DraWiring {
    /// The least Kubernetes minor (1.x) that can take this wiring: [`RESOURCE_API_MIN_MINOR`] when a pod claims
    /// anything (claims and ResourceClaimTemplates are `resource.k8s.io/v1`), else `None`: affinity, labels
    /// and annotations work on any release.
    pub fn min_kubernetes_minor(&self) -> Option<u32> {
        (!self.pod_claims.is_empty()).then_some(RESOURCE_API_MIN_MINOR)
    }
}

/// What a profile's DRA choices add to a pod and its manifest. Multus and device-plugin attachments add
/// nothing here: their wiring is [`Profile::pod_wiring`](roce_model::Profile::pod_wiring)'s.
///
/// ```
/// use roce_model::fabric::dra::{self, ComputeDomain, DraSpec, NicAttachment, NvlinkDomain, Placement};
///
/// // The vendor's GB300 NVL72 job: Multus NICs, and a ComputeDomain whose channel each worker claims.
/// let cd = ComputeDomain::new("nccl-test-72-gb300-18n-dra".parse()?, 0, None)?;
/// let spec = DraSpec {
///     nics: NicAttachment::MultusAndResource,
///     nvlink_domain: NvlinkDomain::ComputeDomain(cd),
///     placement: Placement::default(),
/// };
/// let wiring = roce_render::dra::wiring(&spec);
/// assert_eq!(wiring.pod_claims[0].template().as_str(), "nccl-test-72-gb300-18n-dra-cd-channel");
/// assert_eq!(wiring.documents[0].kind(), dra::COMPUTE_DOMAIN_KIND);
/// # Ok::<(), dra::NameError>(())
/// ```
pub fn wiring(spec: &DraSpec) -> DraWiring {
    let (nics, domain, placement) = (spec.nics.dra(), &spec.nvlink_domain, &spec.placement);
    DraWiring {
        pod_claims: pod_resource_claims(nics, domain),
        container_claims: container_claims(nics, domain),
        affinity: affinity(placement),
        labels: pod_labels(placement),
        annotations: kueue_annotations(placement),
        documents: extra_documents(nics, domain),
    }
}

/// One entry of a pod's `spec.resourceClaims`: a claim made per pod from a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodResourceClaim {
    name: DnsLabel,
    resource_claim_template_name: K8sName,
}

impl PodResourceClaim {
    /// The claim's name in the pod (what containers list); `apply` merges entries by it.
    pub fn name(&self) -> &DnsLabel {
        &self.name
    }

    /// The template the claim is made from.
    pub fn template(&self) -> &K8sName {
        &self.resource_claim_template_name
    }

    pub(crate) fn to_yaml(&self) -> Yaml {
        Yaml::map().with("name", self.name.as_str()).with(
            "resourceClaimTemplateName",
            self.resource_claim_template_name.as_str(),
        )
    }
}

/// One entry of a container's `resources.claims`: the container gets the claim's devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerClaim {
    name: DnsLabel,
}

impl ContainerClaim {
    /// The pod claim it names.
    pub fn name(&self) -> &DnsLabel {
        &self.name
    }

    pub(crate) fn to_yaml(&self) -> Yaml {
        Yaml::map().with("name", self.name.as_str())
    }
}

/// The pod's claims: the NICs' (when DRA), then the ComputeDomain channel's.
fn pod_resource_claims(nics: Option<&DraNics>, domain: &NvlinkDomain) -> Vec<PodResourceClaim> {
    let nic = nics.map(|n| PodResourceClaim {
        name: n.claim().clone(),
        resource_claim_template_name: n.template().clone(),
    });
    let channel = domain.compute_domain().map(|cd| PodResourceClaim {
        name: cd.claim().clone(),
        resource_claim_template_name: cd.channel_template().clone(),
    });
    nic.into_iter().chain(channel).collect()
}

/// The container's claims, in the order of [`pod_resource_claims`].
fn container_claims(nics: Option<&DraNics>, domain: &NvlinkDomain) -> Vec<ContainerClaim> {
    pod_resource_claims(nics, domain)
        .into_iter()
        .map(|c| ContainerClaim { name: c.name })
        .collect()
}

/// `spec.affinity` with only the part placement sets: one required pod-affinity term on [`CLIQUE_LABEL`]
/// selecting the job's pods by their label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affinity(CliqueAffinity);

impl Affinity {
    /// The topology key of the term, what an existing affinity is compared by.
    pub(crate) fn topology_key(&self) -> &'static str {
        CLIQUE_LABEL
    }

    /// The entry of `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub(crate) fn term(&self) -> Yaml {
        let requirement = Yaml::map()
            .with("key", self.0.key.as_str())
            .with("operator", "In")
            .with("values", Yaml::seq().item(self.0.value.as_str()));
        Yaml::map().with("topologyKey", self.topology_key()).with(
            "labelSelector",
            Yaml::map().with("matchExpressions", Yaml::seq().item(requirement)),
        )
    }

    pub(crate) fn to_yaml(&self) -> Yaml {
        Yaml::map().with(
            "podAffinity",
            Yaml::map().with(
                "requiredDuringSchedulingIgnoredDuringExecution",
                Yaml::seq().item(self.term()),
            ),
        )
    }
}

/// Required pod affinity on [`CLIQUE_LABEL`] among the job's pods, as the vendor's job writes it: every
/// worker lands in the NVLink domain of the first one scheduled.
fn affinity(placement: &Placement) -> Option<Affinity> {
    placement.clique_affinity.clone().map(Affinity)
}

/// The label the clique affinity selects on; the pods must carry it or the affinity matches nothing.
fn pod_labels(placement: &Placement) -> Vec<(String, String)> {
    placement
        .clique_affinity
        .iter()
        .map(|a| (a.key.to_string(), a.value.to_string()))
        .collect()
}

/// The Kueue TAS annotation: key by mode, value the topology level's node label.
fn kueue_annotations(placement: &Placement) -> Vec<(&'static str, String)> {
    placement
        .kueue
        .iter()
        .map(|k| (k.mode.annotation(), k.level.to_string()))
        .collect()
}

/// An object applied beside the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtraDocument {
    /// The DRA NICs' claim template.
    ResourceClaimTemplate(ResourceClaimTemplate),
    /// The NVLink domain.
    ComputeDomain(ComputeDomainObject),
}

impl ExtraDocument {
    /// `kind` of the object.
    pub fn kind(&self) -> &'static str {
        match self {
            ExtraDocument::ResourceClaimTemplate(_) => RESOURCE_CLAIM_TEMPLATE_KIND,
            ExtraDocument::ComputeDomain(_) => COMPUTE_DOMAIN_KIND,
        }
    }

    /// `metadata.name` of the object.
    pub fn name(&self) -> &K8sName {
        match self {
            ExtraDocument::ResourceClaimTemplate(t) => &t.name,
            ExtraDocument::ComputeDomain(c) => c.0.name(),
        }
    }

    pub(crate) fn to_yaml(&self) -> Yaml {
        match self {
            ExtraDocument::ResourceClaimTemplate(t) => t.to_yaml(),
            ExtraDocument::ComputeDomain(c) => c.to_yaml(),
        }
    }
}

/// The objects the claims refer to: the ComputeDomain first (the driver then creates its channel
/// template), then the NICs' ResourceClaimTemplate. The channel's template is the driver's, never roce's.
fn extra_documents(nics: Option<&DraNics>, domain: &NvlinkDomain) -> Vec<ExtraDocument> {
    let cd = domain
        .compute_domain()
        .map(|cd| ExtraDocument::ComputeDomain(compute_domain(cd)));
    let rct = nics.map(|n| ExtraDocument::ResourceClaimTemplate(resource_claim_template(n)));
    cd.into_iter().chain(rct).collect()
}

/// The head of an emitted object. `metadata` holds only the name, so the namespace is the one it is applied
/// in (the pods' namespace, which a claim template must share).
fn object(api_version: &'static str, kind: &'static str, name: &K8sName, spec: Yaml) -> Yaml {
    Yaml::map()
        .with("apiVersion", api_version)
        .with("kind", kind)
        .with("metadata", Yaml::map().with("name", name.as_str()))
        .with("spec", spec)
}

/// A `resource.k8s.io/v1` ResourceClaimTemplate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceClaimTemplate {
    name: K8sName,
    requests: Vec<DeviceRequest>,
    /// `matchAttribute` constraints, each binding one GPU request and one NIC request; left out when none.
    constraints: Vec<DeviceConstraint>,
}

/// One of the claim's `exactly` requests.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DeviceRequest {
    name: String,
    class: DeviceClassName,
    count: u32,
    /// CEL selectors; left out when none.
    selectors: Vec<CelExpression>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DeviceConstraint {
    requests: [String; 2],
    match_attribute: &'static str,
}

impl ResourceClaimTemplate {
    pub(crate) fn to_yaml(&self) -> Yaml {
        let mut devices = Yaml::map().with(
            "requests",
            Yaml::Seq(self.requests.iter().map(DeviceRequest::to_yaml).collect()),
        );
        if !self.constraints.is_empty() {
            let constraints = self.constraints.iter().map(|c| {
                Yaml::map()
                    .with(
                        "requests",
                        Yaml::Seq(c.requests.iter().map(Yaml::from).collect()),
                    )
                    .with("matchAttribute", c.match_attribute)
            });
            devices.insert("constraints", Yaml::Seq(constraints.collect()));
        }
        let spec = Yaml::map().with("spec", Yaml::map().with("devices", devices));
        object(
            RESOURCE_API_VERSION,
            RESOURCE_CLAIM_TEMPLATE_KIND,
            &self.name,
            spec,
        )
    }
}

impl DeviceRequest {
    fn to_yaml(&self) -> Yaml {
        let mut exactly = Yaml::map()
            .with("deviceClassName", self.class.as_str())
            .with("count", i64::from(self.count));
        if !self.selectors.is_empty() {
            let selectors = self.selectors.iter().map(|e| {
                // A selector of several lines is a block scalar, as the vendor's manifests write it.
                let expression = if e.contains('\n') {
                    Yaml::Block(e.to_string())
                } else {
                    Yaml::from(e.as_str())
                };
                Yaml::map().with("cel", Yaml::map().with("expression", expression))
            });
            exactly.insert("selectors", Yaml::Seq(selectors.collect()));
        }
        Yaml::map()
            .with("name", self.name.as_str())
            .with("exactly", exactly)
    }
}

/// The NICs' claim template. NICs only: one request `nic`. With unaligned GPUs: `gpu` and `nic`. Aligned:
/// the GPUs and NICs split into `min(gpus, nics)` groups `gpu-i` + `nic-i`, each bound by one
/// `matchAttribute` constraint — a constraint makes all its devices share one value, so a single group would
/// need every GPU on one PCIe root. Counts that do not divide are spread over the first groups
/// (`roce_model::fabric::dra::rules::nic_count_concerns` reports them).
pub fn resource_claim_template(nics: &DraNics) -> ResourceClaimTemplate {
    let request =
        |name: String, class: &DeviceClassName, count: u32, selectors: &[_]| DeviceRequest {
            name,
            class: class.clone(),
            count,
            selectors: selectors.to_vec(),
        };
    let nic = |name: String, count: u32| request(name, nics.class(), count, nics.selectors());
    let mut requests = Vec::new();
    let mut constraints = Vec::new();
    match nics.gpus() {
        None => requests.push(nic("nic".into(), nics.count())),
        Some(gpus) => match gpus.align() {
            None => {
                requests.push(request("gpu".into(), gpus.class(), gpus.count(), &[]));
                requests.push(nic("nic".into(), nics.count()));
            }
            Some(by) => {
                let groups = gpus.count().min(nics.count());
                for i in 0..groups {
                    let (gpu_name, nic_name) = (format!("gpu-{i}"), format!("nic-{i}"));
                    let gpu_count = share(gpus.count(), groups, i);
                    requests.push(request(gpu_name.clone(), gpus.class(), gpu_count, &[]));
                    requests.push(nic(nic_name.clone(), share(nics.count(), groups, i)));
                    constraints.push(DeviceConstraint {
                        requests: [gpu_name, nic_name],
                        match_attribute: by.attribute(),
                    });
                }
            }
        },
    }
    ResourceClaimTemplate {
        name: nics.template().clone(),
        requests,
        constraints,
    }
}

/// Group `i`'s share of `total` split over `groups` (≥ 1 each while `groups ≤ total`).
fn share(total: u32, groups: u32, i: u32) -> u32 {
    total / groups + u32::from(i < total % groups)
}

/// A `resource.nvidia.com/v1beta1` ComputeDomain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeDomainObject(ComputeDomain);

impl ComputeDomainObject {
    pub(crate) fn to_yaml(&self) -> Yaml {
        let cd = &self.0;
        let mut channel = Yaml::map();
        match cd.allocation() {
            // The CRD's default: left out, as the vendor's job leaves it out.
            ChannelAllocation::Single => {}
            ChannelAllocation::All => channel.insert("allocationMode", "All"),
        }
        channel.insert(
            "resourceClaimTemplate",
            Yaml::map().with("name", cd.channel_template().as_str()),
        );
        let spec = Yaml::map()
            .with("numNodes", i64::from(cd.num_nodes()))
            .with("channel", channel);
        object(
            COMPUTE_DOMAIN_API_VERSION,
            COMPUTE_DOMAIN_KIND,
            cd.name(),
            spec,
        )
    }
}

/// The ComputeDomain object.
pub fn compute_domain(cd: &ComputeDomain) -> ComputeDomainObject {
    ComputeDomainObject(cd.clone())
}

/// The JSON edge: each public shape serializes as the tree it writes (roce-render's tests hand them to
/// kubernetes-validate and a CRD schema, and compare them with what `apply` wrote).
macro_rules! serialize_as_yaml {
    ($($shape:ty),+) => {$(
        impl Serialize for $shape {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::yaml::to_json(self.to_yaml()).serialize(s)
            }
        }
    )+};
}

serialize_as_yaml!(
    PodResourceClaim,
    ContainerClaim,
    Affinity,
    ExtraDocument,
    ResourceClaimTemplate,
    ComputeDomainObject
);

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::str::FromStr;

    use serde_json::{Value, json};

    use roce_model::fabric::dra::{
        AlignBy, ClaimedGpus, KueueTopology, LabelKey, LabelValue, NVIDIA_GPU_DEVICE_CLASS,
        NicAttachment, PCIE_ROOT_ATTRIBUTE, TopologyMode,
    };

    use super::*;

    /// The wiring of the three choices.
    fn dra_wiring(nics: &NicAttachment, domain: &NvlinkDomain, placement: &Placement) -> DraWiring {
        wiring(&DraSpec {
            nics: nics.clone(),
            nvlink_domain: domain.clone(),
            placement: placement.clone(),
        })
    }

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    fn vendor_domain() -> NvlinkDomain {
        NvlinkDomain::ComputeDomain(
            ComputeDomain::new(
                K8sName::from_str("nccl-test-72-gb300-18n-dra").unwrap(),
                0,
                None,
            )
            .unwrap(),
        )
    }

    fn dranet(count: u32) -> DraNics {
        DraNics::new(
            DeviceClassName::from_str("dranet.net").unwrap(),
            n(count),
            K8sName::from_str("gb300-rdma-nics").unwrap(),
        )
        .with_selectors(vec![
            CelExpression::from_str(r#"device.attributes["dra.net"].rdma == true"#).unwrap(),
        ])
    }

    fn to_json<T: Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap()
    }

    #[test]
    fn the_channel_claim_is_the_vendors() {
        let d = vendor_domain();
        assert_eq!(
            to_json(&pod_resource_claims(None, &d)),
            json!([{"name": "compute-domain-channel",
                    "resourceClaimTemplateName": "nccl-test-72-gb300-18n-dra-cd-channel"}])
        );
        assert_eq!(
            to_json(&container_claims(None, &d)),
            json!([{"name": "compute-domain-channel"}])
        );
    }

    #[test]
    fn no_dra_and_no_domain_adds_nothing() {
        let w = dra_wiring(
            &NicAttachment::MultusAndResource,
            &NvlinkDomain::None,
            &Placement::default(),
        );
        assert_eq!(w, DraWiring::default());
    }

    #[test]
    fn nics_then_channel_in_pods_and_containers_and_domain_before_template() {
        let w = dra_wiring(
            &NicAttachment::Dra(dranet(8)),
            &vendor_domain(),
            &Placement::default(),
        );
        let names: Vec<&str> = w.pod_claims.iter().map(|c| c.name().as_str()).collect();
        assert_eq!(names, ["rdma-nics", "compute-domain-channel"]);
        let names: Vec<&str> = w
            .container_claims
            .iter()
            .map(|c| c.name().as_str())
            .collect();
        assert_eq!(names, ["rdma-nics", "compute-domain-channel"]);
        let docs: Vec<(&str, &str)> = w
            .documents
            .iter()
            .map(|d| (d.kind(), d.name().as_str()))
            .collect();
        assert_eq!(
            docs,
            [
                ("ComputeDomain", "nccl-test-72-gb300-18n-dra"),
                ("ResourceClaimTemplate", "gb300-rdma-nics")
            ]
        );
    }

    #[test]
    fn the_compute_domain_matches_the_vendors_object() {
        let d = vendor_domain();
        assert_eq!(
            to_json(&compute_domain(d.compute_domain().unwrap())),
            json!({
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "ComputeDomain",
                "metadata": {"name": "nccl-test-72-gb300-18n-dra"},
                "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {
                    "name": "nccl-test-72-gb300-18n-dra-cd-channel"}}}
            })
        );
    }

    #[test]
    fn all_channels_is_written_only_when_asked() {
        let cd = vendor_domain()
            .compute_domain()
            .unwrap()
            .clone()
            .with_allocation(ChannelAllocation::All);
        assert_eq!(
            to_json(&compute_domain(&cd))["spec"]["channel"]["allocationMode"],
            json!("All")
        );
    }

    #[test]
    fn an_unaligned_template_is_one_request() {
        assert_eq!(
            to_json(&resource_claim_template(&dranet(8))),
            json!({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gb300-rdma-nics"},
                "spec": {"spec": {"devices": {"requests": [{"name": "nic", "exactly": {
                    "deviceClassName": "dranet.net", "count": 8,
                    "selectors": [{"cel": {"expression": "device.attributes[\"dra.net\"].rdma == true"}}]
                }}]}}}
            })
        );
    }

    #[test]
    fn a_selector_of_several_lines_is_a_block_scalar() {
        let nics = dranet(1).with_selectors(vec![
            CelExpression::from_str(
                "device.driver == \"dra.net\" &&\n  device.attributes[\"dra.net\"].rdma",
            )
            .unwrap(),
        ]);
        let text = crate::yaml::to_string(&resource_claim_template(&nics).to_yaml());
        // As `yaml::from_json` wrote it before the shapes built their own YAML.
        assert!(text.contains("expression: |-\n"), "{text}");
    }

    #[test]
    fn unaligned_gpus_are_one_request_beside_the_nics() {
        let nics = dranet(8).with_gpus(ClaimedGpus::new(
            DeviceClassName::from_str(NVIDIA_GPU_DEVICE_CLASS).unwrap(),
            n(4),
        ));
        let t = to_json(&resource_claim_template(&nics));
        let devices = &t["spec"]["spec"]["devices"];
        assert_eq!(devices["requests"][0]["name"], "gpu");
        assert_eq!(devices["requests"][0]["exactly"]["count"], 4);
        assert_eq!(devices["requests"][1]["name"], "nic");
        assert_eq!(devices["requests"][1]["exactly"]["count"], 8);
        assert!(devices.get("constraints").is_none());
    }

    #[test]
    fn an_aligned_template_pairs_each_gpu_with_its_nics() {
        let nics = dranet(8).with_gpus(
            ClaimedGpus::new(
                DeviceClassName::from_str(NVIDIA_GPU_DEVICE_CLASS).unwrap(),
                n(4),
            )
            .aligned(AlignBy::PcieRoot),
        );
        let t = to_json(&resource_claim_template(&nics));
        let devices = &t["spec"]["spec"]["devices"];
        let requests: Vec<(String, String, u64)> = devices["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_owned(),
                    r["exactly"]["deviceClassName"].as_str().unwrap().to_owned(),
                    r["exactly"]["count"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, String, u64)> = (0..4)
            .flat_map(|i| {
                [
                    (format!("gpu-{i}"), "gpu.nvidia.com".to_owned(), 1),
                    (format!("nic-{i}"), "dranet.net".to_owned(), 2),
                ]
            })
            .collect();
        assert_eq!(requests, want);
        assert_eq!(
            devices["constraints"][3],
            json!({"requests": ["gpu-3", "nic-3"], "matchAttribute": PCIE_ROOT_ATTRIBUTE})
        );
        // GPUs take no NIC selector.
        assert!(devices["requests"][0]["exactly"].get("selectors").is_none());
        assert!(devices["requests"][1]["exactly"]["selectors"].is_array());
    }

    #[test]
    fn uneven_alignment_still_gives_every_request_a_device() {
        let nics = dranet(2).with_gpus(
            ClaimedGpus::new(
                DeviceClassName::from_str(NVIDIA_GPU_DEVICE_CLASS).unwrap(),
                n(3),
            )
            .aligned(AlignBy::NumaNode),
        );
        let t = to_json(&resource_claim_template(&nics));
        let counts: Vec<u64> = t["spec"]["spec"]["devices"]["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["exactly"]["count"].as_u64().unwrap())
            .collect();
        // Two groups: GPUs 2 + 1, NICs 1 + 1; nothing lost, nothing zero.
        assert_eq!(counts, [2, 1, 1, 1]);
    }

    #[test]
    fn clique_affinity_selects_the_jobs_pods_and_labels_them() {
        let p = Placement {
            clique_affinity: Some(CliqueAffinity {
                key: LabelKey::from_str("metadata.coreweave.cloud/job").unwrap(),
                value: LabelValue::from_str("nccl-test").unwrap(),
            }),
            kueue: None,
        };
        assert_eq!(
            to_json(&affinity(&p).unwrap()),
            json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "nvidia.com/gpu.clique",
                "labelSelector": {"matchExpressions": [{
                    "key": "metadata.coreweave.cloud/job", "operator": "In", "values": ["nccl-test"]}]}
            }]}})
        );
        assert_eq!(
            pod_labels(&p),
            [(
                "metadata.coreweave.cloud/job".to_owned(),
                "nccl-test".to_owned()
            )]
        );
        assert!(affinity(&Placement::default()).is_none());
    }

    #[test]
    fn kueue_annotations_carry_the_level() {
        for (mode, key) in [
            (
                TopologyMode::Required,
                "kueue.x-k8s.io/podset-required-topology",
            ),
            (
                TopologyMode::Preferred,
                "kueue.x-k8s.io/podset-preferred-topology",
            ),
        ] {
            let p = Placement {
                clique_affinity: None,
                kueue: Some(KueueTopology {
                    mode,
                    level: LabelKey::from_str(CLIQUE_LABEL).unwrap(),
                }),
            };
            assert_eq!(
                kueue_annotations(&p),
                [(key, "nvidia.com/gpu.clique".to_owned())]
            );
        }
        assert!(kueue_annotations(&Placement::default()).is_empty());
    }

    proptest::proptest! {
        /// Whatever the counts, an aligned template hands out exactly the GPUs and NICs asked for, every
        /// request gets at least one device, request names are unique DNS labels, and each constraint
        /// binds one GPU request and one NIC request that exist.
        #[test]
        fn aligned_templates_keep_the_counts(gpus in 1u32..=16, count in 1u32..=32, numa: bool) {
            let by = if numa { AlignBy::NumaNode } else { AlignBy::PcieRoot };
            let nics = dranet(count).with_gpus(
                ClaimedGpus::new(DeviceClassName::from_str(NVIDIA_GPU_DEVICE_CLASS).unwrap(), n(gpus))
                    .aligned(by),
            );
            let t = to_json(&resource_claim_template(&nics));
            let devices = &t["spec"]["spec"]["devices"];
            let requests = devices["requests"].as_array().unwrap();
            let total = |class: &str| -> u64 {
                requests
                    .iter()
                    .filter(|r| r["exactly"]["deviceClassName"] == class)
                    .map(|r| r["exactly"]["count"].as_u64().unwrap())
                    .sum()
            };
            proptest::prop_assert_eq!(total(NVIDIA_GPU_DEVICE_CLASS), u64::from(gpus));
            proptest::prop_assert_eq!(total("dranet.net"), u64::from(count));
            let names: Vec<&str> = requests.iter().map(|r| r["name"].as_str().unwrap()).collect();
            for r in requests {
                proptest::prop_assert!(r["exactly"]["count"].as_u64().unwrap() >= 1);
            }
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            proptest::prop_assert_eq!(unique.len(), names.len());
            proptest::prop_assert!(names.iter().all(|n| DnsLabel::from_str(n).is_ok()));
            for c in devices["constraints"].as_array().unwrap() {
                let pair: Vec<&str> =
                    c["requests"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
                proptest::prop_assert_eq!(pair.len(), 2);
                proptest::prop_assert!(pair[0].starts_with("gpu-") && pair[1].starts_with("nic-"));
                proptest::prop_assert!(pair.iter().all(|p| names.contains(p)));
                proptest::prop_assert_eq!(&c["matchAttribute"], by.attribute());
            }
        }
    }
}
