//! roce-cli's integration tests: one binary, one module per topic (`cargo test -p roce-cli --test tests --
//! exec::` runs one topic). One binary links once where one per file linked six times (docs/decisions.md,
//! "(onebin)").

mod cli;
mod crash;
mod diff;
mod exec;
mod helm;
mod memory;
mod readme;
mod webhook;

// roce-render's test helper, read from its tree: a test helper is no crate to depend on.
#[path = "../../roce-render/tests/support/consumers.rs"]
mod consumers;
