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

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::exec::{self, BaseEnv, ExecRequest};

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
        remove_settled(dir)
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

/// Removes `dir` and everything in it. A directory left by a process that
/// was killed while `git worktree add` filled it may still be written to
/// by that orphaned git for a moment; removing it then fails with "not
/// empty", so it is tried again for up to two seconds.
fn remove_settled(dir: &Utf8Path) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        match std::fs::remove_dir_all(dir) {
            Err(e)
                if e.kind() == std::io::ErrorKind::DirectoryNotEmpty
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            other => return other,
        }
    }
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

/// What a run's worktree at `path` changed since `base`, as the delivery
/// gate would show it (untracked files git does not ignore included),
/// without touching the worktree or its index: for an advisor, or a host's
/// status, before the gate opens.
///
/// # Errors
///
/// A [`GitError`] when git fails.
pub fn diff_summary(path: &Utf8Path, base: &str) -> Result<crate::DiffSummary, GitError> {
    let git = Git::new(path);
    let base = git.rev_parse(base)?;
    let (_, numstat) = git.snapshot_diff(&base, None)?;
    let mut files: Vec<crate::FileChange> = numstat
        .into_iter()
        .map(|n| crate::FileChange {
            untracked: false,
            path: n.path,
            lines: n.lines,
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(crate::DiffSummary { files })
}

/// What the working tree at `path` changed since `base` (tracked edits,
/// deletions, untracked files git does not ignore), as a unified diff for a
/// reader: binary files are named, not shown. Computed in a private index;
/// the tree and its index are not touched. Returns the commit `base`
/// resolved to, and the diff.
///
/// # Errors
///
/// A [`GitError`] when git fails (`path` is not a git tree, `base` does not
/// resolve).
pub fn diff_text(path: &Utf8Path, base: &str) -> Result<(String, Vec<u8>), GitError> {
    let git = Git::new(path);
    let base = git.rev_parse(base)?;
    let (private, _tmp) = git.private_index(&base)?;
    private.add_all_but(&base, None)?;
    let diff = private.run(&[
        "diff",
        "--cached",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        &base,
    ])?;
    Ok((base, diff))
}

/// The content of the working tree at `path` as git sees it (tracked and
/// untracked files, not what git ignores), written to the repository's
/// object store as a tree; its id. Computed in a private index: the tree
/// and its own index are not touched.
///
/// # Errors
///
/// A [`GitError`] when git fails (`path` is not in a git repository).
pub fn tree_id(path: &Utf8Path) -> Result<String, GitError> {
    let git = Git::new(path);
    let (private, _tmp) = git.fresh_index()?;
    private.run(&["add", "--all"])?;
    let id = private.run(&["write-tree"])?;
    Ok(String::from_utf8_lossy(&id).trim().to_owned())
}

/// What changed in a working tree between two of its [`tree_id`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    /// The paths that changed, added or were removed, relative to the tree.
    pub files: Vec<Utf8PathBuf>,
    /// The change as a binary patch (`git apply` takes it).
    pub patch: Vec<u8>,
}

/// What changed in the working tree at `path` from tree `before` to tree
/// `after`; `None` when nothing did.
///
/// # Errors
///
/// A [`GitError`] when git fails.
pub fn tree_change(
    path: &Utf8Path,
    before: &str,
    after: &str,
) -> Result<Option<TreeChange>, GitError> {
    if before == after {
        return Ok(None);
    }
    let git = Git::new(path);
    let names = git.run(&["diff", "--name-only", "-z", "--no-renames", before, after])?;
    let files: Vec<Utf8PathBuf> = names
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| Utf8PathBuf::from(String::from_utf8_lossy(n).into_owned()))
        .collect();
    if files.is_empty() {
        return Ok(None);
    }
    let patch = git.run(&[
        "diff",
        "--binary",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        before,
        after,
    ])?;
    Ok(Some(TreeChange { files, patch }))
}

/// Takes `change` back out of the working tree at `path` (its patch,
/// applied in reverse to the files; the index is not touched), so that
/// the tree is as it was before it.
///
/// # Errors
///
/// A [`GitError`] when the patch no longer reverses cleanly (the tree
/// changed again since) or git cannot be run; the tree is not touched.
pub fn take_back(path: &Utf8Path, change: &TreeChange) -> Result<(), GitError> {
    let file = crate::git::PatchFile::write(&change.patch)
        .map_err(|e| GitError::new(&["apply"], path, GitErrorKind::TempPatch(e)))?;
    let git = Git::new(path);
    let patch = file.path.as_str();
    git.run(&["apply", "--check", "-R", "--binary", patch])?;
    git.run(&["apply", "-R", "--binary", patch])?;
    Ok(())
}

/// Applies the binary patch `patch` to the worktree `path`
/// (`git apply --check`, then `git apply`). A worktree that already has the
/// patch (it applies in reverse) is left as is. Returns whether the patch
/// was applied now.
///
/// # Errors
///
/// A [`GitError`] when the patch applies neither way (the worktree is not
/// touched) or git cannot be run.
pub fn apply_patch_bytes(path: &Utf8Path, patch: &[u8]) -> Result<bool, GitError> {
    if patch.is_empty() {
        return Ok(false);
    }
    let file = crate::git::PatchFile::write(patch)
        .map_err(|e| GitError::new(&["apply"], path, GitErrorKind::TempPatch(e)))?;
    apply_patch(path, &file.path)
}

/// [`apply_patch_bytes`] of the patch in the file `patch`.
///
/// # Errors
///
/// As [`apply_patch_bytes`].
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

/// How long one `run` step of a worktree's setup or teardown may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A worktree's setup or teardown step failed.
#[derive(Debug, thiserror::Error)]
#[error("worktree {stage} step {index} (`{step}`) failed")]
pub struct SetupError {
    stage: &'static str,
    index: usize,
    step: String,
    #[source]
    kind: SetupErrorKind,
}

/// Why a setup or teardown step failed; see [`SetupError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupErrorKind {
    /// What to link or copy is not in the checkout.
    #[error("`{0}` is not in the checkout")]
    Missing(Utf8PathBuf),
    /// The path is tracked, or git would list it in the worktree: linked
    /// or copied in, it would become part of the run's diff.
    #[error(
        "git does not ignore `{0}`, so it would become part of the run's diff; add it to .gitignore, or let the run create it"
    )]
    NotIgnored(Utf8PathBuf),
    /// A file could not be linked or copied.
    #[error("cannot write `{path}`")]
    Io {
        /// What could not be written.
        path: Utf8PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A command could not run, or failed.
    #[error("{0}")]
    Run(String),
    /// Git failed.
    #[error(transparent)]
    Git(Box<GitError>),
}

impl SetupError {
    /// What failed.
    pub fn kind(&self) -> &SetupErrorKind {
        &self.kind
    }
}

/// Runs `steps` (a contract's `worktree.setup`) in the worktree `path` of
/// the `target` checkout: links and copies from the target, commands in
/// the worktree with `env`. Safe to repeat: a link or copy already made is
/// made again the same.
///
/// # Errors
///
/// The first step that fails, and why.
pub fn setup(
    target: &Utf8Path,
    path: &Utf8Path,
    steps: &[orcho_receipts::SetupStep],
    env: &BaseEnv,
) -> Result<(), SetupError> {
    run_steps("setup", target, path, steps, env)
}

/// Runs `steps` (a contract's `worktree.teardown`) in the worktree `path`.
///
/// # Errors
///
/// The first step that fails, and why.
pub fn teardown(
    target: &Utf8Path,
    path: &Utf8Path,
    steps: &[orcho_receipts::SetupStep],
    env: &BaseEnv,
) -> Result<(), SetupError> {
    run_steps("teardown", target, path, steps, env)
}

fn run_steps(
    stage: &'static str,
    target: &Utf8Path,
    path: &Utf8Path,
    steps: &[orcho_receipts::SetupStep],
    env: &BaseEnv,
) -> Result<(), SetupError> {
    use orcho_receipts::SetupStep;
    for (i, step) in steps.iter().enumerate() {
        let fail = |kind| SetupError {
            stage,
            index: i + 1,
            step: describe(step),
            kind,
        };
        match step {
            SetupStep::Link(rel) | SetupStep::Copy(rel) => {
                let source = target.join(rel);
                if !source.exists() {
                    return Err(fail(SetupErrorKind::Missing(rel.clone())));
                }
                let git = Git::new(path);
                let probe = if source.is_dir() {
                    format!("{rel}/")
                } else {
                    rel.to_string()
                };
                let ignored = git
                    .check(&["check-ignore", "--quiet", "--no-index", &probe])
                    .map_err(|e| fail(SetupErrorKind::Git(Box::new(e))))?
                    .is_ok();
                if !ignored {
                    return Err(fail(SetupErrorKind::NotIgnored(rel.clone())));
                }
                let dest = path.join(rel);
                let made = if matches!(step, SetupStep::Link(_)) {
                    link(&source, &dest)
                } else {
                    copy(&source, &dest)
                };
                made.map_err(|source| fail(SetupErrorKind::Io { path: dest, source }))?;
            }
            SetupStep::Run(argv) => {
                let request = ExecRequest::new(argv.iter().map(String::as_str))
                    .cwd(path.to_owned())
                    .envs(env.clone())
                    .timeout(SETUP_TIMEOUT);
                let outcome = exec::run(&request)
                    .map_err(|e| fail(SetupErrorKind::Run(orcho_core::error_chain(&e))))?;
                if !outcome.status.success() {
                    let tail = format!(
                        "{}{}",
                        outcome.stdout.tail_lossy(),
                        outcome.stderr.tail_lossy()
                    );
                    return Err(fail(SetupErrorKind::Run(format!(
                        "{}: {}",
                        outcome.status,
                        tail.trim()
                    ))));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn describe(step: &orcho_receipts::SetupStep) -> String {
    use orcho_receipts::SetupStep;
    match step {
        SetupStep::Link(p) => format!("link: {p}"),
        SetupStep::Copy(p) => format!("copy: {p}"),
        SetupStep::Run(argv) => format!("run: {}", argv.join(" ")),
        _ => "unknown step".to_owned(),
    }
}

/// Links `source` at `dest`: a file as a symlink, a directory as a
/// directory of symlinks to its entries (a directory-only ignore pattern
/// matches it, where it would not match a symlink).
fn link(source: &Utf8Path, dest: &Utf8Path) -> std::io::Result<()> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if source.is_dir() {
        if dest.is_symlink() || dest.is_file() {
            std::fs::remove_file(dest)?;
        }
        std::fs::create_dir_all(dest)?;
        for entry in source.read_dir_utf8()? {
            let entry = entry?;
            link_one(entry.path(), &dest.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        link_one(source, dest)
    }
}

fn link_one(source: &Utf8Path, dest: &Utf8Path) -> std::io::Result<()> {
    if dest.is_symlink() || dest.is_file() {
        std::fs::remove_file(dest)?;
    } else if dest.is_dir() {
        std::fs::remove_dir_all(dest)?;
    }
    std::os::unix::fs::symlink(source, dest)
}

/// Copies `source` to `dest`, a directory with everything under it
/// (symlinks as symlinks).
fn copy(source: &Utf8Path, dest: &Utf8Path) -> std::io::Result<()> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if source.is_symlink() {
        if dest.is_symlink() || dest.is_file() {
            std::fs::remove_file(dest)?;
        }
        return std::os::unix::fs::symlink(std::fs::read_link(source)?, dest);
    }
    if source.is_dir() {
        std::fs::create_dir_all(dest)?;
        for entry in source.read_dir_utf8()? {
            let entry = entry?;
            copy(entry.path(), &dest.join(entry.file_name()))?;
        }
        return Ok(());
    }
    std::fs::copy(source, dest).map(drop)
}
