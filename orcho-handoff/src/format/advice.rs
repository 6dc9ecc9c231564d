//! The advice artifact: `runs/<run>/advice/<id>.json`.

use camino::Utf8PathBuf;
use orcho_core::{Cost, HandoffId, RunId, SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Serialize};

use crate::{
    Advice, Confidence, HandoffAction,
    advisor::{AdviceId, AdviceRecord, ConfidenceBand},
    decision::DecidedBy,
};

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct AdviceDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) advice_id: AdviceId,
    pub(crate) run_id: RunId,
    pub(crate) handoff_id: HandoffId,
    /// Provenance: the advisor's name, who asked, when.
    pub(crate) advisor: String,
    pub(crate) requested_by: DecidedBy,
    pub(crate) created_at: Timestamp,
    /// Always false: advice is never applied by itself. Written so that a
    /// reader of the file alone cannot mistake it for a decision.
    pub(crate) applied: bool,
    pub(crate) recommended_action: HandoffAction,
    pub(crate) confidence: ConfidenceRepr,
    pub(crate) rationale: String,
    pub(crate) risks: Vec<String>,
    pub(crate) retry_feedback: Option<String>,
    pub(crate) expected_files: Vec<Utf8PathBuf>,
    pub(crate) usage: Option<Cost>,
}

/// `{"score": 0.8, "band": "high"}`, either part optional.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ConfidenceRepr {
    score: Option<f64>,
    band: Option<ConfidenceBand>,
}

impl From<Confidence> for ConfidenceRepr {
    fn from(c: Confidence) -> Self {
        Self {
            score: c.score_value(),
            band: c.band_value(),
        }
    }
}

impl From<ConfidenceRepr> for Confidence {
    fn from(r: ConfidenceRepr) -> Self {
        let base = match r.score {
            Some(score) => Self::score(score),
            None => Self::default(),
        };
        match r.band {
            Some(band) => base.with_band(band),
            None => base,
        }
    }
}

impl Document for AdviceDoc {
    const KIND: &'static str = "advice";
    /// Version 1: advice_id, run_id, handoff_id, advisor, requested_by,
    /// created_at, applied, recommended_action, confidence {score, band},
    /// rationale, risks, retry_feedback, expected_files, usage.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

impl From<AdviceRecord> for AdviceDoc {
    fn from(r: AdviceRecord) -> Self {
        let a = r.advice;
        Self {
            schema: Self::SCHEMA,
            advice_id: r.id,
            run_id: r.run,
            handoff_id: r.handoff,
            advisor: r.advisor,
            requested_by: r.requested_by,
            created_at: r.created_at,
            applied: false,
            recommended_action: a.recommended_action,
            confidence: a.confidence.into(),
            rationale: a.rationale,
            risks: a.risks,
            retry_feedback: a.retry_feedback,
            expected_files: a.expected_files,
            usage: a.usage,
        }
    }
}

impl From<AdviceDoc> for AdviceRecord {
    fn from(d: AdviceDoc) -> Self {
        Self {
            id: d.advice_id,
            run: d.run_id,
            handoff: d.handoff_id,
            advisor: d.advisor,
            requested_by: d.requested_by,
            created_at: d.created_at,
            advice: Advice {
                recommended_action: d.recommended_action,
                confidence: d.confidence.into(),
                rationale: d.rationale,
                risks: d.risks,
                retry_feedback: d.retry_feedback,
                expected_files: d.expected_files,
                usage: d.usage,
            },
        }
    }
}
