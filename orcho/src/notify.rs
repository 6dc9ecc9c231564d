//! Notifications: where a store's events are sent, which events are due,
//! and what was sent.
//!
//! A [`Notifier`] is kept in the store ([`Store::add_notifier`]), so a team
//! on a shared store shares them. Its events are worked out from the store
//! itself, not emitted by whichever host changed it: [`Store::due`]
//! compares what the store holds now (the decision points that wait, the
//! decisions on points a notifier was told of, the runs that ended) with
//! the log of what was sent ([`Store::deliveries`]), and returns what is
//! still to send, with the retries whose time has come. Whatever host or
//! machine opened, decided or ended something, the next delivery pass sees
//! it, once; a pass that was never made leaves nothing behind that the
//! next does not send.
//!
//! A notifier hears of every point that waits (also one opened before it
//! was added), of the decisions on points it was told of, of runs started
//! after it was added (or whose points it was told of) that ended, and of
//! delivery gates whose required receipts are not all proven.
//!
//! Sending is the host's (the `orcho-notify` crate sends webhooks and
//! mail): it records each attempt with [`Store::record_delivery`].

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    time::Duration,
};

use orcho_core::{
    RunId, StoreError, Timestamp,
    storage::{Created, StoreLog, StoreSet},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{EngineError, Store, point::PointView};

/// The version of the notification document (the JSON body a webhook
/// receives).
pub const EVENT_SCHEMA: u32 = 1;

/// The version of a notifier's document and of the delivery log's lines.
const NOTIFIER_SCHEMA: u32 = 1;

/// What happened, that a notifier may be told of.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A decision point opened: a run waits for a person.
    PointOpened,
    /// A point a notifier was told of was decided.
    Decided,
    /// A run ended.
    RunEnded,
    /// A run reached its delivery gate with required receipts not proven.
    ProofFailed,
    /// A test a person sent (`orcho notify test`); never subscribed to.
    Test,
}

impl EventKind {
    /// Every kind, in the order they are listed.
    pub const ALL: [Self; 4] = [
        Self::PointOpened,
        Self::Decided,
        Self::RunEnded,
        Self::ProofFailed,
    ];

    /// How it is spelled: `point_opened`, `decided`, `run_ended`,
    /// `proof_failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PointOpened => "point_opened",
            Self::Decided => "decided",
            Self::RunEnded => "run_ended",
            Self::ProofFailed => "proof_failed",
            Self::Test => "test",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for EventKind {
    type Err = NotifyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| NotifyError::UnknownEvent {
                given: s.to_owned(),
                // A slip, or a part of the name (`ended`, `opened`).
                near: orcho_core::nearest(s, Self::ALL.iter().map(|k| k.as_str()))
                    .or_else(|| {
                        Self::ALL
                            .iter()
                            .map(|k| k.as_str())
                            .find(|k| !s.is_empty() && k.split('_').any(|part| part == s))
                    })
                    .map(str::to_owned),
            })
    }
}

/// Where a store's events are sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Notifier {
    /// Its name: a plain name, unique in the store.
    pub name: String,
    /// Where it sends.
    pub target: Target,
    /// What it is told of (never empty).
    pub events: Vec<EventKind>,
    /// The address of the web inbox (`orcho serve`) its links point to,
    /// when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbox_url: Option<String>,
    /// When it was added: runs started since are told of when they end.
    pub created_at: Timestamp,
}

impl Notifier {
    /// A notifier `name` sending to `target`, told of every event, added
    /// now.
    ///
    /// # Errors
    ///
    /// A name that is not a plain name.
    pub fn new(name: &str, target: Target) -> Result<Self, NotifyError> {
        orcho_core::ids::validate("notifier name", name).map_err(|e| NotifyError::BadName {
            name: name.to_owned(),
            why: e.to_string(),
        })?;
        Ok(Self {
            name: name.to_owned(),
            target,
            events: EventKind::ALL.to_vec(),
            inbox_url: None,
            created_at: Timestamp::now(),
        })
    }

    /// Told only of `events` (all of them when empty).
    #[must_use]
    pub fn with_events(mut self, events: Vec<EventKind>) -> Self {
        self.events = if events.is_empty() {
            EventKind::ALL.to_vec()
        } else {
            let mut events = events;
            events.sort();
            events.dedup();
            events
        };
        self
    }

    /// Its links point to the web inbox at `url` (`http://host:port`).
    #[must_use]
    pub fn with_inbox_url(mut self, url: Option<String>) -> Self {
        self.inbox_url = url.map(|u| u.trim_end_matches('/').to_owned());
        self
    }

    /// Added at `at` (a test's clock).
    #[must_use]
    pub fn created(mut self, at: Timestamp) -> Self {
        self.created_at = at;
        self
    }

    /// Whether it is told of `kind`.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.events.contains(&kind)
    }

    /// The link to `run`'s page on the web inbox, when it knows one.
    pub fn link(&self, run: &RunId) -> Option<String> {
        self.inbox_url
            .as_ref()
            .map(|base| format!("{base}/runs/{run}"))
    }
}

/// Where a notifier sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Target {
    /// An HTTP POST of the event's JSON document, signed.
    Webhook {
        /// Where to.
        url: String,
        /// The secret its signature is made with.
        secret: Secret,
    },
    /// A mail through an SMTP server.
    Mail {
        /// The server: `smtp://host:port` (plain, or `?tls=required` for
        /// STARTTLS) or `smtps://host:port` (TLS from the start), with the
        /// user (`smtp://user@host`) when it asks for one; never a password.
        smtp: String,
        /// Who receives it.
        to: Vec<String>,
        /// Who sends it.
        from: String,
        /// The variable that holds the server's password where events are
        /// sent from, when it asks for one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password_env: Option<String>,
    },
}

impl Target {
    /// Where it sends, for people.
    pub fn shown(&self) -> String {
        match self {
            Self::Webhook { url, .. } => url.clone(),
            Self::Mail { to, smtp, .. } => format!("mail to {} via {smtp}", to.join(", ")),
        }
    }
}

/// The secret a webhook's signature is made with.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Secret {
    /// Read from the sending host's environment variable `var` at each
    /// delivery: it is kept nowhere in the store.
    Env {
        /// The variable.
        var: String,
    },
    /// Generated when the notifier was added and kept in the store, which
    /// every machine of a shared store reads.
    Kept {
        /// The secret, hex.
        secret: String,
    },
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env { var } => write!(f, "Env({var})"),
            Self::Kept { .. } => f.write_str("Kept(..)"),
        }
    }
}

impl Secret {
    /// A new random secret, kept in the store.
    ///
    /// # Errors
    ///
    /// When the system's random source fails.
    pub fn generate() -> Result<Self, NotifyError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| NotifyError::Random(e.to_string()))?;
        Ok(Self::Kept {
            secret: bytes.iter().map(|b| format!("{b:02x}")).collect(),
        })
    }
}

/// The document a notifier is sent: what happened, and a `text` line that
/// a chat's incoming webhook shows as it is. Its JSON Schema is
/// `docs/notification.schema.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Event {
    /// The document's version.
    pub schema: u32,
    /// What happened, and to what: the same event always has the same id
    /// (`point_opened/<run>/<point>`), so a receiver can drop repeats.
    pub id: String,
    /// What happened.
    pub event: EventKind,
    /// When it was found (RFC 3339, UTC).
    pub at: String,
    /// The run.
    pub run: RunRef,
    /// The decision point, for `point_opened` and `decided`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<PointRef>,
    /// The decision, for `decided`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<DecidedRef>,
    /// How the run ended, for `run_ended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<EndedRef>,
    /// The required commands not proven, for `proof_failed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unproven: Vec<UnprovenRef>,
    /// The run's page on the web inbox, when the notifier knows where it
    /// is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The event in one line, for people (and chats' incoming webhooks).
    pub text: String,
}

/// A run, as an event names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RunRef {
    /// Its id.
    pub id: String,
    /// Its task, when it was given one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Its status (`awaiting_phase_handoff`, `completed`, …).
    pub status: String,
    /// The phase it is at, or ended at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The checkout it was started in.
    pub checkout: String,
    /// The machine it was started on, with a shared store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The repository (its remote), with a shared store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// A decision point, as an event names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PointRef {
    /// Its kind: `handoff`, `delivery`, `intake`, `plan approval`, `planner
    /// questions`, `deviation`.
    pub kind: String,
    /// Its id, for a kind with several per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What waits, in one line.
    pub headline: String,
    /// What can be decided.
    pub actions: Vec<ActionRef>,
}

/// One action of a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ActionRef {
    /// Its name, as every host takes it.
    pub name: String,
    /// What it does, in one line.
    pub does: String,
}

/// A decision, as an event names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct DecidedRef {
    /// The action decided.
    pub action: String,
    /// Who decided, when the store says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The note given with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct EndedRef {
    /// `completed`, `halted`, `failed` or `cancelled`.
    pub status: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A required command not proven at a delivery gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UnprovenRef {
    /// The command.
    pub command: String,
    /// Why it is not proven, in words.
    pub why: String,
}

/// One attempt to send an event to a notifier, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Delivery {
    /// The line's version.
    pub schema: u32,
    /// The notifier.
    pub notifier: String,
    /// The event's id.
    pub event: String,
    /// Which attempt (from 1).
    pub attempt: u32,
    /// When it was made.
    pub at: Timestamp,
    /// How it went.
    pub outcome: Outcome,
    /// The event sent (on each attempt: a retry sends the same document).
    pub payload: Event,
}

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The endpoint took it.
    Sent {
        /// The HTTP status (none for mail).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// It failed; it is tried again at `retry_at`.
    Failed {
        /// Why.
        error: String,
        /// When it is tried again.
        retry_at: Timestamp,
    },
    /// It failed, and it is not tried again.
    GaveUp {
        /// Why the last attempt failed.
        error: String,
    },
}

/// How often, and how soon, a failed delivery is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retry {
    /// Attempts in all, the first among them.
    pub attempts: u32,
    /// The wait after the first failure; each next wait is four times the
    /// one before.
    pub first: Duration,
}

impl Default for Retry {
    /// Five attempts: again after 10 s, 40 s, 160 s and 640 s.
    fn default() -> Self {
        Self {
            attempts: 5,
            first: Duration::from_secs(10),
        }
    }
}

impl Retry {
    /// What attempt `attempt` (from 1) that failed with `error` at `at`
    /// becomes: tried again after its wait, or given up.
    pub fn after_failure(&self, attempt: u32, at: Timestamp, error: String) -> Outcome {
        if attempt >= self.attempts {
            return Outcome::GaveUp { error };
        }
        let factor = 4u32.saturating_pow(attempt.saturating_sub(1));
        let wait = self.first.saturating_mul(factor);
        match at.checked_add(wait) {
            Some(retry_at) => Outcome::Failed { error, retry_at },
            None => Outcome::GaveUp { error },
        }
    }
}

/// An event due to a notifier: what to send, and which attempt it is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Due {
    /// The notifier.
    pub notifier: Notifier,
    /// The event, with the notifier's link.
    pub event: Event,
    /// Which attempt this is (from 1).
    pub attempt: u32,
}

impl Event {
    /// A test event for `notifier`, made at `at`: what a receiver gets from
    /// `orcho notify test`.
    pub fn test(notifier: &Notifier, at: Timestamp) -> Self {
        Self {
            schema: EVENT_SCHEMA,
            id: format!("test/{}/{}", notifier.name, at.compact_millis()),
            event: EventKind::Test,
            at: at.to_string(),
            run: RunRef {
                id: String::new(),
                task: None,
                status: String::new(),
                phase: None,
                checkout: String::new(),
                machine: None,
                repository: None,
            },
            point: None,
            decided: None,
            ended: None,
            unproven: Vec::new(),
            url: notifier.inbox_url.clone(),
            text: format!(
                "a test from Orcho: the notifier `{}` reaches this endpoint",
                notifier.name
            ),
        }
    }
}

impl Due {
    /// `event` due to `notifier`, a first attempt (a test a person sends).
    pub fn now(notifier: Notifier, event: Event) -> Self {
        Self {
            notifier,
            event,
            attempt: 1,
        }
    }

    /// The log's line of this attempt, made at `at`, that went as
    /// `outcome`.
    pub fn delivery(&self, at: Timestamp, outcome: Outcome) -> Delivery {
        Delivery {
            schema: NOTIFIER_SCHEMA,
            notifier: self.notifier.name.clone(),
            event: self.event.id.clone(),
            attempt: self.attempt,
            at,
            outcome,
            payload: self.event.clone(),
        }
    }
}

/// The JSON Schema of the notification document ([`Event`]), as
/// `docs/notification.schema.json` holds it.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Event);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// A notifier could not be added, read or removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotifyError {
    /// A name that is not a plain name.
    #[error("`{name}` cannot name a notifier: {why}")]
    BadName {
        /// The name.
        name: String,
        /// Why.
        why: String,
    },
    /// The store has a notifier of that name.
    #[error("the store has a notifier named `{0}` already")]
    Exists(String),
    /// The store has no notifier of that name.
    #[error("the store has no notifier named `{given}`{}", near.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default())]
    Unknown {
        /// The name given.
        given: String,
        /// The nearest name the store has.
        near: Option<String>,
    },
    /// An event name that names no event.
    #[error("`{given}` is no event{}; the events: point_opened, decided, run_ended, proof_failed", near.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default())]
    UnknownEvent {
        /// The name given.
        given: String,
        /// The nearest event.
        near: Option<String>,
    },
    /// A document of the store that does not read.
    #[error("the notifier `{name}` in the store does not read: {why}")]
    Damaged {
        /// Its name.
        name: String,
        /// Why.
        why: String,
    },
    /// The system's random source failed.
    #[error("cannot make a secret: {0}")]
    Random(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Serialize, Deserialize)]
struct NotifierDoc {
    schema: u32,
    #[serde(flatten)]
    notifier: Notifier,
}

impl Store {
    /// Adds `notifier` to the store: from now on, [`due`](Self::due) has
    /// its events.
    ///
    /// # Errors
    ///
    /// A notifier of that name exists, or the store cannot be written.
    pub fn add_notifier(&self, notifier: &Notifier) -> Result<(), NotifyError> {
        let bytes = serde_json::to_vec_pretty(&NotifierDoc {
            schema: NOTIFIER_SCHEMA,
            notifier: notifier.clone(),
        })
        .map_err(|e| NotifyError::Damaged {
            name: notifier.name.clone(),
            why: e.to_string(),
        })?;
        match self
            .storage()
            .store_create(StoreSet::Notifiers, &notifier.name, &bytes)?
        {
            Created::New => Ok(()),
            _ => Err(NotifyError::Exists(notifier.name.clone())),
        }
    }

    /// The store's notifiers, by name.
    ///
    /// # Errors
    ///
    /// The store cannot be read, or a notifier does not read.
    pub fn notifiers(&self) -> Result<Vec<Notifier>, NotifyError> {
        let storage = self.storage();
        let mut out = Vec::new();
        for name in storage.store_names(StoreSet::Notifiers)? {
            let Some(bytes) = storage.store_get(StoreSet::Notifiers, &name)? else {
                // Removed meanwhile.
                continue;
            };
            let doc: NotifierDoc =
                serde_json::from_slice(&bytes).map_err(|e| NotifyError::Damaged {
                    name: name.clone(),
                    why: e.to_string(),
                })?;
            out.push(doc.notifier);
        }
        Ok(out)
    }

    /// The notifier `name`.
    ///
    /// # Errors
    ///
    /// There is none of that name (with the nearest there is), or the
    /// store cannot be read.
    pub fn notifier(&self, name: &str) -> Result<Notifier, NotifyError> {
        let all = self.notifiers()?;
        let near =
            orcho_core::nearest(name, all.iter().map(|n| n.name.as_str())).map(str::to_owned);
        all.into_iter()
            .find(|n| n.name == name)
            .ok_or(NotifyError::Unknown {
                given: name.to_owned(),
                near,
            })
    }

    /// Removes the notifier `name`: nothing more is sent to it (what was
    /// sent stays in the log).
    ///
    /// # Errors
    ///
    /// There is none of that name, or the store cannot be written.
    pub fn remove_notifier(&self, name: &str) -> Result<(), NotifyError> {
        if self.storage().store_remove(StoreSet::Notifiers, name)? {
            return Ok(());
        }
        Err(self
            .notifier(name)
            .err()
            .unwrap_or_else(|| NotifyError::Unknown {
                given: name.to_owned(),
                near: None,
            }))
    }

    /// Every attempt to send an event, oldest first. A line that does not
    /// read is left out.
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub fn deliveries(&self) -> Result<Vec<Delivery>, StoreError> {
        let bytes = self.storage().store_read(StoreLog::Notifications)?;
        Ok(bytes
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice::<Delivery>(line).ok())
            .filter(|d| d.schema == NOTIFIER_SCHEMA)
            .collect())
    }

    /// Records an attempt to send an event.
    ///
    /// # Errors
    ///
    /// The store cannot be written.
    pub fn record_delivery(&self, delivery: &Delivery) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(delivery)
            .map_err(|e| StoreError::backend(format!("cannot encode a delivery: {e}"), None))?;
        line.push(b'\n');
        self.storage().store_append(StoreLog::Notifications, &line)
    }

    /// Takes the store-wide lock of delivering within `wait` (one process
    /// delivers at a time, across the machines of a shared store); `None`
    /// when another holds it.
    ///
    /// # Errors
    ///
    /// When it cannot be asked for.
    pub fn delivering(
        &self,
        wait: Duration,
    ) -> Result<Option<Box<dyn orcho_core::storage::Held>>, StoreError> {
        self.storage().store_lock(StoreLog::Notifications, wait)
    }

    /// What is due to each notifier at `now`: events the store holds that
    /// a notifier was not sent yet, and retries whose time has come.
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub fn due(&self, now: Timestamp) -> Result<Vec<Due>, EngineError> {
        let notifiers = self.notifiers().map_err(|e| self.notify_err(e))?;
        if notifiers.is_empty() {
            return Ok(Vec::new());
        }
        let log = self.deliveries().map_err(|e| self.store_err(e))?;
        // The last attempt of each (notifier, event).
        let mut last: BTreeMap<(&str, &str), &Delivery> = BTreeMap::new();
        for d in &log {
            last.insert((d.notifier.as_str(), d.event.as_str()), d);
        }
        let mut due = Vec::new();
        // Retries first: a document already sent once is sent as it was.
        for notifier in &notifiers {
            for ((name, _), d) in &last {
                if *name != notifier.name {
                    continue;
                }
                if let Outcome::Failed { retry_at, .. } = d.outcome
                    && retry_at <= now
                {
                    due.push(Due {
                        notifier: notifier.clone(),
                        event: d.payload.clone(),
                        attempt: d.attempt + 1,
                    });
                }
            }
        }
        let found = Found::read(self, &notifiers, &last, now)?;
        for notifier in &notifiers {
            for event in &found.events {
                if !notifier.wants(event.event)
                    || last.contains_key(&(notifier.name.as_str(), event.id.as_str()))
                    || !found.is_for(notifier, event, &last)
                {
                    continue;
                }
                let mut event = event.clone();
                event.url = notifier.link(&run_of(&event));
                if let Some(url) = &event.url {
                    event.text = format!("{} — {url}", event.text);
                }
                due.push(Due {
                    notifier: notifier.clone(),
                    event,
                    attempt: 1,
                });
            }
        }
        Ok(due)
    }
}

impl Store {
    fn store_err(&self, e: StoreError) -> EngineError {
        EngineError::store(camino::Utf8Path::new(&self.location()), e)
    }

    fn notify_err(&self, e: NotifyError) -> EngineError {
        match e {
            NotifyError::Store(e) => self.store_err(e),
            other => self.store_err(StoreError::backend(other.to_string(), None)),
        }
    }
}

fn run_of(event: &Event) -> RunId {
    event
        .run
        .id
        .parse()
        .unwrap_or_else(|_| RunId::new("unknown".to_owned()).expect("a valid id"))
}

/// The events the store holds now.
struct Found {
    events: Vec<Event>,
}

impl Found {
    fn read(
        store: &Store,
        notifiers: &[Notifier],
        last: &BTreeMap<(&str, &str), &Delivery>,
        now: Timestamp,
    ) -> Result<Self, EngineError> {
        let at = now.to_string();
        let mut events = Vec::new();
        let mut open = BTreeSet::new();
        // What waits now.
        let team = store.team_inbox(&crate::InboxFilter::all())?;
        let waiting: BTreeSet<RunId> = team.inbox.pending().map(|p| p.run().clone()).collect();
        for run in &waiting {
            let Some(point) = store.open_point(run)? else {
                continue;
            };
            let view = store.status(run)?;
            let run_ref = run_ref(store, &view, team.origins.get(run));
            let key = point_key(&point);
            open.insert(format!("{run}/{key}"));
            let actions: Vec<ActionRef> = point
                .actions
                .iter()
                .map(|a| ActionRef {
                    name: a.name.clone(),
                    does: a.does.clone(),
                })
                .collect();
            events.push(Event {
                schema: EVENT_SCHEMA,
                id: format!("point_opened/{run}/{key}"),
                event: EventKind::PointOpened,
                at: at.clone(),
                text: format!(
                    "run {} {}waits: {} — {}",
                    short(run),
                    task_said(&run_ref),
                    point.headline,
                    actions
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                run: run_ref.clone(),
                point: Some(PointRef {
                    kind: point.kind.as_str().to_owned(),
                    id: point.id.as_ref().map(ToString::to_string),
                    headline: point.headline.clone(),
                    actions,
                }),
                decided: None,
                ended: None,
                unproven: Vec::new(),
                url: None,
            });
            if point.kind == crate::point::PointKind::Delivery {
                let gate = store.delivery_gate(run)?;
                let unproven: Vec<UnprovenRef> = gate
                    .gaps()
                    .iter()
                    .map(|g| UnprovenRef {
                        command: g.command().to_string(),
                        why: g.to_string(),
                    })
                    .collect();
                if !unproven.is_empty() {
                    events.push(Event {
                        schema: EVENT_SCHEMA,
                        id: format!("proof_failed/{run}/delivery"),
                        event: EventKind::ProofFailed,
                        at: at.clone(),
                        text: format!(
                            "run {} {}is not proven at its delivery gate: {}",
                            short(run),
                            task_said(&run_ref),
                            unproven
                                .iter()
                                .map(|u| format!("`{}`", u.command))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        run: run_ref.clone(),
                        point: None,
                        decided: None,
                        ended: None,
                        unproven,
                        url: None,
                    });
                }
            }
        }
        // Points a notifier was told of that wait no more: decided.
        let told: BTreeSet<String> = last
            .keys()
            .filter_map(|(_, event)| event.strip_prefix("point_opened/"))
            .map(str::to_owned)
            .collect();
        let mut runs_told = BTreeSet::new();
        for point in &told {
            let Some((run, key)) = point.split_once('/') else {
                continue;
            };
            let Ok(run) = run.parse::<RunId>() else {
                continue;
            };
            runs_told.insert(run.clone());
            if open.contains(point) {
                continue;
            }
            let Some(decided) = decision_of(store, &run, key)? else {
                continue;
            };
            let view = store.status(&run)?;
            let run_ref = run_ref(store, &view, team.origins.get(&run));
            events.push(Event {
                schema: EVENT_SCHEMA,
                id: format!("decided/{run}/{key}"),
                event: EventKind::Decided,
                at: at.clone(),
                text: format!(
                    "run {} {}: {} decided `{}`{}",
                    short(&run),
                    task_said(&run_ref).trim_end(),
                    point_said(key),
                    decided.action,
                    decided
                        .by
                        .as_ref()
                        .map(|b| format!(" by {b}"))
                        .unwrap_or_default()
                ),
                run: run_ref,
                point: Some(PointRef {
                    kind: key.to_owned(),
                    id: None,
                    headline: String::new(),
                    actions: Vec::new(),
                })
                .map(|mut p| {
                    (p.kind, p.id) = split_key(key);
                    p
                }),
                decided: Some(decided),
                ended: None,
                unproven: Vec::new(),
                url: None,
            });
        }
        // Runs that ended: started since the oldest notifier was added, or
        // told of.
        let oldest = notifiers
            .iter()
            .map(|n| n.created_at.compact_millis())
            .min()
            .unwrap_or_default();
        let listed = store.runs.runs()?;
        for run in listed
            .into_iter()
            .filter(|r| r.as_str() >= oldest.as_str() || runs_told.contains(r))
        {
            let ended = format!("run_ended/{run}");
            if notifiers
                .iter()
                .all(|n| last.contains_key(&(n.name.as_str(), ended.as_str())))
            {
                continue;
            }
            let view = store.status(&run)?;
            if !view.status.is_terminal() {
                continue;
            }
            let run_ref = run_ref(store, &view, team.origins.get(&run));
            events.push(Event {
                schema: EVENT_SCHEMA,
                id: ended,
                event: EventKind::RunEnded,
                at: at.clone(),
                text: format!(
                    "run {} {}ended {}{}",
                    short(&run),
                    task_said(&run_ref),
                    view.status.as_str(),
                    view.reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ),
                run: run_ref,
                point: None,
                decided: None,
                ended: Some(EndedRef {
                    status: view.status.as_str().to_owned(),
                    reason: view.reason.clone(),
                }),
                unproven: Vec::new(),
                url: None,
            });
        }
        Ok(Self { events })
    }

    /// Whether `event` is for `notifier`: a decision only on a point it was
    /// told of; a run's end only for a run started since it was added, or
    /// whose point it was told of.
    fn is_for(
        &self,
        notifier: &Notifier,
        event: &Event,
        last: &BTreeMap<(&str, &str), &Delivery>,
    ) -> bool {
        let told = |prefix: &str| {
            last.keys().any(|(name, id)| {
                *name == notifier.name
                    && id
                        .strip_prefix("point_opened/")
                        .is_some_and(|rest| rest.starts_with(prefix))
            })
        };
        match event.event {
            EventKind::Decided => event.id.strip_prefix("decided/").is_some_and(&told),
            EventKind::RunEnded => {
                event.run.id.as_str() >= notifier.created_at.compact_millis().as_str()
                    || told(&format!("{}/", event.run.id))
            }
            _ => true,
        }
    }
}

/// A point's key in an event's id: its kind, and its id for a kind with
/// several per run (`handoff:0001-review`, `delivery`).
fn point_key(point: &PointView) -> String {
    let kind = point.kind.as_str().replace(' ', "_");
    match &point.id {
        Some(id)
            if !matches!(
                point.kind,
                crate::point::PointKind::Delivery | crate::point::PointKind::Intake
            ) =>
        {
            format!("{kind}:{id}")
        }
        _ => kind,
    }
}

/// A point key in words: ``handoff `0001-review` ``, `delivery`.
fn point_said(key: &str) -> String {
    match split_key(key) {
        (kind, Some(id)) => format!("{kind} `{id}`"),
        (kind, None) => kind,
    }
}

/// A point key's kind (as people name it) and id.
fn split_key(key: &str) -> (String, Option<String>) {
    match key.split_once(':') {
        Some((kind, id)) => (kind.replace('_', " "), Some(id.to_owned())),
        None => (key.replace('_', " "), None),
    }
}

/// The decision recorded on the point `key` of `run`, when the store has
/// one.
fn decision_of(store: &Store, run: &RunId, key: &str) -> Result<Option<DecidedRef>, EngineError> {
    let (kind, id) = split_key(key);
    Ok(match (kind.as_str(), id) {
        ("handoff", Some(id)) => {
            let Ok(id) = id.parse() else { return Ok(None) };
            store.handoff_decision(run, &id)?.map(|d| DecidedRef {
                action: d.decision().payload().action().as_str().to_owned(),
                by: Some(crate::decide::who_decided(d.decision())),
                note: d.decision().payload().text().map(str::to_owned),
            })
        }
        ("delivery", _) => store.delivery_decision(run)?.map(|d| DecidedRef {
            action: d.decision().payload().action().as_str().to_owned(),
            by: Some(crate::decide::who_decided(d.decision())),
            note: d
                .decision()
                .payload()
                .note()
                .or(d.decision().payload().message())
                .map(str::to_owned),
        }),
        ("permission", Some(id)) => {
            let Ok(id) = id.parse::<orcho_core::HandoffId>() else {
                return Ok(None);
            };
            store
                .asks(run)?
                .into_iter()
                .find(|a| a.id == id)
                .and_then(|a| a.decision)
                .map(|d| DecidedRef {
                    action: d.payload().action().as_str().to_owned(),
                    by: Some(crate::decide::who_decided(&d)),
                    note: d.payload().note().map(str::to_owned),
                })
        }
        ("intake", _) => store.intake_decision(run)?.map(|d| DecidedRef {
            action: d.decision().payload().action().as_str().to_owned(),
            by: Some(crate::decide::who_decided(d.decision())),
            note: d.decision().payload().message().map(str::to_owned),
        }),
        (_, Some(id)) => {
            let Ok(id) = id.parse::<orcho_core::HandoffId>() else {
                return Ok(None);
            };
            let by = store
                .touchpoint_decision(run, &id)?
                .map(|d| crate::decide::who_decided(d.decision()));
            store
                .touchpoints(run)?
                .into_iter()
                .find(|t| t.id == id)
                .and_then(|t| t.resolution)
                .map(|r| DecidedRef {
                    action: resolution_word(&r).to_owned(),
                    by,
                    note: None,
                })
        }
        _ => None,
    })
}

fn resolution_word(resolution: &orcho_handoff::supervision::Resolution) -> &'static str {
    use orcho_handoff::supervision::Resolution;
    match resolution {
        Resolution::Answers(_) => "answered",
        Resolution::Plan(_) => "plan decided",
        Resolution::Deviation(_) => "deviation decided",
        _ => "decided",
    }
}

fn run_ref(
    store: &Store,
    view: &crate::RunView,
    origin: Option<&orcho_core::storage::RunOrigin>,
) -> RunRef {
    let origin = origin
        .cloned()
        .or_else(|| store.origin(&view.run).ok().flatten());
    RunRef {
        id: view.run.to_string(),
        task: view.task.as_ref().map(|t| first_line(t, 120)),
        status: view.status.as_str().to_owned(),
        phase: view.phase.as_ref().map(ToString::to_string),
        checkout: view.checkout.to_string(),
        machine: origin.as_ref().map(|o| o.machine.clone()),
        repository: origin.and_then(|o| o.repository),
    }
}

/// The first line of `text`, at most `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

fn short(run: &RunId) -> &str {
    // The time part says nothing a person tells runs apart by: the random
    // part does.
    let id = run.as_str();
    id.rsplit_once('-')
        .map_or(id, |(_, random)| random.get(..8).unwrap_or(random))
}

fn task_said(run: &RunRef) -> String {
    run.task
        .as_ref()
        .map(|t| format!("(\"{}\") ", first_line(t, 60)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_schema_is_the_one_the_types_make() {
        let shipped = include_str!("../../docs/notification.schema.json");
        assert_eq!(
            shipped,
            schema(),
            "docs/notification.schema.json is out of date: write `orcho schema notification` to it"
        );
    }

    #[test]
    fn a_secret_is_never_shown_by_debug() {
        let secret = Secret::generate().expect("random");
        let Secret::Kept { secret: hex } = &secret else {
            panic!("kept");
        };
        assert_eq!(hex.len(), 64);
        assert!(!format!("{secret:?}").contains(hex.as_str()));
    }
}
