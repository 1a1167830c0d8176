//! The `ucx-perftest` validation job of every built-in profile, run for real (issue #30): the server's and the
//! client's command lines and environments are taken from the rendered manifest (`roce render --target
//! ucx-perftest`), run with the real `ucx_perftest` of UCX 1.22.0 (`.ci/install-tools`: PyPI `libucx-cu12`) as
//! two processes over 127.0.0.1, and the client's log is read by `roce explain` (the library), which must find
//! the result table and no error.
//!
//! What differs from the rendered job, and only that:
//!
//! - `UCX_TLS=tcp` and `UCX_NET_DEVICES=lo`: this host has no RDMA device and one network, the loopback (the
//!   profiles name their nodes' `eth0`, the RDMA profile its RoCE rails);
//! - the client connects to `127.0.0.1` instead of the headless Service's `server.NAME`, both sides use a free
//!   port instead of the job's fixed one (tests may run side by side), and the client waits for the server's
//!   listening socket itself, the check the job's readiness probe makes (the `wait-for-server` init container
//!   resolves the Service's DNS name, which has no meaning here);
//! - `-n` (iterations) is cut to [`ITERATIONS`], so sixteen profiles of 16 MiB messages take seconds;
//! - `-m cuda` (GPU memory: the profiles whose UCX runs over RDMA, `cuda_copy` in `UCX_TLS`) becomes `-m host`:
//!   this host has no GPU, and `UCX_TLS=tcp` leaves out the `cuda_copy` transport GPU buffers need.
//!
//! Everything else (the profile's other variables, `UCX_LOG_LEVEL=info`, the test, the message size) is as
//! rendered. The client's log is what `kubectl logs pod/NAME-client --all-containers` would print: its
//! `ucx-info` init container (`ucx_info -d`, run here with the same environment) and then `ucx_perftest`.
//!
//! Without `ucx_perftest` the test is skipped loudly; under `CI=true` that is a failure
//! (`consumers::require`).

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use roce_inspect::explain::Explainer;
use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::validation::ucx_perftest::{INFO_CONTAINER, PORT, ROLE_LABEL, TEST_LABEL};
use roce_render::{RenderOptions, Target, plan, render};
use serde_json::Value;

use crate::support::consumers;

/// Iterations each client runs (the job runs 1000).
const ITERATIONS: u64 = 20;

/// Longest a server may take to listen, and a client or server to finish.
const DEADLINE: Duration = Duration::from_secs(60);

/// One container of the rendered job: its command line (`command` then `args`) and its environment.
#[derive(Debug, Clone)]
struct Container {
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

/// The rendered job of one profile.
struct Job {
    /// The headless Service's name (the client's server is `server.NAME`).
    name: String,
    server: Container,
    client: Container,
    /// The client's `ucx-info` init container.
    client_info: Container,
}

fn container(c: &Value) -> Container {
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let mut argv = strs(&c["command"]);
    argv.extend(strs(&c["args"]));
    let env = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = e["value"]
                .as_str()
                .unwrap_or_else(|| panic!("{e}: a variable without a literal value"));
            (e["name"].as_str().unwrap().to_string(), value.to_string())
        })
        .collect();
    Container { argv, env }
}

/// `roce render --target ucx-perftest --profile NAME`, read back as YAML.
fn rendered(profile: &str) -> Job {
    let loaded = load(builtin::source(profile).unwrap(), &BuiltinsOnly);
    let plan = plan::lower(
        &loaded
            .profile
            .unwrap_or_else(|| panic!("{profile}: {:#?}", loaded.problems)),
    );
    let files = render(&plan, Target::UcxPerftest, &RenderOptions::default())
        .unwrap_or_else(|e| panic!("{profile}: {e}"));
    assert_eq!(files.len(), 1, "{profile}: one file");
    let docs: Vec<Value> = files[0]
        .contents
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{profile}: {e}\n{d}")))
        .collect();
    let service = docs
        .iter()
        .find(|d| d["kind"] == "Service")
        .unwrap_or_else(|| panic!("{profile}: no Service"));
    let name = service["metadata"]["name"].as_str().unwrap().to_string();
    let pod = |role: &str| {
        docs.iter()
            .find(|d| {
                d["kind"] == "Pod"
                    && d["metadata"]["labels"][ROLE_LABEL] == role
                    && d["metadata"]["labels"][TEST_LABEL] == name.as_str()
            })
            .unwrap_or_else(|| panic!("{profile}: no {role} Pod"))
    };
    let main = |pod: &Value| {
        let containers = pod["spec"]["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 1, "{profile}: one container");
        container(&containers[0])
    };
    let (server, client) = (pod("server"), pod("client"));
    let client_info = client["spec"]["initContainers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == INFO_CONTAINER)
        .map(container)
        .unwrap_or_else(|| panic!("{profile}: no {INFO_CONTAINER} init container"));
    Job {
        name,
        server: main(server),
        client: main(client),
        client_info,
    }
}

/// Set `name` to `value`, where the job sets it, else at the end.
fn set_env(env: &mut Vec<(String, String)>, name: &str, value: &str) {
    match env.iter_mut().find(|(n, _)| n == name) {
        Some(e) => e.1 = value.to_string(),
        None => env.push((name.to_string(), value.to_string())),
    }
}

/// The value after `flag` (`-p 13337`): there must be exactly one.
fn flag_value<'a>(argv: &'a mut [String], flag: &str, who: &str) -> &'a mut String {
    let at: Vec<usize> = (0..argv.len().saturating_sub(1))
        .filter(|&i| argv[i] == flag)
        .collect();
    let [i] = at[..] else {
        panic!("{who}: want one `{flag} VALUE` in {argv:?}");
    };
    &mut argv[i + 1]
}

/// The job, changed as the module doc says, for a run on this host. Returns what was changed for the memory.
fn for_loopback(job: &mut Job, profile: &str, port: u16) -> Option<String> {
    let port = port.to_string();
    for c in [&mut job.server, &mut job.client, &mut job.client_info] {
        set_env(&mut c.env, "UCX_TLS", "tcp");
        set_env(&mut c.env, "UCX_NET_DEVICES", "lo");
    }

    let server = &mut job.server.argv;
    assert_eq!(server[0], "ucx_perftest", "{profile}: server {server:?}");
    let p = flag_value(server, "-p", profile);
    assert_eq!(*p, PORT.to_string(), "{profile}: server port");
    *p = port.clone();

    let client = &mut job.client.argv;
    assert_eq!(client[0], "ucx_perftest", "{profile}: client {client:?}");
    assert_eq!(
        client[1],
        format!("server.{}", job.name),
        "{profile}: the client's server is the Service's DNS name"
    );
    client[1] = "127.0.0.1".into();
    let p = flag_value(client, "-p", profile);
    assert_eq!(*p, PORT.to_string(), "{profile}: client port");
    *p = port;
    *flag_value(client, "-n", profile) = ITERATIONS.to_string();

    // GPU memory: the RDMA profiles' `-m cuda` cannot run on this CPU host (no GPU, and UCX_TLS=tcp has no
    // cuda_copy); only for them, and said so in the output, host memory instead.
    let m = flag_value(client, "-m", profile);
    let memory: Vec<&str> = m.split(',').collect();
    if memory.iter().any(|t| t.starts_with("cuda")) {
        let host = memory
            .iter()
            .map(|t| if t.starts_with("cuda") { "host" } else { t })
            .collect::<Vec<_>>()
            .join(",");
        let note = format!("-m {m} -> -m {host}");
        *m = host;
        return Some(note);
    }
    None
}

/// `argv` with the real binary for its first word, the job's environment over ours (less our own `UCX_*`).
fn command(c: &Container, bins: &Bins) -> Command {
    let bin = match c.argv[0].as_str() {
        "ucx_perftest" => &bins.perftest,
        "ucx_info" => &bins.info,
        other => panic!("unexpected program {other}"),
    };
    let mut cmd = Command::new(bin);
    cmd.args(&c.argv[1..]).stdin(Stdio::null());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("UCX_") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(c.env.iter().map(|(k, v)| (k, v)));
    cmd
}

struct Bins {
    perftest: PathBuf,
    info: PathBuf,
}

/// stdout and stderr both to `log`, as `kubectl logs` shows a container's.
fn to_log<'a>(cmd: &'a mut Command, log: &Path) -> &'a mut Command {
    let f = File::options()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    cmd.stdout(f.try_clone().unwrap()).stderr(f)
}

fn wait(child: &mut Child, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {DEADLINE:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A socket listening on `port` in /proc/net/tcp or tcp6: what the job's readiness probe looks for.
fn listening(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 3 && w[1].ends_with(&local) && w[3] == "0A"
            })
        })
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What one profile's run gave.
struct Ran {
    profile: String,
    memory: Option<String>,
    iterations: u64,
    bandwidth_mbps: f64,
    usec: f64,
    seconds: f64,
    /// The codes of explain's warnings (no error is allowed).
    warnings: Vec<String>,
}

fn run_one(profile: &str, bins: &Bins, dir: &Path) -> Ran {
    let start = Instant::now();
    let mut job = rendered(profile);
    let port = free_port();
    let memory = for_loopback(&mut job, profile, port);
    let tag = profile.replace('/', "__");
    let server_log = dir.join(format!("{tag}.server.log"));
    let client_log = dir.join(format!("{tag}.client.log"));

    let mut server = to_log(&mut command(&job.server, bins), &server_log)
        .spawn()
        .unwrap_or_else(|e| panic!("{profile}: cannot start the server: {e}"));
    let listen_start = Instant::now();
    while !listening(port) {
        if let Some(status) = server.try_wait().unwrap() {
            panic!(
                "{profile}: the server exited ({status}) before listening:\n{}",
                std::fs::read_to_string(&server_log).unwrap_or_default()
            );
        }
        if listen_start.elapsed() > DEADLINE {
            let _ = server.kill();
            let _ = server.wait();
            panic!("{profile}: the server did not listen on {port} within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    // The client Pod's log: the `ucx-info` init container's output first, then the main container's.
    let info = to_log(&mut command(&job.client_info, bins), &client_log)
        .status()
        .unwrap_or_else(|e| panic!("{profile}: cannot run ucx_info: {e}"));
    let mut client = to_log(&mut command(&job.client, bins), &client_log)
        .spawn()
        .unwrap_or_else(|e| panic!("{profile}: cannot start the client: {e}"));
    let client_status = wait(&mut client, &format!("{profile}: client"));
    if !client_status.success() {
        let _ = server.kill();
    }
    let server_status = wait(&mut server, &format!("{profile}: server"));
    let client_text = std::fs::read_to_string(&client_log).unwrap();
    let server_text = std::fs::read_to_string(&server_log).unwrap();
    let logs = format!(
        "client: {:?} with {:?}\n--- client log ({}) ---\n{client_text}\n--- server log ({}) ---\n{server_text}",
        job.client.argv,
        job.client.env,
        client_log.display(),
        server_log.display()
    );
    assert!(info.success(), "{profile}: ucx_info -d: {info}\n{logs}");
    assert!(
        client_status.success(),
        "{profile}: client {client_status}\n{logs}"
    );
    assert!(
        server_status.success(),
        "{profile}: server {server_status}\n{logs}"
    );

    let mut x = Explainer::new();
    x.start_file(&format!("{tag}.client.log"));
    x.read(client_text.as_bytes()).unwrap();
    let e = x.finish();
    let errors: Vec<String> = e
        .findings
        .iter()
        .filter(|f| f.is_error())
        .map(|f| format!("{}: {} ({:?})", f.code.as_str(), f.message, f.evidence))
        .collect();
    assert!(
        errors.is_empty(),
        "{profile}: explain found errors: {errors:#?}\n{logs}"
    );
    let t = e
        .ucx_perftest
        .as_ref()
        .unwrap_or_else(|| panic!("{profile}: explain read no ucx_perftest table\n{logs}"));
    assert_eq!(t.iterations, ITERATIONS, "{profile}: {t:?}\n{logs}");
    assert!(
        t.bandwidth_mbps > 0.0 && t.usec > 0.0 && t.message_rate > 0.0,
        "{profile}: {t:?}\n{logs}"
    );
    // UCX_LOG_LEVEL=info (the job's) makes UCX echo its variables: explain read the ones this run set.
    assert_eq!(
        e.env.get("UCX_TLS").map(String::as_str),
        Some("tcp"),
        "{profile}: {:?}\n{logs}",
        e.env
    );
    assert_eq!(
        e.env.get("UCX_NET_DEVICES").map(String::as_str),
        Some("lo"),
        "{profile}: {:?}\n{logs}",
        e.env
    );
    Ran {
        profile: profile.to_string(),
        memory,
        iterations: t.iterations,
        bandwidth_mbps: t.bandwidth_mbps,
        usec: t.usec,
        seconds: start.elapsed().as_secs_f64(),
        warnings: e
            .findings
            .iter()
            .map(|f| f.code.as_str().to_string())
            .collect(),
    }
}

#[test]
fn every_builtin_ucx_perftest_job_runs_over_tcp_and_explain_reads_its_table() {
    let Some(perftest) = consumers::require(consumers::Tool::UcxPerftest) else {
        return;
    };
    let Some(info) = consumers::require(consumers::Tool::UcxInfo) else {
        return;
    };
    let bins = Bins { perftest, info };
    let dir = consumers::temp_dir("ucx-perftest");
    let ran: Vec<Ran> = builtin::names().map(|p| run_one(p, &bins, &dir)).collect();
    assert_eq!(ran.len(), builtin::names().count());
    eprintln!(
        "ucx_perftest over TCP on lo, {ITERATIONS} iterations ({}):",
        bins.perftest.display()
    );
    eprintln!(
        "  {:<28} {:>10} {:>12} {:>7}  {:<20} explain warnings",
        "profile", "MB/s", "usec", "s", "memory"
    );
    for r in &ran {
        eprintln!(
            "  {:<28} {:>10.1} {:>12.3} {:>7.2}  {:<20} {}",
            r.profile,
            r.bandwidth_mbps,
            r.usec,
            r.seconds,
            r.memory.as_deref().unwrap_or("as rendered"),
            if r.warnings.is_empty() {
                "none".to_string()
            } else {
                r.warnings.join(", ")
            }
        );
        assert_eq!(r.iterations, ITERATIONS);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
