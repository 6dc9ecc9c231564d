//! The CI autopilot retries the honest, low-risk case once and stops on a
//! repeated blocker.

use std::sync::Arc;

use orcho::{
    PhaseRole, RunPlan,
    core::{Finding, RunStatus, Severity, Verdict},
    gates::PhaseOutcome,
    handoff::{
        Advice, AutopilotOutcome, Confidence, HandoffAction, StopReason, testing::ScriptedAdvisor,
    },
    testing::Scenario,
};

use crate::{Result, phase};

#[tokio::test]
async fn the_autopilot_retries_once_then_stops_on_a_repeated_blocker() -> Result {
    let plan = RunPlan::new(
        "ci",
        vec![
            phase("review", PhaseRole::Review),
            phase("ship", PhaseRole::Other("ship".into())),
        ],
    );
    let blocker = || {
        PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
            "reviewer",
            Severity::High,
            "parse() panics on empty input",
        )])
    };
    let advice = || {
        Advice::new(
            HandoffAction::RetryFeedback,
            Confidence::score(0.9),
            "a small, local fix",
        )
        .with_retry_feedback("return an empty list for empty input")
    };
    let advisor = Arc::new(
        ScriptedAdvisor::new("scripted")
            .then(advice())
            .then(advice()),
    );
    let run = Scenario::new(plan)
        .report("review", blocker())
        .report("review", blocker())
        .advisor(advisor)
        .autopilot()
        .run()
        .await?;
    assert_eq!(
        run.status,
        RunStatus::AwaitingPhaseHandoff,
        "the autopilot stopped and left the handoff pending"
    );
    assert_eq!(run.autopilot.len(), 2);
    assert!(matches!(run.autopilot[0], AutopilotOutcome::Retried { .. }));
    let AutopilotOutcome::Stopped { reason, .. } = &run.autopilot[1] else {
        panic!("expected a stop, got {:?}", run.autopilot[1]);
    };
    assert!(
        matches!(reason, StopReason::RepeatedBlocker { .. }),
        "{reason:?}"
    );
    let retried = &run.requests[1];
    assert_eq!(
        retried.input.feedback.as_deref(),
        Some("return an empty list for empty input")
    );
    Ok(())
}
