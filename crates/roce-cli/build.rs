//! Start-up link settings on glibc Linux (docs/decisions.md, "(startup-3)"). `roce` and `kubectl-roce` are
//! position-dependent executables: a short command then has no relative relocations to apply, and the 60 KB
//! of `.data.rel.ro` is read from the page cache instead of copied page by page at every start.
//! `roce-webhook`, the long-running network server, stays a PIE, with ASLR for its own code. All three
//! link libgcc's unwinder statically instead of loading `libgcc_s.so.1`.

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
        // Unwind with libgcc's static unwinder, as `gcc -static-libgcc` does, instead of loading
        // libgcc_s.so.1 at every start (its constructor runs `cpuid`, a VM exit on virtual machines).
        // Listed before std's `-lgcc_s`, it defines the `_Unwind_*` symbols first, and `--as-needed`
        // then leaves libgcc_s out. Panics still unwind; backtraces still resolve.
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
