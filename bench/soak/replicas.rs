//! The world around the replicas: files swapped the way the kubelet swaps a ConfigMap or Secret volume,
//! certificates from one CA, the `roce-webhook` processes, and what /proc says about them.

use std::fs;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::rustls::pki_types::CertificateDer;

/// A directory updated as the kubelet's AtomicWriter updates a mounted volume: each version's files go
/// into a new hidden directory, the `..data` symlink is swapped to it with one rename, and the visible
/// names are symlinks through `..data`, so a reader sees the whole old set or the whole new one.
#[derive(Debug)]
pub(crate) struct Volume {
    root: PathBuf,
    version: u32,
}

impl Volume {
    pub(crate) fn new(root: PathBuf) -> io::Result<Volume> {
        fs::create_dir_all(&root)?;
        Ok(Volume { root, version: 0 })
    }

    /// Replace the volume's contents with `files`.
    pub(crate) fn write(&mut self, files: &[(&str, &[u8])]) -> io::Result<()> {
        self.version += 1;
        let dir = format!("..v{}", self.version);
        fs::create_dir(self.root.join(&dir))?;
        for (name, bytes) in files {
            fs::write(self.root.join(&dir).join(name), bytes)?;
        }
        let tmp = self.root.join("..data_tmp");
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&dir, &tmp)?;
        fs::rename(&tmp, self.root.join("..data"))?;
        for (name, _) in files {
            let visible = self.root.join(name);
            if fs::symlink_metadata(&visible).is_err() {
                std::os::unix::fs::symlink(Path::new("..data").join(name), &visible)?;
            }
        }
        if self.version > 1 {
            // The kubelet removes the old version once the swap is done.
            fs::remove_dir_all(self.root.join(format!("..v{}", self.version - 1)))?;
        }
        Ok(())
    }
}

/// The CA the client trusts; it signs every serving certificate of the run.
#[derive(Debug)]
pub(crate) struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pub(crate) der: CertificateDer<'static>,
}

impl Ca {
    pub(crate) fn new() -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "roce webhook soak CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("a CA key");
        let cert = params.self_signed(&key).expect("the CA certificate");
        Ca {
            der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A fresh serving certificate (a new key) for `localhost` and 127.0.0.1: (cert PEM, key PEM, DER).
    pub(crate) fn leaf(&self, n: u32) -> (String, String, CertificateDer<'static>) {
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, format!("roce-webhook soak {n}"));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().expect("a leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        (cert.pem(), key.serialize_pem(), cert.der().clone())
    }
}

/// Everything a replica is started with.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) server: PathBuf,
    pub(crate) tls: PathBuf,
    pub(crate) profiles: PathBuf,
    pub(crate) poll: u64,
    pub(crate) timeout: u64,
    pub(crate) logs: PathBuf,
}

/// Start `roce-webhook webhook` on `addr`, its stderr (the JSON log) into `logs/NAME.log`.
pub(crate) fn spawn(launch: &Launch, addr: SocketAddr, name: &str) -> io::Result<Child> {
    let log = fs::File::create(launch.logs.join(format!("{name}.log")))?;
    Command::new(&launch.server)
        .arg("webhook")
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--tls-cert")
        .arg(launch.tls.join("tls.crt"))
        .arg("--tls-key")
        .arg(launch.tls.join("tls.key"))
        .arg("--profiles")
        .arg(&launch.profiles)
        .arg("--poll")
        .arg(launch.poll.to_string())
        .arg("--timeout")
        .arg(launch.timeout.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
}

/// Send `signal` (`TERM`, `KILL`) to `pid` with kill(1) (the workspace forbids `unsafe`, so no libc call).
pub(crate) fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

/// A free loopback port (bound and released; the replica binds it again with SO_REUSEADDR).
pub(crate) fn free_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    l.local_addr().expect("its address")
}

/// What /proc says about one process.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub(crate) struct ProcSample {
    /// Resident set, KiB.
    pub(crate) rss_kib: u64,
    /// Open file descriptors.
    pub(crate) fds: u64,
    pub(crate) threads: u64,
    /// User + system CPU, clock ticks.
    pub(crate) cpu_ticks: u64,
}

pub(crate) fn proc_sample(pid: u32) -> Option<ProcSample> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ProcSample {
        rss_kib: field("VmRSS:")?,
        fds,
        threads: field("Threads:").unwrap_or(0),
        cpu_ticks: ticks,
    })
}

/// The 1-, 5- and 15-minute load averages.
pub(crate) fn loadavg() -> [f64; 3] {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = text
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(f64::NAN));
    [
        it.next().unwrap_or(f64::NAN),
        it.next().unwrap_or(f64::NAN),
        it.next().unwrap_or(f64::NAN),
    ]
}

/// The machine, for the report: CPU model and count.
pub(crate) fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let n = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{n} × {cpu}")
}
