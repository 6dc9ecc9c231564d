//! What Orcho's own front-ends share: the command line (`orcho`), its web
//! inbox (`orcho serve`, the `orcho-web` crate) and its MCP server
//! (`orcho mcp`, the `orcho-mcp` crate) each parse, render and map errors
//! their own way, over this one layer.
//!
//! - [`place`]: where a command works (the checkout, its store, a shared
//!   store), who acts through it ([`place::Actor`]) and how it prints
//!   ([`place::Voice`]).
//! - [`host`]: what a run keeps of its profile and phase commands
//!   ([`host::RunConfig`]), how it starts and opens again.
//! - [`phase`] and [`runner`]: a phase's command or coding agent run
//!   through the library's phase protocol ([`orcho::phase`]).
//! - [`proof`] and [`key`]: the profile a checkout is judged by, over
//!   [`orcho::checkout`], and this host's receipt and signing keys.
//! - [`decided`]: a decision recorded and said, by whoever took it.
//! - [`output`]: every document printed with `--json` (a `Serialize` type
//!   in [`output::doc`]) and the text said to people.
//! - [`error`] and [`exit`]: one typed failure ([`error::CliError`]) and the
//!   exit codes scripts rely on.
//! - [`interrupt`], [`notifying`], [`gate_now`]: Ctrl-C during a command,
//!   notifications sent in the background, and a delivery gate's state now.
//!
//! Views of a decision point, decisions by name, verification, readiness
//! and weakenings are the `orcho` library's; this layer holds what is
//! particular to Orcho's own hosts (their files, keys, texts and exit
//! codes). It is not a stable API: a third-party host builds on `orcho`.

pub mod decided;
pub mod error;
pub mod exit;
pub mod gate_now;
pub mod host;
pub mod interrupt;
pub mod key;
pub mod notifying;
pub mod output;
pub mod phase;
pub mod place;
pub mod proof;
pub mod runner;

pub use error::{CliError, CliErrorKind};
