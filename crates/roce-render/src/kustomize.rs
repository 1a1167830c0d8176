//! `kustomize`: a Kustomize Component and patches that wire the fabric into selected workloads.

use crate::plan::Plan;
use crate::{Artifact, RenderError, RenderOptions};

/// Which workloads a Component patches: by kind and name, or by label selector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// Workload kind (`Deployment`, `Job`, …).
    pub kind: Option<String>,
    /// Workload name.
    pub name: Option<String>,
    /// Label selector (`app=trainer`).
    pub label_selector: Option<String>,
}

/// Render the Component.
pub fn render(plan: &Plan, opts: &RenderOptions) -> Result<Vec<Artifact>, RenderError> {
    let _ = (plan, opts);
    Ok(Vec::new())
}
