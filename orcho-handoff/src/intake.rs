//! What can be decided about a checkout's uncommitted changes before a run
//! starts: the actions and the validated choice. Detecting the changes and
//! acting on the decision is `orcho-delivery`'s.

use serde::{Deserialize, Serialize};

use crate::{
    decision::DecisionPayload,
    point::{ActionSet, action_enum},
};

/// The decision point id of a run's intake question.
pub const INTAKE_POINT: &str = "intake";

action_enum! {
    /// What can be decided about uncommitted changes before a run.
    ///
    /// ```
    /// use orcho_handoff::IntakeAction;
    ///
    /// assert_eq!("include".parse::<IntakeAction>()?, IntakeAction::Include);
    /// assert_eq!(IntakeAction::Commit.to_string(), "commit");
    /// # Ok::<(), orcho_handoff::point::UnknownActionError>(())
    /// ```
    pub enum IntakeAction in "intake" {
        /// Carry the changes into the run's worktree as a seed patch.
        Include => "include": "carry your uncommitted changes into the run's worktree; delivery brings only the run's work on top of them",
        /// Start from `HEAD`; leave the changes in the checkout.
        Exclude => "exclude": "start from HEAD; your changes stay here, untouched",
        /// Commit the changes first; start from that commit.
        Commit => "commit": "commit your changes first, then start from that commit",
        /// Do not start the run.
        Halt => "halt": "do not start the run",
    }
}

/// The menu of an intake question.
pub type IntakeActions = ActionSet<IntakeAction>;

/// An intake decision: the action and, for `commit`, the commit message.
/// The payload of the intake decision record (`{"action": …, "message": …}`).
///
/// ```
/// use orcho_handoff::{IntakeAction, intake::IntakeChoice};
///
/// let choice = IntakeChoice::commit_with_message("wip: before the agent run")?;
/// assert_eq!(choice.action(), IntakeAction::Commit);
/// assert!(IntakeChoice::from_parts(IntakeAction::Include, Some("m".into())).is_err());
/// # Ok::<(), orcho_handoff::intake::IntakeChoiceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "IntakeChoiceRepr", try_from = "IntakeChoiceRepr")]
pub struct IntakeChoice {
    pub(crate) action: IntakeAction,
    pub(crate) message: Option<String>,
}

impl IntakeChoice {
    /// A choice without a message (`commit` then uses a default message).
    pub fn new(action: IntakeAction) -> Self {
        Self {
            action,
            message: None,
        }
    }

    /// `commit` with this message.
    ///
    /// # Errors
    ///
    /// When the message is blank.
    pub fn commit_with_message(message: impl Into<String>) -> Result<Self, IntakeChoiceError> {
        Self::from_parts(IntakeAction::Commit, Some(message.into()))
    }

    /// A choice from its parts, validated.
    ///
    /// # Errors
    ///
    /// A message on another action than `commit`, or a blank message.
    pub fn from_parts(
        action: IntakeAction,
        message: Option<String>,
    ) -> Result<Self, IntakeChoiceError> {
        if let Some(message) = &message {
            if action != IntakeAction::Commit {
                return Err(IntakeChoiceError::MessageNotAllowed(action));
            }
            if message.trim().is_empty() {
                return Err(IntakeChoiceError::BlankMessage);
            }
        }
        Ok(Self { action, message })
    }

    /// The action.
    pub fn action(&self) -> IntakeAction {
        self.action
    }

    /// The commit message (`commit` only).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl DecisionPayload for IntakeChoice {
    const KIND: &'static str = "intake";

    fn label(&self) -> String {
        self.action.as_str().to_owned()
    }
}

/// An intake action and its message do not make a valid
/// [`IntakeChoice`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeChoiceError {
    /// A commit message given to another action than `commit`.
    #[error("a commit message is only taken by `commit`, not `{0}`")]
    MessageNotAllowed(IntakeAction),
    /// A blank commit message.
    #[error("the commit message is blank")]
    BlankMessage,
}

/// The payload of an intake decision: `{"action": …, "message": …}`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IntakeChoiceRepr {
    action: IntakeAction,
    message: Option<String>,
}

impl From<IntakeChoice> for IntakeChoiceRepr {
    fn from(c: IntakeChoice) -> Self {
        Self {
            action: c.action,
            message: c.message,
        }
    }
}

impl TryFrom<IntakeChoiceRepr> for IntakeChoice {
    type Error = IntakeChoiceError;

    fn try_from(r: IntakeChoiceRepr) -> Result<Self, Self::Error> {
        Self::from_parts(r.action, r.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_and_choices_are_validated() {
        for action in IntakeAction::ALL.iter().copied() {
            assert_eq!(action.as_str().parse::<IntakeAction>().unwrap(), action);
        }
        insta::assert_snapshot!("stash".parse::<IntakeAction>().unwrap_err(), @"unknown intake action `stash`: expected one of include, exclude, commit, halt");
        insta::assert_snapshot!(IntakeChoice::from_parts(IntakeAction::Halt, Some("m".into())).unwrap_err(), @"a commit message is only taken by `commit`, not `halt`");
        insta::assert_snapshot!(IntakeChoice::commit_with_message(" ").unwrap_err(), @"the commit message is blank");
        assert!(
            serde_json::from_str::<IntakeChoice>(r#"{"action":"exclude","message":"x"}"#).is_err()
        );
    }
}
