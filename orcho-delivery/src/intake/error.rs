//! What an intake question refuses, beside the failures every decision
//! point shares.

use camino::Utf8PathBuf;
use orcho_core::Digest;
use orcho_handoff::point::{PointError, Refusal};

use crate::git::GitError;

/// An intake operation failed: the shared failures of every decision
/// point, or an [`IntakeRefusal`].
pub type IntakeError = PointError<IntakeRefusal>;

/// What an intake question refuses; see
/// [`IntakeError::refusal`](PointError::refusal).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeRefusal {
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
    /// `commit`: git (or one of the repository's hooks, such as
    /// `pre-commit`) refused the commit. The index was put back as it was
    /// before intake; the work is untouched.
    #[error("the commit was refused, and the index is as it was before intake: {said}")]
    CommitRefused {
        /// What git and its hooks said (the end of their output).
        said: String,
    },
    /// A path is not valid UTF-8 once made absolute.
    #[error("the path `{0}` is not valid UTF-8 once made absolute")]
    NotUtf8(Utf8PathBuf),
    /// Git failed.
    #[error(transparent)]
    Git(Box<GitError>),
}

impl Refusal for IntakeRefusal {}

impl IntakeRefusal {
    /// Whether the seed patch does not apply to the run's worktree.
    pub fn is_seed_conflict(&self) -> bool {
        matches!(self, Self::SeedDoesNotApply { .. })
    }
}

impl From<GitError> for IntakeRefusal {
    #[cold]
    fn from(e: GitError) -> Self {
        Self::Git(Box::new(e))
    }
}
