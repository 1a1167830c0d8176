//! Link `roce` and `kubectl-roce` as position-dependent executables on glibc Linux (docs/decisions.md,
//! "(startup-3)"): a short command then has no relative relocations to apply, and the 60 KB of
//! `.data.rel.ro` is read from the page cache instead of copied page by page at every start. `roce-webhook`,
//! the long-running network server, stays a PIE, with ASLR for its own code.

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // A `+crt-static` build is already free of the dynamic loader (it is a static PIE); leave it alone.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if glibc_linux && !crt_static {
        for bin in ["roce", "kubectl-roce"] {
            println!("cargo::rustc-link-arg-bin={bin}=-no-pie");
        }
    }
    println!("cargo::rerun-if-changed=build.rs");
}
