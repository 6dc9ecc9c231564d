//! What a gate reports.

use std::time::Duration;

use orcho_core::{Cost, Finding, GateName, Tokens, Usd};
use serde::{Deserialize, Serialize};

use crate::{GateKind, UsageOnComputationalGate};

/// How a gate ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum GateOutcome {
    /// The check passed.
    Passed,
    /// The check ran and said no.
    Failed,
    /// The gate did not run.
    Skipped {
        /// Why, for example "halted by gate `tests`".
        reason: String,
    },
    /// The gate ran past its timeout and was cancelled.
    TimedOut {
        /// The timeout, in milliseconds.
        after_ms: u64,
    },
    /// The gate could not run (its `evaluate` returned `Err`).
    Errored {
        /// The error and its causes, on one line.
        error: String,
    },
}

impl GateOutcome {
    /// The snake_case name of the outcome.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Skipped { .. } => "skipped",
            Self::TimedOut { .. } => "timed_out",
            Self::Errored { .. } => "errored",
        }
    }

    /// Whether the outcome counts as a failure for the gate's fail strategy:
    /// failed, timed out and errored do (a gate that could not prove its
    /// check is never a pass); passed and skipped do not.
    pub fn is_failure(&self) -> bool {
        match self {
            Self::Failed | Self::TimedOut { .. } | Self::Errored { .. } => true,
            Self::Passed | Self::Skipped { .. } => false,
        }
    }
}

/// Money and tokens a model-backed (inferential) gate spent.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ModelUsage {
    /// Money spent, when the provider reports it.
    pub cost_usd: Option<Usd>,
    /// Tokens used, when reported.
    pub tokens: Option<Tokens>,
}

impl ModelUsage {
    /// Usage with money and tokens.
    pub fn new(cost_usd: Option<Usd>, tokens: Option<Tokens>) -> Self {
        Self { cost_usd, tokens }
    }
}

/// The kind of a result together with what only that kind can carry: model
/// usage exists for inferential gates only, so a computational result cannot
/// report money or tokens at all.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum ResultKind {
    /// A shell-style check.
    Computational,
    /// A model-backed judge, with what it spent.
    Inferential {
        /// Money and tokens.
        usage: ModelUsage,
    },
}

/// The typed result of one gate.
///
/// On disk and in JSON: `gate`, `kind` (`computational` or `inferential`),
/// `usage` (inferential only; a computational result with `usage` is refused
/// on read), `outcome`, `findings`, `summary`, `output_tail`, `duration_ms`.
///
/// ```
/// use std::time::Duration;
/// use orcho_core::{Finding, GateName, Severity, Tokens, Usd};
/// use orcho_gates::{GateKind, GateOutcome, ModelUsage, QualityGateResult};
///
/// let tests: GateName = "tests".parse()?;
/// let failed = QualityGateResult::computational(tests, GateOutcome::Failed)
///     .with_finding(Finding::new("tests", Severity::High, "2 tests failed"))
///     .with_summary("2 of 40 tests failed")
///     .with_duration(Duration::from_millis(1800));
/// assert_eq!(failed.kind(), GateKind::Computational);
/// assert!(failed.model_usage().is_none(), "a computational gate cannot report model cost");
///
/// let judge = QualityGateResult::inferential("security".parse()?, GateOutcome::Passed)
///     .with_model_usage(ModelUsage::new(Some(Usd::new(0.02)?), Some(Tokens::new(1200, 80))));
/// assert_eq!(judge.cost().usd, Some(Usd::new(0.02)?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ResultRepr", into = "ResultRepr")]
#[non_exhaustive]
pub struct QualityGateResult {
    /// The gate's name.
    pub gate: GateName,
    result_kind: ResultKind,
    /// How it ended.
    pub outcome: GateOutcome,
    /// What it found.
    pub findings: Vec<Finding>,
    /// One paragraph for people.
    pub summary: String,
    /// The end of its output (bounded; the full log is on disk).
    pub output_tail: String,
    /// Wall time.
    pub duration: Duration,
}

#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultRepr {
    gate: GateName,
    kind: GateKind,
    usage: Option<ModelUsage>,
    outcome: GateOutcome,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    summary: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    output_tail: String,
    duration_ms: u64,
}

impl TryFrom<ResultRepr> for QualityGateResult {
    type Error = String;

    fn try_from(r: ResultRepr) -> Result<Self, Self::Error> {
        Self::of_kind(r.kind, r.gate, r.outcome)
            .with_findings(r.findings)
            .with_summary(r.summary)
            .with_output_tail(r.output_tail)
            .with_duration(Duration::from_millis(r.duration_ms))
            .with_reported_usage(r.usage)
            .map_err(|e| e.to_string())
    }
}

impl From<QualityGateResult> for ResultRepr {
    fn from(r: QualityGateResult) -> Self {
        let (kind, usage) = match r.result_kind {
            ResultKind::Computational => (GateKind::Computational, None),
            ResultKind::Inferential { usage } => (GateKind::Inferential, Some(usage)),
        };
        Self {
            gate: r.gate,
            kind,
            usage,
            outcome: r.outcome,
            findings: r.findings,
            summary: r.summary,
            output_tail: r.output_tail,
            duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl QualityGateResult {
    fn with_kind(gate: GateName, result_kind: ResultKind, outcome: GateOutcome) -> Self {
        Self {
            gate,
            result_kind,
            outcome,
            findings: Vec::new(),
            summary: String::new(),
            output_tail: String::new(),
            duration: Duration::ZERO,
        }
    }

    /// A result of a computational gate.
    pub fn computational(gate: GateName, outcome: GateOutcome) -> Self {
        Self::with_kind(gate, ResultKind::Computational, outcome)
    }

    /// A result of an inferential gate, with no usage reported yet.
    pub fn inferential(gate: GateName, outcome: GateOutcome) -> Self {
        Self::with_kind(
            gate,
            ResultKind::Inferential {
                usage: ModelUsage::default(),
            },
            outcome,
        )
    }

    /// A result of a gate of `kind`.
    pub fn of_kind(kind: GateKind, gate: GateName, outcome: GateOutcome) -> Self {
        match kind {
            GateKind::Computational => Self::computational(gate, outcome),
            GateKind::Inferential => Self::inferential(gate, outcome),
        }
    }

    /// Adds a finding.
    #[must_use]
    pub fn with_finding(mut self, finding: Finding) -> Self {
        self.findings.push(finding);
        self
    }

    /// Adds findings.
    #[must_use]
    pub fn with_findings(mut self, findings: impl IntoIterator<Item = Finding>) -> Self {
        self.findings.extend(findings);
        self
    }

    /// Sets what an inferential gate spent. On a computational result this
    /// does nothing: computational gates cannot report model cost (check
    /// [`kind`](Self::kind) first if the distinction matters to the caller).
    #[must_use]
    pub fn with_model_usage(mut self, usage: ModelUsage) -> Self {
        if let ResultKind::Inferential { usage: slot } = &mut self.result_kind {
            *slot = usage;
        }
        self
    }

    /// Sets the usage a gate reported, if it reported any: what
    /// [`with_model_usage`](Self::with_model_usage) does, for usage read from
    /// a document or a plugin's answer, where usage on a computational
    /// result is a mistake to refuse rather than ignore.
    ///
    /// # Errors
    ///
    /// Usage reported for a computational result.
    pub fn with_reported_usage(
        self,
        usage: Option<ModelUsage>,
    ) -> Result<Self, UsageOnComputationalGate> {
        match (usage, &self.result_kind) {
            (None, _) => Ok(self),
            (Some(usage), ResultKind::Inferential { .. }) => Ok(self.with_model_usage(usage)),
            (Some(_), ResultKind::Computational) => Err(UsageOnComputationalGate {
                gate: self.gate.clone(),
            }),
        }
    }

    /// The kind of gate that produced the result.
    pub fn kind(&self) -> GateKind {
        match self.result_kind {
            ResultKind::Computational => GateKind::Computational,
            ResultKind::Inferential { .. } => GateKind::Inferential,
        }
    }

    /// The kind with its data.
    pub fn result_kind(&self) -> &ResultKind {
        &self.result_kind
    }

    /// What an inferential gate spent; `None` for computational gates.
    pub fn model_usage(&self) -> Option<&ModelUsage> {
        match &self.result_kind {
            ResultKind::Computational => None,
            ResultKind::Inferential { usage } => Some(usage),
        }
    }

    /// The result's cost: wall time, plus money and tokens for inferential
    /// gates.
    pub fn cost(&self) -> Cost {
        let mut cost = Cost::wall(self.duration);
        if let Some(usage) = self.model_usage() {
            cost.usd = usage.cost_usd;
            cost.tokens = usage.tokens;
        }
        cost
    }
}

impl QualityGateResult {
    orcho_core::setters! {
        /// Sets the summary.
        pub fn with_summary(summary: impl Into<String>);
        /// Sets the output tail.
        pub fn with_output_tail(tail: impl Into<String>) => output_tail;
        /// Sets the wall time.
        pub fn with_duration(duration: Duration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_core::Severity;

    fn name(s: &str) -> GateName {
        s.parse().unwrap()
    }

    #[test]
    fn json_shapes() {
        let computational = QualityGateResult::computational(name("tests"), GateOutcome::Failed)
            .with_finding(
                Finding::new("tests", Severity::High, "test `parse_empty` failed")
                    .with_file("src/parse.rs"),
            )
            .with_summary("1 of 12 tests failed")
            .with_output_tail("test parse_empty ... FAILED")
            .with_duration(Duration::from_millis(1834));
        insta::assert_json_snapshot!(computational);
        let inferential = QualityGateResult::inferential(
            name("security"),
            GateOutcome::TimedOut { after_ms: 30_000 },
        )
        .with_model_usage(ModelUsage::new(
            Some(Usd::new(0.0125).unwrap()),
            Some(Tokens::new(1200, 0)),
        ))
        .with_duration(Duration::from_secs(30));
        insta::assert_json_snapshot!(inferential);
        for r in [computational, inferential] {
            let back: QualityGateResult =
                serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
    }

    #[test]
    fn a_computational_result_cannot_carry_model_cost() {
        let r = QualityGateResult::computational(name("lint"), GateOutcome::Passed)
            .with_model_usage(ModelUsage::new(Some(Usd::new(1.0).unwrap()), None));
        assert_eq!(r.model_usage(), None);
        assert_eq!(r.cost().usd, None);
        let forged = r#"{"gate": "lint", "kind": "computational", "usage": {"cost_usd": 1.0}, "outcome": {"status": "passed"}, "duration_ms": 5}"#;
        let err = serde_json::from_str::<QualityGateResult>(forged).unwrap_err();
        insta::assert_snapshot!(err, @"gate `lint` is computational and cannot report model usage (`usage`)");
    }

    #[test]
    fn failures_for_strategies() {
        assert!(GateOutcome::Failed.is_failure());
        assert!(GateOutcome::TimedOut { after_ms: 1 }.is_failure());
        assert!(GateOutcome::Errored { error: "x".into() }.is_failure());
        assert!(!GateOutcome::Passed.is_failure());
        assert!(!GateOutcome::Skipped { reason: "x".into() }.is_failure());
    }
}
