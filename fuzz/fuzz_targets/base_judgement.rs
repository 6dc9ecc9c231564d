//! A change judged by its base, whatever the two profiles and the note
//! hold: comparing the profiles and judging never panic, a key only the
//! change trusts never proves a command, and what comes out present is
//! an attestation of the base's declaration.
//!
//! The input is the base's profile, the change's profile and a payload,
//! split at the first two `\0` bytes. The payload is signed twice: by a key
//! both profiles may trust (`ci`, listed by the base) and by one only the
//! change can add (`mallory`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use orcho_attest::{
    AttestedState, Envelope, IN_TOTO_PAYLOAD_TYPE, Judge, Note, NoteOf, SigningKey, Statement,
    TrustedKey,
};
use orcho_profile::{Profile, proof_edits};

const TREE: &str = "6541054bedac0c2bd0c0b38db6b0fbd3d3e3b0a1";

fn keys() -> &'static (SigningKey, SigningKey) {
    static KEYS: OnceLock<(SigningKey, SigningKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        (
            SigningKey::generate().expect("randomness"),
            SigningKey::generate().expect("randomness"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(base), Some(change), Some(payload)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let (Ok(base), Ok(change)) = (Profile::from_yaml_slice(base), Profile::from_yaml_slice(change))
    else {
        return;
    };
    let edits = proof_edits(&base, &change);
    for edit in &edits {
        assert!(!edit.what.is_empty());
    }
    let (ci, mallory) = keys();
    let base_contract = base.verification.clone().unwrap_or_default();
    let change_contract = change.verification.clone().unwrap_or_default();
    let base_keys = vec![TrustedKey::new("ci", ci.public())];
    let change_keys = vec![
        TrustedKey::new("ci", ci.public()),
        TrustedKey::new("mallory", mallory.public()),
    ];
    let judge = Judge::by_base(&base_contract, &base_keys, &change_contract, &change_keys);
    // Signed by the key only the change trusts: never present.
    let forged = Envelope::sign(payload.to_vec(), IN_TOTO_PAYLOAD_TYPE, mallory);
    let note = forged.to_json() + "\n";
    let judged = judge.check(TREE, &[Note::of(NoteOf::Tree, TREE, note.as_bytes())]);
    assert!(
        judged.commands.iter().all(|c| c.state != AttestedState::Present),
        "a key only the change trusts proved a command"
    );
    // Signed by the base's key: present only for the base's declaration.
    let signed = Envelope::sign(payload.to_vec(), IN_TOTO_PAYLOAD_TYPE, ci);
    let note = signed.to_json() + "\n";
    let judged = judge.check(TREE, &[Note::new("0".repeat(40), note.as_bytes())]);
    for command in judged.commands.iter().filter(|c| c.state == AttestedState::Present) {
        let statement = Statement::from_payload(payload).expect("present: a statement");
        let declared = base_contract
            .command(&command.command)
            .expect("required by the base: declared by it");
        assert_eq!(
            statement.orcho.spec_digest,
            orcho_receipts::spec_digest(declared).to_string()
        );
        assert_eq!(statement.subject.tree, TREE);
    }
});
