//! Orcho inside coding agents: the hook documents each agent passes (one
//! module per agent in `agents`), the answers they read back, and what the
//! stop guard keeps.

mod agents;
mod answer;
pub mod fired;
pub mod guard;
mod health;
mod input;
pub mod install;
pub mod session;
pub mod shell;
pub mod stop_guard;
mod stops;

pub use answer::{Answer, Rendered, Verdict};
pub use health::{Health, NeverCalled, SwitchedOff, health};
pub use input::{
    BadDocument, Event, HookDoc, MAX_DOCUMENT_BYTES, normalize, permission_name, relative,
    requests, shell_command,
};
pub use stops::{
    StopGuard, UnprovenStop, acknowledge_stops, note_called, unproven_stops, was_called,
};

/// The timeout, in seconds, written with every hook Orcho installs: an
/// agent lets a tool call through when its hook runs past it, so it is
/// said rather than left to the agent's default, and the hook answers
/// within a fraction of it whatever its input.
pub const HOOK_TIMEOUT_SECS: u64 = 60;

pub use agents::{Agent, Dialect, Kind, Layout, Tool};

/// The settings files (the checkout's and the home's) that switch an
/// agent's hooks off: each agent's name, the file, and how it says so.
pub fn hooks_switched_off(
    checkout: &camino::Utf8Path,
) -> Vec<(&'static str, camino::Utf8PathBuf, &'static str)> {
    let home = std::env::var_os("HOME")
        .and_then(|h| camino::Utf8PathBuf::from_path_buf(h.into()).ok())
        .filter(|h| h.is_absolute());
    let mut out = Vec::new();
    for agent in Agent::ALL {
        let dialect = agent.dialect();
        let project = std::iter::once(dialect.settings)
            .chain(dialect.more_settings.iter().copied())
            .map(|f| checkout.join(f));
        let user = dialect
            .user_settings
            .iter()
            .filter_map(|f| home.as_ref().map(|h| h.join(f)));
        for file in project.chain(user) {
            if file.extension() != Some("json") {
                continue;
            }
            let Some(settings) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            else {
                continue;
            };
            if let Some(how) = (dialect.hooks_off)(&settings) {
                out.push((dialect.title, file, how));
            }
        }
    }
    out
}
