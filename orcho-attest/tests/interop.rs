//! Interop with an independent implementation: securesystemslib (DSSE over
//! Python's `cryptography`) verifies Orcho's envelopes, and the in-toto
//! attestation package validates its Statement and test-result predicate;
//! Orcho verifies an envelope securesystemslib signed.
//!
//! The Python side lives in a virtual environment that
//! `tests/interop/setup.sh` makes (`.ci/run` runs it). Without it, the test
//! says why and passes; with `CI=true` it fails instead.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_attest::{
    AttestedState, Envelope, IN_TOTO_PAYLOAD_TYPE, Note, PublicKey, SigningKey, Subject,
    TrustedKey, attest, check,
};
use orcho_receipts::{
    CommandName, ReceiptStore, VerificationContract, Verifier,
    exec::{self, BaseEnv, ExecRequest},
};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const TREE: &str = "6541054bedac0c2bd0c0b38db6b0fbd3d3e3b0a1";
const COMMIT: &str = "3bff3d91cbc37bc822ec4cddb087d210b0367699";

#[expect(
    clippy::disallowed_methods,
    reason = "where the test's Python is: the target directory cargo uses"
)]
fn python() -> Option<Utf8PathBuf> {
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(
        |_| Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        Utf8PathBuf::from,
    );
    let python = target.join("attest-venv/bin/python");
    python.exists().then_some(python)
}

#[expect(clippy::disallowed_methods, reason = "CI decides skip or fail")]
#[expect(clippy::print_stderr, reason = "a test that skips says why")]
fn unavailable(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("the interop test cannot run in CI: {reason}");
    }
    eprintln!("skipped: the interop test needs {reason}");
}

fn run_python(python: &Utf8Path, args: &[&str]) -> Result<(bool, String)> {
    let script = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/interop.py");
    let out = exec::run(
        &ExecRequest::new(
            [python.as_str(), script.as_str()]
                .into_iter()
                .chain(args.iter().copied()),
        )
        .envs(BaseEnv::inherit())
        .keep_stdout(1 << 20)
        .timeout(Duration::from_secs(120)),
    )?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout.kept.unwrap_or_default()),
        out.stderr.tail_lossy()
    );
    Ok((out.status.success(), text))
}

/// A real receipt of a passing command, and the contract that declares it.
fn receipt(dir: &Utf8Path) -> Result<(orcho_receipts::CommandReceipt, VerificationContract)> {
    let contract: VerificationContract = serde_json::from_str(
        r#"{"commands":[{"name":"test","argv":["sh","-c","echo 'test result: ok. 2 passed; 0 failed'"]}],"required":["test"]}"#,
    )?;
    let verifier = Verifier::new(contract.clone(), dir, ReceiptStore::new(dir.join(".orcho")))?
        .with_base_env(BaseEnv::inherit());
    Ok((
        verifier.run_command(&"test".parse::<CommandName>()?, None)?,
        contract,
    ))
}

#[test]
fn an_independent_implementation_verifies_orcho_and_orcho_verifies_it() -> Result {
    let Some(python) = python() else {
        unavailable(
            "securesystemslib in target/attest-venv: run orcho-attest/tests/interop/setup.sh",
        );
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let (receipt, contract) = receipt(&dir)?;
    let key = SigningKey::generate()?;
    let envelope = attest(
        &receipt,
        None,
        &Subject::new(TREE, Some(COMMIT.to_owned())),
        &key,
    );

    // Orcho's envelope, verified and its statement validated over there.
    let path = dir.join("envelope.json");
    orcho_core::fs::write_atomic(&path, envelope.to_json().as_bytes())?;
    let public_hex: String = key
        .public()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let keyid = key.public().keyid();
    let (ok, said) = run_python(&python, &["verify", path.as_str(), &public_hex, &keyid])?;
    assert!(ok, "{said}");
    assert!(said.contains("verified: PASSED"), "{said}");

    // A changed payload type is refused there too.
    let mut other = envelope.clone();
    other.payload_type = "application/vnd.example.other+json".to_owned();
    orcho_core::fs::write_atomic(&path, other.to_json().as_bytes())?;
    let (ok, said) = run_python(&python, &["verify", path.as_str(), &public_hex, &keyid])?;
    assert!(!ok, "a changed payload type verified: {said}");

    // The same statement, signed over there with a key of its own, is
    // proof here for a repository that trusts that key.
    let payload = dir.join("payload.json");
    orcho_core::fs::write_atomic(&payload, &envelope.payload)?;
    let signed = dir.join("signed.json");
    let (ok, said) = run_python(&python, &["sign", payload.as_str(), signed.as_str()])?;
    assert!(ok, "{said}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&signed)?)?;
    let theirs = Envelope::from_json(&doc["envelope"].to_string())?;
    assert_eq!(theirs.payload_type, IN_TOTO_PAYLOAD_TYPE);
    let hex = doc["public_hex"].as_str().ok_or("no key")?;
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
        .collect::<std::result::Result<_, _>>()?;
    let public = PublicKey::from_bytes(&bytes.as_slice().try_into()?)?;
    let trusted = [TrustedKey::new("independent", public)];
    let note = format!("{}\n", theirs.to_json());
    let states = check(
        &contract,
        TREE,
        &[Note::new(COMMIT, note.as_bytes())],
        &trusted,
    );
    assert_eq!(states[0].state, AttestedState::Present, "{states:?}");
    assert_eq!(states[0].signed_by.as_deref(), Some("independent"));
    // And not for one that trusts only Orcho's key.
    let ours = [TrustedKey::new("ours", key.public())];
    let states = check(
        &contract,
        TREE,
        &[Note::new(COMMIT, note.as_bytes())],
        &ours,
    );
    assert_eq!(states[0].state, AttestedState::Invalid, "{states:?}");
    Ok(())
}
