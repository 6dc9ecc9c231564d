//! The journal's own copies of the gate types it records (schema 1): what
//! an attempt reported and what each gate said. A serde change in
//! `orcho-gates` cannot change the journal; a change here is a new schema.

use orcho_core::{Finding, GateName, Tokens, Usd, Verdict};
use orcho_gates::{
    FailStrategy, GateFailure, GateKind, GateOutcome, GateRecord, ModelUsage, PhaseOutcome,
    QualityGateResult, ResultKind,
};
use serde::{Deserialize, Serialize};

/// `{"verdict": …, "findings": […], "summary": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhaseOutcomeV1 {
    verdict: Verdict,
    #[serde(default)]
    findings: Vec<Finding>,
    #[serde(default)]
    summary: String,
}

impl From<&PhaseOutcome> for PhaseOutcomeV1 {
    fn from(o: &PhaseOutcome) -> Self {
        Self {
            verdict: o.verdict,
            findings: o.findings.clone(),
            summary: o.summary.clone(),
        }
    }
}

impl From<PhaseOutcomeV1> for PhaseOutcome {
    fn from(o: PhaseOutcomeV1) -> Self {
        Self::new(o.verdict)
            .with_findings(o.findings)
            .with_summary(o.summary)
    }
}

/// How a gate ended: `{"status": "passed" | "failed" | "skipped" |
/// "timed_out" | "errored", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum GateOutcomeV1 {
    Passed,
    Failed,
    Skipped { reason: String },
    TimedOut { after_ms: u64 },
    Errored { error: String },
}

impl From<&GateOutcome> for GateOutcomeV1 {
    fn from(o: &GateOutcome) -> Self {
        match o {
            GateOutcome::Passed => Self::Passed,
            GateOutcome::Failed => Self::Failed,
            GateOutcome::Skipped { reason } => Self::Skipped {
                reason: reason.clone(),
            },
            GateOutcome::TimedOut { after_ms } => Self::TimedOut {
                after_ms: *after_ms,
            },
            GateOutcome::Errored { error } => Self::Errored {
                error: error.clone(),
            },
            other => Self::Errored {
                error: format!(
                    "a gate outcome this journal cannot record: {}",
                    other.as_str()
                ),
            },
        }
    }
}

impl From<GateOutcomeV1> for GateOutcome {
    fn from(o: GateOutcomeV1) -> Self {
        match o {
            GateOutcomeV1::Passed => Self::Passed,
            GateOutcomeV1::Failed => Self::Failed,
            GateOutcomeV1::Skipped { reason } => Self::Skipped { reason },
            GateOutcomeV1::TimedOut { after_ms } => Self::TimedOut { after_ms },
            GateOutcomeV1::Errored { error } => Self::Errored { error },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum GateKindV1 {
    Computational,
    Inferential,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageV1 {
    cost_usd: Option<Usd>,
    tokens: Option<Tokens>,
}

/// One gate's result: `gate`, `kind`, `usage` (inferential only),
/// `outcome`, `findings`, `summary`, `output_tail`, `duration_ms`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateResultV1 {
    gate: GateName,
    kind: GateKindV1,
    usage: Option<UsageV1>,
    outcome: GateOutcomeV1,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    summary: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    output_tail: String,
    duration_ms: u64,
}

impl From<&QualityGateResult> for GateResultV1 {
    fn from(r: &QualityGateResult) -> Self {
        let (kind, usage) = match r.result_kind() {
            ResultKind::Inferential { usage } => (
                GateKindV1::Inferential,
                Some(UsageV1 {
                    cost_usd: usage.cost_usd,
                    tokens: usage.tokens,
                }),
            ),
            _ => (GateKindV1::Computational, None),
        };
        Self {
            gate: r.gate.clone(),
            kind,
            usage,
            outcome: (&r.outcome).into(),
            findings: r.findings.clone(),
            summary: r.summary.clone(),
            output_tail: r.output_tail.clone(),
            duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl TryFrom<GateResultV1> for QualityGateResult {
    type Error = String;

    fn try_from(r: GateResultV1) -> Result<Self, Self::Error> {
        let kind = match r.kind {
            GateKindV1::Computational => GateKind::Computational,
            GateKindV1::Inferential => GateKind::Inferential,
        };
        Self::of_kind(kind, r.gate, r.outcome.into())
            .with_findings(r.findings)
            .with_summary(r.summary)
            .with_output_tail(r.output_tail)
            .with_duration(std::time::Duration::from_millis(r.duration_ms))
            .with_reported_usage(r.usage.map(|u| ModelUsage::new(u.cost_usd, u.tokens)))
            .map_err(|e| e.to_string())
    }
}

fn strategy(spelling: &str) -> Result<FailStrategy, String> {
    spelling.parse().map_err(|e| orcho_core::error_chain(&e))
}

/// A gate's record in its phase: `index`, `on_fail`, `lock_group`,
/// `result`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GateRecordV1 {
    index: usize,
    on_fail: String,
    lock_group: Option<String>,
    result: GateResultV1,
}

impl From<&GateRecord> for GateRecordV1 {
    fn from(r: &GateRecord) -> Self {
        Self {
            index: r.index,
            on_fail: r.on_fail.as_str().to_owned(),
            lock_group: r.lock_group.clone(),
            result: (&r.result).into(),
        }
    }
}

impl TryFrom<GateRecordV1> for GateRecord {
    type Error = String;

    fn try_from(r: GateRecordV1) -> Result<Self, Self::Error> {
        Ok(
            Self::new(r.index, strategy(&r.on_fail)?, r.result.try_into()?)
                .with_lock_group(r.lock_group),
        )
    }
}

/// A failure fed into the next attempt or a replan: `gate`, `on_fail`,
/// `outcome`, `summary`, `findings`, `output_tail`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GateFailureV1 {
    gate: GateName,
    on_fail: String,
    outcome: GateOutcomeV1,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    summary: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    output_tail: String,
}

impl From<&GateFailure> for GateFailureV1 {
    fn from(f: &GateFailure) -> Self {
        Self {
            gate: f.gate.clone(),
            on_fail: f.on_fail.as_str().to_owned(),
            outcome: (&f.outcome).into(),
            summary: f.summary.clone(),
            findings: f.findings.clone(),
            output_tail: f.output_tail.clone(),
        }
    }
}

impl TryFrom<GateFailureV1> for GateFailure {
    type Error = String;

    fn try_from(f: GateFailureV1) -> Result<Self, Self::Error> {
        Ok(Self::new(f.gate, strategy(&f.on_fail)?, f.outcome.into())
            .with_summary(f.summary)
            .with_findings(f.findings)
            .with_output_tail(f.output_tail))
    }
}
