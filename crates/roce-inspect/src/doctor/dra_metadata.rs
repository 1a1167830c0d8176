//! DRA device metadata (KEP-5304, "DRA Device Attributes Downward API"): which devices the pod's
//! ResourceClaims were allocated, as the DRA driver mounts them into the container.
//!
//! Kubernetes 1.36 (alpha) and 1.37 (beta) let a DRA driver expose, per claim request, a JSON file inside
//! the containers that requested it (kubernetes.io, "Access DRA Device Metadata" and "Observability of
//! Dynamic Resources" § device metadata protocol; the constants of
//! `k8s.io/dynamic-resource-allocation/api/metadata/types.go`):
//!
//! ```text
//! /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claimName>/<requestName>/<driverName>-metadata.json
//! /var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/<podClaimName>/<requestName>/<driverName>-metadata.json
//! ```
//!
//! The second form is for claims generated from a ResourceClaimTemplate (`<podClaimName>` is
//! `pod.spec.resourceClaims[].name`); with a prioritized list, `<requestName>` is the top-level request and
//! `requests[].name` inside carries `<request>/<subrequest>`. A file is a *stream* of `DeviceMetadata`
//! objects, one per API version the driver writes, newest first, all equivalent: a consumer uses the first
//! whose `apiVersion` it knows and skips the others (`metadata.resource.k8s.io/v1beta1`, required since
//! 1.37, and `v1alpha1`). Each object has `requests[].devices[]` with `driver`, `pool`, `name`,
//! `attributes` (ResourceSlice attributes: `{"string": …}`, `{"int": …}`, `{"bool": …}`, `{"version": …}`)
//! and, for network devices, `networkData` (`interfaceName`, `ips`, `hardwareAddress`, filled in before
//! the containers start). Types: `api/metadata/v1beta1/types.go`; a complete object:
//! `api/metadata/testdata/HEAD/metadata.json` (kubernetes/kubernetes, staging/src/k8s.io/dynamic-resource-allocation).
//!
//! This module is the reading logic only: [`MetadataFile::parse`] decodes one file's bytes, [`resolve`]
//! maps the devices it names onto the RDMA devices of sysfs. The fact layer
//! ([`facts::collect`](super::facts::collect)) lists and reads the files under a [`Root`](super::Root).
//!
//! Which attributes identify a NIC's RDMA device, as the drivers publish them:
//!
//! - the RDMA device name: `dra.net/rdmaDevice` (kubernetes-sigs/dranet `pkg/apis/attributes.go`,
//!   `AttrRDMADevice`, "the kernel RDMA link name (e.g. "bnxt_re12", "mlx5_0")");
//! - the PCI address: the standard `resource.kubernetes.io/pciBusID` (`k8s.io/dynamic-resource-allocation/
//!   deviceattribute`), `dra.net/pciAddress`, `sriovnetwork.k8snetworkplumbingwg.io/pciAddress`
//!   (k8snetworkplumbingwg/dra-driver-sriov `pkg/consts/consts.go`);
//! - the interface in the pod: `networkData.interfaceName`, `sriovnetwork.k8snetworkplumbingwg.io/interfaceName`
//!   (the SR-IOV driver adds it to the metadata, `pkg/devicestate/state.go` `buildMetadataAttributes`), and
//!   `dra.net/ifName` (the host's name, which dranet keeps unless the claim renames it);
//! - that it is an RDMA NIC at all: `dra.net/rdma`, `sriovnetwork.k8snetworkplumbingwg.io/rdmaCapable`.
//!
//! A name without a domain is in the device's driver's domain (`QualifiedName`, k8s.io/api
//! `resource/v1/types.go`), so a driver's own `rdmaDevice`, `pciAddress`, `ifName` or `interfaceName` is read
//! too. Of the NIC drivers, the SR-IOV DRA driver writes metadata (`--enable-device-metadata`, v1alpha1);
//! dranet, at kubernetes-sigs/dranet f258477, publishes the attributes above in its ResourceSlices but does
//! not enable device metadata yet.
//!
//! ```
//! use roce_inspect::doctor::dra_metadata::{ClaimKind, MetadataFile};
//! let json = br#"{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1",
//!   "metadata": {"name": "pod0-gpu-nic-x7k2p", "generation": 1}, "podClaimName": "gpu-nic",
//!   "requests": [{"name": "nic", "devices": [{"driver": "dra.net", "pool": "node-1", "name": "pci-0000-0c-00-0",
//!     "attributes": {"dra.net/rdmaDevice": {"string": "mlx5_0"}, "dra.net/rdma": {"bool": true}}}]}]}"#;
//! let f = MetadataFile::parse(ClaimKind::ResourceClaimTemplate, "gpu-nic", "nic", "dra.net-metadata.json", Some(json));
//! assert_eq!(f.path, "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu-nic/nic/dra.net-metadata.json");
//! assert_eq!(f.error, None);
//! assert_eq!(f.devices[0].rdma_device.as_ref().unwrap().value, "mlx5_0");
//! assert!(f.devices[0].is_nic());
//! ```

use serde::Serialize;
use serde_json::Value;

use super::device::RdmaDevice;

/// The directory inside the container that holds every metadata file (`ContainerDir`).
pub const CONTAINER_DIR: &str = "/var/run/kubernetes.io/dra-device-attributes";
/// The file name's suffix after the driver name (`MetadataFileSuffix`).
pub const FILE_SUFFIX: &str = "-metadata.json";
/// The object kind of every metadata object.
pub const KIND: &str = "DeviceMetadata";
/// The API versions roce reads, in order of preference; a stream's objects of other versions are skipped.
pub const API_VERSIONS: [&str; 2] = [
    "metadata.resource.k8s.io/v1beta1",
    "metadata.resource.k8s.io/v1alpha1",
];
/// Most bytes read from one metadata file (a request's devices, at most 32 attributes each, once per
/// API version, stay far below this).
pub const FILE_LIMIT: u64 = 1024 * 1024;

/// Attributes naming the device's RDMA device (its name in `/sys/class/infiniband`).
pub const RDMA_DEVICE_ATTRIBUTES: &[&str] = &["dra.net/rdmaDevice"];
/// Attributes naming the device's PCI address (`0000:3b:00.0`).
pub const PCI_ATTRIBUTES: &[&str] = &[
    "resource.kubernetes.io/pciBusID",
    "dra.net/pciAddress",
    "sriovnetwork.k8snetworkplumbingwg.io/pciAddress",
];
/// Attributes naming the device's network interface (after `networkData.interfaceName`).
pub const INTERFACE_ATTRIBUTES: &[&str] = &[
    "sriovnetwork.k8snetworkplumbingwg.io/interfaceName",
    "dra.net/ifName",
];
/// Boolean attributes saying the device is (or is not) an RDMA-capable NIC.
pub const RDMA_CAPABLE_ATTRIBUTES: &[&str] = &[
    "dra.net/rdma",
    "sriovnetwork.k8snetworkplumbingwg.io/rdmaCapable",
];
/// The same, as a driver names them in its own domain (unqualified, or `<driver>/<name>`).
const OWN_RDMA_DEVICE: &[&str] = &["rdmaDevice"];
const OWN_PCI: &[&str] = &["pciAddress", "pciBusID"];
const OWN_INTERFACE: &[&str] = &["interfaceName", "ifName"];
const OWN_RDMA_CAPABLE: &[&str] = &["rdma", "rdmaCapable"];
/// How an interface name from `networkData` is named in [`Ident::key`].
pub const NETWORK_DATA_INTERFACE: &str = "networkData.interfaceName";

/// Which of the two directories a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// `resourceclaims/<claimName>/…`: a claim the pod references by name.
    ResourceClaim,
    /// `resourceclaimtemplates/<podClaimName>/…`: a claim generated from a template.
    ResourceClaimTemplate,
}

impl ClaimKind {
    /// Both, in the order they are read.
    pub const ALL: [ClaimKind; 2] = [ClaimKind::ResourceClaim, ClaimKind::ResourceClaimTemplate];

    /// The subdirectory of [`CONTAINER_DIR`] (`ResourceClaimsSubDir`, `ResourceClaimTemplatesSubDir`).
    pub fn subdir(self) -> &'static str {
        match self {
            ClaimKind::ResourceClaim => "resourceclaims",
            ClaimKind::ResourceClaimTemplate => "resourceclaimtemplates",
        }
    }
}

/// An identifying value and where it came from: `dra.net/rdmaDevice` = `mlx5_0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ident {
    /// The attribute (fully qualified), or [`NETWORK_DATA_INTERFACE`].
    pub key: String,
    /// Its value.
    pub value: String,
}

impl std::fmt::Display for Ident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// One allocated device, as a metadata file names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetaDevice {
    /// `requests[].name`: the request, `<request>/<subrequest>` with a prioritized list.
    pub request: String,
    /// The DRA driver.
    pub driver: String,
    /// Its resource pool.
    pub pool: String,
    /// The device's name in the pool.
    pub name: String,
    /// Its RDMA device, when an attribute names it.
    pub rdma_device: Option<Ident>,
    /// Its PCI address, when an attribute names it.
    pub pci_address: Option<Ident>,
    /// Its network interface: `networkData.interfaceName`, else an attribute.
    pub interface: Option<Ident>,
    /// An RDMA-capable attribute's value.
    pub rdma_capable: Option<bool>,
    /// Whether the driver filled in `networkData` (only network devices have it).
    pub network_data: bool,
}

impl MetaDevice {
    /// Does the metadata say this is a NIC (an RDMA device or interface named, `networkData`, or an
    /// RDMA-capable attribute that is true)? A device that says none of this (a GPU) is a NIC only if its
    /// PCI address is an RDMA device's ([`resolve`]).
    pub fn is_nic(&self) -> bool {
        self.rdma_device.is_some()
            || self.interface.is_some()
            || self.network_data
            || self.rdma_capable == Some(true)
    }

    /// `dra.net device node-1/pci-0000-0c-00-0`.
    pub fn label(&self) -> String {
        format!("{} device {}/{}", self.driver, self.pool, self.name)
    }
}

/// One metadata file and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataFile {
    /// Its path in the container.
    pub path: String,
    /// Which directory it is in.
    pub claim_kind: ClaimKind,
    /// The claim's name in the path (`claimName`, or `podClaimName` for a template's claim).
    pub claim: String,
    /// The request's name in the path.
    pub request: String,
    /// The driver, from the file name.
    pub driver: String,
    /// The API version of the object read.
    pub api_version: Option<String>,
    /// Its `metadata.generation`.
    pub generation: Option<i64>,
    /// The devices of every request of the object read.
    pub devices: Vec<MetaDevice>,
    /// Why nothing was read from it: unreadable, empty (a driver that fills it in late has not yet), not
    /// JSON, no object of a version roce reads.
    pub error: Option<String>,
}

impl MetadataFile {
    /// The path relative to [`CONTAINER_DIR`]: `resourceclaimtemplates/gpu-nic/nic/dra.net-metadata.json`.
    pub fn relative_path(&self) -> &str {
        self.path
            .strip_prefix(CONTAINER_DIR)
            .map_or(self.path.as_str(), |p| p.trim_start_matches('/'))
    }

    /// Decode the file `file_name` (`<driver>-metadata.json`) of request `request` of claim `claim`, whose
    /// bytes are `contents` (`None`: it could not be read).
    pub fn parse(
        kind: ClaimKind,
        claim: &str,
        request: &str,
        file_name: &str,
        contents: Option<&[u8]>,
    ) -> MetadataFile {
        let driver = file_name
            .strip_suffix(FILE_SUFFIX)
            .unwrap_or(file_name)
            .to_string();
        let mut file = MetadataFile {
            path: format!(
                "{CONTAINER_DIR}/{}/{claim}/{request}/{file_name}",
                kind.subdir()
            ),
            claim_kind: kind,
            claim: claim.to_string(),
            request: request.to_string(),
            driver,
            api_version: None,
            generation: None,
            devices: Vec::new(),
            error: None,
        };
        match contents.map(decode) {
            None => file.error = Some("unreadable".to_string()),
            Some(Err(e)) => file.error = Some(e),
            Some(Ok(object)) => {
                file.api_version = object["apiVersion"].as_str().map(str::to_string);
                file.generation = object["metadata"]["generation"].as_i64();
                file.devices = devices(&object);
            }
        }
        file
    }
}

/// The first object of the stream whose `apiVersion` roce reads.
fn decode(bytes: &[u8]) -> Result<Value, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("empty: a driver that writes its metadata late has not written it".to_string());
    }
    let mut seen: Vec<String> = Vec::new();
    for value in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
        let value = value.map_err(|e| format!("not a JSON stream: {e}"))?;
        let version = value["apiVersion"].as_str().unwrap_or("no apiVersion");
        if value["kind"] == KIND && API_VERSIONS.contains(&version) {
            return Ok(value);
        }
        seen.push(format!(
            "{} {version}",
            value["kind"].as_str().unwrap_or("?")
        ));
    }
    Err(format!(
        "no {KIND} of {} (found: {})",
        API_VERSIONS.join(" or "),
        if seen.is_empty() {
            "nothing".to_string()
        } else {
            seen.join(", ")
        }
    ))
}

fn devices(object: &Value) -> Vec<MetaDevice> {
    let mut out = Vec::new();
    for request in object["requests"].as_array().into_iter().flatten() {
        let request_name = request["name"].as_str().unwrap_or_default();
        for d in request["devices"].as_array().into_iter().flatten() {
            let driver = d["driver"].as_str().unwrap_or_default().to_string();
            let attrs: Vec<(String, &Value)> = d["attributes"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (qualified(k, &driver), v))
                .collect();
            let find = |known: &[&str], own: &[&str]| -> Option<Ident> {
                let keys = known
                    .iter()
                    .map(|k| k.to_string())
                    .chain(own.iter().map(|n| format!("{driver}/{n}")));
                for key in keys {
                    if let Some(value) = attrs
                        .iter()
                        .find(|(k, _)| *k == key)
                        .and_then(|(_, v)| v["string"].as_str())
                        .filter(|v| !v.is_empty())
                    {
                        return Some(Ident {
                            key,
                            value: value.to_string(),
                        });
                    }
                }
                None
            };
            let network_interface = d["networkData"]["interfaceName"]
                .as_str()
                .filter(|v| !v.is_empty())
                .map(|v| Ident {
                    key: NETWORK_DATA_INTERFACE.to_string(),
                    value: v.to_string(),
                });
            let rdma_capable = RDMA_CAPABLE_ATTRIBUTES
                .iter()
                .map(|k| k.to_string())
                .chain(OWN_RDMA_CAPABLE.iter().map(|n| format!("{driver}/{n}")))
                .find_map(|key| {
                    attrs
                        .iter()
                        .find(|(k, _)| *k == key)
                        .and_then(|(_, v)| v["bool"].as_bool())
                });
            out.push(MetaDevice {
                request: request_name.to_string(),
                rdma_device: find(RDMA_DEVICE_ATTRIBUTES, OWN_RDMA_DEVICE),
                pci_address: find(PCI_ATTRIBUTES, OWN_PCI),
                interface: network_interface.or_else(|| find(INTERFACE_ATTRIBUTES, OWN_INTERFACE)),
                rdma_capable,
                network_data: d["networkData"].is_object(),
                pool: d["pool"].as_str().unwrap_or_default().to_string(),
                name: d["name"].as_str().unwrap_or_default().to_string(),
                driver,
            });
        }
    }
    out
}

/// An attribute name with its domain: a name without one is in the driver's domain.
fn qualified(key: &str, driver: &str) -> String {
    if key.contains('/') {
        key.to_string()
    } else {
        format!("{driver}/{key}")
    }
}

/// A metadata NIC and the RDMA device it is in sysfs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimedNic {
    /// The file that names it.
    pub file: String,
    /// The claim (as in the path).
    pub claim: String,
    /// The request (`requests[].name`).
    pub request: String,
    /// The device, as the metadata names it.
    pub device: MetaDevice,
    /// The RDMA device in `/sys/class/infiniband` it is; `None` when none matches.
    pub rdma_device: Option<String>,
    /// What matched it: the identifier whose value is the sysfs device's.
    pub matched_by: Option<Ident>,
}

impl ClaimedNic {
    /// The identifiers the metadata gives, for messages: `dra.net/rdmaDevice=mlx5_9`.
    pub fn identifiers(&self) -> String {
        let d = &self.device;
        let ids: Vec<String> = [&d.rdma_device, &d.pci_address, &d.interface]
            .into_iter()
            .flatten()
            .map(ToString::to_string)
            .collect();
        if ids.is_empty() {
            "no RDMA device, PCI address or interface named".to_string()
        } else {
            ids.join(", ")
        }
    }
}

/// What the metadata files say about the pod's NICs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Allocation {
    /// Every NIC the files name (in file order), with its sysfs RDMA device when one matches.
    pub nics: Vec<ClaimedNic>,
    /// Files read that name no NIC (a GPU's).
    pub other_files: Vec<String>,
    /// Files that could not be used, with why.
    pub unreadable: Vec<(String, String)>,
}

impl Allocation {
    /// Does the metadata name any NIC?
    pub fn has_nics(&self) -> bool {
        !self.nics.is_empty()
    }

    /// The sysfs RDMA devices the claims were allocated, each once, in metadata order.
    pub fn rdma_devices(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for n in &self.nics {
            if let Some(d) = n.rdma_device.as_deref()
                && !out.contains(&d)
            {
                out.push(d);
            }
        }
        out
    }

    /// The NICs no sysfs RDMA device matches.
    pub fn absent(&self) -> impl Iterator<Item = &ClaimedNic> {
        self.nics.iter().filter(|n| n.rdma_device.is_none())
    }
}

/// Map the devices the files name onto sysfs's RDMA `devices`: by RDMA device name, else by PCI address
/// (the device's `device` link), else by interface (a netdev of its PCI function). A device that matches
/// none is a NIC of the allocation only if the metadata says it is one ([`MetaDevice::is_nic`]): a GPU's
/// PCI address matches no RDMA device and is not reported.
pub fn resolve(files: &[MetadataFile], devices: &[RdmaDevice]) -> Allocation {
    let mut out = Allocation::default();
    for f in files {
        if let Some(e) = &f.error {
            out.unreadable
                .push((f.relative_path().to_string(), e.clone()));
            continue;
        }
        let mut any = false;
        for d in &f.devices {
            let by_name = d
                .rdma_device
                .as_ref()
                .and_then(|i| devices.iter().find(|r| r.name == i.value).map(|r| (r, i)));
            let by_pci = || {
                d.pci_address.as_ref().and_then(|i| {
                    devices
                        .iter()
                        .find(|r| {
                            r.pci
                                .as_deref()
                                .is_some_and(|p| p.eq_ignore_ascii_case(&i.value))
                        })
                        .map(|r| (r, i))
                })
            };
            let by_interface = || {
                d.interface.as_ref().and_then(|i| {
                    devices
                        .iter()
                        .find(|r| r.netdevs.contains(&i.value))
                        .map(|r| (r, i))
                })
            };
            let found = by_name.or_else(by_pci).or_else(by_interface);
            if found.is_none() && !d.is_nic() {
                continue;
            }
            any = true;
            out.nics.push(ClaimedNic {
                file: f.relative_path().to_string(),
                claim: f.claim.clone(),
                request: d.request.clone(),
                device: d.clone(),
                rdma_device: found.map(|(r, _)| r.name.clone()),
                matched_by: found.map(|(_, i)| i.clone()),
            });
        }
        if !any {
            out.other_files.push(f.relative_path().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> MetadataFile {
        MetadataFile::parse(
            ClaimKind::ResourceClaim,
            "nics",
            "nic",
            "x.example.com-metadata.json",
            Some(json.as_bytes()),
        )
    }

    #[test]
    fn the_first_known_version_of_the_stream_is_read() {
        let f = parse(
            r#"{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v2", "requests": []}
{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1alpha1", "metadata": {"generation": 3},
 "requests": [{"name": "nic", "devices": [{"driver": "x.example.com", "pool": "p", "name": "d0",
   "attributes": {"rdmaDevice": {"string": "mlx5_3"}, "pciAddress": {"string": "0000:3b:00.0"}}}]}]}"#,
        );
        assert_eq!(f.error, None);
        assert_eq!(
            f.api_version.as_deref(),
            Some("metadata.resource.k8s.io/v1alpha1")
        );
        assert_eq!(f.generation, Some(3));
        // Unqualified names are the driver's own.
        let d = &f.devices[0];
        assert_eq!(
            d.rdma_device.as_ref().unwrap().key,
            "x.example.com/rdmaDevice"
        );
        assert_eq!(d.pci_address.as_ref().unwrap().value, "0000:3b:00.0");
        assert_eq!(f.driver, "x.example.com");
    }

    #[test]
    fn what_cannot_be_read_says_why() {
        assert!(parse("").error.unwrap().starts_with("empty"));
        assert!(parse("{").error.unwrap().starts_with("not a JSON stream"));
        assert_eq!(
            parse(r#"{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v9"}"#)
                .error
                .unwrap(),
            "no DeviceMetadata of metadata.resource.k8s.io/v1beta1 or metadata.resource.k8s.io/v1alpha1 (found: DeviceMetadata metadata.resource.k8s.io/v9)"
        );
        let f = MetadataFile::parse(
            ClaimKind::ResourceClaimTemplate,
            "c",
            "r",
            "d-metadata.json",
            None,
        );
        assert_eq!(f.error.as_deref(), Some("unreadable"));
        assert_eq!(
            f.relative_path(),
            "resourceclaimtemplates/c/r/d-metadata.json"
        );
    }

    #[test]
    fn network_data_names_the_interface_first() {
        let f = parse(
            r#"{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1",
 "requests": [{"name": "nic", "devices": [{"driver": "dra.net", "pool": "p", "name": "d0",
   "attributes": {"dra.net/ifName": {"string": "ens3f0"}, "dra.net/rdma": {"bool": false}},
   "networkData": {"interfaceName": "net1", "ips": ["10.0.0.2/24"]}}]}]}"#,
        );
        let d = &f.devices[0];
        assert_eq!(
            d.interface.as_ref().unwrap().to_string(),
            "networkData.interfaceName=net1"
        );
        assert_eq!(d.rdma_capable, Some(false));
        assert!(d.is_nic());
    }
}
