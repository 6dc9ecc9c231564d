//! What hosts read about a run: [`RunView`], built by
//! [`Store::status`](crate::Store::status), so that no host reads the
//! engine's state or store directly.

use camino::Utf8PathBuf;
use orcho_core::{Cost, HandoffId, PhaseName, RunId, RunStatus, Timestamp, Verdict};
use orcho_gates::PhaseOutcome;
use orcho_handoff::decision::DecidedBy;
use serde::Serialize;

use crate::state::{RunState, Stage, TouchpointKind};

/// A run as a host shows it: where it stands, where it is in its phases,
/// what it cost, and the decision point it waits on. Serializes to the JSON
/// hosts print.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RunView {
    /// The run.
    pub run: RunId,
    /// The plan's name.
    pub plan: String,
    /// Where it stands.
    pub status: RunStatus,
    /// Why it ended, once it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The current phase, if the run is not past its last.
    pub phase: Option<PhaseName>,
    /// The current attempt of the phase (1-based).
    pub attempt: u32,
    /// The current round (1-based).
    pub round: u32,
    /// What it cost so far.
    pub cost: Cost,
    /// Where its phases and gates run: the checkout, or its worktree.
    pub checkout: Utf8PathBuf,
    /// For a run that delivers: the checkout its delivery targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Utf8PathBuf>,
    /// What the run was started to do, if it was told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// For a correction follow-up: its parent run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_up_of: Option<RunId>,
    /// For a correction follow-up: its generation (1 for the follow-up of
    /// an original run); the non-convergence guard caps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_up_generation: Option<u32>,
    /// The decision point it waits on, if it waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// A run that is created or running but that no process drives (nobody
    /// holds its lock): its host was stopped (Ctrl-C, a kill) or its phase
    /// could not start. [`Engine::open`](crate::Engine::open) and
    /// [`Run::resume`](crate::Run::resume) continue it. Only [`Store::status`](crate::Store::status) and
    /// [`Store::list`](crate::Store::list) look; a run a host holds is
    /// never stopped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

impl RunView {
    /// The phase handoff the run waits on, once it is open.
    pub fn handoff(&self) -> Option<&HandoffId> {
        match &self.waiting {
            Some(Waiting::PhaseHandoff { id }) => id.as_ref(),
            _ => None,
        }
    }

    /// The supervision touchpoint the run waits on, once it is open, and
    /// its kind.
    pub fn touchpoint(&self) -> Option<(&HandoffId, TouchpointKind)> {
        match &self.waiting {
            Some(Waiting::Touchpoint { id: Some(id), kind }) => Some((id, *kind)),
            _ => None,
        }
    }
}

/// A phase handoff a run was moved past with `continue`, despite what
/// paused it ([`Store::overridden`](crate::Store::overridden)). A delivery
/// decision weighs it beside the gate's verdicts, which are the last
/// review's alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Overridden {
    /// The handoff.
    pub handoff: HandoffId,
    /// The phase that paused.
    pub phase: PhaseName,
    /// The phase's verdict.
    pub verdict: Verdict,
    /// Why it paused: `verdict`, a gate, or `always_pause`.
    pub trigger: String,
    /// Who moved the run on.
    pub decided_by: DecidedBy,
    /// The client's name and version, for a decision taken over MCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// One run of the store as [`Store::list`](crate::Store::list) gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Listed {
    /// A run that reads.
    Run(Box<RunView>),
    /// A run directory that does not read, and why.
    Unreadable {
        /// The run.
        run: RunId,
        /// Why it does not read.
        reason: String,
    },
}

impl Listed {
    /// The run.
    pub fn run(&self) -> &RunId {
        match self {
            Self::Run(view) => &view.run,
            Self::Unreadable { run, .. } => run,
        }
    }
}

/// A file a phase attempt kept in its artifacts directory
/// ([`Store::artifacts_dir`](crate::Store::artifacts_dir)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Artifact {
    /// The attempt, as its directory is named: `<phase>-r<round>-a<attempt>`.
    pub attempt: String,
    /// The file, relative to the attempt's directory.
    pub file: Utf8PathBuf,
    /// Where it is on this machine.
    pub path: Utf8PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What [`Engine::gc`](crate::Engine::gc) removed (or, on a dry run,
/// would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct GcReport {
    /// The worktrees of runs that have ended.
    pub worktrees: Vec<Utf8PathBuf>,
    /// Receipt log directories older than asked that no latest receipt
    /// names.
    pub logs: Vec<Utf8PathBuf>,
    /// Runs left alone because they are not over (pending decisions
    /// included) or do not read.
    pub kept: Vec<RunId>,
    /// Worktrees kept because their teardown failed, and why.
    pub teardown_failed: Vec<(Utf8PathBuf, String)>,
    /// The intake seed patches of runs that have ended, with their size in
    /// bytes (0 when a shared store cannot tell it).
    pub seed_patches: Vec<(RunId, u64)>,
}

/// One phase attempt as the phase reported it, before its gates ran
/// ([`Store::attempts`](crate::Store::attempts)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AttemptView {
    /// The phase.
    pub phase: PhaseName,
    /// The attempt (1-based).
    pub attempt: u32,
    /// The round (1-based).
    pub round: u32,
    /// What the phase reported: verdict, summary, findings.
    pub outcome: PhaseOutcome,
}

/// The decision point a run waits on.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "point", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Waiting {
    /// Pre-run intake: what to do with the target's uncommitted changes.
    Intake,
    /// A phase handoff (its id once it is open).
    PhaseHandoff {
        /// The handoff.
        id: Option<HandoffId>,
    },
    /// A supervision touchpoint (its id once it is open).
    Touchpoint {
        /// The touchpoint.
        id: Option<HandoffId>,
        /// Its kind.
        kind: TouchpointKind,
    },
    /// The delivery gate.
    Delivery,
}

impl Waiting {
    /// The decision point a run at `stage` waits on.
    pub fn of(stage: &Stage) -> Option<Self> {
        match stage {
            Stage::AwaitingIntake => Some(Self::Intake),
            Stage::Pausing(_) => Some(Self::PhaseHandoff { id: None }),
            Stage::AtHandoff(id) => Some(Self::PhaseHandoff {
                id: Some(id.clone()),
            }),
            Stage::Asking(touchpoint) => Some(Self::Touchpoint {
                id: None,
                kind: TouchpointKind::of(touchpoint),
            }),
            Stage::AtTouchpoint { id, kind } => Some(Self::Touchpoint {
                id: Some(id.clone()),
                kind: *kind,
            }),
            Stage::AtDelivery { .. } => Some(Self::Delivery),
            Stage::Created | Stage::Ready | Stage::Gating(_) | Stage::Ended(_) => None,
        }
    }
}

impl From<&RunState> for RunView {
    fn from(state: &RunState) -> Self {
        Self {
            run: state.run().clone(),
            plan: state.plan().to_owned(),
            status: state.status(),
            reason: state.reason().map(str::to_owned),
            phase: state.current_phase().cloned(),
            attempt: state.attempt(),
            round: state.round(),
            cost: state.cost(),
            checkout: state.checkout().to_owned(),
            target: state.workspace().map(|w| w.target.clone()),
            task: state.task().map(str::to_owned),
            follow_up_of: state.follow_up().map(|f| f.parent.clone()),
            follow_up_generation: state.follow_up().map(|f| f.generation),
            waiting: Waiting::of(state.stage()),
            stopped: false,
        }
    }
}

/// Which runs [`Store::team_inbox`](crate::Store::team_inbox) keeps.
///
/// ```
/// use std::time::Duration;
/// use orcho::{InboxFilter, point::PointKind};
///
/// let filter = InboxFilter::all()
///     .with_kind(PointKind::Delivery)
///     .waiting_longer_than(Duration::from_secs(3600));
/// assert_eq!(filter.kind, Some(PointKind::Delivery));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxFilter {
    /// Only those started from this machine and checkout.
    pub mine: bool,
    /// Only those of a repository (or checkout path) containing this.
    pub repo: Option<String>,
    /// Only decision points of this kind; stopped runs (which wait for a
    /// resume, not a decision) are left out.
    pub kind: Option<crate::point::PointKind>,
    /// Only what has waited at least this long (a stopped run counts from
    /// its start).
    pub older_than: Option<std::time::Duration>,
    /// Only what has waited at most this long (a stopped run counts from
    /// its start).
    pub newer_than: Option<std::time::Duration>,
}

impl InboxFilter {
    /// Every run.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only decision points of `kind`.
    #[must_use]
    pub fn with_kind(mut self, kind: crate::point::PointKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Only runs of a repository (or checkout path) containing `repo`.
    #[must_use]
    pub fn with_repo(mut self, repo: impl Into<String>) -> Self {
        self.repo = Some(repo.into());
        self
    }

    /// Only what has waited at least `age`.
    #[must_use]
    pub fn waiting_longer_than(mut self, age: std::time::Duration) -> Self {
        self.older_than = Some(age);
        self
    }

    /// Only what has waited at most `age`.
    #[must_use]
    pub fn waiting_less_than(mut self, age: std::time::Duration) -> Self {
        self.newer_than = Some(age);
        self
    }

    /// Whether a run started at `origin` is kept; a store only this
    /// checkout uses (no origin) has every run here.
    pub fn keeps(&self, origin: Option<&orcho_core::storage::RunOrigin>) -> bool {
        let Some(origin) = origin else { return true };
        if self.mine && !origin.here {
            return false;
        }
        self.repo.as_deref().is_none_or(|repo| {
            origin.checkout.contains(repo)
                || origin
                    .repository
                    .as_deref()
                    .is_some_and(|r| r.contains(repo))
        })
    }

    /// Whether something that has waited since `since` is kept at `now`
    /// by the age bounds.
    pub fn keeps_age(&self, since: Timestamp, now: Timestamp) -> bool {
        let waited = u64::try_from(now.unix_millis() - since.unix_millis()).unwrap_or(0);
        let waited = std::time::Duration::from_millis(waited);
        self.older_than.is_none_or(|min| waited >= min)
            && self.newer_than.is_none_or(|max| waited <= max)
    }
}

/// Which page of the inbox to read: `size` entries from the `number`th
/// page (the first is 1), decisions first, then stopped runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxPage {
    /// The page, from 1.
    pub number: usize,
    /// How many entries a page holds (at least 1).
    pub size: usize,
}

impl InboxPage {
    /// Page `number` (from 1) of `size` entries; 0 for either counts as 1.
    pub fn new(number: usize, size: usize) -> Self {
        Self {
            number: number.max(1),
            size: size.max(1),
        }
    }

    /// How many pages `total` entries fill (at least 1).
    pub fn count(self, total: usize) -> usize {
        total.div_ceil(self.size).max(1)
    }

    fn range(self, total: usize) -> std::ops::Range<usize> {
        let start = (self.number - 1).saturating_mul(self.size).min(total);
        start..start.saturating_add(self.size).min(total)
    }
}

/// What waits for people across a store: the pending decisions, the runs
/// no process drives any more, and where each was started.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TeamInbox {
    /// The pending decisions, newest first (of the page, when paged).
    pub inbox: orcho_handoff::inbox::Inbox,
    /// The runs stopped while they ran ([`RunView::stopped`]), newest
    /// first (of the page, when paged).
    pub stopped: Vec<RunView>,
    /// Where each of those runs was started (with a shared store).
    pub origins: std::collections::BTreeMap<RunId, orcho_core::storage::RunOrigin>,
    /// How many pending decisions and stopped runs the filter kept, on
    /// every page.
    pub total: usize,
    /// The page read, when paged.
    pub page: Option<InboxPage>,
    /// Where each run with a pending decision (of the page, when paged)
    /// stands, as the inbox read it: for its task, and for
    /// [`Store::open_point_of`](crate::Store::open_point_of).
    pub views: std::collections::BTreeMap<RunId, RunView>,
    /// A digest of everything waiting in the store, before the filter and
    /// the page: two reads have the same one when nothing waiting changed
    /// in between (what a page that refreshes itself compares).
    pub revision: String,
}

impl TeamInbox {
    /// Keeps the entries of `page`: pending decisions first, then stopped
    /// runs; the unreadable runs stay on every page.
    pub(crate) fn keep_page(&mut self, page: InboxPage) {
        let pending = self.inbox.pending().count();
        let range = page.range(self.total);
        let mut index = 0;
        self.inbox.retain(|entry| match entry {
            orcho_handoff::inbox::InboxEntry::Pending(_) => {
                index += 1;
                range.contains(&(index - 1))
            }
            _ => true,
        });
        let mut index = pending;
        self.stopped.retain(|_| {
            index += 1;
            range.contains(&(index - 1))
        });
        self.page = Some(page);
    }
}

#[cfg(test)]
mod tests {
    use orcho_core::storage::RunOrigin;

    use super::InboxFilter;

    #[test]
    fn an_inbox_filter_keeps_this_checkouts_runs_or_a_repositorys() {
        let here = RunOrigin::new("a", "/home/a/app", true);
        let there = RunOrigin::new("b", "/srv/b/app", false)
            .with_repository(Some("github.com/team/app".into()));
        let all = InboxFilter::all();
        assert!(all.keeps(None) && all.keeps(Some(&here)) && all.keeps(Some(&there)));
        let mut mine = InboxFilter::all();
        mine.mine = true;
        assert!(mine.keeps(Some(&here)) && !mine.keeps(Some(&there)));
        assert!(
            mine.keeps(None),
            "a store only this checkout uses is all here"
        );
        let mut repo = InboxFilter::all();
        repo.repo = Some("team/app".into());
        assert!(repo.keeps(Some(&there)) && !repo.keeps(Some(&here)));
    }
}
