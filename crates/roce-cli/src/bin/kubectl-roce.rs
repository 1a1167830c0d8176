//! `kubectl-roce`: the same program under kubectl's plugin name, so `kubectl roce …` works.

fn main() -> std::process::ExitCode {
    roce_cli::main()
}
