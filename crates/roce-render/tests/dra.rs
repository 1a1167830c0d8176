//! DRA and NVLink domains (`roce_model::fabric::dra`) against their real consumers: the ResourceClaimTemplate
//! and a Pod with `resourceClaims` / `resources.claims` through `kubernetes-validate --strict` (Kubernetes
//! 1.34, where `resource.k8s.io/v1` is GA, and 1.37, the newest it bundles); the ComputeDomain through the
//! CRD's OpenAPI schema with Python `jsonschema`. The emitted objects are also compared with the sources in
//! `tests/fixtures/dra/` (the vendor's MPIJob, dranet's claim templates).

use std::num::NonZeroU32;
use std::path::Path;
use std::str::FromStr;

use roce_model::fabric::dra::{
    self, AlignBy, CelExpression, ClaimedGpus, CliqueAffinity, ComputeDomain, DeviceClassName,
    DraNics, K8sName, KueueTopology, LabelKey, LabelValue, NicAttachment, NvlinkDomain, Placement,
    TopologyMode,
};
use roce_render::dra::{DraWiring, ExtraDocument};
use roce_render::plumbing::dra::{compute_domain, resource_claim_template};
use serde_json::{Value, json};

use crate::support::consumers;

/// The wiring of the three choices.
fn dra_wiring(nics: &NicAttachment, domain: &NvlinkDomain, placement: &Placement) -> DraWiring {
    roce_render::dra::wiring(&dra::DraSpec {
        nics: nics.clone(),
        nvlink_domain: domain.clone(),
        placement: placement.clone(),
    })
}

fn n(v: u32) -> NonZeroU32 {
    NonZeroU32::new(v).unwrap()
}

// ---------------------------------------------------------------------------------------------------------
// The facts under test: the vendor's GB300 NVL72 job, and dranet-style NICs.

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

fn vendor_placement() -> Placement {
    Placement {
        clique_affinity: Some(CliqueAffinity {
            key: LabelKey::from_str("metadata.coreweave.cloud/job").unwrap(),
            value: LabelValue::from_str("nccl-test").unwrap(),
        }),
        kueue: Some(KueueTopology {
            mode: TopologyMode::Required,
            level: LabelKey::from_str(dra::CLIQUE_LABEL).unwrap(),
        }),
    }
}

/// Where the pod's GPUs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gpus {
    /// `nvidia.com/gpu` (device plugin).
    Resource,
    /// The NICs' claim, unaligned.
    Claimed,
    /// The NICs' claim, each GPU aligned with its NICs.
    Aligned(AlignBy),
}

const GPU_SOURCES: [Gpus; 4] = [
    Gpus::Resource,
    Gpus::Claimed,
    Gpus::Aligned(AlignBy::PcieRoot),
    Gpus::Aligned(AlignBy::NumaNode),
];

fn dranet_nics(gpus: Gpus) -> DraNics {
    let template = match gpus {
        Gpus::Resource => "gb300-rdma-nics",
        Gpus::Claimed => "gb300-gpus-rdma-nics",
        Gpus::Aligned(AlignBy::PcieRoot) => "gb300-rdma-nics-pcie-root",
        Gpus::Aligned(AlignBy::NumaNode) => "gb300-rdma-nics-numa-node",
    };
    let nics = DraNics::new(
        DeviceClassName::from_str("dranet.net").unwrap(),
        n(8),
        K8sName::from_str(template).unwrap(),
    )
    .with_selectors(vec![
        CelExpression::from_str(
            r#"device.attributes["dra.net"].rdma == true && device.attributes["dra.net"].virtual == false"#,
        )
        .unwrap(),
    ]);
    let claimed = ClaimedGpus::new(
        DeviceClassName::from_str(dra::NVIDIA_GPU_DEVICE_CLASS).unwrap(),
        n(4),
    );
    match gpus {
        Gpus::Resource => nics,
        Gpus::Claimed => nics.with_gpus(claimed),
        Gpus::Aligned(by) => nics.with_gpus(claimed.aligned(by)),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Printing for the consumers: each object as a JSON document (JSON is YAML), `---` between them. The
// targets' YAML writer has its own tests (`roce-render/src/yaml.rs`, `src/properties.rs`); it is not API.

fn printed(docs: &[Value]) -> String {
    let docs: Vec<String> = docs
        .iter()
        .map(|d| serde_json::to_string_pretty(d).unwrap())
        .collect();
    docs.join("\n---\n") + "\n"
}

fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

/// A GB300 worker pod with everything the wiring adds: claims, affinity, labels, annotations.
fn pod_with(wiring: &DraWiring, gpus_by_dra: bool) -> Value {
    let mut labels = serde_json::Map::new();
    for (k, v) in &wiring.labels {
        labels.insert(k.clone(), json!(v));
    }
    let mut annotations = serde_json::Map::new();
    for (k, v) in &wiring.annotations {
        annotations.insert((*k).to_owned(), json!(v));
    }
    // GPUs claimed through DRA are not requested again as an extended resource.
    let limits = if gpus_by_dra {
        json!({"cpu": "140", "memory": "900Gi"})
    } else {
        json!({"cpu": "140", "memory": "900Gi", "nvidia.com/gpu": "4"})
    };
    let mut spec = json!({
        "containers": [{
            "name": "nccl",
            "image": "ghcr.io/coreweave/nccl-tests:13.1.0-devel-ubuntu22.04-nccl2.29.2-1-0bf62c2",
            "resources": {"limits": limits, "claims": json_of(&wiring.container_claims)},
        }],
        "resourceClaims": json_of(&wiring.pod_claims),
    });
    if let Some(a) = &wiring.affinity {
        spec["affinity"] = json_of(a);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "worker-0", "labels": labels, "annotations": annotations},
        "spec": spec,
    })
}

fn fixture(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dra")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn by_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

// ---------------------------------------------------------------------------------------------------------
// kubernetes-validate --strict.

#[test]
fn resource_claim_templates_and_pods_with_claims_pass_kubernetes_strict() {
    let mut docs = Vec::new();
    for gpus in GPU_SOURCES {
        let nics = NicAttachment::Dra(dranet_nics(gpus));
        let wiring = dra_wiring(&nics, &vendor_domain(), &vendor_placement());
        let mut pod = pod_with(&wiring, gpus != Gpus::Resource);
        pod["metadata"]["name"] = json!(format!("worker-{}", docs.len()));
        for d in &wiring.documents {
            if let ExtraDocument::ResourceClaimTemplate(t) = d {
                docs.push(json_of(t));
            }
        }
        docs.push(pod);
    }
    // The vendor's job: Multus and rdma/ib stay, only the channel is claimed.
    let wiring = dra_wiring(
        &NicAttachment::MultusAndResource,
        &vendor_domain(),
        &vendor_placement(),
    );
    let mut pod = pod_with(&wiring, false);
    pod["metadata"]["name"] = json!("worker-multus");
    docs.push(pod);

    let text = printed(&docs);
    consumers::kubernetes_validate_strict(&text, consumers::DRA_K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Strict mode reaches the claim fields: a misspelt one is refused, so the test above is not a rubber stamp.
#[test]
fn kubernetes_strict_rejects_a_misspelt_claim_field() {
    let wiring = dra_wiring(
        &NicAttachment::Dra(dranet_nics(Gpus::Resource)),
        &vendor_domain(),
        &Placement::default(),
    );
    let mut pod = pod_with(&wiring, false);
    let claim = pod["spec"]["resourceClaims"][0].as_object_mut().unwrap();
    let template = claim.remove("resourceClaimTemplateName").unwrap();
    claim.insert("resourceClaimTemplate".into(), template);
    let mut rct = json_of(&resource_claim_template(&dranet_nics(Gpus::Resource)));
    rct["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClass"] = json!("dranet.net");
    for doc in [pod, rct] {
        let kind = doc["kind"].clone();
        match consumers::kubernetes_validate_strict(&printed(&[doc]), consumers::DRA_K8S_VERSIONS) {
            Err(_) => {}
            Ok(consumers::Checked::Skipped) => return,
            Ok(consumers::Checked::Ran) => panic!("{kind} with a misspelt field passed"),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The ComputeDomain CRD schema, with Python jsonschema (as tests/validation.rs checks the MPIJob CRD).

/// `Ok(true)`: valid; `Ok(false)`: skipped; `Err(report)`: rejected.
fn check_compute_domain_schema(doc: &Value) -> Result<bool, String> {
    consumers::crd_schema_strict(doc, "compute-domain-v1beta1.json")
}

/// The emitted ComputeDomain, read back from the YAML the writer prints.
fn printed_compute_domain(domain: &NvlinkDomain) -> Value {
    let cd = json_of(&compute_domain(domain.compute_domain().unwrap()));
    serde_saphyr::from_str(&printed(&[cd])).unwrap()
}

#[test]
fn compute_domains_pass_the_crd_schema() {
    let all = NvlinkDomain::ComputeDomain(
        ComputeDomain::new(K8sName::from_str("gb300-18n").unwrap(), 18, None)
            .unwrap()
            .with_allocation(dra::ChannelAllocation::All),
    );
    let vendor = by_kind(
        &fixture("coreweave-gb300-roce-nvl72-mpijob-dra.yaml"),
        "ComputeDomain",
    )[0]
    .clone();
    for doc in [
        printed_compute_domain(&vendor_domain()),
        printed_compute_domain(&all),
        vendor,
    ] {
        if let Err(e) = check_compute_domain_schema(&doc) {
            panic!("{e}");
        }
    }
}

#[test]
fn the_crd_schema_check_rejects_broken_compute_domains() {
    let good = printed_compute_domain(&vendor_domain());
    let mut negative = good.clone();
    negative["spec"]["numNodes"] = json!(-1);
    let mut misspelt = good.clone();
    misspelt["spec"]["channel"]["resourceClaimTemplates"] = json!({"name": "x"});
    let mut bad_mode = good.clone();
    bad_mode["spec"]["channel"]["allocationMode"] = json!("Many");
    let mut no_channel = good;
    no_channel["spec"]
        .as_object_mut()
        .unwrap()
        .remove("channel");
    for (what, doc) in [
        ("numNodes -1", negative),
        ("misspelt field", misspelt),
        ("unknown allocationMode", bad_mode),
        ("no channel", no_channel),
    ] {
        match check_compute_domain_schema(&doc) {
            Err(_) => {}
            Ok(false) => return,
            Ok(true) => panic!("{what} passed the schema"),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The sources: what roce emits for their facts is what they wrote.

#[test]
fn the_vendors_compute_domain_claim_and_affinity_are_what_roce_emits() {
    let docs = fixture("coreweave-gb300-roce-nvl72-mpijob-dra.yaml");
    let mut vendor_cd = by_kind(&docs, "ComputeDomain")[0].clone();
    // roce leaves the namespace to where the objects are applied.
    vendor_cd["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("namespace");
    assert_eq!(printed_compute_domain(&vendor_domain()), vendor_cd);

    let worker = &by_kind(&docs, "MPIJob")[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    let placement = Placement {
        kueue: None,
        ..vendor_placement()
    };
    let wiring = dra_wiring(
        &NicAttachment::MultusAndResource,
        &vendor_domain(),
        &placement,
    );
    assert_eq!(
        json_of(&wiring.pod_claims),
        worker["spec"]["resourceClaims"]
    );
    assert_eq!(
        json_of(&wiring.container_claims),
        worker["spec"]["containers"][0]["resources"]["claims"]
    );
    let required = &worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(
        json_of(wiring.affinity.as_ref().unwrap())["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        *required
    );
    for (k, v) in &wiring.labels {
        assert_eq!(worker["metadata"]["labels"][k], json!(v), "{k}");
    }
    // The vendor's worker claims the channel in its container: the lint rule is quiet on it.
    let pod_claims: Vec<dra::rules::FoundPodClaim<'_>> = worker["spec"]["resourceClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| dra::rules::FoundPodClaim {
            name: c["name"].as_str().unwrap(),
            template: c["resourceClaimTemplateName"].as_str(),
        })
        .collect();
    let container_claims: Vec<&str> = worker["spec"]["containers"][0]["resources"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        dra::rules::channel_claim_concern(&vendor_domain(), &pod_claims, &container_claims),
        None
    );
    assert_eq!(
        dra::rules::channel_claim_concern(&vendor_domain(), &[], &[]),
        Some(dra::rules::ChannelConcern::NoPodClaim {
            template: "nccl-test-72-gb300-18n-dra-cd-channel".into()
        })
    );
}

/// dranet's aligned templates bind a GPU request and a NIC request with one `matchAttribute` constraint;
/// roce's per-GPU groups have the same shape (its request names are `gpu-i`/`nic-i`).
#[test]
fn aligned_templates_have_dranets_shape() {
    let efa = fixture("dranet-aws-efa-pcieroot.yaml");
    let theirs = by_kind(&efa, "ResourceClaimTemplate")
        .into_iter()
        .find(|t| t["metadata"]["name"] == "gpu-efa-aligned")
        .unwrap();
    let ours = json_of(&resource_claim_template(
        &DraNics::new(
            DeviceClassName::from_str("efa.networking.k8s.aws").unwrap(),
            n(1),
            K8sName::from_str("gpu-efa-aligned").unwrap(),
        )
        .with_gpus(
            ClaimedGpus::new(
                DeviceClassName::from_str(dra::NVIDIA_GPU_DEVICE_CLASS).unwrap(),
                n(1),
            )
            .aligned(AlignBy::PcieRoot),
        ),
    ));
    let shape = |t: &Value| -> (Vec<(Value, Value)>, Value) {
        let d = &t["spec"]["spec"]["devices"];
        let requests = d["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["exactly"]["deviceClassName"].clone(),
                    r["exactly"]["count"].clone(),
                )
            })
            .collect();
        (requests, d["constraints"][0]["matchAttribute"].clone())
    };
    assert_eq!(shape(&ours), shape(theirs));
    assert_eq!(ours["apiVersion"], theirs["apiVersion"]);

    let numa = fixture("dranet-numa-aligned.yaml");
    let class = by_kind(&numa, "DeviceClass")[0];
    assert!(
        class["spec"]["selectors"][0]["cel"]["expression"]
            .as_str()
            .unwrap()
            .contains(&format!("device.driver == \"{}\"", dra::DRANET_DRIVER))
    );
}

/// dranet's OCI GB200 job claims 4 GPUs and 8 RDMA NICs in one template and a ComputeDomain channel beside
/// it: roce writes the same template and the same ComputeDomain, byte for byte after parsing.
#[test]
fn dranets_oci_gb200_template_and_compute_domain_are_what_roce_emits() {
    let docs = fixture("dranet-oci-gb200.yaml");
    let theirs = by_kind(&docs, "ResourceClaimTemplate")
        .into_iter()
        .find(|t| t["metadata"]["name"] == "4gpu-8nic")
        .unwrap();
    let nics = DraNics::new(
        DeviceClassName::from_str("dranet.net").unwrap(),
        n(8),
        K8sName::from_str("4gpu-8nic").unwrap(),
    )
    .with_selectors(vec![
        CelExpression::from_str(
            r#"device.attributes["dra.net"].rdma == true && device.attributes["dra.net"].virtual == false"#,
        )
        .unwrap(),
    ])
    .with_gpus(ClaimedGpus::new(
        DeviceClassName::from_str(dra::NVIDIA_GPU_DEVICE_CLASS).unwrap(),
        n(4),
    ));
    let ours: Value =
        serde_saphyr::from_str(&printed(&[json_of(&resource_claim_template(&nics))])).unwrap();
    assert_eq!(&ours, theirs);

    let domain = NvlinkDomain::ComputeDomain(
        ComputeDomain::new(
            K8sName::from_str("nccl-test-compute-domain").unwrap(),
            0,
            None,
        )
        .unwrap(),
    );
    let cd = by_kind(&docs, "ComputeDomain")[0];
    assert_ne!(
        printed_compute_domain(&domain),
        *cd,
        "dranet names its channel template <name>-channel, not the vendor's <name>-cd-channel"
    );
    let named = NvlinkDomain::ComputeDomain(
        ComputeDomain::new(
            K8sName::from_str("nccl-test-compute-domain").unwrap(),
            0,
            Some(K8sName::from_str("nccl-test-compute-domain-channel").unwrap()),
        )
        .unwrap(),
    );
    assert_eq!(printed_compute_domain(&named), *cd);
}

// ---------------------------------------------------------------------------------------------------------
// Profiles with DRA, through `roce render --target pod`'s code path.

/// A built-in profile with DRA, loaded without findings.
fn dra_profile(name: &str) -> roce_model::Profile {
    let loaded = roce_model::load(
        roce_model::builtin::source(name).unwrap(),
        &roce_model::BuiltinsOnly,
    );
    assert!(loaded.problems.is_empty(), "{name}: {:?}", loaded.problems);
    loaded.profile.unwrap()
}

/// The built-ins with DRA: the vendor's NVL72 job (Multus NICs, ComputeDomain) and OCI with dranet NICs.
const DRA_PROFILES: [&str; 2] = ["coreweave/gb300-roce-dra", "oci/gb200-roce-dranet"];

/// The two DRA profiles render a Pod whose claims, documents and affinity the real consumers accept: the
/// ComputeDomain against its CRD schema, everything else with kubernetes-validate --strict for 1.34+.
#[test]
fn dra_profiles_render_pods_the_consumers_accept() {
    for path in DRA_PROFILES {
        let plan = roce_render::lower(&dra_profile(path));
        let pod = roce_render::render(
            &plan,
            roce_render::Target::Pod,
            &roce_render::RenderOptions::default(),
        )
        .unwrap()
        .remove(0)
        .contents;
        let docs: Vec<Value> = serde_saphyr::from_multiple::<Value>(&pod)
            .unwrap()
            .into_iter()
            .filter(|d| !d.is_null())
            .collect();
        let (domains, core): (Vec<Value>, Vec<Value>) =
            docs.into_iter().partition(|d| d["kind"] == "ComputeDomain");
        assert_eq!(domains.len(), 1, "{path}: one ComputeDomain\n{pod}");
        let pods = by_kind(&core, "Pod");
        assert_eq!(pods.len(), 1, "{path}\n{pod}");
        let claimed: Vec<&Value> = pods[0]["spec"]["resourceClaims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["name"])
            .collect();
        let used: Vec<&Value> = pods[0]["spec"]["containers"][0]["resources"]["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["name"])
            .collect();
        assert_eq!(
            claimed, used,
            "{path}: every claim is used by the container"
        );
        assert!(
            claimed.contains(&&json!("compute-domain-channel")),
            "{path}"
        );
        assert_eq!(
            pods[0]["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                [0]["topologyKey"],
            "nvidia.com/gpu.clique",
            "{path}"
        );
        match check_compute_domain_schema(&domains[0]) {
            Ok(checked) => {
                assert!(
                    checked || !consumers::tools_required(),
                    "{path}: CRD schema not checked"
                )
            }
            Err(e) => panic!("{path}: {e}"),
        }
        consumers::kubernetes_validate_strict(&printed(&core), consumers::DRA_K8S_VERSIONS)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    // GPUs claimed through DRA are not requested again as nvidia.com/gpu; the vendor's profile keeps both.
    let dranet = roce_render::lower(&dra_profile("oci/gb200-roce-dranet"));
    assert!(dranet.resources().is_empty(), "{:?}", dranet.resources());
    let vendor = roce_render::lower(&dra_profile("coreweave/gb300-roce-dra"));
    assert!(
        vendor
            .resources()
            .iter()
            .any(|(r, _)| r == "nvidia.com/gpu")
    );
    assert!(vendor.resources().iter().any(|(r, _)| r == "rdma/ib"));
}

/// ucx-perftest measures the network between two nodes: its Pods claim the NICs where those are DRA
/// devices (with their ResourceClaimTemplate first), never the NVLink domain or the clique affinity, and
/// the file says what it leaves out. kubernetes-validate --strict accepts it.
#[test]
fn ucx_perftest_claims_the_nics_and_says_what_does_not_apply() {
    for name in DRA_PROFILES {
        let plan = roce_render::lower(&dra_profile(name));
        let text = roce_render::render(
            &plan,
            roce_render::Target::UcxPerftest,
            &roce_render::RenderOptions::default(),
        )
        .unwrap()
        .remove(0)
        .contents;
        assert!(
            text.contains("Not applied to this test: the NVLink domain (ComputeDomain"),
            "{name}\n{text}"
        );
        let docs: Vec<Value> = serde_saphyr::from_multiple::<Value>(&text)
            .unwrap()
            .into_iter()
            .filter(|d| !d.is_null())
            .collect();
        assert!(by_kind(&docs, "ComputeDomain").is_empty(), "{name}");
        let nic_claim = plan.dra_spec.nics.dra().map(|n| n.claim().to_string());
        let pods = by_kind(&docs, "Pod");
        assert_eq!(pods.len(), 2, "{name}");
        for pod in &pods {
            let spec = &pod["spec"];
            assert!(spec["affinity"]["podAffinity"].is_null(), "{name}");
            let claims: Vec<String> = spec["resourceClaims"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| c["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(
                claims,
                nic_claim.iter().cloned().collect::<Vec<_>>(),
                "{name}"
            );
            for c in spec["containers"]
                .as_array()
                .unwrap()
                .iter()
                .chain(spec["initContainers"].as_array().unwrap())
                .filter(|c| c["name"] != "wait-for-server")
            {
                let used: Vec<String> = c["resources"]["claims"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|c| c["name"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(used, claims, "{name}: {}", c["name"]);
            }
        }
        let templates = by_kind(&docs, "ResourceClaimTemplate");
        assert_eq!(templates.len(), usize::from(nic_claim.is_some()), "{name}");
        if nic_claim.is_some() {
            assert_eq!(
                docs[0]["kind"], "ResourceClaimTemplate",
                "{name}: created first"
            );
        }
        consumers::kubernetes_validate_strict(&printed(&docs), consumers::DRA_K8S_VERSIONS)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The sbatch targets cannot make Kubernetes objects: they say what the nodes must already give the job.
#[test]
fn sbatch_says_the_nodes_must_provide_the_claims() {
    let plan = roce_render::lower(&dra_profile("coreweave/gb300-roce-dra"));
    let sbatch = roce_render::render(
        &plan,
        roce_render::Target::Sbatch,
        &roce_render::RenderOptions::default(),
    )
    .unwrap()
    .remove(0)
    .contents;
    assert!(sbatch.contains("Dynamic Resource Allocation"), "{sbatch}");
}
