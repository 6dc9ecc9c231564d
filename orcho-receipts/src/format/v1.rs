//! Versions 1 to 4 of the receipt documents (2 adds `program`, 3 `key`, 4
//! `submodules` and each dependency's `commit`).
//!
//! Changelog of [`RECEIPT_SCHEMA`](crate::RECEIPT_SCHEMA):
//! - 1: first version.
//! - 2: `program` in command receipts.
//! - 3: `key`, the id of the key that signed the receipt, when one did.
//! - 4: `submodules` (path → work-tree fingerprint) in command receipts, and
//!   `commit` in their dependencies, when there are any.
//! - 5: `tests`, what the command's test runner reported, when one was
//!   recognised; `allow_empty` in the spec, when set.
//! - 6: `bound`, the files outside the subject the command ran or read
//!   (path → kind, digest, lstat data), and `written_during_run`, the files
//!   of its subject written while it ran, when there were any; `not_run`
//!   in `tests`, what did not run by the runner's word, when any did not.

use std::{collections::BTreeMap, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{Digest, DigestAlgo, SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Deserializer, Serialize};

use crate::{
    AssertionResult, CommandName, CommandReceipt, CommandSpec, DependencyFingerprint, EnvName,
    EnvReceipt, ExitStatus, HumanDuration, LogRecord, RECEIPT_SCHEMA, TestCount,
    store::{Seal, Sealed},
};

/// A command receipt on disk. `digest` and `mac` come last: they cover the
/// exact bytes of the document before the `digest` line.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandReceiptV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) command: CommandName,
    pub(crate) spec: SpecV1,
    #[serde(deserialize_with = "digest")]
    pub(crate) spec_digest: Digest,
    pub(crate) environment: EnvName,
    #[serde(deserialize_with = "digest")]
    pub(crate) environment_digest: Digest,
    pub(crate) inherited_env: BTreeMap<String, String>,
    pub(crate) program: Option<Utf8PathBuf>,
    pub(crate) working_dir: Utf8PathBuf,
    #[serde(deserialize_with = "digest")]
    pub(crate) subject_before: Digest,
    #[serde(deserialize_with = "digest")]
    pub(crate) subject_after: Digest,
    #[serde(
        default,
        deserialize_with = "digest_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub(crate) submodules: BTreeMap<Utf8PathBuf, Digest>,
    pub(crate) dependencies: Vec<DependencyV1>,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Timestamp,
    pub(crate) duration_ms: u64,
    pub(crate) exit: ExitV1,
    pub(crate) assertions: Vec<AssertionV1>,
    pub(crate) stdout: LogV1,
    pub(crate) stderr: LogV1,
    pub(crate) tests: Option<TestsV1>,
    pub(crate) bound: Option<BTreeMap<Utf8PathBuf, BoundV1>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) written_during_run: Vec<Utf8PathBuf>,
    /// The [`id`](crate::ReceiptKey::id) of the key of `mac`.
    pub(crate) key: Option<String>,
    #[serde(deserialize_with = "digest")]
    pub(crate) digest: Digest,
    #[serde(default, deserialize_with = "optional_digest")]
    pub(crate) mac: Option<Digest>,
}

/// A bound file on disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BoundV1 {
    kind: String,
    #[serde(deserialize_with = "digest")]
    digest: Digest,
    stat: [u64; 5],
}

impl From<&crate::BoundFile> for BoundV1 {
    fn from(b: &crate::BoundFile) -> Self {
        Self {
            kind: b.kind.as_str().to_owned(),
            digest: b.digest,
            stat: b.stat,
        }
    }
}

/// An environment-assertion receipt on disk.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvReceiptV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) environment: EnvName,
    #[serde(deserialize_with = "digest")]
    pub(crate) environment_digest: Digest,
    pub(crate) checked_at: Timestamp,
    pub(crate) results: Vec<AssertionV1>,
    /// The [`id`](crate::ReceiptKey::id) of the key of `mac`.
    pub(crate) key: Option<String>,
    #[serde(deserialize_with = "digest")]
    pub(crate) digest: Digest,
    #[serde(default, deserialize_with = "optional_digest")]
    pub(crate) mac: Option<Digest>,
}

/// The document and seal of receipt types, whose last fields are `key`,
/// `digest` and `mac`.
macro_rules! sealed_receipts {
    ($($ty:ty => $kind:literal),+ $(,)?) => {$(
        impl Document for $ty {
            const KIND: &'static str = $kind;
            const SCHEMA: SchemaVersion = RECEIPT_SCHEMA;
        }

        impl Sealed for $ty {
            fn seal(&self) -> Seal<'_> {
                Seal {
                    digest: self.digest,
                    mac: self.mac,
                    key: self.key.as_deref(),
                }
            }
        }
    )+};
}

sealed_receipts!(
    CommandReceiptV1 => "command receipt",
    EnvReceiptV1 => "environment receipt",
);

/// One line of the exploratory-command log.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExploratoryV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) at: Timestamp,
    pub(crate) argv: Vec<String>,
    pub(crate) exit_code: Option<i32>,
    /// Where it ran (absent in lines written before it was kept).
    #[serde(default)]
    pub(crate) cwd: Option<Utf8PathBuf>,
    pub(crate) authoritative: bool,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpecV1 {
    argv: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    environment: Option<EnvName>,
    timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    allow_empty: bool,
}

/// What a command's test runner reported (schema 5).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestsV1 {
    runners: Vec<String>,
    passed: u64,
    failed: u64,
    skipped: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    passed_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    failed_names: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    not_run: BTreeMap<String, u64>,
}

impl From<&TestCount> for TestsV1 {
    fn from(t: &TestCount) -> Self {
        Self {
            runners: t.runners.clone(),
            passed: t.passed,
            failed: t.failed,
            skipped: t.skipped,
            passed_names: t.passed_names.clone(),
            failed_names: t.failed_names.clone(),
            not_run: t.not_run.clone(),
        }
    }
}

impl From<TestsV1> for TestCount {
    fn from(t: TestsV1) -> Self {
        Self {
            runners: t.runners,
            passed: t.passed,
            failed: t.failed,
            skipped: t.skipped,
            passed_names: t.passed_names,
            failed_names: t.failed_names,
            not_run: t.not_run,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DependencyV1 {
    name: EnvName,
    path: Utf8PathBuf,
    #[serde(deserialize_with = "optional_digest")]
    fingerprint: Option<Digest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ExitV1 {
    Exited {
        code: i32,
    },
    Signaled {
        signal: i32,
        /// The signal's name, for readers; ignored when read back.
        name: Option<String>,
    },
    TimedOut {
        after_ms: u64,
    },
    Cancelled,
    SpawnFailed {
        message: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AssertionV1 {
    description: String,
    passed: bool,
    detail: String,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogV1 {
    path: Option<Utf8PathBuf>,
    #[serde(default, deserialize_with = "optional_digest")]
    digest: Option<Digest>,
    bytes: u64,
    tail: String,
}

/// Reads a digest with a fast path for the canonical `blake3:<64 lower-case
/// hex>` form (thousands of receipts are classified at a time); anything else
/// goes through [`Digest`]'s own parser, which gives the error.
fn digest<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
    let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
    parse_digest(&text)
}

fn optional_digest<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Digest>, D::Error> {
    let text = <Option<std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
    text.map(|t| parse_digest(&t)).transpose()
}

fn digest_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<Utf8PathBuf, Digest>, D::Error> {
    let map = <BTreeMap<Utf8PathBuf, std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
    map.into_iter()
        .map(|(path, text)| Ok((path, parse_digest(&text)?)))
        .collect()
}

fn parse_digest<E: serde::de::Error>(text: &str) -> Result<Digest, E> {
    /// The value of each lower-case hex digit, `0xff` for any other byte.
    const NIBBLE: [u8; 256] = {
        let mut table = [0xff; 256];
        let mut i = 0;
        while i < 10 {
            table[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            table[b'a' as usize + i] = 10 + i as u8;
            i += 1;
        }
        table
    };
    let fast = text
        .strip_prefix("blake3:")
        .filter(|hex| hex.len() == 64)
        .and_then(|hex| {
            let mut bytes = [0u8; 32];
            let mut bad = 0u8;
            for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
                let (hi, lo) = (NIBBLE[usize::from(pair[0])], NIBBLE[usize::from(pair[1])]);
                // Any invalid digit sets the high bit, checked once at the end.
                bad |= hi | lo;
                *byte = (hi << 4) | (lo & 0x0f);
            }
            (bad & 0x80 == 0).then(|| Digest::from_bytes(DigestAlgo::Blake3, bytes))
        });
    match fast {
        Some(d) => Ok(d),
        None => text.parse().map_err(E::custom),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl From<&CommandSpec> for SpecV1 {
    fn from(spec: &CommandSpec) -> Self {
        Self {
            argv: spec.argv.clone(),
            env: spec.env.clone(),
            environment: spec.environment.clone(),
            timeout_ms: spec.timeout.map(|t| millis(t.get())),
            secrets: spec.secrets.clone(),
            allow_empty: spec.allow_empty,
        }
    }
}

impl SpecV1 {
    fn into_spec(self, name: CommandName) -> CommandSpec {
        let mut spec = CommandSpec::new(name, self.argv);
        spec.env = self.env;
        spec.environment = self.environment;
        spec.timeout = self
            .timeout_ms
            .map(|ms| HumanDuration::new(Duration::from_millis(ms)));
        spec.secrets = self.secrets;
        spec.allow_empty = self.allow_empty;
        spec
    }
}

impl From<&ExitStatus> for ExitV1 {
    fn from(exit: &ExitStatus) -> Self {
        match exit {
            ExitStatus::Exited(code) => Self::Exited { code: *code },
            ExitStatus::Signaled(signal) => Self::Signaled {
                signal: *signal,
                name: crate::exec::signal_name(*signal).map(str::to_owned),
            },
            ExitStatus::TimedOut { after } => Self::TimedOut {
                after_ms: millis(*after),
            },
            ExitStatus::Cancelled => Self::Cancelled,
            ExitStatus::SpawnFailed { message } => Self::SpawnFailed {
                message: message.clone(),
            },
        }
    }
}

impl From<ExitV1> for ExitStatus {
    fn from(exit: ExitV1) -> Self {
        match exit {
            ExitV1::Exited { code } => Self::Exited(code),
            ExitV1::Signaled { signal, .. } => Self::Signaled(signal),
            ExitV1::TimedOut { after_ms } => Self::TimedOut {
                after: Duration::from_millis(after_ms),
            },
            ExitV1::Cancelled => Self::Cancelled,
            ExitV1::SpawnFailed { message } => Self::SpawnFailed { message },
        }
    }
}

impl From<&AssertionResult> for AssertionV1 {
    fn from(a: &AssertionResult) -> Self {
        Self {
            description: a.description.clone(),
            passed: a.passed,
            detail: a.detail.clone(),
        }
    }
}

impl From<AssertionV1> for AssertionResult {
    fn from(a: AssertionV1) -> Self {
        Self::new(a.description, a.passed, a.detail)
    }
}

impl From<&LogRecord> for LogV1 {
    fn from(l: &LogRecord) -> Self {
        Self {
            path: l.path.clone(),
            digest: l.digest,
            bytes: l.bytes,
            tail: l.tail.clone(),
        }
    }
}

impl From<LogV1> for LogRecord {
    fn from(l: LogV1) -> Self {
        Self {
            path: l.path,
            digest: l.digest,
            bytes: l.bytes,
            tail: l.tail,
        }
    }
}

/// The all-zero digest written before the real one is known.
pub(crate) fn placeholder() -> Digest {
    Digest::from_bytes(DigestAlgo::Blake3, [0; 32])
}

impl From<&CommandReceipt> for CommandReceiptV1 {
    /// The document with a placeholder digest and no MAC; the store signs it.
    fn from(r: &CommandReceipt) -> Self {
        Self {
            schema: RECEIPT_SCHEMA,
            command: r.command.clone(),
            spec: SpecV1::from(&r.spec),
            spec_digest: r.spec_digest,
            environment: r.environment.clone(),
            environment_digest: r.environment_digest,
            inherited_env: r.inherited_env.clone(),
            program: r.program.clone(),
            working_dir: r.working_dir.clone(),
            subject_before: r.subject_before,
            subject_after: r.subject_after,
            submodules: r.submodules.clone(),
            dependencies: r
                .dependencies
                .iter()
                .map(|d| DependencyV1 {
                    name: d.name.clone(),
                    path: d.path.clone(),
                    fingerprint: d.fingerprint,
                    commit: d.commit.clone(),
                })
                .collect(),
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration_ms: millis(r.duration),
            exit: ExitV1::from(&r.exit),
            assertions: r.assertions.iter().map(AssertionV1::from).collect(),
            stdout: LogV1::from(&r.stdout),
            stderr: LogV1::from(&r.stderr),
            tests: r.tests.as_ref().map(TestsV1::from),
            bound: r.bound.as_ref().map(|b| {
                b.iter()
                    .map(|(p, f)| (p.clone(), BoundV1::from(f)))
                    .collect()
            }),
            written_during_run: r.written_during_run.clone(),
            key: None,
            digest: placeholder(),
            mac: None,
        }
    }
}

impl From<CommandReceiptV1> for CommandReceipt {
    fn from(r: CommandReceiptV1) -> Self {
        Self {
            spec: r.spec.into_spec(r.command.clone()),
            command: r.command,
            spec_digest: r.spec_digest,
            environment: r.environment,
            environment_digest: r.environment_digest,
            inherited_env: r.inherited_env,
            program: r.program,
            working_dir: r.working_dir,
            subject_before: r.subject_before,
            subject_after: r.subject_after,
            submodules: r.submodules,
            dependencies: r
                .dependencies
                .into_iter()
                .map(|d| {
                    DependencyFingerprint::new(d.name, d.path, d.fingerprint).with_commit(d.commit)
                })
                .collect(),
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration: Duration::from_millis(r.duration_ms),
            exit: r.exit.into(),
            assertions: r.assertions.into_iter().map(Into::into).collect(),
            stdout: r.stdout.into(),
            stderr: r.stderr.into(),
            tests: r.tests.map(Into::into),
            // A kind this build does not know binds nothing it can check:
            // the whole record is taken as absent, which stales the receipt.
            bound: r.bound.and_then(|b| {
                b.into_iter()
                    .map(|(path, f)| {
                        let kind = crate::BoundKind::parse(&f.kind)?;
                        Some((path, crate::BoundFile::new(kind, f.digest, f.stat)))
                    })
                    .collect()
            }),
            written_during_run: r.written_during_run,
        }
    }
}

impl From<&EnvReceipt> for EnvReceiptV1 {
    fn from(r: &EnvReceipt) -> Self {
        Self {
            schema: RECEIPT_SCHEMA,
            environment: r.environment.clone(),
            environment_digest: r.environment_digest,
            checked_at: r.checked_at,
            results: r.results.iter().map(AssertionV1::from).collect(),
            key: None,
            digest: placeholder(),
            mac: None,
        }
    }
}

impl From<EnvReceiptV1> for EnvReceipt {
    fn from(r: EnvReceiptV1) -> Self {
        Self {
            environment: r.environment,
            environment_digest: r.environment_digest,
            checked_at: r.checked_at,
            results: r.results.into_iter().map(Into::into).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn via_fast(text: &str) -> Result<Digest, serde_json::Error> {
        parse_digest::<serde_json::Error>(text)
    }

    proptest! {
        #[test]
        fn the_fast_path_agrees_with_the_core_parser(bytes in any::<[u8; 32]>(), text in "[a-z0-9:]{0,80}") {
            let d = Digest::from_bytes(DigestAlgo::Blake3, bytes);
            prop_assert_eq!(via_fast(&d.to_string()).unwrap(), d);
            prop_assert_eq!(via_fast(&text).ok(), text.parse::<Digest>().ok());
            let upper = d.to_string().to_uppercase();
            prop_assert_eq!(via_fast(&upper).ok(), upper.parse::<Digest>().ok());
        }
    }
}
