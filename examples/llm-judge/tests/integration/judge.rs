//! The gate against a canned endpoint: verdicts, the request it sends, and
//! every way an answer can be bad.

use std::time::{Duration, Instant};

use orcho_core::{Finding, Severity, Tokens, error_chain};
use orcho_gates::{
    FailStrategy, GateError, GateKind, GateOutcome, GateRegistry, PhaseEffect, QualityGate,
    QualityGateExt, QualityGateResult, ScheduledGate, Scheduler,
};
use serde_json::json;

use crate::{
    KEY, Result, completion, context, judge,
    server::{Canned, Server, closed_port_url},
    spec,
};

/// Runs a gate configured with `extra` against a server answering `canned`.
async fn evaluate(
    canned: Canned,
    extra: serde_json::Value,
) -> (Server, std::result::Result<QualityGateResult, GateError>) {
    let server = Server::start(canned);
    let result = judge(&server.base_url, extra).evaluate(&context()).await;
    (server, result)
}

/// The error chain of an evaluation that must fail, with the server's
/// address replaced by `{base_url}`.
async fn error(canned: Canned, extra: serde_json::Value) -> Result<String> {
    let (server, result) = evaluate(canned, extra).await;
    let err = result
        .err()
        .ok_or("a bad answer must be an error, never a verdict")?;
    let chain = error_chain(&err);
    assert!(!chain.contains(KEY), "the key leaked: {chain}");
    Ok(chain.replace(&server.base_url, "{base_url}"))
}

#[tokio::test]
async fn a_pass_verdict_passes_with_summary_tokens_and_cost() -> Result {
    let reply =
        json!({"verdict": "pass", "summary": "The change is tested and safe.", "findings": []});
    let (_server, result) = evaluate(
        Canned::ok(completion(&reply.to_string(), Some((1200, 80)))),
        json!({"price_per_1k_input_tokens_usd": 0.01, "price_per_1k_output_tokens_usd": 0.03}),
    )
    .await;
    let result = result?;
    assert_eq!(result.gate, "review");
    assert_eq!(result.kind(), GateKind::Inferential);
    assert_eq!(result.outcome, GateOutcome::Passed);
    assert_eq!(result.summary, "The change is tested and safe.");
    assert!(result.findings.is_empty());
    assert_eq!(result.output_tail, reply.to_string());
    let usage = result
        .model_usage()
        .ok_or("an inferential result has usage")?;
    assert_eq!(usage.tokens, Some(Tokens::new(1200, 80)));
    let usd = usage.cost_usd.ok_or("prices are configured")?;
    assert!(
        (usd.get() - (1.2 * 0.01 + 0.08 * 0.03)).abs() < 1e-12,
        "{usd}"
    );
    assert_eq!(result.cost().tokens, Some(Tokens::new(1200, 80)));
    Ok(())
}

#[tokio::test]
async fn without_prices_or_usage_nothing_is_made_up() -> Result {
    let reply = r#"{"verdict": "pass", "summary": "ok"}"#;
    let (_server, result) = evaluate(Canned::ok(completion(reply, Some((10, 2)))), json!({})).await;
    let usage = *result?.model_usage().ok_or("usage")?;
    assert_eq!(
        (usage.tokens, usage.cost_usd),
        (Some(Tokens::new(10, 2)), None)
    );

    let (_server, result) = evaluate(
        Canned::ok(completion(reply, None)),
        json!({"price_per_1k_input_tokens_usd": 0.01, "price_per_1k_output_tokens_usd": 0.03}),
    )
    .await;
    let usage = *result?.model_usage().ok_or("usage")?;
    assert_eq!((usage.tokens, usage.cost_usd), (None, None));
    Ok(())
}

#[tokio::test]
async fn a_fail_verdict_fails_with_the_findings() -> Result {
    let reply = json!({
        "verdict": "fail",
        "summary": "The parser accepts negative sizes.",
        "findings": [
            {"severity": "high", "message": "negative `size` is not rejected", "file": "src/config.rs", "line": 41},
            {"severity": "low", "message": "the error message is vague"},
        ],
    });
    let (_server, result) = evaluate(
        Canned::ok(completion(&reply.to_string(), Some((900, 120)))),
        json!({}),
    )
    .await;
    let result = result?;
    assert_eq!(result.outcome, GateOutcome::Failed);
    assert_eq!(result.summary, "The parser accepts negative sizes.");
    assert_eq!(
        result.findings,
        [
            Finding::new("review", Severity::High, "negative `size` is not rejected")
                .with_file("src/config.rs")
                .with_line(41),
            Finding::new("review", Severity::Low, "the error message is vague"),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn the_request_has_the_bearer_key_the_model_and_a_json_response_format() -> Result {
    let (server, result) = evaluate(
        Canned::ok(completion(r#"{"verdict":"pass","summary":"ok"}"#, None)),
        json!({"instructions": "Fail if the phase skipped tests."}),
    )
    .await;
    result?;
    let request = server.request();
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        request
            .header("content-type")
            .is_some_and(|v| v.starts_with("application/json")),
        "{request:?}"
    );
    let body: serde_json::Value = serde_json::from_str(&request.body)?;
    assert_eq!(body["model"], "judge-model");
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(body["messages"][0]["role"], "system");
    let system = body["messages"][0]["content"]
        .as_str()
        .ok_or("system prompt")?;
    assert!(
        system.contains(r#""verdict": "pass" or "fail""#),
        "{system}"
    );
    assert_eq!(body["messages"][1]["role"], "user");
    let user = body["messages"][1]["content"]
        .as_str()
        .ok_or("user message")?;
    for expected in [
        "Phase: `implement`, attempt 2, round 1.",
        "The phase's own verdict: `approved`.",
        "Added `parse_config` and its tests.",
        "- [low] unused import (src/config.rs:3)",
        "Your criteria:\nFail if the phase skipped tests.",
    ] {
        assert!(
            user.contains(expected),
            "`{expected}` missing from:\n{user}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_body_that_is_not_json_is_an_error() -> Result {
    let chain = error(Canned::ok("<html>upstream unavailable</html>"), json!({})).await?;
    insta::assert_snapshot!(chain, @"the response is not JSON: <html>upstream unavailable</html>: caused by: expected value at line 1 column 1");
    Ok(())
}

#[tokio::test]
async fn a_response_without_content_is_an_error() -> Result {
    let chain = error(
        Canned::ok(r#"{"choices": [{"message": {"role": "assistant"}}]}"#),
        json!({}),
    )
    .await?;
    insta::assert_snapshot!(chain, @"the response has no `choices[0].message.content`");
    Ok(())
}

#[tokio::test]
async fn content_that_is_not_the_verdict_json_is_an_error() -> Result {
    let chain = error(Canned::ok(completion("Looks good to me!", None)), json!({})).await?;
    insta::assert_snapshot!(chain, @"the model's reply is not a JSON object: Looks good to me!");
    let chain = error(
        Canned::ok(completion(r#"{"summary": "fine"}"#, None)),
        json!({}),
    )
    .await?;
    insta::assert_snapshot!(chain, @r#"the model's reply has no `verdict`: {"summary": "fine"}"#);
    Ok(())
}

#[tokio::test]
async fn an_invalid_verdict_is_an_error() -> Result {
    let chain = error(
        Canned::ok(completion(
            r#"{"verdict": "passed", "summary": "fine"}"#,
            None,
        )),
        json!({}),
    )
    .await?;
    insta::assert_snapshot!(chain, @r#"the model's reply has verdict "passed"; expected `pass` or `fail`"#);
    Ok(())
}

#[tokio::test]
async fn http_500_is_an_error_with_the_status_and_the_body() -> Result {
    let chain = error(
        Canned::new(500, r#"{"error": {"message": "The server had an error"}}"#),
        json!({}),
    )
    .await?;
    insta::assert_snapshot!(chain, @r#"`{base_url}/chat/completions` answered HTTP 500 Internal Server Error: {"error": {"message": "The server had an error"}}"#);
    Ok(())
}

#[tokio::test]
async fn a_key_echoed_back_by_the_server_is_redacted() -> Result {
    let body = format!(r#"{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}"#);
    let chain = error(Canned::new(401, body), json!({})).await?;
    insta::assert_snapshot!(chain, @r#"`{base_url}/chat/completions` answered HTTP 401 Unauthorized: {"error": {"message": "Incorrect API key provided: <redacted>"}}"#);
    Ok(())
}

#[tokio::test]
async fn a_slow_endpoint_times_out_as_an_error() -> Result {
    let started = Instant::now();
    let chain = error(
        Canned::ok(completion(r#"{"verdict":"pass"}"#, None)).after(Duration::from_secs(3)),
        json!({"timeout_secs": 1}),
    )
    .await?;
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    insta::assert_snapshot!(chain, @"the request to `{base_url}/chat/completions` timed out after 1s (`timeout_secs`)");
    Ok(())
}

#[tokio::test]
async fn a_refused_connection_is_an_error() -> Result {
    let url = closed_port_url();
    let err = judge(&url, json!({}))
        .evaluate(&context())
        .await
        .err()
        .ok_or("nothing listens")?;
    let chain = error_chain(&err).replace(&url, "{base_url}");
    assert!(
        chain.starts_with("could not reach `{base_url}/chat/completions`: caused by: "),
        "{chain}"
    );
    Ok(())
}

#[tokio::test]
async fn an_unset_key_variable_is_an_error_naming_it_and_nothing_is_sent() -> Result {
    // Through the registry, so the key is read from the process environment,
    // from a variable no one sets.
    let registry = orcho_llm_judge::register(GateRegistry::builder())?.build();
    let server = Server::start(Canned::ok(completion(r#"{"verdict":"pass"}"#, None)));
    let mut spec = spec(&server.base_url, json!({}));
    spec.config["api_key_env"] = json!("ORCHO_LLM_JUDGE_TEST_NEVER_SET_3F9C");
    let gate = registry.build(&spec)?;
    let err = gate
        .evaluate(&context())
        .await
        .err()
        .ok_or("no key, no verdict")?;
    insta::assert_snapshot!(error_chain(&err), @"the API key variable `ORCHO_LLM_JUDGE_TEST_NEVER_SET_3F9C` is not set; set it, or name another variable in `api_key_env`");
    assert!(!server.received_any());
    Ok(())
}

#[tokio::test]
async fn the_factory_refuses_unknown_and_missing_keys() -> Result {
    let registry = orcho_llm_judge::register(GateRegistry::builtins_builder())?.build();
    let mut typo = spec("http://127.0.0.1:9/v1", json!({"timeout": 30}));
    let err = registry.build(&typo).err().ok_or("a typo must not load")?;
    insta::assert_snapshot!(error_chain(&err), @"invalid configuration for gate `review` (uses `llm_judge`): caused by: unknown field `timeout`, expected one of `base_url`, `model`, `api_key_env`, `instructions`, `timeout_secs`, `price_per_1k_input_tokens_usd`, `price_per_1k_output_tokens_usd`");

    typo.config = json!({"base_url": "http://127.0.0.1:9/v1"});
    let err = registry.build(&typo).err().ok_or("`model` is required")?;
    insta::assert_snapshot!(error_chain(&err), @"invalid configuration for gate `review` (uses `llm_judge`): caused by: missing field `model`");

    let again = orcho_llm_judge::register(
        GateRegistry::builder().register("llm_judge", orcho_llm_judge::LlmJudge::from_spec)?,
    );
    assert!(
        again.is_err(),
        "registering twice must be said with `shadow`"
    );
    Ok(())
}

#[tokio::test]
async fn cancellation_skips_without_waiting_for_the_model() -> Result {
    let server = Server::start(
        Canned::ok(completion(r#"{"verdict":"pass"}"#, None)).after(Duration::from_millis(1500)),
    );
    let gate = judge(&server.base_url, json!({"timeout_secs": 30}));
    let ctx = context();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let result = gate.evaluate(&ctx).await?;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        result.outcome,
        GateOutcome::Skipped {
            reason: "cancelled before the model answered".into()
        }
    );

    // Already cancelled: no request at all.
    let idle = Server::start(Canned::ok(completion(r#"{"verdict":"pass"}"#, None)));
    let result = judge(&idle.base_url, json!({})).evaluate(&ctx).await?;
    assert_eq!(result.outcome.as_str(), "skipped");
    assert!(!idle.received_any());
    Ok(())
}

#[tokio::test]
async fn through_the_scheduler_a_bad_answer_halts_and_a_verdict_counts() -> Result {
    let lock_dir = concat!(env!("CARGO_TARGET_TMPDIR"), "/llm-judge-locks");
    let scheduler = Scheduler::builder(lock_dir).build();
    let ctx = context();

    let broken = Server::start(Canned::ok("not json"));
    let gates = [ScheduledGate::new(
        judge(&broken.base_url, json!({})).into_dyn(),
        FailStrategy::Halt,
    )];
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    let GateOutcome::Errored { error } = &phase.records[0].result.outcome else {
        panic!(
            "a bad answer is errored: {:?}",
            phase.records[0].result.outcome
        )
    };
    assert!(error.starts_with("the response is not JSON"), "{error}");
    assert_eq!(phase.effect.as_str(), "halt");

    let reply = r#"{"verdict":"fail","summary":"no","findings":[{"severity":"medium","message":"missing docs"}]}"#;
    let failing = Server::start(Canned::ok(completion(reply, Some((100, 10)))));
    let gates = [ScheduledGate::new(
        judge(
            &failing.base_url,
            json!({"price_per_1k_input_tokens_usd": 1.0, "price_per_1k_output_tokens_usd": 1.0}),
        )
        .into_dyn(),
        FailStrategy::FeedIntoNext,
    )];
    let phase = scheduler.run(&ctx, &gates, |_| Ok(())).await?;
    let PhaseEffect::FeedIntoNext { failures } = phase.effect else {
        panic!("a fail verdict feeds into the next attempt")
    };
    assert_eq!(failures[0].findings[0].title, "missing docs");
    assert_eq!(phase.cost.tokens, Some(Tokens::new(100, 10)));
    assert!(
        phase
            .cost
            .usd
            .is_some_and(|usd| (usd.get() - 0.11).abs() < 1e-12)
    );
    Ok(())
}
