//! No false green: each class of cheat an agent (or a pull request) that
//! wants a green without the work would try, through the real binary, and
//! what Orcho says of it.

use serde_json::Value;

use crate::{
    Result,
    hook_fixtures::CLAUDE_PRE_BASH,
    support::{QUICK, REVIEW, Repo, paused_at_review},
};

/// The `PreToolUse` answer to Claude Code's Bash tool running `command`:
/// its decision and reason.
pub(crate) fn guard(repo: &Repo, command: &str) -> Result<(String, String)> {
    let document = CLAUDE_PRE_BASH
        .replace("@CWD@", repo.dir().as_str())
        .replace("@ARG@", &Value::from(command).to_string());
    let out = repo.orcho_with_input(&["hook", "claude-code"], &document)?;
    out.expect_code(0);
    if out.stdout.trim().is_empty() {
        // No opinion: the agent asks as it would.
        return Ok((String::new(), String::new()));
    }
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let specific = &answer["hookSpecificOutput"];
    Ok((
        specific["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    ))
}

#[test]
fn the_guard_refuses_an_agent_deciding_its_own_run_in_any_spelling() -> Result {
    let repo = Repo::new(QUICK)?;
    for command in [
        "orcho handoff decide latest continue_with_waiver --note 'fine'",
        "orcho delivery decide latest approve",
        "env -u CLAUDECODE /usr/local/bin/orcho delivery decide latest approve",
        "sh -c \"orcho plan approve latest\"",
        "O=orcho; $O handoff decide latest continue",
        "orcho intake latest include",
        "orcho decide latest --note 'fine' continue_with_waiver",
        "orcho status --ack-stops",
        "orcho serve token add me",
    ] {
        let (action, reason) = guard(&repo, command)?;
        assert_eq!(action, "deny", "{command}: {reason}");
        assert!(
            reason.contains("records a person's decision"),
            "{command}: {reason}"
        );
    }
    // Showing what waits, and proving, stay open to the agent.
    for command in [
        "orcho handoff show latest",
        "orcho decide latest",
        "orcho inbox",
        "orcho verify",
    ] {
        let (action, reason) = guard(&repo, command)?;
        assert_ne!(action, "deny", "{command}: {reason}");
    }
    Ok(())
}

#[test]
fn a_decision_from_an_agents_shell_is_refused_and_not_recorded() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    for (var, value) in [
        ("CLAUDECODE", "1"),
        ("GEMINI_CLI", "1"),
        ("CODEX_THREAD_ID", "t-1"),
        ("AI_AGENT", "some-agent"),
        ("ORCHO_PHASE", "review"),
    ] {
        let out = repo.orcho_in(
            ".",
            &[(var, value)],
            &[
                "handoff",
                "decide",
                &run,
                "continue_with_waiver",
                "--note",
                "looks fine to me",
            ],
        )?;
        out.expect_code(1);
        assert!(
            out.stderr.contains("records a person's decision")
                && out.stderr.contains(&format!("`{var}` is set")),
            "{out}"
        );
        assert!(out.stderr.contains("hint: ask the user to decide"), "{out}");
    }
    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    out.expect_code(0);
    let shown = out.json()?;
    assert!(shown["decision"].is_null(), "nothing recorded: {shown}");
    // The person at a shell of their own decides.
    repo.orcho(&["handoff", "decide", &run, "halt"])?
        .expect_code(0);
    Ok(())
}

#[test]
fn a_command_a_run_started_cannot_decide_another_run() -> Result {
    let repo = Repo::new(REVIEW)?;
    let waiting = paused_at_review(&repo)?;
    // A second run whose phase tries to wave the first one through, with
    // every trace of the phase taken out of its environment.
    let orcho = env!("CARGO_BIN_EXE_orcho");
    let said = repo.ctl("said");
    let phase = format!(
        "review=sh -c 'env -u ORCHO_RUN -u ORCHO_PHASE -u ORCHO_OUTPUT {orcho} handoff decide \
         {waiting} continue_with_waiver --note waived 2> {said}'"
    );
    let out = repo.orcho(&["run", "--phase", &phase, "--no-interactive", "--json"])?;
    out.expect_code(4);
    let said = std::fs::read_to_string(&said)?;
    assert!(
        said.contains("inside a process Orcho started (process ") && said.contains("`orcho run`"),
        "{said}"
    );
    let shown = repo
        .orcho(&["handoff", "show", &waiting, "--json"])?
        .json()?;
    assert!(shown["decision"].is_null(), "nothing recorded: {shown}");
    Ok(())
}

#[test]
fn a_verification_command_cannot_decide_either() -> Result {
    let orcho = env!("CARGO_BIN_EXE_orcho");
    let repo = Repo::new(REVIEW)?;
    let waiting = paused_at_review(&repo)?;
    let said = repo.ctl("said");
    let profile = format!(
        "{REVIEW}verification:\n  commands:\n    - name: test\n      argv: [sh, -c, \"{orcho} \
         handoff decide {waiting} continue_with_waiver --note waived 2> {said}; echo 'test result: \
         ok. 1 passed; 0 failed'\"]\n  required: [test]\n"
    );
    repo.write("orcho.yaml", &profile)?;
    repo.orcho(&["verify"])?.expect_code(0);
    let said = std::fs::read_to_string(&said)?;
    assert!(said.contains("`orcho verify`"), "{said}");
    let shown = repo
        .orcho(&["handoff", "show", &waiting, "--json"])?
        .json()?;
    assert!(shown["decision"].is_null(), "nothing recorded: {shown}");
    Ok(())
}

/// Implement, then a review that pauses when it rejects, with a waiver on
/// offer, and no final acceptance.
const REVIEWED: &str = "\
schema: 1
name: reviewed
phases:
  - name: implement
    role: implement
  - name: review
    role: review
    handoff:
      pause: on_rejected
      on_exhausted: pause
      actions: [retry_feedback, continue_with_waiver, halt]
";

#[test]
fn a_waiver_never_approves_a_release() -> Result {
    let repo = Repo::new(REVIEWED)?;
    repo.write(
        "review.sh",
        "#!/bin/sh\nprintf '{\"schema\":1,\"verdict\":\"rejected\",\"findings\":[{\"severity\":\"high\",\"title\":\"no tests for the parser\"},{\"severity\":\"medium\",\"title\":\"unclear naming\"}]}' > \"$ORCHO_OUTPUT\"\nexit 1\n",
    )?;
    repo.git(&["add", "review.sh"])?;
    repo.git(&["commit", "-q", "-m", "a reviewer"])?;
    let review = format!("review={}", repo.dir().join("review.sh"));
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo x > f.txt'",
        "--phase",
        &review,
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "continue_with_waiver",
        "--note",
        "ship it anyway",
    ])?
    .expect_code(0);
    repo.orcho(&["resume", &run, "--no-interactive"])?
        .expect_code(4);
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["verdict"], "rejected", "{gate}");
    assert_eq!(gate["reviewer_verdict"], "rejected", "{gate}");
    let actions = gate["available_actions"].as_array().ok_or("no actions")?;
    assert!(!actions.contains(&Value::from("approve")), "{gate}");
    assert!(actions.contains(&Value::from("fix")), "{gate}");
    let text = repo.orcho(&["delivery", "show", &run])?;
    assert!(
        text.stdout
            .contains("release rejected (reviewer rejected, 3 findings waived)"),
        "{text}"
    );
    Ok(())
}

/// Every file under `dir`, recursively.
fn files_under(dir: &camino::Utf8Path) -> Vec<camino::Utf8PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let Ok(path) = camino::Utf8PathBuf::from_path_buf(entry.path()) else {
            continue;
        };
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_rewritten_fingerprint_cache_cannot_pass_a_change_for_the_proven_file() -> Result {
    let profile = QUICK.replace("test -f ok", "grep -q answer lib.txt");
    let repo = Repo::with_files(&profile, &[("lib.txt", "the answer\n")])?;
    repo.orcho(&["verify"])?.expect_code(0);
    repo.orcho(&["status"])?.expect_code(0);
    // The file changes, and status fingerprints (and caches) it as it is.
    repo.write("lib.txt", "no longer!\n")?;
    repo.orcho(&["status"])?.expect_code(3);
    // The attacker maps the new file back to the proven content's digest in
    // every cache file, and seals each again as the cache once was: a
    // plain blake3 checksum after the body.
    let digest = |content: &[u8]| {
        *blake3::Hasher::new_derive_key(orcho::receipts::fingerprint::FILE_CONTEXT)
            .update(content)
            .finalize()
            .as_bytes()
    };
    let (proven, now) = (digest(b"the answer\n"), digest(b"no longer!\n"));
    let mut rewritten = 0;
    for file in files_under(&repo.dir().join(".orcho/cache")) {
        let mut bytes = std::fs::read(&file)?;
        let Some(body_len) = bytes.len().checked_sub(32) else {
            continue;
        };
        let Some(at) = bytes[..body_len].windows(32).position(|w| w == now) else {
            continue;
        };
        bytes[at..at + 32].copy_from_slice(&proven);
        let sum = *blake3::hash(&bytes[..body_len]).as_bytes();
        bytes[body_len..].copy_from_slice(&sum);
        orcho::core::fs::write_atomic(&file, &bytes)?;
        rewritten += 1;
    }
    assert!(rewritten > 0, "no cache entry held the file's digest");
    // The cache is sealed with a key the attacker does not have: it is not
    // believed, and the receipt stays stale.
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("stale"), "{out}");
    Ok(())
}

/// A profile whose `test` runs `argv` (YAML flow list text) and requires it.
fn requiring(argv: &str) -> String {
    format!(
        "schema: 1\nname: cheats\nextends: builtin:quick\nverification:\n  commands:\n    - name: test\n      argv: {argv}\n  required: [test]\n"
    )
}

/// `orcho status --json`'s `test`: its status and reason.
fn test_status(repo: &Repo) -> Result<(String, String)> {
    let out = repo.orcho(&["status", "--json"])?;
    let doc = out.json()?;
    let test = doc["required"]
        .as_array()
        .and_then(|r| r.iter().find(|c| c["command"] == "test"))
        .ok_or_else(|| format!("no `test` in {doc}"))?;
    Ok((
        test["status"].as_str().unwrap_or_default().to_owned(),
        test["reason"].as_str().unwrap_or_default().to_owned(),
    ))
}

#[test]
fn a_program_in_an_ignored_folder_is_bound_by_its_content() -> Result {
    let repo = Repo::with_files(
        &requiring("[.venv/bin/runner]"),
        &[(".gitignore", ".orcho/\n.venv/\n")],
    )?;
    repo.write(
        ".venv/bin/runner.sh",
        "#!/bin/sh\necho 'test result: ok. 1 passed; 0 failed'\n",
    )?;
    std::fs::rename(
        repo.dir().join(".venv/bin/runner.sh"),
        repo.dir().join(".venv/bin/runner"),
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    assert_eq!(test_status(&repo)?.0, "present");
    // The agent swaps the program the test runs for one that always passes.
    repo.write(
        ".venv/bin/other.sh",
        "#!/bin/sh\necho 'test result: ok. 1 passed; 0 failed'\ntrue\n",
    )?;
    std::fs::rename(
        repo.dir().join(".venv/bin/other.sh"),
        repo.dir().join(".venv/bin/runner"),
    )?;
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(
        reason.contains("the program `") && reason.contains(".venv/bin/runner` changed"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn runner_configuration_above_the_checkout_is_bound() -> Result {
    let repo = Repo::new(&requiring(
        "[sh, -c, \"echo 'test result: ok. 1 passed; 0 failed'\"]",
    ))?;
    repo.orcho(&["verify"])?.expect_code(0);
    let above = repo.dir().parent().ok_or("no parent")?.join("conftest.py");
    orcho::core::fs::write_atomic(&above, b"collect_ignore_glob = ['*']\n")?;
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(
        reason.contains("runner configuration above the checkout `")
            && reason.contains("conftest.py` added"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn a_links_target_outside_the_checkout_is_bound_by_its_content() -> Result {
    let repo = Repo::new(&requiring(
        "[sh, -c, \"grep -q answer data.txt && echo 'test result: ok. 1 passed; 0 failed'\"]",
    ))?;
    let outside = repo.dir().parent().ok_or("no parent")?.join("shared");
    orcho::core::fs::create_dir_all(&outside)?;
    orcho::core::fs::write_atomic(&outside.join("data.txt"), b"the answer\n")?;
    std::os::unix::fs::symlink("../shared/data.txt", repo.dir().join("data.txt"))?;
    repo.git(&["add", "data.txt"])?;
    repo.git(&["commit", "-q", "-m", "a link"])?;
    repo.orcho(&["verify"])?.expect_code(0);
    assert_eq!(test_status(&repo)?.0, "present");
    orcho::core::fs::write_atomic(&outside.join("data.txt"), b"no longer\n")?;
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(
        reason.contains("a link's target outside the checkout"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn a_file_hidden_by_info_exclude_is_still_part_of_the_subject() -> Result {
    let repo = Repo::new(&requiring(
        "[sh, -c, \"echo 'test result: ok. 1 passed; 0 failed'\"]",
    ))?;
    repo.orcho(&["verify"])?.expect_code(0);
    let exclude = repo.dir().join(".git/info/exclude");
    orcho::core::fs::write_atomic(&exclude, b"conftest.py\n")?;
    repo.write("conftest.py", "collect_ignore_glob = ['*']\n")?;
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(reason.contains("`conftest.py` added"), "{reason}");
    Ok(())
}

#[test]
fn a_fix_swapped_in_only_while_the_tests_run_is_named() -> Result {
    // The command puts a passing file in place, tests it, and puts the
    // broken one back: before and after, the files are the same.
    let repo = Repo::with_files(
        &requiring(
            "[sh, -c, \"cp lib.txt /tmp/orcho-swap.$$ && echo answer > lib.txt && grep -q answer lib.txt && echo 'test result: ok. 1 passed; 0 failed'; cp /tmp/orcho-swap.$$ lib.txt\"]",
        ),
        &[("lib.txt", "broken\n")],
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(
        reason.contains("it wrote files it is bound to while it ran: `lib.txt`"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn stale_bytecode_left_in_the_checkout_is_never_run() -> Result {
    if !crate::support::have("python3") {
        if std::env::var_os("CI").is_some() {
            return Err("python3 is needed".into());
        }
        eprintln!("skipped: python3 is not installed");
        return Ok(());
    }
    let repo = Repo::with_files(
        &requiring(
            "[python3, -c, \"import lib; assert lib.answer() == 42; print('test result: ok. 1 passed; 0 failed')\"]",
        ),
        &[
            (".gitignore", ".orcho/\n__pycache__/\n"),
            ("lib.py", "def answer():\n    return 42\n"),
        ],
    )?;
    // The agent compiles the working module, then breaks the source,
    // keeping its size and modification time, so that the bytecode git
    // ignores still matches it by Python's own check.
    let out = crate::support::run_program(
        repo.dir(),
        "python3",
        &[
            "-c",
            "import importlib.util, os, py_compile, sys\n\
             py_compile.compile('lib.py', cfile=importlib.util.cache_from_source('lib.py'))\n\
             st = os.stat('lib.py')\n\
             open('lib.py', 'w').write('def answer():\\n    return 41\\n')\n\
             os.utime('lib.py', ns=(st.st_atime_ns, st.st_mtime_ns))\n",
        ],
        &[],
    )?;
    out.expect_code(0);
    repo.git(&["commit", "-q", "-am", "broken, same size and time"])?;
    // Python alone would run the stale bytecode and pass.
    let plain = crate::support::run_program(
        repo.dir(),
        "python3",
        &["-c", "import lib; assert lib.answer() == 42"],
        &[],
    )?;
    assert_eq!(
        plain.code(),
        Some(0),
        "the bytecode is stale and used\n{plain}"
    );
    // Under orcho the source is what runs: the test fails.
    let out = repo.orcho(&["verify"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("AssertionError"), "{out}");
    Ok(())
}

#[test]
fn the_runners_word_outranks_an_exit_code_of_zero() -> Result {
    // A conftest (or a Makefile `-`) that forces exit 0 after a failure.
    let repo = Repo::new(&requiring(
        "[sh, -c, \"echo '=========== 1 failed, 3 passed in 0.12s ==========='; exit 0\"]",
    ))?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(3);
    assert!(
        out.stdout
            .contains("exited with code 0, but pytest reported 1 failed test(s)")
            || out.stdout.contains("✗ `test`"),
        "{out}"
    );
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "failed", "{reason}");
    assert!(
        reason.contains("pytest reported 1 failed test(s)"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn runs_where_nothing_ran_are_vacuous_whatever_the_runner() -> Result {
    for (runner, output) in [
        ("unittest", "Ran 3 tests in 0.001s\n\nOK (skipped=3)"),
        ("vitest", " Test Files  1 passed (1)\n      Tests  no tests"),
        (
            "go test -v",
            "=== RUN   TestParse\n--- SKIP: TestParse (0.00s)\n=== RUN   TestEmpty\n--- SKIP: TestEmpty (0.00s)\nPASS\nok  \texample.com/p\t0.002s",
        ),
    ] {
        let repo = Repo::new(&requiring(&format!(
            "[sh, -c, {}]",
            Value::from(format!("printf '%s\\n' '{output}'"))
        )))?;
        let out = repo.orcho(&["verify"])?;
        out.expect_code(3);
        assert!(
            out.stdout.contains("no test ran: vacuous"),
            "{runner}: {out}"
        );
        assert_eq!(test_status(&repo)?.0, "vacuous", "{runner}");
    }
    Ok(())
}

#[test]
fn what_did_not_run_is_shown_in_verify_and_status() -> Result {
    let repo = Repo::new(&requiring(
        "[sh, -c, \"echo '==== 3 passed, 2 skipped, 4 deselected, 1 xfailed in 0.30s ===='\"]",
    ))?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("(3 passed; did not run: 4 deselected, 2 skipped, 1 xfailed)"),
        "{out}"
    );
    let out = repo.orcho(&["status"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("3 passed; did not run: 4 deselected, 2 skipped, 1 xfailed"),
        "{out}"
    );
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(
        doc["required"][0]["tests"]["not_run"]["deselected"], 4,
        "{doc}"
    );
    Ok(())
}

/// The `PreToolUse` answer to Claude Code's Write tool writing `path`,
/// with `HOME` set to `home`.
fn guard_write(repo: &Repo, home: &str, path: &str) -> Result<(String, String)> {
    let input = serde_json::json!({ "file_path": path, "content": "{}" });
    let document = crate::hook_fixtures::CLAUDE_PRE_TOOL
        .replace("@CWD@", repo.dir().as_str())
        .replace("@TOOL@", "Write")
        .replace("@INPUT@", &input.to_string());
    let out = repo.orcho_with_input_env(&["hook", "claude-code"], &document, &[("HOME", home)])?;
    out.expect_code(0);
    if out.stdout.trim().is_empty() {
        return Ok((String::new(), String::new()));
    }
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let specific = &answer["hookSpecificOutput"];
    Ok((
        specific["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    ))
}

#[test]
fn the_guard_keeps_the_agent_from_what_switches_orcho_off() -> Result {
    let repo = Repo::with_files(
        "schema: 1\nname: child\nextends: ci/base.yaml\n",
        &[("ci/base.yaml", QUICK)],
    )?;
    let home = repo.dir().parent().ok_or("no parent")?.join("home");
    orcho::core::fs::create_dir_all(&home)?;
    let orcho = env!("CARGO_BIN_EXE_orcho");
    for (path, what) in [
        (
            repo.dir().join("ci/base.yaml").to_string(),
            "a profile Orcho's profile extends",
        ),
        (
            home.join(".claude/settings.json").to_string(),
            "an agent's settings in your home",
        ),
        (
            home.join(".gemini/settings.json").to_string(),
            "an agent's settings in your home",
        ),
        (
            repo.dir().join(".git/hooks/pre-commit").to_string(),
            "the repository's own git hooks",
        ),
        (
            repo.dir().join(".git/config").to_string(),
            "the repository's git configuration",
        ),
        (orcho.to_owned(), "the `orcho` the hooks run"),
    ] {
        let (action, reason) = guard_write(&repo, home.as_str(), &path)?;
        assert_eq!(action, "deny", "{path}: {reason}");
        assert!(reason.contains(what), "{path}: {reason}");
    }
    for command in [
        "echo '{\"disableAllHooks\": true}' > ~/.claude/settings.json",
        "git config core.hooksPath /dev/null",
        "git --config-env=core.hooksPath=NOHOOKS commit -m x",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m x",
        "git -c core.HooksPath=/dev/null commit -m x",
        "rm .git/hooks/pre-commit",
    ] {
        let document = CLAUDE_PRE_BASH
            .replace("@CWD@", repo.dir().as_str())
            .replace("@ARG@", &Value::from(command).to_string());
        let out = repo.orcho_with_input_env(
            &["hook", "claude-code"],
            &document,
            &[("HOME", home.as_str())],
        )?;
        out.expect_code(0);
        assert!(out.stdout.contains("\"deny\""), "{command}: {out}");
    }
    let (action, _) = guard(&repo, "git config --get core.hooksPath")?;
    assert_ne!(action, "deny");
    // Running that `orcho` is what the agent is asked to do; replacing it
    // is not.
    for command in [
        format!("{orcho} verify"),
        format!("cd sub && {orcho} verify test && {orcho} status"),
    ] {
        let (action, reason) = guard(&repo, &command)?;
        assert_ne!(action, "deny", "{command}: {reason}");
    }
    for command in [
        format!("cp /bin/true {orcho}"),
        format!("{orcho} verify > {orcho}"),
        format!("ln -sf /bin/true {orcho}"),
    ] {
        let (action, reason) = guard(&repo, &command)?;
        assert_eq!(action, "deny", "{command}: {reason}");
    }
    Ok(())
}

#[test]
fn status_warns_when_an_agents_settings_switch_its_hooks_off() -> Result {
    let repo = Repo::new(QUICK)?;
    let home = repo.dir().parent().ok_or("no parent")?.join("home");
    orcho::core::fs::create_dir_all(&home.join(".claude"))?;
    orcho::core::fs::write_atomic(
        &home.join(".claude/settings.json"),
        b"{\"disableAllHooks\": true}",
    )?;
    repo.write(
        ".gemini/settings.json",
        "{\"hooksConfig\": {\"disabled\": [\"orcho hook gemini\"]}}",
    )?;
    let out = repo.orcho_in(".", &[("HOME", home.as_str())], &["status"])?;
    assert!(
        out.stdout
            .contains("switches Claude Code's hooks off (`disableAllHooks: true`)"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("switches Gemini CLI's hooks off (`orcho hook` in `hooksConfig.disabled`)"),
        "{out}"
    );
    let doc = repo
        .orcho_in(".", &[("HOME", home.as_str())], &["status", "--json"])?
        .json()?;
    assert_eq!(
        doc["hooks_switched_off"],
        serde_json::json!(["Claude Code", "Gemini CLI"]),
        "{doc}"
    );
    Ok(())
}

#[test]
fn an_installed_package_git_ignores_is_bound_by_its_content() -> Result {
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
      argv: [sh, -c, \"sh node_modules/runner/run.sh\"]
  required: [test]
";
    let repo = Repo::with_files(profile, &[(".gitignore", ".orcho/\nnode_modules/\n")])?;
    repo.write(
        "node_modules/runner/run.sh",
        "grep -q answer lib.txt 2>/dev/null; echo 'Tests  1 passed (1)'\n",
    )?;
    repo.orcho(&["verify"])?.expect_code(0);
    assert_eq!(test_status(&repo)?.0, "present");
    // The agent edits the installed runner so that it always passes.
    repo.write("node_modules/runner/run.sh", "echo 'Tests  1 passed (1)'\n")?;
    let (status, reason) = test_status(&repo)?;
    assert_eq!(status, "stale", "{reason}");
    assert!(
        reason.contains("dependency `node_modules` changed: `runner/run.sh` changed"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn init_binds_a_javascript_projects_node_modules() -> Result {
    let tmp = tempfile::tempdir()?;
    let dir = camino::Utf8PathBuf::try_from(tmp.path().join("web"))?;
    orcho::core::fs::create_dir_all(&dir)?;
    orcho::core::fs::write_atomic(
        &dir.join("package.json"),
        b"{\"scripts\": {\"test\": \"vitest run\"}}",
    )?;
    let out = crate::support::orcho_at(&dir, &[], &["init"])?;
    out.expect_code(0);
    let profile = std::fs::read_to_string(dir.join("orcho.yaml"))?;
    assert!(
        profile.contains("dependencies: [{ name: node_modules, path: node_modules }]"),
        "{profile}"
    );
    Ok(())
}
