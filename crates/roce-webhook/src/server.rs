//! HTTPS serving: tokio + hyper 1 (HTTP/1.1) + tokio-rustls (ring).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::admission::{self, OnError, Outcome};
use crate::metrics::Metrics;
use crate::profiles::Profiles;
use crate::tls::{self, CertStore};

/// Bodies up to this size are reviewed on the connection's own worker thread (a few-kilobyte Pod takes tens
/// of microseconds, under a millisecond at this size); larger ones go to the blocking pool.
const INLINE_REVIEW_BYTES: usize = 32 << 10;

/// The pause after an `accept` that failed for want of a resource (EMFILE, ENFILE, ENOBUFS, ENOMEM): the
/// connection stays in the backlog, so the listener stays ready and an immediate retry fails again at once,
/// a busy loop that would take a core while the process is out of descriptors. hyper 0.14's `AddrIncoming`
/// and axum's `serve` pause 1 s; a shorter pause answers sooner once descriptors are freed and costs nothing.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How the webhook runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on (`0.0.0.0:8443`; port 0 picks one).
    pub listen: SocketAddr,
    /// PEM certificate chain.
    pub tls_cert: PathBuf,
    /// PEM private key.
    pub tls_key: PathBuf,
    /// A directory of profile files (`*.kdl`, `*.yaml`), besides the built-ins.
    pub profiles: Option<PathBuf>,
    /// What to do with an object whose profile cannot be applied.
    pub on_error: OnError,
    /// Largest request body accepted; a larger one gets 413.
    pub body_limit: usize,
    /// Time allowed for the TLS handshake, the request head, and reading the body and answering.
    pub request_timeout: Duration,
    /// How often the profile directory and the certificate files are checked for changes.
    pub poll_interval: Duration,
    /// How long in-flight requests may run after SIGTERM before the connections are dropped.
    pub shutdown_grace: Duration,
    /// Write one JSON line per request to stderr.
    pub log: bool,
}

impl Config {
    /// The defaults: 3 MiB bodies, 10 s timeouts, 2 s polling, 20 s grace, logs on.
    pub fn new(listen: SocketAddr, tls_cert: PathBuf, tls_key: PathBuf) -> Self {
        Config {
            listen,
            tls_cert,
            tls_key,
            profiles: None,
            on_error: OnError::Deny,
            body_limit: 3 * 1024 * 1024,
            request_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(20),
            log: true,
        }
    }
}

/// What every connection shares.
#[derive(Debug)]
struct State {
    config: Config,
    profiles: Profiles,
    certs: Arc<CertStore>,
    metrics: Metrics,
    shutting_down: AtomicBool,
}

/// A bound, not yet serving, webhook.
pub struct Server {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    state: Arc<State>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listener", &self.listener)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Load the certificate and the profiles, and bind the address.
    ///
    /// # Errors
    ///
    /// A certificate or key that does not load, an address that cannot be bound.
    pub async fn bind(config: Config) -> Result<Server, String> {
        let certs = Arc::new(CertStore::open(
            config.tls_cert.clone(),
            config.tls_key.clone(),
        )?);
        let acceptor = TlsAcceptor::from(tls::server_config(certs.clone())?);
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|e| format!("listening on {}: {e}", config.listen))?;
        let profiles = Profiles::new(config.profiles.clone());
        Ok(Server {
            listener,
            acceptor,
            state: Arc::new(State {
                config,
                profiles,
                certs,
                metrics: Metrics::default(),
                shutting_down: AtomicBool::new(false),
            }),
        })
    }

    /// The address it listens on (the port chosen for port 0).
    ///
    /// # Errors
    ///
    /// As [`TcpListener::local_addr`].
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `shutdown` completes; then stop accepting, let in-flight requests finish (up to
    /// [`Config::shutdown_grace`]) and return.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Server {
            listener,
            acceptor,
            state,
        } = self;
        let poller = tokio::spawn(poll(state.clone()));
        let graceful = GracefulShutdown::new();
        // Tells connections still in their TLS handshake to give up.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::pin!(shutdown);
        log_event(
            &state,
            json!({"event": "listening", "addr": listener.local_addr().ok().map(|a| a.to_string()), "profiles": state.profiles.files(), "invalid": state.profiles.invalid()}),
        );
        // set after an accept that failed for want of a resource; the first of a run is logged
        let mut backoff = false;
        let mut failing = false;
        loop {
            if std::mem::take(&mut backoff) {
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                    () = &mut shutdown => break,
                }
            }
            tokio::select! {
                accepted = listener.accept() => {
                    let (tcp, peer) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            state.metrics.accept_error();
                            // a connection reset or aborted before it was accepted concerns that one only
                            backoff = !is_connection_error(&e);
                            if backoff && !std::mem::replace(&mut failing, true) {
                                log_event(
                                    &state,
                                    json!({"level": "warn", "event": "accept failed; pausing before each retry", "error": e.to_string(), "pause_ms": ACCEPT_BACKOFF.as_millis()}),
                                );
                            }
                            continue;
                        }
                    };
                    failing = false;
                    let _ = tcp.set_nodelay(true);
                    let acceptor = acceptor.clone();
                    let state = state.clone();
                    let watcher = graceful.watcher();
                    let mut stop = stop_rx.clone();
                    tokio::spawn(async move {
                        let timeout = state.config.request_timeout;
                        let handshake = tokio::time::timeout(timeout, acceptor.accept(tcp));
                        let tls = tokio::select! {
                            done = handshake => match done {
                                Ok(Ok(tls)) => tls,
                                Ok(Err(_)) | Err(_) => {
                                    state.metrics.tls_error();
                                    return;
                                }
                            },
                            _ = stop.wait_for(|s| *s) => return,
                        };
                        let service_state = state.clone();
                        let service = hyper::service::service_fn(move |req| {
                            let state = service_state.clone();
                            async move { Ok::<_, Infallible>(handle(&state, req, peer).await) }
                        });
                        let mut builder = hyper::server::conn::http1::Builder::new();
                        builder.timer(TokioTimer::new()).header_read_timeout(timeout);
                        let conn = builder.serve_connection(TokioIo::new(tls), service);
                        let _ = watcher.watch(conn).await;
                    });
                }
                () = &mut shutdown => break,
            }
        }
        state.shutting_down.store(true, Ordering::Relaxed);
        let _ = stop_tx.send(true);
        drop(listener);
        log_event(
            &state,
            json!({"event": "shutting down", "in_flight_connections": graceful.count()}),
        );
        let grace = state.config.shutdown_grace;
        if tokio::time::timeout(grace, graceful.shutdown())
            .await
            .is_err()
        {
            log_event(
                &state,
                json!({"event": "grace period over; dropping connections"}),
            );
        }
        poller.abort();
        log_event(&state, json!({"event": "stopped"}));
    }
}

/// An accept error that concerns the one connection (the peer reset or aborted it, or it was refused) rather
/// than the listener or the process: the next accept may succeed at once.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Check the profile directory and the certificate files for changes, forever.
async fn poll(state: Arc<State>) {
    let mut tick = tokio::time::interval(state.config.poll_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let s = state.clone();
        let changed = tokio::task::spawn_blocking(move || {
            let profiles = s.profiles.reload_if_changed();
            let cert = s.certs.reload_if_changed();
            (profiles, cert)
        })
        .await;
        let Ok((profiles, cert)) = changed else {
            continue;
        };
        if profiles.changed {
            state.metrics.profile_reload();
            log_event(
                &state,
                json!({"event": "profiles reloaded", "profiles": state.profiles.files()}),
            );
        }
        for r in &profiles.refused {
            state.metrics.profile_reload_error();
            log_event(
                &state,
                json!({"level": "warn", "event": "profile change refused; keeping the previous version", "profile": r.name, "errors": r.errors}),
            );
        }
        for r in &profiles.invalid {
            state.metrics.profile_reload_error();
            log_event(
                &state,
                json!({"level": "warn", "event": "profile has errors; objects naming it are denied", "profile": r.name, "errors": r.errors}),
            );
        }
        match cert {
            Some(Ok(())) => {
                state.metrics.cert_reload(true);
                log_event(&state, json!({"event": "certificate reloaded"}));
            }
            Some(Err(e)) => {
                state.metrics.cert_reload(false);
                log_event(
                    &state,
                    json!({"event": "certificate reload failed; keeping the old one", "error": e}),
                );
            }
            None => {}
        }
    }
}

type Body = Full<Bytes>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, content_type)
        .body(Full::new(body.into()))
        .expect("a valid response")
}

async fn handle(state: &Arc<State>, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") => reply(StatusCode::OK, "text/plain", "ok\n"),
        (&Method::GET, "/readyz") => {
            if state.shutting_down.load(Ordering::Relaxed) {
                reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "text/plain",
                    "shutting down\n",
                )
            } else {
                reply(StatusCode::OK, "text/plain", "ok\n")
            }
        }
        (&Method::GET, "/metrics") => reply(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            state.metrics.render(),
        ),
        (&Method::POST, "/mutate") => {
            let start = Instant::now();
            let (response, log) = match tokio::time::timeout(
                state.config.request_timeout,
                mutate(state, req),
            )
            .await
            {
                Ok(done) => done,
                Err(_) => (
                    plain_error(
                        StatusCode::REQUEST_TIMEOUT,
                        "the request took too long\n",
                        true,
                    ),
                    Log::new("timeout"),
                ),
            };
            let took = start.elapsed();
            state.metrics.request(log.result, took);
            let mut entry = json!({
                "path": "/mutate",
                "peer": peer.to_string(),
                "status": response.status().as_u16(),
                "result": log.result,
                "duration_ms": (took.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
            });
            if let (Some(e), Some(Value::Object(x))) = (entry.as_object_mut(), log.fields) {
                e.extend(x);
            }
            log_event(state, entry);
            response
        }
        _ => {
            let took = Instant::now().elapsed();
            if req.uri().path() == "/mutate" {
                state.metrics.request("not_found", took);
            }
            reply(
                StatusCode::NOT_FOUND,
                "text/plain",
                "not found: POST /mutate, GET /healthz, /readyz, /metrics\n",
            )
        }
    }
}

struct Log {
    result: &'static str,
    fields: Option<Value>,
}

impl Log {
    fn new(result: &'static str) -> Self {
        Log {
            result,
            fields: None,
        }
    }
}

fn plain_error(status: StatusCode, message: &str, close: bool) -> Response<Body> {
    let mut r = reply(status, "text/plain", message.to_string());
    if close {
        r.headers_mut()
            .insert(CONNECTION, hyper::header::HeaderValue::from_static("close"));
    }
    r
}

async fn mutate(state: &Arc<State>, req: Request<Incoming>) -> (Response<Body>, Log) {
    let body = match read_body(req, state.config.body_limit).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    // Handing a review to the blocking pool costs two thread wake-ups, more than reviewing a Pod; the
    // profiles are already lowered (profiles.rs), so a review does no I/O.
    let reviewed = if body.len() <= INLINE_REVIEW_BYTES {
        Ok(admission::review(
            &body,
            &state.profiles,
            state.config.on_error,
        ))
    } else {
        let s = state.clone();
        tokio::task::spawn_blocking(move || {
            admission::review(&body, &s.profiles, s.config.on_error)
        })
        .await
    };
    let reviewed = match reviewed {
        Ok(r) => r,
        Err(e) => {
            return (
                plain_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("internal error: {e}\n"),
                    true,
                ),
                Log::new("bad_request"),
            );
        }
    };
    match reviewed {
        Err(bad) => (
            plain_error(StatusCode::BAD_REQUEST, &format!("{bad}\n"), false),
            Log {
                result: "bad_request",
                fields: Some(json!({"error": bad.0})),
            },
        ),
        Ok(r) => answer(state, &r),
    }
}

/// The request's body, at most `limit` bytes; else the answer to send (413, or 400 for a body that
/// breaks off).
async fn read_body(req: Request<Incoming>, limit: usize) -> Result<Bytes, (Response<Body>, Log)> {
    let too_large = || {
        (
            plain_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the body is larger than {limit} bytes\n"),
                true,
            ),
            Log::new("too_large"),
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // Up to this many bytes of an oversized body are read and dropped before the 413, so a client that
    // is still sending sees the answer rather than a reset connection; beyond it the connection is closed.
    let drain_cap = (limit as u64).saturating_mul(4);
    if declared.is_some_and(|n| n > drain_cap) {
        return Err(too_large());
    }
    let mut body = req.into_body();
    let mut buf: Vec<u8> = Vec::with_capacity(declared.map_or(0, |n| n.min(limit as u64) as usize));
    let mut seen: u64 = 0;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                return Err((
                    plain_error(
                        StatusCode::BAD_REQUEST,
                        &format!("reading the body: {e}\n"),
                        true,
                    ),
                    Log::new("bad_request"),
                ));
            }
        };
        if let Ok(data) = frame.into_data() {
            seen += data.len() as u64;
            if seen > drain_cap {
                break;
            }
            if seen <= limit as u64 {
                buf.extend_from_slice(&data);
            }
        }
    }
    if seen > limit as u64 {
        return Err(too_large());
    }
    Ok(Bytes::from(buf))
}

/// The AdmissionReview response, counted in the metrics, and the log line that names the object and
/// (for a denial or a warning) what the user was told.
fn answer(state: &State, r: &admission::Reviewed) -> (Response<Body>, Log) {
    match r.outcome {
        Outcome::Patched => state.metrics.patch(r.patch_ops),
        Outcome::Denied => state.metrics.denial(),
        _ => {}
    }
    let body = serde_json::to_vec(&r.response).expect("a response serialises");
    let mut fields = json!({
        "uid": r.uid,
        "kind": r.kind,
        "namespace": r.namespace,
        "name": r.name,
        "patch_ops": r.patch_ops,
    });
    if let Some(p) = &r.profile {
        fields["profile"] = json!(p);
    }
    if matches!(r.outcome, Outcome::Denied | Outcome::Warned) {
        let response = &r.response.response;
        fields["message"] = match &response.status {
            Some(status) => json!(status.message),
            None if !response.warnings.is_empty() => json!(response.warnings),
            None => Value::Null,
        };
    }
    (
        reply(StatusCode::OK, "application/json", body),
        Log {
            result: r.outcome.as_str(),
            fields: Some(fields),
        },
    )
}

/// One JSON line on stderr, with a timestamp (seconds since the epoch).
fn log_event(state: &State, mut event: Value) {
    if !state.config.log {
        return;
    }
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut line = json!({ "ts": (ts * 1000.0).round() / 1000.0, "level": "info" });
    if let (Some(l), Value::Object(e)) = (line.as_object_mut(), &mut event) {
        l.append(e);
    }
    eprintln!("{line}");
}
