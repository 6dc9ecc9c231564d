//! Taking a fingerprint: list, stat, hash in parallel, combine.

use std::{
    collections::VecDeque,
    ffi::OsStr,
    fs::File,
    io::{self, Read},
    os::{
        fd::OwnedFd,
        unix::ffi::{OsStrExt, OsStringExt},
    },
    path::{Path, PathBuf},
    sync::{Condvar, Mutex, OnceLock, PoisonError},
};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::Digest;

use super::{
    cache::{self, Cached, Stat, StatCache},
    listing::{self, CachedListing, Listing},
    walk,
};
use crate::{FingerprintError, FingerprintErrorKind, exec::BaseEnv};

/// The `derive_key` context of checkout fingerprints. Changing what is
/// hashed means changing this string, which changes every fingerprint.
pub const FINGERPRINT_CONTEXT: &str = "orcho checkout fingerprint v2";

/// The `derive_key` context of the per-file content digests inside a
/// fingerprint.
pub const FILE_CONTEXT: &str = "orcho file content v1";

/// The store directory name that is never part of a fingerprint.
pub const STORE_DIR_NAME: &str = ".orcho";

const READ_CHUNK: usize = 64 * 1024;

/// How the file set of a fingerprint was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileSource {
    /// `git ls-files -co --exclude-standard`.
    Git,
    /// A walk honouring ignore files.
    Walk,
    /// The list `git ls-files` gave last time, reused because nothing it
    /// depends on changed since.
    CachedGitListing,
    /// The list `git ls-files` gave last time, brought up to date by git
    /// listing only what changed: the few directories whose names changed
    /// (the index and ignore rules the same), or the index alone (the
    /// names and ignore rules the same).
    RelistedGitListing,
}

/// A checkout fingerprint and what went into it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fingerprint {
    /// The digest, `blake3:<hex>`.
    pub digest: Digest,
    /// How many entries (files, symlinks, others) it covers.
    pub files: u64,
    /// The total size of the regular files it covers.
    pub bytes: u64,
    /// How many files had to be read (not answered by the stat cache).
    pub hashed: u64,
    /// How the file set was found.
    pub source: FileSource,
    /// The git submodules it covers, each with the fingerprint of its own
    /// work tree (in path order): an uncommitted edit or a new commit inside
    /// one changes its digest, and so the checkout's.
    pub submodules: Vec<Submodule>,
}

/// A git submodule inside a fingerprinted tree, and the fingerprint of its
/// work tree (taken the same way, recursively).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Submodule {
    /// Its path, relative to the fingerprinted root.
    pub path: Utf8PathBuf,
    /// The fingerprint of its work tree.
    pub digest: Digest,
}

/// Takes checkout fingerprints. See the [module docs](super) for exactly
/// what is hashed.
///
/// ```
/// use orcho_receipts::fingerprint::Fingerprinter;
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// std::fs::create_dir(root.join("src"))?;
/// orcho_core::fs::write_atomic(&root.join("src/lib.rs"), b"pub fn f() {}\n")?;
///
/// let fingerprinter = Fingerprinter::new().with_cache_dir(root.join(".orcho/cache/fingerprint"));
/// let first = fingerprinter.fingerprint(&root, &[])?;
/// let again = fingerprinter.fingerprint(&root, &[])?;
/// assert_eq!(first.digest, again.digest);
/// assert!(first.digest.to_string().starts_with("blake3:"));
///
/// orcho_core::fs::write_atomic(&root.join("src/lib.rs"), b"pub fn g() {}\n")?;
/// assert_ne!(fingerprinter.fingerprint(&root, &[])?.digest, first.digest);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    cache_dir: Option<Utf8PathBuf>,
    exclude: Vec<PathBuf>,
    threads: usize,
    env: BaseEnv,
    use_git: bool,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprinter {
    /// A fingerprinter without a stat cache, using git when the root is in a
    /// git work tree, with [`BaseEnv::inherit`] for running git, and two
    /// reads in flight per core (at least four).
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        Self {
            cache_dir: None,
            exclude: Vec::new(),
            threads: (cores * 2).clamp(4, 64),
            env: BaseEnv::inherit(),
            use_git: true,
        }
    }

    /// Never lists anything under `path` (typically the receipt store, when
    /// it is not the default `.orcho/`, which is always excluded).
    #[must_use]
    pub fn excluding(mut self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.exclude
            .push(std::path::absolute(&path).unwrap_or(path));
        self
    }

    /// How many files are read at once (at least 1).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// How many files are read at once.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Always walks the directory, even inside a git work tree.
    #[must_use]
    pub fn without_git(mut self) -> Self {
        self.use_git = false;
        self
    }

    /// Fingerprints the files of `root` under the `subject` paths (relative
    /// to `root`; empty means everything).
    ///
    /// # Errors
    ///
    /// A [`FingerprintError`] when git fails, or a directory or file cannot
    /// be read. A file that disappears while being fingerprinted is left out,
    /// not an error. Stat-cache problems are never errors.
    pub fn fingerprint(
        &self,
        root: &Utf8Path,
        subject: &[Utf8PathBuf],
    ) -> Result<Fingerprint, FingerprintError> {
        let io_err = |(path, source): (PathBuf, io::Error)| {
            FingerprintError::new(
                root,
                FingerprintErrorKind::Io {
                    path: path.to_string_lossy().into_owned(),
                    source,
                },
            )
        };
        let excluded = self.excluded_prefixes(root);
        let subject = normalize_subject(subject);
        let keep = |p: &[u8]| {
            !excluded.iter().any(|x| under(p, x))
                && (subject.is_empty() || subject.iter().any(|s| under(p, s)))
        };
        let cache_file = self.cache_dir.as_ref().and_then(|dir| {
            std::fs::create_dir_all(dir).ok()?;
            Some(cache::cache_file(dir, root.as_std_path()))
        });
        let snapshot = match (&self.cache_dir, &cache_file) {
            (Some(dir), Some(_)) => cache::fs_now(dir).ok(),
            _ => None,
        };
        let stat_cache: OnceLock<StatCache> = OnceLock::new();
        let use_git = self.use_git && walk::in_git_work_tree(root.as_std_path());
        let mut source = if use_git {
            FileSource::Git
        } else {
            FileSource::Walk
        };
        let queue = Queue::default();
        let proto = blake3::Hasher::new_derive_key(FILE_CONTEXT);
        let root_path = root.as_std_path();
        let root_fd = rustix::fs::open(
            root_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err((root_path.to_owned(), e.into())))?;
        let dir = Root {
            fd: root_fd,
            path: root_path,
        };
        let listing_file = match (&self.cache_dir, snapshot) {
            (Some(cache_dir), Some(_)) if use_git && listing::applies(root_path) => {
                Some(listing::file(cache_dir, root_path, &subject, &self.env))
            }
            _ => None,
        };
        let reused = match (
            listing_file
                .as_deref()
                .and_then(|f| Listing::load(f, &dir.fd)),
            snapshot,
        ) {
            (Some(CachedListing::Valid(listing)), _) => {
                source = FileSource::CachedGitListing;
                Some(listing)
            }
            (Some(CachedListing::Stale(listing, changed)), Some(snapshot)) => {
                let relisted = listing_file.as_deref().and_then(|file| {
                    listing.relist(
                        file, root_path, &dir.fd, &excluded, &self.env, snapshot, &changed,
                    )
                });
                if relisted.is_some() {
                    source = FileSource::RelistedGitListing;
                }
                relisted
            }
            (Some(CachedListing::Reindexed(listing)), Some(snapshot)) => {
                let relisted = listing_file.as_deref().and_then(|file| {
                    listing.reindex(file, root_path, &dir.fd, &self.env, snapshot)
                });
                if relisted.is_some() {
                    source = FileSource::RelistedGitListing;
                }
                relisted
            }
            _ => None,
        };

        // Producer: git (streamed) or the walk feeds batches of paths;
        // workers stat and hash them as they arrive.
        let (produced, worked) = std::thread::scope(|scope| {
            // The producer starts first, so git runs while the cache loads.
            let producer = scope.spawn(|| {
                // Closes the queue even if listing panics, so no worker waits
                // forever.
                let _close = CloseOnDrop(&queue);
                let mut batch: Vec<Vec<u8>> = Vec::with_capacity(QUEUE_BATCH);
                let mut next_seq = 0usize;
                let mut on_path = |p: &[u8]| {
                    if keep(p) {
                        batch.push(p.to_vec());
                        if batch.len() == QUEUE_BATCH {
                            let full =
                                std::mem::replace(&mut batch, Vec::with_capacity(QUEUE_BATCH));
                            queue.push(next_seq, full);
                            next_seq += QUEUE_BATCH;
                        }
                    }
                };
                let produced = if let Some(listing) = &reused {
                    for p in &listing.paths {
                        on_path(p);
                    }
                    Ok(Vec::new())
                } else if use_git {
                    walk::git_files_streaming(root, &self.env, &mut on_path)
                } else {
                    walk::walk_files(root).map(|paths| {
                        for p in &paths {
                            on_path(p);
                        }
                        Vec::new()
                    })
                };
                if !batch.is_empty() {
                    let len = batch.len();
                    queue.push(next_seq, batch);
                    next_seq += len;
                }
                produced.map(|untracked| (next_seq, untracked))
            });
            let cache = stat_cache.get_or_init(|| match (&cache_file, snapshot) {
                (Some(file), Some(_)) => StatCache::load(file),
                _ => StatCache::default(),
            });
            let workers: Vec<_> = (0..self.threads)
                .map(|_| scope.spawn(|| work(&queue, &dir, cache, &proto)))
                .collect();
            let worked: Vec<_> = workers
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err((
                            root_path.to_owned(),
                            io::Error::other("a hashing thread panicked"),
                        ))
                    })
                })
                .collect();
            let produced = producer.join().unwrap_or_else(|_| {
                Err(io_err((
                    root_path.to_owned(),
                    io::Error::other("the listing thread panicked"),
                )))
            });
            (produced, worked)
        });
        let (total, untracked) = produced?;
        // Put the results back in listing order: git lists sorted runs
        // (tracked, then untracked), often already sorted as a whole.
        let mut slots: Vec<Option<(Vec<u8>, Option<Entry>)>> = Vec::new();
        slots.resize_with(total, || None);
        for w in worked {
            for (seq, path, entry) in w.map_err(io_err)? {
                if let Some(slot) = slots.get_mut(seq) {
                    *slot = Some((path, entry));
                }
            }
        }
        let mut entries: Vec<(Vec<u8>, Option<Entry>)> = slots.into_iter().flatten().collect();
        // A directory in the listing is a git submodule (a gitlink): its
        // work tree is part of the subject, fingerprinted on its own.
        let mut submodules = Vec::new();
        for (path, entry) in &mut entries {
            let Some(entry) = entry.as_mut().filter(|e| e.kind == Kind::Dir) else {
                continue;
            };
            let path = Utf8PathBuf::from(String::from_utf8_lossy(path).into_owned());
            let sub = root.join(&path);
            if !sub.join(".git").exists() {
                // Not checked out: only its presence counts.
                continue;
            }
            let digest = self.fingerprint(&sub, &[])?.digest;
            entry.kind = Kind::Submodule;
            entry.content = *digest.as_bytes();
            submodules.push(Submodule { path, digest });
        }
        submodules.sort_by(|a, b| a.path.cmp(&b.path));
        let mut order: Vec<u32> = (0..u32::try_from(entries.len()).unwrap_or(u32::MAX)).collect();
        if !entries.windows(2).all(|w| w[0].0 <= w[1].0) {
            // Sort small indices, not the entries; the stable sort merges
            // the sorted runs in close to linear time.
            order.sort_by(|&a, &b| entries[a as usize].0.cmp(&entries[b as usize].0));
        }
        order.dedup_by(|a, b| entries[*a as usize].0 == entries[*b as usize].0);
        let stat_cache = stat_cache.into_inner().unwrap_or_default();
        // After a run of git over a tree seen before (the stat cache was not
        // empty), record what the listing depends on, so the next
        // fingerprint of an unchanged tree can skip git. Not on a first
        // fingerprint, which must stay cheap.
        if reused.is_none()
            && stat_cache.len() > 0
            && let (Some(file), Some(snapshot)) = (&listing_file, snapshot)
        {
            Listing::record(
                file,
                root_path,
                &dir.fd,
                &excluded,
                &self.env,
                snapshot,
                entries.iter().map(|(p, _)| p.clone()).collect(),
                untracked.into_iter().filter(|p| keep(p)).collect(),
            );
        }
        let mut fingerprint = self.finish(
            &entries,
            &order,
            &stat_cache,
            cache_file.as_deref(),
            snapshot,
            source,
        );
        fingerprint.submodules = submodules;
        Ok(fingerprint)
    }

    fn finish(
        &self,
        entries: &[(Vec<u8>, Option<Entry>)],
        order: &[u32],
        stat_cache: &StatCache,
        cache_file: Option<&Utf8Path>,
        snapshot: Option<(i64, u32)>,
        source: FileSource,
    ) -> Fingerprint {
        let mut files = 0u64;
        let mut bytes = 0u64;
        let mut hashed = 0u64;
        let mut cached_files = 0usize;
        let mut hasher = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
        // Entries are encoded into a buffer that is hashed in large pieces:
        // the same bytes as hashing each field, fewer calls.
        let mut buf: Vec<u8> = Vec::with_capacity(FEED_CHUNK + 4096);
        for &i in order {
            let (path, entry) = &entries[i as usize];
            let Some(entry) = entry else { continue };
            files += 1;
            if entry.kind == Kind::File {
                bytes += entry.stat.size;
                cached_files += 1;
            }
            hashed += u64::from(entry.hashed);
            entry.feed(path, &mut buf);
            if buf.len() >= FEED_CHUNK {
                hasher.update(&buf);
                buf.clear();
            }
        }
        hasher.update(&buf);
        hasher.update(&files.to_le_bytes());
        if (hashed > 0 || cached_files != stat_cache.len())
            && let (Some(file), Some(snapshot)) = (cache_file, snapshot)
        {
            let cached: Vec<Cached<'_>> = order
                .iter()
                .map(|&i| &entries[i as usize])
                .filter_map(|(path, e)| {
                    let e = e.as_ref().filter(|e| e.kind == Kind::File)?;
                    Some(Cached {
                        path,
                        stat: e.stat,
                        digest: e.content,
                    })
                })
                .collect();
            // The cache only saves time; failing to write it costs nothing else.
            let _ = cache::save(file, snapshot, cached.into_iter());
        }
        Fingerprint {
            digest: Digest::from_blake3(hasher.finalize()),
            files,
            bytes,
            hashed,
            source,
            submodules: Vec::new(),
        }
    }

    /// The paths (relative to `root`, sorted by their bytes) that a
    /// fingerprint of `root` and `subject` covers, before checking which of
    /// them still exist.
    ///
    /// # Errors
    ///
    /// As [`fingerprint`](Self::fingerprint).
    pub fn files(
        &self,
        root: &Utf8Path,
        subject: &[Utf8PathBuf],
    ) -> Result<Vec<PathBuf>, FingerprintError> {
        let (paths, _) = self.list(root, subject)?;
        Ok(paths
            .into_iter()
            .map(|p| PathBuf::from(std::ffi::OsString::from_vec(p)))
            .collect())
    }

    fn list(
        &self,
        root: &Utf8Path,
        subject: &[Utf8PathBuf],
    ) -> Result<(Vec<Vec<u8>>, FileSource), FingerprintError> {
        let (mut paths, source) = if self.use_git && walk::in_git_work_tree(root.as_std_path()) {
            (walk::git_files(root, &self.env)?, FileSource::Git)
        } else {
            (walk::walk_files(root)?, FileSource::Walk)
        };
        let excluded = self.excluded_prefixes(root);
        let subject = normalize_subject(subject);
        paths.retain(|p| {
            !excluded.iter().any(|x| under(p, x))
                && (subject.is_empty() || subject.iter().any(|s| under(p, s)))
        });
        paths.sort_unstable();
        paths.dedup();
        Ok((paths, source))
    }

    fn excluded_prefixes(&self, root: &Utf8Path) -> Vec<Vec<u8>> {
        let mut out = vec![STORE_DIR_NAME.as_bytes().to_vec()];
        let abs_root = std::path::absolute(root.as_std_path()).ok();
        for x in &self.exclude {
            if let Some(rel) = abs_root.as_ref().and_then(|r| x.strip_prefix(r).ok()) {
                let bytes = rel.as_os_str().as_bytes().to_vec();
                if !bytes.is_empty() {
                    out.push(bytes);
                }
            }
        }
        if let Some(dir) = &self.cache_dir
            && let Some(rel) = abs_root.as_ref().and_then(|r| {
                std::path::absolute(dir.as_std_path())
                    .ok()
                    .and_then(|d| d.strip_prefix(r).ok().map(Path::to_owned))
            })
            && !rel.as_os_str().is_empty()
        {
            out.push(rel.as_os_str().as_bytes().to_vec());
        }
        out
    }
}

orcho_core::setters! {
    impl Fingerprinter {
        /// Keeps a stat cache in `dir` (created when missing), one file per root.
        pub fn with_cache_dir(dir: Some(impl Into<Utf8PathBuf>)) => cache_dir;
        /// The environment git runs with.
        pub fn with_env(env: BaseEnv);
    }
}

fn normalize_subject(subject: &[Utf8PathBuf]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for s in subject {
        let s = s.as_str().trim_start_matches("./").trim_end_matches('/');
        if s.is_empty() || s == "." {
            return Vec::new();
        }
        out.push(s.as_bytes().to_vec());
    }
    out
}

/// Whether `path` is `prefix` or lies under it.
pub(crate) fn under(path: &[u8], prefix: &[u8]) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Symlink,
    Dir,
    /// A checked-out git submodule; `content` is its work tree's
    /// fingerprint.
    Submodule,
    Other,
}

/// One listed path, as it goes into the fingerprint.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) kind: Kind,
    pub(crate) stat: Stat,
    pub(crate) content: [u8; 32],
    pub(crate) link: Vec<u8>,
    pub(crate) hashed: bool,
}

impl Entry {
    /// Feeds the entry into the fingerprint: path length and bytes, kind,
    /// whether the owner may execute it, then the content digest or the
    /// symlink target.
    pub(crate) fn feed(&self, path: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&(path.len() as u64).to_le_bytes());
        out.extend_from_slice(path);
        let kind: u8 = match self.kind {
            Kind::File => b'f',
            Kind::Symlink => b'l',
            Kind::Dir => b'd',
            Kind::Submodule => b's',
            Kind::Other => b'o',
        };
        out.push(kind);
        // As git sees a file's mode: executable or not. Other permission
        // bits follow the umask of whoever wrote the file, and two checkouts
        // of the same tree must have the same fingerprint.
        out.push(u8::from(self.stat.mode & 0o100 != 0));
        match self.kind {
            Kind::File | Kind::Submodule => {
                out.extend_from_slice(&self.content);
            }
            Kind::Symlink => {
                out.extend_from_slice(&(self.link.len() as u64).to_le_bytes());
                out.extend_from_slice(&self.link);
            }
            Kind::Dir | Kind::Other => {}
        }
    }
}

const QUEUE_BATCH: usize = 64;
const FEED_CHUNK: usize = 64 * 1024;

/// A batch of paths and the listing position of its first path.
type Batch = (usize, Vec<Vec<u8>>);

/// Batches of paths from the producer to the workers.
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<(VecDeque<Batch>, bool)>,
    ready: Condvar,
}

impl Queue {
    /// Queues a batch whose first path has listing position `seq`.
    fn push(&self, seq: usize, batch: Vec<Vec<u8>>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0.push_back((seq, batch));
        drop(state);
        self.ready.notify_one();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.ready.notify_all();
    }

    /// The next batch, or `None` once closed and empty.
    fn pop(&self) -> Option<Batch> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(batch) = state.0.pop_front() {
                return Some(batch);
            }
            if state.1 {
                return None;
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

struct CloseOnDrop<'a>(&'a Queue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

type Worked = Result<Vec<(usize, Vec<u8>, Option<Entry>)>, (PathBuf, io::Error)>;

/// A worker: stats and hashes batches until the queue closes. After an error
/// it keeps draining (so the producer never blocks) but does no more work.
/// The fingerprint root: paths are looked up relative to its descriptor.
struct Root<'a> {
    fd: OwnedFd,
    path: &'a Path,
}

fn work(queue: &Queue, root: &Root<'_>, stat_cache: &StatCache, proto: &blake3::Hasher) -> Worked {
    let mut out = Vec::new();
    let mut failed = None;
    let mut buf = vec![0u8; READ_CHUNK];
    while let Some((first, batch)) = queue.pop() {
        if failed.is_some() {
            continue;
        }
        for (seq, path) in (first..).zip(batch) {
            match one(
                root,
                &path,
                stat_cache.find(&path),
                stat_cache,
                proto,
                &mut buf,
            ) {
                Ok(entry) => out.push((seq, path, entry)),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Stats and, when needed, hashes one path. `None` when it vanished.
fn one(
    root: &Root<'_>,
    rel: &[u8],
    cached: Option<usize>,
    stat_cache: &StatCache,
    proto: &blake3::Hasher,
    buf: &mut [u8],
) -> Result<Option<Entry>, (PathBuf, io::Error)> {
    let rel_os = OsStr::from_bytes(rel);
    let fail = |e: io::Error| (walk::join(root.path, rel), e);
    if cached.is_none() {
        // Nothing cached: open first and stat the open file, one path
        // lookup instead of two. Symlinks (`ELOOP` under `O_NOFOLLOW`) and
        // sockets (`ENXIO`) fall through to the `statat` path below.
        match open_nofollow(root, rel_os) {
            Ok(file) => return from_open(file, proto, buf).map_err(fail),
            Err(e) if is_gone(&e) => return Ok(None),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(code) if code == rustix::io::Errno::LOOP.raw_os_error()
                        || code == rustix::io::Errno::NXIO.raw_os_error()
                ) => {}
            Err(e) => return Err(fail(e)),
        }
    }
    let raw = match rustix::fs::statat(&root.fd, rel_os, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(raw) => raw,
        Err(e) => {
            let e = io::Error::from(e);
            return if is_gone(&e) { Ok(None) } else { Err(fail(e)) };
        }
    };
    let stat = Stat::from_raw(&raw);
    let file_type = FileType::from_raw_mode(raw.st_mode);
    let mut entry = Entry {
        kind: Kind::Other,
        stat,
        content: [0; 32],
        link: Vec::new(),
        hashed: false,
    };
    match file_type {
        FileType::Symlink => {
            entry.kind = Kind::Symlink;
            entry.link = match rustix::fs::readlinkat(&root.fd, rel_os, Vec::new()) {
                Ok(target) => target.into_bytes(),
                Err(e) => {
                    let e = io::Error::from(e);
                    return if is_gone(&e) { Ok(None) } else { Err(fail(e)) };
                }
            };
        }
        FileType::Directory => entry.kind = Kind::Dir,
        FileType::RegularFile => {
            entry.kind = Kind::File;
            if let Some(digest) = stat_cache.trusted(cached, &stat) {
                entry.content = digest;
            } else {
                match hash_file(root, rel_os, proto, buf) {
                    Ok((digest, opened)) => {
                        entry.content = digest;
                        // The stat of the file that was read, taken before
                        // reading it.
                        entry.stat = opened;
                        entry.hashed = true;
                    }
                    Err(e) if is_gone(&e) => return Ok(None),
                    Err(e) => return Err(fail(e)),
                }
            }
        }
        _ => {}
    }
    Ok(Some(entry))
}

fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn open_nofollow(root: &Root<'_>, rel: &OsStr) -> io::Result<File> {
    // `O_NONBLOCK` so that opening a FIFO never waits for a writer; it has
    // no effect on regular files.
    let fd = rustix::fs::openat(
        &root.fd,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

/// The entry of a path opened without following symlinks.
fn from_open(file: File, proto: &blake3::Hasher, buf: &mut [u8]) -> io::Result<Option<Entry>> {
    let raw = rustix::fs::fstat(&file)?;
    let mut entry = Entry {
        kind: Kind::Other,
        stat: Stat::from_raw(&raw),
        content: [0; 32],
        link: Vec::new(),
        hashed: false,
    };
    match FileType::from_raw_mode(raw.st_mode) {
        FileType::RegularFile => {
            // The stat was taken before reading: a write during the read
            // changes the file's times, so the cache never trusts this
            // digest for the new contents.
            entry.kind = Kind::File;
            entry.content = hash_contents(file, proto, buf)?;
            entry.hashed = true;
        }
        FileType::Directory => entry.kind = Kind::Dir,
        _ => {}
    }
    Ok(Some(entry))
}

fn hash_file(
    root: &Root<'_>,
    rel: &OsStr,
    proto: &blake3::Hasher,
    buf: &mut [u8],
) -> io::Result<([u8; 32], Stat)> {
    let file = open_nofollow(root, rel)?;
    let before = Stat::from_raw(&rustix::fs::fstat(&file)?);
    Ok((hash_contents(file, proto, buf)?, before))
}

fn hash_contents(mut file: File, proto: &blake3::Hasher, buf: &mut [u8]) -> io::Result<[u8; 32]> {
    let mut hasher = proto.clone();
    loop {
        match file.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(*hasher.finalize().as_bytes())
}

/// The fingerprint digest of entries given in any order (for tests).
#[cfg(test)]
pub(crate) fn digest_entries(entries: &[(Vec<u8>, Entry)]) -> Digest {
    let mut sorted: Vec<&(Vec<u8>, Entry)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hasher = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
    for (path, entry) in &sorted {
        let mut buf = Vec::new();
        entry.feed(path, &mut buf);
        hasher.update(&buf);
    }
    hasher.update(&(sorted.len() as u64).to_le_bytes());
    Digest::from_blake3(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn file(content: &[u8], mode: u32) -> Entry {
        Entry {
            kind: Kind::File,
            stat: Stat {
                mode,
                ..Stat::default()
            },
            content: *blake3::Hasher::new_derive_key(FILE_CONTEXT)
                .update(content)
                .finalize()
                .as_bytes(),
            link: Vec::new(),
            hashed: true,
        }
    }

    fn tree() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>, u32)>> {
        proptest::collection::btree_map(
            proptest::collection::vec(any::<u8>(), 1..12),
            (
                proptest::collection::vec(any::<u8>(), 0..40),
                prop_oneof![Just(0o644u32), Just(0o755)],
            ),
            1..12,
        )
        .prop_map(|m| m.into_iter().map(|(p, (c, mode))| (p, c, mode)).collect())
    }

    fn entries(tree: &[(Vec<u8>, Vec<u8>, u32)]) -> Vec<(Vec<u8>, Entry)> {
        tree.iter()
            .map(|(p, c, m)| (p.clone(), file(c, *m)))
            .collect()
    }

    proptest! {
        #[test]
        fn independent_of_order(tree in tree(), seed in any::<u64>()) {
            let es = entries(&tree);
            let mut shuffled = es.clone();
            // A deterministic shuffle from the seed.
            let n = shuffled.len();
            for i in (1..n).rev() {
                let j = usize::try_from((seed.rotate_left(i as u32) ^ (i as u64 * 0x9E37_79B9)) % (i as u64 + 1)).unwrap();
                shuffled.swap(i, j);
            }
            prop_assert_eq!(digest_entries(&es), digest_entries(&shuffled));
        }

        #[test]
        fn any_byte_name_or_mode_change_changes_it(tree in tree(), which in any::<prop::sample::Index>(), what in 0u8..4, byte in any::<u8>()) {
            let before = digest_entries(&entries(&tree));
            let mut changed = tree;
            let i = which.index(changed.len());
            match what {
                0 => changed[i].1.push(byte),
                1 => {
                    if changed[i].1.is_empty() { changed[i].1.push(byte) } else {
                        let k = usize::from(byte) % changed[i].1.len();
                        changed[i].1[k] ^= 1;
                    }
                }
                2 => changed[i].2 ^= 0o100,
                _ => {
                    let mut name = changed[i].0.clone();
                    name.push(b'~');
                    prop_assume!(!changed.iter().any(|e| e.0 == name));
                    changed[i].0 = name;
                }
            }
            prop_assert_ne!(before, digest_entries(&entries(&changed)));
        }
    }

    #[test]
    fn path_boundaries_are_unambiguous() {
        // ("ab", "c") and ("a", "bc") must differ: lengths are hashed.
        let a = vec![(b"ab".to_vec(), file(b"c", 0o644))];
        let b = vec![(b"a".to_vec(), file(b"bc", 0o644))];
        assert_ne!(digest_entries(&a), digest_entries(&b));
    }
}
