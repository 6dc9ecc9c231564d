//! What a session may attempt, and what a rule says about it.

use std::{borrow::Cow, fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::RuleError;

/// A kind of operation a session may attempt: `read`, `glob`, `grep`,
/// `write`, `edit`, `bash`, `dispatch`, or any other tool name a host uses
/// (lower-case letters, digits, `_` and `-`), or `*` for every permission.
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
    /// When the name is empty or has characters other than lower-case ASCII
    /// letters, digits, `_` and `-` (or is not exactly `*`).
    pub fn new(name: &str) -> Result<Self, RuleError> {
        let ok = name == "*"
            || (!name.is_empty()
                && name.len() <= 64
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                }));
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

    pub(crate) fn matches(&self, requested: &str) -> bool {
        self.0 == "*" || self.0 == requested
    }

    pub(crate) fn covers(&self, other: &Self) -> bool {
        self.0 == "*" || self.0 == other.0
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
