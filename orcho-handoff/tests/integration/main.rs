//! Integration tests of `orcho-handoff`: the store on a real file system,
//! two processes racing to decide, the CI autopilot with a scripted advisor,
//! random event sequences, and snapshots of every on-disk document.
//!
//! Child processes are this same test binary, re-run on one `#[ignore]`d
//! test that only acts when `ORCHO_TEST_CHILD` is set.

mod autopilot;
mod child;
mod crash;
mod evidence;
mod fixtures;
mod formats;
mod race;
mod sequences;
mod store;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;
