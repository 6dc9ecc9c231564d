//! The advisor: reads a paused handoff and recommends the smallest honest
//! next step. It recommends; it never decides.

use std::fmt::Write as _;

use camino::Utf8PathBuf;
use orcho_core::{Cost, Finding};
use orcho_handoff::{Advice, AdviceRequest, Advisor, AdvisorError, Confidence, HandoffAction};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    Client, LlmConfig,
    error::LlmError,
    provider::Ask,
    text::{clip, excerpt, tail},
};

const SYSTEM: &str = "\
You advise the operator of an automated software delivery pipeline. A phase \
of work paused at a handoff: its verdict or a quality gate did not pass. Read \
what it reported and recommend the smallest honest next step among the \
actions offered. You never decide; a person or a bounded autopilot does.

- `retry_feedback`: the blockers are specific and fixable in one more \
attempt. Give concrete feedback for that attempt, naming what to change.
- `continue_with_waiver`: the findings are a known, acceptable risk. Say why.
- `continue`: the findings are wrong or do not matter.
- `halt`: the work cannot succeed as planned, or retrying would be unsafe.

Never suggest destructive commands (deleting files recursively, resetting or \
force-pushing history). Say what could go wrong in `risks`, and list the \
files a retry is expected to change in `expected_files` (relative to the \
repository root). `confidence` is from 0 to 1. Answer with the advice \
document only.";

/// The most characters of the material put in front of the model.
const MAX_PROMPT_CHARS: usize = 48_000;
/// The most findings of the handoff in the prompt.
const MAX_FINDINGS: usize = 40;
/// The most characters of one finding's detail (often a command's output tail).
const MAX_DETAIL_CHARS: usize = 3_000;
/// The most characters of the phase's output (its end is kept).
const MAX_OUTPUT_CHARS: usize = 8_000;
/// The most characters of the host's context (the readiness summary).
const MAX_CONTEXT_CHARS: usize = 6_000;
/// The most earlier handoffs described.
const MAX_HISTORY: usize = 5;

/// The advice document's schema, with the actions this handoff offers.
pub(crate) fn advice_schema(actions: &[&str]) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["recommended_action", "confidence", "rationale", "risks", "retry_feedback", "expected_files"],
        "properties": {
            "recommended_action": {"type": "string", "enum": actions},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
            "risks": {"type": "array", "items": {"type": "string"}},
            "retry_feedback": {"type": ["string", "null"]},
            "expected_files": {"type": "array", "items": {"type": "string"}},
        },
    })
}

/// An [`Advisor`] backed by a model (OpenAI-compatible or Anthropic),
/// configured by the profile's `advisor:` block ([`LlmConfig`]).
///
/// The model reads the handoff (phase, verdict, trigger, the actions on
/// offer), its findings with their details, the end of the phase's output
/// and the phase's earlier handoffs, bounded in size with what was cut said
/// in the prompt. It answers with a JSON document matching a schema whose
/// action enum is exactly the offered actions; anything that does not
/// validate is an error ([`LlmError::Malformed`]), never a guess.
#[derive(Debug, Clone)]
pub struct LlmAdvisor {
    name: String,
    client: Client,
}

impl LlmAdvisor {
    /// An advisor named `name` (its provenance in every advice artifact)
    /// asking through `client`.
    pub fn new(name: impl Into<String>, client: Client) -> Self {
        Self {
            name: name.into(),
            client,
        }
    }

    /// An advisor for a configuration block, named after its model.
    ///
    /// # Errors
    ///
    /// See [`LlmConfig::from_value`].
    pub fn from_value(value: &Value) -> Result<Self, LlmError> {
        let config = LlmConfig::from_value(value)?;
        Ok(Self::new(
            format!("llm:{}", config.model),
            Client::new(config),
        ))
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The same advisor, with its client changed by `f` (a key lookup, say).
    #[must_use]
    pub fn map_client(mut self, f: impl FnOnce(Client) -> Client) -> Self {
        self.client = f(self.client);
        self
    }
}

/// The advice document.
#[derive(Debug, Deserialize)]
struct AdviceDoc {
    recommended_action: String,
    confidence: f64,
    rationale: String,
    #[serde(default)]
    risks: Vec<String>,
    #[serde(default)]
    retry_feedback: Option<String>,
    #[serde(default)]
    expected_files: Vec<String>,
}

/// Reads and validates the advice; `offered` are the handoff's actions.
pub(crate) fn parse_advice(text: &str, offered: &[HandoffAction]) -> Result<Advice, LlmError> {
    let bad = |problem: String| LlmError::malformed("advice", problem);
    let doc: AdviceDoc =
        serde_json::from_str(text).map_err(|e| bad(format!("{e}, in: {}", excerpt(text))))?;
    let action: HandoffAction = doc
        .recommended_action
        .parse()
        .map_err(|e| bad(format!("`recommended_action`: {e}")))?;
    if !offered.contains(&action) {
        return Err(bad(format!(
            "`recommended_action` is `{action}`, which this handoff does not offer"
        )));
    }
    if !(0.0..=1.0).contains(&doc.confidence) {
        return Err(bad(format!(
            "`confidence` is {}; expected a number from 0 to 1",
            doc.confidence
        )));
    }
    if doc.rationale.trim().is_empty() {
        return Err(bad("`rationale` is empty".to_owned()));
    }
    let feedback = doc.retry_feedback.filter(|f| !f.trim().is_empty());
    if action == HandoffAction::RetryFeedback && feedback.is_none() {
        return Err(bad(
            "`retry_feedback` is empty, and the advice recommends a retry".to_owned(),
        ));
    }
    let mut files = Vec::new();
    for file in doc.expected_files {
        let path = Utf8PathBuf::from(file.trim());
        if path.as_str().is_empty() || path.is_absolute() || path.as_str().contains("..") {
            return Err(bad(format!(
                "`expected_files` has `{}`, not a path inside the repository",
                clip(&file, 80)
            )));
        }
        files.push(path);
    }
    let mut advice = Advice::new(
        action,
        Confidence::score(doc.confidence),
        doc.rationale.trim(),
    )
    .with_risks(doc.risks)
    .with_expected_files(files);
    if let Some(feedback) = feedback {
        advice = advice.with_retry_feedback(feedback);
    }
    Ok(advice)
}

fn finding_lines(m: &mut String, findings: &[Finding], detail_chars: usize) {
    for f in findings.iter().take(MAX_FINDINGS) {
        let _ = write!(m, "- [{}] {}: {}", f.severity, f.source, f.title);
        if let Some(file) = &f.file {
            let _ = write!(
                m,
                " ({file}{})",
                f.line.map(|l| format!(":{l}")).unwrap_or_default()
            );
        }
        m.push('\n');
        let detail = f.detail.trim();
        if detail_chars > 0 && !detail.is_empty() {
            for line in tail(detail, detail_chars).lines() {
                let _ = writeln!(m, "    {line}");
            }
        }
    }
    if findings.len() > MAX_FINDINGS {
        let _ = writeln!(
            m,
            "(cut: {} more findings not shown)",
            findings.len() - MAX_FINDINGS
        );
    }
}

/// The material for the model, bounded.
pub(crate) fn user_message(request: &AdviceRequest<'_>, instructions: Option<&str>) -> String {
    let h = request.handoff;
    let mut m = String::new();
    let _ = writeln!(
        m,
        "Phase `{}` (round {}) paused: its verdict is `{}`, trigger: {}.",
        h.phase(),
        h.round(),
        h.verdict(),
        h.trigger()
    );
    let _ = writeln!(
        m,
        "Actions on offer: {}.",
        orcho_core::spelling::quoted(h.available_actions().iter())
    );
    m.push_str("\nFindings:\n");
    if h.findings().is_empty() {
        m.push_str("(none)\n");
    }
    finding_lines(&mut m, h.findings(), MAX_DETAIL_CHARS);
    let output = request.phase_output.trim();
    if !output.is_empty() {
        let cut = output.chars().count() > MAX_OUTPUT_CHARS;
        let _ = writeln!(
            m,
            "\nThe phase's output{}:\n{}",
            if cut {
                " (its end; the start was cut)"
            } else {
                ""
            },
            tail(output, MAX_OUTPUT_CHARS)
        );
    }
    let history = request.history;
    if !history.is_empty() {
        let skipped = history.len().saturating_sub(MAX_HISTORY);
        m.push_str("\nEarlier handoffs of this phase, oldest first");
        if skipped > 0 {
            let _ = write!(m, " ({skipped} older ones cut)");
        }
        m.push_str(":\n");
        for earlier in &history[skipped..] {
            let _ = writeln!(
                m,
                "* round {}: verdict `{}`, {} finding(s):",
                earlier.round(),
                earlier.verdict(),
                earlier.findings().len()
            );
            finding_lines(&mut m, earlier.findings(), 0);
        }
    }
    let context = request.context.trim();
    if !context.is_empty() {
        let _ = writeln!(m, "\n{}", clip(context, MAX_CONTEXT_CHARS));
    }
    if let Some(guidance) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        let _ = writeln!(m, "\nGuidance from the project:\n{guidance}");
    }
    if m.chars().count() > MAX_PROMPT_CHARS {
        m = format!(
            "{}\n(cut: the material was longer than {MAX_PROMPT_CHARS} characters)\n",
            clip(&m, MAX_PROMPT_CHARS)
        );
    }
    m
}

#[orcho_handoff::async_trait]
impl Advisor for LlmAdvisor {
    fn name(&self) -> &str {
        &self.name
    }

    async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError> {
        let offered: Vec<HandoffAction> = request.handoff.available_actions().iter().collect();
        let names: Vec<&str> = offered.iter().map(|a| a.as_str()).collect();
        let schema = advice_schema(&names);
        let user = user_message(request, self.client.config().instructions.as_deref());
        let client = self.client.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let ask = Ask {
                name: "advice",
                system: SYSTEM,
                user: &user,
                schema: &schema,
            };
            client.ask(&ask, &|| false)
        })
        .await
        .map_err(|e| AdvisorError::new(LlmError::Task(e.to_string())))?
        .map_err(AdvisorError::new)?;
        let advice = parse_advice(&answer.text, &offered).map_err(AdvisorError::malformed)?;
        let mut cost = Cost::wall(answer.elapsed);
        if let Some(tokens) = answer.tokens {
            cost = cost.with_tokens(tokens);
            if let Some(usd) = self
                .client
                .config()
                .cost(tokens)
                .map_err(AdvisorError::new)?
            {
                cost = cost.with_usd(usd);
            }
        }
        Ok(advice.with_usage(cost))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [HandoffAction; 4] = [
        HandoffAction::Continue,
        HandoffAction::RetryFeedback,
        HandoffAction::ContinueWithWaiver,
        HandoffAction::Halt,
    ];

    #[test]
    fn advice_is_read_and_validated() {
        let ok = r#"{"recommended_action":"retry_feedback","confidence":0.9,"rationale":"specific","risks":["flaky"],"retry_feedback":"handle empty input","expected_files":["src/parse.rs"]}"#;
        let advice = parse_advice(ok, &ALL).unwrap();
        assert_eq!(advice.recommended_action, HandoffAction::RetryFeedback);
        assert_eq!(advice.retry_feedback.as_deref(), Some("handle empty input"));
        assert_eq!(advice.expected_files, [Utf8PathBuf::from("src/parse.rs")]);
        let err = |text: &str, offered: &[HandoffAction]| {
            parse_advice(text, offered).unwrap_err().to_string()
        };
        insta::assert_snapshot!(err("retry it", &ALL), @"malformed advice: expected value at line 1 column 1, in: retry it");
        insta::assert_snapshot!(err(r#"{"recommended_action":"continue","confidence":0.9,"rationale":"r"}"#, &[HandoffAction::Halt]), @"malformed advice: `recommended_action` is `continue`, which this handoff does not offer");
        insta::assert_snapshot!(err(r#"{"recommended_action":"halt","confidence":1.5,"rationale":"r"}"#, &ALL), @"malformed advice: `confidence` is 1.5; expected a number from 0 to 1");
        insta::assert_snapshot!(err(r#"{"recommended_action":"retry_feedback","confidence":0.5,"rationale":"r","retry_feedback":" "}"#, &ALL), @"malformed advice: `retry_feedback` is empty, and the advice recommends a retry");
        insta::assert_snapshot!(err(r#"{"recommended_action":"halt","confidence":0.5,"rationale":"r","expected_files":["/etc/passwd"]}"#, &ALL), @"malformed advice: `expected_files` has `/etc/passwd`, not a path inside the repository");
        insta::assert_snapshot!(err(r#"{"recommended_action":"shrug","confidence":0.5,"rationale":"r"}"#, &ALL), @"malformed advice: `recommended_action`: unknown handoff action `shrug`: expected one of continue, retry_feedback, continue_with_waiver, halt");
    }
}
