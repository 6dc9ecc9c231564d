//! Receipts an agent cannot forge: every receipt `orcho` writes carries a
//! MAC made with a key no command it starts ever sees.

use std::os::unix::fs::PermissionsExt;

use orcho::{core::Digest, receipts::COMMAND_RECEIPT_CONTEXT};

use crate::{
    Result,
    support::{QUICK, Repo},
};

/// `orcho status --json`: its exit code, and the required receipt's status
/// and reason.
fn status(repo: &Repo, envs: &[(&str, &str)]) -> Result<(i32, String, String)> {
    let out = repo.orcho_in(".", envs, &["status", "--json"])?;
    out.expect_no_panic();
    let doc = out.json()?;
    let required = &doc["required"][0];
    Ok((
        out.code().ok_or("killed")?,
        required["status"].as_str().unwrap_or_default().to_owned(),
        required.to_string(),
    ))
}

/// Rewrites the `test` receipt as an agent with write access to the store
/// would: `edit` changes its body, the digest is computed again, and the MAC
/// line is kept (`keep_mac`) or dropped with the key id.
fn forge(repo: &Repo, edit: impl Fn(&str) -> String, keep_mac: bool) -> Result {
    let path = repo.dir().join(".orcho/receipts/test/latest.json");
    let text = std::fs::read_to_string(&path)?;
    let at = text.rfind("\n  \"digest\": ").ok_or("no digest line")?;
    let mut body = edit(&text[..at]);
    if !keep_mac {
        let key = body.rfind("\n  \"key\": ").ok_or("no key line")?;
        body.truncate(key);
    }
    let mac = text[at..]
        .lines()
        .find(|l| l.trim_start().starts_with("\"mac\""))
        .ok_or("no mac line")?
        .to_owned();
    let digest = Digest::derive(COMMAND_RECEIPT_CONTEXT, body.as_bytes());
    let seal = if keep_mac {
        format!("\n  \"digest\": \"{digest}\",\n{mac}\n}}\n")
    } else {
        format!("\n  \"digest\": \"{digest}\"\n}}\n")
    };
    orcho::core::fs::write_atomic(&path, format!("{body}{seal}").as_bytes())?;
    Ok(())
}

/// A failed run made to read as a passing one.
fn passed(body: &str) -> String {
    body.replace("\"code\": 1", "\"code\": 0")
}

#[test]
fn a_failed_receipt_forged_to_pass_with_its_digest_recomputed_is_invalid() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.orcho(&["verify"])?.expect_code(3);
    let (_, status_before, _) = status(&repo, &[])?;
    assert_eq!(status_before, "failed");
    // The MAC still says what the receipt said before.
    forge(&repo, passed, true)?;
    let (code, status_now, doc) = status(&repo, &[])?;
    assert_eq!((code, status_now.as_str()), (3, "invalid"), "{doc}");
    assert!(doc.contains("MAC does not match"), "{doc}");
    // No MAC at all, as a receipt written without a key.
    repo.orcho(&["verify"])?.expect_code(3);
    forge(&repo, passed, false)?;
    let (code, status_now, doc) = status(&repo, &[])?;
    assert_eq!((code, status_now.as_str()), (3, "invalid"), "{doc}");
    assert!(doc.contains("no MAC"), "{doc}");
    // The text output says it too, and what to do.
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("invalid"), "{out}");
    assert!(out.stdout.contains("no MAC"), "{out}");
    Ok(())
}

#[test]
fn receipts_written_with_another_key_say_so() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    let one = [(
        "ORCHO_RECEIPT_KEY",
        "the first secret of this test, long enough",
    )];
    let other = [(
        "ORCHO_RECEIPT_KEY",
        "a second secret of this test, long enough",
    )];
    repo.orcho_in(".", &one, &["verify"])?.expect_code(0);
    assert_eq!(status(&repo, &one)?.1, "present");
    let (code, status_now, doc) = status(&repo, &other)?;
    assert_eq!((code, status_now.as_str()), (3, "invalid"), "{doc}");
    assert!(doc.contains("signed with another key"), "{doc}");
    // The key file is a third key.
    assert!(status(&repo, &[])?.2.contains("another key"));
    Ok(())
}

#[test]
fn the_key_file_is_made_once_readable_by_its_owner_only_and_outside_the_checkout() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    repo.orcho(&["verify"])?.expect_code(0);
    let key = repo.data().join("orcho/receipt-key");
    let mode = std::fs::metadata(&key)?.permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let secret = std::fs::read_to_string(&key)?;
    assert_eq!(secret.trim().len(), 64);
    // It is the same key next time: the receipt stays present.
    assert_eq!(status(&repo, &[])?.1, "present");
    assert_eq!(std::fs::read_to_string(&key)?, secret);
    // Its secret in the variable is the same key (a CI job can check).
    let same = [("ORCHO_RECEIPT_KEY", secret.trim())];
    assert_eq!(status(&repo, &same)?.1, "present");
    // A key file others can read is refused.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644))?;
    let out = repo.orcho(&["status"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("can be read by other users"), "{out}");
    assert!(out.stderr.contains("chmod 600"), "{out}");
    // A data directory inside the checkout would hand the key to the agent.
    let inside = repo.dir().join(".data");
    let out = repo.orcho_in(".", &[("XDG_DATA_HOME", inside.as_str())], &["status"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("inside the checkout"), "{out}");
    assert!(!inside.exists());
    // So is a secret that is too short.
    let out = repo.orcho_in(".", &[("ORCHO_RECEIPT_KEY", "short")], &["status"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("at least 16"), "{out}");
    Ok(())
}

#[test]
fn no_command_sees_the_receipt_key() -> Result {
    let profile = "\
schema: 1
name: key-test
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"env > @CTL@/env.txt\"] }
  required: [test]
";
    let repo = Repo::new(&profile.replace("@CTL@", "../ctl"))?;
    let secret = [(
        "ORCHO_RECEIPT_KEY",
        "a secret no command may read, long enough",
    )];
    repo.orcho_in(".", &secret, &["verify"])?.expect_code(0);
    let seen = std::fs::read_to_string(repo.ctl("env.txt"))?;
    assert!(!seen.contains("ORCHO_RECEIPT_KEY"), "{seen}");
    // A phase does not get it either.
    repo.write("phase.sh", "#!/bin/sh\nenv > ../ctl/phase-env.txt\n")?;
    repo.git(&["add", "phase.sh"])?;
    repo.git(&["commit", "-q", "-m", "phase"])?;
    repo.orcho_in(
        ".",
        &secret,
        &[
            "run",
            "--in-place",
            "--no-interactive",
            "--phase",
            "implement=./phase.sh",
        ],
    )?
    .expect_no_panic();
    let seen = std::fs::read_to_string(repo.ctl("phase-env.txt"))?;
    assert!(seen.contains("ORCHO_PHASE=implement"), "{seen}");
    assert!(!seen.contains("ORCHO_RECEIPT_KEY"), "{seen}");
    // A contract that asks for it is refused.
    for ask in [
        "environments:\n    - { name: default, inherit: [ORCHO_RECEIPT_KEY] }",
        "environments:\n    - { name: default, env: { ORCHO_RECEIPT_KEY: x } }",
    ] {
        let asking = format!(
            "schema: 1\nname: asking\nextends: builtin:quick\nverification:\n  {ask}\n  commands:\n    - {{ name: test, argv: [env] }}\n  required: [test]\n"
        );
        repo.write("orcho.yaml", &asking)?;
        let out = repo.orcho_in(".", &secret, &["verify"])?;
        out.expect_code(1);
        assert!(out.stderr.contains("receipt key"), "{out}");
    }
    Ok(())
}
