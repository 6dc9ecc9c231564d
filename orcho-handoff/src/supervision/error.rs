//! Errors of the supervision touchpoints.

use orcho_core::Digest;

use crate::point::{PointError, Refusal};

/// A question (or a batch) breaks a rule of the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct QuestionError {
    header: String,
    kind: QuestionErrorKind,
}

/// Which rule of the question schema was broken.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuestionErrorKind {
    /// The header is blank.
    EmptyHeader,
    /// The header is longer than a tab label may be.
    HeaderTooLong {
        /// Its length in characters.
        chars: usize,
        /// The maximum.
        max: usize,
    },
    /// The question text is blank.
    EmptyQuestion,
    /// An option's label is blank.
    EmptyLabel {
        /// The 0-based index of the option.
        index: usize,
    },
    /// Two options have the same label (ignoring case and surrounding
    /// whitespace).
    DuplicateLabel {
        /// The repeated label.
        label: String,
    },
    /// No options and no free-form text: the question cannot be answered.
    Unanswerable,
    /// A batch without questions.
    EmptyBatch,
    /// Two questions of a batch share a header.
    DuplicateHeader,
    /// A planner question does not accept free-form text.
    CustomRequired,
}

impl QuestionError {
    #[cold]
    pub(crate) fn new(header: &str, kind: QuestionErrorKind) -> Self {
        Self {
            header: header.chars().take(60).collect(),
            kind,
        }
    }

    fn render(&self) -> String {
        let what = match &self.kind {
            QuestionErrorKind::EmptyBatch => {
                return "invalid question batch: it has no questions".to_owned();
            }
            QuestionErrorKind::EmptyHeader => "the header is empty".to_owned(),
            QuestionErrorKind::HeaderTooLong { chars, max } => {
                format!("the header has {chars} characters, more than {max} (it is a tab label)")
            }
            QuestionErrorKind::EmptyQuestion => "the question text is empty".to_owned(),
            QuestionErrorKind::EmptyLabel { index } => {
                format!("option {} has an empty label", index + 1)
            }
            QuestionErrorKind::DuplicateLabel { label } => {
                format!("the option label `{label}` appears twice")
            }
            QuestionErrorKind::Unanswerable => {
                "it has no options and does not accept free-form text, so it cannot be answered"
                    .to_owned()
            }
            QuestionErrorKind::DuplicateHeader => {
                "another question of the batch has the same header".to_owned()
            }
            QuestionErrorKind::CustomRequired => {
                "planner questions must accept free-form text (`custom: true`)".to_owned()
            }
        };
        format!("invalid question `{}`: {what}", self.header)
    }

    orcho_core::getters! {
        /// The header of the question at fault (empty for batch-level errors).
        pub fn header(&self) -> &str;
        /// Which rule was broken.
        pub fn kind(&self) -> &QuestionErrorKind;
    }
}

/// An answer does not fit its question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct AnswerError {
    header: String,
    kind: AnswerErrorKind,
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerErrorKind {
    /// A selected label is not an option of the question.
    UnknownOption {
        /// The label given.
        label: String,
        /// The labels of the question's options.
        options: Vec<String>,
    },
    /// Several options selected on a single-choice question.
    SeveralSelections {
        /// How many were selected.
        count: usize,
    },
    /// The same option selected twice.
    DuplicateSelection {
        /// The option.
        label: String,
    },
    /// Free-form text on a question that does not accept it.
    CustomNotAllowed,
    /// Nothing selected on a question that only offers options.
    NothingSelected,
    /// Nothing selected and no text.
    Empty,
    /// A batch got a different number of answers than it has questions.
    WrongCount {
        /// The number of questions.
        expected: usize,
        /// The number of answers.
        got: usize,
    },
}

impl AnswerError {
    #[cold]
    pub(crate) fn new(header: &str, kind: AnswerErrorKind) -> Self {
        Self {
            header: header.to_owned(),
            kind,
        }
    }

    fn render(&self) -> String {
        let what = match &self.kind {
            AnswerErrorKind::WrongCount { expected, got } => {
                return format!(
                    "invalid answers: the batch has {expected} questions but {got} answers were given"
                );
            }
            AnswerErrorKind::UnknownOption { label, options } => {
                let options: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
                format!(
                    "`{label}` is not one of its options ({})",
                    options.join(", ")
                )
            }
            AnswerErrorKind::SeveralSelections { count } => {
                format!("{count} options selected on a single-choice question")
            }
            AnswerErrorKind::DuplicateSelection { label } => format!("`{label}` is selected twice"),
            AnswerErrorKind::CustomNotAllowed => {
                "it gives free-form text, which this question does not accept".to_owned()
            }
            AnswerErrorKind::NothingSelected => "no option is selected".to_owned(),
            AnswerErrorKind::Empty => "it selects nothing and gives no text".to_owned(),
        };
        format!("invalid answer to `{}`: {what}", self.header)
    }

    orcho_core::getters! {
        /// The header of the question the answer was for (empty for batch-level
        /// errors).
        pub fn header(&self) -> &str;
        /// Why the answer was refused.
        pub fn kind(&self) -> &AnswerErrorKind;
    }
}

/// A touchpoint refused a decision: the answers do not fit, the action is
/// not offered, feedback is missing, or the plan changed since.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TouchpointError {
    /// The answers do not fit the questions.
    #[error(transparent)]
    Answer(#[from] AnswerError),
    /// The touchpoint's own questions are invalid.
    #[error(transparent)]
    Question(#[from] QuestionError),
    /// The chosen action is not offered at this point.
    #[error(
        "`{action}` is not available here; available: {}",
        orcho_core::spelling::quoted(available)
    )]
    NotAvailable {
        /// The action chosen.
        action: String,
        /// The actions that are offered.
        available: Vec<String>,
    },
    /// The action needs feedback text and none was given.
    #[error("`{action}` needs feedback text saying what to change")]
    FeedbackRequired {
        /// The action chosen.
        action: String,
    },
    /// The plan changed after the decision was taken: the decision approved
    /// (or judged) another plan.
    #[error("the decision is stale: it was taken on plan {decided}, but the plan is now {current}")]
    StalePlan {
        /// The digest of the plan the decision was taken on.
        decided: Digest,
        /// The digest of the current plan.
        current: Digest,
    },
}

impl TouchpointError {
    /// Whether the decision was taken on an older version of the plan.
    pub fn is_stale(&self) -> bool {
        matches!(self, Self::StalePlan { .. })
    }
}

/// A supervision touchpoint could not be opened, read or answered: the
/// shared failures of every decision point, or a [`TouchpointRefusal`].
pub type SupervisionStoreError = PointError<TouchpointRefusal>;

/// What a supervision touchpoint refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TouchpointRefusal {
    /// Another touchpoint already uses the id.
    #[error("the id is already used by a different {kind} touchpoint")]
    IdInUse {
        /// The kind of the touchpoint that has the id.
        kind: &'static str,
    },
    /// The answers do not fit the touchpoint; nothing was recorded.
    #[error(transparent)]
    Touchpoint(TouchpointError),
}

impl Refusal for TouchpointRefusal {}
