//! On-disk shapes of the run store, kept apart from the domain types
//! (STYLE G9): the journal's lines and the snapshot are their own
//! versioned types, and so are the gate types the journal records.

mod gates;
mod touchpoint;
mod v1;

pub(crate) use v1::{EventLineV1, HostDocV1, RUN_SCHEMA, StateDocV1, StateV1};
