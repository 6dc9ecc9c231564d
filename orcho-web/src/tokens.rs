//! Named access tokens of `orcho serve`: made by `orcho serve token add`,
//! shown once, kept only as hashes in a file readable by its owner alone,
//! in the user's data directory (outside every checkout).

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use orcho_host::error::CliError;

/// The token file's schema.
const SCHEMA: u32 = 1;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Look and decide.
    Decide,
    /// Look only.
    ReadOnly,
}

/// One token, as kept: its name, what it may do, and the hash of its
/// secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Token {
    /// Its name: who acts with it.
    pub name: String,
    /// What it may do.
    pub access: Access,
    hash: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TokenFile {
    schema: u32,
    tokens: Vec<Token>,
}

/// The hash a token is kept as: BLAKE3 of its secret (a random 256-bit
/// secret needs no slow hash).
fn hash(secret: &str) -> String {
    blake3::hash(secret.as_bytes()).to_hex().to_string()
}

/// The tokens of this user, kept at `path`.
#[derive(Debug, Clone)]
pub struct Tokens {
    path: Utf8PathBuf,
}

impl Tokens {
    /// The token file in the user's data directory.
    pub fn of_user() -> Result<Self, CliError> {
        Ok(Self {
            path: orcho_host::key::data_file("web-tokens.json")?,
        })
    }

    /// The file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    fn load(&self) -> Result<TokenFile, CliError> {
        let Some(text) = orcho_host::key::read_private(&self.path, "token file")? else {
            return Ok(TokenFile {
                schema: SCHEMA,
                tokens: Vec::new(),
            });
        };
        let file: TokenFile = serde_json::from_str(&text).map_err(|e| {
            CliError::msg(format!("the token file `{}` does not read: {e}", self.path))
                .with_hint("remove it and add the tokens again with `orcho serve token add NAME`")
        })?;
        if file.schema != SCHEMA {
            return Err(CliError::msg(format!(
                "the token file `{}` has schema {}, this orcho reads {SCHEMA}",
                self.path, file.schema
            )));
        }
        Ok(file)
    }

    fn save(&self, file: &TokenFile) -> Result<(), CliError> {
        orcho::checkout::make_private_dir(&self.path)
            .map_err(|e| CliError::msg(format!("cannot write `{}`: {e}", self.path)))?;
        let text = serde_json::to_vec_pretty(file)
            .map_err(|e| CliError::msg(format!("cannot write `{}`: {e}", self.path)))?;
        // The temporary file is made with mode 0600 and renamed in place.
        orcho::core::fs::write_atomic(&self.path, &text)
            .map_err(|e| CliError::msg(format!("cannot write `{}`: {e}", self.path)))
    }

    /// Every token (names and access, never secrets).
    pub fn list(&self) -> Result<Vec<Token>, CliError> {
        Ok(self.load()?.tokens)
    }

    /// Makes a token named `name`; returns its secret, shown only now.
    pub fn add(&self, name: &str, access: Access) -> Result<String, CliError> {
        orcho::core::ids::validate("token name", name).map_err(|e| {
            CliError::usage(e.to_string()).with_hint("a name such as `alice` or `ci-bot`")
        })?;
        let mut file = self.load()?;
        if file.tokens.iter().any(|t| t.name == name) {
            return Err(
                CliError::msg(format!("a token named `{name}` exists")).with_hint(format!(
                    "`orcho serve token remove {name}` first, or pick another name"
                )),
            );
        }
        let secret = format!(
            "orcho_{}",
            random_hex().ok_or_else(|| CliError::msg("no randomness for a token"))?
        );
        file.schema = SCHEMA;
        file.tokens.push(Token {
            name: name.to_owned(),
            access,
            hash: hash(&secret),
            created_at: orcho::core::Timestamp::now().to_string(),
        });
        self.save(&file)?;
        Ok(secret)
    }

    /// Removes the token `name`: `false` when there was none.
    pub fn remove(&self, name: &str) -> Result<bool, CliError> {
        let mut file = self.load()?;
        let before = file.tokens.len();
        file.tokens.retain(|t| t.name != name);
        if file.tokens.len() == before {
            return Ok(false);
        }
        self.save(&file)?;
        Ok(true)
    }

    /// The token whose secret is `secret`, if any.
    pub(crate) fn check(&self, secret: &str) -> Result<Option<Token>, CliError> {
        let wanted = hash(secret.trim());
        Ok(self
            .load()?
            .tokens
            .into_iter()
            .find(|t| constant_eq(&t.hash, &wanted)))
    }
}

/// 256 random bits as hex: a token's secret, a session's id, a CSRF
/// token; `None` without randomness.
pub(crate) fn random_hex() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two secrets without stopping at the first difference.
pub(crate) fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
