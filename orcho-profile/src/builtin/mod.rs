//! The built-in profiles, embedded in the crate.
//!
//! - `default`: plan → implement (the `tests` gate feeds failures into the
//!   next attempt) → review (a handoff on rejection) → final acceptance
//!   (readiness from the receipts on disk).
//! - `quick`: implement with the `tests` gate, nothing else.
//! - `read_only_review`: a review session under the `read_only` permission
//!   preset.
//!
//! Load one with [`Profile::builtin`](crate::Profile::builtin), or extend it with
//! `extends: builtin:<name>`.

mod imp;

pub(crate) use imp::find;
pub use imp::{NAMES, text};
