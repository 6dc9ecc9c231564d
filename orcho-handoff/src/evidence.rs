//! The `handoff_advice` section of the evidence bundle: did advice help?

use orcho_core::{Cost, HandoffId, PhaseName, RunId, Usd};
use serde::Serialize;

use crate::{
    HandoffAction,
    advisor::AdviceId,
    decision::DecidedBy,
    format::evidence::HandoffAdviceSection,
    handoff::{HandoffError, HandoffStore, JournalEvent, PhaseHandoff},
};

/// What became of a retry that followed advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryOutcome {
    /// The retried blockers did not come back: the phase's next handoff has
    /// none of them, or the phase passed.
    Resolved,
    /// The phase's next handoff repeats at least one retried blocker.
    Repeated,
    /// The phase's next handoff (with new blockers) was halted, or the
    /// autopilot stopped on it.
    Stopped,
    /// Not known yet: no later handoff of the phase, and the phase is not
    /// reported as passed.
    Unknown,
}

orcho_core::spelled!(RetryOutcome {
    Resolved => "resolved",
    Repeated => "repeated",
    Stopped => "stopped",
    Unknown => "unknown",
});

/// One advisor call and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviceCall {
    pub(crate) advice: AdviceId,
    pub(crate) handoff: HandoffId,
    pub(crate) phase: Option<PhaseName>,
    pub(crate) advisor: String,
    pub(crate) requested_by: DecidedBy,
    pub(crate) recommended: HandoffAction,
    pub(crate) applied: Option<HandoffAction>,
    pub(crate) retry_outcome: Option<RetryOutcome>,
    pub(crate) usage: Option<Cost>,
}

impl AdviceCall {
    orcho_core::getters! {
        /// The advice artifact.
        pub fn advice(&self) -> &AdviceId;
        /// The handoff advised on.
        pub fn handoff(&self) -> &HandoffId;
        /// The recommended action.
        pub fn recommended(&self) -> HandoffAction;
        /// The action of the decision that used this advice, if one did.
        pub fn applied(&self) -> Option<HandoffAction>;
        /// For an applied retry, what came of it; for advice no decision
        /// applied, `stopped` once the run moved on without it (`unknown` while
        /// its handoff waits).
        pub fn retry_outcome(&self) -> Option<RetryOutcome>;
    }
}

/// A handoff the autopilot stopped on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutopilotStopRecord {
    pub(crate) handoff: HandoffId,
    pub(crate) reason: String,
    pub(crate) advice: Option<AdviceId>,
}

/// The `handoff_advice` evidence section: how many advice calls happened,
/// what each recommended and what was applied, what came of applied
/// retries (advice no decision applied is `stopped` once the run moved on
/// without it), and the advisors' observed usage and cost (a total only
/// when every call reported one).
///
/// Serializes as the section's JSON (with `schema` first):
///
/// ```
/// # use std::sync::Arc;
/// # use orcho_core::FixedClock;
/// use orcho_handoff::{evidence::HandoffAdviceEvidence, handoff::HandoffStore};
///
/// # let tmp = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// # let store = HandoffStore::in_dir(root, Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?)));
/// let evidence = HandoffAdviceEvidence::collect(&store, &"run-1".parse()?, &[])?;
/// assert_eq!(evidence.advice_calls(), 0);
/// let json = serde_json::to_value(&evidence)?;
/// assert_eq!(json["schema"], 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "HandoffAdviceSection")]
pub struct HandoffAdviceEvidence {
    pub(crate) calls: Vec<AdviceCall>,
    pub(crate) autopilot_stops: Vec<AutopilotStopRecord>,
    pub(crate) observed_usage: Cost,
}

impl HandoffAdviceEvidence {
    /// Builds the section from a run's advice artifacts, decisions, handoffs
    /// and journal. `passed_phases` are the phases the engine knows passed
    /// after their last handoff; a retry of such a phase with no later
    /// handoff is `resolved` rather than `unknown`.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    pub fn collect(
        store: &HandoffStore,
        run: &RunId,
        passed_phases: &[PhaseName],
    ) -> Result<Self, HandoffError> {
        let handoffs = store.handoffs(run)?;
        let journal = store.journal(run)?;
        let stopped_on = |id: &HandoffId| {
            journal.iter().any(|e| {
                e.handoff == *id && matches!(e.event, JournalEvent::AutopilotStopped { .. })
            })
        };
        let mut calls = Vec::new();
        let mut observed_usage = Cost::default();
        for record in store.advice_records(run)? {
            let handoff_pos = handoffs.iter().position(|h| h.id == record.handoff);
            let decision = store.recorded_decision(run, &record.handoff)?;
            let applied = decision
                .as_ref()
                .map(|d| d.decision())
                .filter(|d| d.advice() == Some(&record.id))
                .map(|d| d.payload().action());
            let retry_outcome = match (applied, handoff_pos) {
                // No decision applied it: once the handoff was decided
                // otherwise, left, or stopped on, the run moved on without
                // it. Still pending, nothing is known yet.
                (None, _) => {
                    let moved_on = decision.is_some()
                        || stopped_on(&record.handoff)
                        || store
                            .state(run, &record.handoff)
                            .is_ok_and(|s| s.name() != crate::handoff::HandoffStateName::Open);
                    Some(if moved_on {
                        RetryOutcome::Stopped
                    } else {
                        RetryOutcome::Unknown
                    })
                }
                (Some(HandoffAction::RetryFeedback), Some(pos)) => Some(outcome_after(
                    &handoffs,
                    pos,
                    passed_phases,
                    &stopped_on,
                    |id| {
                        store
                            .state(run, id)
                            .is_ok_and(|s| s.name() == crate::handoff::HandoffStateName::Halted)
                    },
                )),
                _ => None,
            };
            if let Some(usage) = record.advice.usage {
                observed_usage += usage;
            }
            calls.push(AdviceCall {
                phase: handoff_pos.map(|p| handoffs[p].phase.clone()),
                advice: record.id,
                handoff: record.handoff,
                advisor: record.advisor,
                requested_by: record.requested_by,
                recommended: record.advice.recommended_action,
                applied,
                retry_outcome,
                usage: record.advice.usage,
            });
        }
        let autopilot_stops = journal
            .into_iter()
            .filter_map(|e| match e.event {
                JournalEvent::AutopilotStopped { reason, advice, .. } => {
                    Some(AutopilotStopRecord {
                        handoff: e.handoff,
                        reason,
                        advice,
                    })
                }
                JournalEvent::Opened
                | JournalEvent::Decided { .. }
                | JournalEvent::Resumed { .. } => None,
            })
            .collect();
        Ok(Self {
            calls,
            autopilot_stops,
            observed_usage,
        })
    }

    /// How many times an advisor was called (and its advice recorded).
    pub fn advice_calls(&self) -> usize {
        self.calls.len()
    }

    orcho_core::getters! {
        /// The calls, in order.
        pub fn calls(&self) -> &[AdviceCall];
        /// The advisors' summed usage: observed, never applied to budgets other
        /// than the autopilot's cost cap.
        pub fn observed_usage(&self) -> Cost;
    }

    /// What the advice cost in all: only when every call reported its
    /// money (a sum of some calls is not the total; see
    /// [`calls_without_cost`](Self::calls_without_cost)).
    pub fn cost_usd(&self) -> Option<Usd> {
        if self.calls_without_cost() == 0 {
            self.observed_usage.usd
        } else {
            None
        }
    }

    /// How many calls reported no money: when any, [`cost_usd`](Self::cost_usd)
    /// is unknown and [`observed_usage`](Self::observed_usage) is a partial
    /// sum.
    pub fn calls_without_cost(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.usage.and_then(|u| u.usd).is_none())
            .count()
    }
}

fn outcome_after(
    handoffs: &[PhaseHandoff],
    pos: usize,
    passed_phases: &[PhaseName],
    stopped_on: &dyn Fn(&HandoffId) -> bool,
    halted: impl Fn(&HandoffId) -> bool,
) -> RetryOutcome {
    let retried = &handoffs[pos];
    let Some(next) = handoffs[pos + 1..]
        .iter()
        .find(|h| h.phase == retried.phase)
    else {
        return if passed_phases.contains(&retried.phase) {
            RetryOutcome::Resolved
        } else {
            RetryOutcome::Unknown
        };
    };
    let before: Vec<_> = retried.findings.iter().map(|f| f.fingerprint()).collect();
    if next
        .findings
        .iter()
        .any(|f| before.contains(&f.fingerprint()))
    {
        RetryOutcome::Repeated
    } else if stopped_on(&next.id) || halted(&next.id) {
        RetryOutcome::Stopped
    } else {
        RetryOutcome::Resolved
    }
}
