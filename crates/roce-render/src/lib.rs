//! Compile a roce fabric profile into deployable artifacts.
//!
//! [`plan::lower`] turns a validated [`roce_model::Profile`] into a target-neutral [`Plan`]; [`render`]
//! formats a plan for one [`Target`], a [`Format`] applied to a [`Workload`] (a validation workload is
//! lowered from the job's plan first, [`plan::lower_workload`]). Emitters hold no fabric knowledge: what
//! they say about the fabric comes from the plan's [`plan::Note`]s, so every target agrees on the
//! environment, annotations, resources and requirements.
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! use roce_render::{plan, render, RenderOptions, Target};
//! let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
//! let files = render(&plan::lower(&profile), Target::Pod, &RenderOptions::default()).unwrap();
//! assert!(files[0].contents.contains("rdma/ib"));
//! ```
#![warn(clippy::too_many_lines)]
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod apply;
mod comment;
mod dockerfile;
mod dotenv;
pub mod dra;
pub mod edits;
pub mod exec;
mod expansion;
pub mod kustomize;
pub mod plan;
pub mod plan_diff;
#[cfg(test)]
mod properties;
mod quote;
pub mod review;
mod sbatch;
pub mod sweep;
mod target;
pub mod validation;
mod volumes;
mod wiring;
mod yaml;

#[doc(hidden)]
pub mod plumbing {
    //! What `roce lint` (roce-inspect) and the command line share with the renderer beyond the API: value
    //! quoting, the manifest views lint reads pod templates through, and Kubernetes' `$(VAR)` expansion.
    //!
    //! Not API: hidden from the docs, and these change with apply and lint. A tool outside roce renders with
    //! [`crate::render`] and wires manifests with [`crate::apply::apply`] (docs/decisions.md, "(api)").
    pub mod quote {
        //! Quoting env values for a POSIX shell.
        pub use crate::quote::{Unrepresentable, shell_single};
    }
    pub mod pod {
        //! What the pod emitter exposes to lint: Kubernetes' `$(VAR)` expansion in env values.
        pub use crate::expansion::escape_dependent_vars;
    }
    pub mod view {
        //! Typed views of a pod template in a parsed manifest.
        pub use crate::apply::view::{
            NodeLabel, PodView, entry, required_affinity_keys, required_node_label, text, view,
        };
    }
    pub mod templates {
        //! Finding the pod templates of every workload kind in a manifest.
        pub use crate::apply::patches::merge_template_patches;
        pub use crate::apply::templates::{
            Added, FABRIC_KINDS, Form, Missing, Role, Step, Template, known_kind,
        };
        use roce_model::plumbing::tree::Node;

        /// The pod templates of one parsed document, or `None` for a kind roce does not know.
        pub fn discover(doc: &Node) -> Option<(Vec<Template>, Vec<Missing>)> {
            crate::apply::templates::discover(doc)
        }

        /// The main container of a pod spec that names one (`mainContainer`, `runner`).
        pub fn main_container(spec: &Node) -> Option<(&'static str, &Node)> {
            crate::apply::templates::main_container(spec)
        }
    }
    pub mod multus {
        //! Reading the Multus annotation.
        pub use crate::apply::multus::{Malformed, Network, parse};
    }
    pub mod mpirun {
        //! `mpirun -x NAME` forwarding in launcher commands.
        pub use crate::apply::mpirun::{Forward, Invocation, Place, find};
    }
    pub mod edits {
        //! What meets a requirement in another form, read once per template (lint's checks ask it).
        pub use crate::edits::otherwise::Met;
    }
    pub mod dra {
        //! The DRA objects one at a time, for the tests that feed them to their consumers' schemas.
        pub use crate::dra::shapes::{compute_domain, resource_claim_template};
    }
    pub mod wiring {
        //! What a pod really gets from the fabric, read from a manifest.
        pub use crate::wiring::{
            Backed, ClaimTemplate, EnvFrom, GKE_INTERFACES, Input, KvBackend, NadObject, PodClaim,
            RdmaAccess, Resource, Var, Wiring, argv,
        };
    }
}

pub use plan::{Plan, lower};
pub use target::{Format, Target, UnknownTarget, Workload};

/// Image used in generated pods when none is given: CoreWeave's nccl-tests image for GB300 RoCE, which
/// ships NCCL, HPC-X UCX and rdma-core userspace (CoreWeave nccl-tests, pinned in its RoCE examples).
pub const DEFAULT_IMAGE: &str =
    "ghcr.io/coreweave/nccl-tests:13.1.0-devel-ubuntu22.04-nccl2.29.2-1-0bf62c2";

/// nccl-tests image for validation jobs on RoCE (Spectrum-X) fabrics: the image CoreWeave's GB300 RoCE
/// nccl-tests examples pin. The same image as [`DEFAULT_IMAGE`].
pub const NCCL_TESTS_IMAGE_ROCE: &str = DEFAULT_IMAGE;

/// nccl-tests image for validation jobs on InfiniBand fabrics: the image CoreWeave's InfiniBand nccl-tests
/// examples pin (CUDA 12.9, so it also runs on nodes whose driver predates CUDA 13).
pub const NCCL_TESTS_IMAGE_INFINIBAND: &str =
    "ghcr.io/coreweave/nccl-tests:12.9.1-devel-ubuntu22.04-nccl2.28.3-1-8b67957";

/// nccl-tests image for validation jobs over EFA (aws-ofi-nccl): AWS's own, which ships libfabric, the EFA
/// installer's libraries and aws-ofi-nccl with nccl-tests (aws-samples/awsome-distributed-training uses it;
/// the CoreWeave images have no libfabric, so NCCL would fall back to sockets).
pub const NCCL_TESTS_IMAGE_EFA: &str = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1";

/// Annotation recording which profile produced an object.
pub const PROFILE_ANNOTATION: &str = "roce.dev/profile";

/// Knobs that are not part of the profile: names, images, Slurm overrides, Kustomize selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// Container that receives the wiring (Pod: its name; Kustomize: the container patched).
    pub container: String,
    /// Container image for generated pods.
    pub image: String,
    /// Name of generated objects (default: from the profile name).
    pub name: Option<String>,
    /// Slurm overrides.
    pub slurm: SlurmOptions,
    /// Workloads a Kustomize component patches.
    pub select: Vec<kustomize::Selector>,
    /// Validation jobs (`nccl-tests-mpijob`, `nccl-tests-sbatch`, `ucx-perftest`).
    pub validation: validation::ValidationOptions,
    /// Run the job behind `roce exec` (`pod`: the container's command; `kustomize`: in front of each
    /// selected workload's `command`; `dockerfile`: the `ENTRYPOINT`).
    pub exec: Option<exec::ExecWrap>,
    /// `dockerfile`: copy a static `roce` binary into the image, at [`exec::ROCE_BINARY`].
    pub with_roce_binary: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            container: "main".to_string(),
            image: DEFAULT_IMAGE.to_string(),
            name: None,
            slurm: SlurmOptions::default(),
            select: Vec::new(),
            validation: validation::ValidationOptions::default(),
            exec: None,
            with_roce_binary: false,
        }
    }
}

/// Overrides for the sbatch target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlurmOptions {
    /// `--partition` (default: the profile's).
    pub partition: Option<String>,
    /// `--nodes` (default: `job nodes`, else 1).
    pub nodes: Option<u32>,
    /// `--nodelist`: the nodes by name, a Slurm host list (`roce sweep` pins each round to its nodes).
    pub nodelist: Option<String>,
    /// `--job-name` (default: from the profile name).
    pub job_name: Option<String>,
    /// `--time`.
    pub time: Option<String>,
    /// `--segment` (NVL72 rack alignment).
    pub segment: Option<u32>,
    /// Run the step with `srun --mpi=pmix`.
    pub mpi_pmix: bool,
    /// The job step's command line (default: the script's arguments, `"$@"`).
    pub command: Option<String>,
    /// The job body: shell text that replaces the default `srun` step, written after the exports
    /// (from `--body FILE`). Exclusive with `command`; may not contain `#SBATCH` lines.
    pub body: Option<String>,
}

/// One output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Relative path (file name) the artifact should be written to.
    pub path: String,
    /// The contents.
    pub contents: String,
}

/// A plan that a target cannot express. Problems a user can fix in the profile are caught earlier, by
/// the rules; these come from render options or values a specific consumer cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, miette::Diagnostic)]
pub enum RenderError {
    /// An env value this target's syntax cannot carry safely.
    #[error("{name}={value:?} cannot be written safely for this target: {why}")]
    #[diagnostic(
        code(roce::render::unrepresentable),
        help("change the value in the profile; see docs/targets.md for what each target accepts")
    )]
    Unrepresentable {
        /// Variable name.
        name: String,
        /// The value.
        value: String,
        /// Why.
        why: String,
        /// Where the profile sets it.
        origin: Option<roce_model::Origin>,
    },
    /// A plan lowered for one workload, rendered for a target of another.
    #[error("this plan was lowered for {plan}, and cannot be lowered again for {wanted}")]
    #[diagnostic(
        code(roce::render::workload),
        help(
            "render the job's plan (`plan::lower`): `render` lowers a workload target's plan itself"
        )
    )]
    Workload {
        /// The workload the plan was lowered for.
        plan: Workload,
        /// The target's workload.
        wanted: Workload,
    },
    /// An option the target does not take, or takes only with another one.
    #[error("--{option} with --target {target}: {why}")]
    #[diagnostic(code(roce::render::bad_option))]
    OptionForTarget {
        /// The option.
        option: &'static str,
        /// The target's CLI name.
        target: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A render option with a value the target cannot use.
    #[error("--{option} {value:?}: {why}")]
    #[diagnostic(code(roce::render::bad_option))]
    Option {
        /// The option.
        option: String,
        /// Its value.
        value: String,
        /// Why.
        why: String,
    },
}

impl RenderError {
    /// An option whose value cannot be used, and why.
    pub(crate) fn option(option: &str, value: &str, why: impl std::fmt::Display) -> Self {
        RenderError::Option {
            option: option.to_string(),
            value: value.to_string(),
            why: why.to_string(),
        }
    }

    fn unrepresentable(e: &plan::EnvVar, why: quote::Unrepresentable) -> Self {
        RenderError::Unrepresentable {
            name: e.name.clone(),
            value: e.value.clone(),
            why: why.to_string(),
            origin: e.origin,
        }
    }
}

/// Render a plan for one target. `plan` is the job's plan ([`plan::lower`]), which is lowered for the
/// target's workload here, or a plan already lowered for that workload ([`plan::lower_workload`]).
pub fn render(
    plan: &Plan,
    target: Target,
    opts: &RenderOptions,
) -> Result<Vec<Artifact>, RenderError> {
    let one = |path: &str, contents: String| {
        vec![Artifact {
            path: path.to_string(),
            contents,
        }]
    };
    let plan = &*plan.for_workload(target.workload())?;
    exec_options(target, opts)?;
    Ok(match target {
        Target::Pod => one("pod.yaml", edits::pod::render(plan, opts)?),
        Target::Kustomize => kustomize::render(plan, opts)?,
        Target::Sbatch => one("job.sbatch", sbatch::render(plan, opts)?),
        Target::Dockerfile => one("Dockerfile.roce", dockerfile::render(plan, opts)?),
        Target::Env => one("roce.env", dotenv::render(plan, opts)?),
        Target::NcclTestsMpijob => one(
            "nccl-tests-mpijob.yaml",
            validation::mpijob::render(plan, opts)?,
        ),
        Target::NcclTestsSbatch => {
            one("nccl-tests.sbatch", validation::sbatch::render(plan, opts)?)
        }
        Target::UcxPerftest => one(
            "ucx-perftest.yaml",
            validation::ucx_perftest::render(plan, opts)?,
        ),
    })
}

/// Which targets take `exec` and `with_roce_binary`, and what they need with them.
fn exec_options(target: Target, opts: &RenderOptions) -> Result<(), RenderError> {
    let refuse = |option: &'static str, why: &'static str| {
        Err(RenderError::OptionForTarget {
            option,
            target: target.slug(),
            why,
        })
    };
    if let Some(w) = &opts.exec {
        match target {
            Target::Pod if w.command.is_none() => {
                return refuse(
                    "exec",
                    "the pod target has no command of its own to wrap: give the job's command line with --command",
                );
            }
            Target::Kustomize if w.command.is_some() => {
                return refuse(
                    "exec",
                    "the kustomize target puts `roce exec` in front of each selected workload's own `command`; --command is for the pod target, which has none",
                );
            }
            Target::Pod | Target::Dockerfile | Target::Kustomize => {}
            _ => {
                return refuse(
                    "exec",
                    "only the pod, kustomize and dockerfile targets start the job behind `roce exec` (docs/exec.md says how to wrap other workloads)",
                );
            }
        }
    }
    if opts.with_roce_binary && target != Target::Dockerfile {
        return refuse(
            "with-roce-binary",
            "only the dockerfile target copies the roce binary into an image",
        );
    }
    Ok(())
}

/// The provenance comment every artifact starts with.
fn header(comment: &str, plan: &Plan) -> String {
    let mut out = format!(
        "{comment} Generated by roce from profile {} ({} fabric). Re-render instead of editing.\n",
        plan.profile,
        plan.fabric_name()
    );
    if let Some(d) = &plan.description {
        out.push_str(&format!("{comment} {d}\n"));
    }
    out
}
