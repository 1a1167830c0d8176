//! roce-model's integration tests: one binary, one module per topic file (`cargo test -p roce-model --test
//! tests -- rules::` runs one topic). One binary links once where one per file linked six times
//! (docs/decisions.md, "(onebin)"). Not named `main.rs`: proptest looks for its regression files beside the
//! source file only while no directory above it holds a `main.rs` or `lib.rs`.

mod api;
mod builtins;
mod diff;
mod nccl_versions;
mod properties;
mod rules;
