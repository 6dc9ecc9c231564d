//! Runs in a retained worktree: pre-run intake, the delivery gate, and a
//! `fix` that starts a correction follow-up linked to its parent. Real git
//! repositories, created by the tests.

use camino::Utf8Path;
use orcho::{
    PhaseReport, PhaseRole, RunPlan, Start, Step,
    core::{Finding, RunStatus, Severity, Verdict},
    gates::PhaseOutcome,
    handoff::{
        DeliveryAction, IntakeAction,
        decision::{DecidedBy, DecisionRequest},
        delivery::DeliveryChoice,
        handoff::HandoffChoice,
        inbox::SuggestedStep,
        intake::IntakeChoice,
    },
    testing::Scenario,
};

use super::{Result, phase};

fn git(dir: &Utf8Path, args: &[&str]) -> String {
    use orcho::receipts::exec::{self, BaseEnv, ExecRequest};
    let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
        .cwd(dir.to_owned())
        .envs(BaseEnv::inherit())
        .keep_stdout(1 << 20);
    let out = exec::run(&request).expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        out.stderr.tail_lossy()
    );
    String::from_utf8_lossy(&out.stdout.kept.unwrap_or_default())
        .trim()
        .to_owned()
}

fn plan() -> RunPlan {
    RunPlan::new(
        "deliver",
        vec![
            phase("implement", PhaseRole::Implement),
            phase("final_acceptance", PhaseRole::FinalAcceptance).with_max_attempts(1),
        ],
    )
}

/// The implement phase writes `src/parse.rs` in the run's worktree.
fn implementing(scenario: Scenario) -> Scenario {
    scenario.before("implement", 1, |worktree| {
        orcho::core::fs::create_dir_all(&worktree.join("src")).expect("mkdir");
        orcho::core::fs::write_atomic(&worktree.join("src/parse.rs"), b"pub fn parse() {}\n")
            .expect("write");
    })
}

#[tokio::test]
async fn delivery_approve_commits_exactly_the_runs_diff_into_the_target() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .deliver(DeliveryChoice::approve())
        .run()
        .await?;
    let target = run.target.clone().expect("a target");
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    assert!(run.reason.starts_with("committed "), "{}", run.reason);
    assert_ne!(run.checkout, target, "phases ran in the worktree");
    assert_eq!(
        std::fs::read_to_string(target.join("src/parse.rs"))?,
        "pub fn parse() {}\n"
    );
    assert_eq!(
        git(&target, &["status", "--porcelain"]),
        "",
        "nothing left over"
    );
    assert_eq!(
        git(&target, &["show", "--name-only", "--format=", "HEAD"]),
        "src/parse.rs",
        "the commit holds exactly the run's diff"
    );
    let gate = run.delivery.clone().expect("the gate");
    assert_eq!(gate.verdict(), Verdict::Approved);
    assert!(!gate.available_actions().contains(DeliveryAction::Fix));
    insta::assert_snapshot!(run.trace, @r"
    started plan `deliver` with phases implement → final_acceptance
    worktree ready
    phase `implement` attempt 1 (round 1) reported approved
      settled (continue) → advance
    phase `final_acceptance` attempt 1 (round 1) reported approved
    acceptance approved (reviewer approved; every required receipt present)
      settled (continue) → advance
    delivery gate opened (release approved)
    delivered: approve
    ");
    let evidence = run.engine.evidence(&run.run)?;
    let delivery = evidence.delivery.expect("delivery evidence");
    assert_eq!(delivery.action, Some(DeliveryAction::Approve));
    Ok(())
}

#[tokio::test]
async fn a_fix_on_a_rejected_release_starts_a_follow_up_linked_to_its_parent() -> Result {
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::High,
        "parse() ignores empty input",
    )]);
    let run = implementing(Scenario::new(plan()).in_worktree())
        .task("Parse the config files")
        .report("final_acceptance", rejected)
        .decide(HandoffChoice::Continue)
        .deliver(DeliveryChoice::fix().with_note("handle the empty input"))
        .run()
        .await?;
    let gate = run.delivery.clone().expect("the gate");
    assert_eq!(gate.verdict(), Verdict::Rejected);
    assert!(
        !gate.available_actions().contains(DeliveryAction::Approve),
        "a rejected release cannot be approved"
    );
    assert!(gate.available_actions().contains(DeliveryAction::Fix));
    assert_eq!(run.status, RunStatus::Completed);
    assert!(run.reason.starts_with("correction-ready"), "{}", run.reason);
    let target = run.target.clone().expect("a target");
    assert!(
        !target.join("src/parse.rs").exists(),
        "fix leaves the target untouched"
    );

    // The follow-up: a child run in the same target, starting from the
    // parent's diff, told what the parent was rejected for.
    let engine = &run.engine;
    let spec = engine.store().follow_up(&run.run)?;
    assert_eq!(spec.parent(), &run.run);
    assert_eq!(spec.generation(), 1);
    let mut child = engine.start_with(Start::follow_up(spec))?;
    let Step::RunPhase(request) = child.next().await? else {
        panic!("the follow-up runs its first phase");
    };
    let brief = request.input.follow_up.clone().expect("the parent's brief");
    assert!(brief.contains("parse() ignores empty input"), "{brief}");
    assert_eq!(
        request.input.task.as_deref(),
        Some("Parse the config files"),
        "a follow-up carries its parent's task"
    );
    assert_eq!(child.state().task(), Some("Parse the config files"));
    assert!(brief.contains("handle the empty input"), "{brief}");
    assert!(
        child.state().checkout().join("src/parse.rs").exists(),
        "the follow-up's worktree starts with the parent's diff"
    );
    orcho::core::fs::write_atomic(
        &child.state().checkout().join("src/parse.rs"),
        b"pub fn parse() { /* empty input handled */ }\n",
    )?;
    let mut step = child
        .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Approved)))
        .await?;
    while let Step::RunPhase(_) = step {
        step = child
            .complete_phase(PhaseReport::new(PhaseOutcome::new(Verdict::Approved)))
            .await?;
    }
    let Step::DecideDelivery(child_gate) = step else {
        panic!("the follow-up reaches its delivery gate: {step:?}");
    };
    assert_eq!(
        child_gate.follow_up_of().map(|l| l.parent().clone()),
        Some(run.run.clone())
    );
    engine.store().decide_delivery(
        child.id(),
        DecisionRequest::new(DeliveryChoice::approve(), DecidedBy::Operator),
    )?;
    let finished = child.resume().await?;
    assert!(
        matches!(
            finished,
            Step::Finished {
                status: RunStatus::Completed,
                ..
            }
        ),
        "{finished:?}"
    );
    assert_eq!(
        std::fs::read_to_string(target.join("src/parse.rs"))?,
        "pub fn parse() { /* empty input handled */ }\n",
        "approve delivers the parent's work with the correction"
    );
    let child_id = child.id().clone();
    drop(child);
    let evidence = engine.evidence(&child_id)?;
    assert_eq!(
        evidence.follow_up_of.map(|f| f.parent),
        Some(run.run.clone())
    );
    Ok(())
}

#[tokio::test]
async fn a_dirty_target_asks_at_intake_and_include_seeds_the_worktree() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .dirty("notes.txt", "work in progress\n")
        .intake(IntakeChoice::new(IntakeAction::Include))
        .run()
        .await?;
    let report = run.intake.clone().expect("intake asked");
    assert_eq!(report.count(), 1);
    assert_eq!(
        std::fs::read_to_string(run.checkout.join("notes.txt"))?,
        "work in progress\n",
        "the included change is in the worktree"
    );
    assert!(
        run.trace.contains("worktree ready (intake: include)"),
        "{}",
        run.trace
    );
    assert_eq!(
        run.status,
        RunStatus::AwaitingDelivery,
        "no delivery scripted"
    );
    // A run parked at its gate is in the inbox, with the step to take.
    let inbox = run.engine.store().inbox()?;
    let pending: Vec<_> = inbox.pending().collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].run(), &run.run);
    assert_eq!(pending[0].next_step(), SuggestedStep::Decide);
    Ok(())
}

#[tokio::test]
async fn intake_halt_never_starts_the_run() -> Result {
    let run = Scenario::new(plan())
        .in_worktree()
        .dirty("notes.txt", "work in progress\n")
        .intake(IntakeChoice::new(IntakeAction::Halt))
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Halted);
    assert!(run.requests.is_empty(), "no phase ran");
    assert!(!run.checkout.exists(), "no worktree was created");
    Ok(())
}

#[tokio::test]
async fn the_profiles_delivery_default_delivers_without_asking() -> Result {
    let run = implementing(
        Scenario::new(plan().with_delivery(Some(DeliveryAction::Apply))).in_worktree(),
    )
    .run()
    .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let target = run.target.expect("target");
    assert!(target.join("src/parse.rs").exists());
    assert!(
        git(&target, &["status", "--porcelain"]).contains("src/"),
        "apply leaves the change uncommitted"
    );
    Ok(())
}

#[tokio::test]
async fn resuming_an_undecided_delivery_stays_at_the_gate_with_its_actions() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingDelivery);
    // Nothing decided: the run is where it was, at its gate.
    let step = run.resume().await?;
    let Step::DecideDelivery(gate) = &step else {
        return Err(format!("expected the delivery gate, got {step:?}").into());
    };
    assert!(gate.available_actions().contains(DeliveryAction::Approve));
    assert_eq!(step.waiting(), Some(orcho::Waiting::Delivery));
    // Deciding twice with a different payload is a conflict.
    run.engine.store().decide_delivery(
        &run.run,
        DecisionRequest::new(DeliveryChoice::skip(), DecidedBy::Operator),
    )?;
    let conflict = run
        .engine
        .store()
        .decide_delivery(
            &run.run,
            DecisionRequest::new(DeliveryChoice::halt(), DecidedBy::Operator),
        )
        .expect_err("a different decision");
    assert!(conflict.is_conflict(), "{conflict}");
    let Step::Finished { status, reason } = run.resume().await? else {
        panic!("skip ends the run");
    };
    assert_eq!(status, RunStatus::Completed);
    assert!(reason.contains("skipped"), "{reason}");
    Ok(())
}

#[tokio::test]
async fn approving_a_run_that_included_uncommitted_changes_delivers_only_the_runs_work() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .dirty("notes.txt", "work in progress\n")
        .intake(IntakeChoice::new(IntakeAction::Include))
        .deliver(DeliveryChoice::approve())
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    let target = run.target.clone().expect("a target");
    assert_eq!(
        git(&target, &["show", "--name-only", "--format=", "HEAD"]),
        "src/parse.rs",
        "the commit holds the run's own change"
    );
    assert_eq!(
        git(&target, &["status", "--porcelain"]),
        "?? notes.txt",
        "the included change is still the target's own uncommitted work"
    );
    let gate = run.delivery.expect("the gate");
    assert_eq!(gate.diff().files_changed(), 1, "{}", gate.diff());
    Ok(())
}

/// A plan that decides by itself also acts by itself on a decision that
/// was recorded before its process died, instead of waiting for a resume.
#[tokio::test]
async fn a_profile_default_acts_on_a_decision_recorded_before_a_restart() -> Result {
    // Intake: recorded `include`, then a process with an `exclude` default.
    let paused = Scenario::new(plan())
        .in_worktree()
        .dirty("notes.txt", "work in progress\n")
        .run()
        .await?;
    assert_eq!(paused.status, RunStatus::AwaitingIntake);
    paused.engine.store().decide_intake(
        &paused.run,
        DecisionRequest::new(
            IntakeChoice::new(IntakeAction::Include),
            DecidedBy::Operator,
        ),
    )?;
    let restarted = orcho::Engine::builder(
        plan().with_intake(Some(IntakeAction::Exclude)),
        paused.store(),
    )
    .build()?;
    let mut run = restarted.open(&paused.run)?;
    let Step::RunPhase(_) = run.next().await? else {
        panic!("the run starts without asking again");
    };
    assert!(
        run.state().checkout().join("notes.txt").exists(),
        "the recorded `include` is what was applied"
    );
    drop(run);

    // Delivery: recorded `skip`, then a process with an `apply` default.
    let parked = implementing(Scenario::new(plan()).in_worktree())
        .run()
        .await?;
    assert_eq!(parked.status, RunStatus::AwaitingDelivery);
    parked.engine.store().decide_delivery(
        &parked.run,
        DecisionRequest::new(DeliveryChoice::skip(), DecidedBy::Operator),
    )?;
    let restarted = orcho::Engine::builder(
        plan().with_delivery(Some(DeliveryAction::Apply)),
        parked.store(),
    )
    .build()?;
    let step = restarted.open(&parked.run)?.next().await?;
    let Step::Finished { status, reason } = step else {
        panic!("the recorded decision is delivered: {step:?}");
    };
    assert_eq!(status, RunStatus::Completed);
    assert!(reason.contains("skipped"), "{reason}");
    Ok(())
}

#[tokio::test]
async fn a_parent_has_one_follow_up_even_when_two_start_it_at_once() -> Result {
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::High,
        "parse() ignores empty input",
    )]);
    let run = implementing(Scenario::new(plan()).in_worktree())
        .report("final_acceptance", rejected)
        .decide(HandoffChoice::Continue)
        .deliver(DeliveryChoice::fix().with_note("handle the empty input"))
        .run()
        .await?;
    let spec = run.engine.store().follow_up(&run.run)?;
    // Eight hosts start the follow-up at the same instant: the store lets
    // exactly one through and refuses the others, naming it.
    let barrier = std::sync::Barrier::new(8);
    let started: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (engine, spec, barrier) = (&run.engine, spec.clone(), &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    engine
                        .start_with(Start::follow_up(spec))
                        .map(|child| child.id().clone())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a host thread"))
            .collect()
    });
    let children: Vec<_> = started.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(children.len(), 1, "{started:?}");
    for refused in started.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(
            refused.refusal(),
            Some(&orcho::Refusal::FollowUpStarted {
                child: children[0].clone()
            }),
            "{refused}"
        );
    }
    assert_eq!(
        run.engine.store().follow_up_child(&run.run)?.as_ref(),
        Some(children[0])
    );
    Ok(())
}

/// Starts the follow-up of `run` and returns its first phase's input.
async fn follow_up_input(run: &orcho::testing::ScenarioRun) -> Result<orcho::PhaseInput> {
    let spec = run.engine.store().follow_up(&run.run)?;
    let mut child = run.engine.start_with(Start::follow_up(spec))?;
    let Step::RunPhase(request) = child.next().await? else {
        panic!("the follow-up runs its first phase");
    };
    Ok(request.input)
}

#[tokio::test]
async fn a_reviewer_that_rejects_naming_nothing_still_leaves_its_follow_up_a_blocker() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .report(
            "final_acceptance",
            PhaseOutcome::new(Verdict::Rejected).with_summary("the parser is not finished"),
        )
        .decide(HandoffChoice::Continue)
        .deliver(DeliveryChoice::fix())
        .run()
        .await?;
    assert_eq!(
        run.reason, "correction-ready: start follow-up 1 for 1 blocker",
        "{}",
        run.trace
    );
    let brief = follow_up_input(&run).await?.follow_up.expect("a brief");
    assert!(
        brief.contains("final_acceptance: the release reviewer said rejected and named no finding"),
        "{brief}"
    );
    Ok(())
}

#[tokio::test]
async fn a_follow_up_is_told_what_its_parent_waived() -> Result {
    let run = implementing(Scenario::new(plan()).in_worktree())
        .report(
            "final_acceptance",
            PhaseOutcome::new(Verdict::Rejected).with_findings([
                Finding::new("reviewer", Severity::Low, "the log line is noisy"),
                Finding::new("reviewer", Severity::High, "parse() ignores empty input"),
            ]),
        )
        .decide(HandoffChoice::Continue)
        .deliver(DeliveryChoice::fix())
        .run()
        .await?;
    assert!(run.reason.ends_with("for 2 blockers"), "{}", run.reason);

    let waived = implementing(Scenario::new(plan()).in_worktree())
        .report(
            "final_acceptance",
            PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
                "reviewer",
                Severity::Low,
                "the log line is noisy",
            )]),
        )
        .decide(HandoffChoice::ContinueWithWaiver {
            reason: "noise is fine for now".into(),
        })
        .deliver(DeliveryChoice::fix())
        .run()
        .await?;
    assert!(!waived.reason.contains("0 blockers"), "{}", waived.reason);
    let brief = follow_up_input(&waived).await?.follow_up.expect("a brief");
    assert!(brief.contains("[waived]"), "{brief}");
    assert!(brief.contains("noise is fine for now"), "{brief}");
    Ok(())
}

#[tokio::test]
async fn a_read_only_phase_that_writes_is_rejected_and_its_change_taken_back() -> Result {
    let plan = RunPlan::new(
        "reviewed",
        vec![
            phase("implement", PhaseRole::Implement),
            phase("review", PhaseRole::Review)
                .with_read_only(true)
                .with_max_attempts(2),
        ],
    );
    let run = implementing(Scenario::new(plan).in_worktree())
        // The reviewer edits a file of the work and adds one of its own.
        .before("review", 1, |worktree| {
            orcho::core::fs::write_atomic(&worktree.join("src/parse.rs"), b"// reviewed\n")
                .expect("write");
            orcho::core::fs::write_atomic(&worktree.join("NOTES.md"), b"notes\n").expect("write");
        })
        .decide(HandoffChoice::Halt)
        .run()
        .await?;
    // The second attempt writes nothing and passes; the first was rejected.
    assert_eq!(run.status, RunStatus::AwaitingDelivery, "{}", run.trace);
    let first = run
        .engine
        .store()
        .events(&run.run)?
        .into_iter()
        .find_map(|(_, event)| match event {
            orcho::RunEvent::PhaseReported { phase, outcome, .. } if phase.as_str() == "review" => {
                Some(outcome)
            }
            _ => None,
        })
        .ok_or("the first review")?;
    assert_eq!(first.verdict, Verdict::Rejected);
    let finding = &first.findings[0];
    assert_eq!(
        finding.title,
        "a read-only phase changed the checkout: `NOTES.md`, `src/parse.rs`"
    );
    // Taken back: the worktree is as the implementer left it.
    let worktree = &run.checkout;
    assert_eq!(
        std::fs::read_to_string(worktree.join("src/parse.rs"))?,
        "pub fn parse() {}\n"
    );
    assert!(!worktree.join("NOTES.md").exists());
    // Kept: the patch is an artifact of the attempt, never delivered.
    let kept = run
        .engine
        .store()
        .artifacts(&run.run)
        .into_iter()
        .find(|a| a.file.as_str() == "read-only-changes.patch")
        .ok_or("the patch is kept")?;
    assert_eq!(kept.attempt, "review-r1-a1");
    let patch = std::fs::read_to_string(&kept.path)?;
    assert!(patch.contains("+// reviewed"), "{patch}");
    assert!(patch.contains("NOTES.md"), "{patch}");
    let gate = run.delivery.clone().ok_or("the gate")?;
    let files: Vec<&str> = gate
        .diff()
        .files()
        .iter()
        .map(|f| f.path().as_str())
        .collect();
    assert_eq!(files, ["src/parse.rs"]);
    Ok(())
}

#[tokio::test]
async fn an_approved_run_that_changed_nothing_ends_without_a_delivery_gate() -> Result {
    // Nothing is scripted for the gate: a gate that opened would wait.
    let run = Scenario::new(plan()).in_worktree().run().await?;
    assert_eq!(run.status, RunStatus::Completed, "{}", run.trace);
    assert!(
        run.reason
            .starts_with("the run changed nothing, so there was nothing to deliver"),
        "{}",
        run.reason
    );
    let target = run.target.clone().expect("a target");
    assert_eq!(git(&target, &["log", "--oneline"]).lines().count(), 1);
    // The gate is closed, and by whom is said.
    let decisions = run.engine.store().decisions(&run.run)?;
    let skip = decisions
        .iter()
        .find(|d| d.kind == "delivery")
        .expect("the delivery decision");
    assert_eq!(skip.action.as_deref(), Some("skip"));
    assert_eq!(skip.by.as_deref(), Some("orcho (the run changed nothing)"));
    assert_eq!(run.engine.store().inbox()?.pending().count(), 0);

    // A rejected one still waits for a person, who may ask for a
    // follow-up.
    let rejected = Scenario::new(plan())
        .in_worktree()
        .report(
            "final_acceptance",
            PhaseOutcome::new(Verdict::Rejected).with_summary("not done"),
        )
        .decide(HandoffChoice::waive("known")?)
        .run()
        .await?;
    assert_eq!(
        rejected.status,
        RunStatus::AwaitingDelivery,
        "{}",
        rejected.trace
    );
    // Said where it delivers to, and only there.
    let store = rejected.engine.store();
    let into = rejected.target.clone().expect("a target");
    assert_eq!(
        store.awaiting_delivery_into(&into)?,
        std::slice::from_ref(&rejected.run)
    );
    assert!(store.awaiting_delivery_into(&rejected.checkout)?.is_empty());
    Ok(())
}
