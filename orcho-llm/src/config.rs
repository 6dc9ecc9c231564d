//! Which model, where, with which key and prices: the judge's `with:` block
//! and the profile's `advisor:` block.

use std::time::Duration;

use orcho_core::{Tokens, Usd};
use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// How many seconds one request may take when `timeout_secs` is not given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// How many seconds all attempts together may take when `deadline_secs` is
/// not given.
pub const DEFAULT_DEADLINE_SECS: u64 = 180;
/// How many times a request is retried after a 429 or a 5xx answer when
/// `max_retries` is not given.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// Which API the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI's chat completions (`{base_url}/chat/completions`, a bearer
    /// key): OpenAI, OpenRouter, vLLM, llama.cpp's server, Ollama, LiteLLM …
    #[default]
    Openai,
    /// Anthropic's Messages API (`{base_url}/messages`, an `x-api-key`).
    Anthropic,
}

impl Provider {
    /// The variable the key is read from when `api_key_env` is not given.
    pub fn default_api_key_env(self) -> &'static str {
        match self {
            Self::Openai => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The path appended to `base_url`.
    pub fn path(self) -> &'static str {
        match self {
            Self::Openai => "/chat/completions",
            Self::Anthropic => "/messages",
        }
    }
}

/// A model and how to reach it, for the judge gate (`with:`) and the
/// advisor (the profile's `advisor:` block). Unknown keys are refused.
///
/// ```yaml
/// provider: openai                 # or anthropic
/// base_url: https://api.openai.com/v1
/// model: gpt-4o-mini
/// api_key_env: OPENAI_API_KEY      # the variable holding the key (default per provider)
/// instructions: Fail the phase if it weakens input validation.
/// timeout_secs: 60                 # one request
/// deadline_secs: 180               # every attempt together
/// max_retries: 3                   # after a 429 or a 5xx answer
/// input_usd_per_million: 0.15      # with the next one, to report cost
/// output_usd_per_million: 0.60
/// json_schema: true                # ask for structured output (OpenAI's `json_schema`)
/// ```
///
/// ```
/// use orcho_llm::{LlmConfig, Provider};
///
/// let config = LlmConfig::from_value(&serde_json::json!({
///     "base_url": "http://127.0.0.1:8080/v1/", "model": "local",
/// }))?;
/// assert_eq!(config.provider, Provider::Openai);
/// assert_eq!(config.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
/// assert_eq!(config.api_key_env(), "OPENAI_API_KEY");
/// # Ok::<(), orcho_llm::LlmError>(())
/// ```
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LlmConfig {
    /// Which API the endpoint speaks.
    #[serde(default)]
    pub provider: Provider,
    /// The API root, such as `https://api.openai.com/v1` or
    /// `https://api.anthropic.com/v1`.
    pub base_url: String,
    /// The model to ask.
    pub model: String,
    /// The environment variable holding the API key (the key never goes
    /// into a profile). Default: `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`.
    pub api_key_env: Option<String>,
    /// Criteria or guidance in words, added to the prompt.
    pub instructions: Option<String>,
    /// How long one request may take, connecting to last byte.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// How long every attempt together may take, backoff included.
    #[serde(default = "default_deadline_secs")]
    pub deadline_secs: u64,
    /// Retries after a 429 (rate limited) or a 5xx answer, with backoff
    /// (`Retry-After` honoured).
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// The price of a million input tokens. Give both prices or neither.
    pub input_usd_per_million: Option<Usd>,
    /// The price of a million output tokens.
    pub output_usd_per_million: Option<Usd>,
    /// With `openai`: ask for output matching the JSON schema
    /// (`response_format: json_schema`); off, only for a JSON object
    /// (`json_object`), for servers without structured output. The reply is
    /// validated either way.
    #[serde(default = "yes")]
    pub json_schema: bool,
}

fn default_timeout_secs() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

fn default_deadline_secs() -> u64 {
    DEFAULT_DEADLINE_SECS
}

fn default_max_retries() -> u32 {
    DEFAULT_MAX_RETRIES
}

fn yes() -> bool {
    true
}

impl LlmConfig {
    /// Reads and validates a configuration block.
    ///
    /// # Errors
    ///
    /// [`LlmError::Config`] when the block is missing, has unknown keys,
    /// misses `base_url` or `model`, or has an unusable value: a `base_url`
    /// that is not `http://` or `https://`, an empty `model` or
    /// `api_key_env`, a zero `timeout_secs` or `deadline_secs`, a negative
    /// price, or one price without the other.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, LlmError> {
        if value.is_null() {
            return Err(LlmError::config(
                "block",
                "is missing: give at least `base_url` and `model`",
            ));
        }
        let config = Self::deserialize(value).map_err(|e| LlmError::Config {
            key: "block",
            problem: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), LlmError> {
        let base = self.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::config(
                "base_url",
                format!(
                    "must start with `http://` or `https://`, and `{}` does not",
                    crate::text::clip(base, 80)
                ),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(LlmError::config("model", "must not be empty"));
        }
        if let Some(var) = &self.api_key_env
            && (var.is_empty() || var.contains(['=', '\0']))
        {
            return Err(LlmError::config(
                "api_key_env",
                "must be the name of an environment variable (not empty, no `=`)",
            ));
        }
        if self.timeout_secs == 0 {
            return Err(LlmError::config("timeout_secs", "must be at least 1"));
        }
        if self.deadline_secs == 0 {
            return Err(LlmError::config("deadline_secs", "must be at least 1"));
        }
        match (self.input_usd_per_million, self.output_usd_per_million) {
            (Some(_), None) => Err(LlmError::config(
                "input_usd_per_million",
                "is set without `output_usd_per_million`; give both prices or neither",
            )),
            (None, Some(_)) => Err(LlmError::config(
                "output_usd_per_million",
                "is set without `input_usd_per_million`; give both prices or neither",
            )),
            (Some(_), Some(_)) | (None, None) => Ok(()),
        }
    }

    /// The variable the key is read from.
    pub fn api_key_env(&self) -> &str {
        self.api_key_env
            .as_deref()
            .unwrap_or(self.provider.default_api_key_env())
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> String {
        format!(
            "{}{}",
            self.base_url.trim().trim_end_matches('/'),
            self.provider.path()
        )
    }

    /// One request's timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }

    /// The limit of every attempt together.
    pub fn deadline(&self) -> Duration {
        Duration::from_secs(self.deadline_secs)
    }

    /// What `tokens` cost at the configured prices; `None` without prices.
    ///
    /// # Errors
    ///
    /// When the amount is not a valid [`Usd`].
    pub fn cost(&self, tokens: Tokens) -> Result<Option<Usd>, LlmError> {
        let (Some(input), Some(output)) = (self.input_usd_per_million, self.output_usd_per_million)
        else {
            return Ok(None);
        };
        // Token counts stay far below 2^53, so `as f64` is exact.
        let amount =
            input.get() * (tokens.input as f64) / 1e6 + output.get() * (tokens.output as f64) / 1e6;
        Usd::new(amount).map(Some).map_err(|e| LlmError::Config {
            key: "input_usd_per_million",
            problem: format!("gives no valid cost: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(value: &serde_json::Value) -> String {
        LlmConfig::from_value(value).unwrap_err().to_string()
    }

    #[test]
    fn defaults_per_provider() {
        let openai =
            LlmConfig::from_value(&json!({"base_url": "https://h/v1", "model": "m"})).unwrap();
        assert_eq!(openai.api_key_env(), "OPENAI_API_KEY");
        assert_eq!(openai.endpoint(), "https://h/v1/chat/completions");
        assert_eq!(openai.timeout(), Duration::from_secs(60));
        assert_eq!(openai.max_retries, 3);
        assert_eq!(openai.cost(Tokens::new(1, 1)).unwrap(), None);
        let anthropic = LlmConfig::from_value(
            &json!({"provider": "anthropic", "base_url": "https://api.anthropic.com/v1", "model": "claude"}),
        )
        .unwrap();
        assert_eq!(anthropic.api_key_env(), "ANTHROPIC_API_KEY");
        assert_eq!(
            anthropic.endpoint(),
            "https://api.anthropic.com/v1/messages"
        );
    }

    #[test]
    fn refused_configurations() {
        insta::assert_snapshot!(err(&json!(null)), @"`block` is missing: give at least `base_url` and `model`");
        insta::assert_snapshot!(err(&json!({"model": "m"})), @"`block` missing field `base_url`");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "modle": 0})), @"`block` unknown field `modle`, expected one of `provider`, `base_url`, `model`, `api_key_env`, `instructions`, `timeout_secs`, `deadline_secs`, `max_retries`, `input_usd_per_million`, `output_usd_per_million`, `json_schema`");
        insta::assert_snapshot!(err(&json!({"base_url": "api.openai.com", "model": "m"})), @"`base_url` must start with `http://` or `https://`, and `api.openai.com` does not");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": " "})), @"`model` must not be empty");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "timeout_secs": 0})), @"`timeout_secs` must be at least 1");
        insta::assert_snapshot!(err(&json!({"base_url": "https://h", "model": "m", "output_usd_per_million": 1.0})), @"`output_usd_per_million` is set without `input_usd_per_million`; give both prices or neither");
        insta::assert_snapshot!(err(&json!({"provider": "gemini", "base_url": "https://h", "model": "m"})), @"`block` unknown variant `gemini`, expected `openai` or `anthropic`");
    }

    #[test]
    fn cost_per_million() {
        let config = LlmConfig::from_value(&json!({
            "base_url": "https://h", "model": "m",
            "input_usd_per_million": 3.0, "output_usd_per_million": 15.0,
        }))
        .unwrap();
        let usd = config
            .cost(Tokens::new(1_000_000, 100_000))
            .unwrap()
            .unwrap();
        assert!((usd.get() - 4.5).abs() < 1e-9, "{usd}");
    }
}
