//! The gate a run parks at: its spec, its menu, why an action is blocked,
//! and what delivering did.

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Digest, Finding, RunId, Timestamp, Verdict};
use orcho_handoff::{
    DeliveryAction,
    delivery::{DeliveryActions, DeliveryChoice},
};
use orcho_receipts::{Gap, ReadinessSummary};

use super::diff::DiffSummary;
use crate::followup::{BlockerSet, FollowUpGuard, FollowUpLink, FollowUpSpec, NonConvergence};

/// The context of patch digests.
pub const PATCH_DIGEST_CONTEXT: &str = "orcho delivery patch v1";

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
    /// `skip` would close a rejected release as if nothing were wrong:
    /// `fix` or `halt` says what happens to it.
    RejectedRelease,
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
                orcho_core::spelling::quoted(commands)
            ),
            Self::NothingToDeliver => f.write_str("the run changed nothing"),
            Self::FixNeedsRejection { verdict } => write!(
                f,
                "`fix` is valid only after a rejected release; the release verdict is {verdict}"
            ),
            Self::NoProgress(stop) => stop.fmt(f),
            Self::RejectedRelease => f.write_str(
                "a rejected release is not skipped: `fix` starts a correction follow-up, `halt` \
                 ends the run and keeps its worktree",
            ),
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
    orcho_core::getters! {
        /// The action.
        pub fn action(&self) -> DeliveryAction;
        /// Why it is blocked.
        pub fn reason(&self) -> &DeliveryBlock;
    }
}

/// What the engine knows when a run reaches its release state: the input of
/// [`DeliveryGates::open`](crate::DeliveryGates::open).
#[derive(Debug, Clone, PartialEq)]
pub struct DeliverySpec {
    pub(crate) run: RunId,
    pub(crate) reviewer_verdict: Verdict,
    pub(crate) worktree: Utf8PathBuf,
    pub(crate) base: String,
    pub(crate) target: Utf8PathBuf,
    pub(crate) gaps: Vec<Gap>,
    pub(crate) release_summary: Option<String>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) follow_up: Option<FollowUpLink>,
    pub(crate) waivers: Vec<String>,
    pub(crate) approve_requires_operator: bool,
    pub(crate) waived_findings: Vec<Finding>,
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
            gaps: readiness.gaps(),
            release_summary: None,
            findings: Vec::new(),
            follow_up: None,
            waivers: Vec::new(),
            approve_requires_operator: false,
            waived_findings: Vec::new(),
        }
    }

    /// Drops the gaps and findings a waiver covers (`waived` says which), and
    /// records each waiver as the gate shows it (`shown`): a waived risk no
    /// longer rejects the release, and the gate names what was waived.
    #[must_use]
    pub fn with_waivers(
        mut self,
        waived: impl Fn(&Finding) -> bool,
        shown: impl IntoIterator<Item = String>,
    ) -> Self {
        let (kept, dropped): (Vec<_>, Vec<_>) = self
            .gaps
            .drain(..)
            .partition(|gap| !waived(&gap.to_finding()));
        self.gaps = kept;
        self.waived_findings
            .extend(dropped.iter().map(Gap::to_finding));
        let (kept, dropped): (Vec<_>, Vec<_>) = self
            .findings
            .drain(..)
            .partition(|finding| !waived(finding));
        self.findings = kept;
        self.waived_findings.extend(dropped);
        self.waivers = shown.into_iter().collect();
        self
    }

    /// The release summary: the default commit message of `approve`.
    #[must_use]
    pub fn with_release_summary(mut self, summary: impl Into<String>) -> Self {
        let summary = summary.into();
        self.release_summary = (!summary.trim().is_empty()).then_some(summary);
        self
    }

    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }
}

impl DeliverySpec {
    orcho_core::setters! {
        /// The release's findings (the input of a follow-up after `fix`).
        pub fn with_findings(findings: Vec<Finding>);
        /// Marks the run as a correction follow-up of another
        /// ([`FollowUpSpec::link`]), so that `fix` is checked by the guard.
        pub fn with_follow_up(link: Some(FollowUpLink)) => follow_up;
        /// Lets only an operator approve: `approve` decided by the CI
        /// autopilot or a client is refused
        /// ([`DeliveryRefusal::OperatorRequired`](crate::DeliveryRefusal::OperatorRequired)),
        /// whoever records it and from wherever. The rule is kept with the
        /// gate.
        pub fn with_approve_requires_operator(required: bool) => approve_requires_operator;
    }
}

/// A run parked at its delivery gate: what an operator sees and decides on.
/// It is its [`DeliverySpec`] (with the base resolved to a commit id) and
/// what opening the gate found: the diff, the verdict that stands, the menu.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryGate {
    pub(crate) spec: DeliverySpec,
    pub(crate) verdict: Verdict,
    pub(crate) diff: DiffSummary,
    pub(crate) patch_digest: Digest,
    pub(crate) available_actions: DeliveryActions,
    pub(crate) blocked: Vec<BlockedAction>,
    pub(crate) created_at: Timestamp,
}

impl DeliveryGate {
    /// The run.
    pub fn run(&self) -> &RunId {
        &self.spec.run
    }

    /// Whether only an operator may approve
    /// ([`DeliverySpec::with_approve_requires_operator`]).
    pub fn approve_requires_operator(&self) -> bool {
        self.spec.approve_requires_operator
    }

    /// The release verdict that stands: the reviewer's, forced to rejected
    /// by any receipt gap.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// What the release reviewer said.
    pub fn reviewer_verdict(&self) -> Verdict {
        self.spec.reviewer_verdict
    }

    /// The retained worktree holding the run's result.
    pub fn worktree(&self) -> &Utf8Path {
        &self.spec.worktree
    }

    /// The commit the run started from.
    pub fn base(&self) -> &str {
        &self.spec.base
    }

    /// The target checkout.
    pub fn target(&self) -> &Utf8Path {
        &self.spec.target
    }

    orcho_core::getters! {
        /// What the run changed.
        pub fn diff(&self) -> &DiffSummary;
        /// The digest of the run's patch (context [`PATCH_DIGEST_CONTEXT`]).
        pub fn patch_digest(&self) -> Digest;
        /// The actions a decision may take.
        pub fn available_actions(&self) -> DeliveryActions;
        /// The actions that are not available, with the reason.
        pub fn blocked(&self) -> &[BlockedAction];
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
        &self.spec.findings
    }

    /// The required receipts not present for the delivered state.
    pub fn gaps(&self) -> &[Gap] {
        &self.spec.gaps
    }

    /// The waivers the release stands on, as they were recorded: each says
    /// which handoff made it, who, why, and what it covers.
    pub fn waivers(&self) -> &[String] {
        &self.spec.waivers
    }

    /// The findings (receipt gaps as findings) that a waiver took off the
    /// release: accepted as they are, kept to tell a follow-up.
    pub fn waived_findings(&self) -> &[Finding] {
        &self.spec.waived_findings
    }

    /// The release summary, if any.
    pub fn release_summary(&self) -> Option<&str> {
        self.spec.release_summary.as_deref()
    }

    /// The parent, when this run is a correction follow-up.
    pub fn follow_up_of(&self) -> Option<&FollowUpLink> {
        self.spec.follow_up.as_ref()
    }

    /// When the gate opened.
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }

    /// The blockers of this release (findings and gaps).
    pub fn blockers(&self) -> BlockerSet {
        BlockerSet::new(&self.spec.findings, &self.spec.gaps)
    }

    /// The commit message `approve` uses with this choice: the operator's,
    /// else the release summary, else `Deliver run <run>`.
    pub fn commit_message(&self, choice: &DeliveryChoice) -> String {
        choice
            .message()
            .map(str::to_owned)
            .or_else(|| self.spec.release_summary.clone())
            .unwrap_or_else(|| format!("Deliver run {}", self.spec.run))
    }

    /// The menu: every action, available or blocked with its reason.
    pub(crate) fn menu(
        verdict: Verdict,
        gaps: &[Gap],
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
                commands: gaps.iter().map(|g| g.command().to_string()).collect(),
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
        if verdict == Verdict::Rejected {
            blocked.push(BlockedAction {
                action: DeliveryAction::Skip,
                reason: DeliveryBlock::RejectedRelease,
            });
        }
        let available = DeliveryAction::ALL
            .iter()
            .copied()
            .filter(|a| !blocked.iter().any(|b| b.action == *a))
            .collect();
        (available, blocked)
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

#[cfg(test)]
mod tests {
    use orcho_receipts::{GapStatus, NextAction};

    use super::*;
    use crate::gate::FileChange;

    fn menu(verdict: Verdict, gaps: usize, files: usize) -> (DeliveryActions, Vec<BlockedAction>) {
        let gaps: Vec<Gap> = (0..gaps)
            .map(|i| {
                Gap::new(
                    format!("cmd{i}").parse().unwrap(),
                    GapStatus::Missing,
                    "no receipt: it never ran",
                    NextAction::Rerun,
                )
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
        // A rejected release is fixed or halted, never skipped.
        let (available, blocked) = menu(Verdict::Rejected, 0, 1);
        assert_eq!(available.to_string(), "fix, halt");
        let skip = blocked
            .iter()
            .find(|b| b.action() == DeliveryAction::Skip)
            .expect("skip is blocked");
        assert_eq!(skip.reason(), &DeliveryBlock::RejectedRelease);
        assert!(
            skip.reason()
                .to_string()
                .contains("`fix` starts a correction follow-up")
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
}
