//! DSSE envelopes (Dead Simple Signing Envelope, v1.0.2): a payload, its
//! type, and signatures over the pre-authentication encoding of both.
//!
//! ```text
//! PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
//! ```
//!
//! `LEN` is the byte length in ASCII decimal. An envelope is read with the
//! spec's rules: `payload`, `payloadType` and `signatures` are required,
//! each signature's `sig` too (`keyid` may be absent, and says nothing a
//! verifier may rely on); unknown fields are ignored; base64 is standard
//! or URL-safe. The payload the signature was checked over is the payload
//! handed on: it is never re-encoded or parsed again from the envelope.

use serde::{Deserialize, Serialize};

use crate::{PublicKey, SigningKey, b64};

/// The payload type of an in-toto Statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// The pre-authentication encoding of `payload_type` and `payload`: what
/// a DSSE signature signs.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let type_len = payload_type.len().to_string();
    let body_len = payload.len().to_string();
    let mut out = Vec::with_capacity(
        7 + type_len.len() + 1 + payload_type.len() + 1 + body_len.len() + 1 + payload.len(),
    );
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(type_len.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(body_len.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

/// A DSSE envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Envelope {
    /// The payload's bytes.
    pub payload: Vec<u8>,
    /// What the payload is.
    pub payload_type: String,
    /// Its signatures.
    pub signatures: Vec<Signature>,
}

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Signature {
    /// The key's id as the signer gave it (unauthenticated: a hint of
    /// which key to try first).
    pub keyid: String,
    /// The signature's bytes (64 for Ed25519; any length is kept as read,
    /// and is refused when verified).
    pub sig: Vec<u8>,
}

/// Why an envelope could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// Not a JSON object with the required fields.
    #[error("not a DSSE envelope: {0}")]
    Json(String),
    /// A field that should be base64 is not.
    #[error("`{0}` is not base64")]
    Base64(&'static str),
}

#[derive(Serialize, Deserialize)]
struct EnvelopeJson {
    payload: String,
    #[serde(rename = "payloadType")]
    payload_type: String,
    signatures: Vec<SignatureJson>,
}

#[derive(Serialize, Deserialize)]
struct SignatureJson {
    #[serde(default)]
    keyid: String,
    sig: String,
}

impl Envelope {
    /// Signs `payload` of `payload_type` with `key`.
    pub fn sign(payload: Vec<u8>, payload_type: &str, key: &SigningKey) -> Self {
        let sig = key.sign(&pae(payload_type, &payload)).to_vec();
        Self {
            payload,
            payload_type: payload_type.to_owned(),
            signatures: vec![Signature {
                keyid: key.public().keyid(),
                sig,
            }],
        }
    }

    /// Reads an envelope from its JSON.
    ///
    /// # Errors
    ///
    /// Not JSON, a required field missing or of the wrong type, or base64
    /// that does not decode.
    pub fn from_json(json: &str) -> Result<Self, EnvelopeError> {
        let raw: EnvelopeJson =
            serde_json::from_str(json).map_err(|e| EnvelopeError::Json(e.to_string()))?;
        let payload = b64::decode(&raw.payload).ok_or(EnvelopeError::Base64("payload"))?;
        let signatures = raw
            .signatures
            .into_iter()
            .map(|s| {
                Ok(Signature {
                    sig: b64::decode(&s.sig).ok_or(EnvelopeError::Base64("sig"))?,
                    keyid: s.keyid,
                })
            })
            .collect::<Result<_, EnvelopeError>>()?;
        Ok(Self {
            payload,
            payload_type: raw.payload_type,
            signatures,
        })
    }

    /// The envelope as one line of JSON (standard, padded base64).
    pub fn to_json(&self) -> String {
        let raw = EnvelopeJson {
            payload: b64::encode(&self.payload),
            payload_type: self.payload_type.clone(),
            signatures: self
                .signatures
                .iter()
                .map(|s| SignatureJson {
                    keyid: s.keyid.clone(),
                    sig: b64::encode(&s.sig),
                })
                .collect(),
        };
        serde_json::to_string(&raw).unwrap_or_default()
    }

    /// The first of `keys` that signed it, trying the key a signature
    /// names by id first and then every other key (an id is only a hint).
    /// `None` when no key of `keys` signed it.
    pub fn signed_by<'k, K>(
        &self,
        keys: &'k [K],
        public: impl Fn(&K) -> &PublicKey,
    ) -> Option<&'k K> {
        let message = pae(&self.payload_type, &self.payload);
        self.signatures.iter().find_map(|signature| {
            let sig: &[u8; 64] = signature.sig.as_slice().try_into().ok()?;
            let hinted = keys.iter().filter(|k| public(k).keyid() == signature.keyid);
            let others = keys.iter().filter(|k| public(k).keyid() != signature.keyid);
            hinted
                .chain(others)
                .find(|k| public(k).verify(&message, sig))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::hex;

    fn key(seed: &str) -> SigningKey {
        let bytes: Vec<u8> = (0..seed.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&seed[i..i + 2], 16).unwrap())
            .collect();
        SigningKey::from_seed(bytes.try_into().unwrap())
    }

    /// RFC 8032 TEST 1 and TEST 2.
    fn key_a() -> SigningKey {
        key("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    }
    fn key_b() -> SigningKey {
        key("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
    }

    const BODY: &[u8] = br#"{"_type":"https://in-toto.io/Statement/v1"}"#;

    #[test]
    fn the_spec_test_vector_pae() {
        // DSSE protocol.md, "Test Vectors".
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert_eq!(
            pae(IN_TOTO_PAYLOAD_TYPE, b""),
            b"DSSEv1 28 application/vnd.in-toto+json 0 "
        );
        // Lengths are bytes, not characters.
        assert_eq!(
            &pae("application/vnd.exämple+json", BODY)[..10],
            b"DSSEv1 29 "
        );
        assert_eq!(
            hex(&pae(IN_TOTO_PAYLOAD_TYPE, BODY)),
            "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203433207b225f74797065223a2268747470733a2f2f696e2d746f746f2e696f2f53746174656d656e742f7631227d"
        );
    }

    #[test]
    fn signatures_match_an_independent_implementation() {
        // Computed with Python's `cryptography` over the same PAE.
        let envelope = Envelope::sign(BODY.to_vec(), IN_TOTO_PAYLOAD_TYPE, &key_a());
        assert_eq!(
            b64::encode(&envelope.signatures[0].sig),
            "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA=="
        );
        let envelope = Envelope::sign(BODY.to_vec(), IN_TOTO_PAYLOAD_TYPE, &key_b());
        assert_eq!(
            b64::encode(&envelope.signatures[0].sig),
            "c1+67/aT0yqEpwx8PsVY3MLHsj9D0CZ014/Fv/QlG59P+9CobUZ7xECJ/V3USG0Ob9CiE5LjReEZUzNF2l7eBw=="
        );
        let envelope = Envelope::sign(BODY.to_vec(), "application/vnd.exämple+json", &key_a());
        assert_eq!(
            b64::encode(&envelope.signatures[0].sig),
            "xmSk/ug66ysT7ayhkCIjhAq42zgZXSsEWuzUaNL7w2eGAdF/NU6/fRXPtmfN+5DNSAs5/i2lUnHjbbjPsu0tAw=="
        );
        let envelope = Envelope::sign(Vec::new(), IN_TOTO_PAYLOAD_TYPE, &key_a());
        assert_eq!(
            b64::encode(&envelope.signatures[0].sig),
            "gSggCAaTLTYyRH6FIDBem6meyIynsYy8RTHVzwx9tnTb7Bg/1jMWnuVgI/gffqmbsC2VX5/jHfkkDqsj7CDbDg=="
        );
    }

    #[test]
    fn url_safe_base64_and_no_keyid_are_read() {
        let json = r#"{"payload":"-_-_Pj8=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"P-_KHICeR7tI6S_YyejJTRtrXhcQyQ2LYPaL8h90KjC9qN8HU_svOQ6TuDOT1HIrsGW886DbWNWcCmX5twLrAw=="}],"extra":1}"#;
        let envelope = Envelope::from_json(json).unwrap();
        assert_eq!(envelope.payload, [0xfb, 0xff, 0xbf, 0x3e, 0x3f]);
        let keys = [key_a().public()];
        assert!(envelope.signed_by(&keys, |k| k).is_some());
    }

    #[test]
    fn a_changed_type_payload_or_key_does_not_verify() {
        let envelope = Envelope::sign(BODY.to_vec(), IN_TOTO_PAYLOAD_TYPE, &key_a());
        let a = [key_a().public()];
        let b = [key_b().public()];
        assert!(envelope.signed_by(&a, |k| k).is_some());
        assert!(envelope.signed_by(&b, |k| k).is_none());
        let mut other = envelope.clone();
        other.payload_type = "application/vnd.example.other+json".to_owned();
        assert!(other.signed_by(&a, |k| k).is_none());
        let mut other = envelope.clone();
        other.payload.push(b' ');
        assert!(other.signed_by(&a, |k| k).is_none());
        let mut other = envelope.clone();
        other.signatures[0].sig.pop();
        assert!(other.signed_by(&a, |k| k).is_none(), "63 bytes");
        // A wrong key id is only a hint: the right key is still found.
        let mut other = envelope;
        other.signatures[0].keyid = "nonsense".to_owned();
        assert!(other.signed_by(&a, |k| k).is_some());
    }

    #[test]
    fn json_round_trips_and_bad_json_is_named() {
        let envelope = Envelope::sign(BODY.to_vec(), IN_TOTO_PAYLOAD_TYPE, &key_a());
        let json = envelope.to_json();
        assert!(!json.contains('\n'));
        assert_eq!(Envelope::from_json(&json).unwrap(), envelope);
        assert!(matches!(
            Envelope::from_json("{}"),
            Err(EnvelopeError::Json(_))
        ));
        assert!(matches!(
            Envelope::from_json(r#"{"payload":"!!","payloadType":"x","signatures":[]}"#),
            Err(EnvelopeError::Base64("payload"))
        ));
        assert!(matches!(
            Envelope::from_json(r#"{"payload":"","payloadType":"x","signatures":[{"keyid":"k"}]}"#),
            Err(EnvelopeError::Json(_))
        ));
    }
}
