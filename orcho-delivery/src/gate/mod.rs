//! The delivery gate: where a run that reached a release state parks until
//! somebody decides what happens to its changes.
//!
//! The run's changes live in a *retained worktree* (a git worktree or
//! checkout holding the run's result); the *target* is the user's checkout.
//! [`DeliveryGates::open`] captures, once, the run's diff against the
//! commit it started from (tracked edits, deletions and untracked files, as
//! a binary patch kept with the run and identified by its digest), the
//! release verdict, the receipt gaps and the menu of actions:
//!
//! | action | effect on the target | allowed when |
//! |---|---|---|
//! | `approve` | commits exactly the run's diff (message from the operator or the release summary) | the release is approved, no required receipt is missing, the diff is not empty, and the target does not conflict |
//! | `apply` | applies the diff, uncommitted | as `approve` |
//! | `fix` | none; produces a [`FollowUpSpec`](crate::FollowUpSpec) (the run is correction-ready) | the release is rejected, and the follow-up guard does not stop the chain |
//! | `skip` | none; closes the gate | always |
//! | `halt` | none; the retained worktree is left for inspection | always |
//!
//! Deciding and delivering are two steps, as for phase handoffs:
//! [`DeliveryGates::decide`] records the one decision of the gate through
//! the shared decision-point lifecycle ([`Points`](orcho_handoff::point::Points):
//! first writer wins across processes, an identical decision is an
//! idempotent replay, a different one a conflict), and
//! [`DeliveryGates::deliver`] acts on the
//! [`RecordedDecision`](orcho_handoff::decision::RecordedDecision), once, and records
//! the [`DeliveryOutcome`].
//!
//! **The target is never half-written.** Before `approve` or `apply`
//! touches it, `git apply --check` must pass and none of the target's own
//! uncommitted changes may touch a file of the diff; otherwise the typed
//! [`TargetStatus::Conflicting`] refuses the action and leaves the target as
//! it was (and the gate decidable: `skip`, `halt`, or a retry once the
//! target is cleaned up). `approve` commits only the diff's paths
//! (`git commit --only`), so changes the user had staged stay staged and
//! uncommitted; if the commit itself fails (a hook refuses it), the applied
//! diff is taken back out.
//!
//! Layout, under the store root:
//!
//! ```text
//! runs/<run>/delivery/gate.json      the gate (written once)
//! runs/<run>/delivery/run.patch      the run's diff, binary-safe (digest in gate.json)
//! runs/<run>/delivery/outcome.json   what delivering the decision did (written once)
//! runs/<run>/decisions/delivery.json the decision (shared decision slot)
//! ```
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use orcho_core::{SystemClock, Verdict};
//! use orcho_handoff::{decision::{DecidedBy, DecisionRequest}, delivery::DeliveryChoice};
//! use orcho_delivery::{DeliveryGates, DeliveryOutcome, DeliverySpec};
//! use orcho_receipts::ReadinessSummary;
//!
//! let gates = DeliveryGates::in_dir(".orcho", Arc::new(SystemClock::new()));
//! let readiness = ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0);
//! let gate = gates.open(
//!     DeliverySpec::new("run-1".parse()?, Verdict::Approved, ".orcho/worktrees/run-1", "HEAD", ".", &readiness)
//!         .with_release_summary("Parse empty input as an empty list"),
//! )?;
//! println!("{} files, +{} -{}", gate.diff().files_changed(), gate.diff().insertions(), gate.diff().deletions());
//!
//! let decision = gates.decide(gate.run(), DecisionRequest::new(DeliveryChoice::approve(), DecidedBy::Operator))?;
//! if let DeliveryOutcome::Committed { commit, .. } = gates.deliver(&decision)? {
//!     println!("committed {commit}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod diff;
mod error;
mod format;
mod spec;
mod store;
mod target;

pub use diff::{DiffSummary, FileChange};
pub use error::{DeliveryError, DeliveryRefusal};
pub use spec::{
    BlockedAction, DeliveryBlock, DeliveryGate, DeliveryOutcome, DeliverySpec, PATCH_DIGEST_CONTEXT,
};
pub(crate) use store::delivery_point;
pub use store::{Deliveries, DeliveryGates, DeliveryState};
pub use target::TargetStatus;
