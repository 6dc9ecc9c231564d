//! What hosts read about runs: where they stand, what waits for a
//! decision, their history and the documents of their decision points.

use camino::Utf8Path;
use orcho_core::{RunId, RunStatus};
use orcho_delivery::{DeliveryGate, DeliveryOutcome, FollowUpSpec, TargetStatus};
use orcho_handoff::{
    decision::RecordedDecision, delivery::DeliveryChoice, handoff::HandoffChoice, inbox::Inbox,
    supervision::SupervisionStore,
};

use super::Store;
use crate::{EngineError, Listed, error::EngineErrorKind, state::RunEvent};

impl Store {
    /// The run `reference` names: a whole run id, `latest` (the newest
    /// run), or the start of exactly one run id. In a shared store,
    /// `latest` and prefixes look among this checkout's runs, and a whole
    /// id names any checkout's run.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_unknown_run`] when nothing matches,
    /// [`EngineError::is_ambiguous_run`] when several runs do.
    pub fn find_run(&self, reference: &str) -> Result<RunId, EngineError> {
        // A whole id is looked up alone, without listing every run: what
        // a script, a page or another machine names a run by.
        if let Ok(run) = reference.parse::<RunId>()
            && self
                .storage
                .has_run(&run)
                .map_err(|e| EngineError::run(&run, e))?
        {
            return Ok(run);
        }
        let runs = self.runs.runs()?;
        let unknown = || match reference.parse::<RunId>() {
            Ok(run) => EngineError::run(&run, crate::Refusal::UnknownRun),
            Err(_) => {
                EngineError::store(Utf8Path::new(&self.location()), crate::Refusal::UnknownRun)
            }
        };
        if reference == "latest" {
            return runs.last().cloned().ok_or_else(unknown);
        }
        if let Some(exact) = runs.iter().find(|r| r.as_str() == reference) {
            return Ok(exact.clone());
        }
        let mut candidates: Vec<RunId> = runs
            .into_iter()
            .filter(|r| !reference.is_empty() && r.as_str().starts_with(reference))
            .collect();
        if candidates.len() > 1 {
            return Err(EngineError::store(
                Utf8Path::new(&self.location()),
                crate::Refusal::AmbiguousRun {
                    reference: reference.to_owned(),
                    candidates,
                },
            ));
        }
        candidates.pop().ok_or_else(unknown)
    }

    /// Where `run` was started, for a store that several machines or
    /// checkouts share (`None` for a store only this checkout uses): a run
    /// started elsewhere is read and decided from here, and driven there.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    pub fn origin(
        &self,
        run: &RunId,
    ) -> Result<Option<orcho_core::storage::RunOrigin>, EngineError> {
        self.storage
            .origin(run)
            .map_err(|e| EngineError::run(run, e))
    }

    /// Where each of `runs` was started ([`origin`](Self::origin)), asked
    /// at once: one round trip on a database. A run started in a store
    /// only this checkout uses has none, and is left out.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    pub fn origins(
        &self,
        runs: &[RunId],
    ) -> Result<std::collections::BTreeMap<RunId, orcho_core::storage::RunOrigin>, EngineError>
    {
        self.storage
            .origins(runs)
            .map_err(|e| EngineError::store(Utf8Path::new(&self.location()), e))
    }

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

    /// The correction follow-up started for `parent`, if one was.
    ///
    /// # Errors
    ///
    /// When the runs cannot be listed.
    pub fn follow_up_child(&self, parent: &RunId) -> Result<Option<RunId>, EngineError> {
        Ok(self.list()?.into_iter().find_map(|listed| match listed {
            Listed::Run(view) if view.follow_up_of.as_ref() == Some(parent) => Some(view.run),
            _ => None,
        }))
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

    /// Every run of the store, newest first, as hosts show it; a run that
    /// does not read is listed with the reason.
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn list(&self) -> Result<Vec<Listed>, EngineError> {
        let mut runs = self.runs.runs()?;
        runs.reverse();
        Ok(runs
            .into_iter()
            .map(|run| match self.runs.read(&run) {
                Ok(state) => Listed::Run(Box::new(self.view_of(&state))),
                Err(e) => Listed::Unreadable {
                    reason: orcho_core::error_chain(&e),
                    run,
                },
            })
            .collect())
    }

    /// Where `run` stands, as hosts show it: its status, phase, cost and the
    /// decision point it waits on.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn status(&self, run: &RunId) -> Result<crate::RunView, EngineError> {
        Ok(self.view_of(&self.runs.read(run)?))
    }

    /// The view of a run read from the store, with whether it was stopped
    /// ([`RunView::stopped`](crate::RunView::stopped)).
    pub(crate) fn view_of(&self, state: &crate::RunState) -> crate::RunView {
        let mut view = crate::RunView::from(state);
        view.stopped = matches!(view.status, RunStatus::Created | RunStatus::Running)
            && !self.runs.is_driven(&view.run);
        view
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
                    // An agent's question is pending while its phase runs.
                    orcho_handoff::inbox::PendingPoint::Permission { .. } => {
                        state.status() == RunStatus::Running
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

    /// The run's trace: one line per durable transition, without times or
    /// ids, for tests and humans.
    ///
    /// # Errors
    ///
    /// When the run cannot be read.
    pub fn trace(&self, run: &RunId) -> Result<String, EngineError> {
        let mut out = String::new();
        for (_, event) in self.runs.events(run)? {
            out.push_str(&event.trace_line());
            out.push('\n');
        }
        Ok(out)
    }

    /// Every phase attempt of `run` with its gates, as the evidence bundle
    /// lists them, without writing the bundle: what a host shows as each
    /// attempt settles.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn phases(&self, run: &RunId) -> Result<Vec<crate::PhaseEvidence>, EngineError> {
        Ok(crate::evidence::phases(&self.runs.events(run)?))
    }

    /// Every phase attempt `run` reported, in order: what the phase said
    /// before its gates ran.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn attempts(&self, run: &RunId) -> Result<Vec<crate::AttemptView>, EngineError> {
        Ok(self
            .runs
            .events(run)?
            .into_iter()
            .filter_map(|(_, event)| match event {
                RunEvent::PhaseReported {
                    phase,
                    attempt,
                    round,
                    outcome,
                    ..
                } => Some(crate::AttemptView {
                    phase,
                    attempt,
                    round,
                    outcome,
                }),
                _ => None,
            })
            .collect())
    }

    /// What the host that started `run` keeps with it
    /// ([`Start::host_metadata`](crate::Start::host_metadata)), if it kept
    /// anything.
    ///
    /// # Errors
    ///
    /// An unknown run, or an unreadable document.
    pub fn host_metadata(&self, run: &RunId) -> Result<Option<serde_json::Value>, EngineError> {
        self.runs.host_metadata(run)
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

    /// The correction follow-up of a run whose delivery was decided `fix`
    /// and delivered: start it with
    /// [`start_with`](crate::Engine::start_with)`(`[`Start::follow_up`](crate::Start::follow_up)`(spec))`.
    ///
    /// # Errors
    ///
    /// [`Refusal::NoFollowUp`](crate::Refusal::NoFollowUp) when the run's delivery was not a
    /// delivered `fix`.
    pub fn follow_up(&self, run: &RunId) -> Result<FollowUpSpec, EngineError> {
        match self
            .deliveries
            .outcome(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))?
        {
            Some(DeliveryOutcome::CorrectionReady(spec)) => Ok(spec),
            _ => Err(EngineError::run(run, crate::Refusal::NoFollowUp)),
        }
    }
}

impl Store {
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

    /// The state of `run`, replayed from its journal.
    ///
    /// # Errors
    ///
    /// An unknown run, an unreadable journal, or events from a newer Orcho.
    pub fn state(&self, run: &RunId) -> Result<crate::RunState, EngineError> {
        self.runs.read(run)
    }

    /// The state as the run's snapshot last recorded it, read without
    /// replaying the journal: as current as the last snapshot written (the
    /// journal stays the source of truth).
    ///
    /// # Errors
    ///
    /// An unknown run, an unreadable or invalid snapshot.
    pub fn snapshot(&self, run: &RunId) -> Result<crate::RunState, EngineError> {
        self.runs.snapshot(run)
    }

    /// The journal of `run`, in order, with each event's sequence number.
    ///
    /// # Errors
    ///
    /// As [`state`](Self::state).
    pub fn events(&self, run: &RunId) -> Result<Vec<(u64, RunEvent)>, EngineError> {
        self.runs.events(run)
    }

    /// The run's evidence bundle: phases with their gates (outcomes,
    /// strategies, durations), handoffs with their decisions, the
    /// `handoff_advice` section, costs, and — under `contract`, when the
    /// run's checkout is on this machine — its receipts' classification.
    /// Nothing is written: [`write_evidence`](Self::write_evidence) keeps
    /// it.
    ///
    /// # Errors
    ///
    /// When the run, its handoffs or its receipts cannot be read.
    pub fn evidence(
        &self,
        run: &RunId,
        contract: Option<&orcho_receipts::VerificationContract>,
    ) -> Result<crate::Evidence, EngineError> {
        let state = self.runs.read(run)?;
        let events = self.runs.events(run)?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.handoffs;
        let mut handoffs = Vec::new();
        for h in store.handoffs(run).map_err(handoff_err)? {
            let decision = store
                .recorded_decision(run, h.id())
                .map_err(handoff_err)?
                .map(|d| {
                    let d = d.decision();
                    crate::evidence::DecisionEvidence {
                        action: d.payload().action(),
                        // Feedback or a waiver's reason; for `continue`
                        // and `halt`, the note given with them.
                        text: d.payload().text().or(d.note()).map(str::to_owned),
                        decided_by: d.decided_by(),
                        client: d.client().map(str::to_owned),
                        by: d.who().map(str::to_owned),
                        advice: d.advice().map(ToString::to_string),
                        decided_at: d.decided_at(),
                    }
                });
            handoffs.push(crate::evidence::HandoffEvidence {
                id: h.id().clone(),
                phase: h.phase().clone(),
                trigger: h.trigger().to_string(),
                verdict: h.verdict(),
                available_actions: h.available_actions().iter().collect(),
                decision,
            });
        }
        let phases = crate::evidence::phases(&events);
        let (intake, touchpoints, delivery) = crate::evidence::points(&events);
        let passed: Vec<orcho_core::PhaseName> = phases
            .iter()
            .filter(|p| p.advanced())
            .map(|p| p.phase.clone())
            .collect();
        let handoff_advice =
            orcho_handoff::evidence::HandoffAdviceEvidence::collect(store, run, &passed)
                .map_err(handoff_err)?;
        // A run halted before its worktree existed (or whose worktree was
        // removed since) has no tree to classify receipts against.
        let verifier = match state.checkout().is_dir() {
            true => self.verifier(&state, contract)?,
            false => None,
        };
        let receipts = match verifier {
            Some(v) => Some(
                v.readiness()
                    .map_err(|e| EngineError::run(run, EngineErrorKind::Receipts(Box::new(e))))?
                    .with_gates(crate::evidence::delivery_gates(&phases, state.round())),
            ),
            None => None,
        };
        Ok(crate::Evidence {
            schema: crate::evidence::EVIDENCE_SCHEMA,
            run: run.clone(),
            plan: state.plan().to_owned(),
            task: state.task().map(str::to_owned),
            status: state.status(),
            reason: state.reason().map(str::to_owned),
            phases,
            receipts,
            handoffs,
            decisions: self.decisions(run)?,
            handoff_advice,
            cost: state.cost(),
            intake,
            touchpoints,
            delivery,
            follow_up_of: state.follow_up().cloned(),
            artifacts: self.artifacts(run),
            interruptions: crate::evidence::interruptions(&events),
        })
    }
}

impl Store {
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
