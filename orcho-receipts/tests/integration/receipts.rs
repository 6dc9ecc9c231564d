//! Running declared commands, writing receipts, and classifying them.

use std::{sync::Arc, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{Digest, FixedClock};
use orcho_receipts::{
    COMMAND_RECEIPT_CONTEXT, CommandName, Failure, InvalidReason, LoadedReceipt, NextAction,
    ReceiptKey, ReceiptStatus, ReceiptStore, StaleReason, VerificationContract, Verifier,
    exec::BaseEnv,
};
use proptest::prelude::*;

use crate::{Result, Temp, temp, write};

pub(crate) const CONTRACT: &str = r#"
environments:
  - name: default
    dependencies:
      - { name: lib, path: ../lib }
    assertions:
      - file_exists: Cargo.toml
      - path_exists: scripts
commands:
  - name: test
    argv: [sh, -c, "test -f src/lib.rs && echo ok"]
    timeout: 1m
  - name: lint
    argv: [sh, -c, "echo 'warning: lint' >&2; exit 1"]
  - name: slow
    argv: [sh, -c, "trap '' TERM; sleep 1000"]
    timeout: 200ms
  - name: missing-tool
    argv: [no-such-tool-anywhere]
  - name: formatter
    argv: [sh, -c, "echo '// formatted' >> src/lib.rs"]
  - name: secretive
    argv: [sh, -c, "echo \"using $TOKEN\"; echo \"$TOKEN\" >&2"]
    secrets: [TOKEN]
required: [test, lint]
"#;

pub(crate) struct Fixture {
    pub(crate) _dir: Temp,
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) lib: Utf8PathBuf,
    pub(crate) clock: Arc<FixedClock>,
}

pub(crate) fn fixture() -> Result<Fixture> {
    let dir = temp()?;
    let checkout = dir.path.join("checkout");
    let lib = dir.path.join("lib");
    write(
        &checkout,
        "Cargo.toml",
        "[package]\nname = \"demo\"\n",
        0o644,
    )?;
    write(
        &checkout,
        "src/lib.rs",
        "pub fn answer() -> u32 { 42 }\n",
        0o644,
    )?;
    write(&checkout, "scripts/check.sh", "#!/bin/sh\n", 0o755)?;
    write(&lib, "lib.rs", "pub fn helper() {}\n", 0o644)?;
    Ok(Fixture {
        _dir: dir,
        checkout,
        lib,
        clock: Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?)),
    })
}

/// A base environment that is the same on every machine, for snapshots.
pub(crate) fn fixed_env() -> BaseEnv {
    BaseEnv::empty().with("PATH", "/usr/bin:/bin")
}

impl Fixture {
    pub(crate) fn store(&self) -> ReceiptStore {
        ReceiptStore::new(self.checkout.join(".orcho"))
    }

    pub(crate) fn verifier_with(&self, contract: &str, store: ReceiptStore) -> Result<Verifier> {
        let contract: VerificationContract = serde_yaml::from_str(contract)?;
        Ok(Verifier::new(contract, &self.checkout, store)?
            .with_clock(Arc::clone(&self.clock))
            .with_base_env(fixed_env())
            .with_grace(Duration::from_millis(100))
            .with_secret("TOKEN", "hunter2-very-secret"))
    }

    pub(crate) fn verifier(&self) -> Result<Verifier> {
        self.verifier_with(CONTRACT, self.store())
    }

    pub(crate) fn latest(&self, command: &str) -> Utf8PathBuf {
        self.checkout
            .join(".orcho/receipts")
            .join(command)
            .join("latest.json")
    }
}

pub(crate) fn name(s: &str) -> CommandName {
    s.parse().expect("valid name")
}

pub(crate) fn status(v: &Verifier, command: &str) -> Result<ReceiptStatus> {
    let all = v.classify()?;
    Ok(all
        .into_iter()
        .find(|c| c.command.as_str() == command)
        .ok_or("not classified")?
        .status)
}

fn stale_reasons(s: ReceiptStatus) -> Vec<StaleReason> {
    match s {
        ReceiptStatus::Stale(reasons) => reasons,
        other => panic!("expected stale, got {other}"),
    }
}

#[test]
fn a_passing_run_is_present_with_history_and_logs() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    assert_eq!(status(&v, "test")?, ReceiptStatus::Missing);
    let receipt = v.run_command(&name("test"), None)?;
    assert!(receipt.passed());
    assert_eq!(receipt.stdout.tail, "ok\n");
    assert_eq!(receipt.subject_before, receipt.subject_after);
    assert_eq!(receipt.assertions.len(), 2);
    assert!(receipt.assertions.iter().all(|a| a.passed));
    assert_eq!(receipt.dependencies.len(), 1);
    assert!(receipt.dependencies[0].fingerprint.is_some());
    assert_eq!(status(&v, "test")?, ReceiptStatus::Present);

    let store = f.store();
    assert_eq!(store.history(&name("test"))?.len(), 1);
    let log = receipt.stdout.path.as_ref().ok_or("no log")?;
    let bytes = std::fs::read(store.dir().join(log))?;
    assert_eq!(bytes, b"ok\n");
    assert_eq!(
        receipt.stdout.digest,
        Some(Digest::derive("orcho command log v1", &bytes))
    );
    Ok(())
}

#[test]
fn a_command_whose_runner_ran_no_test_is_vacuous_unless_allowed() -> Result {
    let f = fixture()?;
    let contract = r#"
commands:
  - name: none
    argv: [sh, -c, "echo 'running 0 tests'; echo 'test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s'"]
  - name: empty-ok
    argv: [sh, -c, "echo '== no tests ran in 0.01s =='"]
    allow_empty: true
  - name: some
    argv: [sh, -c, "echo 'test result: ok. 0 passed; 0 failed'; echo '=== 2 passed in 0.01s ===' >&2"]
  - name: plain
    argv: [sh, -c, "echo fine"]
required: [none, empty-ok, some, plain]
"#;
    let v = f.verifier_with(contract, f.store())?;
    for command in ["none", "empty-ok", "some", "plain"] {
        v.run_command(&name(command), None)?;
    }
    assert_eq!(
        status(&v, "none")?,
        ReceiptStatus::Vacuous {
            runners: vec!["cargo test".to_owned()]
        }
    );
    assert_eq!(
        status(&v, "none")?.to_string(),
        "vacuous: exit 0, but no test ran (cargo test reported none)"
    );
    assert_eq!(status(&v, "none")?.next_action(), Some(NextAction::Fix));
    assert_eq!(status(&v, "empty-ok")?, ReceiptStatus::Present);
    assert_eq!(
        status(&v, "some")?,
        ReceiptStatus::Present,
        "stdout and stderr add up"
    );
    assert_eq!(
        status(&v, "plain")?,
        ReceiptStatus::Present,
        "no runner: no count"
    );
    let summary = v.readiness()?;
    assert!(!summary.is_ready());
    // The count is kept in the receipt, sealed with it.
    let LoadedReceipt::Valid(receipt) = f.store().load_command_receipt(&name("some")) else {
        return Err("not valid".into());
    };
    let tests = receipt.tests.ok_or("no count")?;
    assert_eq!((tests.passed, tests.failed), (2, 0));
    assert_eq!(tests.runners, ["cargo test", "pytest"]);
    Ok(())
}

#[test]
fn a_failure_names_the_first_tests_that_failed() -> Result {
    let f = fixture()?;
    let contract = r#"
commands:
  - name: test
    argv: [sh, -c, "echo 'test parse::empty ... FAILED'; echo 'test parse::list ... ok'; echo 'test result: FAILED. 1 passed; 1 failed'; exit 101"]
required: [test]
"#;
    let v = f.verifier_with(contract, f.store())?;
    v.run_command(&name("test"), None)?;
    assert_eq!(
        status(&v, "test")?.reason(),
        "exited with code 101 (failing: `parse::empty`)"
    );
    Ok(())
}

#[test]
fn a_deleted_receipt_is_missing_and_says_when_it_last_ran() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    std::fs::remove_file(f.latest("test"))?;
    let s = status(&v, "test")?;
    assert!(
        matches!(s, ReceiptStatus::Deleted { last_ran: Some(_) }),
        "{s}"
    );
    assert_eq!(s.as_str(), "missing");
    assert_eq!(
        s.to_string(),
        "missing: no receipt: it was deleted (it last ran at 2026-11-21T12:00:00.000Z)"
    );
    assert_eq!(s.next_action(), Some(NextAction::Rerun));
    Ok(())
}

#[test]
fn history_is_immutable_and_grows() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    let store = f.store();
    let first = store.history(&name("test"))?;
    let first_bytes = std::fs::read(&first[0])?;
    // Same clock instant: the second run still gets its own history file.
    v.run_command(&name("test"), None)?;
    f.clock.advance(Duration::from_secs(1));
    v.run_command(&name("test"), None)?;
    let all = store.history(&name("test"))?;
    assert_eq!(all.len(), 3);
    assert_eq!(std::fs::read(&first[0])?, first_bytes);
    for path in &all {
        assert!(matches!(
            store.load_command_receipt_file(path, &name("test")),
            LoadedReceipt::Valid(_)
        ));
    }
    Ok(())
}

#[test]
fn a_failure_followed_by_a_change_says_to_run_it_again() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("lint"), None)?;
    write(
        &f.checkout,
        "src/lib.rs",
        "pub fn answer() -> u32 { 43 }\n",
        0o644,
    )?;
    let s = status(&v, "lint")?;
    // Still failed, so still blocking; but the change may be the fix.
    assert!(matches!(s, ReceiptStatus::Failed { .. }), "{s}");
    assert_eq!(s.next_action(), Some(NextAction::Rerun));
    assert_eq!(
        s.reason(),
        "exited with code 1; and it is stale: the subject changed since it ran: `src/lib.rs` changed"
    );
    Ok(())
}

#[test]
fn each_failure_is_distinguishable() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    for (command, expected) in [
        ("lint", "exited with code 1"),
        ("slow", "timed out after 200ms"),
        ("missing-tool", "could not be started: program not found"),
    ] {
        v.run_command(&name(command), None)?;
        let s = status(&v, command)?;
        assert_eq!(s.next_action(), Some(NextAction::Fix));
        assert_eq!(s.reason(), expected);
    }
    assert!(matches!(
        status(&v, "slow")?,
        ReceiptStatus::Failed {
            failure: Failure::Timeout { .. },
            ..
        }
    ));
    Ok(())
}

#[test]
fn a_failed_environment_assertion_fails_the_receipt() -> Result {
    let f = fixture()?;
    std::fs::remove_file(f.checkout.join("Cargo.toml"))?;
    let v = f.verifier()?;
    let env = v.check_environment(&"default".parse()?)?;
    assert!(!env.passed());
    insta::assert_snapshot!(format!("{}: {}", env.results[0].description, env.results[0].detail), @"file_exists `Cargo.toml`: not found (entity not found)");
    let receipt = v.run_command(&name("test"), None)?;
    assert!(receipt.exit.success(), "the command itself passed");
    match status(&v, "test")? {
        ReceiptStatus::Failed {
            failure: Failure::AssertionFailed { assertion, .. },
            ..
        } => assert_eq!(assertion, "file_exists `Cargo.toml`"),
        other => panic!("expected a failed assertion, got {other}"),
    }
    Ok(())
}

#[test]
fn stale_by_edit_new_file_deleted_file_and_mode_change() -> Result {
    type Mutation = fn(&Fixture) -> Result;
    let cases: [(&str, Mutation); 4] = [
        ("edit", |f| {
            write(
                &f.checkout,
                "src/lib.rs",
                "pub fn answer() -> u32 { 41 }\n",
                0o644,
            )
        }),
        ("new file", |f| {
            write(&f.checkout, "src/new.rs", "\n", 0o644)
        }),
        ("deleted file", |f| {
            Ok(std::fs::remove_file(f.checkout.join("scripts/check.sh"))?)
        }),
        ("mode change", |f| {
            write(&f.checkout, "scripts/check.sh", "#!/bin/sh\n", 0o644)
        }),
    ];
    for (what, mutate) in cases {
        let f = fixture()?;
        let v = f.verifier()?;
        v.run_command(&name("test"), None)?;
        assert_eq!(status(&v, "test")?, ReceiptStatus::Present, "{what}");
        mutate(&f)?;
        let reasons = stale_reasons(status(&v, "test")?);
        assert!(
            matches!(reasons.as_slice(), [StaleReason::Subject { recorded, current, .. }] if recorded != current),
            "{what}: {reasons:?}"
        );
        assert_eq!(status(&v, "test")?.next_action(), Some(NextAction::Rerun));
    }
    Ok(())
}

#[test]
fn stale_by_a_moved_dependency_checkout() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    // The dependency checkout moves to other contents (a new commit).
    write(&f.lib, "lib.rs", "pub fn helper() { todo() }\n", 0o644)?;
    let reasons = stale_reasons(status(&v, "test")?);
    assert_eq!(reasons.len(), 1);
    insta::assert_snapshot!(reasons[0], @"dependency `lib` changed: `lib.rs` changed");

    // The dependency is moved to another path: the environment changed, and
    // the dependency as recorded is gone from where it was.
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    std::fs::rename(&f.lib, f.lib.with_file_name("lib-moved"))?;
    let reasons = stale_reasons(status(&v, "test")?);
    insta::assert_snapshot!(reasons.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "), @"dependency `lib` is gone");
    let moved = CONTRACT.replace("../lib", "../lib-moved");
    let v = f.verifier_with(&moved, f.store())?;
    let reasons = stale_reasons(status(&v, "test")?);
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, StaleReason::Environment { .. })),
        "{reasons:?}"
    );
    Ok(())
}

#[test]
fn stale_by_a_changed_argv() -> Result {
    let f = fixture()?;
    f.verifier()?.run_command(&name("test"), None)?;
    let changed = CONTRACT.replace(
        "test -f src/lib.rs && echo ok",
        "test -f src/lib.rs && echo fine",
    );
    let v = f.verifier_with(&changed, f.store())?;
    let reasons = stale_reasons(status(&v, "test")?);
    assert!(
        matches!(reasons.as_slice(), [StaleReason::CommandSpec { .. }]),
        "{reasons:?}"
    );
    insta::assert_snapshot!(reasons[0], @"the declared command changed");
    Ok(())
}

#[test]
fn a_changed_base_environment_keeps_a_receipt_present() -> Result {
    let f = fixture()?;
    f.verifier()?.run_command(&name("test"), None)?;
    // A terminal, a locale, a home: nothing the contract binds.
    let v = f.verifier()?.with_base_env(
        fixed_env()
            .with("LANG", "C.UTF-8")
            .with("TERM", "tmux-256color")
            .with("HOME", "/elsewhere"),
    );
    assert_eq!(status(&v, "test")?, ReceiptStatus::Present);
    Ok(())
}

#[test]
fn a_changed_inherited_variable_is_stale_and_named() -> Result {
    let f = fixture()?;
    let contract = CONTRACT.replace(
        "  - name: default\n",
        "  - name: default\n    inherit: [JAVA_HOME]\n",
    );
    let verifier = |java: &str| -> Result<Verifier> {
        Ok(f.verifier_with(&contract, f.store())?
            .with_base_env(fixed_env().with("JAVA_HOME", java)))
    };
    verifier("/opt/jdk-21")?.run_command(&name("test"), None)?;
    assert_eq!(
        status(&verifier("/opt/jdk-21")?, "test")?,
        ReceiptStatus::Present
    );
    let reasons = stale_reasons(status(&verifier("/opt/jdk-17")?, "test")?);
    insta::assert_snapshot!(reasons[0], @"environment `default` changed: `JAVA_HOME` changed");
    Ok(())
}

#[test]
fn a_path_that_finds_another_program_is_stale() -> Result {
    let f = fixture()?;
    f.verifier()?.run_command(&name("test"), None)?;
    // Another `sh` ahead of the system's on `PATH`.
    let bin = f.checkout.parent().ok_or("no parent")?.join("bin");
    std::fs::create_dir_all(&bin)?;
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh"))?;
    let v = f
        .verifier()?
        .with_base_env(BaseEnv::empty().with("PATH", format!("{bin}:/usr/bin:/bin")));
    let reasons = stale_reasons(status(&v, "test")?);
    assert!(
        reasons.iter().any(|r| r
            .to_string()
            .starts_with(&format!("`PATH` now finds `{bin}/sh`, not `"))),
        "{reasons:?}"
    );
    Ok(())
}

#[test]
fn a_receipt_of_schema_1_stays_present_while_its_environment_holds() -> Result {
    let f = fixture()?;
    f.verifier()?.run_command(&name("test"), None)?;
    // Rewrite the receipt as schema 1 wrote it: no `program`, the
    // environment digest over the declaration and every base variable.
    let contract: VerificationContract = serde_yaml::from_str(CONTRACT)?;
    let environment = contract.environment("default").ok_or("no default")?;
    #[derive(serde::Serialize)]
    struct Hashed<'a> {
        environment: &'a orcho_receipts::Environment,
        base: std::collections::BTreeMap<&'a str, &'a str>,
    }
    let base = fixed_env();
    let legacy = Digest::derive(
        orcho_receipts::LEGACY_ENVIRONMENT_CONTEXT,
        &serde_json::to_vec(&Hashed {
            environment,
            base: base.iter().collect(),
        })?,
    );
    let path = f.latest("test");
    let text = std::fs::read_to_string(&path)?;
    let body = &text[..text.find("\n  \"digest\": ").ok_or("no digest line")?];
    let body: String = body
        .replacen("\"schema\": 2", "\"schema\": 1", 1)
        .lines()
        .filter(|l| !l.starts_with("  \"program\": "))
        .map(|l| {
            if l.starts_with("  \"environment_digest\": ") {
                format!("  \"environment_digest\": \"{legacy}\",")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let digest = Digest::derive(COMMAND_RECEIPT_CONTEXT, body.as_bytes());
    crate::write_bytes(
        &path,
        format!("{body}\n  \"digest\": \"{digest}\"\n}}\n").as_bytes(),
    )?;
    assert_eq!(status(&f.verifier()?, "test")?, ReceiptStatus::Present);
    // Its digest bound every base variable: a changed one stales it.
    let v = f
        .verifier()?
        .with_base_env(fixed_env().with("LANG", "C.UTF-8"));
    assert!(matches!(status(&v, "test")?, ReceiptStatus::Stale(_)));
    Ok(())
}

#[test]
fn all_stale_reasons_are_listed() -> Result {
    let f = fixture()?;
    f.verifier()?.run_command(&name("test"), None)?;
    write(&f.checkout, "src/lib.rs", "changed\n", 0o644)?;
    write(&f.lib, "lib.rs", "changed\n", 0o644)?;
    let changed = CONTRACT.replace("echo ok", "echo OK");
    let v = f.verifier_with(&changed, f.store())?;
    insta::assert_snapshot!(status(&v, "test")?, @"stale: the declared command changed; the subject changed since it ran: `src/lib.rs` changed; dependency `lib` changed: `lib.rs` changed");
    Ok(())
}

#[test]
fn failed_outranks_stale() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("lint"), None)?;
    write(&f.checkout, "src/lib.rs", "changed\n", 0o644)?;
    match status(&v, "lint")? {
        ReceiptStatus::Failed { failure, stale, .. } => {
            assert_eq!(failure, Failure::ExitCode(1));
            assert_eq!(
                stale.len(),
                1,
                "the staleness is reported beside the failure"
            );
        }
        other => panic!("expected failed, got {other}"),
    }
    Ok(())
}

#[test]
fn a_command_that_changes_its_subject_is_no_proof() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    let receipt = v.run_command(&name("formatter"), None)?;
    assert!(receipt.passed());
    assert_ne!(receipt.subject_before, receipt.subject_after);
    let reasons = stale_reasons(status(&v, "formatter")?);
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, StaleReason::ChangedByRun { .. })),
        "{reasons:?}"
    );
    Ok(())
}

#[test]
fn secrets_never_reach_receipts_or_logs() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    let receipt = v.run_command(&name("secretive"), None)?;
    assert_eq!(receipt.stdout.tail, "using [redacted]\n");
    assert_eq!(receipt.stderr.tail, "[redacted]\n");
    assert_eq!(receipt.spec.secrets, ["TOKEN"]);
    let store = f.store();
    let mut checked = 0;
    for path in walk(store.dir().as_std_path())? {
        let bytes = std::fs::read(&path)?;
        assert!(
            !bytes.windows(7).any(|w| w == b"hunter2"),
            "the secret leaked into {}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 4, "receipt, history and two logs were checked");
    Ok(())
}

fn walk(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}

#[test]
fn a_hand_edited_receipt_is_invalid() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("lint"), None)?;
    let path = f.latest("lint");
    let text = std::fs::read_to_string(&path)?;
    // The agent turns the failure into a pass.
    let edited = text.replace("\"code\": 1", "\"code\": 0");
    assert_ne!(edited, text);
    crate::write_bytes(&path, edited.as_bytes())?;
    let s = status(&v, "lint")?;
    assert_eq!(s, ReceiptStatus::Invalid(InvalidReason::DigestMismatch));
    assert_eq!(s.next_action(), Some(NextAction::Investigate));
    insta::assert_snapshot!(s, @"invalid: the receipt's digest does not match its contents");
    Ok(())
}

/// Rewrites a receipt's body and recomputes its digest the way a forger who
/// read this crate's source would.
fn forge(path: &camino::Utf8Path, edit: impl Fn(&str) -> String) -> Result {
    let text = std::fs::read_to_string(path)?;
    let at = text.rfind("\n  \"digest\": ").ok_or("no digest line")?;
    let body = edit(&text[..at]);
    let digest = Digest::derive(COMMAND_RECEIPT_CONTEXT, body.as_bytes());
    let forged = format!("{body}\n  \"digest\": \"{digest}\"\n}}\n");
    crate::write_bytes(path, forged.as_bytes())?;
    Ok(())
}

/// Rewrites a receipt to `text` with its digest recomputed and its old MAC
/// kept, as one that cannot compute a MAC would.
fn forge_keeping_mac(path: &camino::Utf8Path, text: &str) -> Result {
    let at = text.rfind("\n  \"digest\": ").ok_or("no digest line")?;
    let body = &text[..at];
    let mac = text[at..]
        .lines()
        .find(|l| l.trim_start().starts_with("\"mac\""))
        .ok_or("no mac line")?;
    let digest = Digest::derive(COMMAND_RECEIPT_CONTEXT, body.as_bytes());
    let forged = format!("{body}\n  \"digest\": \"{digest}\",\n{mac}\n}}\n");
    crate::write_bytes(path, forged.as_bytes())?;
    Ok(())
}

#[test]
fn a_forged_receipt_fails_the_mac() -> Result {
    let f = fixture()?;
    let key = ReceiptKey::derive_from_secret(b"host secret kept outside the checkout");
    let keyed = f.store().with_key(key);
    let v = f.verifier_with(CONTRACT, keyed)?;
    v.run_command(&name("lint"), None)?;
    assert!(std::fs::read_to_string(f.latest("lint"))?.contains("\"mac\": \"blake3:"));
    assert!(matches!(status(&v, "lint")?, ReceiptStatus::Failed { .. }));

    forge(&f.latest("lint"), |body| {
        body.replace("\"code\": 1", "\"code\": 0")
    })?;
    assert_eq!(
        status(&v, "lint")?,
        ReceiptStatus::Invalid(InvalidReason::MissingMac)
    );
    // Without the key, the forgery would pass the digest check: this is what
    // the key is for.
    let unkeyed = f.verifier()?;
    assert!(!matches!(
        status(&unkeyed, "lint")?,
        ReceiptStatus::Invalid(_)
    ));

    // A MAC made with another key does not help either, and the receipt
    // says which key made it.
    let other_key = ReceiptKey::from_bytes([7; 32]);
    let other = f.store().with_key(other_key.clone());
    let v_other = f.verifier_with(CONTRACT, other)?;
    v_other.run_command(&name("test"), None)?;
    assert_eq!(
        status(&v, "test")?,
        ReceiptStatus::Invalid(InvalidReason::OtherKey {
            found: other_key.id(),
            expected: ReceiptKey::derive_from_secret(b"host secret kept outside the checkout").id(),
        })
    );
    // Claiming this host's key id does not help: the MAC still fails.
    let path = f.latest("test");
    let text = std::fs::read_to_string(&path)?;
    let claimed = text.replace(
        &format!("\"key\": \"{}\"", other_key.id()),
        &format!(
            "\"key\": \"{}\"",
            ReceiptKey::derive_from_secret(b"host secret kept outside the checkout").id()
        ),
    );
    assert_ne!(claimed, text);
    forge_keeping_mac(&path, &claimed)?;
    assert_eq!(
        status(&v, "test")?,
        ReceiptStatus::Invalid(InvalidReason::MacMismatch)
    );
    Ok(())
}

#[test]
fn a_receipt_from_a_newer_schema_is_invalid_and_never_overwritten() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    let path = f.latest("test");
    let future =
        "{\n  \"schema\": 7,\n  \"command\": \"test\",\n  \"verdict\": {\"nested\": [1, 2]}\n}\n";
    crate::write_bytes(&path, future.as_bytes())?;
    let s = status(&v, "test")?;
    assert!(
        matches!(s, ReceiptStatus::Invalid(InvalidReason::TooNew { .. })),
        "{s}"
    );
    insta::assert_snapshot!(s, @"invalid: the receipt has schema 7, newer than 6; upgrade Orcho to read it");
    let err = v.run_command(&name("test"), None).unwrap_err();
    insta::assert_snapshot!(orcho_core::error_chain(&err).replace(f.checkout.as_str(), "<checkout>"), @"command `test`: caused by: `<checkout>/.orcho/receipts/test/latest.json` has schema 7, newer than this build writes; refusing to overwrite it");
    assert_eq!(std::fs::read_to_string(&path)?, future);
    Ok(())
}

#[test]
fn truncated_json_is_invalid() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    let path = f.latest("test");
    let bytes = std::fs::read(&path)?;
    crate::write_bytes(&path, &bytes[..bytes.len() / 2])?;
    let s = status(&v, "test")?;
    assert!(
        matches!(s, ReceiptStatus::Invalid(InvalidReason::Malformed { .. })),
        "{s}"
    );
    assert!(
        s.to_string()
            .starts_with("invalid: the receipt is not valid at line")
    );
    // Every truncation of a good receipt is invalid, none is present (a cut
    // that takes only the final line break leaves the whole document).
    let store = f.store();
    let whole = bytes.trim_ascii_end().len();
    for cut in (0..whole).step_by(7) {
        crate::write_bytes(&path, &bytes[..cut])?;
        assert!(
            matches!(
                store.load_command_receipt(&name("test")),
                LoadedReceipt::Invalid(_)
            ),
            "cut at {cut}"
        );
    }
    // An unreadable receipt (a directory) is invalid too.
    std::fs::remove_file(&path)?;
    std::fs::create_dir(&path)?;
    assert!(matches!(
        status(&v, "test")?,
        ReceiptStatus::Invalid(InvalidReason::Unreadable { .. })
    ));
    Ok(())
}

#[test]
fn a_receipt_copied_from_another_command_is_invalid() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    std::fs::create_dir_all(f.latest("lint").parent().ok_or("no parent")?)?;
    std::fs::copy(f.latest("test"), f.latest("lint"))?;
    insta::assert_snapshot!(status(&v, "lint")?, @"invalid: the file is the receipt of `test`");
    Ok(())
}

#[test]
fn receipt_json_snapshot() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    insta::assert_snapshot!(
        "receipt_passed",
        machine_independent(&std::fs::read_to_string(f.latest("test"))?)
    );
    v.run_command(&name("lint"), None)?;
    insta::assert_snapshot!(
        "receipt_failed",
        machine_independent(&std::fs::read_to_string(f.latest("lint"))?)
    );
    let env = v.check_environment(&"default".parse()?)?;
    assert!(env.passed());
    let env_file = f
        .checkout
        .join(".orcho/receipts/_environments/default/latest.json");
    insta::assert_snapshot!("env_receipt", std::fs::read_to_string(env_file)?);
    Ok(())
}

/// A receipt's text with what differs from machine to machine taken out:
/// the programs it bound (their paths, digests and `lstat` data), and so
/// its own digest.
fn machine_independent(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line == "  \"bound\": {" {
            out.push(
                "  \"bound\": \"[the program and what it reads, on this machine]\",".to_owned(),
            );
            for inner in lines.by_ref() {
                if inner == "  }," {
                    break;
                }
            }
        } else if line.starts_with("  \"digest\": \"blake3:") {
            out.push("  \"digest\": \"[the document's digest]\"".to_owned());
        } else {
            out.push(line.to_owned());
        }
    }
    out.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn garbage_never_panics_and_is_never_present(bytes in proptest::collection::vec(any::<u8>(), 0..512), prefix in any::<bool>()) {
        let dir = temp().unwrap();
        let store = ReceiptStore::new(dir.path.join(".orcho"));
        let path = store.command_dir(&name("test")).join("latest.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut content = if prefix { b"{\n  \"schema\": 1,\n".to_vec() } else { Vec::new() };
        content.extend_from_slice(&bytes);
        crate::write_bytes(&path, &content).unwrap();
        prop_assert!(matches!(store.load_command_receipt(&name("test")), LoadedReceipt::Invalid(_)));
        let env = store.environment_dir(&"default".parse().unwrap()).join("latest.json");
        std::fs::create_dir_all(env.parent().unwrap()).unwrap();
        crate::write_bytes(&env, &content).unwrap();
        prop_assert!(matches!(store.load_env_receipt(&"default".parse().unwrap()), LoadedReceipt::Invalid(_)));
    }
}

#[test]
fn every_assertion_kind_passes_and_fails() -> Result {
    let f = fixture()?;
    write(&f.checkout, "vendor/lib/mod.py", "\n", 0o644)?;
    let contract = r#"
environments:
  - name: default
    assertions:
      - file_exists: Cargo.toml
      - file_exists: src
      - path_exists: src
      - path_exists: nope
      - command_exists: sh
      - command_exists: no-such-tool-anywhere
      - command_exists: ./tools/run
      - command_exists: ./Cargo.toml
      - command_exists: ./tools/missing
      - version: { argv: [sh, -c, "echo tool 1.2.3"], expect: { contains: "1.2" } }
      - version: { argv: [sh, -c, "echo tool 1.2.3 >&2"], expect: { matches: "tool 1.?.*" } }
      - version: { argv: [sh, -c, "echo tool 2.0.0"], expect: { matches: "tool 1.*" } }
      - version: { argv: [sh, -c, "exit 3"], expect: { contains: "x" } }
      - import_path: { argv: [sh, -c, "echo $PWD/vendor/lib/mod.py"], expect: { under: vendor } }
      - import_path: { argv: [sh, -c, "echo vendor/lib/mod.py"], expect: { equals: vendor/lib/mod.py } }
      - import_path: { argv: [sh, -c, "echo /usr/lib/python3/mod.py"], expect: { under: vendor } }
commands:
  - name: test
    argv: [true]
"#;
    write(&f.checkout, "tools/run", "#!/bin/sh\n", 0o755)?;
    let v = f.verifier_with(contract, f.store())?;
    let env = v.check_environment(&"default".parse()?)?;
    let shown: Vec<String> = env
        .results
        .iter()
        .map(|r| {
            format!(
                "{} {}: {}",
                if r.passed { "ok  " } else { "FAIL" },
                r.description,
                r.detail
            )
        })
        .collect();
    insta::assert_snapshot!(shown.join("\n").replace(f.checkout.as_str(), "<checkout>").replace(": /usr/bin/sh", ": <sh>").replace(": /bin/sh", ": <sh>"), @"
    ok   file_exists `Cargo.toml`: found
    FAIL file_exists `src`: exists but is not a file
    ok   path_exists `src`: found
    FAIL path_exists `nope`: not found (entity not found)
    ok   command_exists `sh`: <sh>
    FAIL command_exists `no-such-tool-anywhere`: not found on PATH
    ok   command_exists `./tools/run`: <checkout>/tools/run
    FAIL command_exists `./Cargo.toml`: found, but not executable
    FAIL command_exists `./tools/missing`: not found
    ok   version `sh -c echo tool 1.2.3` contains `1.2`: printed `tool 1.2.3`
    ok   version `sh -c echo tool 1.2.3 >&2` matches `tool 1.?.*`: printed `tool 1.2.3`
    FAIL version `sh -c echo tool 2.0.0` matches `tool 1.*`: printed `tool 2.0.0`
    FAIL version `sh -c exit 3` contains `x`: `sh -c exit 3` exit code 3
    ok   import_path `sh -c echo $PWD/vendor/lib/mod.py` under `vendor`: printed `<checkout>/vendor/lib/mod.py`
    ok   import_path `sh -c echo vendor/lib/mod.py` equals `vendor/lib/mod.py`: printed `vendor/lib/mod.py`
    FAIL import_path `sh -c echo /usr/lib/python3/mod.py` under `vendor`: printed `/usr/lib/python3/mod.py`
    ");
    let summary = v.readiness()?;
    assert_eq!(
        summary.environments[0].status,
        orcho_receipts::EnvStatus::Failed
    );
    Ok(())
}

#[test]
fn a_signal_is_recorded_with_its_name() -> Result {
    let f = fixture()?;
    let contract = format!(
        "{}\n",
        CONTRACT.replace(
            "required: [test, lint]",
            "  - name: crash\n    argv: [sh, -c, \"kill -SEGV $$\"]\nrequired: [test, lint]"
        )
    );
    let v = f.verifier_with(&contract, f.store())?;
    v.run_command(&name("crash"), None)?;
    let text = std::fs::read_to_string(f.latest("crash"))?;
    assert!(
        text.contains("\"signaled\": {\n      \"signal\": 11,\n      \"name\": \"SIGSEGV\"\n    }"),
        "{text}"
    );
    insta::assert_snapshot!(status(&v, "crash")?, @"failed: killed by signal 11 (SIGSEGV)");
    Ok(())
}

/// Enough commands that classification shares them among threads: every
/// kind of receipt keeps its status, and the order is the contract's.
#[test]
fn many_receipts_classify_as_one_by_one() -> Result {
    use orcho_receipts::{CommandSpec, classify, classify_one, spec_digest};

    let f = fixture()?;
    let n = 600;
    let cmd = |i: usize| name(&format!("c{i:03}"));
    let mut contract = VerificationContract::new();
    for i in 0..n {
        contract = contract.with_command(CommandSpec::new(cmd(i), ["true"]));
    }
    // Required ones out of declared order, to check the output order.
    for i in (0..n).rev().step_by(7) {
        contract = contract.with_required(cmd(i));
    }
    let store = f.store();
    let v = Verifier::new(contract.clone(), &f.checkout, store.clone())?
        .with_clock(Arc::clone(&f.clock))
        .with_base_env(fixed_env());
    v.run_command(&cmd(0), None)?;
    let template = std::fs::read_to_string(f.latest("c000"))?;
    let spec_of = |i: usize| -> Result<String> {
        let spec = contract.command(cmd(i).as_str()).ok_or("declared")?;
        Ok(spec_digest(spec).to_string())
    };
    let first_spec = spec_of(0)?;
    for i in 1..n {
        let path = f.latest(cmd(i).as_str());
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        let renamed = template
            .replace("c000", cmd(i).as_str())
            .replace(&first_spec, &spec_of(i)?);
        match i % 7 {
            // Missing.
            1 => continue,
            // Edited by hand.
            2 => crate::write_bytes(
                &path,
                renamed.replace("\"code\": 0", "\"code\": 3").as_bytes(),
            )?,
            // Another command's receipt.
            3 => crate::write_bytes(&path, template.as_bytes())?,
            // Truncated.
            4 => crate::write_bytes(&path, &renamed.as_bytes()[..renamed.len() / 3])?,
            _ => {
                crate::write_bytes(&path, renamed.as_bytes())?;
                // Re-signed as a forger would: present, failed or stale.
                forge(&path, |body| match i % 7 {
                    5 => body.replace("\"code\": 0", "\"code\": 2"),
                    6 => body
                        .lines()
                        .map(|line| {
                            if line.starts_with("  \"subject_before\": ") {
                                let other = Digest::derive("another checkout", b"");
                                format!("  \"subject_before\": \"{other}\",")
                            } else {
                                line.to_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => body.to_owned(),
                })?;
            }
        }
    }
    let state = v.current_state()?;
    let all = classify(&contract, &store, &state);
    let mut expected: Vec<CommandName> = contract.required.clone();
    expected.extend(
        contract
            .commands
            .iter()
            .map(|c| c.name.clone())
            .filter(|c| !contract.required.contains(c)),
    );
    assert_eq!(
        all.iter().map(|c| c.command.clone()).collect::<Vec<_>>(),
        expected
    );
    let mut kinds = std::collections::BTreeMap::new();
    for c in &all {
        assert_eq!(c.required, contract.required.contains(&c.command));
        assert_eq!(
            c.status,
            classify_one(&contract, &store, &state, &c.command)
        );
        *kinds.entry(c.status.as_str()).or_insert(0) += 1;
    }
    insta::assert_debug_snapshot!(kinds, @r#"
    {
        "failed": 85,
        "invalid": 258,
        "missing": 86,
        "present": 86,
        "stale": 85,
    }
    "#);
    Ok(())
}

#[test]
fn old_logs_are_pruned_but_the_latest_receipts_logs_stay() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    for _ in 0..3 {
        v.run_command(&name("test"), None)?;
    }
    let logs = f.checkout.join(".orcho/receipts/test/logs");
    let month_ago = std::time::SystemTime::now() - Duration::from_secs(30 * 24 * 60 * 60);
    let mut dirs: Vec<Utf8PathBuf> = logs
        .read_dir_utf8()?
        .map(|e| Ok(e?.path().to_owned()))
        .collect::<Result<_>>()?;
    dirs.sort();
    assert_eq!(dirs.len(), 3);
    for dir in &dirs {
        std::fs::File::open(dir)?.set_modified(month_ago)?;
    }
    let store = f.store();
    let two_weeks_ago = std::time::SystemTime::now() - Duration::from_secs(14 * 24 * 60 * 60);
    let would = store.prune_logs(two_weeks_ago, true)?;
    assert_eq!(would.len(), 2, "{would:?}");
    assert_eq!(
        logs.read_dir_utf8()?.count(),
        3,
        "a dry run removed something"
    );
    let removed = store.prune_logs(two_weeks_ago, false)?;
    assert_eq!(removed, would);
    let left: Vec<Utf8PathBuf> = logs
        .read_dir_utf8()?
        .map(|e| Ok(e?.path().to_owned()))
        .collect::<Result<_>>()?;
    assert_eq!(left.len(), 1);
    assert!(!removed.contains(&left[0]));
    // The latest receipt still proves its command, with its logs.
    assert_eq!(status(&v, "test")?, ReceiptStatus::Present);
    let LoadedReceipt::Valid(latest) = store.load_command_receipt(&name("test")) else {
        return Err("the latest receipt does not load".into());
    };
    let log = latest.stdout.path.ok_or("no stdout log")?;
    assert!(f.checkout.join(".orcho").join(log).is_file());
    // Young logs are never pruned.
    assert!(
        store
            .prune_logs(month_ago - Duration::from_secs(60), false)?
            .is_empty()
    );
    Ok(())
}
