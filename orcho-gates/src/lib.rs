//! Quality gates: checks that run after a phase and decide, as data, what
//! their failure means for the run.
//!
//! This crate will own the `QualityGate` plugin trait, `GateKind`,
//! `FailStrategy` (halt, feed into next, trigger replan, informational),
//! `QualityGateResult`, the `GateRegistry` with the built-in `tests` gate, the
//! scheduler (computational gates inline under shared locks, inferential
//! gates in concurrent waves) and the pure function from a phase's results to
//! one effect on the run.
//!
//! A third-party gate author depends on this crate and what sits below it,
//! never on the engine.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

pub use orcho_core as core;
pub use orcho_receipts as receipts;
