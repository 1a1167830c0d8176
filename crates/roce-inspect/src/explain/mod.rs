//! `roce explain`: read NCCL and UCX logs and say whether the job really used GPUDirect RDMA, and if not, why.
//!
//! The parser streams: it reads one line at a time, keeps per-process state (grouped by `host:pid`, the prefix
//! NCCL puts on every line) and a bounded set of findings, so memory stays flat however long the log is. It knows
//! the line formats of NCCL 2.4–2.32 (see `shared/reference/nccl-ucx-facts.md` §2), the UCX error lines that
//! matter for RDMA, net plugins (aws-ofi-nccl, gIB, HPC-X, FastSocket), and the PyTorch, nccl-tests and NIXL
//! lines that report on them. The verdict's invariants are enforced in one place, `invariants.rs`.
//!
//! ```
//! use roce_inspect::explain::{explain_str, Transport};
//! let log = "\
//! node1:10:10 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
//! node1:10:10 [0] NCCL INFO NCCL_IB_HCA set to ibp
//! node1:10:10 [0] NCCL INFO NET/IB : No device found.
//! node1:10:10 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
//! node1:10:10 [0] NCCL INFO Using network Socket
//! ";
//! let e = explain_str("job.log", log);
//! assert_eq!(e.transport, Transport::Socket);
//! assert_eq!(e.nccl_version.as_deref(), Some("2.28.9"));
//! assert_eq!(e.findings[0].code.as_str(), "roce::explain::socket_fallback");
//! ```

/// A [`memchr::memmem::Finder`] for a fixed needle, built on first use and kept in a static of the call site.
///
/// The one-shot `memchr::memmem::find` builds a searcher (Two-Way tables, a SIMD prefilter) on every call
/// whose haystack is 64 bytes or longer, so a line tested for a dozen fragments paid a dozen builds: most of
/// the time of a UCX line and much of any other line without NCCL's INFO shape (callgrind on the fuzz corpora,
/// issue 32). A finder answers exactly as `memmem::find` with the same needle does.
macro_rules! finder {
    ($needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        &*FINDER
    }};
}

/// `memchr::memmem::find(hay, needle)` for a fixed needle, with [`finder!`]'s searcher built once.
macro_rules! find {
    ($hay:expr, $needle:expr) => {
        finder!($needle).find($hay)
    };
}

mod collector;
mod diag;
mod expect;
mod finding;
mod invariants;
mod json;
mod line;
mod merge;
mod nccl;
mod nccl_tests;
mod profile;
mod ras;
mod sockets;
mod torch;
mod transport;
pub(crate) use transport::is_socket as transport_is_socket;
mod ucx;
mod ucx_config;
mod ucx_perftest;
mod verdict;

use std::collections::HashMap;
use std::io::BufRead;

use aho_corasick::packed;
use indexmap::{IndexMap, IndexSet};
use memchr::memmem::Finder;
use roce_model::Code;

pub use diag::Diagnostic;
pub use finding::{EXCERPT_MAX, Evidence, Finding, HOSTS_MAX, Rendered};
pub use nccl_tests::{Bandwidth, Expected};
pub use ras::InspectorCollective;
pub use ucx_perftest::UcxPerftest;

/// Lines longer than this are cut (the rest is skipped) so a file without newlines cannot exhaust memory.
pub const LINE_MAX: usize = 64 * 1024;
/// At most this many processes are tracked one by one; lines of further processes are counted together.
pub const PROCESSES_MAX: usize = 65_536;
/// Most INFO-line prefixes remembered (see `Explainer::proc_of_prefix`).
const PREFIXES_MAX: usize = 16_384;
/// At most this many distinct findings are kept before merging (then later distinct ones are only counted).
const FINDINGS_MAX: usize = 512;
/// Lines kept as evidence that the job failed.
const FATAL_MAX: usize = 8;

/// The network NCCL moved data over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// InfiniBand verbs over an InfiniBand link layer.
    Ib,
    /// InfiniBand verbs over Ethernet (RoCE).
    Roce,
    /// libfabric through the aws-ofi-nccl plugin (`NET/OFI`; EFA on AWS).
    Ofi,
    /// TCP sockets (`NET/Socket`, or a TCP plugin such as FastSocket).
    Socket,
    /// The log does not say (no INFO lines, a plugin of another kind, or an excerpt).
    Unknown,
}

impl Transport {
    /// `ib`, `roce`, `ofi`, `socket` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Ib => "ib",
            Transport::Roce => "roce",
            Transport::Ofi => "ofi",
            Transport::Socket => "socket",
            Transport::Unknown => "unknown",
        }
    }
}

/// An RDMA device port NCCL listed (`NET/IB : Using [0]mlx5_0:1/RoCE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Device name (`mlx5_0`, `ibp0p0`).
    pub name: String,
    /// Verbs port.
    pub port: Option<u32>,
    /// `IB`, `RoCE`, … as NCCL printed it (after the slash).
    pub link_layer: String,
    /// NCCL's per-HCA GPUDirect RDMA verdict, when the log has it.
    pub gdr: Option<bool>,
    /// The port's speed in Mb/s as NCCL logged it (`NET/IB: [0] mlx5_0:uverbs0:1/RoCE … speed=400000`,
    /// INFO NET on 2.27+): active speed × width, 400000 for NDR 4x.
    pub speed_mbps: Option<u32>,
}

/// How many connections of each kind the channel lines show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connections {
    /// Over a network (`via NET/…`).
    pub net: u64,
    /// … of which with GPUDirect RDMA (`/GDRDMA`).
    pub net_gdr: u64,
    /// GPU peer-to-peer (NVLink/PCIe, `via P2P/…`).
    pub p2p: u64,
    /// Shared host memory (`via SHM/…`).
    pub shm: u64,
    /// Anything else (CollNet, NVLS, …).
    pub other: u64,
}

impl Connections {
    fn add(&mut self, o: &Connections) {
        self.net += o.net;
        self.net_gdr += o.net_gdr;
        self.p2p += o.p2p;
        self.shm += o.shm;
        self.other += o.other;
    }
}

/// One NCCL process (a rank), as its lines show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Host name (as NCCL prints it: cut at the first dot).
    pub host: String,
    /// Process id (as printed; may be redacted text).
    pub pid: String,
    /// Rank in the largest communicator it initialized.
    pub rank: Option<u32>,
    /// Size of that communicator.
    pub nranks: Option<u32>,
    /// CUDA device.
    pub cuda_dev: Option<u32>,
    /// NCCL version it printed.
    pub nccl_version: Option<String>,
    /// The network it chose (`IB`, `Socket`, `IBext_v8`, …).
    pub network: Option<String>,
    /// Its connections.
    pub connections: Connections,
    /// RDMA ports its `NET/IB : Using` line listed (0 when it listed none): a node short of a rail shows
    /// fewer than its peers.
    pub rdma_ports: u32,
    /// Its lines that carried information for the verdict (collective-call and proxy chatter is not counted).
    pub lines: u64,
}

/// Per-file statistics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileStats {
    /// Name (path or `<stdin>`).
    pub name: String,
    /// Lines read.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// NCCL lines (INFO, WARN, version).
    pub nccl_lines: u64,
    /// UCX lines.
    pub ucx_lines: u64,
    /// Lines of other programs that report on NCCL or UCX (PyTorch errors, nccl-tests tables, NIXL).
    pub report_lines: u64,
    /// Lines that are not blank.
    pub nonblank_lines: u64,
    /// A NUL byte in the first 8 KiB.
    pub binary: bool,
    /// Bytes of lines checked for NUL bytes so far.
    scanned: u64,
}

/// What a log says about a job's data path.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The transport NCCL used between ranks.
    pub transport: Transport,
    /// The network name NCCL chose (`IB`, `Socket`, `IBext_v8`, `AWS Libfabric`, …).
    pub network: Option<String>,
    /// Whether network traffic used GPUDirect RDMA: `None` when the log cannot tell (no network connection).
    pub gpudirect_rdma: Option<bool>,
    /// The NCCL version (the first one seen; others raise a finding).
    pub nccl_version: Option<String>,
    /// RDMA device ports NCCL listed, in order of appearance.
    pub devices: Vec<Device>,
    /// Socket interfaces NCCL used (`NET/Socket : Using`).
    pub socket_interfaces: Vec<String>,
    /// The environment NCCL (and UCX) echoed, as NCCL read it (integers without the trailing period).
    pub env: IndexMap<String, String>,
    /// The line that first echoed each variable.
    pub env_lines: IndexMap<String, Evidence>,
    /// NCCL's IB transport printed something (it looked for RDMA devices).
    pub ib_probed: bool,
    /// One entry per process.
    pub processes: Vec<Process>,
    /// Hosts, in order of appearance.
    pub hosts: Vec<String>,
    /// Connections of all processes.
    pub connections: Connections,
    /// The files read.
    pub files: Vec<FileStats>,
    /// Findings, errors first, then by line.
    pub findings: Vec<Finding>,
    /// What [`Explanation::compare_profile`] checked, once it ran.
    pub profile: Option<ProfileCheck>,
    /// nccl-tests results, when the log has a `*_perf` table.
    pub bandwidth: Option<Bandwidth>,
    /// The most nodes one communicator spanned (`comm … nNodes N`, NCCL 2.19+).
    pub nodes: Option<u32>,
    /// The most ranks one communicator had on a node (`comm … localRanks N`, NCCL 2.19+).
    pub local_ranks: Option<u32>,
    /// The external net plugin NCCL loaded (its name or library path) and the line that shows it.
    pub net_plugin: Option<(String, Evidence)>,
    /// The `ucx_perftest` result, when the log has one.
    pub ucx_perftest: Option<UcxPerftest>,
    /// The results of NCCL's own diagnostics (`NCCL DIAG` lines, `NCCL_RUN_DIAGNOSTICS=1`, 2.31+), in order of
    /// first appearance.
    pub diagnostics: Vec<Diagnostic>,
    /// The Inspector profiler plugin's records, per collective, when the input holds its output.
    pub inspector: Vec<InspectorCollective>,
}

/// What a profile comparison covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileCheck {
    /// The profile's name.
    pub name: String,
    /// Variables of the profile compared with the log.
    pub checked: Vec<String>,
    /// Variables of the profile the log cannot confirm (NCCL reads and echoes them only on paths this job
    /// did not take, e.g. GID and traffic-class knobs when no IB connection was made).
    pub unverified: Vec<String>,
}

impl Explanation {
    /// Does any finding have error severity?
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(Finding::is_error)
    }

    /// The codes of the findings, in report order.
    pub fn codes(&self) -> Vec<Code> {
        self.findings.iter().map(|f| f.code).collect()
    }

    /// The JSON form: `{"transport", "gpudirect_rdma", "nccl_version", "devices", "env", "findings", …}`.
    pub fn to_json(&self) -> serde_json::Value {
        json::to_json(self)
    }

    /// Compare what the log shows with what a profile expects, adding `roce::explain::profile_*` findings.
    ///
    /// ```
    /// use roce_model::{builtin, load, BuiltinsOnly};
    /// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
    /// let mut e = roce_inspect::explain::explain_str("job.log",
    ///     "n1:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5\nn1:1:1 [0] NCCL INFO Using network Socket\n");
    /// e.compare_profile(&profile);
    /// assert!(e.codes().iter().any(|c| c.as_str() == "roce::explain::profile_env_mismatch"));
    /// ```
    pub fn compare_profile(&mut self, profile: &roce_model::Profile) {
        let more = profile::compare(self, profile);
        self.findings.extend(more);
        invariants::order(&mut self.findings);
    }

    /// Compare the nccl-tests bus bandwidth with an expected one (GB/s; `from` says where the number comes
    /// from): records the percentage in [`Bandwidth::expected`] and adds `roce::explain::bandwidth_low` when
    /// the large-message bus bandwidth is under 80 % of it. Does nothing when the log has no table.
    ///
    /// ```
    /// let mut e = roce_inspect::explain::explain_str("perf.log",
    ///     "   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0   1230.1  109.11  190.95      0\n");
    /// e.compare_bandwidth(380.0, "--expect-busbw");
    /// assert_eq!(e.bandwidth.as_ref().unwrap().expected.as_ref().unwrap().percent.round(), 50.0);
    /// assert!(e.codes().iter().any(|c| c.as_str() == "roce::explain::bandwidth_low"));
    /// ```
    pub fn compare_bandwidth(&mut self, expected_busbw: f64, from: &str) {
        if let Some(b) = self.bandwidth.as_mut() {
            b.expected_why_not = None;
        }
        if let Some(f) = verdict::compare_bandwidth(self, expected_busbw, from) {
            self.findings.push(f);
            invariants::order(&mut self.findings);
        }
    }
}

impl Explanation {
    /// Compare the nccl-tests bus bandwidth with the best expectation there is: `given`
    /// (`--expect-busbw`) first, then the profile's `job expected-busbw`, then the line rate of the
    /// profile's rails (`rails link-rate`), then that of the RDMA devices NCCL logged with their speed. When
    /// none applies, [`Bandwidth::expected_why_not`] says why. Does nothing without a table.
    ///
    /// ```
    /// use roce_model::{builtin, load, BuiltinsOnly};
    /// let profile = load(builtin::source("coreweave/h100-ib").unwrap(), &BuiltinsOnly).profile.unwrap();
    /// let mut e = roce_inspect::explain::explain_str("perf.log", concat!(
    ///     "# Collective test starting: all_reduce_perf\n",
    ///     "h1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n",
    ///     "  8589934592    2147483648     float     sum      -1  48000.0  178.96  335.54      0  48000.0  178.96  335.54      0\n"));
    /// e.expect_busbw(None, Some(&profile));
    /// let x = e.bandwidth.as_ref().unwrap().expected.as_ref().unwrap();
    /// assert_eq!(x.busbw, 400.0); // 8 rails × 400 Gb/s
    /// assert_eq!(x.percent.round(), 84.0);
    /// ```
    pub fn expect_busbw(&mut self, given: Option<f64>, profile: Option<&roce_model::Profile>) {
        if self.bandwidth.is_none() {
            return;
        }
        match expect::expectation(self, given, profile) {
            Ok((gbps, from)) => self.compare_bandwidth(gbps, &from),
            Err(why) => {
                if let Some(b) = self.bandwidth.as_mut() {
                    b.expected_why_not = why;
                }
            }
        }
    }
}

/// Explain one log held in memory.
pub fn explain_str(name: &str, text: &str) -> Explanation {
    let mut x = Explainer::new();
    x.start_file(name);
    // reading from a slice cannot fail
    let _ = x.read(text.as_bytes());
    x.finish()
}

/// Fast substring finders, built once.
struct Finders {
    nccl: Finder<'static>,
    set_by_env: Finder<'static>,
    /// Needles of UCX lines worth reading (checked only on lines without `NCCL `).
    ucx: [Finder<'static>; 5],
    qp: Finder<'static>,
    /// `/GDRDMA` in a connection's path.
    gdr: Finder<'static>,
    /// Every needle above and those of [`torch`] and [`nccl_tests`] in one SIMD (Teddy) pass: a line without any of them (application output, a large
    /// part of a job's log) is dismissed after one scan instead of six. `None` where Teddy is unavailable.
    any: Option<packed::Searcher>,
}

/// The union of the needles [`Finders`] looks for on a line that is not the common NCCL INFO shape.
const ANY_NEEDLE: [&str; 38] = [
    "NCCL ",
    // aws-ofi-nccl's test programs (line::ofi_test)
    ": Function: ",
    "UCX",
    "ib_mlx5",
    "unreachable",
    "vendor_err",
    "retry count exceeded",
    "QP 0x",
    // PyTorch (torch.rs)
    "Watchdog caught",
    "atchdog got stuck",
    "ncclUnhandled",
    "ncclSystem",
    "ncclInternal",
    "ncclInvalid",
    "ncclRemote",
    "Last error:",
    "NIXL_ERR_",
    "backend creation failed",
    "Failed to create engine",
    "nixl_",
    "Traceback (most recent",
    "NCCL error in:",
    // nccl-tests (nccl_tests.rs)
    "busbw",
    "Out of bounds values",
    "Avg bus bandwidth",
    "Collective test starting",
    "#  Rank ",
    "NCCL failure",
    // NCCL's RAS report and the Inspector plugin (ras.rs, `ras::NEEDLES`)
    "Job summary",
    "\"communicators_count\"",
    "Missing communicator data from",
    "considered dead",
    " error on ",
    " errors on ",
    "\"missing_ranks_count\"",
    "\"considered_dead\"",
    "\"coll_perf\"",
    "nccl_bus_bandwidth_gbs{",
];

impl Finders {
    fn new() -> Self {
        Finders {
            nccl: Finder::new(b"NCCL "),

            set_by_env: Finder::new(b" set by environment to "),
            ucx: [
                Finder::new(b"UCX"),
                Finder::new(b"ib_mlx5"),
                Finder::new(b"unreachable"),
                Finder::new(b"vendor_err"),
                Finder::new(b"retry count exceeded"),
            ],
            qp: Finder::new(b"QP 0x"),
            gdr: Finder::new(b"/GDRDMA"),
            any: packed::Config::new().builder().extend(ANY_NEEDLE).build(),
        }
    }
}

/// What one process showed.
#[derive(Debug, Default)]
struct Proc {
    host: String,
    pid: String,
    rank: Option<u32>,
    nranks: Option<u32>,
    cuda_dev: Option<u32>,
    version: Option<String>,
    networks: Vec<String>,
    network_ev: Option<Evidence>,
    connections: Connections,
    channel_nets: Vec<String>,
    net_channel_ev: Option<Evidence>,
    nongdr_channel_ev: Option<Evidence>,
    rdma_ports: u32,
    lines: u64,
}

/// Evidence kept for verdicts made at the end.
#[derive(Debug, Default)]
struct Facts {
    ib_probed: bool,
    ib_no_device: Option<Evidence>,
    ib_no_device_count: u64,
    ib_init_failed: Option<Evidence>,
    ib_using_empty: Option<Evidence>,
    socket_using: Option<Evidence>,
    using_socket: Option<Evidence>,
    ib_open_failed: Option<(Evidence, String)>,
    gdr_hca: IndexMap<String, (bool, Evidence)>,
    gdr_pair_enabled: Option<Evidence>,
    gdr_pair_distance: Option<(Evidence, String)>,
    gdr_rings: Option<(bool, Evidence)>,
    no_interface: Option<(Evidence, &'static str)>,
    net_not_found: Option<(Evidence, String)>,
    plugin_failures: Vec<(Evidence, String)>,
    plugins_loaded: IndexSet<String>,
    /// The first line showing an external net plugin loaded, and the plugin (name or library path).
    external_plugin: Option<(String, Evidence)>,
    ucx_roce: bool,
    ucx_ib: bool,
    info_lines: u64,
    warn_lines: u64,
    /// NCCL WARN texts read from PyTorch's `Last error:`.
    warn_text_lines: u64,
    /// The IB transport at work (devices listed, QP/completion/async lines, `net_ib.cc` sources).
    ib_active: Option<Evidence>,
    /// Link-layer evidence other than the device list.
    link: transport::LinkEvidence,
    /// An error chain through the IB transport's source.
    ib_chain: Option<Evidence>,
    /// The first `NET/IB : Using` line with devices.
    ib_using: Option<Evidence>,
    /// 2.26+ `Attempted to connect incompatible devices`.
    mixed_link_warn: Option<Evidence>,
    /// A TCP net plugin (FastSocket) initialized.
    tcp_plugin: Option<Evidence>,
    /// aws-ofi-nccl lines, and the libfabric provider it selected.
    ofi: Option<Evidence>,
    ofi_provider: Option<String>,
    /// UCX used an RDMA transport.
    ucx_rdma: bool,
    /// UCX selected TCP for a configuration (`cfg#… tag(tcp/eth0 …)`).
    ucx_tcp: bool,
    /// UCX was asked for an RDMA device or transport it does not have.
    ucx_asked_rdma: bool,
    /// aws-ofi-nccl said the platform has no GPUDirect RDMA (`Need to force simple protocol: GDR not supported`).
    ofi_gdr_unsupported: Option<Evidence>,
    /// aws-ofi-nccl: `GDR disabled on GDR-supported instance type …`.
    ofi_gdr_required: Option<Evidence>,
    /// NIXL's reason a backend engine was not created (`Failed to create engine: …`).
    nixl_engine_error: Option<String>,
    /// `ucx_perftest` results.
    perftest: ucx_perftest::Perftest,
    /// `Failed to open libibverbs.so`.
    ibverbs_missing: Option<Evidence>,
    /// The most nodes a communicator spanned (`comm … nNodes N`).
    n_nodes: u32,
    /// The most ranks a communicator had on one node (`comm … localRanks N`).
    local_ranks: u32,
    /// Port speeds NCCL logged per RDMA device (Mb/s), by device name.
    speeds: IndexMap<String, u32>,
    /// Addresses of the interfaces ranks used for sockets (distinct ones mean distinct hosts).
    socket_addrs: IndexSet<String>,
    /// The first bootstrap, NET/Socket and IB out-of-band interface lists.
    bootstrap_ifs: Option<(Vec<sockets::Iface>, Evidence)>,
    net_socket_ifs: Option<(Vec<sockets::Iface>, Evidence)>,
    oob_if: Option<(sockets::Iface, Evidence)>,
    /// Evidence that the job or an NCCL call failed (error chains ending a thread, PyTorch or nccl-tests
    /// failures, the watchdog).
    fatal: Vec<(Evidence, String)>,
    /// The first WARN no rule explained, for a generic `nccl_error`.
    first_warn: Option<(Evidence, String)>,
    /// The first error chain line (`transport/net_ib.cc:282 -> 2`): where a failure started.
    chain_origin: Option<(Evidence, String)>,
    /// A Python traceback.
    traceback: Option<Evidence>,
    /// The NCCL version PyTorch's error text names (used when no NCCL line names one).
    torch_version: Option<String>,
    /// Lines left to read as PyTorch's `Last error:` text.
    torch_pending: u8,
}

/// A finding being accumulated while reading.
#[derive(Debug)]
struct Acc {
    finding: Finding,
    hosts: IndexSet<String>,
}

/// The streaming parser. Feed it files (or lines), then [`Explainer::finish`].
///
/// ```
/// use roce_inspect::explain::Explainer;
/// let mut x = Explainer::new();
/// x.start_file("rank0.log");
/// x.read(&b"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"[..]).unwrap();
/// let e = x.finish();
/// assert_eq!(e.gpudirect_rdma, Some(true));
/// ```
#[derive(Debug)]
pub struct Explainer {
    find: FindersDebug,
    files: Vec<FileStats>,
    line_no: u64,
    procs: Vec<Proc>,
    index: HashMap<Box<[u8]>, usize, BuildFx>,
    keys: Vec<Box<[u8]>>,
    /// INFO prefixes already resolved: the process, or `None` for a prefix that names none.
    prefixes: HashMap<Box<[u8]>, Option<usize>, BuildFx>,
    /// [`PREFIXES_MAX`]; tests lower it to compare against parsing every prefix.
    prefixes_max: usize,
    last: Option<usize>,
    hosts: IndexSet<String>,
    versions: IndexMap<String, Evidence>,
    env: IndexMap<String, IndexMap<String, Evidence>>,
    devices: IndexMap<(String, Option<u32>), Device>,
    socket_ifs: IndexSet<String>,
    facts: Facts,
    found: IndexMap<(Code, String), Acc>,
    ucx_retry_key: Option<(Code, String)>,
    tables: nccl_tests::Tables,
    /// Results of NCCL's diagnostics, by (tag, check, text).
    diags: IndexMap<diag::DiagKey, Diagnostic>,
    /// Inspector records, by collective.
    inspector: Vec<ras::InspectorCollective>,
    /// The input holds an `ncclras` report.
    ras_report: bool,
    /// A JSON record's decoded message ([`collector::peel`]).
    scratch: Vec<u8>,
}

/// [`Finders`] with a `Debug` that prints nothing (memchr's finders are not `Debug`-friendly to read).
struct FindersDebug(&'static Finders);

impl std::fmt::Debug for FindersDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Finders")
    }
}

impl Default for Explainer {
    fn default() -> Self {
        Self::new()
    }
}

impl Explainer {
    /// A parser with nothing read.
    pub fn new() -> Self {
        Explainer {
            // Built once per process: an explainer per file (a directory of per-rank logs) would otherwise
            // build the searchers again for every file.
            find: FindersDebug({
                static FINDERS: std::sync::OnceLock<Finders> = std::sync::OnceLock::new();
                FINDERS.get_or_init(Finders::new)
            }),
            files: Vec::new(),
            line_no: 0,
            procs: Vec::new(),
            index: HashMap::with_hasher(BuildFx),
            keys: Vec::new(),
            prefixes: HashMap::with_hasher(BuildFx),
            prefixes_max: PREFIXES_MAX,
            last: None,
            hosts: IndexSet::new(),
            versions: IndexMap::new(),
            env: IndexMap::new(),
            devices: IndexMap::new(),
            socket_ifs: IndexSet::new(),
            facts: Facts::default(),
            found: IndexMap::new(),
            ucx_retry_key: None,
            tables: nccl_tests::Tables::default(),
            diags: IndexMap::new(),
            inspector: Vec::new(),
            ras_report: false,
            scratch: Vec::new(),
        }
    }

    /// Begin a new file: later lines are numbered from 1 and attributed to `name`.
    pub fn start_file(&mut self, name: &str) {
        self.files.push(FileStats {
            name: name.to_string(),
            ..FileStats::default()
        });
        self.line_no = 0;
        self.facts.torch_pending = 0;
        self.facts.perftest.new_file();
        // a WQE dump belongs to the error line above it, in the same file
        self.ucx_retry_key = None;
    }

    /// Read a whole stream line by line (the current file; starts one named `<input>` if none was started).
    /// Memory stays bounded: lines are handled in the reader's buffer, and only a line split across two
    /// buffers is copied (cut at [`LINE_MAX`]).
    pub fn read<R: BufRead>(&mut self, mut reader: R) -> std::io::Result<()> {
        if self.files.is_empty() {
            self.start_file("<input>");
        }
        let mut carry: Vec<u8> = Vec::new();
        let mut carry_cut = false;
        loop {
            let buf = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            let len = buf.len();
            let mut start = 0;
            for nl in memchr::memchr_iter(b'\n', buf) {
                if carry.is_empty() && !carry_cut {
                    self.line_bytes(&buf[start..nl]);
                } else {
                    push_capped(&mut carry, &mut carry_cut, &buf[start..nl]);
                    let line = std::mem::take(&mut carry);
                    self.line_bytes(&line);
                    carry = line;
                    carry.clear();
                    carry_cut = false;
                }
                start = nl + 1;
            }
            if start < len {
                push_capped(&mut carry, &mut carry_cut, &buf[start..]);
            }
            if let Some(f) = self.files.last_mut() {
                f.bytes += len as u64;
            }
            reader.consume(len);
        }
        if !carry.is_empty() || carry_cut {
            self.line_bytes(&carry);
        }
        Ok(())
    }

    /// Feed one line (without its newline).
    pub fn line(&mut self, line: &[u8]) {
        if self.files.is_empty() {
            self.start_file("<input>");
        }
        if let Some(f) = self.files.last_mut() {
            f.bytes += line.len() as u64 + 1;
        }
        self.line_bytes(&line[..line.len().min(LINE_MAX)]);
    }

    fn line_bytes(&mut self, line: &[u8]) {
        self.line_no += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = &line[..line.len().min(LINE_MAX)];
        let file = self
            .files
            .last_mut()
            .expect("a file is started before lines are read");
        if file.scanned < 8192 {
            file.scanned += line.len() as u64 + 1;
            if memchr::memchr(0, line).is_some() {
                file.binary = true;
            }
        }
        file.lines += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        file.nonblank_lines += 1;
        self.framed(line, 0);
    }

    /// A line that may carry a collector's or launcher's frame ([`collector`]): peel it, then read the text.
    fn framed(&mut self, line: &[u8], depth: usize) {
        let mut line = line;
        for _ in depth..collector::DEPTH_MAX {
            match collector::peel(line, &mut self.scratch) {
                collector::Peeled::Plain => break,
                collector::Peeled::Inner(inner) => line = inner,
                collector::Peeled::Decoded => {
                    // a record's message may hold several lines (a multi-line log entry)
                    let msg = std::mem::take(&mut self.scratch);
                    for l in msg.split(|b| *b == b'\n') {
                        let l = l.strip_suffix(b"\r").unwrap_or(l);
                        if !l.iter().all(u8::is_ascii_whitespace) {
                            self.framed(l, collector::DEPTH_MAX.min(depth + 1));
                        }
                    }
                    self.scratch = msg;
                    return;
                }
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.unframed(line);
    }

    /// Read a line without frames.
    fn unframed(&mut self, line: &[u8]) {
        if let Some(l) = line::nccl_info_fast(line) {
            if let Some(f) = self.files.last_mut() {
                f.nccl_lines += 1;
            }
            self.nccl_line(l, line);
            return;
        }
        if let Some(any) = &self.find.0.any
            && any.find(line).is_none()
        {
            self.ucx_retry_key = None;
            self.no_needle(line);
            return;
        }
        if let Some(l) = line::nccl(line, &self.find.0.nccl).or_else(|| line::ofi_test(line)) {
            if let Some(f) = self.files.last_mut() {
                f.nccl_lines += 1;
            }
            self.nccl_line(l, line);
            return;
        }
        if self.maybe_ucx(line) && self.ucx_line(line) {
            return;
        }
        self.ucx_retry_key = None;
        let known = if self.tables.header(line) || self.other_line(line) || self.ras_line(line) {
            true
        } else if self.facts.torch_pending > 0 {
            self.torch_last_error(line);
            true
        } else {
            let (files, no) = (&self.files, self.line_no);
            let ev = || Evidence::new(file_name(files), no, line);
            self.tables.summary(line, ev) || self.tables.row(line, ev)
        };
        if known && let Some(f) = self.files.last_mut() {
            f.report_lines += 1;
        }
    }

    /// A line without any needle: PyTorch's last-error text, an nccl-tests row, `ucx_perftest` output.
    fn no_needle(&mut self, line: &[u8]) {
        let (files, no) = (&self.files, self.line_no);
        if matches!(line.trim_ascii_start().first(), Some(b'|' | b'+' | b'F'))
            && self
                .facts
                .perftest
                .line(line, || Evidence::new(file_name(files), no, line))
        {
            if let Some(f) = self.files.last_mut() {
                f.report_lines += 1;
            }
            return;
        }
        let known = if self.facts.torch_pending > 0 {
            self.torch_last_error(line);
            true
        } else {
            let (files, no) = (&self.files, self.line_no);
            self.tables
                .row(line, || Evidence::new(file_name(files), no, line))
        };
        if known && let Some(f) = self.files.last_mut() {
            f.report_lines += 1;
        }
    }

    /// Finish: decide the transport and GPUDirect RDMA, and compose the findings.
    pub fn finish(self) -> Explanation {
        verdict::finish(self)
    }

    // ---- helpers shared by the handlers ----

    fn evidence(&self, line: &[u8]) -> Evidence {
        Evidence::new(file_name(&self.files), self.line_no, line)
    }

    /// The process an INFO line's prefix names. A job's INFO lines repeat a few thousand prefixes
    /// (`host:pid:tid [dev] `) millions of times, so each prefix is parsed once and remembered (up to
    /// [`PREFIXES_MAX`]; prefixes that never repeat, such as `kubectl logs --timestamps`, fill the table and
    /// then take the parse every time). A remembered prefix resolves exactly as parsing it again would.
    fn proc_of_prefix(&mut self, prefix: &[u8]) -> Option<usize> {
        if let Some(&hit) = self.prefixes.get(prefix) {
            if let Some(i) = hit {
                self.last = Some(i);
                // the prefix's device was offered on first sight; offering it again changes nothing
                self.touch(i, None);
            }
            return hit;
        }
        let who = line::who(prefix, false);
        let pi = who.map(|w| self.proc_of(w.key, w.host, w.dev));
        let remember = match (who, pi) {
            (None, _) => Some(None),
            // only a real process: a later parse of a prefix that overflowed the table gets the catch-all
            // without touching it
            (Some(w), Some(i)) if *self.keys[i] == *w.key => Some(Some(i)),
            _ => None,
        };
        if let Some(r) = remember
            && self.prefixes.len() < self.prefixes_max
        {
            self.prefixes.insert(prefix.into(), r);
        }
        pi
    }

    /// The process a prefix names, created on first sight.
    fn proc_of(&mut self, key: &[u8], host: &[u8], dev: Option<u32>) -> usize {
        if let Some(i) = self.last
            && *self.keys[i] == *key
        {
            self.touch(i, dev);
            return i;
        }
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                if self.procs.len() >= PROCESSES_MAX {
                    return self.anon();
                }
                let host = String::from_utf8_lossy(host).into_owned();
                let pid = String::from_utf8_lossy(key.get(host.len() + 1..).unwrap_or_default())
                    .into_owned();
                self.hosts.insert(host.clone());
                self.procs.push(Proc {
                    host,
                    pid,
                    ..Proc::default()
                });
                self.keys.push(key.into());
                let i = self.procs.len() - 1;
                self.index.insert(key.into(), i);
                i
            }
        };
        self.last = Some(i);
        self.touch(i, dev);
        i
    }

    fn touch(&mut self, i: usize, dev: Option<u32>) {
        let p = &mut self.procs[i];
        p.lines += 1;
        if p.cuda_dev.is_none() {
            p.cuda_dev = dev;
        }
    }

    /// The catch-all process for lines without a prefix (created on first use).
    fn anon(&mut self) -> usize {
        if let Some(&i) = self.index.get(&b""[..]) {
            return i;
        }
        self.procs.push(Proc::default());
        self.keys.push(Box::from(&b""[..]));
        let i = self.procs.len() - 1;
        self.index.insert(Box::from(&b""[..]), i);
        i
    }

    /// Record a finding (merged with an earlier one of the same code and key).
    fn found(
        &mut self,
        code: Code,
        key: &str,
        host: Option<&str>,
        ev: Evidence,
        make: impl FnOnce() -> (String, String),
    ) {
        let k = (code, key.to_string());
        if let Some(acc) = self.found.get_mut(&k) {
            acc.finding.count += 1;
            if let Some(h) = host
                && acc.hosts.len() < HOSTS_MAX
            {
                acc.hosts.insert(h.to_string());
            }
            return;
        }
        if self.found.len() >= FINDINGS_MAX {
            // too many distinct findings: count the rest against the first of the same code
            if let Some(acc) = self.found.values_mut().find(|a| a.finding.code == code) {
                acc.finding.count += 1;
            }
            return;
        }
        let (message, help) = make();
        let mut hosts = IndexSet::new();
        if let Some(h) = host {
            hosts.insert(h.to_string());
        }
        self.found.insert(
            k,
            Acc {
                finding: Finding::new(code, message, help).at(Some(ev)),
                hosts,
            },
        );
    }

    fn host_of(&self, i: Option<usize>) -> Option<String> {
        i.map(|i| self.procs[i].host.clone())
            .filter(|h| !h.is_empty())
    }

    fn maybe_ucx(&self, line: &[u8]) -> bool {
        let f = &self.find.0;
        f.ucx.iter().any(|n| n.find(line).is_some())
            || (self.ucx_retry_key.is_some() && f.qp.find(line).is_some())
    }
}

/// A small fast hash for the per-line process lookup (keys are short `host:pid` strings from the log; no
/// untrusted-input DoS concern worth SipHash's cost on every line).
#[derive(Debug, Clone, Copy, Default)]
struct BuildFx;

impl std::hash::BuildHasher for BuildFx {
    type Hasher = Fx;
    fn build_hasher(&self) -> Fx {
        Fx(0)
    }
}

/// The rustc-hash ("Fx") mixing function.
#[derive(Debug)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(26) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(26) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The name of the file being read.
fn file_name(files: &[FileStats]) -> &str {
    files.last().map_or("<input>", |f| f.name.as_str())
}

fn push_capped(carry: &mut Vec<u8>, cut: &mut bool, bytes: &[u8]) {
    let room = LINE_MAX.saturating_sub(carry.len());
    if bytes.len() > room {
        carry.extend_from_slice(&bytes[..room]);
        *cut = true;
    } else {
        carry.extend_from_slice(bytes);
    }
}

/// The host an NCCL line names in its `host:pid:tid [dev]` prefix (a finding's evidence line), for
/// `roce sweep`, which pins a finding on the node whose ranks showed it.
pub(crate) fn host_of_line(text: &str) -> Option<String> {
    let mut text = text.as_bytes();
    let mut scratch = Vec::new();
    for _ in 0..collector::DEPTH_MAX {
        match collector::peel(text, &mut scratch) {
            collector::Peeled::Inner(inner) => text = inner,
            _ => break,
        }
    }
    let l = line::nccl(text, &Finder::new(b"NCCL "))?;
    l.who()
        .map(|w| String::from_utf8_lossy(w.host).into_owned())
}

#[cfg(test)]
mod prefix_cache_tests {
    use super::*;

    /// Explain `log` remembering at most `max` prefixes.
    fn explain_with(max: usize, log: &[u8]) -> serde_json::Value {
        let mut x = Explainer::new();
        x.prefixes_max = max;
        x.start_file("job.log");
        x.read(log).unwrap();
        x.finish().to_json()
    }

    /// One line of process `p` (device `p % 8`, every third connection without GPUDirect).
    fn line(log: &mut Vec<u8>, p: usize) {
        let net = if p.is_multiple_of(3) {
            "NET/IB/0"
        } else {
            "NET/IB/1/GDRDMA"
        };
        let (h, t, d) = (p / 8, p + 7, p % 8);
        log.extend_from_slice(
            format!(
                "node-{h}:{p}:{t} [{d}] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via {net}\n"
            )
            .as_bytes(),
        );
    }

    /// Processes seen again in later rounds, prefixes that name no process, a process seen under a second
    /// thread and device, a device that does not parse: remembering prefixes (none, a few, a full table, the
    /// default) must not change a single count, device or finding.
    #[test]
    fn remembering_prefixes_changes_nothing() {
        let mut log = Vec::new();
        for round in 0..3 {
            for p in 0..2000 {
                line(&mut log, p + round * 7);
            }
            log.extend_from_slice(
                b"nohost [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via P2P/IPC\n",
            );
            log.extend_from_slice(
                b"node-0:0:99 [5] NCCL INFO Channel 00/1 : 0[0] -> 1[0] via SHM/direct\n",
            );
            log.extend_from_slice(b"node-9:72:7 [x] NCCL INFO Using network IB\n");
        }
        let parsed_every_time = explain_with(0, &log);
        for max in [3, 1000, PREFIXES_MAX] {
            assert!(
                explain_with(max, &log) == parsed_every_time,
                "remembering {max} prefixes changed the explanation"
            );
        }
    }

    /// Past [`PROCESSES_MAX`] processes the rest share the catch-all; a remembered prefix must not give an
    /// overflowing process a slot or count of its own.
    #[test]
    fn remembering_prefixes_past_the_process_table() {
        let mut log = Vec::new();
        let procs = PROCESSES_MAX + 100;
        for p in 0..procs {
            line(&mut log, p);
        }
        for p in (0..50).chain(procs - 50..procs) {
            line(&mut log, p);
        }
        let parsed_every_time = explain_with(0, &log);
        assert!(
            parsed_every_time["ranks"].as_array().map_or(0, Vec::len) >= PROCESSES_MAX,
            "the process table filled, so the catch-all took the rest"
        );
        assert!(explain_with(PREFIXES_MAX, &log) == parsed_every_time);
    }
}
