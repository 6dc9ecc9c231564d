//! The engine's overhead per phase, beside the durable writes it cannot
//! avoid, measured in the same run on the same file system.
//!
//! - `engine/run of 10 phases`: a run of 10 phases with one trivial gate
//!   each, driven through the step API (start, then complete_phase × 10).
//! - `engine/durable writes alone`: what those transitions need on disk,
//!   and nothing else: the run directory, the journal, and for each of the
//!   31 transitions one journal append (fsync) plus one atomic snapshot write
//!   of a state document of the same size.
//!
//! Target: at most 1.5x.

use std::{hint::black_box, sync::Arc};

use camino::Utf8PathBuf;
use criterion::Criterion;
use orcho::{
    Engine, PhasePlan, PhaseReport, PhaseRole, RunPlan, Step,
    core::{
        GateName, SchemaVersion, Verdict,
        fs::{self, Journal},
    },
    gates::{
        FailStrategy, GateContext, GateError, GateOutcome, PhaseOutcome, QualityGate,
        QualityGateResult, ScheduledGate,
    },
};
use orcho_benches::{Ratio, report_ratios};
use serde::Serialize;

const PHASES: usize = 10;

#[derive(Debug)]
struct Trivial(GateName);

#[async_trait::async_trait]
impl QualityGate for Trivial {
    fn name(&self) -> &GateName {
        &self.0
    }

    async fn evaluate(&self, _ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        Ok(QualityGateResult::computational(
            self.0.clone(),
            GateOutcome::Passed,
        ))
    }
}

fn plan() -> RunPlan {
    let phases = (0..PHASES)
        .map(|i| {
            PhasePlan::new(
                format!("phase{i}").parse().expect("phase"),
                PhaseRole::Implement,
            )
            .with_gate(ScheduledGate::new(
                Arc::new(Trivial("tests".parse().expect("gate"))),
                FailStrategy::FeedIntoNext,
            ))
        })
        .collect();
    RunPlan::new("bench", phases)
}

#[derive(Serialize)]
struct Line<'a> {
    schema: SchemaVersion,
    seq: usize,
    at: &'a str,
    event: &'a str,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let engine = Engine::builder(plan(), root.join("store"))
        .build()
        .expect("engine");

    // A snapshot of a finished run, for the baseline's state writes.
    let probe = runtime.block_on(async {
        let mut run = engine.start(&root).expect("start");
        let mut step = run.next().await.expect("next");
        while let Step::RunPhase(_) = step {
            step = run
                .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Approved)))
                .await
                .expect("phase");
        }
        engine.store().journal_path(run.id())
    });
    let probe = probe.parent().expect("the run's directory").to_owned();
    let snapshot = std::fs::read(probe.join("run.json")).expect("snapshot");
    let event = "x".repeat(
        std::fs::read(probe.join("journal.jsonl"))
            .expect("journal")
            .len()
            / (1 + 3 * PHASES)
            - 60,
    );

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("engine");
    group.sample_size(20);
    group.bench_function("run of 10 phases", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut run = engine.start(&root).expect("start");
                let mut step = run.next().await.expect("next");
                while let Step::RunPhase(_) = step {
                    step = run
                        .complete_phase(black_box(PhaseReport::new(PhaseOutcome::new(
                            Verdict::Approved,
                        ))))
                        .await
                        .expect("phase");
                }
            });
        });
    });
    let mut n = 0u64;
    group.bench_function("durable writes alone", |b| {
        b.iter(|| {
            n += 1;
            let run_dir = root.join("baseline").join(n.to_string());
            fs::create_dir_all(&run_dir).expect("dir");
            let mut journal = Journal::open(&run_dir.join("journal.jsonl")).expect("journal");
            for seq in 0..=3 * PHASES {
                let line = Line {
                    schema: SchemaVersion::new(1),
                    seq,
                    at: "2026-11-21T12:00:00.000Z",
                    event: &event,
                };
                journal.append(&line).expect("append");
                fs::write_atomic(&run_dir.join("run.json"), black_box(&snapshot))
                    .expect("snapshot");
            }
        });
    });
    group.finish();
    c.final_summary();
    report_ratios(&[Ratio {
        group: "engine",
        subject: "run of 10 phases",
        baseline: "durable writes alone",
        target: 1.5,
    }]);
}
