//! How the agents' hooks stand in a checkout: installed but never called,
//! switched off, and the stops they let through unproven.

use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize;

use crate::Error;

use super::{Agent, UnprovenStop, hooks_switched_off, unproven_stops, was_called};

/// How the agents' hooks stand in a checkout; what `orcho status` warns
/// about.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Health {
    /// Stops an agent's stop hook let through while a required receipt was
    /// not present, oldest first.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub unproven_stops: Vec<UnprovenStop>,
    /// Agents whose hooks the checkout's settings install, but which never
    /// called Orcho here.
    #[serde(skip_serializing_if = "<[_]>::is_empty", rename = "hooks_never_called")]
    pub never_called: Vec<NeverCalled>,
    /// Settings (the project's or the home's) that switch an agent's hooks
    /// off.
    #[serde(skip_serializing_if = "<[_]>::is_empty", rename = "hooks_switched_off")]
    pub switched_off: Vec<SwitchedOff>,
}

/// An agent whose hooks are installed and never called Orcho.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
#[non_exhaustive]
pub struct NeverCalled {
    /// The agent (`claude-code`, `codex`, …).
    pub agent: &'static str,
    /// The settings file that installs them, from the checkout's root.
    #[serde(skip)]
    pub settings: &'static str,
    /// How to have the agent run them.
    #[serde(skip)]
    pub how: &'static str,
}

/// An agent whose hooks a settings file switches off.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
#[non_exhaustive]
pub struct SwitchedOff {
    /// The agent, as people name it.
    pub agent: &'static str,
    /// The file.
    #[serde(skip)]
    pub file: Utf8PathBuf,
    /// How it says so.
    #[serde(skip)]
    pub how: &'static str,
}

/// How the hooks stand in the checkout `checkout` with its store `store`.
///
/// # Errors
///
/// The log of unproven stops cannot be read.
pub fn health(checkout: &Utf8Path, store: &Utf8Path) -> Result<Health, Error> {
    let unproven_stops = unproven_stops(store)?;
    let never_called = Agent::ALL
        .iter()
        .map(|agent| agent.dialect())
        .filter(|dialect| {
            std::fs::read_to_string(checkout.join(dialect.settings))
                .is_ok_and(|text| text.contains(&format!("orcho hook {}", dialect.name)))
                && !was_called(store, dialect.name)
        })
        .map(|dialect| NeverCalled {
            agent: dialect.name,
            settings: dialect.settings,
            how: dialect.once,
        })
        .collect();
    let switched_off = hooks_switched_off(checkout)
        .into_iter()
        .map(|(agent, file, how)| SwitchedOff { agent, file, how })
        .collect();
    Ok(Health {
        unproven_stops,
        never_called,
        switched_off,
    })
}
