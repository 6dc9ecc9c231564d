//! The question schema every human-in-the-loop touchpoint uses.
//!
//! Orcho owns the schema and its validation; the host only renders. A
//! [`Question`] is what a terminal, an IDE panel, a chat message or an MCP
//! client shows as one tab; a [`QuestionBatch`] is several tabs answered
//! together; an [`Answer`] is checked against its question before anything
//! acts on it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::error::{AnswerError, AnswerErrorKind, QuestionError, QuestionErrorKind};

/// The longest header (tab label), in characters.
pub const MAX_HEADER_CHARS: usize = 30;

/// One selectable option of a [`Question`].
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct QuestionOption {
    /// What is shown and what an answer selects.
    pub label: String,
    /// A longer explanation shown beside the label.
    pub description: Option<String>,
}

impl QuestionOption {
    /// An option with a label only.
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            description: None,
        }
    }
}

impl QuestionOption {
    orcho_core::setters! {
        /// Sets the description.
        pub fn with_description(description: Some(impl Into<String>));
    }
}

/// A question for a person: a header (tab label), the question text, options,
/// and whether several options or free-form text may be given.
///
/// A `Question` is always valid: [`Question::new`], the `with_*` methods that
/// can break a rule, and `Deserialize` all validate. The rules:
///
/// - the header is not blank and has at most [`MAX_HEADER_CHARS`] characters;
/// - the question text is not blank;
/// - option labels are not blank and are unique (ignoring case and
///   surrounding whitespace);
/// - a question without options allows free-form text (`custom`), or it
///   could never be answered.
///
/// `multiple` defaults to false and `custom` to true, as in the schema hosts
/// already render:
///
/// ```
/// use orcho_handoff::supervision::{Answer, Question, QuestionOption};
///
/// let q: Question = serde_json::from_str(r#"{
///     "header": "Auth Type",
///     "question": "What authentication approach do you want?",
///     "options": [
///         {"label": "OAuth", "description": "Third-party providers"},
///         {"label": "Session"},
///         {"label": "JWT"}
///     ]
/// }"#)?;
/// assert!(!q.multiple() && q.custom());
/// q.check(&Answer::select("JWT"))?;
/// q.check(&Answer::text("Passkeys, please"))?;
/// assert!(q.check(&Answer::select("Kerberos")).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "QuestionRepr", into = "QuestionRepr")]
pub struct Question {
    header: String,
    question: String,
    options: Vec<QuestionOption>,
    multiple: bool,
    custom: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionRepr {
    header: String,
    question: String,
    #[serde(default)]
    options: Vec<QuestionOption>,
    #[serde(default)]
    multiple: bool,
    #[serde(default = "yes")]
    custom: bool,
}

fn yes() -> bool {
    true
}

impl TryFrom<QuestionRepr> for Question {
    type Error = QuestionError;

    fn try_from(r: QuestionRepr) -> Result<Self, Self::Error> {
        let q = Self {
            header: r.header,
            question: r.question,
            options: r.options,
            multiple: r.multiple,
            custom: r.custom,
        };
        q.validate()?;
        Ok(q)
    }
}

impl From<Question> for QuestionRepr {
    fn from(q: Question) -> Self {
        Self {
            header: q.header,
            question: q.question,
            options: q.options,
            multiple: q.multiple,
            custom: q.custom,
        }
    }
}

impl Question {
    /// A single-choice question that also accepts free-form text.
    ///
    /// # Errors
    ///
    /// A [`QuestionError`] naming the rule that is broken (see the type docs).
    pub fn new(
        header: impl Into<String>,
        question: impl Into<String>,
        options: impl IntoIterator<Item = QuestionOption>,
    ) -> Result<Self, QuestionError> {
        let q = Self {
            header: header.into(),
            question: question.into(),
            options: options.into_iter().collect(),
            multiple: false,
            custom: true,
        };
        q.validate()?;
        Ok(q)
    }

    /// Allows (or forbids) free-form text.
    ///
    /// # Errors
    ///
    /// [`QuestionErrorKind::Unanswerable`] when free-form text is forbidden on
    /// a question without options.
    pub fn with_custom(mut self, custom: bool) -> Result<Self, QuestionError> {
        self.custom = custom;
        self.validate()?;
        Ok(self)
    }

    fn validate(&self) -> Result<(), QuestionError> {
        let fail = |kind| Err(QuestionError::new(&self.header, kind));
        let header = self.header.trim();
        if header.is_empty() {
            return fail(QuestionErrorKind::EmptyHeader);
        }
        let chars = header.chars().count();
        if chars > MAX_HEADER_CHARS {
            return fail(QuestionErrorKind::HeaderTooLong {
                chars,
                max: MAX_HEADER_CHARS,
            });
        }
        if self.question.trim().is_empty() {
            return fail(QuestionErrorKind::EmptyQuestion);
        }
        let mut seen = HashSet::new();
        for (index, option) in self.options.iter().enumerate() {
            let label = option.label.trim();
            if label.is_empty() {
                return fail(QuestionErrorKind::EmptyLabel { index });
            }
            if !seen.insert(label.to_lowercase()) {
                return fail(QuestionErrorKind::DuplicateLabel {
                    label: label.to_owned(),
                });
            }
        }
        if self.options.is_empty() && !self.custom {
            return fail(QuestionErrorKind::Unanswerable);
        }
        Ok(())
    }

    orcho_core::getters! {
        /// The tab label.
        pub fn header(&self) -> &str;
        /// The full question text.
        pub fn question(&self) -> &str;
        /// The options, in display order.
        pub fn options(&self) -> &[QuestionOption];
        /// Whether several options may be selected.
        pub fn multiple(&self) -> bool;
        /// Whether free-form text is accepted.
        pub fn custom(&self) -> bool;
    }

    /// The option whose label matches `label` (ignoring case and surrounding
    /// whitespace).
    pub fn option(&self, label: &str) -> Option<&QuestionOption> {
        let label = label.trim().to_lowercase();
        self.options
            .iter()
            .find(|o| o.label.trim().to_lowercase() == label)
    }

    /// Checks an answer against this question.
    ///
    /// An answer must select at least one option or give free-form text,
    /// except on a question without options, where no text means "no
    /// answer" (the optional context question of the two-question pattern).
    ///
    /// # Errors
    ///
    /// An [`AnswerError`]: a label that is not an option, several selections
    /// on a single-choice question, the same option twice, free-form text
    /// where none is accepted, or an empty answer.
    pub fn check(&self, answer: &Answer) -> Result<(), AnswerError> {
        let fail = |kind| Err(AnswerError::new(&self.header, kind));
        let mut seen = HashSet::new();
        for label in &answer.selected {
            let Some(option) = self.option(label) else {
                return fail(AnswerErrorKind::UnknownOption {
                    label: label.clone(),
                    options: self.options.iter().map(|o| o.label.clone()).collect(),
                });
            };
            if !seen.insert(option.label.as_str()) {
                return fail(AnswerErrorKind::DuplicateSelection {
                    label: option.label.clone(),
                });
            }
        }
        if !self.multiple && answer.selected.len() > 1 {
            return fail(AnswerErrorKind::SeveralSelections {
                count: answer.selected.len(),
            });
        }
        if answer.custom_text().is_some() && !self.custom {
            return fail(AnswerErrorKind::CustomNotAllowed);
        }
        if answer.selected.is_empty() && answer.custom_text().is_none() && !self.options.is_empty()
        {
            return fail(if self.custom {
                AnswerErrorKind::Empty
            } else {
                AnswerErrorKind::NothingSelected
            });
        }
        Ok(())
    }
}

impl Question {
    orcho_core::setters! {
        /// Allows (or forbids) selecting several options.
        pub fn with_multiple(multiple: bool);
    }
}

/// A person's answer to one [`Question`]: selected option labels and/or
/// free-form text. Check it with [`Question::check`] before acting on it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Answer {
    /// The labels of the selected options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected: Vec<String>,
    /// Free-form text, when the question accepts it.
    pub custom: Option<String>,
}

impl Answer {
    /// Selects one option.
    pub fn select(label: impl Into<String>) -> Self {
        Self {
            selected: vec![label.into()],
            custom: None,
        }
    }

    /// Selects several options.
    pub fn select_all<I: IntoIterator<Item = S>, S: Into<String>>(labels: I) -> Self {
        Self {
            selected: labels.into_iter().map(Into::into).collect(),
            custom: None,
        }
    }

    /// Free-form text only.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            selected: Vec::new(),
            custom: Some(text.into()),
        }
    }

    /// No selection and no text: the answer to an optional free-text question
    /// left empty.
    pub fn none() -> Self {
        Self::default()
    }

    /// The free-form text, trimmed; `None` when absent or blank.
    pub fn custom_text(&self) -> Option<&str> {
        self.custom
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }
}

impl Answer {
    orcho_core::setters! {
        /// Adds free-form text to a selection.
        pub fn with_text(text: Some(impl Into<String>)) => custom;
    }
}

/// Several questions a person answers together (one tab each).
///
/// A batch is never empty and its headers are unique, so a host can key its
/// tabs by header.
///
/// ```
/// use orcho_handoff::supervision::{Answer, Question, QuestionBatch, QuestionOption};
///
/// let batch = QuestionBatch::new([
///     Question::new("Database", "Which database?", [QuestionOption::new("Postgres"), QuestionOption::new("SQLite")])?,
///     Question::new("Priority", "What matters most?", [])?,
/// ])?;
/// batch.check(&[Answer::select("SQLite"), Answer::text("latency")])?;
/// assert!(batch.check(&[Answer::select("SQLite")]).is_err(), "one answer per question");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BatchRepr", into = "BatchRepr")]
pub struct QuestionBatch {
    questions: Vec<Question>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchRepr {
    questions: Vec<Question>,
}

impl TryFrom<BatchRepr> for QuestionBatch {
    type Error = QuestionError;

    fn try_from(r: BatchRepr) -> Result<Self, Self::Error> {
        Self::new(r.questions)
    }
}

impl From<QuestionBatch> for BatchRepr {
    fn from(b: QuestionBatch) -> Self {
        Self {
            questions: b.questions,
        }
    }
}

impl QuestionBatch {
    /// A batch of valid questions.
    ///
    /// # Errors
    ///
    /// [`QuestionErrorKind::EmptyBatch`] or [`QuestionErrorKind::DuplicateHeader`].
    pub fn new(questions: impl IntoIterator<Item = Question>) -> Result<Self, QuestionError> {
        let questions: Vec<Question> = questions.into_iter().collect();
        if questions.is_empty() {
            return Err(QuestionError::new("", QuestionErrorKind::EmptyBatch));
        }
        let mut seen = HashSet::new();
        for q in &questions {
            if !seen.insert(q.header.trim().to_lowercase()) {
                return Err(QuestionError::new(
                    &q.header,
                    QuestionErrorKind::DuplicateHeader,
                ));
            }
        }
        Ok(Self { questions })
    }

    /// The questions, in tab order.
    pub fn questions(&self) -> &[Question] {
        &self.questions
    }

    /// Checks one answer per question, in order.
    ///
    /// # Errors
    ///
    /// [`AnswerErrorKind::WrongCount`] when the number of answers differs from
    /// the number of questions, or the first answer a question refuses.
    pub fn check(&self, answers: &[Answer]) -> Result<(), AnswerError> {
        if answers.len() != self.questions.len() {
            return Err(AnswerError::new(
                "",
                AnswerErrorKind::WrongCount {
                    expected: self.questions.len(),
                    got: answers.len(),
                },
            ));
        }
        self.questions
            .iter()
            .zip(answers)
            .try_for_each(|(q, a)| q.check(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(labels: &[&str]) -> Vec<QuestionOption> {
        labels.iter().map(|l| QuestionOption::new(*l)).collect()
    }

    fn q_err(json: &str) -> String {
        match serde_json::from_str::<Question>(json) {
            Ok(q) => panic!("accepted {q:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn schema_validation_messages() {
        insta::assert_snapshot!(q_err(r#"{"header": " ", "question": "q?"}"#), @"invalid question ` `: the header is empty");
        insta::assert_snapshot!(q_err(r#"{"header": "A header that is far too long for a tab", "question": "q?"}"#), @"invalid question `A header that is far too long for a tab`: the header has 39 characters, more than 30 (it is a tab label)");
        insta::assert_snapshot!(q_err(r#"{"header": "H", "question": ""}"#), @"invalid question `H`: the question text is empty");
        insta::assert_snapshot!(q_err(r#"{"header": "H", "question": "q?", "options": [{"label": "Yes"}, {"label": " yes "}]}"#), @"invalid question `H`: the option label `yes` appears twice");
        insta::assert_snapshot!(q_err(r#"{"header": "H", "question": "q?", "options": [{"label": ""}]}"#), @"invalid question `H`: option 1 has an empty label");
        insta::assert_snapshot!(q_err(r#"{"header": "H", "question": "q?", "custom": false}"#), @"invalid question `H`: it has no options and does not accept free-form text, so it cannot be answered");
        insta::assert_snapshot!(q_err(r#"{"header": "H", "question": "q?", "colour": "red"}"#), @"unknown field `colour`, expected one of `header`, `question`, `options`, `multiple`, `custom` at line 1 column 42");
        let batch_err = QuestionBatch::new([]).unwrap_err();
        insta::assert_snapshot!(batch_err, @"invalid question batch: it has no questions");
        let q = Question::new("Same", "q?", []).unwrap();
        insta::assert_snapshot!(QuestionBatch::new([q.clone(), q]).unwrap_err(), @"invalid question `Same`: another question of the batch has the same header");
    }

    #[test]
    fn header_length_counts_characters_not_bytes() {
        let thirty = "é".repeat(30);
        assert!(Question::new(thirty, "q?", []).is_ok());
        assert!(Question::new("é".repeat(31), "q?", []).is_err());
    }

    #[test]
    fn answer_validation_messages() {
        let single = Question::new("Auth", "Which?", opts(&["OAuth", "JWT"])).unwrap();
        let strict = single.clone().with_custom(false).unwrap();
        let multi = single.clone().with_multiple(true);
        let err = |q: &Question, a: Answer| q.check(&a).unwrap_err().to_string();
        insta::assert_snapshot!(err(&single, Answer::select("Kerberos")), @"invalid answer to `Auth`: `Kerberos` is not one of its options (`OAuth`, `JWT`)");
        insta::assert_snapshot!(err(&single, Answer::select_all(["OAuth", "JWT"])), @"invalid answer to `Auth`: 2 options selected on a single-choice question");
        insta::assert_snapshot!(err(&strict, Answer::text("my own")), @"invalid answer to `Auth`: it gives free-form text, which this question does not accept");
        insta::assert_snapshot!(err(&strict, Answer::none()), @"invalid answer to `Auth`: no option is selected");
        insta::assert_snapshot!(err(&single, Answer::text("   ")), @"invalid answer to `Auth`: it selects nothing and gives no text");
        insta::assert_snapshot!(err(&multi, Answer::select_all(["JWT", "jwt"])), @"invalid answer to `Auth`: `JWT` is selected twice");

        multi.check(&Answer::select_all(["OAuth", "JWT"])).unwrap();
        single.check(&Answer::select(" oauth ")).unwrap();
        single
            .check(&Answer::select("JWT").with_text("with refresh tokens"))
            .unwrap();
        Question::new("Context", "Anything to add?", [])
            .unwrap()
            .check(&Answer::none())
            .unwrap();
    }

    #[test]
    fn json_shape_and_defaults() {
        let q = Question::new(
            "Auth Type",
            "What authentication approach do you want?",
            [
                QuestionOption::new("OAuth")
                    .with_description("Third-party providers (Google, GitHub)"),
                QuestionOption::new("JWT"),
            ],
        )
        .unwrap();
        insta::assert_json_snapshot!(q, @r#"
        {
          "header": "Auth Type",
          "question": "What authentication approach do you want?",
          "options": [
            {
              "label": "OAuth",
              "description": "Third-party providers (Google, GitHub)"
            },
            {
              "label": "JWT"
            }
          ],
          "multiple": false,
          "custom": true
        }
        "#);
        let back: Question = serde_json::from_value(serde_json::to_value(&q).unwrap()).unwrap();
        assert_eq!(back, q);
    }
}
