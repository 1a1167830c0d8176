//! `sbatch`: a runnable Slurm batch script.

use crate::plan::Plan;
use crate::quote;
use crate::{RenderError, RenderOptions};

/// Render the plan as an sbatch script. Options override the node pool's `#SBATCH` defaults.
pub fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let s = &opts.slurm;
    let mut out = String::from("#!/bin/bash\n");
    let job_name = s.job_name.clone().unwrap_or_else(|| plan.short_name());
    let mut directive = |k: &str, v: &str| -> Result<(), RenderError> {
        out.push_str(&format!("#SBATCH --{k}={}\n", quote_directive(k, v)?));
        Ok(())
    };
    directive("job-name", &job_name)?;
    directive("partition", s.partition.as_deref().unwrap_or(&plan.slurm.partition))?;
    directive("nodes", &s.nodes.unwrap_or(plan.slurm.nodes).to_string())?;
    directive("ntasks-per-node", &plan.slurm.ntasks_per_node.to_string())?;
    directive("gpus-per-node", &plan.slurm.gpus_per_node.to_string())?;
    if let Some(t) = &s.time {
        directive("time", t)?;
    }
    if let Some(seg) = s.segment {
        directive("segment", &seg.to_string())?;
    }
    out.push('\n');
    out.push_str(&crate::header("#", plan));
    if let Some(w) = &plan.wiring
        && let (Some(first), Some(last)) = (w.networks.first(), w.networks.last())
    {
        // Slurm cannot attach pod networks: say what the nodes must already provide.
        let resources: Vec<&str> = w.resources.iter().map(|(r, _)| r.as_str()).collect();
        out.push_str(&format!(
            "# The nodes must already attach the fabric: {} Multus networks ({}/{} … {}/{}){}.\n",
            w.networks.len(),
            first.namespace,
            first.name,
            last.namespace,
            last.name,
            if resources.is_empty() { String::new() } else { format!(" and {}", resources.join(", ")) }
        ));
    }
    out.push_str("set -euo pipefail\n\n");
    for e in &plan.env {
        let v = quote::shell_single(&e.value).map_err(|why| RenderError::unrepresentable(e, why))?;
        out.push_str(&format!("export {}={v}\n", e.name));
    }
    out.push('\n');
    let mpi = if s.mpi_pmix { " --mpi=pmix" } else { "" };
    match &s.command {
        Some(cmd) => out.push_str(&format!("srun{mpi} {cmd}\n")),
        None => out.push_str(&format!("srun{mpi} \"$@\"\n")),
    }
    Ok(out)
}

fn quote_directive(key: &str, value: &str) -> Result<String, RenderError> {
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:,/=+@".contains(c))
    {
        return Err(RenderError::Option {
            option: key.to_string(),
            value: value.to_string(),
            why: "#SBATCH values may use letters, digits and - _ . : , / = + @".to_string(),
        });
    }
    Ok(value.to_string())
}
