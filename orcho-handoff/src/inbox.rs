//! The decision inbox: every run of a store that waits for somebody.
//!
//! [`pending_decisions`] scans `runs/*/` under a store root and lists every
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
//! ```
//! use std::sync::Arc;
//! use orcho_core::{FixedClock, Verdict};
//! use orcho_handoff::{HandoffSpec, HandoffStore, SuggestedStep, pending_decisions};
//!
//! # let tmp = tempfile::tempdir()?;
//! # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let store = HandoffStore::new(&root, Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?)));
//! store.open(HandoffSpec::new("run-1".parse()?, "implement".parse()?, Verdict::Rejected))?;
//!
//! let inbox = pending_decisions(&root)?;
//! let pending: Vec<_> = inbox.pending().collect();
//! assert_eq!(pending.len(), 1);
//! assert_eq!(pending[0].run().as_str(), "run-1");
//! assert_eq!(pending[0].next_step(), SuggestedStep::Decide);
//! assert_eq!(pending[0].available_actions(), ["continue", "retry_feedback", "continue_with_waiver", "halt"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::{collections::HashSet, fmt, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{HandoffId, PhaseName, RunId, SystemClock, Timestamp, Verdict, error_chain};

use crate::{
    AvailableActions, DeliveryActions, HandoffChoice, HandoffStore, HandoffTrigger, JournalEvent,
    decision::DecisionSlot,
    delivery::{DeliveryChoice, DeliveryGates, read_gate_at, read_outcome_at},
    error::InboxError,
    intake::{IntakeChoice, Intakes},
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

impl SuggestedStep {
    /// `decide`, `resume`, `deliver` or `apply`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Decide => "decide",
            Self::Resume => "resume",
            Self::Deliver => "deliver",
            Self::Apply => "apply",
        }
    }
}

impl fmt::Display for SuggestedStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// The run.
    pub fn run(&self) -> &RunId {
        &self.run
    }

    /// The decision point.
    pub fn point(&self) -> &PendingPoint {
        &self.point
    }

    /// The phase, for a phase handoff; `delivery` or `intake` otherwise.
    pub fn phase(&self) -> &str {
        match &self.point {
            PendingPoint::PhaseHandoff { phase, .. } => phase.as_str(),
            PendingPoint::Delivery { .. } => "delivery",
            PendingPoint::Intake { .. } => "intake",
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
        }
    }

    /// The verdict that paused the run (none for intake).
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }

    /// The actions a decision may take, in menu order.
    pub fn available_actions(&self) -> Vec<&'static str> {
        match &self.point {
            PendingPoint::PhaseHandoff { actions, .. } => {
                actions.iter().map(|a| a.as_str()).collect()
            }
            PendingPoint::Delivery { actions } => actions.iter().map(|a| a.as_str()).collect(),
            PendingPoint::Intake { .. } => crate::IntakeAction::ALL
                .into_iter()
                .map(crate::IntakeAction::as_str)
                .collect(),
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
}

/// Lists every run under `store_root` paused on an actionable phase
/// handoff, delivery gate or intake question. See the [module docs](self).
///
/// Read-only: it takes no locks and writes nothing.
///
/// # Errors
///
/// Only when `store_root/runs` exists and cannot be listed. A store with
/// no runs directory has an empty inbox; an unreadable run is listed as
/// degraded.
pub fn pending_decisions(store_root: &Utf8Path) -> Result<Inbox, InboxError> {
    let runs_dir = store_root.join("runs");
    let entries = match std::fs::read_dir(&runs_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Inbox::default()),
        Err(e) => return Err(InboxError::new(&runs_dir, e)),
    };
    let store = HandoffStore::new(store_root, Arc::new(SystemClock::new()));
    let mut pending = Vec::new();
    let mut degraded = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| InboxError::new(&runs_dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            degraded.push(DegradedRun {
                dir: runs_dir.join(entry.file_name().to_string_lossy().as_ref()),
                run: None,
                reason: "the directory name is not valid UTF-8".to_owned(),
            });
            continue;
        };
        if name.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = runs_dir.join(&name);
        let run = match name.parse::<RunId>() {
            Ok(run) => run,
            Err(e) => {
                degraded.push(DegradedRun {
                    dir,
                    run: None,
                    reason: error_chain(&e),
                });
                continue;
            }
        };
        match scan_run(&store, &dir, &run) {
            Ok(found) => pending.extend(found),
            Err(reason) => degraded.push(DegradedRun {
                dir,
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

/// The pending decision points of one run, or why it cannot be read.
fn scan_run(
    store: &HandoffStore,
    dir: &Utf8Path,
    run: &RunId,
) -> Result<Vec<PendingDecision>, String> {
    let mut found = Vec::new();
    scan_handoffs(store, dir, run, &mut found)?;
    scan_delivery(store.root(), run, &mut found)?;
    scan_intake(store.root(), run, &mut found)?;
    Ok(found)
}

fn scan_handoffs(
    store: &HandoffStore,
    dir: &Utf8Path,
    run: &RunId,
    found: &mut Vec<PendingDecision>,
) -> Result<(), String> {
    let handoffs_dir = dir.join("handoffs");
    let stems = match std::fs::read_dir(&handoffs_dir) {
        Ok(entries) => entries
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                (!name.starts_with('.'))
                    .then(|| name.strip_suffix(".json").map(str::to_owned))
                    .flatten()
            })
            .collect::<Vec<_>>(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("failed to list `{handoffs_dir}`: {e}")),
    };
    if stems.is_empty() {
        return Ok(());
    }
    let resumed: HashSet<HandoffId> = store
        .journal(run)
        .map_err(|e| error_chain(&e))?
        .into_iter()
        .filter(|e| matches!(e.event(), JournalEvent::Resumed { .. }))
        .map(|e| e.handoff().clone())
        .collect();
    for stem in stems {
        let id = stem.parse::<HandoffId>().map_err(|e| {
            format!(
                "`{stem}.json` in `{handoffs_dir}` is not named by a handoff id: {}",
                error_chain(&e)
            )
        })?;
        if resumed.contains(&id) {
            continue;
        }
        let handoff = store.handoff(run, &id).map_err(|e| error_chain(&e))?;
        let decision = DecisionSlot::<HandoffChoice>::in_run(store.root(), run, &id)
            .read()
            .map_err(|e| error_chain(&e))?;
        if decision
            .as_ref()
            .is_some_and(|d| *d.decision().payload() == HandoffChoice::Halt)
        {
            continue;
        }
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
    Ok(())
}

fn scan_delivery(
    root: &Utf8Path,
    run: &RunId,
    found: &mut Vec<PendingDecision>,
) -> Result<(), String> {
    let dir = DeliveryGates::dir(root, run);
    let gate = match read_gate_at(&dir.join("gate.json"), run) {
        Ok(gate) => gate,
        Err(crate::DeliveryErrorKind::NotFound) => return Ok(()),
        Err(e) => {
            return Err(format!(
                "the delivery gate cannot be read: {}",
                error_chain(&e)
            ));
        }
    };
    let delivered = read_outcome_at(&dir.join("outcome.json"), run)
        .map_err(|e| format!("the delivery outcome cannot be read: {}", error_chain(&e)))?;
    if delivered.is_some() {
        return Ok(());
    }
    let decision =
        DecisionSlot::<DeliveryChoice>::in_run(root, run, &crate::delivery::delivery_point())
            .read()
            .map_err(|e| error_chain(&e))?;
    found.push(PendingDecision {
        run: run.clone(),
        verdict: Some(gate.verdict),
        decision: decision.map(|d| d.decision().payload().action().as_str().to_owned()),
        opened_at: gate.created_at,
        point: PendingPoint::Delivery {
            actions: gate.available_actions,
        },
    });
    Ok(())
}

fn scan_intake(
    root: &Utf8Path,
    run: &RunId,
    found: &mut Vec<PendingDecision>,
) -> Result<(), String> {
    let dir = Intakes::dir(root, run);
    let question = dir.join("intake.json");
    if !question.exists() {
        return Ok(());
    }
    let intakes = Intakes::new(root, Arc::new(SystemClock::new()));
    if intakes.outcome(run).map_err(|e| error_chain(&e))?.is_some() {
        return Ok(());
    }
    let (report, asked_at) = intakes.question(run).map_err(|e| error_chain(&e))?;
    let decision = DecisionSlot::<IntakeChoice>::in_run(root, run, &crate::intake::intake_point())
        .read()
        .map_err(|e| error_chain(&e))?;
    found.push(PendingDecision {
        run: run.clone(),
        verdict: None,
        decision: decision.map(|d| d.decision().payload().action().as_str().to_owned()),
        opened_at: asked_at,
        point: PendingPoint::Intake {
            count: report.count(),
        },
    });
    Ok(())
}
