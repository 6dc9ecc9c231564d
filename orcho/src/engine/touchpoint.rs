//! Supervision touchpoints: asking, opening, and acting on the answers.

use orcho_core::HandoffId;
use orcho_handoff::supervision::{
    DeviationOutcome, DeviationSpent, PlanOutcome, PlannerQuestions, Resolution, SupervisionStore,
    Touchpoint,
};

use super::{
    run::Run,
    step::{Interruption, Step, SupervisionRequest},
};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, Supervised},
};

impl Run {
    pub(super) fn supervision(&self) -> SupervisionStore {
        SupervisionStore::new(
            std::sync::Arc::clone(&self.engine.inner.store.storage),
            self.id().clone(),
            self.engine.inner.store.clock.clone(),
        )
    }

    /// Stops the current attempt to ask the operator.
    pub(super) fn interrupt(
        &mut self,
        interruption: Interruption,
        cost: orcho_core::Cost,
    ) -> Result<(), EngineError> {
        let state = self.state().clone();
        let Some(phase) = state.current_phase().cloned() else {
            return Ok(());
        };
        let touchpoint = match interruption {
            Interruption::Questions(batch) => Touchpoint::PlannerQuestions {
                questions: PlannerQuestions::new(batch)
                    .map_err(|e| self.err(EngineErrorKind::Question(Box::new(e))))?,
            },
            Interruption::Deviation(deviation) => Touchpoint::Deviation {
                // The cap counts retries of this step since the last replan.
                deviation: {
                    let retries = self.step_retries(deviation.step)?;
                    deviation.with_retries(retries)
                },
                policy: self.engine.inner.plan.deviation,
                spent: DeviationSpent::new(state.deviation_retries(), state.deviation_replans()),
            },
        };
        self.commit(&RunEvent::PhaseInterrupted {
            phase,
            attempt: state.attempt(),
            cost,
            touchpoint,
        })
    }

    /// How many times step `step` was retried after a deviation since the
    /// run last went back to its planner, from the journal.
    fn step_retries(&self, step: u32) -> Result<u32, EngineError> {
        let mut retries = 0;
        for (_, event) in self.engine.inner.store.runs.events(self.id())? {
            match event {
                RunEvent::TouchpointResolved {
                    resolution: Supervised::DeviationRetry { step: retried, .. },
                    ..
                } if retried == step => retries += 1,
                RunEvent::TouchpointResolved {
                    resolution: Supervised::DeviationReplan { .. },
                    ..
                }
                | RunEvent::PhaseSettled {
                    transition: crate::state::Transition::Replan { .. },
                    ..
                } => retries = 0,
                _ => {}
            }
        }
        Ok(retries)
    }

    /// At a touchpoint: opens it if a process died before it could, and
    /// returns it for the host to render.
    pub(super) fn touchpoint_step(&mut self) -> Result<Step, EngineError> {
        let open = self.open_touchpoint()?;
        let questions = open
            .touchpoint
            .questions()
            .map_err(|e| self.err(EngineErrorKind::Touchpoint(Box::new(e))))?;
        let request = SupervisionRequest {
            run: self.id().clone(),
            id: open.id.clone(),
            phase: self.state().current_phase().cloned(),
            touchpoint: open.touchpoint.clone(),
            questions,
        };
        Ok(match open.touchpoint {
            Touchpoint::PlannerQuestions { .. } => Step::AnswerQuestions(request),
            Touchpoint::PlanApproval { .. } => Step::ApprovePlan(request),
            _ => Step::HandleDeviation(request),
        })
    }

    fn open_touchpoint(
        &mut self,
    ) -> Result<orcho_handoff::supervision::OpenTouchpoint, EngineError> {
        let store = self.supervision();
        let sup_err = |run: &Self, e| run.err(EngineErrorKind::Supervision(Box::new(e)));
        if let Some(id) = self.state().touchpoint() {
            return store.get(id).map_err(|e| sup_err(self, e));
        }
        let state = self.state().clone();
        let Some(touchpoint) = state.pending_touchpoint() else {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "open a touchpoint",
                status: state.status(),
            }));
        };
        let id: HandoffId = format!("touchpoint-{}", state.touchpoints_opened() + 1)
            .parse()
            .map_err(|_| {
                self.err(EngineErrorKind::NotExpected {
                    action: "name a touchpoint",
                    status: state.status(),
                })
            })?;
        // Adopt one a dead process opened but did not journal.
        let open = match store.get(&id) {
            Ok(open) => open,
            Err(_) => {
                store
                    .open(&id, touchpoint.clone())
                    .map_err(|e| sup_err(self, e))?;
                store.get(&id).map_err(|e| sup_err(self, e))?
            }
        };
        self.commit(&RunEvent::TouchpointOpened { id })?;
        Ok(open)
    }

    /// Acts on a touchpoint's recorded answers, if there are any; without
    /// answers, nothing.
    pub(super) fn resume_touchpoint(&mut self) -> Result<(), EngineError> {
        let open = self.open_touchpoint()?;
        let Some(resolution) = open.resolution.clone() else {
            return Ok(());
        };
        let resolution = match resolution {
            Resolution::Answers(answers) => Supervised::Answered {
                answers: answers.for_planner(),
            },
            Resolution::Plan(decision) => {
                let Touchpoint::PlanApproval { plan } = &open.touchpoint else {
                    return Err(self.err(EngineErrorKind::NotExpected {
                        action: "apply a plan decision to a touchpoint that is not a plan approval",
                        status: self.state().status(),
                    }));
                };
                match decision
                    .apply(plan)
                    .map_err(|e| self.err(EngineErrorKind::Touchpoint(Box::new(e))))?
                {
                    PlanOutcome::Execute { feedback } => Supervised::PlanApproved { feedback },
                    PlanOutcome::Revise { feedback } => Supervised::PlanRevised { feedback },
                    PlanOutcome::Cancelled { feedback } => Supervised::PlanRejected { feedback },
                    _ => Supervised::PlanRejected { feedback: None },
                }
            }
            Resolution::Deviation(outcome) => match outcome {
                DeviationOutcome::Retry { context, .. } => Supervised::DeviationRetry {
                    context,
                    step: match &open.touchpoint {
                        Touchpoint::Deviation { deviation, .. } => deviation.step,
                        _ => 0,
                    },
                },
                DeviationOutcome::Replan { failure, .. } => Supervised::DeviationReplan {
                    to: self
                        .engine
                        .inner
                        .plan
                        .replan_target(self.state().phase_index()),
                    failure,
                },
                DeviationOutcome::Stop { note } => Supervised::DeviationStopped { note },
                _ => Supervised::DeviationStopped { note: None },
            },
            _ => Supervised::DeviationStopped { note: None },
        };
        self.commit(&RunEvent::TouchpointResolved {
            id: open.id,
            resolution,
        })
    }
}
