//! What can be decided at a run's delivery gate: the actions and the
//! validated choice. The gate itself — the diff, the target checkout, acting
//! on the decision — is `orcho-delivery`'s.

use serde::{Deserialize, Serialize};

use crate::{
    decision::DecisionPayload,
    point::{ActionSet, action_enum},
};

/// The decision point id of a run's delivery gate: its decision lives at
/// `runs/<run>/decisions/delivery.json`.
pub const DELIVERY_POINT: &str = "delivery";

action_enum! {
    /// What can be decided at a delivery gate.
    ///
    /// Spelled `approve`, `apply`, `fix`, `skip`, `halt`, in any ASCII case.
    ///
    /// ```
    /// use orcho_handoff::DeliveryAction;
    ///
    /// assert_eq!("fix".parse::<DeliveryAction>()?, DeliveryAction::Fix);
    /// assert!(DeliveryAction::Approve.changes_target());
    /// assert!(!DeliveryAction::Skip.changes_target());
    /// # Ok::<(), orcho_handoff::point::UnknownActionError>(())
    /// ```
    pub enum DeliveryAction in "delivery" {
        /// Commit the run's diff into the target checkout.
        Approve => "approve": "commit exactly the run's diff into your checkout",
        /// Apply the run's diff to the target checkout, uncommitted.
        Apply => "apply": "apply the run's diff to your checkout, uncommitted",
        /// After a rejected release: start a correction follow-up.
        Fix => "fix": "start a correction follow-up run from the findings",
        /// Close the gate; change nothing.
        Skip => "skip": "close the gate and change nothing",
        /// Stop; leave the retained worktree for manual inspection.
        Halt => "halt": "stop; keep the worktree for inspection",
    }
}

impl DeliveryAction {
    /// Whether the action writes to the target checkout.
    pub fn changes_target(self) -> bool {
        match self {
            Self::Approve | Self::Apply => true,
            Self::Fix | Self::Skip | Self::Halt => false,
        }
    }
}

/// The menu of a delivery gate.
pub type DeliveryActions = ActionSet<DeliveryAction>;

/// A delivery decision: the action, the commit message (`approve` only)
/// and a note. The payload of the gate's decision record
/// (`{"action": …, "message": …, "note": …}`).
///
/// ```
/// use orcho_handoff::{DeliveryAction, delivery::DeliveryChoice};
///
/// let choice = DeliveryChoice::approve_with_message("Parse empty input")?.with_note("looks good");
/// assert_eq!(choice.action(), DeliveryAction::Approve);
/// assert!(DeliveryChoice::from_parts(DeliveryAction::Skip, Some("msg".into()), None).is_err());
/// # Ok::<(), orcho_handoff::delivery::DeliveryChoiceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "DeliveryChoiceRepr", try_from = "DeliveryChoiceRepr")]
pub struct DeliveryChoice {
    pub(crate) action: DeliveryAction,
    pub(crate) message: Option<String>,
    note: Option<String>,
    patch: Option<orcho_core::Digest>,
}

impl DeliveryChoice {
    /// `approve`, with the release summary as the commit message.
    pub fn approve() -> Self {
        Self::bare(DeliveryAction::Approve)
    }

    /// `approve` with the operator's commit message.
    ///
    /// # Errors
    ///
    /// When the message is blank.
    pub fn approve_with_message(message: impl Into<String>) -> Result<Self, DeliveryChoiceError> {
        Self::from_parts(DeliveryAction::Approve, Some(message.into()), None)
    }

    /// `apply`.
    pub fn apply() -> Self {
        Self::bare(DeliveryAction::Apply)
    }

    /// `fix`.
    pub fn fix() -> Self {
        Self::bare(DeliveryAction::Fix)
    }

    /// `skip`.
    pub fn skip() -> Self {
        Self::bare(DeliveryAction::Skip)
    }

    /// `halt`.
    pub fn halt() -> Self {
        Self::bare(DeliveryAction::Halt)
    }

    fn bare(action: DeliveryAction) -> Self {
        Self {
            action,
            message: None,
            note: None,
            patch: None,
        }
    }

    /// A choice from its parts, validated.
    ///
    /// # Errors
    ///
    /// A message on another action than `approve`, or a blank message.
    pub fn from_parts(
        action: DeliveryAction,
        message: Option<String>,
        note: Option<String>,
    ) -> Result<Self, DeliveryChoiceError> {
        if let Some(message) = &message {
            if action != DeliveryAction::Approve {
                return Err(DeliveryChoiceError::MessageNotAllowed(action));
            }
            if message.trim().is_empty() {
                return Err(DeliveryChoiceError::BlankMessage);
            }
        }
        Ok(Self {
            action,
            message,
            note: note.filter(|n| !n.trim().is_empty()),
            patch: None,
        })
    }

    /// Adds a note (a blank note is dropped). For `fix`, the note goes to
    /// the follow-up.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = (!note.trim().is_empty()).then_some(note);
        self
    }

    /// The action.
    pub fn action(&self) -> DeliveryAction {
        self.action
    }

    /// The operator's commit message (`approve` only).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The note.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The digest of the patch the decision was taken on, once recorded.
    pub fn patch(&self) -> Option<orcho_core::Digest> {
        self.patch
    }
}

impl DeliveryChoice {
    orcho_core::setters! {
        /// Binds the decision to the patch it was taken on: the gate records
        /// it, and a gate holding another patch refuses to act on it. The
        /// delivery gate sets it when the decision is recorded.
        pub fn for_patch(digest: Some(orcho_core::Digest)) => patch;
    }
}

impl DecisionPayload for DeliveryChoice {
    const KIND: &'static str = "delivery";

    fn label(&self) -> String {
        self.action.as_str().to_owned()
    }
}

/// The payload of a delivery decision: `{"action": …, "message": …,
/// "note": …, "patch": …}`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveryChoiceRepr {
    action: DeliveryAction,
    message: Option<String>,
    note: Option<String>,
    patch: Option<orcho_core::Digest>,
}

impl From<DeliveryChoice> for DeliveryChoiceRepr {
    fn from(c: DeliveryChoice) -> Self {
        Self {
            action: c.action,
            message: c.message,
            note: c.note,
            patch: c.patch,
        }
    }
}

impl TryFrom<DeliveryChoiceRepr> for DeliveryChoice {
    type Error = DeliveryChoiceError;

    fn try_from(r: DeliveryChoiceRepr) -> Result<Self, Self::Error> {
        let mut choice = Self::from_parts(r.action, r.message, r.note)?;
        choice.patch = r.patch;
        Ok(choice)
    }
}

/// A delivery action and its message do not make a valid
/// [`DeliveryChoice`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryChoiceError {
    /// A commit message given to another action than `approve`.
    #[error("a commit message is only taken by `approve`, not `{0}`")]
    MessageNotAllowed(DeliveryAction),
    /// A blank commit message.
    #[error("the commit message is blank")]
    BlankMessage,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_round_trip_and_unknown_ones_are_refused() {
        for action in DeliveryAction::ALL.iter().copied() {
            assert_eq!(action.as_str().parse::<DeliveryAction>().unwrap(), action);
            assert_eq!(
                action
                    .as_str()
                    .to_uppercase()
                    .parse::<DeliveryAction>()
                    .unwrap(),
                action
            );
        }
        let err = "merge".parse::<DeliveryAction>().unwrap_err();
        insta::assert_snapshot!(err, @"unknown delivery action `merge`: expected one of approve, apply, fix, skip, halt");
        let set: DeliveryActions = [DeliveryAction::Halt, DeliveryAction::Fix]
            .into_iter()
            .collect();
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, r#"["fix","halt"]"#);
        assert_eq!(serde_json::from_str::<DeliveryActions>(&json).unwrap(), set);
    }

    #[test]
    fn choices_are_validated() {
        insta::assert_snapshot!(
            DeliveryChoice::from_parts(DeliveryAction::Apply, Some("m".into()), None).unwrap_err(),
            @"a commit message is only taken by `approve`, not `apply`"
        );
        insta::assert_snapshot!(
            DeliveryChoice::approve_with_message("  ").unwrap_err(),
            @"the commit message is blank"
        );
        let json = serde_json::to_string(&DeliveryChoice::fix().with_note("flaky")).unwrap();
        assert_eq!(json, r#"{"action":"fix","note":"flaky"}"#);
        assert!(
            serde_json::from_str::<DeliveryChoice>(r#"{"action":"skip","message":"x"}"#).is_err()
        );
    }
}
