//! `roce`: compile GPUDirect RDMA fabric profiles into Pods, Kustomize components, sbatch scripts,
//! Dockerfile ENV lines and dotenv files, and check them.
//!
//! On glibc Linux the program starts at C's `main`, without std's runtime set-up (`roce_cli::c_main` says
//! what it does instead; docs/decisions.md, "(startup-6)").

// Not in a test harness built from this file (`cargo test --bins`), which needs its own `main`.
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

roce_cli::entry_point!();
