//! [`Run`]: a run opened for driving, and the loop that says what it needs
//! next.

use std::sync::Arc;

use orcho_core::{RunId, RunStatus};
use orcho_handoff::autopilot::{Autopilot, AutopilotOutcome};

use super::{
    build::Engine,
    step::{PhaseReport, Step},
};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, RunState, Stage},
    store::StoredRun,
};

/// A run opened for driving. It holds the run's exclusive lock until it is
/// dropped, so two processes never drive one run.
#[derive(Debug)]
pub struct Run {
    pub(super) engine: Engine,
    pub(super) stored: StoredRun,
}

impl Run {
    /// The run's id.
    pub fn id(&self) -> &RunId {
        self.stored.state.run()
    }

    /// Where the run stands.
    pub fn state(&self) -> &RunState {
        &self.stored.state
    }

    /// Where the run stands, as hosts show it.
    pub fn view(&self) -> crate::RunView {
        crate::RunView::from(&self.stored.state)
    }

    /// The engine driving it.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(super) fn commit(&mut self, event: &RunEvent) -> Result<(), EngineError> {
        let clock = Arc::clone(&self.engine.inner.store.clock);
        self.stored.commit(event, clock.as_ref())
    }

    pub(super) fn err(&self, kind: impl Into<EngineErrorKind>) -> EngineError {
        EngineError::run(self.id(), kind)
    }

    pub(super) fn handoff_err(&self, e: orcho_handoff::handoff::HandoffError) -> EngineError {
        self.err(EngineErrorKind::Handoff(Box::new(e)))
    }

    pub(super) fn finished(&self) -> Step {
        let state = self.state();
        Step::Finished {
            status: state.status(),
            reason: state.reason().unwrap_or_default().to_owned(),
        }
    }

    /// What the run needs next. This may do work the run owes before it can
    /// ask anything: finish the gates of an attempt whose process died, open
    /// a handoff that was decided on but not opened, re-run missing or stale
    /// required receipts before final acceptance, or mark the run halted when
    /// a `halt` decision was recorded.
    ///
    /// # Errors
    ///
    /// When the store cannot be read or written.
    pub async fn next(&mut self) -> Result<Step, EngineError> {
        loop {
            match self.state().stage() {
                Stage::Created => self.prepare()?,
                Stage::AwaitingIntake => {
                    if let Some(step) = self.intake_step()? {
                        return Ok(step);
                    }
                }
                Stage::Ready => return self.phase_request().await,
                Stage::Gating(_) => self.run_gates().await?,
                Stage::Pausing(_) | Stage::AtHandoff(_) => {
                    if let Some(step) = self.handoff_step()? {
                        return Ok(step);
                    }
                }
                Stage::Asking(_) | Stage::AtTouchpoint { .. } => return self.touchpoint_step(),
                Stage::AtDelivery { .. } => {
                    if let Some(step) = self.delivery_step().await? {
                        return Ok(step);
                    }
                }
                Stage::Ended(_) => return Ok(self.finished()),
            }
        }
    }

    /// Reports the current phase attempt, runs its gates (persisting each
    /// result as it is known), applies their effect and the verdict, and
    /// returns what the run needs next.
    ///
    /// # Errors
    ///
    /// [`EngineErrorKind::NotExpected`] when no phase attempt was asked for
    /// (the run waits at a decision point, or has ended): a bug of the
    /// host; or a store error.
    pub async fn complete_phase(&mut self, report: PhaseReport) -> Result<Step, EngineError> {
        let state = self.state().clone();
        if state.status() != RunStatus::Running || state.in_flight().is_some() {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "complete a phase",
                status: state.status(),
            }));
        }
        let Some(phase) = state.current_phase().cloned() else {
            return Ok(self.finished());
        };
        let read_only = self
            .engine
            .inner
            .plan
            .phases
            .get(state.phase_index())
            .is_some_and(|p| p.read_only);
        // A read-only attempt's change is taken back out whatever it
        // reported; an attempt that stopped to ask runs again from where it
        // started.
        let taken_back = if read_only {
            self.take_back_changes(&super::read_only::Attempt {
                phase: &phase,
                round: state.round(),
                attempt: state.attempt(),
            })
            .await?
        } else {
            None
        };
        if let Some(interruption) = report.interruption {
            self.interrupt(interruption, report.cost)?;
            return self.next().await;
        }
        let mut outcome = report.outcome;
        if let Some(finding) = taken_back {
            outcome.verdict = orcho_core::Verdict::Rejected;
            outcome.findings.insert(0, finding);
        }
        self.commit(&RunEvent::PhaseReported {
            phase,
            attempt: state.attempt(),
            round: state.round(),
            outcome,
            cost: report.cost,
            plan: report.plan,
        })?;
        self.run_gates().await?;
        self.next().await
    }

    /// Ends the run where it stands: at a decision point nobody has to
    /// take any more, or between steps. The decision points it waited on
    /// stay as they were, and leave the inbox.
    ///
    /// # Errors
    ///
    /// [`Refusal::Ended`](crate::Refusal::Ended) when the run has ended
    /// already.
    pub fn cancel(
        &mut self,
        reason: &str,
        by: orcho_handoff::decision::DecidedBy,
    ) -> Result<(), EngineError> {
        if self.state().status().is_terminal() {
            return Err(self.ended());
        }
        self.commit(&RunEvent::Cancelled {
            reason: reason.to_owned(),
            by,
        })
    }

    /// Records that the phase attempt the host was running was stopped
    /// before it was reported (`reason`: what stopped it). The run stays
    /// where it was: the same attempt runs again on resume; `orcho log` and
    /// the evidence show the interruption. Nothing is recorded when no
    /// attempt was under way.
    ///
    /// # Errors
    ///
    /// When the journal cannot be written.
    pub fn record_interruption(&mut self, reason: &str) -> Result<(), EngineError> {
        let state = self.state();
        if !matches!(state.stage(), Stage::Ready) || state.status() != RunStatus::Running {
            return Ok(());
        }
        let Some(phase) = state.current_phase().cloned() else {
            return Ok(());
        };
        let attempt = state.attempt();
        self.commit(&RunEvent::Interrupted {
            phase,
            attempt,
            reason: reason.to_owned(),
        })
    }

    /// The refusal to move a run that has ended, once it has: for a host
    /// asked to drive on a run that is over (`orcho resume` of a halted
    /// run, say), which has nothing to do.
    pub fn refusal_if_ended(&self) -> Option<EngineError> {
        self.state().status().is_terminal().then(|| self.ended())
    }

    /// The refusal of a run that has ended.
    pub(super) fn ended(&self) -> EngineError {
        self.err(crate::Refusal::Ended {
            status: self.state().status(),
            reason: self.state().reason().unwrap_or_default().to_owned(),
        })
    }

    /// Acts on what was decided where the run waits, and returns where it
    /// stands then: the next step once a recorded decision moved it on, the
    /// same decision point while nobody has decided, or how it ended (a
    /// recorded `halt` ends it). A run that does not wait goes on as
    /// [`next`](Self::next) does. Nothing here is an error of the run's
    /// state: where it stands is the [`Step`].
    ///
    /// # Errors
    ///
    /// A store error, or acting on the decision failing (a delivery whose
    /// target the run's diff would now conflict with, say:
    /// [`EngineError::target_conflict`]).
    pub async fn resume(&mut self) -> Result<Step, EngineError> {
        match self.state().stage() {
            Stage::AwaitingIntake => self.apply_intake()?,
            Stage::Asking(_) | Stage::AtTouchpoint { .. } => self.resume_touchpoint()?,
            Stage::AtDelivery { .. } => self.deliver().await?,
            Stage::Pausing(_) | Stage::AtHandoff(_) => self.resume_handoff()?,
            Stage::Ended(_) | Stage::Created | Stage::Ready | Stage::Gating(_) => {}
        }
        self.next().await
    }

    /// The files the run's last approved plan says it affects (none without
    /// one).
    fn approved_plan_files(&self) -> Result<Vec<String>, EngineError> {
        let events = self.engine.inner.store.runs.events(self.id())?;
        let approved = events.iter().rev().find_map(|(_, event)| match event {
            RunEvent::TouchpointResolved {
                id,
                resolution: crate::state::Supervised::PlanApproved { .. },
            } => Some(id.clone()),
            _ => None,
        });
        let Some(id) = approved else {
            return Ok(Vec::new());
        };
        let open = self
            .supervision()
            .get(&id)
            .map_err(|e| self.err(EngineErrorKind::Supervision(Box::new(e))))?;
        Ok(match open.touchpoint {
            orcho_handoff::supervision::Touchpoint::PlanApproval { plan } => plan.files_affected,
            _ => Vec::new(),
        })
    }

    /// What the run's change so far does to weaken its own proof against
    /// the run's base (in place: the checkout against `HEAD`), one line each (see [`crate::proof::review`]); a
    /// change that cannot be read says so.
    async fn weakenings(&self) -> Vec<String> {
        // A run in place works in the checkout: its change is the
        // checkout's against `HEAD`.
        let (dir, base, in_place) = match self.workspace() {
            Ok(ws) => (
                ws.worktree,
                self.state().base().unwrap_or_default().to_owned(),
                false,
            ),
            Err(_) => (self.state().checkout().to_owned(), "HEAD".to_owned(), true),
        };
        if base.is_empty() {
            return Vec::new();
        }
        let file = self.engine.inner.plan.profile_file.clone();
        let read = tokio::task::spawn_blocking(move || {
            crate::proof::review(&dir, &base, file.as_ref().map(|f| f.as_str()))
        })
        .await;
        match read {
            Ok(Ok(review)) => review
                .weakenings
                .iter()
                .map(ToString::to_string)
                .chain(review.profile_added.iter().map(ToString::to_string))
                .collect(),
            // In place, a checkout outside git (or without a commit) has
            // no change to read, as for `orcho status`.
            Ok(Err(_)) if in_place => Vec::new(),
            Ok(Err(e)) => vec![format!(
                "the change could not be compared with the run's base: {}",
                orcho_core::error_chain(&e)
            )],
            Err(e) => vec![format!(
                "the change could not be compared with the run's base: {e}"
            )],
        }
    }

    /// The CI autopilot on the open handoff: asks the advisor, evaluates the
    /// safety stops, and when all pass records `retry_feedback` as the CI
    /// agent and resumes. A stop leaves the handoff pending with its typed
    /// reason. A plan whose autopilot is off
    /// ([`RunPlan::autopilot_enabled`](crate::RunPlan::autopilot_enabled))
    /// is [`Ineligible::Disabled`](orcho_handoff::autopilot::Ineligible::Disabled):
    /// nothing is asked or written.
    ///
    /// # Errors
    ///
    /// No advisor, the run not paused at a handoff, or a store error.
    pub async fn autopilot(&mut self) -> Result<(AutopilotOutcome, Step), EngineError> {
        let step = self.next().await?;
        let Step::DecideHandoff(handoff) = step else {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "run the autopilot",
                status: self.state().status(),
            }));
        };
        if !self.engine.inner.plan.autopilot_enabled {
            return Ok((
                AutopilotOutcome::NotEligible(orcho_handoff::autopilot::Ineligible::Disabled),
                Step::DecideHandoff(handoff),
            ));
        }
        let advisor = self
            .engine
            .inner
            .advisor
            .clone()
            .ok_or_else(|| self.err(crate::Refusal::NoAdvisor))?;
        // With an approved plan, the files it affects are the scope of an
        // advice's expected changes.
        let policy = self
            .engine
            .inner
            .plan
            .autopilot
            .clone()
            .scoped_to_plan(&self.approved_plan_files()?);
        let context = self.engine.advice_context(self.id()).await;
        let autopilot = Autopilot::new(self.engine.inner.store.handoffs.clone(), advisor, policy)
            .with_context(context);
        // A change that weakens its own proof is for a person, whatever
        // the advisor would say.
        let weakenings = self.weakenings().await;
        let outcome = if weakenings.is_empty() {
            let output = self.engine.phase_output(self.id(), &handoff);
            autopilot.run(self.id(), handoff.id(), &output).await
        } else {
            autopilot.stop_before(
                self.id(),
                handoff.id(),
                orcho_handoff::autopilot::StopReason::WeakensProof { weakenings },
            )
        }
        .map_err(|e| self.handoff_err(e))?;
        let step = match &outcome {
            AutopilotOutcome::Retried { .. } => self.resume().await?,
            _ => Step::DecideHandoff(handoff),
        };
        Ok((outcome, step))
    }
}
