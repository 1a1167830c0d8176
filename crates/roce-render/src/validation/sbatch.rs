//! `nccl-tests-sbatch`: nccl-tests `all_reduce_perf` as a Slurm batch script, one rank per GPU with
//! `srun --mpi=pmix`.
//!
//! The script is the `sbatch` target's (same `#SBATCH` lines from the node pool, same exports) with the
//! validation env and the nccl-tests step, so the two cannot drift apart.

use super::{comment, image, nccl_test_command, nodes, shell_quoted};
use crate::plan::{Plan, Topic};
use crate::{RenderError, RenderOptions};

/// Render the batch script from a plan lowered for nccl-tests.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let nodes = nodes(plan, opts)?;
    let mut step = vec!["--kill-on-bad-exit=1".to_string()];
    for word in nccl_test_command(opts)? {
        step.push(shell_quoted("nccl-test-args", &word)?);
    }
    let mut slurm = opts.slurm.clone();
    slurm.nodes = Some(nodes);
    slurm.mpi_pmix = true;
    slurm.command = Some(step.join(" "));
    if slurm.job_name.is_none() {
        slurm.job_name = Some(super::default_name(plan, "nccl-tests"));
    }
    let script = crate::sbatch::render(
        plan,
        &RenderOptions {
            slurm,
            ..opts.clone()
        },
    )?;

    let bin = &opts.validation.nccl_test;
    let mut notes = vec![format!(
        "Validation job: nccl-tests across {nodes} node(s) x {} GPU(s), one rank per GPU (srun --mpi=pmix).",
        plan.gpus_per_node
    )];
    notes.extend(plan.notes_about(&[Topic::Workload]).map(|n| n.text.clone()));
    notes.push(format!(
            "The nodes must have nccl-tests at {bin} (CoreWeave's SUNK images do); with pyxis, run it in \
             {} instead by adding --container-image to the srun line.",
            image(plan, opts)
        ));
    if nodes < 2 {
        notes.push(
            "One node: NCCL stays on NVLink and shared memory, so the fabric is not tested.".into(),
        );
    }
    notes.extend([
        String::new(),
        "Run it and read the result:".into(),
        "  sbatch --wait nccl-tests.sbatch   # prints: Submitted batch job JOBID".into(),
        format!("  roce explain slurm-JOBID.out --profile {}", plan.profile),
    ]);
    // The notes go with the provenance comment, right before the script's first command.
    let marker = "set -euo pipefail\n";
    Ok(match script.find(marker) {
        Some(at) => format!("{}{}{}", &script[..at], comment(&notes), &script[at..]),
        None => format!("{script}{}", comment(&notes)),
    })
}
