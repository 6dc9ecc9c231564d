//! The gates every registry can ship: [`GateRegistry::with_builtins`](crate::GateRegistry::with_builtins).

mod command_gate;
mod process;
mod tests_gate;

pub use command_gate::{
    COMMAND, COMMAND_GATE_SCHEMA, CommandGate, CommandGateConfig, DEFAULT_COMMAND_TIMEOUT,
};
pub use tests_gate::{TESTS, TestsGate, TestsGateConfig};
