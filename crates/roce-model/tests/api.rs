//! The public API of every roce library crate, listed from source, and the import graph of each crate.
//!
//! `snapshots/api/<crate>.txt` lists every item a tool depending on the crate can name: one line per path
//! (`kind path`), the members of a public type (pub fields, variants, inherent `pub` methods and constants,
//! trait methods) under it. An item added to or removed from the API fails [`api_lists_are_current`] until
//! the list is regenerated (`ROCE_BLESS=1 cargo test -p roce-model --test tests api::`), so every API change
//! shows in review. rustdoc's JSON output and `cargo public-api` would do this too, but need a nightly
//! toolchain.
//!
//! The lists are read with `syn`, following `pub mod` and `pub use` from `src/lib.rs` (`#[cfg(test)]` modules
//! left out). The workspace denies `unreachable_pub` and `unnameable_types`, so every `pub` item is on the
//! list and every type a public item mentions can be named.
//!
//! Items a macro generates (`problem::Code`, the `names` newtypes) are not expanded: their re-exports show
//! as `re-export path = target` lines. The test prints each crate's count of `pub` declarations and of public
//! items (docs/architecture.md quotes them); `ROCE_API_ROOT=<dir>` reads the crates under another checkout
//! (`<dir>/crates/*/src`), e.g. an older commit's `git archive`, to count its API the same way.
//!
//! [`import_graphs_have_no_new_cycle`] builds, for each crate, the graph of its modules (an edge where a `use`
//! or a path in one module's code names an item defined in another, the module's own parents left out) and
//! fails on a cycle that [`KNOWN_CYCLES`] does not list, printing its edges (docs/decisions.md, "(api)").
//! `ROCE_PRINT_GRAPH=1 cargo test -p roce-model --test tests api::import -- --nocapture` prints the graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The library crates whose API is listed: directory under `crates/`, crate name.
const CRATES: &[(&str, &str)] = &[
    ("roce-model", "roce_model"),
    ("roce-render", "roce_render"),
    ("roce-inspect", "roce_inspect"),
    ("roce-webhook", "roce_webhook"),
    ("roce-cli", "roce_cli"),
];

fn workspace() -> PathBuf {
    match std::env::var_os("ROCE_API_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    }
}

#[test]
fn api_lists_are_current() {
    let bless = std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for &(dir, name) in CRATES {
        let krate = Crate::load(&workspace().join("crates").join(dir).join("src/lib.rs"));
        let (list, reached, items) = krate.surface(name);
        println!(
            "{dir}: {} pub declarations; public API: {reached} ({items} items, the rest fields and methods), {} paths",
            krate.declared_pub,
            list.len()
        );
        let text: String = list.iter().map(|l| format!("{l}\n")).collect();
        let path = workspace().join("snapshots/api").join(format!("{dir}.txt"));
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old == text {
            continue;
        }
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let old: BTreeSet<&str> = old.lines().collect();
        let mut diff = format!("{dir}'s public API changed:\n");
        for line in &list {
            if !old.contains(line.as_str()) {
                writeln!(diff, "  + {line}").unwrap();
            }
        }
        for line in &old {
            if !list.contains(*line) {
                writeln!(diff, "  - {line}").unwrap();
            }
        }
        stale.push(diff);
    }
    assert!(
        stale.is_empty(),
        "{}\nIf the change is meant, regenerate the lists: ROCE_BLESS=1 cargo test -p roce-model --test tests api::",
        stale.concat()
    );
}

/// Import cycles not broken yet, each as the modules of one strongly connected component. A new cycle
/// fails the test, and so does one listed here that is gone (take it off the list). Empty: no crate has one.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

#[test]
fn import_graphs_have_no_new_cycle() {
    let mut found = Vec::new();
    let mut known: BTreeSet<(&str, BTreeSet<String>)> = KNOWN_CYCLES
        .iter()
        .map(|(dir, scc)| (*dir, scc.iter().map(ToString::to_string).collect()))
        .collect();
    for &(dir, _) in CRATES {
        let krate = Crate::load(&workspace().join("crates").join(dir).join("src/lib.rs"));
        let graph = krate.module_graph();
        if std::env::var_os("ROCE_PRINT_GRAPH").is_some() {
            println!("{dir}:");
            for (from, to) in &graph {
                println!(
                    "  {from} -> {}",
                    to.iter().cloned().collect::<Vec<_>>().join(", ")
                );
            }
        }
        for scc in cycles(&graph) {
            if known.remove(&(dir, scc.clone())) {
                continue;
            }
            let edges = scc.iter().flat_map(|from| {
                graph[from]
                    .iter()
                    .filter(|to| scc.contains(*to))
                    .map(move |to| format!("{from} -> {to}"))
            });
            found.push(format!("{dir}: {}", edges.collect::<Vec<_>>().join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between modules:\n{}",
        found.join("\n")
    );
    assert!(
        known.is_empty(),
        "cycles in KNOWN_CYCLES that are gone (take them off): {known:?}"
    );
}

/// The scanner must see what a change to the API is: a new `pub` item in a public module, a new re-export.
#[test]
fn the_list_shows_an_added_and_a_removed_item() {
    let dir = tempfile_dir();
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    let lib = "pub mod inner; mod private; pub use private::Shown; pub use inner::Thing as Alias;";
    std::fs::write(dir.join("lib.rs"), lib).unwrap();
    std::fs::write(
        dir.join("inner.rs"),
        "pub struct Thing { pub a: u8, b: u8 } impl Thing { pub fn new() -> Self { todo!() } fn hidden() {} }\n\
         pub(crate) fn internal() {}",
    )
    .unwrap();
    std::fs::write(
        dir.join("private.rs"),
        "pub struct Shown; pub struct NotShown;",
    )
    .unwrap();
    let api = Crate::load(&dir.join("lib.rs")).api("k");
    let expected = [
        "field k::Alias.a",
        "field k::inner::Thing.a",
        "method k::Alias::new",
        "method k::inner::Thing::new",
        "mod k::inner",
        "struct k::Alias",
        "struct k::Shown",
        "struct k::inner::Thing",
    ];
    assert_eq!(api.iter().map(String::as_str).collect::<Vec<_>>(), expected);

    std::fs::write(
        dir.join("private.rs"),
        "pub struct Shown; pub struct NotShown; pub fn added() {}",
    )
    .unwrap();
    std::fs::write(dir.join("lib.rs"), format!("{lib} pub use private::added;")).unwrap();
    let api = Crate::load(&dir.join("lib.rs")).api("k");
    assert!(api.contains("fn k::added"));
    std::fs::write(dir.join("lib.rs"), "pub mod inner; mod private;").unwrap();
    let api = Crate::load(&dir.join("lib.rs")).api("k");
    assert!(!api.contains("struct k::Shown"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cycle_is_found() {
    let dir = tempfile_dir();
    std::fs::write(dir.join("lib.rs"), "mod a; mod b; mod c;").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::B; pub(crate) struct A;").unwrap();
    std::fs::write(dir.join("b.rs"), "pub(crate) struct B(crate::c::C);").unwrap();
    std::fs::write(
        dir.join("c.rs"),
        "pub(crate) struct C; fn f() { let _ = super::a::A; }",
    )
    .unwrap();
    let graph = Crate::load(&dir.join("lib.rs")).module_graph();
    assert_eq!(
        cycles(&graph),
        [BTreeSet::from(["a".into(), "b".into(), "c".into()])]
    );
    std::fs::write(dir.join("c.rs"), "pub(crate) struct C;").unwrap();
    let graph = Crate::load(&dir.join("lib.rs")).module_graph();
    assert_eq!(cycles(&graph), []);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "roce-api-scan-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One module of a crate: what it defines, declares and imports.
struct Module {
    name: String,
    parent: Option<usize>,
    public: bool,
    hidden: bool,
    children: BTreeMap<String, usize>,
    defs: Vec<Def>,
    uses: Vec<Use>,
    /// Inherent impls (`impl Type { .. }`) written in this module.
    impls: Vec<syn::ItemImpl>,
    /// Every path this module's own code names (uses included), for the import graph.
    paths: Vec<Vec<String>>,
}

/// A named item other than a module or an import.
struct Def {
    name: String,
    kind: &'static str,
    public: bool,
    hidden: bool,
    /// Public fields, variants and trait items: (separator, name, kind).
    members: Vec<(&'static str, String, &'static str)>,
}

struct Use {
    public: bool,
    /// The name it binds; `None` for a glob.
    name: Option<String>,
    path: Vec<String>,
}

/// A public surface being listed.
#[derive(Default)]
struct Api {
    lines: BTreeSet<String>,
    /// The `pub` declarations reached: (module, def or `usize::MAX` for the module, member).
    reached: BTreeSet<(usize, usize, String)>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Target {
    Module(usize),
    Def(usize, usize),
}

struct Crate {
    modules: Vec<Module>,
    /// How many `pub` declarations the crate has (see [`PubCount`]).
    declared_pub: usize,
    /// Inherent `pub` methods and constants of each def: (module, def) → (name, kind).
    inherent: BTreeMap<(usize, usize), Vec<(String, &'static str)>>,
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn has_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn is_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.parse_args::<syn::Path>()
                .is_ok_and(|p| p.is_ident("hidden"))
    })
}

fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn flatten_use(tree: &syn::UseTree, prefix: &mut Vec<String>, public: bool, out: &mut Vec<Use>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, public, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push(Use {
                public,
                name: prefix.last().cloned(),
                path: prefix.clone(),
            });
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push(Use {
                public,
                name: Some(n.ident.to_string()),
                path,
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push(Use {
                public,
                name: Some(r.rename.to_string()),
                path,
            });
        }
        syn::UseTree::Glob(_) => out.push(Use {
            public,
            name: None,
            path: prefix.clone(),
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, public, out);
            }
        }
    }
}

/// Counts `pub` declarations (items other than `use`, inherent methods and constants, the fields of a `pub`
/// struct; a `pub` field of a crate-private struct is only as visible as its struct).
#[derive(Default)]
struct PubCount(usize);

impl<'ast> Visit<'ast> for PubCount {
    fn visit_visibility(&mut self, vis: &'ast syn::Visibility) {
        self.0 += usize::from(is_pub(vis));
    }
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.visit_visibility(&m.vis);
    }
    fn visit_block(&mut self, _: &'ast syn::Block) {}
    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        if is_pub(&s.vis) {
            syn::visit::visit_item_struct(self, s);
        }
    }
}

/// Collects the paths code names, and the `use`s inside function bodies.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0.push(segments(path));
        syn::visit::visit_path(self, path);
    }
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut uses = Vec::new();
        flatten_use(&item.tree, &mut Vec::new(), false, &mut uses);
        self.0.extend(uses.into_iter().map(|u| u.path));
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

impl Crate {
    fn load(lib: &Path) -> Crate {
        let mut krate = Crate {
            modules: Vec::new(),
            declared_pub: 0,
            inherent: BTreeMap::new(),
        };
        let items = parse(lib);
        krate.add_module(
            "crate".into(),
            None,
            true,
            false,
            items,
            lib.parent().unwrap(),
        );
        for m in 0..krate.modules.len() {
            for imp in &krate.modules[m].impls {
                let syn::Type::Path(ty) = &*imp.self_ty else {
                    continue;
                };
                let Some(Target::Def(dm, di)) = krate.resolve_path(m, &segments(&ty.path), 0)
                else {
                    continue;
                };
                let members = imp.items.iter().filter_map(|item| match item {
                    syn::ImplItem::Fn(f) if is_pub(&f.vis) => {
                        Some((f.sig.ident.to_string(), "method"))
                    }
                    syn::ImplItem::Const(c) if is_pub(&c.vis) => {
                        Some((c.ident.to_string(), "assoc-const"))
                    }
                    _ => None,
                });
                let members: Vec<_> = members.collect();
                krate.inherent.entry((dm, di)).or_default().extend(members);
            }
        }
        krate
    }

    fn add_module(
        &mut self,
        name: String,
        parent: Option<usize>,
        public: bool,
        hidden: bool,
        items: Vec<syn::Item>,
        dir: &Path,
    ) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            name,
            parent,
            public,
            hidden,
            children: BTreeMap::new(),
            defs: Vec::new(),
            uses: Vec::new(),
            impls: Vec::new(),
            paths: Vec::new(),
        });
        let mut paths = Paths::default();
        for item in items {
            let def =
                |name: &syn::Ident, kind, vis: &syn::Visibility, attrs: &[syn::Attribute]| Def {
                    name: name.to_string(),
                    kind,
                    public: is_pub(vis),
                    hidden: is_hidden(attrs),
                    members: Vec::new(),
                };
            match &item {
                syn::Item::Mod(m) if has_cfg_test(&m.attrs) => continue,
                syn::Item::Fn(f) if has_cfg_test(&f.attrs) => continue,
                syn::Item::Impl(i) if has_cfg_test(&i.attrs) => continue,
                syn::Item::Use(u) if has_cfg_test(&u.attrs) => continue,
                _ => {}
            }
            if !matches!(item, syn::Item::Mod(_)) {
                paths.visit_item(&item);
            }
            let mut count = PubCount::default();
            count.visit_item(&item);
            self.declared_pub += count.0;
            let new = match item {
                syn::Item::Mod(m) => {
                    let child_dir = dir.join(m.ident.to_string());
                    let items = match m.content {
                        Some((_, items)) => items,
                        None => {
                            let file = dir.join(format!("{}.rs", m.ident));
                            if file.exists() {
                                parse(&file)
                            } else {
                                parse(&child_dir.join("mod.rs"))
                            }
                        }
                    };
                    let child = self.add_module(
                        m.ident.to_string(),
                        Some(id),
                        is_pub(&m.vis),
                        is_hidden(&m.attrs),
                        items,
                        &child_dir,
                    );
                    self.modules[id].children.insert(m.ident.to_string(), child);
                    None
                }
                syn::Item::Use(u) => {
                    flatten_use(
                        &u.tree,
                        &mut Vec::new(),
                        is_pub(&u.vis),
                        &mut self.modules[id].uses,
                    );
                    None
                }
                syn::Item::Impl(i) => {
                    if i.trait_.is_none() {
                        self.modules[id].impls.push(i);
                    }
                    None
                }
                syn::Item::Fn(f) => Some(def(&f.sig.ident, "fn", &f.vis, &f.attrs)),
                syn::Item::Const(c) => Some(def(&c.ident, "const", &c.vis, &c.attrs)),
                syn::Item::Static(s) => Some(def(&s.ident, "static", &s.vis, &s.attrs)),
                syn::Item::Type(t) => Some(def(&t.ident, "type", &t.vis, &t.attrs)),
                syn::Item::Union(u) => Some(def(&u.ident, "union", &u.vis, &u.attrs)),
                syn::Item::Struct(s) => {
                    let mut d = def(&s.ident, "struct", &s.vis, &s.attrs);
                    for (i, f) in s.fields.iter().enumerate() {
                        if is_pub(&f.vis) {
                            let name = f
                                .ident
                                .as_ref()
                                .map_or_else(|| i.to_string(), ToString::to_string);
                            d.members.push((".", name, "field"));
                        }
                    }
                    Some(d)
                }
                syn::Item::Enum(e) => {
                    let mut d = def(&e.ident, "enum", &e.vis, &e.attrs);
                    d.members.extend(
                        e.variants
                            .iter()
                            .map(|v| ("::", v.ident.to_string(), "variant")),
                    );
                    Some(d)
                }
                syn::Item::Trait(t) => {
                    let mut d = def(&t.ident, "trait", &t.vis, &t.attrs);
                    for item in &t.items {
                        match item {
                            syn::TraitItem::Fn(f) => {
                                d.members.push(("::", f.sig.ident.to_string(), "trait-fn"))
                            }
                            syn::TraitItem::Const(c) => {
                                d.members.push(("::", c.ident.to_string(), "trait-const"))
                            }
                            syn::TraitItem::Type(t) => {
                                d.members.push(("::", t.ident.to_string(), "trait-type"))
                            }
                            _ => {}
                        }
                    }
                    Some(d)
                }
                syn::Item::Macro(m) => m.ident.as_ref().map(|i| Def {
                    name: i.to_string(),
                    kind: "macro",
                    public: m.attrs.iter().any(|a| a.path().is_ident("macro_export")),
                    hidden: is_hidden(&m.attrs),
                    members: Vec::new(),
                }),
                _ => None,
            };
            if let Some(d) = new {
                self.modules[id].defs.push(d);
            }
        }
        // The root's `pub use`s are the crate's facade, not code of the root that depends on a module.
        let uses = self.modules[id]
            .uses
            .iter()
            .filter(|u| id != 0 || !u.public)
            .map(|u| u.path.clone());
        let uses: Vec<_> = uses.collect();
        self.modules[id].paths = paths.0;
        self.modules[id].paths.extend(uses);
        id
    }

    /// What `path`, written in module `m`, names inside this crate (`None`: another crate, a local or a
    /// prelude name).
    fn resolve_path(&self, m: usize, path: &[String], depth: usize) -> Option<Target> {
        if depth > 32 || path.is_empty() {
            return None;
        }
        let (mut at, rest) = match path[0].as_str() {
            "crate" => (Target::Module(0), &path[1..]),
            "self" => (Target::Module(m), &path[1..]),
            "super" => (Target::Module(self.modules[m].parent?), &path[1..]),
            first => (self.lookup(m, first, depth + 1)?, &path[1..]),
        };
        for seg in rest {
            at = match at {
                Target::Module(mm) if seg == "super" => Target::Module(self.modules[mm].parent?),
                Target::Module(mm) => self.lookup(mm, seg, depth + 1)?,
                // A variant, an associated item: the def is what the path names in this crate.
                Target::Def(..) => return Some(at),
            };
        }
        Some(at)
    }

    /// The name `name` in module `m`'s scope: a child module, a def, an import, a glob import.
    fn lookup(&self, m: usize, name: &str, depth: usize) -> Option<Target> {
        let module = &self.modules[m];
        if let Some(&c) = module.children.get(name) {
            return Some(Target::Module(c));
        }
        if let Some(i) = module.defs.iter().position(|d| d.name == name) {
            return Some(Target::Def(m, i));
        }
        if depth > 32 {
            return None;
        }
        for u in &module.uses {
            if u.name.as_deref() == Some(name) {
                return self.resolve_path(m, &u.path, depth + 1);
            }
        }
        for u in module.uses.iter().filter(|u| u.name.is_none()) {
            if let Some(Target::Module(g)) = self.resolve_path(m, &u.path, depth + 1)
                && let Some(t) = self.lookup(g, name, depth + 1)
            {
                return Some(t);
            }
        }
        None
    }

    /// Every path a dependent crate can name, with its kind, sorted.
    fn api(&self, krate: &str) -> BTreeSet<String> {
        self.surface(krate).0
    }

    /// The paths, and how many of the crate's `pub` declarations they reach (each counted once, whatever
    /// the number of paths to it).
    fn surface(&self, krate: &str) -> (BTreeSet<String>, usize, usize) {
        let mut api = Api::default();
        let mut seen = BTreeSet::new();
        self.visit(0, krate, false, &mut api, &mut seen);
        let items = api
            .reached
            .iter()
            .filter(|(_, _, member)| member.is_empty())
            .count();
        (api.lines, api.reached.len(), items)
    }

    fn visit(
        &self,
        m: usize,
        prefix: &str,
        hidden: bool,
        out: &mut Api,
        seen: &mut BTreeSet<(usize, String)>,
    ) {
        if !seen.insert((m, prefix.to_string())) {
            return;
        }
        let module = &self.modules[m];
        for (i, d) in module.defs.iter().enumerate().filter(|(_, d)| d.public) {
            self.emit(
                m,
                i,
                &format!("{prefix}::{}", d.name),
                hidden || d.hidden,
                out,
            );
        }
        for (name, &c) in &module.children {
            let child = &self.modules[c];
            if child.public {
                let path = format!("{prefix}::{name}");
                let hidden = hidden || child.hidden;
                out.lines.insert(format!(
                    "mod {path}{}",
                    if hidden { " #[doc(hidden)]" } else { "" }
                ));
                out.reached.insert((c, usize::MAX, String::new()));
                self.visit(c, &path, hidden, out, seen);
            }
        }
        for u in module.uses.iter().filter(|u| u.public) {
            let target = self.resolve_path(m, &u.path, 0);
            match (&u.name, target) {
                (None, Some(Target::Module(g))) => self.visit(g, prefix, hidden, out, seen),
                (Some(name), Some(Target::Module(g))) => {
                    let path = format!("{prefix}::{name}");
                    out.lines.insert(format!("mod {path}"));
                    self.visit(g, &path, hidden, out, seen);
                }
                (Some(name), Some(Target::Def(dm, di))) => {
                    self.emit(dm, di, &format!("{prefix}::{name}"), hidden, out);
                }
                (name, _) => {
                    let name = name.as_deref().unwrap_or("*");
                    out.lines.insert(format!(
                        "re-export {prefix}::{name} = {}",
                        u.path.join("::")
                    ));
                }
            }
        }
    }

    fn emit(&self, m: usize, i: usize, path: &str, hidden: bool, out: &mut Api) {
        let d = &self.modules[m].defs[i];
        let mark = if hidden || d.hidden {
            " #[doc(hidden)]"
        } else {
            ""
        };
        out.lines.insert(format!("{} {path}{mark}", d.kind));
        out.reached.insert((m, i, String::new()));
        for (sep, name, kind) in &d.members {
            out.lines.insert(format!("{kind} {path}{sep}{name}{mark}"));
            if *kind == "field" {
                out.reached.insert((m, i, name.clone()));
            }
        }
        for (name, kind) in self.inherent.get(&(m, i)).into_iter().flatten() {
            out.lines.insert(format!("{kind} {path}::{name}{mark}"));
            out.reached.insert((m, i, format!("::{name}")));
        }
    }

    /// Whether module `a` is `m` or one of its parents.
    fn is_ancestor(&self, a: usize, mut m: usize) -> bool {
        loop {
            if a == m {
                return true;
            }
            match self.modules[m].parent {
                Some(p) => m = p,
                None => return false,
            }
        }
    }

    /// The path of module `m` in its crate.
    fn name(&self, m: usize) -> String {
        match self.modules[m].parent {
            None => "crate".into(),
            Some(0) => self.modules[m].name.clone(),
            Some(p) => format!("{}::{}", self.name(p), self.modules[m].name),
        }
    }

    /// Module → the modules its code names, a module's own parents left out: a child module is part of its
    /// parent and sees its items by design (`super::`). Paths name modules as `a::b`, the root as `crate`.
    fn module_graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, module) in self.modules.iter().enumerate() {
            let from = self.name(m);
            graph.entry(from.clone()).or_default();
            for path in &module.paths {
                // The longest prefix that names something here: `Type::method`, `Enum::Variant` name the type.
                let target = (1..=path.len())
                    .rev()
                    .find_map(|n| self.resolve_path(m, &path[..n], 0));
                let to = match target {
                    Some(Target::Module(t) | Target::Def(t, _)) if self.is_ancestor(t, m) => {
                        continue;
                    }
                    Some(Target::Module(t) | Target::Def(t, _)) => self.name(t),
                    None => continue,
                };
                if to != from {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        graph
    }
}

fn parse(file: &Path) -> Vec<syn::Item> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .items
}

/// The strongly connected components of `graph` with more than one module: each is one or more cycles.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|n| (n, reach(n))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (n, r) in &reach {
        if !r.contains(*n) || out.iter().any(|c| c.contains(*n)) {
            continue;
        }
        out.push(
            r.iter()
                .filter(|m| reach[m].contains(*n))
                .cloned()
                .collect(),
        );
    }
    out
}
