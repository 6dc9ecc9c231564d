//! A gate written the way a third party writes one: against the public API
//! only, with `#[orcho_gates::async_trait]`, a factory that validates its
//! configuration, and registration beside the built-ins.

use std::sync::Arc;

use orcho_core::{Finding, GateName, Severity, Tokens, Usd};
use orcho_gates::{
    FailStrategy, GateContext, GateError, GateKind, GateOutcome, GateRegistry, GateSpec,
    ModelUsage, PhaseEffect, QualityGate, QualityGateResult, ScheduledGate, Scheduler,
};
use serde::Deserialize;

use crate::{Result, context};

/// A pretend LLM judge: flags a phase summary that mentions a banned word.
#[derive(Debug)]
struct BannedWordJudge {
    name: GateName,
    word: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    word: String,
}

#[orcho_gates::async_trait]
impl QualityGate for BannedWordJudge {
    fn name(&self) -> &GateName {
        &self.name
    }

    fn kind(&self) -> GateKind {
        GateKind::Inferential
    }

    async fn evaluate(
        &self,
        ctx: &GateContext,
    ) -> std::result::Result<QualityGateResult, GateError> {
        let usage = ModelUsage::new(
            Some(Usd::new(0.001).map_err(GateError::new)?),
            Some(Tokens::new(50, 5)),
        );
        let result = if ctx.phase_outcome().summary.contains(&self.word) {
            QualityGateResult::inferential(self.name.clone(), GateOutcome::Failed).with_finding(
                Finding::new(
                    self.name.as_str(),
                    Severity::Medium,
                    format!("the summary says `{}`", self.word),
                ),
            )
        } else {
            QualityGateResult::inferential(self.name.clone(), GateOutcome::Passed)
        };
        Ok(result.with_model_usage(usage))
    }
}

fn factory(spec: &GateSpec) -> std::result::Result<Arc<dyn QualityGate>, GateError> {
    let config: Config = serde_json::from_value(spec.config.clone())
        .map_err(|e| GateError::new(e).context("reading `with:`"))?;
    Ok(Arc::new(BannedWordJudge {
        name: spec.name.clone(),
        word: config.word,
    }))
}

#[tokio::test]
async fn a_third_party_gate_registers_validates_and_runs() -> Result {
    let registry = GateRegistry::builder()
        .register("banned_word", factory)?
        .build();

    let typo = GateSpec::new("tone".parse()?, "banned_word".parse()?)
        .with_config(serde_json::json!({"wrod": "TODO"}));
    let err = registry
        .build(&typo)
        .err()
        .ok_or("a typo in `with:` must not load")?;
    insta::assert_snapshot!(orcho_core::error_chain(&err), @"invalid configuration for gate `tone` (uses `banned_word`): caused by: reading `with:`: caused by: unknown field `wrod`, expected `word`");

    let spec = GateSpec::new("tone".parse()?, "banned_word".parse()?)
        .with_config(serde_json::json!({"word": "TODO"}));
    let gate = registry.build(&spec)?;
    let (_dir, mut ctx) = context();
    let outcome = ctx
        .phase_outcome()
        .clone()
        .with_summary("Done, except a TODO in parse.rs");
    ctx = ctx.with_phase_outcome(outcome);
    let scheduler = Scheduler::builder(ctx.checkout().join(".orcho").join("locks")).build();
    let phase = scheduler
        .run(
            &ctx,
            &[ScheduledGate::new(gate, FailStrategy::TriggerReplan)],
            |_| Ok(()),
        )
        .await?;
    assert_eq!(phase.effect.as_str(), "replan");
    assert_eq!(phase.cost.usd, Some(Usd::new(0.001)?));
    let PhaseEffect::Replan { critique } = phase.effect else {
        panic!()
    };
    assert_eq!(critique[0].findings[0].title, "the summary says `TODO`");
    Ok(())
}
