//! What hosts read about what a run did: its phases and their attempts,
//! and its evidence.

use orcho_core::RunId;

use super::Store;
use crate::{EngineError, error::EngineErrorKind, state::RunEvent};

impl Store {
    /// Every phase attempt of `run` with its gates, as the evidence bundle
    /// lists them, without writing the bundle: what a host shows as each
    /// attempt settles.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn phases(&self, run: &RunId) -> Result<Vec<crate::PhaseEvidence>, EngineError> {
        Ok(crate::evidence::phases(&self.runs.events(run)?))
    }

    /// Every phase attempt `run` reported, in order: what the phase said
    /// before its gates ran.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn attempts(&self, run: &RunId) -> Result<Vec<crate::AttemptView>, EngineError> {
        Ok(self
            .runs
            .events(run)?
            .into_iter()
            .filter_map(|(_, event)| match event {
                RunEvent::PhaseReported {
                    phase,
                    attempt,
                    round,
                    outcome,
                    ..
                } => Some(crate::AttemptView {
                    phase,
                    attempt,
                    round,
                    outcome,
                }),
                _ => None,
            })
            .collect())
    }

    /// The run's evidence bundle: phases with their gates (outcomes,
    /// strategies, durations), handoffs with their decisions, the
    /// `handoff_advice` section, costs, and — under `contract`, when the
    /// run's checkout is on this machine — its receipts' classification.
    /// Nothing is written: [`write_evidence`](Self::write_evidence) keeps
    /// it.
    ///
    /// # Errors
    ///
    /// When the run, its handoffs or its receipts cannot be read.
    pub fn evidence(
        &self,
        run: &RunId,
        contract: Option<&orcho_receipts::VerificationContract>,
    ) -> Result<crate::Evidence, EngineError> {
        let state = self.runs.read(run)?;
        let events = self.runs.events(run)?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.handoffs;
        let mut handoffs = Vec::new();
        for h in store.handoffs(run).map_err(handoff_err)? {
            let decision = store
                .recorded_decision(run, h.id())
                .map_err(handoff_err)?
                .map(|d| {
                    let d = d.decision();
                    crate::evidence::DecisionEvidence {
                        action: d.payload().action(),
                        // Feedback or a waiver's reason; for `continue`
                        // and `halt`, the note given with them.
                        text: d.payload().text().or(d.note()).map(str::to_owned),
                        decided_by: d.decided_by(),
                        client: d.client().map(str::to_owned),
                        by: d.who().map(str::to_owned),
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
            .filter(|p| p.advanced())
            .map(|p| p.phase.clone())
            .collect();
        let handoff_advice =
            orcho_handoff::evidence::HandoffAdviceEvidence::collect(store, run, &passed)
                .map_err(handoff_err)?;
        // A run halted before its worktree existed (or whose worktree was
        // removed since) has no tree to classify receipts against.
        let verifier = match state.checkout().is_dir() {
            true => self.verifier(&state, contract)?,
            false => None,
        };
        let receipts = match verifier {
            Some(v) => Some(
                v.readiness()
                    .map_err(|e| EngineError::run(run, EngineErrorKind::Receipts(Box::new(e))))?
                    .with_gates(crate::evidence::delivery_gates(&phases, state.round())),
            ),
            None => None,
        };
        Ok(crate::Evidence {
            schema: crate::evidence::EVIDENCE_SCHEMA,
            run: run.clone(),
            plan: state.plan().to_owned(),
            task: state.task().map(str::to_owned),
            status: state.status(),
            reason: state.reason().map(str::to_owned),
            phases,
            receipts,
            handoffs,
            decisions: self.decisions(run)?,
            handoff_advice,
            cost: state.cost(),
            intake,
            touchpoints,
            delivery,
            follow_up_of: state.follow_up().cloned(),
            artifacts: self.artifacts(run),
            interruptions: crate::evidence::interruptions(&events),
        })
    }
}
