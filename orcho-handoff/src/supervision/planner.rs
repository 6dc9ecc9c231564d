//! Planner questions: a planner asks for clarification before it plans.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{
    error::{AnswerError, QuestionError, QuestionErrorKind},
    question::{Answer, QuestionBatch},
};

/// A batch of clarifying questions from a planner.
///
/// Every planner question accepts free-form text (`custom: true`): the person
/// may always answer something the planner did not think of. A batch with a
/// `custom: false` question is refused.
///
/// ```
/// use orcho_handoff::supervision::{Answer, PlannerQuestions, Question, QuestionBatch, QuestionOption};
///
/// let batch = QuestionBatch::new([Question::new(
///     "Auth Type",
///     "What authentication approach do you want?",
///     [QuestionOption::new("OAuth"), QuestionOption::new("Session"), QuestionOption::new("JWT")],
/// )?])?;
/// let questions = PlannerQuestions::new(batch)?;
/// let answers = questions.answer(vec![Answer::select("JWT").with_text("short-lived tokens")])?;
/// assert_eq!(answers.for_planner(), "Auth Type: What authentication approach do you want?\n  answer: JWT; short-lived tokens\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "QuestionBatch", into = "QuestionBatch")]
pub struct PlannerQuestions {
    batch: QuestionBatch,
}

impl TryFrom<QuestionBatch> for PlannerQuestions {
    type Error = QuestionError;

    fn try_from(batch: QuestionBatch) -> Result<Self, Self::Error> {
        Self::new(batch)
    }
}

impl From<PlannerQuestions> for QuestionBatch {
    fn from(q: PlannerQuestions) -> Self {
        q.batch
    }
}

impl PlannerQuestions {
    /// Wraps a batch of planner questions.
    ///
    /// # Errors
    ///
    /// [`QuestionErrorKind::CustomRequired`] naming the first question that
    /// does not accept free-form text.
    pub fn new(batch: QuestionBatch) -> Result<Self, QuestionError> {
        if let Some(q) = batch.questions().iter().find(|q| !q.custom()) {
            return Err(QuestionError::new(
                q.header(),
                QuestionErrorKind::CustomRequired,
            ));
        }
        Ok(Self { batch })
    }

    /// The questions.
    pub fn batch(&self) -> &QuestionBatch {
        &self.batch
    }

    /// Checks the answers (one per question, in order) and pairs them with
    /// their questions for the planner.
    ///
    /// # Errors
    ///
    /// The first [`AnswerError`].
    pub fn answer(&self, answers: Vec<Answer>) -> Result<PlannerAnswers, AnswerError> {
        self.batch.check(&answers)?;
        Ok(PlannerAnswers {
            questions: self.clone(),
            answers,
        })
    }
}

/// A planner's questions with their checked answers: what goes back to the
/// planner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannerAnswers {
    questions: PlannerQuestions,
    answers: Vec<Answer>,
}

impl PlannerAnswers {
    orcho_core::getters! {
        /// The answers, one per question, in order.
        pub fn answers(&self) -> &[Answer];
        /// The questions.
        pub fn questions(&self) -> &PlannerQuestions;
    }

    /// The questions and answers as plain text for the planner's prompt.
    pub fn for_planner(&self) -> String {
        let mut out = String::new();
        for (q, a) in self.questions.batch.questions().iter().zip(&self.answers) {
            let mut parts: Vec<&str> = a.selected.iter().map(|s| s.trim()).collect();
            if let Some(text) = a.custom_text() {
                parts.push(text);
            }
            let answer = if parts.is_empty() {
                "(no answer)".to_owned()
            } else {
                parts.join("; ")
            };
            let _ = writeln!(out, "{}: {}\n  answer: {answer}", q.header(), q.question());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervision::{Question, QuestionOption};

    #[test]
    fn planner_questions_must_accept_free_text() {
        let strict = Question::new("Database", "Which one?", [QuestionOption::new("Postgres")])
            .unwrap()
            .with_custom(false)
            .unwrap();
        let err = PlannerQuestions::new(QuestionBatch::new([strict]).unwrap()).unwrap_err();
        insta::assert_snapshot!(err, @"invalid question `Database`: planner questions must accept free-form text (`custom: true`)");
    }

    #[test]
    fn answers_are_checked_and_rendered() {
        let batch = QuestionBatch::new([
            Question::new(
                "Database",
                "Which database?",
                [
                    QuestionOption::new("Postgres"),
                    QuestionOption::new("SQLite"),
                ],
            )
            .unwrap(),
            Question::new("Notes", "Anything else?", []).unwrap(),
        ])
        .unwrap();
        let q = PlannerQuestions::new(batch).unwrap();
        assert!(
            q.answer(vec![Answer::select("MySQL"), Answer::none()])
                .is_err()
        );
        let a = q
            .answer(vec![Answer::text("DuckDB"), Answer::none()])
            .unwrap();
        insta::assert_snapshot!(a.for_planner(), @r"
        Database: Which database?
          answer: DuckDB
        Notes: Anything else?
          answer: (no answer)
        ");
    }
}
