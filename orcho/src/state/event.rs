//! The run's events and what they carry: the journal's domain types (their
//! on-disk form is the store's format module).

use camino::Utf8PathBuf;
use orcho_core::{Cost, Finding, HandoffId, PhaseName, RunId, Verdict};
use orcho_gates::{GateRecord, PhaseOutcome};
use orcho_handoff::{
    DeliveryAction,
    handoff::HandoffTrigger,
    supervision::{Plan, Touchpoint},
};
use serde::Serialize;

use super::PhaseInput;

/// Where a settled phase sends the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transition {
    /// Another attempt of the same phase with this input.
    Retry {
        /// What the attempt receives.
        input: PhaseInput,
    },
    /// On to the next phase (or the end of the run after the last).
    Advance,
    /// Back to an earlier phase of the same round with a gate's failure as
    /// its input (a `feed_into_next` gate whose `feeds` names that phase);
    /// the phases from there on run again.
    Feed {
        /// The phase index to go back to.
        to: usize,
        /// What it receives.
        input: PhaseInput,
        /// The last attempt of each phase in this round so far, by phase
        /// index, so that the attempts that follow are numbered after them.
        attempts: Vec<u32>,
    },
    /// Back to a planning phase with a critique; the round advances.
    Replan {
        /// The phase index to go back to.
        to: usize,
        /// What it receives.
        input: PhaseInput,
    },
    /// Pause at a phase handoff.
    Pause {
        /// Why.
        trigger: PauseTrigger,
        /// The verdict the handoff shows.
        verdict: Verdict,
        /// The findings it shows.
        findings: Vec<Finding>,
    },
    /// Stop the run.
    Halt {
        /// Why.
        reason: String,
    },
    /// Pause at a supervision touchpoint (plan approval after an approved
    /// plan phase).
    Supervise {
        /// What the operator is asked.
        touchpoint: Touchpoint,
    },
}

/// Why a phase paused (the handoff's trigger, in a form the journal keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PauseTrigger {
    /// The verdict and the pause policy.
    Verdict,
    /// A failing gate, after the phase's attempts ran out.
    Gate {
        /// The gate.
        gate: orcho_core::GateName,
    },
    /// The phase pauses after every attempt.
    Always,
}

impl PauseTrigger {
    pub(crate) fn to_handoff(&self) -> HandoffTrigger {
        match self {
            Self::Verdict => HandoffTrigger::Verdict,
            Self::Gate { gate } => HandoffTrigger::Gate(gate.clone()),
            Self::Always => HandoffTrigger::AlwaysPause,
        }
    }
}

/// How a handoff was resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resumption {
    /// Proceed as if the phase had passed.
    Continue,
    /// One extra attempt with the operator's feedback.
    Retry {
        /// The feedback.
        feedback: String,
    },
    /// Proceed with a durable waiver.
    ContinueWithWaiver {
        /// The waiver's reason.
        reason: String,
    },
    /// The run halts.
    Halt,
}

/// How a supervision touchpoint was resolved, in the journal's words (and
/// in the evidence bundle's: `{"action": …}`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Supervised {
    /// The planner's questions were answered: the same attempt runs again
    /// with the answers.
    Answered {
        /// The questions and answers, for the planner's prompt.
        answers: String,
    },
    /// The plan was approved: the run advances.
    PlanApproved {
        /// Optional notes for the executors.
        feedback: Option<String>,
    },
    /// The plan goes back to the planner with feedback (one extra attempt).
    PlanRevised {
        /// What to change.
        feedback: String,
    },
    /// The plan was rejected: the run halts.
    PlanRejected {
        /// The operator's reason, if any.
        feedback: Option<String>,
    },
    /// The failed step runs again with the failure and the guidance (one
    /// extra attempt).
    DeviationRetry {
        /// What the retry receives.
        context: String,
        /// The 1-based number of the step that is retried (0 in journals
        /// written before it was recorded).
        step: u32,
    },
    /// The failure goes back to the planner: the round advances.
    DeviationReplan {
        /// The phase index to go back to.
        to: usize,
        /// What the planner receives.
        failure: String,
    },
    /// The run stops.
    DeviationStopped {
        /// The operator's note, if any.
        note: Option<String>,
    },
}

/// Where a run that delivers works: its retained worktree and the checkout
/// its delivery targets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Workspace {
    /// The checkout the run's changes are delivered to.
    pub target: Utf8PathBuf,
    /// The run's retained git worktree (where phases and gates run).
    pub worktree: Utf8PathBuf,
}

/// What a correction follow-up knows of its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FollowUpOf {
    /// The parent run.
    pub parent: RunId,
    /// This run's generation (1 for a follow-up of an original run).
    pub generation: u32,
    /// What the parent was rejected for, as Markdown.
    pub brief: String,
}

/// The release verdict: what final acceptance said last, with its findings
/// (the reviewer's and the computed receipt gaps).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Release {
    /// The merged verdict.
    pub verdict: Verdict,
    /// What the reviewer (final acceptance's phase) said, before receipt
    /// gaps were merged in.
    pub reviewer: Verdict,
    /// Its findings.
    pub findings: Vec<Finding>,
}

/// One entry of a run's journal.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunEvent {
    /// The run was created.
    Started {
        /// The checkout it works on.
        checkout: Utf8PathBuf,
        /// The plan's name.
        plan: String,
        /// Its phases, in order.
        phases: Vec<PhaseName>,
        /// For a run that delivers: its worktree and target (then
        /// `checkout` is the worktree).
        workspace: Option<Workspace>,
        /// For a correction follow-up: its parent.
        follow_up: Option<FollowUpOf>,
        /// What the run was started to do, if it was told.
        task: Option<String>,
    },
    /// The target checkout had uncommitted changes: the pre-run intake
    /// question is open.
    IntakeOpened,
    /// Pre-run intake decided `halt`: the run never starts.
    IntakeHalted,
    /// The run's worktree exists at `base` (seeded with the intake's patch or
    /// the parent's diff where that applies): phases can run.
    WorkspaceReady {
        /// The commit the worktree started from.
        base: String,
        /// The intake decision taken, if the target was dirty.
        intake: Option<String>,
    },
    /// Required receipts that were missing or stale were re-run before final
    /// acceptance.
    ReceiptsRerun {
        /// The commands re-run.
        commands: Vec<String>,
    },
    /// The host reported a phase attempt's outcome.
    PhaseReported {
        /// The phase.
        phase: PhaseName,
        /// Its attempt.
        attempt: u32,
        /// The round.
        round: u32,
        /// What the phase reported.
        outcome: PhaseOutcome,
        /// What it cost.
        cost: Cost,
        /// The plan a planning phase produced.
        plan: Option<Plan>,
    },
    /// The host stopped a phase attempt to ask the operator (planner
    /// questions, a deviation): no gates run; the attempt is not spent.
    PhaseInterrupted {
        /// The phase.
        phase: PhaseName,
        /// Its attempt.
        attempt: u32,
        /// What the interrupted attempt cost.
        cost: Cost,
        /// What the operator is asked.
        touchpoint: Touchpoint,
    },
    /// One gate of the reported attempt finished.
    GateRecorded {
        /// Its record.
        record: GateRecord,
    },
    /// Final acceptance merged computed receipt gaps into the verdict.
    AcceptanceMerged {
        /// What the reviewer said.
        reviewer: Verdict,
        /// What stands.
        verdict: Verdict,
        /// The unproven required commands (after waivers).
        gaps: Vec<Finding>,
    },
    /// The attempt settled: its gates' effect and verdict decided where the
    /// run goes.
    PhaseSettled {
        /// The gates' effect.
        effect: String,
        /// Where the run goes.
        transition: Transition,
    },
    /// A phase handoff opened.
    HandoffOpened {
        /// Its id.
        handoff: HandoffId,
    },
    /// A decided handoff was resumed.
    HandoffResumed {
        /// Its id.
        handoff: HandoffId,
        /// What was decided.
        resumption: Resumption,
    },
    /// A supervision touchpoint opened.
    TouchpointOpened {
        /// Its id.
        id: HandoffId,
    },
    /// A supervision touchpoint's answers were acted on.
    TouchpointResolved {
        /// Its id.
        id: HandoffId,
        /// What they meant.
        resolution: Supervised,
    },
    /// The run's delivery gate opened.
    DeliveryOpened {
        /// The release verdict the gate shows.
        verdict: Verdict,
    },
    /// The delivery decision was acted on. Terminal.
    Delivered {
        /// What was decided.
        action: DeliveryAction,
        /// What it did, in words.
        detail: String,
    },
    /// A phase attempt the host was running was stopped before it was
    /// reported (Ctrl-C, a signal): the same attempt runs again on resume.
    /// Changes nothing but the record.
    Interrupted {
        /// The phase.
        phase: PhaseName,
        /// Its attempt.
        attempt: u32,
        /// What stopped it, in words (`Ctrl-C`, `SIGTERM`).
        reason: String,
    },
    /// Somebody ended the run where it stood (at a decision point, or
    /// between steps). Terminal.
    Cancelled {
        /// Why, in their words.
        reason: String,
        /// Who cancelled it.
        by: orcho_handoff::decision::DecidedBy,
    },
}

impl RunEvent {
    /// The event's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Started { .. } => "started",
            Self::ReceiptsRerun { .. } => "receipts_rerun",
            Self::PhaseReported { .. } => "phase_reported",
            Self::GateRecorded { .. } => "gate_recorded",
            Self::AcceptanceMerged { .. } => "acceptance_merged",
            Self::PhaseSettled { .. } => "phase_settled",
            Self::HandoffOpened { .. } => "handoff_opened",
            Self::HandoffResumed { .. } => "handoff_resumed",
            Self::IntakeOpened => "intake_opened",
            Self::IntakeHalted => "intake_halted",
            Self::WorkspaceReady { .. } => "workspace_ready",
            Self::PhaseInterrupted { .. } => "phase_interrupted",
            Self::TouchpointOpened { .. } => "touchpoint_opened",
            Self::TouchpointResolved { .. } => "touchpoint_resolved",
            Self::DeliveryOpened { .. } => "delivery_opened",
            Self::Delivered { .. } => "delivered",
            Self::Interrupted { .. } => "interrupted",
            Self::Cancelled { .. } => "cancelled",
        }
    }
}
