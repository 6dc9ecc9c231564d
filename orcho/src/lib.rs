//! Orcho: readiness is proven, not claimed.
//!
//! Orcho is a library for the control points of an AI coding-agent run: the
//! checks that decide whether an agent's work is ready, the durable proof that
//! those checks ran, and the typed pauses where a person (or a bounded CI
//! autopilot) decides what happens next. It does not run agents: hosts bring
//! their own runners and user interfaces and compose Orcho's crates.
//!
//! This crate will own the engine that composes the other crates, the run
//! store on disk, the `Host` trait for hosts that want a driven loop and
//! `orcho::testing` for tests of custom profiles. Today it re-exports the
//! crates below it; [`core`] is the part that is built.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

pub use orcho_core as core;
pub use orcho_gates as gates;
pub use orcho_handoff as handoff;
pub use orcho_profile as profile;
pub use orcho_receipts as receipts;
