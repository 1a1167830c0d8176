//! `sbatch`: a runnable Slurm batch script.

use crate::plan::{Plan, Topic};
use crate::{RenderError, RenderOptions};
use crate::{comment, quote};

/// Render the plan as an sbatch script. Options override the node pool's `#SBATCH` defaults.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let s = &opts.slurm;
    let mut out = String::from("#!/bin/bash\n");
    let job_name = s.job_name.clone().unwrap_or_else(|| plan.short_name());
    let mut directive = |k: &str, v: &str| -> Result<(), RenderError> {
        out.push_str(&format!("#SBATCH --{k}={}\n", quote_directive(k, v)?));
        Ok(())
    };
    directive("job-name", &job_name)?;
    directive(
        "partition",
        s.partition.as_deref().unwrap_or(&plan.slurm.partition),
    )?;
    directive("nodes", &s.nodes.unwrap_or(plan.slurm.nodes).to_string())?;
    if let Some(list) = &s.nodelist {
        directive("nodelist", list)?;
    }
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
    // Slurm cannot attach pod networks: the plan's notes say what the nodes must already provide.
    out.push_str(&comment::notes(plan.notes_about(&[Topic::Nodes])));
    out.push_str("set -euo pipefail\n\n");
    for e in &plan.env {
        let v =
            quote::shell_single(&e.value).map_err(|why| RenderError::unrepresentable(e, why))?;
        out.push_str(&format!("export {}={v}\n", e.name));
    }
    out.push('\n');
    let mpi = if s.mpi_pmix { " --mpi=pmix" } else { "" };
    match (&s.command, &s.body) {
        (Some(_), Some(_)) => {
            return Err(RenderError::Option {
                option: "body".to_string(),
                value: "FILE".to_string(),
                why: "give either --command or --body, not both".to_string(),
            });
        }
        (None, Some(body)) => {
            check_body(body)?;
            if s.mpi_pmix {
                // The body has its own srun lines: the variable makes every one of them use PMIx.
                out.push_str("export SLURM_MPI_TYPE=pmix\n\n");
            }
            out.push_str(body);
            if !body.ends_with('\n') {
                out.push('\n');
            }
        }
        (Some(cmd), None) => out.push_str(&format!("srun{mpi} {cmd}\n")),
        (None, None) => out.push_str(&format!("srun{mpi} \"$@\"\n")),
    }
    Ok(out)
}

/// A body is shell text placed after the exports. sbatch stops reading `#SBATCH` lines at the first
/// command, so a directive in the body would be silently ignored: refuse it instead.
fn check_body(body: &str) -> Result<(), RenderError> {
    let bad = |value: &str, why: &str| RenderError::option("body", value, why);
    if body.trim().is_empty() {
        return Err(bad(
            "",
            "the body is empty; leave out --body to run the script's arguments with srun",
        ));
    }
    if body.contains('\0') {
        return Err(bad(
            "\\0",
            "the body contains a NUL character, which bash cannot read",
        ));
    }
    if let Some(line) = body.lines().find(|l| l.trim_start().starts_with("#SBATCH")) {
        return Err(bad(
            line.trim(),
            "sbatch reads #SBATCH lines only before the first command, so this one would be \
             ignored; give it as a roce option (--partition, --nodes, --job-name, --time, \
             --segment) or on the sbatch command line",
        ));
    }
    Ok(())
}

fn quote_directive(key: &str, value: &str) -> Result<String, RenderError> {
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:,/=+@[]".contains(c))
    {
        return Err(RenderError::option(
            key,
            value,
            "#SBATCH values may use letters, digits and - _ . : , / = + @ [ ]",
        ));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlurmOptions;
    use roce_model::{BuiltinsOnly, builtin, load};

    fn plan() -> Plan {
        let loaded = load(
            builtin::source("coreweave/gb300-roce").expect("builtin"),
            &BuiltinsOnly,
        );
        crate::plan::lower(&loaded.profile.expect("valid builtin"))
    }

    fn with(slurm: SlurmOptions) -> Result<String, RenderError> {
        render(
            &plan(),
            &RenderOptions {
                slurm,
                ..RenderOptions::default()
            },
        )
    }

    #[test]
    fn default_step_runs_the_arguments() {
        let out = with(SlurmOptions::default()).expect("renders");
        assert!(out.ends_with("\nsrun \"$@\"\n"), "{out}");
    }

    #[test]
    fn body_replaces_the_srun_step_after_the_exports() {
        let body = "srun hostname\necho done";
        let out = with(SlurmOptions {
            body: Some(body.to_string()),
            ..SlurmOptions::default()
        })
        .expect("renders");
        assert!(
            out.ends_with("export OMPI_MCA_coll_hcoll_enable=0\n\nsrun hostname\necho done\n"),
            "{out}"
        );
        assert!(!out.contains("\"$@\""), "{out}");
        assert!(!out.contains("SLURM_MPI_TYPE"), "{out}");
    }

    #[test]
    fn body_with_mpi_pmix_exports_the_mpi_type() {
        let out = with(SlurmOptions {
            body: Some("srun a.out\n".to_string()),
            mpi_pmix: true,
            ..SlurmOptions::default()
        })
        .expect("renders");
        assert!(
            out.ends_with("\nexport SLURM_MPI_TYPE=pmix\n\nsrun a.out\n"),
            "{out}"
        );
    }

    #[test]
    fn mpi_pmix_and_command_go_on_the_srun_line() {
        let out = with(SlurmOptions {
            command: Some("all_reduce_perf -g 1".to_string()),
            mpi_pmix: true,
            ..SlurmOptions::default()
        })
        .expect("renders");
        assert!(
            out.ends_with("\nsrun --mpi=pmix all_reduce_perf -g 1\n"),
            "{out}"
        );
    }

    #[test]
    fn body_refuses_sbatch_directives_emptiness_and_command() {
        for (body, command, want) in [
            ("srun a\n  #SBATCH --time=10\n", None, "#SBATCH --time=10"),
            (" \n\n", None, "empty"),
            ("srun a\0", None, "NUL"),
            ("srun a\n", Some("b"), "not both"),
        ] {
            let err = with(SlurmOptions {
                body: Some(body.to_string()),
                command: command.map(str::to_string),
                ..SlurmOptions::default()
            })
            .expect_err(body);
            assert!(err.to_string().contains(want), "{body:?}: {err}");
            assert!(err.to_string().starts_with("--body "), "{err}");
        }
        // A comment that merely mentions SBATCH is fine.
        with(SlurmOptions {
            body: Some("# no SBATCH here\nsrun a\n".to_string()),
            ..SlurmOptions::default()
        })
        .expect("renders");
    }

    #[test]
    fn options_become_directives_in_order() {
        let out = with(SlurmOptions {
            partition: Some("gb300-e".to_string()),
            nodes: Some(18),
            job_name: Some("train".to_string()),
            time: Some("01:30:00".to_string()),
            segment: Some(16),
            ..SlurmOptions::default()
        })
        .expect("renders");
        let directives: Vec<&str> = out.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert_eq!(
            directives,
            [
                "#SBATCH --job-name=train",
                "#SBATCH --partition=gb300-e",
                "#SBATCH --nodes=18",
                "#SBATCH --ntasks-per-node=4",
                "#SBATCH --gpus-per-node=4",
                "#SBATCH --time=01:30:00",
                "#SBATCH --segment=16",
            ]
        );
    }
}
