//! Integration tests of `orcho-llm-judge`: the gate against a canned
//! chat-completions server on 127.0.0.1, through the registry and the
//! scheduler as a host uses it.

mod judge;
mod server;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

use std::env::VarError;

use orcho_core::{Finding, Severity, Verdict};
use orcho_gates::{GateContext, GateSpec, PhaseOutcome};
use orcho_llm_judge::LlmJudge;

/// The variable the test gates read their key from.
pub(crate) const KEY_VAR: &str = "ORCHO_LLM_JUDGE_TEST_KEY";
/// The key the test gates send.
pub(crate) const KEY: &str = "sk-test-0123456789abcdef";

/// A context for attempt 2 of `implement`, with a summary and a finding.
pub(crate) fn context() -> GateContext {
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

/// A spec for a gate `review` using `llm_judge` against `base_url`, with
/// `extra` merged into its `with:` block.
pub(crate) fn spec(base_url: &str, extra: serde_json::Value) -> GateSpec {
    let mut config = serde_json::json!({
        "base_url": base_url,
        "model": "judge-model",
        "api_key_env": KEY_VAR,
    });
    if let (Some(config), serde_json::Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    GateSpec::new(
        "review".parse().expect("gate name"),
        "llm_judge".parse().expect("gate name"),
    )
    .with_config(config)
}

/// The gate of [`spec`], whose key comes from a lookup that knows
/// [`KEY_VAR`] only.
///
/// Why a lookup and not the process environment: setting a variable is
/// `unsafe` in edition 2024 (the workspace forbids `unsafe`), and it would
/// race with the tests running in parallel. The environment path itself is
/// covered by the test of an unset variable, which needs no setting.
pub(crate) fn judge(base_url: &str, extra: serde_json::Value) -> LlmJudge {
    LlmJudge::try_from_spec(&spec(base_url, extra))
        .expect("a valid configuration")
        .with_api_key_lookup(|var| {
            if var == KEY_VAR {
                Ok(KEY.to_owned())
            } else {
                Err(VarError::NotPresent)
            }
        })
}

/// A chat-completions body whose message content is `content`.
pub(crate) fn completion(content: &str, usage: Option<(u64, u64)>) -> String {
    let mut body = serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "judge-model",
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": content},
        }],
    });
    if let Some((prompt, completion)) = usage {
        body["usage"] = serde_json::json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        });
    }
    body.to_string()
}
