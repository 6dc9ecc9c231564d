//! What can go wrong before the model has said anything usable.
//!
//! No message ever carries the API key: the key is never formatted into
//! one, and text that comes back from the endpoint is redacted before it is
//! quoted.

use std::env::VarError;

/// Why a model call gave no usable answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// A key of the configuration block has an unusable value.
    #[error("`{key}` {problem}")]
    Config {
        /// The key (`block` for the block as a whole).
        key: &'static str,
        /// What is wrong, as a fragment.
        problem: String,
    },
    /// The variable that should hold the API key is unusable.
    #[error(
        "the API key variable `{var}` {problem}; set it, or name another variable in `api_key_env`"
    )]
    ApiKey {
        /// The variable.
        var: String,
        /// What is wrong with it.
        problem: KeyProblem,
    },
    /// One request did not finish in time.
    #[error("the request to `{url}` timed out after {secs}s (`timeout_secs`)")]
    Timeout {
        /// The endpoint.
        url: String,
        /// The configured timeout.
        secs: u64,
    },
    /// The request could not be sent, or the answer could not be read.
    #[error("could not reach `{url}`: {message}")]
    Transport {
        /// The endpoint.
        url: String,
        /// What the HTTP client said.
        message: String,
    },
    /// The endpoint answered with a status outside 2xx.
    #[error("`{url}` answered HTTP {status}: {excerpt}")]
    Status {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body, redacted.
        excerpt: String,
    },
    /// Retries (after 429 or 5xx answers) or the deadline ran out.
    #[error("gave up after {attempts} attempt(s) ({why}); the last one: {last}")]
    GaveUp {
        /// How many requests were sent.
        attempts: u32,
        /// `max_retries` or `deadline_secs`, in words.
        why: String,
        /// The last attempt's error.
        last: Box<Self>,
    },
    /// The response body is not JSON.
    #[error("the response is not JSON: {excerpt}")]
    BodyNotJson {
        /// The start of the body, redacted.
        excerpt: String,
    },
    /// The model declined to answer.
    #[error("the model refused: {refusal}")]
    Refused {
        /// What it said instead.
        refusal: String,
    },
    /// The response has no answer where the provider puts one.
    #[error("the response has no answer ({where_}): {excerpt}")]
    NoAnswer {
        /// Where the answer should have been.
        where_: &'static str,
        /// The start of the body, redacted.
        excerpt: String,
    },
    /// The answer is not the document that was asked for: never guessed at.
    #[error("malformed {what}: {problem}")]
    Malformed {
        /// `verdict` or `advice`.
        what: &'static str,
        /// What is wrong, with the start of the answer.
        problem: String,
    },
    /// The call was cancelled before it finished.
    #[error("cancelled before the model answered")]
    Cancelled,
    /// The blocking task that made the request panicked.
    #[error("the request task failed: {0}")]
    Task(String),
}

impl LlmError {
    pub(crate) fn config(key: &'static str, problem: impl Into<String>) -> Self {
        Self::Config {
            key,
            problem: problem.into(),
        }
    }

    pub(crate) fn malformed(what: &'static str, problem: impl Into<String>) -> Self {
        Self::Malformed {
            what,
            problem: problem.into(),
        }
    }

    /// Whether a new attempt may succeed: a 429, a 5xx, a timeout or a
    /// transport failure.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Status { status, .. } => *status == 429 || (500..600).contains(status),
            Self::Timeout { .. } | Self::Transport { .. } => true,
            _ => false,
        }
    }

    /// Whether the answer came back but was not the document asked for.
    pub fn is_malformed(&self) -> bool {
        matches!(self, Self::Malformed { .. })
    }
}

/// What is wrong with the API key variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyProblem {
    /// Not set.
    Missing,
    /// Not valid UTF-8.
    NotUnicode,
    /// Empty.
    Empty,
    /// Not sendable in a header.
    NotHeaderSafe,
}

impl KeyProblem {
    pub(crate) fn from_var_error(e: &VarError) -> Self {
        match e {
            VarError::NotPresent => Self::Missing,
            VarError::NotUnicode(_) => Self::NotUnicode,
        }
    }
}

impl std::fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Missing => "is not set",
            Self::NotUnicode => "is not valid UTF-8",
            Self::Empty => "is empty",
            Self::NotHeaderSafe => {
                "holds whitespace, control or non-ASCII characters, which an API key cannot have"
            }
        })
    }
}
