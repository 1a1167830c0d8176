//! roce-render's integration tests: one binary, one module per topic file (`cargo test -p roce-render --test
//! tests -- render::` runs one topic). One binary links once where one per file linked ten times
//! (docs/decisions.md, "(onebin)"). Not named `main.rs`: proptest looks for its regression files beside the
//! source file only while no directory above it holds a `main.rs` or `lib.rs`.

mod apply;
mod apply_dra;
mod apply_object;
mod dra;
mod exec_wrap;
mod kustomize;
mod render;
mod slurm;
mod sweep;
mod validation;

/// Helpers of several topics (also read by other crates' tests through `#[path]`).
mod support {
    pub(crate) mod consumers;
    pub(crate) mod slurm;
}
