//! The delivery gate on real git repositories: approve, apply, fix, skip,
//! halt; conflicting targets; missing receipts; replay and conflict of
//! decisions; the documents on disk.

use std::sync::Arc;

use orcho_core::{FixedClock, RunId, Verdict, error_chain};
use orcho_delivery::{
    DeliveryBlock, DeliveryGates, DeliveryOutcome, DeliveryRefusal, DeliverySpec, TargetStatus,
};
use orcho_handoff::{
    DeliveryAction,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
    point::{PointErrorKind, PointState},
};
use orcho_receipts::{CommandReadiness, ReadinessSummary, ReceiptStatus};

use crate::{
    Result,
    fixtures::{T0, finding},
    repo::{Repo, git, head, read, repo, status, write},
};

pub(crate) fn gates(r: &Repo) -> DeliveryGates {
    let clock = Arc::new(FixedClock::new(T0.parse().expect("time")));
    DeliveryGates::in_dir(r.store.clone(), clock)
}

pub(crate) fn ready() -> ReadinessSummary {
    ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0)
}

pub(crate) fn run() -> RunId {
    "run-1".parse().expect("run id")
}

pub(crate) fn spec(r: &Repo, verdict: Verdict) -> DeliverySpec {
    DeliverySpec::new(
        run(),
        verdict,
        r.worktree.clone(),
        "HEAD",
        r.target.clone(),
        &ready(),
    )
    .with_release_summary("Parse empty input as an empty list")
}

fn operator(choice: DeliveryChoice) -> DecisionRequest<DeliveryChoice> {
    DecisionRequest::new(choice, DecidedBy::Operator)
}

#[test]
fn the_gate_summarises_the_runs_diff() -> Result {
    let r = repo();
    r.run_changes();
    let gate = gates(&r).open(spec(&r, Verdict::Approved))?;
    let diff = gate.diff();
    let files: Vec<_> = diff.files().iter().map(|f| f.path().as_str()).collect();
    assert_eq!(files, ["logo.bin", "old.txt", "src/empty.rs", "src/lib.rs"]);
    assert_eq!(
        (diff.files_changed(), diff.insertions(), diff.deletions()),
        (4, 2, 2)
    );
    let untracked: Vec<_> = diff.untracked().map(|p| p.as_str()).collect();
    assert_eq!(untracked, ["logo.bin", "src/empty.rs"]);
    assert!(diff.files()[0].is_binary());
    assert_eq!(
        gate.available_actions().to_string(),
        "approve, apply, skip, halt"
    );
    assert_eq!(gate.base(), head(&r.target));
    // Capturing the diff did not touch the worktree's index.
    assert!(status(&r.worktree).contains("?? src/empty.rs"));
    // A second gate for the run is refused.
    assert!(
        gates(&r)
            .open(spec(&r, Verdict::Approved))
            .unwrap_err()
            .is_already_open()
    );
    Ok(())
}

#[test]
fn approve_commits_exactly_the_runs_diff() -> Result {
    let r = repo();
    r.run_changes();
    // The user's own work in the target: a staged file and an untracked one,
    // neither touched by the run.
    write(&r.target.join("mine.txt"), b"my staged work\n");
    git(&r.target, &["add", "mine.txt"]);
    write(&r.target.join("scratch.txt"), b"notes\n");
    let before = head(&r.target);

    let gates = gates(&r);
    let gate = gates.open(spec(&r, Verdict::Approved))?;
    assert!(matches!(
        gates.target_status(&gate)?,
        TargetStatus::Dirty { .. }
    ));
    let decision = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    let DeliveryOutcome::Committed { commit, message } = gates.deliver(&decision)? else {
        panic!("approve must commit");
    };
    assert_eq!(commit, head(&r.target));
    assert_eq!(message, "Parse empty input as an empty list");
    assert_eq!(git(&r.target, &["rev-parse", "HEAD~1"]).trim(), before);
    // Exactly the run's files are in the commit…
    let committed = git(&r.target, &["show", "--name-status", "--format=", "HEAD"]);
    assert_eq!(
        committed,
        "A\tlogo.bin\nD\told.txt\nA\tsrc/empty.rs\nM\tsrc/lib.rs\n"
    );
    // …with the worktree's bytes, binary included.
    for file in ["logo.bin", "src/empty.rs", "src/lib.rs"] {
        assert_eq!(
            read(&r.target.join(file)),
            read(&r.worktree.join(file)),
            "{file}"
        );
    }
    assert!(!r.target.join("old.txt").exists());
    // The user's work is where it was: staged, untracked, not committed.
    assert_eq!(status(&r.target), "A  mine.txt\n?? scratch.txt\n");
    assert_eq!(
        git(&r.target, &["log", "-1", "--format=%s"]).trim(),
        "Parse empty input as an empty list"
    );

    // Delivering again returns the recorded outcome and changes nothing.
    let again = gates.deliver(&decision)?;
    assert_eq!(again.action(), DeliveryAction::Approve);
    assert_eq!(head(&r.target), commit);
    assert!(matches!(gates.state(&run())?, PointState::Done { .. }));
    Ok(())
}

#[test]
fn approve_uses_the_operators_message() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(
        &run(),
        operator(DeliveryChoice::approve_with_message("parse: empty input")?),
    )?;
    gates.deliver(&decision)?;
    assert_eq!(
        git(&r.target, &["log", "-1", "--format=%s"]).trim(),
        "parse: empty input"
    );
    Ok(())
}

#[test]
fn apply_leaves_the_diff_uncommitted() -> Result {
    let r = repo();
    r.run_changes();
    let before = head(&r.target);
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::apply()))?;
    assert_eq!(gates.deliver(&decision)?, DeliveryOutcome::Applied);
    assert_eq!(head(&r.target), before, "apply does not commit");
    assert_eq!(
        status(&r.target),
        " D old.txt\n M src/lib.rs\n?? logo.bin\n?? src/empty.rs\n"
    );
    for file in ["logo.bin", "src/empty.rs", "src/lib.rs"] {
        assert_eq!(
            read(&r.target.join(file)),
            read(&r.worktree.join(file)),
            "{file}"
        );
    }
    // Delivering again does not apply twice.
    assert_eq!(gates.deliver(&decision)?, DeliveryOutcome::Applied);
    assert_eq!(
        read(&r.target.join("src/lib.rs")),
        read(&r.worktree.join("src/lib.rs"))
    );
    Ok(())
}

#[test]
fn a_conflicting_target_is_refused_and_left_untouched() -> Result {
    let r = repo();
    r.run_changes();
    // The user edited the same file in the target.
    write(
        &r.target.join("src/lib.rs"),
        b"pub fn parse() -> Vec<u8> {\n    vec![1]\n}\n",
    );
    let bytes = read(&r.target.join("src/lib.rs"));
    let before_status = status(&r.target);
    let before_head = head(&r.target);

    let gates = gates(&r);
    let gate = gates.open(spec(&r, Verdict::Approved))?;
    let target = gates.target_status(&gate)?;
    let TargetStatus::Conflicting {
        overlapping,
        apply_check,
        ..
    } = &target
    else {
        panic!("expected a conflict, got {target:?}");
    };
    assert_eq!(overlapping, &["src/lib.rs"]);
    assert!(apply_check.is_some());
    for choice in [DeliveryChoice::approve(), DeliveryChoice::apply()] {
        let err = gates.decide(&run(), operator(choice)).unwrap_err();
        assert!(
            err.is_refused(DeliveryRefusal::is_target_conflict),
            "{}",
            error_chain(&err)
        );
        assert!(
            err.refusal()
                .and_then(DeliveryRefusal::target_status)
                .is_some_and(TargetStatus::is_conflicting)
        );
    }
    let err = gates
        .decide(&run(), operator(DeliveryChoice::approve()))
        .unwrap_err();
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the delivery gate of run `run-1`: caused by: the target checkout would conflict with the run's diff (conflicting: uncommitted changes to `src/lib.rs`; git apply --check: error: patch failed: src/lib.rs:1); it was not touched");
    // Nothing was written to the target and nothing was recorded.
    assert_eq!(read(&r.target.join("src/lib.rs")), bytes);
    assert_eq!(status(&r.target), before_status);
    assert_eq!(head(&r.target), before_head);
    assert!(gates.recorded_decision(&run())?.is_none());
    // The gate is still decidable.
    let skip = gates.decide(&run(), operator(DeliveryChoice::skip()))?;
    assert_eq!(gates.deliver(&skip)?, DeliveryOutcome::Skipped);
    assert_eq!(read(&r.target.join("src/lib.rs")), bytes);
    Ok(())
}

#[test]
fn a_target_that_diverged_after_the_decision_is_refused_at_delivery() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    // Somebody commits a conflicting change to the target in between.
    write(
        &r.target.join("src/lib.rs"),
        b"pub fn parse() -> Vec<u8> {\n    vec![2]\n}\n",
    );
    crate::repo::commit_all(&r.target, "theirs");
    let before = (
        head(&r.target),
        status(&r.target),
        read(&r.target.join("src/lib.rs")),
    );

    let err = gates.deliver(&decision).unwrap_err();
    assert!(
        err.is_refused(DeliveryRefusal::is_target_conflict),
        "{}",
        error_chain(&err)
    );
    let TargetStatus::Conflicting {
        overlapping,
        apply_check,
        ..
    } = err
        .refusal()
        .and_then(DeliveryRefusal::target_status)
        .expect("status")
    else {
        panic!("conflicting");
    };
    assert!(
        overlapping.is_empty(),
        "the target is clean: the conflict is the patch"
    );
    assert!(
        apply_check
            .as_deref()
            .is_some_and(|c| c.contains("src/lib.rs"))
    );
    assert_eq!(
        (
            head(&r.target),
            status(&r.target),
            read(&r.target.join("src/lib.rs"))
        ),
        before
    );
    assert!(gates.outcome(&run())?.is_none());
    Ok(())
}

#[test]
fn a_rejected_release_refuses_approve_and_apply_and_offers_fix() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    let gate = gates.open(
        spec(&r, Verdict::Rejected).with_findings(vec![finding("test `parse_empty` failed")]),
    )?;
    assert_eq!(gate.available_actions().to_string(), "fix, halt");
    // A rejected release is never skipped: refused with what to do instead.
    let err = gates
        .decide(&run(), operator(DeliveryChoice::skip()))
        .unwrap_err();
    assert_eq!(
        err.refusal().and_then(DeliveryRefusal::blocked_reason),
        Some(&DeliveryBlock::RejectedRelease)
    );
    for choice in [DeliveryChoice::approve(), DeliveryChoice::apply()] {
        let err = gates.decide(&run(), operator(choice)).unwrap_err();
        assert!(err.is_refused(DeliveryRefusal::is_not_available));
        assert_eq!(
            err.refusal().and_then(DeliveryRefusal::blocked_reason),
            Some(&DeliveryBlock::ReleaseNotApproved {
                verdict: Verdict::Rejected
            })
        );
    }
    let err = gates
        .decide(&run(), operator(DeliveryChoice::approve()))
        .unwrap_err();
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the delivery gate of run `run-1`: caused by: `approve` is not available: the release verdict is rejected, not approved; available: fix, halt");

    let decision = gates.decide(
        &run(),
        operator(DeliveryChoice::fix().with_note("empty input")),
    )?;
    let DeliveryOutcome::CorrectionReady(follow_up) = gates.deliver(&decision)? else {
        panic!("fix must produce a follow-up");
    };
    assert_eq!(follow_up.parent(), &run());
    assert_eq!(follow_up.generation(), 1);
    assert_eq!(follow_up.checkout(), r.target);
    assert_eq!(follow_up.findings(), gate.findings());
    assert_eq!(follow_up.note(), Some("empty input"));
    // The target was not touched.
    assert_eq!(status(&r.target), "");
    // The outcome reads back the same in a new process.
    assert_eq!(
        crate::delivery::gates(&r).outcome(&run())?,
        Some(DeliveryOutcome::CorrectionReady(follow_up))
    );
    Ok(())
}

#[test]
fn fix_after_an_approved_release_is_refused() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let err = gates
        .decide(&run(), operator(DeliveryChoice::fix()))
        .unwrap_err();
    assert!(err.is_refused(DeliveryRefusal::is_not_available));
    assert_eq!(
        err.refusal().and_then(DeliveryRefusal::blocked_reason),
        Some(&DeliveryBlock::FixNeedsRejection {
            verdict: Verdict::Approved
        })
    );
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the delivery gate of run `run-1`: caused by: `fix` is not available: `fix` is valid only after a rejected release; the release verdict is approved; available: approve, apply, skip, halt");
    assert!(gates.recorded_decision(&run())?.is_none());
    Ok(())
}

#[test]
fn missing_required_receipts_block_approve_and_apply_with_the_gaps_listed() -> Result {
    let r = repo();
    r.run_changes();
    let readiness = ReadinessSummary::new(
        Vec::new(),
        vec![
            CommandReadiness::new("test".parse()?, ReceiptStatus::Missing),
            CommandReadiness::new("lint".parse()?, ReceiptStatus::Present),
        ],
        Vec::new(),
        0,
    );
    let gates = gates(&r);
    let gate = gates.open(DeliverySpec::new(
        run(),
        Verdict::Approved,
        r.worktree.clone(),
        "HEAD",
        r.target.as_str(),
        &readiness,
    ))?;
    assert_eq!(gate.reviewer_verdict(), Verdict::Approved);
    assert_eq!(
        gate.verdict(),
        Verdict::Rejected,
        "a gap forces the release to rejected"
    );
    assert_eq!(gate.gaps().len(), 1);
    assert_eq!(
        (
            gate.gaps()[0].command().as_str(),
            gate.gaps()[0].next_action().as_str()
        ),
        ("test", "re-run")
    );
    assert!(!gate.available_actions().contains(DeliveryAction::Approve));
    let err = gates
        .decide(&run(), operator(DeliveryChoice::apply()))
        .unwrap_err();
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the delivery gate of run `run-1`: caused by: `apply` is not available: the release verdict is rejected, not approved; available: fix, halt");
    assert_eq!(
        gate.blocked_reason(DeliveryAction::Approve)
            .map(ToString::to_string)
            .as_deref(),
        Some("the release verdict is rejected, not approved")
    );
    // The gaps are the follow-up's input.
    let decision = gates.decide(&run(), operator(DeliveryChoice::fix()))?;
    let DeliveryOutcome::CorrectionReady(follow_up) = gates.deliver(&decision)? else {
        panic!("fix");
    };
    assert_eq!(follow_up.gaps(), gate.gaps());
    Ok(())
}

#[test]
fn missing_receipts_on_an_approved_verdict_are_listed_as_the_block() -> Result {
    // An engine that already merged the gaps passes `rejected`; one that did
    // not still gets approve blocked. With an approved verdict and gaps, the
    // block names the receipts.
    let r = repo();
    r.run_changes();
    let readiness = ReadinessSummary::new(
        Vec::new(),
        vec![CommandReadiness::new(
            "test".parse()?,
            ReceiptStatus::Missing,
        )],
        Vec::new(),
        0,
    );
    let spec = DeliverySpec::new(
        run(),
        Verdict::Approved,
        r.worktree.clone(),
        "HEAD",
        r.target.clone(),
        &readiness,
    );
    let gate = gates(&r).open(spec)?;
    let reasons: Vec<String> = gate
        .blocked()
        .iter()
        .map(|b| format!("{}: {}", b.action(), b.reason()))
        .collect();
    assert_eq!(
        reasons,
        [
            "approve: the release verdict is rejected, not approved",
            "apply: the release verdict is rejected, not approved",
            "skip: a rejected release is not skipped: `fix` starts a correction follow-up, \
             `halt` ends the run and keeps its worktree",
        ]
    );
    assert_eq!(gate.gaps()[0].to_string(), "`test` missing (re-run)");
    Ok(())
}

#[test]
fn skip_and_halt_change_nothing() -> Result {
    for (choice, expected) in [
        (DeliveryChoice::skip(), "skip"),
        (DeliveryChoice::halt(), "halt"),
    ] {
        let r = repo();
        r.run_changes();
        let before = (head(&r.target), status(&r.target));
        let worktree_status = status(&r.worktree);
        let gates = gates(&r);
        gates.open(spec(&r, Verdict::Approved))?;
        let decision = gates.decide(&run(), operator(choice))?;
        let outcome = gates.deliver(&decision)?;
        assert_eq!(outcome.action().as_str(), expected);
        if let DeliveryOutcome::Halted { worktree } = &outcome {
            assert_eq!(worktree, &r.worktree);
        }
        assert_eq!((head(&r.target), status(&r.target)), before);
        assert_eq!(
            status(&r.worktree),
            worktree_status,
            "the retained worktree is left as is"
        );
    }
    Ok(())
}

#[test]
fn delivery_decisions_are_idempotent_and_conflicts_are_typed() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let first = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    assert!(!first.is_replay());
    let again = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    assert!(again.is_replay());
    assert_eq!(again.decision(), first.decision());
    let err = gates
        .decide(&run(), operator(DeliveryChoice::skip()))
        .unwrap_err();
    assert!(err.is_conflict());
    insta::assert_snapshot!(r.redact(&error_chain(&err)), @"cannot decide the delivery gate of run `run-1`: caused by: cannot use the decision record of `delivery` at `<tmp>/store/runs/run-1/decisions/delivery.json`: caused by: a different decision is already recorded (`approve` by operator at 2026-11-21T12:00:00.000Z); refusing `skip`");
    // After delivery, the same decision still replays (no target check).
    gates.deliver(&first)?;
    assert!(
        gates
            .decide(&run(), operator(DeliveryChoice::approve()))?
            .is_replay()
    );
    Ok(())
}

#[test]
fn a_decision_is_bound_to_the_patch_it_was_taken_on() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    let gate = gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    assert_eq!(
        decision.decision().payload().patch(),
        Some(gate.patch_digest())
    );
    let recorded = std::fs::read_to_string(r.store.join("runs/run-1/decisions/delivery.json"))?;
    assert!(
        recorded.contains(&gate.patch_digest().to_string()),
        "{recorded}"
    );
    // The gate is opened again on another patch; the old decision does not
    // deliver it.
    std::fs::remove_file(gates.gate_path(&run()))?;
    write(&r.worktree.join("more.txt"), b"more work\n");
    let reopened = gates.open(spec(&r, Verdict::Approved))?;
    assert_ne!(reopened.patch_digest(), gate.patch_digest());
    let err = gates.deliver(&decision).unwrap_err();
    assert!(
        error_chain(&err).contains("the recorded decision given is not the one on disk"),
        "{}",
        error_chain(&err)
    );
    assert_eq!(status(&r.target), "");
    // The old decision is kept aside, not used: the new gate waits for its
    // own, and one taken on the old patch is refused.
    assert!(gates.recorded_decision(&run())?.is_none());
    assert!(
        r.store
            .join("runs/run-1/decisions/delivery.json.superseded-1")
            .exists()
    );
    let err = gates
        .decide(
            &run(),
            operator(DeliveryChoice::approve().for_patch(gate.patch_digest())),
        )
        .unwrap_err();
    assert!(
        error_chain(&err).contains("decide again"),
        "{}",
        error_chain(&err)
    );
    let fresh = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    assert_eq!(
        fresh.decision().payload().patch(),
        Some(reopened.patch_digest())
    );
    gates.deliver(&fresh)?;
    Ok(())
}

#[test]
fn an_altered_patch_is_refused() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::apply()))?;
    let patch = gates.patch_path(&run());
    let mut bytes = read(&patch);
    bytes.extend_from_slice(b"\n");
    write(&patch, &bytes);
    let err = gates.deliver(&decision).unwrap_err();
    assert!(
        error_chain(&err).contains("the run's patch was altered"),
        "{}",
        error_chain(&err)
    );
    assert_eq!(status(&r.target), "");
    Ok(())
}

#[test]
fn a_run_that_changed_nothing_offers_no_approve() -> Result {
    let r = repo();
    let gate = gates(&r).open(spec(&r, Verdict::Approved))?;
    assert!(gate.diff().is_empty());
    assert_eq!(gate.available_actions().to_string(), "skip, halt");
    assert_eq!(
        gate.blocked_reason(DeliveryAction::Apply),
        Some(&DeliveryBlock::NothingToDeliver)
    );
    Ok(())
}

#[test]
fn a_missing_gate_and_a_bad_base_are_typed_errors() -> Result {
    let r = repo();
    let gates = gates(&r);
    let err = gates.gate(&run()).unwrap_err();
    assert!(err.is_not_found());
    insta::assert_snapshot!(error_chain(&err), @"cannot read the delivery gate of run `run-1`: caused by: the run has no delivery gate");
    let bad = DeliverySpec::new(
        run(),
        Verdict::Approved,
        r.worktree.clone(),
        "no-such-rev",
        r.target.clone(),
        &ready(),
    );
    let err = gates.open(bad).unwrap_err();
    assert!(
        matches!(err.refusal(), Some(DeliveryRefusal::Git(_))),
        "{}",
        error_chain(&err)
    );
    insta::assert_snapshot!(r.redact(&error_chain(&err)), @"cannot open the delivery gate of run `run-1`: caused by: `git rev-parse --verify no-such-rev^{commit}` failed in `<tmp>/worktree`: caused by: exit code 128: fatal: Needed a single revision");
    assert!(
        gates.gate(&run()).unwrap_err().is_not_found(),
        "a failed open leaves no gate"
    );
    Ok(())
}

#[test]
fn delivery_documents_on_disk() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    gates.open(
        spec(&r, Verdict::Rejected)
            .with_findings(vec![finding("test `parse_empty` failed").with_line(3)]),
    )?;
    let gate_doc = String::from_utf8(read(&gates.gate_path(&run())))?;
    insta::assert_snapshot!("delivery_gate", r.redact(&gate_doc));
    let decision = gates.decide(
        &run(),
        operator(DeliveryChoice::fix().with_note("cover empty input")),
    )?;
    insta::assert_snapshot!(
        "delivery_decision",
        String::from_utf8(read(decision.path()))?
    );
    gates.deliver(&decision)?;
    let outcome = String::from_utf8(read(&gates.outcome_path(&run())))?;
    insta::assert_snapshot!("delivery_outcome_fix", r.redact(&outcome));
    Ok(())
}

#[test]
fn a_refused_commit_takes_the_diff_back_out() -> Result {
    let r = repo();
    r.run_changes();
    // The user's pre-commit hook refuses every commit.
    let hook = r.target.join(".git/hooks/pre-commit");
    write(&hook, b"#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n");
    #[expect(
        clippy::disallowed_methods,
        reason = "the test marks its hook executable"
    )]
    let chmod = std::process::Command::new("chmod")
        .args(["+x", hook.as_str()])
        .status()?;
    assert!(chmod.success());
    let before = (
        head(&r.target),
        status(&r.target),
        read(&r.target.join("src/lib.rs")),
    );

    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    let err = gates.deliver(&decision).unwrap_err();
    assert!(
        matches!(err.refusal(), Some(DeliveryRefusal::Git(_))),
        "{}",
        error_chain(&err)
    );
    assert!(
        error_chain(&err).contains("refused by policy"),
        "{}",
        error_chain(&err)
    );
    // Not half-written: the index and the files are as they were.
    assert_eq!(
        (
            head(&r.target),
            status(&r.target),
            read(&r.target.join("src/lib.rs"))
        ),
        before
    );
    assert!(!r.target.join("src/empty.rs").exists());
    assert!(gates.outcome(&run())?.is_none());
    Ok(())
}

#[test]
fn a_delivery_that_died_before_recording_its_outcome_is_not_repeated() -> Result {
    for choice in [DeliveryChoice::approve(), DeliveryChoice::apply()] {
        let r = repo();
        r.run_changes();
        let gates = gates(&r);
        gates.open(spec(&r, Verdict::Approved))?;
        let decision = gates.decide(&run(), operator(choice))?;
        let first = gates.deliver(&decision)?;
        let after = (
            head(&r.target),
            status(&r.target),
            read(&r.target.join("src/lib.rs")),
        );
        // The process died after the git work, before the outcome was written.
        std::fs::remove_file(gates.outcome_path(&run()))?;
        let again = gates.deliver(&decision)?;
        assert_eq!(again, first);
        assert_eq!(
            (
                head(&r.target),
                status(&r.target),
                read(&r.target.join("src/lib.rs"))
            ),
            after,
            "the diff is neither applied nor committed twice"
        );
    }
    Ok(())
}

#[test]
fn documents_from_a_newer_orcho_are_refused() -> Result {
    let r = repo();
    let gates = gates(&r);
    let path = gates.gate_path(&run());
    write(
        &path,
        br#"{"schema": 4, "run_id": "run-1", "quorum": true}"#,
    );
    let err = gates.gate(&run()).unwrap_err();
    assert!(
        matches!(err.kind(), PointErrorKind::Store(e) if e.is_too_new()),
        "{}",
        error_chain(&err)
    );
    // The inbox lists the run as degraded rather than guessing.
    let inbox = orcho_delivery::pending_decisions(&crate::dir_store(&r.store))?;
    assert_eq!(inbox.degraded().count(), 1);
    Ok(())
}

#[test]
fn two_threads_delivering_the_same_decision_commit_once() -> Result {
    let r = repo();
    r.run_changes();
    let before = head(&r.target);
    let gates = gates(&r);
    gates.open(spec(&r, Verdict::Approved))?;
    let decision = gates.decide(&run(), operator(DeliveryChoice::approve()))?;
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| gates.deliver(&decision)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let outcomes = outcomes
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()?;
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(
        git(&r.target, &["rev-parse", "HEAD~1"]).trim(),
        before,
        "one commit"
    );
    Ok(())
}

#[test]
fn a_gate_that_lets_only_an_operator_approve_keeps_the_rule_with_it() -> Result {
    let r = repo();
    r.run_changes();
    let opened =
        gates(&r).open(spec(&r, Verdict::Approved).with_approve_requires_operator(true))?;
    assert!(opened.approve_requires_operator());
    // The rule is in the gate's document (a version-2 document: a reader
    // that does not know it refuses the gate instead of ignoring the rule).
    let doc = String::from_utf8(read(&gates(&r).gate_path(&run())))?;
    assert!(doc.starts_with("{\n  \"schema\": 2,"), "{doc}");
    assert!(doc.contains("\"approve_requires_operator\": true"), "{doc}");
    // Whoever decides next reads it from the gate, with no profile.
    let again = gates(&r);
    let by_client = again
        .decide(
            &run(),
            DecisionRequest::by_client(DeliveryChoice::approve(), "bot 1.0"),
        )
        .unwrap_err();
    assert!(
        by_client.is_refused(|r| matches!(r, DeliveryRefusal::OperatorRequired { .. })),
        "{}",
        error_chain(&by_client)
    );
    insta::assert_snapshot!(error_chain(&by_client), @"cannot decide the delivery gate of run `run-1`: caused by: only an operator may approve this delivery (the profile says `delivery.approve_requires_operator`); it was decided by the client `bot 1.0`");
    assert!(
        again.recorded_decision(&run())?.is_none(),
        "nothing was recorded"
    );
    // An operator approves.
    again.decide(&run(), operator(DeliveryChoice::approve()))?;
    Ok(())
}

#[test]
fn a_gate_without_the_rule_is_written_as_before() -> Result {
    let r = repo();
    r.run_changes();
    gates(&r).open(spec(&r, Verdict::Approved))?;
    let doc = String::from_utf8(read(&gates(&r).gate_path(&run())))?;
    assert!(doc.starts_with("{\n  \"schema\": 1,"), "{doc}");
    assert!(!doc.contains("approve_requires_operator"), "{doc}");
    Ok(())
}
