//! [`Host`]: for hosts that want the engine to drive the loop.

use std::future::Future;

use orcho_delivery::{DeliveryGate, IntakeReport};
use orcho_handoff::{
    DecidedBy, DecisionRequest, DeliveryChoice, HandoffChoice, IntakeChoice, PhaseHandoff,
    supervision::Answer,
};

use crate::{EngineError, PhaseReport, PhaseRequest, Run, Step, SupervisionRequest};

/// What a host provides when it lets [`drive`] run the loop: a way to run a
/// phase, a way to ask an operator, and a place to report progress.
///
/// Hosts that drive the step API themselves ([`Run::next`],
/// [`Run::complete_phase`], [`Store::decide`](crate::Store::decide),
/// [`Run::resume`]) need no trait.
///
/// The methods return `Send` futures so `drive` can run on a multi-threaded
/// runtime.
pub trait Host {
    /// The host's own error (its runner or UI failing).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Runs one phase attempt and reports its outcome.
    fn run_phase(
        &mut self,
        request: &PhaseRequest,
    ) -> impl Future<Output = Result<PhaseReport, Self::Error>> + Send;

    /// Asks an operator to decide a handoff. `None` means nobody can decide
    /// now: `drive` returns, leaving the run paused (typed state on disk for
    /// a later decision).
    fn decide(
        &mut self,
        handoff: &PhaseHandoff,
    ) -> impl Future<Output = Result<Option<DecisionRequest<HandoffChoice>>, Self::Error>> + Send;

    /// Asks an operator what a run starts from when the target checkout has
    /// uncommitted changes. `None` (the default) leaves the question open.
    fn decide_intake(
        &mut self,
        report: &IntakeReport,
    ) -> impl Future<Output = Result<Option<DecisionRequest<IntakeChoice>>, Self::Error>> + Send
    {
        let _ = report;
        async { Ok(None) }
    }

    /// Asks an operator a supervision touchpoint's questions (planner
    /// questions, plan approval, a deviation): render
    /// [`SupervisionRequest::questions`] and return one answer per
    /// question. `None` (the default) leaves the touchpoint open.
    fn answer(
        &mut self,
        request: &SupervisionRequest,
    ) -> impl Future<Output = Result<Option<Vec<Answer>>, Self::Error>> + Send {
        let _ = request;
        async { Ok(None) }
    }

    /// Asks an operator to decide the delivery gate. `None` (the default)
    /// leaves the run parked at its gate.
    fn decide_delivery(
        &mut self,
        gate: &DeliveryGate,
    ) -> impl Future<Output = Result<Option<DecisionRequest<DeliveryChoice>>, Self::Error>> + Send
    {
        let _ = gate;
        async { Ok(None) }
    }

    /// Hears about every step (for progress output). The default does
    /// nothing.
    fn progress(&mut self, step: &Step) {
        let _ = step;
    }
}

/// Why [`drive`] stopped early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError<E: std::error::Error + Send + Sync + 'static> {
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The host failed.
    #[error("the host failed")]
    Host(#[source] E),
}

/// Runs `run` to its end (or to a pause nobody can decide now) with `host`
/// doing the phases and the deciding. Returns the last step: finished, or
/// the open decision point.
///
/// # Errors
///
/// The engine's errors and the host's.
pub async fn drive<H: Host + Send>(
    run: &mut Run,
    host: &mut H,
) -> Result<Step, DriveError<H::Error>> {
    let mut step = run.next().await?;
    loop {
        host.progress(&step);
        step = match step {
            Step::RunPhase(request) => {
                let report = host.run_phase(&request).await.map_err(DriveError::Host)?;
                run.complete_phase(report).await?
            }
            Step::DecideHandoff(handoff) => {
                let Some(request) = host.decide(&handoff).await.map_err(DriveError::Host)? else {
                    return Ok(Step::DecideHandoff(handoff));
                };
                run.engine()
                    .store()
                    .decide(run.id(), handoff.id(), request)?;
                match run.resume().await {
                    Ok(next) => next,
                    Err(e) if e.is_terminal() => run.next().await?,
                    Err(e) => return Err(e.into()),
                }
            }
            Step::DecideIntake(report) => {
                let Some(request) = host
                    .decide_intake(&report)
                    .await
                    .map_err(DriveError::Host)?
                else {
                    return Ok(Step::DecideIntake(report));
                };
                run.engine().store().decide_intake(run.id(), request)?;
                run.resume().await?
            }
            Step::AnswerQuestions(ref request)
            | Step::ApprovePlan(ref request)
            | Step::HandleDeviation(ref request) => {
                let Some(answers) = host.answer(request).await.map_err(DriveError::Host)? else {
                    return Ok(step);
                };
                run.engine()
                    .store()
                    .answer(run.id(), &request.id, answers, DecidedBy::Operator)?;
                run.resume().await?
            }
            Step::DecideDelivery(gate) => {
                let Some(request) = host
                    .decide_delivery(&gate)
                    .await
                    .map_err(DriveError::Host)?
                else {
                    return Ok(Step::DecideDelivery(gate));
                };
                run.engine().store().decide_delivery(run.id(), request)?;
                run.resume().await?
            }
            finished @ Step::Finished { .. } => return Ok(finished),
        };
    }
}
