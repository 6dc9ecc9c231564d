//! The phase input document: what a phase command is given, as JSON in
//! `ORCHO_INPUT` and in the file `ORCHO_INPUT_FILE` names, and as text in
//! `ORCHO_INPUT_TEXT` ([`PhaseInput::to_text`], bounded by [`input_text`](super::input_text)).
//!
//! It is the engine's [`PhaseInput`] in a shape of its own, versioned, so
//! that a change in the library never changes what a phase reads by
//! accident. The JSON Schema is `docs/phase-input.schema.json`
//! ([`schema`]), printed by `orcho schema phase-input`.

use orcho_core::Finding;
use orcho_gates::GateFailure;
use orcho_handoff::supervision::{Plan, PlanStep};
use schemars::JsonSchema;
use serde::Serialize;

use crate::{PhaseInput, PhaseRequest};

/// The version of the document this build writes.
pub const INPUT_SCHEMA: u32 = 1;

/// What a phase attempt is given.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(
    title = "Orcho phase input",
    description = "What a phase command is given: the JSON in ORCHO_INPUT and in the file named by ORCHO_INPUT_FILE. Every field but `schema`, `run`, `phase`, `attempt` and `round` is left out when there is nothing in it. ORCHO_INPUT_TEXT renders the same parts as text, in this order: task, plan, previous_plan, feedback, answers, deviation, fed_failures, critique, findings, waivers, follow_up, readiness."
)]
pub(crate) struct PhaseInputDoc<'a> {
    /// The version of this document: 1.
    #[schemars(range(min = 1, max = 1))]
    schema: u32,
    /// The run.
    run: &'a str,
    /// The phase.
    phase: &'a str,
    /// The attempt (1-based).
    #[schemars(range(min = 1))]
    attempt: u32,
    /// The round (1-based; a replan starts the next).
    #[schemars(range(min = 1))]
    round: u32,
    /// What the run was started to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a str>,
    /// The plan to carry out: given to every phase after the planner, once
    /// the run went on with a plan (approved, when plan approval is on).
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<ApprovedPlanDoc<'a>>,
    /// For a planner that runs again (its plan sent back, a replan): the
    /// plan it reported last.
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_plan: Option<PlanDoc<'a>>,
    /// The operator's feedback: a handoff's `retry_feedback`, or what a plan
    /// must change.
    #[serde(skip_serializing_if = "Option::is_none")]
    feedback: Option<&'a str>,
    /// Every answer the operator gave this phase's questions, oldest first:
    /// a question answered once need not be asked again.
    #[serde(skip_serializing_if = "Option::is_none")]
    answers: Option<&'a str>,
    /// A failed step the operator decided on: the failure and guidance for a
    /// retry, the failed step and its failure for the planner after a
    /// replan.
    #[serde(skip_serializing_if = "Option::is_none")]
    deviation: Option<&'a str>,
    /// Failures of the previous attempt's gates that feed the next attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fed_failures: Vec<GateFailureDoc<'a>>,
    /// The gate failures that sent the run back to its planner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    critique: Vec<GateFailureDoc<'a>>,
    /// The findings of the previous attempt's verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<FindingDoc<'a>>,
    /// What was accepted as it is (`continue_with_waiver` reasons).
    #[serde(default, skip_serializing_if = "<[String]>::is_empty")]
    waivers: &'a [String],
    /// For a correction follow-up: what its parent was rejected for, every
    /// blocker with the waived ones marked, as Markdown.
    #[serde(skip_serializing_if = "Option::is_none")]
    follow_up: Option<&'a str>,
    /// For final acceptance: the readiness summary from the receipts, as
    /// Markdown.
    #[serde(skip_serializing_if = "Option::is_none")]
    readiness: Option<&'a str>,
}

/// The plan a run carries out.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "ApprovedPlan")]
struct ApprovedPlanDoc<'a> {
    #[serde(flatten)]
    plan: PlanDoc<'a>,
    /// The plan's digest, which an approval is bound to.
    digest: String,
    /// Whether an operator approved it (false: plan approval is off).
    approved: bool,
    /// The notes the approval gave the executors.
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<&'a str>,
}

/// A plan.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Plan")]
struct PlanDoc<'a> {
    /// What the plan achieves.
    goal: &'a str,
    /// The steps, in order.
    steps: Vec<StepDoc<'a>>,
    /// Files (or globs) it expects to touch.
    files_affected: &'a [String],
    /// Risks the planner sees.
    risks: &'a [String],
}

/// A step of a plan.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "PlanStep")]
struct StepDoc<'a> {
    /// Who carries it out, e.g. `coder` or `tester`.
    role: &'a str,
    /// What the step does.
    description: &'a str,
}

/// A gate that failed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "GateFailure")]
struct GateFailureDoc<'a> {
    /// The gate.
    gate: &'a str,
    /// How it ended: `failed`, `timed_out` or `errored`.
    outcome: &'static str,
    /// Its fail strategy.
    on_fail: String,
    /// Its summary.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    summary: &'a str,
    /// Its findings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<FindingDoc<'a>>,
    /// The end of its output.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    output_tail: &'a str,
}

/// A finding.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Finding")]
struct FindingDoc<'a> {
    /// Who found it: a gate, a phase.
    source: &'a str,
    /// `info`, `low`, `medium`, `high` or `critical`.
    severity: &'static str,
    /// One line.
    title: &'a str,
    /// The details.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    detail: &'a str,
    /// The file it is about, relative to the checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    /// The line in that file (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

impl<'a> PhaseInputDoc<'a> {
    /// The document of `request`.
    pub(crate) fn new(request: &'a PhaseRequest) -> Self {
        let input: &'a PhaseInput = &request.input;
        Self {
            schema: INPUT_SCHEMA,
            run: request.run.as_str(),
            phase: request.phase.as_str(),
            attempt: request.attempt,
            round: request.round,
            task: input.task.as_deref(),
            plan: input.plan.as_ref().map(|p| ApprovedPlanDoc {
                plan: PlanDoc::new(&p.plan),
                digest: p.digest.to_string(),
                approved: p.approved,
                notes: p.notes.as_deref(),
            }),
            previous_plan: input.previous_plan.as_deref().map(PlanDoc::new),
            feedback: input.feedback.as_deref(),
            answers: input.answers.as_deref(),
            deviation: input.deviation.as_deref(),
            fed_failures: input.fed_failures.iter().map(GateFailureDoc::new).collect(),
            critique: input.critique.iter().map(GateFailureDoc::new).collect(),
            findings: input.findings.iter().map(FindingDoc::new).collect(),
            waivers: &input.waivers,
            follow_up: input.follow_up.as_deref(),
            readiness: input.readiness.as_deref(),
        }
    }
}

impl<'a> PlanDoc<'a> {
    fn new(plan: &'a Plan) -> Self {
        Self {
            goal: &plan.goal,
            steps: plan.steps.iter().map(StepDoc::new).collect(),
            files_affected: &plan.files_affected,
            risks: &plan.risks,
        }
    }
}

impl<'a> StepDoc<'a> {
    fn new(step: &'a PlanStep) -> Self {
        Self {
            role: &step.role,
            description: &step.description,
        }
    }
}

impl<'a> GateFailureDoc<'a> {
    fn new(failure: &'a GateFailure) -> Self {
        Self {
            gate: failure.gate.as_str(),
            outcome: failure.outcome.as_str(),
            on_fail: failure.on_fail.to_string(),
            summary: &failure.summary,
            findings: failure.findings.iter().map(FindingDoc::new).collect(),
            output_tail: &failure.output_tail,
        }
    }
}

impl<'a> FindingDoc<'a> {
    fn new(finding: &'a Finding) -> Self {
        Self {
            source: &finding.source,
            severity: finding.severity.as_str(),
            title: &finding.title,
            detail: &finding.detail,
            file: finding.file.as_deref().map(camino::Utf8Path::as_str),
            line: finding.line,
        }
    }
}

/// The input document of `request`, as JSON.
pub fn document(request: &PhaseRequest) -> String {
    // Strings, numbers and lists of them: the document always serializes.
    serde_json::to_string(&PhaseInputDoc::new(request)).unwrap_or_default()
}

/// The JSON Schema of the document, as `docs/phase-input.schema.json`
/// holds it.
pub fn schema() -> String {
    let schema = schemars::schema_for!(PhaseInputDoc<'static>);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_every_document_holds_is_required() {
        let schema: serde_json::Value = serde_json::from_str(&schema()).unwrap();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(required, ["schema", "run", "phase", "attempt", "round"]);
        for (name, def) in schema["$defs"].as_object().unwrap() {
            for field in def["required"].as_array().into_iter().flatten() {
                let field = field.as_str().unwrap();
                let optional = [
                    "findings",
                    "summary",
                    "output_tail",
                    "detail",
                    "notes",
                    "file",
                    "line",
                ];
                assert!(
                    !optional.contains(&field),
                    "`{name}.{field}` is left out when empty"
                );
            }
        }
    }

    #[test]
    fn the_shipped_schema_is_the_one_the_types_make() {
        let shipped = include_str!("../../../docs/phase-input.schema.json");
        assert_eq!(
            shipped,
            schema(),
            "docs/phase-input.schema.json is out of date: write `orcho schema phase-input` to it"
        );
    }
}
