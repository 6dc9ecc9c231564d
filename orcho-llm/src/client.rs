//! One question to the model over HTTP, with retries and a deadline.

use std::{
    env::VarError,
    fmt, io,
    sync::Arc,
    time::{Duration, Instant},
};

use orcho_core::Tokens;

use crate::{
    LlmConfig, Provider,
    api_key::{self, ApiKey, KeyLookup},
    error::LlmError,
    provider::{self, ANTHROPIC_VERSION, Ask},
    text::excerpt,
};

/// The most bytes of a response body read.
const MAX_RESPONSE_BYTES: u64 = 1024 * 1024;
/// The first backoff after a 429 or a 5xx without `Retry-After`; it doubles
/// with each retry.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest single backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How often a backoff looks at the cancellation.
const SLEEP_STEP: Duration = Duration::from_millis(25);

/// The model's answer to one [`Ask`]: the text of the document (still to
/// be validated by the caller) and what it took.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Answer {
    /// The answer's text: a JSON document, when the model kept to the
    /// schema.
    pub text: String,
    /// The tokens the last attempt used, when reported.
    pub tokens: Option<Tokens>,
    /// How many requests were sent.
    pub attempts: u32,
    /// How long it took, backoff included.
    pub elapsed: Duration,
}

/// A configured model endpoint. Blocking: run [`ask`](Self::ask) in
/// `tokio::task::spawn_blocking` from async code.
#[derive(Clone)]
pub struct Client {
    config: LlmConfig,
    agent: ureq::Agent,
    lookup: KeyLookup,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `config`; the key is read from the process environment
    /// at each [`ask`](Self::ask).
    pub fn new(config: LlmConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            // Non-2xx answers are read, so that the error can quote them.
            .http_status_as_error(false)
            .user_agent(concat!("orcho-llm/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self {
            config,
            agent,
            lookup: Arc::new(api_key::process_env),
        }
    }

    /// Reads the key variable through `lookup` instead of the process
    /// environment: for hosts that keep secrets elsewhere, and for tests.
    #[must_use]
    pub fn with_api_key_lookup(
        mut self,
        lookup: impl Fn(&str) -> Result<String, VarError> + Send + Sync + 'static,
    ) -> Self {
        self.lookup = Arc::new(lookup);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Asks the model, retrying a 429, a 5xx, a timeout or a transport
    /// failure up to `max_retries` times with backoff (`Retry-After`
    /// honoured), all within `deadline_secs`. `cancelled` is looked at
    /// before each attempt and during each backoff.
    ///
    /// # Errors
    ///
    /// An [`LlmError`]: the key variable, a non-transient answer, the
    /// retries or the deadline running out ([`LlmError::GaveUp`]), a
    /// refusal, or [`LlmError::Cancelled`].
    pub fn ask(&self, ask: &Ask<'_>, cancelled: &dyn Fn() -> bool) -> Result<Answer, LlmError> {
        let started = Instant::now();
        let deadline = started + self.config.deadline();
        let key = ApiKey::read(self.config.api_key_env(), &self.lookup)?;
        let url = self.config.endpoint();
        let body = provider::request_body(&self.config, ask).to_string();
        let mut attempts = 0u32;
        loop {
            if cancelled() {
                return Err(LlmError::Cancelled);
            }
            attempts += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = self
                .config
                .timeout()
                .min(left)
                .max(Duration::from_millis(1));
            let (error, retry_after) = match self.post(&url, &key, &body, timeout) {
                Ok(reply) => {
                    return Ok(Answer {
                        text: reply.text,
                        tokens: reply.tokens,
                        attempts,
                        elapsed: started.elapsed(),
                    });
                }
                Err(failed) => failed,
            };
            if !error.is_transient() {
                return Err(error);
            }
            if attempts > self.config.max_retries {
                return Err(LlmError::GaveUp {
                    attempts,
                    why: format!("`max_retries` is {}", self.config.max_retries),
                    last: Box::new(error),
                });
            }
            let backoff = retry_after.unwrap_or_else(|| {
                FIRST_BACKOFF
                    .saturating_mul(1 << (attempts - 1).min(16))
                    .min(MAX_BACKOFF)
            });
            if Instant::now() + backoff >= deadline {
                return Err(LlmError::GaveUp {
                    attempts,
                    why: format!(
                        "the next attempt would pass `deadline_secs` ({}s)",
                        self.config.deadline_secs
                    ),
                    last: Box::new(error),
                });
            }
            let wake = Instant::now() + backoff;
            while Instant::now() < wake {
                if cancelled() {
                    return Err(LlmError::Cancelled);
                }
                std::thread::sleep(SLEEP_STEP.min(wake.saturating_duration_since(Instant::now())));
            }
        }
    }

    /// One request. On failure: the error and the `Retry-After` the
    /// endpoint asked for.
    fn post(
        &self,
        url: &str,
        key: &ApiKey,
        body: &str,
        timeout: Duration,
    ) -> Result<provider::Reply, (LlmError, Option<Duration>)> {
        let secs = timeout.as_secs().max(1);
        let transport = |error: ureq::Error| match error {
            ureq::Error::Timeout(_) => LlmError::Timeout {
                url: url.to_owned(),
                secs,
            },
            ureq::Error::Io(e) if matches!(e.kind(), io::ErrorKind::TimedOut) => {
                LlmError::Timeout {
                    url: url.to_owned(),
                    secs,
                }
            }
            // The key is never in a transport error, but redact anyway.
            other => LlmError::Transport {
                url: url.to_owned(),
                message: key.redact(&other.to_string()),
            },
        };
        let request = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Accept", "application/json")
            .content_type("application/json");
        let request = match self.config.provider {
            Provider::Openai => request.header("Authorization", key.bearer()),
            Provider::Anthropic => request
                .header("x-api-key", key.raw())
                .header("anthropic-version", ANTHROPIC_VERSION),
        };
        let mut response = request.send(body).map_err(|e| (transport(e), None))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .lossy_utf8(true)
            .read_to_string()
            .map_err(|e| (transport(e), None))?;
        // Nothing the endpoint sent is quoted before this: a server may echo
        // the request, key included.
        let text = key.redact(&text);
        if !status.is_success() {
            return Err((
                LlmError::Status {
                    url: url.to_owned(),
                    status: status.as_u16(),
                    excerpt: excerpt(&text),
                },
                retry_after,
            ));
        }
        provider::parse_reply(self.config.provider, &text).map_err(|e| (e, None))
    }
}
