//! Start-up link settings (docs/decisions.md, "(startup-3)"). On glibc Linux, `roce` and `kubectl-roce` are
//! position-dependent executables: a short command then has no relative relocations to apply, and the 60 KB
//! of `.data.rel.ro` is read from the page cache instead of copied page by page at every start.
//! `roce-webhook`, the long-running network server, stays a PIE, with ASLR for its own code. All three link
//! libgcc's unwinder statically instead of loading `libgcc_s.so.1`. Where the linker is lld, the functions
//! short commands run (`link-order.txt`, `link-order-static.txt`; written by `bench/link-order`) are placed
//! together.

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // A `+crt-static` build has no dynamic loader and already links gcc_eh: it keeps its static PIE and only
    // gets the link order below.
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
    // rustc links x86_64-unknown-linux-gnu with its own lld unless told otherwise (Rust 1.90); only lld is
    // known to take the option, so any other linker choice goes without it. Names the binary no longer
    // has are skipped.
    let rustflags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = std::env::var_os("RUSTC_LINKER").is_some()
        || ["linker", "link-self-contained", "fuse-ld"]
            .iter()
            .any(|f| rustflags.contains(f));
    // The `+crt-static` build's symbols have other hashes (other flags), so it has a list of its own.
    let list = if crt_static {
        "link-order-static.txt"
    } else {
        "link-order.txt"
    };
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join(list);
    // `-Wl,` splits at commas.
    let usable = order.is_file() && !order.to_string_lossy().contains(',');
    if var("TARGET") == "x86_64-unknown-linux-gnu" && !own_linker && usable {
        for bin in ["roce", "kubectl-roce"] {
            println!(
                "cargo::rustc-link-arg-bin={bin}=-Wl,--symbol-ordering-file={},--no-warn-symbol-ordering",
                order.display()
            );
        }
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=link-order.txt");
    println!("cargo::rerun-if-changed=link-order-static.txt");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
}
