//! Touchpoints and plans as the run journal writes them: its own types,
//! apart from `orcho-handoff`'s domain types (ADR 0005), with the same JSON
//! those types wrote in version 1.

use orcho_handoff::supervision::{
    Deviation, DeviationPolicy, DeviationSpent, Plan, PlanStep, PlannerQuestions, Question,
    QuestionBatch, QuestionOption, Touchpoint,
};
use serde::{Deserialize, Serialize};

/// A supervision touchpoint in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum TouchpointV1 {
    /// A planner asked clarifying questions.
    PlannerQuestions { questions: QuestionBatchV1 },
    /// A plan waits for approval.
    PlanApproval { plan: PlanV1 },
    /// A step failed.
    Deviation {
        deviation: DeviationV1,
        policy: DeviationPolicyV1,
        spent: DeviationSpentV1,
    },
}

/// A batch of questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuestionBatchV1 {
    questions: Vec<QuestionV1>,
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuestionV1 {
    header: String,
    question: String,
    #[serde(default)]
    options: Vec<OptionV1>,
    #[serde(default)]
    multiple: bool,
    #[serde(default = "yes")]
    custom: bool,
}

fn yes() -> bool {
    true
}

/// One option of a question.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionV1 {
    label: String,
    description: Option<String>,
}

/// A plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanV1 {
    goal: String,
    steps: Vec<PlanStepV1>,
    #[serde(default)]
    files_affected: Vec<String>,
    #[serde(default)]
    risks: Vec<String>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanStepV1 {
    role: String,
    description: String,
}

/// A failed step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviationV1 {
    step: u32,
    description: String,
    error: String,
    retries: u32,
}

/// The limits of deviation handling.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviationPolicyV1 {
    #[serde(default = "default_retry_cap")]
    retry_cap: u32,
    retry_budget: Option<u32>,
    replan_budget: Option<u32>,
}

fn default_retry_cap() -> u32 {
    orcho_handoff::supervision::DEFAULT_RETRY_CAP
}

/// What deviation handling had spent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviationSpentV1 {
    retries: u32,
    replans: u32,
}

impl From<&Plan> for PlanV1 {
    fn from(plan: &Plan) -> Self {
        Self {
            goal: plan.goal.clone(),
            steps: plan
                .steps
                .iter()
                .map(|s| PlanStepV1 {
                    role: s.role.clone(),
                    description: s.description.clone(),
                })
                .collect(),
            files_affected: plan.files_affected.clone(),
            risks: plan.risks.clone(),
        }
    }
}

impl From<PlanV1> for Plan {
    fn from(v: PlanV1) -> Self {
        let mut plan = Self::new(v.goal);
        for step in v.steps {
            plan = plan.with_step(PlanStep::new(step.role, step.description));
        }
        for file in v.files_affected {
            plan = plan.with_file(file);
        }
        for risk in v.risks {
            plan = plan.with_risk(risk);
        }
        plan
    }
}

impl From<&Touchpoint> for TouchpointV1 {
    fn from(touchpoint: &Touchpoint) -> Self {
        match touchpoint {
            Touchpoint::PlannerQuestions { questions } => Self::PlannerQuestions {
                questions: QuestionBatchV1 {
                    questions: questions
                        .batch()
                        .questions()
                        .iter()
                        .map(|q| QuestionV1 {
                            header: q.header().to_owned(),
                            question: q.question().to_owned(),
                            options: q
                                .options()
                                .iter()
                                .map(|o| OptionV1 {
                                    label: o.label.clone(),
                                    description: o.description.clone(),
                                })
                                .collect(),
                            multiple: q.multiple(),
                            custom: q.custom(),
                        })
                        .collect(),
                },
            },
            Touchpoint::PlanApproval { plan } => Self::PlanApproval { plan: plan.into() },
            Touchpoint::Deviation {
                deviation,
                policy,
                spent,
            } => Self::Deviation {
                deviation: DeviationV1 {
                    step: deviation.step,
                    description: deviation.description.clone(),
                    error: deviation.error.clone(),
                    retries: deviation.retries,
                },
                policy: DeviationPolicyV1 {
                    retry_cap: policy.retry_cap,
                    retry_budget: policy.retry_budget,
                    replan_budget: policy.replan_budget,
                },
                spent: DeviationSpentV1 {
                    retries: spent.retries,
                    replans: spent.replans,
                },
            },
        }
    }
}

impl TryFrom<TouchpointV1> for Touchpoint {
    type Error = String;

    fn try_from(v: TouchpointV1) -> Result<Self, String> {
        Ok(match v {
            TouchpointV1::PlannerQuestions { questions } => {
                let questions = questions
                    .questions
                    .into_iter()
                    .map(|q| {
                        let options = q.options.into_iter().map(|o| match o.description {
                            Some(d) => QuestionOption::new(o.label).with_description(d),
                            None => QuestionOption::new(o.label),
                        });
                        Question::new(q.header, q.question, options)
                            .map(|question| question.with_multiple(q.multiple))
                            .and_then(|question| question.with_custom(q.custom))
                            .map_err(|e| e.to_string())
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                let batch = QuestionBatch::new(questions).map_err(|e| e.to_string())?;
                Self::PlannerQuestions {
                    questions: PlannerQuestions::new(batch).map_err(|e| e.to_string())?,
                }
            }
            TouchpointV1::PlanApproval { plan } => Self::PlanApproval { plan: plan.into() },
            TouchpointV1::Deviation {
                deviation,
                policy,
                spent,
            } => {
                let mut limits = DeviationPolicy::default().with_retry_cap(policy.retry_cap);
                if let Some(budget) = policy.retry_budget {
                    limits = limits.with_retry_budget(budget);
                }
                if let Some(budget) = policy.replan_budget {
                    limits = limits.with_replan_budget(budget);
                }
                Self::Deviation {
                    deviation: Deviation::new(
                        deviation.step,
                        deviation.description,
                        deviation.error,
                    )
                    .with_retries(deviation.retries),
                    policy: limits,
                    spent: DeviationSpent::new(spent.retries, spent.replans),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use orcho_handoff::supervision::{
        Deviation, DeviationPolicy, DeviationSpent, Plan, PlanStep, PlannerQuestions, Question,
        QuestionBatch, QuestionOption, Touchpoint,
    };

    use super::TouchpointV1;

    fn touchpoints() -> Vec<Touchpoint> {
        let question = Question::new(
            "Storage",
            "Where should parsed documents be kept?",
            [
                QuestionOption::new("Memory").with_description("fast, lost on exit"),
                QuestionOption::new("Disk"),
            ],
        )
        .expect("a question")
        .with_multiple(true);
        vec![
            Touchpoint::PlannerQuestions {
                questions: PlannerQuestions::new(QuestionBatch::new([question]).expect("a batch"))
                    .expect("planner questions"),
            },
            Touchpoint::PlanApproval {
                plan: Plan::new("Add a parser")
                    .with_step(PlanStep::new("coder", "Write parse()"))
                    .with_file("src/parse.rs")
                    .with_risk("slow on large input"),
            },
            Touchpoint::Deviation {
                deviation: Deviation::new(2, "Write parse()", "cargo build failed").with_retries(1),
                policy: DeviationPolicy::default()
                    .with_retry_cap(3)
                    .with_replan_budget(1),
                spent: DeviationSpent::new(1, 0),
            },
        ]
    }

    #[test]
    fn the_journal_writes_touchpoints_as_version_1_did_and_reads_them_back() {
        for touchpoint in touchpoints() {
            let ours = serde_json::to_value(TouchpointV1::from(&touchpoint)).expect("encode");
            // Version 1 wrote the domain type's own JSON.
            assert_eq!(ours, serde_json::to_value(&touchpoint).expect("encode"));
            let back: TouchpointV1 = serde_json::from_value(ours).expect("decode");
            assert_eq!(Touchpoint::try_from(back).expect("valid"), touchpoint);
        }
    }

    #[test]
    fn a_touchpoint_the_domain_would_refuse_is_refused_on_read() {
        let empty =
            serde_json::json!({"kind": "planner_questions", "questions": {"questions": []}});
        let read: TouchpointV1 = serde_json::from_value(empty).expect("the shape is right");
        assert!(
            Touchpoint::try_from(read).is_err(),
            "an empty batch is not a touchpoint"
        );
    }
}
