//! The sbatch target on a real Slurm: every built-in profile's script is submitted with
//! `sbatch --wait` to a single-node cluster (tests/support/slurm.rs) and every variable of the
//! profile's plan must reach every task of the job step with the exact value. Plus the sbatch
//! options (`--nodes`, `--job-name`, `--time`, `--partition`, `--segment`, `--command`, `--body`,
//! `--mpi-pmix`), SUNK NodeSets, and proof that the comparison fails when the env differs.
//!
//! Skipped loudly when Slurm is not installed, a failure under `CI=true` (`.ci/install-tools`
//! installs it).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::{Plan, RenderOptions, SlurmOptions, Target, plan, render};

use crate::support::slurm::{self, JOB_TIMEOUT, Slurm};

fn plan_of(name: &str) -> Plan {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    let profile = loaded
        .profile
        .unwrap_or_else(|| panic!("{name}: {:#?}", loaded.problems));
    plan::lower(&profile)
}

fn sbatch(plan: &Plan, slurm: SlurmOptions) -> String {
    let opts = RenderOptions {
        slurm,
        ..RenderOptions::default()
    };
    let files = render(plan, Target::Sbatch, &opts).unwrap();
    assert_eq!(files.len(), 1);
    files[0].contents.clone()
}

/// One node that every built-in profile's script fits on unchanged: every profile's partition, and
/// as many fake GPUs and CPUs as the largest profile asks per node (8, for h100-ib and b200-ib).
fn builtin_config() -> slurm::Config {
    let plans: Vec<Plan> = builtin::names().map(plan_of).collect();
    slurm::Config::new(
        plans.iter().map(|p| p.slurm.partition.clone()),
        plans
            .iter()
            .map(|p| p.slurm.gpus_per_node)
            .max()
            .unwrap_or(4),
        plans
            .iter()
            .map(|p| p.slurm.ntasks_per_node)
            .max()
            .unwrap_or(4),
    )
}

fn cluster() -> Option<Arc<Slurm>> {
    slurm::shared(builtin_config)
}

/// The step every task runs: write its environment, NUL-separated, to `env.<rank>` in the job dir.
const DUMP_ENV: &str = r#"exec env -0 > "env.$SLURM_PROCID""#;

/// Every task's environment, by rank.
fn task_envs(dir: &Path) -> BTreeMap<u32, BTreeMap<String, String>> {
    let mut envs = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rank) = name.strip_prefix("env.").and_then(|r| r.parse().ok()) else {
            continue;
        };
        envs.insert(rank, parse_env0(&std::fs::read(entry.path()).unwrap()));
    }
    envs
}

fn parse_env0(bytes: &[u8]) -> BTreeMap<String, String> {
    bytes
        .split(|b| *b == 0)
        .filter(|entry| !entry.is_empty())
        .filter_map(|entry| {
            let text = String::from_utf8_lossy(entry);
            text.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// What differs between the plan's environment and one task's: missing or different values.
fn env_mismatches(plan: &Plan, seen: &BTreeMap<String, String>) -> Vec<String> {
    plan.env
        .iter()
        .filter_map(|e| match seen.get(&e.name) {
            None => Some(format!("{} is missing (want {:?})", e.name, e.value)),
            Some(v) if *v != e.value => Some(format!("{}={v:?}, want {:?}", e.name, e.value)),
            Some(_) => None,
        })
        .collect()
}

/// Submits `script` (with `args`) and returns the job and each task's environment, asserting that
/// the job succeeded and that every task of the step wrote one.
fn run(
    cluster: &Slurm,
    script: &str,
    args: &[&str],
    tasks: u32,
) -> (slurm::Job, BTreeMap<u32, BTreeMap<String, String>>) {
    let job = cluster
        .sbatch_wait(script, args, JOB_TIMEOUT)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        job.status.success(),
        "the job failed:\n{}",
        job.report(cluster)
    );
    let envs = task_envs(&job.dir);
    let ranks: Vec<u32> = envs.keys().copied().collect();
    assert_eq!(
        ranks,
        (0..tasks).collect::<Vec<_>>(),
        "want one env file per task\n{}",
        job.report(cluster)
    );
    (job, envs)
}

/// Asserts that every task saw exactly the plan's environment.
fn assert_env_reached(
    plan: &Plan,
    job: &slurm::Job,
    envs: &BTreeMap<u32, BTreeMap<String, String>>,
    cluster: &Slurm,
) {
    assert!(
        !plan.env.is_empty(),
        "{}: a plan with no env proves nothing",
        plan.profile
    );
    for (rank, env) in envs {
        let bad = env_mismatches(plan, env);
        assert!(
            bad.is_empty(),
            "{}: task {rank} does not see the profile's environment:\n  {}\n{}",
            plan.profile,
            bad.join("\n  "),
            job.report(cluster)
        );
    }
}

/// The default script, exactly as `roce render --target sbatch` writes it, run as
/// `sbatch job.sbatch bash -c 'env -0 > env.$SLURM_PROCID'`: every task must see every variable, and
/// the `#SBATCH` lines must have shaped the allocation.
fn env_reaches_every_task(name: &str) {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of(name);
    // The harness has one node: a profile whose job spans more (`job nodes=18`) runs with `--nodes 1`, the
    // one override; every other `#SBATCH` line is the profile's.
    let (opts, nodes) = if plan.slurm.nodes > 1 {
        let one = SlurmOptions {
            nodes: Some(1),
            ..SlurmOptions::default()
        };
        (one, 1)
    } else {
        (SlurmOptions::default(), plan.slurm.nodes)
    };
    let script = sbatch(&plan, opts);
    let tasks = plan.slurm.ntasks_per_node * nodes;
    let (job, envs) = run(&cluster, &script, &["bash", "-c", DUMP_ENV], tasks);
    assert_env_reached(&plan, &job, &envs, &cluster);
    for env in envs.values() {
        let want = [
            ("SLURM_JOB_PARTITION", plan.slurm.partition.clone()),
            ("SLURM_JOB_NAME", plan.short_name()),
            ("SLURM_JOB_NUM_NODES", nodes.to_string()),
            ("SLURM_NTASKS", tasks.to_string()),
            ("SLURM_GPUS_ON_NODE", plan.slurm.gpus_per_node.to_string()),
        ];
        for (k, v) in want {
            assert_eq!(
                env.get(k),
                Some(&v),
                "{name}: {k}\n{}",
                job.report(&cluster)
            );
        }
        // Without a device cgroup Slurm does not renumber: a job next to another one on the node
        // sees e.g. 4,5,6,7. What counts is that the step sees gpus-per-node distinct devices.
        let mut visible: Vec<&str> = env
            .get("CUDA_VISIBLE_DEVICES")
            .map(|v| v.split(',').collect())
            .unwrap_or_default();
        visible.sort_unstable();
        visible.dedup();
        assert_eq!(
            visible.len(),
            plan.slurm.gpus_per_node as usize,
            "{name}: CUDA_VISIBLE_DEVICES={:?}\n{}",
            env.get("CUDA_VISIBLE_DEVICES"),
            job.report(&cluster)
        );
    }
}

macro_rules! profile_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                env_reaches_every_task($name);
            }
        )*
        const TESTED: &[&str] = &[$($name),*];
    };
}

profile_tests! {
    env_reaches_the_step_b200_ib => "coreweave/b200-ib",
    env_reaches_the_step_gb200_ib => "coreweave/gb200-ib",
    env_reaches_the_step_gb300_ib => "coreweave/gb300-ib",
    env_reaches_the_step_gb300_roce => "coreweave/gb300-roce",
    env_reaches_the_step_gb300_roce_nixl => "coreweave/gb300-roce-nixl",
    env_reaches_the_step_gb300_roce_sunk => "coreweave/gb300-roce-sunk",
    env_reaches_the_step_h100_ib => "coreweave/h100-ib",
    env_reaches_the_step_gb300_roce_dra => "coreweave/gb300-roce-dra",
    env_reaches_the_step_oci_gb200_roce_dranet => "oci/gb200-roce-dranet",
    env_reaches_the_step_aws_p5_efa => "aws/p5-efa",
    env_reaches_the_step_aws_p6e_gb200 => "aws/p6e-gb200",
    env_reaches_the_step_gcp_a3_ultra => "gcp/a3-ultra",
    env_reaches_the_step_gcp_a3_ultra_dranet => "gcp/a3-ultra-dranet",
    env_reaches_the_step_gcp_a4x => "gcp/a4x",
    env_reaches_the_step_gcp_a4x_max => "gcp/a4x-max",
    env_reaches_the_step_azure_ndv5_ib => "azure/ndv5-ib",
    env_reaches_the_step_azure_ndv5_ib_sriov => "azure/ndv5-ib-sriov",
    env_reaches_the_step_azure_gb300_ib => "azure/gb300-ib",
    env_reaches_the_step_azure_gb300_ib_dranet => "azure/gb300-ib-dranet",
    env_reaches_the_step_oci_h100_roce => "oci/h100-roce",
    env_reaches_the_step_oci_h100_hostnet => "oci/h100-hostnet",
    env_reaches_the_step_nebius_h100_ib => "nebius/h100-ib",
}

#[test]
fn every_builtin_profile_has_a_real_slurm_test() {
    let mut tested: Vec<&str> = TESTED.to_vec();
    tested.sort_unstable();
    let mut names: Vec<&str> = builtin::names().collect();
    names.sort_unstable();
    assert_eq!(
        tested, names,
        "add the new profile to profile_tests! in this file"
    );
}

/// The comparison catches a changed value, a missing export and a script rendered from a changed
/// profile: the per-profile tests above can fail.
#[test]
fn a_changed_env_makes_the_comparison_fail() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb300-roce");
    assert_eq!(plan.env_value("NCCL_IB_TC"), Some("96"));

    // 1. The job ran the real script; the expectation changes after rendering.
    let script = sbatch(&plan, SlurmOptions::default());
    let (job, envs) = run(&cluster, &script, &["bash", "-c", DUMP_ENV], 4);
    assert_env_reached(&plan, &job, &envs, &cluster);
    let mut changed = plan.clone();
    changed
        .env
        .iter_mut()
        .find(|e| e.name == "NCCL_IB_TC")
        .unwrap()
        .value = "97".into();
    for env in envs.values() {
        assert_eq!(
            env_mismatches(&changed, env),
            ["NCCL_IB_TC=\"96\", want \"97\""]
        );
    }

    // 2. The script comes from a changed profile; the expectation is the real one.
    let mut mutated = plan.clone();
    mutated
        .env
        .iter_mut()
        .find(|e| e.name == "NCCL_IB_HCA")
        .unwrap()
        .value = "mlx5".into();
    let (_, envs) = run(
        &cluster,
        &sbatch(&mutated, SlurmOptions::default()),
        &["bash", "-c", DUMP_ENV],
        4,
    );
    for env in envs.values() {
        assert_eq!(
            env_mismatches(&plan, env),
            ["NCCL_IB_HCA=\"mlx5\", want \"ibp\""]
        );
    }

    // 3. An export line is lost on the way.
    let dropped: String = script
        .lines()
        .filter(|l| !l.starts_with("export UCX_TLS="))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(dropped, script);
    let (_, envs) = run(&cluster, &dropped, &["bash", "-c", DUMP_ENV], 4);
    for env in envs.values() {
        assert_eq!(
            env_mismatches(&plan, env),
            ["UCX_TLS is missing (want \"tcp\")"]
        );
    }
}

/// Values with every shell-special character arrive byte for byte: the single-quoting of the
/// exports survives bash, sbatch and srun.
#[test]
fn shell_special_values_reach_the_step_unchanged() {
    let Some(cluster) = cluster() else { return };
    let mut plan = plan_of("coreweave/gb300-roce-sunk");
    let template = plan.env[0].clone();
    let values = [
        "",
        "two words",
        "it's",
        "'quoted'",
        "\"double\"",
        "$HOME",
        "${NCCL_IB_HCA}",
        "$(touch pwned)",
        "`touch pwned`",
        "back\\slash\\",
        "*",
        "~",
        "!x",
        "a;b|c&d",
        "#not a comment",
        "=starts-with-equals",
        "--flag",
        "ünïcödé ✓",
        "  padded  ",
    ];
    for (i, v) in values.iter().enumerate() {
        let mut e = template.clone();
        e.name = format!("ROCE_TEST_{i}");
        e.value = (*v).to_string();
        plan.env.push(e);
    }
    let (job, envs) = run(
        &cluster,
        &sbatch(&plan, SlurmOptions::default()),
        &["bash", "-c", DUMP_ENV],
        4,
    );
    assert_env_reached(&plan, &job, &envs, &cluster);
    assert!(!job.dir.join("pwned").exists(), "a value was executed");
}

/// SUNK NodeSets attach the fabric themselves: their script has no Multus networks, no RDMA
/// resource, no `--gres` and no "the nodes must attach" comment. The same check finds them in the
/// direct-pod profiles, so it can fail.
#[test]
fn sunk_scripts_have_no_multus_or_resource_directives() {
    let plans: Vec<Plan> = builtin::names().map(plan_of).collect();
    let mut forbidden: Vec<String> = vec![
        "multus".into(),
        "--gres".into(),
        "must already attach".into(),
    ];
    for p in &plans {
        if let Some(w) = &p.wiring {
            forbidden.extend(
                w.networks
                    .iter()
                    .flat_map(|n| [n.name().to_lowercase(), n.namespace().to_lowercase()]),
            );
            forbidden.extend(w.resources.iter().map(|(r, _)| r.to_lowercase()));
        }
    }
    forbidden.sort();
    forbidden.dedup();
    let allowed = [
        "job-name",
        "partition",
        "nodes",
        "ntasks-per-node",
        "gpus-per-node",
        "time",
        "segment",
    ];
    let found = |script: &str| -> Vec<String> {
        let lower = script.to_lowercase();
        forbidden
            .iter()
            .filter(|f| lower.contains(f.as_str()))
            .cloned()
            .collect()
    };
    let mut sunk = 0;
    for p in &plans {
        let script = sbatch(
            p,
            SlurmOptions {
                time: Some("1:00:00".into()),
                segment: Some(16),
                ..SlurmOptions::default()
            },
        );
        for line in script.lines().filter(|l| l.starts_with("#SBATCH")) {
            let key = line
                .trim_start_matches("#SBATCH --")
                .split('=')
                .next()
                .unwrap_or_default();
            assert!(
                allowed.contains(&key),
                "{}: unexpected directive {line}",
                p.profile
            );
        }
        if p.wiring.is_none() {
            sunk += 1;
            assert_eq!(
                found(&script),
                Vec::<String>::new(),
                "{}:\n{script}",
                p.profile
            );
        } else if p.wiring.as_ref().is_some_and(|w| !w.networks.is_empty()) {
            assert!(
                !found(&script).is_empty(),
                "{}: the check would find nothing here either:\n{script}",
                p.profile
            );
        }
    }
    assert!(sunk > 0, "no SUNK profile among the built-ins");
}

/// `--job-name`, `--partition`, `--nodes` and `--time` reach the job record; the job reads it with
/// `scontrol show job` from inside.
#[test]
fn options_reach_the_job_record() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb300-roce");
    let partition = cluster
        .config()
        .partitions
        .iter()
        .find(|p| **p != plan.slurm.partition)
        .cloned()
        .expect("a second partition");
    let body =
        format!("scontrol -o show job \"$SLURM_JOB_ID\" > job.info\nsrun bash -c '{DUMP_ENV}'\n");
    let script = sbatch(
        &plan,
        SlurmOptions {
            partition: Some(partition.clone()),
            nodes: Some(1),
            job_name: Some("roce-e2e".into()),
            time: Some("00:05:00".into()),
            body: Some(body),
            ..SlurmOptions::default()
        },
    );
    let (job, envs) = run(&cluster, &script, &[], 4);
    assert_env_reached(&plan, &job, &envs, &cluster);
    let info = std::fs::read_to_string(job.dir.join("job.info")).unwrap_or_default();
    for want in [
        "JobName=roce-e2e".to_string(),
        format!("Partition={partition}"),
        "NumNodes=1".to_string(),
        "TimeLimit=00:05:00".to_string(),
    ] {
        assert!(
            info.split_whitespace().any(|w| w == want),
            "{want} not in:\n{info}\n{}",
            job.report(&cluster)
        );
    }
}

/// `--command` bakes the step in: the script needs no arguments.
#[test]
fn command_option_is_the_step() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb200-ib");
    let script = sbatch(
        &plan,
        SlurmOptions {
            command: Some(format!("bash -c '{DUMP_ENV}'")),
            ..SlurmOptions::default()
        },
    );
    let (job, envs) = run(&cluster, &script, &[], 4);
    assert_env_reached(&plan, &job, &envs, &cluster);
}

/// `--body FILE` replaces the srun step with the user's own text, which runs after the exports.
#[test]
fn body_replaces_the_step() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb300-roce-sunk");
    let body = format!(
        "# my job\necho \"batch sees NCCL_IB_TC=$NCCL_IB_TC\" > batch.txt\nsrun --ntasks=2 bash -c '{DUMP_ENV}'\n"
    );
    let script = sbatch(
        &plan,
        SlurmOptions {
            body: Some(body),
            ..SlurmOptions::default()
        },
    );
    assert!(!script.contains("\"$@\""), "{script}");
    let (job, envs) = run(&cluster, &script, &[], 2);
    assert_env_reached(&plan, &job, &envs, &cluster);
    assert_eq!(
        std::fs::read_to_string(job.dir.join("batch.txt")).unwrap_or_default(),
        "batch sees NCCL_IB_TC=96\n",
        "{}",
        job.report(&cluster)
    );
}

/// `--segment`: Slurm ≥ 24.11 schedules it with topology/block; older sbatch (Debian bookworm's
/// 22.05) does not know the option and refuses the whole script. Either way, what this Slurm does is
/// asserted, so a change shows up here.
#[test]
fn segment_directive_on_this_slurm() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb300-roce");
    let segment = if cluster.has_block_topology() { 1 } else { 16 };
    let script = sbatch(
        &plan,
        SlurmOptions {
            segment: Some(segment),
            ..SlurmOptions::default()
        },
    );
    assert!(
        script.contains(&format!("\n#SBATCH --segment={segment}\n")),
        "{script}"
    );
    if cluster.has_block_topology() {
        let (job, envs) = run(&cluster, &script, &["bash", "-c", DUMP_ENV], 4);
        assert_env_reached(&plan, &job, &envs, &cluster);
    } else {
        let job = cluster
            .sbatch_wait(&script, &["true"], JOB_TIMEOUT)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !job.status.success(),
            "Slurm {} accepted --segment:\n{}",
            cluster.version_text,
            job.report(&cluster)
        );
        assert!(
            job.stderr.contains("unrecognized option '--segment=16'"),
            "{}",
            job.report(&cluster)
        );
        assert_eq!(job.id, None, "nothing was submitted");
    }
}

/// `srun --mpi=pmix`: the step gets a PMIx rank per task. Needs Slurm's pmix plugin and the PMIx
/// library it loads (Debian: libpmix-dev, which ships the unversioned libpmix.so the plugin
/// dlopens); skipped loudly without them, a failure under CI.
#[test]
fn mpi_pmix_gives_every_task_a_pmix_rank() {
    let Some(cluster) = cluster() else { return };
    let plan = plan_of("coreweave/gb300-roce-nixl");
    let cases = [
        SlurmOptions {
            mpi_pmix: true,
            command: Some(format!("bash -c '{DUMP_ENV}'")),
            ..SlurmOptions::default()
        },
        SlurmOptions {
            mpi_pmix: true,
            body: Some(format!("srun bash -c '{DUMP_ENV}'\n")),
            ..SlurmOptions::default()
        },
    ];
    for opts in cases {
        let script = sbatch(&plan, opts);
        let job = cluster
            .sbatch_wait(&script, &[], JOB_TIMEOUT)
            .unwrap_or_else(|e| panic!("{e}"));
        let output = job.output();
        if !job.status.success()
            && (output.contains("can not load PMIx library")
                || output.contains("Invalid MPI type 'pmix'"))
        {
            slurm::skip(&format!(
                "srun --mpi=pmix is not usable on this Slurm ({}): {}",
                cluster.version_text,
                output.lines().next().unwrap_or_default()
            ));
            return;
        }
        assert!(job.status.success(), "{}", job.report(&cluster));
        let envs = task_envs(&job.dir);
        assert_eq!(envs.len(), 4, "{}", job.report(&cluster));
        assert_env_reached(&plan, &job, &envs, &cluster);
        for (rank, env) in &envs {
            assert_eq!(
                env.get("PMIX_RANK"),
                Some(&rank.to_string()),
                "{}",
                job.report(&cluster)
            );
        }
    }
}

/// The harness starts in under a minute and stops only what it started: its daemons, the
/// slurmstepd of a still-running job and that job's tasks go; a process merely named `slurmd` that
/// it did not start stays.
#[test]
fn teardown_stops_everything_it_started_and_nothing_else() {
    if let Err(why) = slurm::find_bins() {
        slurm::skip(&why);
        return;
    }
    // A decoy with a daemon's name, started by this test and not by the harness.
    let decoy_dir = std::env::temp_dir().join(format!("roce-harness-decoy-{}", std::process::id()));
    std::fs::create_dir_all(&decoy_dir).unwrap();
    let decoy_exe = decoy_dir.join("slurmd");
    std::fs::copy("/bin/sleep", &decoy_exe).unwrap();
    struct Decoy(std::process::Child);
    impl Drop for Decoy {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let decoy = Decoy(
        std::process::Command::new(&decoy_exe)
            .arg("300")
            .spawn()
            .unwrap(),
    );

    let config = slurm::Config::new(["teardown"], 4, 4);
    let Some(mut cluster) = slurm::start(&config) else {
        return;
    };
    assert!(
        cluster.startup < slurm::STARTUP_BUDGET,
        "startup took {:?}",
        cluster.startup
    );
    eprintln!("slurm harness startup: {:?}", cluster.startup);
    let (_, id) = cluster
        .sbatch("#!/bin/bash\n#SBATCH --ntasks=2\nsrun sleep 300\n", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    // Wait for the step's tasks (marked through the job's environment) to be running.
    let t0 = std::time::Instant::now();
    let before = loop {
        let marked = slurm::marked_processes(cluster.dir());
        let sleeps = marked
            .iter()
            .filter(|(_, c)| c.starts_with("sleep") || c.contains("/sleep "))
            .count();
        if sleeps >= 2 && marked.iter().any(|(_, c)| c.contains("slurmstepd")) {
            break marked;
        }
        assert!(
            t0.elapsed() < JOB_TIMEOUT,
            "job {id} never started its tasks; marked processes: {marked:?}\n{}",
            cluster.diagnostics()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let daemons = cluster.daemon_pids();
    assert_eq!(daemons.len(), 3, "{daemons:?}");
    for (_, pid) in &daemons {
        assert!(
            before.iter().any(|(p, _)| p == pid),
            "daemon {pid} not marked: {before:?}"
        );
    }
    let dir = cluster.dir().to_path_buf();
    let left = cluster.stop();
    assert_eq!(left, Vec::<(u32, String)>::new(), "survivors");
    for (pid, cmd) in &before {
        assert!(
            !slurm::is_alive(*pid),
            "{pid} ({cmd}) survived the teardown"
        );
    }
    assert!(slurm::marked_processes(&dir).is_empty());
    assert!(
        slurm::is_alive(decoy.0.id()),
        "the teardown killed a process it did not start"
    );
    drop(cluster);
    assert!(
        !dir.exists(),
        "the temp dir {} was not removed",
        dir.display()
    );
    drop(decoy);
    let _ = std::fs::remove_dir_all(&decoy_dir);
}

/// Several nodes on this one machine (Slurm's multiple-slurmd mode): each node has its own slurmd
/// and log and comes up IDLE, one step over all of them runs a task on each (which knows its node by
/// `SLURMD_NODENAME`), and a PMIx step across two nodes launches (their slurmstepds share this
/// machine's `/tmp` unless the harness gives each node its own TmpFS).
#[test]
fn several_nodes_each_with_its_own_slurmd() {
    let config = slurm::Config::new(["multi"], 2, 2).with_nodes(3);
    let Some(cluster) = slurm::start(&config) else {
        return;
    };
    assert_eq!(cluster.nodes(), ["roce1", "roce2", "roce3"]);
    assert_eq!(cluster.nodelist(), "roce[1-3]");
    let daemons: Vec<String> = cluster.daemon_pids().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        daemons,
        [
            "munged",
            "slurmctld",
            "slurmd-roce1",
            "slurmd-roce2",
            "slurmd-roce3"
        ]
    );
    for node in cluster.nodes() {
        assert_eq!(
            cluster.state_of(&node).as_deref(),
            Some("IDLE"),
            "{}",
            cluster.diagnostics()
        );
        assert!(
            cluster.slurmd_log(&node).is_file(),
            "no log for {node}\n{}",
            cluster.diagnostics()
        );
    }
    let job = cluster
        .sbatch_wait(
            "#!/bin/bash\n#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=2\n\
             srun bash -c 'echo \"$SLURMD_NODENAME $SLURM_STEP_NODELIST\" > task.$SLURM_PROCID'\n",
            &[],
            JOB_TIMEOUT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(job.status.success(), "{}", job.report(&cluster));
    let mut seen = BTreeMap::<String, u32>::new();
    for rank in 0..6 {
        let text =
            std::fs::read_to_string(job.dir.join(format!("task.{rank}"))).unwrap_or_default();
        let mut w = text.split_whitespace();
        let (node, list) = (w.next().unwrap_or_default(), w.next().unwrap_or_default());
        assert_eq!(
            list,
            "roce[1-3]",
            "task {rank}: {text:?}\n{}",
            job.report(&cluster)
        );
        *seen.entry(node.to_string()).or_default() += 1;
    }
    let want: BTreeMap<String, u32> = cluster.nodes().into_iter().map(|n| (n, 2)).collect();
    assert_eq!(seen, want, "{}", job.report(&cluster));
    let id = job.id.expect("a job id");
    for node in cluster.nodes() {
        let log = std::fs::read_to_string(cluster.slurmd_log(&node)).unwrap_or_default();
        assert!(
            log.contains(&format!("launch task StepId={id}.0 ")),
            "{node}'s slurmd did not launch the step:\n{log}"
        );
    }

    let job = cluster
        .sbatch_wait(
            "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n\
             srun --mpi=pmix bash -c 'echo \"$SLURMD_NODENAME $PMIX_RANK\" > pmix.$SLURM_PROCID'\n",
            &[],
            JOB_TIMEOUT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let output = job.output();
    if !job.status.success()
        && (output.contains("can not load PMIx library")
            || output.contains("Invalid MPI type 'pmix'"))
    {
        slurm::skip(&format!(
            "srun --mpi=pmix is not usable on this Slurm ({}): {}",
            cluster.version_text,
            output.lines().next().unwrap_or_default()
        ));
        return;
    }
    assert!(job.status.success(), "{}", job.report(&cluster));
    let mut ranks: Vec<String> = (0..2)
        .map(|r| std::fs::read_to_string(job.dir.join(format!("pmix.{r}"))).unwrap_or_default())
        .collect();
    ranks.sort();
    assert_eq!(
        ranks,
        ["roce1 0\n", "roce2 1\n"],
        "{}",
        job.report(&cluster)
    );
}

#[test]
fn version_parsing() {
    assert_eq!(slurm::parse_version("slurm-wlm 22.05.8"), Some((22, 5)));
    assert_eq!(slurm::parse_version("slurm 24.11.1"), Some((24, 11)));
    assert_eq!(slurm::parse_version("slurm-wlm"), None);
}

#[test]
fn env0_parsing_keeps_equals_and_empty_values() {
    let env = parse_env0(b"A=b=c\0EMPTY=\0NOEQ\0\0X=1");
    assert_eq!(env.get("A").map(String::as_str), Some("b=c"));
    assert_eq!(env.get("EMPTY").map(String::as_str), Some(""));
    assert_eq!(env.get("X").map(String::as_str), Some("1"));
    assert_eq!(env.len(), 3);
}

/// A test process killed without unwinding leaves its cluster running; the next start stops it. Here
/// a `sleep` stands in for such a leftover: marked with the temp dir of a test process that is gone.
#[test]
fn leftovers_of_a_dead_test_process_are_reaped() {
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    assert!(!slurm::is_alive(gone_pid));
    let dir = std::env::temp_dir().join(format!("roce-slurm-{gone_pid}-0-0"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut leftover = std::process::Command::new("sleep")
        .arg("300")
        .env(slurm::MARKER, &dir)
        .current_dir(&dir)
        .spawn()
        .unwrap();
    // A live process of a live owner (this test) is never touched.
    let mine = std::env::temp_dir().join(format!("roce-slurm-{}-0-0", std::process::id()));
    std::fs::create_dir_all(&mine).unwrap();
    let mut alive = std::process::Command::new("sleep")
        .arg("300")
        .env(slurm::MARKER, &mine)
        .spawn()
        .unwrap();

    let killed = slurm::reap_orphans();
    assert!(killed.contains(&leftover.id()), "{killed:?}");
    assert!(!killed.contains(&alive.id()), "{killed:?}");
    leftover.wait().unwrap();
    assert!(slurm::is_alive(alive.id()));
    alive.kill().unwrap();
    alive.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&mine);
}
