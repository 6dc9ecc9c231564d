//! Phase handoffs: the typed pause after a phase, its menu, its state
//! machine and its store.

mod action;
mod error;
mod state;
mod store;

pub use action::{AvailableActions, HandoffAction, HandoffChoice, HandoffPolicy};
pub use error::{ChoiceError, HandoffError, HandoffRefusal, TransitionError, TransitionErrorKind};
pub use state::{
    HandoffEvent, HandoffSpec, HandoffState, HandoffStateName, HandoffTrigger, NextStep,
    PhaseHandoff, RetryGrant,
};
pub use store::{HandoffStore, JournalEntry, JournalEvent, PhaseHandoffs};
