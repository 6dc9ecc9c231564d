//! Runs as things a host manages: found by a prefix, listed, cancelled,
//! and cleaned up once they are over.

use std::time::{Duration, SystemTime};

use orcho_receipts::ReceiptStore;

use super::build::Engine;
use crate::{EngineError, GcReport, error::EngineErrorKind};

impl Engine {
    /// Removes what runs that are over no longer need: their retained
    /// worktrees (after the plan's worktree teardown; a worktree whose
    /// teardown fails is kept and said), their intake seed patches (the
    /// uncommitted changes an `include` carried in, needed only to make the
    /// worktree), and receipt logs last changed more
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
        for run in self.inner.store.runs.runs()? {
            let state = match self.inner.store.runs.read(&run) {
                Ok(state) if state.status().is_terminal() => state,
                _ => {
                    report.kept.push(run);
                    continue;
                }
            };
            let storage = &self.inner.store.storage;
            let seed = orcho_core::storage::Item::IntakeSeed;
            let seed_bytes = |e| EngineError::run(&run, e);
            if dry_run {
                if let Some(patch) = storage.get(&run, seed).map_err(seed_bytes)? {
                    report.seed_patches.push((run.clone(), patch.len() as u64));
                }
            } else {
                let size = std::fs::metadata(storage.locate(&run, seed)).map_or(0, |m| m.len());
                if storage.remove(&run, seed).map_err(seed_bytes)? {
                    report.seed_patches.push((run.clone(), size));
                }
            }
            let path = self.inner.store.worktree_path(&run);
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
                    &self.inner.store.base_env,
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
        report.logs = ReceiptStore::new(self.inner.store.local_dir())
            .prune_logs(before, dry_run)
            .map_err(|e| {
                EngineError::store(
                    self.inner.store.local_dir(),
                    EngineErrorKind::Receipts(Box::new(e)),
                )
            })?;
        Ok(report)
    }
}
