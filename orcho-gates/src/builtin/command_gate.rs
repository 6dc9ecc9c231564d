//! The built-in gate `command`: a program in any language that reads the
//! gate context as JSON on standard input and may print its result as JSON
//! on standard output (the command-gate protocol, schema 1).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{Finding, GateName, Severity, Tokens, Usd};
use orcho_receipts::{
    HumanDuration,
    exec::{self, BaseEnv, ExecOutcome, ExecRequest, ExitStatus},
};
use serde::{Deserialize, Serialize};

use super::process::run_cancellable;
use crate::{
    GateContext, GateError, GateKind, GateOutcome, GateSpec, ModelUsage, QualityGate,
    QualityGateResult,
};

/// The registry name of the built-in `command` gate.
pub const COMMAND: &str = "command";

/// The schema of the documents the gate and its program exchange.
///
/// Changelog:
/// - 1: first version.
pub const COMMAND_GATE_SCHEMA: u32 = 1;

/// How long the program may run when `with:` sets no `timeout` (the gate's
/// own `timeout:` in the profile cancels it sooner).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How much standard output is read as the result document.
const MAX_RESULT_BYTES: usize = 1 << 20;

/// How much of the program's output is kept as the result's tail.
const TAIL_BYTES: usize = 8 * 1024;

/// The `with:` block of a `command` gate.
///
/// ```yaml
/// gates:
///   - name: style
///     uses: command
///     on_fail: feed_into_next
///     with:
///       argv: [python3, gates/style.py]  # the program and its arguments, never a shell line
///       kind: computational              # or inferential (may then report usage)
///       timeout: 5m                      # default 30m
///       inherit: [OPENAI_API_KEY]        # host variables it also gets
///       env: { STYLE: strict }           # variables of its own
///       config: { max_line: 100 }        # handed to the program as `config`
/// ```
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandGateConfig {
    /// The program and its arguments, run from the checkout root.
    pub argv: Vec<String>,
    /// Whether the gate is computational or inferential.
    #[serde(default = "computational")]
    pub kind: GateKind,
    /// How long it may run.
    pub timeout: Option<HumanDuration>,
    /// Variables of the host it also gets (the base ones — `PATH`, `HOME`,
    /// the locale — always; the receipt key never).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherit: Vec<String>,
    /// Variables of its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Anything, handed to the program as the context's `config`.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub config: serde_json::Value,
}

fn computational() -> GateKind {
    GateKind::Computational
}

/// Runs a program that speaks the command-gate protocol, so that a gate can
/// be written in any language and used from any host.
///
/// The program runs from the checkout root, in a process group of its own,
/// with the base environment, the variables `with:` adds, and `ORCHO_RUN`,
/// `ORCHO_PHASE`, `ORCHO_ATTEMPT`, `ORCHO_ROUND` and `ORCHO_GATE`. It reads
/// the gate context on standard input:
///
/// ```json
/// {"schema": 1, "gate": "style", "run": "…", "phase": "implement", "attempt": 1, "round": 1,
///  "checkout": "/path/to/worktree", "kind": "computational",
///  "phase_outcome": {"verdict": "approved", "summary": "…", "findings": []},
///  "config": {"max_line": 100}}
/// ```
///
/// and may print its result on standard output:
///
/// ```json
/// {"schema": 1, "outcome": "failed", "summary": "2 lines too long",
///  "findings": [{"title": "line too long", "severity": "medium", "file": "src/a.py", "line": 3}],
///  "usage": {"cost_usd": 0.002, "input_tokens": 1200, "output_tokens": 80}}
/// ```
///
/// - A result document decides: `outcome` is `passed` or `failed`; findings
///   have a `title` and may have `detail`, `severity` (`info` … `critical`,
///   default `high`), `file`, `line` and `key`; `usage` is for inferential
///   gates only. A document that does not parse, or that says `passed`
///   while the program exits non-zero, is an error of the gate, with where
///   the document is wrong.
/// - Without a document (nothing on standard output), exit 0 passes and
///   anything else fails, with the end of the program's output as the
///   finding: a plain script works as it is.
/// - Past its timeout the program's group is stopped (`SIGTERM`, then
///   `SIGKILL`) and the gate reports timed out; cancelling the gate does the
///   same. A program that cannot be started is an error of the gate.
#[derive(Debug, Clone)]
pub struct CommandGate {
    name: GateName,
    config: CommandGateConfig,
}

impl CommandGate {
    /// Builds the gate from its spec (the registry's factory for `command`).
    ///
    /// # Errors
    ///
    /// When `with:` is missing, has unknown keys, or has an empty `argv`,
    /// a zero `timeout`, or a variable name that is empty or has `=`.
    pub fn from_spec(spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
        if spec.config.is_null() {
            return Err(GateError::msg(
                "a `command` gate needs `with: { argv: [PROGRAM, ARGS…] }`",
            ));
        }
        let config = CommandGateConfig::deserialize(&spec.config).map_err(GateError::new)?;
        if config.argv.first().is_none_or(String::is_empty) {
            return Err(GateError::msg(
                "`argv` is empty or its program is an empty string",
            ));
        }
        if config.timeout.is_some_and(|t| t.get().is_zero()) {
            return Err(GateError::msg(
                "`timeout` is zero, so the gate could never pass",
            ));
        }
        let bad_name = |n: &String| n.is_empty() || n.contains('=') || n.contains('\0');
        if let Some(name) = config
            .inherit
            .iter()
            .chain(config.env.keys())
            .find(|n| bad_name(n))
        {
            return Err(GateError::msg(format!(
                "`{name}` is not a variable name (empty, or with `=` or a NUL byte)"
            )));
        }
        Ok(Arc::new(Self {
            name: spec.name.clone(),
            config,
        }))
    }

    /// Its configuration.
    pub fn config(&self) -> &CommandGateConfig {
        &self.config
    }

    fn request(&self, ctx: &GateContext) -> Result<ExecRequest, GateError> {
        let input = ContextV1 {
            schema: COMMAND_GATE_SCHEMA,
            gate: self.name.as_str(),
            run: ctx.run().as_str(),
            phase: ctx.phase().as_str(),
            attempt: ctx.attempt(),
            round: ctx.round(),
            checkout: ctx.checkout().as_str(),
            kind: self.config.kind,
            phase_outcome: PhaseOutcomeV1 {
                verdict: ctx.phase_outcome().verdict.as_str(),
                summary: &ctx.phase_outcome().summary,
                findings: ctx
                    .phase_outcome()
                    .findings
                    .iter()
                    .map(FindingV1::from)
                    .collect(),
            },
            config: &self.config.config,
        };
        let stdin = serde_json::to_vec(&input).map_err(GateError::new)?;
        let base =
            BaseEnv::inherit().with_host_vars(self.config.inherit.iter().map(String::as_str));
        Ok(ExecRequest::new(&self.config.argv)
            .cwd(ctx.checkout().to_owned())
            .envs(base)
            .envs(self.config.env.clone())
            .env("ORCHO_RUN", ctx.run().as_str())
            .env("ORCHO_PHASE", ctx.phase().as_str())
            .env("ORCHO_ATTEMPT", ctx.attempt().to_string())
            .env("ORCHO_ROUND", ctx.round().to_string())
            .env("ORCHO_GATE", self.name.as_str())
            .timeout(
                self.config
                    .timeout
                    .map_or(DEFAULT_COMMAND_TIMEOUT, HumanDuration::get),
            )
            .keep_stdout(MAX_RESULT_BYTES)
            .tail_bytes(TAIL_BYTES)
            .stdin(stdin))
    }

    fn result(&self, outcome: &ExecOutcome) -> Result<QualityGateResult, GateError> {
        let program = self.config.argv.first().map_or("", String::as_str);
        let tail = output_tail(outcome);
        let base = |gate_outcome| {
            QualityGateResult::of_kind(self.config.kind, self.name.clone(), gate_outcome)
                .with_duration(outcome.duration)
                .with_output_tail(tail.clone())
        };
        match &outcome.status {
            ExitStatus::SpawnFailed { message } => {
                return Err(GateError::msg(format!(
                    "`{program}` could not be started: {message}"
                )));
            }
            ExitStatus::TimedOut { after } => {
                return Ok(base(GateOutcome::TimedOut {
                    after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            ExitStatus::Cancelled => {
                return Ok(base(GateOutcome::Skipped {
                    reason: "cancelled".to_owned(),
                }));
            }
            _ => {}
        }
        let stdout: &[u8] = match &outcome.stdout.kept {
            Some(kept) => kept,
            None if outcome.stdout.total_bytes == 0 => &[],
            None => {
                return Err(GateError::msg(format!(
                    "`{program}` printed more than {} MiB; the result document must be smaller",
                    MAX_RESULT_BYTES >> 20
                )));
            }
        };
        if stdout.trim_ascii().is_empty() {
            // No document: the exit status decides.
            return Ok(if outcome.status.success() {
                base(GateOutcome::Passed).with_summary(format!("`{program}` passed"))
            } else {
                let summary = format!("`{program}` failed: {}", outcome.status);
                base(GateOutcome::Failed)
                    .with_summary(summary.clone())
                    .with_finding(
                        Finding::new(self.name.as_str(), Severity::High, summary)
                            .with_detail(tail.clone()),
                    )
            });
        }
        // serde would read an array field by field as the object.
        if stdout.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(GateError::msg(format!(
                "`{program}` printed a result that is not a JSON object; a command-gate \
                 document (schema {COMMAND_GATE_SCHEMA}) is `{{\"schema\": {COMMAND_GATE_SCHEMA}, …}}`"
            )));
        }
        let doc: ResultV1 = serde_json::from_slice(stdout).map_err(|e| {
            GateError::msg(format!(
                "`{program}` printed a result that is not a command-gate document \
                 (schema {COMMAND_GATE_SCHEMA}): line {}, column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        if doc.schema != COMMAND_GATE_SCHEMA {
            return Err(GateError::msg(format!(
                "`{program}` printed a result of schema {}; this build reads schema \
                 {COMMAND_GATE_SCHEMA}",
                doc.schema
            )));
        }
        if doc.outcome == OutcomeV1::Passed && !outcome.status.success() {
            return Err(GateError::msg(format!(
                "`{program}` reported `passed` but {}; a gate that passes exits 0",
                outcome.status
            )));
        }
        let mut result = base(match doc.outcome {
            OutcomeV1::Passed => GateOutcome::Passed,
            OutcomeV1::Failed => GateOutcome::Failed,
        })
        .with_summary(doc.summary);
        for (i, f) in doc.findings.into_iter().enumerate() {
            result = result.with_finding(
                f.into_finding(self.name.as_str())
                    .map_err(|e| GateError::msg(format!("`{program}`: `findings[{i}]`: {e}")))?,
            );
        }
        if let Some(usage) = doc.usage {
            if self.config.kind == GateKind::Computational {
                return Err(GateError::msg(format!(
                    "`{program}` reported `usage`, which only an inferential gate has; declare \
                     `kind: inferential` in its `with:` block"
                )));
            }
            result = result.with_model_usage(
                usage
                    .into_usage()
                    .map_err(|e| GateError::msg(format!("`{program}`: `usage`: {e}")))?,
            );
        }
        Ok(result)
    }
}

/// The end of the program's output.
fn output_tail(outcome: &ExecOutcome) -> String {
    super::process::output_tail(&outcome.stderr.tail_lossy(), &outcome.stdout.tail_lossy())
}

#[async_trait::async_trait]
impl QualityGate for CommandGate {
    fn name(&self) -> &GateName {
        &self.name
    }

    fn kind(&self) -> GateKind {
        self.config.kind
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let request = self.request(ctx)?;
        let outcome = run_cancellable(ctx, move |token| exec::run(&request.cancel(token))).await?;
        self.result(&outcome)
    }
}

/// The gate context on the program's standard input.
#[derive(Serialize)]
struct ContextV1<'a> {
    schema: u32,
    gate: &'a str,
    run: &'a str,
    phase: &'a str,
    attempt: u32,
    round: u32,
    checkout: &'a str,
    kind: GateKind,
    phase_outcome: PhaseOutcomeV1<'a>,
    config: &'a serde_json::Value,
}

#[derive(Serialize)]
struct PhaseOutcomeV1<'a> {
    verdict: &'static str,
    summary: &'a str,
    findings: Vec<FindingV1>,
}

/// A finding, both ways.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingV1 {
    title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    detail: String,
    severity: Option<String>,
    file: Option<Utf8PathBuf>,
    line: Option<u32>,
    key: Option<String>,
}

impl From<&Finding> for FindingV1 {
    fn from(f: &Finding) -> Self {
        Self {
            title: f.title.clone(),
            detail: f.detail.clone(),
            severity: Some(f.severity.as_str().to_owned()),
            file: f.file.clone(),
            line: f.line,
            key: f.key.clone(),
        }
    }
}

impl FindingV1 {
    fn into_finding(self, source: &str) -> Result<Finding, String> {
        if self.title.trim().is_empty() {
            return Err("`title` is empty".to_owned());
        }
        // The phase output document's default too.
        let severity = match self.severity.as_deref() {
            None => Severity::Medium,
            Some(s) => s
                .parse::<Severity>()
                .map_err(|e| format!("`severity`: {e}"))?,
        };
        let mut finding = Finding::new(source, severity, self.title).with_detail(self.detail);
        if let Some(file) = self.file {
            finding = finding.with_file(file);
        }
        if let Some(line) = self.line {
            finding = finding.with_line(line);
        }
        if let Some(key) = self.key {
            finding = finding.with_key(key);
        }
        Ok(finding)
    }
}

/// The result document on the program's standard output.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultV1 {
    schema: u32,
    outcome: OutcomeV1,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    findings: Vec<FindingV1>,
    #[serde(default)]
    usage: Option<UsageV1>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OutcomeV1 {
    Passed,
    Failed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageV1 {
    #[serde(default)]
    cost_usd: Option<f64>,
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl UsageV1 {
    fn into_usage(self) -> Result<ModelUsage, String> {
        let cost = self
            .cost_usd
            .map(Usd::new)
            .transpose()
            .map_err(|e| format!("`cost_usd`: {e}"))?;
        let tokens = match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (input, output) => Some(Tokens::new(input.unwrap_or(0), output.unwrap_or(0))),
        };
        Ok(ModelUsage::new(cost, tokens))
    }
}
