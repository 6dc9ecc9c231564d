//! Deciding by name (`orcho::decide`): the rules every host shares.

use camino::Utf8PathBuf;
use orcho::{
    Engine, PhasePlan, PhaseReport, PhaseRole, RunPlan, Step,
    core::{Finding, Severity, Verdict},
    decide::{self, DecideError, Decision, PlanVerdict},
    gates::PhaseOutcome,
    handoff::{HandoffAction, decision::DecidedBy},
};

use crate::Result;

/// A run paused at the handoff of its rejected `review`.
async fn paused() -> Result<(tempfile::TempDir, Engine, orcho::core::RunId)> {
    let dir = tempfile::tempdir()?;
    let checkout = Utf8PathBuf::try_from(dir.path().to_owned())?;
    let plan = RunPlan::new(
        "decide",
        vec![PhasePlan::new("review".parse()?, PhaseRole::Review)],
    );
    let engine = Engine::builder(plan, checkout.join(".orcho")).build()?;
    let mut run = engine.start(&checkout)?;
    let Step::RunPhase(_) = run.next().await? else {
        return Err("the review runs first".into());
    };
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::Medium,
        "no name in the greeting",
    )]);
    let Step::DecideHandoff(_) = run.complete_phase(PhaseReport::new(rejected)).await? else {
        return Err("the rejection pauses at a handoff".into());
    };
    let id = run.id().clone();
    drop(run);
    Ok((dir, engine, id))
}

#[tokio::test]
async fn a_handoff_is_decided_by_name_with_its_text_and_replays() -> Result {
    let (_dir, engine, run) = paused().await?;
    let store = engine.store();
    // retry_feedback needs its feedback.
    let err = decide::decide(
        store,
        &run,
        Decision::handoff(HandoffAction::RetryFeedback, None),
        DecidedBy::Operator,
    )
    .unwrap_err();
    assert!(matches!(err, DecideError::Text(_)), "{err}");
    // The run is at a handoff, not at a plan approval.
    let err = decide::decide(
        store,
        &run,
        Decision::Plan {
            verdict: PlanVerdict::Approve,
            feedback: None,
        },
        DecidedBy::Operator,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("run `{run}` has no plan waiting for approval")
    );
    let decision = Decision::handoff(HandoffAction::RetryFeedback, Some("name it".into()));
    let first = decide::decide(store, &run, decision.clone(), DecidedBy::Operator)?;
    assert_eq!(
        (
            first.point,
            first.action.as_str(),
            first.recorded,
            first.halted
        ),
        ("handoff", "retry_feedback", true, false)
    );
    // The same decision again is a replay; another conflicts.
    let again = decide::decide(store, &run, decision, DecidedBy::Operator)?;
    assert!(!again.recorded);
    let other = decide::decide(
        store,
        &run,
        Decision::handoff(HandoffAction::Halt, None),
        DecidedBy::Operator,
    )
    .unwrap_err();
    let DecideError::Engine(e) = &other else {
        return Err(format!("not the store's refusal: {other}").into());
    };
    assert!(e.is_conflict(), "{e}");
    Ok(())
}

#[tokio::test]
async fn a_halt_says_the_run_ended() -> Result {
    let (_dir, engine, run) = paused().await?;
    let halted = decide::decide(
        engine.store(),
        &run,
        Decision::handoff(HandoffAction::Halt, None),
        DecidedBy::Operator,
    )?;
    assert!(halted.recorded && halted.halted, "{halted:?}");
    Ok(())
}

#[tokio::test]
async fn who_decided_is_said_the_same_way_for_a_person_and_a_client() -> Result {
    let (_dir, engine, run) = paused().await?;
    let store = engine.store();
    let decided = decide::decide(
        store,
        &run,
        Decision::handoff(HandoffAction::Continue, None),
        decide::Decider::Client("mcp-client 1.2".into()),
    )?;
    let handoff = decided.id.ok_or("the handoff's id")?;
    let recorded = store
        .handoff_decision(&run, &handoff)?
        .ok_or("the recorded decision")?;
    let said = decide::who_decided(recorded.decision());
    assert!(said.starts_with("mcp-client 1.2"), "{said}");
    Ok(())
}
