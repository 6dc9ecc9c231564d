//! A phase attempt: its request (with receipts re-run before final
//! acceptance), its gates, acceptance and where it settles.

use std::sync::Arc;

use orcho_core::{Finding, Verdict};
use orcho_gates::{GateContext, GateOutcome, GateRecord, ScheduledGate, phase_effect};
use orcho_receipts::{ReceiptStatus, Verifier, apply_acceptance};

use super::{
    run::Run,
    step::{PhaseRequest, Step},
};
use crate::{
    EngineError,
    error::EngineErrorKind,
    plan::PhaseRole,
    state::{RunEvent, Transition},
};

impl Run {
    pub(super) async fn phase_request(&mut self) -> Result<Step, EngineError> {
        let engine = self.engine.clone();
        let plan = &engine.inner.plan;
        let state = self.state().clone();
        let Some(phase) = plan.phases.get(state.phase_index()) else {
            return Ok(self.finished());
        };
        let mut input = state.input().clone();
        input.follow_up = state.follow_up().as_ref().map(|f| f.brief.clone());
        let journal = self.engine.inner.store.runs.events(self.id())?;
        super::carry::Carried::read(plan, journal.iter().map(|(_, e)| e)).fill(
            &mut input,
            state.task(),
            &phase.name,
            &phase.role,
        );
        if phase.role == PhaseRole::FinalAcceptance
            && let Some(verifier) = self.engine.verifier(&state)?
        {
            let cursor = (state.phase_index(), state.round(), state.attempt());
            if state.receipts_rerun_at() != Some(cursor) {
                self.rerun_missing(&verifier).await?;
            }
            let events = self.engine.inner.store.runs.events(self.id())?;
            let gates =
                crate::evidence::delivery_gates(&crate::evidence::phases(&events), state.round());
            let summary = blocking_readiness(&verifier)
                .await
                .map_err(|e| self.err(e))?
                .with_gates(gates);
            input.readiness = Some(summary.to_markdown());
        }
        if phase.read_only {
            self.note_tree_before(&super::read_only::Attempt {
                phase: &phase.name,
                round: state.round(),
                attempt: state.attempt(),
            })
            .await?;
        }
        Ok(Step::RunPhase(PhaseRequest {
            run: state.run().clone(),
            phase: phase.name.clone(),
            role: phase.role.clone(),
            attempt: state.attempt(),
            round: state.round(),
            input,
            permissions: self.engine.inner.plan.permissions.clone(),
            read_only: phase.read_only,
        }))
    }

    /// Runs the gates of the in-flight attempt that have no record yet, then
    /// merges acceptance gaps and settles the attempt.
    pub(super) async fn run_gates(&mut self) -> Result<(), EngineError> {
        let engine = self.engine.clone();
        let plan = &engine.inner.plan;
        let state = self.state().clone();
        let Some(flight) = state.in_flight() else {
            return Ok(());
        };
        let Some(phase) = plan.phases.get(state.phase_index()) else {
            return Ok(());
        };
        let verifier = engine.verifier(&state)?;

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
                self.commit(&RunEvent::GateRecorded { record })?;
            }
        } else if !remaining.is_empty() {
            let inferential = remaining
                .iter()
                .any(|(_, g)| g.gate.kind() == orcho_gates::GateKind::Inferential);
            let work = self.work(&state, inferential).await?;
            let mut ctx = GateContext::new(
                state.run().clone(),
                phase.name.clone(),
                state.checkout(),
                flight.outcome.clone(),
            )
            .with_attempt(state.attempt())
            .with_round(state.round())
            .with_work(work);
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
                    self.commit(&RunEvent::GateRecorded { record })
                        .map_err(|e| {
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
        let Some(flight) = state.in_flight() else {
            return Ok(());
        };
        let mut records = flight.records.clone();
        records.sort_by_key(|r| r.index);
        // A failure whose every finding a waiver of this run covers was
        // accepted on purpose: it does not count again (and nothing else
        // does not).
        let waivers = engine
            .inner
            .store
            .handoffs
            .waivers(self.id())
            .map_err(|e| self.handoff_err(e))?;
        let waived = |r: &GateRecord| {
            r.result.outcome.is_failure()
                && !waivers.is_empty()
                && orcho_gates::GateFailure::of(&r.result, r.on_fail)
                    .findings_shown()
                    .iter()
                    .all(|f| waivers.covers_finding(f))
        };
        let effect = phase_effect(
            records
                .iter()
                .filter(|r| !waived(r))
                .map(|r| (&r.result, r.on_fail)),
        );
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
                    self.commit(&RunEvent::AcceptanceMerged {
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
        if let Transition::Feed { attempts, .. } = &mut transition {
            *attempts = self.attempts_in_round()?;
        }
        if transition == Transition::Advance
            && phase.role == PhaseRole::Plan
            && plan.plan_approval
            && let Some(reported) = flight.plan.clone()
        {
            transition = Transition::Supervise {
                touchpoint: orcho_handoff::supervision::Touchpoint::PlanApproval { plan: reported },
            };
        }
        self.commit(&RunEvent::PhaseSettled {
            effect: effect.as_str().to_owned(),
            transition,
        })?;
        Ok(())
    }
}

/// The most of an attempt's diff a gate is handed: a judge cuts it to
/// its own `max_diff_bytes`, and this keeps a huge change (a vendored
/// tree) out of memory.
const MAX_GATE_DIFF: usize = 1024 * 1024;

impl Run {
    /// What the gates of the attempt in flight may read of the run's work:
    /// the task and the plan; with `diff` (an inferential gate is to run),
    /// the attempt's change against the run's base (the commit its worktree
    /// started from; `HEAD` for a run in place). A checkout git cannot diff
    /// gives no diff, said in the gate's material, not an error.
    async fn work(
        &self,
        state: &crate::RunState,
        diff: bool,
    ) -> Result<orcho_gates::Work, EngineError> {
        let mut work = orcho_gates::Work::new();
        if let Some(task) = state.task() {
            work = work.with_task(task);
        }
        // A planner's gates judge the plan it reported; every other phase's,
        // the plan the run carries out.
        let reported = state
            .in_flight()
            .and_then(|f| f.plan.clone())
            .map(|plan| crate::PlanInput::new(plan, false, None));
        let journal = self.engine.inner.store.runs.events(self.id())?;
        let carried =
            super::carry::Carried::read(&self.engine.inner.plan, journal.iter().map(|(_, e)| e));
        if let Some(plan) = reported.as_ref().or(carried.plan()) {
            work = work.with_plan(plan.to_text());
        }
        if diff {
            let checkout = state.checkout().to_owned();
            let base = state.base().unwrap_or("HEAD").to_owned();
            let diffed = tokio::task::spawn_blocking(move || {
                orcho_delivery::worktree::diff_text(&checkout, &base)
            })
            .await
            .map_err(|e| self.err(EngineErrorKind::from(e)))?;
            if let Ok((base, bytes)) = diffed {
                let total = bytes.len();
                let kept = &bytes[..total.min(MAX_GATE_DIFF)];
                work = work.with_diff(orcho_gates::Diff::new(
                    base,
                    String::from_utf8_lossy(kept).into_owned(),
                    total,
                ));
            }
        }
        Ok(work)
    }

    /// The last attempt of each phase in the current round, by phase index,
    /// from the journal.
    fn attempts_in_round(&self) -> Result<Vec<u32>, EngineError> {
        let state = self.state();
        let mut last = vec![0u32; state.phases().len()];
        for attempt in self.engine.inner.store.attempts(self.id())? {
            if attempt.round != state.round() {
                continue;
            }
            if let Some(i) = state.phases().iter().position(|p| *p == attempt.phase) {
                last[i] = last[i].max(attempt.attempt);
            }
        }
        Ok(last)
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
        .map_err(EngineErrorKind::from)?
        .map_err(|e| EngineErrorKind::Receipts(Box::new(e)))
}

impl Run {
    /// Runs again the required commands whose receipts are missing or stale
    /// ([`to_rerun`]), each on a blocking thread, and records which: the
    /// journal's `receipts_rerun`.
    pub(super) async fn rerun_missing(
        &mut self,
        verifier: &Arc<Verifier>,
    ) -> Result<Vec<orcho_receipts::CommandName>, EngineError> {
        let summary = blocking_readiness(verifier)
            .await
            .map_err(|e| self.err(e))?;
        let rerun = to_rerun(&summary);
        for command in &rerun {
            let v = Arc::clone(verifier);
            let command = command.clone();
            tokio::task::spawn_blocking(move || v.run_command(&command, None))
                .await
                .map_err(|e| self.err(EngineErrorKind::from(e)))?
                .map_err(|e| self.err(EngineErrorKind::Receipts(Box::new(e))))?;
        }
        self.commit(&RunEvent::ReceiptsRerun {
            commands: rerun.iter().map(ToString::to_string).collect(),
        })?;
        Ok(rerun)
    }
}

/// The required commands worth running again: missing and stale receipts,
/// and failed ones whose subject changed since (their failure no longer
/// describes the tree). A failure on the same subject is never re-run by
/// itself.
pub(super) fn to_rerun(
    summary: &orcho_receipts::ReadinessSummary,
) -> Vec<orcho_receipts::CommandName> {
    summary
        .required
        .iter()
        .filter(|r| match &r.status {
            ReceiptStatus::Missing | ReceiptStatus::Deleted { .. } | ReceiptStatus::Stale(_) => {
                true
            }
            ReceiptStatus::Failed { stale, .. } => !stale.is_empty(),
            _ => false,
        })
        .map(|r| r.command.clone())
        .collect()
}
