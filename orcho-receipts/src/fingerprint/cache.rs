//! The fingerprint cache: one file per root (and subject and git
//! environment) holding what the last fingerprint listed and read, so that
//! the next one reads no file that did not change and, in a git work tree,
//! lists nothing again that did not change.
//!
//! - **Per listed path**: whether git tracks it, and for a regular file the
//!   `lstat` data it had when it was hashed with the digest of its
//!   contents. A file whose size, modification time, change time, inode,
//!   device and mode are all unchanged is not read again. As in git, an
//!   entry is trusted only when both times are strictly older than the
//!   moment the cache was taken (read off the file system's own clock by
//!   stamping a scratch file): a file written in the same tick as the
//!   snapshot ("racily clean") could change again without its times
//!   changing, so it is read again next time.
//! - **For a listing this process made** ([`GitState`]): the stat of the
//!   index, of every configuration and excludes file git read, and of every
//!   directory the walk read with its `.gitignore`. While these hold (by the
//!   same racy rule), the listing holds; where some do not, only that much
//!   is listed again (see the listing module).
//!
//! The cache is an optimisation only. It ends in a blake3 checksum of
//! everything before it; a missing, truncated, corrupt or foreign cache is
//! ignored (and rebuilt), which only costs time. It is replaced by a rename
//! but not `fsync`ed: losing it in a crash costs one slower fingerprint.

use std::{
    io::{self, Write},
    os::{
        fd::OwnedFd,
        unix::{ffi::OsStrExt, fs::MetadataExt},
    },
    path::{Path, PathBuf},
};

use camino::{Utf8Path, Utf8PathBuf};

use super::{git::untracked::DirRecord, paths::PathList};
use crate::exec::BaseEnv;

const MAGIC: &[u8; 8] = b"ORCHOFPT";
/// Version 1: header (magic, version, snapshot seconds and nanoseconds), an
/// optional git state (object name length, excludes files, guarded files,
/// index, directories), the listing (per path: its bytes, flags, and for a
/// regular file its stat and digest), blake3 trailer.
///
/// Version 2: a directory's flag byte also says whether it holds a `.git`
/// that is not a repository of its own (bit 1, beside `nested`, bit 0).
///
/// Version 3: the same layout; listings no longer leave out what only
/// `.git/info/exclude` or a global excludes file hides, so a listing of
/// version 2 is not reused.
const VERSION: u32 = 3;

const DIR_NESTED: u8 = 1;
const DIR_DOT_GIT: u8 = 2;

/// The `lstat` data compared to decide whether a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stat {
    pub(crate) size: u64,
    pub(crate) mtime: i64,
    pub(crate) mtime_ns: u32,
    pub(crate) ctime: i64,
    pub(crate) ctime_ns: u32,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
    pub(crate) mode: u32,
}

fn int<T: TryInto<i64>>(v: T) -> i64 {
    v.try_into().unwrap_or(0)
}

fn uint<T: TryInto<u64>>(v: T) -> u64 {
    v.try_into().unwrap_or(0)
}

fn uint32<T: TryInto<u32>>(v: T) -> u32 {
    v.try_into().unwrap_or(0)
}

impl Stat {
    /// From `statat`/`fstat` (the field types differ between platforms).
    pub(crate) fn from_raw(st: &rustix::fs::Stat) -> Self {
        Self {
            size: uint(st.st_size),
            mtime: int(st.st_mtime),
            mtime_ns: uint32(st.st_mtime_nsec),
            ctime: int(st.st_ctime),
            ctime_ns: uint32(st.st_ctime_nsec),
            ino: uint(st.st_ino),
            dev: uint(st.st_dev),
            mode: uint32(st.st_mode),
        }
    }

    /// Whether both times are strictly before `snapshot`.
    pub(crate) fn older_than(&self, snapshot: (i64, u32)) -> bool {
        (self.mtime, self.mtime_ns) < snapshot && (self.ctime, self.ctime_ns) < snapshot
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&self.mtime.to_le_bytes());
        out.extend_from_slice(&self.mtime_ns.to_le_bytes());
        out.extend_from_slice(&self.ctime.to_le_bytes());
        out.extend_from_slice(&self.ctime_ns.to_le_bytes());
        out.extend_from_slice(&self.ino.to_le_bytes());
        out.extend_from_slice(&self.dev.to_le_bytes());
        out.extend_from_slice(&self.mode.to_le_bytes());
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        Some(Self {
            size: r.u64()?,
            mtime: r.i64()?,
            mtime_ns: r.u32()?,
            ctime: r.i64()?,
            ctime_ns: r.u32()?,
            ino: r.u64()?,
            dev: r.u64()?,
            mode: r.u32()?,
        })
    }
}

/// Whether a recorded stat (or its absence) still holds for what is there
/// now, by the racy rule.
pub(crate) fn unchanged(recorded: Option<&Stat>, now: Option<&Stat>, snapshot: (i64, u32)) -> bool {
    match (recorded, now) {
        (None, None) => true,
        (Some(r), Some(n)) => r == n && r.older_than(snapshot),
        _ => false,
    }
}

/// What git's listing of the root depended on, when this process made it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GitState {
    /// The length of the index's object names.
    pub(crate) hash_len: u8,
    /// `.git/info/exclude`, then `core.excludesFile`: absolute.
    pub(crate) excludes: Vec<PathBuf>,
    /// Files outside the work tree's walk whose change means listing
    /// everything again (configuration and excludes files), absolute, with
    /// their stat (`None`: absent).
    pub(crate) guards: Vec<(PathBuf, Option<Stat>)>,
    /// The index's stat.
    pub(crate) index: Option<Stat>,
    /// Every directory the walk read, sorted by path.
    pub(crate) dirs: Vec<DirRecord>,
}

/// A regular file as it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KnownFile {
    pub(crate) stat: Stat,
    pub(crate) digest: [u8; 32],
}

/// The size of [`Stat::encode`]'s output.
const _: () = assert!(STAT == 8 + 8 + 4 + 8 + 4 + 8 + 8 + 4);

/// What the last fingerprint of a root listed and read.
///
/// The per-path records stay in the bytes read from the file, each
/// [`RECORD`] bytes at a known place, so that loading a cache of 28,000
/// paths copies two buffers instead of building 28,000 values.
#[derive(Debug, Default)]
pub(crate) struct TreeCache {
    /// When it was taken, by the file system's clock.
    pub(crate) snapshot: (i64, u32),
    /// Present when the listing was made by this process in a git work
    /// tree.
    pub(crate) git: Option<GitState>,
    /// The listed paths, sorted.
    pub(crate) paths: PathList,
    /// The file's body; the records start at `records`.
    body: Vec<u8>,
    records: usize,
}

const FLAG_UNTRACKED: u8 = 1;
const FLAG_FILE: u8 = 2;
const FLAG_GITLINK: u8 = 4;
/// A path's record: its flags, then (for a regular file) its stat and
/// digest, zeros otherwise.
const RECORD: usize = 1 + STAT + 32;
const STAT: usize = 52;

/// What git says of a listed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Mark {
    /// Not in the index.
    pub(crate) untracked: bool,
    /// A gitlink (a submodule) in the index.
    pub(crate) gitlink: bool,
}

impl TreeCache {
    fn record(&self, index: usize) -> Option<&[u8]> {
        let at = self.records.checked_add(index.checked_mul(RECORD)?)?;
        self.body.get(at..at + RECORD)
    }

    /// What git said of the path at `index` of `paths`.
    pub(crate) fn mark(&self, index: usize) -> Mark {
        let flags = self.record(index).map_or(0, |r| r[0]);
        Mark {
            untracked: flags & FLAG_UNTRACKED != 0,
            gitlink: flags & FLAG_GITLINK != 0,
        }
    }

    /// The marks of every path.
    pub(crate) fn marks(&self) -> Vec<Mark> {
        (0..self.paths.len()).map(|i| self.mark(i)).collect()
    }

    /// The regular file at `index` of `paths` as it was read.
    pub(crate) fn file(&self, index: usize) -> Option<KnownFile> {
        let r = self.record(index)?;
        if r[0] & FLAG_FILE == 0 {
            return None;
        }
        let mut reader = Reader { b: r, at: 1 };
        Some(KnownFile {
            stat: Stat::decode(&mut reader)?,
            digest: reader.take(32)?.try_into().ok()?,
        })
    }

    /// The digest of the file at `index` of `paths`, if it was read with
    /// this very `stat` and is not racily clean.
    pub(crate) fn trusted(&self, index: usize, stat: &Stat) -> Option<[u8; 32]> {
        let known = self.file(index)?;
        (known.stat == *stat && known.stat.older_than(self.snapshot)).then_some(known.digest)
    }

    /// Loads a cache file; `None` when it is missing or damaged.
    pub(crate) fn load(path: &Utf8Path, seal: Seal) -> Option<Self> {
        Self::parse(std::fs::read(path).ok()?, seal)
    }

    fn parse(mut bytes: Vec<u8>, seal: Seal) -> Option<Self> {
        let body_len = unseal(&bytes, seal)?.len();
        bytes.truncate(body_len);
        let mut r = Reader { b: &bytes, at: 0 };
        if r.take(8)? != MAGIC || r.u32()? != VERSION {
            return None;
        }
        let snapshot = (r.i64()?, r.u32()?);
        let git = match r.u8()? {
            0 => None,
            1 => Some(GitState::decode(&mut r)?),
            _ => return None,
        };
        let count = r.u32()? as usize;
        let ends: Vec<u32> = r
            .take(count.checked_mul(4)?)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let path_bytes = r.bytes()?.to_vec();
        let paths = PathList::from_raw(path_bytes, ends)?;
        let records = r.at;
        r.take(count.checked_mul(RECORD)?)?;
        // Sorted and unique, or lookups would be wrong.
        if r.at != bytes.len() || !paths.is_sorted() {
            return None;
        }
        Some(Self {
            snapshot,
            git,
            paths,
            body: bytes,
            records,
        })
    }

    /// Writes a cache of `paths` with their `marks` and `files` (both one
    /// per path) to `path` (see [`write_sealed`]).
    pub(crate) fn save(
        path: &Utf8Path,
        seal: Seal,
        snapshot: (i64, u32),
        git: Option<&GitState>,
        paths: &PathList,
        marks: &[Mark],
        files: &[Option<KnownFile>],
    ) -> io::Result<()> {
        let (path_bytes, ends) = paths.as_raw();
        let mut b = Vec::with_capacity(64 + path_bytes.len() + paths.len() * (4 + RECORD));
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&snapshot.0.to_le_bytes());
        b.extend_from_slice(&snapshot.1.to_le_bytes());
        match git {
            Some(git) => {
                b.push(1);
                git.encode(&mut b)?;
            }
            None => b.push(0),
        }
        put_len(&mut b, paths.len())?;
        remove_earlier_formats(path);
        for end in ends {
            b.extend_from_slice(&end.to_le_bytes());
        }
        put_bytes(&mut b, path_bytes)?;
        for i in 0..paths.len() {
            let mark = marks.get(i).copied().unwrap_or_default();
            let file = files.get(i).copied().flatten();
            b.push(
                u8::from(mark.untracked) * FLAG_UNTRACKED
                    + u8::from(file.is_some()) * FLAG_FILE
                    + u8::from(mark.gitlink) * FLAG_GITLINK,
            );
            match file {
                Some(file) => {
                    file.stat.encode(&mut b);
                    b.extend_from_slice(&file.digest);
                }
                None => b.extend_from_slice(&[0; STAT + 32]),
            }
        }
        write_sealed(path, seal, b)
    }
}

impl GitState {
    fn encode(&self, b: &mut Vec<u8>) -> io::Result<()> {
        b.push(self.hash_len);
        put_len(b, self.excludes.len())?;
        for path in &self.excludes {
            put_bytes(b, path.as_os_str().as_bytes())?;
        }
        put_len(b, self.guards.len())?;
        for (path, stat) in &self.guards {
            put_bytes(b, path.as_os_str().as_bytes())?;
            put_stat(b, stat.as_ref());
        }
        put_stat(b, self.index.as_ref());
        put_len(b, self.dirs.len())?;
        for dir in &self.dirs {
            put_bytes(b, &dir.path)?;
            dir.stat.encode(b);
            put_stat(b, dir.ignore.as_ref());
            b.push(u8::from(dir.nested) * DIR_NESTED + u8::from(dir.dot_git) * DIR_DOT_GIT);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        let path =
            |r: &mut Reader<'_>| Some(PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes()?)));
        let hash_len = r.u8()?;
        let mut excludes = Vec::new();
        for _ in 0..r.u32()? {
            excludes.push(path(r)?);
        }
        let mut guards = Vec::new();
        for _ in 0..r.u32()? {
            guards.push((path(r)?, r.opt_stat()?));
        }
        let index = r.opt_stat()?;
        let count = r.u32()? as usize;
        let mut dirs = Vec::with_capacity(count.min(r.b.len() / 60));
        for _ in 0..count {
            let path = r.bytes()?.to_vec();
            let stat = Stat::decode(r)?;
            let ignore = r.opt_stat()?;
            let flags = r.u8()?;
            if flags & !(DIR_NESTED | DIR_DOT_GIT) != 0 {
                return None;
            }
            dirs.push(DirRecord {
                path,
                stat,
                ignore,
                nested: flags & DIR_NESTED != 0,
                dot_git: flags & DIR_DOT_GIT != 0,
            });
        }
        if !dirs.windows(2).all(|w| w[0].path < w[1].path) {
            return None;
        }
        Some(Self {
            hash_len,
            excludes,
            guards,
            index,
            dirs,
        })
    }
}

fn put_len(b: &mut Vec<u8>, len: usize) -> io::Result<()> {
    let len = u32::try_from(len).map_err(|_| io::ErrorKind::InvalidData)?;
    b.extend_from_slice(&len.to_le_bytes());
    Ok(())
}

fn put_bytes(b: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    put_len(b, bytes.len())?;
    b.extend_from_slice(bytes);
    Ok(())
}

fn put_stat(b: &mut Vec<u8>, stat: Option<&Stat>) {
    match stat {
        Some(stat) => {
            b.push(1);
            stat.encode(b);
        }
        None => b.push(0),
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    fn opt_stat(&mut self) -> Option<Option<Stat>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(Stat::decode(self)?)),
            _ => None,
        }
    }
}

/// Removes the files of the caches this one replaced (a stat cache `.bin`
/// and a listing `.list` per root) from the directory of `path`: nothing
/// reads them any more.
fn remove_earlier_formats(path: &Utf8Path) {
    let Some(dir) = path.parent() else { return };
    let Ok(entries) = dir.read_dir_utf8() else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let earlier = name
            .strip_suffix(".bin")
            .or_else(|| name.strip_suffix(".list"))
            .is_some_and(|stem| stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()));
        if earlier {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Reads the current time of the work tree's file system, as its files'
/// times will read it: the modification time of a scratch file made there.
///
/// The scratch file goes in the cache directory `dir` when that is on the
/// work tree's file system (as when the store is inside the work tree),
/// else in the work tree's `.git` directory. Where neither is, the time is
/// read in `dir` and rounded down to an even second, so that a work tree
/// whose file system keeps coarser times (whole seconds; two on FAT) never
/// has a file written after the snapshot look older than it.
pub(crate) fn fs_now(dir: &Utf8Path, root: &Path, root_fd: &OwnedFd) -> io::Result<(i64, u32)> {
    let root_dev = rustix::fs::fstat(root_fd)?.st_dev;
    let stamp = |dir: &Path| -> io::Result<(i64, u32, u64)> {
        let scratch = tempfile::Builder::new()
            .prefix(".orcho-stamp-")
            .tempfile_in(dir)?;
        let meta = scratch.as_file().metadata()?;
        let nanos = u32::try_from(meta.mtime_nsec()).unwrap_or(0);
        Ok((meta.mtime(), nanos, meta.dev()))
    };
    let (secs, nanos, dev) = stamp(dir.as_std_path())?;
    if dev == uint(root_dev) {
        return Ok((secs, nanos));
    }
    if let Ok((secs, nanos, dev)) = stamp(&root.join(".git"))
        && dev == uint(root_dev)
    {
        return Ok((secs, nanos));
    }
    Ok((secs - secs.rem_euclid(2), 0))
}

/// What a cache file is sealed with: blake3 keyed with a key only the
/// host has (derived from its receipt key), so that a process that can
/// write the store cannot rewrite a cache entry to pass a changed file for
/// an unchanged one; or, without a key, a plain blake3 checksum, which
/// only catches damage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seal(Option<[u8; 32]>);

impl Seal {
    /// Sealed with `key`.
    pub(crate) fn keyed(key: [u8; 32]) -> Self {
        Self(Some(key))
    }

    fn sum(self, bytes: &[u8]) -> [u8; 32] {
        match &self.0 {
            Some(key) => *blake3::keyed_hash(key, bytes).as_bytes(),
            None => *blake3::hash(bytes).as_bytes(),
        }
    }
}

/// Writes `bytes` to `path` with their blake3 checksum after them, through a
/// temporary file renamed into place: a reader sees the whole old file, the
/// whole new one or none, and [`unseal`] refuses a damaged one. Not synced
/// to disk: the cache is rebuilt when lost.
///
/// The old file is removed before the rename: replacing a file by a rename
/// makes ext4 write the new file's data out first (its `auto_da_alloc`),
/// which costs more than the cache saves. A reader in between finds no
/// cache and fingerprints without one.
pub(crate) fn write_sealed(path: &Utf8Path, seal: Seal, mut bytes: Vec<u8>) -> io::Result<()> {
    let sum = seal.sum(&bytes);
    bytes.extend_from_slice(&sum);
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".orcho-tmp-")
        .tempfile_in(dir)?;
    temp.write_all(&bytes)?;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The body of a file [`write_sealed`] wrote with `seal`, if its checksum
/// holds.
pub(crate) fn unseal(bytes: &[u8], seal: Seal) -> Option<&[u8]> {
    let body = bytes.len().checked_sub(32)?;
    (seal.sum(&bytes[..body]) == bytes[body..]).then(|| &bytes[..body])
}

/// The cache file of a fingerprint of `root` (its absolute path), `subject`,
/// the directories it leaves out (`skip`) and git environment `env`,
/// inside the cache directory `dir`.
pub(crate) fn cache_file(
    dir: &Utf8Path,
    root: &Path,
    subject: &[Vec<u8>],
    skip: &[Vec<u8>],
    env: &BaseEnv,
    everything: bool,
) -> Utf8PathBuf {
    let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_owned());
    let mut h = blake3::Hasher::new_derive_key("orcho fingerprint cache key v2");
    // Each part tagged and length-prefixed: no two keys hash the same bytes.
    let mut part = |tag: u8, bytes: &[u8]| {
        h.update(&[tag])
            .update(&(bytes.len() as u64).to_le_bytes())
            .update(bytes);
    };
    part(0, abs.as_os_str().as_bytes());
    if everything {
        part(5, b"everything");
    }
    for s in subject {
        part(1, s);
    }
    for s in skip {
        part(2, s);
    }
    for (k, v) in env.iter() {
        part(3, k.as_bytes());
        part(4, v.as_bytes());
    }
    dir.join(format!("{}.tree", &h.finalize().to_hex()[..32]))
}

/// Whether `bytes` read as a cache file (for the fuzz targets).
#[cfg(feature = "fuzzing")]
pub(crate) fn parse_bytes(bytes: Vec<u8>) -> bool {
    TreeCache::parse(bytes, Seal::default()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mtime: i64) -> Stat {
        Stat {
            size: 3,
            mtime,
            ..Stat::default()
        }
    }

    fn git() -> GitState {
        GitState {
            hash_len: 20,
            excludes: vec![PathBuf::from("/r/.git/info/exclude")],
            guards: vec![(PathBuf::from("/home/u/.gitconfig"), None)],
            index: Some(stat(4)),
            dirs: vec![
                DirRecord {
                    path: Vec::new(),
                    stat: stat(2),
                    ignore: Some(stat(1)),
                    nested: false,
                    dot_git: false,
                },
                DirRecord {
                    path: b"b".to_vec(),
                    stat: stat(3),
                    ignore: None,
                    nested: true,
                    dot_git: false,
                },
            ],
        }
    }

    fn paths() -> PathList {
        [&b"a"[..], b"b/c", b"\xff"].into_iter().collect()
    }

    fn marks() -> Vec<Mark> {
        vec![
            Mark::default(),
            Mark {
                untracked: true,
                gitlink: false,
            },
            Mark {
                untracked: false,
                gitlink: true,
            },
        ]
    }

    fn files() -> Vec<Option<KnownFile>> {
        vec![
            Some(KnownFile {
                stat: stat(1),
                digest: [7; 32],
            }),
            None,
            Some(KnownFile {
                stat: stat(10),
                digest: [8; 32],
            }),
        ]
    }

    fn saved(dir: &tempfile::TempDir) -> Utf8PathBuf {
        let path = Utf8PathBuf::try_from(dir.path().join("c.tree")).unwrap();
        TreeCache::save(
            &path,
            Seal::default(),
            (10, 0),
            Some(&git()),
            &paths(),
            &marks(),
            &files(),
        )
        .unwrap();
        path
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let back = TreeCache::load(&saved(&dir), Seal::default()).unwrap();
        assert_eq!(back.snapshot, (10, 0));
        assert_eq!(back.git, Some(git()));
        assert_eq!(back.paths, paths());
        assert_eq!(back.marks(), marks());
        assert_eq!((0..3).map(|i| back.file(i)).collect::<Vec<_>>(), files());
    }

    #[test]
    fn only_unchanged_files_older_than_the_snapshot_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TreeCache::load(&saved(&dir), Seal::default()).unwrap();
        assert_eq!(cache.trusted(0, &stat(1)), Some([7; 32]));
        assert_eq!(cache.trusted(0, &stat(2)), None, "changed");
        assert_eq!(cache.trusted(1, &stat(1)), None, "not a file");
        assert_eq!(cache.trusted(2, &stat(10)), None, "racily clean");
        assert_eq!(cache.trusted(9, &stat(1)), None, "no such path");
    }

    #[test]
    fn the_files_of_earlier_caches_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let old_stat = dir.path().join("0123456789abcdef0123456789abcdef.bin");
        let old_listing = dir.path().join("fedcba9876543210fedcba9876543210.list");
        let unrelated = dir.path().join("notes.bin");
        for f in [&old_stat, &old_listing, &unrelated] {
            std::fs::File::create(f).unwrap();
        }
        saved(&dir);
        assert!(!old_stat.exists() && !old_listing.exists());
        assert!(unrelated.exists());
    }

    #[test]
    fn damage_only_costs_time() {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(saved(&dir)).unwrap();
        for cut in 0..good.len() {
            assert!(
                TreeCache::parse(good[..cut].to_vec(), Seal::default()).is_none(),
                "cut at {cut}"
            );
        }
        for at in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            assert!(
                TreeCache::parse(bad, Seal::default()).is_none(),
                "flipped at {at}"
            );
        }
        assert!(TreeCache::parse(good.clone(), Seal::default()).is_some());
        // Sealed without the key, refused by a reader that has one.
        assert!(TreeCache::parse(good, Seal::keyed([9; 32])).is_none());
    }
}
