//! `ucx-perftest`: `ucx_perftest` between a server Pod and a client Pod kept on two different nodes.
//!
//! Three objects in one file: a headless Service that gives the server a DNS name (`server.NAME`), the
//! server Pod and the client Pod. Both carry the fabric wiring and the profile's UCX env; a required
//! `podAntiAffinity` on `kubernetes.io/hostname` keeps them apart, so the traffic crosses the fabric. An init
//! container prints `ucx_info -d` (the devices and transports the Pod really has) before each side starts.
//! Where the NICs are DRA devices, both Pods claim them (the claim's ResourceClaimTemplate goes first);
//! the NVLink domain and the job's placement do not apply to a two-node network test, and the file says so.

use super::{image, manifest, object_name, with_command};
use crate::edits::pod;
use crate::expansion::escape_dependent_vars;
use crate::plan::{Plan, Topic};
use crate::yaml::Yaml;
use crate::{RenderError, RenderOptions};

/// TCP port the server listens on (`ucx_perftest`'s own default).
pub const PORT: u16 = 13337;

/// Name of the init container that prints `ucx_info -d`.
pub const INFO_CONTAINER: &str = "ucx-info";

/// Name of the client's init container that waits until the server listens.
pub const WAIT_CONTAINER: &str = "wait-for-server";

/// Both Pods give up after this long (the server would otherwise wait for a client forever).
pub const DEADLINE_SECONDS: i64 = 1800;

/// Label that ties the Service and the two Pods together (its value is the object name).
pub const TEST_LABEL: &str = "roce.dev/ucx-perftest";

/// Label that tells the server from the client.
pub const ROLE_LABEL: &str = "roce.dev/role";

/// Render the Service and the two Pods from a plan lowered for `ucx_perftest`.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let name = object_name(plan, opts, "ucx-perftest")?;
    let container_opts = RenderOptions {
        image: image(plan, opts).to_string(),
        ..opts.clone()
    };
    let server_host = format!("server.{name}");
    let client_args = client_args(plan, opts, &server_host)?;
    let info = info_container(plan, &container_opts);
    let port = PORT.to_string();
    let probe = readiness_probe();
    let server_main = |c: Yaml| {
        let mut c = with_command(c, &["ucx_perftest", "-p", &port], Vec::new());
        c.insert("readinessProbe", probe);
        c
    };
    let server = test_pod(
        plan,
        &container_opts,
        &name,
        "server",
        vec![info.clone()],
        server_main,
    );
    let client = test_pod(
        plan,
        &container_opts,
        &name,
        "client",
        vec![info, wait_container(plan, opts, &server_host)],
        |c| with_command(c, &["ucx_perftest"], client_args),
    );
    // The objects the claims name go first, so `kubectl apply -f` creates them before the Pods.
    let mut docs = pod::documents(plan);
    docs.extend([service(plan, &name), server, client]);
    Ok(manifest(plan, &notes(plan, &name), &docs))
}

/// The client's arguments: the server's DNS name and port, then the test's own words.
fn client_args(
    plan: &Plan,
    opts: &RenderOptions,
    server_host: &str,
) -> Result<Vec<Yaml>, RenderError> {
    let args_text = opts
        .validation
        .ucx_perftest_args
        .as_deref()
        .or(plan.test_args.as_deref())
        .unwrap_or_default();
    let mut client_args: Vec<Yaml> = vec![server_host.into(), "-p".into(), PORT.to_string().into()];
    for word in super::words("ucx-perftest-args", args_text)? {
        // Kubernetes expands `$(VAR)` in args: keep user arguments verbatim.
        client_args.push(escape_dependent_vars(&word).into());
    }
    Ok(client_args)
}

/// The headless Service that gives the server its DNS name (`server.NAME`).
fn service(plan: &Plan, name: &str) -> Yaml {
    Yaml::map()
        .with("apiVersion", "v1")
        .with("kind", "Service")
        .with(
            "metadata",
            Yaml::map().with("name", name).with(
                "annotations",
                Yaml::map().with(crate::PROFILE_ANNOTATION, plan.profile.as_str()),
            ),
        )
        .with(
            "spec",
            Yaml::map()
                .with("clusterIP", "None")
                .with("selector", labels(name, "server"))
                .with(
                    "ports",
                    vec![
                        Yaml::map()
                            .with("name", "perftest")
                            .with("port", i64::from(PORT))
                            .with("protocol", "TCP"),
                    ],
                ),
        )
}

/// The init container that prints `ucx_info -d`, wired like the main one so it sees the same devices.
fn info_container(plan: &Plan, container_opts: &RenderOptions) -> Yaml {
    with_command(
        pod::container(
            plan,
            &RenderOptions {
                container: INFO_CONTAINER.to_string(),
                ..container_opts.clone()
            },
        ),
        &["ucx_info", "-d"],
        Vec::new(),
    )
}

/// The server's readiness: its port in the LISTEN state, as /proc/net/tcp shows it.
fn readiness_probe() -> Yaml {
    // Ready once ucx_perftest listens (it opens its port before anything else), so the headless Service
    // publishes `server.NAME` only then: a LISTEN (0A) socket on the port in /proc/net/tcp{,6}.
    let listening = format!("^ *[0-9]+: [0-9A-F]+:{PORT:04X} [0-9A-F]+:0000 0A ");
    Yaml::map()
        .with(
            "exec",
            Yaml::map().with(
                "command",
                vec![
                    Yaml::from("grep"),
                    "-qsE".into(),
                    listening.into(),
                    "/proc/net/tcp".into(),
                    "/proc/net/tcp6".into(),
                ],
            ),
        )
        .with("periodSeconds", 2_i64)
}

/// The client's init container that waits until the server's name resolves (the server is ready).
fn wait_container(plan: &Plan, opts: &RenderOptions, server_host: &str) -> Yaml {
    Yaml::map()
        .with("name", WAIT_CONTAINER)
        .with("image", image(plan, opts))
        .with("command", vec![Yaml::from("/bin/sh"), "-c".into()])
        .with(
            "args",
            vec![Yaml::from(format!(
                "until getent hosts {server_host} >/dev/null; do echo waiting for {server_host}; sleep 5; done"
            ))],
        )
}

/// The header comment: what the test does, what the plan says about UCX, and how to run and read it.
fn notes(plan: &Plan, name: &str) -> Vec<String> {
    let mut notes = vec![
        "Validation job: ucx_perftest between two nodes. The server and client Pods keep apart (required \
         podAntiAffinity on kubernetes.io/hostname), so the traffic crosses the fabric. Each Pod's init \
         container `ucx-info` prints `ucx_info -d`: the UCX devices and transports the Pod really has. The \
         client starts once the server listens (its readiness probe publishes `server.NAME`)."
            .to_string(),
    ];
    notes.extend(
        plan.notes_about(&[Topic::Ucx, Topic::Workload, Topic::Image])
            .map(|n| n.text.clone()),
    );
    if plan.wiring.is_none() {
        notes.push("This profile's nodes attach the fabric themselves (SUNK NodeSet): the Pods carry env only.".into());
    }
    notes.extend([
        String::new(),
        "Run it and read the result:".into(),
        "  kubectl apply -f ucx-perftest.yaml".into(),
        format!("  kubectl wait --for=jsonpath='{{.status.phase}}'=Succeeded pod/{name}-client --timeout=30m"),
        format!("  kubectl logs pod/{name}-client --all-containers > ucx-perftest.log"),
        format!("  roce explain ucx-perftest.log --profile {}", plan.profile),
        "  kubectl delete -f ucx-perftest.yaml".into(),
    ]);
    notes
}

fn labels(name: &str, role: &str) -> Yaml {
    Yaml::map().with(TEST_LABEL, name).with(ROLE_LABEL, role)
}

fn test_pod(
    plan: &Plan,
    opts: &RenderOptions,
    name: &str,
    role: &str,
    init: Vec<Yaml>,
    main: impl FnOnce(Yaml) -> Yaml,
) -> Yaml {
    let mut spec = vec![
        ("restartPolicy".into(), Yaml::from("Never")),
        ("activeDeadlineSeconds".into(), Yaml::from(DEADLINE_SECONDS)),
    ];
    if role == "server" {
        // hostname + subdomain = the headless Service's name: DNS `server.NAME`.
        spec.push(("hostname".into(), Yaml::from("server")));
        spec.push(("subdomain".into(), Yaml::from(name)));
    }
    let anti_affinity = Yaml::map().with(
        "podAntiAffinity",
        Yaml::map().with(
            "requiredDuringSchedulingIgnoredDuringExecution",
            vec![
                Yaml::map()
                    .with(
                        "labelSelector",
                        Yaml::map().with("matchLabels", Yaml::map().with(TEST_LABEL, name)),
                    )
                    .with("topologyKey", "kubernetes.io/hostname"),
            ],
        ),
    );
    let template = pod::wired(
        plan,
        opts,
        pod::Head {
            metadata: vec![
                ("name".into(), Yaml::from(format!("{name}-{role}"))),
                ("labels".into(), labels(name, role)),
            ],
            spec,
            affinity: Some(anti_affinity),
            before_containers: vec![("initContainers".into(), Yaml::Seq(init))],
            finish_container: Some(Box::new(main)),
        },
    );
    let Yaml::Map(parts) = template else {
        unreachable!("a template is a mapping")
    };
    let mut pod = Yaml::map().with("apiVersion", "v1").with("kind", "Pod");
    for (k, v) in parts {
        pod.insert(k, v);
    }
    pod
}
