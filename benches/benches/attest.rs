//! Checking a commit's attestations beside raw Ed25519 verification of the
//! same bytes, measured in the same run.
//!
//! - `orcho check, 1000 envelopes`: a note of 1,000 DSSE envelopes (one
//!   line each, every one about its own tree) read, each envelope decoded,
//!   its signature verified (strict), its in-toto statement parsed, and
//!   the required command decided: what `orcho status --commit` does with a
//!   note once git has given it.
//! - `ed25519-dalek verify_strict, 1000 signatures`: the same 1,000 PAE
//!   messages and signatures, already decoded, verified with
//!   `ed25519-dalek` and nothing else. Target: at most 1.3x.

use std::hint::black_box;

use criterion::Criterion;
use orcho::{
    attest::{AttestedState, Note, SigningKey, Subject, TrustedKey, attest, check, pae},
    receipts::{CommandName, ReceiptStore, VerificationContract, Verifier, exec::BaseEnv},
};
use orcho_benches::{Ratio, report_ratios};

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let dir = camino::Utf8PathBuf::try_from(tmp.path().to_owned()).expect("UTF-8");
    let contract: VerificationContract = serde_json::from_str(
        r#"{"commands":[{"name":"test","argv":["sh","-c","echo 'test result: ok. 3 passed; 0 failed'"]}],"required":["test"]}"#,
    )
    .expect("a contract");
    let verifier = Verifier::new(
        contract.clone(),
        &dir,
        ReceiptStore::new(dir.join(".orcho")),
    )
    .expect("a verifier")
    .with_base_env(BaseEnv::inherit());
    let receipt = verifier
        .run_command(&"test".parse::<CommandName>().expect("a name"), None)
        .expect("a receipt");
    let key = SigningKey::from_seed([11; 32]);
    let trusted = [TrustedKey::new("ci", key.public())];
    let envelopes: Vec<_> = (0..1000u32)
        .map(|i| {
            let tree = format!("{i:040x}");
            attest(&receipt, None, &Subject::new(tree, None), &key)
        })
        .collect();
    let note: String = envelopes.iter().map(|e| e.to_json() + "\n").collect();
    let tree = format!("{:040x}", 999);
    let raw_key = ed25519_dalek::VerifyingKey::from_bytes(key.public().as_bytes()).expect("a key");
    let raw: Vec<(Vec<u8>, ed25519_dalek::Signature)> = envelopes
        .iter()
        .map(|e| {
            let sig: [u8; 64] = e.signatures[0].sig.as_slice().try_into().expect("64 bytes");
            (
                pae(&e.payload_type, &e.payload),
                ed25519_dalek::Signature::from_bytes(&sig),
            )
        })
        .collect();
    let decided = check(
        &contract,
        &tree,
        &[Note::new("c", note.as_bytes())],
        &trusted,
    );
    assert_eq!(decided[0].state, AttestedState::Present);

    let mut group = c.benchmark_group("attest");
    group.sample_size(20);
    group.bench_function("orcho check, 1000 envelopes", |b| {
        b.iter(|| {
            check(
                &contract,
                &tree,
                &[Note::new("c", black_box(note.as_bytes()))],
                &trusted,
            )
        })
    });
    group.bench_function("ed25519-dalek verify_strict, 1000 signatures", |b| {
        b.iter(|| {
            raw.iter()
                .all(|(message, sig)| raw_key.verify_strict(black_box(message), sig).is_ok())
        })
    });
    group.finish();
    c.final_summary();

    report_ratios(&[Ratio {
        group: "attest",
        subject: "orcho check, 1000 envelopes",
        baseline: "ed25519-dalek verify_strict, 1000 signatures",
        target: 1.30,
    }]);
}
