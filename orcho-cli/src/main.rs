//! `orcho`: proven readiness for coding-agent runs, from the command line.
//! Everything it does is in the [`orcho_cli`] library.

fn main() -> std::process::ExitCode {
    orcho_cli::main()
}
