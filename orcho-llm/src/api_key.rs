//! The API key: where it is looked up, and a holder that never prints it.

use std::{env::VarError, fmt, sync::Arc};

use crate::error::{KeyProblem, LlmError};

/// Looks up an environment variable by name, as [`std::env::var`] does.
pub(crate) type KeyLookup = Arc<dyn Fn(&str) -> Result<String, VarError> + Send + Sync>;

/// The process environment, the lookup every registered gate uses.
#[expect(
    clippy::disallowed_methods,
    reason = "the key must come from the variable the profile names: a profile never holds the key itself"
)]
pub(crate) fn process_env(name: &str) -> Result<String, VarError> {
    std::env::var(name)
}

/// The API key, read for one request. Its `Debug` is redacted, and it has
/// no `Display`.
pub(crate) struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl ApiKey {
    /// Reads the key from `var` through `lookup`.
    pub(crate) fn read(var: &str, lookup: &KeyLookup) -> Result<Self, LlmError> {
        let refuse = |problem| LlmError::ApiKey {
            var: var.to_owned(),
            problem,
        };
        let key = lookup(var).map_err(|e| refuse(KeyProblem::from_var_error(&e)))?;
        if key.is_empty() {
            return Err(refuse(KeyProblem::Empty));
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(refuse(KeyProblem::NotHeaderSafe));
        }
        Ok(Self(key))
    }

    /// The `Authorization` header's value.
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// The key as it is, for a header of its own (`x-api-key`).
    pub(crate) fn raw(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced, for quoting text
    /// that came back from the endpoint (a server may echo the request).
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(value: Result<&'static str, VarError>) -> KeyLookup {
        Arc::new(move |_| value.clone().map(str::to_owned))
    }

    #[test]
    fn the_key_never_prints() {
        let key = ApiKey::read("K", &lookup(Ok("sk-secret"))).unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.bearer(), "Bearer sk-secret");
        assert_eq!(
            key.redact("bad key sk-secret, sk-secret"),
            "bad key <redacted>, <redacted>"
        );
    }

    #[test]
    fn unusable_keys_are_errors_naming_the_variable() {
        let msg = |value| {
            ApiKey::read("MY_KEY", &lookup(value))
                .unwrap_err()
                .to_string()
        };
        insta::assert_snapshot!(msg(Err(VarError::NotPresent)), @"the API key variable `MY_KEY` is not set; set it, or name another variable in `api_key_env`");
        insta::assert_snapshot!(msg(Ok("")), @"the API key variable `MY_KEY` is empty; set it, or name another variable in `api_key_env`");
        let newline = msg(Ok("sk-secret\n"));
        insta::assert_snapshot!(newline, @"the API key variable `MY_KEY` holds whitespace, control or non-ASCII characters, which an API key cannot have; set it, or name another variable in `api_key_env`");
        assert!(!newline.contains("sk-secret"));
    }
}
