//! The `orcho` command line, built inside the benchmark package so that its
//! benchmarks can time it as a whole process (`CARGO_BIN_EXE_…`).

fn main() -> std::process::ExitCode {
    orcho_cli::main()
}
