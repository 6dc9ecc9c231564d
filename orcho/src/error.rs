//! Errors of the engine.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    DocumentError, FsError, HandoffId, JournalError, LockError, RunId, RunStatus, StoreError,
};
use orcho_delivery::{DeliveryError, DetectError, FollowUpError, GitError, IntakeError};
use orcho_handoff::{
    AdvisorError, HandoffAction, HandoffError, InboxError, supervision::SupervisionStoreError,
};
use orcho_receipts::{ContractError, ReceiptError};

use crate::state::TransitionError;

/// The engine could not do what was asked.
///
/// The message names the run (or the store); [`kind`](Self::kind) and the
/// `is_*` predicates tell the cases apart without matching strings.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct EngineError {
    run: Option<RunId>,
    path: Option<Utf8PathBuf>,
    #[source]
    kind: EngineErrorKind,
}

/// What went wrong; see [`EngineError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineErrorKind {
    /// Another process is driving the run (it holds the run's lock).
    #[error("the run is busy: another process is driving it")]
    Busy,
    /// No run with this id is in the store.
    #[error("no such run in the store")]
    UnknownRun,
    /// The run is waiting for a decision on a handoff.
    #[error(
        "the run is awaiting a decision on handoff `{handoff}`; decide it first (available: {})",
        actions(available)
    )]
    AwaitingDecision {
        /// The handoff.
        handoff: HandoffId,
        /// What can be decided.
        available: Vec<HandoffAction>,
    },
    /// The run is waiting for a decision at another point: pre-run intake,
    /// a supervision touchpoint or its delivery gate.
    #[error(
        "the run is awaiting a decision on {point} `{id}`; decide it first (available: {})",
        available.join(", ")
    )]
    AwaitingAnswer {
        /// The decision point (`intake`, `planner questions`, `plan approval`,
        /// `deviation`, `delivery gate`).
        point: &'static str,
        /// Its id (the run id for intake and delivery).
        id: String,
        /// What can be decided.
        available: Vec<String>,
    },
    /// The run has ended and cannot move again.
    #[error("the run is {status}: {reason}")]
    Terminal {
        /// Its final status.
        status: RunStatus,
        /// Why it ended.
        reason: String,
    },
    /// The call does not fit where the run stands (for example completing a
    /// phase while the run is paused).
    #[error("cannot {action} while the run is {status}")]
    WrongState {
        /// What was attempted.
        action: &'static str,
        /// Where the run stands.
        status: RunStatus,
    },
    /// The run's journal has events from a newer Orcho; they are never
    /// guessed at.
    #[error(
        "its journal has {count} events written by a newer Orcho; upgrade Orcho to continue this run"
    )]
    NewerEvents {
        /// How many.
        count: usize,
    },
    /// The journal has no events.
    #[error("its journal is empty")]
    EmptyJournal,
    /// The journal's first event is not the run's start.
    #[error("its journal starts with `{0}`, not `started`")]
    NotAStart(&'static str),
    /// A journal line holds a value this build cannot use.
    #[error("journal event {seq} is invalid: {reason}")]
    InvalidEvent {
        /// The event's sequence number.
        seq: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A decision point of the run cannot be read.
    #[error("a decision point cannot be read: {0}")]
    Unreadable(String),
    /// The snapshot describes a state the run cannot be in.
    #[error("its snapshot is invalid: {0}")]
    InvalidSnapshot(String),
    /// An event does not fit the state (a damaged journal).
    #[error(transparent)]
    Transition(TransitionError),
    /// The verification contract is invalid.
    #[error(transparent)]
    Contract(Box<ContractError>),
    /// Receipts could not be read or written, or a command could not be run.
    #[error(transparent)]
    Receipts(Box<ReceiptError>),
    /// A handoff could not be opened, decided or resumed.
    #[error(transparent)]
    Handoff(Box<HandoffError>),
    /// Pre-run intake failed.
    #[error(transparent)]
    Intake(Box<IntakeError>),
    /// The target checkout's uncommitted changes could not be read.
    #[error(transparent)]
    Detect(Box<DetectError>),
    /// The planner's questions break the question schema.
    #[error("the planner's questions are invalid")]
    Question(#[source] Box<orcho_handoff::supervision::QuestionError>),
    /// A touchpoint's questions or answers could not be mapped.
    #[error(transparent)]
    Touchpoint(Box<orcho_handoff::supervision::TouchpointError>),
    /// A supervision touchpoint could not be opened, read or answered.
    #[error(transparent)]
    Supervision(Box<SupervisionStoreError>),
    /// The delivery gate could not be opened, decided or delivered.
    #[error(transparent)]
    Delivery(Box<DeliveryError>),
    /// A correction follow-up could not be started.
    #[error(transparent)]
    FollowUp(Box<FollowUpError>),
    /// The run's worktree could not be created or seeded.
    #[error("the run's worktree could not be prepared")]
    Worktree(#[source] Box<GitError>),
    /// The decision inbox could not be read.
    #[error(transparent)]
    Inbox(Box<InboxError>),
    /// The run is not a correction follow-up candidate: its delivery was not
    /// decided `fix`.
    #[error("the run has no correction follow-up: its delivery gate was not decided `fix`")]
    NoFollowUp,
    /// The run does not deliver: it was started in place, without a
    /// retained worktree.
    #[error("the run has no delivery gate: it was started in place, without a worktree")]
    NoDelivery,
    /// The advisor failed.
    #[error("the advisor failed")]
    Advisor(#[source] AdvisorError),
    /// A background task (a blocking file or process operation) failed.
    #[error("a background task failed: {0}")]
    Task(String),
    /// No advisor is configured.
    #[error("no advisor is configured")]
    NoAdvisor,
    /// A gate result could not be recorded.
    #[error("recording a gate result failed")]
    Schedule(#[source] Box<orcho_gates::ScheduleError>),
    /// A document could not be encoded.
    #[error("a document could not be encoded as JSON")]
    Encode(#[source] Box<serde_json::Error>),
    /// A file, document, journal or lock of the store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The runs directory could not be listed.
    #[error("the runs directory could not be listed")]
    ListRuns(#[source] std::io::Error),
    /// A run was named by a prefix that more than one run id starts with.
    #[error("`{reference}` names {} runs: {}", candidates.len(), orcho_core::spelling::quoted(candidates))]
    AmbiguousRun {
        /// What named it.
        reference: String,
        /// The runs it could be, oldest first.
        candidates: Vec<RunId>,
    },
    /// A step of the contract's worktree setup or teardown failed.
    #[error(transparent)]
    WorktreeSetup(Box<orcho_delivery::worktree::SetupError>),
    /// A declared command runs a program of the checkout that its run's
    /// worktree does not have.
    #[error(
        "command `{command}` runs `{program}`, which is in the checkout but not in the run's worktree: git does not track it. Declare it under `verification.worktree.setup` (for example `- link: {first}`)"
    )]
    ProgramNotInWorktree {
        /// The command.
        command: String,
        /// Its program, relative to its working directory.
        program: String,
        /// The first component of the program's path: what to link.
        first: String,
    },
    /// A worktree or log could not be removed.
    #[error("cannot remove `{path}`")]
    Remove {
        /// What could not be removed.
        path: Utf8PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

macro_rules! kind_from_store {
    ($($source:ty),*) => {$(
        impl From<$source> for EngineErrorKind {
            #[cold]
            fn from(e: $source) -> Self {
                Self::Store(e.into())
            }
        }
    )*};
}

kind_from_store!(StoreError, FsError, DocumentError, JournalError, LockError);

impl From<FsError> for EngineError {
    #[cold]
    fn from(e: FsError) -> Self {
        Self {
            run: None,
            path: None,
            kind: e.into(),
        }
    }
}

fn actions(available: &[HandoffAction]) -> String {
    orcho_core::spelling::quoted(available)
}

impl EngineError {
    #[cold]
    pub(crate) fn run(run: &RunId, kind: EngineErrorKind) -> Self {
        Self {
            run: Some(run.clone()),
            path: None,
            kind,
        }
    }

    #[cold]
    pub(crate) fn store(path: &Utf8Path, kind: EngineErrorKind) -> Self {
        Self {
            run: None,
            path: Some(path.to_owned()),
            kind,
        }
    }

    fn render(&self) -> String {
        match (&self.run, &self.path) {
            (Some(run), _) => format!("run `{run}`"),
            (None, Some(path)) => format!("run store `{path}`"),
            (None, None) => "the engine".to_owned(),
        }
    }

    /// The run, when the error is about one.
    pub fn run_id(&self) -> Option<&RunId> {
        self.run.as_ref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &EngineErrorKind {
        &self.kind
    }

    /// Whether another process is driving the run.
    pub fn is_busy(&self) -> bool {
        matches!(self.kind, EngineErrorKind::Busy)
    }

    /// Whether the run is waiting for a decision.
    pub fn is_awaiting_decision(&self) -> bool {
        matches!(
            self.kind,
            EngineErrorKind::AwaitingDecision { .. } | EngineErrorKind::AwaitingAnswer { .. }
        )
    }

    /// Whether the run has ended.
    pub fn is_terminal(&self) -> bool {
        matches!(self.kind, EngineErrorKind::Terminal { .. })
    }

    /// Whether the run does not exist (or a prefix names no run).
    pub fn is_unknown_run(&self) -> bool {
        matches!(self.kind, EngineErrorKind::UnknownRun)
    }

    /// Whether a prefix names more than one run.
    pub fn is_ambiguous_run(&self) -> bool {
        matches!(self.kind, EngineErrorKind::AmbiguousRun { .. })
    }

    /// The target checkout's status, when the delivery gate refused
    /// `approve` or `apply` because the target's uncommitted changes stand
    /// in the way (nothing was recorded; the gate is still decidable).
    pub fn target_conflict(&self) -> Option<&orcho_delivery::TargetStatus> {
        match &self.kind {
            EngineErrorKind::Delivery(e) => e.refusal()?.target_status(),
            _ => None,
        }
    }

    /// Whether a decision conflicts with the one already recorded.
    pub fn is_conflict(&self) -> bool {
        match &self.kind {
            EngineErrorKind::Handoff(e) => e.is_conflict(),
            EngineErrorKind::Intake(e) => e.is_conflict(),
            EngineErrorKind::Delivery(e) => e.is_conflict(),
            EngineErrorKind::Supervision(e) => e.is_conflict(),
            _ => false,
        }
    }
}
