//! Proof that a declared command ran, in a declared environment, against this
//! exact checkout.
//!
//! This crate will own Orcho's verification contract (environments, their
//! assertions, declared commands and the `required` gate), the one place in
//! the workspace that spawns processes, checkout and dependency fingerprints,
//! command and environment-assertion receipts on disk, the classifier that
//! sorts each required command into present, missing, failed, stale or
//! invalid, the readiness summary a final-acceptance reviewer reads, and the
//! rule that merges computed gaps into an acceptance verdict.
//!
//! It is not filled in yet: today it only re-exports the vocabulary it builds
//! on.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

pub use orcho_core as core;
