//! The accept loop pauses after an accept that failed for want of descriptors instead of retrying at once.
//! The test lowers the whole process's descriptor limit, and the other topics of this binary run on other
//! threads of the same process: it runs in a child process of the test binary, alone.

use std::process::Command;
use std::time::Duration;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

use crate::support;

/// Set (through `Command::env`, never in this process) in the child that runs the test's body.
const CHILD: &str = "ROCE_WEBHOOK_TEST_ACCEPT_BACKOFF_CHILD";

/// With every descriptor in use, a connection waits in the listener's backlog and each accept fails with
/// EMFILE. Over one second the loop may retry about ten times (one pause of 100 ms each); without the pause
/// it retried at once, hundreds of thousands of times, a core spent on nothing.
#[test]
fn accept_pauses_when_out_of_descriptors() {
    if std::env::var_os(CHILD).is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(out_of_descriptors());
        return;
    }
    // This test's name without the crate's, as the harness's filter wants it.
    let module = module_path!().split_once("::").expect("a module path").1;
    let name = format!("{module}::accept_pauses_when_out_of_descriptors");
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([&name, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn out_of_descriptors() {
    let run = support::start(|_| {}).await;
    // the client's socket is made now: once the limit is down, connect needs no new descriptor
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    let saved = getrlimit(Resource::Nofile);
    let highest = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .expect("open descriptors");
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(highest + 1),
            maximum: saved.maximum,
        },
    )
    .expect("lower the descriptor limit");
    // fill every free number below the limit, so the server's accept has none
    let mut filler = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        filler.push(f);
    }
    let conn = tokio::time::timeout(Duration::from_secs(5), socket.connect(run.addr))
        .await
        .expect("the kernel completes the handshake from the backlog")
        .expect("connect");
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(filler);
    setrlimit(Resource::Nofile, saved).expect("restore the descriptor limit");
    drop(conn);

    let (_, body) = support::request(run.addr, &run.ca, "GET", "/metrics", Vec::new())
        .await
        .expect("/metrics once descriptors are back");
    let metrics = String::from_utf8(body).unwrap();
    let errors: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("roce_webhook_accept_errors_total "))
        .expect("the accept error counter")
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&errors),
        "{errors} failed accepts in about a second: expected a few (one per 100 ms pause)"
    );
    run.stop().await;
}
