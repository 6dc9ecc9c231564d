//! Validated names of commands and environments.
//!
//! Both become directory names in the receipt store, so every way to build
//! one (`new`, `FromStr`, `Deserialize`) checks that it is one safe path
//! component: 1 to 64 ASCII letters, digits, `-`, `_` or `.`, starting with a
//! letter or digit, and without `..`.

use std::{borrow::Borrow, fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use crate::NameError;

const MAX_LEN: usize = 64;

fn validate(what: &'static str, value: &str) -> Result<(), NameError> {
    if value.is_empty() {
        return Err(NameError::new(what, value, "is empty"));
    }
    if value.len() > MAX_LEN {
        return Err(NameError::new(what, value, "is longer than 64 bytes"));
    }
    if !value.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(NameError::new(
            what,
            value,
            "must start with an ASCII letter or digit",
        ));
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(NameError::new(
            what,
            value,
            "may only contain ASCII letters, digits, `-`, `_` and `.`",
        ));
    }
    if value.contains("..") {
        return Err(NameError::new(what, value, "contains `..`"));
    }
    Ok(())
}

macro_rules! name_newtype {
    ($(#[$meta:meta])* $name:ident, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates `value` and wraps it.
            ///
            /// # Errors
            ///
            /// A [`NameError`] naming the rule `value` breaks: a name is 1
            /// to 64 ASCII letters, digits, `-`, `_` or `.`, starts with a
            /// letter or digit, and has no `..`.
            pub fn new(value: impl Into<String>) -> Result<Self, NameError> {
                let value = value.into();
                validate($what, &value)?;
                Ok(Self(value))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = NameError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;

            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::new(value)
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> Self {
                name.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

name_newtype!(
    /// The name of a declared verification command, for example `test`.
    ///
    /// ```
    /// use orcho_receipts::CommandName;
    ///
    /// let name: CommandName = "unit-tests".parse()?;
    /// assert_eq!(name.as_str(), "unit-tests");
    /// assert!("a/b".parse::<CommandName>().is_err());
    /// # Ok::<(), orcho_receipts::NameError>(())
    /// ```
    CommandName,
    "command name"
);

name_newtype!(
    /// The name of a verification environment or of a dependency checkout.
    ///
    /// ```
    /// use orcho_receipts::EnvName;
    ///
    /// assert!("py3.12".parse::<EnvName>().is_ok());
    /// assert!(".hidden".parse::<EnvName>().is_err());
    /// ```
    EnvName,
    "environment name"
);

impl EnvName {
    /// Wraps a constant name known to be valid.
    pub(crate) fn new_unchecked(value: &'static str) -> Self {
        debug_assert!(validate("environment name", value).is_ok());
        Self(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rules() {
        for good in ["test", "a", "unit-tests", "py3.12", "x_y", "9lives"] {
            assert!(CommandName::new(good).is_ok(), "{good}");
        }
        let errs: Vec<String> = ["", ".git", "_x", "a/b", "a..b", "a b", &"x".repeat(65)]
            .iter()
            .map(|bad| CommandName::new(*bad).unwrap_err().to_string())
            .collect();
        insta::assert_snapshot!(errs.join("\n"), @r"
        invalid command name ``: is empty
        invalid command name `.git`: must start with an ASCII letter or digit
        invalid command name `_x`: must start with an ASCII letter or digit
        invalid command name `a/b`: may only contain ASCII letters, digits, `-`, `_` and `.`
        invalid command name `a..b`: contains `..`
        invalid command name `a b`: may only contain ASCII letters, digits, `-`, `_` and `.`
        invalid command name `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…`: is longer than 64 bytes
        ");
    }

    #[test]
    fn serde_goes_through_validation() {
        assert!(serde_json::from_str::<CommandName>("\"../x\"").is_err());
        let name: EnvName = serde_json::from_str("\"ci\"").unwrap();
        assert_eq!(serde_json::to_string(&name).unwrap(), "\"ci\"");
    }

    proptest! {
        #[test]
        fn a_valid_name_is_one_safe_path_component(s in "\\PC{0,70}") {
            if let Ok(name) = CommandName::new(s.clone()) {
                let path = camino::Utf8Path::new(name.as_str());
                prop_assert_eq!(path.components().count(), 1);
                prop_assert!(!s.starts_with('.'));
                prop_assert!(!s.contains(".."));
            }
        }
    }
}
