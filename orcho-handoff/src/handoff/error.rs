//! Errors of phase handoffs: a decision that is not valid, a transition
//! the state machine refuses, and what the handoff store refuses.

use orcho_core::{HandoffId, IdError, RunId, Timestamp};

use super::{
    action::{AvailableActions, HandoffAction},
    state::HandoffState,
};
use crate::{
    advisor::{AdviceError, AdviceId},
    decision::DecidedBy,
    point::{PointError, Refusal},
};

/// An action and its text do not make a valid decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ChoiceError {
    action: HandoffAction,
    kind: ChoiceErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChoiceErrorKind {
    Missing,
    Blank,
    Unexpected,
}

impl ChoiceError {
    #[cold]
    pub(crate) fn missing_text(action: HandoffAction) -> Self {
        Self {
            action,
            kind: ChoiceErrorKind::Missing,
        }
    }

    #[cold]
    pub(crate) fn blank_text(action: HandoffAction) -> Self {
        Self {
            action,
            kind: ChoiceErrorKind::Blank,
        }
    }

    #[cold]
    pub(crate) fn unexpected_text(action: HandoffAction) -> Self {
        Self {
            action,
            kind: ChoiceErrorKind::Unexpected,
        }
    }

    fn render(&self) -> String {
        let action = self.action;
        match self.kind {
            ChoiceErrorKind::Missing => format!("`{action}` requires text, and none was given"),
            ChoiceErrorKind::Blank => {
                format!("`{action}` requires text, and the text given is blank")
            }
            ChoiceErrorKind::Unexpected => format!("`{action}` takes no text, and some was given"),
        }
    }

    /// The action.
    pub fn action(&self) -> HandoffAction {
        self.action
    }

    /// Whether the required text was missing.
    pub fn is_missing(&self) -> bool {
        self.kind == ChoiceErrorKind::Missing
    }

    /// Whether the required text was blank or whitespace.
    pub fn is_blank(&self) -> bool {
        self.kind == ChoiceErrorKind::Blank
    }

    /// Whether text was given to an action that takes none.
    pub fn is_unexpected(&self) -> bool {
        self.kind == ChoiceErrorKind::Unexpected
    }
}

/// An event is illegal in the handoff's current state. The state is handed
/// back unchanged ([`into_state`](Self::into_state)).
#[derive(Debug, thiserror::Error)]
#[error("cannot {event} handoff `{}` ({})", self.state.handoff().id(), self.state.name())]
pub struct TransitionError {
    state: Box<HandoffState>,
    event: &'static str,
    #[source]
    kind: TransitionErrorKind,
}

/// Why a transition was refused; see [`TransitionError::kind`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TransitionErrorKind {
    /// The decision names another handoff or run.
    #[error("the decision is for handoff `{handoff}` of run `{run}`")]
    WrongHandoff {
        /// The decision's run.
        run: RunId,
        /// The decision's handoff.
        handoff: HandoffId,
    },
    /// The action is not on the handoff's menu.
    #[error("`{action}` is not available; available: {available}")]
    NotAvailable {
        /// The refused action.
        action: HandoffAction,
        /// The handoff's menu.
        available: AvailableActions,
    },
    /// A different decision is already recorded.
    #[error(
        "a different decision is already recorded (`{recorded}` by {recorded_by} at {recorded_at}); refusing `{attempted}`"
    )]
    Conflict {
        /// The recorded action.
        recorded: HandoffAction,
        /// Who decided it.
        recorded_by: DecidedBy,
        /// When.
        recorded_at: Timestamp,
        /// The refused action.
        attempted: HandoffAction,
    },
    /// Resume before a decision is recorded.
    #[error("a decision is pending; decide one of {available} first")]
    Pending {
        /// The handoff's menu.
        available: AvailableActions,
    },
    /// Resume after `halt`.
    #[error("it was halted; the run is terminal and cannot be resumed")]
    Terminal,
    /// Resume a second time.
    #[error("it was already resumed")]
    AlreadyResumed,
}

impl TransitionError {
    #[cold]
    pub(crate) fn new(state: HandoffState, event: &'static str, kind: TransitionErrorKind) -> Self {
        Self {
            state: Box::new(state),
            event,
            kind,
        }
    }

    orcho_core::getters! {
        /// Why the transition was refused.
        pub fn kind(&self) -> &TransitionErrorKind;
        /// The state, unchanged.
        pub fn state(&self) -> &HandoffState;
    }

    /// The state, unchanged, to retry with another event.
    pub fn into_state(self) -> HandoffState {
        *self.state
    }

    /// The kind, dropping the state.
    pub fn into_kind(self) -> TransitionErrorKind {
        self.kind
    }
}

/// An operation of the [`HandoffStore`](crate::handoff::HandoffStore) or the
/// [`Autopilot`](crate::autopilot::Autopilot) failed: the shared failures of every
/// decision point, or a [`HandoffRefusal`].
pub type HandoffError = PointError<HandoffRefusal>;

/// What a phase handoff refuses; see [`HandoffError::refusal`](PointError::refusal).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandoffRefusal {
    /// The event is illegal in the handoff's state (pending, terminal,
    /// conflict, not available, …).
    #[error(transparent)]
    Transition(TransitionErrorKind),
    /// Advice given to the store is malformed.
    #[error(transparent)]
    Advice(AdviceError),
    /// A decision names advice that does not exist in the run.
    #[error("advice `{0}` does not exist in this run")]
    UnknownAdvice(AdviceId),
    /// A decision names advice about another handoff.
    #[error("advice `{advice}` is about handoff `{handoff}`")]
    AdviceForOtherHandoff {
        /// The advice.
        advice: AdviceId,
        /// The handoff it is about.
        handoff: HandoffId,
    },
    /// An id derived from the store's names is invalid.
    #[error(transparent)]
    Id(IdError),
}

impl Refusal for HandoffRefusal {
    fn is_conflict(&self) -> bool {
        matches!(self, Self::Transition(TransitionErrorKind::Conflict { .. }))
    }
}

impl PointError<HandoffRefusal> {
    fn transition(&self) -> Option<&TransitionErrorKind> {
        match self.refusal()? {
            HandoffRefusal::Transition(kind) => Some(kind),
            _ => None,
        }
    }

    /// Whether a resume was refused because no decision is recorded yet.
    pub fn is_pending(&self) -> bool {
        matches!(self.transition(), Some(TransitionErrorKind::Pending { .. }))
    }

    /// Whether a resume was refused because the handoff was halted.
    pub fn is_terminal(&self) -> bool {
        matches!(self.transition(), Some(TransitionErrorKind::Terminal))
    }

    /// Whether the handoff was already resumed.
    pub fn is_already_resumed(&self) -> bool {
        matches!(self.transition(), Some(TransitionErrorKind::AlreadyResumed))
    }

    /// Whether the action is not on the handoff's menu.
    pub fn is_not_available(&self) -> bool {
        matches!(
            self.transition(),
            Some(TransitionErrorKind::NotAvailable { .. })
        )
    }

    /// The handoff's menu, when the error is about a pending decision or an
    /// unavailable action.
    pub fn available_actions(&self) -> Option<AvailableActions> {
        match self.transition()? {
            TransitionErrorKind::Pending { available }
            | TransitionErrorKind::NotAvailable { available, .. } => Some(*available),
            _ => None,
        }
    }

    /// The handoff, when the error is about one.
    pub fn handoff(&self) -> Option<&HandoffId> {
        self.point()
    }

    /// The run.
    pub fn run(&self) -> &RunId {
        self.run_id()
    }
}
