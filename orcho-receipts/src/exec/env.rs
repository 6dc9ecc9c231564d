//! The documented base environment of every command.

use std::collections::BTreeMap;

/// The host variables [`BaseEnv::inherit`] passes through, when set and
/// valid UTF-8: what a native tool needs to find programs, a home, a locale
/// and a temporary directory, and nothing that would make results depend on
/// the rest of the host's environment.
pub const BASE_ENV_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "TERM",
];

/// The variables a command starts from, before the declared ones.
///
/// A command never inherits the host's environment wholesale: it gets this
/// base, then its environment's `env`, then its own `env`, then the values
/// of its declared secrets. The receipt records everything but the secret
/// values, so the environment is what the receipt says it was.
///
/// ```
/// use orcho_receipts::exec::BaseEnv;
///
/// let base = BaseEnv::empty().with("PATH", "/usr/bin:/bin");
/// assert_eq!(base.get("PATH"), Some("/usr/bin:/bin"));
/// assert!(BaseEnv::inherit().iter().all(|(k, _)| orcho_receipts::exec::BASE_ENV_VARS.contains(&k)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BaseEnv {
    vars: BTreeMap<String, String>,
}

impl BaseEnv {
    /// No variables at all.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The [`BASE_ENV_VARS`] of this process that are set and valid UTF-8.
    pub fn inherit() -> Self {
        let vars = BASE_ENV_VARS
            .iter()
            .filter_map(|key| {
                let value = std::env::var_os(key)?.into_string().ok()?;
                Some(((*key).to_owned(), value))
            })
            .collect();
        Self { vars }
    }

    /// Adds the host variables `names` of this process that are set and
    /// valid UTF-8 (variables a contract declares it `inherit`s). The
    /// variables of Orcho's keys ([`RECEIPT_KEY_VAR`](crate::RECEIPT_KEY_VAR),
    /// [`SIGNING_KEY_VAR`](crate::SIGNING_KEY_VAR)) are never added.
    #[must_use]
    pub fn with_host_vars<'a>(self, names: impl IntoIterator<Item = &'a str>) -> Self {
        self.with_vars_from(names, |name| {
            std::env::var_os(name).and_then(|v| v.into_string().ok())
        })
    }

    /// [`with_host_vars`](Self::with_host_vars) with the values `lookup`
    /// gives.
    fn with_vars_from<'a>(
        mut self,
        names: impl IntoIterator<Item = &'a str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Self {
        for name in names {
            if crate::store::is_key_var(name) {
                continue;
            }
            if let Some(value) = lookup(name) {
                self.vars.insert(name.to_owned(), value);
            }
        }
        self
    }

    /// Sets a variable.
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(key.into(), value.into());
        self
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }

    /// The variables, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl IntoIterator for BaseEnv {
    type Item = (String, String);
    type IntoIter = std::collections::btree_map::IntoIter<String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.vars.into_iter()
    }
}

impl<'a> IntoIterator for &'a BaseEnv {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.vars.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receipt_key_variable_is_never_inherited() {
        // A host where every variable is set.
        let base = BaseEnv::empty().with_vars_from(
            ["JAVA_HOME", crate::RECEIPT_KEY_VAR, crate::SIGNING_KEY_VAR],
            |name| Some(format!("value of {name}")),
        );
        assert_eq!(base.get("JAVA_HOME"), Some("value of JAVA_HOME"));
        assert_eq!(base.get(crate::RECEIPT_KEY_VAR), None);
        assert_eq!(base.get(crate::SIGNING_KEY_VAR), None);
    }
}
