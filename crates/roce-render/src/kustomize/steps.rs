//! `transformers.yaml`: the Component's transformers, in the order kustomize runs them.
//!
//! Kustomize runs a kustomization's `patches:` before its `replacements:` and both before its
//! `transformers:`, whatever the file order; only a `transformers:` list runs as written. The
//! container check has to come before the strategic-merge patch (which adds an image-less
//! container when no container has the name, and the check would then find that one), so every
//! step lives in this one ordered file.
//!
//! Replacement targets match kinds exactly (no alternation, unlike patch targets), so the first
//! step labels each selected workload [`MARK`]`=<shape>` and later steps select by that label:
//! one target per pod-template shape instead of one per kind. The last step removes the label.
//!
//! Appending to the Multus annotation takes four steps, because kustomize has no "append to this
//! string, or create it" operation that honours a selection:
//! 1. a JSON patch copies each selected pod template's annotations to a scratch field at the object
//!    root ([`SCRATCH`]), so the next step, which selects by field path only, sees just them;
//! 2. a `SuffixTransformer` appends `,<networks>` to the scratch annotation. It edits only fields
//!    that exist, so a workload without the annotation is left for step 3;
//! 3. a replacement with `create: true` writes the scratch annotation split on the network list
//!    (`delimiter: <networks>`, `index: 1`, value `""`): an annotation from step 2 ends with the
//!    list and is written back unchanged, a missing one becomes the list;
//! 4. a JSON patch copies the scratch annotation back and removes the scratch field.
//!
//! With `exec`, a JSON patch after the strategic-merge patch puts the `roce exec` prefix in front of
//! the container's `command`: JSON patch `add` at index `i` inserts before item `i`, so adding the
//! prefix's words at 0, 1, … keeps whatever the command was. A JSON patch addresses containers by
//! position only; the strategic-merge patch has just moved the container to the front (kustomize#5904),
//! and a `test` on its name fails the build, rather than wrap another container, should that change.
//! A `copy` of `command/0` fails the build for a container without a command (or with an empty one):
//! it runs its image's ENTRYPOINT, which a prefix in `command` would drop.

use super::select::{Group, Shape};
use super::{Ctx, WIRING_KIND, capabilities};
use crate::exec::ExecWrap;
use crate::plan::MULTUS_ANNOTATION;
use crate::yaml::{self, Yaml};

/// The label that marks a selected workload while the Component runs; its value is the shape.
pub(crate) const MARK: &str = "roce.dev/wiring";

/// The scratch field (at the object root) that holds a copy of the pod template's annotations
/// while the Multus steps run. No Kubernetes object has a field of this name.
pub(crate) const SCRATCH: &str = "roceScratchAnnotations";

/// The scratch field the `exec` step copies the command's first word to, only to fail the build when it
/// has none.
const SCRATCH_COMMAND: &str = "roceScratchCommand";

/// One transformer config and the comment above it.
struct Step {
    why: String,
    doc: Yaml,
}

/// The whole `transformers.yaml`.
pub(super) fn transformers(ctx: &Ctx) -> String {
    let mut steps: Vec<Step> = ctx
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| mark(ctx, g, i))
        .collect();
    steps.push(container(ctx));
    for &shape in &ctx.shapes {
        steps.push(Step {
            why: format!("The strategic-merge patch ({}).", shape.patch().0),
            doc: patch_transformer(
                ctx,
                "patch",
                shape,
                Yaml::map().with("path", shape.patch().0),
            ),
        });
    }
    if let Some(w) = ctx.exec {
        for &shape in &ctx.shapes {
            steps.push(exec(ctx, w, shape));
        }
    }
    if let Some(networks) = &ctx.networks {
        multus(ctx, networks, &mut steps);
    } else {
        for &shape in &ctx.shapes {
            steps.push(Step {
                why: "Removes the label of the first step.".to_string(),
                doc: json_patch(ctx, "unmark", shape, &unmark_op()),
            });
        }
    }
    let mut out = crate::header("#", ctx.plan);
    let docs: Vec<String> = steps
        .iter()
        .map(|s| {
            let comment: String = s.why.lines().map(|l| format!("# {l}\n")).collect();
            format!("{comment}{}", yaml::to_string(&s.doc))
        })
        .collect();
    out.push_str(&docs.join("---\n"));
    out
}

/// A `builtin` transformer config named `<component>-<suffix>`.
fn builtin(kind: &str, ctx: &Ctx, suffix: &str) -> Yaml {
    Yaml::map()
        .with("apiVersion", "builtin")
        .with("kind", kind)
        .with(
            "metadata",
            Yaml::map().with("name", format!("{}-{suffix}", ctx.name)),
        )
}

fn mark_selector(shape: Shape) -> String {
    format!("{MARK}={}", shape.slug())
}

/// Step 0, per group: the marker label. A patch target's kind and name are anchored regular
/// expressions, so kinds are an alternation and the name is escaped.
fn mark(ctx: &Ctx, g: &Group, i: usize) -> Step {
    let mut target = Yaml::map().with("kind", g.kinds.join("|"));
    if let Some(n) = &g.name {
        target.insert("name", super::select::regex_escape(n));
    }
    if let Some(l) = &g.label_selector {
        target.insert("labelSelector", l.as_str());
    }
    let body = format!(
        "apiVersion: v1\nkind: Any\nmetadata: {{name: any, labels: {{{MARK}: {}}}}}\n",
        g.shape.slug()
    );
    Step {
        why: format!(
            "Labels each selected {} {MARK}={} for the steps below.",
            g.kinds.join(", "),
            g.shape.slug()
        ),
        doc: builtin(
            "PatchTransformer",
            ctx,
            &numbered("mark", i, ctx.groups.len()),
        )
        .with("patch", Yaml::Block(body))
        .with("target", target),
    }
}

/// Transformer configs are resources to kustomize, so their names must differ within the file.
fn numbered(suffix: &str, i: usize, count: usize) -> String {
    if count > 1 {
        format!("{suffix}-{}", i + 1)
    } else {
        suffix.to_string()
    }
}

/// A `PatchTransformer` for the marked workloads of one shape; `patch` holds `path:` or `patch:`.
fn patch_transformer(ctx: &Ctx, suffix: &str, shape: Shape, patch: Yaml) -> Yaml {
    let suffix = if ctx.shapes.len() > 1 {
        format!("{suffix}-{}", shape.slug())
    } else {
        suffix.to_string()
    };
    let mut doc = builtin("PatchTransformer", ctx, &suffix);
    if let Yaml::Map(entries) = patch {
        for (k, v) in entries {
            doc.insert(k, v);
        }
    }
    doc.with(
        "target",
        Yaml::map().with("labelSelector", mark_selector(shape)),
    )
}

fn json_patch(ctx: &Ctx, suffix: &str, shape: Shape, ops: &str) -> Yaml {
    patch_transformer(
        ctx,
        suffix,
        shape,
        Yaml::map().with("patch", Yaml::Block(ops.to_string())),
    )
}

fn unmark_op() -> String {
    format!(
        "- {{op: remove, path: /metadata/labels/{}}}\n",
        pointer_key(MARK)
    )
}

/// A map key as one JSON-pointer segment.
fn pointer_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// One replacement from a `Wiring` field to a field path in the marked workloads of each shape.
fn replacement(
    ctx: &Ctx,
    source: Yaml,
    path: impl Fn(Shape) -> String,
    options: Option<Yaml>,
) -> Yaml {
    let targets: Vec<Yaml> = ctx
        .shapes
        .iter()
        .map(|&shape| {
            let mut y = Yaml::map()
                .with(
                    "select",
                    Yaml::map().with("labelSelector", mark_selector(shape)),
                )
                .with("fieldPaths", vec![Yaml::from(path(shape))]);
            if let Some(o) = &options {
                y.insert("options", o.clone());
            }
            y
        })
        .collect();
    Yaml::map().with("source", source).with("targets", targets)
}

fn source(ctx: &Ctx, field: &str) -> Yaml {
    Yaml::map()
        .with("kind", WIRING_KIND)
        .with("name", ctx.name.as_str())
        .with("fieldPath", field)
}

/// The container check and the capabilities, before the patch.
fn container(ctx: &Ctx) -> Step {
    // `[name=…]` is an unanchored regular expression; anchored, `main` does not match `main-2`.
    let cpath = |shape: Shape, rest: &str| {
        shape.field_path(&format!(
            "spec.containers.[name=^{}$].{rest}",
            ctx.container
        ))
    };
    let mut list = vec![replacement(
        ctx,
        source(ctx, "spec.container"),
        |s| cpath(s, "name"),
        None,
    )];
    let caps = capabilities(ctx.plan);
    for (i, cap) in caps.iter().enumerate() {
        list.push(replacement(
            ctx,
            source(ctx, &format!("spec.capabilities.{i}")),
            |s| cpath(s, &format!("securityContext.capabilities.add.[={cap}]")),
            Some(Yaml::map().with("create", true)),
        ));
    }
    let mut why = format!(
        "Fails the build (\"unable to find field\") for a selected workload without a container `{}`:\n\
         the first replacement copies the name onto itself and, without `create`, needs it.",
        ctx.container
    );
    if !caps.is_empty() {
        why.push_str(" Then each\ncapability is added to `capabilities.add` unless listed (a patch would replace the list).");
    }
    let claims = crate::dra::pod_claims(ctx.plan);
    if let Some(Yaml::Seq(claims)) = &claims {
        for (i, claim) in claims.iter().enumerate() {
            let name = claim.get("name").and_then(Yaml::as_str).unwrap_or_default();
            list.push(replacement(
                ctx,
                source(
                    ctx,
                    &format!("spec.resourceClaims.{i}.resourceClaimTemplateName"),
                ),
                |s| {
                    s.field_path(&format!(
                        "spec.resourceClaims.[name={name}].resourceClaimTemplateName"
                    ))
                },
                Some(Yaml::map().with("create", true)),
            ));
            list.push(replacement(
                ctx,
                source(ctx, &format!("spec.resourceClaims.{i}.name")),
                |s| cpath(s, &format!("resources.claims.[name={name}].name")),
                Some(Yaml::map().with("create", true)),
            ));
        }
        why.push_str(
            "\nThe DRA claims: each pod claim and the container's use of it, merged by name (a patch would\n\
             replace both lists and drop the workload's own claims).",
        );
    }
    let terms = super::affinity_terms(ctx.plan);
    for (i, (key, _)) in terms.iter().enumerate() {
        list.push(replacement(
            ctx,
            source(ctx, &format!("spec.podAffinityTerms.{i}.labelSelector")),
            |s| {
                s.field_path(&format!(
                    "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.[topologyKey={key}].labelSelector"
                ))
            },
            Some(Yaml::map().with("create", true)),
        ));
    }
    if !terms.is_empty() {
        why.push_str(
            "\nThe required pod affinity, merged by topology key with the workload's own terms.",
        );
    }
    Step {
        why,
        doc: builtin("ReplacementTransformer", ctx, "container").with("replacements", list),
    }
}

/// The `roce exec` prefix in front of the container's `command` (module docs), after the patch that
/// moved the container to the front.
fn exec(ctx: &Ctx, w: &ExecWrap, shape: Shape) -> Step {
    let container = |rest: &str| shape.pointer(&format!("/spec/containers/0{rest}"));
    let op = |op: &str| Yaml::map().with("op", op);
    let mut ops = vec![
        op("test")
            .with("path", container("/name"))
            .with("value", ctx.container.as_str()),
        op("copy")
            .with("from", container("/command/0"))
            .with("path", format!("/{SCRATCH_COMMAND}")),
        op("remove").with("path", format!("/{SCRATCH_COMMAND}")),
    ];
    for (i, word) in w.prefix().into_iter().enumerate() {
        ops.push(
            op("add")
                .with("path", container(&format!("/command/{i}")))
                .with("value", word),
        );
    }
    let lines: String = ops
        .iter()
        .map(|o| {
            let line = yaml::flow(o).expect("strings always have a flow form");
            format!("- {line}\n")
        })
        .collect();
    Step {
        why: format!(
            "Starts the job behind `roce exec`: the patch above moved `{c}` to the front (kustomize#5904), which\n\
             the test checks; the copy fails the build for a container without a `command` (its image's\n\
             ENTRYPOINT would be lost); each add inserts one word before the command.",
            c = ctx.container
        ),
        doc: json_patch(ctx, "exec", shape, &lines),
    }
}

/// The four Multus steps (module docs); the last one also removes the marker label.
fn multus(ctx: &Ctx, networks: &str, steps: &mut Vec<Step>) {
    let key = pointer_key(MULTUS_ANNOTATION);
    for &shape in &ctx.shapes {
        let ops = format!(
            "- {{op: copy, from: {}, path: /{SCRATCH}}}\n",
            shape.pointer("/metadata/annotations")
        );
        steps.push(Step {
            why: format!(
                "Multus networks, step 1 of 4: copies the pod template's annotations to /{SCRATCH}."
            ),
            doc: json_patch(ctx, "multus-copy", shape, &ops),
        });
    }
    steps.push(Step {
        why: "Step 2: appends the networks to the annotation where it exists (no `create`)."
            .to_string(),
        doc: builtin("SuffixTransformer", ctx, "multus-append")
            .with("suffix", format!(",{networks}"))
            .with(
                "fieldSpecs",
                vec![Yaml::map().with(
                    "path",
                    format!("{SCRATCH}/{}", MULTUS_ANNOTATION.replace('/', "\\/")),
                )],
            ),
    });
    let split = || Yaml::map().with("delimiter", networks).with("index", 1i64);
    let create = replacement(
        ctx,
        source(ctx, "spec.networks").with("options", split()),
        |_| format!("{SCRATCH}.[{MULTUS_ANNOTATION}]"),
        Some(split().with("create", true)),
    );
    steps.push(Step {
        why: "Step 3: creates a missing annotation. Split on the network list, one from step 2 is\n\
              [\"<existing>,\", \"\"] and gets \"\" back; a missing one is [\"\"] and gets \"\" appended."
            .to_string(),
        doc: builtin("ReplacementTransformer", ctx, "multus-create")
            .with("replacements", vec![create]),
    });
    for &shape in &ctx.shapes {
        let ops = format!(
            "- {{op: copy, from: /{SCRATCH}/{key}, path: {}}}\n- {{op: remove, path: /{SCRATCH}}}\n{}",
            shape.pointer(&format!("/metadata/annotations/{key}")),
            unmark_op()
        );
        steps.push(Step {
            why: format!(
                "Step 4: copies the annotation back, removes /{SCRATCH} and the label of the first step."
            ),
            doc: json_patch(ctx, "multus-restore", shape, &ops),
        });
    }
}
