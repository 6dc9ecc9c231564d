//! The chat-completions exchange: the request the judge sends and how its
//! answer is read. Pure functions, no I/O.

use std::fmt::Write as _;

use orcho_core::{Severity, Tokens};
use orcho_gates::GateContext;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::JudgeError;

/// What the model is told to do, and the exact shape of its reply.
pub(crate) const SYSTEM_PROMPT: &str = "\
You are a quality gate in an automated software delivery pipeline. \
The user message describes one phase of work: what the phase reported and the \
criteria you must judge it by. Decide whether the phase passes those criteria.

Reply with exactly one JSON object and nothing else, of this shape:
{\"verdict\": \"pass\" or \"fail\",
 \"summary\": \"one paragraph explaining the verdict\",
 \"findings\": [{\"severity\": \"info\", \"low\", \"medium\", \"high\" or \"critical\",
               \"message\": \"one line saying what is wrong\",
               \"file\": \"path relative to the repository root (optional)\",
               \"line\": 1-based line number (optional)}]}

Use \"fail\" when anything blocks acceptance, and list each blocker as a finding. \
Use an empty findings list when there is nothing to report.";

/// What the judge is asked when the gate has no `instructions`.
const DEFAULT_INSTRUCTIONS: &str =
    "Judge whether the phase's reported work is complete and acceptable.";

/// The most characters of the phase's summary put into the prompt.
const MAX_SUMMARY_CHARS: usize = 16_000;
/// The most phase findings put into the prompt.
const MAX_FINDINGS: usize = 50;
/// The most characters of one finding's detail put into the prompt.
const MAX_DETAIL_CHARS: usize = 2_000;
/// The most characters of foreign text quoted in an error.
const EXCERPT_CHARS: usize = 200;

/// The JSON body of the request.
pub(crate) fn request_body(model: &str, user_message: &str) -> Value {
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message},
        ],
        "response_format": {"type": "json_object"},
    })
}

/// The user message: which phase and attempt, what the phase reported, and
/// the gate's criteria.
pub(crate) fn user_message(ctx: &GateContext, instructions: Option<&str>) -> String {
    let outcome = &ctx.phase_outcome;
    let mut m = String::new();
    let _ = writeln!(
        m,
        "Phase: `{}`, attempt {}, round {}.",
        ctx.phase, ctx.attempt, ctx.round
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
        match (&finding.file, finding.line) {
            (Some(file), Some(line)) => {
                let _ = write!(m, " ({file}:{line})");
            }
            (Some(file), None) => {
                let _ = write!(m, " ({file})");
            }
            (None, _) => {}
        }
        m.push('\n');
        let detail = finding.detail.trim();
        if !detail.is_empty() {
            for line in clip(detail, MAX_DETAIL_CHARS).lines() {
                let _ = writeln!(m, "  {line}");
            }
        }
    }
    if outcome.findings.len() > MAX_FINDINGS {
        let _ = writeln!(
            m,
            "(and {} more findings)",
            outcome.findings.len() - MAX_FINDINGS
        );
    }
    m.push_str("\nYour criteria:\n");
    m.push_str(
        instructions
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .unwrap_or(DEFAULT_INSTRUCTIONS),
    );
    m.push('\n');
    m
}

/// The parts of a chat completion the judge uses.
#[derive(Debug, PartialEq)]
pub(crate) struct Completion {
    /// `choices[0].message.content`.
    pub(crate) content: String,
    /// `usage.prompt_tokens` and `usage.completion_tokens`, when both are
    /// reported.
    pub(crate) tokens: Option<Tokens>,
}

/// Reads a chat-completions response body.
pub(crate) fn parse_completion(body: &str) -> Result<Completion, JudgeError> {
    let value: Value = serde_json::from_str(body).map_err(|source| JudgeError::BodyNotJson {
        excerpt: excerpt(body),
        source,
    })?;
    let message = &value["choices"][0]["message"];
    let Some(content) = message["content"].as_str() else {
        return Err(JudgeError::NoContent {
            refusal: message["refusal"].as_str().map(|r| clip(r, EXCERPT_CHARS)),
        });
    };
    let usage = &value["usage"];
    let tokens = match (
        usage["prompt_tokens"].as_u64(),
        usage["completion_tokens"].as_u64(),
    ) {
        (Some(input), Some(output)) => Some(Tokens::new(input, output)),
        _ => None,
    };
    Ok(Completion {
        content: content.to_owned(),
        tokens,
    })
}

/// The model's verdict, read from its reply.
#[derive(Debug, PartialEq)]
pub(crate) struct Judgement {
    /// Whether the verdict is `pass`.
    pub(crate) passed: bool,
    /// The model's summary (may be empty).
    pub(crate) summary: String,
    /// What the model found.
    pub(crate) findings: Vec<ReplyFinding>,
}

/// Everything of the reply but the verdict, which is checked first for a
/// precise message. Keys the schema does not name are ignored: models add
/// their own (`reasoning`, `confidence`), and they change nothing.
#[derive(Deserialize)]
struct ReplyRest {
    #[serde(default)]
    summary: String,
    #[serde(default)]
    findings: Vec<ReplyFinding>,
}

/// One finding of the model's reply.
#[derive(Debug, PartialEq, Deserialize)]
pub(crate) struct ReplyFinding {
    /// How serious.
    pub(crate) severity: Severity,
    /// What is wrong.
    pub(crate) message: String,
    /// The file, relative to the repository root.
    #[serde(default)]
    pub(crate) file: Option<String>,
    /// The 1-based line.
    #[serde(default)]
    pub(crate) line: Option<u32>,
}

/// Reads the model's reply (the message content) as a verdict.
pub(crate) fn parse_judgement(content: &str) -> Result<Judgement, JudgeError> {
    let not_json = || JudgeError::ReplyNotJson {
        excerpt: excerpt(content),
    };
    let value: Value = serde_json::from_str(content).map_err(|_| not_json())?;
    if !value.is_object() {
        return Err(not_json());
    }
    let passed = match &value["verdict"] {
        Value::Null => {
            return Err(JudgeError::NoVerdict {
                excerpt: excerpt(content),
            });
        }
        Value::String(s) if s.eq_ignore_ascii_case("pass") => true,
        Value::String(s) if s.eq_ignore_ascii_case("fail") => false,
        other => {
            return Err(JudgeError::InvalidVerdict {
                given: clip(&other.to_string(), EXCERPT_CHARS),
            });
        }
    };
    let rest: ReplyRest =
        serde_json::from_value(value).map_err(|source| JudgeError::InvalidReply { source })?;
    Ok(Judgement {
        passed,
        summary: rest.summary.trim().to_owned(),
        findings: rest.findings,
    })
}

/// The start of foreign text for an error message: at most
/// [`EXCERPT_CHARS`] characters, whitespace runs collapsed to one space.
pub(crate) fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return "(empty)".to_owned();
    }
    clip(&collapsed, EXCERPT_CHARS)
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The last `max` characters of `text`, with `…` when cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let start = text
        .char_indices()
        .nth(count - max)
        .map_or(0, |(start, _)| start);
    format!("…{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_core::{Finding, Verdict, error_chain};
    use orcho_gates::PhaseOutcome;

    fn err(result: Result<impl std::fmt::Debug, JudgeError>) -> String {
        error_chain(&result.unwrap_err())
    }

    #[test]
    fn the_user_message_carries_the_phase_and_the_criteria() {
        let outcome = PhaseOutcome::new(Verdict::Approved)
            .with_summary("Implemented parsing.\n")
            .with_findings([
                Finding::new("reviewer", Severity::Low, "naming")
                    .with_file("src/parse.rs")
                    .with_line(3)
                    .with_detail("`p` is vague\nrename it"),
                Finding::new("lint", Severity::Info, "one warning"),
            ]);
        let ctx = GateContext::new(
            "20261121T120000000Z-00000000000000aa".parse().unwrap(),
            "implement".parse().unwrap(),
            "/checkout",
            outcome,
        )
        .with_attempt(2);
        insta::assert_snapshot!(user_message(&ctx, Some("  No unsafe code.  ")), @r"
        Phase: `implement`, attempt 2, round 1.
        The phase's own verdict: `approved`.

        The phase's summary:
        Implemented parsing.

        Findings the phase reported:
        - [low] naming (src/parse.rs:3)
          `p` is vague
          rename it
        - [info] one warning

        Your criteria:
        No unsafe code.
        ");
        let mut bare = ctx;
        bare.phase_outcome = PhaseOutcome::new(Verdict::Rejected);
        let message = user_message(&bare, None);
        assert!(message.contains("summary:\n(none)\n"), "{message}");
        assert!(message.contains("reported:\n(none)\n"), "{message}");
        assert!(message.ends_with(&format!("{DEFAULT_INSTRUCTIONS}\n")));
    }

    #[test]
    fn a_completion_gives_content_and_tokens() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"{}"}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#;
        assert_eq!(
            parse_completion(body).unwrap(),
            Completion {
                content: "{}".into(),
                tokens: Some(Tokens::new(10, 2))
            }
        );
        let no_usage = r#"{"choices":[{"message":{"content":"{}"}}]}"#;
        assert_eq!(parse_completion(no_usage).unwrap().tokens, None);
    }

    #[test]
    fn bad_completions_are_errors() {
        insta::assert_snapshot!(err(parse_completion("<html>\n  Bad   gateway</html>")), @"the response is not JSON: <html> Bad gateway</html>: caused by: expected value at line 1 column 1");
        insta::assert_snapshot!(err(parse_completion(r#"{"choices":[]}"#)), @"the response has no `choices[0].message.content`");
        insta::assert_snapshot!(err(parse_completion(r#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."}}]}"#)), @"the response has no `choices[0].message.content` (the model refused: I can't help with that.)");
        insta::assert_snapshot!(err(parse_completion("")), @"the response is not JSON: (empty): caused by: EOF while parsing a value at line 1 column 0");
    }

    #[test]
    fn a_reply_gives_a_verdict() {
        let reply = r#"{"verdict":"FAIL","summary":" missing tests ","reasoning":"ignored","findings":[{"severity":"high","message":"no test for `parse`","file":"src/parse.rs","line":7},{"severity":"info","message":"fine otherwise"}]}"#;
        assert_eq!(
            parse_judgement(reply).unwrap(),
            Judgement {
                passed: false,
                summary: "missing tests".into(),
                findings: vec![
                    ReplyFinding {
                        severity: Severity::High,
                        message: "no test for `parse`".into(),
                        file: Some("src/parse.rs".into()),
                        line: Some(7)
                    },
                    ReplyFinding {
                        severity: Severity::Info,
                        message: "fine otherwise".into(),
                        file: None,
                        line: None
                    },
                ],
            }
        );
        assert!(parse_judgement(r#"{"verdict":"pass"}"#).unwrap().passed);
    }

    #[test]
    fn bad_replies_are_errors() {
        insta::assert_snapshot!(err(parse_judgement("Looks good to me!")), @"the model's reply is not a JSON object: Looks good to me!");
        insta::assert_snapshot!(err(parse_judgement(r#"["pass"]"#)), @r#"the model's reply is not a JSON object: ["pass"]"#);
        insta::assert_snapshot!(err(parse_judgement(r#"{"summary":"ok"}"#)), @r#"the model's reply has no `verdict`: {"summary":"ok"}"#);
        insta::assert_snapshot!(err(parse_judgement(r#"{"verdict":"maybe"}"#)), @r#"the model's reply has verdict "maybe"; expected `pass` or `fail`"#);
        insta::assert_snapshot!(err(parse_judgement(r#"{"verdict":true}"#)), @"the model's reply has verdict true; expected `pass` or `fail`");
        insta::assert_snapshot!(err(parse_judgement(r#"{"verdict":"fail","findings":[{"severity":"urgent","message":"x"}]}"#)), @"the model's reply is not a valid verdict: caused by: unknown variant `urgent`, expected one of `info`, `low`, `medium`, `high`, `critical`");
    }

    #[test]
    fn clipping_respects_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(tail("héllo", 3), "…llo");
        assert_eq!(tail("héllo", 9), "héllo");
        assert_eq!(excerpt("  a \n\t b "), "a b");
    }
}
