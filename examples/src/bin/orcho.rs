//! `orcho`: the command-line host. See [`orcho_examples::host`].

fn main() -> std::process::ExitCode {
    orcho_examples::host::main()
}
