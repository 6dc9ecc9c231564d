//! The `handoff_advice` section of the evidence bundle.

use orcho_core::{Cost, HandoffId, PhaseName, SchemaVersion, Usd};
use serde::Serialize;

use crate::{
    HandoffAction,
    advisor::AdviceId,
    decision::DecidedBy,
    evidence::{AdviceCall, AutopilotStopRecord, HandoffAdviceEvidence},
};

/// Version 1: advice_calls, calls (advice_id, handoff_id, phase, advisor,
/// requested_by, recommended_action, applied_action, retry_outcome, usage),
/// autopilot_stops (handoff_id, reason, advice_id), observed_usage,
/// cost_usd.
/// Version 2: calls_without_cost; cost_usd is null unless every call
/// reported its money (observed_usage is then a partial sum); advice no
/// decision applied has retry_outcome `stopped` (or `unknown` while its
/// handoff waits).
pub(crate) const SECTION_SCHEMA: SchemaVersion = SchemaVersion::new(2);

#[derive(Debug, Serialize)]
pub(crate) struct HandoffAdviceSection {
    schema: SchemaVersion,
    advice_calls: usize,
    calls: Vec<CallRepr>,
    autopilot_stops: Vec<StopRepr>,
    observed_usage: Cost,
    cost_usd: Option<Usd>,
    calls_without_cost: usize,
}

#[derive(Debug, Serialize)]
struct CallRepr {
    advice_id: AdviceId,
    handoff_id: HandoffId,
    phase: Option<PhaseName>,
    advisor: String,
    requested_by: DecidedBy,
    recommended_action: HandoffAction,
    applied_action: Option<HandoffAction>,
    retry_outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Cost>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
struct StopRepr {
    handoff_id: HandoffId,
    reason: String,
    advice_id: Option<AdviceId>,
}

impl From<HandoffAdviceEvidence> for HandoffAdviceSection {
    fn from(e: HandoffAdviceEvidence) -> Self {
        let (cost_usd, calls_without_cost) = (e.cost_usd(), e.calls_without_cost());
        Self {
            schema: SECTION_SCHEMA,
            advice_calls: e.calls.len(),
            calls: e.calls.into_iter().map(CallRepr::from).collect(),
            autopilot_stops: e
                .autopilot_stops
                .into_iter()
                .map(|s: AutopilotStopRecord| StopRepr {
                    handoff_id: s.handoff,
                    reason: s.reason,
                    advice_id: s.advice,
                })
                .collect(),
            cost_usd,
            calls_without_cost,
            observed_usage: e.observed_usage,
        }
    }
}

impl From<AdviceCall> for CallRepr {
    fn from(c: AdviceCall) -> Self {
        Self {
            advice_id: c.advice,
            handoff_id: c.handoff,
            phase: c.phase,
            advisor: c.advisor,
            requested_by: c.requested_by,
            recommended_action: c.recommended,
            applied_action: c.applied,
            retry_outcome: c.retry_outcome.map(crate::evidence::RetryOutcome::as_str),
            usage: c.usage,
        }
    }
}
