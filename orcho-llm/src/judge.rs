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

/// How many bytes of the attempt's diff the judge is shown when
/// `max_diff_bytes` is not given.
pub const DEFAULT_MAX_DIFF_BYTES: usize = 64 * 1024;
/// The most `max_diff_bytes` may be.
pub const MAX_DIFF_BYTES: usize = 1024 * 1024;

/// What the judge is shown besides its criteria: the parts of the `with:`
/// block's `include` list (default: every part), and how much of the diff.
///
/// ```yaml
/// include: [task, plan, diff, summary, findings]   # the default: all of them
/// max_diff_bytes: 65536                              # the diff is cut there, and says so
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Material {
    task: bool,
    plan: bool,
    diff: bool,
    summary: bool,
    findings: bool,
    max_diff_bytes: usize,
}

/// The parts `include` may name.
const PARTS: [&str; 5] = ["task", "plan", "diff", "summary", "findings"];

impl Default for Material {
    /// Every part, and [`DEFAULT_MAX_DIFF_BYTES`] of the diff.
    fn default() -> Self {
        Self {
            task: true,
            plan: true,
            diff: true,
            summary: true,
            findings: true,
            max_diff_bytes: DEFAULT_MAX_DIFF_BYTES,
        }
    }
}

impl Material {
    /// Takes `include` and `max_diff_bytes` out of a `with:` block; what is
    /// left is the model's configuration ([`LlmConfig`]).
    ///
    /// # Errors
    ///
    /// [`LlmError::Config`] for an `include` that is not a list of known
    /// parts (with the nearest), or a `max_diff_bytes` that is not a whole
    /// number from 1 to [`MAX_DIFF_BYTES`].
    pub fn split(with: &Value) -> Result<(Self, Value), LlmError> {
        let mut rest = with.clone();
        let mut material = Self::default();
        let Some(map) = rest.as_object_mut() else {
            return Ok((material, rest));
        };
        if let Some(include) = map.remove("include") {
            let Some(parts) = include.as_array() else {
                return Err(LlmError::config(
                    "include",
                    format!("must be a list of parts, some of {}", PARTS.join(", ")),
                ));
            };
            material.task = false;
            material.plan = false;
            material.diff = false;
            material.summary = false;
            material.findings = false;
            for part in parts {
                match part.as_str() {
                    Some("task") => material.task = true,
                    Some("plan") => material.plan = true,
                    Some("diff") => material.diff = true,
                    Some("summary") => material.summary = true,
                    Some("findings") => material.findings = true,
                    other => {
                        let shown = other.map_or_else(|| part.to_string(), str::to_owned);
                        let near = other
                            .and_then(|o| orcho_core::nearest(o, PARTS))
                            .map(|n| format!(" (did you mean `{n}`?)"))
                            .unwrap_or_default();
                        return Err(LlmError::config(
                            "include",
                            format!(
                                "has the unknown part `{shown}`{near}; the parts are {}",
                                PARTS.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(max) = map.remove("max_diff_bytes") {
            material.max_diff_bytes = max
                .as_u64()
                .and_then(|m| usize::try_from(m).ok())
                .filter(|m| (1..=MAX_DIFF_BYTES).contains(m))
                .ok_or_else(|| {
                    LlmError::config(
                        "max_diff_bytes",
                        format!("must be a whole number from 1 to {MAX_DIFF_BYTES}, not {max}"),
                    )
                })?;
        }
        Ok((material, rest))
    }
}

/// An inferential gate that asks a model whether a phase passes the gate's
/// `instructions`, shown the run's task, its plan, the attempt's diff
/// against the run's base and what the phase reported ([`Material`]). A
/// bad answer is an error of the gate, never a pass.
#[derive(Debug, Clone)]
pub struct LlmJudge {
    name: GateName,
    client: Client,
    material: Material,
}

impl LlmJudge {
    /// A gate named `name` asking through `client`, shown every part.
    pub fn new(name: GateName, client: Client) -> Self {
        Self {
            name,
            client,
            material: Material::default(),
        }
    }

    /// The same gate, shown `material`.
    #[must_use]
    pub fn with_material(mut self, material: Material) -> Self {
        self.material = material;
        self
    }

    /// Builds the gate from its spec, validating the `with:` block: the
    /// model's keys ([`LlmConfig`]) and what it is shown ([`Material`]).
    ///
    /// # Errors
    ///
    /// See [`LlmConfig::from_value`] and [`Material::split`].
    pub fn try_from_spec(spec: &GateSpec) -> Result<Self, GateError> {
        let (material, rest) = Material::split(&spec.config).map_err(GateError::new)?;
        let config = LlmConfig::from_value(&rest).map_err(GateError::new)?;
        Ok(Self::new(spec.name.clone(), Client::new(config)).with_material(material))
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

/// The material: which phase and attempt, the task, the plan, the diff,
/// what the phase reported (as `material` includes them), the criteria.
fn user_message(ctx: &GateContext, material: &Material, instructions: Option<&str>) -> String {
    let outcome = &ctx.phase_outcome();
    let work = ctx.work();
    let mut m = String::new();
    let _ = writeln!(
        m,
        "Phase: `{}`, attempt {}, round {}.",
        ctx.phase(),
        ctx.attempt(),
        ctx.round()
    );
    if material.task {
        m.push_str("\nThe run's task:\n");
        m.push_str(work.task().map_or("(none given)", str::trim));
        m.push('\n');
    }
    if material.plan
        && let Some(plan) = work.plan()
    {
        m.push_str("\nThe plan the run carries out:\n");
        m.push_str(plan.trim_end());
        m.push('\n');
    }
    if material.diff {
        diff_section(&mut m, work.diff(), material.max_diff_bytes);
    }
    let _ = writeln!(m, "\nThe phase's own verdict: `{}`.", outcome.verdict);
    if material.summary {
        m.push_str("\nThe phase's summary:\n");
        let summary = outcome.summary.trim();
        if summary.is_empty() {
            m.push_str("(none)\n");
        } else {
            m.push_str(&clip(summary, MAX_SUMMARY_CHARS));
            m.push('\n');
        }
    }
    if material.findings {
        findings_section(&mut m, &outcome.findings);
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

/// The attempt's diff, at most `max` bytes of it, saying what was cut.
fn diff_section(m: &mut String, diff: Option<&orcho_gates::Diff>, max: usize) {
    let Some(diff) = diff else {
        m.push_str("\nThe change: (no diff: the checkout is not a tree git could compare)\n");
        return;
    };
    let text = diff.text();
    if text.trim().is_empty() {
        let _ = writeln!(m, "\nThe change: nothing changed since `{}`.", diff.base());
        return;
    }
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let _ = writeln!(
        m,
        "\nThe change (git diff against `{}`; binary files are named, not shown):",
        diff.base()
    );
    m.push_str("```diff\n");
    m.push_str(&text[..end]);
    if !text[..end].ends_with('\n') {
        m.push('\n');
    }
    m.push_str("```\n");
    if end < diff.total_bytes() {
        let _ = writeln!(
            m,
            "(the diff was cut: {end} of its {} bytes are shown)",
            diff.total_bytes()
        );
    }
}

fn findings_section(m: &mut String, findings: &[Finding]) {
    m.push_str("\nFindings the phase reported:\n");
    if findings.is_empty() {
        m.push_str("(none)\n");
    }
    for finding in findings.iter().take(MAX_FINDINGS) {
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
    if findings.len() > MAX_FINDINGS {
        let _ = writeln!(
            m,
            "(and {} more findings, cut)",
            findings.len() - MAX_FINDINGS
        );
    }
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
        let user = user_message(ctx, &self.material, client.config().instructions.as_deref());
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

    #[test]
    fn the_material_is_taken_out_of_the_with_block_and_checked() {
        let (material, rest) = Material::split(&json!({
            "base_url": "http://x/v1", "model": "m", "include": ["diff", "task"], "max_diff_bytes": 100,
        }))
        .unwrap();
        assert!(material.diff && material.task);
        assert!(!material.plan && !material.summary && !material.findings);
        assert_eq!(material.max_diff_bytes, 100);
        assert_eq!(rest, json!({"base_url": "http://x/v1", "model": "m"}));
        let (all, _) = Material::split(&json!({"model": "m"})).unwrap();
        assert_eq!(all, Material::default());
        for (with, said) in [
            (json!({"include": "diff"}), "must be a list"),
            (
                json!({"include": ["plann"]}),
                "unknown part `plann` (did you mean `plan`?)",
            ),
            (json!({"include": [3]}), "unknown part `3`"),
            (json!({"max_diff_bytes": 0}), "from 1 to 1048576, not 0"),
            (json!({"max_diff_bytes": "big"}), "not \"big\""),
            (json!({"max_diff_bytes": 2_000_000}), "not 2000000"),
        ] {
            let err = Material::split(&with).unwrap_err().to_string();
            assert!(err.contains(said), "{with}: {err}");
        }
    }

    #[test]
    fn a_long_diff_is_cut_on_a_character_and_says_how_much_is_shown() {
        let diff = orcho_gates::Diff::new("abc123", "+é\n".repeat(100), 5000);
        let mut m = String::new();
        diff_section(&mut m, Some(&diff), 10);
        assert!(m.contains("```diff\n+é\n+é\n+"), "{m}");
        assert!(
            m.contains("(the diff was cut: 9 of its 5000 bytes are shown)"),
            "{m}"
        );
        let mut m = String::new();
        diff_section(&mut m, None, 10);
        assert!(m.contains("no diff"), "{m}");
    }
}
