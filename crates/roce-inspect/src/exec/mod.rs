//! `roce exec`: the fabric variables a job starts with, computed from what its pod actually got.
//!
//! A rendered manifest carries the profile's environment as written. Some of it can only be known in the
//! pod: which RDMA devices it was given (DRA claims, SR-IOV VFs whose names and order differ per node),
//! which of their ports are up, and at which index the routable RoCE v2 GID sits (under macvlan it differs
//! per pod, which is why NCCL's maintainers advise computing `NCCL_IB_GID_INDEX` at start-up,
//! NVIDIA/nccl#718). [`decide`] reads the same facts as `doctor` ([`facts::collect`](crate::doctor::facts::collect))
//! and returns, for every variable of the profile's plan, what the job gets and why:
//!
//! * `NCCL_IB_HCA`: exactly the usable rail ports (`=dev:port,…`), see `rails`;
//! * `NCCL_IB_GID_INDEX` (RoCE) and `UCX_IB_GID_INDEX` (RoCE, UCX over RDMA): the one index every usable
//!   port has a RoCE v2 GID of the profile's family and range at, bound to a netdev of this namespace;
//! * `UCX_NET_DEVICES` (UCX over RDMA): the profile's devices that are usable, or every usable rail port;
//! * every other variable of the plan unchanged;
//! * a variable already set in the environment wins, and the decision says so.
//!
//! Which NICs: when the container has DRA device metadata naming NICs (KEP-5304,
//! [`dra_metadata`]), the RDMA devices it names — what the pod's claims were
//! allocated — else every device sysfs shows (or, for rails, the devices the profile names). [`NicSource`]
//! says which, and a warning when the metadata and sysfs disagree (claimed NICs sysfs does not show, or
//! devices sysfs shows that no claim was allocated).
//!
//! When the profile cannot be met — no RDMA devices, fewer usable rails than the profile has, rail ports
//! without a usable global GID — the launch carries a coded error and must not start, unless
//! [`Options::allow_degraded`], which turns the errors into warnings and starts with what is there. This
//! module decides only: it prints nothing and runs nothing (the CLI does).
//!
//! ```
//! use roce_inspect::doctor::{facts, Env, Root};
//! use roce_inspect::exec::{self, Options};
//! use roce_model::{builtin, load, BuiltinsOnly};
//! let dir = std::env::temp_dir().join("roce-exec-doc-vm");
//! std::fs::create_dir_all(&dir).unwrap();
//! let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
//! // A VM: no RDMA devices at all.
//! let facts = facts::collect(&Root::new(&dir), Some(Env::from_pairs([("HOME", "/root")])));
//! let launch = exec::decide(&facts, &profile, Options::default());
//! assert!(!launch.can_start());
//! assert_eq!(launch.problems[0].code.as_str(), "roce::exec::no_rdma_devices");
//! // --allow-degraded starts it anyway, with the profile's variables.
//! let launch = exec::decide(&facts, &profile, Options { allow_degraded: true });
//! assert!(launch.can_start());
//! assert_eq!(launch.env["NCCL_IB_HCA"], "ibp");
//! ```

mod rails;

use std::ffi::OsStr;
use std::fmt;

use indexmap::IndexMap;
use roce_model::fabric::env::{self as fenv, EnvVar};
use roce_model::model::{FabricKind, NcclList, Profile, UcxMode};
use roce_model::nccl_list::ListKind;
use roce_model::problem::ProblemRecord;
use roce_model::source::{Origin, Spanned};
use roce_model::ucx_list::{NetDevice, UcxNetDevices};
use roce_model::{Code, Problem, Severity};
use serde::{Serialize, Serializer};

use crate::doctor::dra_metadata::{self, Allocation};
use crate::doctor::facts::HostFacts;
use crate::doctor::gid::{Cidr, Family, Want};
pub use rails::{RailPort, Unusable};

/// How to decide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Start even when the profile cannot be met, with what is present (the problems become warnings).
    pub allow_degraded: bool,
}

/// Where a variable's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Already set in the environment: it wins over the profile and over what roce computed.
    Environment,
    /// Computed from this pod's devices and GID tables.
    Computed,
    /// The profile's value, unchanged.
    Profile,
    /// Not set (the decision says why).
    Unset,
}

/// What one variable of the job's environment is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The variable.
    pub name: String,
    /// The value the job gets; `None` when roce sets none.
    pub value: Option<String>,
    /// Where the value comes from.
    pub source: Source,
    /// The profile's value, if it sets one.
    pub profile: Option<String>,
    /// What roce computed from the pod, when it computes this variable.
    pub computed: Option<String>,
    /// Why: how the value was computed, or why none was.
    pub why: String,
}

impl fmt::Display for Decision {
    /// One line: `NCCL_IB_GID_INDEX=13 (computed: …; the profile sets none)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let profile = match &self.profile {
            Some(p) => format!("the profile has {p}"),
            None => "the profile sets none".to_string(),
        };
        match (&self.value, self.source) {
            (Some(v), Source::Environment)
                if self.profile.as_ref() == Some(v)
                    && self.computed.as_ref().is_none_or(|c| c == v) =>
            {
                write!(
                    f,
                    "{}={v} (set in the environment, as the profile has it)",
                    self.name
                )
            }
            (Some(v), Source::Environment) => {
                write!(f, "{}={v} (set in the environment, which wins", self.name)?;
                if let Some(c) = self.computed.as_ref().filter(|c| *c != v) {
                    write!(f, "; roce computed {c}")?;
                }
                if let Some(p) = self.profile.as_ref().filter(|p| *p != v) {
                    write!(f, "; the profile has {p}")?;
                }
                f.write_str(")")
            }
            (Some(v), Source::Computed) => {
                write!(f, "{}={v} (computed: {}; {profile})", self.name, self.why)
            }
            (Some(v), _) if self.why.is_empty() => {
                write!(f, "{}={v} (from the profile)", self.name)
            }
            (Some(v), _) => write!(f, "{}={v} (from the profile: {})", self.name, self.why),
            (None, _) => write!(f, "{} not set ({})", self.name, self.why),
        }
    }
}

/// Where the NICs `roce exec` considered come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NicOrigin {
    /// The DRA device metadata files: the devices the pod's claims were allocated.
    DraMetadata,
    /// `/sys/class/infiniband`: every RDMA device the pod sees (for rails, the ones the profile names).
    Sysfs,
}

/// Which NICs were considered, from where, and where the DRA device metadata and sysfs disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NicSource {
    /// Where the NICs come from.
    pub source: NicOrigin,
    /// Why that source: a sentence.
    pub why: String,
    /// What the metadata files say; `None` when the container has none
    /// (no [`dra_metadata::CONTAINER_DIR`]).
    pub metadata: Option<Allocation>,
    /// RDMA devices sysfs shows that no claim was allocated (with the metadata as source: not used).
    pub not_allocated: Vec<String>,
}

impl NicSource {
    /// NICs the claims were allocated that sysfs does not show.
    pub fn not_in_sysfs(&self) -> Vec<&dra_metadata::ClaimedNic> {
        match (&self.metadata, self.source) {
            (Some(a), NicOrigin::DraMetadata) => a.absent().collect(),
            _ => Vec::new(),
        }
    }

    /// One line for the output, when the container has DRA device metadata (`None` without: the output
    /// is what it was before roce read metadata): `NICs from the DRA device metadata (…): mlx5_0, …`.
    pub fn line(&self) -> Option<String> {
        let a = self.metadata.as_ref()?;
        let mut s = match self.source {
            NicOrigin::DraMetadata => {
                let files: Vec<&str> = {
                    let mut f: Vec<&str> = Vec::new();
                    for n in &a.nics {
                        if !f.contains(&n.file.as_str()) {
                            f.push(&n.file);
                        }
                    }
                    f
                };
                let devices: Vec<String> = a.rdma_devices().iter().map(|d| d.to_string()).collect();
                format!(
                    "NICs from the DRA device metadata ({}): {}",
                    files.join(", "),
                    if devices.is_empty() {
                        "none of them in sysfs".to_string()
                    } else {
                        list(&devices)
                    }
                )
            }
            NicOrigin::Sysfs => format!("NICs from sysfs: {}", self.why),
        };
        let absent: Vec<String> = self
            .not_in_sysfs()
            .iter()
            .map(|n| format!("{} ({})", n.device.label(), n.identifiers()))
            .collect();
        if !absent.is_empty() {
            s.push_str(&format!("; not in sysfs: {}", list(&absent)));
        }
        if !self.not_allocated.is_empty() && self.source == NicOrigin::DraMetadata {
            s.push_str(&format!(
                "; sysfs also shows {}, which no claim was allocated: not used",
                list(&self.not_allocated)
            ));
        }
        if !a.other_files.is_empty() {
            s.push_str(&format!("; no NIC in {}", list(&a.other_files)));
        }
        if !a.unreadable.is_empty() {
            let bad: Vec<String> = a
                .unreadable
                .iter()
                .map(|(f, why)| format!("{f} ({why})"))
                .collect();
            s.push_str(&format!("; not read: {}", list(&bad)));
        }
        Some(s)
    }
}

/// What `roce exec` decided for one start of a job.
#[derive(Debug, Clone, Serialize)]
pub struct Launch {
    /// The profile's name.
    pub profile: String,
    /// `roce` or `infiniband`.
    pub fabric: &'static str,
    /// Rails the profile wants used (its rails that its own `NCCL_IB_HCA` selects).
    pub rails: usize,
    /// Ports the job uses.
    pub usable: usize,
    /// Every port considered, with why it is not used.
    pub ports: Vec<RailPort>,
    /// Where the NICs considered come from: the DRA device metadata or sysfs.
    pub nic_source: NicSource,
    /// The GID index every usable RoCE port shares.
    pub gid_index: Option<u32>,
    /// The GID family wanted (`IPv4`, `IPv6`; `null`: either, IPv4 first).
    pub gid_family: Option<&'static str>,
    /// The GID range wanted.
    pub gid_range: Option<String>,
    /// Started although the profile is not met (`--allow-degraded` and problems).
    pub degraded: bool,
    /// One decision per variable, in the order every target emits the profile's environment.
    pub decisions: Vec<Decision>,
    /// The fabric environment the job gets (variables set in the environment included).
    pub env: IndexMap<String, String>,
    /// Why the profile is not met: errors that stop the start, or warnings with `allow_degraded`.
    #[serde(serialize_with = "records")]
    pub problems: Vec<Problem>,
}

fn records<S: Serializer>(problems: &[Problem], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(problems.iter().map(ProblemRecord::from))
}

impl Launch {
    /// May the job start: no problem is an error?
    pub fn can_start(&self) -> bool {
        !self.problems.iter().any(Problem::is_error)
    }

    /// One line: `profile coreweave/gb300-roce (roce): 16 of 16 rails usable, GID index 11 (RoCE v2 IPv6 in fd02::/16)`.
    pub fn summary(&self) -> String {
        let fabric = if self.fabric == FabricKind::Roce.as_str() {
            "RoCE"
        } else {
            "InfiniBand"
        };
        let mut s = format!(
            "profile {} ({fabric}): {} of {} rails usable",
            self.profile, self.usable, self.rails
        );
        if let Some(i) = self.gid_index {
            s.push_str(&format!(", GID index {i} ({})", self.gid_wanted()));
        }
        if self.degraded {
            s.push_str("; --allow-degraded: starting without what the profile needs");
        } else if !self.can_start() {
            s.push_str("; not starting");
        }
        s
    }

    /// `RoCE v2 IPv6 in fd02::/16`.
    fn gid_wanted(&self) -> String {
        format!(
            "RoCE v2 {}{}",
            self.gid_family.unwrap_or("IPv4 or IPv6"),
            self.gid_range
                .as_ref()
                .map(|r| format!(" in {r}"))
                .unwrap_or_default()
        )
    }

    /// [`Launch::gid_wanted`] before there is a launch.
    fn gid_wanted_of(family: Option<Family>, range: Option<Cidr>) -> String {
        format!(
            "RoCE v2 {}{}",
            family.map_or("IPv4 or IPv6", Family::as_str),
            range.map(|r| format!(" in {r}")).unwrap_or_default()
        )
    }
}

/// Decide the job's fabric environment from the pod's `facts` (whose `env` is the environment the job
/// inherits) and the profile.
pub fn decide(facts: &HostFacts, profile: &Profile, opts: Options) -> Launch {
    let env = &facts.env;
    let fabric = profile.fabric.kind.value;
    let profile_env = profile.env_vars();
    let want = gid_want(env, &profile_env);
    let hca_filter = profile
        .nccl
        .ib_hca
        .as_ref()
        .map(|h| h.list().clone())
        .unwrap_or_default();
    // The NICs the pod's DRA claims were allocated, when the container has the metadata.
    let allocation = facts
        .dra_metadata
        .as_deref()
        .map(|files| dra_metadata::resolve(files, &facts.devices));
    let claimed = allocation.as_ref().filter(|a| a.has_nics());
    let survey = rails::survey(facts, profile, &hca_filter, &want, claimed);
    let usable: Vec<&RailPort> = survey.ports.iter().filter(|p| p.usable()).collect();
    let nic_source = nic_source(allocation.clone(), &survey);

    let mut pod = PodProfile::new(profile);
    pod.hca(
        rails_text(facts, &survey, &usable, claimed.is_some()),
        &usable,
    );
    let gid_text = |i: u32| {
        format!(
            "the {} GID on a netdev of this namespace is at index {i} on {} usable port(s)",
            Launch::gid_wanted_of(want.family, want.range),
            usable.len()
        )
    };
    pod.gid_indexes(survey.gid_index, &gid_text);
    pod.ucx_net_devices(&profile_env, &usable);
    let decisions = decisions(&pod.pod.env_vars(), &profile_env, &pod.why, env);
    let env_out: IndexMap<String, String> = decisions
        .iter()
        .filter_map(|d| d.value.clone().map(|v| (d.name.clone(), v)))
        .collect();

    let mut problems = problems(facts, profile, &survey, usable.len(), &want, opts);
    let degraded = opts.allow_degraded && !problems.is_empty();
    if degraded {
        for p in &mut problems {
            p.severity = Severity::Warning;
        }
    }
    // A warning, never a reason not to start: the ports above are already the metadata's.
    problems.extend(disagreement(profile, &nic_source));
    Launch {
        profile: profile.name.value.clone(),
        fabric: fabric.as_str(),
        rails: survey.wanted,
        usable: usable.len(),
        gid_index: survey.gid_index,
        gid_family: want.family.map(Family::as_str),
        gid_range: want.range.map(|r| r.to_string()),
        ports: survey.ports,
        nic_source,
        degraded,
        decisions,
        env: env_out,
        problems,
    }
}

/// The profile's value of a variable, as the profile's own environment sets it.
fn profile_value(profile_env: &[EnvVar], name: &str) -> Option<String> {
    profile_env
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.value.clone())
}

/// What the GID must be: the environment's settings first, as NCCL reads them, then the profile's.
fn gid_want(env: &crate::doctor::Env, profile_env: &[EnvVar]) -> Want {
    let setting = |name: &str| {
        env.get(name)
            .map(str::to_string)
            .or_else(|| profile_value(profile_env, name))
    };
    Want {
        family: setting(fenv::NCCL_IB_ADDR_FAMILY.name).map(|v| Family::from_nccl(v.trim())),
        range: setting(fenv::NCCL_IB_ADDR_RANGE.name).and_then(|r| Cidr::parse(&r)),
    }
}

/// How many of the profile's rails this pod can use, and of which NICs, as the reason the computed
/// `NCCL_IB_HCA` gives.
fn rails_text(
    facts: &HostFacts,
    survey: &rails::Survey,
    usable: &[&RailPort],
    claimed: bool,
) -> String {
    if facts.devices.is_empty() {
        "no RDMA devices here".to_string()
    } else {
        format!(
            "{} of the profile's {} rails usable{}{}",
            usable.len(),
            survey.wanted,
            if claimed {
                ", of the NICs the DRA device metadata names"
            } else {
                ""
            },
            unusable_suffix(&survey.ports, survey.gid_index)
        )
    }
}

/// The profile as this pod has it: the computed values put into the typed fields, so that the fabric
/// core decides which of them become variables, and where (`UCX_IB_GID_INDEX` only for UCX over RDMA…);
/// `why` holds each computed variable's reason, in the order the decisions list them.
struct PodProfile<'a> {
    profile: &'a Profile,
    pod: Profile,
    why: IndexMap<&'static str, String>,
    at: Origin,
}

impl<'a> PodProfile<'a> {
    fn new(profile: &'a Profile) -> Self {
        PodProfile {
            profile,
            pod: profile.clone(),
            why: IndexMap::new(),
            at: profile.rails.pod_device.origin,
        }
    }

    /// `NCCL_IB_HCA`: exactly the usable ports, where there are any; else the profile's stands, with why.
    fn hca(&mut self, rails_text: String, usable: &[&RailPort]) {
        if usable.is_empty() {
            self.why.insert(fenv::NCCL_IB_HCA.name, rails_text);
            return;
        }
        // Exact names (`=`), each with its port: NCCL's syntax, parsed back so text and list agree.
        let tokens: Vec<String> = usable
            .iter()
            .map(|p| match i32::try_from(p.port) {
                Ok(port) => format!("{}:{port}", p.device),
                Err(_) => p.device.clone(),
            })
            .collect();
        let text = format!("={}", tokens.join(","));
        self.pod.nccl.ib_hca =
            Some(NcclList::parse(Spanned::new(text, self.at), ListKind::IbHca).0);
        let mut w = rails_text;
        if usable.len() > ListKind::IbHca.max_tokens() {
            w.push_str(&format!(
                "; NCCL reads only the first {}",
                ListKind::IbHca.max_tokens()
            ));
        }
        self.why.insert(fenv::NCCL_IB_HCA.name, w);
    }

    /// NCCL's and UCX's GID index: the surveyed one on RoCE (UCX's only when UCX runs over RDMA);
    /// InfiniBand addresses ports by LID, so neither is set.
    fn gid_indexes(&mut self, index: Option<u32>, gid_text: &dyn Fn(u32) -> String) {
        let fabric = self.profile.fabric.kind.value;
        let ucx_mode = self.profile.ucx.mode.value;
        let no_port = "no usable RoCE port to read it from".to_string();
        match (fabric, index) {
            (FabricKind::Roce, Some(i)) => {
                self.pod.fabric.gid_index = Some(Spanned::new(i, self.at));
                self.why.insert(fenv::NCCL_IB_GID_INDEX.name, gid_text(i));
            }
            (FabricKind::Roce, None) => {
                self.why
                    .insert(fenv::NCCL_IB_GID_INDEX.name, no_port.clone());
            }
            (FabricKind::InfiniBand, _) => {}
        }
        match (fabric, index) {
            (FabricKind::Roce, _) if ucx_mode != UcxMode::Rdma => {
                self.why.insert(
                    fenv::UCX_IB_GID_INDEX.name,
                    format!("UCX mode is {}: UCX uses no RDMA port", ucx_mode.as_str()),
                );
            }
            (FabricKind::Roce, Some(i)) => {
                self.pod.ucx.gid_index = Some(Spanned::new(i, self.at));
                self.why.insert(fenv::UCX_IB_GID_INDEX.name, gid_text(i));
            }
            (FabricKind::Roce, None) => {
                self.why.insert(fenv::UCX_IB_GID_INDEX.name, no_port);
            }
            (FabricKind::InfiniBand, _) => {
                for t in [fenv::NCCL_IB_GID_INDEX, fenv::UCX_IB_GID_INDEX] {
                    self.why.insert(
                        t.name,
                        "InfiniBand: ports are addressed by LID and the GID index is ignored"
                            .to_string(),
                    );
                }
            }
        }
    }

    /// `UCX_NET_DEVICES` for UCX over RDMA; in another mode a value the profile sets is explained, not
    /// computed.
    fn ucx_net_devices(&mut self, profile_env: &[EnvVar], usable: &[&RailPort]) {
        let ucx_mode = self.profile.ucx.mode.value;
        if ucx_mode == UcxMode::Rdma {
            let (devices, w) = ucx_devices(self.profile, usable);
            if let Some(text) = devices {
                self.pod.ucx.net_devices =
                    Some(UcxNetDevices::parse(Spanned::new(text, self.at)).0);
            }
            self.why.insert(fenv::UCX_NET_DEVICES.name, w);
        } else if profile_value(profile_env, fenv::UCX_NET_DEVICES.name).is_some() {
            self.why.insert(
                fenv::UCX_NET_DEVICES.name,
                format!("UCX mode is {}, not RDMA", ucx_mode.as_str()),
            );
        }
    }
}

/// The decisions in the order the launch lists them: the pod environment's variables, each computed one
/// it does not set placed among its consumer's.
fn decisions(
    pod_env: &[EnvVar],
    profile_env: &[EnvVar],
    why: &IndexMap<&'static str, String>,
    env: &crate::doctor::Env,
) -> Vec<Decision> {
    // One decision per variable of the pod's environment, plus the computed ones it does not set.
    let mut decisions: Vec<Decision> = pod_env
        .iter()
        .map(|v| decision(v, profile_value(profile_env, &v.name), why, env))
        .collect();
    for (name, w) in why {
        if decisions.iter().any(|d| d.name == *name) {
            continue;
        }
        let d = match env.get(name) {
            Some(v) => Decision {
                name: name.to_string(),
                value: Some(v.to_string()),
                source: Source::Environment,
                profile: None,
                computed: None,
                why: w.clone(),
            },
            None => Decision {
                name: name.to_string(),
                value: None,
                source: Source::Unset,
                profile: None,
                computed: None,
                why: w.clone(),
            },
        };
        // beside the variables of its consumer (`NCCL_…`, `UCX_…`), else at the end
        let prefix = name.split('_').next().unwrap_or_default();
        let at = decisions
            .iter()
            .rposition(|x| x.name.split('_').next() == Some(prefix))
            .map_or(decisions.len(), |i| i + 1);
        decisions.insert(at, d);
    }
    decisions
}

/// Where the NICs come from: the metadata when it names NICs, else sysfs, with why.
fn nic_source(metadata: Option<Allocation>, survey: &rails::Survey) -> NicSource {
    let (source, why) = match &metadata {
        None => (
            NicOrigin::Sysfs,
            format!(
                "no DRA device metadata ({} is absent)",
                dra_metadata::CONTAINER_DIR
            ),
        ),
        Some(a) if a.has_nics() => (
            NicOrigin::DraMetadata,
            format!(
                "the DRA device metadata names {} NIC(s): what the pod's claims were allocated",
                a.nics.len()
            ),
        ),
        Some(a) if !a.unreadable.is_empty() => (
            NicOrigin::Sysfs,
            "the DRA device metadata names no RDMA NIC it could read".to_string(),
        ),
        Some(_) => (
            NicOrigin::Sysfs,
            "the DRA device metadata names no RDMA NIC".to_string(),
        ),
    };
    NicSource {
        not_allocated: if source == NicOrigin::DraMetadata {
            survey.not_allocated.clone()
        } else {
            Vec::new()
        },
        source,
        why,
        metadata,
    }
}

/// The warning when the DRA device metadata and sysfs disagree.
fn disagreement(profile: &Profile, source: &NicSource) -> Option<Problem> {
    let absent: Vec<String> = source
        .not_in_sysfs()
        .iter()
        .map(|n| {
            format!(
                "{} of claim {} request {} ({})",
                n.device.label(),
                n.claim,
                n.request,
                n.identifiers()
            )
        })
        .collect();
    if absent.is_empty() && source.not_allocated.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !absent.is_empty() {
        parts.push(format!(
            "the pod's claims were allocated {} NIC(s) that /sys/class/infiniband does not show: {}",
            absent.len(),
            list(&absent)
        ));
    }
    if !source.not_allocated.is_empty() {
        parts.push(format!(
            "sysfs shows {} RDMA device(s) that no claim was allocated: {} (not used)",
            source.not_allocated.len(),
            list(&source.not_allocated)
        ));
    }
    let at = if profile.nics.value.dra().is_some() {
        (profile.nics.origin, "the profile's DRA NICs")
    } else {
        (profile.rails.pod_device.origin, "the profile's rails")
    };
    Some(
        Problem::new(
            Code::ExecDraMetadataDisagrees,
            format!(
                "the DRA device metadata and sysfs disagree: {}; roce uses the NICs the metadata names",
                parts.join("; ")
            ),
        )
        .help(
            "devices no claim was allocated are the node's, seen because the RDMA subsystem shares network namespaces (`rdma system show` says `netns shared`); a claimed NIC sysfs does not show was not attached to the container: see the DRA driver's kubelet plugin log and the claim's `status.devices`",
        )
        .at(at.0, at.1),
    )
}

/// The decision for one variable of the pod's environment.
fn decision(
    v: &EnvVar,
    profile: Option<String>,
    why: &IndexMap<&'static str, String>,
    env: &crate::doctor::Env,
) -> Decision {
    let reason = why.get(v.name.as_str()).cloned().unwrap_or_default();
    let computed = (profile.as_deref() != Some(v.value.as_str())).then(|| v.value.clone());
    if let Some(have) = env.get(&v.name) {
        return Decision {
            name: v.name.clone(),
            value: Some(have.to_string()),
            source: Source::Environment,
            computed: why.contains_key(v.name.as_str()).then(|| v.value.clone()),
            profile,
            why: reason,
        };
    }
    Decision {
        name: v.name.clone(),
        value: Some(v.value.clone()),
        source: if computed.is_some() {
            Source::Computed
        } else {
            Source::Profile
        },
        profile,
        computed,
        why: reason,
    }
}

/// `UCX_NET_DEVICES` for UCX over RDMA (its text, which the caller parses): the profile's RDMA devices that
/// are usable (its netdev entries kept), or every usable port when the profile names none (or `all`).
fn ucx_devices(profile: &Profile, usable: &[&RailPort]) -> (Option<String>, String) {
    match profile
        .ucx
        .net_devices
        .as_ref()
        .and_then(|d| d.devices().devices())
    {
        Some(items) => {
            let is_usable = |n: &NetDevice| {
                usable
                    .iter()
                    .any(|p| p.device == n.name() && Some(p.port) == n.port())
            };
            let (kept, dropped): (Vec<&NetDevice>, Vec<&NetDevice>) = items
                .iter()
                .partition(|n| n.port().is_none() || is_usable(n));
            if dropped.is_empty() {
                return (None, "every device the profile names is usable".to_string());
            }
            let dropped_text = dropped
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            if kept.iter().all(|n| n.port().is_none()) {
                return (
                    None,
                    format!("none of the profile's RDMA devices is usable ({dropped_text} not)"),
                );
            }
            (
                Some(device_list(kept.iter().map(ToString::to_string))),
                format!("the profile's devices that are usable ({dropped_text} not)"),
            )
        }
        _ if usable.is_empty() => (None, "no usable rail port to name".to_string()),
        _ => (
            Some(device_list(
                usable.iter().map(|p| format!("{}:{}", p.device, p.port)),
            )),
            format!(
                "every usable rail port ({}), since the profile names no devices",
                usable.len()
            ),
        ),
    }
}

/// `UCX_NET_DEVICES` text for these entries: joined by `,`, each once, as `NetDevices` displays a list.
fn device_list(entries: impl Iterator<Item = String>) -> String {
    let mut written: Vec<String> = Vec::new();
    for e in entries {
        if !written.contains(&e) {
            written.push(e);
        }
    }
    written.join(",")
}

/// `; unusable: ibp0p1:1 (DOWN, not ACTIVE), …`, or nothing.
fn unusable_suffix(ports: &[RailPort], chosen: Option<u32>) -> String {
    let bad: Vec<String> = ports
        .iter()
        .filter_map(|p| {
            p.unusable
                .as_ref()
                .map(|u| format!("{} ({})", p.label(), u.describe(chosen)))
        })
        .collect();
    if bad.is_empty() {
        String::new()
    } else {
        format!("; not used: {}", list(&bad))
    }
}

/// `a, b, c` or `a, b, …, z (16)`.
fn list(items: &[String]) -> String {
    match items.len() {
        0..=4 => items.join(", "),
        n => format!("{}, {}, …, {} ({n})", items[0], items[1], items[n - 1]),
    }
}

/// Why the profile is not met, as errors.
fn problems(
    facts: &HostFacts,
    profile: &Profile,
    survey: &rails::Survey,
    usable: usize,
    want: &Want,
    opts: Options,
) -> Vec<Problem> {
    let name = &profile.name.value;
    let outcome = if opts.allow_degraded {
        "--allow-degraded: the job starts anyway"
    } else {
        "the job is not started"
    };
    let degraded_help = if opts.allow_degraded {
        String::new()
    } else {
        "; `--allow-degraded` starts the job anyway, with what is present".to_string()
    };
    let rails = profile.rail_list();
    let first_last = match rails.as_slice() {
        [] => String::new(),
        [one] => format!(" ({})", one.pod_device),
        [first, .., last] => format!(" ({} … {})", first.pod_device, last.pod_device),
    };
    let at = profile.rails.pod_device.origin;
    if facts.devices.is_empty() {
        return vec![
            Problem::new(
                Code::ExecNoRdmaDevices,
                format!(
                    "no RDMA devices here (/sys/class/infiniband is empty): profile {name} has {} rails{first_last}, and without them NCCL runs over TCP sockets; {outcome}",
                    survey.wanted
                ),
            )
            .help(format!(
                "attach the fabric to the pod (`roce render --target pod --profile {name}` or `roce apply` wire it) and run `roce doctor --profile {name}` in it to see what is missing{degraded_help}"
            ))
            .at(at, "the profile's rails"),
        ];
    }
    if usable >= survey.wanted {
        return Vec::new();
    }
    let mut out = Vec::new();
    let describe = |p: &RailPort| {
        p.unusable
            .as_ref()
            .map(|u| format!("{} ({})", p.label(), u.describe(survey.gid_index)))
    };
    let no_gid: Vec<String> = survey
        .ports
        .iter()
        .filter(|p| matches!(p.unusable, Some(Unusable::NoGid(_))))
        .filter_map(describe)
        .collect();
    let other: Vec<String> = survey
        .ports
        .iter()
        .filter(|p| !matches!(p.unusable, None | Some(Unusable::NoGid(_))))
        .filter_map(describe)
        .collect();
    let count = format!(
        "{usable} of the profile's {} rails are usable",
        survey.wanted
    );
    if !no_gid.is_empty() {
        out.push(
            Problem::new(
                Code::ExecNoGlobalGid,
                format!(
                    "{} rail port(s) have no {} GID on a netdev of this namespace: {}; NCCL would pick a GID peers cannot reach. {count}; {outcome}",
                    no_gid.len(),
                    Launch::gid_wanted_of(want.family, want.range),
                    list(&no_gid)
                ),
            )
            .help(format!(
                "the rail interfaces need their routable address (check the NADs' IPAM, and `roce doctor --profile {name}` for the GID tables){degraded_help}"
            ))
            .at(at, "the profile's rails"),
        );
    }
    if !other.is_empty() {
        out.push(
            Problem::new(
                Code::ExecTooFewRails,
                format!("{count}: {}; {outcome}", list(&other)),
            )
            .help(format!(
                "`roce doctor --profile {name}` in this pod says what is missing (Multus networks, the RDMA resource, ports down){degraded_help}"
            ))
            .at(at, "the profile's rails"),
        );
    }
    out
}

/// The exit status and diagnostic for a command that could not be executed: 127 when it does not exist,
/// 126 when it exists but cannot be run (permissions, not an executable), as a shell reports them.
///
/// ```
/// let e = std::io::Error::from(std::io::ErrorKind::NotFound);
/// let (p, status) = roce_inspect::exec::command_failure("no-such-tool".as_ref(), &e);
/// assert_eq!((p.code.as_str(), status), ("roce::exec::command_not_found", 127));
/// ```
pub fn command_failure(program: &OsStr, err: &std::io::Error) -> (Problem, u8) {
    let program = program.to_string_lossy();
    if err.kind() == std::io::ErrorKind::NotFound {
        (
            Problem::new(
                Code::ExecCommandNotFound,
                format!("cannot run `{program}`: {err}"),
            )
            .help("the command after `--` must be in the image: give its path, or a name found in PATH"),
            127,
        )
    } else {
        (
            Problem::new(
                Code::ExecCommandNotExecutable,
                format!("cannot run `{program}`: {err}"),
            )
            .help("the file must be an executable (mode +x) program or script with a `#!` line"),
            126,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ucx_syntax() {
        assert_eq!(list(&["a".into(), "b".into()]), "a, b");
        let many: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        assert_eq!(list(&many), "0, 1, …, 5 (6)");
        let (d, issues) = roce_model::ucx_list::parse_net_devices("ibp0p0:1,eth0");
        assert!(issues.is_empty());
        assert_eq!(d.to_string(), "ibp0p0:1,eth0");
    }
}
