//! Lowering a validation workload from the job's plan: the test's logging variables (from the fabric core,
//! [`roce_model::fabric::env::NCCL_TESTS_ENV`] and [`UCX_PERFTEST_ENV`]), its default arguments and what
//! its artifacts say about them.

use roce_model::fabric::env::{
    JobVar, NCCL_DEBUG_INFO, NCCL_TESTS_ENV, UCX_LOG_LEVEL_INFO, UCX_PERFTEST_ENV,
};
use roce_model::model::UcxMode;

use super::{Consumer, EnvVar, Note, Plan, Topic, Workload};

/// The plan of `w`, from the plan of the user's job.
pub(super) fn lower(job: Plan, w: Workload) -> Plan {
    debug_assert_eq!(job.workload, Workload::Job, "lowered from the job's plan");
    let mut p = job;
    p.workload = w;
    match w {
        Workload::Job => {}
        Workload::NcclTests => {
            set_all(&mut p.env, NCCL_TESTS_ENV);
        }
        Workload::UcxPerftest => {
            set_all(&mut p.env, UCX_PERFTEST_ENV);
            // Two Pods on two nodes measure the network: they need the NICs' claim, not the NVLink domain
            // (multi-node NVLink is NCCL's, inside the rack) nor the job's placement.
            p.dra = crate::dra::wiring(&p.dra_spec.nics_only());
            // UCX needs its cuda_copy transport for GPU buffers, which UCX_TLS=tcp leaves out.
            let memory = if p.ucx_mode == UcxMode::Tcp {
                HOST
            } else {
                CUDA
            };
            p.test_args = Some(format!("-t tag_bw -m {memory} -s 16777216 -n 1000"));
        }
    }
    p.notes = super::notes(&p);
    p
}

/// What the workload's artifacts say about what it adds and measures.
pub(super) fn notes(p: &Plan) -> Vec<Note> {
    let texts: Vec<String> = match p.workload {
        Workload::Job => Vec::new(),
        Workload::NcclTests => vec![format!(
            "{}={} so the log shows the transport NCCL chose, its devices and GDRDMA per channel.",
            NCCL_DEBUG_INFO.name, NCCL_DEBUG_INFO.value
        )],
        Workload::UcxPerftest => {
            let log = format!("{}={}", UCX_LOG_LEVEL_INFO.name, UCX_LOG_LEVEL_INFO.value);
            let mut texts = match p.ucx_mode {
                UcxMode::Rdma => vec![format!(
                    "{log}: each endpoint's line (ep_cfg) names the transports and devices UCX chose; \
                     a tcp lane there means UCX fell back off RDMA."
                )],
                UcxMode::Tcp => vec![
                    format!(
                        "This job therefore measures UCX over TCP with host memory (-m {HOST}: a \
                         TCP-pinned UCX is not set up to carry GPU buffers), not RDMA."
                    ),
                    "To validate UCX over RDMA (NIXL, vLLM disaggregated serving, UCX-based MPI), render \
                     this target from a profile with ucx mode=\"rdma\", such as the built-in \
                     coreweave/gb300-roce-nixl."
                        .to_string(),
                ],
                UcxMode::Off => vec![format!(
                    "`ucx_info -d` and the endpoint lines ({log}) in the log show which transports UCX \
                     picked."
                )],
            };
            texts.extend(not_applied(p));
            texts
        }
    };
    texts
        .into_iter()
        .map(|t| Note::new(Topic::Workload, t))
        .collect()
}

/// What of the profile's DRA a two-node UCX test leaves out, and why.
fn not_applied(p: &Plan) -> Vec<String> {
    let spec = &p.dra_spec;
    let mut left = Vec::new();
    if let Some(cd) = spec.nvlink_domain.compute_domain() {
        left.push(format!(
            "the NVLink domain (ComputeDomain {}, claim {})",
            cd.name(),
            cd.claim()
        ));
    }
    if spec.placement != roce_model::fabric::dra::Placement::default() {
        left.push("the job's placement (NVLink-clique affinity, Kueue topology)".to_string());
    }
    if left.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Not applied to this test: {}. ucx_perftest measures the RDMA network between two nodes; \
         multi-node NVLink inside the rack is NCCL's, and nccl-tests-mpijob validates it.{}",
        left.join(" and "),
        if spec.nics.dra().is_some() {
            " The Pods still claim the NICs."
        } else {
            ""
        }
    )]
}

/// `ucx_perftest -m`: GPU memory, or host memory where UCX is pinned to TCP.
const CUDA: &str = "cuda";
const HOST: &str = "host";

fn set_all(env: &mut Vec<EnvVar>, vars: &[JobVar]) {
    for v in vars {
        set(env, v);
    }
}

/// Set `v`: in place when present (if it replaces the profile's value; a changed value no longer comes
/// from the profile, so it loses its origin), else after the last variable of its consumer (or after the
/// consumers that sort before it), so the NCCL → UCX → other order of every target holds.
fn set(env: &mut Vec<EnvVar>, v: &JobVar) {
    if let Some(e) = env.iter_mut().find(|e| e.name == v.name) {
        if v.replaces && e.value != v.value {
            e.value = v.value.to_string();
            e.origin = None;
        }
        return;
    }
    let rank = |c: Consumer| match c {
        Consumer::Nccl => 0,
        Consumer::Ucx => 1,
        Consumer::Other => 2,
    };
    let at = env
        .iter()
        .rposition(|e| rank(e.consumer) <= rank(v.consumer))
        .map_or(0, |i| i + 1);
    env.insert(
        at,
        EnvVar {
            name: v.name.to_string(),
            value: v.value.to_string(),
            consumer: v.consumer,
            origin: None,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, consumer: Consumer) -> EnvVar {
        EnvVar {
            name: name.to_string(),
            value: "v".to_string(),
            consumer,
            origin: None,
        }
    }

    fn job(name: &'static str, value: &'static str, consumer: Consumer, replaces: bool) -> JobVar {
        JobVar {
            name,
            value,
            consumer,
            replaces,
        }
    }

    fn names(env: &[EnvVar]) -> Vec<&str> {
        env.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn set_inserts_after_its_consumer_group_and_replaces_in_place() {
        let mut env = vec![
            var("NCCL_A", Consumer::Nccl),
            var("UCX_TLS", Consumer::Ucx),
            var("X", Consumer::Other),
        ];
        set(&mut env, &job("NCCL_DEBUG", "INFO", Consumer::Nccl, true));
        set(&mut env, &job("UCX_LOG_LEVEL", "info", Consumer::Ucx, true));
        assert_eq!(
            names(&env),
            ["NCCL_A", "NCCL_DEBUG", "UCX_TLS", "UCX_LOG_LEVEL", "X"]
        );
        set(&mut env, &job("X", "new", Consumer::Nccl, true));
        assert_eq!(
            names(&env),
            ["NCCL_A", "NCCL_DEBUG", "UCX_TLS", "UCX_LOG_LEVEL", "X"],
            "kept its place"
        );
        assert_eq!(env[4].value, "new");
        set(&mut env, &job("X", "other", Consumer::Other, false));
        assert_eq!(env[4].value, "new", "a fill-in keeps the profile's value");
        let mut only_other = vec![var("X", Consumer::Other)];
        set(
            &mut only_other,
            &job("NCCL_DEBUG", "INFO", Consumer::Nccl, true),
        );
        assert_eq!(names(&only_other), ["NCCL_DEBUG", "X"]);
    }
}
