//! One module per command; `dispatch` picks it.

pub(crate) mod attest;
mod decide;
mod dispatch;
pub(crate) mod hook;
pub(crate) mod inbox;
mod init;
mod notify;
mod permissions;
mod report;
mod run;
mod runs;
mod serve;
mod show;
mod store;
pub(crate) mod verify;

pub(crate) use dispatch::dispatch;
