//! Supervision: the human-in-the-loop touchpoints a host renders in its own
//! UI (terminal, IDE, chat, MCP client).
//!
//! Orcho owns the schema, the validation, the state and the deterministic
//! mapping from answers to actions; the host only renders and relays
//! answers.
//!
//! - [`Question`], [`QuestionBatch`], [`Answer`]: the one question schema,
//!   validated on construction and on read.
//! - [`TwoQuestions`]: the two-question pattern (a typed Action plus optional
//!   free-form Context) every plugin-controlled touchpoint uses.
//! - [`PlannerQuestions`]: a planner's clarifying questions and the answers
//!   that go back to it.
//! - [`PlanApproval`]: approve, request changes or reject a [`Plan`]; a
//!   [`PlanDecision`] is bound to the plan's digest and refused once the plan
//!   changes.
//! - [`DeviationPrompt`]: retry, replan or stop after a failed step, with the
//!   retry cap and the plan's budgets deciding what is offered.
//! - [`SupervisionStore`]: touchpoints persisted when they open, so a pending
//!   question batch, plan approval or deviation survives a restart; answers
//!   are validated, then recorded exactly once through the shared
//!   [`decision`](crate::decision) slot.

mod deviation;
mod error;
mod pattern;
mod plan;
mod planner;
mod question;
mod store;

pub use deviation::{
    DEFAULT_RETRY_CAP, Deviation, DeviationAction, DeviationOutcome, DeviationPolicy,
    DeviationPrompt, DeviationSpent,
};
pub use error::{
    AnswerError, AnswerErrorKind, QuestionError, QuestionErrorKind, SupervisionStoreError,
    TouchpointError, TouchpointRefusal,
};
pub use pattern::{CONTEXT_HEADER, CONTEXT_QUESTION, Choice, TouchpointAction, TwoQuestions};
pub use plan::{Plan, PlanAction, PlanApproval, PlanDecision, PlanOutcome, PlanStep};
pub use planner::{PlannerAnswers, PlannerQuestions};
pub use question::{Answer, MAX_HEADER_CHARS, Question, QuestionBatch, QuestionOption};
pub use store::{
    OpenTouchpoint, Resolution, SupervisionStore, Touchpoint, TouchpointAnswers, Touchpoints,
};
