//! Orcho inside coding agents: the hook documents each agent passes (one
//! module per agent in `agents`), the answers they read back, and what the
//! stop guard keeps.

mod agents;
mod answer;
mod input;
pub(crate) mod session;
pub(crate) mod shell;
mod stops;

pub(crate) use answer::{Answer, Verdict};
pub(crate) use input::{
    BadDocument, Event, HookDoc, MAX_DOCUMENT_BYTES, normalize, permission_name, relative,
    requests, shell_command,
};
pub(crate) use stops::{
    StopGuard, UnprovenStop, acknowledge_stops, note_called, unproven_stops, was_called,
};

/// The timeout, in seconds, written with every hook Orcho installs: an
/// agent lets a tool call through when its hook runs past it, so it is
/// said rather than left to the agent's default, and the hook answers
/// within a fraction of it whatever its input.
pub(crate) const HOOK_TIMEOUT_SECS: u64 = 60;

pub(crate) use agents::{Agent, Kind, Layout, Tool};
