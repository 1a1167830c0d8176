//! NCCL: how it reads its variables, its networks and net plugins.
//!
//! Sources: NCCL's environment-variable documentation (docs.nvidia.com/deeplearning/nccl, "Environment
//! Variables"), `src/misc/param.cc` (`ncclGetEnv` + `strtoll(…, 0)` for integer parameters) and
//! `src/plugin/net.cc` (plugin loading) in NVIDIA/nccl 2.28.

use super::env;

/// NCCL variables read as strings; every other `NCCL_*` knob is an integer parsed with `strtoll(…, 0)`
/// (`NCCL_PARAM` in NCCL's source), so `true` reads as 0 and a leading `0` as octal.
pub const STRING_KNOBS: &[&str] = &[
    "NCCL_ALGO",
    "NCCL_COMM_ID",
    "NCCL_CONF_FILE",
    "NCCL_DEBUG",
    "NCCL_DEBUG_FILE",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_ENV_PLUGIN",
    "NCCL_GRAPH_DUMP_FILE",
    "NCCL_GRAPH_FILE",
    "NCCL_HOSTID",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_HCA",
    "NCCL_LAUNCH_MODE",
    "NCCL_NET",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_PLUGIN",
    "NCCL_OOB_NET_IFNAME",
    "NCCL_P2P_LEVEL",
    "NCCL_PROFILER_PLUGIN",
    "NCCL_PROTO",
    "NCCL_SHM_USE_CUDA_MEMCPY",
    "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_IFNAME",
    "NCCL_TOPO_DUMP_FILE",
    "NCCL_TOPO_FILE",
    "NCCL_TUNER_CONFIG_PATH",
    "NCCL_TUNER_PLUGIN",
];

/// Whether NCCL reads `name` as a string (else as an integer).
pub fn is_string_knob(name: &str) -> bool {
    STRING_KNOBS.contains(&name)
}

/// Whether `name` is one of NCCL's `NCCL_<X>_DISABLE` switches (`NCCL_P2P_DISABLE`, `NCCL_SHM_DISABLE`,
/// `NCCL_IB_DISABLE`): integers, where any non-zero value turns the feature off and 0, NCCL's default,
/// leaves it on (NCCL's documentation, "Environment Variables").
///
/// ```
/// use roce_model::fabric::nccl::is_disable_knob;
/// assert!(is_disable_knob("NCCL_SHM_DISABLE"));
/// assert!(!is_disable_knob("NCCL_DISABLE"));
/// assert!(!is_disable_knob("UCX_SHM_DISABLE"));
/// ```
pub fn is_disable_knob(name: &str) -> bool {
    name.strip_prefix(env::NCCL_PREFIX)
        .and_then(|rest| rest.strip_suffix("_DISABLE"))
        .is_some_and(|feature| !feature.is_empty())
}

/// The prefix of the knobs of NCCL's IB verbs transport (`NCCL_IB_HCA`, `NCCL_IB_GID_INDEX`, …).
pub const IB_KNOB_PREFIX: &str = "NCCL_IB_";

/// Whether `name` configures NCCL's IB verbs transport (an `NCCL_IB_*` knob other than
/// [`env::NCCL_IB_DISABLE`]): setting one says RDMA was meant to be used.
pub fn configures_ib(name: &str) -> bool {
    name.starts_with(IB_KNOB_PREFIX) && name != env::NCCL_IB_DISABLE
}

/// Jobs at least this many GPUs large are what the Spectrum-X NCCL plugin is for (CoreWeave RoCE guide).
pub const SPCX_MIN_GPUS: u64 = 10_000;

/// The directory HPC-X installs the Spectrum-X NCCL net plugin in (`$HPCX_DIR/nccl_spectrum-x_plugin/lib`,
/// NVIDIA's "Spectrum-X NCCL Plugin" HPC-X documentation); `NCCL_NET_PLUGIN=spcx` loads it by name. Images that
/// put this directory first on `LD_LIBRARY_PATH` make it NCCL's default `libnccl-net.so`, as CoreWeave's
/// nccl-tests images do since coreweave/nccl-tests#100 (2026-09): a job that does not set
/// `NCCL_NET_PLUGIN=none` then runs on the plugin.
pub const SPECTRUM_X_PLUGIN_DIR: &str = "nccl_spectrum-x_plugin";
/// `NCCL_NET_PLUGIN` name of the Spectrum-X plugin.
pub const SPECTRUM_X_PLUGIN: &str = "spcx";

/// Whether a plugin name or library path NCCL logged is the Spectrum-X plugin.
///
/// ```
/// use roce_model::fabric::nccl::is_spectrum_x_plugin;
/// assert!(is_spectrum_x_plugin("/opt/hpcx/nccl_spectrum-x_plugin/lib/libnccl-net.so"));
/// assert!(is_spectrum_x_plugin("libnccl-net-spcx.so"));
/// assert!(!is_spectrum_x_plugin("/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"));
/// ```
pub fn is_spectrum_x_plugin(logged: &str) -> bool {
    logged.contains(SPECTRUM_X_PLUGIN_DIR)
        || logged.contains(&format!("libnccl-net-{SPECTRUM_X_PLUGIN}.so"))
        || logged.eq_ignore_ascii_case(SPECTRUM_X_PLUGIN)
}

/// `NCCL_NET_PLUGIN` value that loads no plugin: NCCL uses its internal IB verbs and socket transports.
pub const NO_PLUGIN: &str = "none";

/// The library NCCL loads for `NCCL_NET_PLUGIN=name`: `libnccl-net-<name>.so`, or the value itself when it
/// already names a library or a path (see [`net_plugin_libraries`]).
pub fn plugin_library(name: &str) -> Option<String> {
    net_plugin_libraries(Some(name))
        .into_iter()
        .next()
        .and_then(|names| names.into_iter().last())
}

/// The net-plugin library NCCL opens when `NCCL_NET_PLUGIN` is unset (`defaultNetPlugin`, `src/plugin/net.cc`).
pub const DEFAULT_NET_PLUGIN: &str = "libnccl-net.so";
/// The prefix of NCCL's net-plugin libraries (`pluginPrefix`, `src/plugin/plugin_open.cc`).
pub const NET_PLUGIN_PREFIX: &str = "libnccl-net";

/// The libraries NCCL tries to `dlopen` for a `NCCL_NET_PLUGIN` value (`None`: unset): one list per plugin
/// named, each the names tried in order; any one that opens loads that plugin. From NVIDIA/nccl 2.28
/// `src/plugin/net.cc` (`initPluginLibsOnceFunc`: unset → [`DEFAULT_NET_PLUGIN`]; `none`, any case → no
/// plugin; else a comma-separated list) and `src/plugin/plugin_open.cc` (`openPluginLib`: the name as
/// given, then — unless it contains `/` or already reads `lib….so` — `libnccl-net-<name>.so`). NCCL 2.19–2.26
/// take one name and try the same two files. A name without `/` is found by the dynamic loader
/// (`LD_LIBRARY_PATH`, the `ld.so` cache, the system directories).
///
/// ```
/// use roce_model::fabric::nccl::net_plugin_libraries;
/// assert_eq!(net_plugin_libraries(None), [["libnccl-net.so"]]);
/// assert_eq!(net_plugin_libraries(Some("ofi")), [["ofi", "libnccl-net-ofi.so"]]);
/// assert_eq!(net_plugin_libraries(Some("/opt/p/libx.so")), [["/opt/p/libx.so"]]);
/// assert!(net_plugin_libraries(Some("None")).is_empty());
/// ```
pub fn net_plugin_libraries(value: Option<&str>) -> Vec<Vec<String>> {
    let Some(value) = value else {
        return vec![vec![DEFAULT_NET_PLUGIN.to_string()]];
    };
    if value.eq_ignore_ascii_case(NO_PLUGIN) {
        return Vec::new();
    }
    value
        .split(',')
        .filter(|name| !name.is_empty())
        .map(|name| {
            let mut names = vec![name.to_string()];
            let is_library = name.starts_with("lib") && name.ends_with(".so");
            if !name.contains('/') && !is_library {
                names.push(format!("{NET_PLUGIN_PREFIX}-{name}.so"));
            }
            names
        })
        .collect()
}

/// Does `NCCL_NET_PLUGIN=value` name every plugin by path, so that NCCL opens the files as given and needs
/// no library search path to find them ([`net_plugin_libraries`])?
///
/// ```
/// use roce_model::fabric::nccl::plugins_by_path;
/// assert!(plugins_by_path("/opt/aws-ofi-nccl/lib/libnccl-net-ofi.so"));
/// assert!(!plugins_by_path("ofi"));
/// assert!(!plugins_by_path("/opt/a/libx.so,ofi"));
/// assert!(!plugins_by_path("none"));
/// ```
pub fn plugins_by_path(value: &str) -> bool {
    let libraries = net_plugin_libraries(Some(value));
    !libraries.is_empty()
        && libraries
            .iter()
            .all(|names| names.iter().all(|n| n.contains('/')))
}

/// Variables NCCL reads only when it chooses a RoCE port's GID (`ncclIbGetGidIndex` returns before them on
/// an InfiniBand port, `net_ib.cc` 2.21+): their echo in a log means a RoCE port was in use.
pub const ROCE_GID_ENV: &[&str] = &[
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ADDR_RANGE",
];

/// NCCL's internal networks, by the name it prints (`NET/IB`, `NET/Socket`) and accepts in `NCCL_NET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// The name (`IB`, `Socket`).
    pub name: &'static str,
    /// Whether it moves data by RDMA (and can do GPUDirect RDMA).
    pub rdma: bool,
}

/// NCCL's internal verbs transport: InfiniBand and RoCE alike.
pub const NET_IB: Network = Network {
    name: "IB",
    rdma: true,
};
/// NCCL's TCP socket transport: the silent fall-back when no RDMA device is usable.
pub const NET_SOCKET: Network = Network {
    name: "Socket",
    rdma: false,
};
/// Google's FastSocket plugin (`NET/FastSocket`): TCP over several streams, for GPU VMs without RDMA.
pub const NET_FAST_SOCKET: Network = Network {
    name: "FastSocket",
    rdma: false,
};
/// Google's gIB plugin (A3 Ultra, A4): IB verbs over RoCE; what `NCCL_NET` must say for NCCL to use it.
pub const NET_GIB: Network = Network {
    name: "gIB",
    rdma: true,
};

/// What moves the data of a network NCCL names (`Using network <name>`, `NET/<name>/…`, 2.27+ `Assigned NET
/// plugin <name>`), by that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetFamily {
    /// TCP: NCCL's [`NET_SOCKET`] (`src/transport/net_socket.cc`) and [`NET_FAST_SOCKET`].
    Tcp,
    /// libfabric through aws-ofi-nccl: `AWS Libfabric` before 1.7, `Libfabric`, `OFI`.
    Libfabric,
    /// IB verbs: NCCL's [`NET_IB`] (`src/transport/net_ib.cc`), the `IBext*` networks of
    /// nccl-rdma-sharp-plugins (HPC-X: `IBext_v8`), [`NET_GIB`], and that plugin's `UCX` / `UCX-RMA`
    /// networks, which run UCX over the same IB devices (`ucx_plugin.c` opens the ports
    /// `nccl_p2p_ib_init` found).
    IbVerbs,
}

/// The family of the network NCCL names `name` (any case), `None` for one roce does not know (a TCPX
/// plugin, say).
///
/// ```
/// use roce_model::fabric::nccl::{NetFamily, net_family};
/// assert_eq!(net_family("FastSocket"), Some(NetFamily::Tcp));
/// assert_eq!(net_family("AWS Libfabric"), Some(NetFamily::Libfabric));
/// assert_eq!(net_family("IBext_v8"), Some(NetFamily::IbVerbs));
/// assert_eq!(net_family("GPUDirectTCPX"), None);
/// ```
pub fn net_family(name: &str) -> Option<NetFamily> {
    let is = |n: &Network| name.eq_ignore_ascii_case(n.name);
    let lower = name.to_ascii_lowercase();
    if is(&NET_SOCKET) || is(&NET_FAST_SOCKET) {
        Some(NetFamily::Tcp)
    } else if lower.contains("libfabric") || lower == "ofi" {
        Some(NetFamily::Libfabric)
    } else if lower.starts_with("ib") || is(&NET_GIB) || lower == "ucx" || lower == "ucx-rma" {
        Some(NetFamily::IbVerbs)
    } else {
        None
    }
}

/// What `strtoll(s, NULL, 0)` returns and whether it read the whole string.
pub(crate) fn strtoll(s: &str) -> (i64, bool) {
    let t = s.trim_start();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .filter(|h| h.starts_with(|c: char| c.is_ascii_hexdigit()))
    {
        (16, h)
    } else if body.starts_with('0') && body.len() > 1 {
        (8, &body[1..])
    } else {
        (10, body)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let value = i64::from_str_radix(&digits[..end], radix).unwrap_or(0);
    let whole = end == digits.len() && !body.is_empty() && s.len() == t.len();
    (if neg { -value } else { value }, whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_libraries() {
        assert_eq!(plugin_library("none"), None);
        assert_eq!(
            plugin_library("spcx").as_deref(),
            Some("libnccl-net-spcx.so")
        );
        assert_eq!(
            plugin_library("libnccl-net-ofi.so").as_deref(),
            Some("libnccl-net-ofi.so")
        );
        assert_eq!(
            net_plugin_libraries(Some("a,libnccl-net-b.so")),
            [
                vec!["a".to_string(), "libnccl-net-a.so".to_string()],
                vec!["libnccl-net-b.so".to_string()]
            ]
        );
    }

    #[test]
    fn knobs() {
        assert!(is_string_knob("NCCL_IB_HCA"));
        assert!(!is_string_knob("NCCL_IB_QPS_PER_CONNECTION"));
    }
}
