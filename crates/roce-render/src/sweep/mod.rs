//! Fleet validation campaigns (`roce sweep plan`): which nodes to test with which, in which round, and the
//! jobs that run each round on the user's scheduler.
//!
//! A campaign is data first ([`Campaign`], serialised as `campaign.json`, the contract `roce sweep report`
//! and other tools read): a single-node check of every node (NVLink, no fabric), then rounds of pairwise
//! nccl-tests, each round a perfect matching (`schedule`), so every node is busy in every round and meets
//! `partners` distinct others in that many rounds, not N². Every test is the `nccl-tests` workload of the
//! profile's plan — the same lowering, wiring and env as `--target nccl-tests-mpijob`/`nccl-tests-sbatch` —
//! pinned to its nodes:
//!
//! - Kubernetes: one file per round holding one MPIJob per pair, its workers required onto the pair's two
//!   nodes (`kubernetes.io/hostname`) and apart from each other; `run.sh` applies a round, waits for its
//!   MPIJobs and writes each launcher's log where the campaign says.
//! - Slurm: one batch script per round whose steps run the pairs in parallel (`srun --nodelist … &`,
//!   `wait`), each writing its output where the campaign says; `run.sh` submits the rounds in order.

mod nodes;
mod schedule;

mod kubernetes;
mod rails;
mod slurm;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use nodes::{NodeList, NodeListError, NodeName};

use crate::plan::Plan;
use crate::{Artifact, RenderError, RenderOptions, Workload};

/// The `schema` field of `campaign.json`; bumped when a field changes meaning.
pub const CAMPAIGN_SCHEMA: &str = "roce.dev/sweep-campaign/v1";

/// The file a campaign is written to, in its directory.
pub const CAMPAIGN_FILE: &str = "campaign.json";

/// Where results go, under the campaign's directory (paths in [`Campaign`] are relative to it).
pub const RESULTS_DIR: &str = "results";

/// What the run scripts append to a test's output when it did not finish: `roce-sweep: timeout` (the test
/// outlived its time limit: hung) or `roce-sweep: exit N` (it failed).
pub const MARKER: &str = "roce-sweep:";

/// The scheduler a campaign runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scheduler {
    /// MPIJobs (Kubeflow MPI Operator, `kubeflow.org/v2beta1`) pinned to their nodes.
    Kubernetes,
    /// Batch scripts whose `srun` steps run the pairs in parallel.
    Slurm,
}

/// Options of a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepOptions {
    /// Distinct partners every node meets (default 3).
    pub partners: u32,
    /// The scheduler.
    pub scheduler: Scheduler,
    /// Prefix of job names (default `sweep`).
    pub name: String,
    /// Time limit of one test, minutes (default 15): a test still running then counts as hung.
    pub time_limit_min: u32,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            partners: 3,
            scheduler: Scheduler::Kubernetes,
            name: "sweep".into(),
            time_limit_min: 15,
        }
    }
}

/// A campaign: what runs where, and where each result goes. Serialised as `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    /// [`CAMPAIGN_SCHEMA`].
    pub schema: String,
    /// The profile's name.
    pub profile: String,
    /// The scheduler the jobs are for.
    pub scheduler: Scheduler,
    /// Partners each node meets.
    pub partners: u32,
    /// GPUs (ranks) per node.
    pub gpus_per_node: u32,
    /// The nccl-tests command every test runs.
    pub command: Vec<String>,
    /// Nodes tested, in list order.
    pub nodes: Vec<NodeName>,
    /// Nodes the list named that cannot be tested, with why.
    pub excluded: IndexMap<NodeName, String>,
    /// Single-node checks (all nodes at once, before the pairs).
    pub checks: Vec<Check>,
    /// Pairwise rounds, in order.
    pub rounds: Vec<Round>,
}

/// A single-node test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// The node.
    pub node: NodeName,
    /// Job name (Kubernetes: the MPIJob).
    pub job: String,
    /// Where its output goes, relative to the results directory.
    pub output: String,
    /// Where `roce doctor --format json` on the node goes, when something runs it there (Slurm: the
    /// checks job, when `roce` is on the nodes' PATH; Kubernetes: the user, see docs/sweep.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doctor: Option<String>,
}

/// One round: pairs that run at the same time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based.
    pub index: u32,
    /// The file that runs it, in the campaign's directory.
    pub file: String,
    /// Its pairs.
    pub pairs: Vec<Pair>,
}

/// Two nodes tested together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// The two nodes, in list order.
    pub nodes: [NodeName; 2],
    /// Job name (Kubernetes: the MPIJob).
    pub job: String,
    /// Where its output goes, relative to the results directory.
    pub output: String,
}

impl Campaign {
    /// Plan a campaign over `nodes`. `plan` is the profile's job plan; the tests are its nccl-tests workload.
    ///
    /// ```
    /// use roce_model::{builtin, load, BuiltinsOnly};
    /// use roce_render::sweep::{Campaign, NodeList, SweepOptions};
    /// use roce_render::{plan, RenderOptions};
    /// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
    /// let plan = plan::lower(&profile);
    /// let nodes = NodeList::parse("gpu[001-004]").unwrap();
    /// let (opts, render) = (SweepOptions::default(), RenderOptions::default());
    /// let campaign = Campaign::plan(&plan, &nodes, &opts, &render).unwrap();
    /// assert_eq!(campaign.checks.len(), 4);
    /// let files = campaign.render(&plan, &opts, &render).unwrap();
    /// assert!(files.iter().any(|f| f.path == "campaign.json"));
    /// ```
    pub fn plan(
        plan: &Plan,
        nodes: &NodeList,
        opts: &SweepOptions,
        render: &RenderOptions,
    ) -> Result<Campaign, RenderError> {
        if opts.partners == 0 {
            return Err(RenderError::option(
                "partners",
                "0",
                "every node needs at least one partner",
            ));
        }
        if nodes.nodes.len() < 2 {
            return Err(RenderError::option(
                "nodes",
                &nodes.nodes.len().to_string(),
                "a campaign needs at least two nodes that can be tested",
            ));
        }
        if opts.time_limit_min == 0 {
            return Err(RenderError::option(
                "time-limit",
                "0",
                "give the minutes one test may take",
            ));
        }
        let prefix = &opts.name;
        if !prefix.starts_with(|c: char| c.is_ascii_lowercase())
            || prefix.len() > 30
            || !prefix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(RenderError::option(
                "name",
                prefix,
                "job names start with a lower-case letter and use lower-case letters, digits and '-' \
                 (at most 30 characters, so the operators' derived names stay valid)",
            ));
        }
        let plan = plan.for_workload(Workload::NcclTests)?;
        let command = crate::validation::nccl_test_command(render)?;
        let checks = nodes
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Check {
                node: n.clone(),
                job: format!("{prefix}-node-{:05}", i + 1),
                output: format!("nodes/{n}.log"),
                doctor: Some(format!("nodes/{n}.doctor.json")),
            })
            .collect();
        let ext = match opts.scheduler {
            Scheduler::Kubernetes => "yaml",
            Scheduler::Slurm => "sbatch",
        };
        let rounds = schedule::rounds(nodes.nodes.len(), opts.partners as usize)
            .into_iter()
            .enumerate()
            .map(|(r, pairs)| {
                let index = r as u32 + 1;
                Round {
                    index,
                    file: format!("round-{index:02}.{ext}"),
                    pairs: pairs
                        .into_iter()
                        .enumerate()
                        .map(|(p, (a, b))| {
                            let (a, b) = (nodes.nodes[a].clone(), nodes.nodes[b].clone());
                            Pair {
                                job: format!("{prefix}-r{index:02}-p{:05}", p + 1),
                                output: format!("round-{index:02}/{a}--{b}.log"),
                                nodes: [a, b],
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(Campaign {
            schema: CAMPAIGN_SCHEMA.into(),
            profile: plan.profile.clone(),
            scheduler: opts.scheduler,
            partners: opts.partners,
            gpus_per_node: plan.gpus_per_node,
            command,
            nodes: nodes.nodes.clone(),
            excluded: nodes.excluded.clone(),
            checks,
            rounds,
        })
    }

    /// The campaign's files: `campaign.json`, the checks' and rounds' job files, and `run.sh`.
    pub fn render(
        &self,
        plan: &Plan,
        opts: &SweepOptions,
        render: &RenderOptions,
    ) -> Result<Vec<Artifact>, RenderError> {
        let plan = plan.for_workload(Workload::NcclTests)?;
        let pairs = pair_plan(&plan);
        let mut files = match self.scheduler {
            Scheduler::Kubernetes => kubernetes::render(self, &plan, &pairs, opts, render)?,
            Scheduler::Slurm => slurm::render(self, &plan, &pairs, opts, render)?,
        };
        files.insert(
            0,
            Artifact {
                path: CAMPAIGN_FILE.into(),
                contents: self.to_json(),
            },
        );
        Ok(files)
    }

    /// `campaign.json`'s text.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a campaign serialises");
        s.push('\n');
        s
    }

    /// Every test's output path with what it tested: the checks, then the pairs.
    pub fn outputs(&self) -> impl Iterator<Item = (&str, &[NodeName])> {
        self.checks
            .iter()
            .map(|c| (c.output.as_str(), std::slice::from_ref(&c.node)))
            .chain(
                self.rounds
                    .iter()
                    .flat_map(|r| r.pairs.iter().map(|p| (p.output.as_str(), &p.nodes[..]))),
            )
    }
}

/// The plan of the pair tests: a test of the network between two nodes. Where the profile has a
/// multi-node NVLink domain (a ComputeDomain), two nodes of one domain would talk over NVLink instead
/// (NCCL_MNNVL_ENABLE defaults to 2: on when the IMEX channel is there), so the pairs turn it off and
/// take the network path; the single-node checks keep it.
fn pair_plan(plan: &Plan) -> Plan {
    let mut pairs = plan.clone();
    if plan.dra_spec.nvlink_domain.compute_domain().is_some() {
        pairs.env.retain(|v| v.name != "NCCL_MNNVL_ENABLE");
        pairs.env.push(roce_model::fabric::env::EnvVar {
            name: "NCCL_MNNVL_ENABLE".into(),
            value: "0".into(),
            consumer: roce_model::fabric::env::Consumer::Nccl,
            origin: None,
        });
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_model::{BuiltinsOnly, builtin, load};

    fn plan() -> Plan {
        let p = load(builtin::source("coreweave/h100-ib").unwrap(), &BuiltinsOnly);
        crate::plan::lower(&p.profile.unwrap())
    }

    #[test]
    fn pairs_and_paths_follow_the_schedule() {
        let nodes = NodeList::parse("g[01-05]").unwrap();
        let c = Campaign::plan(
            &plan(),
            &nodes,
            &SweepOptions::default(),
            &RenderOptions::default(),
        )
        .unwrap();
        // odd: one more round, every node still meets 3 partners
        assert_eq!(c.rounds.len(), 4);
        assert_eq!(c.checks.len(), 5);
        assert_eq!(c.checks[0].output, "nodes/g01.log");
        let p = &c.rounds[0].pairs[0];
        assert_eq!(
            p.output,
            format!("round-01/{}--{}.log", p.nodes[0], p.nodes[1])
        );
        assert_eq!(p.job, "sweep-r01-p00001");
        assert_eq!(
            c.outputs().count(),
            5 + c.rounds.iter().map(|r| r.pairs.len()).sum::<usize>()
        );
        let back: Campaign = serde_json::from_str(&c.to_json()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn refuses_what_cannot_run() {
        let one = NodeList::parse("g1").unwrap();
        let two = NodeList::parse("g1 g2").unwrap();
        let r = RenderOptions::default();
        assert!(Campaign::plan(&plan(), &one, &SweepOptions::default(), &r).is_err());
        for o in [
            SweepOptions {
                partners: 0,
                ..SweepOptions::default()
            },
            SweepOptions {
                name: "Bad_Name".into(),
                ..SweepOptions::default()
            },
            SweepOptions {
                time_limit_min: 0,
                ..SweepOptions::default()
            },
        ] {
            assert!(Campaign::plan(&plan(), &two, &o, &r).is_err(), "{o:?}");
        }
    }
}
