//! Pre-run intake on real, dirty git repositories: detection, include,
//! exclude, commit, halt, a seed that does not apply, decision replay and
//! conflict, the documents on disk.

use std::sync::Arc;

use camino::Utf8PathBuf;
use orcho_core::{FixedClock, RunId, error_chain};
use orcho_delivery::{ChangeKind, IntakeOutcome, IntakeRefusal, Intakes, detect_intake};
use orcho_handoff::{
    IntakeAction,
    decision::{DecidedBy, DecisionRequest},
    intake::IntakeChoice,
    point::PointErrorKind,
};

use crate::{
    Result,
    fixtures::T0,
    repo::{Repo, commit_all, git, head, read, repo, status, write},
};

fn run() -> RunId {
    "run-1".parse().expect("run id")
}

/// The store lives inside the checkout, as `.orcho/` does by default.
fn store(r: &Repo) -> Utf8PathBuf {
    r.target.join(".orcho")
}

/// `git status` of the checkout, without the store's own files.
fn user_status(r: &Repo) -> String {
    status(&r.target)
        .lines()
        .filter(|l| !l.contains(" .orcho/"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn intakes(r: &Repo) -> Intakes {
    Intakes::in_dir(
        store(r),
        Arc::new(FixedClock::new(T0.parse().expect("time"))),
    )
}

/// A dirty checkout: a modified file, a staged new file, a deleted file,
/// and untracked text and binary files.
fn dirty(r: &Repo) {
    write(
        &r.target.join("src/lib.rs"),
        b"pub fn parse() -> Vec<u8> {\n    vec![]\n}\n",
    );
    write(&r.target.join("src/staged.rs"), b"// staged\n");
    git(&r.target, &["add", "src/staged.rs"]);
    std::fs::remove_file(r.target.join("old.txt")).expect("remove");
    write(&r.target.join("notes/todo.md"), b"- empty input\n");
    write(&r.target.join("fixture.bin"), &[0, 1, 2, 255, 0, 7]);
    // Files of the store are never counted.
    write(&store(r).join("runs/other/state.json"), b"{}\n");
}

fn decide(
    r: &Repo,
    i: &Intakes,
    choice: IntakeChoice,
) -> Result<orcho_handoff::decision::RecordedDecision<IntakeChoice>> {
    let report = detect_intake(&r.target, &store(r))?;
    i.open(&run(), &report)?;
    Ok(i.decide(&run(), DecisionRequest::new(choice, DecidedBy::Operator))?)
}

#[test]
fn detection_reports_tracked_edits_untracked_files_and_their_count() -> Result {
    let r = repo();
    assert!(detect_intake(&r.target, &store(&r))?.is_clean());
    dirty(&r);
    let report = detect_intake(&r.target, &store(&r))?;
    let tracked: Vec<_> = report
        .tracked()
        .iter()
        .map(|t| (t.path().as_str(), t.kind(), t.is_staged()))
        .collect();
    assert_eq!(
        tracked,
        [
            ("old.txt", ChangeKind::Deleted, false),
            ("src/lib.rs", ChangeKind::Modified, false),
            ("src/staged.rs", ChangeKind::Added, true),
        ]
    );
    let untracked: Vec<_> = report.untracked().iter().map(|p| p.as_str()).collect();
    assert_eq!(untracked, ["fixture.bin", "notes/todo.md"]);
    assert_eq!((report.untracked_count(), report.count()), (2, 5));
    assert_eq!(report.head(), head(&r.target));
    Ok(())
}

#[test]
fn include_carries_the_changes_into_the_worktree_without_touching_the_users_index() -> Result {
    let r = repo();
    dirty(&r);
    let before = user_status(&r);
    let i = intakes(&r);
    let decision = decide(&r, &i, IntakeChoice::new(IntakeAction::Include))?;
    let outcome = i.apply(&decision)?;
    let IntakeOutcome::Included { start, seed } = &outcome else {
        panic!("include, got {outcome:?}");
    };
    assert_eq!(start, &head(&r.target));
    assert_eq!(seed.files(), 5);
    assert!(
        seed.path().starts_with(store(&r)),
        "the seed patch is kept with the run"
    );
    // The user's index and files are exactly as they were.
    assert_eq!(user_status(&r), before);

    // The engine creates the run's worktree at the start commit, then seeds it.
    let wt = r.root.join("run-worktree");
    git(
        &r.target,
        &["worktree", "add", "--quiet", "--detach", wt.as_str(), start],
    );
    i.seed(&run(), &wt)?;
    for file in [
        "src/lib.rs",
        "src/staged.rs",
        "notes/todo.md",
        "fixture.bin",
    ] {
        assert_eq!(read(&wt.join(file)), read(&r.target.join(file)), "{file}");
    }
    assert!(!wt.join("old.txt").exists());
    assert!(!wt.join(".orcho").exists(), "the store is not carried");
    // Seeding again (a restarted engine) leaves the seeded worktree as is.
    i.seed(&run(), &wt)?;
    assert_eq!(
        read(&wt.join("src/lib.rs")),
        read(&r.target.join("src/lib.rs"))
    );
    // Applying again returns the recorded outcome.
    assert_eq!(i.apply(&decision)?, outcome);
    Ok(())
}

#[test]
fn an_include_whose_patch_does_not_apply_is_a_typed_error_not_a_start_from_head() -> Result {
    let r = repo();
    // The run's worktree starts from a commit where `src/lib.rs` differs.
    let wt = r.root.join("run-worktree");
    git(
        &r.target,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            wt.as_str(),
            "HEAD",
        ],
    );
    write(
        &wt.join("src/lib.rs"),
        b"pub fn parse() -> Vec<u8> {\n    unimplemented!()\n}\n",
    );
    commit_all(&wt, "diverged");
    let wt_head = head(&wt);
    let wt_bytes = read(&wt.join("src/lib.rs"));

    dirty(&r);
    let i = intakes(&r);
    let decision = decide(&r, &i, IntakeChoice::new(IntakeAction::Include))?;
    i.apply(&decision)?;
    let err = i.seed(&run(), &wt).unwrap_err();
    assert!(
        err.is_refused(IntakeRefusal::is_seed_conflict),
        "{}",
        error_chain(&err)
    );
    insta::assert_snapshot!(r.redact(&error_chain(&err)), @"
    cannot seed the worktree of run `run-1`: caused by: the seed patch does not apply to the worktree `<tmp>/run-worktree`: error: patch failed: src/lib.rs:1
    error: src/lib.rs: patch does not apply
    ");
    // The worktree was not touched.
    assert_eq!(head(&wt), wt_head);
    assert_eq!(read(&wt.join("src/lib.rs")), wt_bytes);
    assert_eq!(status(&wt), "");
    Ok(())
}

#[test]
fn exclude_starts_from_head_and_leaves_the_changes_in_the_checkout() -> Result {
    let r = repo();
    dirty(&r);
    let before = (head(&r.target), user_status(&r));
    let i = intakes(&r);
    let decision = decide(&r, &i, IntakeChoice::new(IntakeAction::Exclude))?;
    let outcome = i.apply(&decision)?;
    assert_eq!(
        outcome,
        IntakeOutcome::Excluded {
            start: before.0.clone()
        }
    );
    assert_eq!((head(&r.target), user_status(&r)), before);
    let err = i.seed(&run(), &r.worktree).unwrap_err();
    assert!(matches!(err.refusal(), Some(IntakeRefusal::NotIncluded)));
    Ok(())
}

#[test]
fn commit_commits_the_changes_first() -> Result {
    let r = repo();
    dirty(&r);
    let before = head(&r.target);
    let i = intakes(&r);
    let decision = decide(
        &r,
        &i,
        IntakeChoice::commit_with_message("wip before the run")?,
    )?;
    let outcome = i.apply(&decision)?;
    let IntakeOutcome::Committed { commit } = &outcome else {
        panic!("commit, got {outcome:?}");
    };
    assert_eq!(commit, &head(&r.target));
    assert_eq!(outcome.start(), Some(commit.as_str()));
    assert_eq!(git(&r.target, &["rev-parse", "HEAD~1"]).trim(), before);
    assert_eq!(
        git(&r.target, &["log", "-1", "--format=%s"]).trim(),
        "wip before the run"
    );
    assert_eq!(
        git(&r.target, &["show", "--name-status", "--format=", "HEAD"]),
        "A\tfixture.bin\nA\tnotes/todo.md\nD\told.txt\nM\tsrc/lib.rs\nA\tsrc/staged.rs\n"
    );
    // Only the store is left uncommitted.
    assert!(
        status(&r.target)
            .lines()
            .all(|l| l.starts_with("?? .orcho/")),
        "{}",
        status(&r.target)
    );
    Ok(())
}

#[test]
fn a_commit_made_by_a_process_that_died_before_recording_it_is_adopted() -> Result {
    let r = repo();
    dirty(&r);
    let before = head(&r.target);
    let i = intakes(&r);
    let decision = decide(
        &r,
        &i,
        IntakeChoice::commit_with_message("wip before the run")?,
    )?;
    // The process committed, then died before the outcome was written.
    git(&r.target, &["add", "--all", "--", ".", ":(exclude).orcho"]);
    git(
        &r.target,
        &["commit", "--quiet", "-m", "wip before the run"],
    );
    let committed = head(&r.target);
    let outcome = i.apply(&decision)?;
    assert_eq!(
        outcome,
        IntakeOutcome::Committed { commit: committed },
        "the commit is adopted, not made again"
    );
    assert_eq!(git(&r.target, &["rev-parse", "HEAD~1"]).trim(), before);
    Ok(())
}

#[test]
fn halt_changes_nothing() -> Result {
    let r = repo();
    dirty(&r);
    let before = (head(&r.target), user_status(&r));
    let i = intakes(&r);
    let decision = decide(&r, &i, IntakeChoice::new(IntakeAction::Halt))?;
    let outcome = i.apply(&decision)?;
    assert_eq!(outcome, IntakeOutcome::Halted);
    assert_eq!(outcome.start(), None);
    assert_eq!((head(&r.target), user_status(&r)), before);
    Ok(())
}

#[test]
fn intake_decisions_replay_and_conflict() -> Result {
    let r = repo();
    dirty(&r);
    let i = intakes(&r);
    let first = decide(&r, &i, IntakeChoice::new(IntakeAction::Exclude))?;
    let again = i.decide(
        &run(),
        DecisionRequest::new(
            IntakeChoice::new(IntakeAction::Exclude),
            DecidedBy::Operator,
        ),
    )?;
    assert!(again.is_replay());
    assert_eq!(again.decision(), first.decision());
    let err = i
        .decide(
            &run(),
            DecisionRequest::new(
                IntakeChoice::new(IntakeAction::Include),
                DecidedBy::Operator,
            ),
        )
        .unwrap_err();
    assert!(err.is_conflict());
    // A decision before the question was asked is refused.
    let other: RunId = "run-2".parse()?;
    let err = i
        .decide(
            &other,
            DecisionRequest::new(IntakeChoice::new(IntakeAction::Halt), DecidedBy::Operator),
        )
        .unwrap_err();
    assert!(err.is_not_found());
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the intake question of run `run-2`: caused by: no intake question was asked for the run");
    // Asking the same question again is a no-op; a different one is refused.
    i.open(&run(), &detect_intake(&r.target, &store(&r))?)?;
    write(&r.target.join("more.txt"), b"more\n");
    let err = i
        .open(&run(), &detect_intake(&r.target, &store(&r))?)
        .unwrap_err();
    assert!(err.is_already_open());
    Ok(())
}

#[test]
fn intake_documents_on_disk() -> Result {
    let r = repo();
    dirty(&r);
    let i = intakes(&r);
    let decision = decide(&r, &i, IntakeChoice::new(IntakeAction::Include))?;
    insta::assert_snapshot!(
        "intake_question",
        r.redact(&String::from_utf8(read(&i.question_path(&run())))?)
    );
    insta::assert_snapshot!("intake_decision", String::from_utf8(read(decision.path()))?);
    i.apply(&decision)?;
    insta::assert_snapshot!(
        "intake_outcome_include",
        r.redact(&String::from_utf8(read(&i.outcome_path(&run())))?)
    );
    Ok(())
}

#[test]
fn intake_documents_from_a_newer_orcho_are_refused() -> Result {
    let r = repo();
    let i = intakes(&r);
    write(
        &i.question_path(&run()),
        br#"{"schema": 2, "run_id": "run-1", "stash": []}"#,
    );
    let err = i.question(&run()).unwrap_err();
    assert!(
        matches!(err.kind(), PointErrorKind::Store(e) if e.is_too_new()),
        "{}",
        error_chain(&err)
    );
    write(
        &i.outcome_path(&run()),
        br#"{"schema": 2, "run_id": "run-1", "action": "stash"}"#,
    );
    assert!(i.outcome(&run()).is_err());
    Ok(())
}
