//! Deviation handling: a step failed; retry it, replan, or stop.

use serde::{Deserialize, Serialize};

use super::{
    error::{QuestionError, TouchpointError},
    pattern::{Choice, TouchpointAction, TwoQuestions},
    question::Answer,
};

/// The default number of retries of one step after which `retry` is no longer
/// offered.
pub const DEFAULT_RETRY_CAP: u32 = 10;

/// A failed step, as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Deviation {
    /// The 1-based number of the step in its plan.
    pub step: u32,
    /// What the step does.
    pub description: String,
    /// The error it failed with.
    pub error: String,
    /// How many times this step has been retried already (0 on its first
    /// failure).
    pub retries: u32,
}

impl Deviation {
    /// A failure of step `step` (1-based) that has not been retried yet.
    pub fn new(step: u32, description: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            step,
            description: description.into(),
            error: error.into(),
            retries: 0,
        }
    }
}

impl Deviation {
    orcho_core::setters! {
        /// Sets how many times the step has been retried already.
        pub fn with_retries(retries: u32);
    }
}

/// Limits on deviation handling, from the profile's `supervision` section.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct DeviationPolicy {
    /// Retries of one step after which `retry` is no longer offered.
    #[serde(default = "default_retry_cap")]
    pub retry_cap: u32,
    /// Retries all steps of one plan may use together; `None` for no limit
    /// beyond the per-step cap.
    pub retry_budget: Option<u32>,
    /// Replans one plan may use; `None` for no limit.
    pub replan_budget: Option<u32>,
}

fn default_retry_cap() -> u32 {
    DEFAULT_RETRY_CAP
}

impl Default for DeviationPolicy {
    fn default() -> Self {
        Self {
            retry_cap: DEFAULT_RETRY_CAP,
            retry_budget: None,
            replan_budget: None,
        }
    }
}

impl DeviationPolicy {
    /// The actions offered for `deviation`, given what the plan has spent.
    ///
    /// `stop` is always offered. `retry` is not offered once the step has
    /// been retried `retry_cap` times or the plan's retry budget is spent;
    /// `replan` is not offered once the replan budget is spent.
    ///
    /// ```
    /// use orcho_handoff::supervision::{Deviation, DeviationAction, DeviationPolicy, DeviationSpent};
    ///
    /// let policy = DeviationPolicy::default();
    /// let failing = Deviation::new(2, "Implement auth middleware", "Cannot find module '@auth/core'");
    /// assert_eq!(policy.available(&failing.clone().with_retries(9), DeviationSpent::default()),
    ///            [DeviationAction::Retry, DeviationAction::Replan, DeviationAction::Stop]);
    /// assert_eq!(policy.available(&failing.with_retries(10), DeviationSpent::default()),
    ///            [DeviationAction::Replan, DeviationAction::Stop]);
    /// ```
    pub fn available(&self, deviation: &Deviation, spent: DeviationSpent) -> Vec<DeviationAction> {
        let retry = deviation.retries < self.retry_cap
            && self.retry_budget.is_none_or(|b| spent.retries < b);
        let replan = self.replan_budget.is_none_or(|b| spent.replans < b);
        let mut actions = Vec::with_capacity(3);
        if retry {
            actions.push(DeviationAction::Retry);
        }
        if replan {
            actions.push(DeviationAction::Replan);
        }
        actions.push(DeviationAction::Stop);
        actions
    }
}

impl DeviationPolicy {
    orcho_core::setters! {
        /// Sets the per-step retry cap.
        pub fn with_retry_cap(cap: u32) => retry_cap;
        /// Sets the plan-wide retry budget.
        pub fn with_retry_budget(budget: Some(u32)) => retry_budget;
        /// Sets the replan budget.
        pub fn with_replan_budget(budget: Some(u32)) => replan_budget;
    }
}

/// What one plan has drawn from its budgets so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct DeviationSpent {
    /// Retries of any step of the plan.
    pub retries: u32,
    /// Replans of the plan.
    pub replans: u32,
}

impl DeviationSpent {
    /// Retries and replans spent.
    pub fn new(retries: u32, replans: u32) -> Self {
        Self { retries, replans }
    }
}

/// What an operator can do about a failed step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeviationAction {
    /// Re-run the step with the failure context and optional guidance.
    Retry,
    /// Send the failure to the planner for a revised plan.
    Replan,
    /// Mark the plan failed.
    Stop,
}

impl TouchpointAction for DeviationAction {
    fn option(self) -> (&'static str, &'static str) {
        match self {
            Self::Retry => ("Retry", "Try this step again"),
            Self::Replan => ("Replan", "Go back to planner to revise the approach"),
            Self::Stop => ("Stop", "Stop execution and return to conversation"),
        }
    }
}

/// What happens after a deviation decision.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum DeviationOutcome {
    /// Re-run the step; `context` is what the retry receives: the failure and
    /// the operator's guidance.
    Retry {
        /// The operator's guidance, if any.
        guidance: Option<String>,
        /// The text added to the step's context for the retry.
        context: String,
    },
    /// Ask the planner for a revised plan; `failure` is what it receives.
    Replan {
        /// The operator's guidance, if any.
        guidance: Option<String>,
        /// The failure details for the planner.
        failure: String,
    },
    /// The plan failed.
    Stop {
        /// The operator's note, if any.
        note: Option<String>,
    },
}

/// The deviation touchpoint for one failed step: the menu computed from the
/// policy and budgets, the two questions, and the mapping to an outcome.
///
/// ```
/// use orcho_handoff::supervision::{Answer, Deviation, DeviationOutcome, DeviationPolicy, DeviationPrompt, DeviationSpent};
///
/// let failing = Deviation::new(2, "Implement auth middleware", "Cannot find module '@auth/core'").with_retries(1);
/// let prompt = DeviationPrompt::new(&failing, &DeviationPolicy::default(), DeviationSpent::default())?;
/// let outcome = prompt.decide(&[Answer::select("Retry"), Answer::text("Try using the v2 API instead")])?;
/// let DeviationOutcome::Retry { guidance, .. } = outcome else { panic!("expected a retry") };
/// assert_eq!(guidance.as_deref(), Some("Try using the v2 API instead"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviationPrompt {
    deviation: Deviation,
    cap: u32,
    questions: TwoQuestions<DeviationAction>,
}

impl DeviationPrompt {
    /// The touchpoint for `deviation` under `policy`, given what the plan has
    /// spent so far.
    ///
    /// # Errors
    ///
    /// A [`QuestionError`] only if the rendered text were blank, which the
    /// fixed layout prevents.
    pub fn new(
        deviation: &Deviation,
        policy: &DeviationPolicy,
        spent: DeviationSpent,
    ) -> Result<Self, QuestionError> {
        let text = format!(
            "Step {} failed: \"{}\"\n\nError: {}\nRetry attempts: {}/{}\n\nWhat would you like to do?",
            deviation.step,
            deviation.description,
            deviation.error,
            deviation.retries,
            policy.retry_cap
        );
        let questions = TwoQuestions::new("Action", text, &policy.available(deviation, spent))?;
        Ok(Self {
            deviation: deviation.clone(),
            cap: policy.retry_cap,
            questions,
        })
    }

    /// The actions offered.
    pub fn available(&self) -> &[DeviationAction] {
        self.questions.actions()
    }

    /// The two questions.
    pub fn questions(&self) -> &TwoQuestions<DeviationAction> {
        &self.questions
    }

    /// Maps the answers to an outcome.
    ///
    /// # Errors
    ///
    /// [`TouchpointError::Answer`] when the answers do not fit (including an
    /// action that is not offered).
    pub fn decide(&self, answers: &[Answer]) -> Result<DeviationOutcome, TouchpointError> {
        let Choice { action, context } = self.questions.parse(answers)?;
        self.decide_action(action, context.as_deref())
    }

    /// Maps a typed action and optional guidance to an outcome, for hosts
    /// that render their own controls.
    ///
    /// # Errors
    ///
    /// [`TouchpointError::NotAvailable`] when `action` is not offered.
    pub fn decide_action(
        &self,
        action: DeviationAction,
        guidance: Option<&str>,
    ) -> Result<DeviationOutcome, TouchpointError> {
        if !self.available().contains(&action) {
            return Err(TouchpointError::NotAvailable {
                action: action.label().to_lowercase(),
                available: self
                    .available()
                    .iter()
                    .map(|a| a.label().to_lowercase())
                    .collect(),
            });
        }
        let guidance = guidance
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_owned);
        let d = &self.deviation;
        let failure = format!(
            "Step {} (\"{}\") failed: {}",
            d.step, d.description, d.error
        );
        Ok(match action {
            DeviationAction::Retry => {
                let mut context = format!(
                    "{failure}\nThis is retry {} of at most {}.",
                    d.retries + 1,
                    self.cap
                );
                if let Some(g) = &guidance {
                    context.push_str("\nOperator guidance: ");
                    context.push_str(g);
                }
                DeviationOutcome::Retry { guidance, context }
            }
            DeviationAction::Replan => DeviationOutcome::Replan { guidance, failure },
            DeviationAction::Stop => DeviationOutcome::Stop { note: guidance },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DeviationAction::{Replan, Retry, Stop};

    fn failing() -> Deviation {
        Deviation::new(
            2,
            "Implement auth middleware",
            "Cannot find module '@auth/core'",
        )
    }

    #[test]
    fn retry_disappears_at_exactly_the_cap() {
        for cap in [1, 3, DEFAULT_RETRY_CAP] {
            let policy = DeviationPolicy::default().with_retry_cap(cap);
            for retries in 0..cap {
                assert!(
                    policy
                        .available(&failing().with_retries(retries), DeviationSpent::default())
                        .contains(&Retry),
                    "cap {cap}, retries {retries}"
                );
            }
            assert_eq!(
                policy.available(&failing().with_retries(cap), DeviationSpent::default()),
                [Replan, Stop],
                "cap {cap}"
            );
            assert_eq!(
                policy.available(&failing().with_retries(cap + 1), DeviationSpent::default()),
                [Replan, Stop]
            );
        }
        let none = DeviationPolicy::default().with_retry_cap(0);
        assert_eq!(
            none.available(&failing(), DeviationSpent::default()),
            [Replan, Stop]
        );
    }

    #[test]
    fn exhausted_budgets_leave_only_stop() {
        let policy = DeviationPolicy::default()
            .with_retry_budget(5)
            .with_replan_budget(2);
        assert_eq!(
            policy.available(&failing(), DeviationSpent::new(4, 1)),
            [Retry, Replan, Stop]
        );
        assert_eq!(
            policy.available(&failing(), DeviationSpent::new(5, 1)),
            [Replan, Stop]
        );
        assert_eq!(
            policy.available(&failing(), DeviationSpent::new(4, 2)),
            [Retry, Stop]
        );
        assert_eq!(
            policy.available(&failing(), DeviationSpent::new(5, 2)),
            [Stop]
        );
    }

    #[test]
    fn a_retry_past_the_cap_is_refused_even_when_typed() {
        let prompt = DeviationPrompt::new(
            &failing().with_retries(10),
            &DeviationPolicy::default(),
            DeviationSpent::default(),
        )
        .unwrap();
        let err = prompt.decide_action(Retry, None).unwrap_err();
        insta::assert_snapshot!(err, @"`retry` is not available here; available: `replan`, `stop`");
        let err = prompt
            .decide(&[Answer::select("Retry"), Answer::none()])
            .unwrap_err();
        insta::assert_snapshot!(err, @"invalid answer to `Action`: `Retry` is not one of its options (`Replan`, `Stop`)");
    }

    #[test]
    fn the_prompt_reads_like_the_spec() {
        let prompt = DeviationPrompt::new(
            &failing().with_retries(1),
            &DeviationPolicy::default(),
            DeviationSpent::default(),
        )
        .unwrap();
        insta::assert_snapshot!(prompt.questions().action_question().question(), @r#"
        Step 2 failed: "Implement auth middleware"

        Error: Cannot find module '@auth/core'
        Retry attempts: 1/10

        What would you like to do?
        "#);
    }

    #[test]
    fn outcomes_carry_failure_and_guidance() {
        let prompt = DeviationPrompt::new(
            &failing().with_retries(1),
            &DeviationPolicy::default(),
            DeviationSpent::default(),
        )
        .unwrap();
        let retry = prompt
            .decide(&[
                Answer::select("Retry"),
                Answer::text("Try using the v2 API instead"),
            ])
            .unwrap();
        insta::assert_json_snapshot!(retry, @r#"
        {
          "action": "retry",
          "guidance": "Try using the v2 API instead",
          "context": "Step 2 (\"Implement auth middleware\") failed: Cannot find module '@auth/core'\nThis is retry 2 of at most 10.\nOperator guidance: Try using the v2 API instead"
        }
        "#);
        let replan = prompt
            .decide(&[Answer::select("Replan"), Answer::none()])
            .unwrap();
        assert_eq!(
            replan,
            DeviationOutcome::Replan {
                guidance: None,
                failure:
                    "Step 2 (\"Implement auth middleware\") failed: Cannot find module '@auth/core'"
                        .into()
            }
        );
        assert_eq!(
            prompt
                .decide(&[Answer::select("stop"), Answer::none()])
                .unwrap(),
            DeviationOutcome::Stop { note: None }
        );
    }

    #[test]
    fn policy_reads_from_yaml_with_defaults() {
        let policy: DeviationPolicy = serde_yaml::from_str("replan_budget: 3").unwrap();
        assert_eq!(policy, DeviationPolicy::default().with_replan_budget(3));
        assert!(serde_yaml::from_str::<DeviationPolicy>("retry_capp: 3").is_err());
    }
}
