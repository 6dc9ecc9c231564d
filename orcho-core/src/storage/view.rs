//! [`View`]: a read-only copy of part of a store, held in memory.
//!
//! A backend where every read is a round trip (a database) answers a scan
//! of many runs — the inbox — from a view it fills in a few queries
//! ([`Storage::points_view`]); the scan then reads it as any store.

use std::{collections::HashMap, time::Duration};

use camino::Utf8PathBuf;

use super::seam::{
    Created, Held, Item, Log, NewRun, PointKind, RunLease, RunListing, RunOrigin, Set, Storage,
    StoreLog, StoreSet,
};
use crate::{HandoffId, RunId, StoreError};

/// Where a document is kept, by name: its kind and its name within the run
/// (`("decision", "0001-review")`, `("snapshot", "")`). The names a backend
/// that keeps documents as rows can use as its keys.
///
/// # Errors
///
/// An advice id that is not a valid id.
pub fn item_key(item: Item<'_>) -> Result<(String, String), StoreError> {
    let single = |kind: PointKind, id: &HandoffId| match kind {
        PointKind::Delivery | PointKind::Intake => kind.as_str().to_owned(),
        _ => id.to_string(),
    };
    Ok(match item {
        Item::Snapshot => ("snapshot".to_owned(), String::new()),
        Item::HostMetadata => ("host".to_owned(), String::new()),
        Item::Evidence => ("evidence".to_owned(), String::new()),
        Item::Question(kind, id) => (format!("question/{kind}"), single(kind, id)),
        Item::Decision(id) => ("decision".to_owned(), id.to_string()),
        Item::Outcome(kind, id) => (format!("outcome/{kind}"), single(kind, id)),
        Item::Advice(id) => {
            crate::ids::validate("advice id", id)
                .map_err(|e| StoreError::backend(format!("invalid advice id: {e}"), None))?;
            ("advice".to_owned(), id.to_owned())
        }
        Item::Waiver(id) => ("waiver".to_owned(), id.to_string()),
        Item::DeliveryPatch => ("delivery-patch".to_owned(), String::new()),
        Item::IntakeSeed => ("intake-seed".to_owned(), String::new()),
    })
}

/// The kind under which [`item_key`] keeps the documents of `set`.
pub fn set_key(set: Set) -> String {
    match set {
        Set::Questions(kind) => format!("question/{kind}"),
        Set::Advice => "advice".to_owned(),
        Set::Waivers => "waiver".to_owned(),
    }
}

/// A read-only, in-memory copy of some runs of a store: their documents
/// (keyed as [`item_key`] names them) and logs. Writes are refused.
#[derive(Debug, Clone, Default)]
pub struct View {
    location: String,
    runs: Vec<RunId>,
    documents: HashMap<(RunId, String, String), Vec<u8>>,
    /// The names of each run's documents of each kind, for `list`.
    names: HashMap<(RunId, String), Vec<String>>,
    logs: HashMap<(RunId, Log), Vec<u8>>,
    origins: HashMap<RunId, RunOrigin>,
}

impl View {
    /// An empty view of the store at `location`.
    pub fn new(location: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            ..Self::default()
        }
    }

    /// Adds `run` to the listing.
    pub fn add_run(&mut self, run: RunId, origin: Option<RunOrigin>) {
        if let Some(origin) = origin {
            self.origins.insert(run.clone(), origin);
        }
        self.runs.push(run);
    }

    /// Adds a document of `run`, of `kind` and `name` as [`item_key`] names
    /// them.
    pub fn add_document(&mut self, run: RunId, kind: String, name: String, body: Vec<u8>) {
        let names = self.names.entry((run.clone(), kind.clone())).or_default();
        if !names.contains(&name) {
            names.push(name.clone());
        }
        self.documents.insert((run, kind, name), body);
    }

    /// Appends one line to the log `log` of `run`.
    pub fn add_line(&mut self, run: RunId, log: Log, line: &[u8]) {
        let bytes = self.logs.entry((run, log)).or_default();
        bytes.extend_from_slice(line.strip_suffix(b"\n").unwrap_or(line));
        bytes.push(b'\n');
    }

    fn read_only(&self) -> StoreError {
        StoreError::backend(
            format!("a read-only view of {} cannot be written", self.location),
            None,
        )
    }
}

impl Storage for View {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn locate(&self, run: &RunId, item: Item<'_>) -> Utf8PathBuf {
        let (kind, name) = item_key(item).unwrap_or_default();
        Utf8PathBuf::from(format!("{}#runs/{run}/{kind}/{name}", self.location))
    }

    fn locate_log(&self, run: &RunId, log: Log) -> Utf8PathBuf {
        Utf8PathBuf::from(format!("{}#runs/{run}/log/{log:?}", self.location))
    }

    fn runs(&self) -> Result<RunListing, StoreError> {
        let mut runs = self.runs.clone();
        runs.sort();
        Ok(RunListing {
            runs,
            unnamed: Vec::new(),
        })
    }

    fn has_run(&self, run: &RunId) -> Result<bool, StoreError> {
        Ok(self.runs.contains(run))
    }

    fn create_run(&self, _: &RunId, _: NewRun<'_>) -> Result<Box<dyn RunLease>, StoreError> {
        Err(self.read_only())
    }

    fn lease(&self, _: &RunId, _: Duration) -> Result<Option<Box<dyn RunLease>>, StoreError> {
        Err(self.read_only())
    }

    fn is_leased(&self, _: &RunId) -> bool {
        // A view cannot tell: never call a run stopped on a guess.
        true
    }

    fn read_log(&self, run: &RunId, log: Log) -> Result<Vec<u8>, StoreError> {
        Ok(self
            .logs
            .get(&(run.clone(), log))
            .cloned()
            .unwrap_or_default())
    }

    fn append_log(&self, _: &RunId, _: Log, _: &[u8]) -> Result<(), StoreError> {
        Err(self.read_only())
    }

    fn get(&self, run: &RunId, item: Item<'_>) -> Result<Option<Vec<u8>>, StoreError> {
        let (kind, name) = item_key(item)?;
        Ok(self.documents.get(&(run.clone(), kind, name)).cloned())
    }

    fn create(&self, _: &RunId, _: Item<'_>, _: &[u8]) -> Result<Created, StoreError> {
        Err(self.read_only())
    }

    fn put(&self, _: &RunId, _: Item<'_>, _: &[u8]) -> Result<(), StoreError> {
        Err(self.read_only())
    }

    fn remove(&self, _: &RunId, _: Item<'_>) -> Result<bool, StoreError> {
        Err(self.read_only())
    }

    fn supersede_decision(&self, _: &RunId, _: &HandoffId) -> Result<(), StoreError> {
        Err(self.read_only())
    }

    fn list(&self, run: &RunId, set: Set) -> Result<Vec<String>, StoreError> {
        Ok(self
            .names
            .get(&(run.clone(), set_key(set)))
            .cloned()
            .unwrap_or_default())
    }

    fn origin(&self, run: &RunId) -> Result<Option<RunOrigin>, StoreError> {
        Ok(self.origins.get(run).cloned())
    }

    fn lock(&self, _: &RunId, _: PointKind) -> Result<Box<dyn Held>, StoreError> {
        Err(self.read_only())
    }

    // A view is of the runs' decision points: it holds nothing of the
    // store as a whole.
    fn store_get(&self, _: StoreSet, _: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(None)
    }

    fn store_create(&self, _: StoreSet, _: &str, _: &[u8]) -> Result<Created, StoreError> {
        Err(self.read_only())
    }

    fn store_remove(&self, _: StoreSet, _: &str) -> Result<bool, StoreError> {
        Err(self.read_only())
    }

    fn store_names(&self, _: StoreSet) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    fn store_append(&self, _: StoreLog, _: &[u8]) -> Result<(), StoreError> {
        Err(self.read_only())
    }

    fn store_read(&self, _: StoreLog) -> Result<Vec<u8>, StoreError> {
        Ok(Vec::new())
    }

    fn store_lock(&self, _: StoreLog, _: Duration) -> Result<Option<Box<dyn Held>>, StoreError> {
        Err(self.read_only())
    }
}
