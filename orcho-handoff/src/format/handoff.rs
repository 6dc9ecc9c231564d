//! The handoff payload: `runs/<run>/handoffs/<handoff>.json`, written once
//! when the handoff opens.

use orcho_core::{
    Finding, GateName, HandoffId, PhaseName, RunId, SchemaVersion, Timestamp, Verdict,
    schema::Document,
};
use serde::{Deserialize, Serialize};

use crate::{
    HandoffAction,
    handoff::{AvailableActions, ChoiceError, HandoffChoice, HandoffTrigger, PhaseHandoff},
};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HandoffDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) handoff_id: HandoffId,
    pub(crate) run_id: RunId,
    pub(crate) phase: PhaseName,
    pub(crate) trigger: TriggerRepr,
    pub(crate) verdict: Verdict,
    pub(crate) round: u32,
    pub(crate) available_actions: AvailableActions,
    pub(crate) findings: Vec<Finding>,
    pub(crate) created_at: Timestamp,
}

impl Document for HandoffDoc {
    const KIND: &'static str = "phase handoff";
    /// Version 1: handoff_id, run_id, phase, trigger, verdict, round,
    /// available_actions, findings, created_at.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// `{"kind": "verdict"}`, `{"kind": "gate", "gate": "tests"}`,
/// `{"kind": "always_pause"}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum TriggerRepr {
    Verdict,
    Gate { gate: GateName },
    AlwaysPause,
}

impl From<PhaseHandoff> for HandoffDoc {
    fn from(h: PhaseHandoff) -> Self {
        Self {
            schema: Self::SCHEMA,
            handoff_id: h.id,
            run_id: h.run,
            phase: h.phase,
            trigger: match h.trigger {
                HandoffTrigger::Verdict => TriggerRepr::Verdict,
                HandoffTrigger::Gate(gate) => TriggerRepr::Gate { gate },
                HandoffTrigger::AlwaysPause => TriggerRepr::AlwaysPause,
            },
            verdict: h.verdict,
            round: h.round,
            available_actions: h.available_actions,
            findings: h.findings,
            created_at: h.created_at,
        }
    }
}

impl From<HandoffDoc> for PhaseHandoff {
    fn from(d: HandoffDoc) -> Self {
        Self {
            id: d.handoff_id,
            run: d.run_id,
            phase: d.phase,
            trigger: match d.trigger {
                TriggerRepr::Verdict => HandoffTrigger::Verdict,
                TriggerRepr::Gate { gate } => HandoffTrigger::Gate(gate),
                TriggerRepr::AlwaysPause => HandoffTrigger::AlwaysPause,
            },
            verdict: d.verdict,
            round: d.round,
            available_actions: d.available_actions,
            findings: d.findings,
            created_at: d.created_at,
        }
    }
}

/// The payload of a phase-handoff decision: `{"action": …, "text": …}`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ChoiceRepr {
    pub(crate) action: HandoffAction,
    pub(crate) text: Option<String>,
}

impl From<HandoffChoice> for ChoiceRepr {
    fn from(choice: HandoffChoice) -> Self {
        Self {
            action: choice.action(),
            text: choice.text().map(str::to_owned),
        }
    }
}

impl TryFrom<ChoiceRepr> for HandoffChoice {
    type Error = ChoiceError;

    fn try_from(repr: ChoiceRepr) -> Result<Self, Self::Error> {
        Self::from_parts(repr.action, repr.text)
    }
}
