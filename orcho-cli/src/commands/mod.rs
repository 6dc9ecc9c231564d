//! One module per command; `dispatch` picks it.

pub(crate) mod attest;
mod decide;
mod dispatch;
pub(crate) mod hook;
pub(crate) mod inbox;
mod init;
mod permissions;
mod report;
mod run;
mod runs;
mod show;
mod store;
pub(crate) mod verify;
pub(crate) mod weakened;

pub(crate) use decide::{
    answer as decide_questions, delivery as decide_delivery, deviation as decide_deviation,
    handoff as decide_handoff, intake as decide_intake, plan as decide_plan,
};
pub(crate) use dispatch::dispatch;
pub(crate) use show::{Decided, GateNow, advice as advise};
