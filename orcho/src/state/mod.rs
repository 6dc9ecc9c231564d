//! The run's state machine: events, the stage a run is at, and the pure
//! functions that apply them.
//!
//! The engine never mutates a run in place. It decides an event, appends it
//! to the run's journal (durably), then applies it with [`RunState::apply`],
//! a pure, consuming function that hands the state back inside its error,
//! and writes the new snapshot. Replaying the journal from the start gives
//! the same state, which is how a new process picks up a run whose previous
//! process died at any line.

mod apply;
mod event;
mod input;
mod run;
mod settle;
mod trace;

pub use apply::TransitionError;
pub use event::{
    FollowUpOf, PauseTrigger, Release, Resumption, RunEvent, Supervised, Transition, Workspace,
};
pub use input::{PhaseInput, PlanInput};
pub use run::{Cursor, Ending, InFlight, Pause, RunState, Stage, TouchpointKind};
pub(crate) use settle::settle;
