//! The run's transitions: [`RunState::new`] and [`RunState::apply`], pure
//! and consuming.

use orcho_core::{Cost, RunStatus};
use orcho_handoff::DeliveryAction;

use super::{
    event::{Release, Resumption, RunEvent, Supervised, Transition},
    input::PhaseInput,
    run::{Cursor, Ending, InFlight, Pause, RunState, Stage, TouchpointKind},
};

/// An event that does not fit the state (a bug or a damaged journal). The
/// state is handed back unchanged ([`into_state`](Self::into_state)).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("event `{event}` cannot apply to a run that is `{status}` (event {seq})", status = self.state.status(), seq = self.state.seq() + 1)]
pub struct TransitionError {
    event: &'static str,
    state: Box<RunState>,
}

impl TransitionError {
    /// The refused event's name.
    pub fn event(&self) -> &'static str {
        self.event
    }

    /// The state, unchanged.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// The state, unchanged, to go on with another event.
    pub fn into_state(self) -> RunState {
        *self.state
    }
}

fn ended(status: RunStatus, reason: impl Into<String>) -> Stage {
    Stage::Ended(Ending {
        status,
        reason: reason.into(),
        delivered: false,
    })
}

impl RunState {
    /// The state of a run created with `started` (which must be
    /// [`RunEvent::Started`]).
    ///
    /// # Errors
    ///
    /// The event's name, for any other event.
    pub fn new(run: orcho_core::RunId, started: &RunEvent) -> Result<Self, &'static str> {
        let RunEvent::Started {
            checkout,
            plan,
            phases,
            workspace,
            follow_up,
            task,
        } = started
        else {
            return Err(started.name());
        };
        let stage = if workspace.is_some() {
            Stage::Created
        } else if phases.is_empty() {
            ended(RunStatus::Completed, "the plan has no phases")
        } else {
            Stage::Ready
        };
        Ok(Self {
            run,
            checkout: checkout.clone(),
            plan: plan.clone(),
            phases: phases.clone(),
            workspace: workspace.clone(),
            follow_up: follow_up.clone(),
            task: task.clone(),
            seq: 1,
            stage,
            cursor: Cursor::START,
            attempts: Vec::new(),
            input: PhaseInput::default(),
            receipts_rerun_at: None,
            waivers: Vec::new(),
            handoffs_opened: 0,
            touchpoints_opened: 0,
            deviation_retries: 0,
            deviation_replans: 0,
            cost: Cost::default(),
            base: None,
            release: None,
        })
    }

    /// Applies one event: a pure, consuming transition.
    ///
    /// # Errors
    ///
    /// A [`TransitionError`] when the event does not fit the stage; it holds
    /// the state, unchanged.
    pub fn apply(mut self, event: &RunEvent) -> Result<Self, TransitionError> {
        let stage = std::mem::replace(&mut self.stage, Stage::Ready);
        match self.step(stage, event) {
            Ok(stage) => {
                self.stage = stage;
                self.seq += 1;
                Ok(self)
            }
            Err(stage) => {
                self.stage = stage;
                Err(TransitionError {
                    event: event.name(),
                    state: Box::new(self),
                })
            }
        }
    }

    /// The next stage, or the stage back when the event does not fit it.
    fn step(&mut self, stage: Stage, event: &RunEvent) -> Result<Stage, Stage> {
        Ok(match (stage, event) {
            (stage @ (Stage::Ready | Stage::Gating(_)), RunEvent::ReceiptsRerun { .. }) => {
                self.receipts_rerun_at =
                    Some((self.cursor.phase, self.cursor.round, self.cursor.attempt));
                stage
            }
            (
                Stage::Ready,
                RunEvent::PhaseReported {
                    outcome,
                    cost,
                    plan,
                    ..
                },
            ) => Stage::Gating(Box::new(InFlight {
                outcome: outcome.clone(),
                cost: *cost,
                records: Vec::new(),
                acceptance: None,
                plan: plan.clone(),
            })),
            (
                Stage::Ready,
                RunEvent::PhaseInterrupted {
                    cost, touchpoint, ..
                },
            ) => {
                self.cost += *cost;
                Stage::Asking(touchpoint.clone())
            }
            (Stage::Created, RunEvent::IntakeOpened) => Stage::AwaitingIntake,
            (Stage::Created | Stage::AwaitingIntake, RunEvent::IntakeHalted) => {
                ended(RunStatus::Halted, "pre-run intake decided halt")
            }
            (Stage::Created | Stage::AwaitingIntake, RunEvent::WorkspaceReady { base, .. }) => {
                self.base = Some(base.clone());
                if self.phases.is_empty() {
                    Stage::AtDelivery { opened: false }
                } else {
                    Stage::Ready
                }
            }
            (Stage::Asking(touchpoint), RunEvent::TouchpointOpened { id }) => {
                self.touchpoints_opened += 1;
                Stage::AtTouchpoint {
                    id: id.clone(),
                    kind: TouchpointKind::of(&touchpoint),
                }
            }
            (
                Stage::AtTouchpoint { id, .. },
                RunEvent::TouchpointResolved { id: at, resolution },
            ) if id == *at => self.resolve(resolution),
            // Receipts re-run at the open gate, which is then opened again.
            (stage @ Stage::AtDelivery { opened: true }, RunEvent::ReceiptsRerun { .. })
            | (stage @ Stage::AtDelivery { opened: true }, RunEvent::DeliveryOpened { .. }) => {
                stage
            }
            (Stage::AtDelivery { opened: false }, RunEvent::DeliveryOpened { .. }) => {
                Stage::AtDelivery { opened: true }
            }
            (Stage::AtDelivery { opened: true }, RunEvent::Delivered { action, detail }) => {
                Stage::Ended(Ending {
                    status: if *action == DeliveryAction::Halt {
                        RunStatus::Halted
                    } else {
                        RunStatus::Completed
                    },
                    reason: detail.clone(),
                    delivered: true,
                })
            }
            (Stage::Ready, RunEvent::Interrupted { .. }) => Stage::Ready,
            (stage, RunEvent::Cancelled { reason, by }) if !matches!(stage, Stage::Ended(_)) => {
                ended(RunStatus::Cancelled, format!("cancelled by {by}: {reason}"))
            }
            (Stage::Gating(mut flight), RunEvent::GateRecorded { record }) => {
                flight.records.push(record.clone());
                Stage::Gating(flight)
            }
            (
                Stage::Gating(mut flight),
                RunEvent::AcceptanceMerged {
                    reviewer,
                    verdict,
                    gaps,
                },
            ) => {
                flight.acceptance = Some((*verdict, gaps.clone()));
                self.release = Some(Release {
                    verdict: *verdict,
                    reviewer: *reviewer,
                    findings: flight
                        .outcome
                        .findings
                        .iter()
                        .chain(gaps)
                        .cloned()
                        .collect(),
                });
                Stage::Gating(flight)
            }
            (Stage::Gating(flight), RunEvent::PhaseSettled { transition, .. }) => {
                let gate_cost: Cost = flight.records.iter().map(|r| r.result.cost()).sum();
                self.cost += flight.cost + gate_cost;
                self.follow(transition)
            }
            (Stage::Pausing(_), RunEvent::HandoffOpened { handoff }) => {
                self.handoffs_opened += 1;
                Stage::AtHandoff(handoff.clone())
            }
            (
                Stage::AtHandoff(id),
                RunEvent::HandoffResumed {
                    handoff,
                    resumption,
                },
            ) if id == *handoff => match resumption {
                Resumption::Continue => self.advance(),
                Resumption::Retry { feedback } => self.extra_attempt(feedback),
                Resumption::ContinueWithWaiver { reason } => {
                    self.waivers.push(reason.clone());
                    self.advance()
                }
                Resumption::Halt => ended(
                    RunStatus::Halted,
                    format!("halted by the decision on handoff `{handoff}`"),
                ),
            },
            (stage, _) => return Err(stage),
        })
    }

    /// On to the next phase, or to the delivery gate (or the end) after the
    /// last.
    fn advance(&mut self) -> Stage {
        self.enter(self.cursor.phase + 1);
        self.input = PhaseInput {
            waivers: self.waivers.clone(),
            ..PhaseInput::default()
        };
        if self.cursor.phase < self.phases.len() {
            Stage::Ready
        } else if self.workspace.is_some() {
            Stage::AtDelivery { opened: false }
        } else {
            ended(RunStatus::Completed, "every phase passed")
        }
    }

    /// Moves the cursor to phase `next`, at the attempt it starts at: 1, or
    /// after its last one in this round, when the round keeps attempts (the
    /// attempt the current phase ends on is noted first).
    fn enter(&mut self, next: usize) {
        let attempt = if self.attempts.is_empty() {
            1
        } else {
            if let Some(last) = self.attempts.get_mut(self.cursor.phase) {
                *last = (*last).max(self.cursor.attempt);
            }
            self.attempts.get(next).map_or(1, |last| last + 1)
        };
        self.cursor = Cursor {
            phase: next,
            attempt,
            extra_attempts: 0,
            ..self.cursor
        };
    }

    /// Back to the earlier phase `to` of this round with `input`, numbering
    /// its attempts after `attempts`.
    fn feed(&mut self, to: usize, input: &PhaseInput, attempts: &[u32]) -> Stage {
        let mut kept = attempts.to_vec();
        kept.resize(self.phases.len().max(kept.len()), 0);
        self.attempts = kept;
        self.enter(to);
        self.input = input.clone();
        Stage::Ready
    }

    /// An extra attempt of the current phase, with `feedback`.
    fn extra_attempt(&mut self, feedback: &str) -> Stage {
        self.cursor.extra_attempts += 1;
        self.cursor.attempt += 1;
        self.input = PhaseInput {
            feedback: Some(feedback.to_owned()),
            waivers: self.waivers.clone(),
            ..PhaseInput::default()
        };
        Stage::Ready
    }

    /// Back to phase `to` in a new round, with `input`.
    fn replan(&mut self, to: usize, input: PhaseInput) -> Stage {
        self.attempts.clear();
        self.cursor = Cursor {
            phase: to,
            attempt: 1,
            round: self.cursor.round + 1,
            extra_attempts: 0,
        };
        self.input = input;
        Stage::Ready
    }

    fn resolve(&mut self, resolution: &Supervised) -> Stage {
        match resolution {
            Supervised::Answered { answers } => {
                self.input.answers = Some(answers.clone());
                Stage::Ready
            }
            // The approval's notes reach the executors with the plan
            // (the engine adds it to every later phase's input).
            Supervised::PlanApproved { .. } => self.advance(),
            Supervised::PlanRevised { feedback } => self.extra_attempt(feedback),
            Supervised::PlanRejected { feedback } => ended(
                RunStatus::Halted,
                match feedback {
                    Some(f) => format!("the plan was rejected: {f}"),
                    None => "the plan was rejected".to_owned(),
                },
            ),
            Supervised::DeviationRetry { context, .. } => {
                self.deviation_retries += 1;
                self.cursor.extra_attempts += 1;
                self.cursor.attempt += 1;
                self.input = PhaseInput {
                    deviation: Some(context.clone()),
                    waivers: self.waivers.clone(),
                    ..PhaseInput::default()
                };
                Stage::Ready
            }
            Supervised::DeviationReplan { to, failure } => {
                self.deviation_replans += 1;
                let input = PhaseInput {
                    deviation: Some(failure.clone()),
                    waivers: self.waivers.clone(),
                    ..PhaseInput::default()
                };
                self.replan(*to, input)
            }
            Supervised::DeviationStopped { note } => ended(
                RunStatus::Halted,
                match note {
                    Some(n) => format!("stopped after a deviation: {n}"),
                    None => "stopped after a deviation".to_owned(),
                },
            ),
        }
    }

    fn follow(&mut self, transition: &Transition) -> Stage {
        match transition {
            Transition::Retry { input } => {
                self.cursor.attempt += 1;
                self.input = input.clone();
                Stage::Ready
            }
            Transition::Advance => self.advance(),
            Transition::Feed {
                to,
                input,
                attempts,
            } => self.feed(*to, input, attempts),
            Transition::Replan { to, input } => self.replan(*to, input.clone()),
            Transition::Pause {
                trigger,
                verdict,
                findings,
            } => Stage::Pausing(Pause {
                trigger: trigger.clone(),
                verdict: *verdict,
                findings: findings.clone(),
            }),
            Transition::Halt { reason } => ended(RunStatus::Halted, reason.clone()),
            Transition::Supervise { touchpoint } => Stage::Asking(touchpoint.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use orcho_core::{HandoffId, Verdict};
    use orcho_gates::PhaseOutcome;

    use super::*;

    fn started() -> RunState {
        RunState::new(
            "run-1".parse().unwrap(),
            &RunEvent::Started {
                checkout: "/work".into(),
                plan: "p".into(),
                phases: vec!["implement".parse().unwrap()],
                workspace: None,
                follow_up: None,
                task: None,
            },
        )
        .unwrap()
    }

    fn reported() -> RunEvent {
        RunEvent::PhaseReported {
            phase: "implement".parse().unwrap(),
            attempt: 1,
            round: 1,
            outcome: PhaseOutcome::new(Verdict::Rejected),
            cost: Cost::default(),
            plan: None,
        }
    }

    #[test]
    fn an_event_that_does_not_fit_hands_the_state_back_unchanged() {
        let state = started();
        let handoff: HandoffId = "0001-implement".parse().unwrap();
        let err = state
            .clone()
            .apply(&RunEvent::HandoffOpened { handoff })
            .unwrap_err();
        insta::assert_snapshot!(err, @"event `handoff_opened` cannot apply to a run that is `running` (event 2)");
        assert_eq!(err.event(), "handoff_opened");
        assert_eq!(err.into_state(), state);
    }

    #[test]
    fn an_interruption_is_recorded_only_between_attempts_and_changes_nothing() {
        let interrupted = RunEvent::Interrupted {
            phase: "implement".parse().unwrap(),
            attempt: 1,
            reason: "Ctrl-C".into(),
        };
        let ready = started();
        let after = ready.clone().apply(&interrupted).unwrap();
        assert_eq!(after.stage(), ready.stage());
        assert_eq!(after.attempt(), ready.attempt());
        let gating = started().apply(&reported()).unwrap();
        assert_eq!(
            gating.apply(&interrupted).unwrap_err().event(),
            "interrupted"
        );
    }

    #[test]
    fn a_run_is_cancelled_from_any_stage_but_the_end() {
        let cancel = RunEvent::Cancelled {
            reason: "wrong approach".into(),
            by: orcho_handoff::decision::DecidedBy::Operator,
        };
        for state in [started(), started().apply(&reported()).unwrap()] {
            let cancelled = state.apply(&cancel).unwrap();
            assert_eq!(cancelled.status(), RunStatus::Cancelled);
            assert_eq!(
                cancelled.reason(),
                Some("cancelled by operator: wrong approach")
            );
            let err = cancelled.apply(&cancel).unwrap_err();
            assert_eq!(err.event(), "cancelled");
        }
    }

    #[test]
    fn the_status_follows_the_stage() {
        let state = started().apply(&reported()).unwrap();
        assert!(state.in_flight().is_some());
        assert_eq!(state.status(), RunStatus::Running);
        let paused = state
            .apply(&RunEvent::PhaseSettled {
                effect: "continue".into(),
                transition: Transition::Pause {
                    trigger: crate::state::PauseTrigger::Verdict,
                    verdict: Verdict::Rejected,
                    findings: Vec::new(),
                },
            })
            .unwrap();
        assert_eq!(paused.status(), RunStatus::AwaitingPhaseHandoff);
        assert!(paused.pending_pause().is_some());
        assert!(paused.in_flight().is_none(), "the attempt settled");
        let at = paused
            .apply(&RunEvent::HandoffOpened {
                handoff: "0001-implement".parse().unwrap(),
            })
            .unwrap();
        assert_eq!(at.handoff().map(HandoffId::as_str), Some("0001-implement"));
        assert!(at.pending_pause().is_none());
        let halted = at
            .apply(&RunEvent::HandoffResumed {
                handoff: "0001-implement".parse().unwrap(),
                resumption: Resumption::Halt,
            })
            .unwrap();
        assert_eq!(halted.status(), RunStatus::Halted);
        assert_eq!(
            halted.reason(),
            Some("halted by the decision on handoff `0001-implement`")
        );
        assert_eq!(halted.seq(), 5);
    }
}
