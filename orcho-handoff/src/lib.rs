//! Typed decision points: where a run pauses and a person, an advisor or a
//! bounded CI autopilot decides what happens next.
//!
//! This crate will own the phase-handoff state machine and its durable,
//! idempotent decisions, the `Advisor` plugin trait and advice artifacts, the
//! CI autopilot with its safety stops, the delivery gate, pre-run intake,
//! correction follow-ups, the pending-decisions inbox, and the supervision
//! touchpoints (planner questions, plan approval, deviation handling and
//! permission rules for read-only sessions).
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

pub use orcho_core as core;
