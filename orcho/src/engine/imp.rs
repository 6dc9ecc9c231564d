use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Clock, Finding, HandoffId, RunId, RunStatus, SystemClock, Verdict};
use orcho_delivery::{DeliveryGates, Intakes};
use orcho_gates::{GateContext, GateOutcome, GateRecord, ScheduledGate, Scheduler, phase_effect};
use orcho_handoff::{
    AdviceRecord, AdviceRequest, Advisor, Autopilot, AutopilotOutcome, DecidedBy, DecisionRequest,
    HandoffChoice, HandoffSpec, HandoffStore, NextStep, PhaseHandoff, RecordedDecision,
};
use orcho_receipts::{ReceiptStatus, ReceiptStore, Verifier, apply_acceptance, exec::BaseEnv};

use super::step::{PhaseReport, PhaseRequest, Step};
use crate::{
    EngineError,
    error::EngineErrorKind,
    plan::{PhaseRole, RunPlan},
    state::{RunEvent, RunState, Transition},
    store::{RunStore, StoredRun},
};

/// Drives runs of one [`RunPlan`] in one store.
///
/// Cheap to clone. Methods that change a run go through a [`Run`], which
/// holds the run's exclusive lock; [`decide`](Self::decide) and
/// [`advise`](Self::advise) do not need it, so an operator in another
/// process can decide while the run waits.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) plan: RunPlan,
    pub(super) runs: RunStore,
    pub(super) handoffs: HandoffStore,
    pub(super) intakes: Intakes,
    pub(super) deliveries: DeliveryGates,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) advisor: Option<Arc<dyn Advisor>>,
    pub(super) scheduler: Scheduler,
    pub(super) base_env: BaseEnv,
}

/// Builds an [`Engine`].
#[derive(Debug)]
#[must_use]
pub struct EngineBuilder {
    plan: RunPlan,
    store: Utf8PathBuf,
    clock: Arc<dyn Clock>,
    advisor: Option<Arc<dyn Advisor>>,
    concurrency: usize,
    base_env: BaseEnv,
}

impl EngineBuilder {
    /// Uses `clock` for every timestamp (a fixed clock makes evidence
    /// byte-stable in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `advisor` for advice and the CI autopilot.
    pub fn advisor(mut self, advisor: Arc<dyn Advisor>) -> Self {
        self.advisor = Some(advisor);
        self
    }

    /// How many inferential gates of one wave run at once.
    pub fn inferential_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The environment declared commands inherit (default: this process's).
    pub fn base_env(mut self, base: BaseEnv) -> Self {
        self.base_env = base;
        self
    }

    /// The engine.
    ///
    /// # Errors
    ///
    /// When the plan's verification contract is invalid.
    pub fn build(self) -> Result<Engine, EngineError> {
        if let Some(contract) = &self.plan.verification {
            contract.validate().map_err(|e| {
                EngineError::store(&self.store, EngineErrorKind::Contract(Box::new(e)))
            })?;
        }
        let scheduler = Scheduler::builder(self.store.join("locks"))
            .inferential_concurrency(self.concurrency)
            .build();
        Ok(Engine {
            inner: Arc::new(Inner {
                plan: self.plan,
                runs: RunStore::new(self.store.clone()),
                intakes: Intakes::new(self.store.clone(), Arc::clone(&self.clock)),
                deliveries: DeliveryGates::new(self.store.clone(), Arc::clone(&self.clock)),
                handoffs: HandoffStore::new(self.store, Arc::clone(&self.clock)),
                clock: self.clock,
                advisor: self.advisor,
                scheduler,
                base_env: self.base_env,
            }),
        })
    }
}

impl Engine {
    /// A builder for runs of `plan`, stored under `store` (usually
    /// `<checkout>/.orcho`).
    pub fn builder(plan: RunPlan, store: impl Into<Utf8PathBuf>) -> EngineBuilder {
        EngineBuilder {
            plan,
            store: store.into(),
            clock: Arc::new(SystemClock::new()),
            advisor: None,
            concurrency: 4,
            base_env: BaseEnv::inherit(),
        }
    }

    /// The plan.
    pub fn plan(&self) -> &RunPlan {
        &self.inner.plan
    }

    /// The run store.
    pub fn runs(&self) -> &RunStore {
        &self.inner.runs
    }

    /// The handoff store (handoffs, decisions, advice, waivers).
    pub fn handoffs(&self) -> &HandoffStore {
        &self.inner.handoffs
    }

    /// Starts a run in place on `checkout` and returns it, locked for
    /// driving: [`start_with`](Self::start_with)`(`[`Start::in_place`](crate::Start::in_place)`)`.
    ///
    /// # Errors
    ///
    /// When the run cannot be created.
    pub fn start(&self, checkout: &Utf8Path) -> Result<Run, EngineError> {
        self.start_with(crate::Start::in_place(checkout))
    }

    /// Opens an existing run for driving, replaying its journal.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_busy`] when another process drives it,
    /// [`EngineError::is_unknown_run`], or a damaged journal.
    pub fn open(&self, run: &RunId) -> Result<Run, EngineError> {
        let stored = self.inner.runs.open(run)?;
        Ok(Run {
            engine: self.clone(),
            stored,
        })
    }

    /// Records a decision on a handoff. It does not advance the run: the run
    /// moves on [`Run::resume`] (or the next [`Run::next`]).
    ///
    /// # Errors
    ///
    /// A refused action (not on the handoff's menu, text missing), a conflict
    /// with a different recorded decision ([`EngineError::is_conflict`]), or
    /// an unknown handoff.
    pub fn decide(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        request: DecisionRequest<HandoffChoice>,
    ) -> Result<RecordedDecision<HandoffChoice>, EngineError> {
        self.inner
            .handoffs
            .decide(run, handoff, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// Asks the advisor about a paused handoff and records the advice as an
    /// artifact. The advice is never applied by itself.
    ///
    /// # Errors
    ///
    /// No advisor, an unknown handoff, or an advisor failure.
    pub async fn advise(
        &self,
        run: &RunId,
        handoff: &HandoffId,
    ) -> Result<AdviceRecord, EngineError> {
        let advisor = self
            .inner
            .advisor
            .clone()
            .ok_or_else(|| EngineError::run(run, EngineErrorKind::NoAdvisor))?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let paused = self
            .inner
            .handoffs
            .handoff(run, handoff)
            .map_err(handoff_err)?;
        let history: Vec<PhaseHandoff> = self
            .inner
            .handoffs
            .handoffs(run)
            .map_err(handoff_err)?
            .into_iter()
            .filter(|h| h.phase() == paused.phase() && h.id() < paused.id())
            .collect();
        let output = self.phase_output(run, &paused);
        let request = AdviceRequest::new(&paused, &output, &history);
        let advice = advisor
            .advise(&request)
            .await
            .map_err(|e| EngineError::run(run, EngineErrorKind::Advisor(e)))?;
        self.inner
            .handoffs
            .record_advice(run, handoff, advisor.name(), &advice, DecidedBy::Operator)
            .map_err(handoff_err)
    }

    /// The summary of the latest report of the handoff's phase, for advisors.
    fn phase_output(&self, run: &RunId, handoff: &PhaseHandoff) -> String {
        let Ok(events) = self.inner.runs.events(run) else {
            return String::new();
        };
        events
            .into_iter()
            .rev()
            .find_map(|(_, e)| match e {
                RunEvent::PhaseReported { phase, outcome, .. } if &phase == handoff.phase() => {
                    Some(outcome.summary)
                }
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The run's evidence bundle: phases with their gates (outcomes,
    /// strategies, durations), the receipts' classification, handoffs with
    /// their decisions, the `handoff_advice` section and the costs. Also
    /// written to `runs/<id>/evidence.json`.
    ///
    /// # Errors
    ///
    /// When the run, its handoffs or its receipts cannot be read, or the
    /// bundle cannot be written.
    pub fn evidence(&self, run: &RunId) -> Result<crate::Evidence, EngineError> {
        let state = self.inner.runs.read(run)?;
        let events = self.inner.runs.events(run)?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.inner.handoffs;
        let mut handoffs = Vec::new();
        for h in store.handoffs(run).map_err(handoff_err)? {
            let decision = store
                .recorded_decision(run, h.id())
                .map_err(handoff_err)?
                .map(|d| {
                    let d = d.decision();
                    crate::evidence::DecisionEvidence {
                        action: d.payload().action(),
                        text: d.payload().text().map(str::to_owned),
                        decided_by: d.decided_by(),
                        advice: d.advice().map(ToString::to_string),
                        decided_at: d.decided_at(),
                    }
                });
            handoffs.push(crate::evidence::HandoffEvidence {
                id: h.id().clone(),
                phase: h.phase().clone(),
                trigger: h.trigger().to_string(),
                verdict: h.verdict(),
                available_actions: h.available_actions().iter().collect(),
                decision,
            });
        }
        let phases = crate::evidence::phases(&events);
        let (intake, touchpoints, delivery) = crate::evidence::points(&events);
        let passed: Vec<orcho_core::PhaseName> = phases
            .iter()
            .filter(|p| p.next.as_deref() == Some("advance"))
            .map(|p| p.phase.clone())
            .collect();
        let handoff_advice = orcho_handoff::HandoffAdviceEvidence::collect(store, run, &passed)
            .map_err(handoff_err)?;
        let receipts = match self.verifier(&state.checkout)? {
            Some(v) => Some(
                serde_json::from_str(
                    &v.readiness()
                        .map_err(|e| EngineError::run(run, EngineErrorKind::Receipts(Box::new(e))))?
                        .to_json(),
                )
                .unwrap_or(serde_json::Value::Null),
            ),
            None => None,
        };
        let evidence = crate::Evidence {
            schema: crate::evidence::EVIDENCE_SCHEMA,
            run: run.clone(),
            plan: state.plan.clone(),
            status: state.status,
            reason: state.reason.clone(),
            phases,
            receipts,
            handoffs,
            handoff_advice,
            cost: state.cost,
            intake,
            touchpoints,
            delivery,
            follow_up_of: state.follow_up,
        };
        let mut bytes = serde_json::to_vec_pretty(&evidence)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Encode(Box::new(e))))?;
        bytes.push(b'\n');
        orcho_core::fs::write_atomic(&self.inner.runs.run_dir(run).join("evidence.json"), &bytes)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Fs(Box::new(e))))?;
        Ok(evidence)
    }

    /// The run's trace: one line per durable transition, without times or
    /// ids, for tests and humans.
    ///
    /// # Errors
    ///
    /// When the run cannot be read.
    pub fn trace(&self, run: &RunId) -> Result<String, EngineError> {
        let mut out = String::new();
        for (_, event) in self.inner.runs.events(run)? {
            out.push_str(&event.trace_line());
            out.push('\n');
        }
        Ok(out)
    }

    pub(super) fn verifier(
        &self,
        checkout: &Utf8Path,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        let Some(contract) = &self.inner.plan.verification else {
            return Ok(None);
        };
        let verifier = Verifier::new(
            contract.clone(),
            checkout,
            ReceiptStore::new(self.inner.runs.root()),
        )
        .map_err(|e| {
            EngineError::store(
                self.inner.runs.root(),
                EngineErrorKind::Contract(Box::new(e)),
            )
        })?
        .with_clock(Arc::clone(&self.inner.clock))
        .with_base_env(self.inner.base_env.clone());
        Ok(Some(Arc::new(verifier)))
    }
}

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
        &self.stored.state.run
    }

    /// Where the run stands.
    pub fn state(&self) -> &RunState {
        &self.stored.state
    }

    /// The run's directory in the store.
    pub fn dir(&self) -> &Utf8Path {
        self.stored.dir()
    }

    /// The engine driving it.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(super) fn commit(&mut self, event: RunEvent) -> Result<(), EngineError> {
        let clock = Arc::clone(&self.engine.inner.clock);
        self.stored.commit(event, clock.as_ref())
    }

    pub(super) fn err(&self, kind: EngineErrorKind) -> EngineError {
        EngineError::run(self.id(), kind)
    }

    fn handoff_err(&self, e: orcho_handoff::HandoffError) -> EngineError {
        self.err(EngineErrorKind::Handoff(Box::new(e)))
    }

    pub(super) fn finished(&self) -> Step {
        let state = self.state();
        Step::Finished {
            status: state.status,
            reason: state.reason.clone().unwrap_or_default(),
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
            let state = self.state().clone();
            match state.status {
                RunStatus::AwaitingPhaseHandoff => {
                    let handoff = match &state.handoff {
                        Some(id) => self
                            .engine
                            .inner
                            .handoffs
                            .handoff(self.id(), id)
                            .map_err(|e| self.handoff_err(e))?,
                        None => self.open_handoff()?,
                    };
                    // A recorded `halt` ends the run without a resume.
                    if let Some(decision) = self
                        .engine
                        .inner
                        .handoffs
                        .recorded_decision(self.id(), handoff.id())
                        .map_err(|e| self.handoff_err(e))?
                        && *decision.decision().payload() == HandoffChoice::Halt
                    {
                        self.commit(RunEvent::HandoffResumed {
                            handoff: handoff.id().clone(),
                            resumption: crate::state::Resumption::Halt,
                        })?;
                        continue;
                    }
                    return Ok(Step::DecideHandoff(handoff));
                }
                RunStatus::Created if state.workspace.is_some() => self.prepare()?,
                RunStatus::AwaitingIntake => {
                    if let Some(step) = self.intake_step()? {
                        return Ok(step);
                    }
                }
                RunStatus::AwaitingQuestions
                | RunStatus::AwaitingPlanApproval
                | RunStatus::AwaitingDeviation => return self.touchpoint_step(),
                RunStatus::AwaitingDelivery => {
                    if let Some(step) = self.delivery_step().await? {
                        return Ok(step);
                    }
                }
                RunStatus::Running if state.in_flight.is_some() => {
                    self.run_gates().await?;
                }
                RunStatus::Running => return self.phase_request().await,
                _ => return Ok(self.finished()),
            }
        }
    }

    async fn phase_request(&mut self) -> Result<Step, EngineError> {
        let engine = self.engine.clone();
        let plan = &engine.inner.plan;
        let state = self.state().clone();
        let Some(phase) = plan.phases.get(state.phase) else {
            return Ok(self.finished());
        };
        let mut input = state.input.clone();
        input.follow_up = state.follow_up.as_ref().map(|f| f.brief.clone());
        if phase.role == PhaseRole::FinalAcceptance
            && let Some(verifier) = self.engine.verifier(&state.checkout)?
        {
            let cursor = (state.phase, state.round, state.attempt);
            if state.receipts_rerun_at != Some(cursor) {
                let summary = blocking_readiness(&verifier)
                    .await
                    .map_err(|e| self.err(e))?;
                let rerun: Vec<_> = summary
                    .required
                    .iter()
                    .filter(|r| {
                        matches!(
                            r.status,
                            ReceiptStatus::Missing | ReceiptStatus::Stale { .. }
                        )
                    })
                    .map(|r| r.command.clone())
                    .collect();
                for command in &rerun {
                    let v = Arc::clone(&verifier);
                    let command = command.clone();
                    tokio::task::spawn_blocking(move || v.run_command(&command, None))
                        .await
                        .map_err(|e| self.err(EngineErrorKind::Task(e.to_string())))?
                        .map_err(|e| self.err(EngineErrorKind::Receipts(Box::new(e))))?;
                }
                self.commit(RunEvent::ReceiptsRerun {
                    commands: rerun.iter().map(ToString::to_string).collect(),
                })?;
            }
            let summary = blocking_readiness(&verifier)
                .await
                .map_err(|e| self.err(e))?;
            input.readiness = Some(summary.to_markdown());
        }
        Ok(Step::RunPhase(PhaseRequest {
            run: state.run.clone(),
            phase: phase.name.clone(),
            role: phase.role.clone(),
            attempt: state.attempt,
            round: state.round,
            input,
        }))
    }

    /// Reports the current phase attempt, runs its gates (persisting each
    /// result as it is known), applies their effect and the verdict, and
    /// returns what the run needs next.
    ///
    /// # Errors
    ///
    /// [`EngineErrorKind::WrongState`] when no phase attempt is expected (the
    /// run is paused or has ended), or a store error.
    pub async fn complete_phase(&mut self, report: PhaseReport) -> Result<Step, EngineError> {
        let state = self.state().clone();
        match state.status {
            RunStatus::Running if state.in_flight.is_none() => {}
            RunStatus::AwaitingPhaseHandoff => return Err(self.awaiting()),
            status if status.is_terminal() => return Err(self.terminal()),
            status => {
                return Err(self.err(EngineErrorKind::WrongState {
                    action: "complete a phase",
                    status,
                }));
            }
        }
        let Some(phase) = state.current_phase().cloned() else {
            return Ok(self.finished());
        };
        if let Some(interruption) = report.interruption {
            self.interrupt(interruption, report.cost)?;
            return self.next().await;
        }
        self.commit(RunEvent::PhaseReported {
            phase,
            attempt: state.attempt,
            round: state.round,
            outcome: report.outcome,
            cost: report.cost,
            plan: report.plan,
        })?;
        self.run_gates().await?;
        self.next().await
    }

    /// The "decide first" error, naming the open handoff (opening it if a
    /// process died before it could).
    fn awaiting(&mut self) -> EngineError {
        let handoff = match &self.state().handoff {
            Some(id) => self.engine.inner.handoffs.handoff(self.id(), id),
            None => match self.open_handoff() {
                Ok(handoff) => Ok(handoff),
                Err(e) => return e,
            },
        };
        match handoff {
            Ok(handoff) => self.err(EngineErrorKind::AwaitingDecision {
                handoff: handoff.id().clone(),
                available: handoff.available_actions().iter().collect(),
            }),
            Err(e) => self.handoff_err(e),
        }
    }

    pub(super) fn terminal(&self) -> EngineError {
        self.err(EngineErrorKind::Terminal {
            status: self.state().status,
            reason: self.state().reason.clone().unwrap_or_default(),
        })
    }

    /// Runs the gates of the in-flight attempt that have no record yet, then
    /// merges acceptance gaps and settles the attempt.
    async fn run_gates(&mut self) -> Result<(), EngineError> {
        let engine = self.engine.clone();
        let plan = &engine.inner.plan;
        let state = self.state().clone();
        let Some(flight) = state.in_flight.clone() else {
            return Ok(());
        };
        let Some(phase) = plan.phases.get(state.phase) else {
            return Ok(());
        };
        let verifier = engine.verifier(&state.checkout)?;

        let done: Vec<usize> = flight.records.iter().map(|r| r.index).collect();
        let halted_by = flight
            .records
            .iter()
            .find(|r| r.on_fail == orcho_gates::FailStrategy::Halt && r.result.outcome.is_failure())
            .map(|r| r.result.gate.clone());
        let remaining: Vec<(usize, ScheduledGate)> = phase
            .gates
            .iter()
            .cloned()
            .enumerate()
            .filter(|(i, _)| !done.contains(i))
            .collect();
        if let Some(gate) = halted_by {
            // The process died after a halting result was persisted: record
            // the rest as skipped, never run them.
            for (index, scheduled) in remaining {
                let record = skipped_record(index, &scheduled, &format!("halted by gate `{gate}`"));
                self.commit(RunEvent::GateRecorded { record })?;
            }
        } else if !remaining.is_empty() {
            let mut ctx = GateContext::new(
                state.run.clone(),
                phase.name.clone(),
                &state.checkout,
                flight.outcome.clone(),
            )
            .with_attempt(state.attempt)
            .with_round(state.round)
            .with_store(engine.inner.runs.root());
            if let Some(v) = &verifier {
                ctx = ctx.with_verifier(Arc::clone(v));
            }
            let indices: Vec<usize> = remaining.iter().map(|(i, _)| *i).collect();
            let gates: Vec<ScheduledGate> = remaining.into_iter().map(|(_, g)| g).collect();
            let mut failure = None;
            engine
                .inner
                .scheduler
                .run(&ctx, &gates, |record| {
                    let mut record = record.clone();
                    record.index = indices[record.index];
                    self.commit(RunEvent::GateRecorded { record }).map_err(|e| {
                        let message = orcho_core::error_chain(&e);
                        failure = Some(e);
                        message.into()
                    })
                })
                .await
                .map_err(|e| {
                    failure
                        .take()
                        .unwrap_or_else(|| self.err(EngineErrorKind::Schedule(Box::new(e))))
                })?;
        }

        let state = self.state().clone();
        let Some(flight) = state.in_flight.clone() else {
            return Ok(());
        };
        let mut records = flight.records.clone();
        records.sort_by_key(|r| r.index);
        let effect = phase_effect(records.iter().map(|r| (&r.result, r.on_fail)));
        let mut verdict = flight.outcome.verdict;
        let mut findings = flight.outcome.findings.clone();

        if phase.role == PhaseRole::FinalAcceptance {
            let (merged, gaps) = match &flight.acceptance {
                Some((merged, gaps)) => (*merged, gaps.clone()),
                None => {
                    let summary = match &verifier {
                        Some(verifier) => blocking_readiness(verifier)
                            .await
                            .map_err(|e| self.err(e))?,
                        None => orcho_receipts::ReadinessSummary::new(vec![], vec![], vec![], 0),
                    };
                    let acceptance = apply_acceptance(verdict, &summary);
                    let waivers = engine
                        .inner
                        .handoffs
                        .waivers(self.id())
                        .map_err(|e| self.handoff_err(e))?;
                    let gaps: Vec<Finding> = acceptance
                        .gaps
                        .iter()
                        .map(orcho_receipts::Gap::to_finding)
                        .filter(|f| !waivers.covers_finding(f))
                        .collect();
                    let merged = if gaps.is_empty() {
                        verdict
                    } else {
                        Verdict::Rejected
                    };
                    self.commit(RunEvent::AcceptanceMerged {
                        reviewer: verdict,
                        verdict: merged,
                        gaps: gaps.clone(),
                    })?;
                    (merged, gaps)
                }
            };
            verdict = merged;
            findings.extend(gaps);
        }

        let mut transition = crate::state::settle(plan, self.state(), verdict, &findings, &effect);
        if transition == Transition::Advance
            && phase.role == PhaseRole::Plan
            && plan.plan_approval
            && let Some(reported) = flight.plan.clone()
        {
            transition = Transition::Supervise {
                touchpoint: orcho_handoff::supervision::Touchpoint::PlanApproval { plan: reported },
            };
        }
        self.commit(RunEvent::PhaseSettled {
            effect: effect.as_str().to_owned(),
            transition,
        })?;
        Ok(())
    }

    /// Opens the handoff of a pause that has none yet (adopting one a dead
    /// process opened but did not journal).
    fn open_handoff(&mut self) -> Result<PhaseHandoff, EngineError> {
        let state = self.state().clone();
        let Some(Transition::Pause {
            trigger,
            verdict,
            findings,
        }) = state.pending_pause.clone()
        else {
            return Err(self.err(EngineErrorKind::WrongState {
                action: "open a handoff",
                status: state.status,
            }));
        };
        let store = &self.engine.inner.handoffs;
        let existing = store.handoffs(self.id()).map_err(|e| self.handoff_err(e))?;
        let handoff = match existing.get(state.handoffs_opened as usize) {
            Some(adopted) => adopted.clone(),
            None => {
                let phase = &self.engine.inner.plan.phases[state.phase];
                let mut spec = HandoffSpec::new(state.run.clone(), phase.name.clone(), verdict)
                    .with_trigger(trigger.to_handoff())
                    .with_round(state.attempt)
                    .with_findings(findings)
                    .with_policy(phase.handoff);
                if let Some(allowed) = phase.allowed_actions {
                    spec = spec.with_allowed_actions(allowed);
                }
                store.open(spec).map_err(|e| self.handoff_err(e))?
            }
        };
        self.commit(RunEvent::HandoffOpened {
            handoff: handoff.id().clone(),
        })?;
        Ok(handoff)
    }

    /// Resumes the run past its decided handoff and returns what it needs
    /// next.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_awaiting_decision`] while no decision is recorded
    /// (naming the handoff and its available actions);
    /// [`EngineError::is_terminal`] after `halt` or once the run has ended;
    /// [`EngineErrorKind::WrongState`] when the run is not paused.
    pub async fn resume(&mut self) -> Result<Step, EngineError> {
        let state = self.state().clone();
        if state.status.is_terminal() {
            return Err(self.terminal());
        }
        match state.status {
            RunStatus::AwaitingIntake => {
                self.apply_intake()?;
                return self.next().await;
            }
            RunStatus::AwaitingQuestions
            | RunStatus::AwaitingPlanApproval
            | RunStatus::AwaitingDeviation => {
                self.resume_touchpoint()?;
                return self.next().await;
            }
            RunStatus::AwaitingDelivery => {
                self.deliver().await?;
                return self.next().await;
            }
            _ => {}
        }
        if state.status != RunStatus::AwaitingPhaseHandoff {
            return Err(self.err(EngineErrorKind::WrongState {
                action: "resume",
                status: state.status,
            }));
        }
        let handoff = match &state.handoff {
            Some(id) => id.clone(),
            None => self.open_handoff()?.id().clone(),
        };
        let store = &self.engine.inner.handoffs;
        let recorded = store
            .recorded_decision(self.id(), &handoff)
            .map_err(|e| self.handoff_err(e))?;
        let Some(recorded) = recorded else {
            return Err(self.awaiting());
        };
        let resumption = match recorded.decision().payload() {
            HandoffChoice::Halt => {
                self.commit(RunEvent::HandoffResumed {
                    handoff,
                    resumption: crate::state::Resumption::Halt,
                })?;
                return Err(self.terminal());
            }
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
        self.commit(RunEvent::HandoffResumed {
            handoff,
            resumption,
        })?;
        self.next().await
    }

    /// The CI autopilot on the open handoff: asks the advisor, evaluates the
    /// safety stops, and when all pass records `retry_feedback` as the CI
    /// agent and resumes. A stop leaves the handoff pending with its typed
    /// reason.
    ///
    /// # Errors
    ///
    /// No advisor, the run not paused at a handoff, or a store error.
    pub async fn autopilot(&mut self) -> Result<(AutopilotOutcome, Step), EngineError> {
        let step = self.next().await?;
        let Step::DecideHandoff(handoff) = step else {
            return Err(self.err(EngineErrorKind::WrongState {
                action: "run the autopilot",
                status: self.state().status,
            }));
        };
        let advisor = self
            .engine
            .inner
            .advisor
            .clone()
            .ok_or_else(|| self.err(EngineErrorKind::NoAdvisor))?;
        let autopilot = Autopilot::new(
            self.engine.inner.handoffs.clone(),
            advisor,
            self.engine.inner.plan.autopilot.clone(),
        );
        let output = self.engine.phase_output(self.id(), &handoff);
        let outcome = autopilot
            .run(self.id(), handoff.id(), &output)
            .await
            .map_err(|e| self.handoff_err(e))?;
        let step = match &outcome {
            AutopilotOutcome::Retried { .. } => self.resume().await?,
            _ => Step::DecideHandoff(handoff),
        };
        Ok((outcome, step))
    }
}

fn resumption_of(next: NextStep) -> crate::state::Resumption {
    use crate::state::Resumption;
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

fn resumption_of_choice(choice: &HandoffChoice) -> crate::state::Resumption {
    use crate::state::Resumption;
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

fn skipped_record(index: usize, scheduled: &ScheduledGate, reason: &str) -> GateRecord {
    GateRecord::new(
        index,
        scheduled.on_fail,
        orcho_gates::QualityGateResult::of_kind(
            scheduled.gate.kind(),
            scheduled.gate.name().clone(),
            GateOutcome::Skipped {
                reason: reason.to_owned(),
            },
        ),
    )
    .with_lock_group(scheduled.lock_group.clone())
}

pub(super) async fn blocking_readiness(
    verifier: &Arc<Verifier>,
) -> Result<orcho_receipts::ReadinessSummary, EngineErrorKind> {
    let v = Arc::clone(verifier);
    tokio::task::spawn_blocking(move || v.readiness())
        .await
        .map_err(|e| EngineErrorKind::Task(e.to_string()))?
        .map_err(|e| EngineErrorKind::Receipts(Box::new(e)))
}

/// The recovery paths a process death leaves behind, each reproduced
/// deterministically by writing the state a crash would leave.
#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use orcho_core::{FixedClock, GateName};
    use orcho_gates::{FailStrategy, GateError, PhaseOutcome, QualityGate, QualityGateResult};

    use super::*;
    use crate::{PhasePlan, state::Resumption};

    /// Counts its runs; fails when told to.
    #[derive(Debug)]
    struct Counting {
        name: GateName,
        fail: bool,
        runs: Arc<AtomicUsize>,
    }

    #[orcho_gates::async_trait]
    impl QualityGate for Counting {
        fn name(&self) -> &GateName {
            &self.name
        }

        async fn evaluate(&self, _ctx: &GateContext) -> Result<QualityGateResult, GateError> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let outcome = if self.fail {
                GateOutcome::Failed
            } else {
                GateOutcome::Passed
            };
            Ok(QualityGateResult::computational(self.name.clone(), outcome))
        }
    }

    fn engine(dir: &tempfile::TempDir, plan: RunPlan) -> (Engine, Utf8PathBuf) {
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
        let clock = Arc::new(FixedClock::new(
            "2026-11-21T12:00:00Z".parse().expect("time"),
        ));
        let engine = Engine::builder(plan, root.join("store"))
            .clock(clock)
            .build()
            .expect("engine");
        (engine, root)
    }

    fn review_plan() -> RunPlan {
        RunPlan::new(
            "recovery",
            vec![PhasePlan::new(
                "review".parse().expect("phase"),
                PhaseRole::Review,
            )],
        )
    }

    #[tokio::test]
    async fn a_persisted_halt_skips_the_remaining_gates_without_running_them() {
        let later = Arc::new(AtomicUsize::new(0));
        let gate = |name: &str, fail, runs: &Arc<AtomicUsize>| {
            let gate: Arc<dyn QualityGate> = Arc::new(Counting {
                name: name.parse().expect("gate"),
                fail,
                runs: Arc::clone(runs),
            });
            gate
        };
        let first = Arc::new(AtomicUsize::new(0));
        let plan = RunPlan::new(
            "halt",
            vec![
                PhasePlan::new("implement".parse().expect("phase"), PhaseRole::Implement)
                    .with_gate(ScheduledGate::new(
                        gate("build", true, &first),
                        FailStrategy::Halt,
                    ))
                    .with_gate(ScheduledGate::new(
                        gate("tests", false, &later),
                        FailStrategy::FeedIntoNext,
                    )),
            ],
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let (engine, root) = engine(&dir, plan);
        let mut run = engine.start(&root).expect("start");
        // The process reported the attempt and persisted the halting result,
        // then died before the rest was recorded.
        let halting =
            QualityGateResult::computational("build".parse().expect("gate"), GateOutcome::Failed);
        run.commit(RunEvent::PhaseReported {
            phase: "implement".parse().expect("phase"),
            attempt: 1,
            round: 1,
            outcome: PhaseOutcome::new(Verdict::Approved),
            cost: orcho_core::Cost::default(),
            plan: None,
        })
        .expect("report");
        run.commit(RunEvent::GateRecorded {
            record: GateRecord::new(0, FailStrategy::Halt, halting),
        })
        .expect("record");
        let id = run.id().clone();
        drop(run);

        let mut reopened = engine.open(&id).expect("reopen");
        let step = reopened.next().await.expect("next");
        assert!(
            matches!(
                step,
                Step::Finished {
                    status: RunStatus::Halted,
                    ..
                }
            ),
            "{step:?}"
        );
        assert_eq!(
            first.load(Ordering::SeqCst),
            0,
            "the recorded gate is not run again"
        );
        assert_eq!(
            later.load(Ordering::SeqCst),
            0,
            "gates after a persisted halt never run"
        );
        let trace = engine.trace(&id).expect("trace");
        assert!(
            trace.contains("gate `tests` skipped (halted by gate `build`)"),
            "{trace}"
        );
    }

    /// Drives the review to its pause and returns the run.
    async fn paused(engine: &Engine, root: &Utf8Path) -> Run {
        let mut run = engine.start(root).expect("start");
        run.next().await.expect("next");
        let step = run
            .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Rejected)))
            .await
            .expect("complete");
        assert!(matches!(step, Step::DecideHandoff(_)), "{step:?}");
        run
    }

    #[tokio::test]
    async fn a_handoff_opened_but_not_journalled_is_adopted_not_opened_twice() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (engine, root) = engine(&dir, review_plan());
        let mut run = engine.start(&root).expect("start");
        run.next().await.expect("next");
        // Settle the attempt into a pause by hand, then open the handoff in
        // the store without journalling it: a crash between the two.
        run.commit(RunEvent::PhaseReported {
            phase: "review".parse().expect("phase"),
            attempt: 1,
            round: 1,
            outcome: PhaseOutcome::new(Verdict::Rejected),
            cost: orcho_core::Cost::default(),
            plan: None,
        })
        .expect("report");
        run.commit(RunEvent::PhaseSettled {
            effect: "continue".into(),
            transition: Transition::Pause {
                trigger: crate::PauseTrigger::Verdict,
                verdict: Verdict::Rejected,
                findings: Vec::new(),
            },
        })
        .expect("settle");
        let orphan = engine
            .handoffs()
            .open(HandoffSpec::new(
                run.id().clone(),
                "review".parse().expect("phase"),
                Verdict::Rejected,
            ))
            .expect("open");
        let id = run.id().clone();
        drop(run);

        let mut reopened = engine.open(&id).expect("reopen");
        let Step::DecideHandoff(handoff) = reopened.next().await.expect("next") else {
            panic!("expected the pause");
        };
        assert_eq!(handoff.id(), orphan.id(), "the orphan is adopted");
        assert_eq!(
            engine.handoffs().handoffs(&id).expect("handoffs").len(),
            1,
            "no second handoff"
        );
    }

    #[tokio::test]
    async fn a_resume_the_store_did_but_the_journal_missed_is_recovered_from_the_decision() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (engine, root) = engine(&dir, review_plan());
        let run = paused(&engine, &root).await;
        let id = run.id().clone();
        let handoff = run.state().handoff.clone().expect("open handoff");
        drop(run);
        let choice = HandoffChoice::retry("add the missing test").expect("text");
        engine
            .decide(
                &id,
                &handoff,
                DecisionRequest::new(choice, DecidedBy::Operator),
            )
            .expect("decide");
        // The store resumed the handoff; the process died before journalling.
        engine
            .handoffs()
            .resume_handoff(&id, &handoff)
            .expect("store resume");

        let mut reopened = engine.open(&id).expect("reopen");
        let Step::RunPhase(request) = reopened.resume().await.expect("resume") else {
            panic!("expected the retry");
        };
        assert_eq!(request.attempt, 2);
        assert_eq!(
            request.input.feedback.as_deref(),
            Some("add the missing test")
        );
        let events = engine.runs().events(&id).expect("events");
        let resumed = events
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e,
                    RunEvent::HandoffResumed {
                        resumption: Resumption::Retry { .. },
                        ..
                    }
                )
            })
            .count();
        assert_eq!(resumed, 1, "the resume is journalled exactly once");
    }
}
