//! `orcho status`: exit 0 only when every required receipt is present, 3
//! otherwise, and `--json` names the class of each receipt.

use crate::{
    Result,
    support::{Out, QUICK, Repo},
};

/// `orcho status --json`, checked for the exit code that goes with
/// `status` and for the `ready` and `required[0].status` fields.
fn expect_status(repo: &Repo, status: &str) -> Result<Out> {
    let out = repo.orcho(&["status", "--json"])?;
    let ready = status == "present";
    out.expect_code(if ready { 0 } else { 3 });
    let doc = out.json()?;
    assert_eq!(doc["ready"], ready, "{out}");
    assert_eq!(doc["required"][0]["command"], "test", "{out}");
    assert_eq!(doc["required"][0]["status"], status, "{out}");
    Ok(out)
}

/// Runs `orcho verify`, which passes when `ok` exists.
fn verify(repo: &Repo, passes: bool) -> Result {
    let out = repo.orcho(&["verify", "--json"])?;
    out.expect_code(if passes { 0 } else { 3 });
    assert_eq!(out.json()?["passed"], passes, "{out}");
    Ok(())
}

#[test]
fn present_after_a_passing_verify() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    verify(&repo, true)?;
    expect_status(&repo, "present")?;
    // Text output too: a table and the verdict.
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("present"), "{out}");
    assert!(out.stdout.contains("ready:"), "{out}");
    Ok(())
}

#[test]
fn missing_when_it_never_ran() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = expect_status(&repo, "missing")?;
    assert_eq!(out.json()?["required"][0]["next_action"], "re-run");
    Ok(())
}

#[test]
fn failed_when_the_command_exits_1() -> Result {
    let repo = Repo::new(QUICK)?;
    verify(&repo, false)?;
    let out = expect_status(&repo, "failed")?;
    assert_eq!(out.json()?["required"][0]["next_action"], "fix");
    // In words: fix it, not just run it again.
    let out = repo.orcho(&["status"])?;
    assert!(out.stdout.contains("fix: exited with code 1"), "{out}");
    assert!(
        out.stdout
            .contains("not ready: fix what makes `test` fail, then `orcho verify`"),
        "{out}"
    );
    Ok(())
}

#[test]
fn stale_when_a_tracked_file_changes_after_the_run() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    verify(&repo, true)?;
    expect_status(&repo, "present")?;
    repo.write("README", "changed after the receipt\n")?;
    expect_status(&repo, "stale")?;
    // Back to the contents it ran against: present again.
    repo.write("README", "a checkout for the CLI tests\n")?;
    expect_status(&repo, "present")?;
    Ok(())
}

#[test]
fn stale_names_the_paths_that_changed_and_a_command_that_changed_its_own() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    verify(&repo, true)?;
    repo.write("README", "changed after the receipt\n")?;
    repo.write("notes.txt", "new\n")?;
    let out = expect_status(&repo, "stale")?;
    let doc = out.json()?;
    let reason = doc["required"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the subject changed since it ran: `notes.txt` added, `README` changed"),
        "{out}"
    );
    let text = repo.orcho(&["status"])?;
    assert!(text.stdout.contains("`notes.txt` added"), "{text}");

    // A command that writes into its own subject once (as `cargo test`
    // writes a first Cargo.lock) runs once more against it, and is ready.
    let repo = Repo::with_files(
        &QUICK.replace("test -f ok", "echo run >> runs.txt; echo made > made.txt"),
        &[],
    )?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    let said = format!("{out}");
    assert!(
        said.contains(
            "changed the files it is bound to while it ran (`made.txt` added, `runs.txt` added); \
             running it once more, against them"
        ),
        "{out}"
    );
    assert_eq!(said.matches("✓ `test`").count(), 2, "{out}");
    expect_status(&repo, "stale")?;
    Ok(())
}

#[test]
fn a_command_that_writes_its_subject_once_is_run_again_and_ready() -> Result {
    let once = "[ -f made.txt ] || echo made > made.txt";
    let repo = Repo::with_files(&QUICK.replace("test -f ok", once), &[])?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    let said = format!("{out}");
    assert!(
        said.contains("(`made.txt` added); running it once more, against them"),
        "{out}"
    );
    assert_eq!(said.matches("✓ `test`").count(), 2, "{out}");
    assert!(!said.contains("stale"), "{out}");
    let status = expect_status(&repo, "present")?;
    status.expect_code(0);
    // The document names the last run only.
    let doc = repo.orcho(&["verify", "--json"])?.json()?;
    assert_eq!(doc["commands"].as_array().map(Vec::len), Some(1), "{doc}");

    // One that writes them every time runs twice, no more, and says what
    // to do.
    let repo = Repo::with_files(&QUICK.replace("test -f ok", "echo run >> runs.txt"), &[])?;
    let out = repo.orcho(&["verify"])?;
    let said = format!("{out}");
    assert_eq!(said.matches("✓ `test`").count(), 2, "{out}");
    assert!(
        said.contains("changed the files it is bound to again while it ran (`runs.txt` changed)"),
        "{out}"
    );
    assert!(
        said.contains("it writes them every time it runs: commit or ignore"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("runs.txt"))?,
        "run\nrun\n"
    );
    let out = expect_status(&repo, "stale")?;
    assert!(
        format!("{out}").contains("it changed its own subject while running: `runs.txt` changed"),
        "{out}"
    );

    // One that rewrites them as they were: stale too (a run that changed
    // what it checks proves neither state), and said at once.
    let repo = Repo::with_files(&QUICK.replace("test -f ok", "echo made > made.txt"), &[])?;
    let out = repo.orcho(&["verify"])?;
    let said = format!("{out}");
    assert_eq!(said.matches("✓ `test`").count(), 2, "{out}");
    assert!(
        said.contains(
            "but `test` wrote files it is bound to while it ran (`made.txt`), so its receipt is stale"
        ),
        "{out}"
    );
    expect_status(&repo, "stale")?;
    Ok(())
}

#[test]
fn invalid_when_the_receipt_is_tampered_with() -> Result {
    let repo = Repo::new(QUICK)?;
    verify(&repo, false)?;
    // Pass the failed run off as a success: the digest no longer matches.
    let latest = repo.dir().join(".orcho/receipts/test/latest.json");
    let text = std::fs::read_to_string(&latest)?;
    assert!(text.contains("\"code\": 1"), "{text}");
    let tampered = text.replacen("\"code\": 1", "\"code\": 0", 1);
    orcho::core::fs::write_atomic(&latest, tampered.as_bytes())?;
    let out = expect_status(&repo, "invalid")?;
    assert_eq!(out.json()?["required"][0]["next_action"], "investigate");
    Ok(())
}

#[test]
fn a_terminal_a_home_or_a_locale_of_its_own_keeps_receipts_present() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    let out = repo.orcho_in(".", &[("TERM", "xterm"), ("LANG", "C")], &["verify"])?;
    out.expect_code(0);
    // As inside tmux, in another shell, with another home.
    let out = repo.orcho_in(
        ".",
        &[
            ("TERM", "tmux-256color"),
            ("LANG", "C.UTF-8"),
            ("HOME", "/nonexistent-home"),
        ],
        &["status", "--json"],
    )?;
    out.expect_code(0);
    assert_eq!(out.json()?["required"][0]["status"], "present", "{out}");
    Ok(())
}

/// QUICK with an environment that binds the host's `APP_MODE`.
const INHERITS: &str = "\
schema: 1
name: cli-inherit
extends: builtin:quick
verification:
  environments:
    - name: default
      inherit: [APP_MODE]
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
";

#[test]
fn a_changed_declared_variable_stales_a_receipt_and_is_named() -> Result {
    let repo = Repo::with_files(INHERITS, &[("ok", "")])?;
    repo.orcho_in(".", &[("APP_MODE", "fast")], &["verify"])?
        .expect_code(0);
    let out = repo.orcho_in(".", &[("APP_MODE", "fast")], &["status"])?;
    out.expect_code(0);
    let out = repo.orcho_in(".", &[("APP_MODE", "thorough")], &["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("`APP_MODE` changed"), "{out}");
    Ok(())
}

#[test]
fn a_run_leaves_the_checkouts_receipts_alone_and_a_delivery_carries_its_own_over() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    verify(&repo, true)?;
    expect_status(&repo, "present")?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo new > feature.txt'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    // The run proved its worktree; the checkout's receipt is as it was.
    expect_status(&repo, "present")?;
    assert!(
        repo.run_dir(&run)
            .join("receipts/test/latest.json")
            .is_file()
    );

    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    let out = repo.orcho(&["resume", &run, "--json"])?;
    out.expect_code(0);
    assert!(
        out.json()?["reason"]
            .as_str()
            .is_some_and(|r| r.contains("receipts carried over: test")),
        "{out}"
    );
    // The delivered tree is the one the run proved: its receipt is the
    // checkout's now.
    let out = expect_status(&repo, "present")?;
    let latest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        repo.dir().join(".orcho/receipts/test/latest.json"),
    )?)?;
    assert_eq!(
        latest["subject_before"],
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(
            repo.run_dir(&run).join("receipts/test/latest.json")
        )?)?["subject_before"],
        "{out}"
    );
    Ok(())
}

/// A declared environment whose assertion is that the file `marker` exists.
const ASSERTED: &str = "\
schema: 1
name: cli-asserted
extends: builtin:quick
verification:
  environments:
    - name: default
      assertions:
        - file_exists: marker
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
";

#[test]
fn verify_checks_the_declared_environment_first_and_status_shows_it() -> Result {
    let repo = Repo::with_files(ASSERTED, &[("ok", "")])?;
    // Never checked: said so, with what checks it.
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("ENVIRONMENT"), "{out}");
    assert!(
        out.stdout.contains("not_checked") && out.stdout.contains("`orcho verify` checks it"),
        "{out}"
    );

    // The assertion fails: said before the command's result, and the
    // command's receipt records it.
    let out = repo.orcho(&["verify"])?;
    out.expect_code(3);
    let env_at = out.stdout.find("✗ environment `default`");
    let test_at = out.stdout.find("`test`");
    assert!(env_at.is_some() && env_at < test_at, "{out}");
    assert!(out.stdout.contains("file_exists `marker` failed"), "{out}");
    let doc = repo.orcho(&["verify", "--json"])?.json()?;
    assert_eq!(doc["environments"][0]["environment"], "default", "{doc}");
    assert_eq!(doc["environments"][0]["passed"], false, "{doc}");
    let status = repo.orcho(&["status", "--json"])?;
    status.expect_code(3);
    let status = status.json()?;
    assert_eq!(status["environments"][0]["status"], "failed", "{status}");
    assert_eq!(status["required"][0]["status"], "failed", "{status}");

    // Fixed: the environment passes, and so does the receipt.
    repo.write("marker", "")?;
    repo.git(&["add", "marker"])?;
    repo.git(&["commit", "-qm", "marker"])?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("✓ environment `default`: 1 assertion(s) held"),
        "{out}"
    );
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("passed"), "{out}");
    Ok(())
}

#[test]
fn an_edit_inside_a_submodule_stales_the_receipt_and_status_names_it() -> Result {
    let repo = Repo::with_files(
        &QUICK.replace("test -f ok", "test -f libs/lib/lib.txt"),
        &[],
    )?;
    // A library repository beside the checkout, added as a submodule.
    let lib = repo.ctl("lib");
    let lib = lib.as_str();
    orcho::core::fs::create_dir_all(&repo.ctl("lib"))?;
    orcho::core::fs::write_atomic(&repo.ctl("lib/lib.txt"), b"v1\n")?;
    let who = [
        "-c",
        "user.name=CLI Test",
        "-c",
        "user.email=cli@example.com",
    ];
    repo.git(&["-C", lib, "init", "-q"])?;
    repo.git(&["-C", lib, "add", "-A"])?;
    repo.git(&[&who[..], &["-C", lib, "commit", "-qm", "lib"]].concat())?;
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        lib,
        "libs/lib",
    ])?;
    repo.git(&["commit", "-qm", "submodule"])?;

    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);
    orcho::core::fs::write_atomic(&repo.dir().join("libs/lib/lib.txt"), b"v2\n")?;
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("submodule `libs/lib` changed"), "{out}");
    Ok(())
}

#[test]
fn outside_git_init_says_what_a_receipt_is_bound_to_and_build_output_is_left_out() -> Result {
    use orcho::core::fs::write_atomic;
    let tmp = tempfile::tempdir()?;
    let dir = camino::Utf8PathBuf::try_from(tmp.path().join("crate"))?;
    std::fs::create_dir_all(dir.join("src"))?;
    write_atomic(&dir.join("Cargo.toml"), b"[package]\nname = \"x\"\n")?;
    write_atomic(&dir.join("src/lib.rs"), b"\n")?;
    let out = crate::support::orcho_at(&dir, &[], &["init"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("outside git, a receipt is bound to every file here"),
        "{out}"
    );
    // A command that writes build output as it runs.
    write_atomic(
        &dir.join("orcho.yaml"),
        b"schema: 1\nname: nogit\nextends: builtin:quick\nverification:\n  commands:\n    - { name: test, argv: [sh, -c, \"mkdir -p target/debug __pycache__ && date > target/debug/out && date > __pycache__/m.pyc\"] }\n  required: [test]\n",
    )?;
    crate::support::orcho_at(&dir, &[], &["verify"])?.expect_code(0);
    // What the run wrote is build output: the receipt stays present.
    let out = crate::support::orcho_at(&dir, &[], &["status"])?;
    out.expect_code(0);
    Ok(())
}

#[test]
fn a_command_past_its_timeout_pauses_for_a_waiver_or_a_halt_and_spends_no_attempt() -> Result {
    let profile = "\
schema: 1
name: cli-slow
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sleep, \"30\"], timeout: 1s }
  required: [test]
";
    let repo = Repo::new(profile)?;
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--json",
        "--phase",
        "implement=true",
    ])?;
    out.expect_no_panic();
    out.expect_code(4);
    let doc = out.json()?;
    assert_eq!(doc["awaiting"], "handoff", "{out}");
    let run = crate::support::run_id(&doc)?;
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    // One attempt, not one per repair each waiting the whole timeout.
    assert_eq!(
        evidence["phases"].as_array().map(Vec::len),
        Some(1),
        "{evidence}"
    );
    assert_eq!(
        &evidence["handoffs"][0]["available_actions"],
        &serde_json::json!(["continue_with_waiver", "halt"]),
        "{evidence}"
    );
    let shown = repo.orcho(&["handoff", "show", &run])?;
    assert!(
        shown
            .stdout
            .contains("`test` did not finish within its timeout (1s)"),
        "{shown}"
    );
    Ok(())
}

#[test]
fn an_environment_not_as_declared_pauses_for_a_waiver_or_a_halt_and_spends_no_attempt() -> Result {
    let repo = Repo::with_files(ASSERTED, &[("ok", "")])?;
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--json",
        "--phase",
        "implement=true",
    ])?;
    out.expect_no_panic();
    out.expect_code(4);
    let doc = out.json()?;
    assert_eq!(doc["awaiting"], "handoff", "{out}");
    let run = crate::support::run_id(&doc)?;
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    // One attempt: the machine is not the agent's to fix.
    assert_eq!(
        evidence["phases"].as_array().map(Vec::len),
        Some(1),
        "{evidence}"
    );
    let actions = &evidence["handoffs"][0]["available_actions"];
    assert_eq!(
        actions,
        &serde_json::json!(["continue_with_waiver", "halt"]),
        "{evidence}"
    );
    let shown = repo.orcho(&["handoff", "show", &run])?;
    assert!(
        shown
            .stdout
            .contains("the environment `default` is not as declared"),
        "{shown}"
    );
    // A retry is refused, a waiver takes the run on.
    let refused = repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "retry_feedback",
        "--text",
        "again",
    ])?;
    refused.expect_code(1);
    assert!(
        refused
            .stderr
            .contains("`retry_feedback` is not available; available: continue_with_waiver, halt"),
        "{refused}"
    );
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "continue_with_waiver",
        "--text",
        "this machine has no marker; CI has",
    ])?
    .expect_code(0);
    let out = repo.orcho(&[
        "resume",
        &run,
        "--no-interactive",
        "--phase",
        "implement=true",
    ])?;
    out.expect_no_panic();
    assert_ne!(out.code(), Some(4), "{out}");
    Ok(())
}

#[test]
fn a_coloured_failure_is_kept_and_shown_without_its_escape_sequences() -> Result {
    let profile = "\
schema: 1
name: coloured
phases:
  - name: implement
    role: implement
verification:
  commands:
    - name: test
      argv: [./test.sh]
  required: [test]
";
    // What vitest prints on a terminal: colours, and a hyperlink.
    let script = "#!/bin/sh\n\
        printf '\\033[31m FAIL \\033[39m src/parse.test.ts > parse > empty\\r\\n'\n\
        printf 'at \\033]8;;file:///src/parse.ts\\033\\\\parse.ts\\033]8;;\\033\\\\:3\\n'\n\
        exit 1\n";
    let repo = Repo::with_files(profile, &[("test.sh", script)])?;
    let shown = repo.orcho(&["verify", "--json"])?;
    shown.expect_code(3);
    let text = repo.orcho(&["status"])?;
    for out in [&shown, &text] {
        assert!(
            !out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'),
            "{out}"
        );
    }
    let said = repo.orcho(&["verify"])?;
    assert!(
        !said.stdout.contains('\u{1b}') && !said.stderr.contains('\u{1b}'),
        "{said}"
    );
    let both = format!("{}{}", said.stdout, said.stderr);
    assert!(
        both.contains(" FAIL  src/parse.test.ts > parse > empty"),
        "{said}"
    );
    assert!(both.contains("at parse.ts:3"), "{said}");
    // The receipt keeps the tail as shown.
    let mut kept = 0;
    for entry in walk(&repo.dir().join(".orcho"))? {
        let bytes = std::fs::read(&entry)?;
        if String::from_utf8_lossy(&bytes).contains("parse > empty")
            && entry.extension() == Some("json")
        {
            kept += 1;
            assert!(
                !bytes.contains(&0x1b) && !String::from_utf8_lossy(&bytes).contains("\\u001b"),
                "{entry}"
            );
        }
    }
    assert!(kept > 0, "no receipt kept the tail");
    Ok(())
}

#[test]
fn vitest_and_jest_failures_are_named_even_past_the_tail() -> Result {
    // The failing tests' headers, then a long diff each, then the summary:
    // the names are far above the tail Orcho keeps, the summary in it.
    let diff = "- Expected\n+ Received\n".to_owned() + &"-   \"line\",\n".repeat(400);
    let vitest = format!(
        " FAIL  src/parse.test.ts > parse > empty\n{diff}\n FAIL  src/parse.test.ts > parse > one\n{diff}\n Test Files  1 failed (1)\n      Tests  2 failed | 1 passed (3)\n"
    );
    let jest = format!(
        "FAIL ./parse.test.js\n  \u{25cf} parse \u{203a} empty\n\n{diff}\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 1 passed, 2 total\n"
    );
    for (runner, output, names) in [
        (
            "vitest",
            vitest,
            "`src/parse.test.ts > parse > empty`, `src/parse.test.ts > parse > one`",
        ),
        ("jest", jest, "`parse \u{203a} empty`"),
    ] {
        let profile = "\
schema: 1
name: js
phases:
  - name: implement
    role: implement
verification:
  commands:
    - name: test
      argv: [sh, -c, 'cat out.txt; exit 1']
  required: [test]
";
        let repo = Repo::with_files(profile, &[("out.txt", &output)])?;
        let verify = repo.orcho(&["verify"])?;
        verify.expect_code(3);
        let tail = format!("{}{}", verify.stdout, verify.stderr);
        assert!(
            (tail.contains("Tests ") && tail.contains("2 failed"))
                || tail.contains("1 failed, 1 passed, 2 total"),
            "{runner}: the summary is in the tail: {verify}"
        );
        let status = repo.orcho(&["status"])?;
        assert!(
            status.stdout.contains(&format!("(failing: {names})")),
            "{runner}: {status}"
        );
        let json = repo.orcho(&["status", "--json"])?;
        assert!(json.stdout.contains("(failing: "), "{runner}: {json}");
    }
    Ok(())
}

#[test]
fn ctrl_c_during_verify_leaves_a_receipt_that_says_run_it_again() -> Result {
    let repo = Repo::new(&QUICK.replace("test -f ok", "echo started; sleep 30"))?;
    let verify = crate::support::Watched::new(repo.spawn(&["verify"])?)?;
    verify.until("running `test`")?;
    // Past the start of the command: it is running when interrupted.
    std::thread::sleep(std::time::Duration::from_millis(300));
    verify.interrupt()?;
    let out = verify.finish()?;
    assert_eq!(out.code(), Some(130), "{out}");
    assert!(
        out.stderr.contains("interrupted: `test` was stopped"),
        "{out}"
    );
    let status = expect_status(&repo, "failed")?;
    let doc = status.json()?;
    assert_eq!(doc["required"][0]["next_action"], "re-run", "{status}");
    assert_eq!(
        doc["required"][0]["reason"], "interrupted before it finished: run it again",
        "{status}"
    );
    let text = repo.orcho(&["status"])?;
    assert!(
        text.stdout
            .contains("not ready: run `orcho verify` for `test`"),
        "{text}"
    );
    assert!(!text.stdout.contains("fix what makes"), "{text}");
    Ok(())
}

#[test]
fn vitests_results_cache_in_node_modules_leaves_the_receipt_present() -> Result {
    let profile = "\
schema: 1
name: js
extends: builtin:quick
verification:
  environments:
    - name: default
      dependencies: [{ name: node_modules, path: node_modules }]
  commands:
    - name: test
      argv: [sh, -c, 'mkdir -p node_modules/.vite/vitest/da39 && date +%N > node_modules/.vite/vitest/da39/results.json']
  required: [test]
";
    let repo = Repo::with_files(
        profile,
        &[
            (".gitignore", "node_modules/\n.orcho/\n"),
            ("node_modules/vitest/index.js", "export {}\n"),
        ],
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    // What vitest rewrites each run is not what the receipt is bound to.
    expect_status(&repo, "present")?;
    // An installed package that changes is.
    repo.write("node_modules/vitest/index.js", "export const x = 1\n")?;
    let out = expect_status(&repo, "stale")?;
    assert!(
        format!("{out}").contains("dependency `node_modules` changed: `vitest/index.js` changed"),
        "{out}"
    );
    Ok(())
}

/// Every file under `dir`.
fn walk(dir: &camino::Utf8Path) -> Result<Vec<camino::Utf8PathBuf>> {
    let mut out = Vec::new();
    for entry in dir.read_dir_utf8()? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            out.extend(walk(entry.path())?);
        } else {
            out.push(entry.path().to_owned());
        }
    }
    Ok(out)
}
