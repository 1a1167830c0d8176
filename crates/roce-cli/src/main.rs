//! `roce`: compile GPUDirect RDMA fabric profiles into Pods, Kustomize components, sbatch scripts,
//! Dockerfile ENV lines and dotenv files, and check them.

// mimalloc: lint's trees are many small allocations, freed file by file (docs/decisions.md, "(alloc)").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    roce_cli::main()
}
