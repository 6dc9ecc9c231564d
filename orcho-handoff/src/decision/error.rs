//! Errors of decision records.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Digest, HandoffId, RunId, StoreError, Timestamp};

use super::DecidedBy;

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
    /// The record could not be read, decoded or written.
    #[error(transparent)]
    Store(StoreError),
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
        matches!(&*self.kind, DecisionErrorKind::Store(e) if e.is_too_new())
    }
}
