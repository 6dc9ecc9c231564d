//! The shared vocabulary and durable file primitives of Orcho.
//!
//! Every other Orcho crate builds on this one, and plugin authors see its
//! types in every signature, so it stays small, synchronous (no async
//! runtime) and stable:
//!
//! - **Ids** that are safe to use as file names: [`RunId`] (generated,
//!   sortable by creation time), [`HandoffId`], [`PhaseName`], [`GateName`].
//!   Every way to build one validates it ([`ids`]).
//! - **Vocabulary**: [`Verdict`], [`Severity`], [`Finding`] (with a stable
//!   [`fingerprint`](Finding::fingerprint) to recognise a repeated blocker),
//!   [`RunStatus`], [`Cost`], [`Digest`], [`Timestamp`].
//! - **Versioned documents**: [`SchemaVersion`] and the
//!   [`Document`](schema::Document) trait; readers probe the version first and
//!   refuse documents from a newer Orcho instead of mis-reading them.
//! - **Time** through the [`Clock`] trait: [`SystemClock`] in production,
//!   [`FixedClock`] in tests.
//! - **Durable files** ([`fs`]): [`write_atomic`](fs::write_atomic), the
//!   append-only [`Journal`](fs::Journal) that survives a torn last line, and
//!   cross-process [`LockFile`](fs::LockFile)s with typed guards, and
//!   [`StoreError`], the storage failures every store shares.
//! - **The storage seam** ([`storage`]): [`Storage`](storage::Storage),
//!   where runs and their decisions are kept, named by what they are, and
//!   [`FsStorage`](storage::FsStorage), the directory that keeps them by
//!   default.
//! - **The store layout** ([`layout`]): [`StoreDir`](layout::StoreDir) and
//!   [`RunDir`](layout::RunDir) build every path under a store root, so the
//!   layout is written once.
//!
//! # Example
//!
//! A run's state snapshot and its journal, the way the engine persists every
//! transition: journal the event, then write the state.
//!
//! ```
//! use orcho_core::{
//!     fs::{self, Journal, LockFile},
//!     schema::Document,
//!     FixedClock, RunId, RunStatus, SchemaVersion, Timestamp,
//! };
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct RunState { schema: SchemaVersion, run: RunId, status: RunStatus }
//! impl Document for RunState {
//!     const KIND: &'static str = "run state";
//!     const SCHEMA: SchemaVersion = SchemaVersion::new(1);
//! }
//!
//! #[derive(Serialize, Deserialize)]
//! struct Event { schema: SchemaVersion, at: Timestamp, status: RunStatus }
//!
//! # let tmp = tempfile::tempdir()?;
//! # let store = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let clock = FixedClock::new("2026-11-21T12:00:00Z".parse()?);
//! let run = RunId::generate(&clock);
//! let dir = store.join("runs").join(run.as_str());
//! fs::create_dir_all(&dir)?;
//!
//! let _guard = LockFile::new(dir.join("run.lock")).lock_exclusive()?;
//! let mut journal = Journal::open(&dir.join("journal.jsonl"))?;
//! journal.append(&Event { schema: SchemaVersion::new(1), at: clock.now(), status: RunStatus::Running })?;
//! fs::write_document(&dir.join("run.json"), &RunState { schema: RunState::SCHEMA, run: run.clone(), status: RunStatus::Running })?;
//!
//! let state: RunState = fs::read_document(&dir.join("run.json"))?;
//! assert_eq!(state.run, run);
//! # use orcho_core::Clock;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! - `test-util`: `storage::conformance`, the checks every
//!   [`Storage`](storage::Storage) backend passes, for a backend's own
//!   tests.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API; on-disk formats are versioned
//! and never silently re-interpreted. The minimum supported Rust version is
//! 1.95 (std's file locking).
#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]

mod accessors;
mod clock;
mod cost;
mod digest;
mod error;
mod finding;
pub mod fs;
pub mod glob;
pub mod ids;
pub mod layout;
mod run_status;
pub mod schema;
pub mod spelling;
pub mod storage;
mod suggest;
pub mod unique_keys;
mod verdict;

pub use clock::{Clock, FixedClock, SystemClock, Timestamp};
pub use cost::{Cost, Tokens, Usd};
pub use digest::{Digest, DigestAlgo};
pub use error::{
    DocumentError, DocumentErrorKind, FsError, FsOp, IdError, IdErrorReason, JournalError,
    JournalErrorKind, LockError, LockErrorKind, StoreError, StoreErrorKind, ValueError,
    error_chain,
};
pub use finding::Finding;
pub use ids::{GateName, HandoffId, PhaseName, RunId};
pub use run_status::RunStatus;
pub use schema::SchemaVersion;
pub use suggest::nearest;
pub use verdict::{Severity, Verdict};

#[doc(hidden)]
pub mod __private {
    //! What the exported macros use; not part of the API.
    pub use serde;
}
