//! The engine: one run, step by step.

mod imp;
mod points;
mod step;

pub use imp::{Engine, EngineBuilder, Run};
pub use points::Start;
pub use step::{Interruption, PhaseReport, PhaseRequest, Step, SupervisionRequest};
