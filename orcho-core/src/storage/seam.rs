//! [`Storage`]: what Orcho keeps per run, named by what it is.

use std::{collections::BTreeMap, fmt, time::Duration};

use camino::Utf8PathBuf;

use crate::{HandoffId, RunId, StoreError};

/// One kind of decision point, as storage tells their documents apart.
///
/// A run has at most one delivery gate and one intake question (named by the
/// points [`DELIVERY`](PointKind::Delivery) and
/// [`INTAKE`](PointKind::Intake)); phase handoffs and supervision
/// touchpoints are many, each named by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PointKind {
    /// A phase handoff.
    Handoff,
    /// A supervision touchpoint: planner questions, plan approval, a
    /// deviation.
    Touchpoint,
    /// The delivery gate.
    Delivery,
    /// The pre-run intake question.
    Intake,
    /// A permission question an agent of a phase asked (a tool call the
    /// rules answer `ask`), while the run goes on.
    Permission,
}

impl PointKind {
    /// Every kind, in the order a run meets them first.
    pub const ALL: &'static [Self] = &[
        Self::Intake,
        Self::Touchpoint,
        Self::Permission,
        Self::Handoff,
        Self::Delivery,
    ];

    /// Its name in messages and keys: `handoff`, `touchpoint`, `delivery`,
    /// `intake`, `permission`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Handoff => "handoff",
            Self::Touchpoint => "touchpoint",
            Self::Delivery => "delivery",
            Self::Intake => "intake",
            Self::Permission => "permission",
        }
    }
}

impl fmt::Display for PointKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A document a store keeps for a run, named by what it is.
///
/// Documents are bytes to a [`Storage`]: each crate encodes and decodes its
/// own (see [`get_document`](super::get_document) and friends), so a backend never
/// needs to know their shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Item<'a> {
    /// The run's state snapshot, as current as its last transition.
    Snapshot,
    /// What the host that started the run keeps with it.
    HostMetadata,
    /// The run's evidence bundle, once written.
    Evidence,
    /// The question of a decision point (a handoff, a touchpoint, the
    /// delivery gate, the intake question).
    Question(PointKind, &'a HandoffId),
    /// The one decision recorded on a decision point.
    Decision(&'a HandoffId),
    /// What acting on a decision point's decision did.
    Outcome(PointKind, &'a HandoffId),
    /// An advice artifact, by its id.
    Advice(&'a str),
    /// The waiver a `continue_with_waiver` decision on a handoff gave.
    Waiver(&'a HandoffId),
    /// The binary patch the run's delivery gate delivers.
    DeliveryPatch,
    /// The binary patch of the target's uncommitted changes that intake
    /// included.
    IntakeSeed,
}

/// A set of documents of a run that can be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Set {
    /// The questions of the decision points of one kind.
    Questions(PointKind),
    /// The advice artifacts.
    Advice,
    /// The waivers.
    Waivers,
}

/// An append-only log of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Log {
    /// The run's own journal: every transition, in order, the source of
    /// truth. Only the holder of the run's [`RunLease`] appends to it.
    Run,
    /// The journal of the run's phase handoffs (opened, decided, resumed,
    /// autopilot stops), appended under the handoffs' lock.
    Handoffs,
}

/// A set of named documents of the store as a whole, shared by every run
/// (and, on a shared store, by every machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreSet {
    /// Where the store's events are sent: one document per notifier, by
    /// its name.
    Notifiers,
}

/// An append-only log of the store as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreLog {
    /// Each event sent to a notifier, and each attempt to deliver it.
    Notifications,
}

/// What a write that must be the first one did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Created {
    /// The document is written: this call was the first.
    New,
    /// A document was there already and is left as it is.
    Exists,
}

/// What a run is created with, in one step: it exists whole or not at all.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct NewRun<'a> {
    /// The first line of its journal (the run's start).
    pub first_event: &'a [u8],
    /// Its first snapshot.
    pub snapshot: &'a [u8],
    /// What the host keeps with it, if anything.
    pub host_metadata: Option<&'a [u8]>,
}

impl<'a> NewRun<'a> {
    /// A run whose journal starts with `first_event` and whose snapshot is
    /// `snapshot`.
    pub fn new(first_event: &'a [u8], snapshot: &'a [u8]) -> Self {
        Self {
            first_event,
            snapshot,
            host_metadata: None,
        }
    }

    /// With the host's metadata.
    #[must_use]
    pub fn with_host_metadata(mut self, host: Option<&'a [u8]>) -> Self {
        self.host_metadata = host;
        self
    }
}

/// The runs of a store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunListing {
    /// Every run, oldest first (run ids sort by creation time).
    pub runs: Vec<RunId>,
    /// What the store holds that is not a run it can name, and why (a
    /// directory whose name is no run id, say).
    pub unnamed: Vec<(String, String)>,
}

/// Where a run of a shared store was created: the machine and checkout
/// that hold its worktree, receipts and phase logs, and so the only place
/// it is driven from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RunOrigin {
    /// The machine's label (its host name, usually).
    pub machine: String,
    /// The checkout's path on that machine.
    pub checkout: String,
    /// The repository the checkout is of, when known.
    pub repository: Option<String>,
    /// Whether that is the machine and checkout asking.
    pub here: bool,
}

impl RunOrigin {
    /// A run created on `machine` in `checkout`; `here` when that is the
    /// machine and checkout asking.
    pub fn new(machine: impl Into<String>, checkout: impl Into<String>, here: bool) -> Self {
        Self {
            machine: machine.into(),
            checkout: checkout.into(),
            repository: None,
            here,
        }
    }

    /// With the repository.
    #[must_use]
    pub fn with_repository(mut self, repository: Option<String>) -> Self {
        self.repository = repository;
        self
    }
}

impl fmt::Display for RunOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.machine, self.checkout)
    }
}

/// The exclusive right to drive one run: while it is held, no other process
/// appends to the run's journal or writes its snapshot. Released when
/// dropped; a backend whose holder dies (a killed process, a lost
/// connection) releases it within a bounded time.
pub trait RunLease: fmt::Debug + Send + Sync {
    /// The run.
    fn run(&self) -> &RunId;

    /// Appends one complete line to the run's journal, durably.
    ///
    /// # Errors
    ///
    /// When it cannot be written; nothing of the line is kept then.
    fn append(&mut self, line: &[u8]) -> Result<(), StoreError>;

    /// Replaces the run's snapshot.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    fn write_snapshot(&mut self, snapshot: &[u8]) -> Result<(), StoreError>;
}

/// What is written to a store from the moment it was subscribed to: wakes
/// a host that waits for a decision made elsewhere (another process,
/// machine or client) within moments, rather than at its next look.
pub trait Subscription: fmt::Debug + Send + Sync {
    /// Blocks until something may have been written to the store since
    /// the subscription was made or last woke, or until `timeout` passes:
    /// `true` in the first case. A spurious `true` is allowed (the waiter
    /// looks and waits again); a missed write is not.
    fn wait(&mut self, timeout: Duration) -> bool;
}

/// A lock of a store, released when dropped.
pub trait Held: fmt::Debug + Send + Sync {}

/// Where runs and their decisions are kept: the storage seam.
///
/// Everything the engine keeps per run goes through this trait in the terms
/// of what it is — the run log (created whole, appended under an exclusive
/// lease, replayed), decision points (their questions written once, one
/// decision each, their outcomes), advice, waivers, host metadata, evidence
/// and the run listing. Documents are bytes here: the crates that own them
/// encode, decode and version them, so a backend stores and returns them as
/// they are. Receipts, worktrees and logs of processes stay on the disk of
/// the machine whose checkout they prove, outside this trait.
///
/// Two implementations: [`FsStorage`](super::FsStorage), the directory
/// layout of [`layout`](crate::layout), and a database (another crate). The
/// rules every implementation keeps, and that
/// `orcho_core::storage::conformance` checks:
///
/// - a [`create`](Self::create) is the first write of a document or changes
///   nothing ([`Created::Exists`]): of two processes racing, exactly one
///   wins;
/// - [`create_run`](Self::create_run) leaves the run whole or not at all,
///   and holds its lease;
/// - [`read_log`](Self::read_log) returns every line appended before, in
///   order, each ending with `\n`;
/// - a lease is exclusive across processes (and machines, for a shared
///   backend);
/// - a document read is one written, never a mix of two.
///
/// Implementations are synchronous (the engine calls them from
/// `spawn_blocking` or briefly from async code) and must not panic on what
/// they read.
pub trait Storage: fmt::Debug + Send + Sync + 'static {
    /// Where the store is, for messages: a directory, a database URL
    /// without its password.
    fn location(&self) -> String;

    /// Where `item` of `run` is kept, for messages: a path for a directory
    /// store, a path-like name for others.
    fn locate(&self, run: &RunId, item: Item<'_>) -> Utf8PathBuf;

    /// Where the log `log` of `run` is kept, for messages.
    fn locate_log(&self, run: &RunId, log: Log) -> Utf8PathBuf;

    /// Every run, oldest first.
    ///
    /// # Errors
    ///
    /// When the runs cannot be listed.
    fn runs(&self) -> Result<RunListing, StoreError>;

    /// Whether `run` exists.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    fn has_run(&self, run: &RunId) -> Result<bool, StoreError>;

    /// Creates `run` whole (journal, snapshot, host metadata) and returns
    /// its lease. A run that exists already is an error.
    ///
    /// # Errors
    ///
    /// When it cannot be created.
    fn create_run(&self, run: &RunId, new: NewRun<'_>) -> Result<Box<dyn RunLease>, StoreError>;

    /// Takes the lease of an existing run, waiting up to `wait` for
    /// another holder to let go: `None` when it is still held (the run is
    /// busy).
    ///
    /// # Errors
    ///
    /// When the lease cannot be asked for.
    fn lease(&self, run: &RunId, wait: Duration) -> Result<Option<Box<dyn RunLease>>, StoreError>;

    /// Whether a process holds the lease of `run` now. A store that cannot
    /// tell says `true`, so that a run is never called stopped on a guess.
    fn is_leased(&self, run: &RunId) -> bool;

    /// The log `log` of `run` as JSON lines, each ending with `\n` (a
    /// directory store may end with a torn line, which readers skip).
    /// Empty when nothing was appended.
    ///
    /// # Errors
    ///
    /// When it cannot be read.
    fn read_log(&self, run: &RunId, log: Log) -> Result<Vec<u8>, StoreError>;

    /// Appends one line to the log `log` of `run`. The run's own journal
    /// takes appends through its [`RunLease`] only.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    fn append_log(&self, run: &RunId, log: Log, line: &[u8]) -> Result<(), StoreError>;

    /// The document `item` of `run`, `None` when there is none.
    ///
    /// # Errors
    ///
    /// When it cannot be read.
    fn get(&self, run: &RunId, item: Item<'_>) -> Result<Option<Vec<u8>>, StoreError>;

    /// Writes `item` of `run` unless it exists.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    fn create(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<Created, StoreError>;

    /// Writes `item` of `run`, replacing what was there.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    fn put(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<(), StoreError>;

    /// Removes `item` of `run`, when it is there: for what a run no longer
    /// needs once it has ended (its intake seed patch). Whether it was
    /// there.
    ///
    /// # Errors
    ///
    /// When it cannot be removed.
    fn remove(&self, run: &RunId, item: Item<'_>) -> Result<bool, StoreError>;

    /// Sets the decision of point `id` of `run` aside: it is kept, for
    /// those who look, but the point has no decision any more (a gate
    /// opened again on another patch waits for its own). Nothing to set
    /// aside is not an error.
    ///
    /// # Errors
    ///
    /// When it cannot be moved.
    fn supersede_decision(&self, run: &RunId, id: &HandoffId) -> Result<(), StoreError>;

    /// The names (ids) of the documents of `set` of `run`, in no particular
    /// order.
    ///
    /// # Errors
    ///
    /// When they cannot be listed.
    fn list(&self, run: &RunId, set: Set) -> Result<Vec<String>, StoreError>;

    /// Where `run` was created, for a store that several machines or
    /// checkouts share; `None` for a store that only this checkout uses
    /// (the directory store), where every run is here.
    ///
    /// A run whose origin is not [`here`](RunOrigin::here) is read and
    /// decided from anywhere but driven only where it was created.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    fn origin(&self, run: &RunId) -> Result<Option<RunOrigin>, StoreError> {
        let _ = run;
        Ok(None)
    }

    /// Where each of `runs` was created, as [`origin`](Self::origin) says
    /// it; a run with none is left out. A backend where each question costs
    /// a round trip answers them at once; the default asks run by run.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    fn origins(&self, runs: &[RunId]) -> Result<BTreeMap<RunId, RunOrigin>, StoreError> {
        let mut origins = BTreeMap::new();
        for run in runs {
            if let Some(origin) = self.origin(run)? {
                origins.insert(run.clone(), origin);
            }
        }
        Ok(origins)
    }

    /// A read-only copy of what a scan of the decision points (the inbox)
    /// reads — every listed run that has a decision point, with its
    /// documents and logs — taken in a few round trips, for a backend where
    /// reading run by run costs a round trip each (a database). `None` (the
    /// default): scan the store itself.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn points_view(&self) -> Result<Option<std::sync::Arc<dyn Storage>>, StoreError> {
        Ok(None)
    }

    /// Subscribes to what is written to the store from now on (see
    /// [`Subscription`]); `None` (the default) when the store cannot tell,
    /// and a waiting host looks again from time to time instead.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    fn subscribe(&self) -> Result<Option<Box<dyn Subscription>>, StoreError> {
        Ok(None)
    }

    /// Takes the lock that serialises acting on the decision points of
    /// `kind` in `run` (opening a numbered handoff, resuming one,
    /// delivering), waiting for it.
    ///
    /// # Errors
    ///
    /// When it cannot be taken.
    fn lock(&self, run: &RunId, kind: PointKind) -> Result<Box<dyn Held>, StoreError>;

    /// The document `name` of the store-wide `set`, `None` when there is
    /// none.
    ///
    /// # Errors
    ///
    /// When the store cannot be read, or `name` cannot name a document.
    fn store_get(&self, set: StoreSet, name: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Writes the document `name` of `set` when there is none yet
    /// ([`Created::Exists`] otherwise, changing nothing).
    ///
    /// # Errors
    ///
    /// When the store cannot be written, or `name` cannot name a document.
    fn store_create(&self, set: StoreSet, name: &str, bytes: &[u8]) -> Result<Created, StoreError>;

    /// Removes the document `name` of `set`; whether there was one.
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn store_remove(&self, set: StoreSet, name: &str) -> Result<bool, StoreError>;

    /// The names of the documents of `set`, sorted.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn store_names(&self, set: StoreSet) -> Result<Vec<String>, StoreError>;

    /// Appends one line (a JSON document that starts with its `schema`;
    /// its `\n` may be left out) to the store-wide `log`; from any process,
    /// whole lines, never interleaved.
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn store_append(&self, log: StoreLog, line: &[u8]) -> Result<(), StoreError>;

    /// Every line appended to `log`, in order, each ending with `\n`.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn store_read(&self, log: StoreLog) -> Result<Vec<u8>, StoreError>;

    /// Takes the store-wide lock of the work on `log` (one process
    /// delivers notifications at a time, across machines on a shared
    /// store) within `wait`; `None` when another holds it still.
    ///
    /// # Errors
    ///
    /// When it cannot be asked for.
    fn store_lock(
        &self,
        log: StoreLog,
        wait: Duration,
    ) -> Result<Option<Box<dyn Held>>, StoreError>;
}
