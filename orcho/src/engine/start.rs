//! How a run starts: [`Start`], and opening a run again.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::RunId;
use orcho_delivery::FollowUpSpec;

use super::{build::Engine, run::Run};
use crate::{
    EngineError,
    state::{FollowUpOf, RunEvent, Workspace},
};

/// How a run starts: in place in a checkout, or in a retained worktree of
/// it that ends at a delivery gate.
///
/// ```
/// use orcho::Start;
///
/// let in_place = Start::in_place("/work/repo");
/// let isolated = Start::in_worktree("/work/repo");
/// assert!(!in_place.delivers());
/// assert!(isolated.delivers());
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Start {
    checkout: Utf8PathBuf,
    worktree: bool,
    follow_up: Option<FollowUpSpec>,
    host: Option<serde_json::Value>,
    task: Option<String>,
}

impl Start {
    /// Phases and gates work directly in `checkout`; the run ends when its
    /// last phase passes, with no intake and no delivery gate.
    pub fn in_place(checkout: impl Into<Utf8PathBuf>) -> Self {
        Self {
            checkout: checkout.into(),
            worktree: false,
            follow_up: None,
            host: None,
            task: None,
        }
    }

    /// The run works in its own git worktree of `checkout` (the target),
    /// created after pre-run intake and kept after the run; it ends at a
    /// delivery gate that commits, applies or discards exactly its diff.
    ///
    /// When intake includes the target's uncommitted changes, they are
    /// committed in the worktree and the run's diff is taken from there:
    /// they stay the target's own uncommitted work, and delivery brings
    /// only what the run did.
    pub fn in_worktree(checkout: impl Into<Utf8PathBuf>) -> Self {
        Self {
            worktree: true,
            ..Self::in_place(checkout)
        }
    }

    /// A correction follow-up: a child run in the parent's target
    /// checkout, whose worktree starts with the parent's diff and whose
    /// phases receive what the parent was rejected for.
    pub fn follow_up(spec: FollowUpSpec) -> Self {
        Self {
            checkout: spec.checkout().to_owned(),
            worktree: true,
            follow_up: Some(spec),
            host: None,
            task: None,
        }
    }

    /// Whether the run ends at a delivery gate.
    pub fn delivers(&self) -> bool {
        self.worktree
    }
}

impl Start {
    orcho_core::setters! {
        /// What the host keeps with the run (for example the commands its phases
        /// run), written with the run's creation, atomically: a host killed at any
        /// instant after [`Engine::start_with`] returned finds it again with
        /// [`Store::host_metadata`], so it can drive the run on. The engine
        /// never reads it.
        pub fn host_metadata(metadata: Some(serde_json::Value)) => host;
    }

    /// What the run is to do, in the words of whoever starts it: kept in
    /// its journal, shown with it, and given to every phase
    /// ([`PhaseInput::task`](crate::PhaseInput::task)). Blank text is no
    /// task; one longer than [`MAX_TASK_BYTES`](crate::MAX_TASK_BYTES) is
    /// refused by [`Engine::start_with`]. A correction follow-up without a task of its own carries its
    /// parent's.
    pub fn task(mut self, task: impl Into<String>) -> Self {
        let task = task.into();
        self.task = (!task.trim().is_empty()).then_some(task);
        self
    }
}

impl Engine {
    /// Starts a run in place on `checkout` and returns it, locked for
    /// driving: [`start_with`](Self::start_with)`(`[`Start::in_place`](crate::Start::in_place)`)`.
    ///
    /// # Errors
    ///
    /// When the run cannot be created.
    pub fn start(&self, checkout: &Utf8Path) -> Result<Run, EngineError> {
        self.start_with(Start::in_place(checkout))
    }

    /// Opens an existing run for driving, replaying its journal.
    ///
    /// # Errors
    ///
    /// [`EngineError::is_busy`] when another process drives it,
    /// [`EngineError::is_unknown_run`], or a damaged journal.
    pub fn open(&self, run: &RunId) -> Result<Run, EngineError> {
        let stored = self.inner.store.runs.open(run)?;
        Ok(Run {
            engine: self.clone(),
            stored,
        })
    }

    /// Starts a run as `start` says and returns it, locked for driving.
    /// A run in a worktree asks nothing yet: its first [`Run::next`](crate::Run::next) checks
    /// the target for uncommitted changes (pre-run intake) and creates the
    /// worktree.
    ///
    /// # Errors
    ///
    /// When the run cannot be created.
    pub fn start_with(&self, start: Start) -> Result<Run, EngineError> {
        let Start {
            checkout,
            worktree,
            follow_up,
            host,
            task,
        } = start;
        if let Some(task) = &task
            && task.len() > crate::MAX_TASK_BYTES
        {
            return Err(EngineError::engine(crate::Refusal::TaskTooLarge {
                bytes: task.len(),
            }));
        }
        // One follow-up per parent, across every process that shares the
        // store: the parent's delivery point is held while its children are
        // looked for and this one is created.
        let _held = match &follow_up {
            Some(spec) => {
                let parent = spec.parent();
                let held = self
                    .inner
                    .store
                    .storage
                    .lock(parent, orcho_core::storage::PointKind::Delivery)
                    .map_err(|e| EngineError::run(parent, e))?;
                if let Some(child) = self.inner.store.follow_up_child(parent)? {
                    return Err(EngineError::run(
                        parent,
                        crate::Refusal::FollowUpStarted { child },
                    ));
                }
                Some(held)
            }
            None => None,
        };
        let task = match (task, &follow_up) {
            (None, Some(spec)) => self.inner.store.runs.read(spec.parent())?.task,
            (task, _) => task,
        };
        let run = RunId::generate(&self.inner.store.clock);
        let (checkout, workspace) = if worktree {
            let worktree = self.inner.store.worktree_path(&run);
            (
                worktree.clone(),
                Some(Workspace {
                    target: checkout,
                    worktree,
                }),
            )
        } else {
            (checkout, None)
        };
        let started = RunEvent::Started {
            checkout,
            plan: self.inner.plan.name.clone(),
            phases: self
                .inner
                .plan
                .phases
                .iter()
                .map(|p| p.name.clone())
                .collect(),
            workspace,
            follow_up: follow_up.as_ref().map(|spec| FollowUpOf {
                parent: spec.parent().clone(),
                generation: spec.generation(),
                brief: spec.to_markdown(),
            }),
            task,
        };
        let stored = self.inner.store.runs.create(
            &run,
            &started,
            host.as_ref(),
            self.inner.store.clock.as_ref(),
        )?;
        Ok(Run {
            engine: self.clone(),
            stored,
        })
    }
}
