//! `orcho`: a command-line host on top of the Orcho library.
//!
//! It needs no LLM: phases run shell commands given on the command line
//! (argv split on whitespace, never a shell), verification commands come
//! from the profile's contract, and decisions are taken at a terminal
//! prompt, by the profile's defaults, or later with `orcho handoff decide`,
//! `orcho delivery decide` and `orcho plan …`.
//!
//! Exit codes: 0 success; 1 error; 2 usage; 3 not ready (a required
//! receipt is not present, or a verification command failed); 4 paused
//! awaiting a decision; 5 the run halted; 6 a different decision was
//! recorded first.

mod args;
mod drive;
mod leftover;
pub mod mcp;
mod show;

use std::process::ExitCode;

use clap::Parser;

use args::Cli;

/// What a command ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Ok,
    NotReady,
    Paused,
    Halted,
}

/// Exit codes that scripts can rely on.
pub(crate) mod code {
    pub(crate) const ERROR: u8 = 1;
    pub(crate) const NOT_READY: u8 = 3;
    pub(crate) const PAUSED: u8 = 4;
    pub(crate) const HALTED: u8 = 5;
    pub(crate) const CONFLICT: u8 = 6;
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs the `orcho` command line: parses the arguments, runs the command,
/// and returns the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return report_error(&e.into(), json),
    };
    match runtime.block_on(args::dispatch(cli)) {
        Ok(Exit::Ok) => ExitCode::SUCCESS,
        Ok(Exit::NotReady) => ExitCode::from(code::NOT_READY),
        Ok(Exit::Paused) => ExitCode::from(code::PAUSED),
        Ok(Exit::Halted) => ExitCode::from(code::HALTED),
        Err(e) => report_error(&e, json),
    }
}

/// Prints an error with its cause chain and a hint, and picks the exit
/// code.
fn report_error(error: &BoxError, json: bool) -> ExitCode {
    let chain = orcho::core::error_chain(error.as_ref());
    let engine = error.downcast_ref::<orcho::EngineError>();
    let conflict = engine.is_some_and(orcho::EngineError::is_conflict);
    let hint = hint(error.as_ref());
    if json {
        let doc = serde_json::json!({
            "error": chain,
            "kind": if conflict { "conflict" } else { "error" },
            "hint": hint,
        });
        show::out(&doc.to_string());
    } else {
        show::err(&format!("error: {chain}"));
        if let Some(hint) = hint {
            show::err(&format!("hint: {hint}"));
        }
    }
    ExitCode::from(if conflict {
        code::CONFLICT
    } else {
        code::ERROR
    })
}

fn hint(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(e) = error.downcast_ref::<orcho::EngineError>() {
        if e.is_busy() {
            return Some("another process is driving this run; wait for it to stop".to_owned());
        }
        if e.is_unknown_run() {
            return Some("`orcho inbox` lists the runs waiting for a decision".to_owned());
        }
        if e.is_conflict() {
            return Some(
                "a decision is recorded once; `orcho handoff show` / `orcho delivery show` shows it"
                    .to_owned(),
            );
        }
        if e.is_awaiting_decision() {
            return Some(
                "decide it first (`orcho handoff decide`, `orcho delivery decide`, `orcho plan …`), then `orcho resume`"
                    .to_owned(),
            );
        }
        if e.is_terminal() {
            return Some("the run has ended; start a new one with `orcho run`".to_owned());
        }
        if matches!(e.kind(), orcho::EngineErrorKind::NoAdvisor) {
            return Some(
                "the CLI has no LLM advisor; embed Orcho in a host with one, or decide yourself"
                    .to_owned(),
            );
        }
    }
    if error
        .downcast_ref::<orcho::profile::ProfileError>()
        .is_some()
    {
        return Some(
            "`--profile` takes a YAML file or `builtin:default`, `builtin:quick`, `builtin:read_only_review`"
                .to_owned(),
        );
    }
    None
}
