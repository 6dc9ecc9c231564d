//! Opening the phase handoff of a pause, and how a resumed handoff reads
//! in the journal.

use orcho_handoff::handoff::{HandoffChoice, HandoffSpec, NextStep, PhaseHandoff};

use super::{run::Run, step::Step};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{Resumption, RunEvent},
};

impl Run {
    /// At a pause: opens its handoff if a process died before it could, ends
    /// the run on a recorded `halt`, and returns the handoff while it waits
    /// for a decision.
    pub(super) fn handoff_step(&mut self) -> Result<Option<Step>, EngineError> {
        let handoff = match self.state().handoff() {
            Some(id) => self
                .engine
                .inner
                .store
                .handoffs
                .handoff(self.id(), id)
                .map_err(|e| self.handoff_err(e))?,
            None => self.open_handoff()?,
        };
        // A recorded `halt` ends the run without a resume.
        if let Some(decision) = self
            .engine
            .inner
            .store
            .handoffs
            .recorded_decision(self.id(), handoff.id())
            .map_err(|e| self.handoff_err(e))?
            && *decision.decision().payload() == HandoffChoice::Halt
        {
            self.commit(&RunEvent::HandoffResumed {
                handoff: handoff.id().clone(),
                resumption: Resumption::Halt,
            })?;
            return Ok(None);
        }
        Ok(Some(Step::DecideHandoff(handoff)))
    }

    /// Acts on the recorded decision of the run's handoff, if there is one,
    /// and journals how the run was resumed; without a decision, nothing.
    pub(super) fn resume_handoff(&mut self) -> Result<(), EngineError> {
        let handoff = match self.state().handoff() {
            Some(id) => id.clone(),
            None => self.open_handoff()?.id().clone(),
        };
        let store = self.engine.inner.store.handoffs.clone();
        let recorded = store
            .recorded_decision(self.id(), &handoff)
            .map_err(|e| self.handoff_err(e))?;
        let Some(recorded) = recorded else {
            return Ok(());
        };
        let resumption = match recorded.decision().payload() {
            HandoffChoice::Halt => Resumption::Halt,
            _ => match store.resume(&recorded) {
                Ok(next) => resumption_of(next),
                // A process that died after resuming the handoff but before
                // journaling it: the decision says what the resume was.
                Err(e) if e.is_already_resumed() => {
                    resumption_of_choice(recorded.decision().payload())
                }
                Err(e) => return Err(self.handoff_err(e)),
            },
        };
        self.commit(&RunEvent::HandoffResumed {
            handoff,
            resumption,
        })
    }

    /// Opens the handoff of a pause that has none yet (adopting one a dead
    /// process opened but did not journal).
    pub(super) fn open_handoff(&mut self) -> Result<PhaseHandoff, EngineError> {
        let state = self.state().clone();
        let Some(crate::state::Pause {
            trigger,
            verdict,
            findings,
            ..
        }) = state.pending_pause().cloned()
        else {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "open a handoff",
                status: state.status(),
            }));
        };
        let store = &self.engine.inner.store.handoffs;
        let existing = store.handoffs(self.id()).map_err(|e| self.handoff_err(e))?;
        let handoff = match existing.get(state.handoffs_opened() as usize) {
            Some(adopted) => adopted.clone(),
            None => {
                let phase = &self.engine.inner.plan.phases[state.phase_index()];
                let environment = findings.iter().any(orcho_gates::is_environment_finding);
                let mut spec = HandoffSpec::new(state.run().clone(), phase.name.clone(), verdict)
                    .with_trigger(trigger.to_handoff())
                    .with_round(state.attempt())
                    .with_findings(findings)
                    .with_policy(phase.handoff);
                if let Some(allowed) = phase.allowed_actions {
                    spec = spec.with_allowed_actions(allowed);
                }
                // The environment is not as declared: waive it or halt.
                if environment {
                    let waive: orcho_handoff::handoff::AvailableActions =
                        [orcho_handoff::HandoffAction::ContinueWithWaiver]
                            .into_iter()
                            .collect();
                    spec = spec.with_allowed_actions(match phase.allowed_actions {
                        Some(allowed) => allowed.intersection(waive),
                        None => waive,
                    });
                }
                store.open(spec).map_err(|e| self.handoff_err(e))?
            }
        };
        self.commit(&RunEvent::HandoffOpened {
            handoff: handoff.id().clone(),
        })?;
        Ok(handoff)
    }
}

fn resumption_of(next: NextStep) -> Resumption {
    match next {
        NextStep::Continue => Resumption::Continue,
        NextStep::Retry(grant) => Resumption::Retry {
            feedback: grant.feedback().to_owned(),
        },
        NextStep::ContinueWithWaiver(waiver) => Resumption::ContinueWithWaiver {
            reason: waiver.reason().to_owned(),
        },
    }
}

fn resumption_of_choice(choice: &HandoffChoice) -> Resumption {
    match choice {
        HandoffChoice::Continue => Resumption::Continue,
        HandoffChoice::RetryFeedback { feedback } => Resumption::Retry {
            feedback: feedback.clone(),
        },
        HandoffChoice::ContinueWithWaiver { reason } => Resumption::ContinueWithWaiver {
            reason: reason.clone(),
        },
        HandoffChoice::Halt => Resumption::Halt,
    }
}
