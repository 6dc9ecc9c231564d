//! What hosts record about runs: decisions and answers at every kind of
//! decision point, from any process, and a run's end.

use orcho_core::{HandoffId, RunId};
use orcho_handoff::{
    decision::{DecidedBy, DecisionRequest, RecordedDecision},
    delivery::{DeliveryAction, DeliveryChoice},
    handoff::HandoffChoice,
    intake::{IntakeAction, IntakeChoice},
    supervision::{Answer, Resolution, SupervisionStore, TouchpointAnswers},
};

use super::Store;
use crate::{
    EngineError, RunView,
    error::EngineErrorKind,
    state::{RunEvent, Stage},
};

impl Store {
    /// Refuses a first decision on a run that has ended: nothing would act
    /// on it. Once a decision is recorded (`decided`), the same one again
    /// stays an idempotent replay and another a conflict, ended or not.
    fn refuse_ended(&self, run: &RunId, decided: impl FnOnce() -> bool) -> Result<(), EngineError> {
        let state = self.runs.read(run)?;
        if state.status().is_terminal() && !decided() {
            return Err(EngineError::run(
                run,
                crate::Refusal::Ended {
                    status: state.status(),
                    reason: state.reason().unwrap_or_default().to_owned(),
                },
            ));
        }
        Ok(())
    }

    /// Records a decision on a handoff. It does not advance the run: the run
    /// moves on [`Run::resume`](crate::Run::resume) (or the next [`Run::next`](crate::Run::next)).
    ///
    /// # Errors
    ///
    /// A refused action (not on the handoff's menu, text missing), a conflict
    /// with a different recorded decision ([`EngineError::is_conflict`]), an
    /// unknown handoff, or a run that has ended ([`EngineError::is_terminal`]).
    pub fn decide(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        request: DecisionRequest<HandoffChoice>,
    ) -> Result<RecordedDecision<HandoffChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.handoffs
                .recorded_decision(run, handoff)
                .is_ok_and(|d| d.is_some())
        })?;
        let recorded = self
            .handoffs
            .decide(run, handoff, self.stamped(request))
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))?;
        if *recorded.decision().payload() == HandoffChoice::Halt {
            self.halt_now(run, |stage| match stage {
                Stage::AtHandoff(open) if open == handoff => Some(RunEvent::HandoffResumed {
                    handoff: handoff.clone(),
                    resumption: crate::state::Resumption::Halt,
                }),
                _ => None,
            })?;
        }
        Ok(recorded)
    }

    /// Ends `run` with the event `ending` gives for the stage it stands at,
    /// now, when no process drives it: a recorded halt is terminal when it
    /// is decided, with no resume. A process that drives the run ends it
    /// itself when it reads the decision.
    /// `request`, with this store's decider as who decided when the request
    /// names nobody (not for the autopilot, which is nobody's hand).
    pub(super) fn stamped<P: orcho_handoff::decision::DecisionPayload>(
        &self,
        request: DecisionRequest<P>,
    ) -> DecisionRequest<P> {
        match &self.decider {
            Some(who) if request.who().is_none() && request.decided_by() != DecidedBy::CiAgent => {
                request.by(who.clone())
            }
            _ => request,
        }
    }

    fn halt_now(
        &self,
        run: &RunId,
        ending: impl FnOnce(&Stage) -> Option<RunEvent>,
    ) -> Result<(), EngineError> {
        let Some(mut stored) = self.runs.try_open(run)? else {
            return Ok(());
        };
        let Some(event) = ending(stored.state.stage()) else {
            return Ok(());
        };
        stored.commit(&event, self.clock.as_ref())?;
        drop(stored);
        self.write_evidence(&self.evidence(run, None)?)
    }

    /// Records the pre-run intake decision. It does not start the run:
    /// [`Run::resume`](crate::Run::resume) acts on it.
    ///
    /// # Errors
    ///
    /// No intake question for the run, a different decision recorded
    /// first ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn decide_intake(
        &self,
        run: &RunId,
        request: DecisionRequest<IntakeChoice>,
    ) -> Result<RecordedDecision<IntakeChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.intakes
                .recorded_decision(run)
                .is_ok_and(|d| d.is_some())
        })?;
        let recorded = self
            .intakes
            .decide(run, self.stamped(request))
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))?;
        if recorded.decision().payload().action() == IntakeAction::Halt {
            self.halt_now(run, |stage| {
                matches!(stage, Stage::AwaitingIntake).then_some(RunEvent::IntakeHalted)
            })?;
        }
        Ok(recorded)
    }

    /// Records answers to a supervision touchpoint (planner questions, plan
    /// approval, deviation) after validating them against its questions. It
    /// does not advance the run: [`Run::resume`](crate::Run::resume) does.
    ///
    /// # Errors
    ///
    /// Answers that do not fit the questions (nothing is recorded), an
    /// unknown touchpoint, different answers recorded first
    /// ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn answer(
        &self,
        run: &RunId,
        touchpoint: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
    ) -> Result<Resolution, EngineError> {
        self.answer_with(
            run,
            touchpoint,
            DecisionRequest::new(TouchpointAnswers::new(answers), decided_by),
        )
    }

    /// Like [`answer`](Self::answer), with the whole request: answers a
    /// client gives keep its name ([`DecisionRequest::by_client`]).
    ///
    /// # Errors
    ///
    /// As [`answer`](Self::answer).
    pub fn answer_with(
        &self,
        run: &RunId,
        touchpoint: &HandoffId,
        mut request: DecisionRequest<TouchpointAnswers>,
    ) -> Result<Resolution, EngineError> {
        let store = SupervisionStore::new(
            std::sync::Arc::clone(&self.storage),
            run.clone(),
            self.clock.clone(),
        );
        self.refuse_ended(run, || {
            store.get(touchpoint).is_ok_and(|t| t.resolution.is_some())
        })?;
        if request.who().is_none()
            && request.decided_by() != DecidedBy::CiAgent
            && let Some(who) = self.decider.as_deref()
        {
            request = request.by(who);
        }
        store
            .answer_with(touchpoint, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))
    }

    /// Records the delivery decision. It changes nothing yet:
    /// [`Run::resume`](crate::Run::resume) delivers it.
    ///
    /// # Errors
    ///
    /// An action the gate does not offer (with the reason it is blocked), a
    /// target checkout that would conflict, a different decision recorded
    /// first ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn decide_delivery(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.deliveries
                .recorded_decision(run)
                .is_ok_and(|d| d.is_some())
        })?;
        // The target checkout is on the machine that drives the run; from
        // elsewhere it is not read here, and its driver checks it when it
        // delivers.
        let request = self.stamped(request);
        let recorded = if self.runs.elsewhere(run)?.is_some() {
            self.deliveries.decide_from_elsewhere(run, request)
        } else {
            self.deliveries.decide(run, request)
        }
        .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))?;
        if recorded.decision().payload().action() == DeliveryAction::Halt {
            let deliveries = self.deliveries.clone();
            let delivery_err = |e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e)));
            let mut outcome = Ok(());
            self.halt_now(run, |stage| {
                if !matches!(stage, Stage::AtDelivery { opened: true }) {
                    return None;
                }
                let detail = match deliveries.deliver(&recorded) {
                    Ok(orcho_delivery::DeliveryOutcome::Halted { worktree }) => {
                        format!("halted; the worktree is kept at {worktree}")
                    }
                    Ok(_) => "halted".to_owned(),
                    Err(e) => {
                        outcome = Err(delivery_err(e));
                        return None;
                    }
                };
                Some(RunEvent::Delivered {
                    action: DeliveryAction::Halt,
                    detail,
                })
            })?;
            outcome?;
        }
        Ok(recorded)
    }

    /// Ends `run` where it stands: at a decision point nobody has to take
    /// any more, or between steps. The decision points it waited on stay as
    /// they were, and leave the inbox. Its evidence is written.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_busy`] while another process drives it,
    /// [`EngineError::is_terminal`] when it has ended already.
    pub fn cancel(&self, run: &RunId, reason: &str, by: DecidedBy) -> Result<RunView, EngineError> {
        let mut stored = self.runs.open(run)?;
        if stored.state.status().is_terminal() {
            return Err(EngineError::run(
                run,
                crate::Refusal::Ended {
                    status: stored.state.status(),
                    reason: stored.state.reason().unwrap_or_default().to_owned(),
                },
            ));
        }
        stored.commit(
            &RunEvent::Cancelled {
                reason: reason.to_owned(),
                by,
            },
            self.clock.as_ref(),
        )?;
        let view = RunView::from(&stored.state);
        drop(stored);
        self.write_evidence(&self.evidence(run, None)?)?;
        Ok(view)
    }

    /// Writes `evidence` where the store keeps the run's evidence bundle
    /// ([`evidence_path`](Self::evidence_path)), replacing what was there.
    ///
    /// # Errors
    ///
    /// When it cannot be encoded or written.
    pub fn write_evidence(&self, evidence: &crate::Evidence) -> Result<(), EngineError> {
        let run = &evidence.run;
        let mut bytes = serde_json::to_vec_pretty(evidence)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Encode(Box::new(e))))?;
        bytes.push(b'\n');
        self.storage
            .put(run, orcho_core::storage::Item::Evidence, &bytes)
            .map_err(|e| EngineError::run(run, e))
    }
}
