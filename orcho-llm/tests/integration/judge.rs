//! The judge gate against a canned server, through the registry and the
//! scheduler as a host uses it.

use orcho_core::{Finding, Severity, Verdict};
use orcho_gates::{
    FailStrategy, GateContext, GateKind, GateOutcome, GateRegistry, GateSpec, PhaseOutcome,
    ScheduledGate, Scheduler,
};
use orcho_llm::LlmJudge;

use crate::{
    KEY, Result, client, openai,
    server::{Canned, Server},
};

fn context() -> GateContext {
    let outcome = PhaseOutcome::new(Verdict::Approved)
        .with_summary("Added `parse_config` and its tests.")
        .with_findings([Finding::new("lint", Severity::Low, "unused import")
            .with_file("src/config.rs")
            .with_line(3)]);
    GateContext::new(
        "20261121T120000000Z-00000000000000aa"
            .parse()
            .expect("run id"),
        "implement".parse().expect("phase"),
        "/nonexistent/checkout",
        outcome,
    )
    .with_attempt(2)
}

fn judge(base_url: &str) -> LlmJudge {
    LlmJudge::new(
        "review".parse().expect("gate name"),
        client(
            "openai",
            base_url,
            serde_json::json!({
                "instructions": "No unsafe code.",
                "input_usd_per_million": 1.0, "output_usd_per_million": 2.0,
            }),
        ),
    )
}

#[tokio::test]
async fn a_fail_verdict_has_findings_usage_and_the_request_is_structured() -> Result {
    let verdict = r#"{"verdict":"fail","summary":"no test for parse","findings":[{"severity":"high","message":"untested","file":"src/parse.rs","line":7}]}"#;
    let server = Server::start(Canned::ok(openai(verdict, Some((1000, 500)))));
    let result = orcho_gates::QualityGate::evaluate(&judge(&server.base_url), &context()).await?;
    assert_eq!(result.outcome, GateOutcome::Failed);
    assert_eq!(result.kind(), GateKind::Inferential);
    assert_eq!(result.summary, "no test for parse");
    assert_eq!(result.findings[0].title, "untested");
    assert_eq!(result.findings[0].line, Some(7));
    let usage = result.model_usage().ok_or("usage")?;
    assert_eq!(usage.tokens.map(|t| t.total()), Some(1500));
    assert!((usage.cost_usd.ok_or("cost")?.get() - 0.002).abs() < 1e-12);

    let request = server.request();
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body: serde_json::Value = serde_json::from_str(&request.body)?;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], "verdict");
    let user = body["messages"][1]["content"]
        .as_str()
        .ok_or("user message")?;
    assert!(
        user.contains("attempt 2") && user.contains("No unsafe code."),
        "{user}"
    );
    assert!(user.contains("unused import (src/config.rs:3)"), "{user}");
    Ok(())
}

#[tokio::test]
async fn a_bad_answer_errors_the_gate_and_a_halt_gate_then_stops() -> Result {
    let server = Server::start(Canned::ok(openai("Looks great to me!", None)));
    let gate = std::sync::Arc::new(judge(&server.base_url));
    let ctx = context();
    let scheduler = Scheduler::builder(camino::Utf8PathBuf::from(concat!(
        env!("CARGO_TARGET_TMPDIR"),
        "/llm-judge-locks"
    )))
    .build();
    let phase = scheduler
        .run(
            &ctx,
            &[ScheduledGate::new(gate, FailStrategy::Halt)],
            |_| Ok(()),
        )
        .await?;
    let outcome = &phase.records[0].result.outcome;
    let GateOutcome::Errored { error } = outcome else {
        panic!("errored expected, got {outcome:?}");
    };
    assert!(error.contains("malformed verdict"), "{error}");
    assert_eq!(phase.effect.as_str(), "halt");
    Ok(())
}

#[test]
fn the_gate_registers_and_refuses_a_bad_with_block() -> Result {
    let registry = orcho_llm::register(GateRegistry::builtins_builder())?.build();
    let spec = GateSpec::new("review".parse()?, "llm_judge".parse()?)
        .with_config(serde_json::json!({"base_url": "https://h/v1", "modle": "m"}));
    let err = registry.build(&spec).err().ok_or("a typo must not load")?;
    assert!(
        orcho_core::error_chain(&err).contains("unknown field `modle`"),
        "{}",
        orcho_core::error_chain(&err)
    );
    Ok(())
}
