//! A change cannot vouch for itself: `--base` judges a commit by the
//! protected branch's keys, `required` list and declarations; signing runs
//! apart from the code under test; proof on the tree survives a squash.
//!
//! Each test plays the attacker on a real repository with a bare remote: a
//! branch that trusts its own key, declares `argv: [true]`, drops a
//! command from `required`, or signs a statement by hand.

use camino::Utf8Path;
use orcho::attest::{Envelope, IN_TOTO_PAYLOAD_TYPE, SigningKey};
use serde_json::{Value, json};

use crate::{
    Result,
    support::{Repo, orcho_at},
};

/// Passes, printing a libtest summary, when `lib.txt` holds the answer.
const PROFILE: &str = "\
schema: 1
name: base
extends: builtin:quick
verification:
  commands:
    - name: test
      argv: [sh, -c, \"grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'\"]
  required: [test]
";

/// A repository on `main` whose profile trusts the `ci` key (made in the
/// repository's data directory); its public key.
fn protected(files: &[(&str, &str)]) -> Result<(Repo, String)> {
    let mut all = vec![("lib.txt", "the answer\n")];
    all.extend_from_slice(files);
    let repo = Repo::with_files(PROFILE, &all)?;
    repo.git(&["branch", "-M", "main"])?;
    let out = repo.orcho(&["key", "generate", "--json"])?;
    out.expect_code(0);
    let key = out.json()?["public_key"]
        .as_str()
        .ok_or("no key")?
        .to_owned();
    repo.write(
        "orcho.yaml",
        &format!("{PROFILE}trust:\n  keys:\n    - name: ci\n      ed25519: {key}\n"),
    )?;
    repo.git(&["commit", "-q", "-am", "trust ci"])?;
    Ok((repo, key))
}

/// An in-toto statement of `command` passing against `tree`, signed by
/// `key`, built by hand: what an attacker with their own key writes.
fn forged(repo: &Repo, key: &SigningKey, command: &str, spec_digest: &str) -> Result<String> {
    let commit = repo.git(&["rev-parse", "HEAD"])?;
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"])?;
    let hex = spec_digest.split_once(':').map_or(spec_digest, |(_, h)| h);
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "_", "digest": {"gitTree": tree, "gitCommit": commit}}],
        "predicateType": "https://in-toto.io/attestation/test-result/v0.1",
        "predicate": {
            "result": "PASSED",
            "configuration": [{"name": command, "digest": {"orchoSpec": hex}}],
            "orcho": {
                "schema": 1, "version": "0.1.0", "command": command,
                "spec_digest": spec_digest, "environment": "default",
                "environment_digest": spec_digest, "exit_code": 0, "exit": "passed",
                "duration_ms": 1, "started_at": "2026-11-27T00:00:00Z",
                "finished_at": "2030-01-01T00:00:00Z", "assertions": []
            }
        }
    });
    let envelope = Envelope::sign(serde_json::to_vec(&statement)?, IN_TOTO_PAYLOAD_TYPE, key);
    Ok(envelope.to_json())
}

/// The spec digest of `test` as `yaml`'s profile declares it.
fn spec_digest_of(yaml: &str) -> Result<String> {
    let profile = orcho::profile::Profile::from_yaml_str(yaml)?;
    let contract = profile.verification.ok_or("no verification")?;
    let spec = contract.command("test").ok_or("no test")?;
    Ok(orcho::receipts::spec_digest(spec).to_string())
}

/// Adds `line` to the notes of HEAD and of its tree.
fn note(repo: &Repo, line: &str) -> Result {
    for object in ["HEAD", "HEAD^{tree}"] {
        repo.git(&["notes", "--ref", "orcho", "add", "-f", "-m", line, object])?;
    }
    Ok(())
}

#[test]
fn a_branch_that_trusts_its_own_key_is_not_ready_by_the_base() -> Result {
    let (repo, ci) = protected(&[])?;
    repo.git(&["checkout", "-q", "-b", "attack"])?;
    // The attacker's key, trusted by the branch beside `ci`, and a PASSED
    // statement of the real declaration that nothing ran.
    let attacker = SigningKey::from_seed([66; 32]);
    let profile = format!(
        "{PROFILE}trust:\n  keys:\n    - name: ci\n      ed25519: {ci}\n    - name: mallory\n      ed25519: {}\n",
        attacker.public().to_base64()
    );
    repo.write("orcho.yaml", &profile)?;
    repo.write("lib.txt", "no longer\n")?;
    repo.git(&["commit", "-q", "-am", "trust myself; break the code"])?;
    let line = forged(&repo, &attacker, "test", &spec_digest_of(PROFILE)?)?;
    note(&repo, &line)?;

    // Judged by itself, the branch vouches for itself, and says so.
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("judged by the commit itself"), "{out}");

    // Judged by `main`, the key it added is no key.
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main", "--json"])?;
    out.expect_code(3);
    let doc = out.json()?;
    assert_eq!(doc["ready"], false, "{doc}");
    assert_eq!(doc["trust_source"], "base main", "{doc}");
    assert_eq!(doc["required"][0]["state"], "invalid", "{doc}");
    let reason = doc["required"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("`mallory`") && reason.contains("this change adds to `trust.keys`"),
        "{doc}"
    );
    assert!(
        doc["edits_what_proves_it"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["section"] == "trust"
                && e["what"].as_str().unwrap_or_default().contains("mallory"))),
        "{doc}"
    );
    // The same from the environment (ORCHO_BASE), in text.
    let out = repo.orcho_in(
        ".",
        &[("ORCHO_BASE", "main")],
        &["status", "--commit", "HEAD"],
    )?;
    out.expect_code(3);
    assert!(out.stdout.contains("judged by base main"), "{out}");
    assert!(
        out.stdout.contains("this change edits what proves it"),
        "{out}"
    );
    assert!(out.stdout.contains("orcho.yaml:"), "{out}");
    assert!(
        out.stdout.contains("a change cannot trust its own key"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_declaration_the_change_rewrites_is_unproven_and_named() -> Result {
    let (repo, _) = protected(&[])?;
    repo.git(&["checkout", "-q", "-b", "attack"])?;
    let weakened = PROFILE.replace(
        "argv: [sh, -c, \"grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'\"]",
        "argv: [sh, -c, \"echo 'test result: ok. 1 passed; 0 failed'\"]",
    );
    let ci = std::fs::read_to_string(repo.dir().join("orcho.yaml"))?;
    let trust = &ci[ci.find("trust:").ok_or("no trust")?..];
    repo.write("orcho.yaml", &format!("{weakened}{trust}"))?;
    repo.write("lib.txt", "no longer\n")?;
    repo.git(&["commit", "-q", "-am", "a test that always passes"])?;
    // A trusted key attests the branch's own declaration: it passes.
    repo.orcho(&["verify", "--attest"])?.expect_code(0);
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(0);

    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main", "--json"])?;
    out.expect_code(3);
    let doc = out.json()?;
    let test = &doc["required"][0];
    assert_eq!(test["state"], "unproven", "{doc}");
    let reason = test["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("declaration changed in this change: argv `sh -c grep -q answer"),
        "{doc}"
    );
    assert!(
        reason.contains("attested only the changed declaration"),
        "{doc}"
    );
    assert_eq!(
        test["declaration_changes"].as_array().map(Vec::len),
        Some(1)
    );

    // CI proves the branch with the base's command: it fails on the
    // broken code, whatever the branch declares.
    let out = repo.orcho(&["verify", "--base", "main"])?;
    out.expect_code(3);
    assert!(out.stderr.contains("judged by base main"), "{out}");
    let out = repo.orcho(&["attest", "sign", "--base", "main"])?;
    out.expect_code(0);
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main", "--json"])?;
    out.expect_code(3);
    let doc = out.json()?;
    assert_eq!(doc["required"][0]["state"], "failed", "{doc}");

    // Fixed, proven as the base declares it: present, the edit still
    // listed for a person.
    repo.write("lib.txt", "the answer\n")?;
    repo.git(&["commit", "-q", "-am", "fix"])?;
    repo.orcho(&["verify", "--base", "main"])?.expect_code(0);
    repo.orcho(&["attest", "sign", "--base", "main"])?
        .expect_code(0);
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main", "--json"])?;
    out.expect_code(0);
    let doc = out.json()?;
    assert_eq!(doc["required"][0]["state"], "present", "{doc}");
    assert!(
        doc["required"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("as the base declares it")),
        "{doc}"
    );
    assert_eq!(doc["edits_what_proves_it"][0]["section"], "verification");
    assert!(
        doc["edits_what_proves_it"][0]["line"].as_u64().is_some(),
        "{doc}"
    );
    Ok(())
}

#[test]
fn a_command_the_change_stops_requiring_is_still_required() -> Result {
    let (repo, _) = protected(&[])?;
    repo.git(&["checkout", "-q", "-b", "attack"])?;
    let text = std::fs::read_to_string(repo.dir().join("orcho.yaml"))?;
    repo.write(
        "orcho.yaml",
        &text.replace("required: [test]", "required: []"),
    )?;
    repo.git(&["commit", "-q", "-am", "nothing required"])?;
    let out = repo.orcho(&["status", "--commit", "HEAD"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("requires no command"), "{out}");
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("✗ test"), "{out}");
    assert!(
        out.stdout
            .contains("this change no longer requires it; the base does"),
        "{out}"
    );
    assert!(out.stdout.contains("`test` is no longer required"), "{out}");
    // The base names what it requires even with no notes at all.
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "nonesuch"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("`nonesuch` names no commit"), "{out}");
    Ok(())
}

#[test]
fn a_squash_merge_of_an_attested_branch_is_ready_by_its_tree() -> Result {
    let (repo, _) = protected(&[])?;
    let bare = repo.data().parent().ok_or("no parent")?.join("origin.git");
    repo.git(&["init", "-q", "--bare", bare.as_str()])?;
    repo.git(&["remote", "add", "origin", bare.as_str()])?;
    repo.git(&["push", "-q", "origin", "main"])?;
    repo.git(&["checkout", "-q", "-b", "feature"])?;
    repo.write("lib.txt", "the answer, twice: answer\n")?;
    repo.git(&["commit", "-q", "-am", "one"])?;
    repo.write("more.txt", "more\n")?;
    repo.git(&["add", "more.txt"])?;
    repo.git(&["commit", "-q", "-m", "two"])?;
    // Proven in two steps: the tests without the key, then the signature.
    repo.orcho(&["verify", "--base", "main"])?.expect_code(0);
    repo.orcho(&["attest", "sign", "--base", "main"])?
        .expect_code(0);
    repo.orcho(&["attest", "push"])?.expect_code(0);

    // Squash-merged on main: a new commit, the same tree.
    repo.git(&["checkout", "-q", "main"])?;
    repo.git(&["merge", "-q", "--squash", "feature"])?;
    repo.git(&["commit", "-q", "-m", "feature, squashed"])?;
    repo.git(&["push", "-q", "origin", "main"])?;
    let clone = bare.parent().ok_or("no parent")?.join("clone");
    repo.git(&["clone", "-q", "-b", "main", bare.as_str(), clone.as_str()])?;
    repo.git(&[
        "-C",
        clone.as_str(),
        "fetch",
        "-q",
        "origin",
        "refs/notes/orcho:refs/notes/orcho",
    ])?;
    let empty = [("XDG_DATA_HOME", "/nonexistent-orcho-data")];
    let out = orcho_at(
        &clone,
        &empty,
        &[
            "status",
            "--commit",
            "HEAD",
            "--base",
            "origin/main",
            "--json",
        ],
    )?;
    out.expect_code(0);
    let doc = out.json()?;
    assert_eq!(doc["required"][0]["state"], "present", "{doc}");
    // Amended with the same tree: still proven.
    repo.git(&["commit", "-q", "--amend", "-m", "feature, reworded"])?;
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main"])?;
    out.expect_code(0);
    // Which envelopes counted, and why.
    let out = repo.orcho(&["attest", "explain", "--commit", "HEAD", "test"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("the tree's note"), "{out}");
    assert!(out.stdout.contains("signed by `ci`, PASSED"), "{out}");
    assert!(out.stdout.contains("— counted"), "{out}");
    let out = repo.orcho(&["attest", "explain", "--commit", "HEAD", "tests"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `test`"), "{out}");
    Ok(())
}

#[test]
fn a_laptops_and_cis_envelopes_coexist_and_each_is_explained() -> Result {
    let (repo, _) = protected(&[])?;
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["attest", "sign"])?.expect_code(0);
    // A second key (a laptop's) signs the same receipts.
    let laptop = repo.data().parent().ok_or("no parent")?.join("laptop");
    let data = [("XDG_DATA_HOME", laptop.as_str())];
    repo.orcho_in(".", &data, &["key", "generate"])?
        .expect_code(0);
    repo.orcho_in(".", &data, &["verify"])?.expect_code(0);
    repo.orcho_in(".", &data, &["attest", "sign"])?
        .expect_code(0);
    let note = repo.git(&["notes", "--ref", "orcho", "show", "HEAD"])?;
    assert_eq!(note.lines().count(), 2, "{note}");
    let out = repo.orcho(&["attest", "explain", "--json"])?;
    out.expect_code(0);
    let doc = out.json()?;
    let considered = doc["commands"][0]["considered"]
        .as_array()
        .ok_or("no list")?;
    // Two notes (the commit's and the tree's), identical lines verified
    // once: one counted line, one untrusted.
    assert_eq!(
        considered.iter().filter(|c| c["counted"] == true).count(),
        1,
        "{doc}"
    );
    assert!(
        considered.iter().any(|c| c["why"]
            .as_str()
            .unwrap_or_default()
            .contains("does not list")),
        "{doc}"
    );
    Ok(())
}

#[test]
fn signing_runs_no_command_and_signs_only_the_commits_tree() -> Result {
    let (repo, _) = protected(&[])?;
    // Nothing run yet: nothing to sign, said per command.
    let out = repo.orcho(&["attest", "sign", "--json"])?;
    out.expect_code(3);
    let doc = out.json()?;
    assert!(
        doc["left_out"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("no receipt")),
        "{doc}"
    );
    // Receipts of uncommitted files prove nothing about the commit.
    repo.write("lib.txt", "the answer, uncommitted\n")?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["attest", "sign"])?;
    out.expect_code(3);
    assert!(
        out.stdout.contains("differ from commit"),
        "an uncommitted edit is not the commit's tree\n{out}"
    );
    repo.git(&["checkout", "-q", "--", "lib.txt"])?;
    // A marker the command would leave: signing never runs it.
    let marker = repo.ctl("ran");
    let profile = std::fs::read_to_string(repo.dir().join("orcho.yaml"))?.replace(
        "grep -q answer lib.txt",
        &format!("touch {marker}; grep -q answer lib.txt"),
    );
    repo.write("orcho.yaml", &profile)?;
    repo.git(&["commit", "-q", "-am", "leave a marker"])?;
    repo.orcho(&["verify"])?.expect_code(0);
    std::fs::remove_file(&marker)?;
    let out = repo.orcho(&["attest", "sign", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["attested"][0], "test", "{out}");
    assert!(!marker.exists(), "attest sign ran a command");
    Ok(())
}

/// The key-theft test's command: it looks for `needle` in every process's
/// environment it can read, in the key files, and in its parent's memory
/// (through its maps), and writes what it found to `found`.
const THIEF: &str = r#"
import os, sys
needles = [n.encode() for n in sys.argv[1].split(",") if n]
found = []
def look(where, data):
    for n in needles:
        if n in data:
            found.append(where)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                look(f"/proc/{pid}/environ", f.read())
        except OSError:
            pass
for path in sys.argv[3:]:
    try:
        with open(path, "rb") as f:
            look(path, f.read())
    except OSError:
        pass
ppid = os.getppid()
try:
    with open(f"/proc/{ppid}/maps") as maps, open(f"/proc/{ppid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                look(f"/proc/{ppid}/mem", mem.read(end - start))
            except (OSError, ValueError, OverflowError):
                pass
except OSError:
    pass
with open(sys.argv[2], "w") as f:
    f.write("\n".join(found))
print("test result: ok. 1 passed; 0 failed")
"#;

/// How a test runs `orcho` for the key-theft test: as the unprivileged
/// user `nobody` when this process is root (root reads any process's
/// memory; the documentation says so), else as itself.
fn as_unprivileged(
    dir: &Utf8Path,
    data: &Utf8Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> Result<crate::support::Out> {
    let orcho = env!("CARGO_BIN_EXE_orcho");
    let mut all: Vec<(&str, &str)> =
        vec![("XDG_DATA_HOME", data.as_str()), ("HOME", data.as_str())];
    all.extend_from_slice(envs);
    if rustix::process::geteuid().is_root() {
        let mut argv = vec![
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            orcho,
        ];
        argv.extend_from_slice(args);
        return crate::support::run_program(dir, "setpriv", &argv, &all);
    }
    crate::support::run_program(dir, orcho, args, &all)
}

#[test]
fn no_key_is_within_reach_of_the_command_under_test() -> Result {
    if !crate::support::have("python3") || !crate::support::have("setpriv") {
        if std::env::var_os("CI").is_some() {
            return Err("python3 and setpriv (util-linux) are needed".into());
        }
        eprintln!("skipped: python3 or setpriv is not installed");
        return Ok(());
    }
    let (repo, _) = protected(&[("thief.py", THIEF)])?;
    let tmp = repo.data().parent().ok_or("no parent")?.to_owned();
    // The signing key as CI holds it: a secret, in no file of the runner.
    let key_file = repo.data().join("orcho/signing-key");
    let signing = std::fs::read_to_string(&key_file)?.trim().to_owned();
    std::fs::remove_file(&key_file)?;
    let receipt_secret = "ci-receipt-secret-0123456789abcdef";
    let found = tmp.join("found.txt");
    // The runner's data directory: where key files would be.
    let ci_data = tmp.join("ci-data");
    orcho::core::fs::create_dir_all(&ci_data)?;
    let argv = format!(
        "[python3, thief.py, \"{signing},{receipt_secret}\", \"{found}\", \"{}\", \"{}\", \"{}\"]",
        ci_data.join("orcho/signing-key"),
        ci_data.join("orcho/receipt-key"),
        key_file,
    );
    let profile = std::fs::read_to_string(repo.dir().join("orcho.yaml"))?.replace(
        "argv: [sh, -c, \"grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'\"]",
        &format!("argv: {argv}"),
    );
    repo.write("orcho.yaml", &profile)?;
    repo.git(&["add", "thief.py"])?;
    repo.git(&["commit", "-q", "-am", "a test that steals"])?;
    // Every file open to the unprivileged user the recipe runs as.
    crate::support::chown_all(&tmp, 65534)?;
    let run =
        |envs: &[(&str, &str)], args: &[&str]| as_unprivileged(repo.dir(), &ci_data, envs, args);

    // Step 1, the tests: the receipt secret in orcho's environment (it
    // leaves it at once), no signing key anywhere.
    let out = run(
        &[("ORCHO_RECEIPT_KEY", receipt_secret)],
        &["verify", "--base", "main"],
    )?;
    out.expect_code(0);
    let stolen = std::fs::read_to_string(&found)?;
    assert_eq!(
        stolen, "",
        "the command under test found a key: {stolen}\n{out}"
    );

    // Step 2, the signature: the key in the environment of a command that
    // runs nothing of the repository.
    std::fs::remove_file(&found)?;
    let out = run(
        &[
            ("ORCHO_RECEIPT_KEY", receipt_secret),
            ("ORCHO_SIGNING_KEY", &signing),
        ],
        &["attest", "sign", "--base", "main"],
    )?;
    out.expect_code(0);
    assert!(!found.exists(), "attest sign ran the command\n{out}");
    let out = run(&[], &["status", "--commit", "HEAD", "--base", "main"])?;
    out.expect_code(0);

    // One step with the key and commands to run: refused before anything
    // runs.
    let out = run(&[("ORCHO_SIGNING_KEY", &signing)], &["verify", "--attest"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("`orcho attest sign`"), "{out}");
    assert!(!found.exists(), "nothing ran\n{out}");
    Ok(())
}

/// A note of `lines` lines, each a different kind of junk.
fn junk_note(bytes: usize) -> String {
    let mut note = String::with_capacity(bytes + 256);
    let mut i = 0u64;
    while note.len() < bytes - 200 {
        let line = match i % 4 {
            0 => format!("not json {i}"),
            1 => format!("{{\"payload\":\"{i}\"}}"),
            2 => format!(
                "{{\"payloadType\":\"text/plain-{i}\",\"payload\":\"e30=\",\"signatures\":[]}}"
            ),
            _ => format!(
                "{{\"payloadType\":\"application/vnd.in-toto+json\",\"payload\":\"e30=\",\"signatures\":[{{\"keyid\":\"{i:064x}\",\"sig\":\"AAAA\"}}]}}"
            ),
        };
        note.push_str(&line);
        note.push('\n');
        i += 1;
    }
    note
}

#[test]
fn a_junk_note_stays_small_in_output_and_memory() -> Result {
    let commands: String = (0..50)
        .map(|i| format!("    - {{ name: c{i}, argv: [\"true\"] }}\n"))
        .collect();
    let required: Vec<String> = (0..50).map(|i| format!("c{i}")).collect();
    let profile = format!(
        "schema: 1\nname: junk\nextends: builtin:quick\nverification:\n  commands:\n{commands}  required: [{}]\n",
        required.join(", ")
    );
    let repo = Repo::new(&profile)?;
    let note = junk_note(orcho::attest::MAX_NOTE_BYTES - 1024);
    let path = repo.ctl("note");
    orcho::core::fs::write_atomic(&path, note.as_bytes())?;
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
    let (out, max_rss_kib) =
        crate::support::with_max_rss(repo.dir(), &["status", "--commit", "HEAD"])?;
    out.expect_code(3);
    assert!(
        out.stdout.len() < 64 * 1024,
        "{} bytes of output",
        out.stdout.len()
    );
    assert!(
        out.stdout.contains("more line(s)"),
        "{}",
        &out.stdout[..2000.min(out.stdout.len())]
    );
    assert!(
        max_rss_kib < 64 * 1024,
        "{max_rss_kib} KiB of memory for a 4 MiB note"
    );
    // The JSON document too.
    let (out, _) =
        crate::support::with_max_rss(repo.dir(), &["status", "--commit", "HEAD", "--json"])?;
    out.expect_code(3);
    assert!(out.stdout.len() < 64 * 1024, "{} bytes", out.stdout.len());
    let doc: Value = out.json()?;
    assert_eq!(doc["required"].as_array().map(Vec::len), Some(50));
    Ok(())
}

#[test]
fn a_run_that_edits_what_proves_it_waits_for_a_person_at_delivery() -> Result {
    // The default would approve by itself; the edit stops it there.
    let profile = format!(
        "{}delivery:\n  default_action: approve\n",
        crate::support::QUICK
    );
    let repo = Repo::new(&profile)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'touch ok && sed -i s/test.-f.ok/true/ orcho.yaml'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    let out = repo.orcho(&["delivery", "show", &run, "--json"])?;
    out.expect_code(0);
    let gate = out.json()?;
    let findings = gate["findings"].as_array().ok_or("no findings")?;
    let edit = findings
        .iter()
        .find(|f| f["source"] == "orcho: edits what proves it")
        .ok_or_else(|| format!("no edit finding: {gate}"))?;
    assert!(
        edit["title"]
            .as_str()
            .is_some_and(|t| t.contains("command `test`: argv `sh -c test -f ok` → `sh -c true`")),
        "{gate}"
    );
    assert_eq!(edit["file"], "orcho.yaml", "{gate}");
    assert_eq!(edit["line"], 6, "{gate}");
    let out = repo.orcho(&["delivery", "show", &run])?;
    assert!(out.stdout.contains("edits what proves it"), "{out}");
    // A person at the terminal decides it.
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run])?.expect_code(0);
    Ok(())
}

#[test]
fn the_two_job_recipe_signs_in_a_fresh_clone_what_the_test_job_recorded() -> Result {
    let (repo, _) = protected(&[])?;
    let tmp = repo.data().parent().ok_or("no parent")?.to_owned();
    let bare = tmp.join("origin.git");
    repo.git(&["init", "-q", "--bare", bare.as_str()])?;
    repo.git(&["remote", "add", "origin", bare.as_str()])?;
    repo.git(&["push", "-q", "origin", "main"])?;
    let secret = std::fs::read_to_string(repo.data().join("orcho/signing-key"))?
        .trim()
        .to_owned();
    let per_run = [("ORCHO_RECEIPT_KEY", "ci-receipts-4242-1")];
    // The test job: its own clone, no key.
    let test_job = tmp.join("test-job");
    repo.git(&[
        "clone",
        "-q",
        "-b",
        "main",
        bare.as_str(),
        test_job.as_str(),
    ])?;
    let no_key = [("XDG_DATA_HOME", "/nonexistent-test-job"), per_run[0]];
    orcho_at(&test_job, &no_key, &["verify", "--base", "origin/main"])?.expect_code(0);
    // The sign job: a fresh clone elsewhere, the receipts as an artifact.
    let sign_job = tmp.join("sign-job");
    repo.git(&[
        "clone",
        "-q",
        "-b",
        "main",
        bare.as_str(),
        sign_job.as_str(),
    ])?;
    crate::support::copy_dir(
        &test_job.join(".orcho/receipts"),
        &sign_job.join(".orcho/receipts"),
    )?;
    let signing = [
        ("XDG_DATA_HOME", "/nonexistent-sign-job"),
        per_run[0],
        ("ORCHO_SIGNING_KEY", secret.as_str()),
    ];
    let out = orcho_at(
        &sign_job,
        &signing,
        &["attest", "sign", "--base", "origin/main"],
    )?;
    out.expect_code(0);
    assert!(out.stdout.contains("attested on"), "{out}");
    let out = orcho_at(
        &sign_job,
        &[("XDG_DATA_HOME", "/nonexistent-sign-job")],
        &["status", "--commit", "HEAD", "--base", "origin/main"],
    )?;
    out.expect_code(0);
    Ok(())
}

#[test]
fn a_tree_with_a_submodule_is_signed_from_both_repositories_objects() -> Result {
    let (repo, _) = protected(&[])?;
    let tmp = repo.data().parent().ok_or("no parent")?.to_owned();
    let lib = tmp.join("lib");
    repo.git(&["init", "-q", "-b", "main", lib.as_str()])?;
    orcho::core::fs::write_atomic(&lib.join("lib.c"), b"int answer(void) { return 42; }\n")?;
    repo.git(&["-C", lib.as_str(), "add", "lib.c"])?;
    repo.git(&["-C", lib.as_str(), "commit", "-q", "-m", "lib"])?;
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        lib.as_str(),
        "vendor/lib",
    ])?;
    repo.git(&["commit", "-q", "-m", "a submodule"])?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["attest", "sign"])?;
    out.expect_code(0);
    repo.orcho(&["status", "--commit", "HEAD", "--base", "main"])?
        .expect_code(0);
    // An uncommitted edit inside the submodule is not the commit's tree.
    orcho::core::fs::write_atomic(
        &repo.dir().join("vendor/lib/lib.c"),
        b"int answer(void) { return 41; }\n",
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["attest", "sign"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("differ from commit"), "{out}");
    Ok(())
}
