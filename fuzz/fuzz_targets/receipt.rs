//! A receipt on disk, edited any way: classification never panics, and it
//! is `present` only for a receipt that says what the genuine one says
//! (a valid MAC by this key over the same contents).
#![no_main]

use std::sync::OnceLock;

use camino::Utf8PathBuf;
use libfuzzer_sys::fuzz_target;
use orcho_receipts::{ReceiptKey, ReceiptStatus, ReceiptStore, VerificationContract, Verifier};

struct Fixture {
    _tmp: tempfile::TempDir,
    verifier: Verifier,
    latest: Utf8PathBuf,
    genuine: serde_json::Value,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let checkout = Utf8PathBuf::try_from(tmp.path().to_owned()).expect("UTF-8");
        orcho_core::fs::write_atomic(&checkout.join("lib.rs"), b"pub fn f() {}\n").expect("a file");
        let contract: VerificationContract =
            serde_json::from_str(r#"{"commands": [{"name": "test", "argv": ["true"]}]}"#)
                .expect("the contract");
        let store = ReceiptStore::new(checkout.join(".orcho")).with_key(ReceiptKey::from_bytes([9; 32]));
        let verifier = Verifier::new(contract, &checkout, store).expect("a verifier");
        verifier
            .run_command(&"test".parse().expect("a name"), None)
            .expect("the genuine receipt");
        let latest = checkout.join(".orcho/receipts/test/latest.json");
        let genuine = serde_json::from_slice(&std::fs::read(&latest).expect("the receipt"))
            .expect("JSON");
        Fixture {
            _tmp: tmp,
            verifier,
            latest,
            genuine,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    orcho_core::fs::write_atomic(&f.latest, data).expect("the edited receipt");
    let Ok(all) = f.verifier.classify() else {
        return;
    };
    if all.iter().any(|c| matches!(c.status, ReceiptStatus::Present)) {
        let read: serde_json::Value =
            serde_json::from_slice(data).expect("a present receipt is JSON");
        assert_eq!(read, f.genuine, "an edited receipt was classified present");
    }
});
