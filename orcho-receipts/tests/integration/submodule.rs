//! Git submodules are part of the subject, and a receipt says which
//! dependency commit it was proven against.

use orcho_receipts::{ReceiptStatus, ReceiptStore, StaleReason, VerificationContract, Verifier};

use crate::{Result, git, temp, test_env, write};

const CONTRACT: &str = r#"
commands:
  - name: test
    argv: [sh, -c, "test -f libs/lib/lib.txt"]
required: [test]
"#;

#[test]
fn an_uncommitted_edit_inside_a_submodule_stales_a_receipt_and_is_named() -> Result {
    let t = temp()?;
    let main = crate::with_submodule(&t.path, ".orcho/\n")?;

    let contract: VerificationContract = serde_yaml::from_str(CONTRACT)?;
    let verifier = Verifier::new(contract, &main, ReceiptStore::new(main.join(".orcho")))?
        .with_base_env(test_env());
    let receipt = verifier.run_command(&"test".parse()?, None)?;
    assert!(receipt.passed());
    assert_eq!(
        receipt
            .submodules
            .keys()
            .map(|p| p.as_str())
            .collect::<Vec<_>>(),
        ["libs/lib"],
        "the receipt records the submodule's state"
    );
    assert_eq!(verifier.classify()?[0].status, ReceiptStatus::Present);

    // An edit inside the submodule, not committed anywhere.
    write(&main, "libs/lib/lib.txt", "v2\n", 0o644)?;
    let status = verifier.classify()?.remove(0).status;
    let ReceiptStatus::Stale(reasons) = &status else {
        panic!("stale expected, got {status:?}");
    };
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, StaleReason::Submodule { path, .. } if path == "libs/lib")),
        "{reasons:?}"
    );
    assert!(
        status.reason().contains("submodule `libs/lib` changed"),
        "{}",
        status.reason()
    );

    // Put back as it was: present again.
    write(&main, "libs/lib/lib.txt", "v1\n", 0o644)?;
    assert_eq!(verifier.classify()?[0].status, ReceiptStatus::Present);
    // A new commit inside the submodule is a change too.
    write(&main, "libs/lib/more.txt", "more\n", 0o644)?;
    git(&main.join("libs/lib"), &["add", "-A"])?;
    git(&main.join("libs/lib"), &["commit", "-qm", "more"])?;
    assert!(matches!(
        verifier.classify()?[0].status,
        ReceiptStatus::Stale(_)
    ));
    Ok(())
}

#[test]
fn a_present_receipt_names_the_dependency_commit_it_was_proven_against() -> Result {
    let t = temp()?;
    let checkout = t.path.join("app");
    let dep = t.path.join("dep");
    let plain = t.path.join("plain");
    write(&checkout, "app.txt", "app\n", 0o644)?;
    write(&dep, "dep.txt", "dep\n", 0o644)?;
    write(&plain, "plain.txt", "plain\n", 0o644)?;
    git(&dep, &["init", "-q"])?;
    git(&dep, &["add", "-A"])?;
    git(&dep, &["commit", "-qm", "dep"])?;
    let head = git(&dep, &["rev-parse", "HEAD"])?.trim().to_owned();
    let contract: VerificationContract = serde_yaml::from_str(
        r#"
environments:
  - name: default
    dependencies:
      - { name: dep, path: ../dep }
      - { name: plain, path: ../plain }
commands:
  - { name: test, argv: ["true"] }
required: [test]
"#,
    )?;
    let verifier = Verifier::new(
        contract,
        &checkout,
        ReceiptStore::new(checkout.join(".orcho")),
    )?
    .with_base_env(test_env());
    let receipt = verifier.run_command(&"test".parse()?, None)?;
    assert_eq!(
        receipt.dependencies[0].commit.as_deref(),
        Some(head.as_str())
    );
    assert_eq!(
        receipt.dependencies[1].commit, None,
        "outside git: the content digest"
    );

    let summary = verifier.readiness()?;
    assert!(summary.is_ready());
    let markdown = summary.to_markdown();
    assert!(
        markdown.contains(&format!("`dep` at commit {}", &head[..12])),
        "{markdown}"
    );
    assert!(
        markdown.contains("`plain` at content blake3:"),
        "{markdown}"
    );
    let json: serde_json::Value = serde_json::from_str(&summary.to_json())?;
    assert_eq!(
        json["required"][0]["dependencies"][0]["commit"],
        head.as_str()
    );
    // Read back from disk, the receipt still says so.
    let status = verifier.classify()?.remove(0);
    assert_eq!(
        status.dependencies[0].commit.as_deref(),
        Some(head.as_str())
    );
    Ok(())
}
