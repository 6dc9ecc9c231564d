//! Two processes running gates of one lock group never overlap.

use std::{
    fs::OpenOptions,
    io::Write,
    process::{Command, Stdio},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use camino::Utf8PathBuf;
use orcho_core::GateName;
use orcho_gates::{
    FailStrategy, GateContext, GateError, GateOutcome, QualityGate, QualityGateExt,
    QualityGateResult, ScheduledGate, Scheduler,
};

use crate::Result;

const GATES_PER_CHILD: usize = 8;

/// Appends its start and end (nanoseconds since the epoch) to a shared file.
#[derive(Debug)]
struct Stamping {
    name: GateName,
    log: Utf8PathBuf,
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[orcho_gates::async_trait]
impl QualityGate for Stamping {
    fn name(&self) -> &GateName {
        &self.name
    }

    async fn evaluate(
        &self,
        _ctx: &GateContext,
    ) -> std::result::Result<QualityGateResult, GateError> {
        let start = now_ns();
        tokio::time::sleep(Duration::from_millis(15)).await;
        let end = now_ns();
        let mut log = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.log)
            .map_err(GateError::new)?;
        log.write_all(format!("{start} {end}\n").as_bytes())
            .map_err(GateError::new)?;
        Ok(QualityGateResult::computational(
            self.name.clone(),
            GateOutcome::Passed,
        ))
    }
}

#[tokio::test]
#[ignore = "child process of lock_groups_exclude_across_processes"]
async fn child_runs_locked_gates() -> Result {
    let Some(dir) = std::env::var_os("ORCHO_TEST_CHILD") else {
        return Ok(());
    };
    let dir = Utf8PathBuf::try_from(std::path::PathBuf::from(dir))?;
    let (_tmp, ctx) = crate::context();
    let gates: Vec<ScheduledGate> = (0..GATES_PER_CHILD)
        .map(|i| {
            let gate = Stamping {
                name: format!("g{i}").parse().expect("name"),
                log: dir.join("stamps"),
            };
            ScheduledGate::new(gate.into_dyn(), FailStrategy::FeedIntoNext).with_lock_group("cargo")
        })
        .collect();
    let scheduler = Scheduler::builder(dir.join("locks")).build();
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    assert!(
        phase
            .records
            .iter()
            .all(|r| r.result.outcome == GateOutcome::Passed)
    );
    Ok(())
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test spawns its own binary as the second process"
)]
fn lock_groups_exclude_across_processes() -> Result {
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let spawn = || {
        Command::new(std::env::current_exe()?)
            .args([
                "lock_group::child_runs_locked_gates",
                "--exact",
                "--ignored",
                "--test-threads=1",
            ])
            .env("ORCHO_TEST_CHILD", dir.as_str())
            .stdout(Stdio::null())
            .spawn()
    };
    let mut a = spawn()?;
    let mut b = spawn()?;
    assert!(a.wait()?.success());
    assert!(b.wait()?.success());

    let text = std::fs::read_to_string(dir.join("stamps"))?;
    let mut spans: Vec<(u128, u128)> = text
        .lines()
        .map(|l| {
            let (s, e) = l.split_once(' ').expect("two stamps");
            (s.parse().expect("start"), e.parse().expect("end"))
        })
        .collect();
    assert_eq!(
        spans.len(),
        2 * GATES_PER_CHILD,
        "both processes ran every gate"
    );
    spans.sort_unstable();
    for pair in spans.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "gates of one lock group overlapped: {pair:?}"
        );
    }
    Ok(())
}

/// A gate waiting for its lock group gives up when the run is cancelled,
/// without waiting for the lock.
#[tokio::test]
async fn waiting_for_a_lock_ends_with_the_run() -> Result {
    let (_dir, mut ctx) = crate::context();
    let locks = ctx.checkout().join(".orcho").join("locks");
    std::fs::create_dir_all(&locks)?;
    // Another holder keeps the group's lock for the whole test.
    let _held = orcho_core::fs::LockFile::new(locks.join("cargo.lock")).lock_exclusive()?;
    let log = orcho_gates::testing::GateLog::new();
    let gates = [ScheduledGate::new(
        orcho_gates::testing::ScriptedGate::pass(crate::name("build"))
            .with_log(&log)
            .into_dyn(),
        FailStrategy::FeedIntoNext,
    )
    .with_lock_group("cargo")];
    let run = orcho_gates::Cancellation::new();
    ctx = ctx.with_cancel(run.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        run.cancel();
    });
    let phase = tokio::time::timeout(
        Duration::from_secs(10),
        Scheduler::builder(locks)
            .build()
            .run(&ctx, &gates, |_| Ok(())),
    )
    .await
    .map_err(|_| "the schedule waited for the lock after the run was cancelled")??;
    canceller.await?;
    assert_eq!(
        phase.records[0].result.outcome,
        GateOutcome::Skipped {
            reason: "the run was cancelled".into()
        }
    );
    assert!(log.started().is_empty());
    Ok(())
}
