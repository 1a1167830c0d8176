//! Read the real world and compare it with a roce profile: lint hand-written manifests, explain NCCL/UCX
//! logs, probe a live pod or node (`doctor`). Nothing here writes to the host it reads.
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod doctor;
pub mod explain;
pub mod lint;
