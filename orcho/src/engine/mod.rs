//! The engine: one run, step by step.

mod imp;
mod step;

pub use imp::{Engine, EngineBuilder, Run};
pub use step::{PhaseReport, PhaseRequest, Step};
