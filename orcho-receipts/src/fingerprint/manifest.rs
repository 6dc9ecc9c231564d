//! What a fingerprint covered, path by path, kept beside the cache under
//! its digest: so that a receipt gone stale can say which paths changed
//! since it ran, and a command that changed its own subject which paths it
//! changed.
//!
//! A manifest is written from the very entries its digest was computed
//! from, once per digest, and only the newest few per root and subject are
//! kept. It saves nothing but words: a missing or damaged one leaves the
//! paths unnamed, never an error.

use std::{fmt, io};

use camino::{Utf8Path, Utf8PathBuf};

use super::{
    cache::{Seal, unseal, write_sealed},
    imp::{Entry, Kind},
    paths::PathList,
};

/// How many manifests are kept per root and subject.
const KEPT: usize = 16;

/// Which paths differ between two fingerprints of the same subject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PathChanges {
    /// Paths there now that were not.
    pub added: Vec<Utf8PathBuf>,
    /// Paths there then that are not now.
    pub removed: Vec<Utf8PathBuf>,
    /// Paths in both whose content (or kind) changed.
    pub changed: Vec<Utf8PathBuf>,
}

impl PathChanges {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// How many paths differ.
    pub fn len(&self) -> usize {
        self.added.len() + self.removed.len() + self.changed.len()
    }
}

/// How many paths [`PathChanges`]'s words name before "and N more".
const NAMED: usize = 3;

impl fmt::Display for PathChanges {
    /// ``` `Cargo.lock` added, `src/lib.rs` changed, and 2 more```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = self
            .added
            .iter()
            .map(|p| (p, "added"))
            .chain(self.changed.iter().map(|p| (p, "changed")))
            .chain(self.removed.iter().map(|p| (p, "removed")));
        let mut first = true;
        for (path, how) in all.take(NAMED) {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "`{path}` {how}")?;
        }
        let more = self.len().saturating_sub(NAMED);
        if more > 0 {
            write!(f, ", and {more} more")?;
        }
        Ok(())
    }
}

/// The manifest file of `digest` for the cache file `cache_file`.
pub(crate) fn file(cache_file: &Utf8Path, digest: &orcho_core::Digest) -> Utf8PathBuf {
    let dir = cache_file
        .parent()
        .map_or_else(|| Utf8PathBuf::from("kept"), |d| d.join("kept"));
    let stem = cache_file.file_stem().unwrap_or("tree");
    let hex = digest.to_string();
    let hex = hex.rsplit(':').next().unwrap_or(&hex);
    dir.join(format!("{stem}-{}.manifest", hex.get(..32).unwrap_or(hex)))
}

/// One entry as a manifest keeps it: its kind and content digest.
fn record(entry: Option<&Entry>) -> [u8; 33] {
    let mut out = [0u8; 33];
    if let Some(entry) = entry {
        out[0] = match entry.kind {
            Kind::File => 1,
            Kind::Symlink => 2,
            Kind::Dir => 3,
            Kind::Submodule => 4,
            Kind::Other => 5,
        };
        out[1..].copy_from_slice(&entry.content);
        if entry.kind == Kind::Symlink {
            // A link's content is its target.
            out[1..].copy_from_slice(blake3::hash(&entry.link).as_bytes());
        }
    }
    out
}

/// Writes the manifest of `paths` and `entries` (the fingerprint `digest`),
/// unless it is there already, then keeps only the newest [`KEPT`].
pub(crate) fn keep(
    seal: Seal,
    cache_file: &Utf8Path,
    digest: &orcho_core::Digest,
    paths: &PathList,
    entries: &[Option<Entry>],
) {
    let target = file(cache_file, digest);
    if target.exists() {
        return;
    }
    let Some(dir) = target.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let mut bytes = Vec::with_capacity(paths.len() * 48);
    bytes.extend_from_slice(b"orcho manifest 1\n");
    for (i, entry) in entries.iter().enumerate() {
        let path = paths.get(i);
        let Ok(len) = u32::try_from(path.len()) else {
            return;
        };
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(path);
        bytes.extend_from_slice(&record(entry.as_ref()));
    }
    if write_sealed(&target, seal, bytes).is_ok() {
        prune(dir, cache_file.file_stem().unwrap_or("tree"));
    }
}

/// Removes all but the newest [`KEPT`] manifests of `stem`.
fn prune(dir: &Utf8Path, stem: &str) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{stem}-");
    let mut kept: Vec<(std::time::SystemTime, std::path::PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if kept.len() <= KEPT {
        return;
    }
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    for (_, path) in kept.into_iter().skip(KEPT) {
        let _ = std::fs::remove_file(path);
    }
}

/// A manifest read back: sorted paths, each with its record.
struct Manifest {
    entries: Vec<(Vec<u8>, [u8; 33])>,
}

fn load(path: &Utf8Path, seal: Seal) -> io::Result<Option<Manifest>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(body) = unseal(&bytes, seal) else {
        return Ok(None);
    };
    let Some(mut rest) = body.strip_prefix(b"orcho manifest 1\n".as_slice()) else {
        return Ok(None);
    };
    let mut entries = Vec::new();
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Ok(None);
        };
        let len = u32::from_le_bytes(*len) as usize;
        let Some((path, tail)) = tail.split_at_checked(len) else {
            return Ok(None);
        };
        let Some((record, tail)) = tail.split_first_chunk::<33>() else {
            return Ok(None);
        };
        entries.push((path.to_vec(), *record));
        rest = tail;
    }
    Ok(Some(Manifest { entries }))
}

fn shown(path: &[u8]) -> Utf8PathBuf {
    Utf8PathBuf::from(String::from_utf8_lossy(path).into_owned())
}

/// The paths that differ between the manifests of `from` and `to`; `None`
/// when either is not kept (or cannot be read).
pub(crate) fn changes(
    seal: Seal,
    cache_file: &Utf8Path,
    from: &orcho_core::Digest,
    to: &orcho_core::Digest,
) -> Option<PathChanges> {
    let before = load(&file(cache_file, from), seal).ok()??;
    let after = load(&file(cache_file, to), seal).ok()??;
    let mut changes = PathChanges::default();
    let (mut a, mut b) = (
        before.entries.iter().peekable(),
        after.entries.iter().peekable(),
    );
    loop {
        match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some((path, _)), None) => {
                changes.removed.push(shown(path));
                a.next();
            }
            (None, Some((path, _))) => {
                changes.added.push(shown(path));
                b.next();
            }
            (Some((pa, ra)), Some((pb, rb))) => match pa.cmp(pb) {
                std::cmp::Ordering::Less => {
                    changes.removed.push(shown(pa));
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    changes.added.push(shown(pb));
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    if ra != rb {
                        changes.changed.push(shown(pa));
                    }
                    a.next();
                    b.next();
                }
            },
        }
    }
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_said_with_the_first_few_paths_and_how_many_more() {
        let changes = PathChanges {
            added: vec!["Cargo.lock".into()],
            removed: vec!["old.rs".into()],
            changed: vec!["src/lib.rs".into(), "README.md".into()],
        };
        assert_eq!(
            changes.to_string(),
            "`Cargo.lock` added, `src/lib.rs` changed, `README.md` changed, and 1 more"
        );
        assert_eq!(changes.len(), 4);
        let one = PathChanges {
            added: vec!["Cargo.lock".into()],
            ..PathChanges::default()
        };
        assert_eq!(one.to_string(), "`Cargo.lock` added");
    }
}
