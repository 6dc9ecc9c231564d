//! Attestations on real git repositories: signed, noted, read back in two
//! processes, and checked — and every way a note can lie, refused.

use std::process::Command;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_attest::{
    AttestedState, Bundle, Envelope, IN_TOTO_PAYLOAD_TYPE, MAX_NOTE_BYTES, Note, SigningKey,
    Subject, TrustedKey, attest, check,
    notes::{NOTES_REF, Repo},
};
use orcho_receipts::{
    CommandName, CommandReceipt, ReceiptStore, VerificationContract, Verifier, exec::BaseEnv,
};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

#[expect(
    clippy::disallowed_methods,
    reason = "tests set up repositories with git directly"
)]
fn git(dir: &Utf8Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_owned())
}

const CONTRACT: &str = r#"
commands:
  - name: test
    argv: [sh, -c, "grep -q answer lib.txt && echo 'test result: ok. 2 passed; 0 failed'"]
  - name: lint
    argv: [sh, -c, "echo 'test result: ok. 0 passed; 0 failed'"]
  - name: broken
    argv: [sh, -c, "exit 4"]
required: [test, lint, broken]
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    root: Utf8PathBuf,
    key: SigningKey,
    contract: VerificationContract,
}

impl Fixture {
    fn new() -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let root = Utf8PathBuf::try_from(dir.path().join("repo"))?;
        std::fs::create_dir_all(&root)?;
        git(&root, &["init", "-q", "-b", "main"])?;
        orcho_core::fs::write_atomic(&root.join("lib.txt"), b"the answer\n")?;
        orcho_core::fs::write_atomic(&root.join(".gitignore"), b".orcho/\n")?;
        git(&root, &["add", "."])?;
        git(&root, &["commit", "-q", "-m", "first"])?;
        Ok(Self {
            _dir: dir,
            root,
            key: SigningKey::from_seed([3; 32]),
            contract: serde_yaml::from_str(CONTRACT)?,
        })
    }

    fn trusted(&self) -> Vec<TrustedKey> {
        vec![TrustedKey::new("ci", self.key.public())]
    }

    fn receipts(&self) -> Result<Vec<CommandReceipt>> {
        let verifier = Verifier::new(
            self.contract.clone(),
            &self.root,
            ReceiptStore::new(self.root.join(".orcho")),
        )?
        .with_base_env(BaseEnv::inherit());
        let mut receipts = Vec::new();
        for name in ["test", "lint", "broken"] {
            receipts.push(verifier.run_command(&name.parse::<CommandName>()?, None)?);
        }
        Ok(receipts)
    }

    /// Attests every receipt on HEAD with `key`; returns the commit.
    fn attest_head(&self, key: &SigningKey) -> Result<String> {
        let repo = Repo::new(&self.root);
        let at = repo.at("HEAD", "orcho.yaml")?;
        let mut bundle = Bundle::parse(at.note.as_deref().unwrap_or_default())?;
        let subject = Subject::new(at.resolved.tree.clone(), Some(at.resolved.commit.clone()));
        for receipt in self.receipts()? {
            bundle.merge(&attest(&receipt, None, &subject, key), &key.public());
        }
        repo.write_note(&at.resolved.commit, &bundle.to_text())?;
        Ok(at.resolved.commit)
    }

    fn states(&self, rev: &str) -> Result<Vec<(AttestedState, String)>> {
        let repo = Repo::new(&self.root);
        let at = repo.at(rev, "orcho.yaml")?;
        let mut notes = vec![Note::new(
            at.resolved.commit.clone(),
            at.note.as_deref().unwrap_or_default(),
        )];
        notes.extend(repo.ancestor_notes(&at.resolved.commit, 10)?);
        Ok(
            check(&self.contract, &at.resolved.tree, &notes, &self.trusted())
                .into_iter()
                .map(|c| (c.state, c.reason))
                .collect(),
        )
    }

    fn note_text(&self) -> Result<String> {
        git(&self.root, &["notes", "--ref", NOTES_REF, "show", "HEAD"])
    }

    fn replace_note(&self, text: &str) -> Result {
        let commit = git(&self.root, &["rev-parse", "HEAD"])?;
        Repo::new(&self.root).write_note(&commit, text)?;
        Ok(())
    }
}

#[test]
fn a_clean_commit_is_proven_from_its_note_alone() -> Result {
    let f = Fixture::new()?;
    f.attest_head(&f.key)?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Present, "{states:?}");
    assert_eq!(states[1].0, AttestedState::Vacuous, "{states:?}");
    assert_eq!(states[2].0, AttestedState::Failed, "{states:?}");
    assert!(states[2].1.contains("exited with code 4"), "{states:?}");
    // One envelope per line, one per command.
    assert_eq!(f.note_text()?.lines().count(), 3);
    // Attesting again keeps one per command and key.
    f.attest_head(&f.key)?;
    assert_eq!(f.note_text()?.lines().count(), 3);
    // Another key's attestations sit beside them.
    f.attest_head(&SigningKey::from_seed([4; 32]))?;
    assert_eq!(f.note_text()?.lines().count(), 6);
    assert_eq!(f.states("HEAD")?[0].0, AttestedState::Present);
    Ok(())
}

#[test]
fn an_untrusted_key_proves_nothing() -> Result {
    let f = Fixture::new()?;
    f.attest_head(&SigningKey::from_seed([9; 32]))?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Invalid);
    assert!(
        states[0].1.contains("`trust.keys` does not list"),
        "{states:?}"
    );
    Ok(())
}

#[test]
fn a_flipped_byte_is_invalid_never_present() -> Result {
    let f = Fixture::new()?;
    f.attest_head(&f.key)?;
    let text = f.note_text()?;
    let first = text.lines().next().ok_or("no line")?;
    let mut envelope = Envelope::from_json(first)?;
    // Flip one byte of the signed statement: PASSED becomes FAILED-free
    // text of the same length, or any other change.
    let at = envelope.payload.len() / 2;
    envelope.payload[at] ^= 0x01;
    f.replace_note(&(envelope.to_json() + "\n"))?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Invalid, "{states:?}");
    assert!(states[0].1.contains("does not verify"), "{states:?}");
    Ok(())
}

#[test]
fn a_new_commit_is_stale_naming_the_attested_one() -> Result {
    let f = Fixture::new()?;
    let attested = f.attest_head(&f.key)?;
    orcho_core::fs::write_atomic(&f.root.join("lib.txt"), b"the answer, changed\n")?;
    git(&f.root, &["commit", "-q", "-am", "second"])?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Stale, "{states:?}");
    assert!(states[0].1.contains(&attested[..12]), "{states:?}");
    // The attested commit itself is still proven.
    assert_eq!(f.states(&attested)?[0].0, AttestedState::Present);
    Ok(())
}

#[test]
fn a_changed_declaration_is_stale() -> Result {
    let mut f = Fixture::new()?;
    f.attest_head(&f.key)?;
    f.contract = serde_yaml::from_str(
        &CONTRACT.replace("echo 'test result: ok. 2", "echo 'test result:  ok. 2"),
    )?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Stale, "{states:?}");
    assert!(states[0].1.contains("declared differently"), "{states:?}");
    Ok(())
}

#[test]
fn bad_notes_are_invalid_with_the_reason() -> Result {
    let f = Fixture::new()?;
    let statement = br#"{"_type":"https://in-toto.io/Statement/v1"}"#.to_vec();
    let not_a_statement = Envelope::sign(statement, IN_TOTO_PAYLOAD_TYPE, &f.key).to_json();
    let other_type = Envelope::sign(b"{}".to_vec(), "text/plain", &f.key).to_json();
    let cases: Vec<(String, &str)> = vec![
        ("this is another tool's note\n".to_owned(), "not a DSSE envelope"),
        (r#"{"payload":"eyJ"#.to_owned(), "not a DSSE envelope"),
        (
            r#"{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"keyid":"","sig":"AAAA"}]}"#.to_owned(),
            "a signature of 3 bytes",
        ),
        (
            r#"{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}"#.to_owned(),
            "no signature",
        ),
        (not_a_statement, "not an in-toto statement"),
        (other_type, "is not an in-toto statement"),
    ];
    for (note, reason) in cases {
        f.replace_note(&note)?;
        let states = f.states("HEAD")?;
        for (state, why) in &states {
            assert_eq!(*state, AttestedState::Invalid, "{note}: {states:?}");
            assert!(why.contains(reason), "{note}: {why}");
        }
    }
    // A note over the cap is refused whole.
    let huge = "x".repeat(MAX_NOTE_BYTES + 1);
    f.replace_note(&huge)?;
    let states = f.states("HEAD")?;
    assert!(
        states
            .iter()
            .all(|(s, why)| *s == AttestedState::Invalid && why.contains("cap"))
    );
    Ok(())
}

#[test]
fn duplicates_and_junk_beside_a_good_line_still_prove() -> Result {
    let f = Fixture::new()?;
    f.attest_head(&f.key)?;
    let text = f.note_text()?;
    let doubled = format!("{text}\n{text}\nnot json at all\n");
    f.replace_note(&doubled)?;
    let states = f.states("HEAD")?;
    assert_eq!(states[0].0, AttestedState::Present, "{states:?}");
    Ok(())
}

#[test]
fn a_commit_with_no_note_is_missing() -> Result {
    let f = Fixture::new()?;
    let states = f.states("HEAD")?;
    assert!(
        states.iter().all(|(s, _)| *s == AttestedState::Missing),
        "{states:?}"
    );
    assert!(Repo::new(&f.root).at("no-such-rev", "orcho.yaml").is_err());
    assert!(Repo::new(&f.root).at("--all", "orcho.yaml").is_err());
    Ok(())
}

#[test]
fn a_forged_line_claiming_the_key_cannot_push_the_real_one_out() -> Result {
    let f = Fixture::new()?;
    f.attest_head(&f.key)?;
    // A line claiming to be the key's, about `test`, finishing in the far
    // future, but signed by someone else.
    let text = f.note_text()?;
    let first = Envelope::from_json(text.lines().next().ok_or("no line")?)?;
    let forged_payload =
        String::from_utf8(first.payload)?.replace("\"finished_at\":\"2", "\"finished_at\":\"9");
    let mut forged = Envelope::sign(
        forged_payload.into_bytes(),
        IN_TOTO_PAYLOAD_TYPE,
        &SigningKey::from_seed([5; 32]),
    );
    forged.signatures[0].keyid = f.key.public().keyid();
    f.replace_note(&format!("{}\n{text}\n", forged.to_json()))?;
    f.attest_head(&f.key)?;
    assert_eq!(f.states("HEAD")?[0].0, AttestedState::Present);
    assert!(
        f.note_text()?.contains(&forged.to_json()),
        "other lines are kept"
    );
    Ok(())
}
