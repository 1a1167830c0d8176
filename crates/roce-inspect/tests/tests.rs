//! roce-inspect's integration tests: one binary, one module per topic file (`cargo test -p roce-inspect
//! --test tests -- lint::` runs one topic). One binary links once where one per file linked sixteen times
//! (docs/decisions.md, "(onebin)"). Not named `main.rs`: proptest looks for its regression files beside the
//! source file only while no directory above it holds a `main.rs` or `lib.rs`.

mod consistency;
mod consistency_mutations;
mod corpus;
mod doctor;
mod exec;
mod explain;
mod explain_corpus;
mod explain_invariants;
mod kueue_dra;
mod lint;
mod lint_dra;
mod requirements;
mod slurm_sweep;
mod sweep;
mod sweep_consumers;
mod ucx_perftest;

/// Helpers of several topics.
mod support;
