//! deploy/webhook: the built-in Kubernetes objects pass `kubernetes-validate --strict`; the cert-manager
//! objects (CRDs, for which kubernetes-validate has no schema) only parse and are checked for apiVersion,
//! kind and the fields the rest refers to; the pieces agree with each other (Service, webhook
//! clientConfig, container args, Certificate DNS names, the cainjector annotation); the ConfigMap's
//! profiles load; `kubectl kustomize` builds the directory.

use std::path::PathBuf;

use roce_model::{BuiltinsOnly, Source, load};
use serde_json::Value;

use crate::support::consumers;

fn dir() -> PathBuf {
    consumers::repo_root().join("deploy/webhook")
}

/// Every document of every manifest (not kustomization.yaml), with its file name.
fn documents() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| p.file_name().unwrap() != "kustomization.yaml")
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (i, d) in text.split("\n---\n").zip(docs) {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                i.to_string(),
                d,
            ));
        }
    }
    out
}

fn find<'a>(docs: &'a [(String, String, Value)], kind: &str) -> &'a Value {
    &docs
        .iter()
        .find(|(_, _, d)| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
        .2
}

#[test]
fn manifests_validate_and_agree() {
    let docs = documents();
    let mut builtin = String::new();
    for (file, text, doc) in &docs {
        let api = doc["apiVersion"].as_str().unwrap_or_default();
        if api.starts_with("cert-manager.io/") {
            assert_eq!(api, "cert-manager.io/v1", "{file}");
            assert!(
                matches!(doc["kind"].as_str(), Some("Issuer" | "Certificate")),
                "{file}: {doc}"
            );
            continue;
        }
        builtin.push_str("---\n");
        builtin.push_str(text.trim_start_matches("---\n"));
        builtin.push('\n');
    }
    consumers::kubernetes_validate_strict(&builtin, consumers::K8S_VERSIONS)
        .unwrap_or_else(|e| panic!("{e}"));

    let service = find(&docs, "Service");
    let mwc = find(&docs, "MutatingWebhookConfiguration");
    let deployment = find(&docs, "Deployment");
    let cert = find(&docs, "Certificate");
    let issuer = find(&docs, "Issuer");
    let ns = service["metadata"]["namespace"].as_str().unwrap();
    let svc = service["metadata"]["name"].as_str().unwrap();
    assert_eq!(service["spec"]["ports"][0]["port"], 443);
    let hooks = mwc["webhooks"].as_array().unwrap();
    assert!(!hooks.is_empty());
    for hook in hooks {
        let cc = &hook["clientConfig"]["service"];
        assert_eq!(
            (cc["name"].as_str(), cc["namespace"].as_str()),
            (Some(svc), Some(ns))
        );
        assert_eq!(cc["path"], "/mutate");
        assert_eq!(cc["port"], 443);
        assert_eq!(hook["sideEffects"], "None");
        assert_eq!(hook["failurePolicy"], "Fail");
        assert_eq!(hook["admissionReviewVersions"], serde_json::json!(["v1"]));
        assert!(hook["timeoutSeconds"].as_u64().is_some_and(|t| t <= 10));
        let sel = &hook["objectSelector"]["matchExpressions"][0];
        assert_eq!(
            (sel["key"].as_str(), sel["operator"].as_str()),
            (Some("roce.dev/profile"), Some("Exists"))
        );
        // The webhook's own namespace is never sent to it.
        let nsel = hook["namespaceSelector"]["matchExpressions"][0]["values"].to_string();
        assert!(nsel.contains(ns), "{nsel}");
    }
    assert_eq!(
        mwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as_str(),
        Some(format!("{ns}/{}", cert["metadata"]["name"].as_str().unwrap()).as_str())
    );
    assert_eq!(cert["metadata"]["namespace"].as_str(), Some(ns));
    assert_eq!(
        cert["spec"]["issuerRef"]["name"],
        issuer["metadata"]["name"]
    );
    let dns = cert["spec"]["dnsNames"].to_string();
    assert!(dns.contains(&format!("\"{svc}.{ns}.svc\"")), "{dns}");
    // The Deployment mounts the Certificate's Secret where its args look.
    let pod = &deployment["spec"]["template"]["spec"];
    let secret = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v.get("secret").is_some())
        .unwrap();
    assert_eq!(secret["secret"]["secretName"], cert["spec"]["secretName"]);
    let args = pod["containers"][0]["args"].to_string();
    assert!(
        args.contains("\"webhook\"") && args.contains("--tls-cert=/etc/roce/tls/tls.crt"),
        "{args}"
    );
    assert!(args.contains("--profiles=/etc/roce/profiles"), "{args}");

    // The ConfigMap's profiles load with no error (extends resolves to a built-in).
    let cm = find(&docs, "ConfigMap");
    for (key, text) in cm["data"].as_object().unwrap() {
        assert!(key.ends_with(".kdl") || key.ends_with(".yaml"), "{key}");
        let loaded = load(
            Source::new(key.clone(), text.as_str().unwrap()),
            &BuiltinsOnly,
        );
        assert!(!loaded.has_errors(), "{key}: {:?}", loaded.problems);
    }
}

#[test]
fn kustomize_builds_the_directory() {
    match consumers::kubectl_kustomize(&dir()) {
        Ok(Some(out)) => {
            for kind in [
                "Namespace",
                "Deployment",
                "Service",
                "MutatingWebhookConfiguration",
                "Certificate",
                "Issuer",
                "ConfigMap",
            ] {
                assert!(
                    out.contains(&format!("kind: {kind}\n")),
                    "{kind} missing:\n{out}"
                );
            }
        }
        Ok(None) => {}
        Err(e) => panic!("{e}"),
    }
}
