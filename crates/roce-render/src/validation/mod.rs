//! Validation jobs: ready-to-run tests that show whether a profile's fabric really carries traffic.
//!
//! - [`mpijob`]: nccl-tests `all_reduce_perf` as a Kubeflow MPIJob (`kubeflow.org/v2beta1`);
//! - [`sbatch`]: the same test as a Slurm batch script (`srun --mpi=pmix`);
//! - [`ucx_perftest`]: `ucx_perftest` between a server and a client Pod on two different nodes.
//!
//! Like every emitter they only format a [`Plan`]: the wiring, the env and the fabric's nccl-tests image come
//! from the lowering. What they add is observability, so that `roce explain` can read the output:
//! NCCL jobs log at `NCCL_DEBUG=INFO` ([`nccl_env`]), the UCX test at `UCX_LOG_LEVEL=info` ([`ucx_env`]).
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! use roce_render::{plan, validation};
//! let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
//! let env = validation::nccl_env(&plan::lower(&profile));
//! assert!(env.iter().any(|e| e.name == "NCCL_DEBUG" && e.value == "INFO"));
//! ```

pub mod mpijob;
pub mod sbatch;
pub mod ucx_perftest;

use crate::plan::{Consumer, EnvVar, Plan};
use crate::yaml::Yaml;
use crate::{RenderError, RenderOptions};

/// The nccl-tests binary in CoreWeave's nccl-tests images and on SUNK compute nodes.
pub const NCCL_TEST_BIN: &str = "/opt/nccl_tests/build/all_reduce_perf";

/// `all_reduce_perf` arguments: 512 MiB to 8 GiB, doubling, one GPU per rank (the vendor's examples).
pub const NCCL_TEST_ARGS: &str = "-b 512M -e 8G -f 2 -g 1";

/// NCCL log level of validation jobs: `INFO` prints the transport, the devices and `GDRDMA` per channel.
pub const NCCL_DEBUG: &str = "INFO";

/// NCCL log subsystems of validation jobs (unless the profile sets its own): NCCL's default set
/// (`INIT,BOOTSTRAP,ENV`) plus `NET`, which prints GPUDirect RDMA per HCA and the GID each QP uses.
pub const NCCL_DEBUG_SUBSYS: &str = "INIT,BOOTSTRAP,ENV,NET";

/// UCX log level of the `ucx-perftest` job: `info` prints the UCX env UCX read and each endpoint's
/// transports and devices (`ep_cfg[0]: tag(rc_mlx5/ibp0p0:1 …)`).
pub const UCX_LOG_LEVEL: &str = "info";

/// Options of the validation targets. `Default` gives the values documented on each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationOptions {
    /// Container image (default: the plan's nccl-tests image for its fabric, [`Plan::nccl_tests_image`]).
    pub image: Option<String>,
    /// Nodes to run across: MPIJob workers, `#SBATCH --nodes` (default: the profile's `job nodes`, at least 2,
    /// since one node never leaves NVLink and so never touches the fabric).
    pub nodes: Option<u32>,
    /// The nccl-tests binary (default [`NCCL_TEST_BIN`]).
    pub nccl_test: String,
    /// Its arguments, separated by whitespace (default [`NCCL_TEST_ARGS`]).
    pub nccl_test_args: String,
    /// `ucx_perftest` client arguments, separated by whitespace (default: [`ucx_perftest::default_args`]).
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

/// The env of an NCCL validation job: the plan's, with `NCCL_DEBUG=INFO` (in place of the profile's level,
/// if any) and [`NCCL_DEBUG_SUBSYS`] unless the profile chooses its own subsystems. New variables go right
/// after the profile's last NCCL variable, so the NCCL → UCX → other order holds.
pub fn nccl_env(plan: &Plan) -> Vec<EnvVar> {
    let mut env = plan.env.clone();
    set(&mut env, "NCCL_DEBUG", NCCL_DEBUG, Consumer::Nccl);
    if !env.iter().any(|e| e.name == "NCCL_DEBUG_SUBSYS") {
        set(
            &mut env,
            "NCCL_DEBUG_SUBSYS",
            NCCL_DEBUG_SUBSYS,
            Consumer::Nccl,
        );
    }
    env
}

/// The env of the UCX validation job: the plan's, with `UCX_LOG_LEVEL=info` (see [`UCX_LOG_LEVEL`]).
pub fn ucx_env(plan: &Plan) -> Vec<EnvVar> {
    let mut env = plan.env.clone();
    set(&mut env, "UCX_LOG_LEVEL", UCX_LOG_LEVEL, Consumer::Ucx);
    env
}

/// Set `name` to `value`: in place when present (the value no longer comes from the profile, so it loses
/// its origin), else after the last variable of `consumer` (or after the consumers that sort before it).
fn set(env: &mut Vec<EnvVar>, name: &str, value: &str, consumer: Consumer) {
    if let Some(e) = env.iter_mut().find(|e| e.name == name) {
        if e.value != value {
            e.value = value.to_string();
            e.origin = None;
        }
        return;
    }
    let rank = |c: Consumer| match c {
        Consumer::Nccl => 0,
        Consumer::Ucx => 1,
        Consumer::Other => 2,
    };
    let at = env
        .iter()
        .rposition(|e| rank(e.consumer) <= rank(consumer))
        .map_or(0, |i| i + 1);
    env.insert(
        at,
        EnvVar {
            name: name.to_string(),
            value: value.to_string(),
            consumer,
            origin: None,
        },
    );
}

/// A copy of `plan` with `env` in place of its own, for reusing the other emitters' helpers.
pub(crate) fn with_env(plan: &Plan, env: Vec<EnvVar>) -> Plan {
    Plan {
        env,
        ..plan.clone()
    }
}

/// The image validation jobs run: the option, else the plan's nccl-tests image.
pub(crate) fn image<'a>(plan: &'a Plan, opts: &'a RenderOptions) -> &'a str {
    opts.validation
        .image
        .as_deref()
        .unwrap_or(&plan.nccl_tests_image)
}

/// Nodes to run across (see [`ValidationOptions::nodes`]); `--nodes 0` is an error.
pub(crate) fn nodes(plan: &Plan, opts: &RenderOptions) -> Result<u32, RenderError> {
    match opts.validation.nodes.or(opts.slurm.nodes) {
        Some(0) => Err(bad_option(
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
            return Err(bad_option(
                "name",
                name,
                &format!(
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

fn is_dns1035_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && !s.ends_with('-')
}

/// Split an argument option into words at whitespace; other control characters are errors.
pub(crate) fn words(option: &str, value: &str) -> Result<Vec<String>, RenderError> {
    if let Some(c) = value
        .chars()
        .find(|c| c.is_control() && !c.is_ascii_whitespace())
    {
        return Err(bad_option(
            option,
            value,
            &format!("contains the control character U+{:04X}", u32::from(c)),
        ));
    }
    Ok(value.split_whitespace().map(str::to_string).collect())
}

/// The nccl-tests command line: binary, then arguments.
pub(crate) fn nccl_test_command(opts: &RenderOptions) -> Result<Vec<String>, RenderError> {
    let v = &opts.validation;
    let bin = words("nccl-test", &v.nccl_test)?;
    let [bin] = bin.as_slice() else {
        return Err(bad_option(
            "nccl-test",
            &v.nccl_test,
            "give one path to an nccl-tests binary",
        ));
    };
    let mut cmd = vec![bin.clone()];
    cmd.extend(words("nccl-test-args", &v.nccl_test_args)?);
    Ok(cmd)
}

/// `KEY=value KEY=value` for comments, from the variables of one consumer.
pub(crate) fn env_summary(env: &[EnvVar], consumer: Consumer) -> String {
    env.iter()
        .filter(|e| e.consumer == consumer)
        .map(|e| format!("{}={}", e.name, e.value))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A comment block, each line prefixed with `# ` and prose wrapped at [`WRAP`] columns. Lines that start
/// with a space (commands to copy) are kept whole.
pub(crate) fn comment(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        if line.is_empty() {
            out.push_str("#\n");
            continue;
        }
        if line.starts_with(' ') {
            out.push_str(&format!("# {line}\n"));
            continue;
        }
        let mut current = String::new();
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            if !current.is_empty() && current.len() + 1 + word.len() > WRAP - 2 {
                out.push_str(&format!("# {current}\n"));
                current.clear();
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&format!("# {current}\n"));
    }
    out
}

/// Width of comment prose.
const WRAP: usize = 110;

/// Rebuild a container map with `command` (and `args`) right after `image`, where readers look for them.
pub(crate) fn with_command(container: Yaml, command: &[&str], args: Vec<Yaml>) -> Yaml {
    let Yaml::Map(entries) = container else {
        return container;
    };
    let mut out = Yaml::map();
    let mut args = Some(args);
    for (k, v) in entries {
        let after_image = k == "image";
        out.insert(&k, v);
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

fn bad_option(option: &str, value: &str, why: &str) -> RenderError {
    RenderError::Option {
        option: option.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, consumer: Consumer) -> EnvVar {
        EnvVar {
            name: name.to_string(),
            value: "v".to_string(),
            consumer,
            origin: None,
        }
    }

    fn names(env: &[EnvVar]) -> Vec<&str> {
        env.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn set_inserts_after_its_consumer_group_and_replaces_in_place() {
        let mut env = vec![
            var("NCCL_A", Consumer::Nccl),
            var("UCX_TLS", Consumer::Ucx),
            var("X", Consumer::Other),
        ];
        set(&mut env, "NCCL_DEBUG", "INFO", Consumer::Nccl);
        set(&mut env, "UCX_LOG_LEVEL", "info", Consumer::Ucx);
        assert_eq!(
            names(&env),
            ["NCCL_A", "NCCL_DEBUG", "UCX_TLS", "UCX_LOG_LEVEL", "X"]
        );
        set(&mut env, "X", "new", Consumer::Nccl);
        assert_eq!(
            names(&env),
            ["NCCL_A", "NCCL_DEBUG", "UCX_TLS", "UCX_LOG_LEVEL", "X"],
            "kept its place"
        );
        assert_eq!(env[4].value, "new");
        let mut only_other = vec![var("X", Consumer::Other)];
        set(&mut only_other, "NCCL_DEBUG", "INFO", Consumer::Nccl);
        assert_eq!(names(&only_other), ["NCCL_DEBUG", "X"]);
    }

    #[test]
    fn comments_wrap_prose_and_keep_commands_whole() {
        let long = "word ".repeat(40);
        let cmd = format!("  kubectl {}", "x".repeat(150));
        let text = comment(&[long.trim().to_string(), String::new(), cmd.clone()]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.starts_with('#')));
        assert!(
            lines[..lines.len() - 1].iter().all(|l| l.len() <= WRAP),
            "{text}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains("word"))
                .map(|l| l.matches("word").count())
                .sum::<usize>(),
            40
        );
        assert!(lines.contains(&"#"));
        assert_eq!(lines.last().copied(), Some(format!("# {cmd}").as_str()));
    }

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
