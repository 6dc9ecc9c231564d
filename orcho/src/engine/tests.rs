//! Unit tests of the engine's recovery paths.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{FixedClock, GateName, RunStatus, Verdict};
use orcho_gates::{
    FailStrategy, GateContext, GateError, GateOutcome, GateRecord, PhaseOutcome, QualityGate,
    QualityGateResult, ScheduledGate,
};
use orcho_handoff::{
    decision::{DecidedBy, DecisionRequest},
    handoff::{HandoffChoice, HandoffSpec},
};

use super::*;
use crate::{
    PhasePlan, PhaseRole, RunPlan,
    state::{Resumption, RunEvent, Transition},
};

/// Counts its runs; fails when told to.
#[derive(Debug)]
struct Counting {
    name: GateName,
    fail: bool,
    runs: Arc<AtomicUsize>,
}

#[orcho_gates::async_trait]
impl QualityGate for Counting {
    fn name(&self) -> &GateName {
        &self.name
    }

    async fn evaluate(&self, _ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let outcome = if self.fail {
            GateOutcome::Failed
        } else {
            GateOutcome::Passed
        };
        Ok(QualityGateResult::computational(self.name.clone(), outcome))
    }
}

fn engine(dir: &tempfile::TempDir, plan: RunPlan) -> (Engine, Utf8PathBuf) {
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let clock = Arc::new(FixedClock::new(
        "2026-11-21T12:00:00Z".parse().expect("time"),
    ));
    let engine = Engine::builder(plan, root.join("store"))
        .clock(clock)
        .build()
        .expect("engine");
    (engine, root)
}

fn review_plan() -> RunPlan {
    RunPlan::new(
        "recovery",
        vec![PhasePlan::new(
            "review".parse().expect("phase"),
            PhaseRole::Review,
        )],
    )
}

#[tokio::test]
async fn a_persisted_halt_skips_the_remaining_gates_without_running_them() {
    let later = Arc::new(AtomicUsize::new(0));
    let gate = |name: &str, fail, runs: &Arc<AtomicUsize>| {
        let gate: Arc<dyn QualityGate> = Arc::new(Counting {
            name: name.parse().expect("gate"),
            fail,
            runs: Arc::clone(runs),
        });
        gate
    };
    let first = Arc::new(AtomicUsize::new(0));
    let plan = RunPlan::new(
        "halt",
        vec![
            PhasePlan::new("implement".parse().expect("phase"), PhaseRole::Implement)
                .with_gate(ScheduledGate::new(
                    gate("build", true, &first),
                    FailStrategy::Halt,
                ))
                .with_gate(ScheduledGate::new(
                    gate("tests", false, &later),
                    FailStrategy::FeedIntoNext,
                )),
        ],
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let (engine, root) = engine(&dir, plan);
    let mut run = engine.start(&root).expect("start");
    // The process reported the attempt and persisted the halting result,
    // then died before the rest was recorded.
    let halting =
        QualityGateResult::computational("build".parse().expect("gate"), GateOutcome::Failed);
    run.commit(&RunEvent::PhaseReported {
        phase: "implement".parse().expect("phase"),
        attempt: 1,
        round: 1,
        outcome: PhaseOutcome::new(Verdict::Approved),
        cost: orcho_core::Cost::default(),
        plan: None,
    })
    .expect("report");
    run.commit(&RunEvent::GateRecorded {
        record: GateRecord::new(0, FailStrategy::Halt, halting),
    })
    .expect("record");
    let id = run.id().clone();
    drop(run);

    let mut reopened = engine.open(&id).expect("reopen");
    let step = reopened.next().await.expect("next");
    assert!(
        matches!(
            step,
            Step::Finished {
                status: RunStatus::Halted,
                ..
            }
        ),
        "{step:?}"
    );
    assert_eq!(
        first.load(Ordering::SeqCst),
        0,
        "the recorded gate is not run again"
    );
    assert_eq!(
        later.load(Ordering::SeqCst),
        0,
        "gates after a persisted halt never run"
    );
    let trace = engine.store().trace(&id).expect("trace");
    assert!(
        trace.contains("gate `tests` skipped (halted by gate `build`)"),
        "{trace}"
    );
}

/// Drives the review to its pause and returns the run.
async fn paused(engine: &Engine, root: &Utf8Path) -> Run {
    let mut run = engine.start(root).expect("start");
    run.next().await.expect("next");
    let step = run
        .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Rejected)))
        .await
        .expect("complete");
    assert!(matches!(step, Step::DecideHandoff(_)), "{step:?}");
    run
}

#[tokio::test]
async fn a_handoff_opened_but_not_journalled_is_adopted_not_opened_twice() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (engine, root) = engine(&dir, review_plan());
    let mut run = engine.start(&root).expect("start");
    run.next().await.expect("next");
    // Settle the attempt into a pause by hand, then open the handoff in
    // the store without journalling it: a crash between the two.
    run.commit(&RunEvent::PhaseReported {
        phase: "review".parse().expect("phase"),
        attempt: 1,
        round: 1,
        outcome: PhaseOutcome::new(Verdict::Rejected),
        cost: orcho_core::Cost::default(),
        plan: None,
    })
    .expect("report");
    run.commit(&RunEvent::PhaseSettled {
        effect: "continue".into(),
        transition: Transition::Pause {
            trigger: crate::PauseTrigger::Verdict,
            verdict: Verdict::Rejected,
            findings: Vec::new(),
        },
    })
    .expect("settle");
    let orphan = engine
        .inner
        .store
        .handoffs
        .open(HandoffSpec::new(
            run.id().clone(),
            "review".parse().expect("phase"),
            Verdict::Rejected,
        ))
        .expect("open");
    let id = run.id().clone();
    drop(run);

    let mut reopened = engine.open(&id).expect("reopen");
    let Step::DecideHandoff(handoff) = reopened.next().await.expect("next") else {
        panic!("expected the pause");
    };
    assert_eq!(handoff.id(), orphan.id(), "the orphan is adopted");
    assert_eq!(
        engine.store().handoffs(&id).expect("handoffs").len(),
        1,
        "no second handoff"
    );
}

#[tokio::test]
async fn a_resume_the_store_did_but_the_journal_missed_is_recovered_from_the_decision() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (engine, root) = engine(&dir, review_plan());
    let run = paused(&engine, &root).await;
    let id = run.id().clone();
    let handoff = run.state().handoff().cloned().expect("open handoff");
    drop(run);
    let choice = HandoffChoice::retry("add the missing test").expect("text");
    engine
        .store()
        .decide(
            &id,
            &handoff,
            DecisionRequest::new(choice, DecidedBy::Operator),
        )
        .expect("decide");
    // The store resumed the handoff; the process died before journalling.
    engine
        .inner
        .store
        .handoffs
        .resume_handoff(&id, &handoff)
        .expect("store resume");

    let mut reopened = engine.open(&id).expect("reopen");
    let Step::RunPhase(request) = reopened.resume().await.expect("resume") else {
        panic!("expected the retry");
    };
    assert_eq!(request.attempt, 2);
    assert_eq!(
        request.input.feedback.as_deref(),
        Some("add the missing test")
    );
    let events = engine.store().events(&id).expect("events");
    let resumed = events
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                RunEvent::HandoffResumed {
                    resumption: Resumption::Retry { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(resumed, 1, "the resume is journalled exactly once");
}
