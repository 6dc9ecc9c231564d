//! Advice on a paused handoff: what the advisor reads, and asking it.

use std::fmt::Write as _;

use orcho_core::{HandoffId, RunId};
use orcho_handoff::{
    AdviceRequest, advisor::AdviceRecord, decision::DecidedBy, handoff::PhaseHandoff,
};

use super::build::Engine;
use crate::{EngineError, error::EngineErrorKind, state::RunEvent};

impl Engine {
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
        self.advise_for(run, handoff, DecidedBy::Operator).await
    }

    /// [`advise`](Self::advise), recording who asked: an operator's host, or
    /// a client (an agent over MCP).
    ///
    /// # Errors
    ///
    /// As [`advise`](Self::advise).
    pub async fn advise_for(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        requested_by: DecidedBy,
    ) -> Result<AdviceRecord, EngineError> {
        let advisor = self
            .inner
            .advisor
            .clone()
            .ok_or_else(|| EngineError::run(run, crate::Refusal::NoAdvisor))?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let paused = self
            .inner
            .store
            .handoffs
            .handoff(run, handoff)
            .map_err(handoff_err)?;
        let history: Vec<PhaseHandoff> = self
            .inner
            .store
            .handoffs
            .handoffs(run)
            .map_err(handoff_err)?
            .into_iter()
            .filter(|h| h.phase() == paused.phase() && h.id() < paused.id())
            .collect();
        let output = self.phase_output(run, &paused);
        let context = self.advice_context(run).await;
        let request = AdviceRequest::new(&paused, &output, &history).with_context(&context);
        let advice = advisor
            .advise(&request)
            .await
            .map_err(|e| EngineError::run(run, EngineErrorKind::Advisor(e)))?;
        self.inner
            .store
            .handoffs
            .record_advice(run, handoff, advisor.name(), &advice, requested_by)
            .map_err(handoff_err)
    }

    /// What an advisor reads beside the handoff: the readiness summary of
    /// the run's receipts, when the run has a contract and a checkout (empty
    /// otherwise, and when it cannot be built: advice goes on without it).
    pub(super) async fn advice_context(&self, run: &RunId) -> String {
        /// The most changed files listed.
        const MAX_FILES: usize = 30;
        let Ok(state) = self.inner.store.runs.read(run) else {
            return String::new();
        };
        if !state.checkout().is_dir() {
            return String::new();
        }
        let mut context = String::new();
        // In a worktree: what the run changed so far, as its delivery gate
        // would show it.
        if state.workspace().is_some()
            && let Some(base) = state.base()
        {
            let (checkout, base) = (state.checkout().to_owned(), base.to_owned());
            let diff = tokio::task::spawn_blocking(move || {
                orcho_delivery::worktree::diff_summary(&checkout, &base)
            })
            .await;
            if let Ok(Ok(diff)) = diff {
                let _ = writeln!(
                    context,
                    "The run's changes so far: {} file(s), +{} -{}",
                    diff.files_changed(),
                    diff.insertions(),
                    diff.deletions()
                );
                for f in diff.files().iter().take(MAX_FILES) {
                    let lines = match (f.insertions(), f.deletions()) {
                        (Some(i), Some(d)) => format!(" (+{i} -{d})"),
                        _ => " (binary)".to_owned(),
                    };
                    let _ = writeln!(context, "- {}{lines}", f.path());
                }
                if diff.files_changed() > MAX_FILES {
                    let _ = writeln!(
                        context,
                        "(cut: {} more files)",
                        diff.files_changed() - MAX_FILES
                    );
                }
                context.push('\n');
            }
        }
        if let Ok(Some(verifier)) = self.verifier(&state)
            && let Ok(summary) = super::phase::blocking_readiness(&verifier).await
        {
            let _ = write!(
                context,
                "The readiness summary (receipts on disk):\n\n{}",
                summary.to_markdown()
            );
        }
        context
    }

    /// The summary of the latest report of the handoff's phase, for advisors.
    pub(super) fn phase_output(&self, run: &RunId, handoff: &PhaseHandoff) -> String {
        let Ok(events) = self.inner.store.runs.events(run) else {
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
}
