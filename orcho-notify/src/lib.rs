//! Sends the events of an Orcho store to its notifiers.
//!
//! [`orcho::notify`] says which events are due to which notifier; this
//! crate sends them and logs each attempt in the store:
//!
//! - [`deliver`] makes one pass: it takes the store's delivery lock (one
//!   sender at a time, across the machines of a shared store), sends what
//!   is due, and records how each attempt went. A failure is tried again
//!   on the [`Retry`] schedule, then given up.
//! - [`watch`] delivers until it is asked to stop, waking for each retry.
//! - [`Sender`] sends one event: a webhook is a POST of the event's JSON
//!   document, signed with the notifier's secret ([`sign`]; [`verify`] for
//!   receivers); a mail goes through the notifier's SMTP server, its
//!   subject the event's line and its body the line, the link and the
//!   document.
//!
//! Feature `test-util`: `orcho_notify::testing`, a webhook receiver for tests.
//!
//! ```
//! let signature = orcho_notify::sign(b"secret", 1_700_000_000, br#"{"schema":1}"#);
//! assert!(signature.starts_with("sha256="));
//! assert!(orcho_notify::verify(b"secret", 1_700_000_000, br#"{"schema":1}"#, &signature));
//! assert!(!orcho_notify::verify(b"other", 1_700_000_000, br#"{"schema":1}"#, &signature));
//! ```

use std::{
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use hmac::{Hmac, KeyInit, Mac};
pub use orcho::notify::Retry;
use orcho::{
    EngineError, Store,
    core::Timestamp,
    notify::{Event, Notifier, Outcome, Secret, Target},
};
use sha2::Sha256;

mod mail;
#[cfg(feature = "test-util")]
pub mod testing;

/// The header with the time the request was signed, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "X-Orcho-Timestamp";
/// The header with the signature: `sha256=<hex>`.
pub const SIGNATURE_HEADER: &str = "X-Orcho-Signature";
/// The header with the event's kind (`point_opened`, …).
pub const EVENT_HEADER: &str = "X-Orcho-Event";
/// The header with the event's id, the same on every retry.
pub const DELIVERY_HEADER: &str = "X-Orcho-Delivery";
/// How long one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The signature of `body` sent at `timestamp` (Unix seconds) with
/// `secret`: `sha256=` and the hex HMAC-SHA256 of `"<timestamp>.<body>"`.
pub fn sign(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    let bytes = mac(secret, timestamp, body).finalize().into_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// Whether `signature` (`sha256=<hex>`) is the one [`sign`] makes for
/// `body` at `timestamp` with `secret`, compared in constant time. A
/// receiver also refuses a timestamp far from its clock (five minutes, as
/// usual), so that a request seen once cannot be sent again later.
pub fn verify(secret: &[u8], timestamp: u64, body: &[u8], signature: &str) -> bool {
    let Some(hex) = signature.strip_prefix("sha256=") else {
        return false;
    };
    let Some(bytes) = unhex(hex) else {
        return false;
    };
    mac(secret, timestamp, body).verify_slice(&bytes).is_ok()
}

fn mac(secret: &[u8], timestamp: u64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Why an event could not be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The secret's variable is not set where the event is sent from.
    #[error("the secret's variable `{0}` is not set in this environment")]
    NoSecret(String),
    /// The endpoint did not answer in time.
    #[error("{url} did not answer within {secs}s")]
    Timeout {
        /// Where.
        url: String,
        /// The timeout.
        secs: u64,
    },
    /// The request could not be made.
    #[error("cannot reach {url}: {message}")]
    Transport {
        /// Where.
        url: String,
        /// What failed.
        message: String,
    },
    /// The mail could not be made or sent.
    #[error("mail through {server}: {message}")]
    Mail {
        /// The server, without a password.
        server: String,
        /// What failed.
        message: String,
    },
    /// The endpoint answered with an error.
    #[error("{url} answered {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        /// Where.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
}

/// Where a secret's variable is read.
type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Sends events.
#[derive(Clone)]
pub struct Sender {
    agent: ureq::Agent,
    timeout: Duration,
    env: Env,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for Sender {
    fn default() -> Self {
        Self::new()
    }
}

impl Sender {
    /// A sender with [`TIMEOUT`] per request, reading secrets' variables
    /// from the process environment.
    pub fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            // An error status is read, to say what the endpoint answered.
            .http_status_as_error(false)
            .user_agent(concat!("orcho-notify/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self {
            agent,
            timeout: TIMEOUT,
            env: Arc::new(|var| std::env::var_os(var).and_then(|v| v.into_string().ok())),
        }
    }

    /// Each request may take `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Reads secrets' variables through `env` (a test, or a host that keeps
    /// them elsewhere).
    #[must_use]
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// Sends `event` to `notifier`; the HTTP status it was taken with.
    ///
    /// # Errors
    ///
    /// No secret, no answer in time, a transport failure, or a status that
    /// is not 2xx.
    pub fn send(&self, notifier: &Notifier, event: &Event) -> Result<u16, SendError> {
        match &notifier.target {
            Target::Webhook { url, secret } => {
                let secret = match secret {
                    Secret::Kept { secret } => secret.clone(),
                    Secret::Env { var } => {
                        (self.env)(var).ok_or_else(|| SendError::NoSecret(var.clone()))?
                    }
                    _ => return Err(SendError::NoSecret("(unknown)".to_owned())),
                };
                self.post(url, secret.as_bytes(), event)
            }
            Target::Mail {
                smtp,
                to,
                from,
                password_env,
            } => {
                let password = match password_env {
                    Some(var) => {
                        Some((self.env)(var).ok_or_else(|| SendError::NoSecret(var.clone()))?)
                    }
                    None => None,
                };
                mail::send(smtp, from, to, password, event, self.timeout)?;
                Ok(250)
            }
            _ => Err(SendError::Transport {
                url: notifier.target.shown(),
                message: "this orcho-notify does not know how to send there".to_owned(),
            }),
        }
    }

    fn post(&self, url: &str, secret: &[u8], event: &Event) -> Result<u16, SendError> {
        let body = serde_json::to_vec(event).map_err(|e| SendError::Transport {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let secs = self.timeout.as_secs().max(1);
        let transport = |error: ureq::Error| match error {
            ureq::Error::Timeout(_) => SendError::Timeout {
                url: url.to_owned(),
                secs,
            },
            ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => SendError::Timeout {
                url: url.to_owned(),
                secs,
            },
            other => SendError::Transport {
                url: url.to_owned(),
                message: other.to_string(),
            },
        };
        let mut response = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(self.timeout))
            .build()
            .content_type("application/json")
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(SIGNATURE_HEADER, sign(secret, timestamp, &body))
            .header(EVENT_HEADER, event.event.as_str())
            .header(DELIVERY_HEADER, event.id.as_str())
            .send(&body[..])
            .map_err(transport)?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(status);
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(4096)
            .read_to_string()
            .unwrap_or_default();
        let body: String = text.trim().chars().take(200).collect();
        Err(SendError::Status {
            url: url.to_owned(),
            status,
            body,
        })
    }
}

/// What one [`deliver`] pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pass {
    /// Events sent.
    pub sent: usize,
    /// Attempts that failed and will be tried again.
    pub failed: usize,
    /// Attempts that failed for the last time.
    pub gave_up: usize,
    /// Another process held the delivery lock: it delivers, this pass did
    /// nothing.
    pub busy: bool,
}

/// Why a pass could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliverError {
    /// The store could not be read or written.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The store's log could not be written or its lock taken.
    #[error(transparent)]
    Store(#[from] orcho::core::StoreError),
}

/// Sends every event due in `store` now, once, with `sender`, and logs each
/// attempt; a failure is tried again on `retry`'s schedule by a later pass.
/// When another process is delivering, nothing is done ([`Pass::busy`]).
///
/// # Errors
///
/// The store cannot be read, or the log written.
pub fn deliver(store: &Store, sender: &Sender, retry: &Retry) -> Result<Pass, DeliverError> {
    deliver_within(store, sender, retry, Duration::ZERO)
}

/// [`deliver`], waiting up to `wait` for another process that is
/// delivering to finish first. A host that made an event asks this way:
/// the other process may have read what was due before the event existed.
///
/// # Errors
///
/// As [`deliver`].
pub fn deliver_within(
    store: &Store,
    sender: &Sender,
    retry: &Retry,
    wait: Duration,
) -> Result<Pass, DeliverError> {
    let Some(_held) = store.delivering(wait)? else {
        return Ok(Pass {
            busy: true,
            ..Pass::default()
        });
    };
    let mut pass = Pass::default();
    for due in store.due(Timestamp::now())? {
        let outcome = match sender.send(&due.notifier, &due.event) {
            Ok(status) => {
                pass.sent += 1;
                Outcome::Sent {
                    status: Some(status),
                }
            }
            Err(e) => match retry.after_failure(due.attempt, Timestamp::now(), e.to_string()) {
                failed @ Outcome::Failed { .. } => {
                    pass.failed += 1;
                    failed
                }
                other => {
                    pass.gave_up += 1;
                    other
                }
            },
        };
        store.record_delivery(&due.delivery(Timestamp::now(), outcome))?;
    }
    Ok(pass)
}

/// Delivers until `stop` says so: a pass every `every`, and one as soon as
/// a retry's time comes. A pass that fails is said to `failed` and tried
/// again at the next.
pub fn watch(
    store: &Store,
    sender: &Sender,
    retry: &Retry,
    every: Duration,
    stop: &dyn Fn() -> bool,
    failed: &mut dyn FnMut(&DeliverError),
) {
    const STEP: Duration = Duration::from_millis(100);
    while !stop() {
        if let Err(e) = deliver(store, sender, retry) {
            failed(&e);
        }
        let until = std::time::Instant::now() + every;
        while std::time::Instant::now() < until && !stop() {
            std::thread::sleep(STEP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_the_hmac_of_the_timestamp_and_the_body() {
        // Computed independently:
        // `printf '1700000000.{}' | openssl dgst -sha256 -hmac key`.
        assert_eq!(
            sign(b"key", 1_700_000_000, b"{}"),
            "sha256=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
        );
    }

    #[test]
    fn a_signature_of_another_body_time_or_secret_is_refused() {
        let good = sign(b"key", 1, b"body");
        assert!(verify(b"key", 1, b"body", &good));
        assert!(!verify(b"key", 2, b"body", &good));
        assert!(!verify(b"key", 1, b"bodY", &good));
        assert!(!verify(b"kez", 1, b"body", &good));
        assert!(!verify(b"key", 1, b"body", "sha256=zz"));
        assert!(!verify(b"key", 1, b"body", &good[7..]));
    }
}
