//! The accept loop pauses after an accept that failed for want of descriptors instead of retrying at once.
//! A test binary of its own: it lowers the whole process's descriptor limit.

mod support;

use std::time::Duration;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// With every descriptor in use, a connection waits in the listener's backlog and each accept fails with
/// EMFILE. Over one second the loop may retry about ten times (one pause of 100 ms each); without the pause
/// it retried at once, hundreds of thousands of times, a core spent on nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_pauses_when_out_of_descriptors() {
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
