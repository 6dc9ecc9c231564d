//! The inferential gate: one question per evaluation, a pass/fail verdict
//! with findings back.

use std::{fmt::Write as _, sync::Arc, time::Instant};

use orcho_core::{Finding, GateName, Severity};
use orcho_gates::{
    GateContext, GateError, GateKind, GateOutcome, GateRegistryBuilder, GateSpec, ModelUsage,
    QualityGate, QualityGateResult, RegistryError,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    Client, LlmConfig,
    client::Answer,
    error::LlmError,
    provider::Ask,
    text::{clip, excerpt, tail},
};

/// The registry name of the gate: what a profile's `uses:` says.
pub const LLM_JUDGE: &str = "llm_judge";

const SYSTEM: &str = "\
You are a quality gate in an automated software delivery pipeline. The user \
message describes one phase of work: what the phase reported, and the \
criteria to judge it by. Decide whether the phase passes those criteria. \
Answer with the verdict document only: `fail` when anything blocks \
acceptance, with each blocker as a finding; an empty findings list when \
there is nothing to report.";

const DEFAULT_CRITERIA: &str =
    "Judge whether the phase's reported work is complete and acceptable.";

/// The most characters of the phase's summary in the prompt.
const MAX_SUMMARY_CHARS: usize = 16_000;
/// The most phase findings in the prompt.
const MAX_FINDINGS: usize = 50;
/// The most characters of one finding's detail in the prompt.
const MAX_DETAIL_CHARS: usize = 2_000;
/// The most characters of the answer kept as the output tail.
const MAX_TAIL_CHARS: usize = 4_000;

/// The schema of the verdict document (strict: every key required).
pub(crate) fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["verdict", "summary", "findings"],
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "summary": {"type": "string"},
            "findings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["severity", "message", "file", "line"],
                    "properties": {
                        "severity": {"type": "string", "enum": ["info", "low", "medium", "high", "critical"]},
                        "message": {"type": "string"},
                        "file": {"type": ["string", "null"]},
                        "line": {"type": ["integer", "null"]},
                    },
                },
            },
        },
    })
}

/// Registers the gate as [`LLM_JUDGE`].
///
/// # Errors
///
/// [`RegistryError::Duplicate`] when `llm_judge` is taken.
pub fn register(builder: GateRegistryBuilder) -> Result<GateRegistryBuilder, RegistryError> {
    builder.register(LLM_JUDGE, LlmJudge::from_spec)
}

/// An inferential gate that asks a model whether a phase passes the gate's
/// `instructions`. A bad answer is an error of the gate, never a pass.
#[derive(Debug, Clone)]
pub struct LlmJudge {
    name: GateName,
    client: Client,
}

impl LlmJudge {
    /// A gate named `name` asking through `client`.
    pub fn new(name: GateName, client: Client) -> Self {
        Self { name, client }
    }

    /// Builds the gate from its spec, validating the `with:` block.
    ///
    /// # Errors
    ///
    /// See [`LlmConfig::from_value`].
    pub fn try_from_spec(spec: &GateSpec) -> Result<Self, GateError> {
        let config = LlmConfig::from_value(&spec.config).map_err(GateError::new)?;
        Ok(Self::new(spec.name.clone(), Client::new(config)))
    }

    /// The registry's factory for `llm_judge`.
    ///
    /// # Errors
    ///
    /// See [`LlmConfig::from_value`].
    pub fn from_spec(spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
        Ok(Arc::new(Self::try_from_spec(spec)?))
    }

    /// The same gate, with its client changed by `f` (a key lookup, say).
    #[must_use]
    pub fn map_client(mut self, f: impl FnOnce(Client) -> Client) -> Self {
        self.client = f(self.client);
        self
    }

    fn result(&self, answer: &Answer, verdict: Verdict) -> Result<QualityGateResult, LlmError> {
        let config = self.client.config();
        let usage = match answer.tokens {
            Some(tokens) => ModelUsage::new(config.cost(tokens)?, Some(tokens)),
            None => ModelUsage::default(),
        };
        let outcome = if verdict.verdict == "pass" {
            GateOutcome::Passed
        } else {
            GateOutcome::Failed
        };
        let summary = if verdict.summary.trim().is_empty() {
            format!(
                "`{}` said {}, without a summary",
                config.model, verdict.verdict
            )
        } else {
            verdict.summary.trim().to_owned()
        };
        let findings = verdict.findings.into_iter().map(|f| {
            let mut finding = Finding::new(self.name.as_str(), f.severity, f.message);
            if let Some(file) = f.file {
                finding = finding.with_file(file);
            }
            if let Some(line) = f.line {
                finding = finding.with_line(line);
            }
            finding
        });
        Ok(QualityGateResult::inferential(self.name.clone(), outcome)
            .with_model_usage(usage)
            .with_summary(summary)
            .with_findings(findings)
            .with_output_tail(tail(&answer.text, MAX_TAIL_CHARS)))
    }
}

/// The verdict document.
#[derive(Debug, Deserialize)]
struct Verdict {
    verdict: String,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    findings: Vec<VerdictFinding>,
}

#[derive(Debug, Deserialize)]
struct VerdictFinding {
    severity: Severity,
    message: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u32>,
}

/// Reads the verdict; anything else is malformed.
fn parse_verdict(text: &str) -> Result<Verdict, LlmError> {
    let verdict: Verdict = serde_json::from_str(text)
        .map_err(|e| LlmError::malformed("verdict", format!("{e}, in: {}", excerpt(text))))?;
    if verdict.verdict != "pass" && verdict.verdict != "fail" {
        return Err(LlmError::malformed(
            "verdict",
            format!(
                "`verdict` is `{}`; expected `pass` or `fail`",
                clip(&verdict.verdict, 40)
            ),
        ));
    }
    Ok(verdict)
}

/// The material: which phase and attempt, what it reported, the criteria.
fn user_message(ctx: &GateContext, instructions: Option<&str>) -> String {
    let outcome = &ctx.phase_outcome();
    let mut m = String::new();
    let _ = writeln!(
        m,
        "Phase: `{}`, attempt {}, round {}.",
        ctx.phase(),
        ctx.attempt(),
        ctx.round()
    );
    let _ = writeln!(m, "The phase's own verdict: `{}`.", outcome.verdict);
    m.push_str("\nThe phase's summary:\n");
    let summary = outcome.summary.trim();
    if summary.is_empty() {
        m.push_str("(none)\n");
    } else {
        m.push_str(&clip(summary, MAX_SUMMARY_CHARS));
        m.push('\n');
    }
    m.push_str("\nFindings the phase reported:\n");
    if outcome.findings.is_empty() {
        m.push_str("(none)\n");
    }
    for finding in outcome.findings.iter().take(MAX_FINDINGS) {
        let _ = write!(m, "- [{}] {}", finding.severity, finding.title);
        if let Some(file) = &finding.file {
            let _ = write!(
                m,
                " ({file}{})",
                finding.line.map(|l| format!(":{l}")).unwrap_or_default()
            );
        }
        m.push('\n');
        for line in clip(finding.detail.trim(), MAX_DETAIL_CHARS)
            .lines()
            .filter(|l| !l.is_empty())
        {
            let _ = writeln!(m, "  {line}");
        }
    }
    if outcome.findings.len() > MAX_FINDINGS {
        let _ = writeln!(
            m,
            "(and {} more findings, cut)",
            outcome.findings.len() - MAX_FINDINGS
        );
    }
    m.push_str("\nYour criteria:\n");
    m.push_str(
        instructions
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .unwrap_or(DEFAULT_CRITERIA),
    );
    m.push('\n');
    m
}

#[orcho_gates::async_trait]
impl QualityGate for LlmJudge {
    fn name(&self) -> &GateName {
        &self.name
    }

    fn kind(&self) -> GateKind {
        GateKind::Inferential
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let started = Instant::now();
        let skipped = || {
            QualityGateResult::inferential(
                self.name.clone(),
                GateOutcome::Skipped {
                    reason: "cancelled before the model answered".to_owned(),
                },
            )
            .with_duration(started.elapsed())
        };
        if ctx.cancel().is_cancelled() {
            return Ok(skipped());
        }
        let client = self.client.clone();
        let user = user_message(ctx, client.config().instructions.as_deref());
        let cancel = ctx.cancel().clone();
        let asked = tokio::task::spawn_blocking(move || {
            let schema = verdict_schema();
            let ask = Ask {
                name: "verdict",
                system: SYSTEM,
                user: &user,
                schema: &schema,
            };
            client.ask(&ask, &|| cancel.is_cancelled())
        });
        let answer = tokio::select! {
            joined = asked => match joined {
                Ok(Ok(answer)) => answer,
                Ok(Err(LlmError::Cancelled)) => return Ok(skipped()),
                Ok(Err(e)) => return Err(GateError::new(e)),
                Err(e) => return Err(GateError::new(LlmError::Task(e.to_string()))),
            },
            () = ctx.cancel().cancelled() => return Ok(skipped()),
        };
        let verdict = parse_verdict(&answer.text).map_err(GateError::new)?;
        Ok(self
            .result(&answer, verdict)
            .map_err(GateError::new)?
            .with_duration(started.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_read_or_refused() {
        let v = parse_verdict(r#"{"verdict":"fail","summary":"s","findings":[{"severity":"high","message":"m","file":null,"line":null}]}"#).unwrap();
        assert_eq!(v.findings.len(), 1);
        insta::assert_snapshot!(parse_verdict("Looks good!").unwrap_err(), @"malformed verdict: expected value at line 1 column 1, in: Looks good!");
        insta::assert_snapshot!(parse_verdict(r#"{"verdict":"maybe"}"#).unwrap_err(), @"malformed verdict: `verdict` is `maybe`; expected `pass` or `fail`");
        insta::assert_snapshot!(parse_verdict(r#"{"verdict":"fail","findings":[{"severity":"urgent","message":"x"}]}"#).unwrap_err(), @r#"malformed verdict: unknown variant `urgent`, expected one of `info`, `low`, `medium`, `high`, `critical` at line 1 column 50, in: {"verdict":"fail","findings":[{"severity":"urgent","message":"x"}]}"#);
    }
}
