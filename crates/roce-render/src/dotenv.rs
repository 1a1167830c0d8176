//! `env`: a dotenv file that POSIX shells can also source.

use crate::plan::Plan;
use crate::quote;
use crate::{RenderError, RenderOptions};

/// Render the plan's env as `NAME=value` lines.
pub(crate) fn render(plan: &Plan, _opts: &RenderOptions) -> Result<String, RenderError> {
    let mut out = crate::header("#", plan);
    for e in &plan.env {
        let v = quote::dotenv(&e.value).map_err(|why| RenderError::unrepresentable(e, why))?;
        out.push_str(&format!("{}={v}\n", e.name));
    }
    Ok(out)
}
