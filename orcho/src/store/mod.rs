//! The run store on disk: one directory per run under `<store>/runs/`.

mod format;
mod imp;

pub use imp::{DEFAULT_LOCK_WAIT, RunStore, StoredRun};
