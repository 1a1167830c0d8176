//! Which network carried the ranks' traffic, from all the evidence a log has.
//!
//! In order of strength:
//! 1. the network of the connections (`Channel … via NET/<name>/…`), else the one NCCL chose (`Using network
//!    <name>`, 2.27+ `Assigned NET plugin <name> to comm`);
//! 2. for NCCL's IB transport and IB-like plugins (`IBext*` of HPC-X, Google's `gIB`), the link layer: the device
//!    list (`mlx5_0:1/IB`, `/RoCE`), and lines only one link layer produces (see [`LinkEvidence`]);
//! 3. when no network is named: the IB transport at work (completion, QP, async-event lines, `net_ib.cc`
//!    sources), aws-ofi-nccl's `NET/OFI` lines, the TCP plugins (`NET/Socket`, `NET/FastSocket`) with the IB
//!    transport known to be unavailable, UCX's device and WQE lines.
//!
//! `unknown` only when none of these is in the log.

use roce_model::fabric::nccl::{NET_GIB, NetFamily, net_family};

use super::{Device, Transport};

/// Lines only one link layer produces.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinkEvidence {
    /// Only a RoCE port prints this.
    pub roce: bool,
    /// Only an InfiniBand port prints this.
    pub ib: bool,
}

/// What [`classify`] reads.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Signals<'a> {
    /// The network of the connections, else the one chosen.
    pub network: Option<&'a str>,
    /// RDMA devices NCCL listed.
    pub devices: &'a [Device],
    /// Link-layer evidence other than the device list.
    pub link: LinkEvidence,
    /// NCCL's IB transport was at work (not just probing).
    pub ib_active: bool,
    /// aws-ofi-nccl printed its `NET/OFI` lines.
    pub ofi: bool,
    /// The IB transport could not be used (`No device found`, disabled, libibverbs missing) and a TCP network
    /// listed its interfaces.
    pub socket_by_elimination: bool,
    /// UCX used an RDMA transport (`rc_mlx5`, a `/IB` or `/RoCE` device, a WQE dump).
    pub ucx_rdma: bool,
    /// UCX selected TCP (`cfg#… tag(tcp/eth0 …)`).
    pub ucx_tcp: bool,
}

/// Is this network name NCCL's TCP transport or a TCP plugin ([`NetFamily::Tcp`])?
pub(crate) fn is_socket(name: &str) -> bool {
    net_family(name) == Some(NetFamily::Tcp)
}

/// Decide the transport.
pub(crate) fn classify(s: &Signals<'_>) -> Transport {
    match s.network.map(|n| (n, net_family(n))) {
        Some((_, Some(NetFamily::Tcp))) => Transport::Socket,
        Some((_, Some(NetFamily::Libfabric))) => Transport::Ofi,
        // gIB runs only on Google's RoCE fabrics (A3 Ultra, A4: "GPUDirect RDMA over RoCE", cloud.google.com
        // /ai-hypercomputer/docs/create/gke-ai-hypercompute)
        Some((n, Some(NetFamily::IbVerbs)))
            if n.eq_ignore_ascii_case(NET_GIB.name) && !s.link.ib && !has(s.devices, "IB") =>
        {
            Transport::Roce
        }
        Some((_, Some(NetFamily::IbVerbs))) => link_layer(s),
        Some((_, None)) => Transport::Unknown,
        None if !s.devices.is_empty() || s.ib_active => link_layer(s),
        None if s.ofi => Transport::Ofi,
        None if s.socket_by_elimination => Transport::Socket,
        None if s.ucx_rdma || s.link.roce || s.link.ib => link_layer(s),
        None if s.ucx_tcp => Transport::Socket,
        None => Transport::Unknown,
    }
}

fn has(devices: &[Device], ll: &str) -> bool {
    devices.iter().any(|d| d.link_layer.starts_with(ll))
}

/// RoCE or InfiniBand: the majority of the listed ports; with none listed, the lines only RoCE prints. IB
/// verbs with nothing saying Ethernet is `ib`.
fn link_layer(s: &Signals<'_>) -> Transport {
    let roce = s
        .devices
        .iter()
        .filter(|d| d.link_layer.starts_with("RoCE"))
        .count();
    let ib = s
        .devices
        .iter()
        .filter(|d| d.link_layer.starts_with("IB"))
        .count();
    if roce > ib || (roce == 0 && ib == 0 && s.link.roce && !s.link.ib) {
        Transport::Roce
    } else {
        Transport::Ib
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(ll: &str) -> Device {
        Device {
            name: "mlx5_0".into(),
            port: Some(1),
            link_layer: ll.into(),
            gdr: None,
            speed_mbps: None,
        }
    }

    #[test]
    fn every_kind_of_evidence() {
        let none = Signals::default();
        assert_eq!(classify(&none), Transport::Unknown);
        let roce = [dev("RoCE")];
        let net = |n| Signals {
            network: Some(n),
            ..Signals::default()
        };
        assert_eq!(classify(&net("Socket")), Transport::Socket);
        assert_eq!(classify(&net("FastSocket")), Transport::Socket);
        assert_eq!(classify(&net("AWS Libfabric")), Transport::Ofi);
        assert_eq!(classify(&net("IBext_v8")), Transport::Ib);
        assert_eq!(classify(&net("gIB")), Transport::Roce);
        assert_eq!(classify(&net("GPUDirectTCPX")), Transport::Unknown);
        let s = Signals {
            network: Some("IB"),
            devices: &roce,
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Roce);
        // no network named: the IB transport at work, with a RoCE-only line
        let s = Signals {
            ib_active: true,
            link: LinkEvidence {
                roce: true,
                ib: false,
            },
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Roce);
        let s = Signals {
            ib_active: true,
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Ib);
        let s = Signals {
            ofi: true,
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Ofi);
        let s = Signals {
            socket_by_elimination: true,
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Socket);
        let s = Signals {
            ucx_rdma: true,
            ..Signals::default()
        };
        assert_eq!(classify(&s), Transport::Ib);
    }
}
