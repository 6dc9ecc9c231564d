//! Reading and writing runs through the storage seam.

use std::{sync::Arc, time::Duration};

use camino::Utf8Path;
use orcho_core::{
    Clock, RunId, schema,
    storage::{self, Item, Log, NewRun, RunLease, Storage},
};

use super::format::{EventLineV1, HostDocV1, RUN_SCHEMA, StateDocV1, StateV1};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, RunState},
};

/// The runs of a [`Storage`]: each run's journal (every transition, in
/// order), its snapshot and what its host keeps with it. Handoffs,
/// decisions and advice live beside them, written by their own crates.
///
/// The journal is the source of truth: a run is opened by replaying it, so a
/// process that died between appending an event and writing the snapshot
/// loses nothing and applies nothing twice.
#[derive(Debug, Clone)]
pub(crate) struct RunStore {
    storage: Arc<dyn Storage>,
    lock_wait: Duration,
}

/// How long opening a run waits for its lock before it says the run is
/// busy. A process that is killed while it drives a run may leave, for a
/// moment, a child it was starting that still holds the lock until it
/// runs its program; a run opened right after such a kill waits that
/// moment out instead of failing.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(2);

/// A run opened for driving: its state, and the lease that keeps every
/// other process out until it is dropped.
#[derive(Debug)]
pub(crate) struct StoredRun {
    pub(crate) state: RunState,
    lease: Box<dyn RunLease>,
    storage: Arc<dyn Storage>,
}

fn run_err(run: &RunId) -> impl Fn(EngineErrorKind) -> EngineError + '_ {
    move |kind| EngineError::run(run, kind)
}

impl RunStore {
    /// The runs kept in `storage`.
    pub(crate) fn new(storage: Arc<dyn Storage>, lock_wait: Duration) -> Self {
        Self { storage, lock_wait }
    }

    /// Every run id in the store, oldest first (ids sort by creation time).
    pub(crate) fn runs(&self) -> Result<Vec<RunId>, EngineError> {
        Ok(self
            .storage
            .runs()
            .map_err(|e| EngineError::store(Utf8Path::new(&self.storage.location()), e))?
            .runs)
    }

    /// Creates a run with its first event and the host's metadata, and
    /// takes its lease. The run appears whole or not at all: a process
    /// killed at any instant leaves either no run or one that opens, with
    /// its host metadata.
    pub(crate) fn create(
        &self,
        run: &RunId,
        started: &RunEvent,
        host: Option<&serde_json::Value>,
        clock: &dyn Clock,
    ) -> Result<StoredRun, EngineError> {
        let err = run_err(run);
        let state = RunState::new(run.clone(), started)
            .map_err(|event| err(EngineErrorKind::NotAStart(event)))?;
        let first = storage::encode_record(
            &*self.storage,
            run,
            Log::Run,
            &EventLineV1::new(1, clock.now(), started),
        )
        .map_err(|e| err(e.into()))?;
        let host = host
            .map(|host| {
                schema::encode(&HostDocV1 {
                    schema: HostDocV1::WRITTEN,
                    host: host.clone(),
                })
            })
            .transpose()
            .map_err(|e| err(e.into()))?;
        let snapshot = encode_snapshot(&state).map_err(&err)?;
        let lease = self
            .storage
            .create_run(
                run,
                NewRun::new(&first, &snapshot).with_host_metadata(host.as_deref()),
            )
            .map_err(|e| err(e.into()))?;
        Ok(StoredRun {
            state,
            lease,
            storage: Arc::clone(&self.storage),
        })
    }

    /// What the host that started `run` keeps with it
    /// ([`Start::host_metadata`](crate::Start::host_metadata)), if it kept
    /// anything.
    pub(crate) fn host_metadata(
        &self,
        run: &RunId,
    ) -> Result<Option<serde_json::Value>, EngineError> {
        self.existing(run)?;
        Ok(
            storage::get_document::<HostDocV1>(&*self.storage, run, Item::HostMetadata)
                .map_err(|e| EngineError::run(run, e))?
                .map(|doc| doc.host),
        )
    }

    fn existing(&self, run: &RunId) -> Result<(), EngineError> {
        match self.storage.has_run(run) {
            Ok(true) => Ok(()),
            Ok(false) => Err(EngineError::run(run, crate::Refusal::UnknownRun)),
            Err(e) => Err(EngineError::run(run, e)),
        }
    }

    /// Where `run` was created when that is not here (another machine or
    /// checkout of a shared store).
    pub(crate) fn elsewhere(&self, run: &RunId) -> Result<Option<storage::RunOrigin>, EngineError> {
        Ok(self
            .storage
            .origin(run)
            .map_err(|e| EngineError::run(run, e))?
            .filter(|origin| !origin.here))
    }

    /// Opens a run for driving: takes its lease (failing with a "busy"
    /// error when another process holds it past the wait) and replays its
    /// journal.
    pub(crate) fn open(&self, run: &RunId) -> Result<StoredRun, EngineError> {
        self.existing(run)?;
        if let Some(origin) = self.elsewhere(run)? {
            return Err(run_err(run)(
                crate::Refusal::Elsewhere {
                    origin: Box::new(origin),
                }
                .into(),
            ));
        }
        self.open_within(run, self.lock_wait)?
            .ok_or_else(|| run_err(run)(crate::Refusal::Busy.into()))
    }

    /// Opens a run for driving when no process drives it now; `None` when
    /// one does.
    pub(crate) fn try_open(&self, run: &RunId) -> Result<Option<StoredRun>, EngineError> {
        self.open_within(run, Duration::ZERO)
    }

    /// Takes the run's lease, waiting at most `wait`, and replays its
    /// journal; `None` when another process still holds the lease.
    fn open_within(&self, run: &RunId, wait: Duration) -> Result<Option<StoredRun>, EngineError> {
        self.existing(run)?;
        let err = run_err(run);
        if self.elsewhere(run)?.is_some() {
            // Only the machine and checkout that hold the run's worktree
            // drive it.
            return Ok(None);
        }
        let Some(lease) = self.storage.lease(run, wait).map_err(|e| err(e.into()))? else {
            return Ok(None);
        };
        let state = self.read(run)?;
        let mut stored = StoredRun {
            state,
            lease,
            storage: Arc::clone(&self.storage),
        };
        stored.snapshot()?;
        Ok(Some(stored))
    }

    /// The state of a run, replayed from its journal without taking its
    /// lease (for status and the inbox).
    pub(crate) fn read(&self, run: &RunId) -> Result<RunState, EngineError> {
        self.existing(run)?;
        let err = run_err(run);
        let mut events = self.lines(run)?.into_iter();
        let (_, first) = events
            .next()
            .ok_or_else(|| err(EngineErrorKind::EmptyJournal))?;
        let mut state = RunState::new(run.clone(), &first)
            .map_err(|event| err(EngineErrorKind::NotAStart(event)))?;
        for (_, event) in events {
            state = state
                .apply(&event)
                .map_err(|e| err(EngineErrorKind::Transition(e)))?;
        }
        Ok(state)
    }

    /// Whether a process drives `run` now: whether its lease is held.
    pub(crate) fn is_driven(&self, run: &RunId) -> bool {
        self.storage.is_leased(run)
    }

    /// The state as the run's snapshot last recorded it, read without
    /// replaying the journal.
    pub(crate) fn snapshot(&self, run: &RunId) -> Result<RunState, EngineError> {
        self.existing(run)?;
        let err = run_err(run);
        let doc: StateDocV1 = storage::get_document(&*self.storage, run, Item::Snapshot)
            .map_err(|e| err(e.into()))?
            .ok_or_else(|| err(EngineErrorKind::InvalidSnapshot("it is missing".to_owned())))?;
        RunState::try_from(doc.state)
            .map_err(|reason| err(EngineErrorKind::InvalidSnapshot(reason)))
    }

    /// The journal of a run, in order.
    pub(crate) fn events(&self, run: &RunId) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        self.existing(run)?;
        self.lines(run)
    }

    fn lines(&self, run: &RunId) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        let err = run_err(run);
        let read = storage::read_log::<EventLineV1>(&*self.storage, run, Log::Run, RUN_SCHEMA)
            .map_err(|e| err(e.into()))?;
        if read.skipped_newer > 0 {
            return Err(err(EngineErrorKind::NewerEvents {
                count: read.skipped_newer,
            }));
        }
        read.records
            .into_iter()
            .map(|line| {
                let event = RunEvent::try_from(line.event).map_err(|reason| {
                    err(EngineErrorKind::InvalidEvent {
                        seq: line.seq,
                        reason,
                    })
                })?;
                Ok((line.seq, event))
            })
            .collect()
    }
}

impl StoredRun {
    /// Journals `event`, applies it, and writes the snapshot: the one way a
    /// run changes.
    pub(crate) fn commit(
        &mut self,
        event: &RunEvent,
        clock: &dyn Clock,
    ) -> Result<(), EngineError> {
        let run = self.state.run().clone();
        let err = run_err(&run);
        let next = self
            .state
            .clone()
            .apply(event)
            .map_err(|e| err(EngineErrorKind::Transition(e)))?;
        let line = storage::encode_record(
            &*self.storage,
            &run,
            Log::Run,
            &EventLineV1::new(next.seq(), clock.now(), event),
        )
        .map_err(|e| err(e.into()))?;
        self.lease.append(&line).map_err(|e| err(e.into()))?;
        self.state = next;
        self.snapshot()
    }

    fn snapshot(&mut self) -> Result<(), EngineError> {
        let run = self.state.run().clone();
        let err = run_err(&run);
        storage::refuse_downgrade::<StateDocV1>(&*self.storage, &run, Item::Snapshot)
            .map_err(|e| err(e.into()))?;
        let bytes = encode_snapshot(&self.state).map_err(&err)?;
        self.lease.write_snapshot(&bytes).map_err(|e| err(e.into()))
    }
}

fn encode_snapshot(state: &RunState) -> Result<Vec<u8>, EngineErrorKind> {
    let state = StateV1::from(state);
    schema::encode(&StateDocV1 {
        schema: state.schema(),
        state,
    })
    .map_err(Into::into)
}
