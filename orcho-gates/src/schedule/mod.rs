//! Running a phase's gates: in declared order, computational gates inline,
//! consecutive inferential gates in concurrent waves, lock groups honoured
//! across processes, and a halting failure short-circuiting the rest.

mod imp;

pub use imp::{GateRecord, PhaseGates, ScheduledGate, Scheduler, SchedulerBuilder};
