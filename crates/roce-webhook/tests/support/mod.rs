//! Shared by the webhook's integration tests: a self-signed certificate, the real server on 127.0.0.1:0,
//! an HTTPS client (hyper over tokio-rustls, trusting only the test's certificate), AdmissionReview
//! payloads, and the Python `jsonpatch` check.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use roce_webhook::{Config, Server};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

#[path = "../../../roce-render/tests/support/consumers.rs"]
pub(crate) mod consumers;

/// A self-signed certificate for `localhost` and 127.0.0.1: (cert PEM, key PEM, cert DER).
pub(crate) fn self_signed() -> (String, String, CertificateDer<'static>) {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .expect("rcgen");
    (
        ck.cert.pem(),
        ck.signing_key.serialize_pem(),
        ck.cert.der().clone(),
    )
}

/// A running server.
pub(crate) struct Running {
    pub addr: SocketAddr,
    pub ca: CertificateDer<'static>,
    pub dir: tempfile::TempDir,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub profiles: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    pub task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Ask the server to shut down and wait for it.
    pub(crate) async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("the server stops within 10 s")
                .expect("the server task");
        }
    }
}

/// Start the real server on 127.0.0.1:0; `tweak` adjusts the config (profiles dir, on-error, limits).
pub(crate) async fn start(tweak: impl FnOnce(&mut Config)) -> Running {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert_pem, key_pem, der) = self_signed();
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, cert_pem).unwrap();
    std::fs::write(&key, key_pem).unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    let mut config = Config::new("127.0.0.1:0".parse().unwrap(), cert.clone(), key.clone());
    config.profiles = Some(profiles.clone());
    config.poll_interval = Duration::from_millis(100);
    config.log = std::env::var_os("ROCE_WEBHOOK_TEST_LOG").is_some();
    tweak(&mut config);
    let server = Server::bind(config).await.expect("bind");
    let addr = server.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = rx.await;
    }));
    Running {
        addr,
        ca: der,
        dir,
        cert,
        key,
        profiles,
        stop: Some(tx),
        task: Some(task),
    }
}

/// A TLS client configuration that trusts only `ca`.
pub(crate) fn client_config(ca: &CertificateDer<'static>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).expect("a CA");
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

/// One HTTPS request on a fresh connection: (status, body).
///
/// # Errors
///
/// A message when the TLS handshake or the request fails.
pub(crate) async fn request(
    addr: SocketAddr,
    ca: &CertificateDer<'static>,
    method: &str,
    path: &str,
    body: Vec<u8>,
) -> Result<(u16, Vec<u8>), String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(client_config(ca));
    let tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = send.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, bytes.to_vec()))
}

/// POST an AdmissionReview for `object` to /mutate; the parsed response.
pub(crate) async fn mutate(run: &Running, object: &Value) -> Value {
    let (status, body) = request(
        run.addr,
        &run.ca,
        "POST",
        "/mutate",
        review(object).to_string().into_bytes(),
    )
    .await
    .expect("request");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).expect("JSON response");
    assert_eq!(v["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(v["kind"], "AdmissionReview");
    assert_eq!(v["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    v
}

/// An AdmissionReview (CREATE) as the API server sends it.
pub(crate) fn review(object: &Value) -> Value {
    let kind = object["kind"].as_str().unwrap_or("");
    let api = object["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api.split_once('/').unwrap_or(("", api));
    let resource = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": kind},
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": object["metadata"]["name"],
            "namespace": "training",
            "operation": "CREATE",
            "userInfo": {"username": "admin", "uid": "014fbff9a07c", "groups": ["system:authenticated"]},
            "object": object,
            "oldObject": null,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
        }
    })
}

/// A Pod as the API server hands it to a mutating webhook (defaults filled in).
pub(crate) fn pod(profile: Option<&str>) -> Value {
    let mut labels = json!({"app": "nccl-tests"});
    if let Some(p) = profile {
        labels["roce.dev/profile"] = json!(p);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "nccl-0", "namespace": "training", "labels": labels},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "ghcr.io/coreweave/nccl-tests:12.8",
                "command": ["all_reduce_perf", "-b", "8", "-e", "8G"],
                "env": [{"name": "MY_VAR", "value": "1"}],
                "resources": {"limits": {"memory": "64Gi"}, "requests": {"cpu": "8"}},
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]
            }],
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "enableServiceLinks": true,
            "priority": 0,
            "securityContext": {},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
        }
    })
}

/// A Deployment whose pod template carries the label (and the Deployment too, as the objectSelector needs).
pub(crate) fn deployment(profile: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "inference", "namespace": "training", "labels": {"app": "inference", "roce.dev/profile": profile}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "inference"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": {"app": "inference", "roce.dev/profile": profile}},
                "spec": {
                    "containers": [{
                        "name": "server",
                        "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                        "ports": [{"containerPort": 8000, "protocol": "TCP"}]
                    }],
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 30
                }
            }
        }
    })
}

/// The decoded JSONPatch of a response, if any.
pub(crate) fn patch_of(response: &Value) -> Option<Value> {
    use base64::Engine as _;
    let p = response["response"]["patch"].as_str()?;
    assert_eq!(response["response"]["patchType"], "JSONPatch");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(p)
        .expect("base64");
    Some(serde_json::from_slice(&bytes).expect("the patch is JSON"))
}

/// Apply `patch` to `object` with Python's `jsonpatch` (an independent RFC 6902 implementation).
/// `None` when it is not installed and not under CI (a loud skip); panics under CI.
pub(crate) fn python_jsonpatch(object: &Value, patch: &Value) -> Option<Value> {
    let python = consumers::repo_root().join(".venv/bin/python");
    let has = python.exists()
        && std::process::Command::new(&python)
            .args(["-c", "import jsonpatch"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !has {
        let msg = format!(
            "the webhook test needs Python `jsonpatch` in {}; run `.ci/install-tools`",
            python.display()
        );
        if consumers::tools_required() {
            panic!("{msg} (CI/ROCE_REQUIRE_TOOLS is set, so a missing tool is a failure)");
        }
        eprintln!(
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! SKIPPED: {msg}\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("object.json");
    let p = dir.path().join("patch.json");
    std::fs::write(&o, object.to_string()).unwrap();
    std::fs::write(&p, patch.to_string()).unwrap();
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import json, sys, jsonpatch\n\
             doc = json.load(open(sys.argv[1]))\n\
             patch = jsonpatch.JsonPatch(json.load(open(sys.argv[2])))\n\
             json.dump(patch.apply(doc), sys.stdout)",
        ])
        .arg(&o)
        .arg(&p)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "jsonpatch rejected the patch: {}\npatch: {patch:#}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("jsonpatch output"))
}

/// Write `text` to `path` atomically (as the kubelet swaps a ConfigMap's files).
pub(crate) fn write_atomic(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}
