//! Printing: lines on standard output and error, JSON documents.

use std::io::Write;

use serde::Serialize;

/// A line on standard output. A closed pipe (`orcho inbox | head`) is not
/// an error worth a panic.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// A line on standard error: progress, prompts, diagnostics.
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// `doc` as one line of JSON with its keys sorted.
pub fn json_line(doc: &impl Serialize) -> String {
    // Through a `Value`, whose maps are sorted by key.
    serde_json::to_value(doc)
        .map(|value| value.to_string())
        .unwrap_or_else(|e| {
            serde_json::json!({ "error": format!("cannot encode the output: {e}") }).to_string()
        })
}

/// Prints `doc` on standard output as one line of JSON.
pub(super) fn json(doc: &impl Serialize) {
    out(&json_line(doc));
}
