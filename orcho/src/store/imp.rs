//! Reading and writing runs.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, RunId,
    fs::{self, ExclusiveGuard, Journal, LockFile},
    layout::{RunDir, StoreDir},
};

use super::format::{EventLineV1, HostDocV1, RUN_SCHEMA, StateDocV1, StateV1};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, RunState},
};

/// The run store: `<root>/runs/<run_id>/` holds `run.json` (the state
/// snapshot), `journal.jsonl` (every transition, in order) and `run.lock`.
/// Handoffs, decisions, advice and receipts live beside them, written by
/// their own crates; every path comes from [`StoreDir`] and [`RunDir`].
///
/// The journal is the source of truth: a run is opened by replaying it, so a
/// process that died between appending an event and writing the snapshot
/// loses nothing and applies nothing twice.
#[derive(Debug, Clone)]
pub struct RunStore {
    dir: StoreDir,
    lock_wait: std::time::Duration,
}

/// How long opening a run waits for its lock before it says the run is
/// busy. A process that is killed while it drives a run may leave, for a
/// moment, a child it was starting that still holds the lock until it
/// runs its program; a run opened right after such a kill waits that
/// moment out instead of failing.
pub const DEFAULT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A run opened for driving: its state, its journal, and the exclusive lock
/// that keeps every other process out until it is dropped.
#[derive(Debug)]
pub struct StoredRun {
    pub(crate) state: RunState,
    journal: Journal,
    dir: RunDir,
    _guard: ExclusiveGuard,
}

fn run_err(run: &RunId) -> impl Fn(EngineErrorKind) -> EngineError + '_ {
    move |kind| EngineError::run(run, kind)
}

impl RunStore {
    /// The store at `root` (usually `<checkout>/.orcho`).
    pub fn new(root: impl Into<Utf8PathBuf>) -> Self {
        Self {
            dir: StoreDir::new(root),
            lock_wait: DEFAULT_LOCK_WAIT,
        }
    }

    /// The store directory.
    pub fn root(&self) -> &Utf8Path {
        self.dir.root()
    }

    /// The store's layout.
    pub fn layout(&self) -> &StoreDir {
        &self.dir
    }

    /// The directory of `run`.
    pub fn run_dir(&self, run: &RunId) -> Utf8PathBuf {
        self.dir.run(run).path().to_owned()
    }

    /// Every run id in the store, oldest first (ids sort by creation time).
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn runs(&self) -> Result<Vec<RunId>, EngineError> {
        let dir = self.dir.runs();
        let entries = match dir.read_dir_utf8() {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(EngineError::store(&dir, EngineErrorKind::ListRuns(e))),
        };
        let mut runs: Vec<RunId> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().parse().ok())
            .collect();
        runs.sort();
        Ok(runs)
    }

    /// Creates a run with its first event and the host's metadata, and
    /// takes its lock. The run's directory appears whole or not at all
    /// ([`fs::create_dir_whole`]): a process killed at any instant leaves
    /// either no run or one that opens, with its host metadata.
    pub(crate) fn create(
        &self,
        run: &RunId,
        started: &RunEvent,
        host: Option<&serde_json::Value>,
        clock: &dyn Clock,
    ) -> Result<StoredRun, EngineError> {
        let err = run_err(run);
        let dir = self.dir.run(run);
        fs::create_dir_all(&self.dir.runs()).map_err(|e| err(e.into()))?;
        let state = RunState::new(run.clone(), started)
            .map_err(|event| err(EngineErrorKind::NotAStart(event)))?;
        let guard = fs::create_dir_whole(dir.path(), |staging| {
            let staged = dir.relocated(staging);
            let guard = Self::lock(&staged, self.lock_wait)?;
            Journal::open(&staged.journal())
                .and_then(|mut journal| {
                    journal.append(&EventLineV1 {
                        schema: RUN_SCHEMA,
                        seq: 1,
                        at: clock.now(),
                        event: started.into(),
                    })
                })
                .map_err(|e| err(e.into()))?;
            if let Some(host) = host {
                let doc = HostDocV1 {
                    schema: RUN_SCHEMA,
                    host: host.clone(),
                };
                fs::write_document(&staged.host_metadata(), &doc).map_err(|e| err(e.into()))?;
            }
            write_snapshot(&staged, &state)?;
            Ok::<_, EngineError>(guard)
        })
        .map_err(|e| e.about(run))?;
        let journal = Journal::open(&dir.journal()).map_err(|e| err(e.into()))?;
        Ok(StoredRun {
            state,
            journal,
            dir,
            _guard: guard,
        })
    }

    /// What the host that started `run` keeps with it
    /// ([`Start::host_metadata`](crate::Start::host_metadata)), if it kept
    /// anything.
    ///
    /// # Errors
    ///
    /// An unknown run, or an unreadable document.
    pub fn host_metadata(&self, run: &RunId) -> Result<Option<serde_json::Value>, EngineError> {
        let dir = self.existing(run)?;
        match fs::read_document::<HostDocV1>(&dir.host_metadata()) {
            Ok(doc) => Ok(Some(doc.host)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(EngineError::run(run, e.into())),
        }
    }

    fn lock(dir: &RunDir, wait: std::time::Duration) -> Result<ExclusiveGuard, EngineError> {
        let err = run_err(dir.run());
        let lock = LockFile::new(dir.lock());
        if let Some(guard) = lock.try_lock_exclusive().map_err(|e| err(e.into()))? {
            return Ok(guard);
        }
        match lock.lock_exclusive_timeout(wait) {
            Ok(guard) => Ok(guard),
            Err(e) if e.is_timeout() => Err(err(EngineErrorKind::Busy)),
            Err(e) => Err(err(e.into())),
        }
    }

    fn existing(&self, run: &RunId) -> Result<RunDir, EngineError> {
        let dir = self.dir.run(run);
        if dir.path().is_dir() {
            Ok(dir)
        } else {
            Err(EngineError::run(run, EngineErrorKind::UnknownRun))
        }
    }

    /// Opens a run for driving: takes its lock (failing at once with a
    /// "busy" error when another process holds it) and replays its journal.
    pub(crate) fn open(&self, run: &RunId) -> Result<StoredRun, EngineError> {
        let dir = self.existing(run)?;
        let guard = Self::lock(&dir, self.lock_wait)?;
        let state = Self::replay(&dir)?;
        let journal = Journal::open(&dir.journal()).map_err(|e| run_err(run)(e.into()))?;
        let stored = StoredRun {
            state,
            journal,
            dir,
            _guard: guard,
        };
        stored.snapshot()?;
        Ok(stored)
    }

    /// The state of a run, replayed from its journal without taking its
    /// lock (for status and the inbox).
    ///
    /// # Errors
    ///
    /// An unknown run, an unreadable journal, or events from a newer Orcho.
    pub fn read(&self, run: &RunId) -> Result<RunState, EngineError> {
        Self::replay(&self.existing(run)?)
    }

    /// Whether a process drives `run` now: whether its lock is held. A
    /// lock that cannot be tried (a read-only store) counts as held, so
    /// that a run is never called stopped on a guess.
    pub(crate) fn is_driven(&self, run: &RunId) -> bool {
        let Ok(dir) = self.existing(run) else {
            return false;
        };
        !matches!(LockFile::new(dir.lock()).try_lock_shared(), Ok(Some(_)))
    }

    /// The state as the run's snapshot (`run.json`) last recorded it, read
    /// without replaying the journal. The journal stays the source of truth:
    /// [`read`](Self::read) is always current, this is as current as the
    /// last snapshot written.
    ///
    /// # Errors
    ///
    /// An unknown run, an unreadable or invalid snapshot.
    pub fn snapshot(&self, run: &RunId) -> Result<RunState, EngineError> {
        let err = run_err(run);
        let dir = self.existing(run)?;
        let doc: StateDocV1 = fs::read_document(&dir.snapshot()).map_err(|e| err(e.into()))?;
        RunState::try_from(doc.state)
            .map_err(|reason| err(EngineErrorKind::InvalidSnapshot(reason)))
    }

    /// The journal of a run, in order.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    pub fn events(&self, run: &RunId) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        Self::lines(&self.existing(run)?)
    }

    fn lines(dir: &RunDir) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        let err = run_err(dir.run());
        let read =
            Journal::read::<EventLineV1>(&dir.journal(), RUN_SCHEMA).map_err(|e| err(e.into()))?;
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

    fn replay(dir: &RunDir) -> Result<RunState, EngineError> {
        let err = run_err(dir.run());
        let mut events = Self::lines(dir)?.into_iter();
        let (_, first) = events
            .next()
            .ok_or_else(|| err(EngineErrorKind::EmptyJournal))?;
        let mut state = RunState::new(dir.run().clone(), &first)
            .map_err(|event| err(EngineErrorKind::NotAStart(event)))?;
        for (_, event) in events {
            state = state
                .apply(&event)
                .map_err(|e| err(EngineErrorKind::Transition(e)))?;
        }
        Ok(state)
    }
}

impl RunStore {
    orcho_core::setters! {
        /// Waits up to `wait` for a run's lock before saying it is busy
        /// (default [`DEFAULT_LOCK_WAIT`]).
        pub fn with_lock_wait(wait: std::time::Duration) => lock_wait;
    }
}

impl StoredRun {
    /// The run's directory.
    pub fn dir(&self) -> &Utf8Path {
        self.dir.path()
    }

    /// The run's layout.
    pub fn layout(&self) -> &RunDir {
        &self.dir
    }

    /// Journals `event`, applies it, and writes the snapshot: the one way a
    /// run changes.
    pub(crate) fn commit(&mut self, event: RunEvent, clock: &dyn Clock) -> Result<(), EngineError> {
        let err = run_err(self.dir.run());
        let next = self
            .state
            .clone()
            .apply(&event)
            .map_err(|e| err(EngineErrorKind::Transition(e)))?;
        let line = EventLineV1 {
            schema: RUN_SCHEMA,
            seq: next.seq(),
            at: clock.now(),
            event: event.into(),
        };
        self.journal.append(&line).map_err(|e| err(e.into()))?;
        self.state = next;
        self.snapshot()
    }

    fn snapshot(&self) -> Result<(), EngineError> {
        write_snapshot(&self.dir, &self.state)
    }
}

fn write_snapshot(dir: &RunDir, state: &RunState) -> Result<(), EngineError> {
    let doc = StateDocV1 {
        schema: RUN_SCHEMA,
        state: StateV1::from(state),
    };
    fs::write_document(&dir.snapshot(), &doc).map_err(|e| EngineError::run(dir.run(), e.into()))
}
