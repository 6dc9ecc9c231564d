//! The delivery gate: where a run that reached a release state parks until
//! somebody decides what happens to its changes.
//!
//! The run's changes live in a *retained worktree* (a git worktree or
//! checkout holding the run's result); the *target* is the user's checkout.
//! [`DeliveryGates::open`] captures, once, the run's diff against the
//! commit it started from (tracked edits, deletions and untracked files, as
//! a binary patch kept with the run and identified by its digest), the
//! release verdict, the receipt gaps and the menu of actions:
//!
//! | action | effect on the target | allowed when |
//! |---|---|---|
//! | `approve` | commits exactly the run's diff (message from the operator or the release summary) | the release is approved, no required receipt is missing, the diff is not empty, and the target does not conflict |
//! | `apply` | applies the diff, uncommitted | as `approve` |
//! | `fix` | none; produces a [`FollowUpSpec`] (the run is correction-ready) | the release is rejected, and the follow-up guard does not stop the chain |
//! | `skip` | none; closes the gate | always |
//! | `halt` | none; the retained worktree is left for inspection | always |
//!
//! Deciding and delivering are two steps, as for phase handoffs:
//! [`DeliveryGates::decide`] records the one decision of the gate through
//! the shared [`DecisionSlot`] (first writer wins across processes, an
//! identical decision is an idempotent replay, a different one a
//! conflict), and [`DeliveryGates::deliver`] acts on the
//! [`RecordedDecision`] and records the [`DeliveryOutcome`].
//!
//! **The target is never half-written.** Before `approve` or `apply`
//! touches it, `git apply --check` must pass and none of the target's own
//! uncommitted changes may touch a file of the diff; otherwise the typed
//! [`TargetStatus::Conflicting`] refuses the action and leaves the target as
//! it was (and the gate decidable: `skip`, `halt`, or a retry once the
//! target is cleaned up). `approve` commits only the diff's paths
//! (`git commit --only`), so changes the user had staged stay staged and
//! uncommitted; if the commit itself fails (a hook refuses it), the applied
//! diff is taken back out.
//!
//! Layout, under the store root:
//!
//! ```text
//! runs/<run>/delivery/gate.json      the gate (written once)
//! runs/<run>/delivery/run.patch      the run's diff, binary-safe (digest in gate.json)
//! runs/<run>/delivery/outcome.json   what delivering the decision did (written once)
//! runs/<run>/decisions/delivery.json the decision (shared decision slot)
//! ```
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use orcho_core::{SystemClock, Verdict};
//! use orcho_handoff::{DecidedBy, DecisionRequest, DeliveryChoice, DeliveryGates, DeliveryOutcome, DeliverySpec};
//! use orcho_receipts::ReadinessSummary;
//!
//! let gates = DeliveryGates::new(".orcho", Arc::new(SystemClock::new()));
//! let readiness = ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0);
//! let gate = gates.open(
//!     DeliverySpec::new("run-1".parse()?, Verdict::Approved, ".orcho/worktrees/run-1", "HEAD", ".", &readiness)
//!         .with_release_summary("Parse empty input as an empty list"),
//! )?;
//! println!("{} files, +{} -{}", gate.diff().files_changed(), gate.diff().insertions(), gate.diff().deletions());
//!
//! let decision = gates.decide(gate.run(), DecisionRequest::new(DeliveryChoice::approve(), DecidedBy::Operator))?;
//! if let DeliveryOutcome::Committed { commit, .. } = gates.deliver(&decision)? {
//!     println!("committed {commit}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::{collections::BTreeSet, fmt, str::FromStr, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, Finding, HandoffId, RunId, Timestamp, Verdict,
    fs::{self, LockFile},
    schema,
};
use orcho_receipts::ReadinessSummary;

use crate::{
    decision::{Decision, DecisionPayload, DecisionRequest, DecisionSlot, RecordedDecision},
    error::{DeliveryChoiceError, DeliveryError, DeliveryErrorKind, UnknownActionError},
    followup::{BlockerSet, FollowUpGuard, FollowUpLink, FollowUpSpec, NonConvergence},
    format::delivery::{DeliveryChoiceRepr, GateDoc, OutcomeDoc},
    git::Git,
};

/// The context of patch digests.
pub const PATCH_DIGEST_CONTEXT: &str = "orcho delivery patch v1";

/// The decision point id of a run's delivery gate: its decision lives at
/// `runs/<run>/decisions/delivery.json`.
pub const DELIVERY_POINT: &str = "delivery";

/// What can be decided at a delivery gate.
///
/// Spelled `approve`, `apply`, `fix`, `skip`, `halt`; [`FromStr`] also
/// accepts upper case.
///
/// ```
/// use orcho_handoff::DeliveryAction;
///
/// assert_eq!("fix".parse::<DeliveryAction>()?, DeliveryAction::Fix);
/// assert!(DeliveryAction::Approve.changes_target());
/// assert!(!DeliveryAction::Skip.changes_target());
/// # Ok::<(), orcho_handoff::UnknownActionError>(())
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryAction {
    /// Commit the run's diff into the target checkout.
    Approve,
    /// Apply the run's diff to the target checkout, uncommitted.
    Apply,
    /// After a rejected release: start a correction follow-up.
    Fix,
    /// Close the gate; change nothing.
    Skip,
    /// Stop; leave the retained worktree for manual inspection.
    Halt,
}

impl DeliveryAction {
    /// Every action, in menu order.
    pub const ALL: [Self; 5] = [
        Self::Approve,
        Self::Apply,
        Self::Fix,
        Self::Skip,
        Self::Halt,
    ];

    /// The snake_case spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Apply => "apply",
            Self::Fix => "fix",
            Self::Skip => "skip",
            Self::Halt => "halt",
        }
    }

    /// Whether the action writes to the target checkout.
    pub fn changes_target(self) -> bool {
        match self {
            Self::Approve | Self::Apply => true,
            Self::Fix | Self::Skip | Self::Halt => false,
        }
    }

    fn bit(self) -> u8 {
        match self {
            Self::Approve => 1,
            Self::Apply => 2,
            Self::Fix => 4,
            Self::Skip => 8,
            Self::Halt => 16,
        }
    }
}

impl fmt::Display for DeliveryAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DeliveryAction {
    type Err = UnknownActionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                UnknownActionError::new("delivery", s, "approve, apply, fix, skip, halt")
            })
    }
}

/// The set of actions a delivery gate offers, in menu order. Serialized as
/// a JSON list of spellings.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DeliveryActions(u8);

impl DeliveryActions {
    /// Whether `action` is on the menu.
    pub fn contains(self, action: DeliveryAction) -> bool {
        self.0 & action.bit() != 0
    }

    /// The actions, in menu order.
    pub fn iter(self) -> impl Iterator<Item = DeliveryAction> {
        DeliveryAction::ALL
            .into_iter()
            .filter(move |a| self.contains(*a))
    }

    /// How many actions are on the menu.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the menu is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<DeliveryAction> for DeliveryActions {
    fn from_iter<I: IntoIterator<Item = DeliveryAction>>(iter: I) -> Self {
        Self(iter.into_iter().fold(0, |set, a| set | a.bit()))
    }
}

impl fmt::Display for DeliveryActions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, action) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(action.as_str())?;
        }
        Ok(())
    }
}

impl fmt::Debug for DeliveryActions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl serde::Serialize for DeliveryActions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for DeliveryActions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<DeliveryAction>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

/// A required verification receipt that is not present for the delivered
/// state: a computed gap of the readiness summary, as the gate records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptGap {
    pub(crate) command: String,
    pub(crate) status: String,
    pub(crate) reason: String,
    pub(crate) next_action: String,
}

impl ReceiptGap {
    /// The command's name.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its receipt status: `missing`, `failed`, `stale` or `invalid`.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The one-line reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// What to do: `fix`, `re-run` or `investigate`.
    pub fn next_action(&self) -> &str {
        &self.next_action
    }
}

impl From<&orcho_receipts::Gap> for ReceiptGap {
    fn from(gap: &orcho_receipts::Gap) -> Self {
        Self {
            command: gap.command.as_str().to_owned(),
            status: gap.status.as_str().to_owned(),
            reason: gap.status.reason(),
            next_action: gap.next_action.as_str().to_owned(),
        }
    }
}

impl fmt::Display for ReceiptGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` {} ({})",
            self.command, self.status, self.next_action
        )
    }
}

/// Why an action is not on a gate's menu.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeliveryBlock {
    /// `approve` and `apply` need an approved release.
    ReleaseNotApproved {
        /// The release verdict.
        verdict: Verdict,
    },
    /// `approve` and `apply` need every required receipt present.
    MissingReceipts {
        /// The commands whose receipts are not present.
        commands: Vec<String>,
    },
    /// `approve` and `apply` need a non-empty diff.
    NothingToDeliver,
    /// `fix` needs a rejected release.
    FixNeedsRejection {
        /// The release verdict.
        verdict: Verdict,
    },
    /// `fix` would start a follow-up that the guard stops.
    NoProgress(NonConvergence),
}

impl fmt::Display for DeliveryBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReleaseNotApproved { verdict } => {
                write!(f, "the release verdict is {verdict}, not approved")
            }
            Self::MissingReceipts { commands } => write!(
                f,
                "required receipts are not present for the delivered state: {}",
                commands
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::NothingToDeliver => f.write_str("the run changed nothing"),
            Self::FixNeedsRejection { verdict } => write!(
                f,
                "`fix` is valid only after a rejected release; the release verdict is {verdict}"
            ),
            Self::NoProgress(stop) => stop.fmt(f),
        }
    }
}

/// An action that is not on the menu, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedAction {
    pub(crate) action: DeliveryAction,
    pub(crate) reason: DeliveryBlock,
}

impl BlockedAction {
    /// The action.
    pub fn action(&self) -> DeliveryAction {
        self.action
    }

    /// Why it is blocked.
    pub fn reason(&self) -> &DeliveryBlock {
        &self.reason
    }
}

/// One file the run changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub(crate) path: Utf8PathBuf,
    pub(crate) lines: Option<(u64, u64)>,
    pub(crate) untracked: bool,
}

impl FileChange {
    /// The path, relative to the checkout root.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Lines added, or `None` for a binary file.
    pub fn insertions(&self) -> Option<u64> {
        self.lines.map(|(i, _)| i)
    }

    /// Lines removed, or `None` for a binary file.
    pub fn deletions(&self) -> Option<u64> {
        self.lines.map(|(_, d)| d)
    }

    /// Whether the file is binary.
    pub fn is_binary(&self) -> bool {
        self.lines.is_none()
    }

    /// Whether the file was untracked in the retained worktree (a new file
    /// the run never added to git).
    pub fn is_untracked(&self) -> bool {
        self.untracked
    }
}

/// The diff summary of a run: its files, insertions and deletions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffSummary {
    pub(crate) files: Vec<FileChange>,
}

impl DiffSummary {
    /// Every changed file, in path order.
    pub fn files(&self) -> &[FileChange] {
        &self.files
    }

    /// How many files changed.
    pub fn files_changed(&self) -> usize {
        self.files.len()
    }

    /// Lines added (binary files count none).
    pub fn insertions(&self) -> u64 {
        self.files.iter().filter_map(FileChange::insertions).sum()
    }

    /// Lines removed (binary files count none).
    pub fn deletions(&self) -> u64 {
        self.files.iter().filter_map(FileChange::deletions).sum()
    }

    /// The files that were untracked in the retained worktree.
    pub fn untracked(&self) -> impl Iterator<Item = &Utf8Path> {
        self.files
            .iter()
            .filter(|f| f.untracked)
            .map(|f| f.path.as_path())
    }

    /// Whether the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

impl fmt::Display for DiffSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} changed, {} {}(+), {} {}(-)",
            self.files_changed(),
            plural(self.files_changed() as u64, "file", "files"),
            self.insertions(),
            plural(self.insertions(), "insertion", "insertions"),
            self.deletions(),
            plural(self.deletions(), "deletion", "deletions"),
        )
    }
}

/// git's wording: "1 file", "2 files".
fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// What the engine knows when a run reaches its release state: the input of
/// [`DeliveryGates::open`].
#[derive(Debug, Clone, PartialEq)]
pub struct DeliverySpec {
    run: RunId,
    reviewer_verdict: Verdict,
    worktree: Utf8PathBuf,
    base: String,
    target: Utf8PathBuf,
    gaps: Vec<ReceiptGap>,
    release_summary: Option<String>,
    findings: Vec<Finding>,
    follow_up: Option<FollowUpLink>,
}

impl DeliverySpec {
    /// A gate for `run` whose release reviewer said `verdict`; the run's
    /// result is in the git `worktree`, started from the commit `base`
    /// (any revision git resolves, recorded as a commit id), and is
    /// delivered to the `target` checkout.
    ///
    /// `readiness` is the readiness summary of the receipts for the
    /// delivered state (the retained worktree as it is now; build it with
    /// [`Verifier::readiness`](orcho_receipts::Verifier::readiness)). Its
    /// computed gaps are recorded, and any gap forces the release verdict
    /// to rejected ([`orcho_receipts::apply_acceptance`]): approve and apply
    /// are then blocked, with the gaps listed. A run without a
    /// verification contract passes an empty summary.
    pub fn new(
        run: RunId,
        verdict: Verdict,
        worktree: impl Into<Utf8PathBuf>,
        base: impl Into<String>,
        target: impl Into<Utf8PathBuf>,
        readiness: &ReadinessSummary,
    ) -> Self {
        Self {
            run,
            reviewer_verdict: verdict,
            worktree: worktree.into(),
            base: base.into(),
            target: target.into(),
            gaps: readiness.gaps().iter().map(ReceiptGap::from).collect(),
            release_summary: None,
            findings: Vec::new(),
            follow_up: None,
        }
    }

    /// The release summary: the default commit message of `approve`.
    #[must_use]
    pub fn with_release_summary(mut self, summary: impl Into<String>) -> Self {
        let summary = summary.into();
        self.release_summary = (!summary.trim().is_empty()).then_some(summary);
        self
    }

    /// The release's findings (the input of a follow-up after `fix`).
    #[must_use]
    pub fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self
    }

    /// Marks the run as a correction follow-up of another
    /// ([`FollowUpSpec::link`]), so that `fix` is checked by the guard.
    #[must_use]
    pub fn with_follow_up(mut self, link: FollowUpLink) -> Self {
        self.follow_up = Some(link);
        self
    }

    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }
}

/// A run parked at its delivery gate: what an operator sees and decides on.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryGate {
    pub(crate) run: RunId,
    pub(crate) reviewer_verdict: Verdict,
    pub(crate) verdict: Verdict,
    pub(crate) worktree: Utf8PathBuf,
    pub(crate) base: String,
    pub(crate) target: Utf8PathBuf,
    pub(crate) diff: DiffSummary,
    pub(crate) patch_digest: Digest,
    pub(crate) available_actions: DeliveryActions,
    pub(crate) blocked: Vec<BlockedAction>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) gaps: Vec<ReceiptGap>,
    pub(crate) release_summary: Option<String>,
    pub(crate) follow_up_of: Option<FollowUpLink>,
    pub(crate) created_at: Timestamp,
}

impl DeliveryGate {
    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }

    /// The release verdict that stands: the reviewer's, forced to rejected
    /// by any receipt gap.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// What the release reviewer said.
    pub fn reviewer_verdict(&self) -> Verdict {
        self.reviewer_verdict
    }

    /// The retained worktree holding the run's result.
    pub fn worktree(&self) -> &Utf8Path {
        &self.worktree
    }

    /// The commit the run started from.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The target checkout.
    pub fn target(&self) -> &Utf8Path {
        &self.target
    }

    /// What the run changed.
    pub fn diff(&self) -> &DiffSummary {
        &self.diff
    }

    /// The digest of the run's patch (context [`PATCH_DIGEST_CONTEXT`]).
    pub fn patch_digest(&self) -> Digest {
        self.patch_digest
    }

    /// The actions a decision may take.
    pub fn available_actions(&self) -> DeliveryActions {
        self.available_actions
    }

    /// The actions that are not available, with the reason.
    pub fn blocked(&self) -> &[BlockedAction] {
        &self.blocked
    }

    /// Why `action` is not available, if it is not.
    pub fn blocked_reason(&self, action: DeliveryAction) -> Option<&DeliveryBlock> {
        self.blocked
            .iter()
            .find(|b| b.action == action)
            .map(|b| &b.reason)
    }

    /// The release's findings.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// The required receipts not present for the delivered state.
    pub fn gaps(&self) -> &[ReceiptGap] {
        &self.gaps
    }

    /// The release summary, if any.
    pub fn release_summary(&self) -> Option<&str> {
        self.release_summary.as_deref()
    }

    /// The parent, when this run is a correction follow-up.
    pub fn follow_up_of(&self) -> Option<&FollowUpLink> {
        self.follow_up_of.as_ref()
    }

    /// When the gate opened.
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }

    /// The blockers of this release (findings and gaps).
    pub fn blockers(&self) -> BlockerSet {
        BlockerSet::new(&self.findings, &self.gaps)
    }

    /// The commit message `approve` uses with this choice: the operator's,
    /// else the release summary, else `Deliver run <run>`.
    pub fn commit_message(&self, choice: &DeliveryChoice) -> String {
        choice
            .message
            .clone()
            .or_else(|| self.release_summary.clone())
            .unwrap_or_else(|| format!("Deliver run {}", self.run))
    }

    /// The menu: every action, available or blocked with its reason.
    fn menu(
        verdict: Verdict,
        gaps: &[ReceiptGap],
        diff: &DiffSummary,
        blockers: &BlockerSet,
        follow_up: Option<&FollowUpLink>,
        guard: &FollowUpGuard,
    ) -> (DeliveryActions, Vec<BlockedAction>) {
        let mut blocked = Vec::new();
        let delivery_block = if verdict != Verdict::Approved {
            Some(DeliveryBlock::ReleaseNotApproved { verdict })
        } else if !gaps.is_empty() {
            Some(DeliveryBlock::MissingReceipts {
                commands: gaps.iter().map(|g| g.command.clone()).collect(),
            })
        } else if diff.is_empty() {
            Some(DeliveryBlock::NothingToDeliver)
        } else {
            None
        };
        if let Some(reason) = delivery_block {
            for action in [DeliveryAction::Approve, DeliveryAction::Apply] {
                blocked.push(BlockedAction {
                    action,
                    reason: reason.clone(),
                });
            }
        }
        let fix_block = if verdict != Verdict::Rejected {
            Some(DeliveryBlock::FixNeedsRejection { verdict })
        } else {
            follow_up
                .and_then(|link| guard.check(link, blockers).err())
                .or_else(|| {
                    let generation = follow_up.map_or(1, |l| l.generation.saturating_add(1));
                    (generation > guard.max_generations()).then(|| {
                        NonConvergence::TooManyGenerations {
                            generation,
                            max: guard.max_generations(),
                        }
                    })
                })
                .map(DeliveryBlock::NoProgress)
        };
        if let Some(reason) = fix_block {
            blocked.push(BlockedAction {
                action: DeliveryAction::Fix,
                reason,
            });
        }
        let available = DeliveryAction::ALL
            .into_iter()
            .filter(|a| !blocked.iter().any(|b| b.action == *a))
            .collect();
        (available, blocked)
    }
}

/// The state of the target checkout, checked live before `approve` or
/// `apply` is decided and again before it is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetStatus {
    /// No uncommitted changes.
    Clean,
    /// Uncommitted changes that do not touch the run's files; the diff
    /// applies.
    Dirty {
        /// The changed (or untracked) paths.
        paths: Vec<Utf8PathBuf>,
    },
    /// The diff would conflict: the target's own changes touch the run's
    /// files, or `git apply --check` fails. `approve` and `apply` are
    /// refused; the gate stays decidable.
    Conflicting {
        /// The target's uncommitted paths.
        dirty: Vec<Utf8PathBuf>,
        /// Those of them the run also changed.
        overlapping: Vec<Utf8PathBuf>,
        /// What `git apply --check` said, when it failed.
        apply_check: Option<String>,
    },
}

impl TargetStatus {
    /// Whether the run's diff would conflict with the target.
    pub fn is_conflicting(&self) -> bool {
        matches!(self, Self::Conflicting { .. })
    }

    /// Whether the target has no uncommitted changes.
    pub fn is_clean(&self) -> bool {
        matches!(self, Self::Clean)
    }
}

impl fmt::Display for TargetStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Clean => f.write_str("clean"),
            Self::Dirty { paths } => {
                write!(f, "dirty ({} paths, none the run changed)", paths.len())
            }
            Self::Conflicting {
                overlapping,
                apply_check,
                ..
            } => {
                f.write_str("conflicting")?;
                if !overlapping.is_empty() {
                    write!(
                        f,
                        ": uncommitted changes to {}",
                        overlapping
                            .iter()
                            .map(|p| format!("`{p}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )?;
                }
                if let Some(check) = apply_check {
                    let first = check.lines().next().unwrap_or_default();
                    write!(f, "; git apply --check: {first}")?;
                }
                Ok(())
            }
        }
    }
}

/// A delivery decision: the action, the commit message (`approve` only)
/// and a note. The payload of the gate's decision record
/// (`{"action": …, "message": …, "note": …}`).
///
/// ```
/// use orcho_handoff::{DeliveryAction, DeliveryChoice};
///
/// let choice = DeliveryChoice::approve_with_message("Parse empty input")?.with_note("looks good");
/// assert_eq!(choice.action(), DeliveryAction::Approve);
/// assert!(DeliveryChoice::from_parts(DeliveryAction::Skip, Some("msg".into()), None).is_err());
/// # Ok::<(), orcho_handoff::DeliveryChoiceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "DeliveryChoiceRepr", try_from = "DeliveryChoiceRepr")]
pub struct DeliveryChoice {
    pub(crate) action: DeliveryAction,
    pub(crate) message: Option<String>,
    pub(crate) note: Option<String>,
}

impl DeliveryChoice {
    /// `approve`, with the release summary as the commit message.
    pub fn approve() -> Self {
        Self::bare(DeliveryAction::Approve)
    }

    /// `approve` with the operator's commit message.
    ///
    /// # Errors
    ///
    /// When the message is blank.
    pub fn approve_with_message(message: impl Into<String>) -> Result<Self, DeliveryChoiceError> {
        Self::from_parts(DeliveryAction::Approve, Some(message.into()), None)
    }

    /// `apply`.
    pub fn apply() -> Self {
        Self::bare(DeliveryAction::Apply)
    }

    /// `fix`.
    pub fn fix() -> Self {
        Self::bare(DeliveryAction::Fix)
    }

    /// `skip`.
    pub fn skip() -> Self {
        Self::bare(DeliveryAction::Skip)
    }

    /// `halt`.
    pub fn halt() -> Self {
        Self::bare(DeliveryAction::Halt)
    }

    fn bare(action: DeliveryAction) -> Self {
        Self {
            action,
            message: None,
            note: None,
        }
    }

    /// A choice from its parts, validated.
    ///
    /// # Errors
    ///
    /// A message on another action than `approve`, or a blank message.
    pub fn from_parts(
        action: DeliveryAction,
        message: Option<String>,
        note: Option<String>,
    ) -> Result<Self, DeliveryChoiceError> {
        if let Some(message) = &message {
            if action != DeliveryAction::Approve {
                return Err(DeliveryChoiceError::MessageNotAllowed(action));
            }
            if message.trim().is_empty() {
                return Err(DeliveryChoiceError::BlankMessage);
            }
        }
        Ok(Self {
            action,
            message,
            note: note.filter(|n| !n.trim().is_empty()),
        })
    }

    /// Adds a note (a blank note is dropped). For `fix`, the note goes to
    /// the follow-up.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = (!note.trim().is_empty()).then_some(note);
        self
    }

    /// The action.
    pub fn action(&self) -> DeliveryAction {
        self.action
    }

    /// The operator's commit message (`approve` only).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The note.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

impl DecisionPayload for DeliveryChoice {
    const KIND: &'static str = "delivery";

    fn label(&self) -> String {
        self.action.as_str().to_owned()
    }
}

/// What delivering a decision did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DeliveryOutcome {
    /// `approve`: the diff is committed in the target.
    Committed {
        /// The new commit.
        commit: String,
        /// Its message.
        message: String,
    },
    /// `apply`: the diff is in the target's working tree, uncommitted.
    Applied,
    /// `fix`: the run is correction-ready; start this follow-up.
    CorrectionReady(FollowUpSpec),
    /// `skip`: the gate is closed; nothing changed.
    Skipped,
    /// `halt`: nothing changed; the retained worktree is left here.
    Halted {
        /// The retained worktree.
        worktree: Utf8PathBuf,
    },
}

impl DeliveryOutcome {
    /// The action that produced it.
    pub fn action(&self) -> DeliveryAction {
        match self {
            Self::Committed { .. } => DeliveryAction::Approve,
            Self::Applied => DeliveryAction::Apply,
            Self::CorrectionReady(_) => DeliveryAction::Fix,
            Self::Skipped => DeliveryAction::Skip,
            Self::Halted { .. } => DeliveryAction::Halt,
        }
    }
}

/// Where a delivery gate stands.
#[derive(Debug, Clone, PartialEq)]
pub enum DeliveryState {
    /// Awaiting a decision.
    Open(DeliveryGate),
    /// Decided, not yet delivered.
    Decided {
        /// The gate.
        gate: DeliveryGate,
        /// The decision.
        decision: Decision<DeliveryChoice>,
    },
    /// Delivered: the outcome is recorded. Terminal.
    Delivered {
        /// The gate.
        gate: DeliveryGate,
        /// The decision.
        decision: Decision<DeliveryChoice>,
        /// What delivering did.
        outcome: DeliveryOutcome,
    },
}

impl DeliveryState {
    /// The gate.
    pub fn gate(&self) -> &DeliveryGate {
        match self {
            Self::Open(gate) | Self::Decided { gate, .. } | Self::Delivered { gate, .. } => gate,
        }
    }

    /// The decision, once recorded.
    pub fn decision(&self) -> Option<&Decision<DeliveryChoice>> {
        match self {
            Self::Open(_) => None,
            Self::Decided { decision, .. } | Self::Delivered { decision, .. } => Some(decision),
        }
    }

    /// Whether a decision is still awaited or must still be delivered.
    pub fn is_pending(&self) -> bool {
        match self {
            Self::Open(_) | Self::Decided { .. } => true,
            Self::Delivered { .. } => false,
        }
    }
}

/// The delivery gates of the runs under one store root. Synchronous; cheap
/// to clone.
///
/// See the [module docs](self) for the rules, the layout and an example.
#[derive(Debug, Clone)]
pub struct DeliveryGates {
    root: Utf8PathBuf,
    clock: Arc<dyn Clock>,
    guard: FollowUpGuard,
}

impl DeliveryGates {
    /// The gates under the store root `root` (for example `.orcho`), with
    /// the default [`FollowUpGuard`].
    pub fn new(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self {
            root: root.into(),
            clock,
            guard: FollowUpGuard::default(),
        }
    }

    /// Uses this follow-up guard for `fix`.
    #[must_use]
    pub fn with_guard(mut self, guard: FollowUpGuard) -> Self {
        self.guard = guard;
        self
    }

    /// The store root.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    pub(crate) fn dir(root: &Utf8Path, run: &RunId) -> Utf8PathBuf {
        root.join("runs").join(run.as_str()).join("delivery")
    }

    /// The gate document of a run.
    pub fn gate_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("gate.json")
    }

    /// The run's patch.
    pub fn patch_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("run.patch")
    }

    /// The outcome document of a run.
    pub fn outcome_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("outcome.json")
    }

    /// The decision slot of a run's gate.
    pub fn decision_slot(&self, run: &RunId) -> DecisionSlot<DeliveryChoice> {
        DecisionSlot::in_run(&self.root, run, &delivery_point())
    }

    fn lock(&self, run: &RunId) -> LockFile {
        LockFile::new(Self::dir(&self.root, run).join(".lock"))
    }

    /// Opens the run's delivery gate: captures the run's diff as a patch,
    /// computes the menu, and writes both. A run has one gate.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_already_open`] when the run has a gate, a git
    /// error when the worktree or the base cannot be read, or I/O.
    pub fn open(&self, spec: DeliverySpec) -> Result<DeliveryGate, DeliveryError> {
        let run = spec.run.clone();
        let err = |kind| DeliveryError::new("open the delivery gate of", &run, kind);
        let git = Git::new(&spec.worktree);
        let base = git
            .rev_parse(&spec.base)
            .map_err(|e| err(DeliveryErrorKind::Git(Box::new(e))))?;
        let (patch, numstat) = git
            .snapshot_diff(&base, None)
            .map_err(|e| err(DeliveryErrorKind::Git(Box::new(e))))?;
        let untracked: BTreeSet<Utf8PathBuf> = git
            .status()
            .map_err(|e| err(DeliveryErrorKind::Git(Box::new(e))))?
            .into_iter()
            .filter(|e| e.is_untracked())
            .map(|e| e.path)
            .collect();
        let mut files: Vec<FileChange> = numstat
            .into_iter()
            .map(|n| FileChange {
                untracked: untracked.contains(&n.path),
                path: n.path,
                lines: n.lines,
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let diff = DiffSummary { files };
        let verdict = if spec.gaps.is_empty() {
            spec.reviewer_verdict
        } else {
            Verdict::Rejected
        };
        let blockers = BlockerSet::new(&spec.findings, &spec.gaps);
        let (available_actions, blocked) = DeliveryGate::menu(
            verdict,
            &spec.gaps,
            &diff,
            &blockers,
            spec.follow_up.as_ref(),
            &self.guard,
        );
        let gate = DeliveryGate {
            run: run.clone(),
            reviewer_verdict: spec.reviewer_verdict,
            verdict,
            worktree: spec.worktree,
            base,
            target: spec.target,
            diff,
            patch_digest: Digest::derive(PATCH_DIGEST_CONTEXT, &patch),
            available_actions,
            blocked,
            findings: spec.findings,
            gaps: spec.gaps,
            release_summary: spec.release_summary,
            follow_up_of: spec.follow_up,
            created_at: self.clock.now(),
        };
        let dir = Self::dir(&self.root, &run);
        fs::create_dir_all(&dir).map_err(|e| err(DeliveryErrorKind::Fs(Box::new(e))))?;
        let _guard = self
            .lock(&run)
            .lock_exclusive()
            .map_err(|e| err(DeliveryErrorKind::Lock(Box::new(e))))?;
        let gate_path = self.gate_path(&run);
        if gate_path.exists() {
            return Err(err(DeliveryErrorKind::AlreadyOpen));
        }
        // The patch first: a gate on disk always has its patch.
        fs::write_atomic(&self.patch_path(&run), &patch)
            .map_err(|e| err(DeliveryErrorKind::Fs(Box::new(e))))?;
        let bytes = schema::encode(&GateDoc::from(gate.clone()))
            .map_err(|e| err(DeliveryErrorKind::Document(Box::new(e))))?;
        fs::write_new_atomic(&gate_path, &bytes).map_err(|e| {
            if e.is_already_exists() {
                err(DeliveryErrorKind::AlreadyOpen)
            } else {
                err(DeliveryErrorKind::Fs(Box::new(e)))
            }
        })?;
        Ok(gate)
    }

    /// Reads the run's gate.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_not_found`] when the run has no gate, or a
    /// document error.
    pub fn gate(&self, run: &RunId) -> Result<DeliveryGate, DeliveryError> {
        self.read_gate(run)
            .map_err(|kind| DeliveryError::new("read the delivery gate of", run, kind))
    }

    pub(crate) fn read_gate(&self, run: &RunId) -> Result<DeliveryGate, DeliveryErrorKind> {
        read_gate_at(&self.gate_path(run), run)
    }

    /// The target's status for the run's diff, checked now.
    ///
    /// # Errors
    ///
    /// A git error when the target cannot be read.
    pub fn target_status(&self, gate: &DeliveryGate) -> Result<TargetStatus, DeliveryError> {
        self.check_target(gate)
            .map_err(|kind| DeliveryError::new("check the target of", gate.run(), kind))
    }

    fn check_target(&self, gate: &DeliveryGate) -> Result<TargetStatus, DeliveryErrorKind> {
        let git = Git::new(&gate.target);
        let dirty: Vec<Utf8PathBuf> = git
            .status()
            .map_err(|e| DeliveryErrorKind::Git(Box::new(e)))?
            .into_iter()
            .map(|e| e.path)
            .collect();
        let changed: BTreeSet<&Utf8Path> =
            gate.diff.files.iter().map(|f| f.path.as_path()).collect();
        let overlapping: Vec<Utf8PathBuf> = dirty
            .iter()
            .filter(|p| changed.contains(p.as_path()))
            .cloned()
            .collect();
        let patch = absolute(&self.patch_path(&gate.run))?;
        let apply_check = if gate.diff.is_empty() {
            None
        } else {
            git.check(&["apply", "--check", patch.as_str()])
                .map_err(|e| DeliveryErrorKind::Git(Box::new(e)))?
                .err()
        };
        Ok(if !overlapping.is_empty() || apply_check.is_some() {
            TargetStatus::Conflicting {
                dirty,
                overlapping,
                apply_check,
            }
        } else if dirty.is_empty() {
            TargetStatus::Clean
        } else {
            TargetStatus::Dirty { paths: dirty }
        })
    }

    /// Records the decision of the run's gate. Does not touch the target:
    /// call [`deliver`](Self::deliver) next.
    ///
    /// A first decision is validated against the gate's menu and, for
    /// `approve` and `apply`, against the target's live status; a refused
    /// decision records nothing and the gate stays decidable. Once a
    /// decision is recorded, the same decision again is an idempotent
    /// replay ([`RecordedDecision::is_replay`], original time) and any
    /// other is a conflict.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_not_available`] (with the
    /// [reason](DeliveryError::blocked_reason)),
    /// [`DeliveryError::is_target_conflict`], [`DeliveryError::is_conflict`],
    /// not found, git or I/O errors.
    pub fn decide(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, DeliveryError> {
        let err = |kind| DeliveryError::new("decide the delivery gate of", run, kind);
        let gate = self.read_gate(run).map_err(err)?;
        let slot = self.decision_slot(run);
        let recorded = slot
            .read()
            .map_err(|e| err(DeliveryErrorKind::Decision(Box::new(e))))?;
        if recorded.is_none() {
            let action = request.payload().action();
            if !gate.available_actions.contains(action) {
                return Err(err(DeliveryErrorKind::NotAvailable {
                    action,
                    available: gate.available_actions,
                    reason: gate.blocked_reason(action).cloned(),
                }));
            }
            if action.changes_target() {
                let status = self.check_target(&gate).map_err(err)?;
                if status.is_conflicting() {
                    return Err(err(DeliveryErrorKind::TargetConflict(status)));
                }
            }
        }
        slot.record(request, &*self.clock)
            .map_err(|e| err(DeliveryErrorKind::Decision(Box::new(e))))
    }

    /// The recorded decision of the run's gate, if any: the proof token
    /// [`deliver`](Self::deliver) takes, for a process that did not record
    /// it itself.
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn recorded_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<DeliveryChoice>>, DeliveryError> {
        self.decision_slot(run).read().map_err(|e| {
            DeliveryError::new(
                "read the delivery decision of",
                run,
                DeliveryErrorKind::Decision(Box::new(e)),
            )
        })
    }

    /// Acts on the recorded decision and records the outcome. Delivering
    /// again returns the recorded outcome without touching anything.
    ///
    /// - `approve`: `git apply --check --index`, `git apply --index`, then
    ///   `git commit --only` of exactly the diff's paths; a failed commit
    ///   takes the diff back out.
    /// - `apply`: `git apply --check`, then `git apply`.
    /// - `fix`: builds the [`FollowUpSpec`] (the guard has the last word).
    /// - `skip` and `halt`: change nothing.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_target_conflict`] when the target changed since
    /// the decision and the diff would now conflict (nothing is written;
    /// deliver again once it is cleaned up), a patch whose digest no longer
    /// matches the gate, [`DeliveryErrorKind::DecisionMismatch`], a stopped
    /// follow-up, git or I/O errors.
    pub fn deliver(
        &self,
        decision: &RecordedDecision<DeliveryChoice>,
    ) -> Result<DeliveryOutcome, DeliveryError> {
        let run = decision.decision().run();
        let err = |kind| DeliveryError::new("deliver the decision of", run, kind);
        let gate = self.read_gate(run).map_err(err)?;
        let _guard = self
            .lock(run)
            .lock_exclusive()
            .map_err(|e| err(DeliveryErrorKind::Lock(Box::new(e))))?;
        if let Some(outcome) = self.read_outcome(run).map_err(err)? {
            return Ok(outcome);
        }
        let on_disk = self
            .decision_slot(run)
            .read()
            .map_err(|e| err(DeliveryErrorKind::Decision(Box::new(e))))?;
        if on_disk.map(|d| d.decision().digest()) != Some(decision.decision().digest()) {
            return Err(err(DeliveryErrorKind::DecisionMismatch));
        }
        let choice = decision.decision().payload();
        let outcome = match choice.action {
            DeliveryAction::Approve => {
                let message = gate.commit_message(choice);
                let commit = self.commit(&gate, &message).map_err(err)?;
                DeliveryOutcome::Committed { commit, message }
            }
            DeliveryAction::Apply => {
                self.apply(&gate).map_err(err)?;
                DeliveryOutcome::Applied
            }
            DeliveryAction::Fix => DeliveryOutcome::CorrectionReady(
                FollowUpSpec::for_gate(&gate, choice.note.clone(), &self.guard)
                    .map_err(|e| err(DeliveryErrorKind::FollowUp(Box::new(e))))?,
            ),
            DeliveryAction::Skip => DeliveryOutcome::Skipped,
            DeliveryAction::Halt => DeliveryOutcome::Halted {
                worktree: gate.worktree,
            },
        };
        let doc = OutcomeDoc::new(run.clone(), self.clock.now(), &outcome);
        let bytes =
            schema::encode(&doc).map_err(|e| err(DeliveryErrorKind::Document(Box::new(e))))?;
        fs::write_new_atomic(&self.outcome_path(run), &bytes)
            .map_err(|e| err(DeliveryErrorKind::Fs(Box::new(e))))?;
        Ok(outcome)
    }

    /// The patch, checked against the gate's digest, as an absolute path.
    fn checked_patch(&self, gate: &DeliveryGate) -> Result<Utf8PathBuf, DeliveryErrorKind> {
        let path = self.patch_path(&gate.run);
        let bytes = std::fs::read(&path).map_err(|e| DeliveryErrorKind::ReadPatch {
            path: path.clone(),
            source: e,
        })?;
        let computed = Digest::derive(PATCH_DIGEST_CONTEXT, &bytes);
        if computed != gate.patch_digest {
            return Err(DeliveryErrorKind::PatchAltered {
                recorded: gate.patch_digest,
                computed,
            });
        }
        absolute(&path)
    }

    /// Whether the patch is already in the target (a delivery that died
    /// before recording its outcome): it applies in reverse.
    fn already_applied(git: &Git, args: &[&str]) -> Result<bool, DeliveryErrorKind> {
        Ok(git
            .check(args)
            .map_err(|e| DeliveryErrorKind::Git(Box::new(e)))?
            .is_ok())
    }

    fn apply(&self, gate: &DeliveryGate) -> Result<(), DeliveryErrorKind> {
        let patch = self.checked_patch(gate)?;
        let git = Git::new(&gate.target);
        let git_err = |e| DeliveryErrorKind::Git(Box::new(e));
        if let Err(check) = git
            .check(&["apply", "--check", patch.as_str()])
            .map_err(git_err)?
        {
            if Self::already_applied(&git, &["apply", "--check", "--reverse", patch.as_str()])? {
                return Ok(());
            }
            return Err(self.conflict(gate, Some(check))?);
        }
        let status = self.check_target(gate)?;
        if status.is_conflicting() {
            return Err(DeliveryErrorKind::TargetConflict(status));
        }
        git.run(&["apply", patch.as_str()]).map_err(git_err)?;
        Ok(())
    }

    fn commit(&self, gate: &DeliveryGate, message: &str) -> Result<String, DeliveryErrorKind> {
        let patch = self.checked_patch(gate)?;
        let git = Git::new(&gate.target);
        let git_err = |e| DeliveryErrorKind::Git(Box::new(e));
        let paths: Vec<&str> = gate.diff.files.iter().map(|f| f.path.as_str()).collect();
        match git
            .check(&["apply", "--check", "--index", patch.as_str()])
            .map_err(git_err)?
        {
            Ok(()) => {
                let status = self.check_target(gate)?;
                if status.is_conflicting() {
                    return Err(DeliveryErrorKind::TargetConflict(status));
                }
                git.run(&["apply", "--index", patch.as_str()])
                    .map_err(git_err)?;
            }
            Err(check) => {
                let in_index = Self::already_applied(
                    &git,
                    &["apply", "--check", "--reverse", "--index", patch.as_str()],
                )?;
                if !in_index {
                    return Err(self.conflict(gate, Some(check))?);
                }
                let mut args = vec!["diff", "--cached", "--quiet", "--"];
                args.extend(&paths);
                if git.check(&args).map_err(git_err)?.is_ok() {
                    // Applied and committed by a delivery that died before
                    // recording its outcome.
                    return git.head().map_err(git_err);
                }
            }
        }
        let mut args = vec!["commit", "--only", "--quiet", "-m", message, "--"];
        args.extend(&paths);
        if let Err(e) = git.run(&args) {
            // Take the diff back out: the target is never left half-written.
            let _ = git.run(&["apply", "--index", "--reverse", patch.as_str()]);
            return Err(DeliveryErrorKind::Git(Box::new(e)));
        }
        git.head().map_err(git_err)
    }

    fn conflict(
        &self,
        gate: &DeliveryGate,
        check: Option<String>,
    ) -> Result<DeliveryErrorKind, DeliveryErrorKind> {
        Ok(match self.check_target(gate)? {
            TargetStatus::Conflicting {
                dirty,
                overlapping,
                apply_check,
            } => DeliveryErrorKind::TargetConflict(TargetStatus::Conflicting {
                dirty,
                overlapping,
                apply_check: apply_check.or(check),
            }),
            TargetStatus::Clean | TargetStatus::Dirty { .. } => {
                DeliveryErrorKind::TargetConflict(TargetStatus::Conflicting {
                    dirty: Vec::new(),
                    overlapping: Vec::new(),
                    apply_check: check,
                })
            }
        })
    }

    /// The recorded outcome of the run's gate, once delivered.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    pub fn outcome(&self, run: &RunId) -> Result<Option<DeliveryOutcome>, DeliveryError> {
        self.read_outcome(run)
            .map_err(|kind| DeliveryError::new("read the delivery outcome of", run, kind))
    }

    fn read_outcome(&self, run: &RunId) -> Result<Option<DeliveryOutcome>, DeliveryErrorKind> {
        read_outcome_at(&self.outcome_path(run), run)
    }

    /// Where the run's gate stands.
    ///
    /// # Errors
    ///
    /// Not found when the run has no gate; when a document cannot be read.
    pub fn state(&self, run: &RunId) -> Result<DeliveryState, DeliveryError> {
        let err = |kind| DeliveryError::new("read the delivery state of", run, kind);
        let gate = self.read_gate(run).map_err(err)?;
        let Some(decision) = self
            .recorded_decision(run)?
            .map(RecordedDecision::into_decision)
        else {
            return Ok(DeliveryState::Open(gate));
        };
        Ok(match self.read_outcome(run).map_err(err)? {
            Some(outcome) => DeliveryState::Delivered {
                gate,
                decision,
                outcome,
            },
            None => DeliveryState::Decided { gate, decision },
        })
    }
}

/// The id of every run's delivery decision point.
pub(crate) fn delivery_point() -> HandoffId {
    HandoffId::new(DELIVERY_POINT).unwrap_or_else(|_| unreachable!("`delivery` is a valid id"))
}

pub(crate) fn read_gate_at(
    path: &Utf8Path,
    run: &RunId,
) -> Result<DeliveryGate, DeliveryErrorKind> {
    let doc = fs::read_document::<GateDoc>(path).map_err(|e| {
        if e.is_not_found() {
            DeliveryErrorKind::NotFound
        } else {
            DeliveryErrorKind::Document(Box::new(e))
        }
    })?;
    if doc.run_id != *run {
        return Err(DeliveryErrorKind::WrongRun(doc.run_id));
    }
    doc.try_into()
}

pub(crate) fn read_outcome_at(
    path: &Utf8Path,
    run: &RunId,
) -> Result<Option<DeliveryOutcome>, DeliveryErrorKind> {
    match fs::read_document::<OutcomeDoc>(path) {
        Ok(doc) if doc.run_id == *run => doc.into_outcome().map(Some),
        Ok(doc) => Err(DeliveryErrorKind::WrongRun(doc.run_id)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(DeliveryErrorKind::Document(Box::new(e))),
    }
}

/// `path` made absolute against the current directory, so that git can be
/// run in another directory with it.
pub(crate) fn absolute(path: &Utf8Path) -> Result<Utf8PathBuf, DeliveryErrorKind> {
    std::path::absolute(path)
        .ok()
        .and_then(|p| Utf8PathBuf::try_from(p).ok())
        .ok_or_else(|| DeliveryErrorKind::NotUtf8(path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, lines: Option<(u64, u64)>) -> FileChange {
        FileChange {
            path: path.into(),
            lines,
            untracked: false,
        }
    }

    #[test]
    fn diff_summaries_read_like_gits() {
        let one = DiffSummary {
            files: vec![change("src/lib.rs", Some((1, 1)))],
        };
        assert_eq!(
            one.to_string(),
            "1 file changed, 1 insertion(+), 1 deletion(-)"
        );
        let two = DiffSummary {
            files: vec![change("src/lib.rs", Some((3, 0))), change("logo.png", None)],
        };
        assert_eq!(
            two.to_string(),
            "2 files changed, 3 insertions(+), 0 deletions(-)"
        );
    }

    fn menu(verdict: Verdict, gaps: usize, files: usize) -> (DeliveryActions, Vec<BlockedAction>) {
        let gaps: Vec<ReceiptGap> = (0..gaps)
            .map(|i| ReceiptGap {
                command: format!("cmd{i}"),
                status: "missing".into(),
                reason: "no receipt: it never ran".into(),
                next_action: "re-run".into(),
            })
            .collect();
        let diff = DiffSummary {
            files: (0..files)
                .map(|i| FileChange {
                    path: format!("f{i}").into(),
                    lines: Some((1, 0)),
                    untracked: false,
                })
                .collect(),
        };
        DeliveryGate::menu(
            verdict,
            &gaps,
            &diff,
            &BlockerSet::default(),
            None,
            &FollowUpGuard::default(),
        )
    }

    #[test]
    fn the_menu_follows_the_verdict_the_gaps_and_the_diff() {
        assert_eq!(
            menu(Verdict::Approved, 0, 1).0.to_string(),
            "approve, apply, skip, halt"
        );
        assert_eq!(
            menu(Verdict::Rejected, 0, 1).0.to_string(),
            "fix, skip, halt"
        );
        assert_eq!(menu(Verdict::Incomplete, 0, 1).0.to_string(), "skip, halt");
        let (available, blocked) = menu(Verdict::Approved, 2, 1);
        assert_eq!(available.to_string(), "skip, halt");
        assert_eq!(
            blocked[0].reason().to_string(),
            "required receipts are not present for the delivered state: `cmd0`, `cmd1`"
        );
        let (available, blocked) = menu(Verdict::Approved, 0, 0);
        assert_eq!(available.to_string(), "skip, halt");
        assert_eq!(blocked[0].reason(), &DeliveryBlock::NothingToDeliver);
    }

    #[test]
    fn actions_round_trip_and_unknown_ones_are_refused() {
        for action in DeliveryAction::ALL {
            assert_eq!(action.as_str().parse::<DeliveryAction>().unwrap(), action);
            assert_eq!(
                action
                    .as_str()
                    .to_uppercase()
                    .parse::<DeliveryAction>()
                    .unwrap(),
                action
            );
        }
        let err = "merge".parse::<DeliveryAction>().unwrap_err();
        insta::assert_snapshot!(err, @"unknown delivery action `merge`: expected one of approve, apply, fix, skip, halt");
        let set: DeliveryActions = [DeliveryAction::Halt, DeliveryAction::Fix]
            .into_iter()
            .collect();
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, r#"["fix","halt"]"#);
        assert_eq!(serde_json::from_str::<DeliveryActions>(&json).unwrap(), set);
    }

    #[test]
    fn choices_are_validated() {
        insta::assert_snapshot!(
            DeliveryChoice::from_parts(DeliveryAction::Apply, Some("m".into()), None).unwrap_err(),
            @"a commit message is only taken by `approve`, not `apply`"
        );
        insta::assert_snapshot!(
            DeliveryChoice::approve_with_message("  ").unwrap_err(),
            @"the commit message is blank"
        );
        let json = serde_json::to_string(&DeliveryChoice::fix().with_note("flaky")).unwrap();
        assert_eq!(json, r#"{"action":"fix","note":"flaky"}"#);
        assert!(
            serde_json::from_str::<DeliveryChoice>(r#"{"action":"skip","message":"x"}"#).is_err()
        );
    }
}
