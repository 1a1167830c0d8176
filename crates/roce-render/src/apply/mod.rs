//! Apply a plan to existing workload manifests (`roce apply`) (not implemented yet).
