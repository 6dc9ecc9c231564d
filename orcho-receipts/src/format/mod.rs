//! On-disk shapes, kept apart from the domain types (with `From` both ways)
//! so that the domain can change without silently changing the files.

mod v1;

pub(crate) use v1::{CommandReceiptV1, EnvReceiptV1, ExploratoryV1};
