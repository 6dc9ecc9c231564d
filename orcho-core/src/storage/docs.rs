//! Versioned documents and journal records through a [`Storage`]: the
//! rules of [`schema`](crate::schema) on top of its bytes.

use serde::{Serialize, de::DeserializeOwned};

use super::seam::{Created, Item, Log, Storage};
use crate::{
    DocumentError, DocumentErrorKind, JournalError, RunId, SchemaVersion, StoreError,
    fs::{JournalRead, encode_line, parse_journal},
    schema::{self, Document},
};

/// Reads the document `item` of `run`: version probe first, then the full
/// parse. `None` when there is none.
///
/// # Errors
///
/// A storage error, or a [`DocumentError`] (inside the [`StoreError`]) that
/// says where the document is and what is wrong with it.
pub fn get_document<T: Document>(
    storage: &dyn Storage,
    run: &RunId,
    item: Item<'_>,
) -> Result<Option<T>, StoreError> {
    match storage.get(run, item)? {
        None => Ok(None),
        Some(bytes) => Ok(Some(schema::decode(
            &bytes,
            Some(&storage.locate(run, item)),
        )?)),
    }
}

/// Writes the document `item` of `run` unless one exists.
///
/// # Errors
///
/// When it cannot be encoded or written.
pub fn create_document<T: Document>(
    storage: &dyn Storage,
    run: &RunId,
    item: Item<'_>,
    doc: &T,
) -> Result<Created, StoreError> {
    storage.create(run, item, &schema::encode(doc)?)
}

/// Writes the document `item` of `run`, refusing to replace one that holds
/// a *newer* schema than `T::SCHEMA` (that would throw away what a newer
/// Orcho wrote). One that is unreadable is replaced.
///
/// # Errors
///
/// [`DocumentErrorKind::WouldDowngrade`], or when it cannot be encoded or
/// written.
pub fn put_document<T: Document>(
    storage: &dyn Storage,
    run: &RunId,
    item: Item<'_>,
    doc: &T,
) -> Result<(), StoreError> {
    refuse_downgrade::<T>(storage, run, item)?;
    storage.put(run, item, &schema::encode(doc)?)
}

/// Refuses when `item` of `run` holds a newer schema than `T` writes.
///
/// # Errors
///
/// [`DocumentErrorKind::WouldDowngrade`], or a storage error.
pub fn refuse_downgrade<T: Document>(
    storage: &dyn Storage,
    run: &RunId,
    item: Item<'_>,
) -> Result<(), StoreError> {
    let Some(existing) = storage.get(run, item)? else {
        return Ok(());
    };
    let path = storage.locate(run, item);
    if let Ok(found) = schema::probe(T::KIND, Some(&path), &existing)
        && found > T::SCHEMA
    {
        return Err(DocumentError::new(
            T::KIND,
            Some(&path),
            DocumentErrorKind::WouldDowngrade {
                found,
                writes: T::SCHEMA,
            },
        )
        .into());
    }
    Ok(())
}

/// Reads every record of the log `log` of `run`, as
/// [`Journal::read`](crate::fs::Journal::read) reads a file: records newer
/// than `newest` skipped and counted, a torn last line skipped.
///
/// # Errors
///
/// A storage error, or a corrupt complete line.
pub fn read_log<T: DeserializeOwned>(
    storage: &dyn Storage,
    run: &RunId,
    log: Log,
    newest: SchemaVersion,
) -> Result<JournalRead<T>, StoreError> {
    let bytes = storage.read_log(run, log)?;
    Ok(parse_journal(
        &bytes,
        newest,
        &storage.locate_log(run, log),
    )?)
}

/// Encodes one record as a line of the log `log` of `run` (without its
/// line end), for [`Storage::append_log`] or a
/// [`RunLease`](super::RunLease).
///
/// # Errors
///
/// When it cannot be encoded, or has no `schema` first.
pub fn encode_record<T: Serialize + ?Sized>(
    storage: &dyn Storage,
    run: &RunId,
    log: Log,
    record: &T,
) -> Result<Vec<u8>, StoreError> {
    Ok(encode_line(record)
        .map_err(|kind| JournalError::new(&storage.locate_log(run, log), None, kind))?)
}

/// Appends one record to the log `log` of `run`.
///
/// # Errors
///
/// When it cannot be encoded or written.
pub fn append_record<T: Serialize + ?Sized>(
    storage: &dyn Storage,
    run: &RunId,
    log: Log,
    record: &T,
) -> Result<(), StoreError> {
    let line = encode_record(storage, run, log, record)?;
    storage.append_log(run, log, &line)
}
