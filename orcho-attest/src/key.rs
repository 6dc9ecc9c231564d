//! Ed25519 keys: the one that signs, and the public ones a repository
//! trusts.

use std::{fmt, str::FromStr};

use ed25519_dalek::{Signer as _, Verifier as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::Digest as _;

use crate::b64;

/// The algorithm of every key here, as `orcho key show --json` names it.
pub const ALGORITHM: &str = "ed25519";

/// A key that signs attestations.
///
/// Its secret is a 32-byte seed. Keep it where the agent cannot read it
/// (the `orcho` command line keeps it beside the receipt key, mode 0600,
/// or takes it from `ORCHO_SIGNING_KEY`): whoever holds it can attest
/// anything.
#[derive(Clone)]
pub struct SigningKey {
    key: ed25519_dalek::SigningKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new key from the operating system's randomness.
    ///
    /// # Errors
    ///
    /// When the operating system gives no randomness.
    pub fn generate() -> Result<Self, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(Self::from_seed(seed))
    }

    /// The key of a 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        }
    }

    /// The seed, as text: base64 of its 32 bytes (what a key file and
    /// `ORCHO_SIGNING_KEY` hold).
    pub fn to_secret_text(&self) -> String {
        b64::encode(self.key.as_bytes())
    }

    /// Reads a seed written by [`to_secret_text`](Self::to_secret_text)
    /// (surrounding white space ignored).
    ///
    /// # Errors
    ///
    /// Text that is not base64 of 32 bytes.
    pub fn from_secret_text(text: &str) -> Result<Self, KeyError> {
        let bytes = b64::decode(text.trim()).ok_or(KeyError::NotBase64)?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| KeyError::Length(b.len()))?;
        Ok(Self::from_seed(seed))
    }

    /// Its public key.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key: self.key.verifying_key(),
        }
    }

    /// Signs `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

/// A public Ed25519 key: 32 raw bytes, written as base64.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey {
    key: ed25519_dalek::VerifyingKey,
}

impl PublicKey {
    /// The key of 32 raw bytes.
    ///
    /// # Errors
    ///
    /// Bytes that are not a point of the curve, or a weak (small-order)
    /// key, which would accept signatures that prove nothing.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyError> {
        let key = ed25519_dalek::VerifyingKey::from_bytes(bytes).map_err(|_| KeyError::NotAKey)?;
        if key.is_weak() {
            return Err(KeyError::Weak);
        }
        Ok(Self { key })
    }

    /// Its 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.key.as_bytes()
    }

    /// Its id: the hex SHA-256 of its raw bytes (64 digits).
    pub fn keyid(&self) -> String {
        hex(&sha2::Sha256::digest(self.as_bytes()))
    }

    /// Base64 of its raw bytes (the form `trust.keys[].ed25519` takes).
    pub fn to_base64(&self) -> String {
        b64::encode(self.as_bytes())
    }

    /// Whether `signature` is this key's signature of `message`: strict
    /// verification (no malleable signatures).
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let signature = ed25519_dalek::Signature::from_bytes(signature);
        self.key.verify_strict(message, &signature).is_ok()
    }

    /// [`verify`](Self::verify) as `ed25519-dalek`'s own non-strict check
    /// does it (for the comparison in the benchmarks).
    #[doc(hidden)]
    pub fn verify_lenient(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let signature = ed25519_dalek::Signature::from_bytes(signature);
        self.key.verify(message, &signature).is_ok()
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_base64())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

impl FromStr for PublicKey {
    type Err = KeyError;

    /// Base64 (standard or URL-safe, padded or not) of 32 raw bytes.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = b64::decode(text.trim()).ok_or(KeyError::NotBase64)?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| KeyError::Length(b.len()))?;
        Self::from_bytes(&bytes)
    }
}

impl Serialize for PublicKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for PublicKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(|e| {
            serde::de::Error::custom(format!(
                "`{text}` is not an Ed25519 public key ({e}); `orcho key show` prints one"
            ))
        })
    }
}

/// A key a repository trusts, with the name it is shown by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TrustedKey {
    /// Its name (`ci`, `alice`): what `orcho status --commit` says signed.
    pub name: String,
    /// The public key.
    pub ed25519: PublicKey,
}

impl TrustedKey {
    /// A trusted key.
    pub fn new(name: impl Into<String>, ed25519: PublicKey) -> Self {
        Self {
            name: name.into(),
            ed25519,
        }
    }
}

/// Why a key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Not base64.
    #[error("not base64")]
    NotBase64,
    /// The wrong number of bytes.
    #[error("{0} bytes; an Ed25519 key has 32")]
    Length(usize),
    /// Not a point of the curve.
    #[error("not an Ed25519 public key")]
    NotAKey,
    /// A small-order key, which any signature could match.
    #[error("a weak Ed25519 key (of small order), which proves nothing")]
    Weak,
    /// No randomness.
    #[error("the operating system gave no randomness: {0}")]
    Random(String),
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8032, section 7.1, TEST 1.
    pub(crate) const SEED_A: &str =
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const PUBLIC_A: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

    pub(crate) fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc_8032_key_and_its_id() {
        let seed: [u8; 32] = unhex(SEED_A).try_into().unwrap();
        let key = SigningKey::from_seed(seed);
        assert_eq!(hex(key.public().as_bytes()), PUBLIC_A);
        // The keyid is SHA-256 of the raw public key.
        assert_eq!(
            key.public().keyid(),
            hex(&sha2::Sha256::digest(unhex(PUBLIC_A)))
        );
        assert_eq!(key.public().keyid().len(), 64);
        // RFC 8032 TEST 1: the empty message.
        let signature = key.sign(b"");
        assert_eq!(
            hex(&signature),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
        assert!(key.public().verify(b"", &signature));
        assert!(!key.public().verify(b"x", &signature));
    }

    #[test]
    fn secret_and_public_text_round_trip() {
        let key = SigningKey::generate().unwrap();
        let again = SigningKey::from_secret_text(&format!(" {}\n", key.to_secret_text())).unwrap();
        assert_eq!(again.public(), key.public());
        let public: PublicKey = key.public().to_base64().parse().unwrap();
        assert_eq!(public, key.public());
    }

    #[test]
    fn bad_keys_are_named() {
        assert_eq!("not base64!".parse::<PublicKey>(), Err(KeyError::NotBase64));
        assert_eq!(
            b64::encode(&[1u8; 31]).parse::<PublicKey>(),
            Err(KeyError::Length(31))
        );
        // The identity point is of small order.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert_eq!(
            b64::encode(&identity).parse::<PublicKey>(),
            Err(KeyError::Weak)
        );
        assert_eq!(
            SigningKey::from_secret_text("AAAA").unwrap_err(),
            KeyError::Length(3)
        );
    }
}
