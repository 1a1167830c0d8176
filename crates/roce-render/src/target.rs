//! The closed set of compile targets: each is a [`Format`] applied to a [`Workload`].
//!
//! The CLI names (`pod`, `nccl-tests-mpijob`, …) are the [`Target`]s; [`Target::format`] and
//! [`Target::workload`] say what each one is. A workload is lowered by [`crate::plan::lower_workload`];
//! a format's emitter only formats the plan it is given.

use std::fmt;
use std::str::FromStr;

/// A compile target: a format × workload pair with a name on the command line. Each has one module in
/// this crate and one `render` function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Target {
    /// A complete Pod manifest.
    Pod,
    /// A Kustomize Component plus patches for selected workloads.
    Kustomize,
    /// A Slurm batch script.
    Sbatch,
    /// Dockerfile `ENV` lines.
    Dockerfile,
    /// A dotenv / shell-sourceable file.
    Env,
    /// Validation job: nccl-tests `all_reduce_perf` as a Kubeflow MPIJob (`kubeflow.org/v2beta1`).
    NcclTestsMpijob,
    /// Validation job: nccl-tests `all_reduce_perf` as a Slurm batch script (`srun --mpi=pmix`).
    NcclTestsSbatch,
    /// Validation job: `ucx_perftest` between two Pods on two different nodes.
    UcxPerftest,
}

impl Target {
    /// Every target, in catalogue order.
    pub const ALL: &'static [Target] = &[
        Target::Pod,
        Target::Kustomize,
        Target::Sbatch,
        Target::Dockerfile,
        Target::Env,
        Target::NcclTestsMpijob,
        Target::NcclTestsSbatch,
        Target::UcxPerftest,
    ];

    /// The target's name on the command line.
    pub fn slug(self) -> &'static str {
        match self {
            Target::Pod => "pod",
            Target::Kustomize => "kustomize",
            Target::Sbatch => "sbatch",
            Target::Dockerfile => "dockerfile",
            Target::Env => "env",
            Target::NcclTestsMpijob => "nccl-tests-mpijob",
            Target::NcclTestsSbatch => "nccl-tests-sbatch",
            Target::UcxPerftest => "ucx-perftest",
        }
    }

    /// How the target writes its artifacts.
    pub fn format(self) -> Format {
        match self {
            Target::Pod | Target::NcclTestsMpijob | Target::UcxPerftest => Format::Pod,
            Target::Kustomize => Format::Kustomize,
            Target::Sbatch | Target::NcclTestsSbatch => Format::Sbatch,
            Target::Dockerfile => Format::Dockerfile,
            Target::Env => Format::Env,
        }
    }

    /// What the target runs.
    pub fn workload(self) -> Workload {
        match self {
            Target::Pod | Target::Kustomize | Target::Sbatch | Target::Dockerfile | Target::Env => {
                Workload::Job
            }
            Target::NcclTestsMpijob | Target::NcclTestsSbatch => Workload::NcclTests,
            Target::UcxPerftest => Workload::UcxPerftest,
        }
    }

    /// The target that writes `workload` in `format`, if there is one.
    pub fn of(format: Format, workload: Workload) -> Option<Target> {
        Target::ALL
            .iter()
            .copied()
            .find(|t| t.format() == format && t.workload() == workload)
    }

    /// Does this target produce several files (and so need an output directory)?
    pub fn multi_file(self) -> bool {
        matches!(self, Target::Kustomize)
    }
}

/// How an artifact is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Kubernetes objects whose pods carry the wiring: a Pod for the user's job; for a validation
    /// workload the objects that run it (an MPIJob, or two Pods and a Service).
    Pod,
    /// A Kustomize Component that wires existing workloads.
    Kustomize,
    /// A Slurm batch script.
    Sbatch,
    /// Dockerfile `ENV` lines.
    Dockerfile,
    /// A dotenv / shell-sourceable file.
    Env,
}

/// What runs with the profile's fabric settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// The user's own job: the profile's environment and wiring, nothing added.
    Job,
    /// nccl-tests `all_reduce_perf` across nodes, logging what `roce explain` reads.
    NcclTests,
    /// `ucx_perftest` between two nodes, logging each endpoint's transports.
    UcxPerftest,
}

impl Workload {
    /// `job`, `nccl-tests` or `ucx-perftest`.
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Job => "job",
            Workload::NcclTests => "nccl-tests",
            Workload::UcxPerftest => "ucx-perftest",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// An unknown target name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{0}`")]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::ALL
            .iter()
            .copied()
            .find(|t| t.slug() == s)
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_target_is_the_only_one_of_its_format_and_workload() {
        for &t in Target::ALL {
            assert_eq!(Target::of(t.format(), t.workload()), Some(t), "{t}");
        }
        assert_eq!(Target::of(Format::Dockerfile, Workload::NcclTests), None);
    }
}
