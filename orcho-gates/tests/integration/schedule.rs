//! The scheduler: order, halting, timeouts, waves, errors.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use orcho_core::{Finding, Severity, Tokens, Usd};
use orcho_gates::{
    Cancellation, FailStrategy, GateOutcome, GateRecord, ModelUsage, PhaseEffect, QualityGateExt,
    ScheduledGate, Scheduler,
    testing::{GateLog, ScriptedGate},
};

use crate::{Result, context, name};

fn scheduler(ctx: &orcho_gates::GateContext) -> Scheduler {
    Scheduler::builder(ctx.checkout().join(".orcho").join("locks"))
        .inferential_concurrency(4)
        .build()
}

fn outcomes(records: &[GateRecord]) -> Vec<(String, &'static str)> {
    records
        .iter()
        .map(|r| (r.result.gate.to_string(), r.result.outcome.as_str()))
        .collect()
}

#[tokio::test]
async fn gates_run_in_declared_order() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let gates: Vec<ScheduledGate> = ["build", "tests", "lint", "docs"]
        .into_iter()
        .map(|n| {
            ScheduledGate::new(
                ScriptedGate::pass(name(n)).with_log(&log).into_dyn(),
                FailStrategy::FeedIntoNext,
            )
        })
        .collect();
    let phase = scheduler(&ctx).run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(log.started(), ["build", "tests", "lint", "docs"]);
    assert_eq!(
        log.max_overlap(),
        1,
        "computational gates run one at a time"
    );
    assert_eq!(phase.effect, PhaseEffect::Continue);
    Ok(())
}

#[tokio::test]
async fn a_halting_failure_is_persisted_before_the_rest_is_skipped() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::pass(name("build")).with_log(&log).into_dyn(),
            FailStrategy::Halt,
        ),
        ScheduledGate::new(
            ScriptedGate::fail(
                name("tests"),
                [Finding::new(
                    "tests",
                    Severity::Critical,
                    "the build is broken",
                )],
            )
            .with_log(&log)
            .into_dyn(),
            FailStrategy::Halt,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("lint")).with_log(&log).into_dyn(),
            FailStrategy::Informational,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("judge"))
                .inferential()
                .with_log(&log)
                .into_dyn(),
            FailStrategy::Informational,
        ),
    ];
    let persisted = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&persisted);
    let phase = scheduler(&ctx)
        .run(&ctx, &gates, move |record| {
            sink.lock().map_err(|_| "poisoned")?.push((
                record.result.gate.to_string(),
                record.result.outcome.clone(),
            ));
            Ok(())
        })
        .await?;

    let persisted = persisted.lock().map_err(|_| "poisoned")?.clone();
    let order: Vec<&str> = persisted.iter().map(|(g, _)| g.as_str()).collect();
    assert_eq!(
        order,
        ["build", "tests", "lint", "judge"],
        "the halting result is recorded before the skips"
    );
    assert_eq!(persisted[1].1, GateOutcome::Failed);
    for (_, outcome) in &persisted[2..] {
        assert_eq!(
            outcome,
            &GateOutcome::Skipped {
                reason: "halted by gate `tests`".into()
            }
        );
    }
    assert_eq!(
        log.started(),
        ["build", "tests"],
        "nothing after the halt ran"
    );
    let PhaseEffect::Halt { failure } = phase.effect else {
        panic!("halt expected")
    };
    assert_eq!(failure.gate, "tests");
    Ok(())
}

#[tokio::test]
async fn a_hanging_gate_is_cancelled_at_its_timeout() -> Result {
    let (_dir, ctx) = context();
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::hang(name("stuck")).into_dyn(),
            FailStrategy::FeedIntoNext,
        )
        .with_timeout(Duration::from_millis(100)),
        ScheduledGate::new(
            ScriptedGate::pass(name("after")).into_dyn(),
            FailStrategy::FeedIntoNext,
        ),
    ];
    let phase = scheduler(&ctx).run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(
        outcomes(&phase.records),
        [("stuck".into(), "timed_out"), ("after".into(), "passed")]
    );
    assert_eq!(
        phase.records[0].result.outcome,
        GateOutcome::TimedOut { after_ms: 100 }
    );
    let PhaseEffect::FeedIntoNext { failures } = phase.effect else {
        panic!("a timeout is a failure")
    };
    assert_eq!(failures[0].gate, "stuck");
    Ok(())
}

#[tokio::test]
async fn a_gate_that_cannot_run_is_errored_not_failed_and_never_passes() -> Result {
    let (_dir, ctx) = context();
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::error(name("judge"), "connection refused")
                .inferential()
                .into_dyn(),
            FailStrategy::TriggerReplan,
        ),
        ScheduledGate::new(
            ScriptedGate::panics(name("buggy")).inferential().into_dyn(),
            FailStrategy::FeedIntoNext,
        ),
        // Computational gates run inline, on the scheduler's own task: a
        // panic there is caught the same way.
        ScheduledGate::new(
            ScriptedGate::panics(name("buggy_check")).into_dyn(),
            FailStrategy::FeedIntoNext,
        ),
    ];
    let phase = scheduler(&ctx).run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(
        phase.records[0].result.outcome,
        GateOutcome::Errored {
            error: "connection refused".into()
        }
    );
    assert_eq!(
        phase.records[1].result.outcome,
        GateOutcome::Errored {
            error: "the gate panicked".into()
        }
    );
    assert_eq!(
        phase.records[2].result.outcome,
        phase.records[1].result.outcome
    );
    assert_eq!(phase.effect.as_str(), "replan");
    Ok(())
}

#[tokio::test]
async fn a_wave_of_eight_runs_four_at_a_time() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let gates: Vec<ScheduledGate> = (0..8)
        .map(|i| {
            let gate = ScriptedGate::pass(name(&format!("judge{i}")))
                .inferential()
                .with_delay(Duration::from_millis(200))
                .with_log(&log);
            ScheduledGate::new(gate.into_dyn(), FailStrategy::Informational)
        })
        .collect();
    let phase = scheduler(&ctx).run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(phase.records.len(), 8);
    // Overlap facts, not wall-clock thresholds: gates did run together, and
    // never more than the bound.
    assert_eq!(log.max_overlap(), 4);
    let indices: Vec<usize> = phase.records.iter().map(|r| r.index).collect();
    assert_eq!(
        indices,
        (0..8).collect::<Vec<_>>(),
        "records come back in declared order"
    );
    Ok(())
}

/// An informational inferential gate `slow_judge` that never ends.
fn hanging_judge(log: &GateLog) -> ScheduledGate {
    ScheduledGate::new(
        ScriptedGate::hang(name("slow_judge"))
            .inferential()
            .with_log(log)
            .into_dyn(),
        FailStrategy::Informational,
    )
}

/// `n` informational inferential gates `later0`.. that pass at once.
fn later_judges(log: &GateLog, n: usize) -> impl Iterator<Item = ScheduledGate> {
    (0..n).map(|i| {
        ScheduledGate::new(
            ScriptedGate::pass(name(&format!("later{i}")))
                .inferential()
                .with_log(log)
                .into_dyn(),
            FailStrategy::Informational,
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_gate_of_a_wave_starts_after_a_halting_failure() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let mut gates = vec![
        ScheduledGate::new(
            ScriptedGate::fail(name("security"), [])
                .inferential()
                .with_delay(Duration::from_millis(20))
                .with_log(&log)
                .into_dyn(),
            FailStrategy::Halt,
        ),
        hanging_judge(&log),
    ];
    gates.extend(later_judges(&log, 6));
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks"))
        .inferential_concurrency(2)
        .cancel_grace(Duration::from_millis(50))
        .build();
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    // `slow_judge` may or may not have started by the time `security`
    // fails; nothing after it starts.
    let started = log.started();
    assert!(started.iter().any(|g| g == "security"), "{started:?}");
    assert!(
        !started.iter().any(|g| g.as_str().starts_with("later")),
        "{started:?}"
    );
    let outcomes = outcomes(&phase.records);
    assert_eq!(outcomes[0], ("security".into(), "failed"));
    assert!(
        outcomes[1..].iter().all(|(_, o)| *o == "skipped"),
        "{outcomes:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_finished_alongside_a_halt_is_kept() -> Result {
    let (_dir, ctx) = context();
    let usage = ModelUsage::new(Some(Usd::new(0.5)?), Some(Tokens::new(100, 10)));
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::fail(name("security"), [])
                .inferential()
                .with_delay(Duration::from_millis(10))
                .into_dyn(),
            FailStrategy::Halt,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("judge"))
                .inferential()
                .with_delay(Duration::from_millis(40))
                .with_usage(usage)
                .into_dyn(),
            FailStrategy::Informational,
        ),
    ];
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks"))
        .inferential_concurrency(2)
        .build();
    let mut order = Vec::new();
    let phase = scheduler
        .run(&ctx, &gates, |r| {
            order.push(r.result.gate.to_string());
            if r.result.gate == "security" {
                // A slow write of the halting record: `judge` finishes
                // meanwhile, before anything is cancelled.
                std::thread::sleep(Duration::from_millis(150));
            }
            Ok(())
        })
        .await?;
    assert_eq!(order, ["security", "judge"]);
    assert_eq!(
        outcomes(&phase.records),
        [("security".into(), "failed"), ("judge".into(), "passed")]
    );
    assert_eq!(phase.cost.usd, Some(Usd::new(0.5)?));
    assert_eq!(phase.effect.as_str(), "halt");
    Ok(())
}

#[tokio::test]
async fn cancelling_the_run_mid_wave_starts_no_further_gate() -> Result {
    let (_dir, mut ctx) = context();
    let log = GateLog::new();
    let mut gates = vec![hanging_judge(&log)];
    gates.extend(later_judges(&log, 3));
    let run = Cancellation::new();
    ctx = ctx.with_cancel(run.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        run.cancel();
    });
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks"))
        .inferential_concurrency(1)
        .build();
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    canceller.await?;
    assert_eq!(log.started(), ["slow_judge"]);
    for record in &phase.records {
        assert_eq!(
            record.result.outcome,
            GateOutcome::Skipped {
                reason: "the run was cancelled".into()
            },
            "{}",
            record.result.gate
        );
    }
    assert_eq!(phase.records.len(), 4);
    Ok(())
}

#[tokio::test]
async fn a_halt_in_a_wave_cancels_the_rest_of_the_wave() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::fail(name("security"), [])
                .inferential()
                .with_log(&log)
                .into_dyn(),
            FailStrategy::Halt,
        ),
        ScheduledGate::new(
            ScriptedGate::hang(name("slow_judge"))
                .inferential()
                .with_log(&log)
                .into_dyn(),
            FailStrategy::Informational,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("tests")).with_log(&log).into_dyn(),
            FailStrategy::FeedIntoNext,
        ),
    ];
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks"))
        .cancel_grace(Duration::from_millis(50))
        .build();
    let mut order = Vec::new();
    let phase = scheduler
        .run(&ctx, &gates, |r| {
            order.push(r.result.gate.to_string());
            Ok(())
        })
        .await?;
    assert_eq!(order[0], "security", "the halting record comes first");
    assert_eq!(
        outcomes(&phase.records),
        [
            ("security".into(), "failed"),
            ("slow_judge".into(), "skipped"),
            ("tests".into(), "skipped")
        ]
    );
    assert!(!log.started().iter().any(|g| g == "tests"));
    Ok(())
}

#[tokio::test]
async fn phase_cost_sums_time_and_model_usage() -> Result {
    let (_dir, ctx) = context();
    let usage = |usd: f64, tokens: u64| {
        ModelUsage::new(Some(Usd::new(usd).unwrap()), Some(Tokens::new(tokens, 10)))
    };
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::pass(name("a"))
                .inferential()
                .with_usage(usage(0.25, 100))
                .into_dyn(),
            FailStrategy::Informational,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("b"))
                .inferential()
                .with_usage(usage(0.5, 200))
                .into_dyn(),
            FailStrategy::Informational,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("c"))
                .with_usage(usage(9.0, 9))
                .into_dyn(),
            FailStrategy::Informational,
        ),
    ];
    let phase = scheduler(&ctx).run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(
        phase.cost.usd,
        Some(Usd::new(0.75)?),
        "the computational gate's claimed usage is dropped"
    );
    assert_eq!(phase.cost.tokens, Some(Tokens::new(300, 20)));
    assert!(phase.records[2].result.model_usage().is_none());
    Ok(())
}

#[tokio::test]
async fn a_failing_record_callback_stops_the_schedule() -> Result {
    let (_dir, ctx) = context();
    let log = GateLog::new();
    let gates = vec![
        ScheduledGate::new(
            ScriptedGate::pass(name("a")).with_log(&log).into_dyn(),
            FailStrategy::Halt,
        ),
        ScheduledGate::new(
            ScriptedGate::pass(name("b")).with_log(&log).into_dyn(),
            FailStrategy::Halt,
        ),
    ];
    let err = scheduler(&ctx)
        .run(&ctx, &gates, |_| Err("disk full".into()))
        .await
        .unwrap_err();
    assert_eq!(
        orcho_core::error_chain(&err),
        "failed to record the result of gate `a`: caused by: disk full"
    );
    assert_eq!(log.started(), ["a"]);
    Ok(())
}
