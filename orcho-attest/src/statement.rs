//! The in-toto Statement (v1) of one receipt, with the test-result
//! predicate (v0.1) and Orcho's own fields.
//!
//! ```json
//! {
//!   "_type": "https://in-toto.io/Statement/v1",
//!   "subject": [{"name": "_", "digest": {"gitTree": "…", "gitCommit": "…"}}],
//!   "predicateType": "https://in-toto.io/attestation/test-result/v0.1",
//!   "predicate": {
//!     "result": "PASSED",
//!     "configuration": [{
//!       "name": "test",
//!       "digest": {"orchoSpec": "…"},
//!       "annotations": {"argv": ["cargo", "test"], "environment": "default"}
//!     }],
//!     "passedTests": ["…"],
//!     "failedTests": ["…"],
//!     "orcho": { … }
//!   }
//! }
//! ```
//!
//! `result` is `PASSED` for a receipt that passed and ran tests (or whose
//! runner was not recognised), `WARNED` for a vacuous one (it exited 0,
//! but no test ran) and `FAILED` otherwise. `configuration` names the
//! declared command and the digest of its declaration (`orchoSpec`, the
//! hex of Orcho's spec digest): an attestation proves a command only while
//! the repository declares it the same way. The `orcho` field is Orcho's
//! extension ([`OrchoFields`]); in-toto consumers ignore fields they do not
//! know.

use std::collections::BTreeMap;

use orcho_core::Digest;
use orcho_receipts::{CommandReceipt, Environment, ExitStatus};
use serde::{Deserialize, Serialize};

/// The `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The test-result predicate's type.
pub const TEST_RESULT_PREDICATE: &str = "https://in-toto.io/attestation/test-result/v0.1";
/// The schema of [`OrchoFields`].
pub const ORCHO_FIELDS_SCHEMA: u32 = 1;

/// What a receipt says, as an attestation states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TestResult {
    /// It passed, and ran tests (or no runner was recognised).
    Passed,
    /// It exited 0, but no test ran.
    Warned,
    /// It failed.
    Failed,
}

impl TestResult {
    /// As a statement spells it: `PASSED`, `WARNED`, `FAILED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "PASSED",
            Self::Warned => "WARNED",
            Self::Failed => "FAILED",
        }
    }
}

/// The git objects an attestation is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Subject {
    /// The tree the receipt proved (hex object id).
    pub tree: String,
    /// The commit of that tree, when known.
    pub commit: Option<String>,
}

impl Subject {
    /// A subject.
    pub fn new(tree: impl Into<String>, commit: Option<String>) -> Self {
        Self {
            tree: tree.into(),
            commit,
        }
    }
}

/// Orcho's own fields of an attestation (`predicate.orcho`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OrchoFields {
    /// [`ORCHO_FIELDS_SCHEMA`].
    pub schema: u32,
    /// The version of Orcho that signed it.
    pub version: String,
    /// The declared command.
    pub command: String,
    /// Its declaration's digest (`blake3:…`).
    pub spec_digest: String,
    /// The environment it ran in.
    pub environment: String,
    /// That environment's digest (its declaration and the host variables
    /// it binds, as they were where it ran).
    pub environment_digest: String,
    /// The digest of that environment's declaration alone (`blake3:…`):
    /// which declaration it ran under. Absent from statements made before
    /// it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_declaration: Option<String>,
    /// Its exit code (`None` when killed, timed out or never started).
    pub exit_code: Option<i32>,
    /// How it ended, in words.
    pub exit: String,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it finished (RFC 3339): of two attestations of one command by
    /// one key, the later one is kept.
    pub finished_at: String,
    /// The environment's assertions and whether each held.
    #[serde(default)]
    pub assertions: Vec<AssertionField>,
    /// What the test runner reported, when one was recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestsField>,
}

/// One assertion's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssertionField {
    /// The assertion.
    pub description: String,
    /// Whether it held.
    pub passed: bool,
}

/// A test runner's counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TestsField {
    /// The runners recognised.
    pub runners: Vec<String>,
    /// Tests passed.
    pub passed: u64,
    /// Tests failed.
    pub failed: u64,
    /// Tests skipped.
    pub skipped: u64,
}

/// An in-toto Statement of one receipt, as read back from a verified
/// payload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Statement {
    /// What it is about.
    pub subject: Subject,
    /// Its result.
    pub result: TestResult,
    /// Orcho's fields.
    pub orcho: OrchoFields,
}

/// Why a payload is not an attestation Orcho reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatementError {
    /// Not JSON of the right shape.
    #[error("the payload is not an in-toto statement: {0}")]
    Json(String),
    /// Another `_type`.
    #[error("the payload's `_type` is `{0}`, not an in-toto Statement v1")]
    Type(String),
    /// Another predicate.
    #[error("the predicate is `{0}`, not a test result")]
    Predicate(String),
    /// No subject with a git tree.
    #[error("no subject names a git tree")]
    NoTree,
    /// Not written by Orcho.
    #[error("the statement has no `predicate.orcho` fields: not Orcho's")]
    NotOrcho,
}

#[derive(Serialize, Deserialize)]
struct StatementJson {
    #[serde(rename = "_type")]
    type_: String,
    subject: Vec<ResourceJson>,
    #[serde(rename = "predicateType")]
    predicate_type: String,
    predicate: PredicateJson,
}

#[derive(Serialize, Deserialize)]
struct ResourceJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default)]
    digest: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    annotations: Option<serde_json::Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PredicateJson {
    result: TestResult,
    configuration: Vec<ResourceJson>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    passed_tests: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    failed_tests: Vec<String>,
    #[serde(default)]
    orcho: Option<OrchoFields>,
}

/// The hex of a digest without its algorithm.
fn digest_hex(digest: &Digest) -> String {
    let text = digest.to_string();
    text.split_once(':')
        .map_or(text.clone(), |(_, hex)| hex.to_owned())
}

/// The result a receipt states.
pub fn result_of(receipt: &CommandReceipt) -> TestResult {
    if !receipt.passed() {
        TestResult::Failed
    } else if receipt.vacuous() {
        TestResult::Warned
    } else {
        TestResult::Passed
    }
}

/// The Statement of `receipt` about `subject`, as the bytes signed;
/// `environment` is the declaration of the environment the receipt's
/// command ran in.
pub fn statement_bytes(
    receipt: &CommandReceipt,
    environment: Option<&Environment>,
    subject: &Subject,
) -> Vec<u8> {
    let mut digest = BTreeMap::from([("gitTree".to_owned(), subject.tree.clone())]);
    if let Some(commit) = &subject.commit {
        digest.insert("gitCommit".to_owned(), commit.clone());
    }
    let exit_code = match receipt.exit {
        ExitStatus::Exited(code) => Some(code),
        _ => None,
    };
    let orcho = OrchoFields {
        schema: ORCHO_FIELDS_SCHEMA,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        command: receipt.command.to_string(),
        spec_digest: receipt.spec_digest.to_string(),
        environment: receipt.environment.to_string(),
        environment_digest: receipt.environment_digest.to_string(),
        environment_declaration: environment
            .map(|e| orcho_receipts::environment_declaration_digest(e).to_string()),
        exit_code,
        exit: receipt
            .failure()
            .map_or_else(|| "passed".to_owned(), |f| f.to_string()),
        duration_ms: u64::try_from(receipt.duration.as_millis()).unwrap_or(u64::MAX),
        started_at: receipt.started_at.to_string(),
        finished_at: receipt.finished_at.to_string(),
        assertions: receipt
            .assertions
            .iter()
            .map(|a| AssertionField {
                description: a.description.clone(),
                passed: a.passed,
            })
            .collect(),
        tests: receipt.tests.as_ref().map(|t| TestsField {
            runners: t.runners.clone(),
            passed: t.passed,
            failed: t.failed,
            skipped: t.skipped,
        }),
    };
    let statement = StatementJson {
        type_: STATEMENT_TYPE.to_owned(),
        subject: vec![ResourceJson {
            name: Some("_".to_owned()),
            digest,
            annotations: None,
        }],
        predicate_type: TEST_RESULT_PREDICATE.to_owned(),
        predicate: PredicateJson {
            result: result_of(receipt),
            configuration: vec![ResourceJson {
                name: Some(receipt.command.to_string()),
                digest: BTreeMap::from([(
                    "orchoSpec".to_owned(),
                    digest_hex(&receipt.spec_digest),
                )]),
                annotations: Some(serde_json::json!({
                    "argv": receipt.spec.argv,
                    "environment": receipt.environment.as_str(),
                })),
            }],
            passed_tests: receipt
                .tests
                .as_ref()
                .map(|t| t.passed_names.clone())
                .unwrap_or_default(),
            failed_tests: receipt
                .tests
                .as_ref()
                .map(|t| t.failed_names.clone())
                .unwrap_or_default(),
            orcho: Some(orcho),
        },
    };
    serde_json::to_vec(&statement).unwrap_or_default()
}

impl Statement {
    /// Reads a Statement from a verified payload.
    ///
    /// # Errors
    ///
    /// A payload that is not JSON of a Statement v1 with the test-result
    /// predicate, a subject with a git tree and Orcho's fields.
    pub fn from_payload(payload: &[u8]) -> Result<Self, StatementError> {
        let raw: StatementJson =
            serde_json::from_slice(payload).map_err(|e| StatementError::Json(e.to_string()))?;
        if raw.type_ != STATEMENT_TYPE {
            return Err(StatementError::Type(raw.type_));
        }
        if raw.predicate_type != TEST_RESULT_PREDICATE {
            return Err(StatementError::Predicate(raw.predicate_type));
        }
        let subject = raw
            .subject
            .iter()
            .find_map(|s| {
                let tree = s.digest.get("gitTree")?;
                is_object_id(tree).then(|| Subject {
                    tree: tree.clone(),
                    commit: s
                        .digest
                        .get("gitCommit")
                        .filter(|c| is_object_id(c))
                        .cloned(),
                })
            })
            .ok_or(StatementError::NoTree)?;
        let orcho = raw.predicate.orcho.ok_or(StatementError::NotOrcho)?;
        Ok(Self {
            subject,
            result: raw.predicate.result,
            orcho,
        })
    }
}

/// Whether `text` is a git object id: 40 or 64 lower-case hex digits.
pub(crate) fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
