//! Where a coding-agent run meets the user's repository.
//!
//! A run that delivers works in a *retained worktree* of the user's
//! checkout, so the checkout does not change until somebody decides so.
//! This crate holds everything that touches git for that:
//!
//! - [`worktree`]: creating the run's detached git worktree and committing
//!   in it.
//! - [`intake`]: pre-run intake. [`detect_intake`] reports a checkout's
//!   uncommitted changes; [`Intakes`] asks the intake question and acts on
//!   its [`IntakeAction`](orcho_handoff::IntakeAction) (`include` keeps a
//!   binary-safe seed patch with the run and applies it to the run's
//!   worktree after `git apply --check`, `exclude` starts from `HEAD`,
//!   `commit` commits them first, `halt` stops).
//! - [`gate`]: the delivery gate. [`DeliveryGates`] park a run that reached
//!   a release state at its [`DeliveryGate`]: the release verdict, the
//!   [`DiffSummary`] of the retained worktree, the receipt gaps and the
//!   [`DeliveryAction`](orcho_handoff::DeliveryAction)s (`approve` commits
//!   exactly the run's diff into the target checkout, `apply` applies it
//!   uncommitted, `fix` produces a [`FollowUpSpec`], `skip` and `halt`
//!   change nothing). The target is never half-written: a
//!   [`TargetStatus::Conflicting`] target refuses approve and apply.
//! - [`followup`]: correction follow-ups and the [`FollowUpGuard`] that stops
//!   a follow-up repeating its parent's blockers with a typed
//!   [`NonConvergence`].
//! - [`pending_decisions`]: the decision inbox with the delivery gate and
//!   the intake question beside phase handoffs.
//!
//! Both decision points run on `orcho-handoff`'s one decision-point
//! lifecycle ([`Points`](orcho_handoff::point::Points)), so deciding and acting
//! are durable and idempotent exactly as for phase handoffs. Every git
//! command runs through `orcho_receipts::exec` (argv only, a process group,
//! a timeout).
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use orcho_core::SystemClock;
//! use orcho_delivery::{Intakes, detect_intake};
//! use orcho_handoff::{IntakeAction, decision::{DecidedBy, DecisionRequest}, intake::IntakeChoice};
//!
//! let report = detect_intake(".".into(), ".orcho".into())?;
//! if !report.is_clean() {
//!     let intakes = Intakes::in_dir(".orcho", Arc::new(SystemClock::new()));
//!     let run = "run-1".parse()?;
//!     intakes.open(&run, &report)?;
//!     let decision = intakes.decide(&run, DecisionRequest::new(IntakeChoice::new(IntakeAction::Exclude), DecidedBy::Operator))?;
//!     println!("start from {:?}", intakes.apply(&decision)?.start());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! None.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API; on-disk formats are versioned
//! and never silently re-interpreted. The minimum supported Rust version is
//! 1.95.

pub mod followup;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
mod git;
mod inbox;
pub mod intake;
pub mod worktree;

pub use followup::{
    BlockerSet, DEFAULT_MAX_GENERATIONS, FollowUpError, FollowUpErrorKind, FollowUpGuard,
    FollowUpLink, FollowUpSpec, NonConvergence, Progress,
};
pub use gate::{
    BlockedAction, Deliveries, DeliveryBlock, DeliveryError, DeliveryGate, DeliveryGates,
    DeliveryOutcome, DeliveryRefusal, DeliverySpec, DeliveryState, DiffSummary, FileChange,
    PATCH_DIGEST_CONTEXT, TargetStatus,
};
pub use git::{GitError, GitErrorKind};
pub use inbox::{SCANNERS, pending_decisions, scan_delivery, scan_intake};
pub use intake::{
    ChangeKind, DetectError, IntakeError, IntakeOutcome, IntakeQuestions, IntakeRefusal,
    IntakeReport, Intakes, SEED_DIGEST_CONTEXT, SeedPatch, TrackedChange, detect_intake,
};
