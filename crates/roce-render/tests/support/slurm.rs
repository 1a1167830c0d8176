//! A real Slurm for tests: `munged`, `slurmctld` and one `slurmd` per node on 127.0.0.1, with every
//! file (config, munge key and socket, state, spool, logs, fake GPUs) in one temp dir. One node by
//! default; several with [`Config::with_nodes`] (Slurm's multiple-slurmd mode, below). std only.
//!
//! ```ignore
//! use crate::support::slurm; // declared once in the binary's tests/tests.rs
//!
//! let Some(cluster) = slurm::shared(|| slurm::Config::new(["gb300"], 4, 4)) else { return }; // skipped
//! let job = cluster.sbatch_wait("#!/bin/bash\nsrun env\n", &[], slurm::JOB_TIMEOUT).unwrap();
//! assert!(job.status.success(), "{}", job.report(&cluster));
//!
//! // four nodes roce1..roce4, each its own slurmd
//! let Some(four) = slurm::start(&slurm::Config::new(["h100"], 8, 8).with_nodes(4)) else { return };
//! assert_eq!(four.nodes(), ["roce1", "roce2", "roce3", "roce4"]);
//! ```
//!
//! # What it starts
//!
//! * `munged -F` with a fresh 1 KiB key, its socket in the temp dir (`AuthInfo=socket=…`).
//! * `slurmctld -D` and `slurmd -D -N roce` (foreground, our children) on two free high ports of
//!   127.0.0.1, `SlurmUser=root`. No cgroups anywhere (`ProctrackType=proctrack/linuxproc`,
//!   `TaskPlugin=task/none`, `JobAcctGatherType=jobacct_gather/none`): containers may not allow them.
//! * One node `roce` in every partition of [`Config::partitions`] (profiles name theirs: gb300,
//!   gb200, h100, b200), with `Gres=gpu:N` backed by `gres.conf` `Name=gpu File=<dir>/dev/gpu[0-N]`.
//!   slurmd refuses a GRES file that is not a character or block device ("is not a valid character
//!   or block device, fix your gres.conf", and the job gets no GPUs), and `mknod` needs
//!   `CAP_MKNOD`, so each `gpuK` is a symlink to `/dev/null`: slurmd `stat()`s through it and sees a
//!   character device, and the paths are distinct, so it counts N GPUs and puts a job's share in
//!   `CUDA_VISIBLE_DEVICES` (global indices: without a device cgroup nothing is renumbered).
//! * The node claims [`Config::cpus`] CPUs whatever the machine has (`SlurmdParameters=config_overrides`),
//!   so `--ntasks-per-node=8` fits on a 2-core machine.
//! * `MinJobAge=5` and `SchedulerParameters=batch_sched_delay=0`: `sbatch --wait` (22.05) sleeps
//!   2 s between polls and multiplies that by 4 while it is below `MinJobAge / 2`, so with the
//!   default 300 a job that is not done at the first poll costs 10 s; with 5 (5 / 2 = 2) it polls
//!   every 2 s, and a finished job outlives the next poll by 3 s. A job then takes about 2 s.
//! * Several nodes ([`Config::with_nodes`], N ≥ 2): nodes `roce1`..`roceN`, all on this machine, each
//!   its own `slurmd -N roceK` listening on its own port (`NodeName=roceK NodeHostname=<this host>
//!   NodeAddr=127.0.0.1 Port=…`). That is Slurm's multiple-slurmd mode, for a Slurm configured with
//!   `--enable-multiple-slurmd`, as Debian's slurm-wlm 22.05 is (its `scontrol show config` lists
//!   `MULTIPLE_SLURMD = Yes`); the harness checks that line and fails, saying so, when it is not there.
//!   Every node claims the same [`Config::cpus`] and fake GPUs, and has its own spool dir, pid file,
//!   log (`log/slurmd-roceK.log`, [`Slurm::slurmd_log`]) and `TmpFS` (`tmp/roceK`, through `%n`). The
//!   last matters for `srun --mpi=pmix`: Slurm's PMIx plugin puts each step's client dir at
//!   `<TmpFS>/spmix_appdir_<uid>_<job>.<step>`, and with the default `/tmp` the slurmstepds of one
//!   step on two nodes of the same machine collide ("Cannot create directory …: File exists") and
//!   the step fails to launch. On a real cluster every node has its own `/tmp`. Every process of
//!   the nodes still reports the machine's one host name: a job that must tell nodes apart reads
//!   `SLURMD_NODENAME` (or `SLURM_STEP_NODELIST`), not `hostname`.
//! * On Slurm ≥ 24.11 only, `TopologyPlugin=topology/block` with one block holding the node, so
//!   `--segment` can be scheduled. Older Slurm (Debian bookworm ships 22.05) has neither the plugin
//!   nor the option.
//!
//! # Skipping and CI
//!
//! When `slurmctld`, `slurmd`, `munged` or the client commands are missing, [`start`] prints a loud
//! SKIPPED banner and returns `None`, unless `CI` (or `ROCE_REQUIRE_TOOLS`) is set to anything but
//! empty/`0`/`false`: then it panics. Once the tools are there, a cluster that does not come up is
//! always a failure, with the daemons' logs in the message. `.ci/install-tools` installs them.
//!
//! # Teardown
//!
//! Dropping a [`Slurm`] (also while a failing test unwinds) stops what it started, and nothing else:
//! SIGTERM to its `slurmctld` and `slurmd` (SIGKILL after 5 s), then SIGKILL to every process of
//! this cluster that is still alive: those whose environment carries the marker `ROCE_SLURM_HARNESS=<dir>`
//! ([`Slurm::command`] gives it to the daemons and to `sbatch`, whose jobs inherit it), and those whose
//! working directory or an open file lies in the cluster's temp dir (the `slurmstepd`s, which wipe
//! their environment when they set their process title); then munged. Processes are found by pid,
//! marker and temp dir only, never by name. Drop panics (unless
//! already panicking) when a marked process survives. The temp dir is removed unless
//! `ROCE_SLURM_KEEP=1` or the thread is panicking, and its path is printed.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The node's name (one-node clusters).
pub(crate) const NODE: &str = "roce";
/// Node names of a cluster of several nodes: `roce1`, `roce2`, …
pub(crate) const NODE_PREFIX: &str = "roce";
/// Environment variable that marks every process of one cluster.
pub(crate) const MARKER: &str = "ROCE_SLURM_HARNESS";
/// How long a test job may take before it is cancelled and the test fails.
pub(crate) const JOB_TIMEOUT: Duration = Duration::from_secs(90);
/// How long startup may take (the issue's budget).
pub(crate) const STARTUP_BUDGET: Duration = Duration::from_secs(60);

/// What the cluster offers: its nodes, and what each of them has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    /// Partitions, all holding every node; the first is the default.
    pub partitions: Vec<String>,
    /// GPUs (fake GRES devices) on each node.
    pub gpus: u32,
    /// CPUs each node claims (one task per CPU).
    pub cpus: u32,
    /// Nodes: 1 (the node [`NODE`]) or more (`roce1`..`roceN`, one slurmd each).
    pub nodes: u32,
}

impl Config {
    /// A node with `gpus` fake GPUs and `cpus` CPUs in the given partitions.
    pub(crate) fn new<S: Into<String>>(
        partitions: impl IntoIterator<Item = S>,
        gpus: u32,
        cpus: u32,
    ) -> Self {
        let mut seen = BTreeSet::new();
        let partitions = partitions
            .into_iter()
            .map(Into::into)
            .filter(|p| seen.insert(p.clone()))
            .collect();
        Config {
            partitions,
            gpus,
            cpus,
            nodes: 1,
        }
    }

    /// The same, on `n` nodes `roce1`..`roceN` (each with `gpus` GPUs and `cpus` CPUs). `n` = 1 is the
    /// one-node cluster of [`Config::new`] (its node is [`NODE`]).
    pub(crate) fn with_nodes(mut self, n: u32) -> Self {
        self.nodes = n.max(1);
        self
    }

    /// More than one node: multiple-slurmd mode.
    pub(crate) fn multi(&self) -> bool {
        self.nodes > 1
    }

    /// The node names, in order.
    pub(crate) fn node_names(&self) -> Vec<String> {
        if self.multi() {
            (1..=self.nodes)
                .map(|k| format!("{NODE_PREFIX}{k}"))
                .collect()
        } else {
            vec![NODE.to_string()]
        }
    }

    /// The nodes as a Slurm host list: `roce`, or `roce[1-N]`.
    pub(crate) fn nodelist(&self) -> String {
        if self.multi() {
            format!("{NODE_PREFIX}[1-{}]", self.nodes)
        } else {
            NODE.to_string()
        }
    }
}

/// Paths of the Slurm and munge programs.
#[derive(Debug, Clone)]
pub(crate) struct Bins {
    pub munged: PathBuf,
    pub slurmctld: PathBuf,
    pub slurmd: PathBuf,
    pub sbatch: PathBuf,
    pub srun: PathBuf,
    pub scontrol: PathBuf,
    pub squeue: PathBuf,
    pub scancel: PathBuf,
}

/// A running cluster. Dropping it tears it down.
pub(crate) struct Slurm {
    dir: PathBuf,
    conf: PathBuf,
    bins: Bins,
    daemons: Vec<(String, Child)>,
    config: Config,
    /// Wall time from the first file written to every node reporting `State=IDLE`.
    pub startup: Duration,
    /// `slurmd -V`, e.g. `slurm-wlm 22.05.8`.
    pub version_text: String,
    /// Major and minor version, e.g. `(22, 5)`.
    pub version: (u32, u32),
    jobs: AtomicU64,
    stopped: bool,
}

/// One finished `sbatch --wait`.
#[derive(Debug)]
pub(crate) struct Job {
    /// The job's working directory (`--chdir`), where its `slurm-%j.out` and anything the job
    /// writes with relative paths land.
    pub dir: PathBuf,
    /// `sbatch --wait`'s exit status: the job's, or sbatch's own when it refused the script.
    pub status: ExitStatus,
    /// The job id, when sbatch got that far.
    pub id: Option<u32>,
    /// sbatch's stdout and stderr.
    pub stdout: String,
    pub stderr: String,
}

impl Job {
    /// The batch step's output file (`slurm-<id>.out`), empty when there is none.
    pub(crate) fn output(&self) -> String {
        self.id
            .and_then(|id| std::fs::read_to_string(self.dir.join(format!("slurm-{id}.out"))).ok())
            .unwrap_or_default()
    }

    /// Everything about the job, for a failure message.
    pub(crate) fn report(&self, cluster: &Slurm) -> String {
        let mut r = String::new();
        let _ = writeln!(r, "job dir: {}", self.dir.display());
        let _ = writeln!(r, "sbatch --wait: {} (job id {:?})", self.status, self.id);
        let _ = writeln!(r, "--- sbatch stdout ---\n{}", self.stdout);
        let _ = writeln!(r, "--- sbatch stderr ---\n{}", self.stderr);
        let _ = writeln!(r, "--- job output ---\n{}", self.output());
        if let Ok(script) = std::fs::read_to_string(self.dir.join("job.sbatch")) {
            let _ = writeln!(r, "--- job.sbatch ---\n{script}");
        }
        r.push_str(&cluster.diagnostics());
        r
    }
}

/// True when a missing Slurm must be a failure: `CI` or `ROCE_REQUIRE_TOOLS` set to anything but
/// empty/`0`/`false`.
pub(crate) fn required() -> bool {
    let on = |var: &str| {
        std::env::var(var).is_ok_and(|v| {
            let v = v.trim();
            !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")
        })
    };
    on("CI") || on("ROCE_REQUIRE_TOOLS")
}

/// Skip loudly, or panic under CI.
pub(crate) fn skip(what: &str) {
    if required() {
        panic!(
            "{what} (CI/ROCE_REQUIRE_TOOLS is set, so this is a failure; run .ci/install-tools)"
        );
    }
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED: {what}\n\
         !!! run .ci/install-tools (apt-get install slurm-wlm munge libpmix-dev);\n\
         !!! set CI=true or ROCE_REQUIRE_TOOLS=1 to make this a failure\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    );
}

/// Finds the programs on `PATH` and in the sbin directories (root's `PATH` may lack them).
pub(crate) fn find_bins() -> Result<Bins, String> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from));
    let mut missing = Vec::new();
    let mut find = |name: &str| {
        let found = dirs.iter().map(|d| d.join(name)).find(|p| is_executable(p));
        if found.is_none() {
            missing.push(name.to_string());
        }
        found.unwrap_or_default()
    };
    let bins = Bins {
        munged: find("munged"),
        slurmctld: find("slurmctld"),
        slurmd: find("slurmd"),
        sbatch: find("sbatch"),
        srun: find("srun"),
        scontrol: find("scontrol"),
        squeue: find("squeue"),
        scancel: find("scancel"),
    };
    if missing.is_empty() {
        Ok(bins)
    } else {
        Err(format!(
            "the real-Slurm tests need {}, not found on PATH nor in /usr/sbin",
            missing.join(", ")
        ))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The cluster shared by the tests of one test binary: started by the first caller, torn down when
/// the last test holding it drops its `Arc` (a later caller starts a fresh one). `None`: skipped.
pub(crate) fn shared(config: impl FnOnce() -> Config) -> Option<Arc<Slurm>> {
    static SHARED: Mutex<Weak<Slurm>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(running) = slot.upgrade() {
        return Some(running);
    }
    let cluster = Arc::new(start(&config())?);
    *slot = Arc::downgrade(&cluster);
    Some(cluster)
}

/// Starts a private cluster. `None` when Slurm is not installed and not under CI (after a loud
/// banner); panics with the daemons' logs when it is installed but does not come up.
pub(crate) fn start(config: &Config) -> Option<Slurm> {
    let bins = match find_bins() {
        Ok(b) => b,
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    reap_orphans();
    match Slurm::start(bins, config) {
        Ok(s) => Some(s),
        Err(why) => panic!("the real-Slurm harness could not start a cluster:\n{why}"),
    }
}

/// Stops what clusters of test processes that died without unwinding (SIGKILL, a crash) left
/// running: a temp dir `roce-slurm-<pid>-…` whose test process `<pid>` is gone still marks its
/// daemons, slurmstepds and tasks. Returns the pids it killed. The dirs are left for inspection.
pub(crate) fn reap_orphans() -> Vec<u32> {
    let mut killed = Vec::new();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return killed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix("roce-slurm-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if is_alive(owner) {
            continue;
        }
        for (pid, cmd) in marked_processes(&entry.path()) {
            eprintln!("slurm harness: stopping {pid} ({cmd}), left by dead test process {owner}");
            signal("KILL", pid);
            killed.push(pid);
        }
    }
    killed
}

fn unique_dir() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // Short: the munge socket path must fit in sun_path (108 bytes).
    std::env::temp_dir().join(format!(
        "roce-slurm-{}-{}-{}",
        std::process::id(),
        nanos % 1_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

fn free_port() -> Result<u16, String> {
    let l =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot bind 127.0.0.1:0: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn short_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| {
            Command::new("hostname")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        })
        .map(|h| h.trim().split('.').next().unwrap_or_default().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// `(major, minor)` from `slurm-wlm 22.05.8` / `slurm 24.11.1`.
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    let mut parts = v.split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn mkdir(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// The last `n` lines of a file, for failure messages.
pub(crate) fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("<cannot read: {e}>"));
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl Slurm {
    fn start(bins: Bins, config: &Config) -> Result<Slurm, String> {
        let t0 = Instant::now();
        let dir = unique_dir();
        let mut slurm = Slurm {
            conf: dir.join("slurm.conf"),
            dir,
            bins,
            daemons: Vec::new(),
            config: config.clone(),
            startup: Duration::ZERO,
            version_text: String::new(),
            version: (0, 0),
            jobs: AtomicU64::new(0),
            stopped: false,
        };
        // From here on, Drop cleans up whatever was started, also on the error paths.
        let result = slurm.boot();
        match result {
            Ok(()) => {
                slurm.startup = t0.elapsed();
                eprintln!(
                    "slurm harness: {} up in {} ms in {} (nodes {}, partitions {}, gpu:{}, {} CPUs each)",
                    slurm.version_text,
                    slurm.startup.as_millis(),
                    slurm.dir.display(),
                    config.nodelist(),
                    config.partitions.join(","),
                    config.gpus,
                    config.cpus
                );
                Ok(slurm)
            }
            Err(why) => {
                let report = format!("{why}\n{}", slurm.diagnostics());
                Err(report)
            }
        }
    }

    fn boot(&mut self) -> Result<(), String> {
        let dir = self.dir.clone();
        if self.config.partitions.is_empty() {
            return Err("no partitions configured".into());
        }
        mkdir(&dir, 0o755)?;
        for sub in ["state", "spool", "log", "dev", "jobs"] {
            mkdir(&dir.join(sub), 0o755)?;
        }
        if self.config.multi() {
            // Per node (`%n` in slurm.conf): slurmd's spool, and the TmpFS where the PMIx plugin puts
            // each step's client dir (see the module docs).
            for node in self.config.node_names() {
                mkdir(&dir.join("spool").join(&node), 0o755)?;
                mkdir(&dir.join("tmp").join(&node), 0o1777)?;
            }
        }
        // munged insists: key readable by its owner only, socket directory searchable by everyone.
        mkdir(&dir.join("munge"), 0o755)?;
        let key = dir.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
        write(&key, &bytes)?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400))
                .map_err(|e| format!("cannot chmod the munge key: {e}"))?;
        }
        for i in 0..self.config.gpus {
            let dev = dir.join(format!("dev/gpu{i}"));
            std::os::unix::fs::symlink("/dev/null", &dev)
                .map_err(|e| format!("cannot create fake GPU {}: {e}", dev.display()))?;
        }

        let v = self
            .command(&self.bins.slurmd)
            .arg("-V")
            .output()
            .map_err(|e| format!("cannot run slurmd -V: {e}"))?;
        self.version_text = String::from_utf8_lossy(&v.stdout).trim().to_string();
        self.version = parse_version(&self.version_text).ok_or_else(|| {
            format!(
                "cannot read the Slurm version from `slurmd -V`: {:?}",
                self.version_text
            )
        })?;

        let ctld_port = free_port()?;
        // One port per slurmd, all distinct.
        let mut ports = vec![ctld_port];
        while ports.len() <= self.config.node_names().len() {
            let p = free_port()?;
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        write(&self.conf, self.slurm_conf(ctld_port, &ports[1..]))?;
        write(&dir.join("gres.conf"), self.gres_conf())?;
        write(&dir.join("plugstack.conf"), "")?;
        if self.has_block_topology() {
            write(
                &dir.join("topology.conf"),
                format!("BlockName=block1 Nodes={}\n", self.config.nodelist()),
            )?;
        }

        // munged, then wait for its socket.
        let socket = self.munge_socket();
        let mut munged = self.command(&self.bins.munged);
        munged.args(["-F", "--force", "--num-threads=2"]);
        munged.arg(format!("--key-file={}", key.display()));
        munged.arg(format!("--socket={}", socket.display()));
        munged.arg(format!(
            "--pid-file={}",
            dir.join("munge/munged.pid").display()
        ));
        munged.arg(format!(
            "--log-file={}",
            dir.join("log/munged.log").display()
        ));
        munged.arg(format!(
            "--seed-file={}",
            dir.join("munge/munged.seed").display()
        ));
        self.spawn("munged", munged)?;
        self.wait_for("munged's socket", Duration::from_secs(20), |s| {
            Ok(s.munge_socket().exists())
        })?;

        let mut ctld = self.command(&self.bins.slurmctld);
        ctld.arg("-D").arg("-f").arg(&self.conf);
        self.spawn("slurmctld", ctld)?;
        if self.config.multi() {
            self.check_multiple_slurmd()?;
        }
        for node in self.config.node_names() {
            let mut slurmd = self.command(&self.bins.slurmd);
            slurmd
                .arg("-D")
                .arg("-N")
                .arg(&node)
                .arg("-f")
                .arg(&self.conf);
            let name = if self.config.multi() {
                format!("slurmd-{node}")
            } else {
                "slurmd".to_string()
            };
            self.spawn(&name, slurmd)?;
        }

        let what = if self.config.multi() {
            "every node to become IDLE"
        } else {
            "the node to become IDLE"
        };
        self.wait_for(what, STARTUP_BUDGET, |s| {
            let states = s.node_states();
            Ok(states.len() == s.config.node_names().len()
                && states
                    .iter()
                    .all(|(_, line)| line.split_whitespace().any(|w| w == "State=IDLE")))
        })?;
        let want = format!("Gres=gpu:{}", self.config.gpus);
        for (name, line) in self.node_states() {
            if !line
                .split_whitespace()
                .any(|w| w == want || w.starts_with(&format!("{want}(")))
            {
                return Err(format!("node {name} does not advertise {want}:\n{line}"));
            }
        }
        for node in self.config.node_names() {
            let log = std::fs::read_to_string(self.slurmd_log(&node)).unwrap_or_default();
            if let Some(bad) = log
                .lines()
                .find(|l| l.contains("not a valid character or block device"))
            {
                return Err(format!("slurmd of {node} rejected a fake GPU: {bad}"));
            }
        }
        Ok(())
    }

    /// Several slurmd on one machine need a Slurm built with `--enable-multiple-slurmd`; `scontrol
    /// show config` says whether this one is (`MULTIPLE_SLURMD = Yes`, listed only then).
    fn check_multiple_slurmd(&mut self) -> Result<(), String> {
        let mut shown = String::new();
        self.wait_for("slurmctld to answer", STARTUP_BUDGET, |s| {
            let out = s
                .command(&s.bins.scontrol)
                .args(["show", "config"])
                .output()
                .map_err(|e| format!("cannot run scontrol: {e}"))?;
            shown = String::from_utf8_lossy(&out.stdout).into_owned();
            Ok(out.status.success())
        })?;
        let yes = shown.lines().any(|l| {
            l.split_once('=').is_some_and(|(k, v)| {
                k.trim() == "MULTIPLE_SLURMD" && v.trim().eq_ignore_ascii_case("yes")
            })
        });
        if yes {
            Ok(())
        } else {
            Err(format!(
                "{} nodes on one machine need a Slurm built with --enable-multiple-slurmd; `scontrol \
                 show config` of {} has no `MULTIPLE_SLURMD = Yes`",
                self.config.nodes, self.version_text
            ))
        }
    }

    /// `slurmd_ports`: one per node, in [`Config::node_names`] order.
    fn slurm_conf(&self, ctld_port: u16, slurmd_ports: &[u16]) -> String {
        let d = self.dir.display();
        let c = &self.config;
        // Several slurmd on one machine: each its own spool, pid file, log and TmpFS (`%n` is the node).
        let (spool, pid, log) = if c.multi() {
            ("spool/%n", "slurmd-%n.pid", "log/slurmd-%n.log")
        } else {
            ("spool", "slurmd.pid", "log/slurmd.log")
        };
        let mut conf = format!(
            "# Written by the roce test harness (crates/roce-render/tests/support/slurm.rs).\n\
             ClusterName=roce-test\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/{spool}\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/{pid}\n\
             SlurmctldLogFile={d}/log/slurmctld.log\n\
             SlurmdLogFile={d}/{log}\n\
             SlurmctldDebug=info\n\
             SlurmdDebug=info\n\
             PlugStackConfig={d}/plugstack.conf\n\
             MailProg=/bin/true\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             SchedulerType=sched/builtin\n\
             MpiDefault=none\n\
             GresTypes=gpu\n\
             SlurmdParameters=config_overrides\n\
             ReturnToService=2\n\
             MinJobAge=5\n\
             SchedulerParameters=batch_sched_delay=0\n\
             KillWait=5\n\
             InactiveLimit=0\n",
            host = short_hostname(),
            socket = self.munge_socket().display(),
            slurmd_port = slurmd_ports[0],
        );
        if c.multi() {
            let _ = writeln!(conf, "TmpFS={d}/tmp/%n");
        }
        if self.has_block_topology() {
            // topology.conf is read from slurm.conf's directory.
            let _ = writeln!(conf, "TopologyPlugin=topology/block");
        }
        for (node, port) in c.node_names().iter().zip(slurmd_ports) {
            // One node: the port is SlurmdPort's; several: each slurmd listens on its own.
            let port = if c.multi() {
                format!(" Port={port}")
            } else {
                String::new()
            };
            let _ = writeln!(
                conf,
                "NodeName={node} NodeAddr=127.0.0.1 NodeHostname={host}{port} CPUs={cpus} Gres=gpu:{gpus} State=UNKNOWN",
                host = short_hostname(),
                cpus = c.cpus,
                gpus = c.gpus,
            );
        }
        let nodes = c.nodelist();
        for (i, p) in c.partitions.iter().enumerate() {
            let default = if i == 0 { "YES" } else { "NO" };
            let _ = writeln!(
                conf,
                "PartitionName={p} Nodes={nodes} Default={default} MaxTime=INFINITE State=UP"
            );
        }
        conf
    }

    fn gres_conf(&self) -> String {
        let last = self.config.gpus.saturating_sub(1);
        let files = if self.config.gpus == 1 {
            format!("{}/dev/gpu0", self.dir.display())
        } else {
            format!("{}/dev/gpu[0-{last}]", self.dir.display())
        };
        // Every node's GPUs are the same fake devices: nothing outside Slurm's bookkeeping tells them apart.
        format!(
            "AutoDetect=off\nNodeName={} Name=gpu File={files}\n",
            self.config.nodelist()
        )
    }

    /// topology/block and `--segment` came with Slurm 23.11 / 24.11; configure the plugin only where
    /// `--segment` exists.
    pub(crate) fn has_block_topology(&self) -> bool {
        self.version >= (24, 11)
    }

    /// The temp dir holding everything.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The generated `slurm.conf`.
    pub(crate) fn conf(&self) -> &Path {
        &self.conf
    }

    /// The node configuration.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    fn munge_socket(&self) -> PathBuf {
        self.dir.join("munge/munge.socket")
    }

    /// A command with a clean environment: `PATH`, `SLURM_CONF`, the cluster marker, `HOME`, `LANG`.
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("SLURM_CONF", &self.conf)
            .env(MARKER, &self.dir)
            .env("HOME", &self.dir)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        cmd
    }

    fn spawn(&mut self, name: &str, mut cmd: Command) -> Result<(), String> {
        let out = self.dir.join(format!("log/{name}.stdio"));
        let file = std::fs::File::create(&out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let child = cmd
            .current_dir(&self.dir)
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.daemons.push((name.to_string(), child));
        Ok(())
    }

    fn wait_for(
        &mut self,
        what: &str,
        budget: Duration,
        mut ready: impl FnMut(&Self) -> Result<bool, String>,
    ) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            if ready(self)? {
                return Ok(());
            }
            for (name, child) in &mut self.daemons {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("{name} exited ({status}) while waiting for {what}"));
                }
            }
            if t0.elapsed() > budget {
                return Err(format!("timed out after {budget:?} waiting for {what}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `scontrol -o show node <first node>` (the one node [`NODE`] of a one-node cluster), when the
    /// controller answers.
    pub(crate) fn node_state(&self) -> Option<String> {
        self.node_state_of(&self.config.node_names()[0])
    }

    /// `scontrol -o show node NAME`, when the controller answers.
    pub(crate) fn node_state_of(&self, name: &str) -> Option<String> {
        let out = self
            .command(&self.bins.scontrol)
            .args(["-o", "show", "node", name])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Every node's `scontrol -o show node` line, by name (`NodeName=…`), in the controller's order;
    /// empty when it does not answer.
    pub(crate) fn node_states(&self) -> Vec<(String, String)> {
        let Ok(out) = self
            .command(&self.bins.scontrol)
            .args(["-o", "show", "node"])
            .output()
        else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let name = line
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("NodeName="))?;
                Some((name.to_string(), line.to_string()))
            })
            .collect()
    }

    /// A node's state as `scontrol` words it (`IDLE`, `ALLOCATED`, `MIXED`, `DOWN*`, …).
    pub(crate) fn state_of(&self, name: &str) -> Option<String> {
        let line = self.node_state_of(name)?;
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("State="))
            .map(str::to_string)
    }

    /// The node names: [`NODE`], or `roce1`..`roceN`.
    pub(crate) fn nodes(&self) -> Vec<String> {
        self.config.node_names()
    }

    /// The nodes as a Slurm host list (`roce`, `roce[1-N]`).
    pub(crate) fn nodelist(&self) -> String {
        self.config.nodelist()
    }

    /// A node's slurmd log (`log/slurmd.log` of a one-node cluster, else `log/slurmd-NAME.log`).
    pub(crate) fn slurmd_log(&self, node: &str) -> PathBuf {
        if self.config.multi() {
            self.dir.join(format!("log/slurmd-{node}.log"))
        } else {
            self.dir.join("log/slurmd.log")
        }
    }

    /// Daemon pids (munged, slurmctld, then one slurmd per node: `slurmd`, or `slurmd-roceK`).
    pub(crate) fn daemon_pids(&self) -> Vec<(String, u32)> {
        self.daemons
            .iter()
            .map(|(n, c)| (n.clone(), c.id()))
            .collect()
    }

    /// Writes `script` into a fresh job dir and runs `sbatch --wait --chdir=DIR
    /// --output=DIR/slurm-%j.out job.sbatch ARGS…`. `Err` only when sbatch could not run or the job
    /// did not finish within `timeout` (it is then cancelled).
    pub(crate) fn sbatch_wait(
        &self,
        script: &str,
        args: &[&str],
        timeout: Duration,
    ) -> Result<Job, String> {
        let (dir, mut child) = self.submit(script, args, true)?;
        let t0 = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if t0.elapsed() > timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let stdout =
                        std::fs::read_to_string(dir.join("sbatch.stdout")).unwrap_or_default();
                    let id = job_id(&stdout);
                    if let Some(id) = id {
                        let _ = self
                            .command(&self.bins.scancel)
                            .arg(id.to_string())
                            .status();
                    }
                    return Err(format!(
                        "job {id:?} did not finish within {timeout:?} (cancelled)\n{}",
                        self.diagnostics()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(format!("waiting for sbatch: {e}")),
            }
        };
        let stdout = std::fs::read_to_string(dir.join("sbatch.stdout")).unwrap_or_default();
        let stderr = std::fs::read_to_string(dir.join("sbatch.stderr")).unwrap_or_default();
        Ok(Job {
            id: job_id(&stdout),
            dir,
            status,
            stdout,
            stderr,
        })
    }

    /// Submits without waiting; returns the job dir and the job id.
    pub(crate) fn sbatch(&self, script: &str, args: &[&str]) -> Result<(PathBuf, u32), String> {
        let (dir, mut child) = self.submit(script, args, false)?;
        let status = child.wait().map_err(|e| e.to_string())?;
        let stdout = std::fs::read_to_string(dir.join("sbatch.stdout")).unwrap_or_default();
        let stderr = std::fs::read_to_string(dir.join("sbatch.stderr")).unwrap_or_default();
        match job_id(&stdout) {
            Some(id) if status.success() => Ok((dir, id)),
            _ => Err(format!("sbatch failed ({status}):\n{stdout}\n{stderr}")),
        }
    }

    fn submit(&self, script: &str, args: &[&str], wait: bool) -> Result<(PathBuf, Child), String> {
        let n = self.jobs.fetch_add(1, Ordering::Relaxed);
        let dir = self.dir.join(format!("jobs/{n}"));
        mkdir(&dir, 0o755)?;
        let path = dir.join("job.sbatch");
        write(&path, script)?;
        let stdout = std::fs::File::create(dir.join("sbatch.stdout")).map_err(|e| e.to_string())?;
        let stderr = std::fs::File::create(dir.join("sbatch.stderr")).map_err(|e| e.to_string())?;
        let mut cmd = self.command(&self.bins.sbatch);
        if wait {
            cmd.arg("--wait");
        }
        cmd.arg(format!("--chdir={}", dir.display()))
            .arg(format!("--output={}/slurm-%j.out", dir.display()))
            .arg(&path)
            .args(args)
            .current_dir(&dir)
            .stdout(stdout)
            .stderr(stderr);
        let child = cmd.spawn().map_err(|e| format!("cannot run sbatch: {e}"))?;
        Ok((dir, child))
    }

    /// `squeue`, the nodes, and the tails of the daemon logs.
    pub(crate) fn diagnostics(&self) -> String {
        let mut r = String::new();
        let _ = writeln!(
            r,
            "--- slurm harness in {} ({}) ---",
            self.dir.display(),
            self.version_text
        );
        if let Ok(out) = self
            .command(&self.bins.squeue)
            .args(["-a", "-o", "%i %P %j %T %r"])
            .output()
        {
            let _ = writeln!(
                r,
                "--- squeue ---\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for node in self.config.node_names() {
            let _ = writeln!(
                r,
                "--- node {node} ---\n{}",
                self.node_state_of(&node)
                    .unwrap_or_else(|| "<no answer>".into())
            );
        }
        let mut logs: Vec<String> = vec!["slurmctld.log".into()];
        let slurmds: Vec<String> = if self.config.multi() {
            self.config
                .node_names()
                .iter()
                .map(|n| format!("slurmd-{n}"))
                .collect()
        } else {
            vec!["slurmd".into()]
        };
        logs.extend(slurmds.iter().map(|d| format!("{d}.log")));
        logs.push("munged.log".into());
        logs.push("slurmctld.stdio".into());
        logs.extend(slurmds.iter().map(|d| format!("{d}.stdio")));
        logs.push("munged.stdio".into());
        for log in logs {
            let _ = writeln!(
                r,
                "--- {log} (tail) ---\n{}",
                tail(&self.dir.join("log").join(&log), 25)
            );
        }
        r
    }

    /// Stops everything this cluster started and returns the processes still carrying its marker
    /// afterwards (empty when the teardown was clean).
    pub(crate) fn stop(&mut self) -> Vec<(u32, String)> {
        if self.stopped {
            return marked_processes(&self.dir);
        }
        self.stopped = true;
        // slurmctld and slurmd first (they would complain about a vanished munged).
        let (munge, slurm): (Vec<_>, Vec<_>) = std::mem::take(&mut self.daemons)
            .into_iter()
            .partition(|(n, _)| n == "munged");
        stop_children(slurm);
        // slurmstepd and job tasks: forked by slurmd/slurmstepd, reparented to init; found by marker.
        for _ in 0..3 {
            let left = marked_processes(&self.dir);
            if left.is_empty() {
                break;
            }
            for (pid, _) in &left {
                signal("KILL", *pid);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        stop_children(munge);
        let t0 = Instant::now();
        loop {
            let left = marked_processes(&self.dir);
            if left.is_empty() || t0.elapsed() > Duration::from_secs(5) {
                return left;
            }
            for (pid, _) in &left {
                signal("KILL", *pid);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let left = self.stop();
        let keep = std::env::var("ROCE_SLURM_KEEP").is_ok_and(|v| v == "1")
            || std::thread::panicking()
            || !left.is_empty();
        if keep {
            eprintln!("slurm harness: kept {} for inspection", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        if !left.is_empty() && !std::thread::panicking() {
            panic!(
                "slurm harness: processes of {} survived the teardown: {left:?}",
                self.dir.display()
            );
        }
    }
}

fn job_id(sbatch_stdout: &str) -> Option<u32> {
    sbatch_stdout
        .lines()
        .find_map(|l| l.strip_prefix("Submitted batch job "))
        .and_then(|id| id.trim().parse().ok())
}

fn signal(sig: &str, pid: u32) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// SIGTERM each, wait up to 5 s for all, then SIGKILL the rest; reaps them all.
fn stop_children(mut children: Vec<(String, Child)>) {
    for (_, child) in &children {
        signal("TERM", child.id());
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        children.retain_mut(|(_, c)| !matches!(c.try_wait(), Ok(Some(_))));
        if children.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (name, child) in &mut children {
        eprintln!(
            "slurm harness: {name} (pid {}) ignored SIGTERM for 5 s; SIGKILL",
            child.id()
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Live (non-zombie) processes of the cluster in `dir`, with their command lines: those whose
/// environment has `ROCE_SLURM_HARNESS=<dir>`, and those whose working directory or an open file is
/// inside `dir`. The second test is needed for `slurmstepd`, which overwrites its environment block
/// with its process title (`slurmstepd: [1.batch]`) but keeps the spool dir, the job's output and
/// slurmd's log open. `dir` is unique per cluster, so nothing else on the machine ever matches.
pub(crate) fn marked_processes(dir: &Path) -> Vec<(u32, String)> {
    let mut needle = format!("{MARKER}=").into_bytes();
    needle.extend_from_slice(dir.as_os_str().as_encoded_bytes());
    needle.push(0);
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !is_alive(pid) {
            continue;
        }
        let proc_dir = entry.path();
        let environ = std::fs::read(proc_dir.join("environ")).unwrap_or_default();
        let by_env = environ.starts_with(&needle[..])
            || environ
                .windows(needle.len() + 1)
                .any(|w| w[0] == 0 && w[1..] == needle[..]);
        let inside =
            |link: PathBuf| std::fs::read_link(link).is_ok_and(|target| target.starts_with(dir));
        let by_files = || {
            inside(proc_dir.join("cwd"))
                || std::fs::read_dir(proc_dir.join("fd"))
                    .map(|fds| fds.flatten().any(|fd| inside(fd.path())))
                    .unwrap_or(false)
        };
        if by_env || by_files() {
            let cmdline = std::fs::read(proc_dir.join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            found.push((pid, cmdline));
        }
    }
    found
}

/// True when `pid` exists and is not a zombie.
pub(crate) fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S …": the state follows the last ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|s| s != "Z" && s != "X")
}
