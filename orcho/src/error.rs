//! Errors of the engine: refusals, where the run stands saying no, and
//! failures.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{DocumentError, FsError, JournalError, LockError, RunId, RunStatus, StoreError};
use orcho_delivery::{DeliveryError, DetectError, FollowUpError, GitError, IntakeError};
use orcho_handoff::{
    AdvisorError, handoff::HandoffError, inbox::InboxError, supervision::SupervisionStoreError,
};
use orcho_receipts::{ContractError, ReceiptError};

use crate::state::TransitionError;

/// The engine did not do what was asked.
///
/// The message names the run (or the store). [`refusal`](Self::refusal)
/// tells a request where the run stands refuses (with a
/// [`remedy`](Self::remedy) as data) from a failure; [`kind`](Self::kind)
/// tells every case apart without matching strings.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct EngineError {
    run: Option<RunId>,
    path: Option<Utf8PathBuf>,
    #[source]
    kind: EngineErrorKind,
}

/// What the engine refuses to do where the run (or the store) stands: the
/// request is well formed, and the state says no. Each says what would let
/// it through ([`remedy`](Self::remedy)), as data, for a host to put in its
/// own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Another process is driving the run (it holds the run's lease).
    #[error("the run is busy: another process is driving it")]
    Busy,
    /// The run was created on another machine or in another checkout of a
    /// shared store: it is read and decided from anywhere, but driven only
    /// there, where its worktree and receipts are.
    #[error("the run is driven from {origin}, where its worktree is: resume it there")]
    Elsewhere {
        /// Where it was created.
        origin: Box<orcho_core::storage::RunOrigin>,
    },
    /// No run with this id (or starting with this prefix) is in the store.
    #[error("no such run in the store")]
    UnknownRun,
    /// A run was named by a prefix that more than one run id starts with.
    #[error("`{reference}` names {} runs: {}", candidates.len(), orcho_core::spelling::quoted(candidates))]
    AmbiguousRun {
        /// What named it.
        reference: String,
        /// The runs it could be, oldest first.
        candidates: Vec<RunId>,
    },
    /// The run has ended: nothing moves it any more, and nobody has to
    /// decide for it.
    #[error("the run is {status}: {reason}")]
    Ended {
        /// Its final status.
        status: RunStatus,
        /// Why it ended.
        reason: String,
    },
    /// The run's delivery was not decided `fix`, so it has no correction
    /// follow-up.
    #[error("the run has no correction follow-up: its delivery gate was not decided `fix`")]
    NoFollowUp,
    /// The run has its correction follow-up already: a second would redo
    /// the same correction. Refused by the store, also to two machines
    /// sharing it that start one at the same time.
    #[error("the run already has its correction follow-up: run `{child}`")]
    FollowUpStarted {
        /// The follow-up.
        child: RunId,
    },
    /// The task is longer than a run takes ([`MAX_TASK_BYTES`](crate::MAX_TASK_BYTES)):
    /// it reaches every phase in its environment, where Linux refuses a
    /// variable of more than 128 KiB.
    #[error("the task is {bytes} bytes, more than the {} KiB a task may be", crate::MAX_TASK_BYTES / 1024)]
    TaskTooLarge {
        /// Its length.
        bytes: usize,
    },
    /// The run was started in place, without a worktree, so it has no
    /// delivery gate.
    #[error("the run has no delivery gate: it was started in place, without a worktree")]
    NoDelivery,
    /// Advice was asked for, and no advisor is configured.
    #[error("no advisor is configured")]
    NoAdvisor,
    /// A declared command runs a program of the checkout that the run's
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
}

/// What would let a refused request through, as data: a host says it in
/// its own words (the CLI names its commands, MCP its tools).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remedy {
    /// Wait for the process that drives the run to stop, then ask again.
    WaitForDriver,
    /// Drive the run from where it was created.
    DriveItThere(orcho_core::storage::RunOrigin),
    /// Name a run the store has: list them.
    ListRuns,
    /// Give more of the run's id.
    MoreOfTheId,
    /// The run has ended: start a new one.
    StartANewRun,
    /// A decision is recorded once: read the one that was.
    ReadTheRecordedDecision,
    /// Make the target checkout clean for the run's diff (commit or stash
    /// what stands in the way), then decide or resume again.
    ClearTheTarget(orcho_delivery::TargetStatus),
    /// Configure an advisor, or decide without one.
    ConfigureAnAdvisor,
    /// Drive (or read) the follow-up that was started.
    DriveTheFollowUp(RunId),
    /// Link the program into the run's worktree in the contract's worktree
    /// setup.
    LinkIntoTheWorktree {
        /// What to link.
        first: String,
    },
}

impl Refusal {
    /// What would let the request through.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            Self::Busy => Some(Remedy::WaitForDriver),
            Self::Elsewhere { origin } => Some(Remedy::DriveItThere((**origin).clone())),
            Self::UnknownRun => Some(Remedy::ListRuns),
            Self::AmbiguousRun { .. } => Some(Remedy::MoreOfTheId),
            Self::Ended { .. } => Some(Remedy::StartANewRun),
            Self::NoAdvisor => Some(Remedy::ConfigureAnAdvisor),
            Self::ProgramNotInWorktree { first, .. } => Some(Remedy::LinkIntoTheWorktree {
                first: first.clone(),
            }),
            Self::FollowUpStarted { child } => Some(Remedy::DriveTheFollowUp(child.clone())),
            Self::NoFollowUp | Self::NoDelivery | Self::TaskTooLarge { .. } => None,
        }
    }
}

/// What went wrong; see [`EngineError::kind`]. [`Refused`](Self::Refused)
/// is where the run stands saying no; the decision points' own refusals (a
/// conflict, an action not on the menu) are inside their kinds
/// ([`EngineError::is_conflict`], [`EngineError::target_conflict`]); every
/// other kind is a failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineErrorKind {
    /// Where the run stands refuses the request.
    #[error(transparent)]
    Refused(Refusal),
    /// The host called for something the run does not expect now (a phase
    /// attempt reported while the run waits at a decision point): a bug of
    /// the host, not a state of the run.
    #[error("cannot {action} while the run is {status}")]
    NotExpected {
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
    #[error("a decision point cannot be read")]
    Unreadable(#[source] Box<dyn std::error::Error + Send + Sync>),
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
    /// An agent's permission question could not be asked, decided or
    /// answered.
    #[error(transparent)]
    Ask(Box<orcho_handoff::ask::AskError>),
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
    /// A read-only phase's checkout could not be compared with the tree it
    /// started from, or its change taken back: the checkout must be a git
    /// tree for a read-only phase.
    #[error("a read-only phase's checkout could not be checked for changes")]
    ReadOnly(#[source] Box<GitError>),
    /// The decision inbox could not be read.
    #[error(transparent)]
    Inbox(Box<InboxError>),
    /// The advisor failed.
    #[error("the advisor failed")]
    Advisor(#[source] AdvisorError),
    /// A background task (a blocking file or process operation) failed.
    #[error("a background task failed")]
    Task(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A gate result could not be recorded.
    #[error("recording a gate result failed")]
    Schedule(#[source] Box<orcho_gates::ScheduleError>),
    /// A document could not be encoded.
    #[error("a document could not be encoded as JSON")]
    Encode(#[source] Box<serde_json::Error>),
    /// A file, document, journal or lock of the store failed.
    #[error(transparent)]
    Store(StoreError),
    /// A step of the contract's worktree setup or teardown failed.
    #[error(transparent)]
    WorktreeSetup(Box<orcho_delivery::worktree::SetupError>),
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

impl From<Refusal> for EngineErrorKind {
    #[cold]
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<tokio::task::JoinError> for EngineErrorKind {
    #[cold]
    fn from(e: tokio::task::JoinError) -> Self {
        Self::Task(Box::new(e))
    }
}

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

impl EngineError {
    #[cold]
    pub(crate) fn run(run: &RunId, kind: impl Into<EngineErrorKind>) -> Self {
        Self {
            run: Some(run.clone()),
            path: None,
            kind: kind.into(),
        }
    }

    /// An error about no run or store in particular.
    #[cold]
    pub(crate) fn engine(kind: impl Into<EngineErrorKind>) -> Self {
        Self {
            run: None,
            path: None,
            kind: kind.into(),
        }
    }

    #[cold]
    pub(crate) fn store(path: &Utf8Path, kind: impl Into<EngineErrorKind>) -> Self {
        Self {
            run: None,
            path: Some(path.to_owned()),
            kind: kind.into(),
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

    /// The refusal, when where the run stands said no (rather than
    /// something failing).
    pub fn refusal(&self) -> Option<&Refusal> {
        match &self.kind {
            EngineErrorKind::Refused(refusal) => Some(refusal),
            _ => None,
        }
    }

    /// What would let the request through, when something would: the
    /// refusal's, a conflict's (read the decision recorded first), or the
    /// target checkout's state that refuses a delivery.
    pub fn remedy(&self) -> Option<Remedy> {
        if let Some(refusal) = self.refusal() {
            return refusal.remedy();
        }
        if let Some(status) = self.target_conflict() {
            return Some(Remedy::ClearTheTarget(status.clone()));
        }
        self.is_conflict()
            .then_some(Remedy::ReadTheRecordedDecision)
    }

    /// Whether another process is driving the run.
    pub fn is_busy(&self) -> bool {
        matches!(self.refusal(), Some(Refusal::Busy))
    }

    /// Whether the run has ended.
    pub fn is_terminal(&self) -> bool {
        matches!(self.refusal(), Some(Refusal::Ended { .. }))
    }

    /// Whether the run does not exist (or a prefix names no run).
    pub fn is_unknown_run(&self) -> bool {
        matches!(self.refusal(), Some(Refusal::UnknownRun))
    }

    /// Whether a prefix names more than one run.
    pub fn is_ambiguous_run(&self) -> bool {
        matches!(self.refusal(), Some(Refusal::AmbiguousRun { .. }))
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
            EngineErrorKind::Ask(e) => e.is_conflict(),
            EngineErrorKind::Delivery(e) => e.is_conflict(),
            EngineErrorKind::Supervision(e) => e.is_conflict(),
            _ => false,
        }
    }
}
