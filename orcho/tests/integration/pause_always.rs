//! `pause: always` pauses after every attempt, as the docs say: a rejected
//! verdict or a failing gate is not retried by itself first.

use orcho::{
    PausePolicy, PhaseRole, RunPlan,
    core::{RunStatus, Verdict},
    gates::{FailStrategy, PhaseOutcome},
    handoff::handoff::HandoffChoice,
    testing::Scenario,
};

use crate::{Result, gate, phase};

fn always(plan_gate: Option<orcho::gates::ScheduledGate>) -> RunPlan {
    let mut implement = phase("implement", PhaseRole::Implement)
        .with_pause(PausePolicy::Always)
        .with_max_attempts(3);
    if let Some(g) = plan_gate {
        implement = implement.with_gate(g);
    }
    RunPlan::new("always", vec![implement])
}

#[tokio::test]
async fn a_rejected_attempt_pauses_before_any_retry() -> Result {
    let run = Scenario::new(always(None))
        .reject("implement", 1)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    assert_eq!(
        run.requests.len(),
        1,
        "no attempt ran by itself: {}",
        run.trace
    );
    assert_eq!(run.handoffs[0].verdict(), Verdict::Rejected);
    Ok(())
}

#[tokio::test]
async fn a_feeding_gate_failure_pauses_before_any_retry() -> Result {
    let run = Scenario::new(always(Some(gate(
        "lint",
        FailStrategy::FeedIntoNext,
        &[(1, 1)],
    ))))
    .run()
    .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    assert_eq!(run.requests.len(), 1, "{}", run.trace);
    assert_eq!(run.handoffs[0].findings()[0].title, "`lint` failed");
    Ok(())
}

#[tokio::test]
async fn every_attempt_pauses_and_each_decision_moves_it_on() -> Result {
    let run = Scenario::new(always(None))
        .reject("implement", 1)
        .report("implement", PhaseOutcome::new(Verdict::Approved))
        .decide(HandoffChoice::retry("handle the empty input")?)
        .decide(HandoffChoice::Continue)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    // Two attempts, each followed by a pause: rejected, then approved.
    assert_eq!(run.requests.len(), 2, "{}", run.trace);
    assert_eq!(run.handoffs.len(), 2, "{}", run.trace);
    assert_eq!(
        run.requests[1].input.feedback.as_deref(),
        Some("handle the empty input")
    );
    Ok(())
}

#[tokio::test]
async fn a_gate_that_feeds_an_earlier_phase_sends_its_failure_there_under_pause_always() -> Result {
    let lint = gate("lint", FailStrategy::FeedIntoNext, &[(1, 1)]);
    let implement = phase("implement", PhaseRole::Implement)
        .with_pause(PausePolicy::Always)
        .with_max_attempts(3)
        .with_gate(lint)
        .with_feed("lint".parse()?, "plan".parse()?);
    let plan = RunPlan::new("feeds", vec![phase("plan", PhaseRole::Plan), implement]);
    let run = Scenario::new(plan)
        .decide(HandoffChoice::Continue)
        .run()
        .await?;
    // plan, implement (lint fails: fed to plan, no pause), plan again,
    // implement again (passes: paused, as always), then continued.
    let phases: Vec<&str> = run.requests.iter().map(|r| r.phase.as_str()).collect();
    assert_eq!(
        phases,
        ["plan", "implement", "plan", "implement"],
        "{}",
        run.trace
    );
    assert_eq!(run.handoffs.len(), 1, "{}", run.trace);
    assert!(
        run.requests[2]
            .input
            .fed_failures
            .iter()
            .any(|f| f.gate.as_str() == "lint"),
        "{}",
        run.trace
    );
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    Ok(())
}
