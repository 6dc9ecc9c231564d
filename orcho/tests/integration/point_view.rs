//! The view of an open decision point (`orcho::point`): the same from the
//! step a host holds and from the store alone, with the actions on offer,
//! their note rules and what a decision is pinned to; deciding by name
//! through it.

use orcho::{
    PhaseReport, PhaseRole, RunPlan, Step,
    core::{Finding, RunStatus, Severity, Verdict},
    decide::{self, DecideError},
    gates::PhaseOutcome,
    handoff::{
        decision::DecidedBy,
        supervision::{Deviation, Plan, PlanStep, Question, QuestionBatch, QuestionOption},
    },
    point::{Note, PointKind, PointView},
    testing::{Scenario, ScenarioRun},
};

use super::{Result, phase};

/// The view of `run`'s point from the store, checked against the one from
/// the step a host gets on resume.
async fn point(run: &ScenarioRun) -> Result<PointView> {
    let stored = run
        .engine
        .store()
        .open_point(&run.run)?
        .ok_or("the run waits at a point")?;
    let step = run.resume().await?;
    assert_eq!(PointView::of(&run.run, &step).as_ref(), Some(&stored));
    Ok(stored)
}

fn names(view: &PointView) -> Vec<&str> {
    view.actions.iter().map(|a| a.name.as_str()).collect()
}

#[tokio::test]
async fn a_handoff_says_what_each_action_does_and_which_need_a_note() -> Result {
    let plan = RunPlan::new("view", vec![phase("review", PhaseRole::Review)]);
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::Medium,
        "no name in the greeting",
    )]);
    let run = Scenario::new(plan).report("review", rejected).run().await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    let view = point(&run).await?;
    assert_eq!(view.kind, PointKind::Handoff);
    assert_eq!(view.id.as_ref(), Some(run.handoffs[0].id()));
    assert_eq!(view.phase.as_ref().map(|p| p.as_str()), Some("review"));
    assert_eq!(view.headline, "phase `review` rejected");
    assert_eq!(view.findings[0].title, "no name in the greeting");
    assert_eq!(
        names(&view),
        ["continue", "retry_feedback", "continue_with_waiver", "halt"]
    );
    let retry = view.action("retry_feedback")?;
    assert_eq!(retry.does, "run `review` again with your feedback");
    assert!(retry.note.required());
    assert_eq!(
        view.action("HALT")?.note,
        Note::Optional("why, kept with the decision")
    );

    // A decision taken on another handoff than the open one is refused.
    view.check_seen(Some("0001-review"), None)?;
    let err = view.check_seen(Some("0002-review"), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the decision is about `0002-review`, and the run now waits at `0001-review`"
    );

    // The note rules, before anything is recorded.
    let err = view
        .decision("retry_feedback", Some("  ".into()))
        .unwrap_err();
    assert!(matches!(err, DecideError::NoteRequired { .. }), "{err}");
    // `halt` and `continue` take a note for the record.
    assert!(matches!(
        view.decision("halt", Some("why not".into()))?,
        decide::Decision::Handoff { text: Some(ref t), .. } if t == "why not"
    ));
    let err = view.decision("contnue", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`contnue` is not an action of this handoff: choose `continue`, `retry_feedback`, \
         `continue_with_waiver`, `halt` (did you mean `continue`?)"
    );

    // Decided by name: the point is no longer open, and the run goes on
    // with the feedback.
    let decision = view.decision("retry_feedback", Some("greet by name".into()))?;
    let decided = decide::decide(run.engine.store(), &run.run, decision, DecidedBy::Operator)?;
    assert_eq!(
        (decided.point, decided.action.as_str()),
        ("handoff", "retry_feedback")
    );
    assert_eq!(run.engine.store().open_point(&run.run)?, None);
    let Step::RunPhase(request) = run.resume().await? else {
        return Err("the review runs again".into());
    };
    assert_eq!(request.input.feedback.as_deref(), Some("greet by name"));
    Ok(())
}

fn supervised(approval: bool) -> RunPlan {
    RunPlan::new(
        "view",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
        ],
    )
    .with_plan_approval(approval)
}

#[tokio::test]
async fn a_plan_for_approval_is_pinned_by_its_digest() -> Result {
    let the_plan = Plan::new("Add a parser").with_step(PlanStep::new("coder", "Write parse()"));
    let run = Scenario::new(supervised(true))
        .report_with(
            "plan",
            PhaseReport::new(PhaseOutcome::new(Verdict::Approved)).with_plan(the_plan.clone()),
        )
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPlanApproval, "{}", run.trace);
    let view = point(&run).await?;
    assert_eq!(view.kind, PointKind::PlanApproval);
    assert_eq!(view.headline, "the plan waits for approval: Add a parser");
    assert_eq!(names(&view), ["approve", "request_changes", "reject"]);
    assert_eq!(view.action("approve")?.does, "Execute this plan");
    assert_eq!(view.pinned.len(), 1);
    assert_eq!(
        (view.pinned[0].what, view.pinned[0].digest),
        ("plan", the_plan.digest())
    );
    view.check_seen(None, Some(&the_plan.digest().to_string()))?;
    let other = Plan::new("Add a lexer").digest().to_string();
    let err = view.check_seen(None, Some(&other)).unwrap_err();
    assert!(
        matches!(err, DecideError::Stale { what: "plan", .. }),
        "{err}"
    );
    let err = view.decision("request_changes", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`request_changes` needs a note: what the planner changes"
    );
    let decision = view.decision("approve", None)?;
    decide::decide(run.engine.store(), &run.run, decision, DecidedBy::Operator)?;
    assert_eq!(run.engine.store().open_point(&run.run)?, None);
    Ok(())
}

#[tokio::test]
async fn planner_questions_are_answered_one_per_line() -> Result {
    let batch = QuestionBatch::new([
        Question::new(
            "Storage",
            "Where should parsed documents be kept?",
            [QuestionOption::new("Memory"), QuestionOption::new("Disk")],
        )?,
        Question::new("Name", "What is the module called?", [])?,
    ])?;
    let run = Scenario::new(supervised(false))
        .report_with(
            "plan",
            PhaseReport::interrupted(orcho::Interruption::Questions(batch)),
        )
        .run()
        .await?;
    let view = point(&run).await?;
    assert_eq!(view.kind, PointKind::PlannerQuestions);
    assert_eq!(view.headline, "the planner asks 2 question(s)");
    assert_eq!(names(&view), ["answer"]);
    assert_eq!(view.questions[0].options, ["Memory", "Disk"]);
    assert!(view.questions[1].options.is_empty());
    let err = view.decision("answer", None).unwrap_err();
    assert!(matches!(err, DecideError::NoteRequired { .. }), "{err}");
    let decision = view.decision("answer", Some("2\nparse".into()))?;
    decide::decide(run.engine.store(), &run.run, decision, DecidedBy::Operator)?;
    let Step::RunPhase(request) = run.resume().await? else {
        return Err("the planner runs again".into());
    };
    let answers = request.input.answers.unwrap_or_default();
    assert!(
        answers.contains("Disk") && answers.contains("parse"),
        "{answers}"
    );
    Ok(())
}

#[tokio::test]
async fn a_deviation_offers_what_its_cap_leaves() -> Result {
    let run = Scenario::new(supervised(false))
        .report_with(
            "implement",
            PhaseReport::interrupted(orcho::Interruption::Deviation(Deviation::new(
                1,
                "Write parse()",
                "cannot find module `lexer`",
            ))),
        )
        .run()
        .await?;
    let view = point(&run).await?;
    assert_eq!(view.kind, PointKind::Deviation);
    assert_eq!(
        view.headline,
        "step 1 failed (Write parse()): cannot find module `lexer`"
    );
    assert_eq!(names(&view), ["retry", "replan", "stop"]);
    assert_eq!(
        view.action("retry")?.note,
        Note::Optional("guidance for the retry")
    );
    Ok(())
}

#[tokio::test]
async fn intake_and_delivery_are_views_too_and_delivery_is_pinned_to_its_patch() -> Result {
    let plan = || {
        RunPlan::new(
            "view",
            vec![
                phase("implement", PhaseRole::Implement),
                phase("final_acceptance", PhaseRole::FinalAcceptance).with_max_attempts(1),
            ],
        )
    };
    let dirty = Scenario::new(plan())
        .in_worktree()
        .dirty("notes.txt", "work in progress\n")
        .run()
        .await?;
    assert_eq!(dirty.status, RunStatus::AwaitingIntake);
    let view = point(&dirty).await?;
    assert_eq!(view.kind, PointKind::Intake);
    assert!(
        view.headline
            .ends_with("has uncommitted changes: 0 tracked file(s) changed, 1 untracked"),
        "{}",
        view.headline
    );
    assert_eq!(names(&view), ["include", "exclude", "commit", "halt"]);
    let err = view.check_seen(None, Some("blake3:00")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the intake pins no digest, and the decision names `blake3:00`"
    );
    assert_eq!(
        view.action("commit")?.note,
        Note::Optional("the commit message")
    );
    // A note given to an action that takes none is refused, never dropped.
    let err = view
        .decision("include", Some("why not".into()))
        .unwrap_err();
    assert_eq!(err.to_string(), "`include` takes no note");

    let parked = Scenario::new(plan())
        .in_worktree()
        .before("implement", 1, |worktree| {
            orcho::core::fs::write_atomic(&worktree.join("parse.rs"), b"pub fn parse() {}\n")
                .expect("write");
        })
        .run()
        .await?;
    assert_eq!(
        parked.status,
        RunStatus::AwaitingDelivery,
        "{}",
        parked.trace
    );
    let view = point(&parked).await?;
    assert_eq!(view.kind, PointKind::Delivery);
    assert!(
        view.headline
            .starts_with("release approved: 1 file(s) changed")
    );
    let gate = parked.engine.store().delivery_gate(&parked.run)?;
    assert_eq!(
        (view.pinned[0].what, view.pinned[0].digest),
        ("patch", gate.patch_digest())
    );
    let decision = view.decision("skip", None)?;
    let decide::Decision::Delivery { patch, .. } = decision.clone() else {
        return Err("a delivery decision".into());
    };
    assert_eq!(
        patch,
        Some(gate.patch_digest()),
        "pinned to the patch shown"
    );
    decide::decide(
        parked.engine.store(),
        &parked.run,
        decision,
        DecidedBy::Operator,
    )?;
    assert_eq!(parked.engine.store().open_point(&parked.run)?, None);
    Ok(())
}
