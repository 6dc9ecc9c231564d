//! What the CLI prints: text for people, one JSON document for machines
//! (`--json`).
//!
//! A command returns a [`Report`]: its JSON document (a `Serialize` type in
//! `doc`, printed with its keys sorted so that the output is stable to
//! diff) and its text (built in `text`). [`Report::render`] prints one or
//! the other. What a command says while it works (a command's result as it
//! ends, a phase as it settles) goes through the place's progress, which
//! `--json` keeps quiet.

pub mod doc;
mod print;
mod report;
#[cfg(test)]
mod tests;
pub mod text;

pub use print::{err, json_line, out};
pub use report::Report;

/// Prints an error with its causes and a hint: on standard output as one
/// JSON document with `--json`, else on standard error.
pub fn report_error(error: &crate::error::CliError, json: bool) {
    let hint = error.hint();
    if json {
        print::json(&doc::ErrorDoc {
            error: error.message(),
            kind: error.label(),
            hint: hint.as_deref(),
        });
    } else {
        err(&format!("error: {}", error.message()));
        if let Some(hint) = hint {
            err(&format!("hint: {hint}"));
        }
    }
}
