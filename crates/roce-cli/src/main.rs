//! `roce`: compile GPUDirect RDMA fabric profiles into Pods, Kustomize components, sbatch scripts,
//! Dockerfile ENV lines and dotenv files, and check them.
//!
//! On glibc Linux the program starts at C's `main`, without std's runtime set-up (`roce_cli::c_main` says
//! what it does instead; docs/decisions.md, "(startup-6)").

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
