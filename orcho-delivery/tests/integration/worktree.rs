//! Retained worktrees: creating one, committing its seed and applying a
//! patch are each safe to repeat after a process died half-way.

use orcho_delivery::worktree;

use crate::{
    Result,
    repo::{git, head, read, repo, write},
};

#[test]
fn create_is_idempotent_and_accepts_a_worktree_that_descends_from_its_start() -> Result {
    let r = repo();
    let start = head(&r.target);
    let path = r.root.join("run-worktree");
    worktree::create(&r.target, &path, &start)?;
    worktree::create(&r.target, &path, &start)?;
    assert_eq!(head(&path), start);

    write(&path.join("notes.txt"), b"included\n");
    let seeded = worktree::commit_all(&path, &start, "included at intake")?;
    assert_ne!(seeded, start);
    assert_eq!(git(&path, &["rev-parse", "HEAD~1"]).trim(), start);
    // Again after a crash: the same commit, not a second one.
    assert_eq!(
        worktree::commit_all(&path, &start, "included at intake")?,
        seeded
    );
    worktree::create(&r.target, &path, &start)?;
    assert_eq!(head(&path), seeded, "a descendant of the start is kept");

    // A worktree at an unrelated commit is refused, not reused.
    let err = worktree::create(&r.target, &path, &seeded_parentless(&r.target))
        .expect_err("another start");
    assert!(
        orcho_core::error_chain(&err).contains("already a worktree"),
        "{err}"
    );
    Ok(())
}

/// A commit on its own branch that is not an ancestor of the worktree.
fn seeded_parentless(target: &camino::Utf8Path) -> String {
    git(target, &["checkout", "--quiet", "--orphan", "elsewhere"]);
    write(&target.join("other.txt"), b"other\n");
    git(target, &["add", "other.txt"]);
    git(target, &["commit", "--quiet", "-m", "elsewhere"]);
    head(target)
}

#[test]
fn a_commit_on_top_of_another_base_is_refused() -> Result {
    let r = repo();
    let start = head(&r.target);
    let path = r.root.join("run-worktree");
    worktree::create(&r.target, &path, &start)?;
    write(&path.join("a.txt"), b"a\n");
    worktree::commit_all(&path, &start, "first")?;
    let err = worktree::commit_all(&path, &start, "a different message")
        .expect_err("HEAD is not the base, nor this commit");
    assert!(orcho_core::error_chain(&err).contains("not at"), "{err}");
    Ok(())
}

#[test]
fn a_patch_applied_twice_is_applied_once() -> Result {
    let r = repo();
    write(&r.worktree.join("src/lib.rs"), b"pub fn parse() {}\n");
    let patch = git(&r.worktree, &["diff", "--binary"]);
    git(&r.worktree, &["checkout", "--quiet", "--", "."]);
    let patch_path = r.root.join("run.patch");
    write(&patch_path, patch.as_bytes());
    assert!(worktree::apply_patch(&r.worktree, &patch_path)?);
    assert!(!worktree::apply_patch(&r.worktree, &patch_path)?);
    assert_eq!(read(&r.worktree.join("src/lib.rs")), b"pub fn parse() {}\n");
    Ok(())
}

/// What a process killed during `git worktree add` leaves behind: its own
/// staging worktree (perhaps complete), or a worktree whose `.git` leads to
/// metadata its orphaned `git` removed. Neither stops the next process.
#[test]
fn leftovers_of_a_killed_worktree_add_are_cleared_before_creating_again() -> Result {
    let r = repo();
    let start = head(&r.target);
    let path = r.root.join("run-1");
    // A complete staging worktree of a killed process, never moved into place.
    let staging = r.root.join("run-1.adding-999-1");
    git(
        &r.target,
        &[
            "worktree",
            "add",
            "--detach",
            "--quiet",
            staging.as_str(),
            &start,
        ],
    );
    // And a `.git` at the final path that leads nowhere.
    write(
        &path.join(".git"),
        format!("gitdir: {}/.git/worktrees/run-1\n", r.target).as_bytes(),
    );
    worktree::create(&r.target, &path, &start)?;
    assert_eq!(head(&path), start);
    assert!(!staging.exists(), "the staging worktree is removed");
    let listed = git(&r.target, &["worktree", "list", "--porcelain"]);
    assert!(!listed.contains("run-1.adding-999-1"), "{listed}");
    assert!(listed.contains(path.as_str()), "{listed}");
    let names: Vec<String> = r
        .root
        .read_dir_utf8()?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_owned()))
        .filter(|n| n.starts_with("run-1"))
        .collect();
    assert_eq!(names, ["run-1"], "no staging directory is left");
    Ok(())
}
