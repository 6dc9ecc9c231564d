//! The intake documents: `runs/<run>/intake/intake.json`,
//! `runs/<run>/intake/outcome.json`, and the payload of the intake decision.

use camino::Utf8PathBuf;
use orcho_core::{Digest, RunId, SchemaVersion, Timestamp, schema::Document};
use serde::{Deserialize, Serialize};

use orcho_handoff::{IntakeAction, point::PointErrorKind};

use super::{ChangeKind, IntakeOutcome, IntakeRefusal, IntakeReport, SeedPatch, TrackedChange};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct IntakeDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) run_id: RunId,
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) head: String,
    pub(crate) count: usize,
    pub(crate) untracked_count: usize,
    pub(crate) tracked: Vec<TrackedRepr>,
    pub(crate) untracked: Vec<Utf8PathBuf>,
    pub(crate) asked_at: Timestamp,
}

impl Document for IntakeDoc {
    const KIND: &'static str = "intake question";
    /// Version 1: run_id, checkout, head, count, untracked_count, tracked
    /// (path, change, staged), untracked, asked_at. The counts are written
    /// for readers and recomputed on read.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TrackedRepr {
    pub(crate) path: Utf8PathBuf,
    pub(crate) change: ChangeKind,
    pub(crate) staged: bool,
}

impl IntakeDoc {
    pub(crate) fn new(run: RunId, report: IntakeReport, at: Timestamp) -> Self {
        Self {
            schema: Self::SCHEMA,
            run_id: run,
            count: report.count(),
            untracked_count: report.untracked_count(),
            checkout: report.checkout,
            head: report.head,
            tracked: report
                .tracked
                .into_iter()
                .map(|t| TrackedRepr {
                    path: t.path,
                    change: t.kind,
                    staged: t.staged,
                })
                .collect(),
            untracked: report.untracked,
            asked_at: at,
        }
    }

    pub(crate) fn into_report(self) -> (IntakeReport, Timestamp) {
        (
            IntakeReport {
                checkout: self.checkout,
                head: self.head,
                tracked: self
                    .tracked
                    .into_iter()
                    .map(|t| TrackedChange {
                        path: t.path,
                        kind: t.change,
                        staged: t.staged,
                    })
                    .collect(),
                untracked: self.untracked,
            },
            self.asked_at,
        )
    }
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct IntakeOutcomeDoc {
    pub(crate) schema: SchemaVersion,
    pub(crate) run_id: RunId,
    pub(crate) action: IntakeAction,
    pub(crate) start: Option<String>,
    pub(crate) seed: Option<SeedRepr>,
    pub(crate) applied_at: Timestamp,
}

impl Document for IntakeOutcomeDoc {
    const KIND: &'static str = "intake outcome";
    /// Version 1: run_id, action, start (the commit the run starts from;
    /// the new commit after `commit`; absent after `halt`), seed (path,
    /// digest, files; `include` only), applied_at.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SeedRepr {
    pub(crate) path: Utf8PathBuf,
    pub(crate) digest: Digest,
    pub(crate) files: usize,
}

impl IntakeOutcomeDoc {
    pub(crate) fn new(run: RunId, at: Timestamp, outcome: &IntakeOutcome) -> Self {
        Self {
            schema: Self::SCHEMA,
            run_id: run,
            action: outcome.action(),
            start: outcome.start().map(str::to_owned),
            seed: match outcome {
                IntakeOutcome::Included { seed, .. } => Some(SeedRepr {
                    path: seed.path.clone(),
                    digest: seed.digest,
                    files: seed.files,
                }),
                IntakeOutcome::Excluded { .. }
                | IntakeOutcome::Committed { .. }
                | IntakeOutcome::Halted => None,
            },
            applied_at: at,
        }
    }

    pub(crate) fn into_outcome(self) -> Result<IntakeOutcome, PointErrorKind<IntakeRefusal>> {
        let action = self.action;
        let missing = |field: &str| {
            PointErrorKind::Invalid(format!("the outcome of `{action}` lacks its `{field}`"))
        };
        Ok(match action {
            IntakeAction::Include => {
                let seed = self.seed.ok_or_else(|| missing("seed"))?;
                IntakeOutcome::Included {
                    start: self.start.ok_or_else(|| missing("start"))?,
                    seed: SeedPatch {
                        path: seed.path,
                        digest: seed.digest,
                        files: seed.files,
                    },
                }
            }
            IntakeAction::Exclude => IntakeOutcome::Excluded {
                start: self.start.ok_or_else(|| missing("start"))?,
            },
            IntakeAction::Commit => IntakeOutcome::Committed {
                commit: self.start.ok_or_else(|| missing("start"))?,
            },
            IntakeAction::Halt => IntakeOutcome::Halted,
        })
    }
}
