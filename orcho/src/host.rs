//! [`Host`] and [`drive`]: the one loop that carries a run from step to
//! step, for every host.

use std::future::Future;

use orcho_delivery::{DeliveryGate, IntakeReport};
use orcho_handoff::{
    autopilot::AutopilotOutcome,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
    handoff::{HandoffChoice, PhaseHandoff},
    intake::IntakeChoice,
    supervision::Answer,
};

use crate::{EngineError, PhaseEvidence, PhaseReport, PhaseRequest, Run, Step, SupervisionRequest};

/// What a host provides when it lets [`drive`] run the loop: a way to run a
/// phase, a way to ask whoever decides, and a place to report progress.
///
/// Every method but [`run_phase`](Self::run_phase) has a default: a host
/// that decides nothing (an MCP server, a CI job) leaves each decision
/// point open, and `drive` returns the run paused there, typed state on
/// disk for a decision taken later from anywhere.
///
/// `drive` keeps the rules, so a host keeps none: a decision recorded
/// elsewhere (another process, before a restart) is acted on before the
/// host is asked; the CI autopilot acts at a handoff when the plan and the
/// host allow it; a decision the store refuses as a conflict gives way to
/// the one recorded first.
///
/// The methods return `Send` futures so `drive` can run on a multi-threaded
/// runtime.
pub trait Host {
    /// The host's own error (its runner or its UI failing).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Runs one phase attempt and reports its outcome.
    fn run_phase(
        &mut self,
        request: &PhaseRequest,
    ) -> impl Future<Output = Result<PhaseReport, Self::Error>> + Send;

    /// Asks whoever decides about a handoff. `None` (the default): nobody
    /// can decide now, and the run stays paused there.
    fn decide(
        &mut self,
        handoff: &PhaseHandoff,
    ) -> impl Future<Output = Result<Option<DecisionRequest<HandoffChoice>>, Self::Error>> + Send
    {
        let _ = handoff;
        async { Ok(None) }
    }

    /// Asks what a run starts from when the target checkout has
    /// uncommitted changes. `None` (the default) leaves the question open.
    fn decide_intake(
        &mut self,
        report: &IntakeReport,
    ) -> impl Future<Output = Result<Option<DecisionRequest<IntakeChoice>>, Self::Error>> + Send
    {
        let _ = report;
        async { Ok(None) }
    }

    /// Asks a supervision touchpoint's questions (planner questions, plan
    /// approval, a deviation): render [`SupervisionRequest::questions`] and
    /// return one answer per question. `None` (the default) leaves the
    /// touchpoint open.
    fn answer(
        &mut self,
        request: &SupervisionRequest,
    ) -> impl Future<Output = Result<Option<Vec<Answer>>, Self::Error>> + Send {
        let _ = request;
        async { Ok(None) }
    }

    /// Asks to decide the delivery gate. `None` (the default) leaves the
    /// run parked at its gate.
    fn decide_delivery(
        &mut self,
        gate: &DeliveryGate,
    ) -> impl Future<Output = Result<Option<DecisionRequest<DeliveryChoice>>, Self::Error>> + Send
    {
        let _ = gate;
        async { Ok(None) }
    }

    /// Nobody decided at `step` through this host: whether to wait for a
    /// decision made elsewhere (another process, machine or client, through
    /// a shared store). Return `true` once something may have been recorded
    /// ([`Store::subscribe`](crate::Store::subscribe) wakes within moments
    /// on a store that can tell): `drive` looks, acts on a decision it finds
    /// and otherwise asks and waits again. `false` (the default) leaves the
    /// run waiting there, and `drive` returns.
    fn wait(&mut self, step: &Step) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        let _ = step;
        async { Ok(false) }
    }

    /// Whether, shown a delivery gate and deciding nothing, the host asked
    /// for the gate's missing and stale receipts to be run again
    /// ([`Run::rerun_receipts`](crate::Run::rerun_receipts)): the gate is
    /// then shown again, as it is (default: no).
    fn rerun_at_gate(&mut self) -> bool {
        false
    }

    /// Who answers touchpoints through this host (default: an operator).
    fn answered_by(&self) -> DecidedBy {
        DecidedBy::Operator
    }

    /// Whether the CI autopilot may act at a handoff before this host is
    /// asked (default: no). It acts only where the plan turns it on and the
    /// engine has an advisor.
    fn autopilot(&self) -> bool {
        false
    }

    /// A decision this host gave was refused without being recorded (a
    /// delivery whose target changed while it was asked, say): `true` asks
    /// the host again, `false` (the default) ends `drive` with the refusal.
    fn refused(&mut self, step: &Step, error: &EngineError) -> bool {
        let _ = (step, error);
        false
    }

    /// Hears what happens, for progress output. The default does nothing.
    fn progress(&mut self, event: Progress<'_>) {
        let _ = event;
    }
}

/// What [`drive`] tells its host as the run goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// The run needs this step; the host is asked next (or, for a phase,
    /// runs it).
    Step(&'a Step),
    /// A phase attempt settled: what it reported, its gates and where it
    /// sent the run.
    Settled(&'a PhaseEvidence),
    /// The CI autopilot acted, or stopped and left the handoff to a
    /// person.
    Autopilot(&'a AutopilotOutcome),
    /// Another decision was recorded at this point first (from another
    /// process or client); the run goes on with that one.
    DecidedElsewhere(&'a Step),
    /// The point just shown as waiting was decided elsewhere, while the host
    /// waited on it ([`Host::wait`]) or before it looked again; the run goes
    /// on with that decision.
    DecidedWhileWaiting(&'a Step),
    /// The point the run waited at when `drive` started was decided
    /// already (by `orcho handoff decide`, say, before `orcho resume`): it
    /// is not shown as waiting; the run goes on with that decision.
    ActingOnDecided(&'a Step),
}

/// Why [`drive`] stopped early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError<E: std::error::Error + Send + Sync + 'static> {
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The host failed.
    #[error(transparent)]
    Host(E),
}

/// Runs `run` to its end, or to a decision point nobody can decide now,
/// with `host` running the phases and asked at each decision point.
/// Returns the last step: [`Step::Finished`], or the decision point the run
/// is paused at.
///
/// At each decision point, in order: a decision already recorded is acted
/// on; the CI autopilot acts at a handoff where it may
/// ([`Host::autopilot`]); the host is asked, and its decision recorded and
/// acted on (one recorded first by somebody else stands instead,
/// [`Progress::DecidedElsewhere`]); a host that waits ([`Host::wait`]) has
/// the run act on a decision made elsewhere as soon as it is recorded.
///
/// # Errors
///
/// The engine's errors and the host's.
pub async fn drive<H: Host + Send>(
    run: &mut Run,
    host: &mut H,
) -> Result<Step, DriveError<H::Error>> {
    let mut step = run.next().await?;
    // A point decided before this drive started is acted on, not shown as
    // waiting.
    if step.waiting().is_some() {
        let now = run.resume().await?;
        if now.waiting() != step.waiting() {
            host.progress(Progress::ActingOnDecided(&step));
        }
        step = now;
    }
    loop {
        host.progress(Progress::Step(&step));
        step = match step {
            Step::RunPhase(request) => {
                let report = host.run_phase(&request).await.map_err(DriveError::Host)?;
                let next = run.complete_phase(report).await?;
                if let Some(attempt) =
                    run.engine()
                        .store()
                        .phases(run.id())?
                        .iter()
                        .rev()
                        .find(|p| {
                            p.phase == request.phase
                                && p.attempt == request.attempt
                                && p.round == request.round
                        })
                {
                    host.progress(Progress::Settled(attempt));
                }
                next
            }
            finished @ Step::Finished { .. } => return Ok(finished),
            waiting => {
                // Decided elsewhere, or before a restart: act on it first,
                // and say so (the point was just shown as waiting).
                let now = run.resume().await?;
                if now.waiting() != waiting.waiting() {
                    host.progress(Progress::DecidedWhileWaiting(&waiting));
                    now
                } else if let Some(next) = autopilot(run, host, &waiting).await? {
                    next
                } else if let Some(asked) = ask(run, host, &waiting).await? {
                    match asked {
                        Asked::Decided => run.resume().await?,
                        Asked::Again(step) => *step,
                    }
                } else if host.wait(&waiting).await.map_err(DriveError::Host)? {
                    let now = run.resume().await?;
                    if now.waiting() != waiting.waiting() {
                        host.progress(Progress::DecidedWhileWaiting(&waiting));
                    }
                    now
                } else {
                    return Ok(waiting);
                }
            }
        };
    }
}

/// The CI autopilot at a handoff, where the host and the plan let it act:
/// the next step after a retry it recorded, `None` when it did not act.
async fn autopilot<H: Host + Send>(
    run: &mut Run,
    host: &mut H,
    waiting: &Step,
) -> Result<Option<Step>, DriveError<H::Error>> {
    let plan = run.engine().plan();
    let acts = matches!(waiting, Step::DecideHandoff(_))
        && host.autopilot()
        && plan.autopilot_enabled
        && run.engine().advisor().is_some();
    if !acts {
        return Ok(None);
    }
    let (outcome, next) = run.autopilot().await?;
    host.progress(Progress::Autopilot(&outcome));
    Ok(match outcome {
        AutopilotOutcome::Retried { .. } => Some(next),
        _ => None,
    })
}

/// What asking the host at a point did.
enum Asked {
    /// A decision is recorded.
    Decided,
    /// The point is shown again, as it is now (the gate after its
    /// receipts were run again).
    Again(Box<Step>),
}

/// Asks the host at `waiting` and records its decision: `None` when nobody
/// decided.
async fn ask<H: Host + Send>(
    run: &mut Run,
    host: &mut H,
    waiting: &Step,
) -> Result<Option<Asked>, DriveError<H::Error>> {
    let store = run.engine().store();
    let id = run.id();
    loop {
        let recorded = match waiting {
            Step::DecideHandoff(handoff) => {
                let Some(request) = host.decide(handoff).await.map_err(DriveError::Host)? else {
                    return Ok(None);
                };
                store.decide(id, handoff.id(), request).map(drop)
            }
            Step::DecideIntake(report) => {
                let Some(request) = host.decide_intake(report).await.map_err(DriveError::Host)?
                else {
                    return Ok(None);
                };
                store.decide_intake(id, request).map(drop)
            }
            Step::AnswerQuestions(request)
            | Step::ApprovePlan(request)
            | Step::HandleDeviation(request) => {
                let Some(answers) = host.answer(request).await.map_err(DriveError::Host)? else {
                    return Ok(None);
                };
                store
                    .answer(id, &request.id, answers, host.answered_by())
                    .map(drop)
            }
            Step::DecideDelivery(gate) => {
                let Some(request) = host.decide_delivery(gate).await.map_err(DriveError::Host)?
                else {
                    if host.rerun_at_gate() {
                        let (_, gate) = run.rerun_receipts().await?;
                        return Ok(Some(Asked::Again(Box::new(Step::DecideDelivery(gate)))));
                    }
                    return Ok(None);
                };
                store.decide_delivery(id, request).map(drop)
            }
            Step::RunPhase(_) | Step::Finished { .. } => return Ok(None),
        };
        match recorded {
            Ok(()) => return Ok(Some(Asked::Decided)),
            Err(e) if e.is_conflict() => {
                host.progress(Progress::DecidedElsewhere(waiting));
                return Ok(Some(Asked::Decided));
            }
            Err(e) if host.refused(waiting, &e) => {}
            Err(e) => return Err(e.into()),
        }
    }
}
