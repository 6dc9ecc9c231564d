//! A commit's note, whatever its bytes: reading its lines as DSSE
//! envelopes and in-toto statements and checking them never panics.
//!
//! - As a whole note: nothing comes out present, since no input can carry
//!   a signature by the trusted key (its seed is this process's secret).
//! - As a payload the trusted key signs: present only when the payload is
//!   a Statement about the checked tree that passed.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use orcho_attest::{
    Envelope, IN_TOTO_PAYLOAD_TYPE, SigningKey, Statement, TestResult, TrustedKey,
};

const TREE: &str = "6541054bedac0c2bd0c0b38db6b0fbd3d3e3b0a1";

fn keys() -> &'static (SigningKey, Vec<TrustedKey>) {
    static KEYS: OnceLock<(SigningKey, Vec<TrustedKey>)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let key = SigningKey::generate().expect("randomness");
        let trusted = vec![TrustedKey::new("ci", key.public())];
        (key, trusted)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (key, trusted) = keys();
    if mode % 2 == 0 {
        let present = orcho_attest::fuzzing::check_note(rest, TREE, trusted);
        assert!(!present, "a note no trusted key signed proved a command");
        return;
    }
    let envelope = Envelope::sign(rest.to_vec(), IN_TOTO_PAYLOAD_TYPE, key);
    let note = envelope.to_json() + "\n";
    if orcho_attest::fuzzing::check_note(note.as_bytes(), TREE, trusted) {
        let statement = Statement::from_payload(rest).expect("present: a statement");
        assert_eq!(statement.subject.tree, TREE);
        assert_eq!(statement.result, TestResult::Passed);
    }
});
