//! Hook documents as the agents send them. `@CWD@` stands for the
//! checkout.
//!
//! Claude Code: the shapes of the hooks reference
//! (<https://code.claude.com/docs/en/hooks>, as published in August 2026
//! for Claude Code 2.1.2xx) and, for `NotebookEdit` and `MultiEdit`, the
//! Agent SDK's TypeScript reference (tool input types, September 2025).
//!
//! Codex: the hooks page (<https://developers.openai.com/codex/hooks>, June
//! 2026) and the wire schemas of `codex-rs/hooks` (openai/codex at commit
//! 0082977c): the same snake_case keys, plus `turn_id` and `model`; tool
//! events for `Bash`, `apply_patch` and MCP tools.

/// Claude Code, `PreToolUse` for a shell command; `@ARG@` is the command
/// line (JSON-escaped).
pub(crate) const CLAUDE_PRE_BASH: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {"command": @ARG@, "description": "Run it", "timeout": 120000, "run_in_background": false},
  "tool_use_id": "toolu_01ABC123"
}"#;

/// Claude Code, `PreToolUse` for each file and other tool: (tool name,
/// `tool_input`).
pub(crate) const CLAUDE_TOOLS: &[(&str, &str)] = &[
    (
        "Write",
        r#"{"file_path": "@CWD@/src/new.rs", "content": "fn main() {}"}"#,
    ),
    (
        "Edit",
        r#"{"file_path": "@CWD@/README", "old_string": "a", "new_string": "b", "replace_all": false}"#,
    ),
    (
        "MultiEdit",
        r#"{"file_path": "@CWD@/README", "edits": [{"old_string": "a", "new_string": "b"}]}"#,
    ),
    (
        "NotebookEdit",
        r#"{"notebook_path": "@CWD@/nb.ipynb", "new_source": "x = 1", "cell_type": "code", "edit_mode": "replace"}"#,
    ),
    (
        "Read",
        r#"{"file_path": "@CWD@/README", "offset": 1, "limit": 20}"#,
    ),
    ("Glob", r#"{"pattern": "**/*.rs", "path": "@CWD@"}"#),
    (
        "Grep",
        r#"{"pattern": "TODO", "path": "@CWD@", "output_mode": "content", "-i": true}"#,
    ),
    (
        "Agent",
        r#"{"prompt": "look around", "description": "explore", "subagent_type": "Explore"}"#,
    ),
    (
        "WebFetch",
        r#"{"url": "https://example.com", "prompt": "summarise"}"#,
    ),
    (
        "mcp__github__create_issue",
        r#"{"owner": "o", "repo": "r", "title": "t"}"#,
    ),
];

/// Claude Code, `PreToolUse` for `@TOOL@` with `@INPUT@`.
pub(crate) const CLAUDE_PRE_TOOL: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "PreToolUse",
  "tool_name": "@TOOL@",
  "tool_input": @INPUT@,
  "tool_use_id": "toolu_01ABC124"
}"#;

/// Claude Code, `PostToolUse` after a shell command.
pub(crate) const CLAUDE_POST_BASH: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "PostToolUse",
  "tool_name": "Bash",
  "tool_input": {"command": "sh -c 'test -f ok'", "description": "check"},
  "tool_response": {"stdout": "", "stderr": "", "interrupted": false, "isImage": false},
  "tool_use_id": "toolu_01ABC125",
  "duration_ms": 12
}"#;

/// Claude Code, `Stop`; `@ACTIVE@` is `stop_hook_active`.
pub(crate) const CLAUDE_STOP: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "Stop",
  "stop_hook_active": @ACTIVE@,
  "last_assistant_message": "All done: the tests pass.",
  "background_tasks": [],
  "session_crons": []
}"#;

/// Claude Code, `SubagentStop`.
pub(crate) const CLAUDE_SUBAGENT_STOP: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "SubagentStop",
  "stop_hook_active": false,
  "agent_id": "def456",
  "agent_type": "general-purpose",
  "agent_transcript_path": "/home/user/.claude/projects/p/abc123/subagents/agent-def456.jsonl",
  "last_assistant_message": "Fixed it."
}"#;

/// Claude Code, `SessionStart`.
pub(crate) const CLAUDE_SESSION_START: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "hook_event_name": "SessionStart",
  "source": "startup",
  "model": "claude-sonnet-4-5"
}"#;

/// Codex, `PreToolUse` for a shell command; `@ARG@` is the command line.
pub(crate) const CODEX_PRE_BASH: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "PreToolUse",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "tool_name": "Bash",
  "tool_use_id": "call_1",
  "tool_input": {"command": @ARG@}
}"#;

/// Codex, `PreToolUse` for a file edit: `apply_patch` with the patch as its
/// command.
pub(crate) const CODEX_PRE_PATCH: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": "/home/user/.codex/sessions/rollout.jsonl",
  "cwd": "@CWD@",
  "hook_event_name": "PreToolUse",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "tool_name": "apply_patch",
  "tool_use_id": "call_2",
  "tool_input": {"command": "*** Begin Patch\n*** Update File: README\n@@\n-a checkout for the CLI tests\n+changed\n*** End Patch\n"}
}"#;

/// Codex, `PreToolUse` for an MCP tool.
pub(crate) const CODEX_PRE_MCP: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "PreToolUse",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "tool_name": "mcp__filesystem__read_file",
  "tool_use_id": "call_3",
  "tool_input": {"path": "README"}
}"#;

/// Codex, `PermissionRequest` for a shell command.
pub(crate) const CODEX_PERMISSION_REQUEST: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "PermissionRequest",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "tool_name": "Bash",
  "tool_input": {"command": @ARG@, "description": "needs approval"}
}"#;

/// Codex, `PostToolUse` after a shell command.
pub(crate) const CODEX_POST_BASH: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "PostToolUse",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "tool_name": "Bash",
  "tool_use_id": "call_4",
  "tool_input": {"command": "cargo test -q"},
  "tool_response": "error: test failed, to rerun pass `--lib`\n"
}"#;

/// Claude Code, `PostToolUseFailure`: what it sends instead of
/// `PostToolUse` for a shell command that failed (as the real binary does).
pub(crate) const CLAUDE_POST_FAILURE: &str = r#"{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
  "cwd": "@CWD@",
  "permission_mode": "default",
  "hook_event_name": "PostToolUseFailure",
  "tool_name": "Bash",
  "tool_input": {"command": "ls /nonexistent_dir", "description": "look"},
  "tool_use_id": "toolu_01ABC126",
  "error": "Exit code 2\nls: cannot access '/nonexistent_dir': No such file or directory",
  "is_interrupt": false,
  "duration_ms": 20
}"#;

/// Codex, `Stop`; `@ACTIVE@` is `stop_hook_active`.
pub(crate) const CODEX_STOP: &str = r#"{
  "session_id": "019a-session",
  "turn_id": "019a-turn",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "Stop",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "stop_hook_active": @ACTIVE@,
  "last_assistant_message": "Done."
}"#;

/// Codex, `SessionStart` (no `turn_id`).
pub(crate) const CODEX_SESSION_START: &str = r#"{
  "session_id": "019a-session",
  "transcript_path": null,
  "cwd": "@CWD@",
  "hook_event_name": "SessionStart",
  "model": "gpt-5-codex",
  "permission_mode": "default",
  "source": "startup"
}"#;
