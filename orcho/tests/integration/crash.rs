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
    handoff::{DecidedBy, DecisionRequest, HandoffChoice},
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
                engine.decide(
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
    Ok(engine.trace(run)?)
}

fn engine(store: &Utf8Path) -> Result<Engine> {
    Ok(Engine::builder(plan(), store).build()?)
}

#[tokio::test]
#[ignore = "child process of a_run_survives_200_kills"]
async fn child_drives_a_run() -> Result {
    let Some(arg) = std::env::var_os("ORCHO_TEST_CHILD") else {
        return Ok(());
    };
    let store = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let run: RunId = std::fs::read_to_string(store.join("run-id"))?
        .trim()
        .parse()?;
    drive(&engine(&store)?, &run).await?;
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
            let mut child = spawn(&store)?;
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

#[expect(
    clippy::disallowed_methods,
    reason = "the test spawns its own binary as the process to kill"
)]
fn spawn(store: &Utf8Path) -> std::io::Result<std::process::Child> {
    Command::new(std::env::current_exe()?)
        .args([
            "crash::child_drives_a_run",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .env("ORCHO_TEST_CHILD", store.as_str())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

#[tokio::test]
#[ignore = "child process of a_second_process_is_told_the_run_is_busy"]
async fn child_holds_a_run() -> Result {
    let Some(arg) = std::env::var_os("ORCHO_TEST_HOLD") else {
        return Ok(());
    };
    let store = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let run: RunId = std::fs::read_to_string(store.join("run-id"))?
        .trim()
        .parse()?;
    let _driver = engine(&store)?.open(&run)?;
    orcho::core::fs::write_atomic(&store.join("holding"), b"yes")?;
    sleep(Duration::from_secs(30));
    Ok(())
}

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test spawns its own binary as the second driver"
)]
async fn a_second_process_is_told_the_run_is_busy() -> Result {
    let dir = tempfile::tempdir()?;
    let store = Utf8PathBuf::try_from(dir.path().join("store"))?;
    let engine = engine(&store)?;
    let run = engine
        .start(&Utf8PathBuf::try_from(dir.path().to_owned())?)?
        .id()
        .clone();
    orcho::core::fs::write_atomic(&store.join("run-id"), run.as_str().as_bytes())?;
    let mut holder = Command::new(std::env::current_exe()?)
        .args([
            "crash::child_holds_a_run",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .env("ORCHO_TEST_HOLD", store.as_str())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
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
