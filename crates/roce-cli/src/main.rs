//! `roce`: compile GPUDirect RDMA fabric profiles into Pods, Kustomize components, sbatch scripts,
//! Dockerfile ENV lines and dotenv files, and check them.

fn main() -> std::process::ExitCode {
    roce_cli::main()
}
