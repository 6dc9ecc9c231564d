//! `HandoffStore::decide` beside the plain durable write of the same bytes,
//! measured in the same run on the same file system.
//!
//! `decide` validates the decision against the persisted handoff (a read),
//! digests the payload, and creates the decision record exclusively
//! (temporary file, `fsync`, no-clobber link, directory `fsync`). The
//! baseline writes the very bytes of a decision record to a new file with a
//! temporary file, `write`, `fsync`, `rename` and a directory `fsync`: what a
//! careful program does without Orcho.
//!
//! The bench first times `decide` and the baseline alternately, one call
//! each per round, and prints the p50 and p99 ratios (targets: p50 ≤ 1.2x,
//! p99 ≤ 1.5x); then criterion measures both (medians, ratio against the
//! same 1.2x target), each iteration doing the same work for both and
//! timing only its own part.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]

use std::{
    cell::Cell,
    fs::File,
    hint::black_box,
    io::Write,
    sync::Arc,
    time::{Duration, Instant},
};

use camino::{Utf8Path, Utf8PathBuf};
use criterion::Criterion;
use orcho::{
    core::{Finding, FixedClock, HandoffId, RunId, Severity, Verdict},
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        handoff::{HandoffChoice, HandoffSpec, HandoffStore},
    },
};
use orcho_benches::{Ratio, report_ratios};

struct Bench {
    _dir: tempfile::TempDir,
    store: HandoffStore,
    run: RunId,
    plain_dir: Utf8PathBuf,
    bytes: Vec<u8>,
    seq: Cell<u64>,
}

impl Bench {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
        let clock = Arc::new(FixedClock::new(
            "2026-11-21T12:00:00Z".parse().expect("time"),
        ));
        let store = HandoffStore::in_dir(root.join(".orcho"), clock);
        let run: RunId = "bench".parse().expect("run id");
        // The decisions directory and the baseline's directory sit side by
        // side under the same run directory.
        let plain_dir = root.join(".orcho/runs/bench/plain");
        std::fs::create_dir_all(&plain_dir).expect("plain dir");
        let mut bench = Self {
            _dir: dir,
            store,
            run,
            plain_dir,
            bytes: Vec::new(),
            seq: Cell::new(0),
        };
        // The baseline writes exactly the bytes of a decision record.
        let id = bench.open();
        let recorded = bench.decide(&id);
        bench.bytes = std::fs::read(recorded).expect("decision bytes");
        bench
    }

    fn open(&self) -> HandoffId {
        let spec = HandoffSpec::new(
            self.run.clone(),
            "implement".parse().expect("phase"),
            Verdict::Rejected,
        )
        .with_findings(vec![
            Finding::new("tests", Severity::High, "test `parse_empty` failed")
                .with_file("src/parse.rs"),
        ]);
        self.store.open(spec).expect("open").id().clone()
    }

    fn decide(&self, id: &HandoffId) -> Utf8PathBuf {
        let choice = HandoffChoice::retry("parse() must return an empty list for empty input")
            .expect("choice");
        let recorded = self
            .store
            .decide(
                &self.run,
                id,
                DecisionRequest::new(choice, DecidedBy::Operator),
            )
            .expect("decide");
        recorded.path().to_owned()
    }

    fn plain(&self) {
        self.seq.set(self.seq.get() + 1);
        plain_create(
            &self.plain_dir,
            &format!("{}.json", self.seq.get()),
            &self.bytes,
        );
    }
}

/// Temporary file, write, fsync, rename, directory fsync.
fn plain_create(dir: &Utf8Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(".plain-tmp");
    let mut f = File::create(&tmp).expect("create");
    f.write_all(bytes).expect("write");
    f.sync_all().expect("fsync");
    drop(f);
    std::fs::rename(&tmp, dir.join(name)).expect("rename");
    File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("dir fsync");
}

/// Both benchmarks do the same work per iteration — open a handoff, decide
/// one, write the baseline file — and each times only its own part, so that
/// both are measured under the same file-system activity whatever order
/// criterion runs them in.
fn bench_criterion(c: &mut Criterion, bench: &Bench) {
    let mut group = c.benchmark_group("decide");
    group.bench_function("orcho", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let id = bench.open();
                bench.plain();
                let start = Instant::now();
                black_box(bench.decide(&id));
                timed += start.elapsed();
            }
            timed
        })
    });
    group.bench_function("plain_write_fsync_rename_dirsync", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let id = bench.open();
                black_box(bench.decide(&id));
                let start = Instant::now();
                bench.plain();
                timed += start.elapsed();
            }
            timed
        })
    });
    group.finish();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Alternates one `decide` and one baseline write per round, so that both
/// see the same file-system weather, and prints percentile ratios.
fn bench_percentiles(bench: &Bench, rounds: usize) {
    let ids: Vec<HandoffId> = (0..rounds).map(|_| bench.open()).collect();
    let mut decide = Vec::with_capacity(rounds);
    let mut plain = Vec::with_capacity(rounds);
    for id in &ids {
        let start = Instant::now();
        black_box(bench.decide(id));
        decide.push(start.elapsed());
        let start = Instant::now();
        bench.plain();
        plain.push(start.elapsed());
    }
    decide.sort();
    plain.sort();
    println!("\ndecide vs plain write+fsync+rename+dirsync, {rounds} alternating rounds:");
    for (name, p, target) in [("p50", 0.50, 1.2), ("p99", 0.99, 1.5)] {
        let (d, b) = (percentile(&decide, p), percentile(&plain, p));
        let ratio = d.as_secs_f64() / b.as_secs_f64();
        let verdict = if ratio <= target { "ok" } else { "OVER TARGET" };
        println!(
            "  {name}: decide {:>9.1} µs, plain {:>9.1} µs, ratio {ratio:>5.2}x (target ≤ {target:.1}x) {verdict}",
            d.as_secs_f64() * 1e6,
            b.as_secs_f64() * 1e6,
        );
    }
}

fn main() {
    let test_mode = std::env::args().any(|a| a == "--test");
    let bench = Bench::new();
    // The alternating percentile pass runs first: it is the like-for-like
    // comparison, and it brings the file system to a steady state before
    // criterion measures the two one after the other (whichever criterion
    // measures first on a cold store is otherwise penalised).
    bench_percentiles(&bench, if test_mode { 20 } else { 1000 });
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
        .configure_from_args();
    bench_criterion(&mut c, &bench);
    c.final_summary();
    report_ratios(&[Ratio {
        group: "decide",
        subject: "orcho",
        baseline: "plain_write_fsync_rename_dirsync",
        target: 1.2,
    }]);
}
