//! The shared store on a real PostgreSQL server the benchmark starts:
//!
//! - recording a decision (`Storage::create` of a decision slot) against
//!   a raw prepared `INSERT … ON CONFLICT DO NOTHING` round trip on a
//!   connection of the same server (target: 1.5x);
//! - the team inbox over 10,000 runs with 500 pending handoffs against one
//!   `SELECT` that returns the same question documents (targets: 50 ms, and
//!   2x the `SELECT`);
//! - waking a subscriber after a decision, write included (target: 100 ms).
//!
//! Without PostgreSQL here it says so and measures nothing.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]

use std::{
    hint::black_box,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use criterion::Criterion;
use orcho::{
    core::{
        FixedClock, RunId, Verdict,
        storage::{Item, Storage},
    },
    handoff::handoff::{HandoffSpec, HandoffStore},
};
use orcho_benches::{Ratio, median_ns, report_ratios};
use orcho_pg::{Origin, PgStorage, testing::Server};

const RUNS: usize = 10_000;
const PENDING_EVERY: usize = 20;

fn database_name(url: &str) -> &str {
    url.rsplit('/')
        .next()
        .and_then(|t| t.split('?').next())
        .expect("a database")
}

fn main() {
    let server = match Server::start() {
        Ok(server) => server,
        Err(reason) => {
            println!("pg: skipped, no PostgreSQL server could be started: {reason}");
            return;
        }
    };
    let url = server.new_database();
    let db = database_name(&url).to_owned();
    let storage = PgStorage::open(&url)
        .expect("a URL")
        .for_origin(Origin::new("bench", "/bench"));
    storage.migrate().expect("schema");
    let shared: Arc<dyn Storage> = Arc::new(storage.clone());

    // 10,000 runs, every twentieth paused at an open handoff.
    server.psql(
        &db,
        &format!(
            "INSERT INTO orcho_runs (run, machine, checkout) \
             SELECT 'run-' || lpad(g::text, 5, '0'), 'bench', '/bench' \
             FROM generate_series(0, {}) g",
            RUNS - 1
        ),
    );
    let clock = Arc::new(FixedClock::new(
        "2026-11-21T12:00:00Z".parse().expect("time"),
    ));
    let handoffs = HandoffStore::new(Arc::clone(&shared), clock.clone());
    for i in (0..RUNS).step_by(PENDING_EVERY) {
        clock.advance(Duration::from_secs(1));
        let run: RunId = format!("run-{i:05}").parse().expect("run id");
        let spec = HandoffSpec::new(run, "implement".parse().expect("phase"), Verdict::Rejected);
        handoffs.open(spec).expect("open");
    }
    let store = orcho::Store::new(Arc::new(storage.team()), "/nonexistent-local");
    let inbox = store.inbox().expect("inbox");
    let pending = inbox.pending().count();
    assert_eq!(pending, RUNS / PENDING_EVERY);

    // The raw client of the baselines, on a runtime of its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let raw = runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        client
            .batch_execute("CREATE TABLE bench_raw (k text PRIMARY KEY, v bytea NOT NULL)")
            .await
            .expect("table");
        client
    });
    let insert = runtime
        .block_on(
            raw.prepare("INSERT INTO bench_raw (k, v) VALUES ($1, $2) ON CONFLICT DO NOTHING"),
        )
        .expect("prepare");
    let select =
        runtime
            .block_on(raw.prepare(
                "SELECT run, name, body FROM orcho_documents WHERE kind = 'question/handoff'",
            ))
            .expect("prepare");

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(20)
        .configure_from_args();
    let body = br#"{"schema":1,"kind":"phase_handoff","payload":{"action":"halt"}}"#.to_vec();
    let n = AtomicU64::new(0);
    // A run without decision points, so that the thousands of decisions
    // recorded here stay out of the inbox's scan.
    let run: RunId = "run-00001".parse().expect("run id");
    let mut group = c.benchmark_group("pg_decision");
    group.bench_function("record_decision", |b| {
        b.iter(|| {
            let point = format!("p{}", n.fetch_add(1, Ordering::Relaxed))
                .parse()
                .expect("id");
            black_box(
                shared
                    .create(&run, Item::Decision(&point), &body)
                    .expect("create"),
            );
        });
    });
    group.bench_function("raw_insert_on_conflict", |b| {
        b.iter(|| {
            let key = format!("k{}", n.fetch_add(1, Ordering::Relaxed));
            black_box(
                runtime
                    .block_on(raw.execute(&insert, &[&key, &body]))
                    .expect("insert"),
            );
        });
    });
    group.finish();

    let start = Instant::now();
    let view = storage.team().points_view().expect("view").expect("a view");
    println!(
        "pg points view: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    black_box(orcho::delivery::pending_decisions(&view).expect("scan"));
    println!(
        "pg scan of the view: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    black_box(store.inbox().expect("inbox"));
    println!(
        "\npg inbox: {RUNS} runs, {pending} pending; one scan {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );

    let mut group = c.benchmark_group("pg_inbox");
    group.bench_function("team_inbox_10000_runs_500_pending", |b| {
        b.iter(|| black_box(store.inbox().expect("inbox")));
    });
    group.bench_function("one_select_of_the_questions", |b| {
        b.iter(|| black_box(runtime.block_on(raw.query(&select, &[])).expect("select")));
    });
    group.finish();

    let mut subscription = shared
        .subscribe()
        .expect("subscribe")
        .expect("a subscription");
    // The listener connects on first use: wait for it once.
    while subscription.wait(Duration::from_millis(200)) {}
    let mut group = c.benchmark_group("pg_wake");
    group.bench_function("decision_to_wake_up", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let point = format!("w{}", n.fetch_add(1, Ordering::Relaxed))
                    .parse()
                    .expect("id");
                let start = Instant::now();
                shared
                    .create(&run, Item::Decision(&point), &body)
                    .expect("create");
                assert!(subscription.wait(Duration::from_secs(5)), "woken");
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();
    c.final_summary();

    for (group, bench, target_ms) in [
        ("pg_inbox", "team_inbox_10000_runs_500_pending", 50.0),
        ("pg_wake", "decision_to_wake_up", 100.0),
    ] {
        if let Some(ns) = median_ns(group, bench) {
            let ms = ns / 1e6;
            let verdict = if ms <= target_ms { "ok" } else { "OVER TARGET" };
            println!("{group}/{bench}: median {ms:.2} ms (target {target_ms} ms) {verdict}");
        }
    }
    report_ratios(&[
        Ratio {
            group: "pg_decision",
            subject: "record_decision",
            baseline: "raw_insert_on_conflict",
            target: 1.5,
        },
        Ratio {
            group: "pg_inbox",
            subject: "team_inbox_10000_runs_500_pending",
            baseline: "one_select_of_the_questions",
            target: 2.0,
        },
    ]);
    drop(server);
}
