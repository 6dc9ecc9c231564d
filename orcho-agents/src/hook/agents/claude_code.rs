//! Claude Code: `.claude/settings.json`, Claude's own event and tool
//! names; answers in `hookSpecificOutput`, exit 2 refuses.

use orcho::permissions::PermissionAction;
use serde_json::{Value, json};

use super::{
    Dialect, Layout, SILENT, as_is, claude_context, claude_event, claude_pre_tool, claude_tool,
    exit_2, exit_field, json_out, reason, stated_exit_code,
};
use crate::hook::answer::{Answer, Rendered};

pub(super) const DIALECT: Dialect = Dialect {
    name: "claude-code",
    title: "Claude Code",
    settings: ".claude/settings.json",
    layout: Layout::Groups { millis: false },
    install: &[
        ("SessionStart", None),
        ("PreToolUse", Some("*")),
        ("PostToolUse", Some("Bash")),
        // Sent instead of PostToolUse for a failing shell command.
        ("PostToolUseFailure", Some("Bash")),
        ("Stop", None),
        ("SubagentStop", None),
    ],
    project_dir: &["CLAUDE_PROJECT_DIR"],
    event: claude_event,
    tool: claude_tool,
    normalize: as_is,
    exit_code,
    render,
    once: "check that `orcho` is on the PATH Claude Code runs hooks with (`/hooks` lists them)",
    session_env: &["CLAUDECODE"],
    processes: &["claude", "@anthropic-ai/claude-code/"],
    user_settings: &[".claude/settings.json"],
    more_settings: &[".claude/settings.local.json"],
    hooks_off: super::disable_all_hooks,
};

/// `PostToolUseFailure` says `Exit code N` first in its `error`;
/// `PostToolUse` comes only for a command that succeeded and was not
/// interrupted.
fn exit_code(response: &Value, failure: Option<&str>) -> Option<i32> {
    if let Some(code) = exit_field(response) {
        return Some(code);
    }
    match failure {
        Some(error) => error.lines().next().and_then(stated_exit_code),
        None if response.is_object()
            && response.get("interrupted").and_then(Value::as_bool) != Some(true) =>
        {
            Some(0)
        }
        None => None,
    }
}

pub(super) fn render(answer: &Answer) -> Rendered {
    match answer {
        Answer::Silent => SILENT,
        Answer::Tool { event, verdict } => {
            let reason = reason(verdict);
            if let Some(value) = super::permission_request(event, verdict.action, &reason) {
                return value.map_or(SILENT, |v| json_out(&v));
            }
            json_out(&match verdict.action {
                // An ask is a person's to answer; where nobody can (`claude
                // -p`), Claude Code refuses it and the model reads only the
                // reason: it says so, and what a person can do.
                PermissionAction::Ask => claude_pre_tool(
                    "ask",
                    &format!(
                        "{reason}: a person must approve it; in a session nobody watches it is \
                         refused: ask the person to run it, or to allow it with a rule in \
                         orcho.yaml's `permissions`"
                    ),
                ),
                action => claude_pre_tool(&action.to_string(), &reason),
            })
        }
        Answer::BlockStop { reason } => json_out(&json!({ "decision": "block", "reason": reason })),
        Answer::WarnStop { message } => json_out(&json!({ "systemMessage": message })),
        Answer::Context { text } => json_out(&claude_context(text)),
        Answer::FailSafe { message } => exit_2(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::Verdict;

    #[test]
    fn an_ask_says_what_happens_where_nobody_can_answer() {
        let verdict = Verdict {
            action: PermissionAction::Ask,
            reason: "ask by rule 3 (bash `git push *` → ask)".to_owned(),
        };
        let out = render(&Answer::Tool {
            event: "PreToolUse",
            verdict,
        });
        let answer: Value = serde_json::from_str(&out.stdout.unwrap()).unwrap();
        let out = &answer["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "ask");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.starts_with("orcho: ask by rule 3"), "{reason}");
        assert!(
            reason.contains("in a session nobody watches it is refused"),
            "{reason}"
        );
    }

    #[test]
    fn exit_codes_come_from_the_event() {
        assert_eq!(exit_code(&json!({"stdout": ""}), None), Some(0));
        assert_eq!(exit_code(&json!({"interrupted": true}), None), None);
        assert_eq!(exit_code(&Value::Null, Some("Exit code 4\nboom")), Some(4));
        assert_eq!(exit_code(&Value::Null, Some("boom\nExit code 4")), None);
    }
}
