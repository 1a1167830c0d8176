//! `dockerfile`: `ENV` lines to paste after `FROM`; with options, the `roce` binary and an `ENTRYPOINT`
//! that starts the job behind `roce exec`.

use crate::exec::ROCE_BINARY;
use crate::plan::{Plan, Topic};
use crate::{RenderError, RenderOptions};
use crate::{comment, quote};

/// Render the plan's env as one `ENV` instruction, after what the plan says the image must ship.
pub(crate) fn render(plan: &Plan, opts: &RenderOptions) -> Result<String, RenderError> {
    let mut out = crate::header("#", plan);
    out.push_str(&comment::notes(plan.notes_about(&[Topic::Image])));
    // Behind `roce exec` the variables it computes from the pod stay out of ENV, or they would win.
    let env: Vec<_> = crate::exec::static_env(plan, opts.exec.as_ref()).collect();
    if !env.is_empty() {
        let mut lines = Vec::new();
        for e in env {
            let v = quote::dockerfile_env(&e.value)
                .map_err(|why| RenderError::unrepresentable(e, why))?;
            lines.push(format!("{}={v}", e.name));
        }
        out.push_str("ENV ");
        out.push_str(&lines.join(" \\\n    "));
        out.push('\n');
    }
    if opts.with_roce_binary {
        out.push_str(&comment::block(&[
            "roce, for `roce exec` (docs/exec.md) and `roce doctor`: a static binary that needs nothing from the image. Build it for the image's architecture and copy it next to this Dockerfile (README, \"Release binary\"; aarch64 and musl: docs/doctor.md):".to_string(),
            "  RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release -p roce-cli --target x86_64-unknown-linux-gnu".to_string(),
            "  cp target/x86_64-unknown-linux-gnu/release/roce .".to_string(),
        ]));
        out.push_str(&format!("COPY roce {ROCE_BINARY}\n"));
    }
    if let Some(w) = &opts.exec {
        let words: Vec<String> = w
            .prefix()
            .iter()
            .map(|a| serde_json::Value::from(a.as_str()).to_string())
            .collect();
        out.push_str(&comment::block(&[format!(
            "Every container starts behind `roce exec`, which sets {} from the pod's devices (so ENV leaves them out) and the profile's other variables; the container's arguments (CMD, or a pod's `args`) are the job. This replaces the base image's ENTRYPOINT (add that to the arguments if it has one); a pod's `command` replaces this one.",
            roce_model::fabric::env::POD_DEPENDENT.join(", ")
        )]));
        out.push_str(&format!("ENTRYPOINT [{}]\n", words.join(", ")));
    }
    Ok(out)
}
