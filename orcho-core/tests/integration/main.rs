//! Integration tests of `orcho-core` that need real processes: crash
//! consistency of durable writes and cross-process locking.
//!
//! Child processes are this same test binary, re-run on one `#[ignore]`d
//! test that only acts when `ORCHO_TEST_CHILD` is set.

mod child;
mod crash;
mod lock;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;
