//! `roce lint --profile auto`: the built-in profile whose signals the manifests carry.
//!
//! A profile's signals come from its own plan, not from a table here: the resources it asks for
//! (`rdma/ib`, `vpc.amazonaws.com/efa`), its node labels and instance type, its networks' names, its pod
//! annotations (GKE's interfaces), its DRA device classes and host mounts. Each one found in the manifests
//! scores; the best score wins, and the choice says which signals decided it.

use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::Plan;

/// The profile chosen, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The built-in's name.
    pub profile: String,
    /// The signals found, in the order they were weighed (`asks for rdma/ib`, …).
    pub why: Vec<String>,
}

/// Choose among the built-ins for manifests with these texts; `None` when no built-in's signal is there.
///
/// ```
/// use roce_inspect::lint::auto;
/// assert!(auto::choose(["apiVersion: v1\nkind: ConfigMap\n"]).is_none());
/// ```
pub fn choose<'t>(texts: impl IntoIterator<Item = &'t str> + Clone) -> Option<Choice> {
    let mut best: Option<(u32, Choice)> = None;
    for name in builtin::names() {
        let Some(source) = builtin::source(name) else {
            continue;
        };
        let Some(profile) = load(source, &BuiltinsOnly).profile else {
            continue;
        };
        let instance = profile
            .node_pool
            .instance_type
            .as_ref()
            .map(|t| t.value.clone());
        let plan = roce_render::lower(&profile);
        let (score, why) = score(&plan, instance.as_deref(), texts.clone());
        if score > 0 && best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((
                score,
                Choice {
                    profile: name.to_string(),
                    why,
                },
            ));
        }
    }
    best.map(|(_, c)| c)
}

fn score<'t>(
    plan: &Plan,
    instance: Option<&str>,
    texts: impl IntoIterator<Item = &'t str> + Clone,
) -> (u32, Vec<String>) {
    let has = |needle: &str| texts.clone().into_iter().any(|t| t.contains(needle));
    let mut score = 0;
    let mut why = Vec::new();
    let mut weigh = |found: bool, points: u32, what: String| {
        if found {
            score += points;
            why.push(what);
        }
    };
    if let Some(w) = &plan.wiring {
        for (name, _) in &w.resources {
            weigh(has(&format!("{name}:")), 3, format!("asks for {name}"));
        }
        let nads = w.networks.iter().filter(|n| has(n.name().as_str())).count();
        weigh(
            nads > 0,
            2,
            format!("attaches {nads} of its {} networks", w.networks.len()),
        );
    }
    for (k, v) in &plan.node_selector {
        weigh(has(k) && has(v), 3, format!("selects {k}={v}"));
    }
    if let Some(t) = instance {
        weigh(has(t), 4, format!("runs on {t}"));
    }
    for (k, _) in &plan.pod_annotations {
        weigh(has(k), 3, format!("annotates {k}"));
    }
    for m in &plan.host_mounts {
        weigh(has(&m.host_path), 2, format!("mounts {}", m.host_path));
    }
    if let Some(nics) = plan.dra_spec.nics.dra() {
        let class = nics.class().to_string();
        weigh(has(&class), 3, format!("claims {class}"));
    }
    (score, why)
}

#[cfg(test)]
mod tests {
    use super::choose;

    #[test]
    fn the_signals_of_a_built_in_choose_it_and_say_why() {
        let efa = "resources:\n  limits:\n    vpc.amazonaws.com/efa: 32\n    nvidia.com/gpu: 8\n";
        let c = choose([efa]).unwrap();
        assert_eq!(c.profile, "aws/p5-efa");
        assert!(
            c.why.iter().any(|w| w.contains("vpc.amazonaws.com/efa")),
            "{c:?}"
        );
        assert_eq!(choose(["kind: Pod\nspec: {}\n"]), None);
    }
}
