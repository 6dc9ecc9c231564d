//! The gates every registry can ship: [`GateRegistry::with_builtins`](crate::GateRegistry::with_builtins).

mod tests_gate;

pub use tests_gate::{TESTS, TestsGate, TestsGateConfig};
