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

use camino::Utf8Path;

use crate::git::{Git, GitError, GitErrorKind};

/// Creates the detached worktree `path` of the `target` checkout at the
/// commit `start`. When `path` already is a worktree at `start`, or at a
/// commit made on top of it (a previous process created it, and perhaps
/// committed the seed with [`commit_all`]), it is kept as it is.
///
/// The worktree is added under a staging name beside `path` and then moved
/// into place, so `path` is a complete worktree or absent. A process killed
/// during `git worktree add` leaves its `git` running on its own staging
/// name, never on `path`: whatever that orphan does or undoes later cannot
/// touch the worktree a new process creates. Staging worktrees left by
/// killed processes, and a `path` whose git metadata is gone, are removed
/// before the worktree is created again.
///
/// # Errors
///
/// A [`GitError`] when git refuses (an unknown commit, `path` is a worktree
/// at another commit, `target` is not a git checkout).
pub fn create(target: &Utf8Path, path: &Utf8Path, start: &str) -> Result<(), GitError> {
    let git = Git::new(target);
    let start = git.rev_parse(start)?;
    if path.join(".git").exists() {
        let tree = Git::new(path);
        if let Ok(head) = tree.head() {
            if head == start
                || tree
                    .check(&["merge-base", "--is-ancestor", &start, &head])?
                    .is_ok()
            {
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
        // A `.git` that leads nowhere: the worktree's metadata is gone.
    }
    let remove = |dir: &Utf8Path| {
        std::fs::remove_dir_all(dir)
            .map_err(|e| GitError::new(&["worktree", "add"], dir, GitErrorKind::RemoveWorktree(e)))
    };
    if path.exists() {
        remove(path)?;
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(GitError::new(
            &["worktree", "add"],
            path,
            GitErrorKind::Failed {
                status: "refused".to_owned(),
                stderr: format!("`{path}` has no parent directory"),
            },
        ));
    };
    let prefix = format!("{name}{STAGING}");
    if let Ok(entries) = parent.read_dir_utf8() {
        for entry in entries.flatten() {
            if entry.file_name().starts_with(&prefix) {
                remove(entry.path())?;
            }
        }
    }
    // Forget worktrees whose directories are gone, so that a path reused
    // after a crash is not refused as "already registered".
    git.run(&["worktree", "prune"])?;
    let staging = parent.join(format!("{prefix}{}", staging_suffix()));
    git.run(&[
        "worktree",
        "add",
        "--detach",
        "--quiet",
        staging.as_str(),
        &start,
    ])?;
    git.run(&["worktree", "move", staging.as_str(), path.as_str()])?;
    Ok(())
}

/// Removes the worktree `path` of the `target` checkout, changes and all,
/// and forgets it in git. A directory git does not know as a worktree (its
/// metadata gone, or a target that no longer exists) is removed as it is.
///
/// # Errors
///
/// A [`GitError`] when the directory cannot be removed.
pub fn remove(target: &Utf8Path, path: &Utf8Path) -> Result<(), GitError> {
    if target.is_dir() {
        let git = Git::new(target);
        // Refused for a directory that is not one of its worktrees: then
        // the directory is removed below, and git forgets nothing.
        let _ = git.check(&["worktree", "remove", "--force", "--force", path.as_str()]);
        let _ = git.check(&["worktree", "prune"]);
    }
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| {
            GitError::new(
                &["worktree", "remove"],
                path,
                GitErrorKind::RemoveWorktree(e),
            )
        })?;
    }
    Ok(())
}

/// What a staging worktree's name adds to the final name.
const STAGING: &str = ".adding-";

/// A suffix no other process uses at the same time: this process's id and
/// the time.
fn staging_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Commits everything in the worktree `path` (tracked edits, deletions,
/// untracked files) on top of `base` with `message`, under Orcho's own
/// identity, and returns the commit. The commit lives in the repository's
/// shared object store, so the target checkout can name it too.
///
/// Idempotent: when `HEAD` already is a commit with `message` whose parent
/// is `base` (a previous process made it), that commit is returned.
///
/// # Errors
///
/// A [`GitError`] when `HEAD` is neither `base` nor such a commit, or git
/// refuses.
pub fn commit_all(path: &Utf8Path, base: &str, message: &str) -> Result<String, GitError> {
    let git = Git::new(path);
    let base = git.rev_parse(base)?;
    let head = git.head()?;
    if head != base {
        let parent = git.rev_parse(&format!("{head}^")).ok();
        let subject = git.run(&["log", "-1", "--format=%B", &head])?;
        if parent.as_deref() == Some(base.as_str())
            && String::from_utf8_lossy(&subject).trim() == message.trim()
        {
            return Ok(head);
        }
        return Err(GitError::new(
            &["commit"],
            path,
            GitErrorKind::Failed {
                status: "refused".to_owned(),
                stderr: format!("the worktree is at {head}, not at {base}"),
            },
        ));
    }
    git.run(&["add", "--all", "--", "."])?;
    git.run(&[
        "-c",
        "user.name=Orcho",
        "-c",
        "user.email=orcho@localhost",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "-m",
        message,
    ])?;
    git.head()
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
    let patch = crate::git::absolute(patch).unwrap_or_else(|| patch.to_owned());
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
