//! The profile's fields, one entry each: its key in both syntaxes, its kind, its docs, the variable it
//! sets, its `roce diff` label. The walker reads keys, kinds and ranges from here; the JSON Schema
//! (`docs/profile.schema.json`) and the key tables of `docs/reference.md` are generated from it.
//!
//! KDL and YAML spell every key the same; they differ in how a section's positional key is written
//! (`fabric roce` in KDL, `fabric: roce` or `fabric: {kind: roce}` in YAML) and in `profile "NAME"`,
//! which YAML writes as `name: NAME`. Both are the section's [`Section::positional`].
//!
//! An entry's `bind` says how the walker reads its value into the model and how `roce diff` shows it
//! (`fields::bind`), so a bound field has no line in `walk.rs` or `diff.rs`.
//!
//! This file depends on nothing but std and its parent's `Bind`, `bind!` and the fabric facts it quotes
//! (`min_rdma_core!`, `CAPABILITIES`): `build.rs` compiles it with the KDL front end, which takes its positional keys from
//! here, and gives it a `bind!` that writes `None` and stand-ins for the facts.

use super::{CAPABILITIES, min_rdma_core};

/// A map of keys: the profile itself, or one of its sections.
#[derive(Debug)]
pub(crate) struct Section {
    /// Dotted path from the top (`""` for the profile, `node-pool.rdma-resource`).
    pub path: &'static str,
    /// The key a leading KDL argument fills (`fabric roce` → `kind`).
    pub positional: Option<&'static str>,
    /// The short form's schema description, when a lone scalar may stand for the positional key
    /// (`fabric: infiniband`, `multus none`).
    pub short: Option<&'static str>,
    /// Its keys, in the order `roce diff` lists them.
    pub fields: &'static [Field],
}

/// One key of a section.
#[derive(Debug)]
pub(crate) struct Field {
    /// The key, the same in KDL and YAML.
    pub key: &'static str,
    /// What the value may be.
    pub kind: Kind,
    /// One line, the JSON Schema's description.
    pub summary: &'static str,
    /// Whether the profile must have it.
    pub req: Req,
    /// The values of the section's positional key under which the key exists (empty: always).
    pub when: &'static [&'static str],
    /// The variables it sets directly (`fabric::env::TYPED`, which a test holds to this).
    #[cfg_attr(not(test), allow(dead_code))]
    pub env: &'static [&'static str],
    /// Its label in `roce diff`.
    pub diff: Diff,
    /// Its rows in the key tables of `docs/reference.md` (none: the section's prose documents it), which
    /// a test writes there.
    #[cfg_attr(not(test), allow(dead_code))]
    pub rows: &'static [Row],
    /// How the walker reads it into the model and `roce diff` shows it (none: their own code does).
    pub bind: Option<&'static dyn super::Bind>,
}

/// What a value may be.
#[derive(Debug)]
pub(crate) enum Kind {
    /// A string, matching `pattern` where the walker checks its form.
    Str { pattern: Option<&'static str> },
    /// A whole number in `min..=max`.
    Int { min: u32, max: u32 },
    /// A boolean.
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of strings, or one string; each one of `choices` where given.
    Strings {
        choices: Option<&'static [&'static str]>,
    },
    /// `rails pod-device`: a name pattern, or a list of device names (`list`: that form's description).
    DeviceNames { list: &'static str },
    /// A map of label or annotation keys to strings.
    Labels,
    /// A map of variable names to strings or integers; names start with `prefix` where given.
    Env { prefix: Option<&'static str> },
    /// A map of these keys.
    Section(&'static Section),
    /// A map of names the author chooses, each to a map of these keys (`host-mounts`).
    Named(&'static Section),
}

/// Whether a profile must have a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Req {
    /// It may be left out.
    Optional,
    /// The merged profile must have it, where its section applies; a layer may inherit it.
    Merged,
    /// Every file must have it, `extends` or not.
    Always,
}

/// A field's label in `roce diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Diff {
    /// Its dotted path (`fabric.traffic-class`; a map's entries are `env.NAME`).
    Path,
    /// Another label.
    As(&'static str),
    /// Not compared on its own: its section's label, or its fields', show it.
    No,
}

/// One row of a key table in `docs/reference.md`: the five columns, as markdown.
#[derive(Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Row {
    pub kdl: &'static str,
    pub yaml: &'static str,
    pub ty: &'static str,
    pub default: &'static str,
    pub drives: &'static str,
}

/// The defaults `..FIELD` fills in.
const FIELD: Field = Field {
    key: "",
    kind: Kind::Bool,
    summary: "",
    req: Req::Optional,
    when: &[],
    env: &[],
    diff: Diff::Path,
    rows: &[],
    bind: None,
};

/// The description of an env map's values.
pub(crate) const ENV_VALUE: &str =
    "A value, written as the program should read it (integers are kept in decimal).";

/// The description of a null section in a layer.
pub(crate) const REMOVE: &str = "In an `extends` layer: remove the inherited section.";

/// The profile: its top-level keys.
pub(crate) const PROFILE: Section = Section {
    path: "",
    positional: Some("name"),
    short: None,
    fields: &[
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "Profile name, `team/name`.",
            req: Req::Always,
            rows: &[Row {
                kdl: r#"`profile "NAME"`"#,
                yaml: "`name: NAME`",
                ty: "string, **required**",
                default: "—",
                drives: "first header line of every artifact; the `roce.dev/profile` Pod annotation; the default Pod `metadata.name` and sbatch `--job-name` (last `/` segment, lower-cased, other characters → `-`, at most 63)",
            }],
            bind: bind!(Profile.name, string),
            ..FIELD
        },
        Field {
            key: "extends",
            kind: Kind::Str { pattern: None },
            summary: "A built-in profile name or a file path relative to this file; this profile's keys override it.",
            diff: Diff::No,
            rows: &[Row {
                kdl: r#"`extends="REF"` (property of `profile`)"#,
                yaml: "`extends: REF`",
                ty: "string",
                default: "none",
                drives: "the layer this one is merged over ([below](#extends-merging-and-provenance))",
            }],
            bind: bind!(Profile.extends, string),
            ..FIELD
        },
        Field {
            key: "description",
            kind: Kind::Str { pattern: None },
            summary: "One line for humans.",
            rows: &[Row {
                kdl: r#"`description "…"`"#,
                yaml: "`description: …`",
                ty: "string",
                default: "none (inherited through `extends`)",
                drives: "second header line of every artifact",
            }],
            bind: bind!(Profile.description, string),
            ..FIELD
        },
        Field {
            key: "production",
            kind: Kind::Bool,
            summary: "Production profiles warn on debug settings (default true).",
            rows: &[Row {
                kdl: "`production #false`",
                yaml: "`production: false`",
                ty: "boolean",
                default: "`#true`",
                drives: "only the `roce::nccl::debug_in_production` warning",
            }],
            bind: bind!(Profile.production, boolean, or true),
            ..FIELD
        },
        Field {
            key: "fabric",
            kind: Kind::Section(&FABRIC),
            summary: "The backend fabric.",
            req: Req::Merged,
            diff: Diff::No,
            rows: &[Row {
                kdl: "`fabric …`",
                yaml: "`fabric:`",
                ty: "map or short form, **required**",
                default: "—",
                drives: "[fabric](#fabric)",
            }],
            ..FIELD
        },
        Field {
            key: "node-pool",
            kind: Kind::Section(&NODE_POOL),
            summary: "Where the workloads run.",
            req: Req::Merged,
            diff: Diff::No,
            rows: &[Row {
                kdl: "`node-pool …`",
                yaml: "`node-pool:`",
                ty: "map, **required**",
                default: "—",
                drives: "[node-pool](#node-pool)",
            }],
            ..FIELD
        },
        Field {
            key: "rails",
            kind: Kind::Section(&RAILS),
            summary: "RDMA rails: nics × ports, and how their names are spelled (placeholders {nic} {port} {index} {index1} {host-port}).",
            req: Req::Merged,
            diff: Diff::No,
            rows: &[Row {
                kdl: "`rails …`",
                yaml: "`rails:`",
                ty: "map, **required**",
                default: "—",
                drives: "[rails](#rails)",
            }],
            ..FIELD
        },
        Field {
            key: "multus",
            kind: Kind::Section(&MULTUS),
            summary: "How rail interfaces reach the pod.",
            diff: Diff::No,
            rows: &[Row {
                kdl: "`multus …`",
                yaml: "`multus:`",
                ty: "map or short form",
                default: "`none`",
                drives: "[multus](#multus)",
            }],
            ..FIELD
        },
        Field {
            key: "nccl",
            kind: Kind::Section(&NCCL),
            summary: "NCCL settings.",
            diff: Diff::No,
            rows: &[Row {
                kdl: "`nccl …`",
                yaml: "`nccl:`",
                ty: "map",
                default: "empty (no NCCL variables)",
                drives: "[nccl](#nccl)",
            }],
            ..FIELD
        },
        Field {
            key: "nccl-net",
            kind: Kind::Section(&NCCL_NET),
            summary: "The NCCL network provider and what it needs in the pod (docs/reference.md, nccl-net).",
            diff: Diff::No,
            rows: &[Row {
                kdl: r#"`nccl-net "ofi" …`"#,
                yaml: "`nccl-net:`",
                ty: "map or short form",
                default: "`ib` (NCCL's IB verbs, nothing added)",
                drives: "[nccl-net](#nccl-net-the-network-provider)",
            }],
            ..FIELD
        },
        Field {
            key: "ucx",
            kind: Kind::Section(&UCX),
            summary: "UCX settings (MPI, NIXL).",
            diff: Diff::No,
            rows: &[Row {
                kdl: "`ucx …`",
                yaml: "`ucx:`",
                ty: "map or short form",
                default: "`off` (no UCX variables)",
                drives: "[ucx](#ucx)",
            }],
            ..FIELD
        },
        Field {
            key: "nics",
            kind: Kind::Section(&NICS),
            summary: "How the RDMA NICs reach the pod (default: multus-and-resource).",
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "nvlink-domain",
            kind: Kind::Section(&NVLINK_DOMAIN),
            summary: "The NVLink domain the pods share: none, or a ComputeDomain (NVIDIA's DRA driver for GPUs).",
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "placement",
            kind: Kind::Section(&PLACEMENT),
            summary: "Where the pods run together: NVLink-domain affinity, Kueue topology.",
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "image",
            kind: Kind::Section(&IMAGE),
            summary: "Facts about the workload image.",
            diff: Diff::No,
            rows: &[Row {
                kdl: concat!("`image rdma-core=", min_rdma_core!(), "`"),
                yaml: concat!("`image: {rdma-core: ", min_rdma_core!(), "}`"),
                ty: "map",
                default: "empty",
                drives: "[image](#image)",
            }],
            ..FIELD
        },
        Field {
            key: "job",
            kind: Kind::Section(&JOB),
            summary: "Job sizing.",
            diff: Diff::No,
            rows: &[Row {
                kdl: "`job nodes=16`",
                yaml: "`job: {nodes: 16}`",
                ty: "map",
                default: "empty",
                drives: "[job](#job)",
            }],
            ..FIELD
        },
        Field {
            key: "capabilities",
            kind: Kind::Strings {
                choices: Some(CAPABILITIES),
            },
            summary: "Linux capabilities added to the workload container.",
            rows: &[Row {
                kdl: r#"`capabilities "IPC_LOCK"`"#,
                yaml: "`capabilities: [IPC_LOCK]`",
                ty: "list of strings (one string allowed)",
                default: "none",
                drives: "`securityContext.capabilities.add` of direct pods. Allowed: {choices} (never `SYS_ADMIN`)",
            }],
            ..FIELD
        },
        Field {
            key: "env",
            kind: Kind::Env { prefix: None },
            summary: "Extra environment, in order.",
            rows: &[Row {
                kdl: r#"`env { NAME "value" }`"#,
                yaml: r#"`env: {NAME: "value"}`"#,
                ty: "map of env name → string or integer",
                default: "empty",
                drives: "extra environment, emitted last, in author order",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const FABRIC: Section = Section {
    path: "fabric",
    positional: Some("kind"),
    short: Some("Short form: the fabric kind."),
    fields: &[
        Field {
            key: "kind",
            kind: Kind::Choice(&["roce", "infiniband"]),
            summary: "Fabric kind.",
            req: Req::Merged,
            rows: &[Row {
                kdl: "`fabric roce` / `fabric infiniband`",
                yaml: "`kind: roce`",
                ty: r#"`roce` \| `infiniband`, **required**"#,
                default: "—",
                drives: r#"the "(RoCE fabric)" / "(InfiniBand fabric)" header; whether the four keys below are emitted at all (RoCE only)"#,
            }],
            bind: bind!(Fabric.kind, choice FabricKind [Roce, InfiniBand]),
            ..FIELD
        },
        Field {
            key: "addr-family",
            kind: Kind::Choice(&["ipv6", "ipv4", "AF_INET6", "AF_INET"]),
            summary: "RoCE: address family for GID selection → NCCL_IB_ADDR_FAMILY.",
            env: &["NCCL_IB_ADDR_FAMILY"],
            rows: &[Row {
                kdl: "`addr-family ipv6`",
                yaml: "`addr-family: ipv6`",
                ty: r#"`ipv6` \| `ipv4` (also `AF_INET6` \| `AF_INET`)"#,
                default: "none; **required on RoCE**",
                drives: "`NCCL_IB_ADDR_FAMILY=AF_INET6` / `AF_INET`",
            }],
            bind: bind!(Fabric.addr_family, choice AddrFamily [Ipv6, Ipv4, Ipv6, Ipv4]),
            ..FIELD
        },
        Field {
            key: "addr-range",
            kind: Kind::Str { pattern: None },
            summary: "RoCE: CIDR the GIDs must lie in → NCCL_IB_ADDR_RANGE, e.g. fd02::/16.",
            env: &["NCCL_IB_ADDR_RANGE"],
            rows: &[Row {
                kdl: r#"`addr-range "fd02::/16"`"#,
                yaml: r#"`addr-range: "fd02::/16"`"#,
                ty: "CIDR (`addr/len`, IPv4 or IPv6)",
                default: "none",
                drives: "`NCCL_IB_ADDR_RANGE`",
            }],
            bind: bind!(Fabric.addr_range, cidr),
            ..FIELD
        },
        Field {
            key: "traffic-class",
            kind: Kind::Int { min: 0, max: 255 },
            summary: "RoCE: IP traffic class byte → NCCL_IB_TC.",
            env: &["NCCL_IB_TC"],
            rows: &[Row {
                kdl: "`traffic-class 96`",
                yaml: "`traffic-class: 96`",
                ty: "integer 0–255",
                default: "none; **required on RoCE**",
                drives: "`NCCL_IB_TC`",
            }],
            bind: bind!(Fabric.traffic_class, |r, _| r
                .int()
                .map(|v| v.map(|v| v as u8))),
            ..FIELD
        },
        Field {
            key: "gid-index",
            kind: Kind::Int { min: 0, max: 255 },
            summary: "RoCE: fixed GID index → NCCL_IB_GID_INDEX (default: auto by family and range).",
            env: &["NCCL_IB_GID_INDEX"],
            rows: &[Row {
                kdl: "`gid-index 3`",
                yaml: "`gid-index: 3`",
                ty: "integer 0–255",
                default: "none (NCCL picks by family and range)",
                drives: "`NCCL_IB_GID_INDEX`; also `UCX_IB_GID_INDEX` in UCX RDMA mode when `ucx gid-index` is unset",
            }],
            bind: bind!(Fabric.gid_index, int),
            ..FIELD
        },
    ],
};

pub(crate) const NODE_POOL_RDMA_RESOURCE: Section = Section {
    path: "node-pool.rdma-resource",
    positional: Some("name"),
    short: Some(
        "Extended resource gating RDMA scheduling, 1 in requests and limits, e.g. rdma/ib.",
    ),
    fields: &[
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "The extended resource name.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "count",
            kind: Kind::Int { min: 1, max: 1024 },
            summary: "The quantity in requests and limits (default 1).",
            rows: &[Row {
                kdl: r#"`rdma-resource "vpc.amazonaws.com/efa" count=32`"#,
                yaml: "`rdma-resource: {name: vpc.amazonaws.com/efa, count: 32}`",
                ty: "integer 1–1024",
                default: "1",
                drives: "the quantity in requests and limits, for device plugins that hand out one resource per interface (EFA, OCI's SR-IOV VFs) instead of a boolean gate",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const NODE_POOL: Section = Section {
    path: "node-pool",
    positional: Some("name"),
    short: Some("Short form: the pool name."),
    fields: &[
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "Node pool or SUNK NodeSet name.",
            req: Req::Merged,
            rows: &[Row {
                kdl: r#"`node-pool "NAME"`"#,
                yaml: "`name: NAME`",
                ty: "non-empty string, **required**",
                default: "—",
                drives: "the sbatch `--partition` when `partition` is unset",
            }],
            bind: bind!(NodePool.name, nonempty),
            ..FIELD
        },
        Field {
            key: "instance-type",
            kind: Kind::Str { pattern: None },
            summary: "Instance type (node.coreweave.cloud/type), descriptive.",
            rows: &[Row {
                kdl: r#"`instance-type="gb300-4x-e"`"#,
                yaml: "`instance-type: gb300-4x-e`",
                ty: "non-empty string",
                default: "none",
                drives: "nothing: descriptive only (see [decisions](decisions.md#d-vendor-guide-contradictions))",
            }],
            bind: bind!(NodePool.instance_type, nonempty),
            ..FIELD
        },
        Field {
            key: "gpus-per-node",
            kind: Kind::Int { min: 1, max: 64 },
            summary: "GPUs per node.",
            req: Req::Merged,
            rows: &[Row {
                kdl: "`gpus-per-node=4`",
                yaml: "`gpus-per-node: 4`",
                ty: "integer 1–64, **required**",
                default: "—",
                drives: "`nvidia.com/gpu` in Pod requests and limits; sbatch `--gpus-per-node` and `--ntasks-per-node`",
            }],
            bind: bind!(NodePool.gpus_per_node, int),
            ..FIELD
        },
        Field {
            key: "rdma-resource",
            kind: Kind::Section(&NODE_POOL_RDMA_RESOURCE),
            summary: "The resource with a count: one per interface (vpc.amazonaws.com/efa: 32).",
            rows: &[Row {
                kdl: r#"`rdma-resource "rdma/ib"`"#,
                yaml: "`rdma-resource: rdma/ib`",
                ty: "extended resource name `domain/name`",
                default: "none",
                drives: r#"`rdma/ib: "1"` in requests **and** limits of direct pods; named in the sbatch fabric comment"#,
            }],
            ..FIELD
        },
        Field {
            key: "node-labels",
            kind: Kind::Labels,
            summary: "Node labels to select on.",
            rows: &[Row {
                kdl: r#"`node-labels { "KEY" "VALUE" }`"#,
                yaml: "`node-labels: {KEY: VALUE}`",
                ty: "map of label → string",
                default: "empty",
                drives: "Pod `spec.nodeSelector`, in author order",
            }],
            ..FIELD
        },
        Field {
            key: "sunk-nodeset",
            kind: Kind::Bool,
            summary: "A SUNK NodeSet that attaches networks and the RDMA resource itself: jobs get env only.",
            rows: &[Row {
                kdl: "`sunk-nodeset #true`",
                yaml: "`sunk-nodeset: true`",
                ty: "boolean",
                default: "`#false`",
                drives: "when true the NodeSet attaches networks and resources itself: no Multus annotation, no RDMA resource, no capabilities, no sbatch fabric comment — env only",
            }],
            bind: bind!(NodePool.sunk_nodeset, boolean, or false),
            ..FIELD
        },
        Field {
            key: "partition",
            kind: Kind::Str { pattern: None },
            summary: "Slurm partition (default: the pool name).",
            rows: &[Row {
                kdl: r#"`partition "gb300"`"#,
                yaml: "`partition: gb300`",
                ty: "non-empty string",
                default: "the pool `name`",
                drives: "sbatch `--partition` (`roce render --partition` overrides)",
            }],
            bind: bind!(NodePool.partition, nonempty),
            ..FIELD
        },
        Field {
            key: "runtime-class",
            kind: Kind::Str {
                pattern: Some(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"),
            },
            summary: "The RuntimeClass of the NVIDIA container runtime where it is not the nodes' default (k3s, RKE2): GPU pods set runtimeClassName to it.",
            rows: &[Row {
                kdl: r#"`runtime-class "nvidia"`"#,
                yaml: "`runtime-class: nvidia`",
                ty: "Kubernetes object name",
                default: "none (the nodes' default runtime)",
                drives: "Pod `spec.runtimeClassName`; without it, on nodes whose default runtime is not NVIDIA's, the container gets none of the GPUs the device plugin allocated (see [decisions](decisions.md#newneed-a-requirement-added-in-one-commit-the-container-runtime-class-issue-28))",
            }],
            bind: bind!(NodePool.runtime_class, k8s_name),
            ..FIELD
        },
    ],
};

pub(crate) const RAILS: Section = Section {
    path: "rails",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "nics",
            kind: Kind::Int { min: 1, max: 32 },
            summary: "NICs per node.",
            req: Req::Merged,
            rows: &[Row {
                kdl: "`nics=4`",
                yaml: "`nics: 4`",
                ty: "integer 1–32, **required**",
                default: "—",
                drives: "number of rails",
            }],
            ..FIELD
        },
        Field {
            key: "ports",
            kind: Kind::Int { min: 1, max: 8 },
            summary: "Ports (planes) per NIC.",
            req: Req::Merged,
            rows: &[Row {
                kdl: "`ports=4`",
                yaml: "`ports: 4`",
                ty: "integer 1–8, **required**",
                default: "—",
                drives: "ports (planes) per NIC",
            }],
            ..FIELD
        },
        Field {
            key: "host-port",
            kind: Kind::Str { pattern: None },
            summary: "Host netdev pattern, e.g. ibs{nic}p{port}.",
            rows: &[Row {
                kdl: r#"`host-port="ibs{nic}p{port}"`"#,
                yaml: r#"`host-port: "ibs{nic}p{port}"`"#,
                ty: "[name pattern](#name-patterns)",
                default: "none",
                drives: "host netdev of each rail; per-port NAD names through `{host-port}`",
            }],
            bind: bind!(Rails.host_port, pattern),
            ..FIELD
        },
        Field {
            key: "pod-device",
            kind: Kind::DeviceNames {
                list: "One RDMA device name per rail, in rail order (nics x ports of them), e.g. a host's devices with its front-end NICs left out.",
            },
            summary: "RDMA device name pattern in the pod, e.g. ibp{nic}p{port}.",
            req: Req::Merged,
            rows: &[
                Row {
                    kdl: r#"`pod-device="ibp{nic}p{port}"`"#,
                    yaml: r#"`pod-device: "ibp{nic}p{port}"`"#,
                    ty: "name pattern, or a list of names, **required**",
                    default: "—",
                    drives: "the RDMA device names `nccl ib-hca` and `ucx net-devices` are checked against",
                },
                Row {
                    kdl: r#"`{ pod-device "mlx5_0" "mlx5_1" "mlx5_3" … }`"#,
                    yaml: "`pod-device: [mlx5_0, mlx5_1, mlx5_3, …]`",
                    ty: "list of device names, one per rail in rail order (exactly `nics × ports`, each once, no `{`, `}`, `,`, `:` or whitespace)",
                    default: "—",
                    drives: "the same, where a pattern cannot spell the names: a node's own devices in `nics host-network`, whose front-end NICs sit between the rails (OCI's BM.GPU.H100.8: `mlx5_2` and `mlx5_11`). Another count, a repeated or malformed name is `roce::invalid_value`",
                },
            ],
            ..FIELD
        },
        Field {
            key: "pod-netdev",
            kind: Kind::Str { pattern: None },
            summary: "Netdev name in the pod, e.g. net{index1}.",
            rows: &[Row {
                kdl: r#"`pod-netdev="net{index1}"`"#,
                yaml: r#"`pod-netdev: "net{index1}"`"#,
                ty: "name pattern",
                default: "none",
                drives: "pod netdev names (Multus numbers them `net1…`); `nccl socket-ifname` must not select them",
            }],
            bind: bind!(Rails.pod_netdev, pattern),
            ..FIELD
        },
        Field {
            key: "port-num",
            kind: Kind::Int { min: 1, max: 255 },
            summary: "Verbs port number of each device (default 1).",
            rows: &[Row {
                kdl: "`port-num=1`",
                yaml: "`port-num: 1`",
                ty: "integer 1–255",
                default: "`1`",
                drives: "the verbs port in `device:port` entries of `ucx net-devices`",
            }],
            bind: bind!(Rails.port_num, int, or 1),
            ..FIELD
        },
        Field {
            key: "link-rate",
            // Gb/s per rail: 1 (SDR 1x would be 2.5, nothing RDMA-capable today is under 10) to XDR 4x and beyond.
            kind: Kind::Int { min: 1, max: 3200 },
            summary: "Link rate of one rail in Gb/s (400 for NDR, 200 for a ConnectX-8 plane): roce explain --profile derives the expected nccl-tests bus bandwidth from rails x link-rate.",
            rows: &[Row {
                kdl: "`link-rate=400`",
                yaml: "`link-rate: 400`",
                ty: "integer 1–3200, Gb/s per rail",
                default: "none",
                drives: "`roce explain --profile`: the nccl-tests bus bandwidth the rails allow (`nics × ports × link-rate / 8` GB/s for all_reduce; see [explain.md](explain.md#what-the-fabric-should-give))",
            }],
            bind: bind!(Rails.link_rate, int),
            ..FIELD
        },
    ],
};

pub(crate) const MULTUS: Section = Section {
    path: "multus",
    positional: Some("mode"),
    short: Some("Short form: the mode."),
    fields: &[
        Field {
            key: "mode",
            kind: Kind::Choice(&["per-port", "backend", "none"]),
            summary: "Attachment mode.",
            req: Req::Merged,
            rows: &[Row {
                kdl: "`multus per-port …` / `multus backend …` / `multus none`",
                yaml: "`mode: per-port`",
                ty: r#"`per-port` \| `backend` \| `none`, **required** when `multus` is given"#,
                default: "`none`",
                drives: "the `k8s.v1.cni.cncf.io/networks` annotation of direct pods",
            }],
            ..FIELD
        },
        Field {
            key: "namespace",
            kind: Kind::Str { pattern: None },
            summary: "Namespace of the NADs.",
            req: Req::Merged,
            when: &["per-port", "backend"],
            rows: &[Row {
                kdl: r#"`namespace="cw-multus"`"#,
                yaml: "`namespace: cw-multus`",
                ty: "Kubernetes name (lower-case letters, digits, `-`, `.`), **required** for `per-port` and `backend`",
                default: "—",
                drives: "`namespace` of each NAD reference",
            }],
            ..FIELD
        },
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "NAD name (backend) or name pattern (per-port), e.g. {host-port}-macvlan.",
            req: Req::Merged,
            when: &["per-port", "backend"],
            rows: &[Row {
                kdl: r#"`name="{host-port}-macvlan"`"#,
                yaml: r#"`name: "{host-port}-macvlan"`"#,
                ty: "`per-port`: name pattern; `backend`: a Kubernetes name; **required**",
                default: "—",
                drives: "`per-port`: one NAD per rail, in rail order; `backend`: the one NAD",
            }],
            ..FIELD
        },
        Field {
            key: "nads",
            kind: Kind::Strings { choices: None },
            summary: "Per-port: an explicit NAD list, checked against the rails.",
            when: &["per-port"],
            rows: &[Row {
                kdl: r#"`nads { - "…" }`"#,
                yaml: "`nads: [...]`",
                ty: "list of strings (`per-port` only)",
                default: "none",
                drives: "an explicit NAD list, used instead of the pattern and checked against it",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const NCCL: Section = Section {
    path: "nccl",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "version",
            kind: Kind::Str {
                pattern: Some(r#"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$"#),
            },
            summary: "The NCCL release the job runs, MAJOR.MINOR or MAJOR.MINOR.PATCH (quoted: 2.30 unquoted is the number 2.3). check and diff judge the variables by it; it renders nothing.",
            rows: &[Row {
                kdl: r#"`version="2.28"`"#,
                yaml: r#"`version: "2.28"`"#,
                ty: "NCCL release, `MAJOR.MINOR[.PATCH]`, quoted",
                default: "none",
                drives: "nothing rendered: `check` and `diff` judge the profile's variables by it",
            }],
            bind: bind!(Nccl.version, nccl_release),
            ..FIELD
        },
        Field {
            key: "socket-ifname",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_SOCKET_IFNAME (NCCL list syntax).",
            env: &["NCCL_SOCKET_IFNAME"],
            rows: &[Row {
                kdl: r#"`socket-ifname="eth0"`"#,
                yaml: "`socket-ifname: eth0`",
                ty: "NCCL interface list",
                default: "none",
                drives: "`NCCL_SOCKET_IFNAME`",
            }],
            bind: bind!(Nccl.socket_ifname, |r, s| r.nccl_list(s.version.is_some())),
            ..FIELD
        },
        Field {
            key: "ib-hca",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_IB_HCA (NCCL list syntax: ^ exclude, = exact, :port).",
            env: &["NCCL_IB_HCA"],
            rows: &[Row {
                kdl: r#"`ib-hca="ibp"`"#,
                yaml: "`ib-hca: ibp`",
                ty: "NCCL HCA list",
                default: "none",
                drives: "`NCCL_IB_HCA`",
            }],
            bind: bind!(Nccl.ib_hca, |r, s| r.nccl_list(s.version.is_some())),
            ..FIELD
        },
        Field {
            key: "ib-data-direct",
            kind: Kind::Int { min: 0, max: 2 },
            summary: "NCCL_IB_DATA_DIRECT (NCCL 2.27+): on a ConnectX NIC with a Data Direct DMA interface, 0 uses the NIC's PCIe path only, 1 (NCCL's default) the Data Direct device (<dev>_dma) only, 2 both.",
            env: &["NCCL_IB_DATA_DIRECT"],
            rows: &[Row {
                kdl: "`ib-data-direct=0`",
                yaml: "`ib-data-direct: 0`",
                ty: "integer 0–2",
                default: "none (NCCL's default: 1)",
                drives: "`NCCL_IB_DATA_DIRECT`; NCCL 2.27+ reads it (`roce::nccl::version_unread` on an older `version`)",
            }],
            bind: bind!(Nccl.ib_data_direct, int),
            ..FIELD
        },
        Field {
            key: "net-plugin",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_NET_PLUGIN (none, or spcx for ~10,000+ GPU jobs).",
            env: &["NCCL_NET_PLUGIN"],
            rows: &[Row {
                kdl: r#"`net-plugin="none"`"#,
                yaml: "`net-plugin: none`",
                ty: "non-empty string",
                default: "none",
                drives: "`NCCL_NET_PLUGIN`",
            }],
            bind: bind!(Nccl.net_plugin, nonempty),
            ..FIELD
        },
        Field {
            key: "debug",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_DEBUG.",
            env: &["NCCL_DEBUG"],
            rows: &[Row {
                kdl: r#"`debug="WARN"`"#,
                yaml: "`debug: WARN`",
                ty: "non-empty string",
                default: "none",
                drives: "`NCCL_DEBUG`",
            }],
            bind: bind!(Nccl.debug, nonempty),
            ..FIELD
        },
        Field {
            key: "debug-subsys",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_DEBUG_SUBSYS.",
            env: &["NCCL_DEBUG_SUBSYS"],
            rows: &[Row {
                kdl: r#"`debug-subsys="INIT,NET"`"#,
                yaml: "`debug-subsys: INIT,NET`",
                ty: "non-empty string",
                default: "none",
                drives: "`NCCL_DEBUG_SUBSYS`",
            }],
            bind: bind!(Nccl.debug_subsys, nonempty),
            ..FIELD
        },
        Field {
            key: "diagnostics",
            kind: Kind::Bool,
            summary: "NCCL_RUN_DIAGNOSTICS=1: NCCL's active diagnostics at each communicator initialization (NCCL 2.31+), whose NCCL DIAG report roce explain reads.",
            env: &["NCCL_RUN_DIAGNOSTICS"],
            rows: &[Row {
                kdl: "`diagnostics=#true`",
                yaml: "`diagnostics: true`",
                ty: "boolean",
                default: "`#false` (NCCL's default: off)",
                drives: "`NCCL_RUN_DIAGNOSTICS=1` (nothing when false); NCCL 2.31+ reads it (`roce::nccl::version_unread` on an older `version`)",
            }],
            bind: bind!(Nccl.diagnostics, boolean),
            ..FIELD
        },
        Field {
            key: "inspector",
            kind: Kind::Section(&NCCL_INSPECTOR),
            summary: "The Inspector profiler plugin (NCCL 2.28+): per-collective records, JSON or Prometheus, in a directory pods get as a volume.",
            diff: Diff::No,
            rows: &[Row {
                kdl: r#"`inspector "json" …` (a child of `nccl`)"#,
                yaml: "`inspector: json` or `inspector: {format: json, …}`",
                ty: "map or short form",
                default: "none (off)",
                drives: "the Inspector's variables and, in pod targets, its volume ([observability](#nccls-own-observability-diagnostics-inspector))",
            }],
            ..FIELD
        },
        Field {
            key: "knobs",
            kind: Kind::Env {
                prefix: Some("NCCL_"),
            },
            summary: "Further NCCL_* variables, in order.",
            rows: &[Row {
                kdl: r#"`knobs { NCCL_X "1" }`"#,
                yaml: r#"`knobs: {NCCL_X: "1"}`"#,
                ty: "map of `NCCL_*` name → string or integer",
                default: "empty",
                drives: "each knob, after the typed NCCL variables, in author order",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const NCCL_INSPECTOR: Section = Section {
    path: "nccl.inspector",
    positional: Some("format"),
    short: Some("Short form: the format."),
    fields: &[
        Field {
            key: "format",
            kind: Kind::Choice(&["json", "prometheus"]),
            summary: "json: one JSON record per collective (roce explain reads them); prometheus: text files for the node exporter's textfile collector (the plugin of NCCL 2.29.3+).",
            req: Req::Merged,
            env: &["NCCL_INSPECTOR_ENABLE", "NCCL_INSPECTOR_PROM_DUMP"],
            rows: &[Row {
                kdl: r#"`inspector "prometheus"`"#,
                yaml: "`format: prometheus`",
                ty: r#"`json` \| `prometheus`, **required**"#,
                default: "—",
                drives: "`NCCL_INSPECTOR_ENABLE=1`; `NCCL_INSPECTOR_PROM_DUMP=1` for `prometheus` (JSON is the plugin's default); the interval's default",
            }],
            bind: bind!(Inspector.format, choice InspectorFormat [Json, Prometheus]),
            ..FIELD
        },
        Field {
            key: "plugin",
            kind: Kind::Str { pattern: None },
            summary: "NCCL_PROFILER_PLUGIN: the plugin's name or path (default inspector, which NCCL finds as libnccl-profiler-inspector.so on the loader's path).",
            env: &["NCCL_PROFILER_PLUGIN"],
            rows: &[Row {
                kdl: r#"`plugin="/opt/nccl/libnccl-profiler-inspector.so"`"#,
                yaml: "`plugin: /opt/nccl/libnccl-profiler-inspector.so`",
                ty: "non-empty string",
                default: "`inspector`",
                drives: "`NCCL_PROFILER_PLUGIN`",
            }],
            bind: bind!(Inspector.plugin, nonempty),
            ..FIELD
        },
        Field {
            key: "dump-dir",
            kind: Kind::Str {
                pattern: Some("^/"),
            },
            summary: "NCCL_INSPECTOR_DUMP_DIR: where the records go, in the container (pods mount a volume there) or on a batch job's nodes (default /var/log/nccl-inspector).",
            env: &["NCCL_INSPECTOR_DUMP_DIR"],
            rows: &[Row {
                kdl: r#"`dump-dir="/var/log/nccl-inspector"`"#,
                yaml: "`dump-dir: /var/log/nccl-inspector`",
                ty: "absolute path",
                default: "`/var/log/nccl-inspector`",
                drives: "`NCCL_INSPECTOR_DUMP_DIR`; in pod targets the mount path of the `nccl-inspector` volume",
            }],
            bind: bind!(Inspector.dump_dir, abs_path),
            ..FIELD
        },
        Field {
            key: "interval-us",
            kind: Kind::Int {
                min: 1,
                max: u32::MAX,
            },
            summary: "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS (default 500 for json, 30000000 for prometheus, the least the plugin accepts there).",
            env: &["NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS"],
            rows: &[Row {
                kdl: "`interval-us=1000000`",
                yaml: "`interval-us: 1000000`",
                ty: "whole number of microseconds, 1 or more",
                default: "`500` (json), `30000000` (prometheus)",
                drives: "`NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`, always set (the plugin's own default changed in 2.30)",
            }],
            bind: bind!(Inspector.interval_us, int),
            ..FIELD
        },
        Field {
            key: "host-path",
            kind: Kind::Str {
                pattern: Some("^/"),
            },
            summary: "Pods: the node's directory mounted at dump-dir (a hostPath, created when missing) instead of an emptyDir.",
            rows: &[Row {
                kdl: r#"`host-path="/var/lib/node_exporter/textfile_collector"`"#,
                yaml: "`host-path: /var/lib/node_exporter/textfile_collector`",
                ty: "absolute path",
                default: "none (an `emptyDir`)",
                drives: "pod targets: the `nccl-inspector` volume is a `hostPath` (`DirectoryOrCreate`) of it, else an `emptyDir`; nothing in sbatch, env or Dockerfile",
            }],
            bind: bind!(Inspector.host_path, abs_path),
            ..FIELD
        },
    ],
};

pub(crate) const NCCL_NET_TOPOLOGY_FILE: Section = Section {
    path: "nccl-net.topology-file",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "configmap",
            kind: Kind::Str { pattern: None },
            summary: "The ConfigMap's name.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "key",
            kind: Kind::Str {
                pattern: Some("^[-._a-zA-Z0-9]+$"),
            },
            summary: "Its key holding the topology XML (a file name).",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "path",
            kind: Kind::Str {
                pattern: Some("^/"),
            },
            summary: "Where the file is in the container and on the nodes (default /etc/nccl/topology/<key>).",
            diff: Diff::No,
            ..FIELD
        },
    ],
};

pub(crate) const NCCL_NET_HOST_MOUNTS: Section = Section {
    path: "nccl-net.host-mounts",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "host-path",
            kind: Kind::Str {
                pattern: Some("^/"),
            },
            summary: "The directory on the node.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "mount-path",
            kind: Kind::Str {
                pattern: Some("^/"),
            },
            summary: "Where the container sees it.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
    ],
};

pub(crate) const NCCL_NET: Section = Section {
    path: "nccl-net",
    positional: Some("provider"),
    short: Some("Short form: the provider."),
    fields: &[
        Field {
            key: "provider",
            kind: Kind::Choice(&["ib", "ofi", "gib", "plugin"]),
            summary: "ib: NCCL's IB verbs (default); ofi: aws-ofi-nccl (libfabric, EFA); gib: Google's gIB (NCCL_NET=gIB); plugin: another net plugin, NCCL_NET=name.",
            req: Req::Merged,
            rows: &[Row {
                kdl: r#"`nccl-net "gib"`"#,
                yaml: "`provider: gib`",
                ty: r#"`ib` \| `ofi` \| `gib` \| `plugin`, **required**"#,
                default: "—",
                drives: "`NCCL_NET=gIB` (gib), `NCCL_NET=<name>` (plugin); nothing for `ib` and `ofi` (aws-ofi-nccl loads as NCCL's default plugin)",
            }],
            ..FIELD
        },
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "plugin: the plugin's network name, set as NCCL_NET.",
            rows: &[Row {
                kdl: r#"`name="MyNet"`"#,
                yaml: "`name: MyNet`",
                ty: "non-empty string; **required for `plugin`**",
                default: "—",
                drives: "the `NCCL_NET` value",
            }],
            ..FIELD
        },
        Field {
            key: "library-path",
            kind: Kind::Str { pattern: None },
            summary: "LD_LIBRARY_PATH for the container (the whole value).",
            rows: &[Row {
                kdl: r#"`library-path="/a:/b"`"#,
                yaml: "`library-path: /a:/b`",
                ty: "non-empty string",
                default: "none",
                drives: "`LD_LIBRARY_PATH` (the whole value: Kubernetes does not expand the image's own)",
            }],
            ..FIELD
        },
        Field {
            key: "topology-file",
            kind: Kind::Section(&NCCL_NET_TOPOLOGY_FILE),
            summary: "NCCL_TOPO_FILE from a ConfigMap: its key mounted read-only as a file at path (default /etc/nccl/topology/<key>), which NCCL_TOPO_FILE names.",
            rows: &[Row {
                kdl: r#"`topology-file configmap="NAME" key="FILE" path="/abs/FILE"`"#,
                yaml: "`topology-file: {configmap: NAME, key: FILE, path: /abs/FILE}`",
                ty: "Kubernetes name, ConfigMap key (`[-._a-zA-Z0-9]+`), absolute path (default `/etc/nccl/topology/FILE`)",
                default: "none",
                drives: "`NCCL_TOPO_FILE=path` in every target, and in pod targets a `configMap` volume holding only that key, mounted **read-only** as one file at `path` (`subPath`: the directory around it stays the image's; the pod does not start while the ConfigMap is missing). On Slurm the file must be at `path` on the nodes (choose the path the cloud's VM image installs it at). Setting `NCCL_TOPO_FILE` in `env` or the knobs as well is `roce::env::shadows_generated`",
            }],
            ..FIELD
        },
        Field {
            key: "host-mounts",
            kind: Kind::Named(&NCCL_NET_HOST_MOUNTS),
            summary: "Host directories mounted read-only: volume name -> host-path and mount-path.",
            rows: &[Row {
                kdl: "`host-mounts { NAME host-path=… mount-path=… }`",
                yaml: "`host-mounts: {NAME: {host-path: …, mount-path: …}}`",
                ty: "map of DNS label → two absolute paths",
                default: "empty",
                drives: "a `hostPath` volume (type `Directory`: the pod does not start when the node lacks it) and a **read-only** mount, in pod, kustomize, apply, nccl-tests-mpijob and ucx-perftest; not in sbatch, env or Dockerfile",
            }],
            ..FIELD
        },
        Field {
            key: "env",
            kind: Kind::Env { prefix: None },
            summary: "Extra environment, in order.",
            rows: &[Row {
                kdl: r#"`env { FI_PROVIDER "efa" }`"#,
                yaml: "`env: {FI_PROVIDER: efa}`",
                ty: "map of env name → string or integer",
                default: "empty",
                drives: "the provider's variables, after `nccl knobs`",
            }],
            ..FIELD
        },
        Field {
            key: "pod-annotations",
            kind: Kind::Labels,
            summary: "Pod annotations the cloud's attachment needs (networking.gke.io/interfaces).",
            rows: &[Row {
                kdl: r#"`pod-annotations { "KEY" "VALUE" }`"#,
                yaml: "`pod-annotations: {KEY: VALUE}`",
                ty: "map of annotation → string",
                default: "empty",
                drives: "pod (template) annotations in every pod target; `networking.gke.io/interfaces` means the cloud attaches the NICs (no Multus, no `rdma-resource` needed)",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const UCX: Section = Section {
    path: "ucx",
    positional: Some("mode"),
    short: Some("Short form: the mode."),
    fields: &[
        Field {
            key: "mode",
            kind: Kind::Choice(&["off", "tcp", "rdma"]),
            summary: "off, tcp (NCCL-only jobs) or rdma (NIXL/MPI).",
            req: Req::Merged,
            rows: &[Row {
                kdl: r#"`ucx mode="tcp"` / `ucx off`"#,
                yaml: "`mode: tcp`",
                ty: r#"`off` \| `tcp` \| `rdma`, **required** when `ucx` is given"#,
                default: "`off` when `ucx` is absent",
                drives: "`off`: no UCX variable. `tcp`: `UCX_TLS` (default `tcp`) and `UCX_NET_DEVICES`. `rdma`: the four variables below, each when set",
            }],
            bind: bind!(Ucx.mode, choice UcxMode [Off, Tcp, Rdma]),
            ..FIELD
        },
        Field {
            key: "tls",
            kind: Kind::Str { pattern: None },
            summary: "UCX_TLS.",
            env: &["UCX_TLS"],
            rows: &[Row {
                kdl: r#"`tls="rc_mlx5,ud_mlx5,cuda_copy"`"#,
                yaml: "`tls: …`",
                ty: "non-empty UCX transport list",
                default: "`tcp` in TCP mode, unset in RDMA mode",
                drives: "`UCX_TLS`",
            }],
            bind: bind!(Ucx.tls, ucx_tls),
            ..FIELD
        },
        Field {
            key: "net-devices",
            kind: Kind::Str { pattern: None },
            summary: "UCX_NET_DEVICES (exact device:port names).",
            env: &["UCX_NET_DEVICES"],
            rows: &[Row {
                kdl: r#"`net-devices="eth0"`"#,
                yaml: "`net-devices: eth0`",
                ty: "non-empty UCX device list (`dev:port` for RDMA, netdev for TCP)",
                default: "none",
                drives: "`UCX_NET_DEVICES`",
            }],
            bind: bind!(Ucx.net_devices, ucx_net_devices),
            ..FIELD
        },
        Field {
            key: "gid-index",
            kind: Kind::Int { min: 0, max: 255 },
            summary: "UCX_IB_GID_INDEX (RDMA mode).",
            env: &["UCX_IB_GID_INDEX"],
            rows: &[Row {
                kdl: "`gid-index=11`",
                yaml: "`gid-index: 11`",
                ty: "integer 0–255",
                default: "`fabric gid-index`",
                drives: "`UCX_IB_GID_INDEX` (RDMA mode only)",
            }],
            bind: bind!(Ucx.gid_index, int),
            ..FIELD
        },
        Field {
            key: "max-rma-rails",
            kind: Kind::Int { min: 1, max: 64 },
            summary: "UCX_MAX_RMA_RAILS (RDMA mode).",
            env: &["UCX_MAX_RMA_RAILS"],
            rows: &[Row {
                kdl: "`max-rma-rails=4`",
                yaml: "`max-rma-rails: 4`",
                ty: "integer 1–64",
                default: "none",
                drives: "`UCX_MAX_RMA_RAILS` (RDMA mode only)",
            }],
            bind: bind!(Ucx.max_rma_rails, int),
            ..FIELD
        },
        Field {
            key: "min-rdma-core",
            kind: Kind::Int { min: 1, max: 999 },
            summary: concat!(
                "Least rdma-core the image needs for UCX RDMA (default ",
                min_rdma_core!(),
                ")."
            ),
            rows: &[Row {
                kdl: concat!("`min-rdma-core=", min_rdma_core!(), "`"),
                yaml: concat!("`min-rdma-core: ", min_rdma_core!(), "`"),
                ty: "integer 1–999",
                default: concat!("`", min_rdma_core!(), "`"),
                drives: "the least `image rdma-core` RDMA mode accepts; the Dockerfile comment in RDMA mode",
            }],
            ..FIELD
        },
    ],
};

pub(crate) const NICS_GPUS: Section = Section {
    path: "nics.gpus",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "class",
            kind: Kind::Str { pattern: None },
            summary: "The GPUs' DeviceClass (gpu.nvidia.com).",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "count",
            kind: Kind::Int { min: 1, max: 64 },
            summary: "GPUs per pod.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "align",
            kind: Kind::Choice(&["pcie-root", "numa-node"]),
            summary: "Align each GPU with its NICs by PCIe root or NUMA node.",
            diff: Diff::No,
            ..FIELD
        },
    ],
};

pub(crate) const NICS: Section = Section {
    path: "nics",
    positional: Some("mode"),
    short: Some("Short form: the mode."),
    fields: &[
        Field {
            key: "mode",
            kind: Kind::Choice(&[
                "multus-and-resource",
                "resource-only",
                "dra",
                "host-network",
            ]),
            summary: "Multus NADs plus the device-plugin resource; the resource only; a DRA claim; or the node's own NICs (hostNetwork, a privileged container, the host's /dev/infiniband).",
            req: Req::Merged,
            ..FIELD
        },
        Field {
            key: "class",
            kind: Kind::Str { pattern: None },
            summary: "dra: the DeviceClass the NICs come from (e.g. dranet's).",
            req: Req::Merged,
            when: &["dra"],
            ..FIELD
        },
        Field {
            key: "count",
            kind: Kind::Int { min: 1, max: 64 },
            summary: "dra: NIC devices per pod (one per rail).",
            req: Req::Merged,
            when: &["dra"],
            ..FIELD
        },
        Field {
            key: "template",
            kind: Kind::Str { pattern: None },
            summary: "dra: the ResourceClaimTemplate roce writes for the NICs.",
            req: Req::Merged,
            when: &["dra"],
            ..FIELD
        },
        Field {
            key: "claim",
            kind: Kind::Str { pattern: None },
            summary: "dra: the pod's claim name (default rdma-nics).",
            when: &["dra"],
            ..FIELD
        },
        Field {
            key: "selectors",
            kind: Kind::Strings { choices: None },
            summary: "dra: CEL selectors on device attributes; a device must pass all. One selector may be written as a string.",
            when: &["dra"],
            ..FIELD
        },
        Field {
            key: "gpus",
            kind: Kind::Section(&NICS_GPUS),
            summary: "dra: claim the GPUs in the same claim, aligned with the NICs.",
            when: &["dra"],
            ..FIELD
        },
    ],
};

pub(crate) const NVLINK_DOMAIN: Section = Section {
    path: "nvlink-domain",
    positional: Some("kind"),
    short: Some("Short form: the kind."),
    fields: &[
        Field {
            key: "kind",
            kind: Kind::Choice(&["none", "compute-domain"]),
            summary: "none or compute-domain.",
            req: Req::Merged,
            diff: Diff::As("nvlink-domain.mode"),
            ..FIELD
        },
        Field {
            key: "name",
            kind: Kind::Str { pattern: None },
            summary: "compute-domain: the ComputeDomain's name.",
            req: Req::Merged,
            when: &["compute-domain"],
            ..FIELD
        },
        Field {
            key: "nodes",
            kind: Kind::Int {
                min: 0,
                max: 100_000,
            },
            summary: "numNodes (0, the CRD's recommendation, or the job's nodes).",
            when: &["compute-domain"],
            ..FIELD
        },
        Field {
            key: "channel-template",
            kind: Kind::Str { pattern: None },
            summary: "The channel's ResourceClaimTemplate the driver creates (default <name>-cd-channel).",
            when: &["compute-domain"],
            ..FIELD
        },
        Field {
            key: "claim",
            kind: Kind::Str { pattern: None },
            summary: "The pod's claim name on the channel (default compute-domain-channel).",
            when: &["compute-domain"],
            ..FIELD
        },
        Field {
            key: "channels",
            kind: Kind::Choice(&["single", "all"]),
            summary: "IMEX channel allocation.",
            when: &["compute-domain"],
            ..FIELD
        },
    ],
};

pub(crate) const PLACEMENT_CLIQUE_AFFINITY: Section = Section {
    path: "placement.clique-affinity",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "label",
            kind: Kind::Str { pattern: None },
            summary: "The label key roce puts on the pods.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "value",
            kind: Kind::Str { pattern: None },
            summary: "Its value.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
    ],
};

pub(crate) const PLACEMENT_KUEUE_TOPOLOGY: Section = Section {
    path: "placement.kueue-topology",
    positional: Some("level-label"),
    short: Some("Short form: the level label."),
    fields: &[
        Field {
            key: "level-label",
            kind: Kind::Str { pattern: None },
            summary: "The topology level's node label.",
            req: Req::Merged,
            diff: Diff::No,
            ..FIELD
        },
        Field {
            key: "mode",
            kind: Kind::Choice(&["required", "preferred"]),
            summary: "podset-required-topology or podset-preferred-topology.",
            diff: Diff::No,
            ..FIELD
        },
    ],
};

pub(crate) const PLACEMENT: Section = Section {
    path: "placement",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "clique-affinity",
            kind: Kind::Section(&PLACEMENT_CLIQUE_AFFINITY),
            summary: "Required pod affinity on nvidia.com/gpu.clique among pods with this label.",
            ..FIELD
        },
        Field {
            key: "kueue-topology",
            kind: Kind::Section(&PLACEMENT_KUEUE_TOPOLOGY),
            summary: "Kueue Topology Aware Scheduling annotation.",
            ..FIELD
        },
    ],
};

pub(crate) const IMAGE: Section = Section {
    path: "image",
    positional: None,
    short: None,
    fields: &[Field {
        key: "rdma-core",
        kind: Kind::Int { min: 1, max: 999 },
        summary: "rdma-core release the image ships.",
        rows: &[Row {
            kdl: concat!("`image rdma-core=", min_rdma_core!(), "`"),
            yaml: concat!("`image: {rdma-core: ", min_rdma_core!(), "}`"),
            ty: "integer 1–999",
            default: "none",
            drives: "only the `roce::ucx::rdma_core` rule: the rdma-core release the workload image ships",
        }],
        bind: bind!(Image.rdma_core, int),
        ..FIELD
    }],
};

pub(crate) const JOB: Section = Section {
    path: "job",
    positional: None,
    short: None,
    fields: &[
        Field {
            key: "nodes",
            kind: Kind::Int {
                min: 1,
                max: 100_000,
            },
            summary: "Nodes per job.",
            rows: &[Row {
                kdl: "`job nodes=16`",
                yaml: "`job: {nodes: 16}`",
                ty: "integer 1–100000",
                default: "none",
                drives: "sbatch `--nodes` (default 1; `roce render --nodes` overrides); the job size the `net-plugin` rule compares with 10,000 GPUs",
            }],
            bind: bind!(Job.nodes, int),
            ..FIELD
        },
        Field {
            key: "expected-busbw",
            kind: Kind::Int {
                min: 1,
                max: 100_000,
            },
            summary: "The nccl-tests bus bandwidth (GB/s) this fabric should reach at large messages; `roce explain --profile` reports a run's result as a percentage of it.",
            rows: &[Row {
                kdl: "`job expected-busbw=380`",
                yaml: "`job: {expected-busbw: 380}`",
                ty: "integer 1–100000 (GB/s)",
                default: "none",
                drives: "`roce explain --profile` reports an nccl-tests run's large-message bus bandwidth as a percentage of it (`--expect-busbw` overrides)",
            }],
            bind: bind!(Job.expected_busbw, int),
            ..FIELD
        },
    ],
};

/// The key a leading KDL argument fills on a node named `name` (`fabric roce` → `kind`), from the
/// sections' [`Section::positional`]: the KDL front end maps by node name, at any depth.
pub(crate) fn positional(name: &str) -> Option<&'static str> {
    fn find(s: &'static Section, name: &str) -> Option<&'static str> {
        s.fields.iter().find_map(|f| match f.kind {
            Kind::Section(c) if f.key == name && c.positional.is_some() => c.positional,
            Kind::Section(c) | Kind::Named(c) => find(c, name),
            _ => None,
        })
    }
    if name == "profile" {
        return PROFILE.positional;
    }
    find(&PROFILE, name)
}

/// The positional key of top-level section `key` when it has a short form (`fabric infiniband`): a layer
/// that writes the section's other keys over a short-form base keeps the base's value.
pub(crate) fn short_form(key: &str) -> Option<&'static str> {
    PROFILE.fields.iter().find_map(|f| match f.kind {
        Kind::Section(s) if f.key == key && s.short.is_some() => s.positional,
        _ => None,
    })
}
