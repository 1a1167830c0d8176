//! A soak test of `roce webhook` (issue 32; not a timed test: run `bench/webhook-soak`).
//!
//! Two real `roce-webhook` processes on loopback ports, driven as the API server drives a webhook Service:
//! open-loop at `--rate` admissions/s for `--seconds`, keep-alive HTTPS (HTTP/1.1) connections pooled per
//! replica, each request to one replica (alternating), a per-request timeout (`--timeout-ms`, the
//! deployment's `timeoutSeconds`), and one retry on the other replica when a connection fails or times
//! out. Meanwhile: the serving certificate is re-issued by the run's CA every `--cert-every` s; the profile
//! directory changes every `--profiles-every` s, alternately valid and invalid; replica A is sent SIGTERM
//! and started again every `--restart-every` s (replica B runs throughout, so a leak shows in it over the
//! whole run). Files are swapped the way the kubelet updates a mounted Secret or ConfigMap.
//!
//! Every answer is checked (`model.rs`): its patch, applied to the request object, must give what
//! `roce apply`'s library gives for the profile version the replica may have in force. Latency is taken
//! from each request's scheduled time (no coordinated omission), retry included. Every `--sample-every` s:
//! each replica's RSS, open fds, threads and CPU (/proc), a fresh connection's certificate and /metrics,
//! the load average. The report (Markdown, and JSON beside it) summarises per minute.
//!
//! Usage: webhook-soak --server PATH [--smoke] [--seconds S] [--rate N] [--cert-every S]
//!        [--profiles-every S] [--restart-every S] [--poll S] [--timeout-ms MS] [--sample-every S]
//!        [--window S] [--stall-at S [--stall-ms MS]] [--out FILE.md] [--build PROFILE]

// The soak runs only from `bench/webhook-soak`; under `cargo test` only the model's unit tests run.
#![cfg_attr(test, allow(dead_code))]

#[path = "../webhook_client.rs"]
mod client;
mod model;
mod replicas;
mod report;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use model::{DirEvent, DirState, Model, Names, TeamState};
use replicas::{Ca, Launch, ProcSample, Volume};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::CertificateDer;

/// The run's settings.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Opts {
    pub(crate) seconds: u64,
    pub(crate) rate: u64,
    pub(crate) cert_every: f64,
    pub(crate) profiles_every: f64,
    pub(crate) restart_every: f64,
    /// The replicas' `--poll`, seconds.
    pub(crate) poll: u64,
    pub(crate) timeout_ms: u64,
    pub(crate) sample_every: f64,
    /// After a directory change, how long both the old and the new answers are accepted: the replica
    /// reloads on its next poll, asynchronously, so up to one poll interval plus the reload itself.
    pub(crate) window: f64,
    pub(crate) server: PathBuf,
    pub(crate) out: Option<PathBuf>,
    pub(crate) smoke: bool,
    /// The cargo profile the replicas were built with (for the report).
    pub(crate) build: String,
    /// Freeze both replicas (SIGSTOP) at this second for `stall_ms`: a recovery test, off by default.
    pub(crate) stall_at: Option<f64>,
    pub(crate) stall_ms: u64,
}

impl Opts {
    fn parse() -> Opts {
        let args: Vec<String> = std::env::args().collect();
        let get = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        let num = |name: &str, default: f64| {
            get(name).map_or(default, |v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
            })
        };
        let smoke = args.iter().any(|a| a == "--smoke");
        // The smoke preset: a minute at 200/s, the periods scaled by 1/5, a 1 s poll.
        let (s, r, c, p, re, poll, sample) = if smoke {
            (60.0, 200.0, 6.0, 12.0, 24.0, 1.0, 2.0)
        } else {
            (600.0, 1000.0, 30.0, 60.0, 120.0, 2.0, 5.0)
        };
        let poll = num("--poll", poll).max(1.0) as u64;
        Opts {
            seconds: num("--seconds", s).max(1.0) as u64,
            rate: num("--rate", r).max(1.0) as u64,
            cert_every: num("--cert-every", c),
            profiles_every: num("--profiles-every", p),
            restart_every: num("--restart-every", re),
            poll,
            timeout_ms: num("--timeout-ms", 5000.0) as u64,
            sample_every: num("--sample-every", sample),
            window: num("--window", poll as f64 + 2.0),
            server: PathBuf::from(
                get("--server").expect("--server PATH: the roce-webhook executable"),
            ),
            out: get("--out").map(PathBuf::from),
            smoke,
            build: get("--build").unwrap_or_else(|| "unknown".to_string()),
            stall_at: get("--stall-at").map(|v| v.parse().expect("--stall-at: seconds")),
            stall_ms: num("--stall-ms", 2000.0) as u64,
        }
    }
}

/// One `roce-webhook` process.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Instance {
    pub(crate) slot: usize,
    pub(crate) pid: u32,
    pub(crate) spawned: f64,
    pub(crate) ready: Option<f64>,
    pub(crate) sigterm: Option<f64>,
    pub(crate) exited: Option<f64>,
    pub(crate) exit: Option<String>,
    /// Requests on it when SIGTERM came, by the client's count.
    pub(crate) in_flight_at_sigterm: u64,
    /// Of the requests sent to it before SIGTERM and finished after: answered, and failed.
    pub(crate) drained_answered: u64,
    pub(crate) drained_failed: u64,
    /// (seconds, /proc sample).
    pub(crate) samples: Vec<(f64, ProcSample)>,
    /// Its last /metrics.
    pub(crate) metrics: BTreeMap<String, u64>,
}

/// A keep-alive connection and the replica process it reached (the process current before and after it
/// was made: two different ones when a restart fell in between).
struct Pooled {
    send: SendRequest<http_body_util::Full<Bytes>>,
    inst: (usize, usize),
}

/// One minute of the run (by scheduled time).
#[derive(Debug, Default, Clone)]
pub(crate) struct Minute {
    pub(crate) sent: u64,
    pub(crate) answered: u64,
    pub(crate) failed: u64,
    pub(crate) retried: u64,
    pub(crate) wrong: u64,
    /// `soak-team` answers within a change window, matching the old or the new version.
    pub(crate) window_old: u64,
    pub(crate) window_new: u64,
    pub(crate) denied_expected: u64,
    pub(crate) lat_us: Vec<u32>,
}

/// A /metrics probe on a fresh connection.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Probe {
    pub(crate) t: f64,
    pub(crate) slot: usize,
    pub(crate) inst: usize,
    /// Which of the run's certificates the replica presented (index into the issued list).
    pub(crate) cert: Option<usize>,
}

/// One sampling round.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Sample {
    pub(crate) t: f64,
    pub(crate) load: [f64; 3],
    /// Per slot: instance, its /proc sample, the client's open connections to it.
    pub(crate) slots: [Option<(usize, ProcSample, i64)>; 2],
    pub(crate) client: Option<ProcSample>,
}

/// What a directory change did on each replica, from /metrics before and a window after.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Change {
    pub(crate) at: f64,
    pub(crate) state: String,
    /// Per slot: (instance before, instance after, profile reloads, refused changes) or why unknown.
    pub(crate) seen: [Result<(usize, usize, u64, u64), String>; 2],
}

/// Everything the tasks share (crate-private: no `Debug` needed for the pools and processes).
pub(crate) struct Shared {
    pub(crate) opts: Opts,
    pub(crate) t0: Instant,
    pub(crate) model: Model,
    pub(crate) addrs: [SocketAddr; 2],
    tls: Arc<rustls::ClientConfig>,
    launch: Launch,
    pub(crate) events: RwLock<Vec<DirEvent>>,
    pub(crate) instances: Mutex<Vec<Instance>>,
    children: Mutex<Vec<Option<Child>>>,
    current: [AtomicUsize; 2],
    pools: [Mutex<Vec<Pooled>>; 2],
    /// Signalled when a connection goes back to the pool.
    returned: [tokio::sync::Notify; 2],
    open: [Arc<AtomicI64>; 2],
    in_flight: [AtomicU64; 2],
    outstanding: AtomicU64,
    pub(crate) leaves: Mutex<Vec<(f64, CertificateDer<'static>)>>,
    pub(crate) minutes: Mutex<Vec<Minute>>,
    pub(crate) retry_reasons: Mutex<BTreeMap<String, u64>>,
    pub(crate) failures: Mutex<Vec<String>>,
    pub(crate) wrongs: Mutex<Vec<String>>,
    /// The longest an old `soak-team` version was still answered after the change that replaced it.
    pub(crate) old_after_change: Mutex<f64>,
    pub(crate) probes: Mutex<Vec<Probe>>,
    pub(crate) samples: Mutex<Vec<Sample>>,
    pub(crate) changes: Mutex<Vec<Change>>,
    stop: AtomicBool,
}

/// Time allowed for both replicas to start before the load begins.
const STARTUP: Duration = Duration::from_secs(5);

impl Shared {
    /// Seconds since t0 (negative before it: the replicas start first).
    pub(crate) fn secs(&self, t: Instant) -> f64 {
        match t.checked_duration_since(self.t0) {
            Some(d) => d.as_secs_f64(),
            None => -(self.t0 - t).as_secs_f64(),
        }
    }

    fn now(&self) -> f64 {
        self.secs(Instant::now())
    }
}

/// Keep at most this many idle connections per replica (Go's transport keeps 100 by default per host for
/// the API server's webhook client).
const IDLE_PER_REPLICA: usize = 100;

async fn new_connection(sh: &Shared, slot: usize) -> Result<Pooled, String> {
    let before = sh.current[slot].load(Ordering::SeqCst);
    let c = client::connect(
        sh.addrs[slot],
        sh.tls.clone(),
        Duration::from_millis(sh.opts.timeout_ms),
    )
    .await?;
    let after = sh.current[slot].load(Ordering::SeqCst);
    let open = sh.open[slot].clone();
    open.fetch_add(1, Ordering::Relaxed);
    let driver = c.driver;
    tokio::spawn(async move {
        let _ = driver.await;
        open.fetch_sub(1, Ordering::Relaxed);
    });
    Ok(Pooled {
        send: c.send,
        inst: (before, after),
    })
}

/// An idle pooled connection that is still open.
async fn idle(sh: &Shared, slot: usize) -> Option<Pooled> {
    loop {
        let mut c = sh.pools[slot].lock().expect("pool").pop()?;
        // A pooled connection found closed before anything was written on it is dropped, as Go's
        // transport does, and not counted as a failure.
        if !c.send.is_closed() && c.send.ready().await.is_ok() {
            return Some(c);
        }
    }
}

/// Put a connection back (at most [`IDLE_PER_REPLICA`] idle) and wake a request waiting for one.
fn put_back(sh: &Shared, slot: usize, c: Pooled) {
    {
        let mut pool = sh.pools[slot].lock().expect("pool");
        if pool.len() < IDLE_PER_REPLICA {
            pool.push(c);
        }
    }
    sh.returned[slot].notify_one();
}

/// An idle connection, else a new one, as Go's transport (the API server's client) gets one: while the
/// new connection is being made, a connection another request gives back is taken instead, and the new
/// one goes to the pool when it is ready. So a stall of the replica does not leave every late request
/// waiting on a TLS handshake of its own.
async fn connection(sh: &Arc<Shared>, slot: usize) -> Result<Pooled, String> {
    if let Some(c) = idle(sh, slot).await {
        return Ok(c);
    }
    let (tx, mut dialed) = tokio::sync::oneshot::channel();
    let s = sh.clone();
    tokio::spawn(async move {
        let r = new_connection(&s, slot).await;
        // The request took another connection meanwhile: pool this one.
        if let Err(Ok(c)) = tx.send(r) {
            put_back(&s, slot, c);
        }
    });
    loop {
        let returned = sh.returned[slot].notified();
        tokio::pin!(returned);
        returned.as_mut().enable();
        if let Some(c) = idle(sh, slot).await {
            return Ok(c);
        }
        tokio::select! {
            () = &mut returned => {}
            r = &mut dialed => return r.map_err(|_| "the dial task ended".to_string())?,
        }
    }
}

struct Attempt {
    result: Result<(u16, Bytes), String>,
    inst: Option<(usize, usize)>,
}

/// One try on replica `slot`, within the per-request timeout.
async fn attempt(sh: &Arc<Shared>, slot: usize, body: Bytes) -> Attempt {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(sh.opts.timeout_ms);
    let mut conn = match tokio::time::timeout_at(deadline, connection(sh, slot)).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return Attempt {
                result: Err(e),
                inst: None,
            };
        }
        Err(_) => {
            return Attempt {
                result: Err("timeout: no connection".to_string()),
                inst: None,
            };
        }
    };
    let started = sh.now();
    sh.in_flight[slot].fetch_add(1, Ordering::SeqCst);
    let result = match tokio::time::timeout_at(
        deadline,
        client::request(&mut conn.send, "POST", "/mutate", body),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => Err("timeout: no answer".to_string()),
    };
    sh.in_flight[slot].fetch_sub(1, Ordering::SeqCst);
    let inst = conn.inst;
    if result.is_ok() && !conn.send.is_closed() {
        put_back(sh, slot, conn);
    }
    // A request that was on a replica when it got SIGTERM must be answered (drained), not dropped.
    let mut instances = sh.instances.lock().expect("instances");
    if let Some(i) = instances.get_mut(inst.0)
        && i.sigterm.is_some_and(|s| started < s)
    {
        if result.is_ok() {
            i.drained_answered += 1;
        } else {
            i.drained_failed += 1;
        }
    }
    Attempt {
        result,
        inst: Some(inst),
    }
}

/// The reason of a failed try, without the parts that differ every time.
fn reason(e: &str) -> String {
    let e = e.split(" (os error").next().unwrap_or(e);
    e.chars().take(90).collect()
}

/// Which replica request `i` goes to first: a fixed pseudo-random choice, independent of the object mix.
fn pick(i: u64) -> usize {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    (x & 1) as usize
}

/// Every state of `soak-team` the replica processes `inst` may have answered with.
fn states(sh: &Shared, inst: (usize, usize), sent: f64, answered: f64) -> Vec<TeamState> {
    let events = sh.events.read().expect("events");
    let instances = sh.instances.lock().expect("instances");
    let mut out = Vec::new();
    for id in [inst.0, inst.1] {
        let Some(i) = instances.get(id) else { continue };
        for s in model::team_states(
            &events,
            i.spawned,
            i.ready.unwrap_or(answered),
            sent,
            answered,
            sh.opts.window,
        ) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Send admission `i`, due at `due`, retry once on the other replica, and judge the answer.
async fn admission(sh: Arc<Shared>, i: u64, due: Instant) {
    let n = sh.model.objects.len() as u64;
    let object = (i % n) as usize;
    let slot = pick(i);
    let uid = model::uid(i);
    let body = Bytes::from(sh.model.objects[object].body(&uid));
    let sent = sh.now();
    let mut retried = false;
    let mut by = slot;
    let mut att = attempt(&sh, slot, body.clone()).await;
    if let Err(e) = &att.result {
        retried = true;
        by = 1 - slot;
        *sh.retry_reasons
            .lock()
            .expect("reasons")
            .entry(reason(e))
            .or_default() += 1;
        let first = e.clone();
        att = attempt(&sh, 1 - slot, body).await;
        if let Err(e2) = &att.result {
            att.result = Err(format!("{first}; retry: {e2}"));
        }
    }
    let done = Instant::now();
    let answered = sh.secs(done);
    let minute = (sh.secs(due).max(0.0) / 60.0) as usize;
    let mut verdict: Result<Judged, String> = Ok(Judged::default());
    let mut fail: Option<String> = None;
    match (&att.result, att.inst) {
        (Ok((200, bytes)), Some(inst)) => {
            let st = match sh.model.objects[object].names {
                Names::Team => states(&sh, inst, sent, answered),
                _ => Vec::new(),
            };
            verdict = match sh.model.check(object, &uid, bytes, &st) {
                Ok(hit) => {
                    if hit + 1 < st.len() {
                        // An old version after a change: how long after it.
                        let events = sh.events.read().expect("events");
                        if let Some(e) = events.iter().rev().find(|e| e.at <= answered) {
                            let mut m = sh.old_after_change.lock().expect("lag");
                            *m = m.max(answered - e.at);
                        }
                    }
                    Ok(Judged {
                        window: st.len() > 1,
                        newest: hit + 1 == st.len(),
                        denied: st.get(hit) == Some(&TeamState::Denied),
                    })
                }
                Err(e) => Err(format!(
                    "t={answered:.3}s, replica {} (process {}): {e}",
                    ["A", "B"][by],
                    inst.1
                )),
            };
        }
        (Ok((status, bytes)), _) => {
            fail = Some(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ));
        }
        (Err(e), _) => fail = Some(e.clone()),
    }
    let mut minutes = sh.minutes.lock().expect("minutes");
    if minutes.len() <= minute {
        minutes.resize(minute + 1, Minute::default());
    }
    let m = &mut minutes[minute];
    m.sent += 1;
    m.retried += u64::from(retried);
    match (fail, verdict) {
        (Some(f), _) => {
            m.failed += 1;
            drop(minutes);
            let mut failures = sh.failures.lock().expect("failures");
            if failures.len() < 20 {
                failures.push(format!("t={answered:.3}s: {f}"));
            }
        }
        (None, Err(w)) => {
            m.answered += 1;
            m.wrong += 1;
            m.lat_us.push(lat_us(done - due));
            drop(minutes);
            let mut wrongs = sh.wrongs.lock().expect("wrongs");
            if wrongs.len() < 20 {
                wrongs.push(w.chars().take(400).collect());
            }
        }
        (None, Ok(j)) => {
            m.answered += 1;
            m.lat_us.push(lat_us(done - due));
            if j.window {
                if j.newest {
                    m.window_new += 1;
                } else {
                    m.window_old += 1;
                }
            }
            m.denied_expected += u64::from(j.denied);
        }
    }
}

/// How a right answer matched: within a change window (several states possible), the newest of them,
/// a denial the model expects (a replica started on an invalid file).
#[derive(Debug, Default)]
struct Judged {
    window: bool,
    newest: bool,
    denied: bool,
}

fn lat_us(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// A request on a fresh connection to `slot` (no pool, no retry): status, body, and the index of the
/// certificate it presented.
async fn probe(
    sh: &Shared,
    slot: usize,
    path: &str,
) -> Result<(u16, String, Option<usize>), String> {
    let mut c = client::connect(sh.addrs[slot], sh.tls.clone(), Duration::from_secs(2)).await?;
    let cert = c.peer_cert.take().and_then(|pc| {
        sh.leaves
            .lock()
            .expect("leaves")
            .iter()
            .position(|(_, d)| *d == pc)
    });
    let r = tokio::time::timeout(
        Duration::from_secs(2),
        client::request(&mut c.send, "GET", path, Bytes::new()),
    )
    .await
    .map_err(|_| "timeout".to_string())??;
    Ok((r.0, String::from_utf8_lossy(&r.1).into_owned(), cert))
}

/// The counters of a /metrics text.
fn counters(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse::<f64>().ok()? as u64))
        })
        .filter(|(k, _)| !k.contains("_bucket"))
        .collect()
}

const RELOADS: &str = "roce_webhook_profile_reloads_total";
const REFUSED: &str = "roce_webhook_profile_reload_errors_total";

async fn metrics_of(sh: &Shared, slot: usize) -> Result<(usize, BTreeMap<String, u64>), String> {
    let inst = sh.current[slot].load(Ordering::SeqCst);
    let (status, text, _) = probe(sh, slot, "/metrics").await?;
    if status != 200 {
        return Err(format!("HTTP {status}"));
    }
    Ok((inst, counters(&text)))
}

fn start_instance(sh: &Shared, slot: usize) -> usize {
    let name = format!(
        "{}{}",
        ["A", "B"][slot],
        sh.instances.lock().expect("i").len()
    );
    let mut instances = sh.instances.lock().expect("instances");
    let id = instances.len();
    instances.push(Instance {
        slot,
        spawned: sh.now(),
        ..Instance::default()
    });
    // Current before the process exists: a connection that reaches it is labelled with it.
    sh.current[slot].store(id, Ordering::SeqCst);
    let child = replicas::spawn(&sh.launch, sh.addrs[slot], &name).expect("start roce-webhook");
    instances[id].pid = child.id();
    drop(instances);
    sh.children.lock().expect("children").push(Some(child));
    id
}

/// Wait until instance `id` answers /readyz.
async fn wait_ready(sh: &Shared, id: usize, slot: usize) {
    for _ in 0..1500 {
        if let Ok((200, _, _)) = probe(sh, slot, "/readyz").await {
            sh.instances.lock().expect("instances")[id].ready = Some(sh.now());
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("replica {slot} did not become ready in 30 s");
}

/// SIGTERM instance `id` and wait for it to exit (the grace period is 20 s; SIGKILL after 30).
async fn stop_instance(sh: &Shared, id: usize) {
    let pid = {
        let mut instances = sh.instances.lock().expect("instances");
        let i = &mut instances[id];
        i.sigterm = Some(sh.now());
        i.in_flight_at_sigterm = sh.in_flight[i.slot].load(Ordering::SeqCst);
        i.pid
    };
    replicas::signal(pid, "TERM");
    let started = Instant::now();
    loop {
        let status = sh.children.lock().expect("children")[id]
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        if let Some(status) = status {
            let mut instances = sh.instances.lock().expect("instances");
            instances[id].exited = Some(sh.now());
            instances[id].exit = Some(status.to_string());
            return;
        }
        if started.elapsed() > Duration::from_secs(30) {
            replicas::signal(pid, "KILL");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn restart(sh: Arc<Shared>, slot: usize) {
    let old = sh.current[slot].load(Ordering::SeqCst);
    stop_instance(&sh, old).await;
    let id = start_instance(&sh, slot);
    wait_ready(&sh, id, slot).await;
}

enum Action {
    Cert(u32),
    Profiles(u32),
    Restart,
    Stall,
}

/// The profile directory's files for change `k` (0: valid generation 2, 1: invalid, 2: generation 3…).
fn profile_files(k: u32) -> (DirState, String) {
    if k.is_multiple_of(2) {
        let g = k / 2 + 2;
        (DirState::Good(g), model::team_text(g))
    } else {
        (DirState::Bad(k / 2), model::bad_text(k / 2))
    }
}

/// The events of the run, in time order. Phases keep them apart so each one's effect can be told apart
/// (profile changes a third of a period in, restarts in the middle of a valid period: a replica started
/// while the file is invalid would have no version to keep, and the model would expect denials).
fn schedule(o: &Opts) -> Vec<(f64, Action)> {
    let end = o.seconds as f64;
    let mut plan = Vec::new();
    let mut k = 1;
    while o.cert_every > 0.0 && k as f64 * o.cert_every < end {
        plan.push((k as f64 * o.cert_every, Action::Cert(k)));
        k += 1;
    }
    let mut k = 0;
    while o.profiles_every > 0.0 && o.profiles_every * (k as f64 + 1.0 / 3.0) < end {
        plan.push((
            o.profiles_every * (k as f64 + 1.0 / 3.0),
            Action::Profiles(k),
        ));
        k += 1;
    }
    let mut k = 0.0;
    while o.restart_every > 0.0 && o.restart_every * k + o.profiles_every * 5.0 / 6.0 < end {
        plan.push((
            o.restart_every * k + o.profiles_every * 5.0 / 6.0,
            Action::Restart,
        ));
        k += 1.0;
    }
    if let Some(at) = o.stall_at {
        plan.push((at, Action::Stall));
    }
    plan.sort_by(|a, b| a.0.total_cmp(&b.0));
    plan
}

async fn conductor(sh: Arc<Shared>, ca: Arc<Ca>, mut tls: Volume, mut dir: Volume) {
    for (at, action) in schedule(&sh.opts) {
        tokio::time::sleep_until((sh.t0 + Duration::from_secs_f64(at)).into()).await;
        match action {
            Action::Cert(k) => {
                let (cert, key, der) = ca.leaf(k);
                sh.leaves.lock().expect("leaves").push((sh.now(), der));
                tls.write(&[("tls.crt", cert.as_bytes()), ("tls.key", key.as_bytes())])
                    .expect("write the certificate");
            }
            Action::Profiles(k) => {
                let (state, text) = profile_files(k);
                match state {
                    DirState::Good(g) => sh.model.add_generation(g),
                    DirState::Bad(b) => Model::assert_invalid(b),
                }
                let before = [metrics_of(&sh, 0).await, metrics_of(&sh, 1).await];
                let at = sh.now();
                sh.events
                    .write()
                    .expect("events")
                    .push(DirEvent { at, state });
                let other = model::other_text();
                dir.write(&[
                    (&format!("{}.kdl", model::TEAM) as &str, text.as_bytes()),
                    (&format!("{}.kdl", model::OTHER), other.as_bytes()),
                ])
                .expect("write the profiles");
                let sh2 = sh.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs_f64(sh2.opts.window)).await;
                    let mut seen = [Err(String::new()), Err(String::new())];
                    for slot in 0..2 {
                        seen[slot] = match (&before[slot], metrics_of(&sh2, slot).await) {
                            (Ok((i0, m0)), Ok((i1, m1))) => {
                                let d = |k: &str| {
                                    let get =
                                        |m: &BTreeMap<String, u64>| m.get(k).copied().unwrap_or(0);
                                    get(&m1).saturating_sub(get(m0))
                                };
                                Ok((*i0, i1, d(RELOADS), d(REFUSED)))
                            }
                            (Err(e), _) => Err(e.clone()),
                            (_, Err(e)) => Err(e),
                        };
                    }
                    sh2.changes.lock().expect("changes").push(Change {
                        at,
                        state: format!("{state:?}"),
                        seen,
                    });
                });
            }
            Action::Restart => {
                tokio::spawn(restart(sh.clone(), 0));
            }
            Action::Stall => {
                // Both replicas frozen (SIGSTOP), as a machine that stops running them would: does the
                // pair recover once they run again?
                let pids: Vec<u32> = (0..2)
                    .map(|slot| {
                        let id = sh.current[slot].load(Ordering::SeqCst);
                        sh.instances.lock().expect("instances")[id].pid
                    })
                    .collect();
                for p in &pids {
                    replicas::signal(*p, "STOP");
                }
                tokio::time::sleep(Duration::from_millis(sh.opts.stall_ms)).await;
                for p in &pids {
                    replicas::signal(*p, "CONT");
                }
            }
        }
    }
}

async fn sampler(sh: Arc<Shared>) {
    let every = Duration::from_secs_f64(sh.opts.sample_every);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let me = std::process::id();
    while !sh.stop.load(Ordering::SeqCst) {
        tick.tick().await;
        let t = sh.now();
        let mut slots = [None, None];
        for (slot, out) in slots.iter_mut().enumerate() {
            let id = sh.current[slot].load(Ordering::SeqCst);
            let (pid, ready) = {
                let i = &sh.instances.lock().expect("instances")[id];
                (i.pid, i.ready.is_some())
            };
            // A process still starting up (exec, loading) is not sampled: its RSS is not yet its own.
            if let Some(p) = replicas::proc_sample(pid).filter(|_| ready) {
                sh.instances.lock().expect("instances")[id]
                    .samples
                    .push((t, p));
                *out = Some((id, p, sh.open[slot].load(Ordering::Relaxed)));
            }
            if let Ok((200, text, cert)) = probe(&sh, slot, "/metrics").await {
                sh.instances.lock().expect("instances")[id].metrics = counters(&text);
                sh.probes.lock().expect("probes").push(Probe {
                    t: sh.now(),
                    slot,
                    inst: id,
                    cert,
                });
            }
        }
        sh.samples.lock().expect("samples").push(Sample {
            t,
            load: replicas::loadavg(),
            slots,
            client: replicas::proc_sample(me),
        });
    }
}

fn main() -> std::process::ExitCode {
    let opts = Opts::parse();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let logs = scratch.path().join("logs");
    std::fs::create_dir(&logs).expect("logs dir");
    let ca = Arc::new(Ca::new());
    let mut tls = Volume::new(scratch.path().join("tls")).expect("tls volume");
    let (cert, key, der) = ca.leaf(0);
    tls.write(&[("tls.crt", cert.as_bytes()), ("tls.key", key.as_bytes())])
        .expect("write the certificate");
    let mut dir = Volume::new(scratch.path().join("profiles")).expect("profiles volume");
    let model = Model::new();
    model.add_generation(1);
    let team = model::team_text(1);
    let other = model::other_text();
    dir.write(&[
        (&format!("{}.kdl", model::TEAM) as &str, team.as_bytes()),
        (&format!("{}.kdl", model::OTHER), other.as_bytes()),
    ])
    .expect("write the profiles");
    let launch = Launch {
        server: opts.server.clone(),
        tls: scratch.path().join("tls"),
        profiles: scratch.path().join("profiles"),
        poll: opts.poll,
        timeout: 10,
        logs: logs.clone(),
    };
    let load_before = replicas::loadavg();
    let t0 = Instant::now() + STARTUP;
    let sh = Arc::new(Shared {
        opts: opts.clone(),
        t0,
        model,
        addrs: [replicas::free_port(), replicas::free_port()],
        tls: client::client_config(std::slice::from_ref(&ca.der)),
        launch,
        events: RwLock::new(vec![DirEvent {
            at: 0.0,
            state: DirState::Good(1),
        }]),
        instances: Mutex::new(Vec::new()),
        children: Mutex::new(Vec::new()),
        current: [AtomicUsize::new(0), AtomicUsize::new(0)],
        pools: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
        returned: [tokio::sync::Notify::new(), tokio::sync::Notify::new()],
        open: [Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0))],
        in_flight: [AtomicU64::new(0), AtomicU64::new(0)],
        outstanding: AtomicU64::new(0),
        leaves: Mutex::new(vec![(0.0, der)]),
        minutes: Mutex::new(Vec::new()),
        retry_reasons: Mutex::new(BTreeMap::new()),
        failures: Mutex::new(Vec::new()),
        wrongs: Mutex::new(Vec::new()),
        old_after_change: Mutex::new(0.0),
        probes: Mutex::new(Vec::new()),
        samples: Mutex::new(Vec::new()),
        changes: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
    });
    // The client: two threads, like the replicas' share of a two-core machine.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let wall = rt.block_on(async {
        for slot in 0..2 {
            let id = start_instance(&sh, slot);
            wait_ready(&sh, id, slot).await;
            // Half a poll interval apart, so the two replicas see a change at different times (and the
            // change times do not fall on a poll of both).
            if slot == 0 {
                tokio::time::sleep(Duration::from_secs_f64(sh.opts.poll as f64 / 2.0)).await;
            }
        }
        eprintln!(
            "webhook-soak: replicas on {} and {}; {} admissions/s for {} s",
            sh.addrs[0], sh.addrs[1], sh.opts.rate, sh.opts.seconds
        );
        // Everything is timed from t0, a few seconds after the replicas were started.
        assert!(
            Instant::now() < sh.t0,
            "the replicas took more than {STARTUP:?} to start"
        );
        tokio::time::sleep_until(sh.t0.into()).await;
        let conductor = tokio::spawn(conductor(sh.clone(), ca.clone(), tls, dir));
        let sampler = tokio::spawn(sampler(sh.clone()));
        let total = sh.opts.rate * sh.opts.seconds;
        let interval = Duration::from_secs_f64(1.0 / sh.opts.rate as f64);
        for i in 0..total {
            let due = sh.t0 + interval.mul_f64(i as f64);
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
            sh.outstanding.fetch_add(1, Ordering::SeqCst);
            let s = sh.clone();
            tokio::spawn(async move {
                admission(s.clone(), i, due).await;
                s.outstanding.fetch_sub(1, Ordering::SeqCst);
            });
            if i % 10_000 == 0 && i > 0 {
                eprintln!("webhook-soak: {i} sent, t={:.0}s", sh.now());
            }
        }
        while sh.outstanding.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let wall = sh.now();
        let _ = conductor.await;
        sh.stop.store(true, Ordering::SeqCst);
        let _ = sampler.await;
        // The restarts' tasks are done when the last one has its replica ready.
        for slot in 0..2 {
            let id = sh.current[slot].load(Ordering::SeqCst);
            if sh.instances.lock().expect("i")[id].ready.is_none() {
                wait_ready(&sh, id, slot).await;
            }
        }
        for slot in 0..2 {
            let id = sh.current[slot].load(Ordering::SeqCst);
            if let Ok((_, m)) = metrics_of(&sh, slot).await {
                sh.instances.lock().expect("i")[id].metrics = m;
            }
            stop_instance(&sh, id).await;
        }
        wall
    });
    let log_events = report::log_events(&logs);
    let r = report::Report::new(&sh, wall, load_before, log_events);
    let md = r.markdown(&sh);
    match &opts.out {
        Some(path) => {
            std::fs::write(path, &md).expect("write the report");
            std::fs::write(
                path.with_extension("json"),
                serde_json::to_string_pretty(&r.json(&sh)).expect("json"),
            )
            .expect("write the JSON report");
            eprintln!("webhook-soak: wrote {}", path.display());
        }
        None => println!("{md}"),
    }
    if r.failed == 0 && r.wrong == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
