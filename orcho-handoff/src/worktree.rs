//! Retained worktrees: the git worktree a run works in, kept after the run
//! so that its delivery gate can show, commit or apply exactly its diff.
//!
//! A run's worktree is a detached `git worktree` of the target checkout at
//! the commit the run starts from (after pre-run intake). The target's own
//! working tree and index are never touched: the run's changes reach the
//! target only through a delivery decision.
//!
//! Both operations are idempotent, so a process that died half-way through
//! either is repaired by doing it again.

use camino::{Utf8Path, Utf8PathBuf};

use crate::{
    error::{GitError, GitErrorKind},
    git::Git,
};

/// Creates the detached worktree `path` of the `target` checkout at the
/// commit `start`. When `path` already is a worktree at `start` (a previous
/// process created it), it is kept as it is; a half-created directory (no
/// `.git` inside) is removed and created again.
///
/// # Errors
///
/// A [`GitError`] when git refuses (an unknown commit, `path` is a worktree
/// at another commit, `target` is not a git checkout).
pub fn create(target: &Utf8Path, path: &Utf8Path, start: &str) -> Result<(), GitError> {
    let git = Git::new(target);
    let start = git.rev_parse(start)?;
    if path.join(".git").exists() {
        let head = Git::new(path).head()?;
        if head == start {
            return Ok(());
        }
        return Err(GitError::new(
            &["worktree", "add"],
            path,
            GitErrorKind::Failed {
                status: "refused".to_owned(),
                stderr: format!("`{path}` is already a worktree at {head}, not at {start}"),
            },
        ));
    }
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| {
            GitError::new(&["worktree", "add"], path, GitErrorKind::RemoveWorktree(e))
        })?;
    }
    // Forget worktrees whose directories are gone, so that a path reused
    // after a crash is not refused as "already registered".
    git.run(&["worktree", "prune"])?;
    git.run(&[
        "worktree",
        "add",
        "--detach",
        "--quiet",
        path.as_str(),
        &start,
    ])?;
    Ok(())
}

/// Applies the binary patch at `patch` to the worktree `path`
/// (`git apply --check`, then `git apply`). A worktree that already has the
/// patch (it applies in reverse) is left as is. Returns whether the patch
/// was applied now.
///
/// # Errors
///
/// A [`GitError`] when the patch applies neither way (the worktree is not
/// touched) or git cannot be run.
pub fn apply_patch(path: &Utf8Path, patch: &Utf8Path) -> Result<bool, GitError> {
    if std::fs::metadata(patch).map(|m| m.len()).unwrap_or(0) == 0 {
        return Ok(false);
    }
    let patch = absolute(patch);
    let git = Git::new(path);
    match git.check(&["apply", "--check", patch.as_str()])? {
        Ok(()) => {
            git.run(&["apply", patch.as_str()])?;
            Ok(true)
        }
        Err(stderr) => match git.check(&["apply", "--reverse", "--check", patch.as_str()])? {
            Ok(()) => Ok(false),
            Err(_) => Err(GitError::new(
                &["apply", "--check"],
                path,
                GitErrorKind::Failed {
                    status: "the patch does not apply".to_owned(),
                    stderr,
                },
            )),
        },
    }
}

fn absolute(path: &Utf8Path) -> Utf8PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    std::env::current_dir()
        .ok()
        .and_then(|d| Utf8PathBuf::try_from(d).ok())
        .map_or_else(|| path.to_owned(), |d| d.join(path))
}
