//! What uncommitted changes a checkout has.

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::git::{Git, GitError, StatusEntry};

/// How a tracked file differs from `HEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Its content or mode changed.
    Modified,
    /// It is new and staged.
    Added,
    /// It was deleted.
    Deleted,
    /// It has unresolved merge conflicts.
    Unmerged,
}

/// One tracked path with uncommitted changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedChange {
    pub(crate) path: Utf8PathBuf,
    pub(crate) kind: ChangeKind,
    pub(crate) staged: bool,
}

impl TrackedChange {
    orcho_core::getters! {
        /// The path, relative to the checkout root.
        pub fn path(&self) -> &Utf8Path;
        /// How it changed.
        pub fn kind(&self) -> ChangeKind;
        /// Whether (some of) the change is staged.
        pub fn is_staged(&self) -> bool => staged;
    }

    fn from_status(e: StatusEntry) -> Self {
        let (x, y) = (e.index, e.worktree);
        let kind = if x == b'U' || y == b'U' || (x == b'A' && y == b'A') || (x == b'D' && y == b'D')
        {
            ChangeKind::Unmerged
        } else if x == b'D' || y == b'D' {
            ChangeKind::Deleted
        } else if x == b'A' {
            ChangeKind::Added
        } else {
            ChangeKind::Modified
        };
        Self {
            path: e.path,
            kind,
            staged: x != b' ',
        }
    }
}

/// What [`detect_intake`] found in a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeReport {
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) head: String,
    pub(crate) tracked: Vec<TrackedChange>,
    pub(crate) untracked: Vec<Utf8PathBuf>,
}

impl IntakeReport {
    orcho_core::getters! {
        /// The checkout.
        pub fn checkout(&self) -> &Utf8Path;
        /// The commit `HEAD` pointed at.
        pub fn head(&self) -> &str;
        /// Tracked paths with uncommitted changes, in path order.
        pub fn tracked(&self) -> &[TrackedChange];
        /// Untracked, non-ignored files, in path order.
        pub fn untracked(&self) -> &[Utf8PathBuf];
    }

    /// How many untracked files.
    pub fn untracked_count(&self) -> usize {
        self.untracked.len()
    }

    /// How many paths in all.
    pub fn count(&self) -> usize {
        self.tracked.len() + self.untracked.len()
    }

    /// Whether there is nothing to decide about.
    pub fn is_clean(&self) -> bool {
        self.count() == 0
    }
}

/// Looks for uncommitted changes in `checkout` (a git working tree root),
/// ignoring anything under `store` when the store directory lies inside
/// the checkout.
///
/// # Errors
///
/// A [`DetectError`] when git cannot read the checkout (not a repository,
/// no commit yet).
///
/// # Examples
///
/// ```no_run
/// let report = orcho_delivery::detect_intake(".".into(), ".orcho".into())?;
/// if !report.is_clean() {
///     println!("{} tracked edits, {} untracked files", report.tracked().len(), report.untracked_count());
/// }
/// # Ok::<(), orcho_delivery::DetectError>(())
/// ```
pub fn detect_intake(checkout: &Utf8Path, store: &Utf8Path) -> Result<IntakeReport, DetectError> {
    let err = |source| DetectError {
        checkout: checkout.to_owned(),
        source,
    };
    let git = Git::new(checkout);
    let head = git.head().map_err(err)?;
    let excluded = store_prefix(checkout, store);
    let mut tracked = Vec::new();
    let mut untracked = Vec::new();
    for entry in git.status().map_err(err)? {
        if excluded
            .as_deref()
            .is_some_and(|p| entry.path.starts_with(p))
        {
            continue;
        }
        if entry.is_untracked() {
            untracked.push(entry.path);
        } else {
            tracked.push(TrackedChange::from_status(entry));
        }
    }
    tracked.sort_by(|a, b| a.path.cmp(&b.path));
    untracked.sort();
    Ok(IntakeReport {
        checkout: checkout.to_owned(),
        head,
        tracked,
        untracked,
    })
}

/// The store directory relative to the checkout, when it lies inside it.
pub(crate) fn store_prefix(checkout: &Utf8Path, store: &Utf8Path) -> Option<Utf8PathBuf> {
    let checkout = crate::git::absolute(checkout)?;
    let store = crate::git::absolute(store)?;
    store
        .strip_prefix(&checkout)
        .ok()
        .filter(|p| !p.as_str().is_empty())
        .map(Utf8Path::to_owned)
}

/// The uncommitted changes of a checkout could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot detect uncommitted changes in `{checkout}`")]
pub struct DetectError {
    checkout: Utf8PathBuf,
    #[source]
    source: GitError,
}

impl DetectError {
    orcho_core::getters! {
        /// The checkout.
        pub fn checkout(&self) -> &Utf8Path;
        /// The git error.
        pub fn git(&self) -> &GitError => source;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_columns_map_to_change_kinds() {
        let kind = |x: u8, y: u8| {
            TrackedChange::from_status(StatusEntry {
                index: x,
                worktree: y,
                path: "f".into(),
            })
        };
        assert_eq!(kind(b' ', b'M').kind(), ChangeKind::Modified);
        assert!(!kind(b' ', b'M').is_staged());
        assert_eq!(kind(b'A', b' ').kind(), ChangeKind::Added);
        assert!(kind(b'A', b' ').is_staged());
        assert_eq!(kind(b' ', b'D').kind(), ChangeKind::Deleted);
        assert_eq!(kind(b'U', b'U').kind(), ChangeKind::Unmerged);
        assert_eq!(kind(b'A', b'A').kind(), ChangeKind::Unmerged);
        assert_eq!(kind(b'M', b'M').kind(), ChangeKind::Modified);
    }

    #[test]
    fn the_store_is_excluded_only_when_inside_the_checkout() {
        assert_eq!(
            store_prefix("/repo".into(), "/repo/.orcho".into()).as_deref(),
            Some(Utf8Path::new(".orcho"))
        );
        assert_eq!(
            store_prefix("/repo".into(), "/elsewhere/.orcho".into()),
            None
        );
        assert_eq!(store_prefix("/repo".into(), "/repo".into()), None);
    }
}
