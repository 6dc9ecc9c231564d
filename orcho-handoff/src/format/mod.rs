//! On-disk formats, kept apart from the domain types (STYLE G9).
//!
//! Every document starts with `schema`; each `SCHEMA` constant's doc comment
//! is that format's changelog. Domain types convert to and from these.

pub(crate) mod advice;
pub(crate) mod evidence;
pub(crate) mod handoff;
pub(crate) mod journal;
pub(crate) mod waiver;
