//! The CI autopilot retries the honest, low-risk case once and stops on a
//! repeated blocker.

use std::sync::Arc;

use orcho::{
    PhaseRole, RunPlan,
    core::{Finding, RunStatus, Severity, Verdict},
    gates::PhaseOutcome,
    handoff::{
        Advice, Confidence, HandoffAction,
        autopilot::{AutopilotOutcome, StopReason},
        testing::ScriptedAdvisor,
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
    let plan = plan.with_verification(serde_yaml::from_str(
        "commands:\n  - { name: check, argv: [\"true\"] }\nrequired: [check]\n",
    )?);
    let run = Scenario::new(plan)
        .report("review", blocker())
        .report("review", blocker())
        .advisor(advisor.clone())
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
    // The advisor read the run's readiness beside the handoff.
    let contexts = advisor.contexts();
    assert!(
        contexts[0].contains("readiness summary") && contexts[0].contains("`check`"),
        "{contexts:?}"
    );
    let retried = &run.requests[1];
    assert_eq!(
        retried.input.feedback.as_deref(),
        Some("return an empty list for empty input")
    );
    Ok(())
}

#[tokio::test]
async fn a_profile_that_turns_the_autopilot_off_keeps_it_from_deciding() -> Result {
    let profile = |enabled: bool| {
        format!(
            "schema: 1\nname: ci\nphases:\n  - {{ name: review, role: review }}\nautopilot:\n  enabled: {enabled}\n"
        )
    };
    let blocker = || {
        PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
            "reviewer",
            Severity::High,
            "parse() panics on empty input",
        )])
    };
    let mut outcomes = Vec::new();
    for enabled in [true, false] {
        let resolved = orcho::profile::Profile::from_yaml_str(&profile(enabled))?
            .resolve(&orcho::gates::GateRegistry::with_builtins())?;
        let plan = RunPlan::from_profile(&resolved);
        assert_eq!(plan.autopilot_enabled, enabled);
        let advisor = Arc::new(
            ScriptedAdvisor::new("scripted").then(
                Advice::new(
                    HandoffAction::RetryFeedback,
                    Confidence::score(0.9),
                    "a small, local fix",
                )
                .with_retry_feedback("return an empty list for empty input"),
            ),
        );
        let run = Scenario::new(plan)
            .report("review", blocker())
            .report("review", PhaseOutcome::new(Verdict::Approved))
            .advisor(advisor)
            .autopilot()
            .run()
            .await?;
        outcomes.push((run.status, run.autopilot));
    }
    // On: it retried, and the second attempt passed.
    assert_eq!(outcomes[0].0, RunStatus::Completed);
    assert!(matches!(outcomes[0].1[0], AutopilotOutcome::Retried { .. }));
    // Off: nothing was decided; the handoff waits for a person.
    assert_eq!(outcomes[1].0, RunStatus::AwaitingPhaseHandoff);
    assert!(
        matches!(
            outcomes[1].1[..],
            [AutopilotOutcome::NotEligible(
                orcho::handoff::autopilot::Ineligible::Disabled
            )]
        ),
        "{:?}",
        outcomes[1].1
    );
    Ok(())
}

#[tokio::test]
async fn an_approved_plans_files_are_the_autopilots_scope() -> Result {
    use orcho::{
        PhaseReport,
        handoff::supervision::{Answer, Plan, PlanStep},
    };
    let plan = RunPlan::new(
        "planned",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
        ],
    )
    .with_plan_approval(true);
    let planned = PhaseReport::new(PhaseOutcome::new(Verdict::Approved)).with_plan(
        Plan::new("fix the parser")
            .with_step(PlanStep::new("coder", "handle empty input"))
            .with_file("src/parse.rs"),
    );
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::High,
        "parse() panics on empty input",
    )]);
    let advice = |file: &str| {
        Advice::new(
            HandoffAction::RetryFeedback,
            Confidence::score(0.9),
            "local fix",
        )
        .with_retry_feedback("return an empty list")
        .with_expected_files(vec![file.into()])
    };
    for (file, retried) in [("src/parse.rs", true), ("src/network.rs", false)] {
        let run = Scenario::new(plan.clone())
            .report_with("plan", planned.clone())
            .answer(vec![Answer::select("Approve"), Answer::none()])
            .report("implement", rejected.clone())
            .advisor(Arc::new(
                ScriptedAdvisor::new("scripted").then(advice(file)),
            ))
            .autopilot()
            .run()
            .await?;
        match &run.autopilot[0] {
            AutopilotOutcome::Retried { .. } => assert!(retried, "{file} is outside the plan"),
            AutopilotOutcome::Stopped {
                reason: StopReason::FilesOutOfScope { files },
                ..
            } => {
                assert!(!retried, "{file} is in the plan");
                assert_eq!(files[0].as_str(), file);
            }
            other => panic!("{file}: {other:?}"),
        }
    }
    Ok(())
}

#[tokio::test]
async fn in_a_worktree_the_advisor_reads_the_runs_changes() -> Result {
    let plan = RunPlan::new("ci", vec![phase("review", PhaseRole::Review)]);
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then(Advice::new(
        HandoffAction::Halt,
        Confidence::score(0.9),
        "stop here",
    )));
    let run = Scenario::new(plan)
        .in_worktree()
        .before("review", 1, |checkout| {
            orcho::core::fs::write_atomic(&checkout.join("parse.rs"), b"fn parse() {}\n")
                .expect("the phase's work");
        })
        .report(
            "review",
            PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
                "reviewer",
                Severity::High,
                "parse() has no test",
            )]),
        )
        .advisor(advisor.clone())
        .autopilot()
        .run()
        .await?;
    assert!(matches!(run.autopilot[0], AutopilotOutcome::Stopped { .. }));
    let contexts = advisor.contexts();
    assert!(
        contexts[0].contains("The run's changes so far: 1 file(s), +1 -0")
            && contexts[0].contains("- parse.rs (+1 -0)"),
        "{contexts:?}"
    );
    Ok(())
}
