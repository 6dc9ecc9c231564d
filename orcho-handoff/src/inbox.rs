//! The decision inbox: every run of a store that waits for somebody.
//!
//! [`pending_decisions`] reads every run of a [`Storage`] and lists every
//! run paused on an actionable decision point — a phase handoff that is
//! open or decided but not resumed, a delivery gate that is not delivered,
//! an intake question that is not applied — newest first, with what a host
//! needs to recover the context: the run, the phase, the trigger, the
//! verdict, the available actions, whether a decision is already recorded,
//! and the [`SuggestedStep`] (decide, or resume/deliver/apply because a
//! decision is recorded).
//!
//! A run directory that cannot be read (a bad name, a corrupt document, a
//! journal that contradicts its records) is listed as a [`DegradedRun`]
//! with the reason; it never stops the scan.
//!
//! Each kind of decision point lists its own pending points with a
//! [`Scanner`]; [`pending_decisions`] runs this crate's ([`scan_handoffs`]),
//! and [`pending_decisions_with`] any set of them — the engine adds the
//! delivery gate and the intake question of `orcho-delivery`.
//!
//! ```
//! use std::sync::Arc;
//! use orcho_core::{FixedClock, Verdict, storage::{FsStorage, Storage}};
//! use orcho_handoff::{handoff::{HandoffSpec, HandoffStore}, inbox::{SuggestedStep, pending_decisions}};
//!
//! # let tmp = tempfile::tempdir()?;
//! # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let storage: Arc<dyn Storage> = Arc::new(FsStorage::new(&root));
//! let store = HandoffStore::new(storage.clone(), Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?)));
//! store.open(HandoffSpec::new("run-1".parse()?, "implement".parse()?, Verdict::Rejected))?;
//!
//! let inbox = pending_decisions(&storage)?;
//! let pending: Vec<_> = inbox.pending().collect();
//! assert_eq!(pending.len(), 1);
//! assert_eq!(pending[0].run().as_str(), "run-1");
//! assert_eq!(pending[0].next_step(), SuggestedStep::Decide);
//! assert_eq!(pending[0].available_actions(), ["continue", "retry_feedback", "continue_with_waiver", "halt"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    HandoffId, PhaseName, RunId, StoreError, SystemClock, Timestamp, Verdict, error_chain,
    storage::{PointKind, Set, Storage},
};

use crate::{
    delivery::DeliveryActions,
    handoff::{AvailableActions, HandoffStore, HandoffTrigger},
    intake::IntakeActions,
};

/// What to do next about a pending decision point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SuggestedStep {
    /// No decision is recorded: decide.
    Decide,
    /// A handoff decision is recorded: resume the run.
    Resume,
    /// A delivery decision is recorded: deliver it.
    Deliver,
    /// An intake decision is recorded: apply it and start the run.
    Apply,
}

orcho_core::spelled!(SuggestedStep {
    Decide => "decide",
    Resume => "resume",
    Deliver => "deliver",
    Apply => "apply",
});

/// Which decision point a run waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PendingPoint {
    /// A phase handoff.
    PhaseHandoff {
        /// The handoff.
        handoff: HandoffId,
        /// The phase that paused.
        phase: PhaseName,
        /// Why it paused.
        trigger: HandoffTrigger,
        /// Its menu.
        actions: AvailableActions,
    },
    /// The delivery gate.
    Delivery {
        /// Its menu.
        actions: DeliveryActions,
    },
    /// The pre-run intake question.
    Intake {
        /// How many uncommitted paths were found.
        count: usize,
    },
    /// A permission question an agent of a phase asked.
    Permission {
        /// Its id (`ask-0001`).
        id: HandoffId,
        /// The phase whose agent asks.
        phase: String,
        /// The tool.
        tool: String,
        /// What it would do: the command, or the path.
        subject: String,
        /// When its hook stops waiting for a person (and denies it).
        until: Timestamp,
    },
    /// A supervision touchpoint.
    Touchpoint {
        /// Its id.
        touchpoint: HandoffId,
        /// `plan_approval`, `planner_questions` or `deviation`.
        kind: &'static str,
        /// What an answer may choose: the plan decisions, the deviation
        /// actions on offer, or `answer` for planner questions.
        actions: Vec<&'static str>,
    },
}

/// One run paused on an actionable decision point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDecision {
    run: RunId,
    point: PendingPoint,
    verdict: Option<Verdict>,
    decision: Option<String>,
    opened_at: Timestamp,
}

impl PendingDecision {
    /// A pending decision point of `run`, opened at `opened_at`, with the
    /// verdict it shows (if any) and the recorded decision's label (if one
    /// is recorded): what a [`Scanner`] returns.
    pub fn new(
        run: RunId,
        point: PendingPoint,
        verdict: Option<Verdict>,
        decision: Option<String>,
        opened_at: Timestamp,
    ) -> Self {
        Self {
            run,
            point,
            verdict,
            decision,
            opened_at,
        }
    }

    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The decision point.
        pub fn point(&self) -> &PendingPoint;
    }

    /// The phase, for a phase handoff; `delivery` or `intake` otherwise.
    pub fn phase(&self) -> &str {
        match &self.point {
            PendingPoint::PhaseHandoff { phase, .. } => phase.as_str(),
            PendingPoint::Delivery { .. } => "delivery",
            PendingPoint::Intake { .. } => "intake",
            PendingPoint::Touchpoint { kind, .. } => kind,
            PendingPoint::Permission { phase, .. } => phase,
        }
    }

    /// Why the run paused: the handoff trigger (`verdict`, `gate `tests``,
    /// `always_pause`), `release` for a delivery gate, `uncommitted_changes`
    /// for intake.
    pub fn trigger(&self) -> String {
        match &self.point {
            PendingPoint::PhaseHandoff { trigger, .. } => trigger.to_string(),
            PendingPoint::Delivery { .. } => "release".to_owned(),
            PendingPoint::Intake { .. } => "uncommitted_changes".to_owned(),
            PendingPoint::Touchpoint { kind, .. } => (*kind).to_owned(),
            PendingPoint::Permission { tool, subject, .. } => format!(
                "ask {} `{}`",
                crate::ask::shown(tool),
                crate::ask::shown(subject)
            ),
        }
    }

    /// The verdict that paused the run (none for intake).
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }

    /// The actions a decision may take, in menu order.
    pub fn available_actions(&self) -> Vec<&'static str> {
        match &self.point {
            PendingPoint::PhaseHandoff { actions, .. } => actions.spellings(),
            PendingPoint::Delivery { actions } => actions.spellings(),
            PendingPoint::Intake { .. } => IntakeActions::all().spellings(),
            PendingPoint::Touchpoint { actions, .. } => actions.clone(),
            PendingPoint::Permission { .. } => crate::ask::AskAction::SPELLINGS.to_vec(),
        }
    }

    /// Whether a decision is already recorded.
    pub fn is_decided(&self) -> bool {
        self.decision.is_some()
    }

    /// The recorded decision's label (its action), if any.
    pub fn decision(&self) -> Option<&str> {
        self.decision.as_deref()
    }

    /// What to do next.
    pub fn next_step(&self) -> SuggestedStep {
        match (&self.point, self.decision.is_some()) {
            (_, false) => SuggestedStep::Decide,
            (PendingPoint::PhaseHandoff { .. }, true) => SuggestedStep::Resume,
            (PendingPoint::Delivery { .. }, true) => SuggestedStep::Deliver,
            (PendingPoint::Intake { .. }, true) => SuggestedStep::Apply,
            (PendingPoint::Touchpoint { .. }, true) => SuggestedStep::Resume,
            // The agent's hook reads the decision itself.
            (PendingPoint::Permission { .. }, true) => SuggestedStep::Resume,
        }
    }

    /// When the decision point opened.
    pub fn opened_at(&self) -> Timestamp {
        self.opened_at
    }
}

/// A run directory the scan could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DegradedRun {
    dir: Utf8PathBuf,
    run: Option<RunId>,
    reason: String,
}

impl DegradedRun {
    /// The run directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The run, when the directory is named by a valid run id.
    pub fn run(&self) -> Option<&RunId> {
        self.run.as_ref()
    }

    /// What could not be read, as an error chain.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// One line of the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InboxEntry {
    /// A run paused on a decision point.
    Pending(PendingDecision),
    /// A run directory that could not be read.
    Degraded(DegradedRun),
}

/// The result of [`pending_decisions`]: pending decisions newest first, then
/// degraded run directories (newest name first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inbox {
    entries: Vec<InboxEntry>,
}

impl Inbox {
    /// Every entry.
    pub fn entries(&self) -> &[InboxEntry] {
        &self.entries
    }

    /// The pending decisions, newest first.
    pub fn pending(&self) -> impl Iterator<Item = &PendingDecision> {
        self.entries.iter().filter_map(|e| match e {
            InboxEntry::Pending(p) => Some(p),
            InboxEntry::Degraded(_) => None,
        })
    }

    /// The run directories that could not be read.
    pub fn degraded(&self) -> impl Iterator<Item = &DegradedRun> {
        self.entries.iter().filter_map(|e| match e {
            InboxEntry::Degraded(d) => Some(d),
            InboxEntry::Pending(_) => None,
        })
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing waits and nothing is degraded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps only the entries `keep` says yes to (for example, drops the
    /// points of runs that have ended).
    pub fn retain(&mut self, keep: impl FnMut(&InboxEntry) -> bool) {
        self.entries.retain(keep);
    }
}

/// One kind of decision point's contribution to the inbox: the pending
/// points of one run, read from the store. An `Err` is the reason the run
/// cannot be read; the run is then listed as degraded.
pub type Scanner = fn(&Arc<dyn Storage>, &RunId) -> Result<Vec<PendingDecision>, String>;

/// Lists every run of `storage` paused on an actionable phase handoff. See
/// the [module docs](self); [`pending_decisions_with`] adds other kinds of
/// decision points.
///
/// Read-only: it takes no locks and writes nothing.
///
/// # Errors
///
/// Only when the runs cannot be listed. A store with no runs has an empty
/// inbox; an unreadable run is listed as degraded.
pub fn pending_decisions(storage: &Arc<dyn Storage>) -> Result<Inbox, InboxError> {
    pending_decisions_with(storage, &[scan_handoffs])
}

/// Lists every run of `storage` paused on an actionable decision point of
/// the kinds `scanners` list, newest first.
///
/// # Errors
///
/// As [`pending_decisions`].
pub fn pending_decisions_with(
    storage: &Arc<dyn Storage>,
    scanners: &[Scanner],
) -> Result<Inbox, InboxError> {
    let listing = storage.runs().map_err(|source| InboxError {
        location: storage.location(),
        source,
    })?;
    let runs_dir = Utf8PathBuf::from(storage.location()).join("runs");
    let mut pending = Vec::new();
    let mut degraded: Vec<DegradedRun> = listing
        .unnamed
        .into_iter()
        .map(|(name, reason)| DegradedRun {
            dir: runs_dir.join(name),
            run: None,
            reason,
        })
        .collect();
    for run in listing.runs {
        match scanners.iter().try_fold(Vec::new(), |mut found, scan| {
            found.extend(scan(storage, &run)?);
            Ok::<_, String>(found)
        }) {
            Ok(found) => pending.extend(found),
            Err(reason) => degraded.push(DegradedRun {
                dir: runs_dir.join(run.as_str()),
                run: Some(run),
                reason,
            }),
        }
    }
    pending.sort_by(|a, b| {
        b.opened_at
            .cmp(&a.opened_at)
            .then_with(|| b.run.cmp(&a.run))
    });
    degraded.sort_by(|a, b| b.dir.cmp(&a.dir));
    Ok(Inbox {
        entries: pending
            .into_iter()
            .map(InboxEntry::Pending)
            .chain(degraded.into_iter().map(InboxEntry::Degraded))
            .collect(),
    })
}

/// The [`Scanner`] of phase handoffs: every handoff of the run that is open,
/// or decided but not resumed (a `halt` too: the run ends only when it is
/// resumed, and until then nothing else lists it).
pub fn scan_handoffs(
    storage: &Arc<dyn Storage>,
    run: &RunId,
) -> Result<Vec<PendingDecision>, String> {
    let stems = storage
        .list(run, Set::Questions(PointKind::Handoff))
        .map_err(|e| error_chain(&e))?;
    if stems.is_empty() {
        return Ok(Vec::new());
    }
    let handoffs = HandoffStore::new(Arc::clone(storage), Arc::new(SystemClock::new()));
    let resumed = handoffs.resumed(run).map_err(|e| error_chain(&e))?;
    let mut found = Vec::new();
    for stem in stems {
        let id = stem.parse::<HandoffId>().map_err(|e| {
            format!(
                "handoff `{stem}` of run `{run}` is not named by a handoff id: {}",
                error_chain(&e)
            )
        })?;
        if resumed.contains(&id) {
            continue;
        }
        let handoff = handoffs.handoff(run, &id).map_err(|e| error_chain(&e))?;
        let decision = handoffs
            .decision_slot(run, &id)
            .read()
            .map_err(|e| error_chain(&e))?;
        found.push(PendingDecision {
            run: run.clone(),
            verdict: Some(handoff.verdict()),
            decision: decision.map(|d| d.decision().payload().action().as_str().to_owned()),
            opened_at: handoff.created_at(),
            point: PendingPoint::PhaseHandoff {
                handoff: id,
                phase: handoff.phase().clone(),
                trigger: handoff.trigger().clone(),
                actions: handoff.available_actions(),
            },
        });
    }
    Ok(found)
}

/// The inbox scan could not list the store's runs. (A run that cannot be
/// read is not an error: it is listed as degraded.)
#[derive(Debug, thiserror::Error)]
#[error("cannot list the runs in `{location}`")]
pub struct InboxError {
    location: String,
    #[source]
    source: StoreError,
}

impl InboxError {
    /// Where the store is.
    pub fn location(&self) -> &str {
        &self.location
    }
}
