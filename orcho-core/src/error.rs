//! Errors of `orcho-core`.
//!
//! Every error names what it is about (an id, a path, a line) in backticks,
//! and never repeats the text of its source: walk [`std::error::Error::source`]
//! to print the chain.

use std::{fmt, io, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};

use crate::SchemaVersion;

/// Why an id was refused. Returned by every id constructor, `FromStr` and
/// `Deserialize`.
///
/// ```
/// use orcho_core::{IdErrorReason, RunId};
///
/// let err = "..".parse::<RunId>().unwrap_err();
/// assert_eq!(err.reason(), &IdErrorReason::DotDot);
/// assert_eq!(err.to_string(), "invalid run id `..`: contains `..`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {id_kind} `{shown}`: {reason}", shown = shown_value(&self.value))]
pub struct IdError {
    id_kind: &'static str,
    value: String,
    reason: IdErrorReason,
}

impl IdError {
    #[cold]
    pub(crate) fn new(id_kind: &'static str, value: &str, reason: IdErrorReason) -> Self {
        // Keep a bounded prefix only: a 10 kB hostile id must not become a
        // 10 kB error message.
        let value = value.chars().take(SHOWN_CHARS + 1).collect();
        Self {
            id_kind,
            value,
            reason,
        }
    }

    /// Which kind of id was refused, for example `"run id"`.
    pub fn id_kind(&self) -> &'static str {
        self.id_kind
    }

    /// Why it was refused.
    pub fn reason(&self) -> &IdErrorReason {
        &self.reason
    }
}

const SHOWN_CHARS: usize = 40;

fn shown_value(value: &str) -> String {
    crate::spelling::shorten(value, SHOWN_CHARS)
}

/// The rule an id broke. Ids name files and directories, so the rules keep
/// them to one safe path component.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdErrorReason {
    /// The id is empty.
    Empty,
    /// The id is longer than the cap, in bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The cap in bytes.
        max: usize,
    },
    /// The id contains `..`, which could climb out of a directory.
    DotDot,
    /// The id starts with `.`, which would make a hidden (or special) file.
    LeadingDot,
    /// The id contains a character that ids may not contain: a path
    /// separator, a control character, whitespace, or a character that is not
    /// portable in file names.
    ForbiddenChar(char),
}

impl fmt::Display for IdErrorReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("is empty"),
            Self::TooLong { len, max } => write!(f, "is {len} bytes long, more than {max}"),
            Self::DotDot => f.write_str("contains `..`"),
            Self::LeadingDot => f.write_str("starts with `.`"),
            Self::ForbiddenChar(c) if c.is_control() => {
                write!(f, "contains the control character {c:?}")
            }
            Self::ForbiddenChar(c) if c.is_whitespace() => {
                write!(f, "contains whitespace ({c:?})")
            }
            Self::ForbiddenChar(c) => write!(f, "contains `{c}`, which ids may not contain"),
        }
    }
}

/// What a file-system operation was doing when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FsOp {
    /// Creating a directory.
    CreateDir,
    /// Creating the temporary file of an atomic write.
    CreateTemp,
    /// Opening a file.
    Open,
    /// Reading a file.
    Read,
    /// Writing a file.
    Write,
    /// Flushing a file to stable storage.
    Sync,
    /// Renaming the temporary file over its target.
    Rename,
    /// Creating a file that must not exist yet.
    CreateNew,
    /// Flushing a directory to stable storage.
    SyncDir,
    /// Truncating a file.
    Truncate,
    /// Taking or releasing a lock.
    Lock,
    /// Removing a file.
    Remove,
}

impl fmt::Display for FsOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CreateDir => "create directory",
            Self::CreateTemp => "create a temporary file beside",
            Self::Open => "open",
            Self::Read => "read",
            Self::Write => "write",
            Self::Sync => "sync",
            Self::Rename => "rename a temporary file to",
            Self::CreateNew => "create",
            Self::SyncDir => "sync directory",
            Self::Truncate => "truncate",
            Self::Lock => "lock",
            Self::Remove => "remove",
        })
    }
}

/// A file-system operation failed.
///
/// ```
/// use orcho_core::fs::write_new_atomic;
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("decision.json"))?;
/// write_new_atomic(&path, b"{}\n")?;
/// let err = write_new_atomic(&path, b"{}\n").unwrap_err();
/// assert!(err.is_already_exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[error("failed to {op} `{path}`")]
pub struct FsError {
    op: FsOp,
    path: Utf8PathBuf,
    #[source]
    source: io::Error,
}

impl FsError {
    #[cold]
    pub(crate) fn new(op: FsOp, path: &Utf8Path, source: io::Error) -> Self {
        Self {
            op,
            path: path.to_owned(),
            source,
        }
    }

    crate::getters! {
        /// The operation that failed.
        pub fn op(&self) -> FsOp;
        /// The path it failed on.
        pub fn path(&self) -> &Utf8Path;
    }

    /// The kind of the underlying I/O error.
    pub fn io_kind(&self) -> io::ErrorKind {
        self.source.kind()
    }

    /// Whether the target already existed (from
    /// [`write_new_atomic`](crate::fs::write_new_atomic)).
    pub fn is_already_exists(&self) -> bool {
        self.source.kind() == io::ErrorKind::AlreadyExists
    }

    /// Whether the file did not exist.
    pub fn is_not_found(&self) -> bool {
        self.source.kind() == io::ErrorKind::NotFound
    }
}

/// A versioned JSON document could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct DocumentError {
    doc: &'static str,
    path: Option<Utf8PathBuf>,
    #[source]
    kind: DocumentErrorKind,
}

/// What went wrong with a versioned document; see [`DocumentError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentErrorKind {
    /// The file could not be read or written.
    #[error(transparent)]
    Fs(FsError),
    /// The document has no `schema` field, so it is not an Orcho document (or
    /// it is truncated before its first field).
    #[error("it has no `schema` field")]
    MissingSchema,
    /// The document was written by a newer Orcho. It is never parsed with this
    /// build's types, so it is never mis-read.
    #[error(
        "it was written with schema {found}, newer than {supported}, the newest this build reads; upgrade Orcho to read it"
    )]
    TooNew {
        /// The schema the document declares.
        found: SchemaVersion,
        /// The newest schema this build reads.
        supported: SchemaVersion,
    },
    /// The document is older than this build can read.
    #[error("it was written with schema {found}, older than {oldest}, the oldest this build reads")]
    TooOld {
        /// The schema the document declares.
        found: SchemaVersion,
        /// The oldest schema this build reads.
        oldest: SchemaVersion,
    },
    /// The bytes are not the JSON this document kind requires.
    #[error("it is not valid at line {line}, column {column}")]
    Malformed {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's error.
        #[source]
        source: Box<serde_json::Error>,
    },
    /// The document could not be encoded.
    #[error("it could not be encoded as JSON")]
    Encode(#[source] Box<serde_json::Error>),
    /// A file holds a newer schema than this build writes, so overwriting it
    /// would lose data.
    #[error(
        "the file on disk has schema {found}, newer than {writes}, which this build writes; refusing to overwrite it"
    )]
    WouldDowngrade {
        /// The schema of the file on disk.
        found: SchemaVersion,
        /// The schema this build writes.
        writes: SchemaVersion,
    },
}

impl DocumentError {
    #[cold]
    pub(crate) fn new(doc: &'static str, path: Option<&Utf8Path>, kind: DocumentErrorKind) -> Self {
        Self {
            doc,
            path: path.map(Utf8Path::to_owned),
            kind,
        }
    }

    fn render(&self) -> String {
        match &self.path {
            Some(path) => format!("cannot use {} `{path}`", self.doc),
            None => format!("cannot use {}", self.doc),
        }
    }

    /// The kind of document, for example `"run state"`.
    pub fn doc(&self) -> &'static str {
        self.doc
    }

    /// The file, when the document came from or was going to a file.
    pub fn path(&self) -> Option<&Utf8Path> {
        self.path.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &DocumentErrorKind {
        &self.kind
    }

    /// Whether the document was written by a newer Orcho.
    pub fn is_too_new(&self) -> bool {
        matches!(self.kind, DocumentErrorKind::TooNew { .. })
    }

    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.kind, DocumentErrorKind::Fs(e) if e.is_not_found())
    }
}

/// A journal could not be opened, appended to or read.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct JournalError {
    path: Utf8PathBuf,
    line: Option<usize>,
    #[source]
    kind: JournalErrorKind,
}

/// What went wrong with a journal; see [`JournalError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalErrorKind {
    /// The file could not be opened, read, written or synced.
    #[error(transparent)]
    Fs(FsError),
    /// A record could not be encoded.
    #[error("the record could not be encoded as JSON")]
    Encode(#[source] Box<serde_json::Error>),
    /// A record does not serialize with `schema` as its first field, so a
    /// reader could not probe its version.
    #[error("the record does not start with a `schema` field")]
    MissingSchema,
    /// A complete line before the last one is not a valid record. Unlike a
    /// torn last line this is not a crash artefact, so it is not skipped.
    #[error("a complete line is not a valid record")]
    CorruptLine(#[source] Box<serde_json::Error>),
}

impl JournalError {
    #[cold]
    pub(crate) fn new(path: &Utf8Path, line: Option<usize>, kind: JournalErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            line,
            kind,
        }
    }

    fn render(&self) -> String {
        match self.line {
            Some(line) => format!("journal `{}`, line {line}", self.path),
            None => format!("journal `{}`", self.path),
        }
    }

    crate::getters! {
        /// The journal file.
        pub fn path(&self) -> &Utf8Path;
        /// The 1-based line the error is about, if it is about one line.
        pub fn line(&self) -> Option<usize>;
        /// What went wrong.
        pub fn kind(&self) -> &JournalErrorKind;
    }
}

/// A lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct LockError {
    path: Utf8PathBuf,
    kind: LockErrorKind,
}

/// Why a lock could not be taken; see [`LockError::kind`].
#[derive(Debug)]
#[non_exhaustive]
pub enum LockErrorKind {
    /// The lock file could not be opened or locked.
    Io(io::Error),
    /// Another holder kept the lock for the whole timeout.
    Timeout {
        /// How long we waited.
        waited: Duration,
    },
}

impl LockError {
    #[cold]
    pub(crate) fn new(path: &Utf8Path, kind: LockErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            kind,
        }
    }

    fn render(&self) -> String {
        match &self.kind {
            LockErrorKind::Io(_) => format!("failed to lock `{}`", self.path),
            LockErrorKind::Timeout { waited } => format!(
                "timed out after {} ms waiting for the lock `{}`, which another holder keeps",
                waited.as_millis(),
                self.path
            ),
        }
    }

    crate::getters! {
        /// The lock file.
        pub fn path(&self) -> &Utf8Path;
        /// Why the lock could not be taken.
        pub fn kind(&self) -> &LockErrorKind;
    }

    /// Whether the timeout of a `*_timeout` call ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, LockErrorKind::Timeout { .. })
    }
}

impl std::error::Error for LockErrorKind {}

impl fmt::Display for LockErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => fmt::Display::fmt(e, f),
            Self::Timeout { waited } => write!(f, "timed out after {} ms", waited.as_millis()),
        }
    }
}

/// A durable store operation failed: the storage failures that every store
/// of Orcho shares (a file, a versioned document, a journal, a lock, a
/// directory listing), written once here so that each store's own error
/// type adds only what is its own.
///
/// It is transparent: its text and its [`source`](std::error::Error::source)
/// are those of the failure it wraps, so a chain reads the same whether a
/// store reports it directly or through this type.
///
/// ```
/// use orcho_core::{StoreError, fs::LockFile};
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("missing/run.lock"))?;
/// // A lock in a directory that does not exist cannot be taken.
/// let err: StoreError = LockFile::new(&path).lock_exclusive().unwrap_err().into();
/// assert!(matches!(err.kind(), orcho_core::StoreErrorKind::Lock(_)));
/// assert_eq!(err.to_string(), LockFile::new(&path).lock_exclusive().unwrap_err().to_string());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct StoreError(Box<StoreErrorKind>);

/// Which storage operation failed; see [`StoreError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// A file-system operation failed.
    #[error(transparent)]
    Fs(FsError),
    /// A versioned document could not be read or written.
    #[error(transparent)]
    Document(DocumentError),
    /// A journal could not be read or appended to.
    #[error(transparent)]
    Journal(JournalError),
    /// A lock could not be taken.
    #[error(transparent)]
    Lock(LockError),
    /// A directory of the store could not be listed.
    #[error("failed to list `{dir}`")]
    ListDir {
        /// The directory.
        dir: Utf8PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A storage backend other than the file system (a database) failed.
    #[error("{what}")]
    Backend {
        /// What failed, in a few words (never a password).
        what: String,
        /// Why, when the backend says.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// A directory of the store could not be listed.
    #[cold]
    pub fn list_dir(dir: &Utf8Path, source: io::Error) -> Self {
        Self(Box::new(StoreErrorKind::ListDir {
            dir: dir.to_owned(),
            source,
        }))
    }

    /// A storage backend other than the file system failed: `what` says
    /// what, in a few words (never a password), `source` why.
    #[cold]
    pub fn backend(
        what: impl Into<String>,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self(Box::new(StoreErrorKind::Backend {
            what: what.into(),
            source,
        }))
    }

    /// Which operation failed.
    pub fn kind(&self) -> &StoreErrorKind {
        &self.0
    }

    /// Whether a file or document that was read does not exist.
    pub fn is_not_found(&self) -> bool {
        match &*self.0 {
            StoreErrorKind::Fs(e) => e.is_not_found(),
            StoreErrorKind::Document(e) => e.is_not_found(),
            StoreErrorKind::Journal(_)
            | StoreErrorKind::Lock(_)
            | StoreErrorKind::ListDir { .. }
            | StoreErrorKind::Backend { .. } => false,
        }
    }

    /// Whether a document was written by a newer Orcho.
    pub fn is_too_new(&self) -> bool {
        matches!(&*self.0, StoreErrorKind::Document(e) if e.is_too_new())
    }
}

macro_rules! store_error_from {
    ($($source:ident => $variant:ident),* $(,)?) => {$(
        impl From<$source> for StoreError {
            #[cold]
            fn from(e: $source) -> Self {
                Self(Box::new(StoreErrorKind::$variant(e)))
            }
        }
    )*};
}

store_error_from!(FsError => Fs, DocumentError => Document, JournalError => Journal, LockError => Lock);

/// A value read from text or disk is out of its domain (a negative cost, a
/// timestamp out of range, an unknown spelling).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{value}`: {expected}")]
pub struct ValueError {
    what: &'static str,
    value: String,
    expected: std::borrow::Cow<'static, str>,
}

impl ValueError {
    #[cold]
    pub(crate) fn new(
        what: &'static str,
        value: impl fmt::Display,
        expected: &'static str,
    ) -> Self {
        Self {
            what,
            value: value.to_string().chars().take(SHOWN_CHARS).collect(),
            expected: expected.into(),
        }
    }

    /// `value` is none of `spellings`: "expected `a`, `b` or `c`".
    #[cold]
    pub fn one_of(what: &'static str, value: &str, spellings: &[&str]) -> Self {
        Self {
            what,
            value: value.chars().take(SHOWN_CHARS).collect(),
            expected: format!("expected {}", crate::spelling::list(spellings)).into(),
        }
    }

    /// What kind of value was refused, for example `"verdict"`.
    pub fn what(&self) -> &'static str {
        self.what
    }
}

/// Renders an error and its whole source chain on one line:
/// `top: caused by: middle: caused by: root`.
///
/// A cause that says nothing the line does not say already (the same
/// message again, as an error that wraps another and shows its message
/// does) is left out.
///
/// This is the one helper hosts and tests use to show errors, so that every
/// message reads the same way.
///
/// ```
/// use orcho_core::{error_chain, RunId};
///
/// let err = "a/b".parse::<RunId>().unwrap_err();
/// assert_eq!(error_chain(&err), "invalid run id `a/b`: contains `/`, which ids may not contain");
/// ```
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !said.is_empty() && !out.ends_with(said.as_str()) {
            out.push_str(": caused by: ");
            out.push_str(&said);
        }
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod chain_tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Said(String, #[source] Option<Box<Self>>);

    #[test]
    fn a_cause_that_repeats_its_error_is_said_once() {
        let root = Said("the advisor failed".to_owned(), None);
        let top = Said("the advisor failed".to_owned(), Some(Box::new(root)));
        assert_eq!(error_chain(&top), "the advisor failed");
        let root = Said("timed out".to_owned(), None);
        let middle = Said(
            "the advisor failed: timed out".to_owned(),
            Some(Box::new(root)),
        );
        let top = Said("cannot advise".to_owned(), Some(Box::new(middle)));
        assert_eq!(
            error_chain(&top),
            "cannot advise: caused by: the advisor failed: timed out"
        );
    }
}
