//! Entry points for the fuzz targets (`fuzz/`), behind the `fuzzing`
//! feature: a note's bytes through reading and checking. Not an API.

use orcho_receipts::VerificationContract;

use crate::{AttestedState, Note, TrustedKey, check};

/// Checks `bytes` as the note of a commit whose tree is `tree`, for a
/// contract requiring `test`, trusting `trusted`: whether any command came
/// out present.
pub fn check_note(bytes: &[u8], tree: &str, trusted: &[TrustedKey]) -> bool {
    let contract: VerificationContract = serde_json::from_str(
        r#"{"commands":[{"name":"test","argv":["true"]}],"required":["test"]}"#,
    )
    .unwrap_or_default();
    check(
        &contract,
        tree,
        &[Note::new("0".repeat(40), bytes)],
        trusted,
    )
    .iter()
    .any(|c| c.state == AttestedState::Present)
}
