//! `.git/index`, read for the paths it tracks: versions 2, 3 and 4, SHA-1
//! or SHA-256 object names.
//!
//! The fingerprint needs only each entry's path and whether it is a gitlink
//! (a submodule). An index this reader does not handle — a split index
//! (`link`), a sparse index (`sdir`, or directory entries), an extension git
//! requires but this reader does not know, a version other than 2 to 4 — is
//! [`Unsupported`](IndexError::Unsupported), and the fingerprint asks git
//! instead; a damaged one is [`Damaged`](IndexError::Damaged), which git
//! would refuse as well.

use crate::fingerprint::paths::PathList;

/// What the index tracks.
#[derive(Debug, Default)]
pub(crate) struct Tracked {
    /// Every path, sorted by its bytes, each once (the stages of a conflict
    /// are one path).
    pub(crate) paths: PathList,
    /// The indices in `paths` of gitlinks (submodules, mode `160000`).
    pub(crate) gitlinks: Vec<u32>,
    /// Whether an entry is marked skip-worktree (a sparse checkout).
    pub(crate) skip_worktree: bool,
}

impl Tracked {
    /// What the index says of `path`, looked up within `range` (the tracked
    /// paths below its directory): tracked, and whether a gitlink.
    pub(crate) fn lookup_in(&self, range: std::ops::Range<usize>, path: &[u8]) -> (bool, bool) {
        let i = self.paths.lower_bound_in(range.clone(), path);
        if i < range.end.min(self.paths.len()) && self.paths.get(i) == path {
            (true, self.gitlinks.binary_search(&(i as u32)).is_ok())
        } else {
            (false, false)
        }
    }
}

/// Why the index could not be read here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IndexError {
    /// A valid index this reader leaves to git.
    Unsupported(&'static str),
    /// Not a valid index.
    Damaged(&'static str),
}

const SIGNATURE: &[u8; 4] = b"DIRC";

/// Reads the entries of an index whose object names are `hash_len` bytes
/// (20 for SHA-1, 32 for SHA-256).
pub(crate) fn parse(bytes: &[u8], hash_len: usize) -> Result<Tracked, IndexError> {
    let damaged = IndexError::Damaged;
    if bytes.len() < 12 + hash_len || &bytes[..4] != SIGNATURE {
        return Err(damaged("no index header"));
    }
    let version = be32(bytes, 4);
    if !(2..=4).contains(&version) {
        return Err(IndexError::Unsupported(
            "an index version other than 2, 3 or 4",
        ));
    }
    let count = be32(bytes, 8) as usize;
    let end = bytes.len() - hash_len;
    // ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size.
    let fixed = 40 + hash_len;
    // The shortest entry: the fixed part, the flags and a one-byte path (or
    // a version 4 prefix length and the NUL). A count the file cannot hold
    // is not trusted with an allocation.
    if count > (end - 12) / (fixed + 3) {
        return Err(damaged("more entries than the index holds"));
    }
    let mut out = Tracked::default();
    out.paths.reserve(count, count.saturating_mul(32));
    let mut previous: Vec<u8> = Vec::new();
    let mut name: Vec<u8> = Vec::new();
    let mut at = 12;
    for _ in 0..count {
        if at + fixed + 2 > end {
            return Err(damaged("an entry runs past the end"));
        }
        let mode = be32(bytes, at + 24);
        let flags = be16(bytes, at + fixed);
        let extended = flags & 0x4000 != 0;
        let mut name_at = at + fixed + 2;
        if extended {
            if version < 3 {
                return Err(damaged("an extended entry in a version 2 index"));
            }
            if name_at + 2 > end {
                return Err(damaged("an entry runs past the end"));
            }
            if be16(bytes, name_at) & 0x4000 != 0 {
                out.skip_worktree = true;
            }
            name_at += 2;
        }
        if mode & 0o170000 == 0o040000 {
            return Err(IndexError::Unsupported("a sparse index"));
        }
        name.clear();
        if version == 4 {
            let (strip, used) = varint(&bytes[name_at..end]).ok_or(damaged("a bad path prefix"))?;
            name_at += used;
            let strip = usize::try_from(strip).map_err(|_| damaged("a bad path prefix"))?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or(damaged("a path prefix longer than the previous path"))?;
            let len = bytes[name_at..end]
                .iter()
                .position(|&b| b == 0)
                .ok_or(damaged("a path without its end"))?;
            name.extend_from_slice(&previous[..keep]);
            name.extend_from_slice(&bytes[name_at..name_at + len]);
            at = name_at + len + 1;
        } else {
            let len = bytes[name_at..end]
                .iter()
                .position(|&b| b == 0)
                .ok_or(damaged("a path without its end"))?;
            name.extend_from_slice(&bytes[name_at..name_at + len]);
            // Padded with NULs to a multiple of 8 bytes.
            let size = (name_at - at + len + 8) & !7;
            at += size;
            if at > end {
                return Err(damaged("an entry runs past the end"));
            }
        }
        if name.is_empty() {
            return Err(damaged("an empty path"));
        }
        // The stages of a conflict follow each other: one path.
        if name != previous {
            if name < previous {
                return Err(damaged("entries out of order"));
            }
            let index = out.paths.push(&name);
            if mode & 0o170000 == 0o160000 {
                out.gitlinks.push(index);
            }
        }
        std::mem::swap(&mut previous, &mut name);
    }
    while at < end {
        if at + 8 > end {
            return Err(damaged("an extension runs past the end"));
        }
        let signature = &bytes[at..at + 4];
        let size = be32(bytes, at + 4) as usize;
        match signature {
            b"link" => return Err(IndexError::Unsupported("a split index")),
            b"sdir" => return Err(IndexError::Unsupported("a sparse index")),
            _ if !signature[0].is_ascii_uppercase() => {
                return Err(IndexError::Unsupported("an index extension git requires"));
            }
            _ => {}
        }
        at = at
            .checked_add(8 + size)
            .filter(|&next| next <= end)
            .ok_or(damaged("an extension runs past the end"))?;
    }
    Ok(out)
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Git's offset varint: seven bits a byte, most significant first, each
/// continuation adding one. The value and the bytes it took.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut used = 0;
    let mut c = *b.first()?;
    used += 1;
    let mut value = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *b.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_mul(128)? + u64::from(c & 0x7f);
    }
    Some((value, used))
}
