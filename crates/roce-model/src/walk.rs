//! The one walker: merged tree → typed [`Profile`], with type checks and did-you-mean for unknown keys.
//!
//! Every problem found is collected; a profile is returned only when no error was found here (rules run
//! afterwards on the typed model).

use indexmap::IndexMap;

use std::num::NonZeroU32;

use crate::fabric::attach::{CAPABILITIES, IPC_LOCK};
use crate::fabric::dra::{
    AlignBy, CelExpression, ChannelAllocation, ClaimedGpus, CliqueAffinity, ComputeDomain,
    DeviceClassName, DraNics, KueueTopology, LabelKey, LabelValue, NicAttachment, NvlinkDomain,
    Placement, TopologyMode,
};
use crate::fabric::env;
use crate::fabric::provider::{HostMount, Provider, TopologyFile};
use crate::fabric::ucx::MIN_RDMA_CORE;
use crate::fields::{self, Field, Kind, Req, Section};
use crate::model::*;
use crate::names::{Capability, DnsLabel, EnvKey, K8sName, NameError, ResourceName};
use crate::problem::{Code, Problem};
use crate::source::{Origin, Spanned};
use crate::suggest;
use crate::tree::{Entry, Node, Scalar, Value};
use crate::ucx_list::{self, UcxNetDevices, UcxTls};

/// Walk a merged tree into a profile.
pub(crate) fn profile(root: &Node, problems: &mut Vec<Problem>) -> Option<Profile> {
    let mut w = Walker { problems };
    let before = w.problems.len();
    let mut top = w.map(root, &fields::PROFILE)?;
    let mut blank = Profile::default();
    top.read_bound(&mut w, &mut blank);
    let fabric = top.get(&mut w, "fabric").and_then(|n| w.fabric(n));
    let node_pool = top.get(&mut w, "node-pool").and_then(|n| w.node_pool(n));
    let rails = top.get(&mut w, "rails").and_then(|n| w.rails(n));
    let multus = match top.get(&mut w, "multus") {
        Some(n) => w.multus(n),
        None => Some(Multus::None { at: None }),
    };
    let nccl = match top.get(&mut w, "nccl") {
        Some(n) => w.nccl(n),
        None => Some(Nccl::default()),
    };
    let ucx = match top.get(&mut w, "ucx") {
        Some(n) => w.ucx(n),
        None => Some(Ucx::off(root.origin)),
    };
    let image = match top.get(&mut w, "image") {
        Some(n) => w.image(n),
        None => Some(Image::default()),
    };
    let job = match top.get(&mut w, "job") {
        Some(n) => w.job(n),
        None => Some(Job::default()),
    };
    let capabilities = top
        .get(&mut w, "capabilities")
        .map(|n| w.string_list(n))
        .unwrap_or_default();
    let capabilities: Vec<Spanned<Capability>> = capabilities
        .iter()
        .filter_map(|cap| {
            if w.capability(cap) {
                w.parse_spanned(cap)
            } else {
                None
            }
        })
        .collect();
    let env = top
        .get(&mut w, "env")
        .map(|n| w.env_map(n, None))
        .unwrap_or_default();
    let nics = match top.get(&mut w, "nics") {
        Some(n) => w.nics(n),
        None => Some(Spanned::new(NicAttachment::MultusAndResource, root.origin)),
    };
    let nvlink_domain = match top.get(&mut w, "nvlink-domain") {
        Some(n) => w.nvlink_domain(n),
        None => Some(Spanned::new(NvlinkDomain::None, root.origin)),
    };
    let placement = match top.get(&mut w, "placement") {
        Some(n) => w.placement(n),
        None => Some(Spanned::new(Placement::default(), root.origin)),
    };
    let nccl_net = match top.get(&mut w, "nccl-net") {
        Some(n) => w.nccl_net(n),
        None => Some(NcclNet::ib_verbs(root.origin)),
    };
    top.finish(&mut w);
    // Unknown keys leave the typed profile intact, so the rules can still run and report in the same
    // pass; any other error means a value is missing or wrong, and rules would only echo it.
    if w.problems[before..]
        .iter()
        .any(|p| p.is_error() && !matches!(p.code, Code::UnknownKey | Code::KnobName))
    {
        return None;
    }
    Some(Profile {
        fabric: fabric?,
        node_pool: node_pool?,
        rails: rails?,
        multus: multus?,
        nccl: nccl?,
        ucx: ucx?,
        image: image?,
        job: job?,
        capabilities,
        env,
        nics: nics?,
        nvlink_domain: nvlink_domain?,
        placement: placement?,
        nccl_net: nccl_net?,
        ..blank
    })
}

impl Ucx {
    fn off(origin: Origin) -> Self {
        Ucx {
            mode: Spanned::new(UcxMode::Off, origin),
            min_rdma_core: Spanned::new(MIN_RDMA_CORE, origin),
            ..Ucx::default()
        }
    }
}

struct Walker<'p> {
    problems: &'p mut Vec<Problem>,
}

/// A map being read, against its section of `fields::table`: the table says which keys
/// it has (under the mode its positional key chose), which are required and what each holds.
struct MapView<'n> {
    entries: &'n [Entry],
    /// A scalar written where the map was expected stands for the map's positional key.
    implicit: Option<(&'static str, &'n Node)>,
    origin: Origin,
    section: &'static Section,
    /// The value its positional key chose (`per-port`), which decides the keys that apply.
    mode: Option<&'static str>,
}

impl<'n> MapView<'n> {
    /// The table's entry for `key`; the walker reads no key the table lacks.
    fn field(&self, key: &str) -> &'static Field {
        let field = self.section.field(key).unwrap_or_else(|| {
            panic!(
                "`{}` has no key `{key}` in fields::table",
                self.section.name()
            )
        });
        debug_assert!(
            field.when.is_empty() || self.mode.is_some_and(|m| field.when.contains(&m)),
            "`{}` reads `{key}` under mode {:?}, which the table does not give it",
            self.section.name(),
            self.mode
        );
        field
    }

    /// The value of `key`, reported missing when the table requires it.
    fn get(&mut self, w: &mut Walker<'_>, key: &'static str) -> Option<&'n Node> {
        let field = self.field(key);
        #[cfg(test)]
        read::record(self.section.path_of(field));
        let node = match self.implicit {
            Some((k, node)) if k == key => Some(node),
            _ => self
                .entries
                .iter()
                .find(|e| e.key.value == key)
                .map(|e| &e.node),
        };
        if node.is_none() && field.req != Req::Optional {
            let section = self.section.name();
            w.problems.push(
                Problem::new(Code::MissingKey, format!("`{section}` needs `{key}`"))
                    .at(self.origin, format!("`{key}` missing here"))
                    .help(format!(
                        "add `{key}` to `{section}`; docs/reference.md lists every key"
                    )),
            );
        }
        node
    }

    /// A whole number in the table's range.
    fn int(&mut self, w: &mut Walker<'_>, key: &'static str) -> Option<Spanned<u32>> {
        let Kind::Int { min, max } = self.field(key).kind else {
            panic!("fields::table: `{key}` is not a number");
        };
        self.get(w, key).and_then(|n| w.uint(n, min, max))
    }

    /// One of the table's choices for `key`, as the walker's values; the positional key's choice sets
    /// the section's mode.
    fn choose<T: Copy>(
        &mut self,
        w: &mut Walker<'_>,
        key: &'static str,
        choices: &[(&'static str, T)],
    ) -> Option<Spanned<T>> {
        let Kind::Choice(names) = self.field(key).kind else {
            panic!("fields::table: `{key}` is not a choice");
        };
        debug_assert!(
            choices.iter().map(|(n, _)| *n).eq(names.iter().copied()),
            "the walker's choices for `{key}` are not the table's"
        );
        let node = self.get(w, key)?;
        let v = w.one_of(node, choices)?;
        if self.section.positional == Some(key)
            && let Value::Scalar(Scalar::Str(chosen)) = &node.value
        {
            self.mode = names.iter().copied().find(|n| n == chosen);
        }
        Some(v)
    }

    /// Reads every key the table binds (`fields::bind`) into `section`, the section's struct.
    fn read_bound<S: std::any::Any>(&mut self, w: &mut Walker<'_>, section: &mut S) {
        for field in self.section.fields {
            // Each time: a positional choice read here sets the mode the later keys depend on.
            let mode = self.mode;
            let applies = field.when.is_empty() || mode.is_some_and(|m| field.when.contains(&m));
            if let (Some(bind), true) = (field.bind, applies) {
                bind.read(&mut KeyReader { m: self, w, field }, section);
            }
        }
    }

    /// Reports every key the table does not give the section (under its mode).
    fn finish(self, w: &mut Walker<'_>) {
        let known: Vec<&str> = self.section.keys(self.mode).collect();
        for entry in self.entries {
            if !known.contains(&entry.key.value.as_str()) {
                w.problems.push(
                    Problem::new(
                        Code::UnknownKey,
                        format!("`{}` has no key `{}`", self.section.name(), entry.key.value),
                    )
                    .at(entry.key.origin, "unknown key")
                    .help(suggest::help(&entry.key.value, &known)),
                );
            }
        }
    }
}

/// One key of a section being read, as the bindings read it ([`fields::Read`]).
struct KeyReader<'a, 'n, 'p> {
    m: &'a mut MapView<'n>,
    w: &'a mut Walker<'p>,
    field: &'static Field,
}

impl<'n> KeyReader<'_, 'n, '_> {
    fn node(&mut self) -> Option<&'n Node> {
        self.m.get(self.w, self.field.key)
    }
}

impl fields::Read for KeyReader<'_, '_, '_> {
    fn string(&mut self) -> Option<Spanned<String>> {
        self.node().and_then(|n| self.w.string(n))
    }

    fn nonempty(&mut self) -> Option<Spanned<String>> {
        self.node().and_then(|n| self.w.nonempty(n))
    }

    fn abs_path(&mut self) -> Option<Spanned<String>> {
        self.node().and_then(|n| self.w.abs_path(n))
    }

    fn cidr(&mut self) -> Option<Spanned<String>> {
        self.node().and_then(|n| self.w.cidr(n))
    }

    fn pattern(&mut self) -> Option<Spanned<String>> {
        self.node().and_then(|n| self.w.pattern(n))
    }

    fn k8s_name(&mut self) -> Option<Spanned<K8sName>> {
        self.node().and_then(|n| self.w.parsed::<K8sName>(n))
    }

    fn int(&mut self) -> Option<Spanned<u32>> {
        self.m.int(self.w, self.field.key)
    }

    fn boolean(&mut self) -> Option<Spanned<bool>> {
        self.node().and_then(|n| self.w.boolean(n))
    }

    fn choice(&mut self) -> Option<Spanned<usize>> {
        let Kind::Choice(names) = self.field.kind else {
            panic!("fields::table: `{}` is not a choice", self.field.key);
        };
        let indexed: Vec<(&str, usize)> = names.iter().copied().zip(0..).collect();
        self.m.choose(self.w, self.field.key, &indexed)
    }

    fn nccl_release(&mut self) -> Option<Spanned<NcclRelease>> {
        self.node().and_then(|n| self.w.nccl_release(n))
    }

    fn nccl_list(&mut self, by_release: bool) -> Option<NcclList> {
        let env = self.field.env[0];
        self.node()
            .and_then(|n| self.w.nccl_list(n, env, by_release))
    }

    fn ucx_tls(&mut self) -> Option<UcxTls> {
        self.node().and_then(|n| {
            self.w
                .ucx_list(n, env::UCX_TLS.name, ucx_list::UcxTls::parse)
        })
    }

    fn origin(&self) -> Origin {
        self.m.origin
    }

    fn ucx_net_devices(&mut self) -> Option<UcxNetDevices> {
        self.node().and_then(|n| {
            self.w
                .ucx_list(n, env::UCX_NET_DEVICES.name, ucx_list::UcxNetDevices::parse)
        })
    }
}

impl Walker<'_> {
    fn mismatch(&mut self, node: &Node, expected: &str) {
        self.problems.push(
            Problem::new(
                Code::TypeMismatch,
                format!("expected {expected}, found {}", node.value.type_name()),
            )
            .at(node.origin, format!("expected {expected}"))
            .help(match (&node.value, expected) {
                (Value::Scalar(Scalar::Int(_)), e) if e.contains("string") => {
                    "quote the value to make it a string".to_string()
                }
                (Value::Scalar(Scalar::Str(s)), e)
                    if e.contains("number") && s.trim().parse::<i64>().is_ok() =>
                {
                    format!(
                        "remove the quotes: `{}` is a number, `\"{s}\"` is a string",
                        s.trim()
                    )
                }
                (Value::Scalar(Scalar::Str(s)), e)
                    if e.contains("boolean") && ["true", "false"].contains(&s.trim()) =>
                {
                    format!("remove the quotes: `#{0}` in KDL, `{0}` in YAML", s.trim())
                }
                _ => format!("write {expected} here; see docs/reference.md"),
            }),
        );
    }

    fn invalid(&mut self, origin: Origin, message: String, help: String) {
        self.problems.push(
            Problem::new(Code::InvalidValue, message)
                .at(origin, "")
                .help(help),
        );
    }

    /// A section of the table, as a map; a scalar stands for its positional key where it
    /// has a short form (`fabric: roce` = `fabric: {kind: roce}`).
    fn map<'n>(&mut self, node: &'n Node, section: &'static Section) -> Option<MapView<'n>> {
        let view = |entries, implicit| MapView {
            entries,
            implicit,
            origin: node.origin,
            section,
            mode: None,
        };
        match (&node.value, section.short.and(section.positional)) {
            (Value::Map(entries), _) => Some(view(entries, None)),
            (Value::Seq(items), _) if items.is_empty() => Some(view(&[], None)),
            (Value::Scalar(_), Some(key)) => Some(view(&[], Some((key, node)))),
            _ => {
                self.mismatch(node, "a map");
                None
            }
        }
    }

    fn string(&mut self, node: &Node) -> Option<Spanned<String>> {
        match &node.value {
            Value::Scalar(Scalar::Str(s)) => Some(Spanned::new(s.clone(), node.origin)),
            _ => {
                self.mismatch(node, "a string");
                None
            }
        }
    }

    fn nonempty(&mut self, node: &Node) -> Option<Spanned<String>> {
        let s = self.string(node)?;
        if s.value.is_empty() {
            self.invalid(
                node.origin,
                "this value must not be empty".into(),
                "give a value, or remove the key".into(),
            );
            return None;
        }
        Some(s)
    }

    /// A validated name ([`crate::names`]): the parser's own message and fix on failure.
    fn parsed<T: std::str::FromStr<Err = NameError>>(&mut self, node: &Node) -> Option<Spanned<T>> {
        let s = self.nonempty(node)?;
        self.parse_spanned(&s)
    }

    fn parse_spanned<T: std::str::FromStr<Err = NameError>>(
        &mut self,
        s: &Spanned<String>,
    ) -> Option<Spanned<T>> {
        match s.value.parse() {
            Ok(v) => Some(Spanned::new(v, s.origin)),
            Err(NameError { message, help }) => {
                self.invalid(s.origin, message, help);
                None
            }
        }
    }

    fn boolean(&mut self, node: &Node) -> Option<Spanned<bool>> {
        match &node.value {
            Value::Scalar(Scalar::Bool(b)) => Some(Spanned::new(*b, node.origin)),
            _ => {
                self.mismatch(
                    node,
                    "a boolean (`#true`/`#false` in KDL, `true`/`false` in YAML)",
                );
                None
            }
        }
    }

    fn uint(&mut self, node: &Node, min: u32, max: u32) -> Option<Spanned<u32>> {
        match &node.value {
            Value::Scalar(Scalar::Int(i)) => match u32::try_from(*i) {
                Ok(v) if (min..=max).contains(&v) => Some(Spanned::new(v, node.origin)),
                _ => {
                    self.invalid(
                        node.origin,
                        format!("{i} is out of range"),
                        format!("use a whole number from {min} to {max}"),
                    );
                    None
                }
            },
            _ => {
                self.mismatch(node, "a whole number");
                None
            }
        }
    }

    fn one_of<T: Copy>(&mut self, node: &Node, choices: &[(&str, T)]) -> Option<Spanned<T>> {
        let s = self.string(node)?;
        if let Some((_, v)) = choices.iter().find(|(name, _)| *name == s.value) {
            return Some(Spanned::new(*v, s.origin));
        }
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        self.invalid(
            s.origin,
            format!("`{}` is not a valid choice", s.value),
            suggest::help(&s.value, &names),
        );
        None
    }

    fn string_list(&mut self, node: &Node) -> Vec<Spanned<String>> {
        match &node.value {
            Value::Seq(items) => items.iter().filter_map(|i| self.string(i)).collect(),
            Value::Scalar(Scalar::Str(_)) => self.string(node).into_iter().collect(),
            _ => {
                self.mismatch(node, "a list of strings");
                Vec::new()
            }
        }
    }

    /// A map of env-like values. `prefix` restricts keys (NCCL knobs).
    fn env_map(&mut self, node: &Node, prefix: Option<&str>) -> IndexMap<EnvKey, Spanned<String>> {
        let mut out = IndexMap::new();
        let entries: &[Entry] = match &node.value {
            Value::Map(e) => e,
            Value::Seq(items) if items.is_empty() => &[],
            _ => {
                self.mismatch(node, "a map of NAME value");
                return out;
            }
        };
        for entry in entries {
            let key = &entry.key;
            let Some(name) = self.parse_spanned::<EnvKey>(key) else {
                continue;
            };
            if let Some(prefix) = prefix
                && !key.value.starts_with(prefix)
            {
                self.problems.push(
                    Problem::new(
                        Code::KnobName,
                        format!("`{}` is not an {prefix}* variable", key.value),
                    )
                    .at(key.origin, "not an NCCL knob")
                    .help("put non-NCCL variables in the profile's `env` block"),
                );
                continue;
            }
            if let Some(value) = self.env_value(&entry.node) {
                out.insert(name.value, value);
            }
        }
        out
    }

    /// An env value: a string, or an integer written as a number (kept in decimal).
    fn env_value(&mut self, node: &Node) -> Option<Spanned<String>> {
        match &node.value {
            Value::Scalar(Scalar::Str(s)) => Some(Spanned::new(s.clone(), node.origin)),
            Value::Scalar(Scalar::Int(i)) => Some(Spanned::new(i.to_string(), node.origin)),
            Value::Scalar(Scalar::Bool(b)) => {
                self.problems.push(
                    Problem::new(
                        Code::TypeMismatch,
                        format!("expected a string or integer, found the boolean {b}"),
                    )
                    .at(node.origin, "a boolean")
                    .help("write the exact text the program should see, quoted (NCCL reads `true` as 0: use \"1\")"),
                );
                None
            }
            _ => {
                self.mismatch(node, "a string or integer");
                None
            }
        }
    }

    /// Whether `cap` is one roce adds; reports it when not.
    fn capability(&mut self, cap: &Spanned<String>) -> bool {
        if CAPABILITIES.contains(&cap.value.as_str()) {
            return true;
        }
        let bare = cap.value.trim_start_matches("CAP_");
        let help = if CAPABILITIES.contains(&bare) {
            format!("write `{bare}`, without the `CAP_` prefix")
        } else if bare.eq_ignore_ascii_case("SYS_ADMIN") {
            format!(
                "roce never adds SYS_ADMIN: the fabric needs only `{IPC_LOCK}`; the capabilities roce accepts are {}",
                CAPABILITIES
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            suggest::help(bare, CAPABILITIES)
        };
        self.problems.push(
            Problem::new(
                Code::InvalidValue,
                format!("`{}` is not a capability roce adds", cap.value),
            )
            .at(cap.origin, "not accepted")
            .help(help),
        );
        false
    }

    fn fabric(&mut self, node: &Node) -> Option<Fabric> {
        let mut m = self.map(node, &fields::FABRIC)?;
        let mut fabric = Fabric::default();
        m.read_bound(self, &mut fabric);
        m.finish(self);
        Some(fabric)
    }

    fn cidr(&mut self, node: &Node) -> Option<Spanned<String>> {
        let s = self.string(node)?;
        let ok = s.value.split_once('/').is_some_and(|(addr, len)| {
            let len: Option<u8> = len.parse().ok();
            match (addr.parse::<std::net::IpAddr>(), len) {
                (Ok(std::net::IpAddr::V4(_)), Some(l)) => l <= 32,
                (Ok(std::net::IpAddr::V6(_)), Some(l)) => l <= 128,
                _ => false,
            }
        });
        if !ok {
            self.invalid(
                s.origin,
                format!("`{}` is not a CIDR range", s.value),
                "write an address and prefix length, e.g. `fd02::/16`; NCCL silently ignores a malformed range".into(),
            );
            return None;
        }
        Some(s)
    }

    fn node_pool(&mut self, node: &Node) -> Option<NodePool> {
        let mut m = self.map(node, &fields::NODE_POOL)?;
        let mut pool = NodePool::default();
        m.read_bound(self, &mut pool);
        // `rdma-resource "NAME"` or `rdma-resource "NAME" count=N` (EFA: one resource per interface).
        let (rdma_resource, rdma_resource_count) = match m.get(self, "rdma-resource") {
            Some(n) => match self.map(n, &fields::NODE_POOL_RDMA_RESOURCE) {
                Some(mut r) => {
                    let name = r
                        .get(self, "name")
                        .and_then(|n| self.parsed::<ResourceName>(n));
                    let count = r.int(self, "count");
                    r.finish(self);
                    (name, count)
                }
                None => (None, None),
            },
            None => (None, None),
        };
        let node_labels = m
            .get(self, "node-labels")
            .map(|n| self.label_map(n))
            .unwrap_or_default();
        m.finish(self);
        Some(NodePool {
            rdma_resource,
            rdma_resource_count,
            node_labels,
            ..pool
        })
    }

    fn label_map(&mut self, node: &Node) -> IndexMap<String, Spanned<String>> {
        let mut out = IndexMap::new();
        let Value::Map(entries) = &node.value else {
            self.mismatch(node, "a map of label value");
            return out;
        };
        for e in entries {
            if let Some(v) = self.string(&e.node) {
                out.insert(e.key.value.clone(), v);
            }
        }
        out
    }

    fn pattern(&mut self, node: &Node) -> Option<Spanned<String>> {
        let s = self.nonempty(node)?;
        let mut rest = s.value.as_str();
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').map(|c| open + c + 1);
            let Some(close) = close else { break };
            let ph = &rest[open..close];
            if !PATTERN_PLACEHOLDERS.contains(&ph) {
                self.invalid(
                    node.token_origin(0..s.value.len()),
                    format!("unknown placeholder `{ph}` in `{}`", s.value),
                    suggest::help(ph, PATTERN_PLACEHOLDERS),
                );
                return None;
            }
            rest = &rest[close..];
        }
        Some(s)
    }

    /// `pod-device`: one name pattern, or a list of names, one per rail (each a literal name: no
    /// placeholders, no duplicates).
    fn device_names(&mut self, node: &Node) -> Option<Spanned<DeviceNames>> {
        if !matches!(node.value, Value::Seq(_)) {
            return self.pattern(node).map(|p| p.map(DeviceNames::Pattern));
        }
        let items = self.string_list(node);
        let mut names: Vec<String> = Vec::with_capacity(items.len());
        for item in &items {
            if item.value.is_empty()
                || item.value.contains(['{', '}', ',', ':'])
                || item.value.contains(char::is_whitespace)
            {
                self.invalid(
                    item.origin,
                    format!("`{}` is not an RDMA device name", item.value),
                    "a list names each device as the pod sees it (`mlx5_0`); placeholders belong in the one-pattern form".into(),
                );
                return None;
            }
            if names.contains(&item.value) {
                self.invalid(
                    item.origin,
                    format!("`{}` is named twice", item.value),
                    "each rail is its own device: name each once".into(),
                );
                return None;
            }
            names.push(item.value.clone());
        }
        if names.is_empty() {
            self.mismatch(node, "a name pattern or a list of device names");
            return None;
        }
        Some(Spanned::new(DeviceNames::List(names), node.origin))
    }

    fn rails(&mut self, node: &Node) -> Option<Rails> {
        let mut m = self.map(node, &fields::RAILS)?;
        let mut rails = Rails::default();
        m.read_bound(self, &mut rails);
        let nics = m.int(self, "nics");
        let ports = m.int(self, "ports");
        let pod_device = m.get(self, "pod-device").and_then(|n| self.device_names(n));
        m.finish(self);
        if let (Some(n), Some(p), Some(d)) = (&nics, &ports, &pod_device)
            && let DeviceNames::List(names) = &d.value
            && names.len() as u64 != u64::from(n.value) * u64::from(p.value)
        {
            self.invalid(
                d.origin,
                format!(
                    "{} device names for {} rails ({} NICs x {} ports)",
                    names.len(),
                    n.value * p.value,
                    n.value,
                    p.value
                ),
                "name one device per rail, in rail order (NIC-major), or give one pattern".into(),
            );
            return None;
        }
        Some(Rails {
            nics: nics?,
            ports: ports?,
            pod_device: pod_device?,
            ..rails
        })
    }

    fn k8s_name(&mut self, node: &Node) -> Option<Spanned<String>> {
        let s = self.nonempty(node)?;
        // Patterns are checked after expansion; here only the literal characters.
        let literal: String = {
            let mut out = String::new();
            let mut depth = 0;
            for c in s.value.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ if depth == 0 => out.push(c),
                    _ => {}
                }
            }
            out
        };
        if literal.len() > 253
            || !literal
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        {
            self.invalid(
                s.origin,
                format!("`{}` is not a valid Kubernetes name", s.value),
                "use lower-case letters, digits, `-` and `.`".into(),
            );
            return None;
        }
        Some(s)
    }

    fn multus(&mut self, node: &Node) -> Option<Multus> {
        let mut m = self.map(node, &fields::MULTUS)?;
        let at = Spanned::new((), node.origin);
        #[derive(Clone, Copy)]
        enum Mode {
            PerPort,
            Backend,
            None,
        }
        let mode = m.choose(
            self,
            "mode",
            &[
                ("per-port", Mode::PerPort),
                ("backend", Mode::Backend),
                ("none", Mode::None),
            ],
        )?;
        let out = match mode.value {
            Mode::None => Some(Multus::None { at: Some(at) }),
            Mode::PerPort => {
                let namespace = m
                    .get(self, "namespace")
                    .and_then(|n| self.parsed::<DnsLabel>(n));
                let name = m.get(self, "name").and_then(|n| {
                    let p = self.pattern(n)?;
                    self.k8s_name(n).map(|_| p)
                });
                let nads = m.get(self, "nads").map(|n| {
                    let list = self.string_list(n);
                    let list = list.iter().filter_map(|s| self.parse_spanned(s)).collect();
                    Spanned::new(list, n.origin)
                });
                Some(Multus::PerPort {
                    namespace: namespace?,
                    name: name?,
                    nads,
                    at,
                })
            }
            Mode::Backend => {
                let namespace = m
                    .get(self, "namespace")
                    .and_then(|n| self.parsed::<DnsLabel>(n));
                let name = m.get(self, "name").and_then(|n| self.parsed::<K8sName>(n));
                Some(Multus::Backend {
                    namespace: namespace?,
                    name: name?,
                    at,
                })
            }
        };
        m.finish(self);
        out
    }

    /// With a release named (`by_release`), whether it reads fields after the port is the version rules' to
    /// say (`roce::nccl::version_syntax`), not a warning for every release.
    fn nccl_list(&mut self, node: &Node, env: &str, by_release: bool) -> Option<NcclList> {
        let text = self.string(node)?;
        let (list, issues) = NcclList::parse(text, nccl_list_kind(env));
        for issue in issues {
            if by_release && issue.kind == crate::nccl_list::TokenIssueKind::ExtraFields {
                continue;
            }
            let origin = node.token_origin(issue.range.clone());
            self.problems
                .push(crate::rules::nccl::token_issue(env, &issue.kind, origin));
        }
        Some(list)
    }

    /// `version="2.28"`: a string, so that `2.30` stays `2.30` (a YAML or KDL number `2.30` is the float
    /// 2.3).
    fn nccl_release(&mut self, node: &Node) -> Option<Spanned<NcclRelease>> {
        if let Value::Scalar(Scalar::Float(f)) = &node.value {
            self.problems.push(
                Problem::new(
                    Code::TypeMismatch,
                    format!("expected a string, found the number {f}"),
                )
                .at(node.origin, "a number")
                .help(
                    "quote the release as NCCL numbers it, e.g. `\"2.30\"`: as a number, `2.30` is 2.3, another release",
                ),
            );
            return None;
        }
        self.parsed(node)
    }

    fn nccl(&mut self, node: &Node) -> Option<Nccl> {
        let mut m = self.map(node, &fields::NCCL)?;
        let mut nccl = Nccl::default();
        m.read_bound(self, &mut nccl);
        nccl.inspector = m.get(self, "inspector").and_then(|n| self.inspector(n));
        nccl.knobs = m
            .get(self, "knobs")
            .map(|n| self.env_map(n, Some("NCCL_")))
            .unwrap_or_default();
        m.finish(self);
        Some(nccl)
    }

    /// `inspector "json"|"prometheus" [plugin=…] [dump-dir=/…] [interval-us=N] [host-path=/…]`.
    fn inspector(&mut self, node: &Node) -> Option<Spanned<Inspector>> {
        let mut m = self.map(node, &fields::NCCL_INSPECTOR)?;
        let mut inspector = Inspector::default();
        m.read_bound(self, &mut inspector);
        m.finish(self);
        Some(Spanned::new(inspector, node.origin))
    }

    /// `nccl-net PROVIDER [name=…] [library-path=…] { host-mounts { NAME host-path=… mount-path=… };
    /// env { … }; pod-annotations { … } }`.
    fn nccl_net(&mut self, node: &Node) -> Option<NcclNet> {
        #[derive(Clone, Copy)]
        enum Kind {
            Ib,
            Ofi,
            Gib,
            Plugin,
        }
        let mut m = self.map(node, &fields::NCCL_NET)?;
        let kind = m.choose(
            self,
            "provider",
            &[
                ("ib", Kind::Ib),
                ("ofi", Kind::Ofi),
                ("gib", Kind::Gib),
                ("plugin", Kind::Plugin),
            ],
        );
        let name = m.get(self, "name").and_then(|n| self.nonempty(n));
        let provider = match kind.map(|k| k.value) {
            Some(Kind::Ib) => Some(Provider::IbVerbs),
            Some(Kind::Ofi) => Some(Provider::Ofi),
            Some(Kind::Gib) => Some(Provider::Gib),
            Some(Kind::Plugin) => match &name {
                Some(n) => Some(Provider::Plugin(n.value.clone())),
                None => {
                    self.invalid(
                        node.origin,
                        "`nccl-net plugin` needs the plugin's network `name`".to_string(),
                        "write `nccl-net \"plugin\" name=\"NAME\"`: NCCL_NET is set to it"
                            .to_string(),
                    );
                    None
                }
            },
            None => None,
        };
        let library_path = m.get(self, "library-path").and_then(|n| self.nonempty(n));
        let host_mounts = m
            .get(self, "host-mounts")
            .map(|n| self.host_mounts(n))
            .unwrap_or_default();
        let env = m
            .get(self, "env")
            .map(|n| self.env_map(n, None))
            .unwrap_or_default();
        let pod_annotations = m
            .get(self, "pod-annotations")
            .map(|n| self.label_map(n))
            .unwrap_or_default();
        let topology = m
            .get(self, "topology-file")
            .and_then(|n| self.topology_file(n));
        m.finish(self);
        let origin = kind.map_or(node.origin, |k| k.origin);
        Some(NcclNet {
            provider: Spanned::new(provider?, origin),
            library_path,
            host_mounts,
            env,
            pod_annotations,
            topology,
        })
    }

    /// `topology-file configmap="NAME" key="FILE.xml" [path="/abs/file.xml"]`.
    fn topology_file(&mut self, node: &Node) -> Option<Spanned<TopologyFile>> {
        let mut m = self.map(node, &fields::NCCL_NET_TOPOLOGY_FILE)?;
        let config_map = m
            .get(self, "configmap")
            .and_then(|n| self.nonempty(n))
            .and_then(|s| self.parse_spanned::<K8sName>(&s));
        let key = m.get(self, "key").and_then(|n| self.nonempty(n));
        let path = m.get(self, "path").and_then(|n| self.abs_path(n));
        m.finish(self);
        let key = key?;
        if !crate::fabric::provider::is_config_map_key(&key.value) {
            self.invalid(
                key.origin,
                format!("`{}` is not a ConfigMap key", key.value),
                "a key is a file name of letters, digits, `-`, `_` and `.` (e.g. `ndv5-topo.xml`)"
                    .to_string(),
            );
            return None;
        }
        Some(Spanned::new(
            TopologyFile {
                config_map: config_map?.value,
                path: path.map_or_else(
                    || format!("{}/{}", crate::fabric::provider::TOPOLOGY_DIR, key.value),
                    |p| p.value,
                ),
                key: key.value,
            },
            node.origin,
        ))
    }

    fn host_mounts(&mut self, node: &Node) -> Vec<Spanned<HostMount>> {
        let mut out = Vec::new();
        let Value::Map(entries) = &node.value else {
            self.mismatch(node, "a map of NAME host-path=… mount-path=…");
            return out;
        };
        for e in entries {
            let Some(name) = self.parse_spanned::<DnsLabel>(&e.key) else {
                continue;
            };
            let Some(mut m) = self.map(&e.node, &fields::NCCL_NET_HOST_MOUNTS) else {
                continue;
            };
            let host_path = m.get(self, "host-path").and_then(|n| self.abs_path(n));
            let mount_path = m.get(self, "mount-path").and_then(|n| self.abs_path(n));
            m.finish(self);
            if let (Some(h), Some(c)) = (host_path, mount_path) {
                out.push(Spanned::new(
                    HostMount {
                        name: name.value,
                        host_path: h.value,
                        mount_path: c.value,
                    },
                    e.key.origin,
                ));
            }
        }
        out
    }

    /// An absolute path (`/…`).
    fn abs_path(&mut self, node: &Node) -> Option<Spanned<String>> {
        let s = self.nonempty(node)?;
        if !s.value.starts_with('/') {
            self.invalid(
                s.origin,
                format!("`{}` is not an absolute path", s.value),
                "host and mount paths start with `/`".to_string(),
            );
            return None;
        }
        Some(s)
    }

    fn ucx(&mut self, node: &Node) -> Option<Ucx> {
        let mut m = self.map(node, &fields::UCX)?;
        let mut ucx = Ucx::default();
        m.read_bound(self, &mut ucx);
        ucx.min_rdma_core = m
            .int(self, "min-rdma-core")
            .unwrap_or(Spanned::new(MIN_RDMA_CORE, node.origin));
        m.finish(self);
        Some(ucx)
    }

    /// A UCX list (`UCX_TLS`, `UCX_NET_DEVICES`): `parse`'s issues reported at their tokens.
    fn ucx_list<T>(
        &mut self,
        node: &Node,
        env: &str,
        parse: fn(Spanned<String>) -> (T, Vec<ucx_list::UcxIssue>),
    ) -> Option<T> {
        let text = self.nonempty(node)?;
        let (list, issues) = parse(text);
        for issue in issues {
            let origin = node.token_origin(issue.range.clone());
            self.problems
                .push(crate::rules::ucx::list_issue(env, &issue.kind, origin));
        }
        Some(list)
    }

    fn image(&mut self, node: &Node) -> Option<Image> {
        let mut m = self.map(node, &fields::IMAGE)?;
        let mut image = Image::default();
        m.read_bound(self, &mut image);
        m.finish(self);
        Some(image)
    }

    /// `nics multus-and-resource | resource-only | host-network | dra class=… count=… template=… [claim=…]
    /// [selectors "CEL" …] [gpus class=… count=… align=pcie-root|numa-node]`.
    fn nics(&mut self, node: &Node) -> Option<Spanned<NicAttachment>> {
        #[derive(Clone, Copy)]
        enum Mode {
            Multus,
            Resource,
            Dra,
            HostNetwork,
        }
        let mut m = self.map(node, &fields::NICS)?;
        let mode = m.choose(
            self,
            "mode",
            &[
                ("multus-and-resource", Mode::Multus),
                ("resource-only", Mode::Resource),
                ("dra", Mode::Dra),
                ("host-network", Mode::HostNetwork),
            ],
        )?;
        let out = match mode.value {
            Mode::Multus => Some(NicAttachment::MultusAndResource),
            Mode::Resource => Some(NicAttachment::ResourceOnly),
            Mode::HostNetwork => Some(NicAttachment::HostNetwork),
            Mode::Dra => {
                let class = m
                    .get(self, "class")
                    .and_then(|n| self.parsed::<DeviceClassName>(n));
                let count = m.int(self, "count").and_then(|c| NonZeroU32::new(c.value));
                let template = m
                    .get(self, "template")
                    .and_then(|n| self.parsed::<K8sName>(n));
                let claim = m
                    .get(self, "claim")
                    .and_then(|n| self.parsed::<DnsLabel>(n));
                let selectors: Vec<CelExpression> = match m.get(self, "selectors") {
                    Some(n) => {
                        let list = self.string_list(n);
                        list.iter()
                            .filter_map(|s| self.parse_spanned::<CelExpression>(s))
                            .map(|s| s.value)
                            .collect()
                    }
                    None => Vec::new(),
                };
                let gpus = m.get(self, "gpus").map(|n| self.claimed_gpus(n));
                let mut nics =
                    DraNics::new(class?.value, count?, template?.value).with_selectors(selectors);
                if let Some(claim) = claim {
                    nics = nics.with_claim(claim.value);
                }
                match gpus {
                    Some(Some(g)) => nics = nics.with_gpus(g),
                    Some(None) => return None,
                    None => {}
                }
                Some(NicAttachment::Dra(nics))
            }
        };
        m.finish(self);
        out.map(|o| Spanned::new(o, node.origin))
    }

    fn claimed_gpus(&mut self, node: &Node) -> Option<ClaimedGpus> {
        let mut m = self.map(node, &fields::NICS_GPUS)?;
        let class = m
            .get(self, "class")
            .and_then(|n| self.parsed::<DeviceClassName>(n));
        let count = m.int(self, "count").and_then(|c| NonZeroU32::new(c.value));
        let align = m.choose(
            self,
            "align",
            &[
                ("pcie-root", AlignBy::PcieRoot),
                ("numa-node", AlignBy::NumaNode),
            ],
        );
        m.finish(self);
        let gpus = ClaimedGpus::new(class?.value, count?);
        Some(match align {
            Some(a) => gpus.aligned(a.value),
            None => gpus,
        })
    }

    /// `nvlink-domain none | compute-domain name=… [nodes=N] [channels=single|all]
    /// [channel-template=…] [claim=…]`.
    fn nvlink_domain(&mut self, node: &Node) -> Option<Spanned<NvlinkDomain>> {
        #[derive(Clone, Copy)]
        enum Kind {
            None,
            ComputeDomain,
        }
        let mut m = self.map(node, &fields::NVLINK_DOMAIN)?;
        let kind = m.choose(
            self,
            "kind",
            &[
                ("none", Kind::None),
                ("compute-domain", Kind::ComputeDomain),
            ],
        )?;
        let out = match kind.value {
            Kind::None => Some(NvlinkDomain::None),
            Kind::ComputeDomain => {
                let name = m.get(self, "name").and_then(|n| self.parsed::<K8sName>(n));
                let nodes = m.int(self, "nodes").map_or(0, |n| n.value);
                let template = m
                    .get(self, "channel-template")
                    .and_then(|n| self.parsed::<K8sName>(n));
                let claim = m
                    .get(self, "claim")
                    .and_then(|n| self.parsed::<DnsLabel>(n));
                let channels = m.choose(
                    self,
                    "channels",
                    &[
                        ("single", ChannelAllocation::Single),
                        ("all", ChannelAllocation::All),
                    ],
                );
                let name = name?;
                match ComputeDomain::new(name.value, nodes, template.map(|t| t.value)) {
                    Ok(mut cd) => {
                        if let Some(c) = claim {
                            cd = cd.with_claim(c.value);
                        }
                        if let Some(a) = channels {
                            cd = cd.with_allocation(a.value);
                        }
                        Some(NvlinkDomain::ComputeDomain(cd))
                    }
                    Err(NameError { message, help }) => {
                        self.invalid(name.origin, message, help);
                        None
                    }
                }
            }
        };
        m.finish(self);
        out.map(|o| Spanned::new(o, node.origin))
    }

    /// `placement { clique-affinity label=… value=…; kueue-topology "LEVEL-LABEL" mode=required|preferred }`.
    fn placement(&mut self, node: &Node) -> Option<Spanned<Placement>> {
        let mut m = self.map(node, &fields::PLACEMENT)?;
        let clique = m.get(self, "clique-affinity").and_then(|n| {
            let mut c = self.map(n, &fields::PLACEMENT_CLIQUE_AFFINITY)?;
            let key = c
                .get(self, "label")
                .and_then(|n| self.parsed::<LabelKey>(n));
            let value = c
                .get(self, "value")
                .and_then(|n| self.parsed::<LabelValue>(n));
            c.finish(self);
            Some(CliqueAffinity {
                key: key?.value,
                value: value?.value,
            })
        });
        let kueue = m.get(self, "kueue-topology").and_then(|n| {
            let mut k = self.map(n, &fields::PLACEMENT_KUEUE_TOPOLOGY)?;
            let level = k
                .get(self, "level-label")
                .and_then(|n| self.parsed::<LabelKey>(n));
            let mode = k
                .choose(
                    self,
                    "mode",
                    &[
                        ("required", TopologyMode::Required),
                        ("preferred", TopologyMode::Preferred),
                    ],
                )
                .map_or(TopologyMode::Required, |m| m.value);
            k.finish(self);
            Some(KueueTopology {
                mode,
                level: level?.value,
            })
        });
        m.finish(self);
        Some(Spanned::new(
            Placement {
                clique_affinity: clique,
                kueue,
            },
            node.origin,
        ))
    }

    fn job(&mut self, node: &Node) -> Option<Job> {
        let mut m = self.map(node, &fields::JOB)?;
        let mut job = Job::default();
        m.read_bound(self, &mut job);
        m.finish(self);
        Some(job)
    }
}

/// Which table keys the walker read, for the test that it reads every one (`fields::tests`).
#[cfg(test)]
pub(crate) mod read {
    use std::cell::RefCell;

    thread_local! {
        static READ: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    pub(crate) fn record(path: String) {
        READ.with(|r| r.borrow_mut().push(path));
    }

    /// The paths read on this thread since the last call.
    pub(crate) fn take() -> Vec<String> {
        READ.with(|r| std::mem::take(&mut *r.borrow_mut()))
    }
}
