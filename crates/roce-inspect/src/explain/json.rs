//! The JSON form of an [`Explanation`](super::Explanation): serializable views that borrow from it, so the
//! field names and order are declared once, here (documented in `docs/explain.md`, "JSON").

use roce_model::fabric::bandwidth::Collective;
use serde::Serialize;

use super::{Bandwidth, Connections, Explanation, Finding};

pub(super) fn to_json(e: &Explanation) -> serde_json::Value {
    // the views hold only strings, numbers, options and vectors, which always serialize
    serde_json::to_value(View::from(e)).unwrap_or(serde_json::Value::Null)
}

#[derive(Serialize)]
struct View<'a> {
    transport: &'a str,
    network: Option<&'a str>,
    gpudirect_rdma: Option<bool>,
    nccl_version: Option<&'a str>,
    devices: Vec<DeviceView<'a>>,
    socket_interfaces: &'a [String],
    env: &'a indexmap::IndexMap<String, String>,
    hosts: &'a [String],
    nodes: Option<u32>,
    local_ranks: Option<u32>,
    ranks: Vec<RankView<'a>>,
    connections: ConnectionsView,
    files: Vec<FileView<'a>>,
    profile: Option<ProfileView<'a>>,
    bandwidth: Option<BandwidthView<'a>>,
    ucx_perftest: Option<PerftestView<'a>>,
    diagnostics: Vec<DiagnosticView<'a>>,
    inspector: Vec<InspectorView<'a>>,
    findings: Vec<FindingView<'a>>,
}

#[derive(Serialize)]
struct InspectorView<'a> {
    collective: &'a str,
    records: u64,
    peak_busbw_gbs: f64,
    max_message_bytes: Option<u64>,
}

#[derive(Serialize)]
struct DiagnosticView<'a> {
    level: &'a str,
    check: Option<&'a str>,
    message: &'a str,
    notice: bool,
    count: u64,
    file: &'a str,
    line: u64,
}

#[derive(Serialize)]
struct PerftestView<'a> {
    test: Option<&'a str>,
    message_size_bytes: Option<u64>,
    iterations: u64,
    latency_usec: Option<f64>,
    overhead_usec: Option<f64>,
    bandwidth_mbps: f64,
    message_rate: f64,
    file: &'a str,
    line: u64,
}

#[derive(Serialize)]
struct DeviceView<'a> {
    name: &'a str,
    port: Option<u32>,
    link_layer: &'a str,
    gpudirect_rdma: Option<bool>,
    speed_mbps: Option<u32>,
}

#[derive(Serialize)]
struct RankView<'a> {
    host: &'a str,
    pid: &'a str,
    rank: Option<u32>,
    nranks: Option<u32>,
    cuda_dev: Option<u32>,
    nccl_version: Option<&'a str>,
    network: Option<&'a str>,
    connections: ConnectionsView,
    lines: u64,
}

#[derive(Serialize)]
struct ConnectionsView {
    net: u64,
    net_gdr: u64,
    p2p: u64,
    shm: u64,
    other: u64,
}

#[derive(Serialize)]
struct FileView<'a> {
    name: &'a str,
    lines: u64,
    bytes: u64,
    nccl_lines: u64,
    ucx_lines: u64,
    report_lines: u64,
}

#[derive(Serialize)]
struct ProfileView<'a> {
    name: &'a str,
    checked: &'a [String],
    unverified: &'a [String],
}

#[derive(Serialize)]
struct BandwidthView<'a> {
    rows: u64,
    peak_busbw_gbps: f64,
    peak_size_bytes: u64,
    large_busbw_gbps: f64,
    large_size_bytes: u64,
    avg_busbw_gbps: Option<f64>,
    wrong: u64,
    out_of_bounds: Option<u64>,
    tool: Option<&'a str>,
    collective: Option<Collective>,
    expected_busbw_gbps: Option<f64>,
    expected_from: Option<&'a str>,
    percent_of_expected: Option<f64>,
    expected_why_not: Option<&'a str>,
}

#[derive(Serialize)]
struct FindingView<'a> {
    code: &'a str,
    severity: &'a str,
    message: &'a str,
    help: &'a str,
    file: Option<&'a str>,
    line: Option<u64>,
    count: u64,
    hosts: &'a [String],
    caused_by: Option<&'a str>,
}

impl<'a> From<&'a Explanation> for View<'a> {
    fn from(e: &'a Explanation) -> Self {
        View {
            transport: e.transport.as_str(),
            network: e.network.as_deref(),
            gpudirect_rdma: e.gpudirect_rdma,
            nccl_version: e.nccl_version.as_deref(),
            devices: e
                .devices
                .iter()
                .map(|d| DeviceView {
                    name: &d.name,
                    port: d.port,
                    link_layer: &d.link_layer,
                    gpudirect_rdma: d.gdr,
                    speed_mbps: d.speed_mbps,
                })
                .collect(),
            socket_interfaces: &e.socket_interfaces,
            env: &e.env,
            hosts: &e.hosts,
            nodes: e.nodes,
            local_ranks: e.local_ranks,
            ranks: e
                .processes
                .iter()
                .map(|p| RankView {
                    host: &p.host,
                    pid: &p.pid,
                    rank: p.rank,
                    nranks: p.nranks,
                    cuda_dev: p.cuda_dev,
                    nccl_version: p.nccl_version.as_deref(),
                    network: p.network.as_deref(),
                    connections: (&p.connections).into(),
                    lines: p.lines,
                })
                .collect(),
            connections: (&e.connections).into(),
            files: e
                .files
                .iter()
                .map(|f| FileView {
                    name: &f.name,
                    lines: f.lines,
                    bytes: f.bytes,
                    nccl_lines: f.nccl_lines,
                    ucx_lines: f.ucx_lines,
                    report_lines: f.report_lines,
                })
                .collect(),
            profile: e.profile.as_ref().map(|p| ProfileView {
                name: &p.name,
                checked: &p.checked,
                unverified: &p.unverified,
            }),
            bandwidth: e.bandwidth.as_ref().map(BandwidthView::from),
            ucx_perftest: e.ucx_perftest.as_ref().map(|p| PerftestView {
                test: p.test.as_deref(),
                message_size_bytes: p.message_size,
                iterations: p.iterations,
                latency_usec: p.latency.then_some(p.usec),
                overhead_usec: (!p.latency).then_some(p.usec),
                bandwidth_mbps: p.bandwidth_mbps,
                message_rate: p.message_rate,
                file: &p.evidence.file,
                line: p.evidence.line,
            }),
            diagnostics: e
                .diagnostics
                .iter()
                .map(|d| DiagnosticView {
                    level: &d.level,
                    check: d.check.as_deref(),
                    message: &d.message,
                    notice: d.notice,
                    count: d.count,
                    file: &d.evidence.file,
                    line: d.evidence.line,
                })
                .collect(),
            inspector: e
                .inspector
                .iter()
                .map(|c| InspectorView {
                    collective: &c.collective,
                    records: c.records,
                    peak_busbw_gbs: c.peak_busbw_gbs,
                    max_message_bytes: c.max_message_bytes,
                })
                .collect(),
            findings: e.findings.iter().map(FindingView::from).collect(),
        }
    }
}

impl From<&Connections> for ConnectionsView {
    fn from(c: &Connections) -> Self {
        ConnectionsView {
            net: c.net,
            net_gdr: c.net_gdr,
            p2p: c.p2p,
            shm: c.shm,
            other: c.other,
        }
    }
}

impl<'a> From<&'a Bandwidth> for BandwidthView<'a> {
    fn from(b: &'a Bandwidth) -> Self {
        BandwidthView {
            rows: b.rows,
            peak_busbw_gbps: b.peak_busbw,
            peak_size_bytes: b.peak_size,
            large_busbw_gbps: b.large_busbw,
            large_size_bytes: b.large_size,
            avg_busbw_gbps: b.avg_busbw,
            wrong: b.wrong,
            out_of_bounds: b.out_of_bounds,
            tool: b.tool.as_deref(),
            collective: b.collective(),
            expected_busbw_gbps: b.expected.as_ref().map(|x| x.busbw),
            expected_from: b.expected.as_ref().map(|x| x.from.as_str()),
            percent_of_expected: b.expected.as_ref().map(|x| x.percent),
            expected_why_not: b.expected_why_not.as_deref(),
        }
    }
}

impl<'a> From<&'a Finding> for FindingView<'a> {
    fn from(f: &'a Finding) -> Self {
        FindingView {
            code: f.code.as_str(),
            severity: f.severity.as_str(),
            message: &f.message,
            help: &f.help,
            file: f.evidence.as_ref().map(|e| e.file.as_str()),
            line: f.evidence.as_ref().map(|e| e.line),
            count: f.count,
            hosts: &f.hosts,
            caused_by: f.caused_by.map(|c| c.as_str()),
        }
    }
}
