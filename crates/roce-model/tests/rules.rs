//! The rule catalogue, tested through its fixtures.
//!
//! `tests/fixtures/rules/<code>/` holds, for every [`Code`] (`roce::multus::missing_nad` →
//! `multus.missing_nad`), at least one `bad*` profile that fires the code and one `good*` profile — the
//! minimal fix — that does not. The directories are discovered, never listed here: adding a code means
//! adding its directory. Other files in a directory are helpers a fixture reaches through `extends`.
//!
//! Fixture conventions:
//! - the first line is a comment (`// …` in KDL, `# …` in YAML) saying what the fixture shows;
//! - `bad.kdl` / `bad.yaml` is the directory's primary example, shown first in `docs/rules.md`;
//! - a `pad-to: N` comment line makes the test append comment lines until the text is longer than N
//!   bytes, so a >10 MB input is generated here rather than committed;
//! - bytes that are not UTF-8 are decoded the way the CLI does it, through [`roce_model::load::not_text`].
//!
//! Every bad fixture's rendered diagnostics are snapshotted under `snapshots/diagnostics/`, and
//! `docs/rules.md` is generated from the fixtures and the [`WHY`] table (`ROCE_BLESS=1` rewrites it;
//! otherwise it is compared).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Component, Path, PathBuf};

use miette::{GraphicalReportHandler, GraphicalTheme};
use roce_model::fabric::ucx::MIN_RDMA_CORE;
use roce_model::{BuiltinsOnly, Code, Domain, Problem, Resolve, Severity, Source, builtin, load};

/// Why each code matters: the paragraph `docs/rules.md` gives it, citing the reference notes.
const WHY: &[(&str, &str)] = &[
    (
        "roce::syntax",
        "roce can check only what it can parse. A profile that is not valid KDL or YAML — cut \
         off, with an unclosed string or bracket, with bytes that are not UTF-8 text, or with no \
         profile in it at all — yields no model, so nothing is checked or rendered from it. roce \
         points at the first place the parser could not get past.",
    ),
    (
        "roce::unknown_key",
        "A misspelled key is not a harmless extra: the setting it was meant to carry is silently \
         left at its default. A misspelled `fabric` or `traffic-class` leaves NCCL_IB_TC unset, \
         and NCCL's default traffic class is not the fabric's lossless class 96 (fabric-facts \
         §4a, §10.4), so RDMA traffic is sent in the wrong class. roce names the closest valid \
         key.",
    ),
    (
        "roce::missing_key",
        "Some keys have no safe default. Without `rails` roce cannot know the pod's RDMA devices \
         (`ibp0` … `ibp7` on HGX InfiniBand, `ibp<nic>p<port>` on GB300 RoCE; fabric-facts §9, \
         §10.1), so it could check neither NCCL_IB_HCA nor the Multus NADs against them. A null \
         (`#null` in KDL, `~` in YAML) in an `extends` layer that removes a required key is \
         reported the same way.",
    ),
    (
        "roce::type_mismatch",
        "Types decide what the generated environment says, so roce does not guess. YAML reads an \
         unquoted `true` as a boolean, and NCCL parses integer knobs with strtoll, so that `true` \
         would reach NCCL as 0: `NCCL_IB_DISABLE=true` does not disable InfiniBand \
         (nccl-ucx-facts §0). Write the exact text the program should see.",
    ),
    (
        "roce::invalid_value",
        "A value of the right type can still be one NCCL or Kubernetes ignores. NCCL drops a \
         malformed NCCL_IB_ADDR_RANGE (no `/`, a bad address, a prefix too long) with only an \
         INFO line, and then takes GIDs from any range (nccl-ucx-facts §1.4). An unknown choice, \
         an invalid Kubernetes name or an unknown name placeholder would likewise render \
         something that does not work.",
    ),
    (
        "roce::duplicate_key",
        "YAML requires unique keys and parsers disagree on which of two values wins; a repeated \
         KDL node is ambiguous the same way. Rather than pick one silently, roce asks for one \
         value per key. The way to override a value is an `extends` layer.",
    ),
    (
        "roce::extends::not_found",
        "`extends` layers a profile over a base such as `coreweave/gb300-roce`; when the base \
         cannot be found there is no complete profile to check or render. roce suggests the \
         closest built-in; a path is read relative to the file that names it.",
    ),
    (
        "roce::extends::cycle",
        "A chain of `extends` that comes back to a profile already in it has no bottom layer to \
         merge onto. roce reports the loop (and chains deeper than 16 layers) instead of \
         following it.",
    ),
    (
        "roce::limits::too_large",
        "Real profiles are a few kilobytes. roce refuses input over 1 MiB before parsing it, so a \
         wrong file (a log, an image, a core dump) fails fast with a clear message instead of \
         costing time and memory.",
    ),
    (
        "roce::limits::too_deep",
        "The profile format needs at most four levels of nesting. roce refuses YAML nested \
         deeper than 32 levels and KDL deeper than 8 before the parser recurses into it, so hostile \
         or generated input cannot exhaust the stack, nor stall the `kdl` crate, whose time grows \
         as 2^n in nested slashdashed children (kdl-org/kdl-rs#177).",
    ),
    (
        "roce::fabric::roce_addressing",
        "The CoreWeave RoCE guide lists the RoCE-only NCCL settings: \
         NCCL_IB_ADDR_FAMILY=AF_INET6, because RoCE addressing on Spectrum-X is IPv6, and \
         NCCL_IB_TC=96, the fabric's traffic class (fabric-facts §4a, notes). Without the family \
         NCCL's GID auto-selection looks for IPv4-mapped GIDs (the default is AF_INET, \
         nccl-ucx-facts §1.4); without the traffic class RDMA traffic is not sent in the lossless \
         class.",
    ),
    (
        "roce::fabric::ib_roce_setting",
        "InfiniBand is LID-addressed: NCCL ignores NCCL_IB_GID_INDEX on an InfiniBand link layer \
         and applies the traffic class only to RoCE queue pairs (nccl-ucx-facts §1.4, §1.5), and \
         no CoreWeave InfiniBand recipe sets an address family, range or traffic class \
         (fabric-facts §4a). On an InfiniBand profile these settings do nothing, or mean the \
         profile names the wrong fabric.",
    ),
    (
        "roce::multus::missing_nad",
        "A GB300 RoCE pod needs all 16 per-port NADs, `ibs0p0-macvlan` … `ibs3p3-macvlan` in \
         `cw-multus`. CoreWeave provisions them but does not attach them, and a rail without its \
         NAD has no netdev and no `ibp` device in the pod (fabric-facts §3.2, §3.5). NCCL then \
         runs on fewer rails, without an error.",
    ),
    (
        "roce::multus::extra_nad",
        "A NAD that matches no rail is usually a typo of a rail's NAD (they are named \
         `ibs<nic>p<port>-macvlan`, fabric-facts §3.2). The pod then fails to start, because \
         Multus cannot find the NAD, or gets an interface NCCL does not use — and the rail the \
         typo was meant for is missing.",
    ),
    (
        "roce::multus::required",
        "RoCE v2 is IP-addressed: queue pairs are set up through the pod's network namespace, so \
         the rail netdevs must be attached to the pod. Without the Multus annotations the pod has \
         only eth0 and no `ibp` devices (fabric-facts §3.2, §10.6). SUNK NodeSets attach them for \
         their jobs (fabric-facts §3.4): mark those `sunk-nodeset #true`.",
    ),
    (
        "roce::multus::unneeded",
        "InfiniBand is LID-addressed, and its HCAs reach the pod through the RDMA device plugin; \
         no CoreWeave InfiniBand example carries a Multus annotation (fabric-facts §2, §10.6). An \
         attachment there is unused at best, and keeps the pod from starting where the NAD does \
         not exist.",
    ),
    (
        "roce::nccl::hca_matches_nothing",
        "NCCL_IB_HCA filters the RDMA devices by name prefix. When it matches none, NCCL logs \
         `NET/IB : No device found.` and silently falls back to TCP sockets unless NCCL_NET=IB is \
         forced (nccl-ucx-facts §1.3): the job runs, at a fraction of the bandwidth. CoreWeave \
         uses the prefix `ibp`, which matches every rail device on both fabrics (fabric-facts \
         §4a).",
    ),
    (
        "roce::nccl::hca_partial",
        "A filter that matches only some rail devices leaves the other rails idle: NCCL uses only \
         the devices NCCL_IB_HCA selects (nccl-ucx-facts §1.3). CoreWeave's recipes use `ibp`, \
         which covers every rail (fabric-facts §4a); a narrower filter is worth a warning unless \
         it is deliberate.",
    ),
    (
        "roce::nccl::prefix_collision",
        "NCCL_IB_HCA matches by prefix unless the list starts with `=`, so `mlx5_1` also selects \
         `mlx5_10` … `mlx5_19` (nccl-ucx-facts §1.1, point 4; NCCL's documentation warns about \
         it). A list meant to name exact devices selects more than it says.",
    ),
    (
        "roce::nccl::dropped_token",
        "NCCL parses its interface and HCA lists without reporting what it ignores: a port that \
         is not a number ≥ 1 reads as 0 and the device is silently dropped (verbs ports are \
         1-based); a name over 63 bytes overflows a 64-byte buffer; entries past the 16th \
         (NCCL_SOCKET_IFNAME) or 32nd (NCCL_IB_HCA) are ignored; spaces are not trimmed \
         (nccl-ucx-facts §1.1).",
    ),
    (
        "roce::nccl::socket_on_rdma",
        "NCCL_SOCKET_IFNAME picks the interface for NCCL's TCP bootstrap and control traffic; \
         CoreWeave points it at the front-end `eth0` on both fabrics (fabric-facts §4a). Naming a \
         rail netdev (`net1` … `net16` in a GB300 RoCE pod) moves that traffic onto the RDMA \
         backend, and as a prefix `net1` also selects `net10` … `net16` (nccl-ucx-facts §1.1).",
    ),
    (
        "roce::nccl::int_syntax",
        "NCCL parses integer knobs with strtoll(…, 0): a leading 0 means octal (`010` is 8), \
         trailing text is ignored (`3x` is 3), `true` and `yes` are 0 — so `NCCL_IB_DISABLE=true` \
         does not disable InfiniBand — and an empty value means unset (nccl-ucx-facts §0). None \
         of this is logged as an error.",
    ),
    (
        "roce::nccl::net_plugin",
        "The CoreWeave RoCE guide sets NCCL_NET_PLUGIN=none — NCCL's built-in IB verbs transport \
         — and keeps the Spectrum-X plugin for jobs of about 10,000 GPUs or more (fabric-facts \
         §4a, notes).",
    ),
    (
        "roce::nccl::debug_in_production",
        "NCCL_DEBUG=INFO logs every rank's initialisation, topology and transport choices: what \
         you want while validating a fabric, and noise and log cost in production. The CoreWeave \
         RoCE guide sets it for validation and says to remove it afterwards (fabric-facts §4a, \
         notes).",
    ),
    (
        "roce::nccl::knob_shadows_field",
        "Each NCCL variable a typed field sets (NCCL_IB_HCA from `nccl ib-hca`, NCCL_IB_TC from \
         `fabric traffic-class`, …) is checked against the rails; the same variable in `knobs` \
         would bypass those checks, and two sources for one variable leave unclear which value \
         the pod gets.",
    ),
    (
        "roce::nccl::knob_name",
        "`nccl knobs` holds NCCL_* variables, whose integer syntax roce checks the way NCCL \
         parses it (nccl-ucx-facts §0). Other variables belong in `env`, where roce checks them \
         against what it generates.",
    ),
    (
        "roce::ucx::verbs_transport",
        "The CoreWeave RoCE guide's UCX transport list for GB300 is `rc_mlx5,ud_mlx5,cuda_copy`, \
         and it says explicitly: not `rc_verbs`/`ud_verbs` (fabric-facts §4b). ConnectX NICs need \
         the mlx5 transports.",
    ),
    (
        "roce::ucx::gid_index",
        "Unlike NCCL, UCX has no address-family filter: its automatic GID choice prefers RoCE v2 \
         IPv4 GIDs (nccl-ucx-facts §3, UCX_IB_GID_INDEX). On CoreWeave GB300 RoCE the GID of the \
         IPv6 global address is index 11, and the guide sets UCX_IB_GID_INDEX=11 (fabric-facts \
         §4b, §10.3).",
    ),
    (
        "roce::ucx::rma_rails",
        "UCX_MAX_RMA_RAILS is how many devices UCX stripes one RMA transfer across; it cannot use \
         more rails than UCX_NET_DEVICES gives it. The CoreWeave guide pairs UCX_MAX_RMA_RAILS=4 \
         with the four devices `ibp0p0:1` … `ibp0p3:1` (fabric-facts §4b).",
    ),
    (
        "roce::dra::num_nodes",
        "A ComputeDomain (NVIDIA's DRA driver for GPUs, `resource.nvidia.com/v1beta1`) with `numNodes` set \
         waits for that many nodes' IMEX daemons before its channel is ready; more than the job has and the \
         pods stay Pending, fewer and the extra workers run outside the domain's guarantee. The CRD \
         recommends 0 (daemons join by DNS name), which the vendor's GB300 DRA MPIJob uses.",
    ),
    (
        "roce::dra::nic_count",
        "With DRA NICs the pod gets exactly the claimed devices; the rails (NCCL_IB_HCA, UCX_NET_DEVICES, \
         the rail rules) must describe the same number. When the claim also aligns GPUs and NICs by PCIe root \
         or NUMA node, the NICs must divide evenly over the GPUs (dranet's alignment examples).",
    ),
    (
        "roce::dra::clique_affinity",
        "Multi-node NVLink (IMEX) works only inside one NVL72 rack: the vendor's DRA MPIJob pairs the \
         ComputeDomain with required pod affinity on `nvidia.com/gpu.clique`. Without it (or a required Kueue \
         topology on that label) a worker can land in another rack, where NCCL silently uses the network. A \
         warning: the vendor's multi-rack variant leaves it out on purpose.",
    ),
    (
        "roce::dra::claim_name",
        "A pod's `resourceClaims` are keyed by name and each container lists the names it uses; the NIC \
         claim and the ComputeDomain channel claim need different names (Kubernetes rejects duplicates).",
    ),
    (
        "roce::dra::kueue_constraints",
        "Kueue (v0.19.2) charges a DRA claim's quota on its requests' counts and passes `constraints` \
         through: its own docs list device constraints as not supported (`site/content/en/docs/concepts/\
         dynamic_resource_allocation.md:264`), and `pkg/dra/claims_test.go:494` shows a `matchAttribute` \
         claim counted and admitted. Only the kube-scheduler then applies the alignment, so a job Kueue \
         admitted can stay Pending with its quota held when no node can meet it.",
    ),
    (
        "roce::dra::kueue_topology",
        "Kueue (v0.19.2) lists \"No DRA + Topology Aware Scheduling\": DRA resources are not accounted for \
         in TAS capacity, and using both \"may result in incorrect topology assignments for DRA devices\" \
         (`site/content/en/docs/concepts/dynamic_resource_allocation.md:268`). A profile whose pods claim DRA \
         NICs or a ComputeDomain channel and are placed by `kueue-topology` is that case; required pod \
         affinity (`clique-affinity`) leaves placement to the kube-scheduler, which weighs the devices.",
    ),
    (
        "roce::ucx::rdma_core",
        "UCX GPUDirect RDMA on GB300 RoCE needs rdma-core {MIN_RDMA_CORE} or newer, with UCX built against it. \
         With an older one UCX initialises, even detects GPU memory support, and then transfers \
         fail with `vendor_err 0x89` while NCCL tests still pass (fabric-facts §4b). roce cannot \
         look inside the image, so the profile declares it.",
    ),
    (
        "roce::ucx::net_device",
        "UCX_NET_DEVICES takes exact names, RDMA devices as `device:port`, with no prefix match \
         and no `^` (nccl-ucx-facts §3). UCX only warns about a device the pod does not have and \
         runs without it. In TCP mode, naming an RDMA device puts UCX back on the rails it was \
         pinned away from (fabric-facts §4a, notes).",
    ),
    (
        "roce::ucx::tls",
        "UCX_TLS names are exact and case-sensitive: UCX warns about an unknown one and ignores \
         it, and `all` must stand alone (nccl-ucx-facts §3). A list that enables no transport for \
         the profile's mode leaves UCX with nothing usable, or on a transport the profile did not \
         ask for.",
    ),
    (
        "roce::ucx::no_cuda_transport",
        "With an explicit UCX_TLS, GPU buffers need the CUDA transports (UCX FAQ, nccl-ucx-facts \
         §3), and the CoreWeave RoCE guide's list ends in `cuda_copy` (fabric-facts §4b). Without \
         one UCX cannot move GPU memory over the RDMA transports.",
    ),
    (
        "roce::caps::ipc_lock",
        "RDMA pins memory. Without CAP_IPC_LOCK the kernel caps pinning at RLIMIT_MEMLOCK and \
         memory registration fails with `ibv_reg_mr … Cannot allocate memory` (nccl-ucx-facts §4, \
         IPC_LOCK / memlock). The CoreWeave RoCE guide lists IPC_LOCK as required for direct \
         GB300 RoCE pods (fabric-facts §3.3).",
    ),
    (
        "roce::pool::rdma_resource",
        "`rdma/ib: 1` is the extended resource that lands a pod on an RDMA node, on both fabrics; \
         it is a boolean gate, not a device count (fabric-facts §1, §3.1). Without it the \
         scheduler may place the pod on a node without the backend fabric. SUNK NodeSets add it \
         themselves (fabric-facts §3.4).",
    ),
    (
        "roce::provider::env",
        "aws-ofi-nccl opens a libfabric provider; without FI_PROVIDER libfabric picks the first that \
         initialises, which on a node without EFA access (or a pod without the EFA resource) is TCP or \
         sockets, and NCCL runs at a fraction of the fabric's bandwidth without an error (AWS samples \
         set FI_PROVIDER=efa: awsome-distributed-training nccl-tests.yaml; shared/reference \
         clouds-and-dra.md §4, the silent fallback).",
    ),
    (
        "roce::provider::ib_knob",
        "`NCCL_IB_*` variables are read by NCCL's own IB verbs transport only (`src/transport/net_ib.cc`). \
         Once aws-ofi-nccl loads, NCCL's traffic goes through libfabric and the plugin reads its own \
         `OFI_NCCL_*` parameters and libfabric's `FI_*` ones (aws-ofi-nccl `include/nccl_ofi_param.h`), so \
         an IB knob in an EFA profile tunes nothing while looking like it does. `roce lint` reports the \
         same in manifests (`roce::lint::ib_knob_ignored`).",
    ),
    (
        "roce::nccl::version_unread",
        "NCCL reads only the variables its release knows and ignores every other `NCCL_*` without a \
         word (`ncclGetEnv` and `NCCL_PARAM` look names up; nothing lists the rest), so a variable set \
         for a release that does not read it only looks like tuning. Which release reads which variable \
         is roce's NCCL table (`fabric::nccl_versions`, decisions \"(nccl-versions)\"), each entry citing \
         its line in NVIDIA/nccl at the first release that reads it, or the string table of the \
         release's `libnccl.so.2` for 2.31 and 2.32: `NCCL_NET_GDR_C2C` first at 2.26.2-1 \
         `src/graph/paths.cc:381`, `NCCL_SHM_USE_CUDA_MEMCPY` absent from 2.31.2's binary. \
         `roce explain --profile` says the same of a log's release (`roce::explain::profile_env_unread`).",
    ),
    (
        "roce::nccl::version_uncovered",
        "roce has read NCCL 2.18 to 2.32 (the public release commits to 2.30, the PyPI \
         `nvidia-nccl-cu13` binaries of 2.31 and 2.32). Of a release outside that range it claims \
         nothing: an older one lacks variables later ones read, a newer one may add or drop some. The \
         rest of the profile is checked as usual; this says what the version cannot be used for.",
    ),
    (
        "roce::nccl::version_default",
        "A value equal to the release's own default changes nothing in that release, but it pins the \
         value across upgrades, which matters where NCCL has changed the default: `NCCL_IB_TIMEOUT` went \
         from 18 (2.18.1-1 `src/transport/net_ib.cc:76`) to 20 in 2.23 (2.23.4-1 \
         `src/transport/net_ib.cc:89`), `NCCL_IB_SPLIT_DATA_ON_QPS` from 1 to 0 in 2.20 (2.20.3-1 \
         `src/transport/net_ib.cc:1301`), `NCCL_NET_GDR_C2C` from 0 to 1 in 2.27 (2.27.3-1 \
         `src/graph/paths.cc:386`). Only these plain-value changes of 2.18 to 2.30 are in roce's table \
         (`fabric::nccl_versions::DEFAULTS`); a change to one of NCCL's \"not set\" sentinels, and the \
         defaults of 2.31 and 2.32 (binaries only), are not claimed.",
    ),
    (
        "roce::provider::ofi_platform_default",
        "On EC2, aws-ofi-nccl puts its own values for NCCL's buffer and chunk sizes, `NCCL_NET_FORCE_FLUSH`, \
         `NCCL_NETDEVS_POLICY` (p5en, p6-b200), `FI_EFA_FORK_SAFE` and its `OFI_NCCL_*` protocol, \
         connections and latency into the process environment, per instance type (the first matching entry of \
         `platform_data_map`, aws/aws-ofi-nccl v1.21.1 `src/platform-aws.cpp:81-282`), but only where the \
         variable is unset: `insert_envvars` stores them with `overwrite=false` and `update_environment` keeps \
         the process's own value (`include/nccl_ofi_environ.h:55-57`, `:104-111`); `OFI_NCCL_*` parameters \
         are set only while still at their default (`src/platform-aws.cpp:766-790`). A profile that sets one \
         to another value replaces the value AWS tuned for that instance, silently. A value equal to the \
         plugin's is not reported: it changes nothing and pins the value for plugin releases whose table \
         differs. Values compare as their reader parses them (NCCL's `strtoll`, aws-ofi-nccl's \
         case-insensitive enums, numbers and bools; libfabric's as text).",
    ),
    (
        "roce::nccl::version_syntax",
        "NCCL reads some values in a syntax that changed between releases, and an older release reads a \
         newer syntax another way without a word. `NCCL_IB_HCA` took `device[:port]` up to 2.30.4: \
         `parseStringList` reads the port with `atoi` and skips the rest of the entry (NVIDIA/nccl 2.30.4-1 \
         `src/misc/utils.cc:209-215`); from 2.30.7 it reads `device:port:rail:plane` and gives each NIC \
         that rail and plane (2.30.7-1 `src/misc/utils.cc:203-209`, `src/transport/net_ib/init.cc:436-437`). \
         On an older release the rail and plane are silently dropped. A release named without its patch \
         (`2.30`) is judged as its first patch, since the image may be older than the change. The table is \
         `fabric::nccl_versions::SYNTAX`; without `nccl version`, the same list is `roce::nccl::dropped_token`'s \
         warning.",
    ),
    (
        "roce::nccl::version_feature",
        "Some of what a profile can turn on needs a release of NCCL, or of the plugin built from its tree, \
         from one on, and an older one goes without it with no more than an INFO line. The Inspector \
         profiler plugin (`nccl { inspector … }`) exports only the profiler API v5 \
         (`ext-profiler/inspector/inspector_plugin.cc:486` at 2.28.3), which NCCL loads from 2.28 \
         (2.28.3-1 `src/plugin/profiler.cc:70`); 2.27 tries v4 to v1 (`src/plugin/profiler.cc:53`), finds \
         none and runs unprofiled. Its Prometheus output is read from the plugin of 2.29.3 \
         (`ext-profiler/inspector/inspector.cc:1153`); 2.29.2's writes JSON. A release named without its \
         patch is judged as its minor's first. The table is `fabric::nccl_versions::FEATURES`; NCCL's \
         diagnostics are a variable NCCL reads (`NCCL_RUN_DIAGNOSTICS`, 2.31), judged by \
         `roce::nccl::version_unread`.",
    ),
    (
        "roce::env::shadows_generated",
        "A variable in `env` that roce also generates from a typed field would override it and \
         escape the checks on that field: NCCL_SOCKET_IFNAME in `env` is not checked against the \
         rail netdevs (roce::nccl::socket_on_rdma). Each variable has one place.",
    ),
    (
        "roce::env::unrepresentable",
        "roce writes env into Pod YAML, Slurm sbatch scripts and Dockerfile ENV lines. A newline, \
         NUL or other control character cannot be carried safely by all of them: a newline ends \
         an sbatch `export` line or a Dockerfile instruction, and NUL ends a C string. NCCL's own \
         config file is `NAME=value` lines with no quoting (nccl-ucx-facts §0).",
    ),
];

/// Why `code` matters, with the fabric facts it quotes filled in.
fn why(code: Code) -> Option<String> {
    WHY.iter()
        .find(|(c, _)| *c == code.as_str())
        .map(|(_, w)| w.replace("{MIN_RDMA_CORE}", &MIN_RDMA_CORE.to_string()))
}

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

/// `roce::multus::missing_nad` → `multus.missing_nad`.
fn dir_name(code: Code) -> String {
    code.as_str()
        .strip_prefix("roce::")
        .expect("codes start with roce::")
        .replace("::", ".")
}

fn code_of_dir(dir: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| dir_name(*c) == dir)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bad,
    Good,
    Helper,
}

/// One fixture file.
#[derive(Debug)]
struct Fixture {
    /// The code directory, e.g. `multus.missing_nad`.
    dir: String,
    /// The file name, e.g. `bad.kdl`.
    file: String,
    bytes: Vec<u8>,
}

impl Fixture {
    /// Source name: `<dir>/<file>`, stable across machines.
    fn name(&self) -> String {
        format!("{}/{}", self.dir, self.file)
    }

    fn stem(&self) -> &str {
        self.file.rsplit_once('.').map_or(&self.file, |(s, _)| s)
    }

    fn is_yaml(&self) -> bool {
        self.file.ends_with(".yaml") || self.file.ends_with(".yml")
    }

    fn kind(&self) -> Kind {
        if self.stem() == "bad" || self.stem().starts_with("bad-") {
            Kind::Bad
        } else if self.stem() == "good" || self.stem().starts_with("good-") {
            Kind::Good
        } else {
            Kind::Helper
        }
    }

    /// The primary bad fixture of its directory (`bad.kdl` / `bad.yaml`).
    fn is_primary(&self) -> bool {
        self.stem() == "bad"
    }

    fn comment(&self) -> &'static str {
        if self.is_yaml() { "#" } else { "//" }
    }

    /// The text as committed (lossy for non-UTF-8 fixtures).
    fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The first line, without its comment marker.
    fn title(&self) -> String {
        let text = self.raw_text();
        let first = text.lines().next().unwrap_or_default();
        first
            .strip_prefix(self.comment())
            .unwrap_or(first)
            .trim()
            .to_string()
    }

    /// The fixture as the docs show it: non-UTF-8 bytes and control characters escaped.
    fn doc_text(&self) -> String {
        let mut text = escape_bytes(&self.bytes);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// The `pad-to: N` directive, if any.
    fn pad_to(&self) -> Option<usize> {
        let marker = format!("{} pad-to:", self.comment());
        self.raw_text().lines().find_map(|l| {
            l.trim()
                .strip_prefix(&marker)
                .map(|n| n.trim().parse().expect("pad-to: takes a byte count"))
        })
    }

    /// Load the fixture like the CLI would: bytes that are not UTF-8 become one `roce::syntax` problem.
    fn load(&self) -> Vec<Problem> {
        let text = match std::str::from_utf8(&self.bytes) {
            Ok(text) => text.to_string(),
            Err(_) => {
                let (_, problem) = roce_model::load::not_text(&self.name(), &self.bytes);
                return vec![problem];
            }
        };
        let text = match self.pad_to() {
            Some(n) => pad(text, n, self.comment()),
            None => text,
        };
        load(Source::new(self.name(), text), &FixtureFiles).problems
    }
}

/// Append comment lines until `text` is longer than `bytes`.
fn pad(mut text: String, bytes: usize, comment: &str) -> String {
    let line = format!("{comment} {}\n", "padding ".repeat(12));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.reserve(bytes + line.len() - text.len().min(bytes));
    while text.len() <= bytes {
        text.push_str(&line);
    }
    text
}

/// UTF-8 text as is, except control characters other than newline and tab; those and every byte of an
/// invalid sequence as `\xNN`.
fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() && c != '\n' && c != '\t' && (c as u32) < 0x100 {
                write!(out, "\\x{:02X}", c as u32).unwrap();
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            write!(out, "\\x{b:02X}").unwrap();
        }
    }
    out
}

/// Resolves `extends` references to files next to the fixture that names them.
#[derive(Debug)]
struct FixtureFiles;

impl Resolve for FixtureFiles {
    fn resolve(&self, reference: &str, from: &Source) -> Result<Source, String> {
        if from.name.starts_with("builtin:") {
            return Err(format!("`{reference}` is not a built-in profile"));
        }
        let base = Path::new(&from.name).parent().unwrap_or(Path::new(""));
        let mut name = PathBuf::new();
        for part in base.join(reference).components() {
            match part {
                Component::Normal(p) => name.push(p),
                Component::ParentDir => {
                    name.pop();
                }
                _ => {}
            }
        }
        let name = name.to_string_lossy().replace('\\', "/");
        let path = fixtures_root().join(&name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Source::new(name, text)),
            Err(_) => Err(format!(
                "not a built-in profile, and there is no file `{name}`"
            )),
        }
    }
}

/// Every fixture directory with its files, sorted.
fn discover() -> BTreeMap<String, Vec<Fixture>> {
    let mut out = BTreeMap::new();
    for dir in std::fs::read_dir(fixtures_root()).expect("tests/fixtures/rules exists") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let dir_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                files.push(Fixture {
                    dir: dir_name.clone(),
                    file: f.file_name().unwrap().to_string_lossy().into_owned(),
                    bytes: std::fs::read(&f).unwrap(),
                });
            }
        }
        // The primary bad fixture first, then the other bad ones, then good ones, then helpers.
        files.sort_by_key(|f| (f.kind() as u8, !f.is_primary(), f.file.clone()));
        out.insert(dir_name, files);
    }
    out
}

fn render(problems: &[Problem]) -> String {
    let handler =
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(80);
    let mut out = String::new();
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut one = String::new();
        handler.render_report(&mut one, p).unwrap();
        for line in one.lines() {
            // Control characters from binary input, shown as their Unicode pictures (same width).
            let line: String = line
                .trim_end()
                .chars()
                .map(|c| match c as u32 {
                    n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or(c),
                    0x7f => '\u{2421}',
                    _ => c,
                })
                .collect();
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn summary(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {} {}: {}", p.severity.as_str(), p.code, p.message))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_code_has_a_bad_and_a_good_fixture() {
    let dirs = discover();
    let mut errors = Vec::new();
    for code in profile_codes() {
        let dir = dir_name(*code);
        let Some(files) = dirs.get(&dir) else {
            errors.push(format!("{code}: no directory tests/fixtures/rules/{dir}/"));
            continue;
        };
        if !files
            .iter()
            .any(|f| f.kind() == Kind::Bad && f.is_primary())
        {
            errors.push(format!("{dir}: no bad.kdl or bad.yaml"));
        }
        if !files.iter().any(|f| f.kind() == Kind::Good) {
            errors.push(format!("{dir}: no good.kdl or good.yaml"));
        }
        if files.iter().filter(|f| f.is_primary()).count() > 1 {
            errors.push(format!("{dir}: more than one primary bad fixture"));
        }
    }
    for code in profile_codes() {
        if why(*code).is_none() {
            errors.push(format!(
                "{code}: no entry in the WHY table of tests/rules.rs"
            ));
        }
    }
    for (code, _) in WHY {
        if !Code::ALL.iter().any(|c| c.as_str() == *code) {
            errors.push(format!("WHY names {code}, which is not a code"));
        }
    }
    for (dir, files) in &dirs {
        if code_of_dir(dir).is_none() {
            errors.push(format!("{dir}: no code has this directory (orphan)"));
        }
        let mut stems: Vec<&str> = files.iter().map(Fixture::stem).collect();
        stems.sort_unstable();
        if stems.windows(2).any(|w| w[0] == w[1]) {
            errors.push(format!(
                "{dir}: two fixtures share a stem (snapshot names clash)"
            ));
        }
        for f in files {
            let head = escape_bytes(&f.bytes);
            if !head.starts_with(&format!("{} ", f.comment())) {
                errors.push(format!(
                    "{}: must start with a `{} …` line saying what it shows",
                    f.name(),
                    f.comment()
                ));
            }
        }
    }
    assert!(errors.is_empty(), "fixture layout:\n{}", errors.join("\n"));
}

#[test]
fn bad_fixtures_fire_their_code_and_good_ones_do_not() {
    let mut errors = Vec::new();
    let mut counts = BTreeMap::new();
    for (dir, files) in discover() {
        let Some(code) = code_of_dir(&dir) else {
            continue;
        };
        for f in &files {
            let kind = f.kind();
            if kind == Kind::Helper {
                continue;
            }
            *counts
                .entry((kind == Kind::Bad, f.is_yaml()))
                .or_insert(0usize) += 1;
            let problems = f.load();
            let fired: Vec<&Problem> = problems.iter().filter(|p| p.code == code).collect();
            match kind {
                Kind::Bad if fired.is_empty() => errors.push(format!(
                    "{} does not fire {code}; it reports:\n{}",
                    f.name(),
                    summary(&problems)
                )),
                Kind::Bad => {
                    for p in fired {
                        if p.primary().is_none() {
                            errors.push(format!("{}: {code} has no primary label", f.name()));
                        }
                        if p.help.as_deref().is_none_or(str::is_empty) {
                            errors.push(format!("{}: {code} has no help", f.name()));
                        }
                    }
                }
                Kind::Good if !fired.is_empty() => errors.push(format!(
                    "{} fires {code}:\n{}",
                    f.name(),
                    summary(&problems)
                )),
                _ => {}
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
    let kdl = counts.get(&(true, false)).copied().unwrap_or(0);
    let yaml = counts.get(&(true, true)).copied().unwrap_or(0);
    assert!(
        kdl > 0 && yaml >= 10,
        "bad fixtures: {kdl} KDL, {yaml} YAML"
    );
}

#[test]
fn diagnostics_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../../snapshots/diagnostics");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (dir, files) in discover() {
        for f in files.iter().filter(|f| f.kind() == Kind::Bad) {
            let rendered = render(&f.load());
            let mut s = settings.clone();
            s.set_input_file(fixtures_root().join(&dir).join(&f.file));
            s.set_description(f.title());
            s.bind(|| {
                insta::assert_snapshot!(format!("{dir}__{}", f.stem()), rendered);
            });
        }
    }
}

/// The issue's acceptance case: 13 of 16 NADs listed explicitly.
#[test]
fn missing_nad_names_the_missing_nads_at_the_multus_line() {
    let dir = dir_name(Code::MissingNad);
    let files = discover().remove(&dir).unwrap();
    let f = files.iter().find(|f| f.file == "bad.kdl").unwrap();
    let text = f.raw_text();
    let listed = text.matches("-macvlan\"").count()
        - usize::from(text.contains("name=\"{host-port}-macvlan\""));
    assert_eq!(listed, 13, "the fixture lists 13 of the 16 NADs");
    let multus_line = text
        .lines()
        .position(|l| l.trim_start().starts_with("multus "))
        .expect("a multus line")
        + 1;

    let problems = f.load();
    let p = problems
        .iter()
        .find(|p| p.code == Code::MissingNad)
        .unwrap_or_else(|| panic!("no missing_nad:\n{}", summary(&problems)));
    assert!(p.is_error());
    let missing = ["ibs1p3-macvlan", "ibs2p3-macvlan", "ibs3p3-macvlan"];
    for nad in missing {
        assert!(p.message.contains(nad), "{nad} not named in: {}", p.message);
    }
    assert!(p.message.contains("13 of 16"), "{}", p.message);
    let at = p.location().expect("resolved");
    assert_eq!(
        at.file,
        f.name(),
        "points into the profile, not the built-in"
    );
    assert_eq!(at.line, multus_line, "points at the multus line");
    // Nothing else is wrong with the profile.
    assert_eq!(problems.len(), 1, "{}", summary(&problems));
}

/// Inputs no profile should be: each must give at least one error, and none may panic.
fn garbage() -> Vec<(String, Vec<u8>)> {
    let gb300 = builtin::source("coreweave/gb300-roce").unwrap();
    let kdl = gb300.text.to_string();
    let yaml = builtin::yaml("coreweave/gb300-roce").unwrap();
    let big = |head: &str, comment: &str| pad(head.to_string(), 10 * 1024 * 1024 + 1, comment);
    let mut out: Vec<(String, Vec<u8>)> = vec![
        ("empty.kdl".into(), Vec::new()),
        ("empty.yaml".into(), Vec::new()),
        ("blank.kdl".into(), b"\n  \n\t\n".to_vec()),
        ("blank.yaml".into(), b"\n  \n".to_vec()),
        ("binary.kdl".into(), b"\x7fELF\x02\x01\x01\0\0\0\xff\xfe\xfd\x80\x81".to_vec()),
        ("binary.yaml".into(), b"name: \xc3\x28\n\xa0\xa1".to_vec()),
        ("nul.kdl".into(), b"profile \"a\0b\" {\0}".to_vec()),
        ("nul.yaml".into(), b"name: \0\n".to_vec()),
        ("truncated.kdl".into(), kdl.as_bytes()[..kdl.len() / 2].to_vec()),
        ("truncated.yaml".into(), yaml.as_bytes()[..yaml.len() / 2 + 3].to_vec()),
        ("huge.kdl".into(), big(&kdl, "//").into_bytes()),
        ("huge.yaml".into(), big(&yaml, "#").into_bytes()),
        (
            "deep.kdl".into(),
            format!("profile \"x\" {{ {}{} }}", "a { ".repeat(10_000), "}".repeat(10_000)).into_bytes(),
        ),
        (
            "deep-flow.yaml".into(),
            format!("name: x\nenv: {}{}\n", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
        ),
        (
            "deep-block.yaml".into(),
            {
                let mut s = String::from("name: x\nenv:\n");
                for i in 1..200 {
                    writeln!(s, "{}a{i}:", " ".repeat(i)).unwrap();
                }
                s.into_bytes()
            },
        ),
        (
            "deep-seq.yaml".into(),
            format!("name: x\nenv:\n{}\n", (0..200).map(|i| format!("{}- ", " ".repeat(i * 2))).collect::<Vec<_>>().join("\n")).into_bytes(),
        ),
        ("top-level-typo.kdl".into(), b"fabirc roce\nprofile \"x\" extends=\"coreweave/gb300-roce\" { fabirc roce }".to_vec()),
        ("top-level-typo.yaml".into(), b"name: x\nextends: coreweave/gb300-roce\nfabirc: roce\n".to_vec()),
        ("not-a-map.yaml".into(), b"- a\n- b\n".to_vec()),
        ("scalar.yaml".into(), b"just a string\n".to_vec()),
        ("not-a-profile.kdl".into(), b"fabric roce\n".to_vec()),
        ("json.yaml".into(), br#"{"name": 1, "fabric": [[]], "rails": {"nics": -1}}"#.to_vec()),
        ("anchors.yaml".into(), b"a: &x [*x]\n".to_vec()),
        ("tabs.yaml".into(), b"name: x\n\tfabric: roce\n".to_vec()),
        ("crlf.kdl".into(), b"profile \"x\" {\r\n fabric roce\r\n".to_vec()),
        ("bom.kdl".into(), b"\xef\xbb\xbfprofile".to_vec()),
        ("huge-int.kdl".into(), b"profile \"x\" extends=\"coreweave/gb300-roce\" { node-pool gpus-per-node=99999999999999999999999999999999999999999 }".to_vec()),
        ("huge-int.yaml".into(), b"name: x\nextends: coreweave/gb300-roce\nnode-pool: {gpus-per-node: 99999999999999999999999999999999999999999999}\n".to_vec()),
        ("self-extends.kdl".into(), b"profile \"x\" extends=\"self-extends.kdl\" {}".to_vec()),
    ];
    // Deterministic noise: raw bytes, and text made of the characters KDL and YAML care about.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 24) as u8
    };
    let alphabet = b"{}[]\"'#=:;,-/\\*&!|>?%@ \t\n\rprofilefabricroce0123456789";
    for n in 0..48 {
        let len = 1 + (n * 37) % 400;
        let bytes: Vec<u8> = if n % 3 == 0 {
            (0..len).map(|_| next()).collect()
        } else {
            (0..len)
                .map(|_| alphabet[usize::from(next()) % alphabet.len()])
                .collect()
        };
        let ext = if n % 2 == 0 { "kdl" } else { "yaml" };
        out.push((format!("noise-{n}.{ext}"), bytes));
    }
    out
}

/// Loads bytes like the CLI: `not_text` for non-UTF-8, otherwise `load` with files resolved next to it.
fn load_bytes(name: &str, bytes: &[u8]) -> Vec<Problem> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load(Source::new(name, text.to_string()), &BuiltinsOnly).problems,
        Err(_) => vec![roce_model::load::not_text(name, bytes).1],
    }
}

#[test]
fn garbage_gives_coded_errors_and_never_panics() {
    let mut errors = Vec::new();
    for (name, bytes) in garbage() {
        match catch_unwind(AssertUnwindSafe(|| load_bytes(&name, &bytes))) {
            Err(_) => errors.push(format!("{name}: panicked")),
            Ok(problems) => {
                if !problems.iter().any(|p| p.severity == Severity::Error) {
                    errors.push(format!("{name}: no error:\n{}", summary(&problems)));
                }
                for p in &problems {
                    if p.primary().is_none() || p.location().is_none() {
                        errors.push(format!("{name}: {} has no place", p.code));
                    }
                    // Every problem renders (spans inside the source, on char boundaries).
                    if catch_unwind(AssertUnwindSafe(|| render(std::slice::from_ref(p)))).is_err() {
                        errors.push(format!("{name}: {} does not render", p.code));
                    }
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn truncated_builtins_never_panic() {
    let texts = builtin::names().flat_map(|n| {
        let kdl = builtin::source(n).unwrap().text.to_string();
        [
            (format!("{n}.kdl"), kdl),
            (format!("{n}.yaml"), builtin::yaml(n).unwrap()),
        ]
    });
    for (name, text) in texts {
        for cut in (0..text.len())
            .step_by(13)
            .filter(|c| text.is_char_boundary(*c))
        {
            let prefix = &text[..cut];
            let result = catch_unwind(AssertUnwindSafe(|| {
                let problems =
                    load(Source::new(name.clone(), prefix.to_string()), &BuiltinsOnly).problems;
                render(&problems)
            }));
            assert!(result.is_ok(), "{name} cut at byte {cut} panicked");
        }
    }
}

fn fence(f: &Fixture) -> &'static str {
    if f.is_yaml() { "yaml" } else { "kdl" }
}

/// `docs/rules.md`, generated from the fixtures.
fn rules_doc() -> String {
    let dirs = discover();
    let mut md = String::new();
    md.push_str(
        "# Rule catalogue\n\n\
         <!-- Generated from crates/roce-model/tests/fixtures/rules by crates/roce-model/tests/rules.rs.\n     \
         Do not edit: change the fixtures, then run `ROCE_BLESS=1 cargo test -p roce-model --test tests rules::`. -->\n\n\
         Every diagnostic roce reports has a stable code. This page lists each one with its severity, why it\n\
         matters, a profile that triggers it, what roce says about that profile, and the corrected profile.\n\
         The examples are the rule's tests (`crates/roce-model/tests/fixtures/rules/<code>/`); most extend a\n\
         built-in profile so they show only what differs. Errors fail `roce check`; warnings do not.\n\n\
         Facts cited as *fabric-facts* and *nccl-ucx-facts* are from the project's reference notes\n\
         (`fabric-facts.md`: CoreWeave InfiniBand and RoCE fabrics; `nccl-ucx-facts.md`: how NCCL and UCX read\n\
         their settings).\n\n",
    );
    md.push_str("| Code | Severity | Example |\n|---|---|---|\n");
    for code in profile_codes() {
        let dir = dir_name(*code);
        let title = dirs
            .get(&dir)
            .and_then(|f| f.iter().find(|f| f.is_primary()))
            .map(Fixture::title)
            .unwrap_or_default();
        let anchor = code.as_str().replace("::", "");
        writeln!(
            md,
            "| [`{code}`](#{anchor}) | {} | {} |",
            code.severity().as_str(),
            title.replace('|', "\\|")
        )
        .unwrap();
    }
    md.push('\n');
    for code in profile_codes() {
        let dir = dir_name(*code);
        let Some(files) = dirs.get(&dir) else {
            continue;
        };
        writeln!(md, "## {code}\n").unwrap();
        let sev = match code.severity() {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
            Severity::Info => "Info",
        };
        writeln!(md, "**{sev}.** {}\n", why(*code).unwrap_or_default()).unwrap();
        for f in files {
            let label = match f.kind() {
                Kind::Bad => "Bad",
                Kind::Good => "Good",
                Kind::Helper => "Helper, reached through `extends`",
            };
            writeln!(md, "{label} — `{}`: {}\n", f.file, f.title()).unwrap();
            writeln!(md, "```{}\n{}```\n", fence(f), f.doc_text()).unwrap();
            if f.kind() == Kind::Bad {
                let problems: Vec<Problem> =
                    f.load().into_iter().filter(|p| p.code == *code).collect();
                writeln!(md, "roce reports:\n\n```text\n{}```\n", render(&problems)).unwrap();
            }
        }
    }
    let mut out = String::new();
    for line in md.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// Codes checked on profiles (fixtures here); manifest, log and host codes are tested by their own
/// crates and documented by hand after [`GENERATED_END`] in `docs/rules.md`.
fn profile_codes() -> impl Iterator<Item = &'static Code> {
    Code::ALL.iter().filter(|c| c.domain() == Domain::Profile)
}

/// Everything in `docs/rules.md` after this line is written by hand (lint, explain and doctor codes).
const GENERATED_END: &str = "<!-- end of generated profile rules; hand-written sections follow -->";

#[test]
fn every_code_is_documented_in_rules_md() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules.md");
    let doc = std::fs::read_to_string(path).unwrap();
    for code in Code::ALL {
        assert!(
            doc.contains(&format!("## {code}\n")),
            "docs/rules.md has no `## {code}` section"
        );
    }
}

#[test]
fn rules_doc_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules.md");
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    let tail = existing
        .split_once(GENERATED_END)
        .map_or(String::new(), |(_, tail)| tail.to_string());
    let want = format!("{}\n\n{GENERATED_END}{tail}", rules_doc());
    if std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = existing;
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(have.lines().count().min(want.lines().count()) + 1, |i| {
                i + 1
            });
        panic!(
            "docs/rules.md is stale (first difference at line {line}); regenerate it with\n  \
             ROCE_BLESS=1 cargo test -p roce-model --test tests rules::rules_doc_is_current"
        );
    }
}
