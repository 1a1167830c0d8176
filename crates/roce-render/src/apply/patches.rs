//! The pods a template patch makes. SGLang's RoleBasedGroup builds a role's leader and worker pods from its
//! `template` with the role's leader and worker patches merged over it, a strategic merge
//! (sgl-project/rbg `patchPodTemplate(role.Template, role.LeaderWorkerSet.PatchLeaderTemplate)`; `v1alpha2`
//! names them `leaderWorkerPattern.leaderTemplatePatch` / `workerTemplatePatch`, beside the `template`).
//! Lint reads the merged pods: what the patch alone sets (a leader's command) and what the template alone
//! sets (its devices) are judged together, where the pod has them.
//!
//! Only lint's parsed tree is merged; `roce apply` writes the template the patches are merged onto.

use roce_model::plumbing::tree::{Entry, Node, Scalar, Value};

use super::templates::{KINDS, MERGED, PATCHED, template_patch};

/// Replace every template patch of `doc` that has a `template` to merge onto (beside it, or beside the
/// mapping that holds it) with the merged pod template, and give a Dynamo service's main container the
/// service's own env and resources (`apply/components.rs`). The built-in workload kinds have no patches
/// and are left as they are.
pub fn merge_template_patches(doc: &mut Node) {
    let kind = match &doc.value {
        Value::Map(m) => m
            .iter()
            .find(|e| e.key.value == "kind")
            .map(|e| &e.node.value),
        _ => None,
    };
    if let Some(Value::Scalar(Scalar::Str(k))) = kind {
        if KINDS.contains(&k.as_str()) {
            return;
        }
        if k == "DynamoGraphDeployment" {
            super::components::merge_component_fields(doc);
        }
    }
    visit(doc, 0);
}

/// Deep enough for any CRD nesting seen (as the template search).
const DEPTH: usize = 24;

fn visit(node: &mut Node, depth: usize) {
    if depth > DEPTH {
        return;
    }
    match &mut node.value {
        Value::Seq(items) => {
            for item in items {
                visit(item, depth + 1);
            }
        }
        Value::Map(entries) => {
            // A pod spec and an object's metadata hold no templates: most of a document is left unseen.
            if entries.iter().any(|e| e.key.value == "containers") {
                return;
            }
            merge_here(entries);
            for e in entries.iter_mut().filter(|e| e.key.value != "metadata") {
                visit(&mut e.node, depth + 1);
            }
        }
        Value::Scalar(_) => {}
    }
}

/// Where `entries` hold a `template` and patches of it (their own, or one mapping down: RBG's
/// `leaderWorkerSet.patchLeaderTemplate`), merge each patch.
fn merge_here(entries: &mut [Entry]) {
    let patch = |e: &Entry| template_patch(&e.key.value) && matches!(e.node.value, Value::Map(_));
    let patched = entries
        .iter()
        .filter(|e| e.key.value != "template")
        .any(|e| {
            patch(e)
                || matches!(&e.node.value, Value::Map(child)
                if child.iter().any(patch) && !child.iter().any(|c| c.key.value == "template"))
        });
    if !patched {
        return;
    }
    let Some(base) = entries
        .iter()
        .find(|e| e.key.value == "template" && matches!(e.node.value, Value::Map(_)))
        .map(|e| e.node.clone())
    else {
        return;
    };
    let mut leader = false;
    let mut worker = false;
    let mut merge_patch = |e: &mut Entry| {
        if patch(e) {
            let lower = e.key.value.to_ascii_lowercase();
            leader |= lower.contains("leader");
            worker |= lower.contains("worker");
            let mut merged = merge(&base, &e.node);
            if let Value::Map(m) = &mut merged.value {
                m.push(marker(MERGED, &e.node));
            }
            e.node = merged;
        }
    };
    for e in entries.iter_mut() {
        if e.key.value == "template" {
            continue;
        }
        merge_patch(e);
        if let Value::Map(child) = &mut e.node.value
            && !child.iter().any(|c| c.key.value == "template")
        {
            child.iter_mut().for_each(&mut merge_patch);
        }
    }
    // A leader and a worker patch make every pod: the template alone is no pod.
    if leader
        && worker
        && let Some(t) = entries.iter_mut().find(|e| e.key.value == "template")
    {
        let mark = marker(PATCHED, &t.node);
        if let Value::Map(m) = &mut t.node.value {
            m.push(mark);
        }
    }
}

/// A marker entry at `at`'s place.
fn marker(key: &str, at: &Node) -> Entry {
    Entry {
        key: roce_model::source::Spanned {
            value: key.to_string(),
            origin: at.origin,
        },
        node: Node {
            value: Value::Scalar(Scalar::Bool(true)),
            origin: at.origin,
            content: None,
        },
    }
}

/// A strategic merge of `patch` onto `base`, as the API machinery merges a PodTemplateSpec: mappings key by
/// key, a `null` deletes, the lists Kubernetes gives a merge key merged item by item on it, every other
/// value replaced. `$`-directives are ignored.
fn merge(base: &Node, patch: &Node) -> Node {
    let (Value::Map(b), Value::Map(p)) = (&base.value, &patch.value) else {
        return patch.clone();
    };
    let mut out = b.clone();
    for pe in p.iter().filter(|e| !e.key.value.starts_with('$')) {
        let null = matches!(pe.node.value, Value::Scalar(Scalar::Null));
        match out.iter().position(|e| e.key.value == pe.key.value) {
            Some(i) if null => {
                out.remove(i);
            }
            Some(i) => out[i].node = merge_field(&pe.key.value, &out[i].node, &pe.node),
            None if null => {}
            None => out.push(pe.clone()),
        }
    }
    Node {
        value: Value::Map(out),
        origin: patch.origin,
        content: None,
    }
}

/// The merge key of the PodSpec and Container lists that have one (`patchMergeKey` in `k8s.io/api/core/v1`).
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "volumeMounts" | "volumeDevices" => "mountPath",
        "ports" => "containerPort",
        _ => return None,
    })
}

fn merge_field(field: &str, base: &Node, patch: &Node) -> Node {
    match (merge_key(field), &base.value, &patch.value) {
        (Some(key), Value::Seq(b), Value::Seq(p)) => {
            let id = |n: &Node| match &n.value {
                Value::Map(m) => {
                    m.iter()
                        .find(|e| e.key.value == key)
                        .and_then(|e| match &e.node.value {
                            Value::Scalar(s) => Some(format!("{s:?}")),
                            _ => None,
                        })
                }
                _ => None,
            };
            let mut out = b.clone();
            for item in p {
                match id(item).and_then(|k| out.iter().position(|o| id(o).as_ref() == Some(&k))) {
                    Some(i) => {
                        let merged = merge(&out[i], item);
                        out[i] = merged;
                    }
                    None => out.push(item.clone()),
                }
            }
            Node {
                value: Value::Seq(out),
                origin: patch.origin,
                content: None,
            }
        }
        _ => merge(base, patch),
    }
}

#[cfg(test)]
mod tests {
    use super::merge_template_patches;
    use crate::apply::templates::{Tree, at, discover};
    use roce_model::plumbing::manifest;
    use roce_model::plumbing::tree::Node;
    use roce_model::source::{Source, Sources};

    fn merged(text: &str) -> Node {
        let mut sources = Sources::default();
        let id = sources.add(Source::new("p.yaml", text.to_string()));
        let mut doc = manifest::parse(text, id).unwrap().remove(0);
        merge_template_patches(&mut doc);
        doc
    }

    fn names(node: &Node, key: &str) -> Vec<String> {
        node.get(key)
            .and_then(Tree::items)
            .unwrap_or(&[])
            .iter()
            .filter_map(|i| i.get("name").or(i.get("mountPath")).and_then(Tree::text))
            .map(str::to_string)
            .collect()
    }

    const RBG: &str = "\
apiVersion: workloads.x-k8s.io/v1alpha1
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roles:
  - name: decode
    leaderWorkerSet:
      patchLeaderTemplate:
        spec:
          nodeSelector: null
          containers:
          - name: engine
            env:
            - name: ROLE
              value: leader
            - name: NEW
              value: x
            volumeMounts:
            - name: other
              mountPath: /dev/shm
    template:
      spec:
        nodeSelector:
          pool: a
        containers:
        - name: engine
          image: e:1
          env:
          - name: ROLE
            value: any
          volumeMounts:
          - name: shm
            mountPath: /dev/shm
        - name: sidecar
          image: s:1
";

    #[test]
    fn a_patch_is_merged_as_the_api_machinery_merges_it() {
        let doc = merged(RBG);
        let (found, _) = discover(&doc).unwrap();
        // The leader (the merged patch) and the workers (the template, which no worker patch replaces).
        let paths: Vec<String> = found.iter().map(|t| t.label.clone()).collect();
        assert_eq!(found.len(), 2, "{paths:?}");
        let leader = found
            .iter()
            .find(|t| t.label.contains("patchLeaderTemplate"))
            .unwrap();
        let spec = at(&doc, &leader.path).unwrap().get("spec").unwrap();
        // Containers by name: the engine merged, the sidecar kept; env by name, replaced and appended;
        // mounts by path; `null` deletes.
        assert_eq!(names(spec, "containers"), ["engine", "sidecar"]);
        let engine = &spec.get("containers").and_then(Tree::items).unwrap()[0];
        assert_eq!(engine.get("image").and_then(Tree::text), Some("e:1"));
        assert_eq!(names(engine, "env"), ["ROLE", "NEW"]);
        let env = engine.get("env").and_then(Tree::items).unwrap();
        assert_eq!(env[0].get("value").and_then(Tree::text), Some("leader"));
        assert_eq!(names(engine, "volumeMounts"), ["other"]);
        assert!(spec.get("nodeSelector").is_none());
    }
}
