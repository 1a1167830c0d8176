//! The webhook's Prometheus metrics, in the text exposition format (version 0.0.4), hand-written: a few
//! atomic counters and one histogram need no metrics library.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The `result` label values of `roce_webhook_requests_total`, in exposition order.
pub(crate) const RESULTS: &[&str] = &[
    "patched",
    "unchanged",
    "skipped",
    "denied",
    "warned",
    "bad_request",
    "too_large",
    "timeout",
    "not_found",
];

/// Upper bounds (seconds) of the latency histogram's buckets.
pub(crate) const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Every counter the webhook keeps.
#[derive(Debug)]
pub(crate) struct Metrics {
    results: Vec<AtomicU64>,
    patches: AtomicU64,
    patch_ops: AtomicU64,
    denials: AtomicU64,
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    sum_micros: AtomicU64,
    profile_reloads: AtomicU64,
    profile_reload_errors: AtomicU64,
    cert_reloads: AtomicU64,
    cert_reload_errors: AtomicU64,
    tls_errors: AtomicU64,
    accept_errors: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            results: RESULTS.iter().map(|_| AtomicU64::new(0)).collect(),
            patches: AtomicU64::new(0),
            patch_ops: AtomicU64::new(0),
            denials: AtomicU64::new(0),
            buckets: BUCKETS.iter().map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_micros: AtomicU64::new(0),
            profile_reloads: AtomicU64::new(0),
            profile_reload_errors: AtomicU64::new(0),
            cert_reloads: AtomicU64::new(0),
            cert_reload_errors: AtomicU64::new(0),
            tls_errors: AtomicU64::new(0),
            accept_errors: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    /// Count a `/mutate` request that ended with `result` (one of [`RESULTS`]) after `took`.
    pub(crate) fn request(&self, result: &str, took: Duration) {
        if let Some(i) = RESULTS.iter().position(|r| *r == result) {
            self.results[i].fetch_add(1, Ordering::Relaxed);
        }
        let secs = took.as_secs_f64();
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Count a patch of `ops` operations.
    pub(crate) fn patch(&self, ops: usize) {
        self.patches.fetch_add(1, Ordering::Relaxed);
        self.patch_ops.fetch_add(ops as u64, Ordering::Relaxed);
    }

    /// Count a denial.
    pub(crate) fn denial(&self) {
        self.denials.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a change of the profile directory.
    pub(crate) fn profile_reload(&self) {
        self.profile_reloads.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a profile file read with errors (refused, or denying the objects that name it).
    pub(crate) fn profile_reload_error(&self) {
        self.profile_reload_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a certificate reload (`ok: false`: the new files did not load; the old certificate stays).
    pub(crate) fn cert_reload(&self, ok: bool) {
        if ok {
            self.cert_reloads.fetch_add(1, Ordering::Relaxed);
        } else {
            self.cert_reload_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count a failed TLS handshake.
    pub(crate) fn tls_error(&self) {
        self.tls_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a failed `accept` on the listening socket.
    pub(crate) fn accept_error(&self) {
        self.accept_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text.
    pub(crate) fn render(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut s = String::new();
        s.push_str(
            "# HELP roce_webhook_requests_total Admission requests on /mutate, by result.\n",
        );
        s.push_str("# TYPE roce_webhook_requests_total counter\n");
        for (i, r) in RESULTS.iter().enumerate() {
            let _ = writeln!(
                s,
                "roce_webhook_requests_total{{result=\"{r}\"}} {}",
                get(&self.results[i])
            );
        }
        let counter = |s: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        counter(
            &mut s,
            "roce_webhook_patches_total",
            "Responses that carried a JSONPatch.",
            get(&self.patches),
        );
        counter(
            &mut s,
            "roce_webhook_patch_operations_total",
            "JSONPatch operations sent.",
            get(&self.patch_ops),
        );
        counter(
            &mut s,
            "roce_webhook_denials_total",
            "Objects denied (unknown or invalid profile).",
            get(&self.denials),
        );
        counter(
            &mut s,
            "roce_webhook_profile_reloads_total",
            "Changes of the profile directory picked up.",
            get(&self.profile_reloads),
        );
        counter(
            &mut s,
            "roce_webhook_profile_reload_errors_total",
            "Profile files read with errors: a changed file that loaded before keeps its previous version.",
            get(&self.profile_reload_errors),
        );
        counter(
            &mut s,
            "roce_webhook_cert_reloads_total",
            "Certificate reloads.",
            get(&self.cert_reloads),
        );
        counter(
            &mut s,
            "roce_webhook_cert_reload_errors_total",
            "Certificate files that changed but did not load.",
            get(&self.cert_reload_errors),
        );
        counter(
            &mut s,
            "roce_webhook_tls_handshake_errors_total",
            "Failed or timed-out TLS handshakes.",
            get(&self.tls_errors),
        );
        counter(
            &mut s,
            "roce_webhook_accept_errors_total",
            "Failed accepts on the listening socket (out of file descriptors, memory or buffers: each is followed by a short pause).",
            get(&self.accept_errors),
        );
        s.push_str(
            "# HELP roce_webhook_request_duration_seconds Time to answer a /mutate request.\n",
        );
        s.push_str("# TYPE roce_webhook_request_duration_seconds histogram\n");
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                s,
                "roce_webhook_request_duration_seconds_bucket{{le=\"{le}\"}} {}",
                get(&self.buckets[i])
            );
        }
        let count = get(&self.count);
        let _ = writeln!(
            s,
            "roce_webhook_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            s,
            "roce_webhook_request_duration_seconds_sum {}",
            get(&self.sum_micros) as f64 / 1e6
        );
        let _ = writeln!(s, "roce_webhook_request_duration_seconds_count {count}");
        s
    }
}
