//! `roce webhook` as a process: it starts with a certificate made here, logs where it listens as JSON on
//! stderr, and on SIGTERM shuts down gracefully and exits 0. (The HTTP behaviour is tested in
//! crates/roce-webhook/tests/server.rs.)

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_stops_the_webhook_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.signing_key.serialize_pem()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args(["webhook", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first}"));
    assert_eq!(v["event"], "listening", "{first}");
    assert!(
        v["addr"].as_str().unwrap().starts_with("127.0.0.1:"),
        "{first}"
    );
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let started = Instant::now();
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit}: {rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("\"shutting down\"")),
        "{rest:?}"
    );
    assert!(rest.iter().any(|l| l.contains("\"stopped\"")), "{rest:?}");
}

#[test]
fn a_certificate_that_does_not_load_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args(["webhook", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&bad)
        .arg("--tls-key")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.pem"), "{err}");
}

#[test]
fn roce_hands_webhook_over_to_roce_webhook_and_says_so_when_it_is_missing() {
    // Alone in a directory, with nothing on PATH: `roce webhook` cannot find the server.
    let dir = tempfile::tempdir().unwrap();
    let roce = dir.path().join("roce");
    copy_executable(env!("CARGO_BIN_EXE_roce"), &roce);
    let args = ["webhook", "--tls-cert", "c.pem", "--tls-key", "k.pem"];
    let out = Command::new(&roce)
        .args(args)
        .env("PATH", dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot start roce-webhook"), "{err}");
    assert!(err.contains("cargo install"), "{err}");

    // Next to it, the server runs with the same arguments: its own error names the certificate file.
    copy_executable(
        env!("CARGO_BIN_EXE_roce-webhook"),
        &dir.path().join("roce-webhook"),
    );
    let out = Command::new(&roce)
        .args(args)
        .current_dir(dir.path())
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("c.pem"), "{err}");
    assert!(!err.contains("cannot start roce-webhook"), "{err}");

    // Argument errors are still roce's own (clap's usage error, exit 2), before any hand-over.
    let out = Command::new(&roce).args(["webhook"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: roce webhook"));
}

/// Copies an executable with `cp`, so that the descriptor open for writing it lives in that process only:
/// opened here, a process another test thread spawns at that moment could hold it until its exec, and
/// running the copy would fail with ETXTBSY ("Text file busy").
fn copy_executable(from: &str, to: &Path) {
    let status = Command::new("cp").arg(from).arg(to).status().unwrap();
    assert!(status.success(), "cp {from} {}: {status}", to.display());
}
