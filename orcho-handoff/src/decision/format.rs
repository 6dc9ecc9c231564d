//! The decision record: `runs/<run>/decisions/<handoff>.json`.

use orcho_core::{Digest, HandoffId, RunId, SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Serialize};

use super::{DecidedBy, DecisionPayload};
use crate::advisor::AdviceId;

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
    /// The client that decided (`decided_by: client`): its name and
    /// version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client: Option<String>,
    /// Who decided, in words (an operator's user and machine), when the
    /// host said; not covered by the digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) by: Option<String>,
    /// A note for the record, where the payload carries no text (why a run
    /// was halted); covered by the digest when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    pub(crate) advice_id: Option<AdviceId>,
    pub(crate) decided_at: Timestamp,
    pub(crate) digest: Digest,
}

impl<P: DecisionPayload> Document for DecisionDoc<P> {
    const KIND: &'static str = "decision";
    /// Version 1: kind, run_id, handoff_id, payload, decided_by, client
    /// (for `decided_by: client` only), by (who, in words, when known),
    /// note (a note for the record, when given), advice_id, decided_at,
    /// digest (over everything but `by` and `decided_at`).
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
    /// Left out when there is none, so the digests of decisions recorded
    /// before clients were named stay the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client: Option<&'a str>,
    pub(crate) advice_id: Option<&'a AdviceId>,
    /// Last, and left out when there is none, so the digests of decisions
    /// recorded before notes stay the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<&'a str>,
}
