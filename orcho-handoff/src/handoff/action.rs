//! The actions a phase handoff offers, the menu computed from a verdict,
//! and the validated decision.

use orcho_core::Verdict;
use serde::{Deserialize, Serialize};

use super::error::ChoiceError;
use crate::{
    decision::DecisionPayload,
    format::handoff::ChoiceRepr,
    point::{ActionSet, action_enum},
};

action_enum! {
    /// What an operator (or the CI autopilot) can decide at a phase handoff.
    ///
    /// Spelled `continue`, `retry_feedback`, `continue_with_waiver` and `halt`
    /// on disk and in [`Display`](std::fmt::Display); [`FromStr`](std::str::FromStr)
    /// takes any ASCII case.
    ///
    /// ```
    /// use orcho_handoff::HandoffAction;
    ///
    /// let action: HandoffAction = "retry_feedback".parse()?;
    /// assert_eq!(action, HandoffAction::RetryFeedback);
    /// assert!(action.requires_text());
    /// assert_eq!(HandoffAction::ContinueWithWaiver.to_string(), "continue_with_waiver");
    /// assert_eq!("HALT".parse::<HandoffAction>()?, HandoffAction::Halt);
    /// # Ok::<(), orcho_handoff::point::UnknownActionError>(())
    /// ```
    pub enum HandoffAction in "handoff" {
        /// Proceed despite the verdict. Recorded as an override.
        Continue => "continue": "go on to the next phase despite the verdict (recorded as an override)",
        /// Run one more attempt with this feedback. Text required.
        RetryFeedback => "retry_feedback": "run the phase again with your feedback",
        /// Accept the findings as a known risk, with a durable waiver. Text
        /// required.
        ContinueWithWaiver => "continue_with_waiver": "go on, accepting the findings as a known risk (a durable waiver)",
        /// Stop the run here. Terminal.
        Halt => "halt": "stop the run here",
    }
}

impl HandoffAction {
    /// Whether deciding this action needs non-blank text (feedback or the
    /// waiver's justification).
    pub fn requires_text(self) -> bool {
        match self {
            Self::RetryFeedback | Self::ContinueWithWaiver => true,
            Self::Continue | Self::Halt => false,
        }
    }
}

/// The menu of a phase handoff: the [`ActionSet`] of [`HandoffAction`]s it
/// offers, computed once when it opens ([`AvailableActions::compute`]) and
/// persisted with it.
///
/// ```
/// use orcho_core::Verdict;
/// use orcho_handoff::{HandoffAction, handoff::{AvailableActions, HandoffPolicy}};
///
/// let menu = AvailableActions::compute(Verdict::Incomplete, HandoffPolicy::default());
/// assert!(!menu.contains(HandoffAction::Continue), "no bare continue on incomplete work");
/// assert_eq!(menu.to_string(), "retry_feedback, continue_with_waiver, halt");
/// ```
pub type AvailableActions = ActionSet<HandoffAction>;

impl ActionSet<HandoffAction> {
    /// The menu for a handoff with this verdict under this policy:
    ///
    /// - a rejected verdict offers all four actions;
    /// - an incomplete verdict offers no bare `continue`;
    /// - an approved verdict under an always-pause policy offers no waiver
    ///   (there is nothing to waive);
    /// - a phase with no way to retry offers no `retry_feedback`.
    ///
    /// `halt` is always offered.
    pub fn compute(verdict: Verdict, policy: HandoffPolicy) -> Self {
        let mut menu = Self::all();
        match verdict {
            Verdict::Rejected => {}
            Verdict::Incomplete => menu.remove(HandoffAction::Continue),
            Verdict::Approved => {
                if policy.always_pause {
                    menu.remove(HandoffAction::ContinueWithWaiver);
                }
            }
        }
        if !policy.retry_available {
            menu.remove(HandoffAction::RetryFeedback);
        }
        menu
    }

    /// The actions of this menu that `allowed` also lists, plus `halt`,
    /// which is always offered.
    ///
    /// ```
    /// use orcho_core::Verdict;
    /// use orcho_handoff::{HandoffAction, handoff::{AvailableActions, HandoffPolicy}};
    ///
    /// let profile: AvailableActions = [HandoffAction::RetryFeedback, HandoffAction::ContinueWithWaiver].into_iter().collect();
    /// let menu = AvailableActions::compute(Verdict::Rejected, HandoffPolicy::default()).restricted_to(profile);
    /// assert_eq!(menu.iter().collect::<Vec<_>>(), [HandoffAction::RetryFeedback, HandoffAction::ContinueWithWaiver, HandoffAction::Halt]);
    /// ```
    #[must_use]
    pub fn restricted_to(self, allowed: Self) -> Self {
        let mut menu = self.intersection(allowed);
        menu.insert(HandoffAction::Halt);
        menu
    }
}

/// What the phase's policy says about a handoff, as input to
/// [`AvailableActions::compute`].
///
/// ```
/// use orcho_handoff::handoff::HandoffPolicy;
///
/// let policy = HandoffPolicy::default().with_retry_available(false).with_always_pause(true);
/// assert!(!policy.retry_available());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HandoffPolicy {
    retry_available: bool,
    always_pause: bool,
}

impl Default for HandoffPolicy {
    /// Retry available, pause only on a rejected or incomplete verdict.
    fn default() -> Self {
        Self {
            retry_available: true,
            always_pause: false,
        }
    }
}

impl HandoffPolicy {
    /// Whether the phase can run another attempt.
    pub fn retry_available(self) -> bool {
        self.retry_available
    }

    /// Whether the phase pauses after every attempt.
    pub fn always_pause(self) -> bool {
        self.always_pause
    }
}

impl HandoffPolicy {
    orcho_core::setters! {
        /// Sets whether the phase can run another attempt (a phase with no
        /// worker to re-run, or a profile that forbids retries, cannot).
        pub fn with_retry_available(yes: bool) => retry_available;
        /// Sets whether the phase pauses after every attempt, even an approved
        /// one.
        pub fn with_always_pause(yes: bool) => always_pause;
    }
}

/// A validated handoff decision: the action and, for the two actions that
/// need it, its non-blank text.
///
/// Blank or whitespace-only text is refused, so a `RetryFeedback` without
/// feedback cannot exist. Text is kept as given (not trimmed), so a
/// decision's digest covers exactly what the operator wrote.
///
/// ```
/// use orcho_handoff::{HandoffAction, handoff::HandoffChoice};
///
/// let retry = HandoffChoice::new(HandoffAction::RetryFeedback, Some("handle the empty input case"))?;
/// assert_eq!(retry.text(), Some("handle the empty input case"));
/// assert!(HandoffChoice::new(HandoffAction::RetryFeedback, Some("  \n")).is_err());
/// assert_eq!(HandoffChoice::new(HandoffAction::Halt, None)?, HandoffChoice::Halt);
/// # Ok::<(), orcho_handoff::handoff::ChoiceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "ChoiceRepr", try_from = "ChoiceRepr")]
pub enum HandoffChoice {
    /// Proceed despite the verdict.
    Continue,
    /// Run one more attempt with this feedback.
    RetryFeedback {
        /// The correction for the next attempt; never blank.
        feedback: String,
    },
    /// Accept the findings as a known risk.
    ContinueWithWaiver {
        /// Why the risk is accepted; never blank.
        reason: String,
    },
    /// Stop the run.
    Halt,
}

impl HandoffChoice {
    /// Validates an action and its optional text.
    ///
    /// `continue` and `halt` carry no text; passing some is refused so that
    /// a note is never silently dropped (a note for the record goes with
    /// the request: [`DecisionRequest::with_note`](crate::decision::DecisionRequest::with_note)).
    ///
    /// # Errors
    ///
    /// A [`ChoiceError`] when `retry_feedback` or `continue_with_waiver`
    /// has no text or only whitespace, or when `continue` or `halt` is given
    /// text.
    pub fn new(action: HandoffAction, text: Option<&str>) -> Result<Self, ChoiceError> {
        let text = text.map(str::to_owned);
        Self::from_parts(action, text)
    }

    pub(crate) fn from_parts(
        action: HandoffAction,
        text: Option<String>,
    ) -> Result<Self, ChoiceError> {
        match (action, text) {
            (HandoffAction::Continue, None) => Ok(Self::Continue),
            (HandoffAction::Halt, None) => Ok(Self::Halt),
            (HandoffAction::Continue | HandoffAction::Halt, Some(_)) => {
                Err(ChoiceError::unexpected_text(action))
            }
            (HandoffAction::RetryFeedback | HandoffAction::ContinueWithWaiver, None) => {
                Err(ChoiceError::missing_text(action))
            }
            (HandoffAction::RetryFeedback | HandoffAction::ContinueWithWaiver, Some(t))
                if t.trim().is_empty() =>
            {
                Err(ChoiceError::blank_text(action))
            }
            (HandoffAction::RetryFeedback, Some(feedback)) => Ok(Self::RetryFeedback { feedback }),
            (HandoffAction::ContinueWithWaiver, Some(reason)) => {
                Ok(Self::ContinueWithWaiver { reason })
            }
        }
    }

    /// `retry_feedback` with this feedback.
    ///
    /// # Errors
    ///
    /// When the feedback is blank.
    pub fn retry(feedback: impl Into<String>) -> Result<Self, ChoiceError> {
        Self::from_parts(HandoffAction::RetryFeedback, Some(feedback.into()))
    }

    /// `continue_with_waiver` with this reason.
    ///
    /// # Errors
    ///
    /// When the reason is blank.
    pub fn waive(reason: impl Into<String>) -> Result<Self, ChoiceError> {
        Self::from_parts(HandoffAction::ContinueWithWaiver, Some(reason.into()))
    }

    /// The action.
    pub fn action(&self) -> HandoffAction {
        match self {
            Self::Continue => HandoffAction::Continue,
            Self::RetryFeedback { .. } => HandoffAction::RetryFeedback,
            Self::ContinueWithWaiver { .. } => HandoffAction::ContinueWithWaiver,
            Self::Halt => HandoffAction::Halt,
        }
    }

    /// The feedback or waiver reason, for the actions that carry text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::RetryFeedback { feedback: t } | Self::ContinueWithWaiver { reason: t } => Some(t),
            Self::Continue | Self::Halt => None,
        }
    }
}

impl DecisionPayload for HandoffChoice {
    const KIND: &'static str = "phase_handoff";

    fn label(&self) -> String {
        self.action().as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_core::error_chain;
    use proptest::prelude::*;

    #[test]
    fn spellings_round_trip() {
        for action in HandoffAction::ALL.iter().copied() {
            assert_eq!(action.as_str().parse::<HandoffAction>().unwrap(), action);
            assert_eq!(
                action
                    .as_str()
                    .to_ascii_uppercase()
                    .parse::<HandoffAction>()
                    .unwrap(),
                action
            );
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{action}\""));
        }
        assert!("retry-feedback".parse::<HandoffAction>().is_err());
        insta::assert_snapshot!(
            error_chain(&"retry".parse::<HandoffAction>().unwrap_err()),
            @"unknown handoff action `retry`: expected one of continue, retry_feedback, continue_with_waiver, halt"
        );
    }

    fn menu(verdict: Verdict, retry: bool, always: bool) -> String {
        AvailableActions::compute(
            verdict,
            HandoffPolicy::default()
                .with_retry_available(retry)
                .with_always_pause(always),
        )
        .to_string()
    }

    #[test]
    fn the_menu_is_computed_from_verdict_and_policy() {
        insta::assert_snapshot!(menu(Verdict::Rejected, true, false), @"continue, retry_feedback, continue_with_waiver, halt");
        insta::assert_snapshot!(menu(Verdict::Rejected, true, true), @"continue, retry_feedback, continue_with_waiver, halt");
        insta::assert_snapshot!(menu(Verdict::Rejected, false, false), @"continue, continue_with_waiver, halt");
        insta::assert_snapshot!(menu(Verdict::Incomplete, true, false), @"retry_feedback, continue_with_waiver, halt");
        insta::assert_snapshot!(menu(Verdict::Incomplete, false, true), @"continue_with_waiver, halt");
        insta::assert_snapshot!(menu(Verdict::Approved, true, true), @"continue, retry_feedback, halt");
        insta::assert_snapshot!(menu(Verdict::Approved, false, true), @"continue, halt");
        insta::assert_snapshot!(menu(Verdict::Approved, true, false), @"continue, retry_feedback, continue_with_waiver, halt");
    }

    #[test]
    fn menus_round_trip_as_json_lists() {
        let menu = AvailableActions::compute(Verdict::Incomplete, HandoffPolicy::default());
        let json = serde_json::to_string(&menu).unwrap();
        assert_eq!(json, r#"["retry_feedback","continue_with_waiver","halt"]"#);
        assert_eq!(
            serde_json::from_str::<AvailableActions>(&json).unwrap(),
            menu
        );
        assert!(serde_json::from_str::<AvailableActions>(r#"["retry"]"#).is_err());
        assert_eq!(AvailableActions::empty().to_string(), "none");
    }

    #[test]
    fn choices_refuse_missing_blank_and_unexpected_text() {
        let err = |action, text: Option<&str>| {
            error_chain(&HandoffChoice::new(action, text).unwrap_err())
        };
        insta::assert_snapshot!(err(HandoffAction::RetryFeedback, None), @"`retry_feedback` requires text, and none was given");
        insta::assert_snapshot!(err(HandoffAction::ContinueWithWaiver, Some(" \t\n")), @"`continue_with_waiver` requires text, and the text given is blank");
        insta::assert_snapshot!(err(HandoffAction::Halt, Some("why")), @"`halt` takes no text, and some was given");
        assert!(
            HandoffChoice::new(HandoffAction::RetryFeedback, Some(""))
                .unwrap_err()
                .is_blank()
        );
        assert!(
            HandoffChoice::new(HandoffAction::RetryFeedback, None)
                .unwrap_err()
                .is_missing()
        );
    }

    proptest! {
        #[test]
        fn text_is_required_exactly_when_the_action_says_so(
            action in prop::sample::select(HandoffAction::ALL.to_vec()),
            text in prop::option::of("[ \t\na-z]{0,6}"),
        ) {
            let result = HandoffChoice::new(action, text.as_deref());
            let ok = match (&text, action.requires_text()) {
                (None, needs) => !needs,
                (Some(_), false) => false,
                (Some(t), true) => !t.trim().is_empty(),
            };
            prop_assert_eq!(result.is_ok(), ok);
            if let Ok(choice) = result {
                prop_assert_eq!(choice.action(), action);
                prop_assert_eq!(choice.text(), text.as_deref());
            }
        }

        #[test]
        fn menus_always_offer_halt(
            verdict in prop::sample::select(vec![Verdict::Approved, Verdict::Rejected, Verdict::Incomplete]),
            retry: bool, always: bool,
        ) {
            let menu = AvailableActions::compute(verdict, HandoffPolicy::default().with_retry_available(retry).with_always_pause(always));
            prop_assert!(menu.contains(HandoffAction::Halt));
            prop_assert_eq!(menu.contains(HandoffAction::RetryFeedback), retry);
            prop_assert_eq!(menu.iter().count(), menu.len());
        }
    }
}
