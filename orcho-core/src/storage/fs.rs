//! [`FsStorage`]: runs kept in a directory, the layout of
//! [`layout`](crate::layout).

use std::{io, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};

use super::seam::{
    Created, Held, Item, Log, NewRun, PointKind, RunLease, RunListing, Set, Storage, StoreLog,
    StoreSet,
};
use crate::{
    FsError, FsOp, HandoffId, RunId, StoreError,
    fs::{self, ExclusiveGuard, Journal, LockFile},
    layout::{RunDir, StoreDir},
};

/// Runs kept in a directory: the embedded default, which needs nothing but
/// a file system.
///
/// Every document is a file written atomically (a temporary file, fsync,
/// rename, fsync of the directory), a first write is an exclusive create,
/// logs are JSON-lines files whose torn last line is cut off by the next
/// writer, and a run's lease is an advisory lock on its `run.lock`, which
/// the operating system releases when the holder dies. The paths are those
/// of [`StoreDir`] and [`RunDir`].
///
/// ```
/// use orcho_core::{RunId, storage::{FsStorage, Item, Storage, Created}};
///
/// # let tmp = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// let storage = FsStorage::new(&root);
/// let run: RunId = "run-1".parse()?;
/// let point = "delivery".parse()?;
/// assert_eq!(storage.create(&run, Item::Decision(&point), b"{}\n")?, Created::New);
/// assert_eq!(storage.create(&run, Item::Decision(&point), b"[]\n")?, Created::Exists);
/// assert_eq!(storage.get(&run, Item::Decision(&point))?.as_deref(), Some(&b"{}\n"[..]));
/// assert_eq!(storage.locate(&run, Item::Decision(&point)), root.join("runs/run-1/decisions/delivery.json"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FsStorage {
    dir: StoreDir,
}

impl FsStorage {
    /// The store in the directory `root` (usually `<checkout>/.orcho`).
    pub fn new(root: impl Into<Utf8PathBuf>) -> Self {
        Self {
            dir: StoreDir::new(root),
        }
    }

    /// The directory.
    pub fn root(&self) -> &Utf8Path {
        self.dir.root()
    }

    fn run_dir(&self, run: &RunId) -> RunDir {
        self.dir.run(run)
    }

    fn path(&self, run: &RunId, item: Item<'_>) -> Result<Utf8PathBuf, StoreError> {
        let dir = self.run_dir(run);
        Ok(match item {
            Item::Snapshot => dir.snapshot(),
            Item::HostMetadata => dir.host_metadata(),
            Item::Evidence => dir.evidence(),
            Item::Question(PointKind::Handoff, id) => dir.handoff(id),
            Item::Question(PointKind::Touchpoint, id) => dir.touchpoint(id),
            Item::Question(PointKind::Delivery, _) => dir.delivery().join("gate.json"),
            Item::Question(PointKind::Intake, _) => dir.intake().join("intake.json"),
            Item::Question(PointKind::Permission, id) => dir.asks().join(format!("{id}.json")),
            Item::Decision(id) => dir.decision(id),
            Item::Outcome(PointKind::Delivery, _) => dir.delivery().join("outcome.json"),
            Item::Outcome(PointKind::Intake, _) => dir.intake().join("outcome.json"),
            Item::Outcome(PointKind::Handoff, id) => {
                dir.handoffs().join("outcomes").join(format!("{id}.json"))
            }
            Item::Outcome(PointKind::Touchpoint, id) => dir
                .supervision()
                .join("outcomes")
                .join(format!("{id}.json")),
            Item::Outcome(PointKind::Permission, id) => {
                dir.asks().join("outcomes").join(format!("{id}.json"))
            }
            Item::Advice(id) => {
                crate::ids::validate("advice id", id).map_err(|e| {
                    FsError::new(
                        FsOp::Open,
                        &dir.advice(),
                        io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
                    )
                })?;
                dir.advice().join(format!("{id}.json"))
            }
            Item::Waiver(id) => dir.waiver(id),
            Item::DeliveryPatch => dir.delivery().join("run.patch"),
            Item::IntakeSeed => dir.intake().join("seed.patch"),
        })
    }

    fn log_path(&self, run: &RunId, log: Log) -> Utf8PathBuf {
        let dir = self.run_dir(run);
        match log {
            Log::Run => dir.journal(),
            Log::Handoffs => dir.handoff_journal(),
        }
    }

    fn lock_path(&self, run: &RunId, kind: PointKind) -> Utf8PathBuf {
        let dir = self.run_dir(run);
        match kind {
            PointKind::Handoff => dir.handoff_lock(),
            PointKind::Touchpoint => dir.supervision().join(".lock"),
            PointKind::Delivery => dir.delivery().join(".lock"),
            PointKind::Intake => dir.intake().join(".lock"),
            PointKind::Permission => dir.asks().join(".lock"),
        }
    }

    fn set_dir(&self, run: &RunId, set: Set) -> Utf8PathBuf {
        let dir = self.run_dir(run);
        match set {
            Set::Questions(PointKind::Handoff) => dir.handoffs(),
            Set::Questions(PointKind::Touchpoint) => dir.supervision(),
            Set::Questions(PointKind::Delivery) => dir.delivery(),
            Set::Questions(PointKind::Intake) => dir.intake(),
            Set::Questions(PointKind::Permission) => dir.asks(),
            Set::Advice => dir.advice(),
            Set::Waivers => dir.waivers(),
        }
    }
}

fn make_parent(path: &Utf8Path) -> Result<(), StoreError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    Ok(())
}

/// The lease of a run in a directory: the exclusive lock of its `run.lock`
/// and its journal, open for appending.
#[derive(Debug)]
struct FsLease {
    run: RunId,
    journal: Journal,
    snapshot: Utf8PathBuf,
    _guard: ExclusiveGuard,
}

impl RunLease for FsLease {
    fn run(&self) -> &RunId {
        &self.run
    }

    fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        Ok(self.journal.append_line(line)?)
    }

    fn write_snapshot(&mut self, snapshot: &[u8]) -> Result<(), StoreError> {
        Ok(fs::write_atomic(&self.snapshot, snapshot)?)
    }
}

#[derive(Debug)]
struct FsHeld(#[expect(dead_code, reason = "held until dropped")] ExclusiveGuard);

impl Held for FsHeld {}

/// The bytes of the file at `path`; `None` when there is none.
fn read_optional(path: &Utf8Path) -> Result<Option<Vec<u8>>, StoreError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FsError::new(FsOp::Read, path, e).into()),
    }
}

/// Writes the file at `path` when there is none yet (with its directory).
fn create_new(path: &Utf8Path, bytes: &[u8]) -> Result<Created, StoreError> {
    make_parent(path)?;
    match fs::write_new_atomic(path, bytes) {
        Ok(()) => Ok(Created::New),
        Err(e) if e.is_already_exists() => Ok(Created::Exists),
        Err(e) => Err(e.into()),
    }
}

/// Removes the file at `path`, durably; whether there was one.
fn remove_if_there(path: &Utf8Path) -> Result<bool, StoreError> {
    match std::fs::remove_file(path) {
        Ok(()) => {
            fs::sync_parent(path)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(FsError::new(FsOp::Remove, path, e).into()),
    }
}

/// Takes the lock at `path`, trying once at once and then for `wait`.
fn lock_within(path: &Utf8Path, wait: Duration) -> Result<Option<ExclusiveGuard>, StoreError> {
    let lock = LockFile::new(path);
    if let Some(guard) = lock.try_lock_exclusive()? {
        return Ok(Some(guard));
    }
    match lock.lock_exclusive_timeout(wait) {
        Ok(guard) => Ok(Some(guard)),
        Err(e) if e.is_timeout() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl Storage for FsStorage {
    fn location(&self) -> String {
        self.dir.root().to_string()
    }

    fn locate(&self, run: &RunId, item: Item<'_>) -> Utf8PathBuf {
        self.path(run, item)
            .unwrap_or_else(|_| self.run_dir(run).path().to_owned())
    }

    fn locate_log(&self, run: &RunId, log: Log) -> Utf8PathBuf {
        self.log_path(run, log)
    }

    fn runs(&self) -> Result<RunListing, StoreError> {
        let dir = self.dir.runs();
        let entries = match dir.read_dir() {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(RunListing::default()),
            Err(e) => return Err(StoreError::list_dir(&dir, e)),
        };
        let mut listing = RunListing::default();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::list_dir(&dir, e))?;
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                listing.unnamed.push((
                    name.to_string_lossy().into_owned(),
                    "the directory name is not valid UTF-8".to_owned(),
                ));
                continue;
            };
            // Staging directories of runs being created, and anything else
            // hidden.
            if name.starts_with('.') {
                continue;
            }
            match name.parse::<RunId>() {
                Ok(run) => listing.runs.push(run),
                Err(e) => listing
                    .unnamed
                    .push((name.to_owned(), crate::error_chain(&e))),
            }
        }
        listing.runs.sort();
        Ok(listing)
    }

    fn has_run(&self, run: &RunId) -> Result<bool, StoreError> {
        Ok(self.run_dir(run).path().is_dir())
    }

    fn create_run(&self, run: &RunId, new: NewRun<'_>) -> Result<Box<dyn RunLease>, StoreError> {
        let dir = self.run_dir(run);
        fs::create_dir_all(&self.dir.runs())?;
        let guard = fs::create_dir_whole(dir.path(), |staging| {
            let staged = dir.relocated(staging);
            let guard = LockFile::new(staged.lock()).lock_exclusive()?;
            Journal::open(&staged.journal())?.append_line(new.first_event)?;
            if let Some(host) = new.host_metadata {
                fs::write_atomic(&staged.host_metadata(), host)?;
            }
            fs::write_atomic(&staged.snapshot(), new.snapshot)?;
            Ok::<_, StoreError>(guard)
        })?;
        Ok(Box::new(FsLease {
            run: run.clone(),
            journal: Journal::open(&dir.journal())?,
            snapshot: dir.snapshot(),
            _guard: guard,
        }))
    }

    fn lease(&self, run: &RunId, wait: Duration) -> Result<Option<Box<dyn RunLease>>, StoreError> {
        let dir = self.run_dir(run);
        let Some(guard) = lock_within(&dir.lock(), wait)? else {
            return Ok(None);
        };
        Ok(Some(Box::new(FsLease {
            run: run.clone(),
            journal: Journal::open(&dir.journal())?,
            snapshot: dir.snapshot(),
            _guard: guard,
        })))
    }

    fn is_leased(&self, run: &RunId) -> bool {
        let dir = self.run_dir(run);
        if !dir.path().is_dir() {
            return false;
        }
        !matches!(LockFile::new(dir.lock()).try_lock_shared(), Ok(Some(_)))
    }

    fn read_log(&self, run: &RunId, log: Log) -> Result<Vec<u8>, StoreError> {
        let path = self.log_path(run, log);
        Ok(read_optional(&path)?.unwrap_or_default())
    }

    fn append_log(&self, run: &RunId, log: Log, line: &[u8]) -> Result<(), StoreError> {
        let path = self.log_path(run, log);
        make_parent(&path)?;
        Journal::open(&path)?.append_line(line)?;
        Ok(())
    }

    fn get(&self, run: &RunId, item: Item<'_>) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(run, item)?;
        read_optional(&path)
    }

    fn create(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<Created, StoreError> {
        let path = self.path(run, item)?;
        create_new(&path, bytes)
    }

    fn put(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.path(run, item)?;
        make_parent(&path)?;
        Ok(fs::write_atomic(&path, bytes)?)
    }

    fn remove(&self, run: &RunId, item: Item<'_>) -> Result<bool, StoreError> {
        let path = self.path(run, item)?;
        remove_if_there(&path)
    }

    fn supersede_decision(&self, run: &RunId, id: &HandoffId) -> Result<(), StoreError> {
        let path = self.run_dir(run).decision(id);
        if !path.is_file() {
            return Ok(());
        }
        let aside = (1..u32::MAX)
            .map(|n| Utf8PathBuf::from(format!("{path}.superseded-{n}")))
            .find(|p| !p.exists())
            .unwrap_or_else(|| path.with_extension("superseded"));
        std::fs::rename(&path, &aside).map_err(|e| FsError::new(FsOp::Rename, &path, e))?;
        fs::sync_parent(&path)?;
        Ok(())
    }

    fn list(&self, run: &RunId, set: Set) -> Result<Vec<String>, StoreError> {
        let dir = self.set_dir(run, set);
        // The one-per-run points are listed by their question.
        let single = match set {
            Set::Questions(PointKind::Delivery) => Some(("gate.json", PointKind::Delivery)),
            Set::Questions(PointKind::Intake) => Some(("intake.json", PointKind::Intake)),
            _ => None,
        };
        if let Some((file, kind)) = single {
            return Ok(if dir.join(file).is_file() {
                vec![kind.as_str().to_owned()]
            } else {
                Vec::new()
            });
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::list_dir(&dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::list_dir(&dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') {
                continue;
            }
            if let Some(stem) = name.strip_suffix(".json") {
                names.push(stem.to_owned());
            }
        }
        Ok(names)
    }

    fn lock(&self, run: &RunId, kind: PointKind) -> Result<Box<dyn Held>, StoreError> {
        let path = self.lock_path(run, kind);
        make_parent(&path)?;
        Ok(Box::new(FsHeld(LockFile::new(path).lock_exclusive()?)))
    }

    fn store_get(&self, set: StoreSet, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.store_path(set, name)?;
        read_optional(&path)
    }

    fn store_create(&self, set: StoreSet, name: &str, bytes: &[u8]) -> Result<Created, StoreError> {
        let path = self.store_path(set, name)?;
        create_new(&path, bytes)
    }

    fn store_remove(&self, set: StoreSet, name: &str) -> Result<bool, StoreError> {
        let path = self.store_path(set, name)?;
        remove_if_there(&path)
    }

    fn store_names(&self, set: StoreSet) -> Result<Vec<String>, StoreError> {
        let dir = self.store_set_dir(set);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::list_dir(&dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::list_dir(&dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(stem) = name.strip_suffix(".json").filter(|s| !s.starts_with('.')) {
                names.push(stem.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn store_append(&self, log: StoreLog, line: &[u8]) -> Result<(), StoreError> {
        let path = self.store_log_path(log);
        make_parent(&path)?;
        Journal::open(&path)?.append_line(line.strip_suffix(b"\n").unwrap_or(line))?;
        Ok(())
    }

    fn store_read(&self, log: StoreLog) -> Result<Vec<u8>, StoreError> {
        let path = self.store_log_path(log);
        Ok(read_optional(&path)?.unwrap_or_default())
    }

    fn store_lock(
        &self,
        log: StoreLog,
        wait: Duration,
    ) -> Result<Option<Box<dyn Held>>, StoreError> {
        let path = match log {
            StoreLog::Notifications => self.dir.notify().join(".lock"),
        };
        make_parent(&path)?;
        Ok(lock_within(&path, wait)?.map(|guard| Box::new(FsHeld(guard)) as Box<dyn Held>))
    }
}

impl FsStorage {
    fn store_set_dir(&self, set: StoreSet) -> Utf8PathBuf {
        match set {
            StoreSet::Notifiers => self.dir.notify().join("notifiers"),
        }
    }

    fn store_path(&self, set: StoreSet, name: &str) -> Result<Utf8PathBuf, StoreError> {
        let dir = self.store_set_dir(set);
        crate::ids::validate("document name", name).map_err(|e| {
            FsError::new(
                FsOp::Open,
                &dir,
                io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
            )
        })?;
        Ok(dir.join(format!("{name}.json")))
    }

    fn store_log_path(&self, log: StoreLog) -> Utf8PathBuf {
        match log {
            StoreLog::Notifications => self.dir.notify().join("log.jsonl"),
        }
    }
}

#[cfg(all(test, feature = "test-util"))]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn the_directory_store_passes_the_conformance_suite() {
        let dirs = Mutex::new(Vec::new());
        super::super::conformance::check(&|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("UTF-8");
            dirs.lock().expect("not poisoned").push(dir);
            Arc::new(FsStorage::new(root)) as Arc<dyn Storage>
        });
    }
}
