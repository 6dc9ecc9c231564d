//! The built-in `tests` gate on real processes: its runs are receipts.

use std::{sync::Arc, time::Duration};

use camino::Utf8PathBuf;
use orcho_gates::{
    FailStrategy, GateOutcome, GateRegistry, GateSpec, PhaseEffect, ScheduledGate, Scheduler,
};
use orcho_receipts::{ReceiptStatus, ReceiptStore, VerificationContract, Verifier, exec::BaseEnv};

use crate::{Result, context, name};

fn contract() -> Result<VerificationContract> {
    Ok(serde_yaml::from_str(
        r#"
commands:
  - name: unit
    argv: [sh, -c, "echo all good"]
  - name: broken
    argv: [sh, -c, "echo 'test parse_empty ... FAILED' >&2; exit 3"]
  - name: slow
    argv: [sleep, "30"]
  - name: missing
    argv: [definitely-not-a-program-orcho]
  - name: caching
    argv: [sh, -c, "mkdir -p cache && date +%N > cache/run"]
required: [unit]
"#,
    )?)
}

fn setup() -> Result<(tempfile::TempDir, orcho_gates::GateContext, Arc<Verifier>)> {
    let (dir, ctx) = context();
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    orcho_core::fs::write_atomic(&root.join("lib.rs"), b"fn main() {}\n")?;
    let verifier = Arc::new(
        Verifier::new(contract()?, &root, ReceiptStore::new(root.join(".orcho")))?
            .with_base_env(BaseEnv::inherit()),
    );
    let ctx = ctx.with_verifier(Arc::clone(&verifier));
    Ok((dir, ctx, verifier))
}

fn gate(gate_name: &str, command: &str) -> Result<Arc<dyn orcho_gates::QualityGate>> {
    let spec = GateSpec::new(name(gate_name), name("tests"))
        .with_config(serde_json::json!({ "command": command }));
    Ok(GateRegistry::with_builtins().build(&spec)?)
}

#[tokio::test]
async fn a_passing_command_passes_and_leaves_a_present_receipt() -> Result {
    let (_dir, ctx, verifier) = setup()?;
    let result = gate("unit_tests", "unit")?.evaluate(&ctx).await?;
    assert_eq!(result.outcome, GateOutcome::Passed);
    assert!(result.output_tail.contains("all good"));
    let summary = verifier.readiness()?;
    assert_eq!(summary.required[0].status, ReceiptStatus::Present);
    Ok(())
}

#[tokio::test]
async fn a_failing_command_feeds_its_output_into_the_next_attempt() -> Result {
    let (_dir, ctx, verifier) = setup()?;
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks")).build();
    let phase = scheduler
        .run(
            &ctx,
            &[ScheduledGate::new(
                gate("tests", "broken")?,
                FailStrategy::FeedIntoNext,
            )],
            |_| Ok(()),
        )
        .await?;
    let PhaseEffect::FeedIntoNext { failures } = phase.effect else {
        panic!("feed_into_next expected")
    };
    let finding = &failures[0].findings[0];
    assert_eq!(finding.title, "`broken` failed: exited with code 3");
    assert!(
        finding.detail.contains("test parse_empty ... FAILED"),
        "{}",
        finding.detail
    );
    let classified = verifier.classify()?;
    let broken = classified
        .iter()
        .find(|c| c.command.as_str() == "broken")
        .ok_or("no receipt for `broken`")?;
    assert!(
        matches!(broken.status, ReceiptStatus::Failed { .. }),
        "{:?}",
        broken.status
    );
    Ok(())
}

#[tokio::test]
async fn a_hanging_command_is_killed_at_the_gate_timeout() -> Result {
    let (_dir, ctx, verifier) = setup()?;
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks")).build();
    let gates = [
        ScheduledGate::new(gate("slow", "slow")?, FailStrategy::FeedIntoNext)
            .with_timeout(Duration::from_millis(300)),
    ];
    let started = std::time::Instant::now();
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    assert_eq!(
        phase.records[0].result.outcome,
        GateOutcome::TimedOut { after_ms: 300 }
    );
    // The 30-second sleep did not hold the schedule.
    assert!(started.elapsed() < Duration::from_secs(25));
    // The command was killed, not abandoned: its supervisor returned and
    // recorded a cancelled run well before the sleep would have ended.
    let mut recorded = false;
    for _ in 0..100 {
        let classified = verifier.classify()?;
        if classified.iter().any(|c| {
            c.command.as_str() == "slow" && matches!(c.status, ReceiptStatus::Failed { .. })
        }) {
            recorded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recorded, "no receipt for the killed command");
    assert!(started.elapsed() < Duration::from_secs(25));
    Ok(())
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_error_not_a_failure() -> Result {
    let (_dir, ctx, _verifier) = setup()?;
    let err = gate("missing", "missing")?
        .evaluate(&ctx)
        .await
        .err()
        .ok_or("spawn failure accepted")?;
    assert!(
        err.to_string().starts_with("`missing` could not start `"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn without_a_verifier_the_gate_cannot_run() -> Result {
    let (_dir, ctx) = context();
    let err = gate("unit", "unit")?
        .evaluate(&ctx)
        .await
        .err()
        .ok_or("ran without a contract")?;
    insta::assert_snapshot!(err, @"gate `unit` needs the run's verification contract, and none was given to the gate context");
    Ok(())
}

#[test]
fn the_config_is_validated_at_load() -> Result {
    let registry = GateRegistry::with_builtins();
    let typo = GateSpec::new(name("unit"), name("tests"))
        .with_config(serde_json::json!({ "comand": "unit" }));
    let err = registry.build(&typo).err().ok_or("typo accepted")?;
    insta::assert_snapshot!(orcho_core::error_chain(&err), @"invalid configuration for gate `unit` (uses `tests`): caused by: unknown field `comand`, expected `command`");
    // Without `command`, the gate's name is the command.
    let default = registry.build(&GateSpec::new(name("unit"), name("tests")))?;
    assert_eq!(default.name(), "unit");
    Ok(())
}

#[tokio::test]
async fn a_command_that_changes_what_it_verifies_fails_with_a_hint() -> Result {
    let (_dir, ctx, _verifier) = setup()?;
    let result = gate("caching", "caching")?.evaluate(&ctx).await?;
    assert_eq!(result.outcome, GateOutcome::Failed);
    let finding = &result.findings[0];
    assert_eq!(
        finding.title,
        "`caching` failed: it changed the files it verifies, so its run proves nothing"
    );
    assert!(
        finding
            .detail
            .starts_with("hint: a command that writes files git does not ignore"),
        "{}",
        finding.detail
    );
    Ok(())
}
