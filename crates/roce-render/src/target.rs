//! The closed set of compile targets.

use std::fmt;
use std::str::FromStr;

/// A compile target. Each has one module in this crate and one `render` function.
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

    /// Does this target produce several files (and so need an output directory)?
    pub fn multi_file(self) -> bool {
        matches!(self, Target::Kustomize)
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
