//! The advisor against OpenAI-compatible and Anthropic-compatible servers:
//! the request each provider receives, retries, and every way an answer
//! can be unusable.

use std::{sync::Arc, time::Duration};

use orcho_core::{Finding, Severity, Verdict};
use orcho_handoff::{
    AdviceRequest, Advisor, HandoffAction,
    autopilot::{Autopilot, AutopilotOutcome, AutopilotPolicy},
    handoff::{HandoffSpec, HandoffStore, HandoffTrigger, PhaseHandoff},
};
use orcho_llm::{LlmAdvisor, LlmError};
use serde_json::{Value, json};

use crate::{
    KEY, Result, anthropic, client, openai,
    server::{Canned, Server},
};

fn spec() -> HandoffSpec {
    HandoffSpec::new(
        "run-1".parse().expect("run"),
        "implement".parse().expect("phase"),
        Verdict::Rejected,
    )
    .with_trigger(HandoffTrigger::Gate("tests".parse().expect("gate")))
    .with_findings(vec![
        Finding::new("tests", Severity::High, "`test` failed: exited with code 1")
            .with_file("src/parse.rs")
            .with_detail("FAILED tests/test_parse.py::test_empty - IndexError"),
    ])
}

fn handoff() -> PhaseHandoff {
    PhaseHandoff::new(
        "0001-implement".parse().expect("handoff id"),
        spec(),
        "2026-11-23T12:00:00Z".parse().expect("time"),
    )
}

fn advice(action: &str, confidence: f64, feedback: Option<&str>) -> Value {
    json!({
        "recommended_action": action,
        "confidence": confidence,
        "rationale": "the failure names one function",
        "risks": ["the fix may hide a second bug"],
        "retry_feedback": feedback,
        "expected_files": ["src/parse.rs"],
    })
}

fn advisor(provider: &str, base_url: &str, extra: Value) -> LlmAdvisor {
    LlmAdvisor::new("test-advisor", client(provider, base_url, extra))
}

async fn ask(advisor: &LlmAdvisor) -> std::result::Result<orcho_handoff::Advice, LlmError> {
    let h = handoff();
    let request = AdviceRequest::new(
        &h,
        "collected 3 items\nE IndexError: list index out of range",
        &[],
    )
    .with_context("The readiness summary: `test` is missing (re-run).");
    advisor.advise(&request).await.map_err(|e| {
        // The plugin's own error, to match on.
        let inner = e.inner();
        match inner.downcast_ref::<LlmError>() {
            Some(LlmError::GaveUp { attempts, why, .. }) => LlmError::GaveUp {
                attempts: *attempts,
                why: why.clone(),
                last: Box::new(LlmError::Cancelled),
            },
            _ => LlmError::Task(inner.to_string()),
        }
    })
}

#[tokio::test]
async fn openai_advice_is_asked_for_with_a_schema_and_read_back() -> Result {
    let body = advice(
        "retry_feedback",
        0.9,
        Some("return an empty list for empty input"),
    );
    let server = Server::start(Canned::ok(openai(&body.to_string(), Some((2000, 100)))));
    let advisor = advisor(
        "openai",
        &server.base_url,
        json!({"input_usd_per_million": 1.0, "output_usd_per_million": 10.0}),
    );
    let advice = ask(&advisor).await?;
    assert_eq!(advice.recommended_action, HandoffAction::RetryFeedback);
    assert_eq!(
        advice.retry_feedback.as_deref(),
        Some("return an empty list for empty input")
    );
    let usage = advice.usage.ok_or("usage")?;
    assert_eq!(usage.tokens.map(|t| t.total()), Some(2100));
    assert!((usage.usd.ok_or("cost")?.get() - 0.003).abs() < 1e-12);

    let request = server.request();
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let sent: Value = serde_json::from_str(&request.body)?;
    assert_eq!(sent["model"], "test-model");
    let format = &sent["response_format"]["json_schema"];
    assert_eq!(format["strict"], true);
    // The enum of actions is exactly what the handoff offers.
    assert_eq!(
        format["schema"]["properties"]["recommended_action"]["enum"],
        json!(["continue", "retry_feedback", "continue_with_waiver", "halt"])
    );
    let user = sent["messages"][1]["content"]
        .as_str()
        .ok_or("user message")?;
    assert!(
        user.contains("Phase `implement` (round 1) paused"),
        "{user}"
    );
    assert!(
        user.contains("IndexError"),
        "the finding's detail and the output: {user}"
    );
    assert!(
        user.contains("`test` is missing (re-run)"),
        "the host's context: {user}"
    );
    assert!(!request.body.contains(KEY), "the key is only in the header");
    Ok(())
}

#[tokio::test]
async fn anthropic_advice_comes_through_a_forced_tool_call() -> Result {
    let body = anthropic(&advice("continue_with_waiver", 0.7, None), (800, 60));
    let server = Server::start(Canned::ok(body));
    let advisor = advisor("anthropic", &server.base_url, json!({}));
    let advice = ask(&advisor).await?;
    assert_eq!(advice.recommended_action, HandoffAction::ContinueWithWaiver);
    let request = server.request();
    assert_eq!(request.request_line, "POST /v1/messages HTTP/1.1");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let sent: Value = serde_json::from_str(&request.body)?;
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "advice"})
    );
    assert_eq!(
        sent["tools"][0]["input_schema"]["required"][0],
        "recommended_action"
    );
    assert!(
        sent["system"]
            .as_str()
            .is_some_and(|s| s.contains("never decide"))
    );
    Ok(())
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after_and_then_succeeds() -> Result {
    let ok = openai(&advice("halt", 0.8, None).to_string(), None);
    let server = Server::script(vec![
        Canned::new(429, r#"{"error":"rate limited"}"#).retry_after(0),
        Canned::ok(ok),
    ]);
    let advice = ask(&advisor("openai", &server.base_url, json!({}))).await?;
    assert_eq!(advice.recommended_action, HandoffAction::Halt);
    server.request();
    server.request();
    Ok(())
}

#[tokio::test]
async fn unusable_answers_are_errors_never_a_guess() -> Result {
    let cases: Vec<(Canned, Value, &str)> = vec![
        // A server error, no retries left.
        (
            Canned::new(500, r#"{"error":"boom"}"#),
            json!({"max_retries": 0}),
            "gave up after 1 attempt(s) (`max_retries` is 0)",
        ),
        // Not JSON at all.
        (Canned::ok("<html>bad gateway</html>"), json!({}), "the response is not JSON"),
        // A refusal.
        (
            Canned::ok(json!({"choices": [{"message": {"content": null, "refusal": "I can't help with that."}}]}).to_string()),
            json!({}),
            "the model refused: I can't help with that.",
        ),
        // Prose instead of the document.
        (Canned::ok(openai("You should retry.", None)), json!({}), "malformed advice"),
        // An action the handoff does not offer.
        (
            Canned::ok(openai(&advice("rollback", 0.9, None).to_string(), None)),
            json!({}),
            "malformed advice: `recommended_action`",
        ),
        // Rejected credentials: not retried.
        (Canned::new(401, r#"{"error":"bad key"}"#), json!({}), "answered HTTP 401"),
    ];
    for (canned, extra, expected) in cases {
        let server = Server::start(canned);
        let advisor = advisor("openai", &server.base_url, extra);
        let h = handoff();
        let error = advisor
            .advise(&AdviceRequest::new(&h, "", &[]))
            .await
            .expect_err("an unusable answer");
        let chain = orcho_core::error_chain(&error);
        assert!(chain.contains(expected), "{expected}: {chain}");
        assert!(!chain.contains(KEY), "{chain}");
    }
    Ok(())
}

#[tokio::test]
async fn a_slow_server_times_out_within_the_deadline() -> Result {
    // The server would answer long after the client's timeout, so an
    // answer before it shows the timeout fired, however loaded the machine.
    let answer_after = Duration::from_secs(30);
    let server = Server::start(Canned::ok("{}").after(answer_after));
    let advisor = advisor(
        "openai",
        &server.base_url,
        json!({"timeout_secs": 1, "max_retries": 0}),
    );
    let h = handoff();
    let started = std::time::Instant::now();
    let error = advisor
        .advise(&AdviceRequest::new(&h, "", &[]))
        .await
        .expect_err("a timeout");
    let chain = orcho_core::error_chain(&error);
    assert!(chain.contains("timed out after 1s"), "{chain}");
    assert!(started.elapsed() < answer_after, "{:?}", started.elapsed());
    Ok(())
}

#[tokio::test]
async fn the_autopilot_stops_on_low_confidence_a_destructive_step_and_a_waiver() -> Result {
    let cases = [
        (
            advice("retry_feedback", 0.2, Some("handle empty input")),
            "low_confidence",
        ),
        (
            advice(
                "retry_feedback",
                0.9,
                Some("run `git clean -xdf` and try again"),
            ),
            "destructive_action",
        ),
        (
            advice("continue_with_waiver", 0.95, None),
            "waiver_recommended",
        ),
    ];
    for (body, reason) in cases {
        let dir = tempfile::tempdir()?;
        let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
        let store = HandoffStore::in_dir(
            root.join(".orcho"),
            Arc::new(orcho_core::FixedClock::new("2026-11-23T12:00:00Z".parse()?)),
        );
        let run = "run-1".parse()?;
        let opened = store.open(spec())?;
        let server = Server::start(Canned::ok(openai(&body.to_string(), None)));
        let pilot = Autopilot::new(
            store.clone(),
            Arc::new(advisor("openai", &server.base_url, json!({}))),
            AutopilotPolicy::builder().build()?,
        );
        let outcome = pilot.run(&run, opened.id(), "").await?;
        let AutopilotOutcome::Stopped { reason: stop, .. } = outcome else {
            panic!("{reason}: the autopilot must stop, got {outcome:?}");
        };
        assert_eq!(stop.code(), reason, "{stop}");
        // Nothing was decided: the handoff stays open for an operator.
        assert!(store.recorded_decision(&run, opened.id())?.is_none());
    }
    Ok(())
}
