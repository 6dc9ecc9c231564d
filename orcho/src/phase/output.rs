//! The phase output document: what a phase process may say besides its
//! exit code, written as JSON to the file `ORCHO_OUTPUT` names.
//!
//! Every field is optional. The verdict is the exit code's (0 approves)
//! unless the document gives one; a non-zero exit never approves. Findings
//! and cost are the attempt's. A `plan` is what plan approval shows. A
//! phase that asks `questions` or reports a `deviation` has not finished:
//! no gate runs, the attempt is not spent, and the run waits for the
//! answer. The JSON Schema is `docs/phase-output.schema.json`
//! ([`schema`]); a document that does not follow it stops the run with the
//! line and column, and the attempt runs again once it is fixed.

use orcho_core::{Cost, Finding, Severity, Tokens, Usd, Verdict};
use orcho_handoff::supervision::{
    Deviation, Plan, PlanStep, Question, QuestionBatch, QuestionOption,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Interruption;

/// The version of the document this build reads.
pub const OUTPUT_SCHEMA: u32 = 1;

/// What a phase command wrote to `ORCHO_OUTPUT`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Orcho phase output",
    description = "What a phase command writes to the file named by ORCHO_OUTPUT. Every field but `schema` is optional."
)]
pub(crate) struct PhaseOutput {
    /// The version of this document: 1.
    #[schemars(range(min = 1, max = 1))]
    pub(crate) schema: u32,
    /// The attempt's verdict; default: the exit code's (0 approves). A
    /// non-zero exit never approves.
    #[serde(default)]
    pub(crate) verdict: Option<VerdictDoc>,
    /// One line on what the attempt did.
    #[serde(default)]
    pub(crate) summary: Option<String>,
    /// What the attempt found. Each finding's `source` is the phase's
    /// name, set by Orcho: a document does not name it (a `source` given
    /// is refused), so that no phase speaks for another.
    #[serde(default)]
    pub(crate) findings: Vec<FindingDoc>,
    /// What the attempt cost (a model's tokens and money).
    #[serde(default)]
    pub(crate) cost: Option<CostDoc>,
    /// The plan a planning phase produced; with plan approval on, the run
    /// waits for it to be approved.
    #[serde(default)]
    pub(crate) plan: Option<PlanDoc>,
    /// Questions the planner needs answered before it can plan; the same
    /// attempt runs again with the answers.
    #[serde(default)]
    pub(crate) questions: Vec<QuestionDoc>,
    /// A step that failed; the operator chooses retry, replan or stop.
    #[serde(default)]
    pub(crate) deviation: Option<DeviationDoc>,
}

/// A verdict.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Verdict")]
pub(crate) enum VerdictDoc {
    /// The attempt did what was asked.
    Approved,
    /// It did not.
    Rejected,
    /// It could not finish.
    Incomplete,
}

/// A finding.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Finding")]
pub(crate) struct FindingDoc {
    /// One line.
    pub(crate) title: String,
    /// The details.
    #[serde(default)]
    pub(crate) detail: String,
    /// How much it matters; default `medium`.
    #[serde(default)]
    pub(crate) severity: Option<SeverityDoc>,
    /// The file it is about, relative to the checkout.
    #[serde(default)]
    pub(crate) file: Option<String>,
    /// The line in that file (1-based).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) line: Option<u32>,
}

/// A severity.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Severity")]
pub(crate) enum SeverityDoc {
    /// For the record.
    Info,
    /// Minor.
    Low,
    /// Should be fixed.
    Medium,
    /// Must be fixed.
    High,
    /// Must stop the run.
    Critical,
}

/// A cost.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Cost")]
pub(crate) struct CostDoc {
    /// Money, in US dollars.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub(crate) usd: Option<f64>,
    /// Input tokens.
    #[serde(default)]
    pub(crate) input_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default)]
    pub(crate) output_tokens: Option<u64>,
}

/// A plan.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Plan")]
pub(crate) struct PlanDoc {
    /// What the plan achieves.
    pub(crate) goal: String,
    /// The steps, in order.
    #[serde(default)]
    pub(crate) steps: Vec<StepDoc>,
    /// Files (or globs) it expects to touch.
    #[serde(default)]
    pub(crate) files_affected: Vec<String>,
    /// Risks the planner sees.
    #[serde(default)]
    pub(crate) risks: Vec<String>,
}

/// A step of a plan.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PlanStep")]
pub(crate) struct StepDoc {
    /// Who carries it out, e.g. `coder` or `tester`.
    pub(crate) role: String,
    /// What the step does.
    pub(crate) description: String,
}

/// A question for the operator.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Question")]
pub(crate) struct QuestionDoc {
    /// A short label, a tab's worth (1 to 30 characters), e.g. `Auth method`.
    #[schemars(length(min = 1, max = 30))]
    pub(crate) header: String,
    /// The question.
    pub(crate) question: String,
    /// The options to choose from; none for a free-form answer.
    #[serde(default)]
    pub(crate) options: Vec<OptionDoc>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub(crate) multiple: bool,
    /// Whether a free-form answer is accepted; default true.
    #[serde(default = "yes")]
    pub(crate) custom: bool,
}

fn yes() -> bool {
    true
}

/// An option of a question.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "QuestionOption")]
pub(crate) struct OptionDoc {
    /// What is shown and chosen.
    pub(crate) label: String,
    /// A longer explanation.
    #[serde(default)]
    pub(crate) description: Option<String>,
}

/// A failed step.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Deviation")]
pub(crate) struct DeviationDoc {
    /// The 1-based number of the step in the plan.
    #[schemars(range(min = 1))]
    pub(crate) step: u32,
    /// What the step does.
    #[serde(default)]
    pub(crate) description: String,
    /// The error it failed with.
    pub(crate) error: String,
}

/// What an output document said, in the engine's terms. A phase that
/// wrote none said nothing ([`Said::default`]).
#[derive(Debug, Default, Clone, PartialEq)]
#[non_exhaustive]
pub struct Said {
    /// The verdict it gave, if it gave one.
    pub verdict: Option<Verdict>,
    /// Its one line on what the attempt did.
    pub summary: Option<String>,
    /// What it found, each with this phase as its source.
    pub findings: Vec<Finding>,
    /// What it said the attempt cost.
    pub cost: Option<Cost>,
    /// The plan a planning phase produced.
    pub plan: Option<Plan>,
    /// Questions or a failed step: the attempt has not finished.
    pub interruption: Option<Interruption>,
}

/// Reads a document written by phase `source` (the findings' source): JSON
/// errors at their line and column, rules broken at the field that breaks
/// them.
///
/// # Errors
///
/// A document that is not a JSON object of [`schema`], or that breaks
/// one of its rules (questions and a deviation both, a step 0, a negative
/// cost), as one line that says where.
pub fn parse(text: &str, source: &str) -> Result<Said, String> {
    // serde reads a struct from a JSON array too, field by field: `[1]`
    // would be `{"schema": 1}`. The document is an object.
    if let Some(first) = text.trim_start().chars().next()
        && first != '{'
    {
        let at = text.len() - text.trim_start().len();
        let line = text[..at].matches('\n').count() + 1;
        let column = at - text[..at].rfind('\n').map_or(0, |nl| nl + 1) + 1;
        return Err(format!(
            "line {line}, column {column}: the document is a JSON object (`{{\"schema\": 1, …}}`)"
        ));
    }
    let doc: PhaseOutput = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_owned();
        format!("line {}, column {}: {message}", e.line(), e.column())
    })?;
    if doc.schema != OUTPUT_SCHEMA {
        return Err(format!(
            "`schema` is {}; this `orcho` reads schema {OUTPUT_SCHEMA}",
            doc.schema
        ));
    }
    if !doc.questions.is_empty() && doc.deviation.is_some() {
        return Err(
            "`questions` and `deviation` both given: an attempt either asks or reports a failed step"
                .to_owned(),
        );
    }
    let findings = doc
        .findings
        .into_iter()
        .map(|f| {
            let severity = match f.severity.unwrap_or(SeverityDoc::Medium) {
                SeverityDoc::Info => Severity::Info,
                SeverityDoc::Low => Severity::Low,
                SeverityDoc::Medium => Severity::Medium,
                SeverityDoc::High => Severity::High,
                SeverityDoc::Critical => Severity::Critical,
            };
            let mut finding = Finding::new(source, severity, f.title).with_detail(f.detail);
            if let Some(file) = f.file {
                finding = finding.with_file(file);
            }
            if let Some(line) = f.line {
                finding = finding.with_line(line);
            }
            finding
        })
        .collect();
    let cost = match doc.cost {
        None => None,
        Some(c) => {
            let mut cost = Cost::default();
            if let Some(usd) = c.usd {
                let usd = Usd::new(usd).map_err(|e| format!("`cost.usd`: {e}"))?;
                cost = cost.with_usd(usd);
            }
            if c.input_tokens.is_some() || c.output_tokens.is_some() {
                cost = cost.with_tokens(Tokens::new(
                    c.input_tokens.unwrap_or(0),
                    c.output_tokens.unwrap_or(0),
                ));
            }
            Some(cost)
        }
    };
    let plan = doc.plan.map(|p| {
        let mut plan = Plan::new(p.goal);
        for step in p.steps {
            plan = plan.with_step(PlanStep::new(step.role, step.description));
        }
        for file in p.files_affected {
            plan = plan.with_file(file);
        }
        for risk in p.risks {
            plan = plan.with_risk(risk);
        }
        plan
    });
    let interruption = if doc.questions.is_empty() {
        match doc.deviation {
            Some(d) if d.step == 0 => {
                return Err("`deviation.step` is 0; steps are numbered from 1".to_owned());
            }
            Some(d) => Some(Interruption::Deviation(Deviation::new(
                d.step,
                d.description,
                d.error,
            ))),
            None => None,
        }
    } else {
        let mut questions = Vec::with_capacity(doc.questions.len());
        for (i, q) in doc.questions.into_iter().enumerate() {
            let at = |e: &dyn std::fmt::Display| format!("`questions[{i}]`: {e}");
            let options = q.options.into_iter().map(|o| match o.description {
                Some(d) => QuestionOption::new(o.label).with_description(d),
                None => QuestionOption::new(o.label),
            });
            let question = Question::new(q.header, q.question, options)
                .map_err(|e| at(&e))?
                .with_multiple(q.multiple)
                .with_custom(q.custom)
                .map_err(|e| at(&e))?;
            questions.push(question);
        }
        let batch = QuestionBatch::new(questions).map_err(|e| format!("`questions`: {e}"))?;
        Some(Interruption::Questions(batch))
    };
    Ok(Said {
        verdict: doc.verdict.map(|v| match v {
            VerdictDoc::Approved => Verdict::Approved,
            VerdictDoc::Rejected => Verdict::Rejected,
            VerdictDoc::Incomplete => Verdict::Incomplete,
        }),
        summary: doc.summary,
        findings,
        cost,
        plan,
        interruption,
    })
}

/// The JSON Schema of the document, as `docs/phase-output.schema.json`
/// holds it.
pub fn schema() -> String {
    let schema = schemars::schema_for!(PhaseOutput);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_schema_is_the_one_the_types_make() {
        let shipped = include_str!("../../../docs/phase-output.schema.json");
        assert_eq!(
            shipped,
            schema(),
            "docs/phase-output.schema.json is out of date: write `orcho schema phase-output` to it"
        );
    }

    #[test]
    fn the_schema_bounds_a_question_header_as_the_questions_do() {
        let schema: serde_json::Value = serde_json::from_str(&schema()).unwrap();
        let header = &schema["$defs"]["Question"]["properties"]["header"];
        assert_eq!(
            header["maxLength"].as_u64(),
            Some(orcho_handoff::supervision::MAX_HEADER_CHARS as u64),
            "{header}"
        );
        assert_eq!(header["minLength"].as_u64(), Some(1), "{header}");
    }

    #[test]
    fn a_document_says_what_it_says_and_nothing_else() {
        let said = parse(
            r#"{"schema": 1, "verdict": "incomplete", "findings": [{"title": "t", "file": "a.rs", "line": 3}],
                "cost": {"usd": 0.25, "input_tokens": 10}, "plan": {"goal": "g", "steps": [{"role": "coder", "description": "d"}]}}"#,
            "plan",
        )
        .unwrap();
        assert_eq!(said.verdict, Some(Verdict::Incomplete));
        assert_eq!(said.findings[0].line, Some(3));
        assert_eq!(said.plan.unwrap().steps.len(), 1);
        assert!(said.interruption.is_none());
    }

    #[test]
    fn broken_documents_say_where() {
        for (text, expect) in [
            (
                "{\"schema\": 1,\n \"verdikt\": \"approved\"}",
                "line 2, column 10: unknown field `verdikt`",
            ),
            ("{\"schema\": 2}", "`schema` is 2"),
            (
                "{\"schema\": 1, \"questions\": [{\"header\": \"\", \"question\": \"q\"}]}",
                "`questions[0]`",
            ),
            (
                "{\"schema\": 1, \"deviation\": {\"step\": 0, \"error\": \"e\"}}",
                "steps are numbered from 1",
            ),
            (
                "{\"schema\": 1, \"deviation\": {\"step\": 1, \"error\": \"e\"}, \"questions\": [{\"header\": \"h\", \"question\": \"q\"}]}",
                "both given",
            ),
            ("{\"schema\": 1, \"cost\": {\"usd\": -1}}", "`cost.usd`"),
            ("", "line 1, column 0"),
            // Found by the `phase_output` fuzz target: an array read as an
            // object, field by field.
            (
                "[ 1]  \n",
                "line 1, column 1: the document is a JSON object",
            ),
            ("\n  [1]", "line 2, column 3"),
        ] {
            let err = parse(text, "p").unwrap_err();
            assert!(err.contains(expect), "{text:?}: {err}");
        }
    }
}
