//! Correction follow-ups through real delivery gates, and the guard that
//! stops a follow-up repeating its parent's blockers.

use orcho_core::{Finding, RunId, Severity, Verdict, error_chain};
use orcho_delivery::{
    DeliveryBlock, DeliveryGates, DeliveryOutcome, DeliveryRefusal, DeliverySpec, FollowUpGuard,
    FollowUpSpec, NonConvergence,
};
use orcho_handoff::{
    DeliveryAction,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
};

use crate::{
    Result,
    delivery::{gates, ready},
    repo::{Repo, repo},
};

fn rejected(r: &Repo, run: &str, findings: Vec<Finding>) -> Result<DeliverySpec> {
    Ok(DeliverySpec::new(
        run.parse()?,
        Verdict::Rejected,
        r.worktree.clone(),
        "HEAD",
        r.target.clone(),
        &ready(),
    )
    .with_findings(findings))
}

fn fix(gates: &DeliveryGates, run: &RunId) -> Result<FollowUpSpec> {
    let decision = gates.decide(
        run,
        DecisionRequest::new(DeliveryChoice::fix(), DecidedBy::Operator),
    )?;
    match gates.deliver(&decision)? {
        DeliveryOutcome::CorrectionReady(spec) => Ok(spec),
        other => Err(format!("expected a follow-up, got {other:?}").into()),
    }
}

fn failing(test: &str, line: u32) -> Finding {
    Finding::new("tests", Severity::High, format!("test `{test}` failed"))
        .with_file("src/lib.rs")
        .with_line(line)
}

#[test]
fn a_follow_up_that_repeats_its_parents_blockers_is_stopped() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    let parent = gates.open(rejected(&r, "run-1", vec![failing("parse_empty", 3)])?)?;
    let spec = fix(&gates, parent.run())?;
    assert_eq!((spec.parent().as_str(), spec.generation()), ("run-1", 1));
    assert!(
        spec.to_markdown()
            .contains("test `parse_empty` failed (src/lib.rs:3)")
    );
    // The child's agent is told it starts from the parent's change.
    assert!(
        spec.to_markdown()
            .contains("The parent's change is already here: its diff is applied to this checkout")
    );

    // The follow-up fails the same way (another line, same blocker).
    let child = gates.open(
        rejected(&r, "run-2", vec![failing("parse_empty", 9)])?.with_follow_up(spec.link()),
    )?;
    assert!(!child.available_actions().contains(DeliveryAction::Fix));
    let Some(DeliveryBlock::NoProgress(stop)) = child.blocked_reason(DeliveryAction::Fix) else {
        panic!("fix must be blocked by the guard: {:?}", child.blocked());
    };
    assert!(stop.is_repeated_blockers());
    assert_eq!(stop.code(), "repeated_blockers");
    let err = gates
        .decide(
            child.run(),
            DecisionRequest::new(DeliveryChoice::fix(), DecidedBy::Operator),
        )
        .unwrap_err();
    assert!(err.is_refused(DeliveryRefusal::is_not_available));
    insta::assert_snapshot!(error_chain(&err), @"cannot decide the delivery gate of run `run-2`: caused by: `fix` is not available: follow-up generation 1 of run `run-1` resolved none of its 1 blockers (tests: test `parse_empty` failed); stopping instead of looping; available: halt");
    // Halt stays available: the typed stop leaves the gate decidable (a
    // rejected release is never skipped).
    assert_eq!(child.available_actions().to_string(), "halt");
    // The gate reads back with the same typed reason.
    assert_eq!(gates.gate(child.run())?, child);
    Ok(())
}

#[test]
fn a_follow_up_that_made_progress_may_continue_up_to_the_cap() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r).with_guard(FollowUpGuard::with_max_generations(2));
    let parent = gates.open(rejected(&r, "run-1", vec![failing("parse_empty", 3)])?)?;
    let first = fix(&gates, parent.run())?;

    // Generation 1 fixed `parse_empty` and broke `parse_list`: progress.
    let child = gates.open(
        rejected(&r, "run-2", vec![failing("parse_list", 5)])?.with_follow_up(first.link()),
    )?;
    assert!(child.available_actions().contains(DeliveryAction::Fix));
    let second = fix(&gates, child.run())?;
    assert_eq!(
        (second.parent().as_str(), second.generation()),
        ("run-2", 2)
    );
    assert_eq!(second.findings(), child.findings());

    // Generation 2 made progress too, but a third generation passes the cap.
    let grandchild = gates.open(
        rejected(&r, "run-3", vec![failing("parse_map", 7)])?.with_follow_up(second.link()),
    )?;
    assert_eq!(
        grandchild.blocked_reason(DeliveryAction::Fix),
        Some(&DeliveryBlock::NoProgress(
            NonConvergence::TooManyGenerations {
                generation: 3,
                max: 2
            }
        ))
    );
    Ok(())
}

#[test]
fn a_follow_up_spec_needs_a_fix_decision() -> Result {
    let r = repo();
    r.run_changes();
    let gates = gates(&r);
    let gate = gates.open(rejected(&r, "run-1", vec![failing("parse_empty", 3)])?)?;
    let halt = gates.decide(
        gate.run(),
        DecisionRequest::new(DeliveryChoice::halt(), DecidedBy::Operator),
    )?;
    let err = FollowUpSpec::from_fix(&gate, &halt, &FollowUpGuard::default()).unwrap_err();
    assert!(err.is_not_a_fix());
    insta::assert_snapshot!(error_chain(&err), @"cannot start a correction follow-up of run `run-1`: caused by: the decision is `halt` of run `run-1`, not `fix` of this run");
    Ok(())
}
