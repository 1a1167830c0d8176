//! `dockerfile`: `ENV` lines to paste after `FROM`.

use crate::plan::Plan;
use crate::quote;
use crate::{RenderError, RenderOptions};

/// Render the plan's env as one `ENV` instruction.
pub fn render(plan: &Plan, _opts: &RenderOptions) -> Result<String, RenderError> {
    let mut out = crate::header("#", plan);
    if let Some(min) = plan.min_rdma_core {
        out.push_str(&format!(
            "# Requires rdma-core >= {min} in this image, with UCX built against it: with an older\n\
             # rdma-core UCX initialises but GPUDirect RDMA transfers fail with vendor_err 0x89.\n"
        ));
    }
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
