//! The stat cache: per file, the `lstat` data it had when it was hashed, and
//! the digest of its contents.
//!
//! A file whose size, modification time, change time, inode, device and mode
//! are all unchanged is not re-read. As in git, an entry is only trusted if
//! the file's modification and change times are strictly older than the
//! moment the cache was taken (measured with the file system's own clock by
//! stamping a scratch file): a file written in the same timestamp tick as the
//! snapshot ("racily clean") could change again without its times changing,
//! so it is hashed again next time.
//!
//! The cache is an optimisation only. It is a binary file under the store's
//! `cache/fingerprint/`, one per fingerprint root, ending in a blake3 checksum
//! of everything before it; a missing, truncated, corrupt or foreign cache is
//! ignored (and rebuilt), which only costs time. It is replaced by a rename
//! but not `fsync`ed: losing it in a crash costs one slower fingerprint.

use std::{
    io::{self, Write},
    os::unix::fs::MetadataExt,
    path::Path,
};

use camino::{Utf8Path, Utf8PathBuf};

const MAGIC: &[u8; 8] = b"ORCHOFPC";
/// Version 1: header (magic, version, snapshot seconds and nanoseconds,
/// count), fixed-size entries with their path bytes, blake3 trailer.
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 8 + 4 + 8;
const FIXED: usize = 4 + 8 + 8 + 4 + 8 + 4 + 8 + 8 + 4 + 32;

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

fn nanos<T: TryInto<u32>>(v: T) -> u32 {
    v.try_into().unwrap_or(0)
}

impl Stat {
    /// From `statat`/`fstat`.
    pub(crate) fn from_raw(st: &rustix::fs::Stat) -> Self {
        Self {
            size: uint(st.st_size),
            mtime: int(st.st_mtime),
            mtime_ns: nanos(st.st_mtime_nsec),
            ctime: int(st.st_ctime),
            ctime_ns: nanos(st.st_ctime_nsec),
            ino: uint(st.st_ino),
            dev: uint(st.st_dev),
            mode: nanos(st.st_mode),
        }
    }

    /// The size of [`encode`](Self::encode)'s output.
    pub(crate) const ENCODED: usize = 52;

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&self.mtime.to_le_bytes());
        out.extend_from_slice(&self.mtime_ns.to_le_bytes());
        out.extend_from_slice(&self.ctime.to_le_bytes());
        out.extend_from_slice(&self.ctime_ns.to_le_bytes());
        out.extend_from_slice(&self.ino.to_le_bytes());
        out.extend_from_slice(&self.dev.to_le_bytes());
        out.extend_from_slice(&self.mode.to_le_bytes());
    }

    pub(crate) fn decode(b: &[u8]) -> Option<Self> {
        Some(Self {
            size: u64_at(b, 0)?,
            mtime: i64_at(b, 8)?,
            mtime_ns: u32_at(b, 16)?,
            ctime: i64_at(b, 20)?,
            ctime_ns: u32_at(b, 28)?,
            ino: u64_at(b, 32)?,
            dev: u64_at(b, 40)?,
            mode: u32_at(b, 48)?,
        })
    }

    /// Whether both times are strictly before `snapshot`.
    pub(crate) fn older_than(&self, snapshot: (i64, u32)) -> bool {
        (self.mtime, self.mtime_ns) < snapshot && (self.ctime, self.ctime_ns) < snapshot
    }
}

/// A loaded cache: the raw bytes and the offset of each entry, sorted by
/// path. Lookups are a merge with the (sorted) file list, so loading
/// allocates nothing per entry.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    bytes: Vec<u8>,
    offsets: Vec<usize>,
    snapshot: (i64, u32),
}

/// One cached file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cached<'a> {
    pub(crate) path: &'a [u8],
    pub(crate) stat: Stat,
    pub(crate) digest: [u8; 32],
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn i64_at(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl StatCache {
    /// Loads the cache file, or an empty cache when it is missing or damaged.
    pub(crate) fn load(path: &Utf8Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(Self::parse)
            .unwrap_or_default()
    }

    pub(crate) fn parse(bytes: Vec<u8>) -> Option<Self> {
        if bytes.len() < HEADER + 32 || &bytes[..8] != MAGIC || u32_at(&bytes, 8)? != VERSION {
            return None;
        }
        let body = unseal(&bytes)?.len();
        let snapshot = (i64_at(&bytes, 12)?, u32_at(&bytes, 20)?);
        let count = usize::try_from(u64_at(&bytes, 24)?).ok()?;
        let mut offsets = Vec::with_capacity(count.min(body / FIXED));
        let mut at = HEADER;
        let mut previous: Option<&[u8]> = None;
        for _ in 0..count {
            let len = usize::try_from(u32_at(&bytes, at)?).ok()?;
            let end = at.checked_add(FIXED)?.checked_add(len)?;
            if end > body {
                return None;
            }
            let path = &bytes[at + FIXED..end];
            // Sorted and unique, or the merge lookup would be wrong.
            if previous.is_some_and(|p| p >= path) {
                return None;
            }
            previous = Some(path);
            offsets.push(at);
            at = end;
        }
        if at != body {
            return None;
        }
        Some(Self {
            bytes,
            offsets,
            snapshot,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.offsets.len()
    }

    pub(crate) fn get(&self, index: usize) -> Option<Cached<'_>> {
        let at = *self.offsets.get(index)?;
        let b = &self.bytes;
        let len = usize::try_from(u32_at(b, at)?).ok()?;
        let stat = Stat {
            size: u64_at(b, at + 4)?,
            mtime: i64_at(b, at + 12)?,
            mtime_ns: u32_at(b, at + 20)?,
            ctime: i64_at(b, at + 24)?,
            ctime_ns: u32_at(b, at + 32)?,
            ino: u64_at(b, at + 36)?,
            dev: u64_at(b, at + 44)?,
            mode: u32_at(b, at + 52)?,
        };
        let digest = b.get(at + 56..at + 88)?.try_into().ok()?;
        Some(Cached {
            path: b.get(at + FIXED..at + FIXED + len)?,
            stat,
            digest,
        })
    }

    /// The cached digest of a file with this `stat`, if the entry is
    /// unchanged and not racily clean.
    pub(crate) fn trusted(&self, index: Option<usize>, stat: &Stat) -> Option<[u8; 32]> {
        let cached = self.get(index?)?;
        (cached.stat == *stat && cached.stat.older_than(self.snapshot)).then_some(cached.digest)
    }

    fn path_at(&self, index: usize) -> Option<&[u8]> {
        let at = *self.offsets.get(index)?;
        let len = usize::try_from(u32_at(&self.bytes, at)?).ok()?;
        self.bytes.get(at + FIXED..at + FIXED + len)
    }

    /// The index of the entry for `path` (binary search: entries are sorted).
    pub(crate) fn find(&self, path: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.path_at(mid)?.cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// Reads the file system's current time by stamping a scratch file in `dir`.
pub(crate) fn fs_now(dir: &Utf8Path) -> io::Result<(i64, u32)> {
    let scratch = tempfile::Builder::new()
        .prefix(".orcho-stamp-")
        .tempfile_in(dir)?;
    let meta = scratch.as_file().metadata()?;
    Ok((meta.mtime(), u32::try_from(meta.mtime_nsec()).unwrap_or(0)))
}

/// Writes a cache: `entries` sorted by path and unique.
pub(crate) fn save<'a>(
    path: &Utf8Path,
    snapshot: (i64, u32),
    entries: impl ExactSizeIterator<Item = Cached<'a>>,
) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(HEADER + entries.len() * (FIXED + 48) + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&snapshot.0.to_le_bytes());
    bytes.extend_from_slice(&snapshot.1.to_le_bytes());
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        let len = u32::try_from(e.path.len()).map_err(|_| io::ErrorKind::InvalidData)?;
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(&e.stat.size.to_le_bytes());
        bytes.extend_from_slice(&e.stat.mtime.to_le_bytes());
        bytes.extend_from_slice(&e.stat.mtime_ns.to_le_bytes());
        bytes.extend_from_slice(&e.stat.ctime.to_le_bytes());
        bytes.extend_from_slice(&e.stat.ctime_ns.to_le_bytes());
        bytes.extend_from_slice(&e.stat.ino.to_le_bytes());
        bytes.extend_from_slice(&e.stat.dev.to_le_bytes());
        bytes.extend_from_slice(&e.stat.mode.to_le_bytes());
        bytes.extend_from_slice(&e.digest);
        bytes.extend_from_slice(e.path);
    }
    write_sealed(path, bytes)
}

/// Writes `bytes` to `path` with their blake3 checksum after them, through a
/// temporary file renamed into place: a reader sees the old file or the
/// whole new one, and [`unseal`] refuses a damaged one. Not synced to disk:
/// the caches are rebuilt when lost.
pub(crate) fn write_sealed(path: &Utf8Path, mut bytes: Vec<u8>) -> io::Result<()> {
    let sum = blake3::hash(&bytes);
    bytes.extend_from_slice(sum.as_bytes());
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".orcho-tmp-")
        .tempfile_in(dir)?;
    temp.write_all(&bytes)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The body of a file [`write_sealed`] wrote, if its checksum holds.
pub(crate) fn unseal(bytes: &[u8]) -> Option<&[u8]> {
    let body = bytes.len().checked_sub(32)?;
    (blake3::hash(&bytes[..body]).as_bytes() == &bytes[body..]).then(|| &bytes[..body])
}

/// The cache file of a fingerprint root inside the cache directory.
pub(crate) fn cache_file(dir: &Utf8Path, root: &Path) -> Utf8PathBuf {
    let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_owned());
    let key = blake3::Hasher::new_derive_key("orcho stat cache key v1")
        .update(std::os::unix::ffi::OsStrExt::as_bytes(abs.as_os_str()))
        .finalize();
    dir.join(format!("{}.bin", &key.to_hex()[..32]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &'static [u8], mtime: i64) -> Cached<'static> {
        Cached {
            path,
            stat: Stat {
                size: 3,
                mtime,
                ..Stat::default()
            },
            digest: [7; 32],
        }
    }

    #[test]
    fn round_trip_and_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(dir.path().join("c.bin")).unwrap();
        let entries = [entry(b"a", 1), entry(b"b/c", 2), entry(b"\xff", 3)];
        save(&path, (10, 0), entries.iter().copied()).unwrap();
        let cache = StatCache::load(&path);
        assert_eq!(cache.len(), 3);
        let wanted: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"b/c".to_vec(),
            b"\xff".to_vec(),
        ];
        let idx: Vec<Option<usize>> = wanted.iter().map(|p| cache.find(p)).collect();
        assert_eq!(idx, vec![Some(0), None, Some(1), Some(2)]);
        assert_eq!(cache.trusted(idx[2], &entries[1].stat), Some([7; 32]));
        let mut changed = entries[1].stat;
        changed.size = 4;
        assert_eq!(cache.trusted(idx[2], &changed), None);
    }

    #[test]
    fn racily_clean_entries_are_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(dir.path().join("c.bin")).unwrap();
        let entries = [entry(b"old", 5), entry(b"same-tick", 10)];
        save(&path, (10, 0), entries.iter().copied()).unwrap();
        let cache = StatCache::load(&path);
        assert!(cache.trusted(Some(0), &entries[0].stat).is_some());
        assert!(cache.trusted(Some(1), &entries[1].stat).is_none());
    }

    #[test]
    fn damage_only_costs_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(dir.path().join("c.bin")).unwrap();
        save(&path, (10, 0), [entry(b"a", 1)].into_iter()).unwrap();
        let good = std::fs::read(&path).unwrap();
        for cut in 0..good.len() {
            assert!(StatCache::parse(good[..cut].to_vec()).is_none());
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            assert!(StatCache::parse(bad).is_none(), "flip at {i}");
        }
        let none = Utf8PathBuf::try_from(dir.path().join("none")).unwrap();
        assert_eq!(StatCache::load(&none).len(), 0);
    }
}
