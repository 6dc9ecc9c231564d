//! Permission rules for read-only sessions: what an agent's tool call may
//! do, decided before it runs.
//!
//! A [`RuleSet`] is an ordered list of [`Rule`]s, each a [`Permission`]
//! (`read`, `write`, `edit`, `bash`, an MCP tool's name, or `*`), a
//! [`Pattern`] over the request's argument (a path, a command line) and a
//! [`PermissionAction`] (allow, ask, deny). [`RuleSet::evaluate`] gives the
//! [`Evaluation`]: the action and the [`Reason`] a person and the agent can
//! read. The [`read_only`](RuleSet::read_only) preset allows reading and a
//! list of [`SAFE_COMMANDS`], and denies every write; a command line with a
//! compound construct (`;`, `&&`, `|`, `$(…)`, a redirection) is never
//! allowed through a prefix rule.
//!
//! This crate depends on no other crate of Orcho, so that hooks inside
//! coding agents can evaluate rules without the rest of Orcho.
//!
//! # Example
//!
//! ```
//! use orcho_permissions::{PermissionAction, RuleSet};
//!
//! let rules = RuleSet::read_only();
//! assert_eq!(rules.evaluate("read", "src/lib.rs").action, PermissionAction::Allow);
//! assert_eq!(rules.evaluate("write", "src/lib.rs").action, PermissionAction::Deny);
//! assert_ne!(rules.evaluate("bash", "git status && rm -rf /").action, PermissionAction::Allow);
//! ```
//!
//! # Crate features
//!
//! None.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The minimum supported Rust
//! version is 1.95.

mod error;
mod pattern;
mod permission;
mod rules;

pub use error::RuleError;
pub use pattern::{MAX_PATTERN_CHARS, Pattern};
pub use permission::{Permission, PermissionAction};
pub use rules::{Evaluation, PermissionPreset, Reason, Rule, RuleSet, SAFE_COMMANDS, ShadowedRule};
