//! Notes: what an artifact says in prose about the fabric, decided in lowering.
//!
//! Some facts cannot be configuration: the image must ship a recent rdma-core, a batch script cannot
//! attach pod networks, UCX is on TCP on purpose. Lowering writes them as [`Note`]s with a [`Topic`]; an
//! emitter prints the topics its readers act on, as comments, and composes no fabric prose of its own.

use roce_model::model::UcxMode;

use super::{Consumer, Plan};

/// One thing the artifacts should tell their reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// What it is about, which decides the artifacts that print it.
    pub topic: Topic,
    /// Whole sentences, unwrapped: emitters wrap them as comments.
    pub text: String,
}

/// What a note is about. Emitters choose by topic: the Dockerfile prints [`Topic::Image`], a batch
/// script [`Topic::Nodes`], the `ucx-perftest` job [`Topic::Ucx`], [`Topic::Workload`] and
/// [`Topic::Image`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// What the container image must ship (for whoever builds or picks it).
    Image,
    /// What the nodes must already attach, for artifacts that cannot attach it themselves.
    Nodes,
    /// How UCX is set up in this profile, and why.
    Ucx,
    /// What a validation workload adds and measures, given this profile.
    Workload,
}

impl Note {
    pub(super) fn new(topic: Topic, text: impl Into<String>) -> Self {
        Note {
            topic,
            text: text.into(),
        }
    }
}

/// The job's notes, from the plan's other fields (the workload's follow them, [`super::notes`]).
pub(super) fn notes(plan: &Plan) -> Vec<Note> {
    let mut out = Vec::new();
    if let Some(w) = &plan.wiring
        && let (Some(first), Some(last)) = (w.networks.first(), w.networks.last())
    {
        let resources: Vec<&str> = w.resources.iter().map(|(r, _)| r.as_str()).collect();
        out.push(Note::new(
            Topic::Nodes,
            format!(
                "The nodes must already attach the fabric: {} Multus networks ({}/{} … {}/{}){}.",
                w.networks.len(),
                first.namespace(),
                first.name(),
                last.namespace(),
                last.name(),
                if resources.is_empty() {
                    String::new()
                } else {
                    format!(" and {}", resources.join(", "))
                }
            ),
        ));
    }
    if !plan.dra.pod_claims.is_empty() {
        let claims: Vec<String> = plan
            .dra
            .pod_claims
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        out.push(Note::new(
            Topic::Nodes,
            format!(
                "The profile's pods claim {} through Dynamic Resource Allocation: Kubernetes objects a batch \
                 script cannot make, so the nodes must already give the job those devices (and, for an \
                 NVLink domain, their IMEX channel).",
                claims.join(" and ")
            ),
        ));
    }
    let ucx = ucx_summary(plan);
    out.push(Note::new(
        Topic::Ucx,
        match plan.ucx_mode {
            UcxMode::Rdma => format!("UCX over RDMA, as the profile sets it: {ucx}."),
            UcxMode::Tcp => format!(
                "UCX is on TCP: this profile pins it ({ucx}). NCCL never uses UCX, so an NCCL-only \
                 profile keeps UCX off the RDMA devices, where an accidental UCX start (e.g. Open MPI's \
                 UCX layer) could crash the job."
            ),
            UcxMode::Off => "The profile leaves UCX unconfigured (ucx mode=\"off\"): UCX picks its own \
                             transports."
                .to_string(),
        },
    ));
    if let Some(min) = plan.min_rdma_core {
        out.push(Note::new(
            Topic::Image,
            format!(
                "The image must ship rdma-core >= {min}, with UCX built against it: with an older \
                 rdma-core UCX initialises but GPUDirect RDMA transfers fail with vendor_err 0x89."
            ),
        ));
    }
    out.extend(inspector(plan));
    out
}

/// Where the Inspector's records go on nodes without a pod volume, and the plugin the image must ship.
fn inspector(plan: &Plan) -> Vec<Note> {
    use roce_model::fabric::observe::{INSPECTOR_LIBRARY, InspectorFormat};
    let Some(i) = &plan.inspector else {
        return Vec::new();
    };
    let what = match i.format.value {
        InspectorFormat::Json => "JSON records",
        InspectorFormat::Prometheus => "Prometheus files",
    };
    let pods = match i.host_path() {
        Some(h) => format!("pods mount the node's {h} there"),
        None => "pods mount an emptyDir there".to_string(),
    };
    let library = if i.plugin().contains('/') {
        format!("at {}", i.plugin())
    } else {
        format!(
            "on the loader's path (NCCL_PROFILER_PLUGIN={} is looked up as {})",
            i.plugin(),
            if i.plugin() == roce_model::fabric::observe::INSPECTOR_PLUGIN {
                INSPECTOR_LIBRARY.to_string()
            } else {
                format!("libnccl-profiler-{}.so", i.plugin())
            }
        )
    };
    vec![
        Note::new(
            Topic::Nodes,
            format!(
                "The Inspector profiler plugin writes its {what} to {} on each node \
                 (NCCL_INSPECTOR_DUMP_DIR): a batch job gets no volume, so the directory is the node's \
                 own and must be writable by the job's user ({pods}).",
                i.dump_dir()
            ),
        ),
        Note::new(
            Topic::Image,
            format!(
                "The image must ship NCCL's Inspector profiler plugin {library}: NCCL's own build and \
                 packages leave it out (build it in NCCL's plugins/profiler/inspector with `make`), and \
                 without it NCCL logs `PROFILER/Plugin: Could not find` and the job runs unprofiled."
            ),
        ),
    ]
}

/// `KEY=value KEY=value` of the UCX variables the profile sets (not those a workload adds).
fn ucx_summary(plan: &Plan) -> String {
    plan.env
        .iter()
        .filter(|e| e.consumer == Consumer::Ucx && e.origin.is_some())
        .map(|e| format!("{}={}", e.name, e.value))
        .collect::<Vec<_>>()
        .join(" ")
}
