//! Running the job behind `roce exec`, which sets the fabric variables from what the pod actually got
//! (docs/exec.md): the command prefix a container or an image starts the job with, and where the image
//! keeps the `roce` binary.

use roce_model::fabric::env::is_pod_dependent;

use crate::plan::{EnvVar, Plan};

/// Where the image keeps the `roce` binary: `dockerfile --with-roce-binary` copies it here, and the
/// wrapped command names it by this path (so `PATH` does not matter).
pub const ROCE_BINARY: &str = "/usr/local/bin/roce";

/// Run the job behind `roce exec --profile PROFILE --`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecWrap {
    /// The profile as `roce exec` finds it in the container: a built-in name, or the path of a profile
    /// file in the image.
    pub profile: String,
    /// The job's command line, run by `sh -c` (the `pod` target, which has no command of its own).
    pub command: Option<String>,
}

impl ExecWrap {
    /// `/usr/local/bin/roce exec --profile PROFILE --`: a container's `command`, or an image's
    /// `ENTRYPOINT`; what follows is the job.
    ///
    /// ```
    /// use roce_render::exec::ExecWrap;
    /// let w = ExecWrap { profile: "coreweave/gb300-roce".into(), command: None };
    /// assert_eq!(w.prefix().join(" "), "/usr/local/bin/roce exec --profile coreweave/gb300-roce --");
    /// ```
    pub fn prefix(&self) -> Vec<String> {
        [ROCE_BINARY, "exec", "--profile", &self.profile, "--"]
            .map(String::from)
            .to_vec()
    }

    /// The job after the prefix: `sh -c COMMAND`, when a command line is given.
    pub fn job(&self) -> Option<Vec<String>> {
        self.command
            .as_ref()
            .map(|c| vec!["sh".to_string(), "-c".to_string(), c.clone()])
    }
}

/// Does a container's argv (`command` then `args`) start the job behind `roce exec`: a program named
/// `roce` (any directory) followed by `exec`?
///
/// ```
/// use roce_render::exec::starts_behind_roce_exec;
/// assert!(starts_behind_roce_exec(&["/usr/local/bin/roce", "exec", "--", "python"]));
/// assert!(!starts_behind_roce_exec(&["python", "train.py"]));
/// ```
pub fn starts_behind_roce_exec<S: AsRef<str>>(argv: &[S]) -> bool {
    match argv {
        [program, sub, ..] => {
            program.as_ref().rsplit('/').next() == Some("roce") && sub.as_ref() == "exec"
        }
        _ => false,
    }
}

/// The variables a target writes into its static environment: all of the plan's, except — when the job
/// starts behind `roce exec` — those `roce exec` computes from the pod
/// ([`POD_DEPENDENT`](roce_model::fabric::env::POD_DEPENDENT)): a static value would win over the computed
/// one, since a variable already set in the environment wins.
///
/// ```
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::{exec, plan};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let plan = plan::lower(&profile);
/// assert_eq!(exec::static_env(&plan, None).count(), plan.env.len());
/// ```
pub fn static_env<'a>(plan: &'a Plan, wrap: Option<&ExecWrap>) -> impl Iterator<Item = &'a EnvVar> {
    let wrapped = wrap.is_some();
    plan.env
        .iter()
        .filter(move |e| !(wrapped && is_pod_dependent(&e.name)))
}
