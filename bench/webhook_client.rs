//! The HTTPS client side shared by `webhook-load` and `webhook-soak`: rustls (ring) trusting given roots,
//! one keep-alive HTTP/1.1 connection per [`connect`], and a POST of an AdmissionReview on it.
// Each program uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

/// A client configuration (ring, TLS 1.2 and 1.3, no session resumption) trusting exactly `roots`.
pub(crate) fn client_config(roots: &[CertificateDer<'static>]) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone()).expect("a root certificate");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(store)
    .with_no_client_auth();
    // Every connection a full handshake, as the API server's Go client makes them (no session cache);
    // a resumed session would also report the certificate of the session, not the one served now.
    config.resumption = rustls::client::Resumption::disabled();
    Arc::new(config)
}

/// A connection: the sender, the certificate the server presented, and the task driving it (it ends when
/// the connection closes).
pub(crate) struct Connection {
    pub(crate) send: SendRequest<Full<Bytes>>,
    pub(crate) peer_cert: Option<CertificateDer<'static>>,
    pub(crate) driver: tokio::task::JoinHandle<()>,
}

/// TCP (no Nagle), TLS for `localhost`, an HTTP/1.1 handshake; all within `timeout`.
///
/// # Errors
///
/// A message naming the step that failed, or the timeout.
pub(crate) async fn connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
) -> Result<Connection, String> {
    let steps = async {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(ServerName::try_from("localhost").expect("a name"), tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let peer_cert = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.clone().into_owned());
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| format!("HTTP handshake: {e}"))?;
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Connection {
            send,
            peer_cert,
            driver,
        })
    };
    tokio::time::timeout(timeout, steps)
        .await
        .map_err(|_| format!("connect: no connection within {timeout:?}"))?
}

/// One request on `send` (which must be ready): the status and the whole body.
///
/// # Errors
///
/// The connection failed before the answer was complete.
pub(crate) async fn request(
    send: &mut SendRequest<Full<Bytes>>,
    method: &str,
    path: &str,
    body: Bytes,
) -> Result<(u16, Bytes), String> {
    let req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(body))
        .expect("a request");
    let resp = send
        .send_request(req)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    Ok((status, bytes))
}

/// The `p` quantile (0..=1) of `sorted`, in milliseconds; NaN when empty.
pub(crate) fn quantile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}
