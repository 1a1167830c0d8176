//! `nccl-tests-mpijob`: nccl-tests `all_reduce_perf` across N nodes as a Kubeflow MPIJob (`kubeflow.org/v2beta1`).
//!
//! The workers get the fabric wiring (Multus networks, RDMA resource, capabilities, `/dev/shm`) exactly as a
//! `pod` target would; the launcher runs `mpirun`, which hands every variable of the job's env to each rank
//! with `-x NAME` (MPI ranks start under the workers' sshd and do not see the worker container's env).

use roce_model::fabric::env::{
    HOST_NETWORK_SSH_PORT, MPI_HOST_NETWORK_LAUNCHER_ENV, MPI_LAUNCHER_ENV,
};

use super::{image, manifest, nccl_test_command, nodes, object_name, shell_quoted, with_command};
use crate::edits::pod;
use crate::expansion::escape_dependent_vars;
use crate::plan::{Plan, Topic};
use crate::sweep::NodeName;
use crate::yaml::Yaml;
use crate::{RenderError, RenderOptions};

/// Name of the launcher container.
pub(crate) const LAUNCHER_CONTAINER: &str = "launcher";

/// Render the MPIJob from a plan lowered for nccl-tests.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let built = build(plan, opts, None)?;
    let mut docs = built.documents;
    docs.push(built.job);
    Ok(manifest(plan, &built.notes, &docs))
}

/// A test pinned to given nodes (`roce sweep`): the job's name, its nodes (one worker on each), and labels
/// for the MPIJob.
pub(crate) struct Pin<'a> {
    pub name: &'a str,
    pub nodes: &'a [NodeName],
    pub labels: Vec<(&'static str, String)>,
    /// A bash script the launcher runs on the (one) worker after the test, its output in the launcher's
    /// log: the sweep's rail check.
    pub then: Option<String>,
}

/// An MPIJob and the objects to apply before it.
pub(crate) struct Built {
    /// ComputeDomain, NIC claim template: to apply first.
    pub documents: Vec<Yaml>,
    pub job: Yaml,
    pub notes: Vec<String>,
}

/// The MPIJob of a plan lowered for nccl-tests, across the option's node count or pinned to nodes.
pub(crate) fn build(
    plan: &Plan,
    opts: &RenderOptions,
    pin: Option<&Pin<'_>>,
) -> Result<Built, RenderError> {
    let (name, nodes) = match pin {
        Some(p) => (p.name.to_string(), p.nodes.len() as u32),
        None => (object_name(plan, opts, "nccl-tests")?, nodes(plan, opts)?),
    };
    let image = image(plan, opts);
    let ranks = u64::from(nodes) * u64::from(plan.gpus_per_node);
    let mpirun = mpirun_args(plan, opts, ranks)?;
    let launcher = launcher_command(
        launcher_container(plan, image),
        &mpirun,
        pin.and_then(|p| p.then.as_deref()),
    )?;
    let worker = worker(plan, opts, image, &name, pin);
    let job = job(plan, &name, pin, nodes, launcher, worker);
    let notes = notes(plan, opts, &name, nodes, ranks);
    // The ComputeDomain and the NICs' claim template go first, so `kubectl apply -f` creates them before
    // the workers that claim them (the vendor's DRA MPIJob ships its ComputeDomain the same way).
    Ok(Built {
        documents: pod::documents(plan),
        job,
        notes,
    })
}

/// mpirun's arguments: every rank, no binding (the test binds itself), each variable of the job's env
/// handed on with `-x`, then the test.
fn mpirun_args(plan: &Plan, opts: &RenderOptions, ranks: u64) -> Result<Vec<String>, RenderError> {
    let mut mpirun: Vec<String> = vec![
        "-np".into(),
        ranks.to_string(),
        "--bind-to".into(),
        "none".into(),
    ];
    for e in &plan.env {
        mpirun.push("-x".into());
        mpirun.push(e.name.clone());
    }
    mpirun.extend(nccl_test_command(opts)?);
    Ok(mpirun)
}

/// The launcher container without its command: MPI's launcher settings and the job's env, small requests
/// (it only runs mpirun).
fn launcher_container(plan: &Plan, image: &str) -> Yaml {
    // Host-network workers run sshd off the node's port 22: the launcher's mpirun is told the port.
    let host_network_env = if plan.host_network {
        MPI_HOST_NETWORK_LAUNCHER_ENV
    } else {
        &[]
    };
    let mut launcher_env: Vec<Yaml> = MPI_LAUNCHER_ENV
        .iter()
        .chain(host_network_env)
        .map(|v| {
            Yaml::map()
                .with("name", v.name)
                .with("value", Yaml::Quoted(v.value.into()))
        })
        .collect();
    launcher_env.extend(pod::env_list(plan));
    Yaml::map()
        .with("name", LAUNCHER_CONTAINER)
        .with("image", image)
        .with("env", launcher_env)
        .with(
            "resources",
            Yaml::map().with(
                "requests",
                Yaml::map()
                    .with("cpu", Yaml::Quoted("2".into()))
                    .with("memory", "128Mi"),
            ),
        )
}

/// The launcher's command: mpirun itself, or (with a script to run after the test, the sweep's) a bash
/// line that runs it, then the script on one worker, and exits with mpirun's status.
fn launcher_command(
    launcher: Yaml,
    mpirun: &[String],
    then: Option<&str>,
) -> Result<Yaml, RenderError> {
    // Kubernetes expands `$(VAR)` in args too: keep user arguments verbatim.
    let args = mpirun
        .iter()
        .map(|a| Yaml::from(escape_dependent_vars(a)))
        .collect();
    let Some(then) = then else {
        return Ok(with_command(launcher, &["mpirun"], args));
    };
    let mut line = vec!["mpirun".to_string()];
    for a in mpirun {
        line.push(shell_quoted("nccl-test-args", a)?);
    }
    let then = shell_quoted("sweep", then)?;
    let script = format!(
        "{}; rc=$?\nmpirun -np 1 --bind-to none bash -c {then}\nexit $rc",
        line.join(" ")
    );
    Ok(with_command(
        launcher,
        &["bash", "-c"],
        vec![Yaml::from(escape_dependent_vars(&script))],
    ))
}

/// The worker template's metadata and spec: the wired pod (on the pinned nodes, for a sweep).
fn worker(
    plan: &Plan,
    opts: &RenderOptions,
    image: &str,
    name: &str,
    pin: Option<&Pin<'_>>,
) -> (Yaml, Yaml) {
    let worker_opts = RenderOptions {
        image: image.to_string(),
        ..opts.clone()
    };
    // Pinned workers need no placement of their own: the nodes are given (a clique affinity would only
    // refuse a pair that spans two racks, which is what a sweep wants to test).
    let worker = pod::wired(
        plan,
        &worker_opts,
        pod::Head {
            affinity: pin.map(|p| pinned_affinity(name, p.nodes)),
            finish_container: plan
                .host_network
                .then(|| Box::new(host_network_worker) as Box<dyn FnOnce(Yaml) -> Yaml>),
            ..pod::Head::default()
        },
    );
    match worker {
        Yaml::Map(mut parts) if parts.len() == 2 => {
            let spec = parts.pop().expect("two parts").1;
            (parts.pop().expect("two parts").1, spec)
        }
        _ => unreachable!("a template is metadata and spec"),
    }
}

/// The MPIJob itself: one launcher, a worker per node, a slot per GPU.
fn job(
    plan: &Plan,
    name: &str,
    pin: Option<&Pin<'_>>,
    nodes: u32,
    launcher: Yaml,
    (worker_metadata, worker_spec): (Yaml, Yaml),
) -> Yaml {
    let replica = |replicas: u32, metadata: Yaml, spec: Yaml| {
        Yaml::map().with("replicas", i64::from(replicas)).with(
            "template",
            Yaml::map().with("metadata", metadata).with("spec", spec),
        )
    };
    Yaml::map()
        .with("apiVersion", "kubeflow.org/v2beta1")
        .with("kind", "MPIJob")
        .with("metadata", job_metadata(plan, name, pin))
        .with(
            "spec",
            Yaml::map()
                .with("slotsPerWorker", i64::from(plan.gpus_per_node))
                .with("runPolicy", Yaml::map().with("cleanPodPolicy", "Running"))
                .with(
                    "mpiReplicaSpecs",
                    Yaml::map()
                        .with(
                            "Launcher",
                            replica(
                                1,
                                Yaml::map().with(
                                    "annotations",
                                    Yaml::map()
                                        .with(crate::PROFILE_ANNOTATION, plan.profile.as_str()),
                                ),
                                Yaml::map().with("containers", vec![launcher]),
                            ),
                        )
                        .with("Worker", replica(nodes, worker_metadata, worker_spec)),
                ),
        )
}

/// The header comment: what the job runs, how the env reaches the ranks, what this plan changes about
/// it, and how to run it and read the result.
fn notes(plan: &Plan, opts: &RenderOptions, name: &str, nodes: u32, ranks: u64) -> Vec<String> {
    let mut notes = vec![
        format!(
            "Validation job: nccl-tests {} across {nodes} node(s) x {} GPU(s) = {ranks} ranks, through the MPI \
             Operator (kubeflow.org/v2beta1).",
            opts.validation.nccl_test.rsplit('/').next().unwrap_or_default(),
            plan.gpus_per_node
        ),
        "The launcher hands the env below to every rank with `mpirun -x` (ranks start under the workers' sshd \
         and do not see a container's env); the workers carry the same env for `kubectl exec` and `roce lint`."
            .to_string(),
    ];
    notes.extend(plan.notes_about(&[Topic::Workload]).map(|n| n.text.clone()));
    if plan.host_network {
        notes.push(format!(
            "The workers run in the node's network namespace, where the node's sshd has port 22: theirs \
             listens on {HOST_NETWORK_SSH_PORT} (the image needs /usr/sbin/sshd), and the launcher's mpirun \
             is told so ({}).",
            MPI_HOST_NETWORK_LAUNCHER_ENV
                .iter()
                .map(|v| v.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if plan.wiring.is_none() {
        notes.push("This profile's nodes attach the fabric themselves (SUNK NodeSet): the workers carry env only.".into());
    }
    if nodes < 2 {
        notes.push(
            "One node: NCCL stays on NVLink and shared memory, so the fabric is not tested.".into(),
        );
    }
    notes.extend([
        String::new(),
        "Run it and read the result:".into(),
        "  kubectl apply -f nccl-tests-mpijob.yaml".into(),
        format!("  kubectl logs -f job/{name}-launcher > nccl-tests.log"),
        format!("  roce explain nccl-tests.log --profile {}", plan.profile),
    ]);
    notes
}

/// A host-network worker: its sshd on [`HOST_NETWORK_SSH_PORT`], not the node's port 22 (the command and
/// port of OCI's host-network MPIJob).
fn host_network_worker(container: Yaml) -> Yaml {
    let port = HOST_NETWORK_SSH_PORT.to_string();
    let worker = with_command(
        container,
        &["/bin/bash", "-c"],
        vec![Yaml::from(format!(
            "mkdir -p /var/run/sshd; exec /usr/sbin/sshd -D -p {port}"
        ))],
    );
    let Yaml::Map(entries) = worker else {
        return worker;
    };
    let mut out = Yaml::map();
    for (k, v) in entries {
        let after_args = k == "args";
        out.insert(k, v);
        if after_args {
            out.insert(
                "ports",
                vec![
                    Yaml::map()
                        .with("name", "ssh")
                        .with("containerPort", i64::from(HOST_NETWORK_SSH_PORT))
                        .with("protocol", "TCP"),
                ],
            );
        }
    }
    out
}

fn job_metadata(plan: &Plan, name: &str, pin: Option<&Pin<'_>>) -> Yaml {
    let mut m = Yaml::map().with("name", name);
    if let Some(p) = pin {
        let mut labels = Yaml::map();
        for (k, v) in &p.labels {
            labels.insert((*k).to_owned(), v.as_str());
        }
        m.insert("labels", labels);
    }
    m.with(
        "annotations",
        Yaml::map().with(crate::PROFILE_ANNOTATION, plan.profile.as_str()),
    )
}

/// Label the MPI Operator puts on a job's pods: the job's name.
const JOB_NAME_LABEL: &str = "training.kubeflow.org/job-name";
/// Label the MPI Operator puts on a job's pods: `launcher` or `worker`.
const JOB_ROLE_LABEL: &str = "training.kubeflow.org/job-role";

/// Workers required onto `nodes` (`kubernetes.io/hostname`) and onto different ones, so each gets one.
fn pinned_affinity(name: &str, nodes: &[NodeName]) -> Yaml {
    let hostname = "kubernetes.io/hostname";
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    Yaml::map()
        .with(
            "nodeAffinity",
            Yaml::map().with(
                required,
                Yaml::map().with(
                    "nodeSelectorTerms",
                    vec![Yaml::map().with(
                        "matchExpressions",
                        vec![
                                Yaml::map()
                                    .with("key", hostname)
                                    .with("operator", "In")
                                    .with(
                                        "values",
                                        nodes
                                            .iter()
                                            .map(|n| Yaml::from(n.as_str()))
                                            .collect::<Vec<_>>(),
                                    ),
                            ],
                    )],
                ),
            ),
        )
        .with(
            "podAntiAffinity",
            Yaml::map().with(
                required,
                vec![
                    Yaml::map()
                        .with(
                            "labelSelector",
                            Yaml::map().with(
                                "matchLabels",
                                Yaml::map()
                                    .with(JOB_NAME_LABEL, name)
                                    .with(JOB_ROLE_LABEL, "worker"),
                            ),
                        )
                        .with("topologyKey", hostname),
                ],
            ),
        )
}
