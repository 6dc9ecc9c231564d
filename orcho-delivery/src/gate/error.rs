//! What a delivery gate refuses, beside the failures every decision point
//! shares.

use camino::Utf8PathBuf;
use orcho_core::Digest;
use orcho_handoff::{
    DeliveryAction,
    delivery::DeliveryActions,
    point::{PointError, Refusal},
};

use super::{DeliveryBlock, TargetStatus};
use crate::{followup::FollowUpError, git::GitError};

/// An operation of [`DeliveryGates`](crate::DeliveryGates) failed: the shared
/// failures of every decision point, or a [`DeliveryRefusal`].
pub type DeliveryError = PointError<DeliveryRefusal>;

/// What a delivery gate refuses; see
/// [`DeliveryError::refusal`](PointError::refusal).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryRefusal {
    /// The action is not on the gate's menu.
    #[error("{}", not_available(*action, *available, reason.as_ref()))]
    NotAvailable {
        /// The refused action.
        action: DeliveryAction,
        /// The gate's menu.
        available: DeliveryActions,
        /// Why the action is blocked.
        reason: Option<DeliveryBlock>,
    },
    /// `approve` was decided by someone other than an operator, and the
    /// gate lets only an operator approve.
    #[error(
        "only an operator may approve this delivery (the profile says `delivery.approve_requires_operator`); it was decided by {by}"
    )]
    OperatorRequired {
        /// Who decided: `the client \`name\``, `the ci_agent`.
        by: String,
    },
    /// The run's diff would conflict with the target checkout; the target
    /// was not touched.
    #[error("the target checkout would conflict with the run's diff ({0}); it was not touched")]
    TargetConflict(TargetStatus),
    /// The patch on disk is not the one the gate recorded.
    #[error("the run's patch was altered: its digest is {computed}, the gate recorded {recorded}")]
    PatchAltered {
        /// The digest in the gate.
        recorded: Digest,
        /// The digest of the file.
        computed: Digest,
    },
    /// The decision was taken on another patch than the one the gate holds
    /// (the gate was opened again since).
    #[error(
        "the decision was taken on the patch {decided}, and the gate now holds {gate}; decide again on this one"
    )]
    OtherPatch {
        /// The patch the decision names.
        decided: Digest,
        /// The gate's patch.
        gate: Digest,
    },
    /// The gate cannot be opened again: a decision is recorded on it.
    #[error("the gate is decided already (`{action}`): it is not opened again")]
    Decided {
        /// The action recorded.
        action: DeliveryAction,
    },
    /// The patch could not be read.
    #[error("the run's patch `{path}` cannot be read")]
    ReadPatch {
        /// The patch file.
        path: Utf8PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A path is not valid UTF-8 once made absolute.
    #[error("the path `{0}` is not valid UTF-8 once made absolute")]
    NotUtf8(Utf8PathBuf),
    /// A follow-up cannot be started.
    #[error(transparent)]
    FollowUp(Box<FollowUpError>),
    /// Git failed.
    #[error(transparent)]
    Git(Box<GitError>),
}

impl Refusal for DeliveryRefusal {}

fn not_available(
    action: DeliveryAction,
    available: DeliveryActions,
    reason: Option<&DeliveryBlock>,
) -> String {
    match reason {
        Some(reason) => format!("`{action}` is not available: {reason}; available: {available}"),
        None => format!("`{action}` is not available; available: {available}"),
    }
}

impl DeliveryRefusal {
    /// Whether the action is not on the gate's menu.
    pub fn is_not_available(&self) -> bool {
        matches!(self, Self::NotAvailable { .. })
    }

    /// Why the refused action is blocked, when it is.
    pub fn blocked_reason(&self) -> Option<&DeliveryBlock> {
        match self {
            Self::NotAvailable { reason, .. } => reason.as_ref(),
            _ => None,
        }
    }

    /// Whether the target checkout would conflict; the target was not
    /// touched and the gate is still decidable.
    pub fn is_target_conflict(&self) -> bool {
        matches!(self, Self::TargetConflict(_))
    }

    /// The target's status, when the refusal is a target conflict.
    pub fn target_status(&self) -> Option<&TargetStatus> {
        match self {
            Self::TargetConflict(status) => Some(status),
            _ => None,
        }
    }
}

impl From<GitError> for DeliveryRefusal {
    #[cold]
    fn from(e: GitError) -> Self {
        Self::Git(Box::new(e))
    }
}
