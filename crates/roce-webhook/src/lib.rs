//! `roce webhook`: a mutating admission webhook that wires the profile a `roce.dev/profile` label names
//! into Pods and workloads at admission, with the same code as `roce apply` (docs/cluster.md).
//!
//! * [`admission`]: AdmissionReview in, AdmissionReview with a JSONPatch out (no I/O);
//! * [`profiles`]: the built-ins and a directory of profile files, re-read when it changes;
//! * `metrics` (private): the Prometheus exposition the server serves;
//! * [`Server`]: HTTPS (tokio, hyper 1, tokio-rustls with ring) on `POST /mutate`, `GET /healthz`,
//!   `/readyz`, `/metrics`; body limit, timeouts, certificate reload, graceful shutdown.
//!
//! [`serve`] runs a [`Server`] until SIGTERM or SIGINT; `roce webhook` calls it.

#![warn(clippy::too_many_lines)]

pub mod admission;
mod metrics;
pub mod profiles;
mod server;
mod tls;

pub use admission::OnError;
pub use server::{Config, Server};

/// Serve `config` until SIGTERM or SIGINT (Ctrl-C), then shut down gracefully.
///
/// ```no_run
/// use roce_webhook::{serve, Config};
/// let mut config = Config::new("0.0.0.0:8443".parse().unwrap(), "tls.crt".into(), "tls.key".into());
/// config.profiles = Some("/etc/roce/profiles".into());
/// serve(config).unwrap();
/// ```
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
        // Install the handlers before `bind` logs "listening": a SIGTERM that arrives between the log and the
        // first poll of a lazily installed handler would kill the process with the default action.
        let stop = shutdown_signal();
        let server = Server::bind(config).await?;
        server.run(stop).await;
        Ok(())
    })
}

/// A future that resolves on SIGTERM or SIGINT, with both handlers installed when this returns.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            (Ok(mut term), Err(_)) => {
                term.recv().await;
            }
            (Err(_), _) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}
