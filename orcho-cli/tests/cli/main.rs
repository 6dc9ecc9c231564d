//! Integration tests of the `orcho` command line: the real binary, run as a
//! subprocess in a temporary git repository of its own per test.
//!
//! They check what scripts and people rely on: exit codes and `--json`
//! documents, decisions recorded once under a race, never waiting for input
//! that cannot come, a run killed with SIGKILL and resumed, a prompt
//! answered at a terminal, and errors (never panics) on bad input.

mod advisor;
mod ask;
mod attest;
mod bad_input;
mod base;
mod bootstrap;
mod browser;
mod carry;
mod cheats;
mod command_gate;
mod crash;
mod decide;
mod delivery;
mod demo;
mod exec;
mod follow_up;
mod handoff;
mod hook;
mod hook_agents;
mod hook_fixtures;
mod intake;
mod notify;
mod output;
mod phase_command;
mod phase_output;
mod place;
mod profile_keys;
mod prompt;
mod receipt_key;
#[path = "../common/redact.rs"]
mod redact;
mod runs;
mod seeing;
mod status;
mod support;
mod team;
mod toolchain;
mod waiver;
mod weakening;
mod web;
mod web_points;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> =
    std::result::Result<T, E>;
