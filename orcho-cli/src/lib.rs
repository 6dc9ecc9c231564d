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
//! The command line is one of three front-ends over one shared layer: this
//! crate parses the arguments (`cli`), holds one module per command
//! (`commands`) and asks at a terminal (`prompt`); the web inbox is
//! [`orcho_web`] and the MCP server [`orcho_mcp`]; none of the three imports
//! another's modules. What they share is [`orcho_host`]: where a command
//! works, who acts through it and how it prints, what a run keeps of its
//! profile and phase commands, a phase's command or agent run through
//! [`orcho::phase`], the profile a checkout is judged by, this host's keys,
//! a decision recorded and said, and every document printed with `--json`.
//! Views of a decision point, decisions by name, verification, readiness
//! and weakenings are the library's ([`orcho`]): a host renders them.

mod app;
mod cli;
mod commands;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
use orcho_agents::hook;
mod prompt;
// The shared layer's modules, named at the root as the other front-ends
// name them through `orcho_host`.
pub use orcho_host::exit;
use orcho_host::{
    decided, error, gate_now, host, interrupt, key, notifying, output, phase, place, proof, runner,
};

pub use app::main;
pub use commands::hook::{HookAnswer, answer_hook};
pub use orcho_host::{CliError, CliErrorKind};
pub use orcho_mcp::OrchoMcp;
