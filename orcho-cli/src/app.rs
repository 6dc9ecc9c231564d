//! The `orcho` command line from its arguments to its exit code.

use std::process::ExitCode;

use clap::Parser;

use crate::{cli, commands, error::CliError, output};

/// Runs the `orcho` command line: parses the arguments, runs the command,
/// prints what went wrong if it failed, and returns the exit code.
pub fn main() -> ExitCode {
    // Before anything else (threads, a runtime): the keys out of this
    // process's environment and memory's reach (this may execute the
    // program again, without them).
    let secrets = match orcho::receipts::exec::take_host_secrets() {
        Ok(secrets) => secrets,
        Err(e @ orcho::receipts::exec::SecretsError::Reexec(_)) => {
            // The keys stay in the environment; the process is still not
            // dumpable, so only root reads it.
            output::err(&format!("warning: {}", orcho::core::error_chain(&e)));
            orcho::receipts::exec::HostSecrets::from_environment().unwrap_or_default()
        }
        Err(e) => {
            output::err(&format!("error: {}", orcho::core::error_chain(&e)));
            return ExitCode::from(crate::exit::ERROR);
        }
    };
    crate::key::set_host_secrets(secrets);
    crate::notifying::set_binary();
    let cli = cli::Cli::parse();
    let json = cli.json;
    let result = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::from)
        .and_then(|runtime| runtime.block_on(commands::dispatch(cli)));
    match result {
        Ok(exit) => exit.into(),
        Err(e) => {
            output::report_error(&e, json);
            ExitCode::from(e.exit_code())
        }
    }
}
