//! Errors of permission rules.

use std::fmt;

/// A permission rule could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule: {what}")]
pub struct RuleError {
    what: String,
}

impl RuleError {
    #[cold]
    pub(crate) fn new(what: impl fmt::Display) -> Self {
        Self {
            what: what.to_string(),
        }
    }
}
