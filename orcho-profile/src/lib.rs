//! YAML profiles: the one file where a team declares how its runs are
//! controlled.
//!
//! This crate will own the profile format (`schema: 1`), its validation with
//! file, line, column and document path in every error, `extends` with
//! override-by-name, the built-in profiles, and resolution into the typed
//! configurations of `orcho-receipts`, `orcho-gates` and `orcho-handoff`.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

pub use orcho_core as core;
pub use orcho_gates as gates;
pub use orcho_handoff as handoff;
pub use orcho_receipts as receipts;
