//! A process driving a run is killed with SIGKILL at random points, again
//! and again; every run reopens and finishes with the trace of an
//! uninterrupted run.

use std::{
    process::{Command, Stdio},
    thread::sleep,
    time::Duration,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhaseReport, PhaseRole, RunPlan, Step,
    core::{Finding, RunId, Severity, Verdict},
    gates::{FailStrategy, PhaseOutcome},
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        handoff::HandoffChoice,
    },
};

use crate::{Result, gate, phase};

fn plan() -> RunPlan {
    RunPlan::new(
        "crash",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_max_attempts(2)
                .with_gate(gate("tests", FailStrategy::FeedIntoNext, &[(1, 1)]))
                .with_gate(gate("lint", FailStrategy::Informational, &[(1, 1)])),
            phase("review", PhaseRole::Review),
            phase("ship", PhaseRole::Other("ship".into())).with_gate(gate(
                "smoke",
                FailStrategy::Halt,
                &[],
            )),
        ],
    )
}

fn report(phase: &str, attempt: u32) -> PhaseReport {
    if phase == "review" && attempt == 1 {
        PhaseReport::new(
            PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
                "reviewer",
                Severity::High,
                "no test for empty input",
            )]),
        )
    } else {
        PhaseReport::new(PhaseOutcome::new(Verdict::Approved))
    }
}

/// Drives `run` to its end, deciding every handoff the same way. Safe to
/// repeat after a crash: decisions replay, the journal says where to go on.
async fn drive(engine: &Engine, run: &RunId) -> Result<String> {
    let mut driver = engine.open(run)?;
    let mut step = driver.next().await?;
    loop {
        step = match step {
            Step::RunPhase(request) => {
                driver
                    .complete_phase(report(request.phase.as_str(), request.attempt))
                    .await?
            }
            Step::DecideHandoff(handoff) => {
                let choice = HandoffChoice::retry("add the test for empty input")?;
                engine.store().decide(
                    run,
                    handoff.id(),
                    DecisionRequest::new(choice, DecidedBy::Operator),
                )?;
                driver.resume().await?
            }
            Step::Finished { .. } => break,
            other => return Err(format!("unexpected step {other:?}").into()),
        };
    }
    drop(driver);
    Ok(engine.store().trace(run)?)
}

fn engine(store: &Utf8Path) -> Result<Engine> {
    Ok(Engine::builder(plan(), store).build()?)
}

/// In a child process: the store and run its parent handed over through
/// `var`; `None` when the test runs as itself, not as a child.
fn handed_over(var: &str) -> Result<Option<(Utf8PathBuf, RunId)>> {
    let Some(arg) = std::env::var_os(var) else {
        return Ok(None);
    };
    let store = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let run: RunId = std::fs::read_to_string(store.join("run-id"))?
        .trim()
        .parse()?;
    Ok(Some((store, run)))
}

/// Runs the ignored test `test` of this binary as a child process, handing
/// it `store` through `var`; its report goes to `stdout`.
#[expect(
    clippy::disallowed_methods,
    reason = "the test spawns its own binary as the process to kill or race"
)]
fn spawn_child(
    test: &str,
    var: &str,
    store: &Utf8Path,
    stdout: Stdio,
) -> std::io::Result<std::process::Child> {
    Command::new(std::env::current_exe()?)
        .args([test, "--exact", "--ignored", "--test-threads=1"])
        .env(var, store.as_str())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
}

#[tokio::test]
#[ignore = "child process of a_run_survives_200_kills"]
async fn child_drives_a_run() -> Result {
    if let Some((store, run)) = handed_over("ORCHO_TEST_CHILD")? {
        drive(&engine(&store)?, &run).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_run_survives_200_kills() -> Result {
    // The reference: the same run, never interrupted.
    let reference_dir = tempfile::tempdir()?;
    let reference_store = Utf8PathBuf::try_from(reference_dir.path().join("store"))?;
    let checkout = Utf8PathBuf::try_from(reference_dir.path().to_owned())?;
    let reference_engine = engine(&reference_store)?;
    let reference_run = reference_engine.start(&checkout)?.id().clone();
    let reference = drive(&reference_engine, &reference_run).await?;
    assert!(
        reference.contains("handoff `0001-review` resumed"),
        "{reference}"
    );

    let mut kills = 0;
    let mut runs = 0;
    let mut spawns = 0u64;
    while kills < 200 {
        let dir = tempfile::tempdir()?;
        let store = Utf8PathBuf::try_from(dir.path().join("store"))?;
        let engine = engine(&store)?;
        let run = engine.start(&checkout)?.id().clone();
        orcho::core::fs::write_atomic(&store.join("run-id"), run.as_str().as_bytes())?;
        loop {
            spawns += 1;
            let mut child = spawn_child(
                "crash::child_drives_a_run",
                "ORCHO_TEST_CHILD",
                &store,
                Stdio::null(),
            )?;
            // Spread the kills from "before the run is even opened" to "near
            // the end of the run".
            sleep(Duration::from_micros(spawns.wrapping_mul(7919) % 60_000));
            if child.try_wait()?.is_some() {
                let status = child.wait()?;
                assert!(status.success(), "the child failed on its own: {status}");
                break;
            }
            child.kill()?;
            child.wait()?;
            kills += 1;
        }
        runs += 1;
        // Reopening after the last kill finishes the run (the child may have
        // finished it already); either way the trace is the reference.
        let trace = drive(&engine, &run).await?;
        assert_eq!(trace, reference, "run {runs} after kills");
    }
    eprintln!(
        "{kills} kills over {runs} runs ({spawns} processes); every trace equals the uninterrupted one"
    );
    Ok(())
}

#[tokio::test]
#[ignore = "child process of a_second_process_is_told_the_run_is_busy"]
async fn child_holds_a_run() -> Result {
    if let Some((store, run)) = handed_over("ORCHO_TEST_HOLD")? {
        let _driver = engine(&store)?.open(&run)?;
        orcho::core::fs::write_atomic(&store.join("holding"), b"yes")?;
        sleep(Duration::from_secs(30));
    }
    Ok(())
}

#[tokio::test]
async fn a_second_process_is_told_the_run_is_busy() -> Result {
    let dir = tempfile::tempdir()?;
    let store = Utf8PathBuf::try_from(dir.path().join("store"))?;
    let engine = engine(&store)?;
    let run = engine
        .start(&Utf8PathBuf::try_from(dir.path().to_owned())?)?
        .id()
        .clone();
    orcho::core::fs::write_atomic(&store.join("run-id"), run.as_str().as_bytes())?;
    let mut holder = spawn_child(
        "crash::child_holds_a_run",
        "ORCHO_TEST_HOLD",
        &store,
        Stdio::null(),
    )?;
    for _ in 0..1000 {
        if store.join("holding").exists() {
            break;
        }
        sleep(Duration::from_millis(10));
    }
    let err = engine
        .open(&run)
        .err()
        .ok_or("a second process drove a held run")?;
    assert!(err.is_busy(), "{err}");
    holder.kill()?;
    holder.wait()?;
    // The dead holder's lock is gone with it.
    drive(&engine, &run).await?;
    Ok(())
}

/// The plan of a run in a worktree: a plan that waits for approval, an
/// implementation that writes a file, a review that rejects once, and the
/// delivery gate.
fn worktree_plan() -> RunPlan {
    RunPlan::new(
        "crash-worktree",
        vec![
            phase("plan", PhaseRole::Plan),
            phase("implement", PhaseRole::Implement),
            phase("review", PhaseRole::Review),
        ],
    )
    .with_plan_approval(true)
    .with_intake(Some(orcho::handoff::IntakeAction::Include))
}

/// Drives a worktree run to its end: every decision point decided the same
/// way, so a repeat after a crash replays.
async fn drive_worktree(engine: &Engine, run: &RunId) -> Result<String> {
    use orcho::handoff::{delivery::DeliveryChoice, supervision::Answer};
    let mut driver = engine.open(run)?;
    let mut step = driver.next().await?;
    loop {
        step = match step {
            Step::RunPhase(request) => {
                let mut report = report(request.phase.as_str(), request.attempt);
                if request.phase.as_str() == "plan" {
                    report = report.with_plan(
                        orcho::handoff::supervision::Plan::new("add a parser").with_step(
                            orcho::handoff::supervision::PlanStep::new("coder", "write parse()"),
                        ),
                    );
                }
                if request.phase.as_str() == "implement" {
                    let worktree = driver.state().checkout().to_owned();
                    orcho::core::fs::write_atomic(
                        &worktree.join("parse.rs"),
                        b"pub fn parse() {}\n",
                    )?;
                }
                driver.complete_phase(report).await?
            }
            Step::ApprovePlan(request) => {
                engine.store().answer(
                    run,
                    &request.id,
                    vec![Answer::select("Approve"), Answer::none()],
                    DecidedBy::Operator,
                )?;
                driver.resume().await?
            }
            Step::DecideHandoff(handoff) => {
                let choice = HandoffChoice::retry("add the test for empty input")?;
                engine.store().decide(
                    run,
                    handoff.id(),
                    DecisionRequest::new(choice, DecidedBy::Operator),
                )?;
                driver.resume().await?
            }
            Step::DecideDelivery(_) => {
                engine.store().decide_delivery(
                    run,
                    DecisionRequest::new(
                        DeliveryChoice::approve_with_message("add parse")?,
                        DecidedBy::Operator,
                    ),
                )?;
                driver.resume().await?
            }
            Step::Finished { .. } => break,
            other => return Err(format!("unexpected step {other:?}").into()),
        };
    }
    drop(driver);
    Ok(engine.store().trace(run)?)
}

/// A git repository with one commit and one uncommitted file (so intake
/// includes it).
fn target_repository(dir: &Utf8Path) -> Result {
    use orcho::receipts::exec::{self, BaseEnv, ExecRequest};
    let git = |args: &[&str]| -> Result {
        let out = exec::run(
            &ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
                .cwd(dir.to_owned())
                .envs(BaseEnv::inherit()),
        )?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("git {args:?}: {}", out.stderr.tail_lossy()).into())
        }
    };
    orcho::core::fs::create_dir_all(dir)?;
    git(&["init", "--quiet", "--initial-branch=main"])?;
    git(&["config", "user.name", "Orcho Test"])?;
    git(&["config", "user.email", "test@orcho.invalid"])?;
    git(&["config", "commit.gpgsign", "false"])?;
    orcho::core::fs::write_atomic(&dir.join("README.md"), b"target\n")?;
    git(&["add", "README.md"])?;
    git(&["commit", "--quiet", "-m", "initial"])?;
    orcho::core::fs::write_atomic(&dir.join("notes.txt"), b"work in progress\n")?;
    Ok(())
}

fn worktree_engine(store: &Utf8Path) -> Result<Engine> {
    Ok(Engine::builder(worktree_plan(), store).build()?)
}

#[tokio::test]
#[ignore = "child process of a_worktree_run_survives_kills_through_intake_plan_approval_and_delivery"]
async fn child_drives_a_worktree_run() -> Result {
    if let Some((store, run)) = handed_over("ORCHO_TEST_WORKTREE_CHILD")? {
        drive_worktree(&worktree_engine(&store)?, &run).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_worktree_run_survives_kills_through_intake_plan_approval_and_delivery() -> Result {
    let reference_dir = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(reference_dir.path().to_owned())?;
    target_repository(&root.join("target"))?;
    let reference_engine = worktree_engine(&root.join("store"))?;
    let reference_run = reference_engine
        .start_with(orcho::Start::in_worktree(root.join("target")))?
        .id()
        .clone();
    let reference = drive_worktree(&reference_engine, &reference_run).await?;
    assert!(reference.contains("delivered: approve"), "{reference}");

    let mut kills = 0;
    let mut runs = 0;
    let mut spawns = 0u64;
    while kills < 60 {
        let dir = tempfile::tempdir()?;
        let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
        let target = root.join("target");
        target_repository(&target)?;
        let store = root.join("store");
        let engine = worktree_engine(&store)?;
        let run = engine
            .start_with(orcho::Start::in_worktree(&target))?
            .id()
            .clone();
        orcho::core::fs::write_atomic(&store.join("run-id"), run.as_str().as_bytes())?;
        loop {
            spawns += 1;
            let mut child = spawn_child(
                "crash::child_drives_a_worktree_run",
                "ORCHO_TEST_WORKTREE_CHILD",
                &store,
                std::fs::File::create(store.join("child.out"))?.into(),
            )?;
            sleep(Duration::from_micros(spawns.wrapping_mul(7919) % 150_000));
            if child.try_wait()?.is_some() {
                let status = child.wait()?;
                let stderr = std::fs::read_to_string(store.join("child.out"))?;
                assert!(
                    status.success(),
                    "the child failed on its own: {status}\n{stderr}"
                );
                break;
            }
            child.kill()?;
            child.wait()?;
            kills += 1;
        }
        runs += 1;
        let trace = drive_worktree(&engine, &run).await?;
        assert_eq!(trace, reference, "run {runs} after kills");
        // Delivered exactly once: one commit on top of the initial one
        // with the run's own change; the included change stays the
        // target's own uncommitted work.
        let log = orcho::receipts::exec::run(
            &orcho::receipts::exec::ExecRequest::new(["git", "log", "--format=%s"])
                .cwd(target.clone())
                .envs(orcho::receipts::exec::BaseEnv::inherit())
                .keep_stdout(1 << 16),
        )?;
        let subjects = String::from_utf8_lossy(&log.stdout.kept.unwrap_or_default()).into_owned();
        assert_eq!(subjects.trim(), "add parse\ninitial", "run {runs}");
        assert_eq!(
            std::fs::read_to_string(target.join("notes.txt"))?,
            "work in progress\n",
            "run {runs}"
        );
        assert!(target.join("parse.rs").exists(), "run {runs}");
    }
    eprintln!(
        "{kills} kills over {runs} worktree runs ({spawns} processes); every trace equals the uninterrupted one"
    );
    Ok(())
}

#[test]
#[ignore = "child process of a_run_killed_while_it_is_created_is_whole_or_absent"]
fn child_creates_runs() -> Result {
    let Some(arg) = std::env::var_os("ORCHO_TEST_CREATE") else {
        return Ok(());
    };
    let store = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let engine = engine(&store)?;
    for n in 0u32.. {
        let start = orcho::Start::in_place(store.parent().unwrap_or(&store))
            .host_metadata(serde_json::json!({ "n": n, "phases": { "implement": ["true"] } }));
        drop(engine.start_with(start)?);
    }
    Ok(())
}

/// A host that is killed at any instant while it starts a run leaves either
/// no run or one that opens with everything the host gave it: the run's
/// directory appears whole.
#[test]
fn a_run_killed_while_it_is_created_is_whole_or_absent() -> Result {
    let dir = tempfile::tempdir()?;
    let store = Utf8PathBuf::try_from(dir.path().join("store"))?;
    for round in 0u64..20 {
        let mut child = spawn_child(
            "crash::child_creates_runs",
            "ORCHO_TEST_CREATE",
            &store,
            Stdio::null(),
        )?;
        sleep(Duration::from_micros(
            2_000 + round.wrapping_mul(7919) % 40_000,
        ));
        child.kill()?;
        child.wait()?;
    }
    let engine = engine(&store)?;
    let runs: Vec<_> = engine
        .store()
        .list()?
        .iter()
        .map(|l| l.run().clone())
        .collect();
    assert!(!runs.is_empty(), "the children created runs");
    for run in &runs {
        let metadata = engine
            .store()
            .host_metadata(run)?
            .ok_or_else(|| format!("run `{run}` lost its host metadata"))?;
        assert!(metadata["n"].is_u64(), "{metadata}");
        assert_eq!(
            engine.store().status(run)?.status,
            orcho::core::RunStatus::Running
        );
        drop(engine.open(run)?);
    }
    eprintln!("{} runs, each whole", runs.len());
    Ok(())
}
