//! Exit codes that scripts can rely on.
//!
//! | code | meaning |
//! |------|---------|
//! | [`OK`] `0` | the command did what it was asked |
//! | [`ERROR`] `1` | it could not (the message says why, with a hint) |
//! | [`USAGE`] `2` | the arguments were malformed |
//! | [`NOT_READY`] `3` | a required receipt is not present, or a verification command failed |
//! | [`PAUSED`] `4` | the run paused at a decision point nobody has decided yet |
//! | [`HALTED`] `5` | the run halted |
//! | [`CONFLICT`] `6` | a different decision was recorded first |
//! | [`ASKS`] `7` | `orcho permissions check`: the rules ask a person first |
//! | [`DENIED`] `8` | `orcho permissions check`: the rules deny it |
//! | [`INTERRUPTED`] `130` | Ctrl-C stopped the command; the run resumes with `orcho resume` |
//!
//! `orcho hook` answers an agent in the agent's terms: 0 with its answer on
//! standard output, or 2 with a message on standard error, which the agents
//! read as "refused".
//!
//! `orcho exec` is the exception: it exits with the code of the command it
//! ran (128 + the signal when a signal ended it), as `env` and `timeout` do.

use std::process::ExitCode;

/// The command did what it was asked.
pub const OK: u8 = 0;
/// The command could not do what it was asked.
pub const ERROR: u8 = 1;
/// The arguments were malformed (the code `clap` exits with).
pub const USAGE: u8 = 2;
/// A required receipt is not present, or a verification command failed.
pub const NOT_READY: u8 = 3;
/// The run paused at a decision point nobody has decided yet.
pub const PAUSED: u8 = 4;
/// The run halted.
pub const HALTED: u8 = 5;
/// A different decision was recorded first.
pub const CONFLICT: u8 = 6;
/// `orcho permissions check`: the rules ask a person first.
pub const ASKS: u8 = 7;
/// `orcho permissions check`: the rules deny the request.
pub const DENIED: u8 = 8;
/// Ctrl-C stopped the command (128 + `SIGINT`, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// How a command that did not fail ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done ([`OK`]).
    Ok,
    /// Not ready ([`NOT_READY`]).
    NotReady,
    /// Paused at a decision point ([`PAUSED`]).
    Paused,
    /// The run halted ([`HALTED`]).
    Halted,
    /// The code of the command `orcho exec` ran.
    Command(u8),
}

impl Exit {
    /// Its exit code.
    pub fn code(self) -> u8 {
        match self {
            Self::Ok => OK,
            Self::NotReady => NOT_READY,
            Self::Paused => PAUSED,
            Self::Halted => HALTED,
            Self::Command(code) => code,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit.code())
    }
}
