//! What hosts read about the decision points of runs: what waits for a
//! decision (the inbox, of this checkout or a team), each kind's question
//! and the decision recorded on it, and who decided what.

use camino::Utf8Path;
use orcho_core::{RunId, RunStatus};
use orcho_delivery::{DeliveryGate, TargetStatus};
use orcho_handoff::{
    decision::RecordedDecision, delivery::DeliveryChoice, handoff::HandoffChoice, inbox::Inbox,
    supervision::SupervisionStore,
};

use super::Store;
use crate::{EngineError, error::EngineErrorKind};

impl Store {
    /// Every decision recorded on `run`'s decision points (handoffs,
    /// touchpoints, intake, delivery), oldest first: what was decided, by
    /// whom and when. A record that does not read is left out.
    ///
    /// # Errors
    ///
    /// When the run's points cannot be listed.
    pub fn decisions(&self, run: &RunId) -> Result<Vec<crate::DecisionAudit>, EngineError> {
        use orcho_core::storage::{Item, PointKind, Set};

        /// The fields every decision record has, whatever its payload.
        #[derive(serde::Deserialize)]
        struct Record {
            kind: String,
            payload: serde_json::Value,
            decided_by: orcho_handoff::decision::DecidedBy,
            #[serde(default)]
            client: Option<String>,
            #[serde(default)]
            by: Option<String>,
            #[serde(default)]
            note: Option<String>,
            decided_at: orcho_core::Timestamp,
        }
        let err = |e| EngineError::run(run, e);
        let mut out = Vec::new();
        for kind in PointKind::ALL {
            let mut names = self.storage.list(run, Set::Questions(*kind)).map_err(err)?;
            names.sort();
            for name in names {
                let Ok(point) = name.parse::<orcho_core::HandoffId>() else {
                    continue;
                };
                let Some(bytes) = self.storage.get(run, Item::Decision(&point)).map_err(err)?
                else {
                    continue;
                };
                let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
                    continue;
                };
                out.push(crate::DecisionAudit {
                    point,
                    action: record.payload["action"].as_str().map(str::to_owned),
                    kind: record.kind,
                    decided_by: record.decided_by,
                    client: record.client,
                    by: record.by,
                    // The record's own note, else the text its payload
                    // carries (feedback, a reason, a note).
                    note: record.note.or_else(|| {
                        ["text", "note", "feedback", "reason"]
                            .iter()
                            .find_map(|k| record.payload[*k].as_str().map(str::to_owned))
                    }),
                    decided_at: record.decided_at,
                });
            }
        }
        out.sort_by_key(|d| d.decided_at);
        Ok(out)
    }

    /// The runs of the store that no process drives any more, stopped
    /// while they ran ([`RunView::stopped`](crate::RunView::stopped)),
    /// newest first.
    ///
    /// # Errors
    ///
    /// When the runs cannot be listed.
    pub fn stopped_runs(&self) -> Result<Vec<crate::RunView>, EngineError> {
        let points = self.points()?;
        self.stopped_in(&points, &mut States::new())
    }

    /// The stopped runs, each read from `points` when it holds the run
    /// (or `states` already has it), else from the store.
    fn stopped_in(
        &self,
        points: &Points,
        states: &mut States,
    ) -> Result<Vec<crate::RunView>, EngineError> {
        let mut runs = self.runs.runs()?;
        runs.reverse();
        let mut stopped = Vec::new();
        for run in runs {
            let state = match states.get(&run) {
                Some(state) => state.clone(),
                None => points
                    .read(&run)
                    .or_else(|| self.runs.read(&run).ok().map(Box::new)),
            };
            let Some(state) = state else { continue };
            // Only a run that would be running asks whether it is driven.
            if matches!(state.status(), RunStatus::Created | RunStatus::Running)
                && !self.runs.is_driven(&run)
            {
                let mut view = crate::RunView::from(&*state);
                view.stopped = true;
                stopped.push(view);
            }
        }
        Ok(stopped)
    }

    /// What waits for people across the store, as `filter` keeps it: the
    /// pending decisions, the stopped runs, and where each run was started
    /// (with a shared store, on every machine and checkout).
    ///
    /// # Errors
    ///
    /// When the runs, or a run's origin, cannot be read.
    pub fn team_inbox(&self, filter: &crate::InboxFilter) -> Result<crate::TeamInbox, EngineError> {
        self.gather_inbox(filter, None)
    }

    /// One page of [`team_inbox`](Self::team_inbox): the decisions first,
    /// newest first, then the stopped runs; [`TeamInbox::total`](crate::TeamInbox::total)
    /// counts what the filter kept on every page. A page past the last is
    /// empty.
    ///
    /// Reading a page costs a few round trips on a store where each read
    /// is one (a database): the decision points are read at once, and only
    /// a run that would be running is asked whether a process drives it.
    ///
    /// # Errors
    ///
    /// When the runs, or a run's origin, cannot be read.
    pub fn team_inbox_page(
        &self,
        filter: &crate::InboxFilter,
        page: crate::InboxPage,
    ) -> Result<crate::TeamInbox, EngineError> {
        self.gather_inbox(filter, Some(page))
    }

    fn gather_inbox(
        &self,
        filter: &crate::InboxFilter,
        page: Option<crate::InboxPage>,
    ) -> Result<crate::TeamInbox, EngineError> {
        let points = self.points()?;
        let mut states = States::new();
        let mut inbox = self.inbox_in(&points, &mut states)?;
        let mut stopped = self.stopped_in(&points, &mut states)?;
        let mut origins = std::collections::BTreeMap::new();
        let runs = inbox
            .pending()
            .map(|p| p.run().clone())
            .chain(stopped.iter().map(|v| v.run.clone()))
            .collect::<Vec<_>>();
        for run in runs {
            if origins.contains_key(&run) {
                continue;
            }
            let mut origin = points
                .storage
                .origin(&run)
                .map_err(|e| EngineError::run(&run, e))?;
            if origin.is_none() && points.viewed {
                origin = self.origin(&run)?;
            }
            if let Some(origin) = origin {
                origins.insert(run, origin);
            }
        }
        let revision = blake3::hash(format!("{inbox:?}{stopped:?}").as_bytes())
            .to_hex()
            .to_string();
        let now = self.clock.now();
        inbox.retain(|entry| match entry {
            orcho_handoff::inbox::InboxEntry::Pending(p) => {
                filter.keeps(origins.get(p.run()))
                    && filter
                        .kind
                        .is_none_or(|k| crate::point::PointKind::of_pending(p.point()) == Some(k))
                    && filter.keeps_age(p.opened_at(), now)
            }
            _ => true,
        });
        stopped.retain(|view| {
            filter.kind.is_none()
                && filter.keeps(origins.get(&view.run))
                && view
                    .run
                    .created_at()
                    .is_none_or(|at| filter.keeps_age(at, now))
        });
        let mut team = crate::TeamInbox {
            total: inbox.pending().count() + stopped.len(),
            inbox,
            stopped,
            origins,
            page: None,
            revision,
            views: std::collections::BTreeMap::new(),
        };
        if let Some(page) = page {
            team.keep_page(page);
        }
        for p in team.inbox.pending() {
            if let Some(Some(state)) = states.get(p.run()) {
                team.views
                    .entry(p.run().clone())
                    .or_insert_with(|| crate::RunView::from(&**state));
            }
        }
        Ok(team)
    }

    /// The runs of this store that wait at their delivery gate to deliver
    /// into `target`, newest first: their work and its receipts are in
    /// their worktrees, not in `target` yet (what a status of `target`
    /// says beside its receipts). Read as the inbox reads its decision
    /// points, not run by run.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    pub fn awaiting_delivery_into(&self, target: &Utf8Path) -> Result<Vec<RunId>, EngineError> {
        let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
        let target = real(target);
        let inbox = self
            .team_inbox(&crate::InboxFilter::all().with_kind(crate::point::PointKind::Delivery))?;
        let mut runs: Vec<RunId> = inbox
            .views
            .into_values()
            .filter(|view| {
                matches!(view.waiting, Some(crate::Waiting::Delivery))
                    && view.target.as_deref().map(real).as_deref() == Some(target.as_path())
            })
            .map(|view| view.run)
            .collect();
        runs.sort_by(|a, b| b.cmp(a));
        Ok(runs)
    }

    /// The decision inbox of this store: every run paused on an actionable
    /// phase handoff, delivery gate or intake question, newest first, with
    /// the suggested next step. Unreadable runs are listed as degraded.
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn inbox(&self) -> Result<Inbox, EngineError> {
        self.inbox_in(&self.points()?, &mut States::new())
    }

    /// Where a scan of the decision points reads: a copy of the runs with
    /// decision points, read at once, when each read of the store is a
    /// round trip; the store itself otherwise.
    fn points(&self) -> Result<Points, EngineError> {
        let view = self
            .storage
            .points_view()
            .map_err(|e| EngineError::store(Utf8Path::new(&self.location()), e))?;
        let viewed = view.is_some();
        let storage = view.unwrap_or_else(|| std::sync::Arc::clone(&self.storage));
        Ok(Points {
            runs: super::imp::RunStore::new(
                std::sync::Arc::clone(&storage),
                std::time::Duration::ZERO,
            ),
            storage,
            viewed,
        })
    }

    /// The inbox as `points` holds it; each run it reads is kept in
    /// `states`.
    fn inbox_in(&self, points: &Points, states: &mut States) -> Result<Inbox, EngineError> {
        let mut inbox = orcho_delivery::pending_decisions(&points.storage).map_err(|e| {
            EngineError::store(
                Utf8Path::new(&self.location()),
                EngineErrorKind::Inbox(Box::new(e)),
            )
        })?;
        // A run that ended (cancelled, say) leaves the points it waited at
        // as they were; nobody has to decide them any more.
        // A touchpoint is pending only while its run waits at it.
        let now = self.clock.now();
        inbox.retain(|entry| match entry {
            orcho_handoff::inbox::InboxEntry::Pending(p) => {
                let state = states
                    .entry(p.run().clone())
                    .or_insert_with(|| points.runs.read(p.run()).ok().map(Box::new));
                let Some(state) = state else {
                    return true;
                };
                match p.point() {
                    orcho_handoff::inbox::PendingPoint::Touchpoint { touchpoint, .. } => {
                        state.touchpoint() == Some(touchpoint)
                    }
                    // An agent's question is pending while its phase runs
                    // and its hook waits: one whose hook died (its agent
                    // killed, say) waits for nobody once that wait is over.
                    orcho_handoff::inbox::PendingPoint::Permission { phase, until, .. } => {
                        state.status() == RunStatus::Running
                            && state.current_phase().is_some_and(|p| p.as_str() == phase)
                            && until.checked_add(ASK_GRACE).is_none_or(|over| now <= over)
                    }
                    _ => !state.status().is_terminal(),
                }
            }
            _ => true,
        });
        Ok(inbox)
    }

    /// The decision points `run` waits on, as the inbox lists them: an open
    /// or decided handoff, its delivery gate or its intake question.
    ///
    /// # Errors
    ///
    /// When one of them cannot be read.
    pub fn pending(
        &self,
        run: &RunId,
    ) -> Result<Vec<orcho_handoff::inbox::PendingDecision>, EngineError> {
        let mut found = Vec::new();
        for scan in orcho_delivery::SCANNERS {
            found.extend(scan(&self.storage, run).map_err(|reason| {
                EngineError::run(run, EngineErrorKind::Unreadable(reason.into()))
            })?);
        }
        Ok(found)
    }

    /// The open (or answered but not yet resumed) supervision touchpoints of
    /// a run.
    ///
    /// # Errors
    ///
    /// When they cannot be read.
    pub fn touchpoints(
        &self,
        run: &RunId,
    ) -> Result<Vec<orcho_handoff::supervision::OpenTouchpoint>, EngineError> {
        // The run waits at an answered touchpoint until it is resumed.
        let waiting_at = self.runs.read(run)?.touchpoint().cloned();
        let mut all = SupervisionStore::new(
            std::sync::Arc::clone(&self.storage),
            run.clone(),
            self.clock.clone(),
        )
        .all()
        .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))?;
        all.retain(|t| t.resolution.is_none() || waiting_at.as_ref() == Some(&t.id));
        Ok(all)
    }

    /// The decision recorded on touchpoint `id` of `run` (its answers, who
    /// gave them and when), if any.
    ///
    /// # Errors
    ///
    /// A record that cannot be read or was altered.
    pub fn touchpoint_decision(
        &self,
        run: &RunId,
        id: &orcho_core::HandoffId,
    ) -> Result<Option<RecordedDecision<orcho_handoff::supervision::TouchpointAnswers>>, EngineError>
    {
        SupervisionStore::new(
            std::sync::Arc::clone(&self.storage),
            run.clone(),
            self.clock.clone(),
        )
        .recorded(id)
        .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))
    }

    /// The run's pre-run intake question: what is uncommitted in its target
    /// checkout.
    ///
    /// # Errors
    ///
    /// No intake question for the run, or it cannot be read.
    pub fn intake_report(&self, run: &RunId) -> Result<orcho_delivery::IntakeReport, EngineError> {
        self.intakes
            .question(run)
            .map(|(report, _)| report)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))
    }

    /// The decision recorded on the run's intake question, if any (until
    /// the run acts on it, and after).
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn intake_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<orcho_handoff::intake::IntakeChoice>>, EngineError> {
        self.intakes
            .recorded_decision(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))
    }

    /// The run's delivery gate, once open.
    ///
    /// # Errors
    ///
    /// No gate yet, or it cannot be read.
    pub fn delivery_gate(&self, run: &RunId) -> Result<DeliveryGate, EngineError> {
        self.deliveries
            .gate(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The decision recorded on the run's delivery gate, if any (it is
    /// delivered on [`Run::resume`](crate::Run::resume)).
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn delivery_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<DeliveryChoice>>, EngineError> {
        self.deliveries
            .recorded_decision(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The target checkout's status for the run's diff, checked now: what
    /// `approve` and `apply` would meet if they were decided now
    /// ([`TargetStatus::refused`]). The gate's menu is fixed when the gate
    /// opens; the target can change while it waits.
    ///
    /// # Errors
    ///
    /// No gate yet, or the target cannot be read.
    pub fn delivery_target(&self, run: &RunId) -> Result<TargetStatus, EngineError> {
        let gate = self.delivery_gate(run)?;
        self.deliveries
            .target_status(&gate)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The phase handoffs of `run` that were moved past with `continue`,
    /// oldest first: what the gate's verdicts, the last review's alone, do
    /// not show.
    ///
    /// # Errors
    ///
    /// When the run's handoffs or their decisions cannot be read.
    pub fn overridden(&self, run: &RunId) -> Result<Vec<crate::Overridden>, EngineError> {
        let err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.handoffs;
        let mut out = Vec::new();
        for handoff in store.handoffs(run).map_err(err)? {
            let Some(recorded) = store.recorded_decision(run, handoff.id()).map_err(err)? else {
                continue;
            };
            let decision = recorded.decision();
            if *decision.payload() == HandoffChoice::Continue {
                out.push(crate::Overridden {
                    handoff: handoff.id().clone(),
                    phase: handoff.phase().clone(),
                    verdict: handoff.verdict(),
                    trigger: handoff.trigger().to_string(),
                    decided_by: decision.decided_by(),
                    client: decision.client().map(str::to_owned),
                });
            }
        }
        Ok(out)
    }

    /// The run's diff as the binary patch its delivery gate would
    /// deliver.
    ///
    /// # Errors
    ///
    /// No delivery gate, or a patch that is not the gate's any more.
    pub fn delivery_patch(&self, run: &RunId) -> Result<Vec<u8>, EngineError> {
        self.deliveries
            .patch(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The run's phase handoffs, in the order they opened.
    ///
    /// # Errors
    ///
    /// An unknown run, or a handoff that cannot be read.
    pub fn handoffs(
        &self,
        run: &RunId,
    ) -> Result<Vec<orcho_handoff::handoff::PhaseHandoff>, EngineError> {
        self.handoffs
            .handoffs(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// The decision recorded on handoff `handoff` of `run`, if any.
    ///
    /// # Errors
    ///
    /// An unknown handoff, or a record that cannot be read or was altered.
    pub fn handoff_decision(
        &self,
        run: &RunId,
        handoff: &orcho_core::HandoffId,
    ) -> Result<Option<RecordedDecision<HandoffChoice>>, EngineError> {
        self.handoffs
            .recorded_decision(run, handoff)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// Every advice artifact of `run`, in the order they were written.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn advice(
        &self,
        run: &RunId,
    ) -> Result<Vec<orcho_handoff::advisor::AdviceRecord>, EngineError> {
        self.handoffs
            .advice_records(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// Phase handoff `handoff` of `run`.
    ///
    /// # Errors
    ///
    /// An unknown handoff, or one that cannot be read.
    pub fn handoff(
        &self,
        run: &RunId,
        handoff: &orcho_core::HandoffId,
    ) -> Result<orcho_handoff::handoff::PhaseHandoff, EngineError> {
        self.handoffs
            .handoff(run, handoff)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// Every waiver `continue_with_waiver` decisions gave in `run`.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn waivers(&self, run: &RunId) -> Result<orcho_handoff::waiver::WaiverSet, EngineError> {
        self.handoffs
            .waivers(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }
}

/// How long after its hook's wait is over an agent's question still shows:
/// the hook records its own refusal then, a poll later.
const ASK_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The runs read by one scan of the inbox, by id (`None`: unreadable).
type States = std::collections::BTreeMap<RunId, Option<Box<crate::RunState>>>;

/// Where a scan of the decision points reads (see [`Store::points`]).
struct Points {
    storage: std::sync::Arc<dyn orcho_core::storage::Storage>,
    runs: super::imp::RunStore,
    /// Whether `storage` is a copy, which holds only the runs with
    /// decision points and cannot tell whether a run is driven.
    viewed: bool,
}

impl Points {
    /// `run` as the copy holds it; `None` for a run it does not hold (or
    /// when it is no copy: the caller reads the store).
    fn read(&self, run: &RunId) -> Option<Box<crate::RunState>> {
        if !self.viewed || !self.storage.has_run(run).unwrap_or(false) {
            return None;
        }
        self.runs.read(run).ok().map(Box::new)
    }
}
