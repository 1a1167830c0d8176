//! `kubectl-roce`: the same program under kubectl's plugin name, so `kubectl roce …` works. It starts as
//! `roce` does (src/main.rs).

#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]

roce_cli::entry_point!();
