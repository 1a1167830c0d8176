//! Validation jobs: ready-to-run tests that show whether a profile's fabric really carries traffic.
//!
//! - `mpijob`: nccl-tests `all_reduce_perf` as a Kubeflow MPIJob (`kubeflow.org/v2beta1`);
//! - `sbatch`: the same test as a Slurm batch script (`srun --mpi=pmix`);
//! - [`ucx_perftest`]: `ucx_perftest` between a server and a client Pod on two different nodes.
//!
//! Like every emitter they only format a [`Plan`], lowered for their [`Workload`]: the
//! wiring, the env with the test's logging variables (NCCL jobs log at `NCCL_DEBUG=INFO`, the UCX test at
//! `UCX_LOG_LEVEL=info`, so that `roce explain` can read the output), the fabric's nccl-tests image, the
//! default arguments and the notes all come from the lowering ([`crate::plan::lower_workload`]). What they
//! add is the job's shape: objects, commands, and how to run it.
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! use roce_render::plan::{self, Workload};
//! let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
//! let test = plan::lower_workload(&profile, Workload::NcclTests);
//! assert_eq!(test.env_value("NCCL_DEBUG"), Some("INFO"));
//! ```

pub(crate) mod mpijob;
pub(crate) mod sbatch;
pub mod ucx_perftest;

pub(crate) use crate::comment::block as comment;
use crate::plan::Plan;
use crate::yaml::Yaml;
use crate::{RenderError, RenderOptions, Workload};

/// The nccl-tests binary in CoreWeave's nccl-tests images and on SUNK compute nodes.
pub const NCCL_TEST_BIN: &str = "/opt/nccl_tests/build/all_reduce_perf";

/// `all_reduce_perf` arguments: 512 MiB to 8 GiB, doubling, one GPU per rank (the vendor's examples).
pub const NCCL_TEST_ARGS: &str = "-b 512M -e 8G -f 2 -g 1";

/// Options of the validation targets. `Default` gives the values documented on each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationOptions {
    /// Container image (default: the plan's image for the workload, [`Plan::nccl_tests_image`] or [`Plan::ucx_perftest_image`]).
    pub image: Option<String>,
    /// Nodes to run across: MPIJob workers, `#SBATCH --nodes` (default: the profile's `job nodes`, at least 2,
    /// since one node never leaves NVLink and so never touches the fabric).
    pub nodes: Option<u32>,
    /// The nccl-tests binary (default [`NCCL_TEST_BIN`]).
    pub nccl_test: String,
    /// Its arguments, separated by whitespace (default [`NCCL_TEST_ARGS`]).
    pub nccl_test_args: String,
    /// `ucx_perftest` client arguments, separated by whitespace (default: the plan's, [`Plan::test_args`]).
    pub ucx_perftest_args: Option<String>,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        ValidationOptions {
            image: None,
            nodes: None,
            nccl_test: NCCL_TEST_BIN.to_string(),
            nccl_test_args: NCCL_TEST_ARGS.to_string(),
            ucx_perftest_args: None,
        }
    }
}

/// The image validation jobs run: the option, else the plan's image for its workload.
pub(crate) fn image<'a>(plan: &'a Plan, opts: &'a RenderOptions) -> &'a str {
    let default = match plan.workload {
        Workload::UcxPerftest => &plan.ucx_perftest_image,
        Workload::Job | Workload::NcclTests => &plan.nccl_tests_image,
    };
    opts.validation.image.as_deref().unwrap_or(default)
}

/// Nodes to run across (see [`ValidationOptions::nodes`]); `--nodes 0` is an error.
pub(crate) fn nodes(plan: &Plan, opts: &RenderOptions) -> Result<u32, RenderError> {
    match opts.validation.nodes.or(opts.slurm.nodes) {
        Some(0) => Err(RenderError::option(
            "nodes",
            "0",
            "a validation job needs at least one node (two to reach the fabric)",
        )),
        Some(n) => Ok(n),
        None => Ok(plan.slurm.nodes.max(2)),
    }
}

/// The name of the generated objects: `--name`, else `PREFIX-<profile short name>`, cut so that the
/// objects the operators derive from it (`NAME-launcher`, `NAME-worker-17`, `NAME-client`) stay valid
/// DNS-1035 labels.
pub(crate) fn object_name(
    plan: &Plan,
    opts: &RenderOptions,
    prefix: &str,
) -> Result<String, RenderError> {
    if let Some(name) = &opts.name {
        if !is_dns1035_label(name) || name.len() > MAX_NAME {
            return Err(RenderError::option(
                "name",
                name,
                format!(
                    "validation jobs need a DNS-1035 label of at most {MAX_NAME} characters \
                     (lower-case letters, digits and '-', starting with a letter)"
                ),
            ));
        }
        return Ok(name.clone());
    }
    Ok(default_name(plan, prefix))
}

/// `PREFIX-<profile short name>`, cut to [`MAX_NAME`] characters.
pub(crate) fn default_name(plan: &Plan, prefix: &str) -> String {
    let mut name = format!("{prefix}-{}", plan.short_name());
    name.truncate(MAX_NAME);
    name.trim_end_matches('-').to_string()
}

/// Longest object name: leaves room for `-worker-` plus five digits within a 63-character label.
const MAX_NAME: usize = 48;

/// A DNS-1035 label (Kubernetes `IsDNS1035Label`: Services, and the Pods' hostnames the operators derive):
/// a DNS-1123 label that starts with a letter.
fn is_dns1035_label(s: &str) -> bool {
    roce_model::names::is_dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Split an argument option into words at whitespace; other control characters are errors.
pub(crate) fn words(option: &str, value: &str) -> Result<Vec<String>, RenderError> {
    if let Some(c) = value
        .chars()
        .find(|c| c.is_control() && !c.is_ascii_whitespace())
    {
        return Err(RenderError::option(
            option,
            value,
            format!("contains the control character U+{:04X}", u32::from(c)),
        ));
    }
    Ok(value.split_whitespace().map(str::to_string).collect())
}

/// The nccl-tests command line: binary, then arguments.
pub(crate) fn nccl_test_command(opts: &RenderOptions) -> Result<Vec<String>, RenderError> {
    let v = &opts.validation;
    let bin = words("nccl-test", &v.nccl_test)?;
    let [bin] = bin.as_slice() else {
        return Err(RenderError::option(
            "nccl-test",
            &v.nccl_test,
            "give one path to an nccl-tests binary",
        ));
    };
    let mut cmd = vec![bin.clone()];
    cmd.extend(words("nccl-test-args", &v.nccl_test_args)?);
    Ok(cmd)
}

/// One word of an option, quoted for `sh` (`'…'`), or the error that names the option.
pub(crate) fn shell_quoted(option: &str, word: &str) -> Result<String, RenderError> {
    crate::quote::shell_single(word).map_err(|why| RenderError::option(option, word, why))
}

/// A Kubernetes validation file: the provenance header, the notes as a comment, then the documents.
pub(crate) fn manifest(plan: &Plan, notes: &[String], docs: &[Yaml]) -> String {
    format!(
        "{}{}{}",
        crate::header("#", plan),
        comment(notes),
        crate::yaml::to_multi_doc(docs)
    )
}

/// Rebuild a container map with `command` (and `args`) right after `image`, where readers look for them.
pub(crate) fn with_command(container: Yaml, command: &[&str], args: Vec<Yaml>) -> Yaml {
    let Yaml::Map(entries) = container else {
        return container;
    };
    let mut out = Yaml::map();
    let mut args = Some(args);
    for (k, v) in entries {
        let after_image = k == "image";
        out.insert(k, v);
        if after_image && let Some(args) = args.take() {
            out.insert(
                "command",
                command.iter().map(|c| Yaml::from(*c)).collect::<Vec<_>>(),
            );
            if !args.is_empty() {
                out.insert("args", args);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1035_labels() {
        for good in ["a", "nccl-tests-gb300-roce", "x1"] {
            assert!(is_dns1035_label(good), "{good}");
        }
        for bad in ["", "1abc", "Abc", "a_b", "a-", "-a", "a.b"] {
            assert!(!is_dns1035_label(bad), "{bad}");
        }
    }

    #[test]
    fn words_split_on_whitespace_and_refuse_control_characters() {
        assert_eq!(
            words("x", " -b 1G\t-e 2G ").unwrap(),
            ["-b", "1G", "-e", "2G"]
        );
        assert_eq!(words("x", "-b\n1G").unwrap(), ["-b", "1G"]);
        assert!(words("x", "-b\u{7}").is_err());
    }
}
