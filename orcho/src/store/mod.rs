//! Where runs are kept: [`Store`], read and decided without a plan, over
//! the storage seam ([`orcho_core::storage`]).

mod asks;
mod command;
mod evidence;
mod format;
mod handle;
mod imp;
mod points;
mod runs;

pub use handle::{Store, Watch};
pub use imp::DEFAULT_LOCK_WAIT;
pub(crate) use imp::StoredRun;
