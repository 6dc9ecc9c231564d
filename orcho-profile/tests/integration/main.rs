//! Integration tests of `orcho-profile`: built-ins, the error table,
//! `extends`, hostile inputs and round trips.

mod builtins;
mod errors;
mod extends;
mod hostile;
mod round_trip;
mod warnings;

type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

use orcho_profile::{ProfileError, ProfileWarning};

/// One line per error: where, what, and the suggestion.
fn render(err: &ProfileError) -> String {
    format!(
        "{}:{}:{} [{}] {}{}",
        err.file(),
        err.line().map_or("-".to_owned(), |l| l.to_string()),
        err.column().map_or("-".to_owned(), |c| c.to_string()),
        err.path().map_or("-".to_owned(), ToString::to_string),
        orcho_core::error_chain(err),
        err.suggestion()
            .map(|s| format!(" => suggestion `{s}`"))
            .unwrap_or_default(),
    )
}

fn render_warning(w: &ProfileWarning) -> String {
    format!(
        "{}:{}:{} [{}] {}",
        w.file(),
        w.line().map_or("-".to_owned(), |l| l.to_string()),
        w.column().map_or("-".to_owned(), |c| c.to_string()),
        w.path().map_or("-".to_owned(), ToString::to_string),
        w.kind(),
    )
}
