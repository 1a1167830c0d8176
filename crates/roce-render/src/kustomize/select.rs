//! Which workloads a Component edits, and where their pod template is.

use super::{DEFAULT_KINDS, Selector};
use crate::RenderError;
use roce_model::names::is_dns_subdomain;

/// The shape of a kind: where its pod template sits. Kinds of one shape share a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `spec.template` (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job).
    Template,
    /// `spec.jobTemplate.spec.template`.
    CronJob,
    /// The object is the pod.
    Pod,
}

impl Shape {
    /// Path from the object to the pod template; empty for a Pod.
    pub(crate) fn template(self) -> &'static [&'static str] {
        match self {
            Shape::Template => &["spec", "template"],
            Shape::CronJob => &["spec", "jobTemplate", "spec", "template"],
            Shape::Pod => &[],
        }
    }

    /// The patch file for this shape, and the kind and group/version its body is written as
    /// (with a `target:`, kustomize ignores the patch's own kind and name).
    pub(crate) fn patch(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Shape::Template => ("patch-template.yaml", "apps/v1", "Deployment"),
            Shape::CronJob => ("patch-cronjob.yaml", "batch/v1", "CronJob"),
            Shape::Pod => ("patch-pod.yaml", "v1", "Pod"),
        }
    }

    /// The value of the marker label on workloads of this shape while the Component runs.
    pub(crate) fn slug(self) -> &'static str {
        match self {
            Shape::Template => "template",
            Shape::CronJob => "cronjob",
            Shape::Pod => "pod",
        }
    }

    /// A replacement field path (dot separated) below the pod template.
    pub(crate) fn field_path(self, rest: &str) -> String {
        let mut parts = self.template().to_vec();
        parts.push(rest);
        parts.join(".")
    }

    /// A JSON pointer below the pod template.
    pub(crate) fn pointer(self, rest: &str) -> String {
        let mut out = String::new();
        for p in self.template() {
            out.push('/');
            out.push_str(p);
        }
        out.push_str(rest);
        out
    }
}

/// A workload kind whose pod template this target knows.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Kind {
    pub(crate) name: &'static str,
    pub(crate) shape: Shape,
}

/// Every kind a selector may name. CRDs (MPIJob, PyTorchJob, …) are not here: kustomize merges a
/// strategic-merge patch into a CRD as a JSON merge patch, which replaces `containers` whole.
const KINDS: &[Kind] = &[
    Kind {
        name: "Deployment",
        shape: Shape::Template,
    },
    Kind {
        name: "StatefulSet",
        shape: Shape::Template,
    },
    Kind {
        name: "DaemonSet",
        shape: Shape::Template,
    },
    Kind {
        name: "ReplicaSet",
        shape: Shape::Template,
    },
    Kind {
        name: "Job",
        shape: Shape::Template,
    },
    Kind {
        name: "CronJob",
        shape: Shape::CronJob,
    },
    Kind {
        name: "Pod",
        shape: Shape::Pod,
    },
];

impl Kind {
    pub(crate) fn find(name: &str) -> Option<&'static Kind> {
        KINDS.iter().find(|k| k.name.eq_ignore_ascii_case(name))
    }
}

/// One resolved selector: a kind and optional name and label selector.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) kind: &'static Kind,
    pub(crate) name: Option<String>,
    pub(crate) label_selector: Option<String>,
}

/// Targets of one shape with the same name and labels: one `PatchTransformer` covers them, its
/// `target.kind` an alternation (patch targets are anchored regular expressions).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) shape: Shape,
    pub(crate) kinds: Vec<&'static str>,
    pub(crate) name: Option<String>,
    pub(crate) label_selector: Option<String>,
}

/// Group targets for the patches, in first-seen order.
pub(crate) fn groups(targets: &[Target]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for t in targets {
        let same = |g: &&mut Group| {
            g.shape == t.kind.shape && g.name == t.name && g.label_selector == t.label_selector
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.kinds.push(t.kind.name),
            None => out.push(Group {
                shape: t.kind.shape,
                kinds: vec![t.kind.name],
                name: t.name.clone(),
                label_selector: t.label_selector.clone(),
            }),
        }
    }
    out
}

/// Expand selectors to (kind, name, labels) targets; no selector means every default kind.
pub(crate) fn resolve(select: &[Selector]) -> Result<Vec<Target>, RenderError> {
    let defaults = || DEFAULT_KINDS.iter().filter_map(|k| Kind::find(k));
    if select.is_empty() {
        return Ok(defaults()
            .map(|kind| Target {
                kind,
                name: None,
                label_selector: None,
            })
            .collect());
    }
    let mut out: Vec<Target> = Vec::new();
    for s in select {
        if let Some(n) = &s.name
            && !is_dns_subdomain(n)
        {
            return Err(RenderError::option(
                "select",
                n,
                "a workload name is a DNS subdomain (lowercase letters, digits, '-', '.')",
            ));
        }
        if let Some(l) = &s.label_selector
            && (l.trim().is_empty() || l.chars().any(char::is_control))
        {
            return Err(RenderError::option(
                "select",
                l,
                "a label selector is one line of Kubernetes selector syntax (`app=trainer`)",
            ));
        }
        let kinds: Vec<&'static Kind> = match &s.kind {
            Some(k) => vec![Kind::find(k).ok_or_else(|| {
                RenderError::option(
                    "select",
                    k,
                    format!(
                        "the kustomize target knows the pod template of {} only; for MPIJob, PyTorchJob and other custom resources use `roce apply` (a strategic-merge patch would replace their container lists)",
                        KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?],
            None => defaults().collect(),
        };
        for kind in kinds {
            let t = Target {
                kind,
                name: s.name.clone(),
                label_selector: s.label_selector.clone(),
            };
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// Escape RE2 metacharacters so `s` matches itself literally (patch target names are regexes).
pub(crate) fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_escape_escapes_metacharacters() {
        assert_eq!(regex_escape("a.b/c-d"), "a\\.b/c-d");
        assert_eq!(regex_escape("(x)|[y]*"), "\\(x\\)\\|\\[y\\]\\*");
    }

    #[test]
    fn selectors_expand_and_validate() {
        let all = resolve(&[]).unwrap();
        let kinds: Vec<&str> = all.iter().map(|t| t.kind.name).collect();
        assert_eq!(kinds, DEFAULT_KINDS);

        let by_label = resolve(&[Selector {
            label_selector: Some("app=x".into()),
            ..Selector::default()
        }])
        .unwrap();
        assert_eq!(by_label.len(), DEFAULT_KINDS.len());
        assert!(
            by_label
                .iter()
                .all(|t| t.label_selector.as_deref() == Some("app=x"))
        );

        let twice = Selector {
            kind: Some("cronjob".into()),
            name: Some("a".into()),
            label_selector: None,
        };
        let one = resolve(&[twice.clone(), twice]).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].kind.name, "CronJob");

        let bad = |s: Selector| matches!(resolve(&[s]), Err(RenderError::Option { .. }));
        assert!(bad(Selector {
            kind: Some("MPIJob".into()),
            ..Selector::default()
        }));
        assert!(bad(Selector {
            name: Some("Not_A_Name".into()),
            ..Selector::default()
        }));
        assert!(bad(Selector {
            label_selector: Some(" ".into()),
            ..Selector::default()
        }));
    }

    #[test]
    fn targets_of_one_shape_share_a_group() {
        let g = groups(&resolve(&[]).unwrap());
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].kinds, DEFAULT_KINDS);

        let mixed = resolve(&[
            Selector {
                kind: Some("Deployment".into()),
                name: Some("a".into()),
                ..Selector::default()
            },
            Selector {
                kind: Some("Job".into()),
                name: Some("a".into()),
                ..Selector::default()
            },
            Selector {
                kind: Some("Job".into()),
                name: Some("b".into()),
                ..Selector::default()
            },
            Selector {
                kind: Some("Pod".into()),
                name: Some("a".into()),
                ..Selector::default()
            },
        ])
        .unwrap();
        let g = groups(&mixed);
        let summary: Vec<(Shape, Vec<&str>, Option<&str>)> = g
            .iter()
            .map(|g| (g.shape, g.kinds.clone(), g.name.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                (Shape::Template, vec!["Deployment", "Job"], Some("a")),
                (Shape::Template, vec!["Job"], Some("b")),
                (Shape::Pod, vec!["Pod"], Some("a")),
            ]
        );
    }

    #[test]
    fn paths_follow_the_pod_template() {
        assert_eq!(
            Shape::CronJob.field_path("metadata.annotations.[x]"),
            "spec.jobTemplate.spec.template.metadata.annotations.[x]"
        );
        assert_eq!(Shape::Pod.field_path("spec.containers"), "spec.containers");
        assert_eq!(
            Shape::Template.pointer("/metadata/annotations"),
            "/spec/template/metadata/annotations"
        );
        assert_eq!(Shape::Pod.pointer("/metadata"), "/metadata");
    }
}
