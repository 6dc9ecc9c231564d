//! The engine: runs of one plan in one store, driven step by step.

mod advice;
mod build;
mod carry;
mod delivery;
mod handoff;
mod intake;
mod manage;
mod phase;
mod read_only;
mod run;
mod start;
mod step;
#[cfg(test)]
mod tests;
mod touchpoint;

pub use build::{Engine, EngineBuilder};
pub use run::Run;
pub use start::Start;
pub use step::{Interruption, PhaseReport, PhaseRequest, Step, SupervisionRequest};
