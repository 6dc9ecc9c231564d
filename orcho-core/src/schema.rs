//! Versioned on-disk documents.
//!
//! Every JSON document Orcho writes starts with a `schema` field holding a
//! [`SchemaVersion`]. A reader first does a *version probe*: it parses only
//! `schema`, and refuses a document from a newer Orcho with a typed error
//! ([`DocumentErrorKind::TooNew`]) instead
//! of mis-parsing it with older types. Only then is the full document parsed.
//!
//! A document type implements [`Document`], which names it for error messages
//! and says which schema it writes and which it can read. [`encode`] and
//! [`decode`] are the in-memory halves; [`fs::write_document`](crate::fs::write_document)
//! and [`fs::read_document`](crate::fs::read_document) add the file, the atomic
//! write, and the rule that a writer never overwrites a newer document.
//!
//! Conventions shared by every document:
//!
//! - keys are snake_case;
//! - timestamps are RFC 3339 strings with milliseconds ([`Timestamp`](crate::Timestamp));
//! - durations are whole milliseconds in fields ending in `_ms`;
//! - digests are `blake3:<hex>` ([`Digest`](crate::Digest)).

use std::fmt;

use camino::Utf8Path;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::{DocumentError, DocumentErrorKind};

/// The version of an on-disk format. Written as a plain JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SchemaVersion(u32);

impl SchemaVersion {
    /// Wraps a version number.
    pub const fn new(version: u32) -> Self {
        Self(version)
    }

    /// The version number.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A JSON document with a `schema` field first.
///
/// Implement it on the *format* type (the serde shape on disk), not on the
/// domain type: the two are kept apart so the domain can change without
/// silently changing the file format.
///
/// ```
/// use orcho_core::{schema::{self, Document}, SchemaVersion};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Note {
///     schema: SchemaVersion,
///     text: String,
/// }
///
/// impl Document for Note {
///     const KIND: &'static str = "note";
///     const SCHEMA: SchemaVersion = SchemaVersion::new(1);
/// }
///
/// let note = Note { schema: Note::SCHEMA, text: "hi".into() };
/// let bytes = schema::encode(&note)?;
/// assert_eq!(schema::decode::<Note>(&bytes, None)?, note);
///
/// let future = br#"{"schema": 9, "text": {"rich": true}}"#;
/// let err = schema::decode::<Note>(future, None).unwrap_err();
/// assert!(err.is_too_new());
/// # Ok::<(), orcho_core::DocumentError>(())
/// ```
pub trait Document: Serialize + DeserializeOwned {
    /// What the document is called in error messages, for example
    /// `"run state"`.
    const KIND: &'static str;
    /// The schema this build writes, and the newest it reads.
    const SCHEMA: SchemaVersion;
    /// The oldest schema this build still reads.
    const OLDEST_READABLE: SchemaVersion = SchemaVersion::new(1);
}

/// The version probe: only the `schema` field of a JSON object. Unlike a
/// derived struct it refuses a JSON array (serde would otherwise read `[1]`
/// positionally as `{"schema": 1}`).
pub(crate) struct Probe {
    pub(crate) schema: Option<SchemaVersion>,
}

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Probe;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object with a `schema` field")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Probe, A::Error> {
                let mut schema = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "schema" && schema.is_none() {
                        schema = Some(map.next_value()?);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Probe { schema })
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Reads only the `schema` field of a JSON document.
///
/// # Errors
///
/// [`DocumentErrorKind::Malformed`] when
/// the bytes are not a JSON object, and
/// [`DocumentErrorKind::MissingSchema`]
/// when it has no `schema`.
pub fn probe(
    doc: &'static str,
    path: Option<&Utf8Path>,
    bytes: &[u8],
) -> Result<SchemaVersion, DocumentError> {
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| malformed(doc, path, e))?;
    probe
        .schema
        .ok_or_else(|| DocumentError::new(doc, path, DocumentErrorKind::MissingSchema))
}

pub(crate) fn malformed(
    doc: &'static str,
    path: Option<&Utf8Path>,
    e: serde_json::Error,
) -> DocumentError {
    DocumentError::new(
        doc,
        path,
        DocumentErrorKind::Malformed {
            line: e.line(),
            column: e.column(),
            source: Box::new(e),
        },
    )
}

/// Decodes a document: version probe, then the full parse.
///
/// `path` only labels errors.
///
/// # Errors
///
/// A [`DocumentError`] that says whether the document is malformed, has no
/// schema, or is too new or too old for this build.
pub fn decode<T: Document>(bytes: &[u8], path: Option<&Utf8Path>) -> Result<T, DocumentError> {
    let found = probe(T::KIND, path, bytes)?;
    check_readable::<T>(found, path)?;
    serde_json::from_slice(bytes).map_err(|e| malformed(T::KIND, path, e))
}

/// Checks that a probed version is one this build reads.
///
/// # Errors
///
/// `TooNew` or `TooOld`.
pub fn check_readable<T: Document>(
    found: SchemaVersion,
    path: Option<&Utf8Path>,
) -> Result<(), DocumentError> {
    if found > T::SCHEMA {
        return Err(DocumentError::new(
            T::KIND,
            path,
            DocumentErrorKind::TooNew {
                found,
                supported: T::SCHEMA,
            },
        ));
    }
    if found < T::OLDEST_READABLE {
        return Err(DocumentError::new(
            T::KIND,
            path,
            DocumentErrorKind::TooOld {
                found,
                oldest: T::OLDEST_READABLE,
            },
        ));
    }
    Ok(())
}

/// Encodes a document as pretty JSON with a trailing newline.
///
/// # Errors
///
/// When serialization fails (a map with non-string keys, a failing custom
/// `Serialize`).
pub fn encode<T: Document>(doc: &T) -> Result<Vec<u8>, DocumentError> {
    let mut bytes = serde_json::to_vec_pretty(doc)
        .map_err(|e| DocumentError::new(T::KIND, None, DocumentErrorKind::Encode(Box::new(e))))?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_chain;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Note {
        schema: SchemaVersion,
        text: String,
    }

    impl Document for Note {
        const KIND: &'static str = "note";
        const SCHEMA: SchemaVersion = SchemaVersion::new(2);
        const OLDEST_READABLE: SchemaVersion = SchemaVersion::new(2);
    }

    fn err(bytes: &str) -> String {
        error_chain(
            &decode::<Note>(bytes.as_bytes(), Some(Utf8Path::new("notes/a.json"))).unwrap_err(),
        )
    }

    #[test]
    fn decode_errors() {
        insta::assert_snapshot!(err(r#"{"schema": 3, "text": 7}"#), @"cannot use note `notes/a.json`: caused by: it was written with schema 3, newer than 2, the newest this build reads; upgrade Orcho to read it");
        insta::assert_snapshot!(err(r#"{"schema": 1, "text": "x"}"#), @"cannot use note `notes/a.json`: caused by: it was written with schema 1, older than 2, the oldest this build reads");
        insta::assert_snapshot!(err(r#"{"text": "x"}"#), @"cannot use note `notes/a.json`: caused by: it has no `schema` field");
        insta::assert_snapshot!(err(r#"{"schema": 2, "te"#), @"cannot use note `notes/a.json`: caused by: it is not valid at line 1, column 17: caused by: EOF while parsing a string at line 1 column 17");
        insta::assert_snapshot!(err(r#"{"schema": 2, "text": 5}"#), @"cannot use note `notes/a.json`: caused by: it is not valid at line 1, column 23: caused by: invalid type: integer `5`, expected a string at line 1 column 23");
        insta::assert_snapshot!(err("[1]"), @"cannot use note `notes/a.json`: caused by: it is not valid at line 1, column 0: caused by: invalid type: sequence, expected a JSON object with a `schema` field at line 1 column 0");
    }

    #[test]
    fn a_newer_document_is_never_parsed_with_old_types() {
        // The newer document is not even valid for the old type; the probe
        // must refuse it before the full parse gets a chance to fail (or,
        // worse, succeed).
        let e = decode::<Note>(br#"{"schema": 99, "text": {"nested": [1, 2]}}"#, None).unwrap_err();
        assert!(e.is_too_new());
    }

    #[test]
    fn encode_puts_schema_first() {
        let bytes = encode(&Note {
            schema: Note::SCHEMA,
            text: "x".into(),
        })
        .unwrap();
        assert!(bytes.starts_with(b"{\n  \"schema\": 2,"));
        assert!(bytes.ends_with(b"}\n"));
    }
}
