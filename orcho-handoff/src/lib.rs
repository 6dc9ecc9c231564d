//! Typed decision points: where a run pauses and a person, an advisor or a
//! bounded CI autopilot decides what happens next.
//!
//! A phase handoff is a typed pause after a phase whose verdict (or policy)
//! calls for a decision. The engine opens it, a host shows it, somebody
//! decides, and the engine resumes — every step durable, so that a process
//! may die at any line and a new one continues from disk.
//!
//! It holds decisions only, and depends on `orcho-core` alone among
//! Orcho's crates: an advisor or a host's UI compiles no git, no processes,
//! no receipts.
//!
//! - [`point`]: the one decision-point lifecycle every kind of point runs
//!   on ([`Points`], generic over a [`DecisionPoint`]): open the question,
//!   record the decision once, read it back, act on it under a lock, record
//!   the outcome. Menus are [`ActionSet`]s; the shared failures are
//!   [`PointError`]s.
//! - [`decision`]: the durable, idempotent record of one decision
//!   ([`decision::DecisionSlot`]); [`RecordedDecision`] is the proof token
//!   acting requires.
//! - Phase handoffs: [`HandoffStore`] persists them under `runs/<run>/`;
//!   [`PhaseHandoff`] is the pause, its [`AvailableActions`] computed from
//!   the verdict and the phase's [`HandoffPolicy`]; [`HandoffAction`] is
//!   what can be decided, [`HandoffChoice`] a validated decision;
//!   [`HandoffState`] is the state machine with pure, consuming
//!   transitions ([`HandoffState::apply`]); [`HandoffStore::resume`]
//!   returns the [`NextStep`].
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
//!   schema, the two-question pattern, planner questions, plan approval and
//!   deviation handling.
//! - The vocabulary of the other decision points: [`DeliveryAction`] and
//!   [`DeliveryChoice`] for a run's delivery gate, [`IntakeAction`] and
//!   [`IntakeChoice`] for pre-run intake (the gate and the intake question
//!   themselves, which need git, are `orcho-delivery`'s).
//! - [`inbox`]: every run of a store paused on an actionable decision point,
//!   newest first, with the [`SuggestedStep`]; each kind of point lists its
//!   own with an [`inbox::Scanner`]. Unreadable runs are listed as degraded,
//!   never fatal.
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
//! let store = HandoffStore::in_dir(root.join(".orcho"), clock);
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

mod advisor;
mod autopilot;
pub mod decision;
mod delivery;
mod evidence;
mod format;
mod handoff;
pub mod inbox;
mod intake;
pub mod point;
mod rules;
pub mod supervision;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;
mod waiver;

pub use advisor::{
    Advice, AdviceError, AdviceErrorKind, AdviceId, AdviceRecord, AdviceRequest, Advisor,
    AdvisorError, Confidence, ConfidenceBand,
};
pub use async_trait::async_trait;
pub use autopilot::{
    Autopilot, AutopilotCall, AutopilotOutcome, AutopilotPolicy, AutopilotPolicyBuilder,
    AutopilotPolicyError, DEFAULT_DESTRUCTIVE_PATTERNS, DestructivePatterns, Ineligible, Prepared,
    StopReason,
};
pub use decision::{
    DecidedBy, DecisionError, DecisionErrorKind, DecisionRequest, RecordedDecision,
};
pub use delivery::{
    DELIVERY_POINT, DeliveryAction, DeliveryActions, DeliveryChoice, DeliveryChoiceError,
};
pub use evidence::{AdviceCall, AutopilotStopRecord, HandoffAdviceEvidence, RetryOutcome};
pub use handoff::{
    AvailableActions, ChoiceError, HandoffAction, HandoffChoice, HandoffError, HandoffEvent,
    HandoffPolicy, HandoffRefusal, HandoffSpec, HandoffState, HandoffStateName, HandoffStore,
    HandoffTrigger, JournalEntry, JournalEvent, NextStep, PhaseHandoff, PhaseHandoffs, RetryGrant,
    TransitionError, TransitionErrorKind,
};
pub use inbox::{
    DegradedRun, Inbox, InboxEntry, InboxError, PendingDecision, PendingPoint, SuggestedStep,
    pending_decisions, pending_decisions_with,
};
pub use intake::{INTAKE_POINT, IntakeAction, IntakeActions, IntakeChoice, IntakeChoiceError};
pub use orcho_core as core;
pub use point::{
    ActionSet, DecisionPoint, PointError, PointErrorKind, PointState, Points, UnknownActionError,
};
pub use rules::RuleAdvisor;
pub use waiver::{WaivedFinding, Waiver, WaiverSet};
