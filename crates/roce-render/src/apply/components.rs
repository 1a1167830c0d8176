//! The main container a Dynamo component's own fields make. A `v1alpha1` DynamoGraphDeployment service
//! gives its container env, resources and claims beside `extraPodSpec`, and the operator copies them into
//! the main container it builds (ai-dynamo/dynamo b592269304c49ced5e138dfb43602c06a11ec4f8,
//! `deploy/cloud/operator/internal/dynamo/graph.go`: `container.Env = MergeEnvs(container.Env,
//! component.Envs)`, the service's variables replacing the container's of the same name; then
//! `GetResourcesConfig(component.Resources)` in `controller_common/resource.go`: `limits.cpu`, `memory`,
//! `gpu` (as `nvidia.com/gpu`, or `gpuType`) and `custom`, `requests.cpu`, `memory` and `custom`, copied
//! over the container's, and `claims` appended to its `resources.claims`).
//!
//! Lint reads the merged container; `roce apply` leaves the document as it is.

use roce_model::plumbing::tree::{Entry, Node, Scalar, Value};
use roce_model::source::{Origin, Spanned};

/// Copy each service's `envs` and `resources` into its `extraPodSpec.mainContainer`.
pub(super) fn merge_component_fields(doc: &mut Node) {
    let Some(services) = get_mut(doc, "spec").and_then(|s| get_mut(s, "services")) else {
        return;
    };
    let Value::Map(services) = &mut services.value else {
        return;
    };
    for service in services.iter_mut().map(|e| &mut e.node) {
        let Value::Map(fields) = &mut service.value else {
            continue;
        };
        let envs = field(fields, "envs");
        let resources = field(fields, "resources");
        let Some(main) = fields
            .iter_mut()
            .find(|e| e.key.value == "extraPodSpec")
            .and_then(|e| get_mut(&mut e.node, "mainContainer"))
            .filter(|m| matches!(m.value, Value::Map(_)))
        else {
            continue;
        };
        if let Some(envs) = envs {
            merge_envs(main, &envs);
        }
        if let Some(resources) = resources {
            merge_resources(main, &resources);
        }
    }
}

fn field(fields: &[Entry], key: &str) -> Option<Node> {
    fields
        .iter()
        .find(|e| e.key.value == key)
        .map(|e| e.node.clone())
}

fn get_mut<'n>(node: &'n mut Node, key: &str) -> Option<&'n mut Node> {
    match &mut node.value {
        Value::Map(entries) => entries
            .iter_mut()
            .find(|e| e.key.value == key)
            .map(|e| &mut e.node),
        _ => None,
    }
}

fn get<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    match &node.value {
        Value::Map(entries) => entries.iter().find(|e| e.key.value == key).map(|e| &e.node),
        _ => None,
    }
}

/// The value of `key` in the mapping `node`, put there (empty, at `at`) where it is missing.
fn entry_mut<'n>(node: &'n mut Node, key: &str, empty: Value, at: Origin) -> &'n mut Node {
    let Value::Map(entries) = &mut node.value else {
        unreachable!("only mappings are given")
    };
    let i = match entries.iter().position(|e| e.key.value == key) {
        Some(i) => i,
        None => {
            entries.push(Entry {
                key: Spanned::new(key.to_string(), at),
                node: Node::new(empty, at),
            });
            entries.len() - 1
        }
    };
    &mut entries[i].node
}

/// The service's variables over the container's: one of the same name is replaced, the others appended.
fn merge_envs(main: &mut Node, envs: &Node) {
    let Value::Seq(items) = &envs.value else {
        return;
    };
    let env = entry_mut(main, "env", Value::Seq(Vec::new()), envs.origin);
    let Value::Seq(have) = &mut env.value else {
        return;
    };
    for item in items {
        let name = get(item, "name").and_then(text);
        match have
            .iter_mut()
            .find(|h| name.is_some() && get(h, "name").and_then(text) == name)
        {
            Some(h) => *h = item.clone(),
            None => have.push(item.clone()),
        }
    }
}

fn text(node: &Node) -> Option<&str> {
    match &node.value {
        Value::Scalar(Scalar::Str(s)) => Some(s),
        _ => None,
    }
}

/// The service's `resources` over the container's, as `GetResourcesConfig` writes them.
fn merge_resources(main: &mut Node, resources: &Node) {
    if !matches!(resources.value, Value::Map(_)) {
        return;
    }
    let at = resources.origin;
    let target = entry_mut(main, "resources", Value::Map(Vec::new()), at);
    if !matches!(target.value, Value::Map(_)) {
        return;
    }
    for (list, gpu) in [("limits", true), ("requests", false)] {
        let Some(from) = get(resources, list).filter(|f| matches!(f.value, Value::Map(_))) else {
            continue;
        };
        let mut copied: Vec<(String, Node)> = Vec::new();
        for name in ["cpu", "memory"] {
            if let Some(q) = get(from, name) {
                copied.push((name.to_string(), q.clone()));
            }
        }
        if gpu && let Some(q) = get(from, "gpu") {
            let name = get(from, "gpuType")
                .and_then(text)
                .filter(|t| !t.is_empty())
                .unwrap_or("nvidia.com/gpu");
            copied.push((name.to_string(), q.clone()));
        }
        if let Some(Value::Map(custom)) = get(from, "custom").map(|c| &c.value) {
            copied.extend(custom.iter().map(|e| (e.key.value.clone(), e.node.clone())));
        }
        if copied.is_empty() {
            continue;
        }
        let into = entry_mut(target, list, Value::Map(Vec::new()), from.origin);
        if !matches!(into.value, Value::Map(_)) {
            continue;
        }
        for (name, q) in copied {
            let at = q.origin;
            *entry_mut(into, &name, Value::Scalar(Scalar::Null), at) = q;
        }
    }
    if let Some(Value::Seq(claims)) = get(resources, "claims").map(|c| &c.value) {
        let into = entry_mut(target, "claims", Value::Seq(Vec::new()), at);
        if let Value::Seq(have) = &mut into.value {
            have.extend(claims.iter().cloned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_model::plumbing::manifest;
    use roce_model::source::{Source, Sources};

    fn merged(text: &str) -> Node {
        let mut sources = Sources::default();
        let id = sources.add(Source::new("t.yaml", text.to_string()));
        let mut doc = manifest::parse(text, id).unwrap().remove(0);
        merge_component_fields(&mut doc);
        doc
    }

    fn at<'n>(node: &'n Node, path: &[&str]) -> Option<&'n Node> {
        path.iter().try_fold(node, |n, k| get(n, k))
    }

    #[test]
    fn a_services_env_and_resources_reach_its_main_container() {
        let doc = merged(
            "kind: DynamoGraphDeployment\nspec:\n  services:\n    Decode:\n      envs:\n      - {name: A, value: service}\n      - {name: B, value: new}\n      resources:\n        limits: {gpu: \"4\", custom: {rdma/ib: \"1\"}}\n        requests: {cpu: \"8\", gpu: \"9\"}\n        claims:\n        - name: channel\n      extraPodSpec:\n        mainContainer:\n          image: x\n          env:\n          - {name: A, value: container}\n          - {name: C, value: kept}\n          resources:\n            limits: {memory: 1Gi}\n    Frontend:\n      envs:\n      - {name: A, value: service}\n",
        );
        let main = at(
            &doc,
            &[
                "spec",
                "services",
                "Decode",
                "extraPodSpec",
                "mainContainer",
            ],
        )
        .unwrap();
        let env: Vec<(&str, &str)> = match &get(main, "env").unwrap().value {
            Value::Seq(items) => items
                .iter()
                .map(|i| {
                    (
                        get(i, "name").and_then(text).unwrap(),
                        get(i, "value").and_then(text).unwrap(),
                    )
                })
                .collect(),
            _ => panic!("env is a list"),
        };
        assert_eq!(env, [("A", "service"), ("C", "kept"), ("B", "new")]);
        let limits = at(main, &["resources", "limits"]).unwrap();
        assert_eq!(get(limits, "nvidia.com/gpu").and_then(text), Some("4"));
        assert_eq!(get(limits, "rdma/ib").and_then(text), Some("1"));
        assert_eq!(get(limits, "memory").and_then(text), Some("1Gi"));
        let requests = at(main, &["resources", "requests"]).unwrap();
        assert_eq!(get(requests, "cpu").and_then(text), Some("8"));
        // The operator copies no GPU request (Kubernetes takes it from the limit).
        assert!(get(requests, "nvidia.com/gpu").is_none());
        assert!(
            matches!(&at(main, &["resources", "claims"]).unwrap().value, Value::Seq(c) if c.len() == 1)
        );
        // A service without a main container gets none.
        assert!(at(&doc, &["spec", "services", "Frontend", "extraPodSpec"]).is_none());
    }
}
