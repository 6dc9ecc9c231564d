//! Receipts: durable proof that a declared command ran (or that an
//! environment's assertions were checked), bound to what it ran against.
//!
//! These are the domain types; their on-disk shape lives in the private
//! `format` module and is documented on [`ReceiptStore`](crate::ReceiptStore).

use std::{collections::BTreeMap, fmt, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{Digest, Timestamp};

use crate::{CommandName, CommandSpec, EnvName, ExitStatus, TestCount};

/// The `derive_key` context of command-spec digests.
pub const SPEC_CONTEXT: &str = "orcho command spec v1";
/// The `derive_key` context of environment digests: the declaration and
/// the variables it binds (its `env` and the host variables it `inherit`s).
pub const ENVIRONMENT_CONTEXT: &str = "orcho environment v2";

/// The context of environment digests written before receipt schema 2,
/// which bound every base variable (`TERM`, `HOME`, …): still accepted for
/// a receipt when the base variables are as they were.
pub const LEGACY_ENVIRONMENT_CONTEXT: &str = "orcho environment v1";

/// The receipt of one execution of a declared command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandReceipt {
    /// The command's name.
    pub command: CommandName,
    /// The command as declared when it ran (secret *names* only).
    pub spec: CommandSpec,
    /// The digest of `spec` (context [`SPEC_CONTEXT`]).
    pub spec_digest: Digest,
    /// The environment it ran in.
    pub environment: EnvName,
    /// The digest of that environment's declaration and the variables it
    /// binds (context [`ENVIRONMENT_CONTEXT`]; [`LEGACY_ENVIRONMENT_CONTEXT`]
    /// in receipts of schema 1).
    pub environment_digest: Digest,
    /// The variables the environment binds, with their values when it ran:
    /// its `env` and the host variables it `inherit`s (never secrets). In
    /// receipts of schema 1: the base variables.
    pub inherited_env: BTreeMap<String, String>,
    /// The program the command ran, as its `PATH` resolved it then (`None`
    /// in receipts of schema 1).
    pub program: Option<Utf8PathBuf>,
    /// Its working directory, relative to the checkout root.
    pub working_dir: Utf8PathBuf,
    /// The subject fingerprint just before it ran.
    pub subject_before: Digest,
    /// The subject fingerprint just after it ran. When it differs from
    /// `subject_before`, the command changed what it was checking, and the
    /// receipt is no proof.
    pub subject_after: Digest,
    /// The git submodules in the subject just before it ran, each with the
    /// fingerprint of its work tree (empty without submodules, and in
    /// receipts before schema 4): what names a submodule that changed since.
    pub submodules: BTreeMap<Utf8PathBuf, Digest>,
    /// The fingerprints of the environment's dependency checkouts.
    pub dependencies: Vec<DependencyFingerprint>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Timestamp,
    /// How long it ran, from the clock.
    pub duration: Duration,
    /// How it ended.
    pub exit: ExitStatus,
    /// The environment's assertions, checked just before it ran.
    pub assertions: Vec<AssertionResult>,
    /// Its standard output.
    pub stdout: LogRecord,
    /// Its standard error.
    pub stderr: LogRecord,
    /// What its test runner reported, when one was recognised in its output
    /// (`None` in receipts before schema 5).
    pub tests: Option<TestCount>,
    /// The files outside its subject that it ran or read, each with its
    /// digest (see [`bound`](crate::bound)); `None` in receipts before
    /// schema 6, which bound none.
    pub bound: Option<BTreeMap<Utf8PathBuf, crate::BoundFile>>,
    /// Files of its subject written while it ran (in place, or away and
    /// back): a run that changed what it checks proves neither state, even
    /// when the files are as they were when it ended.
    pub written_during_run: Vec<Utf8PathBuf>,
}

impl CommandReceipt {
    /// Why the execution failed, if it did: the exit status first, then the
    /// first failed assertion.
    pub fn failure(&self) -> Option<Failure> {
        let from_exit = match &self.exit {
            ExitStatus::Exited(0) => None,
            ExitStatus::Exited(code) => Some(Failure::ExitCode(*code)),
            ExitStatus::Signaled(signal) => Some(Failure::Signal { signal: *signal }),
            ExitStatus::TimedOut { after } => Some(Failure::Timeout { after: *after }),
            ExitStatus::Cancelled => Some(Failure::Cancelled),
            ExitStatus::SpawnFailed { message } => Some(Failure::SpawnFailed {
                message: message.clone(),
            }),
        };
        from_exit
            .or_else(|| {
                self.assertions
                    .iter()
                    .find(|a| !a.passed)
                    .map(|a| Failure::AssertionFailed {
                        assertion: a.description.clone(),
                        detail: a.detail.clone(),
                    })
            })
            // The runner's word outranks the exit code: tests it reported
            // failed are a failure, whatever the command exited with.
            .or_else(|| {
                self.tests
                    .as_ref()
                    .filter(|t| t.failed > 0)
                    .map(|t| Failure::ReportedFailed {
                        failed: t.failed,
                        runners: t.runners.join(", "),
                    })
            })
    }

    /// Whether it passed: exit code 0 and every assertion held.
    pub fn passed(&self) -> bool {
        self.failure().is_none()
    }

    /// Whether it passed without proving anything: its test runner reported
    /// that no test ran, and its spec does not say
    /// [`allow_empty`](CommandSpec::allow_empty).
    pub fn vacuous(&self) -> bool {
        !self.spec.allow_empty && self.tests.as_ref().is_some_and(|t| t.ran() == 0)
    }
}

/// A dependency checkout's fingerprint at the time of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DependencyFingerprint {
    /// The dependency's name.
    pub name: EnvName,
    /// Its declared path.
    pub path: Utf8PathBuf,
    /// Its fingerprint, or `None` when the path did not exist.
    pub fingerprint: Option<Digest>,
    /// The commit checked out in it, when it is a git work tree (`None`
    /// outside git, and in receipts before schema 4): with the
    /// fingerprint, which dependency a receipt was proven against.
    pub commit: Option<String>,
}

impl DependencyFingerprint {
    /// A dependency fingerprint.
    pub fn new(name: EnvName, path: Utf8PathBuf, fingerprint: Option<Digest>) -> Self {
        Self {
            commit: None,
            name,
            path,
            fingerprint,
        }
    }
    /// Where the receipt's proof came from, in words: the commit (short)
    /// with the content digest, or the digest alone outside git.
    pub fn provenance(&self) -> String {
        match (&self.commit, &self.fingerprint) {
            (Some(commit), Some(digest)) => {
                format!("commit {} ({digest})", commit.get(..12).unwrap_or(commit))
            }
            (None, Some(digest)) => format!("content {digest}"),
            (_, None) => "absent".to_owned(),
        }
    }
}

impl DependencyFingerprint {
    orcho_core::setters! {
        /// The same fingerprint, with the commit checked out in the dependency.
        pub fn with_commit(commit: Option<String>);
    }
}

/// The result of one environment assertion.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssertionResult {
    /// A one-line description, for example ``file_exists `Cargo.toml` ``.
    pub description: String,
    /// Whether it held.
    pub passed: bool,
    /// What was found (bounded; secrets redacted).
    pub detail: String,
}

impl AssertionResult {
    /// An assertion result.
    pub fn new(description: impl Into<String>, passed: bool, detail: impl Into<String>) -> Self {
        Self {
            description: description.into(),
            passed,
            detail: detail.into(),
        }
    }
}

/// One captured output stream of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LogRecord {
    /// The full log, relative to the store directory.
    pub path: Option<Utf8PathBuf>,
    /// The digest of the log file's bytes.
    pub digest: Option<Digest>,
    /// How many bytes the stream had.
    pub bytes: u64,
    /// Its last bytes (lossy UTF-8, secrets redacted).
    pub tail: String,
}

/// The receipt of checking an environment's assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvReceipt {
    /// The environment.
    pub environment: EnvName,
    /// The digest of its declaration and base variables.
    pub environment_digest: Digest,
    /// When the assertions were checked.
    pub checked_at: Timestamp,
    /// One result per assertion, in declared order.
    pub results: Vec<AssertionResult>,
}

impl EnvReceipt {
    /// Whether every assertion held.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.passed)
    }
}

/// Why a receipt records a failed execution. Each way to fail is
/// distinguishable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// Non-zero exit code.
    ExitCode(i32),
    /// It exited 0, but its test runner reported tests that failed.
    ReportedFailed {
        /// How many.
        failed: u64,
        /// The runners that reported them.
        runners: String,
    },
    /// Killed by a signal.
    Signal {
        /// The signal number.
        signal: i32,
    },
    /// Killed at its timeout.
    Timeout {
        /// The timeout.
        after: Duration,
    },
    /// Cancelled before it finished.
    Cancelled,
    /// Could not be started.
    SpawnFailed {
        /// Why.
        message: String,
    },
    /// An environment assertion did not hold.
    AssertionFailed {
        /// Which assertion.
        assertion: String,
        /// What was found.
        detail: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ExitCode(code) => write!(f, "exited with code {code}"),
            Self::ReportedFailed { failed, runners } => write!(
                f,
                "exited with code 0, but {runners} reported {failed} failed test(s)"
            ),
            Self::Signal { signal } => match crate::exec::signal_name(*signal) {
                Some(name) => write!(f, "killed by signal {signal} ({name})"),
                None => write!(f, "killed by signal {signal}"),
            },
            Self::Timeout { after } => {
                write!(f, "timed out after {}", crate::HumanDuration::new(*after))
            }
            Self::Cancelled => f.write_str("interrupted before it finished: run it again"),
            Self::SpawnFailed { message } => write!(f, "could not be started: {message}"),
            Self::AssertionFailed { assertion, detail } => {
                write!(f, "assertion {assertion} failed: {detail}")
            }
        }
    }
}
