//! Self-describing content digests: `blake3:<64 hex digits>`.
//!
//! Every digest Orcho writes (finding fingerprints, payload digests of
//! decisions, receipt and checkout fingerprints) uses this one text form. The
//! algorithm prefix makes a future change of algorithm visible instead of
//! silently comparing unlike digests.
//!
//! Digests are computed in blake3's `derive_key` mode with a context string
//! that names what is hashed and its version (for example
//! `"orcho finding fingerprint v1"`): two digests of the same bytes for
//! different purposes never collide, and changing *what* is hashed means
//! changing the context, which changes every digest.

use std::{fmt, str::FromStr};

use serde_with::{DeserializeFromStr, SerializeDisplay};

use crate::ValueError;

/// A digest algorithm. Its discriminant is stable and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DigestAlgo {
    /// BLAKE3 with 32-byte output.
    Blake3 = 1,
}

// The prefix of the text form, without the colon.
crate::spelled!(DigestAlgo { Blake3 => "blake3" });

/// Exactly as spelled: a digest's text form has one spelling.
impl FromStr for DigestAlgo {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| ValueError::new("digest algorithm", s, "expected `blake3`"))
    }
}

/// A 32-byte digest with its algorithm; text form `blake3:<hex>`.
///
/// ```
/// use orcho_core::Digest;
///
/// let d = Digest::derive("orcho example v1", b"hello");
/// let text = d.to_string();
/// assert!(text.starts_with("blake3:"));
/// assert_eq!(text.parse::<Digest>()?, d);
/// assert_ne!(d, Digest::derive("orcho other v1", b"hello"));
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, SerializeDisplay, DeserializeFromStr,
)]
pub struct Digest {
    algo: DigestAlgo,
    bytes: [u8; 32],
}

impl Digest {
    /// Wraps raw digest bytes.
    pub fn from_bytes(algo: DigestAlgo, bytes: [u8; 32]) -> Self {
        Self { algo, bytes }
    }

    /// The blake3 `derive_key` digest of `data` under `context`.
    pub fn derive(context: &str, data: &[u8]) -> Self {
        Self::from_blake3(
            blake3::Hasher::new_derive_key(context)
                .update(data)
                .finalize(),
        )
    }

    /// Wraps a finished blake3 hash.
    pub fn from_blake3(hash: blake3::Hash) -> Self {
        Self {
            algo: DigestAlgo::Blake3,
            bytes: *hash.as_bytes(),
        }
    }

    crate::getters! {
        /// The algorithm.
        pub fn algo(&self) -> DigestAlgo;
        /// The raw bytes.
        pub fn as_bytes(&self) -> &[u8; 32] => bytes;
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.algo)?;
        for byte in self.bytes {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let invalid = || {
            ValueError::new(
                "digest",
                s,
                "expected `blake3:` and 64 lower-case hex digits",
            )
        };
        let (algo, hex) = s.split_once(':').ok_or_else(invalid)?;
        let algo: DigestAlgo = algo.parse().map_err(|_| invalid())?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(invalid());
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| invalid())?;
        }
        Ok(Self { algo, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn text_round_trips(bytes in any::<[u8; 32]>()) {
            let d = Digest::from_bytes(DigestAlgo::Blake3, bytes);
            prop_assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
            let json = serde_json::to_string(&d).unwrap();
            prop_assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), d);
        }

        #[test]
        fn arbitrary_text_never_panics(text in ".*") {
            let _ = text.parse::<Digest>();
        }
    }

    #[test]
    fn malformed_digests_are_refused() {
        for bad in [
            "",
            "blake3",
            "blake3:",
            "sha256:00",
            &format!("blake3:{}", "A".repeat(64)),
            &format!("blake3:{}", "0".repeat(63)),
        ] {
            assert!(bad.parse::<Digest>().is_err(), "{bad}");
        }
        insta::assert_snapshot!("md5:abc".parse::<Digest>().unwrap_err(), @"invalid digest `md5:abc`: expected `blake3:` and 64 lower-case hex digits");
    }
}
