//! Proof that a declared command ran, in a declared environment, against
//! this exact checkout.
//!
//! Orcho does not trust an agent's claim that work is ready. This crate turns
//! "the tests pass" into something checkable:
//!
//! - the **verification contract** ([`VerificationContract`]): environments
//!   ([`Environment`]) with their [`Assertion`]s and dependency checkouts,
//!   declared commands ([`CommandSpec`], argv only), and the `required` gate;
//! - [`exec`], the one place in Orcho that spawns processes: its own process
//!   group, timeout with escalating kill, cancellation ([`exec::CancelToken`]),
//!   bounded output with full logs, redacted secrets;
//! - [`fingerprint`]s of the checkout and its dependencies (blake3 over paths,
//!   modes, symlink targets and contents, the file set git would list, found
//!   in this process, with a cache of what was read and listed);
//! - [`CommandReceipt`]s and [`EnvReceipt`]s in a [`ReceiptStore`]: latest and
//!   immutable history, digests and optional MACs ([`ReceiptKey`]);
//! - [`classify`]: one [`ReceiptStatus`] per command (present, missing —
//!   or deleted, with when it last ran —, failed with the first failing
//!   tests, vacuous when its test runner ran no test ([`TestCount`]), stale
//!   with every [`StaleReason`], invalid);
//! - the [`ReadinessSummary`] (JSON and Markdown), the [`ExploratoryLog`],
//!   and [`apply_acceptance`], which turns every unproven required command
//!   into a [`Gap`] and forces the verdict to rejected.
//!
//! [`Verifier`] ties them together for one checkout.
//!
//! # Example
//!
//! ```
//! use orcho_core::Verdict;
//! use orcho_receipts::{
//!     apply_acceptance, exec::BaseEnv, ReceiptStatus, ReceiptStore, VerificationContract,
//!     Verifier,
//! };
//! # let dir = tempfile::tempdir()?;
//! # let checkout = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
//! # orcho_core::fs::write_atomic(&checkout.join("README"), b"hello\n")?;
//!
//! let contract: VerificationContract = serde_yaml::from_str(r#"
//! commands:
//!   - name: readme
//!     argv: [grep, -q, hello, README]
//!     timeout: 30s
//! required: [readme]
//! "#)?;
//! let verifier = Verifier::new(contract, &checkout, ReceiptStore::new(checkout.join(".orcho")))?
//!     .with_base_env(BaseEnv::inherit());
//!
//! // Nothing ran yet: the required command is missing, and acceptance is rejected.
//! let summary = verifier.readiness()?;
//! assert_eq!(summary.required[0].status, ReceiptStatus::Missing);
//! assert_eq!(apply_acceptance(Verdict::Approved, &summary).verdict, Verdict::Rejected);
//!
//! // Run it: the receipt is proof for this exact checkout.
//! verifier.run_command(&"readme".parse()?, None)?;
//! let summary = verifier.readiness()?;
//! assert!(summary.is_ready());
//! assert_eq!(apply_acceptance(Verdict::Approved, &summary).verdict, Verdict::Approved);
//!
//! // Edit the checkout: the receipt no longer proves anything.
//! orcho_core::fs::write_atomic(&checkout.join("README"), b"hello, world\n")?;
//! assert!(matches!(verifier.readiness()?.required[0].status, ReceiptStatus::Stale(_)));
//! println!("{}", verifier.readiness()?.to_markdown());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! None. The crate has no optional parts.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API; on-disk receipts are versioned
//! ([`RECEIPT_SCHEMA`]) and never silently re-interpreted. Unix only (process
//! groups and signals; a running child is watched through a pidfd on Linux
//! and polled every few milliseconds elsewhere). The minimum supported Rust
//! version is 1.95.

pub mod bound;
mod changes;
mod classify;
mod contract;
mod duration;
mod error;
#[expect(clippy::disallowed_methods, reason = "the one sanctioned spawn site")]
pub mod exec;
pub mod fingerprint;
mod format;
mod names;
mod readiness;
mod receipt;
mod store;
mod test_count;
mod verifier;
mod watch;
pub mod weakening;

pub use bound::{BoundChange, BoundFile, BoundKind};
pub use changes::{command_changes, environment_changes};
pub use classify::{
    Classified, CurrentState, EnvironmentState, InvalidReason, NextAction, ReceiptStatus,
    StaleReason, classify, classify_one, status_of,
};
pub use contract::{
    Assertion, CommandSpec, DEFAULT_ENVIRONMENT, DEFAULT_TIMEOUT, Dependency, Environment,
    ImportPathAssertion, PathExpectation, Pattern, SetupStep, VerificationContract,
    VersionAssertion, WorktreeSetup,
};
pub use duration::HumanDuration;
pub use error::{
    ContractError, ContractLocation, ContractProblem, DurationError, ExecError, ExecErrorKind,
    FingerprintError, FingerprintErrorKind, NameError, ReceiptError, ReceiptErrorKind,
};
pub use exec::ExitStatus;
pub use names::{CommandName, EnvName};
pub use readiness::{
    Acceptance, CommandReadiness, EnvStatus, EnvironmentReadiness, ExploratoryEntry,
    ExploratoryLog, Gap, GapStatus, GateReadiness, ReadinessSummary, SUMMARY_SCHEMA,
    apply_acceptance,
};
pub use receipt::{
    AssertionResult, CommandReceipt, DependencyFingerprint, ENVIRONMENT_CONTEXT, EnvReceipt,
    Failure, LEGACY_ENVIRONMENT_CONTEXT, LogRecord, SPEC_CONTEXT,
};
pub use store::{
    COMMAND_RECEIPT_CONTEXT, ENV_RECEIPT_CONTEXT, LoadedReceipt, RECEIPT_KEY_VAR, RECEIPT_SCHEMA,
    ReceiptKey, ReceiptStore, SIGNING_KEY_VAR, StoredReceipt,
};
pub use test_count::{MAX_TEST_NAMES, TestCount};
pub use verifier::{
    ENVIRONMENT_DECLARATION_CONTEXT, Verifier, bound_env, environment_declaration_digest,
    environment_digest, spec_digest,
};
