//! Plan approval: a plan must be approved before it executes.

use std::fmt::Write as _;

use orcho_core::Digest;
use serde::{Deserialize, Serialize};

use super::{
    error::{QuestionError, TouchpointError},
    pattern::{Choice, TouchpointAction, TwoQuestions},
    question::Answer,
};

/// The context of plan digests. Bump the version when what is hashed changes.
const PLAN_DIGEST_CONTEXT: &str = "orcho plan digest v1";

/// One step of a [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlanStep {
    /// Who carries it out, for example `coder` or `tester`.
    pub role: String,
    /// What the step does.
    pub description: String,
}

impl PlanStep {
    /// A step.
    pub fn new(role: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            description: description.into(),
        }
    }
}

/// A plan produced by a planner: what must be approved before execution.
///
/// Its [`digest`](Self::digest) covers every field, so an approval can be
/// bound to exactly the plan that was shown.
///
/// ```
/// use orcho_handoff::supervision::{Plan, PlanStep};
///
/// let plan = Plan::new("Add user authentication to the API")
///     .with_step(PlanStep::new("coder", "Implement auth middleware"))
///     .with_file("src/middleware/*")
///     .with_risk("Breaking change to existing sessions");
/// let edited = plan.clone().with_step(PlanStep::new("tester", "Write auth tests"));
/// assert_ne!(plan.digest(), edited.digest());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Plan {
    /// What the plan achieves.
    pub goal: String,
    /// The steps, in order.
    pub steps: Vec<PlanStep>,
    /// Files (or globs) the plan expects to touch.
    #[serde(default)]
    pub files_affected: Vec<String>,
    /// Risks the planner sees.
    #[serde(default)]
    pub risks: Vec<String>,
}

impl Plan {
    /// A plan with a goal and nothing else yet.
    pub fn new(goal: impl Into<String>) -> Self {
        Self {
            goal: goal.into(),
            steps: Vec::new(),
            files_affected: Vec::new(),
            risks: Vec::new(),
        }
    }

    /// Adds a step.
    #[must_use]
    pub fn with_step(mut self, step: PlanStep) -> Self {
        self.steps.push(step);
        self
    }

    /// Adds an affected file or glob.
    #[must_use]
    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.files_affected.push(file.into());
        self
    }

    /// Adds a risk.
    #[must_use]
    pub fn with_risk(mut self, risk: impl Into<String>) -> Self {
        self.risks.push(risk.into());
        self
    }

    /// The digest of the whole plan. Any edit (a word of the goal, a step, a
    /// file, a risk, their order) changes it.
    pub fn digest(&self) -> Digest {
        // Serializing plain strings and vectors cannot fail; should it ever,
        // the Debug form still covers every field.
        let bytes = serde_json::to_vec(self).unwrap_or_else(|_| format!("{self:?}").into_bytes());
        Digest::derive(PLAN_DIGEST_CONTEXT, &bytes)
    }

    /// The plan as the text of the approval question (as a terminal shows it).
    pub fn summary(&self) -> String {
        let mut out = format!(
            "Review the plan:\n\nGoal: {}\nSteps: {}\n",
            self.goal,
            self.steps.len()
        );
        for (i, step) in self.steps.iter().enumerate() {
            let _ = writeln!(out, "  {}. [{}] {}", i + 1, step.role, step.description);
        }
        if !self.files_affected.is_empty() {
            let _ = writeln!(out, "\nFiles affected: {}", self.files_affected.join(", "));
        }
        if !self.risks.is_empty() {
            let _ = writeln!(out, "Risks: {}", self.risks.join("; "));
        }
        out.push_str("\nWhat would you like to do?");
        out
    }
}

/// What an operator can do with a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PlanAction {
    /// Execute the plan; feedback is optional.
    Approve,
    /// Send the plan back to the planner with feedback (required).
    RequestChanges,
    /// Cancel the plan.
    Reject,
}

impl PlanAction {
    /// Every action, in menu order.
    pub const ALL: [Self; 3] = [Self::Approve, Self::RequestChanges, Self::Reject];
}

impl TouchpointAction for PlanAction {
    fn option(self) -> (&'static str, &'static str) {
        match self {
            Self::Approve => ("Approve", "Execute this plan"),
            Self::RequestChanges => ("Request Changes", "Send back to planner for revision"),
            Self::Reject => ("Reject", "Cancel this plan entirely"),
        }
    }
}

/// A decision on a plan, bound to the digest of the plan it was taken on.
///
/// Persist it as it is; before acting on it, [`apply`](Self::apply) it to the
/// current plan, which refuses it when the plan has changed since.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlanDecision {
    /// What was decided.
    pub action: PlanAction,
    /// The operator's feedback, trimmed; `None` when none was given.
    pub feedback: Option<String>,
    /// The digest of the plan the decision was taken on.
    pub plan_digest: Digest,
}

/// What happens after a plan decision.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanOutcome {
    /// Execute the plan, with the operator's optional notes.
    Execute {
        /// Optional notes for the executors.
        feedback: Option<String>,
    },
    /// Send the plan back to the planner with this feedback.
    Revise {
        /// What to change.
        feedback: String,
    },
    /// The plan is cancelled.
    Cancelled {
        /// Optional reason.
        feedback: Option<String>,
    },
}

impl PlanDecision {
    /// A decision on `plan`.
    ///
    /// # Errors
    ///
    /// [`TouchpointError::FeedbackRequired`] for `request_changes` without
    /// feedback (blank text counts as none).
    pub fn new(
        plan: &Plan,
        action: PlanAction,
        feedback: Option<&str>,
    ) -> Result<Self, TouchpointError> {
        let feedback = feedback
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned);
        if action == PlanAction::RequestChanges && feedback.is_none() {
            return Err(TouchpointError::FeedbackRequired {
                action: "request_changes".to_owned(),
            });
        }
        Ok(Self {
            action,
            feedback,
            plan_digest: plan.digest(),
        })
    }

    /// What to do with `current`, the plan as it is now.
    ///
    /// # Errors
    ///
    /// [`TouchpointError::StalePlan`] when `current` is not the plan the decision
    /// was taken on; [`TouchpointError::FeedbackRequired`] for a hand-made
    /// `request_changes` decision without feedback.
    pub fn apply(&self, current: &Plan) -> Result<PlanOutcome, TouchpointError> {
        let current_digest = current.digest();
        if current_digest != self.plan_digest {
            return Err(TouchpointError::StalePlan {
                decided: self.plan_digest,
                current: current_digest,
            });
        }
        let feedback = self.feedback.clone();
        Ok(match self.action {
            PlanAction::Approve => PlanOutcome::Execute { feedback },
            PlanAction::RequestChanges => PlanOutcome::Revise {
                feedback: feedback.ok_or_else(|| TouchpointError::FeedbackRequired {
                    action: "request_changes".to_owned(),
                })?,
            },
            PlanAction::Reject => PlanOutcome::Cancelled { feedback },
        })
    }
}

/// The approval touchpoint for one plan: the two questions a host renders
/// ("Decision" and "Feedback"), and the mapping from answers to a
/// [`PlanDecision`] bound to this plan.
///
/// ```
/// use orcho_handoff::supervision::{Answer, Plan, PlanAction, PlanApproval, PlanOutcome, PlanStep};
///
/// let plan = Plan::new("Add auth").with_step(PlanStep::new("coder", "Implement middleware"));
/// let approval = PlanApproval::new(&plan)?;
/// let decision = approval.decide(&[Answer::select("Approve"), Answer::none()])?;
/// assert_eq!(decision.apply(&plan)?, PlanOutcome::Execute { feedback: None });
///
/// let edited = plan.clone().with_step(PlanStep::new("coder", "Also drop the sessions table"));
/// assert!(decision.apply(&edited).unwrap_err().is_stale(), "an approval never carries over to an edited plan");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanApproval {
    plan: Plan,
    questions: TwoQuestions<PlanAction>,
}

impl PlanApproval {
    /// The approval touchpoint for `plan`.
    ///
    /// # Errors
    ///
    /// A [`QuestionError`] only if the plan's summary is blank, which cannot
    /// happen for the fixed header and text.
    pub fn new(plan: &Plan) -> Result<Self, QuestionError> {
        let questions = TwoQuestions::new("Decision", plan.summary(), &PlanAction::ALL)?
            .with_context(
                "Feedback",
                "Feedback for the planner (required to request changes).",
            )?;
        Ok(Self {
            plan: plan.clone(),
            questions,
        })
    }

    orcho_core::getters! {
        /// The plan under review.
        pub fn plan(&self) -> &Plan;
        /// The two questions.
        pub fn questions(&self) -> &TwoQuestions<PlanAction>;
    }

    /// Maps the answers to a decision on this plan.
    ///
    /// # Errors
    ///
    /// [`TouchpointError::Answer`] when the answers do not fit, or
    /// [`TouchpointError::FeedbackRequired`].
    pub fn decide(&self, answers: &[Answer]) -> Result<PlanDecision, TouchpointError> {
        let Choice { action, context } = self.questions.parse(answers)?;
        PlanDecision::new(&self.plan, action, context.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan::new("Add user authentication to the API")
            .with_step(PlanStep::new(
                "researcher",
                "Investigate existing auth patterns",
            ))
            .with_step(PlanStep::new("coder", "Implement auth middleware"))
            .with_step(PlanStep::new("coder", "Add login/logout endpoints"))
            .with_step(PlanStep::new("tester", "Write auth integration tests"))
            .with_file("src/middleware/*")
            .with_file("src/routes/auth.ts")
            .with_risk("Breaking change to existing sessions")
    }

    #[test]
    fn the_prompt_reads_like_the_spec() {
        let approval = PlanApproval::new(&plan()).unwrap();
        insta::assert_snapshot!(approval.questions().action_question().question(), @r"
        Review the plan:

        Goal: Add user authentication to the API
        Steps: 4
          1. [researcher] Investigate existing auth patterns
          2. [coder] Implement auth middleware
          3. [coder] Add login/logout endpoints
          4. [tester] Write auth integration tests

        Files affected: src/middleware/*, src/routes/auth.ts
        Risks: Breaking change to existing sessions

        What would you like to do?
        ");
        let labels: Vec<_> = approval
            .questions()
            .action_question()
            .options()
            .iter()
            .map(|o| o.label.as_str())
            .collect();
        assert_eq!(labels, ["Approve", "Request Changes", "Reject"]);
        assert!(!approval.questions().action_question().custom());
    }

    #[test]
    fn every_action_maps_to_its_outcome() {
        let plan = plan();
        let a = PlanApproval::new(&plan).unwrap();
        let d = a
            .decide(&[Answer::select("Approve"), Answer::text("go")])
            .unwrap();
        assert_eq!(
            d.apply(&plan).unwrap(),
            PlanOutcome::Execute {
                feedback: Some("go".into())
            }
        );
        let d = a
            .decide(&[
                Answer::select("request changes"),
                Answer::text("split step 2"),
            ])
            .unwrap();
        assert_eq!(
            d.apply(&plan).unwrap(),
            PlanOutcome::Revise {
                feedback: "split step 2".into()
            }
        );
        let d = a
            .decide(&[Answer::select("Reject"), Answer::none()])
            .unwrap();
        assert_eq!(
            d.apply(&plan).unwrap(),
            PlanOutcome::Cancelled { feedback: None }
        );
    }

    #[test]
    fn request_changes_needs_feedback() {
        let a = PlanApproval::new(&plan()).unwrap();
        let err = a
            .decide(&[Answer::select("Request Changes"), Answer::text("  ")])
            .unwrap_err();
        insta::assert_snapshot!(err, @"`request_changes` needs feedback text saying what to change");
    }

    #[test]
    fn an_approval_is_refused_after_any_plan_edit() {
        let original = plan();
        let decision = PlanDecision::new(&original, PlanAction::Approve, None).unwrap();
        let edits: Vec<Plan> = vec![
            Plan {
                goal: format!("{} and billing", original.goal),
                ..original.clone()
            },
            original
                .clone()
                .with_step(PlanStep::new("coder", "drop the sessions table")),
            original.clone().with_file("migrations/*"),
            original.clone().with_risk("data loss"),
            Plan {
                steps: original.steps.iter().rev().cloned().collect(),
                ..original.clone()
            },
        ];
        for edited in edits {
            let err = decision.apply(&edited).unwrap_err();
            assert!(err.is_stale(), "{edited:?}");
        }
        assert!(decision.apply(&original).is_ok());
        let err = decision
            .apply(&original.with_risk("x"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("the decision is stale: it was taken on plan blake3:"),
            "{err}"
        );
    }

    #[test]
    fn decision_json_shape() {
        let decision =
            PlanDecision::new(&plan(), PlanAction::RequestChanges, Some("split step 2")).unwrap();
        insta::assert_json_snapshot!(decision, @r#"
        {
          "action": "request_changes",
          "feedback": "split step 2",
          "plan_digest": "blake3:afab0bc92b58faaf51cf40f4c373e0f5a0ddaca89ed4e254cdf5b0cba514e65e"
        }
        "#);
    }
}
