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
