//! Read-only phases: the tree an attempt starts from is noted, and a change
//! it made is taken back out of the checkout, kept as a patch in its
//! artifacts, and rejects it.

use camino::Utf8PathBuf;
use orcho_core::{Finding, PhaseName, Severity};
use orcho_delivery::worktree;

use super::run::Run;
use crate::{EngineError, error::EngineErrorKind};

/// The name of the patch a read-only attempt's change is kept as.
pub(crate) const TAKEN_BACK: &str = "read-only-changes.patch";

/// The most changed files a finding names.
const NAMED: usize = 20;

/// One attempt of a phase: where its notes go.
pub(crate) struct Attempt<'a> {
    pub(crate) phase: &'a PhaseName,
    pub(crate) round: u32,
    pub(crate) attempt: u32,
}

impl Run {
    fn tree_note(&self, at: &Attempt<'_>) -> Utf8PathBuf {
        self.engine
            .inner
            .store
            .attempt_logs(self.id(), at.phase, at.round, at.attempt)
            .with_extension("tree")
    }

    fn read_only_err(&self, e: orcho_delivery::GitError) -> EngineError {
        self.err(EngineErrorKind::ReadOnly(Box::new(e)))
    }

    /// Notes the tree a read-only attempt starts from, once: the same
    /// attempt run again (after questions, a crash) keeps the first note,
    /// so a change it made before is still seen.
    pub(super) async fn note_tree_before(&self, at: &Attempt<'_>) -> Result<(), EngineError> {
        let note = self.tree_note(at);
        if note.exists() {
            return Ok(());
        }
        let checkout = self.state().checkout().to_owned();
        let tree = tokio::task::spawn_blocking(move || worktree::tree_id(&checkout))
            .await
            .map_err(|e| self.err(EngineErrorKind::from(e)))?
            .map_err(|e| self.read_only_err(e))?;
        if let Some(dir) = note.parent() {
            orcho_core::fs::create_dir_all(dir).map_err(|e| self.err(EngineErrorKind::from(e)))?;
        }
        orcho_core::fs::write_atomic(&note, tree.as_bytes())
            .map_err(|e| self.err(EngineErrorKind::from(e)))
    }

    /// After a read-only attempt: when it changed the checkout, takes the
    /// change back out, keeps it as [`TAKEN_BACK`] in the attempt's
    /// artifacts, and returns the finding that rejects the attempt.
    pub(super) async fn take_back_changes(
        &self,
        at: &Attempt<'_>,
    ) -> Result<Option<Finding>, EngineError> {
        let note = self.tree_note(at);
        let Ok(before) = std::fs::read_to_string(&note) else {
            // No note: the attempt was asked for before this build checked.
            return Ok(None);
        };
        let before = before.trim().to_owned();
        let checkout = self.state().checkout().to_owned();
        let change = tokio::task::spawn_blocking(move || {
            let after = worktree::tree_id(&checkout)?;
            worktree::tree_change(&checkout, &before, &after)
        })
        .await
        .map_err(|e| self.err(EngineErrorKind::from(e)))?
        .map_err(|e| self.read_only_err(e))?;
        let Some(change) = change else {
            return Ok(None);
        };
        let dir =
            self.engine
                .inner
                .store
                .attempt_artifacts(self.id(), at.phase, at.round, at.attempt);
        orcho_core::fs::create_dir_all(&dir).map_err(|e| self.err(EngineErrorKind::from(e)))?;
        let kept = dir.join(TAKEN_BACK);
        orcho_core::fs::write_atomic(&kept, &change.patch)
            .map_err(|e| self.err(EngineErrorKind::from(e)))?;
        let checkout = self.state().checkout().to_owned();
        let taken = change.clone();
        tokio::task::spawn_blocking(move || worktree::take_back(&checkout, &taken))
            .await
            .map_err(|e| self.err(EngineErrorKind::from(e)))?
            .map_err(|e| self.read_only_err(e))?;
        let mut named: Vec<&str> = change
            .files
            .iter()
            .take(NAMED)
            .map(|f| f.as_str())
            .collect();
        let more = change.files.len().saturating_sub(NAMED);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        named.sort_unstable();
        let mut finding = Finding::new(
            at.phase.as_str(),
            Severity::High,
            format!(
                "a read-only phase changed the checkout: {}{more}",
                orcho_core::spelling::quoted(named.iter().copied())
            ),
        )
        .with_detail(format!(
            "The change was taken back out of the checkout and kept as {kept}."
        ));
        if let Some(first) = change.files.first() {
            finding = finding.with_file(first.clone());
        }
        Ok(Some(finding))
    }
}
