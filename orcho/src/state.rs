//! The run's state machine: events, transitions, and the pure functions that
//! apply them.
//!
//! The engine never mutates a run in place. It decides an event, appends it
//! to the run's journal (durably), then applies it with [`RunState::apply`],
//! a pure function, and writes the new snapshot. Replaying the journal from
//! the start gives the same state, which is how a new process picks up a run
//! whose previous process died at any line.

use camino::Utf8PathBuf;
use orcho_core::{Cost, Finding, HandoffId, PhaseName, RunId, RunStatus, Verdict};
use orcho_gates::{GateFailure, GateRecord, PhaseEffect, PhaseOutcome};
use orcho_handoff::{DeliveryAction, HandoffTrigger, supervision::Touchpoint};
use serde::{Deserialize, Serialize};

use crate::plan::{ExhaustedPolicy, PausePolicy, RunPlan};

/// What the next attempt of a phase receives besides the task: failures fed
/// in by gates, a replan critique, the previous attempt's findings, operator
/// feedback, waivers, and (for final acceptance) the readiness summary.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PhaseInput {
    /// Gate failures of the previous attempt with `feed_into_next`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fed_failures: Vec<GateFailure>,
    /// The critique that triggered a replan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critique: Vec<GateFailure>,
    /// Findings of the previous attempt's rejected or incomplete verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The operator's `retry_feedback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Reasons of `continue_with_waiver` decisions in force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<String>,
    /// For final acceptance: the readiness summary built from receipts, as
    /// Markdown for a reviewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<String>,
    /// The operator's answers to the planner's questions, as plain text for
    /// the planner's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
    /// For a correction follow-up: what the parent run was rejected for, as
    /// Markdown (every phase of the follow-up receives it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<String>,
}

impl PhaseInput {
    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Where a settled phase sends the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Transition {
    /// Another attempt of the same phase with this input.
    Retry {
        /// What the attempt receives.
        input: PhaseInput,
    },
    /// On to the next phase (or the end of the run after the last).
    Advance,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
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

/// How a supervision touchpoint was resolved, in the journal's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    /// The failed step runs again with the failure and the guidance (one
    /// extra attempt).
    DeviationRetry {
        /// What the retry receives.
        context: String,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// Where a run that delivers works: its retained worktree and the checkout
/// its delivery targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Workspace {
    /// The checkout the run's changes are delivered to.
    pub target: Utf8PathBuf,
    /// The run's retained git worktree (where phases and gates run).
    pub worktree: Utf8PathBuf,
}

/// What a correction follow-up knows of its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Release {
    /// The merged verdict.
    pub verdict: Verdict,
    /// Its findings.
    pub findings: Vec<Finding>,
}

/// One entry of a run's journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workspace: Option<Workspace>,
        /// For a correction follow-up: its parent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        follow_up: Option<FollowUpOf>,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan: Option<orcho_handoff::supervision::Plan>,
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
}

/// A phase attempt that was reported and whose gates are running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InFlight {
    /// What the host reported.
    pub outcome: PhaseOutcome,
    /// Its cost.
    pub cost: Cost,
    /// The gates recorded so far.
    pub records: Vec<GateRecord>,
    /// The merged acceptance, for final acceptance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<(Verdict, Vec<Finding>)>,
    /// The plan a planning phase reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<orcho_handoff::supervision::Plan>,
}

/// A run's state, rebuilt from its journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RunState {
    /// The run.
    pub run: RunId,
    /// The checkout.
    pub checkout: Utf8PathBuf,
    /// The plan's name.
    pub plan: String,
    /// The phases, in order.
    pub phases: Vec<PhaseName>,
    /// Where it stands.
    pub status: RunStatus,
    /// Why it ended, once terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The number of events applied.
    pub seq: u64,
    /// The current phase (an index into `phases`).
    pub phase: usize,
    /// The current attempt of the phase (1-based).
    pub attempt: u32,
    /// The current round (1-based; a replan advances it).
    pub round: u32,
    /// Extra attempts granted by `retry_feedback` decisions for the current
    /// phase.
    pub extra_attempts: u32,
    /// What the next attempt receives.
    pub input: PhaseInput,
    /// The attempt whose gates are running, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlight>,
    /// The open handoff, if paused at one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandoffId>,
    /// The pause waiting for its handoff to be opened (set between the
    /// settle and the open, so a crash in between reopens the same pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_pause: Option<Transition>,
    /// The (phase, round, attempt) whose receipts were re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipts_rerun_at: Option<(usize, u32, u32)>,
    /// Reasons of waivers granted so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<String>,
    /// How many handoffs the run has opened.
    pub handoffs_opened: u32,
    /// What the run has cost so far (phases and gates).
    pub cost: Cost,
    /// For a run that delivers: its worktree and target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Workspace>,
    /// The commit the worktree started from, once ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// For a correction follow-up: its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<FollowUpOf>,
    /// The open supervision touchpoint, if paused at one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touchpoint: Option<HandoffId>,
    /// The touchpoint waiting to be opened (set between the event that asks
    /// and the open, so a crash in between reopens the same question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_touchpoint: Option<Touchpoint>,
    /// How many touchpoints the run has opened.
    #[serde(default)]
    pub touchpoints_opened: u32,
    /// Deviation retries granted so far.
    #[serde(default)]
    pub deviation_retries: u32,
    /// Deviation replans granted so far.
    #[serde(default)]
    pub deviation_replans: u32,
    /// The latest release verdict of final acceptance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
    /// Whether the delivery gate is open.
    #[serde(default)]
    pub delivery_opened: bool,
}

/// An event that does not fit the state (a bug or a damaged journal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event `{event}` cannot apply to a run that is `{status}` (event {seq})")]
pub struct TransitionError {
    event: &'static str,
    status: RunStatus,
    seq: u64,
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
        }
    }
}

impl RunState {
    /// The state of a run created with `started` (which must be
    /// [`RunEvent::Started`]).
    ///
    /// # Errors
    ///
    /// A [`TransitionError`] for any other event.
    pub fn new(run: RunId, started: &RunEvent) -> Result<Self, TransitionError> {
        let RunEvent::Started {
            checkout,
            plan,
            phases,
            workspace,
            follow_up,
        } = started
        else {
            return Err(TransitionError {
                event: started.name(),
                status: RunStatus::Created,
                seq: 0,
            });
        };
        Ok(Self {
            run,
            checkout: checkout.clone(),
            plan: plan.clone(),
            phases: phases.clone(),
            status: if workspace.is_some() {
                RunStatus::Created
            } else if phases.is_empty() {
                RunStatus::Completed
            } else {
                RunStatus::Running
            },
            reason: (phases.is_empty() && workspace.is_none())
                .then(|| "the plan has no phases".to_owned()),
            seq: 1,
            phase: 0,
            attempt: 1,
            round: 1,
            extra_attempts: 0,
            input: PhaseInput::default(),
            in_flight: None,
            handoff: None,
            pending_pause: None,
            receipts_rerun_at: None,
            waivers: Vec::new(),
            handoffs_opened: 0,
            cost: Cost::default(),
            workspace: workspace.clone(),
            base: None,
            follow_up: follow_up.clone(),
            touchpoint: None,
            pending_touchpoint: None,
            touchpoints_opened: 0,
            deviation_retries: 0,
            deviation_replans: 0,
            release: None,
            delivery_opened: false,
        })
    }

    /// The current phase's name, if the run is not past its last phase.
    pub fn current_phase(&self) -> Option<&PhaseName> {
        self.phases.get(self.phase)
    }

    /// Applies one event: a pure, consuming transition.
    ///
    /// # Errors
    ///
    /// A [`TransitionError`] when the event does not fit the state; the state
    /// is then unchanged (it was consumed; the caller keeps its copy).
    pub fn apply(mut self, event: &RunEvent) -> Result<Self, TransitionError> {
        let refuse = |s: &Self| TransitionError {
            event: event.name(),
            status: s.status,
            seq: s.seq + 1,
        };
        match event {
            RunEvent::Started { .. } => return Err(refuse(&self)),
            RunEvent::ReceiptsRerun { .. } => {
                if self.status != RunStatus::Running {
                    return Err(refuse(&self));
                }
                self.receipts_rerun_at = Some((self.phase, self.round, self.attempt));
            }
            RunEvent::PhaseReported {
                outcome,
                cost,
                plan,
                ..
            } => {
                if self.status != RunStatus::Running
                    || self.in_flight.is_some()
                    || self.pending_pause.is_some()
                {
                    return Err(refuse(&self));
                }
                self.in_flight = Some(InFlight {
                    outcome: outcome.clone(),
                    cost: *cost,
                    records: Vec::new(),
                    acceptance: None,
                    plan: plan.clone(),
                });
            }
            RunEvent::PhaseInterrupted {
                cost, touchpoint, ..
            } => {
                if self.status != RunStatus::Running || self.in_flight.is_some() {
                    return Err(refuse(&self));
                }
                self.cost += *cost;
                self.supervise(touchpoint);
            }
            RunEvent::IntakeOpened => {
                if self.status != RunStatus::Created {
                    return Err(refuse(&self));
                }
                self.status = RunStatus::AwaitingIntake;
            }
            RunEvent::IntakeHalted => {
                if !matches!(self.status, RunStatus::Created | RunStatus::AwaitingIntake) {
                    return Err(refuse(&self));
                }
                self.status = RunStatus::Halted;
                self.reason = Some("pre-run intake decided halt".to_owned());
            }
            RunEvent::WorkspaceReady { base, .. } => {
                if !matches!(self.status, RunStatus::Created | RunStatus::AwaitingIntake) {
                    return Err(refuse(&self));
                }
                self.base = Some(base.clone());
                if self.phases.is_empty() {
                    self.status = RunStatus::AwaitingDelivery;
                } else {
                    self.status = RunStatus::Running;
                }
            }
            RunEvent::TouchpointOpened { id } => {
                if self.pending_touchpoint.is_none() || self.touchpoint.is_some() {
                    return Err(refuse(&self));
                }
                self.pending_touchpoint = None;
                self.touchpoint = Some(id.clone());
                self.touchpoints_opened += 1;
            }
            RunEvent::TouchpointResolved { id, resolution } => {
                if self.touchpoint.as_ref() != Some(id) {
                    return Err(refuse(&self));
                }
                self.touchpoint = None;
                self.status = RunStatus::Running;
                self.resolve(resolution);
            }
            RunEvent::DeliveryOpened { .. } => {
                if self.status != RunStatus::AwaitingDelivery || self.delivery_opened {
                    return Err(refuse(&self));
                }
                self.delivery_opened = true;
            }
            RunEvent::Delivered { action, detail } => {
                if self.status != RunStatus::AwaitingDelivery || !self.delivery_opened {
                    return Err(refuse(&self));
                }
                self.status = if *action == DeliveryAction::Halt {
                    RunStatus::Halted
                } else {
                    RunStatus::Completed
                };
                self.reason = Some(detail.clone());
            }
            RunEvent::GateRecorded { record } => match &mut self.in_flight {
                Some(flight) => flight.records.push(record.clone()),
                None => return Err(refuse(&self)),
            },
            RunEvent::AcceptanceMerged { verdict, gaps, .. } => match &mut self.in_flight {
                Some(flight) => {
                    flight.acceptance = Some((*verdict, gaps.clone()));
                    self.release = Some(Release {
                        verdict: *verdict,
                        findings: flight
                            .outcome
                            .findings
                            .iter()
                            .chain(gaps)
                            .cloned()
                            .collect(),
                    });
                }
                None => return Err(refuse(&self)),
            },
            RunEvent::PhaseSettled { transition, .. } => {
                let Some(flight) = self.in_flight.take() else {
                    return Err(refuse(&self));
                };
                let gate_cost: Cost = flight.records.iter().map(|r| r.result.cost()).sum();
                self.cost += flight.cost + gate_cost;
                self.follow(transition);
            }
            RunEvent::HandoffOpened { handoff } => {
                if self.status != RunStatus::AwaitingPhaseHandoff || self.handoff.is_some() {
                    return Err(refuse(&self));
                }
                self.pending_pause = None;
                self.handoff = Some(handoff.clone());
                self.handoffs_opened += 1;
            }
            RunEvent::HandoffResumed {
                handoff,
                resumption,
            } => {
                if self.status != RunStatus::AwaitingPhaseHandoff
                    || self.handoff.as_ref() != Some(handoff)
                {
                    return Err(refuse(&self));
                }
                self.handoff = None;
                self.status = RunStatus::Running;
                match resumption {
                    Resumption::Continue => self.advance(),
                    Resumption::Retry { feedback } => self.extra_attempt(feedback),
                    Resumption::ContinueWithWaiver { reason } => {
                        self.waivers.push(reason.clone());
                        self.advance();
                    }
                    Resumption::Halt => {
                        self.status = RunStatus::Halted;
                        self.reason =
                            Some(format!("halted by the decision on handoff `{handoff}`"));
                    }
                }
            }
        }
        self.seq += 1;
        Ok(self)
    }

    fn advance(&mut self) {
        self.phase += 1;
        self.attempt = 1;
        self.extra_attempts = 0;
        self.input = PhaseInput {
            waivers: self.waivers.clone(),
            ..PhaseInput::default()
        };
        if self.phase >= self.phases.len() {
            if self.workspace.is_some() {
                self.status = RunStatus::AwaitingDelivery;
            } else {
                self.status = RunStatus::Completed;
                self.reason = Some("every phase passed".to_owned());
            }
        }
    }

    /// Pauses at a touchpoint that is yet to be opened.
    fn supervise(&mut self, touchpoint: &Touchpoint) {
        self.status = match touchpoint {
            Touchpoint::PlannerQuestions { .. } => RunStatus::AwaitingQuestions,
            Touchpoint::PlanApproval { .. } => RunStatus::AwaitingPlanApproval,
            _ => RunStatus::AwaitingDeviation,
        };
        self.pending_touchpoint = Some(touchpoint.clone());
    }

    /// An extra attempt of the current phase, with `feedback`.
    fn extra_attempt(&mut self, feedback: &str) {
        self.extra_attempts += 1;
        self.attempt += 1;
        self.input = PhaseInput {
            feedback: Some(feedback.to_owned()),
            waivers: self.waivers.clone(),
            ..PhaseInput::default()
        };
    }

    fn resolve(&mut self, resolution: &Supervised) {
        match resolution {
            Supervised::Answered { answers } => self.input.answers = Some(answers.clone()),
            Supervised::PlanApproved { feedback } => {
                self.advance();
                self.input.feedback.clone_from(feedback);
            }
            Supervised::PlanRevised { feedback } => self.extra_attempt(feedback),
            Supervised::PlanRejected { feedback } => {
                self.status = RunStatus::Halted;
                self.reason = Some(match feedback {
                    Some(f) => format!("the plan was rejected: {f}"),
                    None => "the plan was rejected".to_owned(),
                });
            }
            Supervised::DeviationRetry { context } => {
                self.deviation_retries += 1;
                self.extra_attempt(context);
            }
            Supervised::DeviationReplan { to, failure } => {
                self.deviation_replans += 1;
                self.round += 1;
                self.phase = *to;
                self.attempt = 1;
                self.extra_attempts = 0;
                self.input = PhaseInput {
                    feedback: Some(failure.clone()),
                    waivers: self.waivers.clone(),
                    ..PhaseInput::default()
                };
            }
            Supervised::DeviationStopped { note } => {
                self.status = RunStatus::Halted;
                self.reason = Some(match note {
                    Some(n) => format!("stopped after a deviation: {n}"),
                    None => "stopped after a deviation".to_owned(),
                });
            }
        }
    }

    fn follow(&mut self, transition: &Transition) {
        match transition {
            Transition::Retry { input } => {
                self.attempt += 1;
                self.input = input.clone();
            }
            Transition::Advance => self.advance(),
            Transition::Replan { to, input } => {
                self.round += 1;
                self.phase = *to;
                self.attempt = 1;
                self.extra_attempts = 0;
                self.input = input.clone();
            }
            Transition::Pause { .. } => {
                self.status = RunStatus::AwaitingPhaseHandoff;
                self.pending_pause = Some(transition.clone());
            }
            Transition::Halt { reason } => {
                self.status = RunStatus::Halted;
                self.reason = Some(reason.clone());
            }
            Transition::Supervise { touchpoint } => self.supervise(touchpoint),
        }
    }
}

/// Where an attempt goes, from the gates' effect and the (merged) verdict:
/// the engine's one decision, a pure function of the plan and the state.
pub(crate) fn settle(
    plan: &RunPlan,
    state: &RunState,
    verdict: Verdict,
    findings: &[Finding],
    effect: &PhaseEffect,
) -> Transition {
    let Some(phase) = plan.phases.get(state.phase) else {
        return Transition::Halt {
            reason: format!("the run is past its last phase (phase {})", state.phase + 1),
        };
    };
    let attempts_left = state.attempt < phase.max_attempts.saturating_add(state.extra_attempts);
    let with_waivers = |input: PhaseInput| PhaseInput {
        waivers: state.waivers.clone(),
        ..input
    };
    let exhausted = |trigger: PauseTrigger,
                     verdict: Verdict,
                     findings: Vec<Finding>,
                     what: &str| match phase.on_exhausted {
        ExhaustedPolicy::Halt => Transition::Halt {
            reason: format!("phase `{}` {what}", phase.name),
        },
        ExhaustedPolicy::Pause => Transition::Pause {
            trigger,
            verdict,
            findings,
        },
    };
    match effect {
        PhaseEffect::Halt { failure } => Transition::Halt {
            reason: format!("halted by gate `{}`", failure.gate),
        },
        PhaseEffect::Replan { critique } => {
            if state.round < phase.max_rounds {
                Transition::Replan {
                    to: plan.replan_target(state.phase),
                    input: with_waivers(PhaseInput {
                        critique: critique.clone(),
                        ..PhaseInput::default()
                    }),
                }
            } else {
                let gate = critique.first().map(|f| f.gate.clone());
                let findings = critique
                    .iter()
                    .flat_map(|f| f.findings.iter().cloned())
                    .collect();
                let trigger =
                    gate.map_or(PauseTrigger::Verdict, |gate| PauseTrigger::Gate { gate });
                exhausted(
                    trigger,
                    Verdict::Rejected,
                    findings,
                    "used all its replan rounds",
                )
            }
        }
        PhaseEffect::FeedIntoNext { failures } => {
            if attempts_left {
                Transition::Retry {
                    input: with_waivers(PhaseInput {
                        fed_failures: failures.clone(),
                        findings: not_approved(verdict, findings),
                        ..PhaseInput::default()
                    }),
                }
            } else {
                let findings = failures
                    .iter()
                    .flat_map(|f| f.findings.iter().cloned())
                    .chain(findings.iter().cloned())
                    .collect();
                let trigger =
                    failures
                        .first()
                        .map_or(PauseTrigger::Verdict, |f| PauseTrigger::Gate {
                            gate: f.gate.clone(),
                        });
                if phase.pause == PausePolicy::Never {
                    exhausted(
                        trigger,
                        Verdict::Rejected,
                        findings,
                        "used all its attempts with failing gates",
                    )
                } else {
                    Transition::Pause {
                        trigger,
                        verdict: Verdict::Rejected,
                        findings,
                    }
                }
            }
        }
        PhaseEffect::Continue => match verdict {
            Verdict::Approved if phase.pause == PausePolicy::Always => Transition::Pause {
                trigger: PauseTrigger::Always,
                verdict,
                findings: findings.to_vec(),
            },
            Verdict::Approved => Transition::Advance,
            Verdict::Rejected | Verdict::Incomplete => {
                if attempts_left {
                    Transition::Retry {
                        input: with_waivers(PhaseInput {
                            findings: findings.to_vec(),
                            ..PhaseInput::default()
                        }),
                    }
                } else if phase.pause == PausePolicy::Never {
                    exhausted(
                        PauseTrigger::Verdict,
                        verdict,
                        findings.to_vec(),
                        &format!("ended {verdict} after its last attempt"),
                    )
                } else {
                    Transition::Pause {
                        trigger: PauseTrigger::Verdict,
                        verdict,
                        findings: findings.to_vec(),
                    }
                }
            }
        },
        other => Transition::Halt {
            reason: format!(
                "the gates' effect `{}` is not one this engine knows",
                other.as_str()
            ),
        },
    }
}

fn not_approved(verdict: Verdict, findings: &[Finding]) -> Vec<Finding> {
    if verdict == Verdict::Approved {
        Vec::new()
    } else {
        findings.to_vec()
    }
}

impl RunEvent {
    /// One readable line for traces: what happened, without timestamps or
    /// run ids, so that two runs of the same scenario trace the same.
    pub fn trace_line(&self) -> String {
        match self {
            Self::Started {
                plan,
                phases,
                follow_up: Some(of),
                ..
            } => {
                let phases: Vec<&str> = phases.iter().map(PhaseName::as_str).collect();
                format!(
                    "started plan `{plan}` with phases {} (follow-up {} of a rejected run)",
                    phases.join(" → "),
                    of.generation
                )
            }
            Self::Started { plan, phases, .. } => {
                let phases: Vec<&str> = phases.iter().map(PhaseName::as_str).collect();
                format!("started plan `{plan}` with phases {}", phases.join(" → "))
            }
            Self::ReceiptsRerun { commands } if commands.is_empty() => {
                "receipts checked: nothing to re-run".to_owned()
            }
            Self::ReceiptsRerun { commands } => format!("receipts re-run: {}", commands.join(", ")),
            Self::PhaseReported {
                phase,
                attempt,
                round,
                outcome,
                ..
            } => format!(
                "phase `{phase}` attempt {attempt} (round {round}) reported {}{}",
                outcome.verdict,
                count(" with", outcome.findings.len(), "finding")
            ),
            Self::GateRecorded { record } => {
                let detail = match &record.result.outcome {
                    orcho_gates::GateOutcome::Skipped { reason } => format!(" ({reason})"),
                    _ => String::new(),
                };
                format!(
                    "  gate `{}` {}{detail} [on_fail: {}]",
                    record.result.gate,
                    record.result.outcome.as_str(),
                    record.on_fail
                )
            }
            Self::AcceptanceMerged {
                reviewer,
                verdict,
                gaps,
            } => {
                let commands: Vec<&str> = gaps.iter().filter_map(|g| g.key.as_deref()).collect();
                if gaps.is_empty() {
                    format!(
                        "acceptance {verdict} (reviewer {reviewer}; every required receipt present)"
                    )
                } else {
                    format!(
                        "acceptance {verdict} (reviewer {reviewer}; unproven: {})",
                        commands.join(", ")
                    )
                }
            }
            Self::PhaseSettled { effect, transition } => {
                format!("  settled ({effect}) → {}", transition.describe())
            }
            Self::HandoffOpened { handoff } => format!("handoff `{handoff}` opened"),
            Self::HandoffResumed {
                handoff,
                resumption,
            } => format!("handoff `{handoff}` resumed: {}", resumption.describe()),
            Self::IntakeOpened => {
                "intake: the target checkout has uncommitted changes; asking".to_owned()
            }
            Self::IntakeHalted => "intake: halt; the run does not start".to_owned(),
            Self::WorkspaceReady { intake, .. } => match intake {
                Some(action) => format!("worktree ready (intake: {action})"),
                None => "worktree ready".to_owned(),
            },
            Self::PhaseInterrupted {
                phase,
                attempt,
                touchpoint,
                ..
            } => format!(
                "phase `{phase}` attempt {attempt} stopped to ask: {}",
                touchpoint_kind(touchpoint)
            ),
            Self::TouchpointOpened { id } => format!("touchpoint `{id}` opened"),
            Self::TouchpointResolved { id, resolution } => {
                format!("touchpoint `{id}` resolved: {}", resolution.describe())
            }
            Self::DeliveryOpened { verdict } => {
                format!("delivery gate opened (release {verdict})")
            }
            // The detail names commits and paths: not stable across runs.
            Self::Delivered { action, .. } => format!("delivered: {action}"),
        }
    }
}

fn touchpoint_kind(touchpoint: &Touchpoint) -> &'static str {
    match touchpoint {
        Touchpoint::PlannerQuestions { .. } => "planner questions",
        Touchpoint::PlanApproval { .. } => "plan approval",
        _ => "deviation",
    }
}

impl Supervised {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Answered { .. } => "answered; the attempt runs again".to_owned(),
            Self::PlanApproved { .. } => "plan approved".to_owned(),
            Self::PlanRevised { feedback } => format!("plan revision requested \"{feedback}\""),
            Self::PlanRejected { .. } => "plan rejected".to_owned(),
            Self::DeviationRetry { .. } => "retry the step".to_owned(),
            Self::DeviationReplan { to, .. } => format!("replan from phase {}", to + 1),
            Self::DeviationStopped { .. } => "stop".to_owned(),
        }
    }
}

fn count(prefix: &str, n: usize, noun: &str) -> String {
    match n {
        0 => String::new(),
        1 => format!("{prefix} 1 {noun}"),
        n => format!("{prefix} {n} {noun}s"),
    }
}

impl Transition {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Retry { input } => {
                let fed: Vec<&str> = input.fed_failures.iter().map(|f| f.gate.as_str()).collect();
                if fed.is_empty() {
                    "retry".to_owned()
                } else {
                    format!("retry, feeding {}", fed.join(", "))
                }
            }
            Self::Advance => "advance".to_owned(),
            Self::Replan { to, input } => format!(
                "replan from phase {} with {}",
                to + 1,
                count("", input.critique.len(), "critique item").trim_start()
            ),
            Self::Pause {
                trigger, verdict, ..
            } => {
                let why = match trigger {
                    PauseTrigger::Verdict => "verdict".to_owned(),
                    PauseTrigger::Gate { gate } => format!("gate `{gate}`"),
                    PauseTrigger::Always => "always".to_owned(),
                };
                format!("pause ({verdict}, trigger {why})")
            }
            Self::Halt { reason } => format!("halt: {reason}"),
            Self::Supervise { touchpoint } => format!("ask: {}", touchpoint_kind(touchpoint)),
        }
    }
}

impl Resumption {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Continue => "continue".to_owned(),
            Self::Retry { feedback } => format!("retry_feedback \"{feedback}\""),
            Self::ContinueWithWaiver { reason } => format!("continue_with_waiver \"{reason}\""),
            Self::Halt => "halt".to_owned(),
        }
    }
}
