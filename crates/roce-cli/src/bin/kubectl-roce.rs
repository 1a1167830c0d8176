//! `kubectl-roce`: the same program under kubectl's plugin name, so `kubectl roce …` works.

// mimalloc: lint's trees are many small allocations, freed file by file (docs/decisions.md, "(alloc)").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    roce_cli::main()
}
