//! The real webhook on 127.0.0.1:0 over HTTPS with a certificate made here, fed real AdmissionReview
//! payloads. Patches are applied with Python's `jsonpatch` (independent of the `json-patch` crate that made
//! them), and the patched objects must pass `kubernetes-validate --strict` and `roce lint` with no finding.

use std::time::Duration;

use roce_inspect::lint::{LintOptions, Linter};
use roce_model::{BuiltinsOnly, Source, builtin, load};
use roce_webhook::OnError;
use serde_json::{Value, json};

use crate::support::{self, consumers};

const PROFILE: &str = "coreweave/gb300-roce";

/// Apply the patch independently, validate the result for real, lint it against the profile, and check
/// that sending the patched object again gives no patch (already wired).
async fn check_wired(run: &support::Running, object: &Value, profile: &str) -> Value {
    let response = support::mutate(run, object).await;
    assert_eq!(response["response"]["allowed"], true, "{response:#}");
    let patch = support::patch_of(&response).expect("a patch for a labelled object");
    assert!(!patch.as_array().unwrap().is_empty());
    let Some(patched) = support::python_jsonpatch(object, &patch) else {
        return Value::Null;
    };
    let text = serde_json::to_string_pretty(&patched).unwrap();
    assert!(
        text.contains("IPC_LOCK") && text.contains("k8s.v1.cni.cncf.io/networks"),
        "{text}"
    );
    consumers::kubernetes_validate_strict(&text, consumers::K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load(builtin::source(profile).unwrap(), &BuiltinsOnly);
    let linter = Linter::new(loaded.profile.as_ref().unwrap(), LintOptions::default());
    let report = linter.lint(Source::new("patched.json", text.clone()));
    assert!(
        report.problems.is_empty(),
        "roce lint finds problems in the patched object:\n{}\n{text}",
        report
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(report.templates >= 1);
    // Idempotent: the wired object gets no patch.
    let again = support::mutate(run, &patched).await;
    assert_eq!(again["response"]["allowed"], true);
    assert!(
        support::patch_of(&again).is_none(),
        "a wired object is patched again: {again:#}"
    );
    patched
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labelled_pod_and_deployment_are_wired() {
    let run = support::start(|_| {}).await;
    let pod = check_wired(&run, &support::pod(Some(PROFILE)), PROFILE).await;
    if !pod.is_null() {
        // The user's fields survive.
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["env"][0], json!({"name": "MY_VAR", "value": "1"}));
        assert_eq!(c["resources"]["limits"]["memory"], "64Gi");
        assert_eq!(pod["spec"]["volumes"][0]["name"], "kube-api-access-x");
    }
    let dep = check_wired(&run, &support::deployment(PROFILE), PROFILE).await;
    if !dep.is_null() {
        assert_eq!(dep["spec"]["replicas"], 2);
        assert_eq!(
            dep["spec"]["template"]["metadata"]["annotations"]["roce.dev/profile"],
            PROFILE
        );
    }
    // A body past the size reviewed on the connection's worker goes to the blocking pool: same answer.
    let mut big = support::pod(Some(PROFILE));
    big["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": "x".repeat(40 << 10)});
    let big = check_wired(&run, &big, PROFILE).await;
    if !big.is_null() {
        assert_eq!(
            big["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .as_str()
                .map(str::len),
            Some(40 << 10)
        );
    }
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_built_in_wires_a_pod() {
    let run = support::start(|_| {}).await;
    for name in builtin::names() {
        let response = support::mutate(&run, &support::pod(Some(name))).await;
        assert_eq!(
            response["response"]["allowed"], true,
            "{name}: {response:#}"
        );
        let patch = support::patch_of(&response).unwrap_or_else(|| panic!("{name}: no patch"));
        if let Some(patched) = support::python_jsonpatch(&support::pod(Some(name)), &patch) {
            let again = support::mutate(&run, &patched).await;
            assert!(
                support::patch_of(&again).is_none(),
                "{name}: not idempotent: {again:#}"
            );
        }
    }
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlabelled_objects_are_untouched() {
    let run = support::start(|_| {}).await;
    for object in [
        support::pod(None),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}),
    ] {
        let response = support::mutate(&run, &object).await;
        assert_eq!(response["response"]["allowed"], true);
        assert!(response["response"].get("patch").is_none(), "{response:#}");
        assert!(response["response"].get("patchType").is_none());
    }
    // A DELETE has no object.
    let mut review = support::review(&support::pod(None));
    review["request"]["object"] = Value::Null;
    review["request"]["operation"] = json!("DELETE");
    let (status, body) = support::request(
        run.addr,
        &run.ca,
        "POST",
        "/mutate",
        review.to_string().into_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["response"]["allowed"], true);
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_or_invalid_profile_is_denied_or_warned() {
    let run = support::start(|_| {}).await;
    let response = support::mutate(&run, &support::pod(Some("no-such-profile"))).await;
    let r = &response["response"];
    assert_eq!(r["allowed"], false, "{response:#}");
    assert_eq!(r["status"]["code"], 400);
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-profile"),
        "{r:#}"
    );
    assert!(r.get("patch").is_none());
    // An invalid profile file: denied with its diagnostics.
    std::fs::write(
        run.profiles.join("broken.kdl"),
        "profile \"my-team/broken\" extends=\"coreweave/gb300-roce\" {\n    nccl ib-hca=\"mlx9\"\n}\n",
    )
    .unwrap();
    std::fs::write(run.profiles.join("syntax.kdl"), "profile \"x\" {\n").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    for name in ["broken", "syntax"] {
        let response = support::mutate(&run, &support::pod(Some(name))).await;
        let r = &response["response"];
        assert_eq!(r["allowed"], false, "{name}: {response:#}");
        let msg = r["status"]["message"].as_str().unwrap();
        assert!(
            msg.contains("has errors") && msg.contains("roce::"),
            "{name}: {msg}"
        );
    }
    run.stop().await;

    let run = support::start(|c| c.on_error = OnError::Allow).await;
    let response = support::mutate(&run, &support::pod(Some("no-such-profile"))).await;
    let r = &response["response"];
    assert_eq!(r["allowed"], true, "{response:#}");
    assert!(r.get("patch").is_none());
    let warnings = r["warnings"].as_array().expect("warnings");
    assert!(
        warnings[0].as_str().unwrap().contains("no-such-profile"),
        "{warnings:?}"
    );
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_directory_is_reread() {
    let run = support::start(|_| {}).await;
    let denied = support::mutate(&run, &support::pod(Some("my-team"))).await;
    assert_eq!(denied["response"]["allowed"], false);
    support::write_atomic(
        &run.profiles.join("my-team.kdl"),
        "profile \"my-team/gb300\" extends=\"coreweave/gb300-roce\" {\n    nccl debug=\"WARN\"\n}\n",
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = support::mutate(&run, &support::pod(Some("my-team"))).await;
    assert_eq!(response["response"]["allowed"], true, "{response:#}");
    let patch = support::patch_of(&response).expect("patched");
    assert!(patch.to_string().contains("NCCL_DEBUG"), "{patch}");
    // Changed: the new content is used.
    support::write_atomic(
        &run.profiles.join("my-team.kdl"),
        "profile \"my-team/gb300\" extends=\"coreweave/gb300-roce\" {\n    nccl debug=\"INFO\"\n}\n",
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = support::mutate(&run, &support::pod(Some("my-team"))).await;
    let patch = support::patch_of(&response).expect("patched");
    assert!(patch.to_string().contains("\"INFO\""), "{patch}");
    // Removed: unknown again.
    std::fs::remove_file(run.profiles.join("my-team.kdl")).unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let denied = support::mutate(&run, &support::pod(Some("my-team"))).await;
    assert_eq!(denied["response"]["allowed"], false);
    run.stop().await;
}

/// A changed profile file that does not load is refused: the version that loaded keeps serving (the soak,
/// bench/webhook-soak, found every object naming it denied instead), the refusal is counted, and the next
/// valid version is taken. A server that starts on the bad file has no version to keep: it denies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_change_is_refused_and_the_previous_version_serves() {
    let run = support::start(|_| {}).await;
    let file = run.profiles.join("my-team.kdl");
    let version = |debug: &str| {
        format!(
            "profile \"my-team/gb300\" extends=\"coreweave/gb300-roce\" {{\n    nccl debug=\"{debug}\"\n}}\n"
        )
    };
    let debug_of = |response: &Value| {
        assert_eq!(response["response"]["allowed"], true, "{response:#}");
        let patch = support::patch_of(response).expect("patched").to_string();
        ["WARN", "INFO", "TRACE"]
            .into_iter()
            .find(|d| patch.contains(&format!("\"{d}\"")))
            .unwrap_or("none")
    };
    support::write_atomic(&file, &version("WARN"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = support::mutate(&run, &support::pod(Some("my-team"))).await;
    assert_eq!(debug_of(&response), "WARN");
    for bad in [
        // A rule error, then a syntax error.
        "profile \"my-team/gb300\" extends=\"coreweave/gb300-roce\" {\n    nccl ib-hca=\"mlx9\" debug=\"INFO\"\n}\n",
        "profile \"my-team/gb300\" {\n",
    ] {
        support::write_atomic(&file, bad);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let response = support::mutate(&run, &support::pod(Some("my-team"))).await;
        assert_eq!(debug_of(&response), "WARN", "{bad}");
    }
    let (_, body) = support::request(run.addr, &run.ca, "GET", "/metrics", Vec::new())
        .await
        .unwrap();
    let metrics = String::from_utf8(body).unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l == "roce_webhook_profile_reload_errors_total 2"),
        "{metrics}"
    );
    support::write_atomic(&file, &version("TRACE"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = support::mutate(&run, &support::pod(Some("my-team"))).await;
    assert_eq!(debug_of(&response), "TRACE");
    run.stop().await;
    // Started on a bad file: nothing to keep.
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("my-team.kdl"),
        "profile \"my-team/gb300\" {\n",
    )
    .unwrap();
    let dir = bad.path().to_path_buf();
    let fresh = support::start(|c| c.profiles = Some(dir)).await;
    let denied = support::mutate(&fresh, &support::pod(Some("my-team"))).await;
    assert_eq!(denied["response"]["allowed"], false, "{denied:#}");
    fresh.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_get_4xx_the_server_keeps_serving_and_metrics_count() {
    let run = support::start(|c| c.body_limit = 64 * 1024).await;
    let send = |path: &'static str, body: Vec<u8>| {
        let (addr, ca) = (run.addr, run.ca.clone());
        async move {
            support::request(addr, &ca, "POST", path, body)
                .await
                .unwrap()
        }
    };
    let (s, _) = send("/mutate", b"not json {".to_vec()).await;
    assert_eq!(s, 400);
    let (s, _) = send("/mutate", br#"{"apiVersion":"v1","kind":"Pod"}"#.to_vec()).await;
    assert_eq!(s, 400);
    let (s, _) = send(
        "/mutate",
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}"#.to_vec(),
    )
    .await;
    assert_eq!(s, 400);
    let (s, _) = send("/mutate", vec![0xff, 0xfe, 0x00]).await;
    assert_eq!(s, 400);
    // Over the limit: a padded, otherwise valid review.
    let mut big = support::review(&support::pod(Some(PROFILE)));
    big["request"]["object"]["metadata"]["annotations"] = json!({"pad": "x".repeat(100 * 1024)});
    let (s, _) = send("/mutate", big.to_string().into_bytes()).await;
    assert_eq!(s, 413);
    let (s, _) = send("/nothing", Vec::new()).await;
    assert_eq!(s, 404);
    // Still serving.
    let ok = support::mutate(&run, &support::pod(Some(PROFILE))).await;
    assert!(support::patch_of(&ok).is_some());
    let denied = support::mutate(&run, &support::pod(Some("nope"))).await;
    assert_eq!(denied["response"]["allowed"], false);
    for path in ["/healthz", "/readyz"] {
        let (s, body) = support::request(run.addr, &run.ca, "GET", path, Vec::new())
            .await
            .unwrap();
        assert_eq!((s, body.as_slice()), (200, b"ok\n".as_slice()), "{path}");
    }
    let (s, body) = support::request(run.addr, &run.ca, "GET", "/metrics", Vec::new())
        .await
        .unwrap();
    assert_eq!(s, 200);
    let metrics = String::from_utf8(body).unwrap();
    for line in [
        "roce_webhook_requests_total{result=\"bad_request\"} 4",
        "roce_webhook_requests_total{result=\"too_large\"} 1",
        "roce_webhook_requests_total{result=\"patched\"} 1",
        "roce_webhook_requests_total{result=\"denied\"} 1",
        "roce_webhook_patches_total 1",
        "roce_webhook_denials_total 1",
        "roce_webhook_request_duration_seconds_count 7",
        "roce_webhook_request_duration_seconds_bucket{le=\"+Inf\"} 7",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing `{line}` in\n{metrics}"
        );
    }
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_is_reloaded_when_the_files_change() {
    let run = support::start(|_| {}).await;
    let (s, _) = support::request(run.addr, &run.ca, "GET", "/healthz", Vec::new())
        .await
        .unwrap();
    assert_eq!(s, 200);
    let (cert, key, der) = support::self_signed();
    support::write_atomic(&run.key, &key);
    support::write_atomic(&run.cert, &cert);
    let mut ok = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if support::request(run.addr, &der, "GET", "/healthz", Vec::new())
            .await
            .is_ok()
        {
            ok = true;
            break;
        }
    }
    assert!(ok, "the new certificate is not served");
    // The old one is not trusted any more by a client that only knows it.
    assert!(
        support::request(run.addr, &run.ca, "GET", "/healthz", Vec::new())
            .await
            .is_err()
    );
    let (_, body) = support::request(run.addr, &der, "GET", "/metrics", Vec::new())
        .await
        .unwrap();
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("roce_webhook_cert_reloads_total 1")
    );
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_in_flight_connections() {
    let run = support::start(|_| {}).await;
    // An open, idle keep-alive connection must not hold the shutdown up past the grace period.
    let tcp = tokio::net::TcpStream::connect(run.addr).await.unwrap();
    let started = std::time::Instant::now();
    run.stop().await;
    assert!(started.elapsed() < Duration::from_secs(10));
    drop(tcp);
}
