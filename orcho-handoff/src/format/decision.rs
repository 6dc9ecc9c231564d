//! The decision record: `runs/<run>/decisions/<handoff>.json`.

use orcho_core::{Digest, HandoffId, RunId, SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Serialize};

use crate::{
    HandoffAction, HandoffChoice,
    advisor::AdviceId,
    decision::{DecidedBy, DecisionPayload},
    error::ChoiceError,
};

/// A decision record, generic over the payload of its kind of decision
/// point.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DecisionDoc<P> {
    pub(crate) schema: SchemaVersion,
    /// [`DecisionPayload::KIND`].
    pub(crate) kind: String,
    pub(crate) run_id: RunId,
    pub(crate) handoff_id: HandoffId,
    pub(crate) payload: P,
    pub(crate) decided_by: DecidedBy,
    pub(crate) advice_id: Option<AdviceId>,
    pub(crate) decided_at: Timestamp,
    pub(crate) digest: Digest,
}

impl<P: DecisionPayload> Document for DecisionDoc<P> {
    const KIND: &'static str = "decision";
    /// Version 1: kind, run_id, handoff_id, payload, decided_by, advice_id,
    /// decided_at, digest (over everything but `decided_at`).
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// What a decision's digest covers, in this order, as compact JSON.
#[derive(Serialize)]
pub(crate) struct DecisionDigestInput<'a, P> {
    pub(crate) kind: &'static str,
    pub(crate) run_id: &'a RunId,
    pub(crate) handoff_id: &'a HandoffId,
    pub(crate) payload: &'a P,
    pub(crate) decided_by: DecidedBy,
    pub(crate) advice_id: Option<&'a AdviceId>,
}

/// The payload of a phase-handoff decision: `{"action": …, "text": …}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ChoiceRepr {
    pub(crate) action: HandoffAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
