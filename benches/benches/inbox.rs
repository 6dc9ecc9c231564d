//! `pending_decisions` over a store of 1,000 run directories, warm, beside
//! a plain walk that reads the same files without parsing them.
//!
//! Every run has a phase handoff (a third open, a third decided, a third
//! resumed, so the scan reads the journal, the handoff and the decision
//! record); one run in ten also has a delivery gate on a real git
//! checkout. Target: under 100 ms per scan.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]

use std::{hint::black_box, sync::Arc, time::Duration, time::Instant};

use camino::{Utf8Path, Utf8PathBuf};
use criterion::Criterion;
use orcho::{
    core::{FixedClock, RunId, Verdict},
    delivery::{DeliveryGates, DeliverySpec, pending_decisions},
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        delivery::DeliveryChoice,
        handoff::{HandoffChoice, HandoffSpec, HandoffStore},
    },
    receipts::ReadinessSummary,
};
use orcho_benches::{Ratio, median_ns, report_ratios};

const RUNS: usize = 1000;

#[expect(
    clippy::disallowed_methods,
    reason = "the bench sets up its git checkout directly"
)]
fn git(dir: &Utf8Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?}");
}

fn setup(root: &Utf8Path) -> Utf8PathBuf {
    let store_root = root.join("store");
    let checkout = root.join("checkout");
    std::fs::create_dir_all(&checkout).expect("checkout");
    git(&checkout, &["init", "--quiet"]);
    git(&checkout, &["config", "user.name", "bench"]);
    git(&checkout, &["config", "user.email", "bench@orcho.invalid"]);
    orcho::core::fs::write_atomic(&checkout.join("lib.rs"), b"fn a() {}\n").expect("write");
    git(&checkout, &["add", "--all"]);
    git(&checkout, &["commit", "--quiet", "-m", "initial"]);
    orcho::core::fs::write_atomic(&checkout.join("lib.rs"), b"fn a() { b() }\n").expect("write");

    let clock = Arc::new(FixedClock::new(
        "2026-11-21T12:00:00Z".parse().expect("time"),
    ));
    let store = HandoffStore::in_dir(store_root.clone(), clock.clone());
    let gates = DeliveryGates::in_dir(store_root.clone(), clock.clone());
    let readiness = ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0);
    for i in 0..RUNS {
        clock.advance(Duration::from_secs(1));
        let run: RunId = format!("run-{i:05}").parse().expect("run id");
        let spec = HandoffSpec::new(
            run.clone(),
            "implement".parse().expect("phase"),
            Verdict::Rejected,
        );
        let handoff = store.open(spec).expect("open");
        match i % 3 {
            0 => {}
            1 => {
                let choice = HandoffChoice::retry("cover empty input").expect("choice");
                store
                    .decide(
                        &run,
                        handoff.id(),
                        DecisionRequest::new(choice, DecidedBy::Operator),
                    )
                    .expect("decide");
            }
            _ => {
                let recorded = store
                    .decide(
                        &run,
                        handoff.id(),
                        DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator),
                    )
                    .expect("decide");
                store.resume(&recorded).expect("resume");
            }
        }
        if i % 10 == 0 {
            let spec = DeliverySpec::new(
                run.clone(),
                Verdict::Approved,
                checkout.clone(),
                "HEAD",
                checkout.clone(),
                &readiness,
            );
            gates.open(spec).expect("gate");
            if i % 20 == 0 {
                gates
                    .decide(
                        &run,
                        DecisionRequest::new(DeliveryChoice::skip(), DecidedBy::Operator),
                    )
                    .expect("decide gate");
            }
        }
    }
    store_root
}

/// Lists every run directory and reads every file of its `handoffs/`,
/// `decisions/` and `delivery/` directories, without parsing.
fn plain_walk(store: &Utf8Path) -> usize {
    let mut bytes = 0;
    for run in std::fs::read_dir(store.join("runs")).expect("runs") {
        let run = run.expect("entry").path();
        for sub in ["handoffs", "decisions", "delivery"] {
            let Ok(entries) = std::fs::read_dir(run.join(sub)) else {
                continue;
            };
            for entry in entries {
                let path = entry.expect("entry").path();
                if path
                    .extension()
                    .is_some_and(|e| e == "json" || e == "jsonl")
                {
                    bytes += std::fs::read(&path).map_or(0, |b| b.len());
                }
            }
        }
    }
    bytes
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let store = setup(&root);
    let storage: Arc<dyn orcho::core::storage::Storage> =
        Arc::new(orcho::core::storage::FsStorage::new(store.clone()));

    let inbox = pending_decisions(&storage).expect("scan");
    let pending = inbox.pending().count();
    assert_eq!(inbox.degraded().count(), 0);
    // Warm the page cache, then one timed scan for the record.
    black_box(plain_walk(&store));
    let start = Instant::now();
    black_box(pending_decisions(&storage).expect("scan"));
    println!(
        "\ninbox: {RUNS} run directories, {pending} pending decisions; one warm scan {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(20)
        .configure_from_args();
    let mut group = c.benchmark_group("inbox");
    group.bench_function("pending_decisions_1000_runs", |b| {
        b.iter(|| black_box(pending_decisions(&storage).expect("scan")));
    });
    group.bench_function("plain_walk_read_1000_runs", |b| {
        b.iter(|| black_box(plain_walk(&store)));
    });
    group.finish();
    c.final_summary();
    if let Some(ns) = median_ns("inbox", "pending_decisions_1000_runs") {
        let ms = ns / 1e6;
        let verdict = if ms < 100.0 { "ok" } else { "OVER TARGET" };
        println!(
            "\ninbox scan of {RUNS} runs, warm median: {ms:.1} ms (target < 100 ms) {verdict}"
        );
    }
    report_ratios(&[Ratio {
        group: "inbox",
        subject: "pending_decisions_1000_runs",
        baseline: "plain_walk_read_1000_runs",
        target: 3.0,
    }]);
}
