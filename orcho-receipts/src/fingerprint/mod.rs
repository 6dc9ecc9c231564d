//! Checkout fingerprints: one digest for "these exact files".
//!
//! A fingerprint is a blake3 digest in `derive_key` mode under the context
//! [`FINGERPRINT_CONTEXT`] (`"orcho checkout fingerprint v2"`), written
//! `blake3:<hex>`. It covers, for every listed path in byte order:
//!
//! - the relative path, as raw bytes with `/` separators (so non-UTF-8 names
//!   work; they are shown lossily in messages), prefixed by its length;
//! - the kind: regular file, symlink, git submodule, directory (a submodule
//!   that is not checked out) or other (a FIFO or socket, which is never
//!   opened);
//! - whether its owner may execute it (`mode & 0o100`), as git records a
//!   file's mode: the other permission bits depend on the umask of whoever
//!   wrote it, and two checkouts of the same tree fingerprint alike (`v1`
//!   hashed every permission bit);
//! - for a file, the blake3 digest of its contents under [`FILE_CONTEXT`];
//!   for a symlink, its target (symlinks are never followed); for a
//!   checked-out submodule, the fingerprint of its own work tree, taken the
//!   same way (so an uncommitted edit inside it changes the checkout's);
//!
//! and finally the number of entries. Changing any byte, name, executable
//! bit or link target changes the fingerprint; the order the files were
//! found in does not.
//!
//! **Which files**: in a git work tree, exactly what
//! `git ls-files -co --exclude-per-directory=.gitignore` lists. The tracked files are read
//! from `.git/index` and the untracked ones found by a walk with git's
//! ignore rules, in this process ([`FileSource::IndexAndWalk`]); where that
//! reading does not apply (a linked worktree, a split or sparse index,
//! `core.ignoreCase`, …) git lists them ([`FileSource::Git`]). Elsewhere a
//! walk that honours `.gitignore` and `.ignore` files. Always excluded:
//! `.orcho/` (the default store), any path given to
//! [`Fingerprinter::excluding`], and the cache directory. A listed file that
//! no longer exists (a deleted tracked file) is left out, so deleting a file
//! changes the fingerprint.
//!
//! **Speed**: files are stat-ed and hashed by a pool of threads with more
//! reads in flight than cores, each file read in one call when it is small,
//! and a cache ([`Fingerprinter::with_cache_dir`]) lets a second fingerprint
//! of an unchanged tree read no file at all. The cache follows git's
//! racily-clean rule and is only ever an optimisation. In a git work tree it
//! also keeps what the file list depends on (the index, every directory the
//! walk read and its `.gitignore`, the excludes and configuration files), as
//! git's untracked cache does: while those hold, the list is reused
//! ([`FileSource::CachedGitListing`]); where some changed, only that is read
//! again ([`FileSource::RelistedGitListing`]). A build writing into an
//! ignored folder changes none of it.

mod cache;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod git;
mod ignore;
mod imp;
mod listing;
mod manifest;
mod paths;
mod walk;

pub use imp::{
    FILE_CONTEXT, FINGERPRINT_CONTEXT, FileSource, Fingerprint, Fingerprinter, STORE_DIR_NAME,
    Submodule, TreeFile,
};
pub use manifest::PathChanges;
pub use walk::in_git_work_tree;
