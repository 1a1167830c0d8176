//! `roce-webhook`: the `roce` command line with the admission webhook server linked in. `roce webhook`
//! runs this executable, so the server's dependencies load only where it serves.

fn main() -> std::process::ExitCode {
    roce_cli::webhook_main()
}
