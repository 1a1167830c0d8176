//! What a pod really gets from the fabric, read from a manifest: [`Wiring`].
//!
//! `roce lint` and `roce apply` judge a pod template by these facts, not by how its YAML is spelled: the
//! NICs it attaches (Multus networks, repeated names, a cloud's multi-network annotation, DRA NIC claims,
//! host networking), its RDMA device access (any RDMA device-plugin resource, a DRA NIC claim, a privileged
//! container), memlock (`IPC_LOCK` or privileged), the IMEX channel of an NVLink domain, the env each rank
//! sees (container env, `envFrom` ConfigMaps of the same input, the launcher's `mpirun -x` and `--mca`),
//! the accelerators it asks for, its volumes and mounts. Each fact keeps its origin.
//!
//! [`Input`] indexes the objects of the whole input that a pod refers to by name (NADs, ConfigMaps,
//! ComputeDomains, ResourceClaimTemplates, the fabric operators' resources), so a claim of a template
//! defined in the same file is resolved to its device class.

use roce_model::fabric::attach::{self, IPC_LOCK, RDMA_DEVICE_DIR};
use roce_model::fabric::devices::{self, Accelerator};
use roce_model::fabric::dra::kueue::{ClaimShape, Refused};
use roce_model::plumbing::tree::{Entry, Node, Scalar, Value};
use roce_model::source::Origin;

use crate::apply::mpirun;
use crate::apply::multus::{self, Network};
use crate::apply::view::{PodView, entry, text};

/// GKE's multi-network annotation (`networking.gke.io/interfaces`): the pod's extra NICs, RDMA ones on
/// A3 Ultra / A4 (GKE docs, "Run GPUs with GPUDirect RDMA").
pub const GKE_INTERFACES: &str = "networking.gke.io/interfaces";

/// A NetworkAttachmentDefinition (or an SR-IOV operator network, which renders one) in the input.
#[derive(Debug, Clone)]
pub struct NadObject<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `metadata.namespace` (the SR-IOV operator's `spec.networkNamespace` for its networks).
    pub namespace: Option<&'a str>,
    /// The device-plugin resource its VFs come from (`k8s.v1.cni.cncf.io/resourceName`, or an SR-IOV
    /// network's `spec.resourceName`).
    pub resource: Option<String>,
    /// The host interface a macvlan/ipvlan network sits on (a MacvlanNetwork's `spec.master`).
    pub(crate) master: Option<&'a str>,
    /// Which object wrote it.
    pub(crate) from: NadFrom,
    /// Its place.
    pub at: Origin,
}

/// Who writes a NAD, which says how its resource name is spelled and what adds a pod's requests for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NadFrom {
    /// A NetworkAttachmentDefinition of the input: its `k8s.v1.cni.cncf.io/resourceName` is the whole name.
    Input,
    /// sriov-network-operator's networks (SriovNetwork, SriovIBNetwork, OVSNetwork). The NAD it renders
    /// names `$RESOURCE_PREFIX/<spec.resourceName>` (`RenderNetAttDef`, `api/v1/helper.go`): the prefix is
    /// the operator's deployment setting (`openshift.io`; NVIDIA's network operator chart sets
    /// `nvidia.com`). The operator runs the network-resources-injector unless its SriovOperatorConfig turns
    /// `enableInjector` off (OpenShift docs, "About the Network Resources Injector": enabled by default).
    SriovOperator,
    /// NVIDIA network-operator's networks (HostDeviceNetwork, IPoIBNetwork, MacvlanNetwork), whose resource
    /// prefix is its deployment's too.
    NetworkOperator,
}

/// A ResourceClaimTemplate in the input and the device classes it asks for.
#[derive(Debug, Clone)]
pub struct ClaimTemplate<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `spec.spec.devices.requests[].deviceClassName` (or `.exactly.deviceClassName`).
    pub classes: Vec<&'a str>,
    /// How many NVIDIA GPUs its requests allocate (`count`, 1 when unset; `allocationMode: All` counts as
    /// several: every matching device of the node).
    pub nvidia_gpus: u64,
    /// What Kueue judges in it: requests it refuses and `constraints`.
    pub shape: ClaimShape,
    /// Its place.
    pub at: Origin,
}

/// The objects of the whole input a pod refers to by name.
#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    /// NADs and SR-IOV networks.
    pub nads: Vec<NadObject<'a>>,
    /// ConfigMaps: name and `data`.
    pub config_maps: Vec<(&'a str, &'a Node)>,
    /// ComputeDomains: name and the name of the channel ResourceClaimTemplate they create.
    pub compute_domains: Vec<(&'a str, Option<&'a str>)>,
    /// ResourceClaimTemplates.
    pub claim_templates: Vec<ClaimTemplate<'a>>,
    /// DeviceClasses whose selector names the driver (`device.driver == "dra.net"`): name and driver.
    pub device_classes: Vec<(&'a str, String)>,
    /// Device-plugin resources the fabric objects of the input create (SriovNetworkNodePolicy, the
    /// NicClusterPolicy's device plugins, a device plugin's own ConfigMap), with full names.
    pub provided: Vec<String>,
    /// Does the input hold a fabric object that declares resources (so a resource nothing provides is
    /// worth a word)?
    pub declares_resources: bool,
    /// The names of `provided` whose prefix the input fixes: the RDMA shared device plugin's (its entry's
    /// `resourcePrefix`, else its built-in `rdma`; it has no flag that changes it). The other plugins'
    /// prefix is a deployment setting the input may not show.
    pub(crate) exact: Vec<String>,
    /// The SR-IOV network device plugin's resource names from its ConfigMaps that take the plugin's
    /// `--resource-prefix` (no prefix of their own), as `intel.com/<name>` in `provided` until
    /// [`Input::read`] knows the prefix of the plugin the input deploys.
    sriov_unprefixed: Vec<String>,
    /// The `--resource-prefix` of each SR-IOV network device plugin container the input deploys.
    sriov_prefixes: Vec<String>,
    /// Host interfaces whose RDMA device the input's RDMA shared device plugin hands out (its
    /// `selectors.ifNames`): a macvlan network on one is that RDMA device's network.
    pub(crate) rdma_ports: Vec<String>,
    /// A MachineConfig that sets CRI-O's `default_ulimits` memlock to unlimited for every container of its
    /// nodes.
    pub(crate) runtime_memlock: Option<Origin>,
}

impl<'a> Input<'a> {
    /// Index the documents of one input.
    pub fn read(docs: &'a [Node]) -> Input<'a> {
        let mut input = Input::default();
        for doc in docs {
            input.object(doc);
            if text(doc, "kind") == Some("List")
                && let Some(Value::Seq(items)) = entry(doc, "items").map(|e| &e.node.value)
            {
                for item in items {
                    input.object(item);
                }
            }
        }
        input.name_sriov_resources();
        input
    }

    /// Where the input deploys the SR-IOV network device plugin with one prefix, the names of its
    /// ConfigMaps' resources are that prefix's, whole: the plugin names each `<prefix>/<resourceName>`,
    /// the entry's `resourcePrefix` else its `--resource-prefix` flag, default `intel.com`
    /// (k8snetworkplumbingwg/sriov-network-device-plugin `cmd/sriovdp/main.go`, `flagInit`). Two plugins
    /// of different prefixes leave the names compared after the prefix.
    fn name_sriov_resources(&mut self) {
        self.sriov_prefixes.sort_unstable();
        self.sriov_prefixes.dedup();
        let [prefix] = self.sriov_prefixes.as_slice() else {
            return;
        };
        for bare in &self.sriov_unprefixed {
            let default = qualified(bare, SRIOV_DEFAULT_PREFIX);
            let named = qualified(bare, prefix);
            for p in self.provided.iter_mut().filter(|p| **p == default) {
                p.clone_from(&named);
            }
            self.exact.push(named);
        }
    }

    fn object(&mut self, doc: &'a Node) {
        let kind = text(doc, "kind").unwrap_or("");
        let meta = entry(doc, "metadata").map(|e| &e.node);
        let name = meta.and_then(|m| text(m, "name")).unwrap_or("");
        let namespace = meta.and_then(|m| text(m, "namespace"));
        let spec = entry(doc, "spec").map(|e| &e.node);
        match kind {
            "NetworkAttachmentDefinition" => {
                let resource = meta
                    .and_then(|m| entry(m, "annotations"))
                    .and_then(|a| text(&a.node, "k8s.v1.cni.cncf.io/resourceName"))
                    .map(str::to_string);
                self.nads.push(NadObject {
                    name,
                    namespace,
                    resource,
                    master: None,
                    from: NadFrom::Input,
                    at: doc.origin,
                });
            }
            "SriovNetwork" | "SriovIBNetwork" => self.nads.push(operator_network(
                name,
                namespace,
                spec,
                NadFrom::SriovOperator,
                doc.origin,
            )),
            // The network operators' own network kinds each create a NAD of the same name in
            // `spec.networkNamespace` (sriov-network-operator's OVSNetwork; NVIDIA network-operator's
            // HostDeviceNetwork, whose resource it prefixes `nvidia.com/`, IPoIBNetwork, MacvlanNetwork).
            "OVSNetwork" | "HostDeviceNetwork" | "IPoIBNetwork" | "MacvlanNetwork" => {
                let from = if kind == "OVSNetwork" {
                    NadFrom::SriovOperator
                } else {
                    NadFrom::NetworkOperator
                };
                self.nads
                    .push(operator_network(name, namespace, spec, from, doc.origin));
            }
            "SriovNetworkNodePolicy" => {
                self.declares_resources = true;
                if let Some(r) = spec.and_then(|s| text(s, "resourceName")) {
                    self.provided.push(qualified(r, "openshift.io"));
                }
            }
            "NicClusterPolicy" => {
                self.declares_resources = true;
                let (resources, exact) = nic_cluster_resources(spec);
                self.provided.extend(resources);
                self.exact.extend(exact);
                self.rdma_ports.extend(shared_plugin_ports(spec));
            }
            "MachineConfig" if crio_memlock_unlimited(spec) => {
                self.runtime_memlock.get_or_insert(doc.origin);
            }
            "ConfigMap" => {
                if let Some(data) = entry(doc, "data") {
                    self.config_maps.push((name, &data.node));
                    if let Some(found) = config_map_resources(&data.node) {
                        self.declares_resources = true;
                        self.provided.extend(found.all);
                        self.exact.extend(found.exact);
                        self.sriov_unprefixed.extend(found.sriov_unprefixed);
                    }
                }
            }
            "DaemonSet" | "Deployment" => {
                let containers = spec
                    .and_then(|s| entry(s, "template"))
                    .and_then(|t| entry(&t.node, "spec"))
                    .and_then(|s| entry(&s.node, "containers"));
                if let Some(Value::Seq(containers)) = containers.map(|c| &c.node.value) {
                    self.sriov_prefixes
                        .extend(containers.iter().filter_map(sriov_plugin_prefix));
                }
            }
            "ComputeDomain" => {
                let channel = spec
                    .and_then(|s| entry(s, "channel"))
                    .and_then(|c| entry(&c.node, "resourceClaimTemplate"))
                    .and_then(|t| text(&t.node, "name"));
                self.compute_domains.push((name, channel));
            }
            "DeviceClass" => {
                if let Some(driver) = class_driver(spec) {
                    self.device_classes.push((name, driver));
                }
            }
            "ResourceClaimTemplate" => {
                self.claim_templates
                    .push(claim_template(name, spec, doc.origin));
            }
            _ => {}
        }
    }

    /// Does a fabric object of the input create the device resource `name`? The RDMA shared device
    /// plugin's names are compared whole (the prefix is in its config); the others' by the name after the
    /// prefix, which their deployment sets (`openshift.io` for the SR-IOV operator, `nvidia.com` when the
    /// network operator deploys the plugin).
    pub fn provides(&self, name: &str) -> bool {
        let bare = |n: &str| n.rsplit('/').next().unwrap_or(n).to_string();
        self.provided.iter().any(|p| {
            if self.exact.contains(p) {
                p == name
            } else {
                bare(p) == bare(name)
            }
        })
    }

    /// The device classes a pod claim of `template` asks for: from the ResourceClaimTemplate of the input,
    /// or, for a ComputeDomain's channel template, the IMEX channel class.
    pub fn classes_of(&self, template: &str) -> Vec<&'a str> {
        if let Some(t) = self.claim_templates.iter().find(|t| t.name == template) {
            return t.classes.clone();
        }
        if self
            .compute_domains
            .iter()
            .any(|(_, channel)| *channel == Some(template))
        {
            return vec![devices::IMEX_CHANNEL_CLASS];
        }
        Vec::new()
    }

    /// The NVIDIA GPUs a pod claim of `template` allocates, where the input has the template.
    pub fn nvidia_gpus_of(&self, template: &str) -> u64 {
        self.claim_templates
            .iter()
            .find(|t| t.name == template)
            .map_or(0, |t| t.nvidia_gpus)
    }

    /// Does a device class allocate NICs (by its name, or a DeviceClass of the input whose driver is dranet)?
    pub fn nic_class(&self, class: &str) -> bool {
        devices::nic_class(class) || self.pod_level_class(class)
    }

    /// Is a device class one whose driver acts on the whole pod (dranet: netdevs moved into the pod's
    /// network namespace and device nodes added to every container through NRI)?
    pub fn pod_level_class(&self, class: &str) -> bool {
        devices::pod_level_class(class)
            || self
                .device_classes
                .iter()
                .any(|(n, d)| *n == class && d == roce_model::fabric::dra::DRANET_DRIVER)
    }

    /// Is the network `n` (as a pod names it) a macvlan/ipvlan network on a port whose RDMA device the
    /// input's shared device plugin hands out?
    pub(crate) fn on_rdma_port(&self, n: &Network, pod_namespace: Option<&str>) -> bool {
        let ns = n.namespace.as_deref().or(pod_namespace);
        self.nads.iter().any(|nad| {
            nad.name == n.name
                && (ns.is_none() || nad.namespace.is_none() || nad.namespace == ns)
                && nad
                    .master
                    .is_some_and(|m| self.rdma_ports.iter().any(|p| p == m))
        })
    }

    /// Is `template` the channel template of a ComputeDomain in the input?
    pub fn is_channel_template(&self, template: &str) -> bool {
        self.classes_of(template)
            .contains(&devices::IMEX_CHANNEL_CLASS)
    }
}

/// Does the container say `securityContext.privileged: false` (which a controller's merge keeps)?
fn unprivileged(c: &Node) -> bool {
    entry(c, "securityContext")
        .and_then(|sc| entry(&sc.node, "privileged"))
        .is_some_and(|e| matches!(e.node.value, Value::Scalar(Scalar::Bool(false))))
}

/// Whether a node is YAML `true`: the boolean, not the string.
fn truthy(n: &Node) -> bool {
    matches!(n.value, Value::Scalar(Scalar::Bool(true)))
}

/// The NAD an operator's network kind creates: same name, in `spec.networkNamespace` (else the object's
/// namespace), its resource under the operator's prefix.
fn operator_network<'a>(
    name: &'a str,
    namespace: Option<&'a str>,
    spec: Option<&'a Node>,
    from: NadFrom,
    at: Origin,
) -> NadObject<'a> {
    // The operators' default prefixes; the deployment may set another (`NadFrom`).
    let prefix = if from == NadFrom::SriovOperator {
        "openshift.io"
    } else {
        "nvidia.com"
    };
    NadObject {
        name,
        namespace: spec.and_then(|s| text(s, "networkNamespace")).or(namespace),
        resource: spec
            .and_then(|s| text(s, "resourceName"))
            .map(|r| qualified(r, prefix)),
        master: spec.and_then(|s| text(s, "master")),
        from,
        at,
    }
}

/// The driver a DeviceClass selects, from the first CEL expression of its selectors.
fn class_driver(spec: Option<&Node>) -> Option<String> {
    let cel = spec
        .and_then(|s| entry(s, "selectors"))
        .and_then(|e| match &e.node.value {
            Value::Seq(items) => items
                .iter()
                .find_map(|i| entry(i, "cel").and_then(|c| text(&c.node, "expression"))),
            _ => None,
        });
    cel.and_then(driver_of)
}

/// A ResourceClaimTemplate's device classes, and the request forms Kueue refuses or judges.
fn claim_template<'a>(name: &'a str, spec: Option<&'a Node>, at: Origin) -> ClaimTemplate<'a> {
    let mut classes = Vec::new();
    let mut nvidia_gpus = 0;
    let mut shape = ClaimShape::default();
    let devices = spec
        .and_then(|s| entry(s, "spec"))
        .and_then(|s| entry(&s.node, "devices"));
    let requests = devices.and_then(|d| entry(&d.node, "requests"));
    if let Some(Value::Seq(items)) = requests.map(|r| &r.node.value) {
        for item in items {
            let exactly = entry(item, "exactly").map(|e| &e.node);
            // v1 nests the request under `exactly`; v1beta1 wrote the same fields on the request
            let fields = exactly.unwrap_or(item);
            let class = text(fields, "deviceClassName").or_else(|| text(item, "deviceClassName"));
            classes.extend(class);
            if class.and_then(devices::accelerator_class) == Some(Accelerator::Nvidia) {
                nvidia_gpus += requested_devices(fields);
            }
            if entry(item, "firstAvailable").is_some() {
                shape.refused.push(Refused::FirstAvailable);
            }
            if text(fields, "allocationMode") == Some("All") {
                shape.refused.push(Refused::AllocationModeAll);
            }
            if matches!(
                entry(fields, "adminAccess").map(|e| &e.node.value),
                Some(Value::Scalar(Scalar::Bool(true)))
            ) {
                shape.refused.push(Refused::AdminAccess);
            }
        }
    }
    shape.constraints = matches!(
        devices.and_then(|d| entry(&d.node, "constraints")).map(|e| &e.node.value),
        Some(Value::Seq(items)) if !items.is_empty()
    );
    ClaimTemplate {
        name,
        classes,
        nvidia_gpus,
        shape,
        at,
    }
}

/// How many devices a request allocates: its `count` (1 when unset, KEP-4381's ExactCount default), and
/// for `allocationMode: All` every matching device of the node, counted as two (several).
fn requested_devices(fields: &Node) -> u64 {
    if text(fields, "allocationMode") == Some("All") {
        return 2;
    }
    match entry(fields, "count").map(|e| &e.node.value) {
        Some(Value::Scalar(Scalar::Int(n))) => u64::try_from(*n).unwrap_or(0),
        _ => 1,
    }
}

/// The driver a DeviceClass's CEL selector names (`device.driver == "dra.net"`).
fn driver_of(cel: &str) -> Option<String> {
    let rest = cel.split("device.driver").nth(1)?;
    let rest = rest.trim_start().strip_prefix("==")?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    Some(body[..body.find(quote)?].to_string())
}

/// A device-plugin resource name with its prefix (`mlxnics` → `openshift.io/mlxnics`).
fn qualified(name: &str, prefix: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// The resources a NicClusterPolicy's RDMA shared device plugin creates: its `config` JSON lists
/// `configList[].resourceName`, prefixed by the entry's `resourcePrefix`, else `rdma/` (the plugin's
/// built-in default), and its SR-IOV device plugin's `resourceList[].resourceName`, prefixed `nvidia.com/`.
/// The network operator writes `config` as the plugin's `config.json` unchanged
/// (Mellanox/network-operator b06827e0 `manifests/state-rdma-shared-device-plugin/0050_…-config-map.yaml`),
/// and the plugin names each resource `<resourcePrefix>/<resourceName>`, taking `rdma` only where the prefix
/// is empty (Mellanox/k8s-rdma-shared-dev-plugin 410b0f32 `pkg/resources/resources_manager.go`
/// `ValidateConfigs`, `server.go` `newResourceServer`; no flag changes the default). The second list holds
/// the shared plugin's names, which are compared whole ([`Input::provides`]).
fn nic_cluster_resources(spec: Option<&Node>) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut exact = Vec::new();
    for (key, list, prefix) in [
        ("rdmaSharedDevicePlugin", "configList", "rdma"),
        ("sriovDevicePlugin", "resourceList", "nvidia.com"),
    ] {
        let Some(config) = spec
            .and_then(|s| entry(s, key))
            .and_then(|p| text(&p.node, "config"))
        else {
            continue;
        };
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(config) {
            let resources: Vec<String> = plugin_resources(&json, list, prefix)
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            if key == "rdmaSharedDevicePlugin" {
                exact.extend(resources.iter().cloned());
            }
            out.extend(resources);
        }
    }
    (out, exact)
}

/// The interfaces the NicClusterPolicy's RDMA shared device plugin selects by name (`configList[].selectors.ifNames`).
fn shared_plugin_ports(spec: Option<&Node>) -> Vec<String> {
    let Some(config) = spec
        .and_then(|s| entry(s, "rdmaSharedDevicePlugin"))
        .and_then(|p| text(&p.node, "config"))
    else {
        return Vec::new();
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(config) else {
        return Vec::new();
    };
    json.get("configList")
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
        .filter_map(|item| item.pointer("/selectors/ifNames")?.as_array())
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// Does a MachineConfig write a CRI-O drop-in (`/etc/crio/…`) whose `default_ulimits` makes memlock
/// unlimited? CRI-O sets each `"<name>=<soft>:<hard>"` of that list on every container it creates
/// (crio.conf(5), `default_ulimits`), so `ibv_reg_mr` needs no `IPC_LOCK` there. The file's text is the
/// Ignition `contents.source` data URL (percent-encoded, or `;base64,`), or Butane's `contents.inline`.
fn crio_memlock_unlimited(spec: Option<&Node>) -> bool {
    let files = spec
        .and_then(|s| entry(s, "config"))
        .and_then(|c| entry(&c.node, "storage"))
        .and_then(|s| entry(&s.node, "files"));
    let Some(Value::Seq(files)) = files.map(|f| &f.node.value) else {
        return false;
    };
    files.iter().any(|f| {
        let crio = text(f, "path").is_some_and(|p| p.starts_with("/etc/crio/"));
        let contents = entry(f, "contents").map(|c| &c.node);
        let body = contents
            .and_then(|c| text(c, "inline").map(str::to_string))
            .or_else(|| contents.and_then(|c| text(c, "source")).and_then(data_url));
        crio && body.is_some_and(|b| unlimited_memlock_ulimit(&b))
    })
}

/// The text of a `data:` URL (RFC 2397): percent-decoded, or base64 after `;base64,`.
fn data_url(url: &str) -> Option<String> {
    use base64::Engine as _;
    let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
    if head.ends_with(";base64") {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()?;
        return String::from_utf8(bytes).ok();
    }
    let bytes = data.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Does a CRI-O config's `default_ulimits` hold `memlock=-1:-1` (unlimited soft and hard)?
fn unlimited_memlock_ulimit(config: &str) -> bool {
    let Some(list) = config.split("default_ulimits").nth(1) else {
        return false;
    };
    let list = list.split(']').next().unwrap_or("");
    list.split(['"', '\'', ',', '[', '=', ' ', '\n'])
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0] == "memlock" && w[1].trim() == "-1:-1")
}

/// The resources a device plugin deployed from a ConfigMap creates: the plugins read a JSON file the
/// ConfigMap is mounted as (`/k8s-rdma-shared-dev-plugin/config.json`, `/etc/pcidp/config.json`), so the
/// ConfigMap is known by that file's shape, not its name. The RDMA shared device plugin lists
/// `configList[]` entries with `rdmaHcaMax` (default prefix `rdma`: `RdmaHcaResourcePrefix` in its
/// `pkg/types`); the SR-IOV network device plugin lists `resourceList[]` entries with `selectors` (default
/// prefix `intel.com`, its `--resource-prefix`). `None`: not a device plugin's config.
fn config_map_resources(data: &Node) -> Option<PluginResources> {
    let Value::Map(entries) = &data.value else {
        return None;
    };
    let mut found: Option<PluginResources> = None;
    for e in entries {
        let Value::Scalar(Scalar::Str(body)) = &e.node.value else {
            continue;
        };
        if !body.trim_start().starts_with('{') {
            continue;
        }
        let Ok(json) = serde_json::from_str::<serde_json::Value>(body) else {
            continue;
        };
        let items = |list: &str, marker: &str| {
            json.get(list)
                .and_then(|l| l.as_array())
                .is_some_and(|l| !l.is_empty() && l.iter().all(|i| i.get(marker).is_some()))
        };
        let (resources, shared) = if items("configList", "rdmaHcaMax") {
            (plugin_resources(&json, "configList", "rdma"), true)
        } else if items("resourceList", "selectors") {
            (
                plugin_resources(&json, "resourceList", SRIOV_DEFAULT_PREFIX),
                false,
            )
        } else {
            continue;
        };
        let found = found.get_or_insert_with(Default::default);
        for (name, own_prefix) in resources {
            if shared {
                found.exact.push(name.clone());
            } else if !own_prefix {
                found
                    .sriov_unprefixed
                    .push(name.rsplit('/').next().unwrap_or(&name).to_string());
            }
            found.all.push(name);
        }
    }
    found
}

/// The SR-IOV network device plugin's `--resource-prefix` default.
const SRIOV_DEFAULT_PREFIX: &str = "intel.com";

/// What a device plugin's ConfigMap creates ([`config_map_resources`]).
#[derive(Debug, Default)]
struct PluginResources {
    /// Every resource, with full names.
    all: Vec<String>,
    /// The RDMA shared device plugin's, whose names the config fixes whole.
    exact: Vec<String>,
    /// The SR-IOV network device plugin's that take the plugin's `--resource-prefix`, bare.
    sriov_unprefixed: Vec<String>,
}

/// The `--resource-prefix` of a container that runs the SR-IOV network device plugin, known by what the
/// plugin reads: its config at `/etc/pcidp` (the `--config-file` default, `/etc/pcidp/config.json`) or the
/// flag itself. Go's `flag` takes `-name` or `--name`, with `=value` or the value as the next argument.
fn sriov_plugin_prefix(container: &Node) -> Option<String> {
    let words = argv(container);
    let mut flag = None;
    for (i, w) in words.iter().enumerate() {
        let Some(rest) = w.strip_prefix("--").or_else(|| w.strip_prefix('-')) else {
            continue;
        };
        if let Some(value) = rest.strip_prefix("resource-prefix=") {
            flag = Some(value.to_string());
        } else if rest == "resource-prefix" {
            flag = words.get(i + 1).map(|v| (*v).to_string());
        }
    }
    let reads_config = match entry(container, "volumeMounts").map(|e| &e.node.value) {
        Some(Value::Seq(mounts)) => mounts
            .iter()
            .any(|m| text(m, "mountPath").is_some_and(|p| p.trim_end_matches('/') == "/etc/pcidp")),
        _ => false,
    };
    if flag.is_none() && !reads_config {
        return None;
    }
    Some(flag.unwrap_or_else(|| SRIOV_DEFAULT_PREFIX.to_string()))
}

/// `list[].resourceName` of a device plugin's JSON config, each with its `resourcePrefix` (the entry's, the
/// file's, else the plugin's `default_prefix`), and whether the config gave the prefix.
fn plugin_resources(
    json: &serde_json::Value,
    list: &str,
    default_prefix: &str,
) -> Vec<(String, bool)> {
    let own_prefix = json.get("resourcePrefix").and_then(|p| p.as_str());
    json.get(list)
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let name = item.get("resourceName").and_then(|n| n.as_str())?;
            let prefix = item
                .get("resourcePrefix")
                .and_then(|p| p.as_str())
                .or(own_prefix);
            let own = prefix.is_some() || name.contains('/');
            Some((qualified(name, prefix.unwrap_or(default_prefix)), own))
        })
        .collect()
}

/// A resource of the container: its request and limit as written.
#[derive(Debug, Clone)]
pub struct Resource<'a> {
    /// The resource name.
    pub name: &'a str,
    /// `requests` value.
    pub request: Option<String>,
    /// `limits` value.
    pub limit: Option<String>,
    /// Where (the limit, else the request).
    pub at: Origin,
}

impl Resource<'_> {
    /// The count the container gets: the limit (Kubernetes copies it into requests), else the request.
    pub fn count(&self) -> Option<u64> {
        self.limit
            .as_deref()
            .or(self.request.as_deref())?
            .parse()
            .ok()
    }
}

/// A pod-level `resourceClaims` entry.
#[derive(Debug, Clone)]
pub struct PodClaim<'a> {
    /// `name`.
    pub name: &'a str,
    /// `resourceClaimTemplateName`.
    pub template: Option<&'a str>,
    /// `resourceClaimName`.
    pub claim: Option<&'a str>,
    /// The device classes it asks for, where the input says.
    pub classes: Vec<&'a str>,
    /// Does it allocate NICs?
    pub nic: bool,
    /// Does its driver give the devices to the whole pod, listed by a container or not (dranet)?
    pub pod_level: bool,
    /// The NVIDIA GPUs it allocates (0 where the input does not have its template).
    pub nvidia_gpus: u64,
    /// Its place.
    pub at: Origin,
}

/// Where a variable's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvFrom {
    /// The container's `env`.
    Container,
    /// A ConfigMap of the input named in `envFrom`.
    ConfigMap,
    /// The launcher's `mpirun -x NAME=VALUE` (or `-x NAME` with the launcher's own value).
    Launcher,
    /// `--mca KEY VALUE` on the launcher's mpirun: Open MPI's `OMPI_MCA_KEY`.
    Mca,
}

/// One variable as a rank sees it.
#[derive(Debug, Clone)]
pub struct Var {
    /// The name.
    pub name: String,
    /// The value; `None` when it comes from `valueFrom` (known only at run time).
    pub value: Option<String>,
    /// Where it is set.
    pub from: EnvFrom,
    /// Its place (the value, else the name).
    pub at: Origin,
}

/// The pod's networks backed by one device-plugin resource ([`Wiring::attachments_by_resource`]).
#[derive(Debug, Clone)]
pub struct Backed<'w, 'a> {
    /// The resource, as the NAD names it (an operator's network under the operator's default prefix).
    pub resource: String,
    /// How many of the pod's attachments take a device of it.
    pub attachments: usize,
    /// The container's request for it (under the deployment's prefix for an operator's network).
    pub requested: Option<&'w Resource<'a>>,
    /// Every one of these networks is the SR-IOV operator's, whose network-resources-injector adds the
    /// requests a pod leaves out (on by default).
    pub injector_by_default: bool,
}

/// What one pod template's chosen container gets from the fabric.
#[derive(Debug, Clone, Default)]
pub struct Wiring<'a> {
    /// The Multus networks annotation's entries (parsed; empty when absent or unreadable).
    pub networks: Vec<Network<'a>>,
    /// The annotation's entry.
    pub multus: Option<&'a Entry>,
    /// A cloud's multi-network annotation (GKE `networking.gke.io/interfaces`).
    pub cloud_interfaces: Option<Origin>,
    /// `hostNetwork: true`.
    pub host_network: Option<Origin>,
    /// `privileged: true`.
    pub privileged: Option<Origin>,
    /// `IPC_LOCK` (or `CAP_IPC_LOCK`, or `ALL`) in `capabilities.add`.
    pub ipc_lock: Option<Origin>,
    /// The container's resources.
    pub resources: Vec<Resource<'a>>,
    /// The pod's claims.
    pub pod_claims: Vec<PodClaim<'a>>,
    /// The claim names the container lists in `resources.claims`.
    pub used_claims: Vec<(&'a str, Origin)>,
    /// The env a rank sees, in order: container env and ConfigMaps, then the launcher's (a name may appear
    /// more than once; the last wins).
    pub env: Vec<Var>,
    /// `envFrom` a ConfigMap or Secret not in the input, or a command that sources a script: variables
    /// not seen may still be set.
    pub env_unknown: bool,
    /// `volumeMounts`: name, mountPath, place.
    pub mounts: Vec<(&'a str, &'a str, Origin)>,
    /// `volumes`: name and the node of the volume.
    pub volumes: Vec<(&'a str, &'a Node)>,
    /// A `hostPath` volume of `/dev/infiniband`, mounted.
    pub dev_infiniband: Option<Origin>,
    /// An annotation that makes an admission webhook add RDMA devices at admission, and which webhook.
    pub rdma_injected: Option<(Origin, devices::RdmaInjector)>,
    /// The container's `command` then `args`.
    pub argv: Vec<&'a str>,
    /// Where the command is (`command`, else `args`).
    pub argv_at: Option<Origin>,
    /// Resources that back a network the pod attaches (a NAD's `k8s.v1.cni.cncf.io/resourceName`): the
    /// device plugin hands out the NIC itself (an SR-IOV VF, a host device).
    pub nic_resources: Vec<String>,
    /// The container runtime lifts the memlock limit for every container (a MachineConfig of the input).
    pub(crate) runtime_memlock: Option<Origin>,
    /// A network the pod names sits on a port of the input's RDMA shared device plugin.
    pub(crate) rdma_port_network: bool,
    /// The pod is built by a controller that merges a preset into it (KServe's LLMInferenceService): what
    /// the template leaves out may come from the preset, so a missing field is unknown, not missing.
    pub merged_with_preset: bool,
}

/// How a KV-transfer server moves KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvBackend {
    /// NIXL (its UCX backend by default).
    Nixl,
    /// Mooncake's transfer engine.
    Mooncake,
}

impl KvBackend {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            KvBackend::Nixl => "NIXL",
            KvBackend::Mooncake => "Mooncake",
        }
    }
}

/// How a pod gets its RDMA devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RdmaAccess {
    /// A device-plugin resource (`rdma/ib`, an SR-IOV VF resource, `vpc.amazonaws.com/efa`).
    Resource(String),
    /// A DRA claim of a NIC device class.
    Claim(String),
    /// A privileged container sees every device of the node. (A hostPath `/dev/infiniband` without it is
    /// not access: the device cgroup of an unprivileged container admits only the runtime's defaults and
    /// the devices a plugin or CDI adds, so opening `uverbsN` fails with EPERM.)
    Privileged,
    /// An admission webhook adds the devices (its annotation: [`devices::RDMA_INJECTORS`]).
    Injected,
    /// A cloud's multi-network annotation attaches RDMA NICs (GKE).
    CloudNetworks,
}

impl RdmaAccess {
    /// How the devices come, for messages.
    pub fn describe(&self) -> String {
        match self {
            RdmaAccess::Resource(r) => format!("the device-plugin resource {r}"),
            RdmaAccess::Claim(c) => format!("the DRA claim `{c}`"),
            RdmaAccess::Privileged => "a privileged container (every device of the node)".into(),
            RdmaAccess::Injected => "an admission webhook (its annotation on the pod)".into(),
            RdmaAccess::CloudNetworks => format!("the cloud's RDMA networks (`{GKE_INTERFACES}`)"),
        }
    }
}

impl<'a> Wiring<'a> {
    /// Read the wiring of `v`'s container. `launcher` is the launcher's view, whose `mpirun` sets the
    /// ranks' env in an MPI job.
    pub fn read(v: &PodView<'a>, input: &Input<'a>, launcher: Option<&PodView<'a>>) -> Wiring<'a> {
        let mut w = Wiring::default();
        w.pod(v, input);
        let Some((_, c)) = v.container else {
            return w;
        };
        w.security(c);
        // What the controller adds (KServe's data-parallel presets' IPC_LOCK): its place is the key the
        // container is written under.
        if w.ipc_lock.is_none()
            && v.added
                .capabilities
                .iter()
                .any(|cap| attach::grants(cap, IPC_LOCK))
        {
            w.ipc_lock = Some(v.containers_at.unwrap_or(c.origin));
        }
        if v.added.privileged && w.privileged.is_none() && !unprivileged(c) {
            // The controller makes the container privileged (a NodeSet's slurmd): its place is the key
            // the container is written under.
            w.privileged = Some(v.containers_at.unwrap_or(c.origin));
        }
        w.container_resources(c);
        w.volume_mounts(c);
        // What the controller mounts (a NIMService's /dev/shm) is there whatever the template says, unless
        // the container mounts something at the same path.
        for (name, path) in v.added.mounts {
            if !w
                .mounts
                .iter()
                .any(|(_, p, _)| p.trim_end_matches('/') == *path)
            {
                w.mounts
                    .push((name, path, v.containers_at.unwrap_or(c.origin)));
            }
        }
        w.argv = argv(c);
        w.argv_at = entry(c, "command")
            .or_else(|| entry(c, "args"))
            .map(|e| e.key.origin);
        w.env = container_env(c, input, &mut w.env_unknown);
        // A script that sources another, or an mpirun that forwards a list the shell computes (`-x
        // $ENV_VARS` of `${!NCCL*}`: the image's ENV), gives the ranks variables the manifest does not list;
        // a controller may run them with an env the container does not show (a Slurm job's).
        if v.added.env_elsewhere
            || sources_script(&w.argv)
            || mpirun::find(&w.argv).is_some_and(|i| i.expands)
            || sources_bash_env(&w.argv, &w.env)
        {
            w.env_unknown = true;
        }
        if let Some(l) = launcher {
            w.launcher_env(l, input);
        }
        w.nic_resources = w
            .attachments_by_resource(input, None)
            .into_iter()
            .map(|b| b.resource)
            .collect();
        w.runtime_memlock = input.runtime_memlock;
        w.rdma_port_network = w.networks.iter().any(|n| input.on_rdma_port(n, None));
        w
    }

    /// What the pod, not its container, has: the networks annotations, host networking, volumes and
    /// the DRA claims (resolved against the input's templates).
    fn pod(&mut self, v: &PodView<'a>, input: &Input<'a>) {
        if let Some(e) = v.multus {
            self.multus = Some(e);
            if let Value::Scalar(Scalar::Str(s)) = &e.node.value {
                self.networks = multus::parse(s).unwrap_or_default();
            }
        }
        self.cloud_interfaces = v
            .annotations
            .and_then(|a| entry(a, GKE_INTERFACES))
            .map(|e| e.node.origin);
        // On the pod's metadata, or on a PodSpec-shaped field of its own (OME's engine configs).
        self.rdma_injected = [
            v.annotations,
            v.spec
                .and_then(|s| entry(s, "annotations"))
                .map(|e| &e.node),
        ]
        .into_iter()
        .flatten()
        .flat_map(|a| {
            devices::RDMA_INJECTORS
                .iter()
                .filter_map(move |i| entry(a, i.annotation).map(|e| (e, i)))
        })
        .find(|(e, i)| {
            scalar(&e.node).is_some_and(|v| {
                if i.boolean {
                    v.eq_ignore_ascii_case("true")
                } else {
                    !v.trim().is_empty()
                }
            })
        })
        .map(|(e, i)| (e.node.origin, *i));
        let Some(spec) = v.spec else {
            return;
        };
        self.host_network = entry(spec, "hostNetwork")
            .filter(|e| truthy(&e.node))
            .map(|e| e.node.origin);
        if let Some(Value::Seq(items)) = entry(spec, "volumes").map(|e| &e.node.value) {
            self.volumes = items
                .iter()
                .filter_map(|i| Some((text(i, "name")?, i)))
                .collect();
        }
        if let Some(Value::Seq(items)) = entry(spec, "resourceClaims").map(|e| &e.node.value) {
            for i in items {
                let Some(name) = text(i, "name") else {
                    continue;
                };
                let template = text(i, "resourceClaimTemplateName");
                let classes = template.map(|t| input.classes_of(t)).unwrap_or_default();
                self.pod_claims.push(PodClaim {
                    name,
                    template,
                    claim: text(i, "resourceClaimName"),
                    nic: classes.iter().any(|k| input.nic_class(k)),
                    pod_level: classes.iter().any(|k| input.pod_level_class(k)),
                    nvidia_gpus: template.map_or(0, |t| input.nvidia_gpus_of(t)),
                    classes,
                    at: i.origin,
                });
            }
        }
    }

    /// `privileged`, and `IPC_LOCK` in any of its spellings (`CAP_IPC_LOCK`, `ALL`).
    fn security(&mut self, c: &'a Node) {
        let sc = entry(c, "securityContext").map(|e| &e.node);
        self.privileged = sc
            .and_then(|sc| entry(sc, "privileged"))
            .filter(|e| truthy(&e.node))
            .map(|e| e.node.origin);
        if let Some(Value::Seq(items)) = sc
            .and_then(|sc| entry(sc, "capabilities"))
            .and_then(|caps| entry(&caps.node, "add"))
            .map(|e| &e.node.value)
        {
            self.ipc_lock = items
                .iter()
                .find(|i| match &i.value {
                    Value::Scalar(Scalar::Str(s)) => attach::grants(s, IPC_LOCK),
                    _ => false,
                })
                .map(|i| i.origin);
        }
    }

    /// The container's resources (a TrainJob trainer's `resourcesPerNode`), limits and requests merged by
    /// name in the order first seen, and the claims it lists.
    fn container_resources(&mut self, c: &'a Node) {
        let resources = entry(c, "resources").or_else(|| entry(c, "resourcesPerNode"));
        for side in ["limits", "requests"] {
            let Some(Value::Map(entries)) = resources
                .and_then(|r| entry(&r.node, side))
                .map(|e| &e.node.value)
            else {
                continue;
            };
            for e in entries {
                let value = scalar(&e.node);
                let i = match self.resources.iter().position(|r| r.name == e.key.value) {
                    Some(i) => i,
                    None => {
                        self.resources.push(Resource {
                            name: &e.key.value,
                            request: None,
                            limit: None,
                            at: e.key.origin,
                        });
                        self.resources.len() - 1
                    }
                };
                if side == "limits" {
                    self.resources[i].limit = value;
                } else {
                    self.resources[i].request = value;
                }
            }
        }
        if let Some(Value::Seq(items)) = resources
            .and_then(|r| entry(&r.node, "claims"))
            .map(|e| &e.node.value)
        {
            self.used_claims = items
                .iter()
                .filter_map(|i| Some((text(i, "name")?, i.origin)))
                .collect();
        }
    }

    /// The container's mounts, and whether one of them is the host's `/dev/infiniband` (a `hostPath`
    /// volume of that path, mounted at it).
    fn volume_mounts(&mut self, c: &'a Node) {
        if let Some(Value::Seq(items)) = entry(c, "volumeMounts").map(|e| &e.node.value) {
            self.mounts = items
                .iter()
                .filter_map(|i| Some((text(i, "name")?, text(i, "mountPath")?, i.origin)))
                .collect();
        }
        self.dev_infiniband = self
            .mounts
            .iter()
            .find(|(name, path, _)| {
                path.trim_end_matches('/') == RDMA_DEVICE_DIR
                    && self.volumes.iter().any(|(v, node)| {
                        v == name
                            && entry(node, "hostPath")
                                .and_then(|h| text(&h.node, "path"))
                                .is_some_and(|p| p.trim_end_matches('/') == RDMA_DEVICE_DIR)
                    })
            })
            .map(|m| m.2);
    }

    /// The env a launcher's `mpirun` gives every rank: `-x NAME=VALUE`, `-x NAME` (the launcher's value),
    /// `--mca KEY VALUE` (as `OMPI_MCA_KEY`). A variable the rank's pod sets is replaced: mpirun's wins.
    fn launcher_env(&mut self, l: &PodView<'a>, input: &Input<'a>) {
        let Some((_, c)) = l.container else { return };
        let argv = argv(c);
        let mut unknown = false;
        let own = container_env(c, input, &mut unknown);
        let Some(inv) = mpirun::find(&argv) else {
            return;
        };
        if inv.expands {
            self.env_unknown = true;
        }
        let at = c.origin;
        for f in &inv.forwards {
            let value = match &f.value {
                // `-x NAME=${NAME}` in a script: the shell's value, known at run time only.
                Some(v) if v.contains('$') => None,
                Some(v) => Some(v.clone()),
                None => match own.iter().find(|v| v.name == f.name) {
                    Some(v) => v.value.clone(),
                    None if unknown => None,
                    None => continue,
                },
            };
            self.set(Var {
                name: f.name.clone(),
                value,
                from: EnvFrom::Launcher,
                at,
            });
        }
        for (key, value) in mca_params(&argv) {
            self.set(Var {
                name: format!("OMPI_MCA_{key}"),
                value: Some(value),
                from: EnvFrom::Mca,
                at,
            });
        }
    }

    /// A later source wins at run time ([`Wiring::var`] reads the last), but every source stays visible: the
    /// container runtime reads the container's own env (NVIDIA_IMEX_CHANNELS), not mpirun's.
    fn set(&mut self, var: Var) {
        self.env.push(var);
    }

    /// The variable as the rank sees it.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.env.iter().rev().find(|v| v.name == name)
    }

    /// How the container gets its RDMA devices, if it does.
    pub fn rdma_access(&self) -> Option<RdmaAccess> {
        if let Some(r) = self
            .resources
            .iter()
            .find(|r| devices::rdma_resource(r.name) && r.count().is_none_or(|n| n > 0))
        {
            return Some(RdmaAccess::Resource(r.name.to_string()));
        }
        // A device resource beside Multus attachments whose NADs are not in the input: the attachments'
        // NICs (the network-resources-injector convention: a NAD names the resource its devices come from).
        if !self.networks.is_empty()
            && let Some(r) = self
                .resources
                .iter()
                .find(|r| devices::device_resource(r.name))
        {
            return Some(RdmaAccess::Resource(r.name.to_string()));
        }
        if let Some(c) = self.nic_claims().next() {
            return Some(RdmaAccess::Claim(c.name.to_string()));
        }
        if self.privileged.is_some() {
            return Some(RdmaAccess::Privileged);
        }
        if self.rdma_injected.is_some() {
            return Some(RdmaAccess::Injected);
        }
        if self.cloud_interfaces.is_some() {
            return Some(RdmaAccess::CloudNetworks);
        }
        None
    }

    /// The pod's claims of NIC device classes that reach the container: listed in its `resources.claims`, or
    /// of a driver that works on the whole pod (dranet).
    pub fn nic_claims(&self) -> impl Iterator<Item = &PodClaim<'a>> {
        self.pod_claims.iter().filter(|c| {
            c.nic && (c.pod_level || self.used_claims.iter().any(|(u, _)| *u == c.name))
        })
    }

    /// The pod's claims whose devices the input does not say: a ResourceClaimTemplate or ResourceClaim
    /// applied apart from this input. One may be the NICs (a claim's devices reach the containers that
    /// list it, or the whole pod for a driver such as dranet), so RDMA access is unknown, not missing.
    pub fn unresolved_claims(&self) -> impl Iterator<Item = &PodClaim<'a>> {
        self.pod_claims.iter().filter(|c| c.classes.is_empty())
    }

    /// Can the container lock the memory RDMA registers?
    pub fn memlock(&self) -> bool {
        self.ipc_lock.is_some()
            || self.privileged.is_some()
            || self.rdma_injected.is_some_and(|(_, i)| i.memlock)
            || self.runtime_memlock.is_some()
    }

    /// The IMEX channel claim the container lists, if any: a claim of a ComputeDomain's channel template
    /// (in the input) or of the channel device class.
    pub fn imex_channel(&self) -> Option<&PodClaim<'a>> {
        self.pod_claims.iter().find(|c| {
            c.classes.contains(&devices::IMEX_CHANNEL_CLASS)
                && self.used_claims.iter().any(|(u, _)| *u == c.name)
        })
    }

    /// The accelerators the container asks for (resources, or DRA claims of GPU classes).
    pub fn accelerators(&self) -> Vec<Accelerator> {
        let mut out: Vec<Accelerator> = self
            .resources
            .iter()
            .filter(|r| r.count().is_none_or(|n| n > 0))
            .filter_map(|r| devices::accelerator_resource(r.name))
            .chain(self.pod_claims.iter().flat_map(|c| {
                c.classes
                    .iter()
                    .filter_map(|k| devices::accelerator_class(k))
            }))
            .chain(self.gpus_by_env().then_some(Accelerator::Nvidia))
            .collect();
        out.dedup();
        out
    }

    /// The NVIDIA GPUs the container asks for by the device plugin's resource (`nvidia.com/gpu`).
    pub fn nvidia_gpu_count(&self) -> Option<u64> {
        self.resources
            .iter()
            .find(|r| r.name == attach::GPU_RESOURCE)
            .and_then(Resource::count)
    }

    /// Does the container get more than one NVIDIA GPU (a count over 1, DRA claims it lists that allocate
    /// more than one, or `NVIDIA_VISIBLE_DEVICES` naming all or several)? Then it runs several ranks side by
    /// side.
    pub fn several_gpus(&self) -> bool {
        let by_resource = self
            .resources
            .iter()
            .filter(|r| devices::accelerator_resource(r.name) == Some(Accelerator::Nvidia))
            .any(|r| r.count().is_some_and(|n| n > 1));
        // The NVIDIA DRA driver hands a claim's GPUs to the containers that list it (CDI per container).
        let by_claim = self
            .pod_claims
            .iter()
            .filter(|c| self.used_claims.iter().any(|(u, _)| *u == c.name))
            .map(|c| c.nvidia_gpus)
            .sum::<u64>()
            > 1;
        let by_env = self.gpus_by_env()
            && self.var("NVIDIA_VISIBLE_DEVICES").is_some_and(|v| {
                v.value
                    .as_deref()
                    .is_some_and(|x| x.trim() == "all" || x.contains(','))
            });
        by_resource || by_claim || by_env
    }

    /// GPUs the NVIDIA container toolkit injects from the container's own `NVIDIA_VISIBLE_DEVICES` (`all`
    /// or a list; `none` and `void` give none). Only a privileged container counts: for an unprivileged one
    /// the toolkit honours the variable only where `accept-nvidia-visible-devices-envvar-when-unprivileged`
    /// is on, and the GPU Operator turns it off.
    fn gpus_by_env(&self) -> bool {
        self.privileged.is_some()
            && self.env.iter().any(|v| {
                v.name == "NVIDIA_VISIBLE_DEVICES"
                    && roce_model::fabric::env::read_at_container_creation(&v.name)
                    && matches!(v.from, EnvFrom::Container | EnvFrom::ConfigMap)
                    && v.value.as_deref().is_some_and(|x| {
                        let x = x.trim();
                        !x.is_empty() && x != "none" && x != "void"
                    })
            })
    }

    /// Does a GPU reach the container through a DRA claim (so `nvidia.com/gpu` would ask twice)?
    pub fn gpus_by_claim(&self) -> bool {
        self.pod_claims.iter().any(|c| {
            c.classes
                .iter()
                .any(|k| devices::accelerator_class(k).is_some())
        })
    }

    /// How many of the pod's Multus networks are none of `want` and no near miss of one (a misspelling, the
    /// right name in another namespace): the pod's own NADs, for its own rails or for other traffic.
    pub fn other_networks(
        &self,
        want: &[roce_model::model::NadRef],
        pod_namespace: Option<&str>,
    ) -> usize {
        self.networks
            .iter()
            .filter(|n| !want.iter().any(|nad| n.is(nad, pod_namespace)))
            .filter(|n| {
                !want.iter().any(|nad| nad.name().as_str() == n.name)
                    && roce_model::plumbing::suggest::closest(
                        &n.name,
                        want.iter().map(|w| w.name().as_str()),
                    )
                    .is_none()
            })
            .count()
    }

    /// Does the pod get its NICs without the profile's networks: DRA claims of NIC devices, a cloud's
    /// multi-network annotation, networks of its own with RDMA devices of its own, or at least as many
    /// networks of its own as the profile's that it lacks? (Its RDMA resource may be the profile's too:
    /// `rdma/ib` beside the pod's own NADs is still the pod's wiring.)
    pub fn nics_otherwise(
        &self,
        want: &[roce_model::model::NadRef],
        pod_namespace: Option<&str>,
    ) -> bool {
        if want.is_empty() {
            return false;
        }
        let missing = want
            .iter()
            .filter(|nad| !self.networks.iter().any(|n| n.is(nad, pod_namespace)))
            .count();
        // Networks of its own, none of the profile's, and RDMA devices from a resource of its own (SR-IOV VFs,
        // a shared RDMA device): another fabric's wiring, not a partial one. A storage network beside
        // nothing else is not.
        let own_fabric = !self.networks.is_empty()
            && missing == want.len()
            && (!self.nic_resources.is_empty()
                || self.rdma_port_network
                || matches!(
                    self.rdma_access(),
                    Some(RdmaAccess::Resource(_) | RdmaAccess::Claim(_))
                ));
        self.nic_claims().next().is_some()
            || self.cloud_interfaces.is_some()
            || self.rdma_injected.is_some_and(|(_, i)| i.networks)
            || own_fabric
            || (missing > 0 && self.other_networks(want, pod_namespace) >= missing)
    }

    /// How the pod moves KV cache, if it is a KV-transfer server: the serving engines' own switches (vLLM's
    /// `--kv-transfer-config` connector, SGLang's `--disaggregation-transfer-backend`, whose default is
    /// Mooncake whenever `--disaggregation-mode` is set).
    pub fn kv_backend(&self) -> Option<KvBackend> {
        // Each marker below holds `Connector` or `--disaggregation-` inside one word: a command with
        // neither (most) needs no joined text and no searches.
        if !self
            .argv
            .iter()
            .any(|a| a.contains("Connector") || a.contains("--disaggregation-"))
        {
            return None;
        }
        let all = self.argv.join(" ");
        let backend = |name: &str| {
            all.contains(&format!("--disaggregation-transfer-backend {name}"))
                || all.contains(&format!("--disaggregation-transfer-backend={name}"))
        };
        if all.contains("NixlConnector") || backend("nixl") {
            Some(KvBackend::Nixl)
        } else if all.contains("MooncakeConnector")
            || backend("mooncake")
            || (all.contains("--disaggregation-mode")
                && !all.contains("--disaggregation-transfer-backend"))
        {
            Some(KvBackend::Mooncake)
        } else {
            None
        }
    }

    /// The transfer protocol of vLLM's MooncakeConnector: the `--kv-transfer-config` JSON's
    /// `kv_connector_extra_config.mooncake_protocol`, "rdma" where it names none (vllm-project/vllm 5758059
    /// `distributed/kv_transfer/kv_connector/v1/mooncake_connector.py`, `MooncakeConnectorWorker.__init__`:
    /// `.get("mooncake_protocol", "rdma")`). `None`: no MooncakeConnector configuration (or one that is not
    /// JSON).
    pub fn vllm_mooncake_protocol(&self) -> Option<String> {
        let word = self.argv.iter().find(|a| a.contains("MooncakeConnector"))?;
        let config: serde_json::Value = serde_json::from_str(&word[word.find('{')?..]).ok()?;
        if config.get("kv_connector")?.as_str()? != "MooncakeConnector" {
            return None;
        }
        Some(
            config
                .pointer("/kv_connector_extra_config/mooncake_protocol")
                .and_then(|p| p.as_str())
                .unwrap_or("rdma")
                .to_string(),
        )
    }

    /// Does the pod get its RDMA devices in its own form: a device-plugin resource that is not the
    /// profile's, or a NIC claim that is not the profile's (another name, or the profile's name on a
    /// template of the pod's own, whose devices it chose there)? Then the profile's device-selecting
    /// variables are not the pod's.
    pub fn rdma_devices_own(&self, plan: &crate::Plan) -> bool {
        match self.rdma_access() {
            Some(RdmaAccess::Resource(r)) => !plan
                .wiring
                .as_ref()
                .is_some_and(|p| p.resources.iter().any(|(name, _)| name.as_str() == r)),
            Some(RdmaAccess::Claim(c)) => plan.dra_spec.nics.dra().is_none_or(|n| {
                n.claim().as_str() != c
                    || self.pod_claims.iter().any(|p| {
                        p.name == c && p.template.is_some_and(|t| t != n.template().as_str())
                    })
            }),
            _ => false,
        }
    }

    /// `NCCL_SHM_DISABLE=1`: NCCL's shared-memory transport is off (NCCL's env docs).
    pub fn nccl_shm_off(&self) -> bool {
        self.var("NCCL_SHM_DISABLE")
            .is_some_and(|v| v.value.as_deref().map(str::trim) == Some("1"))
    }

    /// Does the container run something that keeps data in /dev/shm, unless `NCCL_SHM_DISABLE=1`: Ray, whose
    /// object store lives there and falls back to /tmp, slowly, when it is small (Ray docs, "Memory
    /// Management"), or an NCCL
    /// program (by its command or its NCCL variables) with more than one GPU? NCCL's SHM transport links
    /// ranks of one host, and NCCL tells hosts apart by a hash of the hostname (`getHostHash`), which is the
    /// pod's own unless it runs in the host's network namespace: a pod with one GPU runs one rank, whose
    /// peers are all on other hosts.
    pub fn uses_shm_transports(&self) -> bool {
        const NCCL_PROGRAMS: &[&str] = &[
            "_perf",
            "torchrun",
            "torch.distributed",
            "deepspeed",
            "vllm",
            "sglang",
            "megatron",
            "accelerate launch",
        ];
        let all = self.argv.join(" ");
        let ray = ["ray start", "KUBERAY", "executor-backend ray"]
            .iter()
            .any(|p| all.contains(p));
        let nccl = NCCL_PROGRAMS.iter().any(|p| all.contains(p))
            || self
                .env
                .iter()
                .any(|v| v.name.starts_with(roce_model::fabric::env::NCCL_PREFIX));
        !self.nccl_shm_off() && (ray || (nccl && !self.lone_gpu()))
    }

    /// Does the container get exactly one NVIDIA GPU, in its own network namespace (so one rank that shares
    /// no host with another, [`Wiring::uses_shm_transports`])?
    pub(crate) fn lone_gpu(&self) -> bool {
        let by_resource: u64 = self
            .resources
            .iter()
            .filter(|r| devices::accelerator_resource(r.name) == Some(Accelerator::Nvidia))
            .filter_map(|r| r.count())
            .sum();
        let by_claim = self
            .pod_claims
            .iter()
            .any(|c| c.nvidia_gpus > 0 && self.used_claims.iter().any(|(u, _)| *u == c.name));
        by_resource == 1 && !by_claim && !self.gpus_by_env() && self.host_network.is_none()
    }

    /// Does the pod keep its replicas apart across NVLink domains (a spread constraint over a zone, a rack or
    /// `key`, or a required anti-affinity on `key`)? Then a required affinity on `key` would contradict it.
    pub fn spreads_over(&self, spec: Option<&Node>, key: &str) -> bool {
        let Some(spec) = spec else { return false };
        let keyed = |items: &[Node]| items.iter().any(|i| text(i, "topologyKey") == Some(key));
        // A spread over any domain coarser than a node (a zone, a rack) says the job spans them.
        let spread = matches!(
            entry(spec, "topologySpreadConstraints").map(|e| &e.node.value),
            Some(Value::Seq(items)) if items.iter().any(|i| {
                text(i, "topologyKey").is_some_and(|k| k != "kubernetes.io/hostname")
            })
        );
        let anti = entry(spec, "affinity")
            .and_then(|a| entry(&a.node, "podAntiAffinity"))
            .and_then(|p| entry(&p.node, "requiredDuringSchedulingIgnoredDuringExecution"))
            .is_some_and(|e| matches!(&e.node.value, Value::Seq(items) if keyed(items)));
        spread || anti
    }

    /// Is something mounted at `/dev/shm`?
    pub fn shm(&self) -> bool {
        self.mounts
            .iter()
            .any(|(_, p, _)| p.trim_end_matches('/') == "/dev/shm")
    }

    /// The Multus networks no NAD of the input defines although the input defines networks in the
    /// namespace they resolve in (an input that defines none, or none there, leaves them to the cluster).
    /// Names match across an unset namespace (both resolve where the manifest is applied).
    pub fn undefined_networks<'w>(
        &'w self,
        input: &'w Input<'a>,
        pod_namespace: Option<&'w str>,
    ) -> impl Iterator<Item = &'w Network<'a>> + 'w {
        self.networks.iter().filter(move |n| {
            let ns = n.namespace.as_deref().or(pod_namespace);
            let covered = input.nads.iter().any(|nad| nad.namespace == ns);
            let defined = input.nads.iter().any(|nad| {
                nad.name == n.name
                    && (ns.is_none() || nad.namespace.is_none() || nad.namespace == ns)
            });
            covered && !defined
        })
    }

    /// How many NICs the Multus annotation attaches whose NADs come from a device-plugin resource, by that
    /// resource (from the NADs of the input), with the container's request for it. Multus hands each
    /// attachment one device of its NAD's `k8s.v1.cni.cncf.io/resourceName` from those kubelet allocated to
    /// the pod, in annotation order (`getKubernetesDelegate`, `pkg/k8sclient/k8sclient.go`: `deviceID =
    /// entry.DeviceIDs[entry.Index]; entry.Index++`), and none once they run out.
    pub fn attachments_by_resource(
        &self,
        input: &Input<'a>,
        pod_namespace: Option<&str>,
    ) -> Vec<Backed<'_, 'a>> {
        let mut out: Vec<Backed<'_, 'a>> = Vec::new();
        for n in &self.networks {
            let ns = n.namespace.as_deref().or(pod_namespace);
            let Some((nad, r)) = input
                .nads
                .iter()
                .find(|nad| {
                    nad.name == n.name
                        && (ns.is_none() || nad.namespace.is_none() || nad.namespace == ns)
                })
                .and_then(|nad| Some((nad, nad.resource.as_deref()?)))
            else {
                continue;
            };
            let injector = nad.from == NadFrom::SriovOperator;
            match out.iter_mut().find(|b| b.resource == r) {
                Some(b) => {
                    b.attachments += 1;
                    b.injector_by_default &= injector;
                }
                None => {
                    // An operator's network names the resource under a prefix its deployment sets: the
                    // container's request of the same name under another prefix is the one the NAD means.
                    let bare = |x: &str| x.rsplit('/').next().unwrap_or(x).to_string();
                    let requested = self.resources.iter().find(|q| {
                        q.name == r || (nad.from != NadFrom::Input && bare(q.name) == bare(r))
                    });
                    out.push(Backed {
                        resource: r.to_string(),
                        attachments: 1,
                        requested,
                        injector_by_default: injector,
                    });
                }
            }
        }
        out
    }
}

/// A scalar's text (`1`, `"1"` alike).
fn scalar(n: &Node) -> Option<String> {
    match &n.value {
        Value::Scalar(Scalar::Str(s)) => Some(s.clone()),
        Value::Scalar(Scalar::Int(i)) => Some(i.to_string()),
        Value::Scalar(Scalar::Bool(b)) => Some(b.to_string()),
        Value::Scalar(Scalar::Float(f)) => Some(f.to_string()),
        _ => None,
    }
}

/// `command` then `args`, strings only.
pub fn argv(c: &Node) -> Vec<&str> {
    ["command", "args"]
        .iter()
        .filter_map(|k| entry(c, k))
        .flat_map(|e| match &e.node.value {
            Value::Seq(items) => items
                .iter()
                .map(|i| match &i.value {
                    Value::Scalar(Scalar::Str(s)) => s.as_str(),
                    _ => "",
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The container's `env` and its `envFrom` ConfigMaps of the input (`prefix` applied); a source not in the
/// input (a Secret, a ConfigMap defined elsewhere) sets `unknown`. Kubernetes lets `env` win over `envFrom`.
fn container_env(c: &Node, input: &Input<'_>, unknown: &mut bool) -> Vec<Var> {
    let mut out = Vec::new();
    if let Some(Value::Seq(items)) = entry(c, "envFrom").map(|e| &e.node.value) {
        for item in items {
            let prefix = text(item, "prefix").unwrap_or("");
            let cm = entry(item, "configMapRef").and_then(|r| text(&r.node, "name"));
            match cm.and_then(|name| input.config_maps.iter().find(|(n, _)| *n == name)) {
                Some((
                    _,
                    Node {
                        value: Value::Map(data),
                        ..
                    },
                )) => {
                    for d in data {
                        out.push(Var {
                            name: format!("{prefix}{}", d.key.value),
                            value: scalar(&d.node),
                            from: EnvFrom::ConfigMap,
                            at: d.node.origin,
                        });
                    }
                }
                _ => *unknown = true,
            }
        }
    }
    if let Some(Value::Seq(items)) = entry(c, "env").map(|e| &e.node.value) {
        for item in items {
            let Some(name) = text(item, "name") else {
                continue;
            };
            let value = entry(item, "value");
            out.retain(|v: &Var| v.name != name);
            out.push(Var {
                name: name.to_string(),
                value: value.and_then(|e| scalar(&e.node)).or_else(|| {
                    // `valueFrom`: known at run time only; no value at all is the empty string.
                    entry(item, "valueFrom").is_none().then(String::new)
                }),
                from: EnvFrom::Container,
                at: value.map_or(item.origin, |e| e.node.content.unwrap_or(e.node.origin)),
            });
        }
    }
    out
}

/// Does bash source the file `BASH_ENV` names before the command? bash started non-interactively (`bash -c
/// …`, `bash SCRIPT`) reads and executes it first (bash(1), INVOCATION); started as `sh`, or interactive
/// (`-i`), it does not.
fn sources_bash_env(argv: &[&str], env: &[Var]) -> bool {
    let set = env
        .iter()
        .rev()
        .find(|v| v.name == "BASH_ENV")
        .is_some_and(|v| v.value.as_deref().is_none_or(|x| !x.is_empty()));
    let bash = argv
        .first()
        .is_some_and(|a| a.rsplit('/').next() == Some("bash"));
    set && bash
        && !argv
            .iter()
            .skip(1)
            .take_while(|a| a.starts_with('-'))
            .any(|a| *a == "-i")
}

/// Does the command source a script (`source FILE`, `. FILE`), which may set any variable, or start its
/// ranks inside one it runs (`bash FILE`, `sh FILE`, `FILE.sh`, with no launcher of its own: `bash
/// train.sh`, not `bash check.sh && torchrun …`)? A script's exported variables reach the processes it
/// starts (bash(1), "ENVIRONMENT": exported variables are passed to executed commands), not its siblings.
fn sources_script(argv: &[&str]) -> bool {
    let program = |cmd: &str| {
        let first = cmd.split_whitespace().next().unwrap_or("");
        first.rsplit('/').next().unwrap_or(first).to_string()
    };
    let runs_file = |cmd: &str| {
        let mut words = cmd.split_whitespace();
        let first = words.next().unwrap_or("");
        let shell = matches!(program(cmd).as_str(), "bash" | "sh" | "dash" | "zsh");
        (shell
            && words
                .find(|w| !w.starts_with('-'))
                .is_some_and(|file| !file.starts_with(['"', '\'', '$'])))
            || first.ends_with(".sh")
    };
    // The argv itself (`[bash, /scripts/train.sh]`), or the commands of a `-c` script in it.
    let whole = argv.join(" ");
    let commands: Vec<&str> = std::iter::once(whole.as_str())
        .chain(argv.iter().flat_map(|a| a.split(['\n', ';', '&', '|'])))
        .map(str::trim_start)
        .collect();
    let launches = commands.iter().any(|c| {
        matches!(
            program(c).as_str(),
            "torchrun"
                | "mpirun"
                | "mpiexec"
                | "python"
                | "python3"
                | "deepspeed"
                | "accelerate"
                | "srun"
                | "vllm"
                | "all_reduce_perf"
        )
    });
    commands
        .iter()
        .any(|c| c.starts_with("source ") || c.starts_with(". "))
        || (!launches && commands.iter().any(|c| runs_file(c)))
}

/// Open MPI's `--mca KEY VALUE` (and `-mca`, `--gmca`) pairs of an argv or of a shell script in it.
pub(crate) fn mca_params(argv: &[&str]) -> Vec<(String, String)> {
    let words: Vec<String> = argv
        .iter()
        .flat_map(|a| {
            if a.contains(char::is_whitespace) {
                a.split_whitespace()
                    .map(|w| {
                        w.trim_matches(|c| c == '"' || c == '\'' || c == '\\')
                            .to_string()
                    })
                    .collect::<Vec<_>>()
            } else {
                vec![a.to_string()]
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if matches!(words[i].as_str(), "--mca" | "-mca" | "--gmca" | "-gmca") {
            if let (Some(k), Some(v)) = (words.get(i + 1), words.get(i + 2)) {
                out.push((k.clone(), v.clone()));
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn bash_env_is_sourced_by_non_interactive_bash() {
        let id = Sources::default().add(Source::new("p.yaml", String::new()));
        let var = |name: &str, value: Option<&str>| Var {
            name: name.into(),
            value: value.map(Into::into),
            from: EnvFrom::Container,
            at: Origin::new(id, 0..0),
        };
        let env = [var(
            "BASH_ENV",
            Some("/usr/local/gib/scripts/set_nccl_env.sh"),
        )];
        assert!(sources_bash_env(&["/bin/bash", "-c", "vllm serve"], &env));
        assert!(sources_bash_env(&["bash", "/run.sh"], &env));
        assert!(!sources_bash_env(&["/bin/sh", "-c", "vllm serve"], &env));
        assert!(!sources_bash_env(&["bash", "-i"], &env));
        assert!(!sources_bash_env(
            &["/bin/bash", "-c", "x"],
            &[var("BASH_ENV", Some(""))]
        ));
        assert!(!sources_bash_env(&["/bin/bash", "-c", "x"], &[]));
        // From a Secret or the downward API: a file may still be named.
        assert!(sources_bash_env(
            &["bash", "-c", "x"],
            &[var("BASH_ENV", None)]
        ));
    }

    /// A script the ranks start in hands them its exports; one run beside the launcher does not.
    #[test]
    fn ranks_started_inside_a_script_get_its_env() {
        assert!(sources_script(&[
            "bash",
            "-c",
            "set -xe\nbash /scripts/train.sh"
        ]));
        assert!(sources_script(&[
            "/bin/bash",
            "-c",
            "/opt/bin/train-script-gpu.sh 2>&1 | tee /data/log"
        ]));
        assert!(sources_script(&["bash", "/run.sh"]));
        assert!(sources_script(&[
            "sh",
            "-c",
            "source /env.sh && torchrun t.py"
        ]));
        // The launcher is the container's own: the check script's exports reach nothing.
        assert!(!sources_script(&[
            "sh",
            "-c",
            "bash /root/check.sh && torchrun --nnodes 2 t.py"
        ]));
        assert!(!sources_script(&["bash", "-c", "torchrun t.py"]));
        assert!(!sources_script(&["sleep", "infinity"]));
    }

    use super::*;
    use crate::apply::{templates, view};
    use roce_model::plumbing::manifest;
    use roce_model::source::{Source, Sources};

    /// The worker's wiring of a one-document MPIJob whose launcher runs `script` under `bash -c`.
    fn worker_env(script: &str) -> Vec<(String, Option<String>, EnvFrom)> {
        let text = format!(
            "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: m}}\nspec:\n  mpiReplicaSpecs:\n    Launcher:\n      template:\n        spec:\n          containers:\n          - name: l\n            image: x\n            command: [bash, -c]\n            args: [{script:?}]\n    Worker:\n      template:\n        spec:\n          containers:\n          - name: w\n            image: x\n            env: [{{name: NVIDIA_IMEX_CHANNELS, value: \"0\"}}]\n"
        );
        let mut sources = Sources::default();
        let id = sources.add(Source::new("m.yaml", text.clone()));
        let docs = manifest::parse(&text, id).unwrap();
        let input = Input::read(&docs);
        let (found, _) = templates::discover(&docs[0]).unwrap();
        let views: Vec<_> = found
            .iter()
            .map(|t| view::view(&docs[0], t, None).unwrap())
            .collect();
        let w = Wiring::read(&views[1], &input, Some(&views[0]));
        w.env
            .into_iter()
            .map(|v| (v.name, v.value, v.from))
            .collect()
    }

    #[test]
    fn a_rank_sees_the_launchers_values_and_keeps_its_own() {
        let env = worker_env(
            "until mpirun -x A hostname; do sleep 5; done; mpirun -np $((2*4)) -x NVIDIA_IMEX_CHANNELS=0 -x NCCL_SOCKET_IFNAME=${IFACE} -x NCCL_IB_HCA=mlx5 --mca pml ^ucx ./run",
        );
        let get = |n: &str| env.iter().rev().find(|(name, _, _)| name == n).cloned();
        // the job's mpirun, past the readiness loop and the arithmetic
        assert_eq!(get("NCCL_IB_HCA").unwrap().1.as_deref(), Some("mlx5"));
        // a value the launcher's shell expands is unknown
        assert_eq!(get("NCCL_SOCKET_IFNAME").unwrap().1, None);
        // `--mca pml ^ucx` is Open MPI's OMPI_MCA_pml
        assert_eq!(get("OMPI_MCA_pml").unwrap().1.as_deref(), Some("^ucx"));
        // the container's own NVIDIA_IMEX_CHANNELS stays visible beside the launcher's
        let imex: Vec<EnvFrom> = env
            .iter()
            .filter(|(n, _, _)| n == "NVIDIA_IMEX_CHANNELS")
            .map(|(_, _, f)| *f)
            .collect();
        assert_eq!(imex, [EnvFrom::Container, EnvFrom::Launcher]);
        assert!(get("A").is_none(), "the probe's forwards are not the job's");
    }
}
