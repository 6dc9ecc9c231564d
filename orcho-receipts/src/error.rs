//! Errors of `orcho-receipts`.
//!
//! Each error names what it is about (a command, an environment, a path) in
//! backticks and never repeats its source's text: render the whole chain with
//! [`orcho_core::error_chain`].
//!
//! "The check said no" is never an error here: a command that exits non-zero,
//! times out or cannot be spawned still yields a receipt, and a broken receipt
//! file classifies as [`ReceiptStatus::Invalid`](crate::ReceiptStatus::Invalid).
//! These errors are for "the check could not be run or recorded at all".

use std::{fmt, io};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{DocumentError, FsError, JournalError};

/// A name in the verification contract was refused.
///
/// Command and environment names become directory names in the receipt
/// store, so they are kept to one safe path component.
///
/// ```
/// use orcho_receipts::CommandName;
///
/// let err = "../etc".parse::<CommandName>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid command name `../etc`: must start with an ASCII letter or digit");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{value}`: {reason}")]
pub struct NameError {
    what: &'static str,
    value: String,
    reason: &'static str,
}

impl NameError {
    #[cold]
    pub(crate) fn new(what: &'static str, value: &str, reason: &'static str) -> Self {
        Self {
            what,
            value: shorten(value),
            reason,
        }
    }

    /// What kind of name was refused, for example `"command name"`.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Why it was refused.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

/// A duration such as `"30s"` or `"5m"` could not be parsed.
///
/// ```
/// use orcho_receipts::HumanDuration;
///
/// let err = "5 parsecs".parse::<HumanDuration>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid duration `5 parsecs`: expected a number and a unit (ms, s, m, h, d), for example `30s` or `1h30m`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid duration `{value}`: expected a number and a unit (ms, s, m, h, d), for example `30s` or `1h30m`"
)]
pub struct DurationError {
    value: String,
}

impl DurationError {
    #[cold]
    pub(crate) fn new(value: &str) -> Self {
        Self {
            value: shorten(value),
        }
    }
}

/// Keeps a bounded, printable prefix of a hostile value.
pub(crate) fn shorten(value: &str) -> String {
    orcho_core::spelling::shorten(value, 60)
}

/// Where in the verification contract a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContractLocation {
    /// The contract as a whole.
    Contract,
    /// A declared environment.
    Environment(String),
    /// One assertion of an environment, by 1-based position and kind.
    Assertion {
        /// The environment.
        environment: String,
        /// The 1-based position in the environment's `assertions`.
        index: usize,
        /// The assertion kind, for example `version`.
        kind: &'static str,
    },
    /// A declared command.
    Command(String),
    /// The `required` list.
    Required,
    /// The `worktree` setup or teardown.
    Worktree,
}

impl fmt::Display for ContractLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Contract => f.write_str("verification contract"),
            Self::Environment(name) => write!(f, "environment `{name}`"),
            Self::Assertion {
                environment,
                index,
                kind,
            } => write!(
                f,
                "environment `{environment}`, assertion {index} (`{kind}`)"
            ),
            Self::Command(name) => write!(f, "command `{name}`"),
            Self::Required => f.write_str("`required`"),
            Self::Worktree => f.write_str("`worktree`"),
        }
    }
}

/// What is wrong with a verification contract; see [`ContractError::problem`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContractProblem {
    /// Two commands, environments or dependencies share a name.
    Duplicate(String),
    /// A command names an environment that is not declared.
    UnknownEnvironment(String),
    /// `required` names a command that is not declared.
    UnknownCommand(String),
    /// An argv is empty, or its program is an empty string.
    EmptyArgv,
    /// An environment variable or secret name is empty, or contains `=` or
    /// a NUL byte.
    BadVariableName(String),
    /// A variable no command may see: the receipt key's
    /// ([`RECEIPT_KEY_VAR`](crate::RECEIPT_KEY_VAR)).
    ReservedVariable(String),
    /// A variable is declared both with a value in `env` and as a secret: its
    /// value would be written into the receipt.
    SecretWithValue(String),
    /// A path that must stay inside the checkout is absolute or climbs out
    /// of it with `..`.
    PathEscapes(String),
    /// A timeout of zero.
    ZeroTimeout,
    /// A pattern or path that must not be empty is empty.
    EmptyValue(&'static str),
}

impl fmt::Display for ContractProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(name) => write!(f, "`{name}` is declared more than once"),
            Self::UnknownEnvironment(name) => write!(f, "environment `{name}` is not declared"),
            Self::UnknownCommand(name) => write!(f, "command `{name}` is not declared"),
            Self::EmptyArgv => f.write_str("argv is empty or its program is an empty string"),
            Self::BadVariableName(name) => write!(
                f,
                "`{}` is not a valid environment variable name",
                shorten(name)
            ),
            Self::ReservedVariable(name) => write!(
                f,
                "`{name}` holds the host's receipt key, which no command may see: a command \
                 that had it could forge receipts"
            ),
            Self::SecretWithValue(name) => write!(
                f,
                "`{name}` is a secret but also has a value in `env`, which would be recorded"
            ),
            Self::PathEscapes(path) => write!(
                f,
                "path `{}` must be relative and stay inside the checkout",
                shorten(path)
            ),
            Self::ZeroTimeout => f.write_str("the timeout is zero"),
            Self::EmptyValue(what) => write!(f, "{what} is empty"),
        }
    }
}

/// A verification contract is inconsistent. The message names the offending
/// command, environment or assertion.
///
/// ```
/// use orcho_receipts::VerificationContract;
///
/// let yaml = "commands:\n  - name: test\n    argv: [cargo, test]\nrequired: [lint]\n";
/// let contract: VerificationContract = serde_yaml::from_str(yaml)?;
/// let err = contract.validate().unwrap_err();
/// assert_eq!(err.to_string(), "`required`: command `lint` is not declared");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct ContractError {
    location: ContractLocation,
    problem: ContractProblem,
}

impl ContractError {
    #[cold]
    pub(crate) fn new(location: ContractLocation, problem: ContractProblem) -> Self {
        Self { location, problem }
    }

    orcho_core::getters! {
        /// Where the problem is.
        pub fn location(&self) -> &ContractLocation;
        /// What the problem is.
        pub fn problem(&self) -> &ContractProblem;
    }
}

/// What [`exec`](crate::exec) could not do; see [`ExecError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecErrorKind {
    /// A log file could not be created or written.
    #[error("failed to write the log")]
    Log(#[source] io::Error),
    /// A pipe to the child could not be read, or waiting failed.
    #[error("failed to supervise the process")]
    Supervise(#[source] io::Error),
}

/// Running a command failed for a reason outside the command itself (its
/// log could not be written, waiting on it failed). A command that could not
/// be *spawned* is not an error: its [`ExitStatus`](crate::ExitStatus) says so.
#[derive(Debug, thiserror::Error)]
#[error("failed to run `{program}`")]
pub struct ExecError {
    program: String,
    #[source]
    kind: ExecErrorKind,
}

impl ExecError {
    #[cold]
    pub(crate) fn new(program: &str, kind: ExecErrorKind) -> Self {
        Self {
            program: shorten(program),
            kind,
        }
    }

    orcho_core::getters! {
        /// The program (`argv[0]`).
        pub fn program(&self) -> &str;
        /// What failed.
        pub fn kind(&self) -> &ExecErrorKind;
    }
}

/// Why a fingerprint could not be taken; see [`FingerprintError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FingerprintErrorKind {
    /// A file or directory could not be read.
    #[error("failed to read `{path}`")]
    Io {
        /// The path, shown lossily when it is not UTF-8.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// `git ls-files` could not be run.
    #[error(transparent)]
    Exec(ExecError),
    /// `git ls-files` ran but failed.
    #[error("`git ls-files` failed ({status}): {stderr}")]
    Git {
        /// Its exit status.
        status: String,
        /// The end of its standard error.
        stderr: String,
    },
}

/// A checkout could not be fingerprinted.
#[derive(Debug, thiserror::Error)]
#[error("cannot fingerprint `{root}`")]
pub struct FingerprintError {
    root: Utf8PathBuf,
    #[source]
    kind: FingerprintErrorKind,
}

impl FingerprintError {
    #[cold]
    pub(crate) fn new(root: &Utf8Path, kind: FingerprintErrorKind) -> Self {
        Self {
            root: root.to_owned(),
            kind,
        }
    }

    orcho_core::getters! {
        /// The checkout root.
        pub fn root(&self) -> &Utf8Path;
        /// What went wrong.
        pub fn kind(&self) -> &FingerprintErrorKind;
    }
}

/// What went wrong in a receipt operation; see [`ReceiptError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptErrorKind {
    /// The contract does not declare the command or environment.
    #[error("it is not declared in the verification contract")]
    NotDeclared,
    /// The contract is inconsistent.
    #[error(transparent)]
    Contract(ContractError),
    /// A file of the store could not be created, read or written.
    #[error(transparent)]
    Fs(FsError),
    /// A directory of the store could not be created or read.
    #[error("failed to use `{path}`")]
    Io {
        /// The path.
        path: Utf8PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The file on disk holds a receipt from a newer schema; an older Orcho
    /// never overwrites it.
    #[error("`{path}` has schema {found}, newer than this build writes; refusing to overwrite it")]
    NewerOnDisk {
        /// The file.
        path: Utf8PathBuf,
        /// Its schema.
        found: orcho_core::SchemaVersion,
    },
    /// The encoded receipt had no `digest` line to sign (a bug).
    #[error("the encoded receipt has no `digest` line")]
    Unsigned,
    /// The exploratory log could not be read or written.
    #[error(transparent)]
    Journal(JournalError),
    /// A receipt document could not be encoded or read.
    #[error(transparent)]
    Document(DocumentError),
    /// The command could not be supervised.
    #[error(transparent)]
    Exec(ExecError),
    /// The subject or a dependency could not be fingerprinted.
    #[error(transparent)]
    Fingerprint(FingerprintError),
}

/// Running, recording or reading a receipt failed.
///
/// ```
/// # use orcho_receipts::{ReceiptStore, Verifier, VerificationContract, CommandName};
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// let contract = VerificationContract::default();
/// let verifier = Verifier::new(contract, &root, ReceiptStore::new(root.join(".orcho")))?;
/// let err = verifier.run_command(&"test".parse::<CommandName>()?, None).unwrap_err();
/// assert_eq!(orcho_core::error_chain(&err), "command `test`: caused by: it is not declared in the verification contract");
/// assert!(err.is_not_declared());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{subject}")]
pub struct ReceiptError {
    subject: String,
    #[source]
    kind: ReceiptErrorKind,
}

impl ReceiptErrorKind {
    #[cold]
    pub(crate) fn io(path: impl Into<Utf8PathBuf>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

impl ReceiptError {
    #[cold]
    pub(crate) fn new(subject: impl fmt::Display, kind: ReceiptErrorKind) -> Self {
        Self {
            subject: subject.to_string(),
            kind,
        }
    }

    #[cold]
    pub(crate) fn command(name: &str, kind: ReceiptErrorKind) -> Self {
        Self::new(format_args!("command `{name}`"), kind)
    }

    orcho_core::getters! {
        /// What the error is about, for example ``command `test` ``.
        pub fn subject(&self) -> &str;
        /// What went wrong.
        pub fn kind(&self) -> &ReceiptErrorKind;
    }

    /// Whether the command or environment is not in the contract.
    pub fn is_not_declared(&self) -> bool {
        matches!(self.kind, ReceiptErrorKind::NotDeclared)
    }
}
