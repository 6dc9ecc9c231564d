//! Atomic replacement and exclusive creation of files.

use std::{
    fs::File,
    io::{self, Write},
};

use camino::Utf8Path;
use tempfile::NamedTempFile;

use crate::{
    DocumentError, DocumentErrorKind, FsError, FsOp,
    schema::{self, Document},
};

/// Replaces the file at `path` with `bytes`, atomically and durably.
///
/// The bytes go to a temporary file in the same directory (named
/// `.orcho-tmp-*`), which is flushed with `fsync`, renamed over `path`, and
/// then the directory is flushed so the rename itself survives a power loss.
/// A crash at any point leaves either the old file or the new one, never a
/// torn one; at worst a stray `.orcho-tmp-*` file remains beside it.
///
/// The parent directory must exist.
///
/// # Errors
///
/// An [`FsError`] naming the step that failed and the path.
///
/// # Examples
///
/// ```
/// use orcho_core::fs::write_atomic;
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("state.json"))?;
/// write_atomic(&path, b"{\"schema\": 1}\n")?;
/// write_atomic(&path, b"{\"schema\": 1, \"n\": 2}\n")?;
/// assert_eq!(std::fs::read(&path)?, b"{\"schema\": 1, \"n\": 2}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_atomic(path: &Utf8Path, bytes: &[u8]) -> Result<(), FsError> {
    let temp = write_temp(path, bytes)?;
    temp.persist(path)
        .map_err(|e| FsError::new(FsOp::Rename, path, e.error))?;
    sync_parent(path)
}

/// Creates the file at `path` with `bytes`, atomically and durably, only if
/// nothing is there yet.
///
/// Like [`write_atomic`], except that the final step is an exclusive link
/// rather than a rename: of several writers racing (threads or processes),
/// exactly one succeeds and the others get an error for which
/// [`FsError::is_already_exists`] is true. The file is never visible half
/// written.
///
/// # Errors
///
/// An [`FsError`]; [`FsError::is_already_exists`] tells a lost race from a
/// real failure.
pub fn write_new_atomic(path: &Utf8Path, bytes: &[u8]) -> Result<(), FsError> {
    let temp = write_temp(path, bytes)?;
    temp.persist_noclobber(path)
        .map_err(|e| FsError::new(FsOp::CreateNew, path, e.error))?;
    sync_parent(path)
}

fn write_temp(path: &Utf8Path, bytes: &[u8]) -> Result<NamedTempFile, FsError> {
    let dir = parent(path);
    let mut temp = tempfile::Builder::new()
        .prefix(".orcho-tmp-")
        .tempfile_in(dir)
        .map_err(|e| FsError::new(FsOp::CreateTemp, path, e))?;
    temp.write_all(bytes)
        .map_err(|e| FsError::new(FsOp::Write, path, e))?;
    temp.as_file()
        .sync_all()
        .map_err(|e| FsError::new(FsOp::Sync, path, e))?;
    Ok(temp)
}

fn parent(path: &Utf8Path) -> &Utf8Path {
    match path.parent() {
        Some(p) if !p.as_str().is_empty() => p,
        _ => Utf8Path::new("."),
    }
}

/// Flushes the directory that holds `path`, so that a just-created or
/// just-renamed entry survives a crash.
pub(crate) fn sync_parent(path: &Utf8Path) -> Result<(), FsError> {
    let dir = parent(path);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FsError::new(FsOp::SyncDir, dir, e))
}

/// Creates a directory and its missing parents, then flushes the parent of
/// each directory it created so that the new entries are durable.
///
/// # Errors
///
/// An [`FsError`] naming the directory.
pub fn create_dir_all(path: &Utf8Path) -> Result<(), FsError> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(up) = path.parent().filter(|p| !p.as_str().is_empty()) {
        create_dir_all(up)?;
    }
    match std::fs::create_dir(path) {
        Ok(()) => sync_parent(path),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(FsError::new(FsOp::CreateDir, path, e)),
    }
}

/// Creates the directory `target` whole: `fill` writes its contents into a
/// fresh staging directory beside it (`.orcho-staging-*`), which is then
/// flushed and renamed to `target`, and the parent is flushed. A crash at
/// any point leaves either no `target` or a complete one — at worst a stray
/// staging directory, which no reader takes for a `target`.
///
/// `fill` gets the staging directory's path; what it returns is returned.
///
/// # Errors
///
/// An [`FsError`] when the staging directory cannot be created, flushed or
/// renamed ([`FsError::is_already_exists`] when `target` exists), or what
/// `fill` returns, converted.
///
/// # Examples
///
/// ```
/// use orcho_core::fs::{create_dir_whole, write_atomic};
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// let run = root.join("runs").join("run-1");
/// # orcho_core::fs::create_dir_all(&root.join("runs"))?;
/// create_dir_whole(&run, |staging| write_atomic(&staging.join("journal.jsonl"), b"{}\n"))?;
/// assert!(run.join("journal.jsonl").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_dir_whole<T, E: From<FsError>>(
    target: &Utf8Path,
    fill: impl FnOnce(&Utf8Path) -> Result<T, E>,
) -> Result<T, E> {
    let parent = parent(target);
    if target.exists() {
        return Err(FsError::new(
            FsOp::CreateNew,
            target,
            io::Error::from(io::ErrorKind::AlreadyExists),
        )
        .into());
    }
    let staging = tempfile::Builder::new()
        .prefix(".orcho-staging-")
        .tempdir_in(parent)
        .map_err(|e| FsError::new(FsOp::CreateDir, parent, e))?;
    let path = Utf8Path::from_path(staging.path())
        .ok_or_else(|| {
            FsError::new(
                FsOp::CreateDir,
                parent,
                io::Error::new(io::ErrorKind::InvalidData, "the path is not UTF-8"),
            )
        })?
        .to_owned();
    let value = fill(&path)?;
    File::open(&path)
        .and_then(|d| d.sync_all())
        .map_err(|e| FsError::new(FsOp::SyncDir, &path, e))?;
    let staging = staging.keep();
    if let Err(e) = std::fs::rename(&staging, target) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(FsError::new(FsOp::Rename, target, e).into());
    }
    sync_parent(target)?;
    Ok(value)
}

/// Writes a versioned document atomically, refusing to overwrite a file that
/// holds a *newer* schema than `T::SCHEMA` (that would throw away data a newer
/// Orcho wrote).
///
/// An existing file that is unreadable or malformed is overwritten: the
/// write replaces it with a good document.
///
/// # Errors
///
/// [`DocumentErrorKind::WouldDowngrade`], an encoding error, or an
/// [`FsError`] inside [`DocumentErrorKind::Fs`].
pub fn write_document<T: Document>(path: &Utf8Path, doc: &T) -> Result<(), DocumentError> {
    if let Ok(existing) = std::fs::read(path)
        && let Ok(found) = schema::probe(T::KIND, Some(path), &existing)
        && found > T::SCHEMA
    {
        return Err(DocumentError::new(
            T::KIND,
            Some(path),
            DocumentErrorKind::WouldDowngrade {
                found,
                writes: T::SCHEMA,
            },
        ));
    }
    let bytes = schema::encode(doc)?;
    write_atomic(path, &bytes)
        .map_err(|e| DocumentError::new(T::KIND, Some(path), DocumentErrorKind::Fs(e)))
}

/// Reads a versioned document: version probe first, then the full parse.
///
/// # Errors
///
/// A [`DocumentError`]; [`DocumentError::is_not_found`] tells a missing file
/// apart.
pub fn read_document<T: Document>(path: &Utf8Path) -> Result<T, DocumentError> {
    let bytes = std::fs::read(path).map_err(|e| {
        DocumentError::new(
            T::KIND,
            Some(path),
            DocumentErrorKind::Fs(FsError::new(FsOp::Read, path, e)),
        )
    })?;
    schema::decode(&bytes, Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SchemaVersion, error_chain};
    use camino::Utf8PathBuf;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct State {
        schema: SchemaVersion,
        n: u32,
    }

    impl Document for State {
        const KIND: &'static str = "test state";
        const SCHEMA: SchemaVersion = SchemaVersion::new(1);
    }

    fn temp() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        (dir, root)
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp_files() {
        let (_dir, root) = temp();
        let path = root.join("f.json");
        for n in 0..5 {
            write_atomic(&path, format!("{n}").as_bytes()).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "4");
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f.json"]);
    }

    #[test]
    fn write_new_atomic_has_one_winner_among_threads() {
        let (_dir, root) = temp();
        let path = root.join("decision.json");
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let path = &path;
                    s.spawn(move || write_new_atomic(path, format!("{i}").as_bytes()))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join().unwrap() {
                    Ok(()) => 1,
                    Err(e) => {
                        assert!(e.is_already_exists(), "{e}");
                        0
                    }
                })
                .sum()
        });
        assert_eq!(winners, 1);
        let content: u32 = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        assert!(content < 8);
    }

    #[test]
    fn documents_round_trip_and_newer_files_are_not_overwritten() {
        let (_dir, root) = temp();
        let path = root.join("state.json");
        write_document(
            &path,
            &State {
                schema: State::SCHEMA,
                n: 1,
            },
        )
        .unwrap();
        assert_eq!(read_document::<State>(&path).unwrap().n, 1);
        insta::assert_snapshot!(std::fs::read_to_string(&path).unwrap(), @r#"
        {
          "schema": 1,
          "n": 1
        }
        "#);

        write_atomic(&path, br#"{"schema": 2, "n": "future"}"#).unwrap();
        let err = write_document(
            &path,
            &State {
                schema: State::SCHEMA,
                n: 2,
            },
        )
        .unwrap_err();
        let msg = error_chain(&err).replace(root.as_str(), "<dir>");
        insta::assert_snapshot!(msg, @"cannot use test state `<dir>/state.json`: caused by: the file on disk has schema 2, newer than 1, which this build writes; refusing to overwrite it");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"schema": 2, "n": "future"}"#
        );
    }

    #[test]
    fn errors_name_the_path() {
        let (_dir, root) = temp();
        let path = root.join("missing-dir/f.json");
        let err = write_atomic(&path, b"x").unwrap_err();
        assert_eq!(err.op(), FsOp::CreateTemp);
        let msg = err.to_string().replace(root.as_str(), "<dir>");
        insta::assert_snapshot!(msg, @"failed to create a temporary file beside `<dir>/missing-dir/f.json`");
        let err = read_document::<State>(&root.join("nope.json")).unwrap_err();
        assert!(err.is_not_found());
    }

    #[test]
    fn create_dir_all_is_idempotent() {
        let (_dir, root) = temp();
        let deep = root.join("a/b/c");
        create_dir_all(&deep).unwrap();
        create_dir_all(&deep).unwrap();
        assert!(deep.is_dir());
    }
}
