//! Notifications (`orcho::notify`): which events are due to which
//! notifier, worked out from the store and the log of what was sent, and
//! retried on the policy's schedule.

use std::time::Duration;

use orcho::{
    PhaseRole, RunPlan,
    core::{Finding, RunStatus, Severity, Timestamp, Verdict},
    decide::{self, Decider},
    gates::PhaseOutcome,
    handoff::decision::DecidedBy,
    notify::{Delivery, EventKind, Notifier, NotifyError, Outcome, Retry, Secret, Target},
    testing::{Scenario, ScenarioRun},
};

use super::{Result, phase};

fn webhook() -> Target {
    Target::Webhook {
        url: "http://127.0.0.1:9/hook".to_owned(),
        secret: Secret::Env {
            var: "HOOK_SECRET".to_owned(),
        },
    }
}

async fn paused_at_review() -> Result<ScenarioRun> {
    let plan = RunPlan::new("notify", vec![phase("review", PhaseRole::Review)]);
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::Medium,
        "no name in the greeting",
    )]);
    let run = Scenario::new(plan)
        .task("greet the user by name")
        .report("review", rejected)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    Ok(run)
}

/// That a decided event says an operator decided.
fn assert_decided_by_operator(decided: &orcho::notify::DecidedRef) {
    assert!(
        decided
            .by
            .as_deref()
            .is_some_and(|b| b.contains("operator")),
        "{decided:?}"
    );
}

fn sent(due: &orcho::notify::Due, at: Timestamp) -> Delivery {
    due.delivery(at, Outcome::Sent { status: Some(200) })
}

#[tokio::test]
async fn a_point_that_waits_is_due_once_and_its_decision_after_it() -> Result {
    let run = paused_at_review().await?;
    let store = run.engine.store();
    let now = Timestamp::now();
    assert!(store.due(now)?.is_empty(), "no notifier, nothing due");

    let team =
        Notifier::new("team", webhook())?.with_inbox_url(Some("http://127.0.0.1:8080/".to_owned()));
    store.add_notifier(&team)?;
    let due = store.due(now)?;
    assert_eq!(due.len(), 1, "{due:#?}");
    let event = &due[0].event;
    assert_eq!(event.event, EventKind::PointOpened);
    assert_eq!(
        event.id,
        format!("point_opened/{}/handoff:0001-review", run.run)
    );
    assert_eq!(event.run.task.as_deref(), Some("greet the user by name"));
    let point = event.point.as_ref().ok_or("a point")?;
    assert_eq!(point.kind, "handoff");
    assert_eq!(point.headline, "phase `review` rejected");
    let names: Vec<&str> = point.actions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["continue", "retry_feedback", "continue_with_waiver", "halt"]
    );
    assert!(point.actions.iter().all(|a| !a.does.is_empty()));
    let url = format!("http://127.0.0.1:8080/runs/{}", run.run);
    assert_eq!(event.url.as_deref(), Some(url.as_str()));
    assert!(
        event.text.contains("phase `review` rejected"),
        "{}",
        event.text
    );
    assert!(event.text.contains(&url), "{}", event.text);
    assert_eq!(due[0].attempt, 1);

    // Sent once: not due again, however often it is asked.
    store.record_delivery(&sent(&due[0], now))?;
    assert!(store.due(now)?.is_empty());

    // Decided by a person: the decision is due, with who decided.
    let view = store.open_point(&run.run)?.ok_or("open")?;
    let decision = view.decision("retry_feedback", Some("say the name".into()))?;
    decide::decide(store, &run.run, decision, Decider::By(DecidedBy::Operator))?;
    let due = store.due(now)?;
    assert_eq!(due.len(), 1, "{due:#?}");
    let event = &due[0].event;
    assert_eq!(event.event, EventKind::Decided);
    let decided = event.decided.as_ref().ok_or("decided")?;
    assert_eq!(decided.action, "retry_feedback");
    assert_eq!(decided.note.as_deref(), Some("say the name"));
    assert_decided_by_operator(decided);
    assert!(
        event
            .text
            .contains("handoff `0001-review` decided `retry_feedback` by operator"),
        "{}",
        event.text
    );
    store.record_delivery(&sent(&due[0], now))?;
    assert!(store.due(now)?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_failed_delivery_is_retried_when_its_time_comes_and_then_given_up() -> Result {
    let run = paused_at_review().await?;
    let store = run.engine.store();
    store.add_notifier(&Notifier::new("team", webhook())?)?;
    let t0 = Timestamp::now();
    let policy = Retry::default();
    let first = store.due(t0)?.remove(0);
    let failed = policy.after_failure(1, t0, "connection refused".to_owned());
    let Outcome::Failed { retry_at, .. } = failed.clone() else {
        return Err(format!("tried again: {failed:?}").into());
    };
    assert_eq!(
        retry_at,
        t0.checked_add(Duration::from_secs(10)).ok_or("time")?
    );
    store.record_delivery(&first.delivery(t0, failed))?;
    assert!(store.due(t0)?.is_empty(), "not before its time");
    let again = store.due(retry_at)?;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].attempt, 2);
    assert_eq!(again[0].event, first.event, "the same document again");
    // The waits grow fourfold; the fifth failure gives up.
    let Outcome::Failed {
        retry_at: later, ..
    } = policy.after_failure(2, t0, String::new())
    else {
        return Err("tried again".into());
    };
    assert_eq!(
        later,
        t0.checked_add(Duration::from_secs(40)).ok_or("time")?
    );
    assert!(matches!(
        policy.after_failure(5, t0, "down".to_owned()),
        Outcome::GaveUp { .. }
    ));
    store.record_delivery(&again[0].delivery(
        retry_at,
        Outcome::GaveUp {
            error: "down".to_owned(),
        },
    ))?;
    assert!(
        store
            .due(
                retry_at
                    .checked_add(Duration::from_secs(3600))
                    .ok_or("time")?
            )?
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn a_notifier_hears_only_the_events_it_asked_for_and_runs_ended_since_it_was_added() -> Result
{
    let plan = RunPlan::new("notify", vec![phase("implement", PhaseRole::Implement)]);
    let run = Scenario::new(plan)
        .report("implement", PhaseOutcome::new(Verdict::Approved))
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let store = run.engine.store();
    let now = Timestamp::now();
    // Added after the run: its end is history.
    store
        .add_notifier(&Notifier::new("late", webhook())?.with_events(vec![EventKind::RunEnded]))?;
    assert!(store.due(now)?.is_empty());
    // Added before it (by its clock), and asking only for ends.
    let early = Notifier::new("early", webhook())?
        .with_events(vec![EventKind::RunEnded])
        .created(Timestamp::from_unix_millis(0)?);
    store.add_notifier(&early)?;
    let due = store.due(now)?;
    assert_eq!(due.len(), 1, "{due:#?}");
    assert_eq!(due[0].notifier.name, "early");
    assert_eq!(due[0].event.event, EventKind::RunEnded);
    let ended = due[0].event.ended.as_ref().ok_or("ended")?;
    assert_eq!(ended.status, "completed");
    assert!(
        due[0].event.text.contains("ended completed"),
        "{}",
        due[0].event.text
    );
    Ok(())
}

#[tokio::test]
async fn notifiers_are_named_once_and_a_typo_is_answered_with_the_nearest() -> Result {
    let run = paused_at_review().await?;
    let store = run.engine.store();
    store.add_notifier(&Notifier::new("team-chat", webhook())?)?;
    let err = store
        .add_notifier(&Notifier::new("team-chat", webhook())?)
        .unwrap_err();
    assert!(matches!(err, NotifyError::Exists(_)), "{err}");
    let err = store.remove_notifier("team-caht").unwrap_err();
    assert_eq!(
        err.to_string(),
        "the store has no notifier named `team-caht` (did you mean `team-chat`?)"
    );
    assert!(Notifier::new("../escape", webhook()).is_err());
    let err = "point_open".parse::<EventKind>().unwrap_err();
    assert!(
        err.to_string().contains("did you mean `point_opened`"),
        "{err}"
    );
    let err = "ended".parse::<EventKind>().unwrap_err();
    assert!(
        err.to_string().contains("did you mean `run_ended`"),
        "{err}"
    );
    store.remove_notifier("team-chat")?;
    assert!(store.notifiers()?.is_empty());
    assert!(store.due(Timestamp::now())?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_touchpoint_decided_says_who_decided_it() -> Result {
    use orcho::{
        PhaseReport,
        handoff::supervision::{Plan, PlanStep},
    };
    let plan = RunPlan::new(
        "notify",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
        ],
    )
    .with_plan_approval(true);
    let the_plan = Plan::new("Add a parser").with_step(PlanStep::new("coder", "Write parse()"));
    let run = Scenario::new(plan)
        .report_with(
            "plan",
            PhaseReport::new(PhaseOutcome::new(Verdict::Approved)).with_plan(the_plan),
        )
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPlanApproval, "{}", run.trace);
    let store = run.engine.store();
    let now = Timestamp::now();
    store.add_notifier(&Notifier::new("team", webhook())?)?;
    for due in store.due(now)? {
        store.record_delivery(&sent(&due, now))?;
    }
    let view = store.open_point(&run.run)?.ok_or("open")?;
    decide::decide(
        store,
        &run.run,
        view.decision("approve", None)?,
        Decider::By(DecidedBy::Operator),
    )?;
    let due = store.due(now)?;
    let decided = due
        .iter()
        .find(|d| d.event.event == EventKind::Decided)
        .and_then(|d| d.event.decided.as_ref())
        .ok_or_else(|| format!("no decided event: {due:#?}"))?;
    assert_eq!(decided.action, "plan decided");
    assert_decided_by_operator(decided);
    Ok(())
}
