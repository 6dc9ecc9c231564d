//! The diagram end to end with scripted phases.

use orcho::{
    PhaseRole, RunPlan,
    core::{Finding, RunStatus, Severity, Verdict},
    gates::{FailStrategy, PhaseOutcome},
    handoff::{HandoffAction, handoff::HandoffChoice},
    testing::Scenario,
};

use crate::{Result, gate, phase};

fn rejected(title: &str) -> PhaseOutcome {
    PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::High,
        title,
    )])
}

#[tokio::test]
async fn a_failing_tests_gate_feeds_into_the_next_attempt() -> Result {
    let plan = RunPlan::new(
        "feed",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_max_attempts(3)
                .with_gate(gate("tests", FailStrategy::FeedIntoNext, &[(1, 1)]))
                .with_gate(gate(
                    "style",
                    FailStrategy::Informational,
                    &[(1, 1), (1, 2)],
                )),
        ],
    );
    let run = Scenario::new(plan).run().await?;
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.requests.len(), 2);
    let fed = &run.requests[1].input.fed_failures;
    assert_eq!(
        fed.len(),
        1,
        "only the feed_into_next failure is fed; informational never is"
    );
    assert_eq!(fed[0].gate, "tests");
    insta::assert_snapshot!(run.trace, @r"
    started plan `feed` with phases implement
    phase `implement` attempt 1 (round 1) reported approved
      gate `tests` failed [on_fail: feed_into_next]
      gate `style` failed [on_fail: informational]
      settled (feed_into_next) → retry, feeding tests
    phase `implement` attempt 2 (round 1) reported approved
      gate `tests` passed [on_fail: feed_into_next]
      gate `style` failed [on_fail: informational]
      settled (continue) → advance
    ");
    Ok(())
}

#[tokio::test]
async fn a_replan_advances_the_round_and_returns_to_the_plan() -> Result {
    let plan = RunPlan::new(
        "replan",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement)
                .with_max_rounds(2)
                .with_gate(gate(
                    "design_review",
                    FailStrategy::TriggerReplan,
                    &[(1, 1)],
                )),
        ],
    );
    let run = Scenario::new(plan).run().await?;
    assert_eq!(run.status, RunStatus::Completed);
    let phases: Vec<(String, u32, u32)> = run
        .requests
        .iter()
        .map(|r| (r.phase.to_string(), r.round, r.attempt))
        .collect();
    assert_eq!(
        phases,
        [
            ("plan".into(), 1, 1),
            ("implement".into(), 1, 1),
            ("plan".into(), 2, 1),
            ("implement".into(), 2, 1)
        ]
    );
    assert_eq!(
        run.requests[2].input.critique[0].gate, "design_review",
        "the plan phase receives the critique"
    );
    Ok(())
}

#[tokio::test]
async fn a_halting_gate_stops_the_run_and_skips_the_rest() -> Result {
    let plan = RunPlan::new(
        "halt",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_gate(gate("build", FailStrategy::Halt, &[(1, 1)]))
                .with_gate(gate("tests", FailStrategy::FeedIntoNext, &[])),
            phase("review", PhaseRole::Review),
        ],
    );
    let run = Scenario::new(plan).run().await?;
    assert_eq!(run.status, RunStatus::Halted);
    assert_eq!(run.reason, "halted by gate `build`: `build` failed");
    assert_eq!(run.requests.len(), 1, "review never ran");
    insta::assert_snapshot!(run.trace, @r"
    started plan `halt` with phases implement → review
    phase `implement` attempt 1 (round 1) reported approved
      gate `build` failed [on_fail: halt]
      gate `tests` skipped (halted by gate `build`) [on_fail: feed_into_next]
      settled (halt) → halt: halted by gate `build`: `build` failed
    ");
    Ok(())
}

fn review_plan() -> RunPlan {
    RunPlan::new(
        "review",
        vec![
            phase("implement", PhaseRole::Implement),
            phase("review", PhaseRole::Review),
            phase("ship", PhaseRole::Other("ship".into())),
        ],
    )
}

#[tokio::test]
async fn a_handoff_decided_continue_proceeds() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("naming"))
        .decide(HandoffChoice::Continue)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.handoffs.len(), 1);
    assert_eq!(
        run.handoffs[0]
            .available_actions()
            .iter()
            .collect::<Vec<_>>(),
        [
            HandoffAction::Continue,
            HandoffAction::RetryFeedback,
            HandoffAction::ContinueWithWaiver,
            HandoffAction::Halt
        ]
    );
    assert_eq!(run.requests.last().map(|r| r.phase.as_str()), Some("ship"));
    Ok(())
}

#[tokio::test]
async fn a_handoff_decided_retry_feedback_runs_one_extra_attempt() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("missing test"))
        .decide(HandoffChoice::retry("add a test for empty input")?)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed);
    let reviews: Vec<_> = run
        .requests
        .iter()
        .filter(|r| r.phase == "review")
        .collect();
    assert_eq!(reviews.len(), 2);
    assert_eq!(reviews[1].attempt, 2);
    assert_eq!(
        reviews[1].input.feedback.as_deref(),
        Some("add a test for empty input")
    );
    insta::assert_snapshot!(run.trace, @r#"
    started plan `review` with phases implement → review → ship
    phase `implement` attempt 1 (round 1) reported approved
      settled (continue) → advance
    phase `review` attempt 1 (round 1) reported rejected with 1 finding
      settled (continue) → pause (rejected, trigger verdict)
    handoff `0001-review` opened
    handoff `0001-review` resumed: retry_feedback "add a test for empty input"
    phase `review` attempt 2 (round 1) reported approved
      settled (continue) → advance
    phase `ship` attempt 1 (round 1) reported approved
      settled (continue) → advance
    "#);
    Ok(())
}

#[tokio::test]
async fn a_retry_that_is_rejected_again_opens_a_new_handoff() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("missing test"))
        .report("review", rejected("missing test"))
        .decide(HandoffChoice::retry("add the test")?)
        .run()
        .await?;
    assert_eq!(
        run.status,
        RunStatus::AwaitingPhaseHandoff,
        "the script has no second decision"
    );
    let ids: Vec<&str> = run.handoffs.iter().map(|h| h.id().as_str()).collect();
    assert_eq!(ids, ["0001-review", "0002-review"]);
    Ok(())
}

#[tokio::test]
async fn a_handoff_decided_with_a_waiver_proceeds_with_the_waiver_on_record() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("flaky test on CI"))
        .decide(HandoffChoice::waive("known flake, tracked in #42")?)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed);
    let ship = run.requests.last().ok_or("no requests")?;
    assert_eq!(ship.input.waivers, ["known flake, tracked in #42"]);
    let waivers = run.engine.store().waivers(&run.run)?;
    assert_eq!(waivers.waivers().len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_handoff_decided_halt_ends_the_run_and_resume_says_so() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("wrong approach"))
        .decide(HandoffChoice::Halt)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Halted);
    assert_eq!(
        run.reason,
        "halted by the decision on handoff `0001-review`"
    );
    // Resuming an ended run moves nothing: it says how the run ended.
    let step = run.resume().await?;
    assert_eq!(
        step,
        orcho::Step::Finished {
            status: RunStatus::Halted,
            reason: "halted by the decision on handoff `0001-review`".to_owned(),
        }
    );
    // Deciding on it is refused, with what to do instead.
    let err = run
        .engine
        .store()
        .decide(
            &run.run,
            &"0002-review".parse()?,
            orcho::handoff::decision::DecisionRequest::new(
                HandoffChoice::Continue,
                orcho::handoff::decision::DecidedBy::Operator,
            ),
        )
        .err()
        .ok_or("a decision on a halted run was recorded")?;
    assert_eq!(err.remedy(), Some(orcho::Remedy::StartANewRun));
    insta::assert_snapshot!(orcho::core::error_chain(&err).replace(run.run.as_str(), "<run>"), @"run `<run>`: caused by: the run is halted: halted by the decision on handoff `0001-review`");
    Ok(())
}

#[tokio::test]
async fn resuming_while_a_decision_is_pending_stays_at_the_handoff() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("naming"))
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff);
    // Where the run stands is the step, not an error: still the handoff.
    let step = run.resume().await?;
    let orcho::Step::DecideHandoff(handoff) = &step else {
        return Err(format!("expected the handoff, got {step:?}").into());
    };
    assert_eq!(handoff.id().as_str(), "0001-review");
    assert_eq!(
        handoff.available_actions().spellings(),
        ["continue", "retry_feedback", "continue_with_waiver", "halt"]
    );
    // Reporting a phase nobody asked for is the host's mistake.
    let mut reopened = run.engine.open(&run.run)?;
    let err = reopened
        .complete_phase(orcho::PhaseReport::new(PhaseOutcome::new(
            Verdict::Approved,
        )))
        .await
        .err()
        .ok_or("completing a phase while paused succeeded")?;
    assert!(
        matches!(err.kind(), orcho::EngineErrorKind::NotExpected { .. }),
        "{err}"
    );
    insta::assert_snapshot!(orcho::core::error_chain(&err).replace(run.run.as_str(), "<run>"), @"run `<run>`: caused by: cannot complete a phase while the run is awaiting_phase_handoff");
    Ok(())
}

#[tokio::test]
async fn two_drivers_of_one_run_the_second_is_busy() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("naming"))
        .run()
        .await?;
    let first = run.engine.open(&run.run)?;
    let err = run
        .engine
        .open(&run.run)
        .err()
        .ok_or("a second driver opened the run")?;
    assert!(err.is_busy());
    insta::assert_snapshot!(orcho::core::error_chain(&err).replace(run.run.as_str(), "<run>"), @"run `<run>`: caused by: the run is busy: another process is driving it");
    drop(first);
    assert!(
        run.engine.open(&run.run).is_ok(),
        "free again once the first driver is gone"
    );
    Ok(())
}

#[tokio::test]
async fn a_paused_run_reads_as_a_view_with_the_point_it_waits_on() -> Result {
    let run = Scenario::new(review_plan())
        .report("review", rejected("naming"))
        .run()
        .await?;
    let view = run.engine.store().status(&run.run)?;
    assert_eq!(view.status, RunStatus::AwaitingPhaseHandoff);
    let json = serde_json::to_string_pretty(&view)?
        .replace(run.run.as_str(), "<run>")
        .replace(run.checkout.as_str(), "<checkout>");
    insta::assert_snapshot!(json, @r#"
    {
      "run": "<run>",
      "plan": "review",
      "status": "awaiting_phase_handoff",
      "phase": "review",
      "attempt": 1,
      "round": 1,
      "cost": {
        "wall_ms": 0
      },
      "checkout": "<checkout>",
      "waiting": {
        "point": "phase_handoff",
        "id": "0001-review"
      }
    }
    "#);
    let pending = run.engine.store().pending(&run.run)?;
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].next_step(),
        orcho::handoff::inbox::SuggestedStep::Decide
    );
    Ok(())
}

#[tokio::test]
async fn a_task_longer_than_a_phase_can_be_given_is_refused_before_the_run_exists() -> Result {
    let dir = tempfile::tempdir()?;
    let checkout = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
    let plan = RunPlan::new(
        "task",
        vec![orcho::PhasePlan::new(
            "implement".parse()?,
            PhaseRole::Implement,
        )],
    );
    let engine = orcho::Engine::builder(plan, checkout.join(".orcho")).build()?;
    let longest = "x".repeat(orcho::MAX_TASK_BYTES);
    engine.start_with(orcho::Start::in_place(&checkout).task(longest))?;
    let err = engine
        .start_with(orcho::Start::in_place(&checkout).task("x".repeat(orcho::MAX_TASK_BYTES + 1)))
        .err()
        .ok_or("a longer task is refused")?;
    assert_eq!(
        err.refusal(),
        Some(&orcho::Refusal::TaskTooLarge {
            bytes: orcho::MAX_TASK_BYTES + 1
        }),
        "{err}"
    );
    assert_eq!(
        engine.store().list()?.len(),
        1,
        "the refused run was never created"
    );
    Ok(())
}
