//! `orcho`: a command-line host on top of the Orcho library, and its MCP
//! server.
//!
//! It needs no LLM: phases run shell commands given on the command line
//! (split into shell words, never run by a shell) and may say more than
//! their exit code in the phase output document (`ORCHO_OUTPUT`: a verdict,
//! findings, a plan, questions, a failed step), verification commands come
//! from the profile's contract, and decisions are taken at a terminal
//! prompt, by the profile's defaults, or later with `orcho handoff decide`,
//! `orcho delivery decide`, `orcho intake`, `orcho plan …`, `orcho answer`
//! and `orcho deviation`. `orcho mcp` serves the same decision points as MCP
//! tools ([`OrchoMcp`]). Every receipt is signed with a key no command it
//! starts sees (`ORCHO_RECEIPT_KEY`, else a key file in the user's data
//! directory).
//!
//! The exit codes scripts can rely on are in [`exit`]; a failed command
//! ends with the code its [`CliError`] carries.
//!
//! Inside coding agents, `orcho hook AGENT` answers each agent's hook
//! documents (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot CLI,
//! Cursor, and opencode through its plugin): the stop guard, the permission
//! rules and the guard of Orcho's own files. [`answer_hook`] is the same
//! decision in-process, for a host that receives the documents itself.
//! The agents' documents, answers and runners are the `orcho-agents`
//! crate's ([`orcho_agents`]); this crate decides what to answer.
//!
//! The crate is laid out by host, over the library: `cli` parses the
//! arguments and `commands` holds one module per command; `mcp` and `web`
//! are the two other front-ends, and none of the three imports another's
//! modules. What they share: `place` (where a command works, who acts
//! through it, how it prints), `host` (what a run keeps of its profile and
//! phase commands), `phase` and `runner` (a phase's command or agent run
//! through [`orcho::phase`]), `proof` (the profile a checkout is judged by,
//! over [`orcho::checkout`]), `key` (this host's keys), `decided` (a
//! decision recorded and said), `prompt` (a terminal's questions) and
//! `output` (every document printed with `--json`, as a `Serialize` type).
//! Views of a decision point, decisions by name, verification, readiness
//! and weakenings are the library's: a host renders them.

mod app;
mod cli;
mod commands;
mod decided;
mod error;
pub mod exit;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod gate_now;
use orcho_agents::hook;
mod host;
mod interrupt;
mod key;
mod mcp;
mod notifying;
mod output;
mod phase;
mod place;
mod prompt;
mod proof;
mod runner;
mod web;

pub use app::main;
pub use commands::hook::{HookAnswer, answer_hook};
pub use error::{CliError, CliErrorKind};
pub use mcp::OrchoMcp;
