//! The waiver record: `runs/<run>/waivers/<handoff>.json`.

use orcho_core::{
    Digest, GateName, HandoffId, PhaseName, RunId, SchemaVersion, Timestamp, schema::Document,
};
use serde::{Deserialize, Serialize};

use crate::{
    decision::DecidedBy,
    waiver::{WaivedFinding, Waiver},
};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WaiverDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) run_id: RunId,
    pub(crate) handoff_id: HandoffId,
    pub(crate) phase: PhaseName,
    pub(crate) reason: String,
    pub(crate) findings: Vec<WaivedFindingRepr>,
    pub(crate) gates: Vec<GateName>,
    pub(crate) waived_by: DecidedBy,
    pub(crate) waived_at: Timestamp,
    pub(crate) decision_digest: Digest,
}

impl Document for WaiverDoc {
    const KIND: &'static str = "waiver";
    /// Version 1: run_id, handoff_id, phase, reason, findings (fingerprint,
    /// source, title), gates, waived_by, waived_at, decision_digest.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WaivedFindingRepr {
    pub(crate) fingerprint: Digest,
    pub(crate) source: String,
    pub(crate) title: String,
}

impl From<Waiver> for WaiverDoc {
    fn from(w: Waiver) -> Self {
        Self {
            schema: Self::SCHEMA,
            run_id: w.run,
            handoff_id: w.handoff,
            phase: w.phase,
            reason: w.reason,
            findings: w
                .findings
                .into_iter()
                .map(|f| WaivedFindingRepr {
                    fingerprint: f.fingerprint,
                    source: f.source,
                    title: f.title,
                })
                .collect(),
            gates: w.gates,
            waived_by: w.waived_by,
            waived_at: w.waived_at,
            decision_digest: w.decision_digest,
        }
    }
}

impl From<WaiverDoc> for Waiver {
    fn from(d: WaiverDoc) -> Self {
        Self {
            run: d.run_id,
            handoff: d.handoff_id,
            phase: d.phase,
            reason: d.reason,
            findings: d
                .findings
                .into_iter()
                .map(|f| WaivedFinding {
                    fingerprint: f.fingerprint,
                    source: f.source,
                    title: f.title,
                })
                .collect(),
            gates: d.gates,
            waived_by: d.waived_by,
            waived_at: d.waived_at,
            decision_digest: d.decision_digest,
        }
    }
}
