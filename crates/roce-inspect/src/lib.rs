//! Read the real world and compare it with a roce profile: lint hand-written manifests, explain NCCL/UCX
//! logs, probe a live pod or node (`doctor`). Nothing here writes to the host it reads.
//!
//! ```
//! use roce_inspect::explain::{explain_str, Transport};
//! let log = "\
//! node1:10:10 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
//! node1:10:10 [0] NCCL INFO NCCL_IB_HCA set to ibp
//! node1:10:10 [0] NCCL INFO NET/IB : No device found.
//! node1:10:10 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
//! node1:10:10 [0] NCCL INFO Using network Socket
//! ";
//! let e = explain_str("rank0.log", log);
//! assert_eq!(e.transport, Transport::Socket);
//! assert!(e.codes().iter().any(|c| c.as_str() == "roce::explain::socket_fallback"));
//! ```
#![warn(clippy::too_many_lines)]
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod doctor;
pub mod exec;
pub mod explain;
pub mod lint;
pub mod sweep;
