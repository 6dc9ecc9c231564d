//! `orcho serve` as a whole process on 127.0.0.1, asked over keep-alive
//! HTTP, and `orcho inbox` as a whole process, over 1,000 runs paused at a
//! handoff: on the directory store, and on a PostgreSQL server the
//! benchmark starts (skipped, and said, when none can be started). Beside
//! them, the library's team inbox over the same store, and a handoff
//! decision through the API beside the same decision through the library
//! (`Store::decide`), measured in the same run on runs paused alike.
//!
//! Targets: the inbox page (its first page, the answer's whole time,
//! loopback included) in at most 100 ms on the directory store and 150 ms
//! on PostgreSQL; `orcho inbox` in at most 300 ms on PostgreSQL; a decision
//! through the API within 1.5x of the library's.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
#![expect(
    clippy::disallowed_methods,
    reason = "the bench starts the server and git itself, and must hold the child to stop it"
)]

use std::{
    hint::black_box,
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use camino::{Utf8Path, Utf8PathBuf};
use criterion::Criterion;
use orcho::{
    Engine, PausePolicy, PhasePlan, PhaseReport, PhaseRole, RunPlan, Step, Store,
    core::{RunId, Verdict},
    gates::PhaseOutcome,
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        handoff::HandoffChoice,
    },
};
use orcho_benches::{Ratio, median_ns, report_ratios};

const POINTS: usize = 1000;
const ORCHO: &str = env!("CARGO_BIN_EXE_orcho-for-benches");

const PROFILE: &str = "\
schema: 1
name: bench-web
phases:
  - name: review
    role: review
    handoff: { pause: always }
";

fn plan() -> RunPlan {
    RunPlan::new(
        "bench-web",
        vec![
            PhasePlan::new("review".parse().expect("phase"), PhaseRole::Review)
                .with_pause(PausePolicy::Always),
        ],
    )
}

fn git(dir: &Utf8Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?}");
}

/// `n` runs paused at their review's handoff, with its id.
fn paused(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    checkout: &Utf8Path,
    n: u64,
) -> Vec<(RunId, orcho::core::HandoffId)> {
    (0..n)
        .map(|_| {
            runtime.block_on(async {
                let mut run = engine.start(checkout).expect("start");
                let Step::RunPhase(_) = run.next().await.expect("next") else {
                    panic!("the review runs first");
                };
                let step = run
                    .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Rejected)))
                    .await
                    .expect("phase");
                let Step::DecideHandoff(handoff) = step else {
                    panic!("the review pauses");
                };
                (run.id().clone(), handoff.id().clone())
            })
        })
        .collect()
}

/// The server, stopped when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the runs are kept, and how a process of `orcho` is told.
struct Bed {
    checkout: Utf8PathBuf,
    data: Utf8PathBuf,
    /// `ORCHO_STORE`, for a store other than the checkout's own.
    store_url: Option<String>,
    engine: Engine,
    store: Store,
}

impl Bed {
    fn orcho(&self) -> Command {
        let mut command = Command::new(ORCHO);
        command
            .current_dir(&self.checkout)
            .env("XDG_DATA_HOME", &self.data);
        if let Some(url) = &self.store_url {
            command.env("ORCHO_STORE", url);
        }
        command
    }
}

/// A checkout with its profile, committed, under `root`.
fn new_checkout(root: &Utf8Path) -> (Utf8PathBuf, Utf8PathBuf) {
    let checkout = root.join("checkout");
    let data = root.join("data");
    std::fs::create_dir_all(&checkout).expect("checkout");
    std::fs::create_dir_all(&data).expect("data");
    git(&checkout, &["init", "--quiet"]);
    git(&checkout, &["config", "user.name", "bench"]);
    git(&checkout, &["config", "user.email", "bench@orcho.invalid"]);
    std::fs::write(checkout.join("orcho.yaml"), PROFILE).expect("profile");
    std::fs::write(checkout.join(".gitignore"), ".orcho/\n").expect("ignore");
    git(&checkout, &["add", "--all"]);
    git(&checkout, &["commit", "--quiet", "-m", "initial"]);
    (checkout, data)
}

fn serve(bed: &Bed) -> (Server, String) {
    let out = bed
        .orcho()
        .args(["serve", "token", "add", "bench", "--json"])
        .output()
        .expect("token add");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("token document");
    let token = doc["token"].as_str().expect("token").to_owned();
    let mut child = bed
        .orcho()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve");
    let stderr = child.stderr.take().expect("stderr");
    let line = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("serving the inbox at "))
        .expect("the address");
    let base = line
        .split("serving the inbox at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("address")
        .trim_end_matches('/')
        .to_owned();
    (Server { child, base }, token)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .configure_from_args();

    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let (checkout, data) = new_checkout(&root.join("fs"));
    let engine = Engine::builder(plan(), checkout.join(".orcho"))
        .build()
        .expect("engine");
    let store = Store::open(checkout.join(".orcho"));
    let fs = Bed {
        checkout,
        data,
        store_url: None,
        engine,
        store,
    };
    measure(&mut c, &runtime, &fs, "web", true);

    // The same on a PostgreSQL server, when one can be started here.
    let pg = match orcho_pg::testing::Server::start() {
        Ok(server) => Some(server),
        Err(reason) => {
            println!("web_pg: skipped, no PostgreSQL server could be started: {reason}");
            None
        }
    };
    if let Some(server) = &pg {
        let url = server.new_database();
        let (checkout, data) = new_checkout(&root.join("pg"));
        let storage = orcho_pg::PgStorage::open(&url)
            .expect("a URL")
            .for_origin(orcho_pg::Origin::new("bench-machine", checkout.as_str()));
        storage.migrate().expect("schema");
        let shared: std::sync::Arc<dyn orcho::core::storage::Storage> =
            std::sync::Arc::new(storage.clone());
        let engine = Engine::builder(plan(), Store::new(shared, checkout.join(".orcho")))
            .build()
            .expect("engine");
        let store = Store::new(std::sync::Arc::new(storage.team()), checkout.join(".orcho"));
        let bed = Bed {
            checkout,
            data,
            store_url: Some(url),
            engine,
            store,
        };
        measure(&mut c, &runtime, &bed, "web_pg", false);
    }
    c.final_summary();

    for (group, bench, target_ms) in [
        ("web", "inbox_page_1000_points", 100.0),
        ("web_pg", "inbox_page_1000_points", 150.0),
        ("web_pg", "orcho_inbox_1000_points", 300.0),
    ] {
        if let Some(ns) = median_ns(group, bench) {
            let ms = ns / 1e6;
            let verdict = if ms <= target_ms { "ok" } else { "OVER TARGET" };
            println!("\n{group}/{bench}: {ms:.1} ms (target <= {target_ms} ms) {verdict}");
        }
    }
    report_ratios(&[
        Ratio {
            group: "web",
            subject: "decision_api",
            baseline: "decision_library",
            target: 1.5,
        },
        Ratio {
            group: "web",
            subject: "inbox_page_1000_points",
            baseline: "inbox_library_1000_points",
            target: 3.0,
        },
        Ratio {
            group: "web_pg",
            subject: "inbox_page_1000_points",
            baseline: "inbox_library_1000_points",
            target: 3.0,
        },
    ]);
}

/// The inbox over 1,000 paused runs of `bed`'s store: its page, `orcho
/// inbox`, the library's; with `decisions`, a decision through the API
/// beside the library's.
fn measure(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    bed: &Bed,
    group: &str,
    decisions: bool,
) {
    let started = Instant::now();
    let first = paused(runtime, &bed.engine, &bed.checkout, POINTS as u64);
    println!(
        "\n{group}: {POINTS} runs paused at a handoff in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (server, token) = serve(bed);
    let http: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let bearer = format!("Bearer {token}");
    let page = || {
        let mut answer = http
            .get(format!("{}/", server.base))
            .header("Authorization", &bearer)
            .call()
            .expect("inbox page");
        assert_eq!(answer.status().as_u16(), 200);
        answer.body_mut().read_to_string().expect("page")
    };
    // Right before it is timed: the newest point is on the first page, and
    // the page counts them all.
    let shown = page();
    assert!(shown.contains(first[POINTS - 1].0.as_str()), "{shown}");
    let inbox_cli = || {
        let out = bed
            .orcho()
            .args(["inbox", "--json"])
            .output()
            .expect("orcho inbox");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let listed: serde_json::Value = serde_json::from_slice(&inbox_cli()).expect("inbox document");
    assert!(listed.to_string().contains(first[0].0.as_str()));

    let decide_api = |run: &RunId| {
        let answer = http
            .post(format!("{}/api/runs/{run}/decisions/handoff", server.base))
            .header("Authorization", &bearer)
            .header("Content-Type", "application/json")
            .send("{\"action\": \"continue\"}")
            .expect("decision");
        assert_eq!(answer.status().as_u16(), 200);
    };
    let decide_library = |run: &RunId, handoff: &orcho::core::HandoffId| {
        bed.store
            .decide(
                run,
                handoff,
                DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator),
            )
            .expect("decision");
    };

    let mut group = c.benchmark_group(group);
    group.bench_function("inbox_page_1000_points", |b| {
        b.iter(|| black_box(page()));
    });
    group.bench_function("orcho_inbox_1000_points", |b| {
        b.iter(|| black_box(inbox_cli()));
    });
    group.bench_function("inbox_library_1000_points", |b| {
        b.iter(|| {
            black_box(
                bed.store
                    .team_inbox(&orcho::InboxFilter::all())
                    .expect("inbox"),
            )
        });
    });
    if decisions {
        // Each decision is taken on a run paused for it (paused untimed).
        group.bench_function("decision_api", |b| {
            b.iter_custom(|iters| {
                let runs = paused(runtime, &bed.engine, &bed.checkout, iters);
                let start = Instant::now();
                for (run, _) in &runs {
                    decide_api(run);
                }
                start.elapsed()
            });
        });
        group.bench_function("decision_library", |b| {
            b.iter_custom(|iters| {
                let runs = paused(runtime, &bed.engine, &bed.checkout, iters);
                let start = Instant::now();
                for (run, handoff) in &runs {
                    decide_library(run, handoff);
                }
                start.elapsed()
            });
        });
    }
    group.finish();
    drop(server);
}
