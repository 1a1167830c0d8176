//! `dockerfile`: `ENV` lines to paste after `FROM`.

use crate::plan::{Plan, Topic};
use crate::{RenderError, RenderOptions};
use crate::{comment, quote};

/// Render the plan's env as one `ENV` instruction, after what the plan says the image must ship.
pub fn render(plan: &Plan, _opts: &RenderOptions) -> Result<String, RenderError> {
    let mut out = crate::header("#", plan);
    out.push_str(&comment::notes(plan.notes_about(&[Topic::Image])));
    if plan.env.is_empty() {
        return Ok(out);
    }
    let mut lines = Vec::new();
    for e in &plan.env {
        let v =
            quote::dockerfile_env(&e.value).map_err(|why| RenderError::unrepresentable(e, why))?;
        lines.push(format!("{}={v}", e.name));
    }
    out.push_str("ENV ");
    out.push_str(&lines.join(" \\\n    "));
    out.push('\n');
    Ok(out)
}
