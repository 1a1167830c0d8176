//! Compare two profiles field by field, in fabric terms (`roce diff`).
//!
//! [`fields`] flattens a typed [`Profile`] into named fields (`fabric.kind`, `nccl.knobs.NCCL_IB_TC`, …),
//! each with its value as text and the [`Origin`](crate::source::Origin) that set it. Because the model is typed and its
//! equality ignores spans, two profiles that differ only in layout — fields reordered, KDL converted to
//! YAML, `0x60` instead of `96` — flatten to the same values, and [`diff`] finds no change.
//!
//! `extends` is not compared: a profile that extends a base and a flattened copy of the merged result
//! are the same profile. The origin of every value already names the layer that set it, so the diff
//! still shows where each side came from ([`FieldChange::old_at`]).
//!
//! ```
//! use roce_model::{builtin, diff, load, BuiltinsOnly, Source};
//! let base = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly);
//! let text = r#"profile "me/gb300" extends="coreweave/gb300-roce" { nccl debug="WARN" }"#;
//! let mine = load(Source::new("me.kdl", text), &BuiltinsOnly);
//! let d = diff::diff(base.profile.as_ref().unwrap(), mine.profile.as_ref().unwrap());
//! let debug = d.get("nccl.debug").unwrap();
//! assert_eq!(debug.old, None);
//! assert_eq!(debug.new.as_ref().unwrap().value, "WARN");
//! assert_eq!(debug.new_at(&mine.sources).as_deref(), Some("me.kdl:1:64"));
//! // Everything else is inherited, so only the name and `nccl.debug` differ.
//! assert_eq!(d.changes.len(), 2);
//! ```

use indexmap::IndexMap;

use crate::model::{Multus, Profile, UcxMode};
use crate::source::{Sources, Spanned};

/// One named field of a flattened profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Dotted path in the profile's own spelling (`node-pool.gpus-per-node`, `env.NAME`).
    pub path: String,
    /// The value as text (numbers in decimal, lists joined with `, `), with the place that set it.
    /// A default that the profile does not write points at the enclosing node; `multus` left out
    /// entirely has no origin.
    pub value: Spanned<String>,
    /// `false` for a value that comes from no text at all (the implicit `multus none`).
    pub written: bool,
}

/// A field that differs between two profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Dotted path (see [`Field::path`]).
    pub path: String,
    /// The old value (profile A), or `None` when A does not set it.
    pub old: Option<Spanned<String>>,
    /// The new value (profile B), or `None` when B does not set it.
    pub new: Option<Spanned<String>>,
    /// Was the old value written somewhere (as opposed to the implicit `multus none`)?
    pub old_written: bool,
    /// Was the new value written somewhere?
    pub new_written: bool,
}

impl FieldChange {
    /// Where A set the old value, as `file:line:column` (resolved against A's sources), or `None` when A
    /// does not set the field or sets it implicitly.
    pub fn old_at(&self, sources: &Sources) -> Option<String> {
        self.old
            .as_ref()
            .filter(|_| self.old_written)
            .map(|v| sources.describe(v.origin))
    }

    /// Where B set the new value, as `file:line:column` (resolved against B's sources).
    pub fn new_at(&self, sources: &Sources) -> Option<String> {
        self.new
            .as_ref()
            .filter(|_| self.new_written)
            .map(|v| sources.describe(v.origin))
    }
}

/// The field-level difference between two profiles, in schema order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileDiff {
    /// Every field whose value differs, was added or was removed.
    pub changes: Vec<FieldChange>,
}

impl ProfileDiff {
    /// No field differs.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The change of one field, by path.
    pub fn get(&self, path: &str) -> Option<&FieldChange> {
        self.changes.iter().find(|c| c.path == path)
    }

    fn old_new(&self, path: &str) -> Option<(Option<&str>, Option<&str>)> {
        self.get(path).map(|c| {
            (
                c.old.as_ref().map(|v| v.value.as_str()),
                c.new.as_ref().map(|v| v.value.as_str()),
            )
        })
    }

    /// Phrases for a one-paragraph summary of the model-level changes, in fabric terms ("switches the
    /// fabric from RoCE to InfiniBand", "switches UCX from TCP to RDMA"). Changes to environment
    /// variables, NADs, resources and capabilities are summarised from the plan instead, where their
    /// effect is known.
    pub fn summary(&self, a: &Profile, b: &Profile) -> Vec<String> {
        let mut out = Vec::new();
        if self.get("fabric.kind").is_some() {
            out.push(format!(
                "switches the fabric from {} to {}",
                a.fabric_name(),
                b.fabric_name()
            ));
        }
        if self.get("ucx.mode").is_some() {
            out.push(match (a.ucx.mode.value, b.ucx.mode.value) {
                (UcxMode::Off, new) => format!("turns UCX on ({})", ucx_name(new)),
                (_, UcxMode::Off) => format!("turns UCX off (was {})", ucx_name(a.ucx.mode.value)),
                (old, new) => format!("switches UCX from {} to {}", ucx_name(old), ucx_name(new)),
            });
        }
        if self.get("rails.nics").is_some() || self.get("rails.ports").is_some() {
            out.push(format!(
                "changes the rails from {} to {}",
                rails(a),
                rails(b)
            ));
        } else if self.get("rails.pod-device").is_some() {
            out.push(format!(
                "renames the pod's RDMA devices from `{}` to `{}`",
                a.rails.pod_device.value, b.rails.pod_device.value
            ));
        }
        // Attaching or dropping NADs altogether is summarised from the plan, which counts them.
        let attaches = |m: &Multus| !matches!(m, Multus::None { .. });
        if self.get("multus.mode").is_some() && attaches(&a.multus) && attaches(&b.multus) {
            out.push(format!(
                "changes Multus attachment from {} to {}",
                multus_mode(&a.multus),
                multus_mode(&b.multus)
            ));
        }
        if let Some((Some(old), Some(new))) = self.old_new("node-pool.name") {
            out.push(format!("moves to node pool `{new}` (was `{old}`)"));
        }
        if self.get("node-pool.gpus-per-node").is_some() {
            out.push(format!(
                "changes GPUs per node from {} to {}",
                a.node_pool.gpus_per_node.value, b.node_pool.gpus_per_node.value
            ));
        }
        if let Some((old, new)) = self.old_new("nccl.net-plugin") {
            out.push(format!(
                "changes the NCCL net plugin from {} to {}",
                old.map_or("unset".to_string(), |v| format!("`{v}`")),
                new.map_or("unset".to_string(), |v| format!("`{v}`"))
            ));
        }
        if a.nccl_net.provider.value != b.nccl_net.provider.value {
            out.push(format!(
                "switches NCCL's network from {} to {}",
                a.nccl_net.provider.value.describe(),
                b.nccl_net.provider.value.describe()
            ));
        }
        if let Some(up) = nccl_upgrade(a, b) {
            let way = if a.nccl.version.map(|v| v.value.minor())
                < b.nccl.version.map(|v| v.value.minor())
            {
                "upgrades"
            } else {
                "downgrades"
            };
            let mut phrase = format!("{way} NCCL from {} to {}", up.from, up.to);
            match up.meaning.as_slice() {
                [] => {}
                [one] => phrase.push_str(&format!(", which changes what {} does", one.name)),
                many => phrase.push_str(&format!(
                    ", which changes what {} of its variables do",
                    many.len()
                )),
            }
            out.push(phrase);
        }
        out.extend(dra_summary(self, a, b));
        if self.get("production").is_some() {
            out.push(if b.production.value {
                "marks the profile as production".to_string()
            } else {
                "marks the profile as not production".to_string()
            });
        }
        out
    }
}

/// The DRA phrases of [`ProfileDiff::summary`]: NICs, NVLink domain, placement.
fn dra_summary(d: &ProfileDiff, a: &Profile, b: &Profile) -> Vec<String> {
    use crate::fabric::dra::NicAttachment;
    let mut out = Vec::new();
    let changed = |prefix: &str| d.changes.iter().any(|c| c.path.starts_with(prefix));
    if changed("nics.") {
        let nics = |n: &NicAttachment| match n {
            NicAttachment::MultusAndResource => {
                "Multus NADs and a device-plugin resource".to_string()
            }
            NicAttachment::ResourceOnly => "a device-plugin resource".to_string(),
            NicAttachment::HostNetwork => {
                "the host's network namespace (the node's own NICs and devices)".to_string()
            }
            NicAttachment::Dra(n) => format!(
                "a DRA claim on {} × `{}` (template `{}`){}",
                n.count(),
                n.class(),
                n.template(),
                n.gpus().map_or(String::new(), |g| format!(
                    " that also allocates the {} GPUs",
                    g.count()
                ))
            ),
        };
        out.push(
            if std::mem::discriminant(&a.nics.value) == std::mem::discriminant(&b.nics.value) {
                format!("changes the NICs' DRA claim to {}", nics(&b.nics.value))
            } else {
                format!(
                    "gets the RDMA NICs through {} instead of {}",
                    nics(&b.nics.value),
                    nics(&a.nics.value)
                )
            },
        );
    }
    if changed("nvlink-domain.") {
        out.push(
            match (a.nvlink_domain.value.compute_domain(), b.nvlink_domain.value.compute_domain()) {
                (None, Some(cd)) => format!(
                    "adds an NVLink domain: ComputeDomain `{}` (numNodes {}), whose IMEX channel every pod claims as `{}` for multi-node NVLink",
                    cd.name(),
                    cd.num_nodes(),
                    cd.claim()
                ),
                (Some(cd), None) => format!(
                    "drops the NVLink domain (ComputeDomain `{}`): no IMEX channel, no multi-node NVLink",
                    cd.name()
                ),
                _ => "changes the NVLink domain's ComputeDomain".to_string(),
            },
        );
    }
    let clique = |p: &Profile| p.placement.value.clique_affinity.is_some();
    match (clique(a), clique(b)) {
        (false, true) => out.push(
            "keeps the job's pods in one NVLink domain (required pod affinity on nvidia.com/gpu.clique)"
                .to_string(),
        ),
        (true, false) => out.push("no longer keeps the pods in one NVLink domain".to_string()),
        _ => {}
    }
    if d.get("placement.kueue-topology").is_some() {
        out.push("changes the Kueue topology request".to_string());
    }
    out
}

fn ucx_name(m: UcxMode) -> &'static str {
    match m {
        UcxMode::Off => "off",
        UcxMode::Tcp => "TCP",
        UcxMode::Rdma => "RDMA",
    }
}

fn rails(p: &Profile) -> String {
    let (n, ports) = (p.rails.nics.value, p.rails.ports.value);
    let plural = |k: u32, one: &str, many: &str| {
        if k == 1 {
            format!("{k} {one}")
        } else {
            format!("{k} {many}")
        }
    };
    format!(
        "{} ({} × {})",
        u64::from(n) * u64::from(ports),
        plural(n, "NIC", "NICs"),
        plural(ports, "port", "ports")
    )
}

fn multus_mode(m: &Multus) -> &'static str {
    match m {
        Multus::PerPort { .. } => "per-port",
        Multus::Backend { .. } => "backend",
        Multus::None { .. } => "none",
    }
}

/// Flatten a profile into named fields, in schema order (maps in author order). `extends` is left out:
/// it is already applied, and each value's origin names the layer that set it.
pub fn fields(p: &Profile) -> Vec<Field> {
    let mut f = Fields(Vec::new());
    // Every field the table binds (`fields::bind`); the rest below.
    for (path, value) in crate::fields::shown(p) {
        f.push(&path, value, true);
    }

    let pool = &p.node_pool;
    f.str("node-pool.rdma-resource", pool.rdma_resource.as_ref());
    f.show(
        "node-pool.rdma-resource.count",
        pool.rdma_resource_count.as_ref(),
    );
    f.map("node-pool.node-labels", &pool.node_labels);

    let r = &p.rails;
    f.show("rails.nics", Some(&r.nics));
    f.show("rails.ports", Some(&r.ports));
    f.show("rails.pod-device", Some(&r.pod_device));

    match &p.multus {
        Multus::PerPort {
            namespace,
            name,
            nads,
            at,
        } => {
            f.text("multus.mode", Some(at.map(|()| "per-port")));
            f.str("multus.namespace", Some(namespace));
            f.str("multus.name", Some(name));
            if let Some(list) = nads {
                let joined: Vec<&str> = list.value.iter().map(|n| n.value.as_str()).collect();
                f.push(
                    "multus.nads",
                    Spanned::new(joined.join(", "), list.origin),
                    true,
                );
            }
        }
        Multus::Backend {
            namespace,
            name,
            at,
        } => {
            f.text("multus.mode", Some(at.map(|()| "backend")));
            f.str("multus.namespace", Some(namespace));
            f.str("multus.name", Some(name));
        }
        Multus::None { at: Some(at) } => f.text("multus.mode", Some(at.map(|()| "none"))),
        Multus::None { at: None } => f.push(
            "multus.mode",
            Spanned::new("none".to_string(), p.name.origin),
            false,
        ),
    }

    f.map("nccl.knobs", &p.nccl.knobs);

    // The network provider, when the profile names one (the IB-verbs default adds no fields).
    let net = &p.nccl_net;
    if !net.is_default() {
        f.text(
            "nccl-net.provider",
            Some(net.provider.as_ref().map(|p| p.as_str())),
        );
        if let crate::fabric::provider::Provider::Plugin(name) = &net.provider.value {
            f.push(
                "nccl-net.name",
                Spanned::new(name.clone(), net.provider.origin),
                true,
            );
        }
        f.str("nccl-net.library-path", net.library_path.as_ref());
        if let Some(t) = &net.topology {
            f.push(
                "nccl-net.topology-file",
                Spanned::new(
                    format!(
                        "{} key {} at {}",
                        t.value.config_map.as_str(),
                        t.value.key,
                        t.value.path()
                    ),
                    t.origin,
                ),
                true,
            );
        }
        for m in &net.host_mounts {
            f.push(
                &format!("nccl-net.host-mounts.{}", m.value.name.as_str()),
                Spanned::new(
                    format!("{} at {}", m.value.host_path, m.value.mount_path),
                    m.origin,
                ),
                true,
            );
        }
        f.map("nccl-net.env", &net.env);
        f.map("nccl-net.pod-annotations", &net.pod_annotations);
    }

    f.show("ucx.min-rdma-core", Some(&p.ucx.min_rdma_core));

    dra_fields(&mut f, p);

    if let Some(first) = p.capabilities.first() {
        // A set: the order capabilities are listed in changes nothing.
        let mut caps: Vec<&str> = p.capabilities.iter().map(|c| c.value.as_str()).collect();
        caps.sort_unstable();
        caps.dedup();
        f.push(
            "capabilities",
            Spanned::new(caps.join(", "), first.origin),
            true,
        );
    }
    f.map("env", &p.env);
    // In the table's order (`fields::table`; a test holds the pushes above to it).
    let labels = crate::fields::diff_labels();
    f.0.sort_by_key(|field| crate::fields::diff_rank(&labels, &field.path).unwrap_or(usize::MAX));
    f.0
}

/// The DRA choices: how the NICs arrive, the NVLink domain, placement. Each block has one origin, so its
/// fields all point at it.
fn dra_fields(f: &mut Fields, p: &Profile) {
    use crate::fabric::dra::NicAttachment;
    let at = p.nics.origin;
    let put = |f: &mut Fields, path: &str, value: String, origin| {
        f.push(path, Spanned::new(value, origin), true);
    };
    match &p.nics.value {
        NicAttachment::MultusAndResource => put(f, "nics.mode", "multus-and-resource".into(), at),
        NicAttachment::ResourceOnly => put(f, "nics.mode", "resource-only".into(), at),
        NicAttachment::HostNetwork => put(f, "nics.mode", "host-network".into(), at),
        NicAttachment::Dra(n) => {
            put(f, "nics.mode", "dra".into(), at);
            put(f, "nics.class", n.class().to_string(), at);
            put(f, "nics.count", n.count().to_string(), at);
            put(f, "nics.template", n.template().to_string(), at);
            put(f, "nics.claim", n.claim().to_string(), at);
            let sel: Vec<String> = n.selectors().iter().map(|s| s.to_string()).collect();
            if !sel.is_empty() {
                put(f, "nics.selectors", sel.join(" && "), at);
            }
            if let Some(g) = n.gpus() {
                let align = g
                    .align()
                    .map_or(String::new(), |a| format!(", aligned by {}", a.as_str()));
                put(
                    f,
                    "nics.gpus",
                    format!("{} × {}{align}", g.count(), g.class()),
                    at,
                );
            }
        }
    }
    let at = p.nvlink_domain.origin;
    match p.nvlink_domain.value.compute_domain() {
        None => put(f, "nvlink-domain.mode", "none".into(), at),
        Some(cd) => {
            put(f, "nvlink-domain.mode", "compute-domain".into(), at);
            put(f, "nvlink-domain.name", cd.name().to_string(), at);
            put(f, "nvlink-domain.nodes", cd.num_nodes().to_string(), at);
            put(
                f,
                "nvlink-domain.channel-template",
                cd.channel_template().to_string(),
                at,
            );
            put(f, "nvlink-domain.claim", cd.claim().to_string(), at);
            put(
                f,
                "nvlink-domain.channels",
                cd.allocation().as_str().into(),
                at,
            );
        }
    }
    let at = p.placement.origin;
    if let Some(c) = &p.placement.value.clique_affinity {
        put(
            f,
            "placement.clique-affinity",
            format!("{}={}", c.key, c.value),
            at,
        );
    }
    if let Some(k) = &p.placement.value.kueue {
        put(
            f,
            "placement.kueue-topology",
            format!("{} ({})", k.level, k.mode.as_str()),
            at,
        );
    }
}

struct Fields(Vec<Field>);

impl Fields {
    fn push(&mut self, path: &str, value: Spanned<String>, written: bool) {
        self.0.push(Field {
            path: path.to_string(),
            value,
            written,
        });
    }

    fn text(&mut self, path: &str, v: Option<Spanned<&str>>) {
        if let Some(v) = v {
            self.push(path, v.map(str::to_string), true);
        }
    }

    fn str<T: AsRef<str>>(&mut self, path: &str, v: Option<&Spanned<T>>) {
        self.text(path, v.map(|v| v.as_ref().map(AsRef::as_ref)));
    }

    fn show<T: std::fmt::Display>(&mut self, path: &str, v: Option<&Spanned<T>>) {
        if let Some(v) = v {
            self.push(path, Spanned::new(v.value.to_string(), v.origin), true);
        }
    }

    fn map<K: AsRef<str>>(&mut self, prefix: &str, m: &IndexMap<K, Spanned<String>>) {
        for (k, v) in m {
            let k = k.as_ref();
            // Keys with dots or slashes (`backend.coreweave.cloud/flavor`) are quoted, as in KDL.
            let plain = !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key = if plain {
                k.to_string()
            } else {
                format!("{k:?}")
            };
            self.str(&format!("{prefix}.{key}"), Some(v));
        }
    }
}

/// Compare two profiles field by field. The result is in schema order: A's fields first in A's order,
/// with fields only B sets placed after their neighbour in B.
pub fn diff(a: &Profile, b: &Profile) -> ProfileDiff {
    let fa = fields(a);
    let fb = fields(b);
    let index_a: IndexMap<&str, &Field> = fa.iter().map(|f| (f.path.as_str(), f)).collect();
    let index_b: IndexMap<&str, &Field> = fb.iter().map(|f| (f.path.as_str(), f)).collect();

    let mut order: Vec<&str> = fa.iter().map(|f| f.path.as_str()).collect();
    let mut prev: Option<usize> = None;
    for f in &fb {
        match order.iter().position(|p| *p == f.path) {
            Some(i) => prev = Some(i),
            None => {
                let at = prev.map_or(0, |i| i + 1);
                order.insert(at, &f.path);
                prev = Some(at);
            }
        }
    }

    let changes = order
        .into_iter()
        .filter_map(|path| {
            let old = index_a.get(path);
            let new = index_b.get(path);
            if old.map(|f| &f.value) == new.map(|f| &f.value) {
                return None;
            }
            Some(FieldChange {
                path: path.to_string(),
                old: old.map(|f| f.value.clone()),
                new: new.map(|f| f.value.clone()),
                old_written: old.is_some_and(|f| f.written),
                new_written: new.is_some_and(|f| f.written),
            })
        })
        .collect();
    ProfileDiff { changes }
}

/// What moving from one NCCL release to another changes for a profile (`roce diff` when the two sides name
/// different NCCL releases in `nccl version`), from [`crate::fabric::nccl_versions`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NcclUpgrade {
    /// A's release.
    pub from: String,
    /// B's release.
    pub to: String,
    /// B's `NCCL_*` variables that one release reads and the other does not, in B's emit order.
    pub meaning: Vec<VarMeaning>,
    /// Defaults that change between the two releases, of variables B leaves to NCCL.
    pub defaults: Vec<DefaultShift>,
    /// What roce cannot judge of this pair (a release outside its table), if anything.
    pub unjudged: Vec<String>,
}

/// A variable one of the two releases reads and the other does not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VarMeaning {
    /// The variable.
    pub name: String,
    /// Its value in B.
    pub value: String,
    /// Whether A's release reads it.
    pub read_by_old: bool,
    /// Whether B's release reads it.
    pub read_by_new: bool,
    /// Why one does not (`NCCL reads it from 2.26 on`).
    pub why: String,
    /// The table's source for the variable.
    pub source: String,
}

/// A default that differs between the two releases.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DefaultShift {
    /// The variable.
    pub name: String,
    /// A's release's default.
    pub old: String,
    /// B's release's default.
    pub new: String,
    /// The first release with the newer default.
    pub since: String,
    /// Where the newer default is written.
    pub source: String,
}

/// What the NCCL release change from `a` to `b` does to `b`'s variables; `None` unless both name a release
/// and their minors differ (a patch change reads the same variables, decisions "(nccl-versions)").
///
/// ```
/// use roce_model::{diff, load, BuiltinsOnly, Source};
/// let at = |v: &str| {
///     let text = format!(
///         r#"profile "t/p" extends="coreweave/h100-ib" {{ nccl version="{v}" {{ knobs {{ NCCL_NET_GDR_C2C "1" }} }} }}"#
///     );
///     load(Source::new("p.kdl", text), &BuiltinsOnly).profile.unwrap()
/// };
/// let up = diff::nccl_upgrade(&at("2.19"), &at("2.28")).unwrap();
/// assert_eq!(up.meaning[0].name, "NCCL_NET_GDR_C2C");
/// assert!(!up.meaning[0].read_by_old && up.meaning[0].read_by_new);
/// assert!(up.defaults.iter().any(|d| d.name == "NCCL_IB_TIMEOUT" && d.old == "18" && d.new == "20"));
/// assert_eq!(diff::nccl_upgrade(&at("2.28.3"), &at("2.28.9")), None);
/// ```
pub fn nccl_upgrade(a: &Profile, b: &Profile) -> Option<NcclUpgrade> {
    use crate::fabric::nccl_versions::{self as versions, COVERED, DEFAULTS_COVERED};
    let (ra, rb) = (
        a.nccl.version.as_ref()?.value,
        b.nccl.version.as_ref()?.value,
    );
    let (va, vb) = (ra.minor(), rb.minor());
    if va == vb {
        return None;
    }
    let mut up = NcclUpgrade {
        from: ra.to_string(),
        to: rb.to_string(),
        meaning: Vec::new(),
        defaults: Vec::new(),
        unjudged: Vec::new(),
    };
    for r in [ra, rb].into_iter().filter(|r| !r.covered()) {
        up.unjudged.push(format!(
            "NCCL {r} is outside the releases roce has read ({} to {}): which variables it reads is not judged",
            COVERED.0, COVERED.1
        ));
    }
    let env = b.env_vars();
    for var in env.iter().filter(|v| v.name.starts_with("NCCL_")) {
        let (Some(old), Some(new)) = (
            versions::reads(&var.name, va),
            versions::reads(&var.name, vb),
        ) else {
            continue;
        };
        if old == new {
            continue;
        }
        let unread = if old { vb } else { va };
        let Some((why, h)) = versions::unread(&var.name, unread) else {
            continue;
        };
        up.meaning.push(VarMeaning {
            name: var.name.clone(),
            value: var.value.clone(),
            read_by_old: old,
            read_by_new: new,
            why: why.to_string(),
            source: h.source.to_string(),
        });
    }
    match versions::defaults_between(va, vb) {
        Some(changes) => {
            for d in changes {
                if env.iter().any(|v| v.name == d.name) {
                    continue;
                }
                let (old, new) = if va < vb {
                    (d.before, d.after)
                } else {
                    (d.after, d.before)
                };
                up.defaults.push(DefaultShift {
                    name: d.name.to_string(),
                    old: old.to_string(),
                    new: new.to_string(),
                    since: d.since.to_string(),
                    source: d.source.to_string(),
                });
            }
        }
        None => up.unjudged.push(format!(
            "defaults are known for NCCL {} to {} only (2.31 and 2.32 are binaries): changed defaults are not judged",
            DEFAULTS_COVERED.0, DEFAULTS_COVERED.1
        )),
    }
    Some(up)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuiltinsOnly, Source, builtin, load};

    fn builtin_profile(name: &str) -> Profile {
        load(builtin::source(name).unwrap(), &BuiltinsOnly)
            .profile
            .unwrap()
    }

    fn text(t: &str) -> Profile {
        let l = load(Source::new("t.kdl", t), &BuiltinsOnly);
        l.profile.unwrap_or_else(|| panic!("{:#?}", l.problems))
    }

    #[test]
    fn a_profile_equals_itself() {
        for name in builtin::names() {
            let p = builtin_profile(name);
            assert!(diff(&p, &p).is_empty(), "{name}");
        }
    }

    #[test]
    fn fields_only_b_sets_keep_their_place() {
        let a = text(r#"profile "t/a" extends="coreweave/gb300-ib" {}"#);
        let b = text(
            r#"profile "t/a" extends="coreweave/gb300-ib" { nccl debug="WARN" { knobs { NCCL_ALGO "Ring" } } }"#,
        );
        let d = diff(&a, &b);
        let paths: Vec<&str> = d.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["nccl.debug", "nccl.knobs.NCCL_ALGO"]);
        let all: Vec<String> = fields(&b).into_iter().map(|f| f.path).collect();
        let pos = |p: &str| all.iter().position(|x| x == p).unwrap();
        assert!(
            pos("nccl.net-plugin") < pos("nccl.debug")
                && pos("nccl.debug") < pos("nccl.knobs.NCCL_ALGO")
        );
    }

    #[test]
    fn numbers_compare_by_value_and_capabilities_as_a_set() {
        let a = text(
            r#"profile "t/a" extends="coreweave/gb300-roce" { fabric { traffic-class 0x60 } }"#,
        );
        let b = text(r#"profile "t/a" extends="coreweave/gb300-roce" { capabilities "IPC_LOCK" }"#);
        assert!(diff(&a, &b).is_empty(), "{:#?}", diff(&a, &b));
        let c = text(
            r#"profile "t/a" extends="coreweave/gb300-roce" { capabilities "SYS_NICE" "IPC_LOCK" }"#,
        );
        let d = text(
            r#"profile "t/a" extends="coreweave/gb300-roce" { capabilities "IPC_LOCK" "SYS_NICE" }"#,
        );
        assert!(diff(&c, &d).is_empty());
        let change = diff(&a, &c);
        assert_eq!(change.changes.len(), 1);
        assert_eq!(
            change.changes[0].new.as_ref().unwrap().value,
            "IPC_LOCK, SYS_NICE"
        );
    }

    #[test]
    fn implicit_multus_none_has_no_place() {
        let a = builtin_profile("coreweave/gb300-roce");
        let b = builtin_profile("coreweave/gb300-ib");
        let d = diff(&a, &b);
        let m = d.get("multus.mode").unwrap();
        assert!(!m.new_written && m.old_written);
        let loaded = load(
            builtin::source("coreweave/gb300-ib").unwrap(),
            &BuiltinsOnly,
        );
        assert_eq!(m.new_at(&loaded.sources), None);
    }
}
