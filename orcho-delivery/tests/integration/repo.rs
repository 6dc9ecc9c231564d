//! Real git repositories in temporary directories: a target checkout and a
//! retained worktree (`git worktree add`) that holds a run's result.
//!
//! Tests may spawn directly; the library goes through `orcho_receipts::exec`.
//! Commits made here carry fixed dates, so that commit ids are stable.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::fs;

pub(crate) struct Repo {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: Utf8PathBuf,
    pub(crate) target: Utf8PathBuf,
    pub(crate) worktree: Utf8PathBuf,
    pub(crate) store: Utf8PathBuf,
}

#[expect(
    clippy::disallowed_methods,
    reason = "tests set up repositories with git directly"
)]
pub(crate) fn git_out(dir: &Utf8Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-11-21T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-21T12:00:00Z")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .output()
        .expect("git runs")
}

/// Runs git and returns its standard output; panics on failure (a broken
/// fixture, not a test result).
pub(crate) fn git(dir: &Utf8Path, args: &[&str]) -> String {
    let out = git_out(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn write(path: &Utf8Path, bytes: &[u8]) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("dir");
    }
    fs::write_atomic(path, bytes).expect("write");
}

pub(crate) fn read(path: &Utf8Path) -> Vec<u8> {
    std::fs::read(path).expect("read")
}

pub(crate) fn status(dir: &Utf8Path) -> String {
    git(dir, &["status", "--porcelain=v1", "--untracked-files=all"])
}

pub(crate) fn head(dir: &Utf8Path) -> String {
    git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

pub(crate) fn init(dir: &Utf8Path) {
    fs::create_dir_all(dir).expect("dir");
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    git(dir, &["config", "user.name", "Orcho Test"]);
    git(dir, &["config", "user.email", "test@orcho.invalid"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
}

pub(crate) fn commit_all(dir: &Utf8Path, message: &str) {
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "-m", message]);
}

/// A target with three committed files, and a retained worktree at its
/// `HEAD` (detached).
pub(crate) fn repo() -> Repo {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let target = root.join("target");
    init(&target);
    write(
        &target.join("src/lib.rs"),
        b"pub fn parse() -> Vec<u8> {\n    todo!()\n}\n",
    );
    write(&target.join("README.md"), b"# demo\n");
    write(&target.join("old.txt"), b"to be removed\n");
    commit_all(&target, "initial");
    let worktree = root.join("worktree");
    git(
        &target,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            worktree.as_str(),
            "HEAD",
        ],
    );
    Repo {
        _dir: dir,
        store: root.join("store"),
        root,
        target,
        worktree,
    }
}

impl Repo {
    /// The run's work: an edit, a deletion, an untracked text file and an
    /// untracked binary file.
    pub(crate) fn run_changes(&self) {
        write(
            &self.worktree.join("src/lib.rs"),
            b"pub fn parse() -> Vec<u8> {\n    Vec::new()\n}\n",
        );
        std::fs::remove_file(self.worktree.join("old.txt")).expect("remove");
        write(&self.worktree.join("src/empty.rs"), b"// empty input\n");
        write(
            &self.worktree.join("logo.bin"),
            &[0, 159, 146, 150, 0, 255, 1],
        );
    }

    /// Replaces the temporary root in text, for snapshots.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(self.root.as_str(), "<tmp>")
    }
}
