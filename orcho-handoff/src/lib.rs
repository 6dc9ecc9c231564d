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
//! The crate's root holds what an advisor's author needs ([`Advisor`],
//! [`Advice`], [`AdviceRequest`], [`AdvisorError`], [`Confidence`]) and the
//! three actions every host names ([`HandoffAction`], [`DeliveryAction`],
//! [`IntakeAction`]); everything else lives in its module.
//!
//! - [`point`]: the one decision-point lifecycle every kind of point runs
//!   on ([`Points`](crate::point::Points), generic over a [`DecisionPoint`](crate::point::DecisionPoint)): open the question,
//!   record the decision once, read it back, act on it under a lock, record
//!   the outcome. Menus are [`ActionSet`](crate::point::ActionSet)s; the shared failures are
//!   [`PointError`](crate::point::PointError)s.
//! - [`decision`]: the durable, idempotent record of one decision
//!   ([`decision::DecisionSlot`]); [`RecordedDecision`](crate::decision::RecordedDecision) is the proof token
//!   acting requires.
//! - Phase handoffs: [`HandoffStore`](crate::handoff::HandoffStore) persists them under `runs/<run>/`;
//!   [`PhaseHandoff`](crate::handoff::PhaseHandoff) is the pause, its [`AvailableActions`](crate::handoff::AvailableActions) computed from
//!   the verdict and the phase's [`HandoffPolicy`](crate::handoff::HandoffPolicy); [`HandoffAction`] is
//!   what can be decided, [`HandoffChoice`](crate::handoff::HandoffChoice) a validated decision;
//!   [`HandoffState`](crate::handoff::HandoffState) is the state machine with pure, consuming
//!   transitions ([`HandoffState::apply`](crate::handoff::HandoffState::apply)); [`HandoffStore::resume`](crate::handoff::HandoffStore::resume)
//!   returns the [`NextStep`](crate::handoff::NextStep).
//! - [`Advisor`] is the plugin trait for advice; advice is an artifact
//!   ([`AdviceRecord`](crate::advisor::AdviceRecord)), never a decision.
//! - [`Autopilot`](crate::autopilot::Autopilot) is the CI path with no operator: it asks the advisor,
//!   checks its safety stops ([`StopReason`](crate::autopilot::StopReason), limits in
//!   [`AutopilotPolicy`](crate::autopilot::AutopilotPolicy)) and, only when all pass, decides `retry_feedback`
//!   as the CI agent through the same decide/resume path.
//! - [`Waiver`](crate::waiver::Waiver)s are durable records of accepted risk, read back through
//!   [`WaiverSet`](crate::waiver::WaiverSet).
//! - [`HandoffAdviceEvidence`](crate::evidence::HandoffAdviceEvidence) is the evidence bundle's `handoff_advice`
//!   section: advice calls, recommended vs applied actions, retry outcomes,
//!   observed usage and cost.
//! - [`supervision`] holds the human-in-the-loop touchpoints: the question
//!   schema, the two-question pattern, planner questions, plan approval and
//!   deviation handling.
//! - The vocabulary of the other decision points: [`DeliveryAction`] and
//!   [`DeliveryChoice`](crate::delivery::DeliveryChoice) for a run's delivery gate, [`IntakeAction`] and
//!   [`IntakeChoice`](crate::intake::IntakeChoice) for pre-run intake (the gate and the intake question
//!   themselves, which need git, are `orcho-delivery`'s).
//! - [`ask`]: an agent's permission question (a tool call the rules answer
//!   `ask`, in a phase nobody watches) as a decision point of its run,
//!   which a person allows or denies while the agent's hook waits.
//! - [`inbox`]: every run of a store paused on an actionable decision point,
//!   newest first, with the [`SuggestedStep`](crate::inbox::SuggestedStep); each kind of point lists its
//!   own with an [`inbox::Scanner`]. Unreadable runs are listed as degraded,
//!   never fatal.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use orcho_core::{Finding, FixedClock, Severity, Verdict};
//! use orcho_handoff::{HandoffAction, decision::{DecidedBy, DecisionRequest}, handoff::{HandoffChoice, HandoffSpec, HandoffStore, NextStep}};
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

pub mod advisor;
pub mod ask;
pub mod autopilot;
pub mod decision;
pub mod delivery;
pub mod evidence;
mod format;
pub mod handoff;
pub mod inbox;
pub mod intake;
pub mod point;
mod rules;
pub mod supervision;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;
pub mod waiver;

// The root holds what an advisor's author needs, and the three actions
// hosts name everywhere; the rest lives in its module.
pub use advisor::{Advice, AdviceRequest, Advisor, AdvisorError, Confidence};
pub use async_trait::async_trait;
pub use delivery::DeliveryAction;
pub use handoff::HandoffAction;
pub use intake::IntakeAction;
pub use orcho_core as core;
