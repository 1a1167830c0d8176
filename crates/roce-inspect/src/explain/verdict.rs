//! The end of a read: decide the transport and GPUDirect RDMA, and compose the findings that need the whole log.

use indexmap::{IndexMap, IndexSet};
use roce_model::Code;
use roce_model::fabric::{env as vars, nccl};

use super::transport::{self, Signals};
use super::{
    Connections, Device, Evidence, Explainer, Explanation, Finding, Process, Transport, invariants,
    sockets,
};

/// The verdict, as a pipeline: each step reads the whole log and adds what it alone can tell.
pub(super) fn finish(mut x: Explainer) -> Explanation {
    let found = std::mem::take(&mut x.found);
    let mut findings = input_findings(&x);
    let (env, env_lines) = environment(&x, &mut findings);
    let net = Networks::read(&x);
    findings.extend(mixed_network(&net));
    let gpudirect_rdma = gpudirect(&x, &net, &mut findings);
    let rdma_expected = socket_fallback(&x, &env, &net, &mut findings);
    findings.extend(mixed_link_layer(&x, &net.devices));
    findings.extend(wrong_results(&x));
    findings.extend(plugin_not_loaded(&x, &env));
    accumulated(&x, found, &env, &mut findings);
    findings.extend(version_mismatch(&x));
    dedupe(&mut findings);
    let processes = processes(&net.procs);
    let Networks {
        transport,
        network,
        devices,
        connections,
        ..
    } = net;
    explanation(
        x,
        Verdict {
            transport,
            network,
            gpudirect_rdma,
            devices,
            connections,
            processes,
            env,
            env_lines,
            rdma_expected,
        },
        findings,
    )
}

/// Inputs that are not NCCL logs, and NCCL logs without the INFO lines a verdict needs.
fn input_findings(x: &Explainer) -> Vec<Finding> {
    let mut findings = Vec::new();
    for f in &x.files {
        let name = &f.name;
        if f.nonblank_lines == 0 {
            findings.push(Finding::new(
                Code::ExplainEmptyLog,
                format!("{name} is empty"),
                "NCCL logs nothing unless NCCL_DEBUG is set: run the job with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV and pass its output (NCCL_DEBUG_FILE=/tmp/nccl.%h.%p writes one file per process)",
            ));
        } else if f.nccl_lines == 0 && f.ucx_lines == 0 && f.report_lines == 0 {
            if f.binary {
                findings.push(Finding::new(
                    Code::ExplainBinaryLog,
                    format!("{name} is a binary file (it holds NUL bytes), not a text log"),
                    "pass the text output of the job; decompress archives first (`zcat job.log.gz | roce explain -`)",
                ));
            } else {
                findings.push(Finding::new(
                    Code::ExplainNotNcclLog,
                    format!(
                        "{name} is not an NCCL or UCX log: no NCCL INFO/WARN line and no UCX error in its {} line{}",
                        f.nonblank_lines,
                        if f.nonblank_lines == 1 { "" } else { "s" }
                    ),
                    "run the job with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV and pass that output (stdout and stderr of every rank, or the NCCL_DEBUG_FILE files)",
                ));
            }
        }
    }
    let total_nccl: u64 = x.files.iter().map(|f| f.nccl_lines).sum();
    if total_nccl > 0 && x.facts.info_lines == 0 && !x.ras_report {
        findings.push(Finding::new(
            Code::ExplainNoInfoLines,
            "the log has NCCL warnings but no INFO lines, so the transport and GPUDirect RDMA cannot be told",
            "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV (NCCL_DEBUG=WARN prints only failures)",
        ));
    }
    findings
}

/// The environment NCCL echoed (each variable's first value, and the line it came from); ranks that saw
/// different values, and disable knobs read as 0.
fn environment(
    x: &Explainer,
    findings: &mut Vec<Finding>,
) -> (IndexMap<String, String>, IndexMap<String, Evidence>) {
    let mut env: IndexMap<String, String> = IndexMap::new();
    for (name, values) in &x.env {
        if let Some((first, _)) = values.first() {
            env.insert(name.clone(), first.clone());
        }
        // NCCL_HOSTID names the host, so it differs between hosts by design
        if values.len() > 1 && name != vars::NCCL_HOSTID {
            let list: Vec<&str> = values.keys().map(String::as_str).collect();
            let ev = values.get_index(1).map(|(_, e)| e.clone());
            findings.push(
                Finding::new(
                    Code::ExplainEnvDiffers,
                    format!("ranks saw different values of {name}: {}", list.join(", ")),
                    format!("set {name} the same way for every rank (one env source: the rendered profile), or NCCL ranks disagree on devices and settings"),
                )
                .at(ev),
            );
        }
    }
    let env_lines: IndexMap<String, Evidence> = x
        .env
        .iter()
        .filter_map(|(k, v)| v.first().map(|(_, e)| (k.clone(), e.clone())))
        .collect();
    // without a profile nothing says a 0 was meant; `compare_profile` judges again with the profile's env
    findings.extend(disable_read_as_zero(&env, &env_lines, &|_| false));
    (env, env_lines)
}

/// What the processes used: their networks and connections, the devices, and the transport that follows.
struct Networks<'x> {
    procs: Vec<&'x super::Proc>,
    connections: Connections,
    /// The networks the channel lines name (NCCL's `via NET/…`).
    channel_nets: IndexSet<String>,
    /// The channel networks, else the networks the processes chose.
    nets: IndexSet<String>,
    devices: Vec<Device>,
    transport: Transport,
    network: Option<String>,
}

impl<'x> Networks<'x> {
    fn read(x: &'x Explainer) -> Networks<'x> {
        let procs: Vec<&super::Proc> = x
            .procs
            .iter()
            .filter(|p| !p.host.is_empty() || p.lines > 0)
            .collect();
        let mut connections = Connections::default();
        let mut channel_nets: IndexSet<String> = IndexSet::new();
        let mut chosen: IndexSet<String> = IndexSet::new();
        for p in &procs {
            connections.add(&p.connections);
            channel_nets.extend(p.channel_nets.iter().cloned());
            chosen.extend(p.networks.iter().cloned());
        }
        let nets: IndexSet<String> = if channel_nets.is_empty() {
            chosen
        } else {
            channel_nets.clone()
        };
        let mut devices: Vec<Device> = x.devices.values().cloned().collect();
        for d in &mut devices {
            if let Some((on, _)) = x.facts.gdr_hca.get(&d.name) {
                d.gdr = Some(*on);
            }
            d.speed_mbps = x.facts.speeds.get(&d.name).copied();
        }
        let ib_disabled = x
            .env
            .get(vars::NCCL_IB_DISABLE)
            .and_then(|v| v.first())
            .is_some_and(|(v, _)| v.parse::<i64>().is_ok_and(|n| n != 0));
        let ib_unavailable = x.facts.ib_no_device.is_some()
            || x.facts.ib_init_failed.is_some()
            || x.facts.ibverbs_missing.is_some()
            || ib_disabled;
        let signals = Signals {
            network: nets.first().map(String::as_str),
            devices: &devices,
            link: link_evidence(x),
            ib_active: x.facts.ib_active.is_some()
                || (x.facts.ib_chain.is_some() && !ib_unavailable),
            ofi: x.facts.ofi.is_some(),
            socket_by_elimination: x.facts.tcp_plugin.is_some()
                || (x.facts.socket_using.is_some() && ib_unavailable && devices.is_empty()),
            ucx_rdma: x.facts.ucx_rdma,
            ucx_tcp: x.facts.ucx_tcp,
        };
        let transport = transport::classify(&signals);
        let network = nets.first().cloned().or_else(|| match transport {
            Transport::Socket if x.facts.tcp_plugin.is_some() => {
                Some(nccl::NET_FAST_SOCKET.name.to_string())
            }
            Transport::Socket => Some(nccl::NET_SOCKET.name.to_string()),
            Transport::Ib | Transport::Roce if !devices.is_empty() => {
                Some(nccl::NET_IB.name.to_string())
            }
            _ => None,
        });
        Networks {
            procs,
            connections,
            channel_nets,
            nets,
            devices,
            transport,
            network,
        }
    }
}

/// Ranks that used different networks.
fn mixed_network(net: &Networks) -> Option<Finding> {
    if net.nets.len() <= 1 {
        return None;
    }
    let list: Vec<&str> = net.nets.iter().map(String::as_str).collect();
    let ev = net
        .procs
        .iter()
        .find_map(|p| p.network_ev.clone().or(p.net_channel_ev.clone()));
    Some(
        Finding::new(
            Code::ExplainMixedNetwork,
            format!("ranks used different networks: {}", list.join(", ")),
            "some ranks found RDMA devices and others did not: compare the pods' RDMA attachment (Multus annotation, `rdma/ib` request) across nodes",
        )
        .at(ev),
    )
}

/// Whether data moved GPU to NIC directly (`None`: the log cannot tell), and why not where it did not.
fn gpudirect(x: &Explainer, net: &Networks, findings: &mut Vec<Finding>) -> Option<bool> {
    let transport = net.transport;
    let connections = net.connections;
    let ib_like = matches!(transport, Transport::Ib | Transport::Roce | Transport::Ofi);
    let disabled_hcas: Vec<&str> = x
        .facts
        .gdr_hca
        .iter()
        .filter(|(_, (on, _))| !on)
        .map(|(n, _)| n.as_str())
        .collect();
    // aws-ofi-nccl decided the platform has no GPUDirect RDMA (G4dn/G5/G6e: "the only instance types in EC2 that
    // support GPUDirect RDMA are the P-series starting with p4d", aws/aws-ofi-nccl#547): a fact of the hardware
    let ofi_unsupported = transport == Transport::Ofi
        && x.facts.ofi_gdr_unsupported.is_some()
        && x.facts.ofi_gdr_required.is_none();
    let gpudirect_rdma = if transport == Transport::Socket {
        // sockets move data through host memory: never GPUDirect RDMA
        Some(false)
    } else if connections.net > 0 {
        Some(connections.net_gdr == connections.net && disabled_hcas.is_empty())
    } else if ib_like {
        if !disabled_hcas.is_empty()
            || x.facts.gdr_pair_distance.is_some()
            || ofi_unsupported
            || x.facts.ofi_gdr_required.is_some()
        {
            Some(false)
        } else if x.facts.gdr_pair_enabled.is_some() {
            Some(true)
        } else {
            None
        }
    } else {
        None
    };
    if !ib_like || gpudirect_rdma != Some(false) {
        return gpudirect_rdma;
    }
    if ofi_unsupported {
        let ev = x.facts.ofi_gdr_unsupported.clone();
        findings.push(
            Finding::new(
                Code::ExplainGdrUnsupported,
                "no GPUDirect RDMA on this platform: aws-ofi-nccl found that its libfabric provider cannot read and write GPU memory, so NCCL stages network data through host memory",
                "a property of the instance type, nothing to fix in the job: on EC2 only the P-series from p4d on have GPUDirect RDMA over EFA (G4dn, G5, G6, G6e do not, aws/aws-ofi-nccl#547); on a P-series instance it means the EFA installer's libfabric lacks FI_HMEM (`fi_info -p efa -c FI_HMEM` must list the devices)",
            )
            .at(ev),
        );
    } else if let Some(ev) = &x.facts.ofi_gdr_required {
        findings.push(
            Finding::new(
                Code::ExplainGdrDisabled,
                format!("GPUDirect RDMA disabled on an instance type that has it: NET/OFI {}", ev.text.split("NET/OFI ").nth(1).unwrap_or(&ev.text)),
                "aws-ofi-nccl refuses to run without GPUDirect RDMA where the instance has it (src/platform-aws.cpp): the libfabric in the container lacks FI_HMEM or CUDA support (use the EFA installer's libfabric, `fi_info -p efa -c FI_HMEM`), or the GPU driver's peer-memory / DMA-BUF support is missing",
            )
            .at(Some(ev.clone())),
        );
    } else {
        findings.push(gdr_finding(
            x,
            &net.procs,
            connections,
            net.network.as_deref(),
            &disabled_hcas,
        ));
    }
    gpudirect_rdma
}

/// A job that should use RDMA but fell back to TCP sockets (and libibverbs missing, and socket interfaces
/// other hosts cannot reach). Returns whether the log says RDMA was expected.
fn socket_fallback(
    x: &Explainer,
    env: &IndexMap<String, String>,
    net: &Networks,
    findings: &mut Vec<Finding>,
) -> bool {
    let transport = net.transport;
    let socket_channels = net.channel_nets.iter().any(|n| transport::is_socket(n));
    let ib_disable = env
        .get(vars::NCCL_IB_DISABLE)
        .filter(|v| v.parse::<i64>().is_ok_and(|n| n != 0));
    let ib_intent = env.keys().any(|k| nccl::configures_ib(k));
    let socket_forced = env
        .get(vars::NCCL_NET)
        .filter(|n| transport::is_socket(n))
        .cloned();
    // several hosts: host names, NCCL's own node count, or distinct addresses of the ranks' interfaces (two
    // containers may share a host name)
    let multi_host = x.hosts.len() > 1 || x.facts.n_nodes > 1 || x.facts.socket_addrs.len() > 1;
    let rdma_expected = socket_channels
        || multi_host
        || ib_intent
        || ib_disable.is_some()
        || x.facts.ib_open_failed.is_some();
    if let Some(ev) = &x.facts.ibverbs_missing
        && (multi_host || ib_intent || socket_channels)
    {
        findings.push(
            Finding::new(
                Code::ExplainIbverbsMissing,
                "NCCL could not load libibverbs.so (rdma-core), so its IB transport has no devices and ranks on different hosts use TCP sockets",
                "install rdma-core's libibverbs1 and the provider for the NIC (ibverbs-providers: libmlx5) in the image; NVIDIA's NGC and the CoreWeave nccl-tests images ship them",
            )
            .at(Some(ev.clone())),
        );
    }
    if transport == Transport::Socket && rdma_expected {
        let hca = env.get(vars::NCCL_IB_HCA.name).map(String::as_str);
        let (cause, help) = fallback_cause(x, socket_forced.as_deref(), ib_disable, hca);
        let scope = if socket_channels {
            let n: u64 = net
                .procs
                .iter()
                .filter(|p| {
                    p.channel_nets
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(nccl::NET_SOCKET.name))
                })
                .map(|p| p.connections.net - p.connections.net_gdr)
                .sum();
            format!("{n} connections between ranks went over TCP")
        } else if multi_host {
            format!("ranks on {} hosts talk over TCP", x.hosts.len())
        } else {
            "this log shows no network connection (all peers were on one node), but between nodes this job runs over TCP".to_string()
        };
        let ev = x
            .facts
            .ib_no_device
            .clone()
            .or(x.facts.ib_init_failed.clone())
            .or(x.facts.ibverbs_missing.clone())
            .or(x.facts.using_socket.clone())
            .or(x.facts.socket_using.clone());
        let mut f = Finding::new(
            Code::ExplainSocketFallback,
            format!("NCCL fell back to TCP sockets: {cause}; {scope}"),
            help,
        )
        .at(ev);
        f.hosts = net
            .procs
            .iter()
            .filter(|p| {
                p.networks
                    .iter()
                    .chain(&p.channel_nets)
                    .any(|n| transport::is_socket(n))
            })
            .map(|p| p.host.clone())
            .collect::<IndexSet<_>>()
            .into_iter()
            .take(super::HOSTS_MAX)
            .collect();
        findings.push(f);
    }
    let single_node = x.facts.n_nodes == 1 && net.connections.net == 0;
    if !single_node
        && let Some(f) = socket_interface_finding(x, transport, multi_host || socket_channels)
    {
        findings.push(f);
    }
    rdma_expected
}

/// Why NCCL ended on sockets, and the fix: the first cause the log shows, in the order NCCL meets them.
fn fallback_cause(
    x: &Explainer,
    socket_forced: Option<&str>,
    ib_disable: Option<&String>,
    hca: Option<&str>,
) -> (String, String) {
    let cause = if let Some(v) = socket_forced {
        format!("NCCL_NET={v} forces TCP sockets")
    } else if let Some(v) = ib_disable {
        format!("IB is disabled by NCCL_IB_DISABLE={v}")
    } else if x.facts.ibverbs_missing.is_some() {
        "libibverbs.so could not be loaded".to_string()
    } else if let Some((_, dev)) = &x.facts.ib_open_failed {
        format!("RDMA device {dev} exists but could not be opened")
    } else if x.facts.ib_no_device.is_some() {
        match hca {
            Some(h) => {
                format!("NCCL_IB_HCA={h} matched no active RDMA port (`NET/IB : No device found.`)")
            }
            None => "NCCL found no active RDMA port (`NET/IB : No device found.`)".to_string(),
        }
    } else if x.facts.ib_init_failed.is_some() {
        "the IB network failed to initialize".to_string()
    } else {
        "NCCL chose the Socket network".to_string()
    };
    let help = if socket_forced.is_some() {
        "unset NCCL_NET (or set NCCL_NET=IB) so NCCL uses the RDMA devices".to_string()
    } else if ib_disable.is_some() {
        "remove NCCL_IB_DISABLE (or set it to 0) so NCCL uses RDMA".to_string()
    } else if x.facts.ibverbs_missing.is_some() {
        "install rdma-core (libibverbs1, ibverbs-providers) in the image".to_string()
    } else if x.facts.ib_open_failed.is_some() {
        "mount /dev/infiniband into the container (the RDMA device plugin does when `rdma/ib` is requested) and grant IPC_LOCK".to_string()
    } else if let Some(h) = hca {
        format!(
            "the pod has no RDMA device matching `{h}` (missing Multus annotation or `rdma/ib` request?): check the k8s.v1.cni.cncf.io/networks annotation and that `rdma/ib` is in both requests and limits; `ls /sys/class/infiniband` in the pod lists what NCCL can see"
        )
    } else {
        "give the pod an RDMA device: request `rdma/ib` (requests and limits) and attach the RDMA networks (Multus on RoCE); `ls /sys/class/infiniband` must list a device with an ACTIVE port".to_string()
    };
    (cause, help)
}

/// InfiniBand and RoCE ports used together.
fn mixed_link_layer(x: &Explainer, devices: &[Device]) -> Option<Finding> {
    let ll = |p: &str| {
        devices
            .iter()
            .filter(|d| d.link_layer.starts_with(p))
            .count()
    };
    if !((ll("IB") > 0 && ll("RoCE") > 0) || x.facts.mixed_link_warn.is_some()) {
        return None;
    }
    let list: Vec<String> = devices
        .iter()
        .map(|d| format!("{}/{}", d.name, d.link_layer))
        .collect();
    Some(
        Finding::new(
            Code::ExplainMixedLinkLayer,
            format!(
                "NCCL uses InfiniBand and RoCE ports together{}",
                if list.is_empty() {
                    String::new()
                } else {
                    format!(": {}", list.join(" "))
                }
            ),
            "a queue pair joins two ports of one link layer: when ranks pick an IB port on one side and a RoCE port on the other, connecting fails (2.26+ refuses with `Attempted to connect incompatible devices`); list only one kind in NCCL_IB_HCA (e.g. `=mlx5_0,mlx5_1`)",
        )
        .at(x.facts.mixed_link_warn.clone().or(x.facts.ib_using.clone())),
    )
}

/// nccl-tests' own check of the results.
fn wrong_results(x: &Explainer) -> Option<Finding> {
    let ev = x.tables.wrong_ev.as_ref()?;
    let b = x.tables.finish().unwrap_or_default();
    let what = match (b.wrong, b.out_of_bounds) {
        (w, Some(o)) if w > 0 => format!("{w} wrong values in the table, {o} out of bounds"),
        (w, _) if w > 0 => format!("{w} wrong values in the table"),
        (_, Some(o)) => format!("{o} values out of bounds"),
        _ => "wrong values".to_string(),
    };
    Some(
        Finding::new(
            Code::ExplainWrongResults,
            format!("nccl-tests found wrong results: {what}"),
            "wrong data means corruption on the path: GPUDirect RDMA through a PCIe switch with ACS or an IOMMU in the way (NCCL_NET_GDR_LEVEL=LOC to confirm), a faulty NIC, cable or GPU (run the test per node and per rail to isolate it), or mismatched NCCL builds across ranks",
        )
        .at(Some(ev.clone())),
    )
}

/// A net plugin NCCL_NET_PLUGIN asked for that failed to load.
fn plugin_not_loaded(x: &Explainer, env: &IndexMap<String, String>) -> Option<Finding> {
    let req = env.get(vars::NCCL_NET_PLUGIN.name)?;
    if req.eq_ignore_ascii_case("none") || req.is_empty() {
        return None;
    }
    let stem = req
        .trim_start_matches("libnccl-net-")
        .trim_end_matches(".so");
    let (ev, t) = x
        .facts
        .plugin_failures
        .iter()
        .find(|(_, t)| t.contains(stem))?;
    if x.facts.plugins_loaded.iter().any(|p| p.contains(stem)) {
        return None;
    }
    Some(
        Finding::new(
            Code::ExplainPluginNotLoaded,
            format!("NCCL_NET_PLUGIN={req} was not loaded ({t}); NCCL used its internal networks"),
            "install the plugin library in the image and put its directory on LD_LIBRARY_PATH, or set NCCL_NET_PLUGIN=none to state that the internal IB transport is meant",
        )
        .at(Some(ev.clone())),
    )
}

/// The findings gathered line by line, composed with what only the whole log knows (the environment, the
/// version, the other findings).
fn accumulated(
    x: &Explainer,
    found: IndexMap<(Code, String), super::Acc>,
    env: &IndexMap<String, String>,
    findings: &mut Vec<Finding>,
) {
    let other_completion = found.keys().any(|(c, k)| {
        *c == Code::ExplainIbRetryExceeded || (*c == Code::ExplainIbCompletionError && k != "5")
    });
    let ucx_hosts = found
        .values()
        .filter(|a| a.finding.code == Code::ExplainUcxUnreachable)
        .map(|a| a.hosts.len())
        .sum::<usize>();
    let version = x
        .versions
        .keys()
        .next()
        .cloned()
        .or(x.facts.torch_version.clone());
    for ((code, key), acc) in found {
        let mut f = acc.finding;
        f.hosts = acc.hosts.into_iter().collect();
        match code {
            Code::ExplainIbCompletionError if key == "5" && other_completion => continue,
            Code::ExplainDuplicateGpu => duplicate_gpu(&mut f, version.as_deref()),
            Code::ExplainNcclDiagnostic => {
                let results: Vec<&super::Diagnostic> = x
                    .diags
                    .values()
                    .filter(|d| d.flagged() && d.check.as_deref().unwrap_or_default() == key)
                    .collect();
                (f.message, f.help) = super::diag::finding_text(&key, &results);
            }
            Code::ExplainBootstrapNoInterface => bootstrap_no_interface(&mut f, x, env),
            Code::ExplainNetNotFound => net_not_found(&mut f, x, env),
            Code::ExplainUcxUnreachable => ucx_unreachable(&mut f, ucx_hosts),
            _ => {}
        }
        findings.push(f);
    }
}

fn duplicate_gpu(f: &mut Finding, version: Option<&str>) {
    // NCCL_MULTI_RANK_GPU_ENABLE exists since 2.30 (NCCL user guide, env.rst; `src/init.cc`), whose warning
    // names it
    let has_knob = version.is_some_and(|v| !version_lt(v, 2, 30))
        || f.evidence
            .as_ref()
            .is_some_and(|e| e.text.contains("NCCL_MULTI_RANK_GPU_ENABLE"));
    if has_knob {
        f.help.push_str("; to share a GPU on purpose, NCCL ≥ 2.30 accepts NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental: every rank allocates its own channels on the GPU, so limit them with NCCL_MAX_CTAS; NVLS is turned off)");
    }
}

fn bootstrap_no_interface(f: &mut Finding, x: &Explainer, env: &IndexMap<String, String>) {
    let what = x
        .facts
        .no_interface
        .as_ref()
        .map_or("bootstrap", |(_, w)| *w);
    f.message = match env.get(vars::NCCL_SOCKET_IFNAME.name) {
        Some(v) => format!(
            "{what}: no network interface matches NCCL_SOCKET_IFNAME={v}; NCCL cannot connect the ranks"
        ),
        None => format!(
            "{what}: NCCL found no usable network interface (only loopback or docker interfaces?)"
        ),
    };
    f.help = "set NCCL_SOCKET_IFNAME to an interface that exists in the container and has an IP address (usually eth0 in a Kubernetes pod; `ip -o addr` or `ls /sys/class/net` lists them); `^lo,docker` excludes by prefix, `=eth0` matches exactly, and a one-character value is ignored".into();
}

fn net_not_found(f: &mut Finding, x: &Explainer, env: &IndexMap<String, String>) {
    let net = x
        .facts
        .net_not_found
        .as_ref()
        .map(|(_, n)| n.clone())
        .filter(|n| !n.is_empty())
        .or(env.get(vars::NCCL_NET).cloned());
    let why = if x.facts.ib_no_device.is_some() {
        " (`NET/IB : No device found.`)"
    } else {
        ""
    };
    f.message = match net {
        Some(n) => format!("NCCL_NET={n} forces a network that could not initialize{why}"),
        None => {
            format!("no NCCL network could initialize{why}: is NCCL_NET set (e.g. NCCL_NET=IB)?")
        }
    };
    f.help = "unset NCCL_NET to let NCCL choose, or make the forced network work: for IB the pod needs an RDMA device (`rdma/ib` request, Multus networks on RoCE) and a matching NCCL_IB_HCA".into();
}

fn ucx_unreachable(f: &mut Finding, hosts: usize) {
    if hosts > 1 {
        f.message = format!("UCX: Destination is unreachable on {hosts} hosts at once");
        f.help = "several pods failing together points at a fabric event, not the job: check whether other jobs on the fabric fail too (and the nodes' backend link-health labels) before changing the job".into();
    } else {
        f.message = "UCX: Destination is unreachable".into();
        f.help = "UCX found no transport that reaches the peer: check UCX_TLS and UCX_NET_DEVICES against `ucx_info -d` on both sides and the RoCE GID (UCX_IB_GID_INDEX); UCX_IB_ROCE_REACHABILITY_MODE=all relaxes the subnet check; if it hits many pods at once that worked before, suspect a fabric event and check other jobs first".into();
    }
}

/// Ranks that run different NCCL versions.
fn version_mismatch(x: &Explainer) -> Option<Finding> {
    if x.versions.len() <= 1 {
        return None;
    }
    let versions: Vec<&str> = x.versions.keys().map(String::as_str).collect();
    let ev = x.versions.get_index(1).map(|(_, e)| e.clone());
    Some(
        Finding::new(
            Code::ExplainVersionMismatch,
            format!("ranks run different NCCL versions: {}", versions.join(", ")),
            "use one image (one NCCL build) for every rank; NCCL does not interoperate across versions",
        )
        .at(ev),
    )
}

fn processes(procs: &[&super::Proc]) -> Vec<Process> {
    procs
        .iter()
        .filter(|p| !p.host.is_empty())
        .map(|p| Process {
            host: p.host.clone(),
            pid: p.pid.clone(),
            rank: p.rank,
            nranks: p.nranks,
            cuda_dev: p.cuda_dev,
            nccl_version: p.version.clone(),
            network: p.channel_nets.first().or(p.networks.first()).cloned(),
            connections: p.connections,
            rdma_ports: p.rdma_ports,
            lines: p.lines,
        })
        .collect()
}

/// What the steps decided, for the explanation.
struct Verdict {
    transport: Transport,
    network: Option<String>,
    gpudirect_rdma: Option<bool>,
    devices: Vec<Device>,
    connections: Connections,
    processes: Vec<Process>,
    env: IndexMap<String, String>,
    env_lines: IndexMap<String, Evidence>,
    rdma_expected: bool,
}

fn explanation(x: Explainer, v: Verdict, findings: Vec<Finding>) -> Explanation {
    let bandwidth = x.tables.finish();
    let facts = invariants::Facts {
        fatal: x.facts.fatal.clone(),
        first_warn: x.facts.first_warn.clone(),
        chain_origin: x.facts.chain_origin.clone(),
        traceback: x.facts.traceback.is_some(),
        rdma_expected: v.rdma_expected,
    };
    let mut e = Explanation {
        transport: v.transport,
        network: v.network,
        gpudirect_rdma: v.gpudirect_rdma,
        nccl_version: x
            .versions
            .keys()
            .next()
            .cloned()
            .or(x.facts.torch_version.clone()),
        devices: v.devices,
        socket_interfaces: x.socket_ifs.iter().cloned().collect(),
        env: v.env,
        env_lines: v.env_lines,
        ib_probed: x.facts.ib_probed,
        processes: v.processes,
        hosts: x.hosts.iter().cloned().collect(),
        connections: v.connections,
        files: x.files,
        findings,
        profile: None,
        bandwidth,
        nodes: (x.facts.n_nodes > 0).then_some(x.facts.n_nodes),
        local_ranks: (x.facts.local_ranks > 0).then_some(x.facts.local_ranks),
        net_plugin: x.facts.external_plugin.clone(),
        ucx_perftest: x.facts.perftest.result.clone(),
        diagnostics: x.diags.into_values().collect(),
        inspector: x.inspector,
    };
    invariants::enforce(&mut e, &facts);
    e
}

/// `roce::explain::disable_read_as_zero`: every `NCCL_*_DISABLE` knob ([`nccl::is_disable_knob`]) NCCL read
/// as 0, so nothing is disabled, unless `meant_zero` says the value was chosen (a profile that sets the knob
/// to 0 itself). NCCL echoes the parsed integer, so the log alone cannot tell `0` from `true`.
pub(super) fn disable_read_as_zero(
    env: &IndexMap<String, String>,
    lines: &IndexMap<String, Evidence>,
    meant_zero: &dyn Fn(&str) -> bool,
) -> Vec<Finding> {
    env.iter()
        .filter(|(name, value)| nccl::is_disable_knob(name) && *value == "0" && !meant_zero(name))
        .map(|(name, _)| {
            Finding::new(
                Code::ExplainDisableReadAsZero,
                format!("{name} is set but NCCL read it as 0, so nothing is disabled"),
                format!("NCCL parses {name} with strtoll: `true`, `yes` and `on` read as 0; set it to 1 to disable, or remove it (0 is the default)"),
            )
            .at(lines.get(name).cloned())
        })
        .collect()
}

/// Link-layer evidence, UCX's included.
fn link_evidence(x: &Explainer) -> transport::LinkEvidence {
    let mut l = x.facts.link;
    l.roce |= x.facts.ucx_roce;
    l.ib |= x.facts.ucx_ib;
    // NCCL reads these only when choosing a RoCE port's GID, so their echo means a RoCE port was used.
    l.roce |= roce_model::fabric::nccl::ROCE_GID_ENV
        .iter()
        .any(|k| x.env.contains_key(*k));
    l
}

/// A socket interface NCCL chose that other hosts cannot reach: the first bootstrap interface, the IB
/// out-of-band one on an IB job, every NET/Socket one on a socket job.
fn socket_interface_finding(x: &Explainer, t: Transport, multi: bool) -> Option<Finding> {
    // (interfaces, the line that listed them, what NCCL uses them for, all of them or the first only)
    let mut lists: Vec<(&[sockets::Iface], &Evidence, &str, bool)> = Vec::new();
    if let Some((l, ev)) = &x.facts.bootstrap_ifs {
        lists.push((l, ev, "bootstrap", true));
    }
    if let Some((i, ev)) = &x.facts.oob_if
        && matches!(t, Transport::Ib | Transport::Roce)
    {
        lists.push((
            std::slice::from_ref(i),
            ev,
            "the IB transport's out-of-band connection",
            false,
        ));
    }
    if let Some((l, ev)) = &x.facts.net_socket_ifs
        && matches!(t, Transport::Socket | Transport::Unknown)
    {
        lists.push((l, ev, "NET/Socket", true));
    }
    let bad = lists.into_iter().find_map(|(list, ev, role, all)| {
        let n = if all { list.len() } else { list.len().min(1) };
        list[..n].iter().find_map(|i| {
            let u = sockets::unreachable(i)?;
            // a lone loopback or bridge is harmless on one host; link-local never carries between hosts
            (multi || u == sockets::Unreachable::LinkLocal).then_some((i, u, ev, role))
        })
    });
    let (i, u, ev, role) = bad?;
    let addr = if i.addr.is_empty() {
        String::new()
    } else {
        format!(" ({})", i.addr)
    };
    let ifname = x
        .env
        .get(vars::NCCL_SOCKET_IFNAME.name)
        .and_then(|v| v.first())
        .map(|(v, _)| v.clone());
    let help = match &ifname {
        Some(v) => format!(
            "NCCL_SOCKET_IFNAME={v} selects it: point it at the interface that carries the pods' routable addresses (eth0 in most Kubernetes pods; `=eth0` for an exact match)"
        ),
        None => "set NCCL_SOCKET_IFNAME to the interface with the routable address (eth0 in most pods), or exclude the rest (`^lo,docker,veth,virbr`): NCCL picked this one automatically, and it uses every interface it lists for NET/Socket connections".to_string(),
    };
    Some(
        Finding::new(
            Code::ExplainSocketInterface,
            format!(
                "NCCL uses {} interface {}{addr} for {role}: other hosts cannot reach it",
                u.describe(),
                i.name
            ),
            help,
        )
        .at(Some(ev.clone())),
    )
}

/// [`Explanation::compare_bandwidth`]: the percentage of the expectation, and a finding when it is low.
pub(super) fn compare_bandwidth(e: &mut Explanation, expected: f64, from: &str) -> Option<Finding> {
    let b = e.bandwidth.as_mut()?;
    if !(expected.is_finite() && expected > 0.0) || b.rows == 0 {
        return None;
    }
    let percent = b.large_busbw / expected * 100.0;
    b.expected = Some(super::Expected {
        busbw: expected,
        from: from.to_string(),
        percent,
    });
    (percent < 80.0).then(|| {
        Finding::new(
            Code::ExplainBandwidthLow,
            format!(
                "nccl-tests bus bandwidth {:.1} GB/s at {} bytes is {percent:.0} % of the expected {expected:.1} GB/s ({from})",
                b.large_busbw, b.large_size
            ),
            "below 80 % of what the rails should give: check that every rail carried traffic (one NET/IB device per GPU in the channel lines), GPUDirect RDMA (/GDRDMA), the NICs' link rate (`ibstat`), PCIe width of GPUs and NICs, and congestion settings (NCCL_IB_TC, ECN/PFC) on RoCE",
        )
    })
}

fn gdr_finding(
    x: &Explainer,
    procs: &[&super::Proc],
    c: Connections,
    network: Option<&str>,
    disabled: &[&str],
) -> Finding {
    let version = x.versions.keys().next().cloned();
    let old = version.as_deref().is_some_and(|v| version_lt(v, 2, 23));
    let (message, ev) = if c.net > c.net_gdr {
        let ev = procs.iter().find_map(|p| p.nongdr_channel_ev.clone());
        (
            format!(
                "GPUDirect RDMA not used: {} of {} network connections over {} are staged through host memory (no /GDRDMA)",
                c.net - c.net_gdr,
                c.net,
                network.unwrap_or(nccl::NET_IB.name)
            ),
            ev,
        )
    } else if !disabled.is_empty() {
        let ev = x
            .facts
            .gdr_hca
            .values()
            .find(|(on, _)| !on)
            .map(|(_, e)| e.clone());
        (
            format!(
                "GPUDirect RDMA disabled for HCA {}: nvidia-peermem (or DMA-BUF) not detected",
                disabled.join(", ")
            ),
            ev,
        )
    } else {
        let (ev, d) = x.facts.gdr_pair_distance.clone().unwrap_or((
            Evidence {
                file: String::new(),
                line: 0,
                text: String::new(),
            },
            String::new(),
        ));
        (
            format!("GPUDirect RDMA disabled: GPU and NIC are too far apart (distance {d})"),
            Some(ev),
        )
    };
    let per_hca = !disabled.is_empty();
    let help = if !per_hca && x.facts.gdr_pair_distance.is_some() && c.net == 0 {
        "check the PCIe topology (`nvidia-smi topo -m`): the NIC should share a PCIe switch with the GPU; NCCL_NET_GDR_LEVEL (e.g. PHB or SYS) raises the allowed distance".to_string()
    } else if old {
        format!(
            "NCCL {} only detects nvidia-peermem through /sys/kernel/mm/memory_peers, which the inbox nvidia_peermem module of newer kernels does not create (NVIDIA/nccl#1676): upgrade to NCCL ≥ 2.23, which also checks /sys/module/nvidia_peermem, or use DMA-BUF",
            version.unwrap_or_default()
        )
    } else {
        "load nvidia-peermem on the node (`modprobe nvidia_peermem`; /sys/module/nvidia_peermem must exist) or use DMA-BUF (NCCL_DMABUF_ENABLE=1 with the open GPU kernel module, kernel ≥ 5.12, rdma-core ≥ 34); check NCCL_NET_GDR_LEVEL is not set to LOC".to_string()
    };
    Finding::new(Code::ExplainGdrDisabled, message, help).at(ev.filter(|e| e.line > 0))
}

/// `v` (like `2.21.5`) is older than `major.minor`.
pub(super) fn version_lt(v: &str, major: u32, minor: u32) -> bool {
    let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a, b) < (major, minor)
}

/// The same message twice (e.g. a profile check repeating a log finding) is reported once.
fn dedupe(findings: &mut Vec<Finding>) {
    let mut seen = IndexSet::new();
    findings.retain(|f| seen.insert((f.code, f.message.clone())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare() {
        assert!(version_lt("2.21.5", 2, 23));
        assert!(!version_lt("2.23.4", 2, 23));
        assert!(!version_lt("2.28.9", 2, 23));
        assert!(version_lt("2.9.9", 2, 23));
    }
}
