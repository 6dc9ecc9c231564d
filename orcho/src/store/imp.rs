//! Reading and writing runs.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, RunId,
    fs::{self, ExclusiveGuard, Journal, LockFile},
};

use super::format::{EventLine, RUN_SCHEMA, StateDoc};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, RunState},
};

/// The run store: `<root>/runs/<run_id>/` holds `run.json` (the state
/// snapshot), `journal.jsonl` (every transition, in order) and `run.lock`.
/// Handoffs, decisions, advice and receipts live beside them, written by
/// their own crates.
///
/// The journal is the source of truth: a run is opened by replaying it, so a
/// process that died between appending an event and writing the snapshot
/// loses nothing and applies nothing twice.
#[derive(Debug, Clone)]
pub struct RunStore {
    root: Utf8PathBuf,
}

/// A run opened for driving: its state, its journal, and the exclusive lock
/// that keeps every other process out until it is dropped.
#[derive(Debug)]
pub struct StoredRun {
    pub(crate) state: RunState,
    journal: Journal,
    dir: Utf8PathBuf,
    _guard: ExclusiveGuard,
}

impl RunStore {
    /// The store at `root` (usually `<checkout>/.orcho`).
    pub fn new(root: impl Into<Utf8PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The store directory.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// The directory of `run`.
    pub fn run_dir(&self, run: &RunId) -> Utf8PathBuf {
        self.root.join("runs").join(run.as_str())
    }

    /// Every run id in the store, oldest first (ids sort by creation time).
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn runs(&self) -> Result<Vec<RunId>, EngineError> {
        let dir = self.root.join("runs");
        let entries = match dir.read_dir_utf8() {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(EngineError::store(&dir, EngineErrorKind::ListRuns(e))),
        };
        let mut runs: Vec<RunId> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().parse().ok())
            .collect();
        runs.sort();
        Ok(runs)
    }

    /// Creates a run with its first event and takes its lock.
    pub(crate) fn create(
        &self,
        run: &RunId,
        started: RunEvent,
        clock: &dyn Clock,
    ) -> Result<StoredRun, EngineError> {
        let dir = self.run_dir(run);
        fs::create_dir_all(&dir)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Fs(Box::new(e))))?;
        let guard = Self::lock(run, &dir)?;
        let state = RunState::new(run.clone(), &started)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Transition(e)))?;
        let mut journal = Journal::open(&dir.join("journal.jsonl"))
            .map_err(|e| EngineError::run(run, EngineErrorKind::Journal(Box::new(e))))?;
        let line = EventLine {
            schema: RUN_SCHEMA,
            seq: 1,
            at: clock.now(),
            event: started,
        };
        journal
            .append(&line)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Journal(Box::new(e))))?;
        let stored = StoredRun {
            state,
            journal,
            dir,
            _guard: guard,
        };
        stored.snapshot()?;
        Ok(stored)
    }

    fn lock(run: &RunId, dir: &Utf8Path) -> Result<ExclusiveGuard, EngineError> {
        LockFile::new(dir.join("run.lock"))
            .try_lock_exclusive()
            .map_err(|e| EngineError::run(run, EngineErrorKind::Lock(Box::new(e))))?
            .ok_or_else(|| EngineError::run(run, EngineErrorKind::Busy))
    }

    /// Opens a run for driving: takes its lock (failing at once with a
    /// "busy" error when another process holds it) and replays its journal.
    pub(crate) fn open(&self, run: &RunId) -> Result<StoredRun, EngineError> {
        let dir = self.run_dir(run);
        if !dir.is_dir() {
            return Err(EngineError::run(run, EngineErrorKind::UnknownRun));
        }
        let guard = Self::lock(run, &dir)?;
        let state = Self::replay(run, &dir)?;
        let journal = Journal::open(&dir.join("journal.jsonl"))
            .map_err(|e| EngineError::run(run, EngineErrorKind::Journal(Box::new(e))))?;
        let stored = StoredRun {
            state,
            journal,
            dir,
            _guard: guard,
        };
        stored.snapshot()?;
        Ok(stored)
    }

    /// The state of a run, read without taking its lock (for status and the
    /// inbox).
    ///
    /// # Errors
    ///
    /// An unknown run, an unreadable journal, or events from a newer Orcho.
    pub fn read(&self, run: &RunId) -> Result<RunState, EngineError> {
        let dir = self.run_dir(run);
        if !dir.is_dir() {
            return Err(EngineError::run(run, EngineErrorKind::UnknownRun));
        }
        Self::replay(run, &dir)
    }

    /// The journal of a run, in order.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    pub fn events(&self, run: &RunId) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        Ok(Self::lines(run, &self.run_dir(run))?
            .into_iter()
            .map(|l| (l.seq, l.event))
            .collect())
    }

    fn lines(run: &RunId, dir: &Utf8Path) -> Result<Vec<EventLine>, EngineError> {
        let read = Journal::read::<EventLine>(&dir.join("journal.jsonl"), RUN_SCHEMA)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Journal(Box::new(e))))?;
        if read.skipped_newer > 0 {
            return Err(EngineError::run(
                run,
                EngineErrorKind::NewerEvents {
                    count: read.skipped_newer,
                },
            ));
        }
        Ok(read.records)
    }

    fn replay(run: &RunId, dir: &Utf8Path) -> Result<RunState, EngineError> {
        let lines = Self::lines(run, dir)?;
        let mut lines = lines.into_iter();
        let first = lines
            .next()
            .ok_or_else(|| EngineError::run(run, EngineErrorKind::EmptyJournal))?;
        let mut state = RunState::new(run.clone(), &first.event)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Transition(e)))?;
        for line in lines {
            state = state
                .apply(&line.event)
                .map_err(|e| EngineError::run(run, EngineErrorKind::Transition(e)))?;
        }
        Ok(state)
    }
}

impl StoredRun {
    /// The run's directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// Journals `event`, applies it, and writes the snapshot: the one way a
    /// run changes.
    pub(crate) fn commit(&mut self, event: RunEvent, clock: &dyn Clock) -> Result<(), EngineError> {
        let run = self.state.run.clone();
        let next = self
            .state
            .clone()
            .apply(&event)
            .map_err(|e| EngineError::run(&run, EngineErrorKind::Transition(e)))?;
        let line = EventLine {
            schema: RUN_SCHEMA,
            seq: next.seq,
            at: clock.now(),
            event,
        };
        self.journal
            .append(&line)
            .map_err(|e| EngineError::run(&run, EngineErrorKind::Journal(Box::new(e))))?;
        self.state = next;
        self.snapshot()
    }

    fn snapshot(&self) -> Result<(), EngineError> {
        let doc = StateDoc {
            schema: RUN_SCHEMA,
            state: self.state.clone(),
        };
        fs::write_document(&self.dir.join("run.json"), &doc)
            .map_err(|e| EngineError::run(&self.state.run, EngineErrorKind::Document(Box::new(e))))
    }
}
