//! Hosts built on Orcho.
//!
//! - [`host`]: the `orcho` command line (`cargo run -p orcho-examples --bin
//!   orcho -- --help`) and its MCP server ([`host::mcp`], `orcho mcp`).
//!
//! The demo (`--bin demo`) and the embedding example (`--example
//! embedding`) are single files beside it.

pub mod host;
