//! `kubectl-roce`: the same program under kubectl's plugin name, so `kubectl roce …` works. It starts as
//! `roce` does (src/main.rs).

#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // `no_mangle`: this is the symbol the C runtime calls
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    roce_cli::c_main()
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> std::process::ExitCode {
    roce_cli::main()
}
