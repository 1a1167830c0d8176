//! Loading: parse a source, follow its `extends` chain, merge the layers, walk the tree into a typed
//! [`Profile`], and run the rules. One [`Loaded`] carries the profile (when there were no errors) and every
//! problem found, resolved against the sources they point into.

use crate::builtin;
use crate::model::Profile;
use crate::problem::{self, Code, Problem};
use crate::source::{Origin, Source, SourceId, Sources, Spanned};
use crate::tree::{self, Node, Scalar, Value};
use crate::{rules, syntax, walk};

/// Longest `extends` chain followed.
pub const MAX_EXTENDS: usize = 16;

/// Finds the source an `extends` reference names (built-in profiles are found before asking this).
pub trait Resolve {
    /// The source for `reference`, written in `from`; `Err` says why it could not be read.
    fn resolve(&self, reference: &str, from: &Source) -> Result<Source, String>;
}

/// A resolver that knows only the built-in profiles.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinsOnly;

impl Resolve for BuiltinsOnly {
    fn resolve(&self, reference: &str, _from: &Source) -> Result<Source, String> {
        Err(format!("`{reference}` is not a built-in profile"))
    }
}

/// The result of loading a profile.
#[derive(Debug)]
pub struct Loaded {
    /// The typed profile, when no error was found.
    pub profile: Option<Profile>,
    /// Every problem (errors and warnings), sorted by place.
    pub problems: Vec<Problem>,
    /// The sources read: the profile first, then each `extends` layer.
    pub sources: Sources,
}

impl Loaded {
    /// Did any problem have error severity?
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }
}

/// Load a profile from a source, following `extends` through built-ins and `resolver`.
///
/// ```
/// use roce_model::{load, BuiltinsOnly, Source};
/// let text = r#"profile "me/gb300" extends="coreweave/gb300-roce" { nccl debug="WARN" }"#;
/// let loaded = load(Source::new("me.kdl", text), &BuiltinsOnly);
/// let profile = loaded.profile.expect("valid");
/// assert_eq!(profile.nccl.debug.unwrap().value, "WARN");
/// assert_eq!(profile.node_pool.gpus_per_node.value, 4);
/// ```
pub fn load(source: Source, resolver: &dyn Resolve) -> Loaded {
    let mut sources = Sources::default();
    let mut problems = Vec::new();
    let profile = load_inner(source, resolver, &mut sources, &mut problems);
    let mut problems: Vec<Problem> = problems.into_iter().map(|p| p.resolve(&sources)).collect();
    problem::sort(&mut problems);
    Loaded {
        profile,
        problems,
        sources,
    }
}

fn load_inner(
    source: Source,
    resolver: &dyn Resolve,
    sources: &mut Sources,
    problems: &mut Vec<Problem>,
) -> Option<Profile> {
    let mut layers: Vec<Node> = Vec::new();
    let mut seen: Vec<String> = vec![source.name.clone()];
    let mut current = source;
    // Every layer a built-in's own text: the rules were run on it when the crate was tested.
    let mut all_embedded = true;
    loop {
        all_embedded &= builtin::embedded(&current).is_some();
        let id = sources.add(current.clone());
        let node = match syntax::parse(&current, id) {
            Ok(node) => node,
            Err(errs) => {
                problems.extend(errs);
                return None;
            }
        };
        let parent = extends_of(&node);
        if parent.is_some() && layers.is_empty() && !has_key(&node, "name") {
            problems.push(
                Problem::new(Code::MissingKey, "a profile that extends another needs its own `name`")
                    .at(node.origin, "no `name`")
                    .help("name it (`profile \"team/name\" …` in KDL, `name: team/name` in YAML); otherwise it would pass as the profile it extends"),
            );
        }
        layers.push(node);
        let Some(parent) = parent else { break };
        if layers.len() > MAX_EXTENDS {
            problems.push(
                Problem::new(
                    Code::ExtendsCycle,
                    format!("`extends` goes deeper than {MAX_EXTENDS} layers"),
                )
                .at(parent.origin, "")
                .help("flatten the chain of profiles"),
            );
            return None;
        }
        let next = match builtin::source(&parent.value) {
            Some(s) => s,
            None => match resolver.resolve(&parent.value, &current) {
                Ok(s) => s,
                Err(why) => {
                    problems.push(not_found(&parent, &why));
                    return None;
                }
            },
        };
        if seen.contains(&next.name) {
            problems.push(
                Problem::new(
                    Code::ExtendsCycle,
                    format!("`extends` loops: {} → {}", seen.join(" → "), next.name),
                )
                .at(parent.origin, "extends a profile already in the chain")
                .help("remove the `extends` that points back down the chain"),
            );
            return None;
        }
        seen.push(next.name.clone());
        current = next;
    }
    let mut layers = layers.into_iter().rev();
    let mut merged = layers.next()?;
    for upper in layers {
        merged = tree::merge(merged, upper);
    }
    let before = problems.len();
    let profile = walk::profile(&merged, problems)?;
    // A built-in's text is fixed when roce is built, and `builtin::tests::every_builtin_passes_every_rule`
    // proves the rules have nothing to say about any of them; running them again at every start was a
    // twelfth of `render`'s instructions (docs/decisions.md, "(startup-5)").
    if !all_embedded {
        problems.extend(rules::check(&profile));
    }
    let failed = problems[before..].iter().any(Problem::is_error);
    (!failed).then_some(profile)
}

fn has_key(node: &Node, key: &str) -> bool {
    matches!(&node.value, Value::Map(entries) if entries.iter().any(|e| e.key.value == key))
}

fn extends_of(node: &Node) -> Option<Spanned<String>> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    let entry = entries.iter().find(|e| e.key.value == "extends")?;
    match &entry.node.value {
        Value::Scalar(Scalar::Str(s)) => Some(Spanned::new(s.clone(), entry.node.origin)),
        _ => None,
    }
}

fn not_found(parent: &Spanned<String>, why: &str) -> Problem {
    let names: Vec<&str> = builtin::names().collect();
    let help = match crate::suggest::closest(&parent.value, names.iter().copied()) {
        Some(best) => format!(
            "did you mean the built-in `{best}`? `roce profiles` lists them; a file path is relative to this file"
        ),
        None => {
            "name a built-in profile (`roce profiles` lists them) or a file relative to this file"
                .to_string()
        }
    };
    Problem::new(
        Code::ExtendsNotFound,
        format!("cannot find profile `{}` to extend: {why}", parent.value),
    )
    .at(parent.origin, "not found")
    .help(help)
}

/// A problem about input that is not UTF-8 text, for front ends that read bytes.
pub fn not_text(name: &str, bytes: &[u8]) -> (Source, Problem) {
    let valid_up_to = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut sources = Sources::default();
    let source = Source::new(name, text);
    let id: SourceId = sources.add(source.clone());
    let at = source.text.floor_char_boundary_compat(valid_up_to);
    let problem = Problem::new(Code::Syntax, "the file is not UTF-8 text")
        .at(Origin::new(id, at..at), "first invalid byte")
        .help("profiles are KDL or YAML text in UTF-8; is this the right file?")
        .resolve(&sources);
    (source, problem)
}

trait FloorBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        i = i.min(self.len());
        while i > 0 && !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}
