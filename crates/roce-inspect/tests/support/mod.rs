//! Helpers shared by the integration tests.

pub(crate) mod fleet;
pub(crate) mod tree;

// roce-render's test helpers, read from its tree: a test helper is no crate to depend on.
#[path = "../../../roce-render/tests/support/consumers.rs"]
pub(crate) mod consumers;
#[path = "../../../roce-render/tests/support/slurm.rs"]
pub(crate) mod slurm;
