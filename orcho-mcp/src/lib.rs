//! `orcho mcp`: the run's decision points as MCP tools, over stdio.
//!
//! The tools follow the handoff rules: a decision tool records a decision
//! and never moves the run; `orcho_run_resume` acts on it. Proposals and
//! advice are shown, never applied. Deliveries go through the engine's
//! delivery gate only. Standard output is the protocol channel, so nothing
//! here prints to it; phase commands run with their output captured.
//!
//! A refused call is a tool result with `isError: true` whose structured
//! content is `{ "code", "message", "hint", "details" }`; `code` is one of
//! `decision_conflict`, `awaiting_decision`, `run_terminal`, `unknown_run`,
//! `run_busy`, `invalid_input`, `not_found`, `no_advisor`,
//! `operator_required`, `no_open_point`, `point_moved`, `stale`,
//! `internal_error`.
//!
//! Decisions made through the tools are recorded as the client's
//! (`decided_by: client`, with the name and version it gave at
//! `initialize`), never as an operator's. Paths a client gives (a
//! `profile`) resolve inside the workspace only.

mod doc;
mod error;
mod input;
mod point;
mod server;
mod tools;

#[cfg(feature = "fuzzing")]
pub use input::arguments;
pub use server::OrchoMcp;
pub use server::serve;
