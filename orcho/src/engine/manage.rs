//! Runs as things a host manages: found by a prefix, listed, cancelled,
//! and cleaned up once they are over.

use std::time::{Duration, SystemTime};

use orcho_core::RunId;
use orcho_handoff::DecidedBy;
use orcho_receipts::ReceiptStore;

use super::build::Engine;
use crate::{EngineError, GcReport, Listed, RunView, error::EngineErrorKind};

impl Engine {
    /// The run `reference` names: a whole run id, `latest` (the newest
    /// run), or the start of exactly one run id.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_unknown_run`] when nothing matches,
    /// [`EngineError::is_ambiguous_run`] when several runs do.
    pub fn find_run(&self, reference: &str) -> Result<RunId, EngineError> {
        let runs = self.inner.runs.runs()?;
        let unknown = || match reference.parse::<RunId>() {
            Ok(run) => EngineError::run(&run, EngineErrorKind::UnknownRun),
            Err(_) => EngineError::store(self.inner.runs.root(), EngineErrorKind::UnknownRun),
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
                self.inner.runs.root(),
                EngineErrorKind::AmbiguousRun {
                    reference: reference.to_owned(),
                    candidates,
                },
            ));
        }
        candidates.pop().ok_or_else(unknown)
    }

    /// Every run of the store, newest first, as hosts show it; a run that
    /// does not read is listed with the reason.
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn list(&self) -> Result<Vec<Listed>, EngineError> {
        let mut runs = self.inner.runs.runs()?;
        runs.reverse();
        Ok(runs
            .into_iter()
            .map(|run| match self.inner.runs.read(&run) {
                Ok(state) => Listed::Run(Box::new(self.view_of(&state))),
                Err(e) => Listed::Unreadable {
                    reason: orcho_core::error_chain(&e),
                    run,
                },
            })
            .collect())
    }

    /// Ends `run` where it stands (see [`Run::cancel`](crate::Run::cancel))
    /// and writes its evidence.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_busy`] while another process drives it,
    /// [`EngineError::is_terminal`] when it has ended already.
    pub fn cancel(&self, run: &RunId, reason: &str, by: DecidedBy) -> Result<RunView, EngineError> {
        let mut driving = self.open(run)?;
        driving.cancel(reason, by)?;
        let view = driving.view();
        drop(driving);
        self.evidence(run)?;
        Ok(view)
    }

    /// Removes what runs that are over no longer need: their retained
    /// worktrees (after the plan's worktree teardown; a worktree whose
    /// teardown fails is kept and said), and receipt logs last changed more
    /// than `keep_logs` ago
    /// that no latest receipt names. A run that is not over, pending
    /// decisions included, is never touched; its journal, decisions and
    /// evidence always stay. With `dry_run`, nothing is removed.
    ///
    /// # Errors
    ///
    /// When the store cannot be listed, or something cannot be removed.
    pub fn gc(&self, keep_logs: Duration, dry_run: bool) -> Result<GcReport, EngineError> {
        let mut report = GcReport::default();
        for run in self.inner.runs.runs()? {
            let state = match self.inner.runs.read(&run) {
                Ok(state) if state.status().is_terminal() => state,
                _ => {
                    report.kept.push(run);
                    continue;
                }
            };
            let path = self.inner.runs.layout().worktree(&run);
            let Some(workspace) = state.workspace() else {
                continue;
            };
            if !path.exists() {
                continue;
            }
            let teardown = self
                .inner
                .plan
                .verification
                .as_ref()
                .map(|c| c.worktree.teardown.as_slice())
                .unwrap_or_default();
            if !dry_run
                && let Err(e) = orcho_delivery::worktree::teardown(
                    &workspace.target,
                    &path,
                    teardown,
                    &self.inner.base_env,
                )
            {
                report
                    .teardown_failed
                    .push((path, orcho_core::error_chain(&e)));
                continue;
            }
            if !dry_run {
                orcho_delivery::worktree::remove(&workspace.target, &path).map_err(|e| {
                    EngineError::run(
                        &run,
                        EngineErrorKind::Remove {
                            path: path.clone(),
                            source: Box::new(e),
                        },
                    )
                })?;
            }
            report.worktrees.push(path);
        }
        let before = SystemTime::now()
            .checked_sub(keep_logs)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        report.logs = ReceiptStore::new(self.inner.runs.root())
            .prune_logs(before, dry_run)
            .map_err(|e| {
                EngineError::store(
                    self.inner.runs.root(),
                    EngineErrorKind::Receipts(Box::new(e)),
                )
            })?;
        Ok(report)
    }
}
