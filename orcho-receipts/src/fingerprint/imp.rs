//! Taking a fingerprint: list, stat, hash in parallel, combine.

use std::{
    collections::VecDeque,
    ffi::OsStr,
    fs::File,
    io::{self, Read},
    os::{
        fd::{AsFd, BorrowedFd, OwnedFd},
        unix::ffi::{OsStrExt, OsStringExt},
    },
    path::{Path, PathBuf},
    sync::{Condvar, Mutex, OnceLock, PoisonError},
};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::Digest;

use super::{
    cache::{self, GitState, KnownFile, Mark, Stat, TreeCache},
    git::{
        Probe, Repo,
        untracked::{self, DirRecord},
    },
    listing::{self, Revalidated},
    paths::PathList,
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
    /// `git ls-files -co --exclude-per-directory=.gitignore`.
    Git,
    /// A walk honouring ignore files.
    Walk,
    /// The list made last time, reused because nothing it depends on
    /// changed since.
    CachedGitListing,
    /// The list made last time, brought up to date by reading again only
    /// what changed: the index, the directories whose names changed, the
    /// folders below a `.gitignore` that changed.
    RelistedGitListing,
    /// What `git ls-files -co --exclude-per-directory=.gitignore` lists, found in this
    /// process: the tracked files read from `.git/index`, the untracked ones
    /// by a walk with git's ignore rules.
    IndexAndWalk,
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
    /// How many files had to be read (not answered by the cache).
    pub hashed: u64,
    /// How the file set was found.
    pub source: FileSource,
    /// The git submodules it covers, each with the fingerprint of its own
    /// work tree (in path order): an uncommitted edit or a new commit inside
    /// one changes its digest, and so the checkout's.
    pub submodules: Vec<Submodule>,
    /// The targets of the symbolic links it covers that point outside the
    /// fingerprinted root (absolute, `.` and `..` resolved as written): the
    /// fingerprint covers the links, not what they point at, so a receipt
    /// binds these by content of their own.
    pub links_out: Vec<Utf8PathBuf>,
}

/// One entry of a git tree, as [`Fingerprinter::of_tree`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TreeFile {
    /// A file (`100644` or `100755`): made with [`TreeFile::file`].
    File {
        /// Whether git records it executable (`100755`).
        executable: bool,
        /// Its contents' digest under [`FILE_CONTEXT`].
        digest: [u8; 32],
        /// Its size in bytes.
        size: u64,
    },
    /// A symbolic link (`120000`) and its target.
    Symlink {
        /// The target, as the blob holds it.
        target: Vec<u8>,
    },
    /// A submodule (`160000`) at commit `commit`.
    Submodule {
        /// The submodule's commit, as the tree records it.
        commit: String,
        /// The fingerprint of the submodule's own tree at that commit,
        /// taken the same way, when it is checked out; `None` when it is
        /// not (its empty directory is then all that counts).
        fingerprint: Option<Digest>,
    },
}

impl TreeFile {
    /// A file with `contents`, as the blob holds them.
    pub fn file(executable: bool, contents: &[u8]) -> Self {
        Self::File {
            executable,
            digest: *blake3::Hasher::new_derive_key(FILE_CONTEXT)
                .update(contents)
                .finalize()
                .as_bytes(),
            size: contents.len() as u64,
        }
    }
}

/// A git submodule inside a fingerprinted tree, and the fingerprint of its
/// work tree (taken the same way, recursively).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Submodule {
    /// Its path, relative to the fingerprinted root (a name that is not
    /// UTF-8 shown with replacement characters; its digest is of the real
    /// directory).
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
    seal: cache::Seal,
    exclude: Vec<PathBuf>,
    threads: usize,
    env: BaseEnv,
    use_git: bool,
    everything: bool,
    keep_manifests: bool,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprinter {
    /// A fingerprinter without a cache, listing what git lists when the root
    /// is in a git work tree, with [`BaseEnv::inherit`] as git's
    /// environment, and two reads in flight per core (at least four).
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        Self {
            cache_dir: None,
            seal: cache::Seal::default(),
            exclude: Vec::new(),
            threads: (cores * 2).clamp(4, 64),
            env: BaseEnv::inherit(),
            use_git: true,
            everything: false,
            keep_manifests: false,
        }
    }

    /// Seals the cache (and the manifests beside it) with `key`, a secret
    /// only the host has: a process that can write the cache directory
    /// but not read the key cannot rewrite an entry so that a changed file
    /// passes for the one a receipt proved. Without a key the cache is
    /// sealed with a plain checksum, which catches damage only.
    #[must_use]
    pub fn with_cache_key(mut self, key: [u8; 32]) -> Self {
        self.seal = cache::Seal::keyed(key);
        self
    }

    /// Keeps, beside the cache, what each fingerprint covered path by path
    /// (the newest few per root and subject), so that
    /// [`changes`](Self::changes) can name the paths that differ between
    /// two of them. Needs a cache directory.
    #[must_use]
    pub fn keeping_manifests(mut self) -> Self {
        self.keep_manifests = true;
        self
    }

    /// The paths that differ between the fingerprints `from` and `to` of
    /// `root` and `subject`, both taken by a fingerprinter
    /// [keeping manifests](Self::keeping_manifests) with this cache
    /// directory; `None` when either manifest is not at hand.
    pub fn changes(
        &self,
        root: &Utf8Path,
        subject: &[Utf8PathBuf],
        from: &Digest,
        to: &Digest,
    ) -> Option<super::manifest::PathChanges> {
        let dir = self.cache_dir.as_ref()?;
        let root_path = root.as_std_path();
        let scope = self.scope(root_path, normalize_subject(subject));
        let file = cache::cache_file(
            dir,
            root_path,
            &scope.subject,
            &scope.skip,
            &self.env,
            self.everything,
        );
        super::manifest::changes(self.seal, &file, from, to)
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

    /// Covers every file below the root, whatever ignores it and build
    /// output included (and never asks git): how an installed dependency's
    /// folder (`node_modules`, `.venv`) is bound, file by file.
    #[must_use]
    pub fn everything(mut self) -> Self {
        self.use_git = false;
        self.everything = true;
        self
    }

    /// Fingerprints the files of `root` under the `subject` paths (relative
    /// to `root`; empty means everything).
    ///
    /// # Errors
    ///
    /// A [`FingerprintError`] when git fails, or a directory or file cannot
    /// be read. A file that disappears while being fingerprinted is left out,
    /// not an error. Cache problems are never errors.
    pub fn fingerprint(
        &self,
        root: &Utf8Path,
        subject: &[Utf8PathBuf],
    ) -> Result<Fingerprint, FingerprintError> {
        self.fingerprint_at(root.as_std_path(), &normalize_subject(subject), true)
    }

    /// [`fingerprint`](Self::fingerprint) of a root that may not be UTF-8
    /// (a repository of its own inside the work tree, under any name).
    fn fingerprint_at(
        &self,
        root_path: &Path,
        subject: &[Vec<u8>],
        top: bool,
    ) -> Result<Fingerprint, FingerprintError> {
        let root_shown = shown(root_path);
        let io_err = |path: &Path, source: io::Error| {
            FingerprintError::new(
                &root_shown,
                FingerprintErrorKind::Io {
                    path: path.to_string_lossy().into_owned(),
                    source,
                },
            )
        };
        let scope = self.scope(root_path, subject.to_vec());
        let root_fd = rustix::fs::open(
            root_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(root_path, e.into()))?;
        let cache_file = self.cache_dir.as_ref().and_then(|dir| {
            std::fs::create_dir_all(dir).ok()?;
            Some(cache::cache_file(
                dir,
                root_path,
                &scope.subject,
                &scope.skip,
                &self.env,
                self.everything,
            ))
        });
        let snapshot = match (&self.cache_dir, &cache_file) {
            (Some(dir), Some(_)) => cache::fs_now(dir, root_path, &root_fd).ok(),
            _ => None,
        };
        let root = Root {
            fd: &root_fd,
            path: root_path,
        };
        let cached = match (&cache_file, snapshot) {
            (Some(file), Some(_)) => TreeCache::load(file, self.seal),
            _ => None,
        };
        let use_git = self.use_git && walk::in_git_work_tree(root_path);
        let with_listing = cached
            .as_ref()
            .filter(|_| use_git)
            .and_then(|c| c.git.as_ref().map(|state| (c, state)));
        let (worked, made) = match with_listing {
            Some((cache, state)) => {
                // The cached listing most likely holds: its files are stat-ed
                // while what it depends on is checked.
                let listed = filter(&cache.paths, &scope);
                let (check, speculative) = if state.dirs.len() < STATS_PER_THREAD {
                    let worked = Pool::new(&root, Some(cache)).run_one(self.threads, listed);
                    (
                        Ok(listing::check(cache, state, root_path, &root_fd)),
                        worked,
                    )
                } else {
                    std::thread::scope(|s| {
                        let check = s.spawn(|| listing::check(cache, state, root_path, &root_fd));
                        let worked = Pool::new(&root, Some(cache)).run_one(self.threads, listed);
                        (check.join(), worked)
                    })
                };
                let revalidated = match check {
                    Ok(check) => {
                        listing::update(cache, state, check, root_path, &root_fd, &scope.skip)
                    }
                    Err(_) => Revalidated::Stale,
                };
                match revalidated {
                    Revalidated::Same => (
                        speculative,
                        Made {
                            source: FileSource::CachedGitListing,
                            git: None,
                            marks: None,
                            changed: false,
                        },
                    ),
                    Revalidated::Reindexed(state) => (
                        speculative,
                        Made {
                            source: FileSource::RelistedGitListing,
                            git: Some(state),
                            marks: Some(cache.marks()),
                            changed: true,
                        },
                    ),
                    Revalidated::Updated(relisted) => {
                        let worked = self.rework(
                            &root,
                            Some(cache),
                            speculative,
                            filter(&relisted.paths, &scope),
                        );
                        let made = Made {
                            source: FileSource::RelistedGitListing,
                            git: Some(relisted.state),
                            marks: Some(relisted.marks),
                            changed: true,
                        };
                        (worked, made)
                    }
                    Revalidated::Stale => {
                        let (paths, made) = self.list_fresh(root_path, &root_fd, &scope)?;
                        (self.rework(&root, Some(cache), speculative, paths), made)
                    }
                }
            }
            None => {
                let probe = use_git.then(|| Probe::new(root_path, &self.env)).flatten();
                match probe
                    .and_then(|probe| self.fresh_git_listing(&root, cached.as_ref(), probe, &scope))
                {
                    Some(done) => done,
                    None => {
                        let (paths, made) = self.list_fresh(root_path, &root_fd, &scope)?;
                        (
                            Pool::new(&root, cached.as_ref()).run_one(self.threads, paths),
                            made,
                        )
                    }
                }
            }
        };
        let Worked { paths, entries } = worked.map_err(|(path, e)| io_err(&path, e))?;
        let mut entries = entries;
        // A directory in the listing is a git submodule (a gitlink), or a
        // repository of its own: its work tree is part of the subject,
        // fingerprinted on its own.
        let mut submodules = Vec::new();
        for (i, entry) in entries.iter_mut().enumerate() {
            let Some(entry) = entry.as_mut().filter(|e| e.kind == Kind::Dir) else {
                continue;
            };
            let sub = walk::join(root_path, paths.get(i));
            if !orcho_core::fs::is_git_top(&sub) {
                // Not checked out: only its presence counts.
                continue;
            }
            let digest = self.fingerprint_at(&sub, &[], false)?.digest;
            entry.kind = Kind::Submodule;
            entry.content = *digest.as_bytes();
            let path = Utf8PathBuf::from(String::from_utf8_lossy(paths.get(i)).into_owned());
            submodules.push(Submodule { path, digest });
        }
        submodules.sort_by(|a, b| a.path.cmp(&b.path));
        let mut fingerprint = finish(&paths, &entries, made.source);
        fingerprint.submodules = submodules;
        fingerprint.links_out = links_out(root_path, &paths, &entries);
        if top
            && self.keep_manifests
            && let Some(file) = &cache_file
        {
            super::manifest::keep(self.seal, file, &fingerprint.digest, &paths, &entries);
        }
        // With the same listing and nothing read, the cache already says
        // all there is to say.
        if (made.changed || fingerprint.hashed > 0 || cached.is_none())
            && let (Some(file), Some(snapshot)) = (&cache_file, snapshot)
        {
            let files: Vec<Option<KnownFile>> = entries
                .iter()
                .map(|e| {
                    e.as_ref()
                        .filter(|e| e.kind == Kind::File)
                        .map(|e| KnownFile {
                            stat: e.stat,
                            digest: e.content,
                        })
                })
                .collect();
            let (git, marks) = match (made.git, made.marks) {
                (git, Some(marks)) => (git, marks),
                // The cached listing, as it was.
                (None, None) => match cached.as_ref() {
                    Some(cache) if cache.paths == paths => (cache.git.clone(), cache.marks()),
                    _ => (None, Vec::new()),
                },
                (git, None) => (git, Vec::new()),
            };
            // What a listing depends on is kept only for the listing of the
            // whole work tree, each of whose paths has its mark.
            let git = git.filter(|_| scope.is_everything() && marks.len() == paths.len());
            // The cache only saves time; failing to write it costs nothing
            // else.
            let _ = TreeCache::save(
                file,
                self.seal,
                snapshot,
                git.as_ref(),
                &paths,
                &marks,
                &files,
            );
        }
        Ok(fingerprint)
    }

    /// The entries of `paths`, taken from `speculative` where it stat-ed the
    /// same path, the rest stat-ed and hashed now.
    fn rework(
        &self,
        root: &Root<'_>,
        cached: Option<&TreeCache>,
        speculative: Result<Worked, Failure>,
        paths: PathList,
    ) -> Result<Worked, Failure> {
        let Ok(Worked {
            paths: done,
            entries: done_entries,
        }) = speculative
        else {
            // Whatever failed may not be listed any more: start over.
            return Pool::new(root, cached).run_one(self.threads, paths);
        };
        let mut done_entries: Vec<Option<Option<Entry>>> =
            done_entries.into_iter().map(Some).collect();
        let at = positions(&paths, &done);
        let mut entries: Vec<Option<Entry>> = Vec::with_capacity(paths.len());
        let mut missing = PathList::default();
        let mut missing_at = Vec::new();
        for (i, found) in at.into_iter().enumerate() {
            match found.and_then(|j| done_entries.get_mut(j as usize)?.take()) {
                Some(entry) => entries.push(entry),
                None => {
                    entries.push(None);
                    missing.push(paths.get(i));
                    missing_at.push(i);
                }
            }
        }
        if !missing.is_empty() {
            let more = Pool::new(root, cached).run_one(self.threads, missing)?;
            for (entry, i) in more.entries.into_iter().zip(missing_at) {
                entries[i] = entry;
            }
        }
        Ok(Worked { paths, entries })
    }

    /// Lists the work tree in this process, while the workers hash: git's
    /// configuration is read (by `git config`) while the index is, and the
    /// tracked files are hashed while the walk looks for untracked ones.
    /// `None` when the index or the configuration is one to leave to git.
    fn fresh_git_listing(
        &self,
        root: &Root<'_>,
        cached: Option<&TreeCache>,
        probe: Probe,
        scope: &Scope,
    ) -> Option<(Result<Worked, Failure>, Made)> {
        std::thread::scope(|s| {
            let (top, hash_len) = (probe.root().to_owned(), probe.hash_len());
            let configured = s.spawn(|| probe.configure(&self.env));
            let Ok((tracked, index)) = listing::read_index(&top, hash_len) else {
                let _ = configured.join();
                return None;
            };
            let mut walked = None;
            // The walk adds a few untracked files, in general.
            let threads = self
                .threads
                .min(tracked.paths.len().div_ceil(READS_PER_THREAD));
            let worked = Pool::new(root, cached).run(threads, |publish| {
                publish(0, filter(&tracked.paths, scope));
                // What git's configuration says decides the walk.
                let Some(repo) = configured.join().ok().flatten() else {
                    return;
                };
                let found = listing::walk_all(&top, root.fd, &tracked, &repo.excludes, &scope.skip);
                let untracked = untracked::sorted(found.untracked);
                publish(1, filter(&untracked, scope));
                walked = Some((repo, found.dirs, untracked));
            });
            // Without the configuration, git lists the files; what was
            // hashed meanwhile is thrown away.
            let (repo, dirs, untracked) = walked?;
            let (_, marks) = listing::combine(&tracked, &untracked);
            Some((worked, self.made_here(&repo, index, dirs, marks)))
        })
    }

    /// How a listing made in this process was made.
    fn made_here(
        &self,
        repo: &Repo,
        index: Option<Stat>,
        mut dirs: Vec<DirRecord>,
        marks: Vec<Mark>,
    ) -> Made {
        dirs.sort_by(|a, b| a.path.cmp(&b.path));
        Made {
            source: FileSource::IndexAndWalk,
            git: Some(GitState {
                hash_len: u8::try_from(repo.hash_len).unwrap_or(20),
                excludes: repo.excludes.clone(),
                guards: listing::guards(repo),
                index,
                dirs,
            }),
            marks: Some(marks),
            changed: true,
        }
    }

    /// A listing made now, without a cache: in this process in a git work
    /// tree it can read, else by git, else by a walk.
    fn list_fresh(
        &self,
        root_path: &Path,
        root_fd: &OwnedFd,
        scope: &Scope,
    ) -> Result<(PathList, Made), FingerprintError> {
        let made = |source| Made {
            source,
            git: None,
            marks: None,
            changed: true,
        };
        if !(self.use_git && walk::in_git_work_tree(root_path)) {
            let paths = sorted_list(walk::walk_files(root_path, self.everything)?);
            return Ok((filter(&paths, scope), made(FileSource::Walk)));
        }
        if let Some(repo) = Repo::open(root_path, &self.env)
            && let Ok((tracked, index)) = listing::read_index(&repo.root, repo.hash_len)
        {
            let found =
                listing::walk_all(&repo.root, root_fd, &tracked, &repo.excludes, &scope.skip);
            let untracked = untracked::sorted(found.untracked);
            let (all, marks) = listing::combine(&tracked, &untracked);
            let kept = filter(&all, scope);
            let made = self.made_here(&repo, index, found.dirs, marks);
            return Ok((kept, made));
        }
        let paths = sorted_list(walk::git_files(root_path, &self.env)?);
        Ok((filter(&paths, scope), made(FileSource::Git)))
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
        let root_fd = rustix::fs::open(
            root.as_std_path(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            FingerprintError::new(
                root,
                FingerprintErrorKind::Io {
                    path: root.to_string(),
                    source: e.into(),
                },
            )
        })?;
        let scope = self.scope(root.as_std_path(), normalize_subject(subject));
        let (paths, _) = self.list_fresh(root.as_std_path(), &root_fd, &scope)?;
        Ok(paths
            .iter()
            .map(|p| PathBuf::from(std::ffi::OsString::from_vec(p.to_vec())))
            .collect())
    }

    /// The fingerprint a clean checkout at `root` of a git tree has, from
    /// the tree's own entries (as git stores them, so that nothing in the
    /// work tree is read): `files` are its paths with their contents,
    /// `subject` the environment's subject. Equal to
    /// [`fingerprint`](Self::fingerprint) of a checkout of the tree with
    /// no change and no untracked file that git does not ignore.
    ///
    /// A submodule counts with the fingerprint of its own tree, which the
    /// caller takes the same way (see [`TreeFile::Submodule`]).
    ///
    /// # Errors
    ///
    /// None yet: the result leaves room for entries a tree cannot be
    /// fingerprinted with.
    pub fn of_tree(
        &self,
        root: &Utf8Path,
        files: Vec<(Vec<u8>, TreeFile)>,
        subject: &[Utf8PathBuf],
    ) -> Result<Fingerprint, FingerprintError> {
        let scope = self.scope(root.as_std_path(), normalize_subject(subject));
        let mut kept: Vec<(Vec<u8>, TreeFile)> =
            files.into_iter().filter(|(p, _)| scope.keeps(p)).collect();
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        kept.dedup_by(|a, b| a.0 == b.0);
        let mut paths: Vec<&[u8]> = Vec::with_capacity(kept.len());
        let mut entries = Vec::with_capacity(kept.len());
        for (path, file) in &kept {
            let mut stat = Stat::default();
            let entry = match file {
                TreeFile::File {
                    executable,
                    digest,
                    size,
                } => {
                    stat.mode = if *executable { 0o755 } else { 0o644 };
                    stat.size = *size;
                    let mut entry = Entry::new(Kind::File, stat);
                    entry.content = *digest;
                    entry
                }
                TreeFile::Symlink { target } => {
                    stat.mode = 0o777;
                    let mut entry = Entry::new(Kind::Symlink, stat);
                    entry.link.clone_from(target);
                    entry
                }
                TreeFile::Submodule { fingerprint, .. } => {
                    // A directory's mode, as the walk finds it.
                    stat.mode = 0o755;
                    match fingerprint {
                        Some(digest) => {
                            let mut entry = Entry::new(Kind::Submodule, stat);
                            entry.content = *digest.as_bytes();
                            entry
                        }
                        None => Entry::new(Kind::Dir, stat),
                    }
                }
            };
            paths.push(path);
            entries.push(Some(entry));
        }
        let paths: PathList = paths.into_iter().collect();
        Ok(finish(&paths, &entries, FileSource::Git))
    }

    /// What a fingerprint of `root` and `subject` leaves out and keeps.
    fn scope(&self, root: &Path, subject: Vec<Vec<u8>>) -> Scope {
        Scope {
            skip: self.excluded_prefixes(root),
            subject,
        }
    }

    fn excluded_prefixes(&self, root: &Path) -> Vec<Vec<u8>> {
        let mut out = vec![STORE_DIR_NAME.as_bytes().to_vec()];
        let abs_root = std::path::absolute(root).ok();
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

impl Fingerprinter {
    orcho_core::setters! {
        /// Keeps a cache in `dir` (created when missing), one file per root.
        pub fn with_cache_dir(dir: Some(impl Into<Utf8PathBuf>)) => cache_dir;
        /// The environment git runs with.
        pub fn with_env(env: BaseEnv);
    }
}

/// What a fingerprint leaves out (the store, the cache, excluded paths) and
/// what it covers (the subject; empty: everything).
#[derive(Debug)]
struct Scope {
    skip: Vec<Vec<u8>>,
    subject: Vec<Vec<u8>>,
}

impl Scope {
    fn keeps(&self, path: &[u8]) -> bool {
        let path = path.strip_suffix(b"/").unwrap_or(path);
        !self.skip.iter().any(|x| under(path, x))
            && (self.subject.is_empty() || self.subject.iter().any(|s| under(path, s)))
    }

    /// Whether the listing is the whole work tree's (no subject), so that
    /// what it depends on may be kept.
    fn is_everything(&self) -> bool {
        self.subject.is_empty()
    }
}

/// The paths of `paths` the scope keeps.
fn filter(paths: &PathList, scope: &Scope) -> PathList {
    paths.iter().filter(|p| scope.keeps(p)).collect()
}

/// Paths in any order, sorted and each once.
fn sorted_list(mut paths: Vec<Vec<u8>>) -> PathList {
    paths.sort_unstable();
    paths.dedup();
    paths.iter().map(Vec::as_slice).collect()
}

/// How a listing was made, for the fingerprint and the cache.
#[derive(Debug)]
struct Made {
    source: FileSource,
    git: Option<GitState>,
    marks: Option<Vec<Mark>>,
    /// Whether the listing differs from the cached one.
    changed: bool,
}

/// Hashes the listed entries, in path order, into the fingerprint.
fn finish(paths: &PathList, entries: &[Option<Entry>], source: FileSource) -> Fingerprint {
    let mut files = 0u64;
    let mut bytes = 0u64;
    let mut hashed = 0u64;
    let mut hasher = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
    // Entries are encoded into a buffer that is hashed in large pieces: the
    // same bytes as hashing each field, fewer calls.
    let mut buf: Vec<u8> = Vec::with_capacity(FEED_CHUNK + 4096);
    for (i, entry) in entries.iter().enumerate() {
        let Some(entry) = entry else { continue };
        files += 1;
        if entry.kind == Kind::File {
            bytes += entry.stat.size;
        }
        hashed += u64::from(entry.hashed);
        entry.feed(paths.get(i), &mut buf);
        if buf.len() >= FEED_CHUNK {
            hasher.update(&buf);
            buf.clear();
        }
    }
    hasher.update(&buf);
    hasher.update(&files.to_le_bytes());
    Fingerprint {
        digest: Digest::from_blake3(hasher.finalize()),
        files,
        bytes,
        hashed,
        source,
        submodules: Vec::new(),
        links_out: Vec::new(),
    }
}

/// The targets of the symbolic links among `entries` that point outside
/// `root`, resolved as written (see [`Fingerprint::links_out`]).
fn links_out(root: &Path, paths: &PathList, entries: &[Option<Entry>]) -> Vec<Utf8PathBuf> {
    let Ok(root) =
        Utf8PathBuf::try_from(std::path::absolute(root).unwrap_or_else(|_| root.to_owned()))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(entry) = entry.as_ref().filter(|e| e.kind == Kind::Symlink) else {
            continue;
        };
        let (Ok(path), Ok(link)) = (
            std::str::from_utf8(paths.get(i)),
            std::str::from_utf8(&entry.link),
        ) else {
            continue;
        };
        let dir = Utf8Path::new(path).parent().unwrap_or(Utf8Path::new(""));
        let target = if link.starts_with('/') {
            Utf8PathBuf::from(link)
        } else {
            root.join(dir).join(link)
        };
        let mut resolved = Utf8PathBuf::from("/");
        for part in target.components() {
            match part {
                camino::Utf8Component::ParentDir => {
                    resolved.pop();
                }
                camino::Utf8Component::Normal(name) => resolved.push(name),
                _ => {}
            }
        }
        if !resolved.starts_with(&root) {
            out.push(resolved);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A root as errors show it.
pub(crate) fn shown(root: &Path) -> Utf8PathBuf {
    Utf8PathBuf::from(root.to_string_lossy().into_owned())
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
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
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
    fn new(kind: Kind, stat: Stat) -> Self {
        Self {
            kind,
            stat,
            content: [0; 32],
            link: Vec::new(),
            hashed: false,
        }
    }

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

const FEED_CHUNK: usize = 64 * 1024;
/// Paths a worker takes at a time.
const RANGE: usize = 64;
/// Paths worth starting a thread for, when most are only `stat`-ed (a
/// thread costs more to start than a few hundred `stat`s) and when each is
/// read.
const STATS_PER_THREAD: usize = 512;
const READS_PER_THREAD: usize = 64;

/// The fingerprint root: paths are looked up relative to its descriptor.
struct Root<'a> {
    fd: &'a OwnedFd,
    path: &'a Path,
}

/// A listing, its entries once stat-ed and hashed.
#[derive(Debug)]
struct Worked {
    paths: PathList,
    entries: Vec<Option<Entry>>,
}

/// A listing handed to the workers, with the index of each path in the
/// cached listing (both are sorted, so a merge finds them).
#[derive(Debug)]
struct Published {
    paths: PathList,
    cached: Vec<Option<u32>>,
}

/// Ranges of a published listing, from the producer to the workers.
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<(VecDeque<(usize, usize)>, bool)>,
    ready: Condvar,
}

impl Queue {
    /// Queues the ranges of a listing of `len` paths, waking the workers
    /// once.
    fn push_all(&self, list: usize, len: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .0
            .extend((0..len).step_by(RANGE).map(|start| (list, start)));
        drop(state);
        self.ready.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.ready.notify_all();
    }

    /// The next range, or `None` once closed and empty.
    fn pop(&self) -> Option<(usize, usize)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(range) = state.0.pop_front() {
                return Some(range);
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

type Failure = (PathBuf, io::Error);

/// Workers that stat and hash listed paths, against the cache.
struct Pool<'a> {
    root: &'a Root<'a>,
    cached: Option<&'a TreeCache>,
    proto: blake3::Hasher,
    /// At most two listings: tracked, then untracked (or one, whole).
    lists: [OnceLock<Published>; 2],
    queue: Queue,
}

impl<'a> Pool<'a> {
    fn new(root: &'a Root<'a>, cached: Option<&'a TreeCache>) -> Self {
        Self {
            root,
            cached,
            proto: blake3::Hasher::new_derive_key(FILE_CONTEXT),
            lists: [OnceLock::new(), OnceLock::new()],
            queue: Queue::default(),
        }
    }

    /// Stats and hashes one sorted listing.
    fn run_one(&self, threads: usize, paths: PathList) -> Result<Worked, Failure> {
        // Mostly `stat`s, when a cache answers for most files; reads
        // without one.
        let per_thread = if self.cached.is_some() {
            STATS_PER_THREAD
        } else {
            READS_PER_THREAD
        };
        let threads = threads.min(paths.len().div_ceil(per_thread));
        self.run(threads, |publish| publish(0, paths))
    }

    /// Runs `threads` workers while `produce` publishes up to two disjoint
    /// sorted listings; returns their union, sorted, with its entries. With
    /// one thread (or none), the listings are worked through on this one.
    fn run(
        &self,
        threads: usize,
        produce: impl FnOnce(&mut dyn FnMut(usize, PathList)),
    ) -> Result<Worked, Failure> {
        let threads = threads.max(1);
        let publish = |list: usize, paths: PathList| {
            let cached = match self.cached {
                Some(cache) => positions(&paths, &cache.paths),
                None => Vec::new(),
            };
            let len = paths.len();
            if self.lists[list].set(Published { paths, cached }).is_ok() {
                self.queue.push_all(list, len);
            }
        };
        let results = std::thread::scope(|scope| {
            if threads == 1 {
                {
                    let _close = CloseOnDrop(&self.queue);
                    produce(&mut { publish });
                }
                return vec![self.work()];
            }
            let workers: Vec<_> = (0..threads).map(|_| scope.spawn(|| self.work())).collect();
            {
                // Closes the queue even if producing panics, so that no
                // worker waits forever.
                let _close = CloseOnDrop(&self.queue);
                produce(&mut { publish });
            }
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Err((
                            self.root.path.to_owned(),
                            io::Error::other("a hashing thread panicked"),
                        ))
                    })
                })
                .collect::<Vec<_>>()
        });
        let mut slots: [Vec<Option<Entry>>; 2] = [Vec::new(), Vec::new()];
        for (list, slot) in slots.iter_mut().enumerate() {
            let len = self.lists[list].get().map_or(0, |l| l.paths.len());
            slot.resize_with(len, || None);
        }
        for result in results {
            for (list, start, entries) in result? {
                for (i, entry) in entries.into_iter().enumerate() {
                    slots[list][start + i] = entry;
                }
            }
        }
        let [first, second] = slots;
        let empty = PathList::default();
        let a = self.lists[0].get().map_or(&empty, |l| &l.paths);
        let b = self.lists[1].get().map_or(&empty, |l| &l.paths);
        if b.is_empty() {
            return Ok(Worked {
                paths: a.clone(),
                entries: first,
            });
        }
        // Two disjoint sorted listings: merge them.
        let mut paths = PathList::default();
        paths.reserve(a.len() + b.len(), 0);
        let mut entries = Vec::with_capacity(a.len() + b.len());
        let (mut first, mut second) = (first.into_iter(), second.into_iter());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let take_a = j == b.len() || (i < a.len() && a.get(i) < b.get(j));
            if take_a {
                paths.push(a.get(i));
                entries.push(first.next().flatten());
                i += 1;
            } else {
                paths.push(b.get(j));
                entries.push(second.next().flatten());
                j += 1;
            }
        }
        Ok(Worked { paths, entries })
    }

    /// A worker: stats and hashes ranges until the queue closes. After an
    /// error it keeps draining (so that the producer never blocks) but does
    /// no more work.
    #[expect(
        clippy::type_complexity,
        reason = "per range: its listing, its start and the entries found"
    )]
    fn work(&self) -> Result<Vec<(usize, usize, Vec<Option<Entry>>)>, Failure> {
        let mut out = Vec::new();
        let mut failed = None;
        let mut buf = vec![0u8; READ_CHUNK];
        while let Some((list, start)) = self.queue.pop() {
            if failed.is_some() {
                continue;
            }
            let Some(published) = self.lists[list].get() else {
                continue;
            };
            let end = (start + RANGE).min(published.paths.len());
            let mut entries = Vec::with_capacity(end - start);
            for i in start..end {
                let path = published.paths.get(i);
                let cached = published.cached.get(i).copied().flatten();
                match self.one(path, cached, &mut buf) {
                    Ok(entry) => entries.push(entry),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            out.push((list, start, entries));
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Stats and, when needed, hashes one path. `None` when it vanished.
    fn one(
        &self,
        listed: &[u8],
        cached: Option<u32>,
        buf: &mut [u8],
    ) -> Result<Option<Entry>, Failure> {
        // A repository of its own is listed as `dir/`.
        let rel = listed.strip_suffix(b"/").unwrap_or(listed);
        let fail = |e: io::Error| (walk::join(self.root.path, rel), e);
        let (at, name) = (self.root.fd.as_fd(), OsStr::from_bytes(rel));
        if cached.is_none() {
            // Nothing cached: open first and stat the open file, one path
            // lookup instead of two. Symlinks (`ELOOP` under `O_NOFOLLOW`)
            // and sockets (`ENXIO`) fall through to the `statat` path below.
            match open_nofollow(at, name) {
                Ok(file) => return from_open(file, &self.proto, buf).map_err(fail),
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
        let raw = match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(raw) => raw,
            Err(e) => {
                let e = io::Error::from(e);
                return if is_gone(&e) { Ok(None) } else { Err(fail(e)) };
            }
        };
        let stat = Stat::from_raw(&raw);
        let mut entry = Entry::new(Kind::Other, stat);
        match FileType::from_raw_mode(raw.st_mode) {
            FileType::Symlink => {
                entry.kind = Kind::Symlink;
                entry.link = match rustix::fs::readlinkat(at, name, Vec::new()) {
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
                let trusted = match (self.cached, cached) {
                    (Some(cache), Some(index)) => cache.trusted(index as usize, &stat),
                    _ => None,
                };
                if let Some(digest) = trusted {
                    entry.content = digest;
                } else {
                    match open_nofollow(at, name).and_then(|file| {
                        let opened = Stat::from_raw(&rustix::fs::fstat(&file)?);
                        Ok((hash_contents(file, opened.size, &self.proto, buf)?, opened))
                    }) {
                        Ok((digest, opened)) => {
                            entry.content = digest;
                            // The stat of the file that was read, taken
                            // before reading it.
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
}

/// Where each path of `paths` is in `cached` (both sorted).
fn positions(paths: &PathList, cached: &PathList) -> Vec<Option<u32>> {
    let mut out = Vec::with_capacity(paths.len());
    let mut j = 0;
    for path in paths.iter() {
        while j < cached.len() && cached.get(j) < path {
            j += 1;
        }
        out.push((j < cached.len() && cached.get(j) == path).then_some(j as u32));
    }
    out
}

fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn open_nofollow(at: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    // `O_NONBLOCK` so that opening a FIFO never waits for a writer; it has
    // no effect on regular files.
    let fd = rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

/// The entry of a path opened without following symlinks.
fn from_open(file: File, proto: &blake3::Hasher, buf: &mut [u8]) -> io::Result<Option<Entry>> {
    let raw = rustix::fs::fstat(&file)?;
    let mut entry = Entry::new(Kind::Other, Stat::from_raw(&raw));
    match FileType::from_raw_mode(raw.st_mode) {
        FileType::RegularFile => {
            // The stat was taken before reading: a write during the read
            // changes the file's times, so the cache never trusts this
            // digest for the new contents.
            entry.kind = Kind::File;
            entry.content = hash_contents(file, entry.stat.size, proto, buf)?;
            entry.hashed = true;
        }
        FileType::Directory => entry.kind = Kind::Dir,
        _ => {}
    }
    Ok(Some(entry))
}

/// The digest of a file's first `size` bytes (its size when it was
/// stat-ed): read until that many have come, without the extra read that
/// would only say the end was reached. A file that shrank meanwhile is
/// hashed as far as it goes; one that grew has a new stat, so the cache
/// reads it again next time.
fn hash_contents(
    mut file: File,
    size: u64,
    proto: &blake3::Hasher,
    buf: &mut [u8],
) -> io::Result<[u8; 32]> {
    let mut hasher = proto.clone();
    let mut left = size;
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        match file.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                left -= n as u64;
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

#[cfg(test)]
mod everything_tests {
    use super::*;

    #[test]
    fn an_installed_folder_is_read_once_then_answered_by_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().join("node_modules")).unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        orcho_core::fs::write_atomic(&root.join("pkg/index.js"), b"module.exports = 1;\n").unwrap();
        orcho_core::fs::write_atomic(&root.join(".gitignore"), b"*\n").unwrap();
        // Older than any snapshot taken from now on.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let cache = Utf8PathBuf::try_from(dir.path().join("cache")).unwrap();
        let f = Fingerprinter::new().everything().with_cache_dir(&cache);
        let first = f.fingerprint(&root, &[]).unwrap();
        assert_eq!(first.files, 2, "ignore files do not hide anything");
        let second = f.fingerprint(&root, &[]).unwrap();
        assert_eq!(second.digest, first.digest);
        assert_eq!(second.hashed, 0, "{second:?}");
    }
}
