//! A bounded load test of `roce webhook` on localhost (not a timed test; run `bench/webhook-load`).
//!
//! Starts the real server (HTTPS, a fresh self-signed certificate) in this process on its own 2-thread
//! runtime, then drives it open-loop from `--connections` keep-alive HTTPS connections at `--rate`
//! requests/s for `--seconds`, every request a labelled Pod that gets a JSONPatch (the most expensive
//! path: parse, apply, diff). Latency is measured from each request's *scheduled* send time, so a server
//! that falls behind is charged for the queueing (no coordinated omission). tokio's timer wakes a sleeping
//! client up to ~1 ms late; the latencies are also reported with that lag taken off (a request that waited
//! for the previous answer on its connection is still charged from its scheduled time).
//!
//! Usage: webhook-load [--rate N] [--seconds S] [--connections C]

use std::time::{Duration, Instant};

use hyper::body::Bytes;
use roce_webhook::{Config, Server};
use serde_json::json;

#[path = "webhook_client.rs"]
mod client;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn review() -> Vec<u8> {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "training",
            "operation": "CREATE",
            "userInfo": {"username": "admin"},
            "object": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "nccl-0", "namespace": "training",
                             "labels": {"app": "nccl-tests", "roce.dev/profile": "coreweave/gb300-roce"}},
                "spec": {
                    "containers": [{
                        "name": "main",
                        "image": "ghcr.io/coreweave/nccl-tests:12.8",
                        "command": ["all_reduce_perf", "-b", "8", "-e", "8G"],
                        "env": [{"name": "MY_VAR", "value": "1"}],
                        "resources": {"limits": {"memory": "64Gi"}, "requests": {"cpu": "8"}},
                        "terminationMessagePath": "/dev/termination-log",
                        "volumeMounts": [{"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]
                    }],
                    "restartPolicy": "Never",
                    "volumes": [{"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
                }
            }
        }
    })
    .to_string()
    .into_bytes()
}

fn main() {
    let direct = arg("--direct", 0);
    if direct > 0 {
        // The review alone, no HTTP or TLS: the CPU cost of one patched Pod.
        let profiles = roce_webhook::profiles::Profiles::new(None);
        let body = review();
        let _ = roce_webhook::admission::review(&body, &profiles, roce_webhook::OnError::Deny);
        let t = Instant::now();
        for _ in 0..direct {
            let r = roce_webhook::admission::review(&body, &profiles, roce_webhook::OnError::Deny)
                .unwrap();
            assert_eq!(r.outcome, roce_webhook::admission::Outcome::Patched);
        }
        let review_us = t.elapsed().as_secs_f64() * 1e6 / direct as f64;
        // Its parts, and the text path (`roce apply` on the object as YAML, read back) for comparison.
        let obj: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let object = &obj["request"]["object"];
        let plan = roce_render::plan::lower(
            &roce_model::load(
                roce_model::builtin::source("coreweave/gb300-roce").unwrap(),
                &roce_model::BuiltinsOnly,
            )
            .profile
            .unwrap(),
        );
        let opts = roce_render::apply::ApplyOptions::default();
        let per = |f: &mut dyn FnMut()| {
            let t = Instant::now();
            for _ in 0..200 {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / 200.0
        };
        let wired = roce_render::apply::apply_object("o", object, &plan, &opts)
            .unwrap()
            .object;
        let text = roce_render::apply::object_text(object);
        let mut out = String::new();
        println!(
            "apply_object: {:.1} µs",
            per(&mut || {
                roce_render::apply::apply_object("o", object, &plan, &opts).unwrap();
            })
        );
        println!(
            "diff: {:.1} µs",
            per(&mut || {
                json_patch::diff(object, &wired);
            })
        );
        println!(
            "text path, apply: {:.1} µs",
            per(&mut || {
                out = roce_render::apply::apply(
                    &roce_model::Source::new("o", text.clone()),
                    &plan,
                    &opts,
                )
                .unwrap()
                .text;
            })
        );
        println!(
            "text path, reading the output back: {:.1} µs",
            per(&mut || {
                let _: Vec<serde_json::Value> = serde_saphyr::from_multiple(&out).unwrap();
            })
        );
        println!("review alone: {review_us:.1} µs per patched Pod ({direct} reviews)");
        return;
    }
    let rate = arg("--rate", 1000).max(1);
    let seconds = arg("--seconds", 5).max(1);
    let connections = arg("--connections", 16).max(1);

    let dir = tempfile::tempdir().expect("tempdir");
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("rcgen");
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.signing_key.serialize_pem()).unwrap();
    let mut config = Config::new("127.0.0.1:0".parse().unwrap(), cert, key);
    config.log = false;

    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = server_rt.block_on(Server::bind(config)).expect("bind");
    let addr = server.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server_task = server_rt.spawn(server.run(async {
        let _ = stop_rx.await;
    }));

    let client = client::client_config(&[ck.cert.der().clone()]);
    let body = Bytes::from(review());
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let total = rate * seconds;
    let (lat, late, errors, wall) = client_rt.block_on(async move {
        // Warm up: one request per connection (handshake, profile cache).
        let mut senders = Vec::new();
        for _ in 0..connections {
            let conn = client::connect(addr, client.clone(), Duration::from_secs(10))
                .await
                .unwrap();
            senders.push(conn.send);
        }
        let start = Instant::now() + Duration::from_millis(200);
        let interval = Duration::from_secs_f64(1.0 / rate as f64);
        let mut tasks = Vec::new();
        for (c, mut send) in senders.into_iter().enumerate() {
            let body = body.clone();
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut late = Vec::new();
                let mut errors = 0u64;
                let mut i = c as u64;
                while i < total {
                    let due = start + interval.mul_f64(i as f64);
                    // tokio's timer has a 1 ms tick, so a sleep ends up to ~1 ms after `due`; that lag is
                    // the client's, and is also reported subtracted. A request sent late because the
                    // previous answer on this connection came late is charged in full either way.
                    let slept = Instant::now() < due;
                    tokio::time::sleep_until(due.into()).await;
                    let lag = if slept { due.elapsed() } else { Duration::ZERO };
                    match client::request(&mut send, "POST", "/mutate", body.clone()).await {
                        Ok((200, b)) => {
                            if b.windows(9).any(|w| w == b"JSONPatch") {
                                let l = due.elapsed();
                                lat.push(l);
                                late.push(l - lag);
                            } else {
                                errors += 1;
                            }
                        }
                        _ => errors += 1,
                    }
                    i += connections;
                }
                (lat, late, errors)
            }));
        }
        let mut all = Vec::new();
        let mut all_late = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (l, k, e) = t.await.unwrap();
            all.extend(l);
            all_late.extend(k);
            errors += e;
        }
        (all, all_late, errors, start.elapsed())
    });
    let _ = stop_tx.send(());
    let _ = server_rt.block_on(server_task);

    let pct = |lat: &mut Vec<Duration>, p: f64| -> f64 {
        lat.sort();
        client::quantile_ms(lat, p)
    };
    let (mut lat, mut late) = (lat, late);
    let ok = lat.len() as f64;
    println!(
        "target {rate} req/s for {seconds} s over {connections} connections: {} ok, {errors} errors, \
         achieved {:.0} req/s; latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         less the client timer's lag: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        lat.len(),
        ok / wall.as_secs_f64(),
        pct(&mut lat, 0.50),
        pct(&mut lat, 0.90),
        pct(&mut lat, 0.99),
        pct(&mut lat, 1.0),
        pct(&mut late, 0.50),
        pct(&mut late, 0.90),
        pct(&mut late, 0.99),
        pct(&mut late, 1.0)
    );
}
