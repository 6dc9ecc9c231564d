//! Integration tests of `orcho-delivery`: real git repositories in temporary
//! directories, a retained worktree, the delivery gate and pre-run intake
//! acting on them, follow-ups, and the inbox over every kind of decision
//! point.

mod delivery;
mod fixtures;
mod followup;
mod inbox;
mod intake;
mod repo;
mod worktree;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// The directory store at `root`, as the inbox reads it.
pub(crate) fn dir_store(
    root: &camino::Utf8Path,
) -> std::sync::Arc<dyn orcho_core::storage::Storage> {
    std::sync::Arc::new(orcho_core::storage::FsStorage::new(root))
}
