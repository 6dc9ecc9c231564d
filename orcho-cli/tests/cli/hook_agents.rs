//! `orcho hook` for Gemini CLI, Qwen Code, Copilot CLI, Cursor and opencode:
//! each agent's documents, fed to the real binary, answered in the shape
//! the agent reads.
//!
//! The documents of Gemini CLI (0.61.0), Qwen Code (0.24.4) and Copilot CLI
//! (1.0.102) are as those agents sent them to a hook, driven offline against
//! a scripted model (session ids, paths and timestamps shortened). Cursor's
//! are the shapes of its hooks documentation (`hooks.json`, version 1);
//! opencode's are what Orcho's own plugin (`integrations/opencode`) sends.

use serde_json::{Value, json};

use crate::{
    Result,
    support::{Out, QUICK, Repo},
};

/// One agent: its name and its documents, with `@CWD@` for the checkout,
/// `@ARG@` for a JSON string and `@ACTIVE@` for `true` or `false`.
struct Agent {
    name: &'static str,
    session_start: &'static str,
    /// A shell command about to run.
    pre_shell: &'static str,
    /// A file about to be written (`@ARG@` its path).
    pre_write: Option<&'static str>,
    /// A shell command that exited 3.
    post_failed: Option<&'static str>,
    /// The exit status the log keeps for it.
    logged_exit: Option<i64>,
    stop: &'static str,
}

const GEMINI: Agent = Agent {
    name: "gemini",
    session_start: r#"{"session_id":"0c15","transcript_path":"/h/.gemini/tmp/p/chats/s.jsonl","cwd":"@CWD@","hook_event_name":"SessionStart","timestamp":"2026-11-26T12:15:10.000Z","source":"startup"}"#,
    pre_shell: r#"{"session_id":"0c15","transcript_path":"/h/s.jsonl","cwd":"@CWD@","hook_event_name":"BeforeTool","timestamp":"2026-11-26T12:15:17.263Z","tool_name":"run_shell_command","tool_input":{"command":@ARG@,"description":"scripted step 0"}}"#,
    pre_write: Some(
        r#"{"session_id":"0c15","cwd":"@CWD@","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":@ARG@,"content":"x"}}"#,
    ),
    post_failed: Some(
        r#"{"session_id":"0c15","cwd":"@CWD@","hook_event_name":"AfterTool","timestamp":"2026-11-26T12:15:17.887Z","tool_name":"run_shell_command","tool_input":{"command":"echo hello; exit 3","description":"scripted step 0"},"tool_response":{"llmContent":"<untrusted_context>\nOutput: hello\nExit Code: 3\nProcess Group PGID: 12208\n</untrusted_context>","returnDisplay":"hello"}}"#,
    ),
    logged_exit: Some(3),
    stop: r#"{"session_id":"0c15","transcript_path":"/h/s.jsonl","cwd":"@CWD@","hook_event_name":"AfterAgent","timestamp":"2026-11-26T12:15:17.405Z","prompt":"please do the task","prompt_response":"FINAL ANSWER: all done.","stop_hook_active":@ACTIVE@}"#,
};

const QWEN: Agent = Agent {
    name: "qwen",
    session_start: r#"{"session_id":"fefc","transcript_path":"/h/.qwen/projects/p/chats/f.jsonl","cwd":"@CWD@","hook_event_name":"SessionStart","timestamp":"2026-11-26T12:29:40.000Z","permission_mode":"yolo","source":"startup","model":"fake-model"}"#,
    pre_shell: r#"{"session_id":"fefc","transcript_path":"/h/f.jsonl","cwd":"@CWD@","hook_event_name":"PreToolUse","timestamp":"2026-11-26T12:29:44.732Z","permission_mode":"yolo","prompt_id":"fefc########0","tool_name":"run_shell_command","tool_input":{"command":@ARG@,"description":"scripted step 0"},"tool_use_id":"toolu_1795696184731_ehslep463","tool_call_id":"call_0_80f38c"}"#,
    pre_write: Some(
        r#"{"session_id":"fefc","cwd":"@CWD@","hook_event_name":"PreToolUse","permission_mode":"yolo","tool_name":"write_file","tool_input":{"file_path":@ARG@,"content":"x"}}"#,
    ),
    post_failed: Some(
        r#"{"session_id":"fefc","cwd":"@CWD@","hook_event_name":"PostToolUseFailure","permission_mode":"yolo","tool_name":"run_shell_command","tool_input":{"command":"echo hello; exit 3","description":"scripted step 0"},"error":"Command: echo hello; exit 3\nDirectory: (root)\nOutput: hello\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: (none)"}"#,
    ),
    logged_exit: Some(3),
    stop: r#"{"session_id":"fefc","transcript_path":"/h/f.jsonl","cwd":"@CWD@","hook_event_name":"Stop","timestamp":"2026-11-26T12:29:45.155Z","permission_mode":"yolo","prompt_id":"fefc########0","stop_hook_active":@ACTIVE@,"last_assistant_message":"FINAL ANSWER: all done.","background_tasks":[],"crons":[],"context_usage":5e-05,"context_limit":200000,"input_tokens":10}"#,
};

const COPILOT: Agent = Agent {
    name: "copilot",
    session_start: r#"{"hook_event_name":"SessionStart","session_id":"ac85","timestamp":"2026-11-26T12:30:50.000Z","cwd":"@CWD@","source":"new","initial_prompt":"please do the task"}"#,
    pre_shell: r#"{"hook_event_name":"PreToolUse","session_id":"ac85","timestamp":"2026-11-26T12:30:53.389Z","cwd":"@CWD@","tool_name":"Bash","tool_input":{"command":@ARG@,"description":"scripted step 0"}}"#,
    pre_write: Some(
        r#"{"hook_event_name":"PreToolUse","session_id":"ac85","cwd":"@CWD@","tool_name":"Write","tool_input":{"file_path":@ARG@,"content":"x"}}"#,
    ),
    post_failed: Some(
        r#"{"hook_event_name":"PostToolUse","session_id":"ac85","timestamp":"2026-11-26T12:30:53.557Z","cwd":"@CWD@","tool_name":"Bash","tool_input":{"command":"echo hello; exit 3","description":"scripted step 0"},"tool_result":{"result_type":"success","text_result_for_llm":"hello\n<shellId: 0 completed with exit code 3>"}}"#,
    ),
    logged_exit: Some(3),
    stop: r#"{"hook_event_name":"Stop","session_id":"ac85","timestamp":"2026-11-26T12:30:54.034Z","cwd":"@CWD@","transcript_path":"/h/events.jsonl","stop_reason":"end_turn","stop_hook_active":@ACTIVE@}"#,
};

const CURSOR: Agent = Agent {
    name: "cursor",
    session_start: r#"{"hook_event_name":"sessionStart","conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["@CWD@"],"cursor_version":"2.0.77"}"#,
    pre_shell: r#"{"hook_event_name":"beforeShellExecution","conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["@CWD@"],"model":"gpt-5","cursor_version":"2.0.77","command":@ARG@,"cwd":"@CWD@"}"#,
    pre_write: Some(
        r#"{"hook_event_name":"preToolUse","conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["@CWD@"],"tool_name":"Write","tool_input":{"file_path":@ARG@,"contents":"x"}}"#,
    ),
    // `afterShellExecution` says no exit status.
    post_failed: Some(
        r#"{"hook_event_name":"afterShellExecution","conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["@CWD@"],"command":"echo hello; exit 3","cwd":"@CWD@","output":"hello\n","duration":150}"#,
    ),
    logged_exit: None,
    stop: r#"{"hook_event_name":"stop","conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["@CWD@"],"status":"completed","loop_count":@LOOPS@}"#,
};

const OPENCODE: Agent = Agent {
    name: "opencode",
    session_start: r#"{"cwd":"@CWD@","hook_event_name":"SessionStart","session_id":"ses_1"}"#,
    pre_shell: r#"{"cwd":"@CWD@","hook_event_name":"PreToolUse","session_id":"ses_1","tool_name":"bash","tool_input":{"command":@ARG@,"description":"scripted step 0"}}"#,
    pre_write: Some(
        r#"{"cwd":"@CWD@","hook_event_name":"PreToolUse","session_id":"ses_1","tool_name":"write","tool_input":{"filePath":@ARG@,"content":"x"}}"#,
    ),
    post_failed: Some(
        r#"{"cwd":"@CWD@","hook_event_name":"PostToolUse","session_id":"ses_1","tool_name":"bash","tool_input":{"command":"echo hello; exit 3","description":"scripted step 0"},"tool_response":{"exit_code":3}}"#,
    ),
    logged_exit: Some(3),
    stop: r#"{"cwd":"@CWD@","hook_event_name":"Stop","session_id":"ses_1","stop_hook_active":@ACTIVE@}"#,
};

const AGENTS: [&Agent; 5] = [&GEMINI, &QWEN, &COPILOT, &CURSOR, &OPENCODE];

/// A profile that denies `rm`, allows `ls`, and asks about the rest.
const RULES: &str = "\
schema: 1
name: cli-agents
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
permissions:
  rules:
    - { permission: bash, pattern: '*', action: ask }
    - { permission: bash, pattern: 'ls *', action: allow }
    - { permission: bash, pattern: 'rm *', action: deny }
    - { permission: write, pattern: '*', action: allow }
";

fn fill(template: &str, repo: &Repo, arg: &str, active: bool) -> String {
    template
        .replace("@CWD@", repo.dir().as_str())
        .replace("@ARG@", &Value::from(arg).to_string())
        .replace("@ACTIVE@", if active { "true" } else { "false" })
        .replace("@LOOPS@", if active { "1" } else { "0" })
}

fn hook(repo: &Repo, agent: &Agent, input: &str) -> Result<Out> {
    let out = repo.orcho_with_input(&["hook", agent.name], input)?;
    out.expect_no_panic();
    Ok(out)
}

/// A tool decision as the agent reads it: `allow`, `deny`, or `ask`
/// (`None`: no opinion, the agent's own flow goes on), and the reason.
fn tool_decision(agent: &Agent, out: &Out) -> Result<(Option<String>, String)> {
    if out.stdout.trim().is_empty() {
        assert_eq!(out.code(), Some(0), "{out}");
        return Ok((None, String::new()));
    }
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let (decision, reason) = match agent.name {
        "gemini" | "opencode" => (text(&answer["decision"]), text(&answer["reason"])),
        "qwen" => (
            text(&answer["hookSpecificOutput"]["permissionDecision"]),
            text(&answer["hookSpecificOutput"]["permissionDecisionReason"]),
        ),
        "copilot" => {
            // Both its own field and Claude's, which must agree.
            assert_eq!(
                answer["permissionDecision"], answer["hookSpecificOutput"]["permissionDecision"],
                "{out}"
            );
            (
                text(&answer["permissionDecision"]),
                text(&answer["permissionDecisionReason"]),
            )
        }
        "cursor" => {
            // A refusal is exit 2 as well.
            if answer["permission"] == "deny" {
                assert_eq!(out.code(), Some(2), "{out}");
            }
            (text(&answer["permission"]), text(&answer["agent_message"]))
        }
        other => return Err(format!("no reader for {other}").into()),
    };
    Ok((
        Some(decision.ok_or("no decision")?),
        reason.unwrap_or_default(),
    ))
}

/// The reason a refused stop gives the agent; `None` when it goes through.
fn stop_refusal(agent: &Agent, out: &Out) -> Result<Option<String>> {
    out.expect_code(0);
    if out.stdout.trim().is_empty() {
        return Ok(None);
    }
    let answer: Value = serde_json::from_str(&out.stdout)?;
    Ok(match agent.name {
        "cursor" => answer["followup_message"].as_str().map(str::to_owned),
        _ => {
            if answer.get("decision").is_none() {
                return Ok(None);
            }
            assert_eq!(answer["decision"], "block", "{out}");
            answer["reason"].as_str().map(str::to_owned)
        }
    })
}

fn context(agent: &Agent, out: &Out) -> Result<String> {
    out.expect_code(0);
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let value = match agent.name {
        "cursor" => &answer["additional_context"],
        "opencode" => &answer["context"],
        "copilot" => {
            assert_eq!(
                answer["additionalContext"], answer["hookSpecificOutput"]["additionalContext"],
                "{out}"
            );
            &answer["additionalContext"]
        }
        _ => &answer["hookSpecificOutput"]["additionalContext"],
    };
    Ok(value.as_str().ok_or("no context")?.to_owned())
}

#[test]
fn each_agent_hears_what_proves_readiness_when_a_session_starts() -> Result {
    let repo = Repo::new(RULES)?;
    for agent in AGENTS {
        let out = hook(&repo, agent, &fill(agent.session_start, &repo, "", false))?;
        let text = context(agent, &out)?;
        assert!(
            text.contains("`test` (`sh -c 'test -f ok'`)"),
            "{}: {text}",
            agent.name
        );
        assert!(text.contains("permission rules"), "{}: {text}", agent.name);
    }
    Ok(())
}

#[test]
fn each_agents_shell_commands_are_decided_by_the_rules() -> Result {
    let repo = Repo::new(RULES)?;
    for agent in AGENTS {
        let decide = |command: &str| -> Result<(Option<String>, String)> {
            tool_decision(
                agent,
                &hook(&repo, agent, &fill(agent.pre_shell, &repo, command, false))?,
            )
        };
        let (denied, reason) = decide("rm -rf src")?;
        assert_eq!(denied.as_deref(), Some("deny"), "{}", agent.name);
        assert!(
            reason.starts_with("orcho: bash `rm -rf src`: deny by rule 3"),
            "{}: {reason}",
            agent.name
        );
        // An allow is said where the agent reads one, else no opinion.
        let (allowed, _) = decide("ls -la")?;
        match agent.name {
            "cursor" | "qwen" => assert_eq!(allowed.as_deref(), Some("allow"), "{}", agent.name),
            name => assert_eq!(allowed, None, "{name}"),
        }
        // An ask is refused with what a person can do where the agent's
        // headless mode would let it through, and asked where it asks.
        let (asked, reason) = decide("cargo build")?;
        match agent.name {
            "cursor" | "qwen" => assert_eq!(asked.as_deref(), Some("ask"), "{}", agent.name),
            name => {
                assert_eq!(asked.as_deref(), Some("deny"), "{name}");
                assert!(
                    reason.contains("needs a person's approval"),
                    "{name}: {reason}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn each_agent_is_kept_from_orchos_own_files() -> Result {
    let repo = Repo::new(RULES)?;
    for agent in AGENTS {
        let Some(write) = agent.pre_write else {
            continue;
        };
        let profile = repo.dir().join("orcho.yaml");
        let (decision, reason) = tool_decision(
            agent,
            &hook(&repo, agent, &fill(write, &repo, profile.as_str(), false))?,
        )?;
        assert_eq!(
            decision.as_deref(),
            Some("deny"),
            "{}: {reason}",
            agent.name
        );
        assert!(
            reason.contains("Orcho's profile"),
            "{}: {reason}",
            agent.name
        );
        let source = repo.dir().join("src/lib.rs");
        let (decision, _) = tool_decision(
            agent,
            &hook(&repo, agent, &fill(write, &repo, source.as_str(), false))?,
        )?;
        assert_ne!(decision.as_deref(), Some("deny"), "{}", agent.name);
    }
    Ok(())
}

#[test]
fn each_agents_failed_commands_are_logged_with_what_it_says_of_their_status() -> Result {
    let repo = Repo::new(QUICK)?;
    let mut expected = Vec::new();
    for agent in AGENTS {
        let Some(post) = agent.post_failed else {
            continue;
        };
        hook(&repo, agent, &fill(post, &repo, "", false))?.expect_code(0);
        expected.push(agent.logged_exit.map_or(Value::Null, |c| json!(c)));
    }
    let log = std::fs::read_to_string(repo.dir().join(".orcho/receipts/_exploratory/log.jsonl"))?;
    let exits: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).map(|v| v["exit_code"].clone()))
        .collect::<std::result::Result<_, _>>()?;
    assert_eq!(exits, expected, "{log}");
    assert!(
        log.lines().all(|l| l.contains("echo hello; exit 3")),
        "{log}"
    );
    Ok(())
}

#[test]
fn each_agents_stop_is_refused_until_verify_proves_the_checkout() -> Result {
    let repo = Repo::new(QUICK)?;
    for agent in AGENTS {
        let first = hook(&repo, agent, &fill(agent.stop, &repo, "", false))?;
        let reason = stop_refusal(agent, &first)?
            .ok_or_else(|| format!("{}: not refused: {first}", agent.name))?;
        assert!(
            reason.contains("`test` (`sh -c 'test -f ok'`): missing"),
            "{}: {reason}",
            agent.name
        );
        assert!(
            reason.contains("Prove it: `orcho verify test`"),
            "{}: {reason}",
            agent.name
        );
        assert!(
            reason.contains("Refusal 1 of 3"),
            "{}: {reason}",
            agent.name
        );
        let again = hook(&repo, agent, &fill(agent.stop, &repo, "", true))?;
        let reason = stop_refusal(agent, &again)?.ok_or("not refused again")?;
        assert!(
            reason.contains("Refusal 2 of 3"),
            "{}: {reason}",
            agent.name
        );
        // Each agent's hooks mark the store once called.
        assert!(
            repo.dir()
                .join(format!(".orcho/agent-hooks/called-{}", agent.name))
                .exists(),
            "{}",
            agent.name
        );
    }
    repo.write("ok", "")?;
    repo.orcho(&["verify"])?.expect_code(0);
    for agent in AGENTS {
        let out = hook(&repo, agent, &fill(agent.stop, &repo, "", true))?;
        assert_eq!(
            stop_refusal(agent, &out)?,
            None,
            "{}: proven, yet {out}",
            agent.name
        );
    }
    Ok(())
}

#[test]
fn each_agent_reads_a_broken_document_as_a_refusal() -> Result {
    let repo = Repo::new(QUICK)?;
    for agent in AGENTS {
        let out = hook(&repo, agent, "{not json")?;
        let refused = match agent.name {
            // Exit 2 only refuses a tool call there: a JSON refusal that
            // every event reads as one.
            "copilot" => {
                let answer: Value = serde_json::from_str(&out.stdout)?;
                answer["permissionDecision"] == "deny" && answer["decision"] == "block"
            }
            _ => out.code() == Some(2),
        };
        assert!(refused, "{}: {out}", agent.name);
        assert!(
            out.stdout.contains("not JSON") || out.stderr.contains("not JSON"),
            "{}: {out}",
            agent.name
        );
    }
    // A name the agent does not document is refused, naming the agent.
    let out = hook(
        &repo,
        &GEMINI,
        r#"{"hook_event_name":"PreToolUse","tool_name":"x"}"#,
    )?;
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("`PreToolUse` is not a hook event Gemini CLI documents"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_cursor_stop_the_user_aborted_is_not_refused() -> Result {
    let repo = Repo::new(QUICK)?;
    let doc = fill(CURSOR.stop, &repo, "", false).replace("\"completed\"", "\"aborted\"");
    let out = hook(&repo, &CURSOR, &doc)?;
    out.expect_code(0);
    assert_eq!(out.stdout.trim(), "", "{out}");
    Ok(())
}

#[test]
fn init_installs_each_agents_hooks_where_and_how_it_reads_them() -> Result {
    let repo = Repo::new(QUICK)?;
    // (agent, file, timeout as written, the key holding the command)
    let cases = [
        ("gemini", ".gemini/settings.json", 60_000, "command"),
        ("qwen", ".qwen/settings.json", 60_000, "command"),
        ("copilot", ".github/hooks/orcho.json", 60, "bash"),
        ("cursor", ".cursor/hooks.json", 60, "command"),
    ];
    for (agent, file, timeout, key) in cases {
        let out = repo.orcho(&["init", "--agent", agent])?;
        out.expect_code(0);
        assert!(
            out.stdout
                .contains(&format!("added `orcho hook {agent}` to")),
            "{out}"
        );
        assert!(
            out.stdout.contains("next: `orcho` must be on the PATH"),
            "{out}"
        );
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(repo.dir().join(file))?)?;
        let hooks = settings["hooks"].as_object().ok_or("no hooks")?;
        assert!(hooks.len() >= 4, "{agent}: {settings}");
        for (event, entries) in hooks {
            let entries = entries.as_array().ok_or("not a list")?;
            // Grouped (Claude Code's layout) or flat (`version: 1`).
            let handler = entries[0]["hooks"].get(0).unwrap_or(&entries[0]);
            assert_eq!(
                handler[key],
                format!("orcho hook {agent}"),
                "{agent} {event}"
            );
            let written = handler["timeout"]
                .as_u64()
                .or(handler["timeoutSec"].as_u64());
            assert_eq!(written, Some(timeout), "{agent} {event}: {handler}");
        }
        if matches!(agent, "copilot" | "cursor") {
            assert_eq!(settings["version"], 1, "{agent}");
        }
        // Each event the agent sends reads as one Orcho knows.
        for event in hooks.keys() {
            let doc = json!({"hook_event_name": event, "cwd": repo.dir(), "session_id": "s",
                "tool_name": "x", "tool_input": {}, "command": "true"});
            let out = repo.orcho_with_input(&["hook", agent], &doc.to_string())?;
            assert!(
                !out.stderr.contains("is not a hook event"),
                "{agent} {event}: {out}"
            );
        }
        let again = repo.orcho(&["init", "--agent", agent])?;
        assert!(again.stdout.contains("already"), "{again}");
    }
    // opencode's plugin is the file this repository ships, written whole.
    let out = repo.orcho(&["init", "--agent", "opencode"])?;
    out.expect_code(0);
    let written = std::fs::read_to_string(repo.dir().join(".opencode/plugins/orcho.js"))?;
    let shipped = std::fs::read_to_string(
        camino::Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../integrations/opencode/orcho.js"),
    )?;
    assert_eq!(written, shipped);
    assert!(
        repo.orcho(&["init", "--agent", "opencode"])?
            .stdout
            .contains("already")
    );
    // The help lists every agent.
    let help = repo.orcho(&["init", "--help"])?;
    for agent in [
        "claude-code",
        "codex",
        "gemini",
        "qwen",
        "copilot",
        "cursor",
        "opencode",
    ] {
        assert!(help.stdout.contains(agent), "{agent}: {help}");
    }
    // Status warns about hooks that never called Orcho: the plugin's, and
    // not those the documents above went through.
    let status = repo.orcho(&["status"])?;
    assert!(
        status
            .stdout
            .contains("warning: .opencode/plugins/orcho.js runs"),
        "{status}"
    );
    for file in [
        ".gemini/settings.json",
        ".cursor/hooks.json",
        ".github/hooks/orcho.json",
    ] {
        assert!(
            !status.stdout.contains(&format!("warning: {file}")),
            "{file}: {status}"
        );
    }
    Ok(())
}

#[test]
fn a_forged_receipt_refuses_the_stop_as_one_that_cannot_be_trusted() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.orcho(&["verify"])?.expect_code(3);
    // A failed run passed off as a success.
    let latest = repo.dir().join(".orcho/receipts/test/latest.json");
    let text = std::fs::read_to_string(&latest)?;
    let forged = text.replacen("\"code\": 1", "\"code\": 0", 1);
    assert_ne!(forged, text);
    orcho::core::fs::write_atomic(&latest, forged.as_bytes())?;
    for agent in AGENTS {
        let out = hook(&repo, agent, &fill(agent.stop, &repo, "", false))?;
        let reason = stop_refusal(agent, &out)?.ok_or("not refused")?;
        assert!(
            reason.contains("`test` (`sh -c 'test -f ok'`): invalid"),
            "{}: {reason}",
            agent.name
        );
        assert!(
            reason.contains("A receipt cannot be trusted"),
            "{}: {reason}",
            agent.name
        );
    }
    // At the refusal limit the stop goes through, saying so.
    let claude =
        r#"{"session_id":"s","cwd":"@CWD@","hook_event_name":"Stop","stop_hook_active":@ACTIVE@}"#;
    let mut last = String::new();
    for active in [false, true, true, true] {
        let out =
            repo.orcho_with_input(&["hook", "claude-code"], &fill(claude, &repo, "", active))?;
        out.expect_code(0);
        last = out.stdout;
    }
    let answer: Value = serde_json::from_str(&last)?;
    let message = answer["systemMessage"].as_str().ok_or("no warning")?;
    assert!(
        message.contains("a receipt cannot be trusted (test: invalid"),
        "{message}"
    );
    Ok(())
}

#[test]
fn a_checkout_not_fingerprinted_within_the_budget_refuses_the_stop() -> Result {
    let files: Vec<(String, String)> = (0..3000)
        .map(|i| (format!("src/f{i}.txt"), format!("{i}\n")))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let repo = Repo::with_files(QUICK, &files)?;
    let doc = fill(GEMINI.stop, &repo, "", false);
    let out =
        repo.orcho_with_input_env(&["hook", "gemini"], &doc, &[("ORCHO_HOOK_BUDGET", "0")])?;
    let reason = stop_refusal(&GEMINI, &out)?.ok_or("not refused")?;
    assert!(
        reason.contains("could not be fingerprinted within the hook's 0 s"),
        "{reason}"
    );
    assert!(reason.contains("Refusal 1 of 3"), "{reason}");
    Ok(())
}

#[test]
fn the_plugins_and_extensions_shipped_run_what_init_installs() -> Result {
    let integrations = camino::Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../integrations");
    let read = |path: camino::Utf8PathBuf| -> Result<Value> {
        Ok(serde_json::from_str(
            &std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?,
        )?)
    };
    // (bundle, agent, the file `orcho init --agent` writes)
    let cases = [
        ("claude-code", "claude-code", ".claude/settings.json"),
        ("gemini", "gemini", ".gemini/settings.json"),
        ("qwen", "qwen", ".qwen/settings.json"),
        ("copilot", "copilot", ".github/hooks/orcho.json"),
    ];
    // Each hook as (event, matcher, command, timeout), whatever the layout.
    let hooks_of = |doc: &Value| -> Vec<(String, Value, Value, Value)> {
        let mut out = Vec::new();
        for (event, entries) in doc["hooks"].as_object().into_iter().flatten() {
            for entry in entries.as_array().into_iter().flatten() {
                let handlers = entry["hooks"]
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![entry.clone()]);
                for h in handlers {
                    let command = h
                        .get("command")
                        .or_else(|| h.get("bash"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    let timeout = h
                        .get("timeout")
                        .or_else(|| h.get("timeoutSec"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    out.push((event.clone(), entry["matcher"].clone(), command, timeout));
                }
            }
        }
        out.sort_by_key(|h| format!("{h:?}"));
        out
    };
    for (bundle, agent, file) in cases {
        let repo = Repo::new(QUICK)?;
        repo.orcho(&["init", "--agent", agent])?.expect_code(0);
        let installed = read(repo.dir().join(file))?;
        let shipped = read(integrations.join(bundle).join("hooks/hooks.json"))?;
        assert_eq!(hooks_of(&shipped), hooks_of(&installed), "{bundle}");
    }
    // Each bundle serves `orcho mcp` as well.
    for manifest in [
        "claude-code/.mcp.json",
        "copilot/.mcp.json",
        "gemini/gemini-extension.json",
        "qwen/qwen-extension.json",
    ] {
        let doc = read(integrations.join(manifest))?;
        assert_eq!(doc["mcpServers"]["orcho"]["command"], "orcho", "{manifest}");
        assert_eq!(
            doc["mcpServers"]["orcho"]["args"],
            json!(["mcp"]),
            "{manifest}"
        );
    }
    // The marketplace names the Claude Code plugin where it is.
    let market = read(integrations.join("../.claude-plugin/marketplace.json"))?;
    let source = market["plugins"][0]["source"].as_str().ok_or("no source")?;
    let plugin = read(
        integrations
            .join("..")
            .join(source)
            .join(".claude-plugin/plugin.json"),
    )?;
    assert_eq!(plugin["name"], market["plugins"][0]["name"]);
    // opencode's plugin declares itself a server plugin.
    let package = read(integrations.join("opencode/package.json"))?;
    assert_eq!(package["oc-plugin"], json!(["server"]));
    assert!(
        integrations
            .join("opencode")
            .join(package["main"].as_str().ok_or("no main")?)
            .is_file()
    );
    Ok(())
}

#[test]
fn without_rules_orchos_own_proof_is_allowed() -> Result {
    let repo = Repo::new(QUICK)?;
    let claude = r#"{"session_id":"s","cwd":"@CWD@","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":@ARG@}}"#;
    let decide = |command: &str| -> Result<String> {
        let out = repo.orcho_with_input(
            &["hook", "claude-code"],
            &fill(claude, &repo, command, false),
        )?;
        out.expect_code(0);
        if out.stdout.trim().is_empty() {
            return Ok(String::new());
        }
        let answer: Value = serde_json::from_str(&out.stdout)?;
        Ok(answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    };
    assert_eq!(decide("orcho verify test")?, "allow");
    assert_eq!(decide("orcho status")?, "allow");
    // Only that: no opinion on anything else, nor on a compound line.
    assert_eq!(decide("orcho verify test && rm -rf src")?, "");
    assert_eq!(decide("cargo test")?, "");
    // Only Orcho: not another program of that name the agent wrote.
    assert_eq!(decide("./orcho verify test")?, "");
    Ok(())
}

#[test]
fn a_host_gets_the_same_answer_in_process() -> Result {
    let repo = Repo::new(RULES)?;
    let doc = fill(GEMINI.pre_shell, &repo, "rm -rf src", false);
    let inside = orcho_cli::answer_hook("gemini", Some(repo.dir()), doc.as_bytes())?;
    let outside = hook(&repo, &GEMINI, &doc)?;
    assert_eq!(
        inside.stdout.as_deref().map(str::trim),
        Some(outside.stdout.trim())
    );
    assert_eq!(Some(i32::from(inside.code)), outside.code());
    let Err(unknown) = orcho_cli::answer_hook("cursr", None, b"{}") else {
        return Err("an unknown agent was answered".into());
    };
    assert!(
        unknown.hint().is_some_and(|h| h.contains("cursor")),
        "{unknown}"
    );
    Ok(())
}

#[test]
fn init_warns_when_orcho_is_not_on_the_path_the_hooks_run_with() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho_in(
        ".",
        &[("PATH", "/usr/bin:/bin")],
        &["init", "--agent", "gemini"],
    )?;
    out.expect_code(0);
    assert!(
        out.stdout.contains("warning: `orcho` is not on this shell's PATH, and Gemini CLI runs the hooks as `orcho hook gemini`"),
        "{out}"
    );
    // With it there: nothing to say.
    let bin = repo.dir().join("bin");
    std::fs::create_dir_all(&bin)?;
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_orcho"), bin.join("orcho"))?;
    let path = format!("{bin}:/usr/bin:/bin");
    let out = repo.orcho_in(
        ".",
        &[("PATH", path.as_str())],
        &["init", "--agent", "qwen"],
    )?;
    out.expect_code(0);
    assert!(!out.stdout.contains("not on this shell's PATH"), "{out}");
    Ok(())
}

#[test]
fn a_stop_says_to_fix_a_failing_command_before_proving_it_again() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.orcho(&["verify"])?.expect_code(3);
    let out = hook(&repo, &QWEN, &fill(QWEN.stop, &repo, "", false))?;
    let reason = stop_refusal(&QWEN, &out)?.ok_or("not refused")?;
    assert!(
        reason.contains("`test` (`sh -c 'test -f ok'`): failed"),
        "{reason}"
    );
    assert!(
        reason.contains("Fix what fails, then prove it: `orcho verify test`"),
        "{reason}"
    );
    Ok(())
}
