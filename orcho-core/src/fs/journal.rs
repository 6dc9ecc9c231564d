//! An append-only JSON-lines journal that survives crashes.

use std::{
    fs::{File, OpenOptions},
    io::{self, Read, Seek, SeekFrom, Write},
};

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Serialize, de::DeserializeOwned};

use super::atomic::sync_parent;
use crate::{FsError, FsOp, JournalError, JournalErrorKind, SchemaVersion, schema::Probe};

/// The prefix every record must serialize with: `schema` as its first field.
const SCHEMA_PREFIX: &[u8] = b"{\"schema\":";

/// An append-only file of JSON records, one per line.
///
/// - Every [`append`](Self::append) writes one whole line with a single
///   `write` and flushes it with `fdatasync` before returning, so a record
///   that was appended survives a crash.
/// - A crash in the middle of an append leaves a *torn* last line. Readers
///   ([`Journal::read`]) skip it and report it in [`JournalRead::torn_tail`];
///   [`Journal::open`] cuts it off before appending, so that the next record
///   never lands on the end of a fragment.
/// - Each record must serialize as a JSON object whose first field is
///   `schema` (a [`SchemaVersion`]). Readers skip and count records from a
///   newer schema instead of guessing at them.
///
/// A journal has one writer at a time; take a [`LockFile`](super::LockFile)
/// around it when several processes may write.
///
/// ```
/// use orcho_core::{fs::Journal, SchemaVersion};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Event { schema: SchemaVersion, n: u32 }
///
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("journal.jsonl"))?;
/// let mut journal = Journal::open(&path)?;
/// for n in 0..3 {
///     journal.append(&Event { schema: SchemaVersion::new(1), n })?;
/// }
/// let read = Journal::read::<Event>(&path, SchemaVersion::new(1))?;
/// assert_eq!(read.records.len(), 3);
/// assert!(read.torn_tail.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Journal {
    path: Utf8PathBuf,
    file: File,
    /// The length of the file after the last complete record.
    len: u64,
    repaired: Option<TornTail>,
    buf: Vec<u8>,
}

/// A torn last line: the bytes a crash left behind in the middle of an
/// append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TornTail {
    /// The byte offset where the torn line starts.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// What [`Journal::read`] found.
#[derive(Debug)]
#[non_exhaustive]
pub struct JournalRead<T> {
    /// Every complete record this build can read, in order.
    pub records: Vec<T>,
    /// The torn last line, if a crash left one. It is not in `records`.
    pub torn_tail: Option<TornTail>,
    /// How many records were skipped because a newer Orcho wrote them.
    pub skipped_newer: usize,
}

impl Journal {
    /// Opens the journal at `path` for appending, creating it (durably) if it
    /// does not exist. A torn last line is cut off first and reported by
    /// [`repaired`](Self::repaired).
    ///
    /// # Errors
    ///
    /// A [`JournalError`] when the file cannot be created, read or truncated.
    pub fn open(path: &Utf8Path) -> Result<Self, JournalError> {
        let fs_err =
            |op, e| JournalError::new(path, None, JournalErrorKind::Fs(FsError::new(op, path, e)));
        let (file, created) = match OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(path)
        {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (
                OpenOptions::new()
                    .read(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| fs_err(FsOp::Open, e))?,
                false,
            ),
            Err(e) => return Err(fs_err(FsOp::CreateNew, e)),
        };
        if created {
            sync_parent(path)
                .map_err(|e| JournalError::new(path, None, JournalErrorKind::Fs(e)))?;
        }
        let mut journal = Self {
            path: path.to_owned(),
            len: 0,
            file,
            repaired: None,
            buf: Vec::with_capacity(512),
        };
        journal.repair().map_err(|e| fs_err(FsOp::Truncate, e))?;
        Ok(journal)
    }

    fn repair(&mut self) -> io::Result<()> {
        let len = self.file.metadata()?.len();
        self.len = len;
        if len == 0 {
            return Ok(());
        }
        let (start, ends_with_newline) = last_line(&mut self.file, len)?;
        let torn = if ends_with_newline {
            let mut line = vec![0u8; usize::try_from(len - 1 - start).unwrap_or(usize::MAX)];
            self.file.seek(SeekFrom::Start(start))?;
            self.file.read_exact(&mut line)?;
            !line.iter().all(u8::is_ascii_whitespace)
                && serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_err()
        } else {
            true
        };
        if torn {
            self.file.set_len(start)?;
            self.file.sync_all()?;
            self.repaired = Some(TornTail {
                offset: start,
                len: len - start,
            });
            self.len = start;
        }
        Ok(())
    }

    crate::getters! {
        /// The torn last line that [`open`](Self::open) cut off, if any.
        pub fn repaired(&self) -> Option<TornTail>;
        /// The journal file.
        pub fn path(&self) -> &Utf8Path;
    }

    /// Appends one record as a line and fsyncs it. The record must
    /// serialize to a JSON object whose first key is `schema` (every Orcho
    /// journal line carries its version first).
    ///
    /// # Errors
    ///
    /// An encoding error, [`JournalErrorKind::MissingSchema`], or an I/O
    /// error; after an I/O error the journal is as it was before the call
    /// (best effort: a partial line is truncated away).
    pub fn append<T: Serialize + ?Sized>(&mut self, record: &T) -> Result<(), JournalError> {
        let line = encode_line(record).map_err(|kind| JournalError::new(&self.path, None, kind))?;
        self.append_line(&line)
    }

    /// Appends one encoded record (see [`encode_line`]), without its line
    /// end, and fsyncs it.
    ///
    /// # Errors
    ///
    /// [`JournalErrorKind::MissingSchema`] when the line does not start with
    /// its `schema`, or an I/O error (the journal is then as it was before
    /// the call, best effort).
    pub fn append_line(&mut self, line: &[u8]) -> Result<(), JournalError> {
        if !line.starts_with(SCHEMA_PREFIX) || line.contains(&b'\n') {
            return Err(JournalError::new(
                &self.path,
                None,
                JournalErrorKind::MissingSchema,
            ));
        }
        self.buf.clear();
        self.buf.extend_from_slice(line);
        self.buf.push(b'\n');
        let written = self
            .file
            .write_all(&self.buf)
            .map_err(|e| (FsOp::Write, e))
            .and_then(|()| self.file.sync_data().map_err(|e| (FsOp::Sync, e)));
        match written {
            Ok(()) => {
                self.len += self.buf.len() as u64;
                Ok(())
            }
            Err((op, e)) => {
                // Best effort: take the fragment back so the next append
                // starts on a fresh line.
                let _ = self.file.set_len(self.len);
                Err(JournalError::new(
                    &self.path,
                    None,
                    JournalErrorKind::Fs(FsError::new(op, &self.path, e)),
                ))
            }
        }
    }

    /// Reads every record of the journal at `path`.
    ///
    /// `newest` is the newest record schema the caller understands; records
    /// with a newer `schema` are skipped and counted in
    /// [`JournalRead::skipped_newer`]. A torn last line (no final newline, or
    /// not valid JSON) is skipped and reported in [`JournalRead::torn_tail`].
    /// Blank lines are ignored. A missing file reads as an empty journal.
    ///
    /// # Errors
    ///
    /// An I/O error, or [`JournalErrorKind::CorruptLine`] (with the line
    /// number) when a complete line that is not the last one is not a valid
    /// record: that is damage, not a crash artefact, and is never skipped
    /// silently.
    pub fn read<T: DeserializeOwned>(
        path: &Utf8Path,
        newest: SchemaVersion,
    ) -> Result<JournalRead<T>, JournalError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(JournalError::new(
                    path,
                    None,
                    JournalErrorKind::Fs(FsError::new(FsOp::Read, path, e)),
                ));
            }
        };
        parse(&bytes, newest, path)
    }
}

/// Encodes one journal record as a line, without its line end: JSON whose
/// first key is `schema`.
///
/// # Errors
///
/// An encoding error, or [`JournalErrorKind::MissingSchema`].
pub fn encode_line<T: Serialize + ?Sized>(record: &T) -> Result<Vec<u8>, JournalErrorKind> {
    let line = serde_json::to_vec(record).map_err(|e| JournalErrorKind::Encode(Box::new(e)))?;
    if !line.starts_with(SCHEMA_PREFIX) {
        return Err(JournalErrorKind::MissingSchema);
    }
    Ok(line)
}

/// Reads the records of a journal's bytes, as [`Journal::read`] does for a
/// file; `path` only names it in errors.
///
/// # Errors
///
/// [`JournalErrorKind::CorruptLine`] (with the line number) when a complete
/// line that is not the last one is not a valid record.
pub fn parse<T: DeserializeOwned>(
    bytes: &[u8],
    newest: SchemaVersion,
    path: &Utf8Path,
) -> Result<JournalRead<T>, JournalError> {
    let mut out = JournalRead {
        records: Vec::new(),
        torn_tail: None,
        skipped_newer: 0,
    };
    let last_start = last_nonblank_line_start(bytes);
    let mut offset = 0usize;
    for (index, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let start = offset;
        offset += line.len();
        let complete = line.ends_with(b"\n");
        let body = if complete {
            &line[..line.len() - 1]
        } else {
            line
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let is_last = Some(start) == last_start;
        let torn = TornTail {
            offset: start as u64,
            len: line.len() as u64,
        };
        if !complete {
            out.torn_tail = Some(torn);
            break;
        }
        match parse_line::<T>(body, newest) {
            Ok(Some(record)) => out.records.push(record),
            Ok(None) => out.skipped_newer += 1,
            Err(_) if is_last => out.torn_tail = Some(torn),
            Err(e) => {
                return Err(JournalError::new(
                    path,
                    Some(index + 1),
                    JournalErrorKind::CorruptLine(Box::new(e)),
                ));
            }
        }
    }
    Ok(out)
}

/// Parses one line: `Ok(None)` for a record from a newer schema.
fn parse_line<T: DeserializeOwned>(
    body: &[u8],
    newest: SchemaVersion,
) -> Result<Option<T>, serde_json::Error> {
    let schema = match fast_schema(body) {
        Some(schema) => schema,
        None => match serde_json::from_slice::<Probe>(body)?.schema {
            Some(schema) => schema,
            None => return Err(serde::de::Error::missing_field("schema")),
        },
    };
    if schema > newest {
        // Still require valid JSON: a garbled line is damage, not a newer
        // record.
        serde_json::from_slice::<serde::de::IgnoredAny>(body)?;
        return Ok(None);
    }
    serde_json::from_slice(body).map(Some)
}

/// Reads the schema of a line written by [`Journal::append`] without a parse:
/// `{"schema":N,` or `{"schema":N}`.
fn fast_schema(body: &[u8]) -> Option<SchemaVersion> {
    let rest = body.strip_prefix(SCHEMA_PREFIX)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || !matches!(rest.get(digits), Some(b',' | b'}')) {
        return None;
    }
    let n = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some(SchemaVersion::new(n))
}

fn last_nonblank_line_start(bytes: &[u8]) -> Option<usize> {
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace())?;
    Some(
        bytes[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1),
    )
}

/// Finds where the last line of the file starts and whether the file ends
/// with a newline, reading backwards in chunks.
fn last_line(file: &mut File, len: u64) -> io::Result<(u64, bool)> {
    const CHUNK: u64 = 8192;
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    let ends_with_newline = last[0] == b'\n';
    let mut end = if ends_with_newline { len - 1 } else { len };
    let mut buf = vec![0u8; CHUNK as usize];
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let chunk = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(p) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok((start + p as u64 + 1, ends_with_newline));
        }
        end = start;
    }
    Ok((0, ends_with_newline))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_chain;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Event {
        schema: SchemaVersion,
        n: u32,
    }

    fn ev(n: u32) -> Event {
        Event {
            schema: SchemaVersion::new(1),
            n,
        }
    }

    fn temp() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(dir.path().join("journal.jsonl")).unwrap();
        (dir, path)
    }

    fn read(path: &Utf8Path) -> JournalRead<Event> {
        Journal::read(path, SchemaVersion::new(1)).unwrap()
    }

    #[test]
    fn line_shape() {
        let (_dir, path) = temp();
        let mut j = Journal::open(&path).unwrap();
        j.append(&ev(1)).unwrap();
        j.append(&ev(2)).unwrap();
        insta::assert_snapshot!(std::fs::read_to_string(&path).unwrap(), @r#"
        {"schema":1,"n":1}
        {"schema":1,"n":2}
        "#);
    }

    #[test]
    fn a_torn_tail_is_skipped_reported_and_cut_before_the_next_append() {
        let (_dir, path) = temp();
        let mut j = Journal::open(&path).unwrap();
        j.append(&ev(0)).unwrap();
        j.append(&ev(1)).unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"schema":1,"n":"#).unwrap();
        drop(f);

        let r = read(&path);
        assert_eq!(r.records, [ev(0), ev(1)]);
        assert_eq!(
            r.torn_tail,
            Some(TornTail {
                offset: 38,
                len: 16
            })
        );

        let mut j = Journal::open(&path).unwrap();
        assert_eq!(
            j.repaired(),
            Some(TornTail {
                offset: 38,
                len: 16
            })
        );
        j.append(&ev(2)).unwrap();
        let r = read(&path);
        assert_eq!(r.records, [ev(0), ev(1), ev(2)]);
        assert_eq!(r.torn_tail, None);
    }

    #[test]
    fn a_complete_but_garbled_last_line_is_torn_too() {
        let (_dir, path) = temp();
        let mut j = Journal::open(&path).unwrap();
        j.append(&ev(0)).unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"\0\0\0\0\n").unwrap();
        drop(f);
        let r = read(&path);
        assert_eq!(r.records, [ev(0)]);
        assert!(r.torn_tail.is_some());
        let j = Journal::open(&path).unwrap();
        assert!(j.repaired().is_some());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"schema\":1,\"n\":0}\n"
        );
    }

    #[test]
    fn damage_before_the_last_line_is_an_error_with_the_line() {
        let (_dir, path) = temp();
        crate::fs::write_atomic(
            &path,
            b"{\"schema\":1,\"n\":0}\nnot json\n{\"schema\":1,\"n\":2}\n",
        )
        .unwrap();
        let err = Journal::read::<Event>(&path, SchemaVersion::new(1)).unwrap_err();
        assert_eq!(err.line(), Some(2));
        let msg = error_chain(&err).replace(path.as_str(), "<journal>");
        insta::assert_snapshot!(msg, @"journal `<journal>`, line 2: caused by: a complete line is not a valid record: caused by: expected ident at line 1 column 2");
    }

    #[test]
    fn newer_records_are_skipped_and_counted() {
        let (_dir, path) = temp();
        crate::fs::write_atomic(
            &path,
            b"{\"schema\":1,\"n\":0}\n{\"schema\":2,\"kind\":\"future\"}\n{\"n\":3,\"schema\":1}\n\n{\"schema\":1,\"n\":4}\n",
        )
        .unwrap();
        let r = read(&path);
        assert_eq!(r.records, [ev(0), ev(3), ev(4)]);
        assert_eq!(r.skipped_newer, 1);
    }

    #[test]
    fn records_without_schema_first_are_refused() {
        #[derive(Serialize)]
        struct Bad {
            n: u32,
            schema: u32,
        }
        let (_dir, path) = temp();
        let mut j = Journal::open(&path).unwrap();
        let err = j.append(&Bad { n: 1, schema: 1 }).unwrap_err();
        assert!(matches!(err.kind(), JournalErrorKind::MissingSchema));
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_missing_journal_reads_empty() {
        let (_dir, path) = temp();
        let r = read(&path);
        assert!(r.records.is_empty() && r.torn_tail.is_none());
    }

    #[test]
    fn long_last_lines_are_found_across_chunks() {
        let (_dir, path) = temp();
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct Big {
            schema: SchemaVersion,
            pad: String,
        }
        let mut j = Journal::open(&path).unwrap();
        let big = Big {
            schema: SchemaVersion::new(1),
            pad: "x".repeat(50_000),
        };
        j.append(&big).unwrap();
        j.append(&big).unwrap();
        drop(j);
        let len = std::fs::metadata(&path).unwrap().len();
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 10).unwrap();
        drop(f);
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.repaired().unwrap().offset, (len / 2));
        let r = Journal::read::<Big>(&path, SchemaVersion::new(1)).unwrap();
        assert_eq!(r.records.len(), 1);
    }
}
