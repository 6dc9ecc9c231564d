//! The two wire formats: the request each provider is sent and where its
//! answer, its usage and a refusal are in the response. Pure functions.

use orcho_core::Tokens;
use serde_json::{Value, json};

use crate::{LlmConfig, Provider, error::LlmError, text::excerpt};

/// How many output tokens an Anthropic answer may take.
const ANTHROPIC_MAX_TOKENS: u32 = 4096;
/// The Messages API version the request is written for.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One question for the model: instructions, the material, and the JSON
/// schema the answer must match.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// A short name for the answer's schema (`advice`, `verdict`).
    pub name: &'a str,
    /// What the model is and what it must answer.
    pub system: &'a str,
    /// The material.
    pub user: &'a str,
    /// The JSON schema of the answer.
    pub schema: &'a Value,
}

/// The request body for `ask`.
pub(crate) fn request_body(config: &LlmConfig, ask: &Ask<'_>) -> Value {
    match config.provider {
        Provider::Openai => {
            let response_format = if config.json_schema {
                json!({
                    "type": "json_schema",
                    "json_schema": {"name": ask.name, "strict": true, "schema": ask.schema},
                })
            } else {
                json!({"type": "json_object"})
            };
            json!({
                "model": config.model,
                "messages": [
                    {"role": "system", "content": ask.system},
                    {"role": "user", "content": ask.user},
                ],
                "response_format": response_format,
            })
        }
        // Structured output through a tool the model must call, whose
        // input schema is the answer's.
        Provider::Anthropic => json!({
            "model": config.model,
            "max_tokens": ANTHROPIC_MAX_TOKENS,
            "system": ask.system,
            "messages": [{"role": "user", "content": ask.user}],
            "tools": [{
                "name": ask.name,
                "description": "Record your answer. Call this exactly once.",
                "input_schema": ask.schema,
            }],
            "tool_choice": {"type": "tool", "name": ask.name},
        }),
    }
}

/// What a response says: the answer's text (a JSON document, still to be
/// validated) and the tokens used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) tokens: Option<Tokens>,
}

/// Reads a 2xx response body.
pub(crate) fn parse_reply(provider: Provider, body: &str) -> Result<Reply, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|_| LlmError::BodyNotJson {
        excerpt: excerpt(body),
    })?;
    // The tokens a response reports in `usage`, under the provider's names
    // for the input and the output.
    let tokens = |input: &str, output: &str| {
        let usage = &value["usage"];
        Some(Tokens::new(usage[input].as_u64()?, usage[output].as_u64()?))
    };
    match provider {
        Provider::Openai => {
            let message = &value["choices"][0]["message"];
            if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.is_empty()) {
                return Err(LlmError::Refused {
                    refusal: excerpt(refusal),
                });
            }
            let Some(text) = message["content"].as_str() else {
                return Err(LlmError::NoAnswer {
                    where_: "choices[0].message.content",
                    excerpt: excerpt(body),
                });
            };
            Ok(Reply {
                text: text.to_owned(),
                tokens: tokens("prompt_tokens", "completion_tokens"),
            })
        }
        Provider::Anthropic => {
            let blocks = value["content"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let said = || {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            if value["stop_reason"] == "refusal" {
                return Err(LlmError::Refused {
                    refusal: excerpt(&said()),
                });
            }
            let tokens = tokens("input_tokens", "output_tokens");
            let text = match blocks.iter().find(|b| b["type"] == "tool_use") {
                Some(tool) if tool["input"].is_object() => tool["input"].to_string(),
                // No tool call: a text answer may still be the document.
                _ if !said().trim().is_empty() => said(),
                _ => {
                    return Err(LlmError::NoAnswer {
                        where_: "a `tool_use` block in `content`",
                        excerpt: excerpt(body),
                    });
                }
            };
            Ok(Reply { text, tokens })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(provider: &str, json_schema: bool) -> LlmConfig {
        LlmConfig::from_value(&json!({
            "provider": provider, "base_url": "http://h/v1", "model": "m", "json_schema": json_schema,
        }))
        .unwrap()
    }

    #[test]
    fn each_provider_is_asked_for_structured_output() {
        let schema = json!({"type": "object"});
        let ask = Ask {
            name: "advice",
            system: "sys",
            user: "usr",
            schema: &schema,
        };
        let openai = request_body(&config("openai", true), &ask);
        assert_eq!(openai["response_format"]["type"], "json_schema");
        assert_eq!(openai["response_format"]["json_schema"]["strict"], true);
        assert_eq!(openai["messages"][0]["role"], "system");
        let plain = request_body(&config("openai", false), &ask);
        assert_eq!(plain["response_format"], json!({"type": "json_object"}));
        let anthropic = request_body(&config("anthropic", true), &ask);
        assert_eq!(anthropic["system"], "sys");
        assert_eq!(anthropic["tools"][0]["input_schema"], schema);
        assert_eq!(
            anthropic["tool_choice"],
            json!({"type": "tool", "name": "advice"})
        );
    }

    #[test]
    fn replies_refusals_and_missing_answers() {
        let ok = r#"{"choices":[{"message":{"content":"{\"a\":1}"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
        assert_eq!(
            parse_reply(Provider::Openai, ok).unwrap(),
            Reply {
                text: r#"{"a":1}"#.into(),
                tokens: Some(Tokens::new(5, 2))
            }
        );
        let refused =
            r#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."}}]}"#;
        insta::assert_snapshot!(parse_reply(Provider::Openai, refused).unwrap_err(), @"the model refused: I can't help with that.");
        insta::assert_snapshot!(parse_reply(Provider::Openai, "<html>bad gateway</html>").unwrap_err(), @"the response is not JSON: <html>bad gateway</html>");
        insta::assert_snapshot!(parse_reply(Provider::Openai, r#"{"choices":[]}"#).unwrap_err(), @r#"the response has no answer (choices[0].message.content): {"choices":[]}"#);

        let tool = r#"{"content":[{"type":"text","text":"Here."},{"type":"tool_use","name":"advice","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":9,"output_tokens":3}}"#;
        assert_eq!(
            parse_reply(Provider::Anthropic, tool).unwrap(),
            Reply {
                text: r#"{"a":1}"#.into(),
                tokens: Some(Tokens::new(9, 3))
            }
        );
        let refusal = r#"{"content":[{"type":"text","text":"No."}],"stop_reason":"refusal"}"#;
        insta::assert_snapshot!(parse_reply(Provider::Anthropic, refusal).unwrap_err(), @"the model refused: No.");
    }
}
