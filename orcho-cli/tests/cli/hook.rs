//! `orcho hook claude-code|codex`, `orcho permissions check` and
//! `orcho init --agent`: the agents' documented hook documents fed to the
//! real binary, the answers parsed field by field.

use serde_json::Value;

use crate::{
    Result,
    hook_fixtures::*,
    support::{Out, QUICK, Repo},
};

/// [`QUICK`] under the read-only preset, with one rule of the profile's own.
const READ_ONLY: &str = "\
schema: 1
name: cli-hooks
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
permissions:
  preset: read_only
  rules:
    - { permission: 'mcp__filesystem__*', pattern: '*', action: allow }
";

fn doc(template: &str, repo: &Repo) -> String {
    template.replace("@CWD@", repo.dir().as_str())
}

fn with_arg(template: &str, repo: &Repo, arg: &str) -> String {
    doc(template, repo).replace("@ARG@", &Value::from(arg).to_string())
}

fn hook(repo: &Repo, agent: &str, input: &str) -> Result<Out> {
    let out = repo.orcho_with_input(&["hook", agent], input)?;
    out.expect_no_panic();
    Ok(out)
}

/// The `PreToolUse` decision and its reason.
fn decision(out: &Out) -> Result<(String, String)> {
    out.expect_code(0);
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{out}");
    Ok((
        specific["permissionDecision"]
            .as_str()
            .ok_or("no decision")?
            .to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .ok_or("no reason")?
            .to_owned(),
    ))
}

#[test]
fn claude_code_tool_calls_are_decided_by_the_rules_with_their_reason() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    let bash = |command: &str| -> Result<(String, String)> {
        decision(&hook(
            &repo,
            "claude-code",
            &with_arg(CLAUDE_PRE_BASH, &repo, command),
        )?)
    };
    let (action, reason) = bash("git status --short")?;
    assert_eq!(action, "allow");
    assert_eq!(
        reason,
        "orcho: bash `git status --short`: allow by rule 19 (bash `git status *` → allow)"
    );
    assert_eq!(
        bash("git status")?.0,
        "allow",
        "`cmd *` covers the bare command"
    );
    let (action, reason) = bash("cargo build")?;
    assert_eq!(action, "ask");
    assert!(
        reason.contains("ask by rule 5 (bash `*` → ask)"),
        "{reason}"
    );
    let (action, reason) = bash("ls && rm -rf src")?;
    assert_eq!(action, "ask");
    assert!(reason.contains("compound"), "{reason}");

    let expected = [
        ("Write", "deny", "write `src/new.rs`"),
        ("Edit", "deny", "edit `README`"),
        ("MultiEdit", "deny", "edit `README`"),
        ("NotebookEdit", "deny", "edit `nb.ipynb`"),
        ("Read", "allow", "read `README`"),
        ("Glob", "allow", "glob `**/*.rs`"),
        ("Grep", "allow", "grep `TODO`"),
        ("Agent", "deny", "dispatch `Explore`"),
        ("WebFetch", "deny", "webfetch `https://example.com`"),
        (
            "mcp__github__create_issue",
            "deny",
            "mcp__github__create_issue `{",
        ),
    ];
    assert_eq!(expected.len(), CLAUDE_TOOLS.len());
    for ((tool, input), (name, action, about)) in CLAUDE_TOOLS.iter().zip(expected) {
        assert_eq!(*tool, name);
        let input = doc(CLAUDE_PRE_TOOL, &repo)
            .replace("@TOOL@", tool)
            .replace("@INPUT@", &doc(input, &repo));
        let (got, reason) = decision(&hook(&repo, "claude-code", &input)?)?;
        assert_eq!(got, action, "{tool}: {reason}");
        assert!(
            reason.starts_with(&format!("orcho: {about}")),
            "{tool}: {reason}"
        );
    }
    Ok(())
}

#[test]
fn codex_tool_calls_deny_what_is_not_allowed_and_approve_through_permission_requests() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    // An allowed command: no answer (Codex's own flow goes on).
    let out = hook(
        &repo,
        "codex",
        &with_arg(CODEX_PRE_BASH, &repo, "git log -3"),
    )?;
    out.expect_code(0);
    assert_eq!(out.stdout.trim(), "", "{out}");
    // An asked-about command is refused: a Codex PreToolUse hook cannot ask.
    let (action, reason) = decision(&hook(
        &repo,
        "codex",
        &with_arg(CODEX_PRE_BASH, &repo, "cargo build"),
    )?)?;
    assert_eq!(action, "deny");
    assert!(reason.contains("needs a person's approval"), "{reason}");
    // A patch is an edit of each file it names.
    let (action, reason) = decision(&hook(&repo, "codex", &doc(CODEX_PRE_PATCH, &repo))?)?;
    assert_eq!(action, "deny");
    assert!(reason.contains("edit `README`"), "{reason}");
    // MCP tools by name, with the profile's glob rule.
    let out = hook(&repo, "codex", &doc(CODEX_PRE_MCP, &repo))?;
    out.expect_code(0);
    assert_eq!(
        out.stdout.trim(),
        "",
        "allowed by `mcp__filesystem__*`: {out}"
    );

    // PermissionRequest: allow and deny answer; ask leaves it to the person.
    let request = |command: &str| -> Result<Out> {
        hook(
            &repo,
            "codex",
            &with_arg(CODEX_PERMISSION_REQUEST, &repo, command),
        )
    };
    let out = request("git diff")?;
    let answer: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(
        answer["hookSpecificOutput"]["decision"]["behavior"],
        "allow"
    );
    let out = request("cargo build")?;
    out.expect_code(0);
    assert_eq!(out.stdout.trim(), "", "{out}");
    // Claude Code's PermissionRequest takes the same answer.
    let out = hook(
        &repo,
        "claude-code",
        &with_arg(CODEX_PERMISSION_REQUEST, &repo, "git status"),
    )?;
    let answer: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(
        answer["hookSpecificOutput"]["decision"]["behavior"], "allow",
        "{out}"
    );
    Ok(())
}

#[test]
fn paths_are_resolved_and_orchos_own_files_are_refused() -> Result {
    let profile = format!(
        "{READ_ONLY}    - {{ permission: write, pattern: 'tests/**', action: allow }}\n    \
         - {{ permission: write, pattern: '.claude/**', action: allow }}\n"
    );
    let repo = Repo::new(&profile)?;
    let write = |path: &str| -> Result<(String, String)> {
        let input = doc(CLAUDE_PRE_TOOL, &repo)
            .replace("@TOOL@", "Write")
            .replace(
                "@INPUT@",
                &serde_json::json!({ "file_path": path, "content": "x" }).to_string(),
            );
        decision(&hook(&repo, "claude-code", &input)?)
    };
    let at = |rel: &str| format!("{}/{rel}", repo.dir());
    assert_eq!(write(&at("tests/test_a.py"))?.0, "allow");
    // `..` never lets a rule for `tests/**` reach elsewhere.
    let (action, reason) = write(&at("tests/../src/calc.py"))?;
    assert_eq!(action, "deny", "{reason}");
    assert!(reason.contains("write `src/calc.py`"), "{reason}");
    // What proves readiness and runs the hooks is refused, even where a
    // rule allows it.
    let (action, reason) = write(&at("tests/../.claude/settings.json"))?;
    assert_eq!(action, "deny", "{reason}");
    assert!(reason.contains("hook settings"), "{reason}");
    // Reading outside the checkout is asked about under the preset.
    let read = doc(CLAUDE_PRE_TOOL, &repo)
        .replace("@TOOL@", "Read")
        .replace("@INPUT@", r#"{"file_path": "/root/.ssh/id_ed25519"}"#);
    assert_eq!(decision(&hook(&repo, "claude-code", &read)?)?.0, "ask");

    // Without any rules, the profile itself is still guarded.
    let plain = Repo::new(QUICK)?;
    let edit = doc(CLAUDE_PRE_TOOL, &plain)
        .replace("@TOOL@", "Edit")
        .replace(
            "@INPUT@",
            &serde_json::json!({
                "file_path": format!("{}/orcho.yaml", plain.dir()),
                "old_string": "required: [test]",
                "new_string": "required: []"
            })
            .to_string(),
        );
    let (action, reason) = decision(&hook(&plain, "claude-code", &edit)?)?;
    assert_eq!(action, "deny", "{reason}");
    assert!(reason.contains("Orcho's profile"), "{reason}");
    assert!(reason.contains("an agent may not change it"), "{reason}");
    let patch =
        doc(CODEX_PRE_PATCH, &plain).replace("Update File: README", "Update File: orcho.yaml");
    assert_eq!(decision(&hook(&plain, "codex", &patch)?)?.0, "deny");
    Ok(())
}

#[test]
fn orchos_own_files_are_guarded_through_links_and_in_shell_commands() -> Result {
    // No rules: only the guard has an opinion.
    let repo = Repo::new(QUICK)?;
    std::os::unix::fs::symlink("orcho.yaml", repo.dir().join("link.yaml"))?;
    std::os::unix::fs::symlink(".orcho", repo.dir().join("storelink"))?;
    let tool = |tool: &str, input: Value| -> Result<Out> {
        let doc = doc(CLAUDE_PRE_TOOL, &repo)
            .replace("@TOOL@", tool)
            .replace("@INPUT@", &input.to_string());
        hook(&repo, "claude-code", &doc)
    };
    for path in ["link.yaml", "storelink/receipts/test/latest.json"] {
        let out = tool(
            "Write",
            serde_json::json!({ "file_path": format!("{}/{path}", repo.dir()), "content": "x" }),
        )?;
        let (action, reason) = decision(&out)?;
        assert_eq!(action, "deny", "{path}: {reason}");
    }
    for command in [
        "echo x > orcho.yaml",
        "sed -i s/test/x/ orcho.yaml",
        "rm -rf .orcho/receipts",
        "cp /tmp/forged.json storelink/receipts/test/latest.json",
        "python3 -c 'print(1)' >.claude/settings.json",
        "rm -r .claude/",
        "rm -rf .codex",
        "git clean -fdx",
        "git clean -X -f",
        "mkdir -p sub && cd sub && rm ../orcho.yaml",
        // Globs, directories that hold them, and git taking them away.
        "rm orcho.y*ml",
        "rm -f ./.claude/*.json",
        "find . -name \"*.yaml\" -delete",
        "find . -type f -exec rm {} +",
        "rm -rf .",
        "rm -rf ..",
        "cd src && rm -rf ..",
        "mv .github /tmp/away",
        "git checkout -- .",
        "git restore .",
        "git stash -u",
        "git stash push --include-untracked",
        "tee .cursor/hooks.json < /tmp/x",
        "echo '{}' > .gemini/settings.json",
        "rm .opencode/plugins/orcho.js",
        // Seen through: globs of the store and above the checkout, words
        // split at `=`, commands inside others, wrappers, git's options.
        "rm -rf .orcho/*",
        "rm -rf .orch*",
        "rm .orcho/receipts/*/latest.json",
        "rm -rf ../*",
        "rm orcho.yaml '****************************************z'",
        "dd if=/tmp/x of=orcho.yaml",
        "echo `rm orcho.yaml`",
        "cat <(rm orcho.yaml)",
        "git diff --output=orcho.yaml HEAD",
        "rg --pre rm x orcho.yaml",
        "/bin/rm -rf .",
        "\\rm -rf .",
        "sudo rm -rf .",
        "{ rm -rf .; }",
        "git -C . checkout -- .",
        "find . -name settings.json -delete",
        "find . -name '*.toml' -delete",
        "find . -path ./node_modules -prune -o -delete",
        "cp -r /tmp/evil/. .",
    ] {
        let (action, reason) = decision(&tool("Bash", serde_json::json!({ "command": command }))?)?;
        assert_eq!(action, "deny", "{command}: {reason}");
        assert!(
            reason.contains("names") || reason.contains("stashes") || reason.contains("removes"),
            "{command}: {reason}"
        );
    }
    // The keys that sign receipts: not even read.
    let key = repo.data().join("orcho/receipt-key");
    for command in [format!("cat {key}"), format!("cp {key} /tmp/k")] {
        let (action, reason) = decision(&tool("Bash", serde_json::json!({ "command": command }))?)?;
        assert_eq!(action, "deny", "{command}: {reason}");
        assert!(
            reason.contains("whoever reads it can forge receipts"),
            "{reason}"
        );
    }
    let read = tool("Read", serde_json::json!({ "file_path": key.as_str() }))?;
    assert_eq!(decision(&read)?.0, "deny", "{read}");
    let grep = tool(
        "Grep",
        serde_json::json!({ "pattern": ".", "path": key.as_str() }),
    )?;
    assert_eq!(decision(&grep)?.0, "deny", "{grep}");
    let data = repo.data();
    for command in [
        format!("cat {data}/*/receipt-key"),
        format!("cd {data} && cat orcho/receipt-key"),
    ] {
        let (action, reason) = decision(&tool("Bash", serde_json::json!({ "command": command }))?)?;
        assert_eq!(action, "deny", "{command}: {reason}");
    }
    // From the checkout itself, ordinary work goes on.
    for command in [
        format!("cd {} && rm -rf target", repo.dir()),
        format!("cd {} && git checkout main", repo.dir()),
    ] {
        let out = tool("Bash", serde_json::json!({ "command": command }))?;
        out.expect_code(0);
        assert_eq!(out.stdout.trim(), "", "{command}: {out}");
    }
    // Skipping the repository's own git hooks is refused.
    for command in [
        "git commit --no-verify -m wip",
        "git commit -nm wip",
        "git push --no-verify origin main",
        "HUSKY=0 git commit -n -m wip",
        "git commit --no-veri -m wip",
        "git -C . commit --no-verify -m wip",
        "git -c core.hooksPath=/dev/null commit -m wip",
    ] {
        let (action, reason) = decision(&tool("Bash", serde_json::json!({ "command": command }))?)?;
        assert_eq!(action, "deny", "{command}: {reason}");
        assert!(
            reason.contains("skips the repository's own git hooks"),
            "{reason}"
        );
    }
    // Reading them, or a command that names none of them, has no opinion.
    for command in [
        "cat orcho.yaml",
        "cat orcho.yaml | head -5",
        "git diff orcho.yaml",
        "ls .orcho",
        "git clean -fd",
        "pytest -q",
        "cat orcho.yaml > ~/copy.yaml",
        "grep test orcho.yaml | tee /tmp/found",
        "rm -rf target build",
        "git checkout main",
        "git commit -m 'no verify here'",
        "git stash",
        "find . -name '*.pyc' -delete",
        "rm -f old.txt && git add .",
        "rm -rf build && pytest .",
        "sed -n 1,200p orcho.yaml",
        "jq . .claude/settings.json",
        "git --no-pager diff orcho.yaml",
        "git restore --staged .",
        "git rm -r --cached .",
        "rm *.pyc",
    ] {
        let out = tool("Bash", serde_json::json!({ "command": command }))?;
        out.expect_code(0);
        assert_eq!(out.stdout.trim(), "", "{command}: {out}");
    }
    Ok(())
}

#[test]
fn a_stop_under_rules_that_forbid_verify_says_who_can_prove_it() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    let out = hook(
        &repo,
        "claude-code",
        &doc(CLAUDE_STOP, &repo).replace("@ACTIVE@", "false"),
    )?;
    let answer: Value = serde_json::from_str(&out.stdout)?;
    let reason = answer["reason"].as_str().ok_or("no reason")?;
    assert!(
        reason.contains("Ask a person to run `orcho verify test`"),
        "{reason}"
    );
    Ok(())
}

#[test]
fn the_read_only_bypass_table_is_never_allowed_through_either_hook() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    let table = include_str!("../../../orcho-permissions/tests/read_only_bypasses.txt");
    for line in table
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (action, reason) = decision(&hook(
            &repo,
            "claude-code",
            &with_arg(CLAUDE_PRE_BASH, &repo, line),
        )?)?;
        assert_ne!(action, "allow", "claude-code {line:?}: {reason}");
        let (action, reason) = decision(&hook(
            &repo,
            "codex",
            &with_arg(CODEX_PRE_BASH, &repo, line),
        )?)?;
        assert_eq!(action, "deny", "codex {line:?}: {reason}");
    }
    Ok(())
}

#[test]
fn without_rules_tool_calls_get_no_opinion() -> Result {
    let repo = Repo::new(QUICK)?;
    for agent in ["claude-code", "codex"] {
        let out = hook(
            &repo,
            agent,
            &with_arg(CLAUDE_PRE_BASH, &repo, "rm -rf build"),
        )?;
        out.expect_code(0);
        assert_eq!(out.stdout.trim(), "", "{out}");
        // Whatever the rules, nothing removes the checkout.
        let out = hook(&repo, agent, &with_arg(CLAUDE_PRE_BASH, &repo, "rm -rf /"))?;
        assert_eq!(decision(&out)?.0, "deny", "{out}");
    }
    // A project without an orcho.yaml gets no opinion at all, even on a
    // stop: hooks installed for every project leave it alone.
    repo.git(&["rm", "-q", "orcho.yaml"])?;
    for input in [
        doc(CLAUDE_STOP, &repo).replace("@ACTIVE@", "false"),
        doc(CLAUDE_SESSION_START, &repo),
    ] {
        let out = hook(&repo, "claude-code", &input)?;
        out.expect_code(0);
        assert_eq!(out.stdout.trim(), "", "{out}");
    }
    // A preset on the command line puts rules in force.
    let out = repo.orcho_with_input(
        &["hook", "claude-code", "--permissions", "read-only"],
        &with_arg(CLAUDE_PRE_BASH, &repo, "rm -rf build"),
    )?;
    assert_eq!(decision(&out)?.0, "ask");
    Ok(())
}

#[test]
fn a_stop_with_an_unproven_receipt_is_refused_until_verify_proves_it() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", "")])?;
    repo.orcho(&["verify"])?.expect_code(0);
    // The checkout changes after the receipt: it is stale.
    repo.write("src.txt", "new work\n")?;
    for (agent, stop) in [("claude-code", CLAUDE_STOP), ("codex", CODEX_STOP)] {
        let input = doc(stop, &repo).replace("@ACTIVE@", "false");
        let out = hook(&repo, agent, &input)?;
        out.expect_code(0);
        let answer: Value = serde_json::from_str(&out.stdout)?;
        assert_eq!(answer["decision"], "block", "{out}");
        let reason = answer["reason"].as_str().ok_or("no reason")?;
        assert!(
            reason.contains("`test` (`sh -c 'test -f ok'`): stale"),
            "{reason}"
        );
        assert!(reason.contains("Prove it: `orcho verify test`"), "{reason}");
        assert!(reason.contains("Refusal 1 of 3"), "{reason}");
    }
    let sub = hook(&repo, "claude-code", &doc(CLAUDE_SUBAGENT_STOP, &repo))?;
    let answer: Value = serde_json::from_str(&sub.stdout)?;
    assert_eq!(answer["decision"], "block", "{sub}");
    // A subagent counts its own refusals: the session goes on at 2.
    let again = hook(
        &repo,
        "claude-code",
        &doc(CLAUDE_STOP, &repo).replace("@ACTIVE@", "true"),
    )?;
    assert!(again.stdout.contains("Refusal 2 of 3"), "{again}");

    repo.orcho(&["verify"])?.expect_code(0);
    for (agent, stop) in [("claude-code", CLAUDE_STOP), ("codex", CODEX_STOP)] {
        let out = hook(&repo, agent, &doc(stop, &repo).replace("@ACTIVE@", "true"))?;
        out.expect_code(0);
        assert_eq!(
            out.stdout.trim(),
            "",
            "proven: the stop goes through: {out}"
        );
    }
    Ok(())
}

#[test]
fn the_loop_guard_lets_a_stop_through_after_the_profiles_bound_and_status_shows_it() -> Result {
    let profile = format!("{QUICK}supervision:\n  max_stop_blocks: 2\n");
    let repo = Repo::new(&profile)?;
    let stop = |active: bool| -> Result<Value> {
        let input = doc(CLAUDE_STOP, &repo).replace("@ACTIVE@", &active.to_string());
        let out = hook(&repo, "claude-code", &input)?;
        out.expect_code(0);
        Ok(serde_json::from_str(&out.stdout)?)
    };
    assert_eq!(stop(false)?["decision"], "block");
    let second = stop(true)?;
    assert!(
        second["reason"]
            .as_str()
            .is_some_and(|r| r.contains("Refusal 2 of 2")),
        "{second}"
    );
    let through = stop(true)?;
    assert_eq!(through.get("decision"), None, "{through}");
    assert!(
        through["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("test: missing")),
        "{through}"
    );
    // A fresh stop (not continuing from a refusal) starts counting again.
    assert_eq!(stop(false)?["decision"], "block");

    let status = repo.orcho(&["status"])?;
    assert!(
        status
            .stdout
            .contains("agent stops let through unproven: 1"),
        "{status}"
    );
    assert!(status.stdout.contains("test: missing"), "{status}");
    let json = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(json["unproven_stops"][0]["agent"], "claude-code", "{json}");
    assert_eq!(json["unproven_stops"][0]["blocks"], 2, "{json}");
    assert_eq!(json["unproven_stops"][0]["session_id"], "abc123", "{json}");
    assert!(
        status.stdout.contains("`orcho status --ack-stops`"),
        "{status}"
    );

    // Acknowledged, they leave what status shows, and are kept aside.
    let acked = repo.orcho(&["status", "--ack-stops"])?;
    assert!(
        acked.stderr.contains("acknowledged 1 agent stop(s)"),
        "{acked}"
    );
    assert!(!acked.stdout.contains("let through unproven"), "{acked}");
    assert!(
        repo.dir()
            .join(".orcho/agent-hooks/unproven-stops.acknowledged.jsonl")
            .is_file()
    );

    // Another unproven stop, then a proven one: the proven stop clears it.
    stop(true)?;
    stop(true)?;
    assert!(
        repo.orcho(&["status"])?
            .stdout
            .contains("let through unproven: 1")
    );
    repo.write("ok", "")?;
    repo.orcho(&["verify"])?.expect_code(0);
    // A proven stop is let through silently.
    let input = doc(CLAUDE_STOP, &repo).replace("@ACTIVE@", "false");
    let proven = hook(&repo, "claude-code", &input)?;
    proven.expect_code(0);
    assert!(proven.stdout.trim().is_empty(), "{proven}");
    assert!(
        !repo
            .orcho(&["status"])?
            .stdout
            .contains("let through unproven")
    );
    Ok(())
}

#[test]
fn shell_commands_the_agent_ran_are_logged_as_exploratory() -> Result {
    let repo = Repo::new(QUICK)?;
    hook(&repo, "claude-code", &doc(CLAUDE_POST_BASH, &repo))?.expect_code(0);
    hook(&repo, "codex", &doc(CODEX_POST_BASH, &repo))?.expect_code(0);
    hook(&repo, "claude-code", &doc(CLAUDE_POST_FAILURE, &repo))?.expect_code(0);
    let json = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(json["exploratory"]["count"], 3, "{json}");
    // Each with its exit status as the agent tells it: Claude Code's
    // PostToolUse only for a success, its PostToolUseFailure's `Exit code
    // N`; Codex sends the output alone.
    let log = std::fs::read_to_string(repo.dir().join(".orcho/receipts/_exploratory/log.jsonl"))?;
    let exits: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).map(|v| v["exit_code"].clone()))
        .collect::<std::result::Result<_, _>>()?;
    assert_eq!(
        exits,
        [serde_json::json!(0), Value::Null, serde_json::json!(2)],
        "{log}"
    );
    // And where it ran: the document's cwd.
    assert!(
        log.lines()
            .all(|l| l.contains(&format!("\"cwd\":\"{}\"", repo.dir()))),
        "{log}"
    );
    assert_eq!(json["exploratory"]["authoritative"], false, "{json}");
    assert_eq!(json["required"][0]["status"], "missing", "{json}");
    Ok(())
}

#[test]
fn a_session_starts_knowing_what_proves_readiness() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    for (agent, start) in [
        ("claude-code", CLAUDE_SESSION_START),
        ("codex", CODEX_SESSION_START),
    ] {
        let out = hook(&repo, agent, &doc(start, &repo))?;
        out.expect_code(0);
        let answer: Value = serde_json::from_str(&out.stdout)?;
        assert_eq!(
            answer["hookSpecificOutput"]["hookEventName"],
            "SessionStart"
        );
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .ok_or("no context")?;
        assert!(
            context.contains("`test` (`sh -c 'test -f ok'`)"),
            "{context}"
        );
        assert!(context.contains("`orcho verify`"), "{context}");
        assert!(context.contains("permission rules"), "{context}");
    }
    Ok(())
}

#[test]
fn bad_documents_and_broken_profiles_fail_safe_never_allow() -> Result {
    let repo = Repo::new(READ_ONLY)?;
    let cases = [
        ("", "not JSON"),
        ("{\"hook_event_name\": ", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ("{}", "no `hook_event_name`"),
        (
            "{\"hook_event_name\": \"Teleport\"}",
            "`Teleport` is not a hook event",
        ),
        (
            "{\"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Bash\", \"tool_input\": {}}",
            "no `tool_input.command`",
        ),
        (
            "{\"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Write\", \"tool_input\": {\"file_path\": 7}}",
            "no `tool_input.file_path`",
        ),
    ];
    for agent in ["claude-code", "codex"] {
        for (input, says) in cases {
            let out = hook(&repo, agent, input)?;
            out.expect_code(2);
            assert_eq!(out.stdout, "", "{agent} {input:?}: {out}");
            assert!(
                out.stderr.starts_with("orcho hook: ") && out.stderr.contains(says),
                "{agent} {input:?}: {out}"
            );
        }
    }
    // Events the hook has no opinion on pass.
    let out = hook(
        &repo,
        "claude-code",
        "{\"hook_event_name\": \"UserPromptSubmit\", \"prompt\": \"hi\"}",
    )?;
    out.expect_code(0);
    assert_eq!(out.stdout, "");

    // A profile that does not load: tool calls are refused, and stops too,
    // within the default bound (never a loop without end).
    repo.write("orcho.yaml", "schema: 1\nphases: [\n")?;
    let out = hook(
        &repo,
        "claude-code",
        &with_arg(CLAUDE_PRE_BASH, &repo, "ls"),
    )?;
    out.expect_code(2);
    assert!(out.stderr.contains("PreToolUse: "), "{out}");
    for (refusal, active) in [(1, "false"), (2, "true"), (3, "true")] {
        let out = hook(
            &repo,
            "codex",
            &doc(CODEX_STOP, &repo).replace("@ACTIVE@", active),
        )?;
        out.expect_code(0);
        let answer: Value = serde_json::from_str(&out.stdout)?;
        assert_eq!(answer["decision"], "block", "{out}");
        let reason = answer["reason"].as_str().ok_or("no reason")?;
        assert!(reason.contains("the profile does not load"), "{reason}");
        assert!(reason.contains("tell the user what is wrong"), "{reason}");
        assert!(
            reason.contains(&format!("Refusal {refusal} of 3")),
            "{reason}"
        );
    }
    let out = hook(
        &repo,
        "codex",
        &doc(CODEX_STOP, &repo).replace("@ACTIVE@", "true"),
    )?;
    out.expect_code(0);
    let answer: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(answer.get("decision"), None, "{out}");
    Ok(())
}

#[test]
fn permissions_check_says_the_decision_and_the_rule() -> Result {
    let repo = Repo::with_files(READ_ONLY, &[("src/keep", "")])?;
    let out = repo.orcho(&["permissions", "check", "--", "git", "status"])?;
    out.expect_code(0);
    assert_eq!(
        out.stdout.trim(),
        "bash `git status`: allow by rule 19 (bash `git status *` → allow)"
    );
    repo.orcho(&["permissions", "check", "cargo build"])?
        .expect_code(7);
    // A path from a subdirectory is relative to the checkout.
    let out = repo.orcho_in("src", &[], &["permissions", "check", "--write", "lib.rs"])?;
    out.expect_code(8);
    assert!(out.stdout.starts_with("write `src/lib.rs`: deny"), "{out}");
    repo.orcho(&["permissions", "check", "--read", "README"])?
        .expect_code(0);
    repo.orcho(&[
        "permissions",
        "check",
        "--tool",
        "mcp__filesystem__read_file",
    ])?
    .expect_code(0);
    let json = repo
        .orcho(&["--json", "permissions", "check", "--edit", "README"])?
        .json()?;
    assert_eq!(json["permission"], "edit");
    assert_eq!(json["action"], "deny");
    assert!(
        json["explanation"]
            .as_str()
            .is_some_and(|e| e.contains("rule"))
    );

    // Without rules in force: said, with what to do.
    let plain = Repo::new(QUICK)?;
    let out = plain.orcho(&["permissions", "check", "ls"])?;
    out.expect_no_panic().expect_code(1);
    assert!(out.stderr.contains("no `permissions`"), "{out}");
    assert!(
        out.stderr.contains("--permissions read-only")
            || out.stderr.contains("--permissions read_only"),
        "{out}"
    );
    plain
        .orcho(&["permissions", "check", "--permissions", "read-only", "ls"])?
        .expect_code(0);
    // Nothing to check is a usage error.
    plain.orcho(&["permissions", "check"])?.expect_code(2);
    Ok(())
}

#[test]
fn init_agent_merges_hooks_into_existing_settings() -> Result {
    let repo = Repo::new(QUICK)?;
    let mine = r#"{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
    ]
  }
}
"#;
    repo.write(".claude/settings.json", mine)?;
    // A dry run changes nothing.
    let out = repo.orcho(&["init", "--agent", "claude-code", "--dry-run"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("would add to"), "{out}");
    assert_eq!(
        std::fs::read_to_string(repo.dir().join(".claude/settings.json"))?,
        mine
    );
    let out = repo.orcho(&["init", "--agent", "claude-code"])?;
    out.expect_code(0);
    let merged = std::fs::read_to_string(repo.dir().join(".claude/settings.json"))?;
    insta::assert_snapshot!("claude_settings_merged", merged);
    // Again: nothing to add, nothing changed.
    let out = repo.orcho(&["init", "--agent", "claude-code"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("already"), "{out}");
    assert_eq!(
        std::fs::read_to_string(repo.dir().join(".claude/settings.json"))?,
        merged
    );

    repo.orcho(&["init", "--agent", "codex"])?.expect_code(0);
    let codex: Value = serde_json::from_str(&std::fs::read_to_string(
        repo.dir().join(".codex/hooks.json"),
    )?)?;
    assert_eq!(
        codex["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
        "orcho hook codex"
    );

    // A settings file that is not an object is left alone, and nothing
    // else is written either.
    repo.write(".codex/hooks.json", "[]\n")?;
    repo.git(&["rm", "-q", "orcho.yaml"])?;
    let out = repo.orcho(&["init", "--agent", "codex"])?;
    out.expect_no_panic().expect_code(1);
    assert!(out.stderr.contains("nothing was changed"), "{out}");
    assert!(!repo.dir().join("orcho.yaml").exists(), "{out}");
    // With `--json`: one document, the profile written beside the hooks.
    std::fs::remove_file(repo.dir().join(".codex/hooks.json"))?;
    let doc = repo
        .orcho(&["--json", "init", "--agent", "codex"])?
        .json()?;
    assert_eq!(doc["profile_written"], true, "{doc}");
    assert_eq!(doc["added"].as_array().map(Vec::len), Some(6), "{doc}");
    assert!(repo.dir().join("orcho.yaml").is_file());
    Ok(())
}

/// Shell commands built to make the guard slow or to exhaust the rules'
/// matcher: each is answered, and never allowed.
#[test]
fn commands_built_to_stall_the_hook_are_answered_and_never_allowed() -> Result {
    let repo = Repo::new(
        "schema: 1\nname: guarded\nphases:\n  - name: implement\n    role: implement\npermissions:\n  preset: read_only\n  rules:\n    - { permission: bash, pattern: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z*\", action: allow }\n",
    )?;
    let cwd = repo.dir().to_string();
    let doc = |command: &str| {
        serde_json::json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": cwd,
            "tool_name": "Bash", "tool_input": {"command": command},
        })
        .to_string()
    };
    let answer = |command: &str| -> Result<String> {
        let out = repo.orcho_with_input(&["hook", "claude-code"], &doc(command))?;
        out.expect_no_panic();
        out.expect_code(0);
        Ok(out.stdout)
    };
    // `cd` four hundred times, then remove the profile: cubic before.
    let cds = format!("{}rm orcho.yaml", "cd a; ".repeat(400));
    let said = answer(&cds)?;
    assert!(said.contains("\"permissionDecision\":\"ask\""), "{said}");
    assert!(said.contains("changes directory 400 times"), "{said}");
    // A command of a megabyte: refused, with the reason.
    let said = answer(&format!("echo {}", "a".repeat(1 << 20)))?;
    assert!(said.contains("\"permissionDecision\":\"deny\""), "{said}");
    assert!(
        said.contains("more than the 256 KiB orcho checks"),
        "{said}"
    );
    // Under the size cap, the long rule's pattern against a long command:
    // linear, and the command is compound, so never allowed.
    let said = answer(&format!("{} ; rm -rf .", "a".repeat(200 * 1024)))?;
    assert!(!said.contains("\"permissionDecision\":\"allow\""), "{said}");
    Ok(())
}

#[test]
fn a_pattern_past_its_cap_is_refused_where_it_is_written() -> Result {
    let long = "x".repeat(2000);
    let repo = Repo::new(&format!(
        "schema: 1\nname: long\nphases:\n  - name: implement\n    role: implement\npermissions:\n  rules:\n    - {{ permission: bash, pattern: \"{long}\", action: allow }}\n"
    ))?;
    let out = repo.orcho(&["profile", "show"])?;
    out.expect_no_panic();
    assert_ne!(out.code(), Some(0));
    assert!(
        out.stderr
            .contains("a pattern of 2000 characters; at most 1024"),
        "{out}"
    );
    assert!(out.stderr.contains("line 8"), "{out}");
    Ok(())
}

#[test]
fn init_agent_with_a_profile_already_there_still_ignores_the_store_and_allows_the_proof() -> Result
{
    let repo = Repo::new(QUICK)?;
    repo.git(&["rm", "-q", "--cached", ".gitignore"])?;
    std::fs::remove_file(repo.dir().join(".gitignore"))?;
    repo.git(&["commit", "-q", "-m", "no .gitignore"])?;
    let out = repo.orcho(&["init", "--agent", "claude-code"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("added the store"), "{out}");
    let ignored = std::fs::read_to_string(repo.dir().join(".gitignore"))?;
    assert!(ignored.contains(".orcho/"), "{ignored}");
    assert!(
        out.stdout
            .contains("allowed `Bash(orcho verify:*)` and `Bash(orcho status:*)`"),
        "{out}"
    );
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(
        repo.dir().join(".claude/settings.json"),
    )?)?;
    assert_eq!(
        settings["permissions"]["allow"],
        serde_json::json!(["Bash(orcho verify:*)", "Bash(orcho status:*)"])
    );
    assert_eq!(
        settings["hooks"]["PostToolUseFailure"][0]["matcher"], "Bash",
        "{settings}"
    );
    Ok(())
}

#[test]
fn status_warns_about_hooks_installed_that_never_called_orcho() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["init", "--agent", "codex"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("--trust --dangerously-bypass-hook-trust"),
        "{out}"
    );
    // Installed, never called: `codex exec` skipped untrusted hooks.
    let status = repo.orcho(&["status"])?;
    assert!(
        status.stdout.contains(
            "warning: .codex/hooks.json runs `orcho hook codex`, but it has never called Orcho here"
        ),
        "{status}"
    );
    let json = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(
        json["hooks_never_called"],
        serde_json::json!(["codex"]),
        "{json}"
    );
    // Once a hook called: no warning.
    hook(&repo, "codex", &doc(CODEX_SESSION_START, &repo))?.expect_code(0);
    let status = repo.orcho(&["status"])?;
    assert!(!status.stdout.contains("never called Orcho"), "{status}");
    let json = repo.orcho(&["status", "--json"])?.json()?;
    assert!(json.get("hooks_never_called").is_none(), "{json}");
    Ok(())
}

#[test]
fn init_for_codex_warns_when_a_login_shell_cannot_find_orcho() -> Result {
    let repo = Repo::new(QUICK)?;
    // A login shell that finds nothing the test did not put there.
    repo.write("home/.profile", "PATH=/usr/bin:/bin\n")?;
    let home = repo.dir().join("home");
    let out = repo.orcho_in(
        ".",
        &[("SHELL", "/bin/sh"), ("HOME", home.as_str())],
        &["init", "--agent", "codex"],
    )?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("warning: a login shell (`bash -lc`, as Codex runs the agent's commands) does not find `orcho`"),
        "{out}"
    );
    // One that does: nothing to say.
    let repo = Repo::new(QUICK)?;
    repo.write("finds.sh", "#!/bin/sh\nexit 0\n")?;
    let shell = repo.dir().join("finds.sh");
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let out = repo.orcho_in(
        ".",
        &[("SHELL", shell.as_str())],
        &["init", "--agent", "codex"],
    )?;
    out.expect_code(0);
    assert!(!out.stdout.contains("login shell"), "{out}");
    Ok(())
}
