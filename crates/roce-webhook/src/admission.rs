//! `admission.k8s.io/v1` AdmissionReview in, AdmissionReview out: the webhook's logic, without HTTP.
//!
//! [`review`] finds the profile an object asks for (the `roce.dev/profile` label on the object itself or
//! on any pod template inside it), wires the object with the same code as `roce apply`
//! ([`roce_render::apply::apply`]), and answers with the RFC 6902 diff between the object as sent and the
//! object as applied ([`json_patch::diff`]). An object without the label is allowed untouched; an object
//! already wired gets no patch (apply is idempotent).

use std::collections::BTreeSet;

use base64::Engine as _;
use roce_render::apply::{ApplyOptions, apply_object};
use serde::Serialize;
use serde_json::Value;

use crate::profiles::{Lookup, Profiles, one_line};

/// The label that asks for a profile.
pub const PROFILE_LABEL: &str = "roce.dev/profile";

/// What to do when an object asks for a profile the webhook cannot apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// Deny the object (`allowed: false`, code 400, the diagnostics as the message).
    #[default]
    Deny,
    /// Allow it unchanged, with the diagnostics as `warnings`.
    Allow,
}

/// How a review ended, for the metrics and the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Wired: a non-empty patch.
    Patched,
    /// Labelled, but already wired: allowed with no patch.
    Unchanged,
    /// No label (or no object, e.g. DELETE): allowed with no patch.
    Skipped,
    /// The profile could not be applied: denied.
    Denied,
    /// The profile could not be applied: allowed unchanged with warnings (`--on-error allow`).
    Warned,
}

impl Outcome {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Patched => "patched",
            Outcome::Unchanged => "unchanged",
            Outcome::Skipped => "skipped",
            Outcome::Denied => "denied",
            Outcome::Warned => "warned",
        }
    }
}

/// An `admission.k8s.io/v1` AdmissionReview carrying a response: the body the webhook answers with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1`.
    #[serde(rename = "apiVersion")]
    pub api_version: &'static str,
    /// `AdmissionReview`.
    pub kind: &'static str,
    /// The answer.
    pub response: Response,
}

/// `response` of an AdmissionReview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// The request's uid.
    pub uid: String,
    /// Whether the object is admitted.
    pub allowed: bool,
    /// `JSONPatch` when there is a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// The RFC 6902 patch, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Warnings `kubectl` prints.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why the object is denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// `response.status` of a denial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The HTTP-like code (400).
    pub code: u16,
    /// `BadRequest`.
    pub reason: &'static str,
    /// roce's diagnostics, one a line.
    pub message: String,
}

/// A review's answer and what the log says about it.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The AdmissionReview response, ready to serialise.
    pub response: AdmissionReview,
    /// How it ended.
    pub outcome: Outcome,
    /// The request's uid, kind, namespace and name, for the log.
    pub uid: String,
    /// `kind` of the object.
    pub kind: String,
    /// `metadata.namespace` of the object (or of the request).
    pub namespace: String,
    /// `metadata.name` (or `generateName`) of the object.
    pub name: String,
    /// The profile asked for.
    pub profile: Option<String>,
    /// Operations in the patch.
    pub patch_ops: usize,
}

/// A body that is not an AdmissionReview the webhook understands (answered with HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadReview(pub String);

impl std::fmt::Display for BadReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Review one AdmissionReview body.
///
/// ```
/// use roce_webhook::admission::{self, Outcome};
/// use roce_webhook::{profiles::Profiles, OnError};
/// let pod = serde_json::json!({
///     "apiVersion": "v1", "kind": "Pod",
///     "metadata": {"name": "train", "labels": {"roce.dev/profile": "coreweave/gb300-roce"}},
///     "spec": {"containers": [{"name": "main", "image": "nccl-tests"}]},
/// });
/// let body = serde_json::json!({
///     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
///     "request": {"uid": "705ab4f5", "kind": {"group": "", "version": "v1", "kind": "Pod"},
///                 "operation": "CREATE", "namespace": "training", "object": pod},
/// });
/// let reviewed = admission::review(body.to_string().as_bytes(), &Profiles::new(None), OnError::Deny).unwrap();
/// assert_eq!(reviewed.outcome, Outcome::Patched);
/// assert!(reviewed.patch_ops > 0);
/// assert!(admission::review(b"not json", &Profiles::new(None), OnError::Deny).is_err());
/// ```
///
/// # Errors
///
/// [`BadReview`] when the body is not JSON, not `admission.k8s.io/v1` `AdmissionReview`, or has no
/// `request.uid`.
pub fn review(body: &[u8], profiles: &Profiles, on_error: OnError) -> Result<Reviewed, BadReview> {
    let review: Value = serde_json::from_slice(body)
        .map_err(|e| BadReview(format!("the body is not JSON: {e}")))?;
    let api = review.get("apiVersion").and_then(Value::as_str);
    let kind = review.get("kind").and_then(Value::as_str);
    if api != Some("admission.k8s.io/v1") || kind != Some("AdmissionReview") {
        return Err(BadReview(format!(
            "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got {} {}",
            api.unwrap_or("(none)"),
            kind.unwrap_or("(none)")
        )));
    }
    let request = review
        .get("request")
        .filter(|r| r.is_object())
        .ok_or_else(|| BadReview("the AdmissionReview has no request".to_string()))?;
    let uid = request
        .get("uid")
        .and_then(Value::as_str)
        .ok_or_else(|| BadReview("request.uid is missing".to_string()))?
        .to_string();
    let object = request.get("object").filter(|o| o.is_object());
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let mut reviewed = Reviewed {
        response: allowed(&uid, None, Vec::new()),
        outcome: Outcome::Skipped,
        uid: uid.clone(),
        kind: text(object.and_then(|o| o.get("kind"))),
        namespace: text(
            object
                .and_then(|o| o.pointer("/metadata/namespace"))
                .or_else(|| request.get("namespace")),
        ),
        name: text(
            object
                .and_then(|o| o.pointer("/metadata/name"))
                .or_else(|| object.and_then(|o| o.pointer("/metadata/generateName"))),
        ),
        profile: None,
        patch_ops: 0,
    };
    let Some(object) = object else {
        return Ok(reviewed);
    };
    let mut names = BTreeSet::new();
    profile_labels(object, &mut names);
    let name = match names.len() {
        0 => return Ok(reviewed),
        1 => names.into_iter().next().expect("one name"),
        _ => {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            reviewed.profile = Some(list.join(","));
            return Ok(fail(
                reviewed,
                on_error,
                vec![format!(
                    "the object's {PROFILE_LABEL} labels name different profiles: {}; one object takes one profile",
                    list.join(", ")
                )],
            ));
        }
    };
    reviewed.profile = Some(name.clone());
    let plan = match profiles.get(&name) {
        Lookup::Plan(plan) => plan,
        Lookup::Unknown => {
            return Ok(fail(
                reviewed,
                on_error,
                vec![format!(
                    "{PROFILE_LABEL}: no built-in profile and no file in the profile directory named `{name}`"
                )],
            ));
        }
        Lookup::Invalid(lines) => {
            let mut msgs = vec![format!("{PROFILE_LABEL}: the profile `{name}` has errors:")];
            msgs.extend(lines.iter().cloned());
            return Ok(fail(reviewed, on_error, msgs));
        }
    };
    match wire(object, &plan) {
        Ok((wired, notes)) => {
            let patch = json_patch::diff(object, &wired);
            reviewed.patch_ops = patch.0.len();
            if patch.0.is_empty() {
                reviewed.outcome = Outcome::Unchanged;
                reviewed.response = allowed(&uid, None, notes);
            } else {
                reviewed.outcome = Outcome::Patched;
                let bytes = serde_json::to_vec(&patch).expect("a patch serialises");
                reviewed.response = allowed(&uid, Some(&bytes), notes);
            }
            Ok(reviewed)
        }
        Err(msgs) => Ok(fail(reviewed, on_error, msgs)),
    }
}

/// The profile names in `roce.dev/profile` labels: the object's own, and those of every pod template in
/// it (any `metadata.labels` below the root: `spec.template`, `spec.jobTemplate.spec.template`, the
/// replica specs of MPIJob / PyTorchJob / JobSet / LeaderWorkerSet / RayCluster…).
pub(crate) fn profile_labels(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(|l| l.get(PROFILE_LABEL))
                .and_then(Value::as_str)
            {
                out.insert(name.to_string());
            }
            for (key, v) in map {
                if key != "metadata" {
                    profile_labels(v, out);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                profile_labels(v, out);
            }
        }
        _ => {}
    }
}

/// Wire `object` with `plan` (the decisions of `roce apply`, on the parsed object): the applied object and
/// the notes worth a warning.
fn wire(
    object: &Value,
    plan: &roce_render::plan::Plan,
) -> Result<(Value, Vec<String>), Vec<String>> {
    let applied = apply_object("request.object", object, plan, &ApplyOptions::default())
        .map_err(|problems| problems.iter().map(one_line).collect::<Vec<_>>())?;
    let mut notes = applied.notes;
    // The objects `roce apply` adds beside a workload (a ComputeDomain, a ResourceClaimTemplate) cannot be
    // created by an admission webhook.
    for extra in &applied.added {
        notes.push(format!(
            "the profile needs {} {} `{}`; the webhook cannot create it: create it with `roce apply` or `roce render`",
            extra.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            extra.get("kind").and_then(Value::as_str).unwrap_or(""),
            extra
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
        ));
    }
    Ok((applied.object, notes))
}

fn fail(mut reviewed: Reviewed, on_error: OnError, msgs: Vec<String>) -> Reviewed {
    match on_error {
        OnError::Deny => {
            reviewed.outcome = Outcome::Denied;
            let mut response = allowed(&reviewed.uid, None, Vec::new());
            response.response.allowed = false;
            response.response.status = Some(Status {
                code: 400,
                reason: "BadRequest",
                message: format!("roce: {}", msgs.join("\n")),
            });
            reviewed.response = response;
        }
        OnError::Allow => {
            reviewed.outcome = Outcome::Warned;
            let warnings = msgs
                .iter()
                .map(|m| format!("roce: not wired: {m}"))
                .collect();
            reviewed.response = allowed(&reviewed.uid, None, warnings);
        }
    }
    reviewed
}

fn allowed(uid: &str, patch: Option<&[u8]>, warnings: Vec<String>) -> AdmissionReview {
    AdmissionReview {
        api_version: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: Response {
            uid: uid.to_string(),
            allowed: true,
            patch_type: patch.map(|_| "JSONPatch"),
            patch: patch.map(|p| base64::engine::general_purpose::STANDARD.encode(p)),
            // The API server truncates long warnings; keep each to one line.
            warnings: warnings
                .iter()
                .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect(),
            status: None,
        },
    }
}
