//! A store written by the code before the storage seam existed, kept as a
//! fixture (`tests/fixtures/store-paused`): runs paused at every kind of
//! decision point, decided and not yet resumed, with advice, a waiver,
//! host metadata and a delivery gate. Every run still lists and reads, the
//! inbox shows what waits, and each paused run takes its decision and
//! resumes to its end.

use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, Listed, PhaseReport, PhaseRole, RunPlan, Step,
    core::Verdict,
    gates::PhaseOutcome,
    handoff::{
        HandoffAction,
        decision::{DecidedBy, DecisionRequest},
        handoff::HandoffChoice,
        supervision::Answer,
    },
};

use super::{Result, copy_dir, phase};

/// The plan the fixture's runs were started with.
fn plan(approval: bool) -> RunPlan {
    RunPlan::new(
        "paused",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
            phase("review", PhaseRole::Review),
        ],
    )
    .with_plan_approval(approval)
}

fn fixture() -> Result<(tempfile::TempDir, Utf8PathBuf)> {
    let fixture = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-paused");
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?.join("store");
    copy_dir(&fixture, &root)?;
    Ok((tmp, root))
}

/// Drives `step` to the run's end, approving every phase it asks for.
async fn finish(run: &mut orcho::Run, mut step: Step) -> Result<Step> {
    loop {
        step = match step {
            Step::RunPhase(_) => {
                run.complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Approved)))
                    .await?
            }
            other => return Ok(other),
        };
    }
}

#[tokio::test]
async fn a_store_of_paused_runs_lists_reads_decides_and_resumes() -> Result {
    let (_tmp, root) = fixture()?;
    let engine = Engine::builder(plan(false), &root).build()?;
    let listed = engine.store().list()?;
    assert_eq!(listed.len(), 10, "every run of the fixture is listed");
    assert!(
        listed.iter().all(|l| matches!(l, Listed::Run(_))),
        "{listed:?}"
    );
    let mut inbox = String::new();
    for entry in engine.store().inbox()?.pending() {
        writeln!(
            inbox,
            "{} {} decided={:?} actions={:?}",
            entry.phase(),
            entry.trigger(),
            entry.decision(),
            entry.available_actions()
        )?;
    }
    insta::assert_snapshot!(inbox, @r#"
    delivery release decided=None actions=["approve", "apply", "skip", "halt"]
    plan_approval plan_approval decided=Some("answered") actions=["Approve", "Request Changes", "Reject"]
    deviation deviation decided=None actions=["Retry", "Replan", "Stop"]
    plan_approval plan_approval decided=None actions=["Approve", "Request Changes", "Reject"]
    planner_questions planner_questions decided=None actions=["answer"]
    review verdict decided=None actions=["continue", "retry_feedback", "continue_with_waiver", "halt"]
    implement verdict decided=Some("retry_feedback") actions=["continue", "retry_feedback", "continue_with_waiver", "halt"]
    implement verdict decided=None actions=["continue", "retry_feedback", "continue_with_waiver", "halt"]
    "#);

    let runs: Vec<_> = listed.iter().rev().map(|l| l.run().clone()).collect();
    let mut traces = String::new();
    for (n, id) in runs.iter().enumerate() {
        let approval = matches!(n, 4 | 6);
        let engine = Engine::builder(plan(approval), &root).build()?;
        let view = engine.store().status(id)?;
        if view.status.is_terminal() || view.target.is_some() {
            writeln!(traces, "run {n}: {} (left as it is)", view.status)?;
            continue;
        }
        if let Some(handoff) = view.handoff()
            && engine.store().handoff_decision(id, handoff)?.is_none()
        {
            let advice = engine.store().advice(id)?;
            let mut request = DecisionRequest::new(
                HandoffChoice::new(HandoffAction::RetryFeedback, Some("try again"))?,
                DecidedBy::Operator,
            );
            if let Some(a) = advice.first() {
                request = request.with_advice(a.id().clone());
            }
            engine.store().decide(id, handoff, request)?;
        }
        if let Some((touchpoint, _)) = view.touchpoint() {
            let open = engine
                .store()
                .touchpoints(id)?
                .into_iter()
                .find(|t| &t.id == touchpoint)
                .ok_or("the touchpoint")?;
            if open.resolution.is_none() {
                let first = open.touchpoint.questions()?.questions()[0].options()[0]
                    .label
                    .clone();
                let mut answers = vec![Answer::select(first)];
                if !matches!(
                    open.touchpoint,
                    orcho::handoff::supervision::Touchpoint::PlannerQuestions { .. }
                ) {
                    answers.push(Answer::none());
                }
                engine
                    .store()
                    .answer(id, touchpoint, answers, DecidedBy::Operator)?;
            }
        }
        let mut run = engine.open(id)?;
        let step = run.resume().await?;
        let end = finish(&mut run, step).await?;
        let Step::Finished { status, .. } = end else {
            return Err(format!("run {n} did not finish: {end:?}").into());
        };
        writeln!(traces, "run {n}: {status}")?;
        traces.push_str(&engine.store().trace(id)?);
    }
    insta::assert_snapshot!(traces);
    // What the host kept with the first run reads back.
    assert_eq!(
        engine.store().host_metadata(&runs[0])?,
        Some(serde_json::json!({"schema": 1, "note": "kept by the host"}))
    );
    Ok(())
}

#[test]
fn the_inbox_filters_by_kind_and_age_and_reads_a_page_at_a_time() -> Result {
    use std::time::Duration;

    use orcho::{InboxFilter, InboxPage, point::PointKind};

    let (_tmp, root) = fixture()?;
    let store = orcho::Store::open(&root);
    let all = store.team_inbox(&InboxFilter::all())?;
    assert_eq!(all.total, 8, "{all:?}");
    assert_eq!(all.page, None);
    let kinds = |team: &orcho::TeamInbox| {
        team.inbox
            .pending()
            .map(|p| PointKind::of_pending(p.point()).map(PointKind::name))
            .collect::<Vec<_>>()
    };

    // One kind: only its points, counted alone.
    let handoffs = store.team_inbox(&InboxFilter::all().with_kind(PointKind::Handoff))?;
    assert_eq!(kinds(&handoffs), [Some("handoff"); 3], "{handoffs:?}");
    assert_eq!(handoffs.total, 3);
    let approvals = store.team_inbox(&InboxFilter::all().with_kind(PointKind::PlanApproval))?;
    assert_eq!(approvals.total, 2, "{approvals:?}");
    let delivery = store.team_inbox(&InboxFilter::all().with_kind(PointKind::Delivery))?;
    assert_eq!(kinds(&delivery), [Some("delivery")]);

    // Age: the fixture's points opened in 2026 and wait still; none is
    // younger than an hour, all are older than a day.
    let old =
        store.team_inbox(&InboxFilter::all().waiting_longer_than(Duration::from_secs(86_400)))?;
    assert_eq!(old.total, 8);
    let young =
        store.team_inbox(&InboxFilter::all().waiting_less_than(Duration::from_secs(3600)))?;
    assert_eq!(young.total, 0, "{young:?}");
    // What a filter leaves out does not change the store's revision.
    assert_eq!(young.revision, all.revision);

    // Pages of three: the same points in the same order, each once.
    let mut paged = Vec::new();
    for number in 1..=3 {
        let page = store.team_inbox_page(&InboxFilter::all(), InboxPage::new(number, 3))?;
        assert_eq!(page.total, 8);
        assert_eq!(page.page.map(|p| p.count(page.total)), Some(3));
        paged.extend(
            page.inbox
                .pending()
                .map(|p| (p.run().clone(), p.phase().to_owned())),
        );
    }
    let whole: Vec<_> = all
        .inbox
        .pending()
        .map(|p| (p.run().clone(), p.phase().to_owned()))
        .collect();
    assert_eq!(paged, whole);
    // A page past the last is empty, and still counts them all.
    let past = store.team_inbox_page(&InboxFilter::all(), InboxPage::new(9, 3))?;
    assert_eq!((past.inbox.pending().count(), past.total), (0, 8));
    // A filter and a page together.
    let page = store.team_inbox_page(
        &InboxFilter::all().with_kind(PointKind::Handoff),
        InboxPage::new(2, 2),
    )?;
    assert_eq!((kinds(&page).len(), page.total), (1, 3));
    Ok(())
}

#[test]
fn a_kind_is_read_by_its_name_or_as_messages_say_it() {
    use orcho::point::PointKind;
    for kind in PointKind::ALL {
        assert_eq!(kind.name().parse::<PointKind>(), Ok(kind));
        assert_eq!(kind.as_str().parse::<PointKind>(), Ok(kind));
    }
    assert_eq!(
        "Plan-Approval".parse::<PointKind>(),
        Ok(PointKind::PlanApproval)
    );
    let slip = "handof".parse::<PointKind>().expect_err("no kind");
    assert_eq!(slip.near.as_deref(), Some("handoff"));
    assert!(
        slip.to_string().contains("did you mean `handoff`"),
        "{slip}"
    );
    let part = "questions".parse::<PointKind>().expect_err("no kind");
    assert_eq!(part.near.as_deref(), Some("planner_questions"));
}
