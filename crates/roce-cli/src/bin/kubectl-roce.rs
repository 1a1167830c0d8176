//! `kubectl-roce`: the same program under kubectl's plugin name, so `kubectl roce …` works. It starts as
//! `roce` does (src/main.rs).

// Not in a test harness built from this file (`cargo test --bins`), which needs its own `main`.
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

roce_cli::entry_point!();
