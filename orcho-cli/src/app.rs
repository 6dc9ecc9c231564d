//! The `orcho` command line from its arguments to its exit code.

use std::process::ExitCode;

use clap::{Parser, error::ErrorKind};

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
    // Every process `orcho` starts goes through the library's `exec`: what
    // a phase leaves behind to this process is the phase's, whatever group
    // it moved to.
    orcho::receipts::exec::claim_every_orphan();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refused_arguments(&e),
    };
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

/// What `clap` refuses, said as the rest of Orcho says a slip: the nearest
/// valid word as `(did you mean `status`?)` on the error's line, where
/// `clap` would add a tip below. Help and the version print as `clap`
/// prints them.
fn refused_arguments(e: &clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
    }
    output::err(did_you_mean(&e.render().to_string()).trim_end());
    ExitCode::from(crate::exit::USAGE)
}

/// `clap`'s message with its `tip: a similar … exists: 'x'` lines turned
/// into `(did you mean `x`?)` on the first line. Of several, the one a slip
/// of the keys most likely made (`sevre`: `serve`, not `store`), as every
/// other "did you mean" of `orcho` chooses.
fn did_you_mean(rendered: &str) -> String {
    let mut near: Vec<String> = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    for line in rendered.lines() {
        let tip = line.trim_start().strip_prefix("tip: ");
        match tip.and_then(|t| t.split_once("exist: ").or_else(|| t.split_once("exists: "))) {
            Some((_, names)) if tip.is_some_and(|t| t.contains("similar")) => {
                near.extend(
                    names
                        .split(", ")
                        .map(|n| format!("`{}`", n.trim().trim_matches('\''))),
                );
                // The blank line clap puts before its tip goes with it.
                if kept.last().is_some_and(|l| l.trim().is_empty()) {
                    kept.pop();
                }
            }
            _ => kept.push(line),
        }
    }
    if near.is_empty() {
        return rendered.to_owned();
    }
    let typed = rendered
        .lines()
        .next()
        .and_then(|first| first.split('\'').nth(1));
    if near.len() > 1
        && let Some(typed) = typed
        && let Some(best) = orcho::core::nearest(typed, near.iter().map(|n| n.trim_matches('`')))
    {
        near = vec![format!("`{best}`")];
    }
    let mut out = String::new();
    for (n, line) in kept.iter().enumerate() {
        out.push_str(line);
        if n == 0 {
            let _ = std::fmt::Write::write_fmt(
                &mut out,
                format_args!(" (did you mean {}?)", near.join(" or ")),
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn clap_tips_read_as_orcho_says_a_slip() {
        let subcommand = "error: unrecognized subcommand 'stauts'\n\n  tip: a similar subcommand exists: 'status'\n\nUsage: orcho [OPTIONS] <COMMAND>\n";
        assert_eq!(
            did_you_mean(subcommand),
            "error: unrecognized subcommand 'stauts' (did you mean `status`?)\n\nUsage: orcho [OPTIONS] <COMMAND>\n"
        );
        let two = "error: unrecognized subcommand 'sevre'\n\n  tip: some similar subcommands exist: 'store', 'serve'\n";
        assert_eq!(
            did_you_mean(two),
            "error: unrecognized subcommand 'sevre' (did you mean `serve`?)\n"
        );
        let flag = "error: unexpected argument '--jsn' found\n\n  tip: a similar argument exists: '--json'\n";
        assert_eq!(
            did_you_mean(flag),
            "error: unexpected argument '--jsn' found (did you mean `--json`?)\n"
        );
        let none = "error: the following required arguments were not provided\n";
        assert_eq!(did_you_mean(none), none);
    }
}
