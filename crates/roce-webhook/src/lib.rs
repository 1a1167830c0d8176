//! `roce webhook`: a mutating admission webhook that wires the profile a `roce.dev/profile` label names
//! into Pods and workloads at admission, with the same code as `roce apply` (docs/cluster.md).
//!
//! * [`admission`]: AdmissionReview in, AdmissionReview with a JSONPatch out (no I/O);
//! * [`profiles`]: the built-ins and a directory of profile files, re-read when it changes;
//! * [`metrics`]: the Prometheus exposition;
//! * [`Server`]: HTTPS (tokio, hyper 1, tokio-rustls with ring) on `POST /mutate`, `GET /healthz`,
//!   `/readyz`, `/metrics`; body limit, timeouts, certificate reload, graceful shutdown.
//!
//! [`serve`] runs a [`Server`] until SIGTERM or SIGINT; `roce webhook` calls it.

pub mod admission;
pub mod metrics;
pub mod profiles;
mod server;
mod tls;

pub use admission::OnError;
pub use server::{Config, Server};

/// Serve `config` until SIGTERM or SIGINT (Ctrl-C), then shut down gracefully.
///
/// # Errors
///
/// The runtime cannot start, the certificate does not load, the address cannot be bound.
pub fn serve(config: Config) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    runtime.block_on(async {
        let server = Server::bind(config).await?;
        server.run(signal()).await;
        Ok(())
    })
}

async fn signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
