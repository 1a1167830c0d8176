//! The socket interfaces NCCL chose, and whether another host can reach them.
//!
//! NCCL prints its interface lists as `[0]eth0:10.0.0.1<0> [1]ib0:10.1.0.1<0>` (`NET/Socket : Using …`,
//! `Bootstrap : Using …`, and the IB transport's `; OOB eth0:10.0.0.1<0>`): name, address, port in angle brackets
//! (`ncclSocketToString` in `src/misc/socket.cc`). Bootstrap and the IB out-of-band connection use the first
//! interface; NET/Socket spreads connections over all of them (`ncclNetSocketInit`, `src/transport/net_socket.cc`).
//! When `NCCL_SOCKET_IFNAME` is unset NCCL prefers `ib*`, then anything but `docker*`/`lo*` (and `virbr*` since
//! 2.14), and takes loopback or docker only when nothing else is up (`ncclFindInterfaces`, `src/misc/socket.cc`;
//! NCCL user guide, `NCCL_SOCKET_IFNAME`). So a loopback, link-local or host-private bridge address among them
//! means either nothing better existed in the container or `NCCL_SOCKET_IFNAME` pointed there.

/// One interface of an NCCL interface list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Iface {
    /// Interface name (`eth0`).
    pub name: String,
    /// Its address as NCCL printed it (`10.0.0.1`, `fe80::1%eth0`), empty when NCCL printed none.
    pub addr: String,
}

/// Why an interface cannot carry traffic between hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreachable {
    /// `lo`, 127.0.0.0/8, ::1: only this host.
    Loopback,
    /// fe80::/10 or 169.254.0.0/16: valid on one link only, never routed (RFC 4291 §2.5.6, RFC 3927).
    LinkLocal,
    /// A host-private bridge (`docker0`, `virbr0`): NATed, peers cannot connect to it.
    Bridge,
}

impl Unreachable {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Unreachable::Loopback => "loopback",
            Unreachable::LinkLocal => "link-local",
            Unreachable::Bridge => "a host-private bridge",
        }
    }
}

/// Parse the interfaces of a list (the text after `Using`), stopping at `;` (the IB line's `; OOB …`).
pub(crate) fn parse_list(list: &[u8]) -> Vec<Iface> {
    let list = &list[..memchr::memchr(b';', list).unwrap_or(list.len())];
    list.split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .filter_map(parse_one)
        .take(64)
        .collect()
}

/// `[0]eth0:10.0.0.1<0>` or `eth0:10.0.0.1<0>` (a `[RO]` flag or other token is not an interface).
pub(crate) fn parse_one(t: &[u8]) -> Option<Iface> {
    let t = match t.first() {
        Some(b'[') => {
            let close = memchr::memchr(b']', t)?;
            if !t[1..close].iter().all(u8::is_ascii_digit) {
                return None;
            }
            &t[close + 1..]
        }
        _ => t,
    };
    let colon = memchr::memchr(b':', t)?;
    let name = &t[..colon];
    if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let rest = &t[colon + 1..];
    let addr = &rest[..memchr::memchr(b'<', rest).unwrap_or(rest.len())];
    Some(Iface {
        name: String::from_utf8_lossy(name).into_owned(),
        addr: String::from_utf8_lossy(addr).into_owned(),
    })
}

/// The OOB interface of an IB `Using` line: `… ; OOB eth0:10.0.0.1<0>`.
pub(crate) fn oob(list: &[u8]) -> Option<Iface> {
    let at = memchr::memmem::find(list, b"OOB ")?;
    let rest = &list[at + 4..];
    let end = rest
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(rest.len());
    parse_one(&rest[..end])
}

/// Can another host reach this interface? `None` when nothing says it cannot.
pub(crate) fn unreachable(i: &Iface) -> Option<Unreachable> {
    let a = i.addr.to_ascii_lowercase();
    if i.name == "lo" || a.starts_with("127.") || a == "::1" {
        return Some(Unreachable::Loopback);
    }
    if a.starts_with("fe8")
        || a.starts_with("fe9")
        || a.starts_with("fea")
        || a.starts_with("feb")
        || a.starts_with("169.254.")
    {
        return Some(Unreachable::LinkLocal);
    }
    if i.name.starts_with("docker") || i.name.starts_with("virbr") {
        return Some(Unreachable::Bridge);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(name: &str, addr: &str) -> Iface {
        Iface {
            name: name.into(),
            addr: addr.into(),
        }
    }

    #[test]
    fn lists_of_every_form() {
        assert_eq!(
            parse_list(b" [0]eth0:10.0.0.1<0> [1]ib0:fe80::1%ib0<0>"),
            vec![iface("eth0", "10.0.0.1"), iface("ib0", "fe80::1%ib0")]
        );
        assert_eq!(
            parse_list(b" eth0:192.0.2.2<0>"),
            vec![iface("eth0", "192.0.2.2")]
        );
        // the IB line: devices are not interfaces, the OOB one is read separately
        assert!(parse_list(b" [RO]; OOB eth0:192.0.2.2<0>").is_empty());
        assert_eq!(
            oob(b" [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>"),
            Some(iface("ib0", "10.0.0.1"))
        );
        // an empty address (NCCL 2.4 printed `enp41s0f1:<0>`)
        assert_eq!(
            parse_list(b" [0]enp41s0f1:<0> [1]virbr0:<0>"),
            vec![iface("enp41s0f1", ""), iface("virbr0", "")]
        );
    }

    #[test]
    fn reachability() {
        assert_eq!(
            unreachable(&iface("lo", "127.0.0.1")),
            Some(Unreachable::Loopback)
        );
        assert_eq!(
            unreachable(&iface("veth0a", "fe80::14ad:64ff:fe64:b31e%veth0a")),
            Some(Unreachable::LinkLocal)
        );
        assert_eq!(
            unreachable(&iface("eth0", "169.254.3.1")),
            Some(Unreachable::LinkLocal)
        );
        assert_eq!(unreachable(&iface("virbr0", "")), Some(Unreachable::Bridge));
        assert_eq!(unreachable(&iface("eth0", "fd00::2")), None);
        assert_eq!(unreachable(&iface("veth0", "2a02:6b8::1")), None);
        assert_eq!(unreachable(&iface("eth0", "10.0.0.1")), None);
    }
}
