//! The readiness summary a final-acceptance reviewer reads, the

use std::{
    collections::BTreeMap,
    fmt::{self, Write as _},
};

use camino::Utf8PathBuf;
use orcho_core::{
    Digest, Finding, SchemaVersion, Severity, Timestamp, Verdict, fs::Journal, schema::Document,
};
use serde::{Deserialize, Serialize};

use crate::{
    CommandName, EnvName, Environment, LoadedReceipt, NextAction, ReceiptError, ReceiptErrorKind,
    ReceiptStatus, ReceiptStore, VerificationContract, classify::Classified, format::ExploratoryV1,
    store::EXPLORATORY_DIR,
};

/// The schema of the summary's JSON form.
///
/// Changelog:
/// - 1: first version.
/// - 2: `gates`, the delivery-relevant gates (left out when there are none);
///   each command's `dependencies` (name, path, fingerprint, commit), which
///   its receipt was taken against (left out when there are none).
/// - 3: each command's `tests` (passed, failed, skipped, and `not_run` by
///   the runner's word), when its receipt's runner was recognised.
pub const SUMMARY_SCHEMA: SchemaVersion = SchemaVersion::new(3);

/// The schema of an exploratory-log line.
///
/// Changelog:
/// - 1: first version.
const EXPLORATORY_SCHEMA: SchemaVersion = SchemaVersion::new(1);

/// The status of an environment's assertions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EnvStatus {
    /// Every assertion held when last checked, and the environment has not
    /// changed since.
    Passed,
    /// An assertion failed when last checked.
    Failed,
    /// The assertions were never checked.
    NotChecked,
    /// The environment's declaration changed since the check.
    Stale,
    /// The assertion receipt cannot be trusted.
    Invalid,
}

orcho_core::spelled!(EnvStatus {
    Passed => "passed",
    Failed => "failed",
    NotChecked => "not_checked",
    Stale => "stale",
    Invalid => "invalid",
});

/// One environment in the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvironmentReadiness {
    /// The environment.
    pub name: EnvName,
    /// Its status.
    pub status: EnvStatus,
    /// Why, in one line.
    pub detail: String,
}

/// A quality gate whose last result bears on delivery, as the host that ran
/// it recorded it: the summary's "delivery-relevant gates" section. The
/// receipts crate knows no gate types, so the host spells the outcome and
/// the strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GateReadiness {
    /// The phase the gate ran after.
    pub phase: String,
    /// The gate.
    pub gate: String,
    /// Its outcome: `passed`, `failed`, `skipped`, `timed_out`, `errored`.
    pub outcome: String,
    /// What a failure does: `halt`, `feed_into_next`, `trigger_replan`.
    pub on_fail: String,
    /// Its summary, in one line (may be empty).
    pub summary: String,
}

impl GateReadiness {
    /// A gate of `phase` and how it ended.
    pub fn new(
        phase: impl Into<String>,
        gate: impl Into<String>,
        outcome: impl Into<String>,
        on_fail: impl Into<String>,
        summary: impl Into<String>,
    ) -> Self {
        Self {
            phase: phase.into(),
            gate: gate.into(),
            outcome: outcome.into(),
            on_fail: on_fail.into(),
            summary: summary.into(),
        }
    }
}

/// One command in the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandReadiness {
    /// The command.
    pub command: CommandName,
    /// Its receipt status.
    pub status: ReceiptStatus,
    /// The dependency checkouts its receipt was taken against: which commit
    /// (or content, outside git) a present receipt was proven with.
    pub dependencies: Vec<crate::DependencyFingerprint>,
    /// What its receipt's test runner reported: how many passed, failed,
    /// and did not run (by the runner's word).
    pub tests: Option<crate::TestCount>,
}

/// The readiness summary a final-acceptance reviewer reads, the
/// exploratory-command log, and the acceptance rule.
///
/// Reviewers read receipts, not re-runs: the summary lists every required
/// command with its [`ReceiptStatus`] and reason, optional commands
/// (reported, never blocking), each environment's assertion status, and how
/// many exploratory commands the agent ran (labelled not authoritative; they
/// never satisfy a requirement).
///
/// The summary is advisory; [`apply_acceptance`] is not: every required
/// command that is not present becomes a [`Gap`] with its next action, and
/// any gap forces the verdict to rejected, whatever the reviewer said.
///
/// What the receipts on disk prove about the checkout. Build it with
/// [`Verifier::readiness`](crate::Verifier::readiness) or [`build`](Self::build).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadinessSummary {
    /// Each declared environment's assertion status.
    pub environments: Vec<EnvironmentReadiness>,
    /// The delivery-relevant gates: what the host adds with
    /// [`with_gates`](Self::with_gates); empty for a bare checkout.
    pub gates: Vec<GateReadiness>,
    /// The required commands, in `required` order.
    pub required: Vec<CommandReadiness>,
    /// The other declared commands: reported, never blocking.
    pub optional: Vec<CommandReadiness>,
    /// How many exploratory commands were logged (not authoritative).
    pub exploratory_commands: u64,
    /// The subject fingerprints the receipts were classified against (one
    /// per distinct subject of the declared environments; empty when the
    /// summary was not built from the checkout): what a host keys work on
    /// the same state of the checkout by. Not part of the summary's JSON.
    pub subjects: Vec<Digest>,
}

impl CommandReadiness {
    /// A command and its status.
    pub fn new(command: CommandName, status: ReceiptStatus) -> Self {
        Self {
            command,
            status,
            dependencies: Vec::new(),
            tests: None,
        }
    }
}

impl CommandReadiness {
    orcho_core::setters! {
        /// The same, with the dependency checkouts its receipt was taken
        /// against.
        pub fn with_dependencies(dependencies: Vec<crate::DependencyFingerprint>);
    }
}

impl EnvironmentReadiness {
    /// An environment and its status.
    pub fn new(name: EnvName, status: EnvStatus, detail: impl Into<String>) -> Self {
        Self {
            name,
            status,
            detail: detail.into(),
        }
    }
}

impl ReadinessSummary {
    /// A summary from its parts.
    pub fn new(
        environments: Vec<EnvironmentReadiness>,
        required: Vec<CommandReadiness>,
        optional: Vec<CommandReadiness>,
        exploratory_commands: u64,
    ) -> Self {
        Self {
            environments,
            gates: Vec::new(),
            required,
            optional,
            exploratory_commands,
            subjects: Vec::new(),
        }
    }

    /// Builds a summary from classified commands and the environment
    /// receipts in `store`; `environment_holds` says whether an
    /// environment's recorded digest still describes it.
    pub fn build(
        contract: &VerificationContract,
        store: &ReceiptStore,
        classified: &[Classified],
        exploratory_commands: u64,
        environment_holds: impl Fn(&Environment, Digest) -> bool,
    ) -> Self {
        let environments = contract
            .environments
            .iter()
            .map(|env| {
                let (status, detail) = match store.load_env_receipt(&env.name) {
                    LoadedReceipt::Missing => (
                        EnvStatus::NotChecked,
                        "its assertions were never checked".to_owned(),
                    ),
                    LoadedReceipt::Invalid(reason) => (EnvStatus::Invalid, reason.to_string()),
                    LoadedReceipt::Valid(r) if !environment_holds(env, r.environment_digest) => (
                        EnvStatus::Stale,
                        "the environment changed since its assertions were checked".to_owned(),
                    ),
                    LoadedReceipt::Valid(r) => match r.results.iter().find(|a| !a.passed) {
                        Some(a) => (
                            EnvStatus::Failed,
                            format!("{} failed: {}", a.description, a.detail),
                        ),
                        None => (
                            EnvStatus::Passed,
                            format!("{} assertion(s) held", r.results.len()),
                        ),
                    },
                };
                EnvironmentReadiness {
                    name: env.name.clone(),
                    status,
                    detail,
                }
            })
            .collect();
        let entry = |c: &Classified| CommandReadiness {
            command: c.command.clone(),
            status: c.status.clone(),
            dependencies: c.dependencies.clone(),
            tests: c.tests.clone(),
        };
        Self {
            environments,
            gates: Vec::new(),
            required: classified
                .iter()
                .filter(|c| c.required)
                .map(entry)
                .collect(),
            optional: classified
                .iter()
                .filter(|c| !c.required)
                .map(entry)
                .collect(),
            exploratory_commands,
            subjects: Vec::new(),
        }
    }

    /// Whether every required command is present.
    pub fn is_ready(&self) -> bool {
        self.required.iter().all(|c| c.status.is_present())
    }

    /// The computed gaps: every required command that is not present.
    pub fn gaps(&self) -> Vec<Gap> {
        self.required
            .iter()
            .filter_map(|c| Gap::of(&c.command, &c.status))
            .collect()
    }

    /// The summary as pretty JSON, `schema` first (the document its
    /// [`Serialize`](serde::Serialize) writes).
    pub fn to_json(&self) -> String {
        let doc = SummaryV1::from(self);
        orcho_core::schema::encode(&doc)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// The summary as a short Markdown block.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let ready = if self.is_ready() {
            "ready"
        } else {
            "not ready"
        };
        let _ = writeln!(out, "### Readiness: {ready}\n");
        if !self.environments.is_empty() {
            out.push_str("Environments:\n");
            for e in &self.environments {
                status_line(&mut out, &e.name, e.status.as_str(), &e.detail);
            }
            out.push('\n');
        }
        if !self.gates.is_empty() {
            out.push_str("Delivery-relevant gates (the last attempt of each phase):\n");
            for g in &self.gates {
                let _ = write!(
                    out,
                    "- `{}` after `{}`: {} (on failure: {})",
                    g.gate, g.phase, g.outcome, g.on_fail
                );
                if !g.summary.is_empty() {
                    let _ = write!(out, ": {}", cell(&g.summary));
                }
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str("Required commands (proven by receipts, not by re-runs or messages):\n\n");
        if self.required.is_empty() {
            out.push_str("_none declared_\n");
        } else {
            out.push_str("| command | status | reason | next action |\n|---|---|---|---|\n");
            for c in &self.required {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    c.command,
                    c.status.as_str(),
                    cell(&c.status.reason()),
                    c.status.next_action().map_or("none", NextAction::as_str)
                );
            }
        }
        let proven: Vec<&CommandReadiness> = self
            .required
            .iter()
            .chain(&self.optional)
            .filter(|c| c.status.is_present() && !c.dependencies.is_empty())
            .collect();
        if !proven.is_empty() {
            out.push_str("\nDependencies the present receipts were proven against:\n");
            for c in proven {
                let deps: Vec<String> = c
                    .dependencies
                    .iter()
                    .map(|d| format!("`{}` at {}", d.name, d.provenance()))
                    .collect();
                let _ = writeln!(out, "- `{}`: {}", c.command, deps.join("; "));
            }
        }
        if !self.optional.is_empty() {
            out.push_str("\nOptional commands (reported, never blocking):\n");
            for c in &self.optional {
                status_line(&mut out, &c.command, c.status.as_str(), &c.status.reason());
            }
        }
        let _ = writeln!(
            out,
            "\nExploratory commands: {} (not authoritative; they never satisfy a requirement)",
            self.exploratory_commands
        );
        out
    }
}

impl ReadinessSummary {
    orcho_core::setters! {
        /// The summary with its delivery-relevant gates. They are reported, as
        /// the reviewer's context; readiness and acceptance read receipts only.
        pub fn with_gates(gates: Vec<GateReadiness>);
    }
}

/// ``- `name`: status (detail)``, a line of a Markdown list.
fn status_line(out: &mut String, name: &dyn fmt::Display, status: &str, detail: &str) {
    let _ = writeln!(out, "- `{name}`: {status} ({})", cell(detail));
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A required command that is not proven, and what to do about it: the
/// one typed form of a receipt gap, from the readiness summary to the
/// acceptance verdict, the delivery gate and the follow-up's blockers.
/// Waivers are decided elsewhere: filter gaps by [`command`](Self::command).
///
/// ```
/// use orcho_receipts::{Gap, GapStatus, NextAction};
///
/// let gap = Gap::new("test".parse()?, GapStatus::Stale, "the checkout changed", NextAction::Rerun);
/// assert_eq!(gap.to_string(), "`test` stale (re-run)");
/// let finding = gap.to_finding();
/// assert_eq!(finding.key.as_deref(), Some("receipt:test"));
/// assert_eq!(Gap::command_of(&finding), Some("test"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    command: CommandName,
    status: GapStatus,
    reason: String,
    next_action: NextAction,
}

/// How a required command is not proven: a [`ReceiptStatus`] other than
/// present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GapStatus {
    /// No receipt.
    Missing,
    /// The receipt records a failure.
    Failed,
    /// The receipt passed, but no test ran.
    Vacuous,
    /// The receipt passed against something that changed since.
    Stale,
    /// The receipt cannot be trusted.
    Invalid,
}

orcho_core::spelled!(GapStatus {
    Missing => "missing",
    Failed => "failed",
    Vacuous => "vacuous",
    Stale => "stale",
    Invalid => "invalid",
});

impl GapStatus {
    /// The gap status of a receipt status, `None` when present.
    pub fn of(status: &ReceiptStatus) -> Option<Self> {
        match status {
            ReceiptStatus::Present => None,
            ReceiptStatus::Missing | ReceiptStatus::Deleted { .. } => Some(Self::Missing),
            ReceiptStatus::Failed { .. } => Some(Self::Failed),
            ReceiptStatus::Vacuous { .. } => Some(Self::Vacuous),
            ReceiptStatus::Stale(_) => Some(Self::Stale),
            ReceiptStatus::Invalid(_) => Some(Self::Invalid),
        }
    }
}

impl Gap {
    /// The key prefix of the findings gaps become: `receipt:<command>`.
    pub const FINDING_KEY_PREFIX: &'static str = "receipt:";

    /// A gap from its parts (for example read back from a document).
    pub fn new(
        command: CommandName,
        status: GapStatus,
        reason: impl Into<String>,
        next_action: NextAction,
    ) -> Self {
        Self {
            command,
            status,
            reason: reason.into(),
            next_action,
        }
    }

    /// The gap of a classified command, `None` when it is present.
    pub fn of(command: &CommandName, status: &ReceiptStatus) -> Option<Self> {
        Some(Self {
            command: command.clone(),
            status: GapStatus::of(status)?,
            reason: status.reason(),
            next_action: status.next_action()?,
        })
    }

    orcho_core::getters! {
        /// The command's name.
        pub fn command(&self) -> &CommandName;
        /// How it is not proven.
        pub fn status(&self) -> GapStatus;
        /// Why, in one line.
        pub fn reason(&self) -> &str;
        /// Fix for failed, re-run for missing and stale, investigate for invalid.
        pub fn next_action(&self) -> NextAction;
    }

    /// The finding this gap becomes at acceptance: keyed
    /// `receipt:<command>`, so that a waiver covers exactly that command.
    pub fn to_finding(&self) -> Finding {
        Finding::new(
            "acceptance",
            Severity::High,
            format!(
                "required command `{}` is not proven ({}: {})",
                self.command, self.status, self.reason
            ),
        )
        .with_detail(format!("next action: {}", self.next_action))
        .with_key(format!("{}{}", Self::FINDING_KEY_PREFIX, self.command))
    }

    /// The command a gap's finding is about, for a finding made by
    /// [`to_finding`](Self::to_finding).
    pub fn command_of(finding: &Finding) -> Option<&str> {
        finding
            .key
            .as_deref()?
            .strip_prefix(Self::FINDING_KEY_PREFIX)
    }
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` {} ({})",
            self.command, self.status, self.next_action
        )
    }
}

/// The outcome of the acceptance rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Acceptance {
    /// What the reviewer said.
    pub reviewer: Verdict,
    /// The verdict that stands: rejected whenever there is a gap.
    pub verdict: Verdict,
    /// The computed gaps.
    pub gaps: Vec<Gap>,
}

impl Acceptance {
    /// Whether the gaps overrode the reviewer.
    pub fn was_forced(&self) -> bool {
        self.verdict != self.reviewer
    }

    /// The gaps of one command.
    pub fn gaps_for<'a>(&'a self, command: &'a str) -> impl Iterator<Item = &'a Gap> + 'a {
        self.gaps
            .iter()
            .filter(move |g| g.command.as_str() == command)
    }
}

/// The acceptance rule: every required command that is not present is a
/// computed gap, and any gap forces the verdict to
/// [`Verdict::Rejected`], whatever the reviewer said.
///
/// ```
/// use orcho_core::Verdict;
/// use orcho_receipts::{apply_acceptance, CommandReadiness, NextAction, ReadinessSummary, ReceiptStatus};
///
/// let summary = ReadinessSummary::new(
///     Vec::new(),
///     vec![
///         CommandReadiness::new("test".parse()?, ReceiptStatus::Present),
///         CommandReadiness::new("lint".parse()?, ReceiptStatus::Missing),
///     ],
///     Vec::new(),
///     0,
/// );
/// let acceptance = apply_acceptance(Verdict::Approved, &summary);
/// assert_eq!(acceptance.verdict, Verdict::Rejected);
/// assert!(acceptance.was_forced());
/// assert_eq!(acceptance.gaps.len(), 1);
/// assert_eq!(acceptance.gaps_for("lint").next().unwrap().next_action(), NextAction::Rerun);
/// # Ok::<(), orcho_receipts::NameError>(())
/// ```
pub fn apply_acceptance(reviewer: Verdict, summary: &ReadinessSummary) -> Acceptance {
    let gaps = summary.gaps();
    let verdict = if gaps.is_empty() {
        reviewer
    } else {
        Verdict::Rejected
    };
    Acceptance {
        reviewer,
        verdict,
        gaps,
    }
}

/// One command the agent ran outside the contract while debugging.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExploratoryEntry {
    /// When it ran.
    pub at: Timestamp,
    /// What ran.
    pub argv: Vec<String>,
    /// Its exit code, if known.
    pub exit_code: Option<i32>,
    /// Where it ran, if known.
    pub cwd: Option<Utf8PathBuf>,
}

impl ExploratoryEntry {
    /// An entry.
    pub fn new(at: Timestamp, argv: Vec<String>, exit_code: Option<i32>) -> Self {
        Self {
            at,
            argv,
            exit_code,
            cwd: None,
        }
    }

    /// The same entry, saying where it ran.
    #[must_use]
    pub fn with_cwd(mut self, cwd: Option<Utf8PathBuf>) -> Self {
        self.cwd = cwd;
        self
    }

    /// Always `false`: an exploratory command proves nothing.
    pub fn is_authoritative(&self) -> bool {
        false
    }
}

/// The exploratory-command log: a journal of commands run while debugging,
/// counted in the summary and labelled not authoritative. Nothing in it
/// ever satisfies a requirement: classification reads only receipts.
#[derive(Debug, Clone)]
pub struct ExploratoryLog {
    path: Utf8PathBuf,
}

impl ExploratoryLog {
    /// The log of `store` (`receipts/_exploratory/log.jsonl`).
    pub fn new(store: &ReceiptStore) -> Self {
        Self {
            path: store.receipts_dir().join(EXPLORATORY_DIR).join("log.jsonl"),
        }
    }

    fn err(&self, kind: ReceiptErrorKind) -> ReceiptError {
        ReceiptError::new(format_args!("exploratory log `{}`", self.path), kind)
    }

    /// Appends an entry.
    ///
    /// # Errors
    ///
    /// When the journal cannot be created or written.
    pub fn record(&self, entry: &ExploratoryEntry) -> Result<(), ReceiptError> {
        if let Some(dir) = self.path.parent() {
            orcho_core::fs::create_dir_all(dir).map_err(|e| self.err(ReceiptErrorKind::Fs(e)))?;
        }
        let mut journal =
            Journal::open(&self.path).map_err(|e| self.err(ReceiptErrorKind::Journal(e)))?;
        journal
            .append(&ExploratoryV1 {
                schema: EXPLORATORY_SCHEMA,
                at: entry.at,
                argv: entry.argv.clone(),
                exit_code: entry.exit_code,
                cwd: entry.cwd.clone(),
                authoritative: false,
            })
            .map_err(|e| self.err(ReceiptErrorKind::Journal(e)))
    }

    /// Every entry this build can read (entries from a newer schema are
    /// counted by [`count`](Self::count) but not returned).
    ///
    /// # Errors
    ///
    /// When the journal cannot be read or a line before the last is corrupt.
    pub fn entries(&self) -> Result<Vec<ExploratoryEntry>, ReceiptError> {
        let read = Journal::read::<ExploratoryV1>(&self.path, EXPLORATORY_SCHEMA)
            .map_err(|e| self.err(ReceiptErrorKind::Journal(e)))?;
        Ok(read
            .records
            .into_iter()
            .map(|r| ExploratoryEntry::new(r.at, r.argv, r.exit_code).with_cwd(r.cwd))
            .collect())
    }

    /// How many exploratory commands were logged.
    ///
    /// # Errors
    ///
    /// As [`entries`](Self::entries).
    pub fn count(&self) -> Result<u64, ReceiptError> {
        let read = Journal::read::<ExploratoryV1>(&self.path, EXPLORATORY_SCHEMA)
            .map_err(|e| self.err(ReceiptErrorKind::Journal(e)))?;
        Ok(read.records.len() as u64 + read.skipped_newer as u64)
    }
}

/// Writes the summary's JSON document, `schema` first, as
/// [`to_json`](ReadinessSummary::to_json) prints it.
impl Serialize for ReadinessSummary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SummaryV1::from(self).serialize(serializer)
    }
}

/// The summary's JSON form.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryV1 {
    schema: SchemaVersion,
    ready: bool,
    environments: Vec<EnvV1>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    gates: Vec<GateV1>,
    required: Vec<CommandV1>,
    optional: Vec<CommandV1>,
    exploratory: ExploratoryCountV1,
}

impl Document for SummaryV1 {
    const KIND: &'static str = "readiness summary";
    const SCHEMA: SchemaVersion = SUMMARY_SCHEMA;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvV1 {
    name: EnvName,
    status: String,
    detail: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateV1 {
    phase: String,
    gate: String,
    outcome: String,
    on_fail: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    summary: String,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandV1 {
    command: CommandName,
    status: String,
    reason: String,
    next_action: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    stale_reasons: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dependencies: Vec<DependencyProvenanceV1>,
    tests: Option<TestsSummaryV1>,
}

/// What a command's test runner reported, in the summary.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestsSummaryV1 {
    runners: Vec<String>,
    passed: u64,
    failed: u64,
    skipped: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    not_run: BTreeMap<String, u64>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DependencyProvenanceV1 {
    name: EnvName,
    path: Utf8PathBuf,
    fingerprint: Option<String>,
    commit: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExploratoryCountV1 {
    count: u64,
    authoritative: bool,
    note: String,
}

impl From<&CommandReadiness> for CommandV1 {
    fn from(c: &CommandReadiness) -> Self {
        let stale_reasons = match &c.status {
            ReceiptStatus::Stale(reasons) | ReceiptStatus::Failed { stale: reasons, .. } => {
                reasons.iter().map(ToString::to_string).collect()
            }
            _ => Vec::new(),
        };
        Self {
            command: c.command.clone(),
            status: c.status.as_str().to_owned(),
            reason: c.status.reason(),
            next_action: c.status.next_action().map(|a| a.as_str().to_owned()),
            stale_reasons,
            dependencies: c
                .dependencies
                .iter()
                .map(|d| DependencyProvenanceV1 {
                    name: d.name.clone(),
                    path: d.path.clone(),
                    fingerprint: d.fingerprint.map(|f| f.to_string()),
                    commit: d.commit.clone(),
                })
                .collect(),
            tests: c.tests.as_ref().map(|t| TestsSummaryV1 {
                runners: t.runners.clone(),
                passed: t.passed,
                failed: t.failed,
                skipped: t.skipped,
                not_run: t.not_run.clone(),
            }),
        }
    }
}

impl From<&ReadinessSummary> for SummaryV1 {
    fn from(s: &ReadinessSummary) -> Self {
        Self {
            schema: SUMMARY_SCHEMA,
            ready: s.is_ready(),
            environments: s
                .environments
                .iter()
                .map(|e| EnvV1 {
                    name: e.name.clone(),
                    status: e.status.as_str().to_owned(),
                    detail: e.detail.clone(),
                })
                .collect(),
            gates: s
                .gates
                .iter()
                .map(|g| GateV1 {
                    phase: g.phase.clone(),
                    gate: g.gate.clone(),
                    outcome: g.outcome.clone(),
                    on_fail: g.on_fail.clone(),
                    summary: g.summary.clone(),
                })
                .collect(),
            required: s.required.iter().map(CommandV1::from).collect(),
            optional: s.optional.iter().map(CommandV1::from).collect(),
            exploratory: ExploratoryCountV1 {
                count: s.exploratory_commands,
                authoritative: false,
                note: "exploratory commands are not authoritative and never satisfy a requirement"
                    .to_owned(),
            },
        }
    }
}
