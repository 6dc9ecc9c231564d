//! The CI autopilot against a scripted advisor: the one case it retries, and
//! each reason it stops for, leaving the handoff pending with typed state.

use std::{sync::Arc, time::Duration};

use orcho_core::{Cost, Finding, HandoffId, Severity, Usd, Verdict};
use orcho_handoff::{
    Advice, Confidence, HandoffAction,
    advisor::ConfidenceBand,
    autopilot::{Autopilot, AutopilotOutcome, AutopilotPolicy, Ineligible, StopReason},
    decision::{DecidedBy, DecisionRequest},
    handoff::{HandoffChoice, HandoffPolicy, HandoffSpec, HandoffStateName, JournalEvent},
    testing::ScriptedAdvisor,
};

use crate::{
    Result,
    fixtures::{Fixture, finding, fixture, rejected},
};

fn retry_advice() -> Advice {
    Advice::new(
        HandoffAction::RetryFeedback,
        Confidence::score(0.9),
        "the failing test names the bug",
    )
    .with_retry_feedback("parse() must return an empty list for empty input")
    .with_expected_files(vec!["src/parse.rs".into()])
}

fn policy() -> AutopilotPolicy {
    AutopilotPolicy::builder()
        .allowed_files(["src/**", "tests/**"])
        .build()
        .expect("valid policy")
}

fn pilot(f: &Fixture, advisor: &Arc<ScriptedAdvisor>, policy: AutopilotPolicy) -> Autopilot {
    Autopilot::new(f.store.clone(), advisor.clone(), policy)
}

/// Runs the autopilot on a fresh rejected handoff with one scripted advice
/// and returns the stop reason, checking that the handoff stayed pending and
/// the stop is journaled.
async fn stop_with(advice: Advice, policy: AutopilotPolicy) -> Result<StopReason> {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then(advice));
    let outcome = pilot(&f, &advisor, policy)
        .run(&f.run, h.id(), "worker output")
        .await?;
    expect_stopped(&f, h.id(), outcome)
}

fn expect_stopped(f: &Fixture, id: &HandoffId, outcome: AutopilotOutcome) -> Result<StopReason> {
    let AutopilotOutcome::Stopped { reason, .. } = outcome else {
        return Err(format!("expected a stop, got {outcome:?}").into());
    };
    assert_eq!(
        f.store.state(&f.run, id)?.name(),
        HandoffStateName::Open,
        "left pending"
    );
    assert!(
        f.store.recorded_decision(&f.run, id)?.is_none(),
        "no decision written"
    );
    let journaled = f.store.journal(&f.run)?.into_iter().any(|e| {
        e.handoff() == id
            && matches!(e.event(), JournalEvent::AutopilotStopped { reason: code, .. } if code == reason.code())
    });
    assert!(journaled, "the stop is journaled with its code");
    Ok(reason)
}

#[tokio::test]
async fn the_honest_low_risk_case_is_retried_as_the_ci_agent() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then(retry_advice()));
    let outcome = pilot(&f, &advisor, policy())
        .run(&f.run, h.id(), "worker output")
        .await?;
    let AutopilotOutcome::Retried { decision, advice } = outcome else {
        return Err(format!("expected a retry, got {outcome:?}").into());
    };
    assert_eq!(advisor.asked(), vec![h.id().clone()]);
    let d = decision.decision();
    assert_eq!(d.decided_by(), DecidedBy::CiAgent);
    assert_eq!(d.advice(), Some(advice.id()));
    assert_eq!(
        d.payload(),
        &HandoffChoice::retry("parse() must return an empty list for empty input")?
    );
    assert_eq!(advice.requested_by(), DecidedBy::CiAgent);
    assert_eq!(advice.advisor(), "scripted");
    // Same decide/resume path as an operator's decision.
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Decided
    );
    let next = f.store.resume(&decision)?;
    assert!(matches!(next, orcho_handoff::handoff::NextStep::Retry(_)));
    Ok(())
}

#[tokio::test]
async fn stops_when_a_waiver_halt_or_continue_is_recommended() -> Result {
    for (action, code) in [
        (HandoffAction::ContinueWithWaiver, "waiver_recommended"),
        (HandoffAction::Halt, "halt_recommended"),
        (HandoffAction::Continue, "continue_recommended"),
    ] {
        let advice = Advice::new(action, Confidence::score(0.95), "accept the risk");
        let reason = stop_with(advice, policy()).await?;
        assert!(
            matches!(reason, StopReason::Recommended(a) if a == action),
            "{reason:?}"
        );
        assert_eq!(reason.code(), code);
    }
    Ok(())
}

#[tokio::test]
async fn stops_on_a_destructive_action_in_the_advice() -> Result {
    let advice = retry_advice()
        .with_retry_feedback("start over: git reset --hard origin/main, then fix parse()");
    let reason = stop_with(advice, policy()).await?;
    insta::assert_snapshot!(reason.to_string(), @"the advice contains a destructive action (`git reset --hard`)");

    let custom = AutopilotPolicy::builder()
        .destructive_patterns(
            orcho_handoff::autopilot::DestructivePatterns::default().with(["cargo publish"])?,
        )
        .build()?;
    let advice = retry_advice().with_retry_feedback("fix parse() and run cargo --locked publish");
    let reason = stop_with(advice, custom).await?;
    assert!(
        matches!(reason, StopReason::DestructiveAction { ref pattern } if pattern == "cargo publish")
    );
    Ok(())
}

#[tokio::test]
async fn stops_when_expected_files_are_out_of_scope() -> Result {
    let advice = retry_advice().with_expected_files(vec![
        "src/parse.rs".into(),
        ".github/workflows/ci.yml".into(),
    ]);
    let reason = stop_with(advice, policy()).await?;
    insta::assert_snapshot!(reason.to_string(), @"the advice expects changes outside the allowed files: `.github/workflows/ci.yml`");
    Ok(())
}

#[tokio::test]
async fn stops_below_the_confidence_threshold() -> Result {
    let advice = retry_advice().with_confidence(Confidence::score(0.6));
    let reason = stop_with(advice, policy()).await?;
    insta::assert_snapshot!(reason.to_string(), @"the advice's confidence 0.6 is below the threshold 0.7");
    // A band counts as its floor: `medium` is 0.5.
    let advice = retry_advice().with_confidence(Confidence::band(ConfidenceBand::Medium));
    assert_eq!(stop_with(advice, policy()).await?.code(), "low_confidence");
    Ok(())
}

#[tokio::test]
async fn stops_on_advisor_errors_and_malformed_advice() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then_fail("model timed out"));
    let outcome = pilot(&f, &advisor, policy())
        .run(&f.run, h.id(), "")
        .await?;
    let reason = expect_stopped(&f, h.id(), outcome)?;
    insta::assert_snapshot!(reason.to_string(), @"the advisor failed: model timed out");

    let malformed = retry_advice().with_confidence(Confidence::score(1.5));
    let reason = stop_with(malformed, policy()).await?;
    insta::assert_snapshot!(reason.to_string(), @"malformed advice: the confidence 1.5 is not a number in 0..=1");
    let no_feedback = retry_advice().with_retry_feedback("   ");
    assert_eq!(
        stop_with(no_feedback, policy()).await?.code(),
        "malformed_advice"
    );
    Ok(())
}

#[tokio::test]
async fn stops_on_a_repeated_blocker_without_asking_the_advisor() -> Result {
    let f = fixture();
    let first = f.store.open(rejected(&f.run))?;
    let d = f.store.decide(
        &f.run,
        first.id(),
        DecisionRequest::new(HandoffChoice::retry("fix it")?, DecidedBy::Operator),
    )?;
    f.store.resume(&d)?;
    // The retry failed the same way (another line, same test).
    let second = f.store.open(
        rejected(&f.run)
            .with_round(2)
            .with_findings(vec![finding("test  `parse_empty`  failed").with_line(7)]),
    )?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then(retry_advice()));
    let outcome = pilot(&f, &advisor, policy())
        .run(&f.run, second.id(), "")
        .await?;
    let reason = expect_stopped(&f, second.id(), outcome)?;
    insta::assert_snapshot!(reason.to_string(), @"1 finding(s) repeat from handoff `0001-implement`");
    assert!(advisor.asked().is_empty(), "no advisor call was spent");
    Ok(())
}

#[tokio::test]
async fn a_repeated_low_severity_remark_does_not_stop_a_retry_that_fixed_the_failure() -> Result {
    let f = fixture();
    let remark = Finding::new("lint", Severity::Low, "prefer `iter()`");
    let first = f.store.open(
        rejected(&f.run).with_findings(vec![finding("test `parse_empty` failed"), remark.clone()]),
    )?;
    let d = f.store.decide(
        &f.run,
        first.id(),
        DecisionRequest::new(HandoffChoice::retry("fix it")?, DecidedBy::Operator),
    )?;
    f.store.resume(&d)?;
    // The failure is gone; the remark stays, and a new failure appeared.
    let second = f.store.open(
        rejected(&f.run)
            .with_round(2)
            .with_findings(vec![remark.clone(), finding("test `parse_nested` failed")]),
    )?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted").then(retry_advice()));
    let outcome = pilot(&f, &advisor, policy())
        .run(&f.run, second.id(), "")
        .await?;
    assert!(
        matches!(outcome, AutopilotOutcome::Retried { .. }),
        "progress on the blocking finding: {outcome:?}"
    );

    // A retry that fixed nothing blocking stops, low severity or not.
    let g = fixture();
    let first = g
        .store
        .open(rejected(&g.run).with_findings(vec![remark.clone()]))?;
    let d = g.store.decide(
        &g.run,
        first.id(),
        DecisionRequest::new(HandoffChoice::retry("tidy it")?, DecidedBy::Operator),
    )?;
    g.store.resume(&d)?;
    let second = g
        .store
        .open(rejected(&g.run).with_round(2).with_findings(vec![remark]))?;
    let outcome = pilot(&g, &advisor, policy())
        .run(&g.run, second.id(), "")
        .await?;
    let reason = expect_stopped(&g, second.id(), outcome)?;
    assert_eq!(reason.code(), "repeated_blocker");
    Ok(())
}

#[tokio::test]
async fn stops_when_the_retry_budget_is_used_up() -> Result {
    let f = fixture();
    let one = AutopilotPolicy::builder().max_retries(1).build()?;
    let advisor = Arc::new(
        ScriptedAdvisor::new("scripted")
            .then(retry_advice())
            .then(retry_advice()),
    );
    let first = f.store.open(rejected(&f.run))?;
    let AutopilotOutcome::Retried { decision, .. } = pilot(&f, &advisor, one.clone())
        .run(&f.run, first.id(), "")
        .await?
    else {
        return Err("the first retry is within budget".into());
    };
    f.store.resume(&decision)?;
    let second = f
        .store
        .open(rejected(&f.run).with_findings(vec![finding("a new failure")]))?;
    let outcome = pilot(&f, &advisor, one)
        .run(&f.run, second.id(), "")
        .await?;
    let reason = expect_stopped(&f, second.id(), outcome)?;
    insta::assert_snapshot!(reason.to_string(), @"the run used 1 of 1 CI retries");
    assert_eq!(advisor.remaining(), 1, "the advisor was not asked");
    Ok(())
}

#[tokio::test]
async fn stops_when_the_cost_budget_is_used_up() -> Result {
    let f = fixture();
    let cap = AutopilotPolicy::builder()
        .max_cost(Usd::new(0.05)?)
        .build()?;
    let pricey =
        retry_advice().with_usage(Cost::wall(Duration::from_secs(2)).with_usd(Usd::new(0.08)?));
    let advisor = Arc::new(
        ScriptedAdvisor::new("scripted")
            .then(pricey)
            .then(retry_advice()),
    );
    let first = f.store.open(rejected(&f.run))?;
    let outcome = pilot(&f, &advisor, cap.clone())
        .run(&f.run, first.id(), "")
        .await?;
    let reason = expect_stopped(&f, first.id(), outcome)?;
    insta::assert_snapshot!(reason.to_string(), @"advisors cost $0.0800 of the run's $0.0500");

    // Once spent, the advisor is not even asked.
    let second = f
        .store
        .open(rejected(&f.run).with_findings(vec![finding("another")]))?;
    let outcome = pilot(&f, &advisor, cap)
        .run(&f.run, second.id(), "")
        .await?;
    assert_eq!(
        expect_stopped(&f, second.id(), outcome)?.code(),
        "cost_budget_exhausted"
    );
    assert_eq!(advisor.remaining(), 1);
    Ok(())
}

#[tokio::test]
async fn only_eligible_handoffs_are_acted_on() -> Result {
    let f = fixture();
    let advisor = Arc::new(ScriptedAdvisor::new("scripted"));
    let pilot = pilot(&f, &advisor, policy());
    let cases = [
        (
            HandoffSpec::new(f.run.clone(), "review".parse()?, Verdict::Approved)
                .with_findings(vec![finding("nit")]),
            Ineligible::Approved,
        ),
        (
            rejected(&f.run).with_findings(vec![]),
            Ineligible::NoFindings,
        ),
        (
            rejected(&f.run).with_policy(HandoffPolicy::default().with_retry_available(false)),
            Ineligible::RetryUnavailable,
        ),
    ];
    for (spec, expected) in cases {
        let h = f.store.open(spec)?;
        let outcome = pilot.run(&f.run, h.id(), "").await?;
        assert!(
            matches!(outcome, AutopilotOutcome::NotEligible(i) if i == expected),
            "{outcome:?}"
        );
    }
    let decided = f.store.open(rejected(&f.run))?;
    f.store.decide(
        &f.run,
        decided.id(),
        DecisionRequest::new(HandoffChoice::Halt, DecidedBy::Operator),
    )?;
    let outcome = pilot.run(&f.run, decided.id(), "").await?;
    assert!(matches!(
        outcome,
        AutopilotOutcome::NotEligible(Ineligible::NotOpen(HandoffStateName::Halted))
    ));
    assert!(advisor.asked().is_empty());
    assert!(
        f.store
            .journal(&f.run)?
            .iter()
            .all(|e| !matches!(e.event(), JournalEvent::AutopilotStopped { .. }))
    );
    Ok(())
}

#[test]
fn prepare_and_conclude_run_the_same_checks_without_an_async_runtime() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let advisor = Arc::new(ScriptedAdvisor::new("scripted"));
    let pilot = pilot(&f, &advisor, policy());
    let orcho_handoff::autopilot::Prepared::Ask(call) = pilot.prepare(&f.run, h.id())? else {
        return Err("an eligible handoff asks the advisor".into());
    };
    assert_eq!(call.handoff().id(), h.id());
    assert_eq!(call.request("output").phase_output, "output");
    let outcome = pilot.conclude(call, Ok(retry_advice()))?;
    assert!(matches!(outcome, AutopilotOutcome::Retried { .. }));
    // Decided now: prepare knows the outcome without the advisor.
    let orcho_handoff::autopilot::Prepared::Done(outcome) = pilot.prepare(&f.run, h.id())? else {
        return Err("a decided handoff needs no advisor".into());
    };
    assert!(matches!(
        *outcome,
        AutopilotOutcome::NotEligible(Ineligible::NotOpen(HandoffStateName::Decided))
    ));
    Ok(())
}
