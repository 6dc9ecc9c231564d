//! `orcho`: a command-line host on top of the Orcho library, and its MCP
//! server.
//!
//! It needs no LLM: phases run shell commands given on the command line
//! (argv split on whitespace, never a shell), verification commands come
//! from the profile's contract, and decisions are taken at a terminal
//! prompt, by the profile's defaults, or later with `orcho handoff decide`,
//! `orcho delivery decide` and `orcho plan …`. `orcho mcp` serves the same
//! decision points as MCP tools ([`OrchoMcp`]).
//!
//! The exit codes scripts can rely on are in [`exit`]; a failed command
//! ends with the code its [`CliError`] carries.
//!
//! The crate is laid out by what a command does: `cli` parses the
//! arguments, `commands` holds one module per command, `host` keeps what the
//! CLI needs with each run (its profile and phase commands, as the run's
//! host metadata), `phase` runs a phase's command, `prompt` asks at a
//! terminal, and `output` holds every document printed with `--json` as a
//! `Serialize` type.

mod cli;
mod commands;
mod error;
pub mod exit;
mod host;
mod mcp;
mod output;
mod phase;
mod place;
mod prompt;

use std::process::ExitCode;

use clap::Parser;

pub use error::CliError;
pub use mcp::OrchoMcp;

/// Runs the `orcho` command line: parses the arguments, runs the command,
/// prints what went wrong if it failed, and returns the exit code.
pub fn main() -> ExitCode {
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
            report(&e, json);
            ExitCode::from(e.code())
        }
    }
}

/// Prints an error with its causes and a hint: on standard output as one
/// JSON document with `--json`, else on standard error.
fn report(error: &CliError, json: bool) {
    if json {
        output::json(&output::doc::ErrorDoc {
            error: error.message(),
            kind: error.kind(),
            hint: error.hint(),
        });
    } else {
        output::err(&format!("error: {}", error.message()));
        if let Some(hint) = error.hint() {
            output::err(&format!("hint: {hint}"));
        }
    }
}
