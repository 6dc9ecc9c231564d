//! What a session may attempt, and what a rule says about it.

use std::{borrow::Cow, fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Pattern, RuleError};

/// A kind of operation a session may attempt: `read`, `glob`, `grep`,
/// `write`, `edit`, `bash`, `dispatch`, or any other tool name a host uses
/// (lower-case letters, digits, `_` and `-`, for example an MCP tool's
/// `mcp__github__create_issue`).
///
/// In a rule the name may be a glob: `*` for every permission, `mcp__*` for
/// every MCP tool, `?` for one character.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Permission(Cow<'static, str>);

impl Permission {
    /// Reading a file.
    pub const READ: Self = Self(Cow::Borrowed("read"));
    /// Listing files by glob.
    pub const GLOB: Self = Self(Cow::Borrowed("glob"));
    /// Searching file contents.
    pub const GREP: Self = Self(Cow::Borrowed("grep"));
    /// Creating or replacing a file.
    pub const WRITE: Self = Self(Cow::Borrowed("write"));
    /// Editing a file in place.
    pub const EDIT: Self = Self(Cow::Borrowed("edit"));
    /// Running a shell command; the argument is the command line.
    pub const BASH: Self = Self(Cow::Borrowed("bash"));
    /// Dispatching work to another agent (which could recurse).
    pub const DISPATCH: Self = Self(Cow::Borrowed("dispatch"));
    /// Every permission (in rules only).
    pub const ANY: Self = Self(Cow::Borrowed("*"));

    /// A permission by name.
    ///
    /// # Errors
    ///
    /// When the name is empty, longer than 128 bytes, or has characters
    /// other than lower-case ASCII letters, digits, `_`, `-` and the glob
    /// characters `*` and `?`.
    pub fn new(name: &str) -> Result<Self, RuleError> {
        let ok = !name.is_empty()
            && name.len() <= 128
            && name.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'-' | b'*' | b'?')
            });
        if ok {
            Ok(Self(Cow::Owned(name.to_owned())))
        } else {
            Err(RuleError::new(format_args!(
                "`{}` is not a permission name (lower-case letters, digits, `_`, `-`, or `*`)",
                name.escape_debug()
            )))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the name is a glob (has `*` or `?`).
    pub fn is_glob(&self) -> bool {
        self.0.contains(['*', '?'])
    }

    /// Whether requests of this permission name a path (`read`, `write`,
    /// `edit`), whose rules' patterns follow glob rules
    /// ([`Pattern::matches_path`](crate::Pattern::matches_path)).
    pub fn names_paths(name: &str) -> bool {
        matches!(name, "read" | "write" | "edit")
    }

    pub(crate) fn matches(&self, requested: &str) -> bool {
        if self.is_glob() {
            Pattern::new(&self.0).matches(requested)
        } else {
            self.0 == requested
        }
    }

    pub(crate) fn covers(&self, other: &Self) -> bool {
        Pattern::new(&self.0).covers(&Pattern::new(&other.0))
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Permission {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

/// What a rule says about a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PermissionAction {
    /// Go ahead.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse.
    Deny,
}

impl fmt::Display for PermissionAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        })
    }
}

impl Serialize for Permission {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Permission {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <Cow<'de, str>>::deserialize(deserializer)?;
        Self::new(&text).map_err(serde::de::Error::custom)
    }
}
