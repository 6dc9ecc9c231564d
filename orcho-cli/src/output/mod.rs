//! What the CLI prints: text for people, one JSON document for machines
//! (`--json`).
//!
//! Every JSON document is a `Serialize` type in `doc`, printed with its
//! keys sorted so that the output is stable to diff; the text forms are in
//! `text`.

pub(crate) mod doc;
mod print;
#[cfg(test)]
mod tests;
pub(crate) mod text;

pub(crate) use print::{err, json, out};
