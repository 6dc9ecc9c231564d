//! The status of a run, as hosts and the inbox see it.

use serde::{Deserialize, Serialize};

/// Where a run stands.
///
/// The `Awaiting*` statuses are typed pauses: the run waits for a decision
/// and [`is_awaiting_decision`](Self::is_awaiting_decision) is true.
/// `Halted`, `Completed`, `Failed` and `Cancelled` are terminal.
///
/// ```
/// use orcho_core::RunStatus;
///
/// let status: RunStatus = "awaiting_phase_handoff".parse()?;
/// assert!(status.is_awaiting_decision());
/// assert!(!status.is_terminal());
/// assert!(RunStatus::Halted.is_terminal());
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(
    clippy::exhaustive_enums,
    reason = "hosts render every status; a new status is a breaking change on purpose"
)]
pub enum RunStatus {
    /// Created, not started.
    Created,
    /// A phase or its gates are running.
    Running,
    /// The checkout had uncommitted changes before the run; waiting for the
    /// intake decision (include, exclude, commit, halt).
    AwaitingIntake,
    /// The planner asked questions; waiting for the answers.
    AwaitingQuestions,
    /// A plan waits for approval before execution.
    AwaitingPlanApproval,
    /// A step failed; waiting for retry, replan or stop.
    AwaitingDeviation,
    /// A phase handoff is open; waiting for a decision, then a resume.
    AwaitingPhaseHandoff,
    /// The run reached a release state; waiting for the delivery decision.
    AwaitingDelivery,
    /// Stopped by a halting gate or a `halt` decision. Terminal.
    Halted,
    /// Finished. Terminal.
    Completed,
    /// Ended by an error it could not recover from. Terminal.
    Failed,
    /// Cancelled, for example by a rejected plan. Terminal.
    Cancelled,
}

crate::spelled!(RunStatus as "run status" {
    Created => "created",
    Running => "running",
    AwaitingIntake => "awaiting_intake",
    AwaitingQuestions => "awaiting_questions",
    AwaitingPlanApproval => "awaiting_plan_approval",
    AwaitingDeviation => "awaiting_deviation",
    AwaitingPhaseHandoff => "awaiting_phase_handoff",
    AwaitingDelivery => "awaiting_delivery",
    Halted => "halted",
    Completed => "completed",
    Failed => "failed",
    Cancelled => "cancelled",
});

impl RunStatus {
    /// Whether the run can never move again.
    pub fn is_terminal(self) -> bool {
        match self {
            Self::Halted | Self::Completed | Self::Failed | Self::Cancelled => true,
            Self::Created
            | Self::Running
            | Self::AwaitingIntake
            | Self::AwaitingQuestions
            | Self::AwaitingPlanApproval
            | Self::AwaitingDeviation
            | Self::AwaitingPhaseHandoff
            | Self::AwaitingDelivery => false,
        }
    }

    /// Whether the run is paused at a typed decision point.
    pub fn is_awaiting_decision(self) -> bool {
        match self {
            Self::AwaitingIntake
            | Self::AwaitingQuestions
            | Self::AwaitingPlanApproval
            | Self::AwaitingDeviation
            | Self::AwaitingPhaseHandoff
            | Self::AwaitingDelivery => true,
            Self::Created
            | Self::Running
            | Self::Halted
            | Self::Completed
            | Self::Failed
            | Self::Cancelled => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_and_is_classified_once() {
        for &status in RunStatus::ALL {
            assert_eq!(status.as_str().parse::<RunStatus>().unwrap(), status);
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
            assert!(
                !(status.is_terminal() && status.is_awaiting_decision()),
                "{status} is both terminal and awaiting"
            );
        }
        assert!("paused".parse::<RunStatus>().is_err());
    }
}
