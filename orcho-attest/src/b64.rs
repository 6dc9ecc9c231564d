//! Base64 as DSSE has it: written standard and padded; read standard or
//! URL-safe, padded or not.

use base64::{
    Engine as _,
    engine::general_purpose::{STANDARD, STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT},
};

pub(crate) fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    STANDARD_PAD_INDIFFERENT
        .decode(text)
        .or_else(|_| URL_SAFE_PAD_INDIFFERENT.decode(text))
        .ok()
}
