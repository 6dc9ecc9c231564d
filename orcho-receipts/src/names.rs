//! Validated names of commands and environments.
//!
//! Both become directory names in the receipt store, so every way to build
//! one (`new`, `FromStr`, `Deserialize`) checks that it is one safe path
//! component: 1 to 64 ASCII letters, digits, `-`, `_` or `.`, starting with a
//! letter or digit, and without `..`.

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

orcho_core::id_type! {
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
    pub struct CommandName("command name") validated by validate, error NameError;
}

orcho_core::id_type! {
    /// The name of a verification environment or of a dependency checkout.
    ///
    /// ```
    /// use orcho_receipts::EnvName;
    ///
    /// assert!("py3.12".parse::<EnvName>().is_ok());
    /// assert!(".hidden".parse::<EnvName>().is_err());
    /// ```
    pub struct EnvName("environment name") validated by validate, error NameError;
}

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
