//! An inferential quality gate that asks a language model for a verdict:
//! the example of a third-party gate plugin.
//!
//! [`LlmJudge`] implements [`orcho_gates::QualityGate`] with
//! [`GateKind::Inferential`](orcho_gates::GateKind::Inferential). After a
//! phase, it posts one request to an OpenAI-compatible chat-completions
//! endpoint (`{base_url}/chat/completions`: OpenAI, or any server that speaks
//! the same API, local ones included) and turns the model's JSON verdict into
//! a [`QualityGateResult`](orcho_gates::QualityGateResult) with findings, a
//! summary, the tokens used and, when prices are configured, their cost.
//! [`register`] adds it to a [`GateRegistry`](orcho_gates::GateRegistry) as
//! [`LLM_JUDGE`] (`llm_judge`). Like every plugin, it depends on
//! `orcho-gates` and `orcho-core` only, never on the engine.
//!
//! # In a profile
//!
//! ```yaml
//! phases:
//!   - name: implement
//!     gates:
//!       - name: security_review
//!         uses: llm_judge
//!         on_fail: feed_into_next   # the findings go to the next attempt
//!         timeout: 2m               # the scheduler's limit for the whole gate
//!         with:
//!           base_url: https://api.openai.com/v1
//!           model: gpt-4o-mini
//!           api_key_env: OPENAI_API_KEY
//!           instructions: >
//!             Fail the phase if it adds a secret to the repository or
//!             weakens input validation.
//!           timeout_secs: 60
//!           price_per_1k_input_tokens_usd: 0.00015
//!           price_per_1k_output_tokens_usd: 0.0006
//! ```
//!
//! The `with:` keys ([`LlmJudgeConfig`]); unknown keys are refused when the
//! profile is loaded:
//!
//! | key | | meaning |
//! | --- | --- | --- |
//! | `base_url` | required | the API root; the gate posts to `{base_url}/chat/completions` |
//! | `model` | required | the model to ask |
//! | `api_key_env` | default `OPENAI_API_KEY` | the environment variable holding the API key |
//! | `instructions` | optional | the gate's criteria, in words, for the model |
//! | `timeout_secs` | default 60 | the limit of one request, connecting to last byte |
//! | `price_per_1k_input_tokens_usd` | optional | with the next one, to report cost |
//! | `price_per_1k_output_tokens_usd` | optional | with the previous one |
//!
//! # The exchange
//!
//! The request carries `model`, a system message asking for a strict JSON
//! verdict, a user message with the phase, its attempt and round, the
//! phase's verdict, summary and findings, and the gate's `instructions`,
//! and `response_format: {"type": "json_object"}`. The key goes in an
//! `Authorization: Bearer` header, read from the variable `api_key_env`
//! names at each evaluation; it never appears in an error, a summary or a
//! `Debug` form, and text the endpoint sends back is redacted before it is
//! quoted.
//!
//! The model must reply with
//!
//! ```json
//! {"verdict": "fail",
//!  "summary": "The new endpoint does not check the caller's role.",
//!  "findings": [{"severity": "high", "message": "no authorization check", "file": "src/api.rs", "line": 42}]}
//! ```
//!
//! `verdict` is `pass` or `fail`; `severity` is one of `info`, `low`,
//! `medium`, `high`, `critical`; `file` and `line` are optional. A pass is
//! [`GateOutcome::Passed`](orcho_gates::GateOutcome::Passed), a fail
//! [`GateOutcome::Failed`](orcho_gates::GateOutcome::Failed); the result
//! carries `usage.prompt_tokens` and `usage.completion_tokens` as
//! [`Tokens`](orcho_core::Tokens), priced as a [`Usd`](orcho_core::Usd)
//! cost.
//!
//! # Bad answers are errors, never a pass
//!
//! The gate returns `Err(`[`GateError`](orcho_gates::GateError)`)` — the
//! gate *could not run*, which counts as a failure for its `on_fail`
//! strategy — when the key variable is unset or unusable, the endpoint
//! cannot be reached, the request times out, the status is not 2xx (the
//! error quotes the status and the start of the body), the body is not
//! JSON, it has no `choices[0].message.content`, or the content is not the
//! verdict object above (no `verdict`, a verdict other than `pass` or
//! `fail`, a finding with an unknown severity). When the gate's
//! cancellation signal fires first, the result is
//! [`Skipped`](orcho_gates::GateOutcome::Skipped).
//!
//! # Example
//!
//! ```
//! use orcho_core::error_chain;
//! use orcho_gates::{GateKind, GateRegistry, GateSpec};
//!
//! let registry = orcho_llm_judge::register(GateRegistry::builtins_builder())?.build();
//!
//! let spec = GateSpec::new("security_review".parse()?, "llm_judge".parse()?).with_config(serde_json::json!({
//!     "base_url": "https://api.openai.com/v1",
//!     "model": "gpt-4o-mini",
//!     "instructions": "Fail the phase if it adds a secret to the repository.",
//! }));
//! let gate = registry.build(&spec)?;
//! assert_eq!(gate.name(), "security_review");
//! assert_eq!(gate.kind(), GateKind::Inferential);
//!
//! let typo = spec.clone().with_config(serde_json::json!({"base_url": "https://api.openai.com/v1", "modle": "gpt-4o-mini"}));
//! let err = registry.build(&typo).unwrap_err();
//! assert!(error_chain(&err).starts_with(
//!     "invalid configuration for gate `security_review` (uses `llm_judge`): caused by: unknown field `modle`"
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! None.
//!
//! # Stability and MSRV
//!
//! An example, not published. The minimum supported Rust version is the
//! workspace's, 1.95.

mod api_key;
mod config;
mod error;
mod judge;
mod protocol;

pub use config::{DEFAULT_API_KEY_ENV, DEFAULT_TIMEOUT_SECS, LlmJudgeConfig};
pub use judge::{LLM_JUDGE, LlmJudge, register};
