//! The untracked files of a work tree, as `git ls-files -o
//! --exclude-per-directory=.gitignore` lists them, by a walk in this process.
//!
//! Git's rules, as its directory walk applies them to each entry of a
//! directory it reads:
//!
//! - `.`, `..` and `.git` are skipped;
//! - a path the index tracks is not untracked (a directory that is a
//!   gitlink, a submodule, is not entered);
//! - an ignored path is left out, and an ignored directory is not entered,
//!   even when it holds tracked files (they are listed from the index);
//! - a regular file or a symlink is untracked; other kinds (FIFOs,
//!   sockets, devices) are never listed;
//! - a directory is entered when the index tracks something below it;
//!   else, when it holds a repository of its own (a `.git` directory, or a
//!   symlink to one, with `HEAD`, `objects` and `refs`, or a `.git` file
//!   naming one) other than the work tree's own, it is listed as `dir/`
//!   and not entered, unless the index tracks a file by its name; else it
//!   is entered.
//!
//! A directory that cannot be read is skipped, as git skips it; its stat
//! is recorded all the same, so that a later listing notices when it can
//! be read.

use std::{
    ffi::OsStr,
    io,
    os::{fd::OwnedFd, unix::ffi::OsStrExt},
};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

use super::index::Tracked;
use crate::fingerprint::{cache::Stat, ignore::PatternFile, paths::PathList};

/// One directory the walk read: what a later listing checks to know its
/// untracked files are still the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirRecord {
    /// Relative to the root (`""` for the root).
    pub(crate) path: Vec<u8>,
    /// Its stat when it was read: a name added or removed changes it.
    pub(crate) stat: Stat,
    /// The stat of its `.gitignore`, if it has one.
    pub(crate) ignore: Option<Stat>,
    /// Whether it holds a repository of its own, listed as `dir/` and not
    /// entered.
    pub(crate) nested: bool,
    /// Whether it was entered although it holds a `.git`: one that is not
    /// (yet) a repository, or the work tree's own. A later listing asks
    /// again, as it asks again whether a `nested` one still is: `git init`
    /// in an existing `.git` leaves the directory's own stat as it was.
    pub(crate) dot_git: bool,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The untracked paths (a repository of its own ends in `/`), in the
    /// order found.
    pub(crate) untracked: Vec<Vec<u8>>,
    /// Every directory read (and every repository of its own found), in
    /// the order found.
    pub(crate) dirs: Vec<DirRecord>,
    /// The directories not entered because [`Walker::keep`] kept what an
    /// earlier walk found there.
    pub(crate) kept: Vec<Vec<u8>>,
}

/// Tells a repository of its own, listed as `dir/`, from a directory to
/// enter, as git does.
#[derive(Debug)]
pub(crate) struct Nested {
    /// The work tree's top.
    root: std::path::PathBuf,
    /// The real path of the work tree's own git directory.
    own: Option<std::path::PathBuf>,
}

impl Nested {
    /// For the work tree at `root`.
    pub(crate) fn new(root: &std::path::Path) -> Self {
        Self {
            root: root.to_owned(),
            own: std::fs::canonicalize(root.join(".git")).ok(),
        }
    }

    /// Whether the directory at `path` (relative to the root; `name` in the
    /// directory `parent`) holds a repository of its own. A `.git` that
    /// leads to the work tree's own git directory does not make one: git
    /// compares the real paths.
    pub(crate) fn is_repository(&self, parent: &OwnedFd, name: &OsStr, path: &[u8]) -> bool {
        is_repository(parent, name) && {
            let dot_git = self.root.join(OsStr::from_bytes(path)).join(".git");
            self.own.is_none() || std::fs::canonicalize(dot_git).ok() != self.own
        }
    }
}

/// The rules of one walk: what the index tracks and the excludes files.
pub(crate) struct Walker<'a> {
    pub(crate) tracked: &'a Tracked,
    /// Which directories are repositories of their own.
    pub(crate) nested: &'a Nested,
    /// `.git/info/exclude`, then `core.excludesFile`.
    pub(crate) global: &'a [PatternFile],
    /// Directories never entered (the store, the cache), relative to the
    /// root.
    pub(crate) skip: &'a [Vec<u8>],
    /// Whether what an earlier walk found below a directory still holds, so
    /// that it is not entered again.
    pub(crate) keep: &'a dyn Fn(&[u8]) -> bool,
}

impl std::fmt::Debug for Walker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walker")
            .field("skip", &self.skip)
            .finish_non_exhaustive()
    }
}

/// The buffer `getdents` fills.
const DIR_BUF: usize = 32 * 1024;

impl Walker<'_> {
    /// Walks the directory `dir` (relative to the root, `""` for the root)
    /// and everything below it that git would list. `stack` holds the
    /// `.gitignore` files of `dir`'s ancestors, root first.
    pub(crate) fn walk(
        &self,
        root: &OwnedFd,
        dir: &[u8],
        stack: &mut Vec<PatternFile>,
        out: &mut Walked,
    ) {
        let name = if dir.is_empty() {
            OsStr::new(".")
        } else {
            OsStr::from_bytes(dir)
        };
        let Ok(fd) = rustix::fs::openat(root, name, DIR_FLAGS, Mode::empty()) else {
            record_by_stat(root, name, dir, false, out);
            return;
        };
        let mut path = dir.to_vec();
        let mut buf = Vec::with_capacity(DIR_BUF);
        self.walk_open(&fd, &mut path, stack, &mut buf, out);
    }

    fn walk_open(
        &self,
        fd: &OwnedFd,
        path: &mut Vec<u8>,
        stack: &mut Vec<PatternFile>,
        buf: &mut Vec<u8>,
        out: &mut Walked,
    ) {
        let Ok(stat) = rustix::fs::fstat(fd) else {
            return;
        };
        // The names first, so that the buffer is free for the directories
        // below.
        let mut names = PathList::default();
        let mut kinds: Vec<FileType> = Vec::new();
        let mut has_ignore_file = false;
        let mut dot_git = false;
        buf.clear();
        {
            let mut dir = RawDir::new(fd, buf.spare_capacity_mut());
            while let Some(entry) = dir.next() {
                let Ok(entry) = entry else { break };
                let name = entry.file_name().to_bytes();
                if matches!(name, b"." | b"..") {
                    continue;
                }
                if name == b".git" {
                    dot_git = true;
                    continue;
                }
                has_ignore_file |= name == b".gitignore";
                names.push(name);
                kinds.push(entry.file_type());
            }
        }
        // Only a directory that has a `.gitignore` is asked for it.
        let (patterns, ignore) = match has_ignore_file.then(|| read_ignore_file(fd, path)) {
            Some(Some((patterns, stat))) => (patterns, Some(stat)),
            _ => (None, None),
        };
        out.dirs.push(DirRecord {
            path: path.clone(),
            stat: Stat::from_raw(&stat),
            ignore,
            nested: false,
            // The root's `.git` is the work tree's own.
            dot_git: dot_git && !path.is_empty(),
        });
        let had = stack.len();
        if let Some(file) = patterns.filter(|f| !f.is_empty()) {
            stack.push(file);
        }
        // What the index tracks below this directory: each entry is looked
        // up there, not in the whole index.
        let tracked_here = self.tracked.paths.below(path);
        let base = path.len();
        for (name, kind) in names.iter().zip(kinds) {
            path.truncate(base);
            if base > 0 {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            let name = OsStr::from_bytes(name);
            let kind = if kind == FileType::Unknown {
                match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(s) => FileType::from_raw_mode(s.st_mode),
                    Err(_) => continue,
                }
            } else {
                kind
            };
            let is_dir = kind == FileType::Directory;
            let (tracked, gitlink) = self.tracked.lookup_in(tracked_here.clone(), path);
            if !is_dir && tracked {
                continue;
            }
            if self.excluded(stack, path, is_dir) {
                continue;
            }
            match kind {
                FileType::RegularFile | FileType::Symlink => out.untracked.push(path.clone()),
                FileType::Directory => {
                    if gitlink || self.skip.iter().any(|s| s == path) {
                        continue;
                    }
                    let below = self.tracked.paths.below_in(tracked_here.clone(), path);
                    if below.is_empty() && self.nested.is_repository(fd, name, path) {
                        record_by_stat(fd, name, path, true, out);
                        // A tracked file whose place a repository took is
                        // listed from the index, as itself.
                        if !tracked {
                            let mut listed = path.clone();
                            listed.push(b'/');
                            out.untracked.push(listed);
                        }
                        continue;
                    }
                    if (self.keep)(path) {
                        out.kept.push(path.clone());
                        continue;
                    }
                    match rustix::fs::openat(fd, name, DIR_FLAGS, Mode::empty()) {
                        Ok(sub) => self.walk_open(&sub, path, stack, buf, out),
                        // Unreadable: recorded all the same.
                        Err(_) => record_by_stat(fd, name, path, false, out),
                    }
                }
                _ => {}
            }
        }
        path.truncate(base);
        stack.truncate(had);
    }

    /// Whether `path` is ignored: the deepest `.gitignore` with a matching
    /// pattern decides, then `.git/info/exclude`, then `core.excludesFile`.
    pub(crate) fn excluded(&self, stack: &[PatternFile], path: &[u8], is_dir: bool) -> bool {
        stack
            .iter()
            .rev()
            .chain(self.global)
            .find_map(|file| file.decide(path, is_dir))
            .unwrap_or(false)
    }
}

/// A directory of the work tree: never through a symlink.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A git directory: git follows a `.git`, a `gitdir:` or a `commondir` that
/// is a symlink.
const GIT_DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Records the directory `name` of `parent` (at `path`) that the walk does
/// not read, by its stat alone: a repository of its own (`nested`), or one
/// that could not be opened (`chmod` changes its stat).
fn record_by_stat(parent: &OwnedFd, name: &OsStr, path: &[u8], nested: bool, out: &mut Walked) {
    if let Ok(stat) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
        && FileType::from_raw_mode(stat.st_mode) == FileType::Directory
    {
        out.dirs.push(DirRecord {
            path: path.to_vec(),
            stat: Stat::from_raw(&stat),
            ignore: None,
            nested,
            dot_git: false,
        });
    }
}

/// The `.gitignore` of the directory `fd` (at `dir`), when there is one:
/// its patterns (`None` when it cannot be read or is not a regular file)
/// and its stat, which tells a later listing when that changes. Git does
/// not follow a `.gitignore` that is a symlink, and neither does this.
pub(crate) fn read_ignore_file(fd: &OwnedFd, dir: &[u8]) -> Option<(Option<PatternFile>, Stat)> {
    let opened = rustix::fs::openat(
        fd,
        c".gitignore",
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    );
    let Ok(file) = opened else {
        let stat = rustix::fs::statat(fd, c".gitignore", AtFlags::SYMLINK_NOFOLLOW).ok()?;
        return Some((None, Stat::from_raw(&stat)));
    };
    let stat = rustix::fs::fstat(&file).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Some((None, Stat::from_raw(&stat)));
    }
    let patterns = read_all(file, stat.st_size)
        .ok()
        .map(|bytes| PatternFile::parse(dir, &bytes));
    Some((patterns, Stat::from_raw(&stat)))
}

/// The contents of an open file of about `size` bytes.
fn read_all(fd: OwnedFd, size: i64) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(1 << 26));
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether the directory `name` of `parent` holds a git repository, as git
/// decides before listing it as `name/`: its `.git` is a directory (or a
/// symlink to one) with a valid `HEAD`, `objects` and `refs`, or a file
/// that names one (or that cannot be read).
fn is_repository(parent: &OwnedFd, name: &OsStr) -> bool {
    let mut dot_git = name.as_bytes().to_vec();
    dot_git.extend_from_slice(b"/.git");
    let dot_git = OsStr::from_bytes(&dot_git);
    let Ok(stat) = rustix::fs::statat(parent, dot_git, AtFlags::empty()) else {
        return false;
    };
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Directory => {
            let Ok(dir) = rustix::fs::openat(parent, dot_git, GIT_DIR_FLAGS, Mode::empty()) else {
                return false;
            };
            is_git_directory(&dir)
        }
        FileType::RegularFile => {
            let Ok(file) = rustix::fs::openat(
                parent,
                dot_git,
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                return true;
            };
            let Ok(bytes) = read_all(file, stat.st_size.min(4096)) else {
                return true;
            };
            let Some(target) = bytes
                .strip_prefix(b"gitdir: ")
                .map(trim_line_ends)
                .filter(|t| !t.is_empty())
            else {
                return false;
            };
            let target = OsStr::from_bytes(target);
            // Relative to the directory that holds the `.git` file.
            let opened = if target.as_bytes().starts_with(b"/") {
                rustix::fs::open(target, GIT_DIR_FLAGS, Mode::empty())
            } else {
                rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())
                    .and_then(|dir| rustix::fs::openat(&dir, target, GIT_DIR_FLAGS, Mode::empty()))
            };
            opened.is_ok_and(|dir| is_git_directory(&dir))
        }
        _ => false,
    }
}

/// Git's test of a git directory: a `HEAD` that names a ref or a commit,
/// and `objects` and `refs` it may enter (through `commondir`, when there is
/// one).
fn is_git_directory(dir: &OwnedFd) -> bool {
    if !valid_head(dir) {
        return false;
    }
    let common = match rustix::fs::openat(
        dir,
        c"commondir",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(file) => {
            let Ok(bytes) = read_all(file, 4096) else {
                return false;
            };
            let target = OsStr::from_bytes(trim_line_ends(&bytes));
            match rustix::fs::openat(dir, target, GIT_DIR_FLAGS, Mode::empty()) {
                Ok(common) => common,
                Err(_) => return false,
            }
        }
        Err(_) => match rustix::fs::openat(dir, c".", GIT_DIR_FLAGS, Mode::empty()) {
            Ok(same) => same,
            Err(_) => return false,
        },
    };
    [c"objects", c"refs"].iter().all(|sub| {
        rustix::fs::accessat(&common, *sub, rustix::fs::Access::EXEC_OK, AtFlags::empty()).is_ok()
    })
}

/// A path read from a `.git` file or `commondir`: git drops the line ends
/// after it, nothing else.
fn trim_line_ends(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = bytes {
        bytes = rest;
    }
    bytes
}

/// Whether `HEAD` of the git directory `dir` is a symlink into `refs/`, or
/// holds a `ref: refs/…` line or an object name (as many hexadecimal digits
/// as SHA-1's, at least).
fn valid_head(dir: &OwnedFd) -> bool {
    if rustix::fs::readlinkat(dir, c"HEAD", Vec::new())
        .is_ok_and(|target| target.to_bytes().starts_with(b"refs/"))
    {
        return true;
    }
    // Any other symlink is read through, as git reads it.
    let Ok(file) = rustix::fs::openat(
        dir,
        c"HEAD",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    if !rustix::fs::fstat(&file)
        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::RegularFile)
    {
        return false;
    }
    let Ok(bytes) = read_all(file, 256) else {
        return false;
    };
    if let Some(rest) = bytes.strip_prefix(b"ref:") {
        return rest.trim_ascii_start().starts_with(b"refs/");
    }
    bytes.iter().take_while(|b| b.is_ascii_hexdigit()).count() >= 40
}

/// The untracked paths of a walk, sorted, as one list.
pub(crate) fn sorted(mut untracked: Vec<Vec<u8>>) -> PathList {
    untracked.sort_unstable();
    untracked.dedup();
    untracked.iter().map(Vec::as_slice).collect()
}
