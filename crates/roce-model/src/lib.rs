//! Typed GPUDirect RDMA fabric profiles for roce.
//!
//! A profile describes a fabric once — InfiniBand or RoCE, its node pool, rails, Multus attachments, NCCL
//! and UCX settings — in KDL or YAML. This crate parses both syntaxes into one spanned tree, follows
//! `extends`, walks the tree into a typed [`Profile`] and runs the rule catalogue ([`Code`]), returning every
//! problem with its place and fix. It does no IO: callers pass text and get values back.
//!
//! ```
//! use roce_model::{builtin, load, BuiltinsOnly};
//! let loaded = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly);
//! assert!(!loaded.has_errors());
//! let profile = loaded.profile.unwrap();
//! assert_eq!(profile.rail_list().len(), 16);
//! ```
#![warn(clippy::too_many_lines)]
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod builtin;
pub mod diff;
pub mod fabric;
mod fields;
pub mod load;
mod manifest;
pub mod model;
pub mod names;
pub mod nccl_list;
pub mod problem;
mod rules;
pub mod source;
mod suggest;
mod syntax;
mod tree;
pub mod ucx_list;
mod walk;

#[doc(hidden)]
pub mod plumbing {
    //! What roce's own crates share beyond the API: the spanned tree every front end produces, the
    //! manifest reader `roce apply`, `roce lint` and the webhook parse manifests with, and did-you-mean
    //! suggestions.
    //!
    //! Not API: hidden from the docs, and these change with the front ends. A tool outside roce loads
    //! profiles with [`crate::load()`], works with [`crate::Profile`] and the parsers ([`crate::nccl_list`],
    //! [`crate::ucx_list`]), and asks [`crate::fabric`] for fabric facts (docs/decisions.md, "(api)").
    pub mod suggest {
        //! Did-you-mean for names: the closest candidate, and a `help` line naming it.
        pub use crate::suggest::{closest, help};
    }
    pub mod manifest {
        //! The manifest reader: multi-document Kubernetes YAML → one spanned tree per document.
        pub use crate::manifest::{
            MAX_DEPTH, ReadBy, STACK_BYTES, compare_readers, not_text, parse, parse_here,
        };
    }
    pub mod tree {
        //! The spanned tree: what KDL and YAML both become before the walker types them.
        pub use crate::tree::{Entry, Node, Scalar, Value, content_origin};
    }
}

pub use fields::profile_schema;
pub use load::{BuiltinsOnly, Loaded, Resolve, load};
pub use model::Profile;
pub use problem::{Code, Domain, Problem, Severity};
pub use source::{Format, Origin, Source, Spanned};
