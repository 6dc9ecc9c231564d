//! The `handoff_advice` evidence section over a run with every outcome.

use std::{sync::Arc, time::Duration};

use orcho_core::{Cost, PhaseName, Tokens, Usd, Verdict};
use orcho_handoff::{
    Advice, Confidence, HandoffAction,
    autopilot::{Autopilot, AutopilotOutcome, AutopilotPolicy},
    decision::{DecidedBy, DecisionRequest},
    evidence::{HandoffAdviceEvidence, RetryOutcome},
    handoff::{HandoffChoice, HandoffSpec},
    testing::ScriptedAdvisor,
};

use crate::{
    Result,
    fixtures::{finding, fixture},
};

fn usage(usd: f64) -> Result<Cost> {
    Ok(Cost::wall(Duration::from_millis(1500))
        .with_usd(Usd::new(usd)?)
        .with_tokens(Tokens::new(1200, 300)))
}

fn retry(usd: f64) -> Result<Advice> {
    Ok(Advice::new(
        HandoffAction::RetryFeedback,
        Confidence::score(0.9),
        "specific failure",
    )
    .with_retry_feedback("handle empty input")
    .with_usage(usage(usd)?))
}

#[tokio::test]
async fn evidence_reports_calls_applied_actions_outcomes_and_cost() -> Result {
    let f = fixture();
    let run = &f.run;
    let spec = |phase: &str, title: &str| -> Result<HandoffSpec> {
        Ok(
            HandoffSpec::new(run.clone(), phase.parse()?, Verdict::Rejected)
                .with_findings(vec![finding(title)]),
        )
    };
    let advisor = Arc::new(
        ScriptedAdvisor::new("reviewer")
            .then(retry(0.01)?)
            .then(
                retry(0.02)?
                    .with_retry_feedback("nope")
                    .with_usage(usage(0.03)?),
            )
            .then(retry(0.01)?.with_confidence(Confidence::score(0.2))),
    );
    let pilot = Autopilot::new(
        f.store.clone(),
        advisor.clone(),
        AutopilotPolicy::builder().max_retries(5).build()?,
    );

    // implement: the CI agent retries, and the same blocker comes back.
    let h1 = f.store.open(spec("implement", "test `a` failed")?)?;
    let AutopilotOutcome::Retried { decision, .. } = pilot.run(run, h1.id(), "").await? else {
        return Err("expected a retry".into());
    };
    f.store.resume(&decision)?;
    let h2 = f.store.open(spec("implement", "test `a` failed")?)?;
    // An operator reads advice and waives instead.
    let a2 = f.store.record_advice(
        run,
        h2.id(),
        "reviewer",
        &Advice::new(
            HandoffAction::ContinueWithWaiver,
            Confidence::score(0.7),
            "flaky",
        )
        .with_usage(usage(0.02)?),
        DecidedBy::Operator,
    )?;
    f.store.decide(
        run,
        h2.id(),
        DecisionRequest::new(HandoffChoice::waive("flaky")?, DecidedBy::Operator)
            .with_advice(a2.id().clone()),
    )?;

    // review: the CI agent retries; the next attempt has a new blocker, on
    // which the autopilot stops (low confidence).
    let h3 = f.store.open(spec("review", "missing docs")?)?;
    let AutopilotOutcome::Retried { decision, .. } = pilot.run(run, h3.id(), "").await? else {
        return Err("expected a retry".into());
    };
    f.store.resume(&decision)?;
    let h4 = f.store.open(spec("review", "unclear naming")?)?;
    assert!(matches!(
        pilot.run(run, h4.id(), "").await?,
        AutopilotOutcome::Stopped { .. }
    ));

    // docs: retried, then the phase passed. tests: retried, nothing known yet.
    for (phase, title) in [("docs", "broken link"), ("tests", "slow test")] {
        let h = f.store.open(spec(phase, title)?)?;
        let a =
            f.store
                .record_advice(run, h.id(), "reviewer", &retry(0.01)?, DecidedBy::Operator)?;
        let d = f.store.decide(
            run,
            h.id(),
            DecisionRequest::new(
                HandoffChoice::retry("handle empty input")?,
                DecidedBy::Operator,
            )
            .with_advice(a.id().clone()),
        )?;
        f.store.resume(&d)?;
    }

    let passed: Vec<PhaseName> = vec!["docs".parse()?];
    let evidence = HandoffAdviceEvidence::collect(&f.store, run, &passed)?;
    assert_eq!(evidence.advice_calls(), 6);
    let outcomes: Vec<_> = evidence
        .calls()
        .iter()
        .map(|c| (c.recommended(), c.applied(), c.retry_outcome()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (
                HandoffAction::RetryFeedback,
                Some(HandoffAction::RetryFeedback),
                Some(RetryOutcome::Repeated)
            ),
            (
                HandoffAction::ContinueWithWaiver,
                Some(HandoffAction::ContinueWithWaiver),
                None
            ),
            (
                HandoffAction::RetryFeedback,
                Some(HandoffAction::RetryFeedback),
                Some(RetryOutcome::Stopped)
            ),
            // The autopilot stopped on it: the run moved on without it.
            (
                HandoffAction::RetryFeedback,
                None,
                Some(RetryOutcome::Stopped)
            ),
            (
                HandoffAction::RetryFeedback,
                Some(HandoffAction::RetryFeedback),
                Some(RetryOutcome::Resolved)
            ),
            (
                HandoffAction::RetryFeedback,
                Some(HandoffAction::RetryFeedback),
                Some(RetryOutcome::Unknown)
            ),
        ]
    );
    assert_eq!(
        evidence.cost_usd(),
        Some(Usd::new(0.01 + 0.02 + 0.03 + 0.01 + 0.01 + 0.01)?)
    );
    insta::assert_json_snapshot!("handoff_advice_evidence", evidence);
    Ok(())
}

#[tokio::test]
async fn a_cost_is_a_total_only_when_every_call_reported_one() -> Result {
    let f = fixture();
    let run = &f.run;
    let open = |title: &str| -> Result<_> {
        Ok(f.store.open(
            HandoffSpec::new(run.clone(), "implement".parse()?, Verdict::Rejected)
                .with_findings(vec![finding(title)]),
        )?)
    };
    let priced = open("test `a` failed")?;
    f.store.record_advice(
        run,
        priced.id(),
        "reviewer",
        &retry(0.02)?,
        DecidedBy::Operator,
    )?;
    // Decided otherwise: the advice was never applied, and the run moved on.
    f.store.decide(
        run,
        priced.id(),
        DecisionRequest::new(HandoffChoice::Halt, DecidedBy::Operator),
    )?;
    let unpriced = open("test `b` failed")?;
    let no_cost = Advice::new(HandoffAction::Halt, Confidence::score(0.5), "give up");
    f.store.record_advice(
        run,
        unpriced.id(),
        "local-model",
        &no_cost,
        DecidedBy::Operator,
    )?;

    let evidence = HandoffAdviceEvidence::collect(&f.store, run, &[])?;
    assert_eq!(evidence.calls_without_cost(), 1);
    assert_eq!(evidence.cost_usd(), None, "a partial sum is not the total");
    assert_eq!(evidence.observed_usage().usd, Some(Usd::new(0.02)?));
    let outcomes: Vec<_> = evidence.calls().iter().map(|c| c.retry_outcome()).collect();
    // Decided otherwise: stopped. Still waiting: not known yet.
    assert_eq!(
        outcomes,
        [Some(RetryOutcome::Stopped), Some(RetryOutcome::Unknown)]
    );
    let json = serde_json::to_value(&evidence)?;
    assert_eq!(json["schema"], 2);
    assert_eq!(json["cost_usd"], serde_json::Value::Null);
    assert_eq!(json["calls_without_cost"], 1);
    Ok(())
}
