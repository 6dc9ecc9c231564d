//! The storage seam: where runs and their decisions are kept.
//!
//! [`Storage`] names what Orcho keeps per run by what it is — the run log
//! (created whole, appended under an exclusive [`RunLease`], replayed), the
//! questions, decisions and outcomes of decision points, advice, waivers,
//! host metadata, evidence — and the run listing. The crates that own each
//! document encode and version it ([`get_document`], [`put_document`],
//! [`read_log`], …), so a backend only keeps bytes under domain names.
//!
//! [`FsStorage`] keeps them in a directory (`.orcho/` in the checkout, the
//! default, which needs nothing); a database backend lives in its own
//! crate. Receipts, worktrees and the logs of processes stay on the disk of
//! the machine whose checkout they belong to, outside this seam.
//!
//! ```
//! use std::sync::Arc;
//! use orcho_core::{RunId, storage::{self, FsStorage, Item, Log, NewRun, Storage}};
//!
//! # let tmp = tempfile::tempdir()?;
//! # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let storage: Arc<dyn Storage> = Arc::new(FsStorage::new(&root));
//! let run: RunId = "run-1".parse()?;
//! let mut lease = storage.create_run(&run, NewRun::new(br#"{"schema":1,"seq":1}"#, b"{}\n"))?;
//! lease.append(br#"{"schema":1,"seq":2}"#)?;
//! assert_eq!(storage.read_log(&run, Log::Run)?, b"{\"schema\":1,\"seq\":1}\n{\"schema\":1,\"seq\":2}\n");
//! // While the lease is held, nobody else drives the run.
//! assert!(storage.lease(&run, std::time::Duration::ZERO)?.is_none());
//! drop(lease);
//! assert!(storage.lease(&run, std::time::Duration::ZERO)?.is_some());
//! assert_eq!(storage.runs()?.runs, [run]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod archive;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod conformance;
mod docs;
mod fs;
mod seam;
mod view;

pub use docs::{
    append_record, create_document, encode_record, get_document, put_document, read_log,
    refuse_downgrade,
};
pub use fs::FsStorage;
pub use seam::{
    Created, Held, Item, Log, NewRun, PointKind, RunLease, RunListing, RunOrigin, Set, Storage,
    StoreLog, StoreSet, Subscription,
};
pub use view::{View, item_key, set_key};
