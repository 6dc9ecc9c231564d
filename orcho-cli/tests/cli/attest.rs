//! Signed attestations end to end: `orcho key`, `orcho verify --attest`, the
//! notes pushed and fetched, `orcho status --commit` in a fresh clone with
//! no store and no key, and `approve` attesting the commit it makes.

use camino::Utf8Path;
use serde_json::Value;

use crate::{
    Result,
    support::{QUICK, Repo, orcho_at, run_id},
};

/// Passes, printing a libtest summary with one test.
const PROFILE: &str = "\
schema: 1
name: attest
extends: builtin:quick
verification:
  commands:
    - name: test
      argv: [sh, -c, \"grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'\"]
  required: [test]
";

/// Makes the signing key; its public key.
fn generate(repo: &Repo) -> Result<String> {
    let out = repo.orcho(&["key", "generate", "--json"])?;
    out.expect_code(0);
    let doc = out.json()?;
    assert_eq!(doc["algorithm"], "ed25519", "{doc}");
    let keyid = doc["keyid"].as_str().ok_or("no keyid")?;
    assert_eq!(keyid.len(), 64, "{doc}");
    Ok(doc["public_key"].as_str().ok_or("no key")?.to_owned())
}

/// Trusts `key` as `name` in the profile, committed.
fn trust(repo: &Repo, profile: &str, name: &str, key: &str) -> Result {
    repo.write(
        "orcho.yaml",
        &format!("{profile}trust:\n  keys:\n    - name: {name}\n      ed25519: {key}\n"),
    )?;
    repo.git(&["commit", "-q", "-am", "trust the key"])?;
    Ok(())
}

/// A bare repository beside the checkout, as its `origin`.
fn origin(repo: &Repo) -> Result<camino::Utf8PathBuf> {
    let bare = repo.data().parent().ok_or("no parent")?.join("origin.git");
    repo.git(&["init", "-q", "--bare", bare.as_str()])?;
    repo.git(&["remote", "add", "origin", bare.as_str()])?;
    repo.git(&["push", "-q", "origin", "HEAD:refs/heads/main"])?;
    Ok(bare)
}

/// `git` in `dir`.
fn git_in(repo: &Repo, dir: &Utf8Path, args: &[&str]) -> Result<String> {
    let mut all = vec!["-C", dir.as_str()];
    all.extend_from_slice(args);
    repo.git(&all)
}

#[test]
fn a_fresh_clone_proves_the_commit_from_its_notes_alone() -> Result {
    let repo = Repo::with_files(PROFILE, &[("lib.txt", "the answer\n")])?;
    let key = generate(&repo)?;
    trust(&repo, PROFILE, "ci", &key)?;
    let bare = origin(&repo)?;
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(0);
    let head = repo.git(&["rev-parse", "HEAD"])?;
    assert!(
        out.stdout
            .contains(&format!("attested on {}: test", &head[..12])),
        "{out}"
    );
    repo.orcho(&["attest", "push"])?.expect_code(0);

    // A fresh clone: no store, no key, no receipts.
    let clone = bare.parent().ok_or("no parent")?.join("clone");
    repo.git(&["clone", "-q", "-b", "main", bare.as_str(), clone.as_str()])?;
    let empty_data = [("XDG_DATA_HOME", "/nonexistent-orcho-data")];
    let out = orcho_at(&clone, &empty_data, &["status", "--commit", "HEAD"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("missing"), "{out}");
    assert!(
        out.stdout
            .contains("git fetch origin refs/notes/orcho:refs/notes/orcho"),
        "{out}"
    );
    git_in(
        &repo,
        &clone,
        &["fetch", "-q", "origin", "refs/notes/orcho:refs/notes/orcho"],
    )?;
    let out = orcho_at(
        &clone,
        &empty_data,
        &["status", "--commit", "HEAD", "--json"],
    )?;
    out.expect_code(0);
    let doc = out.json()?;
    assert_eq!(doc["ready"], true, "{doc}");
    assert_eq!(doc["required"][0]["state"], "present", "{doc}");
    assert_eq!(doc["required"][0]["signed_by"], "ci", "{doc}");
    assert!(
        !clone.join(".orcho").exists(),
        "status --commit writes no store"
    );

    // One flipped byte in the note: invalid, never present.
    let note = git_in(&repo, &clone, &["notes", "--ref", "orcho", "show", "HEAD"])?;
    let mut envelope: Value = serde_json::from_str(note.lines().next().ok_or("empty note")?)?;
    let payload = envelope["payload"].as_str().ok_or("no payload")?.to_owned();
    let flipped = if payload.starts_with('e') {
        payload.replacen('e', "f", 1)
    } else {
        format!("e{}", &payload[1..])
    };
    envelope["payload"] = Value::String(flipped);
    // Flipped in both notes that hold it: the commit's and its tree's.
    for object in ["HEAD", "HEAD^{tree}"] {
        git_in(
            &repo,
            &clone,
            &[
                "notes",
                "--ref",
                "orcho",
                "add",
                "-f",
                "-m",
                &envelope.to_string(),
                object,
            ],
        )?;
    }
    let out = orcho_at(&clone, &empty_data, &["status", "--commit", "HEAD"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("invalid"), "{out}");
    assert!(out.stdout.contains("does not verify"), "{out}");

    // A new commit that changes a file: stale, naming the attested commit.
    repo.write("lib.txt", "the answer, edited\n")?;
    repo.git(&["commit", "-q", "-am", "edit"])?;
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("stale"), "{out}");
    assert!(
        out.stdout.contains(&format!("for commit {}", &head[..12])),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_key_the_profile_does_not_list_proves_nothing() -> Result {
    let repo = Repo::with_files(PROFILE, &[("lib.txt", "the answer\n")])?;
    generate(&repo)?;
    // The profile trusts someone else.
    trust(
        &repo,
        PROFILE,
        "someone-else",
        "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
    )?;
    repo.orcho(&["verify", "--attest"])?.expect_code(0);
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("invalid"), "{out}");
    assert!(out.stdout.contains("`trust.keys` does not list"), "{out}");
    Ok(())
}

#[test]
fn attest_refuses_a_dirty_checkout_and_a_missing_key_before_running() -> Result {
    let repo = Repo::with_files(PROFILE, &[("lib.txt", "the answer\n")])?;
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("no signing key"), "{out}");
    assert!(out.stderr.contains("orcho key generate"), "{out}");
    assert!(!out.stderr.contains("running `test`"), "{out}");
    generate(&repo)?;
    repo.write("lib.txt", "the answer, uncommitted\n")?;
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("uncommitted changes (1 path(s): lib.txt)"),
        "{out}"
    );
    assert!(repo.git(&["notes", "--ref", "orcho", "list"])?.is_empty());
    // `verification.attest: true` says so, and verifies all the same.
    repo.write(
        "orcho.yaml",
        &PROFILE.replace("  required: [test]", "  required: [test]\n  attest: true"),
    )?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    assert!(
        out.stderr
            .contains("not attested: the checkout has uncommitted changes"),
        "{out}"
    );
    Ok(())
}

#[test]
fn the_key_is_kept_private_and_never_given_to_a_command() -> Result {
    let profile = PROFILE.replace(
        "grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'",
        "echo \\\"key=$ORCHO_SIGNING_KEY\\\"; echo 'test result: ok. 1 passed; 0 failed'",
    );
    let repo = Repo::new(&profile)?;
    generate(&repo)?;
    let file = repo.data().join("orcho/signing-key");
    let mode = std::fs::metadata(&file)?.permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    let out = repo.orcho(&["key", "generate"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("exists already"), "{out}");
    let shown = repo.orcho(&["key", "show"])?;
    shown.expect_code(0);
    assert!(shown.stdout.contains("trust:\n  keys:\n"), "{shown}");
    // Given in the environment, the secret reaches no command.
    let secret = std::fs::read_to_string(&file)?.trim().to_owned();
    let out = repo.orcho_in(".", &[("ORCHO_SIGNING_KEY", &secret)], &["verify"])?;
    out.expect_code(0);
    let log = std::fs::read_to_string(repo.dir().join(".orcho/receipts/test/latest.json"))?;
    assert!(log.contains("key="), "{log}");
    assert!(!log.contains(&secret), "{log}");
    // A variable that holds no key is said.
    let out = repo.orcho_in(".", &[("ORCHO_SIGNING_KEY", "nonsense")], &["key", "show"])?;
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("`ORCHO_SIGNING_KEY` holds no signing key"),
        "{out}"
    );
    Ok(())
}

#[test]
fn approve_attests_the_commit_it_makes() -> Result {
    let repo = Repo::new(QUICK)?;
    let key = generate(&repo)?;
    trust(&repo, QUICK, "dev", &key)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'touch ok && echo run > notes.txt'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    let out = repo.orcho(&["resume", &run])?;
    out.expect_code(0);
    let head = repo.git(&["rev-parse", "HEAD"])?;
    let evidence = repo.orcho(&["evidence", &run])?;
    assert!(
        evidence
            .stdout
            .contains(&format!("attested on {}: test", &head[..12])),
        "{evidence}"
    );
    let out = repo.orcho(&["status", "--commit", "HEAD", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["required"][0]["signed_by"], "dev");
    Ok(())
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the cargo that runs the tests is the one the crate's tests need"
)]
fn a_cargo_test_that_runs_no_test_is_vacuous() -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let profile = format!(
        "schema: 1\nname: crate\nextends: builtin:quick\nverification:\n  commands:\n    - name: test\n      argv: [{cargo}, test, --offline, -q]\n  required: [test]\n"
    );
    let repo = Repo::with_files(
        &profile,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"empty\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", "pub fn answer() -> u32 { 42 }\n"),
        ],
    )?;
    repo.write(".gitignore", ".orcho/\ntarget/\n")?;
    // The first build writes `Cargo.lock`, changing what it checks.
    repo.orcho(&["verify"])?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("but no test ran: vacuous"), "{out}");
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("vacuous"), "{out}");
    assert!(out.stdout.contains("no test ran"), "{out}");
    // Nothing failed: what to do is to give it a test, not to fix one.
    assert!(
        out.stdout.contains(
            "not ready: give `test` a test to run (it ran none, so it proves nothing), \
             then `orcho verify`"
        ),
        "{out}"
    );
    assert!(!out.stdout.contains("fix what makes"), "{out}");
    Ok(())
}

#[test]
fn a_profile_that_extends_a_file_is_read_from_the_commit() -> Result {
    let base = PROFILE.replace("name: attest", "name: base");
    let repo = Repo::with_files(
        "schema: 1\nname: child\nextends: ci/base.yaml\n",
        &[("lib.txt", "the answer\n"), ("ci/base.yaml", &base)],
    )?;
    let key = generate(&repo)?;
    repo.write(
        "ci/base.yaml",
        &format!("{base}trust:\n  keys:\n    - name: ci\n      ed25519: {key}\n"),
    )?;
    repo.git(&["commit", "-q", "-am", "trust"])?;
    repo.orcho(&["verify", "--attest"])?.expect_code(0);
    // The working copy's base changes; the commit's is what counts.
    repo.write("ci/base.yaml", "not: [a profile\n")?;
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("present"), "{out}");
    // From a subdirectory, `--profile` is relative to where orcho runs.
    let out = repo.orcho_in(
        "ci",
        &[],
        &["status", "--commit", "HEAD", "--profile", "../orcho.yaml"],
    )?;
    out.expect_code(0);
    let absolute = repo.dir().join("orcho.yaml");
    let out = repo.orcho(&["status", "--commit", "HEAD", "--profile", absolute.as_str()])?;
    out.expect_code(0);
    Ok(())
}

#[test]
fn what_a_stranger_met_attesting_is_said_plainly() -> Result {
    let repo = Repo::with_files(PROFILE, &[("lib.txt", "the answer\n")])?;
    // A refused `--attest` makes nothing: no receipt key either.
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(1);
    assert!(!repo.data().join("orcho/receipt-key").exists(), "{out}");
    generate(&repo)?;
    // A key the profile does not trust: said when attesting.
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(0);
    assert!(out.stderr.contains("does not list this key"), "{out}");
    // Sharing with no notes, or a remote with none: nothing to do, said.
    let bare = repo.data().parent().ok_or("no parent")?.join("empty.git");
    repo.git(&["init", "-q", "--bare", bare.as_str()])?;
    repo.git(&["remote", "add", "empty", bare.as_str()])?;
    let out = repo.orcho(&["attest", "fetch", "empty", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["result"], "nothing", "{out}");
    let out = repo.orcho(&["attest", "push", "empty", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["result"], "done", "{out}");
    // A note Orcho cannot read is refused before anything runs, with the way out.
    let huge = "x".repeat(5 << 20);
    let path = repo.data().parent().ok_or("no parent")?.join("huge.txt");
    orcho::core::fs::write_atomic(&path, huge.as_bytes())?;
    repo.git(&[
        "notes",
        "--ref",
        "orcho",
        "add",
        "-f",
        "-F",
        path.as_str(),
        "HEAD",
    ])?;
    let out = repo.orcho(&["verify", "--attest"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains("git notes --ref orcho remove HEAD"),
        "{out}"
    );
    assert!(!out.stderr.contains("running `test`"), "{out}");
    // Outside a repository.
    let outside = repo.data().parent().ok_or("no parent")?.join("plain");
    orcho::core::fs::create_dir_all(&outside)?;
    let out = orcho_at(&outside, &[], &["status", "--commit", "HEAD"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("not in a git repository"), "{out}");
    let out = orcho_at(&outside, &[], &["attest", "push"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("not in a git repository"), "{out}");
    Ok(())
}

#[test]
fn a_store_the_repository_does_not_ignore_is_not_an_uncommitted_change() -> Result {
    // The profile in a package folder; the root ignores only its own store.
    let repo = Repo::with_files(
        "",
        &[("pkg/orcho.yaml", PROFILE), ("pkg/lib.txt", "the answer\n")],
    )?;
    repo.write(".gitignore", "/.orcho/\n")?;
    repo.git(&["rm", "-q", "orcho.yaml"])?;
    repo.git(&["commit", "-q", "-am", "a package"])?;
    generate(&repo)?;
    repo.orcho_in("pkg", &[], &["verify"])?.expect_code(0);
    let out = repo.orcho_in("pkg", &[], &["verify", "--attest"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("attested on"), "{out}");
    Ok(())
}

#[test]
fn verification_attest_makes_a_plain_verify_attest_a_clean_checkout() -> Result {
    let profile = PROFILE.replace("  required: [test]", "  required: [test]\n  attest: true");
    let repo = Repo::with_files(&profile, &[("lib.txt", "the answer\n")])?;
    let key = generate(&repo)?;
    trust(&repo, &profile, "ci", &key)?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("attested on"), "{out}");
    let status = repo.orcho(&["status", "--commit", "HEAD"])?;
    status.expect_code(0);
    // Without the setting, a plain verify attaches nothing.
    let plain = Repo::with_files(PROFILE, &[("lib.txt", "the answer\n")])?;
    generate(&plain)?;
    plain.orcho(&["verify"])?.expect_code(0);
    assert!(plain.git(&["notes", "--ref", "orcho", "list"])?.is_empty());
    Ok(())
}
