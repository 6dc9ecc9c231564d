//! The receipt store on disk.

use std::{fmt, io, sync::LazyLock};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Digest, DocumentError, DocumentErrorKind, SchemaVersion, Timestamp, fs,
    schema::{self, Document},
};

use crate::{
    CommandName, CommandReceipt, EnvName, EnvReceipt, InvalidReason, ReceiptError,
    ReceiptErrorKind,
    format::{CommandReceiptV1, EnvReceiptV1},
};

/// The schema of receipt documents this build writes and the newest it
/// reads.
///
/// Changelog:
/// - 1: first version.
/// - 2: command receipts record the resolved `program`; environment
///   digests bind the declared variables only
///   ([`ENVIRONMENT_CONTEXT`](crate::ENVIRONMENT_CONTEXT)). Schema 1 is
///   still read.
/// - 3: `key`, the id of the key that signed a receipt.
/// - 4: `submodules` in command receipts and `commit` in their
///   dependencies. Schemas 1 to 3 are still read.
pub const RECEIPT_SCHEMA: SchemaVersion = SchemaVersion::new(6);

/// The `derive_key` context of command-receipt digests.
pub const COMMAND_RECEIPT_CONTEXT: &str = "orcho command receipt v1";
/// The `derive_key` context of environment-receipt digests.
pub const ENV_RECEIPT_CONTEXT: &str = "orcho environment receipt v1";

const DIGEST_LINE: &[u8] = b"\n  \"digest\": ";
const ENVIRONMENTS_DIR: &str = "_environments";
pub(crate) const EXPLORATORY_DIR: &str = "_exploratory";

/// The variable a host reads its receipt secret from (see
/// [`ReceiptKey::derive_from_secret`]). No command Orcho starts ever gets
/// it: [`BaseEnv::with_host_vars`](crate::exec::BaseEnv::with_host_vars)
/// skips it, and a contract that names it in `env`, `inherit` or
/// `secrets` is refused.
pub const RECEIPT_KEY_VAR: &str = "ORCHO_RECEIPT_KEY";

/// The variable a host may take its attestation signing key from (base64
/// of the Ed25519 seed). Like [`RECEIPT_KEY_VAR`], no command is ever
/// given it.
pub const SIGNING_KEY_VAR: &str = "ORCHO_SIGNING_KEY";

/// Whether `name` is a variable that holds one of Orcho's keys.
pub(crate) fn is_key_var(name: &str) -> bool {
    name == RECEIPT_KEY_VAR || name == SIGNING_KEY_VAR
}

/// The host's key for receipt MACs.
///
/// Supply it from outside the checkout (a file in the host's config
/// directory, a CI secret). Its `Debug` form never shows the key.
///
/// ```
/// use orcho_receipts::ReceiptKey;
///
/// let key = ReceiptKey::derive_from_secret(b"a long random secret from the host");
/// assert_eq!(format!("{key:?}"), "ReceiptKey(..)");
/// ```
#[derive(Clone)]
pub struct ReceiptKey([u8; 32]);

impl ReceiptKey {
    /// A key from 32 random bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key derived from a secret of any length.
    pub fn derive_from_secret(secret: &[u8]) -> Self {
        Self(blake3::derive_key("orcho receipt mac key v1", secret))
    }

    /// The key the fingerprint cache under the store is sealed with
    /// ([`Fingerprinter::with_cache_key`](crate::fingerprint::Fingerprinter::with_cache_key)),
    /// derived from this one for that use alone.
    pub fn cache_key(&self) -> [u8; 32] {
        blake3::derive_key("orcho fingerprint cache seal v1", &self.0)
    }

    /// A key derived from this one for the use `context` names alone (a
    /// hardcoded, unique string: `"orcho weakening acknowledgement seal
    /// v1"`), for what a host seals beside the receipts.
    pub fn derive(&self, context: &'static str) -> [u8; 32] {
        blake3::derive_key(context, &self.0)
    }

    /// A short public name of the key (16 hex digits), derived one way from
    /// it: receipts record it beside their MAC, so a receipt signed with
    /// another key is told apart from one forged or edited. It reveals
    /// nothing of the key.
    ///
    /// ```
    /// use orcho_receipts::ReceiptKey;
    ///
    /// let a = ReceiptKey::derive_from_secret(b"one secret");
    /// let b = ReceiptKey::derive_from_secret(b"another secret");
    /// assert_eq!(a.id().len(), 16);
    /// assert_ne!(a.id(), b.id());
    /// ```
    pub fn id(&self) -> String {
        let id = blake3::derive_key("orcho receipt key id v1", &self.0);
        blake3::Hash::from_bytes(id).to_hex()[..16].to_owned()
    }

    fn mac(&self, context: &str, body: &[u8]) -> blake3::Hash {
        blake3::Hasher::new_keyed(&self.0)
            .update(context.as_bytes())
            .update(&[0])
            .update(body)
            .finalize()
    }
}

impl fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReceiptKey(..)")
    }
}

/// What reading one receipt found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadedReceipt<T> {
    /// There is no receipt.
    Missing,
    /// There is a file, but it is not a receipt this build can trust.
    Invalid(InvalidReason),
    /// A verified receipt.
    Valid(T),
}

/// A receipt that was written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredReceipt {
    /// The `latest.json` it replaced.
    pub latest: Utf8PathBuf,
    /// Its immutable history file.
    pub history: Utf8PathBuf,
    /// Its digest.
    pub digest: Digest,
}

/// The receipt store on disk.
///
/// Layout under the store directory (default `.orcho/` in the checkout):
///
/// ```text
/// receipts/<command>/latest.json            the latest receipt of the command
/// receipts/<command>/history/<time>.json    every execution, created exclusively, never overwritten
/// receipts/<command>/logs/<time>/stdout.log full, redacted output of that execution
/// receipts/<command>/logs/<time>/stderr.log
/// receipts/_environments/<env>/latest.json  environment-assertion receipts, same scheme
/// receipts/_exploratory/log.jsonl           the exploratory-command log (not authoritative)
/// cache/fingerprint/<root key>.bin          stat caches of fingerprinted roots
/// ```
///
/// Every receipt is a JSON document with `schema` first
/// ([`RECEIPT_SCHEMA`]), written atomically. Its last fields are `digest`,
/// the blake3 `derive_key` digest of the exact bytes of the document before
/// the `digest` line, and, when the host configured a [`ReceiptKey`], `mac`,
/// a keyed blake3 hash of the same bytes (the document then also names the
/// key by its [`id`](ReceiptKey::id), inside those bytes). A receipt edited
/// by hand fails its digest; one forged with a recomputed digest fails its
/// MAC; one written with another key, or with none, is told apart by its key
/// id. Each classifies as [`Invalid`](crate::ReceiptStatus::Invalid). Keep
/// the key outside the checkout and the store, where the agent cannot read
/// it.
///
/// The receipts of one checkout.
///
/// ```
/// use orcho_receipts::{CommandName, LoadedReceipt, ReceiptStore};
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// let store = ReceiptStore::new(root.join(".orcho"));
/// let name: CommandName = "test".parse()?;
/// assert_eq!(store.load_command_receipt(&name), LoadedReceipt::Missing);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReceiptStore {
    dir: Utf8PathBuf,
    key: Option<ReceiptKey>,
}

impl ReceiptStore {
    /// The store in `dir` (created when first written to).
    pub fn new(dir: impl Into<Utf8PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            key: None,
        }
    }

    /// Signs new receipts with `key`, and classifies receipts without a
    /// valid MAC for it as invalid.
    #[must_use]
    pub fn with_key(mut self, key: ReceiptKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The store directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The key receipts are signed with, when the store has one.
    pub fn key(&self) -> Option<&ReceiptKey> {
        self.key.as_ref()
    }

    /// `receipts/` under the store directory, as the store's layout names
    /// it.
    pub fn receipts_dir(&self) -> Utf8PathBuf {
        orcho_core::layout::StoreDir::new(&self.dir).receipts()
    }

    /// The directory of a command's receipts and logs.
    pub fn command_dir(&self, name: &CommandName) -> Utf8PathBuf {
        self.receipts_dir().join(name.as_str())
    }

    /// The directory of an environment's receipts.
    pub fn environment_dir(&self, name: &EnvName) -> Utf8PathBuf {
        self.receipts_dir()
            .join(ENVIRONMENTS_DIR)
            .join(name.as_str())
    }

    /// The directory of fingerprint stat caches.
    pub fn cache_dir(&self) -> Utf8PathBuf {
        orcho_core::layout::StoreDir::new(&self.dir)
            .cache()
            .join("fingerprint")
    }

    /// Reserves a fresh directory for the logs of a run that starts at `at`
    /// and returns it (`logs/<time>`, with a suffix when taken).
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub(crate) fn reserve_logs(
        &self,
        name: &CommandName,
        at: Timestamp,
    ) -> Result<Utf8PathBuf, ReceiptError> {
        let logs = self.command_dir(name).join("logs");
        fs::create_dir_all(&logs)
            .map_err(|e| ReceiptError::command(name.as_str(), ReceiptErrorKind::Fs(e)))?;
        let stamp = at.compact_millis();
        for n in 1..=10_000u32 {
            let id = if n == 1 {
                stamp.clone()
            } else {
                format!("{stamp}-{n}")
            };
            let dir = logs.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(ReceiptError::command(
                        name.as_str(),
                        ReceiptErrorKind::io(dir, e),
                    ));
                }
            }
        }
        Err(ReceiptError::command(
            name.as_str(),
            ReceiptErrorKind::io(logs, io::ErrorKind::AlreadyExists.into()),
        ))
    }

    /// Removes the log directories of every command that were last changed
    /// before `before`, except those the command's latest receipt points at
    /// (its proof stays whole). Receipts themselves, history included, are
    /// kept. With `dry_run`, nothing is removed. Returns the directories
    /// removed (or that would be).
    ///
    /// # Errors
    ///
    /// When a directory cannot be listed or removed.
    pub fn prune_logs(
        &self,
        before: std::time::SystemTime,
        dry_run: bool,
    ) -> Result<Vec<Utf8PathBuf>, ReceiptError> {
        let io = |path: &Utf8Path, source: io::Error| {
            ReceiptError::command("", ReceiptErrorKind::io(path.to_owned(), source))
        };
        let root = self.receipts_dir();
        let commands = match root.read_dir_utf8() {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&root, e)),
        };
        let mut removed = Vec::new();
        for command in commands {
            let command = command.map_err(|e| io(&root, e))?;
            let Ok(name) = command.file_name().parse::<CommandName>() else {
                continue;
            };
            let logs = command.path().join("logs");
            let Ok(entries) = logs.read_dir_utf8() else {
                continue;
            };
            // The logs the latest receipt names, relative to the store.
            let kept: Vec<Utf8PathBuf> = match self.load_command_receipt(&name) {
                LoadedReceipt::Valid(receipt) => [&receipt.stdout.path, &receipt.stderr.path]
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.parent().map(Utf8Path::to_owned))
                    .collect(),
                _ => Vec::new(),
            };
            for entry in entries {
                let entry = entry.map_err(|e| io(&logs, e))?;
                let path = entry.path().to_owned();
                let relative = path.strip_prefix(&self.dir).unwrap_or(&path);
                if kept.iter().any(|k| k == relative) {
                    continue;
                }
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|modified| modified < before);
                if !old {
                    continue;
                }
                if !dry_run {
                    std::fs::remove_dir_all(&path).map_err(|e| io(&path, e))?;
                }
                removed.push(path);
            }
        }
        removed.sort();
        Ok(removed)
    }

    /// Writes a command receipt: a new history file, then `latest.json`.
    ///
    /// # Errors
    ///
    /// A [`ReceiptError`] when a file cannot be written, or when
    /// `latest.json` holds a receipt from a newer schema (it is never
    /// overwritten by an older Orcho).
    pub fn write_command_receipt(
        &self,
        receipt: &CommandReceipt,
    ) -> Result<StoredReceipt, ReceiptError> {
        let mut doc = CommandReceiptV1::from(receipt);
        doc.key = self.key.as_ref().map(ReceiptKey::id);
        let at = |kind| ReceiptError::command(receipt.command.as_str(), kind);
        let (bytes, digest) = self.sign(&doc, COMMAND_RECEIPT_CONTEXT).map_err(at)?;
        let dir = self.command_dir(&receipt.command);
        self.write_signed(&dir, receipt.started_at, &bytes, digest)
            .map_err(at)
    }

    /// Writes an environment-assertion receipt.
    ///
    /// # Errors
    ///
    /// As [`write_command_receipt`](Self::write_command_receipt).
    pub fn write_env_receipt(&self, receipt: &EnvReceipt) -> Result<StoredReceipt, ReceiptError> {
        let mut doc = EnvReceiptV1::from(receipt);
        doc.key = self.key.as_ref().map(ReceiptKey::id);
        let at =
            |kind| ReceiptError::new(format_args!("environment `{}`", receipt.environment), kind);
        let (bytes, digest) = self.sign(&doc, ENV_RECEIPT_CONTEXT).map_err(at)?;
        let dir = self.environment_dir(&receipt.environment);
        self.write_signed(&dir, receipt.checked_at, &bytes, digest)
            .map_err(at)
    }

    fn write_signed(
        &self,
        dir: &Utf8Path,
        at: Timestamp,
        bytes: &[u8],
        digest: Digest,
    ) -> Result<StoredReceipt, ReceiptErrorKind> {
        let history_dir = dir.join("history");
        fs::create_dir_all(&history_dir).map_err(ReceiptErrorKind::Fs)?;
        let latest = dir.join("latest.json");
        if let Ok(existing) = std::fs::read(&latest)
            && let Ok(found) = probe(&existing, &latest)
            && found > RECEIPT_SCHEMA
        {
            return Err(ReceiptErrorKind::NewerOnDisk {
                path: latest,
                found,
            });
        }
        let stamp = at.compact_millis();
        let mut history = None;
        for n in 1..=10_000u32 {
            let path = if n == 1 {
                history_dir.join(format!("{stamp}.json"))
            } else {
                history_dir.join(format!("{stamp}-{n}.json"))
            };
            match fs::write_new_atomic(&path, bytes) {
                Ok(()) => {
                    history = Some(path);
                    break;
                }
                Err(e) if e.is_already_exists() => {}
                Err(e) => return Err(ReceiptErrorKind::Fs(e)),
            }
        }
        let history = history.ok_or_else(|| {
            ReceiptErrorKind::io(history_dir, io::ErrorKind::AlreadyExists.into())
        })?;
        fs::write_atomic(&latest, bytes).map_err(ReceiptErrorKind::Fs)?;
        Ok(StoredReceipt {
            latest,
            history,
            digest,
        })
    }

    /// Encodes a document and fills in its digest and MAC.
    fn sign<T: Document>(
        &self,
        doc: &T,
        context: &str,
    ) -> Result<(Vec<u8>, Digest), ReceiptErrorKind> {
        let encoded = schema::encode(doc).map_err(ReceiptErrorKind::Document)?;
        let at = rfind(&encoded, DIGEST_LINE).ok_or(ReceiptErrorKind::Unsigned)?;
        let body = &encoded[..at];
        let digest = Digest::derive(context, body);
        let mut out = Vec::with_capacity(encoded.len() + 96);
        out.extend_from_slice(body);
        out.extend_from_slice(DIGEST_LINE);
        out.extend_from_slice(format!("\"{digest}\"").as_bytes());
        if let Some(key) = &self.key {
            let mac = Digest::from_blake3(key.mac(context, body));
            out.extend_from_slice(format!(",\n  \"mac\": \"{mac}\"").as_bytes());
        }
        out.extend_from_slice(b"\n}\n");
        Ok((out, digest))
    }

    /// Reads and verifies the latest receipt of a command. Never fails and
    /// never panics: whatever is on disk is [`Missing`](LoadedReceipt::Missing),
    /// [`Invalid`](LoadedReceipt::Invalid) or [`Valid`](LoadedReceipt::Valid).
    pub fn load_command_receipt(&self, name: &CommandName) -> LoadedReceipt<CommandReceipt> {
        self.load_latest(name, &mut LoadBuffers::default())
    }

    /// [`load_command_receipt`](Self::load_command_receipt) with buffers
    /// reused from one receipt to the next: classification loads thousands
    /// in a row, and the path and file buffers are then allocated once.
    pub(crate) fn load_latest(
        &self,
        name: &CommandName,
        buffers: &mut LoadBuffers,
    ) -> LoadedReceipt<CommandReceipt> {
        let path = &mut buffers.path;
        path.clear();
        path.push_str(self.dir.as_str());
        if !path.is_empty() && !path.ends_with('/') {
            path.push('/');
        }
        path.push_str("receipts/");
        path.push_str(name.as_str());
        path.push_str("/latest.json");
        let path = Utf8Path::new(path.as_str());
        match read_into(path, &mut buffers.bytes) {
            Ok(true) => {}
            Ok(false) => return LoadedReceipt::Missing,
            Err(reason) => return LoadedReceipt::Invalid(reason),
        }
        self.verify_command_receipt(&buffers.bytes, path, name)
    }

    /// Reads and verifies a command receipt file (for example one from the
    /// history) that must belong to `name`.
    pub fn load_command_receipt_file(
        &self,
        path: &Utf8Path,
        name: &CommandName,
    ) -> LoadedReceipt<CommandReceipt> {
        let mut bytes = Vec::new();
        match read_into(path, &mut bytes) {
            Ok(true) => {}
            Ok(false) => return LoadedReceipt::Missing,
            Err(reason) => return LoadedReceipt::Invalid(reason),
        }
        self.verify_command_receipt(&bytes, path, name)
    }

    fn verify_command_receipt(
        &self,
        bytes: &[u8],
        path: &Utf8Path,
        name: &CommandName,
    ) -> LoadedReceipt<CommandReceipt> {
        match self.verify::<CommandReceiptV1>(bytes, path, COMMAND_RECEIPT_CONTEXT) {
            Ok(doc) if doc.command != *name => {
                LoadedReceipt::Invalid(InvalidReason::WrongSubject {
                    found: doc.command.to_string(),
                })
            }
            Ok(doc) => LoadedReceipt::Valid(doc.into()),
            Err(reason) => LoadedReceipt::Invalid(reason),
        }
    }

    /// Reads and verifies the latest assertion receipt of an environment.
    pub fn load_env_receipt(&self, name: &EnvName) -> LoadedReceipt<EnvReceipt> {
        let path = self.environment_dir(name).join("latest.json");
        let bytes = match read(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return LoadedReceipt::Missing,
            Err(reason) => return LoadedReceipt::Invalid(reason),
        };
        match self.verify::<EnvReceiptV1>(&bytes, &path, ENV_RECEIPT_CONTEXT) {
            Ok(doc) if doc.environment != *name => {
                LoadedReceipt::Invalid(InvalidReason::WrongSubject {
                    found: doc.environment.to_string(),
                })
            }
            Ok(doc) => LoadedReceipt::Valid(doc.into()),
            Err(reason) => LoadedReceipt::Invalid(reason),
        }
    }

    /// The history files of a command, oldest first.
    ///
    /// # Errors
    ///
    /// When the history directory exists but cannot be read.
    pub fn history(&self, name: &CommandName) -> Result<Vec<Utf8PathBuf>, ReceiptError> {
        let dir = self.command_dir(name).join("history");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(ReceiptError::command(
                    name.as_str(),
                    ReceiptErrorKind::io(dir, e),
                ));
            }
        };
        let mut out: Vec<Utf8PathBuf> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .map(|n| dir.join(n))
            .collect();
        out.sort();
        Ok(out)
    }

    fn verify<T: Document + Sealed>(
        &self,
        bytes: &[u8],
        path: &Utf8Path,
        context: &str,
    ) -> Result<T, InvalidReason> {
        let doc: T = decode(bytes, path)?;
        let Seal { digest, mac, key } = doc.seal();
        let at = rfind(bytes, DIGEST_LINE).ok_or(InvalidReason::DigestMismatch)?;
        let body = &bytes[..at];
        let expected = hasher_for(context).update(body).finalize();
        if expected != blake3::Hash::from_bytes(*digest.as_bytes()) {
            return Err(InvalidReason::DigestMismatch);
        }
        if let Some(ours) = &self.key {
            let Some(mac) = mac else {
                return Err(InvalidReason::MissingMac);
            };
            // `blake3::Hash` compares in constant time.
            if ours.mac(context, body) != blake3::Hash::from_bytes(*mac.as_bytes()) {
                let expected = ours.id();
                return Err(match key {
                    Some(found) if found != expected => InvalidReason::OtherKey {
                        found: found.to_owned(),
                        expected,
                    },
                    _ => InvalidReason::MacMismatch,
                });
            }
        }
        Ok(doc)
    }
}

/// The seal of a receipt document: its digest, MAC and key id.
pub(crate) struct Seal<'a> {
    pub(crate) digest: Digest,
    pub(crate) mac: Option<Digest>,
    pub(crate) key: Option<&'a str>,
}

/// A receipt document, which carries a [`Seal`].
pub(crate) trait Sealed {
    fn seal(&self) -> Seal<'_>;
}

/// A fresh hasher in `derive_key` mode for one of the receipt contexts,
/// cloned from one made once (deriving the context key costs a compression).
fn hasher_for(context: &str) -> blake3::Hasher {
    static COMMAND: LazyLock<blake3::Hasher> =
        LazyLock::new(|| blake3::Hasher::new_derive_key(COMMAND_RECEIPT_CONTEXT));
    static ENV: LazyLock<blake3::Hasher> =
        LazyLock::new(|| blake3::Hasher::new_derive_key(ENV_RECEIPT_CONTEXT));
    match context {
        COMMAND_RECEIPT_CONTEXT => COMMAND.clone(),
        ENV_RECEIPT_CONTEXT => ENV.clone(),
        other => blake3::Hasher::new_derive_key(other),
    }
}

fn read(path: &Utf8Path) -> Result<Option<Vec<u8>>, InvalidReason> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(InvalidReason::Unreadable {
            message: e.kind().to_string(),
        }),
    }
}

/// Reads a whole file into `buf` (cleared first): `false` when it does not
/// exist. Unlike [`std::fs::read`] it keeps `buf`'s allocation and does not
/// `stat` the file to size it.
fn read_into(path: &Utf8Path, buf: &mut Vec<u8>) -> Result<bool, InvalidReason> {
    buf.clear();
    let unreadable = |e: io::Error| InvalidReason::Unreadable {
        message: e.kind().to_string(),
    };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(unreadable(e)),
    };
    if buf.capacity() == 0 {
        buf.reserve(INITIAL_READ);
    }
    io::Read::read_to_end(&mut file, buf).map_err(unreadable)?;
    Ok(true)
}

/// The first allocation of a receipt read buffer: most receipts fit.
const INITIAL_READ: usize = 8 * 1024;

/// Buffers reused by [`ReceiptStore::load_latest`].
#[derive(Debug, Default)]
pub(crate) struct LoadBuffers {
    path: String,
    bytes: Vec<u8>,
}

/// The last occurrence of `needle`, which starts with a newline: only line
/// starts are compared.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let mut end = haystack.len();
    while let Some(at) = haystack[..end].iter().rposition(|&b| b == first) {
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        end = at;
    }
    None
}

/// The schema of a document, through a quick look at the layout every
/// receipt is written with, else the full probe of `orcho-core`.
fn probe(bytes: &[u8], path: &Utf8Path) -> Result<SchemaVersion, DocumentError> {
    if let Some(version) = quick_schema(bytes) {
        return Ok(version);
    }
    schema::probe("receipt", Some(path), bytes)
}

fn quick_schema(bytes: &[u8]) -> Option<SchemaVersion> {
    let rest = bytes.strip_prefix(b"{\n  \"schema\": ")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || !matches!(rest.get(digits), Some(b',' | b'\n')) {
        return None;
    }
    let text = std::str::from_utf8(&rest[..digits]).ok()?;
    text.parse().ok().map(SchemaVersion::new)
}

/// Decodes a receipt document: version check first (refusing newer schemas
/// before looking at anything else), then the full parse.
fn decode<T: Document>(bytes: &[u8], path: &Utf8Path) -> Result<T, InvalidReason> {
    match quick_schema(bytes) {
        Some(found) => {
            schema::check_readable::<T>(found, Some(path))
                .map_err(|e| InvalidReason::from_document(&e))?;
            serde_json::from_slice(bytes).map_err(|e| InvalidReason::Malformed {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })
        }
        None => {
            schema::decode::<T>(bytes, Some(path)).map_err(|e| InvalidReason::from_document(&e))
        }
    }
}

impl InvalidReason {
    pub(crate) fn from_document(e: &DocumentError) -> Self {
        match e.kind() {
            DocumentErrorKind::MissingSchema => Self::MissingSchema,
            DocumentErrorKind::TooNew { found, supported } => Self::TooNew {
                found: *found,
                supported: *supported,
            },
            DocumentErrorKind::TooOld { found, oldest } => Self::TooOld {
                found: *found,
                oldest: *oldest,
            },
            DocumentErrorKind::Malformed {
                line,
                column,
                source,
            } => Self::Malformed {
                line: *line,
                column: *column,
                message: source.to_string(),
            },
            DocumentErrorKind::Fs(e) => Self::Unreadable {
                message: e.io_kind().to_string(),
            },
            _ => Self::Unreadable {
                message: orcho_core::error_chain(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfind_finds_the_last_line_start() {
        assert_eq!(rfind(b"a\n  x\n  x", b"\n  x"), Some(5));
        assert_eq!(rfind(b"\n  x", b"\n  x"), Some(0));
        assert_eq!(rfind(b"\n  y", b"\n  x"), None);
        assert_eq!(rfind(b"", b"\n  x"), None);
        assert_eq!(rfind(b"\n ", b"\n  x"), None);
    }

    #[test]
    fn latest_paths() {
        let name: CommandName = "test".parse().unwrap();
        for dir in ["", ".orcho", ".orcho/", "/abs/store"] {
            let store = ReceiptStore::new(dir);
            let LoadedReceipt::Missing = store.load_command_receipt(&name) else {
                panic!("{dir}");
            };
            assert_eq!(
                store.command_dir(&name).join("latest.json"),
                Utf8PathBuf::from(dir).join("receipts/test/latest.json")
            );
        }
    }

    #[test]
    fn quick_schema_only_accepts_the_written_layout() {
        assert_eq!(
            quick_schema(b"{\n  \"schema\": 1,\n"),
            Some(SchemaVersion::new(1))
        );
        assert_eq!(
            quick_schema(b"{\n  \"schema\": 12\n}"),
            Some(SchemaVersion::new(12))
        );
        assert_eq!(quick_schema(b"{\"schema\": 1,"), None);
        assert_eq!(quick_schema(b"{\n  \"schema\": 1x"), None);
        assert_eq!(quick_schema(b"{\n  \"schema\": 99999999999,"), None);
        assert_eq!(quick_schema(b""), None);
    }
}
