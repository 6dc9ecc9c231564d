//! Durable files: the only way Orcho persists anything.
//!
//! - [`write_atomic`] replaces a file so that a crash at any point leaves
//!   either the old or the new content, never a mix; [`write_new_atomic`]
//!   does the same for a file that must not exist yet (first writer wins).
//! - [`create_dir_whole`] creates a directory with its contents, so that it
//!   exists complete or not at all.
//! - [`write_document`] and [`read_document`] add the versioned-document rules
//!   of [`schema`](crate::schema) on top.
//! - [`Journal`] is an append-only JSON-lines file whose reader tolerates a
//!   torn last line.
//! - [`LockFile`] gives cross-process advisory locks with typed guards.
//! - [`is_git_top`] says where a git work tree starts, as git would.
//!
//! `clippy.toml` bans `std::fs::write` in the workspace so that nothing
//! bypasses these.

mod atomic;
mod git;
mod journal;
mod lock;

pub(crate) use atomic::sync_parent;
pub use atomic::{
    create_dir_all, create_dir_whole, read_document, write_atomic, write_document, write_new_atomic,
};
pub use git::is_git_top;
pub use journal::{Journal, JournalRead, TornTail, encode_line, parse as parse_journal};
pub use lock::{ExclusiveGuard, LockFile, SharedGuard};
