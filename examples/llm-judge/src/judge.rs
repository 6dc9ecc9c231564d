//! The gate: one chat-completions request per evaluation.

use std::{env::VarError, fmt, io, sync::Arc, time::Instant};

use orcho_core::{Finding, GateName};
use orcho_gates::{
    GateContext, GateError, GateKind, GateOutcome, GateRegistryBuilder, GateSpec, ModelUsage,
    QualityGate, QualityGateResult, RegistryError,
};

use crate::{
    LlmJudgeConfig,
    api_key::{self, ApiKey, KeyLookup},
    error::JudgeError,
    protocol::{self, Completion, Judgement},
};

/// The registry name of the gate: what a profile's `uses:` says.
pub const LLM_JUDGE: &str = "llm_judge";

/// The most bytes of a response body the gate reads.
const MAX_RESPONSE_BYTES: u64 = 1024 * 1024;
/// The most characters of the model's reply kept as the result's output tail.
const MAX_TAIL_CHARS: usize = 4_000;

/// Registers the gate as [`LLM_JUDGE`] (`llm_judge`), with
/// [`LlmJudge::from_spec`] as its factory.
///
/// ```
/// use orcho_gates::GateRegistry;
///
/// let registry = orcho_llm_judge::register(GateRegistry::builtins_builder())?.build();
/// assert!(registry.contains("llm_judge"));
/// assert!(registry.contains("tests"));
/// # Ok::<(), orcho_gates::RegistryError>(())
/// ```
///
/// # Errors
///
/// [`RegistryError::Duplicate`] when `llm_judge` is already registered.
pub fn register(builder: GateRegistryBuilder) -> Result<GateRegistryBuilder, RegistryError> {
    builder.register(LLM_JUDGE, LlmJudge::from_spec)
}

/// An inferential gate that asks a model, through an OpenAI-compatible
/// chat-completions endpoint, whether a phase passes the gate's criteria.
///
/// See the [crate docs](crate) for the exchange and its failure modes.
#[derive(Clone)]
pub struct LlmJudge {
    name: GateName,
    config: LlmJudgeConfig,
    endpoint: String,
    agent: ureq::Agent,
    lookup: KeyLookup,
}

impl fmt::Debug for LlmJudge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmJudge")
            .field("name", &self.name)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LlmJudge {
    /// A gate named `name` with a validated configuration. The API key is
    /// read from the process environment at each evaluation.
    pub fn new(name: GateName, config: LlmJudgeConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout()))
            // Non-2xx answers are read, so that the error can quote them.
            .http_status_as_error(false)
            .user_agent(concat!("orcho-llm-judge/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self {
            endpoint: config.endpoint(),
            name,
            config,
            agent,
            lookup: Arc::new(api_key::process_env),
        }
    }

    /// Builds the gate from its spec, validating the `with:` block.
    ///
    /// # Errors
    ///
    /// See [`LlmJudgeConfig::from_value`].
    pub fn try_from_spec(spec: &GateSpec) -> Result<Self, GateError> {
        Ok(Self::new(
            spec.name.clone(),
            LlmJudgeConfig::from_value(&spec.config)?,
        ))
    }

    /// The registry's factory for `llm_judge`: [`try_from_spec`](Self::try_from_spec)
    /// behind an `Arc<dyn QualityGate>`.
    ///
    /// # Errors
    ///
    /// See [`LlmJudgeConfig::from_value`].
    pub fn from_spec(spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
        Ok(Arc::new(Self::try_from_spec(spec)?))
    }

    /// Reads the API key variable through `lookup` instead of the process
    /// environment (which is what [`std::env::var`] does, and the default).
    ///
    /// For hosts that keep secrets elsewhere, and for tests: the workspace
    /// forbids `unsafe`, so tests cannot set variables for the process.
    ///
    /// ```
    /// use orcho_llm_judge::{LlmJudge, LlmJudgeConfig};
    ///
    /// let config = LlmJudgeConfig::from_value(&serde_json::json!({
    ///     "base_url": "http://127.0.0.1:8080/v1", "model": "m", "api_key_env": "JUDGE_KEY",
    /// }))?;
    /// let gate = LlmJudge::new("review".parse()?, config).with_api_key_lookup(|var| match var {
    ///     "JUDGE_KEY" => Ok("sk-from-a-vault".to_owned()),
    ///     _ => Err(std::env::VarError::NotPresent),
    /// });
    /// assert!(!format!("{gate:?}").contains("sk-from-a-vault"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_api_key_lookup(
        mut self,
        lookup: impl Fn(&str) -> Result<String, VarError> + Send + Sync + 'static,
    ) -> Self {
        self.lookup = Arc::new(lookup);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &LlmJudgeConfig {
        &self.config
    }

    fn skipped(&self, started: Instant) -> QualityGateResult {
        QualityGateResult::inferential(
            self.name.clone(),
            GateOutcome::Skipped {
                reason: "cancelled before the model answered".to_owned(),
            },
        )
        .with_duration(started.elapsed())
    }

    fn result(
        &self,
        completion: &Completion,
        judgement: Judgement,
    ) -> Result<QualityGateResult, JudgeError> {
        let usage = match completion.tokens {
            Some(tokens) => ModelUsage::new(self.config.cost(tokens)?, Some(tokens)),
            None => ModelUsage::default(),
        };
        let (outcome, verdict) = if judgement.passed {
            (GateOutcome::Passed, "pass")
        } else {
            (GateOutcome::Failed, "fail")
        };
        let summary = if judgement.summary.is_empty() {
            format!("`{}` said {verdict}, without a summary", self.config.model)
        } else {
            judgement.summary
        };
        let findings = judgement.findings.into_iter().map(|f| {
            let mut finding = Finding::new(self.name.as_str(), f.severity, f.message);
            if let Some(file) = f.file {
                finding = finding.with_file(file);
            }
            if let Some(line) = f.line {
                finding = finding.with_line(line);
            }
            finding
        });
        Ok(QualityGateResult::inferential(self.name.clone(), outcome)
            .with_model_usage(usage)
            .with_summary(summary)
            .with_findings(findings)
            .with_output_tail(protocol::tail(&completion.content, MAX_TAIL_CHARS)))
    }
}

#[orcho_gates::async_trait]
impl QualityGate for LlmJudge {
    fn name(&self) -> &GateName {
        &self.name
    }

    fn kind(&self) -> GateKind {
        GateKind::Inferential
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let started = Instant::now();
        if ctx.cancel.is_cancelled() {
            return Ok(self.skipped(started));
        }
        let key = ApiKey::read(&self.config.api_key_env, &self.lookup).map_err(GateError::new)?;
        let body = protocol::request_body(
            &self.config.model,
            &protocol::user_message(ctx, self.config.instructions.as_deref()),
        )
        .to_string();
        let request = {
            let agent = self.agent.clone();
            let endpoint = self.endpoint.clone();
            let secs = self.config.timeout_secs;
            // ureq blocks; a request cannot be interrupted, but it ends at
            // `timeout_secs` at the latest, also when nobody awaits it.
            tokio::task::spawn_blocking(move || post(&agent, &endpoint, secs, &key, &body))
        };
        let completion = tokio::select! {
            joined = request => joined
                .map_err(|e| GateError::new(JudgeError::Task(e)))?
                .map_err(GateError::new)?,
            () = ctx.cancel.cancelled() => return Ok(self.skipped(started)),
        };
        let judgement = protocol::parse_judgement(&completion.content).map_err(GateError::new)?;
        Ok(self
            .result(&completion, judgement)
            .map_err(GateError::new)?
            .with_duration(started.elapsed()))
    }
}

/// Sends the request and reads the completion. Blocking.
fn post(
    agent: &ureq::Agent,
    url: &str,
    secs: u64,
    key: &ApiKey,
    body: &str,
) -> Result<Completion, JudgeError> {
    let transport = |error: ureq::Error| match error {
        ureq::Error::Timeout(_) => JudgeError::Timeout {
            url: url.to_owned(),
            secs,
        },
        ureq::Error::Io(e) if matches!(e.kind(), io::ErrorKind::TimedOut) => JudgeError::Timeout {
            url: url.to_owned(),
            secs,
        },
        source => JudgeError::Transport {
            url: url.to_owned(),
            source: Box::new(source),
        },
    };
    let mut response = agent
        .post(url)
        .header("Authorization", key.bearer())
        .header("Accept", "application/json")
        .content_type("application/json")
        .send(body)
        .map_err(transport)?;
    let status = response.status();
    let text = response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE_BYTES)
        .lossy_utf8(true)
        .read_to_string()
        .map_err(transport)?;
    // Nothing the endpoint sent is quoted before this: a server may echo the
    // request, key included.
    let text = key.redact(&text);
    if !status.is_success() {
        return Err(JudgeError::Status {
            url: url.to_owned(),
            status: match status.canonical_reason() {
                Some(reason) => format!("{} {reason}", status.as_u16()),
                None => status.as_u16().to_string(),
            },
            excerpt: protocol::excerpt(&text),
        });
    }
    protocol::parse_completion(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debug_form_has_no_key_and_no_client() {
        let config = LlmJudgeConfig::from_value(
            &serde_json::json!({"base_url": "http://127.0.0.1:9/v1", "model": "m"}),
        )
        .unwrap();
        let gate = LlmJudge::new("review".parse().unwrap(), config)
            .with_api_key_lookup(|_| Ok("sk-secret".to_owned()));
        let debug = format!("{gate:?}");
        assert!(
            debug.starts_with(r#"LlmJudge { name: GateName("review")"#),
            "{debug}"
        );
        assert!(!debug.contains("sk-secret"));
        assert_eq!(gate.kind(), GateKind::Inferential);
    }
}
