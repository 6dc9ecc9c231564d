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
