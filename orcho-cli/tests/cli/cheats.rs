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
fn guard(repo: &Repo, command: &str) -> Result<(String, String)> {
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
    for command in ["orcho handoff show latest", "orcho inbox", "orcho verify"] {
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
