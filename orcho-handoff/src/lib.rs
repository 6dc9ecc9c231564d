//! Typed decision points: where a run pauses and a person, an advisor or a
//! bounded CI autopilot decides what happens next.
//!
//! A phase handoff is a typed pause after a phase whose verdict (or policy)
//! calls for a decision. The engine opens it, a host shows it, somebody
//! decides, and the engine resumes — every step durable, so that a process
//! may die at any line and a new one continues from disk.
//!
//! - [`HandoffStore`] persists handoffs, decisions, advice and waivers under
//!   `runs/<run>/` ([`store`] describes the layout and the rules).
//! - [`PhaseHandoff`] is the pause; its [`AvailableActions`] are computed
//!   from the verdict and the phase's [`HandoffPolicy`] when it opens.
//! - [`HandoffAction`] is what can be decided; [`HandoffChoice`] is a
//!   validated decision (text required where the action needs it).
//! - [`HandoffState`] is the state machine, with pure, consuming
//!   transitions ([`HandoffState::apply`]).
//! - [`HandoffStore::decide`] records a decision exactly once (the
//!   [`decision`] module's durable, idempotent primitive, reusable by every
//!   kind of decision point) and returns a [`RecordedDecision`], the proof
//!   token [`HandoffStore::resume`] takes; resume returns the [`NextStep`].
//! - [`Advisor`] is the plugin trait for advice; advice is an artifact
//!   ([`AdviceRecord`]), never a decision.
//! - [`Autopilot`] is the CI path with no operator: it asks the advisor,
//!   checks its safety stops ([`StopReason`], limits in
//!   [`AutopilotPolicy`]) and, only when all pass, decides `retry_feedback`
//!   as the CI agent through the same decide/resume path.
//! - [`Waiver`]s are durable records of accepted risk, read back through
//!   [`WaiverSet`].
//! - [`HandoffAdviceEvidence`] is the evidence bundle's `handoff_advice`
//!   section: advice calls, recommended vs applied actions, retry outcomes,
//!   observed usage and cost.
//! - [`supervision`] holds the human-in-the-loop touchpoints: the question
//!   schema, the two-question pattern, planner questions, plan approval,
//!   deviation handling, and permission rules for read-only sessions.
//! - [`DeliveryGates`] park a run that reached a release state at its
//!   [`DeliveryGate`]: the release verdict, the [`DiffSummary`] of the
//!   retained worktree, the receipt gaps and the [`DeliveryAction`]s
//!   (`approve` commits exactly the run's diff into the target checkout,
//!   `apply` applies it uncommitted, `fix` produces a [`FollowUpSpec`],
//!   `skip` and `halt` change nothing). The target is never half-written:
//!   a [`TargetStatus::Conflicting`] target refuses approve and apply.
//! - [`followup`]: correction follow-ups and the [`FollowUpGuard`] that
//!   stops a follow-up repeating its parent's blockers with a typed
//!   [`NonConvergence`].
//! - [`Intakes`]: pre-run intake. [`detect_intake`] reports a checkout's
//!   uncommitted changes; an [`IntakeAction`] decides them (`include` keeps
//!   a binary-safe seed patch with the run and applies it to the run's
//!   worktree after `git apply --check`, `exclude` starts from `HEAD`,
//!   `commit` commits them first, `halt` stops).
//! - [`pending_decisions`]: the decision inbox. Every run of a store paused
//!   on an actionable phase handoff, delivery gate or intake question,
//!   newest first, with the [`SuggestedStep`]; unreadable runs are listed as
//!   degraded, never fatal.
//!
//! - [`worktree`]: the retained git worktree a run works in, so that its
//!   delivery gate delivers exactly its diff.
//!
//! Delivery and intake touch the user's repository only through `git` (argv
//! only, run by `orcho_receipts::exec`), and record their decisions through
//! the same [`decision::DecisionSlot`] as phase handoffs.
//!
//! Other decision points (delivery gates, intake, supervision) reuse the
//! durable, idempotent record of [`decision`]: define a payload type that
//! implements [`decision::DecisionPayload`] and record it in a
//! [`decision::DecisionSlot`].
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use orcho_core::{Finding, FixedClock, Severity, Verdict};
//! use orcho_handoff::{
//!     DecidedBy, DecisionRequest, HandoffAction, HandoffChoice, HandoffSpec, HandoffStore, NextStep,
//! };
//!
//! # let tmp = tempfile::tempdir()?;
//! # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let clock = Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?));
//! let store = HandoffStore::new(root.join(".orcho"), clock);
//! let run = "run-1".parse()?;
//!
//! // The engine: a phase was rejected and its policy pauses.
//! let handoff = store.open(
//!     HandoffSpec::new(run, "implement".parse()?, Verdict::Rejected)
//!         .with_findings(vec![Finding::new("tests", Severity::High, "test `parse_empty` failed")]),
//! )?;
//! assert!(handoff.available_actions().contains(HandoffAction::RetryFeedback));
//!
//! // Resuming before anybody decided is refused, naming the handoff.
//! let err = store.resume_handoff(handoff.run(), handoff.id()).unwrap_err();
//! assert!(err.is_pending());
//!
//! // An operator decides; the decision is durable and does not advance the run.
//! let choice = HandoffChoice::retry("parse() must return an empty list for empty input")?;
//! let recorded = store.decide(handoff.run(), handoff.id(), DecisionRequest::new(choice, DecidedBy::Operator))?;
//!
//! // The engine resumes with the proof that the decision is on disk.
//! match store.resume(&recorded)? {
//!     NextStep::Retry(grant) => assert_eq!(grant.extra_attempts(), 1),
//!     other => panic!("unexpected {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! - `test-util`: test doubles for hosts and plugin authors, in
//!   `testing` (`testing::ScriptedAdvisor`, an advisor that replays a
//!   script of advice and failures).
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API; on-disk formats are versioned
//! and never silently re-interpreted. The minimum supported Rust version is
//! 1.95.

mod action;
mod advisor;
mod autopilot;
pub mod decision;
pub mod delivery;
mod error;
mod evidence;
pub mod followup;
mod format;
mod git;
mod glob;
pub mod inbox;
pub mod intake;
mod state;
pub mod store;
pub mod supervision;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;
mod waiver;
pub mod worktree;

pub use action::{AvailableActions, HandoffAction, HandoffChoice, HandoffPolicy};
pub use advisor::{
    Advice, AdviceId, AdviceRecord, AdviceRequest, Advisor, AdvisorError, Confidence,
    ConfidenceBand,
};
pub use async_trait::async_trait;
pub use autopilot::{
    Autopilot, AutopilotCall, AutopilotOutcome, AutopilotPolicy, AutopilotPolicyBuilder,
    DEFAULT_DESTRUCTIVE_PATTERNS, DestructivePatterns, Ineligible, Prepared, StopReason,
};
pub use decision::{DecidedBy, DecisionRequest, RecordedDecision};
pub use delivery::{
    BlockedAction, DeliveryAction, DeliveryActions, DeliveryBlock, DeliveryChoice, DeliveryGate,
    DeliveryGates, DeliveryOutcome, DeliverySpec, DeliveryState, DiffSummary, FileChange,
    ReceiptGap, TargetStatus,
};
pub use error::{
    AdviceError, AdviceErrorKind, AdviceIdError, AutopilotPolicyError, ChoiceError, DecisionError,
    DecisionErrorKind, DeliveryChoiceError, DeliveryError, DeliveryErrorKind, FollowUpError,
    FollowUpErrorKind, GitError, GitErrorKind, GlobError, HandoffError, HandoffErrorKind,
    InboxError, IntakeChoiceError, IntakeError, IntakeErrorKind, ParseActionError, TransitionError,
    TransitionErrorKind, UnknownActionError,
};
pub use evidence::{AdviceCall, AutopilotStopRecord, HandoffAdviceEvidence, RetryOutcome};
pub use followup::{
    BlockerSet, DEFAULT_MAX_GENERATIONS, FollowUpGuard, FollowUpLink, FollowUpSpec, NonConvergence,
    Progress,
};
pub use glob::FileGlob;
pub use inbox::{
    DegradedRun, Inbox, InboxEntry, PendingDecision, PendingPoint, SuggestedStep, pending_decisions,
};
pub use intake::{
    ChangeKind, INTAKE_POINT, IntakeAction, IntakeChoice, IntakeOutcome, IntakeReport, Intakes,
    SEED_DIGEST_CONTEXT, SeedPatch, TrackedChange, detect_intake,
};
pub use orcho_core as core;
pub use state::{
    HandoffEvent, HandoffSpec, HandoffState, HandoffStateName, HandoffTrigger, NextStep,
    PhaseHandoff, RetryGrant,
};
pub use store::{HandoffStore, JournalEntry, JournalEvent};
pub use waiver::{WaivedFinding, Waiver, WaiverSet};
