//! The delivery gate's documents: `runs/<run>/delivery/gate.json`,
//! `runs/<run>/delivery/outcome.json`, and the payload of the delivery
//! decision.

use camino::Utf8PathBuf;
use orcho_core::{Digest, Finding, RunId, SchemaVersion, Timestamp, Verdict, schema::Document};
use serde::{Deserialize, Serialize};

use orcho_handoff::{DeliveryAction, delivery::DeliveryActions, point::PointErrorKind};
use orcho_receipts::{Gap, GapStatus, NextAction};

use super::{
    BlockedAction, DeliveryBlock, DeliveryGate, DeliveryOutcome, DeliveryRefusal, DeliverySpec,
    DiffSummary, FileChange,
};
use crate::followup::{BlockerSet, FollowUpLink, FollowUpSpec, NonConvergence};

type Kind = PointErrorKind<DeliveryRefusal>;

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct GateDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) run_id: RunId,
    pub(crate) reviewer_verdict: Verdict,
    pub(crate) verdict: Verdict,
    pub(crate) worktree: Utf8PathBuf,
    pub(crate) base: String,
    pub(crate) target: Utf8PathBuf,
    pub(crate) diff: DiffRepr,
    pub(crate) patch_digest: Digest,
    pub(crate) available_actions: DeliveryActions,
    pub(crate) blocked: Vec<BlockedRepr>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) gaps: Vec<GapRepr>,
    pub(crate) release_summary: Option<String>,
    pub(crate) follow_up_of: Option<LinkRepr>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) waivers: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) approve_requires_operator: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) waived_findings: Vec<Finding>,
    pub(crate) created_at: Timestamp,
}

impl Document for GateDoc {
    const KIND: &'static str = "delivery gate";
    /// Version 1: run_id, reviewer_verdict, verdict, worktree, base, target,
    /// diff (files_changed, insertions, deletions, files), patch_digest,
    /// available_actions, blocked, findings, gaps, release_summary,
    /// follow_up_of, waivers (when any), created_at.
    ///
    /// Version 2: `approve_requires_operator: true`, and
    /// `waived_findings` (what a waiver took off the release, kept for a
    /// follow-up), which a version-1 reader would ignore. A gate with
    /// neither is still written as version 1, byte for byte as before.
    ///
    /// Version 3: `skip` blocked as `rejected_release`, which a version-2
    /// reader cannot read; written only when it is.
    const SCHEMA: SchemaVersion = SchemaVersion::new(3);
}

/// The version a gate with version-2 fields and no version-3 one is
/// written as.
const GATE_V2: SchemaVersion = SchemaVersion::new(2);

/// The first version, written when no field of version 2 is used.
const GATE_V1: SchemaVersion = SchemaVersion::new(1);

/// The diff summary; the totals are written for readers and recomputed from
/// `files` on read.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DiffRepr {
    pub(crate) files_changed: usize,
    pub(crate) insertions: u64,
    pub(crate) deletions: u64,
    pub(crate) files: Vec<FileRepr>,
}

/// `insertions` and `deletions` are absent for a binary file.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FileRepr {
    pub(crate) path: Utf8PathBuf,
    pub(crate) insertions: Option<u64>,
    pub(crate) deletions: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) binary: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) untracked: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct BlockedRepr {
    pub(crate) action: DeliveryAction,
    pub(crate) reason: BlockRepr,
}

/// `{"kind": "release_not_approved", "verdict": …}`, … The message is
/// written for readers and not read back.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum BlockRepr {
    ReleaseNotApproved { verdict: Verdict },
    MissingReceipts { commands: Vec<String> },
    NothingToDeliver,
    FixNeedsRejection { verdict: Verdict },
    NoProgress { stop: StopRepr },
    RejectedRelease,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub(crate) enum StopRepr {
    RepeatedBlockers {
        parent_run_id: RunId,
        generation: u32,
        repeated: Vec<String>,
    },
    TooManyGenerations {
        generation: u32,
        max: u32,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GapRepr {
    pub(crate) command: String,
    pub(crate) status: String,
    pub(crate) reason: String,
    pub(crate) next_action: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LinkRepr {
    pub(crate) parent_run_id: RunId,
    pub(crate) generation: u32,
    pub(crate) blockers: Vec<BlockerRepr>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct BlockerRepr {
    pub(crate) digest: Digest,
    pub(crate) label: String,
}

impl From<Gap> for GapRepr {
    fn from(g: Gap) -> Self {
        Self {
            command: g.command().to_string(),
            status: g.status().as_str().to_owned(),
            reason: g.reason().to_owned(),
            next_action: g.next_action().as_str().to_owned(),
        }
    }
}

impl TryFrom<GapRepr> for Gap {
    type Error = Kind;

    fn try_from(g: GapRepr) -> Result<Self, Self::Error> {
        let invalid = |what: &str, value: &str| {
            Kind::Invalid(format!("the gap of `{}` has {what} `{value}`", g.command))
        };
        let command = g
            .command
            .parse()
            .map_err(|_| invalid("the command name", &g.command))?;
        let status =
            GapStatus::from_spelling(&g.status).ok_or_else(|| invalid("the status", &g.status))?;
        let next_action = NextAction::from_spelling(&g.next_action)
            .ok_or_else(|| invalid("the next action", &g.next_action))?;
        Ok(Self::new(command, status, g.reason, next_action))
    }
}

impl From<NonConvergence> for StopRepr {
    fn from(stop: NonConvergence) -> Self {
        match stop {
            NonConvergence::RepeatedBlockers {
                parent,
                generation,
                repeated,
            } => Self::RepeatedBlockers {
                parent_run_id: parent,
                generation,
                repeated,
            },
            NonConvergence::TooManyGenerations { generation, max } => {
                Self::TooManyGenerations { generation, max }
            }
        }
    }
}

impl From<StopRepr> for NonConvergence {
    fn from(stop: StopRepr) -> Self {
        match stop {
            StopRepr::RepeatedBlockers {
                parent_run_id,
                generation,
                repeated,
            } => Self::RepeatedBlockers {
                parent: parent_run_id,
                generation,
                repeated,
            },
            StopRepr::TooManyGenerations { generation, max } => {
                Self::TooManyGenerations { generation, max }
            }
        }
    }
}

impl From<DeliveryBlock> for BlockRepr {
    fn from(b: DeliveryBlock) -> Self {
        match b {
            DeliveryBlock::ReleaseNotApproved { verdict } => Self::ReleaseNotApproved { verdict },
            DeliveryBlock::MissingReceipts { commands } => Self::MissingReceipts { commands },
            DeliveryBlock::NothingToDeliver => Self::NothingToDeliver,
            DeliveryBlock::FixNeedsRejection { verdict } => Self::FixNeedsRejection { verdict },
            DeliveryBlock::NoProgress(stop) => Self::NoProgress { stop: stop.into() },
            DeliveryBlock::RejectedRelease => Self::RejectedRelease,
        }
    }
}

impl From<BlockRepr> for DeliveryBlock {
    fn from(b: BlockRepr) -> Self {
        match b {
            BlockRepr::ReleaseNotApproved { verdict } => Self::ReleaseNotApproved { verdict },
            BlockRepr::MissingReceipts { commands } => Self::MissingReceipts { commands },
            BlockRepr::NothingToDeliver => Self::NothingToDeliver,
            BlockRepr::FixNeedsRejection { verdict } => Self::FixNeedsRejection { verdict },
            BlockRepr::NoProgress { stop } => Self::NoProgress(stop.into()),
            BlockRepr::RejectedRelease => Self::RejectedRelease,
        }
    }
}

impl From<FollowUpLink> for LinkRepr {
    fn from(l: FollowUpLink) -> Self {
        Self {
            parent_run_id: l.parent,
            generation: l.generation,
            blockers: l
                .blockers
                .iter()
                .map(|(digest, label)| BlockerRepr {
                    digest: *digest,
                    label: label.to_owned(),
                })
                .collect(),
        }
    }
}

impl From<LinkRepr> for FollowUpLink {
    fn from(l: LinkRepr) -> Self {
        Self::new(
            l.parent_run_id,
            l.generation,
            BlockerSet::from_entries(l.blockers.into_iter().map(|b| (b.digest, b.label))),
        )
    }
}

impl From<DeliveryGate> for GateDoc {
    fn from(g: DeliveryGate) -> Self {
        Self {
            schema: if g
                .blocked
                .iter()
                .any(|b| b.reason == DeliveryBlock::RejectedRelease)
            {
                Self::SCHEMA
            } else if g.spec.approve_requires_operator || !g.spec.waived_findings.is_empty() {
                GATE_V2
            } else {
                GATE_V1
            },
            approve_requires_operator: g.spec.approve_requires_operator,
            waived_findings: g.spec.waived_findings,
            diff: DiffRepr {
                files_changed: g.diff.files_changed(),
                insertions: g.diff.insertions(),
                deletions: g.diff.deletions(),
                files: g
                    .diff
                    .files
                    .into_iter()
                    .map(|f| FileRepr {
                        path: f.path,
                        insertions: f.lines.map(|(i, _)| i),
                        deletions: f.lines.map(|(_, d)| d),
                        binary: f.lines.is_none(),
                        untracked: f.untracked,
                    })
                    .collect(),
            },
            run_id: g.spec.run,
            reviewer_verdict: g.spec.reviewer_verdict,
            verdict: g.verdict,
            worktree: g.spec.worktree,
            base: g.spec.base,
            target: g.spec.target,
            patch_digest: g.patch_digest,
            available_actions: g.available_actions,
            blocked: g
                .blocked
                .into_iter()
                .map(|b| BlockedRepr {
                    action: b.action,
                    reason: b.reason.into(),
                })
                .collect(),
            findings: g.spec.findings,
            gaps: g.spec.gaps.into_iter().map(GapRepr::from).collect(),
            release_summary: g.spec.release_summary,
            follow_up_of: g.spec.follow_up.map(LinkRepr::from),
            waivers: g.spec.waivers,
            created_at: g.created_at,
        }
    }
}

impl TryFrom<GateDoc> for DeliveryGate {
    type Error = Kind;

    fn try_from(d: GateDoc) -> Result<Self, Self::Error> {
        let files = d
            .diff
            .files
            .into_iter()
            .map(|f| {
                let lines = match (f.binary, f.insertions, f.deletions) {
                    (true, None, None) => None,
                    (false, Some(i), Some(d)) => Some((i, d)),
                    _ => {
                        return Err(Kind::Invalid(format!(
                            "the file `{}` must have insertions and deletions, or be binary",
                            f.path
                        )));
                    }
                };
                Ok(FileChange {
                    path: f.path,
                    lines,
                    untracked: f.untracked,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let spec = DeliverySpec {
            run: d.run_id,
            reviewer_verdict: d.reviewer_verdict,
            worktree: d.worktree,
            base: d.base,
            target: d.target,
            gaps: d
                .gaps
                .into_iter()
                .map(Gap::try_from)
                .collect::<Result<_, _>>()?,
            release_summary: d.release_summary,
            findings: d.findings,
            follow_up: d.follow_up_of.map(FollowUpLink::from),
            waivers: d.waivers,
            approve_requires_operator: d.approve_requires_operator,
            waived_findings: d.waived_findings,
        };
        Ok(Self {
            spec,
            verdict: d.verdict,
            diff: DiffSummary { files },
            patch_digest: d.patch_digest,
            available_actions: d.available_actions,
            blocked: d
                .blocked
                .into_iter()
                .map(|b| BlockedAction {
                    action: b.action,
                    reason: b.reason.into(),
                })
                .collect(),
            created_at: d.created_at,
        })
    }
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct OutcomeDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) run_id: RunId,
    pub(crate) action: DeliveryAction,
    pub(crate) commit: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) worktree: Option<Utf8PathBuf>,
    pub(crate) follow_up: Option<FollowUpRepr>,
    pub(crate) delivered_at: Timestamp,
}

impl Document for OutcomeDoc {
    const KIND: &'static str = "delivery outcome";
    /// Version 1: run_id, action, and per action: commit and message
    /// (approve), worktree (halt), follow_up (fix); delivered_at.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// A follow-up spec, inside the outcome of `fix`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FollowUpRepr {
    pub(crate) parent_run_id: RunId,
    pub(crate) generation: u32,
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) base: String,
    pub(crate) findings: Vec<Finding>,
    pub(crate) gaps: Vec<GapRepr>,
    pub(crate) note: Option<String>,
    /// The waivers the parent's release stood on, and the findings they
    /// took off it (added within version 1: optional, and a build that
    /// does not know them reads the rest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) waived: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) waived_findings: Vec<Finding>,
}

impl From<FollowUpSpec> for FollowUpRepr {
    fn from(s: FollowUpSpec) -> Self {
        Self {
            parent_run_id: s.parent,
            generation: s.generation,
            checkout: s.checkout,
            base: s.base,
            findings: s.findings,
            gaps: s.gaps.into_iter().map(GapRepr::from).collect(),
            note: s.note,
            waived: s.waived,
            waived_findings: s.waived_findings,
        }
    }
}

impl TryFrom<FollowUpRepr> for FollowUpSpec {
    type Error = Kind;

    fn try_from(r: FollowUpRepr) -> Result<Self, Self::Error> {
        Ok(Self {
            parent: r.parent_run_id,
            generation: r.generation,
            checkout: r.checkout,
            base: r.base,
            findings: r.findings,
            gaps: r
                .gaps
                .into_iter()
                .map(Gap::try_from)
                .collect::<Result<_, _>>()?,
            note: r.note,
            waived: r.waived,
            waived_findings: r.waived_findings,
        })
    }
}

impl OutcomeDoc {
    pub(crate) fn new(run: RunId, at: Timestamp, outcome: &DeliveryOutcome) -> Self {
        let mut doc = Self {
            schema: Self::SCHEMA,
            run_id: run,
            action: outcome.action(),
            commit: None,
            message: None,
            worktree: None,
            follow_up: None,
            delivered_at: at,
        };
        match outcome.clone() {
            DeliveryOutcome::Committed { commit, message } => {
                doc.commit = Some(commit);
                doc.message = Some(message);
            }
            DeliveryOutcome::CorrectionReady(spec) => doc.follow_up = Some(spec.into()),
            DeliveryOutcome::Halted { worktree } => doc.worktree = Some(worktree),
            DeliveryOutcome::Applied | DeliveryOutcome::Skipped => {}
        }
        doc
    }

    pub(crate) fn into_outcome(self) -> Result<DeliveryOutcome, Kind> {
        let missing = |field: &str| {
            Kind::Invalid(format!(
                "the outcome of `{}` lacks its `{field}`",
                self.action
            ))
        };
        Ok(match self.action {
            DeliveryAction::Approve => DeliveryOutcome::Committed {
                commit: self.commit.clone().ok_or_else(|| missing("commit"))?,
                message: self.message.clone().ok_or_else(|| missing("message"))?,
            },
            DeliveryAction::Apply => DeliveryOutcome::Applied,
            DeliveryAction::Fix => DeliveryOutcome::CorrectionReady(
                self.follow_up
                    .ok_or_else(|| missing("follow_up"))?
                    .try_into()?,
            ),
            DeliveryAction::Skip => DeliveryOutcome::Skipped,
            DeliveryAction::Halt => DeliveryOutcome::Halted {
                worktree: self.worktree.clone().ok_or_else(|| missing("worktree"))?,
            },
        })
    }
}
