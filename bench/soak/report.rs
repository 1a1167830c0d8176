//! The soak's report: totals, a row per minute, the events and what each replica did with them, as
//! Markdown and as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::quantile_ms;
use crate::{Minute, Shared};

/// Counts of the replicas' log events (`{"event": …}` lines), over every process of the run.
pub(crate) fn log_events(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        for line in text.lines() {
            let key = match serde_json::from_str::<Value>(line) {
                Ok(v) => match (v.get("event"), v.get("level")) {
                    (Some(Value::String(ev)), _) => ev.clone(),
                    (_, Some(Value::String(l))) if l != "info" => format!("level {l}"),
                    _ => continue,
                },
                Err(_) => format!("not JSON: {}", line.chars().take(80).collect::<String>()),
            };
            *out.entry(key).or_default() += 1;
        }
    }
    out
}

/// One row of the per-minute table.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Row {
    pub(crate) minute: usize,
    pub(crate) sent: u64,
    pub(crate) answered: u64,
    pub(crate) failed: u64,
    pub(crate) retried: u64,
    pub(crate) wrong: u64,
    pub(crate) window_old: u64,
    pub(crate) window_new: u64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    /// Per replica: RSS MiB (min, max), fds (min, max), client connections (max), CPU ms per admission
    /// answered in the minute (both replicas).
    pub(crate) rss_mib: [(f64, f64); 2],
    pub(crate) fds: [(u64, u64); 2],
    pub(crate) conns: [i64; 2],
    pub(crate) restarted: bool,
    pub(crate) load1: f64,
    pub(crate) client_rss_mib: f64,
}

#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) wall: f64,
    pub(crate) sent: u64,
    pub(crate) answered: u64,
    pub(crate) failed: u64,
    pub(crate) retried: u64,
    pub(crate) wrong: u64,
    pub(crate) window_old: u64,
    pub(crate) window_new: u64,
    pub(crate) denied_expected: u64,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
    pub(crate) rows: Vec<Row>,
    pub(crate) load_before: [f64; 3],
    pub(crate) load_during: (f64, f64, f64),
    pub(crate) log_events: BTreeMap<String, u64>,
    /// Per replica: the longest time from a rotation to a fresh connection seeing the new certificate,
    /// and the probes that saw an older one more than the window after a rotation.
    pub(crate) cert_lag: [f64; 2],
    pub(crate) cert_stale: [u64; 2],
    pub(crate) cert_probes: [u64; 2],
    pub(crate) cpu_ms_per_admission: f64,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

impl Report {
    pub(crate) fn new(
        sh: &Shared,
        wall: f64,
        load_before: [f64; 3],
        log_events: BTreeMap<String, u64>,
    ) -> Report {
        let minutes = sh.minutes.lock().expect("minutes").clone();
        let samples = sh.samples.lock().expect("samples").clone();
        let instances = sh.instances.lock().expect("instances").clone();
        let sum = |f: fn(&Minute) -> u64| minutes.iter().map(f).sum::<u64>();
        let mut all: Vec<Duration> = minutes
            .iter()
            .flat_map(|m| {
                m.lat_us
                    .iter()
                    .map(|u| Duration::from_micros(u64::from(*u)))
            })
            .collect();
        all.sort();
        let mut rows = Vec::new();
        for (i, m) in minutes.iter().enumerate() {
            let mut lat: Vec<Duration> = m
                .lat_us
                .iter()
                .map(|u| Duration::from_micros(u64::from(*u)))
                .collect();
            lat.sort();
            let lo = i as f64 * 60.0;
            let in_min: Vec<_> = samples
                .iter()
                .filter(|s| s.t >= lo && s.t < lo + 60.0)
                .collect();
            let mut rss = [(f64::NAN, f64::NAN); 2];
            let mut fds = [(0, 0); 2];
            let mut conns = [0; 2];
            for slot in 0..2 {
                let xs: Vec<_> = in_min.iter().filter_map(|s| s.slots[slot]).collect();
                if xs.is_empty() {
                    continue;
                }
                rss[slot] = (
                    xs.iter()
                        .map(|x| mib(x.1.rss_kib))
                        .fold(f64::INFINITY, f64::min),
                    xs.iter().map(|x| mib(x.1.rss_kib)).fold(0.0, f64::max),
                );
                fds[slot] = (
                    xs.iter().map(|x| x.1.fds).min().unwrap_or(0),
                    xs.iter().map(|x| x.1.fds).max().unwrap_or(0),
                );
                conns[slot] = xs.iter().map(|x| x.2).max().unwrap_or(0);
            }
            let restarted = instances
                .iter()
                .any(|x| x.sigterm.is_some_and(|t| t >= lo && t < lo + 60.0));
            let load1 = in_min.last().map_or(f64::NAN, |s| s.load[0]);
            let client_rss_mib = in_min
                .iter()
                .filter_map(|s| s.client.map(|c| mib(c.rss_kib)))
                .fold(0.0, f64::max);
            rows.push(Row {
                minute: i,
                sent: m.sent,
                answered: m.answered,
                failed: m.failed,
                retried: m.retried,
                wrong: m.wrong,
                window_old: m.window_old,
                window_new: m.window_new,
                p50_ms: quantile_ms(&lat, 0.5),
                p99_ms: quantile_ms(&lat, 0.99),
                max_ms: quantile_ms(&lat, 1.0),
                rss_mib: rss,
                fds,
                conns,
                restarted,
                load1,
                client_rss_mib,
            });
        }
        let loads: Vec<f64> = samples.iter().map(|s| s.load[0]).collect();
        let load_during = (
            loads.iter().copied().fold(f64::INFINITY, f64::min),
            loads.iter().sum::<f64>() / loads.len().max(1) as f64,
            loads.iter().copied().fold(0.0, f64::max),
        );
        // Certificates: for every probe, the newest certificate it had to present (issued more than the
        // window before it) and whether it did; for every rotation, when each replica was first seen
        // with it.
        let leaves = sh.leaves.lock().expect("leaves").clone();
        let probes = sh.probes.lock().expect("probes").clone();
        let mut cert_lag = [0.0f64; 2];
        let mut cert_stale = [0u64; 2];
        let mut cert_probes = [0u64; 2];
        for p in &probes {
            cert_probes[p.slot] += 1;
            let due = leaves
                .iter()
                .rposition(|(t, _)| *t <= p.t - sh.opts.window)
                .unwrap_or(0);
            if p.cert.is_none_or(|c| c < due) {
                cert_stale[p.slot] += 1;
            }
        }
        for (k, (t, _)) in leaves.iter().enumerate().skip(1) {
            for (slot, lag) in cert_lag.iter_mut().enumerate() {
                if let Some(p) = probes
                    .iter()
                    .find(|p| p.slot == slot && p.t > *t && p.cert.is_some_and(|c| c >= k))
                {
                    *lag = lag.max(p.t - t);
                }
            }
        }
        // CPU of every replica process over the run, per admission answered.
        let ticks: u64 = instances
            .iter()
            .filter_map(|i| i.samples.last().map(|s| s.1.cpu_ticks))
            .sum();
        let answered = sum(|m| m.answered);
        Report {
            wall,
            sent: sum(|m| m.sent),
            answered,
            failed: sum(|m| m.failed),
            retried: sum(|m| m.retried),
            wrong: sum(|m| m.wrong),
            window_old: sum(|m| m.window_old),
            window_new: sum(|m| m.window_new),
            denied_expected: sum(|m| m.denied_expected),
            p50: quantile_ms(&all, 0.5),
            p99: quantile_ms(&all, 0.99),
            max: quantile_ms(&all, 1.0),
            rows,
            load_before,
            load_during,
            log_events,
            cert_lag,
            cert_stale,
            cert_probes,
            cpu_ms_per_admission: ticks as f64 * 10.0 / answered.max(1) as f64,
        }
    }

    pub(crate) fn markdown(&self, sh: &Shared) -> String {
        let o = &sh.opts;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## roce webhook soak{} (`bench/webhook-soak`)\n",
            if o.smoke { ", smoke run" } else { "" }
        );
        let _ = writeln!(
            s,
            "Run by hand, not by `cargo test` or `bench/run`: `bench/webhook-soak` is the full soak (it \
             writes this file and `soak-results.json` beside it); `bench/webhook-soak --smoke` is a one-minute \
             variant (200/s, every period divided by 5) that prints its report; both exit 1 on any failed or \
             wrong admission. Method (bench/soak/main.rs, model.rs): two `roce-webhook` processes ({} \
             build) on 127.0.0.1; an open-loop client behaving like the API server: keep-alive HTTPS \
             (HTTP/1.1) connections pooled per replica, each admission sent to one replica, a per-request \
             timeout, and one retry on the other replica when the connection fails or times out. Files are \
             swapped as the kubelet swaps a mounted Secret or ConfigMap (a new hidden directory, then one \
             rename of the `..data` symlink). Each certificate is a new key and leaf signed by the run's one \
             CA, which the client trusts. The profile directory holds `soak-other.kdl` (never changes) and \
             `soak-team.kdl`, rewritten alternately with a valid version (its `SOAK_GENERATION` env value \
             goes up, so the expected patch changes) and an invalid one (a rule error, then a syntax error), \
             which must be refused while the version before keeps serving. Replica A gets SIGTERM and is \
             started again on the same port; B runs the whole time, so a leak shows in it over the whole run. \
             **Every answer is checked**: its JSONPatch applied to the request object must give the object \
             `apply_object` (the webhook's library call) makes under a profile version the replica may have \
             in force, and `apply_object` was checked equal to `roce apply`'s own path (`apply` on the \
             object's YAML, read back) for every object and version; an object that needs no change must get \
             no patch. The mix: Pods and Deployments of 6 built-ins and both directory profiles, an already \
             wired Pod, unlabelled ones. For {} s after a directory change both the old and the new version \
             are accepted: a replica sees the change at its next poll (every {} s) and reloads on its own, \
             asynchronously; the report gives how late an old answer was actually seen. Latency is from each \
             admission's scheduled time (no coordinated omission), retry included.\n",
            o.build, o.window, o.poll
        );
        let _ = writeln!(
            s,
            "Machine: {}, shared with other engineers' builds. Load average (1 min) before the run {:.2}; \
             during it {:.2}–{:.2}, mean {:.2}.\n",
            crate::replicas::machine(),
            self.load_before[0],
            self.load_during.0,
            self.load_during.2,
            self.load_during.1
        );
        let _ = writeln!(
            s,
            "Settings: {} admissions/s for {} s; certificate re-issued every {} s, profile directory changed \
             every {} s (valid, then invalid), replica A sent SIGTERM and restarted every {} s; replicas \
             poll every {} s; client timeout {} ms, one retry on the other replica; old and new profile \
             versions both accepted for {} s after a change; /proc and /metrics sampled every {} s.\n",
            o.rate,
            o.seconds,
            o.cert_every,
            o.profiles_every,
            o.restart_every,
            o.poll,
            o.timeout_ms,
            o.window,
            o.sample_every
        );
        if let Some(at) = o.stall_at {
            let _ = writeln!(
                s,
                "Recovery test: both replicas frozen (SIGSTOP) for {} ms at {at} s.\n",
                o.stall_ms
            );
        }
        let _ = writeln!(s, "| admissions | count |\n|---|---|");
        let _ = writeln!(s, "| sent | {} |", self.sent);
        let _ = writeln!(
            s,
            "| answered | {} ({:.1}/s over {:.1} s) |",
            self.answered,
            self.answered as f64 / self.wall.max(1e-9),
            self.wall
        );
        let _ = writeln!(s, "| **failed** (after the retry) | **{}** |", self.failed);
        let _ = writeln!(s, "| retried on the other replica | {} |", self.retried);
        let _ = writeln!(s, "| **wrong** | **{}** |", self.wrong);
        let _ = writeln!(
            s,
            "| `soak-team` answers within a change window: old version / new | {} / {} |",
            self.window_old, self.window_new
        );
        let _ = writeln!(
            s,
            "| denied as expected (a replica started on an invalid file) | {} |",
            self.denied_expected
        );
        let _ = writeln!(
            s,
            "| latency p50 / p99 / max (from the scheduled time, retry included) | {:.2} / {:.2} / {:.2} ms |",
            self.p50, self.p99, self.max
        );
        let _ = writeln!(
            s,
            "| replica CPU per admission answered (both replicas, /proc) | {:.3} ms |\n",
            self.cpu_ms_per_admission
        );
        let _ = writeln!(
            s,
            "Per minute (RSS and fds: min–max of the samples in the minute; conns: the client's open \
             connections to the replica, max; ↻: replica A restarted in this minute):\n"
        );
        let _ = writeln!(
            s,
            "| min | sent | answered | failed | retried | wrong | p50 ms | p99 ms | max ms | A RSS MiB | A fds | A conns | B RSS MiB | B fds | B conns | load 1m |"
        );
        let _ = writeln!(
            s,
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "| {}{} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.1}–{:.1} | {}–{} | {} | {:.1}–{:.1} | {}–{} | {} | {:.2} |",
                r.minute,
                if r.restarted { " ↻" } else { "" },
                r.sent,
                r.answered,
                r.failed,
                r.retried,
                r.wrong,
                r.p50_ms,
                r.p99_ms,
                r.max_ms,
                r.rss_mib[0].0,
                r.rss_mib[0].1,
                r.fds[0].0,
                r.fds[0].1,
                r.conns[0],
                r.rss_mib[1].0,
                r.rss_mib[1].1,
                r.fds[1].0,
                r.fds[1].1,
                r.conns[1],
                r.load1
            );
        }
        let instances = sh.instances.lock().expect("instances").clone();
        let _ = writeln!(
            s,
            "\nReplica processes (RSS and fds: first and last sample; drained: requests sent to it before \
             SIGTERM that finished after it):\n"
        );
        let _ = writeln!(
            s,
            "| process | from s | ready ms | SIGTERM at s | in flight at SIGTERM | drained: answered / failed | exit after ms | exit | RSS MiB first → last | fds first → last | metrics at the end |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
        for (id, i) in instances.iter().enumerate() {
            let first = i.samples.first().map(|x| x.1);
            let last = i.samples.last().map(|x| x.1);
            let m = |k: &str| i.metrics.get(k).copied().unwrap_or(0);
            let _ = writeln!(
                s,
                "| {}{id} (pid {}) | {:.1} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} |",
                ["A", "B"][i.slot],
                i.pid,
                i.spawned,
                i.ready.map_or("–".to_string(), |r| format!(
                    "{:.0}",
                    (r - i.spawned) * 1000.0
                )),
                i.sigterm.map_or("–".to_string(), |t| format!("{t:.1}")),
                if i.sigterm.is_some() {
                    i.in_flight_at_sigterm.to_string()
                } else {
                    "–".to_string()
                },
                i.drained_answered,
                i.drained_failed,
                match (i.sigterm, i.exited) {
                    (Some(t), Some(e)) => format!("{:.0}", (e - t) * 1000.0),
                    _ => "–".to_string(),
                },
                i.exit.clone().unwrap_or_else(|| "–".to_string()),
                match (first, last) {
                    (Some(a), Some(b)) => format!("{:.1} → {:.1}", mib(a.rss_kib), mib(b.rss_kib)),
                    _ => "–".to_string(),
                },
                match (first, last) {
                    (Some(a), Some(b)) => format!("{} → {}", a.fds, b.fds),
                    _ => "–".to_string(),
                },
                format_args!(
                    "patched {}, unchanged {}, skipped {}, denied {}; profile reloads {}, refused {}; cert reloads {}, errors {}; TLS errors {}",
                    m("roce_webhook_requests_total{result=\"patched\"}"),
                    m("roce_webhook_requests_total{result=\"unchanged\"}"),
                    m("roce_webhook_requests_total{result=\"skipped\"}"),
                    m("roce_webhook_requests_total{result=\"denied\"}"),
                    m(crate::RELOADS),
                    m(crate::REFUSED),
                    m("roce_webhook_cert_reloads_total"),
                    m("roce_webhook_cert_reload_errors_total"),
                    m("roce_webhook_tls_handshake_errors_total"),
                )
            );
        }
        let changes = sh.changes.lock().expect("changes").clone();
        let _ = writeln!(
            s,
            "\nProfile directory changes (from each replica's /metrics before the change and {} s after it: \
             reloads / refused profile changes):\n",
            o.window
        );
        let _ = writeln!(s, "| at s | soak-team.kdl | A | B |\n|---|---|---|---|");
        for c in &changes {
            let cell = |x: &Result<(usize, usize, u64, u64), String>| match x {
                Ok((a, b, r, f)) if a == b => format!("{r} / {f}"),
                Ok((a, b, ..)) => format!("restarted ({a} → {b})"),
                Err(e) => format!("no metrics: {e}"),
            };
            let _ = writeln!(
                s,
                "| {:.1} | {} | {} | {} |",
                c.at,
                c.state,
                cell(&c.seen[0]),
                cell(&c.seen[1])
            );
        }
        let leaves = sh.leaves.lock().expect("leaves").len();
        let _ = writeln!(
            s,
            "\nCertificate rotations: {}. A fresh connection's certificate, probed every {} s: longest \
             from a rotation to a replica presenting the new certificate A {:.1} s, B {:.1} s; probes \
             presenting an older certificate than the last one issued {} s before: A {} of {}, B {} of {}.",
            leaves.saturating_sub(1),
            o.sample_every,
            self.cert_lag[0],
            self.cert_lag[1],
            o.window,
            self.cert_stale[0],
            self.cert_probes[0],
            self.cert_stale[1],
            self.cert_probes[1]
        );
        let _ = writeln!(
            s,
            "\nThe latest answer under a `soak-team` version already replaced: {:.2} s after the change \
             (the window is {} s).",
            *sh.old_after_change.lock().expect("lag"),
            o.window
        );
        let reasons = sh.retry_reasons.lock().expect("reasons").clone();
        if !reasons.is_empty() {
            let _ = writeln!(s, "\nWhy the first try failed (then retried):\n");
            let _ = writeln!(s, "| reason | count |\n|---|---|");
            for (k, v) in &reasons {
                let _ = writeln!(s, "| {} | {v} |", k.replace('|', "\\|"));
            }
        }
        let _ = writeln!(s, "\nThe replicas' log events, all processes:\n");
        let _ = writeln!(s, "| event | count |\n|---|---|");
        for (k, v) in &self.log_events {
            let _ = writeln!(s, "| {} | {v} |", k.replace('|', "\\|"));
        }
        for (title, list) in [
            (
                "Failed admissions (first 20)",
                sh.failures.lock().expect("f").clone(),
            ),
            (
                "Wrong admissions (first 20)",
                sh.wrongs.lock().expect("w").clone(),
            ),
        ] {
            if !list.is_empty() {
                let _ = writeln!(s, "\n{title}:\n");
                for l in list {
                    let _ = writeln!(s, "- {}", l.replace('\n', " "));
                }
            }
        }
        s
    }

    pub(crate) fn json(&self, sh: &Shared) -> Value {
        json!({
            "options": sh.opts,
            "machine": crate::replicas::machine(),
            "wall_s": self.wall,
            "totals": {
                "sent": self.sent, "answered": self.answered, "failed": self.failed,
                "retried": self.retried, "wrong": self.wrong,
                "window_old": self.window_old, "window_new": self.window_new,
                "denied_expected": self.denied_expected,
                "p50_ms": self.p50, "p99_ms": self.p99, "max_ms": self.max,
                "replica_cpu_ms_per_admission": self.cpu_ms_per_admission,
            },
            "load_before": self.load_before,
            "load_during": {"min": self.load_during.0, "mean": self.load_during.1, "max": self.load_during.2},
            "minutes": self.rows,
            "instances": *sh.instances.lock().expect("instances"),
            "changes": *sh.changes.lock().expect("changes"),
            "certificates": {
                "issued_at_s": sh.leaves.lock().expect("leaves").iter().map(|l| l.0).collect::<Vec<_>>(),
                "longest_lag_s": self.cert_lag, "stale_probes": self.cert_stale, "probes": self.cert_probes,
            },
            "probes": *sh.probes.lock().expect("probes"),
            "old_version_after_change_s": *sh.old_after_change.lock().expect("lag"),
            "retry_reasons": *sh.retry_reasons.lock().expect("reasons"),
            "log_events": self.log_events,
            "failures": *sh.failures.lock().expect("f"),
            "wrongs": *sh.wrongs.lock().expect("w"),
            "samples": *sh.samples.lock().expect("samples"),
        })
    }
}
