//! The two-question pattern: a typed action plus optional free-form context.
//!
//! Every plugin-controlled touchpoint (plan approval, deviation handling)
//! asks two questions together:
//!
//! 1. **Action** (`custom: false`): one of a fixed set of typed actions;
//! 2. **Context** (`custom: true`, no options): optional free-form guidance.
//!
//! Code switches on the typed action and never parses the free text; the text
//! travels along as guidance for whoever acts next.

use std::fmt;

use super::{
    error::{AnswerError, AnswerErrorKind, QuestionError},
    question::{Answer, Question, QuestionBatch, QuestionOption},
};

/// A closed set of actions a touchpoint offers, as a Rust enum.
///
/// ```
/// use orcho_handoff::supervision::TouchpointAction;
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// enum Light { Go, Stop }
///
/// impl TouchpointAction for Light {
///     fn option(self) -> (&'static str, &'static str) {
///         match self {
///             Self::Go => ("Go", "Carry on"),
///             Self::Stop => ("Stop", "Stop here"),
///         }
///     }
/// }
///
/// assert_eq!(Light::Stop.label(), "Stop");
/// assert_eq!(Light::Go.description(), "Carry on");
/// ```
pub trait TouchpointAction: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// The action as an option: the label shown to a person and selected in
    /// an [`Answer`], and what choosing it does, shown beside the label.
    fn option(self) -> (&'static str, &'static str);

    /// The option label.
    fn label(self) -> &'static str {
        self.option().0
    }

    /// What choosing the action does.
    fn description(self) -> &'static str {
        self.option().1
    }
}

/// The Action and Context questions of one touchpoint, and the mapping from
/// their answers back to a typed [`Choice`].
///
/// Only the actions that are *available* at this point become options, so a
/// person can never pick one that is not offered.
///
/// ```
/// use orcho_handoff::supervision::{Answer, DeviationAction, TwoQuestions};
///
/// let q = TwoQuestions::new("Action", "Step 2 failed. What would you like to do?", &[DeviationAction::Replan, DeviationAction::Stop])?;
/// let choice = q.parse(&[Answer::select("Replan"), Answer::text("try the v2 API")])?;
/// assert_eq!(choice.action, DeviationAction::Replan);
/// assert_eq!(choice.context.as_deref(), Some("try the v2 API"));
/// assert!(q.parse(&[Answer::select("Retry"), Answer::none()]).is_err(), "retry is not offered");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoQuestions<A> {
    /// Always exactly two questions: Action, then Context.
    batch: QuestionBatch,
    actions: Vec<A>,
}

/// The typed result of a two-question touchpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice<A> {
    /// The action chosen.
    pub action: A,
    /// The free-form context, trimmed; `None` when left empty.
    pub context: Option<String>,
}

/// The default header of the context question.
pub const CONTEXT_HEADER: &str = "Context";
/// The default text of the context question.
pub const CONTEXT_QUESTION: &str =
    "Anything to add? Optional guidance passed along with your choice.";

impl<A: TouchpointAction> TwoQuestions<A> {
    /// The two questions for `available` actions, with the default context
    /// question.
    ///
    /// # Errors
    ///
    /// A [`QuestionError`] when the header is blank or too long, the question
    /// is blank, or no action is available.
    pub fn new(
        header: &str,
        question: impl Into<String>,
        available: &[A],
    ) -> Result<Self, QuestionError> {
        let options = available
            .iter()
            .map(|a| QuestionOption::new(a.label()).with_description(a.description()));
        let action = Question::new(header, question, options)?.with_custom(false)?;
        let context = Question::new(CONTEXT_HEADER, CONTEXT_QUESTION, [])?;
        Ok(Self {
            batch: QuestionBatch::new([action, context])?,
            actions: available.to_vec(),
        })
    }

    /// Replaces the context question's header and text.
    ///
    /// # Errors
    ///
    /// A [`QuestionError`] for a blank or too-long header, a blank question,
    /// or a header equal to the action question's.
    pub fn with_context(
        mut self,
        header: &str,
        question: impl Into<String>,
    ) -> Result<Self, QuestionError> {
        let context = Question::new(header, question, [])?;
        self.batch = QuestionBatch::new([self.action_question().clone(), context])?;
        Ok(self)
    }

    /// The actions offered.
    pub fn actions(&self) -> &[A] {
        &self.actions
    }

    /// The Action question.
    pub fn action_question(&self) -> &Question {
        &self.batch.questions()[0]
    }

    /// The Context question.
    pub fn context_question(&self) -> &Question {
        &self.batch.questions()[1]
    }

    /// Both questions as one batch, Action first, for a host to render.
    pub fn batch(&self) -> &QuestionBatch {
        &self.batch
    }

    /// Maps the answers to the batch (Action, then Context) to a typed choice.
    ///
    /// # Errors
    ///
    /// An [`AnswerError`] when the answers do not fit the questions.
    pub fn parse(&self, answers: &[Answer]) -> Result<Choice<A>, AnswerError> {
        self.batch.check(answers)?;
        let selected = answers[0]
            .selected
            .first()
            .map(String::as_str)
            .unwrap_or_default()
            .trim();
        let action = self
            .actions
            .iter()
            .copied()
            .find(|a| a.label().to_lowercase() == selected.to_lowercase())
            .ok_or_else(|| {
                AnswerError::new(
                    self.action_question().header(),
                    AnswerErrorKind::UnknownOption {
                        label: selected.to_owned(),
                        options: self.actions.iter().map(|a| a.label().to_owned()).collect(),
                    },
                )
            })?;
        Ok(Choice {
            action,
            context: answers[1].custom_text().map(str::to_owned),
        })
    }

    /// The answers a host would send for `action` and `context`: the inverse
    /// of [`parse`](Self::parse), for hosts with their own UI and for tests.
    pub fn answers(&self, action: A, context: Option<&str>) -> [Answer; 2] {
        [
            Answer::select(action.label()),
            context.map_or_else(Answer::none, Answer::text),
        ]
    }
}
