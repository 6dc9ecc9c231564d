//! What can go wrong, before the judge gets to say pass or fail.
//!
//! Every variant ends up inside an [`orcho_gates::GateError`]: the gate could
//! not run, which the scheduler records as *errored* and never as a pass. No
//! message carries the API key: the key is never formatted into one, and
//! text that comes back from the endpoint is redacted before it is quoted.

use std::env::VarError;

/// Why the judge could not give a verdict.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum JudgeError {
    /// A key of the `with:` block has an unusable value.
    #[error("`{key}` {problem}")]
    Config {
        /// The key.
        key: &'static str,
        /// What is wrong with it, as a fragment ("must not be empty").
        problem: String,
    },
    /// The variable that should hold the API key is unusable.
    #[error(
        "the API key variable `{var}` {problem}; set it, or name another variable in `api_key_env`"
    )]
    ApiKey {
        /// The variable's name.
        var: String,
        /// What is wrong with it.
        problem: KeyProblem,
    },
    /// The endpoint did not answer in time.
    #[error("the request to `{url}` timed out after {secs}s (`timeout_secs`)")]
    Timeout {
        /// The endpoint.
        url: String,
        /// The configured timeout.
        secs: u64,
    },
    /// The request could not be sent, or the answer could not be read.
    #[error("could not reach `{url}`")]
    Transport {
        /// The endpoint.
        url: String,
        /// What the HTTP client said.
        #[source]
        source: Box<ureq::Error>,
    },
    /// The endpoint answered with a status outside 2xx.
    #[error("`{url}` answered HTTP {status}: {excerpt}")]
    Status {
        /// The endpoint.
        url: String,
        /// The status code and its reason phrase.
        status: String,
        /// The start of the response body, redacted.
        excerpt: String,
    },
    /// The response body is not JSON.
    #[error("the response is not JSON: {excerpt}")]
    BodyNotJson {
        /// The start of the response body, redacted.
        excerpt: String,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// The response has no message text where a chat completion has it.
    #[error("the response has no `choices[0].message.content`{}", refusal.as_ref().map(|r| format!(" (the model refused: {r})")).unwrap_or_default())]
    NoContent {
        /// The model's refusal, if it sent one instead.
        refusal: Option<String>,
    },
    /// The model's reply is not a JSON object.
    #[error("the model's reply is not a JSON object: {excerpt}")]
    ReplyNotJson {
        /// The start of the reply.
        excerpt: String,
    },
    /// The model's reply has no verdict.
    #[error("the model's reply has no `verdict`: {excerpt}")]
    NoVerdict {
        /// The start of the reply.
        excerpt: String,
    },
    /// The model's verdict is neither pass nor fail.
    #[error("the model's reply has verdict {given}; expected `pass` or `fail`")]
    InvalidVerdict {
        /// What it said, as JSON.
        given: String,
    },
    /// The rest of the reply (summary, findings) does not fit the schema.
    #[error("the model's reply is not a valid verdict")]
    InvalidReply {
        /// The schema mismatch.
        #[source]
        source: serde_json::Error,
    },
    /// The token counts give a cost that is not a valid amount.
    #[error("the cost of {input} input and {output} output tokens is not a valid amount")]
    Cost {
        /// Input tokens.
        input: u64,
        /// Output tokens.
        output: u64,
        /// Why.
        #[source]
        source: orcho_core::ValueError,
    },
    /// The blocking task that made the request panicked or was cancelled.
    #[error("the request task failed")]
    Task(#[source] tokio::task::JoinError),
}

/// What is wrong with the API key variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyProblem {
    /// Not set.
    Missing,
    /// Set to a value that is not UTF-8.
    NotUnicode,
    /// Set to the empty string.
    Empty,
    /// Set to a value that cannot be sent in a header.
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
