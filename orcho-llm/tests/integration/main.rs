//! Integration tests of `orcho-llm`: the judge and the advisor against
//! OpenAI-compatible and Anthropic-compatible servers on 127.0.0.1, each
//! started by its test, asserting the request each provider receives.

mod advisor;
mod judge;
mod server;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> =
    std::result::Result<T, E>;

use std::env::VarError;

use orcho_llm::{Client, LlmConfig};

/// The variable the test clients read their key from.
pub(crate) const KEY_VAR: &str = "ORCHO_LLM_TEST_KEY";
/// The key the test clients send.
pub(crate) const KEY: &str = "sk-test-0123456789abcdef";

/// A client for `provider` at `base_url`, with `extra` merged into its
/// configuration, whose key comes from a lookup that knows [`KEY_VAR`]
/// only (setting a variable is `unsafe` in edition 2024, and would race
/// with tests running in parallel).
pub(crate) fn client(provider: &str, base_url: &str, extra: serde_json::Value) -> Client {
    let mut config = serde_json::json!({
        "provider": provider,
        "base_url": base_url,
        "model": "test-model",
        "api_key_env": KEY_VAR,
    });
    if let (Some(config), serde_json::Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    Client::new(LlmConfig::from_value(&config).expect("a valid configuration")).with_api_key_lookup(
        |var| {
            if var == KEY_VAR {
                Ok(KEY.to_owned())
            } else {
                Err(VarError::NotPresent)
            }
        },
    )
}

/// An OpenAI chat-completions body whose message content is `content`.
pub(crate) fn openai(content: &str, usage: Option<(u64, u64)>) -> String {
    let mut body = serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    });
    if let Some((prompt, completion)) = usage {
        body["usage"] =
            serde_json::json!({"prompt_tokens": prompt, "completion_tokens": completion});
    }
    body.to_string()
}

/// An Anthropic Messages body whose tool call carries `input`.
pub(crate) fn anthropic(input: &serde_json::Value, usage: (u64, u64)) -> String {
    serde_json::json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "advice", "input": input}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": usage.0, "output_tokens": usage.1},
    })
    .to_string()
}
