//! What hosts read about runs: finding one, listing them, where each
//! stands and was started, and its history.

use camino::Utf8Path;
use orcho_core::{RunId, RunStatus};
use orcho_delivery::{DeliveryOutcome, FollowUpSpec};

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
}
