//! Language models in Orcho: the inferential judge gate and the handoff
//! advisor, over any OpenAI-compatible chat-completions endpoint or the
//! Anthropic Messages API.
//!
//! - [`LlmJudge`] is a [`QualityGate`](orcho_gates::QualityGate) registered
//!   as `llm_judge` ([`register`]): after a phase, it asks the model whether
//!   the phase passes the gate's `instructions`, and reports pass or fail
//!   with findings, tokens and cost.
//! - [`LlmAdvisor`] is an [`Advisor`](orcho_handoff::Advisor): it reads a
//!   paused handoff and recommends the smallest honest next step. It never
//!   decides; an operator, or the bounded autopilot, does.
//! - [`Client`] asks one question with retries ([`LlmConfig`]): a 429, a 5xx,
//!   a timeout or a transport failure is retried with backoff (`Retry-After`
//!   honoured) within a total deadline; the answer is asked for as JSON
//!   matching a schema (OpenAI's `json_schema` response format; a forced
//!   tool call on Anthropic), and anything that does not validate is an
//!   error, never a guess.
//!
//! The API key is read from the variable the configuration names
//! (`api_key_env`) when a request is made. It is never part of an error, a
//! log, a receipt or an advice artifact: no message formats it, and text the
//! endpoint sends back is redacted before it is quoted.
//!
//! # In a profile
//!
//! ```yaml
//! advisor:
//!   provider: anthropic
//!   base_url: https://api.anthropic.com/v1
//!   model: claude-sonnet-4-5
//!   input_usd_per_million: 3
//!   output_usd_per_million: 15
//! phases:
//!   - name: implement
//!     role: implement
//!     gates:
//!       - name: security_review
//!         uses: llm_judge
//!         on_fail: feed_into_next
//!         with:
//!           base_url: https://api.openai.com/v1
//!           model: gpt-4o-mini
//!           instructions: Fail the phase if it adds a secret or weakens input validation.
//! ```
//!
//! ```
//! use orcho_gates::{GateKind, GateRegistry, GateSpec};
//!
//! let registry = orcho_llm::register(GateRegistry::builtins_builder())?.build();
//! let spec = GateSpec::new("security_review".parse()?, "llm_judge".parse()?).with_config(serde_json::json!({
//!     "base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini",
//! }));
//! assert_eq!(registry.build(&spec)?.kind(), GateKind::Inferential);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is the workspace's, 1.95.

mod advisor;
mod api_key;
mod client;
mod config;
mod error;
mod judge;
mod provider;
mod text;

pub use advisor::LlmAdvisor;
pub use client::{Answer, Client};
pub use config::{
    DEFAULT_DEADLINE_SECS, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECS, LlmConfig, Provider,
};
pub use error::{KeyProblem, LlmError};
pub use judge::{DEFAULT_MAX_DIFF_BYTES, LLM_JUDGE, LlmJudge, MAX_DIFF_BYTES, Material, register};
pub use provider::Ask;
