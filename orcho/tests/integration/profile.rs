//! A run of a profile written the way a team writes one: it extends the
//! built-in default and declares its own test command.

use orcho::{RunPlan, core::RunStatus, gates::GateRegistry, profile::Profile, testing::Scenario};

use crate::Result;

const PROFILE: &str = r#"
schema: 1
name: team
extends: builtin:default
verification:
  commands:
    - name: test
      argv: [grep, -q, "fn parse", src/lib.rs]
      timeout: 30s
  required: [test]
"#;

#[tokio::test]
async fn a_profile_extending_the_default_runs_end_to_end() -> Result {
    let profile = Profile::from_yaml_str(PROFILE)?.resolve(&GateRegistry::with_builtins())?;
    let plan = RunPlan::from_profile(&profile);
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["plan", "implement", "review", "final_acceptance"]);

    let run = Scenario::new(plan)
        // The first implement attempt has not written the parser yet: the
        // tests gate fails and feeds its output into attempt 2.
        .file("src/lib.rs", "// nothing yet\n")
        .before("implement", 2, |checkout| {
            orcho::core::fs::write_atomic(&checkout.join("src/lib.rs"), b"pub fn parse() {}\n")
                .expect("write");
        })
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    insta::assert_snapshot!(run.trace, @"
    started plan `team` with phases plan → implement → review → final_acceptance
    phase `plan` attempt 1 (round 1) reported approved
      settled (continue) → advance
    phase `implement` attempt 1 (round 1) reported approved
      gate `tests` failed [on_fail: feed_into_next]
      settled (feed_into_next) → retry, feeding tests
    phase `implement` attempt 2 (round 1) reported approved
      gate `tests` passed [on_fail: feed_into_next]
      settled (continue) → advance
    phase `review` attempt 1 (round 1) reported approved
      settled (continue) → advance
    receipts checked: nothing to re-run
    phase `final_acceptance` attempt 1 (round 1) reported approved
    acceptance approved (reviewer approved; every required receipt present)
      settled (continue) → advance
    ");
    Ok(())
}

#[tokio::test]
async fn a_profile_restricting_the_menu_is_enforced_at_the_handoff() -> Result {
    // The built-in default offers no bare `continue` at final acceptance: an
    // operator cannot wave missing proof through without a written waiver.
    let profile = Profile::from_yaml_str(
        r#"
schema: 1
name: strict
extends: builtin:default
verification:
  commands:
    - { name: test, argv: ["false"] }
  required: [test]
"#,
    )?
    .resolve(&GateRegistry::with_builtins())?;
    let mut plan = RunPlan::from_profile(&profile);
    // Keep only final acceptance: the point is its handoff menu.
    plan.phases
        .retain(|p| p.role == orcho::PhaseRole::FinalAcceptance);
    let run = Scenario::new(plan).run().await?;
    let handoff = run
        .handoffs
        .first()
        .ok_or("final acceptance did not pause")?;
    let menu: Vec<_> = handoff.available_actions().iter().collect();
    use orcho::handoff::HandoffAction;
    assert_eq!(
        menu,
        [
            HandoffAction::RetryFeedback,
            HandoffAction::ContinueWithWaiver,
            HandoffAction::Halt
        ]
    );
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff);
    let err = run
        .engine
        .store()
        .decide(
            &run.run,
            handoff.id(),
            orcho::handoff::decision::DecisionRequest::new(
                orcho::handoff::handoff::HandoffChoice::Continue,
                orcho::handoff::decision::DecidedBy::Operator,
            ),
        )
        .err()
        .ok_or("`continue` was accepted")?;
    assert!(orcho::core::error_chain(&err).contains("continue"), "{err}");
    Ok(())
}
