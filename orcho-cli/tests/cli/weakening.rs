//! Weakening is surfaced: a change that skips, deletes or guts its own
//! tests, or tells the runner to run fewer, is shown with its file and
//! line, holds `orcho status` back until a person acknowledges it, is said
//! at the agent's stop, needs an operator at delivery and stops the
//! autopilot. Each test plays the agent that wants a green without the
//! work.

use serde_json::Value;

use crate::{
    Result,
    support::{QUICK, Repo},
};

/// A profile whose `test` always passes, as libtest says it: the receipts
/// are present whatever the tests hold, so only the weakening shows.
const ALWAYS_PASSES: &str = "\
schema: 1
name: weakening
extends: builtin:quick
verification:
  commands:
    - name: test
      argv: [sh, -c, \"echo 'test result: ok. 3 passed; 0 failed'\"]
  required: [test]
";

const TEST_FILE: &str = "\
import parse


def test_empty():
    assert parse.parse('') == []


def test_one():
    assert parse.parse('a') == ['a']
";

fn project() -> Result<Repo> {
    Repo::with_files(
        ALWAYS_PASSES,
        &[
            ("tests/test_parse.py", TEST_FILE),
            ("parse.py", "def parse(s):\n    return list(s)\n"),
        ],
    )
}

fn skip_one(repo: &Repo) -> Result {
    repo.write(
        "tests/test_parse.py",
        &TEST_FILE.replace(
            "def test_empty():",
            "import pytest\n\n@pytest.mark.skip(reason='flaky')\ndef test_empty():",
        ),
    )
}

#[test]
fn a_skipped_test_holds_status_back_until_a_person_acknowledges_it() -> Result {
    let repo = project()?;
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);

    // The agent skips the test that fails and proves the rest; `verify`
    // passes, and says what `status` will hold against it.
    skip_one(&repo)?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    assert!(
        out.stderr
            .contains("but this change weakens its own proof (against HEAD)")
            && out.stderr.contains("tests/test_parse.py:6: a skip added"),
        "{out}"
    );
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(
        out.stdout
            .contains("this change weakens its own proof (against HEAD)")
            && out
                .stdout
                .contains("tests/test_parse.py:6: a skip added (skip_marker)"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("not ready: every required receipt is present, but 1 weakening"),
        "{out}"
    );
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(doc["ready"], false, "{doc}");
    let open = &doc["weakenings"]["open"][0];
    assert_eq!(open["detector"], "skip_marker", "{doc}");
    assert_eq!(open["path"], "tests/test_parse.py", "{doc}");
    assert_eq!(open["line"], 6, "{doc}");

    // A person reviews it and acknowledges it.
    let out = repo.orcho(&["status", "--ack-weakening"])?;
    out.expect_code(0);
    assert!(out.stderr.contains("acknowledged 1 weakening(s)"), "{out}");
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("acknowledged by a person: 1 weakening(s) of this change"),
        "{out}"
    );

    // Another skip is another weakening: the acknowledgement covered what
    // the person saw, not what came after.
    let text = std::fs::read_to_string(repo.dir().join("tests/test_parse.py"))?;
    repo.write(
        "tests/test_parse.py",
        &text.replace("def test_one():", "@pytest.mark.skip\ndef test_one():"),
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(
        out.stdout
            .contains("tests/test_parse.py:11: a skip added (skip_marker)"),
        "{out}"
    );
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(
        doc["weakenings"]["open"].as_array().map(Vec::len),
        Some(1),
        "{doc}"
    );
    assert_eq!(doc["weakenings"]["acknowledged"][0]["line"], 6, "{doc}");

    // Committed, the change is the new `HEAD`, and the protected branch is
    // what judges it: `--base` reads the change against `main`.
    repo.git(&["branch", "-M", "main"])?;
    repo.git(&["checkout", "-q", "-b", "work"])?;
    repo.git(&["commit", "-q", "-am", "skip the flaky ones"])?;
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(
            "note: read against HEAD, so what this branch committed since `main` is not; \
             `--base main` reads it too"
        ),
        "{out}"
    );
    let out = repo.orcho(&["status", "--base", "main"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("(against main)"), "{out}");
    Ok(())
}

#[test]
fn an_agent_cannot_acknowledge_its_own_weakening() -> Result {
    let repo = project()?;
    skip_one(&repo)?;
    repo.orcho(&["verify"])?.expect_code(0);
    // From the agent's shell: refused, and nothing recorded.
    let out = repo.orcho_in(".", &[("CLAUDECODE", "1")], &["status", "--ack-weakening"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains("orcho status --ack-weakening")
            && out.stderr.contains("let them review it"),
        "{out}"
    );
    repo.orcho(&["status"])?.expect_code(3);
    // The guard refuses the command in any spelling.
    for command in [
        "orcho status --ack-weakening",
        "orcho status --ack-weak",
        "./target/debug/orcho status --json --ack-weakening",
    ] {
        let (decision, reason) = crate::cheats::guard(&repo, command)?;
        assert_eq!(decision, "deny", "{command}: {reason}");
    }
    // An acknowledgement written by hand into the store counts for nothing.
    let journal = repo.dir().join(".orcho/acknowledged-weakenings.jsonl");
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    let what = doc["weakenings"]["open"][0].clone();
    let line = serde_json::json!({
        "schema": 1,
        "at": "2026-11-27T12:00:00Z",
        "against": "HEAD",
        "ids": [format!("blake3:{}", "0".repeat(64))],
        "what": [what.to_string()],
        "seal": "0".repeat(64),
    });
    orcho::core::fs::write_atomic(&journal, format!("{line}\n").as_bytes())?;
    repo.orcho(&["status"])?.expect_code(3);
    // Nor does a review cache rewritten to say there is nothing: the same
    // state, the same base, the seal of the true review.
    let cache = repo.dir().join(".orcho/cache/review.json");
    let mut cached: Value = serde_json::from_slice(&std::fs::read(&cache)?)?;
    assert_eq!(
        cached["review"]["weakenings"][0]["detector"], "skip_marker",
        "{cached}"
    );
    cached["review"]["weakenings"] = serde_json::json!([]);
    orcho::core::fs::write_atomic(&cache, cached.to_string().as_bytes())?;
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("a skip added (skip_marker)"), "{out}");
    Ok(())
}

#[test]
fn a_receipt_that_runs_fewer_tests_than_the_last_one_is_named() -> Result {
    // Fewer tests run when a file outside the checkout exists: no file of
    // the change shows it, the receipts do.
    let repo = Repo::new(
        "\
schema: 1
name: fewer
extends: builtin:quick
verification:
  commands:
    - name: lint
      argv: [\"true\"]
    - name: test
      argv: [sh, -c, \"if [ -e @CTL@/quiet ]; then echo 'test result: ok. 2 passed; 0 failed; 1 ignored'; else echo 'test result: ok. 3 passed; 0 failed'; fi\"]
  required: [test]
"
        .replace("@CTL@", "../ctl")
        .as_str(),
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);
    orcho::core::fs::write_atomic(&repo.ctl("quiet"), b"")?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(
        out.stdout
            .contains("  orcho.yaml:8: `test` ran fewer tests than an earlier passing receipt")
            && out.stdout.contains("2 passed where 3 did")
            && out.stdout.contains("1 not run where every test ran")
            && out.stdout.contains("(fewer_tests)"),
        "{out}"
    );
    // Running it again does not make the weakened run the baseline.
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("2 passed where 3 did"), "{out}");
    // A person accepts the count: it is the floor from now on.
    repo.orcho(&["status", "--ack-weakening"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);
    // Back to three, then down again: a new finding.
    std::fs::remove_file(repo.ctl("quiet"))?;
    repo.orcho(&["verify"])?.expect_code(0);
    orcho::core::fs::write_atomic(&repo.ctl("quiet"), b"")?;
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(3);
    Ok(())
}

#[test]
fn the_stop_hook_says_what_weakens_the_proof() -> Result {
    let repo = project()?;
    skip_one(&repo)?;
    repo.orcho(&["verify"])?.expect_code(0);
    let document = crate::hook_fixtures::CLAUDE_STOP
        .replace("@CWD@", repo.dir().as_str())
        .replace("@ACTIVE@", "false");
    let out = repo.orcho_with_input(&["hook", "claude-code"], &document)?;
    out.expect_code(0);
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let said = answer.to_string();
    assert!(
        said.contains("weakens its own proof")
            && said.contains("tests/test_parse.py:6: a skip added"),
        "{said}"
    );
    // Not proven either: the refusal says both.
    repo.write("parse.py", "def parse(s):\n    return []\n")?;
    let out = repo.orcho_with_input(&["hook", "claude-code"], &document)?;
    let answer: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("also weakens its own proof") && reason.contains("skip_marker"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn a_run_whose_change_skips_a_test_waits_for_a_person_at_delivery() -> Result {
    let profile = format!("{QUICK}delivery:\n  default_action: approve\n");
    let repo = Repo::with_files(&profile, &[("tests/test_parse.py", TEST_FILE)])?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'touch ok && sed -i \"s/^def test_one/@pytest.mark.skip\\ndef test_one/\" tests/test_parse.py'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    let findings = gate["findings"].as_array().ok_or("no findings")?;
    let found = findings
        .iter()
        .find(|f| f["source"] == "orcho: weakens its own proof")
        .ok_or_else(|| format!("no weakening finding: {gate}"))?;
    assert_eq!(found["file"], "tests/test_parse.py", "{gate}");
    assert_eq!(found["line"], 8, "{gate}");
    assert!(
        found["title"]
            .as_str()
            .is_some_and(|t| t.contains("a skip added (skip_marker)")),
        "{gate}"
    );
    // A person at the terminal decides it.
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run])?.expect_code(0);
    Ok(())
}

#[test]
fn the_autopilot_stops_at_a_change_that_weakens_its_proof() -> Result {
    // The advisor would retry; it is never asked.
    let llm = crate::advisor::Llm::start(vec![crate::advisor::advice(
        "retry_feedback",
        0.9,
        Some("handle empty input in parse()"),
    )]);
    let phase = "#!/bin/sh\nsed -i 's/^def test_empty/@pytest.mark.skip\\ndef test_empty/' tests/test_parse.py\necho 'parse() fails on empty input'\nexit 1\n";
    let repo = Repo::with_files(
        &crate::advisor::profile(&llm.base_url),
        &[("phase.sh", phase), ("tests/test_parse.py", TEST_FILE)],
    )?;
    let out = repo.orcho_in(
        ".",
        &[crate::advisor::KEY],
        &[
            "--json",
            "run",
            "--in-place",
            "--no-interactive",
            "--phase",
            "implement=./phase.sh",
            "--autopilot",
        ],
    )?;
    out.expect_code(4);
    assert!(
        out.stderr.contains("autopilot stopped: weakens_proof")
            && out.stderr.contains("a skip added"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_pull_requests_weakenings_are_listed_for_its_reviewer() -> Result {
    let repo = project()?;
    repo.git(&["branch", "-M", "main"])?;
    repo.git(&["checkout", "-q", "-b", "pr"])?;
    repo.git(&["rm", "-q", "tests/test_parse.py"])?;
    repo.git(&["commit", "-q", "-m", "drop the tests"])?;
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main", "--json"])?;
    let doc = out.json()?;
    let weakenings = doc["weakenings"]
        .as_array()
        .ok_or_else(|| format!("{doc}"))?;
    assert!(
        weakenings
            .iter()
            .any(|w| w["detector"] == "test_deleted" && w["path"] == "tests/test_parse.py"),
        "{doc}"
    );
    let out = repo.orcho(&["status", "--commit", "HEAD", "--base", "main"])?;
    assert!(
        out.stdout.contains("this change weakens its own proof")
            && out
                .stdout
                .contains("tests/test_parse.py: test file deleted (test_deleted)"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_weakening_hidden_among_thousands_of_files_is_still_found() -> Result {
    let repo = project()?;
    repo.orcho(&["verify"])?.expect_code(0);
    // More source files than are read, sorted before the test file (files
    // no weakening can be in, `*.txt`, are not read at all).
    for i in 0..(orcho::proof::MAX_CHANGED_FILES + 10) {
        let dir = repo.dir().join(format!("aaa/{:02}", i % 50));
        std::fs::create_dir_all(&dir)?;
        // Plain files: thousands of them, without a sync each.
        std::io::Write::write_all(
            &mut std::fs::File::create(dir.join(format!("m{i}.py")))?,
            b"X = 1\n",
        )?;
    }
    skip_one(&repo)?;
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    let open = doc["weakenings"]["open"]
        .as_array()
        .ok_or("no weakenings")?;
    assert!(
        open.iter().any(|w| w["detector"] == "skip_marker"),
        "{}",
        doc["weakenings"]
    );
    assert!(
        open.iter().any(|w| w["detector"] == "unread"),
        "{}",
        doc["weakenings"]
    );
    Ok(())
}

#[test]
fn a_test_file_moved_without_git_add_is_not_a_deletion() -> Result {
    let repo = project()?;
    std::fs::create_dir_all(repo.dir().join("tests/unit"))?;
    std::fs::rename(
        repo.dir().join("tests/test_parse.py"),
        repo.dir().join("tests/unit/test_parse.py"),
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    // Moved where its runner does not look: deleted, as far as it goes.
    std::fs::rename(
        repo.dir().join("tests/unit/test_parse.py"),
        repo.dir().join("tests/unit/parse_cases.txt.py.bak"),
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(
        out.stdout.contains("test file deleted (test_deleted)"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_profile_the_change_adds_weakens_nothing() -> Result {
    // The usual start: a project with commits, `orcho init` not committed
    // yet (staged, or not even that).
    let repo = project()?;
    repo.git(&["rm", "-q", "--cached", "orcho.yaml"])?;
    repo.git(&["commit", "-q", "-m", "no profile yet"])?;
    for staged in [false, true] {
        if staged {
            repo.git(&["add", "orcho.yaml"])?;
        }
        repo.orcho(&["verify"])?.expect_code(0);
        let out = repo.orcho(&["status"])?;
        out.expect_code(0);
        assert!(
            out.stdout.contains(
                "this change edits what proves it (against HEAD; a person must review it):"
            ) && out.stdout.contains("command `test` added")
                && !out.stdout.contains("weakens"),
            "{out}"
        );
    }
    Ok(())
}
