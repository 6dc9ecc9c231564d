//! The errors every decision point shares, written once.

use std::fmt;

use orcho_core::{HandoffId, RunId, StoreError};

use crate::decision::DecisionError;

/// What a kind of decision point refuses beyond the shared lifecycle: an
/// action not on its menu, a target that would conflict, answers that do not
/// fit. Each point's refusal type implements it, so that
/// [`PointError::is_conflict`] also sees the point's own conflicts.
pub trait Refusal: std::error::Error + Send + Sync + 'static {
    /// Whether the refusal is a conflict with a decision already recorded.
    fn is_conflict(&self) -> bool {
        false
    }
}

/// An operation on a decision point failed.
///
/// The storage failures, the "no such point", "already open", "not the
/// recorded decision" and the decision record's own errors are the same for
/// every kind of point and live here; what only one kind of point refuses
/// is its [`refusal`](Self::refusal) (`R`).
///
/// Displayed as "cannot decide handoff \`0001-implement\` of run \`r1\`",
/// "cannot decide the delivery gate of run \`r1\`" or "cannot list the
/// handoffs in run \`r1\`", with the cause as its source.
#[derive(Debug)]
pub struct PointError<R> {
    op: &'static str,
    what: What,
    run: RunId,
    kind: Box<PointErrorKind<R>>,
}

/// Which point an error is about, for its message.
#[derive(Debug, Clone)]
enum What {
    /// A point with an id: `cannot decide handoff `0001-implement` of run …`.
    Named(&'static str, HandoffId),
    /// The run's one point of its kind, named by the operation: `cannot
    /// decide the delivery gate of run …`.
    Of,
    /// No point in particular: `cannot list the handoffs in run …`.
    In,
}

/// What went wrong at a decision point; see [`PointError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PointErrorKind<R> {
    /// The point was never opened.
    #[error("{0}")]
    NotFound(&'static str),
    /// The point is already open with another question.
    #[error("{0}")]
    AlreadyOpen(&'static str),
    /// A document names another run or point than its place in the store.
    #[error("{0}")]
    Misplaced(String),
    /// The recorded decision given is not the one on disk.
    #[error("the recorded decision given is not the one on disk")]
    DecisionMismatch,
    /// A document holds a value this build cannot use.
    #[error("the document is invalid: {0}")]
    Invalid(String),
    /// The point's history (journal and records) is inconsistent.
    #[error("its history is inconsistent: {0}")]
    Corrupt(String),
    /// The decision record could not be written or read, or conflicts.
    #[error(transparent)]
    Decision(Box<DecisionError>),
    /// A file, document, journal or lock failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The point refused: its own rules.
    #[error(transparent)]
    Refused(R),
}

impl<R> PointErrorKind<R> {
    /// A document about `run` (and `point`) was found in another run's or
    /// point's place.
    #[cold]
    pub fn misplaced(run: &RunId, point: Option<&HandoffId>) -> Self {
        Self::Misplaced(match point {
            Some(point) => format!("the document is about `{point}` of run `{run}`"),
            None => format!("the document is about run `{run}`"),
        })
    }
}

impl<R> From<DecisionError> for PointErrorKind<R> {
    #[cold]
    fn from(e: DecisionError) -> Self {
        Self::Decision(Box::new(e))
    }
}

macro_rules! kind_from_store {
    ($($source:ty),*) => {$(
        impl<R> From<$source> for PointErrorKind<R> {
            #[cold]
            fn from(e: $source) -> Self {
                Self::Store(e.into())
            }
        }
    )*};
}

kind_from_store!(
    orcho_core::FsError,
    orcho_core::DocumentError,
    orcho_core::JournalError,
    orcho_core::LockError
);

impl<R> PointError<R> {
    /// An error about point `id` (`what` names its kind, for example
    /// `handoff`).
    #[cold]
    pub fn named(
        op: &'static str,
        what: &'static str,
        run: &RunId,
        id: &HandoffId,
        kind: PointErrorKind<R>,
    ) -> Self {
        Self::with(op, What::Named(what, id.clone()), run, kind)
    }

    /// An error about the run's one point of its kind, which `op` names:
    /// `decide the delivery gate of` reads "cannot decide the delivery gate
    /// of run `r`".
    #[cold]
    pub fn of_run(op: &'static str, run: &RunId, kind: PointErrorKind<R>) -> Self {
        Self::with(op, What::Of, run, kind)
    }

    /// An error about the run, no point in particular: `list the handoffs`
    /// reads "cannot list the handoffs in run `r`".
    #[cold]
    pub fn in_run(op: &'static str, run: &RunId, kind: PointErrorKind<R>) -> Self {
        Self::with(op, What::In, run, kind)
    }

    fn with(op: &'static str, what: What, run: &RunId, kind: PointErrorKind<R>) -> Self {
        Self {
            op,
            what,
            run: run.clone(),
            kind: Box::new(kind),
        }
    }

    /// The run.
    pub fn run_id(&self) -> &RunId {
        &self.run
    }

    /// The point's id, when the error is about one with an id.
    pub fn point(&self) -> Option<&HandoffId> {
        match &self.what {
            What::Named(_, id) => Some(id),
            What::Of | What::In => None,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &PointErrorKind<R> {
        &self.kind
    }

    /// What went wrong, giving up the context.
    pub fn into_kind(self) -> PointErrorKind<R> {
        *self.kind
    }

    /// The point's own refusal, when it refused.
    pub fn refusal(&self) -> Option<&R> {
        match &*self.kind {
            PointErrorKind::Refused(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the point refused, for a reason `test` accepts.
    pub fn is_refused(&self, test: impl FnOnce(&R) -> bool) -> bool {
        self.refusal().is_some_and(test)
    }

    /// Whether the point was never opened.
    pub fn is_not_found(&self) -> bool {
        matches!(*self.kind, PointErrorKind::NotFound(_))
    }

    /// Whether the point is already open with another question.
    pub fn is_already_open(&self) -> bool {
        matches!(*self.kind, PointErrorKind::AlreadyOpen(_))
    }

    /// Whether the decision given is not the one recorded.
    pub fn is_decision_mismatch(&self) -> bool {
        matches!(*self.kind, PointErrorKind::DecisionMismatch)
    }
}

impl<R: Refusal> PointError<R> {
    /// Whether a different decision is already recorded.
    pub fn is_conflict(&self) -> bool {
        match &*self.kind {
            PointErrorKind::Decision(e) => e.is_conflict(),
            PointErrorKind::Refused(r) => r.is_conflict(),
            _ => false,
        }
    }
}

impl<R> fmt::Display for PointError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.what {
            What::Named(what, id) => {
                write!(f, "cannot {} {what} `{id}` of run `{}`", self.op, self.run)
            }
            What::Of => write!(f, "cannot {} run `{}`", self.op, self.run),
            What::In => write!(f, "cannot {} in run `{}`", self.op, self.run),
        }
    }
}

impl<R: std::error::Error + 'static> std::error::Error for PointError<R> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.kind)
    }
}
