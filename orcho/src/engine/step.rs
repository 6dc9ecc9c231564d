//! What the engine tells a host to do next.

use orcho_core::{Cost, PhaseName, RunId, RunStatus};
use orcho_gates::PhaseOutcome;
use orcho_handoff::PhaseHandoff;

use crate::{plan::PhaseRole, state::PhaseInput};

/// The next thing a run needs from its host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Step {
    /// Run this phase attempt, then report it with
    /// [`Run::complete_phase`](crate::Run::complete_phase).
    RunPhase(PhaseRequest),
    /// A phase handoff is open: show it, get a decision recorded with
    /// [`Engine::decide`](crate::Engine::decide), then
    /// [`Run::resume`](crate::Run::resume).
    DecideHandoff(PhaseHandoff),
    /// The run has ended.
    Finished {
        /// Its final status.
        status: RunStatus,
        /// Why.
        reason: String,
    },
}

/// One phase attempt for the host to run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhaseRequest {
    /// The run.
    pub run: RunId,
    /// The phase.
    pub phase: PhaseName,
    /// Its role.
    pub role: PhaseRole,
    /// The attempt (1-based; counts retries granted by decisions too).
    pub attempt: u32,
    /// The round (1-based; a replan advances it).
    pub round: u32,
    /// What the attempt receives: fed-in failures, critique, feedback,
    /// waivers, and for final acceptance the readiness summary.
    pub input: PhaseInput,
}

/// What the host reports after running a phase attempt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhaseReport {
    /// The verdict, findings and summary.
    pub outcome: PhaseOutcome,
    /// What the attempt cost.
    pub cost: Cost,
}

impl PhaseReport {
    /// A report of `outcome` with no cost.
    pub fn new(outcome: PhaseOutcome) -> Self {
        Self {
            outcome,
            cost: Cost::default(),
        }
    }

    /// Sets the cost.
    #[must_use]
    pub fn with_cost(mut self, cost: Cost) -> Self {
        self.cost = cost;
        self
    }
}
