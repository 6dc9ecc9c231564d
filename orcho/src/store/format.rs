//! On-disk shapes of the run store.

use orcho_core::{SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Serialize};

use crate::state::{RunEvent, RunState};

/// The schema of run journals and snapshots.
///
/// Version 1: the first format.
pub(crate) const RUN_SCHEMA: SchemaVersion = SchemaVersion::new(1);

/// One line of `journal.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventLine {
    pub(crate) schema: SchemaVersion,
    pub(crate) seq: u64,
    pub(crate) at: Timestamp,
    pub(crate) event: RunEvent,
}

/// `run.json`: the latest state, rebuilt from the journal whenever they
/// disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) state: RunState,
}

impl Document for StateDoc {
    const KIND: &'static str = "run state";
    const SCHEMA: SchemaVersion = RUN_SCHEMA;
}
