//! `roce sweep plan` campaigns checked by their consumers: every round's MPIJobs against the mpi-operator
//! v2beta1 CRD schema and their pod templates with kubernetes-validate --strict, ComputeDomains against
//! their CRD schema, `run.sh` and every batch script with `bash -n`; and what the files say against the
//! campaign (each pair's workers pinned to exactly its two nodes, each node once per round, every output
//! path collected). The real-Slurm run of a campaign, read back by `roce sweep report`, is in
//! crates/roce-inspect/tests/slurm_sweep.rs.

use std::collections::BTreeSet;

use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::sweep::{Campaign, NodeList, Scheduler, SweepOptions};
use roce_render::{Artifact, Plan, RenderOptions, plan};
use serde_json::{Value, json};

use crate::support::consumers;

const PROFILES: &[&str] = &[
    "coreweave/gb300-roce",
    "coreweave/h100-ib",
    "oci/h100-roce",
    "aws/p6e-gb200",
    "gcp/a3-ultra",
];

fn plan_of(name: &str) -> Plan {
    plan::lower(
        &load(builtin::source(name).unwrap(), &BuiltinsOnly)
            .profile
            .unwrap(),
    )
}

fn campaign(name: &str, scheduler: Scheduler, nodes: &str) -> (Campaign, Vec<Artifact>) {
    let plan = plan_of(name);
    let opts = SweepOptions {
        scheduler,
        ..SweepOptions::default()
    };
    let r = RenderOptions::default();
    let c = Campaign::plan(&plan, &NodeList::parse(nodes).unwrap(), &opts, &r).unwrap();
    let files = c.render(&plan, &opts, &r).unwrap();
    (c, files)
}

fn docs(yaml: &str) -> Vec<Value> {
    yaml.split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{e}\n{d}")))
        .collect()
}

fn templates_as_pods(job: &Value) -> String {
    let mut pods = Vec::new();
    for (role, spec) in job["spec"]["mpiReplicaSpecs"].as_object().unwrap() {
        let mut metadata = spec["template"]["metadata"].clone();
        metadata["name"] = json!(format!("template-{}", role.to_lowercase()));
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec["template"]["spec"]});
        pods.push(serde_json::to_string_pretty(&pod).unwrap());
    }
    pods.join("\n---\n")
}

fn file<'a>(files: &'a [Artifact], path: &str) -> &'a str {
    &files
        .iter()
        .find(|a| a.path == path)
        .unwrap_or_else(|| panic!("no {path}"))
        .contents
}

/// The nodes a pinned MPIJob's workers are required onto.
fn pinned(job: &Value) -> BTreeSet<String> {
    let w = &job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
    let terms = &w["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    let e = &terms[0]["matchExpressions"][0];
    assert_eq!(e["key"], "kubernetes.io/hostname");
    assert_eq!(e["operator"], "In");
    let anti =
        &w["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(
        anti["labelSelector"]["matchLabels"]["training.kubeflow.org/job-name"],
        job["metadata"]["name"]
    );
    e["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// One job of a round: its name, the nodes it is pinned to, where its log goes.
type Test<'a> = (&'a str, &'a [roce_render::sweep::NodeName], &'a str);

#[test]
fn kubernetes_rounds_pass_their_consumers_and_pin_every_pair() {
    for name in PROFILES {
        let (c, files) = campaign(name, Scheduler::Kubernetes, "gpu[01-07]");
        let plan = plan_of(name);
        let versions = consumers::k8s_versions_from(plan.dra.min_kubernetes_minor());
        let run = file(&files, "run.sh");
        consumers::bash_syntax(run).unwrap_or_else(|e| panic!("{name} run.sh: {e}"));
        let rounds: Vec<(&str, Vec<Test<'_>>)> = std::iter::once((
            "checks.yaml",
            c.checks
                .iter()
                .map(|k| {
                    (
                        k.job.as_str(),
                        std::slice::from_ref(&k.node),
                        k.output.as_str(),
                    )
                })
                .collect(),
        ))
        .chain(c.rounds.iter().map(|r| {
            (
                r.file.as_str(),
                r.pairs
                    .iter()
                    .map(|p| (p.job.as_str(), &p.nodes[..], p.output.as_str()))
                    .collect(),
            )
        }))
        .collect();
        for (path, tests) in rounds {
            let docs = docs(file(&files, path));
            let jobs: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "MPIJob").collect();
            assert_eq!(jobs.len(), tests.len(), "{name} {path}");
            let mut busy = BTreeSet::new();
            for (job, (want_name, nodes, output)) in jobs.iter().zip(&tests) {
                assert_eq!(job["metadata"]["name"], *want_name, "{name} {path}");
                let want: BTreeSet<String> = nodes.iter().map(|n| n.to_string()).collect();
                assert_eq!(pinned(job), want, "{name} {path}");
                assert_eq!(
                    job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"],
                    json!(nodes.len()),
                    "{name} {path}"
                );
                for n in &want {
                    assert!(
                        busy.insert(n.clone()),
                        "{name} {path}: {n} twice in a round"
                    );
                }
                assert!(
                    run.contains(&format!("collect {want_name} {output}\n")),
                    "{name}: run.sh does not collect {want_name} into {output}"
                );
                if let Err(e) = consumers::crd_schema_strict(job, "mpi-operator-v2beta1.json") {
                    panic!("{name} {path}: {e}");
                }
                if let Err(e) =
                    consumers::kubernetes_validate_strict(&templates_as_pods(job), &versions)
                {
                    panic!("{name} {path}: {e}");
                }
            }
            for cd in docs.iter().filter(|d| d["kind"] == "ComputeDomain") {
                if let Err(e) = consumers::crd_schema_strict(cd, "compute-domain-v1beta1.json") {
                    panic!("{name} {path}: {e}");
                }
            }
        }
    }
}

#[test]
fn slurm_rounds_run_each_pair_as_a_parallel_step_on_its_nodes() {
    for name in PROFILES {
        let (c, files) = campaign(name, Scheduler::Slurm, "gpu[01-06]");
        consumers::bash_syntax(file(&files, "run.sh")).unwrap();
        for r in &c.rounds {
            let script = file(&files, &r.file);
            consumers::bash_syntax(script).unwrap_or_else(|e| panic!("{name} {}: {e}", r.file));
            assert!(script.contains("#SBATCH --nodes=6\n"), "{script}");
            assert!(
                script.contains("#SBATCH --nodelist=gpu[01-06]\n"),
                "{script}"
            );
            for p in &r.pairs {
                assert!(
                    script.contains(&format!(
                        "step {} 2 {},{} &\n",
                        p.output, p.nodes[0], p.nodes[1]
                    )),
                    "{name} {}: no step for {}\n{script}",
                    r.file,
                    p.output
                );
            }
            assert!(script.trim_end().ends_with("wait"), "{script}");
            // Without it srun inherits the whole job's SLURM_NTASKS and Slurm refuses every step
            // (seen on 22.05; the real run is crates/roce-inspect/tests/slurm_sweep.rs).
            assert!(
                script.contains(r#"--ntasks="$(( $2 * SLURM_NTASKS_PER_NODE ))""#),
                "{script}"
            );
        }
        let run = file(&files, "run.sh");
        let order: Vec<&str> = run
            .lines()
            .filter_map(|l| l.strip_prefix("sbatch --wait "))
            .collect();
        let want: Vec<String> = std::iter::once("checks.sbatch || true".to_string())
            .chain(c.rounds.iter().map(|r| format!("{} || true", r.file)))
            .collect();
        assert_eq!(order, want);
    }
}

#[test]
fn the_campaign_json_is_what_report_reads() {
    let (c, files) = campaign("coreweave/h100-ib", Scheduler::Kubernetes, "gpu[01-04]");
    let back: Campaign = serde_json::from_str(file(&files, "campaign.json")).unwrap();
    assert_eq!(back, c);
    // a node name that is not one is refused when read back, not trusted
    let bad = file(&files, "campaign.json").replace("gpu01", "GPU_01");
    assert!(serde_json::from_str::<Campaign>(&bad).is_err());
}

/// A pair is a test of the network: where the profile has a ComputeDomain (multi-node NVLink), two
/// nodes of one NVLink domain would talk over NVLink (NCCL_MNNVL_ENABLE defaults to auto), so the pairs
/// turn it off on both schedulers; the single-node checks, and profiles without a domain, are left as
/// they are.
#[test]
fn pairs_of_an_nvlink_domain_take_the_network() {
    let off = |text: &str| {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.contains(&"export NCCL_MNNVL_ENABLE=0")
            || lines
                .windows(2)
                .any(|w| w == ["- name: NCCL_MNNVL_ENABLE", "value: \"0\""])
    };
    for scheduler in [Scheduler::Kubernetes, Scheduler::Slurm] {
        let (c, files) = campaign("aws/p6e-gb200", scheduler, "gpu[01-04]");
        assert!(
            plan_of("aws/p6e-gb200")
                .dra_spec
                .nvlink_domain
                .compute_domain()
                .is_some()
        );
        // the profile's own NCCL_MNNVL_ENABLE=1 stays in the checks
        let checks = files
            .iter()
            .find(|a| a.path.starts_with("checks."))
            .unwrap();
        assert!(!off(&checks.contents), "{scheduler:?} checks");
        assert!(
            checks.contents.contains("NCCL_MNNVL_ENABLE"),
            "{scheduler:?} checks"
        );
        for r in &c.rounds {
            let text = file(&files, &r.file);
            assert!(off(text), "{scheduler:?} {}:\n{text}", r.file);
            assert_eq!(
                text.matches("NCCL_MNNVL_ENABLE=1").count(),
                0,
                "{scheduler:?} {}",
                r.file
            );
        }
        let (_, files) = campaign("oci/h100-roce", scheduler, "gpu[01-04]");
        assert!(
            files
                .iter()
                .all(|a| !a.contents.contains("NCCL_MNNVL_ENABLE")),
            "{scheduler:?} oci/h100-roce"
        );
    }
}

/// The single-node checks' launchers run the test, then the rail check on the worker (one `bash -c`
/// line, valid bash); the pairs' launchers run `mpirun` alone. EFA (aws-ofi-nccl) has no rail check.
#[test]
fn check_launchers_run_the_rail_check_after_the_test() {
    for name in PROFILES {
        let (c, files) = campaign(name, Scheduler::Kubernetes, "gpu[01-03]");
        let launcher = |job: &Value| {
            job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].clone()
        };
        let efa = plan_of(name).provider == roce_model::fabric::provider::Provider::Ofi;
        for job in docs(file(&files, "checks.yaml"))
            .iter()
            .filter(|d| d["kind"] == "MPIJob")
        {
            let l = launcher(job);
            if efa {
                assert_eq!(l["command"], json!(["mpirun"]), "{name}");
                continue;
            }
            assert_eq!(l["command"], json!(["bash", "-c"]), "{name}");
            let script = l["args"][0].as_str().unwrap();
            assert!(
                script.starts_with("mpirun ") && script.contains("ib_write_bw"),
                "{name}: {script}"
            );
            consumers::bash_syntax(script).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for r in &c.rounds {
            for job in docs(file(&files, &r.file))
                .iter()
                .filter(|d| d["kind"] == "MPIJob")
            {
                assert_eq!(
                    launcher(job)["command"],
                    json!(["mpirun"]),
                    "{name} {}",
                    r.file
                );
            }
        }
    }
}
