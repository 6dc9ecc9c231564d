//! Final acceptance reads real receipts: stale receipts are re-run, unproven
//! required commands force a rejection, and only a waiver of exactly that
//! command lets acceptance pass without proof.

use std::sync::Arc;

use orcho::{
    PhaseRole, RunPlan,
    core::{RunStatus, Verdict},
    gates::{FailStrategy, GateRegistry, GateSpec, PhaseOutcome, ScheduledGate},
    handoff::handoff::HandoffChoice,
    receipts::VerificationContract,
    testing::Scenario,
};

use crate::{Result, phase};

fn contract() -> Result<VerificationContract> {
    Ok(serde_yaml::from_str(
        r#"
commands:
  - name: check
    argv: [grep, -q, ready, status.txt]
  - name: lint
    argv: [sh, -c, "echo 'lint: 3 problems' >&2; exit 1"]
required: [check]
"#,
    )?)
}

fn tests_gate(command: &str, on_fail: FailStrategy) -> Result<ScheduledGate> {
    let spec = GateSpec::new(command.parse()?, "tests".parse()?)
        .with_config(serde_json::json!({ "command": command }));
    Ok(ScheduledGate::new(
        GateRegistry::with_builtins().build(&spec)?,
        on_fail,
    ))
}

#[tokio::test]
async fn a_stale_receipt_rejects_acceptance_then_is_rerun_and_accepted() -> Result {
    let plan = RunPlan::new(
        "acceptance",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_gate(tests_gate("check", FailStrategy::FeedIntoNext)?)
                // Informational: reported in the trace, not as delivery-relevant.
                .with_gate(tests_gate("lint", FailStrategy::Informational)?),
            phase("final_acceptance", PhaseRole::FinalAcceptance).with_max_attempts(2),
        ],
    )
    .with_verification(contract()?);
    let run = Scenario::new(plan)
        .file("status.txt", "ready\n")
        // While the reviewer works, the checkout changes: the receipt no
        // longer proves anything about it.
        .before("final_acceptance", 1, |checkout| {
            orcho::core::fs::write_atomic(&checkout.join("status.txt"), b"ready, edited\n")
                .expect("edit");
        })
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let acceptance: Vec<_> = run
        .requests
        .iter()
        .filter(|r| r.phase == "final_acceptance")
        .collect();
    assert_eq!(acceptance.len(), 2);
    let readiness = acceptance[0]
        .input
        .readiness
        .as_deref()
        .ok_or("no readiness summary for the reviewer")?;
    assert!(readiness.contains("check"), "{readiness}");
    // The gates the delivery depends on, with how they last ended.
    assert!(
        readiness.contains(
            "Delivery-relevant gates (the last attempt of each phase):\n\
             - `check` after `implement`: passed (on failure: feed_into_next)\n\n"
        ),
        "{readiness}"
    );
    insta::assert_snapshot!(run.trace, @r"
    started plan `acceptance` with phases implement → final_acceptance
    phase `implement` attempt 1 (round 1) reported approved
      gate `check` passed [on_fail: feed_into_next]
      gate `lint` failed [on_fail: informational]
      settled (continue) → advance
    receipts checked: nothing to re-run
    phase `final_acceptance` attempt 1 (round 1) reported approved
    acceptance rejected (reviewer approved; unproven: receipt:check)
      settled (continue) → retry
    receipts re-run: check
    phase `final_acceptance` attempt 2 (round 1) reported approved
    acceptance approved (reviewer approved; every required receipt present)
      settled (continue) → advance
    ");
    Ok(())
}

#[tokio::test]
async fn a_reviewer_cannot_accept_an_unproven_required_command() -> Result {
    let plan = RunPlan::new(
        "no-proof",
        vec![phase("final_acceptance", PhaseRole::FinalAcceptance)],
    )
    .with_verification(serde_yaml::from_str(
        "commands:\n  - name: broken\n    argv: [\"false\"]\nrequired: [broken]\n",
    )?);
    let run = Scenario::new(plan)
        .report("final_acceptance", PhaseOutcome::new(Verdict::Approved))
        .run()
        .await?;
    assert_eq!(
        run.status,
        RunStatus::AwaitingPhaseHandoff,
        "the approval did not stand"
    );
    let handoff = &run.handoffs[0];
    assert_eq!(handoff.verdict(), Verdict::Rejected);
    assert_eq!(handoff.findings()[0].key.as_deref(), Some("receipt:broken"));
    assert!(
        handoff.findings()[0].detail.contains("next action: fix"),
        "{}",
        handoff.findings()[0].detail
    );
    Ok(())
}

#[tokio::test]
async fn a_waiver_covers_exactly_the_waived_command() -> Result {
    let mut contract = contract()?;
    contract = serde_yaml::from_str(
        &serde_yaml::to_string(&contract)?
            .replace("required:\n- check", "required:\n- check\n- lint"),
    )?;
    let plan = RunPlan::new(
        "waiver",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_gate(tests_gate("check", FailStrategy::FeedIntoNext)?)
                .with_gate(tests_gate("lint", FailStrategy::Informational)?),
            phase("final_acceptance", PhaseRole::FinalAcceptance),
            phase("second_look", PhaseRole::FinalAcceptance),
        ],
    )
    .with_verification(contract);
    let run = Scenario::new(plan)
        .file("status.txt", "ready\n")
        .decide(HandoffChoice::waive(
            "lint is known broken on main; tracked separately",
        )?)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    // The second acceptance still sees lint unproven, but the waiver of that
    // exact command lets it pass; `check` stays proven.
    let merged: Vec<&str> = run
        .trace
        .lines()
        .filter(|l| l.starts_with("acceptance"))
        .collect();
    assert_eq!(
        merged,
        [
            "acceptance rejected (reviewer approved; unproven: receipt:lint)",
            "acceptance approved (reviewer approved; every required receipt present)"
        ]
    );
    let _ = Arc::new(());
    Ok(())
}

/// `implement`, whose informational `check` gate leaves a failed receipt
/// while `status.txt` does not say ready, then final acceptance (two
/// attempts).
fn failing_then_accepting() -> Result<RunPlan> {
    Ok(RunPlan::new(
        "failed-then",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_gate(tests_gate("check", FailStrategy::Informational)?),
            phase("final_acceptance", PhaseRole::FinalAcceptance).with_max_attempts(2),
        ],
    )
    .with_verification(contract()?))
}

#[tokio::test]
async fn a_failed_receipt_is_rerun_before_acceptance_once_its_subject_changed() -> Result {
    let run = Scenario::new(failing_then_accepting()?)
        .file("status.txt", "not yet\n")
        // While the reviewer looks, the tree is fixed: from then on the
        // failed receipt no longer describes it.
        .before("final_acceptance", 1, |checkout| {
            orcho::core::fs::write_atomic(&checkout.join("status.txt"), b"ready\n").expect("fix");
        })
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let receipts: Vec<&str> = run
        .trace
        .lines()
        .filter(|l| l.starts_with("receipts") || l.starts_with("acceptance"))
        .collect();
    assert_eq!(
        receipts,
        [
            // The same subject it failed on: not re-run, and it blocks.
            "receipts checked: nothing to re-run",
            "acceptance rejected (reviewer approved; unproven: receipt:check)",
            // The subject changed: re-run, and proven.
            "receipts re-run: check",
            "acceptance approved (reviewer approved; every required receipt present)",
        ],
        "{}",
        run.trace
    );
    Ok(())
}
