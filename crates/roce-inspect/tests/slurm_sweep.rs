//! A `roce sweep plan --scheduler slurm` campaign run on a real Slurm, and `roce sweep report` reading
//! what it wrote (issue #29: "the real Slurm in the test harness runs every round's steps (with a
//! stand-in for nccl-tests) and `report` reads what they wrote").
//!
//! The harness (crates/roce-render/tests/support/slurm.rs) starts five nodes `roce1`..`roce5` on this
//! machine, one slurmd each. The campaign is planned and rendered by the library exactly as the CLI does
//! it, with `--nccl-test` pointing at a stand-in: a bash script that prints, from each task's real Slurm
//! environment, what `all_reduce_perf` and NCCL print (the format of tests/support/fleet.rs), with
//! `SLURMD_NODENAME` as the host (every node of the harness is the same machine, so `hostname` would
//! not tell them apart). Pairs with one chosen node print half the bus bandwidth.
//!
//! `run.sh` is run unchanged (`sbatch --wait` per round) with `ROCE_SWEEP_RESULTS` pointing outside
//! the campaign's directory. Then: every output `campaign.json` names exists and holds one table whose
//! ranks ran on exactly the test's nodes, as steps of that round's job, the steps of a round at the same
//! time; and the report measures every test and judges the slow node bad, every other node ok.
//!
//! Here and not in roce-render's tests because it needs roce-inspect, which depends on roce-render: a
//! dev-dependency the other way would be a cycle. Skipped loudly when Slurm is not installed, a failure
//! under `CI=true` (`.ci/install-tools` installs it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use roce_inspect::sweep::{self, Cause, Expectation, State, Verdict};
use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::sweep::{Campaign, MARKER, NodeList, Scheduler, SweepOptions};
use roce_render::validation::ValidationOptions;
use roce_render::{RenderOptions, plan};

use crate::support::slurm;

/// 8 H100 and 16 RoCE rails per node: the simulator's profile.
const PROFILE: &str = "oci/h100-roce";
/// Odd: every round leaves one node out, so the rounds' node lists have holes (`roce[1,3-5]`).
const NODES: u32 = 5;
/// The node whose pairs are slow.
const SLOW_NODE: &str = "roce3";
/// A healthy pair's bus bandwidth (GB/s): 92 % of 16 x 200 Gb/s, as in the simulator.
const HEALTHY: f64 = 368.0;
/// A healthy single-node check (NVLink).
const NVLINK: f64 = 480.0;
/// What the slow node's pairs reach of [`HEALTHY`].
const SLOW_FACTOR: f64 = 0.5;
/// How long the whole campaign may take (it takes about 25 s).
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// The stand-in for `all_reduce_perf`: one process per rank, as srun starts them. Each rank prints its
/// `#  Rank` line and NCCL's INFO lines; rank 0 the header, then (after the "measurement", 2 s)
/// the table of the sizes `-b`/`-e`/`-f` ask for, and a `roce-standin:` line saying which job step it
/// was and when it ran.
const STANDIN: &str = r##"#!/bin/bash
# Stand-in for nccl-tests' all_reduce_perf, written by crates/roce-inspect/tests/slurm_sweep.rs.
set -euo pipefail
# NCCL prints gethostname(); the harness's nodes all share this machine, so the node is the host.
host=$SLURMD_NODENAME
rank=$SLURM_PROCID
nranks=$SLURM_NTASKS
nnodes=$SLURM_STEP_NUM_NODES
dev=$SLURM_LOCALID
local_ranks=$(( nranks / nnodes ))
pid=$$
idx=${host##*[!0-9]}
addr=10.1.0.$idx
p="$host:$pid:$pid [$dev] NCCL INFO"
start=$(date +%s.%N)

bytes() {
    case $1 in
        *G) echo $(( ${1%G} << 30 )) ;;
        *M) echo $(( ${1%M} << 20 )) ;;
        *K) echo $(( ${1%K} << 10 )) ;;
        *) echo "$1" ;;
    esac
}
min=$(bytes 32M) max=$(bytes 32M) factor=2
while [ $# -gt 0 ]; do
    case $1 in
        -b) min=$(bytes "$2"); shift 2 ;;
        -e) max=$(bytes "$2"); shift 2 ;;
        -f) factor=$2; shift 2 ;;
        *) shift ;;
    esac
done

if [ "$rank" -eq 0 ]; then
    echo "# Collective test starting: all_reduce_perf"
    echo "# nThread 1 nGpus 1 minBytes $min maxBytes $max step: $factor(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
    echo "#"
    echo "# Using devices"
fi
printf '#  Rank %2d Group  0 Pid %6d on %10s device  %d [0x%02x] NVIDIA H100 80GB HBM3\n' \
    "$rank" "$pid" "$host" "$dev" $(( 0x18 + dev * 0x10 ))
echo "$p Bootstrap: Using eth0:$addr<0>"
if [ "$rank" -eq 0 ]; then
    echo "$p NCCL version 2.28.9+cuda12.9"
fi
if [ -n "${NCCL_IB_GID_INDEX-}" ]; then
    echo "$p NCCL_IB_GID_INDEX set by environment to $NCCL_IB_GID_INDEX."
fi
echo "$p NET/Plugin: Could not find: libnccl-net.so."
list=""
for (( d = 0; d < @RAILS@; d++ )); do list+="[$d]mlx5_$d:1/RoCE "; done
echo "$p NET/IB : Using ${list}[RO]; OOB eth0:$addr<0>"
echo "$p Using network IB"
echo "$p GPU Direct RDMA Enabled for HCA 0 'mlx5_0'"
comm=$(printf '0x7f3a%04x' "$rank")
echo "$p comm $comm rank $rank nRanks $nranks nNodes $nnodes localRanks $local_ranks localRank $dev MNNVL 0"
if [ "$nnodes" -gt 1 ]; then
    if [ "$dev" -eq $(( local_ranks - 1 )) ]; then
        echo "$p Channel 00/0 : $rank[$dev] -> $(( (rank + 1) % nranks ))[0] [send] via NET/IB/$(( 2 * dev % @RAILS@ ))/GDRDMA"
    fi
    echo "$p NET/IB: Dev 0 Port 1 qpn $(( 1000 + rank )) mtu 5 GID 3 (0/$(printf '%08X' "$idx")FFFF0000)"
fi
echo "$p Init COMPLETE comm $comm rank $rank nranks $nranks cudaDev $dev nvmlDev $dev busId $(printf '%x' $(( 0x18 + dev * 0x10 )))000 commId 0x5eed - Init COMPLETE"

# The "measurement": long enough that steps started together overlap even on a slow machine.
sleep 2
if [ "$rank" -ne 0 ]; then
    exit 0
fi
busbw=@HEALTHY@
if [ "$nnodes" -eq 1 ]; then
    busbw=@NVLINK@
else
    for n in $(scontrol show hostnames "$SLURM_STEP_NODELIST"); do
        if [ "$n" = @SLOW@ ]; then
            busbw=$(awk -v b="$busbw" 'BEGIN { printf "%.2f", b * @SLOW_FACTOR@ }')
        fi
    done
fi
awk -v min="$min" -v max="$max" -v f="$factor" -v bw="$busbw" -v n="$nranks" 'BEGIN {
    print "#"
    print "#                                                              out-of-place                       in-place          "
    print "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    print "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
    split("0.86 0.93 0.97 0.99", ramp, " ")
    k = 0; sum = 0
    for (s = min; s <= max; s *= f) {
        k++
        b = bw * (k <= 4 ? ramp[k] : 1.0)
        b2 = b * 0.998
        alg = b / (2 * (n - 1) / n); alg2 = b2 / (2 * (n - 1) / n)
        printf "%12.0f  %12.0f     float     sum      -1  %7.1f  %6.2f  %6.2f      0  %7.1f  %6.2f  %6.2f      0\n", s, s / 4, s / alg / 1e3, alg, b, s / alg2 / 1e3, alg2, b2
        sum += b
    }
    printf "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4f \n#\n", sum / k
}'
echo "roce-standin: job $SLURM_JOB_ID step $SLURM_STEP_ID nodes $SLURM_STEP_NODELIST ntasks $nranks start $start end $(date +%s.%N)"
"##;

fn standin(rails: u32) -> String {
    STANDIN
        .replace("@RAILS@", &rails.to_string())
        .replace("@HEALTHY@", &format!("{HEALTHY:.2}"))
        .replace("@NVLINK@", &format!("{NVLINK:.2}"))
        .replace("@SLOW@", SLOW_NODE)
        .replace("@SLOW_FACTOR@", &SLOW_FACTOR.to_string())
}

/// One test of a job: its output and its nodes.
type Test<'a> = (&'a str, Vec<String>);

/// What rank 0's `roce-standin:` line says.
#[derive(Debug)]
struct Ran {
    job: u32,
    step: u32,
    nodes: Vec<String>,
    ntasks: u32,
    start: f64,
    end: f64,
}

fn ran(text: &str) -> Option<Ran> {
    let line = text.lines().find(|l| l.starts_with("roce-standin: "))?;
    let w: Vec<&str> = line.split_whitespace().collect();
    let field = |k: &str| w.iter().position(|x| *x == k).and_then(|i| w.get(i + 1));
    Some(Ran {
        job: field("job")?.parse().ok()?,
        step: field("step")?.parse().ok()?,
        nodes: NodeList::parse(field("nodes")?)
            .ok()?
            .nodes
            .iter()
            .map(|n| n.to_string())
            .collect(),
        ntasks: field("ntasks")?.parse().ok()?,
        start: field("start")?.parse().ok()?,
        end: field("end")?.parse().ok()?,
    })
}

/// The hosts of the `#  Rank N … on HOST …` lines, with how many ranks each.
fn ranks_by_host(text: &str) -> BTreeMap<String, u32> {
    let mut hosts = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("#  Rank ")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = w.iter().position(|x| *x == "on") {
            *hosts.entry(w[i + 1].to_string()).or_default() += 1;
        }
    }
    hosts
}

#[test]
fn every_round_runs_on_real_slurm_and_report_reads_what_it_wrote() {
    let profile = load(builtin::source(PROFILE).unwrap(), &BuiltinsOnly)
        .profile
        .unwrap();
    let job_plan = plan::lower(&profile);
    let config = slurm::Config::new(
        [job_plan.slurm.partition.clone()],
        job_plan.slurm.gpus_per_node,
        job_plan.slurm.ntasks_per_node,
    )
    .with_nodes(NODES);
    let Some(cluster) = slurm::start(&config) else {
        return;
    };
    let expect = Expectation::of(&profile);
    let rails = expect.rails.expect("the profile's rails");

    // The campaign, as `roce sweep plan --scheduler slurm --nccl-test STANDIN -o DIR` writes it.
    let dir = cluster.dir().join("campaign");
    let results = cluster.dir().join("results-elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let standin_path = cluster.dir().join("all_reduce_perf");
    std::fs::write(&standin_path, standin(rails)).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&standin_path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let opts = SweepOptions {
        scheduler: Scheduler::Slurm,
        ..SweepOptions::default()
    };
    let render = RenderOptions {
        validation: ValidationOptions {
            nccl_test: standin_path.display().to_string(),
            ..ValidationOptions::default()
        },
        ..RenderOptions::default()
    };
    let nodes = NodeList::parse(&cluster.nodelist()).unwrap();
    assert_eq!(nodes.nodes.len(), NODES as usize);
    let campaign = Campaign::plan(&job_plan, &nodes, &opts, &render).unwrap();
    for file in campaign.render(&job_plan, &opts, &render).unwrap() {
        std::fs::write(dir.join(&file.path), file.contents).unwrap();
    }
    assert_eq!(campaign.rounds.len(), 4, "{}", campaign.to_json());
    // An odd count leaves a node out of each round: its job's node list has a hole, e.g. roce[1,3-5].
    assert!(
        campaign.rounds.iter().any(|r| {
            std::fs::read_to_string(dir.join(&r.file))
                .unwrap()
                .lines()
                .any(|l| l.starts_with("#SBATCH --nodelist=") && l.contains('[') && l.contains(','))
        }),
        "no round's #SBATCH --nodelist has a hole"
    );

    // run.sh, unchanged: sbatch --wait per round.
    let t0 = Instant::now();
    let mut child = cluster
        .command(Path::new("/bin/bash"))
        .arg(dir.join("run.sh"))
        .env("ROCE_SWEEP_RESULTS", &results)
        .current_dir(&dir)
        .stdout(std::fs::File::create(dir.join("run.stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("run.stderr")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t0.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "run.sh did not finish within {RUN_TIMEOUT:?}\n{}",
                cluster.diagnostics()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("slurm_sweep: run.sh took {:?}", t0.elapsed());
    let stdout = std::fs::read_to_string(dir.join("run.stdout")).unwrap_or_default();
    let stderr = std::fs::read_to_string(dir.join("run.stderr")).unwrap_or_default();
    let context = || {
        format!(
            "--- run.sh stdout ---\n{stdout}\n--- run.sh stderr ---\n{stderr}\n{}",
            cluster.diagnostics()
        )
    };
    assert!(status.success(), "run.sh: {status}\n{}", context());
    assert!(stdout.contains("roce sweep: done"), "{}", context());
    // sbatch --wait says "Submitted batch job N" for the checks, then each round, in order.
    let jobs: Vec<u32> = stdout
        .lines()
        .chain(stderr.lines())
        .filter_map(|l| l.strip_prefix("Submitted batch job "))
        .filter_map(|id| id.trim().parse().ok())
        .collect();
    assert_eq!(jobs.len(), 1 + campaign.rounds.len(), "{}", context());
    for id in &jobs {
        let out = std::fs::read_to_string(dir.join(format!("slurm-{id}.out"))).unwrap_or_default();
        assert!(
            out.trim().is_empty(),
            "job {id}'s batch output:\n{out}\n{}",
            context()
        );
    }

    // PMIx (the scripts' SLURM_MPI_TYPE=pmix) missing: skip as tests/slurm.rs does (a failure under CI).
    let first = campaign.outputs().next().unwrap().0;
    let text = std::fs::read_to_string(results.join(first)).unwrap_or_default();
    if text.contains("can not load PMIx library") || text.contains("Invalid MPI type 'pmix'") {
        slurm::skip(&format!(
            "srun --mpi=pmix is not usable on this Slurm ({}): {}",
            cluster.version_text,
            text.lines().next().unwrap_or_default()
        ));
        return;
    }

    // Every output the campaign names: one step of its round's job, on exactly its nodes.
    let gpus = job_plan.slurm.gpus_per_node;
    let groups: Vec<(u32, Vec<Test<'_>>)> = std::iter::once((
        jobs[0],
        campaign
            .checks
            .iter()
            .map(|k| (k.output.as_str(), vec![k.node.to_string()]))
            .collect(),
    ))
    .chain(campaign.rounds.iter().zip(&jobs[1..]).map(|(r, id)| {
        (
            *id,
            r.pairs
                .iter()
                .map(|p| {
                    (
                        p.output.as_str(),
                        p.nodes.iter().map(|n| n.to_string()).collect(),
                    )
                })
                .collect(),
        )
    }))
    .collect();
    let mut tested = 0;
    for (job, tests) in &groups {
        let mut steps = BTreeSet::new();
        let mut spans = Vec::new();
        for (output, nodes) in tests {
            let path = results.join(output);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), context()));
            let what = || format!("{output}:\n{text}\n{}", context());
            // the checks job's rail step ran on every node (srun), and said why it measured nothing:
            // the harness has no ib_write_bw; no other marker (a failed or timed-out step)
            let skipped = format!("{MARKER} rails skipped (no ib_write_bw in the image)");
            if output.starts_with("nodes/") {
                assert_eq!(text.matches(&skipped).count(), 1, "rail step: {}", what());
            }
            assert!(
                !text.replace(&skipped, "").contains(MARKER),
                "the step failed: {}",
                what()
            );
            assert!(!text.contains("srun: "), "srun complained: {}", what());
            assert_eq!(
                text.matches("# Avg bus bandwidth").count(),
                1,
                "one table: {}",
                what()
            );
            let want: BTreeMap<String, u32> = nodes.iter().map(|n| (n.clone(), gpus)).collect();
            assert_eq!(ranks_by_host(&text), want, "ranks per node: {}", what());
            let r = ran(&text).unwrap_or_else(|| panic!("no roce-standin line: {}", what()));
            assert_eq!(r.job, *job, "{}", what());
            let mut step_nodes = r.nodes.clone();
            step_nodes.sort();
            let mut want_nodes = nodes.clone();
            want_nodes.sort();
            assert_eq!(step_nodes, want_nodes, "SLURM_STEP_NODELIST: {}", what());
            assert_eq!(r.ntasks, gpus * nodes.len() as u32, "{}", what());
            assert!(steps.insert(r.step), "step {} twice: {}", r.step, what());
            spans.push((output.to_string(), r.start, r.end));
            tested += 1;
        }
        // The steps of one job ran at the same time: each started before every other ended.
        for (a, a_start, _) in &spans {
            for (b, _, b_end) in &spans {
                assert!(
                    a_start < b_end,
                    "job {job}: {a} started after {b} ended: {spans:?}"
                );
            }
        }
    }
    assert_eq!(tested, campaign.outputs().count());

    // `roce sweep report --results RESULTS`: what the CLI does, through the library.
    let tests = sweep::read_all(&campaign, &expect, |p| std::fs::read(results.join(p)).ok());
    let report = sweep::judge(&campaign, tests, &expect);
    eprintln!("{}", report.to_text());
    let shown = || format!("{}\n{}", report.to_text(), context());
    assert_eq!(report.counts.missing, 0, "{}", shown());
    assert_eq!(
        report.counts.tests as usize,
        campaign.outputs().count(),
        "{}",
        shown()
    );
    for t in &report.tests {
        assert_eq!(t.state, State::Measured, "{}: {t:?}\n{}", t.output, shown());
        let want = if t.nodes.len() == 1 {
            NVLINK
        } else if t.nodes.iter().any(|n| n.as_str() == SLOW_NODE) {
            HEALTHY * SLOW_FACTOR
        } else {
            HEALTHY
        };
        let got = t.busbw.unwrap_or_default();
        assert!(
            (got - want).abs() < 0.01,
            "{}: busbw {got}, want {want}\n{}",
            t.output,
            shown()
        );
    }
    assert_eq!(report.fleet.verdict, "ok", "{}", shown());
    assert!(report.links.is_empty(), "{}", shown());
    for n in &report.nodes {
        if n.name.as_str() == SLOW_NODE {
            assert_eq!(n.verdict, Verdict::Bad, "{}", shown());
            assert_eq!(n.cause, Some(Cause::Slow), "{}", shown());
            assert_eq!(n.bad_tests, n.tests, "{}", shown());
        } else {
            assert_eq!(n.verdict, Verdict::Ok, "{}: {}", n.name, shown());
        }
    }
    assert_eq!(
        report
            .retest
            .drain
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>(),
        [SLOW_NODE],
        "{}",
        shown()
    );
}
