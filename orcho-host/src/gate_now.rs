//! What a delivery gate is shown with beside what it recorded, read now:
//! the decision waiting for a resume and who took it, how the run ended,
//! the target's status, the handoffs it was moved past. Every host of this
//! crate shows it (the command line, the web inbox, MCP).

use orcho::{
    Overridden, Store,
    core::{RunId, RunStatus},
    delivery::TargetStatus,
    handoff::DeliveryAction,
};

use crate::error::CliError;

/// What a delivery gate is shown with beside what it recorded: the
/// target's status checked now, and the handoffs the run was moved past.
#[derive(Debug, Default)]
pub struct GateNow {
    /// The decision recorded on the gate, waiting for a resume.
    pub decided: Option<Decided>,
    /// The run has ended: how, in a few words.
    pub ended: Option<String>,
    /// `None` once the run is past its gate (the target no longer matters
    /// to it) or when the target cannot be read (the gate is still worth
    /// showing; deciding says what is wrong).
    pub target: Option<TargetStatus>,
    /// The handoffs the run was moved past with `continue`.
    pub overridden: Vec<Overridden>,
    /// What the run was started to do.
    pub task: Option<String>,
}

impl GateNow {
    /// The gate of `run` as `store` holds it now.
    pub fn read(store: &Store, run: &RunId) -> Result<Self, CliError> {
        let view = store.status(run)?;
        let waits = view.status == RunStatus::AwaitingDelivery;
        let ended = view.status.is_terminal().then(|| match &view.reason {
            Some(reason) => format!("the run is {} ({reason})", view.status),
            None => format!("the run is {}", view.status),
        });
        let decided = if waits {
            store.delivery_decision(run)?.map(|recorded| {
                let decision = recorded.decision();
                Decided {
                    action: decision.payload().action(),
                    by: who_decided(decision),
                    at: decision.decided_at().to_string(),
                }
            })
        } else {
            None
        };
        Ok(Self {
            target: waits.then(|| store.delivery_target(run).ok()).flatten(),
            overridden: store.overridden(run)?,
            decided,
            ended,
            task: view.task,
        })
    }
}

pub use orcho::decide::who_decided;

/// A decision recorded on a delivery gate.
#[derive(Debug, serde::Serialize)]
pub struct Decided {
    /// What was decided.
    pub action: DeliveryAction,
    /// Who decided it, as said to people.
    pub by: String,
    /// When (RFC 3339).
    pub at: String,
}
