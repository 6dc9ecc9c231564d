//! One decision-point lifecycle, for every kind of decision point.
//!
//! A decision point is a typed question a run waits on: a phase handoff, a
//! delivery gate, a pre-run intake question, a supervision touchpoint. They
//! all live the same life, and [`Points`] runs it once, generic over the
//! kind ([`DecisionPoint`]):
//!
//! 1. **open** — the question is written once (exclusive create);
//! 2. **decide** — a first decision is admitted by the point's own check
//!    (its menu, an [`ActionSet`]) and recorded exactly once in the point's
//!    [`DecisionSlot`](crate::decision::DecisionSlot): the same decision
//!    again is an idempotent replay, another one a conflict;
//! 3. **read back** — any process can get the
//!    [`RecordedDecision`](crate::decision::RecordedDecision), the proof
//!    token acting requires;
//! 4. **act** — under the point's lock, once: a recorded outcome is returned
//!    as it is, a decision that is not the one on disk is refused, and the
//!    outcome is recorded before the call returns.
//!
//! Errors of this lifecycle are [`PointError`]s: the shared failures (not
//! found, already open, a decision mismatch, storage, the decision record)
//! are written once here, and each kind of point adds only its own
//! [`Refusal`].

mod actions;
mod error;
mod store;

pub(crate) use actions::action_enum;
pub use actions::{Action, ActionSet, ActionVisitor, UnknownActionError};
pub use error::{PointError, PointErrorKind, Refusal};
pub use store::{Acted, DecisionPoint, PointState, Points};
