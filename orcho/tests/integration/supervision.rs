//! Supervision touchpoints through the step API: planner questions, plan
//! approval and deviation handling, each a durable pause answered with the
//! question schema.

use orcho::{
    Interruption, PhaseReport, PhaseRole, RunPlan, Step,
    core::RunStatus,
    gates::PhaseOutcome,
    handoff::{
        decision::DecidedBy,
        supervision::{
            Answer, Deviation, DeviationPolicy, Plan, PlanStep, Question, QuestionBatch,
            QuestionOption,
        },
    },
    testing::Scenario,
};

use super::{Result, phase};

fn plan(approval: bool) -> RunPlan {
    RunPlan::new(
        "supervised",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
        ],
    )
    .with_plan_approval(approval)
}

fn the_plan() -> Plan {
    Plan::new("Add a parser").with_step(PlanStep::new("coder", "Write parse()"))
}

fn approved_with_plan() -> PhaseReport {
    PhaseReport::new(PhaseOutcome::new(orcho::core::Verdict::Approved)).with_plan(the_plan())
}

#[tokio::test]
async fn planner_questions_pause_and_the_same_attempt_runs_again_with_the_answers() -> Result {
    let batch = QuestionBatch::new([Question::new(
        "Storage",
        "Where should parsed documents be kept?",
        [QuestionOption::new("Memory"), QuestionOption::new("Disk")],
    )?])?;
    let run = Scenario::new(plan(false))
        .report_with(
            "plan",
            PhaseReport::interrupted(Interruption::Questions(batch)),
        )
        .answer(vec![Answer::select("Disk")])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    assert_eq!(run.touchpoints.len(), 1);
    assert_eq!(
        run.touchpoints[0].questions.questions()[0].header(),
        "Storage"
    );
    let again = &run.requests[1];
    assert_eq!(again.phase.as_str(), "plan");
    assert_eq!(
        again.attempt, 1,
        "asking questions does not spend an attempt"
    );
    let answers = again.input.answers.clone().expect("answers");
    assert!(answers.contains("Disk"), "{answers}");
    insta::assert_snapshot!(run.trace, @r"
    started plan `supervised` with phases plan → implement
    phase `plan` attempt 1 stopped to ask: planner questions
    touchpoint `touchpoint-1` opened
    touchpoint `touchpoint-1` resolved: answered; the attempt runs again
    phase `plan` attempt 1 (round 1) reported approved
      settled (continue) → advance
    phase `implement` attempt 1 (round 1) reported approved
      settled (continue) → advance
    ");
    Ok(())
}

#[tokio::test]
async fn a_plan_waits_for_approval_and_request_changes_sends_it_back() -> Result {
    let run = Scenario::new(plan(true))
        .report_with("plan", approved_with_plan())
        .report_with("plan", approved_with_plan())
        .answer(vec![
            Answer::select("Request Changes"),
            Answer::text("split the parser from the lexer"),
        ])
        .answer(vec![
            Answer::select("Approve"),
            Answer::text("keep it small"),
        ])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let phases: Vec<(&str, u32)> = run
        .requests
        .iter()
        .map(|r| (r.phase.as_str(), r.attempt))
        .collect();
    assert_eq!(phases, [("plan", 1), ("plan", 2), ("implement", 1)]);
    // The planner runs again with its plan and what to change.
    let again = &run.requests[1].input;
    assert_eq!(
        again.feedback.as_deref(),
        Some("split the parser from the lexer")
    );
    assert_eq!(again.previous_plan.as_deref(), Some(&the_plan()));
    assert!(
        again.plan.is_none(),
        "the planner is given its previous plan"
    );
    // The implementer carries out the approved plan, with the approval's
    // notes, whatever happens to its own attempts.
    let implement = &run.requests[2].input;
    let carried = implement.plan.as_ref().expect("the approved plan");
    assert_eq!(carried.plan, the_plan());
    assert_eq!(carried.digest, the_plan().digest());
    assert!(carried.approved);
    assert_eq!(carried.notes.as_deref(), Some("keep it small"));
    assert_eq!(implement.feedback, None);
    assert!(implement.previous_plan.is_none());
    let text = implement.to_text();
    assert!(text.contains("1. [coder] Write parse()"), "{text}");
    assert!(text.contains("keep it small"), "{text}");
    let evidence = run.engine.evidence(&run.run)?;
    assert_eq!(evidence.touchpoints.len(), 2);
    Ok(())
}

#[tokio::test]
async fn answers_given_once_reach_every_later_attempt_of_the_planner() -> Result {
    let batch = QuestionBatch::new([Question::new(
        "Storage",
        "Where should parsed documents be kept?",
        [QuestionOption::new("Memory"), QuestionOption::new("Disk")],
    )?])?;
    let run = Scenario::new(plan(true))
        .task("Parse the config files")
        .report_with(
            "plan",
            PhaseReport::interrupted(Interruption::Questions(batch)),
        )
        .report_with("plan", approved_with_plan())
        .report_with("plan", approved_with_plan())
        .answer(vec![Answer::select("Disk")])
        .answer(vec![
            Answer::select("Request Changes"),
            Answer::text("one step per file"),
        ])
        .answer(vec![Answer::select("Approve"), Answer::none()])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let attempts: Vec<(&str, u32)> = run
        .requests
        .iter()
        .map(|r| (r.phase.as_str(), r.attempt))
        .collect();
    assert_eq!(
        attempts,
        [("plan", 1), ("plan", 1), ("plan", 2), ("implement", 1)]
    );
    // After request-changes the planner still has the answers, its plan
    // and the feedback: nothing it was told is lost.
    let revised = &run.requests[2].input;
    assert!(
        revised
            .answers
            .as_deref()
            .is_some_and(|a| a.contains("Disk")),
        "{revised:?}"
    );
    assert_eq!(revised.previous_plan.as_deref(), Some(&the_plan()));
    assert_eq!(revised.feedback.as_deref(), Some("one step per file"));
    // Every phase has the task.
    for request in &run.requests {
        assert_eq!(
            request.input.task.as_deref(),
            Some("Parse the config files")
        );
    }
    let state = run.engine.store().state(&run.run)?;
    assert_eq!(state.task(), Some("Parse the config files"));
    Ok(())
}

#[tokio::test]
async fn a_rejected_plan_halts_the_run() -> Result {
    let run = Scenario::new(plan(true))
        .report_with("plan", approved_with_plan())
        .answer(vec![Answer::select("Reject"), Answer::none()])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Halted);
    assert_eq!(run.reason, "the plan was rejected");
    Ok(())
}

#[tokio::test]
async fn without_plan_approval_a_plan_goes_straight_on() -> Result {
    let run = Scenario::new(plan(false))
        .report_with("plan", approved_with_plan())
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed);
    assert!(run.touchpoints.is_empty());
    Ok(())
}

fn failing_step() -> PhaseReport {
    PhaseReport::interrupted(Interruption::Deviation(Deviation::new(
        1,
        "Write parse()",
        "cannot find module `lexer`",
    )))
}

#[tokio::test]
async fn a_deviation_retry_runs_the_step_again_with_the_failure_and_guidance() -> Result {
    let run = Scenario::new(plan(false))
        .report_with("implement", failing_step())
        .answer(vec![
            Answer::select("Retry"),
            Answer::text("write the lexer first"),
        ])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let retry = run.requests.last().expect("a retry");
    assert_eq!((retry.phase.as_str(), retry.attempt), ("implement", 2));
    let context = retry.input.deviation.clone().expect("context");
    assert_eq!(retry.input.feedback, None);
    assert!(context.contains("write the lexer first"), "{context}");
    assert!(context.contains("cannot find module"), "{context}");
    Ok(())
}

#[tokio::test]
async fn a_deviation_replan_goes_back_to_the_planner_in_a_new_round() -> Result {
    let run = Scenario::new(plan(false))
        .report_with("implement", failing_step())
        .answer(vec![Answer::select("Replan"), Answer::none()])
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let replanned = &run.requests[2];
    assert_eq!((replanned.phase.as_str(), replanned.round), ("plan", 2));
    let failure = replanned.input.deviation.clone().expect("the failed step");
    assert!(failure.contains("Write parse()"), "{failure}");
    assert!(failure.contains("cannot find module `lexer`"), "{failure}");
    assert!(
        replanned.input.to_text().contains("## The failed step"),
        "{}",
        replanned.input.to_text()
    );
    Ok(())
}

#[tokio::test]
async fn the_retry_cap_removes_retry_from_the_deviation_menu() -> Result {
    let run =
        Scenario::new(plan(false).with_deviation(DeviationPolicy::default().with_retry_cap(1)))
            .report_with("implement", failing_step())
            .report_with("implement", failing_step())
            .answer(vec![Answer::select("Retry"), Answer::none()])
            .run()
            .await?;
    assert_eq!(run.status, RunStatus::AwaitingDeviation);
    let second = &run.touchpoints[1].questions.questions()[0];
    let labels: Vec<&str> = second.options().iter().map(|o| o.label.as_str()).collect();
    assert!(!labels.contains(&"Retry"), "{labels:?}");
    // Answering with an action that is not offered is refused, naming it;
    // nothing is recorded.
    let id = run.touchpoints[1].id.clone();
    let refused = run
        .engine
        .store()
        .answer(
            &run.run,
            &id,
            vec![Answer::select("Retry"), Answer::none()],
            DecidedBy::Operator,
        )
        .expect_err("retry is not offered");
    assert!(
        orcho::core::error_chain(&refused).contains("Retry"),
        "{refused}"
    );
    // Stop ends the run.
    run.engine.store().answer(
        &run.run,
        &id,
        vec![Answer::select("Stop"), Answer::none()],
        DecidedBy::Operator,
    )?;
    let Step::Finished { status, .. } = run.resume().await? else {
        panic!("stop ends the run");
    };
    assert_eq!(status, RunStatus::Halted);
    Ok(())
}

fn failing(step: u32) -> PhaseReport {
    PhaseReport::interrupted(Interruption::Deviation(Deviation::new(
        step,
        format!("step {step}"),
        "it failed",
    )))
}

fn offers_retry(touchpoint: &orcho::SupervisionRequest) -> bool {
    touchpoint.questions.questions()[0]
        .options()
        .iter()
        .any(|o| o.label == "Retry")
}

#[tokio::test]
async fn the_retry_cap_counts_retries_of_the_same_step_and_resets_on_replan() -> Result {
    // Step 1 fails and is retried; then step 2 fails: its first failure,
    // so retry is offered although the run has retried once already.
    let retry = || vec![Answer::select("Retry"), Answer::none()];
    let run =
        Scenario::new(plan(false).with_deviation(DeviationPolicy::default().with_retry_cap(1)))
            .report_with("implement", failing(1))
            .report_with("implement", failing(2))
            .report_with("implement", failing(2))
            .answer(retry())
            .answer(retry())
            .run()
            .await?;
    assert_eq!(run.status, RunStatus::AwaitingDeviation, "{}", run.trace);
    assert!(offers_retry(&run.touchpoints[0]));
    assert!(
        offers_retry(&run.touchpoints[1]),
        "step 2 was never retried"
    );
    // Step 2 again: its cap is spent.
    assert!(!offers_retry(&run.touchpoints[2]));

    // A replan starts the count again.
    let run =
        Scenario::new(plan(false).with_deviation(DeviationPolicy::default().with_retry_cap(1)))
            .report_with("implement", failing(1))
            .report_with("implement", failing(1))
            .answer(retry())
            .answer(vec![Answer::select("Replan"), Answer::none()])
            .report_with("implement", failing(1))
            .run()
            .await?;
    assert_eq!(run.status, RunStatus::AwaitingDeviation, "{}", run.trace);
    assert!(!offers_retry(&run.touchpoints[1]));
    assert!(offers_retry(&run.touchpoints[2]), "a replan resets the cap");
    Ok(())
}

#[tokio::test]
async fn resuming_an_unanswered_touchpoint_stays_at_it() -> Result {
    let run = Scenario::new(plan(true))
        .report_with("plan", approved_with_plan())
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPlanApproval);
    let step = run.resume().await?;
    let Step::ApprovePlan(request) = &step else {
        return Err(format!("expected the plan approval, got {step:?}").into());
    };
    assert_eq!(request.id.as_str(), "touchpoint-1");
    Ok(())
}
