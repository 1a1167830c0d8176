//! Read the real world and compare it with a roce profile: lint hand-written manifests, explain NCCL/UCX
//! logs, probe a live pod (`doctor`). Nothing is implemented yet; this crate reserves the name and the
//! place in the workspace (see the project's issues for `lint`, `explain` and `doctor`).
#![deny(missing_docs)]
