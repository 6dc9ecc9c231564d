//! The gate's `with:` block.

use std::time::Duration;

use orcho_core::{Tokens, Usd};
use orcho_gates::GateError;
use serde::Deserialize;

use crate::error::JudgeError;

/// The variable the API key is read from when `api_key_env` is not given.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";

/// How many seconds a request may take when `timeout_secs` is not given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The `with:` block of an `llm_judge` gate.
///
/// Unknown keys are refused, so a typo is a profile load error instead of a
/// silently ignored setting.
///
/// ```yaml
/// with:
///   base_url: https://api.openai.com/v1   # required; `/chat/completions` is appended
///   model: gpt-4o-mini                    # required
///   api_key_env: OPENAI_API_KEY           # the variable holding the key (the default)
///   instructions: Fail the phase if it weakens input validation.
///   timeout_secs: 60                      # the default
///   price_per_1k_input_tokens_usd: 0.00015
///   price_per_1k_output_tokens_usd: 0.0006
/// ```
///
/// ```
/// use orcho_llm_judge::LlmJudgeConfig;
///
/// let config = LlmJudgeConfig::from_value(&serde_json::json!({
///     "base_url": "http://127.0.0.1:8080/v1/",
///     "model": "local-judge",
/// }))?;
/// assert_eq!(config.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
/// assert_eq!(config.api_key_env, "OPENAI_API_KEY");
/// assert_eq!(config.timeout_secs, 60);
///
/// let typo = LlmJudgeConfig::from_value(&serde_json::json!({
///     "base_url": "http://127.0.0.1:8080/v1", "model": "m", "modle": "m",
/// }));
/// assert!(typo.unwrap_err().to_string().starts_with("unknown field `modle`"));
/// # Ok::<(), orcho_gates::GateError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LlmJudgeConfig {
    /// The API root of an OpenAI-compatible server, such as
    /// `https://api.openai.com/v1`; the gate posts to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model to ask.
    pub model: String,
    /// The name of the environment variable that holds the API key (the key
    /// itself never goes into a profile). Default: `OPENAI_API_KEY`.
    #[serde(default = "default_api_key_env")]
    pub api_key_env: String,
    /// What to judge, in words, for the model: the gate's own criteria.
    #[serde(default)]
    pub instructions: Option<String>,
    /// How long one request may take, in seconds, from connecting to the
    /// last byte of the answer. Default: 60.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// The price of 1000 input (prompt) tokens, to report what a verdict
    /// cost. Give both prices or neither.
    #[serde(default)]
    pub price_per_1k_input_tokens_usd: Option<Usd>,
    /// The price of 1000 output (completion) tokens. Give both prices or
    /// neither.
    #[serde(default)]
    pub price_per_1k_output_tokens_usd: Option<Usd>,
}

fn default_api_key_env() -> String {
    DEFAULT_API_KEY_ENV.to_owned()
}

fn default_timeout_secs() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

impl LlmJudgeConfig {
    /// Reads and validates a `with:` block.
    ///
    /// # Errors
    ///
    /// When the block is missing (`null`), has unknown keys or misses
    /// `base_url` or `model`, or when a value is unusable: a `base_url`
    /// that is not `http://` or `https://`, an empty `model` or
    /// `api_key_env`, a `timeout_secs` of 0, a negative price, or only one of
    /// the two prices.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, GateError> {
        if value.is_null() {
            return Err(GateError::msg(
                "`llm_judge` needs a `with:` block with at least `base_url` and `model`",
            ));
        }
        let config: Self = serde_json::from_value(value.clone()).map_err(GateError::new)?;
        config.validate().map_err(GateError::new)?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), JudgeError> {
        let problem = |key: &'static str, problem: &str| JudgeError::Config {
            key,
            problem: problem.to_owned(),
        };
        let base = self.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(JudgeError::Config {
                key: "base_url",
                problem: format!(
                    "must start with `http://` or `https://`, and `{}` does not",
                    crate::protocol::clip(base, 80)
                ),
            });
        }
        if self.model.trim().is_empty() {
            return Err(problem("model", "must not be empty"));
        }
        let var = &self.api_key_env;
        if var.is_empty() || var.contains(['=', '\0']) {
            return Err(problem(
                "api_key_env",
                "must be the name of an environment variable (not empty, no `=`)",
            ));
        }
        if self.timeout_secs == 0 {
            return Err(problem("timeout_secs", "must be at least 1"));
        }
        match (
            self.price_per_1k_input_tokens_usd,
            self.price_per_1k_output_tokens_usd,
        ) {
            (Some(_), None) => Err(problem(
                "price_per_1k_input_tokens_usd",
                "is set without `price_per_1k_output_tokens_usd`; give both prices or neither",
            )),
            (None, Some(_)) => Err(problem(
                "price_per_1k_output_tokens_usd",
                "is set without `price_per_1k_input_tokens_usd`; give both prices or neither",
            )),
            (Some(_), Some(_)) | (None, None) => Ok(()),
        }
    }

    /// The URL the gate posts to: `base_url` without trailing slashes, then
    /// `/chat/completions`.
    pub fn endpoint(&self) -> String {
        format!(
            "{}/chat/completions",
            self.base_url.trim().trim_end_matches('/')
        )
    }

    /// The request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }

    /// What `tokens` cost at the configured prices; `None` when no prices
    /// are configured.
    ///
    /// # Errors
    ///
    /// When the amount is not a valid [`Usd`] (it overflowed).
    pub(crate) fn cost(&self, tokens: Tokens) -> Result<Option<Usd>, JudgeError> {
        let (Some(input), Some(output)) = (
            self.price_per_1k_input_tokens_usd,
            self.price_per_1k_output_tokens_usd,
        ) else {
            return Ok(None);
        };
        // Token counts stay far below 2^53, so `as f64` is exact.
        let amount = input.get() * (tokens.input as f64) / 1000.0
            + output.get() * (tokens.output as f64) / 1000.0;
        Usd::new(amount)
            .map(Some)
            .map_err(|source| JudgeError::Cost {
                input: tokens.input,
                output: tokens.output,
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(value: &serde_json::Value) -> String {
        orcho_core::error_chain(&LlmJudgeConfig::from_value(value).unwrap_err())
    }

    #[test]
    fn defaults() {
        let config =
            LlmJudgeConfig::from_value(&json!({"base_url": "https://h/v1", "model": "m"})).unwrap();
        assert_eq!(config.api_key_env, DEFAULT_API_KEY_ENV);
        assert_eq!(config.timeout(), Duration::from_secs(60));
        assert_eq!(config.instructions, None);
        assert_eq!(config.endpoint(), "https://h/v1/chat/completions");
        assert_eq!(config.cost(Tokens::new(1000, 1000)).unwrap(), None);
    }

    #[test]
    fn refused_configurations() {
        insta::assert_snapshot!(err(&json!(null)), @"`llm_judge` needs a `with:` block with at least `base_url` and `model`");
        insta::assert_snapshot!(err(&json!({"model": "m"})), @"missing field `base_url`");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "temperature": 0})), @"unknown field `temperature`, expected one of `base_url`, `model`, `api_key_env`, `instructions`, `timeout_secs`, `price_per_1k_input_tokens_usd`, `price_per_1k_output_tokens_usd`");
        insta::assert_snapshot!(err(&json!({"base_url": "api.openai.com", "model": "m"})), @"`base_url` must start with `http://` or `https://`, and `api.openai.com` does not");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": " "})), @"`model` must not be empty");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "api_key_env": "A=B"})), @"`api_key_env` must be the name of an environment variable (not empty, no `=`)");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "timeout_secs": 0})), @"`timeout_secs` must be at least 1");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "price_per_1k_input_tokens_usd": -1.0, "price_per_1k_output_tokens_usd": 1.0})), @"invalid amount in USD `-1`: expected a finite, non-negative number");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "price_per_1k_output_tokens_usd": 1.0})), @"`price_per_1k_output_tokens_usd` is set without `price_per_1k_input_tokens_usd`; give both prices or neither");
    }

    #[test]
    fn cost_at_configured_prices() {
        let config = LlmJudgeConfig::from_value(&json!({
            "base_url": "https://h", "model": "m",
            "price_per_1k_input_tokens_usd": 0.01, "price_per_1k_output_tokens_usd": 0.03,
        }))
        .unwrap();
        let usd = config.cost(Tokens::new(1200, 80)).unwrap().unwrap();
        assert!((usd.get() - 0.0144).abs() < 1e-12, "{usd}");
    }
}
