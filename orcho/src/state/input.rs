//! [`PhaseInput`]: what an attempt of a phase receives, and
//! [`PhaseInput::to_text`], the same as plain text for an agent's prompt.

use std::fmt::Write as _;

use orcho_core::{Digest, Finding};
use orcho_gates::GateFailure;
use orcho_handoff::supervision::Plan;
use serde::Serialize;

/// What an attempt of a phase receives: the run's task, the plan it
/// carries out, what the operator said, what failed before, and (for final
/// acceptance) the readiness summary.
///
/// The engine keeps what a transition gives the next attempt (failures fed
/// in, critique, findings, feedback, waivers, a failed step) with the run's
/// state; the rest (the task, the plan, every answer given, the previous
/// plan) it adds from the run's journal when it asks for the attempt, so
/// that every attempt sees the run's decisions, whatever happened between.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct PhaseInput {
    /// What the run was started to do, in the words it was given.
    pub task: Option<String>,
    /// The plan the run carries out: the last plan a planning phase
    /// reported that the run went on with (approved, when plan approval is
    /// on). Every phase after the planner receives it.
    pub plan: Option<Box<PlanInput>>,
    /// For a planning phase that runs again (its plan sent back for changes,
    /// a replan): the plan it reported last.
    pub previous_plan: Option<Box<Plan>>,
    /// The operator's feedback: a handoff's `retry` feedback, or what a plan
    /// must change (`request-changes`).
    pub feedback: Option<String>,
    /// Every answer the operator gave this phase's questions so far, as
    /// plain text, oldest first: a question answered once need not be asked
    /// again.
    pub answers: Option<String>,
    /// A failed step the operator decided on: for `retry`, the failure and
    /// the guidance, given to the step that runs again; for `replan`, the
    /// failed step and its failure, given to the planner.
    pub deviation: Option<String>,
    /// Gate failures of the previous attempt with `feed_into_next`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fed_failures: Vec<GateFailure>,
    /// The critique that triggered a replan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critique: Vec<GateFailure>,
    /// Findings of the previous attempt's rejected or incomplete verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Reasons of `continue_with_waiver` decisions in force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<String>,
    /// For a correction follow-up: what the parent run was rejected for, as
    /// Markdown (every phase of the follow-up receives it).
    pub follow_up: Option<String>,
    /// For final acceptance: the readiness summary built from receipts, as
    /// Markdown for a reviewer.
    pub readiness: Option<String>,
}

impl PhaseInput {
    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The plan a run carries out, as its phases receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PlanInput {
    /// The plan.
    pub plan: Plan,
    /// Its [digest](Plan::digest): what an approval was bound to.
    pub digest: Digest,
    /// Whether an operator approved it (`false`: plan approval is off, and
    /// the run went on with the plan as the planner reported it).
    pub approved: bool,
    /// The notes the approval gave the executors, if any.
    pub notes: Option<String>,
}

impl PlanInput {
    /// `plan`, with its digest.
    pub fn new(plan: Plan, approved: bool, notes: Option<String>) -> Self {
        Self {
            digest: plan.digest(),
            plan,
            approved,
            notes,
        }
    }

    /// The plan as text: its goal, numbered steps with their roles, the
    /// files it touches, its risks, its digest and the approval's notes.
    pub fn to_text(&self) -> String {
        let mut body = plan_text(&self.plan);
        let _ = writeln!(body, "\nDigest: {}", self.digest);
        if let Some(notes) = &self.notes {
            let _ = writeln!(body, "\nNotes from the approval: {}", notes.trim());
        }
        body
    }
}

impl PhaseInput {
    /// The input as plain text, one `## ` section for each part that is
    /// there, always in this order: the task, the plan to carry out (with
    /// the approval's notes), the previous plan, the operator's feedback,
    /// the answers given, the failed step, the failures fed in from gates,
    /// the critique, the last attempt's findings, the waivers in force, what
    /// a follow-up corrects, and the readiness summary. Empty when the input
    /// is.
    ///
    /// ```
    /// use orcho::PhaseInput;
    ///
    /// let mut input = PhaseInput::default();
    /// input.task = Some("Parse empty input as an empty list".into());
    /// input.feedback = Some("handle the empty input".into());
    /// let text = input.to_text();
    /// assert_eq!(
    ///     text.lines().filter(|l| l.starts_with("## ")).collect::<Vec<_>>(),
    ///     ["## Task", "## Feedback from the operator"]
    /// );
    /// assert!(text.ends_with("\n\nhandle the empty input\n"));
    /// assert_eq!(PhaseInput::default().to_text(), "");
    /// ```
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut section = |title: &str, body: &str| {
            if body.trim().is_empty() {
                return;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(out, "## {title}\n\n{}", body.trim_end());
        };
        if let Some(task) = &self.task {
            section("Task", task);
        }
        if let Some(plan) = &self.plan {
            let title = if plan.approved {
                "The approved plan (carry it out)"
            } else {
                "The plan (carry it out)"
            };
            section(title, &plan.to_text());
        }
        if let Some(previous) = &self.previous_plan {
            section("Your previous plan", &plan_text(previous));
        }
        if let Some(feedback) = &self.feedback {
            section("Feedback from the operator", feedback);
        }
        if let Some(answers) = &self.answers {
            section("Answers to your questions", answers);
        }
        if let Some(deviation) = &self.deviation {
            section("The failed step", deviation);
        }
        section("Failures fed in from gates", &failures(&self.fed_failures));
        section("Critique (the plan must change)", &failures(&self.critique));
        section(
            "Findings of the last attempt",
            &findings(&self.findings, ""),
        );
        let waivers: String = self.waivers.iter().map(|w| format!("- {w}\n")).collect();
        section("Waived (accepted as they are)", &waivers);
        if let Some(follow_up) = &self.follow_up {
            section("What this follow-up corrects", follow_up);
        }
        if let Some(readiness) = &self.readiness {
            section("Readiness", readiness);
        }
        out
    }
}

/// A plan as text: its goal, numbered steps with their roles, the files
/// it touches and its risks.
fn plan_text(plan: &Plan) -> String {
    let mut out = format!("Goal: {}\n", plan.goal.trim());
    if !plan.steps.is_empty() {
        out.push_str("\nSteps:\n");
        for (n, step) in plan.steps.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. [{}] {}",
                n + 1,
                step.role.trim(),
                step.description.trim()
            );
        }
    }
    if !plan.files_affected.is_empty() {
        let _ = writeln!(out, "\nFiles affected: {}", plan.files_affected.join(", "));
    }
    if !plan.risks.is_empty() {
        out.push_str("\nRisks:\n");
        for risk in &plan.risks {
            let _ = writeln!(out, "- {}", risk.trim());
        }
    }
    out
}

fn failures(failures: &[GateFailure]) -> String {
    let mut out = String::new();
    for failure in failures {
        let _ = write!(out, "- gate `{}`", failure.gate);
        if !failure.summary.trim().is_empty() {
            let _ = write!(out, ": {}", failure.summary.trim());
        }
        out.push('\n');
        out.push_str(&findings(&failure.findings_shown(), "  "));
    }
    out
}

fn findings(findings: &[Finding], indent: &str) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = write!(out, "{indent}- [{}] {}", f.severity, f.title);
        match (&f.file, f.line) {
            (Some(file), Some(line)) => {
                let _ = write!(out, " ({file}:{line})");
            }
            (Some(file), None) => {
                let _ = write!(out, " ({file})");
            }
            _ => {}
        }
        out.push('\n');
        for line in f.detail.trim().lines() {
            let _ = writeln!(out, "{indent}  {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use orcho_handoff::supervision::PlanStep;

    use super::*;

    #[test]
    fn every_part_has_its_place_in_the_text() {
        let plan = Plan::new("Parse empty input")
            .with_step(PlanStep::new("coder", "Return [] for empty input"))
            .with_file("src/parse.py")
            .with_risk("callers that expect None");
        let input = PhaseInput {
            task: Some("Make parse('') return []".into()),
            plan: Some(Box::new(PlanInput::new(
                plan.clone(),
                true,
                Some("keep it small".into()),
            ))),
            previous_plan: Some(Box::new(Plan::new("An older plan"))),
            feedback: Some("split the step".into()),
            answers: Some("Storage: where?\n  answer: files\n".into()),
            deviation: Some("Step 1 failed: no module".into()),
            findings: vec![
                Finding::new("review", orcho_core::Severity::High, "no test").with_file("t.py"),
            ],
            waivers: vec!["flaky network test".into()],
            follow_up: Some("Correction follow-up 1 of run `r`.".into()),
            readiness: Some("all present".into()),
            ..PhaseInput::default()
        };
        let text = input.to_text();
        let titles: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
        assert_eq!(
            titles,
            [
                "Task",
                "The approved plan (carry it out)",
                "Your previous plan",
                "Feedback from the operator",
                "Answers to your questions",
                "The failed step",
                "Findings of the last attempt",
                "Waived (accepted as they are)",
                "What this follow-up corrects",
                "Readiness",
            ]
        );
        assert!(
            text.contains("1. [coder] Return [] for empty input"),
            "{text}"
        );
        assert!(text.contains("Files affected: src/parse.py"), "{text}");
        assert!(text.contains("- callers that expect None"), "{text}");
        assert!(
            text.contains(&format!("Digest: {}", plan.digest())),
            "{text}"
        );
        assert!(
            text.contains("Notes from the approval: keep it small"),
            "{text}"
        );
        assert!(text.contains("- [high] no test (t.py)"), "{text}");
    }

    #[test]
    fn a_plan_the_run_went_on_with_unapproved_says_so() {
        let input = PhaseInput {
            plan: Some(Box::new(PlanInput::new(Plan::new("g"), false, None))),
            ..PhaseInput::default()
        };
        assert!(
            input
                .to_text()
                .starts_with("## The plan (carry it out)\n\nGoal: g\n")
        );
    }
}
