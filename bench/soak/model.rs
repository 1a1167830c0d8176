//! What every answer must be: the request objects, the versions the profile directory goes through, and
//! for each (object, version) the object `roce apply` makes, computed here with the library.
//!
//! The directory holds two files: `soak-other.kdl`, which never changes (a directory profile that must
//! keep serving through every reload), and `soak-team.kdl`, which is rewritten every profile period,
//! alternating a valid version (its `SOAK_GENERATION` env value goes up, so the expected patch changes)
//! and an invalid one (a rule error, or a syntax error). The requirement the answers are checked against:
//! an invalid change is refused and the replica keeps serving the version it had; a replica that starts
//! while the file is invalid has no earlier version, and denies.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use base64::Engine as _;
use roce_model::{BuiltinsOnly, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply, apply_object, object_text};
use roce_render::plan::Plan;
use serde_json::{Value, json};

/// The file stem of the profile that changes.
pub(crate) const TEAM: &str = "soak-team";
/// The file stem of the profile that does not.
pub(crate) const OTHER: &str = "soak-other";

/// A valid version of `soak-team.kdl`: generation `generation`.
pub(crate) fn team_text(generation: u32) -> String {
    format!(
        "profile \"soak/team\" extends=\"coreweave/gb300-roce\" {{\n    env {{\n        SOAK_GENERATION \"{generation}\"\n    }}\n}}\n"
    )
}

/// An invalid version of `soak-team.kdl`: alternately a rule error (an HCA name no rail has) and a KDL
/// syntax error.
pub(crate) fn bad_text(k: u32) -> String {
    if k.is_multiple_of(2) {
        format!(
            "profile \"soak/team\" extends=\"coreweave/gb300-roce\" {{\n    nccl ib-hca=\"mlx9\"\n    env {{\n        SOAK_GENERATION \"bad-{k}\"\n    }}\n}}\n"
        )
    } else {
        format!("profile \"soak/team\" {{\n    env {{ SOAK_GENERATION \"bad-{k}\"\n")
    }
}

/// `soak-other.kdl`.
pub(crate) fn other_text() -> String {
    "profile \"soak/other\" extends=\"aws/p5-efa\" {\n    env {\n        SOAK_OTHER \"1\"\n    }\n}\n"
        .to_string()
}

/// What the directory's `soak-team.kdl` holds after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirState {
    /// Valid, this generation.
    Good(u32),
    /// Invalid (the `k`th invalid version).
    Bad(u32),
}

/// A change of the directory, at `at` seconds into the run (taken just before the files were swapped).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DirEvent {
    pub(crate) at: f64,
    pub(crate) state: DirState,
}

/// What a replica answers for a `soak-team` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TeamState {
    /// Wired with this generation.
    Good(u32),
    /// Denied: the replica started on an invalid file and has no version to keep.
    Denied,
}

/// The state a replica reaches from the events it has seen, the first being the directory it read at
/// start: a valid version replaces the current one, an invalid one is refused (the current one stays;
/// with none, it denies).
fn fold(seen: &[DirEvent]) -> TeamState {
    let mut state = TeamState::Denied;
    for e in seen {
        if let DirState::Good(g) = e.state {
            state = TeamState::Good(g);
        }
    }
    state
}

/// Index of the last event at or before `t` (events[0] is at 0, before any replica starts).
fn last_at(events: &[DirEvent], t: f64) -> usize {
    events.iter().rposition(|e| e.at <= t).unwrap_or(0)
}

/// Every state a replica process may answer with for a request sent at `sent` and answered at `answered`:
/// it read the directory at start somewhere in [`spawned`, `ready`], and sees a change within `window`
/// seconds (its poll interval, plus the reload, plus slack). Newest state last.
pub(crate) fn team_states(
    events: &[DirEvent],
    spawned: f64,
    ready: f64,
    sent: f64,
    answered: f64,
    window: f64,
) -> Vec<TeamState> {
    let mut out: Vec<TeamState> = Vec::new();
    let (j0, j1) = (last_at(events, spawned), last_at(events, ready));
    let (i0, i1) = (last_at(events, sent - window), last_at(events, answered));
    for j in j0..=j1 {
        for i in i0.max(j)..=i1.max(j) {
            let s = fold(&events[j..=i]);
            out.retain(|x| *x != s);
            out.push(s);
        }
    }
    out
}

/// Which profile a request object names.
#[derive(Debug, Clone)]
pub(crate) enum Names {
    /// No label: allowed, no patch.
    Nothing,
    /// A built-in or `soak-other`: one expected object for the whole run.
    Fixed(Arc<Value>),
    /// `soak-team`: depends on the replica's state.
    Team,
}

/// One request object and its AdmissionReview body, with a fixed-width uid placeholder.
#[derive(Debug)]
pub(crate) struct Object {
    pub(crate) what: String,
    pub(crate) value: Value,
    pub(crate) names: Names,
    review: Vec<u8>,
    uid_at: usize,
}

const UID_PLACEHOLDER: &str = "00000000-0000-4000-8000-000000000000";

/// The request `i`'s uid (36 characters, as the API server's).
pub(crate) fn uid(i: u64) -> String {
    format!("50a50a50-0000-4000-8000-{i:012x}")
}

impl Object {
    /// The review body with `uid`.
    pub(crate) fn body(&self, uid: &str) -> Vec<u8> {
        let mut b = self.review.clone();
        b[self.uid_at..self.uid_at + uid.len()].copy_from_slice(uid.as_bytes());
        b
    }
}

/// The objects, and the expected `soak-team` answers per generation.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) objects: Vec<Object>,
    team: RwLock<HashMap<u32, Vec<Option<Arc<Value>>>>>,
    /// (object, base64 patch) → the object with the patch applied.
    applied: Mutex<HashMap<(usize, String), Arc<Value>>>,
}

/// What an allowed answer did to the object.
enum Got {
    Patched(Arc<Value>),
    Same,
}

/// What `roce apply` makes of `object` under `plan`: `apply_object` (what the webhook runs), checked once
/// against `apply` on the object's text read back (the `roce apply` command's path).
fn wired(what: &str, object: &Value, plan: &Plan) -> Value {
    let opts = ApplyOptions::default();
    let by_object = apply_object("request.object", object, plan, &opts)
        .unwrap_or_else(|p| panic!("{what}: apply_object refuses: {p:?}"));
    let by_text = apply(
        &Source::new("object.yaml", object_text(object)),
        plan,
        &opts,
    )
    .unwrap_or_else(|p| panic!("{what}: apply refuses: {p:?}"));
    let docs: Vec<Value> = serde_saphyr::from_multiple(&by_text.text)
        .unwrap_or_else(|e| panic!("{what}: apply's output does not read back: {e}"));
    assert_eq!(
        docs.last(),
        Some(&by_object.object),
        "{what}: apply_object and roce apply disagree"
    );
    by_object.object
}

/// Load and lower a profile as the webhook does (errors refuse it; warnings do not).
fn plan_of(source: Source) -> Result<Plan, String> {
    let loaded = load(source, &BuiltinsOnly);
    let errors: Vec<String> = loaded
        .problems
        .iter()
        .filter(|p| p.is_error())
        .map(|p| p.message.clone())
        .collect();
    match loaded.profile {
        Some(p) if errors.is_empty() => Ok(roce_render::plan::lower(&p)),
        _ => Err(errors.join("; ")),
    }
}

/// A profile file of the directory, named as the webhook names it.
fn file(stem: &str, text: String) -> Source {
    Source::new(format!("{stem}.kdl"), text)
}

fn builtin_plan(name: &str) -> Plan {
    plan_of(builtin::source(name).expect("a built-in")).expect("a built-in loads")
}

fn pod(name: &str, profile: Option<&str>) -> Value {
    let mut labels = json!({"app": "nccl-tests"});
    if let Some(p) = profile {
        labels["roce.dev/profile"] = json!(p);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "training", "labels": labels},
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

fn deployment(name: &str, profile: Option<&str>) -> Value {
    let mut labels = json!({"app": name});
    if let Some(p) = profile {
        labels["roce.dev/profile"] = json!(p);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "training", "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": labels},
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

/// An AdmissionReview (CREATE) for `object`, as the API server sends it, with the placeholder uid.
fn review(object: &Value) -> (Vec<u8>, usize) {
    let kind = object["kind"].as_str().unwrap_or("");
    let api = object["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api.split_once('/').unwrap_or(("", api));
    let resource = format!("{}s", kind.to_lowercase());
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": UID_PLACEHOLDER,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
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
    .to_string()
    .into_bytes();
    let at = body
        .windows(UID_PLACEHOLDER.len())
        .position(|w| w == UID_PLACEHOLDER.as_bytes())
        .expect("the uid");
    (body, at)
}

impl Model {
    /// The request mix: Pods and Deployments of several built-ins, of both directory profiles, an
    /// already-wired Pod (no patch), unlabelled objects (no patch).
    pub(crate) fn new() -> Model {
        let mut objects = Vec::new();
        let mut add = |what: &str, value: Value, names: Names| {
            let (review, uid_at) = review(&value);
            objects.push(Object {
                what: what.to_string(),
                value,
                names,
                review,
                uid_at,
            });
        };
        let other = plan_of(file(OTHER, other_text())).expect("soak-other loads");
        for (what, value, profile) in [
            (
                "Pod coreweave/gb300-roce",
                pod("nccl-0", Some("coreweave/gb300-roce")),
                "coreweave/gb300-roce",
            ),
            (
                "Deployment coreweave/gb300-roce",
                deployment("trainer", Some("coreweave/gb300-roce")),
                "coreweave/gb300-roce",
            ),
            (
                "Pod aws/p5-efa",
                pod("efa-0", Some("aws/p5-efa")),
                "aws/p5-efa",
            ),
            (
                "Deployment gcp/a3-ultra",
                deployment("serve", Some("gcp/a3-ultra")),
                "gcp/a3-ultra",
            ),
            (
                "Pod azure/ndv5-ib",
                pod("nd-0", Some("azure/ndv5-ib")),
                "azure/ndv5-ib",
            ),
            (
                "Deployment nebius/h100-ib",
                deployment("nebius", Some("nebius/h100-ib")),
                "nebius/h100-ib",
            ),
            (
                "Pod oci/h100-roce",
                pod("oci-0", Some("oci/h100-roce")),
                "oci/h100-roce",
            ),
        ] {
            let w = wired(what, &value, &builtin_plan(profile));
            add(what, value, Names::Fixed(Arc::new(w)));
        }
        let p = pod("other-0", Some(OTHER));
        let w = wired("Pod soak-other", &p, &other);
        add("Pod soak-other", p, Names::Fixed(Arc::new(w)));
        let d = deployment("other", Some(OTHER));
        let w = wired("Deployment soak-other", &d, &other);
        add("Deployment soak-other", d, Names::Fixed(Arc::new(w)));
        add("Pod soak-team", pod("team-0", Some(TEAM)), Names::Team);
        add(
            "Deployment soak-team",
            deployment("team", Some(TEAM)),
            Names::Team,
        );
        add("Pod soak-team (2)", pod("team-1", Some(TEAM)), Names::Team);
        // Already wired: the second pass gives no patch.
        let wired_pod = wired(
            "Pod coreweave/gb300-roce",
            &pod("wired-0", Some("coreweave/gb300-roce")),
            &builtin_plan("coreweave/gb300-roce"),
        );
        add(
            "Pod coreweave/gb300-roce, already wired",
            wired_pod.clone(),
            Names::Fixed(Arc::new(wired_pod)),
        );
        add("Pod, unlabelled", pod("plain-0", None), Names::Nothing);
        add(
            "Deployment, unlabelled",
            deployment("plain", None),
            Names::Nothing,
        );
        Model {
            objects,
            team: RwLock::new(HashMap::new()),
            applied: Mutex::new(HashMap::new()),
        }
    }

    /// Compute the expected answers of generation `generation` (before the file is written).
    pub(crate) fn add_generation(&self, generation: u32) {
        let plan = plan_of(file(TEAM, team_text(generation))).expect("a valid soak-team loads");
        let per: Vec<Option<Arc<Value>>> = self
            .objects
            .iter()
            .map(|o| match o.names {
                Names::Team => Some(Arc::new(wired(&o.what, &o.value, &plan))),
                _ => None,
            })
            .collect();
        self.team.write().expect("lock").insert(generation, per);
    }

    /// Check that an invalid version really is invalid (so the run tests what it says).
    pub(crate) fn assert_invalid(k: u32) {
        assert!(
            plan_of(file(TEAM, bad_text(k))).is_err(),
            "invalid version {k} loads"
        );
    }

    /// `object` with the base64 JSONPatch `patch` applied. The same object gets the same patch text for
    /// as long as a profile version is in force, so each distinct (object, patch) is decoded and applied
    /// once and remembered: an exact shortcut that keeps the client's CPU for the replicas.
    fn patched(&self, object: usize, patch: &str) -> Result<Arc<Value>, String> {
        let key = (object, patch.to_string());
        if let Some(v) = self.applied.lock().expect("lock").get(&key) {
            return Ok(v.clone());
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch)
            .map_err(|e| format!("the patch is not base64: {e}"))?;
        let ops: json_patch::Patch = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the patch is not a JSONPatch: {e}"))?;
        let mut doc = self.objects[object].value.clone();
        json_patch::patch(&mut doc, &ops).map_err(|e| format!("the patch does not apply: {e}"))?;
        let doc = Arc::new(doc);
        self.applied.lock().expect("lock").insert(key, doc.clone());
        Ok(doc)
    }

    /// Judge one answer: `Ok(index of the state it matched)` or `Err(why it is wrong)`.
    pub(crate) fn check(
        &self,
        object: usize,
        uid: &str,
        body: &[u8],
        states: &[TeamState],
    ) -> Result<usize, String> {
        let o = &self.objects[object];
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
        let r = &v["response"];
        if v["kind"] != "AdmissionReview" || r["uid"] != uid {
            return Err(format!("not the AdmissionReview for {uid}: {v}"));
        }
        let allowed = r["allowed"].as_bool();
        let got = match (allowed, r.get("patch")) {
            (Some(false), None) => None,
            (Some(true), None) => Some(Got::Same),
            (Some(true), Some(p)) => {
                if r["patchType"] != "JSONPatch" {
                    return Err(format!("patchType {}", r["patchType"]));
                }
                Some(Got::Patched(
                    self.patched(object, p.as_str().unwrap_or(""))?,
                ))
            }
            _ => return Err(format!("a malformed response: {r}")),
        };
        let got: Option<&Value> = match &got {
            None => None,
            Some(Got::Same) => Some(&o.value),
            Some(Got::Patched(v)) => Some(v),
        };
        let team = self.team.read().expect("lock");
        let expected: Vec<Option<&Value>> = match &o.names {
            Names::Nothing => vec![Some(&o.value)],
            Names::Fixed(w) => vec![Some(w)],
            Names::Team => states
                .iter()
                .map(|s| match s {
                    TeamState::Good(g) => Some(&**team[g][object].as_ref().expect("a team object")),
                    TeamState::Denied => None,
                })
                .collect(),
        };
        let hit = expected.iter().position(|e| match (e, got) {
            (Some(e), Some(g)) => *e == g,
            (None, None) => true,
            _ => false,
        });
        hit.ok_or_else(|| {
            let what = match &got {
                None => format!("denied: {}", r["status"]["message"]),
                Some(g) => match g
                    .pointer("/spec/containers/0/env")
                    .or_else(|| g.pointer("/spec/template/spec/containers/0/env"))
                {
                    Some(env) => format!("wired, env {env}"),
                    None => "allowed".to_string(),
                },
            };
            format!("{}: answered {what}; expected one of {states:?}", o.what)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at: f64, state: DirState) -> DirEvent {
        DirEvent { at, state }
    }

    #[test]
    fn states_follow_the_directory() {
        let e = [
            ev(0.0, DirState::Good(1)),
            ev(20.0, DirState::Good(2)),
            ev(80.0, DirState::Bad(0)),
            ev(140.0, DirState::Good(3)),
        ];
        // Settled: only the current version.
        assert_eq!(
            team_states(&e, 0.0, 0.1, 10.0, 10.1, 4.0),
            [TeamState::Good(1)]
        );
        // Within the window after a change: old and new.
        assert_eq!(
            team_states(&e, 0.0, 0.1, 21.0, 21.1, 4.0),
            [TeamState::Good(1), TeamState::Good(2)]
        );
        // An invalid change is refused: the old version stays.
        assert_eq!(
            team_states(&e, 0.0, 0.1, 81.0, 81.1, 4.0),
            [TeamState::Good(2)]
        );
        // A replica started on the invalid file denies until the next valid one.
        assert_eq!(
            team_states(&e, 100.0, 100.2, 120.0, 120.1, 4.0),
            [TeamState::Denied]
        );
        assert_eq!(
            team_states(&e, 100.0, 100.2, 141.0, 141.1, 4.0),
            [TeamState::Denied, TeamState::Good(3)]
        );
    }
}
