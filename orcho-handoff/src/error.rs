//! Errors of `orcho-handoff`.
//!
//! Every error names what it is about (a run, a handoff, a path) in
//! backticks and never repeats the text of its source: print chains with
//! [`orcho_core::error_chain`].

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Digest, DocumentError, FsError, HandoffId, IdErrorReason, JournalError, LockError, RunId,
    Timestamp,
};

use crate::{AvailableActions, HandoffAction, HandoffState, decision::DecidedBy};

/// A string is not a [`HandoffAction`] spelling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown handoff action `{value}`: expected one of continue, retry_feedback, continue_with_waiver, halt"
)]
pub struct ParseActionError {
    value: String,
}

impl ParseActionError {
    #[cold]
    pub(crate) fn new(value: &str) -> Self {
        Self {
            value: value.chars().take(40).collect(),
        }
    }
}

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

/// A string is not a valid [`AdviceId`](crate::AdviceId).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid advice id `{value}`: {reason}")]
pub struct AdviceIdError {
    value: String,
    reason: IdErrorReason,
}

impl AdviceIdError {
    #[cold]
    pub(crate) fn new(value: &str, reason: IdErrorReason) -> Self {
        Self {
            value: value
                .chars()
                .take(40)
                .flat_map(char::escape_debug)
                .collect(),
            reason,
        }
    }

    /// The rule the id broke.
    pub fn reason(&self) -> &IdErrorReason {
        &self.reason
    }
}

/// Advice is malformed: the CI autopilot stops on it, and
/// [`HandoffStore::record_advice`](crate::HandoffStore::record_advice)
/// refuses it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("malformed advice: {kind}")]
pub struct AdviceError {
    kind: AdviceErrorKind,
}

/// What is wrong with advice; see [`AdviceError::kind`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AdviceErrorKind {
    /// The numeric confidence is NaN or outside `0..=1`.
    #[error("the confidence {0} is not a number in 0..=1")]
    ConfidenceOutOfRange(f64),
    /// Neither a score nor a band.
    #[error("it gives no confidence (neither a score nor a band)")]
    MissingConfidence,
    /// The rationale is blank.
    #[error("the rationale is blank")]
    BlankRationale,
    /// `retry_feedback` recommended without feedback.
    #[error("it recommends `retry_feedback` without feedback")]
    MissingRetryFeedback,
    /// An expected file is absolute or climbs out of the checkout.
    #[error("the expected file `{0}` is not a relative path inside the checkout")]
    FileOutsideCheckout(Utf8PathBuf),
}

impl AdviceError {
    #[cold]
    pub(crate) fn new(kind: AdviceErrorKind) -> Self {
        Self { kind }
    }

    /// What is wrong.
    pub fn kind(&self) -> &AdviceErrorKind {
        &self.kind
    }
}

/// A decision record could not be written or read. See
/// [`DecisionSlot`](crate::decision::DecisionSlot).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct DecisionError {
    point: HandoffId,
    path: Option<Utf8PathBuf>,
    #[source]
    kind: Box<DecisionErrorKind>,
}

/// What went wrong with a decision record; see [`DecisionError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionErrorKind {
    /// A different decision is already recorded. Nothing was changed.
    #[error(
        "a different decision is already recorded (`{recorded}` by {recorded_by} at {recorded_at}); refusing `{attempted}`"
    )]
    Conflict {
        /// The recorded decision's label.
        recorded: String,
        /// Who made it.
        recorded_by: DecidedBy,
        /// When.
        recorded_at: Timestamp,
        /// The label of the refused decision.
        attempted: String,
    },
    /// The record (or the decision given) is for another run or point.
    #[error("the record is for decision point `{point}` of run `{run}`")]
    WrongPoint {
        /// Its run.
        run: RunId,
        /// Its decision point.
        point: HandoffId,
    },
    /// The record is of another kind of decision.
    #[error("the record is a `{found}` decision, not a `{expected}` one")]
    WrongKind {
        /// The kind this slot holds.
        expected: &'static str,
        /// The kind on disk.
        found: String,
    },
    /// The stored digest does not match the content: the record was
    /// altered after it was written.
    #[error("its digest {recorded} does not match its content ({computed}); it was altered")]
    DigestMismatch {
        /// The digest in the file.
        recorded: Digest,
        /// The digest of the content.
        computed: Digest,
    },
    /// The payload could not be encoded.
    #[error("the payload could not be encoded as JSON")]
    Encode(#[source] Box<serde_json::Error>),
    /// The record could not be read or decoded.
    #[error(transparent)]
    Document(DocumentError),
    /// A file-system operation failed.
    #[error(transparent)]
    Fs(FsError),
}

impl DecisionError {
    #[cold]
    pub(crate) fn new(point: &HandoffId, path: Option<&Utf8Path>, kind: DecisionErrorKind) -> Self {
        Self {
            point: point.clone(),
            path: path.map(Utf8Path::to_owned),
            kind: Box::new(kind),
        }
    }

    fn render(&self) -> String {
        match &self.path {
            Some(path) => format!(
                "cannot use the decision record of `{}` at `{path}`",
                self.point
            ),
            None => format!("cannot use the decision record of `{}`", self.point),
        }
    }

    /// The decision point.
    pub fn point(&self) -> &HandoffId {
        &self.point
    }

    /// The record's file, when known.
    pub fn path(&self) -> Option<&Utf8Path> {
        self.path.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecisionErrorKind {
        &self.kind
    }

    /// Whether a different decision is already recorded.
    pub fn is_conflict(&self) -> bool {
        matches!(*self.kind, DecisionErrorKind::Conflict { .. })
    }

    /// Whether the record on disk was altered.
    pub fn is_digest_mismatch(&self) -> bool {
        matches!(*self.kind, DecisionErrorKind::DigestMismatch { .. })
    }

    /// Whether the record was written by a newer Orcho.
    pub fn is_too_new(&self) -> bool {
        matches!(&*self.kind, DecisionErrorKind::Document(e) if e.is_too_new())
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

    /// Why the transition was refused.
    pub fn kind(&self) -> &TransitionErrorKind {
        &self.kind
    }

    /// The state, unchanged.
    pub fn state(&self) -> &HandoffState {
        &self.state
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

/// An operation of the [`HandoffStore`](crate::HandoffStore) or the
/// [`Autopilot`](crate::Autopilot) failed.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct HandoffError {
    op: &'static str,
    run: RunId,
    handoff: Option<HandoffId>,
    #[source]
    kind: Box<HandoffErrorKind>,
}

/// What went wrong; see [`HandoffError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandoffErrorKind {
    /// The event is illegal in the handoff's state (pending, terminal,
    /// conflict, not available, …).
    #[error(transparent)]
    Transition(TransitionErrorKind),
    /// The decision record could not be written or read, or conflicts.
    #[error(transparent)]
    Decision(Box<DecisionError>),
    /// Advice given to the store is malformed.
    #[error(transparent)]
    Advice(AdviceError),
    /// No handoff with this id exists in the run.
    #[error("no such handoff")]
    NotFound,
    /// A decision names advice that does not exist in the run.
    #[error("advice `{0}` does not exist in this run")]
    UnknownAdvice(crate::AdviceId),
    /// A decision names advice about another handoff.
    #[error("advice `{advice}` is about handoff `{handoff}`")]
    AdviceForOtherHandoff {
        /// The advice.
        advice: crate::AdviceId,
        /// The handoff it is about.
        handoff: HandoffId,
    },
    /// The recorded decision passed to `resume` is not the one on disk.
    #[error("the recorded decision given is not the one on disk")]
    DecisionMismatch,
    /// The journal and the records disagree.
    #[error("its history is inconsistent: {0}")]
    CorruptHistory(String),
    /// A document could not be read or written.
    #[error(transparent)]
    Document(Box<DocumentError>),
    /// The journal could not be read or appended to.
    #[error(transparent)]
    Journal(Box<JournalError>),
    /// The run's handoff lock could not be taken.
    #[error(transparent)]
    Lock(Box<LockError>),
    /// A file-system operation failed.
    #[error(transparent)]
    Fs(Box<FsError>),
    /// A directory of the store could not be listed.
    #[error("failed to list `{dir}`")]
    ListDir {
        /// The directory.
        dir: Utf8PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An id derived from the store's names is invalid.
    #[error(transparent)]
    Id(Box<orcho_core::IdError>),
}

impl HandoffError {
    #[cold]
    pub(crate) fn new(
        op: &'static str,
        run: &RunId,
        handoff: Option<&HandoffId>,
        kind: HandoffErrorKind,
    ) -> Self {
        Self {
            op,
            run: run.clone(),
            handoff: handoff.cloned(),
            kind: Box::new(kind),
        }
    }

    fn render(&self) -> String {
        match &self.handoff {
            Some(h) => format!("cannot {} handoff `{h}` of run `{}`", self.op, self.run),
            None => format!("cannot {} in run `{}`", self.op, self.run),
        }
    }

    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }

    /// The handoff, when the error is about one.
    pub fn handoff(&self) -> Option<&HandoffId> {
        self.handoff.as_ref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &HandoffErrorKind {
        &self.kind
    }

    /// Whether a resume was refused because no decision is recorded yet.
    pub fn is_pending(&self) -> bool {
        matches!(
            *self.kind,
            HandoffErrorKind::Transition(TransitionErrorKind::Pending { .. })
        )
    }

    /// Whether a resume was refused because the handoff was halted.
    pub fn is_terminal(&self) -> bool {
        matches!(
            *self.kind,
            HandoffErrorKind::Transition(TransitionErrorKind::Terminal)
        )
    }

    /// Whether the handoff was already resumed.
    pub fn is_already_resumed(&self) -> bool {
        matches!(
            *self.kind,
            HandoffErrorKind::Transition(TransitionErrorKind::AlreadyResumed)
        )
    }

    /// Whether a different decision is already recorded.
    pub fn is_conflict(&self) -> bool {
        match &*self.kind {
            HandoffErrorKind::Transition(TransitionErrorKind::Conflict { .. }) => true,
            HandoffErrorKind::Decision(e) => e.is_conflict(),
            _ => false,
        }
    }

    /// Whether the action is not on the handoff's menu.
    pub fn is_not_available(&self) -> bool {
        matches!(
            *self.kind,
            HandoffErrorKind::Transition(TransitionErrorKind::NotAvailable { .. })
        )
    }

    /// Whether the handoff does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(*self.kind, HandoffErrorKind::NotFound)
    }

    /// The handoff's menu, when the error is about a pending decision or an
    /// unavailable action.
    pub fn available_actions(&self) -> Option<AvailableActions> {
        match &*self.kind {
            HandoffErrorKind::Transition(
                TransitionErrorKind::Pending { available }
                | TransitionErrorKind::NotAvailable { available, .. },
            ) => Some(*available),
            _ => None,
        }
    }
}

/// A glob pattern is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob `{glob}`: {reason}")]
pub struct GlobError {
    glob: String,
    reason: &'static str,
}

impl GlobError {
    #[cold]
    pub(crate) fn new(glob: &str, reason: &'static str) -> Self {
        Self {
            glob: glob.to_owned(),
            reason,
        }
    }

    /// The glob.
    pub fn glob(&self) -> &str {
        &self.glob
    }
}

/// An [`AutopilotPolicy`](crate::AutopilotPolicy) is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AutopilotPolicyError {
    /// The confidence threshold is not in `0..=1`.
    #[error("the confidence threshold {0} is not a number in 0..=1")]
    Threshold(f64),
    /// An allowed-files glob is malformed.
    #[error("an allowed-files glob is invalid")]
    Glob(#[source] GlobError),
    /// A destructive pattern is blank.
    #[error("a destructive-action pattern is blank")]
    BlankPattern,
}

/// A string is not the spelling of an action of a delivery gate or an
/// intake question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {point} action `{value}`: expected one of {expected}")]
pub struct UnknownActionError {
    point: &'static str,
    value: String,
    expected: &'static str,
}

impl UnknownActionError {
    #[cold]
    pub(crate) fn new(point: &'static str, value: &str, expected: &'static str) -> Self {
        Self {
            point,
            value: value
                .chars()
                .take(40)
                .flat_map(char::escape_debug)
                .collect(),
            expected,
        }
    }

    /// The refused spelling (cut to 40 characters, escaped).
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// A delivery action and its message do not make a valid
/// [`DeliveryChoice`](crate::DeliveryChoice).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryChoiceError {
    /// A commit message given to another action than `approve`.
    #[error("a commit message is only taken by `approve`, not `{0}`")]
    MessageNotAllowed(crate::DeliveryAction),
    /// A blank commit message.
    #[error("the commit message is blank")]
    BlankMessage,
}

/// A git command failed or could not be run.
#[derive(Debug, thiserror::Error)]
#[error("`git {command}` failed in `{dir}`")]
pub struct GitError {
    command: String,
    dir: Utf8PathBuf,
    #[source]
    kind: GitErrorKind,
}

/// Why a git command failed; see [`GitError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitErrorKind {
    /// Git could not be run or supervised.
    #[error(transparent)]
    Exec(Box<orcho_receipts::ExecError>),
    /// Git ran and failed.
    #[error("{status}{}", if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    Failed {
        /// How it ended (`exit code 128`, `timed out after …`).
        status: String,
        /// The end of its standard error, trimmed.
        stderr: String,
    },
    /// Its output was too large to keep.
    #[error("its output was too large to keep in memory")]
    OutputTooLarge,
    /// The private index could not be created.
    #[error("the private index could not be created")]
    TempIndex(#[source] std::io::Error),
    /// A half-created worktree directory could not be removed.
    #[error("the half-created worktree could not be removed")]
    RemoveWorktree(#[source] std::io::Error),
}

impl GitError {
    #[cold]
    pub(crate) fn new(args: &[&str], dir: &Utf8Path, kind: GitErrorKind) -> Self {
        let command: String = args.iter().take(3).copied().collect::<Vec<_>>().join(" ");
        Self {
            command,
            dir: dir.to_owned(),
            kind,
        }
    }

    #[cold]
    pub(crate) fn failed(
        args: &[&str],
        dir: &Utf8Path,
        outcome: &orcho_receipts::exec::ExecOutcome,
    ) -> Self {
        Self::new(
            args,
            dir,
            GitErrorKind::Failed {
                status: outcome.status.to_string(),
                stderr: outcome.stderr.tail_lossy().trim().to_owned(),
            },
        )
    }

    /// The git subcommand and its first arguments.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The directory git ran in.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// What failed.
    pub fn kind(&self) -> &GitErrorKind {
        &self.kind
    }
}

/// An operation of [`DeliveryGates`](crate::DeliveryGates) failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} run `{run}`")]
pub struct DeliveryError {
    op: &'static str,
    run: RunId,
    #[source]
    kind: Box<DeliveryErrorKind>,
}

/// What went wrong at a delivery gate; see [`DeliveryError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryErrorKind {
    /// The run has no delivery gate.
    #[error("the run has no delivery gate")]
    NotFound,
    /// The run already has a delivery gate.
    #[error("the run already has a delivery gate")]
    AlreadyOpen,
    /// The action is not on the gate's menu.
    #[error("{}", not_available(*action, *available, reason.as_ref()))]
    NotAvailable {
        /// The refused action.
        action: crate::DeliveryAction,
        /// The gate's menu.
        available: crate::DeliveryActions,
        /// Why the action is blocked.
        reason: Option<crate::DeliveryBlock>,
    },
    /// The run's diff would conflict with the target checkout; the target
    /// was not touched.
    #[error("the target checkout would conflict with the run's diff ({0}); it was not touched")]
    TargetConflict(crate::TargetStatus),
    /// The patch on disk is not the one the gate recorded.
    #[error("the run's patch was altered: its digest is {computed}, the gate recorded {recorded}")]
    PatchAltered {
        /// The digest in the gate.
        recorded: Digest,
        /// The digest of the file.
        computed: Digest,
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
    /// The recorded decision passed to `deliver` is not the one on disk.
    #[error("the recorded decision given is not the one on disk")]
    DecisionMismatch,
    /// A document names another run.
    #[error("the document is about run `{0}`")]
    WrongRun(RunId),
    /// A document holds a value this build cannot use.
    #[error("the document is invalid: {0}")]
    Invalid(String),
    /// A path is not valid UTF-8 once made absolute.
    #[error("the path `{0}` is not valid UTF-8 once made absolute")]
    NotUtf8(Utf8PathBuf),
    /// A follow-up cannot be started.
    #[error(transparent)]
    FollowUp(Box<FollowUpError>),
    /// Git failed.
    #[error(transparent)]
    Git(Box<GitError>),
    /// The decision record could not be written or read, or conflicts.
    #[error(transparent)]
    Decision(Box<DecisionError>),
    /// A document could not be read or written.
    #[error(transparent)]
    Document(Box<DocumentError>),
    /// The gate's lock could not be taken.
    #[error(transparent)]
    Lock(Box<LockError>),
    /// A file-system operation failed.
    #[error(transparent)]
    Fs(Box<FsError>),
}

fn not_available(
    action: crate::DeliveryAction,
    available: crate::DeliveryActions,
    reason: Option<&crate::DeliveryBlock>,
) -> String {
    match reason {
        Some(reason) => format!("`{action}` is not available: {reason}; available: {available}"),
        None => format!("`{action}` is not available; available: {available}"),
    }
}

impl DeliveryError {
    #[cold]
    pub(crate) fn new(op: &'static str, run: &RunId, kind: DeliveryErrorKind) -> Self {
        Self {
            op,
            run: run.clone(),
            kind: Box::new(kind),
        }
    }

    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }

    /// What went wrong.
    pub fn kind(&self) -> &DeliveryErrorKind {
        &self.kind
    }

    /// Whether the run has no gate.
    pub fn is_not_found(&self) -> bool {
        matches!(*self.kind, DeliveryErrorKind::NotFound)
    }

    /// Whether the run already has a gate.
    pub fn is_already_open(&self) -> bool {
        matches!(*self.kind, DeliveryErrorKind::AlreadyOpen)
    }

    /// Whether the action is not on the gate's menu.
    pub fn is_not_available(&self) -> bool {
        matches!(*self.kind, DeliveryErrorKind::NotAvailable { .. })
    }

    /// Why the refused action is blocked, when it is.
    pub fn blocked_reason(&self) -> Option<&crate::DeliveryBlock> {
        match &*self.kind {
            DeliveryErrorKind::NotAvailable { reason, .. } => reason.as_ref(),
            _ => None,
        }
    }

    /// Whether the target checkout would conflict; the target was not
    /// touched and the gate is still decidable.
    pub fn is_target_conflict(&self) -> bool {
        matches!(*self.kind, DeliveryErrorKind::TargetConflict(_))
    }

    /// The target's status, when the error is a target conflict.
    pub fn target_status(&self) -> Option<&crate::TargetStatus> {
        match &*self.kind {
            DeliveryErrorKind::TargetConflict(status) => Some(status),
            _ => None,
        }
    }

    /// Whether a different decision is already recorded.
    pub fn is_conflict(&self) -> bool {
        matches!(&*self.kind, DeliveryErrorKind::Decision(e) if e.is_conflict())
    }
}

/// A correction follow-up cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot start a correction follow-up of run `{run}`")]
pub struct FollowUpError {
    run: RunId,
    #[source]
    kind: FollowUpErrorKind,
}

/// Why a follow-up cannot be built; see [`FollowUpError::kind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FollowUpErrorKind {
    /// The decision is not a `fix` of this run.
    #[error("the decision is `{action}` of run `{decision_run}`, not `fix` of this run")]
    NotAFix {
        /// The decision's run.
        decision_run: RunId,
        /// The decision's action.
        action: crate::DeliveryAction,
    },
    /// The guard stopped the chain of follow-ups.
    #[error(transparent)]
    Stopped(crate::NonConvergence),
}

impl FollowUpError {
    #[cold]
    pub(crate) fn not_a_fix(
        run: &RunId,
        decision_run: &RunId,
        action: crate::DeliveryAction,
    ) -> Self {
        Self {
            run: run.clone(),
            kind: FollowUpErrorKind::NotAFix {
                decision_run: decision_run.clone(),
                action,
            },
        }
    }

    #[cold]
    pub(crate) fn stopped(run: &RunId, stop: crate::NonConvergence) -> Self {
        Self {
            run: run.clone(),
            kind: FollowUpErrorKind::Stopped(stop),
        }
    }

    /// The parent run.
    pub fn run(&self) -> &RunId {
        &self.run
    }

    /// What went wrong.
    pub fn kind(&self) -> &FollowUpErrorKind {
        &self.kind
    }

    /// Whether the decision is not a `fix` of this run.
    pub fn is_not_a_fix(&self) -> bool {
        matches!(self.kind, FollowUpErrorKind::NotAFix { .. })
    }

    /// The guard's typed stop, when the chain was stopped.
    pub fn non_convergence(&self) -> Option<&crate::NonConvergence> {
        match &self.kind {
            FollowUpErrorKind::Stopped(stop) => Some(stop),
            FollowUpErrorKind::NotAFix { .. } => None,
        }
    }
}

/// An intake action and its message do not make a valid
/// [`IntakeChoice`](crate::IntakeChoice).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeChoiceError {
    /// A commit message given to another action than `commit`.
    #[error("a commit message is only taken by `commit`, not `{0}`")]
    MessageNotAllowed(crate::IntakeAction),
    /// A blank commit message.
    #[error("the commit message is blank")]
    BlankMessage,
}

/// An intake operation failed; see [`Intakes`](crate::Intakes) and
/// [`detect_intake`](crate::detect_intake).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct IntakeError {
    op: &'static str,
    run: Option<RunId>,
    checkout: Option<Utf8PathBuf>,
    #[source]
    kind: Box<IntakeErrorKind>,
}

/// What went wrong at intake; see [`IntakeError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeErrorKind {
    /// No intake question was asked for the run.
    #[error("no intake question was asked for the run")]
    NotFound,
    /// A different intake question was already asked for the run.
    #[error("a different intake question was already asked for the run")]
    AlreadyOpen,
    /// The seed patch does not apply to the run's worktree; the worktree
    /// was not touched and the run must not start from `HEAD` silently.
    #[error("the seed patch does not apply to the worktree `{worktree}`: {check}")]
    SeedDoesNotApply {
        /// The run's worktree.
        worktree: Utf8PathBuf,
        /// What `git apply --check` said.
        check: String,
    },
    /// `seed` was called, but the decision was not `include`.
    #[error("the intake decision was not `include`, so there is no seed patch")]
    NotIncluded,
    /// The seed patch on disk is not the one recorded.
    #[error(
        "the seed patch was altered: its digest is {computed}, the outcome recorded {recorded}"
    )]
    SeedAltered {
        /// The recorded digest.
        recorded: Digest,
        /// The digest of the file.
        computed: Digest,
    },
    /// The seed patch could not be read.
    #[error("the seed patch `{path}` cannot be read")]
    ReadSeed {
        /// The patch file.
        path: Utf8PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The recorded decision given is not the one on disk.
    #[error("the recorded decision given is not the one on disk")]
    DecisionMismatch,
    /// A document names another run.
    #[error("the document is about run `{0}`")]
    WrongRun(RunId),
    /// A document holds a value this build cannot use.
    #[error("the document is invalid: {0}")]
    Invalid(String),
    /// A path is not valid UTF-8 once made absolute.
    #[error("the path `{0}` is not valid UTF-8 once made absolute")]
    NotUtf8(Utf8PathBuf),
    /// Git failed.
    #[error(transparent)]
    Git(Box<GitError>),
    /// The decision record could not be written or read, or conflicts.
    #[error(transparent)]
    Decision(Box<DecisionError>),
    /// A document could not be read or written.
    #[error(transparent)]
    Document(Box<DocumentError>),
    /// The intake lock could not be taken.
    #[error(transparent)]
    Lock(Box<LockError>),
    /// A file-system operation failed.
    #[error(transparent)]
    Fs(Box<FsError>),
}

impl IntakeError {
    #[cold]
    pub(crate) fn new(op: &'static str, checkout: &Utf8Path, kind: IntakeErrorKind) -> Self {
        Self {
            op,
            run: None,
            checkout: Some(checkout.to_owned()),
            kind: Box::new(kind),
        }
    }

    #[cold]
    pub(crate) fn for_run(op: &'static str, run: &RunId, kind: IntakeErrorKind) -> Self {
        Self {
            op,
            run: Some(run.clone()),
            checkout: None,
            kind: Box::new(kind),
        }
    }

    fn render(&self) -> String {
        match (&self.run, &self.checkout) {
            (Some(run), _) => format!("cannot {} run `{run}`", self.op),
            (None, Some(checkout)) => format!("cannot {} `{checkout}`", self.op),
            (None, None) => format!("cannot {}", self.op),
        }
    }

    /// The run, when the error is about one.
    pub fn run(&self) -> Option<&RunId> {
        self.run.as_ref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &IntakeErrorKind {
        &self.kind
    }

    /// Whether no intake question was asked for the run.
    pub fn is_not_found(&self) -> bool {
        matches!(*self.kind, IntakeErrorKind::NotFound)
    }

    /// Whether a different question was already asked.
    pub fn is_already_open(&self) -> bool {
        matches!(*self.kind, IntakeErrorKind::AlreadyOpen)
    }

    /// Whether the seed patch does not apply to the run's worktree.
    pub fn is_seed_conflict(&self) -> bool {
        matches!(*self.kind, IntakeErrorKind::SeedDoesNotApply { .. })
    }

    /// Whether a different decision is already recorded.
    pub fn is_conflict(&self) -> bool {
        matches!(&*self.kind, IntakeErrorKind::Decision(e) if e.is_conflict())
    }
}

/// The inbox scan could not list the store's runs directory. (A run that
/// cannot be read is not an error: it is listed as degraded.)
#[derive(Debug, thiserror::Error)]
#[error("cannot list the runs in `{dir}`")]
pub struct InboxError {
    dir: Utf8PathBuf,
    #[source]
    source: std::io::Error,
}

impl InboxError {
    #[cold]
    pub(crate) fn new(dir: &Utf8Path, source: std::io::Error) -> Self {
        Self {
            dir: dir.to_owned(),
            source,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }
}
